/*
 * plog_segment: one segment of a partition log: a `.log` file of encoded
 * batches, and its sparse `.index` (offset -> file position) and `.timeindex`
 * (timestamp -> offset), named by the segment's 20-digit base offset.
 *
 * Index rule (Kafka's LogSegment.append): before a batch is counted, if more
 * than `index_interval_bytes` of logical batch size were appended since the
 * last index entry (or since the segment began), the batch gets an index entry
 * (its base offset relative to the segment, and its file position) and, if the
 * segment's largest timestamp grew since the last time-index entry, a
 * time-index entry (that timestamp, and the relative base offset of the batch
 * that first reached it). So a lookup scans at most one interval of batches.
 *
 * The index files are a persisted copy of the in-memory arrays: .index holds
 * 8 bytes per entry (u32 relative offset, u32 position), .timeindex 12 (i64
 * timestamp, u32 relative offset), little endian. Recovery rebuilds both
 * arrays from the batches and rewrites a file only when it differs.
 *
 * Positions are u32, relative offsets at most G_MAXINT32: plog rolls a segment
 * before either could overflow.
 */
#ifndef PLOG_SEGMENT_H
#define PLOG_SEGMENT_H

#include <glib.h>

#include "plog_batch.h"
#include "sim_disk.h"

typedef struct PlogSegment PlogSegment;

typedef struct {
    guint32 relative_offset;
    guint32 position;
} PlogIndexEntry;

typedef struct {
    gint64 timestamp_ms;
    guint32 relative_offset;
} PlogTimeIndexEntry;

#define PLOG_INDEX_ENTRY_BYTES 8
#define PLOG_TIME_INDEX_ENTRY_BYTES 12

/* Called for every batch a recovery scan keeps, in offset order. */
typedef void (*PlogSegmentScanFn)(const PlogBatchHeader *header, void *user_data);

/* What recovering a segment found. */
typedef struct {
    gboolean cut;          /* a torn or corrupt tail was cut off */
    gint64 cut_position;   /* where, when cut */
    guint batches_checked; /* batches whose checksum was verified */
} PlogSegmentRecovery;

/* Creates the segment's three files in `dir` (a leftover file of the same name
 * is emptied). `now_ms` is its creation time, the age a segment whose batches
 * carry no timestamps is judged by. (transfer full) */
PlogSegment *plog_segment_create(SimDisk *disk, const char *dir, gint64 base_offset,
                                 gint64 index_interval_bytes, gint64 now_ms);

/* Opens an existing `.log` and scans it: every batch's header is checked for
 * plausibility and offset continuity, and batches ending at or after
 * `verify_from_offset` are read whole and their checksums verified. The file is
 * cut at the first batch that fails. The indexes are rebuilt from the kept
 * batches and the index files rewritten if they differ; `fn` (may be NULL) sees
 * each kept batch. (transfer full) */
PlogSegment *plog_segment_recover(SimDisk *disk, const char *dir, gint64 base_offset,
                                  gint64 index_interval_bytes, gint64 verify_from_offset,
                                  gint64 now_ms, PlogSegmentScanFn fn, void *user_data,
                                  PlogSegmentRecovery *out);

/* Frees the segment's memory; the files stay. */
void plog_segment_free(PlogSegment *segment);
/* Deletes the segment's files and frees it. */
void plog_segment_delete(PlogSegment *segment);

/* Deletes whichever of the three files of segment `base_offset` exist, for a
 * segment that recovery drops without opening. */
void plog_segment_delete_files(SimDisk *disk, const char *dir, gint64 base_offset);

/* Parses a `.log` file name (without its directory) into its base offset;
 * FALSE when it is not one. */
gboolean plog_segment_parse_log_name(const char *file_name, gint64 *out_base_offset);

gint64 plog_segment_base_offset(const PlogSegment *segment);
/* The offset after the segment's last batch (the base offset when empty). */
gint64 plog_segment_next_offset(const PlogSegment *segment);
gboolean plog_segment_is_empty(const PlogSegment *segment);
/* The logical size of its batches. */
gint64 plog_segment_size_bytes(const PlogSegment *segment);
/* The `.log` file's size. */
gint64 plog_segment_file_bytes(const PlogSegment *segment);
/* The largest batch timestamp or, when no batch has one, the time of the last
 * append or of the creation (Kafka falls back to the file's modification
 * time; a recovered segment counts as modified when it was recovered). */
gint64 plog_segment_max_timestamp_ms(const PlogSegment *segment);
/* The in-memory indexes: their count, and their entries as `*entries`
 * when `entries` is not NULL (NULL when there are none; valid until the
 * next change of the segment). */
guint plog_segment_index(const PlogSegment *segment, const PlogIndexEntry **entries);
guint plog_segment_time_index(const PlogSegment *segment, const PlogTimeIndexEntry **entries);

/* Kafka's LogSegment.shouldRoll for a batch of `size_bytes` logical and
 * `encoded_bytes` encoded bytes: TRUE when the segment is not empty and the
 * batch would take it past `segment_bytes`, or the segment is older than
 * `roll_ms` (measured from its first batch's timestamp to the batch's, or by
 * `now_ms` from its creation when timestamps are absent), or its index is
 * full (Kafka's segment.index.bytes), or it holds 2^22 batches (a bound on the
 * disk's write list), or the batch's offsets or position would not fit the
 * index. */
gboolean plog_segment_should_roll(const PlogSegment *segment, const PlogBatchHeader *header,
                                  gint64 segment_bytes, gint64 roll_ms, gint64 now_ms);

/* Appends an encoded batch, described by its decoded `header` (its base
 * offset must be the segment's next offset), and the index entries it earns.
 * On a disk error nothing changes. */
SimDiskStatus plog_segment_append(PlogSegment *segment, const PlogBatchHeader *header,
                                  const guint8 *encoded, gsize encoded_bytes, gint64 now_ms);

/* The file position of the batch holding `offset` (base <= offset < next),
 * found through the index and a scan of at most one interval; -1 when the
 * batches there are corrupt. */
gint64 plog_segment_find_position(const PlogSegment *segment, gint64 offset);

/* Reads and verifies the batch at `position` into *out (NULL when corrupt).
 * Returns the position after it. (transfer full: *out) */
gint64 plog_segment_read(const PlogSegment *segment, gint64 position, GByteArray *scratch,
                         PlogBatch **out);

/* Appends the encoded bytes of the batch at `position` to `out`, as they are
 * on disk (the checksum is not verified: a reader that decodes does it), and
 * its header to *header. Returns the position after it, or -1 when the
 * header there is not plausible. */
gint64 plog_segment_read_raw(const PlogSegment *segment, gint64 position, GByteArray *out,
                             PlogBatchHeader *header);
/* Appends the file's bytes from `position` to its end to `out`, in one read
 * (no checksum verified). FALSE when the disk gave fewer bytes. */
gboolean plog_segment_read_rest(const PlogSegment *segment, gint64 position, GByteArray *out);
/* The file's bytes from `position` to its end, borrowed from the disk
 * (sim_disk_peek: valid until the disk next changes), their count in *len;
 * NULL when the disk holds fewer. */
const guint8 *plog_segment_peek_rest(const PlogSegment *segment, gint64 position, gsize *len);
/* Appends the file's `bytes` bytes at `position` to `out`, in one read. */
gboolean plog_segment_read_range(const PlogSegment *segment, gint64 position, gint64 bytes,
                                 GByteArray *out);

/* The base offset of the first batch whose largest timestamp is at least
 * `timestamp_ms`, through the time index; -1 when there is none. */
gint64 plog_segment_offset_for_timestamp(const PlogSegment *segment, gint64 timestamp_ms);

/* Removes the batch holding `offset` and every later one (`offset` >= base;
 * nothing when offset >= next). Returns the new next offset: the base offset
 * of that batch, since a segment is cut at batch boundaries. */
gint64 plog_segment_truncate_to(PlogSegment *segment, gint64 offset);

/* Starts an fsync of each of the segment's files; `cb` runs once per file.
 * Returns how many were started. */
guint plog_segment_fsync(PlogSegment *segment, SimDiskSyncFn cb, void *arg);

/* Calls `fn` with every batch header, in order (the batches are trusted: no
 * checksum is verified). */
void plog_segment_foreach(const PlogSegment *segment, PlogSegmentScanFn fn, void *user_data);

/* Checks the segment's in-memory state and its `.log` file's size; with
 * `with_files`, also that the index files hold exactly the in-memory entries
 * and that each index entry names the start of a batch. */
void plog_segment_check_invariants(const PlogSegment *segment, gboolean with_files);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlogSegment, plog_segment_free)

#endif
