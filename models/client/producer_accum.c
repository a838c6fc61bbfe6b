/*
 * producer_accum: the producer's RecordAccumulator — per-partition queues of
 * batches, the buffer.memory pool, and Kafka's rules for when a batch is
 * ready to send.
 *
 * A batch's life:
 *
 *   open ──append (full, or a new batch behind it)──▶ ready by size
 *    │                                                   │
 *    └──linger.ms elapsed──▶ ready by time ──────────────┤
 *                                                        ▼ drain (producer_sender.c)
 *   re-enqueued ◀──retriable error (producer_accum_reenqueue)── in flight
 *    │  (ready after retry.backoff.ms)                   │
 *    └──────────────────drain──────────────────────────▶ │ response, expiry, failure
 *                                                        ▼
 *                                          completed (producer_accum_release)
 *
 * Memory, as Kafka's BufferPool: a new batch takes max(batch.size, overhead +
 * its first record) bytes of buffer.memory; the bytes return when the batch
 * completes. Appends to an open batch with room take nothing.
 *
 * Invariants:
 *  1. buffer_used is the sum of buffer_bytes over live batches (queued or in
 *     flight) and never exceeds buffer.memory.
 *  2. records_queued is the number of records in live batches.
 *  3. Every batch in a partition's queue belongs to that partition and is not
 *     in flight; a closed batch was sent at least once; appends go only to
 *     the last batch, and only while it is open (producer_accum_has_room).
 *  4. With idempotence, the batches of a queue that hold a sequence come
 *     first, in ascending sequence order.
 *  5. `partitions` holds every partition of every topic, sorted by
 *     topic-partition.
 *  6. `heads` holds exactly the partitions whose queue holds a batch, each
 *     under its first batch's deadline.
 */
#include "producer_internal.h"

#include "sim_assert.h"

#include <string.h>

/* The most records a new batch reserves room for. */
#define RECORDS_RESERVED_MAX 4096u
/* Bounds the partitions of one topic a producer may write. */
#define PARTITIONS_PER_TOPIC_MAX PARTITIONER_PARTITIONS_MAX

struct ProducerAccum {
    gint64 batch_size;
    gint64 linger_ns;
    gint64 retry_backoff_ns;
    gint64 delivery_timeout_ns;
    gint64 buffer_memory;
    GHashTable *topics;    /* name -> ProducerTopic*; looked up only */
    GPtrArray *topic_list; /* ProducerTopic* (owned) */
    GPtrArray *partitions; /* ProducerPartition*, sorted by topic-partition */
    /* ProducerPartition* that hold batches, in index order (`listed`): a
     * partition joins as its queue gets a batch and leaves as the queue
     * empties (producer_accum_head_changed), so that the drain reads no
     * partition it need not look at. */
    GPtrArray *listed;
    /* ProducerPartition* with a queued batch, by the deadline of the first
     * (head_deadline_ns), then index: the sender's expiry, which looks at
     * each queue's first batch as Kafka's expiredBatches does, reads the due
     * ones and the earliest without a walk over every queue. */
    GTree *heads;
    gint64 buffer_used;
    guint64 records_queued;
};

static gint
head_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    const ProducerPartition *x = a;
    const ProducerPartition *y = b;
    if (x->head_deadline_ns != y->head_deadline_ns)
        return x->head_deadline_ns < y->head_deadline_ns ? -1 : 1;
    /* index_insert renumbers partitions but keeps their order. */
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

static void
batch_free(ProducerBatch *batch)
{
    plog_batch_free(batch->records);
    g_free(batch->open_records);
    g_array_free(batch->thunks, TRUE);
    g_free(batch);
}

static void
partition_free(gpointer data)
{
    ProducerPartition *partition = data;
    if (partition == NULL)
        return;
    ProducerBatch *batch;
    while ((batch = g_queue_pop_head(&partition->batches)) != NULL)
        batch_free(batch);
    g_free(partition);
}

static void
topic_free(gpointer data)
{
    ProducerTopic *topic = data;
    g_ptr_array_free(topic->partitions, TRUE);
    g_free(topic->name);
    g_free(topic);
}

ProducerAccum *
producer_accum_new(const ProducerConfig *config)
{
    KSIM_ASSERT(config->batch_size >= 0);
    KSIM_ASSERT(config->buffer_memory >= 0);
    ProducerAccum *accum = g_new0(ProducerAccum, 1);
    accum->batch_size = config->batch_size;
    accum->linger_ns = config->linger_ms * SIM_NS_PER_MS;
    accum->retry_backoff_ns = config->retry_backoff_ms * SIM_NS_PER_MS;
    accum->delivery_timeout_ns = config->delivery_timeout_ms * SIM_NS_PER_MS;
    accum->buffer_memory = config->buffer_memory;
    accum->topics = g_hash_table_new(g_str_hash, g_str_equal);
    accum->topic_list = g_ptr_array_new_with_free_func(topic_free);
    accum->partitions = g_ptr_array_new();
    accum->listed = g_ptr_array_new();
    accum->heads = g_tree_new_full(head_compare, NULL, NULL, NULL);
    return accum;
}

void
producer_accum_free(ProducerAccum *accum)
{
    if (accum == NULL)
        return;
    /* In-flight batches are owned by their flights, which the sender frees
     * first; what is left is queued. */
    g_tree_destroy(accum->heads); /* before the partitions it orders */
    g_ptr_array_free(accum->partitions, TRUE);
    g_ptr_array_free(accum->listed, TRUE);
    g_hash_table_destroy(accum->topics);
    g_ptr_array_free(accum->topic_list, TRUE);
    g_free(accum);
}

ProducerTopic *
producer_accum_topic(ProducerAccum *accum, const char *name, History *history)
{
    ProducerTopic *topic = g_hash_table_lookup(accum->topics, name);
    if (topic != NULL)
        return topic;
    KSIM_ASSERT(strlen(name) <= KAFKA_TOPIC_NAME_MAX);
    topic = g_new0(ProducerTopic, 1);
    topic->name = g_strdup(name);
    topic->history_topic = history_topic(history, name);
    topic->partitions = g_ptr_array_new_with_free_func(partition_free);
    topic->sticky_partition = -1;
    g_ptr_array_add(accum->topic_list, topic);
    g_hash_table_insert(accum->topics, topic->name, topic);
    return topic;
}

const GPtrArray *
producer_accum_topics(const ProducerAccum *accum)
{
    return accum->topic_list;
}

/* Inserts `partition` into the sorted index. */
static void
index_insert(ProducerAccum *accum, ProducerPartition *partition)
{
    guint lo = 0, hi = accum->partitions->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const ProducerPartition *other = g_ptr_array_index(accum->partitions, mid);
        if (ktp_compare(&other->tp, &partition->tp) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    g_ptr_array_insert(accum->partitions, (gint)lo, partition);
    for (guint i = lo; i < accum->partitions->len; i++)
        ((ProducerPartition *)g_ptr_array_index(accum->partitions, i))->index = i;
}

/* The first place in the listed partitions (in index order) whose index is
 * at least `index`. */
static guint
listed_lower_bound(const ProducerAccum *accum, guint index)
{
    guint lo = 0, hi = accum->listed->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const ProducerPartition *other = g_ptr_array_index(accum->listed, mid);
        if (other->index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* `partition` is about to hold a batch: it joins the list in its place. */
static void
list_queue(ProducerAccum *accum, ProducerPartition *partition)
{
    if (partition->listed)
        return;
    partition->listed = TRUE;
    g_ptr_array_insert(accum->listed, (gint)listed_lower_bound(accum, partition->index),
                       partition);
}

/* `partition`'s queue emptied: it leaves the list. */
static void
unlist_queue(ProducerAccum *accum, ProducerPartition *partition)
{
    if (!partition->listed)
        return;
    partition->listed = FALSE;
    guint at = listed_lower_bound(accum, partition->index);
    KSIM_ASSERT(at < accum->listed->len && g_ptr_array_index(accum->listed, at) == partition);
    g_ptr_array_remove_index(accum->listed, at);
}

void
producer_accum_queued_partitions(const ProducerAccum *accum, guint start, GPtrArray *out)
{
    const GPtrArray *listed = accum->listed;
    guint kept = listed->len;
    if (kept == 0)
        return;
    /* listed[first..] then listed[..first], in two copies. */
    guint first = listed_lower_bound(accum, start) % kept;
    guint at = out->len;
    g_ptr_array_set_size(out, (gint)(at + kept));
    memcpy(&out->pdata[at], &listed->pdata[first], (kept - first) * sizeof(gpointer));
    memcpy(&out->pdata[at + kept - first], listed->pdata, first * sizeof(gpointer));
}

/* Kafka's ready() for the first batch: a retried batch backs off first,
 * whatever its size; a full one (or one with a batch behind it) is ready at
 * once, as is any when buffer.memory is exhausted; else after linger.ms. */
static void
ready_compute(const ProducerAccum *accum, const ProducerPartition *partition, gint64 *ready_ns,
              gint64 *ready_exhausted_ns)
{
    const ProducerBatch *head = partition->batches.head->data;
    if (head->retries > 0) {
        *ready_ns = *ready_exhausted_ns = head->last_attempt_ns + accum->retry_backoff_ns;
        return;
    }
    gboolean full = partition->batches.length > 1 || head->size_bytes >= accum->batch_size;
    *ready_exhausted_ns = head->last_attempt_ns;
    *ready_ns = full ? head->last_attempt_ns : head->last_attempt_ns + accum->linger_ns;
}

void
producer_accum_head_changed(ProducerAccum *accum, ProducerPartition *partition)
{
    const GList *first = partition->batches.head;
    const ProducerBatch *head = first != NULL ? first->data : NULL;
    if (head != NULL)
        ready_compute(accum, partition, &partition->ready_ns, &partition->ready_exhausted_ns);
    else
        unlist_queue(accum, partition);
    if (partition->head_indexed) {
        if (head != NULL && head->deadline_ns == partition->head_deadline_ns)
            return;
        gboolean removed = g_tree_remove(accum->heads, partition);
        KSIM_ASSERT(removed);
        partition->head_indexed = FALSE;
    }
    if (head == NULL)
        return;
    partition->head_deadline_ns = head->deadline_ns;
    partition->head_indexed = TRUE;
    g_tree_insert(accum->heads, partition, partition);
}

static gint
index_compare(gconstpointer a, gconstpointer b)
{
    const ProducerPartition *x = *(ProducerPartition *const *)a;
    const ProducerPartition *y = *(ProducerPartition *const *)b;
    return x->index < y->index ? -1 : x->index > y->index ? 1 : 0;
}

void
producer_accum_due_partitions(const ProducerAccum *accum, gint64 now_ns, GPtrArray *out)
{
    KSIM_ASSERT(out->len == 0);
    for (GTreeNode *node = g_tree_node_first(accum->heads); node != NULL;
         node = g_tree_node_next(node)) {
        ProducerPartition *partition = g_tree_node_key(node);
        if (partition->head_deadline_ns > now_ns)
            break;
        g_ptr_array_add(out, partition);
    }
    g_ptr_array_sort(out, index_compare);
}

gint64
producer_accum_earliest_head_deadline(const ProducerAccum *accum)
{
    GTreeNode *first = g_tree_node_first(accum->heads);
    if (first == NULL)
        return G_MAXINT64;
    return ((const ProducerPartition *)g_tree_node_key(first))->head_deadline_ns;
}

ProducerPartition *
producer_accum_partition(ProducerAccum *accum, ProducerTopic *topic, gint32 partition_number)
{
    KSIM_ASSERT(partition_number >= 0);
    KSIM_ASSERT((guint32)partition_number < PARTITIONS_PER_TOPIC_MAX);
    guint index = (guint)partition_number;
    if (index < topic->partitions->len && g_ptr_array_index(topic->partitions, index) != NULL)
        return g_ptr_array_index(topic->partitions, index);
    if (topic->partitions->len <= index)
        g_ptr_array_set_size(topic->partitions, (gint)index + 1);
    ProducerPartition *partition = g_new0(ProducerPartition, 1);
    ktp_set(&partition->tp, topic->name, partition_number);
    partition->history_topic = topic->history_topic;
    g_queue_init(&partition->batches);
    partition->sequence_producer_id = PLOG_NO_PRODUCER_ID;
    partition->sequence_producer_epoch = PLOG_NO_PRODUCER_EPOCH;
    partition->last_acked_sequence = -1;
    g_ptr_array_index(topic->partitions, index) = partition;
    index_insert(accum, partition);
    return partition;
}

const GPtrArray *
producer_accum_partitions(const ProducerAccum *accum)
{
    return accum->partitions;
}

gboolean
producer_accum_has_room(const ProducerAccum *accum, const ProducerPartition *partition,
                        guint32 size_bytes)
{
    /* GQueue's public fields: this runs for every record. */
    const GList *last = partition->batches.tail;
    const ProducerBatch *tail = last != NULL ? last->data : NULL;
    if (tail == NULL || tail->closed)
        return FALSE;
    KSIM_ASSERT(tail->open_count > 0);
    return tail->size_bytes + size_bytes <= accum->batch_size;
}

static gint64
allocation_bytes(const ProducerAccum *accum, guint32 size_bytes)
{
    return MAX(accum->batch_size, PLOG_BATCH_OVERHEAD_BYTES + (gint64)size_bytes);
}

gboolean
producer_accum_can_allocate(const ProducerAccum *accum, guint32 size_bytes)
{
    return accum->buffer_used + allocation_bytes(accum, size_bytes) <= accum->buffer_memory;
}

static ProducerBatch *
batch_new(ProducerAccum *accum, ProducerPartition *partition, guint32 size_bytes, gint64 now_ns)
{
    KSIM_ASSERT(producer_accum_can_allocate(accum, size_bytes));
    ProducerBatch *batch = g_new0(ProducerBatch, 1);
    batch->partition = partition;
    batch->records = plog_batch_new();
    /* Room for as many records as the partition's last batch held, at most
     * a full batch of records like the first, so appends to a busy
     * partition rarely grow the arrays while a partition that gets a record
     * now and then (most of a large cluster's) reserves one. */
    guint full =
        (guint)CLAMP(accum->batch_size / MAX((gint64)size_bytes, 1), 1, RECORDS_RESERVED_MAX);
    guint expected = CLAMP(partition->last_batch_records, 1, full);
    batch->open_records = g_new(PlogRecord, expected);
    batch->open_capacity = expected;
    batch->thunks = g_array_sized_new(FALSE, FALSE, sizeof(ProducerThunkRun), 1);
    batch->size_bytes = PLOG_BATCH_OVERHEAD_BYTES;
    batch->buffer_bytes = allocation_bytes(accum, size_bytes);
    batch->created_ns = now_ns;
    batch->deadline_ns = now_ns + accum->delivery_timeout_ns;
    batch->last_attempt_ns = now_ns;
    accum->buffer_used += batch->buffer_bytes;
    KSIM_ASSERT(accum->buffer_used <= accum->buffer_memory);
    return batch;
}

guint32
producer_batch_record_count(const ProducerBatch *batch)
{
    return (guint32)batch->records->record_count + batch->open_count;
}

void
producer_batch_close(ProducerBatch *batch)
{
    batch->closed = TRUE;
    batch->partition->last_batch_records = producer_batch_record_count(batch);
    if (batch->open_count == 0)
        return;
    plog_batch_add_records(batch->records, batch->open_records, batch->open_count);
    g_clear_pointer(&batch->open_records, g_free);
    batch->open_count = 0;
    batch->open_capacity = 0;
}

/* Extends the last run when the record continues it. */
static void
thunk_add(GArray *runs, const ProducerThunk *thunk)
{
    if (runs->len > 0) {
        ProducerThunkRun *last = &g_array_index(runs, ProducerThunkRun, runs->len - 1);
        if (last->first_op + last->count == thunk->op && last->send_cb == thunk->send_cb &&
            last->user_data == thunk->user_data) {
            last->count++;
            return;
        }
    }
    ProducerThunkRun run = {thunk->op, 1, thunk->send_cb, thunk->user_data};
    g_array_append_val(runs, run);
}

gboolean
producer_accum_append(ProducerAccum *accum, ProducerPartition *partition, gboolean room,
                      guint64 key, guint64 value, guint32 size_bytes, const ProducerThunk *thunk,
                      gint64 now_ns)
{
    KSIM_PARANOID_ASSERT(room == producer_accum_has_room(accum, partition, size_bytes));
    gboolean ready = FALSE;
    ProducerBatch *tail = partition->batches.tail != NULL ? partition->batches.tail->data : NULL;
    if (!room) {
        /* The batch ahead, if any, is now followed by another: it is full. */
        ready = tail != NULL;
        tail = batch_new(accum, partition, size_bytes, now_ns);
        list_queue(accum, partition);
        g_queue_push_tail(&partition->batches, tail);
        producer_accum_head_changed(accum, partition);
    }
    KSIM_ASSERT(!tail->closed);
    if (G_UNLIKELY(tail->open_count == tail->open_capacity)) {
        KSIM_ASSERT(tail->open_capacity < PLOG_BATCH_RECORDS_MAX);
        tail->open_capacity = MIN(tail->open_capacity * 2, PLOG_BATCH_RECORDS_MAX);
        tail->open_records = g_renew(PlogRecord, tail->open_records, tail->open_capacity);
    }
    tail->open_records[tail->open_count++] =
        (PlogRecord){.key = key, .value = value, .size_bytes = size_bytes};
    thunk_add(tail->thunks, thunk);
    tail->size_bytes += size_bytes;
    accum->records_queued++;
    /* An open first batch (never retried) that just filled is ready at
     * once; nothing else an append does moves its ready times. */
    if (partition->batches.head->data == tail && tail->size_bytes >= accum->batch_size)
        partition->ready_ns = tail->last_attempt_ns;
    return ready || tail->size_bytes >= accum->batch_size;
}

gint64
producer_accum_ready_ns(const ProducerPartition *partition, gboolean exhausted)
{
    /* Kept by producer_accum_head_changed and appends: the drain asks of
     * every queue on every pass, and this reads no batch. */
    if (partition->batches.head == NULL)
        return G_MAXINT64;
    return exhausted ? partition->ready_exhausted_ns : partition->ready_ns;
}

void
producer_accum_reenqueue(ProducerAccum *accum, ProducerBatch *batch, gint64 now_ns,
                         gboolean idempotent)
{
    KSIM_ASSERT(!batch->in_flight);
    KSIM_ASSERT(batch->closed);
    list_queue(accum, batch->partition);
    batch->retries++;
    batch->last_attempt_ns = now_ns;
    GQueue *queue = &batch->partition->batches;
    gint32 sequence = batch->records->base_sequence;
    if (!idempotent || sequence < 0) {
        g_queue_push_head(queue, batch);
        producer_accum_head_changed(accum, batch->partition);
        return;
    }
    /* Before the first batch without a sequence or with a larger one. */
    GList *link = queue->head;
    while (link != NULL) {
        const ProducerBatch *other = link->data;
        gint32 other_sequence = other->records->base_sequence;
        KSIM_ASSERT(other_sequence != sequence);
        if (other_sequence < 0 || other_sequence > sequence)
            break;
        link = link->next;
    }
    if (link == NULL)
        g_queue_push_tail(queue, batch);
    else
        g_queue_insert_before(queue, link, batch);
    producer_accum_head_changed(accum, batch->partition);
}

void
producer_accum_release(ProducerAccum *accum, ProducerBatch *batch)
{
    KSIM_ASSERT(!batch->in_flight);
    KSIM_ASSERT(accum->buffer_used >= batch->buffer_bytes);
    guint64 records = producer_batch_record_count(batch);
    KSIM_ASSERT(accum->records_queued >= records);
    accum->buffer_used -= batch->buffer_bytes;
    accum->records_queued -= records;
    batch_free(batch);
}

gint64
producer_accum_buffer_used(const ProducerAccum *accum)
{
    return accum->buffer_used;
}

guint64
producer_accum_records_queued(const ProducerAccum *accum)
{
    return accum->records_queued;
}

static void
check_queue(const ProducerPartition *partition, gboolean idempotent)
{
    gint32 last_sequence = -1;
    gboolean unsequenced_seen = FALSE;
    for (GList *l = partition->batches.head; l != NULL; l = l->next) {
        const ProducerBatch *batch = l->data;
        KSIM_ASSERT(batch->partition == partition);
        KSIM_ASSERT(!batch->in_flight);
        guint64 covered = 0;
        for (guint i = 0; i < batch->thunks->len; i++)
            covered += g_array_index(batch->thunks, ProducerThunkRun, i).count;
        KSIM_ASSERT(covered == producer_batch_record_count(batch));
        KSIM_ASSERT(batch->closed ? batch->open_count == 0
                                  : batch->records->record_count == 0);
        if (batch->closed)
            KSIM_ASSERT(batch->attempts > 0);
        if (!idempotent)
            continue;
        gint32 sequence = batch->records->base_sequence;
        if (sequence < 0) {
            unsequenced_seen = TRUE;
            continue;
        }
        KSIM_ASSERT(!unsequenced_seen);
        KSIM_ASSERT(sequence > last_sequence);
        last_sequence = sequence;
    }
}

void
producer_accum_check_invariants(const ProducerAccum *accum, gboolean idempotent)
{
    KSIM_ASSERT(accum->buffer_used >= 0);
    KSIM_ASSERT(accum->buffer_used <= accum->buffer_memory);
    KSIM_ASSERT(g_hash_table_size(accum->topics) == accum->topic_list->len);
    guint listed = 0;
    guint heads = 0;
    for (guint i = 0; i < accum->partitions->len; i++) {
        const ProducerPartition *partition = g_ptr_array_index(accum->partitions, i);
        if (i > 0) {
            const ProducerPartition *previous = g_ptr_array_index(accum->partitions, i - 1);
            KSIM_ASSERT(ktp_compare(&previous->tp, &partition->tp) < 0);
        }
        KSIM_ASSERT(partition->index == i);
        /* A partition that holds batches is listed, and indexed under its
         * first batch's deadline (invariant 6). */
        KSIM_ASSERT(partition->listed == (partition->batches.length > 0));
        if (partition->batches.length > 0) {
            const ProducerBatch *head = partition->batches.head->data;
            KSIM_ASSERT(partition->head_indexed);
            KSIM_ASSERT(partition->head_deadline_ns == head->deadline_ns);
            KSIM_ASSERT(g_tree_lookup(accum->heads, partition) == partition);
            heads++;
            gint64 ready_ns, ready_exhausted_ns;
            ready_compute(accum, partition, &ready_ns, &ready_exhausted_ns);
            KSIM_ASSERT(partition->ready_ns == ready_ns);
            KSIM_ASSERT(partition->ready_exhausted_ns == ready_exhausted_ns);
        } else {
            KSIM_ASSERT(!partition->head_indexed);
        }
        listed += partition->listed ? 1 : 0;
        check_queue(partition, idempotent);
    }
    KSIM_ASSERT((guint)g_tree_nnodes(accum->heads) == heads);
    /* The list holds each flagged partition once, in index order. */
    KSIM_ASSERT(listed == accum->listed->len);
    for (guint i = 0; i < accum->listed->len; i++) {
        const ProducerPartition *partition = g_ptr_array_index(accum->listed, i);
        KSIM_ASSERT(partition->listed);
        if (i > 0)
            KSIM_ASSERT(((const ProducerPartition *)g_ptr_array_index(accum->listed, i - 1))->index <
                        partition->index);
    }
}
