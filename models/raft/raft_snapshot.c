/*
 * raft_snapshot: the metadata log's snapshots and its cleaning, as Kafka's
 * KafkaMetadataLog keeps them (core/src/main/scala/kafka/raft/
 * KafkaMetadataLog.scala, with raft/src/main/java/org/apache/kafka/snapshot/
 * Snapshots, SnapshotPath and FileRawSnapshotWriter; Apache Kafka 4.0, trunk
 * 1eb7644).
 *
 * A snapshot is a file `<end offset>-<epoch>.checkpoint` beside the log's
 * segments. It is written as `.checkpoint.part`, fsynced and renamed
 * (FileRawSnapshotWriter.freeze); only then is it one of the node's
 * snapshots (onSnapshotFrozen). The file holds the snapshot's content
 * reference, logical size and last contained timestamp (raft_node.h,
 * RaftSnapshot): sizes are logical, as the log's are.
 *
 * Lifecycle of a snapshot on a node:
 *   raft_snapshot_write ──▶ writing (.part) ──fsync, rename──▶ frozen
 *   frozen ──deleteBeforeSnapshot of a later one──▶ file deleted
 * On open (KafkaMetadataLog.recoverSnapshots), partial files and snapshots
 * below the log start offset are deleted, then truncateToLatestSnapshot
 * empties a log that ends before its latest snapshot (a follower that
 * crashed after downloading a snapshot and before truncating).
 *
 * Cleaning (maybeClean): while the log's size plus the snapshots' exceeds
 * retention_bytes, or the oldest snapshot is older than retention_ms, the
 * oldest snapshot goes and the log start offset moves up to the next one's
 * end offset, deleting the segments wholly below it; the latest snapshot is
 * never deleted, nor the log past it, nor past the high watermark
 * (UnifiedLog.maybeIncrementLogStartOffset refuses that).
 */
#include "raft_internal.h"

#include <stdio.h>
#include <string.h>

#include "sim_assert.h"
#include "sim_disk.h"

#define SNAPSHOT_DIR RAFT_TOPIC "-0/"
/* The content line: payload, size, timestamp. */
#define SNAPSHOT_BODY_MAX 96

static char *
snapshot_name(gint64 end_offset, gint32 epoch, const char *suffix)
{
    return g_strdup_printf(SNAPSHOT_DIR "%020" G_GINT64_FORMAT "-%010d%s", end_offset, epoch,
                           suffix);
}

/* Snapshots.parse: TRUE for a snapshot file's name, with its id and
 * whether it is partial. */
static gboolean
snapshot_parse(const char *name, gint64 *end_offset, gint32 *epoch, gboolean *partial)
{
    if (!g_str_has_prefix(name, SNAPSHOT_DIR))
        return FALSE;
    const char *rest = name + strlen(SNAPSHOT_DIR);
    if (strlen(rest) < 31 || rest[20] != '-')
        return FALSE;
    for (guint i = 0; i < 31; i++) {
        if (i != 20 && !g_ascii_isdigit(rest[i]))
            return FALSE;
    }
    const char *suffix = rest + 31;
    if (strcmp(suffix, RAFT_SNAPSHOT_SUFFIX) == 0)
        *partial = FALSE;
    else if (strcmp(suffix, RAFT_SNAPSHOT_PARTIAL_SUFFIX) == 0)
        *partial = TRUE;
    else
        return FALSE;
    *end_offset = g_ascii_strtoll(rest, NULL, 10);
    *epoch = (gint32)g_ascii_strtoll(rest + 21, NULL, 10);
    return TRUE;
}

static gboolean
snapshot_read(const SimDisk *disk, const char *name, RaftSnapshot *out)
{
    gint64 size = sim_disk_size(disk, name);
    if (size <= 0 || size >= SNAPSHOT_BODY_MAX)
        return FALSE;
    char buf[SNAPSHOT_BODY_MAX] = {0};
    if (sim_disk_read(disk, name, 0, buf, (gsize)size) != size)
        return FALSE;
    guint64 payload;
    gint64 bytes, timestamp;
    char tail = 0;
    if (sscanf(buf, "%" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "%c",
               &payload, &bytes, &timestamp, &tail) != 4 ||
        tail != '\n' || bytes < 0)
        return FALSE;
    out->payload = payload;
    out->size_bytes = bytes;
    out->timestamp_ms = timestamp;
    return TRUE;
}

static gint
snapshot_cmp(gconstpointer a, gconstpointer b)
{
    const RaftSnapshot *x = a, *y = b;
    if (x->end_offset != y->end_offset)
        return x->end_offset < y->end_offset ? -1 : 1;
    return x->epoch < y->epoch ? -1 : x->epoch > y->epoch;
}

static void
snapshot_delete_file(RaftNode *node, const RaftSnapshot *snapshot)
{
    SimDisk *disk = sim_node_disk(node->world, node->node);
    g_autofree char *name = snapshot_name(snapshot->end_offset, snapshot->epoch,
                                          RAFT_SNAPSHOT_SUFFIX);
    if (sim_disk_exists(disk, name))
        sim_disk_delete(disk, name);
}

const RaftSnapshot *
raft_snapshot_earliest(const RaftNode *node)
{
    const GArray *snapshots = node->state->snapshots;
    return snapshots->len > 0 ? &g_array_index(snapshots, RaftSnapshot, 0) : NULL;
}

const RaftSnapshot *
raft_snapshot_latest(const RaftNode *node)
{
    const GArray *snapshots = node->state->snapshots;
    return snapshots->len > 0 ? &g_array_index(snapshots, RaftSnapshot, snapshots->len - 1)
                              : NULL;
}

const RaftSnapshot *
raft_snapshot_find(const RaftNode *node, gint64 end_offset, gint32 epoch)
{
    const GArray *snapshots = node->state->snapshots;
    for (guint i = 0; i < snapshots->len; i++) {
        const RaftSnapshot *s = &g_array_index(snapshots, RaftSnapshot, i);
        if (s->end_offset == end_offset && s->epoch == epoch)
            return s;
    }
    return NULL;
}

static gboolean
snapshot_writing(const RaftNode *node, gint64 end_offset, gint32 epoch)
{
    const GArray *writing = node->state->snapshots_writing;
    for (guint i = 0; i < writing->len; i++) {
        const RaftSnapshotWrite *w = &g_array_index(writing, RaftSnapshotWrite, i);
        if (w->snapshot.end_offset == end_offset && w->snapshot.epoch == epoch)
            return TRUE;
    }
    return FALSE;
}

gint32
raft_epoch_of_offset(const RaftNode *node, gint64 offset)
{
    const GArray *entries = plog_epoch_entries(node->state->log);
    gint32 epoch = -1;
    for (guint i = 0; i < entries->len; i++) {
        const PlogEpochEntry *e = &g_array_index(entries, PlogEpochEntry, i);
        if (e->start_offset > offset)
            break;
        epoch = e->epoch;
    }
    if (epoch >= 0 && offset >= plog_log_start_offset(node->state->log))
        return epoch;
    const GArray *snapshots = node->state->snapshots;
    for (guint i = 0; i < snapshots->len; i++) {
        const RaftSnapshot *s = &g_array_index(snapshots, RaftSnapshot, i);
        if (s->end_offset == offset + 1)
            return s->epoch;
    }
    return epoch >= 0 ? epoch : 0;
}

/* forgetSnapshotsBefore and removeSnapshots: the snapshots before
 * `end_offset` are forgotten and their files deleted. */
static guint
forget_snapshots_before(RaftNode *node, gint64 end_offset)
{
    GArray *snapshots = node->state->snapshots;
    guint n = 0;
    while (n < snapshots->len && g_array_index(snapshots, RaftSnapshot, n).end_offset < end_offset) {
        snapshot_delete_file(node, &g_array_index(snapshots, RaftSnapshot, n));
        n++;
    }
    g_array_remove_range(snapshots, 0, n);
    return n;
}

gboolean
raft_snapshot_truncate_to_latest(RaftNode *node)
{
    RaftState *state = node->state;
    const RaftSnapshot *latest = raft_snapshot_latest(node);
    if (latest == NULL)
        return FALSE;
    gint32 log_epoch = MAX(plog_epoch_latest(state->log), 0);
    gint64 leo = plog_log_end_offset(state->log);
    if (!(latest->epoch > log_epoch || (latest->epoch == log_epoch && latest->end_offset > leo)))
        return FALSE;
    gint64 end_offset = latest->end_offset;
    gint32 epoch = latest->epoch;
    plog_truncate_fully_and_start_at(state->log, end_offset);
    state->log_start_offset = end_offset;
    forget_snapshots_before(node, end_offset);
    raft_note(node, SIM_NODE_NONE, (guint64)leo, (guint64)end_offset,
              "raft %d: log truncated fully to snapshot %" G_GINT64_FORMAT "-%d (log end was %"
              G_GINT64_FORMAT ")",
              node->id, end_offset, epoch, leo);
    return TRUE;
}

void
raft_snapshots_open(RaftNode *node)
{
    RaftState *state = node->state;
    SimDisk *disk = sim_node_disk(node->world, node->node);
    state->snapshots = g_array_new(FALSE, FALSE, sizeof(RaftSnapshot));
    state->snapshots_writing = g_array_new(FALSE, FALSE, sizeof(RaftSnapshotWrite));
    state->log_start_offset = plog_log_start_offset(state->log);
    state->clean_deadline_ns = RAFT_NEVER;
    g_autoptr(GPtrArray) names = sim_disk_list(disk, SNAPSHOT_DIR);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        RaftSnapshot s = {0};
        gboolean partial = FALSE;
        if (!snapshot_parse(name, &s.end_offset, &s.epoch, &partial))
            continue;
        /* recoverSnapshots: partial snapshots and those below the log
         * start offset are deleted; an unreadable one (never in Kafka: a
         * frozen file is whole) likewise. */
        if (partial || s.end_offset < state->log_start_offset || !snapshot_read(disk, name, &s)) {
            sim_disk_delete(disk, name);
            continue;
        }
        g_array_append_val(state->snapshots, s);
    }
    g_array_sort(state->snapshots, snapshot_cmp);
    raft_snapshot_truncate_to_latest(node);
    raft_snapshot_arm_cleaner(node);
}

static void snapshot_synced_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status);

/* A snapshot file's fsync in flight: its voter and the snapshot's end. */
typedef struct {
    RaftNode *node;
    gint64 end_offset;
} RaftSnapshotSync;

gboolean
raft_snapshot_write(RaftNode *node, const RaftSnapshot *snapshot, gboolean fetched)
{
    RaftState *state = node->state;
    if (raft_snapshot_find(node, snapshot->end_offset, snapshot->epoch) != NULL ||
        snapshot_writing(node, snapshot->end_offset, snapshot->epoch))
        return FALSE;
    SimDisk *disk = sim_node_disk(node->world, node->node);
    g_autofree char *part = snapshot_name(snapshot->end_offset, snapshot->epoch,
                                          RAFT_SNAPSHOT_PARTIAL_SUFFIX);
    g_autofree char *body =
        g_strdup_printf("%" G_GUINT64_FORMAT " %" G_GINT64_FORMAT " %" G_GINT64_FORMAT "\n",
                        snapshot->payload, snapshot->size_bytes, snapshot->timestamp_ms);
    if (sim_disk_exists(disk, part))
        sim_disk_delete(disk, part);
    if (sim_disk_create(disk, part) != SIM_DISK_OK ||
        sim_disk_append(disk, part, body, strlen(body)) != SIM_DISK_OK) {
        raft_halt(node);
        return FALSE;
    }
    RaftSnapshotWrite w = {*snapshot, fetched};
    g_array_append_val(state->snapshots_writing, w);
    /* The callback's context is the node's model object, a broker's when
     * the voter is hosted: the fsync carries its voter itself, owned by the
     * state's `syncs` as the election state's fsyncs are. */
    RaftSnapshotSync *sync = g_new(RaftSnapshotSync, 1);
    *sync = (RaftSnapshotSync){node, snapshot->end_offset};
    KSIM_ASSERT(state->syncs->len < RAFT_OUTBOX_MAX);
    g_ptr_array_add(state->syncs, sync);
    sim_disk_fsync(disk, part, snapshot_synced_cb, sync);
    return TRUE;
}

/* FileRawSnapshotWriter.freeze's second half: the fsynced file is renamed
 * into place and the snapshot is the node's. A fetched one whose fetch the
 * node gave up meanwhile (a new role drops FollowerState.fetchingSnapshot)
 * is discarded, as Kafka closes its writer unfrozen. */
static void
snapshot_synced_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    (void)ctx;
    RaftSnapshotSync *sync = arg;
    RaftNode *node = sync->node;
    gint64 end_offset = sync->end_offset;
    RaftState *state = node->state;
    KSIM_ASSERT(state != NULL);
    gboolean removed = g_ptr_array_remove_fast(state->syncs, sync); /* frees it */
    KSIM_ASSERT(removed);
    if (state->halted)
        return;
    GArray *writing = state->snapshots_writing;
    guint i = 0;
    while (i < writing->len &&
           g_array_index(writing, RaftSnapshotWrite, i).snapshot.end_offset != end_offset)
        i++;
    if (i == writing->len)
        return;
    RaftSnapshotWrite w = g_array_index(writing, RaftSnapshotWrite, i);
    g_array_remove_index(writing, i);
    SimDisk *disk = sim_node_disk(world, node->node);
    g_autofree char *part = snapshot_name(w.snapshot.end_offset, w.snapshot.epoch,
                                          RAFT_SNAPSHOT_PARTIAL_SUFFIX);
    g_autofree char *name = snapshot_name(w.snapshot.end_offset, w.snapshot.epoch,
                                          RAFT_SNAPSHOT_SUFFIX);
    if (status != SIM_DISK_OK) {
        raft_halt(node);
        return;
    }
    gboolean wanted = !w.fetched || (state->role == RAFT_ROLE_FOLLOWER &&
                                     state->fetching_snapshot &&
                                     state->fetching.end_offset == w.snapshot.end_offset &&
                                     state->fetching.epoch == w.snapshot.epoch);
    /* A generated snapshot the log has meanwhile moved past (its start
     * raised beyond it) is not kept either: recoverSnapshots would drop it. */
    if (!w.fetched && w.snapshot.end_offset < state->log_start_offset)
        wanted = FALSE;
    if (!wanted) {
        sim_disk_delete(disk, part);
        return;
    }
    if (sim_disk_rename(disk, part, name) != SIM_DISK_OK) {
        raft_halt(node);
        return;
    }
    g_array_append_val(state->snapshots, w.snapshot);
    g_array_sort(state->snapshots, snapshot_cmp);
    raft_note(node, SIM_NODE_NONE, (guint64)w.snapshot.end_offset, (guint64)w.snapshot.size_bytes,
              "raft %d: snapshot %" G_GINT64_FORMAT "-%d frozen (%" G_GINT64_FORMAT " bytes, %s)",
              node->id, w.snapshot.end_offset, w.snapshot.epoch, w.snapshot.size_bytes,
              w.fetched ? "fetched from the leader" : "generated");
    if (w.fetched) {
        /* KafkaRaftClient.handleFetchSnapshotResponse: the download is
         * complete; the log is truncated fully to it and the high
         * watermark is at least its end (the leader took it committed). */
        state->fetching_snapshot = FALSE;
        node->snapshots_fetched++;
        raft_snapshot_truncate_to_latest(node);
        raft_follower_update_high_watermark(node, w.snapshot.end_offset);
    }
    raft_snapshot_arm_cleaner(node);
    raft_poll(node);
}

/* deleteBeforeSnapshot: the log start offset moves up to `snapshot`'s end,
 * the segments wholly below it and the snapshots before it go. */
static gboolean
delete_before_snapshot(RaftNode *node, const RaftSnapshot *snapshot, const char *why)
{
    RaftState *state = node->state;
    const RaftSnapshot *latest = raft_snapshot_latest(node);
    gint64 end_offset = snapshot->end_offset;
    if (latest == NULL || state->log_start_offset >= end_offset ||
        end_offset > latest->end_offset || end_offset > state->high_watermark)
        return FALSE;
    gint64 old_start = state->log_start_offset;
    state->log_start_offset = end_offset;
    guint segments = plog_delete_segments_before(state->log, end_offset);
    guint forgotten = forget_snapshots_before(node, end_offset);
    raft_note(node, SIM_NODE_NONE, (guint64)old_start, (guint64)end_offset,
              "raft %d: log start offset %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT
              " (%s): %u segments and %u snapshots deleted",
              node->id, old_start, end_offset, why, segments, forgotten);
    return TRUE;
}

gboolean
raft_snapshot_clean(RaftNode *node)
{
    RaftState *state = node->state;
    GArray *snapshots = state->snapshots;
    gboolean did = FALSE;
    /* cleanSnapshotsRetentionSize. */
    if (node->cfg.retention_bytes >= 0) {
        gint64 total = 0;
        for (guint i = 0; i < snapshots->len; i++)
            total += g_array_index(snapshots, RaftSnapshot, i).size_bytes;
        while (snapshots->len >= 2) {
            const RaftSnapshot *oldest = &g_array_index(snapshots, RaftSnapshot, 0);
            if (plog_size_bytes(state->log) + total <= node->cfg.retention_bytes)
                break;
            gint64 size = oldest->size_bytes;
            RaftSnapshot next = g_array_index(snapshots, RaftSnapshot, 1);
            if (!delete_before_snapshot(node, &next, "metadata.max.retention.bytes"))
                break;
            total -= size;
            did = TRUE;
        }
    }
    /* cleanSnapshotsRetentionMs. */
    if (node->cfg.retention_ms >= 0) {
        gint64 now_ms = sim_node_wall_ms(node->world, node->node);
        while (snapshots->len >= 2) {
            const RaftSnapshot *oldest = &g_array_index(snapshots, RaftSnapshot, 0);
            if (now_ms - oldest->timestamp_ms <= node->cfg.retention_ms)
                break;
            RaftSnapshot next = g_array_index(snapshots, RaftSnapshot, 1);
            if (!delete_before_snapshot(node, &next, "metadata.max.retention.ms"))
                break;
            did = TRUE;
        }
    }
    return did;
}

void
raft_snapshot_arm_cleaner(RaftNode *node)
{
    RaftState *state = node->state;
    if (state->snapshots->len < 2)
        state->clean_deadline_ns = RAFT_NEVER;
    else if (state->clean_deadline_ns == RAFT_NEVER)
        state->clean_deadline_ns = sim_now_ns(node->world) + node->cfg.clean_interval_ns;
}

/* ---- public ---- */

gboolean
raft_node_create_snapshot(RaftNode *node, gint64 end_offset, guint64 payload, gint64 size_bytes,
                          gint64 timestamp_ms)
{
    RaftState *state = node->state;
    if (state == NULL || state->halted)
        return FALSE;
    /* KafkaMetadataLog.createNewSnapshot: not below the log start offset,
     * not above the high watermark. */
    if (end_offset < state->log_start_offset || end_offset > state->high_watermark ||
        end_offset <= 0)
        return FALSE;
    RaftSnapshot snapshot = {
        .end_offset = end_offset,
        .epoch = raft_epoch_of_offset(node, end_offset - 1),
        .payload = payload,
        .size_bytes = MAX(size_bytes, 0),
        .timestamp_ms = timestamp_ms,
    };
    return raft_snapshot_write(node, &snapshot, FALSE);
}

guint
raft_node_snapshot_count(const RaftNode *node)
{
    return node->state != NULL ? node->state->snapshots->len : 0;
}

const RaftSnapshot *
raft_node_snapshot(const RaftNode *node, guint i)
{
    if (node->state == NULL || i >= node->state->snapshots->len)
        return NULL;
    return &g_array_index(node->state->snapshots, RaftSnapshot, i);
}

const RaftSnapshot *
raft_node_latest_snapshot(const RaftNode *node)
{
    return node->state != NULL ? raft_snapshot_latest(node) : NULL;
}

gint64
raft_node_log_start_offset(const RaftNode *node)
{
    return node->state != NULL ? node->state->log_start_offset : -1;
}

guint64
raft_node_snapshots_fetched(const RaftNode *node)
{
    return node->snapshots_fetched;
}

gboolean
raft_node_clean(RaftNode *node)
{
    if (node->state == NULL || node->state->halted)
        return FALSE;
    gboolean did = raft_snapshot_clean(node);
    raft_snapshot_arm_cleaner(node);
    raft_poll(node);
    return did;
}
