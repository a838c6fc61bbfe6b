/*
 * replica_hw: where the high watermark advances — on a leader to the smallest
 * LEO of its ISR (Kafka's Partition.maybeIncrementLeaderHW), on a follower to
 * its leader's HW as its fetch answer carries it — with the produce purgatory
 * that waits for it (Kafka's DelayedProduce) and the HW checkpoint that keeps
 * it across a restart (Kafka's replication-offset-checkpoint, read back by
 * replica_recovery.c).
 *
 * Invariants (replica_hw_check_invariants):
 *  1. hw <= LEO for every replica, and hw >= the log start offset.
 *  2. A partition's delayed produces all have required offset > hw (each
 *     leaves the queue as soon as the HW reaches it), and only a leader has
 *     any. They wait in the order they arrived, which is not the order of
 *     their offsets: a retried batch the log already holds waits for its
 *     original offsets, behind later batches (replica_produce.c).
 *
 * Transitions of a delayed produce (replica_hw_delay_produce adds it):
 *   QUEUED --HW passes it--> answered (replica_hw_try_complete_produces)
 *   QUEUED --request timeout--> REQUEST_TIMED_OUT (delayed_produce_timeout)
 *   QUEUED --leadership lost--> NOT_LEADER (replica_hw_fail_produces)
 * The checkpoint: IDLE --timer--> WRITING (tmp written, fsync pending)
 *   --fsync done--> IDLE (tmp renamed over the checkpoint when it succeeded).
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"
#include "sim_disk.h"

#include <stdio.h>

/* Every partition's HW, written by checkpoint_write, read back at start. */
#define HW_CHECKPOINT_FILE "replication-offset-checkpoint"
#define HW_CHECKPOINT_TMP "replication-offset-checkpoint.tmp"

static void complete_delayed_produce(BrokerState *state, Partition *p, DelayedProduce *delayed,
                                     KafkaError error);

void
replica_delayed_produce_free(gpointer data)
{
    DelayedProduce *delayed = data;
    sim_timer_cancel(delayed->state->broker->world, delayed->timeout_timer);
    g_free(delayed);
}

/* ---- the high watermark and the produce purgatory ---- */

void
replica_hw_record_ack(BrokerState *state, Partition *p, gint64 base, gint64 end, gint16 acks)
{
    Broker *broker = state->broker;
    if (broker->history != NULL) {
        HistoryEvent fields = {0};
        fields.leader_epoch = p->leader_epoch;
        fields.offset = base;
        fields.offset_end = end;
        fields.hw = p->hw;
        fields.acks = acks;
        fields.isr = history_isr_intern(broker->history, p->isr, p->n_isr);
        fields.time_ns = sim_now_ns(broker->world);
        fields.kind = HISTORY_EVENT_ACK;
        fields.broker = broker->config.broker_id;
        fields.topic = history_topic(broker->history, p->tp.topic);
        fields.partition = p->tp.partition;
        history_event(broker->history, &fields);
    }
    if (broker->observer.acked != NULL)
        broker->observer.acked(broker->observer.user_data, broker->config.broker_id, &p->tp, base,
                               end, p->isr, p->n_isr, acks);
}

static void
complete_delayed_produce(BrokerState *state, Partition *p, DelayedProduce *delayed,
                         KafkaError error)
{
    if (error == KAFKA_ERROR_NONE)
        replica_hw_record_ack(state, p, delayed->base_offset, delayed->required_offset, delayed->acks);
    ReplicaAppendCb done_cb = delayed->done_cb;
    guint64 done_id = delayed->done_id;
    gint64 base_offset = delayed->base_offset;
    if (done_cb == NULL)
        replica_produce_respond(state, delayed->client, delayed->correlation_id, &delayed->tp, error,
                        delayed->base_offset, plog_log_start_offset(p->log));
    replica_delayed_produce_free(delayed);
    /* Last: the callback may append again to this partition. */
    if (done_cb != NULL)
        done_cb(state, error, error == KAFKA_ERROR_NONE ? base_offset : -1, done_id);
}

/* The first delayed produce, in arrival order, that the HW has reached. */
static GList *
first_completable(const Partition *p)
{
    for (GList *l = p->delayed_produce.head; l != NULL; l = l->next) {
        const DelayedProduce *delayed = l->data;
        if (delayed->required_offset <= p->hw)
            return l;
    }
    return NULL;
}

/* Kafka's DelayedOperationPurgatory.checkAndComplete for the partition's key
 * (Watchers.tryCompleteWatched, Kafka 3.x): every produce waiting on the
 * partition is tried in the order it began waiting, and each one the HW has
 * reached is answered (DelayedProduce.tryComplete); with an ISR smaller than
 * min.insync.replicas the answer is an error. Not only the head: a retried
 * duplicate waits behind later batches for its smaller original offsets.
 * The search starts over after each answer because an answer's callback may
 * append to this partition (and, with an ISR of one, move the HW again). */
void
replica_hw_try_complete_produces(BrokerState *state, Partition *p)
{
    GList *link;
    while ((link = first_completable(p)) != NULL) {
        DelayedProduce *delayed = link->data;
        g_queue_delete_link(&p->delayed_produce, link);
        KafkaError error = (gint32)p->n_isr < p->config->min_insync_replicas
                               ? KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND
                               : KAFKA_ERROR_NONE;
        complete_delayed_produce(state, p, delayed, error);
    }
}

void
replica_hw_fail_produces(BrokerState *state, Partition *p, KafkaError error)
{
    while (!g_queue_is_empty(&p->delayed_produce))
        complete_delayed_produce(state, p, g_queue_pop_head(&p->delayed_produce), error);
}

void
replica_hw_set(BrokerState *state, Partition *p, gint64 hw)
{
    Broker *broker = state->broker;
    gint64 old = p->hw;
    if (hw == old)
        return;
    p->hw = hw;
    if (broker->observer.hw_changed != NULL)
        broker->observer.hw_changed(broker->observer.user_data, broker->config.broker_id, &p->tp,
                                    p->is_leader, p->leader_epoch, old, hw);
}

/* HW = the smallest LEO in the ISR; it only moves forward. A follower in the
 * ISR whose LEO this leader has not learnt yet holds it back. */
gint64
replica_hw_target(const BrokerState *state, const Partition *p)
{
    /* A KRaft broker is Kafka 4's: Partition.maybeIncrementLeaderHW leaves
     * the HW where it is while the ISR is below min.insync.replicas
     * (KAFKA-15583, part of KIP-966: what an ELR member lacks is then never
     * committed). ZooKeeper mode follows Kafka 2.8, which has no such rule. */
    if (state->kraft != NULL && (gint32)p->n_isr < p->config->min_insync_replicas)
        return p->hw;
    gint64 hw = plog_log_end_offset(p->log);
    for (guint i = 0; i < p->n_remotes; i++) {
        const RemoteReplica *remote = &p->remotes[i];
        if (replica_in_isr(p, remote->broker_id))
            hw = MIN(hw, remote->leo);
    }
    return hw;
}

void
replica_hw_maybe_increment(BrokerState *state, Partition *p)
{
    KSIM_ASSERT(p->is_leader);
    gint64 hw = replica_hw_target(state, p);
    if (hw <= p->hw)
        return;
    replica_hw_set(state, p, hw);
    replica_hw_try_complete_produces(state, p);
    replica_fetch_try_complete(state, p, TRUE);
}

static void
delayed_produce_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    DelayedProduce *delayed = arg;
    (void)world;
    Partition *p = replica_get(broker->state, &delayed->tp);
    KSIM_ASSERT(p != NULL);
    delayed->timeout_timer = SIM_EVENT_ID_NONE;
    gboolean removed = g_queue_remove(&p->delayed_produce, delayed);
    KSIM_ASSERT(removed);
    complete_delayed_produce(broker->state, p, delayed, KAFKA_ERROR_REQUEST_TIMED_OUT);
}

void
replica_hw_delay_produce(BrokerState *state, Partition *p, DelayedProduce *delayed,
                         gint64 timeout_ms)
{
    Broker *broker = state->broker;
    KSIM_ASSERT(delayed->required_offset > p->hw);
    delayed->timeout_timer =
        sim_timer_set(broker->world, broker->node, MAX(timeout_ms, 0) * SIM_NS_PER_MS,
                      delayed_produce_timeout, delayed);
    g_queue_push_tail(&p->delayed_produce, delayed);
}

/* ---- the HW checkpoint (Kafka's replication-offset-checkpoint) ---- */

/* Reads "topic partition hw" lines of the HW checkpoint into `out`. */
void
replica_hw_checkpoint_read(BrokerState *state, GHashTable *out)
{
    SimDisk *disk = sim_node_disk(state->broker->world, state->broker->node);
    gint64 size = sim_disk_size(disk, HW_CHECKPOINT_FILE);
    if (size <= 0)
        return;
    g_autofree char *text = g_malloc0((gsize)size + 1);
    sim_disk_read(disk, HW_CHECKPOINT_FILE, 0, text, (gsize)size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 2; lines[0] != NULL && lines[1] != NULL && lines[i] != NULL; i++) {
        char topic[KAFKA_TOPIC_NAME_MAX + 1];
        int partition;
        gint64 hw;
        if (sscanf(lines[i], "%63s %d %" G_GINT64_FORMAT, topic, &partition, &hw) != 3)
            continue;
        g_hash_table_insert(out, g_strdup_printf("%s-%d", topic, partition),
                            g_memdup2(&hw, sizeof hw));
    }
}

static void
checkpoint_renamed(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    KSIM_ASSERT(broker->state != NULL);
    broker->state->checkpoint_in_flight = FALSE;
    if (status == SIM_DISK_OK)
        status = sim_disk_rename(sim_node_disk(broker->world, broker->node), HW_CHECKPOINT_TMP,
                                 HW_CHECKPOINT_FILE);
    broker_log_dir_status(broker->state, status, "HW checkpoint");
}

/* Kafka writes the checkpoint to a temporary file, fsyncs it and renames it
 * over the old one, so a crash leaves the old or the new file, never half. */
void
replica_hw_checkpoint_write(BrokerState *state)
{
    Broker *broker = state->broker;
    if (state->checkpoint_in_flight)
        return;
    GString *text = g_string_new("0\n");
    g_string_append_printf(text, "%u\n", state->partitions_sorted->len);
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        g_string_append_printf(text, "%s %d %" G_GINT64_FORMAT "\n", p->tp.topic,
                               p->tp.partition, p->hw);
    }
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    sim_disk_delete(disk, HW_CHECKPOINT_TMP);
    SimDiskStatus status =
        broker_log_dir_status(state, sim_disk_create(disk, HW_CHECKPOINT_TMP), "HW checkpoint");
    if (status != SIM_DISK_EIO &&
        broker_log_dir_status(state, sim_disk_append(disk, HW_CHECKPOINT_TMP, text->str, text->len),
                              "HW checkpoint") == SIM_DISK_OK) {
        state->checkpoint_in_flight = TRUE;
        sim_disk_fsync(disk, HW_CHECKPOINT_TMP, checkpoint_renamed, NULL);
    }
    g_string_free(text, TRUE);
}

static gint64
checkpoint_period_ns(const BrokerConfig *config)
{
    return config->replica_high_watermark_checkpoint_interval_ms * SIM_NS_PER_MS;
}

static const ReplicaTask HW_CHECKPOINT = {replica_hw_checkpoint_write, checkpoint_period_ns};

void
replica_hw_checkpoint_start(BrokerState *state)
{
    replica_task_start(state, &HW_CHECKPOINT);
}

void
replica_hw_check_invariants(const BrokerState *state)
{
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        KSIM_ASSERT(p->hw <= plog_log_end_offset(p->log));
        KSIM_ASSERT(p->hw >= plog_log_start_offset(p->log));
        if (!p->is_leader)
            KSIM_ASSERT(p->delayed_produce.length == 0);
        for (GList *l = p->delayed_produce.head; l != NULL; l = l->next) {
            const DelayedProduce *delayed = l->data;
            KSIM_ASSERT(delayed->required_offset > p->hw);
        }
    }
}
