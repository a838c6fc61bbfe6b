/*
 * metadata_pool: one shared copy of each distinct partition state the
 * brokers' metadata caches hold (metadata_pool.h).
 */
#include "metadata_pool.h"

#include "sim_assert.h"

#include <string.h>
#include <xxhash.h>

/* A pooled state: the state first, so that a pointer to it is a pointer to
 * its entry. */
typedef struct {
    KPartitionState state; /* normalized (normalize): hashed and compared whole */
    MetadataPool *pool;
    guint refs;
} PoolEntry;

struct MetadataPool {
    GHashTable *entries; /* PoolEntry* (owned by their references), looked up only */
    guint refs;
};

/* `in` as its wire fields alone: every byte of `out` not one of them is
 * zero (the name's tail, the padding, the array slots past n). */
static void
normalize(const KPartitionState *in, KPartitionState *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->tp.topic, in->tp.topic, strnlen(in->tp.topic, sizeof out->tp.topic - 1));
    out->tp.partition = in->tp.partition;
    out->leader = in->leader;
    out->leader_epoch = in->leader_epoch;
    out->controller_epoch = in->controller_epoch;
    out->zk_version = in->zk_version;
    out->n_replicas = MIN(in->n_replicas, KAFKA_REPLICAS_MAX);
    out->n_isr = MIN(in->n_isr, KAFKA_REPLICAS_MAX);
    memcpy(out->replicas, in->replicas, sizeof(gint32) * out->n_replicas);
    memcpy(out->isr, in->isr, sizeof(gint32) * out->n_isr);
}

static guint
entry_hash(gconstpointer key)
{
    return (guint)XXH3_64bits(key, sizeof(KPartitionState));
}

static gboolean
entry_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(KPartitionState)) == 0;
}

MetadataPool *
metadata_pool_new(void)
{
    MetadataPool *pool = g_new0(MetadataPool, 1);
    pool->entries = g_hash_table_new(entry_hash, entry_equal);
    pool->refs = 1;
    return pool;
}

MetadataPool *
metadata_pool_ref(MetadataPool *pool)
{
    pool->refs++;
    return pool;
}

void
metadata_pool_unref(MetadataPool *pool)
{
    if (pool == NULL)
        return;
    KSIM_ASSERT(pool->refs > 0);
    if (--pool->refs > 0)
        return;
    KSIM_ASSERT(g_hash_table_size(pool->entries) == 0);
    g_hash_table_destroy(pool->entries);
    g_free(pool);
}

const KPartitionState *
metadata_pool_intern(MetadataPool *pool, const KPartitionState *state)
{
    KPartitionState key;
    normalize(state, &key);
    PoolEntry *entry = g_hash_table_lookup(pool->entries, &key);
    if (entry == NULL) {
        entry = g_new(PoolEntry, 1);
        entry->state = key;
        entry->pool = pool;
        entry->refs = 0;
        g_hash_table_add(pool->entries, entry);
    }
    entry->refs++;
    return &entry->state;
}

const KPartitionState *
metadata_pool_acquire(const KPartitionState *state)
{
    PoolEntry *entry = (PoolEntry *)state;
    KSIM_ASSERT(entry->refs > 0);
    entry->refs++;
    return state;
}

void
metadata_pool_release(gpointer state)
{
    PoolEntry *entry = state;
    KSIM_ASSERT(entry->refs > 0);
    if (--entry->refs > 0)
        return;
    gboolean removed = g_hash_table_remove(entry->pool->entries, entry);
    KSIM_ASSERT(removed);
    g_free(entry);
}

guint
metadata_pool_size(const MetadataPool *pool)
{
    return g_hash_table_size(pool->entries);
}

void
metadata_pool_check_invariants(const MetadataPool *pool)
{
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, pool->entries); /* tidy: allow each entry is checked alone */
    while (g_hash_table_iter_next(&iter, &key, NULL)) { /* tidy: allow the order reaches nothing */
        const PoolEntry *entry = key;
        KSIM_ASSERT(entry->refs > 0);
        KSIM_ASSERT(entry->pool == pool);
        KPartitionState normal;
        normalize(&entry->state, &normal);
        KSIM_ASSERT(memcmp(&normal, &entry->state, sizeof normal) == 0);
        KSIM_ASSERT(g_hash_table_lookup(pool->entries, &entry->state) == entry);
    }
}

/* ---- a broker's cache ---- */

/* 128 pointers: a kilobyte a chunk, split or appended to while the
 * cluster's partitions are created. */
#define METADATA_CACHE_CHUNK 128

typedef struct {
    guint len;
    const KPartitionState *items[METADATA_CACHE_CHUNK]; /* a reference each */
} CacheChunk;

struct MetadataCache {
    GPtrArray *chunks; /* CacheChunk* (owned), in key order */
    guint size;
};

MetadataCache *
metadata_cache_new(void)
{
    MetadataCache *cache = g_new0(MetadataCache, 1);
    cache->chunks = g_ptr_array_new();
    return cache;
}

void
metadata_cache_free(MetadataCache *cache)
{
    if (cache == NULL)
        return;
    for (guint c = 0; c < cache->chunks->len; c++) {
        CacheChunk *chunk = g_ptr_array_index(cache->chunks, c);
        for (guint i = 0; i < chunk->len; i++)
            metadata_pool_release((gpointer)chunk->items[i]);
        g_free(chunk);
    }
    g_ptr_array_unref(cache->chunks);
    g_free(cache);
}

guint
metadata_cache_size(const MetadataCache *cache)
{
    return cache->size;
}

/* Where `tp` is or would go: the chunk (chunks->len when the cache is
 * empty) and the first item there not before `tp`. A key past every entry
 * goes at the end of the last chunk. */
static void
cache_locate(const MetadataCache *cache, const KTopicPartition *tp, guint *chunk_index,
             guint *item_index)
{
    guint lo = 0, hi = cache->chunks->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const CacheChunk *chunk = g_ptr_array_index(cache->chunks, mid);
        if (ktp_compare(&chunk->items[chunk->len - 1]->tp, tp) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == cache->chunks->len && lo > 0)
        lo--;
    *chunk_index = lo;
    *item_index = 0;
    if (lo == cache->chunks->len)
        return;
    const CacheChunk *chunk = g_ptr_array_index(cache->chunks, lo);
    guint a = 0, b = chunk->len;
    while (a < b) {
        guint mid = a + (b - a) / 2;
        if (ktp_compare(&chunk->items[mid]->tp, tp) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    *item_index = a;
}

const KPartitionState *
metadata_cache_lookup(const MetadataCache *cache, const KTopicPartition *tp)
{
    guint c, i;
    cache_locate(cache, tp, &c, &i);
    if (c == cache->chunks->len)
        return NULL;
    const CacheChunk *chunk = g_ptr_array_index(cache->chunks, c);
    if (i < chunk->len && ktp_equal(&chunk->items[i]->tp, tp))
        return chunk->items[i];
    return NULL;
}

static CacheChunk *
cache_chunk_new(void)
{
    CacheChunk *chunk = g_new(CacheChunk, 1);
    chunk->len = 0;
    return chunk;
}

void
metadata_cache_replace(MetadataCache *cache, const KPartitionState *state)
{
    guint c, i;
    cache_locate(cache, &state->tp, &c, &i);
    if (c == cache->chunks->len)
        g_ptr_array_add(cache->chunks, cache_chunk_new());
    CacheChunk *chunk = g_ptr_array_index(cache->chunks, c);
    if (i < chunk->len && ktp_equal(&chunk->items[i]->tp, &state->tp)) {
        const KPartitionState *old = chunk->items[i];
        chunk->items[i] = state;
        metadata_pool_release((gpointer)old);
        return;
    }
    if (chunk->len == METADATA_CACHE_CHUNK) {
        CacheChunk *upper = cache_chunk_new();
        if (i == chunk->len) {
            /* Past the end of a full chunk: a new chunk after it. */
            chunk = upper;
            i = 0;
        } else {
            /* Inside a full chunk: its upper half moves to a new chunk. */
            guint half = METADATA_CACHE_CHUNK / 2;
            upper->len = METADATA_CACHE_CHUNK - half;
            memcpy(upper->items, &chunk->items[half], sizeof(chunk->items[0]) * upper->len);
            chunk->len = half;
            if (i > half) {
                chunk = upper;
                i -= half;
            }
        }
        g_ptr_array_insert(cache->chunks, (gint)c + 1, upper);
    }
    memmove(&chunk->items[i + 1], &chunk->items[i], sizeof(chunk->items[0]) * (chunk->len - i));
    chunk->items[i] = state;
    chunk->len++;
    cache->size++;
}

void
metadata_cache_iter_init(const MetadataCache *cache, const KTopicPartition *tp,
                         MetadataCacheIter *iter)
{
    iter->chunk = 0;
    iter->item = 0;
    if (tp != NULL)
        cache_locate(cache, tp, &iter->chunk, &iter->item);
}

const KPartitionState *
metadata_cache_iter_next(const MetadataCache *cache, MetadataCacheIter *iter)
{
    while (iter->chunk < cache->chunks->len) {
        const CacheChunk *chunk = g_ptr_array_index(cache->chunks, iter->chunk);
        if (iter->item < chunk->len)
            return chunk->items[iter->item++];
        iter->chunk++;
        iter->item = 0;
    }
    return NULL;
}

void
metadata_cache_check_invariants(const MetadataCache *cache)
{
    guint size = 0;
    const KPartitionState *previous = NULL;
    for (guint c = 0; c < cache->chunks->len; c++) {
        const CacheChunk *chunk = g_ptr_array_index(cache->chunks, c);
        KSIM_ASSERT(chunk->len > 0 && chunk->len <= METADATA_CACHE_CHUNK); /* 1 */
        for (guint i = 0; i < chunk->len; i++) {
            KSIM_ASSERT(previous == NULL || ktp_compare(&previous->tp, &chunk->items[i]->tp) < 0);
            previous = chunk->items[i];
            size++;
        }
    }
    KSIM_ASSERT(size == cache->size); /* 2 */
}
