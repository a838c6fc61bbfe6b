/*
 * producer_fixture: the harness of the producer's unit tests
 * (test_producer.c, test_producer_sender.c, test_producer_txn.c): a real
 * simulated cluster (coordination node, controller, three brokers) with one topic, a producer on its own node, every
 * invariant checked after every event, and views of the history (what the
 * client recorded) and of the replicas' final logs.
 *
 * Its functions are static inline so that each test binary compiles only the
 * ones it uses without warnings; include it after cmocka.h.
 */
#ifndef PRODUCER_FIXTURE_H
#define PRODUCER_FIXTURE_H

#include "cluster.h"
#include "config_fixture.h"
#include "history.h"
#include "producer.h"
#include "sim_net.h"
#include "sim_world.h"

#include <string.h>

#define TOPIC "t"
#define PROCESS 1
#define RECORD_BYTES 100
/* batch.size that holds exactly `n` records of RECORD_BYTES. */
#define BATCH_OF(n) (PLOG_BATCH_OVERHEAD_BYTES + (n)*RECORD_BYTES)

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Producer *producer;
    Producer *other; /* NULL, or a second producer (fixture_add_producer) */
    GArray *results; /* ProducerResult, in completion order */
    guint64 counter;
    gboolean final_recorded;
} Fixture;

/* One op of the history: its invoke and its completion, if any. */
typedef struct {
    guint64 value;
    gint64 invoke_ns;
    gboolean completed;
    HistoryType type;
    gint32 partition;
    gint64 offset;
    gint32 error;
    gint64 complete_ns;
} OpView;

static inline void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    cluster_check_invariants(f->cluster);
    if (f->producer != NULL)
        producer_check_invariants(f->producer);
    if (f->other != NULL)
        producer_check_invariants(f->other);
}

static inline void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

static inline Fixture *
fixture_new(guint64 seed, guint partitions, const ProducerConfig *config)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig cluster_config;
    fixture_cluster_config(&cluster_config);
    cluster_config.broker.replica_lag_time_max_ms = 1000;
    cluster_config.broker.zookeeper_session_timeout_ms = 6000;
    cluster_config.broker.replica_high_watermark_checkpoint_interval_ms = 1000;
    if (config->transactional_id[0] != '\0') {
        /* Small internal topics, and timed-out transactions found within 500 ms. */
        cluster_config.broker.offsets_topic_num_partitions = 3;
        cluster_config.broker.transaction_state_log_num_partitions = 5;
        cluster_config.broker.transaction_abort_timed_out_transaction_cleanup_interval_ms = 500;
    }
    f->cluster = cluster_new(f->world, &cluster_config, f->history);
    f->results = g_array_new(FALSE, FALSE, sizeof(ProducerResult));
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    /* The controller publishes a new topic's partitions one by one; let every
     * broker's metadata cache hold all of them before a client asks. */
    run_for(f, 1 * SIM_NS_PER_S);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    f->producer = producer_new(f->world, "producer", PROCESS, bootstrap, config, f->history);
    /* Metadata and, when idempotent, the producer id (a transactional
     * producer waits for producer_init_transactions). */
    run_for(f, 1 * SIM_NS_PER_S);
    if (producer_config(f->producer)->enable_idempotence && !producer_transactional(f->producer))
        assert_true(producer_id(f->producer) >= 0);
    return f;
}

/* A second producer on its own node, freed with the fixture. */
static inline Producer *
fixture_add_producer(Fixture *f, const ProducerConfig *config)
{
    assert_null(f->other);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    f->other = producer_new(f->world, "producer-2", PROCESS + 1, bootstrap, config, f->history);
    return f->other;
}

static inline void
fixture_free(Fixture *f)
{
    producer_free(f->other);
    producer_free(f->producer);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_array_free(f->results, TRUE);
    g_free(f);
}

static inline void
result_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    Fixture *f = user_data;
    (void)producer;
    g_array_append_val(f->results, *result);
}

static inline guint64
value_of(guint64 n)
{
    return ((guint64)PROCESS << 40) | n;
}

/* Sends one record of RECORD_BYTES; returns its value. */
static inline guint64
send_one(Fixture *f, const char *topic, gint32 partition, guint64 key)
{
    guint64 value = value_of(++f->counter);
    producer_send(f->producer, topic, partition, key, value, RECORD_BYTES, result_cb, f);
    return value;
}

static inline void
send_many(Fixture *f, guint n, gint32 partition)
{
    for (guint i = 0; i < n; i++)
        send_one(f, TOPIC, partition, 0);
}

/* The ops of the history by op id (index op - 1). */
static inline GArray *
op_views(Fixture *f)
{
    const HistoryOpArray *ops = history_ops(f->history);
    GArray *views = g_array_new(FALSE, TRUE, sizeof(OpView));
    g_array_set_size(views, ops->len);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn != HISTORY_FN_SEND)
            continue;
        OpView *view = &g_array_index(views, OpView, i);
        view->value = op->value;
        view->invoke_ns = op->invoke_ns;
        /* history.c asserts that an op completes at most once. */
        view->completed = op->type != HISTORY_INVOKE;
        if (!view->completed)
            continue;
        view->type = (HistoryType)op->type;
        view->partition = op->partition;
        view->offset = op->offset;
        view->error = op->error;
        view->complete_ns = op->complete_ns;
    }
    return views;
}

static inline guint
count_ops(const GArray *views, HistoryType type, gint32 error)
{
    guint count = 0;
    for (guint i = 0; i < views->len; i++) {
        const OpView *view = &g_array_index(views, OpView, i);
        if (view->completed && view->type == type && (error < 0 || view->error == error))
            count++;
    }
    return count;
}

static inline const OpView *
op_by_value(const GArray *views, guint64 value)
{
    for (guint i = 0; i < views->len; i++) {
        const OpView *view = &g_array_index(views, OpView, i);
        if (view->value == value)
            return view;
    }
    fail_msg("no op for value %" G_GUINT64_FORMAT, value);
    return NULL;
}

/* The values below the HW of the partition's leader (or, without one, of the
 * online replica with the highest HW) at the end, in offset order. */
static inline GArray *
final_values(Fixture *f, gint32 partition)
{
    if (!f->final_recorded)
        cluster_record_final_state(f->cluster);
    f->final_recorded = TRUE;
    const GArray *replicas = history_replicas(f->history);
    const HistoryReplica *best = NULL;
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (r->partition != partition || !r->online)
            continue;
        if (best == NULL || (r->is_leader && !best->is_leader) ||
            (r->is_leader == best->is_leader && r->hw > best->hw))
            best = r;
    }
    assert_non_null(best);
    GArray *values = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint k = 0; k < best->records->len; k++) {
        const HistoryRecord *record = &g_array_index(best->records, HistoryRecord, k);
        if (record->offset < best->hw)
            g_array_append_val(values, record->value);
    }
    return values;
}

static inline guint
occurrences(const GArray *values, guint64 value)
{
    guint count = 0;
    for (guint i = 0; i < values->len; i++)
        count += g_array_index(values, guint64, i) == value;
    return count;
}

/* Pairs of this producer's values found in the log after a later value. */
static inline guint
inversions(const GArray *values)
{
    guint count = 0;
    for (guint i = 0; i < values->len; i++) {
        for (guint j = i + 1; j < values->len; j++)
            count += g_array_index(values, guint64, j) < g_array_index(values, guint64, i);
    }
    return count;
}

static inline SimNodeId
leader_node(Fixture *f, gint32 partition)
{
    gint32 leader = cluster_leader(f->cluster, TOPIC, partition);
    assert_true(leader > 0);
    return broker_node(cluster_broker(f->cluster, leader));
}

static inline guint64
requests_sent(const Fixture *f)
{
    ProducerStats stats;
    producer_stats(f->producer, &stats);
    return stats.produce_requests;
}

/* Makes the producer's connection to partition 0's leader ready (its
 * handshake answered), so a test's first record goes out at once, as on a
 * client that has been running. Returns the warm-up record's value. */
static inline guint64
warm_up(Fixture *f)
{
    guint64 value = send_one(f, TOPIC, 0, 0);
    run_for(f, 3 * SIM_NS_PER_S); /* past any linger.ms the tests use */
    return value;
}

#endif
