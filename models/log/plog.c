/*
 * plog: a partition log on a node's simulated disk (see plog.h).
 *
 * Invariants (plog_check_invariants):
 *  1. There is at least one segment; base offsets strictly increase and the
 *     segments are contiguous: segment i ends where segment i + 1 begins.
 *  2. Only the last segment, the active one, may be empty.
 *  3. log start offset (the first base) <= recovery point <= LEO (the end of
 *     the last segment).
 *  4. Every in-flight flush has fsyncs pending and a target <= LEO (a
 *     truncation lowers the targets of flushes it overtakes);
 *     flush_requested_offset <= LEO.
 *  5. The leader-epoch cache's entries start within [log start, LEO].
 *  6. The producer state remembers only batches within [log start, LEO).
 *  7. Each segment's own invariants hold (plog_segment.c), and each `.log`
 *     file is as long as its segment believes.
 *  8. The transaction state (plog_txn.h) names only offsets within the log:
 *     open transactions start below the LEO, aborted ones end in [log start,
 *     LEO); it is rebuilt with the producer state.
 *  9. The log start, LEO, size and first unstable offset kept in struct
 *     Plog are what the segments and the transaction state give (log_sync
 *     runs after every change to either).
 *
 * State changes and the functions that make them:
 *
 *   (disk) --plog_open: recover segments, cut tails, rebuild state--> OPEN
 *   OPEN --plog_append / _as_follower (roll if needed)--> LEO grows
 *   OPEN --plog_truncate_to / plog_truncate_fully_and_start_at--> LEO shrinks or jumps
 *   OPEN --plog_apply_retention (_below, _noting)--> log start offset grows
 *   OPEN --plog_flush ... flush_done_cb--> recovery point grows
 *   OPEN --plog_free (crash) / plog_close--> (memory freed; disk stays)
 *
 * The leader-epoch checkpoint is created empty with the log and rewritten
 * whenever an entry is added or removed. The recovery point lives in memory;
 * its owner checkpoints the recovery points of all its logs in one file
 * (plog_recovery_points_write).
 */
#include "plog.h"

#include "plog_file.h"
#include "plog_segment.h"
#include "plog_txn.h"
#include "sim_assert.h"

#include <string.h>

#define EPOCH_FILE "leader-epoch-checkpoint"
#define CHECKPOINT_VERSION "0"
/* Bounds the flushes in flight: one per append at most, each done after one
 * fsync latency. */
#define FLUSHES_MAX (1u << 20)
#define SEGMENTS_MAX (1u << 24)

/* One plog_flush in flight. Its fsync callbacks hold it; the log lists it so
 * that a truncation can lower its target and plog_free can free it. */
typedef struct {
    Plog *log; /* NULL once orphaned by plog_close */
    gint64 target_offset;
    guint pending;
} PlogFlush;

struct Plog {
    /* What every fetch asks of every partition it reads, kept here by
     * log_sync after each change to the segments or the open transactions
     * (invariant: equal to what they give), so that reading them touches
     * this struct alone: a fetch of a large session reads thousands of
     * logs, and a walk to the active segment and the transaction tree of
     * each was most of its time. */
    gint64 log_start_offset;
    gint64 log_end_offset;
    gint64 size_bytes;
    gint64 first_unstable_offset;
    SimWorld *world;
    SimNodeId node;
    SimDisk *disk;
    char *dir;
    PlogConfig config;
    GPtrArray *segments; /* PlogSegment *, by base offset; the last is active (owned) */
    gint64 recovery_point;
    gint64 flush_requested_offset; /* the largest target of any flush started */
    GPtrArray *flushes;            /* PlogFlush * in flight (owned); NULL: none yet */
    PlogEpochCache *epochs;
    PlogProducerState *producers;
    PlogTxnState *txns; /* open and aborted transactions (plog_txn.h) */
    GByteArray *scratch; /* encoding and read buffer; NULL until used (log_scratch) */
    SimEventId flush_timer;
    PlogRecoveryInfo recovery;
    PlogFlushedFn flushed_cb; /* may be NULL */
    void *flushed_data;
};

static void flush_timer_cb(void *ctx, void *arg, guint64 arg_u64);

/* ---- configuration ---- */

static void
config_check(const PlogConfig *config)
{
    KSIM_ASSERT(config->segment_bytes >= 1);
    KSIM_ASSERT(config->roll_ms >= 1);
    KSIM_ASSERT(config->index_interval_bytes >= 0);
    KSIM_ASSERT(config->retention_ms >= -1);
    KSIM_ASSERT(config->retention_bytes >= -1);
    KSIM_ASSERT(config->flush_interval_messages >= 1);
    KSIM_ASSERT(config->flush_interval_ms == -1 || config->flush_interval_ms >= 1);
}

/* ---- accessors ---- */

static PlogSegment *
segment_at(const Plog *log, guint i)
{
    KSIM_ASSERT(i < log->segments->len);
    return g_ptr_array_index(log->segments, i);
}

static PlogSegment *
log_active(const Plog *log)
{
    return segment_at(log, log->segments->len - 1);
}

/* The node's wall clock: a segment's creation time is stamped with it. */
static gint64
log_now_ms(const Plog *log)
{
    return sim_node_wall_ms(log->world, log->node);
}

/* Refreshes the fields the accessors below read (struct Plog) from the
 * segments and the transaction state; called after every change to either.
 * A log between two steps of a truncation may have no segment: its fields
 * wait for the next call. */
static void
log_sync(Plog *log)
{
    log->first_unstable_offset = plog_txn_state_first_unstable_offset(log->txns);
    if (log->segments->len == 0)
        return;
    log->log_start_offset = plog_segment_base_offset(segment_at(log, 0));
    log->log_end_offset = plog_segment_next_offset(log_active(log));
    gint64 size_bytes = 0;
    for (guint i = 0; i < log->segments->len; i++)
        size_bytes += plog_segment_size_bytes(segment_at(log, i));
    log->size_bytes = size_bytes;
}

gint64
plog_log_start_offset(const Plog *log)
{
    return log->log_start_offset;
}

gint64
plog_log_end_offset(const Plog *log)
{
    return log->log_end_offset;
}

gint64
plog_recovery_point(const Plog *log)
{
    return log->recovery_point;
}

gint64
plog_size_bytes(const Plog *log)
{
    return log->size_bytes;
}

guint
plog_segment_count(const Plog *log)
{
    return log->segments->len;
}

void
plog_segment_info(const Plog *log, guint i, PlogSegmentInfo *out)
{
    const PlogSegment *segment = segment_at(log, i);
    out->base_offset = plog_segment_base_offset(segment);
    out->next_offset = plog_segment_next_offset(segment);
    out->size_bytes = plog_segment_size_bytes(segment);
    out->file_bytes = plog_segment_file_bytes(segment);
    out->max_timestamp_ms = plog_segment_max_timestamp_ms(segment);
    out->index_entries = plog_segment_index(segment, NULL);
    out->time_index_entries = plog_segment_time_index(segment, NULL);
}

const PlogRecoveryInfo *
plog_recovery_info(const Plog *log)
{
    return &log->recovery;
}

/* The flushes in flight: none on most logs, which then have no array. */
static guint
flushes_len(const Plog *log)
{
    return log->flushes != NULL ? log->flushes->len : 0;
}

/* The log's scratch buffer, empty; made on first use (a follower's log,
 * which appends encoded bytes, never needs one). (transfer none) */
static GByteArray *
log_scratch(Plog *log)
{
    if (log->scratch == NULL)
        log->scratch = g_byte_array_new();
    g_byte_array_set_size(log->scratch, 0);
    return log->scratch;
}

guint
plog_flushes_in_flight(const Plog *log)
{
    return flushes_len(log);
}

/* The index of the segment holding `offset` (log start <= offset < LEO), by
 * binary search over the base offsets. */
static guint
segment_for_offset(const Plog *log, gint64 offset)
{
    KSIM_ASSERT(offset >= plog_log_start_offset(log));
    KSIM_ASSERT(offset < plog_log_end_offset(log));
    guint lo = 0;
    guint hi = log->segments->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (plog_segment_base_offset(segment_at(log, mid)) <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    KSIM_ASSERT(lo >= 1);
    return lo - 1;
}

/* ---- checkpoints ---- */

/* The path of the log's checkpoint file `file`, made when it is read or
 * written (rarely) rather than kept by each of a broker's logs. (transfer full) */
static char *
log_file_name(const Plog *log, const char *file)
{
    return g_strconcat(log->dir, "/", file, NULL);
}

/* A checkpoint that could not be rewritten (a full disk) is deleted rather
 * than left stale: a missing recovery point makes recovery verify everything,
 * and a missing epoch file is rebuilt from the batches. Both are safe; a stale
 * one is not. */
static SimDiskStatus
checkpoint_write(SimDisk *disk, const char *name, const GString *body)
{
    SimDiskStatus status = plog_file_write_checked(disk, name, body);
    if (status != SIM_DISK_OK && sim_disk_exists(disk, name))
        sim_disk_delete(disk, name);
    return status;
}

static void
write_epochs(Plog *log)
{
    g_autoptr(GString) body = plog_epoch_cache_serialize(log->epochs);
    g_autofree char *name = log_file_name(log, EPOCH_FILE);
    checkpoint_write(log->disk, name, body);
}

/* Kafka's OffsetCheckpointFile: a version line "0", the number of entries,
 * then "topic partition offset" per log; plog_file adds its checksum line. */
SimDiskStatus
plog_recovery_points_write(SimDisk *disk, const GPtrArray *logs)
{
    g_autoptr(GString) body = g_string_new(CHECKPOINT_VERSION "\n");
    g_string_append_printf(body, "%u\n", logs->len);
    for (guint i = 0; i < logs->len; i++) {
        const Plog *log = g_ptr_array_index(logs, i);
        const char *dash = strrchr(log->dir, '-');
        KSIM_ASSERT(dash != NULL);
        g_string_append_len(body, log->dir, dash - log->dir);
        g_string_append_printf(body, " %s %" G_GINT64_FORMAT "\n", dash + 1, log->recovery_point);
    }
    return checkpoint_write(disk, PLOG_RECOVERY_POINTS_FILE, body);
}

/* A well-formed line "topic partition offset" into `out`. */
static gboolean
recovery_point_parse(const char *line, GHashTable *out)
{
    g_auto(GStrv) fields = g_strsplit(line, " ", -1);
    guint64 partition;
    guint64 offset;
    if (g_strv_length(fields) != 3 || fields[0][0] == '\0' ||
        !g_ascii_string_to_unsigned(fields[1], 10, 0, G_MAXINT32, &partition, NULL) ||
        !g_ascii_string_to_unsigned(fields[2], 10, 0, G_MAXINT64, &offset, NULL))
        return FALSE;
    gint64 value = (gint64)offset;
    g_hash_table_insert(out, g_strdup_printf("%s-%" G_GUINT64_FORMAT, fields[0], partition),
                        g_memdup2(&value, sizeof value));
    return TRUE;
}

GHashTable *
plog_recovery_points_read(const SimDisk *disk)
{
    g_autoptr(GString) body = plog_file_read_checked(disk, PLOG_RECOVERY_POINTS_FILE);
    if (body == NULL)
        return NULL;
    g_auto(GStrv) lines = g_strsplit(body->str, "\n", -1);
    guint n_lines = g_strv_length(lines);
    guint64 count;
    /* The version, the count, the entries and the empty string after the
     * last newline. */
    if (n_lines < 3 || strcmp(lines[0], CHECKPOINT_VERSION) != 0 ||
        !g_ascii_string_to_unsigned(lines[1], 10, 0, G_MAXUINT32, &count, NULL) ||
        count != n_lines - 3 || lines[n_lines - 1][0] != '\0')
        return NULL;
    GHashTable *out = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    for (guint i = 2; i < n_lines - 1; i++) {
        if (!recovery_point_parse(lines[i], out)) {
            g_hash_table_unref(out);
            return NULL;
        }
    }
    return out;
}

/* ---- per-batch state: producers and leader epochs ---- */

/* Records an appended or recovered batch in the producer state and, when it
 * carries a newer leader epoch, in the epoch cache (as Kafka's append and
 * recovery both do). Returns TRUE when the epoch cache changed. */
static gboolean
note_batch(Plog *log, const PlogBatchHeader *h)
{
    if (h->producer_id >= 0)
        plog_producer_state_update(log->producers, h->producer_id, h->producer_epoch,
                                   h->base_sequence, h->record_count, h->base_offset);
    plog_txn_state_note(log->txns, h);
    log_sync(log);
    if (h->leader_epoch < 0 || h->leader_epoch <= plog_epoch_cache_latest(log->epochs))
        return FALSE;
    return plog_epoch_cache_assign(log->epochs, h->leader_epoch, h->base_offset);
}

static void
note_batch_cb(const PlogBatchHeader *header, void *user_data)
{
    note_batch(user_data, header);
}

static void
note_producer_cb(const PlogBatchHeader *h, void *user_data)
{
    Plog *log = user_data;
    if (h->producer_id >= 0)
        plog_producer_state_update(log->producers, h->producer_id, h->producer_epoch,
                                   h->base_sequence, h->record_count, h->base_offset);
    plog_txn_state_note(log->txns, h);
    log_sync(log);
}

static void
rebuild_producers(Plog *log)
{
    plog_producer_state_clear(log->producers);
    plog_txn_state_clear(log->txns);
    for (guint i = 0; i < log->segments->len; i++)
        plog_segment_foreach(segment_at(log, i), note_producer_cb, log);
    log_sync(log);
}

/* ---- recovery ---- */

/* Sorts the directory's files: segment base offsets into `bases` (ascending,
 * as the disk lists names sorted and the names are zero-padded); stale
 * temporary files and index files without their `.log` are deleted. */
static void
list_segments(Plog *log, GArray *bases)
{
    g_autofree char *prefix = g_strconcat(log->dir, "/", NULL);
    g_autoptr(GPtrArray) names = sim_disk_list(log->disk, prefix);
    log->recovery.found_files = names->len > 0;
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        const char *file = name + strlen(prefix);
        gint64 base_offset;
        if (plog_segment_parse_log_name(file, &base_offset)) {
            g_array_append_val(bases, base_offset);
            continue;
        }
        gboolean is_index =
            g_str_has_suffix(file, ".index") || g_str_has_suffix(file, ".timeindex");
        g_autofree char *stem = g_strndup(name, strcspn(file, ".") + strlen(prefix));
        g_autofree char *log_name = g_strconcat(stem, ".log", NULL);
        if (g_str_has_suffix(file, ".tmp") || (is_index && !sim_disk_exists(log->disk, log_name)))
            sim_disk_delete(log->disk, name);
    }
}

/* Cuts stale data off the last recovered segment when the next segment
 * begins inside it. A segment is created at the LEO when its predecessor is
 * rolled, so anything the predecessor holds past that base was removed by a
 * truncation whose cut had not been fsynced when the power went: it must not
 * hide the newer segments, whose data may well be flushed. */
static void
cut_overlap(Plog *log, gint64 next_base_offset)
{
    PlogSegment *last = log_active(log);
    if (next_base_offset >= plog_segment_next_offset(last))
        return;
    KSIM_ASSERT(next_base_offset > plog_segment_base_offset(last));
    plog_segment_truncate_to(last, next_base_offset);
    log_sync(log);
    log->recovery.overlaps_cut++;
}

/* Opens the segments in offset order. From the first segment that does not
 * begin where the previous one ends (its predecessor lost or cut a tail in a
 * power loss), every later segment is deleted: what survives must be a
 * prefix of the log. A cut alone does not condemn the next segment: a tail
 * cut at exactly the next segment's base (the torn garbage of an earlier
 * recovery's unsynced cut, say) leaves the offsets continuous. */
static void
recover_segments(Plog *log, const GArray *bases, gint64 verify_from, gint64 now_ms)
{
    gboolean dropping = FALSE;
    for (guint i = 0; i < bases->len; i++) {
        gint64 base_offset = g_array_index(bases, gint64, i);
        if (!dropping && log->segments->len > 0) {
            cut_overlap(log, base_offset);
            dropping = base_offset != plog_log_end_offset(log);
        }
        if (dropping) {
            plog_segment_delete_files(log->disk, log->dir, base_offset);
            log->recovery.segments_deleted++;
            continue;
        }
        PlogSegmentRecovery scan;
        PlogSegment *segment =
            plog_segment_recover(log->disk, log->dir, base_offset, log->config.index_interval_bytes,
                                 verify_from, now_ms, NULL, NULL, &scan);
        g_ptr_array_add(log->segments, segment);
        log_sync(log);
        log->recovery.segments_recovered++;
        log->recovery.batches_checked += scan.batches_checked;
        if (scan.cut)
            SIM_MARK(log->world, torn_write_recovered);
        if (scan.cut)
            log->recovery.cut = TRUE;
    }
}

/* Feeds every recovered batch to the producer state and the epoch cache, once
 * the segments are final. */
static void
replay_batches(Plog *log)
{
    for (guint i = 0; i < log->segments->len; i++)
        plog_segment_foreach(segment_at(log, i), note_batch_cb, log);
}

/* Loads the epoch checkpoint; returns its body (NULL when unreadable) so the
 * caller can tell whether recovery changed the cache. An empty file is an
 * empty cache, as Kafka's CheckpointFile.read (trunk, 2024) reads one: a new
 * log's checkpoint is created empty and first written when an epoch is
 * assigned. */
static GString *
load_epochs(Plog *log)
{
    g_autofree char *name = log_file_name(log, EPOCH_FILE);
    if (sim_disk_size(log->disk, name) == 0) {
        log->recovery.epoch_file_valid = TRUE;
        plog_epoch_cache_clear(log->epochs);
        return g_string_new(NULL);
    }
    GString *body = plog_file_read_checked(log->disk, name);
    log->recovery.epoch_file_valid =
        body != NULL && plog_epoch_cache_parse(log->epochs, body->str, body->len);
    if (!log->recovery.epoch_file_valid) {
        plog_epoch_cache_clear(log->epochs);
        if (body != NULL)
            g_string_free(body, TRUE);
        return NULL;
    }
    return body;
}

/* Trims the recovered state to the recovered log and rewrites the
 * checkpoints that no longer match it. */
static void
recover_finish(Plog *log, GString *epoch_body, gint64 recovery_point_read)
{
    gint64 log_start = plog_log_start_offset(log);
    gint64 leo = plog_log_end_offset(log);
    log->recovery_point = CLAMP(recovery_point_read, log_start, leo);
    log->flush_requested_offset = log->recovery_point;
    /* Entries beyond the recovered LEO name data a power loss took. An entry
     * starting exactly at the LEO is kept (Kafka's recovery would drop it): it
     * is a leader's epoch with nothing appended yet, and keeping it lets a
     * process crash keep the cache whole. */
    plog_epoch_cache_truncate_from_end(log->epochs, leo + 1);
    plog_epoch_cache_truncate_from_start(log->epochs, log_start);
    plog_producer_state_evict_before(log->producers, log_start);
    plog_txn_state_evict_before(log->txns, log_start);
    log_sync(log);
    g_autofree char *name = log_file_name(log, EPOCH_FILE);
    gint64 file_size = sim_disk_size(log->disk, name);
    if (plog_epoch_entries(log)->len == 0 && file_size <= 0) {
        /* An empty cache is an empty file. Kafka's CheckpointFile
         * constructor creates a missing checkpoint empty (Files.createFile);
         * nothing is written until an epoch is assigned. A failed create
         * leaves it missing until the next open. */
        if (file_size < 0)
            (void)sim_disk_create(log->disk, name);
        return;
    }
    g_autoptr(GString) epochs_now = plog_epoch_cache_serialize(log->epochs);
    if (epoch_body == NULL || !g_string_equal(epoch_body, epochs_now))
        write_epochs(log);
}

static void
log_recover(Plog *log, gint64 recovery_point)
{
    gint64 now_ms = log_now_ms(log);
    g_autoptr(GArray) bases = g_array_new(FALSE, FALSE, sizeof(gint64));
    list_segments(log, bases);
    log->recovery.recovery_point_valid = recovery_point >= 0;
    log->recovery.recovery_point_read = MAX(recovery_point, 0);
    g_autoptr(GString) epoch_body = load_epochs(log);
    recover_segments(log, bases, log->recovery.recovery_point_read, now_ms);
    replay_batches(log);
    if (log->segments->len == 0) {
        g_ptr_array_add(
            log->segments,
            plog_segment_create(log->disk, log->dir, 0, log->config.index_interval_bytes, now_ms));
        log_sync(log);
    }
    recover_finish(log, epoch_body, log->recovery.recovery_point_read);
}

/* ---- lifecycle ---- */

static void
schedule_flush_timer(Plog *log)
{
    if (log->config.flush_interval_ms < 0)
        return;
    gint64 time_ns = sim_now_ns(log->world) + log->config.flush_interval_ms * SIM_NS_PER_MS;
    log->flush_timer =
        sim_world_schedule_for(log->world, log->node, time_ns, flush_timer_cb, NULL, log, 0);
}

Plog *
plog_open(SimWorld *world, SimNodeId node, const char *topic, guint32 partition,
          const PlogConfig *config)
{
    return plog_open_recovering(world, node, topic, partition, config, -1);
}

Plog *
plog_open_recovering(SimWorld *world, SimNodeId node, const char *topic, guint32 partition,
                     const PlogConfig *config, gint64 recovery_point)
{
    KSIM_ASSERT(world != NULL);
    KSIM_ASSERT(topic != NULL);
    config_check(config);
    KSIM_ASSERT(sim_node_state(world, node) != SIM_NODE_DOWN);
    Plog *log = g_new0(Plog, 1);
    log->world = world;
    log->node = node;
    log->disk = sim_node_disk(world, node);
    log->dir = g_strdup_printf("%s-%" G_GUINT32_FORMAT, topic, partition);
    log->config = *config;
    log->segments = g_ptr_array_new();
    log->epochs = plog_epoch_cache_new();
    log->producers = plog_producer_state_new();
    log->txns = plog_txn_state_new();
    log->flush_timer = SIM_EVENT_ID_NONE;
    log_recover(log, recovery_point);
    schedule_flush_timer(log);
    return log;
}

void
plog_free(Plog *log)
{
    if (log == NULL)
        return;
    for (guint i = 0; i < log->segments->len; i++)
        plog_segment_free(segment_at(log, i));
    g_ptr_array_unref(log->segments);
    /* The node crashed: the engine dropped the fsync callbacks that held
     * these, so they are freed here. */
    for (guint i = 0; i < flushes_len(log); i++)
        g_free(g_ptr_array_index(log->flushes, i));
    if (log->flushes != NULL)
        g_ptr_array_unref(log->flushes);
    plog_epoch_cache_free(log->epochs);
    plog_producer_state_free(log->producers);
    plog_txn_state_free(log->txns);
    if (log->scratch != NULL)
        g_byte_array_unref(log->scratch);
    g_free(log->dir);
    g_free(log);
}

void
plog_close(Plog *log)
{
    if (log == NULL)
        return;
    sim_world_cancel(log->world, log->flush_timer);
    /* The fsync callbacks still to come free their flush when it completes. */
    for (guint i = 0; i < flushes_len(log); i++) {
        PlogFlush *flush = g_ptr_array_index(log->flushes, i);
        flush->log = NULL;
    }
    if (log->flushes != NULL)
        g_ptr_array_set_size(log->flushes, 0);
    plog_free(log);
}

/* ---- flush ---- */

static void
flush_complete(Plog *log, PlogFlush *flush)
{
    gboolean found = g_ptr_array_remove(log->flushes, flush);
    KSIM_ASSERT(found);
    KSIM_ASSERT(flush->target_offset <= plog_log_end_offset(log));
    if (flush->target_offset <= log->recovery_point)
        return;
    log->recovery_point = flush->target_offset;
    if (log->flushed_cb != NULL)
        log->flushed_cb(log->flushed_data, log, log->recovery_point);
}

void
plog_set_flushed_listener(Plog *log, PlogFlushedFn flushed_cb, void *user_data)
{
    log->flushed_cb = flushed_cb;
    log->flushed_data = user_data;
}

/* An fsync of one of a flush's files completed (or found its file deleted by
 * a truncation or retention since, whose data then needs no flush). */
static void
flush_done_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    (void)world;
    (void)ctx;
    (void)status;
    PlogFlush *flush = arg;
    KSIM_ASSERT(flush->pending > 0);
    flush->pending--;
    if (flush->pending > 0)
        return;
    if (flush->log != NULL)
        flush_complete(flush->log, flush);
    g_free(flush);
}

void
plog_flush(Plog *log, gint64 up_to_offset)
{
    gint64 target = MIN(up_to_offset, plog_log_end_offset(log));
    if (target <= log->recovery_point)
        return;
    KSIM_ASSERT(flushes_len(log) < FLUSHES_MAX);
    PlogFlush *flush = g_new0(PlogFlush, 1);
    flush->log = log;
    flush->target_offset = target;
    for (guint i = 0; i < log->segments->len; i++) {
        PlogSegment *segment = segment_at(log, i);
        if (plog_segment_base_offset(segment) >= target)
            break;
        if (plog_segment_next_offset(segment) > log->recovery_point)
            flush->pending += plog_segment_fsync(segment, flush_done_cb, flush);
    }
    KSIM_ASSERT(flush->pending > 0);
    if (log->flushes == NULL)
        log->flushes = g_ptr_array_new();
    g_ptr_array_add(log->flushes, flush);
    log->flush_requested_offset = MAX(log->flush_requested_offset, target);
}

/* Kafka's log.flush.interval.ms: flush what is unflushed, then wait again. */
static void
flush_timer_cb(void *ctx, void *arg, guint64 arg_u64)
{
    (void)ctx;
    (void)arg_u64;
    Plog *log = arg;
    log->flush_timer = SIM_EVENT_ID_NONE;
    gint64 leo = plog_log_end_offset(log);
    if (leo > MAX(log->recovery_point, log->flush_requested_offset))
        plog_flush(log, leo);
    schedule_flush_timer(log);
}

/* Kafka's log.flush.interval.messages: flush once that many messages are
 * neither flushed nor being flushed. */
static void
apply_flush_policy(Plog *log)
{
    gint64 leo = plog_log_end_offset(log);
    gint64 flushed = MAX(log->recovery_point, log->flush_requested_offset);
    if (leo - flushed >= log->config.flush_interval_messages)
        plog_flush(log, leo);
}

/* ---- append ---- */

/* Starts a new active segment at the LEO, then flushes the old segments in
 * the background, as Kafka's roll() does. */
static void
log_roll(Plog *log, gint64 now_ms)
{
    KSIM_ASSERT(!plog_segment_is_empty(log_active(log)));
    KSIM_ASSERT(log->segments->len < SEGMENTS_MAX);
    gint64 base_offset = plog_log_end_offset(log);
    g_ptr_array_add(log->segments, plog_segment_create(log->disk, log->dir, base_offset,
                                                       log->config.index_interval_bytes, now_ms));
    log_sync(log);
    plog_flush(log, base_offset);
}

/* Appends an encoded batch described by `header`: rolls first when needed,
 * writes it and its index entries, notes its producer and leader epoch, and
 * applies the flush policy. */
static gint64
log_append_encoded(Plog *log, const PlogBatchHeader *header, const guint8 *data, gsize len,
                   gint64 now_ms, SimDiskStatus *status)
{
    KSIM_ASSERT(status != NULL);
    KSIM_ASSERT(header->base_offset == plog_log_end_offset(log));
    if (plog_segment_should_roll(log_active(log), header, log->config.segment_bytes,
                                 log->config.roll_ms, now_ms))
        log_roll(log, now_ms);
    *status = plog_segment_append(log_active(log), header, data, len, now_ms);
    log_sync(log);
    if (*status != SIM_DISK_OK)
        return -1;
    if (note_batch(log, header))
        write_epochs(log);
    apply_flush_policy(log);
    return header->base_offset;
}

static gint64
log_append(Plog *log, PlogBatch *batch, gint64 now_ms, SimDiskStatus *status)
{
    plog_batch_check(batch);
    KSIM_ASSERT(batch->base_offset == plog_log_end_offset(log));
    GByteArray *scratch = log_scratch(log);
    plog_batch_encode(batch, scratch);
    PlogBatchHeader header;
    gboolean decoded = plog_batch_header_decode(scratch->data, scratch->len, &header);
    KSIM_ASSERT(decoded);
    return log_append_encoded(log, &header, scratch->data, scratch->len, now_ms, status);
}

/* LogAppendTime: Kafka's LogValidator (3.x, assignOffsetsNonCompressed)
 * sets the batch's max timestamp to the leader's clock and the timestamp-type
 * attribute, and a reader takes every record's timestamp from it; ksim sets
 * the first timestamp too, so the batch's invariant first <= max holds
 * whatever the producer's clock said. A follower keeps the leader's stamp. */
static void
stamp_log_append_time(PlogBatch *batch, gint64 now_ms)
{
    KSIM_ASSERT(now_ms >= 0);
    batch->first_timestamp_ms = now_ms;
    batch->max_timestamp_ms = now_ms;
    batch->attributes |= PLOG_BATCH_LOG_APPEND_TIME;
}

gint64
plog_append(Plog *log, PlogBatch *batch, gint64 now_ms, SimDiskStatus *status)
{
    KSIM_ASSERT(batch != NULL);
    batch->base_offset = plog_log_end_offset(log);
    if (log->config.log_append_time)
        stamp_log_append_time(batch, now_ms);
    return log_append(log, batch, now_ms, status);
}

gint64
plog_append_as_follower(Plog *log, PlogBatch *batch, gint64 now_ms, SimDiskStatus *status)
{
    KSIM_ASSERT(batch != NULL);
    KSIM_ASSERT(batch->base_offset == plog_log_end_offset(log));
    return log_append(log, batch, now_ms, status);
}

guint
plog_append_encoded_as_follower(Plog *log, const guint8 *data, gsize len, gint64 now_ms,
                                SimDiskStatus *status)
{
    *status = SIM_DISK_OK;
    guint appended = 0;
    gsize position = 0;
    while (position < len) {
        PlogBatchHeader header;
        if (!plog_batch_header_decode(data + position, len - position, &header))
            break;
        gsize bytes = (gsize)plog_batch_header_encoded_bytes(&header);
        if (bytes > len - position || !plog_batch_verify(data + position, bytes, &header) ||
            header.base_offset != plog_log_end_offset(log))
            break;
        if (log_append_encoded(log, &header, data + position, bytes, now_ms, status) < 0)
            break;
        position += bytes;
        appended++;
    }
    return appended;
}

/* ---- read ---- */

PlogReadStatus
plog_read(Plog *log, gint64 offset, gint64 max_bytes, GPtrArray *out)
{
    KSIM_ASSERT(out != NULL);
    if (offset < plog_log_start_offset(log) || offset > plog_log_end_offset(log))
        return PLOG_READ_OFFSET_OUT_OF_RANGE;
    if (offset == plog_log_end_offset(log))
        return PLOG_READ_OK;
    const PlogSegment *segment = segment_at(log, segment_for_offset(log, offset));
    gint64 position = plog_segment_find_position(segment, offset);
    if (position < 0)
        return PLOG_READ_CORRUPT;
    gint64 total_bytes = 0;
    guint added = 0;
    while (position < plog_segment_file_bytes(segment)) {
        PlogBatch *batch = NULL;
        position = plog_segment_read(segment, position, log_scratch(log), &batch);
        if (batch == NULL)
            return PLOG_READ_CORRUPT;
        gint64 size_bytes = plog_batch_size_bytes(batch);
        if (added > 0 && total_bytes + size_bytes > max_bytes) {
            plog_batch_free(batch);
            break;
        }
        g_ptr_array_add(out, batch);
        total_bytes += size_bytes;
        added++;
    }
    KSIM_ASSERT(added >= 1);
    return PLOG_READ_OK;
}

PlogReadStatus
plog_read_encoded(Plog *log, gint64 offset, gint64 max_bytes, gint64 offset_limit, GByteArray *out,
                  gint64 *out_size_bytes)
{
    KSIM_ASSERT(out != NULL);
    *out_size_bytes = 0;
    if (offset < plog_log_start_offset(log) || offset > plog_log_end_offset(log))
        return PLOG_READ_OFFSET_OUT_OF_RANGE;
    if (offset >= MIN(plog_log_end_offset(log), offset_limit))
        return PLOG_READ_OK;
    const PlogSegment *segment = segment_at(log, segment_for_offset(log, offset));
    gint64 position = plog_segment_find_position(segment, offset);
    if (position < 0)
        return PLOG_READ_CORRUPT;
    guint added = 0;
    while (position < plog_segment_file_bytes(segment)) {
        PlogBatchHeader header;
        guint before = out->len;
        gint64 next = plog_segment_read_raw(segment, position, out, &header);
        if (next < 0)
            return added > 0 ? PLOG_READ_OK : PLOG_READ_CORRUPT;
        gint64 size_bytes = plog_batch_header_size_bytes(&header);
        if (header.base_offset >= offset_limit ||
            (added > 0 && *out_size_bytes + size_bytes > max_bytes)) {
            g_byte_array_set_size(out, before);
            break;
        }
        *out_size_bytes += size_bytes;
        added++;
        position = next;
    }
    return PLOG_READ_OK;
}

gboolean
plog_encoded_spans(Plog *log, GArray *spans)
{
    KSIM_ASSERT(g_array_get_element_size(spans) == sizeof(PlogSpan));
    gint64 start = plog_log_start_offset(log);
    if (start >= plog_log_end_offset(log))
        return TRUE;
    guint first = segment_for_offset(log, start);
    for (guint i = first; i < log->segments->len; i++) {
        const PlogSegment *segment = segment_at(log, i);
        gint64 position = i == first ? plog_segment_find_position(segment, start) : 0;
        if (position < 0)
            return FALSE;
        PlogSpan span;
        span.data = plog_segment_peek_rest(segment, position, &span.len);
        if (span.data == NULL)
            return FALSE;
        if (span.len > 0)
            g_array_append_val(spans, span);
    }
    return TRUE;
}

gboolean
plog_spans_equal(const GArray *a, const GArray *b)
{
    const PlogSpan *x = (const PlogSpan *)(gconstpointer)a->data;
    const PlogSpan *y = (const PlogSpan *)(gconstpointer)b->data;
    guint i = 0, j = 0;
    gsize at_x = 0, at_y = 0;
    for (;;) {
        while (i < a->len && at_x == x[i].len) {
            i++;
            at_x = 0;
        }
        while (j < b->len && at_y == y[j].len) {
            j++;
            at_y = 0;
        }
        if (i == a->len || j == b->len)
            return i == a->len && j == b->len;
        gsize n = MIN(x[i].len - at_x, y[j].len - at_y);
        if (memcmp(x[i].data + at_x, y[j].data + at_y, n) != 0)
            return FALSE;
        at_x += n;
        at_y += n;
    }
}

gboolean
plog_read_all_encoded(Plog *log, GByteArray *out)
{
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    gboolean whole = plog_encoded_spans(log, spans);
    for (guint i = 0; i < spans->len; i++) {
        const PlogSpan *span = &g_array_index(spans, PlogSpan, i);
        g_byte_array_append(out, span->data, (guint)span->len);
    }
    return whole;
}

gboolean
plog_encoded_equals(Plog *log, const GByteArray *expected)
{
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    if (!plog_encoded_spans(log, spans))
        return FALSE;
    g_autoptr(GArray) other = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    PlogSpan all = {expected->data, expected->len};
    if (all.len > 0)
        g_array_append_val(other, all);
    return plog_spans_equal(spans, other);
}

gint64
plog_offset_for_timestamp(Plog *log, gint64 timestamp_ms)
{
    for (guint i = 0; i < log->segments->len; i++) {
        gint64 offset = plog_segment_offset_for_timestamp(segment_at(log, i), timestamp_ms);
        if (offset >= 0)
            return offset;
    }
    return -1;
}

/* ---- truncation ---- */

/* Deletes the `count` newest segments (files and memory). */
static void
delete_newest(Plog *log, guint count)
{
    KSIM_ASSERT(count <= log->segments->len);
    for (guint i = 0; i < count; i++) {
        guint last = log->segments->len - 1;
        plog_segment_delete(segment_at(log, last));
        g_ptr_array_remove_index(log->segments, last);
    }
    log_sync(log);
}

/* Brings the rest of the log's state down to a new LEO. */
static void
after_truncation(Plog *log, gint64 leo)
{
    if (plog_epoch_cache_truncate_from_end(log->epochs, leo))
        write_epochs(log);
    /* Rebuilding reads every batch header; it is needed only when the
     * truncation removed some producer's batches. */
    if (plog_producer_state_last_offset(log->producers) >= leo)
        rebuild_producers(log);
    for (guint i = 0; i < flushes_len(log); i++) {
        PlogFlush *flush = g_ptr_array_index(log->flushes, i);
        flush->target_offset = MIN(flush->target_offset, leo);
    }
    log->flush_requested_offset = MIN(log->flush_requested_offset, leo);
    log->recovery_point = MIN(log->recovery_point, leo);
}

gint64
plog_truncate_to(Plog *log, gint64 offset)
{
    KSIM_ASSERT(offset >= 0);
    if (offset >= plog_log_end_offset(log))
        return plog_log_end_offset(log);
    if (offset < plog_log_start_offset(log)) {
        plog_truncate_fully_and_start_at(log, offset);
        return offset;
    }
    guint i = segment_for_offset(log, offset);
    delete_newest(log, log->segments->len - 1 - i);
    gint64 leo = plog_segment_truncate_to(segment_at(log, i), offset);
    log_sync(log);
    KSIM_ASSERT(leo <= offset);
    after_truncation(log, leo);
    return leo;
}

void
plog_truncate_fully_and_start_at(Plog *log, gint64 offset)
{
    KSIM_ASSERT(offset >= 0);
    delete_newest(log, log->segments->len);
    g_ptr_array_add(log->segments,
                    plog_segment_create(log->disk, log->dir, offset,
                                        log->config.index_interval_bytes, log_now_ms(log)));
    log_sync(log);
    plog_epoch_cache_clear(log->epochs);
    write_epochs(log);
    plog_producer_state_clear(log->producers);
    plog_txn_state_clear(log->txns);
    log_sync(log);
    for (guint i = 0; i < flushes_len(log); i++) {
        PlogFlush *flush = g_ptr_array_index(log->flushes, i);
        flush->target_offset = MIN(flush->target_offset, offset);
    }
    log->flush_requested_offset = offset;
    log->recovery_point = offset;
}

/* ---- retention ---- */

static void
deleted_segment_clear(gpointer data)
{
    PlogDeletedSegment *note = data;
    g_byte_array_unref(note->encoded);
}

/* How many of the oldest segments (never the active one, none ending above
 * `offset_max`) are more than retention_ms old. */
static guint
count_expired(const Plog *log, gint64 now_ms, gint64 offset_max)
{
    guint n = 0;
    while (n + 1 < log->segments->len) {
        const PlogSegment *segment = segment_at(log, n);
        if (plog_segment_next_offset(segment) > offset_max)
            break;
        if (now_ms - plog_segment_max_timestamp_ms(segment) <= log->config.retention_ms)
            break;
        n++;
    }
    return n;
}

/* How many of the oldest segments can go while the log stays at least
 * retention_bytes (Kafka's deleteRetentionSizeBreachedSegments). */
static guint
count_oversize(const Plog *log, gint64 offset_max)
{
    gint64 excess_bytes = plog_size_bytes(log) - log->config.retention_bytes;
    guint n = 0;
    while (n + 1 < log->segments->len) {
        const PlogSegment *segment = segment_at(log, n);
        if (plog_segment_next_offset(segment) > offset_max)
            break;
        if (excess_bytes - plog_segment_size_bytes(segment) < 0)
            break;
        excess_bytes -= plog_segment_size_bytes(segment);
        n++;
    }
    return n;
}

/* Notes segment i (about to be deleted) in `deleted`: its extent and its
 * batches as stored, read before its files go. */
static void
deleted_note(const Plog *log, guint i, PlogRetentionCause cause, gint64 now_ms, GArray *deleted)
{
    const PlogSegment *segment = segment_at(log, i);
    PlogDeletedSegment note = {0};
    plog_segment_info(log, i, &note.info);
    note.cause = cause;
    note.now_ms = now_ms;
    note.encoded = g_byte_array_new();
    note.readable = plog_segment_read_rest(segment, 0, note.encoded);
    g_array_append_val(deleted, note);
}

static void
delete_oldest(Plog *log, guint count, PlogRetentionCause cause, gint64 now_ms, GArray *deleted)
{
    KSIM_ASSERT(count < log->segments->len);
    for (guint i = 0; i < count; i++) {
        if (deleted != NULL)
            deleted_note(log, i, cause, now_ms, deleted);
        plog_segment_delete(segment_at(log, i));
    }
    g_ptr_array_remove_range(log->segments, 0, count);
    log_sync(log);
}

/* Brings the rest of the log's state up to a new log start offset. */
static void
after_retention(Plog *log)
{
    gint64 log_start = plog_log_start_offset(log);
    if (plog_epoch_cache_truncate_from_start(log->epochs, log_start))
        write_epochs(log);
    plog_producer_state_evict_before(log->producers, log_start);
    plog_txn_state_evict_before(log->txns, log_start);
    log_sync(log);
    log->flush_requested_offset = MAX(log->flush_requested_offset, log_start);
    log->recovery_point = MAX(log->recovery_point, log_start);
}

guint
plog_apply_retention_noting(Plog *log, gint64 now_ms, gint64 offset_max, GArray *deleted)
{
    guint count = 0;
    /* Kafka's two passes, in its order: by time, then by size. */
    if (log->config.retention_ms >= 0) {
        guint n = count_expired(log, now_ms, offset_max);
        delete_oldest(log, n, PLOG_RETENTION_TIME, now_ms, deleted);
        count += n;
    }
    if (log->config.retention_bytes >= 0) {
        guint n = count_oversize(log, offset_max);
        delete_oldest(log, n, PLOG_RETENTION_SIZE, now_ms, deleted);
        count += n;
    }
    if (count > 0)
        after_retention(log);
    return count;
}

guint
plog_delete_segments_before(Plog *log, gint64 offset)
{
    guint n = 0;
    while (n + 1 < log->segments->len &&
           plog_segment_next_offset(segment_at(log, n)) <= offset)
        n++;
    delete_oldest(log, n, PLOG_RETENTION_SIZE, 0, NULL);
    if (n > 0)
        after_retention(log);
    return n;
}

guint
plog_apply_retention_below(Plog *log, gint64 now_ms, gint64 offset_max)
{
    return plog_apply_retention_noting(log, now_ms, offset_max, NULL);
}

GArray *
plog_deleted_segments_new(void)
{
    GArray *deleted = g_array_new(FALSE, TRUE, sizeof(PlogDeletedSegment));
    g_array_set_clear_func(deleted, deleted_segment_clear);
    return deleted;
}

guint
plog_apply_retention(Plog *log, gint64 now_ms)
{
    return plog_apply_retention_below(log, now_ms, plog_log_end_offset(log));
}

/* ---- leader epochs and producers ---- */

gboolean
plog_epoch_assign(Plog *log, gint32 epoch, gint64 start_offset)
{
    KSIM_ASSERT(epoch >= 0);
    KSIM_ASSERT(start_offset >= plog_log_start_offset(log));
    KSIM_ASSERT(start_offset <= plog_log_end_offset(log));
    if (!plog_epoch_cache_assign(log->epochs, epoch, start_offset))
        return FALSE;
    write_epochs(log);
    return TRUE;
}

gint32
plog_epoch_latest(const Plog *log)
{
    return plog_epoch_cache_latest(log->epochs);
}

void
plog_epoch_end_offset(const Plog *log, gint32 requested_epoch, gint32 *out_epoch,
                      gint64 *out_end_offset)
{
    plog_epoch_cache_end_offset(log->epochs, requested_epoch, plog_log_end_offset(log), out_epoch,
                                out_end_offset);
}

const GArray *
plog_epoch_entries(const Plog *log)
{
    return plog_epoch_cache_entries(log->epochs);
}

PlogProducerStatus
plog_producer_check(const Plog *log, gint64 producer_id, gint16 epoch, gint32 base_sequence,
                    gint32 record_count, PlogProducerVerdict *out)
{
    return plog_producer_state_check(log->producers, producer_id, epoch, base_sequence,
                                     record_count, out);
}

gint64
plog_first_unstable_offset(const Plog *log)
{
    return log->first_unstable_offset;
}

const PlogTxnState *
plog_txn_state(const Plog *log)
{
    return log->txns;
}

guint64
plog_txn_verification_start(Plog *log, gint64 producer_id)
{
    return plog_txn_state_verification_start(log->txns, producer_id);
}

const PlogProducerState *
plog_producer_state(const Plog *log)
{
    return log->producers;
}

/* ---- invariants ---- */

static void
check_segments(const Plog *log, gboolean with_files)
{
    KSIM_ASSERT(log->segments->len >= 1);
    KSIM_ASSERT(log->segments->len <= SEGMENTS_MAX);
    for (guint i = 0; i < log->segments->len; i++) {
        const PlogSegment *segment = segment_at(log, i);
        plog_segment_check_invariants(segment, with_files);
        if (i + 1 == log->segments->len)
            continue;
        KSIM_ASSERT(!plog_segment_is_empty(segment));
        KSIM_ASSERT(plog_segment_next_offset(segment) ==
                    plog_segment_base_offset(segment_at(log, i + 1)));
    }
}

static void
check_log(const Plog *log, gboolean with_files)
{
    KSIM_ASSERT(log != NULL);
    check_segments(log, with_files);
    /* The fields log_sync keeps are what the segments and transactions give. */
    KSIM_ASSERT(log->log_start_offset == plog_segment_base_offset(segment_at(log, 0)));
    KSIM_ASSERT(log->log_end_offset == plog_segment_next_offset(log_active(log)));
    gint64 size_bytes = 0;
    for (guint i = 0; i < log->segments->len; i++)
        size_bytes += plog_segment_size_bytes(segment_at(log, i));
    KSIM_ASSERT(log->size_bytes == size_bytes);
    KSIM_ASSERT(log->first_unstable_offset == plog_txn_state_first_unstable_offset(log->txns));
    gint64 log_start = plog_log_start_offset(log);
    gint64 leo = plog_log_end_offset(log);
    KSIM_ASSERT(log_start <= log->recovery_point);
    KSIM_ASSERT(log->recovery_point <= leo);
    KSIM_ASSERT(log->flush_requested_offset <= leo);
    KSIM_ASSERT(flushes_len(log) <= FLUSHES_MAX);
    for (guint i = 0; i < flushes_len(log); i++) {
        const PlogFlush *flush = g_ptr_array_index(log->flushes, i);
        KSIM_ASSERT(flush->log == log);
        KSIM_ASSERT(flush->pending > 0);
        KSIM_ASSERT(flush->target_offset <= leo);
    }
    plog_epoch_cache_check_invariants(log->epochs, log_start, leo);
    plog_producer_state_check_invariants(log->producers, log_start, leo);
    plog_txn_state_check_invariants(log->txns, log_start, leo);
}

void
plog_check_invariants(const Plog *log)
{
    check_log(log, FALSE);
}

void
plog_check_files(const Plog *log)
{
    check_log(log, TRUE);
}
