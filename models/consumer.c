/*
 * consumer: Kafka's consumer in assign() mode (see consumer.h).
 *
 * Lifecycle of the process:
 *
 *   running ──sim_node_crash (consumer_crash_cb: free the state)──▶ down
 *      ▲                                                              │
 *      └──sim_node_restart (consumer_restart_cb: a new state from the ┘
 *          assignment, positions from auto.offset.reset, polling resumes)
 *
 * Lifecycle of one assigned partition:
 *
 *   no position ──probe fetch at 0──▶ position ──fetch──▶ buffered ──poll──▶ position+n
 *        ▲                              │  ▲                 │
 *        └── (never)                    │  └──seek───────────┘
 *                                       └──OFFSET_OUT_OF_RANGE, reset=none──▶ stopped
 *
 * Invariants:
 *  1. `state` is NULL exactly while the node is down.
 *  2. `partitions` is sorted by topic-partition, without duplicates, and
 *     mirrors `consumer->assigned`.
 *  3. Every buffered record belongs to an assigned partition; a partition's
 *     buffered records are in ascending offset order, the first at its
 *     position, and `buffered` counts them.
 *  4. A partition with buffered records, or stopped, is in no fetch.
 *  5. At most one fetch is in flight per broker node, and a partition is in
 *     at most one fetch.
 *  6. `processing` is non-empty only while the processing timer runs; the poll
 *     timer and the processing timer never run together.
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
    GArray *processing; /* ConsumerRecord being processed */
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
    };
}

/* ---- state ---- */

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
    for (guint i = 0; i < response->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index(response->partitions, KPartitionState, i);
        CPartition *p = partition_find(state, &ps->tp);
        /* As since KIP-320, a lagging broker's answer never moves a partition
         * back to an older leader epoch. */
        if (p == NULL || ps->leader_epoch < p->leader_epoch)
            continue;
        p->leader = ps->leader;
        p->leader_epoch = ps->leader_epoch;
    }
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
