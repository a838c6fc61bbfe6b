/*
 * consumer_validate: position validation after a leader change (KIP-320),
 * as Kafka's consumer does it since 2.3 — SubscriptionState
 * (maybeValidatePositionForCurrentLeader, maybeCompleteValidation),
 * OffsetsForLeaderEpochUtils and OffsetFetcher.validatePositionsIfNeeded
 * (read in Kafka 3.9's clients/.../consumer/internals).
 *
 * Lifecycle of one partition's validation:
 *
 *   fetching ──metadata: new leader or epoch, position with an epoch
 *              (consumer_validate_leader_changed)──▶ awaiting validation
 *   (any) ──committed offset with an epoch (consumer_validate_position)──▶
 *              awaiting validation
 *   awaiting ──send_validations: OffsetsForLeaderEpoch(position epoch)──▶ validating
 *   validating ──answer, end offset >= position (validation_answered)──▶ fetching
 *   validating ──answer, end offset < position, reset policy──▶ fetching at the end offset
 *   validating ──answer, end offset < position, reset=none──▶ stopped (poll raises)
 *   validating ──answer without an epoch, reset policy──▶ no position (reset)
 *   validating ──error, disconnect, timeout──▶ awaiting (after retry.backoff.ms)
 *
 * Invariants (checked by consumer_check_invariants through the fetch
 * checks): a partition awaiting validation is in no new fetch; `validating`
 * holds exactly while the partition is in a request of `validations`; at
 * most one request per node.
 */
#include "consumer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

static void validation_timed_out(SimWorld *world, void *ctx, void *arg);

/* Kafka's TopicPartitionState.validatePosition, for a leader at
 * `leader_epoch`: without epoch information for the position or the leader
 * there is nothing to validate. */
static void
await_validation(ConsumerState *state, CPartition *p, gint32 leader_epoch)
{
    if (p->position < 0 || p->position_epoch < 0 || leader_epoch < 0 || p->stopped)
        return;
    /* The partition is no longer fetchable: what was fetched for it is not
     * returned (Kafka's FetchCollector drops it). */
    consumer_buffer_drop(state, p);
    p->awaiting_validation = TRUE;
}

void
consumer_validate_leader_changed(ConsumerState *state, CPartition *p, gint32 leader,
                                 gint32 leader_epoch)
{
    if (!state->consumer->config.validate_positions || leader == KAFKA_NO_LEADER)
        return;
    if (leader == p->leader && leader_epoch == p->leader_epoch)
        return;
    await_validation(state, p, leader_epoch);
}

void
consumer_validate_position(ConsumerState *state, CPartition *p)
{
    if (!state->consumer->config.validate_positions || p->leader == KAFKA_NO_LEADER)
        return;
    await_validation(state, p, p->leader_epoch);
}

static CFetch *
validation_find(const ConsumerState *state, SimNodeId node)
{
    for (guint i = 0; i < state->validations->len; i++) {
        CFetch *request = g_ptr_array_index(state->validations, i);
        if (request->node == node)
            return request;
    }
    return NULL;
}

static void
validation_send(ConsumerState *state, CFetch *request)
{
    Consumer *consumer = state->consumer;
    KEpochMessage *msg = kproto_new(KMSG_EPOCH_REQUEST);
    msg->correlation_id = request->correlation_id;
    msg->replica_id = KAFKA_CONSUMER_REPLICA_ID;
    for (guint i = 0; i < request->entries->len; i++) {
        const CFetchEntry *entry = &g_array_index(request->entries, CFetchEntry, i);
        const CPartition *p = consumer_partition_find(state, &entry->tp);
        KEpochPartition out = {
            .tp = entry->tp,
            .current_leader_epoch = p->leader_epoch,
            .leader_epoch = entry->epoch,
        };
        g_array_append_val(msg->partitions, out);
    }
    kproto_update_size(&msg->base);
    consumer->stats.validations++;
    sim_net_send(sim_world_net(consumer->world), consumer->node, request->node, &msg->base);
    request->timer = sim_timer_set(consumer->world, consumer->node,
                                   consumer_ms_to_ns(consumer->config.request_timeout_ms),
                                   validation_timed_out, GINT_TO_POINTER(request->correlation_id));
}

/* The partition's leader node when its validation may be sent now. */
static SimNodeId
validatable_node(ConsumerState *state, const CPartition *p, gint64 now)
{
    /* A fetch sent before the leader changed is let come back (and be
     * dropped) first, so the partition is in one request at a time. */
    if (!p->awaiting_validation || p->validating || p->in_flight)
        return SIM_NODE_NONE;
    if (now < p->backoff_until_ns) {
        consumer_wake_at(state, p->backoff_until_ns);
        return SIM_NODE_NONE;
    }
    SimNodeId node =
        p->leader == KAFKA_NO_LEADER ? SIM_NODE_NONE : consumer_broker_node_of(state, p->leader);
    if (node == SIM_NODE_NONE)
        state->metadata_needed = TRUE;
    return node;
}

/* Kafka's OffsetsForLeaderEpochUtils groups the partitions by leader; one
 * request per node is in flight at a time. */
void
consumer_send_validations(ConsumerState *state, gint64 now)
{
    g_autoptr(GPtrArray) building = g_ptr_array_new();
    for (guint i = 0; i < state->partitions->len; i++) {
        CPartition *p = g_ptr_array_index(state->partitions, i);
        SimNodeId node = validatable_node(state, p, now);
        if (node == SIM_NODE_NONE || validation_find(state, node) != NULL)
            continue;
        CFetch *request = NULL;
        for (guint b = 0; b < building->len && request == NULL; b++) {
            CFetch *candidate = g_ptr_array_index(building, b);
            if (candidate->node == node)
                request = candidate;
        }
        if (request == NULL) {
            request = g_new0(CFetch, 1);
            request->node = node;
            request->correlation_id = consumer_correlation_new(state);
            request->timer = SIM_EVENT_ID_NONE;
            request->entries = g_array_new(FALSE, FALSE, sizeof(CFetchEntry));
            g_ptr_array_add(building, request);
        }
        CFetchEntry entry = {p->tp, p->position, FALSE, p->position_epoch};
        g_array_append_val(request->entries, entry);
        p->validating = TRUE;
    }
    for (guint i = 0; i < building->len; i++) {
        CFetch *request = g_ptr_array_index(building, i);
        g_ptr_array_add(state->validations, request);
        validation_send(state, request);
    }
}

/* Takes the request out of the in-flight list; the caller frees it. */
static void
validation_detach(ConsumerState *state, CFetch *request)
{
    sim_timer_cancel(state->consumer->world, request->timer);
    guint index = 0;
    KSIM_ASSERT(g_ptr_array_find(state->validations, request, &index));
    g_ptr_array_steal_index(state->validations, index);
    for (guint i = 0; i < request->entries->len; i++) {
        CPartition *p =
            consumer_partition_find(state, &g_array_index(request->entries, CFetchEntry, i).tp);
        if (p != NULL)
            p->validating = FALSE;
    }
}

/* Records the truncation found: the jump back to the end offset (OK), or
 * the error that reaches the application (FAIL), as a RESET op with
 * LOG_TRUNCATION: key the end offset (-1: unknown), value the position. */
static void
record_truncation(ConsumerState *state, const CPartition *p, gint64 from, gint64 end_offset)
{
    Consumer *consumer = state->consumer;
    gint64 now = consumer_now(state);
    guint64 key = end_offset >= 0 ? (guint64)end_offset : 0;
    guint64 op = history_invoke(consumer->history, now, HISTORY_FN_RESET, consumer->process,
                                p->history_topic, p->tp.partition, key, (guint64)from);
    gboolean reset = p->position >= 0;
    history_complete(consumer->history, op, now, reset ? HISTORY_OK : HISTORY_FAIL, -1,
                     reset ? p->position : -1, KAFKA_ERROR_CLIENT_LOG_TRUNCATION);
}

/* No reset policy: LogTruncationException at the next poll, which ends the
 * application's loop (as OffsetOutOfRangeException does, consumer_poll.c). */
static void
truncation_raise(ConsumerState *state, CPartition *p, gint64 end_offset)
{
    gint64 from = p->position;
    p->position = -1;
    p->stopped = TRUE;
    state->consumer->stats.reset_errors++;
    state->raise_pending = TRUE;
    record_truncation(state, p, from, end_offset);
}

/* Kafka's maybeCompleteValidation for one answered partition. */
static void
validation_answered(ConsumerState *state, CPartition *p, const KEpochPartition *answer)
{
    Consumer *consumer = state->consumer;
    gboolean has_policy = consumer->config.auto_offset_reset != CONSUMER_RESET_NONE;
    p->awaiting_validation = FALSE;
    if (answer->end_offset < 0 || answer->end_epoch < 0) {
        /* The leader's log knows nothing of the position's epoch. */
        consumer->stats.truncations++;
        if (!has_policy) {
            truncation_raise(state, p, -1);
            return;
        }
        p->position = -1; /* requestOffsetReset: the probe resets it */
        p->position_epoch = -1;
        return;
    }
    if (answer->end_offset >= p->position)
        return; /* completeValidation */
    consumer->stats.truncations++;
    if (!has_policy) {
        truncation_raise(state, p, answer->end_offset);
        return;
    }
    /* seekValidated to the first offset known to diverge. */
    gint64 from = p->position;
    p->position = answer->end_offset;
    p->position_epoch = answer->end_epoch;
    record_truncation(state, p, from, answer->end_offset);
}

static void
validation_partition(ConsumerState *state, const CFetchEntry *entry, const KEpochPartition *answer)
{
    CPartition *p = consumer_partition_find(state, &entry->tp);
    /* A seek, a reset or a new assignment since the request: stale. */
    if (p == NULL || !p->awaiting_validation || p->position != entry->fetch_offset ||
        p->position_epoch != entry->epoch)
        return;
    if (answer == NULL || answer->error != KAFKA_ERROR_NONE) {
        consumer_partition_retry_later(state, p);
        return;
    }
    validation_answered(state, p, answer);
}

void
consumer_handle_epoch_response(ConsumerState *state, SimNodeId from,
                               const KEpochMessage *response)
{
    CFetch *request = validation_find(state, from);
    if (request == NULL || request->correlation_id != response->correlation_id)
        return;
    validation_detach(state, request);
    for (guint e = 0; e < request->entries->len; e++) {
        const CFetchEntry *entry = &g_array_index(request->entries, CFetchEntry, e);
        const KEpochPartition *answer = NULL;
        for (guint i = 0; i < response->partitions->len && answer == NULL; i++) {
            const KEpochPartition *candidate =
                &g_array_index(response->partitions, KEpochPartition, i);
            if (ktp_equal(&candidate->tp, &entry->tp))
                answer = candidate;
        }
        validation_partition(state, entry, answer);
    }
    consumer_fetch_free(request);
    if (state->raise_pending && state->poll_waiting) {
        state->poll_waiting = FALSE;
        consumer_poll_schedule(state, 0);
    }
}

void
consumer_validate_connection_failed(ConsumerState *state, SimNodeId node)
{
    CFetch *request = validation_find(state, node);
    if (request == NULL)
        return;
    validation_detach(state, request);
    for (guint i = 0; i < request->entries->len; i++) {
        const CFetchEntry *entry = &g_array_index(request->entries, CFetchEntry, i);
        validation_partition(state, entry, NULL);
    }
    consumer_fetch_free(request);
}

static void
validation_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    gint32 correlation_id = GPOINTER_TO_INT(arg);
    for (guint i = 0; i < state->validations->len; i++) {
        CFetch *request = g_ptr_array_index(state->validations, i);
        if (request->correlation_id != correlation_id)
            continue;
        request->timer = SIM_EVENT_ID_NONE;
        SimNodeId node = request->node;
        /* As Kafka's NetworkClient, a request timeout closes the connection. */
        sim_net_close(sim_world_net(world), consumer->node, node);
        consumer_connection_failed(state, node);
        break;
    }
    consumer_run(state);
}
