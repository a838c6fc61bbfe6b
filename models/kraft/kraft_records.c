/*
 * kraft_records: the record store and the metadata image (kraft_records.h).
 *
 * The image keeps brokers in an array sorted by id and partitions in an
 * array sorted by (topic id, partition), found by binary search: every walk
 * over them is in that order, so nothing a replay decides depends on a hash
 * table's order.
 */
#include "kraft_records.h"

#include "sim_assert.h"

#include <string.h>
#include <xxhash.h>

struct KraftRecordStore {
    GArray *records;     /* KraftRecord; id i is element i - 1 */
    GPtrArray *topics;   /* char *, by topic id */
    GHashTable *topic_ids; /* name -> id + 1; looked up only */
    /* Snapshot contents: images by id (from 1), each immutable once added,
     * and the id of the image of each end offset (looked up only). */
    GPtrArray *images;     /* KraftImage * (owned) */
    GHashTable *image_ids; /* end offset (gint64 *) -> id */
    /* Images' partition chunks interned by content (kraft_image_intern),
     * held by the images, not by the table; looked up only. */
    GHashTable *chunks;
};

static guint chunk_hash(gconstpointer key);
static gboolean chunk_equal(gconstpointer a, gconstpointer b);

KraftRecordStore *
kraft_record_store_new(void)
{
    KraftRecordStore *store = g_new0(KraftRecordStore, 1);
    store->records = g_array_new(FALSE, FALSE, sizeof(KraftRecord));
    store->topics = g_ptr_array_new(); /* interned names (ktopic_intern) */
    store->topic_ids = g_hash_table_new(g_str_hash, g_str_equal);
    store->images = g_ptr_array_new_with_free_func((GDestroyNotify)kraft_image_free);
    store->image_ids = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    store->chunks = g_hash_table_new(chunk_hash, chunk_equal);
    return store;
}

void
kraft_record_store_free(KraftRecordStore *store)
{
    if (store == NULL)
        return;
    g_array_free(store->records, TRUE);
    g_hash_table_destroy(store->topic_ids);
    g_ptr_array_free(store->topics, TRUE);
    g_hash_table_destroy(store->image_ids);
    g_ptr_array_free(store->images, TRUE);
    /* Every image holding an interned chunk is gone (they do not outlive
     * the store), so the table is empty. */
    KSIM_ASSERT(g_hash_table_size(store->chunks) == 0);
    g_hash_table_destroy(store->chunks);
    g_free(store);
}

guint64
kraft_record_store_add(KraftRecordStore *store, const KraftRecord *record)
{
    KSIM_ASSERT(record->type >= KRAFT_REC_FIRST && record->type <= KRAFT_REC_LAST);
    KSIM_ASSERT(record->n_replicas <= KAFKA_REPLICAS_MAX && record->n_isr <= KAFKA_REPLICAS_MAX);
    g_array_append_val(store->records, *record);
    return store->records->len;
}

const KraftRecord *
kraft_record_store_get(const KraftRecordStore *store, guint64 id)
{
    if (id == 0 || id > store->records->len)
        return NULL;
    return &g_array_index(store->records, KraftRecord, id - 1);
}

guint32
kraft_record_store_topic(KraftRecordStore *store, const char *name)
{
    gint64 found = kraft_record_store_find_topic(store, name);
    if (found >= 0)
        return (guint32)found;
    /* Interned: the brokers name partitions with it (ktp_set) at every
     * metadata change they publish, and an interned name is its own. */
    const char *interned = ktopic_intern(name);
    g_ptr_array_add(store->topics, (gpointer)interned);
    g_hash_table_insert(store->topic_ids, (gpointer)interned,
                        GUINT_TO_POINTER(store->topics->len));
    return store->topics->len - 1;
}

gint64
kraft_record_store_find_topic(const KraftRecordStore *store, const char *name)
{
    gpointer found = g_hash_table_lookup(store->topic_ids, name);
    return found == NULL ? -1 : (gint64)GPOINTER_TO_UINT(found) - 1;
}

const char *
kraft_record_store_topic_name(const KraftRecordStore *store, guint32 topic)
{
    KSIM_ASSERT(topic < store->topics->len);
    return g_ptr_array_index(store->topics, topic);
}

/* Sizes as their JSON schemas frame them, roughly: a header, a broker's
 * id, epoch and endpoint, a topic's name and id, a partition's arrays. */
static guint32
record_size_bytes(const KraftRecord *record)
{
    switch (record->type) {
    case KRAFT_REC_REGISTER_BROKER:
        return 96;
    case KRAFT_REC_FENCE_BROKER:
    case KRAFT_REC_UNFENCE_BROKER:
    case KRAFT_REC_BROKER_REGISTRATION_CHANGE:
        return 24;
    case KRAFT_REC_TOPIC:
        return 48;
    case KRAFT_REC_PRODUCER_IDS:
        return 24;
    case KRAFT_REC_PARTITION:
    case KRAFT_REC_PARTITION_CHANGE:
        return 32 + 4u * (record->n_replicas + record->n_isr + record->n_elr +
                          record->n_last_known_elr);
    }
    return 16;
}

PlogRecord
kraft_record_to_plog(const KraftRecordStore *store, guint64 id)
{
    const KraftRecord *record = kraft_record_store_get(store, id);
    KSIM_ASSERT(record != NULL);
    PlogRecord r = {(guint64)record->type, id, record_size_bytes(record)};
    return r;
}

const char *
kraft_record_type_name(KraftRecordType type)
{
    switch (type) {
    case KRAFT_REC_REGISTER_BROKER:
        return "RegisterBroker";
    case KRAFT_REC_FENCE_BROKER:
        return "FenceBroker";
    case KRAFT_REC_UNFENCE_BROKER:
        return "UnfenceBroker";
    case KRAFT_REC_TOPIC:
        return "Topic";
    case KRAFT_REC_PARTITION:
        return "Partition";
    case KRAFT_REC_PARTITION_CHANGE:
        return "PartitionChange";
    case KRAFT_REC_PRODUCER_IDS:
        return "ProducerIds";
    case KRAFT_REC_BROKER_REGISTRATION_CHANGE:
        return "BrokerRegistrationChange";
    }
    return "?";
}

/* ---- the image ---- */

typedef struct {
    guint32 topic;
    gint32 partitions;
    gboolean unclean;
    gint32 min_isr;
} TopicEntry;

/* The partitions are kept in chunks of up to PARTITION_CHUNK, in (topic,
 * partition) order across the chunks. A chunk is shared, copy-on-write,
 * by every image copied or assigned from another: a broker's published
 * image and the one it replays into, the record store's snapshots and the
 * controllers' images hold one copy of what did not change between them,
 * and a delta between two images skips the chunks they share. */
#define PARTITION_CHUNK 64

typedef struct {
    guint refs;
    guint len;
    /* The record store's table of interned chunks when this one is in it
     * (kraft_image_intern; the table does not hold a reference), else
     * NULL. An interned chunk is never changed: it is copied first. */
    GHashTable *interned_in;
    KraftPartition items[PARTITION_CHUNK];
} PartitionChunk;

struct KraftImage {
    GArray *brokers;    /* KraftBroker, sorted by id */
    GArray *topics;     /* TopicEntry, sorted by topic id */
    GPtrArray *chunks;  /* PartitionChunk* (a reference each), see PARTITION_CHUNK */
    guint n_partitions;
    gint64 next_producer_id;
    gint64 end_offset;
};

static PartitionChunk *
chunk_ref(PartitionChunk *chunk)
{
    chunk->refs++;
    return chunk;
}

static void
chunk_unref(gpointer data)
{
    PartitionChunk *chunk = data;
    KSIM_ASSERT(chunk->refs > 0);
    if (--chunk->refs > 0)
        return;
    if (chunk->interned_in != NULL)
        g_hash_table_remove(chunk->interned_in, chunk);
    g_free(chunk);
}

static PartitionChunk *
chunk_new(void)
{
    PartitionChunk *chunk = g_new(PartitionChunk, 1);
    chunk->refs = 1;
    chunk->len = 0;
    chunk->interned_in = NULL;
    return chunk;
}

/* Chunks are equal when their partitions are, byte for byte (images that
 * replayed the same records hold the same bytes). */
static guint
chunk_hash(gconstpointer key)
{
    const PartitionChunk *chunk = key;
    return (guint)XXH3_64bits_withSeed(chunk->items, sizeof(KraftPartition) * chunk->len,
                                       chunk->len);
}

static gboolean
chunk_equal(gconstpointer a, gconstpointer b)
{
    const PartitionChunk *x = a, *y = b;
    return x->len == y->len && memcmp(x->items, y->items, sizeof(KraftPartition) * x->len) == 0;
}

static GPtrArray *
chunks_new(void)
{
    return g_ptr_array_new_with_free_func(chunk_unref);
}

/* `to`'s partitions become `from`'s, sharing its chunks. */
static void
chunks_share(KraftImage *to, const KraftImage *from)
{
    g_ptr_array_set_size(to->chunks, 0);
    for (guint i = 0; i < from->chunks->len; i++)
        g_ptr_array_add(to->chunks, chunk_ref(g_ptr_array_index(from->chunks, i)));
    to->n_partitions = from->n_partitions;
}

KraftImage *
kraft_image_new(void)
{
    KraftImage *image = g_new0(KraftImage, 1);
    image->brokers = g_array_new(FALSE, FALSE, sizeof(KraftBroker));
    image->topics = g_array_new(FALSE, FALSE, sizeof(TopicEntry));
    image->chunks = chunks_new();
    return image;
}

void
kraft_image_free(KraftImage *image)
{
    if (image == NULL)
        return;
    g_array_free(image->brokers, TRUE);
    g_array_free(image->topics, TRUE);
    g_ptr_array_free(image->chunks, TRUE);
    g_free(image);
}

void
kraft_image_assign(KraftImage *image, const KraftImage *from)
{
    KSIM_ASSERT(image != from);
    g_array_set_size(image->brokers, 0);
    g_array_append_vals(image->brokers, from->brokers->data, from->brokers->len);
    g_array_set_size(image->topics, 0);
    g_array_append_vals(image->topics, from->topics->data, from->topics->len);
    chunks_share(image, from);
    image->end_offset = from->end_offset;
    image->next_producer_id = from->next_producer_id;
}

gint64
kraft_image_size_bytes(const KraftImage *image)
{
    gint64 bytes = 24; /* ProducerIdsRecord */
    bytes += 96 * (gint64)image->brokers->len;
    bytes += 48 * (gint64)image->topics->len;
    for (guint c = 0; c < image->chunks->len; c++) {
        const PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
        for (guint i = 0; i < chunk->len; i++) {
            const KraftPartition *p = &chunk->items[i];
            bytes += 64 + 20 * (gint64)p->n_replicas + 4 * (gint64)(p->n_isr + p->n_elr);
        }
    }
    return bytes;
}

guint64
kraft_record_store_add_image(KraftRecordStore *store, const KraftImage *image)
{
    gint64 end_offset = kraft_image_end_offset(image);
    gpointer id = g_hash_table_lookup(store->image_ids, &end_offset);
    if (id != NULL)
        return (guint64)GPOINTER_TO_SIZE(id);
    g_ptr_array_add(store->images, kraft_image_copy(image));
    guint64 new_id = store->images->len;
    g_hash_table_insert(store->image_ids, g_memdup2(&end_offset, sizeof end_offset),
                        GSIZE_TO_POINTER((gsize)new_id));
    return new_id;
}

const KraftImage *
kraft_record_store_image(const KraftRecordStore *store, guint64 id)
{
    if (id == 0 || id > store->images->len)
        return NULL;
    return g_ptr_array_index(store->images, id - 1);
}

KraftImage *
kraft_image_copy(const KraftImage *image)
{
    KraftImage *copy = g_new0(KraftImage, 1);
    copy->brokers = g_array_copy(image->brokers);
    copy->topics = g_array_copy(image->topics);
    copy->chunks = chunks_new();
    chunks_share(copy, image);
    copy->end_offset = image->end_offset;
    copy->next_producer_id = image->next_producer_id;
    return copy;
}

/* The index of the first element not below `key` in a sorted array, by a
 * comparison of an element with the key. */
static guint
lower_bound(const GArray *array, gconstpointer key, GCompareFunc compare)
{
    guint lo = 0, hi = array->len;
    guint size = g_array_get_element_size((GArray *)array);
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (compare(array->data + (gsize)mid * size, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static gint
broker_compare(gconstpointer element, gconstpointer key)
{
    gint32 a = ((const KraftBroker *)element)->id, b = *(const gint32 *)key;
    return (a > b) - (a < b);
}

static gint
topic_compare(gconstpointer element, gconstpointer key)
{
    guint32 a = ((const TopicEntry *)element)->topic, b = *(const guint32 *)key;
    return (a > b) - (a < b);
}

static KraftBroker *
broker_find(const KraftImage *image, gint32 id)
{
    guint i = lower_bound(image->brokers, &id, broker_compare);
    if (i < image->brokers->len && g_array_index(image->brokers, KraftBroker, i).id == id)
        return &g_array_index(image->brokers, KraftBroker, i);
    return NULL;
}

static gint
partition_key_compare(const KraftPartition *p, guint32 topic, gint32 partition)
{
    if (p->topic != topic)
        return p->topic < topic ? -1 : 1;
    return (p->partition > partition) - (p->partition < partition);
}

/* Where (topic, partition) is or would go: the chunk (image->chunks->len
 * when there is none) and the index in it. */
static void
partition_locate(const KraftImage *image, guint32 topic, gint32 partition, guint *chunk_index,
                 guint *item_index)
{
    /* The first chunk whose last partition is not below the key, else the
     * last chunk (the key goes at its end). */
    guint lo = 0, hi = image->chunks->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const PartitionChunk *chunk = g_ptr_array_index(image->chunks, mid);
        if (partition_key_compare(&chunk->items[chunk->len - 1], topic, partition) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == image->chunks->len && lo > 0)
        lo--;
    *chunk_index = lo;
    *item_index = 0;
    if (lo == image->chunks->len)
        return;
    const PartitionChunk *chunk = g_ptr_array_index(image->chunks, lo);
    guint a = 0, b = chunk->len;
    while (a < b) {
        guint mid = a + (b - a) / 2;
        if (partition_key_compare(&chunk->items[mid], topic, partition) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    *item_index = a;
}

static KraftPartition *
partition_find(const KraftImage *image, guint32 topic, gint32 partition)
{
    guint c, i;
    partition_locate(image, topic, partition, &c, &i);
    if (c == image->chunks->len)
        return NULL;
    PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
    if (i < chunk->len && partition_key_compare(&chunk->items[i], topic, partition) == 0)
        return &chunk->items[i];
    return NULL;
}

/* The image's own copy of chunk `c`, copied first if another image shares
 * it. (transfer none) */
static PartitionChunk *
chunk_writable(KraftImage *image, guint c)
{
    PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
    if (chunk->refs == 1 && chunk->interned_in == NULL)
        return chunk;
    PartitionChunk *own = g_memdup2(chunk, sizeof *chunk);
    own->refs = 1;
    own->interned_in = NULL;
    image->chunks->pdata[c] = own;
    chunk_unref(chunk);
    return own;
}

/* partition_find for a change: the partition in the image's own chunk. */
static KraftPartition *
partition_find_writable(KraftImage *image, guint32 topic, gint32 partition)
{
    guint c, i;
    partition_locate(image, topic, partition, &c, &i);
    if (c == image->chunks->len)
        return NULL;
    const PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
    if (i >= chunk->len || partition_key_compare(&chunk->items[i], topic, partition) != 0)
        return NULL;
    return &chunk_writable(image, c)->items[i];
}

/* Inserts `p`, which the image does not have, in its place. */
static void
partition_insert(KraftImage *image, const KraftPartition *p)
{
    guint c, i;
    partition_locate(image, p->topic, p->partition, &c, &i);
    if (c == image->chunks->len)
        g_ptr_array_add(image->chunks, chunk_new());
    const PartitionChunk *at = g_ptr_array_index(image->chunks, c);
    if (at->len == PARTITION_CHUNK && i == at->len) {
        /* Past the end of a full chunk (partitions are mostly created in
         * order): a new chunk after it, so that chunks fill up. */
        g_ptr_array_insert(image->chunks, (gint)c + 1, chunk_new());
        c++;
        i = 0;
    }
    PartitionChunk *chunk = chunk_writable(image, c);
    if (chunk->len == PARTITION_CHUNK) {
        /* Full: its upper half moves to a new chunk after it. */
        guint half = PARTITION_CHUNK / 2;
        PartitionChunk *upper = chunk_new();
        upper->len = PARTITION_CHUNK - half;
        memcpy(upper->items, &chunk->items[half], sizeof(KraftPartition) * upper->len);
        chunk->len = half;
        g_ptr_array_insert(image->chunks, (gint)c + 1, upper);
        if (i > half) {
            chunk = upper;
            i -= half;
        }
    }
    memmove(&chunk->items[i + 1], &chunk->items[i], sizeof(KraftPartition) * (chunk->len - i));
    chunk->items[i] = *p;
    chunk->len++;
    image->n_partitions++;
}

static void
replay_register(KraftImage *image, const KraftRecord *record, gint64 offset)
{
    KraftBroker broker = {record->broker_id, record->incarnation, record->node, offset, TRUE,
                          FALSE};
    KraftBroker *known = broker_find(image, record->broker_id);
    if (known != NULL) {
        *known = broker; /* a new incarnation replaces the old registration */
        return;
    }
    guint i = lower_bound(image->brokers, &record->broker_id, broker_compare);
    g_array_insert_val(image->brokers, i, broker);
}

static void
replay_fencing(KraftImage *image, const KraftRecord *record, gboolean fenced)
{
    KraftBroker *broker = broker_find(image, record->broker_id);
    /* ClusterControlManager.replay checks the epoch: a record for an older
     * registration changes nothing. */
    if (broker != NULL && broker->epoch == record->broker_epoch)
        broker->fenced = fenced;
}

static void
replay_registration_change(KraftImage *image, const KraftRecord *record)
{
    KraftBroker *broker = broker_find(image, record->broker_id);
    if (broker != NULL && broker->epoch == record->broker_epoch)
        broker->in_controlled_shutdown = record->in_controlled_shutdown;
}

static void
replay_topic(KraftImage *image, const KraftRecord *record)
{
    guint i = lower_bound(image->topics, &record->topic, topic_compare);
    if (i < image->topics->len && g_array_index(image->topics, TopicEntry, i).topic == record->topic)
        return;
    TopicEntry entry = {record->topic, record->partitions, record->unclean,
                        MAX(record->min_isr, 1)};
    g_array_insert_val(image->topics, i, entry);
}

static void
replay_partition(KraftImage *image, const KraftRecord *record, gint64 offset)
{
    /* Every byte zeroed, padding too: interned chunks compare bytes. */
    KraftPartition p;
    memset(&p, 0, sizeof p);
    p.topic = record->topic;
    p.partition = record->partition;
    p.n_replicas = record->n_replicas;
    memcpy(p.replicas, record->replicas, sizeof(gint32) * record->n_replicas);
    p.n_isr = record->n_isr;
    memcpy(p.isr, record->isr, sizeof(gint32) * record->n_isr);
    p.n_elr = record->n_elr;
    memcpy(p.elr, record->elr, sizeof(gint32) * record->n_elr);
    p.n_last_known_elr = record->n_last_known_elr;
    memcpy(p.last_known_elr, record->last_known_elr, sizeof(gint32) * record->n_last_known_elr);
    p.leader = record->leader;
    p.last_change_offset = offset;
    KraftPartition *known = partition_find_writable(image, record->topic, record->partition);
    if (known != NULL) {
        *known = p;
        return;
    }
    partition_insert(image, &p);
    /* A partition CreatePartitions added: the topic has one more (Kafka's
     * TopicImage counts its partitions). */
    guint t = lower_bound(image->topics, &record->topic, topic_compare);
    if (t < image->topics->len && g_array_index(image->topics, TopicEntry, t).topic == record->topic) {
        TopicEntry *entry = &g_array_index(image->topics, TopicEntry, t);
        entry->partitions = MAX(entry->partitions, record->partition + 1);
    }
}

/* PartitionRegistration.merge. */
static void
replay_partition_change(KraftImage *image, const KraftRecord *record, gint64 offset)
{
    KraftPartition *p = partition_find_writable(image, record->topic, record->partition);
    if (p == NULL)
        return;
    if (record->elr_set) {
        p->n_elr = record->n_elr;
        memcpy(p->elr, record->elr, sizeof(gint32) * record->n_elr);
    }
    if (record->last_known_elr_set) {
        p->n_last_known_elr = record->n_last_known_elr;
        memcpy(p->last_known_elr, record->last_known_elr,
               sizeof(gint32) * record->n_last_known_elr);
    }
    if (record->isr_set) {
        p->n_isr = record->n_isr;
        memcpy(p->isr, record->isr, sizeof(gint32) * record->n_isr);
    }
    if (record->leader != KRAFT_NO_LEADER_CHANGE) {
        p->leader = record->leader;
        p->leader_epoch++;
    }
    p->partition_epoch++;
    p->last_change_offset = offset;
}

void
kraft_image_replay(KraftImage *image, const KraftRecord *record, gint64 offset)
{
    KSIM_ASSERT(offset >= image->end_offset);
    switch (record->type) {
    case KRAFT_REC_REGISTER_BROKER:
        replay_register(image, record, offset);
        break;
    case KRAFT_REC_FENCE_BROKER:
        replay_fencing(image, record, TRUE);
        break;
    case KRAFT_REC_UNFENCE_BROKER:
        replay_fencing(image, record, FALSE);
        break;
    case KRAFT_REC_BROKER_REGISTRATION_CHANGE:
        replay_registration_change(image, record);
        break;
    case KRAFT_REC_TOPIC:
        replay_topic(image, record);
        break;
    case KRAFT_REC_PARTITION:
        replay_partition(image, record, offset);
        break;
    case KRAFT_REC_PARTITION_CHANGE:
        replay_partition_change(image, record, offset);
        break;
    case KRAFT_REC_PRODUCER_IDS:
        image->next_producer_id = MAX(image->next_producer_id, record->next_producer_id);
        break;
    }
    image->end_offset = offset + 1;
}

void
kraft_image_replay_batch(KraftImage *image, const KraftRecordStore *store,
                         const PlogBatch *batch, gint64 end)
{
    const PlogRecord *records = (const PlogRecord *)batch->records->data;
    for (guint i = 0; i < batch->records->len; i++) {
        gint64 offset = batch->base_offset + i;
        if (offset >= end)
            break;
        if (offset < image->end_offset)
            continue;
        const KraftRecord *record = NULL;
        if (records[i].key >= KRAFT_REC_FIRST && records[i].key <= KRAFT_REC_LAST)
            record = kraft_record_store_get(store, records[i].value);
        if (record != NULL)
            kraft_image_replay(image, record, offset);
        else
            image->end_offset = offset + 1;
    }
}

gint64
kraft_image_next_producer_id(const KraftImage *image)
{
    return image->next_producer_id;
}

gint64
kraft_image_end_offset(const KraftImage *image)
{
    return image->end_offset;
}

const KraftBroker *
kraft_image_broker(const KraftImage *image, gint32 id)
{
    return broker_find(image, id);
}

const KraftPartition *
kraft_image_partition(const KraftImage *image, guint32 topic, gint32 partition)
{
    return partition_find(image, topic, partition);
}

static const TopicEntry *
topic_entry(const KraftImage *image, guint32 topic)
{
    guint i = lower_bound(image->topics, &topic, topic_compare);
    if (i < image->topics->len && g_array_index(image->topics, TopicEntry, i).topic == topic)
        return &g_array_index(image->topics, TopicEntry, i);
    return NULL;
}

gint32
kraft_image_topic_partitions(const KraftImage *image, guint32 topic)
{
    const TopicEntry *entry = topic_entry(image, topic);
    return entry != NULL ? entry->partitions : 0;
}

gboolean
kraft_image_topic_unclean(const KraftImage *image, guint32 topic)
{
    const TopicEntry *entry = topic_entry(image, topic);
    return entry != NULL && entry->unclean;
}

gint32
kraft_image_topic_min_isr(const KraftImage *image, guint32 topic)
{
    const TopicEntry *entry = topic_entry(image, topic);
    return entry != NULL ? entry->min_isr : 1;
}

const GArray *
kraft_image_brokers(const KraftImage *image)
{
    return image->brokers;
}

GPtrArray *
kraft_image_partitions(const KraftImage *image)
{
    GPtrArray *all = g_ptr_array_sized_new(image->n_partitions);
    for (guint c = 0; c < image->chunks->len; c++) {
        PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
        for (guint i = 0; i < chunk->len; i++)
            g_ptr_array_add(all, &chunk->items[i]);
    }
    return all;
}

void
kraft_image_intern(KraftImage *image, KraftRecordStore *store)
{
    for (guint c = 0; c < image->chunks->len; c++) {
        PartitionChunk *chunk = g_ptr_array_index(image->chunks, c);
        if (chunk->interned_in != NULL)
            continue;
        PartitionChunk *equal = g_hash_table_lookup(store->chunks, chunk);
        if (equal != NULL) {
            image->chunks->pdata[c] = chunk_ref(equal);
            chunk_unref(chunk);
        } else {
            g_hash_table_add(store->chunks, chunk);
            chunk->interned_in = store->chunks;
        }
    }
}

guint
kraft_record_store_interned_chunks(const KraftRecordStore *store)
{
    return g_hash_table_size(store->chunks);
}

guint
kraft_image_chunk_count(const KraftImage *image)
{
    return image->chunks->len;
}

GPtrArray *
kraft_image_partitions_not_shared(const KraftImage *before, const KraftImage *after)
{
    if (before == NULL)
        return kraft_image_partitions(after);
    /* Looked up only: the walk is in `after`'s order. */
    g_autoptr(GHashTable) shared = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint c = 0; c < before->chunks->len; c++)
        g_hash_table_add(shared, g_ptr_array_index(before->chunks, c));
    GPtrArray *out = g_ptr_array_new();
    for (guint c = 0; c < after->chunks->len; c++) {
        PartitionChunk *chunk = g_ptr_array_index(after->chunks, c);
        if (g_hash_table_contains(shared, chunk))
            continue;
        for (guint i = 0; i < chunk->len; i++)
            g_ptr_array_add(out, &chunk->items[i]);
    }
    return out;
}

gboolean
kraft_image_broker_active(const KraftImage *image, gint32 id)
{
    const KraftBroker *broker = broker_find(image, id);
    return broker != NULL && !broker->fenced && !broker->in_controlled_shutdown;
}

gboolean
kraft_image_broker_unfenced(const KraftImage *image, gint32 id)
{
    const KraftBroker *broker = broker_find(image, id);
    return broker != NULL && !broker->fenced;
}

gboolean
kraft_ids_contain(const gint32 *ids, guint n, gint32 id)
{
    for (guint i = 0; i < n; i++)
        if (ids[i] == id)
            return TRUE;
    return FALSE;
}
