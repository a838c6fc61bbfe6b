/*
 * plog_epoch: the leader-epoch cache of one partition log, Kafka's
 * LeaderEpochFileCache: for each leader epoch, the first offset its leader
 * wrote. Followers use it to find where their log diverges from the leader's
 * (KIP-101, KIP-279), by asking the leader for the end offset of an epoch.
 *
 * This module is the in-memory cache and its file format; plog.c persists it
 * to `leader-epoch-checkpoint` beside the segments whenever it changes, and
 * truncates it with the log.
 *
 * File format, Kafka's checkpoint file, to which plog_file adds a checksum line
 * (so that a torn write is detected rather than half-read):
 *
 *     0                         version
 *     <count>
 *     <epoch> <start_offset>    one line per entry, ascending
 */
#ifndef PLOG_EPOCH_H
#define PLOG_EPOCH_H

#include <glib.h>

typedef struct PlogEpochCache PlogEpochCache;

typedef struct {
    gint32 epoch;
    gint64 start_offset;
} PlogEpochEntry;

/* Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET. */
#define PLOG_UNDEFINED_EPOCH (-1)
#define PLOG_UNDEFINED_EPOCH_OFFSET G_GINT64_CONSTANT(-1)

/* Bounds the cache: a log keeps at most this many epochs. */
#define PLOG_EPOCH_ENTRIES_MAX (1u << 20)

PlogEpochCache *plog_epoch_cache_new(void);
void plog_epoch_cache_free(PlogEpochCache *cache);

/* Kafka's assign: records that `epoch` (>= 0) starts at `start_offset`,
 * unless the latest entry already is `epoch`, starting at or before it
 * (isUpdateNeeded). Entries whose epoch is not below `epoch`, or whose start
 * offset is not below `start_offset`, are removed first
 * (maybeTruncateNonMonotonicEntries), so both stay strictly increasing: a
 * leader elected twice without appending keeps only its newer epoch, and an
 * older epoch assigned after newer ones replaces them. Returns TRUE when the
 * cache changed. */
gboolean plog_epoch_cache_assign(PlogEpochCache *cache, gint32 epoch, gint64 start_offset);
/* The latest epoch, or PLOG_UNDEFINED_EPOCH when the cache is empty. */
gint32 plog_epoch_cache_latest(const PlogEpochCache *cache);
/* Kafka's endOffsetFor (2.1+): for PLOG_UNDEFINED_EPOCH, or an epoch newer
 * than the latest (or any epoch, in an empty cache),
 * (PLOG_UNDEFINED_EPOCH, PLOG_UNDEFINED_EPOCH_OFFSET); for the latest epoch,
 * (epoch, log_end_offset); for an epoch older than the earliest entry,
 * (requested epoch, the earliest entry's start offset); otherwise (the
 * largest epoch <= requested, the start offset of the first epoch >
 * requested). */
void plog_epoch_cache_end_offset(const PlogEpochCache *cache, gint32 requested_epoch,
                                 gint64 log_end_offset, gint32 *out_epoch, gint64 *out_end_offset);
/* Kafka's truncateFromEnd: removes the entries starting at or after
 * `end_offset`; a negative `end_offset` changes nothing. Returns TRUE when
 * the cache changed. */
gboolean plog_epoch_cache_truncate_from_end(PlogEpochCache *cache, gint64 end_offset);
/* Kafka's truncateFromStart: removes the entries that start at or before
 * `start_offset` except the last of them, which is moved to start at
 * `start_offset`; a negative `start_offset` changes nothing. Returns TRUE
 * when the cache changed. */
gboolean plog_epoch_cache_truncate_from_start(PlogEpochCache *cache, gint64 start_offset);
void plog_epoch_cache_clear(PlogEpochCache *cache);

/* The entries, ascending by epoch and by start offset. (transfer none) */
const GArray *plog_epoch_cache_entries(const PlogEpochCache *cache);

/* The checkpoint body for the cache. (transfer full) */
GString *plog_epoch_cache_serialize(const PlogEpochCache *cache);
/* Replaces the cache's entries by those in a checkpoint body; FALSE (and the
 * cache left empty) when it is not complete and well formed. */
gboolean plog_epoch_cache_parse(PlogEpochCache *cache, const char *data, gsize len);

/* Checks the ordering of the entries, and that each starts within
 * [log_start_offset, log_end_offset] (pass -1, -1 to skip that check). */
void plog_epoch_cache_check_invariants(const PlogEpochCache *cache, gint64 log_start_offset,
                                       gint64 log_end_offset);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlogEpochCache, plog_epoch_cache_free)

#endif
