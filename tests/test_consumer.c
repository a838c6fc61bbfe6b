/*
 * Consumer tests: the Kafka consumer of issue 8 (assign() mode, and the
 * processing modes of a group member) against a real simulated cluster
 * (coordination node, controller, three brokers) fed by a real producer.
 * Assertions read the history's POLL, PROCESS and COMMIT ops and the
 * producer's acknowledgements.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "consumer.h"
#include "history.h"
#include "kafka_error.h"
#include "plog.h"
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

/* A cluster whose topic has `topic` settings (NULL: the brokers'), and
 * brokers checking retention every `retention_check_ms` (0: Kafka's default). */
static Fixture *
fixture_new_with(guint64 seed, guint partitions, gint16 acks, const TopicConfig *topic,
                 gint64 retention_check_ms)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig cluster_config;
    fixture_cluster_config(&cluster_config);
    cluster_config.broker.replica_lag_time_max_ms = 1000;
    cluster_config.broker.zookeeper_session_timeout_ms = 6000;
    cluster_config.broker.replica_high_watermark_checkpoint_interval_ms = 1000;
    if (retention_check_ms > 0)
        cluster_config.broker.log_retention_check_interval_ms = retention_check_ms;
    f->cluster = cluster_new(f->world, &cluster_config, f->history);
    f->acked = g_array_new(FALSE, FALSE, sizeof(ProducerResult));
    f->poll_sizes = g_array_new(FALSE, FALSE, sizeof(guint));
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, topic, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    config.acks = acks;
    config.enable_idempotence = acks == -1;
    f->producer = producer_new(f->world, "producer", PRODUCER_PROCESS, bootstrap, &config,
                               f->history);
    run_for(f, 1 * SIM_NS_PER_S);
    return f;
}

static Fixture *
fixture_new(guint64 seed, guint partitions, gint16 acks)
{
    return fixture_new_with(seed, partitions, acks, NULL, 0);
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
    const HistoryOpArray *ops = history_ops(f->history);
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

/* The consumer's registry defaults (kconfig_bind_consumer_defaults) are Kafka's. */
static void
test_consumer_config_defaults(void **unused)
{
    (void)unused;
    ConsumerConfig config;
    kconfig_bind_consumer_defaults(&config);
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
    assert_int_equal(config.session_timeout_ms, 45000);
    assert_int_equal(config.heartbeat_interval_ms, 3000);
    assert_int_equal(config.max_poll_interval_ms, 300000);
    assert_true(config.enable_auto_commit);
    assert_int_equal(config.auto_commit_interval_ms, 5000);
    assert_int_equal(config.partition_assignment_strategy, ASSIGNOR_RANGE);
    assert_int_equal(config.default_api_timeout_ms, 60000);
    assert_int_equal(config.processing_mode, CONSUMER_PROCESSING_AUTO);
    assert_true(config.validate_positions); /* KIP-320, Kafka 2.3+ */
}

/* Every record acknowledged with acks=all is polled and processed exactly
 * once, in offset order, with its value, on every assigned partition. */
static void
test_consumer_reads_acknowledged_exactly_once_in_order(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(11, 2, -1);
    ConsumerConfig config;
    kconfig_bind_consumer_defaults(&config);
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
    kconfig_bind_consumer_defaults(&config);
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
    kconfig_bind_consumer_defaults(&config);
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
        kconfig_bind_consumer_defaults(&config);
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

/* The consumer's RESET ops, in history order. */
static GArray *
resets_of(const Fixture *f)
{
    const HistoryOpArray *ops = history_ops(f->history);
    GArray *out = g_array_new(FALSE, FALSE, sizeof(HistoryOp));
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_RESET && op->process == CONSUMER_PROCESS)
            g_array_append_val(out, *op);
    }
    return out;
}

/* A consumer paused while retention deletes the segment of its position:
 * its next fetch gets OFFSET_OUT_OF_RANGE and auto.offset.reset applies —
 * earliest moves to the log start, latest to the high watermark, none
 * raises to the application, whose loop stops. The fetch it had waiting at
 * the broker when it paused is answered once the HW moves past its
 * position, with the first records sent; it reads that answer when it
 * resumes, as a frozen Kafka consumer reads what waited in its socket, so
 * its position at the reset is past them. */
static void
test_consumer_resets_below_log_start(void **unused)
{
    (void)unused;
    static const struct {
        ConsumerOffsetReset reset;
        HistoryType outcome;
        gboolean to_log_start; /* else to the HW */
    } cases[] = {
        {CONSUMER_RESET_EARLIEST, HISTORY_OK, TRUE},
        {CONSUMER_RESET_LATEST, HISTORY_OK, FALSE},
        {CONSUMER_RESET_NONE, HISTORY_FAIL, FALSE},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        TopicConfig topic = {.min_insync_replicas = 1};
        kconfig_bind_log_defaults(&topic.log);
        topic.log.segment_bytes = 1024;
        topic.log.retention_ms = 2000;
        Fixture *f = fixture_new_with(16, 1, 1, &topic, 500);
        ConsumerConfig config;
        kconfig_bind_consumer_defaults(&config);
        config.auto_offset_reset = cases[c].reset;
        start_consumer(f, &config, 1);
        consumer_seek(f->consumer, TOPIC, 0, 0);
        send_many(f, 20, 1);
        run_for(f, 1 * SIM_NS_PER_S);
        assert_seen_exactly(f, HISTORY_FN_POLL, 0, 0, 20);
        sim_node_pause(f->world, consumer_node(f->consumer));
        for (int i = 0; i < 10; i++) {
            send_many(f, 10, 1);
            run_for(f, 500 * SIM_NS_PER_MS);
        }
        Plog *log = broker_partition_log(cluster_broker(f->cluster, cluster_leader(f->cluster, TOPIC, 0)),
                                         TOPIC, 0);
        gint64 log_start = plog_log_start_offset(log);
        assert_true(log_start > 20);
        sim_node_resume(f->world, consumer_node(f->consumer));
        run_for(f, 1 * SIM_NS_PER_S);
        g_autoptr(GArray) resets = resets_of(f);
        assert_int_equal(resets->len, 1);
        const HistoryOp *reset = &g_array_index(resets, HistoryOp, 0);
        assert_int_equal(reset->type, cases[c].outcome);
        gint64 position = (gint64)reset->value;
        assert_true(position >= 20 && position < log_start);
        assert_int_equal(reset->error, KAFKA_ERROR_OFFSET_OUT_OF_RANGE);
        ConsumerStats stats;
        consumer_stats(f->consumer, &stats);
        g_autoptr(GArray) polls = seen(f, HISTORY_FN_POLL, 0);
        /* Every record below its position was polled, in order, once. */
        assert_true(polls->len >= (guint)position);
        for (guint i = 0; i < (guint)position; i++)
            assert_int_equal(g_array_index(polls, SeenRecord, i).offset, i);
        if (cases[c].outcome == HISTORY_FAIL) {
            assert_int_equal(reset->offset, -1);
            assert_int_equal(stats.reset_errors, 1);
            assert_int_equal(stats.app_failures, 1);
            assert_int_equal(polls->len, (guint)position);
        } else if (cases[c].to_log_start) {
            assert_int_equal(reset->offset, log_start);
            assert_int_equal(g_array_index(polls, SeenRecord, position).offset, log_start);
        } else {
            assert_int_equal(reset->offset, 120);
            assert_int_equal(polls->len, (guint)position);
        }
        fixture_free(f);
    }
}

/* A leader crash mid-consumption: the consumer moves to the new leader and
 * continues from its position, with no gap and no repeat; validating its
 * position there (KIP-320) finds no truncation, and without validation no
 * OffsetsForLeaderEpoch is sent. */
static void
test_consumer_continues_after_leader_crash(void **unused)
{
    (void)unused;
    for (int validate = 0; validate < 2; validate++) {
        Fixture *f = fixture_new(15, 1, -1);
        send_many(f, 100, 1);
        run_for(f, 500 * SIM_NS_PER_MS);
        ConsumerConfig config;
        kconfig_bind_consumer_defaults(&config);
        config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
        config.max_poll_records = 10;
        config.validate_positions = validate;
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
        if (validate)
            assert_true(stats.validations > 0);
        else
            assert_int_equal(stats.validations, 0);
        assert_int_equal(stats.truncations, 0);
        fixture_free(f);
    }
}

/* How often each acknowledged value was processed, and the anomalies. */
typedef struct {
    guint never;       /* acknowledged, never processed */
    guint twice;       /* processed more than once */
    guint commits_ok;
    guint commits_not_ok;
} Delivery;

static Delivery
delivery(const Fixture *f)
{
    Delivery out = {0};
    g_autoptr(GHashTable) processed = g_hash_table_new(g_int64_hash, g_int64_equal);
    const HistoryOpArray *ops = history_ops(f->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->process != CONSUMER_PROCESS)
            continue;
        if (op->fn == HISTORY_FN_COMMIT && op->type == HISTORY_OK)
            out.commits_ok++;
        else if (op->fn == HISTORY_FN_COMMIT)
            out.commits_not_ok++;
        if (op->fn != HISTORY_FN_PROCESS)
            continue;
        guint count = GPOINTER_TO_UINT(g_hash_table_lookup(processed, &op->value));
        g_hash_table_replace(processed, (gpointer)&op->value, GUINT_TO_POINTER(count + 1));
    }
    for (guint i = 0; i < f->acked->len; i++) {
        const ProducerResult *r = &g_array_index(f->acked, ProducerResult, i);
        guint count = GPOINTER_TO_UINT(g_hash_table_lookup(processed, &r->value));
        out.never += count == 0;
        out.twice += count > 1;
    }
    return out;
}

typedef enum {
    CRASH_DURING_PROCESSING, /* 100 ms into the third poll's 200 ms of processing */
    CRASH_AFTER_PROCESSING,  /* as the third poll's processing ends */
} CrashPoint;

/* A group member with `mode` processes 100 records, ten per poll with 200 ms
 * of processing each, and crashes at `point` of its third poll; it restarts
 * as a new member and resumes from the committed offsets. */
static Delivery
crash_member(ConsumerProcessingMode mode, CrashPoint point)
{
    Fixture *f = fixture_new(31, 1, -1);
    send_many(f, 100, 1);
    run_for(f, 500 * SIM_NS_PER_MS);
    assert_int_equal(f->acked->len, 100);
    ConsumerConfig config;
    kconfig_bind_consumer_defaults(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config.max_poll_records = 10;
    config.enable_auto_commit = FALSE;
    config.processing_mode = mode;
    config.session_timeout_ms = 6000;
    config.heartbeat_interval_ms = 1000;
    config.max_poll_interval_ms = 10000;
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    f->consumer = consumer_new(f->world, "consumer", CONSUMER_PROCESS, bootstrap, &config,
                               f->history);
    const char *topics[] = {TOPIC};
    consumer_subscribe(f->consumer, "g", topics, 1);
    SimDist interval = SIM_DIST_CONST(5 * SIM_NS_PER_MS);
    /* 20 ms per record: a poll of 10 takes 200 ms. */
    SimDist processing = SIM_DIST_CONST(20 * SIM_NS_PER_MS);
    consumer_start_polling(f->consumer, &interval, &processing, poll_cb, f);
    ConsumerStats stats = {0};
    while (stats.polls < 3) {
        assert_true(sim_world_step(f->world));
        consumer_stats(f->consumer, &stats);
    }
    if (point == CRASH_DURING_PROCESSING) {
        /* Halfway through the third poll's records: 5 processed, 5 not. */
        run_for(f, 110 * SIM_NS_PER_MS);
    } else {
        /* The very event that ends the processing (and, process-then-commit,
         * sends its commit, which the crash loses with the connection). */
        while (stats.records_processed < 30) {
            assert_true(sim_world_step(f->world));
            consumer_stats(f->consumer, &stats);
        }
    }
    consumer_stats(f->consumer, &stats);
    assert_int_equal(stats.records_processed, point == CRASH_DURING_PROCESSING ? 25 : 30);
    sim_node_crash(f->world, consumer_node(f->consumer));
    run_for(f, 1 * SIM_NS_PER_S);
    sim_node_restart(f->world, consumer_node(f->consumer));
    run_for(f, 30 * SIM_NS_PER_S);
    assert_int_equal(consumer_position(f->consumer, TOPIC, 0), 100);
    Delivery out = delivery(f);
    assert_true(out.commits_ok > 0);
    fixture_free(f);
    return out;
}

/* commit-before-processing is at most once: a crash while a poll's records
 * are processed skips those not processed yet; no crash point makes it
 * process a record twice. */
static void
test_consumer_commit_before_processing_skips_on_crash(void **unused)
{
    (void)unused;
    Delivery during = crash_member(CONSUMER_COMMIT_BEFORE_PROCESSING, CRASH_DURING_PROCESSING);
    assert_int_equal(during.never, 5);
    assert_int_equal(during.twice, 0);
    Delivery after = crash_member(CONSUMER_COMMIT_BEFORE_PROCESSING, CRASH_AFTER_PROCESSING);
    assert_int_equal(after.never, 0);
    assert_int_equal(after.twice, 0);
}

/* process-then-commit is at least once: a crash before a poll's commit
 * processes again the records it had processed (all of them after the
 * processing, half of them during it); no crash point makes it skip a
 * record. */
static void
test_consumer_process_then_commit_repeats_on_crash(void **unused)
{
    (void)unused;
    Delivery after = crash_member(CONSUMER_PROCESS_THEN_COMMIT, CRASH_AFTER_PROCESSING);
    assert_int_equal(after.never, 0);
    assert_int_equal(after.twice, 10);
    Delivery during = crash_member(CONSUMER_PROCESS_THEN_COMMIT, CRASH_DURING_PROCESSING);
    assert_int_equal(during.never, 0);
    assert_int_equal(during.twice, 5);
}

/* process-then-commit-async is at least once too: the crash as the third
 * poll's processing ends loses the commitAsync just sent, unanswered, so the
 * group resumes from the last commit that was answered and the third poll's
 * records are processed again (duplicate consumption), none skipped. */
static void
test_consumer_process_then_commit_async_repeats_on_crash(void **unused)
{
    (void)unused;
    Delivery after = crash_member(CONSUMER_PROCESS_THEN_COMMIT_ASYNC, CRASH_AFTER_PROCESSING);
    assert_int_equal(after.never, 0);
    assert_int_equal(after.twice, 10);
    assert_true(after.commits_not_ok > 0);
    Delivery during = crash_member(CONSUMER_PROCESS_THEN_COMMIT_ASYNC, CRASH_DURING_PROCESSING);
    assert_int_equal(during.never, 0);
    assert_int_equal(during.twice, 5);
}

/* Polls that began while one of the consumer's commits was outstanding
 * (invoked, not yet answered). */
static guint
polls_during_commits(const Fixture *f)
{
    const HistoryOpArray *ops = history_ops(f->history);
    guint out = 0;
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *poll = &g_array_index(ops, HistoryOp, i);
        if (poll->process != CONSUMER_PROCESS || poll->fn != HISTORY_FN_POLL)
            continue;
        for (guint j = 0; j < ops->len; j++) {
            const HistoryOp *commit = &g_array_index(ops, HistoryOp, j);
            if (commit->process == CONSUMER_PROCESS && commit->fn == HISTORY_FN_COMMIT &&
                commit->invoke_ns < poll->invoke_ns && poll->invoke_ns < commit->complete_ns) {
                out++;
                break;
            }
        }
    }
    return out;
}

/* commitSync blocks the poll loop until its answer; commitAsync does not:
 * with it, polls happen while the last commit is still on its way. */
static void
test_consumer_commit_async_does_not_block_poll(void **unused)
{
    (void)unused;
    static const struct {
        ConsumerProcessingMode mode;
        gboolean overlaps;
    } cases[] = {
        {CONSUMER_PROCESS_THEN_COMMIT, FALSE},
        {CONSUMER_PROCESS_THEN_COMMIT_ASYNC, TRUE},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        Fixture *f = fixture_new(33, 1, -1);
        ConsumerConfig config;
        kconfig_bind_consumer_defaults(&config);
        config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
        config.max_poll_records = 5;
        config.enable_auto_commit = FALSE;
        config.processing_mode = cases[c].mode;
        g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
        f->consumer = consumer_new(f->world, "consumer", CONSUMER_PROCESS, bootstrap, &config,
                                   f->history);
        const char *topics[] = {TOPIC};
        consumer_subscribe(f->consumer, "g", topics, 1);
        /* Polls follow the processing at once; a commit's round trip is
         * longer than that. */
        SimDist interval = SIM_DIST_CONST(1);
        SimDist processing = SIM_DIST_CONST(1 * SIM_NS_PER_MS);
        consumer_start_polling(f->consumer, &interval, &processing, poll_cb, f);
        send_many(f, 60, 1);
        run_for(f, 10 * SIM_NS_PER_S);
        Delivery out = delivery(f);
        assert_int_equal(out.never, 0);
        assert_int_equal(out.twice, 0);
        assert_int_equal(out.commits_not_ok, 0);
        assert_int_equal(polls_during_commits(f) > 0, cases[c].overlaps);
        assert_int_equal(consumer_position(f->consumer, TOPIC, 0), 60);
        fixture_free(f);
    }
}

/* Without a crash every mode processes every record exactly once, and every
 * commit completes OK. */
static void
test_consumer_commit_modes_exactly_once_without_faults(void **unused)
{
    (void)unused;
    static const ConsumerProcessingMode modes[] = {CONSUMER_COMMIT_BEFORE_PROCESSING,
                                                   CONSUMER_PROCESS_THEN_COMMIT,
                                                   CONSUMER_PROCESS_THEN_COMMIT_ASYNC,
                                                   CONSUMER_PROCESSING_AUTO};
    for (guint m = 0; m < G_N_ELEMENTS(modes); m++) {
        Fixture *f = fixture_new(32, 2, -1);
        ConsumerConfig config;
        kconfig_bind_consumer_defaults(&config);
        config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
        config.max_poll_records = 10;
        config.enable_auto_commit = modes[m] == CONSUMER_PROCESSING_AUTO;
        config.auto_commit_interval_ms = 100;
        config.processing_mode = modes[m];
        g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
        f->consumer = consumer_new(f->world, "consumer", CONSUMER_PROCESS, bootstrap, &config,
                                   f->history);
        const char *topics[] = {TOPIC};
        consumer_subscribe(f->consumer, "g", topics, 1);
        SimDist interval = SIM_DIST_CONST(5 * SIM_NS_PER_MS);
        SimDist processing = SIM_DIST_CONST(2 * SIM_NS_PER_MS);
        consumer_start_polling(f->consumer, &interval, &processing, poll_cb, f);
        send_many(f, 60, 2);
        run_for(f, 10 * SIM_NS_PER_S);
        assert_int_equal(f->acked->len, 60);
        Delivery out = delivery(f);
        assert_int_equal(out.never, 0);
        assert_int_equal(out.twice, 0);
        assert_true(out.commits_ok > 0);
        assert_int_equal(out.commits_not_ok, 0);
        for (gint32 p = 0; p < 2; p++)
            assert_int_equal(consumer_position(f->consumer, TOPIC, p), 30);
        fixture_free(f);
    }
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
        cmocka_unit_test(test_consumer_resets_below_log_start),
        cmocka_unit_test(test_consumer_continues_after_leader_crash),
        cmocka_unit_test(test_consumer_commit_before_processing_skips_on_crash),
        cmocka_unit_test(test_consumer_process_then_commit_repeats_on_crash),
        cmocka_unit_test(test_consumer_process_then_commit_async_repeats_on_crash),
        cmocka_unit_test(test_consumer_commit_async_does_not_block_poll),
        cmocka_unit_test(test_consumer_commit_modes_exactly_once_without_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
