/*
 * partitioner: Kafka's keyed, round-robin and sticky partition choice (see
 * partitioner.h).
 *
 * Both keyless partitioners keep one small entry per topic, found by name
 * through a hash table and owned by an array (the array is what the invariant
 * checks walk, so no hash-table iteration order is ever observed).
 *
 * Invariants (checked by partitioner_round_robin_check_invariants and
 * partitioner_sticky_check_invariants):
 *  1. Every topic has exactly one entry: the table and the array hold the same
 *     number of entries, and each entry is found in the table under its name.
 *  2. Sticky: an entry's partition is below the partition count of the call
 *     that chose it, and that count is at least 1.
 *
 * Sticky entry states, per topic:
 *   (none) --partitioner_sticky_partition / _on_new_batch--> STUCK(p)
 *   STUCK(p) --partitioner_sticky_on_new_batch(prev == p)--> STUCK(p')
 *   STUCK(p) --partitioner_sticky_on_new_batch(prev != p)--> STUCK(p)
 */
#include "partitioner.h"

#include "sim_assert.h"

/* Redrawing until the new sticky partition differs from the old one ends
 * after a few draws in practice (each draw repeats with probability
 * 1/n_available <= 1/2); the bound only guards against a broken stream. */
#define STICKY_REDRAWS_MAX 4096

gint32
partitioner_murmur2(const guint8 *data, gsize len)
{
    /* Java ints wrap on overflow; unsigned 32-bit arithmetic gives the same
     * bits, and `>>>` is a logical shift of the unsigned value. */
    const guint32 m = 0x5bd1e995u;
    const guint32 r = 24;
    KSIM_ASSERT(data != NULL || len == 0);
    KSIM_ASSERT(len <= G_MAXINT32);
    guint32 h = 0x9747b28cu ^ (guint32)len;
    gsize length4 = len / 4;
    for (gsize i = 0; i < length4; i++) {
        const guint8 *p = data + i * 4;
        guint32 k =
            (guint32)p[0] | ((guint32)p[1] << 8) | ((guint32)p[2] << 16) | ((guint32)p[3] << 24);
        k *= m;
        k ^= k >> r;
        k *= m;
        h *= m;
        h ^= k;
    }
    const guint8 *tail = data + (len & ~(gsize)3);
    switch (len % 4) {
    case 3:
        h ^= (guint32)tail[2] << 16;
        /* fall through */
    case 2:
        h ^= (guint32)tail[1] << 8;
        /* fall through */
    case 1:
        h ^= (guint32)tail[0];
        h *= m;
        break;
    default:
        break;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (gint32)h;
}

gint32
partitioner_to_positive(gint32 value)
{
    gint32 positive = (gint32)((guint32)value & 0x7fffffffu);
    KSIM_ASSERT(positive >= 0);
    return positive;
}

guint32
partitioner_partition_for_key(const guint8 *key, gsize len, guint32 num_partitions)
{
    KSIM_ASSERT(num_partitions >= 1);
    KSIM_ASSERT(num_partitions <= PARTITIONER_PARTITIONS_MAX);
    guint32 partition =
        (guint32)partitioner_to_positive(partitioner_murmur2(key, len)) % num_partitions;
    KSIM_ASSERT(partition < num_partitions);
    return partition;
}

/* ---- Per-topic entries, shared by both keyless partitioners ---- */

typedef struct {
    char *topic;
    /* Round-robin: the next counter value, as Java's AtomicInteger (wraps). */
    guint32 counter;
    /* Sticky: the current partition and the partition count it was chosen
     * under. */
    guint32 partition;
    guint32 num_partitions;
} TopicEntry;

typedef struct {
    GHashTable *by_name; /* topic -> TopicEntry (borrowed from `entries`) */
    GPtrArray *entries;  /* TopicEntry, owned */
} TopicEntries;

static void
topic_entry_free(gpointer data)
{
    TopicEntry *entry = data;
    g_free(entry->topic);
    g_free(entry);
}

static void
topic_entries_init(TopicEntries *entries)
{
    entries->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    entries->entries = g_ptr_array_new_with_free_func(topic_entry_free);
}

static void
topic_entries_clear(TopicEntries *entries)
{
    g_clear_pointer(&entries->by_name, g_hash_table_unref);
    g_clear_pointer(&entries->entries, g_ptr_array_unref);
}

static TopicEntry *
topic_entries_lookup(const TopicEntries *entries, const char *topic)
{
    KSIM_ASSERT(topic != NULL);
    return g_hash_table_lookup(entries->by_name, topic);
}

static TopicEntry *
topic_entries_insert(TopicEntries *entries, const char *topic)
{
    KSIM_ASSERT(topic_entries_lookup(entries, topic) == NULL);
    TopicEntry *entry = g_new0(TopicEntry, 1);
    entry->topic = g_strdup(topic);
    g_ptr_array_add(entries->entries, entry);
    g_hash_table_insert(entries->by_name, entry->topic, entry);
    return entry;
}

static void
topic_entries_check(const TopicEntries *entries)
{
    KSIM_ASSERT(g_hash_table_size(entries->by_name) == entries->entries->len);
    for (guint i = 0; i < entries->entries->len; i++) {
        const TopicEntry *entry = g_ptr_array_index(entries->entries, i);
        KSIM_ASSERT(topic_entries_lookup(entries, entry->topic) == entry);
    }
}

static void
check_available(guint32 num_partitions, const guint32 *available, guint n_available)
{
    KSIM_ASSERT(num_partitions >= 1);
    KSIM_ASSERT(num_partitions <= PARTITIONER_PARTITIONS_MAX);
    KSIM_ASSERT(n_available <= num_partitions);
    KSIM_ASSERT(available != NULL || n_available == 0);
    for (guint i = 0; i < n_available; i++)
        KSIM_ASSERT(available[i] < num_partitions);
}

/* ---- Round-robin ---- */

struct PartitionerRoundRobin {
    TopicEntries topics;
};

PartitionerRoundRobin *
partitioner_round_robin_new(void)
{
    PartitionerRoundRobin *round_robin = g_new0(PartitionerRoundRobin, 1);
    topic_entries_init(&round_robin->topics);
    return round_robin;
}

void
partitioner_round_robin_free(PartitionerRoundRobin *round_robin)
{
    if (round_robin == NULL)
        return;
    topic_entries_clear(&round_robin->topics);
    g_free(round_robin);
}

guint32
partitioner_round_robin_partition(PartitionerRoundRobin *round_robin, const char *topic,
                                  guint32 num_partitions, const guint32 *available,
                                  guint n_available)
{
    KSIM_ASSERT(round_robin != NULL);
    check_available(num_partitions, available, n_available);
    TopicEntry *entry = topic_entries_lookup(&round_robin->topics, topic);
    if (entry == NULL)
        entry = topic_entries_insert(&round_robin->topics, topic);
    /* getAndIncrement: use the current value, then step (wrapping as Java's
     * int does after 2^31 records; toPositive folds the sign bit away). */
    guint32 next_value = (guint32)partitioner_to_positive((gint32)entry->counter);
    entry->counter++;
    if (n_available > 0)
        return available[next_value % n_available];
    return next_value % num_partitions;
}

void
partitioner_round_robin_check_invariants(const PartitionerRoundRobin *round_robin)
{
    KSIM_ASSERT(round_robin != NULL);
    topic_entries_check(&round_robin->topics);
}

/* ---- Sticky ---- */

struct PartitionerSticky {
    TopicEntries topics;
    SimRng *rng; /* borrowed */
};

PartitionerSticky *
partitioner_sticky_new(SimRng *rng)
{
    KSIM_ASSERT(rng != NULL);
    PartitionerSticky *sticky = g_new0(PartitionerSticky, 1);
    topic_entries_init(&sticky->topics);
    sticky->rng = rng;
    return sticky;
}

void
partitioner_sticky_free(PartitionerSticky *sticky)
{
    if (sticky == NULL)
        return;
    topic_entries_clear(&sticky->topics);
    g_free(sticky);
}

/* Kafka's `Utils.toPositive(ThreadLocalRandom.current().nextInt()) % n`. */
static guint32
random_below(PartitionerSticky *sticky, guint32 n)
{
    KSIM_ASSERT(n >= 1);
    guint32 value = (guint32)partitioner_to_positive((gint32)sim_rng_u32(sticky->rng));
    return value % n;
}

/* A new sticky partition, given the old one (or NULL when there is none):
 * the body of StickyPartitionCache.nextPartition. */
static guint32
choose_partition(PartitionerSticky *sticky, guint32 num_partitions, const guint32 *available,
                 guint n_available, const guint32 *old_partition)
{
    if (n_available == 0)
        return random_below(sticky, num_partitions);
    if (n_available == 1)
        return available[0];
    for (guint draw = 0; draw < STICKY_REDRAWS_MAX; draw++) {
        guint32 partition = available[random_below(sticky, n_available)];
        if (old_partition == NULL || partition != *old_partition)
            return partition;
    }
    /* Reached only if the stream returned the same index thousands of times. */
    KSIM_ASSERT(!"sticky partitioner: random stream never left the old partition");
    return available[0];
}

static guint32
sticky_set(TopicEntry *entry, guint32 partition, guint32 num_partitions)
{
    KSIM_ASSERT(partition < num_partitions);
    entry->partition = partition;
    entry->num_partitions = num_partitions;
    return partition;
}

guint32
partitioner_sticky_partition(PartitionerSticky *sticky, const char *topic, guint32 num_partitions,
                             const guint32 *available, guint n_available)
{
    KSIM_ASSERT(sticky != NULL);
    check_available(num_partitions, available, n_available);
    TopicEntry *entry = topic_entries_lookup(&sticky->topics, topic);
    if (entry != NULL)
        return entry->partition;
    /* StickyPartitionCache.partition() calls nextPartition(topic, cluster, -1)
     * for a topic it has not seen: there is no old partition to avoid. */
    guint32 partition = choose_partition(sticky, num_partitions, available, n_available, NULL);
    entry = topic_entries_insert(&sticky->topics, topic);
    return sticky_set(entry, partition, num_partitions);
}

guint32
partitioner_sticky_on_new_batch(PartitionerSticky *sticky, const char *topic,
                                guint32 num_partitions, const guint32 *available, guint n_available,
                                guint32 previous_partition)
{
    KSIM_ASSERT(sticky != NULL);
    check_available(num_partitions, available, n_available);
    TopicEntry *entry = topic_entries_lookup(&sticky->topics, topic);
    if (entry == NULL) {
        guint32 partition = choose_partition(sticky, num_partitions, available, n_available, NULL);
        entry = topic_entries_insert(&sticky->topics, topic);
        return sticky_set(entry, partition, num_partitions);
    }
    /* A batch for a partition the topic no longer sticks to must not move the
     * topic again: another new batch already did. */
    if (entry->partition != previous_partition)
        return entry->partition;
    guint32 old_partition = entry->partition;
    guint32 partition =
        choose_partition(sticky, num_partitions, available, n_available, &old_partition);
    return sticky_set(entry, partition, num_partitions);
}

void
partitioner_sticky_check_invariants(const PartitionerSticky *sticky)
{
    KSIM_ASSERT(sticky != NULL);
    KSIM_ASSERT(sticky->rng != NULL);
    topic_entries_check(&sticky->topics);
    for (guint i = 0; i < sticky->topics.entries->len; i++) {
        const TopicEntry *entry = g_ptr_array_index(sticky->topics.entries, i);
        KSIM_ASSERT(entry->num_partitions >= 1);
        KSIM_ASSERT(entry->partition < entry->num_partitions);
    }
}
