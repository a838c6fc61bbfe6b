/*
 * Workload tests: arrival processes (constant, Poisson, bursts), key
 * distributions (uniform, Zipf), record sizes, unique values across several
 * producers, synchronous sends, start and stop times, crash and restart of the
 * producer, and determinism — each driving real producers against a real
 * simulated cluster and read back from the history and the brokers' logs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "history.h"
#include "plog.h"
#include "producer.h"
#include "sim_rng.h"
#include "sim_world.h"
#include "workload.h"

#include <math.h>
#include <string.h>

#define TOPIC "w"
#define PRODUCERS_MAX 4

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    guint n;
    Producer *producers[PRODUCERS_MAX];
    Workload *workloads[PRODUCERS_MAX];
} Fixture;

static void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    for (guint i = 0; i < f->n; i++) {
        producer_check_invariants(f->producers[i]);
        if (f->workloads[i] != NULL)
            workload_check_invariants(f->workloads[i]);
    }
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

/* A cluster with topic TOPIC and `n` settled producers, processes 1..n. */
static Fixture *
fixture_new(guint64 seed, guint partitions, guint n, const ProducerConfig *config)
{
    assert_true(n <= PRODUCERS_MAX);
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig cluster_config;
    fixture_cluster_config(&cluster_config);
    cluster_config.broker.zookeeper_session_timeout_ms = 6000;
    f->cluster = cluster_new(f->world, &cluster_config, f->history);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    /* The controller publishes a new topic's partitions one by one; let every
     * broker's metadata cache hold all of them before a client asks. */
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig defaults;
    kconfig_bind_producer_defaults(&defaults);
    for (guint i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("producer-%u", i + 1);
        f->producers[i] = producer_new(f->world, name, i + 1, bootstrap,
                                       config != NULL ? config : &defaults, f->history);
    }
    f->n = n;
    sim_world_set_after_event(f->world, check_after_event, f);
    run_for(f, 1 * SIM_NS_PER_S);
    return f;
}

static void
start_workload(Fixture *f, guint i, const WorkloadConfig *config)
{
    g_autofree char *name = g_strdup_printf("workload-%u", i + 1);
    assert_true(workload_config_validate(config, NULL));
    f->workloads[i] = workload_new(f->world, name, f->producers[i], config);
}

static void
fixture_free(Fixture *f)
{
    for (guint i = 0; i < f->n; i++) {
        workload_free(f->workloads[i]);
        producer_free(f->producers[i]);
    }
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

/* The sends of `process` (all when 0), in invocation order. (transfer full) */
static GArray *
invokes_of(const Fixture *f, guint32 process)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(HistoryOp));
    const HistoryOpArray *ops = history_ops(f->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_SEND && (process == 0 || op->process == process))
            g_array_append_val(out, *op);
    }
    return out;
}

/* ---- arrivals ---- */

/* Constant rate: one record every 1/rate, from start, none at or after stop. */
static void
test_workload_constant_rate(void **state)
{
    (void)state;
    Fixture *f = fixture_new(31, 1, 1, NULL);
    gint64 start = sim_now_ns(f->world) + 100 * SIM_NS_PER_MS;
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 100;
    config.start_ns = start;
    config.stop_ns = start + 1 * SIM_NS_PER_S;
    start_workload(f, 0, &config);
    run_for(f, 3 * SIM_NS_PER_S);
    g_autoptr(GArray) invokes = invokes_of(f, 1);
    assert_int_equal(invokes->len, 100);
    for (guint i = 0; i < invokes->len; i++) {
        const HistoryOp *op = &g_array_index(invokes, HistoryOp, i);
        assert_int_equal(op->invoke_ns, start + (gint64)i * 10 * SIM_NS_PER_MS);
    }
    assert_int_equal(workload_ok(f->workloads[0]), 100);
    fixture_free(f);
}

/* Poisson arrivals: about rate x duration records, with irregular gaps. */
static void
test_workload_poisson_rate(void **state)
{
    (void)state;
    Fixture *f = fixture_new(32, 1, 1, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 1000;
    config.arrival = WORKLOAD_ARRIVAL_POISSON;
    config.start_ns = sim_now_ns(f->world);
    config.stop_ns = config.start_ns + 5 * SIM_NS_PER_S;
    start_workload(f, 0, &config);
    run_for(f, 6 * SIM_NS_PER_S);
    g_autoptr(GArray) invokes = invokes_of(f, 1);
    assert_in_range(invokes->len, 4700, 5300);
    gint64 gap_min = G_MAXINT64, gap_max = 0;
    for (guint i = 1; i < invokes->len; i++) {
        gint64 gap = g_array_index(invokes, HistoryOp, i).invoke_ns -
                     g_array_index(invokes, HistoryOp, i - 1).invoke_ns;
        gap_min = MIN(gap_min, gap);
        gap_max = MAX(gap_max, gap);
    }
    assert_true(gap_min < 100 * SIM_NS_PER_US);
    assert_true(gap_max > 3 * SIM_NS_PER_MS);
    fixture_free(f);
}

/* Bursts: the rate during ON windows, nothing during OFF windows. */
static void
test_workload_bursts(void **state)
{
    (void)state;
    Fixture *f = fixture_new(33, 1, 1, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 1000;
    config.arrival = WORKLOAD_ARRIVAL_BURSTS;
    config.burst_on_ns = 100 * SIM_NS_PER_MS;
    config.burst_off_ns = 400 * SIM_NS_PER_MS;
    config.start_ns = sim_now_ns(f->world);
    config.stop_ns = config.start_ns + 2 * SIM_NS_PER_S;
    start_workload(f, 0, &config);
    run_for(f, 3 * SIM_NS_PER_S);
    g_autoptr(GArray) invokes = invokes_of(f, 1);
    assert_in_range(invokes->len, 396, 404);
    for (guint i = 0; i < invokes->len; i++) {
        gint64 since = g_array_index(invokes, HistoryOp, i).invoke_ns - config.start_ns;
        assert_true(since % (500 * SIM_NS_PER_MS) < 100 * SIM_NS_PER_MS);
    }
    fixture_free(f);
}

/* ---- keys and sizes ---- */

typedef struct {
    guint64 n;
    double s;
} ZipfCase;

static const ZipfCase ZIPF_CASES[] = {{10, 1.0}, {10, 0.0}, {5, 2.0}, {1000, 1.2}, {1, 1.0}};

/* Zipf draws follow P(k) = k^-s / H(n, s) within sampling error. */
static void
test_workload_zipf_distribution(void **state)
{
    (void)state;
    enum { DRAWS = 100000 };
    for (guint c = 0; c < G_N_ELEMENTS(ZIPF_CASES); c++) {
        const ZipfCase *tc = &ZIPF_CASES[c];
        g_autoptr(SimRng) rng = sim_rng_new(7, "zipf");
        g_autofree guint *counts = g_new0(guint, tc->n + 1);
        for (guint i = 0; i < DRAWS; i++) {
            guint64 k = workload_zipf_sample(rng, tc->n, tc->s);
            assert_true(k >= 1 && k <= tc->n);
            counts[k]++;
        }
        double h = 0.0;
        for (guint64 k = 1; k <= tc->n; k++)
            h += pow((double)k, -tc->s);
        for (guint64 k = 1; k <= MIN(tc->n, 5); k++) {
            double expected = pow((double)k, -tc->s) / h;
            double seen = (double)counts[k] / DRAWS;
            if (fabs(seen - expected) > 0.01)
                fail_msg("zipf(%" G_GUINT64_FORMAT ", %.1f): P(%" G_GUINT64_FORMAT
                         ") %.4f, expected %.4f",
                         tc->n, tc->s, k, seen, expected);
        }
    }
}

/* Uniform keys cover 1..K; Zipf keys favour key 1; both drive the
 * partitioner (every keyed record lands on its key's partition). */
static void
test_workload_keys(void **state)
{
    (void)state;
    Fixture *f = fixture_new(34, 3, 2, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 2000;
    config.records_max = 2000;
    config.keys = WORKLOAD_KEYS_UNIFORM;
    config.key_count = 10;
    start_workload(f, 0, &config);
    config.keys = WORKLOAD_KEYS_ZIPF;
    config.key_count = 100;
    config.zipf_s = 1.0;
    start_workload(f, 1, &config);
    run_for(f, 3 * SIM_NS_PER_S);
    for (guint process = 1; process <= 2; process++) {
        const HistoryOpArray *ops = history_ops(f->history);
        guint sends = 0;
        guint counts[101] = {0};
        for (guint i = 0; i < ops->len; i++) {
            const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
            if (op->fn != HISTORY_FN_SEND || op->process != process)
                continue;
            guint64 key = history_op_key(f->history, i + 1);
            assert_true(key >= 1 && key <= (process == 1 ? 10 : 100));
            assert_int_equal(op->partition, producer_partition_for_key(key, 3));
            counts[key]++;
            sends++;
        }
        assert_int_equal(sends, 2000);
        if (process == 1) {
            for (guint k = 1; k <= 10; k++)
                assert_in_range(counts[k], 140, 260);
        } else {
            assert_true(counts[1] > counts[2] && counts[2] > counts[10]);
            assert_in_range(counts[1], 300, 460); /* 2000 / H(100) = 386 */
        }
    }
    fixture_free(f);
}

/* Record sizes follow the configured distribution, as the broker stores them. */
static void
test_workload_record_sizes(void **state)
{
    (void)state;
    Fixture *f = fixture_new(35, 1, 1, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 1000;
    config.records_max = 1000;
    config.record_size = (SimDist){SIM_DIST_UNIFORM, 10, 1000};
    start_workload(f, 0, &config);
    run_for(f, 3 * SIM_NS_PER_S);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    Plog *log = broker_partition_log(cluster_broker(f->cluster, leader), TOPIC, 0);
    assert_non_null(log);
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    gint64 offset = 0;
    while (offset < plog_log_end_offset(log)) {
        guint before = batches->len;
        plog_read(log, offset, 1 << 20, batches);
        assert_true(batches->len > before);
        const PlogBatch *last = g_ptr_array_index(batches, batches->len - 1);
        offset = plog_batch_last_offset(last) + 1;
    }
    guint64 records = 0, bytes = 0;
    guint32 smallest = G_MAXUINT32, largest = 0;
    for (guint b = 0; b < batches->len; b++) {
        const PlogBatch *batch = g_ptr_array_index(batches, b);
        for (guint r = 0; r < batch->records->len; r++) {
            guint32 size = g_array_index(batch->records, PlogRecord, r).size_bytes;
            smallest = MIN(smallest, size);
            largest = MAX(largest, size);
            bytes += size;
            records++;
        }
    }
    assert_int_equal(records, 1000);
    assert_true(smallest >= 10 && largest <= 1000);
    assert_true(largest - smallest > 900);
    assert_in_range(bytes / records, 470, 540);
    fixture_free(f);
}

/* ---- values, modes and lifecycle ---- */

/* Several producers: every value is unique, carries its process, and each
 * process counts 1, 2, 3, ... */
static void
test_workload_values_unique(void **state)
{
    (void)state;
    Fixture *f = fixture_new(36, 3, 3, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 300;
    config.stop_ns = sim_now_ns(f->world) + 1 * SIM_NS_PER_S;
    for (guint i = 0; i < 3; i++)
        start_workload(f, i, &config);
    run_for(f, 2 * SIM_NS_PER_S);
    g_autoptr(GArray) invokes = invokes_of(f, 0);
    assert_int_equal(invokes->len, 900);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    guint64 next[4] = {1, 1, 1, 1};
    for (guint i = 0; i < invokes->len; i++) {
        HistoryOp *op = &g_array_index(invokes, HistoryOp, i);
        assert_false(g_hash_table_contains(seen, &op->value));
        g_hash_table_add(seen, &op->value);
        assert_int_equal(op->value >> 40, op->process);
        assert_int_equal(op->value & ((G_GUINT64_CONSTANT(1) << 40) - 1), next[op->process]++);
    }
    for (guint i = 0; i < 3; i++)
        assert_int_equal(workload_ok(f->workloads[i]), 300);
    fixture_free(f);
}

/* Sync sends: never more than one record outstanding, so a rate above what
 * one round trip allows is not reached. */
static void
test_workload_sync_send(void **state)
{
    (void)state;
    Fixture *f = fixture_new(37, 1, 1, NULL);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 100000;
    config.send_sync = TRUE;
    config.stop_ns = sim_now_ns(f->world) + 1 * SIM_NS_PER_S;
    start_workload(f, 0, &config);
    run_for(f, 2 * SIM_NS_PER_S);
    const HistoryOpArray *ops = history_ops(f->history);
    guint64 completions = 0;
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        completions += op->type != HISTORY_INVOKE;
        /* One send at a time: each begins once the one before has ended. */
        if (i > 0) {
            const HistoryOp *before = &g_array_index(ops, HistoryOp, i - 1);
            assert_int_not_equal(before->type, HISTORY_INVOKE);
            assert_true(op->invoke_ns >= before->complete_ns);
        }
    }
    guint64 sent = workload_sent(f->workloads[0]);
    assert_true(sent > 50);
    assert_true(sent < 10000); /* a round trip with acks=all takes ~2 ms */
    assert_int_equal(completions, sent);
    fixture_free(f);
}

/* The producer crashes: the workload stops with it, resumes after the
 * restart without sending the arrivals of the downtime, and values stay
 * unique. */
static void
test_workload_crash_restart(void **state)
{
    (void)state;
    Fixture *f = fixture_new(38, 1, 1, NULL);
    gint64 t0 = sim_now_ns(f->world);
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    config.rate_per_s = 100;
    config.start_ns = t0;
    config.stop_ns = t0 + 3 * SIM_NS_PER_S;
    start_workload(f, 0, &config);
    SimNodeId node = producer_node(f->producers[0]);
    run_for(f, 1 * SIM_NS_PER_S + 5 * SIM_NS_PER_MS);
    sim_node_crash(f->world, node);
    run_for(f, 1 * SIM_NS_PER_S);
    sim_node_restart(f->world, node);
    run_for(f, 3 * SIM_NS_PER_S);
    g_autoptr(GArray) invokes = invokes_of(f, 1);
    assert_in_range(invokes->len, 195, 205);
    for (guint i = 0; i < invokes->len; i++) {
        const HistoryOp *op = &g_array_index(invokes, HistoryOp, i);
        gint64 since = op->invoke_ns - t0;
        assert_false(since > 1 * SIM_NS_PER_S + 5 * SIM_NS_PER_MS &&
                     since < 2 * SIM_NS_PER_S + 5 * SIM_NS_PER_MS);
        assert_int_equal(op->value & 0xffffffffffu, i + 1);
    }
    fixture_free(f);
}

/* Two runs with one seed give the same history. */
static void
test_workload_deterministic(void **state)
{
    (void)state;
    GArray *runs[2];
    GArray *keys[2];
    for (guint r = 0; r < 2; r++) {
        Fixture *f = fixture_new(39, 3, 2, NULL);
        WorkloadConfig config;
        kconfig_bind_workload_defaults(&config, TOPIC);
        config.rate_per_s = 500;
        config.arrival = WORKLOAD_ARRIVAL_POISSON;
        config.keys = WORKLOAD_KEYS_ZIPF;
        config.key_count = 50;
        config.zipf_s = 0.9;
        config.record_size = (SimDist){SIM_DIST_LOGNORMAL, 200, 0.5};
        config.stop_ns = sim_now_ns(f->world) + 1 * SIM_NS_PER_S;
        start_workload(f, 0, &config);
        config.keys = WORKLOAD_KEYS_NONE;
        start_workload(f, 1, &config);
        run_for(f, 2 * SIM_NS_PER_S);
        const HistoryOpArray *ops = history_ops(f->history);
        runs[r] = g_array_new(FALSE, FALSE, sizeof(HistoryOp));
        g_array_append_vals(runs[r], ops->data, ops->len);
        keys[r] = g_array_new(FALSE, FALSE, sizeof(guint64));
        for (guint i = 0; i < ops->len; i++) {
            guint64 key = history_op_key(f->history, i + 1);
            g_array_append_val(keys[r], key);
        }
        fixture_free(f);
    }
    assert_true(runs[0]->len > 1000);
    assert_int_equal(runs[0]->len, runs[1]->len);
    assert_memory_equal(runs[0]->data, runs[1]->data, runs[0]->len * sizeof(HistoryOp));
    assert_memory_equal(keys[0]->data, keys[1]->data, keys[0]->len * sizeof(guint64));
    g_array_free(keys[0], TRUE);
    g_array_free(keys[1], TRUE);
    g_array_free(runs[0], TRUE);
    g_array_free(runs[1], TRUE);
}

static void
bad_rate(WorkloadConfig *c)
{
    c->rate_per_s = -1;
}

static void
zipf_without_keys(WorkloadConfig *c)
{
    c->keys = WORKLOAD_KEYS_ZIPF;
    c->key_count = 0;
}

static void
empty_burst(WorkloadConfig *c)
{
    c->arrival = WORKLOAD_ARRIVAL_BURSTS;
    c->burst_on_ns = 0;
}

static void
stop_before_start(WorkloadConfig *c)
{
    c->start_ns = 10;
    c->stop_ns = 5;
}

static void
no_topic(WorkloadConfig *c)
{
    c->topic[0] = '\0';
}

static const struct {
    void (*mutate)(WorkloadConfig *c);
    const char *field;
} BAD_CONFIGS[] = {
    {bad_rate, "workload.rate"},
    {zipf_without_keys, "workload.keys"},
    {empty_burst, "workload.burst"},
    {stop_before_start, "workload.stop"},
    {no_topic, "topic"},
};

/* Bad workload settings are refused with the field named. */
static void
test_workload_config_validation(void **state)
{
    (void)state;
    WorkloadConfig config;
    kconfig_bind_workload_defaults(&config, TOPIC);
    assert_true(workload_config_validate(&config, NULL));
    for (guint i = 0; i < G_N_ELEMENTS(BAD_CONFIGS); i++) {
        kconfig_bind_workload_defaults(&config, TOPIC);
        BAD_CONFIGS[i].mutate(&config);
        g_autoptr(GError) error = NULL;
        assert_false(workload_config_validate(&config, &error));
        assert_true(g_error_matches(error, KSIM_WORKLOAD_ERROR, KSIM_WORKLOAD_ERROR_CONFIG));
        assert_non_null(strstr(error->message, BAD_CONFIGS[i].field));
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_workload_constant_rate),
        cmocka_unit_test(test_workload_poisson_rate),
        cmocka_unit_test(test_workload_bursts),
        cmocka_unit_test(test_workload_zipf_distribution),
        cmocka_unit_test(test_workload_keys),
        cmocka_unit_test(test_workload_record_sizes),
        cmocka_unit_test(test_workload_values_unique),
        cmocka_unit_test(test_workload_sync_send),
        cmocka_unit_test(test_workload_crash_restart),
        cmocka_unit_test(test_workload_deterministic),
        cmocka_unit_test(test_workload_config_validation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
