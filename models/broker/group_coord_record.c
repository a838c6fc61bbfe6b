/*
 * group_coord_record: the pure functions of the group coordinator's
 * __consumer_offsets records (group_coord.h): which partition a group's
 * records go to, their key, the value a commit record holds, and the group
 * metadata record's encoding.
 */
#include "group_coord_internal.h"

#include "coord_partition.h"
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

/* ---- the group metadata record ---- */

#define GROUP_RECORD_MAGIC G_GUINT64_CONSTANT(0x6772) /* "gr" */
#define GROUP_ID_CHUNKS_MAX 0xffu
#define GROUP_RECORD_MEMBERS_MAX 0xffffffu

guint64
group_coord_group_key(const char *group_id)
{
    return group_coord_offset_key(group_id, "", -2);
}

void
group_log_record_init(GroupLogRecord *record, const char *group_id)
{
    memset(record, 0, sizeof *record);
    KSIM_ASSERT(strlen(group_id) <= KAFKA_GROUP_ID_MAX);
    g_strlcpy(record->group_id, group_id, sizeof record->group_id);
    record->protocol = -1;
    record->leader = -1;
    record->members = g_array_new(FALSE, TRUE, sizeof(GroupLogMember));
    record->metadata = g_array_new(FALSE, FALSE, sizeof(GroupLogTopic));
}

GroupLogMember *
group_log_record_add_member(GroupLogRecord *record, const char *member_id)
{
    KSIM_ASSERT(strlen(member_id) <= KAFKA_MEMBER_ID_MAX);
    g_array_set_size(record->members, record->members->len + 1);
    GroupLogMember *member =
        &g_array_index(record->members, GroupLogMember, record->members->len - 1);
    g_strlcpy(member->member_id, member_id, sizeof member->member_id);
    member->topics = g_array_new(FALSE, FALSE, sizeof(KTopicName));
    member->owned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->assignment = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->pending = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->target = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    return member;
}

void
group_log_record_clear(GroupLogRecord *record)
{
    for (guint i = 0; record->members != NULL && i < record->members->len; i++) {
        GroupLogMember *member = &g_array_index(record->members, GroupLogMember, i);
        g_array_free(member->topics, TRUE);
        g_array_free(member->owned, TRUE);
        g_array_free(member->assignment, TRUE);
        g_array_free(member->pending, TRUE);
        g_array_free(member->target, TRUE);
    }
    if (record->members != NULL)
        g_array_free(record->members, TRUE);
    record->members = NULL;
    if (record->metadata != NULL)
        g_array_free(record->metadata, TRUE);
    record->metadata = NULL;
}

/* The length of the run of `tps` from `at` that names one topic. */
static guint
topic_run(const GArray *tps, guint at)
{
    const KTopicPartition *first = &g_array_index(tps, KTopicPartition, at);
    guint n = 1;
    while (at + n < tps->len &&
           strcmp(g_array_index(tps, KTopicPartition, at + n).topic, first->topic) == 0)
        n++;
    return n;
}

/* The bytes Kafka's ConsumerProtocol encoding of a list of partitions
 * takes: an array of topics, each its name and an array of partitions. */
static gsize
partitions_bytes(const GArray *tps)
{
    gsize bytes = 4;
    for (guint at = 0; at < tps->len;) {
        guint n = topic_run(tps, at);
        bytes += 2 + strlen(g_array_index(tps, KTopicPartition, at).topic) + 4 + 4 * (gsize)n;
        at += n;
    }
    return bytes;
}

/* The bytes Kafka's record takes: GroupMetadataKey v2 and GroupMetadataValue
 * v3 with protocol type "consumer", a 5-byte protocol name and client host,
 * each member's subscription (ConsumerProtocolSubscription v1: topics, no
 * user data, owned partitions) and assignment (ConsumerProtocolAssignment
 * v0), and the record's framing. */
static guint32
group_record_bytes(const GroupLogRecord *record)
{
    const GroupLogMember *members = (const GroupLogMember *)record->members->data;
    gsize bytes = 8 + 2 + 2 + strlen(record->group_id);
    bytes += 2 + (2 + 8) + 4 + (2 + 5) + 2 + 8 + 4;
    if (record->leader >= 0)
        bytes += strlen(members[record->leader].member_id);
    for (guint i = 0; i < record->members->len; i++) {
        const GroupLogMember *m = &members[i];
        bytes += 2 + strlen(m->member_id) + 2 + 2 + strlen(m->client_id) + 2 + 10 + 4 + 4;
        bytes += 4 + 2 + 4 + 4 + partitions_bytes(m->owned) + 4;
        for (guint t = 0; t < m->topics->len; t++)
            bytes += 2 + strlen(g_array_index(m->topics, KTopicName, t).name);
        bytes += 4 + 2 + partitions_bytes(m->assignment) + 4;
        if (record->consumer_protocol) /* epochs, state; the target's record */
            bytes += 4 + 4 + 1 + partitions_bytes(m->pending) + 2 + 2 + strlen(m->member_id) +
                     partitions_bytes(m->target);
    }
    for (guint i = 0; i < record->metadata->len; i++) /* ConsumerGroupPartitionMetadata */
        bytes += 2 + 16 + strlen(g_array_index(record->metadata, GroupLogTopic, i).topic) + 4;
    return (guint32)MIN(bytes, G_MAXUINT32);
}

static void
add_value(PlogBatch *batch, guint64 value)
{
    plog_batch_add_record(batch, 0, value, 0);
}

static guint64
pack32(gint32 low, gint32 high)
{
    return (guint64)(guint32)low | (guint64)(guint32)high << 32;
}

static void
add_partitions(PlogBatch *batch, const GArray *tps)
{
    guint runs = 0;
    for (guint at = 0; at < tps->len; runs++)
        at += topic_run(tps, at);
    add_value(batch, runs);
    for (guint at = 0; at < tps->len;) {
        guint n = topic_run(tps, at);
        const char *topic = g_array_index(tps, KTopicPartition, at).topic;
        add_value(batch, (guint64)coord_record_string_chunks(topic) | (guint64)n << 32);
        coord_record_add_string(batch, topic, 0);
        for (guint i = 0; i < n; i += 2) {
            gint32 second = i + 1 < n ? g_array_index(tps, KTopicPartition, at + i + 1).partition
                                      : -1;
            add_value(batch, pack32(g_array_index(tps, KTopicPartition, at + i).partition, second));
        }
        at += n;
    }
}

PlogBatch *
group_coord_encode_group(const GroupLogRecord *record)
{
    KSIM_ASSERT(record->members->len <= GROUP_RECORD_MEMBERS_MAX);
    KSIM_ASSERT(record->leader >= -1 && record->leader < (gint32)record->members->len);
    PlogBatch *batch = plog_batch_new();
    guint64 head = GROUP_RECORD_MAGIC << 48 |
                   (guint64)coord_record_string_chunks(record->group_id) << 32 |
                   record->members->len;
    plog_batch_add_record(batch, group_coord_group_key(record->group_id), head,
                          group_record_bytes(record));
    add_value(batch, pack32(record->generation, record->protocol));
    add_value(batch, (guint64)(guint32)record->leader);
    add_value(batch, pack32(record->target_epoch, record->consumer_protocol ? 1 : 0));
    coord_record_add_string(batch, record->group_id, 0);
    for (guint i = 0; i < record->members->len; i++) {
        const GroupLogMember *m = &g_array_index(record->members, GroupLogMember, i);
        add_value(batch, pack32(m->session_timeout_ms, m->rebalance_timeout_ms));
        add_value(batch, pack32(m->protocol, m->owned_generation));
        add_value(batch, (guint64)coord_record_string_chunks(m->member_id) |
                             (guint64)coord_record_string_chunks(m->client_id) << 16 |
                             (guint64)m->topics->len << 32);
        coord_record_add_string(batch, m->member_id, 0);
        coord_record_add_string(batch, m->client_id, 0);
        for (guint t = 0; t < m->topics->len; t++) {
            const char *topic = g_array_index(m->topics, KTopicName, t).name;
            add_value(batch, coord_record_string_chunks(topic));
            coord_record_add_string(batch, topic, 0);
        }
        add_value(batch, pack32(m->member_epoch, m->previous_member_epoch));
        add_value(batch, (guint64)(guint32)m->state);
        add_partitions(batch, m->owned);
        add_partitions(batch, m->assignment);
        add_partitions(batch, m->pending);
        add_partitions(batch, m->target);
    }
    add_value(batch, record->metadata->len);
    for (guint i = 0; i < record->metadata->len; i++) {
        const GroupLogTopic *topic = &g_array_index(record->metadata, GroupLogTopic, i);
        add_value(batch, pack32((gint32)coord_record_string_chunks(topic->topic),
                                topic->partitions));
        coord_record_add_string(batch, topic->topic, 0);
    }
    return batch;
}

/* Reads a batch's values in order; `ok` turns FALSE at the first read past
 * its end and stays so. */
typedef struct {
    const PlogBatch *batch;
    guint at;
    gboolean ok;
} ValueReader;

static guint64
read_value(ValueReader *reader)
{
    if (!reader->ok || reader->at >= reader->batch->records->len) {
        reader->ok = FALSE;
        return 0;
    }
    return g_array_index(reader->batch->records, PlogRecord, reader->at++).value;
}

static gboolean
read_string(ValueReader *reader, guint chunks, char *out, gsize size)
{
    reader->ok = reader->ok && coord_record_read_string(reader->batch, &reader->at, chunks, out,
                                                        size);
    return reader->ok;
}

static void
read_partitions(ValueReader *reader, GArray *out)
{
    guint64 runs = read_value(reader);
    for (guint64 r = 0; reader->ok && r < runs; r++) {
        guint64 head = read_value(reader);
        KTopicPartition tp;
        char topic[KAFKA_TOPIC_NAME_MAX + 1];
        guint n = (guint)(head >> 32);
        if (!read_string(reader, (guint)(head & 0xffffffffu), topic, sizeof topic))
            return;
        ktp_set(&tp, topic, 0);
        for (guint i = 0; reader->ok && i < n; i += 2) {
            guint64 pair = read_value(reader);
            tp.partition = (gint32)(guint32)(pair & 0xffffffffu);
            g_array_append_val(out, tp);
            if (i + 1 < n) {
                tp.partition = (gint32)(guint32)(pair >> 32);
                g_array_append_val(out, tp);
            }
        }
    }
}

gboolean
group_coord_decode_group(const PlogBatch *batch, GroupLogRecord *out)
{
    memset(out, 0, sizeof *out);
    if (batch->records->len < 4 || (batch->attributes & PLOG_BATCH_CONTROL) != 0)
        return FALSE;
    const PlogRecord *r = (const PlogRecord *)batch->records->data;
    if (r[0].key == 0 || r[0].value >> 48 != GROUP_RECORD_MAGIC)
        return FALSE;
    guint id_chunks = (guint)((r[0].value >> 32) & GROUP_ID_CHUNKS_MAX);
    guint64 n_members = r[0].value & GROUP_RECORD_MEMBERS_MAX;
    group_log_record_init(out, "");
    ValueReader reader = {batch, 1, TRUE};
    guint64 fields = read_value(&reader);
    out->generation = (gint32)(guint32)(fields & 0xffffffffu);
    out->protocol = (gint32)(guint32)(fields >> 32);
    out->leader = (gint32)(guint32)read_value(&reader);
    guint64 kind = read_value(&reader);
    out->target_epoch = (gint32)(guint32)(kind & 0xffffffffu);
    out->consumer_protocol = (kind >> 32) != 0;
    read_string(&reader, id_chunks, out->group_id, sizeof out->group_id);
    for (guint64 i = 0; reader.ok && i < n_members; i++) {
        guint64 timeouts = read_value(&reader);
        guint64 protocol = read_value(&reader);
        guint64 sizes = read_value(&reader);
        GroupLogMember *m = group_log_record_add_member(out, "");
        m->session_timeout_ms = (gint32)(guint32)(timeouts & 0xffffffffu);
        m->rebalance_timeout_ms = (gint32)(guint32)(timeouts >> 32);
        m->protocol = (gint32)(guint32)(protocol & 0xffffffffu);
        m->owned_generation = (gint32)(guint32)(protocol >> 32);
        read_string(&reader, (guint)(sizes & 0xffffu), m->member_id, sizeof m->member_id);
        read_string(&reader, (guint)((sizes >> 16) & 0xffffu), m->client_id, sizeof m->client_id);
        guint64 topics = sizes >> 32;
        for (guint64 t = 0; reader.ok && t < topics; t++) {
            KTopicName name;
            guint chunks = (guint)read_value(&reader);
            if (read_string(&reader, chunks, name.name, sizeof name.name))
                g_array_append_val(m->topics, name);
        }
        guint64 epochs = read_value(&reader);
        m->member_epoch = (gint32)(guint32)(epochs & 0xffffffffu);
        m->previous_member_epoch = (gint32)(guint32)(epochs >> 32);
        m->state = (gint32)(guint32)read_value(&reader);
        read_partitions(&reader, m->owned);
        read_partitions(&reader, m->assignment);
        read_partitions(&reader, m->pending);
        read_partitions(&reader, m->target);
    }
    guint64 n_topics = read_value(&reader);
    for (guint64 i = 0; reader.ok && i < n_topics; i++) {
        guint64 head = read_value(&reader);
        GroupLogTopic topic;
        topic.partitions = (gint32)(guint32)(head >> 32);
        if (read_string(&reader, (guint)(head & 0xffffffffu), topic.topic, sizeof topic.topic))
            g_array_append_val(out->metadata, topic);
    }
    gboolean ok = reader.ok && reader.at == batch->records->len &&
                  out->leader >= -1 && out->leader < (gint32)out->members->len &&
                  r[0].key == group_coord_group_key(out->group_id);
    if (!ok) {
        group_log_record_clear(out);
        memset(out, 0, sizeof *out);
    }
    return ok;
}
