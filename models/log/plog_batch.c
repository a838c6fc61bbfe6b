/*
 * plog_batch: record batches and their on-disk encoding (see plog_batch.h for
 * the layout).
 *
 * Invariants of a well-formed batch (plog_batch_check):
 *  1. record_count == records->len, between 1 and PLOG_BATCH_RECORDS_MAX.
 *  2. The timestamps are both PLOG_NO_TIMESTAMP, or 0 <= first <= max.
 *  3. The logical size is at most PLOG_BATCH_SIZE_BYTES_MAX.
 *  4. Optional fields are either their "none" value or valid: producer_id,
 *     producer_epoch, base_sequence and leader_epoch are >= -1; attributes use
 *     only PLOG_BATCH_FLAGS_ALL.
 *
 * An encoded batch is trusted only after plog_batch_decode verified its
 * checksum and consumed exactly its body; plog_batch_header_decode rejects
 * headers whose fields are implausible so that scans of data below the
 * recovery point (which skip the checksum) still stop at garbage.
 */
#include "plog_batch.h"

#include "sim_assert.h"

#include <string.h>
#include <xxhash.h>

/* A record's varints take at least one byte each and at most 10 + 10 + 5. */
#define RECORD_ENCODED_MIN 3
#define RECORD_ENCODED_MAX 25
#define VARINT_BYTES_MAX 10
#define CHECKSUM_SEED 0x6b73696du /* "ksim" */

G_STATIC_ASSERT(PLOG_BATCH_HEADER_BYTES == 60);
G_STATIC_ASSERT((gint64)PLOG_BATCH_RECORDS_MAX *RECORD_ENCODED_MAX < (gint64)G_MAXUINT32);

/* ---- construction ---- */

PlogBatch *
plog_batch_new(void)
{
    PlogBatch *batch = g_new0(PlogBatch, 1);
    batch->base_offset = PLOG_NO_OFFSET;
    batch->producer_id = PLOG_NO_PRODUCER_ID;
    batch->producer_epoch = PLOG_NO_PRODUCER_EPOCH;
    batch->base_sequence = PLOG_NO_SEQUENCE;
    batch->leader_epoch = PLOG_NO_LEADER_EPOCH;
    batch->records = g_array_new(FALSE, FALSE, sizeof(PlogRecord));
    return batch;
}

void
plog_batch_free(PlogBatch *batch)
{
    if (batch == NULL)
        return;
    g_array_unref(batch->records);
    g_free(batch);
}


PlogBatch *
plog_batch_copy(const PlogBatch *batch)
{
    KSIM_ASSERT(batch != NULL);
    KSIM_ASSERT(batch->records != NULL);
    PlogBatch *copy = g_new(PlogBatch, 1);
    *copy = *batch;
    copy->records = g_array_sized_new(FALSE, FALSE, sizeof(PlogRecord), batch->records->len);
    g_array_append_vals(copy->records, batch->records->data, batch->records->len);
    return copy;
}

void
plog_batch_add_records(PlogBatch *batch, const PlogRecord *records, guint n)
{
    KSIM_ASSERT(batch->record_count == (gint32)batch->records->len);
    KSIM_ASSERT((guint)batch->record_count + n <= PLOG_BATCH_RECORDS_MAX);
    g_array_append_vals(batch->records, records, n);
    batch->record_count += (gint32)n;
    for (guint i = 0; i < n; i++)
        batch->records_bytes += records[i].size_bytes;
}

void
plog_batch_add_record(PlogBatch *batch, guint64 key, guint64 value, guint32 size_bytes)
{
    KSIM_ASSERT(batch->record_count == (gint32)batch->records->len);
    KSIM_ASSERT(batch->record_count < PLOG_BATCH_RECORDS_MAX);
    PlogRecord record = {.key = key, .value = value, .size_bytes = size_bytes};
    g_array_append_val(batch->records, record);
    batch->record_count++;
    batch->records_bytes += size_bytes;
}

GPtrArray *
plog_batch_array_new(void)
{
    return g_ptr_array_new_with_free_func((GDestroyNotify)plog_batch_free);
}

/* ---- sizes, offsets and sequences ---- */

static gint64
records_bytes_sum(const PlogBatch *batch)
{
    gint64 sum = 0;
    const PlogRecord *records = (const PlogRecord *)batch->records->data;
    for (guint i = 0; i < batch->records->len; i++)
        sum += records[i].size_bytes;
    return sum;
}

gint64
plog_batch_size_bytes(const PlogBatch *batch)
{
    /* Kept as records are added: sizes are asked for on every hot path
     * (append, roll, read limits, message sizes). */
    KSIM_PARANOID_ASSERT(batch->records_bytes == records_bytes_sum(batch));
    return PLOG_BATCH_OVERHEAD_BYTES + batch->records_bytes;
}

gint64
plog_batch_last_offset(const PlogBatch *batch)
{
    KSIM_ASSERT(batch->base_offset >= 0);
    KSIM_ASSERT(batch->record_count >= 1);
    return batch->base_offset + batch->record_count - 1;
}

gint32
plog_sequence_add(gint32 sequence, gint32 increment)
{
    KSIM_ASSERT(sequence >= 0);
    KSIM_ASSERT(increment >= 0);
    if (sequence > G_MAXINT32 - increment)
        return increment - (G_MAXINT32 - sequence) - 1;
    return sequence + increment;
}

gint32
plog_batch_last_sequence(const PlogBatch *batch)
{
    KSIM_ASSERT(batch->base_sequence >= 0);
    KSIM_ASSERT(batch->record_count >= 1);
    return plog_sequence_add(batch->base_sequence, batch->record_count - 1);
}

gboolean
plog_batch_equal(const PlogBatch *a, const PlogBatch *b)
{
    if (a->base_offset != b->base_offset || a->record_count != b->record_count)
        return FALSE;
    if (a->producer_id != b->producer_id || a->producer_epoch != b->producer_epoch)
        return FALSE;
    if (a->base_sequence != b->base_sequence || a->leader_epoch != b->leader_epoch)
        return FALSE;
    if (a->first_timestamp_ms != b->first_timestamp_ms)
        return FALSE;
    if (a->max_timestamp_ms != b->max_timestamp_ms || a->attributes != b->attributes)
        return FALSE;
    if (a->records->len != b->records->len)
        return FALSE;
    /* PlogRecord has padding after size_bytes, so compare field by field. */
    for (guint i = 0; i < a->records->len; i++) {
        const PlogRecord *x = &g_array_index(a->records, PlogRecord, i);
        const PlogRecord *y = &g_array_index(b->records, PlogRecord, i);
        if (x->key != y->key || x->value != y->value || x->size_bytes != y->size_bytes)
            return FALSE;
    }
    return TRUE;
}

static gboolean
timestamps_valid(gint64 first_timestamp_ms, gint64 max_timestamp_ms)
{
    if (first_timestamp_ms == PLOG_NO_TIMESTAMP)
        return max_timestamp_ms == PLOG_NO_TIMESTAMP;
    return first_timestamp_ms >= 0 && max_timestamp_ms >= first_timestamp_ms;
}

void
plog_batch_check(const PlogBatch *batch)
{
    KSIM_ASSERT(batch != NULL);
    KSIM_ASSERT(batch->records != NULL);
    KSIM_ASSERT(batch->record_count == (gint32)batch->records->len);
    KSIM_ASSERT(batch->record_count >= 1);
    KSIM_ASSERT(batch->record_count <= PLOG_BATCH_RECORDS_MAX);
    KSIM_ASSERT(timestamps_valid(batch->first_timestamp_ms, batch->max_timestamp_ms));
    KSIM_ASSERT(batch->producer_id >= PLOG_NO_PRODUCER_ID);
    KSIM_ASSERT(batch->producer_epoch >= PLOG_NO_PRODUCER_EPOCH);
    KSIM_ASSERT(batch->base_sequence >= PLOG_NO_SEQUENCE);
    KSIM_ASSERT(batch->leader_epoch >= PLOG_NO_LEADER_EPOCH);
    KSIM_ASSERT((batch->attributes & ~PLOG_BATCH_FLAGS_ALL) == 0);
    KSIM_ASSERT(plog_batch_size_bytes(batch) <= PLOG_BATCH_SIZE_BYTES_MAX);
}

/* ---- little-endian fields and varints ---- */

static void
put_u16(guint8 *p, guint16 v)
{
    p[0] = (guint8)v;
    p[1] = (guint8)(v >> 8);
}

static void
put_u32(guint8 *p, guint32 v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (guint8)(v >> (8 * i));
}

static void
put_u64(guint8 *p, guint64 v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (guint8)(v >> (8 * i));
}

static guint16
get_u16(const guint8 *p)
{
    return (guint16)(p[0] | (p[1] << 8));
}

static guint32
get_u32(const guint8 *p)
{
    return (guint32)p[0] | ((guint32)p[1] << 8) | ((guint32)p[2] << 16) | ((guint32)p[3] << 24);
}

static guint64
get_u64(const guint8 *p)
{
    return (guint64)get_u32(p) | ((guint64)get_u32(p + 4) << 32);
}

static gsize
put_varint(guint8 *p, guint64 v)
{
    gsize n = 0;
    while (v >= 0x80) {
        p[n++] = (guint8)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (guint8)v;
    KSIM_ASSERT(n <= VARINT_BYTES_MAX);
    return n;
}

/* Reads a varint from [*p, end); FALSE when it runs past `end` or is longer
 * than a 64-bit varint can be. */
static inline gboolean
get_varint(const guint8 **p, const guint8 *end, guint64 *out)
{
    /* Most of a record's varints (keys, value differences, sizes < 128) are
     * one byte. */
    if (*p < end && **p < 0x80) {
        *out = *(*p)++;
        return TRUE;
    }
    guint64 v = 0;
    for (int shift = 0; shift < 7 * VARINT_BYTES_MAX; shift += 7) {
        if (*p >= end)
            return FALSE;
        guint8 byte = *(*p)++;
        v |= (guint64)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *out = v;
            return TRUE;
        }
    }
    return FALSE;
}

/* Zigzag maps small negative and positive differences to small unsigned
 * numbers; the wrapping difference of two guint64 values round-trips. */
static guint64
zigzag_encode(guint64 diff)
{
    return (diff << 1) ^ (guint64)((gint64)diff >> 63);
}

static guint64
zigzag_decode(guint64 v)
{
    return (v >> 1) ^ (~(v & 1) + 1);
}

/* ---- encoding ---- */

static void
header_encode(const PlogBatch *batch, guint32 body_bytes, guint32 records_bytes, guint8 *p)
{
    put_u32(p + 4, body_bytes);
    put_u64(p + 8, (guint64)batch->base_offset);
    put_u32(p + 16, (guint32)batch->record_count);
    put_u32(p + 20, records_bytes);
    put_u64(p + 24, (guint64)batch->producer_id);
    put_u16(p + 32, (guint16)batch->producer_epoch);
    put_u16(p + 34, batch->attributes);
    put_u32(p + 36, (guint32)batch->base_sequence);
    put_u32(p + 40, (guint32)batch->leader_epoch);
    put_u64(p + 44, (guint64)batch->first_timestamp_ms);
    put_u64(p + 52, (guint64)batch->max_timestamp_ms);
}

void
plog_batch_encode(const PlogBatch *batch, GByteArray *out)
{
    plog_batch_check(batch);
    KSIM_ASSERT(batch->base_offset >= 0);
    guint start = out->len;
    gsize capacity = PLOG_BATCH_HEADER_BYTES + (gsize)batch->records->len * RECORD_ENCODED_MAX;
    g_byte_array_set_size(out, start + (guint)capacity);
    guint8 *base = out->data + start;
    guint8 *p = base + PLOG_BATCH_HEADER_BYTES;
    guint64 previous_value = 0;
    guint64 records_bytes = 0;
    const PlogRecord *records = (const PlogRecord *)batch->records->data;
    for (guint i = 0; i < batch->records->len; i++) {
        p += put_varint(p, records[i].key);
        p += put_varint(p, zigzag_encode(records[i].value - previous_value));
        p += put_varint(p, records[i].size_bytes);
        previous_value = records[i].value;
        records_bytes += records[i].size_bytes;
    }
    gsize body_bytes = (gsize)(p - base) - PLOG_BATCH_HEADER_BYTES;
    KSIM_ASSERT(body_bytes <= capacity - PLOG_BATCH_HEADER_BYTES);
    KSIM_ASSERT(records_bytes <= (guint64)PLOG_BATCH_SIZE_BYTES_MAX);
    header_encode(batch, (guint32)body_bytes, (guint32)records_bytes, base);
    gsize encoded_bytes = PLOG_BATCH_HEADER_BYTES + body_bytes;
    put_u32(base, XXH32(base + 4, encoded_bytes - 4, CHECKSUM_SEED));
    g_byte_array_set_size(out, start + (guint)encoded_bytes);
}

/* ---- decoding ---- */

static gboolean
header_plausible(const PlogBatchHeader *h)
{
    if (h->base_offset < 0 || h->record_count < 1 || h->record_count > PLOG_BATCH_RECORDS_MAX)
        return FALSE;
    if (h->body_bytes < (guint32)h->record_count * RECORD_ENCODED_MIN)
        return FALSE;
    if (h->body_bytes > (guint32)h->record_count * RECORD_ENCODED_MAX)
        return FALSE;
    if ((gint64)h->records_bytes > PLOG_BATCH_SIZE_BYTES_MAX - PLOG_BATCH_OVERHEAD_BYTES)
        return FALSE;
    if (h->base_offset > G_MAXINT64 - h->record_count)
        return FALSE;
    if (h->producer_id < PLOG_NO_PRODUCER_ID || h->producer_epoch < PLOG_NO_PRODUCER_EPOCH)
        return FALSE;
    if (h->base_sequence < PLOG_NO_SEQUENCE || h->leader_epoch < PLOG_NO_LEADER_EPOCH)
        return FALSE;
    if ((h->attributes & ~PLOG_BATCH_FLAGS_ALL) != 0)
        return FALSE;
    return timestamps_valid(h->first_timestamp_ms, h->max_timestamp_ms);
}

gboolean
plog_batch_header_decode(const guint8 *data, gsize len, PlogBatchHeader *out)
{
    KSIM_ASSERT(data != NULL);
    KSIM_ASSERT(out != NULL);
    if (len < PLOG_BATCH_HEADER_BYTES)
        return FALSE;
    out->checksum = get_u32(data);
    out->body_bytes = get_u32(data + 4);
    out->base_offset = (gint64)get_u64(data + 8);
    out->record_count = (gint32)get_u32(data + 16);
    out->records_bytes = get_u32(data + 20);
    out->producer_id = (gint64)get_u64(data + 24);
    out->producer_epoch = (gint16)get_u16(data + 32);
    out->attributes = get_u16(data + 34);
    out->base_sequence = (gint32)get_u32(data + 36);
    out->leader_epoch = (gint32)get_u32(data + 40);
    out->first_timestamp_ms = (gint64)get_u64(data + 44);
    out->max_timestamp_ms = (gint64)get_u64(data + 52);
    return header_plausible(out);
}

static PlogBatch *
batch_from_header(const PlogBatchHeader *h)
{
    PlogBatch *batch = plog_batch_new();
    batch->base_offset = h->base_offset;
    batch->producer_id = h->producer_id;
    batch->producer_epoch = h->producer_epoch;
    batch->base_sequence = h->base_sequence;
    batch->leader_epoch = h->leader_epoch;
    batch->first_timestamp_ms = h->first_timestamp_ms;
    batch->max_timestamp_ms = h->max_timestamp_ms;
    batch->attributes = h->attributes;
    g_array_set_size(batch->records, (guint)h->record_count);
    batch->record_count = h->record_count;
    return batch;
}

/* Decodes the body into `batch`'s records; FALSE unless it holds exactly
 * record_count records whose sizes add up to the header's records_bytes. */
static gboolean
body_walk(const guint8 *p, const guint8 *end, const PlogBatchHeader *h, PlogRecord *records,
          guint64 *values)
{
    guint64 previous_value = 0;
    guint64 records_bytes = 0;
    for (gint32 i = 0; i < h->record_count; i++) {
        guint64 key, diff, size;
        if (!get_varint(&p, end, &key) || !get_varint(&p, end, &diff))
            return FALSE;
        if (!get_varint(&p, end, &size) || size > G_MAXUINT32)
            return FALSE;
        guint64 value = previous_value + zigzag_decode(diff);
        if (records != NULL)
            records[i] = (PlogRecord){key, value, (guint32)size};
        if (values != NULL)
            values[i] = value;
        previous_value = value;
        records_bytes += size;
    }
    return p == end && records_bytes == h->records_bytes;
}

static gboolean
body_decode(const guint8 *p, const guint8 *end, const PlogBatchHeader *h, PlogBatch *batch)
{
    return body_walk(p, end, h, (PlogRecord *)batch->records->data, NULL);
}

gboolean
plog_batch_decode_values(const guint8 *data, gsize len, const PlogBatchHeader *header,
                         guint64 *values)
{
    return body_walk(data + PLOG_BATCH_HEADER_BYTES, data + len, header, NULL, values);
}

gsize
plog_batches_whole_bytes(const guint8 *data, gsize len)
{
    gsize whole = 0;
    while (whole < len) {
        PlogBatchHeader header;
        gsize left = len - whole;
        if (!plog_batch_header_decode(data + whole, left, &header))
            break;
        gsize bytes = (gsize)plog_batch_header_encoded_bytes(&header);
        if (bytes > left || !plog_batch_verify(data + whole, bytes, &header))
            break;
        whole += bytes;
    }
    return whole;
}

gboolean
plog_batch_verify(const guint8 *data, gsize len, PlogBatchHeader *header)
{
    if (!plog_batch_header_decode(data, len, header))
        return FALSE;
    if (len != (gsize)plog_batch_header_encoded_bytes(header))
        return FALSE;
    return XXH32(data + 4, len - 4, CHECKSUM_SEED) == header->checksum;
}

PlogBatch *
plog_batch_decode(const guint8 *data, gsize len)
{
    PlogBatchHeader h;
    if (!plog_batch_header_decode(data, len, &h))
        return NULL;
    if (len != (gsize)plog_batch_header_encoded_bytes(&h))
        return NULL;
    if (XXH32(data + 4, len - 4, CHECKSUM_SEED) != h.checksum)
        return NULL;
    PlogBatch *batch = batch_from_header(&h);
    if (!body_decode(data + PLOG_BATCH_HEADER_BYTES, data + len, &h, batch)) {
        plog_batch_free(batch);
        return NULL;
    }
    batch->records_bytes = h.records_bytes;
    return batch;
}

gint64
plog_batch_header_size_bytes(const PlogBatchHeader *header)
{
    return PLOG_BATCH_OVERHEAD_BYTES + (gint64)header->records_bytes;
}

gint64
plog_batch_header_encoded_bytes(const PlogBatchHeader *header)
{
    return PLOG_BATCH_HEADER_BYTES + (gint64)header->body_bytes;
}

gint64
plog_batch_header_last_offset(const PlogBatchHeader *header)
{
    KSIM_ASSERT(header->record_count >= 1);
    return header->base_offset + header->record_count - 1;
}
