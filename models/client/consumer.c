/*
 * consumer: Kafka's consumer in assign() and subscribe() modes (see
 * consumer.h): its state, waking up, node callbacks, the public object and
 * the invariants. The rest is split by concern, sharing consumer_internal.h:
 *   consumer_fetch.c    metadata, fetching and positions (Kafka's Fetcher)
 *   consumer_group.c    group membership: the coordinator, join, sync,
 *                       heartbeats, leaving, and failed group requests
 *                       (Kafka's ConsumerCoordinator)
 *   consumer_offsets.c  offset commits, and the committed offsets of a new
 *                       assignment
 *   consumer_poll.c     the application's poll loop and its processing
 *
 *
 * Lifecycle of the process:
 *
 *   running ──sim_node_crash (consumer_crash_cb: free the state)──▶ down
 *      ▲                                                              │
 *      └──sim_node_restart (consumer_restart_cb: a new state from the ┘
 *          assignment or the subscription, polling resumes)
 *
 * Lifecycle of one assigned partition:
 *
 *   committed pending ──OffsetFetch──▶ position (committed), or no position
 *   no position ──probe fetch at 0──▶ position ──fetch──▶ buffered ──poll──▶ position+n
 *                                       │  ▲                 │
 *                                       │  └──seek───────────┘
 *                                       ├──OFFSET_OUT_OF_RANGE, earliest/latest──▶ position
 *                                       │      (a RESET op records the jump)
 *                                       └──OFFSET_OUT_OF_RANGE, reset=none──▶ stopped
 *                                              (the next poll raises: the loop ends)
 *
 * Group membership (subscribe mode; `group_state`, and the function that
 * performs each transition):
 *
 *   UNJOINED ──send_join──▶ JOINING ──handle_join_response──▶ SYNCING
 *   SYNCING ──handle_sync_response──▶ STABLE
 *   STABLE ──join_start, auto commit on──▶ PREPARING ──consumer_commit_finish──▶ UNJOINED
 *   STABLE ──join_start (no commit): revoke (eager: all; cooperative: only
 *            what a reset generation lost), send_join──▶ JOINING
 *   STABLE, cooperative, assignment pending ──assignment_complete (a poll):
 *            revoke the partitions not assigned any more, rejoin if any
 *   JOINING, SYNCING ──errors──▶ UNJOINED (member id kept unless unknown)
 *   STABLE ──heartbeat ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID,
 *            poll timeout (consumer_leave_group)──▶ UNJOINED
 *
 * Invariants:
 *  1. `state` is NULL exactly while the node is down.
 *  2. `partitions` is sorted by topic-partition, without duplicates, and
 *     mirrors `consumer->assigned`.
 *  3. Every buffered record belongs to an assigned partition; a partition's
 *     buffered records are in ascending offset order, the first at or after
 *     its position (after it when the fetch skipped control or aborted
 *     batches in between), and `buffered` counts them.
 *  4. A partition with buffered records, stopped, or awaiting its committed
 *     offset, is in no fetch.
 *  5. At most one fetch is in flight per broker node, and a partition is in
 *     at most one fetch.
 *  6. `processing` is non-empty only while the processing timer runs or the
 *     application waits on its commit (`app_commit`); the poll timer and the
 *     processing timer never run together.
 *  7. Only a subscribed consumer has group requests, commits, a member id or
 *     a group state other than UNJOINED; heartbeats run only while STABLE
 *     (or PREPARING, still a member of its generation). Only a cooperative
 *     or KIP-848 member has an assignment pending (SyncGroup's or the
 *     coordinator's, until a poll applies it), and only while STABLE. A
 *     KIP-848 member (consumer_membership.c) runs no classic heartbeat
 *     timer, is STABLE only with a member epoch, and reconciles (holds
 *     `reconciling`) only while its revoked partitions' commit runs.
 *  8. Every commit in flight has exactly one coordinator request.
 *  9. Once the application's poll raised (app_failed: auto.offset.reset=none),
 *     its loop has ended: no poll timer, no poll waiting, no raise pending,
 *     nothing being processed.
 */
#include "consumer.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

#include "consumer_internal.h"

gint64
consumer_ms_to_ns(gint64 ms)
{
    return ms * SIM_NS_PER_MS;
}

gint64
consumer_now(const ConsumerState *state)
{
    return sim_now_ns(state->consumer->world);
}

/* ---- state ---- */

void
consumer_commit_free(gpointer data)
{
    CCommit *commit = data;
    g_array_free(commit->offsets, TRUE);
    g_array_free(commit->ops, TRUE);
    g_free(commit);
}

void
consumer_fetch_free(gpointer data)
{
    CFetch *fetch = data;
    g_array_free(fetch->entries, TRUE);
    g_free(fetch);
}

CPartition *
consumer_partition_new(ConsumerState *state, const KTopicPartition *tp)
{
    CPartition *p = g_new0(CPartition, 1);
    p->tp = *tp;
    p->history_topic = history_topic(state->consumer->history, tp->topic);
    p->position = -1;
    p->fetched_end = -1;
    p->leader = KAFKA_NO_LEADER;
    p->leader_epoch = -1;
    p->position_epoch = -1;
    return p;
}

static ConsumerState *
state_new(Consumer *consumer)
{
    ConsumerState *state = g_new0(ConsumerState, 1);
    state->consumer = consumer;
    state->partitions = g_ptr_array_new_with_free_func(g_free);
    state->brokers = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    state->buffer = g_array_new(FALSE, FALSE, sizeof(ConsumerRecord));
    state->fetches = g_ptr_array_new_with_free_func(consumer_fetch_free);
    state->validations = g_ptr_array_new_with_free_func(consumer_fetch_free);
    state->correlation_next = 1;
    state->metadata_needed = TRUE;
    state->metadata_node = SIM_NODE_NONE;
    state->metadata_timer = SIM_EVENT_ID_NONE;
    state->metadata_attempt_ns = G_MININT64;
    state->metadata_refreshed_ns = G_MININT64;
    state->wake_timer = SIM_EVENT_ID_NONE;
    state->poll_timer = SIM_EVENT_ID_NONE;
    state->processing_timer = SIM_EVENT_ID_NONE;
    state->processing = g_array_new(FALSE, FALSE, sizeof(ConsumerRecord));
    state->topic_counts = g_array_new(FALSE, FALSE, sizeof(CTopicCount));
    state->assigned_counts = g_array_new(FALSE, FALSE, sizeof(CTopicCount));
    state->owned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    state->generation = KAFKA_GENERATION_NONE;
    state->owned_generation = KAFKA_GENERATION_NONE;
    state->protocol = -1;
    state->coordinator = SIM_NODE_NONE;
    state->coordinator_retry_ns = G_MININT64;
    state->join_retry_ns = G_MININT64;
    state->offset_fetch_retry_ns = G_MININT64;
    state->requests = g_ptr_array_new_with_free_func(g_free);
    state->commits = g_ptr_array_new_with_free_func(consumer_commit_free);
    state->heartbeat_timer = SIM_EVENT_ID_NONE;
    state->poll_timeout_timer = SIM_EVENT_ID_NONE;
    state->next_heartbeat_ns = G_MININT64;
    state->heartbeat_interval_ms = 5000; /* until the coordinator names it */
    /* A new member has no assignment until its group gives one. */
    if (consumer->group_id != NULL)
        g_array_set_size(consumer->assigned, 0);
    for (guint i = 0; i < consumer->assigned->len; i++)
        g_ptr_array_add(
            state->partitions,
            consumer_partition_new(state, &g_array_index(consumer->assigned, KTopicPartition, i)));
    return state;
}

/* Frees the state; the timers are cancelled unless the crash dropped them. */
static void
state_free(ConsumerState *state)
{
    if (state == NULL)
        return;
    SimWorld *world = state->consumer->world;
    for (guint i = 0; i < state->fetches->len; i++)
        sim_timer_cancel(world, ((CFetch *)g_ptr_array_index(state->fetches, i))->timer);
    for (guint i = 0; i < state->validations->len; i++)
        sim_timer_cancel(world, ((CFetch *)g_ptr_array_index(state->validations, i))->timer);
    sim_timer_cancel(world, state->metadata_timer);
    sim_timer_cancel(world, state->wake_timer);
    sim_timer_cancel(world, state->poll_timer);
    sim_timer_cancel(world, state->processing_timer);
    sim_timer_cancel(world, state->heartbeat_timer);
    sim_timer_cancel(world, state->poll_timeout_timer);
    for (guint i = 0; i < state->requests->len; i++)
        sim_timer_cancel(world, ((CRequest *)g_ptr_array_index(state->requests, i))->timer);
    g_ptr_array_free(state->requests, TRUE);
    g_ptr_array_free(state->commits, TRUE);
    g_array_free(state->topic_counts, TRUE);
    g_array_free(state->assigned_counts, TRUE);
    g_array_free(state->owned, TRUE);
    if (state->assignment_pending != NULL)
        g_array_free(state->assignment_pending, TRUE);
    if (state->reconciling != NULL)
        g_array_free(state->reconciling, TRUE);
    g_ptr_array_free(state->partitions, TRUE);
    g_array_free(state->brokers, TRUE);
    g_array_free(state->buffer, TRUE);
    g_ptr_array_free(state->fetches, TRUE);
    g_ptr_array_free(state->validations, TRUE);
    g_array_free(state->processing, TRUE);
    g_free(state);
}

CPartition *
consumer_partition_find(const ConsumerState *state, const KTopicPartition *tp)
{
    for (guint i = 0; i < state->partitions->len; i++) {
        CPartition *p = g_ptr_array_index(state->partitions, i);
        if (ktp_equal(&p->tp, tp))
            return p;
    }
    return NULL;
}

SimNodeId
consumer_broker_node_of(const ConsumerState *state, gint32 broker_id)
{
    for (guint i = 0; i < state->brokers->len; i++) {
        const KBrokerEndpoint *broker = &g_array_index(state->brokers, KBrokerEndpoint, i);
        if (broker->broker_id == broker_id)
            return broker->node;
    }
    return SIM_NODE_NONE;
}

/* ---- waking up ---- */

static void
wake_cb(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    (void)world;
    (void)arg;
    consumer->state->wake_timer = SIM_EVENT_ID_NONE;
    consumer_run(consumer->state);
}

/* Makes sure the run loop runs again at `due_ns` or earlier. */
void
consumer_wake_at(ConsumerState *state, gint64 due_ns)
{
    SimWorld *world = state->consumer->world;
    if (sim_timer_pending(world, state->wake_timer) && state->wake_ns <= due_ns)
        return;
    sim_timer_cancel(world, state->wake_timer);
    state->wake_ns = due_ns;
    state->wake_timer = sim_timer_set(world, state->consumer->node,
                                      MAX(due_ns - consumer_now(state), 0), wake_cb, NULL);
}

void
consumer_run(ConsumerState *state)
{
    gint64 now = consumer_now(state);
    consumer_send_validations(state, now);
    consumer_send_fetches(state, now);
    consumer_maybe_request_metadata(state, now);
    consumer_group_run(state, now);
}

/* Takes the fetch out of the in-flight list; the caller frees it. */

/* ---- node callbacks ---- */

static void
consumer_message_cb(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Consumer *consumer = ctx;
    (void)world;
    KSIM_ASSERT(consumer->state != NULL);
    if (msg->type == KMSG_FETCH_RESPONSE)
        consumer_handle_fetch_response(consumer->state, from, (const KFetchResponse *)msg);
    else if (msg->type == KMSG_EPOCH_RESPONSE)
        consumer_handle_epoch_response(consumer->state, from, (const KEpochMessage *)msg);
    else if (msg->type == KMSG_METADATA_RESPONSE)
        consumer_handle_metadata_response(consumer->state, from, (const KMetadataResponse *)msg);
    else
        consumer_group_handle_message(consumer->state, from, msg);
    sim_msg_free(msg);
    consumer_run(consumer->state);
}

static void
consumer_disconnect_cb(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Consumer *consumer = ctx;
    (void)world;
    (void)reason;
    KSIM_ASSERT(consumer->state != NULL);
    consumer_connection_failed(consumer->state, peer);
    consumer_run(consumer->state);
}

static void
consumer_crash_cb(SimWorld *world, void *ctx)
{
    Consumer *consumer = ctx;
    (void)world;
    KSIM_ASSERT(consumer->state != NULL);
    /* Memory is gone; records being processed are never marked processed. */
    state_free(consumer->state);
    consumer->state = NULL;
}

static void
consumer_restart_cb(SimWorld *world, void *ctx)
{
    Consumer *consumer = ctx;
    (void)world;
    KSIM_ASSERT(consumer->state == NULL);
    consumer->state = state_new(consumer);
    if (consumer->polling)
        consumer_poll_schedule(consumer->state, 0);
    consumer_run(consumer->state);
}

static const SimNodeOps CONSUMER_OPS = {
    consumer_message_cb,
    consumer_disconnect_cb,
    consumer_crash_cb,
    consumer_restart_cb,
};

/* ---- the object ---- */

Consumer *
consumer_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
             const ConsumerConfig *config, History *history)
{
    KSIM_ASSERT(history != NULL);
    KSIM_ASSERT(bootstrap != NULL && bootstrap->len > 0);
    KSIM_ASSERT(config->max_poll_records > 0);
    KSIM_ASSERT(config->fetch_max_wait_ms >= 0 && config->request_timeout_ms > 0);
    KSIM_ASSERT(config->retry_backoff_ms >= 0 && config->metadata_max_age_ms > 0);
    Consumer *consumer = g_new0(Consumer, 1);
    consumer->world = world;
    consumer->name = g_strdup(name);
    consumer->process = process;
    consumer->bootstrap = g_array_copy((GArray *)bootstrap);
    consumer->config = *config;
    consumer->history = history;
    consumer->assigned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    consumer->topics = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *stream = g_strdup_printf("consumer/%s", name);
    consumer->rng = sim_world_rng(world, stream);
    consumer->node = sim_node_add(world, name, &CONSUMER_OPS, consumer);
    history_set_process_name(history, process, name);
    consumer->state = state_new(consumer);
    consumer_run(consumer->state);
    return consumer;
}

void
consumer_free(Consumer *consumer)
{
    if (consumer == NULL)
        return;
    state_free(consumer->state);
    g_array_free(consumer->assigned, TRUE);
    g_array_free(consumer->bootstrap, TRUE);
    g_ptr_array_free(consumer->topics, TRUE);
    g_free(consumer->group_id);
    g_free(consumer->name);
    g_free(consumer);
}

SimNodeId
consumer_node(const Consumer *consumer)
{
    return consumer->node;
}

gboolean
consumer_running(const Consumer *consumer)
{
    return consumer->state != NULL;
}

void
consumer_assign(Consumer *consumer, const char *topic, const gint32 *partitions, guint n)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(consumer->group_id == NULL);
    g_autoptr(GArray) tps = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    for (guint i = 0; i < n; i++) {
        KTopicPartition tp;
        memset(&tp, 0, sizeof tp);
        KSIM_ASSERT(partitions[i] >= 0);
        ktp_set(&tp, topic, partitions[i]);
        g_array_append_val(tps, tp);
    }
    g_array_sort(tps, consumer_tp_compare);
    consumer_assignment_set(state, tps, FALSE);
    consumer_run(state);
}

void
consumer_subscribe(Consumer *consumer, const char *group_id, const char *const *topics,
                   guint n_topics)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(consumer->group_id == NULL);
    KSIM_ASSERT(consumer->assigned->len == 0);
    KSIM_ASSERT(group_id[0] != '\0' && strlen(group_id) <= KAFKA_GROUP_ID_MAX);
    KSIM_ASSERT(n_topics > 0);
    consumer->group_id = g_strdup(group_id);
    for (guint i = 0; i < n_topics; i++) {
        KSIM_ASSERT(strlen(topics[i]) <= KAFKA_TOPIC_NAME_MAX);
        g_ptr_array_add(consumer->topics, g_strdup(topics[i]));
    }
    state->rejoin_needed = TRUE;
    state->metadata_needed = TRUE;
    consumer_run(state);
}

void
consumer_unsubscribe(Consumer *consumer)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(consumer->group_id != NULL);
    consumer_leave_group(state);
    /* Commits still pending fail: there is no group any more. */
    while (state->commits->len > 0) {
        CCommit *commit = g_ptr_array_index(state->commits, 0);
        consumer_commit_finish(state, commit,
                               commit->in_flight || commit->outcome_unknown ? HISTORY_INFO
                                                                            : HISTORY_FAIL,
                               KAFKA_ERROR_CLIENT_COMMIT_FAILED);
    }
    for (guint i = 0; i < state->requests->len; i++)
        sim_timer_cancel(consumer->world, ((CRequest *)g_ptr_array_index(state->requests, i))->timer);
    g_ptr_array_set_size(state->requests, 0);
    state->coordinator = SIM_NODE_NONE;
    state->group_state = CGROUP_UNJOINED;
    state->rejoin_needed = FALSE;
    state->group_fatal = FALSE;
    g_free(consumer->group_id);
    consumer->group_id = NULL;
    g_ptr_array_set_size(consumer->topics, 0);
    consumer_run(state);
}

const char *
consumer_member_id(const Consumer *consumer)
{
    return consumer->state != NULL ? consumer->state->member_id : "";
}

gint32
consumer_generation(const Consumer *consumer)
{
    const ConsumerState *state = consumer->state;
    return state != NULL && state->group_state == CGROUP_STABLE ? state->generation
                                                                : KAFKA_GENERATION_NONE;
}

gboolean
consumer_group_stable(const Consumer *consumer)
{
    const ConsumerState *state = consumer->state;
    return state != NULL && state->group_state == CGROUP_STABLE && !state->rejoin_needed &&
           state->assignment_pending == NULL;
}

GArray *
consumer_assignment(const Consumer *consumer)
{
    return g_array_copy(consumer->assigned);
}

gint64
consumer_position(const Consumer *consumer, const char *topic, gint32 partition)
{
    if (consumer->state == NULL)
        return -1;
    KTopicPartition tp;
    memset(&tp, 0, sizeof tp);
    ktp_set(&tp, topic, partition);
    const CPartition *p = consumer_partition_find(consumer->state, &tp);
    return p != NULL ? p->position : -1;
}

void
consumer_buffer_drop(ConsumerState *state, CPartition *p)
{
    for (guint i = state->buffer->len; i-- > 0;) {
        if (ktp_equal(&g_array_index(state->buffer, ConsumerRecord, i).tp, &p->tp))
            g_array_remove_index(state->buffer, i);
    }
    p->buffered = 0;
}

void
consumer_seek(Consumer *consumer, const char *topic, gint32 partition, gint64 offset)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(offset >= 0);
    KTopicPartition tp;
    memset(&tp, 0, sizeof tp);
    ktp_set(&tp, topic, partition);
    CPartition *p = consumer_partition_find(state, &tp);
    KSIM_ASSERT(p != NULL);
    /* As Kafka's seek: records fetched for the old position are dropped, and
     * an answer to a fetch in flight no longer matches the position. */
    consumer_buffer_drop(state, p);
    p->position = offset;
    /* Kafka's seek(offset) knows no epoch: nothing to validate. */
    p->position_epoch = -1;
    p->awaiting_validation = FALSE;
    p->stopped = FALSE;
    consumer_record_assign(state, p);
    consumer_run(state);
}

void
consumer_start_polling(Consumer *consumer, const SimDist *poll_interval, const SimDist *processing,
                       ConsumerPollCb poll_cb, void *user_data)
{
    KSIM_ASSERT(!consumer->polling);
    consumer->polling = TRUE;
    consumer->poll_interval = *poll_interval;
    consumer->processing = *processing;
    consumer->poll_cb = poll_cb;
    consumer->poll_user_data = user_data;
    if (consumer->state != NULL)
        consumer_poll_schedule(consumer->state, 0);
}

void
consumer_stats(const Consumer *consumer, ConsumerStats *out)
{
    *out = consumer->stats;
}

static void
check_buffer(const ConsumerState *state)
{
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        KSIM_ASSERT(i == 0 ||
                    ktp_compare(&((const CPartition *)g_ptr_array_index(state->partitions, i - 1))->tp,
                                &p->tp) < 0);
        guint count = 0;
        gint64 previous = -1;
        for (guint r = 0; r < state->buffer->len; r++) {
            const ConsumerRecord *record = &g_array_index(state->buffer, ConsumerRecord, r);
            if (!ktp_equal(&record->tp, &p->tp))
                continue;
            KSIM_ASSERT(count > 0 || record->offset >= p->position);
            KSIM_ASSERT(record->offset > previous);
            previous = record->offset;
            count++;
        }
        KSIM_ASSERT(count == p->buffered);
        KSIM_ASSERT(!(p->in_flight && (p->buffered > 0 || p->stopped)));
        /* KIP-320: a partition awaiting validation holds no records and is
         * in a validation or a fetch, never both. */
        if (p->awaiting_validation)
            KSIM_ASSERT(p->buffered == 0);
        if (p->validating)
            KSIM_ASSERT(p->awaiting_validation && !p->in_flight);
    }
    guint validating = 0;
    for (guint i = 0; i < state->validations->len; i++)
        validating += ((const CFetch *)g_ptr_array_index(state->validations, i))->entries->len;
    guint flagged = 0;
    for (guint i = 0; i < state->partitions->len; i++)
        flagged += ((const CPartition *)g_ptr_array_index(state->partitions, i))->validating;
    KSIM_ASSERT(flagged <= validating);
}

static void
check_group(const ConsumerState *state)
{
    SimWorld *world = state->consumer->world;
    if (!consumer_subscribed(state)) {
        KSIM_ASSERT(state->requests->len == 0);
        KSIM_ASSERT(state->commits->len == 0);
        KSIM_ASSERT(state->group_state == CGROUP_UNJOINED);
        KSIM_ASSERT(state->member_id[0] == '\0');
    }
    if (sim_timer_pending(world, state->heartbeat_timer))
        KSIM_ASSERT(state->group_state == CGROUP_STABLE ||
                    state->group_state == CGROUP_PREPARING);
    if (state->assignment_pending != NULL) {
        KSIM_ASSERT(consumer_group_cooperative(state));
        KSIM_ASSERT(state->group_state == CGROUP_STABLE);
    }
    /* KIP-848: a reconciliation waits only on its revocation's commit, and
     * a heartbeat of the classic protocol never runs. */
    if (state->reconciling != NULL) {
        KSIM_ASSERT(consumer_membership_enabled(state));
        KSIM_ASSERT(state->group_state == CGROUP_STABLE);
        KSIM_ASSERT(consumer_commit_pending(state, COMMIT_FOR_REVOKE));
    }
    if (consumer_membership_enabled(state)) {
        KSIM_ASSERT(!sim_timer_pending(world, state->heartbeat_timer));
        if (state->group_state == CGROUP_STABLE)
            KSIM_ASSERT(state->generation > 0);
    }
    if (state->app_commit != NULL)
        KSIM_ASSERT(g_ptr_array_find(state->commits, state->app_commit, NULL));
    for (guint i = 0; i < state->commits->len; i++) {
        const CCommit *commit = g_ptr_array_index(state->commits, i);
        guint requests = 0;
        for (guint r = 0; r < state->requests->len; r++) {
            const CRequest *request = g_ptr_array_index(state->requests, r);
            requests += request->kind == CREQ_COMMIT && request->commit_id == commit->id;
        }
        KSIM_ASSERT(requests == (commit->in_flight ? 1u : 0u));
        KSIM_ASSERT(commit->ops->len == commit->offsets->len);
    }
}

void
consumer_check_invariants(const Consumer *consumer)
{
    SimNodeState node_state = sim_node_state(consumer->world, consumer->node);
    KSIM_ASSERT((consumer->state == NULL) == (node_state == SIM_NODE_DOWN));
    KSIM_ASSERT(consumer->stats.records_processed <= consumer->stats.records_polled);
    const ConsumerState *state = consumer->state;
    if (state == NULL)
        return;
    KSIM_ASSERT(state->partitions->len == consumer->assigned->len);
    check_buffer(state);
    guint in_flight = 0;
    for (guint i = 0; i < state->fetches->len; i++) {
        const CFetch *fetch = g_ptr_array_index(state->fetches, i);
        for (guint j = i + 1; j < state->fetches->len; j++)
            KSIM_ASSERT(((const CFetch *)g_ptr_array_index(state->fetches, j))->node != fetch->node);
        in_flight += fetch->entries->len;
    }
    guint flagged = 0;
    for (guint i = 0; i < state->partitions->len; i++)
        flagged += ((const CPartition *)g_ptr_array_index(state->partitions, i))->in_flight ? 1 : 0;
    /* Entries of partitions since unassigned are still in flight. */
    KSIM_ASSERT(flagged <= in_flight);
    SimWorld *world = consumer->world;
    KSIM_ASSERT(!(sim_timer_pending(world, state->poll_timer) &&
                  sim_timer_pending(world, state->processing_timer)));
    if (state->processing->len > 0)
        KSIM_ASSERT(sim_timer_pending(world, state->processing_timer) || state->app_commit != NULL);
    if (state->app_failed) {
        KSIM_ASSERT(!sim_timer_pending(world, state->poll_timer));
        KSIM_ASSERT(!state->poll_waiting && !state->raise_pending);
        KSIM_ASSERT(state->processing->len == 0);
    }
    check_group(state);
}
