/*
 * consumer_group: group membership in subscribe mode, as Kafka's
 * ConsumerCoordinator — the assignment, group requests and their failures,
 * finding the coordinator, joining and syncing (the leader assigns),
 * heartbeats, leaving, and the group's part of poll() and of the
 * background. The state machine is drawn in consumer.c.
 *
 * Two rebalance protocols, as Kafka's ConsumerCoordinator (clients 3.x to
 * 4.0, onJoinPrepare and onJoinComplete) runs them:
 *  - eager (range, roundrobin, sticky, or a list naming any of them): before
 *    JoinGroup the member revokes every partition (revoke_all), and poll()
 *    returns nothing until the new assignment's positions are known;
 *  - cooperative (KIP-429; every listed assignor is cooperative-sticky): the
 *    member keeps its partitions through the rebalance and reports them in
 *    JoinGroup; poll() goes on returning their records; the SyncGroup's
 *    assignment is applied at the next poll (assignment_complete), which
 *    revokes only the partitions it lost, committing their positions first
 *    (what Kafka leaves to the application's onPartitionsRevoked, done here
 *    whenever the member commits at all), and rejoins at once if it revoked
 *    any, so the partitions withheld from their new owners can be given out.
 *    A member whose generation was reset (heartbeat or commit errors) has
 *    lost its partitions (Kafka's onPartitionsLost): they go without a
 *    commit.
 */
#include "consumer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <stdlib.h>
#include <string.h>

/* ---- assignment ---- */

gint
consumer_tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

gboolean
consumer_tps_contain(const GArray *tps, const KTopicPartition *tp)
{
    /* An empty GArray may have no data at all: bsearch must not see it. */
    return tps->len > 0 &&
           bsearch(tp, tps->data, tps->len, sizeof(KTopicPartition), consumer_tp_compare) != NULL;
}

/* Replaces the assignment with `tps` (sorted, distinct). Partitions kept keep
 * their state; new ones start without a position, awaiting their committed
 * offset when `committed_pending`. Records of dropped partitions leave the
 * buffer. */
void
consumer_assignment_set(ConsumerState *state, const GArray *tps, gboolean committed_pending)
{
    Consumer *consumer = state->consumer;
    /* Each partition leaving the assignment is recorded (REVOKE), so the
     * checker can tell how long partitions waited for their next owner. */
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        if (consumer_tps_contain(tps, &p->tp))
            continue;
        history_record(consumer->history, consumer_now(state), HISTORY_FN_REVOKE,
                       consumer->process, p->history_topic, p->tp.partition, p->position, 0, 0);
    }
    g_array_set_size(consumer->assigned, 0);
    g_array_append_vals(consumer->assigned, tps->data, tps->len);
    g_autoptr(GPtrArray) next = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < consumer->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
        KSIM_ASSERT(i == 0 || ktp_compare(tp - 1, tp) < 0);
        CPartition *kept = consumer_partition_find(state, tp);
        if (kept != NULL) {
            g_ptr_array_add(next, g_memdup2(kept, sizeof *kept));
            continue;
        }
        CPartition *fresh = consumer_partition_new(state, tp);
        fresh->committed_pending = committed_pending;
        g_ptr_array_add(next, fresh);
    }
    for (guint i = state->buffer->len; i > 0; i--) {
        const ConsumerRecord *record = &g_array_index(state->buffer, ConsumerRecord, i - 1);
        gboolean keep = FALSE;
        for (guint j = 0; j < next->len && !keep; j++)
            keep = ktp_equal(&((CPartition *)g_ptr_array_index(next, j))->tp, &record->tp);
        if (!keep)
            g_array_remove_index(state->buffer, i - 1);
    }
    g_ptr_array_free(state->partitions, TRUE);
    state->partitions = g_steal_pointer(&next);
    state->metadata_needed = TRUE;
}

/* ---- group requests ---- */

static void request_timed_out(SimWorld *world, void *ctx, void *arg);

gboolean
consumer_subscribed(const ConsumerState *state)
{
    return state->consumer->group_id != NULL;
}

gboolean
consumer_group_cooperative(const ConsumerState *state)
{
    const ConsumerConfig *config = &state->consumer->config;
    /* KIP-848's members keep their partitions through a rebalance too. */
    if (consumer_membership_enabled(state))
        return TRUE;
    return assignor_strategy_cooperative(config->partition_assignment_strategy) &&
           !config->eager_assignor_listed;
}

gint32
consumer_correlation_new(ConsumerState *state)
{
    return state->correlation_next++;
}

void
consumer_request_send(ConsumerState *state, CRequestKind kind, SimNodeId node, SimMsg *msg,
                      gint32 correlation_id, gint64 timeout_ms, guint64 commit_id)
{
    Consumer *consumer = state->consumer;
    CRequest *request = g_new0(CRequest, 1);
    request->kind = kind;
    request->correlation_id = correlation_id;
    request->node = node;
    request->commit_id = commit_id;
    request->timer = sim_timer_set(consumer->world, consumer->node, consumer_ms_to_ns(timeout_ms),
                                   request_timed_out, GINT_TO_POINTER(correlation_id));
    g_ptr_array_add(state->requests, request);
    kproto_update_size(msg);
    sim_net_send(sim_world_net(consumer->world), consumer->node, node, msg);
}

gboolean
consumer_request_in_flight(const ConsumerState *state, CRequestKind kind)
{
    for (guint i = 0; i < state->requests->len; i++) {
        if (((const CRequest *)g_ptr_array_index(state->requests, i))->kind == kind)
            return TRUE;
    }
    return FALSE;
}

/* Takes the request answered by `from` with `correlation_id` out of the
 * list; NULL when it is not (a late answer). The caller frees it. */
static CRequest *
request_take(ConsumerState *state, SimNodeId from, gint32 correlation_id)
{
    for (guint i = 0; i < state->requests->len; i++) {
        CRequest *request = g_ptr_array_index(state->requests, i);
        if (request->correlation_id != correlation_id || request->node != from)
            continue;
        sim_timer_cancel(state->consumer->world, request->timer);
        return g_ptr_array_steal_index(state->requests, i);
    }
    return NULL;
}

CCommit *
consumer_commit_find(const ConsumerState *state, guint64 id)
{
    for (guint i = 0; i < state->commits->len; i++) {
        CCommit *commit = g_ptr_array_index(state->commits, i);
        if (commit->id == id)
            return commit;
    }
    return NULL;
}

/* Kafka's resetGenerationOnResponseError: out of the group; a new member id
 * too when `forget_member`. */
void
consumer_group_reset(ConsumerState *state, gboolean forget_member)
{
    if (consumer_membership_enabled(state)) {
        consumer_membership_fenced(state, forget_member);
        return;
    }
    /* An assignment not yet applied is void with its generation (Kafka's
     * joinGroupIfNeeded skips onJoinComplete after a reset). */
    if (state->assignment_pending != NULL)
        g_array_free(g_steal_pointer(&state->assignment_pending), TRUE);
    state->generation = KAFKA_GENERATION_NONE;
    state->is_leader = FALSE;
    if (forget_member)
        state->member_id[0] = '\0';
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = TRUE;
    sim_timer_cancel(state->consumer->world, state->heartbeat_timer);
}

static void request_abandoned(ConsumerState *state, CRequest *request);

/* Kafka's markCoordinatorUnknown: what was in flight to it fails, and the
 * next group step looks the coordinator up again. */
void
consumer_coordinator_lost(ConsumerState *state)
{
    if (state->coordinator == SIM_NODE_NONE)
        return;
    state->coordinator = SIM_NODE_NONE;
    /* request_abandoned frees each request: the array only borrows them. */
    g_autoptr(GPtrArray) abandoned = g_ptr_array_new();
    for (guint i = state->requests->len; i > 0; i--) {
        CRequest *request = g_ptr_array_index(state->requests, i - 1);
        if (request->kind == CREQ_FIND_COORDINATOR)
            continue;
        sim_timer_cancel(state->consumer->world, request->timer);
        g_ptr_array_add(abandoned, g_ptr_array_steal_index(state->requests, i - 1));
    }
    for (guint i = abandoned->len; i > 0; i--)
        request_abandoned(state, g_ptr_array_index(abandoned, i - 1));
}

/* ---- coordinator lookup ---- */

void
consumer_group_find_coordinator(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->coordinator != SIM_NODE_NONE ||
        consumer_request_in_flight(state, CREQ_FIND_COORDINATOR))
        return;
    if (now < state->coordinator_retry_ns) {
        consumer_wake_at(state, state->coordinator_retry_ns);
        return;
    }
    KFindCoordinatorRequest *request = kproto_new(KMSG_FIND_COORDINATOR_REQUEST);
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    consumer->stats.coordinator_lookups++;
    consumer_request_send(state, CREQ_FIND_COORDINATOR, consumer_metadata_target(state),
                          &request->base, request->correlation_id,
                          consumer->config.request_timeout_ms, 0);
}

static void
handle_find_coordinator_response(ConsumerState *state, const KFindCoordinatorResponse *response)
{
    if (response->error != KAFKA_ERROR_NONE) {
        state->coordinator_retry_ns =
            consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
        return;
    }
    state->coordinator = response->node;
}

/* ---- joining ---- */

static void
send_join(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    const ConsumerConfig *config = &consumer->config;
    KJoinGroupRequest *request = kproto_new(KMSG_JOIN_GROUP_REQUEST);
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    KPROTO_SET_ID(request->client_id, consumer->name);
    request->session_timeout_ms = (gint32)config->session_timeout_ms;
    request->rebalance_timeout_ms = (gint32)config->max_poll_interval_ms;
    request->protocol = (gint32)config->partition_assignment_strategy;
    /* Kafka's ConsumerCoordinator.metadata: the partitions the member owns
     * now, and its generation. An eager member owns nothing by now; ksim
     * reports what it revoked for sticky, whose StickyAssignor carries its
     * previous assignment in its user data. cooperative-sticky run eagerly
     * (listed with an eager assignor, Kafka's upgrade path) reads only the
     * owned partitions, so it sees none and withholds nothing. */
    static const GArray none = {NULL, 0};
    const GArray *owned = state->owned;
    request->owned_generation = state->owned_generation;
    if (consumer_group_cooperative(state)) {
        owned = consumer->assigned;
        request->owned_generation = state->generation;
    } else if (assignor_strategy_cooperative(config->partition_assignment_strategy)) {
        owned = &none;
        request->owned_generation = state->generation;
    }
    for (guint i = 0; i < consumer->topics->len; i++) {
        KTopicName name;
        KPROTO_SET_ID(name.name, (const char *)g_ptr_array_index(consumer->topics, i));
        g_array_append_val(request->topics, name);
    }
    g_array_append_vals(request->owned, owned->data, owned->len);
    state->group_state = CGROUP_JOINING;
    state->rejoin_needed = FALSE;
    consumer->stats.joins++;
    /* Kafka waits the rebalance timeout plus a lapse for a JoinGroup. */
    gint64 timeout_ms = MAX(config->request_timeout_ms, config->max_poll_interval_ms + 5000);
    consumer_request_send(state, CREQ_JOIN, state->coordinator, &request->base,
                          request->correlation_id, timeout_ms, 0);
}

/* Kafka's onJoinPrepare (eager): every partition is revoked, positions and
 * buffered records go. What was owned is kept for sticky's next join. */
static void
revoke_all(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    if (consumer->assigned->len == 0)
        return;
    g_array_set_size(state->owned, 0);
    g_array_append_vals(state->owned, consumer->assigned->data, consumer->assigned->len);
    state->owned_generation = state->generation;
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    consumer_assignment_set(state, none, FALSE);
}

/* Kafka's onJoinPrepare (cooperative): only partitions of topics no longer
 * subscribed are revoked, and a ksim subscription never changes while
 * subscribed, so none; but a member out of its generation has lost them all
 * (onPartitionsLost: no commit, nothing owned to report). */
static void
revoke_cooperative(ConsumerState *state)
{
    if (state->generation != KAFKA_GENERATION_NONE && state->member_id[0] != '\0')
        return;
    g_array_set_size(state->owned, 0);
    state->owned_generation = KAFKA_GENERATION_NONE;
    if (state->consumer->assigned->len == 0)
        return;
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    consumer_assignment_set(state, none, FALSE);
}

/* One step towards a JoinGroup, from inside poll(). */
static void
join_start(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->group_state == CGROUP_STABLE && consumer->config.enable_auto_commit &&
        consumer->assigned->len > 0) {
        state->group_state = CGROUP_PREPARING;
        consumer_commit_new(state, COMMIT_FOR_JOIN, TRUE);
        return;
    }
    if (state->group_state == CGROUP_PREPARING)
        return;
    if (consumer_group_cooperative(state))
        revoke_cooperative(state);
    else
        revoke_all(state);
    state->group_state = CGROUP_UNJOINED;
    sim_timer_cancel(consumer->world, state->heartbeat_timer);
    /* The leader assigns from its metadata: have some first. */
    if (state->metadata_refreshed_ns == G_MININT64)
        return;
    if (now < state->join_retry_ns) {
        consumer_wake_at(state, state->join_retry_ns);
        return;
    }
    send_join(state);
}

/* The leader's assignment from the members' subscriptions and its metadata. */
static void
leader_assign(ConsumerState *state, const KJoinGroupResponse *response, KSyncGroupRequest *request)
{
    g_autoptr(AssignorInput) input = assignor_input_new();
    g_array_set_size(state->assigned_counts, 0);
    for (guint i = 0; i < response->subscriptions->len; i++) {
        const char *topic = g_array_index(response->subscriptions, KMemberTopic, i).topic;
        if (consumer_topic_count_of(state->assigned_counts, topic) != -1 ||
            g_array_index(response->subscriptions, KMemberTopic, i).topic[0] == '\0')
            continue;
        CTopicCount count;
        KPROTO_SET_ID(count.topic, topic);
        count.partitions = consumer_topic_count_of(state->topic_counts, topic);
        /* Unknown topics are remembered as 0 so their creation is noticed. */
        g_array_append_val(state->assigned_counts, count);
        assignor_input_add_topic(input, topic, (guint32)MAX(count.partitions, 0));
    }
    for (guint m = 0; m < response->members->len; m++) {
        const KMemberGeneration *member = &g_array_index(response->members, KMemberGeneration, m);
        g_autoptr(GPtrArray) topics = g_ptr_array_new();
        for (guint i = 0; i < response->subscriptions->len; i++) {
            const KMemberTopic *entry = &g_array_index(response->subscriptions, KMemberTopic, i);
            if (strcmp(entry->member_id, member->member_id) == 0)
                g_ptr_array_add(topics, (gpointer)entry->topic);
        }
        gboolean added = assignor_input_add_member(input, member->member_id,
                                                   (const char *const *)topics->pdata, topics->len,
                                                   member->owned_generation);
        KSIM_ASSERT(added);
    }
    for (guint i = 0; i < response->owned->len; i++) {
        const KMemberPartition *owned = &g_array_index(response->owned, KMemberPartition, i);
        assignor_input_add_owned(input, owned->member_id, owned->tp.topic,
                                 (guint32)owned->tp.partition);
    }
    AssignorStrategy strategy = (AssignorStrategy)response->protocol;
    g_autoptr(AssignorResult) result = assignor_assign(input, strategy);
    assignor_result_check_invariants(result, input);
    /* Kafka's leader validates a cooperative assignment (and throws). */
    if (consumer_group_cooperative(state))
        assignor_result_check_cooperative(result, input);
    for (guint m = 0; m < assignor_result_member_count(result); m++) {
        for (guint i = 0; i < assignor_result_partition_count(result, m); i++) {
            KMemberPartition entry;
            memset(&entry, 0, sizeof entry);
            KPROTO_SET_ID(entry.member_id, assignor_result_member_id(result, m));
            ktp_set(&entry.tp, assignor_result_partition_topic(result, m, i),
                    (gint32)assignor_result_partition_number(result, m, i));
            g_array_append_val(request->assignments, entry);
        }
    }
}

static void
send_sync(ConsumerState *state, const KJoinGroupResponse *response)
{
    Consumer *consumer = state->consumer;
    KSyncGroupRequest *request = kproto_new(KMSG_SYNC_GROUP_REQUEST);
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    request->generation_id = state->generation;
    if (state->is_leader)
        leader_assign(state, response, request);
    state->group_state = CGROUP_SYNCING;
    consumer_request_send(state, CREQ_SYNC, state->coordinator, &request->base,
                          request->correlation_id, consumer->config.request_timeout_ms, 0);
}

/* JoinGroup and SyncGroup errors, as Kafka's response handlers treat them;
 * the join starts again from the next poll unless the error is fatal. */
static void
join_failed(ConsumerState *state, KafkaError error)
{
    Consumer *consumer = state->consumer;
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = TRUE;
    switch (error) {
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
        consumer_group_reset(state, TRUE);
        return;
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        consumer_group_reset(state, FALSE);
        return;
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
    case KAFKA_ERROR_CLIENT_DISCONNECTED:
        consumer_coordinator_lost(state);
        return;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->join_retry_ns =
            consumer_now(state) + consumer_ms_to_ns(consumer->config.retry_backoff_ms);
        return;
    default:
        /* INCONSISTENT_GROUP_PROTOCOL, INVALID_SESSION_TIMEOUT, ...: Kafka
         * throws them to the application, which stops. */
        state->group_fatal = TRUE;
        consumer->stats.group_errors++;
        return;
    }
}

static void
handle_join_response(ConsumerState *state, const KJoinGroupResponse *response)
{
    if (state->group_state != CGROUP_JOINING)
        return;
    if (response->error != KAFKA_ERROR_NONE) {
        join_failed(state, response->error);
        return;
    }
    KPROTO_SET_ID(state->member_id, response->member_id);
    state->generation = response->generation_id;
    state->protocol = response->protocol;
    state->is_leader = strcmp(response->leader_id, response->member_id) == 0;
    send_sync(state, response);
}

static void heartbeat_fire(SimWorld *world, void *ctx, void *arg);

static void
heartbeat_schedule(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    sim_timer_cancel(consumer->world, state->heartbeat_timer);
    state->heartbeat_timer = sim_timer_set(
        consumer->world, consumer->node, consumer_ms_to_ns(consumer->config.heartbeat_interval_ms),
        heartbeat_fire, NULL);
}

static void
handle_sync_response(ConsumerState *state, const KSyncGroupResponse *response)
{
    Consumer *consumer = state->consumer;
    if (state->group_state != CGROUP_SYNCING)
        return;
    if (response->error != KAFKA_ERROR_NONE) {
        join_failed(state, response->error);
        return;
    }
    g_autoptr(GArray) tps = g_array_copy(response->assignment);
    g_array_sort(tps, consumer_tp_compare);
    if (consumer_group_cooperative(state)) {
        /* Applied at the next poll (assignment_complete). */
        KSIM_ASSERT(state->assignment_pending == NULL);
        state->assignment_pending = g_steal_pointer(&tps);
    } else {
        consumer_assignment_set(state, tps, TRUE);
    }
    state->group_state = CGROUP_STABLE;
    g_array_set_size(state->owned, 0);
    state->owned_generation = KAFKA_GENERATION_NONE;
    gint64 now = consumer_now(state);
    state->heartbeat_ok_ns = now;
    state->next_auto_commit_ns = now + consumer_ms_to_ns(consumer->config.auto_commit_interval_ms);
    state->offset_fetch_retry_ns = G_MININT64;
    consumer->stats.rebalances++;
    heartbeat_schedule(state);
}

/* TRUE when the member commits offsets at all: automatically, or through its
 * processing loop. Only such an application commits in its
 * onPartitionsRevoked. */
gboolean
consumer_group_member_commits(const ConsumerState *state)
{
    const ConsumerConfig *config = &state->consumer->config;
    return config->enable_auto_commit || config->processing_mode != CONSUMER_PROCESSING_AUTO;
}

/* Kafka's onJoinComplete (cooperative), from inside poll(): the partitions
 * owned and no longer assigned are revoked, their positions committed
 * first; the member then rejoins. Kept partitions keep their positions and
 * buffered records; new ones await their committed offsets. */
static void
assignment_complete(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    g_autoptr(GArray) tps = g_steal_pointer(&state->assignment_pending);
    g_autoptr(GArray) revoked = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    for (guint i = 0; i < consumer->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
        if (!consumer_tps_contain(tps, tp))
            g_array_append_val(revoked, *tp);
    }
    if (revoked->len > 0) {
        if (consumer_group_member_commits(state))
            consumer_commit_new_of(state, COMMIT_FOR_REVOKE, TRUE, revoked);
        consumer->stats.partitions_revoked += revoked->len;
        state->rejoin_needed = TRUE;
    }
    consumer_assignment_set(state, tps, TRUE);
}

/* The leader notices a changed partition count of a subscribed topic
 * (Kafka's assignment snapshot against the metadata snapshot). */
void
consumer_group_metadata_updated(ConsumerState *state)
{
    if (!consumer_subscribed(state) || !state->is_leader || state->group_state != CGROUP_STABLE)
        return;
    for (guint i = 0; i < state->assigned_counts->len; i++) {
        const CTopicCount *count = &g_array_index(state->assigned_counts, CTopicCount, i);
        if (consumer_topic_count_of(state->topic_counts, count->topic) != count->partitions)
            state->rejoin_needed = TRUE;
    }
}

/* ---- heartbeats, leaving ---- */

static void
heartbeat_fire(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->heartbeat_timer = SIM_EVENT_ID_NONE;
    /* The member's session lasts through the commit before a rejoin. */
    if (state->group_state != CGROUP_STABLE && state->group_state != CGROUP_PREPARING)
        return;
    gint64 now = consumer_now(state);
    /* Kafka's sessionTimeoutExpired: no answer for a session's time. */
    if (now - state->heartbeat_ok_ns > consumer_ms_to_ns(consumer->config.session_timeout_ms))
        consumer_coordinator_lost(state);
    if (state->coordinator != SIM_NODE_NONE && !consumer_request_in_flight(state, CREQ_HEARTBEAT)) {
        KGroupRequest *request = kproto_new(KMSG_HEARTBEAT_REQUEST);
        request->correlation_id = consumer_correlation_new(state);
        KPROTO_SET_ID(request->group_id, consumer->group_id);
        KPROTO_SET_ID(request->member_id, state->member_id);
        request->generation_id = state->generation;
        consumer->stats.heartbeats++;
        consumer_request_send(state, CREQ_HEARTBEAT, state->coordinator, &request->base,
                              request->correlation_id, consumer->config.request_timeout_ms, 0);
    }
    heartbeat_schedule(state);
    consumer_run(state);
}

static void
handle_heartbeat_response(ConsumerState *state, const KGroupResponse *response)
{
    switch (response->error) {
    case KAFKA_ERROR_NONE:
        state->heartbeat_ok_ns = consumer_now(state);
        return;
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->heartbeat_ok_ns = consumer_now(state);
        state->rejoin_needed = TRUE;
        return;
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        if (state->group_state == CGROUP_STABLE || state->group_state == CGROUP_PREPARING)
            consumer_group_reset(state, response->error == KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        return;
    default:
        consumer_coordinator_lost(state);
        return;
    }
}

/* Kafka's maybeLeaveGroup: a LeaveGroup nobody waits for, and the member
 * forgets its id and generation and drops its partitions. */
void
consumer_leave_group(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    if (consumer_membership_enabled(state)) {
        consumer_membership_leave(state);
        return;
    }
    if (state->member_id[0] != '\0' && state->coordinator != SIM_NODE_NONE) {
        KGroupRequest *request = kproto_new(KMSG_LEAVE_GROUP_REQUEST);
        request->correlation_id = consumer_correlation_new(state);
        KPROTO_SET_ID(request->group_id, consumer->group_id);
        KPROTO_SET_ID(request->member_id, state->member_id);
        request->generation_id = state->generation;
        consumer_request_send(state, CREQ_LEAVE, state->coordinator, &request->base,
                              request->correlation_id, consumer->config.request_timeout_ms, 0);
    }
    consumer_group_reset(state, TRUE);
    sim_timer_cancel(consumer->world, state->heartbeat_timer);
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    consumer_assignment_set(state, none, FALSE);
    g_array_set_size(state->owned, 0);
    state->owned_generation = KAFKA_GENERATION_NONE;
}

void
consumer_poll_timeout_fire(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->poll_timeout_timer = SIM_EVENT_ID_NONE;
    consumer->stats.poll_timeouts++;
    consumer_leave_group(state);
    consumer_run(state);
}

/* ---- failures of group requests ---- */

/* A request abandoned without an answer (timeout, disconnect, coordinator
 * lost); frees it. */
static void
request_abandoned(ConsumerState *state, CRequest *request)
{
    gint64 retry_ns =
        consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
    switch (request->kind) {
    case CREQ_FIND_COORDINATOR:
        state->coordinator_retry_ns = retry_ns;
        break;
    case CREQ_JOIN:
    case CREQ_SYNC:
        if (state->group_state == CGROUP_JOINING || state->group_state == CGROUP_SYNCING)
            join_failed(state, KAFKA_ERROR_CLIENT_DISCONNECTED);
        break;
    case CREQ_COMMIT: {
        CCommit *commit = consumer_commit_find(state, request->commit_id);
        if (commit != NULL)
            consumer_commit_failed(state, commit, KAFKA_ERROR_CLIENT_DISCONNECTED, TRUE);
        break;
    }
    case CREQ_OFFSET_FETCH:
        state->offset_fetch_retry_ns = retry_ns;
        break;
    case CREQ_HEARTBEAT:
    case CREQ_LEAVE:
    case CREQ_CONSUMER_HEARTBEAT: /* the next one goes at its interval */
        break;
    }
    g_free(request);
}

/* A request timeout or a broken connection: Kafka marks the coordinator
 * unknown, which fails everything in flight to it. */
static void
group_request_failed(ConsumerState *state, CRequest *request)
{
    SimNodeId node = request->node;
    request_abandoned(state, request);
    if (node == state->coordinator)
        consumer_coordinator_lost(state);
}

static void
request_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    gint32 correlation_id = GPOINTER_TO_INT(arg);
    for (guint i = 0; i < state->requests->len; i++) {
        CRequest *request = g_ptr_array_index(state->requests, i);
        if (request->correlation_id != correlation_id)
            continue;
        request->timer = SIM_EVENT_ID_NONE;
        g_ptr_array_steal_index(state->requests, i);
        group_request_failed(state, request);
        break;
    }
    consumer_run(state);
}

void
consumer_group_connection_failed(ConsumerState *state, SimNodeId node)
{
    g_autoptr(GPtrArray) failed = g_ptr_array_new();
    for (guint i = state->requests->len; i > 0; i--) {
        CRequest *request = g_ptr_array_index(state->requests, i - 1);
        if (request->node != node)
            continue;
        sim_timer_cancel(state->consumer->world, request->timer);
        g_ptr_array_add(failed, g_ptr_array_steal_index(state->requests, i - 1));
    }
    /* Oldest first, as they were sent. */
    for (guint i = failed->len; i > 0; i--)
        request_abandoned(state, g_ptr_array_index(failed, i - 1));
    if (failed->len > 0 && node == state->coordinator)
        consumer_coordinator_lost(state);
}

/* Dispatches a group response; FALSE when `msg` is not one. */
gboolean
consumer_group_handle_message(ConsumerState *state, SimNodeId from, SimMsg *msg)
{
    gint32 correlation_id;
    switch ((KafkaMsgType)msg->type) {
    case KMSG_FIND_COORDINATOR_RESPONSE:
        correlation_id = ((KFindCoordinatorResponse *)msg)->correlation_id;
        break;
    case KMSG_JOIN_GROUP_RESPONSE:
        correlation_id = ((KJoinGroupResponse *)msg)->correlation_id;
        break;
    case KMSG_SYNC_GROUP_RESPONSE:
        correlation_id = ((KSyncGroupResponse *)msg)->correlation_id;
        break;
    case KMSG_HEARTBEAT_RESPONSE:
    case KMSG_LEAVE_GROUP_RESPONSE:
        correlation_id = ((KGroupResponse *)msg)->correlation_id;
        break;
    case KMSG_OFFSET_COMMIT_RESPONSE:
    case KMSG_OFFSET_FETCH_RESPONSE:
        correlation_id = ((KOffsetMessage *)msg)->correlation_id;
        break;
    case KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE:
        correlation_id = ((KConsumerHeartbeatResponse *)msg)->correlation_id;
        break;
    default:
        return FALSE;
    }
    g_autofree CRequest *request = request_take(state, from, correlation_id);
    if (request == NULL)
        return TRUE;
    switch (request->kind) {
    case CREQ_FIND_COORDINATOR:
        handle_find_coordinator_response(state, (const KFindCoordinatorResponse *)msg);
        break;
    case CREQ_JOIN:
        handle_join_response(state, (const KJoinGroupResponse *)msg);
        break;
    case CREQ_SYNC:
        handle_sync_response(state, (const KSyncGroupResponse *)msg);
        break;
    case CREQ_HEARTBEAT:
        handle_heartbeat_response(state, (const KGroupResponse *)msg);
        break;
    case CREQ_LEAVE:
        break;
    case CREQ_COMMIT:
        consumer_handle_commit_response(state, request, (const KOffsetMessage *)msg);
        break;
    case CREQ_OFFSET_FETCH:
        consumer_handle_offset_fetch_response(state, (const KOffsetMessage *)msg);
        break;
    case CREQ_CONSUMER_HEARTBEAT:
        consumer_membership_handle_response(state, (const KConsumerHeartbeatResponse *)msg);
        break;
    }
    return TRUE;
}

/* ---- the group's part of poll() and of the background ---- */

/* Kafka's ConsumerCoordinator.poll, from inside the application's poll():
 * TRUE when the member may return records. */
gboolean
consumer_group_poll(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (!consumer_subscribed(state))
        return TRUE;
    if (state->group_fatal)
        return FALSE;
    if (consumer_membership_enabled(state))
        return consumer_membership_poll(state, now);
    if (state->coordinator == SIM_NODE_NONE) {
        consumer_group_find_coordinator(state, now);
        return FALSE;
    }
    gboolean cooperative = consumer_group_cooperative(state);
    if (state->assignment_pending != NULL)
        assignment_complete(state);
    /* The revocation's commitSync blocks poll, as in onPartitionsRevoked. */
    if (cooperative && consumer_commit_pending(state, COMMIT_FOR_REVOKE))
        return FALSE;
    if (state->rejoin_needed || state->group_state != CGROUP_STABLE) {
        if (state->group_state != CGROUP_JOINING && state->group_state != CGROUP_SYNCING)
            join_start(state, now);
        /* A cooperative member goes on reading what it owns. */
        return cooperative;
    }
    if (consumer->config.enable_auto_commit && now >= state->next_auto_commit_ns) {
        consumer_commit_new(state, COMMIT_FOR_AUTO, FALSE);
        state->next_auto_commit_ns =
            now + consumer_ms_to_ns(consumer->config.auto_commit_interval_ms);
    }
    return TRUE;
}

void
consumer_group_run(ConsumerState *state, gint64 now)
{
    if (!consumer_subscribed(state))
        return;
    /* Kafka's heartbeat thread and poll both look the coordinator up. */
    if (state->coordinator == SIM_NODE_NONE && !state->group_fatal)
        consumer_group_find_coordinator(state, now);
    consumer_commits_send(state, now);
    consumer_offsets_fetch(state, now);
    if (consumer_membership_enabled(state))
        consumer_membership_run(state, now);
    if (state->poll_waiting && consumer_group_poll(state, now) && state->buffer->len > 0) {
        state->poll_waiting = FALSE;
        consumer_poll_schedule(state, 0);
    }
}
