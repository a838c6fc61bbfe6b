/*
 * Unit tests for the coordination client library (zk_client) on its own
 * side of the wire, as ZooKeeper's ClientCnxn behaves: connecting and the
 * requests queued meanwhile, pings that keep an idle session, replies
 * completing in order, every queued and outstanding request failing with
 * CONNECTION_LOSS when the connection breaks, reconnecting within the
 * backoff and resuming the session with its watches, an expired session that
 * refuses requests and forgets its watches, checked writes racing on a
 * version, and a freed client that delivers nothing. The server side is in
 * test_zk_server.c; both use the harness of zk_fixture.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "zk_fixture.h"

#define ORDER_MAX 32

/* Which requests completed, in completion order, and how. */
typedef struct {
    guint count;
    guint index[ORDER_MAX];
    ZkError error[ORDER_MAX];
} Order;

typedef struct {
    Order *order;
    guint index;
} OrderTicket;

static void
order_cb(void *owner, const ZkResult *result, void *arg)
{
    (void)owner;
    OrderTicket *ticket = arg;
    Order *order = ticket->order;
    assert_true(order->count < ORDER_MAX);
    order->index[order->count] = ticket->index;
    order->error[order->count] = result->error;
    order->count++;
}

/* Submits `n` reads of "/" from member 0, numbered from `first`. */
static void
submit_reads(Harness *h, Order *order, OrderTicket *tickets, guint first, guint n)
{
    for (guint i = first; i < first + n; i++) {
        tickets[i] = (OrderTicket){order, i};
        if (i % 2 == 0)
            zk_client_get(client_of(h, 0), "/", FALSE, order_cb, &tickets[i]);
        else
            zk_client_children(client_of(h, 0), "/", FALSE, order_cb, &tickets[i]);
    }
}

/* Completions `from`..`to` (exclusive) came in request order with `error`. */
static void
assert_completed_in_order(const Order *order, guint from, guint to, ZkError error)
{
    assert_true(order->count >= to);
    for (guint i = from; i < to; i++) {
        assert_int_equal(order->index[i], i);
        assert_int_equal(order->error[i], error);
    }
}

static void
test_zk_client_connects_and_sends_queued_requests(void **state)
{
    /* Goal: a new client is CONNECTING without a session; requests made then
     * are queued and sent once the new session is established. */
    (void)state;
    Harness *h = harness_new(40);
    ZkClient *c = client_of(h, 0);
    assert_int_equal(zk_client_state(c), ZK_CLIENT_CONNECTING);
    assert_int_equal(zk_client_session_id(c), 0);
    assert_int_equal(zk_client_session_timeout_ns(c), 0);
    Outcome o = {0};
    RUN(h, &o, zk_client_create(c, "/early", text("x"), 1, 0, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(zk_client_state(c), ZK_CLIENT_CONNECTED);
    assert_int_not_equal(zk_client_session_id(c), 0);
    assert_int_equal(zk_client_session_timeout_ns(c), TIMEOUT_NS);
    assert_int_equal(count_events(&h->members[0], "established new"), 1);
    assert_int_equal(h->members[0].events->len, 1);
    g_autofree char *data = server_text(h, "/early", NULL);
    assert_string_equal(data, "x");
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_client_replies_complete_in_order(void **state)
{
    /* Goal: pipelined requests complete in the order they were made. */
    (void)state;
    Harness *h = harness_new(41);
    wait_established(h);
    Order order = {0};
    OrderTicket tickets[ORDER_MAX];
    submit_reads(h, &order, tickets, 0, 20);
    assert_int_equal(order.count, 0); /* never from inside the call */
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(order.count, 20);
    assert_completed_in_order(&order, 0, 20, ZK_OK);
    harness_free(h);
}

static void
test_zk_client_idle_session_kept_by_pings(void **state)
{
    /* Goal: a client that makes no request pings a third of its timeout
     * apart, so its session outlives many timeouts without a disconnect. */
    (void)state;
    Harness *h = harness_new(42);
    wait_established(h);
    guint64 session = zk_client_session_id(client_of(h, 0));
    guint64 sent_before = sim_net_messages_sent(sim_world_net(h->world));
    run_for(h, 10 * TIMEOUT_NS);
    guint64 sent = sim_net_messages_sent(sim_world_net(h->world)) - sent_before;
    /* Three clients, a ping and its reply every TIMEOUT_NS / 3. */
    assert_true(sent >= 3 * 2 * (10 * 3 - 1));
    assert_true(sent <= 3 * 2 * (10 * 3 + 1));
    for (guint i = 0; i < MEMBERS; i++) {
        assert_int_equal(zk_client_state(client_of(h, i)), ZK_CLIENT_CONNECTED);
        assert_int_equal(h->members[i].events->len, 1);
    }
    assert_true(zk_server_session_alive(h->server, session));
    harness_free(h);
}

static void
test_zk_client_connection_loss_fails_requests_in_flight(void **state)
{
    /* Goal: when the connection breaks, the requests in flight fail with
     * CONNECTION_LOSS in order, and so do those queued behind a connect
     * attempt that fails; requests queued before a connect that succeeds are
     * sent, in order, once the session resumes (ClientCnxn's outgoing queue
     * and its cleanup on every connection failure). */
    (void)state;
    Harness *h = harness_new_with(43, NULL, KAFKA_TIMEOUT_NS);
    wait_established(h);
    Member *member = &h->members[0];
    guint64 session = zk_client_session_id(client_of(h, 0));
    sim_net_isolate(sim_world_net(h->world), member->id);
    Order order = {0};
    OrderTicket tickets[ORDER_MAX];
    submit_reads(h, &order, tickets, 0, 3);
    /* The read timeout (two thirds of the session timeout) ends the connection. */
    run_for(h, KAFKA_TIMEOUT_NS * 2 / 3 + SIM_NS_PER_S);
    assert_int_equal(order.count, 3);
    assert_completed_in_order(&order, 0, 3, ZK_CONNECTION_LOSS);
    assert_int_equal(count_events(member, "disconnected"), 1);
    assert_int_not_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_CONNECTED);
    /* Made while the partition lasts: queued behind a connect attempt whose
     * connection the partition breaks too, so they fail when that is found
     * out, at the heal. */
    submit_reads(h, &order, tickets, 3, 2);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(order.count, 3);
    sim_net_heal(sim_world_net(h->world));
    run_for(h, 5 * SIM_NS_PER_MS);
    assert_int_equal(order.count, 5);
    assert_completed_in_order(&order, 3, 5, ZK_CONNECTION_LOSS);
    /* Made while backing off before a connect that succeeds: sent in order
     * once the session resumes. */
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_BACKOFF);
    submit_reads(h, &order, tickets, 5, 4);
    run_for(h, 3 * SIM_NS_PER_S);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_CONNECTED);
    assert_int_equal(count_events(member, "established resumed"), 1);
    assert_int_equal(zk_client_session_id(client_of(h, 0)), session);
    assert_int_equal(order.count, 9);
    assert_completed_in_order(&order, 5, 9, ZK_OK);
    harness_free(h);
}

static void
test_zk_client_queued_requests_fail_when_connecting_times_out(void **state)
{
    /* Goal: requests queued while reconnecting fail with CONNECTION_LOSS when
     * the connect attempt gets no answer within the session timeout; after
     * the heal the client learns that its session expired. */
    (void)state;
    Harness *h = harness_new(47);
    wait_established(h);
    Member *member = &h->members[0];
    sim_net_isolate(sim_world_net(h->world), member->id);
    run_for(h, TIMEOUT_NS * 2 / 3 + SIM_NS_PER_S);
    assert_int_equal(count_events(member, "disconnected"), 1);
    Order order = {0};
    OrderTicket tickets[ORDER_MAX];
    submit_reads(h, &order, tickets, 0, 2);
    run_for(h, ZK_CLIENT_BACKOFF_NS_MAX);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_CONNECTING);
    assert_int_equal(order.count, 0);
    run_for(h, TIMEOUT_NS + SIM_NS_PER_S);
    assert_int_equal(order.count, 2);
    assert_completed_in_order(&order, 0, 2, ZK_CONNECTION_LOSS);
    assert_int_equal(count_events(member, "disconnected"), 1); /* once per connection */
    sim_net_heal(sim_world_net(h->world));
    run_for(h, 3 * SIM_NS_PER_S);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_EXPIRED);
    assert_int_equal(count_events(member, "expired"), 1);
    harness_free(h);
}

static void
test_zk_client_reconnects_within_backoff_and_keeps_watches(void **state)
{
    /* Goal: a connection the server drops is reopened within the backoff,
     * the session resumes, and a watch set before fires once, on the next
     * change only. */
    (void)state;
    Harness *h = harness_new(44);
    wait_established(h);
    Member *member = &h->members[0];
    guint64 session = zk_client_session_id(client_of(h, 0));
    assert_int_equal(create_text(h, 1, "/w", "0", 0), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_get(client_of(h, 0), "/w", TRUE, outcome_cb, &o));
    sim_net_close(sim_world_net(h->world), zk_server_node(h->server), member->id);
    run_for(h, 10 * SIM_NS_PER_MS);
    assert_int_equal(count_events(member, "disconnected"), 1);
    gint64 lost_ns = member->last_event_ns;
    run_for(h, ZK_CLIENT_BACKOFF_NS_MAX + 100 * SIM_NS_PER_MS);
    assert_int_equal(count_events(member, "established resumed"), 1);
    assert_true(member->last_event_ns - lost_ns <= ZK_CLIENT_BACKOFF_NS_MAX + 10 * SIM_NS_PER_MS);
    assert_int_equal(zk_client_session_id(client_of(h, 0)), session);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(member, "watch NodeDataChanged /w"), 0);
    assert_int_equal(set_text(h, 1, "/w", "1", -1), ZK_OK);
    assert_int_equal(set_text(h, 1, "/w", "2", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(member, "watch NodeDataChanged /w"), 1);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_client_expired_session_refuses_requests(void **state)
{
    /* Goal: a client that learns its session expired fails requests with
     * SESSION_EXPIRED (from a timer, not inside the call), has forgotten its
     * watches, and starts a new session only when asked. */
    (void)state;
    Harness *h = harness_new(45);
    wait_established(h);
    Member *member = &h->members[0];
    guint64 session = zk_client_session_id(client_of(h, 0));
    assert_int_equal(create_text(h, 1, "/w", "0", 0), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_get(client_of(h, 0), "/w", TRUE, outcome_cb, &o));
    sim_net_isolate(sim_world_net(h->world), member->id);
    run_for(h, 3 * TIMEOUT_NS);
    sim_net_heal(sim_world_net(h->world));
    run_for(h, 3 * SIM_NS_PER_S);
    assert_int_equal(count_events(member, "expired"), 1);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_EXPIRED);
    outcome_reset(&o);
    zk_client_get(client_of(h, 0), "/w", FALSE, outcome_cb, &o);
    assert_false(o.done);
    wait_done(h, &o);
    assert_int_equal(o.error, ZK_SESSION_EXPIRED);
    assert_int_equal(set_text(h, 1, "/w", "1", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(member, "watch NodeDataChanged /w"), 0);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_EXPIRED);
    zk_client_new_session(client_of(h, 0));
    RUN(h, &o, zk_client_get(client_of(h, 0), "/w", FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(count_events(member, "established new"), 2);
    assert_int_not_equal(zk_client_session_id(client_of(h, 0)), session);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_client_versioned_writes_race(void **state)
{
    /* Goal: of two clients setting a znode at the same expected version,
     * exactly one wins; the other gets BAD_VERSION and writes nothing. */
    (void)state;
    Harness *h = harness_new(46);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/v", "start", 0), ZK_OK);
    Outcome a = {0};
    Outcome b = {0};
    zk_client_set(client_of(h, 1), "/v", text("one"), 3, 0, outcome_cb, &a);
    zk_client_set(client_of(h, 2), "/v", text("two"), 3, 0, outcome_cb, &b);
    wait_done(h, &a);
    wait_done(h, &b);
    assert_true((a.error == ZK_OK) != (b.error == ZK_OK));
    const Outcome *winner = a.error == ZK_OK ? &a : &b;
    const Outcome *loser = a.error == ZK_OK ? &b : &a;
    assert_int_equal(loser->error, ZK_BAD_VERSION);
    assert_int_equal(winner->version, 1);
    ZkStat stat;
    g_autofree char *data = server_text(h, "/v", &stat);
    assert_string_equal(data, winner == &a ? "one" : "two");
    assert_int_equal(stat.version, 1);
    outcome_reset(&a);
    outcome_reset(&b);
    harness_free(h);
}

static void
free_in_callback_cb(void *owner, const ZkResult *result, void *arg)
{
    Member *m = owner;
    guint *calls = arg;
    (void)result;
    (*calls)++;
    zk_client_free(m->client);
    m->client = NULL;
}

static void
test_zk_client_free_delivers_nothing(void **state)
{
    /* Goal: after zk_client_free (outside or inside a callback) nothing
     * reaches the owner and no timer touches the freed client. */
    (void)state;
    Harness *h = harness_new(33);
    wait_established(h);
    Outcome o = {0};
    zk_client_get(client_of(h, 0), "/", TRUE, outcome_cb, &o);
    zk_client_free(h->members[0].client);
    h->members[0].client = NULL;
    guint calls = 0;
    for (guint i = 0; i < 3; i++)
        zk_client_get(client_of(h, 1), "/", FALSE, free_in_callback_cb, &calls);
    run_for(h, 30 * SIM_NS_PER_S);
    assert_false(o.done);
    assert_int_equal(calls, 1);
    assert_null(h->members[1].client);
    harness_free(h);
}

static void
test_zk_client_max_in_flight_pipelines_in_windows(void **state)
{
    /* Goal: with zookeeper.max.in.flight.requests = 3, twelve reads go out
     * three at a time, each window after the previous one's answers (a
     * round trip of 1 ms with a server that takes no time), in order. */
    (void)state;
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.request_ns = 0;
    cfg.byte_ns = 0;
    Harness *h = harness_new_with(46, &cfg, TIMEOUT_NS);
    wait_established(h);
    zk_client_set_max_in_flight(client_of(h, 0), 3);
    Order order = {0};
    OrderTicket tickets[ORDER_MAX];
    submit_reads(h, &order, tickets, 0, 12);
    run_for(h, 1500 * SIM_NS_PER_US);
    assert_int_equal(order.count, 3);
    run_for(h, SIM_NS_PER_MS);
    assert_int_equal(order.count, 6);
    run_for(h, 2 * SIM_NS_PER_MS);
    assert_int_equal(order.count, 12);
    assert_completed_in_order(&order, 0, 12, ZK_OK);
    /* Unlimited again: twelve more all answered within one round trip. */
    zk_client_set_max_in_flight(client_of(h, 0), 0);
    submit_reads(h, &order, tickets, 12, 12);
    run_for(h, 1500 * SIM_NS_PER_US);
    assert_int_equal(order.count, 24);
    assert_completed_in_order(&order, 12, 24, ZK_OK);
    harness_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zk_client_connects_and_sends_queued_requests),
        cmocka_unit_test(test_zk_client_replies_complete_in_order),
        cmocka_unit_test(test_zk_client_idle_session_kept_by_pings),
        cmocka_unit_test(test_zk_client_connection_loss_fails_requests_in_flight),
        cmocka_unit_test(test_zk_client_queued_requests_fail_when_connecting_times_out),
        cmocka_unit_test(test_zk_client_reconnects_within_backoff_and_keeps_watches),
        cmocka_unit_test(test_zk_client_expired_session_refuses_requests),
        cmocka_unit_test(test_zk_client_versioned_writes_race),
        cmocka_unit_test(test_zk_client_max_in_flight_pipelines_in_windows),
        cmocka_unit_test(test_zk_client_free_delivers_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
