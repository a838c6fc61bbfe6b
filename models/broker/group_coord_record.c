/*
 * group_coord_record: the pure functions of the group coordinator's
 * __consumer_offsets records (group_coord.h): which partition a group's
 * records go to, their key, and the value a commit record holds.
 */
#include "group_coord_internal.h"

#include "sim_assert.h"

#include <string.h>

gint32
group_coord_java_hash(const char *text)
{
    glong n = 0;
    g_autofree gunichar2 *units = g_utf8_to_utf16(text, -1, NULL, &n, NULL);
    KSIM_ASSERT(units != NULL); /* ids are valid UTF-8 */
    guint32 hash = 0;
    for (glong i = 0; i < n; i++)
        hash = 31u * hash + units[i];
    return (gint32)hash;
}

gint32
group_coord_partition_for(const char *group_id, gint32 num_partitions)
{
    KSIM_ASSERT(num_partitions > 0);
    gint32 hash = group_coord_java_hash(group_id);
    gint32 abs = hash == G_MININT32 ? 0 : ABS(hash);
    return abs % num_partitions;
}

static guint64
fnv1a(guint64 hash, const void *data, gsize len)
{
    const guint8 *bytes = data;
    for (gsize i = 0; i < len; i++) {
        hash ^= bytes[i];
        hash *= G_GUINT64_CONSTANT(1099511628211);
    }
    return hash;
}

guint64
group_coord_offset_key(const char *group_id, const char *topic, gint32 partition)
{
    guint64 hash = G_GUINT64_CONSTANT(14695981039346656037);
    hash = fnv1a(hash, group_id, strlen(group_id) + 1);
    hash = fnv1a(hash, topic, strlen(topic) + 1);
    guint8 bytes[4] = {(guint8)partition, (guint8)(partition >> 8), (guint8)(partition >> 16),
                       (guint8)(partition >> 24)};
    hash = fnv1a(hash, bytes, sizeof bytes);
    return hash == 0 ? 1 : hash;
}

#define COMMIT_OFFSET_BITS 40

/* A commit record's value, as the log and the cache keep it: the offset and
 * the committed leader epoch, which Kafka's OffsetCommitValue (v3, KIP-320)
 * stores side by side; here the epoch plus one sits above the offset's
 * COMMIT_OFFSET_BITS (0: no epoch). */
guint64
group_coord_commit_value(gint64 offset, gint32 leader_epoch)
{
    KSIM_ASSERT(offset >= 0 && offset < (G_GINT64_CONSTANT(1) << COMMIT_OFFSET_BITS));
    KSIM_ASSERT(leader_epoch >= -1 && leader_epoch < (1 << (64 - COMMIT_OFFSET_BITS)) - 1);
    return ((guint64)(leader_epoch + 1) << COMMIT_OFFSET_BITS) | (guint64)offset;
}

gint64
group_coord_commit_value_offset(guint64 value)
{
    return (gint64)(value & ((G_GUINT64_CONSTANT(1) << COMMIT_OFFSET_BITS) - 1));
}

gint32
group_coord_commit_value_epoch(guint64 value)
{
    return (gint32)(value >> COMMIT_OFFSET_BITS) - 1;
}
