/*
 * replica_produce: Produce on a partition leader (Kafka's
 * ReplicaManager.appendRecords) — the checks (leadership, min.insync.replicas,
 * the idempotent producer's sequence), the append, and the answer: at once
 * for acks=0 and acks=1, or through the produce purgatory (replica_hw.c)
 * once the HW passes the batch for acks=-1. A transactional producer's first
 * batch in a partition may first be verified with its transaction
 * coordinator (replica_verify.c, KIP-890), and is then appended only with
 * the verification's guard (UnifiedLog's batchMissingRequiredVerification).
 * The coordinators' internal appends (offset commits, transaction state,
 * markers) take the same path with acks=-1 and a callback in place of a
 * client.
 *
 * Stateless beyond the partition table and the purgatory it feeds.
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"
#include "sim_disk.h"

/* ---- produce (leader side) ---- */

void
replica_produce_respond(BrokerState *state, SimNodeId client, gint32 correlation_id,
                const KTopicPartition *tp, KafkaError error, gint64 base_offset, gint64 log_start)
{
    KProduceResponse *response = kproto_new(KMSG_PRODUCE_RESPONSE);
    response->correlation_id = correlation_id;
    response->tp = *tp;
    response->error = error;
    response->base_offset = error == KAFKA_ERROR_NONE ? base_offset : -1;
    response->log_start_offset = log_start;
    broker_send(state, client, &response->base);
}


/* Kafka's UnifiedLog.batchMissingRequiredVerification: a transactional data
 * batch of a producer with no open transaction here is appended only with
 * the guard of a verification this log still remembers for it (a marker or
 * another first batch since then cleared it). Required when the broker
 * verifies (transaction.partition.verification.enable) and for a client of
 * transaction version 2, whose partitions only the verification adds. */
static gboolean
missing_verification(const BrokerState *state, const Partition *p, const ProduceAsk *ask,
                     const PlogBatch *batch, guint64 guard)
{
    if (!state->broker->config.transaction_partition_verification_enable &&
        ask->transaction_version < 2)
        return FALSE;
    if ((batch->attributes & PLOG_BATCH_TRANSACTIONAL) == 0 ||
        (batch->attributes & PLOG_BATCH_CONTROL) != 0)
        return FALSE;
    const PlogTxnState *txns = plog_txn_state(p->log);
    if (plog_txn_state_is_ongoing(txns, batch->producer_id))
        return FALSE;
    return guard == 0 || plog_txn_state_verification_guard(txns, batch->producer_id) != guard;
}

/* Kafka's analyzeAndValidateProducerState, in its order: a duplicate, then
 * the verification guard, then the epoch and the sequence. */
static KafkaError
check_producer(const BrokerState *state, Partition *p, const ProduceAsk *ask,
               const PlogBatch *batch, guint64 guard, gint64 *duplicate_base)
{
    if (batch->producer_id < 0)
        return KAFKA_ERROR_NONE;
    PlogProducerVerdict verdict;
    plog_producer_check(p->log, batch->producer_id, batch->producer_epoch, batch->base_sequence,
                        batch->record_count, &verdict);
    if (verdict.status != PLOG_PRODUCER_DUPLICATE &&
        missing_verification(state, p, ask, batch, guard))
        return KAFKA_ERROR_INVALID_TXN_STATE;
    switch (verdict.status) {
    case PLOG_PRODUCER_OK:
        return KAFKA_ERROR_NONE;
    case PLOG_PRODUCER_DUPLICATE:
        *duplicate_base = verdict.duplicate_base_offset;
        return KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER;
    case PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE:
        return KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    case PLOG_PRODUCER_INVALID_PRODUCER_EPOCH:
        return KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    }
    return KAFKA_ERROR_UNKNOWN_PRODUCER_ID;
}

static void
answer_appended(BrokerState *state, Partition *p, SimNodeId from, const ProduceAsk *request,
                gint64 base, gint64 end)
{
    if (request->acks == 0) {
        replica_hw_record_ack(state, p, base, end, 0);
        return;
    }
    if (request->acks == 1 || end <= p->hw) {
        KafkaError error = KAFKA_ERROR_NONE;
        if (request->acks == -1 && (gint32)p->n_isr < p->config->min_insync_replicas)
            error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND;
        if (error == KAFKA_ERROR_NONE)
            replica_hw_record_ack(state, p, base, end, request->acks);
        replica_produce_respond(state, from, request->correlation_id, &p->tp, error, base,
                        plog_log_start_offset(p->log));
        return;
    }
    DelayedProduce *delayed = g_new0(DelayedProduce, 1);
    delayed->correlation_id = request->correlation_id;
    delayed->client = from;
    delayed->tp = p->tp;
    delayed->base_offset = base;
    delayed->required_offset = end;
    delayed->acks = request->acks;
    delayed->state = state;
    replica_hw_delay_produce(state, p, delayed, request->timeout_ms);
}

/* A produce whose append keeps the request handler waiting on the disk
 * (sim_disk.h, "Timing"): Kafka's Log.append returns once its write() into
 * the page cache has, and only then does ReplicaManager.appendRecords answer
 * (acks=1) or put the request in the produce purgatory (acks=all). */
typedef struct {
    Broker *broker;
    KTopicPartition tp;
    ProduceAsk ask;
    gint64 base;
    gint64 end;
} AppendWait;

static void
append_wait_drop(void *ctx, void *arg, guint64 arg_u64)
{
    (void)ctx;
    (void)arg_u64;
    g_free(arg);
}

static void
append_wait_done(void *ctx, void *arg, guint64 arg_u64)
{
    (void)ctx;
    (void)arg_u64;
    AppendWait *wait = arg;
    BrokerState *state = wait->broker->state;
    KSIM_ASSERT(state != NULL);
    Partition *p = replica_get(state, &wait->tp);
    /* acks=all waits for the HW only while this broker leads; an acks=1
     * append is done and answered as such. */
    if (p == NULL || (!p->is_leader && wait->ask.acks == -1))
        replica_produce_respond(state, wait->ask.client, wait->ask.correlation_id, &wait->tp,
                                KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER, -1, -1);
    else
        answer_appended(state, p, wait->ask.client, &wait->ask, wait->base, wait->end);
    g_free(wait);
}

static void
answer_after_append(BrokerState *state, Partition *p, const ProduceAsk *ask, gint64 base,
                    gint64 end, gint64 stall_ns)
{
    Broker *broker = state->broker;
    if (stall_ns == 0 || ask->acks == 0) {
        answer_appended(state, p, ask->client, ask, base, end);
        return;
    }
    AppendWait *wait = g_new0(AppendWait, 1);
    wait->broker = broker;
    wait->tp = p->tp;
    wait->ask = *ask;
    wait->base = base;
    wait->end = end;
    sim_world_schedule_for(broker->world, broker->node, sim_now_ns(broker->world) + stall_ns,
                           append_wait_done, append_wait_drop, wait, 0);
}

/* BrokerTopicMetrics as ReplicaManager.appendToLocalLog (Kafka 3.9) marks
 * them: messagesInRate and bytesInRate for an append that did not throw... */
static void
count_append(Broker *broker, const PlogBatch *batch)
{
    broker_record_metric(broker, HISTORY_METRIC_APPEND, (guint32)batch->record_count,
                         plog_batch_size_bytes(batch));
}

/* ...and failedProduceRequestRate for one that did, except the errors it
 * calls expected: UnknownTopicOrPartition, NotLeaderOrFollower,
 * RecordTooLarge, RecordBatchTooLarge, CorruptRecord, KafkaStorage. */
static void
count_failed_append(Broker *broker, KafkaError error)
{
    if (error != KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION &&
        error != KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER && error != KAFKA_ERROR_KAFKA_STORAGE_ERROR)
        broker_record_metric(broker, HISTORY_METRIC_PRODUCE_FAILED, 1, error);
}

/* The leadership and min.insync.replicas checks of a produce. */
static KafkaError
check_leader(const Partition *p, gint16 acks)
{
    if (p == NULL)
        return KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    if (!p->is_leader)
        return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    if (acks == -1 && (gint32)p->n_isr < p->config->min_insync_replicas)
        return KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    return KAFKA_ERROR_NONE;
}

static void produce_append(BrokerState *state, Partition *p, const KTopicPartition *tp,
                           const ProduceAsk *ask, PlogBatch *batch, KafkaError error,
                           guint64 guard);

void
replica_handle_produce(BrokerState *state, SimNodeId from, KProduceRequest *request)
{
    Partition *p = replica_get(state, &request->tp);
    KafkaError error = check_leader(p, request->acks);
    ProduceAsk ask = {from, request->correlation_id, request->acks, request->timeout_ms,
                      request->transaction_version};
    if (error == KAFKA_ERROR_NONE && replica_verify_needed(state, p, request)) {
        replica_verify_start(state, p, &ask, request);
        return;
    }
    produce_append(state, p, &request->tp, &ask, request->batch, error, 0);
}

void
replica_produce_verified(BrokerState *state, const KTopicPartition *tp, const ProduceAsk *ask,
                         PlogBatch *batch, KafkaError error, guint64 guard)
{
    Partition *p = replica_get(state, tp);
    if (error == KAFKA_ERROR_NONE)
        error = check_leader(p, ask->acks);
    produce_append(state, p, tp, ask, batch, error, guard);
    plog_batch_free(batch);
}

/* The append part of Kafka's appendRecords: the producer checks, the append
 * and the answer; `error` is an earlier check's, or NONE. */
static void
produce_append(BrokerState *state, Partition *p, const KTopicPartition *tp, const ProduceAsk *ask,
               PlogBatch *batch, KafkaError error, guint64 guard)
{
    Broker *broker = state->broker;
    SimNodeId from = ask->client;
    gint64 duplicate_base = -1;
    if (error == KAFKA_ERROR_NONE)
        error = check_producer(state, p, ask, batch, guard, &duplicate_base);
    if (error == KAFKA_ERROR_INVALID_TXN_STATE)
        SIM_MARK(broker->world, txn_verification_refused);
    if (error == KAFKA_ERROR_NOT_ENOUGH_REPLICAS)
        SIM_MARK(broker->world, not_enough_replicas);
    if (error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH)
        SIM_MARK(broker->world, fenced_zombie_write);
    if (error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER)
        SIM_MARK(broker->world, duplicate_sequence);
    if (error == KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER)
        SIM_MARK(broker->world, out_of_order_sequence);
    if (error != KAFKA_ERROR_NONE && error != KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER)
        count_failed_append(broker, error);
    if (error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER) {
        /* Kafka's UnifiedLog appends nothing for a duplicate, yet
         * appendToLocalLog marks the batch in bytesInRate and messagesInRate
         * as for any append that did not throw. */
        count_append(broker, batch);
        /* A retried batch already in the log: answer as the first time. */
        answer_appended(state, p, from, ask, duplicate_base, duplicate_base + batch->record_count);
        return;
    }
    if (error != KAFKA_ERROR_NONE) {
        if (ask->acks != 0)
            replica_produce_respond(state, from, ask->correlation_id, tp, error, -1, -1);
        return;
    }
    batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    sim_disk_call_begin(disk);
    gint64 size = plog_size_bytes(p->log);
    gint64 base = plog_append(p->log, batch, broker_now_ms(broker), &status);
    gint64 stall_ns = sim_disk_call_stall_ns(disk);
    if (broker_log_dir_status(state, status, "produce append") != SIM_DISK_OK) {
        if (ask->acks != 0)
            replica_produce_respond(state, from, ask->correlation_id, tp,
                                    KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, -1);
        return;
    }
    count_append(broker, batch);
    gint64 end = base + batch->record_count;
    replica_fetch_appended(state, p, plog_size_bytes(p->log) - size);
    replica_hw_maybe_increment(state, p);
    replica_fetch_try_complete(state, p, FALSE);
    answer_after_append(state, p, ask, base, end, stall_ns);
}

/* A coordinator's batch for a producer (a transaction marker, a
 * transactional offset commit) whose epoch is older than the one the log
 * knows: a fenced producer's, refused as Kafka's ProducerStateManager does. */
static gboolean
producer_epoch_is_stale(const Partition *p, const PlogBatch *batch)
{
    gint16 epoch;
    if (batch->producer_id < 0 ||
        !plog_producer_state_lookup(plog_producer_state(p->log), batch->producer_id, &epoch, NULL))
        return FALSE;
    return epoch != PLOG_NO_PRODUCER_EPOCH && batch->producer_epoch < epoch;
}

void
replica_append_internal(BrokerState *state, const KTopicPartition *tp, PlogBatch *batch,
                        gint64 timeout_ms, ReplicaAppendCb done_cb, guint64 done_id)
{
    Broker *broker = state->broker;
    KSIM_ASSERT(done_cb != NULL);
    Partition *p = replica_get(state, tp);
    KafkaError error = KAFKA_ERROR_NONE;
    if (p == NULL)
        error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!p->is_leader)
        error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    else if ((gint32)p->n_isr < p->config->min_insync_replicas)
        error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    else if (producer_epoch_is_stale(p, batch))
        error = KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    if (error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH)
        SIM_MARK(broker->world, fenced_zombie_write);
    if (error != KAFKA_ERROR_NONE) {
        count_failed_append(broker, error);
        done_cb(state, error, -1, done_id);
        return;
    }
    batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 size = plog_size_bytes(p->log);
    gint64 base = plog_append(p->log, batch, broker_now_ms(broker), &status);
    if (broker_log_dir_status(state, status, "append") != SIM_DISK_OK) {
        done_cb(state, KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, done_id);
        return;
    }
    count_append(broker, batch);
    replica_fetch_appended(state, p, plog_size_bytes(p->log) - size);
    DelayedProduce *delayed = g_new0(DelayedProduce, 1);
    delayed->client = SIM_NODE_NONE;
    delayed->tp = p->tp;
    delayed->base_offset = base;
    delayed->required_offset = base + batch->record_count;
    delayed->acks = -1;
    delayed->state = state;
    delayed->done_cb = done_cb;
    delayed->done_id = done_id;
    /* Queued before the HW may move, so a single-replica ISR completes it
     * at once through the purgatory like any other. */
    replica_hw_delay_produce(state, p, delayed, timeout_ms);
    replica_hw_maybe_increment(state, p);
    replica_fetch_try_complete(state, p, FALSE);
}
