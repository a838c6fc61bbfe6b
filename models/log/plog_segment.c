/*
 * plog_segment: a log segment and its sparse indexes (see plog_segment.h).
 *
 * Invariants (plog_segment_check_invariants):
 *  1. base_offset <= next_offset; the segment is empty (no batch, no bytes,
 *     next_offset == base_offset) or holds batch_count >= 1 batches covering
 *     [base_offset, next_offset) contiguously.
 *  2. Index entries have strictly increasing relative offsets and positions,
 *     each below next_offset - base_offset and file_bytes respectively, and
 *     each names the start of a batch.
 *  3. Time-index entries have strictly increasing timestamps, none above
 *     max_timestamp_ms, and non-decreasing relative offsets.
 *  4. 0 <= bytes_since_index <= size_bytes.
 *  5. The `.log` file is file_bytes long; unless index_files_stale, the index
 *     files hold exactly the in-memory entries. This, the contiguity of 1 and
 *     the batch starts of 2 are checked with files: they read the disk.
 *  6. The remembered starts of the last batches (`recent`, at most
 *     RECENT_BATCHES and at most batch_count) each name the start of a batch
 *     with that base offset, and the index lookup finds the same position, so
 *     the shortcut never changes an answer.
 *
 * Transitions:
 *   (none) --plog_segment_create--> EMPTY
 *   (files) --plog_segment_recover (scan, cut the tail, rebuild indexes)--> EMPTY | FILLED
 *   EMPTY | FILLED --plog_segment_append--> FILLED
 *   FILLED --plog_segment_truncate_to (cut, rescan)--> EMPTY | FILLED
 *   any --plog_segment_delete--> (none, files gone); --plog_segment_free--> (files stay)
 */
#include "plog_segment.h"

#include "plog_file.h"
#include "sim_assert.h"

#include <string.h>

#define RECENT_BATCHES 8

typedef struct {
    gint64 base_offset;
    gint64 position;
} RecentBatch;

struct PlogSegment {
    SimDisk *disk;
    /* The three files' names, in one allocation that log_name owns: a
     * broker has a segment for each replica it holds. */
    char *log_name;
    const char *index_name;
    const char *time_index_name;
    gint64 base_offset;
    gint64 next_offset;
    gint64 file_bytes;
    gint64 size_bytes;
    gint64 index_interval_bytes;
    gint64 bytes_since_index;
    gint64 max_timestamp_ms;        /* PLOG_NO_TIMESTAMP until a batch has one */
    gint64 offset_of_max_timestamp; /* the base offset of the first batch that reached it */
    gint64 rolling_timestamp_ms;    /* the first batch's max timestamp */
    gint64 created_ms;
    gint64 last_modified_ms;
    guint64 batch_count;
    gboolean index_files_stale; /* a full disk refused an index write */
    GArray *index;              /* PlogIndexEntry; NULL until the first entry */
    GArray *time_index;         /* PlogTimeIndexEntry; NULL until the first entry
                                 * (an idle partition's segment has none, and an
                                 * empty array is not free) */
    /* Where the last RECENT_BATCHES batches begin, as they were applied: a
     * follower fetches from its LEO, which is usually where one of them
     * begins, and finds it here without the index lookup and header scan
     * (the answer is the same). Cleared with everything else when the
     * segment is rescanned (truncation, recovery). */
    RecentBatch *recent; /* RECENT_BATCHES of them; NULL until the first
                          * append (most of a large cluster's segments
                          * never have one) */
    guint recent_count; /* valid entries, at most RECENT_BATCHES */
    guint recent_next;  /* the slot the next batch takes */
};

/* What plan_batch decided for one batch, before anything changes. */
typedef struct {
    gint64 base_offset;
    gint32 record_count;
    gint64 size_bytes;
    gint64 max_timestamp_ms;
    gint64 encoded_bytes;
} BatchDesc;

typedef struct {
    gboolean add_index;
    gboolean add_time_index;
    PlogIndexEntry index_entry;
    PlogTimeIndexEntry time_entry;
    gint64 max_timestamp_ms;
    gint64 offset_of_max_timestamp;
} AppendPlan;

#define POSITION_MAX ((gint64)G_MAXUINT32)
#define RELATIVE_OFFSET_MAX ((gint64)G_MAXINT32)
/* Kafka rolls a segment whose offset index is full: segment.index.bytes
 * (10 MiB) of 8-byte entries. */
#define INDEX_ENTRIES_MAX (10 * 1024 * 1024 / 8)
/* Each unflushed append is an entry on the disk's write list, which the disk
 * bounds; a roll flushes the old segment. Kafka has no such limit, and a
 * segment reaches it only with tiny batches that are never flushed. */
#define SEGMENT_BATCHES_MAX (1u << 22)

/* ---- names ---- */

gboolean
plog_segment_parse_log_name(const char *file_name, gint64 *out_base_offset)
{
    if (strlen(file_name) != 20 + strlen(".log") || !g_str_has_suffix(file_name, ".log"))
        return FALSE;
    char digits[21];
    memcpy(digits, file_name, 20);
    digits[20] = '\0';
    guint64 base_offset;
    if (!g_ascii_string_to_unsigned(digits, 10, 0, G_MAXINT64, &base_offset, NULL))
        return FALSE;
    *out_base_offset = (gint64)base_offset;
    return TRUE;
}

/* ---- lifecycle ---- */

static PlogSegment *
segment_new(SimDisk *disk, const char *dir, gint64 base_offset, gint64 index_interval_bytes,
            gint64 now_ms)
{
    KSIM_ASSERT(disk != NULL);
    KSIM_ASSERT(index_interval_bytes >= 0);
    PlogSegment *segment = g_new0(PlogSegment, 1);
    segment->disk = disk;
    KSIM_ASSERT(base_offset >= 0);
    g_autofree char *stem = g_strdup_printf("%s/%020" G_GINT64_FORMAT, dir, base_offset);
    gsize stem_len = strlen(stem);
    char *names = g_malloc(3 * stem_len + sizeof ".log" + sizeof ".index" + sizeof ".timeindex");
    char *index_name = g_stpcpy(g_stpcpy(names, stem), ".log") + 1;
    char *time_index_name = g_stpcpy(g_stpcpy(index_name, stem), ".index") + 1;
    g_stpcpy(g_stpcpy(time_index_name, stem), ".timeindex");
    segment->log_name = names;
    segment->index_name = index_name;
    segment->time_index_name = time_index_name;
    segment->base_offset = base_offset;
    segment->next_offset = base_offset;
    segment->index_interval_bytes = index_interval_bytes;
    segment->max_timestamp_ms = PLOG_NO_TIMESTAMP;
    segment->offset_of_max_timestamp = PLOG_NO_OFFSET;
    segment->rolling_timestamp_ms = PLOG_NO_TIMESTAMP;
    segment->created_ms = now_ms;
    segment->last_modified_ms = now_ms;
    return segment;
}

/* The entries of the segment's indexes: how many, and the `i`th. */
static guint
index_len(const PlogSegment *segment)
{
    return segment->index != NULL ? segment->index->len : 0;
}

static const PlogIndexEntry *
index_at(const PlogSegment *segment, guint i)
{
    KSIM_ASSERT(i < index_len(segment));
    return &g_array_index(segment->index, PlogIndexEntry, i);
}

static guint
time_index_len(const PlogSegment *segment)
{
    return segment->time_index != NULL ? segment->time_index->len : 0;
}

static const PlogTimeIndexEntry *
time_index_at(const PlogSegment *segment, guint i)
{
    KSIM_ASSERT(i < time_index_len(segment));
    return &g_array_index(segment->time_index, PlogTimeIndexEntry, i);
}

/* Forgets every batch, as before the first append. */
static void
segment_reset(PlogSegment *segment)
{
    segment->next_offset = segment->base_offset;
    segment->file_bytes = 0;
    segment->size_bytes = 0;
    segment->bytes_since_index = 0;
    segment->max_timestamp_ms = PLOG_NO_TIMESTAMP;
    segment->offset_of_max_timestamp = PLOG_NO_OFFSET;
    segment->rolling_timestamp_ms = PLOG_NO_TIMESTAMP;
    segment->batch_count = 0;
    g_clear_pointer(&segment->index, g_array_unref);
    g_clear_pointer(&segment->time_index, g_array_unref);
    segment->recent_count = 0;
    segment->recent_next = 0;
}

static void
file_create_empty(SimDisk *disk, const char *name)
{
    if (sim_disk_exists(disk, name)) {
        sim_disk_truncate(disk, name, 0);
        return;
    }
    SimDiskStatus status = sim_disk_create(disk, name);
    /* A failed disk (EIO) leaves the file missing: its appends fail too, and
     * the broker takes the first failure as its log directory's. */
    KSIM_ASSERT(status == SIM_DISK_OK || status == SIM_DISK_EIO);
}

PlogSegment *
plog_segment_create(SimDisk *disk, const char *dir, gint64 base_offset, gint64 index_interval_bytes,
                    gint64 now_ms)
{
    PlogSegment *segment = segment_new(disk, dir, base_offset, index_interval_bytes, now_ms);
    file_create_empty(disk, segment->log_name);
    file_create_empty(disk, segment->index_name);
    file_create_empty(disk, segment->time_index_name);
    return segment;
}

void
plog_segment_free(PlogSegment *segment)
{
    if (segment == NULL)
        return;
    g_free(segment->log_name);
    if (segment->index != NULL)
        g_array_unref(segment->index);
    if (segment->time_index != NULL)
        g_array_unref(segment->time_index);
    g_free(segment->recent);
    g_free(segment);
}

static void
delete_if_exists(SimDisk *disk, const char *name)
{
    if (sim_disk_exists(disk, name))
        sim_disk_delete(disk, name);
}

void
plog_segment_delete(PlogSegment *segment)
{
    KSIM_ASSERT(segment != NULL);
    delete_if_exists(segment->disk, segment->log_name);
    delete_if_exists(segment->disk, segment->index_name);
    delete_if_exists(segment->disk, segment->time_index_name);
    plog_segment_free(segment);
}

void
plog_segment_delete_files(SimDisk *disk, const char *dir, gint64 base_offset)
{
    PlogSegment *segment = segment_new(disk, dir, base_offset, 0, 0);
    plog_segment_delete(segment);
}

/* ---- accessors ---- */

gint64
plog_segment_base_offset(const PlogSegment *segment)
{
    return segment->base_offset;
}

gint64
plog_segment_next_offset(const PlogSegment *segment)
{
    return segment->next_offset;
}

gboolean
plog_segment_is_empty(const PlogSegment *segment)
{
    return segment->batch_count == 0;
}

gint64
plog_segment_size_bytes(const PlogSegment *segment)
{
    return segment->size_bytes;
}

gint64
plog_segment_file_bytes(const PlogSegment *segment)
{
    return segment->file_bytes;
}

gint64
plog_segment_max_timestamp_ms(const PlogSegment *segment)
{
    if (segment->max_timestamp_ms != PLOG_NO_TIMESTAMP)
        return segment->max_timestamp_ms;
    return segment->last_modified_ms;
}

guint
plog_segment_index(const PlogSegment *segment, const PlogIndexEntry **entries)
{
    guint len = index_len(segment);
    if (entries != NULL)
        *entries = len > 0 ? index_at(segment, 0) : NULL;
    return len;
}

guint
plog_segment_time_index(const PlogSegment *segment, const PlogTimeIndexEntry **entries)
{
    guint len = time_index_len(segment);
    if (entries != NULL)
        *entries = len > 0 ? time_index_at(segment, 0) : NULL;
    return len;
}

/* ---- accounting: the same for appends and for scans ---- */

static guint32
relative_offset(const PlogSegment *segment, gint64 offset)
{
    KSIM_ASSERT(offset >= segment->base_offset);
    KSIM_ASSERT(offset - segment->base_offset <= RELATIVE_OFFSET_MAX);
    return (guint32)(offset - segment->base_offset);
}

static gint64
time_index_last_ms(const PlogSegment *segment)
{
    guint len = time_index_len(segment);
    return len == 0 ? PLOG_NO_TIMESTAMP : time_index_at(segment, len - 1)->timestamp_ms;
}

static void
plan_batch(const PlogSegment *segment, const BatchDesc *batch, AppendPlan *plan)
{
    KSIM_ASSERT(batch->base_offset == segment->next_offset);
    KSIM_ASSERT(segment->file_bytes <= POSITION_MAX);
    memset(plan, 0, sizeof *plan);
    plan->max_timestamp_ms = segment->max_timestamp_ms;
    plan->offset_of_max_timestamp = segment->offset_of_max_timestamp;
    if (batch->max_timestamp_ms > plan->max_timestamp_ms) {
        plan->max_timestamp_ms = batch->max_timestamp_ms;
        plan->offset_of_max_timestamp = batch->base_offset;
    }
    /* Kafka's rule: the interval is checked before this batch is counted. */
    plan->add_index = segment->bytes_since_index > segment->index_interval_bytes;
    plan->index_entry.relative_offset = relative_offset(segment, batch->base_offset);
    plan->index_entry.position = (guint32)segment->file_bytes;
    plan->add_time_index = plan->add_index && plan->max_timestamp_ms > time_index_last_ms(segment);
    plan->time_entry.timestamp_ms = plan->max_timestamp_ms;
    if (plan->add_time_index)
        plan->time_entry.relative_offset = relative_offset(segment, plan->offset_of_max_timestamp);
}

static void
apply_batch(PlogSegment *segment, const BatchDesc *batch, const AppendPlan *plan)
{
    if (plan->add_index) {
        if (segment->index == NULL)
            segment->index = g_array_new(FALSE, FALSE, sizeof(PlogIndexEntry));
        g_array_append_val(segment->index, plan->index_entry);
        segment->bytes_since_index = 0;
    }
    if (plan->add_time_index) {
        if (segment->time_index == NULL)
            segment->time_index = g_array_new(FALSE, FALSE, sizeof(PlogTimeIndexEntry));
        g_array_append_val(segment->time_index, plan->time_entry);
    }
    if (segment->batch_count == 0)
        segment->rolling_timestamp_ms = batch->max_timestamp_ms;
    segment->bytes_since_index += batch->size_bytes;
    segment->max_timestamp_ms = plan->max_timestamp_ms;
    segment->offset_of_max_timestamp = plan->offset_of_max_timestamp;
    if (segment->recent == NULL)
        segment->recent = g_new(RecentBatch, RECENT_BATCHES);
    segment->recent[segment->recent_next] = (RecentBatch){batch->base_offset, segment->file_bytes};
    segment->recent_next = (segment->recent_next + 1) % RECENT_BATCHES;
    segment->recent_count = MIN(segment->recent_count + 1, RECENT_BATCHES);
    segment->next_offset = batch->base_offset + batch->record_count;
    segment->file_bytes += batch->encoded_bytes;
    segment->size_bytes += batch->size_bytes;
    segment->batch_count++;
}

static void
desc_from_header(const PlogBatchHeader *header, BatchDesc *out)
{
    out->base_offset = header->base_offset;
    out->record_count = header->record_count;
    out->size_bytes = plog_batch_header_size_bytes(header);
    out->max_timestamp_ms = header->max_timestamp_ms;
    out->encoded_bytes = plog_batch_header_encoded_bytes(header);
}

/* ---- index files ---- */

static void
index_entry_encode(const PlogIndexEntry *entry, guint8 *p)
{
    for (int i = 0; i < 4; i++) {
        p[i] = (guint8)(entry->relative_offset >> (8 * i));
        p[4 + i] = (guint8)(entry->position >> (8 * i));
    }
}

static void
time_entry_encode(const PlogTimeIndexEntry *entry, guint8 *p)
{
    for (int i = 0; i < 8; i++)
        p[i] = (guint8)((guint64)entry->timestamp_ms >> (8 * i));
    for (int i = 0; i < 4; i++)
        p[8 + i] = (guint8)(entry->relative_offset >> (8 * i));
}

static GByteArray *
index_encode(const PlogSegment *segment)
{
    GByteArray *bytes = g_byte_array_sized_new(index_len(segment) * PLOG_INDEX_ENTRY_BYTES);
    g_byte_array_set_size(bytes, index_len(segment) * PLOG_INDEX_ENTRY_BYTES);
    for (guint i = 0; i < index_len(segment); i++)
        index_entry_encode(index_at(segment, i), bytes->data + i * PLOG_INDEX_ENTRY_BYTES);
    return bytes;
}

static GByteArray *
time_index_encode(const PlogSegment *segment)
{
    guint len = time_index_len(segment) * PLOG_TIME_INDEX_ENTRY_BYTES;
    GByteArray *bytes = g_byte_array_sized_new(len);
    g_byte_array_set_size(bytes, len);
    for (guint i = 0; i < time_index_len(segment); i++)
        time_entry_encode(time_index_at(segment, i), bytes->data + i * PLOG_TIME_INDEX_ENTRY_BYTES);
    return bytes;
}

/* Makes the file hold exactly `expected`: cut when it holds more, rewritten
 * when it differs. FALSE when a full disk refused the rewrite. */
static gboolean
index_file_sync(SimDisk *disk, const char *name, const GByteArray *expected)
{
    if (!sim_disk_exists(disk, name))
        sim_disk_create(disk, name);
    g_autoptr(GByteArray) existing = plog_file_read_all(disk, name);
    KSIM_ASSERT(existing != NULL);
    if (existing->len >= expected->len &&
        (expected->len == 0 || memcmp(existing->data, expected->data, expected->len) == 0)) {
        if (existing->len > expected->len)
            sim_disk_truncate(disk, name, expected->len);
        return TRUE;
    }
    sim_disk_truncate(disk, name, 0);
    return sim_disk_append(disk, name, expected->data, expected->len) == SIM_DISK_OK;
}

static void
index_files_sync(PlogSegment *segment)
{
    g_autoptr(GByteArray) index = index_encode(segment);
    g_autoptr(GByteArray) time_index = time_index_encode(segment);
    gboolean ok = index_file_sync(segment->disk, segment->index_name, index);
    ok = index_file_sync(segment->disk, segment->time_index_name, time_index) && ok;
    segment->index_files_stale = !ok;
}

/* ---- scanning ---- */

static gboolean
read_header(const PlogSegment *segment, gint64 position, PlogBatchHeader *out)
{
    guint8 buf[PLOG_BATCH_HEADER_BYTES];
    gssize got = sim_disk_read(segment->disk, segment->log_name, position, buf, sizeof buf);
    KSIM_ASSERT(got >= 0);
    return plog_batch_header_decode(buf, (gsize)got, out);
}

/* Checks the batch at `position` of a file of `file_size` bytes: a plausible
 * header continuing the segment's offsets, a body inside the file, and, when
 * it ends at or after `verify_from`, a matching checksum. */
static gboolean
scan_one(PlogSegment *segment, gint64 position, gint64 file_size, gint64 verify_from,
         GByteArray *scratch, PlogBatchHeader *h)
{
    if (!read_header(segment, position, h) || h->base_offset != segment->next_offset)
        return FALSE;
    gint64 encoded_bytes = plog_batch_header_encoded_bytes(h);
    if (encoded_bytes > file_size - position || position > POSITION_MAX)
        return FALSE;
    if (plog_batch_header_last_offset(h) - segment->base_offset > RELATIVE_OFFSET_MAX)
        return FALSE;
    if (plog_batch_header_last_offset(h) < verify_from)
        return TRUE;
    PlogBatch *batch = NULL;
    plog_segment_read(segment, position, scratch, &batch);
    gboolean ok = batch != NULL;
    plog_batch_free(batch);
    return ok;
}

/* Rebuilds the in-memory state from the `.log` file, cutting it at the first
 * batch that fails scan_one. */
static void
segment_scan(PlogSegment *segment, gint64 verify_from, PlogSegmentScanFn fn, void *user_data,
             PlogSegmentRecovery *out)
{
    segment_reset(segment);
    memset(out, 0, sizeof *out);
    gint64 file_size = sim_disk_size(segment->disk, segment->log_name);
    KSIM_ASSERT(file_size >= 0);
    g_autoptr(GByteArray) scratch = g_byte_array_new();
    gint64 position = 0;
    while (position < file_size) {
        PlogBatchHeader h;
        if (!scan_one(segment, position, file_size, verify_from, scratch, &h)) {
            out->cut = TRUE;
            out->cut_position = position;
            sim_disk_truncate(segment->disk, segment->log_name, position);
            break;
        }
        if (plog_batch_header_last_offset(&h) >= verify_from)
            out->batches_checked++;
        BatchDesc desc;
        desc_from_header(&h, &desc);
        AppendPlan plan;
        plan_batch(segment, &desc, &plan);
        apply_batch(segment, &desc, &plan);
        if (fn != NULL)
            fn(&h, user_data);
        position += desc.encoded_bytes;
    }
    KSIM_ASSERT(segment->file_bytes == position);
    index_files_sync(segment);
}

PlogSegment *
plog_segment_recover(SimDisk *disk, const char *dir, gint64 base_offset,
                     gint64 index_interval_bytes, gint64 verify_from_offset, gint64 now_ms,
                     PlogSegmentScanFn fn, void *user_data, PlogSegmentRecovery *out)
{
    KSIM_ASSERT(out != NULL);
    PlogSegment *segment = segment_new(disk, dir, base_offset, index_interval_bytes, now_ms);
    KSIM_ASSERT(sim_disk_exists(disk, segment->log_name));
    segment_scan(segment, verify_from_offset, fn, user_data, out);
    return segment;
}

/* ---- append ---- */

gboolean
plog_segment_should_roll(const PlogSegment *segment, const PlogBatchHeader *header,
                         gint64 segment_bytes, gint64 roll_ms, gint64 now_ms)
{
    gint64 size_bytes = plog_batch_header_size_bytes(header);
    gint64 encoded_bytes = plog_batch_header_encoded_bytes(header);
    KSIM_ASSERT(segment_bytes > 0);
    KSIM_ASSERT(roll_ms > 0);
    if (plog_segment_is_empty(segment))
        return FALSE;
    if (segment->size_bytes > segment_bytes - size_bytes)
        return TRUE;
    if (plog_batch_header_last_offset(header) - segment->base_offset > RELATIVE_OFFSET_MAX)
        return TRUE;
    if (segment->file_bytes + encoded_bytes > POSITION_MAX)
        return TRUE;
    if (index_len(segment) >= INDEX_ENTRIES_MAX || segment->batch_count >= SEGMENT_BATCHES_MAX)
        return TRUE;
    gint64 waited_ms = now_ms - segment->created_ms;
    if (segment->rolling_timestamp_ms != PLOG_NO_TIMESTAMP)
        waited_ms = header->max_timestamp_ms - segment->rolling_timestamp_ms;
    return waited_ms > roll_ms;
}

/* Writes the index entries of `plan`; a full disk marks the index files
 * stale (recovery rebuilds them) rather than failing an append that is
 * already in the log. */
static void
write_index_entries(PlogSegment *segment, const AppendPlan *plan)
{
    if (segment->index_files_stale)
        return;
    guint8 buf[PLOG_TIME_INDEX_ENTRY_BYTES];
    SimDiskStatus status = SIM_DISK_OK;
    if (plan->add_index) {
        index_entry_encode(&plan->index_entry, buf);
        status = sim_disk_append(segment->disk, segment->index_name, buf, PLOG_INDEX_ENTRY_BYTES);
    }
    if (status == SIM_DISK_OK && plan->add_time_index) {
        time_entry_encode(&plan->time_entry, buf);
        status = sim_disk_append(segment->disk, segment->time_index_name, buf,
                                 PLOG_TIME_INDEX_ENTRY_BYTES);
    }
    segment->index_files_stale = status != SIM_DISK_OK;
}

SimDiskStatus
plog_segment_append(PlogSegment *segment, const PlogBatchHeader *header, const guint8 *encoded,
                    gsize encoded_bytes, gint64 now_ms)
{
    KSIM_ASSERT(header->base_offset == segment->next_offset);
    KSIM_ASSERT(segment->file_bytes + (gint64)encoded_bytes <= POSITION_MAX);
    KSIM_ASSERT((gint64)encoded_bytes == plog_batch_header_encoded_bytes(header));
    BatchDesc desc = {
        .base_offset = header->base_offset,
        .record_count = header->record_count,
        .size_bytes = plog_batch_header_size_bytes(header),
        .max_timestamp_ms = header->max_timestamp_ms,
        .encoded_bytes = (gint64)encoded_bytes,
    };
    AppendPlan plan;
    plan_batch(segment, &desc, &plan);
    /* The batch stands for its records' full size in the disk's timing
     * (writeback, page cache): Kafka writes size_bytes into the file. */
    sim_disk_charge_next(segment->disk, MAX(desc.size_bytes, (gint64)encoded_bytes));
    SimDiskStatus status =
        sim_disk_append(segment->disk, segment->log_name, encoded, encoded_bytes);
    if (status != SIM_DISK_OK)
        return status;
    write_index_entries(segment, &plan);
    apply_batch(segment, &desc, &plan);
    segment->last_modified_ms = now_ms;
    return SIM_DISK_OK;
}

/* ---- lookup and read ---- */

/* The position of the last index entry at or below `relative`, or 0. */
static gint64
index_lookup(const PlogSegment *segment, guint32 relative)
{
    const PlogIndexEntry *entries;
    guint lo = 0;
    guint hi = plog_segment_index(segment, &entries);
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (entries[mid].relative_offset <= relative)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : entries[lo - 1].position;
}

/* The position of the batch holding `offset` through the index and a scan
 * of at most one interval, without the recent batches. */
static gint64
find_position_by_index(const PlogSegment *segment, gint64 offset)
{
    gint64 position = index_lookup(segment, relative_offset(segment, offset));
    /* Between index entries lie at most index_interval_bytes of batches, each
     * at least PLOG_BATCH_OVERHEAD_BYTES, plus the one that crossed it. */
    gint64 steps_max = segment->index_interval_bytes / PLOG_BATCH_OVERHEAD_BYTES + 3;
    for (gint64 step = 0; step < steps_max; step++) {
        PlogBatchHeader h;
        if (position >= segment->file_bytes || !read_header(segment, position, &h))
            return -1;
        if (plog_batch_header_last_offset(&h) >= offset)
            return h.base_offset <= offset ? position : -1;
        position += plog_batch_header_encoded_bytes(&h);
    }
    KSIM_ASSERT(!"index lookup scanned more than one interval");
    return -1;
}

gint64
plog_segment_find_position(const PlogSegment *segment, gint64 offset)
{
    KSIM_ASSERT(offset >= segment->base_offset);
    KSIM_ASSERT(offset < segment->next_offset);
    for (guint i = 0; i < segment->recent_count; i++) {
        if (segment->recent[i].base_offset == offset)
            return segment->recent[i].position;
    }
    return find_position_by_index(segment, offset);
}

gint64
plog_segment_read_raw(const PlogSegment *segment, gint64 position, GByteArray *out,
                      PlogBatchHeader *header)
{
    KSIM_ASSERT(position >= 0);
    if (!read_header(segment, position, header))
        return -1;
    gint64 encoded_bytes = plog_batch_header_encoded_bytes(header);
    guint start = out->len;
    g_byte_array_set_size(out, start + (guint)encoded_bytes);
    gssize got = sim_disk_read(segment->disk, segment->log_name, position, out->data + start,
                               (gsize)encoded_bytes);
    if (got != encoded_bytes) {
        g_byte_array_set_size(out, start);
        return -1;
    }
    /* A batch read to be sent (a fetch) costs disk time for what is not in
     * the page cache, at the batch's full size. */
    sim_disk_charge_next(segment->disk,
                         MAX(plog_batch_header_size_bytes(header), encoded_bytes));
    sim_disk_charge_read(segment->disk, segment->log_name, position, (gsize)encoded_bytes);
    return position + encoded_bytes;
}

gboolean
plog_segment_read_rest(const PlogSegment *segment, gint64 position, GByteArray *out)
{
    KSIM_ASSERT(position >= 0 && position <= segment->file_bytes);
    return plog_segment_read_range(segment, position, segment->file_bytes - position, out);
}

const guint8 *
plog_segment_peek_rest(const PlogSegment *segment, gint64 position, gsize *len)
{
    KSIM_ASSERT(position >= 0 && position <= segment->file_bytes);
    *len = (gsize)(segment->file_bytes - position);
    return sim_disk_peek(segment->disk, segment->log_name, position, *len);
}

gboolean
plog_segment_read_range(const PlogSegment *segment, gint64 position, gint64 bytes,
                        GByteArray *out)
{
    KSIM_ASSERT(position >= 0 && bytes >= 0 && position + bytes <= segment->file_bytes);
    gsize len = (gsize)bytes;
    guint start = out->len;
    g_byte_array_set_size(out, start + (guint)len);
    gssize got = sim_disk_read(segment->disk, segment->log_name, position, out->data + start, len);
    if (got != (gssize)len) {
        g_byte_array_set_size(out, start);
        return FALSE;
    }
    return TRUE;
}

gint64
plog_segment_read(const PlogSegment *segment, gint64 position, GByteArray *scratch, PlogBatch **out)
{
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(position >= 0);
    *out = NULL;
    PlogBatchHeader h;
    if (!read_header(segment, position, &h))
        return -1;
    gint64 encoded_bytes = plog_batch_header_encoded_bytes(&h);
    g_byte_array_set_size(scratch, (guint)encoded_bytes);
    gssize got = sim_disk_read(segment->disk, segment->log_name, position, scratch->data,
                               (gsize)encoded_bytes);
    if (got != encoded_bytes)
        return -1;
    sim_disk_charge_next(segment->disk, MAX(plog_batch_header_size_bytes(&h), encoded_bytes));
    sim_disk_charge_read(segment->disk, segment->log_name, position, (gsize)encoded_bytes);
    *out = plog_batch_decode(scratch->data, (gsize)encoded_bytes);
    return *out == NULL ? -1 : position + encoded_bytes;
}

/* The relative offset of the last time-index entry at or below
 * `timestamp_ms`, or 0. */
static guint32
time_index_lookup(const PlogSegment *segment, gint64 timestamp_ms)
{
    const PlogTimeIndexEntry *entries;
    guint lo = 0;
    guint hi = plog_segment_time_index(segment, &entries);
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (entries[mid].timestamp_ms <= timestamp_ms)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? 0 : entries[lo - 1].relative_offset;
}

gint64
plog_segment_offset_for_timestamp(const PlogSegment *segment, gint64 timestamp_ms)
{
    if (plog_segment_is_empty(segment) || segment->max_timestamp_ms < timestamp_ms)
        return -1;
    gint64 position = index_lookup(segment, time_index_lookup(segment, timestamp_ms));
    /* Batches before the time-index entry's are all older than its timestamp,
     * so the scan may start at any position up to that batch. */
    for (guint64 step = 0; step < segment->batch_count; step++) {
        PlogBatchHeader h;
        if (position >= segment->file_bytes || !read_header(segment, position, &h))
            return -1;
        if (h.max_timestamp_ms >= timestamp_ms)
            return h.base_offset;
        position += plog_batch_header_encoded_bytes(&h);
    }
    return -1;
}

void
plog_segment_foreach(const PlogSegment *segment, PlogSegmentScanFn fn, void *user_data)
{
    KSIM_ASSERT(fn != NULL);
    gint64 position = 0;
    for (guint64 i = 0; i < segment->batch_count; i++) {
        PlogBatchHeader h;
        gboolean ok = read_header(segment, position, &h);
        KSIM_ASSERT(ok);
        fn(&h, user_data);
        position += plog_batch_header_encoded_bytes(&h);
    }
    KSIM_ASSERT(position == segment->file_bytes);
}

/* ---- truncation and flush ---- */

gint64
plog_segment_truncate_to(PlogSegment *segment, gint64 offset)
{
    KSIM_ASSERT(offset >= segment->base_offset);
    if (offset >= segment->next_offset)
        return segment->next_offset;
    gint64 position = plog_segment_find_position(segment, offset);
    KSIM_ASSERT(position >= 0);
    sim_disk_truncate(segment->disk, segment->log_name, position);
    /* Rescanning what is kept rebuilds the indexes and counters exactly as the
     * appends built them; the index files are then cut to match. */
    PlogSegmentRecovery scan;
    segment_scan(segment, G_MAXINT64, NULL, NULL, &scan);
    KSIM_ASSERT(!scan.cut);
    KSIM_ASSERT(segment->file_bytes == position);
    KSIM_ASSERT(segment->next_offset <= offset);
    return segment->next_offset;
}

guint
plog_segment_fsync(PlogSegment *segment, SimDiskSyncFn cb, void *arg)
{
    sim_disk_fsync(segment->disk, segment->log_name, cb, arg);
    sim_disk_fsync(segment->disk, segment->index_name, cb, arg);
    sim_disk_fsync(segment->disk, segment->time_index_name, cb, arg);
    return 3;
}

/* ---- invariants ---- */

static void
check_indexes(const PlogSegment *segment)
{
    gint64 span = segment->next_offset - segment->base_offset;
    for (guint i = 0; i < index_len(segment); i++) {
        const PlogIndexEntry *entry = index_at(segment, i);
        KSIM_ASSERT(entry->relative_offset < span);
        KSIM_ASSERT(entry->position < segment->file_bytes);
        if (i == 0)
            continue;
        const PlogIndexEntry *prev = entry - 1;
        KSIM_ASSERT(prev->relative_offset < entry->relative_offset);
        KSIM_ASSERT(prev->position < entry->position);
    }
    for (guint i = 0; i < time_index_len(segment); i++) {
        const PlogTimeIndexEntry *entry = time_index_at(segment, i);
        KSIM_ASSERT(entry->timestamp_ms <= segment->max_timestamp_ms);
        KSIM_ASSERT(entry->relative_offset < span);
        if (i == 0)
            continue;
        KSIM_ASSERT((entry - 1)->timestamp_ms < entry->timestamp_ms);
        KSIM_ASSERT((entry - 1)->relative_offset <= entry->relative_offset);
    }
}

static void
check_file_equals(const SimDisk *disk, const char *name, const GByteArray *expected)
{
    g_autoptr(GByteArray) bytes = plog_file_read_all(disk, name);
    KSIM_ASSERT(bytes != NULL);
    KSIM_ASSERT(bytes->len == expected->len);
    KSIM_ASSERT(bytes->len == 0 || memcmp(bytes->data, expected->data, bytes->len) == 0);
}

/* Invariant 1, from the file: the batches follow each other without a gap in
 * offsets or bytes, and end where the segment says. */
static void
check_batches_contiguous(const PlogSegment *segment)
{
    gint64 position = 0;
    gint64 offset = segment->base_offset;
    guint64 batches = 0;
    while (position < segment->file_bytes) {
        KSIM_ASSERT(batches < segment->batch_count);
        PlogBatchHeader h;
        KSIM_ASSERT(read_header(segment, position, &h));
        KSIM_ASSERT(h.base_offset == offset);
        offset = plog_batch_header_last_offset(&h) + 1;
        position += plog_batch_header_encoded_bytes(&h);
        batches++;
    }
    KSIM_ASSERT(position == segment->file_bytes);
    KSIM_ASSERT(offset == segment->next_offset);
    KSIM_ASSERT(batches == segment->batch_count);
}

static void
check_files(const PlogSegment *segment)
{
    check_batches_contiguous(segment);
    if (segment->index_files_stale)
        return;
    g_autoptr(GByteArray) index = index_encode(segment);
    g_autoptr(GByteArray) time_index = time_index_encode(segment);
    check_file_equals(segment->disk, segment->index_name, index);
    check_file_equals(segment->disk, segment->time_index_name, time_index);
    for (guint i = 0; i < index_len(segment); i++) {
        const PlogIndexEntry *entry = index_at(segment, i);
        PlogBatchHeader h;
        KSIM_ASSERT(read_header(segment, entry->position, &h));
        KSIM_ASSERT(h.base_offset == segment->base_offset + entry->relative_offset);
    }
}

/* Invariant 6: every remembered batch start is one (a header there with that
 * base), and the index lookup agrees with it. */
static void
check_recent(const PlogSegment *segment)
{
    KSIM_ASSERT(segment->recent_count <= RECENT_BATCHES);
    KSIM_ASSERT(segment->recent_count <= segment->batch_count);
    for (guint i = 0; i < segment->recent_count; i++) {
        const RecentBatch *recent = &segment->recent[i];
        KSIM_ASSERT(recent->position >= 0 && recent->position < segment->file_bytes);
        PlogBatchHeader h;
        KSIM_ASSERT(read_header(segment, recent->position, &h));
        KSIM_ASSERT(h.base_offset == recent->base_offset);
        KSIM_ASSERT(find_position_by_index(segment, recent->base_offset) == recent->position);
    }
}

void
plog_segment_check_invariants(const PlogSegment *segment, gboolean with_files)
{
    KSIM_ASSERT(segment->base_offset >= 0);
    KSIM_ASSERT(segment->next_offset >= segment->base_offset);
    KSIM_ASSERT(segment->next_offset - segment->base_offset <= RELATIVE_OFFSET_MAX + 1);
    gboolean empty = segment->batch_count == 0;
    KSIM_ASSERT(empty == (segment->next_offset == segment->base_offset));
    KSIM_ASSERT(empty == (segment->file_bytes == 0));
    KSIM_ASSERT(empty == (segment->size_bytes == 0));
    if (empty)
        KSIM_ASSERT(index_len(segment) == 0);
    if (empty)
        KSIM_ASSERT(time_index_len(segment) == 0);
    KSIM_ASSERT(segment->file_bytes <= POSITION_MAX);
    KSIM_ASSERT(segment->bytes_since_index >= 0);
    KSIM_ASSERT(segment->bytes_since_index <= segment->size_bytes);
    check_indexes(segment);
    KSIM_ASSERT(sim_disk_size(segment->disk, segment->log_name) == segment->file_bytes);
    check_recent(segment);
    if (with_files)
        check_files(segment);
}
