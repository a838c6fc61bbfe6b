/*
 * metadata_pool: the partition states that brokers' metadata caches hold
 * (Kafka's MetadataCache, one per broker), each distinct state stored once
 * and shared by every cache that holds it.
 *
 * The controller sends every live broker the same UpdateMetadata, so the
 * thirty caches of a thirty-broker cluster hold thirty equal copies of each
 * partition's state: most of what a partition cost beyond its replicas. A
 * cache keeps a counted reference to the pool's one copy instead; what each
 * broker sees is unchanged (a cache still learns a state only from the
 * requests it receives, and keeps its own stale one until then), only the
 * bytes are shared. States are immutable once pooled.
 *
 * Equal means equal as the wire carries it: the topic name, the partition,
 * the leader, epochs, zk version and the first n_replicas replicas and
 * n_isr ISR members (metadata_pool_intern reads nothing beyond them, so
 * unused slots do not tell two states apart).
 *
 * Invariants (metadata_pool_check_invariants):
 *  1. Every pooled state has at least one reference and is in the table
 *     under its own content; no two pooled states are equal.
 *
 * Lifetime: the pool is reference counted (a cluster's brokers share one);
 * each pooled state points back to its pool, which must outlive it.
 */
#ifndef METADATA_POOL_H
#define METADATA_POOL_H

#include "kafka_proto.h"
#include "sim_sorted.h"

#include <glib.h>

typedef struct MetadataPool MetadataPool;

/* An empty pool with one reference. (transfer full) */
MetadataPool *metadata_pool_new(void);
MetadataPool *metadata_pool_ref(MetadataPool *pool);
/* Drops a reference; the last frees the pool, which must then be empty. */
void metadata_pool_unref(MetadataPool *pool);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(MetadataPool, metadata_pool_unref)

/* The pool's copy of `state`, with one more reference: an equal state
 * already pooled, else a new copy. (transfer full: release it with
 * metadata_pool_release) */
const KPartitionState *metadata_pool_intern(MetadataPool *pool, const KPartitionState *state);
/* One more reference to `state`, which the pool already holds. (transfer full) */
const KPartitionState *metadata_pool_acquire(const KPartitionState *state);
/* Releases a reference metadata_pool_intern gave; the last one frees the
 * copy. A GDestroyNotify for containers of pooled states. */
void metadata_pool_release(gpointer state);

/* How many distinct states the pool holds. */
guint metadata_pool_size(const MetadataPool *pool);
void metadata_pool_check_invariants(const MetadataPool *pool);

/*
 * MetadataCache: one broker's cache, its partitions' pooled states in
 * (topic, partition) order. A broker's cache holds an entry for every
 * partition of the cluster, three million at a hundred thousand partitions
 * on thirty brokers: they are kept in a SimSorted (sim_sorted.h), 8 bytes
 * an entry, where a balanced tree spent 40.
 */
typedef struct MetadataCache MetadataCache;

/* An empty cache. (transfer full) */
MetadataCache *metadata_cache_new(void);
/* Releases every state the cache holds and frees it. */
void metadata_cache_free(MetadataCache *cache);
/* The cached state of `tp`, NULL when the cache has none. (transfer none) */
const KPartitionState *metadata_cache_lookup(const MetadataCache *cache, const KTopicPartition *tp);
/* Caches `state` (a reference metadata_pool_intern gave, which the cache
 * takes) under its own partition, releasing the state it replaces. */
void metadata_cache_replace(MetadataCache *cache, const KPartitionState *state);
guint metadata_cache_size(const MetadataCache *cache);

/* A position in a cache, for walking it in order. Adding to the cache
 * invalidates it. */
typedef SimSortedIter MetadataCacheIter;

/* Positions `iter` at the first entry not before `tp` (NULL: the first
 * entry). */
void metadata_cache_iter_init(const MetadataCache *cache, const KTopicPartition *tp,
                              MetadataCacheIter *iter);
/* The entry at `iter`, which then moves on; NULL past the last. (transfer none) */
const KPartitionState *metadata_cache_iter_next(const MetadataCache *cache,
                                                MetadataCacheIter *iter);
void metadata_cache_check_invariants(const MetadataCache *cache);

#endif /* METADATA_POOL_H */
