/*
 * Unit tests for producer_sender, Kafka's Sender, through the producer's
 * public API against a real simulated cluster (producer_fixture.h): the
 * in-flight bound max.in.flight.requests.per.connection, retries after
 * retry.backoff.ms, no retry with retries=0, retries ended by
 * delivery.timeout.ms, order across a retry with one
 * request in flight or with idempotence and reordering without either, and
 * sequence numbers kept across retries under one producer id.
 *
 * Every test checks the producer's and the cluster's invariants after every
 * event (producer_check_invariants runs producer_sender_check_invariants).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "config_fixture.h"
#include "producer_fixture.h"

#define LINK_LATENCY_MS 200

static void
config_one_record_batches(ProducerConfig *config, gboolean idempotent, gint32 max_in_flight)
{
    kconfig_bind_producer_defaults(config);
    config->enable_idempotence = idempotent;
    config->enable_idempotence_explicit = TRUE;
    config->max_in_flight_requests_per_connection = max_in_flight;
    config->request_timeout_ms = 1000;
    config->batch_size = 0; /* one record per batch */
}

/* The produce requests sent since `before`. */
static guint64
requests_since(const Fixture *f, guint64 before)
{
    return requests_sent(f) - before;
}

static void
test_producer_sender_in_flight_bound(void **state)
{
    /* Goal: no more than max.in.flight.requests.per.connection produce
     * requests wait for an answer on the leader's connection; the rest go as
     * answers come back, and every record is acknowledged in order. */
    (void)state;
    static const gint32 limits[] = {1, 2, 5};
    for (guint i = 0; i < G_N_ELEMENTS(limits); i++) {
        ProducerConfig config;
        config_one_record_batches(&config, TRUE, limits[i]);
        Fixture *f = fixture_new(60 + i, 1, &config);
        warm_up(f);
        sim_net_set_link(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0),
                         SIM_DIST_CONST(LINK_LATENCY_MS * SIM_NS_PER_MS), 0, TRUE);
        guint64 before = requests_sent(f);
        send_many(f, 10, 0);
        /* Less than a round trip: nothing has been answered yet. */
        run_for(f, (2 * LINK_LATENCY_MS - 50) * SIM_NS_PER_MS);
        assert_int_equal(requests_since(f, before), (guint64)limits[i]);
        run_for(f, 10 * SIM_NS_PER_S);
        assert_int_equal(requests_since(f, before), 10);
        g_autoptr(GArray) views = op_views(f);
        assert_int_equal(count_ops(views, HISTORY_OK, -1), 11);
        g_autoptr(GArray) log = final_values(f, 0);
        assert_int_equal(log->len, 11);
        assert_int_equal(inversions(log), 0);
        fixture_free(f);
    }
}

static void
test_producer_sender_retry_waits_for_backoff(void **state)
{
    /* Goal: a batch whose request timed out is sent again only after
     * retry.backoff.ms (Kafka's RecordAccumulator backs a retried batch off),
     * and then succeeds. */
    (void)state;
    ProducerConfig config;
    config_one_record_batches(&config, FALSE, 5);
    config.retry_backoff_ms = 700;
    Fixture *f = fixture_new(63, 1, &config);
    warm_up(f);
    guint64 before = requests_sent(f);
    sim_net_lose_next(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0), 1);
    guint64 value = send_one(f, TOPIC, 0, 0);
    /* The request times out at 1000 ms; the retry is due 700 ms later. */
    run_for(f, 1650 * SIM_NS_PER_MS);
    assert_int_equal(requests_since(f, before), 1);
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    assert_int_equal(stats.retries, 1);
    assert_int_equal(producer_attempt_errors(f->producer, KAFKA_ERROR_REQUEST_TIMED_OUT), 1);
    run_for(f, 1000 * SIM_NS_PER_MS);
    assert_int_equal(requests_since(f, before), 2);
    g_autoptr(GArray) views = op_views(f);
    const OpView *op = op_by_value(views, value);
    assert_true(op->completed);
    assert_int_equal(op->type, HISTORY_OK);
    fixture_free(f);
}

static void
test_producer_sender_no_retries_reports_unknown(void **state)
{
    /* Goal: with retries=0 a timed-out request is not sent again and its
     * records complete as unknown (INFO, REQUEST_TIMED_OUT): it may have
     * been written. */
    (void)state;
    ProducerConfig config;
    config_one_record_batches(&config, FALSE, 5);
    config.retries = 0;
    Fixture *f = fixture_new(64, 1, &config);
    warm_up(f);
    guint64 before = requests_sent(f);
    sim_net_lose_next(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0), 1);
    guint64 value = send_one(f, TOPIC, 0, 0);
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(requests_since(f, before), 1);
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    assert_int_equal(stats.retries, 0);
    g_autoptr(GArray) views = op_views(f);
    const OpView *op = op_by_value(views, value);
    assert_true(op->completed);
    assert_int_equal(op->type, HISTORY_INFO);
    assert_int_equal(op->error, KAFKA_ERROR_REQUEST_TIMED_OUT);
    assert_int_equal(producer_pending(f->producer), 0);
    fixture_free(f);
}

typedef struct {
    gboolean idempotent;
    gint32 max_in_flight;
    guint inversions; /* pairs out of order in the log */
} OrderCase;

static void
test_producer_sender_order_across_a_retry(void **state)
{
    /* Goal: when the first of several batches is lost and retried, the log
     * keeps the send order with one request in flight or with idempotence,
     * and without either the retry lands after the later batch (Kafka's
     * documented reordering with max.in.flight > 1). */
    (void)state;
    static const OrderCase cases[] = {
        {FALSE, 5, 1},
        {FALSE, 1, 0},
        {TRUE, 5, 0},
        {TRUE, 1, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        ProducerConfig config;
        config_one_record_batches(&config, cases[i].idempotent, cases[i].max_in_flight);
        Fixture *f = fixture_new(65 + i, 1, &config);
        warm_up(f);
        sim_net_lose_next(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0),
                          1);
        send_many(f, 2, 0);
        run_for(f, 5 * SIM_NS_PER_S);
        g_autoptr(GArray) views = op_views(f);
        assert_int_equal(count_ops(views, HISTORY_OK, -1), 3);
        g_autoptr(GArray) log = final_values(f, 0);
        assert_int_equal(log->len, 3);
        assert_int_equal(inversions(log), cases[i].inversions);
        fixture_free(f);
    }
}

static void
test_producer_sender_sequences_survive_retries(void **state)
{
    /* Goal: with idempotence and five requests in flight, batches lost on
     * the way and answers lost on the way back are retried under the same
     * producer id and sequences: the log holds each record once, in send
     * order, and the producer never needed a new id or epoch. */
    (void)state;
    ProducerConfig config;
    config_one_record_batches(&config, TRUE, 5);
    Fixture *f = fixture_new(70, 1, &config);
    warm_up(f);
    gint64 producer_id_before = producer_id(f->producer);
    SimNet *net = sim_world_net(f->world);
    for (guint round = 0; round < 4; round++) {
        if (round % 2 == 0)
            sim_net_lose_next(net, producer_node(f->producer), leader_node(f, 0), 1);
        else
            sim_net_lose_next(net, leader_node(f, 0), producer_node(f->producer), 1);
        send_many(f, 5, 0);
        run_for(f, 4 * SIM_NS_PER_S);
    }
    g_autoptr(GArray) views = op_views(f);
    assert_int_equal(count_ops(views, HISTORY_OK, -1), 21);
    g_autoptr(GArray) log = final_values(f, 0);
    assert_int_equal(log->len, 21);
    for (guint64 n = 1; n <= 21; n++)
        assert_int_equal(occurrences(log, value_of(n)), 1);
    assert_int_equal(inversions(log), 0);
    assert_int_equal(producer_id(f->producer), producer_id_before);
    assert_int_equal(producer_epoch(f->producer), 0);
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    assert_int_equal(stats.producer_id_resets, 0);
    assert_true(stats.retries >= 4);
    fixture_free(f);
}

static void
test_producer_sender_delivery_timeout_ends_retries(void **state)
{
    /* Goal: a batch put back for a retry after its request timed out ends
     * at delivery.timeout.ms from its creation although retries are left,
     * and completes as unknown (it was sent, so it may have been written). */
    (void)state;
    ProducerConfig config;
    config_one_record_batches(&config, FALSE, 1);
    config.request_timeout_ms = 500;
    config.retry_backoff_ms = 100;
    config.delivery_timeout_ms = 1700;
    config.delivery_timeout_ms_explicit = TRUE;
    Fixture *f = fixture_new(71, 1, &config);
    warm_up(f);
    guint64 before = requests_sent(f);
    /* Requests reach nobody; the connection itself is not refused. */
    sim_net_cut_one_way(sim_world_net(f->world), producer_node(f->producer), leader_node(f, 0));
    gint64 start = sim_now_ns(f->world);
    guint64 value = send_one(f, TOPIC, 0, 0);
    run_for(f, 5 * SIM_NS_PER_S);
    g_autoptr(GArray) views = op_views(f);
    const OpView *op = op_by_value(views, value);
    assert_true(op->completed);
    assert_int_equal(op->type, HISTORY_INFO);
    assert_int_equal(op->error, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    assert_int_equal(op->complete_ns - start, 1700 * SIM_NS_PER_MS);
    /* The retry waits for a ready connection, which a new one to a host that
     * cannot be reached never becomes (Kafka's NetworkClient.ready), so it
     * is queued again but never sent. */
    assert_int_equal(requests_since(f, before), 1);
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    assert_true(stats.retries >= 1);
    assert_int_equal(producer_pending(f->producer), 0);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_producer_sender_in_flight_bound),
        cmocka_unit_test(test_producer_sender_retry_waits_for_backoff),
        cmocka_unit_test(test_producer_sender_no_retries_reports_unknown),
        cmocka_unit_test(test_producer_sender_order_across_a_retry),
        cmocka_unit_test(test_producer_sender_sequences_survive_retries),
        cmocka_unit_test(test_producer_sender_delivery_timeout_ends_retries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
