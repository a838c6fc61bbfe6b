/*
 * Unit tests for plog_segment, one segment of a partition log, through its
 * own header: appends and the offsets and bytes they count, the sparse index
 * earned every index.interval.bytes (Kafka's LogSegment.append), lookups by
 * offset against a walk of the file, the remembered starts of the last
 * batches agreeing with the index, truncation inside a segment, recovery of a
 * torn or corrupt tail, the time index, the roll rule and a full disk.
 *
 * Each test runs a real SimWorld with one node and its disk; the segment's
 * invariants, with its files, are checked after every change.
 */
#include "plog_segment.h"

#include "sim_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define DIR "orders-0"
#define LOG_NAME DIR "/00000000000000000000.log"

typedef struct {
    SimWorld *world;
    SimDisk *disk;
    PlogSegment *segment;
    GArray *positions; /* gint64: where each appended batch begins */
    GArray *bases;     /* gint64: each appended batch's base offset */
} Fixture;

/* ---- fixture ---- */

static void
noop_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    (void)ctx;
    (void)from;
    (void)msg;
}

static void
noop_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)ctx;
    (void)peer;
    (void)reason;
}

static void
noop_node(SimWorld *world, void *ctx)
{
    (void)world;
    (void)ctx;
}

static const SimNodeOps node_ops = {noop_message, noop_disconnect, noop_node, noop_node};

static int
setup(void **state)
{
    Fixture *fx = g_new0(Fixture, 1);
    fx->world = sim_world_new(11);
    SimNodeId node = sim_node_add(fx->world, "b0", &node_ops, fx);
    fx->disk = sim_node_disk(fx->world, node);
    fx->positions = g_array_new(FALSE, FALSE, sizeof(gint64));
    fx->bases = g_array_new(FALSE, FALSE, sizeof(gint64));
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fixture *fx = *state;
    if (fx->segment != NULL)
        plog_segment_check_invariants(fx->segment, TRUE);
    plog_segment_free(fx->segment);
    g_array_unref(fx->positions);
    g_array_unref(fx->bases);
    sim_world_free(fx->world);
    g_free(fx);
    return 0;
}

static void
fx_create(Fixture *fx, gint64 index_interval_bytes)
{
    fx->segment = plog_segment_create(fx->disk, DIR, 0, index_interval_bytes, 0);
    plog_segment_check_invariants(fx->segment, TRUE);
}

/* ---- batches ---- */

/* Encodes a batch of `records` records of `size_bytes` each at `base_offset`,
 * and decodes its header back. */
static GByteArray *
encode_batch(gint64 base_offset, guint records, guint32 size_bytes, gint64 timestamp_ms,
             PlogBatchHeader *header)
{
    g_autoptr(PlogBatch) batch = plog_batch_new();
    for (guint i = 0; i < records; i++)
        plog_batch_add_record(batch, 0, (guint64)base_offset + i, size_bytes);
    batch->base_offset = base_offset;
    batch->first_timestamp_ms = timestamp_ms;
    batch->max_timestamp_ms = timestamp_ms;
    GByteArray *encoded = g_byte_array_new();
    plog_batch_encode(batch, encoded);
    assert_true(plog_batch_header_decode(encoded->data, encoded->len, header));
    return encoded;
}

/* How many entries the segment's indexes hold. */
static guint
index_count(const PlogSegment *segment)
{
    const PlogIndexEntry *entries;
    guint len = plog_segment_index(segment, &entries);
    assert_true((len == 0) == (entries == NULL));
    return len;
}

static guint
time_index_count(const PlogSegment *segment)
{
    const PlogTimeIndexEntry *entries;
    guint len = plog_segment_time_index(segment, &entries);
    assert_true((len == 0) == (entries == NULL));
    return len;
}

/* Appends a batch at the segment's next offset and remembers where it went. */
static gint64
append(Fixture *fx, guint records, guint32 size_bytes, gint64 timestamp_ms)
{
    gint64 base = plog_segment_next_offset(fx->segment);
    gint64 position = plog_segment_file_bytes(fx->segment);
    PlogBatchHeader header;
    g_autoptr(GByteArray) encoded = encode_batch(base, records, size_bytes, timestamp_ms, &header);
    assert_int_equal(
        plog_segment_append(fx->segment, &header, encoded->data, encoded->len, timestamp_ms),
        SIM_DISK_OK);
    assert_int_equal(plog_segment_next_offset(fx->segment), base + records);
    assert_int_equal(plog_segment_file_bytes(fx->segment), position + (gint64)encoded->len);
    g_array_append_val(fx->positions, position);
    g_array_append_val(fx->bases, base);
    plog_segment_check_invariants(fx->segment, TRUE);
    return base;
}

/* Every offset of the segment is found at the batch the test appended it in. */
static void
assert_lookups_match(Fixture *fx)
{
    gint64 next = plog_segment_next_offset(fx->segment);
    guint batch = 0;
    for (gint64 offset = plog_segment_base_offset(fx->segment); offset < next; offset++) {
        while (batch + 1 < fx->bases->len && g_array_index(fx->bases, gint64, batch + 1) <= offset)
            batch++;
        assert_int_equal(plog_segment_find_position(fx->segment, offset),
                         g_array_index(fx->positions, gint64, batch));
    }
}

/* Forgets the batches the test remembered from `batches` on. */
static void
forget_from(Fixture *fx, guint batches)
{
    g_array_set_size(fx->positions, batches);
    g_array_set_size(fx->bases, batches);
}

static PlogSegment *
recover(Fixture *fx, gint64 verify_from_offset, PlogSegmentRecovery *out)
{
    plog_segment_free(fx->segment);
    fx->segment =
        plog_segment_recover(fx->disk, DIR, 0, 100, verify_from_offset, 50, NULL, NULL, out);
    plog_segment_check_invariants(fx->segment, TRUE);
    return fx->segment;
}

/* ---- tests ---- */

static void
test_plog_segment_append_counts_offsets_and_bytes(void **state)
{
    /* Goal: appends take contiguous offsets, and the logical and file sizes add up. */
    Fixture *fx = *state;
    fx_create(fx, 4096);
    assert_true(plog_segment_is_empty(fx->segment));
    assert_int_equal(plog_segment_max_timestamp_ms(fx->segment), 0);
    static const guint records[] = {1, 5, 3, 10};
    gint64 size_bytes = 0;
    for (guint i = 0; i < G_N_ELEMENTS(records); i++) {
        append(fx, records[i], 20, 100 + i);
        size_bytes += PLOG_BATCH_OVERHEAD_BYTES + 20 * records[i];
    }
    assert_false(plog_segment_is_empty(fx->segment));
    assert_int_equal(plog_segment_next_offset(fx->segment), 19);
    assert_int_equal(plog_segment_size_bytes(fx->segment), size_bytes);
    assert_int_equal(plog_segment_file_bytes(fx->segment), sim_disk_size(fx->disk, LOG_NAME));
    assert_int_equal(plog_segment_max_timestamp_ms(fx->segment), 103);
    assert_lookups_match(fx);
}

typedef struct {
    gint64 index_interval_bytes;
    guint32 record_bytes;
} IndexCase;

static void
test_plog_segment_sparse_index_every_interval(void **state)
{
    /* Goal: a batch gets an index entry exactly when more than the interval
     * was appended since the last one, counted before the batch (Kafka). */
    Fixture *fx = *state;
    static const IndexCase cases[] = {
        {0, 10}, {100, 10}, {171, 10}, {500, 39}, {4096, 100}, {1 << 20, 10},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        if (fx->segment != NULL)
            plog_segment_delete(fx->segment);
        forget_from(fx, 0);
        fx_create(fx, cases[c].index_interval_bytes);
        GArray *expected = g_array_new(FALSE, FALSE, sizeof(PlogIndexEntry));
        gint64 since = 0;
        for (guint i = 0; i < 30; i++) {
            gint64 position = plog_segment_file_bytes(fx->segment);
            gint64 base = append(fx, 1 + i % 4, cases[c].record_bytes, i);
            if (since > cases[c].index_interval_bytes) {
                PlogIndexEntry entry = {(guint32)base, (guint32)position};
                g_array_append_val(expected, entry);
                since = 0;
            }
            since += PLOG_BATCH_OVERHEAD_BYTES + (gint64)cases[c].record_bytes * (1 + i % 4);
        }
        const PlogIndexEntry *index;
        guint len = plog_segment_index(fx->segment, &index);
        assert_int_equal(len, expected->len);
        for (guint i = 0; i < len; i++) {
            assert_int_equal(index[i].relative_offset,
                             g_array_index(expected, PlogIndexEntry, i).relative_offset);
            assert_int_equal(index[i].position,
                             g_array_index(expected, PlogIndexEntry, i).position);
        }
        assert_lookups_match(fx);
        g_array_unref(expected);
    }
}

static void
test_plog_segment_recent_batches_agree_with_index(void **state)
{
    /* Goal: looking up the start of one of the last batches (a follower at
     * its LEO) and of older ones gives the index's answer, also after a
     * truncation and a recovery clear what was remembered. */
    Fixture *fx = *state;
    fx_create(fx, 150);
    for (guint i = 0; i < 40; i++)
        append(fx, 1 + i % 3, 30, i);
    for (guint i = 0; i < fx->bases->len; i++)
        assert_int_equal(
            plog_segment_find_position(fx->segment, g_array_index(fx->bases, gint64, i)),
            g_array_index(fx->positions, gint64, i));
    assert_lookups_match(fx);
    /* Cut back past all eight remembered batches, then append again. */
    gint64 cut = g_array_index(fx->bases, gint64, 25);
    assert_int_equal(plog_segment_truncate_to(fx->segment, cut), cut);
    forget_from(fx, 25);
    plog_segment_check_invariants(fx->segment, TRUE);
    assert_lookups_match(fx);
    for (guint i = 0; i < 3; i++)
        append(fx, 2, 30, 100 + i);
    assert_lookups_match(fx);
    PlogSegmentRecovery recovery;
    recover(fx, 0, &recovery);
    assert_false(recovery.cut);
    assert_lookups_match(fx);
}

static void
test_plog_segment_truncate_inside_a_batch(void **state)
{
    /* Goal: truncating to an offset inside a batch cuts at that batch's start,
     * drops the index entries beyond it, and the next append reuses the offsets. */
    Fixture *fx = *state;
    fx_create(fx, 0);
    for (guint i = 0; i < 6; i++)
        append(fx, 5, 10, i);
    assert_int_equal(index_count(fx->segment), 5);
    assert_int_equal(plog_segment_truncate_to(fx->segment, 100), 30);
    assert_int_equal(plog_segment_truncate_to(fx->segment, 17), 15);
    gint64 cut_position = g_array_index(fx->positions, gint64, 3);
    forget_from(fx, 3);
    assert_int_equal(plog_segment_next_offset(fx->segment), 15);
    assert_int_equal(plog_segment_file_bytes(fx->segment), cut_position);
    assert_int_equal(sim_disk_size(fx->disk, LOG_NAME), plog_segment_file_bytes(fx->segment));
    assert_int_equal(index_count(fx->segment), 2);
    plog_segment_check_invariants(fx->segment, TRUE);
    assert_lookups_match(fx);
    assert_int_equal(append(fx, 4, 10, 9), 15);
    assert_lookups_match(fx);
    assert_int_equal(plog_segment_truncate_to(fx->segment, 0), 0);
    assert_true(plog_segment_is_empty(fx->segment));
    assert_int_equal(index_count(fx->segment), 0);
    assert_int_equal(time_index_count(fx->segment), 0);
}

static void
test_plog_segment_recovery_cuts_a_torn_tail(void **state)
{
    /* Goal: recovery cuts a last batch cut short, keeps the batches before it
     * with the same index, and appends continue from there. */
    Fixture *fx = *state;
    fx_create(fx, 100);
    for (guint i = 0; i < 10; i++)
        append(fx, 3, 40, i);
    gint64 last = g_array_index(fx->positions, gint64, 9);
    const PlogIndexEntry *entries;
    guint len_before = plog_segment_index(fx->segment, &entries);
    g_autoptr(GArray) index_before =
        g_array_sized_new(FALSE, FALSE, sizeof(PlogIndexEntry), len_before);
    g_array_append_vals(index_before, entries, len_before);
    assert_int_equal(sim_disk_truncate(fx->disk, LOG_NAME, last + 20), SIM_DISK_OK);
    PlogSegmentRecovery recovery;
    recover(fx, 0, &recovery);
    assert_true(recovery.cut);
    assert_int_equal(recovery.cut_position, last);
    assert_int_equal(plog_segment_next_offset(fx->segment), 27);
    assert_int_equal(plog_segment_file_bytes(fx->segment), last);
    assert_int_equal(sim_disk_size(fx->disk, LOG_NAME), last);
    forget_from(fx, 9);
    const PlogIndexEntry *index;
    guint len = plog_segment_index(fx->segment, &index);
    guint kept = 0;
    while (kept < index_before->len &&
           g_array_index(index_before, PlogIndexEntry, kept).position < (guint32)last)
        kept++;
    assert_int_equal(len, kept);
    assert_memory_equal(index, index_before->data, kept * sizeof(PlogIndexEntry));
    assert_lookups_match(fx);
    assert_int_equal(append(fx, 2, 40, 20), 27);
    assert_lookups_match(fx);
}

static void
test_plog_segment_recovery_verifies_only_from_an_offset(void **state)
{
    /* Goal: a corrupt batch body is cut when it ends at or after the offset
     * recovery verifies from, and kept (unchecked) before it. */
    Fixture *fx = *state;
    fx_create(fx, 100);
    for (guint i = 0; i < 6; i++)
        append(fx, 5, 40, i);
    gint64 second = g_array_index(fx->positions, gint64, 1);
    static const guint8 garbage[] = {0xde, 0xad, 0xbe, 0xef};
    assert_int_equal(sim_disk_write(fx->disk, LOG_NAME, second + PLOG_BATCH_HEADER_BYTES + 10,
                                    garbage, sizeof garbage),
                     SIM_DISK_OK);
    PlogSegmentRecovery recovery;
    recover(fx, 20, &recovery);
    assert_false(recovery.cut);
    assert_int_equal(recovery.batches_checked, 2); /* the batches ending at 24 and 29 */
    assert_int_equal(plog_segment_next_offset(fx->segment), 30);
    recover(fx, 0, &recovery);
    assert_true(recovery.cut);
    assert_int_equal(recovery.cut_position, second);
    assert_int_equal(plog_segment_next_offset(fx->segment), 5);
    forget_from(fx, 1);
    assert_lookups_match(fx);
}

static void
test_plog_segment_time_index_and_lookup_by_time(void **state)
{
    /* Goal: the time index grows only with a larger timestamp, and a lookup by
     * time names the first batch that reached it. */
    Fixture *fx = *state;
    fx_create(fx, 0);
    static const gint64 timestamps[] = {10, 30, 20, 30, 50, 40};
    for (guint i = 0; i < G_N_ELEMENTS(timestamps); i++)
        append(fx, 2, 10, timestamps[i]);
    const PlogTimeIndexEntry *time_index;
    /* Entries come with index entries (batches 1..5), only when the maximum grew. */
    assert_int_equal(plog_segment_time_index(fx->segment, &time_index), 2);
    assert_int_equal(time_index[0].timestamp_ms, 30);
    assert_int_equal(time_index[0].relative_offset, 2);
    assert_int_equal(time_index[1].timestamp_ms, 50);
    assert_int_equal(time_index[1].relative_offset, 8);
    assert_int_equal(plog_segment_max_timestamp_ms(fx->segment), 50);
    assert_int_equal(plog_segment_offset_for_timestamp(fx->segment, 5), 0);
    assert_int_equal(plog_segment_offset_for_timestamp(fx->segment, 25), 2);
    assert_int_equal(plog_segment_offset_for_timestamp(fx->segment, 45), 8);
    assert_int_equal(plog_segment_offset_for_timestamp(fx->segment, 51), -1);
}

static void
test_plog_segment_should_roll_by_size_and_time(void **state)
{
    /* Goal: an empty segment never rolls; a full one rolls by size, an old
     * one by time (Kafka's LogSegment.shouldRoll). */
    Fixture *fx = *state;
    fx_create(fx, 4096);
    PlogBatchHeader header;
    g_autoptr(GByteArray) encoded = encode_batch(0, 4, 100, 1000, &header);
    gint64 bytes = plog_batch_header_size_bytes(&header);
    assert_false(plog_segment_should_roll(fx->segment, &header, bytes - 1, 10, 1000));
    append(fx, 4, 100, 1000);
    g_autoptr(GByteArray) next = encode_batch(4, 4, 100, 1005, &header);
    assert_false(plog_segment_should_roll(fx->segment, &header, 2 * bytes, 10, 1005));
    assert_true(plog_segment_should_roll(fx->segment, &header, 2 * bytes - 1, 10, 1005));
    g_autoptr(GByteArray) late = encode_batch(4, 4, 100, 1010, &header);
    /* Kafka rolls when the time waited exceeds segment.ms, not when it equals it. */
    assert_true(plog_segment_should_roll(fx->segment, &header, 1 << 30, 9, 1010));
    assert_false(plog_segment_should_roll(fx->segment, &header, 1 << 30, 10, 1010));
}

static void
test_plog_segment_full_disk_changes_nothing(void **state)
{
    /* Goal: an append the disk refuses leaves the segment and its file as they were. */
    Fixture *fx = *state;
    fx_create(fx, 0);
    for (guint i = 0; i < 3; i++)
        append(fx, 2, 10, i);
    gint64 file_bytes = plog_segment_file_bytes(fx->segment);
    guint index_len = index_count(fx->segment);
    sim_disk_set_full(fx->disk, TRUE);
    PlogBatchHeader header;
    g_autoptr(GByteArray) encoded = encode_batch(6, 2, 10, 3, &header);
    assert_int_not_equal(plog_segment_append(fx->segment, &header, encoded->data, encoded->len, 3),
                         SIM_DISK_OK);
    assert_int_equal(plog_segment_next_offset(fx->segment), 6);
    assert_int_equal(plog_segment_file_bytes(fx->segment), file_bytes);
    assert_int_equal(index_count(fx->segment), index_len);
    plog_segment_check_invariants(fx->segment, TRUE);
    sim_disk_set_full(fx->disk, FALSE);
    assert_int_equal(append(fx, 2, 10, 3), 6);
    assert_lookups_match(fx);
}

static void
test_plog_segment_delete_removes_its_files(void **state)
{
    /* Goal: delete removes the three files; free keeps them for recovery. */
    Fixture *fx = *state;
    fx_create(fx, 0);
    append(fx, 2, 10, 0);
    g_autoptr(GPtrArray) files = sim_disk_list(fx->disk, DIR "/");
    assert_int_equal(files->len, 3);
    plog_segment_delete(fx->segment);
    fx->segment = NULL;
    g_autoptr(GPtrArray) none = sim_disk_list(fx->disk, DIR "/");
    assert_int_equal(none->len, 0);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(test_plog_segment_append_counts_offsets_and_bytes),
        TEST(test_plog_segment_sparse_index_every_interval),
        TEST(test_plog_segment_recent_batches_agree_with_index),
        TEST(test_plog_segment_truncate_inside_a_batch),
        TEST(test_plog_segment_recovery_cuts_a_torn_tail),
        TEST(test_plog_segment_recovery_verifies_only_from_an_offset),
        TEST(test_plog_segment_time_index_and_lookup_by_time),
        TEST(test_plog_segment_should_roll_by_size_and_time),
        TEST(test_plog_segment_full_disk_changes_nothing),
        TEST(test_plog_segment_delete_removes_its_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
