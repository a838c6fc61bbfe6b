/*
 * sim_disk: one node's disk, with a page cache beside the durable bytes.
 *
 * Files are named by path strings ("orders-0/00000000000000000000.log"); the
 * namespace is flat, and sim_disk_list() lists by prefix, sorted by name.
 *
 * Semantics:
 *  - append, write, truncate change the file at once as the process sees it
 *    (the page cache) and are queued, in order, on the file's write list;
 *  - sim_disk_fsync() is asynchronous: after a latency drawn from the fsync
 *    distribution (times the slow-disk multiplier) every change made to that
 *    file before the call is durable, and the callback runs on the node;
 *  - create, delete and rename are metadata operations and are durable at once
 *    (a journaling file system), so rename is the atomic-replace primitive;
 *  - reads see the page cache.
 *
 * Timing (how long a call keeps its caller waiting; never what it sees). A
 * model that cares opens a window with sim_disk_call_begin, makes its calls,
 * and asks sim_disk_call_stall_ns how long they kept it waiting. Every cost
 * is zero unless configured, so a disk without these settings or faults
 * takes no time for a write or a read:
 *  - writeback (Linux's dirty-page throttling, balance_dirty_pages): every
 *    written byte is dirty until the device writes it back at its bandwidth
 *    (sim_disk_set_bandwidth); a write that leaves more dirty bytes than the
 *    dirty limit (sim_disk_set_dirty_limit) waits until the device has
 *    written back the excess. Writes wait in order. Writeback is a timing
 *    model only: durability is still fsync's and a power loss's business.
 *  - page cache (sim_disk_set_page_cache): a model charges the reads it
 *    wants timed (sim_disk_charge_read; sim_disk_read itself is free). With a
 *    bounded page cache, the part of a charged read not cached is read from
 *    the device at its bandwidth, miss reads one after another; written and
 *    charged bytes are cached, and a byte leaves once that many bytes have
 *    been brought in since its last use (approximately LRU, kept per
 *    128-byte block of the file). Unbounded (the default), every byte stays
 *    cached and reads cost nothing.
 *  - a model that stores a compact encoding of larger data (the partition
 *    log keeps its records' sizes, not their bytes) says how many bytes a
 *    call stands for (sim_disk_charge_next); writeback and the page cache
 *    count those.
 *  - the slow-disk multiplier divides the bandwidth for both.
 *
 * Faults injected (and the recovery they assume):
 *  - process crash (sim_disk_process_crash): nothing is lost; the page cache
 *    survives because the OS does. Pending fsync callbacks are dropped with the
 *    node's events, and their writes stay non-durable.
 *  - power loss (sim_disk_power_loss), modelled on SQLite's test6.c: for each
 *    file, what the flusher wrote back is durable (sim_disk_set_writeback);
 *    of the rest, the OS may have written back a prefix of the write list in order
 *    (its length drawn uniformly from 0..n); the next write, if any, may be torn:
 *    a random number of its whole 512-byte sectors reach the disk, and with even
 *    odds the sector after them holds garbage. Everything else not durable is
 *    gone. Recovery must cope with a torn or garbage tail (checksums).
 *  - slow disk (sim_disk_set_slow): fsync latency multiplied, device
 *    bandwidth divided (slower writeback, so writes wait once the dirty limit
 *    is reached; slower page-cache misses).
 *  - I/O error (sim_disk_set_io_error): every create, delete, rename, append,
 *    write, truncate and fsync fails with SIM_DISK_EIO and changes nothing;
 *    reads still see the page cache. A model takes a failed call as its log
 *    directory's failure. sim_disk_replace swaps in a new, empty device.
 *  - full disk: appends and writes that would grow the disk's contents past its
 *    capacity fail with SIM_DISK_ENOSPC and change nothing.
 */
#ifndef SIM_DISK_H
#define SIM_DISK_H

#include <glib.h>

#include "sim_world.h"

typedef enum {
    SIM_DISK_OK = 0,
    SIM_DISK_ENOSPC, /* no space left on device */
    SIM_DISK_ENOENT, /* no such file */
    SIM_DISK_EEXIST, /* file exists */
    SIM_DISK_EIO,    /* input/output error (sim_disk_set_io_error) */
} SimDiskStatus;

#define SIM_DISK_SECTOR_BYTES 512

/* Called on the node when an fsync completes. */
typedef void (*SimDiskSyncFn)(SimWorld *world, void *ctx, void *arg, SimDiskStatus status);

/* Created and owned by sim_world, one per node. */
SimDisk *sim_disk_new(SimWorld *world, SimNodeId node, SimRng *rng);
void sim_disk_free(SimDisk *disk);

const char *sim_disk_status_name(SimDiskStatus status);

gboolean sim_disk_exists(const SimDisk *disk, const char *name);
/* Creates an empty file; SIM_DISK_EEXIST if it exists. */
SimDiskStatus sim_disk_create(SimDisk *disk, const char *name);
SimDiskStatus sim_disk_delete(SimDisk *disk, const char *name);
/* Atomically replaces `to` (if any) by `from`. */
SimDiskStatus sim_disk_rename(SimDisk *disk, const char *from, const char *to);

SimDiskStatus sim_disk_append(SimDisk *disk, const char *name, const void *data, gsize len);
/* Writes at `offset`, extending the file (with zeros) if needed. */
SimDiskStatus sim_disk_write(SimDisk *disk, const char *name, gint64 offset, const void *data,
                             gsize len);
/* Shrinks (or zero-extends) the file to `size` bytes. */
SimDiskStatus sim_disk_truncate(SimDisk *disk, const char *name, gint64 size);
/* Reads up to `len` bytes at `offset` from the page cache; returns the count
 * read (0 past the end) or -1 when the file does not exist. */
gssize sim_disk_read(const SimDisk *disk, const char *name, gint64 offset, void *buf, gsize len);
/* The `len` bytes at `offset` of the page cache, as sim_disk_read would copy
 * them, without a copy: NULL when the file does not exist or is shorter
 * than offset + len. (transfer none: valid until the disk next changes) */
const guint8 *sim_disk_peek(const SimDisk *disk, const char *name, gint64 offset, gsize len);
/* The file's size as the process sees it, or -1 when it does not exist. */
gint64 sim_disk_size(const SimDisk *disk, const char *name);
/* The size the file would have after a power loss that kept nothing unsynced. */
gint64 sim_disk_durable_size(const SimDisk *disk, const char *name);
/* TRUE when every change to the file is durable. */
gboolean sim_disk_is_synced(const SimDisk *disk, const char *name);

/* The names starting with `prefix`, sorted. (transfer full) */
GPtrArray *sim_disk_list(const SimDisk *disk, const char *prefix);

/* Makes the file's changes so far durable after the fsync latency, then runs
 * `cb` on the node (cb may be NULL). */
void sim_disk_fsync(SimDisk *disk, const char *name, SimDiskSyncFn cb, void *arg);

/* Bytes held by all files (page-cache view), and the capacity (0: unbounded). */
gint64 sim_disk_used_bytes(const SimDisk *disk);
void sim_disk_set_capacity(SimDisk *disk, gint64 capacity_bytes);
/* Full disk fault: the capacity becomes what is used now; FALSE heals it. */
void sim_disk_set_full(SimDisk *disk, gboolean full);
void sim_disk_set_fsync_latency(SimDisk *disk, SimDist latency);
/* Slow disk fault: fsync latency times `multiplier` (1 heals). */
void sim_disk_set_slow(SimDisk *disk, double multiplier);

/* Timing (see the top of this file). The device's bandwidth in bytes per
 * second (0, the default: unbounded), the dirty limit past which writes wait
 * for writeback (0, the default: writes never wait) and the page cache's
 * size (0, the default: every byte stays cached). */
void sim_disk_set_bandwidth(SimDisk *disk, gint64 bytes_per_s);
void sim_disk_set_dirty_limit(SimDisk *disk, gint64 bytes);
void sim_disk_set_page_cache(SimDisk *disk, gint64 bytes);
/* Durability without fsync: the kernel's flusher threads (Linux's
 * vm.dirty_writeback_centisecs and vm.dirty_expire_centisecs) wake every
 * `interval_ns` and write back each file whose oldest unsynced change is at
 * least `expire_ns` old, every change made to it until then: those are
 * durable from that wake-up on, as if fsynced, and a power loss keeps
 * them. 0 (the default): never; only fsync makes data durable. */
void sim_disk_set_writeback(SimDisk *disk, gint64 expire_ns, gint64 interval_ns);
/* Bytes written but not yet written back, now. */
gint64 sim_disk_dirty_bytes(const SimDisk *disk);
/* The next append, write or sim_disk_charge_read stands for `bytes` bytes
 * (instead of its own length) in the timing model. */
void sim_disk_charge_next(const SimDisk *disk, gint64 bytes);
/* Times a read of [offset, offset + len) of `name` (a model's read of data it
 * sends, such as a fetch's batches): what is not in the page cache is read
 * from the device, in the caller's window. */
void sim_disk_charge_read(const SimDisk *disk, const char *name, gint64 offset, gsize len);
/* Opens the caller's window: the calls after it are timed. */
void sim_disk_call_begin(const SimDisk *disk);
/* How long past now the calls since sim_disk_call_begin keep the caller
 * waiting (0: they return at once). */
gint64 sim_disk_call_stall_ns(const SimDisk *disk);

/* I/O error fault: TRUE makes every change fail with SIM_DISK_EIO. */
void sim_disk_set_io_error(SimDisk *disk, gboolean failed);
gboolean sim_disk_io_error(const SimDisk *disk);
/* The device is replaced by a new, empty one: every file is gone, the I/O
 * error and the full-disk fault with it; the settings stay. */
void sim_disk_replace(SimDisk *disk);

/* Lifecycle, called by sim_world. */
void sim_disk_process_crash(SimDisk *disk);
void sim_disk_power_loss(SimDisk *disk);

void sim_disk_check_invariants(const SimDisk *disk);
/* Counts the calls that may have changed the disk (every function above that
 * takes a non-const disk, and fsync completions). The invariants depend on
 * the disk's own state alone, so an unchanged count means a check would find
 * what the last one found: sim_world_check_invariants skips such disks. */
guint64 sim_disk_changes(const SimDisk *disk);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimDisk, sim_disk_free)

#endif
