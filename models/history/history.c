/*
 * history: the run's client operations, cluster events and final replica
 * states (see history.h).
 *
 * Invariants:
 *  1. ops are in invocation order (invoke_ns non-decreasing); events are
 *     in time order.
 *  2. Every completion names an op that was invoked and not yet completed,
 *     and completes it no earlier than its invocation.
 *  3. Topic names are unique; `topic_ids` maps each to its index.
 *  4. ISR sets are unique and sorted: set i's members are
 *     isr_members[isr_starts[i] .. isr_starts[i + 1]), strictly increasing;
 *     set 0 is the empty set; `isr_ids` maps each set's bytes to its id + 1.
 *  5. `event_records` names events in strictly increasing order, each a
 *     HISTORY_EVENT_RETENTION event, with its records in offset order.
 *  6. `requests` holds produce requests only; `busy` has one series per
 *     broker, in strictly ascending id order, each with at most
 *     HISTORY_BUSY_BINS_MAX bins of a power of ten times
 *     HISTORY_BUSY_BIN_NS.
 */
#include "history.h"

#include "sim_assert.h"
#include "sim_mem.h"

#include <stdlib.h>
#include <string.h>

struct History {
    HistoryOpArray ops; /* a block of ops_room.capacity rows (sim_block_grow) */
    GArray *events;   /* HistoryEvent */
    GArray *replicas; /* HistoryReplica */
    GArray *requests; /* HistoryRequest: produce requests */
    GPtrArray *busy;  /* HistoryBusy *, by ascending broker id */
    GArray *metrics;  /* HistoryMetric */
    GArray *topic_min_isr; /* gint32 by topic index */
    GPtrArray *topic_names;
    GHashTable *topic_ids; /* name -> index + 1; looked up only */
    GPtrArray *process_names;
    GPtrArray *process_groups; /* char* by process id, NULL: none */
    /* Transactions' side tables: NULL until first used. */
    GPtrArray *process_txn_ids;   /* char* by process id, NULL: none */
    GPtrArray *process_pipelines; /* char* by process id, NULL: none */
    GArray *process_read_committed; /* guint8 by process id */
    gboolean has_transactions;
    gint64 last_invoke_ns;
    gint64 ops_end_ns; /* the latest invocation or completion; -1: none */
    SimArrayRoom ops_room;
    GArray *keys;       /* guint64 per op, from the first op with a key; NULL: none yet */
    GArray *event_records; /* EventRecords by event index; NULL until the first */
    guint violations;
    GArray *isr_members;   /* gint32, the members of every ISR set in id order */
    GArray *isr_starts;    /* guint32 per set + 1: where each set's members begin */
    GHashTable *isr_ids;   /* GBytes of the sorted members -> id + 1; looked up only */
};

/* The records that came with one event (history_event_with_records). */
typedef struct {
    guint event;
    GArray *records; /* HistoryRecord (owned reference) */
} EventRecords;

static void
event_records_clear(gpointer data)
{
    EventRecords *entry = data;
    g_array_unref(entry->records);
}

static void
event_clear(gpointer data)
{
    HistoryEvent *event = data;
    g_free(event->text);
}

static void
replica_clear(gpointer data)
{
    HistoryReplica *replica = data;
    if (replica->records != NULL)
        g_array_unref(replica->records);
    if (replica->epochs != NULL)
        g_array_unref(replica->epochs);
}

static void
busy_free(gpointer data)
{
    HistoryBusy *busy = data;
    g_array_free(busy->bins, TRUE);
    g_free(busy);
}

History *
history_new(void)
{
    History *history = g_new0(History, 1);
    history->events = g_array_new(FALSE, FALSE, sizeof(HistoryEvent));
    g_array_set_clear_func(history->events, event_clear);
    history->replicas = g_array_new(FALSE, FALSE, sizeof(HistoryReplica));
    history->requests = g_array_new(FALSE, FALSE, sizeof(HistoryRequest));
    history->busy = g_ptr_array_new_with_free_func(busy_free);
    history->metrics = g_array_new(FALSE, FALSE, sizeof(HistoryMetric));
    history->topic_min_isr = g_array_new(FALSE, TRUE, sizeof(gint32));
    g_array_set_clear_func(history->replicas, replica_clear);
    history->ops_end_ns = -1;
    history->topic_names = g_ptr_array_new_with_free_func(g_free);
    history->topic_ids = g_hash_table_new(g_str_hash, g_str_equal);
    history->process_names = g_ptr_array_new_with_free_func(g_free);
    history->process_groups = g_ptr_array_new_with_free_func(g_free);
    history->isr_members = g_array_new(FALSE, FALSE, sizeof(gint32));
    history->isr_starts = g_array_new(FALSE, FALSE, sizeof(guint32));
    history->isr_ids = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                             (GDestroyNotify)g_bytes_unref, NULL);
    guint32 zero = 0;
    g_array_append_val(history->isr_starts, zero); /* set 0, the empty set */
    g_array_append_val(history->isr_starts, zero);
    return history;
}

void
history_free(History *history)
{
    if (history == NULL)
        return;
    sim_block_free(history->ops.data, sizeof(HistoryOp), &history->ops_room);
    if (history->keys != NULL)
        g_array_free(history->keys, TRUE);
    g_array_free(history->events, TRUE);
    if (history->event_records != NULL)
        g_array_free(history->event_records, TRUE);
    g_array_free(history->replicas, TRUE);
    g_array_free(history->requests, TRUE);
    g_ptr_array_free(history->busy, TRUE);
    g_array_free(history->metrics, TRUE);
    g_array_free(history->topic_min_isr, TRUE);
    g_hash_table_destroy(history->topic_ids);
    g_hash_table_destroy(history->isr_ids);
    g_array_free(history->isr_members, TRUE);
    g_array_free(history->isr_starts, TRUE);
    g_ptr_array_free(history->topic_names, TRUE);
    g_ptr_array_free(history->process_names, TRUE);
    g_ptr_array_free(history->process_groups, TRUE);
    if (history->process_txn_ids != NULL)
        g_ptr_array_free(history->process_txn_ids, TRUE);
    if (history->process_pipelines != NULL)
        g_ptr_array_free(history->process_pipelines, TRUE);
    if (history->process_read_committed != NULL)
        g_array_free(history->process_read_committed, TRUE);
    g_free(history);
}

guint16
history_topic(History *history, const char *name)
{
    gpointer found = g_hash_table_lookup(history->topic_ids, name);
    if (found != NULL)
        return (guint16)(GPOINTER_TO_UINT(found) - 1);
    KSIM_ASSERT(history->topic_names->len < G_MAXUINT16);
    char *copy = g_strdup(name);
    g_ptr_array_add(history->topic_names, copy);
    guint index = history->topic_names->len - 1;
    g_hash_table_insert(history->topic_ids, copy, GUINT_TO_POINTER(index + 1));
    return (guint16)index;
}

const char *
history_topic_name(const History *history, guint16 topic)
{
    KSIM_ASSERT(topic < history->topic_names->len);
    return g_ptr_array_index(history->topic_names, topic);
}

guint
history_topic_count(const History *history)
{
    return history->topic_names->len;
}

/* Room for `n` more operations; returns the first of them. */
static inline G_ALWAYS_INLINE HistoryOp *
ops_extend(History *history, guint n, gint64 time_ns)
{
    HistoryOpArray *ops = &history->ops;
    KSIM_ASSERT(time_ns >= history->last_invoke_ns);
    history->last_invoke_ns = time_ns;
    history->ops_end_ns = MAX(history->ops_end_ns, time_ns);
    guint len = ops->len;
    KSIM_ASSERT(n <= G_MAXUINT - len);
    /* Once per operation: the common case is a compare and an add. */
    if (G_UNLIKELY((gsize)(len + n) * sizeof(HistoryOp) > history->ops_room.populated))
        sim_block_grow((gpointer *)&ops->data, sizeof(HistoryOp), len + n, &history->ops_room);
    ops->len = len + n;
    if (history->keys != NULL)
        g_array_set_size(history->keys, len + n); /* zeros: no key */
    return &ops->data[len];
}

/* A row is 48 bytes: a long run writes millions of them. */
G_STATIC_ASSERT(sizeof(HistoryOp) == 48);

/* Keeps operation `op`'s key; the side table starts with the first key. */
static void
key_store(History *history, guint64 op, guint64 key)
{
    if (history->keys == NULL) {
        history->keys = g_array_new(FALSE, TRUE, sizeof(guint64));
        g_array_set_size(history->keys, history->ops.len);
    }
    g_array_index(history->keys, guint64, op - 1) = key;
}

/* Most runs have no keys: then this is one test. */
static inline G_ALWAYS_INLINE void
key_set(History *history, guint64 op, guint64 key)
{
    if (key != 0 || history->keys != NULL)
        key_store(history, op, key);
}

static HistoryOp *
op_at(const History *history, guint64 op)
{
    KSIM_ASSERT(op > 0 && op <= history->ops.len);
    return &history->ops.data[op - 1];
}

guint64
history_invoke(History *history, gint64 time_ns, HistoryFn fn, guint32 process, guint16 topic,
               gint32 partition, guint64 key, guint64 value)
{
    if (fn >= HISTORY_FN_TXN_INIT && fn <= HISTORY_FN_TXN_OFFSETS)
        history->has_transactions = TRUE;
    HistoryOp *op = ops_extend(history, 1, time_ns);
    *op = (HistoryOp){.invoke_ns = time_ns,
                      .complete_ns = -1,
                      .type = HISTORY_INVOKE,
                      .fn = (guint8)fn,
                      .topic = topic,
                      .process = process,
                      .partition = partition,
                      .value = value,
                      .offset = -1};
    key_set(history, history->ops.len, key);
    return history->ops.len;
}

guint64
history_invoke_sends(History *history, gint64 time_ns, guint32 process, guint16 topic,
                     gint32 partition, const guint64 *values, guint n)
{
    KSIM_ASSERT(n > 0);
    HistoryOp *ops = ops_extend(history, n, time_ns);
    for (guint i = 0; i < n; i++) {
        ops[i] = (HistoryOp){.invoke_ns = time_ns,
                             .complete_ns = -1,
                             .type = HISTORY_INVOKE,
                             .fn = HISTORY_FN_SEND,
                             .topic = topic,
                             .process = process,
                             .partition = partition,
                             .value = values[i],
                             .offset = -1};
    }
    return history->ops.len - n + 1;
}

/* Completes one pending operation. */
static void
op_complete(HistoryOp *op, gint64 time_ns, HistoryType type, gint32 partition, gint64 offset,
            gint32 error)
{
    KSIM_ASSERT(type != HISTORY_INVOKE);
    KSIM_ASSERT(op->type == HISTORY_INVOKE);
    KSIM_ASSERT(time_ns >= op->invoke_ns);
    op->complete_ns = time_ns;
    op->type = (guint8)type;
    if (partition >= 0)
        op->partition = partition;
    op->offset = offset;
    op->error = error;
}

void
history_complete_range(History *history, guint64 first_op, guint n, gint64 time_ns,
                       HistoryType type, gint32 partition, gint64 base_offset, gint32 error)
{
    history->ops_end_ns = MAX(history->ops_end_ns, time_ns);
    KSIM_ASSERT(first_op > 0 && n <= history->ops.len && first_op - 1 <= history->ops.len - n);
    HistoryOp *ops = op_at(history, first_op);
    for (guint i = 0; i < n; i++)
        op_complete(&ops[i], time_ns, type, partition,
                    type == HISTORY_OK ? base_offset + i : -1, error);
}

void
history_complete(History *history, guint64 op, gint64 time_ns, HistoryType type,
                 gint32 partition, gint64 offset, gint32 error)
{
    history->ops_end_ns = MAX(history->ops_end_ns, time_ns);
    op_complete(op_at(history, op), time_ns, type, partition, offset, error);
}

guint64
history_record(History *history, gint64 time_ns, HistoryFn fn, guint32 process, guint16 topic,
               gint32 partition, gint64 offset, guint64 key, guint64 value)
{
    if (fn >= HISTORY_FN_TXN_INIT && fn <= HISTORY_FN_TXN_OFFSETS)
        history->has_transactions = TRUE;
    HistoryOp *op = ops_extend(history, 1, time_ns);
    *op = (HistoryOp){.invoke_ns = time_ns,
                      .complete_ns = time_ns,
                      .type = HISTORY_OK,
                      .fn = (guint8)fn,
                      .topic = topic,
                      .process = process,
                      .partition = partition,
                      .value = value,
                      .offset = offset};
    key_set(history, history->ops.len, key);
    return history->ops.len;
}

const HistoryOpArray *
history_ops(const History *history)
{
    return &history->ops;
}

guint64
history_op_key(const History *history, guint64 op)
{
    op_at(history, op); /* checks the id */
    return history->keys != NULL ? g_array_index(history->keys, guint64, op - 1) : 0;
}

const HistoryOp *
history_op(const History *history, guint64 op)
{
    return op_at(history, op);
}

gint64
history_ops_end_ns(const History *history)
{
    return history->ops_end_ns;
}

void
history_event(History *history, const HistoryEvent *event)
{
    HistoryEvent copy = *event;
    copy.text = g_strdup(event->text);
    if (copy.kind == HISTORY_EVENT_VIOLATION)
        history->violations++;
    g_array_append_val(history->events, copy);
}

void
history_event_with_records(History *history, const HistoryEvent *event, GArray *records)
{
    KSIM_ASSERT(event->kind == HISTORY_EVENT_RETENTION);
    KSIM_ASSERT(records != NULL);
    if (history->event_records == NULL) {
        history->event_records = g_array_new(FALSE, FALSE, sizeof(EventRecords));
        g_array_set_clear_func(history->event_records, event_records_clear);
    }
    EventRecords entry = {history->events->len, records};
    history_event(history, event);
    g_array_append_val(history->event_records, entry);
}

const GArray *
history_event_records(const History *history, guint index)
{
    const GArray *all = history->event_records;
    if (all == NULL)
        return NULL;
    guint low = 0, high = all->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        guint event = g_array_index(all, EventRecords, middle).event;
        if (event == index)
            return g_array_index(all, EventRecords, middle).records;
        if (event < index)
            low = middle + 1;
        else
            high = middle;
    }
    return NULL;
}

const GArray *
history_events(const History *history)
{
    return history->events;
}

guint
history_violation_count(const History *history)
{
    return history->violations;
}

guint
history_records_lower_bound(const GArray *records, gint64 offset)
{
    guint low = 0, high = records->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        if (g_array_index(records, HistoryRecord, middle).offset < offset)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

gint32
history_epoch_at(const GArray *epochs, gint64 offset)
{
    if (epochs == NULL)
        return -1;
    /* The last entry starting at or below the offset. */
    guint low = 0, high = epochs->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        if (g_array_index(epochs, HistoryEpochStart, middle).start_offset <= offset)
            low = middle + 1;
        else
            high = middle;
    }
    return low == 0 ? -1 : g_array_index(epochs, HistoryEpochStart, low - 1).leader_epoch;
}

void
history_add_replica(History *history, const HistoryReplica *replica)
{
    KSIM_ASSERT(replica->records != NULL);
    g_array_append_val(history->replicas, *replica);
}

const GArray *
history_replicas(const History *history)
{
    return history->replicas;
}

void
history_set_process_name(History *history, guint32 process, const char *name)
{
    while (history->process_names->len <= process)
        g_ptr_array_add(history->process_names, NULL);
    g_free(g_ptr_array_index(history->process_names, process));
    g_ptr_array_index(history->process_names, process) = g_strdup(name);
}

const char *
history_process_name(const History *history, guint32 process)
{
    if (process >= history->process_names->len)
        return NULL;
    return g_ptr_array_index(history->process_names, process);
}

void
history_set_process_group(History *history, guint32 process, const char *group)
{
    KSIM_ASSERT(group != NULL);
    while (history->process_groups->len <= process)
        g_ptr_array_add(history->process_groups, NULL);
    g_free(g_ptr_array_index(history->process_groups, process));
    g_ptr_array_index(history->process_groups, process) = g_strdup(group);
}

const char *
history_process_group(const History *history, guint32 process)
{
    if (process >= history->process_groups->len)
        return NULL;
    return g_ptr_array_index(history->process_groups, process);
}

static gint
group_name_compare(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

GPtrArray *
history_groups(const History *history)
{
    GPtrArray *groups = g_ptr_array_new();
    for (guint i = 0; i < history->process_groups->len; i++) {
        const char *group = g_ptr_array_index(history->process_groups, i);
        if (group != NULL)
            g_ptr_array_add(groups, (gpointer)group);
    }
    g_ptr_array_sort(groups, group_name_compare);
    guint kept = 0;
    for (guint i = 0; i < groups->len; i++) {
        if (kept > 0 && strcmp(g_ptr_array_index(groups, kept - 1), g_ptr_array_index(groups, i)) == 0)
            continue;
        g_ptr_array_index(groups, kept++) = g_ptr_array_index(groups, i);
    }
    g_ptr_array_set_size(groups, kept);
    return groups;
}

guint32
history_process_group_bound(const History *history)
{
    guint32 bound = history->process_groups->len;
    while (bound > 0 && g_ptr_array_index(history->process_groups, bound - 1) == NULL)
        bound--;
    return bound;
}

/* Sets entry `process` of a lazily allocated table of strings. */
static void
string_table_set(GPtrArray **table, guint32 process, const char *text)
{
    KSIM_ASSERT(text != NULL);
    if (*table == NULL)
        *table = g_ptr_array_new_with_free_func(g_free);
    while ((*table)->len <= process)
        g_ptr_array_add(*table, NULL);
    g_free(g_ptr_array_index(*table, process));
    g_ptr_array_index(*table, process) = g_strdup(text);
}

static const char *
string_table_get(const GPtrArray *table, guint32 process)
{
    if (table == NULL || process >= table->len)
        return NULL;
    return g_ptr_array_index(table, process);
}

void
history_set_process_transactional_id(History *history, guint32 process, const char *id)
{
    string_table_set(&history->process_txn_ids, process, id);
    history->has_transactions = TRUE;
}

const char *
history_process_transactional_id(const History *history, guint32 process)
{
    return string_table_get(history->process_txn_ids, process);
}

void
history_set_process_read_committed(History *history, guint32 process, gboolean committed)
{
    if (history->process_read_committed == NULL) {
        if (!committed)
            return; /* the default: no table needed */
        history->process_read_committed = g_array_new(FALSE, TRUE, sizeof(guint8));
    }
    GArray *table = history->process_read_committed;
    if (table->len <= process)
        g_array_set_size(table, process + 1);
    g_array_index(table, guint8, process) = committed ? 1 : 0;
}

gboolean
history_process_read_committed(const History *history, guint32 process)
{
    const GArray *table = history->process_read_committed;
    return table != NULL && process < table->len && g_array_index(table, guint8, process) != 0;
}

void
history_set_process_pipeline(History *history, guint32 process, const char *pipeline)
{
    string_table_set(&history->process_pipelines, process, pipeline);
    history->has_transactions = TRUE;
}

const char *
history_process_pipeline(const History *history, guint32 process)
{
    return string_table_get(history->process_pipelines, process);
}

guint32
history_process_pipeline_bound(const History *history)
{
    const GPtrArray *table = history->process_pipelines;
    if (table == NULL)
        return 0;
    guint32 bound = table->len;
    while (bound > 0 && g_ptr_array_index(table, bound - 1) == NULL)
        bound--;
    return bound;
}

gboolean
history_has_transactions(const History *history)
{
    return history->has_transactions;
}

static gint
gint32_cmp(gconstpointer a, gconstpointer b)
{
    gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
    return (x > y) - (x < y);
}

guint32
history_isr_intern(History *history, const gint32 *isr, guint n_isr)
{
    KSIM_ASSERT(n_isr <= HISTORY_ISR_MAX);
    if (n_isr == 0)
        return 0;
    gint32 sorted[HISTORY_ISR_MAX];
    memcpy(sorted, isr, sizeof(gint32) * n_isr);
    qsort(sorted, n_isr, sizeof(gint32), gint32_cmp);
    for (guint i = 0; i < n_isr; i++)
        KSIM_ASSERT(sorted[i] >= 0 && (i == 0 || sorted[i] > sorted[i - 1]));
    g_autoptr(GBytes) key = g_bytes_new(sorted, sizeof(gint32) * n_isr);
    gpointer found = g_hash_table_lookup(history->isr_ids, key);
    if (found != NULL)
        return GPOINTER_TO_UINT(found) - 1;
    guint32 id = history->isr_starts->len - 1;
    KSIM_ASSERT(id < G_MAXUINT32 - 1);
    g_array_append_vals(history->isr_members, sorted, n_isr);
    guint32 end = history->isr_members->len;
    g_array_append_val(history->isr_starts, end);
    g_hash_table_insert(history->isr_ids, g_bytes_ref(key), GUINT_TO_POINTER(id + 1));
    return id;
}

guint
history_isr_members(const History *history, guint32 isr, const gint32 **members)
{
    KSIM_ASSERT(isr + 1 < history->isr_starts->len);
    guint32 start = g_array_index(history->isr_starts, guint32, isr);
    guint32 end = g_array_index(history->isr_starts, guint32, isr + 1);
    *members = end > start ? &g_array_index(history->isr_members, gint32, start) : NULL;
    return end - start;
}

gboolean
history_isr_contains(const History *history, guint32 isr, gint32 broker_id)
{
    const gint32 *members;
    guint n = history_isr_members(history, isr, &members);
    for (guint i = 0; i < n; i++) {
        if (members[i] == broker_id)
            return TRUE;
    }
    return FALSE;
}

/* The busy series of `broker`, made on its first request. */
static HistoryBusy *
busy_of(History *history, gint32 broker, guint16 io_threads)
{
    guint at = 0;
    while (at < history->busy->len &&
           ((HistoryBusy *)g_ptr_array_index(history->busy, at))->broker < broker)
        at++;
    if (at < history->busy->len) {
        HistoryBusy *found = g_ptr_array_index(history->busy, at);
        if (found->broker == broker) {
            /* A broker keeps its num.io.threads for the run. */
            KSIM_ASSERT(found->io_threads == io_threads);
            return found;
        }
    }
    HistoryBusy *busy = g_new0(HistoryBusy, 1);
    busy->broker = broker;
    busy->io_threads = io_threads;
    busy->bin_ns = HISTORY_BUSY_BIN_NS;
    busy->bins = g_array_new(FALSE, TRUE, sizeof(gint64));
    g_ptr_array_insert(history->busy, (gint)at, busy);
    return busy;
}

/* Ten bins become one until `end_ns` falls within HISTORY_BUSY_BINS_MAX. */
static void
busy_coarsen(HistoryBusy *busy, gint64 end_ns)
{
    while ((end_ns - 1) / busy->bin_ns >= (gint64)HISTORY_BUSY_BINS_MAX) {
        guint merged = (busy->bins->len + 9) / 10;
        for (guint m = 0; m < merged; m++) {
            gint64 sum = 0;
            for (guint k = m * 10; k < MIN(m * 10 + 10, busy->bins->len); k++)
                sum += g_array_index(busy->bins, gint64, k);
            g_array_index(busy->bins, gint64, m) = sum;
        }
        g_array_set_size(busy->bins, merged);
        KSIM_ASSERT(busy->bin_ns <= G_MAXINT64 / 10);
        busy->bin_ns *= 10;
    }
}

/* Adds the interval [start_ns, end_ns) of one thread's time to `busy`. */
static void
busy_add(HistoryBusy *busy, gint64 start_ns, gint64 end_ns)
{
    start_ns = MAX(start_ns, 0);
    if (end_ns <= start_ns)
        return;
    busy_coarsen(busy, end_ns);
    guint last = (guint)((end_ns - 1) / busy->bin_ns);
    if (busy->bins->len <= last)
        g_array_set_size(busy->bins, last + 1);
    for (guint b = (guint)(start_ns / busy->bin_ns); b <= last; b++) {
        gint64 lo = (gint64)b * busy->bin_ns;
        gint64 overlap = MIN(lo + busy->bin_ns, end_ns) - MAX(lo, start_ns);
        g_array_index(busy->bins, gint64, b) += overlap;
    }
}

void
history_request(History *history, const HistoryRequest *request)
{
    if (request->kind == HISTORY_REQUEST_PRODUCE)
        g_array_append_val(history->requests, *request);
    if (request->io_threads > 0 && request->local_ns > 0) {
        gint64 start_ns =
            request->time_ns + MAX(request->read_ns, 0) + MAX(request->queue_ns, 0);
        busy_add(busy_of(history, request->broker, request->io_threads), start_ns,
                 start_ns + request->local_ns);
    }
}

guint
history_busy_count(const History *history)
{
    return history->busy->len;
}

const HistoryBusy *
history_busy(const History *history, guint i)
{
    KSIM_ASSERT(i < history->busy->len);
    return g_ptr_array_index(history->busy, i);
}

void
history_metric(History *history, gint64 time_ns, HistoryMetricKind kind, gint32 node,
               guint32 count, gint64 value)
{
    HistoryMetric metric = {time_ns, value, node, count, kind};
    g_array_append_val(history->metrics, metric);
}

const GArray *
history_metrics(const History *history)
{
    return history->metrics;
}

void
history_set_topic_min_isr(History *history, guint16 topic, gint32 min_isr)
{
    KSIM_ASSERT(topic < history->topic_names->len);
    if (history->topic_min_isr->len <= topic)
        g_array_set_size(history->topic_min_isr, topic + 1u);
    g_array_index(history->topic_min_isr, gint32, topic) = min_isr;
}

gint32
history_topic_min_isr(const History *history, guint16 topic)
{
    return topic < history->topic_min_isr->len
               ? g_array_index(history->topic_min_isr, gint32, topic)
               : 0;
}

gint64
history_request_total_ns(const HistoryRequest *request)
{
    return MAX(request->read_ns, 0) + MAX(request->queue_ns, 0) + MAX(request->local_ns, 0) +
           MAX(request->remote_ns, 0) + MAX(request->send_ns, 0);
}

const GArray *
history_requests(const History *history)
{
    return history->requests;
}
