/*
 * Consumer tests: the assign()-mode Kafka consumer of issue 8 against a real
 * simulated cluster (coordination node, controller, three brokers) fed by a
 * real producer. Assertions read the history's POLL and PROCESS ops and the
 * producer's acknowledgements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "consumer.h"
#include "history.h"
#include "producer.h"
#include "sim_net.h"
#include "sim_world.h"

#include <string.h>

#define TOPIC "t"
#define PRODUCER_PROCESS 1
#define CONSUMER_PROCESS 2
#define RECORD_BYTES 100

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Producer *producer;
    Consumer *consumer;
    GArray *acked;      /* ProducerResult with outcome OK */
    GArray *poll_sizes; /* guint: records per poll */
    guint64 counter;
} Fixture;

/* A record as the history saw it. */
typedef struct {
    gint32 partition;
    gint64 offset;
    guint64 value;
} SeenRecord;

static void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    cluster_check_invariants(f->cluster);
    if (f->consumer != NULL)
        consumer_check_invariants(f->consumer);
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

static Fixture *
fixture_new(guint64 seed, guint partitions, gint16 acks)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig cluster_config;
    cluster_config_init(&cluster_config);
    cluster_config.broker.replica_lag_time_max_ms = 1000;
    cluster_config.broker.zookeeper_session_timeout_ms = 6000;
    cluster_config.broker.replica_high_watermark_checkpoint_interval_ms = 1000;
    f->cluster = cluster_new(f->world, &cluster_config, f->history);
    f->acked = g_array_new(FALSE, FALSE, sizeof(ProducerResult));
    f->poll_sizes = g_array_new(FALSE, FALSE, sizeof(guint));
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig config;
    producer_config_init(&config);
    config.acks = acks;
    config.enable_idempotence = acks == -1;
    f->producer = producer_new(f->world, "producer", PRODUCER_PROCESS, bootstrap, &config,
                               f->history);
    run_for(f, 1 * SIM_NS_PER_S);
    return f;
}

static void
fixture_free(Fixture *f)
{
    consumer_free(f->consumer);
    producer_free(f->producer);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_array_free(f->acked, TRUE);
    g_array_free(f->poll_sizes, TRUE);
    g_free(f);
}

static void
poll_cb(Consumer *consumer, const ConsumerRecord *records, guint n, void *user_data)
{
    Fixture *f = user_data;
    (void)consumer;
    (void)records;
    g_array_append_val(f->poll_sizes, n);
}

/* A consumer assigned to partitions 0..n-1, polling every 5 ms with 1 ms of
 * processing. */
static void
start_consumer(Fixture *f, const ConsumerConfig *config, guint n_partitions)
{
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    f->consumer = consumer_new(f->world, "consumer", CONSUMER_PROCESS, bootstrap, config,
                               f->history);
    gint32 partitions[8];
    assert_true(n_partitions <= G_N_ELEMENTS(partitions));
    for (guint i = 0; i < n_partitions; i++)
        partitions[i] = (gint32)i;
    consumer_assign(f->consumer, TOPIC, partitions, n_partitions);
    SimDist interval = SIM_DIST_CONST(5 * SIM_NS_PER_MS);
    SimDist processing = SIM_DIST_CONST(1 * SIM_NS_PER_MS);
    consumer_start_polling(f->consumer, &interval, &processing, poll_cb, f);
}

static void
result_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    Fixture *f = user_data;
    (void)producer;
    if (result->outcome == HISTORY_OK)
        g_array_append_val(f->acked, *result);
}

static void
send_many(Fixture *f, guint n, guint n_partitions)
{
    for (guint i = 0; i < n; i++) {
        guint64 value = ((guint64)PRODUCER_PROCESS << 40) | ++f->counter;
        producer_send(f->producer, TOPIC, (gint32)(f->counter % n_partitions), 0, value,
                      RECORD_BYTES, result_cb, f);
    }
}

/* The consumer's ops of kind `fn` for `partition`, in history order. */
static GArray *
seen(const Fixture *f, HistoryFn fn, gint32 partition)
{
    const GArray *ops = history_ops(f->history);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(SeenRecord));
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->process != CONSUMER_PROCESS || op->fn != fn || op->partition != partition)
            continue;
        assert_int_equal(op->type, HISTORY_OK);
        SeenRecord record = {op->partition, op->offset, op->value};
        g_array_append_val(out, record);
    }
    return out;
}

/* The acknowledged value at (partition, offset), or 0. */
static guint64
acked_value(const Fixture *f, gint32 partition, gint64 offset)
{
    for (guint i = 0; i < f->acked->len; i++) {
        const ProducerResult *r = &g_array_index(f->acked, ProducerResult, i);
        if (r->partition == partition && r->offset == offset)
            return r->value;
    }
    return 0;
}

/* Asserts the consumer saw (fn) exactly offsets [first, first + count) of
 * `partition`, each once, in order, each with its acknowledged value. */
static void
assert_seen_exactly(const Fixture *f, HistoryFn fn, gint32 partition, gint64 first, guint count)
{
    g_autoptr(GArray) records = seen(f, fn, partition);
    assert_int_equal(records->len, count);
    for (guint i = 0; i < records->len; i++) {
        const SeenRecord *record = &g_array_index(records, SeenRecord, i);
        assert_int_equal(record->offset, first + (gint64)i);
        assert_int_equal(record->value, acked_value(f, partition, record->offset));
    }
}

static guint
acked_in(const Fixture *f, gint32 partition)
{
    guint count = 0;
    for (guint i = 0; i < f->acked->len; i++)
        count += g_array_index(f->acked, ProducerResult, i).partition == partition;
    return count;
}

/* ---- tests ---- */

/* consumer_config_init gives Kafka's defaults. */
static void
test_consumer_config_defaults(void **unused)
{
    (void)unused;
    ConsumerConfig config;
    consumer_config_init(&config);
    assert_int_equal(config.fetch_min_bytes, 1);
    assert_int_equal(config.fetch_max_wait_ms, 500);
    assert_int_equal(config.max_partition_fetch_bytes, 1048576);
    assert_int_equal(config.fetch_max_bytes, 52428800);
    assert_int_equal(config.max_poll_records, 500);
    assert_int_equal(config.auto_offset_reset, CONSUMER_RESET_LATEST);
    assert_int_equal(config.request_timeout_ms, 30000);
    assert_int_equal(config.retry_backoff_ms, 100);
    assert_int_equal(config.metadata_max_age_ms, 300000);
    assert_int_equal(config.isolation_level, 0);
}

/* Every record acknowledged with acks=all is polled and processed exactly
 * once, in offset order, with its value, on every assigned partition. */
static void
test_consumer_reads_acknowledged_exactly_once_in_order(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(11, 2, -1);
    ConsumerConfig config;
    consumer_config_init(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    start_consumer(f, &config, 2);
    run_for(f, 500 * SIM_NS_PER_MS);
    for (guint round = 0; round < 4; round++) {
        send_many(f, 50, 2);
        run_for(f, 300 * SIM_NS_PER_MS);
    }
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked->len, 200);
    for (gint32 partition = 0; partition < 2; partition++) {
        assert_seen_exactly(f, HISTORY_FN_POLL, partition, 0, acked_in(f, partition));
        assert_seen_exactly(f, HISTORY_FN_PROCESS, partition, 0, acked_in(f, partition));
        assert_int_equal(consumer_position(f->consumer, TOPIC, partition), acked_in(f, partition));
    }
    fixture_free(f);
}

/* Records the leader appended but the followers have not replicated (the HW
 * is stalled) are not returned until the HW moves past them. */
static void
test_consumer_never_returns_above_hw(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(12, 1, 1);
    ConsumerConfig config;
    consumer_config_init(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    start_consumer(f, &config, 1);
    send_many(f, 10, 1);
    /* Up to fetch.max.wait.ms: the broker's delayed fetch wakes on appends,
     * not on HW moves alone. */
    run_for(f, 1 * SIM_NS_PER_S);
    assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 10);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            sim_node_pause(f->world, broker_node(cluster_broker(f->cluster, b)));
    }
    /* Within replica.lag.time.max.ms, so the ISR keeps the paused followers. */
    send_many(f, 20, 1);
    run_for(f, 400 * SIM_NS_PER_MS);
    assert_int_equal(f->acked->len, 30); /* acks=1: the leader has them */
    assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 10);
    assert_int_equal(consumer_position(f->consumer, TOPIC, 0), 10);
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            sim_node_resume(f->world, broker_node(cluster_broker(f->cluster, b)));
    }
    run_for(f, 2 * SIM_NS_PER_S);
    assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 30);
    fixture_free(f);
}

/* No poll returns more than max.poll.records, and full polls happen when a
 * backlog waits. */
static void
test_consumer_max_poll_records_bounds_polls(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(13, 1, -1);
    send_many(f, 100, 1);
    run_for(f, 500 * SIM_NS_PER_MS);
    ConsumerConfig config;
    consumer_config_init(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config.max_poll_records = 7;
    start_consumer(f, &config, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 100);
    guint full = 0;
    for (guint i = 0; i < f->poll_sizes->len; i++) {
        guint n = g_array_index(f->poll_sizes, guint, i);
        assert_true(n >= 1 && n <= 7);
        full += n == 7;
    }
    assert_true(full >= 100 / 7);
    fixture_free(f);
}

/* auto.offset.reset: earliest reads the backlog, latest only what comes
 * after the consumer starts, none stops the partition with an error. */
static void
test_consumer_auto_offset_reset(void **unused)
{
    (void)unused;
    static const struct {
        ConsumerOffsetReset reset;
        gint64 first;
        guint count;
        guint64 reset_errors;
    } cases[] = {
        {CONSUMER_RESET_EARLIEST, 0, 40, 0},
        {CONSUMER_RESET_LATEST, 30, 10, 0},
        {CONSUMER_RESET_NONE, 0, 0, 1},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        Fixture *f = fixture_new(14, 1, -1);
        send_many(f, 30, 1);
        run_for(f, 500 * SIM_NS_PER_MS);
        ConsumerConfig config;
        consumer_config_init(&config);
        config.auto_offset_reset = cases[c].reset;
        start_consumer(f, &config, 1);
        run_for(f, 500 * SIM_NS_PER_MS);
        send_many(f, 10, 1);
        run_for(f, 1 * SIM_NS_PER_S);
        assert_int_equal(f->acked->len, 40);
        assert_seen_exactly(f, HISTORY_FN_POLL, 0, cases[c].first, cases[c].count);
        ConsumerStats stats;
        consumer_stats(f->consumer, &stats);
        assert_int_equal(stats.reset_errors, cases[c].reset_errors);
        fixture_free(f);
    }
}

/* A leader crash mid-consumption: the consumer moves to the new leader and
 * continues from its position, with no gap and no repeat. */
static void
test_consumer_continues_after_leader_crash(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(15, 1, -1);
    send_many(f, 100, 1);
    run_for(f, 500 * SIM_NS_PER_MS);
    ConsumerConfig config;
    consumer_config_init(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config.max_poll_records = 10;
    start_consumer(f, &config, 1);
    run_for(f, 30 * SIM_NS_PER_MS);
    gint64 position = consumer_position(f->consumer, TOPIC, 0);
    assert_true(position > 0 && position < 100);
    gint32 old_leader = cluster_leader(f->cluster, TOPIC, 0);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, old_leader)));
    run_for(f, 200 * SIM_NS_PER_MS);
    send_many(f, 50, 1);
    run_for(f, 10 * SIM_NS_PER_S);
    gint32 new_leader = cluster_leader(f->cluster, TOPIC, 0);
    assert_true(new_leader > 0 && new_leader != old_leader);
    assert_int_equal(f->acked->len, 150);
    assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 150);
    assert_seen_exactly(f, HISTORY_FN_PROCESS, 0, 0, 150);
    ConsumerStats stats;
    consumer_stats(f->consumer, &stats);
    assert_true(stats.fetch_errors > 0);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consumer_config_defaults),
        cmocka_unit_test(test_consumer_reads_acknowledged_exactly_once_in_order),
        cmocka_unit_test(test_consumer_never_returns_above_hw),
        cmocka_unit_test(test_consumer_max_poll_records_bounds_polls),
        cmocka_unit_test(test_consumer_auto_offset_reset),
        cmocka_unit_test(test_consumer_continues_after_leader_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
