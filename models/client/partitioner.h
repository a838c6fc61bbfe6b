/*
 * partitioner: how a producer chooses the partition of a record.
 *
 * Three rules, each as Apache Kafka's Java client implements it:
 *
 *  - A record with a key goes to toPositive(murmur2(key)) % num_partitions,
 *    over all partitions of the topic whether or not they have a leader
 *    (Kafka's DefaultPartitioner and BuiltInPartitioner.partitionForKey). The
 *    hash is bit for bit Kafka's Utils.murmur2, so a key lands in the partition
 *    it lands in on a real cluster with the same partition count.
 *  - A record without a key, round-robin (Kafka's RoundRobinPartitioner, which
 *    is what the study notes describe): one counter per topic, taken modulo the
 *    partitions that have a leader, or modulo all partitions when none has one.
 *  - A record without a key, sticky (Kafka 2.4+, StickyPartitionCache): keep
 *    sending to one partition per topic until the producer opens a new batch for
 *    it, then pick a new random partition among those with a leader, different
 *    from the previous one whenever there is more than one to choose from.
 *
 * Availability is given by the caller as the list of partition numbers that
 * currently have a leader, in the order of the producer's metadata (ascending
 * in practice), exactly as Kafka's Cluster.availablePartitionsForTopic.
 * Random draws come only from the SimRng stream handed to the sticky state.
 */
#ifndef KSIM_PARTITIONER_H
#define KSIM_PARTITIONER_H

#include "sim_rng.h"

#include <glib.h>

/* The most partitions a topic may have here (Kafka's limit is the int range;
 * ours keeps every modulo in range and every loop bounded). */
#define PARTITIONER_PARTITIONS_MAX (1u << 24)

/* Kafka's Utils.murmur2: MurmurHash2, seed 0x9747b28c, with Java's 32-bit
 * int arithmetic. `data` may be NULL when `len` is 0. */
gint32 partitioner_murmur2(const guint8 *data, gsize len);

/* Kafka's Utils.toPositive: `value & 0x7fffffff` (not abs(): abs(INT_MIN) is
 * negative in Java). */
gint32 partitioner_to_positive(gint32 value);

/* The partition of a keyed record: toPositive(murmur2(key)) % num_partitions.
 * `num_partitions` is at least 1. */
guint32 partitioner_partition_for_key(const guint8 *key, gsize len, guint32 num_partitions);

/* ---- Round-robin (no key) ---- */

typedef struct PartitionerRoundRobin PartitionerRoundRobin;

/* A round-robin partitioner with no counters yet. (transfer full) */
PartitionerRoundRobin *partitioner_round_robin_new(void);
void partitioner_round_robin_free(PartitionerRoundRobin *round_robin);

/* The next partition for a keyless record of `topic`: the topic's counter
 * (starting at 0) is taken and incremented; the result is
 * available[toPositive(counter) % n_available], or toPositive(counter) %
 * num_partitions when no partition is available. Every entry of `available`
 * is below `num_partitions`. */
guint32 partitioner_round_robin_partition(PartitionerRoundRobin *round_robin, const char *topic,
                                          guint32 num_partitions, const guint32 *available,
                                          guint n_available);

/* Checks the counters' bookkeeping; aborts through KSIM_ASSERT on a breach. */
void partitioner_round_robin_check_invariants(const PartitionerRoundRobin *round_robin);

/* ---- Sticky (no key) ---- */

typedef struct PartitionerSticky PartitionerSticky;

/* A sticky partitioner drawing from `rng`. (rng: transfer none; it must
 * outlive the partitioner.) (transfer full) */
PartitionerSticky *partitioner_sticky_new(SimRng *rng);
void partitioner_sticky_free(PartitionerSticky *sticky);

/* The topic's sticky partition, choosing one (as on a new batch) if the topic
 * has none yet. StickyPartitionCache.partition(). */
guint32 partitioner_sticky_partition(PartitionerSticky *sticky, const char *topic,
                                     guint32 num_partitions, const guint32 *available,
                                     guint n_available);

/* Called when the producer had to open a new batch for `previous_partition`
 * (StickyPartitionCache.nextPartition): if the topic still sticks to
 * `previous_partition` (or to nothing), a new partition is chosen: a random
 * available one different from the old one when two or more are available,
 * the only available one when there is one, a random one of all partitions
 * when none is available. Otherwise another batch already moved the topic on
 * and its current sticky partition is kept. Returns the sticky partition. */
guint32 partitioner_sticky_on_new_batch(PartitionerSticky *sticky, const char *topic,
                                        guint32 num_partitions, const guint32 *available,
                                        guint n_available, guint32 previous_partition);

/* Checks the cached partitions; aborts through KSIM_ASSERT on a breach. */
void partitioner_sticky_check_invariants(const PartitionerSticky *sticky);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PartitionerRoundRobin, partitioner_round_robin_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PartitionerSticky, partitioner_sticky_free)

#endif
