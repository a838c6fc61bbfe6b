/*
 * consumer_offsets: offset commits — automatic, before a rejoin, around
 * processing, and the application's commitSync / commitAsync — from their
 * invocation to their outcome, and the OffsetFetch that gives a new
 * assignment its committed positions.
 */
#include "consumer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <stdlib.h>
#include <string.h>

/* ---- commits ---- */

/* Ends a commit: its ops complete, then what waited on it goes on. */
void
consumer_commit_finish(ConsumerState *state, CCommit *commit, HistoryType outcome, KafkaError error)
{
    Consumer *consumer = state->consumer;
    gint64 now = consumer_now(state);
    for (guint i = 0; i < commit->offsets->len; i++) {
        const KOffsetPartition *entry = &g_array_index(commit->offsets, KOffsetPartition, i);
        history_complete(consumer->history, g_array_index(commit->ops, guint64, i), now, outcome,
                         entry->tp.partition, entry->offset,
                         outcome == HISTORY_OK ? 0 : (gint32)error);
    }
    if (outcome == HISTORY_OK)
        consumer->stats.commits_ok++;
    else
        consumer->stats.commits_failed++;
    guint index = 0;
    gboolean found = g_ptr_array_find(state->commits, commit, &index);
    KSIM_ASSERT(found);
    g_ptr_array_steal_index(state->commits, index);
    switch (commit->purpose) {
    case COMMIT_FOR_JOIN:
        /* Kafka joins whatever the commit's outcome, and heartbeats no more
         * once it joins: at the next poll, which an eager member is waiting
         * in, a cooperative one may not be. */
        if (state->group_state == CGROUP_PREPARING) {
            state->group_state = CGROUP_UNJOINED;
            sim_timer_cancel(consumer->world, state->heartbeat_timer);
        }
        break;
    case COMMIT_FOR_BEFORE_PROCESSING:
        state->app_commit = NULL;
        if (outcome == HISTORY_OK) {
            consumer_processing_start(state);
            break;
        }
        /* At most once: records whose commit failed are not processed. */
        g_array_set_size(state->processing, 0);
        state->processed = 0;
        consumer_poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
        break;
    case COMMIT_FOR_API:
        if (commit->done_cb != NULL)
            commit->done_cb(consumer, outcome, error, commit->user_data);
        break;
    case COMMIT_FOR_AUTO:
    case COMMIT_FOR_REVOKE:
        /* A poll waiting on a revocation goes on from consumer_group_run. */
        break;
    }
    consumer_commit_free(commit);
}

/* Kafka's allConsumed: the position of every assigned partition that has
 * one. One op per partition enters the history now. */
CCommit *
consumer_commit_new(ConsumerState *state, CommitPurpose purpose, gboolean sync)
{
    return consumer_commit_new_of(state, purpose, sync, NULL);
}

gboolean
consumer_commit_pending(const ConsumerState *state, CommitPurpose purpose)
{
    for (guint i = 0; i < state->commits->len; i++) {
        if (((const CCommit *)g_ptr_array_index(state->commits, i))->purpose == purpose)
            return TRUE;
    }
    return FALSE;
}

/* `tps` NULL: every assigned partition. */
CCommit *
consumer_commit_new_of(ConsumerState *state, CommitPurpose purpose, gboolean sync,
                       const GArray *tps)
{
    Consumer *consumer = state->consumer;
    gint64 now = consumer_now(state);
    CCommit *commit = g_new0(CCommit, 1);
    commit->id = ++state->commit_next;
    commit->purpose = purpose;
    commit->sync = sync;
    commit->offsets = g_array_new(FALSE, FALSE, sizeof(KOffsetPartition));
    commit->ops = g_array_new(FALSE, FALSE, sizeof(guint64));
    commit->deadline_ns = now + consumer_ms_to_ns(consumer->config.default_api_timeout_ms);
    commit->retry_ns = G_MININT64;
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        if (p->position < 0)
            continue;
        if (tps != NULL && bsearch(&p->tp, tps->data, tps->len, sizeof(KTopicPartition),
                                   consumer_tp_compare) == NULL)
            continue;
        /* With the epoch of the record before the position, as Kafka's
         * SubscriptionState.allConsumed commits it (KIP-320). */
        KOffsetPartition entry = {p->tp, p->position, KAFKA_ERROR_NONE, p->position_epoch};
        g_array_append_val(commit->offsets, entry);
        guint64 op = history_invoke(consumer->history, now, HISTORY_FN_COMMIT, consumer->process,
                                    p->history_topic, p->tp.partition, 0, (guint64)p->position);
        g_array_append_val(commit->ops, op);
    }
    g_ptr_array_add(state->commits, commit);
    return commit;
}

/* Sends a commit that may go now, finishes one that never can (deadline
 * passed, not a stable member), or leaves it waiting (for the coordinator,
 * for its retry backoff). */
static void
commit_try_send(ConsumerState *state, CCommit *commit, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (now >= commit->deadline_ns) {
        consumer_commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                               KAFKA_ERROR_REQUEST_TIMED_OUT);
        return;
    }
    if (commit->offsets->len == 0) {
        consumer_commit_finish(state, commit, HISTORY_OK, KAFKA_ERROR_NONE);
        return;
    }
    /* Kafka's generationIfStable: only a stable member commits. */
    if (state->group_state != CGROUP_STABLE && state->group_state != CGROUP_PREPARING) {
        gboolean rebalancing = state->group_state != CGROUP_UNJOINED;
        consumer_commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                               rebalancing ? KAFKA_ERROR_REBALANCE_IN_PROGRESS
                                           : KAFKA_ERROR_CLIENT_COMMIT_FAILED);
        return;
    }
    if (state->coordinator == SIM_NODE_NONE) {
        consumer_wake_at(state, commit->deadline_ns);
        return;
    }
    if (now < commit->retry_ns) {
        consumer_wake_at(state, commit->retry_ns);
        return;
    }
    KOffsetMessage *request = kproto_new(KMSG_OFFSET_COMMIT_REQUEST);
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    request->generation_id = state->generation;
    g_array_append_vals(request->partitions, commit->offsets->data, commit->offsets->len);
    commit->in_flight = TRUE;
    consumer_request_send(state, CREQ_COMMIT, state->coordinator, &request->base,
                          request->correlation_id, consumer->config.request_timeout_ms, commit->id);
    consumer_wake_at(state, commit->deadline_ns);
}

void
consumer_commits_send(ConsumerState *state, gint64 now)
{
    /* Finishing a commit may start another (the loop's next step), so the
     * list is walked by id rather than by index. */
    guint64 next_id = 0;
    for (;;) {
        CCommit *commit = NULL;
        for (guint i = 0; i < state->commits->len && commit == NULL; i++) {
            CCommit *candidate = g_ptr_array_index(state->commits, i);
            if (candidate->id > next_id && !candidate->in_flight)
                commit = candidate;
        }
        if (commit == NULL)
            return;
        next_id = commit->id;
        commit_try_send(state, commit, now);
    }
}

/* A commit attempt failed with `error`; `unknown` when it may have been
 * applied all the same. Sync commits retry retriable errors. */
void
consumer_commit_failed(ConsumerState *state, CCommit *commit, KafkaError error, gboolean unknown)
{
    commit->in_flight = FALSE;
    commit->outcome_unknown = commit->outcome_unknown || unknown;
    if (commit->sync && kafka_error_is_retriable(error)) {
        commit->retry_ns =
            consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
        return;
    }
    consumer_commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                           error);
}

void
consumer_handle_commit_response(ConsumerState *state, const CRequest *request,
                                const KOffsetMessage *response)
{
    CCommit *commit = consumer_commit_find(state, request->commit_id);
    if (commit == NULL)
        return;
    KafkaError error = response->error;
    for (guint i = 0; i < response->partitions->len && error == KAFKA_ERROR_NONE; i++)
        error = g_array_index(response->partitions, KOffsetPartition, i).error;
    switch (error) {
    case KAFKA_ERROR_NONE:
        commit->in_flight = FALSE;
        consumer_commit_finish(state, commit, HISTORY_OK, KAFKA_ERROR_NONE);
        return;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
        consumer_commit_failed(state, commit, error, FALSE);
        return;
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
        /* From the append path too: the record may be in the log. */
        consumer_coordinator_lost(state);
        consumer_commit_failed(state, commit, error, TRUE);
        return;
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        consumer_group_reset(state, TRUE);
        consumer_commit_failed(state, commit, error, FALSE);
        return;
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->rejoin_needed = TRUE;
        consumer_commit_failed(state, commit, error, FALSE);
        return;
    case KAFKA_ERROR_STALE_MEMBER_EPOCH:
        /* KIP-848: the epoch moved on while the commit flew; Kafka 4's
         * CommitRequestManager retries a sync commit with the latest epoch
         * and fails an async one. */
        commit->in_flight = FALSE;
        if (commit->sync) {
            commit->retry_ns =
                consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
            return;
        }
        consumer_commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                               error);
        return;
    default:
        consumer_commit_failed(state, commit, error, FALSE);
        return;
    }
}

/* ---- committed offsets of a new assignment ---- */

void
consumer_offsets_fetch(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    /* An eager member has partitions only while STABLE; a cooperative one
     * keeps them through a rebalance, and may have gained some in the
     * assignment that made it rejoin (OffsetFetch needs no generation). */
    if ((state->group_state != CGROUP_STABLE && !consumer_group_cooperative(state)) ||
        state->coordinator == SIM_NODE_NONE ||
        consumer_request_in_flight(state, CREQ_OFFSET_FETCH))
        return;
    KOffsetMessage *request = NULL;
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        if (!p->committed_pending)
            continue;
        if (now < state->offset_fetch_retry_ns) {
            consumer_wake_at(state, state->offset_fetch_retry_ns);
            break;
        }
        if (request == NULL)
            request = kproto_new(KMSG_OFFSET_FETCH_REQUEST);
        KOffsetPartition entry = {p->tp, -1, KAFKA_ERROR_NONE, -1};
        g_array_append_val(request->partitions, entry);
    }
    if (request == NULL)
        return;
    request->correlation_id = consumer_correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    request->generation_id = KAFKA_GENERATION_NONE;
    request->require_stable = consumer->config.isolation_level == KAFKA_READ_COMMITTED;
    consumer_request_send(state, CREQ_OFFSET_FETCH, state->coordinator, &request->base,
                          request->correlation_id, consumer->config.request_timeout_ms, 0);
}

void
consumer_handle_offset_fetch_response(ConsumerState *state, const KOffsetMessage *response)
{
    gint64 retry_ns =
        consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
    if (response->error == KAFKA_ERROR_NOT_COORDINATOR ||
        response->error == KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE)
        consumer_coordinator_lost(state);
    for (guint i = 0; i < response->partitions->len; i++) {
        const KOffsetPartition *entry = &g_array_index(response->partitions, KOffsetPartition, i);
        CPartition *p = consumer_partition_find(state, &entry->tp);
        if (p == NULL || !p->committed_pending)
            continue;
        if (entry->error != KAFKA_ERROR_NONE) {
            state->offset_fetch_retry_ns = retry_ns;
            continue;
        }
        p->committed_pending = FALSE;
        /* No committed offset: auto.offset.reset through the probe. */
        if (entry->offset >= 0) {
            p->position = entry->offset;
            p->position_epoch = entry->leader_epoch;
            consumer_record_assign(state, p);
            /* Kafka's refreshCommittedOffsetsIfNeeded seeks unvalidated: a
             * committed position with its epoch is validated before the
             * first fetch, so a position a truncation left above the log
             * moves back to where the logs diverge. */
            consumer_validate_position(state, p);
        }
    }
}

static void
commit_by_application(Consumer *consumer, gboolean sync, ConsumerCommitCb done_cb,
                      void *user_data)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(consumer->group_id != NULL);
    CCommit *commit = consumer_commit_new(state, COMMIT_FOR_API, sync);
    commit->done_cb = done_cb;
    commit->user_data = user_data;
    consumer_run(state);
}

void
consumer_commit_sync(Consumer *consumer, ConsumerCommitCb done_cb, void *user_data)
{
    commit_by_application(consumer, TRUE, done_cb, user_data);
}

void
consumer_commit_async(Consumer *consumer, ConsumerCommitCb done_cb, void *user_data)
{
    commit_by_application(consumer, FALSE, done_cb, user_data);
}
