/*
 * consumer_membership: the consumer group protocol of KIP-848
 * (group.protocol=consumer), as Kafka 4.0's AsyncKafkaConsumer runs it
 * (ConsumerMembershipManager, AbstractMembershipManager and
 * HeartbeatRequestManager, clients/.../consumer/internals, trunk 1eb7644).
 *
 * The member has no JoinGroup, SyncGroup or leader: it sends
 * ConsumerGroupHeartbeat to the coordinator — at once to join (epoch 0),
 * to acknowledge a reconciled assignment and to leave (epoch -1), and
 * otherwise every heartbeat interval the coordinator gives — with its epoch,
 * subscription and owned partitions; the coordinator computes the
 * assignment (group_coord_consumer.c) and answers each heartbeat with the
 * member's epoch and the partitions it may own now.
 *
 * Reconciliation (AbstractMembershipManager.maybeReconcile), from inside
 * poll() as Kafka runs the rebalance listener's callbacks: when the answer's
 * partitions differ from the owned ones, those no longer assigned are
 * revoked — their positions committed first when the member commits at all
 * (Kafka's autoCommitSyncBeforeRevocation, or the application's
 * onPartitionsRevoked; poll() returns nothing while that commit runs, and
 * the revoked partitions stay owned and reported until it ends) — then the
 * new ones are added (awaiting their committed offsets), and a heartbeat
 * acknowledges the new owned set at once. Partitions kept keep their
 * positions and buffered records: nobody stops reading for a rebalance.
 *
 * States (`group_state`, with the function of each transition):
 *   UNJOINED ──heartbeat_send (epoch 0)──▶ JOINING
 *   JOINING ──handle_response: an epoch──▶ STABLE (a member)
 *   STABLE ──FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, a commit's
 *            UNKNOWN_MEMBER_ID (consumer_membership_fenced): partitions lost
 *            without a commit──▶ UNJOINED (rejoins at once)
 *   any ──poll timeout, unsubscribe (consumer_membership_leave): epoch -1
 *            sent, partitions dropped──▶ UNJOINED (joins again from the
 *            next poll; a fenced member rejoins at once)
 * The member epoch is kept in `generation`, which commits carry.
 *
 * Not modelled: client-side assignors (group.remote.assignor only), the
 * subscription and owned partitions sent only when changed (ksim always
 * sends them), regular-expression subscriptions, static membership.
 */
#include "consumer_internal.h"

#include "sim_assert.h"

#include <stdlib.h>
#include <string.h>

gboolean
consumer_membership_enabled(const ConsumerState *state)
{
    return state->consumer->config.group_protocol == CONSUMER_GROUP_PROTOCOL_CONSUMER;
}

static gboolean
tps_equal(const GArray *a, const GArray *b)
{
    if (a->len != b->len)
        return FALSE;
    for (guint i = 0; i < a->len; i++) {
        if (!ktp_equal(&g_array_index(a, KTopicPartition, i),
                       &g_array_index(b, KTopicPartition, i)))
            return FALSE;
    }
    return TRUE;
}

static void
heartbeat_soon(ConsumerState *state)
{
    state->heartbeat_now = TRUE;
    consumer_wake_at(state, consumer_now(state));
}

/* ---- heartbeats ---- */

static void
heartbeat_send(ConsumerState *state, gint64 now, gint32 epoch)
{
    Consumer *consumer = state->consumer;
    const ConsumerConfig *config = &consumer->config;
    KConsumerHeartbeatRequest *request = kproto_new(KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST);
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    KPROTO_SET_ID(request->client_id, consumer->name);
    request->member_epoch = epoch;
    request->rebalance_timeout_ms = (gint32)config->max_poll_interval_ms;
    request->server_assignor = config->group_remote_assignor;
    for (guint i = 0; i < consumer->topics->len; i++) {
        KTopicName name;
        KPROTO_SET_ID(name.name, (const char *)g_ptr_array_index(consumer->topics, i));
        g_array_append_val(request->topics, name);
    }
    /* What it owns: while a revocation's commit runs, the revoked
     * partitions are still its own. */
    g_array_append_vals(request->owned, consumer->assigned->data, consumer->assigned->len);
    if (epoch == KAFKA_MEMBER_EPOCH_JOIN)
        state->group_state = CGROUP_JOINING;
    state->heartbeat_now = FALSE;
    state->next_heartbeat_ns = now + consumer_ms_to_ns(state->heartbeat_interval_ms);
    consumer->stats.heartbeats++;
    if (epoch == KAFKA_MEMBER_EPOCH_JOIN)
        consumer->stats.joins++;
    consumer_request_send(state, CREQ_CONSUMER_HEARTBEAT, state->coordinator, &request->base,
                          request->correlation_id, config->request_timeout_ms, 0);
}

/* Heartbeats when due; `from_poll` when the application's poll runs it. */
static void
membership_run(ConsumerState *state, gint64 now, gboolean from_poll)
{
    if (state->group_fatal || state->coordinator == SIM_NODE_NONE ||
        consumer_request_in_flight(state, CREQ_CONSUMER_HEARTBEAT))
        return;
    /* A fenced member rejoins at once; one that left (a poll timeout) or
     * has not joined yet (a start, a restart) joins from poll(), as Kafka's
     * does when the application polls again. */
    if (state->group_state == CGROUP_UNJOINED && !state->rejoin_needed && !from_poll)
        return;
    if (state->group_state == CGROUP_UNJOINED) {
        if (now < state->join_retry_ns) {
            consumer_wake_at(state, state->join_retry_ns);
            return;
        }
        state->rejoin_needed = FALSE;
        heartbeat_send(state, now, KAFKA_MEMBER_EPOCH_JOIN);
        return;
    }
    if (!state->heartbeat_now && now < state->next_heartbeat_ns) {
        consumer_wake_at(state, state->next_heartbeat_ns);
        return;
    }
    heartbeat_send(state, now, state->generation);
}

void
consumer_membership_run(ConsumerState *state, gint64 now)
{
    membership_run(state, now, FALSE);
}

/* Drops every partition without a commit (Kafka's onPartitionsLost). */
static void
lose_partitions(ConsumerState *state)
{
    if (state->assignment_pending != NULL)
        g_array_free(g_steal_pointer(&state->assignment_pending), TRUE);
    if (state->reconciling != NULL)
        g_array_free(g_steal_pointer(&state->reconciling), TRUE);
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    consumer_assignment_set(state, none, FALSE);
}

void
consumer_membership_fenced(ConsumerState *state, gboolean forget_member)
{
    lose_partitions(state);
    state->generation = KAFKA_GENERATION_NONE;
    if (forget_member)
        state->member_id[0] = '\0';
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = TRUE;
    heartbeat_soon(state);
}

void
consumer_membership_leave(ConsumerState *state)
{
    if (state->member_id[0] != '\0' && state->coordinator != SIM_NODE_NONE &&
        state->group_state == CGROUP_STABLE && !state->group_fatal) {
        /* Nobody waits for its answer: a new heartbeat may follow it. */
        heartbeat_send(state, consumer_now(state), KAFKA_MEMBER_EPOCH_LEAVE);
    }
    lose_partitions(state);
    state->generation = KAFKA_GENERATION_NONE;
    state->member_id[0] = '\0';
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = FALSE; /* the next poll joins again */
}

/* The coordinator's partitions for the member: reconciled at the next
 * poll when they differ from what it owns or is reconciling to. */
static void
assignment_received(ConsumerState *state, const GArray *assignment)
{
    g_autoptr(GArray) tps =
        g_array_sized_new(FALSE, FALSE, sizeof(KTopicPartition), assignment->len);
    g_array_append_vals(tps, assignment->data, assignment->len);
    g_array_sort(tps, consumer_tp_compare);
    const GArray *current =
        state->reconciling != NULL ? state->reconciling : state->consumer->assigned;
    if (state->assignment_pending != NULL)
        g_array_free(g_steal_pointer(&state->assignment_pending), TRUE);
    if (!tps_equal(tps, current))
        state->assignment_pending = g_steal_pointer(&tps);
}

/* A join that got no epoch is tried again. */
static void
join_abandoned(ConsumerState *state)
{
    if (state->group_state != CGROUP_JOINING)
        return;
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = TRUE;
}

void
consumer_membership_handle_response(ConsumerState *state,
                                    const KConsumerHeartbeatResponse *response)
{
    Consumer *consumer = state->consumer;
    gint64 now = consumer_now(state);
    if (response->member_epoch == KAFKA_MEMBER_EPOCH_LEAVE && response->error == KAFKA_ERROR_NONE)
        return; /* a leave's answer */
    if (state->group_state == CGROUP_UNJOINED)
        return; /* an answer from before a fence or a leave */
    switch (response->error) {
    case KAFKA_ERROR_NONE:
        break;
    case KAFKA_ERROR_FENCED_MEMBER_EPOCH:
        consumer_membership_fenced(state, FALSE);
        return;
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
        consumer_membership_fenced(state, TRUE);
        return;
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
        join_abandoned(state);
        consumer_coordinator_lost(state);
        return;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
        join_abandoned(state);
        state->join_retry_ns = now + consumer_ms_to_ns(consumer->config.retry_backoff_ms);
        state->next_heartbeat_ns = state->join_retry_ns;
        return;
    default:
        /* UNSUPPORTED_ASSIGNOR, INVALID_REQUEST, INCONSISTENT_GROUP_PROTOCOL:
         * Kafka's transitionToFatal; the application's poll throws. */
        lose_partitions(state);
        state->group_state = CGROUP_UNJOINED;
        state->group_fatal = TRUE;
        consumer->stats.group_errors++;
        return;
    }
    KPROTO_SET_ID(state->member_id, response->member_id);
    state->generation = response->member_epoch;
    if (state->group_state == CGROUP_JOINING) {
        state->group_state = CGROUP_STABLE;
        state->next_auto_commit_ns =
            now + consumer_ms_to_ns(consumer->config.auto_commit_interval_ms);
    }
    state->heartbeat_ok_ns = now;
    state->heartbeat_interval_ms = response->heartbeat_interval_ms;
    state->next_heartbeat_ns = now + consumer_ms_to_ns(state->heartbeat_interval_ms);
    assignment_received(state, response->assignment);
}

/* ---- reconciliation, from inside poll() ---- */

/* The member now owns `target`: revoked partitions go, new ones await
 * their committed offsets; a heartbeat acknowledges it at once. */
static void
assignment_apply(ConsumerState *state, GArray *target)
{
    Consumer *consumer = state->consumer;
    guint revoked = 0;
    for (guint i = 0; i < consumer->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
        if (!consumer_tps_contain(target, tp))
            revoked++;
    }
    consumer->stats.partitions_revoked += revoked;
    consumer->stats.rebalances++;
    consumer_assignment_set(state, target, TRUE);
    state->offset_fetch_retry_ns = G_MININT64;
    heartbeat_soon(state);
}

gboolean
consumer_membership_poll(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->coordinator == SIM_NODE_NONE)
        consumer_group_find_coordinator(state, now);
    if (state->reconciling != NULL) {
        /* The revoked partitions' commit blocks poll, as in
         * onPartitionsRevoked; then the new assignment applies. */
        if (consumer_commit_pending(state, COMMIT_FOR_REVOKE))
            return FALSE;
        g_autoptr(GArray) target = g_steal_pointer(&state->reconciling);
        assignment_apply(state, target);
    }
    if (state->assignment_pending != NULL && state->group_state == CGROUP_STABLE) {
        g_autoptr(GArray) target = g_steal_pointer(&state->assignment_pending);
        g_autoptr(GArray) revoked = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
        for (guint i = 0; i < consumer->assigned->len; i++) {
            const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
            if (!consumer_tps_contain(target, tp))
                g_array_append_val(revoked, *tp);
        }
        if (revoked->len > 0 && consumer_group_member_commits(state)) {
            consumer_commit_new_of(state, COMMIT_FOR_REVOKE, TRUE, revoked);
            state->reconciling = g_steal_pointer(&target);
            return FALSE;
        }
        assignment_apply(state, target);
    }
    if (state->group_state == CGROUP_STABLE && consumer->config.enable_auto_commit &&
        now >= state->next_auto_commit_ns) {
        consumer_commit_new(state, COMMIT_FOR_AUTO, FALSE);
        state->next_auto_commit_ns =
            now + consumer_ms_to_ns(consumer->config.auto_commit_interval_ms);
    }
    membership_run(state, now, TRUE);
    return TRUE;
}
