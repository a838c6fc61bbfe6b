/*
 * replica_produce: Produce on a partition leader (Kafka's
 * ReplicaManager.appendRecords) — the checks (leadership, min.insync.replicas,
 * the idempotent producer's sequence), the append, and the answer: at once
 * for acks=0 and acks=1, or through the produce purgatory (replica_hw.c)
 * once the HW passes the batch for acks=-1. The coordinators' internal
 * appends (offset commits, transaction state, markers) take the same path
 * with acks=-1 and a callback in place of a client.
 *
 * Stateless beyond the partition table and the purgatory it feeds.
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"

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


static KafkaError
check_producer(Partition *p, const PlogBatch *batch, gint64 *duplicate_base)
{
    if (batch->producer_id < 0)
        return KAFKA_ERROR_NONE;
    PlogProducerVerdict verdict;
    plog_producer_check(p->log, batch->producer_id, batch->producer_epoch, batch->base_sequence,
                        batch->record_count, &verdict);
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
answer_appended(BrokerState *state, Partition *p, SimNodeId from, const KProduceRequest *request,
                gint64 base, gint64 end)
{
    if (request->acks == 0) {
        replica_hw_record_ack(state, p, base, end, 0);
        return;
    }
    if (request->acks == 1 || end <= p->hw) {
        KafkaError error = KAFKA_ERROR_NONE;
        if (request->acks == -1 && (gint32)p->n_isr < p->config.min_insync_replicas)
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

void
replica_handle_produce(BrokerState *state, SimNodeId from, KProduceRequest *request)
{
    Broker *broker = state->broker;
    Partition *p = replica_get(state, &request->tp);
    KafkaError error = KAFKA_ERROR_NONE;
    if (p == NULL)
        error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    else if (!p->is_leader)
        error = KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    else if (request->acks == -1 && (gint32)p->n_isr < p->config.min_insync_replicas)
        error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    gint64 duplicate_base = -1;
    if (error == KAFKA_ERROR_NONE)
        error = check_producer(p, request->batch, &duplicate_base);
    if (error == KAFKA_ERROR_NOT_ENOUGH_REPLICAS)
        SIM_MARK(broker->world, not_enough_replicas);
    if (error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH)
        SIM_MARK(broker->world, fenced_zombie_write);
    if (error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER)
        SIM_MARK(broker->world, duplicate_sequence);
    if (error == KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER)
        SIM_MARK(broker->world, out_of_order_sequence);
    if (error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER) {
        /* A retried batch already in the log: answer as the first time. */
        answer_appended(state, p, from, request, duplicate_base,
                        duplicate_base + request->batch->record_count);
        return;
    }
    if (error != KAFKA_ERROR_NONE) {
        if (request->acks != 0)
            replica_produce_respond(state, from, request->correlation_id, &request->tp, error, -1, -1);
        return;
    }
    request->batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 base = plog_append(p->log, request->batch, broker_now_ms(broker), &status);
    if (status != SIM_DISK_OK) {
        if (request->acks != 0)
            replica_produce_respond(state, from, request->correlation_id, &request->tp,
                            KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, -1);
        return;
    }
    gint64 end = base + request->batch->record_count;
    replica_hw_maybe_increment(state, p);
    replica_fetch_try_complete(state, p, FALSE);
    answer_appended(state, p, from, request, base, end);
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
    else if ((gint32)p->n_isr < p->config.min_insync_replicas)
        error = KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    else if (producer_epoch_is_stale(p, batch))
        error = KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    if (error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH)
        SIM_MARK(broker->world, fenced_zombie_write);
    if (error != KAFKA_ERROR_NONE) {
        done_cb(state, error, -1, done_id);
        return;
    }
    batch->leader_epoch = p->leader_epoch;
    SimDiskStatus status = SIM_DISK_OK;
    gint64 base = plog_append(p->log, batch, broker_now_ms(broker), &status);
    if (status != SIM_DISK_OK) {
        done_cb(state, KAFKA_ERROR_KAFKA_STORAGE_ERROR, -1, done_id);
        return;
    }
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
