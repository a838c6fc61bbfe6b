/*
 * Transaction tests: the transaction coordinator (txn_coord.h), markers and
 * the partition side (LSO, aborted index, read_committed), and the
 * transactional producer (producer.h), against a real simulated cluster
 * (coordination node, controller, three brokers): the coordinator's state
 * machine for commit and abort, zombie fencing, markers across a partition
 * leader change, a coordinator failover between PrepareCommit and
 * CompleteCommit, the LSO held by an open transaction, the transaction
 * timeout, offsets committed with a transaction, and the log's transaction
 * state across a restart. A raw client node (the probe) sends single
 * InitProducerId, AddPartitionsToTxn and EndTxn requests: an old epoch is
 * fenced after an InitProducerId bump, and a transaction being completed
 * answers CONCURRENT_TRANSACTIONS. KIP-890: the coordinator's verification,
 * a late batch appended (hanging) without the leader's verification and
 * refused with it, and transaction version 2's epoch bump per transaction,
 * which fences a late EndTxn that version 0 lets commit the next transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "consumer.h"
#include "group_coord.h"
#include "history.h"
#include "plog.h"
#include "probe_fixture.h"
#include "producer.h"
#include "sim_disk.h"
#include "sim_net.h"
#include "sim_world.h"
#include "txn_coord.h"

#include <string.h>

#define TOPIC "orders"
#define TXN_ID "txn-app"
#define GROUP "pipeline"
#define TXN_PARTITIONS 5
#define RECORD_BYTES 100
#define PRODUCERS_MAX 3
#define CONSUMERS_MAX 2

typedef struct {
    gboolean done;
    KafkaError error;
} Outcome;

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Producer *producers[PRODUCERS_MAX];
    guint n_producers;
    Consumer *consumers[CONSUMERS_MAX];
    guint n_consumers;
    GArray *seen[CONSUMERS_MAX]; /* guint64 values polled, per consumer */
    guint64 counter;
    guint acked;
    guint failed;
    gint32 transaction_version; /* the cluster's, which its producers use */
} Fixture;

static void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    cluster_check_invariants(f->cluster);
    for (guint i = 0; i < f->n_producers; i++)
        producer_check_invariants(f->producers[i]);
    for (guint i = 0; i < f->n_consumers; i++)
        consumer_check_invariants(f->consumers[i]);
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

/* A settled three-broker cluster with TOPIC of `partitions` partitions
 * (replication factor 3), __transaction_state of TXN_PARTITIONS partitions
 * and timed-out transactions checked every 500 ms. */
static Fixture *
fixture_new_kip890(guint64 seed, guint partitions, gboolean verification,
                   gint32 transaction_version);

static Fixture *
fixture_new(guint64 seed, guint partitions)
{
    return fixture_new_kip890(seed, partitions, FALSE, 0);
}

/* As fixture_new, with the brokers' transaction.partition.verification.enable
 * and the cluster's transaction.version (which add_producer's producers
 * use too). */
static Fixture *
fixture_new_kip890(guint64 seed, guint partitions, gboolean verification,
                   gint32 transaction_version)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.replica_lag_time_max_ms = 1000;
    config.broker.zookeeper_session_timeout_ms = 6000;
    config.broker.offsets_topic_num_partitions = 3;
    config.broker.transaction_state_log_num_partitions = TXN_PARTITIONS;
    config.broker.transaction_abort_timed_out_transaction_cleanup_interval_ms = 500;
    config.broker.transaction_partition_verification_enable = verification;
    config.transaction_version = transaction_version;
    f->transaction_version = transaction_version;
    f->cluster = cluster_new(f->world, &config, f->history);
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    return f;
}

static void
fixture_free(Fixture *f)
{
    for (guint i = 0; i < f->n_consumers; i++) {
        consumer_free(f->consumers[i]);
        g_array_free(f->seen[i], TRUE);
    }
    for (guint i = 0; i < f->n_producers; i++)
        producer_free(f->producers[i]);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

static Producer *
add_producer(Fixture *f, const char *transactional_id, gint64 timeout_ms)
{
    assert_true(f->n_producers < PRODUCERS_MAX);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig config;
    kconfig_bind_producer_defaults(&config);
    producer_config_set_transactional_id(&config, transactional_id);
    if (timeout_ms > 0)
        config.transaction_timeout_ms = timeout_ms;
    config.transaction_version = f->transaction_version;
    assert_true(producer_config_validate(&config, NULL));
    g_autofree char *name = g_strdup_printf("producer-%u", f->n_producers);
    Producer *producer =
        producer_new(f->world, name, 1 + f->n_producers, bootstrap, &config, f->history);
    f->producers[f->n_producers++] = producer;
    return producer;
}

static void
polled_cb(Consumer *consumer, const ConsumerRecord *records, guint n, void *user_data)
{
    GArray *seen = user_data;
    (void)consumer;
    for (guint i = 0; i < n; i++)
        g_array_append_val(seen, records[i].value);
}

/* A consumer of every partition of TOPIC from the start, polling every 10 ms. */
static guint
add_consumer(Fixture *f, gint8 isolation, guint partitions)
{
    assert_true(f->n_consumers < CONSUMERS_MAX);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ConsumerConfig config;
    kconfig_bind_consumer_defaults(&config);
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config.isolation_level = isolation;
    config.metadata_max_age_ms = 1000;
    guint index = f->n_consumers++;
    g_autofree char *name = g_strdup_printf("consumer-%u", index);
    f->consumers[index] = consumer_new(f->world, name, 10 + index, bootstrap, &config, f->history);
    f->seen[index] = g_array_new(FALSE, FALSE, sizeof(guint64));
    gint32 list[8];
    assert_true(partitions <= G_N_ELEMENTS(list));
    for (guint p = 0; p < partitions; p++)
        list[p] = (gint32)p;
    consumer_assign(f->consumers[index], TOPIC, list, partitions);
    SimDist interval = SIM_DIST_CONST(10 * SIM_NS_PER_MS);
    SimDist processing = SIM_DIST_CONST(0);
    consumer_start_polling(f->consumers[index], &interval, &processing, polled_cb, f->seen[index]);
    return index;
}

static void
outcome_cb(Producer *producer, KafkaError error, void *user_data)
{
    Outcome *outcome = user_data;
    (void)producer;
    assert_false(outcome->done);
    outcome->done = TRUE;
    outcome->error = error;
}

static void
sent_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    Fixture *f = user_data;
    (void)producer;
    f->acked += result->outcome == HISTORY_OK;
    f->failed += result->outcome != HISTORY_OK;
}

/* Runs in 10 ms steps until `outcome` is done or `timeout_ns` passed. */
static void
run_until_done(Fixture *f, const Outcome *outcome, gint64 timeout_ns)
{
    gint64 end = sim_now_ns(f->world) + timeout_ns;
    while (!outcome->done && sim_now_ns(f->world) < end)
        run_for(f, 10 * SIM_NS_PER_MS);
}

static void
init_ok(Fixture *f, Producer *producer)
{
    Outcome outcome = {0};
    producer_init_transactions(producer, outcome_cb, &outcome);
    run_until_done(f, &outcome, 30 * SIM_NS_PER_S);
    assert_true(outcome.done);
    assert_int_equal(outcome.error, KAFKA_ERROR_NONE);
}

/* Sends `n` records round-robin over `partitions` partitions. */
static void
send_many(Fixture *f, Producer *producer, guint n, guint partitions)
{
    for (guint i = 0; i < n; i++) {
        f->counter++;
        producer_send(producer, TOPIC, (gint32)(f->counter % partitions), 0,
                      HISTORY_VALUE(producer_process(producer), f->counter), RECORD_BYTES, sent_cb,
                      f);
    }
}

static void
end_txn(Fixture *f, Producer *producer, gboolean commit, KafkaError expected)
{
    Outcome outcome = {0};
    if (commit)
        producer_commit_transaction(producer, outcome_cb, &outcome);
    else
        producer_abort_transaction(producer, outcome_cb, &outcome);
    run_until_done(f, &outcome, 60 * SIM_NS_PER_S);
    assert_true(outcome.done);
    assert_int_equal(outcome.error, expected);
}

static Broker *
txn_coordinator(const Fixture *f, const char *id)
{
    for (gint32 b = 1; b <= 3; b++) {
        Broker *broker = cluster_broker(f->cluster, b);
        TxnCoordInfo info;
        txn_coord_describe(broker, id, &info);
        if (info.coordinator && info.exists)
            return broker;
    }
    return NULL;
}

/* The states the id's records hold in `broker`'s replica of its
 * __transaction_state partition, in log order (TxnState). */
static GArray *
logged_states(Broker *broker, const char *id)
{
    GArray *states = g_array_new(FALSE, FALSE, sizeof(TxnState));
    Plog *log =
        broker_partition_log(broker, TXN_STATE_TOPIC, txn_coord_partition_for(id, TXN_PARTITIONS));
    if (log == NULL)
        return states;
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    gint64 offset = plog_log_start_offset(log);
    while (offset < plog_log_end_offset(log)) {
        g_ptr_array_set_size(batches, 0);
        assert_int_equal(plog_read(log, offset, 1 << 20, batches), PLOG_READ_OK);
        for (guint i = 0; i < batches->len; i++) {
            const PlogBatch *batch = g_ptr_array_index(batches, i);
            TxnLogRecord record;
            if (txn_coord_decode(batch, &record)) {
                if (strcmp(record.transactional_id, id) == 0)
                    g_array_append_val(states, record.state);
                txn_log_record_clear(&record);
            }
            offset = plog_batch_last_offset(batch) + 1;
        }
    }
    return states;
}

/* The position of the first `state` in `states` at or after `from`, or -1. */
static gint
find_state(const GArray *states, TxnState state, guint from)
{
    for (guint i = from; i < states->len; i++) {
        if (g_array_index(states, TxnState, i) == state)
            return (gint)i;
    }
    return -1;
}

/* Counts control batches (COMMIT when `commit`, else ABORT) in the leader's
 * log of TOPIC-`partition`. */
static guint
markers_in(const Fixture *f, gint32 partition, gboolean commit)
{
    gint32 leader = cluster_leader(f->cluster, TOPIC, partition);
    assert_true(leader > 0);
    Plog *log = broker_partition_log(cluster_broker(f->cluster, leader), TOPIC, partition);
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    guint count = 0;
    gint64 offset = plog_log_start_offset(log);
    while (offset < plog_log_end_offset(log)) {
        g_ptr_array_set_size(batches, 0);
        assert_int_equal(plog_read(log, offset, 1 << 20, batches), PLOG_READ_OK);
        for (guint i = 0; i < batches->len; i++) {
            const PlogBatch *batch = g_ptr_array_index(batches, i);
            if ((batch->attributes & PLOG_BATCH_CONTROL) != 0)
                count += ((batch->attributes & PLOG_BATCH_CONTROL_COMMIT) != 0) == commit;
            offset = plog_batch_last_offset(batch) + 1;
        }
    }
    return count;
}

static BrokerPartitionInfo
leader_info(const Fixture *f, gint32 partition)
{
    BrokerPartitionInfo info;
    gint32 leader = cluster_leader(f->cluster, TOPIC, partition);
    assert_true(leader > 0);
    broker_partition_info(cluster_broker(f->cluster, leader), TOPIC, partition, &info);
    return info;
}

/* TRUE when every value of the producer's transaction `txn` was seen by
 * consumer `c`, FALSE when none was; fails the test when only some were. */
static gboolean
txn_seen(const Fixture *f, const Producer *producer, guint txn, guint c)
{
    const ProducerTxnInfo *info = producer_txn_info(producer, txn);
    const HistoryOpArray *ops = history_ops(f->history);
    guint seen = 0;
    for (guint i = 0; i < info->ops->len; i++) {
        const HistoryOp *op = history_op(f->history, g_array_index(info->ops, guint64, i));
        (void)ops;
        for (guint v = 0; v < f->seen[c]->len; v++)
            seen += g_array_index(f->seen[c], guint64, v) == op->value;
    }
    assert_true(seen == 0 || seen == info->ops->len);
    return seen > 0;
}

/* ---- a raw client of the transaction protocol (probe_fixture.h) ---- */

static gboolean
read_txn_answer(Probe *probe, const SimMsg *msg)
{
    if (msg->type == KMSG_INIT_PRODUCER_ID_RESPONSE)
        probe->error = ((const KInitProducerIdMessage *)msg)->error;
    else if (msg->type == KMSG_PRODUCE_RESPONSE)
        probe->error = ((const KProduceResponse *)msg)->error;
    else if (msg->type == KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE || msg->type == KMSG_END_TXN_RESPONSE)
        probe->error = ((const KTxnMessage *)msg)->error;
    else
        return FALSE;
    return TRUE;
}

/* Sends `request` to `coordinator` and waits (in 50 us steps) for the answer. */
static KafkaError
probe_ask(Probe *probe, Fixture *f, Broker *coordinator, SimMsg *request)
{
    return probe_request(probe, f->world, broker_node(coordinator), request, 50 * SIM_NS_PER_US);
}

/* InitProducerId for TXN_ID; with `bump`, as the instance of (id, epoch). */
static KafkaError
probe_init_producer_id(Probe *probe, Fixture *f, Broker *coordinator, gboolean bump,
                       gint64 producer_id, gint16 epoch)
{
    KInitProducerIdMessage *request = kproto_new(KMSG_INIT_PRODUCER_ID_REQUEST);
    request->correlation_id = probe_correlation_next(probe);
    g_strlcpy(request->transactional_id, TXN_ID, sizeof request->transactional_id);
    request->transaction_timeout_ms = 60000;
    request->bump = bump;
    request->producer_id = bump ? producer_id : -1;
    request->producer_epoch = bump ? epoch : -1;
    return probe_ask(probe, f, coordinator, &request->base);
}

/* AddPartitionsToTxn (partition 0 of TOPIC) or EndTxn(commit) for TXN_ID as
 * (producer_id, epoch). */
static KafkaError
probe_txn_request(Probe *probe, Fixture *f, Broker *coordinator, KafkaMsgType type,
                  gint64 producer_id, gint16 epoch)
{
    KTxnMessage *request = kproto_new(type);
    request->correlation_id = probe_correlation_next(probe);
    g_strlcpy(request->transactional_id, TXN_ID, sizeof request->transactional_id);
    request->producer_id = producer_id;
    request->producer_epoch = epoch;
    request->committed = TRUE;
    if (type == KMSG_ADD_PARTITIONS_TO_TXN_REQUEST) {
        KTopicPartition tp;
        ktp_set(&tp, TOPIC, 0);
        g_array_append_val(request->partitions, tp);
    }
    return probe_ask(probe, f, coordinator, &request->base);
}

/* ---- pure ---- */

static void
test_txn_partition_and_record_encoding(void **unused)
{
    (void)unused;
    /* Java: Math.abs("txn-app".hashCode()) % 50 via Utils.abs. */
    assert_int_equal(txn_coord_partition_for("txn-app", 50),
                     group_coord_partition_for("txn-app", 50));
    assert_int_equal(txn_coord_partition_for("", 50), 0);
    assert_int_not_equal(txn_coord_record_key("a"), txn_coord_record_key("b"));
    assert_int_not_equal(txn_coord_record_key("a"), 0);
    assert_string_equal(txn_state_name(TXN_STATE_PREPARE_COMMIT), "PrepareCommit");
    /* A plain batch is not a transaction record. */
    g_autoptr(PlogBatch) plain = plog_batch_new();
    plog_batch_add_record(plain, 7, 42, 10);
    TxnLogRecord record;
    assert_false(txn_coord_decode(plain, &record));
}

/* The log's transaction state: an open transaction holds the first unstable
 * offset; an abort adds an aborted entry; a commit none; recovery after a
 * crash rebuilds both from the log. */
static void
test_txn_plog_state_survives_restart(void **unused)
{
    (void)unused;
    static const SimNodeOps ops = {0};
    SimWorld *world = sim_world_new(3);
    SimNodeId node = sim_node_add(world, "n", &ops, NULL);
    PlogConfig config;
    kconfig_bind_log_defaults(&config);
    Plog *log = plog_open(world, node, "t", 0, &config);
    SimDiskStatus status;
    /* Producer 7 opens a transaction at 0; producer 8 at 2; plain data at 1. */
    PlogBatch *batch = plog_batch_new();
    batch->producer_id = 7;
    batch->producer_epoch = 0;
    batch->base_sequence = 0;
    batch->attributes = PLOG_BATCH_TRANSACTIONAL;
    plog_batch_add_record(batch, 0, 1, 10);
    plog_append(log, batch, 0, &status);
    plog_batch_free(batch);
    batch = plog_batch_new();
    plog_batch_add_record(batch, 0, 2, 10);
    plog_append(log, batch, 0, &status);
    plog_batch_free(batch);
    batch = plog_batch_new();
    batch->producer_id = 8;
    batch->producer_epoch = 0;
    batch->base_sequence = 0;
    batch->attributes = PLOG_BATCH_TRANSACTIONAL;
    plog_batch_add_record(batch, 0, 3, 10);
    plog_append(log, batch, 0, &status);
    plog_batch_free(batch);
    assert_int_equal(plog_first_unstable_offset(log), 0);
    /* Producer 7 aborts (marker at 3), producer 8 commits (marker at 4). */
    for (gint64 pid = 7; pid <= 8; pid++) {
        batch = plog_batch_new();
        batch->producer_id = pid;
        batch->producer_epoch = 0;
        batch->attributes = PLOG_BATCH_TRANSACTIONAL | PLOG_BATCH_CONTROL |
                            (pid == 8 ? PLOG_BATCH_CONTROL_COMMIT : 0);
        plog_batch_add_record(batch, pid == 8, 0, 10);
        plog_append(log, batch, 0, &status);
        plog_batch_free(batch);
        assert_int_equal(plog_first_unstable_offset(log), pid == 7 ? 2 : -1);
    }
    const GArray *aborted = plog_txn_state_aborted(plog_txn_state(log));
    assert_int_equal(aborted->len, 1);
    const PlogAbortedTxn *entry = &g_array_index(aborted, PlogAbortedTxn, 0);
    assert_int_equal(entry->producer_id, 7);
    assert_int_equal(entry->first_offset, 0);
    assert_int_equal(entry->last_offset, 3);
    /* A new transaction of 7, left open. */
    batch = plog_batch_new();
    batch->producer_id = 7;
    batch->producer_epoch = 0;
    batch->base_sequence = 1;
    batch->attributes = PLOG_BATCH_TRANSACTIONAL;
    plog_batch_add_record(batch, 0, 4, 10);
    plog_append(log, batch, 0, &status);
    plog_batch_free(batch);
    assert_int_equal(plog_first_unstable_offset(log), 5);
    g_autoptr(GArray) overlap = g_array_new(FALSE, FALSE, sizeof(PlogAbortedTxn));
    plog_txn_state_collect_aborted(plog_txn_state(log), 3, 6, overlap);
    assert_int_equal(overlap->len, 1);
    g_array_set_size(overlap, 0);
    plog_txn_state_collect_aborted(plog_txn_state(log), 4, 6, overlap);
    assert_int_equal(overlap->len, 0);
    /* A crash and a restart: recovery rebuilds the same state. */
    plog_free(log);
    sim_node_crash(world, node);
    sim_node_restart(world, node);
    log = plog_open(world, node, "t", 0, &config);
    assert_int_equal(plog_log_end_offset(log), 6);
    assert_int_equal(plog_first_unstable_offset(log), 5);
    aborted = plog_txn_state_aborted(plog_txn_state(log));
    assert_int_equal(aborted->len, 1);
    assert_int_equal(g_array_index(aborted, PlogAbortedTxn, 0).last_offset, 3);
    /* Truncating the open transaction away closes it. */
    plog_truncate_to(log, 5);
    assert_int_equal(plog_first_unstable_offset(log), -1);
    plog_check_invariants(log);
    plog_free(log);
    sim_world_free(world);
}

/* ---- the coordinator's state machine ---- */

static void
test_txn_commit_writes_prepare_markers_complete(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(41, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    assert_true(producer_id(producer) >= 0);
    assert_int_equal(producer_epoch(producer), 0);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 2);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 10, 2);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 10);
    /* Acknowledged but not committed: hidden from read_committed. */
    assert_int_equal(f->seen[committed]->len, 0);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_ONGOING);
    assert_int_equal(info.partitions, 2);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 2 * SIM_NS_PER_S);
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_COMMIT);
    assert_int_equal(info.markers_pending, 0);
    g_autoptr(GArray) states = logged_states(coordinator, TXN_ID);
    gint empty = find_state(states, TXN_STATE_EMPTY, 0);
    gint ongoing = find_state(states, TXN_STATE_ONGOING, 0);
    gint prepare = find_state(states, TXN_STATE_PREPARE_COMMIT, 0);
    gint complete = find_state(states, TXN_STATE_COMPLETE_COMMIT, 0);
    assert_true(empty == 0 && ongoing > empty && prepare > ongoing && complete > prepare);
    for (gint32 p = 0; p < 2; p++) {
        assert_int_equal(markers_in(f, p, TRUE), 1);
        assert_int_equal(markers_in(f, p, FALSE), 0);
        BrokerPartitionInfo pinfo = leader_info(f, p);
        assert_int_equal(pinfo.lso, pinfo.hw);
        assert_int_equal(pinfo.hw, 6); /* five records and the marker */
    }
    assert_int_equal(f->seen[committed]->len, 10);
    assert_int_equal(producer_txn_count(producer), 1);
    const ProducerTxnInfo *txn = producer_txn_info(producer, 0);
    assert_int_equal(txn->outcome, PRODUCER_TXN_COMMITTED);
    assert_int_equal(txn->ops->len, 10);
    assert_true(txn_seen(f, producer, 0, committed));
    /* The final state holds the data records only: the markers at offset
     * 5 of each partition are no reader's data. */
    cluster_record_final_state(f->cluster);
    const GArray *replicas = history_replicas(f->history);
    assert_true(replicas->len > 0);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *replica = &g_array_index(replicas, HistoryReplica, i);
        if (history_topic_name(f->history, replica->topic)[0] == '_')
            continue; /* internal topics */
        assert_int_equal(replica->records->len, 5);
        for (guint r = 0; r < replica->records->len; r++)
            assert_int_equal(g_array_index(replica->records, HistoryRecord, r).offset, (gint64)r);
    }
    fixture_free(f);
}

/* An abort: PrepareAbort, ABORT markers, CompleteAbort; the partition
 * remembers the aborted transaction; read_committed skips its records and
 * moves past them, read_uncommitted sees them. */
static void
test_txn_abort_is_skipped_by_read_committed(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(42, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 2);
    guint uncommitted = add_consumer(f, KAFKA_READ_UNCOMMITTED, 2);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 10, 2);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 10);
    end_txn(f, producer, FALSE, KAFKA_ERROR_NONE);
    /* A second transaction commits after it. */
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 4, 2);
    run_for(f, 1 * SIM_NS_PER_S);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 2 * SIM_NS_PER_S);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    g_autoptr(GArray) states = logged_states(coordinator, TXN_ID);
    gint prepare = find_state(states, TXN_STATE_PREPARE_ABORT, 0);
    gint complete = find_state(states, TXN_STATE_COMPLETE_ABORT, 0);
    assert_true(prepare >= 0 && complete > prepare);
    for (gint32 p = 0; p < 2; p++) {
        assert_int_equal(markers_in(f, p, FALSE), 1);
        assert_int_equal(markers_in(f, p, TRUE), 1);
        gint32 leader = cluster_leader(f->cluster, TOPIC, p);
        Plog *log = broker_partition_log(cluster_broker(f->cluster, leader), TOPIC, p);
        const GArray *aborted = plog_txn_state_aborted(plog_txn_state(log));
        assert_int_equal(aborted->len, 1);
        assert_int_equal(g_array_index(aborted, PlogAbortedTxn, 0).first_offset, 0);
        assert_int_equal(g_array_index(aborted, PlogAbortedTxn, 0).last_offset, 5);
        BrokerPartitionInfo info = leader_info(f, p);
        /* Every consumer moved past the markers to the end. */
        assert_int_equal(consumer_position(f->consumers[committed], TOPIC, p), info.hw);
        assert_int_equal(consumer_position(f->consumers[uncommitted], TOPIC, p), info.hw);
    }
    assert_int_equal(producer_txn_info(producer, 0)->outcome, PRODUCER_TXN_ABORTED);
    assert_int_equal(producer_txn_info(producer, 1)->outcome, PRODUCER_TXN_COMMITTED);
    assert_false(txn_seen(f, producer, 0, committed));
    assert_true(txn_seen(f, producer, 1, committed));
    assert_true(txn_seen(f, producer, 0, uncommitted));
    assert_true(txn_seen(f, producer, 1, uncommitted));
    assert_int_equal(f->seen[committed]->len, 4);
    assert_int_equal(f->seen[uncommitted]->len, 14);
    fixture_free(f);
}

/* An open transaction holds the LSO at its first offset while later
 * non-transactional records move the HW; read_committed sees nothing past
 * the LSO until the commit. */
static void
test_txn_open_transaction_holds_lso(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(43, 1);
    Producer *producer = add_producer(f, TXN_ID, 0);
    Producer *plain = add_producer(f, "", 0);
    init_ok(f, producer);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 1);
    guint uncommitted = add_consumer(f, KAFKA_READ_UNCOMMITTED, 1);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 5, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    send_many(f, plain, 5, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 10);
    BrokerPartitionInfo info = leader_info(f, 0);
    assert_int_equal(info.hw, 10);
    assert_int_equal(info.lso, 0);
    assert_int_equal(info.open_transactions, 1);
    assert_int_equal(f->seen[committed]->len, 0);
    assert_int_equal(f->seen[uncommitted]->len, 10);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 2 * SIM_NS_PER_S);
    info = leader_info(f, 0);
    assert_int_equal(info.hw, 11);
    assert_int_equal(info.lso, 11);
    assert_int_equal(info.open_transactions, 0);
    assert_int_equal(f->seen[committed]->len, 10);
    fixture_free(f);
}

/* ---- fencing ---- */

/* A second instance with the same transactional.id bumps the epoch: the
 * first one's open transaction is aborted, its later sends and its commit
 * fail with PRODUCER_FENCED, and none of its writes becomes visible under
 * read_committed. */
static void
test_txn_second_instance_fences_zombie(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(44, 2);
    Producer *zombie = add_producer(f, TXN_ID, 0);
    init_ok(f, zombie);
    gint16 zombie_epoch = producer_epoch(zombie);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 2);
    assert_int_equal(producer_begin_transaction(zombie), KAFKA_ERROR_NONE);
    send_many(f, zombie, 6, 2);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 6);
    Producer *fresh = add_producer(f, TXN_ID, 0);
    init_ok(f, fresh);
    assert_int_equal(producer_id(fresh), producer_id(zombie));
    /* PrepareAbort bumped it once to fence, InitProducerId once more. */
    assert_int_equal(producer_epoch(fresh), zombie_epoch + 2);
    /* The zombie goes on: its sends and its commit are refused. */
    guint failed_before = f->failed;
    send_many(f, zombie, 4, 2);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->failed - failed_before, 4);
    end_txn(f, zombie, TRUE, KAFKA_ERROR_PRODUCER_FENCED);
    assert_int_equal(producer_begin_transaction(zombie), KAFKA_ERROR_PRODUCER_FENCED);
    assert_int_equal(producer_txn_info(zombie, 0)->outcome, PRODUCER_TXN_FENCED);
    /* The new instance's transaction commits. */
    assert_int_equal(producer_begin_transaction(fresh), KAFKA_ERROR_NONE);
    send_many(f, fresh, 4, 2);
    run_for(f, 1 * SIM_NS_PER_S);
    end_txn(f, fresh, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_false(txn_seen(f, zombie, 0, committed));
    assert_true(txn_seen(f, fresh, 0, committed));
    assert_int_equal(f->seen[committed]->len, 4);
    fixture_free(f);
}

/* ---- failures between PrepareCommit and CompleteCommit ---- */

/* Runs in 50 us steps until the coordinator has written PrepareCommit. */
static void
run_until_prepared(Fixture *f, Broker *coordinator)
{
    gint64 end = sim_now_ns(f->world) + 10 * SIM_NS_PER_S;
    TxnCoordInfo info;
    do {
        sim_world_run_until(f->world, sim_now_ns(f->world) + 50 * SIM_NS_PER_US);
        txn_coord_describe(coordinator, TXN_ID, &info);
    } while (info.state != TXN_STATE_PREPARE_COMMIT && sim_now_ns(f->world) < end);
    assert_int_equal(info.state, TXN_STATE_PREPARE_COMMIT);
    assert_true(info.markers_pending > 0);
}

/* The leader of a partition in the transaction crashes right after
 * PrepareCommit: the coordinator retries its marker to the new leader, and
 * the transaction completes. */
static void
test_txn_marker_follows_leader_change(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(45, 3);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    /* A partition led by another broker than the coordinator. */
    gint32 victim_partition = -1;
    for (gint32 p = 0; p < 3 && victim_partition < 0; p++) {
        if (cluster_leader(f->cluster, TOPIC, p) != broker_id(coordinator))
            victim_partition = p;
    }
    assert_true(victim_partition >= 0);
    gint32 victim = cluster_leader(f->cluster, TOPIC, victim_partition);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 3);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 9, 3);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 9);
    Outcome outcome = {0};
    producer_commit_transaction(producer, outcome_cb, &outcome);
    run_until_prepared(f, coordinator);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, victim)));
    run_for(f, 20 * SIM_NS_PER_S);
    assert_true(outcome.done);
    assert_int_equal(outcome.error, KAFKA_ERROR_NONE);
    gint32 leader = cluster_leader(f->cluster, TOPIC, victim_partition);
    assert_true(leader > 0 && leader != victim);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_COMMIT);
    for (gint32 p = 0; p < 3; p++) {
        assert_int_equal(markers_in(f, p, TRUE), 1);
        BrokerPartitionInfo pinfo = leader_info(f, p);
        assert_int_equal(pinfo.lso, pinfo.hw);
    }
    assert_true(txn_seen(f, producer, 0, committed));
    fixture_free(f);
}

/* The coordinator crashes right after PrepareCommit: the broker that takes
 * over its __transaction_state partition loads PrepareCommit, writes the
 * markers and CompleteCommit. */
static void
test_txn_coordinator_failover_completes_commit(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(46, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 2);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 8, 2);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 8);
    Outcome outcome = {0};
    producer_commit_transaction(producer, outcome_cb, &outcome);
    run_until_prepared(f, coordinator);
    sim_node_crash(f->world, broker_node(coordinator));
    run_for(f, 20 * SIM_NS_PER_S);
    Broker *fresh = txn_coordinator(f, TXN_ID);
    assert_non_null(fresh);
    assert_true(fresh != coordinator);
    TxnCoordInfo info;
    txn_coord_describe(fresh, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_COMMIT);
    g_autoptr(GArray) states = logged_states(fresh, TXN_ID);
    gint prepare = find_state(states, TXN_STATE_PREPARE_COMMIT, 0);
    assert_true(prepare >= 0);
    assert_true(find_state(states, TXN_STATE_COMPLETE_COMMIT, (guint)prepare) > prepare);
    for (gint32 p = 0; p < 2; p++) {
        assert_int_equal(markers_in(f, p, TRUE), 1);
        BrokerPartitionInfo pinfo = leader_info(f, p);
        assert_int_equal(pinfo.lso, pinfo.hw);
    }
    assert_true(txn_seen(f, producer, 0, committed));
    /* The producer goes on with the new coordinator. */
    assert_true(outcome.done);
    assert_int_equal(outcome.error, KAFKA_ERROR_NONE);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 2);
    run_for(f, 1 * SIM_NS_PER_S);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    fixture_free(f);
}

/* ---- timeouts and offsets ---- */

/* A transaction left open past transaction.timeout.ms is aborted by the
 * coordinator with a bumped epoch: the LSO moves, its records stay hidden,
 * and the stalled producer's commit is fenced. */
static void
test_txn_timeout_aborts_stalled_transaction(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(47, 1);
    Producer *producer = add_producer(f, TXN_ID, 2000);
    init_ok(f, producer);
    guint committed = add_consumer(f, KAFKA_READ_COMMITTED, 1);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 3, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_ONGOING);
    gint16 epoch = info.producer_epoch;
    assert_int_equal(leader_info(f, 0).lso, 0);
    run_for(f, 3 * SIM_NS_PER_S);
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_ABORT);
    assert_int_equal(info.producer_epoch, epoch + 1);
    BrokerPartitionInfo pinfo = leader_info(f, 0);
    assert_int_equal(pinfo.lso, pinfo.hw);
    assert_int_equal(markers_in(f, 0, FALSE), 1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_PRODUCER_FENCED);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_false(txn_seen(f, producer, 0, committed));
    assert_int_equal(consumer_position(f->consumers[committed], TOPIC, 0), pinfo.hw);
    fixture_free(f);
}

/* Offsets to send: partition 1 of TOPIC at `offset`. (transfer full) */
static GArray *
offsets_one(gint64 offset)
{
    GArray *offsets = g_array_new(FALSE, TRUE, sizeof(KOffsetPartition));
    KOffsetPartition entry = {{NULL, 0}, offset, KAFKA_ERROR_NONE, -1};
    ktp_set(&entry.tp, TOPIC, 1);
    g_array_append_val(offsets, entry);
    return offsets;
}

/* sendOffsetsToTransaction: the group's offsets change only when the
 * transaction commits; an aborted transaction's offsets are dropped, also
 * when the coordinator reloads them from the log. */
static void
test_txn_offsets_commit_with_transaction(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(48, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    g_autoptr(GArray) offsets = offsets_one(42);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 2);
    Outcome sent = {0};
    producer_send_offsets_to_transaction(producer, GROUP, offsets, outcome_cb, &sent);
    run_until_done(f, &sent, 30 * SIM_NS_PER_S);
    assert_int_equal(sent.error, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    gint32 offsets_partition = group_coord_partition_for(GROUP, 3);
    gint32 group_leader = cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, offsets_partition);
    assert_true(group_leader > 0);
    Broker *group_broker = cluster_broker(f->cluster, group_leader);
    assert_int_equal(group_coord_committed_offset(group_broker, GROUP, TOPIC, 1), -1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(group_coord_committed_offset(group_broker, GROUP, TOPIC, 1), 42);
    /* An aborted transaction's offsets never count. */
    g_array_index(offsets, KOffsetPartition, 0).offset = 50;
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    Outcome again = {0};
    producer_send_offsets_to_transaction(producer, GROUP, offsets, outcome_cb, &again);
    run_until_done(f, &again, 30 * SIM_NS_PER_S);
    assert_int_equal(again.error, KAFKA_ERROR_NONE);
    end_txn(f, producer, FALSE, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(group_coord_committed_offset(group_broker, GROUP, TOPIC, 1), 42);
    assert_int_equal(producer_txn_info(producer, 1)->offsets->len, 1);
    /* The group coordinator fails over: the log replays the same. */
    sim_node_crash(f->world, broker_node(group_broker));
    run_for(f, 15 * SIM_NS_PER_S);
    gint32 new_leader = cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, offsets_partition);
    assert_true(new_leader > 0 && new_leader != group_leader);
    assert_int_equal(
        group_coord_committed_offset(cluster_broker(f->cluster, new_leader), GROUP, TOPIC, 1), 42);
    fixture_free(f);
}

/* KIP-447: offsets sent with a member's group metadata are refused when the
 * group does not know that member and generation, and the transaction can
 * only abort; a transaction that commits never carries them. */
static void
test_txn_offsets_fenced_by_generation(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(49, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    g_autoptr(GArray) offsets = offsets_one(42);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 2);
    Outcome sent = {0};
    producer_send_offsets_to_transaction_member(producer, GROUP, "gone-member", 7, offsets,
                                                outcome_cb, &sent);
    run_until_done(f, &sent, 30 * SIM_NS_PER_S);
    assert_int_equal(sent.error, KAFKA_ERROR_ILLEGAL_GENERATION);
    Outcome committed = {0};
    producer_commit_transaction(producer, outcome_cb, &committed);
    run_until_done(f, &committed, 30 * SIM_NS_PER_S);
    assert_int_not_equal(committed.error, KAFKA_ERROR_NONE);
    end_txn(f, producer, FALSE, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    gint32 offsets_partition = group_coord_partition_for(GROUP, 3);
    gint32 group_leader = cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, offsets_partition);
    assert_true(group_leader > 0);
    assert_int_equal(
        group_coord_committed_offset(cluster_broker(f->cluster, group_leader), GROUP, TOPIC, 1),
        -1);
    fixture_free(f);
}

/* After a second instance's InitProducerId bumped the epoch, requests of
 * the old epoch are fenced: AddPartitionsToTxn, EndTxn and a KIP-360 bump
 * all get PRODUCER_FENCED (Kafka's TransactionCoordinator), and the
 * transaction state keeps the new epoch. */
static void
test_txn_old_epoch_fenced_after_init_bump(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(48, 1);
    Producer *zombie = add_producer(f, TXN_ID, 0);
    init_ok(f, zombie);
    gint64 zombie_id = producer_id(zombie);
    gint16 old_epoch = producer_epoch(zombie);
    Producer *fresh = add_producer(f, TXN_ID, 0);
    init_ok(f, fresh);
    gint16 epoch = producer_epoch(fresh);
    assert_true(epoch > old_epoch);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    assert_int_equal(probe_txn_request(&probe, f, coordinator, KMSG_ADD_PARTITIONS_TO_TXN_REQUEST,
                                       zombie_id, old_epoch),
                     KAFKA_ERROR_PRODUCER_FENCED);
    assert_int_equal(
        probe_txn_request(&probe, f, coordinator, KMSG_END_TXN_REQUEST, zombie_id, old_epoch),
        KAFKA_ERROR_PRODUCER_FENCED);
    assert_int_equal(probe_init_producer_id(&probe, f, coordinator, TRUE, zombie_id, old_epoch),
                     KAFKA_ERROR_PRODUCER_FENCED);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.producer_epoch, epoch);
    assert_int_equal(info.partitions, 0);
    /* The current epoch is served. */
    assert_int_equal(producer_begin_transaction(fresh), KAFKA_ERROR_NONE);
    send_many(f, fresh, 2, 1);
    end_txn(f, fresh, TRUE, KAFKA_ERROR_NONE);
    fixture_free(f);
}

/* While a commit is being completed (PrepareCommit, markers pending),
 * InitProducerId and AddPartitionsToTxn for the id get
 * CONCURRENT_TRANSACTIONS, and the commit still completes (Kafka's
 * TransactionCoordinator). */
static void
test_txn_concurrent_transactions_while_completing(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(49, 1);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 3, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 3);
    /* Hold the markers back: the partition's leader hears nothing for a while. */
    Broker *leader = cluster_broker(f->cluster, cluster_leader(f->cluster, TOPIC, 0));
    if (leader != coordinator)
        sim_net_delay_next(sim_world_net(f->world), broker_node(coordinator), broker_node(leader),
                           4, 200 * SIM_NS_PER_MS);
    Outcome outcome = {0};
    producer_commit_transaction(producer, outcome_cb, &outcome);
    run_until_prepared(f, coordinator);
    assert_int_equal(probe_init_producer_id(&probe, f, coordinator, FALSE, -1, -1),
                     KAFKA_ERROR_CONCURRENT_TRANSACTIONS);
    assert_int_equal(probe_txn_request(&probe, f, coordinator, KMSG_ADD_PARTITIONS_TO_TXN_REQUEST,
                                       producer_id(producer), producer_epoch(producer)),
                     KAFKA_ERROR_CONCURRENT_TRANSACTIONS);
    run_until_done(f, &outcome, 30 * SIM_NS_PER_S);
    assert_true(outcome.done);
    assert_int_equal(outcome.error, KAFKA_ERROR_NONE);
    /* EndTxn is answered once PrepareCommit is written; the markers and
     * CompleteCommit follow. */
    run_for(f, 2 * SIM_NS_PER_S);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_COMMIT);
    assert_int_equal(markers_in(f, 0, TRUE), 1);
    fixture_free(f);
}


/* ---- KIP-890 ---- */

/* A request of transaction version `version` for TXN_ID as (producer_id,
 * epoch): AddPartitionsToTxn of TOPIC-`partition` (verifyOnly with
 * `verify_only`, as a leader sends it), or EndTxn (`commit`). */
static KafkaError
probe_txn_v(Probe *probe, Fixture *f, Broker *coordinator, KafkaMsgType type, gint64 producer_id,
            gint16 epoch, gint8 version, gboolean verify_only, gint32 partition, gboolean commit)
{
    KTxnMessage *request = kproto_new(type);
    request->correlation_id = probe_correlation_next(probe);
    g_strlcpy(request->transactional_id, TXN_ID, sizeof request->transactional_id);
    request->producer_id = producer_id;
    request->producer_epoch = epoch;
    request->committed = commit;
    request->transaction_version = version;
    request->verify_only = verify_only;
    if (type == KMSG_ADD_PARTITIONS_TO_TXN_REQUEST) {
        KTopicPartition tp;
        ktp_set(&tp, TOPIC, partition);
        g_array_append_val(request->partitions, tp);
    }
    return probe_ask(probe, f, coordinator, &request->base);
}

/* Kafka's handleVerifyPartitionsInTransaction: a partition of the ongoing
 * transaction verifies, one outside it or after the transaction ended is
 * INVALID_TXN_STATE (Kafka's TRANSACTION_ABORTABLE as the leader passes it
 * on), an older epoch is fenced. */
static void
test_txn_verify_partition_in_transaction(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(50, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    gint64 pid = producer_id(producer);
    gint16 epoch = producer_epoch(producer);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    f->counter = 1; /* round robin over one partition from 0: partition 0 */
    send_many(f, producer, 1, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    KafkaMsgType add = KMSG_ADD_PARTITIONS_TO_TXN_REQUEST;
    assert_int_equal(probe_txn_v(&probe, f, coordinator, add, pid, epoch, 0, TRUE, 0, FALSE),
                     KAFKA_ERROR_NONE);
    assert_int_equal(probe_txn_v(&probe, f, coordinator, add, pid, epoch, 0, TRUE, 1, FALSE),
                     KAFKA_ERROR_INVALID_TXN_STATE);
    assert_int_equal(probe_txn_v(&probe, f, coordinator, add, pid, epoch - 1, 0, TRUE, 0, FALSE),
                     KAFKA_ERROR_PRODUCER_FENCED);
    /* Verification adds nothing. */
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.partitions, 1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(probe_txn_v(&probe, f, coordinator, add, pid, epoch, 0, TRUE, 0, FALSE),
                     KAFKA_ERROR_INVALID_TXN_STATE);
    fixture_free(f);
}

/* A transactional batch of `producer` for TOPIC-0 with the sequence that
 * follows its last one there, sent raw to the partition's leader, as a late
 * Produce would arrive. */
static KafkaError
probe_late_batch(Probe *probe, Fixture *f, Producer *producer)
{
    Broker *leader = cluster_broker(f->cluster, cluster_leader(f->cluster, TOPIC, 0));
    Plog *log = broker_partition_log(leader, TOPIC, 0);
    gint16 epoch;
    const GArray *batches = NULL;
    assert_true(plog_producer_state_lookup(plog_producer_state(log), producer_id(producer),
                                           &epoch, &batches));
    assert_true(batches->len > 0);
    KProduceRequest *request = kproto_new(KMSG_PRODUCE_REQUEST);
    request->correlation_id = probe_correlation_next(probe);
    ktp_set(&request->tp, TOPIC, 0);
    request->acks = -1;
    request->timeout_ms = 30000;
    g_strlcpy(request->transactional_id, TXN_ID, sizeof request->transactional_id);
    request->transaction_version = (gint8)f->transaction_version;
    request->batch = plog_batch_new();
    request->batch->producer_id = producer_id(producer);
    request->batch->producer_epoch = producer_epoch(producer);
    request->batch->base_sequence =
        g_array_index(batches, PlogProducerBatchInfo, batches->len - 1).last_sequence + 1;
    request->batch->attributes = PLOG_BATCH_TRANSACTIONAL;
    plog_batch_add_record(request->batch, 0, HISTORY_VALUE(99, 1), RECORD_BYTES);
    kproto_update_size(&request->base);
    return probe_request(probe, f->world, broker_node(leader), &request->base,
                         50 * SIM_NS_PER_US);
}

/* A batch that arrives after its transaction was committed: without
 * verification the leader appends it and it opens a transaction no marker
 * will close (the LSO held: a hanging transaction); with
 * transaction.partition.verification.enable the coordinator says the
 * partition is not in an ongoing transaction and the leader refuses it with
 * INVALID_TXN_STATE. */
static void
late_batch_after_commit(gboolean verification, KafkaError expected, guint open_expected)
{
    Fixture *f = fixture_new_kip890(51, 1, verification, 0);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 3, 1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(leader_info(f, 0).open_transactions, 0);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    assert_int_equal(probe_late_batch(&probe, f, producer), expected);
    run_for(f, 1 * SIM_NS_PER_S);
    BrokerPartitionInfo info = leader_info(f, 0);
    assert_int_equal(info.open_transactions, open_expected);
    if (open_expected > 0)
        assert_true(info.lso < info.hw);
    fixture_free(f);
}

static void
test_txn_late_batch_hangs_without_verification(void **unused)
{
    (void)unused;
    late_batch_after_commit(FALSE, KAFKA_ERROR_NONE, 1);
}

static void
test_txn_late_batch_refused_by_verification(void **unused)
{
    (void)unused;
    late_batch_after_commit(TRUE, KAFKA_ERROR_INVALID_TXN_STATE, 0);
}

/* A delayed EndTxn(commit) of an earlier transaction, same epoch, reaching
 * the coordinator during the next one: transaction version 0 commits that
 * one early; version 2 bumped the epoch at the first commit, so it is
 * fenced, and the producer's own commit of the second goes through. */
static void
late_end_txn(gint32 version)
{
    Fixture *f = fixture_new_kip890(52, 1, version >= 2, version);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    assert_non_null(coordinator);
    gint64 pid = producer_id(producer);
    gint16 first_epoch = producer_epoch(producer);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    /* Version 2: the EndTxn response carried the bumped epoch. */
    assert_int_equal(producer_epoch(producer), version >= 2 ? first_epoch + 1 : first_epoch);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_ONGOING);
    /* Version 2 added the partition through the produce (the leader's add). */
    assert_int_equal(info.partitions, 1);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    KafkaError late = probe_txn_v(&probe, f, coordinator, KMSG_END_TXN_REQUEST, pid, first_epoch,
                                  (gint8)version, FALSE, 0, TRUE);
    run_for(f, 1 * SIM_NS_PER_S);
    txn_coord_describe(coordinator, TXN_ID, &info);
    if (version >= 2) {
        assert_int_equal(late, KAFKA_ERROR_PRODUCER_FENCED);
        assert_int_equal(info.state, TXN_STATE_ONGOING);
        end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
        assert_int_equal(producer_epoch(producer), first_epoch + 2);
        /* A retry of that EndTxn (its epoch, one below) succeeds. */
        assert_int_equal(probe_txn_v(&probe, f, coordinator, KMSG_END_TXN_REQUEST, pid,
                                     (gint16)(first_epoch + 1), 2, FALSE, 0, TRUE),
                         KAFKA_ERROR_NONE);
    } else {
        /* The second transaction was committed behind its producer's back. */
        assert_int_equal(late, KAFKA_ERROR_NONE);
        assert_int_equal(info.state, TXN_STATE_COMPLETE_COMMIT);
    }
    fixture_free(f);
}

static void
test_txn_v0_late_end_txn_commits_next_transaction(void **unused)
{
    (void)unused;
    late_end_txn(0);
}

static void
test_txn_v2_late_end_txn_fenced_by_epoch_bump(void **unused)
{
    (void)unused;
    late_end_txn(2);
}

/* Version 2: an abort bumps the epoch too, and closes the sequence gap of a
 * failed batch without InitProducerId; an abort with nothing added at the
 * coordinator still ends (and bumps). */
static void
test_txn_v2_abort_bumps_epoch(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new_kip890(53, 1, TRUE, 2);
    Producer *producer = add_producer(f, TXN_ID, 0);
    init_ok(f, producer);
    gint16 epoch = producer_epoch(producer);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 2);
    end_txn(f, producer, FALSE, KAFKA_ERROR_NONE);
    assert_int_equal(producer_epoch(producer), epoch + 1);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(markers_in(f, 0, FALSE), 1);
    assert_int_equal(producer_begin_transaction(producer), KAFKA_ERROR_NONE);
    send_many(f, producer, 2, 1);
    end_txn(f, producer, TRUE, KAFKA_ERROR_NONE);
    assert_int_equal(producer_epoch(producer), epoch + 2);
    assert_int_equal(f->acked, 4);
    /* Nothing open at the coordinator (the last transaction completed):
     * a version 2 abort of the current epoch bumps and completes. */
    Broker *coordinator = txn_coordinator(f, TXN_ID);
    Probe probe;
    probe_init(&probe, f->world, read_txn_answer);
    assert_int_equal(probe_txn_v(&probe, f, coordinator, KMSG_END_TXN_REQUEST,
                                 producer_id(producer), (gint16)(epoch + 2), 2, FALSE, 0, FALSE),
                     KAFKA_ERROR_NONE);
    run_for(f, 1 * SIM_NS_PER_S);
    TxnCoordInfo info;
    txn_coord_describe(coordinator, TXN_ID, &info);
    assert_int_equal(info.state, TXN_STATE_COMPLETE_ABORT);
    assert_int_equal(info.producer_epoch, epoch + 3);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_txn_partition_and_record_encoding),
        cmocka_unit_test(test_txn_offsets_fenced_by_generation),
        cmocka_unit_test(test_txn_plog_state_survives_restart),
        cmocka_unit_test(test_txn_commit_writes_prepare_markers_complete),
        cmocka_unit_test(test_txn_abort_is_skipped_by_read_committed),
        cmocka_unit_test(test_txn_open_transaction_holds_lso),
        cmocka_unit_test(test_txn_second_instance_fences_zombie),
        cmocka_unit_test(test_txn_marker_follows_leader_change),
        cmocka_unit_test(test_txn_coordinator_failover_completes_commit),
        cmocka_unit_test(test_txn_timeout_aborts_stalled_transaction),
        cmocka_unit_test(test_txn_offsets_commit_with_transaction),
        cmocka_unit_test(test_txn_old_epoch_fenced_after_init_bump),
        cmocka_unit_test(test_txn_concurrent_transactions_while_completing),
        cmocka_unit_test(test_txn_verify_partition_in_transaction),
        cmocka_unit_test(test_txn_late_batch_hangs_without_verification),
        cmocka_unit_test(test_txn_late_batch_refused_by_verification),
        cmocka_unit_test(test_txn_v0_late_end_txn_commits_next_transaction),
        cmocka_unit_test(test_txn_v2_late_end_txn_fenced_by_epoch_bump),
        cmocka_unit_test(test_txn_v2_abort_bumps_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
