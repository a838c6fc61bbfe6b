/*
 * consumer: Kafka's consumer in assign() and subscribe() modes (see
 * consumer.h).
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
 *                                       └──OFFSET_OUT_OF_RANGE, reset=none──▶ stopped
 *
 * Group membership (subscribe mode; `group_state`, and the function that
 * performs each transition):
 *
 *   UNJOINED ──send_join──▶ JOINING ──handle_join_response──▶ SYNCING
 *   SYNCING ──handle_sync_response──▶ STABLE
 *   STABLE ──join_start, auto commit on──▶ PREPARING ──commit_finish──▶ UNJOINED
 *   STABLE ──join_start (no commit): revoke, send_join──▶ JOINING
 *   JOINING, SYNCING ──errors──▶ UNJOINED (member id kept unless unknown)
 *   STABLE ──heartbeat ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID,
 *            poll timeout (leave_group)──▶ UNJOINED
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
 *     (or PREPARING, still a member of its generation).
 *  8. Every commit in flight has exactly one coordinator request.
 */
#include "consumer.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* Kafka's socket.connection.setup.timeout.ms default bounds a metadata wait. */
#define CONSUMER_CONNECTION_SETUP_TIMEOUT_MS 10000

typedef struct {
    KTopicPartition tp;
    guint16 history_topic;
    gint64 position;   /* -1: none yet (a probe decides it) */
    gboolean stopped;  /* auto.offset.reset=none gave up on it */
    gint32 leader;     /* broker id or KAFKA_NO_LEADER */
    gint32 leader_epoch;
    gint64 backoff_until_ns;
    guint buffered;    /* its records in the buffer */
    gboolean in_flight;
    gboolean committed_pending; /* awaiting OffsetFetch (group assignment) */
} CPartition;

typedef struct {
    KTopicPartition tp;
    gint64 fetch_offset;
    gboolean probe; /* sent without a position, to learn the log's bounds */
} CFetchEntry;

typedef struct {
    SimNodeId node;
    gint32 correlation_id;
    SimTimerId timer;
    GArray *entries; /* CFetchEntry */
} CFetch;

typedef enum {
    CGROUP_UNJOINED = 0,
    CGROUP_PREPARING, /* committing before a rejoin (Kafka's onJoinPrepare) */
    CGROUP_JOINING,
    CGROUP_SYNCING,
    CGROUP_STABLE,
} CGroupState;

typedef enum {
    CREQ_FIND_COORDINATOR,
    CREQ_JOIN,
    CREQ_SYNC,
    CREQ_HEARTBEAT,
    CREQ_LEAVE,
    CREQ_COMMIT,
    CREQ_OFFSET_FETCH,
} CRequestKind;

/* A group request in flight. */
typedef struct {
    CRequestKind kind;
    gint32 correlation_id;
    SimNodeId node;
    SimTimerId timer;
    guint64 commit_id; /* CREQ_COMMIT: its commit */
} CRequest;

typedef enum {
    COMMIT_FOR_API,
    COMMIT_FOR_AUTO,
    COMMIT_FOR_JOIN,
    COMMIT_FOR_BEFORE_PROCESSING,
    COMMIT_FOR_AFTER_PROCESSING,
} CommitPurpose;

/* One commitSync / commitAsync, from its invocation to its outcome. */
typedef struct {
    guint64 id;
    CommitPurpose purpose;
    gboolean sync;           /* retried until default.api.timeout.ms */
    GArray *offsets;         /* KOffsetPartition */
    GArray *ops;             /* guint64: the history op of each offset */
    gint64 deadline_ns;
    gint64 retry_ns;
    gboolean in_flight;
    gboolean outcome_unknown; /* an attempt may have been applied */
    ConsumerCommitCb done_cb;
    void *user_data;
} CCommit;

/* A topic's partition count in the metadata; -1 when unknown. */
typedef struct {
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
    gint32 partitions;
} CTopicCount;

typedef struct {
    Consumer *consumer;
    GPtrArray *partitions; /* CPartition* (owned), sorted by tp */
    GArray *brokers;       /* KBrokerEndpoint */
    GArray *buffer;        /* ConsumerRecord, in arrival order */
    GPtrArray *fetches;    /* CFetch* (owned) */
    gint32 correlation_next;
    gboolean metadata_needed;
    gint32 metadata_correlation; /* 0: none in flight */
    SimNodeId metadata_node;
    SimTimerId metadata_timer;
    gint64 metadata_attempt_ns;
    gint64 metadata_refreshed_ns;
    guint node_next;
    SimTimerId wake_timer;
    gint64 wake_ns;
    SimTimerId poll_timer;
    SimTimerId processing_timer;
    gboolean poll_waiting;
    GArray *processing; /* ConsumerRecord of the poll being processed */
    guint processed;    /* of them, those processed already (in order) */
    GArray *topic_counts; /* CTopicCount of every topic in the latest metadata, by name */
    /* Group membership (subscribe mode). */
    CGroupState group_state;
    gboolean rejoin_needed;
    gboolean group_fatal;    /* a JoinGroup error Kafka does not retry */
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 generation;
    gint32 protocol;
    gboolean is_leader;
    GArray *assigned_counts; /* CTopicCount: the leader's metadata at its assignment */
    GArray *owned;           /* KTopicPartition revoked at the join (sticky's owned) */
    gint32 owned_generation;
    SimNodeId coordinator;   /* SIM_NODE_NONE: unknown */
    gint64 coordinator_retry_ns;
    gint64 join_retry_ns;
    gint64 offset_fetch_retry_ns;
    GPtrArray *requests;     /* CRequest* (owned) */
    GPtrArray *commits;      /* CCommit* (owned), in invocation order */
    guint64 commit_next;
    CCommit *app_commit;     /* the loop's commit being waited on, in `commits` */
    SimTimerId heartbeat_timer;
    gint64 heartbeat_ok_ns;
    SimTimerId poll_timeout_timer;
    gint64 next_auto_commit_ns;
} ConsumerState;

struct Consumer {
    SimWorld *world;
    char *name;
    guint32 process;
    GArray *bootstrap; /* SimNodeId */
    ConsumerConfig config;
    History *history;
    SimNodeId node;
    SimRng *rng;
    GArray *assigned; /* KTopicPartition, sorted */
    char *group_id;   /* subscribe mode: the group, NULL in assign mode */
    GPtrArray *topics; /* subscribe mode: the subscription (char*, owned) */
    gboolean polling;
    SimDist poll_interval;
    SimDist processing;
    ConsumerPollCb poll_cb;
    void *poll_user_data;
    ConsumerStats stats;
    ConsumerState *state;
};

static void consumer_run(ConsumerState *state);

static gint64
ms_to_ns(gint64 ms)
{
    return ms * SIM_NS_PER_MS;
}

static gint64
now_of(const ConsumerState *state)
{
    return sim_now_ns(state->consumer->world);
}

void
consumer_config_init(ConsumerConfig *config)
{
    *config = (ConsumerConfig){
        .fetch_min_bytes = 1,
        .fetch_max_wait_ms = 500,
        .max_partition_fetch_bytes = 1048576,
        .fetch_max_bytes = 52428800,
        .max_poll_records = 500,
        .auto_offset_reset = CONSUMER_RESET_LATEST,
        .request_timeout_ms = 30000,
        .retry_backoff_ms = 100,
        .metadata_max_age_ms = 300000,
        .isolation_level = 0,
        .session_timeout_ms = 45000,
        .heartbeat_interval_ms = 3000,
        .max_poll_interval_ms = 300000,
        .enable_auto_commit = TRUE,
        .auto_commit_interval_ms = 5000,
        .partition_assignment_strategy = ASSIGNOR_RANGE,
        .default_api_timeout_ms = 60000,
        .processing_mode = CONSUMER_PROCESSING_AUTO,
    };
}

/* ---- state ---- */

static void
commit_free(gpointer data)
{
    CCommit *commit = data;
    g_array_free(commit->offsets, TRUE);
    g_array_free(commit->ops, TRUE);
    g_free(commit);
}

static void
fetch_free(gpointer data)
{
    CFetch *fetch = data;
    g_array_free(fetch->entries, TRUE);
    g_free(fetch);
}

static CPartition *
partition_new(ConsumerState *state, const KTopicPartition *tp)
{
    CPartition *p = g_new0(CPartition, 1);
    p->tp = *tp;
    p->history_topic = history_topic(state->consumer->history, tp->topic);
    p->position = -1;
    p->leader = KAFKA_NO_LEADER;
    p->leader_epoch = -1;
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
    state->fetches = g_ptr_array_new_with_free_func(fetch_free);
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
    state->commits = g_ptr_array_new_with_free_func(commit_free);
    state->heartbeat_timer = SIM_EVENT_ID_NONE;
    state->poll_timeout_timer = SIM_EVENT_ID_NONE;
    /* A new member has no assignment until its group gives one. */
    if (consumer->group_id != NULL)
        g_array_set_size(consumer->assigned, 0);
    for (guint i = 0; i < consumer->assigned->len; i++)
        g_ptr_array_add(state->partitions,
                        partition_new(state, &g_array_index(consumer->assigned, KTopicPartition, i)));
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
    g_ptr_array_free(state->partitions, TRUE);
    g_array_free(state->brokers, TRUE);
    g_array_free(state->buffer, TRUE);
    g_ptr_array_free(state->fetches, TRUE);
    g_array_free(state->processing, TRUE);
    g_free(state);
}

static CPartition *
partition_find(const ConsumerState *state, const KTopicPartition *tp)
{
    for (guint i = 0; i < state->partitions->len; i++) {
        CPartition *p = g_ptr_array_index(state->partitions, i);
        if (ktp_equal(&p->tp, tp))
            return p;
    }
    return NULL;
}

static SimNodeId
broker_node_of(const ConsumerState *state, gint32 broker_id)
{
    for (guint i = 0; i < state->brokers->len; i++) {
        const KBrokerEndpoint *broker = &g_array_index(state->brokers, KBrokerEndpoint, i);
        if (broker->broker_id == broker_id)
            return broker->node;
    }
    return SIM_NODE_NONE;
}

/* Drops the buffered records of `p` (after a seek). */
static void
buffer_drop_partition(ConsumerState *state, CPartition *p)
{
    for (guint i = state->buffer->len; i > 0; i--) {
        if (ktp_equal(&g_array_index(state->buffer, ConsumerRecord, i - 1).tp, &p->tp))
            g_array_remove_index(state->buffer, i - 1);
    }
    p->buffered = 0;
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
static void
wake_at(ConsumerState *state, gint64 due_ns)
{
    SimWorld *world = state->consumer->world;
    if (sim_timer_pending(world, state->wake_timer) && state->wake_ns <= due_ns)
        return;
    sim_timer_cancel(world, state->wake_timer);
    state->wake_ns = due_ns;
    state->wake_timer = sim_timer_set(world, state->consumer->node, MAX(due_ns - now_of(state), 0),
                                      wake_cb, NULL);
}

/* ---- metadata ---- */

static void metadata_timed_out(SimWorld *world, void *ctx, void *arg);
static void connection_failed(ConsumerState *state, SimNodeId node);
static void group_metadata_updated(ConsumerState *state);

/* Counts one more partition of `topic` (partitions come sorted by topic). */
static void
topic_count_add(GArray *counts, const char *topic)
{
    if (counts->len > 0) {
        CTopicCount *last = &g_array_index(counts, CTopicCount, counts->len - 1);
        if (strcmp(last->topic, topic) == 0) {
            last->partitions++;
            return;
        }
    }
    CTopicCount count;
    KPROTO_SET_ID(count.topic, topic);
    count.partitions = 1;
    g_array_append_val(counts, count);
}

/* The partition count of `topic` in `counts`, or -1. */
static gint32
topic_count_of(const GArray *counts, const char *topic)
{
    for (guint i = 0; i < counts->len; i++) {
        const CTopicCount *count = &g_array_index(counts, CTopicCount, i);
        if (strcmp(count->topic, topic) == 0)
            return count->partitions;
    }
    return -1;
}

static SimNodeId
metadata_target(ConsumerState *state)
{
    const GArray *bootstrap = state->consumer->bootstrap;
    guint index = state->node_next++;
    if (state->brokers->len > 0)
        return g_array_index(state->brokers, KBrokerEndpoint, index % state->brokers->len).node;
    return g_array_index(bootstrap, SimNodeId, index % bootstrap->len);
}

static void
maybe_request_metadata(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    const ConsumerConfig *config = &consumer->config;
    if (state->metadata_refreshed_ns != G_MININT64) {
        gint64 stale_ns = state->metadata_refreshed_ns + ms_to_ns(config->metadata_max_age_ms);
        if (now >= stale_ns)
            state->metadata_needed = TRUE;
        else
            wake_at(state, stale_ns);
    }
    if (!state->metadata_needed || state->metadata_correlation != 0)
        return;
    if (state->metadata_attempt_ns != G_MININT64) {
        gint64 due_ns = state->metadata_attempt_ns + ms_to_ns(config->retry_backoff_ms);
        if (now < due_ns) {
            wake_at(state, due_ns);
            return;
        }
    }
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = state->correlation_next++;
    SimNodeId node = metadata_target(state);
    state->metadata_correlation = request->correlation_id;
    state->metadata_node = node;
    state->metadata_attempt_ns = now;
    consumer->stats.metadata_requests++;
    sim_net_send(sim_world_net(consumer->world), consumer->node, node, &request->base);
    gint64 timeout_ms = MIN(config->request_timeout_ms, CONSUMER_CONNECTION_SETUP_TIMEOUT_MS);
    state->metadata_timer =
        sim_timer_set(consumer->world, consumer->node, ms_to_ns(timeout_ms), metadata_timed_out, NULL);
}

static void
handle_metadata_response(ConsumerState *state, SimNodeId from, const KMetadataResponse *response)
{
    if (response->correlation_id != state->metadata_correlation || from != state->metadata_node)
        return;
    sim_timer_cancel(state->consumer->world, state->metadata_timer);
    state->metadata_correlation = 0;
    state->metadata_needed = FALSE;
    state->metadata_refreshed_ns = now_of(state);
    g_array_set_size(state->brokers, 0);
    g_array_append_vals(state->brokers, response->brokers->data, response->brokers->len);
    g_array_set_size(state->topic_counts, 0);
    for (guint i = 0; i < response->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index(response->partitions, KPartitionState, i);
        topic_count_add(state->topic_counts, ps->tp.topic);
        CPartition *p = partition_find(state, &ps->tp);
        /* As since KIP-320, a lagging broker's answer never moves a partition
         * back to an older leader epoch. */
        if (p == NULL || ps->leader_epoch < p->leader_epoch)
            continue;
        p->leader = ps->leader;
        p->leader_epoch = ps->leader_epoch;
    }
    group_metadata_updated(state);
}

static void
metadata_failed(ConsumerState *state)
{
    sim_timer_cancel(state->consumer->world, state->metadata_timer);
    state->metadata_correlation = 0;
    state->metadata_node = SIM_NODE_NONE;
    state->metadata_needed = TRUE;
}

static void
metadata_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)arg;
    state->metadata_timer = SIM_EVENT_ID_NONE;
    /* As Kafka's NetworkClient, a request timeout closes the connection, and
     * with it whatever else was in flight on it. */
    sim_net_close(sim_world_net(world), consumer->node, state->metadata_node);
    connection_failed(state, state->metadata_node);
    consumer_run(state);
}

/* ---- fetching ---- */

static void fetch_timed_out(SimWorld *world, void *ctx, void *arg);

static CFetch *
fetch_find(const ConsumerState *state, SimNodeId node)
{
    for (guint i = 0; i < state->fetches->len; i++) {
        CFetch *fetch = g_ptr_array_index(state->fetches, i);
        if (fetch->node == node)
            return fetch;
    }
    return NULL;
}

/* The partition's leader node when it may be fetched now, else SIM_NODE_NONE
 * (asking to be woken when its backoff ends). */
static SimNodeId
fetchable_node(ConsumerState *state, const CPartition *p, gint64 now)
{
    if (p->stopped || p->buffered > 0 || p->in_flight || p->committed_pending)
        return SIM_NODE_NONE;
    if (now < p->backoff_until_ns) {
        wake_at(state, p->backoff_until_ns);
        return SIM_NODE_NONE;
    }
    SimNodeId node = p->leader == KAFKA_NO_LEADER ? SIM_NODE_NONE : broker_node_of(state, p->leader);
    if (node == SIM_NODE_NONE)
        state->metadata_needed = TRUE;
    return node;
}

static void
fetch_send(ConsumerState *state, CFetch *fetch)
{
    Consumer *consumer = state->consumer;
    const ConsumerConfig *config = &consumer->config;
    KFetchRequest *request = kproto_new(KMSG_FETCH_REQUEST);
    request->correlation_id = fetch->correlation_id;
    request->replica_id = KAFKA_CONSUMER_REPLICA_ID;
    request->max_wait_ms = config->fetch_max_wait_ms;
    request->min_bytes = config->fetch_min_bytes;
    request->max_bytes = config->fetch_max_bytes;
    request->isolation = config->isolation_level;
    for (guint i = 0; i < fetch->entries->len; i++) {
        const CFetchEntry *entry = &g_array_index(fetch->entries, CFetchEntry, i);
        const CPartition *p = partition_find(state, &entry->tp);
        KFetchPartition out = {
            .tp = entry->tp,
            .fetch_offset = entry->fetch_offset,
            .current_leader_epoch = p->leader_epoch,
            .max_bytes = config->max_partition_fetch_bytes,
        };
        g_array_append_val(request->partitions, out);
    }
    kproto_update_size(&request->base);
    consumer->stats.fetch_requests++;
    sim_net_send(sim_world_net(consumer->world), consumer->node, fetch->node, &request->base);
    /* The broker may hold the request for fetch.max.wait.ms before answering. */
    gint64 timeout_ns = ms_to_ns(config->request_timeout_ms + config->fetch_max_wait_ms);
    fetch->timer = sim_timer_set(consumer->world, consumer->node, timeout_ns, fetch_timed_out,
                                 GINT_TO_POINTER(fetch->correlation_id));
}

/* Puts `p` into the fetch being built for `node` (creating it). */
static void
fetch_add(ConsumerState *state, GPtrArray *building, SimNodeId node, CPartition *p)
{
    CFetch *fetch = NULL;
    for (guint i = 0; i < building->len && fetch == NULL; i++) {
        CFetch *candidate = g_ptr_array_index(building, i);
        if (candidate->node == node)
            fetch = candidate;
    }
    if (fetch == NULL) {
        fetch = g_new0(CFetch, 1);
        fetch->node = node;
        fetch->correlation_id = state->correlation_next++;
        fetch->timer = SIM_EVENT_ID_NONE;
        fetch->entries = g_array_new(FALSE, FALSE, sizeof(CFetchEntry));
        g_ptr_array_add(building, fetch);
    }
    CFetchEntry entry = {p->tp, p->position >= 0 ? p->position : 0, p->position < 0};
    g_array_append_val(fetch->entries, entry);
    p->in_flight = TRUE;
}

/* One fetch per leader broker without one in flight, covering every
 * fetchable partition it leads, in partition order. */
static void
send_fetches(ConsumerState *state, gint64 now)
{
    g_autoptr(GPtrArray) building = g_ptr_array_new();
    for (guint i = 0; i < state->partitions->len; i++) {
        CPartition *p = g_ptr_array_index(state->partitions, i);
        SimNodeId node = fetchable_node(state, p, now);
        if (node != SIM_NODE_NONE && fetch_find(state, node) == NULL)
            fetch_add(state, building, node, p);
    }
    for (guint i = 0; i < building->len; i++) {
        CFetch *fetch = g_ptr_array_index(building, i);
        g_ptr_array_add(state->fetches, fetch);
        fetch_send(state, fetch);
    }
}

static void group_run(ConsumerState *state, gint64 now);

static void
consumer_run(ConsumerState *state)
{
    gint64 now = now_of(state);
    send_fetches(state, now);
    maybe_request_metadata(state, now);
    group_run(state, now);
}

/* Takes the fetch out of the in-flight list; the caller frees it. */
static void
fetch_detach(ConsumerState *state, CFetch *fetch)
{
    sim_timer_cancel(state->consumer->world, fetch->timer);
    guint index = 0;
    KSIM_ASSERT(g_ptr_array_find(state->fetches, fetch, &index));
    g_ptr_array_steal_index(state->fetches, index);
    for (guint i = 0; i < fetch->entries->len; i++) {
        CPartition *p = partition_find(state, &g_array_index(fetch->entries, CFetchEntry, i).tp);
        if (p != NULL)
            p->in_flight = FALSE;
    }
}

/* A partition-level error that Kafka answers with a metadata refresh and a
 * retry after retry.backoff.ms. */
static void
partition_retry_later(ConsumerState *state, CPartition *p)
{
    state->consumer->stats.fetch_errors++;
    state->metadata_needed = TRUE;
    p->backoff_until_ns = now_of(state) + ms_to_ns(state->consumer->config.retry_backoff_ms);
}

/* Records that a partition's position was set at the start of an
 * assignment (from the committed offset, by auto.offset.reset after the
 * probe, or by seek), so the checker knows where a member's continuous
 * reading of the partition begins. */
static void
record_assign(ConsumerState *state, const CPartition *p)
{
    Consumer *consumer = state->consumer;
    history_record(consumer->history, now_of(state), HISTORY_FN_ASSIGN, consumer->process,
                   p->history_topic, p->tp.partition, p->position, 0, 0);
}

/* auto.offset.reset with the bounds a fetch answer carried. */
static void
partition_reset(ConsumerState *state, CPartition *p, const KFetchPartitionResponse *data)
{
    Consumer *consumer = state->consumer;
    gboolean initial = p->position < 0;
    switch (consumer->config.auto_offset_reset) {
    case CONSUMER_RESET_EARLIEST:
        p->position = data->log_start_offset;
        break;
    case CONSUMER_RESET_LATEST:
        p->position = data->high_watermark;
        break;
    case CONSUMER_RESET_NONE:
        p->position = -1;
        p->stopped = TRUE;
        consumer->stats.reset_errors++;
        return;
    }
    KSIM_ASSERT(p->position >= 0);
    consumer->stats.offset_resets++;
    /* A reset of a position the member had (out of range) is not a new
     * assignment: the checker judges the jump. */
    if (initial)
        record_assign(state, p);
}

/* Transactions (Kafka's Fetcher): control batches (markers) are never
 * returned; a read_committed answer stops at the LSO and lists the aborted
 * transactions it overlaps, and a transactional batch is skipped while its
 * producer has an aborted transaction that began at or before it and whose
 * ABORT marker has not yet been passed. */
typedef struct {
    GArray *aborted;  /* KAbortedTxn by first offset; NULL: read_uncommitted */
    guint next;       /* the first not yet opened */
    GArray *open;     /* gint64 producer ids inside an aborted transaction */
} TxnFilter;

static gint
aborted_compare(gconstpointer a, gconstpointer b)
{
    gint64 x = ((const KAbortedTxn *)a)->first_offset, y = ((const KAbortedTxn *)b)->first_offset;
    return (x > y) - (x < y);
}

static gboolean
txn_filter_open_index(const TxnFilter *filter, gint64 producer_id, guint *index)
{
    for (guint i = 0; i < filter->open->len; i++) {
        if (g_array_index(filter->open, gint64, i) == producer_id) {
            *index = i;
            return TRUE;
        }
    }
    return FALSE;
}

/* TRUE when `batch` is not returned to the application. */
static gboolean
txn_filter_skips(TxnFilter *filter, const PlogBatch *batch)
{
    gint64 last = batch->base_offset + batch->record_count - 1;
    while (filter->aborted != NULL && filter->next < filter->aborted->len &&
           g_array_index(filter->aborted, KAbortedTxn, filter->next).first_offset <= last) {
        g_array_append_val(filter->open,
                           g_array_index(filter->aborted, KAbortedTxn, filter->next).producer_id);
        filter->next++;
    }
    guint index;
    gboolean open = txn_filter_open_index(filter, batch->producer_id, &index);
    if ((batch->attributes & PLOG_BATCH_CONTROL) != 0) {
        if (open && (batch->attributes & PLOG_BATCH_CONTROL_COMMIT) == 0)
            g_array_remove_index(filter->open, index);
        return TRUE;
    }
    return open && (batch->attributes & PLOG_BATCH_TRANSACTIONAL) != 0;
}

/* Buffers the records of an answer at and after the position, below the HW
 * (the LSO for read_committed). Skipped batches before the first record
 * buffered move the position past them, as Kafka's nextFetchOffset does. */
static guint
buffer_records(ConsumerState *state, CPartition *p, const KFetchPartitionResponse *data)
{
    guint added = 0;
    gint64 next = p->position;
    gint64 limit = data->high_watermark;
    TxnFilter filter = {NULL, 0, g_array_new(FALSE, FALSE, sizeof(gint64))};
    if (data->aborted_transactions != NULL) {
        limit = MIN(limit, data->last_stable_offset);
        filter.aborted = g_array_copy(data->aborted_transactions);
        g_array_sort(filter.aborted, aborted_compare);
    }
    gint64 skipped_to = -1;
    for (guint b = 0; b < data->batches->len; b++) {
        const PlogBatch *batch = g_ptr_array_index(data->batches, b);
        const PlogRecord *records = (const PlogRecord *)batch->records->data;
        gint64 end = batch->base_offset + batch->record_count;
        if (txn_filter_skips(&filter, batch)) {
            if (added == 0 && end <= limit)
                skipped_to = MAX(skipped_to, end);
            continue;
        }
        for (guint r = 0; r < batch->records->len; r++) {
            gint64 offset = batch->base_offset + r;
            /* A batch may start before the position; the broker bounds by
             * the HW in whole batches, and the client checks again. */
            if (offset < next || offset >= limit)
                continue;
            if (added == 0 && offset > p->position)
                p->position = offset; /* past skipped batches */
            ConsumerRecord record = {p->tp, offset, records[r].key, records[r].value};
            g_array_append_val(state->buffer, record);
            next = offset + 1;
            added++;
        }
    }
    if (added == 0 && skipped_to > p->position)
        p->position = skipped_to;
    if (filter.aborted != NULL)
        g_array_free(filter.aborted, TRUE);
    g_array_free(filter.open, TRUE);
    p->buffered += added;
    return added;
}

/* One partition of a fetch answer; returns the records buffered. */
static guint
handle_fetch_partition(ConsumerState *state, const CFetchEntry *entry,
                       const KFetchPartitionResponse *data)
{
    CPartition *p = partition_find(state, &entry->tp);
    gint64 expected = entry->probe ? -1 : entry->fetch_offset;
    /* A seek or a new assignment since the request makes the answer stale. */
    if (p == NULL || p->stopped || p->position != expected || p->buffered > 0)
        return 0;
    switch (data->error) {
    case KAFKA_ERROR_NONE:
        if (entry->probe) {
            partition_reset(state, p, data);
            return 0;
        }
        return buffer_records(state, p, data);
    case KAFKA_ERROR_OFFSET_OUT_OF_RANGE:
        if (!entry->probe)
            state->consumer->stats.fetch_errors++;
        partition_reset(state, p, data);
        return 0;
    default:
        partition_retry_later(state, p);
        return 0;
    }
}

static void poll_schedule(ConsumerState *state, gint64 delay_ns);

static void
handle_fetch_response(ConsumerState *state, SimNodeId from, const KFetchResponse *response)
{
    CFetch *fetch = fetch_find(state, from);
    if (fetch == NULL || fetch->correlation_id != response->correlation_id)
        return;
    fetch_detach(state, fetch);
    guint added = 0;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KFetchPartitionResponse *data =
            &g_array_index(response->partitions, KFetchPartitionResponse, i);
        for (guint e = 0; e < fetch->entries->len; e++) {
            const CFetchEntry *entry = &g_array_index(fetch->entries, CFetchEntry, e);
            if (ktp_equal(&entry->tp, &data->tp))
                added += handle_fetch_partition(state, entry, data);
        }
    }
    fetch_free(fetch);
    if (added > 0 && state->poll_waiting) {
        state->poll_waiting = FALSE;
        poll_schedule(state, 0);
    }
}

/* The connection to `node` broke (disconnect, or a timeout closed it):
 * whatever was in flight on it is lost. */
static void group_connection_failed(ConsumerState *state, SimNodeId node);

static void
connection_failed(ConsumerState *state, SimNodeId node)
{
    group_connection_failed(state, node);
    if (state->metadata_correlation != 0 && state->metadata_node == node)
        metadata_failed(state);
    CFetch *fetch = fetch_find(state, node);
    if (fetch == NULL)
        return;
    fetch_detach(state, fetch);
    for (guint i = 0; i < fetch->entries->len; i++) {
        CPartition *p = partition_find(state, &g_array_index(fetch->entries, CFetchEntry, i).tp);
        if (p != NULL)
            partition_retry_later(state, p);
    }
    fetch_free(fetch);
}

static void
fetch_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    gint32 correlation_id = GPOINTER_TO_INT(arg);
    for (guint i = 0; i < state->fetches->len; i++) {
        CFetch *fetch = g_ptr_array_index(state->fetches, i);
        if (fetch->correlation_id != correlation_id)
            continue;
        fetch->timer = SIM_EVENT_ID_NONE;
        SimNodeId node = fetch->node;
        sim_net_close(sim_world_net(world), consumer->node, node);
        connection_failed(state, node);
        break;
    }
    consumer_run(state);
}

/* ---- assignment ---- */

static gint
tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

/* Replaces the assignment with `tps` (sorted, distinct). Partitions kept keep
 * their state; new ones start without a position, awaiting their committed
 * offset when `committed_pending`. Records of dropped partitions leave the
 * buffer. */
static void
assignment_set(ConsumerState *state, const GArray *tps, gboolean committed_pending)
{
    Consumer *consumer = state->consumer;
    g_array_set_size(consumer->assigned, 0);
    g_array_append_vals(consumer->assigned, tps->data, tps->len);
    g_autoptr(GPtrArray) next = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < consumer->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
        KSIM_ASSERT(i == 0 || ktp_compare(tp - 1, tp) < 0);
        CPartition *kept = partition_find(state, tp);
        if (kept != NULL) {
            g_ptr_array_add(next, g_memdup2(kept, sizeof *kept));
            continue;
        }
        CPartition *fresh = partition_new(state, tp);
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
static void poll_schedule(ConsumerState *state, gint64 delay_ns);
static void processing_start(ConsumerState *state);

static gboolean
subscribed(const ConsumerState *state)
{
    return state->consumer->group_id != NULL;
}

static gint32
correlation_new(ConsumerState *state)
{
    return state->correlation_next++;
}

static void
request_send(ConsumerState *state, CRequestKind kind, SimNodeId node, SimMsg *msg,
             gint32 correlation_id, gint64 timeout_ms, guint64 commit_id)
{
    Consumer *consumer = state->consumer;
    CRequest *request = g_new0(CRequest, 1);
    request->kind = kind;
    request->correlation_id = correlation_id;
    request->node = node;
    request->commit_id = commit_id;
    request->timer = sim_timer_set(consumer->world, consumer->node, ms_to_ns(timeout_ms),
                                   request_timed_out, GINT_TO_POINTER(correlation_id));
    g_ptr_array_add(state->requests, request);
    kproto_update_size(msg);
    sim_net_send(sim_world_net(consumer->world), consumer->node, node, msg);
}

static gboolean
request_in_flight(const ConsumerState *state, CRequestKind kind)
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

static CCommit *
commit_find(const ConsumerState *state, guint64 id)
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
static void
group_reset(ConsumerState *state, gboolean forget_member)
{
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
static void
coordinator_lost(ConsumerState *state)
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

/* ---- commits ---- */

/* Ends a commit: its ops complete, then what waited on it goes on. */
static void
commit_finish(ConsumerState *state, CCommit *commit, HistoryType outcome, KafkaError error)
{
    Consumer *consumer = state->consumer;
    gint64 now = now_of(state);
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
        /* Kafka joins whatever the commit's outcome. */
        if (state->group_state == CGROUP_PREPARING)
            state->group_state = CGROUP_UNJOINED;
        break;
    case COMMIT_FOR_BEFORE_PROCESSING:
        state->app_commit = NULL;
        if (outcome == HISTORY_OK) {
            processing_start(state);
            break;
        }
        /* At most once: records whose commit failed are not processed. */
        g_array_set_size(state->processing, 0);
        state->processed = 0;
        poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
        break;
    case COMMIT_FOR_AFTER_PROCESSING:
        state->app_commit = NULL;
        poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
        break;
    case COMMIT_FOR_API:
        if (commit->done_cb != NULL)
            commit->done_cb(consumer, outcome, error, commit->user_data);
        break;
    case COMMIT_FOR_AUTO:
        break;
    }
    commit_free(commit);
}

/* Kafka's allConsumed: the position of every assigned partition that has
 * one. One op per partition enters the history now. */
static CCommit *
commit_new(ConsumerState *state, CommitPurpose purpose, gboolean sync)
{
    Consumer *consumer = state->consumer;
    gint64 now = now_of(state);
    CCommit *commit = g_new0(CCommit, 1);
    commit->id = ++state->commit_next;
    commit->purpose = purpose;
    commit->sync = sync;
    commit->offsets = g_array_new(FALSE, FALSE, sizeof(KOffsetPartition));
    commit->ops = g_array_new(FALSE, FALSE, sizeof(guint64));
    commit->deadline_ns = now + ms_to_ns(consumer->config.default_api_timeout_ms);
    commit->retry_ns = G_MININT64;
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        if (p->position < 0)
            continue;
        KOffsetPartition entry = {p->tp, p->position, KAFKA_ERROR_NONE};
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
        commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                      KAFKA_ERROR_REQUEST_TIMED_OUT);
        return;
    }
    if (commit->offsets->len == 0) {
        commit_finish(state, commit, HISTORY_OK, KAFKA_ERROR_NONE);
        return;
    }
    /* Kafka's generationIfStable: only a stable member commits. */
    if (state->group_state != CGROUP_STABLE && state->group_state != CGROUP_PREPARING) {
        gboolean rebalancing = state->group_state != CGROUP_UNJOINED;
        commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL,
                      rebalancing ? KAFKA_ERROR_REBALANCE_IN_PROGRESS
                                  : KAFKA_ERROR_CLIENT_COMMIT_FAILED);
        return;
    }
    if (state->coordinator == SIM_NODE_NONE) {
        wake_at(state, commit->deadline_ns);
        return;
    }
    if (now < commit->retry_ns) {
        wake_at(state, commit->retry_ns);
        return;
    }
    KOffsetMessage *request = kproto_new(KMSG_OFFSET_COMMIT_REQUEST);
    request->correlation_id = correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    request->generation_id = state->generation;
    g_array_append_vals(request->partitions, commit->offsets->data, commit->offsets->len);
    commit->in_flight = TRUE;
    request_send(state, CREQ_COMMIT, state->coordinator, &request->base, request->correlation_id,
                 consumer->config.request_timeout_ms, commit->id);
    wake_at(state, commit->deadline_ns);
}

static void
commits_send(ConsumerState *state, gint64 now)
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
static void
commit_failed(ConsumerState *state, CCommit *commit, KafkaError error, gboolean unknown)
{
    commit->in_flight = FALSE;
    commit->outcome_unknown = commit->outcome_unknown || unknown;
    if (commit->sync && kafka_error_is_retriable(error)) {
        commit->retry_ns = now_of(state) + ms_to_ns(state->consumer->config.retry_backoff_ms);
        return;
    }
    commit_finish(state, commit, commit->outcome_unknown ? HISTORY_INFO : HISTORY_FAIL, error);
}

static void
handle_commit_response(ConsumerState *state, const CRequest *request,
                       const KOffsetMessage *response)
{
    CCommit *commit = commit_find(state, request->commit_id);
    if (commit == NULL)
        return;
    KafkaError error = response->error;
    for (guint i = 0; i < response->partitions->len && error == KAFKA_ERROR_NONE; i++)
        error = g_array_index(response->partitions, KOffsetPartition, i).error;
    switch (error) {
    case KAFKA_ERROR_NONE:
        commit->in_flight = FALSE;
        commit_finish(state, commit, HISTORY_OK, KAFKA_ERROR_NONE);
        return;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
        commit_failed(state, commit, error, FALSE);
        return;
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
        /* From the append path too: the record may be in the log. */
        coordinator_lost(state);
        commit_failed(state, commit, error, TRUE);
        return;
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        group_reset(state, TRUE);
        commit_failed(state, commit, error, FALSE);
        return;
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->rejoin_needed = TRUE;
        commit_failed(state, commit, error, FALSE);
        return;
    default:
        commit_failed(state, commit, error, FALSE);
        return;
    }
}

/* ---- coordinator lookup ---- */

static void
find_coordinator(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->coordinator != SIM_NODE_NONE || request_in_flight(state, CREQ_FIND_COORDINATOR))
        return;
    if (now < state->coordinator_retry_ns) {
        wake_at(state, state->coordinator_retry_ns);
        return;
    }
    KFindCoordinatorRequest *request = kproto_new(KMSG_FIND_COORDINATOR_REQUEST);
    request->correlation_id = correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    consumer->stats.coordinator_lookups++;
    request_send(state, CREQ_FIND_COORDINATOR, metadata_target(state), &request->base,
                 request->correlation_id, consumer->config.request_timeout_ms, 0);
}

static void
handle_find_coordinator_response(ConsumerState *state, const KFindCoordinatorResponse *response)
{
    if (response->error != KAFKA_ERROR_NONE) {
        state->coordinator_retry_ns =
            now_of(state) + ms_to_ns(state->consumer->config.retry_backoff_ms);
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
    request->correlation_id = correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    KPROTO_SET_ID(request->client_id, consumer->name);
    request->session_timeout_ms = (gint32)config->session_timeout_ms;
    request->rebalance_timeout_ms = (gint32)config->max_poll_interval_ms;
    request->protocol = (gint32)config->partition_assignment_strategy;
    request->owned_generation = state->owned_generation;
    for (guint i = 0; i < consumer->topics->len; i++) {
        KTopicName name;
        KPROTO_SET_ID(name.name, (const char *)g_ptr_array_index(consumer->topics, i));
        g_array_append_val(request->topics, name);
    }
    g_array_append_vals(request->owned, state->owned->data, state->owned->len);
    state->group_state = CGROUP_JOINING;
    state->rejoin_needed = FALSE;
    consumer->stats.joins++;
    /* Kafka waits the rebalance timeout plus a lapse for a JoinGroup. */
    gint64 timeout_ms = MAX(config->request_timeout_ms, config->max_poll_interval_ms + 5000);
    request_send(state, CREQ_JOIN, state->coordinator, &request->base, request->correlation_id,
                 timeout_ms, 0);
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
    assignment_set(state, none, FALSE);
}

/* One step towards a JoinGroup, from inside poll(). */
static void
join_start(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->group_state == CGROUP_STABLE && consumer->config.enable_auto_commit &&
        consumer->assigned->len > 0) {
        state->group_state = CGROUP_PREPARING;
        commit_new(state, COMMIT_FOR_JOIN, TRUE);
        return;
    }
    if (state->group_state == CGROUP_PREPARING)
        return;
    revoke_all(state);
    state->group_state = CGROUP_UNJOINED;
    sim_timer_cancel(consumer->world, state->heartbeat_timer);
    /* The leader assigns from its metadata: have some first. */
    if (state->metadata_refreshed_ns == G_MININT64)
        return;
    if (now < state->join_retry_ns) {
        wake_at(state, state->join_retry_ns);
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
        if (topic_count_of(state->assigned_counts, topic) != -1 ||
            g_array_index(response->subscriptions, KMemberTopic, i).topic[0] == '\0')
            continue;
        CTopicCount count;
        KPROTO_SET_ID(count.topic, topic);
        count.partitions = topic_count_of(state->topic_counts, topic);
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
    g_autoptr(AssignorResult) result = assignor_assign(input, (AssignorStrategy)response->protocol);
    assignor_result_check_invariants(result, input);
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
    request->correlation_id = correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    KPROTO_SET_ID(request->member_id, state->member_id);
    request->generation_id = state->generation;
    if (state->is_leader)
        leader_assign(state, response, request);
    state->group_state = CGROUP_SYNCING;
    request_send(state, CREQ_SYNC, state->coordinator, &request->base, request->correlation_id,
                 consumer->config.request_timeout_ms, 0);
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
        group_reset(state, TRUE);
        return;
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        group_reset(state, FALSE);
        return;
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
    case KAFKA_ERROR_CLIENT_DISCONNECTED:
        coordinator_lost(state);
        return;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->join_retry_ns = now_of(state) + ms_to_ns(consumer->config.retry_backoff_ms);
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
    state->heartbeat_timer = sim_timer_set(consumer->world, consumer->node,
                                           ms_to_ns(consumer->config.heartbeat_interval_ms),
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
    g_array_sort(tps, tp_compare);
    assignment_set(state, tps, TRUE);
    state->group_state = CGROUP_STABLE;
    g_array_set_size(state->owned, 0);
    state->owned_generation = KAFKA_GENERATION_NONE;
    gint64 now = now_of(state);
    state->heartbeat_ok_ns = now;
    state->next_auto_commit_ns = now + ms_to_ns(consumer->config.auto_commit_interval_ms);
    state->offset_fetch_retry_ns = G_MININT64;
    consumer->stats.rebalances++;
    heartbeat_schedule(state);
}

/* The leader notices a changed partition count of a subscribed topic
 * (Kafka's assignment snapshot against the metadata snapshot). */
static void
group_metadata_updated(ConsumerState *state)
{
    if (!subscribed(state) || !state->is_leader || state->group_state != CGROUP_STABLE)
        return;
    for (guint i = 0; i < state->assigned_counts->len; i++) {
        const CTopicCount *count = &g_array_index(state->assigned_counts, CTopicCount, i);
        if (topic_count_of(state->topic_counts, count->topic) != count->partitions)
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
    gint64 now = now_of(state);
    /* Kafka's sessionTimeoutExpired: no answer for a session's time. */
    if (now - state->heartbeat_ok_ns > ms_to_ns(consumer->config.session_timeout_ms))
        coordinator_lost(state);
    if (state->coordinator != SIM_NODE_NONE && !request_in_flight(state, CREQ_HEARTBEAT)) {
        KGroupRequest *request = kproto_new(KMSG_HEARTBEAT_REQUEST);
        request->correlation_id = correlation_new(state);
        KPROTO_SET_ID(request->group_id, consumer->group_id);
        KPROTO_SET_ID(request->member_id, state->member_id);
        request->generation_id = state->generation;
        consumer->stats.heartbeats++;
        request_send(state, CREQ_HEARTBEAT, state->coordinator, &request->base,
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
        state->heartbeat_ok_ns = now_of(state);
        return;
    case KAFKA_ERROR_REBALANCE_IN_PROGRESS:
        state->heartbeat_ok_ns = now_of(state);
        state->rejoin_needed = TRUE;
        return;
    case KAFKA_ERROR_UNKNOWN_MEMBER_ID:
    case KAFKA_ERROR_ILLEGAL_GENERATION:
        if (state->group_state == CGROUP_STABLE || state->group_state == CGROUP_PREPARING)
            group_reset(state, response->error == KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        return;
    default:
        coordinator_lost(state);
        return;
    }
}

/* Kafka's maybeLeaveGroup: a LeaveGroup nobody waits for, and the member
 * forgets its id and generation and drops its partitions. */
static void
leave_group(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    if (state->member_id[0] != '\0' && state->coordinator != SIM_NODE_NONE) {
        KGroupRequest *request = kproto_new(KMSG_LEAVE_GROUP_REQUEST);
        request->correlation_id = correlation_new(state);
        KPROTO_SET_ID(request->group_id, consumer->group_id);
        KPROTO_SET_ID(request->member_id, state->member_id);
        request->generation_id = state->generation;
        request_send(state, CREQ_LEAVE, state->coordinator, &request->base,
                     request->correlation_id, consumer->config.request_timeout_ms, 0);
    }
    group_reset(state, TRUE);
    sim_timer_cancel(consumer->world, state->heartbeat_timer);
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    assignment_set(state, none, FALSE);
    g_array_set_size(state->owned, 0);
    state->owned_generation = KAFKA_GENERATION_NONE;
}

static void
poll_timeout_fire(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->poll_timeout_timer = SIM_EVENT_ID_NONE;
    consumer->stats.poll_timeouts++;
    leave_group(state);
    consumer_run(state);
}

/* ---- committed offsets of a new assignment ---- */

static void
offsets_fetch(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (state->group_state != CGROUP_STABLE || state->coordinator == SIM_NODE_NONE ||
        request_in_flight(state, CREQ_OFFSET_FETCH))
        return;
    KOffsetMessage *request = NULL;
    for (guint i = 0; i < state->partitions->len; i++) {
        const CPartition *p = g_ptr_array_index(state->partitions, i);
        if (!p->committed_pending)
            continue;
        if (now < state->offset_fetch_retry_ns) {
            wake_at(state, state->offset_fetch_retry_ns);
            break;
        }
        if (request == NULL)
            request = kproto_new(KMSG_OFFSET_FETCH_REQUEST);
        KOffsetPartition entry = {p->tp, -1, KAFKA_ERROR_NONE};
        g_array_append_val(request->partitions, entry);
    }
    if (request == NULL)
        return;
    request->correlation_id = correlation_new(state);
    KPROTO_SET_ID(request->group_id, consumer->group_id);
    request->generation_id = KAFKA_GENERATION_NONE;
    request->require_stable = consumer->config.isolation_level == KAFKA_READ_COMMITTED;
    request_send(state, CREQ_OFFSET_FETCH, state->coordinator, &request->base,
                 request->correlation_id, consumer->config.request_timeout_ms, 0);
}

static void
handle_offset_fetch_response(ConsumerState *state, const KOffsetMessage *response)
{
    gint64 retry_ns = now_of(state) + ms_to_ns(state->consumer->config.retry_backoff_ms);
    if (response->error == KAFKA_ERROR_NOT_COORDINATOR ||
        response->error == KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE)
        coordinator_lost(state);
    for (guint i = 0; i < response->partitions->len; i++) {
        const KOffsetPartition *entry = &g_array_index(response->partitions, KOffsetPartition, i);
        CPartition *p = partition_find(state, &entry->tp);
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
            record_assign(state, p);
        }
    }
}

/* ---- failures of group requests ---- */

/* A request abandoned without an answer (timeout, disconnect, coordinator
 * lost); frees it. */
static void
request_abandoned(ConsumerState *state, CRequest *request)
{
    gint64 retry_ns = now_of(state) + ms_to_ns(state->consumer->config.retry_backoff_ms);
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
        CCommit *commit = commit_find(state, request->commit_id);
        if (commit != NULL)
            commit_failed(state, commit, KAFKA_ERROR_CLIENT_DISCONNECTED, TRUE);
        break;
    }
    case CREQ_OFFSET_FETCH:
        state->offset_fetch_retry_ns = retry_ns;
        break;
    case CREQ_HEARTBEAT:
    case CREQ_LEAVE:
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
        coordinator_lost(state);
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

static void
group_connection_failed(ConsumerState *state, SimNodeId node)
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
        coordinator_lost(state);
}

/* Dispatches a group response; FALSE when `msg` is not one. */
static gboolean
group_handle_message(ConsumerState *state, SimNodeId from, SimMsg *msg)
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
        handle_commit_response(state, request, (const KOffsetMessage *)msg);
        break;
    case CREQ_OFFSET_FETCH:
        handle_offset_fetch_response(state, (const KOffsetMessage *)msg);
        break;
    }
    return TRUE;
}

/* ---- the group's part of poll() and of the background ---- */

/* Kafka's ConsumerCoordinator.poll, from inside the application's poll():
 * TRUE when the member may return records. */
static gboolean
group_poll(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    if (!subscribed(state))
        return TRUE;
    if (state->group_fatal)
        return FALSE;
    if (state->coordinator == SIM_NODE_NONE) {
        find_coordinator(state, now);
        return FALSE;
    }
    if (state->rejoin_needed || state->group_state != CGROUP_STABLE) {
        if (state->group_state != CGROUP_JOINING && state->group_state != CGROUP_SYNCING)
            join_start(state, now);
        return FALSE;
    }
    if (consumer->config.enable_auto_commit && now >= state->next_auto_commit_ns) {
        commit_new(state, COMMIT_FOR_AUTO, FALSE);
        state->next_auto_commit_ns = now + ms_to_ns(consumer->config.auto_commit_interval_ms);
    }
    return TRUE;
}

static void
group_run(ConsumerState *state, gint64 now)
{
    if (!subscribed(state))
        return;
    /* Kafka's heartbeat thread and poll both look the coordinator up. */
    if (state->coordinator == SIM_NODE_NONE && !state->group_fatal)
        find_coordinator(state, now);
    commits_send(state, now);
    offsets_fetch(state, now);
    if (state->poll_waiting && group_poll(state, now) && state->buffer->len > 0) {
        state->poll_waiting = FALSE;
        poll_schedule(state, 0);
    }
}

/* ---- the application's poll loop ---- */

static void
record_op(Consumer *consumer, HistoryFn fn, const ConsumerRecord *record, guint16 topic)
{
    history_record(consumer->history, sim_now_ns(consumer->world), fn, consumer->process, topic,
                   record->tp.partition, record->offset, record->key, record->value);
}

/* The loop's commits need a group to commit to. */
static ConsumerProcessingMode
processing_mode(const ConsumerState *state)
{
    return subscribed(state) ? state->consumer->config.processing_mode : CONSUMER_PROCESSING_AUTO;
}

static void processing_next(ConsumerState *state);

/* One record's processing ended; the next one starts, or the poll's
 * processing is over. */
static void
processing_done(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->processing_timer = SIM_EVENT_ID_NONE;
    KSIM_ASSERT(state->processed < state->processing->len);
    const ConsumerRecord *record =
        &g_array_index(state->processing, ConsumerRecord, state->processed);
    record_op(consumer, HISTORY_FN_PROCESS, record,
              history_topic(consumer->history, record->tp.topic));
    consumer->stats.records_processed++;
    state->processed++;
    if (state->processed < state->processing->len) {
        processing_next(state);
        return;
    }
    g_array_set_size(state->processing, 0);
    state->processed = 0;
    if (processing_mode(state) == CONSUMER_PROCESS_THEN_COMMIT) {
        /* commitSync after processing; the next poll follows its outcome. */
        state->app_commit = commit_new(state, COMMIT_FOR_AFTER_PROCESSING, TRUE);
        consumer_run(state);
        return;
    }
    poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
}

/* The application processes a poll's records one after another, each for
 * a draw of the processing time, as a `for (record : poll())` loop does; a
 * crash stops it between two records. */
static void
processing_next(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    gint64 delay_ns = sim_dist_sample(&consumer->processing, consumer->rng);
    state->processing_timer =
        sim_timer_set(consumer->world, consumer->node, delay_ns, processing_done, NULL);
}

static void
processing_start(ConsumerState *state)
{
    KSIM_ASSERT(state->processed == 0 && state->processing->len > 0);
    processing_next(state);
}

/* Kafka's poll(): takes up to max.poll.records from the buffer and moves
 * the positions past them. */
static void
poll_take(ConsumerState *state)
{
    Consumer *consumer = state->consumer;
    guint n = MIN(state->buffer->len, (guint)consumer->config.max_poll_records);
    for (guint i = 0; i < n; i++) {
        const ConsumerRecord *record = &g_array_index(state->buffer, ConsumerRecord, i);
        CPartition *p = partition_find(state, &record->tp);
        /* Records may follow skipped control or aborted batches: the
         * position jumps over them, as Kafka's nextFetchOffset does. */
        KSIM_ASSERT(p != NULL && p->position <= record->offset && p->buffered > 0);
        p->position = record->offset + 1;
        p->buffered--;
        record_op(consumer, HISTORY_FN_POLL, record, p->history_topic);
    }
    g_array_append_vals(state->processing, state->buffer->data, n);
    g_array_remove_range(state->buffer, 0, n);
    consumer->stats.polls++;
    consumer->stats.records_polled += n;
}

static void
poll_fire(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)arg;
    state->poll_timer = SIM_EVENT_ID_NONE;
    /* In poll() again: max.poll.interval.ms starts over when it returns. */
    sim_timer_cancel(world, state->poll_timeout_timer);
    if (!group_poll(state, now_of(state)) || state->buffer->len == 0) {
        /* Nothing to return: the poll waits for the group or the fetches. */
        state->poll_waiting = TRUE;
        consumer_run(state);
        return;
    }
    poll_take(state);
    if (subscribed(state))
        state->poll_timeout_timer =
            sim_timer_set(world, consumer->node, ms_to_ns(consumer->config.max_poll_interval_ms),
                          poll_timeout_fire, NULL);
    if (consumer->poll_cb != NULL)
        consumer->poll_cb(consumer, (const ConsumerRecord *)state->processing->data,
                          state->processing->len, consumer->poll_user_data);
    if (processing_mode(state) == CONSUMER_COMMIT_BEFORE_PROCESSING)
        state->app_commit = commit_new(state, COMMIT_FOR_BEFORE_PROCESSING, TRUE);
    else
        processing_start(state);
    /* Drained partitions may be fetched again while the records are processed. */
    consumer_run(state);
}

static void
poll_schedule(ConsumerState *state, gint64 delay_ns)
{
    Consumer *consumer = state->consumer;
    KSIM_ASSERT(!sim_timer_pending(consumer->world, state->poll_timer));
    state->poll_timer = sim_timer_set(consumer->world, consumer->node, delay_ns, poll_fire, NULL);
}

/* ---- node callbacks ---- */

static void
consumer_message_cb(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Consumer *consumer = ctx;
    (void)world;
    KSIM_ASSERT(consumer->state != NULL);
    if (msg->type == KMSG_FETCH_RESPONSE)
        handle_fetch_response(consumer->state, from, (const KFetchResponse *)msg);
    else if (msg->type == KMSG_METADATA_RESPONSE)
        handle_metadata_response(consumer->state, from, (const KMetadataResponse *)msg);
    else
        group_handle_message(consumer->state, from, msg);
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
    connection_failed(consumer->state, peer);
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
        poll_schedule(consumer->state, 0);
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
    g_array_sort(tps, tp_compare);
    assignment_set(state, tps, FALSE);
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
    leave_group(state);
    /* Commits still pending fail: there is no group any more. */
    while (state->commits->len > 0) {
        CCommit *commit = g_ptr_array_index(state->commits, 0);
        commit_finish(state, commit, commit->in_flight || commit->outcome_unknown ? HISTORY_INFO
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

static void
commit_by_application(Consumer *consumer, gboolean sync, ConsumerCommitCb done_cb,
                      void *user_data)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(consumer->group_id != NULL);
    CCommit *commit = commit_new(state, COMMIT_FOR_API, sync);
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
    return state != NULL && state->group_state == CGROUP_STABLE && !state->rejoin_needed;
}

GArray *
consumer_assignment(const Consumer *consumer)
{
    return g_array_copy(consumer->assigned);
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
    CPartition *p = partition_find(state, &tp);
    KSIM_ASSERT(p != NULL);
    buffer_drop_partition(state, p);
    p->position = offset;
    p->stopped = FALSE;
    record_assign(state, p);
    consumer_run(state);
}

gint64
consumer_position(const Consumer *consumer, const char *topic, gint32 partition)
{
    if (consumer->state == NULL)
        return -1;
    KTopicPartition tp;
    memset(&tp, 0, sizeof tp);
    ktp_set(&tp, topic, partition);
    const CPartition *p = partition_find(consumer->state, &tp);
    return p != NULL ? p->position : -1;
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
        poll_schedule(consumer->state, 0);
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
    }
}

static void
check_group(const ConsumerState *state)
{
    SimWorld *world = state->consumer->world;
    if (!subscribed(state)) {
        KSIM_ASSERT(state->requests->len == 0);
        KSIM_ASSERT(state->commits->len == 0);
        KSIM_ASSERT(state->group_state == CGROUP_UNJOINED);
        KSIM_ASSERT(state->member_id[0] == '\0');
    }
    if (sim_timer_pending(world, state->heartbeat_timer))
        KSIM_ASSERT(state->group_state == CGROUP_STABLE ||
                    state->group_state == CGROUP_PREPARING);
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
    check_group(state);
}
