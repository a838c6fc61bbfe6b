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
    if (p->stopped || p->buffered > 0 || p->in_flight)
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

static void
consumer_run(ConsumerState *state)
{
    gint64 now = now_of(state);
    send_fetches(state, now);
    maybe_request_metadata(state, now);
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

/* auto.offset.reset with the bounds a fetch answer carried. */
static void
partition_reset(ConsumerState *state, CPartition *p, const KFetchPartitionResponse *data)
{
    Consumer *consumer = state->consumer;
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
}

/* Buffers the records of an answer at and after the position, below the HW. */
static guint
buffer_records(ConsumerState *state, CPartition *p, const KFetchPartitionResponse *data)
{
    guint added = 0;
    gint64 next = p->position;
    for (guint b = 0; b < data->batches->len; b++) {
        const PlogBatch *batch = g_ptr_array_index(data->batches, b);
        const PlogRecord *records = (const PlogRecord *)batch->records->data;
        for (guint r = 0; r < batch->records->len; r++) {
            gint64 offset = batch->base_offset + r;
            /* A batch may start before the position; the broker bounds by
             * the HW in whole batches, and the client checks again. */
            if (offset < next || offset >= data->high_watermark)
                continue;
            ConsumerRecord record = {p->tp, offset, records[r].key, records[r].value};
            g_array_append_val(state->buffer, record);
            next = offset + 1;
            added++;
        }
    }
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
static void
connection_failed(ConsumerState *state, SimNodeId node)
{
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

/* ---- the application's poll loop ---- */

static void
record_op(Consumer *consumer, HistoryFn fn, const ConsumerRecord *record, guint16 topic)
{
    history_record(consumer->history, sim_now_ns(consumer->world), fn, consumer->process, topic,
                   record->tp.partition, record->offset, record->key, record->value);
}

static void
processing_done(SimWorld *world, void *ctx, void *arg)
{
    Consumer *consumer = ctx;
    ConsumerState *state = consumer->state;
    (void)world;
    (void)arg;
    state->processing_timer = SIM_EVENT_ID_NONE;
    for (guint i = 0; i < state->processing->len; i++) {
        const ConsumerRecord *record = &g_array_index(state->processing, ConsumerRecord, i);
        record_op(consumer, HISTORY_FN_PROCESS, record,
                  history_topic(consumer->history, record->tp.topic));
    }
    consumer->stats.records_processed += state->processing->len;
    g_array_set_size(state->processing, 0);
    poll_schedule(state, sim_dist_sample(&consumer->poll_interval, consumer->rng));
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
        KSIM_ASSERT(p != NULL && p->position == record->offset && p->buffered > 0);
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
    if (state->buffer->len == 0) {
        /* Nothing buffered: the poll waits for the background fetches. */
        state->poll_waiting = TRUE;
        return;
    }
    poll_take(state);
    if (consumer->poll_cb != NULL)
        consumer->poll_cb(consumer, (const ConsumerRecord *)state->processing->data,
                          state->processing->len, consumer->poll_user_data);
    gint64 delay_ns = sim_dist_sample(&consumer->processing, consumer->rng);
    state->processing_timer = sim_timer_set(world, consumer->node, delay_ns, processing_done, NULL);
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

static gint
tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

void
consumer_assign(Consumer *consumer, const char *topic, const gint32 *partitions, guint n)
{
    ConsumerState *state = consumer->state;
    KSIM_ASSERT(state != NULL);
    g_array_set_size(consumer->assigned, 0);
    for (guint i = 0; i < n; i++) {
        KTopicPartition tp;
        memset(&tp, 0, sizeof tp);
        KSIM_ASSERT(partitions[i] >= 0);
        ktp_set(&tp, topic, partitions[i]);
        g_array_append_val(consumer->assigned, tp);
    }
    g_array_sort(consumer->assigned, tp_compare);
    g_autoptr(GPtrArray) next = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < consumer->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(consumer->assigned, KTopicPartition, i);
        KSIM_ASSERT(i == 0 || ktp_compare(tp - 1, tp) < 0);
        CPartition *kept = partition_find(state, tp);
        if (kept != NULL)
            g_ptr_array_add(next, g_memdup2(kept, sizeof *kept));
        else
            g_ptr_array_add(next, partition_new(state, tp));
    }
    /* Records of partitions no longer assigned leave the buffer. */
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
    consumer_run(state);
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
            KSIM_ASSERT(count > 0 || record->offset == p->position);
            KSIM_ASSERT(record->offset > previous);
            previous = record->offset;
            count++;
        }
        KSIM_ASSERT(count == p->buffered);
        KSIM_ASSERT(!(p->in_flight && (p->buffered > 0 || p->stopped)));
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
    KSIM_ASSERT(state->processing->len == 0 || sim_timer_pending(world, state->processing_timer));
}
