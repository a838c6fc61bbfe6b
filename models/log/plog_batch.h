/*
 * plog_batch: record batches as a partition log keeps them, and their
 * encoding on the simulated disk.
 *
 * A batch is what Kafka's v2 RecordBatch is: a base offset, a record count, the
 * producer's id, epoch and base sequence, the partition leader epoch of the
 * leader that appended it, the first and the largest timestamp, attribute flags,
 * and the records. A record here is its key, the unique value the checker
 * follows (or, on internal topics, a payload such as a committed offset), and
 * its size.
 *
 * Sizes. A batch's logical size is Kafka's batch overhead plus the sum of its
 * records' sizes (plog_batch_size_bytes). Logical sizes drive segment rolls,
 * read byte limits, retention by bytes, the index interval and the network;
 * the payload bytes themselves are never stored.
 *
 * Encoding (little endian), PLOG_BATCH_HEADER_BYTES of header then the body:
 *
 *     0  u32 checksum         XXH32 of every byte after this field
 *     4  u32 body_bytes       the bytes of the body that follows the header
 *     8  i64 base_offset
 *    16  i32 record_count
 *    20  u32 records_bytes    the sum of the records' sizes
 *    24  i64 producer_id
 *    32  i16 producer_epoch
 *    34  u16 attributes
 *    36  i32 base_sequence
 *    40  i32 leader_epoch
 *    44  i64 first_timestamp_ms
 *    52  i64 max_timestamp_ms
 *    60  body: per record, LEB128 varints of the key, the zigzag difference of
 *        the value from the previous record's (0 before the first), the size.
 *
 * The value difference keeps a producer's consecutive values at one byte each,
 * so a record costs about three bytes on disk; a 100-record batch about 360.
 *
 * Ownership: a PlogBatch owns its `records` array. Functions that return a
 * batch return a new one that the caller frees with plog_batch_free.
 */
#ifndef PLOG_BATCH_H
#define PLOG_BATCH_H

#include <glib.h>

typedef struct {
    guint64 key;        /* 0: no key */
    guint64 value;      /* the value the checker follows, or an internal payload */
    guint32 size_bytes; /* the record's size as counted; the payload is not stored */
} PlogRecord;

typedef enum {
    PLOG_BATCH_TRANSACTIONAL = 1 << 0,
    PLOG_BATCH_CONTROL = 1 << 1,
    /* A control batch that commits its producer's transaction (without it, a
     * control batch aborts). Kafka keeps the marker type only in the control
     * record's key (ControlRecordType: 0 ABORT, 1 COMMIT; ksim writes that
     * key too); ksim also carries it in the header so that a log's
     * transaction state can be rebuilt from batch headers alone, as its
     * producer state is. */
    PLOG_BATCH_CONTROL_COMMIT = 1 << 2,
    /* Kafka's timestamp-type attribute bit (0x08): the timestamps are the
     * leader's LogAppendTime, not the producer's CreateTime. */
    PLOG_BATCH_LOG_APPEND_TIME = 1 << 3,
} PlogBatchFlags;

#define PLOG_BATCH_FLAGS_ALL                                                                       \
    (PLOG_BATCH_TRANSACTIONAL | PLOG_BATCH_CONTROL | PLOG_BATCH_CONTROL_COMMIT |                   \
     PLOG_BATCH_LOG_APPEND_TIME)
/* Kafka's ControlRecordType keys of a marker's one record. */
#define PLOG_CONTROL_ABORT_KEY 0
#define PLOG_CONTROL_COMMIT_KEY 1

#define PLOG_NO_OFFSET G_GINT64_CONSTANT(-1)
#define PLOG_NO_PRODUCER_ID G_GINT64_CONSTANT(-1)
#define PLOG_NO_PRODUCER_EPOCH (-1)
#define PLOG_NO_SEQUENCE (-1)
#define PLOG_NO_LEADER_EPOCH (-1)
/* Kafka's RecordBatch.NO_TIMESTAMP: a batch whose records carry no time. */
#define PLOG_NO_TIMESTAMP G_GINT64_CONSTANT(-1)

/* Kafka's v2 batch header, counted in every batch's logical size. */
#define PLOG_BATCH_OVERHEAD_BYTES 61
/* The header's size on the simulated disk. */
#define PLOG_BATCH_HEADER_BYTES 60
/* Bounds a batch must respect (Kafka's max.message.bytes keeps real batches
 * far below them). */
#define PLOG_BATCH_RECORDS_MAX (1 << 20)
#define PLOG_BATCH_SIZE_BYTES_MAX ((gint64)G_MAXINT32)

typedef struct {
    gint64 base_offset;        /* set by plog_append; PLOG_NO_OFFSET before */
    gint32 record_count;       /* always records->len */
    gint64 producer_id;        /* PLOG_NO_PRODUCER_ID: not idempotent */
    gint16 producer_epoch;     /* PLOG_NO_PRODUCER_EPOCH: none */
    gint32 base_sequence;      /* PLOG_NO_SEQUENCE: none */
    gint32 leader_epoch;       /* the appending leader's epoch; PLOG_NO_LEADER_EPOCH: none */
    gint64 first_timestamp_ms; /* the first record's timestamp; PLOG_NO_TIMESTAMP: none */
    gint64 max_timestamp_ms;   /* the largest record timestamp; PLOG_NO_TIMESTAMP: none */
    guint16 attributes;        /* PlogBatchFlags */
    GArray *records;           /* PlogRecord (owned); change only through this API */
    gint64 records_bytes;      /* the sum of the records' sizes, kept by this API */
} PlogBatch;

/* A batch's fixed fields as decoded from disk, without its records. */
typedef struct {
    guint32 checksum;
    guint32 body_bytes;
    gint64 base_offset;
    gint32 record_count;
    guint32 records_bytes;
    gint64 producer_id;
    gint16 producer_epoch;
    guint16 attributes;
    gint32 base_sequence;
    gint32 leader_epoch;
    gint64 first_timestamp_ms;
    gint64 max_timestamp_ms;
} PlogBatchHeader;

/* An empty batch: no offset, no producer, no sequence, no leader epoch,
 * timestamps 0. (transfer full) */
PlogBatch *plog_batch_new(void);
void plog_batch_free(PlogBatch *batch);
/* A deep copy. (transfer full) */
PlogBatch *plog_batch_copy(const PlogBatch *batch);
/* Appends `n` records at once and counts them in record_count. */
void plog_batch_add_records(PlogBatch *batch, const PlogRecord *records, guint n);
/* Appends a record and counts it in record_count. */
void plog_batch_add_record(PlogBatch *batch, guint64 key, guint64 value, guint32 size_bytes);
/* An array that frees its batches: what plog_read fills. (transfer full) */
GPtrArray *plog_batch_array_new(void);

/* The logical size: PLOG_BATCH_OVERHEAD_BYTES plus the records' sizes. */
gint64 plog_batch_size_bytes(const PlogBatch *batch);
/* base_offset + record_count - 1; the batch must have an offset. */
gint64 plog_batch_last_offset(const PlogBatch *batch);
/* The sequence of the batch's last record, wrapping as Kafka's do. */
gint32 plog_batch_last_sequence(const PlogBatch *batch);
/* Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from
 * G_MAXINT32 to 0. `increment` >= 0. */
gint32 plog_sequence_add(gint32 sequence, gint32 increment);
/* TRUE when every field and record is equal. */
gboolean plog_batch_equal(const PlogBatch *a, const PlogBatch *b);
/* Asserts the batch is well formed: records present and counted; timestamps
 * either both PLOG_NO_TIMESTAMP or 0 <= first <= max; fields within their
 * ranges; the logical size within its bound. */
void plog_batch_check(const PlogBatch *batch);

/* Appends the batch's encoding to `out`; base_offset must be set. */
void plog_batch_encode(const PlogBatch *batch, GByteArray *out);
/* Decodes the header in the first PLOG_BATCH_HEADER_BYTES of `data` and checks
 * its fields are plausible (it does not verify the checksum, which covers the
 * body). FALSE when they are not: a torn or garbage write. */
gboolean plog_batch_header_decode(const guint8 *data, gsize len, PlogBatchHeader *out);
/* Verifies the checksum and decodes a whole encoded batch of exactly
 * PLOG_BATCH_HEADER_BYTES + body_bytes bytes. NULL when it is corrupt.
 * (transfer full) */
PlogBatch *plog_batch_decode(const guint8 *data, gsize len);

/* Verifies an encoded batch of exactly `len` bytes (header and checksum)
 * without decoding its records, filling *header. FALSE when corrupt. */
gboolean plog_batch_verify(const guint8 *data, gsize len, PlogBatchHeader *header);
/* The bytes of `data` (encoded batches end to end) that hold whole batches
 * plog_batch_verify accepts, from the start up to the first that does not
 * decode or verify (a torn or corrupt tail) or the end. */
gsize plog_batches_whole_bytes(const guint8 *data, gsize len);
/* Decodes the values of a batch plog_batch_verify accepted (`header` is what
 * it filled) into values[0 .. record_count); FALSE when the body is
 * malformed. */
gboolean plog_batch_decode_values(const guint8 *data, gsize len, const PlogBatchHeader *header,
                                  guint64 *values);

/* The header's logical size, encoded size and last offset. */
gint64 plog_batch_header_size_bytes(const PlogBatchHeader *header);
gint64 plog_batch_header_encoded_bytes(const PlogBatchHeader *header);
gint64 plog_batch_header_last_offset(const PlogBatchHeader *header);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlogBatch, plog_batch_free)

#endif
