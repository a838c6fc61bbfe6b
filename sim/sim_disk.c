/*
 * sim_disk: one node's disk (see sim_disk.h for the semantics and faults).
 *
 * Each file keeps two byte images: the page cache (what the process reads)
 * and the durable image (what a power loss leaves). Between them sits the
 * file's write list: every append, write and truncate not yet durable, in the
 * order it was made, each with a sequence number from the disk's counter.
 * fsync remembers the last sequence number issued at its call and, when it
 * completes, applies the list up to it to the durable image. Only pending
 * operations are copied or applied, so an append or an fsync costs what it
 * writes, never the size of the file.
 *
 * Shared images. A file only ever appended to since its last durable point
 * (a log segment, an index) has a durable image that is a prefix of its page
 * cache, and pending appends whose bytes are the cache after that prefix. Such
 * a file is *shared*: `durable` is NULL, the durable image is the first
 * `durable_len` bytes of the cache, and its pending operations are appends
 * without a copy of their bytes. Any other change first *unshares* the file
 * (copies the durable prefix and the pending appends' bytes out of the
 * cache); an fsync that leaves nothing pending shares it again. A log's bytes
 * are thus held once, not twice.
 *
 * Files are reference counted: the name table holds one reference, and every
 * in-flight fsync holds another, so an fsync follows its file through a rename
 * (as an fsync on an open descriptor does) and sees a delete.
 *
 * Invariants (checked by sim_disk_check_invariants):
 *  1. `files` (name -> file, for lookups) and `index` (the same files sorted by
 *     name, for listing and for ordered iteration) hold exactly the same files;
 *     a file's key in both is its own `name`, and it is not marked deleted.
 *  2. A file's `file_id` is XXH32 of its current name.
 *  3. A file's write list has strictly increasing sequence numbers, all below
 *     the disk's `seq_next`, and at most FILE_OPS_MAX entries; a write entry
 *     carries at least one byte.
 *  4. The page cache equals the durable image with the write list applied in
 *     order (the sizes always; the bytes too under KSIM_PARANOID).
 *  5. `used_bytes` is the sum of the page-cache sizes of the files.
 *  6. `slow_multiplier` is positive.
 *  7. The timing model's dirty bytes and bandwidth are not negative.
 *
 * A file's life:
 *   (none) --sim_disk_create-->  LISTED
 *   LISTED --sim_disk_rename-->  LISTED under the new name
 *   LISTED --sim_disk_delete, or replaced by sim_disk_rename--> DELETED
 *   DELETED --last in-flight fsync released--> freed
 *
 * A write-list entry's life:
 *   (none) --append/write/truncate--> PENDING
 *   PENDING --sync_complete (its seq <= the fsync's)--> applied to durable, freed
 *   PENDING --the flusher's wake-up (file_expire, at the file's next change,
 *             a query or a power loss)--> applied to durable, freed
 *   PENDING --sim_disk_power_loss--> applied, torn or dropped, then freed
 */
#include "sim_disk.h"

#include "sim_assert.h"
#include "sim_sorted.h"

#include <string.h>
#include <xxhash.h>

/* A bound on one file's unsynced operations: a model that never fsyncs a busy
 * file would otherwise grow the list without limit. */
#define FILE_OPS_MAX (1u << 24)

/* GByteArray lengths are guint. */
#define FILE_BYTES_MAX ((gint64)G_MAXUINT32)

#define DEFAULT_FSYNC_LATENCY_NS (2 * SIM_NS_PER_MS)

typedef enum {
    DISK_OP_WRITE = 1,
    DISK_OP_TRUNCATE,
} DiskOpKind;

typedef struct {
    guint64 seq;
    gint64 time_ns; /* when it was made (the flusher's expiry counts from it) */
    DiskOpKind kind;
    gint64 offset; /* write: where the bytes go; truncate: the new size */
    gsize len;     /* write: the byte count; truncate: 0 */
    guint8 data[];
} DiskOp;

/* Counted by hand rather than in a GRcBox, whose header took 32 bytes more
 * a file: a broker holds five files a replica. */
typedef struct {
    char *name;
    guint32 file_id;
    guint32 refs;
    gboolean deleted;
    GByteArray *cache;   /* NULL until the file first holds a byte: most
                          * files of an idle broker (an empty segment's log
                          * and indexes) never do, and an empty array is
                          * not free */
    GByteArray *durable; /* NULL: shared, the durable image is the cache's
                          * first durable_len bytes (see above) */
    gint64 durable_len;  /* while shared */
    GPtrArray *ops;      /* DiskOp *, oldest first (owned); while shared,
                          * appends without their bytes. NULL while none
                          * is pending: most files of an idle broker (an
                          * empty segment's, a checkpoint written once)
                          * have none, and an empty array is not free. */
    GArray *page_stamps; /* guint64 per CACHE_BLOCK_BYTES: the cache clock
                          * when the block was last used, 0: never; NULL
                          * until a bounded page cache first uses the file */
} DiskFile;

typedef struct {
    SimDisk *disk;
    DiskFile *file; /* a reference, or NULL when the file did not exist */
    guint32 file_id;
    SimDiskSyncFn cb;
    void *arg;
} SyncRequest;

/* The timing model (see sim_disk.h): the device's writeback of dirty
 * page-cache bytes, its queue of page-cache-miss reads, the page cache's
 * residency clock, and the window of a caller's calls
 * (sim_disk_call_begin). Reads update it through a const disk: it decides
 * how long a call takes, never what it sees. */
typedef struct {
    gint64 bandwidth_bytes_per_s; /* 0: unbounded */
    gint64 dirty_limit_bytes;     /* 0: writes never wait */
    gint64 page_cache_bytes;      /* 0: every byte stays cached */
    gint64 dirty_bytes;           /* not yet written back, as of dirty_at_ns */
    gint64 dirty_at_ns;
    gint64 read_busy_until_ns;    /* the device's miss reads are done then */
    guint64 cache_clock;          /* bytes brought into the page cache so far */
    gint64 call_done_ns;          /* the latest end of a call in the window */
    gint64 charge_bytes;          /* sim_disk_charge_next; -1: none */
} DiskTiming;

struct SimDisk {
    SimWorld *world;
    SimNodeId node;
    SimRng *rng;       /* (transfer none) */
    /* DiskFile *, one reference each, in name order, for walks by prefix:
     * a broker holds five files a replica, and a tree's node costs 40
     * bytes a file where this costs 8. */
    SimSorted *index;
    /* The same files as a set hashed by name (file_name_hash), for lookups
     * by name: a broker of a large cluster holds tens of thousands of files
     * and touches them in no order (a fetch response appends to every
     * partition it carries), where a search of the index costs a dozen
     * comparisons of long, alike names. Only looked up, never walked, so
     * its order reaches nothing; as a set (keys are values) it costs 12
     * bytes a slot. */
    GHashTable *by_name;
    guint64 seq_next;
    gint64 used_bytes;
    gint64 capacity_bytes; /* 0: unbounded */
    gboolean full;
    gint64 full_bytes; /* the limit while `full` */
    SimDist fsync_latency;
    double slow_multiplier;
    gboolean io_error; /* sim_disk_set_io_error */
    gint64 expire_ns;    /* sim_disk_set_writeback: 0, never */
    gint64 writeback_ns;
    DiskTiming *timing; /* a side record, updated even through a const disk */
    guint64 changes; /* calls that may have changed the state (sim_disk_changes) */
};

/* ---- byte images ---- */

static void
bytes_resize(GByteArray *bytes, gint64 size)
{
    KSIM_ASSERT(size >= 0);
    KSIM_ASSERT(size <= FILE_BYTES_MAX);
    guint old_len = bytes->len;
    g_byte_array_set_size(bytes, (guint)size);
    /* g_byte_array_set_size leaves new bytes uninitialized; a file extends
     * with zeros. */
    if (bytes->len > old_len)
        memset(bytes->data + old_len, 0, bytes->len - old_len);
}

static void
bytes_write(GByteArray *bytes, gint64 offset, const guint8 *data, gsize len)
{
    KSIM_ASSERT(offset >= 0);
    if (len == 0)
        return;
    KSIM_ASSERT(offset + (gint64)len <= FILE_BYTES_MAX);
    /* Appends, the common case, copy their bytes once rather than zeroing
     * the new space first. */
    if (offset >= (gint64)bytes->len) {
        bytes_resize(bytes, offset);
        g_byte_array_append(bytes, data, (guint)len);
        return;
    }
    gint64 end = offset + (gint64)len;
    if (end > (gint64)bytes->len)
        bytes_resize(bytes, end);
    memcpy(bytes->data + offset, data, len);
}

static void
op_apply(const DiskOp *op, GByteArray *bytes)
{
    if (op->kind == DISK_OP_WRITE) {
        bytes_write(bytes, op->offset, op->data, op->len);
        return;
    }
    KSIM_ASSERT(op->kind == DISK_OP_TRUNCATE);
    bytes_resize(bytes, op->offset);
}

/* The size `size` becomes once `op` is applied. */
static gint64
op_size_after(const DiskOp *op, gint64 size)
{
    if (op->kind == DISK_OP_TRUNCATE)
        return op->offset;
    return MAX(size, op->offset + (gint64)op->len);
}

/* ---- files ---- */

static guint32
name_file_id(const char *name)
{
    return XXH32(name, strlen(name), 0);
}

static DiskFile *
file_new(const char *name)
{
    DiskFile *file = g_new0(DiskFile, 1);
    file->refs = 1;
    file->name = g_strdup(name);
    file->file_id = name_file_id(name);
    return file;
}

/* The page cache's image of the file: its size, its bytes (NULL while it
 * never held one), and the array itself, made on first use. */
static gint64
file_size(const DiskFile *file)
{
    return file->cache != NULL ? (gint64)file->cache->len : 0;
}

static guint8 *
file_bytes(const DiskFile *file)
{
    return file->cache != NULL ? file->cache->data : NULL;
}

static GByteArray *
file_cache(DiskFile *file)
{
    if (file->cache == NULL)
        file->cache = g_byte_array_new();
    return file->cache;
}

/* Cuts or extends the cache's image to `size` bytes, as bytes_resize. */
static void
file_cache_resize(DiskFile *file, gint64 size)
{
    if (size == 0 && file->cache == NULL)
        return;
    bytes_resize(file_cache(file), size);
}

/* The file's pending operations: how many, the `i`th, one more, and none. */
static guint
file_ops_len(const DiskFile *file)
{
    return file->ops != NULL ? file->ops->len : 0;
}

static DiskOp *
file_op(const DiskFile *file, guint i)
{
    KSIM_ASSERT(i < file_ops_len(file));
    return g_ptr_array_index(file->ops, i);
}

static void
file_ops_push(DiskFile *file, DiskOp *op)
{
    KSIM_ASSERT(file_ops_len(file) < FILE_OPS_MAX);
    if (file->ops == NULL)
        file->ops = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(file->ops, op);
}

static void
file_ops_clear(DiskFile *file)
{
    g_clear_pointer(&file->ops, g_ptr_array_unref);
}

static void
file_clear(gpointer data)
{
    DiskFile *file = data;
    g_free(file->name);
    if (file->cache != NULL)
        g_byte_array_unref(file->cache);
    if (file->durable != NULL)
        g_byte_array_unref(file->durable);
    file_ops_clear(file);
    if (file->page_stamps != NULL)
        g_array_unref(file->page_stamps);
}

static DiskFile *
file_acquire(DiskFile *file)
{
    KSIM_ASSERT(file->refs > 0 && file->refs < G_MAXUINT32);
    file->refs++;
    return file;
}

static void
file_release(gpointer data)
{
    DiskFile *file = data;
    KSIM_ASSERT(file->refs > 0);
    if (--file->refs > 0)
        return;
    file_clear(file);
    g_free(file);
}

static gboolean
file_shared(const DiskFile *file)
{
    return file->durable == NULL;
}

static gint64
file_durable_len(const DiskFile *file)
{
    return file_shared(file) ? file->durable_len : (gint64)file->durable->len;
}

/* Gives a shared file its own durable image and its pending appends their
 * bytes, before a change that is not an append. */
static void
file_unshare(DiskFile *file)
{
    if (!file_shared(file))
        return;
    file->durable = g_byte_array_sized_new((guint)file->durable_len);
    g_byte_array_append(file->durable, file_bytes(file), (guint)file->durable_len);
    for (guint i = 0; i < file_ops_len(file); i++) {
        const DiskOp *bare = file_op(file, i);
        KSIM_ASSERT(bare->kind == DISK_OP_WRITE);
        DiskOp *op = g_malloc(sizeof *op + bare->len);
        *op = *bare;
        memcpy(op->data, file_bytes(file) + bare->offset, bare->len);
        g_ptr_array_index(file->ops, i) = op;
        g_free((gpointer)bare);
    }
}

/* Shares a file whose durable image equals its cache (nothing pending). */
static void
file_share(DiskFile *file)
{
    KSIM_ASSERT(file_ops_len(file) == 0);
    KSIM_ASSERT((gint64)file->durable->len == file_size(file));
    file->durable_len = file->durable->len;
    g_byte_array_unref(file->durable);
    file->durable = NULL;
}

/* Applies the pending operations numbered up to `seq_max` to the durable
 * image and forgets them. */
static void
file_make_durable(DiskFile *file, guint64 seq_max)
{
    guint applied = 0;
    while (applied < file_ops_len(file)) {
        const DiskOp *op = file_op(file, applied);
        if (op->seq > seq_max)
            break;
        if (file_shared(file))
            file->durable_len = op->offset + (gint64)op->len;
        else
            op_apply(op, file->durable);
        applied++;
    }
    KSIM_ASSERT(applied <= file_ops_len(file));
    if (applied > 0)
        g_ptr_array_remove_range(file->ops, 0, applied);
    if (file_ops_len(file) == 0)
        file_ops_clear(file);
    if (!file_shared(file) && file_ops_len(file) == 0)
        file_share(file);
}

/* The kernel's flusher (sim_disk_set_writeback): how many of the file's
 * pending operations it has written back by now. It wakes every
 * `writeback_ns` from time 0 and writes back a file whose oldest dirty
 * change (its inode's dirtied_when) is at least `expire_ns` old — all of it,
 * every change made before that wake-up; the changes after start the file's
 * next dirty age. Pure: the caller applies them (file_expire), so that a
 * const query sees what a change would. */
static guint
file_expired_count(const SimDisk *disk, const DiskFile *file)
{
    if (disk->expire_ns == 0)
        return 0;
    gint64 now_ns = sim_now_ns(disk->world);
    guint done = 0;
    while (done < file_ops_len(file)) {
        const DiskOp *oldest = file_op(file, done);
        gint64 due_ns = oldest->time_ns + disk->expire_ns;
        gint64 wake_ns = (due_ns + disk->writeback_ns - 1) / disk->writeback_ns * disk->writeback_ns;
        if (wake_ns > now_ns)
            break;
        while (done < file_ops_len(file) && file_op(file, done)->time_ns < wake_ns)
            done++;
    }
    return done;
}

/* Makes durable what the flusher has written back by now. */
static void
file_expire(const SimDisk *disk, DiskFile *file)
{
    guint done = file_expired_count(disk, file);
    if (done > 0)
        file_make_durable(file, file_op(file, done - 1)->seq);
}

static int
name_compare(gconstpointer name, gconstpointer file)
{
    return strcmp(name, ((const DiskFile *)file)->name);
}

static gconstpointer
file_name_of(gconstpointer file)
{
    return ((const DiskFile *)file)->name;
}

/* XXH3 rather than g_str_hash, whose byte-at-a-time loop over a path of
 * thirty-odd characters cost more than the rest of a lookup. Not the file's
 * id (XXH32 of the name, invariant 2): a lookup would hash its name with
 * XXH32, 0.8% more instructions in a small cluster's run, and the id reaches
 * the trace, so it keeps its hash. */
static guint
file_name_hash(gconstpointer file)
{
    const char *name = ((const DiskFile *)file)->name;
    return (guint)XXH3_64bits(name, strlen(name));
}

static gboolean
file_name_equal(gconstpointer a, gconstpointer b)
{
    return strcmp(((const DiskFile *)a)->name, ((const DiskFile *)b)->name) == 0;
}

static DiskFile *
disk_lookup(const SimDisk *disk, const char *name)
{
    KSIM_ASSERT(name != NULL);
    const DiskFile probe = {.name = (char *)name};
    return g_hash_table_lookup(disk->by_name, &probe);
}

/* Puts an unlisted file under its name, which must be free. */
static void
disk_insert(SimDisk *disk, DiskFile *file)
{
    KSIM_ASSERT(!file->deleted);
    gpointer replaced = sim_sorted_replace(disk->index, file->name, file);
    KSIM_ASSERT(replaced == NULL);
    gboolean added = g_hash_table_add(disk->by_name, file);
    KSIM_ASSERT(added);
}

/* Takes a file off the name table; the caller inherits its reference. */
static void
disk_unlist(SimDisk *disk, DiskFile *file)
{
    gboolean unhashed = g_hash_table_remove(disk->by_name, file);
    KSIM_ASSERT(unhashed);
    gpointer removed = sim_sorted_steal(disk->index, file->name);
    KSIM_ASSERT(removed == file);
}

static void
disk_remove(SimDisk *disk, DiskFile *file)
{
    disk_unlist(disk, file);
    file->deleted = TRUE;
    disk->used_bytes -= file_size(file);
    KSIM_ASSERT(disk->used_bytes >= 0);
    file_release(file);
}

/* ---- tracing ---- */

static void
disk_trace(SimDisk *disk, SimTraceKind kind, guint32 file_id, guint64 value)
{
    sim_trace_add(sim_world_trace(disk->world), sim_now_ns(disk->world), kind, disk->node,
                  SIM_NODE_NONE, file_id, value, NULL);
}

static SimDiskStatus
disk_fail(SimDisk *disk, guint32 file_id, SimDiskStatus status)
{
    KSIM_ASSERT(status != SIM_DISK_OK);
    disk_trace(disk, SIM_TRACE_DISK_ERROR, file_id, status);
    return status;
}

/* ---- lifecycle ---- */

SimDisk *
sim_disk_new(SimWorld *world, SimNodeId node, SimRng *rng)
{
    KSIM_ASSERT(world != NULL);
    KSIM_ASSERT(rng != NULL);
    SimDisk *disk = g_new0(SimDisk, 1);
    disk->world = world;
    disk->node = node;
    disk->rng = rng;
    disk->index = sim_sorted_new(name_compare);
    disk->by_name = g_hash_table_new(file_name_hash, file_name_equal);
    disk->timing = g_new0(DiskTiming, 1);
    disk->timing->charge_bytes = -1;
    disk->seq_next = 1;
    disk->fsync_latency = SIM_DIST_CONST(DEFAULT_FSYNC_LATENCY_NS);
    disk->slow_multiplier = 1.0;
    return disk;
}

void
sim_disk_free(SimDisk *disk)
{
    if (disk == NULL)
        return;
    /* In-flight fsyncs keep their files alive; their drop functions release
     * them without touching the disk. */
    g_hash_table_destroy(disk->by_name);
    sim_sorted_free_full(disk->index, file_release);
    g_free(disk->timing);
    g_free(disk);
}

const char *
sim_disk_status_name(SimDiskStatus status)
{
    switch (status) {
    case SIM_DISK_OK:
        return "ok";
    case SIM_DISK_ENOSPC:
        return "no space left on device";
    case SIM_DISK_ENOENT:
        return "no such file";
    case SIM_DISK_EEXIST:
        return "file exists";
    case SIM_DISK_EIO:
        return "input/output error";
    }
    return "unknown";
}

/* ---- timing: writeback, page-cache misses, the caller's window ---- */

/* Residency is kept per block of stored bytes: a partition log stores a
 * compact encoding (a batch header and its records' sizes) for much larger
 * data, so a block stands for more bytes than it holds. */
#define CACHE_BLOCK_BYTES 128

/* The device's bandwidth under the slow-disk multiplier, in bytes per
 * second; 0: unbounded. */
static double
timing_bandwidth(const SimDisk *disk)
{
    if (disk->timing->bandwidth_bytes_per_s == 0)
        return 0.0;
    return (double)disk->timing->bandwidth_bytes_per_s / disk->slow_multiplier;
}

/* A call in the caller's window ends at `done_ns`. */
static void
timing_call_ends(const SimDisk *disk, gint64 done_ns)
{
    DiskTiming *timing = disk->timing;
    timing->call_done_ns = MAX(timing->call_done_ns, done_ns);
}

/* Writes back, at the device's bandwidth, what was dirty since dirty_at_ns. */
static void
timing_writeback(const SimDisk *disk)
{
    DiskTiming *timing = disk->timing;
    gint64 now_ns = sim_now_ns(disk->world);
    double bandwidth = timing_bandwidth(disk);
    KSIM_ASSERT(now_ns >= timing->dirty_at_ns);
    if (bandwidth == 0.0) {
        timing->dirty_bytes = 0;
    } else {
        double drained = bandwidth * (double)(now_ns - timing->dirty_at_ns) / (double)SIM_NS_PER_S;
        timing->dirty_bytes =
            drained >= (double)timing->dirty_bytes ? 0 : timing->dirty_bytes - (gint64)drained;
    }
    timing->dirty_at_ns = now_ns;
}

/* `bytes` new dirty bytes: past the dirty limit the writer waits until the
 * device has written back the excess (Linux's balance_dirty_pages); every
 * earlier dirty byte goes first, so waits end in the order of the writes. */
static void
timing_dirty(const SimDisk *disk, gint64 bytes)
{
    DiskTiming *timing = disk->timing;
    timing_writeback(disk);
    timing->dirty_bytes += bytes;
    double bandwidth = timing_bandwidth(disk);
    if (timing->dirty_limit_bytes == 0 || bandwidth == 0.0 ||
        timing->dirty_bytes <= timing->dirty_limit_bytes)
        return;
    double wait_ns = (double)(timing->dirty_bytes - timing->dirty_limit_bytes) *
                     (double)SIM_NS_PER_S / bandwidth;
    timing_call_ends(disk, sim_now_ns(disk->world) + (gint64)MIN(wait_ns, 8.64e13));
}

/* The blocks of [offset, offset + len) of `file`, which stand for `bytes`
 * bytes, are used now; returns the share of those bytes that were not in
 * the page cache (they are brought in). A block stays cached while fewer than
 * page_cache_bytes have been brought in since its last use (approximately
 * LRU). Only a bounded page cache keeps stamps. */
static GArray *
timing_stamps(const DiskFile *file, guint last)
{
    /* A file written before the page cache was bounded has no stamps: its
     * blocks count as not cached. The stamps are timing state, kept beside
     * the file's contents and, like the rest of the timing, updated through
     * a const disk. */
    if (file->page_stamps == NULL)
        ((DiskFile *)file)->page_stamps = g_array_new(FALSE, TRUE, sizeof(guint64));
    GArray *stamps = file->page_stamps;
    if (stamps->len <= last)
        g_array_set_size(stamps, last + 1);
    return stamps;
}

static gint64
timing_touch(const SimDisk *disk, const DiskFile *file, gint64 offset, gsize len, gint64 bytes)
{
    DiskTiming *timing = disk->timing;
    if (timing->page_cache_bytes == 0 || len == 0)
        return 0;
    guint first = (guint)(offset / CACHE_BLOCK_BYTES);
    guint last = (guint)((offset + (gint64)len - 1) / CACHE_BLOCK_BYTES);
    GArray *stamps = timing_stamps(file, last);
    guint missed = 0;
    for (guint block = first; block <= last; block++) {
        guint64 stamp = g_array_index(stamps, guint64, block);
        if (stamp == 0 || timing->cache_clock - stamp >= (guint64)timing->page_cache_bytes)
            missed++;
    }
    guint blocks = last - first + 1;
    gint64 missed_bytes = (gint64)((double)bytes * missed / blocks);
    timing->cache_clock += (guint64)missed_bytes;
    for (guint block = first; block <= last; block++)
        g_array_index(stamps, guint64, block) = MAX(timing->cache_clock, 1);
    return missed_bytes;
}

/* The bytes the next append, write or charged read stands for (the call's
 * own length when not charged), and the charge cleared. */
static gint64
timing_take_charge(const SimDisk *disk, gsize len)
{
    DiskTiming *timing = disk->timing;
    gint64 bytes = timing->charge_bytes >= 0 ? timing->charge_bytes : (gint64)len;
    timing->charge_bytes = -1;
    return bytes;
}

/* A write of [offset, offset + len), standing for `bytes`: all of them are
 * new in the page cache (a block the write shares with older data does not
 * make its bytes old), and dirty. */
static void
timing_write(SimDisk *disk, DiskFile *file, gint64 offset, gsize len, gint64 bytes)
{
    DiskTiming *timing = disk->timing;
    if (timing->page_cache_bytes > 0 && len > 0) {
        guint first = (guint)(offset / CACHE_BLOCK_BYTES);
        guint last = (guint)((offset + (gint64)len - 1) / CACHE_BLOCK_BYTES);
        GArray *stamps = timing_stamps(file, last);
        timing->cache_clock += (guint64)bytes;
        for (guint block = first; block <= last; block++)
            g_array_index(stamps, guint64, block) = MAX(timing->cache_clock, 1);
    }
    timing_dirty(disk, bytes);
}

void
sim_disk_charge_next(const SimDisk *disk, gint64 bytes)
{
    KSIM_ASSERT(bytes >= 0);
    disk->timing->charge_bytes = bytes;
}

void
sim_disk_charge_read(const SimDisk *disk, const char *name, gint64 offset, gsize len)
{
    KSIM_ASSERT(offset >= 0);
    const DiskFile *file = disk_lookup(disk, name);
    gint64 bytes = timing_take_charge(disk, len);
    if (file == NULL || offset >= file_size(file))
        return;
    len = MIN(len, (gsize)(file_size(file) - offset));
    gint64 missed_bytes = timing_touch(disk, file, offset, len, bytes);
    double bandwidth = timing_bandwidth(disk);
    if (missed_bytes == 0 || bandwidth == 0.0)
        return;
    DiskTiming *timing = disk->timing;
    double read_ns = (double)missed_bytes * (double)SIM_NS_PER_S / bandwidth;
    gint64 start_ns = MAX(sim_now_ns(disk->world), timing->read_busy_until_ns);
    timing->read_busy_until_ns = start_ns + (gint64)MIN(read_ns, 8.64e13);
    timing_call_ends(disk, timing->read_busy_until_ns);
}

void
sim_disk_call_begin(const SimDisk *disk)
{
    disk->timing->call_done_ns = sim_now_ns(disk->world);
}

gint64
sim_disk_call_stall_ns(const SimDisk *disk)
{
    return MAX(disk->timing->call_done_ns - sim_now_ns(disk->world), 0);
}

void
sim_disk_set_bandwidth(SimDisk *disk, gint64 bytes_per_s)
{
    disk->changes++;
    KSIM_ASSERT(bytes_per_s >= 0);
    timing_writeback(disk);
    disk->timing->bandwidth_bytes_per_s = bytes_per_s;
}

void
sim_disk_set_dirty_limit(SimDisk *disk, gint64 bytes)
{
    disk->changes++;
    KSIM_ASSERT(bytes >= 0);
    disk->timing->dirty_limit_bytes = bytes;
}

void
sim_disk_set_page_cache(SimDisk *disk, gint64 bytes)
{
    disk->changes++;
    KSIM_ASSERT(bytes >= 0);
    disk->timing->page_cache_bytes = bytes;
}

void
sim_disk_set_writeback(SimDisk *disk, gint64 expire_ns, gint64 interval_ns)
{
    disk->changes++;
    KSIM_ASSERT(expire_ns >= 0);
    KSIM_ASSERT(expire_ns == 0 || interval_ns > 0);
    disk->expire_ns = expire_ns;
    disk->writeback_ns = interval_ns;
}

gint64
sim_disk_dirty_bytes(const SimDisk *disk)
{
    timing_writeback(disk);
    return disk->timing->dirty_bytes;
}

/* ---- metadata operations (durable at once) ---- */

gboolean
sim_disk_exists(const SimDisk *disk, const char *name)
{
    return disk_lookup(disk, name) != NULL;
}

SimDiskStatus
sim_disk_create(SimDisk *disk, const char *name)
{
    disk->changes++;
    if (disk->io_error)
        return disk_fail(disk, name_file_id(name), SIM_DISK_EIO);
    if (disk_lookup(disk, name) != NULL)
        return disk_fail(disk, name_file_id(name), SIM_DISK_EEXIST);
    disk_insert(disk, file_new(name));
    return SIM_DISK_OK;
}

SimDiskStatus
sim_disk_delete(SimDisk *disk, const char *name)
{
    disk->changes++;
    if (disk->io_error)
        return disk_fail(disk, name_file_id(name), SIM_DISK_EIO);
    DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return disk_fail(disk, name_file_id(name), SIM_DISK_ENOENT);
    disk_remove(disk, file);
    return SIM_DISK_OK;
}

SimDiskStatus
sim_disk_rename(SimDisk *disk, const char *from, const char *to)
{
    disk->changes++;
    KSIM_ASSERT(to != NULL);
    if (disk->io_error)
        return disk_fail(disk, name_file_id(from), SIM_DISK_EIO);
    DiskFile *file = disk_lookup(disk, from);
    if (file == NULL)
        return disk_fail(disk, name_file_id(from), SIM_DISK_ENOENT);
    /* As in POSIX, renaming a file onto itself does nothing. */
    if (strcmp(from, to) == 0)
        return SIM_DISK_OK;
    DiskFile *replaced = disk_lookup(disk, to);
    if (replaced != NULL)
        disk_remove(disk, replaced);
    disk_unlist(disk, file);
    g_free(file->name);
    file->name = g_strdup(to);
    file->file_id = name_file_id(to);
    disk_insert(disk, file);
    return SIM_DISK_OK;
}

/* ---- data operations (page cache now, write list until fsync) ---- */

static gboolean
disk_has_room(const SimDisk *disk, gint64 growth_bytes)
{
    if (growth_bytes <= 0)
        return TRUE;
    if (disk->full)
        return disk->used_bytes + growth_bytes <= disk->full_bytes;
    if (disk->capacity_bytes == 0)
        return TRUE;
    return disk->used_bytes + growth_bytes <= disk->capacity_bytes;
}

/* Applies `op` to the page cache and queues it, or fails with ENOSPC and
 * changes nothing. Takes ownership of `op`. */
static SimDiskStatus
file_change(SimDisk *disk, DiskFile *file, DiskOp *op)
{
    gint64 size_old = file_size(file);
    gint64 size_new = op_size_after(op, size_old);
    KSIM_ASSERT(size_new <= FILE_BYTES_MAX);
    if (!disk_has_room(disk, size_new - size_old)) {
        g_free(op);
        return disk_fail(disk, file->file_id, SIM_DISK_ENOSPC);
    }
    op->seq = disk->seq_next++;
    op->time_ns = sim_now_ns(disk->world);
    /* Emptying a file that never held a byte changes no image. */
    if (size_new > 0 || file->cache != NULL)
        op_apply(op, file_cache(file));
    KSIM_ASSERT(file_size(file) == size_new);
    file_ops_push(file, op);
    disk->used_bytes += size_new - size_old;
    if (op->kind == DISK_OP_WRITE)
        disk_trace(disk, SIM_TRACE_DISK_WRITE, file->file_id, op->len);
    else
        disk_trace(disk, SIM_TRACE_DISK_TRUNCATE, file->file_id, (guint64)size_new);
    return SIM_DISK_OK;
}

/* An append to a shared file: the bytes go to the cache only. */
static SimDiskStatus
file_append_shared(SimDisk *disk, DiskFile *file, const void *data, gsize len)
{
    KSIM_ASSERT(file_shared(file));
    KSIM_ASSERT(file_size(file) + (gint64)len <= FILE_BYTES_MAX);
    if (!disk_has_room(disk, (gint64)len))
        return disk_fail(disk, file->file_id, SIM_DISK_ENOSPC);
    KSIM_ASSERT(file_ops_len(file) < FILE_OPS_MAX);
    DiskOp *op = g_new(DiskOp, 1);
    op->seq = disk->seq_next++;
    op->time_ns = sim_now_ns(disk->world);
    op->kind = DISK_OP_WRITE;
    op->offset = file_size(file);
    op->len = len;
    g_byte_array_append(file_cache(file), data, (guint)len);
    file_ops_push(file, op);
    disk->used_bytes += (gint64)len;
    disk_trace(disk, SIM_TRACE_DISK_WRITE, file->file_id, len);
    return SIM_DISK_OK;
}

static SimDiskStatus
file_write(SimDisk *disk, DiskFile *file, gint64 offset, const void *data, gsize len,
           gint64 charged_bytes)
{
    KSIM_ASSERT(offset >= 0);
    KSIM_ASSERT(data != NULL || len == 0);
    if (disk->io_error)
        return disk_fail(disk, file->file_id, SIM_DISK_EIO);
    /* An empty write changes nothing, as pwrite(2) of zero bytes does not
     * extend a file; queueing it would only leave a write with no sector. */
    if (len == 0)
        return SIM_DISK_OK;
    KSIM_ASSERT(len <= (gsize)FILE_BYTES_MAX);
    /* Before the sharing test: writing back may share the file again. */
    file_expire(disk, file);
    SimDiskStatus status;
    if (file_shared(file) && offset == file_size(file)) {
        status = file_append_shared(disk, file, data, len);
    } else {
        file_unshare(file);
        DiskOp *op = g_malloc(sizeof *op + len);
        op->kind = DISK_OP_WRITE;
        op->offset = offset;
        op->len = len;
        memcpy(op->data, data, len);
        status = file_change(disk, file, op);
    }
    if (status == SIM_DISK_OK)
        timing_write(disk, file, offset, len, charged_bytes);
    return status;
}

SimDiskStatus
sim_disk_append(SimDisk *disk, const char *name, const void *data, gsize len)
{
    disk->changes++;
    gint64 charged_bytes = timing_take_charge(disk, len);
    DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return disk_fail(disk, name_file_id(name), SIM_DISK_ENOENT);
    return file_write(disk, file, file_size(file), data, len, charged_bytes);
}

SimDiskStatus
sim_disk_write(SimDisk *disk, const char *name, gint64 offset, const void *data, gsize len)
{
    disk->changes++;
    gint64 charged_bytes = timing_take_charge(disk, len);
    DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return disk_fail(disk, name_file_id(name), SIM_DISK_ENOENT);
    return file_write(disk, file, offset, data, len, charged_bytes);
}

SimDiskStatus
sim_disk_truncate(SimDisk *disk, const char *name, gint64 size)
{
    disk->changes++;
    KSIM_ASSERT(size >= 0);
    KSIM_ASSERT(size <= FILE_BYTES_MAX);
    DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return disk_fail(disk, name_file_id(name), SIM_DISK_ENOENT);
    if (disk->io_error)
        return disk_fail(disk, file->file_id, SIM_DISK_EIO);
    file_expire(disk, file);
    file_unshare(file);
    DiskOp *op = g_malloc0(sizeof *op);
    op->kind = DISK_OP_TRUNCATE;
    op->offset = size;
    return file_change(disk, file, op);
}

gssize
sim_disk_read(const SimDisk *disk, const char *name, gint64 offset, void *buf, gsize len)
{
    KSIM_ASSERT(offset >= 0);
    KSIM_ASSERT(buf != NULL || len == 0);
    const DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return -1;
    gint64 size = file_size(file);
    if (offset >= size)
        return 0;
    gsize count = MIN(len, (gsize)(size - offset));
    memcpy(buf, file_bytes(file) + offset, count);
    return (gssize)count;
}

const guint8 *
sim_disk_peek(const SimDisk *disk, const char *name, gint64 offset, gsize len)
{
    KSIM_ASSERT(offset >= 0);
    const DiskFile *file = disk_lookup(disk, name);
    if (file == NULL || (guint64)offset + len > (guint64)file_size(file))
        return NULL;
    return file->cache != NULL ? file->cache->data + offset : NULL;
}

gint64
sim_disk_size(const SimDisk *disk, const char *name)
{
    const DiskFile *file = disk_lookup(disk, name);
    return file == NULL ? -1 : file_size(file);
}

gint64
sim_disk_durable_size(const SimDisk *disk, const char *name)
{
    const DiskFile *file = disk_lookup(disk, name);
    if (file == NULL)
        return -1;
    gint64 size = file_durable_len(file);
    guint done = file_expired_count(disk, file);
    for (guint i = 0; i < done; i++)
        size = op_size_after(file_op(file, i), size);
    return size;
}

/* A missing file has nothing unsynced, so it counts as synced. */
gboolean
sim_disk_is_synced(const SimDisk *disk, const char *name)
{
    const DiskFile *file = disk_lookup(disk, name);
    return file == NULL || file_expired_count(disk, file) == file_ops_len(file);
}

GPtrArray *
sim_disk_list(const SimDisk *disk, const char *prefix)
{
    KSIM_ASSERT(prefix != NULL);
    GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
    /* The index is sorted, so the names with the prefix are the run that
     * starts at its lower bound. */
    SimSortedIter iter;
    sim_sorted_iter_init(disk->index, prefix, &iter);
    for (const DiskFile *file; (file = sim_sorted_iter_next(disk->index, &iter));) {
        if (!g_str_has_prefix(file->name, prefix))
            break;
        g_ptr_array_add(names, g_strdup(file->name));
    }
    return names;
}

/* ---- fsync ---- */

static void
sync_request_free(SyncRequest *request)
{
    if (request->file != NULL)
        file_release(request->file);
    g_free(request);
}

/* The fsync's event: runs on the node with ctx = the world; `seq_max` is the
 * last sequence number issued when fsync was called. */
static void
sync_complete(void *ctx, void *arg, guint64 seq_max)
{
    SimWorld *world = ctx;
    SyncRequest *request = arg;
    SimDisk *disk = request->disk;
    KSIM_ASSERT(world == disk->world);
    KSIM_ASSERT(seq_max < disk->seq_next);
    disk->changes++;
    DiskFile *file = request->file;
    SimDiskStatus status = SIM_DISK_OK;
    if (file == NULL || file->deleted) {
        status = disk_fail(disk, request->file_id, SIM_DISK_ENOENT);
    } else if (disk->io_error) {
        status = disk_fail(disk, request->file_id, SIM_DISK_EIO);
    } else {
        file_make_durable(file, seq_max);
        disk_trace(disk, SIM_TRACE_DISK_FSYNC, file->file_id, (guint64)file_durable_len(file));
    }
    SimDiskSyncFn cb = request->cb;
    void *cb_arg = request->arg;
    sync_request_free(request);
    if (cb != NULL)
        cb(world, sim_node_ctx(world, disk->node), cb_arg, status);
}

/* The fsync's event was discarded (its node crashed, or the world is being
 * freed, perhaps after the disk): release the request and touch nothing else. */
static void
sync_drop(void *ctx, void *arg, guint64 seq_max)
{
    (void)ctx;
    (void)seq_max;
    sync_request_free(arg);
}

static gint64
disk_fsync_latency_ns(SimDisk *disk)
{
    gint64 latency_ns = sim_dist_sample(&disk->fsync_latency, disk->rng);
    KSIM_ASSERT(latency_ns >= 0);
    if (disk->slow_multiplier != 1.0)
        latency_ns = (gint64)((double)latency_ns * disk->slow_multiplier);
    KSIM_ASSERT(latency_ns >= 0);
    return latency_ns;
}

void
sim_disk_fsync(SimDisk *disk, const char *name, SimDiskSyncFn cb, void *arg)
{
    disk->changes++;
    DiskFile *file = disk_lookup(disk, name);
    SyncRequest *request = g_new0(SyncRequest, 1);
    request->disk = disk;
    request->file = file == NULL ? NULL : file_acquire(file);
    request->file_id = file == NULL ? name_file_id(name) : file->file_id;
    request->cb = cb;
    request->arg = arg;
    /* Every change made before this call has a sequence number up to here,
     * and every later one a greater number. */
    guint64 seq_max = disk->seq_next - 1;
    gint64 time_ns = sim_now_ns(disk->world) + disk_fsync_latency_ns(disk);
    sim_world_schedule_for(disk->world, disk->node, time_ns, sync_complete, sync_drop, request,
                           seq_max);
}

/* ---- capacity and faults ---- */

gint64
sim_disk_used_bytes(const SimDisk *disk)
{
    return disk->used_bytes;
}

void
sim_disk_set_capacity(SimDisk *disk, gint64 capacity_bytes)
{
    disk->changes++;
    KSIM_ASSERT(capacity_bytes >= 0);
    disk->capacity_bytes = capacity_bytes;
}

/* The full-disk limit is kept apart from the capacity, so that a disk that is
 * empty when it fills up (a limit of 0 bytes) is not taken as unbounded, and
 * healing restores the capacity set before. */
void
sim_disk_set_full(SimDisk *disk, gboolean full)
{
    disk->changes++;
    disk->full = full;
    disk->full_bytes = full ? disk->used_bytes : 0;
}

void
sim_disk_set_fsync_latency(SimDisk *disk, SimDist latency)
{
    disk->changes++;
    disk->fsync_latency = latency;
}

void
sim_disk_set_slow(SimDisk *disk, double multiplier)
{
    disk->changes++;
    KSIM_ASSERT(multiplier > 0.0);
    KSIM_ASSERT(multiplier <= 1e9);
    /* What was written back so far went at the old speed. */
    timing_writeback(disk);
    disk->slow_multiplier = multiplier;
}

void
sim_disk_set_io_error(SimDisk *disk, gboolean failed)
{
    disk->changes++;
    disk->io_error = failed;
}

gboolean
sim_disk_io_error(const SimDisk *disk)
{
    return disk->io_error;
}

void
sim_disk_replace(SimDisk *disk)
{
    disk->changes++;
    /* A new, empty device: files go (in-flight fsyncs see them deleted),
     * and so do the old device's dirty bytes and cached pages. */
    for (DiskFile *file; (file = sim_sorted_first(disk->index));)
        disk_remove(disk, file);
    KSIM_ASSERT(disk->used_bytes == 0);
    disk->io_error = FALSE;
    disk->full = FALSE;
    timing_writeback(disk);
    disk->timing->dirty_bytes = 0;
    disk->timing->cache_clock += (guint64)disk->timing->page_cache_bytes + 1;
}

void
sim_disk_process_crash(SimDisk *disk)
{
    /* The OS survives a process crash, and so does the page cache: nothing to
     * do here. The world drops the node's in-flight fsyncs, whose changes stay
     * on the write lists. */
    KSIM_ASSERT(disk != NULL);
}

/* The write `op` was in flight when the power went: with even odds some of
 * its leading sectors reached the disk, and with even odds again the sector
 * after them holds garbage. */
static void
file_tear(SimDisk *disk, DiskFile *file, const DiskOp *op)
{
    if (op->kind != DISK_OP_WRITE || !sim_rng_chance(disk->rng, 1, 2))
        return;
    KSIM_ASSERT(op->len > 0);
    gsize sectors = (op->len + SIM_DISK_SECTOR_BYTES - 1) / SIM_DISK_SECTOR_BYTES;
    gsize kept_bytes = (gsize)sim_rng_range(disk->rng, 0, (gint64)sectors) * SIM_DISK_SECTOR_BYTES;
    KSIM_ASSERT(kept_bytes < op->len);
    bytes_write(file->durable, op->offset, op->data, kept_bytes);
    if (!sim_rng_chance(disk->rng, 1, 2))
        return;
    guint8 garbage[SIM_DISK_SECTOR_BYTES];
    gsize garbage_len = MIN((gsize)SIM_DISK_SECTOR_BYTES, op->len - kept_bytes);
    for (gsize i = 0; i < garbage_len; i++)
        garbage[i] = (guint8)sim_rng_u32(disk->rng);
    bytes_write(file->durable, op->offset + (gint64)kept_bytes, garbage, garbage_len);
}

/* file_tear for a shared file: the kept sectors are already in the cache
 * after the durable prefix; garbage overwrites the cache there. */
static void
file_tear_shared(SimDisk *disk, DiskFile *file, const DiskOp *op)
{
    if (!sim_rng_chance(disk->rng, 1, 2))
        return;
    KSIM_ASSERT(op->len > 0);
    KSIM_ASSERT(op->offset == file->durable_len);
    gsize sectors = (op->len + SIM_DISK_SECTOR_BYTES - 1) / SIM_DISK_SECTOR_BYTES;
    gsize kept_bytes = (gsize)sim_rng_range(disk->rng, 0, (gint64)sectors) * SIM_DISK_SECTOR_BYTES;
    KSIM_ASSERT(kept_bytes < op->len);
    file->durable_len += (gint64)kept_bytes;
    if (!sim_rng_chance(disk->rng, 1, 2))
        return;
    gsize garbage_len = MIN((gsize)SIM_DISK_SECTOR_BYTES, op->len - kept_bytes);
    for (gsize i = 0; i < garbage_len; i++)
        file->cache->data[file->durable_len + (gint64)i] = (guint8)sim_rng_u32(disk->rng);
    file->durable_len += (gint64)garbage_len;
}

/* file_power_loss for a shared file, with the same draws. */
static void
file_power_loss_shared(SimDisk *disk, DiskFile *file)
{
    guint pending = file_ops_len(file);
    guint kept = pending == 0 ? 0 : (guint)sim_rng_range(disk->rng, 0, (gint64)pending + 1);
    for (guint i = 0; i < kept; i++) {
        const DiskOp *op = file_op(file, i);
        file->durable_len = op->offset + (gint64)op->len;
    }
    if (kept < pending)
        file_tear_shared(disk, file, file_op(file, kept));
    file_ops_clear(file);
    disk->used_bytes += file->durable_len - file_size(file);
    file_cache_resize(file, file->durable_len);
    disk_trace(disk, SIM_TRACE_DISK_LOSS, file->file_id, (guint64)file->durable_len);
}

static void
file_power_loss(SimDisk *disk, DiskFile *file)
{
    file_expire(disk, file);
    if (file_shared(file)) {
        file_power_loss_shared(disk, file);
        return;
    }
    guint pending = file_ops_len(file);
    guint kept = pending == 0 ? 0 : (guint)sim_rng_range(disk->rng, 0, (gint64)pending + 1);
    for (guint i = 0; i < kept; i++)
        op_apply(file_op(file, i), file->durable);
    if (kept < pending)
        file_tear(disk, file, file_op(file, kept));
    file_ops_clear(file);
    disk->used_bytes += (gint64)file->durable->len - file_size(file);
    file_cache_resize(file, file->durable->len);
    if (file->durable->len > 0)
        memcpy(file->cache->data, file->durable->data, file->durable->len);
    disk_trace(disk, SIM_TRACE_DISK_LOSS, file->file_id, file->durable->len);
    file_share(file);
}

void
sim_disk_power_loss(SimDisk *disk)
{
    disk->changes++;
    /* Files are visited in name order so the draws do not depend on hashing. */
    SimSortedIter iter;
    sim_sorted_iter_init(disk->index, NULL, &iter);
    for (DiskFile *file; (file = sim_sorted_iter_next(disk->index, &iter));)
        file_power_loss(disk, file);
    KSIM_ASSERT(disk->used_bytes >= 0);
    /* The page cache is memory: nothing is dirty or cached after it. */
    timing_writeback(disk);
    disk->timing->dirty_bytes = 0;
    disk->timing->cache_clock += (guint64)disk->timing->page_cache_bytes + 1;
}

/* ---- invariants ---- */

#ifdef KSIM_PARANOID
static void
file_check_bytes(const DiskFile *file)
{
    if (file_shared(file))
        return; /* the cache holds both images by construction */
    g_autoptr(GByteArray) replay = g_byte_array_sized_new(file->durable->len);
    g_byte_array_append(replay, file->durable->data, file->durable->len);
    for (guint i = 0; i < file_ops_len(file); i++)
        op_apply(file_op(file, i), replay);
    KSIM_ASSERT((gint64)replay->len == file_size(file));
    KSIM_ASSERT(replay->len == 0 || memcmp(replay->data, file_bytes(file), replay->len) == 0);
}
#endif

static void
file_check_invariants(const SimDisk *disk, const DiskFile *file)
{
    KSIM_ASSERT(!file->deleted);
    KSIM_ASSERT(file->file_id == name_file_id(file->name));
    KSIM_ASSERT(file_ops_len(file) <= FILE_OPS_MAX);
    if (file->ops != NULL)
        KSIM_ASSERT(file->ops->len > 0); /* an empty array is freed */
    guint64 seq_prev = 0;
    gint64 size = file_durable_len(file);
    KSIM_ASSERT(size >= 0);
    for (guint i = 0; i < file_ops_len(file); i++) {
        const DiskOp *op = file_op(file, i);
        KSIM_ASSERT(op->seq > seq_prev);
        KSIM_ASSERT(op->seq < disk->seq_next);
        if (op->kind == DISK_OP_WRITE)
            KSIM_ASSERT(op->len > 0);
        /* A shared file's pending operations are appends, end to end. */
        if (file_shared(file))
            KSIM_ASSERT(op->kind == DISK_OP_WRITE && op->offset == size);
        seq_prev = op->seq;
        size = op_size_after(op, size);
    }
    KSIM_ASSERT(size == file_size(file));
#ifdef KSIM_PARANOID
    file_check_bytes(file);
#endif
}

guint64
sim_disk_changes(const SimDisk *disk)
{
    return disk->changes;
}

void
sim_disk_check_invariants(const SimDisk *disk)
{
    KSIM_ASSERT(disk->slow_multiplier > 0.0);
    KSIM_ASSERT(disk->capacity_bytes >= 0);
    KSIM_ASSERT(disk->timing->dirty_bytes >= 0);
    KSIM_ASSERT(disk->timing->bandwidth_bytes_per_s >= 0);
    sim_sorted_check_invariants(disk->index, file_name_of);
    gint64 used_bytes = 0;
    SimSortedIter iter;
    sim_sorted_iter_init(disk->index, NULL, &iter);
    for (const DiskFile *file; (file = sim_sorted_iter_next(disk->index, &iter));) {
        file_check_invariants(disk, file);
        KSIM_ASSERT(disk_lookup(disk, file->name) == file);
        used_bytes += file_size(file);
    }
    KSIM_ASSERT(used_bytes == disk->used_bytes);
    /* The set by name holds exactly the listed files. */
    KSIM_ASSERT(g_hash_table_size(disk->by_name) == sim_sorted_size(disk->index));
}
