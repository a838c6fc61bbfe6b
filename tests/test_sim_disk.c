/*
 * Unit tests for sim_disk: file semantics, fsync durability and latency,
 * process crash, power loss (prefix, torn and garbage writes, checked against
 * a reference model over many seeds), rename, listing, full and slow disks.
 * Every test uses a real SimWorld, and the disk's invariants are checked after
 * every event.
 */
#include "sim_disk.h"

#include "sim_net.h"
#include "trace_writer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

/* ---- fixture ---- */

static void
noop_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    (void)ctx;
    (void)from;
    sim_msg_free(msg);
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
noop_lifecycle(SimWorld *world, void *ctx)
{
    (void)world;
    (void)ctx;
}

static const SimNodeOps noop_ops = {noop_message, noop_disconnect, noop_lifecycle, noop_lifecycle};

typedef struct {
    SimWorld *world;
    SimNodeId node;
    SimDisk *disk;
    int node_ctx; /* the model object handed to callbacks */
} Fixture;

static void
check_disk_after_event(SimWorld *world, void *user_data)
{
    (void)world;
    sim_disk_check_invariants(user_data);
}

static void
fixture_init(Fixture *fx, guint64 seed)
{
    fx->world = sim_world_new(seed);
    fx->node = sim_node_add(fx->world, "n0", &noop_ops, &fx->node_ctx);
    fx->disk = sim_node_disk(fx->world, fx->node);
    assert_non_null(fx->disk);
    sim_world_set_after_event(fx->world, check_disk_after_event, fx->disk);
}

static void
fixture_clear(Fixture *fx)
{
    sim_disk_check_invariants(fx->disk);
    sim_world_free(fx->world);
}

static int
setup(void **state)
{
    Fixture *fx = g_new0(Fixture, 1);
    fixture_init(fx, 1);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fixture *fx = *state;
    fixture_clear(fx);
    g_free(fx);
    return 0;
}

/* ---- helpers ---- */

typedef struct {
    int calls;
    SimDiskStatus status;
    gint64 time_ns;
    void *ctx;
} SyncResult;

static void
record_sync(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    SyncResult *result = arg;
    result->calls++;
    result->status = status;
    result->time_ns = sim_now_ns(world);
    result->ctx = ctx;
}

/* The page-cache contents of `name`. (transfer full) */
static GByteArray *
read_all(SimDisk *disk, const char *name)
{
    gint64 size = sim_disk_size(disk, name);
    assert_true(size >= 0);
    GByteArray *bytes = g_byte_array_sized_new((guint)size);
    g_byte_array_set_size(bytes, (guint)size);
    gssize count = sim_disk_read(disk, name, 0, bytes->data, (gsize)size);
    assert_int_equal(count, size);
    return bytes;
}

static void
assert_contents(SimDisk *disk, const char *name, const void *expected, gsize len)
{
    g_autoptr(GByteArray) bytes = read_all(disk, name);
    assert_int_equal(bytes->len, len);
    if (len > 0)
        assert_memory_equal(bytes->data, expected, len);
}

static void
assert_text(SimDisk *disk, const char *name, const char *text)
{
    assert_contents(disk, name, text, strlen(text));
}

static void
append_text(SimDisk *disk, const char *name, const char *text)
{
    assert_int_equal(sim_disk_append(disk, name, text, strlen(text)), SIM_DISK_OK);
}

/* Fsyncs `name` and runs the world until the fsync has completed. */
static void
sync_now(Fixture *fx, const char *name)
{
    SyncResult result = {0};
    sim_disk_fsync(fx->disk, name, record_sync, &result);
    sim_world_run_until(fx->world, sim_now_ns(fx->world) + SIM_NS_PER_S);
    assert_int_equal(result.calls, 1);
    assert_int_equal(result.status, SIM_DISK_OK);
}

static void
assert_names(GPtrArray *names, const char *const *expected)
{
    guint count = 0;
    while (expected[count] != NULL)
        count++;
    assert_int_equal(names->len, count);
    for (guint i = 0; i < count; i++)
        assert_string_equal(g_ptr_array_index(names, i), expected[i]);
}

/* ---- tests ---- */

static void
test_sim_disk_status_names(void **state)
{
    /* Goal: every status has the name the header promises. */
    (void)state;
    static const struct {
        SimDiskStatus status;
        const char *name;
    } cases[] = {
        {SIM_DISK_OK, "ok"},
        {SIM_DISK_ENOSPC, "no space left on device"},
        {SIM_DISK_ENOENT, "no such file"},
        {SIM_DISK_EEXIST, "file exists"},
        {SIM_DISK_EIO, "input/output error"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
        assert_string_equal(sim_disk_status_name(cases[i].status), cases[i].name);
}

static void
test_sim_disk_create_delete_exists(void **state)
{
    /* Goal: create, delete and exists behave like a flat namespace. */
    Fixture *fx = *state;
    assert_false(sim_disk_exists(fx->disk, "f"));
    assert_int_equal(sim_disk_size(fx->disk, "f"), -1);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), -1);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_true(sim_disk_exists(fx->disk, "f"));
    assert_int_equal(sim_disk_size(fx->disk, "f"), 0);
    assert_true(sim_disk_is_synced(fx->disk, "f"));
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_EEXIST);
    append_text(fx->disk, "f", "abc");
    assert_int_equal(sim_disk_used_bytes(fx->disk), 3);
    assert_int_equal(sim_disk_delete(fx->disk, "f"), SIM_DISK_OK);
    assert_false(sim_disk_exists(fx->disk, "f"));
    assert_int_equal(sim_disk_used_bytes(fx->disk), 0);
    assert_int_equal(sim_disk_delete(fx->disk, "f"), SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_append(fx->disk, "f", "x", 1), SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_write(fx->disk, "f", 0, "x", 1), SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 0), SIM_DISK_ENOENT);
    char buf[4];
    assert_int_equal(sim_disk_read(fx->disk, "f", 0, buf, sizeof buf), -1);
    sim_disk_check_invariants(fx->disk);
}

typedef enum { STEP_APPEND, STEP_WRITE, STEP_TRUNCATE } StepKind;

static void
test_sim_disk_data_ops_change_page_cache(void **state)
{
    /* Goal: append, write (inside, across and past the end) and truncate
     * (shrink and zero-extend) give the expected page-cache contents. */
    Fixture *fx = *state;
    static const struct {
        StepKind kind;
        gint64 offset; /* write offset or truncate size */
        const char *data;
        const char *expected;
        gsize expected_len;
    } steps[] = {
        {STEP_APPEND, 0, "hello", "hello", 5},
        {STEP_APPEND, 0, " world", "hello world", 11},
        {STEP_APPEND, 0, "", "hello world", 11},
        {STEP_WRITE, 0, "J", "Jello world", 11},
        {STEP_WRITE, 9, "LDS", "Jello worLDS", 12},
        {STEP_WRITE, 14, "!!", "Jello worLDS\0\0!!", 16},
        {STEP_WRITE, 30, "", "Jello worLDS\0\0!!", 16},
        {STEP_TRUNCATE, 5, NULL, "Jello", 5},
        {STEP_TRUNCATE, 7, NULL, "Jello\0\0", 7},
        {STEP_APPEND, 0, "x", "Jello\0\0x", 8},
        {STEP_TRUNCATE, 0, NULL, "", 0},
    };
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    for (gsize i = 0; i < G_N_ELEMENTS(steps); i++) {
        SimDiskStatus status = SIM_DISK_OK;
        if (steps[i].kind == STEP_APPEND)
            status = sim_disk_append(fx->disk, "f", steps[i].data, strlen(steps[i].data));
        else if (steps[i].kind == STEP_WRITE)
            status = sim_disk_write(fx->disk, "f", steps[i].offset, steps[i].data,
                                    strlen(steps[i].data));
        else
            status = sim_disk_truncate(fx->disk, "f", steps[i].offset);
        assert_int_equal(status, SIM_DISK_OK);
        assert_contents(fx->disk, "f", steps[i].expected, steps[i].expected_len);
        assert_int_equal(sim_disk_used_bytes(fx->disk), steps[i].expected_len);
        sim_disk_check_invariants(fx->disk);
    }
}

static void
test_sim_disk_read_bounds(void **state)
{
    /* Goal: reads return what exists at the offset, 0 past the end. */
    Fixture *fx = *state;
    static const struct {
        gint64 offset;
        gsize len;
        gssize expected;
        const char *bytes;
    } cases[] = {
        {0, 10, 10, "0123456789"}, {3, 4, 4, "3456"}, {7, 10, 3, "789"}, {10, 5, 0, ""},
        {100, 5, 0, ""},           {0, 0, 0, ""},
    };
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "0123456789");
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        char buf[16] = {0};
        gssize count = sim_disk_read(fx->disk, "f", cases[i].offset, buf, cases[i].len);
        assert_int_equal(count, cases[i].expected);
        assert_memory_equal(buf, cases[i].bytes, (gsize)cases[i].expected);
        /* A peek sees the same bytes in place, and only a whole range. */
        const guint8 *peeked = sim_disk_peek(fx->disk, "f", cases[i].offset, cases[i].len);
        if ((gssize)cases[i].len == cases[i].expected) {
            assert_non_null(peeked);
            assert_memory_equal(peeked, cases[i].bytes, cases[i].len);
        } else {
            assert_null(peeked);
        }
    }
    assert_null(sim_disk_peek(fx->disk, "missing", 0, 0));
}

static void
test_sim_disk_files_that_never_held_a_byte(void **state)
{
    /* Goal: a file that never held a byte keeps no page-cache image, and
     * behaves as any empty file: emptied, synced, read, peeked and through a
     * power loss; its first append and a later emptying work as on any file. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "e"), SIM_DISK_OK);
    assert_int_equal(sim_disk_truncate(fx->disk, "e", 0), SIM_DISK_OK);
    sync_now(fx, "e");
    char buf[8] = {0};
    assert_int_equal(sim_disk_read(fx->disk, "e", 0, buf, sizeof buf), 0);
    assert_null(sim_disk_peek(fx->disk, "e", 0, 1));
    /* A whole empty range of a file that never held a byte has no bytes to
     * point at, as before an image was made lazily. */
    assert_null(sim_disk_peek(fx->disk, "e", 0, 0));
    sim_disk_charge_read(fx->disk, "e", 0, 1);
    assert_int_equal(sim_disk_size(fx->disk, "e"), 0);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 0);
    /* An emptying still pending when the power goes. */
    assert_int_equal(sim_disk_truncate(fx->disk, "e", 0), SIM_DISK_OK);
    sim_node_power_loss(fx->world, fx->node);
    assert_true(sim_disk_exists(fx->disk, "e"));
    assert_int_equal(sim_disk_size(fx->disk, "e"), 0);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 0);
    /* Extending an empty file by truncation gives zeros. */
    assert_int_equal(sim_disk_truncate(fx->disk, "e", 3), SIM_DISK_OK);
    assert_int_equal(sim_disk_read(fx->disk, "e", 0, buf, sizeof buf), 3);
    assert_memory_equal(buf, "\0\0\0", 3);
    assert_int_equal(sim_disk_truncate(fx->disk, "e", 0), SIM_DISK_OK);
    append_text(fx->disk, "e", "abc");
    assert_int_equal(sim_disk_size(fx->disk, "e"), 3);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 3);
    const guint8 *peeked = sim_disk_peek(fx->disk, "e", 0, 3);
    assert_non_null(peeked);
    assert_memory_equal(peeked, "abc", 3);
    /* Unsynced, a power loss may keep any prefix of it, or tear it. */
    sim_node_power_loss(fx->world, fx->node);
    assert_true(sim_disk_size(fx->disk, "e") <= 3);
    assert_int_equal(sim_disk_used_bytes(fx->disk), sim_disk_size(fx->disk, "e"));
    assert_int_equal(sim_disk_truncate(fx->disk, "e", 0), SIM_DISK_OK);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 0);
    assert_int_equal(sim_disk_delete(fx->disk, "e"), SIM_DISK_OK);
}

static void
test_sim_disk_fsync_durable_after_latency(void **state)
{
    /* Goal: fsync makes durable exactly what was written before the call, only
     * once its latency (2 ms by default) has passed, and runs the callback on
     * the node. */
    Fixture *fx = *state;
    SyncResult first = {0};
    SyncResult second = {0};
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "before");
    sim_disk_fsync(fx->disk, "f", record_sync, &first);
    append_text(fx->disk, "f", "after");
    sim_world_run_until(fx->world, 2 * SIM_NS_PER_MS - 1);
    assert_int_equal(first.calls, 0);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 0);
    sim_world_run_until(fx->world, 2 * SIM_NS_PER_MS);
    assert_int_equal(first.calls, 1);
    assert_int_equal(first.status, SIM_DISK_OK);
    assert_int_equal(first.time_ns, 2 * SIM_NS_PER_MS);
    assert_ptr_equal(first.ctx, &fx->node_ctx);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 6);
    assert_false(sim_disk_is_synced(fx->disk, "f"));
    assert_text(fx->disk, "f", "beforeafter");
    sim_disk_fsync(fx->disk, "f", record_sync, &second);
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_int_equal(second.calls, 1);
    assert_int_equal(second.time_ns, 4 * SIM_NS_PER_MS);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 11);
    assert_true(sim_disk_is_synced(fx->disk, "f"));
}

static void
test_sim_disk_fsync_missing_or_deleted_file(void **state)
{
    /* Goal: fsync of a missing file, or of one deleted before the fsync
     * completes, completes with ENOENT after the latency. */
    Fixture *fx = *state;
    SyncResult missing = {0};
    SyncResult deleted = {0};
    sim_disk_fsync(fx->disk, "nope", record_sync, &missing);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "data");
    sim_disk_fsync(fx->disk, "f", record_sync, &deleted);
    assert_int_equal(sim_disk_delete(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_int_equal(missing.calls, 1);
    assert_int_equal(missing.status, SIM_DISK_ENOENT);
    assert_int_equal(deleted.calls, 1);
    assert_int_equal(deleted.status, SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_size(fx->disk, "f"), 0);
    /* A NULL callback is allowed. */
    sim_disk_fsync(fx->disk, "f", NULL, NULL);
    sim_world_run_until(fx->world, 20 * SIM_NS_PER_MS);
}

static void
test_sim_disk_fsync_follows_rename(void **state)
{
    /* Goal: an fsync in flight follows its file through a rename (as fsync on a
     * descriptor does), and fails when a rename replaces its file. */
    Fixture *fx = *state;
    SyncResult moved = {0};
    SyncResult replaced = {0};
    assert_int_equal(sim_disk_create(fx->disk, "x"), SIM_DISK_OK);
    append_text(fx->disk, "x", "data");
    sim_disk_fsync(fx->disk, "x", record_sync, &moved);
    assert_int_equal(sim_disk_rename(fx->disk, "x", "y"), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "p"), SIM_DISK_OK);
    append_text(fx->disk, "p", "old");
    sim_disk_fsync(fx->disk, "p", record_sync, &replaced);
    assert_int_equal(sim_disk_rename(fx->disk, "y", "p"), SIM_DISK_OK);
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_int_equal(moved.status, SIM_DISK_OK);
    assert_int_equal(replaced.status, SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_durable_size(fx->disk, "p"), 4);
    assert_true(sim_disk_is_synced(fx->disk, "p"));
    assert_text(fx->disk, "p", "data");
}

static void
test_sim_disk_process_crash_keeps_page_cache(void **state)
{
    /* Goal: a process crash loses nothing, synced or not. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "synced");
    sync_now(fx, "f");
    append_text(fx->disk, "f", "+pending");
    sim_node_crash(fx->world, fx->node);
    assert_text(fx->disk, "f", "synced+pending");
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 6);
    assert_false(sim_disk_is_synced(fx->disk, "f"));
    sim_node_restart(fx->world, fx->node);
    assert_text(fx->disk, "f", "synced+pending");
    sync_now(fx, "f");
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 14);
}

static void
test_sim_disk_crash_drops_inflight_fsync(void **state)
{
    /* Goal: a crash during an fsync drops its callback, and its writes stay
     * non-durable until a new fsync. */
    Fixture *fx = *state;
    SyncResult dropped = {0};
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "data");
    sim_disk_fsync(fx->disk, "f", record_sync, &dropped);
    sim_world_run_until(fx->world, 1 * SIM_NS_PER_MS);
    sim_node_crash(fx->world, fx->node);
    sim_node_restart(fx->world, fx->node);
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_int_equal(dropped.calls, 0);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 0);
    assert_false(sim_disk_is_synced(fx->disk, "f"));
    assert_int_equal(sim_world_pending(fx->world), 0);
    sync_now(fx, "f");
    assert_int_equal(dropped.calls, 0);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 4);
}

static void
test_sim_disk_pause_holds_fsync(void **state)
{
    /* Goal: a paused node's fsync completes only when it resumes. */
    Fixture *fx = *state;
    SyncResult result = {0};
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "data");
    sim_disk_fsync(fx->disk, "f", record_sync, &result);
    sim_node_pause(fx->world, fx->node);
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_int_equal(result.calls, 0);
    sim_node_resume(fx->world, fx->node);
    sim_world_run_until(fx->world, 11 * SIM_NS_PER_MS);
    assert_int_equal(result.calls, 1);
    assert_int_equal(result.time_ns, 10 * SIM_NS_PER_MS);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 4);
}

/* ---- power loss against a reference model ---- */

#define PLAN_OPS_MAX 6

typedef struct {
    StepKind kind;
    gint64 offset; /* write offset or truncate size */
    gsize len;
    guint8 fill;
} PlannedOp;

typedef struct {
    GByteArray *durable;
    PlannedOp ops[PLAN_OPS_MAX];
    guint n_ops;
} FilePlan;

typedef struct {
    guint nothing_survived;
    guint some_survived;
    guint torn;    /* whole sectors of the next write, nothing after */
    guint garbage; /* whole sectors, then a sector of garbage */
} LossOutcomes;

/* Distinct, nonzero bytes for each op, so prefixes can be told apart. */
static guint8
op_byte(const PlannedOp *op, gsize i)
{
    return (guint8)(op->fill + (i % 199) + 1);
}

static void
ref_resize(GByteArray *bytes, gsize size)
{
    gsize old_len = bytes->len;
    g_byte_array_set_size(bytes, (guint)size);
    if (size > old_len)
        memset(bytes->data + old_len, 0, size - old_len);
}

/* Applies the first `len` bytes of planned op `op` to `bytes`. */
static void
ref_apply(GByteArray *bytes, const PlannedOp *op, gsize len)
{
    if (op->kind == STEP_TRUNCATE) {
        ref_resize(bytes, (gsize)op->offset);
        return;
    }
    if (len == 0)
        return;
    gsize end = (gsize)op->offset + len;
    if (end > bytes->len)
        ref_resize(bytes, end);
    for (gsize i = 0; i < len; i++)
        bytes->data[op->offset + (gint64)i] = op_byte(op, i);
}

static GByteArray *
ref_copy(const GByteArray *bytes)
{
    GByteArray *copy = g_byte_array_sized_new(bytes->len);
    g_byte_array_append(copy, bytes->data, bytes->len);
    return copy;
}

static void
plan_file(FilePlan *plan, SimRng *rng)
{
    plan->durable = g_byte_array_new();
    PlannedOp first = {STEP_APPEND, 0, (gsize)sim_rng_range(rng, 0, 1500), 100};
    ref_apply(plan->durable, &first, first.len);
    plan->n_ops = (guint)sim_rng_range(rng, 1, PLAN_OPS_MAX + 1);
    gint64 size = plan->durable->len;
    for (guint i = 0; i < plan->n_ops; i++) {
        PlannedOp *op = &plan->ops[i];
        op->fill = (guint8)(i * 40);
        gint64 choice = sim_rng_range(rng, 0, 10);
        op->kind = choice < 5 ? STEP_APPEND : choice < 9 ? STEP_WRITE : STEP_TRUNCATE;
        op->len = (gsize)sim_rng_range(rng, 1, 1700);
        if (op->kind == STEP_APPEND)
            op->offset = size;
        else if (op->kind == STEP_WRITE)
            op->offset = sim_rng_range(rng, 0, size + 100);
        else
            op->offset = sim_rng_range(rng, 0, size + 300);
        if (op->kind == STEP_TRUNCATE)
            size = op->offset;
        else
            size = MAX(size, op->offset + (gint64)op->len);
    }
}

static void
plan_run(Fixture *fx, const char *name, const FilePlan *plan)
{
    assert_int_equal(sim_disk_create(fx->disk, name), SIM_DISK_OK);
    assert_int_equal(sim_disk_append(fx->disk, name, plan->durable->data, plan->durable->len),
                     SIM_DISK_OK);
    sync_now(fx, name);
    for (guint i = 0; i < plan->n_ops; i++) {
        const PlannedOp *op = &plan->ops[i];
        g_autoptr(GByteArray) data = g_byte_array_new();
        PlannedOp as_write = {STEP_WRITE, 0, op->len, op->fill};
        ref_apply(data, &as_write, op->len);
        SimDiskStatus status;
        if (op->kind == STEP_APPEND)
            status = sim_disk_append(fx->disk, name, data->data, op->len);
        else if (op->kind == STEP_WRITE)
            status = sim_disk_write(fx->disk, name, op->offset, data->data, op->len);
        else
            status = sim_disk_truncate(fx->disk, name, op->offset);
        assert_int_equal(status, SIM_DISK_OK);
    }
}

/* TRUE when `actual` is `base` with op `op` torn after `kept` bytes and, when
 * `garbage_len` > 0, that many bytes of any value after them. */
static gboolean
matches_torn(const GByteArray *actual, const GByteArray *base, const PlannedOp *op, gsize kept,
             gsize garbage_len)
{
    g_autoptr(GByteArray) expected = ref_copy(base);
    ref_apply(expected, op, kept);
    gsize garbage_start = (gsize)op->offset + kept;
    if (garbage_len > 0 && garbage_start + garbage_len > expected->len)
        ref_resize(expected, garbage_start + garbage_len);
    if (actual->len != expected->len)
        return FALSE;
    for (gsize i = 0; i < actual->len; i++) {
        gboolean in_garbage = i >= garbage_start && i < garbage_start + garbage_len;
        if (!in_garbage && actual->data[i] != expected->data[i])
            return FALSE;
    }
    return TRUE;
}

/* The index of the first image in `images` equal to `actual`, or -1. */
static int
match_image(const GByteArray *actual, GPtrArray *images)
{
    for (guint j = 0; j < images->len; j++) {
        const GByteArray *image = g_ptr_array_index(images, j);
        if (actual->len == image->len && memcmp(actual->data, image->data, actual->len) == 0)
            return (int)j;
    }
    return -1;
}

/* TRUE when `actual` is some image with the next write torn after whole
 * sectors, followed by a garbage sector when `with_garbage`. */
static gboolean
match_tear(const GByteArray *actual, GPtrArray *images, const FilePlan *plan, gboolean with_garbage)
{
    for (guint j = 0; j < plan->n_ops; j++) {
        const PlannedOp *op = &plan->ops[j];
        if (op->kind == STEP_TRUNCATE)
            continue;
        gsize sectors = (op->len + SIM_DISK_SECTOR_BYTES - 1) / SIM_DISK_SECTOR_BYTES;
        for (gsize k = 0; k < sectors; k++) {
            gsize kept = k * SIM_DISK_SECTOR_BYTES;
            gsize garbage_len =
                with_garbage ? MIN((gsize)SIM_DISK_SECTOR_BYTES, op->len - kept) : 0;
            if (matches_torn(actual, g_ptr_array_index(images, j), op, kept, garbage_len))
                return TRUE;
        }
    }
    return FALSE;
}

/* Checks that `actual` is the durable prefix plus a prefix of the planned ops,
 * perhaps with the next write torn, and counts which outcome it was. The
 * explanations are tried from the most to the least specific, since a garbage
 * sector may happen to hold the real bytes. */
static void
classify_survivor(const GByteArray *actual, const FilePlan *plan, LossOutcomes *outcomes)
{
    g_autoptr(GPtrArray) images =
        g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref);
    g_ptr_array_add(images, ref_copy(plan->durable));
    for (guint j = 0; j < plan->n_ops; j++) {
        GByteArray *next = ref_copy(g_ptr_array_index(images, j));
        ref_apply(next, &plan->ops[j], plan->ops[j].len);
        g_ptr_array_add(images, next);
    }
    int exact = match_image(actual, images);
    if (exact == 0)
        outcomes->nothing_survived++;
    else if (exact > 0)
        outcomes->some_survived++;
    else if (match_tear(actual, images, plan, FALSE))
        outcomes->torn++;
    else if (match_tear(actual, images, plan, TRUE))
        outcomes->garbage++;
    else
        fail_msg("power loss left contents that no prefix or tear explains");
}

static void
check_power_loss_seed(guint64 seed, LossOutcomes *outcomes)
{
    static const char *const names[] = {"a", "b"};
    Fixture fx;
    fixture_init(&fx, seed);
    g_autoptr(SimRng) plan_rng = sim_rng_new(seed, "test/plan");
    FilePlan plans[G_N_ELEMENTS(names)];
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        plan_file(&plans[i], plan_rng);
        plan_run(&fx, names[i], &plans[i]);
    }
    sim_node_power_loss(fx.world, fx.node);
    sim_disk_check_invariants(fx.disk);
    for (gsize i = 0; i < G_N_ELEMENTS(names); i++) {
        assert_true(sim_disk_is_synced(fx.disk, names[i]));
        assert_int_equal(sim_disk_size(fx.disk, names[i]),
                         sim_disk_durable_size(fx.disk, names[i]));
        g_autoptr(GByteArray) actual = read_all(fx.disk, names[i]);
        classify_survivor(actual, &plans[i], outcomes);
        g_byte_array_unref(plans[i].durable);
    }
    fixture_clear(&fx);
}

static void
test_sim_disk_power_loss_keeps_prefix_or_tears(void **state)
{
    /* Goal: over many seeds, a power loss always leaves durable data plus a
     * prefix of the pending ops, perhaps with a torn next write, and every
     * kind of outcome occurs. */
    (void)state;
    LossOutcomes outcomes = {0};
    for (guint64 seed = 1; seed <= 400; seed++)
        check_power_loss_seed(seed, &outcomes);
    assert_true(outcomes.nothing_survived > 0);
    assert_true(outcomes.some_survived > 0);
    assert_true(outcomes.torn > 0);
    assert_true(outcomes.garbage > 0);
}

/* The kernel's flusher (sim_disk_set_writeback): a file whose oldest
 * unsynced write is 30 s old is written back, every write made to it until
 * the wake-up, at the next wake-up (every 5 s); a power loss keeps what was
 * written back and only draws over the rest. Writes after the wake-up start
 * the file's next dirty age. With the flusher off nothing is durable
 * without an fsync. */
static void
test_sim_disk_writeback_expires_old_writes(void **state)
{
    Fixture *fx = *state;
    sim_disk_set_writeback(fx->disk, 30 * SIM_NS_PER_S, 5 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_create(fx->disk, "seg"), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "idx"), SIM_DISK_OK);
    sim_world_run_until(fx->world, 1 * SIM_NS_PER_S);
    append_text(fx->disk, "seg", "old");   /* at 1 s: due 31 s, the 35 s wake-up */
    assert_int_equal(sim_disk_write(fx->disk, "idx", 0, "ab", 2), SIM_DISK_OK);
    sim_world_run_until(fx->world, 20 * SIM_NS_PER_S);
    append_text(fx->disk, "seg", "mid");   /* at 20 s: goes with the file at 35 s */
    sim_world_run_until(fx->world, 34 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_durable_size(fx->disk, "seg"), 0);
    assert_false(sim_disk_is_synced(fx->disk, "seg"));
    sim_world_run_until(fx->world, 35 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_durable_size(fx->disk, "seg"), 6);
    assert_true(sim_disk_is_synced(fx->disk, "seg"));
    assert_int_equal(sim_disk_durable_size(fx->disk, "idx"), 2);
    sim_world_run_until(fx->world, 36 * SIM_NS_PER_S);
    append_text(fx->disk, "seg", "new");   /* at 36 s: due 66 s, the 70 s wake-up */
    assert_int_equal(sim_disk_truncate(fx->disk, "idx", 1), SIM_DISK_OK);
    sim_world_run_until(fx->world, 69 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_durable_size(fx->disk, "seg"), 6);
    assert_int_equal(sim_disk_durable_size(fx->disk, "idx"), 2);
    /* Lost power at 69 s: the first two writes are kept whatever the draw;
     * the third is kept, torn or gone. */
    sim_node_power_loss(fx->world, fx->node);
    sim_node_restart(fx->world, fx->node);
    gssize size = sim_disk_size(fx->disk, "seg");
    assert_true(size >= 6 && size <= 9);
    char buf[9];
    assert_int_equal(sim_disk_read(fx->disk, "seg", 0, buf, 6), 6);
    assert_memory_equal(buf, "oldmid", 6);
    assert_true(sim_disk_size(fx->disk, "idx") >= 1);
}

static void
test_sim_disk_writeback_off_keeps_nothing_unsynced(void **state)
{
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "seg"), SIM_DISK_OK);
    append_text(fx->disk, "seg", "old");
    sim_world_run_until(fx->world, 3600 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_durable_size(fx->disk, "seg"), 0);
    assert_false(sim_disk_is_synced(fx->disk, "seg"));
}

static void
test_sim_disk_power_loss_keeps_synced_files(void **state)
{
    /* Goal: a power loss changes nothing in fully synced files, and a restart
     * afterwards sees them whole. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "empty"), SIM_DISK_OK);
    append_text(fx->disk, "f", "durable");
    sync_now(fx, "f");
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 3), SIM_DISK_OK);
    sync_now(fx, "f");
    sim_node_power_loss(fx->world, fx->node);
    sim_node_restart(fx->world, fx->node);
    assert_text(fx->disk, "f", "dur");
    assert_text(fx->disk, "empty", "");
    assert_int_equal(sim_disk_used_bytes(fx->disk), 3);
}

static guint64
scripted_power_loss(guint64 seed, GByteArray **contents)
{
    Fixture fx;
    fixture_init(&fx, seed);
    assert_int_equal(sim_disk_create(fx.disk, "log"), SIM_DISK_OK);
    guint8 block[1300];
    for (guint i = 0; i < 8; i++) {
        memset(block, 'a' + (int)i, sizeof block);
        assert_int_equal(sim_disk_append(fx.disk, "log", block, sizeof block), SIM_DISK_OK);
    }
    sim_node_power_loss(fx.world, fx.node);
    *contents = read_all(fx.disk, "log");
    guint64 fingerprint = sim_trace_fingerprint(sim_world_trace(fx.world));
    fixture_clear(&fx);
    return fingerprint;
}

static void
test_sim_disk_power_loss_is_deterministic(void **state)
{
    /* Goal: the same seed gives the same survivors and trace; seeds differ. */
    (void)state;
    g_autoptr(GHashTable) fingerprints =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    for (guint64 seed = 1; seed <= 20; seed++) {
        GByteArray *first = NULL;
        GByteArray *second = NULL;
        guint64 fingerprint = scripted_power_loss(seed, &first);
        assert_int_equal(scripted_power_loss(seed, &second), fingerprint);
        assert_int_equal(first->len, second->len);
        assert_memory_equal(first->data, second->data, first->len);
        g_byte_array_unref(first);
        g_byte_array_unref(second);
        g_hash_table_add(fingerprints, g_memdup2(&fingerprint, sizeof fingerprint));
    }
    assert_true(g_hash_table_size(fingerprints) > 5);
}

/* ---- rename, list, capacity, latency, trace ---- */

static void
test_sim_disk_rename_replaces_atomically(void **state)
{
    /* Goal: rename replaces the target at once and durably, keeping the
     * source's contents and durability. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "meta"), SIM_DISK_OK);
    append_text(fx->disk, "meta", "old!");
    sync_now(fx, "meta");
    assert_int_equal(sim_disk_create(fx->disk, "meta.tmp"), SIM_DISK_OK);
    append_text(fx->disk, "meta.tmp", "new");
    sync_now(fx, "meta.tmp");
    assert_int_equal(sim_disk_rename(fx->disk, "meta.tmp", "meta"), SIM_DISK_OK);
    assert_false(sim_disk_exists(fx->disk, "meta.tmp"));
    assert_text(fx->disk, "meta", "new");
    assert_int_equal(sim_disk_used_bytes(fx->disk), 3);
    g_autoptr(GPtrArray) names = sim_disk_list(fx->disk, "");
    assert_names(names, (const char *const[]){"meta", NULL});
    sim_node_power_loss(fx->world, fx->node);
    assert_text(fx->disk, "meta", "new");
    assert_int_equal(sim_disk_rename(fx->disk, "gone", "meta"), SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_rename(fx->disk, "meta", "meta"), SIM_DISK_OK);
    assert_text(fx->disk, "meta", "new");
    sim_disk_check_invariants(fx->disk);
}

static void
test_sim_disk_lookups_follow_the_names(void **state)
{
    /* Goal: reads by name find the file listed under that name now, however
     * the names were read before: after alternating reads, a delete and
     * re-create, a rename over a recently read file, and with the name
     * passed in one buffer whose text changes. */
    Fixture *fx = *state;
    char name[16];
    assert_int_equal(sim_disk_create(fx->disk, "a.log"), SIM_DISK_OK);
    append_text(fx->disk, "a.log", "aaa");
    assert_int_equal(sim_disk_create(fx->disk, "b.log"), SIM_DISK_OK);
    append_text(fx->disk, "b.log", "bb");
    for (guint i = 0; i < 4; i++) {
        g_strlcpy(name, i % 2 == 0 ? "a.log" : "b.log", sizeof name);
        assert_text(fx->disk, name, i % 2 == 0 ? "aaa" : "bb");
    }
    assert_int_equal(sim_disk_delete(fx->disk, "a.log"), SIM_DISK_OK);
    assert_int_equal(sim_disk_read(fx->disk, "a.log", 0, name, 1), -1);
    assert_int_equal(sim_disk_create(fx->disk, "a.log"), SIM_DISK_OK);
    append_text(fx->disk, "a.log", "A");
    assert_text(fx->disk, "a.log", "A");
    assert_text(fx->disk, "b.log", "bb");
    assert_int_equal(sim_disk_rename(fx->disk, "b.log", "a.log"), SIM_DISK_OK);
    assert_text(fx->disk, "a.log", "bb");
    assert_int_equal(sim_disk_size(fx->disk, "b.log"), -1);
    assert_int_equal(sim_disk_create(fx->disk, "b.log"), SIM_DISK_OK);
    append_text(fx->disk, "b.log", "new b");
    g_strlcpy(name, "b.log", sizeof name);
    assert_text(fx->disk, name, "new b");
    g_strlcpy(name, "a.log", sizeof name);
    assert_text(fx->disk, name, "bb");
    sim_disk_check_invariants(fx->disk);
}

#define NAMES_MODEL 300u

static void
test_sim_disk_lookups_match_a_reference_as_files_come_and_go(void **state)
{
    /* Goal: with hundreds of files (the lookup table grows several times),
     * random creates, deletes and renames, and lookups through both each
     * name's own string and shared buffers rewritten with other names, every
     * lookup finds what a plain table of names says is there. */
    (void)state;
    for (guint64 seed = 1; seed <= 5; seed++) {
        Fixture fx;
        fixture_init(&fx, seed);
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test/names");
        char *names[NAMES_MODEL];
        GString *contents[NAMES_MODEL]; /* NULL: no such file */
        char buffers[4][48];
        for (guint i = 0; i < NAMES_MODEL; i++) {
            names[i] = g_strdup_printf("topic-%03u-%u/00000000000000000000.log", i % 37, i);
            contents[i] = NULL;
        }
        for (guint step = 0; step < 6000; step++) {
            guint i = (guint)sim_rng_range(rng, 0, NAMES_MODEL);
            guint j = (guint)sim_rng_range(rng, 0, NAMES_MODEL);
            /* Half the lookups pass the name's own string, half a buffer
             * that held other names before. */
            char *buffer = buffers[sim_rng_range(rng, 0, 4)];
            g_strlcpy(buffer, names[i], sizeof buffers[0]);
            const char *name = sim_rng_range(rng, 0, 2) == 0 ? names[i] : buffer;
            switch (sim_rng_range(rng, 0, 5)) {
            case 0: /* create, or append when it exists */
                if (contents[i] == NULL) {
                    assert_int_equal(sim_disk_create(fx.disk, name), SIM_DISK_OK);
                    contents[i] = g_string_new(NULL);
                }
                char piece[16];
                g_snprintf(piece, sizeof piece, "%u,", step);
                g_string_append(contents[i], piece);
                append_text(fx.disk, name, piece);
                break;
            case 1: /* delete */
                assert_int_equal(sim_disk_delete(fx.disk, name) == SIM_DISK_OK,
                                 contents[i] != NULL);
                if (contents[i] != NULL)
                    g_string_free(g_steal_pointer(&contents[i]), TRUE);
                break;
            case 2: /* rename i over j */
                if (contents[i] == NULL || i == j)
                    break;
                assert_int_equal(sim_disk_rename(fx.disk, name, names[j]), SIM_DISK_OK);
                if (contents[j] != NULL)
                    g_string_free(contents[j], TRUE);
                contents[j] = g_steal_pointer(&contents[i]);
                break;
            default: /* look up */
                if (contents[i] == NULL)
                    assert_int_equal(sim_disk_size(fx.disk, name), -1);
                else
                    assert_text(fx.disk, name, contents[i]->str);
                break;
            }
            if (step % 500 == 0)
                sim_disk_check_invariants(fx.disk);
        }
        for (guint i = 0; i < NAMES_MODEL; i++) {
            if (contents[i] == NULL) {
                assert_false(sim_disk_exists(fx.disk, names[i]));
            } else {
                assert_text(fx.disk, names[i], contents[i]->str);
                g_string_free(contents[i], TRUE);
            }
            g_free(names[i]);
        }
        fixture_clear(&fx);
    }
}

static void
test_sim_disk_list_sorted_by_prefix(void **state)
{
    /* Goal: list returns the names with a prefix, sorted, whatever the order
     * of creation. */
    Fixture *fx = *state;
    static const char *const created[] = {
        "orders-1/00000000000000000000.log",
        "orders-0/00000000000000000100.log",
        "orders-0/00000000000000000000.log",
        "orders-0/00000000000000000000.index",
        "meta.properties",
        "orders-10/00000000000000000000.log",
    };
    static const struct {
        const char *prefix;
        const char *expected[7];
    } cases[] = {
        {"",
         {"meta.properties", "orders-0/00000000000000000000.index",
          "orders-0/00000000000000000000.log", "orders-0/00000000000000000100.log",
          "orders-1/00000000000000000000.log", "orders-10/00000000000000000000.log", NULL}},
        {"orders-0/",
         {"orders-0/00000000000000000000.index", "orders-0/00000000000000000000.log",
          "orders-0/00000000000000000100.log", NULL}},
        {"orders-1",
         {"orders-1/00000000000000000000.log", "orders-10/00000000000000000000.log", NULL}},
        {"meta.properties", {"meta.properties", NULL}},
        {"zzz", {NULL}},
        {"a", {NULL}},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(created); i++)
        assert_int_equal(sim_disk_create(fx->disk, created[i]), SIM_DISK_OK);
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GPtrArray) names = sim_disk_list(fx->disk, cases[i].prefix);
        assert_names(names, cases[i].expected);
    }
}

static void
test_sim_disk_enospc_changes_nothing_and_heals(void **state)
{
    /* Goal: growth past the capacity fails with ENOSPC, changes nothing and is
     * traced; overwrites and shrinks still work; healing a full disk restores
     * the capacity set before. */
    Fixture *fx = *state;
    SimTrace *trace = sim_world_trace(fx->world);
    guint8 bytes[100];
    memset(bytes, 'x', sizeof bytes);
    sim_disk_set_capacity(fx->disk, 100);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(sim_disk_append(fx->disk, "f", bytes, 60), SIM_DISK_OK);
    guint64 records = sim_trace_count(trace);
    assert_int_equal(sim_disk_append(fx->disk, "f", bytes, 41), SIM_DISK_ENOSPC);
    assert_int_equal(sim_trace_count(trace), records + 1);
    assert_int_equal(sim_disk_size(fx->disk, "f"), 60);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 60);
    assert_int_equal(sim_disk_write(fx->disk, "f", 50, bytes, 51), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 101), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_write(fx->disk, "f", 50, bytes, 50), SIM_DISK_OK);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 100);
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 40), SIM_DISK_OK);
    sim_disk_set_full(fx->disk, TRUE);
    assert_int_equal(sim_disk_append(fx->disk, "f", bytes, 1), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 41), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_write(fx->disk, "f", 0, "y", 1), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "g"), SIM_DISK_OK);
    assert_int_equal(sim_disk_size(fx->disk, "f"), 40);
    sim_disk_set_full(fx->disk, FALSE);
    assert_int_equal(sim_disk_append(fx->disk, "g", bytes, 60), SIM_DISK_OK);
    assert_int_equal(sim_disk_append(fx->disk, "f", bytes, 1), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_used_bytes(fx->disk), 100);
    sim_disk_set_capacity(fx->disk, 0);
    assert_int_equal(sim_disk_append(fx->disk, "f", bytes, 100), SIM_DISK_OK);
    sim_disk_check_invariants(fx->disk);
}

static void
test_sim_disk_full_empty_disk_refuses_growth(void **state)
{
    /* Goal: an empty disk made full refuses any growth (a limit of 0 bytes is
     * not "unbounded"), and healing lets writes through again. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    sim_disk_set_full(fx->disk, TRUE);
    assert_int_equal(sim_disk_append(fx->disk, "f", "x", 1), SIM_DISK_ENOSPC);
    assert_int_equal(sim_disk_size(fx->disk, "f"), 0);
    assert_true(sim_disk_is_synced(fx->disk, "f"));
    sim_disk_set_full(fx->disk, FALSE);
    assert_int_equal(sim_disk_append(fx->disk, "f", "x", 1), SIM_DISK_OK);
}

static void
test_sim_disk_slow_disk_multiplies_latency(void **state)
{
    /* Goal: the fsync completes after the configured latency times the slow
     * multiplier, and not a nanosecond before. */
    (void)state;
    static const struct {
        gint64 latency_ns; /* 0: the default */
        double multiplier;
        gint64 expected_ns;
    } cases[] = {
        {0, 1.0, 2 * SIM_NS_PER_MS},
        {0, 4.0, 8 * SIM_NS_PER_MS},
        {5 * SIM_NS_PER_MS, 1.0, 5 * SIM_NS_PER_MS},
        {5 * SIM_NS_PER_MS, 2.5, 12500 * SIM_NS_PER_US},
        {SIM_NS_PER_MS, 1000.0, SIM_NS_PER_S},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        Fixture fx;
        SyncResult result = {0};
        fixture_init(&fx, 7);
        if (cases[i].latency_ns != 0)
            sim_disk_set_fsync_latency(fx.disk, SIM_DIST_CONST(cases[i].latency_ns));
        sim_disk_set_slow(fx.disk, cases[i].multiplier);
        assert_int_equal(sim_disk_create(fx.disk, "f"), SIM_DISK_OK);
        sim_disk_fsync(fx.disk, "f", record_sync, &result);
        sim_world_run_until(fx.world, cases[i].expected_ns - 1);
        assert_int_equal(result.calls, 0);
        sim_world_run_until(fx.world, cases[i].expected_ns);
        assert_int_equal(result.calls, 1);
        assert_int_equal(result.time_ns, cases[i].expected_ns);
        fixture_clear(&fx);
    }
}

static void
test_sim_disk_traces_operations(void **state)
{
    /* Goal: writes, truncates, errors and fsyncs are traced in order, with the
     * same file id for the same name. */
    Fixture *fx = *state;
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    assert_non_null(out);
    TraceWriter *writer = trace_writer_new(out, sim_world_node_names(fx->world), TRACE_FORMAT_JSONL);
    sim_trace_set_listener(sim_world_trace(fx->world), trace_writer_record, writer);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "abc");
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 1), SIM_DISK_OK);
    sim_disk_set_full(fx->disk, TRUE);
    assert_int_equal(sim_disk_append(fx->disk, "f", "z", 1), SIM_DISK_ENOSPC);
    sync_now(fx, "f");
    sim_trace_set_listener(sim_world_trace(fx->world), NULL, NULL);
    trace_writer_free(writer);
    fclose(out);
    guint32 id = XXH32("f", 1, 0);
    char *expected[] = {
        g_strdup_printf("\"kind\":\"disk_write\",\"node\":\"n0\",\"file\":%u,\"bytes\":3}", id),
        g_strdup_printf("\"kind\":\"disk_truncate\",\"node\":\"n0\",\"file\":%u,\"size\":1}", id),
        g_strdup_printf("\"kind\":\"disk_error\",\"node\":\"n0\",\"file\":%u,\"error\":\"%s\"}",
                        id, sim_disk_status_name(SIM_DISK_ENOSPC)),
        g_strdup_printf("\"kind\":\"disk_fsync\",\"node\":\"n0\",\"file\":%u,\"durable_bytes\":1}",
                        id),
    };
    const char *cursor = text;
    for (gsize i = 0; i < G_N_ELEMENTS(expected); i++) {
        cursor = strstr(cursor, expected[i]);
        assert_non_null(cursor);
        g_free(expected[i]);
    }
    free(text);
}

/* ---- random operations against a reference ---- */

typedef struct {
    GPtrArray *snapshots; /* the reference contents at each fsync call */
    int completions;
    SimDisk *disk;
} RandomRun;

typedef struct {
    RandomRun *run;
    guint snapshot; /* the reference contents the fsync covers */
} SyncCheck;

static void
random_sync_check(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    (void)world;
    (void)ctx;
    SyncCheck *check = arg;
    assert_int_equal(status, SIM_DISK_OK);
    check->run->completions++;
    const GByteArray *covered = g_ptr_array_index(check->run->snapshots, check->snapshot);
    /* With a constant latency fsyncs complete in call order, so the durable
     * size is the size at this fsync's call. */
    assert_int_equal(sim_disk_durable_size(check->run->disk, "f"), covered->len);
    g_free(check);
}

static void
random_step(Fixture *fx, RandomRun *run, GByteArray *reference, SimRng *rng)
{
    guint8 data[700];
    gsize len = (gsize)sim_rng_range(rng, 1, sizeof data);
    for (gsize i = 0; i < len; i++)
        data[i] = (guint8)sim_rng_u32(rng);
    gint64 choice = sim_rng_range(rng, 0, 10);
    if (choice < 4) {
        assert_int_equal(sim_disk_append(fx->disk, "f", data, len), SIM_DISK_OK);
        g_byte_array_append(reference, data, (guint)len);
    } else if (choice < 7) {
        gint64 offset = sim_rng_range(rng, 0, (gint64)reference->len + 50);
        assert_int_equal(sim_disk_write(fx->disk, "f", offset, data, len), SIM_DISK_OK);
        if ((gsize)offset + len > reference->len)
            ref_resize(reference, (gsize)offset + len);
        memcpy(reference->data + offset, data, len);
    } else if (choice < 8) {
        gint64 size = sim_rng_range(rng, 0, (gint64)reference->len + 100);
        assert_int_equal(sim_disk_truncate(fx->disk, "f", size), SIM_DISK_OK);
        ref_resize(reference, (gsize)size);
    } else if (choice < 9) {
        SyncCheck *check = g_new0(SyncCheck, 1);
        check->run = run;
        check->snapshot = run->snapshots->len;
        g_ptr_array_add(run->snapshots, ref_copy(reference));
        sim_disk_fsync(fx->disk, "f", random_sync_check, check);
    } else {
        sim_world_run_until(fx->world, sim_now_ns(fx->world) + sim_rng_range(rng, 0, 3000000));
    }
}

static void
test_sim_disk_random_ops_match_reference(void **state)
{
    /* Goal: random appends, writes, truncates, fsyncs and waits keep the page
     * cache equal to a reference, the durable size equal to the size at each
     * completed fsync's call, and synced contents whole through power loss. */
    (void)state;
    for (guint64 seed = 1; seed <= 30; seed++) {
        Fixture fx;
        fixture_init(&fx, seed);
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test/random");
        g_autoptr(GByteArray) reference = g_byte_array_new();
        RandomRun run = {g_ptr_array_new_with_free_func((GDestroyNotify)g_byte_array_unref), 0,
                         fx.disk};
        assert_int_equal(sim_disk_create(fx.disk, "f"), SIM_DISK_OK);
        for (int step = 0; step < 300; step++) {
            random_step(&fx, &run, reference, rng);
            assert_contents(fx.disk, "f", reference->data, reference->len);
            assert_int_equal(sim_disk_used_bytes(fx.disk), reference->len);
        }
        sim_world_run_until(fx.world, sim_now_ns(fx.world) + SIM_NS_PER_S);
        assert_int_equal(run.completions, (int)run.snapshots->len);
        /* Once all is synced, a power loss must keep exactly the reference. */
        sync_now(&fx, "f");
        sim_node_power_loss(fx.world, fx.node);
        assert_contents(fx.disk, "f", reference->data, reference->len);
        g_ptr_array_unref(run.snapshots);
        fixture_clear(&fx);
    }
}


/* ---- timing ---- */

/* The stall of one append of `len` bytes (charged as `charge`, -1: its own
 * length) to `name`, made now. */
static gint64
timed_append(SimDisk *disk, const char *name, gsize len, gint64 charge)
{
    g_autofree guint8 *bytes = g_malloc0(len);
    sim_disk_call_begin(disk);
    if (charge >= 0)
        sim_disk_charge_next(disk, charge);
    assert_int_equal(sim_disk_append(disk, name, bytes, len), SIM_DISK_OK);
    return sim_disk_call_stall_ns(disk);
}

static gint64
timed_read(SimDisk *disk, const char *name, gint64 offset, gsize len)
{
    sim_disk_call_begin(disk);
    sim_disk_charge_read(disk, name, offset, len);
    return sim_disk_call_stall_ns(disk);
}

static void
test_sim_disk_timing_defaults_cost_nothing(void **state)
{
    /* Goal: with no bandwidth, dirty limit or page-cache bound set, even a
     * slow disk's writes and charged reads return at once. */
    Fixture *fx = *state;
    sim_disk_set_slow(fx->disk, 1000.0);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    for (int i = 0; i < 16; i++)
        assert_int_equal(timed_append(fx->disk, "f", 64 * 1024, 1 << 30), 0);
    assert_int_equal(timed_read(fx->disk, "f", 0, 1024), 0);
    sim_disk_set_bandwidth(fx->disk, 1000);
    assert_int_equal(timed_append(fx->disk, "f", 4096, -1), 0); /* no dirty limit */
    assert_int_equal(timed_read(fx->disk, "f", 0, 4096), 0);     /* unbounded cache */
}

static void
test_sim_disk_writeback_throttles_past_dirty_limit(void **state)
{
    /* Goal: a write waits only for the dirty bytes past the limit, at the
     * bandwidth (divided by the slow-disk factor); writeback drains over
     * time; waits of writes made together end in their order. */
    Fixture *fx = *state;
    sim_disk_set_bandwidth(fx->disk, 1000);
    sim_disk_set_dirty_limit(fx->disk, 1000);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(timed_append(fx->disk, "f", 500, -1), 0);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 500);
    /* 1500 dirty: 500 past the limit at 1000 B/s. */
    assert_int_equal(timed_append(fx->disk, "f", 1000, -1), 500 * SIM_NS_PER_MS);
    /* At the same instant, the next write waits behind it. */
    assert_int_equal(timed_append(fx->disk, "f", 100, -1), 600 * SIM_NS_PER_MS);
    sim_world_run_until(fx->world, SIM_NS_PER_S);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 600);
    assert_int_equal(timed_append(fx->disk, "f", 300, -1), 0);
    /* Four times slower: 250 B/s for what is past the limit. */
    sim_disk_set_slow(fx->disk, 4.0);
    assert_int_equal(timed_append(fx->disk, "f", 200, -1), 400 * SIM_NS_PER_MS);
    sim_world_run_until(fx->world, 2 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 850);
    sim_disk_set_slow(fx->disk, 1.0);
    sim_world_run_until(fx->world, 3 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 0);
}

static void
test_sim_disk_charge_stands_for_larger_data(void **state)
{
    /* Goal: a charged append counts its charge, not its length, and the
     * charge applies to one call only. */
    Fixture *fx = *state;
    sim_disk_set_bandwidth(fx->disk, 1000);
    sim_disk_set_dirty_limit(fx->disk, 1000);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(timed_append(fx->disk, "f", 10, 3000), 2 * SIM_NS_PER_S);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 3000);
    assert_int_equal(timed_append(fx->disk, "f", 10, -1), 2010 * SIM_NS_PER_MS);
    /* A charge left by a failed append does not outlive it. */
    sim_disk_charge_next(fx->disk, 5000);
    assert_int_equal(sim_disk_append(fx->disk, "missing", "x", 1), SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 3010);
}

static void
test_sim_disk_page_cache_misses_cost_reads(void **state)
{
    /* Goal: with a bounded page cache, a read of what is no longer cached
     * costs its bytes at the bandwidth, miss reads queue one after another,
     * what was read is cached again, the least recently used goes first, and
     * a power loss empties the cache. */
    Fixture *fx = *state;
    sim_disk_set_bandwidth(fx->disk, 1024);
    sim_disk_set_page_cache(fx->disk, 2048);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    for (int i = 0; i < 3; i++) /* A, B, C: 1024 bytes each; A is evicted */
        assert_int_equal(timed_append(fx->disk, "f", 1024, -1), 0);
    assert_int_equal(timed_read(fx->disk, "f", 2048, 1024), 0);           /* C: cached */
    assert_int_equal(timed_read(fx->disk, "f", 0, 1024), SIM_NS_PER_S);   /* A: a miss */
    assert_int_equal(timed_read(fx->disk, "f", 0, 1024), 0);              /* A: cached now */
    /* B was the least recently used: reading A evicted it; its miss read
     * queues behind A's. */
    assert_int_equal(timed_read(fx->disk, "f", 1024, 1024), 2 * SIM_NS_PER_S);
    /* Half of a charged read's blocks missing: half its charge is read. */
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_S);
    assert_int_equal(timed_read(fx->disk, "f", 512, 1024), 0); /* A's end, B's start: cached */
    sim_disk_charge_next(fx->disk, 4096);
    assert_int_equal(timed_read(fx->disk, "f", 1536, 1024), 2 * SIM_NS_PER_S); /* C half gone */
}

static void
test_sim_disk_power_loss_empties_page_cache(void **state)
{
    /* Goal: after a power loss nothing is cached or dirty: a read of synced
     * data misses. */
    Fixture *fx = *state;
    sim_disk_set_bandwidth(fx->disk, 1024);
    sim_disk_set_dirty_limit(fx->disk, 1 << 20);
    sim_disk_set_page_cache(fx->disk, 1 << 20);
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    assert_int_equal(timed_append(fx->disk, "f", 1024, -1), 0);
    sync_now(fx, "f");
    assert_int_equal(timed_read(fx->disk, "f", 0, 1024), 0);
    sim_node_power_loss(fx->world, fx->node);
    assert_int_equal(sim_disk_dirty_bytes(fx->disk), 0);
    assert_int_equal(timed_read(fx->disk, "f", 0, 1024), SIM_NS_PER_S);
}

static void
test_sim_disk_io_error_fails_every_change(void **state)
{
    /* Goal: with an I/O error every change fails with EIO and changes
     * nothing, an fsync (even one issued before) completes with EIO and makes
     * nothing durable, reads still see the cache; clearing it heals. */
    Fixture *fx = *state;
    assert_int_equal(sim_disk_create(fx->disk, "f"), SIM_DISK_OK);
    append_text(fx->disk, "f", "abc");
    SyncResult before = {0};
    sim_disk_fsync(fx->disk, "f", record_sync, &before);
    sim_disk_set_io_error(fx->disk, TRUE);
    assert_true(sim_disk_io_error(fx->disk));
    assert_int_equal(sim_disk_create(fx->disk, "g"), SIM_DISK_EIO);
    assert_int_equal(sim_disk_append(fx->disk, "f", "d", 1), SIM_DISK_EIO);
    assert_int_equal(sim_disk_write(fx->disk, "f", 0, "x", 1), SIM_DISK_EIO);
    assert_int_equal(sim_disk_truncate(fx->disk, "f", 0), SIM_DISK_EIO);
    assert_int_equal(sim_disk_rename(fx->disk, "f", "h"), SIM_DISK_EIO);
    assert_int_equal(sim_disk_delete(fx->disk, "f"), SIM_DISK_EIO);
    assert_contents(fx->disk, "f", "abc", 3);
    assert_false(sim_disk_exists(fx->disk, "g"));
    SyncResult after = {0};
    sim_disk_fsync(fx->disk, "f", record_sync, &after);
    sim_world_run_until(fx->world, SIM_NS_PER_S);
    assert_int_equal(before.calls, 1);
    assert_int_equal(before.status, SIM_DISK_EIO);
    assert_int_equal(after.status, SIM_DISK_EIO);
    assert_int_equal(sim_disk_durable_size(fx->disk, "f"), 0);
    sim_disk_set_io_error(fx->disk, FALSE);
    append_text(fx->disk, "f", "d");
    assert_contents(fx->disk, "f", "abcd", 4);
}

static void
test_sim_disk_replace_gives_an_empty_disk(void **state)
{
    /* Goal: a replaced disk has no file and no error, keeps its settings, and
     * an fsync in flight on the old one completes with ENOENT. */
    Fixture *fx = *state;
    sim_disk_set_capacity(fx->disk, 100);
    assert_int_equal(sim_disk_create(fx->disk, "a"), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(fx->disk, "b"), SIM_DISK_OK);
    append_text(fx->disk, "a", "abc");
    SyncResult result = {0};
    sim_disk_fsync(fx->disk, "a", record_sync, &result);
    sim_disk_set_io_error(fx->disk, TRUE);
    sim_disk_replace(fx->disk);
    assert_false(sim_disk_io_error(fx->disk));
    assert_false(sim_disk_exists(fx->disk, "a"));
    assert_false(sim_disk_exists(fx->disk, "b"));
    assert_int_equal(sim_disk_used_bytes(fx->disk), 0);
    sim_world_run_until(fx->world, SIM_NS_PER_S);
    assert_int_equal(result.status, SIM_DISK_ENOENT);
    assert_int_equal(sim_disk_create(fx->disk, "a"), SIM_DISK_OK);
    g_autofree char *big = g_strnfill(101, 'x');
    assert_int_equal(sim_disk_append(fx->disk, "a", big, 101), SIM_DISK_ENOSPC);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_disk_status_names),
        cmocka_unit_test_setup_teardown(test_sim_disk_create_delete_exists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_data_ops_change_page_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_read_bounds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_files_that_never_held_a_byte, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_fsync_durable_after_latency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_fsync_missing_or_deleted_file, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_fsync_follows_rename, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_process_crash_keeps_page_cache, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_crash_drops_inflight_fsync, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_pause_holds_fsync, setup, teardown),
        cmocka_unit_test(test_sim_disk_power_loss_keeps_prefix_or_tears),
        cmocka_unit_test_setup_teardown(test_sim_disk_writeback_expires_old_writes, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_writeback_off_keeps_nothing_unsynced, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_power_loss_keeps_synced_files, setup,
                                        teardown),
        cmocka_unit_test(test_sim_disk_power_loss_is_deterministic),
        cmocka_unit_test_setup_teardown(test_sim_disk_rename_replaces_atomically, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_lookups_follow_the_names, setup, teardown),
        cmocka_unit_test(test_sim_disk_lookups_match_a_reference_as_files_come_and_go),
        cmocka_unit_test_setup_teardown(test_sim_disk_list_sorted_by_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_enospc_changes_nothing_and_heals, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_full_empty_disk_refuses_growth, setup,
                                        teardown),
        cmocka_unit_test(test_sim_disk_slow_disk_multiplies_latency),
        cmocka_unit_test_setup_teardown(test_sim_disk_traces_operations, setup, teardown),
        cmocka_unit_test(test_sim_disk_random_ops_match_reference),
        cmocka_unit_test_setup_teardown(test_sim_disk_timing_defaults_cost_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_writeback_throttles_past_dirty_limit, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_charge_stands_for_larger_data, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_page_cache_misses_cost_reads, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_power_loss_empties_page_cache, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_io_error_fails_every_change, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sim_disk_replace_gives_an_empty_disk, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
