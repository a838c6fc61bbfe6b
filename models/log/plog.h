/*
 * plog: a partition log, as Kafka's UnifiedLog keeps one, on the simulated
 * disk of one node.
 *
 * On disk, in the directory `<topic>-<partition>/`:
 *   00000000000000000000.log        batches (plog_batch.h), one file per segment,
 *   00000000000000000000.index      named by the segment's 20-digit base offset,
 *   00000000000000000000.timeindex  with its sparse indexes (plog_segment.h);
 *   leader-epoch-checkpoint           the leader-epoch cache (plog_epoch.h),
 * created empty with the log (an empty file is an empty cache, as in Kafka)
 * and written, once an epoch is assigned, through a temporary file and a
 * rename (plog_file.h).
 *
 * The recovery point, the offset below which all was fsynced, is kept in
 * memory. As in Kafka, its checkpoint is not the log's: Kafka's LogManager
 * writes the recovery points of every log of a log directory to one file
 * there (`recovery-point-offset-checkpoint`), every
 * log.flush.offset.checkpoint.interval.ms, after a truncation and at a clean
 * shutdown, and hands each log its entry when it opens it
 * (plog_recovery_points_write/_read, plog_open_recovering). A log opened
 * without one verifies every batch, as Kafka's KRaft metadata log does.
 *
 * Offsets are contiguous: the segments cover [log start offset, LEO) without a
 * gap, and only the last (active) segment may be empty. Sizes are logical
 * (plog_batch_size_bytes): payloads are counted but not stored.
 *
 * What survives a crash, as in Kafka:
 *  - a process crash keeps everything appended (the page cache survives);
 *  - a power loss keeps at least everything below the recovery point, and what
 *    survives is a prefix of what was appended: recovery re-reads and verifies
 *    every batch at or above the recovery point, cuts a torn or corrupt tail,
 *    and drops any later segment that no longer continues the offsets. A
 *    truncation is not durable until the truncated file is fsynced, so after a
 *    power loss data a truncation removed may come back (as on a real file
 *    system), always as whole batches at their original offsets; recovery
 *    cuts such data where a newer segment begins, since a segment is only
 *    ever created at the end of its predecessor.
 *
 * Flushing (fsync) follows Kafka: never forced by default (Kafka relies on
 * replication), every flush_interval_messages messages, every
 * flush_interval_ms by a timer, and, as Kafka's roll() does, an asynchronous
 * flush of the old segments whenever a segment is rolled. Flushes complete
 * asynchronously; the recovery point advances when all their fsyncs are done.
 *
 * Lifecycle: plog_open recovers or creates the log; plog_free frees memory
 * only and is what a crashed broker calls (its node's pending fsync callbacks
 * and timers are dropped by the engine). A broker that closes a log while its
 * node lives on (a deleted partition) calls plog_close instead.
 */
#ifndef PLOG_H
#define PLOG_H

#include <glib.h>

#include "plog_batch.h"
#include "plog_epoch.h"
#include "plog_producer.h"
#include "plog_txn.h"
#include "sim_disk.h"
#include "sim_world.h"

typedef struct Plog Plog;

/* The log's configuration, with Kafka's broker keys. */
typedef struct {
    gint64 segment_bytes;        /* log.segment.bytes: 1 GiB */
    gint64 roll_ms;              /* log.roll.ms (log.roll.hours = 168): 7 days */
    gint64 index_interval_bytes; /* log.index.interval.bytes: 4096 */
    gint64 retention_ms;         /* log.retention.ms (log.retention.hours = 168); -1: unlimited */
    gint64 retention_bytes;      /* log.retention.bytes: -1, unlimited */
    gint64 flush_interval_messages; /* log.flush.interval.messages: G_MAXINT64, never */
    gint64 flush_interval_ms;       /* log.flush.interval.ms: -1, unset: never */
    /* log.message.timestamp.type: FALSE is CreateTime (Kafka's default, the
     * producer's stamp is kept), TRUE LogAppendTime (plog_append stamps each
     * batch with the appending broker's wall clock). */
    gboolean log_append_time;
} PlogConfig;

typedef enum {
    PLOG_READ_OK = 0,
    PLOG_READ_OFFSET_OUT_OF_RANGE, /* below the log start offset or above the LEO */
    PLOG_READ_CORRUPT,             /* the page cache holds a corrupt batch */
} PlogReadStatus;

/* One segment, for tests, metrics and reports. */
typedef struct {
    gint64 base_offset;
    gint64 next_offset;
    gint64 size_bytes; /* logical */
    gint64 file_bytes; /* the .log file */
    gint64 max_timestamp_ms;
    guint index_entries;
    guint time_index_entries;
} PlogSegmentInfo;

/* What the last plog_open found on disk. */
typedef struct {
    gboolean found_files;          /* the directory held a log */
    gboolean recovery_point_valid; /* plog_open_recovering was given a recovery point */
    gboolean epoch_file_valid;     /* the leader-epoch checkpoint was readable */
    gint64 recovery_point_read;    /* its value, 0 when none */
    guint segments_recovered;
    guint segments_deleted;  /* after a cut, or not continuing the offsets */
    guint overlaps_cut;      /* stale data cut where the next segment begins */
    gboolean cut;            /* a torn or corrupt tail was cut off */
    guint64 batches_checked; /* batches whose checksum was verified */
} PlogRecoveryInfo;

/* Opens the log of `topic`/`partition` on `node`'s disk, recovering it when
 * files exist and creating an empty log at offset 0 otherwise. Recovery
 * trusts what lies below `recovery_point` (the log directory's checkpoint
 * entry; -1: none, as Kafka's getOrDefault(tp, 0)) and verifies every batch
 * from there on. The node must be up; `config` is copied. (transfer full) */
Plog *plog_open_recovering(SimWorld *world, SimNodeId node, const char *topic,
                           guint32 partition, const PlogConfig *config, gint64 recovery_point);
/* plog_open_recovering without a recovery point: recovery verifies every
 * batch (Kafka's KafkaMetadataLog opens its log with recoveryPoint 0). */
Plog *plog_open(SimWorld *world, SimNodeId node, const char *topic, guint32 partition,
                const PlogConfig *config);

/* The recovery-point checkpoint of a log directory, at its top level. */
#define PLOG_RECOVERY_POINTS_FILE "recovery-point-offset-checkpoint"
/* Writes the recovery points of `logs` (Plog *, in the order given) to
 * PLOG_RECOVERY_POINTS_FILE on `disk`, replacing it as plog_file does; a
 * write that fails deletes the file (a missing checkpoint makes recovery
 * verify everything, a stale one could skip data a truncation replaced).
 * Returns the disk's status. */
SimDiskStatus plog_recovery_points_write(SimDisk *disk, const GPtrArray *logs);
/* The recovery points PLOG_RECOVERY_POINTS_FILE holds, by log directory
 * name ("topic-partition") to gint64; NULL when the file is missing, torn
 * or malformed (Kafka then recovers every log from 0). (transfer full) */
GHashTable *plog_recovery_points_read(const SimDisk *disk);
/* Frees the log's memory; touches neither the disk nor the world. Only for a
 * crashed node, whose pending fsync callbacks and timers the engine drops. */
void plog_free(Plog *log);
/* Closes the log of a node that keeps running: cancels its flush timer and
 * lets its in-flight fsyncs complete harmlessly, then frees it. */
void plog_close(Plog *log);

/* Appends `batch` at the LEO: sets batch->base_offset, rolls the active
 * segment first when needed, writes the batch and its index entries, updates
 * the producer state and the leader-epoch cache (a batch with a newer leader
 * epoch starts it), and applies the flush policy. Returns the base offset, or
 * -1 with *status set when the disk refused the write (nothing appended).
 * `now_ms` is the broker's clock. The batch stays the caller's. */
gint64 plog_append(Plog *log, PlogBatch *batch, gint64 now_ms, SimDiskStatus *status);
/* The same for a follower, which keeps the leader's offsets: asserts
 * batch->base_offset == LEO. A follower must skip batches below its LEO and
 * truncate to the base of a batch that straddles it before appending. */
gint64 plog_append_as_follower(Plog *log, PlogBatch *batch, gint64 now_ms, SimDiskStatus *status);

/* A follower's append of encoded batches as the leader sent them: each is
 * verified (header and checksum) and must start at the LEO; appending stops
 * at the first that does not (or at a disk error, with *status set). Returns
 * the number of batches appended. */
guint plog_append_encoded_as_follower(Plog *log, const guint8 *data, gsize len, gint64 now_ms,
                                      SimDiskStatus *status);

/* Reads whole batches, starting with the one that holds `offset`, from that
 * batch's segment only (as Kafka's LocalLog.read): at least one batch, then
 * more while their logical sizes add up to at most `max_bytes`. Appends new
 * batches to `out` (create it with plog_batch_array_new; the caller owns them).
 * Reading at the LEO gives OK and nothing; outside [log start, LEO] gives
 * OFFSET_OUT_OF_RANGE; a corrupt batch stops the read with CORRUPT, leaving
 * the batches before it in `out`. */
PlogReadStatus plog_read(Plog *log, gint64 offset, gint64 max_bytes, GPtrArray *out);

/* The same batches as plog_read, but as they are encoded on disk, appended
 * to `out` (Kafka's zero-copy transfer to followers), stopping before a batch
 * whose base offset is `offset_limit` or more; *out_size_bytes gets their
 * logical size. Checksums are not verified here: the receiver does it. */
PlogReadStatus plog_read_encoded(Plog *log, gint64 offset, gint64 max_bytes, gint64 offset_limit,
                                 GByteArray *out, gint64 *out_size_bytes);

/* A stretch of encoded batches: a view of bytes someone else owns. */
typedef struct {
    const guint8 *data;
    gsize len;
} PlogSpan;

/* Every batch from the one holding the log start offset to the end of the
 * log, as encoded on disk, without a copy: one span per segment, appended
 * to `spans` (PlogSpan), borrowed from the disk's page cache and valid until
 * the disk next changes (what the end of a run collects). FALSE when a
 * segment could not be read whole; `spans` then end before it. Batches never
 * straddle two spans. */
gboolean plog_encoded_spans(Plog *log, GArray *spans);
/* TRUE when the PlogSpan arrays `a` and `b` hold the same bytes in the same
 * order, however each is cut into spans. */
gboolean plog_spans_equal(const GArray *a, const GArray *b);
/* The bytes of plog_encoded_spans, appended to `out`. FALSE as there. */
gboolean plog_read_all_encoded(Plog *log, GByteArray *out);
/* TRUE when plog_read_all_encoded would give exactly `expected`; compares
 * the log in place and keeps no copy of it. */
gboolean plog_encoded_equals(Plog *log, const GByteArray *expected);

/* Kafka's offsetsForTimes on this log: the base offset of the first batch whose
 * largest timestamp is at least `timestamp_ms`; -1 when there is none. */
gint64 plog_offset_for_timestamp(Plog *log, gint64 timestamp_ms);

/* Removes every offset at and above `offset`: whole segments, index entries,
 * and the batch holding `offset` too, since Kafka truncates at batch
 * boundaries (the new LEO is that batch's base offset, <= offset). Nothing
 * happens when offset >= LEO; below the log start offset the log is emptied
 * and restarted at `offset` (Kafka does the same). Truncates the leader-epoch
 * cache, rebuilds the producer state and lowers the recovery point. Returns
 * the new LEO. */
gint64 plog_truncate_to(Plog *log, gint64 offset);
/* Kafka's truncateFullyAndStartAt: deletes every segment and starts an empty
 * log at `offset` (a follower behind the leader's log start offset); the
 * leader-epoch cache and producer state are cleared. */
void plog_truncate_fully_and_start_at(Plog *log, gint64 offset);

gint64 plog_log_start_offset(const Plog *log);
/* The log end offset (LEO): the offset the next appended record gets. */
gint64 plog_log_end_offset(const Plog *log);
/* Every offset below it is durable (its segments were fsynced). */
gint64 plog_recovery_point(const Plog *log);
/* The logical size of all segments. */
gint64 plog_size_bytes(const Plog *log);
guint plog_segment_count(const Plog *log);
void plog_segment_info(const Plog *log, guint i, PlogSegmentInfo *out);
/* What the plog_open that made this log found. (transfer none) */
const PlogRecoveryInfo *plog_recovery_info(const Plog *log);
/* Flushes started and not yet complete. */
guint plog_flushes_in_flight(const Plog *log);

/* Told when a flush completes and the recovery point advances to
 * `recovery_point` (the metadata log's Raft client waits for its appends to
 * be durable before it fetches again). It runs on the log's node, from the
 * fsync's completion; it must not free the log. */
typedef void (*PlogFlushedFn)(void *user_data, Plog *log, gint64 recovery_point);
/* Sets the listener (NULL: none). */
void plog_set_flushed_listener(Plog *log, PlogFlushedFn flushed_cb, void *user_data);

/* Starts an fsync of every segment holding data below `up_to_offset` (capped
 * at the LEO) and above the recovery point; when they all complete, the
 * recovery point advances to that offset. */
void plog_flush(Plog *log, gint64 up_to_offset);

/* Kafka's retention: deletes, oldest first and never the active segment,
 * the segments whose largest timestamp is more than retention_ms before
 * `now_ms`, then those that keep the log above retention_bytes. The log start
 * offset advances; the leader-epoch cache and producer state follow. Returns
 * the number of segments deleted. */
guint plog_apply_retention(Plog *log, gint64 now_ms);
/* The same, deleting only segments that end at or below `offset_max` (a
 * broker passes its high watermark, as Kafka does). */
guint plog_apply_retention_below(Plog *log, gint64 now_ms, gint64 offset_max);

/* UnifiedLog.deleteLogStartOffsetBreachedSegments: deletes, oldest first
 * and never the active segment, the segments that end at or below `offset`
 * (a log start offset the owner raised, as the metadata log does to a
 * snapshot's end offset). Returns the number deleted. */
guint plog_delete_segments_before(Plog *log, gint64 offset);
/* Which of Kafka's retention passes deleted a segment. */
typedef enum {
    PLOG_RETENTION_TIME = 0, /* deleteRetentionMsBreachedSegments: retention_ms */
    PLOG_RETENTION_SIZE,     /* deleteRetentionSizeBreachedSegments: retention_bytes */
} PlogRetentionCause;

/* One segment retention deleted, noted before its files went, so that a
 * caller can tell what was deleted (a broker records it in the run's
 * history). */
typedef struct {
    PlogSegmentInfo info;    /* as plog_segment_info gave it before the deletion */
    PlogRetentionCause cause;
    gint64 now_ms;           /* the clock the retention check was given */
    gboolean readable;       /* `encoded` holds the whole .log file */
    GByteArray *encoded;     /* the segment's batches as stored (owned) */
} PlogDeletedSegment;

/* An empty GArray of PlogDeletedSegment that frees each entry's bytes.
 * (transfer full) */
GArray *plog_deleted_segments_new(void);
/* plog_apply_retention_below, appending each deleted segment, oldest first,
 * to `deleted` (from plog_deleted_segments_new; NULL: noted nowhere). */
guint plog_apply_retention_noting(Plog *log, gint64 now_ms, gint64 offset_max, GArray *deleted);

/* Leader-epoch cache (plog_epoch.h). assign: `epoch` starts at
 * `start_offset` (in [log start, LEO]), as plog_epoch_cache_assign decides;
 * the checkpoint is rewritten when the cache changes. Returns TRUE then. */
gboolean plog_epoch_assign(Plog *log, gint32 epoch, gint64 start_offset);
gint32 plog_epoch_latest(const Plog *log);
/* Kafka's endOffsetFor, with the LEO for the latest epoch. */
void plog_epoch_end_offset(const Plog *log, gint32 requested_epoch, gint32 *out_epoch,
                           gint64 *out_end_offset);
/* (transfer none) PlogEpochEntry */
const GArray *plog_epoch_entries(const Plog *log);

/* Producer state (plog_producer.h): may this producer's batch be appended? */
PlogProducerStatus plog_producer_check(const Plog *log, gint64 producer_id, gint16 epoch,
                                       gint32 base_sequence, gint32 record_count,
                                       PlogProducerVerdict *out);
/* (transfer none) */
const PlogProducerState *plog_producer_state(const Plog *log);

/* Transactions (plog_txn.h): the first offset of the oldest open
 * transaction, or -1 when none is open (a leader's LSO is min(HW, this)). */
gint64 plog_first_unstable_offset(const Plog *log);
/* (transfer none) */
const PlogTxnState *plog_txn_state(const Plog *log);
/* Verification (plog_txn.h): the producer's guard, created if it has none. */
guint64 plog_txn_verification_start(Plog *log, gint64 producer_id);

/* Checks the invariants listed in plog.c (memory, and file sizes). */
void plog_check_invariants(const Plog *log);
/* Also checks every index file's contents against memory: O(index entries). */
void plog_check_files(const Plog *log);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Plog, plog_free)

#endif
