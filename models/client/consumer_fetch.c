/*
 * consumer_fetch: metadata (which broker leads each partition) and
 * fetching, as Kafka's Fetcher: at most one fetch in flight per broker,
 * positions, resets on OFFSET_OUT_OF_RANGE, the transactional filter of
 * aborted batches, and the buffer that poll() drains.
 */
#include "consumer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* Kafka's socket.connection.setup.timeout.ms default bounds a metadata wait. */
#define CONSUMER_CONNECTION_SETUP_TIMEOUT_MS 10000

/* ---- metadata ---- */

static void metadata_timed_out(SimWorld *world, void *ctx, void *arg);

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
gint32
consumer_topic_count_of(const GArray *counts, const char *topic)
{
    for (guint i = 0; i < counts->len; i++) {
        const CTopicCount *count = &g_array_index(counts, CTopicCount, i);
        if (strcmp(count->topic, topic) == 0)
            return count->partitions;
    }
    return -1;
}

SimNodeId
consumer_metadata_target(ConsumerState *state)
{
    const GArray *bootstrap = state->consumer->bootstrap;
    guint index = state->node_next++;
    if (state->brokers->len > 0)
        return g_array_index(state->brokers, KBrokerEndpoint, index % state->brokers->len).node;
    return g_array_index(bootstrap, SimNodeId, index % bootstrap->len);
}

void
consumer_maybe_request_metadata(ConsumerState *state, gint64 now)
{
    Consumer *consumer = state->consumer;
    const ConsumerConfig *config = &consumer->config;
    if (state->metadata_refreshed_ns != G_MININT64) {
        gint64 stale_ns =
            state->metadata_refreshed_ns + consumer_ms_to_ns(config->metadata_max_age_ms);
        if (now >= stale_ns)
            state->metadata_needed = TRUE;
        else
            consumer_wake_at(state, stale_ns);
    }
    if (!state->metadata_needed || state->metadata_correlation != 0)
        return;
    if (state->metadata_attempt_ns != G_MININT64) {
        gint64 due_ns = state->metadata_attempt_ns + consumer_ms_to_ns(config->retry_backoff_ms);
        if (now < due_ns) {
            consumer_wake_at(state, due_ns);
            return;
        }
    }
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = state->correlation_next++;
    SimNodeId node = consumer_metadata_target(state);
    state->metadata_correlation = request->correlation_id;
    state->metadata_node = node;
    state->metadata_attempt_ns = now;
    consumer->stats.metadata_requests++;
    sim_net_send(sim_world_net(consumer->world), consumer->node, node, &request->base);
    gint64 timeout_ms = MIN(config->request_timeout_ms, CONSUMER_CONNECTION_SETUP_TIMEOUT_MS);
    state->metadata_timer = sim_timer_set(consumer->world, consumer->node,
                                          consumer_ms_to_ns(timeout_ms), metadata_timed_out, NULL);
}

void
consumer_handle_metadata_response(ConsumerState *state, SimNodeId from,
                                  const KMetadataResponse *response)
{
    if (response->correlation_id != state->metadata_correlation || from != state->metadata_node)
        return;
    sim_timer_cancel(state->consumer->world, state->metadata_timer);
    state->metadata_correlation = 0;
    state->metadata_needed = FALSE;
    state->metadata_refreshed_ns = consumer_now(state);
    g_array_set_size(state->brokers, 0);
    g_array_append_vals(state->brokers, response->brokers->data, response->brokers->len);
    g_array_set_size(state->topic_counts, 0);
    for (guint i = 0; i < response->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index(response->partitions, KPartitionState, i);
        topic_count_add(state->topic_counts, ps->tp.topic);
        CPartition *p = consumer_partition_find(state, &ps->tp);
        /* As since KIP-320, a lagging broker's answer never moves a partition
         * back to an older leader epoch. */
        if (p == NULL || ps->leader_epoch < p->leader_epoch)
            continue;
        consumer_validate_leader_changed(state, p, ps->leader, ps->leader_epoch);
        p->leader = ps->leader;
        p->leader_epoch = ps->leader_epoch;
    }
    consumer_group_metadata_updated(state);
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
    consumer_connection_failed(state, state->metadata_node);
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
    if (p->stopped || p->buffered > 0 || p->in_flight || p->committed_pending ||
        p->awaiting_validation)
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
        const CPartition *p = consumer_partition_find(state, &entry->tp);
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
    gint64 timeout_ns = consumer_ms_to_ns(config->request_timeout_ms + config->fetch_max_wait_ms);
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
    CFetchEntry entry = {p->tp, p->position >= 0 ? p->position : 0, p->position < 0, -1};
    g_array_append_val(fetch->entries, entry);
    p->in_flight = TRUE;
}

/* One fetch per leader broker without one in flight, covering every
 * fetchable partition it leads, in partition order. */
void
consumer_send_fetches(ConsumerState *state, gint64 now)
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
fetch_detach(ConsumerState *state, CFetch *fetch)
{
    sim_timer_cancel(state->consumer->world, fetch->timer);
    guint index = 0;
    KSIM_ASSERT(g_ptr_array_find(state->fetches, fetch, &index));
    g_ptr_array_steal_index(state->fetches, index);
    for (guint i = 0; i < fetch->entries->len; i++) {
        CPartition *p =
            consumer_partition_find(state, &g_array_index(fetch->entries, CFetchEntry, i).tp);
        if (p != NULL)
            p->in_flight = FALSE;
    }
}

/* A partition-level error that Kafka answers with a metadata refresh and a
 * retry after retry.backoff.ms. */
void
consumer_partition_retry_later(ConsumerState *state, CPartition *p)
{
    state->consumer->stats.fetch_errors++;
    state->metadata_needed = TRUE;
    p->backoff_until_ns =
        consumer_now(state) + consumer_ms_to_ns(state->consumer->config.retry_backoff_ms);
}

/* Records that a partition's position was set at the start of an
 * assignment (from the committed offset, by auto.offset.reset after the
 * probe, or by seek), so the checker knows where a member's continuous
 * reading of the partition begins. */
void
consumer_record_assign(ConsumerState *state, const CPartition *p)
{
    Consumer *consumer = state->consumer;
    history_record(consumer->history, consumer_now(state), HISTORY_FN_ASSIGN, consumer->process,
                   p->history_topic, p->tp.partition, p->position, 0, 0);
}

/* Records the reset of a position the member had (`from`), which the
 * leader answered OFFSET_OUT_OF_RANGE: OK with the new position, or FAIL
 * when auto.offset.reset=none raises instead; without a position before
 * (NoOffsetForPartitionException), `from` is HISTORY_RESET_NO_POSITION. */
static void
record_reset(ConsumerState *state, const CPartition *p, gint64 from,
             const KFetchPartitionResponse *data)
{
    Consumer *consumer = state->consumer;
    guint64 value = from >= 0 ? (guint64)from : HISTORY_RESET_NO_POSITION;
    guint64 key = (guint64)MAX(data->log_start_offset, 0);
    gint64 now = consumer_now(state);
    guint64 op = history_invoke(consumer->history, now, HISTORY_FN_RESET, consumer->process,
                                p->history_topic, p->tp.partition, key, value);
    gboolean reset = p->position >= 0;
    history_complete(consumer->history, op, now, reset ? HISTORY_OK : HISTORY_FAIL, -1,
                     reset ? p->position : -1, KAFKA_ERROR_OFFSET_OUT_OF_RANGE);
}

/* auto.offset.reset with the bounds a fetch answer carried, as Kafka's
 * FetchCollector and SubscriptionState do (3.x): earliest and latest reset
 * the position (Kafka asks ListOffsets; the answer carries the same log
 * start offset and, for read_uncommitted, high watermark); none raises
 * OffsetOutOfRangeException to the application from its poll (or, for a
 * partition without a committed offset, NoOffsetForPartitionException),
 * which ends the application's loop (consumer_poll.c). */
static void
partition_reset(ConsumerState *state, CPartition *p, const KFetchPartitionResponse *data)
{
    Consumer *consumer = state->consumer;
    gint64 from = p->position;
    gboolean initial = from < 0;
    /* Kafka takes the epoch from ListOffsets; the probe's answer carries
     * none, so a reset position is not validated (KIP-320) until a record
     * has been consumed from it. */
    p->position_epoch = -1;
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
        state->raise_pending = TRUE;
        record_reset(state, p, from, data);
        return;
    }
    KSIM_ASSERT(p->position >= 0);
    consumer->stats.offset_resets++;
    /* A reset of a position the member had (out of range) is not a new
     * assignment: a RESET op tells the checker of the jump and its cause. */
    if (initial)
        consumer_record_assign(state, p);
    else
        record_reset(state, p, from, data);
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
            ConsumerRecord record = {p->tp, offset, records[r].key, records[r].value,
                                     batch->leader_epoch};
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
    CPartition *p = consumer_partition_find(state, &entry->tp);
    gint64 expected = entry->probe ? -1 : entry->fetch_offset;
    /* A seek or a new assignment since the request makes the answer stale. */
    if (p == NULL || p->stopped || p->position != expected || p->buffered > 0 ||
        p->awaiting_validation)
        return 0;
    switch (data->error) {
    case KAFKA_ERROR_NONE:
        if (entry->probe) {
            partition_reset(state, p, data);
            return 0;
        }
        p->fetched_end = state->consumer->config.isolation_level == 1 ? data->last_stable_offset
                                                                      : data->high_watermark;
        return buffer_records(state, p, data);
    case KAFKA_ERROR_OFFSET_OUT_OF_RANGE:
        if (!entry->probe)
            state->consumer->stats.fetch_errors++;
        partition_reset(state, p, data);
        return 0;
    default:
        consumer_partition_retry_later(state, p);
        return 0;
    }
}

void
consumer_handle_fetch_response(ConsumerState *state, SimNodeId from, const KFetchResponse *response)
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
    consumer_fetch_free(fetch);
    if ((added > 0 || state->raise_pending) && state->poll_waiting) {
        state->poll_waiting = FALSE;
        consumer_poll_schedule(state, 0);
    }
}

/* The connection to `node` broke (disconnect, or a timeout closed it):
 * whatever was in flight on it is lost. */

void
consumer_connection_failed(ConsumerState *state, SimNodeId node)
{
    consumer_group_connection_failed(state, node);
    consumer_validate_connection_failed(state, node);
    if (state->metadata_correlation != 0 && state->metadata_node == node)
        metadata_failed(state);
    CFetch *fetch = fetch_find(state, node);
    if (fetch == NULL)
        return;
    fetch_detach(state, fetch);
    for (guint i = 0; i < fetch->entries->len; i++) {
        CPartition *p =
            consumer_partition_find(state, &g_array_index(fetch->entries, CFetchEntry, i).tp);
        if (p != NULL)
            consumer_partition_retry_later(state, p);
    }
    consumer_fetch_free(fetch);
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
        consumer_connection_failed(state, node);
        break;
    }
    consumer_run(state);
}
