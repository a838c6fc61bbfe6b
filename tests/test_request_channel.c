/*
 * Tests of the broker's request channel (request_channel.h): a connection's
 * requests are handled one at a time and answered in order (muting, as
 * Kafka's SocketServer Processor mutes a channel from a request's read to its
 * response's write), while requests of different connections share the I/O
 * threads concurrently.
 *
 * The bug these guard against: with several I/O threads and exponential
 * service times, two requests pipelined on one connection were handled
 * concurrently and the second's response could be written first. A producer
 * reads an overtaking response as a broken stream, reconnects and retries:
 * a fault-free run duplicated and reordered records.
 */
#include "request_channel.h"

#include "kafka_proto.h"
#include "sim_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define PEERS 2
#define PER_PEER 6

typedef struct {
    SimWorld *world;
    SimNodeId broker;
    SimNodeId peers[PEERS];
    RequestChannel *channel;
    BrokerConfig config;
    GArray *handled;      /* gint32: peer index * 1000 + correlation id, in handling order */
    GArray *handled_ns;   /* gint64: when each was handled */
    gint answered_to[PEERS]; /* responses the peer received */
    gint32 last_received[PEERS];
    gboolean out_of_order;
} Fixture;

static guint
peer_index(Fixture *f, SimNodeId node)
{
    for (guint i = 0; i < PEERS; i++)
        if (f->peers[i] == node)
            return i;
    fail_msg("unknown peer %u", (unsigned)node);
    return 0;
}

static SimMsg *
metadata_message(KafkaMsgType type, gint32 correlation_id)
{
    KMetadataRequest *msg = g_new0(KMetadataRequest, 1);
    msg->base.type = type;
    msg->base.size_bytes = 64;
    msg->base.size_of = sizeof *msg;
    msg->correlation_id = correlation_id;
    return &msg->base;
}

/* The broker's handler: answers at once (the response then waits for its
 * network thread). */
static void
handle_cb(void *owner, SimNodeId from, SimMsg *msg)
{
    Fixture *f = owner;
    guint peer = peer_index(f, from);
    gint32 correlation_id = ((KMetadataRequest *)msg)->correlation_id;
    g_array_append_val(f->handled, (gint32){(gint32)peer * 1000 + correlation_id});
    g_array_append_val(f->handled_ns, (gint64){sim_now_ns(f->world)});
    sim_msg_free(msg);
    SimMsg *response = metadata_message(KMSG_METADATA_RESPONSE, correlation_id);
    gboolean taken = request_channel_respond(f->channel, from, response);
    assert_true(taken);
}

static void
peer_deliver(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Fixture *f = ctx;
    (void)world;
    (void)from;
    guint peer = peer_index(f, msg->to);
    gint32 correlation_id = ((KMetadataRequest *)msg)->correlation_id;
    if (correlation_id <= f->last_received[peer])
        f->out_of_order = TRUE;
    f->last_received[peer] = correlation_id;
    f->answered_to[peer]++;
    sim_msg_free(msg);
}

static void
broker_deliver(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Fixture *f = ctx;
    (void)world;
    request_channel_arrived(f->channel, from, msg);
}

static const SimNodeOps BROKER_OPS = {.message = broker_deliver};
static const SimNodeOps CLIENT_OPS = {.message = peer_deliver};

static void
fixture_init(Fixture *f, gint io_threads, BrokerServiceDistribution distribution)
{
    memset(f, 0, sizeof *f);
    f->world = sim_world_new(7);
    f->broker = sim_node_add(f->world, "broker", &BROKER_OPS, f);
    for (guint i = 0; i < PEERS; i++) {
        char name[16];
        g_snprintf(name, sizeof name, "client-%u", i);
        f->peers[i] = sim_node_add(f->world, name, &CLIENT_OPS, f);
    }
    f->config.num_network_threads = 3;
    f->config.queued_max_requests = 500;
    f->config.num_io_threads = io_threads;
    f->config.request_service_distribution = distribution;
    f->config.request_time_ns = 400 * 1000;
    f->config.network_request_time_ns = 10 * 1000;
    f->channel = request_channel_new(f->world, f->broker, &f->config, NULL, handle_cb, f);
    f->handled = g_array_new(FALSE, FALSE, sizeof(gint32));
    f->handled_ns = g_array_new(FALSE, FALSE, sizeof(gint64));
}

static void
fixture_clear(Fixture *f)
{
    request_channel_check_invariants(f->channel);
    request_channel_free(f->channel);
    sim_world_free(f->world);
    g_array_free(f->handled, TRUE);
    g_array_free(f->handled_ns, TRUE);
}

/* Every peer pipelines PER_PEER requests at once, as a producer with
 * max.in.flight.requests.per.connection > 1 does. */
static void
send_all(Fixture *f)
{
    for (gint32 id = 1; id <= PER_PEER; id++)
        for (guint p = 0; p < PEERS; p++)
            sim_net_send(sim_world_net(f->world), f->peers[p], f->broker,
                         metadata_message(KMSG_METADATA_REQUEST, id));
    sim_world_run_until(f->world, 10 * SIM_NS_PER_S);
}

/* With eight I/O threads and exponential service, each connection's
 * requests are still handled in the order sent and answered in that order. */
static void
test_request_channel_connection_in_order(void **state)
{
    (void)state;
    Fixture f;
    fixture_init(&f, 8, BROKER_SERVICE_EXPONENTIAL);
    send_all(&f);
    assert_int_equal(f.handled->len, PEERS * PER_PEER);
    gint32 last[PEERS] = {0};
    for (guint i = 0; i < f.handled->len; i++) {
        gint32 v = g_array_index(f.handled, gint32, i);
        guint peer = (guint)(v / 1000);
        gint32 id = v % 1000;
        assert_int_equal(id, last[peer] + 1);
        last[peer] = id;
    }
    for (guint p = 0; p < PEERS; p++)
        assert_int_equal(f.answered_to[p], PER_PEER);
    assert_false(f.out_of_order);
    fixture_clear(&f);
}

/* Muting serialises a connection, not the broker: two connections' requests
 * interleave in the handling order. */
static void
test_request_channel_connections_interleave(void **state)
{
    (void)state;
    Fixture f;
    fixture_init(&f, 8, BROKER_SERVICE_EXPONENTIAL);
    send_all(&f);
    assert_int_equal(f.handled->len, PEERS * PER_PEER);
    /* Before the first peer's last request is handled, the second peer has
     * had some of its own handled. */
    guint first_peer_done = 0, second_before = 0;
    for (guint i = 0; i < f.handled->len; i++) {
        gint32 v = g_array_index(f.handled, gint32, i);
        if (v == PER_PEER) {
            first_peer_done = i;
            break;
        }
        if (v / 1000 == 1)
            second_before++;
    }
    assert_true(first_peer_done > 0);
    assert_true(second_before > 0);
    fixture_clear(&f);
}

/* A disconnect drops the requests its connection had not read yet. The
 * request already being read still finishes, and its completion must not
 * unmute the peer's next connection: with fixed times (an I/O thread 400us,
 * a network thread 10us per read or write), the new connection's second
 * request is read only once its first's response is written, so it is
 * handled at least 400 + 10 + 10 us after the first. */
static void
test_request_channel_disconnect_drops_unread(void **state)
{
    (void)state;
    Fixture f;
    fixture_init(&f, 8, BROKER_SERVICE_FIXED);
    for (gint32 id = 1; id <= PER_PEER; id++)
        request_channel_arrived(f.channel, f.peers[0], metadata_message(KMSG_METADATA_REQUEST, id));
    request_channel_peer_disconnected(f.channel, f.peers[0]);
    /* The new connection's requests arrive while request 1 is in an I/O
     * thread, so 1's response is written while 101 is still handled. */
    sim_world_run_until(f.world, 15 * 1000);
    request_channel_arrived(f.channel, f.peers[0], metadata_message(KMSG_METADATA_REQUEST, 101));
    request_channel_arrived(f.channel, f.peers[0], metadata_message(KMSG_METADATA_REQUEST, 102));
    sim_world_run_until(f.world, 10 * SIM_NS_PER_S);
    /* Handled: the old connection's first request (already being read),
     * then 101 and 102; requests 2..6 were never read. */
    assert_int_equal(f.handled->len, 3);
    assert_int_equal(g_array_index(f.handled, gint32, 0), 1);
    assert_int_equal(g_array_index(f.handled, gint32, 1), 101);
    assert_int_equal(g_array_index(f.handled, gint32, 2), 102);
    gint64 gap = g_array_index(f.handled_ns, gint64, 2) - g_array_index(f.handled_ns, gint64, 1);
    assert_true(gap >= (400 + 10 + 10) * 1000);
    fixture_clear(&f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_channel_connection_in_order),
        cmocka_unit_test(test_request_channel_connections_interleave),
        cmocka_unit_test(test_request_channel_disconnect_drops_unread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
