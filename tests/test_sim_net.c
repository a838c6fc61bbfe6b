/*
 * Unit tests for sim_net: FIFO per connection under jitter, latency and
 * bandwidth, partitions (groups, one-way, isolate) and heal, broken
 * connections and how their endpoints learn of them (CLOSED, RESET, nothing),
 * sim_net_close, single-message faults, holding one message past its
 * sender's close, pause, and the counters. Every test
 * runs a real world; the network's invariants are checked after every event.
 */
#include "sim_net.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- fixture ---- */

enum { NODES = 4 };

#define MS SIM_NS_PER_MS
#define US SIM_NS_PER_US

typedef struct {
    gint64 time_ns;
    SimNodeId peer;
    guint32 value; /* a message's tag, or a disconnect's reason */
} Entry;

typedef struct {
    SimNodeId id;
    GArray *received;    /* Entry: peer = sender, value = tag */
    GArray *disconnects; /* Entry: value = SimDisconnectReason */
} NodeCtx;

typedef struct {
    SimWorld *world;
    SimNet *net;
    NodeCtx nodes[NODES];
} Fixture;

typedef struct {
    SimMsg header;
    guint32 tag;
} TestMsg;

static void
on_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    NodeCtx *node = ctx;
    assert_int_equal(msg->to, node->id);
    assert_int_equal(msg->from, from);
    Entry entry = {sim_now_ns(world), from, ((TestMsg *)msg)->tag};
    g_array_append_val(node->received, entry);
    sim_msg_free(msg);
}

static void
on_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    NodeCtx *node = ctx;
    Entry entry = {sim_now_ns(world), peer, reason};
    g_array_append_val(node->disconnects, entry);
}

static void
on_lifecycle(SimWorld *world, void *ctx)
{
    (void)world;
    (void)ctx;
}

static const SimNodeOps test_ops = {on_message, on_disconnect, on_lifecycle, on_lifecycle};

static void
check_after_event(SimWorld *world, void *user_data)
{
    (void)user_data;
    sim_net_check_invariants(sim_world_net(world));
}

static int
setup(void **state)
{
    Fixture *fx = g_new0(Fixture, 1);
    fx->world = sim_world_new(1);
    fx->net = sim_world_net(fx->world);
    for (guint i = 0; i < NODES; i++) {
        g_autofree char *name = g_strdup_printf("n%u", i);
        fx->nodes[i].id = i;
        fx->nodes[i].received = g_array_new(FALSE, FALSE, sizeof(Entry));
        fx->nodes[i].disconnects = g_array_new(FALSE, FALSE, sizeof(Entry));
        assert_int_equal(sim_node_add(fx->world, name, &test_ops, &fx->nodes[i]), i);
    }
    /* A round millisecond makes expected arrival times easy to read. */
    sim_net_set_default_link(fx->net, SIM_DIST_CONST(1 * MS), 0);
    sim_world_set_after_event(fx->world, check_after_event, NULL);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fixture *fx = *state;
    sim_net_check_invariants(fx->net);
    sim_world_free(fx->world);
    for (guint i = 0; i < NODES; i++) {
        g_array_free(fx->nodes[i].received, TRUE);
        g_array_free(fx->nodes[i].disconnects, TRUE);
    }
    g_free(fx);
    return 0;
}

/* ---- helpers ---- */

static TestMsg *
msg_new(guint32 tag, guint32 size_bytes)
{
    TestMsg *msg = g_new0(TestMsg, 1);
    msg->header.size_bytes = size_bytes;
    msg->tag = tag;
    return msg;
}

static void
send_sized(Fixture *fx, SimNodeId from, SimNodeId to, guint32 tag, guint32 size_bytes)
{
    sim_net_send(fx->net, from, to, &msg_new(tag, size_bytes)->header);
}

static void
send_msg(Fixture *fx, SimNodeId from, SimNodeId to, guint32 tag)
{
    send_sized(fx, from, to, tag, 100);
}

static void
run_to(Fixture *fx, gint64 time_ns)
{
    sim_world_run_until(fx->world, time_ns);
}

static GArray *
received(Fixture *fx, SimNodeId node)
{
    return fx->nodes[node].received;
}

static GArray *
disconnects(Fixture *fx, SimNodeId node)
{
    return fx->nodes[node].disconnects;
}

/* Asserts `log` is exactly `expected`. */
static void
assert_entries(const GArray *log, const Entry *expected, guint count)
{
    for (guint i = 0; i < MIN(count, log->len); i++) {
        const Entry *got = &g_array_index(log, Entry, i);
        if (got->time_ns != expected[i].time_ns || got->peer != expected[i].peer ||
            got->value != expected[i].value)
            fail_msg("entry %u: got {%" G_GINT64_FORMAT " ns, peer %u, %u}, expected "
                     "{%" G_GINT64_FORMAT " ns, peer %u, %u}",
                     i, got->time_ns, got->peer, got->value, expected[i].time_ns, expected[i].peer,
                     expected[i].value);
    }
    assert_int_equal(log->len, count);
}

/* Opens the connection between `a` and `b` by a message that is delivered. */
static void
open_connection(Fixture *fx, SimNodeId a, SimNodeId b)
{
    guint before = received(fx, b)->len;
    send_msg(fx, a, b, 1000);
    run_to(fx, sim_now_ns(fx->world) + 10 * MS);
    assert_int_equal(received(fx, b)->len, before + 1);
}

static void
assert_counters(const Fixture *fx, guint64 sent, guint64 delivered, guint64 dropped)
{
    assert_int_equal(sim_net_messages_sent(fx->net), sent);
    assert_int_equal(sim_net_messages_delivered(fx->net), delivered);
    assert_int_equal(sim_net_messages_dropped(fx->net), dropped);
}

/* ---- FIFO, latency, bandwidth ---- */

static void
test_sim_net_fifo_with_jitter(void **state)
{
    /* Goal: with a lognormal latency whose samples often invert the order of
     * messages sent 10us apart, each connection still delivers in send order,
     * in both directions. */
    Fixture *fx = *state;
    SimDist jitter = {SIM_DIST_LOGNORMAL, 1.0 * MS, 1.0};
    sim_net_set_link(fx->net, 0, 1, jitter, 0, TRUE);
    enum { COUNT = 3000 };
    for (guint32 i = 0; i < COUNT; i++) {
        run_to(fx, (gint64)i * 10 * US);
        send_msg(fx, 0, 1, i);
        send_msg(fx, 1, 0, i);
    }
    run_to(fx, 10 * SIM_NS_PER_S);
    gint64 latency_min = G_MAXINT64, latency_max = 0;
    for (SimNodeId node = 0; node <= 1; node++) {
        GArray *log = received(fx, node);
        assert_int_equal(log->len, COUNT);
        for (guint i = 0; i < COUNT; i++) {
            const Entry *entry = &g_array_index(log, Entry, i);
            assert_int_equal(entry->value, i);
            gint64 latency = entry->time_ns - (gint64)i * 10 * US;
            latency_min = MIN(latency_min, latency);
            latency_max = MAX(latency_max, latency);
        }
    }
    /* The jitter is real: latencies spread over milliseconds, far more than
     * the 10us between sends, so FIFO had work to do. */
    assert_true(latency_max - latency_min > 5 * MS);
    assert_counters(fx, 2 * COUNT, 2 * COUNT, 0);
}

static void
test_sim_net_latency_per_link(void **state)
{
    /* Goal: each directed link has its own latency, and a message arrives
     * exactly that latency after it was sent. */
    Fixture *fx = *state;
    sim_net_set_link(fx->net, 0, 1, SIM_DIST_CONST(3 * MS), 0, FALSE);
    sim_net_set_link(fx->net, 1, 0, SIM_DIST_CONST(7 * MS), 0, FALSE);
    sim_net_set_link(fx->net, 2, 3, SIM_DIST_CONST(250 * US), 0, TRUE);
    static const struct {
        SimNodeId from, to;
        gint64 latency_ns;
    } cases[] = {
        {0, 1, 3 * MS}, {1, 0, 7 * MS}, {2, 3, 250 * US}, {3, 2, 250 * US}, {0, 2, 1 * MS},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        gint64 sent_ns = sim_now_ns(fx->world);
        send_msg(fx, cases[i].from, cases[i].to, (guint32)i);
        run_to(fx, sent_ns + 20 * MS);
        GArray *log = received(fx, cases[i].to);
        const Entry *last = &g_array_index(log, Entry, log->len - 1);
        assert_int_equal(last->value, i);
        assert_int_equal(last->time_ns - sent_ns, cases[i].latency_ns);
    }
}

static void
test_sim_net_bandwidth_delays_by_size(void **state)
{
    /* Goal: with a bandwidth, a message takes size/bandwidth to transmit,
     * behind earlier messages in the same direction; the other direction and
     * other links are not slowed. */
    Fixture *fx = *state;
    /* 1 MB/s: 1000 bytes take 1ms. */
    sim_net_set_link(fx->net, 0, 1, SIM_DIST_CONST(1 * MS), 1000000, FALSE);
    static const struct {
        gint64 send_ns;
        SimNodeId from, to;
        guint32 size_bytes;
        gint64 arrival_ns;
    } cases[] = {
        {0, 0, 1, 1000, 2 * MS},        /* 1ms on the wire + 1ms latency */
        {0, 0, 1, 2000, 4 * MS},        /* behind the first: departs at 3ms */
        {0, 0, 1, 500, 4500 * US},      /* departs at 3.5ms */
        {0, 1, 0, 1000000, 1 * MS},     /* the reverse direction is unlimited */
        {0, 0, 2, 1000000, 1 * MS},     /* so is another link */
        {10 * MS, 0, 1, 1000, 12 * MS}, /* the wire is idle again */
        {20 * MS, 0, 1, 0, 21 * MS},    /* an empty message costs only latency */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        run_to(fx, cases[i].send_ns);
        send_sized(fx, cases[i].from, cases[i].to, (guint32)i, cases[i].size_bytes);
    }
    run_to(fx, 100 * MS);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        GArray *log = received(fx, cases[i].to);
        gboolean found = FALSE;
        for (guint k = 0; k < log->len; k++) {
            const Entry *entry = &g_array_index(log, Entry, k);
            if (entry->value != i || entry->peer != cases[i].from)
                continue;
            found = TRUE;
            if (entry->time_ns != cases[i].arrival_ns)
                fail_msg("case %zu arrived at %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, i,
                         entry->time_ns, cases[i].arrival_ns);
        }
        assert_true(found);
    }
}

/* ---- partitions ---- */

static void
assert_paths(const Fixture *fx, const gboolean open[NODES][NODES])
{
    for (SimNodeId a = 0; a < NODES; a++) {
        for (SimNodeId b = 0; b < NODES; b++) {
            if (a != b && sim_net_path_open(fx->net, a, b) != open[a][b])
                fail_msg("path %u->%u should be %s", a, b, open[a][b] ? "open" : "cut");
        }
    }
}

static const gboolean ALL_OPEN[NODES][NODES] = {
    {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};

static void
test_sim_net_partition_into_groups_and_heal(void **state)
{
    /* Goal: a partition cuts exactly the paths between groups; messages
     * inside a group flow, across are dropped; heal reopens every path. */
    Fixture *fx = *state;
    assert_paths(fx, ALL_OPEN);
    static const guint groups[NODES] = {0, 0, 1, 1};
    sim_net_partition(fx->net, groups, NODES);
    static const gboolean split[NODES][NODES] = {
        {1, 1, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 1}, {0, 0, 1, 1}};
    assert_paths(fx, split);
    send_msg(fx, 0, 1, 1);
    send_msg(fx, 3, 2, 2);
    send_msg(fx, 0, 2, 3); /* across: dropped */
    send_msg(fx, 3, 1, 4); /* across: dropped */
    run_to(fx, 10 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1}};
    static const Entry at_2[] = {{1 * MS, 3, 2}};
    assert_entries(received(fx, 1), at_1, 1);
    assert_entries(received(fx, 2), at_2, 1);
    assert_int_equal(received(fx, 0)->len + received(fx, 3)->len, 0);
    assert_counters(fx, 4, 2, 2);
    sim_net_heal(fx->net);
    assert_paths(fx, ALL_OPEN);
    send_msg(fx, 0, 3, 5); /* a pair that never tried to talk: opens at once */
    run_to(fx, 20 * MS);
    static const Entry at_3[] = {{11 * MS, 0, 5}};
    assert_entries(received(fx, 3), at_3, 1);
}

static void
test_sim_net_partition_of_some_nodes(void **state)
{
    /* Goal: nodes past n_nodes keep their paths when a partition names only
     * the first ones. */
    Fixture *fx = *state;
    static const guint groups[2] = {0, 1};
    sim_net_partition(fx->net, groups, 2);
    static const gboolean expected[NODES][NODES] = {
        {1, 0, 1, 1}, {0, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
    assert_paths(fx, expected);
}

static void
test_sim_net_one_way_partition(void **state)
{
    /* Goal: a one-way cut closes one direction of one path, and breaks the
     * connection both ways (TCP needs both directions). */
    Fixture *fx = *state;
    open_connection(fx, 0, 1);
    sim_net_cut_one_way(fx->net, 0, 1);
    static const gboolean expected[NODES][NODES] = {
        {1, 0, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
    assert_paths(fx, expected);
    gint64 now = sim_now_ns(fx->world);
    send_msg(fx, 0, 1, 1);
    send_msg(fx, 1, 0, 2);
    send_msg(fx, 0, 2, 3);
    run_to(fx, now + 10 * MS);
    assert_int_equal(received(fx, 1)->len, 1); /* only open_connection's */
    assert_int_equal(received(fx, 0)->len, 0);
    assert_int_equal(received(fx, 2)->len, 1);
    assert_counters(fx, 4, 2, 2);
}

static void
test_sim_net_isolate(void **state)
{
    /* Goal: isolating a node cuts every path to and from it, and no other. */
    Fixture *fx = *state;
    sim_net_isolate(fx->net, 2);
    static const gboolean expected[NODES][NODES] = {
        {1, 1, 0, 1}, {1, 1, 0, 1}, {0, 0, 1, 0}, {1, 1, 0, 1}};
    assert_paths(fx, expected);
    send_msg(fx, 2, 0, 1);
    send_msg(fx, 0, 2, 2);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 10 * MS);
    assert_int_equal(received(fx, 0)->len, 0);
    assert_int_equal(received(fx, 2)->len, 0);
    assert_int_equal(received(fx, 1)->len, 1);
    sim_net_heal(fx->net);
    assert_paths(fx, ALL_OPEN);
}

static void
test_sim_net_partition_fails_in_flight_messages(void **state)
{
    /* Goal: messages in flight on a connection that a partition breaks are
     * lost, even if the partition heals before they would arrive; during the
     * partition nobody is told, and after the heal each endpoint learns
     * RESET one round trip later (its retransmission meets a reset). */
    Fixture *fx = *state;
    sim_net_set_link(fx->net, 0, 1, SIM_DIST_CONST(10 * MS), 0, TRUE);
    open_connection(fx, 0, 1); /* now = 10ms; the hello arrived at 10ms */
    send_msg(fx, 0, 1, 1);
    send_msg(fx, 0, 1, 2);
    send_msg(fx, 1, 0, 3);
    run_to(fx, 15 * MS);
    static const guint groups[NODES] = {0, 1, 0, 0};
    sim_net_partition(fx->net, groups, NODES);
    run_to(fx, 16 * MS);
    for (SimNodeId node = 0; node < NODES; node++)
        assert_int_equal(disconnects(fx, node)->len, 0);
    sim_net_heal(fx->net);
    run_to(fx, 100 * MS);
    assert_int_equal(received(fx, 1)->len, 1);
    assert_int_equal(received(fx, 0)->len, 0);
    static const Entry reset_0[] = {{36 * MS, 1, SIM_DISCONNECT_RESET}};
    static const Entry reset_1[] = {{36 * MS, 0, SIM_DISCONNECT_RESET}};
    assert_entries(disconnects(fx, 0), reset_0, 1);
    assert_entries(disconnects(fx, 1), reset_1, 1);
    for (SimNodeId node = 2; node < NODES; node++)
        assert_int_equal(disconnects(fx, node)->len, 0);
    assert_counters(fx, 4, 1, 3);
}

static void
test_sim_net_reset_after_heal(void **state)
{
    /* Goal: after a heal, both endpoints of the connection the partition
     * broke learn disconnect(RESET) one round trip later, once; sends after
     * that open a new connection and arrive. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    static const guint groups[NODES] = {0, 1, 0, 0};
    sim_net_partition(fx->net, groups, NODES);
    run_to(fx, 12 * MS);
    sim_net_heal(fx->net);
    run_to(fx, 14 * MS);
    static const Entry reset_0[] = {{14 * MS, 1, SIM_DISCONNECT_RESET}};
    static const Entry reset_1[] = {{14 * MS, 0, SIM_DISCONNECT_RESET}};
    assert_entries(disconnects(fx, 0), reset_0, 1);
    assert_entries(disconnects(fx, 1), reset_1, 1);
    send_msg(fx, 0, 1, 1);
    run_to(fx, 15 * MS);
    send_msg(fx, 0, 1, 2);
    run_to(fx, 17 * MS);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 30 * MS);
    assert_int_equal(received(fx, 1)->len, 4);
    const Entry *last = &g_array_index(received(fx, 1), Entry, 3);
    assert_int_equal(last->value, 3);
    assert_int_equal(last->time_ns, 18 * MS);
    assert_entries(disconnects(fx, 0), reset_0, 1);
    assert_entries(disconnects(fx, 1), reset_1, 1);
    assert_counters(fx, 4, 4, 0);
}

static void
crash_node(SimWorld *world, SimNodeId node, gboolean power_loss)
{
    if (power_loss)
        sim_node_power_loss(world, node);
    else
        sim_node_crash(world, node);
}

static void
test_sim_net_reset_survives_sender_crash(void **state)
{
    /* Goal: a sender that crashes while waiting for a RESET still gets RESETs
     * on later broken connections after it restarts (a dropped RESET notice
     * must not leave the connection believing one is still on its way). */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    static const guint groups[NODES] = {0, 1, 0, 0};
    sim_net_partition(fx->net, groups, NODES);
    sim_net_heal(fx->net);
    send_msg(fx, 0, 1, 1); /* lost; a RESET is due at 12ms */
    run_to(fx, 11 * MS);
    sim_node_crash(fx->world, 0); /* the RESET notice dies with node 0 */
    sim_node_restart(fx->world, 0);
    run_to(fx, 20 * MS);
    open_connection(fx, 0, 1); /* a new connection; now = 30ms */
    sim_net_partition(fx->net, groups, NODES);
    sim_net_heal(fx->net);
    send_msg(fx, 0, 1, 2); /* lost: the connection is broken */
    run_to(fx, 40 * MS);
    static const Entry reset[] = {{32 * MS, 1, SIM_DISCONNECT_RESET}};
    assert_entries(disconnects(fx, 0), reset, 1);
}

static void
test_sim_net_peer_crash_sends_closed(void **state)
{
    /* Goal: when a peer's process crashes, its OS closes the connection: the
     * other end gets disconnect(CLOSED) one latency later, in-flight messages
     * are lost, sends while the peer is down are answered by RESET, and after
     * restart a send opens a new connection. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    send_msg(fx, 0, 1, 1);     /* would arrive at 11ms */
    send_msg(fx, 1, 0, 2);     /* would arrive at 11ms */
    run_to(fx, 10500 * US);
    sim_node_crash(fx->world, 1);
    run_to(fx, 20 * MS);
    static const Entry closed[] = {{11500 * US, 1, SIM_DISCONNECT_CLOSED}};
    assert_entries(disconnects(fx, 0), closed, 1);
    /* The model fails everything in flight on a closed connection, in both
     * directions (sim_net.h: a crash fails in-flight requests). */
    assert_int_equal(received(fx, 0)->len, 0);
    assert_int_equal(received(fx, 1)->len, 1);
    send_msg(fx, 0, 1, 3); /* the host is up: its kernel answers RESET */
    run_to(fx, 30 * MS);
    static const Entry then_reset[] = {{11500 * US, 1, SIM_DISCONNECT_CLOSED},
                                       {22 * MS, 1, SIM_DISCONNECT_RESET}};
    assert_entries(disconnects(fx, 0), then_reset, 2);
    sim_node_restart(fx->world, 1);
    send_msg(fx, 0, 1, 4);
    run_to(fx, 40 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1000}, {31 * MS, 0, 4}};
    assert_entries(received(fx, 1), at_1, 2);
    assert_counters(fx, 5, 2, 3);
}

static void
test_sim_net_peer_power_loss_is_silent(void **state)
{
    /* Goal: a peer's power loss tells nobody anything: in-flight messages
     * and sends while it is off vanish without a notice; after it restarts,
     * the next send is answered by RESET and the one after it works. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    send_msg(fx, 0, 1, 1);
    run_to(fx, 10500 * US);
    sim_node_power_loss(fx->world, 1);
    send_msg(fx, 0, 1, 2);
    run_to(fx, 1000 * MS);
    assert_int_equal(disconnects(fx, 0)->len, 0);
    assert_int_equal(received(fx, 1)->len, 1);
    sim_node_restart(fx->world, 1);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 1010 * MS);
    static const Entry reset[] = {{1002 * MS, 1, SIM_DISCONNECT_RESET}};
    assert_entries(disconnects(fx, 0), reset, 1);
    send_msg(fx, 0, 1, 4);
    run_to(fx, 1020 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1000}, {1011 * MS, 0, 4}};
    assert_entries(received(fx, 1), at_1, 2);
    assert_counters(fx, 5, 2, 3);
}

static void
test_sim_net_restarted_node_opens_new_connection(void **state)
{
    /* Goal: a node restarted after a crash or power loss has no sockets, so
     * its first send to a peer opens a new connection and is delivered,
     * whatever state the old connection was left in. */
    Fixture *fx = *state;
    static const struct {
        gboolean power_loss;
        gboolean partitioned_during_crash;
    } cases[] = {{TRUE, FALSE}, {FALSE, TRUE}};
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        SimNodeId restarted = (SimNodeId)(1 + i), peer = 0;
        open_connection(fx, peer, restarted);
        if (cases[i].partitioned_during_crash)
            sim_net_isolate(fx->net, restarted);
        crash_node(fx->world, restarted, cases[i].power_loss);
        sim_net_heal(fx->net);
        sim_node_restart(fx->world, restarted);
        gint64 sent_ns = sim_now_ns(fx->world);
        send_msg(fx, restarted, peer, 7);
        run_to(fx, sent_ns + 10 * MS);
        GArray *log = received(fx, peer);
        if (log->len == 0 || g_array_index(log, Entry, log->len - 1).value != 7)
            fail_msg("case %zu: the restarted node's first message was lost", i);
        g_array_set_size(log, 0);
    }
}

static void
test_sim_net_close(void **state)
{
    /* Goal: sim_net_close loses the connection's in-flight messages (both
     * ways), tells the peer CLOSED one latency later and the closer nothing;
     * the next send opens a new connection. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    send_msg(fx, 0, 1, 1);
    send_msg(fx, 1, 0, 2);
    run_to(fx, 10500 * US);
    sim_net_close(fx->net, 0, 1);
    run_to(fx, 20 * MS);
    static const Entry closed[] = {{11500 * US, 0, SIM_DISCONNECT_CLOSED}};
    assert_entries(disconnects(fx, 1), closed, 1);
    assert_int_equal(disconnects(fx, 0)->len, 0);
    assert_int_equal(received(fx, 0)->len, 0);
    assert_int_equal(received(fx, 1)->len, 1);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 30 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1000}, {21 * MS, 0, 3}};
    assert_entries(received(fx, 1), at_1, 2);
    sim_net_close(fx->net, 2, 3); /* no connection: nothing happens */
    run_to(fx, 40 * MS);
    assert_int_equal(disconnects(fx, 3)->len, 0);
    assert_counters(fx, 4, 2, 2);
}

/* ---- single-message faults ---- */

static void
test_sim_net_lose_next(void **state)
{
    /* Goal: lose_next(n) loses the next n messages on one directed link
     * only, without breaking the connection. */
    Fixture *fx = *state;
    sim_net_lose_next(fx->net, 0, 1, 2);
    for (guint32 tag = 1; tag <= 4; tag++) {
        send_msg(fx, 0, 1, tag);
        send_msg(fx, 1, 0, tag);
    }
    run_to(fx, 10 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 3}, {1 * MS, 0, 4}};
    assert_entries(received(fx, 1), at_1, 2);
    assert_int_equal(received(fx, 0)->len, 4);
    assert_int_equal(disconnects(fx, 0)->len, 0);
    assert_counters(fx, 8, 6, 2);
}

static void
test_sim_net_delay_next(void **state)
{
    /* Goal: delay_next delays the next message by the extra time, and later
     * messages on the link queue behind it (FIFO). */
    Fixture *fx = *state;
    sim_net_delay_next(fx->net, 0, 1, 1, 5 * MS);
    send_msg(fx, 0, 1, 1);
    run_to(fx, 100 * US);
    send_msg(fx, 0, 1, 2);
    run_to(fx, 10 * MS);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 20 * MS);
    static const Entry at_1[] = {{6 * MS, 0, 1}, {6 * MS, 0, 2}, {11 * MS, 0, 3}};
    assert_entries(received(fx, 1), at_1, 3);
}

static void
test_sim_net_duplicate_next(void **state)
{
    /* Goal: duplicate_next delivers the next message twice (a shallow copy of
     * size_of bytes); a message that cannot be copied is delivered once. */
    Fixture *fx = *state;
    sim_net_duplicate_next(fx->net, 0, 1, 1);
    TestMsg *copyable = msg_new(1, 100);
    copyable->header.size_of = sizeof(TestMsg);
    sim_net_send(fx->net, 0, 1, &copyable->header);
    send_msg(fx, 0, 1, 2);
    run_to(fx, 10 * MS);
    static const Entry twice[] = {{1 * MS, 0, 1}, {1 * MS, 0, 1}, {1 * MS, 0, 2}};
    assert_entries(received(fx, 1), twice, 3);
    sim_net_duplicate_next(fx->net, 0, 1, 1);
    send_msg(fx, 0, 1, 3); /* size_of 0, no clone_fn: cannot be copied */
    run_to(fx, 20 * MS);
    assert_int_equal(received(fx, 1)->len, 4);
    assert_counters(fx, 3, 4, 0);
}

static void
test_sim_net_loss_ratio(void **state)
{
    /* Goal: a loss ratio loses about that fraction of messages, the rest
     * keep their order; a ratio of 0, or a heal, stops the loss. */
    Fixture *fx = *state;
    enum { COUNT = 4000 };
    sim_net_set_loss(fx->net, 0, 1, 1, 4);
    for (guint32 i = 0; i < COUNT; i++)
        send_msg(fx, 0, 1, i);
    run_to(fx, 10 * MS);
    GArray *log = received(fx, 1);
    double delivered = (double)log->len / COUNT;
    if (delivered < 0.72 || delivered > 0.78)
        fail_msg("delivered fraction %g, expected about 0.75", delivered);
    for (guint i = 1; i < log->len; i++)
        assert_true(g_array_index(log, Entry, i).value > g_array_index(log, Entry, i - 1).value);
    static const struct {
        gboolean heal; /* stop the loss by heal, else by a ratio of 0 */
    } stops[] = {{FALSE}, {TRUE}};
    for (gsize i = 0; i < G_N_ELEMENTS(stops); i++) {
        sim_net_set_loss(fx->net, 0, 1, 1, 2);
        if (stops[i].heal)
            sim_net_heal(fx->net);
        else
            sim_net_set_loss(fx->net, 0, 1, 0, 1);
        guint before = log->len;
        for (guint32 k = 0; k < 100; k++)
            send_msg(fx, 0, 1, k);
        run_to(fx, sim_now_ns(fx->world) + 10 * MS);
        assert_int_equal(log->len, before + 100);
    }
}

static void
test_sim_net_heal_clears_message_faults(void **state)
{
    /* Goal: heal clears pending lose, delay and duplicate faults, so the
     * next message arrives once, on time. */
    Fixture *fx = *state;
    enum { LOSE, DELAY, DUPLICATE };
    static const int faults[] = {LOSE, DELAY, DUPLICATE};
    for (gsize i = 0; i < G_N_ELEMENTS(faults); i++) {
        if (faults[i] == LOSE)
            sim_net_lose_next(fx->net, 0, 1, 3);
        else if (faults[i] == DELAY)
            sim_net_delay_next(fx->net, 0, 1, 3, 50 * MS);
        else
            sim_net_duplicate_next(fx->net, 0, 1, 3);
        sim_net_heal(fx->net);
        gint64 sent_ns = sim_now_ns(fx->world);
        TestMsg *msg = msg_new((guint32)i, 10);
        msg->header.size_of = sizeof(TestMsg);
        sim_net_send(fx->net, 0, 1, &msg->header);
        run_to(fx, sent_ns + 100 * MS);
        Entry expected = {sent_ns + 1 * MS, 0, (guint32)i};
        assert_entries(received(fx, 1), &expected, 1);
        g_array_set_size(received(fx, 1), 0);
    }
}

/* ---- impairments ---- */

static SimImpairment
loss_of(guint64 numerator, guint64 denominator)
{
    SimImpairment imp = {.kind = SIM_IMPAIR_LOSS};
    imp.loss_numerator = numerator;
    imp.loss_denominator = denominator;
    return imp;
}

static void
test_sim_net_impair_loss_retransmits(void **state)
{
    /* Goal: 20% packet loss loses no message on a TCP connection: each lost
     * transmission costs one retransmission timeout (RTT 2 ms + 200 ms, then
     * doubling), about 0.25 retransmissions per message, order is kept, the
     * connection stays up, and the reverse direction is untouched. */
    Fixture *fx = *state;
    enum { COUNT = 2000 };
    open_connection(fx, 0, 1);
    g_array_set_size(received(fx, 1), 0);
    SimImpairment loss = loss_of(1, 5);
    sim_net_impair(fx->net, 0, 1, &loss);
    gint64 start = sim_now_ns(fx->world);
    for (guint32 i = 0; i < COUNT; i++) {
        run_to(fx, start + (gint64)i * MS);
        send_msg(fx, 0, 1, i);
        send_msg(fx, 1, 0, i);
    }
    run_to(fx, start + 1000 * SIM_NS_PER_S);
    GArray *log = received(fx, 1);
    assert_int_equal(log->len, COUNT);
    gboolean late = FALSE;
    for (guint i = 0; i < log->len; i++) {
        const Entry *e = &g_array_index(log, Entry, i);
        assert_int_equal(e->value, i);
        gint64 delay = e->time_ns - (start + (gint64)i * MS);
        assert_true(delay >= 1 * MS);
        /* The first retransmission is due 202 ms after the send. */
        if (delay == 1 * MS + 202 * MS)
            late = TRUE;
        if (i > 0)
            assert_true(e->time_ns >= g_array_index(log, Entry, i - 1).time_ns);
    }
    assert_true(late);
    guint64 retransmissions = sim_net_retransmissions(fx->net);
    if (retransmissions < COUNT / 5 || retransmissions > COUNT * 3 / 10)
        fail_msg("%" G_GUINT64_FORMAT " retransmissions, expected about %u", retransmissions,
                 COUNT / 4);
    GArray *back = received(fx, 0);
    assert_int_equal(back->len, COUNT);
    for (guint i = 0; i < back->len; i++)
        assert_int_equal(g_array_index(back, Entry, i).time_ns, start + (gint64)i * MS + 1 * MS);
    assert_int_equal(disconnects(fx, 0)->len, 0);
    assert_int_equal(disconnects(fx, 1)->len, 0);
}

static void
test_sim_net_impair_loss_times_out(void **state)
{
    /* Goal: when every transmission and all 15 retransmissions of a message
     * are lost, TCP gives up: the message is dropped, the connection breaks,
     * and the sender learns RESET once its backed-off retransmission timers
     * are spent (202 ms doubling, capped at 120 s: 926.646 s in all). */
    Fixture *fx = *state;
    open_connection(fx, 0, 1);
    gint64 start = sim_now_ns(fx->world);
    SimImpairment loss = loss_of(999999, 1000000);
    guint64 id = sim_net_impair(fx->net, 0, 1, &loss);
    send_msg(fx, 0, 1, 7);
    sim_net_impair_end(fx->net, id);
    assert_int_equal(sim_net_impairments(fx->net, 0, 1), 0);
    run_to(fx, start + 1000 * SIM_NS_PER_S);
    assert_int_equal(received(fx, 1)->len, 1); /* only the opening message */
    assert_int_equal(sim_net_retransmissions(fx->net), SIM_NET_TCP_RETRIES_MAX);
    Entry expected = {start + 926646 * MS, 1, SIM_DISCONNECT_RESET};
    assert_entries(disconnects(fx, 0), &expected, 1);
    assert_counters(fx, 2, 1, 1);
}

/* Sends COUNT messages from 0 to 1 `gap_ns` apart from now; checks they
 * arrive in order, each `lo_ns` to `hi_ns` after its send unless it waited
 * for the one before; returns the mean delay in ms and sets `held_back` when
 * one waited. */
static double
latency_run(Fixture *fx, guint count, gint64 gap_ns, gint64 lo_ns, gint64 hi_ns,
            gboolean *held_back)
{
    GArray *log = received(fx, 1);
    g_array_set_size(log, 0);
    gint64 start = sim_now_ns(fx->world);
    for (guint32 i = 0; i < count; i++) {
        run_to(fx, start + (gint64)i * gap_ns);
        send_msg(fx, 0, 1, i);
    }
    run_to(fx, sim_now_ns(fx->world) + 1 * SIM_NS_PER_S);
    assert_int_equal(log->len, count);
    gint64 previous = 0;
    double delay_sum = 0;
    *held_back = FALSE;
    for (guint i = 0; i < log->len; i++) {
        const Entry *e = &g_array_index(log, Entry, i);
        gint64 delay = e->time_ns - (start + (gint64)i * gap_ns);
        assert_int_equal(e->value, i);
        assert_true(delay >= lo_ns);
        assert_true(delay <= hi_ns || e->time_ns == previous);
        *held_back |= i > 0 && e->time_ns == previous;
        delay_sum += (double)delay;
        previous = e->time_ns;
    }
    return delay_sum / count / (double)MS;
}

static void
test_sim_net_impair_latency_keeps_order(void **state)
{
    /* Goal: 50 ms +- 20 ms of extra latency delays each message by 30 to
     * 70 ms beyond the link's 1 ms (51 ms on average when messages are far
     * apart); sent 1 ms apart they still arrive in order, a message drawing
     * less than the one before waiting for it (TCP's head-of-line blocking);
     * two latency impairments add up; once they end a message takes the
     * link's 1 ms again. */
    Fixture *fx = *state;
    SimImpairment latency = {.kind = SIM_IMPAIR_LATENCY};
    latency.latency = (SimDist){SIM_DIST_UNIFORM, 30.0 * MS, 70.0 * MS};
    guint64 id = sim_net_impair(fx->net, 0, 1, &latency);
    gboolean held_back = FALSE;
    double mean_ms = latency_run(fx, 400, 100 * MS, 31 * MS, 71 * MS, &held_back);
    assert_false(held_back);
    if (mean_ms < 49 || mean_ms > 53)
        fail_msg("mean delay %g ms, expected about 51 ms", mean_ms);
    latency_run(fx, 400, 1 * MS, 31 * MS, 71 * MS, &held_back);
    assert_true(held_back);
    GArray *log = received(fx, 1);
    SimImpairment more = {.kind = SIM_IMPAIR_LATENCY, .latency = SIM_DIST_CONST(100 * MS)};
    guint64 second = sim_net_impair(fx->net, 0, 1, &more);
    g_array_set_size(log, 0);
    gint64 sent = sim_now_ns(fx->world);
    send_msg(fx, 0, 1, 1);
    run_to(fx, sent + 1 * SIM_NS_PER_S);
    assert_true(g_array_index(log, Entry, 0).time_ns - sent >= 131 * MS);
    sim_net_impair_end(fx->net, id);
    sim_net_impair_end(fx->net, second);
    g_array_set_size(log, 0);
    sent = sim_now_ns(fx->world);
    send_msg(fx, 0, 1, 2);
    run_to(fx, sent + 1 * SIM_NS_PER_S);
    Entry expected = {sent + 1 * MS, 0, 2};
    assert_entries(log, &expected, 1);
}

static void
test_sim_net_impair_bandwidth_caps(void **state)
{
    /* Goal: a 1000 B/s cap transmits 100-byte messages one per 100 ms, the
     * lower of two caps wins, and once the caps end the link is unlimited
     * again. */
    Fixture *fx = *state;
    SimImpairment cap = {.kind = SIM_IMPAIR_BANDWIDTH, .bandwidth_bytes_per_s = 1000};
    SimImpairment wider = {.kind = SIM_IMPAIR_BANDWIDTH, .bandwidth_bytes_per_s = 100000};
    guint64 a = sim_net_impair(fx->net, 0, 1, &cap);
    guint64 b = sim_net_impair(fx->net, 0, 1, &wider);
    for (guint32 i = 0; i < 3; i++)
        send_msg(fx, 0, 1, i);
    run_to(fx, 1 * SIM_NS_PER_S);
    static const Entry capped[] = {{101 * MS, 0, 0}, {201 * MS, 0, 1}, {301 * MS, 0, 2}};
    assert_entries(received(fx, 1), capped, 3);
    sim_net_impair_end(fx->net, a);
    sim_net_impair_end(fx->net, b);
    g_array_set_size(received(fx, 1), 0);
    send_msg(fx, 0, 1, 9);
    run_to(fx, 2 * SIM_NS_PER_S);
    Entry expected = {1 * SIM_NS_PER_S + 1 * MS, 0, 9};
    assert_entries(received(fx, 1), &expected, 1);
}

static void
test_sim_net_heal_ends_impairments(void **state)
{
    /* Goal: a heal ends every impairment, and ending one afterwards is a
     * no-op; the next message takes the link's own latency. */
    Fixture *fx = *state;
    SimImpairment latency = {.kind = SIM_IMPAIR_LATENCY, .latency = SIM_DIST_CONST(100 * MS)};
    guint64 id = sim_net_impair(fx->net, 0, 1, &latency);
    sim_net_impair(fx->net, 1, 0, &latency);
    assert_int_equal(sim_net_impairments(fx->net, 0, 1), 1);
    sim_net_heal(fx->net);
    assert_int_equal(sim_net_impairments(fx->net, 0, 1), 0);
    assert_int_equal(sim_net_impairments(fx->net, 1, 0), 0);
    sim_net_impair_end(fx->net, id);
    send_msg(fx, 0, 1, 3);
    run_to(fx, 10 * MS);
    Entry expected = {1 * MS, 0, 3};
    assert_entries(received(fx, 1), &expected, 1);
}

/* ---- pause, crash of the receiver ---- */

static void
test_sim_net_paused_receiver_gets_messages_on_resume(void **state)
{
    /* Goal: deliveries to a paused node wait, then arrive in send order at
     * the resume time; messages arriving after resume are not delayed. */
    Fixture *fx = *state;
    SimDist jitter = {SIM_DIST_LOGNORMAL, 1.0 * MS, 0.8};
    sim_net_set_link(fx->net, 0, 1, jitter, 0, TRUE);
    sim_node_pause(fx->world, 1);
    for (guint32 i = 0; i < 20; i++) {
        run_to(fx, (gint64)i * 20 * US);
        send_msg(fx, 0, 1, i);
    }
    run_to(fx, 500 * MS);
    assert_int_equal(received(fx, 1)->len, 0);
    sim_node_resume(fx->world, 1);
    run_to(fx, 500 * MS);
    GArray *log = received(fx, 1);
    assert_int_equal(log->len, 20);
    for (guint i = 0; i < log->len; i++) {
        assert_int_equal(g_array_index(log, Entry, i).value, i);
        assert_int_equal(g_array_index(log, Entry, i).time_ns, 500 * MS);
    }
    sim_net_set_link(fx->net, 0, 1, SIM_DIST_CONST(1 * MS), 0, TRUE);
    send_msg(fx, 0, 1, 99);
    run_to(fx, 600 * MS);
    assert_int_equal(g_array_index(log, Entry, 20).time_ns, 501 * MS);
}

static void
test_sim_net_crash_drops_messages_to_crashed_node(void **state)
{
    /* Goal: messages in flight to a node that crashes are dropped (and
     * freed), not delivered after its restart. */
    Fixture *fx = *state;
    sim_net_set_link(fx->net, 2, 3, SIM_DIST_CONST(5 * MS), 0, TRUE);
    for (guint32 i = 0; i < 3; i++)
        send_msg(fx, 2, 3, i);
    run_to(fx, 1 * MS);
    sim_node_crash(fx->world, 3);
    sim_node_restart(fx->world, 3);
    run_to(fx, 100 * MS);
    assert_int_equal(received(fx, 3)->len, 0);
    assert_counters(fx, 3, 0, 3);
}

/* ---- counters ---- */

static void
test_sim_net_counters_balance(void **state)
{
    /* Goal: once nothing is in flight, sent + duplicated = delivered +
     * dropped, over a mix of deliveries, losses and duplicates. */
    Fixture *fx = *state;
    assert_counters(fx, 0, 0, 0);
    sim_net_lose_next(fx->net, 0, 1, 1);
    sim_net_duplicate_next(fx->net, 0, 2, 2);
    for (guint32 i = 0; i < 5; i++) {
        send_msg(fx, 0, 1, i);
        TestMsg *msg = msg_new(i, 10);
        msg->header.size_of = sizeof(TestMsg);
        sim_net_send(fx->net, 0, 2, &msg->header);
    }
    sim_net_isolate(fx->net, 3);
    send_msg(fx, 3, 0, 9);
    run_to(fx, 10 * MS);
    /* 11 sent, 2 duplicated; 1 lost, 1 cut: 11 delivered, 2 dropped. */
    assert_counters(fx, 11, 11, 2);
    assert_int_equal(received(fx, 1)->len, 4);
    assert_int_equal(received(fx, 2)->len, 7);
}


/* ---- holding one message ---- */

enum { HELD_TYPE = 7 };

static void
send_typed(Fixture *fx, SimNodeId from, SimNodeId to, guint32 type, guint32 tag)
{
    TestMsg *msg = msg_new(tag, 100);
    msg->header.type = type;
    sim_net_send(fx->net, from, to, &msg->header);
}

static void
test_sim_net_hold_next_keeps_order(void **state)
{
    /* Goal: hold_next holds only the next message of its type from its
     * sender, for the hold on top of the link's latency; what follows on the
     * connection waits behind it (TCP's order), and a later message of the
     * type, the hold used up, is not held. */
    Fixture *fx = *state;
    sim_net_hold_next(fx->net, 0, SIM_NODE_NONE, HELD_TYPE, 1, 5 * MS);
    send_typed(fx, 0, 1, 0, 1);
    send_typed(fx, 0, 1, HELD_TYPE, 2);
    send_typed(fx, 0, 1, 0, 3);
    send_typed(fx, 2, 1, HELD_TYPE, 4); /* another sender: not held */
    assert_int_equal(sim_net_holding(fx->net), 2);
    run_to(fx, 10 * MS);
    send_typed(fx, 0, 1, HELD_TYPE, 5);
    run_to(fx, 20 * MS);
    static const Entry at_1[] = {
        {1 * MS, 0, 1}, {1 * MS, 2, 4}, {6 * MS, 0, 2}, {6 * MS, 0, 3}, {11 * MS, 0, 5}};
    assert_entries(received(fx, 1), at_1, 5);
    assert_int_equal(sim_net_holding(fx->net), 0);
    assert_counters(fx, 5, 5, 0);
}

static void
test_sim_net_hold_survives_sender_close(void **state)
{
    /* Goal: a sender that closes its connection while a message of it is
     * held (a client's request timeout) closes it gracefully: the held
     * message still arrives, after what the sender sent meanwhile on its new
     * connection, and the FIN follows the held message. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    sim_net_hold_next(fx->net, 0, 1, HELD_TYPE, 1, 20 * MS);
    send_typed(fx, 0, 1, HELD_TYPE, 1); /* due at 31ms */
    run_to(fx, 13 * MS);
    sim_net_close(fx->net, 0, 1);
    send_typed(fx, 0, 1, HELD_TYPE, 2); /* the retry, on a new connection */
    run_to(fx, 40 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1000}, {14 * MS, 0, 2}, {31 * MS, 0, 1}};
    assert_entries(received(fx, 1), at_1, 3);
    /* The FIN was for the old connection, which a new one replaced. */
    assert_int_equal(disconnects(fx, 1)->len, 0);
    assert_counters(fx, 3, 3, 0);
}

static void
test_sim_net_hold_fin_follows_held_message(void **state)
{
    /* Goal: when the closer does not reconnect, the peer learns CLOSED only
     * after the held message, not one latency after the close. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1); /* now = 10ms */
    sim_net_hold_next(fx->net, 0, 1, HELD_TYPE, 1, 20 * MS);
    send_typed(fx, 0, 1, HELD_TYPE, 1); /* due at 31ms */
    run_to(fx, 13 * MS);
    sim_net_close(fx->net, 0, 1);
    run_to(fx, 40 * MS);
    static const Entry at_1[] = {{1 * MS, 0, 1000}, {31 * MS, 0, 1}};
    assert_entries(received(fx, 1), at_1, 2);
    static const Entry closed[] = {{31 * MS, 0, SIM_DISCONNECT_CLOSED}};
    assert_entries(disconnects(fx, 1), closed, 1);
}

static void
test_sim_net_hold_lost_when_connection_breaks(void **state)
{
    /* Goal: a held message is lost like any other when its connection
     * breaks (a partition) or its receiver closes it: only a graceful close
     * by its sender lets it through. */
    Fixture *fx = *state;
    open_connection(fx, 0, 1);
    open_connection(fx, 0, 2); /* now = 20ms */
    sim_net_hold_next(fx->net, 0, SIM_NODE_NONE, HELD_TYPE, 2, 20 * MS);
    send_typed(fx, 0, 1, HELD_TYPE, 1);
    send_typed(fx, 0, 2, HELD_TYPE, 2);
    run_to(fx, 22 * MS);
    guint groups[NODES] = {0, 1, 0, 0};
    sim_net_partition(fx->net, groups, NODES);
    sim_net_close(fx->net, 2, 0);
    run_to(fx, 60 * MS);
    assert_int_equal(received(fx, 1)->len, 1);
    assert_int_equal(received(fx, 2)->len, 1);
    assert_int_equal(sim_net_holding(fx->net), 0);
    assert_counters(fx, 4, 2, 2);
}

#define NET_TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        NET_TEST(test_sim_net_fifo_with_jitter),
        NET_TEST(test_sim_net_latency_per_link),
        NET_TEST(test_sim_net_bandwidth_delays_by_size),
        NET_TEST(test_sim_net_partition_into_groups_and_heal),
        NET_TEST(test_sim_net_partition_of_some_nodes),
        NET_TEST(test_sim_net_one_way_partition),
        NET_TEST(test_sim_net_isolate),
        NET_TEST(test_sim_net_partition_fails_in_flight_messages),
        NET_TEST(test_sim_net_reset_after_heal),
        NET_TEST(test_sim_net_reset_survives_sender_crash),
        NET_TEST(test_sim_net_peer_crash_sends_closed),
        NET_TEST(test_sim_net_peer_power_loss_is_silent),
        NET_TEST(test_sim_net_restarted_node_opens_new_connection),
        NET_TEST(test_sim_net_close),
        NET_TEST(test_sim_net_lose_next),
        NET_TEST(test_sim_net_delay_next),
        NET_TEST(test_sim_net_duplicate_next),
        NET_TEST(test_sim_net_loss_ratio),
        NET_TEST(test_sim_net_heal_clears_message_faults),
        NET_TEST(test_sim_net_impair_loss_retransmits),
        NET_TEST(test_sim_net_impair_loss_times_out),
        NET_TEST(test_sim_net_impair_latency_keeps_order),
        NET_TEST(test_sim_net_impair_bandwidth_caps),
        NET_TEST(test_sim_net_heal_ends_impairments),
        NET_TEST(test_sim_net_paused_receiver_gets_messages_on_resume),
        NET_TEST(test_sim_net_crash_drops_messages_to_crashed_node),
        NET_TEST(test_sim_net_counters_balance),
        NET_TEST(test_sim_net_hold_next_keeps_order),
        NET_TEST(test_sim_net_hold_survives_sender_close),
        NET_TEST(test_sim_net_hold_fin_follows_held_message),
        NET_TEST(test_sim_net_hold_lost_when_connection_breaks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
