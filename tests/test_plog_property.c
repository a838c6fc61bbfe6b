/*
 * Property test for plog: random sequences of appends (leader and follower,
 * idempotent producers, new leader epochs), reads, truncations, flushes,
 * retention, time passing, process crashes and power losses, from thousands of
 * seeds, each checked against a plain in-memory reference model:
 *
 *  - the model keeps the batches the log must hold, its log start offset and
 *    LEO, the leader-epoch cache it must have, and every batch ever appended;
 *  - after every operation the log's offsets equal the model's, and reads
 *    return exactly the model's batches;
 *  - a process crash keeps everything: the reopened log equals the model;
 *  - a power loss keeps at least every batch below the recovery point the log
 *    reported before it, and what survives is a prefix of the appended
 *    sequence: contiguous intact batches from the log start at their original
 *    offsets. (Only above a truncation point may a batch that the truncation
 *    removed come back, since a truncation is not durable until fsynced; it
 *    must then be a batch once appended at that very offset.) The model then
 *    adopts what survived;
 *  - the producer state always equals one rebuilt from the model's batches.
 *
 * A failure names its seed; rerun one seed with PLOG_PROPERTY_SEED=N (and
 * PLOG_PROPERTY_TRACE=1 to print each operation), or sweep more seeds with
 * PLOG_PROPERTY_SEEDS=N.
 */
#include "config_fixture.h"
#include "plog.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <xxhash.h>

/* Checks that name the failing seed, so it can be replayed. */
#define CHECK(sim, expr)                                                                           \
    do {                                                                                           \
        if (!(expr))                                                                               \
            fail_msg("seed %" G_GUINT64_FORMAT ", line %d: %s", (sim)->seed, __LINE__, #expr);     \
    } while (0)

#define CHECK_EQ(sim, a, b)                                                                        \
    do {                                                                                           \
        gint64 check_a_ = (gint64)(a);                                                             \
        gint64 check_b_ = (gint64)(b);                                                             \
        if (check_a_ != check_b_)                                                                  \
            fail_msg("seed %" G_GUINT64_FORMAT ", line %d: %s = %" G_GINT64_FORMAT                 \
                     " but %s = %" G_GINT64_FORMAT,                                                \
                     (sim)->seed, __LINE__, #a, check_a_, #b, check_b_);                           \
    } while (0)

#define SEEDS 2500
#define OPS_PER_SEED 120
#define PRODUCERS 3

typedef struct {
    gint16 epoch;
    gint32 next_sequence;
} ProducerGen;

typedef struct {
    SimWorld *world;
    SimNodeId node;
    SimDisk *disk;
    SimRng *rng;
    PlogConfig config;
    Plog *log;
    /* the reference model */
    GPtrArray *batches; /* PlogBatch *, the log's batches from its start */
    gint64 log_start;
    gint64 leo;
    PlogEpochCache *epochs;
    PlogProducerState *producer_state; /* rebuilt from `batches` when they shrink */
    GHashTable *ever;                  /* fingerprints of every batch ever appended */
    gint64 taint;                      /* a power loss may bring back removed batches at or above */
    gint32 leader_epoch;
    guint64 next_value;
    ProducerGen producers[PRODUCERS];
    guint64 seed;
    guint power_losses;
    guint crashes;
    guint checkpoints;
    /* The recovery point the log directory's checkpoint holds (-1: none),
     * which the owner writes now and then and, as a broker does
     * (replica_recovery.c), after a truncation that lowered the recovery
     * point: never above the recovery point in memory (checked after every
     * operation), so recovery never trusts what a truncation replaced. */
    gint64 checkpointed;
} Sim;

/* ---- node ---- */

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
    Sim *sim = ctx;
    plog_free(sim->log);
    sim->log = NULL;
}

static void
node_restart_cb(SimWorld *world, void *ctx)
{
    Sim *sim = ctx;
    g_autoptr(GHashTable) recovery_points = plog_recovery_points_read(sim->disk);
    const gint64 *recovery_point =
        recovery_points != NULL ? g_hash_table_lookup(recovery_points, "t-0") : NULL;
    sim->log = plog_open_recovering(world, sim->node, "t", 0, &sim->config,
                                    recovery_point != NULL ? *recovery_point : -1);
}

/* The owner's recovery-point checkpoint of the log. */
static void
owner_checkpoint(Sim *sim)
{
    g_autoptr(GPtrArray) logs = g_ptr_array_new();
    g_ptr_array_add(logs, sim->log);
    CHECK_EQ(sim, plog_recovery_points_write(sim->disk, logs), SIM_DISK_OK);
    sim->checkpointed = plog_recovery_point(sim->log);
    sim->checkpoints++;
}

static const SimNodeOps node_ops = {noop_message, noop_disconnect, node_crash_cb, node_restart_cb};

static void
check_after_event(SimWorld *world, void *user_data)
{
    (void)world;
    Sim *sim = user_data;
    if (sim->log != NULL)
        plog_check_invariants(sim->log);
}

/* ---- model helpers ---- */

static gint64
rand_range(Sim *sim, gint64 lo, gint64 hi_inclusive)
{
    return sim_rng_range(sim->rng, lo, hi_inclusive + 1);
}

static guint64
fingerprint(const PlogBatch *batch)
{
    g_autoptr(GByteArray) bytes = g_byte_array_new();
    plog_batch_encode(batch, bytes);
    return XXH3_64bits(bytes->data, bytes->len);
}

static gint64
now_ms(const Sim *sim)
{
    return sim_now_ns(sim->world) / SIM_NS_PER_MS;
}

/* The index of the model batch holding `offset`. */
static guint
model_batch_for(const Sim *sim, gint64 offset)
{
    guint lo = 0;
    guint hi = sim->batches->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const PlogBatch *batch = g_ptr_array_index(sim->batches, mid);
        if (batch->base_offset <= offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    CHECK(sim, lo >= 1);
    const PlogBatch *batch = g_ptr_array_index(sim->batches, lo - 1);
    CHECK(sim, plog_batch_last_offset(batch) >= offset);
    return lo - 1;
}

static PlogProducerState *
reference_producers(const GPtrArray *batches)
{
    PlogProducerState *state = plog_producer_state_new();
    for (guint i = 0; i < batches->len; i++) {
        const PlogBatch *b = g_ptr_array_index(batches, i);
        if (b->producer_id >= 0)
            plog_producer_state_update(state, b->producer_id, b->producer_epoch, b->base_sequence,
                                       b->record_count, b->base_offset);
    }
    return state;
}

static void
assert_epochs_equal(const Sim *sim, const GArray *a, const GArray *b)
{
    CHECK_EQ(sim, a->len, b->len);
    for (guint i = 0; i < a->len; i++) {
        CHECK_EQ(sim, g_array_index(a, PlogEpochEntry, i).epoch,
                 g_array_index(b, PlogEpochEntry, i).epoch);
        CHECK_EQ(sim, g_array_index(a, PlogEpochEntry, i).start_offset,
                 g_array_index(b, PlogEpochEntry, i).start_offset);
    }
}

static void
check_matches_model(Sim *sim)
{
    plog_check_invariants(sim->log);
    CHECK_EQ(sim, plog_log_start_offset(sim->log), sim->log_start);
    CHECK_EQ(sim, plog_log_end_offset(sim->log), sim->leo);
    assert_epochs_equal(sim, plog_epoch_entries(sim->log), plog_epoch_cache_entries(sim->epochs));
    CHECK(sim, plog_producer_state_equal(plog_producer_state(sim->log), sim->producer_state));
}

/* The model's batches changed other than by an append. */
static void
model_rebuild_producers(Sim *sim)
{
    plog_producer_state_free(sim->producer_state);
    sim->producer_state = reference_producers(sim->batches);
}

/* Every batch of the log, read segment by segment. (transfer full) */
static GPtrArray *
read_whole_log(const Sim *sim)
{
    Plog *log = sim->log;
    GPtrArray *all = plog_batch_array_new();
    gint64 offset = plog_log_start_offset(log);
    while (offset < plog_log_end_offset(log)) {
        guint before = all->len;
        CHECK_EQ(sim, plog_read(log, offset, G_MAXINT64, all), PLOG_READ_OK);
        CHECK(sim, all->len > before);
        const PlogBatch *last = g_ptr_array_index(all, all->len - 1);
        offset = plog_batch_last_offset(last) + 1;
    }
    return all;
}

static void
check_whole_log_equals_model(Sim *sim)
{
    g_autoptr(GPtrArray) all = read_whole_log(sim);
    CHECK_EQ(sim, all->len, sim->batches->len);
    for (guint i = 0; i < all->len; i++)
        CHECK(sim, plog_batch_equal(g_ptr_array_index(all, i), g_ptr_array_index(sim->batches, i)));
}

/* ---- appends ---- */

static PlogBatch *
random_batch(Sim *sim)
{
    PlogBatch *batch = plog_batch_new();
    gint64 records = rand_range(sim, 1, 8);
    for (gint64 i = 0; i < records; i++)
        plog_batch_add_record(batch, (guint64)rand_range(sim, 0, 3), sim->next_value++,
                              (guint32)rand_range(sim, 0, 300));
    /* MAX evaluates its arguments twice: draw first. */
    gint64 max_skew = rand_range(sim, 0, 3);
    gint64 first_skew = rand_range(sim, 0, 5);
    batch->max_timestamp_ms = MAX(0, now_ms(sim) - max_skew);
    batch->first_timestamp_ms = MAX(0, batch->max_timestamp_ms - first_skew);
    batch->leader_epoch = sim->leader_epoch;
    return batch;
}

/* Gives the batch a producer and sequence: mostly the next one, sometimes a
 * retry of an older one, a new epoch, or a fenced old epoch. */
static void
choose_producer(Sim *sim, PlogBatch *batch, gint64 pid)
{
    ProducerGen *gen = &sim->producers[pid];
    batch->producer_id = pid;
    batch->producer_epoch = gen->epoch;
    batch->base_sequence = gen->next_sequence;
    gint64 roll = rand_range(sim, 0, 99);
    if (roll < 10 && gen->next_sequence > 0) {
        batch->base_sequence = (gint32)rand_range(sim, 0, gen->next_sequence - 1);
    } else if (roll < 15) {
        gen->epoch++;
        gen->next_sequence = 0;
        batch->producer_epoch = gen->epoch;
        batch->base_sequence = 0;
    } else if (roll < 18 && gen->epoch > 0) {
        batch->producer_epoch = (gint16)(gen->epoch - 1);
    }
}

static void
model_append(Sim *sim, const PlogBatch *batch)
{
    CHECK_EQ(sim, batch->base_offset, sim->leo);
    g_ptr_array_add(sim->batches, plog_batch_copy(batch));
    sim->leo = plog_batch_last_offset(batch) + 1;
    guint64 key = fingerprint(batch);
    g_hash_table_add(sim->ever, g_memdup2(&key, sizeof key));
    if (batch->leader_epoch >= 0 && batch->leader_epoch > plog_epoch_cache_latest(sim->epochs))
        plog_epoch_cache_assign(sim->epochs, batch->leader_epoch, batch->base_offset);
    if (batch->producer_id >= 0)
        plog_producer_state_update(sim->producer_state, batch->producer_id, batch->producer_epoch,
                                   batch->base_sequence, batch->record_count, batch->base_offset);
}

/* Checks the log's verdict on an idempotent batch against a state rebuilt
 * from the model; TRUE when the batch may be appended. */
static gboolean
producer_admits(Sim *sim, const PlogBatch *batch)
{
    PlogProducerVerdict expected, got;
    plog_producer_state_check(sim->producer_state, batch->producer_id, batch->producer_epoch,
                              batch->base_sequence, batch->record_count, &expected);
    plog_producer_check(sim->log, batch->producer_id, batch->producer_epoch, batch->base_sequence,
                        batch->record_count, &got);
    CHECK_EQ(sim, got.status, expected.status);
    CHECK_EQ(sim, got.duplicate_base_offset, expected.duplicate_base_offset);
    ProducerGen *gen = &sim->producers[batch->producer_id];
    if (got.status == PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE) {
        /* As a real producer would, start over with a new epoch. */
        gen->epoch++;
        gen->next_sequence = 0;
    }
    if (got.status != PLOG_PRODUCER_OK)
        return FALSE;
    if (batch->producer_epoch == gen->epoch && batch->base_sequence == gen->next_sequence)
        gen->next_sequence = plog_sequence_add(batch->base_sequence, batch->record_count);
    return TRUE;
}

static void
op_append(Sim *sim)
{
    g_autoptr(PlogBatch) batch = random_batch(sim);
    if (rand_range(sim, 0, 1) == 0)
        choose_producer(sim, batch, rand_range(sim, 0, PRODUCERS - 1));
    if (batch->producer_id >= 0 && !producer_admits(sim, batch))
        return;
    SimDiskStatus status = SIM_DISK_ENOENT;
    gint64 base_offset;
    if (rand_range(sim, 0, 4) == 0) {
        /* A follower appending the leader's batch, sometimes of a newer epoch. */
        batch->base_offset = sim->leo;
        if (rand_range(sim, 0, 3) == 0)
            batch->leader_epoch = sim->leader_epoch = MAX(sim->leader_epoch, 0) + 1;
        base_offset = plog_append_as_follower(sim->log, batch, now_ms(sim), &status);
    } else {
        base_offset = plog_append(sim->log, batch, now_ms(sim), &status);
    }
    CHECK_EQ(sim, status, SIM_DISK_OK);
    CHECK_EQ(sim, base_offset, sim->leo);
    model_append(sim, batch);
}

static void
op_new_leader_epoch(Sim *sim)
{
    gint32 epoch = MAX(plog_epoch_cache_latest(sim->epochs), sim->leader_epoch);
    epoch = MAX(epoch, 0) + (gint32)rand_range(sim, 0, 2);
    gboolean changed = plog_epoch_assign(sim->log, epoch, sim->leo);
    CHECK_EQ(sim, changed, plog_epoch_cache_assign(sim->epochs, epoch, sim->leo));
    sim->leader_epoch = MAX(sim->leader_epoch, epoch);
}

/* ---- reads ---- */

static void
op_read(Sim *sim)
{
    gint64 lowest = MAX(0, sim->log_start - 2);
    gint64 offset = rand_range(sim, lowest, sim->leo + 2);
    gint64 max_bytes = rand_range(sim, 0, 2000);
    g_autoptr(GPtrArray) out = plog_batch_array_new();
    PlogReadStatus status = plog_read(sim->log, offset, max_bytes, out);
    if (offset < sim->log_start || offset > sim->leo) {
        CHECK_EQ(sim, status, PLOG_READ_OFFSET_OUT_OF_RANGE);
        return;
    }
    CHECK_EQ(sim, status, PLOG_READ_OK);
    if (offset == sim->leo) {
        CHECK_EQ(sim, out->len, 0);
        return;
    }
    /* A read stays within the segment that holds the offset. */
    gint64 segment_end = 0;
    for (guint i = 0; i < plog_segment_count(sim->log); i++) {
        PlogSegmentInfo info;
        plog_segment_info(sim->log, i, &info);
        if (info.base_offset <= offset && offset < info.next_offset)
            segment_end = info.next_offset;
    }
    guint first = model_batch_for(sim, offset);
    gint64 total_bytes = 0;
    guint count = 0;
    for (guint i = first; i < sim->batches->len; i++) {
        const PlogBatch *batch = g_ptr_array_index(sim->batches, i);
        gint64 size_bytes = plog_batch_size_bytes(batch);
        if (batch->base_offset >= segment_end ||
            (count > 0 && total_bytes + size_bytes > max_bytes))
            break;
        CHECK(sim, count < out->len);
        CHECK(sim, plog_batch_equal(g_ptr_array_index(out, count), batch));
        total_bytes += size_bytes;
        count++;
    }
    CHECK_EQ(sim, out->len, count);
}

/* ---- truncation, flush, retention ---- */

static void
model_truncate_fully(Sim *sim, gint64 offset)
{
    g_ptr_array_set_size(sim->batches, 0);
    sim->log_start = sim->leo = offset;
    plog_epoch_cache_clear(sim->epochs);
    /* The old segments were deleted, durably: nothing of them comes back. */
    sim->taint = G_MAXINT64;
    model_rebuild_producers(sim);
}

static void
op_truncate(Sim *sim)
{
    gint64 lowest = MAX(0, sim->log_start - 3);
    gint64 offset = rand_range(sim, lowest, sim->leo + 3);
    gint64 recovery_point = plog_recovery_point(sim->log);
    if (rand_range(sim, 0, 9) == 0) {
        plog_truncate_fully_and_start_at(sim->log, offset);
        if (plog_recovery_point(sim->log) < recovery_point)
            owner_checkpoint(sim);
        model_truncate_fully(sim, offset);
        return;
    }
    gint64 leo = plog_truncate_to(sim->log, offset);
    if (plog_recovery_point(sim->log) < recovery_point)
        owner_checkpoint(sim);
    if (offset >= sim->leo) {
        CHECK_EQ(sim, leo, sim->leo);
    } else if (offset < sim->log_start) {
        CHECK_EQ(sim, leo, offset);
        model_truncate_fully(sim, offset);
    } else {
        guint i = model_batch_for(sim, offset);
        const PlogBatch *cut = g_ptr_array_index(sim->batches, i);
        CHECK_EQ(sim, leo, cut->base_offset);
        g_ptr_array_set_size(sim->batches, i);
        sim->leo = leo;
        sim->taint = MIN(sim->taint, leo);
        plog_epoch_cache_truncate_from_end(sim->epochs, leo);
        model_rebuild_producers(sim);
    }
}

static void
op_flush(Sim *sim)
{
    gint64 rp = plog_recovery_point(sim->log);
    plog_flush(sim->log, rand_range(sim, rp, sim->leo + 1));
}

/* Kafka's retention, computed from the segments before the call. */
static gint64
expected_log_start(Sim *sim, gint64 now)
{
    guint count = plog_segment_count(sim->log);
    g_autofree PlogSegmentInfo *info = g_new(PlogSegmentInfo, count);
    gint64 total_bytes = 0;
    for (guint i = 0; i < count; i++) {
        plog_segment_info(sim->log, i, &info[i]);
        total_bytes += info[i].size_bytes;
    }
    guint n = 0;
    while (sim->config.retention_ms >= 0 && n + 1 < count &&
           now - info[n].max_timestamp_ms > sim->config.retention_ms)
        total_bytes -= info[n++].size_bytes;
    gint64 excess = total_bytes - sim->config.retention_bytes;
    while (sim->config.retention_bytes >= 0 && n + 1 < count && excess - info[n].size_bytes >= 0)
        excess -= info[n++].size_bytes;
    return info[n].base_offset;
}

static void
op_retention(Sim *sim)
{
    gint64 now = now_ms(sim);
    gint64 expected = expected_log_start(sim, now);
    plog_apply_retention(sim->log, now);
    CHECK_EQ(sim, plog_log_start_offset(sim->log), expected);
    guint drop = 0;
    while (drop < sim->batches->len &&
           ((const PlogBatch *)g_ptr_array_index(sim->batches, drop))->base_offset < expected)
        drop++;
    g_ptr_array_remove_range(sim->batches, 0, drop);
    if (sim->batches->len > 0)
        CHECK_EQ(sim, ((const PlogBatch *)g_ptr_array_index(sim->batches, 0))->base_offset,
                 expected);
    sim->log_start = expected;
    if (expected > sim->leo)
        fail_msg("seed %" G_GUINT64_FORMAT ": retention passed the LEO", sim->seed);
    plog_epoch_cache_truncate_from_start(sim->epochs, expected);
    model_rebuild_producers(sim);
}

/* ---- crashes ---- */

static void
op_process_crash(Sim *sim)
{
    gint64 rp = plog_recovery_point(sim->log);
    sim_node_crash(sim->world, sim->node);
    CHECK(sim, sim->log == NULL);
    sim_node_restart(sim->world, sim->node);
    plog_check_files(sim->log);
    check_matches_model(sim);
    check_whole_log_equals_model(sim);
    /* The checkpointed recovery point, never above the one in memory. */
    const PlogRecoveryInfo *info = plog_recovery_info(sim->log);
    CHECK_EQ(sim, info->recovery_point_valid, sim->checkpointed >= 0);
    gint64 expected = CLAMP(MAX(sim->checkpointed, 0), sim->log_start, sim->leo);
    CHECK_EQ(sim, plog_recovery_point(sim->log), expected);
    CHECK(sim, expected <= MAX(rp, sim->log_start));
    sim->crashes++;
}

/* Checks one surviving batch against the model: below the reported recovery
 * point and below any truncation point it must be the model's; above a
 * truncation point it may also be one once appended at that offset. */
static void
check_survivor(Sim *sim, const PlogBatch *batch, guint i, gint64 durable)
{
    gboolean in_model =
        i < sim->batches->len && plog_batch_equal(batch, g_ptr_array_index(sim->batches, i));
    if (batch->base_offset < durable || batch->base_offset < sim->taint) {
        if (!in_model)
            fail_msg("seed %" G_GUINT64_FORMAT ": batch at %" G_GINT64_FORMAT
                     " is not the one appended there",
                     sim->seed, batch->base_offset);
        return;
    }
    guint64 key = fingerprint(batch);
    CHECK(sim, in_model || g_hash_table_contains(sim->ever, &key));
}

/* The recovered epoch cache holds only entries the model had or that the
 * surviving batches' epochs give. */
static void
check_recovered_epochs(Sim *sim, const GPtrArray *survivors)
{
    g_autoptr(PlogEpochCache) from_batches = plog_epoch_cache_new();
    for (guint i = 0; i < survivors->len; i++) {
        const PlogBatch *b = g_ptr_array_index(survivors, i);
        if (b->leader_epoch > plog_epoch_cache_latest(from_batches))
            plog_epoch_cache_assign(from_batches, b->leader_epoch, b->base_offset);
    }
    const GArray *got = plog_epoch_entries(sim->log);
    const GArray *sources[] = {plog_epoch_cache_entries(sim->epochs),
                               plog_epoch_cache_entries(from_batches)};
    for (guint i = 0; i < got->len; i++) {
        const PlogEpochEntry *entry = &g_array_index(got, PlogEpochEntry, i);
        gboolean known = FALSE;
        for (guint s = 0; s < G_N_ELEMENTS(sources); s++) {
            for (guint j = 0; j < sources[s]->len; j++) {
                const PlogEpochEntry *e = &g_array_index(sources[s], PlogEpochEntry, j);
                known = known || (e->epoch == entry->epoch &&
                                  (e->start_offset == entry->start_offset ||
                                   entry->start_offset == plog_log_start_offset(sim->log)));
            }
        }
        CHECK(sim, known);
    }
}

static void
model_adopt(Sim *sim, GPtrArray *survivors)
{
    g_ptr_array_set_size(sim->batches, 0);
    for (guint i = 0; i < survivors->len; i++)
        g_ptr_array_add(sim->batches, plog_batch_copy(g_ptr_array_index(survivors, i)));
    sim->leo = plog_log_end_offset(sim->log);
    /* What survived is durable now; but a cut of stale data where a newer
     * segment began is itself a truncation, and until it is fsynced another
     * power loss may bring that data back. (A torn tail's cut only ever
     * brings back the same garbage, which is cut again.) */
    sim->taint = plog_recovery_info(sim->log)->overlaps_cut > 0 ? sim->leo : G_MAXINT64;
    plog_epoch_cache_clear(sim->epochs);
    const GArray *entries = plog_epoch_entries(sim->log);
    for (guint i = 0; i < entries->len; i++) {
        const PlogEpochEntry *e = &g_array_index(entries, PlogEpochEntry, i);
        plog_epoch_cache_assign(sim->epochs, e->epoch, e->start_offset);
    }
    model_rebuild_producers(sim);
}

static void
trace_batches(const char *what, const GPtrArray *batches)
{
    fprintf(stderr, "  %s:", what);
    for (guint i = 0; i < batches->len; i++) {
        const PlogBatch *b = g_ptr_array_index(batches, i);
        fprintf(stderr, " %" G_GINT64_FORMAT "+%d", b->base_offset, b->record_count);
    }
    fprintf(stderr, "\n");
}

static void
trace_power_loss(const Sim *sim, const GPtrArray *survivors, gint64 durable)
{
    const PlogRecoveryInfo *info = plog_recovery_info(sim->log);
    fprintf(stderr,
            "  power loss: durable %" G_GINT64_FORMAT " taint %" G_GINT64_FORMAT
            " cut %d deleted %u overlaps %u\n",
            durable, sim->taint, info->cut, info->segments_deleted, info->overlaps_cut);
    trace_batches("model", sim->batches);
    trace_batches("survivors", survivors);
}

static void
op_power_loss(Sim *sim)
{
    gint64 durable = plog_recovery_point(sim->log);
    sim_node_power_loss(sim->world, sim->node);
    sim_node_restart(sim->world, sim->node);
    plog_check_files(sim->log);
    CHECK_EQ(sim, plog_log_start_offset(sim->log), sim->log_start);
    if (plog_log_end_offset(sim->log) < durable && g_getenv("PLOG_PROPERTY_TRACE") != NULL) {
        g_autoptr(GPtrArray) partial = read_whole_log(sim);
        trace_power_loss(sim, partial, durable);
    }
    if (plog_log_end_offset(sim->log) < durable)
        fail_msg("seed %" G_GUINT64_FORMAT ": lost flushed data: LEO %" G_GINT64_FORMAT
                 " < recovery point %" G_GINT64_FORMAT,
                 sim->seed, plog_log_end_offset(sim->log), durable);
    g_autoptr(GPtrArray) survivors = read_whole_log(sim);
    if (g_getenv("PLOG_PROPERTY_TRACE") != NULL)
        trace_power_loss(sim, survivors, durable);
    gint64 expected_offset = sim->log_start;
    for (guint i = 0; i < survivors->len; i++) {
        const PlogBatch *batch = g_ptr_array_index(survivors, i);
        CHECK_EQ(sim, batch->base_offset, expected_offset);
        check_survivor(sim, batch, i, durable);
        expected_offset = plog_batch_last_offset(batch) + 1;
    }
    CHECK_EQ(sim, expected_offset, plog_log_end_offset(sim->log));
    check_recovered_epochs(sim, survivors);
    model_adopt(sim, survivors);
    check_matches_model(sim);
    /* The checkpoint survives whole, or (its fsync pending) reads as none. */
    const PlogRecoveryInfo *info = plog_recovery_info(sim->log);
    if (info->recovery_point_valid)
        CHECK_EQ(sim, info->recovery_point_read, sim->checkpointed);
    sim->checkpointed = info->recovery_point_valid ? info->recovery_point_read : -1;
    sim->power_losses++;
}

/* ---- driver ---- */

static void
random_config(Sim *sim)
{
    PlogConfig *c = &sim->config;
    kconfig_bind_log_defaults(c);
    static const gint64 segment_bytes[] = {200, 700, 1500, 4000, 1 << 30};
    static const gint64 index_interval_bytes[] = {0, 100, 500, 4096};
    c->segment_bytes = segment_bytes[rand_range(sim, 0, G_N_ELEMENTS(segment_bytes) - 1)];
    c->index_interval_bytes =
        index_interval_bytes[rand_range(sim, 0, G_N_ELEMENTS(index_interval_bytes) - 1)];
    if (rand_range(sim, 0, 3) == 0)
        c->roll_ms = rand_range(sim, 5, 100);
    c->retention_ms = rand_range(sim, 0, 2) == 0 ? rand_range(sim, 10, 200) : -1;
    c->retention_bytes = rand_range(sim, 0, 2) == 0 ? rand_range(sim, 0, 5000) : -1;
    if (rand_range(sim, 0, 3) == 0)
        c->flush_interval_messages = rand_range(sim, 1, 40);
    if (rand_range(sim, 0, 3) == 0)
        c->flush_interval_ms = rand_range(sim, 1, 50);
}

static void
sim_init(Sim *sim, guint64 seed)
{
    memset(sim, 0, sizeof *sim);
    sim->seed = seed;
    sim->world = sim_world_new(seed);
    sim->rng = sim_rng_new(seed, "test/plog");
    sim->node = sim_node_add(sim->world, "b0", &node_ops, sim);
    sim->disk = sim_node_disk(sim->world, sim->node);
    SimDist latency = {SIM_DIST_UNIFORM, 0.5 * SIM_NS_PER_MS, 8.0 * SIM_NS_PER_MS};
    sim_disk_set_fsync_latency(sim->disk, latency);
    random_config(sim);
    sim->batches = plog_batch_array_new();
    sim->epochs = plog_epoch_cache_new();
    sim->producer_state = plog_producer_state_new();
    sim->ever = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    sim->taint = G_MAXINT64;
    sim->leader_epoch = PLOG_NO_LEADER_EPOCH;
    sim->next_value = seed << 20;
    sim->checkpointed = -1;
    sim_world_set_after_event(sim->world, check_after_event, sim);
    sim->log = plog_open(sim->world, sim->node, "t", 0, &sim->config);
}

static void
sim_clear(Sim *sim)
{
    plog_free(sim->log);
    sim_world_free(sim->world);
    sim_rng_free(sim->rng);
    g_ptr_array_unref(sim->batches);
    plog_epoch_cache_free(sim->epochs);
    plog_producer_state_free(sim->producer_state);
    g_hash_table_destroy(sim->ever);
}

static void
run_one_op(Sim *sim)
{
    gint64 roll = rand_range(sim, 0, 99);
    if (g_getenv("PLOG_PROPERTY_TRACE") != NULL) {
        fprintf(stderr,
                "op %2" G_GINT64_FORMAT " t=%" G_GINT64_FORMAT "ms start=%" G_GINT64_FORMAT
                " leo=%" G_GINT64_FORMAT " rp=%" G_GINT64_FORMAT " segments=%u\n",
                roll, now_ms(sim), sim->log_start, sim->leo, plog_recovery_point(sim->log),
                plog_segment_count(sim->log));
    }
    if (roll < 45)
        op_append(sim);
    else if (roll < 58)
        op_read(sim);
    else if (roll < 63)
        op_truncate(sim);
    else if (roll < 68)
        op_flush(sim);
    else if (roll < 82) {
        sim_world_run_until(sim->world,
                            sim_now_ns(sim->world) + rand_range(sim, 0, 30) * SIM_NS_PER_MS);
        if (rand_range(sim, 0, 2) == 0)
            owner_checkpoint(sim);
    }
    else if (roll < 87)
        op_retention(sim);
    else if (roll < 90)
        op_new_leader_epoch(sim);
    else if (roll < 95)
        op_process_crash(sim);
    else
        op_power_loss(sim);
    check_matches_model(sim);
}

static void
run_seed(guint64 seed, guint *power_losses, guint *crashes, guint *checkpoints)
{
    Sim sim;
    sim_init(&sim, seed);
    for (int i = 0; i < OPS_PER_SEED; i++) {
        run_one_op(&sim);
        if (sim.checkpointed >= 0)
            CHECK(&sim, sim.checkpointed <= plog_recovery_point(sim.log));
    }
    plog_check_files(sim.log);
    check_whole_log_equals_model(&sim);
    *power_losses += sim.power_losses;
    *crashes += sim.crashes;
    *checkpoints += sim.checkpoints;
    sim_clear(&sim);
}

static void
test_plog_random_ops_match_reference(void **state)
{
    /* Goal: from thousands of seeds, every operation sequence keeps the log
     * equal to the model, and crashes lose only what the model allows. */
    (void)state;
    const char *only = g_getenv("PLOG_PROPERTY_SEED");
    const char *seeds = g_getenv("PLOG_PROPERTY_SEEDS");
    guint64 first = only != NULL ? g_ascii_strtoull(only, NULL, 10) : 1;
    guint64 last = only != NULL ? first : SEEDS;
    if (only == NULL && seeds != NULL)
        last = g_ascii_strtoull(seeds, NULL, 10);
    guint power_losses = 0;
    guint crashes = 0;
    guint checkpoints = 0;
    for (guint64 seed = first; seed <= last; seed++) {
        if (seed % 100 == 0 || only != NULL)
            print_message("seed %" G_GUINT64_FORMAT "\r", seed);
        run_seed(seed, &power_losses, &crashes, &checkpoints);
    }
    print_message("%" G_GUINT64_FORMAT " seeds: %u crashes, %u power losses, %u checkpoints\n",
                  last - first + 1, crashes, power_losses, checkpoints);
    if (only == NULL) {
        assert_true(power_losses > last - first);
        assert_true(checkpoints > last - first);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plog_random_ops_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
