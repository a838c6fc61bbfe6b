/*
 * replica: the replica manager's partition table and role changes (Kafka's
 * ReplicaManager.becomeLeaderOrFollower with Partition.makeLeader and
 * makeFollower), and the log retention it runs (each deleted segment, with
 * the records it held, goes into the history). The other concerns live in
 * their own files (replica.h lists them).
 *
 * Invariants (replica_check_invariants, which also runs each file's own):
 *  1. `partitions` and `partitions_sorted` hold the same partitions, the
 *     second strictly sorted by topic-partition.
 *  2. A leader partition names this broker as its leader, and knows at most
 *     one remote per other replica.
 *  3. A partition's replica set and ISR are interned (kbroker_ids_intern).
 *
 * Role transitions (replica_handle_leader_and_isr, for a newer leader epoch):
 *   any --leader == self--> LEADER   (make_leader: epoch cache entry at LEO,
 *                                     remote states reset, purgatory empty)
 *   any --leader != self--> FOLLOWER (make_follower: fail delayed produces,
 *                                     truncate to HW, or ask the leader for
 *                                     its epoch end offset, then fetch;
 *                                     in hw and kip-101 modes a follower
 *                                     whose leader did not change only
 *                                     takes the new state: follower_goes_on)
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"

#include <string.h>

/* ---- the partition table ---- */

gint
replica_partition_compare(gconstpointer a, gconstpointer b)
{
    const Partition *x = *(Partition *const *)a;
    const Partition *y = *(Partition *const *)b;
    return ktp_compare(&x->tp, &y->tp);
}

void
replica_sorted_insert(GPtrArray *partitions, Partition *p)
{
    /* A binary search for the place: sorting the whole array at every
     * insertion made N partitions cost N^2 log N to create. */
    guint lo = 0;
    guint hi = partitions->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const Partition *q = g_ptr_array_index(partitions, mid);
        if (ktp_compare(&q->tp, &p->tp) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    g_ptr_array_insert(partitions, (gint)lo, p);
}

gint
replica_sorted_find(const GPtrArray *partitions, const Partition *p)
{
    guint lo = 0;
    guint hi = partitions->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const Partition *q = g_ptr_array_index(partitions, mid);
        if (ktp_compare(&q->tp, &p->tp) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* A broker has one replica of each partition, but look past equal
     * names all the same: the answer is the pointer's place. */
    for (guint i = lo; i < partitions->len; i++) {
        const Partition *q = g_ptr_array_index(partitions, i);
        if (q == p)
            return (gint)i;
        if (ktp_compare(&q->tp, &p->tp) != 0)
            break;
    }
    return -1;
}

Partition *
replica_get(BrokerState *state, const KTopicPartition *tp)
{
    return g_hash_table_lookup(state->partitions, tp);
}

static Partition *
partition_add(BrokerState *state, const KTopicPartition *tp, Plog *log)
{
    Broker *broker = state->broker;
    Partition *p = g_new0(Partition, 1);
    p->tp = *tp;
    p->log = log;
    p->config = broker_topic_config(broker, tp->topic);
    p->leader_id = KAFKA_NO_LEADER;
    p->leader_epoch = -1;
    p->zk_version = -1;
    p->replicas = kbroker_ids_intern(NULL, 0);
    p->isr = p->replicas;
    p->hw = 0;
    g_queue_init(&p->delayed_produce);
    g_hash_table_insert(state->partitions, &p->tp, p);
    replica_sorted_insert(state->partitions_sorted, p);
    return p;
}

Partition *
replica_open(BrokerState *state, const KTopicPartition *tp, gint64 recovery_point)
{
    KSIM_ASSERT(replica_get(state, tp) == NULL);
    Broker *broker = state->broker;
    const TopicConfig *config = broker_topic_config(broker, tp->topic);
    Plog *log = plog_open_recovering(broker->world, broker->node, tp->topic,
                                     (guint32)tp->partition, &config->log, recovery_point);
    return partition_add(state, tp, log);
}

Partition *
replica_get_or_create(BrokerState *state, const KTopicPartition *tp)
{
    Partition *p = replica_get(state, tp);
    return p != NULL ? p : replica_open(state, tp, -1);
}

static void
replica_free(Partition *partition)
{
    g_queue_clear_full(&partition->delayed_produce, replica_delayed_produce_free);
    g_free(partition->remotes);
    if (partition->fetch_watchers != NULL)
        g_ptr_array_free(partition->fetch_watchers, TRUE);
    plog_free(partition->log);
    g_free(partition);
}

void
replica_state_init(BrokerState *state)
{
    state->partitions = g_hash_table_new(ktp_hash, ktp_hash_equal);
    state->partitions_sorted = g_ptr_array_new();
    state->fetchers = g_ptr_array_new_with_free_func(replica_fetcher_free);
    state->delayed_fetches = g_ptr_array_new();
    state->fetch_scratch = g_array_new(FALSE, TRUE, sizeof(KFetchPartitionResponse));
    g_array_set_clear_func(state->fetch_scratch, kproto_fetch_partition_response_clear);
    const BrokerConfig *config = &state->broker->config;
    g_autofree char *stream = g_strdup_printf("broker-%d/fetch-sessions", config->broker_id);
    SimRng *rng = sim_world_rng(state->broker->world, stream);
    state->fetch_sessions = fetch_session_cache_new(
        config->max_incremental_fetch_session_cache_slots, FETCH_SESSION_EVICTION_MS, rng);
    replica_fetch_sessions_attach(state);
}

void
replica_state_free(BrokerState *state)
{
    for (guint i = 0; i < state->delayed_fetches->len; i++)
        replica_delayed_fetch_free(g_ptr_array_index(state->delayed_fetches, i));
    g_ptr_array_free(state->delayed_fetches, TRUE);
    g_array_free(state->fetch_scratch, TRUE);
    fetch_session_cache_free(state->fetch_sessions);
    state->fetch_sessions = NULL;
    g_ptr_array_free(state->fetchers, TRUE);
    for (guint i = 0; i < state->partitions_sorted->len; i++)
        replica_free(g_ptr_array_index(state->partitions_sorted, i));
    g_ptr_array_free(state->partitions_sorted, TRUE);
    g_hash_table_destroy(state->partitions);
}

/* ---- listeners ---- */

void
replica_add_leadership_listener(BrokerState *state, const ReplicaLeadershipListener *listener)
{
    KSIM_ASSERT(state->n_leadership_listeners < REPLICA_LISTENERS_MAX);
    KSIM_ASSERT(listener->elected != NULL);
    KSIM_ASSERT(listener->resigned != NULL);
    state->leadership_listeners[state->n_leadership_listeners++] = *listener;
}

void
replica_add_marker_listener(BrokerState *state, const ReplicaMarkerListener *listener)
{
    KSIM_ASSERT(state->n_marker_listeners < REPLICA_LISTENERS_MAX);
    KSIM_ASSERT(listener->marker_written != NULL);
    state->marker_listeners[state->n_marker_listeners++] = *listener;
}

/* ---- role changes ---- */

static void
set_from_state(Partition *p, const KPartitionState *ps)
{
    p->leader_id = ps->leader;
    p->leader_epoch = ps->leader_epoch;
    p->controller_epoch = ps->controller_epoch;
    p->zk_version = ps->zk_version;
    p->n_replicas = ps->n_replicas;
    p->replicas = kbroker_ids_intern(ps->replicas, ps->n_replicas);
    p->n_isr = ps->n_isr;
    p->isr = kbroker_ids_intern(ps->isr, ps->n_isr);
}

gboolean
replica_in_isr(const Partition *p, gint32 broker_id)
{
    for (guint i = 0; i < p->n_isr; i++) {
        if (p->isr[i] == broker_id)
            return TRUE;
    }
    return FALSE;
}

static void
make_leader(BrokerState *state, Partition *p, const KPartitionState *ps)
{
    Broker *broker = state->broker;
    gint64 now = sim_now_ns(broker->world);
    replica_fetch_touch(state, p, TRUE);
    set_from_state(p, ps);
    replica_fetcher_remove_partition(state, p);
    p->is_leader = TRUE;
    p->truncation_pending = FALSE;
    /* An ISR update sent in an older epoch is answered for that epoch and
     * ignored then (isr_updated checks the epoch): it must not block this
     * term's ISR changes. */
    p->isr_update_in_flight = FALSE;
    gint64 leo = plog_log_end_offset(p->log);
    plog_epoch_assign(p->log, p->leader_epoch, leo);
    p->leader_epoch_start_offset = leo;
    p->n_remotes = 0;
    p->remotes = g_renew(RemoteReplica, p->remotes, MAX(p->n_replicas, 1u));
    for (guint i = 0; i < p->n_replicas; i++) {
        if (p->replicas[i] == broker->config.broker_id)
            continue;
        RemoteReplica *remote = &p->remotes[p->n_remotes++];
        remote->broker_id = p->replicas[i];
        remote->leo = -1;
        remote->last_fetch_leader_leo = leo;
        remote->last_fetch_ns = now;
        remote->last_caught_up_ns = replica_in_isr(p, remote->broker_id) ? now : 0;
    }
    if (broker->history != NULL)
        history_set_topic_min_isr(broker->history, history_topic(broker->history, p->tp.topic),
                                  p->config->min_insync_replicas);
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.offset = leo;
    fields.hw = p->hw;
    fields.isr = broker_history_isr(broker, p->isr, p->n_isr);
    g_autofree char *name = ktp_name(&p->tp);
    broker_record_event(broker, HISTORY_EVENT_ELECTED, &p->tp, &fields,
                        "broker %d became leader of %s in epoch %d with LEO %" G_GINT64_FORMAT
                        " and HW %" G_GINT64_FORMAT,
                        broker->config.broker_id, name, p->leader_epoch, leo, p->hw);
    if (broker->observer.became_leader != NULL)
        broker->observer.became_leader(broker->observer.user_data, broker->config.broker_id,
                                       &p->tp, p->leader_epoch, leo);
    replica_hw_maybe_increment(state, p);
    for (guint i = 0; i < state->n_leadership_listeners; i++) {
        const ReplicaLeadershipListener *listener = &state->leadership_listeners[i];
        listener->elected(listener->user_data, p);
    }
}

/* TRUE when a follower told of a new leader epoch goes on as it was: Kafka
 * up to 2.0 (Partition.makeFollower returning false, then
 * ReplicaManager.makeFollowers of 0.10.2 and 1.1) leaves the fetcher and the
 * log alone when the leader did not change, so neither the HW design nor
 * KIP-101 alone truncates then. Kafka 2.1+ (KIP-320) restarts the fetcher on
 * every new epoch, and the follower asks the leader again. */
static gboolean
follower_goes_on(const BrokerState *state, const Partition *p, const KPartitionState *ps)
{
    if (state->broker->config.truncation_mode == BROKER_TRUNCATE_LEADER_EPOCH)
        return FALSE;
    return !p->is_leader && p->fetching && ps->leader != KAFKA_NO_LEADER &&
           ps->leader == p->leader_id;
}

static void
make_follower(BrokerState *state, Partition *p, const KPartitionState *ps, SimNodeId leader_node)
{
    Broker *broker = state->broker;
    if (follower_goes_on(state, p, ps)) {
        set_from_state(p, ps);
        replica_fetcher_note(state, p); /* its leader epoch */
        return;
    }
    replica_fetch_touch(state, p, TRUE);
    if (p->is_leader)
        replica_hw_fail_produces(state, p, KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER);
    /* A coordinator whose partition moved away unloads what it loaded. */
    for (guint i = 0; i < state->n_leadership_listeners; i++) {
        const ReplicaLeadershipListener *listener = &state->leadership_listeners[i];
        listener->resigned(listener->user_data, p);
    }
    replica_fetcher_remove_partition(state, p);
    set_from_state(p, ps);
    p->is_leader = FALSE;
    p->isr_update_in_flight = FALSE;
    p->n_remotes = 0;
    g_clear_pointer(&p->remotes, g_free);
    if (ps->leader == KAFKA_NO_LEADER)
        return;
    if (broker->config.truncation_mode == BROKER_TRUNCATE_HW) {
        replica_truncate_to(state, p, p->hw, "follower truncates to its high watermark");
    } else {
        p->truncation_pending = TRUE;
    }
    replica_fetcher_add_partition(state, p, ps->leader, leader_node);
}

void
replica_handle_stop_replica(BrokerState *state, const KLeaderAndIsrRequest *request)
{
    for (guint i = 0; i < kproto_leader_and_isr_count(request); i++) {
        const KPartitionState *ps = kproto_leader_and_isr_state(request, i);
        Partition *p = replica_get(state, &ps->tp);
        if (p != NULL && !p->is_leader)
            replica_fetcher_remove_partition(state, p);
    }
}

void
replica_handle_leader_and_isr(BrokerState *state, KLeaderAndIsrRequest *request)
{
    gint32 self = state->broker->config.broker_id;
    for (guint i = 0; i < kproto_leader_and_isr_count(request); i++) {
        const KPartitionState *ps = kproto_leader_and_isr_state(request, i);
        if (!kpartition_state_has_replica(ps, self))
            continue;
        Partition *p = replica_get_or_create(state, &ps->tp);
        /* Only a newer leader epoch changes a replica's role (Kafka fences
         * LeaderAndIsr requests for an epoch it already has). In KRaft
         * mode a change within the epoch may still move a leader's ISR. */
        if (ps->leader_epoch <= p->leader_epoch) {
            if (state->kraft != NULL)
                replica_isr_from_metadata(state, p, ps);
            continue;
        }
        if (ps->leader == self)
            make_leader(state, p, ps);
        else
            make_follower(state, p, ps, kbroker_endpoint_node(request->live_leaders, ps->leader));
    }
}

/* The data records (HistoryRecord) of a deleted segment's batches as
 * stored, in offset order; control batches (transaction markers) hold none.
 * A batch that does not verify ends the walk: what the disk gave back is
 * all that is known to have been deleted. (transfer full) */
static GArray *
deleted_records_decode(const GByteArray *encoded)
{
    GArray *records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(guint64));
    gsize whole = plog_batches_whole_bytes(encoded->data, encoded->len);
    gsize at = 0;
    while (at < whole) {
        PlogBatchHeader header;
        gboolean decoded = plog_batch_header_decode(encoded->data + at, whole - at, &header);
        KSIM_ASSERT(decoded); /* plog_batches_whole_bytes verified it */
        gsize len = (gsize)plog_batch_header_encoded_bytes(&header);
        if ((header.attributes & PLOG_BATCH_CONTROL) == 0) {
            g_array_set_size(values, (guint)header.record_count);
            guint64 *value = (guint64 *)(gpointer)values->data;
            if (!plog_batch_decode_values(encoded->data + at, len, &header, value))
                break;
            for (gint32 r = 0; r < header.record_count; r++) {
                HistoryRecord record = {header.base_offset + r, value[r]};
                g_array_append_val(records, record);
            }
        }
        at += len;
    }
    return records;
}

/* Records in the history that retention deleted one segment of `p`, with
 * the records it held, so the checker can tell a record retention deleted
 * from one that was lost. */
static void
retention_record(BrokerState *state, const Partition *p, const PlogDeletedSegment *deleted)
{
    Broker *broker = state->broker;
    const PlogSegmentInfo *info = &deleted->info;
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(broker->world);
    event.kind = HISTORY_EVENT_RETENTION;
    event.broker = broker->config.broker_id;
    event.topic = history_topic(broker->history, p->tp.topic);
    event.partition = p->tp.partition;
    event.leader_epoch = p->leader_epoch;
    event.offset = info->base_offset;
    event.offset_end = info->next_offset;
    event.hw = p->hw;
    event.isr = p->is_leader ? history_isr_intern(broker->history, p->isr, p->n_isr) : 0;
    event.acks = deleted->cause == PLOG_RETENTION_TIME ? 0 : 1;
    g_autofree char *why = NULL;
    if (deleted->cause == PLOG_RETENTION_TIME)
        why = g_strdup_printf("its newest record was %.3f s old, beyond retention.ms %" G_GINT64_FORMAT,
                              (deleted->now_ms - info->max_timestamp_ms) / 1e3,
                              p->config->log.retention_ms);
    else
        why = g_strdup_printf("the log was above retention.bytes %" G_GINT64_FORMAT,
                              p->config->log.retention_bytes);
    g_autofree char *name = ktp_name(&p->tp);
    event.text = g_strdup_printf(
        "broker %d's retention deleted segment %020" G_GINT64_FORMAT " of %s (offsets %" G_GINT64_FORMAT
        "..%" G_GINT64_FORMAT ", below its HW %" G_GINT64_FORMAT "): %s",
        broker->config.broker_id, info->base_offset, name, info->base_offset,
        info->next_offset - 1, p->hw, why);
    GArray *records =
        deleted->readable ? deleted_records_decode(deleted->encoded)
                          : g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    history_event_with_records(broker->history, &event, records);
    g_free(event.text);
}

/* Kafka's LogManager deletes old segments every
 * log.retention.check.interval.ms. */
static void
replica_apply_retention(BrokerState *state)
{
    gint64 now_ms = broker_now_ms(state->broker);
    g_autoptr(GArray) deleted = plog_deleted_segments_new();
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        /* Only what every replica has committed may go: below the HW. */
        g_array_set_size(deleted, 0);
        guint segments = plog_apply_retention_noting(
            p->log, now_ms, p->hw, state->broker->history != NULL ? deleted : NULL);
        if (segments > 0) {
            /* Its log start moved. */
            replica_fetcher_note(state, p);
            replica_fetch_touch(state, p, FALSE);
        }
        for (guint d = 0; d < deleted->len; d++)
            retention_record(state, p, &g_array_index(deleted, PlogDeletedSegment, d));
    }
}

static gint64
retention_period_ns(const BrokerConfig *config)
{
    return config->log_retention_check_interval_ms * SIM_NS_PER_MS;
}

static const ReplicaTask RETENTION = {replica_apply_retention, retention_period_ns};

void
replica_retention_start(BrokerState *state)
{
    replica_task_start(state, &RETENTION);
}

/* ---- periodic tasks ---- */

static void
task_fired(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    const ReplicaTask *task = arg;
    (void)world;
    task->run(broker->state);
    replica_task_start(broker->state, task);
}

void
replica_task_start(BrokerState *state, const ReplicaTask *task)
{
    Broker *broker = state->broker;
    /* The timer only reads the task. */
    sim_timer_set(broker->world, broker->node, task->period_ns(&broker->config), task_fired,
                  (gpointer)task);
}

/* ---- invariants ---- */

void
replica_check_invariants(const BrokerState *state)
{
    KSIM_ASSERT(g_hash_table_size(state->partitions) == state->partitions_sorted->len);
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        KSIM_ASSERT(g_hash_table_lookup(state->partitions, &p->tp) == p);
        if (i > 0) {
            const Partition *previous = g_ptr_array_index(state->partitions_sorted, i - 1);
            KSIM_ASSERT(ktp_compare(&previous->tp, &p->tp) < 0);
        }
        if (p->is_leader)
            KSIM_ASSERT(p->leader_id == state->broker->config.broker_id);
        KSIM_ASSERT(p->n_remotes <= p->n_replicas);
        KSIM_ASSERT(kbroker_ids_intern(p->replicas, p->n_replicas) == p->replicas);
        KSIM_ASSERT(kbroker_ids_intern(p->isr, p->n_isr) == p->isr);
    }
    replica_hw_check_invariants(state);
    replica_isr_check_invariants(state);
    replica_fetch_check_invariants(state);
    replica_fetcher_check_invariants(state);
    replica_markers_check_invariants(state);
    replica_verify_check_invariants(state);
}
