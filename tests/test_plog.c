/*
 * Unit tests for plog, the partition log, at its edges: the empty log, offset
 * assignment and reads, index lookups at segment and index-interval
 * boundaries, segment rolls by size and by time, truncation into the middle of
 * a batch and to a new start, torn and corrupt tails, segments that no longer
 * continue the offsets, retention, flushes and the recovery point, the
 * leader-epoch cache and the producer state across crashes, a full disk.
 *
 * Every test runs a real SimWorld with one node whose model object is the
 * fixture: its crash callback frees the log and its restart callback reopens
 * it, as a broker does. The log's invariants are checked after every event.
 */
#include "config_fixture.h"
#include "plog.h"

#include "plog_file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Record values are their offset plus this, so reads can be checked. */
#define VALUE_BASE 1000000

typedef struct {
    SimWorld *world;
    SimNodeId node;
    SimDisk *disk;
    PlogConfig config;
    Plog *log; /* NULL while the node is down */
} Fixture;

/* ---- fixture ---- */

static void
noop_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    (void)ctx;
    (void)from;
    (void)msg;
}

static void
noop_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)ctx;
    (void)peer;
    (void)reason;
}

static void
node_crash_cb(SimWorld *world, void *ctx)
{
    (void)world;
    Fixture *fx = ctx;
    plog_free(fx->log);
    fx->log = NULL;
}

/* Reopens the log as a broker's log manager does: with the recovery point
 * the log directory's checkpoint holds for it, if any. */
static void
fx_open(Fixture *fx)
{
    g_autoptr(GHashTable) recovery_points = plog_recovery_points_read(fx->disk);
    const gint64 *recovery_point =
        recovery_points != NULL ? g_hash_table_lookup(recovery_points, "orders-3") : NULL;
    fx->log = plog_open_recovering(fx->world, fx->node, "orders", 3, &fx->config,
                                   recovery_point != NULL ? *recovery_point : -1);
    plog_check_files(fx->log);
}

static void
node_restart_cb(SimWorld *world, void *ctx)
{
    (void)world;
    fx_open(ctx);
}

/* Writes the log directory's recovery-point checkpoint with the log alone. */
static void
fx_checkpoint(Fixture *fx)
{
    g_autoptr(GPtrArray) logs = g_ptr_array_new();
    g_ptr_array_add(logs, fx->log);
    assert_int_equal(plog_recovery_points_write(fx->disk, logs), SIM_DISK_OK);
}

static const SimNodeOps node_ops = {noop_message, noop_disconnect, node_crash_cb, node_restart_cb};

static void
check_after_event(SimWorld *world, void *user_data)
{
    (void)world;
    Fixture *fx = user_data;
    if (fx->log != NULL)
        plog_check_invariants(fx->log);
}

static int
setup(void **state)
{
    Fixture *fx = g_new0(Fixture, 1);
    fx->world = sim_world_new(7);
    fx->node = sim_node_add(fx->world, "b0", &node_ops, fx);
    fx->disk = sim_node_disk(fx->world, fx->node);
    kconfig_bind_log_defaults(&fx->config);
    sim_world_set_after_event(fx->world, check_after_event, fx);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fixture *fx = *state;
    if (fx->log != NULL)
        plog_check_files(fx->log);
    plog_free(fx->log);
    sim_world_free(fx->world);
    g_free(fx);
    return 0;
}

static void
fx_crash_restart(Fixture *fx)
{
    sim_node_crash(fx->world, fx->node);
    assert_null(fx->log);
    sim_node_restart(fx->world, fx->node);
    assert_non_null(fx->log);
}

static void
fx_power_loss_restart(Fixture *fx)
{
    sim_node_power_loss(fx->world, fx->node);
    sim_node_restart(fx->world, fx->node);
}

static void
fx_run_ms(Fixture *fx, gint64 ms)
{
    sim_world_run_until(fx->world, sim_now_ns(fx->world) + ms * SIM_NS_PER_MS);
}

/* ---- batches ---- */

static PlogBatch *
make_batch(guint records, guint64 first_value, guint32 size_bytes, gint64 timestamp_ms)
{
    PlogBatch *batch = plog_batch_new();
    for (guint i = 0; i < records; i++)
        plog_batch_add_record(batch, i % 2, first_value + i, size_bytes);
    batch->first_timestamp_ms = timestamp_ms;
    batch->max_timestamp_ms = timestamp_ms;
    return batch;
}

/* Appends a batch of `records` records whose values follow their offsets. */
static gint64
append_at(Fixture *fx, guint records, guint32 size_bytes, gint64 timestamp_ms, gint64 now_ms)
{
    gint64 leo = plog_log_end_offset(fx->log);
    g_autoptr(PlogBatch) batch =
        make_batch(records, (guint64)leo + VALUE_BASE, size_bytes, timestamp_ms);
    SimDiskStatus status = SIM_DISK_ENOENT;
    gint64 base_offset = plog_append(fx->log, batch, now_ms, &status);
    assert_int_equal(status, SIM_DISK_OK);
    assert_int_equal(base_offset, leo);
    assert_int_equal(plog_log_end_offset(fx->log), leo + records);
    plog_check_files(fx->log);
    return base_offset;
}

static gint64
append(Fixture *fx, guint records, guint32 size_bytes, gint64 timestamp_ms)
{
    return append_at(fx, records, size_bytes, timestamp_ms, timestamp_ms);
}

/* The batch holding `offset`, read alone; its values are checked. */
static PlogBatch *
read_batch(Fixture *fx, gint64 offset)
{
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    assert_int_equal(plog_read(fx->log, offset, 1, out), PLOG_READ_OK);
    assert_int_equal(out->len, 1);
    PlogBatch *batch = g_ptr_array_steal_index(out, 0);
    assert_true(batch->base_offset <= offset);
    assert_true(plog_batch_last_offset(batch) >= offset);
    for (guint i = 0; i < batch->records->len; i++)
        assert_int_equal(g_array_index(batch->records, PlogRecord, i).value,
                         (guint64)(batch->base_offset + i + VALUE_BASE));
    return batch;
}

static void
assert_reads_everything(Fixture *fx)
{
    for (gint64 offset = plog_log_start_offset(fx->log); offset < plog_log_end_offset(fx->log);
         offset++) {
        g_autoptr(PlogBatch) batch = read_batch(fx, offset);
        (void)batch;
    }
}

static char *
log_file(gint64 base_offset, const char *suffix)
{
    return g_strdup_printf("orders-3/%020" G_GINT64_FORMAT "%s", base_offset, suffix);
}

static void
assert_segments(Fixture *fx, const gint64 *bases, guint count)
{
    assert_int_equal(plog_segment_count(fx->log), count);
    for (guint i = 0; i < count; i++) {
        PlogSegmentInfo info;
        plog_segment_info(fx->log, i, &info);
        assert_int_equal(info.base_offset, bases[i]);
        g_autofree char *name = log_file(bases[i], ".log");
        assert_true(sim_disk_exists(fx->disk, name));
    }
}

/* The file positions of the batches in a `.log` file, read with the codec. */
static GArray *
batch_positions(Fixture *fx, const char *name)
{
    GArray *positions = g_array_new(FALSE, FALSE, sizeof(gint64));
    gint64 size = sim_disk_size(fx->disk, name);
    gint64 position = 0;
    while (position < size) {
        guint8 buf[PLOG_BATCH_HEADER_BYTES];
        assert_int_equal(sim_disk_read(fx->disk, name, position, buf, sizeof buf), sizeof buf);
        PlogBatchHeader h;
        assert_true(plog_batch_header_decode(buf, sizeof buf, &h));
        g_array_append_val(positions, position);
        position += plog_batch_header_encoded_bytes(&h);
    }
    return positions;
}

/* ---- tests ---- */

static void
test_plog_empty_log(void **state)
{
    /* Goal: a new log is empty at offset 0, reads and truncates as such, and
     * reopens empty after a crash and a power loss. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int round = 0; round < 3; round++) {
        assert_int_equal(plog_log_start_offset(fx->log), 0);
        assert_int_equal(plog_log_end_offset(fx->log), 0);
        assert_int_equal(plog_recovery_point(fx->log), 0);
        assert_int_equal(plog_size_bytes(fx->log), 0);
        g_autoptr(GPtrArray) out = plog_batch_array_new();
        assert_int_equal(plog_read(fx->log, 0, 1000, out), PLOG_READ_OK);
        assert_int_equal(out->len, 0);
        assert_int_equal(plog_read(fx->log, 1, 1000, out), PLOG_READ_OFFSET_OUT_OF_RANGE);
        assert_int_equal(plog_truncate_to(fx->log, 0), 0);
        assert_int_equal(plog_apply_retention(fx->log, G_MAXINT32), 0);
        assert_int_equal(plog_offset_for_timestamp(fx->log, 0), -1);
        gint32 epoch;
        gint64 end_offset;
        plog_epoch_end_offset(fx->log, 0, &epoch, &end_offset);
        assert_int_equal(epoch, PLOG_UNDEFINED_EPOCH);
        assert_int_equal(end_offset, PLOG_UNDEFINED_EPOCH_OFFSET);
        g_autofree char *name = log_file(0, ".log");
        assert_true(sim_disk_exists(fx->disk, name));
        /* The recovery point is checkpointed by the log's owner, for all
         * its logs at once. */
        assert_false(sim_disk_exists(fx->disk, "orders-3/recovery-point-offset-checkpoint"));
        assert_false(sim_disk_exists(fx->disk, PLOG_RECOVERY_POINTS_FILE));
        /* Created empty, as Kafka's CheckpointFile creates it, and read back
         * as an empty cache: nothing is written until an epoch is assigned. */
        assert_int_equal(sim_disk_size(fx->disk, "orders-3/leader-epoch-checkpoint"), 0);
        assert_true(sim_disk_is_synced(fx->disk, "orders-3/leader-epoch-checkpoint"));
        assert_false(sim_disk_exists(fx->disk, "orders-3/leader-epoch-checkpoint.tmp"));
        /* Missing when the log was created; read back empty after. */
        assert_true(plog_recovery_info(fx->log)->epoch_file_valid == (round > 0));
        if (round == 0)
            fx_crash_restart(fx);
        else
            fx_power_loss_restart(fx);
    }
}

static void
test_plog_append_and_read_limits(void **state)
{
    /* Goal: offsets are assigned in order; a read returns whole batches from
     * the one holding the offset, at least one, then up to max_bytes. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int i = 0; i < 5; i++)
        assert_int_equal(append(fx, 4, 100, i), 4 * i);
    assert_int_equal(plog_size_bytes(fx->log), 5 * (PLOG_BATCH_OVERHEAD_BYTES + 400));
    assert_reads_everything(fx);
    static const struct {
        gint64 offset;
        gint64 max_bytes;
        guint batches;
        gint64 first_base;
    } cases[] = {
        {0, 0, 1, 0},       /* at least one batch */
        {6, 461, 1, 4},     /* exactly one batch's size */
        {6, 921, 1, 4},     /* one byte short of two */
        {6, 922, 2, 4},     /* two */
        {6, 1000000, 4, 4}, /* to the end */
        {19, 1000000, 1, 16},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GPtrArray) out = plog_batch_array_new();
        assert_int_equal(plog_read(fx->log, cases[i].offset, cases[i].max_bytes, out),
                         PLOG_READ_OK);
        assert_int_equal(out->len, cases[i].batches);
        const PlogBatch *first = g_ptr_array_index(out, 0);
        assert_int_equal(first->base_offset, cases[i].first_base);
    }
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    assert_int_equal(plog_read(fx->log, 21, 100, out), PLOG_READ_OFFSET_OUT_OF_RANGE);
}

static void
test_plog_index_lookup_at_boundaries(void **state)
{
    /* Goal: index entries follow Kafka's interval rule, and lookups at and
     * around every index entry and segment boundary find the right batch. */
    Fixture *fx = *state;
    fx->config.index_interval_bytes = 1000;
    fx->config.segment_bytes = 5000;
    fx_open(fx);
    /* Batches of 2 records x 200 bytes: 461 logical bytes. An entry goes to
     * the batch after more than 1000 bytes: batches 3, 6, 9 of each segment.
     * A segment takes 10 batches (4610 bytes; an 11th would pass 5000). */
    for (int i = 0; i < 25; i++)
        append(fx, 2, 200, i);
    static const gint64 bases[] = {0, 20, 40};
    assert_segments(fx, bases, 3);
    static const struct {
        guint segment;
        guint index_entries;
    } expected[] = {{0, 3}, {1, 3}, {2, 1}};
    for (gsize i = 0; i < G_N_ELEMENTS(expected); i++) {
        PlogSegmentInfo info;
        plog_segment_info(fx->log, expected[i].segment, &info);
        assert_int_equal(info.index_entries, expected[i].index_entries);
    }
    static const gint64 probes[] = {0,  1,  5,  6,  7,  11, 12, 13, 17, 18, 19, 20,
                                    21, 25, 26, 39, 40, 41, 45, 46, 47, 48, 49};
    for (gsize i = 0; i < G_N_ELEMENTS(probes); i++) {
        g_autoptr(PlogBatch) batch = read_batch(fx, probes[i]);
        assert_int_equal(batch->base_offset, probes[i] - probes[i] % 2);
    }
    assert_reads_everything(fx);
}

static void
test_plog_roll_by_size(void **state)
{
    /* Goal: a segment rolls when the next batch would take it past
     * segment_bytes; a batch larger than a segment still gets one of its own. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 1000;
    fx_open(fx);
    /* 1 record of 239 bytes: 300 logical bytes, three per segment. */
    for (int i = 0; i < 7; i++)
        append(fx, 1, 239, 0);
    append(fx, 1, 5000, 0);
    append(fx, 1, 239, 0);
    static const gint64 bases[] = {0, 3, 6, 7, 8};
    assert_segments(fx, bases, G_N_ELEMENTS(bases));
    PlogSegmentInfo info;
    plog_segment_info(fx->log, 0, &info);
    assert_int_equal(info.size_bytes, 900);
    assert_int_equal(info.next_offset, 3);
    assert_reads_everything(fx);
    /* Rolling flushed the old segments in the background. */
    fx_run_ms(fx, 100);
    assert_int_equal(plog_recovery_point(fx->log), 8);
}

static void
test_plog_roll_by_time(void **state)
{
    /* Goal: a segment rolls when a batch is more than roll_ms newer than the
     * segment's first batch, or, without timestamps, when the segment is
     * older than roll_ms by the broker's clock. */
    Fixture *fx = *state;
    fx->config.roll_ms = 1000;
    fx_open(fx);
    static const gint64 timestamps[] = {0, 500, 1000, 1001, 1500, 2001, 2002, 3002};
    for (gsize i = 0; i < G_N_ELEMENTS(timestamps); i++)
        append(fx, 1, 10, timestamps[i]);
    static const gint64 bases[] = {0, 3, 6};
    assert_segments(fx, bases, G_N_ELEMENTS(bases));
    /* Batches without timestamps: a segment created at 0 ms of the broker's
     * clock rolls once it is more than 1000 ms old. */
    plog_truncate_fully_and_start_at(fx->log, 100);
    static const struct {
        gint64 now_ms;
        guint segments;
    } untimed[] = {{500, 1}, {1000, 1}, {1001, 2}, {2001, 2}, {2002, 3}};
    for (gsize i = 0; i < G_N_ELEMENTS(untimed); i++) {
        append_at(fx, 1, 10, PLOG_NO_TIMESTAMP, untimed[i].now_ms);
        assert_int_equal(plog_segment_count(fx->log), untimed[i].segments);
    }
}

static void
test_plog_truncate_into_batch(void **state)
{
    /* Goal: truncating into a batch removes the whole batch (Kafka cuts at
     * batch boundaries), later segments and their index entries, and the
     * next append reuses the offsets. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 2 * (PLOG_BATCH_OVERHEAD_BYTES + 5 * 100);
    fx->config.index_interval_bytes = 0;
    fx_open(fx);
    for (int i = 0; i < 6; i++)
        append(fx, 5, 100, i);
    static const gint64 three[] = {0, 10, 20};
    assert_segments(fx, three, 3);
    assert_int_equal(plog_truncate_to(fx->log, 12), 10);
    static const gint64 two[] = {0, 10};
    assert_segments(fx, two, 2);
    g_autofree char *gone = log_file(20, ".log");
    assert_false(sim_disk_exists(fx->disk, gone));
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    assert_int_equal(plog_read(fx->log, 12, 100, out), PLOG_READ_OFFSET_OUT_OF_RANGE);
    assert_int_equal(plog_truncate_to(fx->log, 7), 5);
    static const gint64 one[] = {0};
    assert_segments(fx, one, 1);
    PlogSegmentInfo info;
    plog_segment_info(fx->log, 0, &info);
    assert_int_equal(info.index_entries, 0);
    assert_int_equal(append(fx, 3, 100, 9), 5);
    plog_segment_info(fx->log, 0, &info);
    assert_int_equal(info.index_entries, 1);
    assert_int_equal(plog_truncate_to(fx->log, 100), 8);
    assert_reads_everything(fx);
    fx_crash_restart(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 8);
    assert_reads_everything(fx);
}

/* The log start, LEO and size as the segments give them, against what the
 * accessors answer (which plog keeps beside the segments). */
static void
assert_accessors_follow_segments(Fixture *fx)
{
    guint count = plog_segment_count(fx->log);
    gint64 size_bytes = 0;
    PlogSegmentInfo first;
    PlogSegmentInfo info;
    plog_segment_info(fx->log, 0, &first);
    for (guint i = 0; i < count; i++) {
        plog_segment_info(fx->log, i, &info);
        size_bytes += info.size_bytes;
    }
    assert_int_equal(plog_log_start_offset(fx->log), first.base_offset);
    assert_int_equal(plog_log_end_offset(fx->log), info.next_offset);
    assert_int_equal(plog_size_bytes(fx->log), size_bytes);
    plog_check_invariants(fx->log);
}

static void
test_plog_accessors_follow_every_change(void **state)
{
    /* Goal: the log start, LEO and size answered are the segments' own
     * after each kind of change: append, roll, truncation within and below
     * the log, retention, recovery. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 2 * (PLOG_BATCH_OVERHEAD_BYTES + 5 * 100);
    fx_open(fx);
    assert_accessors_follow_segments(fx);
    for (int i = 0; i < 7; i++) {
        append(fx, 5, 100, i);
        assert_accessors_follow_segments(fx);
    }
    assert_true(plog_segment_count(fx->log) > 2);
    assert_int_equal(plog_truncate_to(fx->log, 27), 25);
    assert_accessors_follow_segments(fx);
    fx->config.retention_bytes = 1;
    fx_run_ms(fx, 100); /* the rolls' flushes complete */
    assert_int_equal(plog_flushes_in_flight(fx->log), 0);
    plog_close(fx->log);
    fx_open(fx);
    assert_accessors_follow_segments(fx);
    assert_true(plog_apply_retention(fx->log, 100) > 0);
    assert_int_equal(plog_log_start_offset(fx->log), 20);
    assert_accessors_follow_segments(fx);
    plog_truncate_fully_and_start_at(fx->log, 3);
    assert_accessors_follow_segments(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 3);
    append(fx, 5, 100, 9);
    fx_crash_restart(fx);
    assert_accessors_follow_segments(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 8);
}

static void
test_plog_torn_or_corrupt_tail_is_cut(void **state)
{
    /* Goal: recovery cuts a last batch that is short or holds garbage, and
     * keeps everything before it. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int i = 0; i < 4; i++)
        append(fx, 10, 50, i);
    g_autofree char *name = log_file(0, ".log");
    g_autoptr(GArray) positions = batch_positions(fx, name);
    gint64 last = g_array_index(positions, gint64, 3);
    static const guint8 garbage[] = {0xde, 0xad, 0xbe, 0xef};
    assert_int_equal(sim_disk_write(fx->disk, name, last + 70, garbage, sizeof garbage),
                     SIM_DISK_OK);
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    assert_int_equal(plog_read(fx->log, 35, 100, out), PLOG_READ_CORRUPT);
    fx_crash_restart(fx);
    assert_true(plog_recovery_info(fx->log)->cut);
    assert_int_equal(plog_log_end_offset(fx->log), 30);
    assert_int_equal(sim_disk_size(fx->disk, name), last);
    assert_reads_everything(fx);
    /* A last batch cut short by a few bytes. */
    gint64 second = g_array_index(positions, gint64, 2);
    assert_int_equal(sim_disk_truncate(fx->disk, name, last - 3), SIM_DISK_OK);
    fx_crash_restart(fx);
    assert_true(plog_recovery_info(fx->log)->cut);
    assert_int_equal(plog_log_end_offset(fx->log), 20);
    assert_int_equal(sim_disk_size(fx->disk, name), second);
    assert_int_equal(append(fx, 2, 50, 9), 20);
}

static void
test_plog_power_loss_tears_unflushed_tail(void **state)
{
    /* Goal: over many seeds, a power loss keeps everything flushed, keeps a
     * prefix of the rest, and sometimes has to cut a torn batch. */
    (void)state;
    guint cuts = 0;
    for (guint64 seed = 1; seed <= 60; seed++) {
        Fixture fx = {0};
        fx.world = sim_world_new(seed);
        fx.node = sim_node_add(fx.world, "b0", &node_ops, &fx);
        fx.disk = sim_node_disk(fx.world, fx.node);
        kconfig_bind_log_defaults(&fx.config);
        fx_open(&fx);
        for (int i = 0; i < 4; i++)
            append(&fx, 20, 100, i);
        plog_flush(fx.log, 80);
        fx_run_ms(&fx, 50);
        assert_int_equal(plog_recovery_point(fx.log), 80);
        for (int i = 0; i < 6; i++)
            append(&fx, 20, 100, 10 + i);
        fx_power_loss_restart(&fx);
        gint64 leo = plog_log_end_offset(fx.log);
        assert_true(leo >= 80);
        assert_int_equal(leo % 20, 0);
        assert_reads_everything(&fx);
        cuts += plog_recovery_info(fx.log)->cut;
        plog_free(fx.log);
        sim_world_free(fx.world);
    }
    assert_true(cuts > 0);
}

static void
test_plog_recovery_drops_segments_after_a_gap(void **state)
{
    /* Goal: when a segment lost its tail, the later segments no longer
     * continue its offsets and recovery deletes them: a prefix survives. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 3 * (PLOG_BATCH_OVERHEAD_BYTES + 100);
    fx_open(fx);
    for (int i = 0; i < 9; i++)
        append(fx, 1, 100, i);
    static const gint64 three[] = {0, 3, 6};
    assert_segments(fx, three, 3);
    g_autofree char *first = log_file(0, ".log");
    g_autoptr(GArray) positions = batch_positions(fx, first);
    assert_int_equal(sim_disk_truncate(fx->disk, first, g_array_index(positions, gint64, 2)),
                     SIM_DISK_OK);
    fx_crash_restart(fx);
    const PlogRecoveryInfo *info = plog_recovery_info(fx->log);
    assert_false(info->cut);
    assert_int_equal(info->segments_deleted, 2);
    assert_int_equal(plog_log_end_offset(fx->log), 2);
    static const gint64 one[] = {0};
    assert_segments(fx, one, 1);
    g_autofree char *index = log_file(3, ".index");
    assert_false(sim_disk_exists(fx->disk, index));
    assert_reads_everything(fx);
}

/* Appends `bytes` to the `.log` file of segment `base_offset`. */
static void
append_to_file(Fixture *fx, gint64 base_offset, const guint8 *bytes, gsize len)
{
    g_autofree char *name = log_file(base_offset, ".log");
    assert_int_equal(sim_disk_append(fx->disk, name, bytes, len), SIM_DISK_OK);
}

static void
test_plog_recovery_keeps_segments_after_a_clean_cut(void **state)
{
    /* Goal: garbage cut off a segment exactly where the next one begins (what
     * an unsynced cut of an earlier recovery leaves) condemns nothing after
     * it; stale whole batches there are cut too and the newer segments kept. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 3 * (PLOG_BATCH_OVERHEAD_BYTES + 100);
    fx_open(fx);
    for (int i = 0; i < 7; i++)
        append(fx, 1, 100, i);
    static const gint64 three[] = {0, 3, 6};
    assert_segments(fx, three, 3);
    static const guint8 garbage[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    append_to_file(fx, 0, garbage, sizeof garbage);
    fx_crash_restart(fx);
    assert_true(plog_recovery_info(fx->log)->cut);
    assert_int_equal(plog_recovery_info(fx->log)->segments_deleted, 0);
    assert_int_equal(plog_log_end_offset(fx->log), 7);
    /* A whole, valid batch at offset 3 left behind in segment 0. */
    g_autoptr(PlogBatch) stale = make_batch(2, 42, 100, 0);
    stale->base_offset = 3;
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    plog_batch_encode(stale, bytes);
    append_to_file(fx, 0, bytes->data, bytes->len);
    fx_crash_restart(fx);
    assert_int_equal(plog_recovery_info(fx->log)->overlaps_cut, 1);
    assert_int_equal(plog_recovery_info(fx->log)->segments_deleted, 0);
    assert_segments(fx, three, 3);
    assert_int_equal(plog_log_end_offset(fx->log), 7);
    assert_reads_everything(fx);
}

static void
test_plog_read_all_encoded_from_log_start(void **state)
{
    /* Goal: plog_read_all_encoded gives every batch from the one holding the
     * log start to the LEO, across segments, as verifiable encoded batches
     * whose values plog_batch_decode_values decodes in offset order. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 1000;
    fx->config.retention_ms = 1000;
    fx_open(fx);
    for (int i = 0; i < 12; i++)
        append(fx, 1 + i % 4, 100, i);
    assert_true(plog_segment_count(fx->log) > 3);
    assert_true(plog_apply_retention(fx->log, 1005) > 0);
    gint64 start = plog_log_start_offset(fx->log);
    assert_true(start > 0);
    g_autoptr(GByteArray) out = g_byte_array_new();
    assert_true(plog_read_all_encoded(fx->log, out));
    gint64 next = start;
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint at = 0; at < out->len;) {
        PlogBatchHeader h;
        assert_true(plog_batch_header_decode(out->data + at, out->len - at, &h));
        gsize len = (gsize)plog_batch_header_encoded_bytes(&h);
        assert_true(plog_batch_verify(out->data + at, len, &h));
        assert_int_equal(h.base_offset, next);
        g_array_set_size(values, (guint)h.record_count);
        assert_true(
            plog_batch_decode_values(out->data + at, len, &h, (guint64 *)(gpointer)values->data));
        for (gint32 r = 0; r < h.record_count; r++)
            assert_int_equal(g_array_index(values, guint64, r), (guint64)(next + r + VALUE_BASE));
        next += h.record_count;
        at += (guint)len;
    }
    assert_int_equal(next, plog_log_end_offset(fx->log));
    /* plog_encoded_equals agrees with the copy and refuses any other. */
    assert_true(plog_encoded_equals(fx->log, out));
    out->data[out->len / 2] ^= 1;
    assert_false(plog_encoded_equals(fx->log, out));
    out->data[out->len / 2] ^= 1;
    g_byte_array_set_size(out, out->len - 1);
    assert_false(plog_encoded_equals(fx->log, out));
}

/* `bytes` cut into spans of `cut` bytes (the last shorter), with an empty
 * span after each when `empties`. */
static GArray *
spans_cut(const GByteArray *bytes, gsize cut, gboolean empties)
{
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    for (gsize at = 0; at < bytes->len; at += cut) {
        PlogSpan span = {bytes->data + at, MIN(cut, bytes->len - at)};
        g_array_append_val(spans, span);
        if (empties) {
            PlogSpan empty = {bytes->data, 0};
            g_array_append_val(spans, empty);
        }
    }
    return spans;
}

static void
test_plog_encoded_spans_compare_however_cut(void **state)
{
    /* Goal: a log over several segments gives one span per segment, in
     * place, holding what plog_read_all_encoded copies; and two span arrays
     * compare equal when they hold the same bytes however they are cut, and
     * unequal with a byte changed, a byte more or a byte fewer. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 2000;
    fx_open(fx);
    for (int i = 0; i < 60; i++)
        append(fx, 1 + i % 3, 100, i);
    guint segments = plog_segment_count(fx->log);
    assert_true(segments > 3);
    g_autoptr(GByteArray) copy = g_byte_array_new();
    assert_true(plog_read_all_encoded(fx->log, copy));
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    assert_true(plog_encoded_spans(fx->log, spans));
    assert_int_equal(spans->len, segments);
    gsize at = 0;
    for (guint i = 0; i < spans->len; i++) {
        const PlogSpan *span = &g_array_index(spans, PlogSpan, i);
        assert_memory_equal(span->data, copy->data + at, span->len);
        at += span->len;
    }
    assert_int_equal(at, copy->len);
    static const gsize cuts[] = {1, 7, 500, 100000};
    for (guint c = 0; c < G_N_ELEMENTS(cuts); c++) {
        for (int empties = 0; empties <= 1; empties++) {
            g_autoptr(GArray) cut = spans_cut(copy, cuts[c], empties);
            assert_true(plog_spans_equal(spans, cut));
            assert_true(plog_spans_equal(cut, spans));
        }
    }
    assert_true(plog_encoded_equals(fx->log, copy));
    g_autoptr(GByteArray) other = g_byte_array_new();
    g_byte_array_append(other, copy->data, copy->len);
    other->data[other->len - 100] ^= 0x40;
    g_autoptr(GArray) changed = spans_cut(other, 7, FALSE);
    assert_false(plog_spans_equal(spans, changed));
    assert_false(plog_encoded_equals(fx->log, other));
    other->data[other->len - 100] ^= 0x40;
    guint8 extra = 0;
    g_byte_array_append(other, &extra, 1);
    g_autoptr(GArray) longer = spans_cut(other, 7, FALSE);
    assert_false(plog_spans_equal(spans, longer));
    assert_false(plog_spans_equal(longer, spans));
    assert_false(plog_encoded_equals(fx->log, other));
    g_byte_array_set_size(other, copy->len - 1);
    g_autoptr(GArray) shorter = spans_cut(other, 500, TRUE);
    assert_false(plog_spans_equal(spans, shorter));
    assert_false(plog_spans_equal(shorter, spans));
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
    assert_true(plog_spans_equal(none, none));
    assert_false(plog_spans_equal(none, spans));
}

static void
test_plog_log_append_time_stamps_leader_appends(void **state)
{
    /* Goal: with LogAppendTime the leader's append replaces the producer's
     * timestamps by its clock and sets the timestamp-type attribute, and a
     * follower's append keeps the leader's stamp; with CreateTime (the
     * default) the producer's stamp stays. Retention then ages the segment
     * from the append time. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 2 * (PLOG_BATCH_OVERHEAD_BYTES + 100);
    fx->config.retention_ms = 1000;
    fx->config.log_append_time = TRUE;
    fx_open(fx);
    append_at(fx, 1, 100, 5, 70000); /* the producer said 5 ms, the broker's clock 70 s */
    g_autoptr(PlogBatch) first = read_batch(fx, 0);
    assert_int_equal(first->first_timestamp_ms, 70000);
    assert_int_equal(first->max_timestamp_ms, 70000);
    assert_true((first->attributes & PLOG_BATCH_LOG_APPEND_TIME) != 0);
    g_autoptr(PlogBatch) copy = make_batch(1, 1 + VALUE_BASE, 100, 42);
    copy->base_offset = 1;
    copy->attributes |= PLOG_BATCH_LOG_APPEND_TIME;
    SimDiskStatus status = SIM_DISK_ENOENT;
    plog_append_as_follower(fx->log, copy, 90000, &status);
    assert_int_equal(status, SIM_DISK_OK);
    g_autoptr(PlogBatch) second = read_batch(fx, 1);
    assert_int_equal(second->max_timestamp_ms, 42);
    for (int i = 2; i < 4; i++)
        append_at(fx, 1, 100, 5, 70000);
    /* [0, 2) is newest at 70000 (its follower batch says 42): kept until 71000. */
    assert_int_equal(plog_apply_retention(fx->log, 71000), 0);
    assert_int_equal(plog_apply_retention(fx->log, 71001), 1);
    fx->config.log_append_time = FALSE;
    fx_crash_restart(fx);
    append_at(fx, 1, 100, 5, 80000);
    g_autoptr(PlogBatch) created = read_batch(fx, 4);
    assert_int_equal(created->max_timestamp_ms, 5);
    assert_int_equal(created->attributes & PLOG_BATCH_LOG_APPEND_TIME, 0);
}

static void
test_plog_segments_stamped_by_the_node_wall_clock(void **state)
{
    /* Goal: a segment's creation time is the node's wall clock, so a clock
     * stepped forward ages an empty-timestamp segment for segment.ms at once:
     * a batch without timestamps rolls by creation time (Kafka's
     * LogSegment.timeWaitedForRoll), measured on the stepped clock. */
    Fixture *fx = *state;
    fx->config.roll_ms = 10000;
    fx_open(fx);
    append_at(fx, 1, 100, PLOG_NO_TIMESTAMP, 0);
    append_at(fx, 1, 100, PLOG_NO_TIMESTAMP, 5000);
    assert_int_equal(plog_segment_count(fx->log), 1);
    sim_node_clock_step(fx->world, fx->node, 3600 * SIM_NS_PER_S);
    fx_crash_restart(fx);
    /* Recovery re-creates the segment at the stepped clock, an hour ahead. */
    append_at(fx, 1, 100, PLOG_NO_TIMESTAMP, sim_node_wall_ms(fx->world, fx->node) + 5000);
    assert_int_equal(plog_segment_count(fx->log), 1);
    append_at(fx, 1, 100, PLOG_NO_TIMESTAMP, sim_node_wall_ms(fx->world, fx->node) + 10001);
    assert_int_equal(plog_segment_count(fx->log), 2);
}

static void
test_plog_retention_keeps_active_segment(void **state)
{
    /* Goal: retention by time deletes every old segment but the active one;
     * by size it keeps the log at least retention_bytes; the log start, the
     * epoch cache and the producer state follow. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 2 * (PLOG_BATCH_OVERHEAD_BYTES + 100);
    fx->config.retention_ms = 1000;
    fx_open(fx);
    assert_true(plog_epoch_assign(fx->log, 1, 0));
    for (int i = 0; i < 7; i++)
        append(fx, 1, 100, i);
    assert_true(plog_epoch_assign(fx->log, 2, 7));
    for (int i = 7; i < 10; i++)
        append(fx, 1, 100, i);
    static const gint64 five[] = {0, 2, 4, 6, 8};
    assert_segments(fx, five, 5);
    assert_int_equal(plog_apply_retention(fx->log, 1001), 0);
    /* Segment [0, 2) has max timestamp 1: more than 1000 ms old at 1002. */
    assert_int_equal(plog_apply_retention(fx->log, 1004), 2);
    assert_int_equal(plog_log_start_offset(fx->log), 4);
    assert_int_equal(plog_recovery_point(fx->log), 4);
    assert_int_equal(plog_apply_retention_below(fx->log, 100000, 6), 1);
    assert_int_equal(plog_log_start_offset(fx->log), 6);
    assert_int_equal(plog_apply_retention(fx->log, 100000), 1);
    static const gint64 active[] = {8};
    assert_segments(fx, active, 1);
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    assert_int_equal(plog_read(fx->log, 7, 100, out), PLOG_READ_OFFSET_OUT_OF_RANGE);
    const GArray *epochs = plog_epoch_entries(fx->log);
    assert_int_equal(epochs->len, 1);
    assert_int_equal(g_array_index(epochs, PlogEpochEntry, 0).epoch, 2);
    assert_int_equal(g_array_index(epochs, PlogEpochEntry, 0).start_offset, 8);
    g_autofree char *gone = log_file(0, ".log");
    assert_false(sim_disk_exists(fx->disk, gone));
    fx_crash_restart(fx);
    assert_segments(fx, active, 1);
    assert_int_equal(plog_epoch_entries(fx->log)->len, 1);
}

static void
test_plog_retention_by_bytes(void **state)
{
    /* Goal: retention.bytes deletes the oldest segments only while what is
     * left stays at or above the limit. */
    Fixture *fx = *state;
    gint64 batch_bytes = PLOG_BATCH_OVERHEAD_BYTES + 100;
    fx->config.segment_bytes = 2 * batch_bytes;
    fx->config.retention_ms = -1;
    fx->config.retention_bytes = 5 * batch_bytes;
    fx_open(fx);
    for (int i = 0; i < 9; i++)
        append(fx, 1, 100, i);
    /* Segments of 2, 2, 2, 2, 1 batches: 9; deleting two leaves 5. */
    assert_int_equal(plog_apply_retention(fx->log, G_MAXINT64 / 2), 2);
    assert_int_equal(plog_log_start_offset(fx->log), 4);
    assert_int_equal(plog_size_bytes(fx->log), 5 * batch_bytes);
    assert_int_equal(plog_apply_retention(fx->log, G_MAXINT64 / 2), 0);
}

static void
test_plog_retention_notes_deleted_segments(void **state)
{
    /* Goal: each deleted segment is noted oldest first with its offsets, the
     * pass that deleted it, and its batches as stored. */
    Fixture *fx = *state;
    gint64 batch_bytes = PLOG_BATCH_OVERHEAD_BYTES + 100;
    fx->config.segment_bytes = 2 * batch_bytes;
    fx->config.retention_ms = 1000;
    fx->config.retention_bytes = batch_bytes;
    fx_open(fx);
    for (int i = 0; i < 9; i++)
        append(fx, 1, 100, i);
    g_autoptr(GArray) deleted = plog_deleted_segments_new();
    /* At 1004, [0, 2) and [2, 4) are old (timestamps 1 and 3 at most); then
     * by size [4, 6) and [6, 8) go, leaving the active segment's one batch. */
    assert_int_equal(plog_apply_retention_noting(fx->log, 1004, G_MAXINT64, deleted), 4);
    assert_int_equal(deleted->len, 4);
    static const PlogRetentionCause causes[] = {PLOG_RETENTION_TIME, PLOG_RETENTION_TIME,
                                                PLOG_RETENTION_SIZE, PLOG_RETENTION_SIZE};
    for (guint i = 0; i < deleted->len; i++) {
        const PlogDeletedSegment *note = &g_array_index(deleted, PlogDeletedSegment, i);
        assert_int_equal(note->info.base_offset, 2 * (gint64)i);
        assert_int_equal(note->info.next_offset, 2 * (gint64)i + 2);
        assert_int_equal(note->cause, causes[i]);
        assert_int_equal(note->now_ms, 1004);
        assert_true(note->readable);
        assert_int_equal(note->encoded->len, note->info.file_bytes);
        PlogBatchHeader header;
        assert_true(plog_batch_header_decode(note->encoded->data, note->encoded->len, &header));
        assert_int_equal(header.base_offset, 2 * (gint64)i);
    }
    assert_int_equal(plog_log_start_offset(fx->log), 8);
}

static void
test_plog_flush_advances_recovery_point(void **state)
{
    /* Goal: a flush completes after the fsync latency and then moves the
     * recovery point, which the owner's checkpoint records; the message and
     * time policies start flushes; a closed log's flush completes
     * harmlessly. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int i = 0; i < 10; i++)
        append(fx, 5, 100, i);
    assert_int_equal(plog_flushes_in_flight(fx->log), 0);
    plog_flush(fx->log, 23);
    assert_int_equal(plog_recovery_point(fx->log), 0);
    assert_int_equal(plog_flushes_in_flight(fx->log), 1);
    fx_run_ms(fx, 50);
    assert_int_equal(plog_recovery_point(fx->log), 23);
    assert_false(sim_disk_exists(fx->disk, PLOG_RECOVERY_POINTS_FILE));
    fx_checkpoint(fx);
    g_autoptr(GString) body = plog_file_read_checked(fx->disk, PLOG_RECOVERY_POINTS_FILE);
    assert_non_null(body);
    assert_string_equal(body->str, "0\n1\norders 3 23\n");
    plog_flush(fx->log, 50);
    fx_run_ms(fx, 50);
    assert_int_equal(plog_recovery_point(fx->log), 50);
    fx_checkpoint(fx);
    plog_free(fx->log);
    fx->config.flush_interval_messages = 12;
    fx_open(fx);
    append(fx, 5, 100, 10);
    append(fx, 5, 100, 11);
    assert_int_equal(plog_flushes_in_flight(fx->log), 0);
    append(fx, 5, 100, 12);
    assert_int_equal(plog_flushes_in_flight(fx->log), 1);
    fx_run_ms(fx, 50);
    assert_int_equal(plog_recovery_point(fx->log), 65);
    plog_free(fx->log);
    fx->config.flush_interval_messages = G_MAXINT64;
    fx->config.flush_interval_ms = 100;
    fx_open(fx);
    append(fx, 5, 100, 13);
    fx_run_ms(fx, 150);
    assert_int_equal(plog_recovery_point(fx->log), 70);
    append(fx, 5, 100, 14);
    plog_flush(fx->log, 75);
    plog_close(fx->log);
    fx->log = NULL;
    fx_run_ms(fx, 300);
}

static void
test_plog_truncate_fully_and_start_at(void **state)
{
    /* Goal: a follower behind the leader's log start restarts its log at a
     * new offset, durably. */
    Fixture *fx = *state;
    fx_open(fx);
    assert_true(plog_epoch_assign(fx->log, 3, 0));
    for (int i = 0; i < 4; i++)
        append(fx, 5, 100, i);
    plog_truncate_fully_and_start_at(fx->log, 1000);
    assert_int_equal(plog_log_start_offset(fx->log), 1000);
    assert_int_equal(plog_log_end_offset(fx->log), 1000);
    assert_int_equal(plog_recovery_point(fx->log), 1000);
    assert_int_equal(plog_epoch_latest(fx->log), PLOG_UNDEFINED_EPOCH);
    static const gint64 one[] = {1000};
    assert_segments(fx, one, 1);
    g_autofree char *old = log_file(0, ".log");
    assert_false(sim_disk_exists(fx->disk, old));
    assert_int_equal(append(fx, 5, 100, 9), 1000);
    fx_power_loss_restart(fx);
    assert_int_equal(plog_log_start_offset(fx->log), 1000);
    assert_true(plog_log_end_offset(fx->log) == 1000 || plog_log_end_offset(fx->log) == 1005);
    /* Truncating below the log start offset does the same. */
    assert_int_equal(plog_truncate_to(fx->log, 10), 10);
    assert_int_equal(plog_log_start_offset(fx->log), 10);
}

static void
test_plog_epoch_cache_follows_log(void **state)
{
    /* Goal: batches with newer leader epochs start entries, truncation removes
     * entries above the LEO, endOffsetFor answers from the log, and the cache
     * survives a crash through its checkpoint. */
    Fixture *fx = *state;
    fx_open(fx);
    static const gint32 epochs[] = {1, 1, 2, 2, 4, 4};
    for (gsize i = 0; i < G_N_ELEMENTS(epochs); i++) {
        g_autoptr(PlogBatch) batch = make_batch(10, (guint64)(10 * i) + VALUE_BASE, 10, 0);
        batch->leader_epoch = epochs[i];
        batch->base_offset = (gint64)(10 * i);
        SimDiskStatus status;
        assert_int_equal(plog_append_as_follower(fx->log, batch, 0, &status), 10 * i);
    }
    assert_int_equal(plog_epoch_latest(fx->log), 4);
    assert_true(plog_epoch_assign(fx->log, 6, 60));
    /* An epoch once assigned keeps its start (Kafka's assign). */
    assert_false(plog_epoch_assign(fx->log, 6, 60));
    gint32 epoch;
    gint64 end_offset;
    plog_epoch_end_offset(fx->log, 3, &epoch, &end_offset);
    assert_int_equal(epoch, 2);
    assert_int_equal(end_offset, 40);
    plog_epoch_end_offset(fx->log, 6, &epoch, &end_offset);
    assert_int_equal(end_offset, 60);
    fx_crash_restart(fx);
    assert_int_equal(plog_epoch_entries(fx->log)->len, 4);
    assert_int_equal(plog_truncate_to(fx->log, 45), 40);
    assert_int_equal(plog_epoch_latest(fx->log), 2);
    plog_epoch_end_offset(fx->log, 2, &epoch, &end_offset);
    assert_int_equal(end_offset, 40);
    fx_crash_restart(fx);
    assert_int_equal(plog_epoch_latest(fx->log), 2);
    /* A lost checkpoint is rebuilt from the batches' epochs. */
    assert_int_equal(sim_disk_delete(fx->disk, "orders-3/leader-epoch-checkpoint"), SIM_DISK_OK);
    fx_crash_restart(fx);
    assert_false(plog_recovery_info(fx->log)->epoch_file_valid);
    const GArray *entries = plog_epoch_entries(fx->log);
    assert_int_equal(entries->len, 2);
    assert_int_equal(g_array_index(entries, PlogEpochEntry, 1).start_offset, 20);
}

static void
test_plog_epoch_checkpoint_written_from_first_epoch(void **state)
{
    /* Goal: a new log's empty checkpoint is first written when an epoch is
     * assigned. An empty file with batches beside it (what a power loss
     * leaves when the checkpoint's rename was durable and its bytes were not)
     * reads as an empty cache, which the batches' epochs rebuild and write
     * again. */
    Fixture *fx = *state;
    const char *name = "orders-3/leader-epoch-checkpoint";
    fx_open(fx);
    assert_int_equal(sim_disk_size(fx->disk, name), 0);
    g_autoptr(PlogBatch) batch = make_batch(10, VALUE_BASE, 10, 0);
    batch->leader_epoch = 5;
    batch->base_offset = 0;
    SimDiskStatus status;
    assert_int_equal(plog_append_as_follower(fx->log, batch, 0, &status), 0);
    assert_true(sim_disk_size(fx->disk, name) > 0);
    assert_int_equal(sim_disk_truncate(fx->disk, name, 0), SIM_DISK_OK);
    fx_crash_restart(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 10);
    assert_true(plog_recovery_info(fx->log)->epoch_file_valid);
    const GArray *entries = plog_epoch_entries(fx->log);
    assert_int_equal(entries->len, 1);
    assert_int_equal(g_array_index(entries, PlogEpochEntry, 0).epoch, 5);
    assert_true(sim_disk_size(fx->disk, name) > 0);
    fx_crash_restart(fx);
    assert_int_equal(plog_epoch_entries(fx->log)->len, 1);
    assert_int_equal(g_array_index(plog_epoch_entries(fx->log), PlogEpochEntry, 0).start_offset, 0);
}

/* Appends a batch for producer `pid` and records it in `reference`. */
static void
append_idempotent(Fixture *fx, PlogProducerState *reference, gint64 pid, gint16 epoch,
                  gint32 base_sequence, guint records)
{
    PlogProducerVerdict verdict;
    assert_int_equal(
        plog_producer_check(fx->log, pid, epoch, base_sequence, (gint32)records, &verdict),
        PLOG_PRODUCER_OK);
    gint64 leo = plog_log_end_offset(fx->log);
    g_autoptr(PlogBatch) batch = make_batch(records, (guint64)leo + VALUE_BASE, 10, 0);
    batch->producer_id = pid;
    batch->producer_epoch = epoch;
    batch->base_sequence = base_sequence;
    SimDiskStatus status;
    assert_int_equal(plog_append(fx->log, batch, 0, &status), leo);
    plog_producer_state_update(reference, pid, epoch, base_sequence, (gint32)records, leo);
}

static void
test_plog_recovery_rebuilds_producer_state(void **state)
{
    /* Goal: the producer state is rebuilt from the log after a crash, a power
     * loss (to the surviving prefix) and a truncation, and still detects
     * duplicates and gaps. */
    Fixture *fx = *state;
    fx_open(fx);
    g_autoptr(PlogProducerState) reference = plog_producer_state_new();
    for (gint32 i = 0; i < 8; i++)
        append_idempotent(fx, reference, 1 + i % 2, 0, (i / 2) * 3, 3);
    append_idempotent(fx, reference, 2, 1, 0, 2);
    assert_true(plog_producer_state_equal(plog_producer_state(fx->log), reference));
    fx_crash_restart(fx);
    assert_true(plog_producer_state_equal(plog_producer_state(fx->log), reference));
    PlogProducerVerdict verdict;
    assert_int_equal(plog_producer_check(fx->log, 1, 0, 9, 3, &verdict), PLOG_PRODUCER_DUPLICATE);
    assert_int_equal(verdict.duplicate_base_offset, 18);
    assert_int_equal(plog_producer_check(fx->log, 1, 0, 12, 3, &verdict), PLOG_PRODUCER_OK);
    assert_int_equal(plog_producer_check(fx->log, 2, 0, 12, 3, &verdict),
                     PLOG_PRODUCER_INVALID_PRODUCER_EPOCH);
    assert_int_equal(plog_producer_check(fx->log, 2, 1, 3, 1, &verdict),
                     PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE);
    /* Truncating away producer 2's epoch-1 batch brings back epoch 0. */
    assert_int_equal(plog_truncate_to(fx->log, 24), 24);
    assert_int_equal(plog_producer_check(fx->log, 2, 0, 12, 3, &verdict), PLOG_PRODUCER_OK);
    plog_flush(fx->log, 24);
    fx_run_ms(fx, 50);
    fx_power_loss_restart(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 24);
    assert_int_equal(plog_producer_check(fx->log, 2, 0, 9, 3, &verdict), PLOG_PRODUCER_DUPLICATE);
    assert_int_equal(verdict.duplicate_base_offset, 21);
}

static void
test_plog_offset_for_timestamp(void **state)
{
    /* Goal: the time index finds the first batch at or after a timestamp,
     * across segments. */
    Fixture *fx = *state;
    fx->config.segment_bytes = 4 * (PLOG_BATCH_OVERHEAD_BYTES + 100);
    fx->config.index_interval_bytes = 100;
    fx_open(fx);
    static const gint64 timestamps[] = {100, 200, 200, 300, 250, 400, 500, 500, 600, 700};
    for (gsize i = 0; i < G_N_ELEMENTS(timestamps); i++)
        append_at(fx, 1, 100, timestamps[i], 0);
    static const struct {
        gint64 timestamp_ms;
        gint64 offset;
    } cases[] = {
        {0, 0},   {100, 0}, {101, 1}, {200, 1}, {201, 3}, {260, 3},  {300, 3},
        {301, 5}, {450, 6}, {500, 6}, {501, 8}, {700, 9}, {701, -1},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_int_equal(plog_offset_for_timestamp(fx->log, cases[i].timestamp_ms),
                         cases[i].offset);
}

static void
test_plog_full_disk_refuses_append(void **state)
{
    /* Goal: on a full disk an append fails with ENOSPC and changes nothing;
     * once healed, appends continue at the same offset. */
    Fixture *fx = *state;
    fx_open(fx);
    append(fx, 5, 100, 0);
    sim_disk_set_full(fx->disk, TRUE);
    g_autoptr(PlogBatch) batch = make_batch(5, 5 + VALUE_BASE, 100, 1);
    SimDiskStatus status = SIM_DISK_OK;
    assert_int_equal(plog_append(fx->log, batch, 1, &status), -1);
    assert_int_equal(status, SIM_DISK_ENOSPC);
    assert_int_equal(plog_log_end_offset(fx->log), 5);
    plog_check_files(fx->log);
    sim_disk_set_full(fx->disk, FALSE);
    assert_int_equal(append(fx, 5, 100, 2), 5);
    fx_crash_restart(fx);
    assert_int_equal(plog_log_end_offset(fx->log), 10);
    assert_reads_everything(fx);
}

static void
test_plog_corrupt_checkpoint_verifies_everything(void **state)
{
    /* Goal: recovery skips only what lies below the checkpointed recovery
     * point. A flush not checkpointed yet, like an unreadable checkpoint,
     * makes it verify every batch; a checkpointed one lets it skip the
     * flushed batches. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int i = 0; i < 6; i++)
        append(fx, 5, 100, i);
    plog_flush(fx->log, 20);
    fx_run_ms(fx, 50);
    assert_int_equal(plog_recovery_point(fx->log), 20);
    fx_crash_restart(fx);
    const PlogRecoveryInfo *info = plog_recovery_info(fx->log);
    assert_false(info->recovery_point_valid);
    assert_int_equal(info->batches_checked, 6);
    assert_int_equal(plog_recovery_point(fx->log), 0);
    plog_flush(fx->log, 20);
    fx_run_ms(fx, 50);
    fx_checkpoint(fx);
    fx_crash_restart(fx);
    info = plog_recovery_info(fx->log);
    assert_true(info->recovery_point_valid);
    assert_int_equal(info->recovery_point_read, 20);
    assert_int_equal(info->batches_checked, 2);
    assert_int_equal(plog_recovery_point(fx->log), 20);
    static const char garbage[] = "0\n9999\nxxh32 00000000\n";
    const char *name = PLOG_RECOVERY_POINTS_FILE;
    assert_int_equal(sim_disk_truncate(fx->disk, name, 0), SIM_DISK_OK);
    assert_int_equal(sim_disk_append(fx->disk, name, garbage, strlen(garbage)), SIM_DISK_OK);
    fx_crash_restart(fx);
    info = plog_recovery_info(fx->log);
    assert_false(info->recovery_point_valid);
    assert_int_equal(info->batches_checked, 6);
    assert_int_equal(plog_recovery_point(fx->log), 0);
    assert_int_equal(plog_log_end_offset(fx->log), 30);
}

static void
test_plog_recovery_points_round_trip(void **state)
{
    /* Goal: the log directory's checkpoint keeps each log's recovery point
     * under its directory name, topics with dashes included, and a file
     * whose count, version or lines are wrong reads as none. */
    Fixture *fx = *state;
    fx_open(fx);
    for (int i = 0; i < 4; i++)
        append(fx, 5, 100, i);
    plog_flush(fx->log, 15);
    fx_run_ms(fx, 50);
    Plog *other = plog_open(fx->world, fx->node, "my-topic", 12, &fx->config);
    g_autoptr(GPtrArray) logs = g_ptr_array_new();
    g_ptr_array_add(logs, other);
    g_ptr_array_add(logs, fx->log);
    assert_int_equal(plog_recovery_points_write(fx->disk, logs), SIM_DISK_OK);
    g_autoptr(GHashTable) read = plog_recovery_points_read(fx->disk);
    assert_non_null(read);
    assert_int_equal(g_hash_table_size(read), 2);
    const gint64 *value = g_hash_table_lookup(read, "orders-3");
    assert_non_null(value);
    assert_int_equal(*value, 15);
    value = g_hash_table_lookup(read, "my-topic-12");
    assert_non_null(value);
    assert_int_equal(*value, 0);
    plog_close(other);
    static const char *const bad[] = {
        "0\n2\norders 3 15\n",             /* count says 2 */
        "1\n1\norders 3 15\n",             /* version */
        "0\n1\norders 3\n",                /* no offset */
        "0\n1\norders x 15\n",             /* partition */
        "0\n1\norders 3 -1\n",             /* negative offset */
        "0\n1\norders 3 15",                /* no last newline */
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GString) body = g_string_new(bad[i]);
        assert_int_equal(plog_file_write_checked(fx->disk, PLOG_RECOVERY_POINTS_FILE, body),
                         SIM_DISK_OK);
        g_autoptr(GHashTable) none = plog_recovery_points_read(fx->disk);
        if (none != NULL)
            fail_msg("read a malformed checkpoint: %s", bad[i]);
    }
    g_autoptr(GString) good = g_string_new("0\n1\norders 3 15\n");
    assert_int_equal(plog_file_write_checked(fx->disk, PLOG_RECOVERY_POINTS_FILE, good),
                     SIM_DISK_OK);
    g_autoptr(GHashTable) again = plog_recovery_points_read(fx->disk);
    assert_non_null(again);
    assert_int_equal(g_hash_table_size(again), 1);
}

int
main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_plog_empty_log),
        TEST(test_plog_append_and_read_limits),
        TEST(test_plog_index_lookup_at_boundaries),
        TEST(test_plog_roll_by_size),
        TEST(test_plog_roll_by_time),
        TEST(test_plog_truncate_into_batch),
        TEST(test_plog_accessors_follow_every_change),
        TEST(test_plog_torn_or_corrupt_tail_is_cut),
        cmocka_unit_test(test_plog_power_loss_tears_unflushed_tail),
        TEST(test_plog_recovery_drops_segments_after_a_gap),
        TEST(test_plog_recovery_keeps_segments_after_a_clean_cut),
        TEST(test_plog_retention_keeps_active_segment),
        TEST(test_plog_log_append_time_stamps_leader_appends),
        TEST(test_plog_segments_stamped_by_the_node_wall_clock),
        TEST(test_plog_read_all_encoded_from_log_start),
        TEST(test_plog_encoded_spans_compare_however_cut),
        TEST(test_plog_retention_by_bytes),
        TEST(test_plog_retention_notes_deleted_segments),
        TEST(test_plog_flush_advances_recovery_point),
        TEST(test_plog_truncate_fully_and_start_at),
        TEST(test_plog_epoch_cache_follows_log),
        TEST(test_plog_epoch_checkpoint_written_from_first_epoch),
        TEST(test_plog_recovery_rebuilds_producer_state),
        TEST(test_plog_offset_for_timestamp),
        TEST(test_plog_full_disk_refuses_append),
        TEST(test_plog_corrupt_checkpoint_verifies_everything),
        TEST(test_plog_recovery_points_round_trip),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
