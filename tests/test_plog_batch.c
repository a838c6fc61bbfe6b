/*
 * Unit tests for plog_batch: logical sizes, sequence arithmetic, and the
 * on-disk encoding (round trips, compactness, and detection of torn or
 * corrupt bytes).
 */
#include "plog_batch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* ---- helpers ---- */

static PlogBatch *
batch_with_values(gint64 base_offset, const guint64 *values, guint count, guint32 size_bytes)
{
    PlogBatch *batch = plog_batch_new();
    batch->base_offset = base_offset;
    for (guint i = 0; i < count; i++)
        plog_batch_add_record(batch, i % 3 == 0 ? 0 : values[i] * 7 + 1, values[i], size_bytes);
    return batch;
}

static GByteArray *
encode(const PlogBatch *batch)
{
    GByteArray *bytes = g_byte_array_new();
    plog_batch_encode(batch, bytes);
    return bytes;
}

/* ---- tests ---- */

static void
test_plog_batch_size_and_last_offset(void **state)
{
    /* Goal: the logical size is Kafka's overhead plus the record sizes. */
    (void)state;
    static const guint64 values[] = {10, 11, 12};
    g_autoptr(PlogBatch) batch = batch_with_values(100, values, 3, 250);
    assert_int_equal(batch->record_count, 3);
    assert_int_equal(plog_batch_size_bytes(batch), PLOG_BATCH_OVERHEAD_BYTES + 750);
    assert_int_equal(plog_batch_last_offset(batch), 102);
    batch->base_sequence = G_MAXINT32 - 1;
    assert_int_equal(plog_batch_last_sequence(batch), 0);
}

static void
test_plog_batch_sequence_add_wraps(void **state)
{
    /* Goal: sequences wrap from G_MAXINT32 to 0 as Kafka's incrementSequence. */
    (void)state;
    static const struct {
        gint32 sequence;
        gint32 increment;
        gint32 expected;
    } cases[] = {
        {0, 0, 0},
        {5, 3, 8},
        {G_MAXINT32, 0, G_MAXINT32},
        {G_MAXINT32, 1, 0},
        {G_MAXINT32 - 1, 2, 0},
        {G_MAXINT32 - 2, 5, 2},
        {G_MAXINT32 - 10, 10, G_MAXINT32},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_int_equal(plog_sequence_add(cases[i].sequence, cases[i].increment),
                         cases[i].expected);
}

static void
test_plog_batch_round_trip(void **state)
{
    /* Goal: every field and record survives encode then decode, including
     * extreme values, decreasing values and batches without timestamps. */
    (void)state;
    static const guint64 values[] = {0, 1, G_MAXUINT64, 5, G_MAXUINT64 - 1, 1ull << 63, 42, 41};
    static const struct {
        gint64 producer_id;
        gint16 producer_epoch;
        gint32 base_sequence;
        gint32 leader_epoch;
        gint64 first_ms;
        gint64 max_ms;
        guint16 attributes;
        guint32 size_bytes;
    } cases[] = {
        {-1, -1, -1, -1, 0, 0, 0, 100},
        {7, 3, 12, 9, 1000, 5000, PLOG_BATCH_TRANSACTIONAL, 0},
        {G_MAXINT64, G_MAXINT16, G_MAXINT32, G_MAXINT32, 1, 1, PLOG_BATCH_FLAGS_ALL, G_MAXUINT16},
        {3, 0, 0, 0, PLOG_NO_TIMESTAMP, PLOG_NO_TIMESTAMP, PLOG_BATCH_CONTROL, 1},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(PlogBatch) batch =
            batch_with_values(1234567, values, G_N_ELEMENTS(values), cases[i].size_bytes);
        batch->producer_id = cases[i].producer_id;
        batch->producer_epoch = cases[i].producer_epoch;
        batch->base_sequence = cases[i].base_sequence;
        batch->leader_epoch = cases[i].leader_epoch;
        batch->first_timestamp_ms = cases[i].first_ms;
        batch->max_timestamp_ms = cases[i].max_ms;
        batch->attributes = cases[i].attributes;
        g_autoptr(GByteArray) bytes = encode(batch);
        g_autoptr(PlogBatch) decoded = plog_batch_decode(bytes->data, bytes->len);
        assert_non_null(decoded);
        assert_true(plog_batch_equal(batch, decoded));
        PlogBatchHeader header;
        assert_true(plog_batch_header_decode(bytes->data, bytes->len, &header));
        assert_int_equal(plog_batch_header_encoded_bytes(&header), bytes->len);
        assert_int_equal(plog_batch_header_size_bytes(&header), plog_batch_size_bytes(batch));
        assert_int_equal(plog_batch_header_last_offset(&header), plog_batch_last_offset(batch));
    }
}

static void
test_plog_batch_encoding_is_compact(void **state)
{
    /* Goal: a 100-record batch of consecutive values takes about 3 bytes per
     * record on disk, the budget behind the log's memory target. */
    (void)state;
    guint64 values[100];
    for (guint i = 0; i < 100; i++)
        values[i] = 9000000 + i;
    g_autoptr(PlogBatch) batch = plog_batch_new();
    batch->base_offset = 0;
    for (guint i = 0; i < 100; i++)
        plog_batch_add_record(batch, 0, values[i], 100);
    g_autoptr(GByteArray) bytes = encode(batch);
    assert_true(bytes->len <= PLOG_BATCH_HEADER_BYTES + 3 * 100 + 3);
}

static void
test_plog_batch_detects_every_corrupt_byte(void **state)
{
    /* Goal: flipping any byte, or cutting the encoding short anywhere, is
     * detected by decode. */
    (void)state;
    static const guint64 values[] = {100, 101, 102, 200, 7};
    g_autoptr(PlogBatch) batch = batch_with_values(77, values, G_N_ELEMENTS(values), 100);
    batch->producer_id = 5;
    batch->base_sequence = 3;
    g_autoptr(GByteArray) bytes = encode(batch);
    for (guint i = 0; i < bytes->len; i++) {
        for (guint bit = 0; bit < 8; bit++) {
            bytes->data[i] ^= (guint8)(1u << bit);
            PlogBatch *decoded = plog_batch_decode(bytes->data, bytes->len);
            assert_null(decoded);
            bytes->data[i] ^= (guint8)(1u << bit);
        }
    }
    for (guint len = 0; len < bytes->len; len++)
        assert_null(plog_batch_decode(bytes->data, len));
    g_autoptr(PlogBatch) intact = plog_batch_decode(bytes->data, bytes->len);
    assert_non_null(intact);
}

static void
test_plog_batch_rejects_implausible_headers(void **state)
{
    /* Goal: headers that no append could have written are rejected without
     * reading the body: zero records, bad timestamps, unknown flags, garbage. */
    (void)state;
    static const guint64 values[] = {1, 2};
    g_autoptr(PlogBatch) batch = batch_with_values(0, values, 2, 10);
    g_autoptr(GByteArray) bytes = encode(batch);
    PlogBatchHeader header;
    assert_true(plog_batch_header_decode(bytes->data, bytes->len, &header));
    static const struct {
        guint offset;
        guint8 value;
    } cases[] = {
        {16, 0},    /* record_count 0 (low byte of 2) */
        {19, 0x80}, /* record_count negative */
        {15, 0x80}, /* base offset negative */
        {35, 0x80}, /* unknown attribute flag */
        {51, 0x80}, /* first timestamp negative but not -1 */
        {7, 0x7f},  /* body far too long for two records */
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        guint8 copy[PLOG_BATCH_HEADER_BYTES];
        memcpy(copy, bytes->data, sizeof copy);
        copy[cases[i].offset] = cases[i].value;
        assert_false(plog_batch_header_decode(copy, sizeof copy, &header));
    }
    assert_false(plog_batch_header_decode(bytes->data, PLOG_BATCH_HEADER_BYTES - 1, &header));
}

/* plog_batches_whole_bytes: batches end to end are whole up to the first
 * that does not verify (a changed byte) or is cut short, or to the end. */
static void
test_plog_batches_whole_bytes_stops_at_the_first_bad_batch(void **state)
{
    (void)state;
    static const guint64 values[] = {5, 6, 7, 8, 9};
    g_autoptr(GByteArray) all = g_byte_array_new();
    gsize ends[3];
    for (guint b = 0; b < 3; b++) {
        g_autoptr(PlogBatch) batch = batch_with_values(b * 5, values, 5, 100);
        plog_batch_encode(batch, all);
        ends[b] = all->len;
    }
    assert_int_equal(plog_batches_whole_bytes(all->data, all->len), ends[2]);
    assert_int_equal(plog_batches_whole_bytes(all->data, 0), 0);
    assert_int_equal(plog_batches_whole_bytes(all->data, ends[2] - 1), ends[1]);
    assert_int_equal(plog_batches_whole_bytes(all->data, ends[0] + 3), ends[0]);
    all->data[ends[1] - 2] ^= 0x10; /* in the second batch's body */
    assert_int_equal(plog_batches_whole_bytes(all->data, all->len), ends[0]);
    all->data[ends[1] - 2] ^= 0x10;
    all->data[0] ^= 0x01; /* the first batch's checksum */
    assert_int_equal(plog_batches_whole_bytes(all->data, all->len), 0);
}

static void
test_plog_batch_copy_is_deep(void **state)
{
    /* Goal: a copy owns its records. */
    (void)state;
    static const guint64 values[] = {1, 2, 3};
    g_autoptr(PlogBatch) batch = batch_with_values(0, values, 3, 10);
    g_autoptr(PlogBatch) copy = plog_batch_copy(batch);
    assert_true(plog_batch_equal(batch, copy));
    g_array_index(copy->records, PlogRecord, 1).value = 99;
    assert_false(plog_batch_equal(batch, copy));
    assert_int_equal(g_array_index(batch->records, PlogRecord, 1).value, 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plog_batch_size_and_last_offset),
        cmocka_unit_test(test_plog_batch_sequence_add_wraps),
        cmocka_unit_test(test_plog_batch_round_trip),
        cmocka_unit_test(test_plog_batch_encoding_is_compact),
        cmocka_unit_test(test_plog_batch_detects_every_corrupt_byte),
        cmocka_unit_test(test_plog_batch_rejects_implausible_headers),
        cmocka_unit_test(test_plog_batch_copy_is_deep),
        cmocka_unit_test(test_plog_batches_whole_bytes_stops_at_the_first_bad_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
