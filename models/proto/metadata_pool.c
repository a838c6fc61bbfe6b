/*
 * metadata_pool: one shared copy of each distinct partition state the
 * brokers' metadata caches hold (metadata_pool.h).
 */
#include "metadata_pool.h"

#include "sim_assert.h"
#include "sim_sorted.h"

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
 * zero (the padding, the array slots past n). The name is interned, so its
 * pointer stands for it: the pool's hash of a state depends on where the
 * name lives, which only places entries in the table (it is looked up,
 * never listed in an order that reaches anything). */
static void
normalize(const KPartitionState *in, KPartitionState *out)
{
    memset(out, 0, sizeof *out);
    out->tp.topic = in->tp.topic;
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

struct MetadataCache {
    SimSorted *states; /* const KPartitionState * (a reference each), by partition */
};

static int
cache_compare(gconstpointer key, gconstpointer item)
{
    return ktp_compare(key, &((const KPartitionState *)item)->tp);
}

static gconstpointer
cache_key_of(gconstpointer item)
{
    return &((const KPartitionState *)item)->tp;
}

MetadataCache *
metadata_cache_new(void)
{
    MetadataCache *cache = g_new0(MetadataCache, 1);
    cache->states = sim_sorted_new(cache_compare);
    return cache;
}

void
metadata_cache_free(MetadataCache *cache)
{
    if (cache == NULL)
        return;
    sim_sorted_free_full(cache->states, metadata_pool_release);
    g_free(cache);
}

guint
metadata_cache_size(const MetadataCache *cache)
{
    return sim_sorted_size(cache->states);
}

const KPartitionState *
metadata_cache_lookup(const MetadataCache *cache, const KTopicPartition *tp)
{
    return sim_sorted_lookup(cache->states, tp);
}

void
metadata_cache_replace(MetadataCache *cache, const KPartitionState *state)
{
    gpointer old = sim_sorted_replace(cache->states, &state->tp, (gpointer)state);
    if (old != NULL)
        metadata_pool_release(old);
}

void
metadata_cache_iter_init(const MetadataCache *cache, const KTopicPartition *tp,
                         MetadataCacheIter *iter)
{
    sim_sorted_iter_init(cache->states, tp, iter);
}

const KPartitionState *
metadata_cache_iter_next(const MetadataCache *cache, MetadataCacheIter *iter)
{
    return sim_sorted_iter_next(cache->states, iter);
}

void
metadata_cache_check_invariants(const MetadataCache *cache)
{
    sim_sorted_check_invariants(cache->states, cache_key_of);
}
