/*
 * replica_fetcher: the follower side of replication (Kafka's
 * ReplicaFetcherThread and AbstractFetcherThread) — one fetcher per leader
 * fetches for every partition that follows it, appends what the leader
 * sends, and takes the leader's HW. Each fetcher keeps an incremental fetch
 * session with its leader (KIP-227, fetch_handler.h): a fetch names only the
 * partitions whose fetch state changed, and the answer only those with
 * something new; one that fails or finds its session gone is sent again in
 * full. This is where a follower is truncated:
 *   - on becoming follower in hw mode, to its HW (replica.c asks);
 *   - in leader-epoch mode, to the end offset of its epoch as the leader
 *     knows it, asked with OffsetsForLeaderEpoch before the first fetch
 *     (KIP-101/KIP-279, truncate_by_epoch), asking again while the leader's
 *     epoch is one it does not have;
 *   - in kip-101 mode, to the leader's end offset for its latest epoch,
 *     once (KIP-101 alone, Kafka 0.11-1.1);
 *   - when the leader's batch straddles its LEO (first_needed_batch), and
 *     when it is ahead of its leader's LEO (follower_out_of_range).
 *
 * Invariants (replica_fetcher_check_invariants):
 *  1. A partition is in exactly one fetcher, its leader's, while `fetching`,
 *     and in none otherwise; a leader partition is in none.
 *  2. Only a follower waits to truncate (truncation_pending).
 *  3. A fetcher with an OffsetsForLeaderEpoch request in flight has its
 *     correlation id set.
 *  4. Each fetcher's session handler holds its invariants
 *     (fetch_handler_check_invariants).
 *  5. Between full fetches, a partition of a fetcher that is not in its
 *     `dirty` list has the fetch state its session handler last asked for
 *     it, and the session holds only the fetcher's partitions and noted
 *     ones: whatever moves a follower's LEO, log start or leader epoch, or
 *     moves it between fetchers, notes it (replica_fetcher_note).
 *  6. A fetcher whose truncation_maybe_pending is FALSE has no partition
 *     waiting to truncate.
 *
 * Transitions of a fetcher:
 *   IDLE --a partition to fetch--> IN FLIGHT (fetcher_maybe_send: an
 *        OffsetsForLeaderEpoch request first if a partition must truncate)
 *   IN FLIGHT --answer--> IDLE, send again (replica_handle_fetch_response,
 *        replica_handle_epoch_response)
 *   IN FLIGHT --error, timeout, disconnect--> BACKOFF (fetcher_backoff)
 *   BACKOFF --replica.fetch.backoff.ms--> IDLE (fetcher_backoff_done)
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

static void fetcher_maybe_send(BrokerState *state, Fetcher *fetcher);

/* ---- fetchers (follower side) ---- */

void
replica_fetcher_free(gpointer data)
{
    Fetcher *fetcher = data;
    g_ptr_array_free(fetcher->partitions, TRUE);
    fetch_handler_free(fetcher->session);
    g_array_free(fetcher->next, TRUE);
    g_ptr_array_free(fetcher->dirty, TRUE);
    g_array_free(fetcher->gone, TRUE);
    g_free(fetcher);
}


static Fetcher *
fetcher_find(BrokerState *state, gint32 leader_id)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->leader_id == leader_id)
            return fetcher;
    }
    return NULL;
}

void
replica_fetcher_remove_partition(BrokerState *state, Partition *p)
{
    /* A partition is in a fetcher exactly while `fetching` (invariant 1),
     * found there by binary search: a linear search in every fetcher made
     * a LeaderAndIsr for N partitions cost N^2. */
    if (!p->fetching)
        return;
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        gint at = replica_sorted_find(fetcher->partitions, p);
        if (at >= 0) {
            g_ptr_array_remove_index(fetcher->partitions, (guint)at);
            g_ptr_array_add(fetcher->dirty, p);
        }
    }
    p->fetching = FALSE;
}

void
replica_fetcher_note(BrokerState *state, Partition *p)
{
    if (!p->fetching)
        return;
    Fetcher *fetcher = fetcher_find(state, p->leader_id);
    KSIM_ASSERT(fetcher != NULL); /* invariant 1 */
    g_ptr_array_add(fetcher->dirty, p);
}

void
replica_fetcher_add_partition(BrokerState *state, Partition *p, gint32 leader_id, SimNodeId leader_node)
{
    Fetcher *fetcher = fetcher_find(state, leader_id);
    if (fetcher == NULL) {
        fetcher = g_new0(Fetcher, 1);
        fetcher->leader_id = leader_id;
        fetcher->partitions = g_ptr_array_new();
        fetcher->session = fetch_handler_new();
        fetcher->next = g_array_new(FALSE, FALSE, sizeof(KFetchPartition));
        fetcher->dirty = g_ptr_array_new();
        fetcher->gone = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
        g_ptr_array_add(state->fetchers, fetcher);
    }
    fetcher->node = leader_node;
    replica_sorted_insert(fetcher->partitions, p);
    g_ptr_array_add(fetcher->dirty, p);
    p->fetching = TRUE;
    if (p->truncation_pending)
        fetcher->truncation_maybe_pending = TRUE;
    fetcher_maybe_send(state, fetcher);
}

static void
fetcher_backoff_done(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    Fetcher *fetcher = fetcher_find(broker->state, GPOINTER_TO_INT(arg));
    if (fetcher == NULL)
        return;
    fetcher->backoff_timer = SIM_EVENT_ID_NONE;
    fetcher_maybe_send(broker->state, fetcher);
}

static void
fetcher_backoff(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    fetcher->in_flight_correlation = 0;
    fetcher->epoch_request_in_flight = FALSE;
    sim_timer_cancel(broker->world, fetcher->timeout_timer);
    if (sim_timer_pending(broker->world, fetcher->backoff_timer))
        return;
    fetcher->backoff_timer =
        sim_timer_set(broker->world, broker->node,
                      broker->config.replica_fetch_backoff_ms * SIM_NS_PER_MS,
                      fetcher_backoff_done, GINT_TO_POINTER(fetcher->leader_id));
}

static void
fetcher_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    Fetcher *fetcher = fetcher_find(broker->state, GPOINTER_TO_INT(arg));
    if (fetcher == NULL)
        return;
    /* replica.socket.timeout.ms passed without an answer: close the
     * connection, as Kafka's network client does, and try again after
     * replica.fetch.backoff.ms (Kafka 2.8's ReplicaFetcherBlockingSend and
     * AbstractFetcherThread: the failed fetch delays its partitions). Kafka
     * times the request with the broker's request.timeout.ms and uses
     * replica.socket.timeout.ms for the connection; both default to 30000,
     * and a lost answer costs the follower this long (it may leave the ISR
     * meanwhile, and rejoins once it has caught up). A fetch that failed
     * so makes the next one a full one (FetchSessionHandler.handleError). */
    if (!fetcher->epoch_request_in_flight)
        fetch_handler_handle_error(fetcher->session);
    sim_net_close(sim_world_net(world), broker->node, fetcher->node);
    fetcher_backoff(broker->state, fetcher);
}

static void
fetcher_arm_timeout(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    fetcher->timeout_timer = sim_timer_set(
        broker->world, broker->node, broker->config.replica_socket_timeout_ms * SIM_NS_PER_MS,
        fetcher_timeout, GINT_TO_POINTER(fetcher->leader_id));
}

static gboolean
fetcher_send_epoch_request(BrokerState *state, Fetcher *fetcher)
{
    if (!fetcher->truncation_maybe_pending)
        return FALSE;
    KEpochMessage *request = NULL;
    for (guint i = 0; i < fetcher->partitions->len; i++) {
        Partition *p = g_ptr_array_index(fetcher->partitions, i);
        if (!p->truncation_pending)
            continue;
        if (request == NULL)
            request = kproto_new(KMSG_EPOCH_REQUEST);
        KEpochPartition entry = {0};
        entry.tp = p->tp;
        /* Version 0 of the request (Kafka 0.11-1.1) has no current leader
         * epoch for the leader to fence with (KIP-320 added it in 2.1). */
        entry.current_leader_epoch =
            state->broker->config.truncation_mode == BROKER_TRUNCATE_KIP101 ? -1 : p->leader_epoch;
        entry.leader_epoch = plog_epoch_latest(p->log);
        g_array_append_val(request->partitions, entry);
    }
    if (request == NULL) {
        fetcher->truncation_maybe_pending = FALSE;
        return FALSE;
    }
    request->correlation_id = state->correlation_next++;
    request->replica_id = state->broker->config.broker_id;
    fetcher->in_flight_correlation = request->correlation_id;
    fetcher->epoch_request_in_flight = TRUE;
    kproto_update_size(&request->base);
    broker_send(state, fetcher->node, &request->base);
    fetcher_arm_timeout(state, fetcher);
    return TRUE;
}

static KFetchPartition
fetch_state(const BrokerState *state, const Partition *p)
{
    KFetchPartition entry = {p->tp, plog_log_end_offset(p->log), p->leader_epoch,
                             state->broker->config.replica_fetch_max_bytes,
                             plog_log_start_offset(p->log)};
    return entry;
}

/* Whether `p` is one of the fetcher's partitions: a fetching partition is
 * in its leader's fetcher (invariant 1). */
static gboolean
fetcher_has(const Fetcher *fetcher, const Partition *p)
{
    return p->fetching && p->leader_id == fetcher->leader_id;
}

/* The request's partitions. Kafka's ReplicaFetcherThread builds every
 * partition's fetch state and the session handler sends only what changed
 * (FetchSessionHandler.Builder); a full fetch does so here too. An
 * incremental one builds only the partitions noted since the last fetch
 * (Fetcher.dirty), which give the handler the same request: a partition
 * not noted has the fetch state it was last built with (invariant 5). */
static void
fetcher_build(BrokerState *state, Fetcher *fetcher, KFetchRequest *request)
{
    GArray *next = fetcher->next;
    GPtrArray *dirty = fetcher->dirty;
    if (fetch_handler_next_is_full(fetcher->session)) {
        g_array_set_size(next, fetcher->partitions->len);
        for (guint i = 0; i < fetcher->partitions->len; i++)
            g_array_index(next, KFetchPartition, i) =
                fetch_state(state, g_ptr_array_index(fetcher->partitions, i));
        fetch_handler_build(fetcher->session, next, request);
        g_ptr_array_set_size(dirty, 0);
        return;
    }
    /* In the fetcher's order, each once. */
    g_ptr_array_sort(dirty, replica_partition_compare);
    g_array_set_size(next, 0);
    g_array_set_size(fetcher->gone, 0);
    for (guint i = 0; i < dirty->len; i++) {
        Partition *p = g_ptr_array_index(dirty, i);
        if (i > 0 && g_ptr_array_index(dirty, i - 1) == p)
            continue;
        if (fetcher_has(fetcher, p)) {
            KFetchPartition entry = fetch_state(state, p);
            g_array_append_val(next, entry);
        } else {
            g_array_append_val(fetcher->gone, p->tp);
        }
    }
    fetch_handler_build_changes(fetcher->session, next, fetcher->gone, request);
    g_ptr_array_set_size(dirty, 0);
}

static void
fetcher_maybe_send(BrokerState *state, Fetcher *fetcher)
{
    Broker *broker = state->broker;
    if (fetcher->in_flight_correlation != 0 ||
        sim_timer_pending(broker->world, fetcher->backoff_timer) ||
        fetcher->partitions->len == 0 || fetcher->node == SIM_NODE_NONE)
        return;
    if (fetcher_send_epoch_request(state, fetcher))
        return;
    KFetchRequest *request = kproto_new(KMSG_FETCH_REQUEST);
    request->correlation_id = state->correlation_next++;
    request->replica_id = broker->config.broker_id;
    request->max_wait_ms = broker->config.replica_fetch_wait_max_ms;
    request->min_bytes = broker->config.replica_fetch_min_bytes;
    request->max_bytes = broker->config.replica_fetch_max_bytes;
    fetcher_build(state, fetcher, request);
    fetcher->in_flight_correlation = request->correlation_id;
    kproto_update_size(&request->base);
    broker_send(state, fetcher->node, &request->base);
    fetcher_arm_timeout(state, fetcher);
}

static Fetcher *
fetcher_for_response(BrokerState *state, SimNodeId from, gint32 correlation_id)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->node == from && fetcher->in_flight_correlation == correlation_id)
            return fetcher;
    }
    return NULL;
}

void
replica_peer_disconnected(BrokerState *state, SimNodeId peer)
{
    for (guint i = 0; i < state->fetchers->len; i++) {
        Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
        if (fetcher->node != peer || fetcher->in_flight_correlation == 0)
            continue;
        if (!fetcher->epoch_request_in_flight)
            fetch_handler_handle_error(fetcher->session);
        fetcher_backoff(state, fetcher);
    }
}

/* ---- truncation ---- */

void
replica_truncate_to(BrokerState *state, Partition *p, gint64 offset, const char *why)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (offset >= leo)
        return;
    if (offset < p->hw)
        SIM_MARK(state->broker->world, truncate_below_hw);
    gint64 recovery_point = plog_recovery_point(p->log);
    plog_truncate_to(p->log, offset);
    replica_truncation_checkpoint(state, p, recovery_point);
    replica_fetcher_note(state, p);
    gint64 new_leo = plog_log_end_offset(p->log);
    p->hw = MIN(p->hw, new_leo);
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.offset = new_leo;
    fields.offset_end = leo;
    fields.hw = p->hw;
    g_autofree char *name = ktp_name(&p->tp);
    broker_record_event(state->broker, HISTORY_EVENT_TRUNCATED, &p->tp, &fields,
                        "broker %d truncated %s from LEO %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
                        " (%s)",
                        state->broker->config.broker_id, name, leo, new_leo, why);
}

/* ---- fetch responses (follower side) ---- */

static gboolean
follows(const Partition *p, const Fetcher *fetcher)
{
    return p != NULL && !p->is_leader && p->fetching && p->leader_id == fetcher->leader_id &&
           !p->truncation_pending;
}

/* The position in `data` of the first batch that ends at or past `leo`;
 * a batch that starts below it straddles the follower's LEO (their logs
 * diverged at batch boundaries that differ), and the follower truncates to
 * its base offset first, as Kafka's follower does on an unexpected append
 * offset. */
static gsize
first_needed_batch(BrokerState *state, Partition *p, const GByteArray *data)
{
    gsize position = 0;
    while (position < data->len) {
        PlogBatchHeader header;
        if (!plog_batch_header_decode(data->data + position, data->len - position, &header))
            return data->len;
        gint64 leo = plog_log_end_offset(p->log);
        if (plog_batch_header_last_offset(&header) >= leo) {
            if (header.base_offset < leo)
                replica_truncate_to(state, p, header.base_offset,
                            "follower truncates to the start of a leader batch that straddles "
                            "its LEO");
            return position;
        }
        position += (gsize)plog_batch_header_encoded_bytes(&header);
    }
    return position;
}

static void
follower_append(BrokerState *state, Partition *p, const KFetchPartitionResponse *data)
{
    Broker *broker = state->broker;
    if (data->encoded != NULL && data->encoded->len > 0) {
        gsize start = first_needed_batch(state, p, data->encoded);
        SimDiskStatus status = SIM_DISK_OK;
        if (start < data->encoded->len)
            plog_append_encoded_as_follower(p->log, data->encoded->data + start,
                                            data->encoded->len - start, broker_now_ms(broker),
                                            &status);
        broker_log_dir_status(state, status, "follower append");
    }
    gint64 leo = plog_log_end_offset(p->log);
    replica_hw_set(state, p, MAX(MIN(leo, data->high_watermark), plog_log_start_offset(p->log)));
}

/* OFFSET_OUT_OF_RANGE: a follower ahead of its leader truncates to the
 * leader's LEO (how the HW design makes replicas lose committed records); one
 * behind the leader's log start starts over from there. */
static void
follower_out_of_range(BrokerState *state, Partition *p, const KFetchPartitionResponse *data)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (data->log_end_offset < leo) {
        replica_truncate_to(state, p, data->log_end_offset,
                    "follower ahead of its leader truncates to the leader's LEO");
        return;
    }
    gint64 recovery_point = plog_recovery_point(p->log);
    plog_truncate_fully_and_start_at(p->log, data->log_start_offset);
    replica_truncation_checkpoint(state, p, recovery_point);
    replica_fetcher_note(state, p);
    p->hw = data->log_start_offset;
}

/* The follower's replica of the response's `i`th partition, or NULL. The
 * leader answers the partitions in the order the fetcher asked for them,
 * which is the order of `fetcher->partitions` unless a partition joined or
 * left the fetcher meanwhile: the one at the same place, when it has the
 * same name, is the one replica_get would find (a broker has one replica
 * per partition), without hashing the name. (transfer none) */
static Partition *
response_partition(BrokerState *state, const Fetcher *fetcher, guint i,
                   const KTopicPartition *tp)
{
    if (i < fetcher->partitions->len) {
        Partition *p = g_ptr_array_index(fetcher->partitions, i);
        if (ktp_equal(&p->tp, tp))
            return p;
    }
    return replica_get(state, tp);
}

void
replica_handle_fetch_response(BrokerState *state, SimNodeId from, KFetchResponse *response)
{
    Fetcher *fetcher = fetcher_for_response(state, from, response->correlation_id);
    if (fetcher == NULL || fetcher->epoch_request_in_flight)
        return;
    sim_timer_cancel(state->broker->world, fetcher->timeout_timer);
    fetcher->in_flight_correlation = 0;
    /* A session error (FETCH_SESSION_ID_NOT_FOUND after the leader
     * restarted, INVALID_FETCH_SESSION_EPOCH) answers no partitions: the
     * fetcher fetches again at once, in full, as Kafka's
     * RemoteLeaderEndPoint.fetch returns nothing then. */
    if (response->error == KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND)
        SIM_MARK(state->broker->world, fetch_session_not_found);
    if (!fetch_handler_handle_response(fetcher->session, response)) {
        fetcher_maybe_send(state, fetcher);
        return;
    }
    gboolean backoff = FALSE;
    SimDisk *disk = sim_node_disk(state->broker->world, state->broker->node);
    sim_disk_call_begin(disk);
    for (guint i = 0; i < response->partitions->len; i++) {
        const KFetchPartitionResponse *data =
            &g_array_index(response->partitions, KFetchPartitionResponse, i);
        Partition *p = response_partition(state, fetcher, i, &data->tp);
        if (!follows(p, fetcher))
            continue;
        /* What it appends, or how it truncates, moves its fetch state. */
        replica_fetcher_note(state, p);
        if (data->error == KAFKA_ERROR_NONE) {
            gboolean has_data = data->encoded != NULL && data->encoded->len > 0;
            gint64 leo = has_data ? plog_log_end_offset(p->log) : -1;
            follower_append(state, p, data);
            /* Data that could not be appended (a disk error, a corrupt
             * batch) must not turn the fetcher into a busy loop. */
            if (has_data && plog_log_end_offset(p->log) == leo)
                backoff = TRUE;
        }
        else if (data->error == KAFKA_ERROR_OFFSET_OUT_OF_RANGE)
            follower_out_of_range(state, p, data);
        else
            backoff = TRUE;
    }
    /* The fetcher thread appends what it fetched before it fetches again
     * (AbstractFetcherThread.processFetchRequest): writes that wait on the
     * disk (sim_disk.h, "Timing") delay the next fetch, so the leader sees
     * this follower's fetch offset later, and a follower whose disk cannot
     * keep up falls behind and out of the ISR. */
    gint64 stall_ns = sim_disk_call_stall_ns(disk);
    if (backoff)
        fetcher_backoff(state, fetcher);
    else if (stall_ns > 0 && !sim_timer_pending(state->broker->world, fetcher->backoff_timer))
        fetcher->backoff_timer = sim_timer_set(state->broker->world, state->broker->node, stall_ns,
                                               fetcher_backoff_done,
                                               GINT_TO_POINTER(fetcher->leader_id));
    else
        fetcher_maybe_send(state, fetcher);
}

/* Kafka's AbstractFetcherThread.getOffsetTruncationState (2.1+, KIP-279):
 * where the follower truncates on the leader's answer, and whether it is
 * done or must ask again. */
static void
truncate_by_epoch(BrokerState *state, Partition *p, const KEpochPartition *answer)
{
    gint64 leo = plog_log_end_offset(p->log);
    if (answer->end_offset == PLOG_UNDEFINED_EPOCH_OFFSET) {
        /* The leader knows no epoch for us: the initial fetch offset, the HW. */
        replica_truncate_to(state, p, p->hw, "no epoch known to the leader: truncate to the HW");
        p->truncation_pending = FALSE;
        return;
    }
    if (answer->end_epoch == PLOG_UNDEFINED_EPOCH) {
        /* An answer without its epoch (OffsetsForLeaderEpoch v0, KIP-101
         * alone, ksim.truncation.mode=kip-101): the leader's offset, once,
         * as Kafka 1.1's ReplicaFetcherThread.maybeTruncate does. */
        replica_truncate_to(state, p, MIN(answer->end_offset, leo),
                            "follower truncates to its epoch's end offset at the leader");
        p->truncation_pending = FALSE;
        return;
    }
    gint32 follower_epoch;
    gint64 follower_end;
    plog_epoch_end_offset(p->log, answer->end_epoch, &follower_epoch, &follower_end);
    if (follower_end == PLOG_UNDEFINED_EPOCH_OFFSET) {
        /* We track no epoch at or below the leader's: its offset alone. */
        replica_truncate_to(state, p, MIN(answer->end_offset, leo),
                            "follower truncates to its epoch's end offset at the leader");
        p->truncation_pending = FALSE;
        return;
    }
    if (follower_epoch != answer->end_epoch) {
        /* We do not have the leader's epoch: cut back to the end of our
         * largest epoch below it and ask again. */
        replica_truncate_to(state, p, MIN(follower_end, leo),
                            "follower truncates to the end of its epoch below the leader's");
        return;
    }
    replica_truncate_to(state, p, MIN(MIN(follower_end, answer->end_offset), leo),
                        "follower truncates to its epoch's end offset at the leader");
    p->truncation_pending = FALSE;
}

/* TRUE when `answer` is for the partition as it is now: Kafka's
 * truncateToEpochEndOffsets drops answers to a request sent in another
 * leader epoch (the partition truncates in the new one, asking again). The
 * answer carries the request's current_leader_epoch back. */
static gboolean
answer_is_current(const Partition *p, const Fetcher *fetcher, const KEpochPartition *answer)
{
    if (p == NULL || p->is_leader || !p->fetching || !p->truncation_pending ||
        p->leader_id != fetcher->leader_id)
        return FALSE;
    return answer->current_leader_epoch < 0 || answer->current_leader_epoch == p->leader_epoch;
}

void
replica_handle_epoch_response(BrokerState *state, SimNodeId from, KEpochMessage *response)
{
    Fetcher *fetcher = fetcher_for_response(state, from, response->correlation_id);
    if (fetcher == NULL || !fetcher->epoch_request_in_flight)
        return;
    sim_timer_cancel(state->broker->world, fetcher->timeout_timer);
    fetcher->in_flight_correlation = 0;
    fetcher->epoch_request_in_flight = FALSE;
    gboolean backoff = FALSE;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KEpochPartition *answer = &g_array_index(response->partitions, KEpochPartition, i);
        Partition *p = replica_get(state, &answer->tp);
        if (!answer_is_current(p, fetcher, answer))
            continue;
        if (answer->error != KAFKA_ERROR_NONE)
            backoff = TRUE;
        else
            truncate_by_epoch(state, p, answer);
    }
    if (backoff)
        fetcher_backoff(state, fetcher);
    else
        fetcher_maybe_send(state, fetcher);
}

void
replica_fetcher_check_invariants(const BrokerState *state)
{
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        guint fetchers = 0;
        for (guint f = 0; f < state->fetchers->len; f++) {
            const Fetcher *fetcher = g_ptr_array_index(state->fetchers, f);
            if (replica_sorted_find(fetcher->partitions, p) >= 0) {
                fetchers++;
                KSIM_ASSERT(fetcher->leader_id == p->leader_id);
            }
        }
        KSIM_ASSERT(fetchers == (p->fetching ? 1u : 0u));
        if (p->is_leader)
            KSIM_ASSERT(!p->fetching);
        if (p->truncation_pending)
            KSIM_ASSERT(!p->is_leader);
    }
    for (guint f = 0; f < state->fetchers->len; f++) {
        const Fetcher *fetcher = g_ptr_array_index(state->fetchers, f);
        if (fetcher->epoch_request_in_flight)
            KSIM_ASSERT(fetcher->in_flight_correlation != 0);
        if (!fetcher->truncation_maybe_pending) {
            for (guint i = 0; i < fetcher->partitions->len; i++)
                KSIM_ASSERT(!((const Partition *)g_ptr_array_index(fetcher->partitions, i))
                                 ->truncation_pending);
        }
        fetch_handler_check_invariants(fetcher->session);
        /* Invariant 5: a partition not noted since the last build has the
         * fetch state the session last asked for it, and the session holds
         * nothing else but noted partitions. */
        if (fetch_handler_next_is_full(fetcher->session))
            continue;
        g_autoptr(GHashTable) noted = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = 0; i < fetcher->dirty->len; i++)
            g_hash_table_add(noted, g_ptr_array_index(fetcher->dirty, i));
        guint quiet = 0;
        for (guint i = 0; i < fetcher->partitions->len; i++) {
            const Partition *p = g_ptr_array_index(fetcher->partitions, i);
            if (g_hash_table_contains(noted, p))
                continue;
            const KFetchPartition *asked = fetch_handler_lookup(fetcher->session, &p->tp);
            KSIM_ASSERT(asked != NULL);
            KFetchPartition now = fetch_state(state, p);
            KSIM_ASSERT(asked->fetch_offset == now.fetch_offset);
            KSIM_ASSERT(asked->log_start_offset == now.log_start_offset);
            KSIM_ASSERT(asked->current_leader_epoch == now.current_leader_epoch);
            KSIM_ASSERT(asked->max_bytes == now.max_bytes);
            quiet++;
        }
        KSIM_ASSERT(fetch_handler_size(fetcher->session) <= quiet + g_hash_table_size(noted));
    }
}
