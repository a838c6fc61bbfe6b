/*
 * The determinism test: a randomized toy workload (five nodes pinging random
 * peers, replying, appending to and fsyncing their disks) under random faults
 * (partitions, one-way cuts, isolation, heals, crashes, power losses, pauses,
 * message loss, delay and duplication), run twice for each of many seeds. The
 * same seed must give the same trace fingerprint; different seeds must give
 * different fingerprints. The workload and the faults draw from separate
 * streams, as models and fault injectors do.
 */
#include "sim_world.h"

#include "sim_disk.h"
#include "sim_net.h"
#include "trace_writer.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>
#include <glib/gstdio.h>

enum { TOY_NODES = 5, SEEDS = 200 };

#define RUN_NS (2 * SIM_NS_PER_S)
#define TICK_MEAN_NS (3 * SIM_NS_PER_MS)
#define FAULT_MEAN_NS (40 * SIM_NS_PER_MS)

enum { PING = 1, PONG = 2 };

typedef enum {
    FAULT_PARTITION,
    FAULT_HEAL,
    FAULT_CRASH,
    FAULT_POWER_LOSS,
    FAULT_PAUSE,
    FAULT_ISOLATE,
    FAULT_CUT_ONE_WAY,
    FAULT_LOSE,
    FAULT_DELAY,
    FAULT_DUPLICATE,
    FAULT_LOSS_RATIO,
    FAULT_KINDS,
} ToyFault;

typedef struct {
    SimMsg header;
    guint64 payload;
} ToyMsg;

/* A node's memory: lost on crash, rebuilt from the disk on restart. */
typedef struct {
    guint64 ticks;
    guint64 pongs;
    guint64 syncs;
    gint64 log_bytes_at_start;
} ToyState;

typedef struct Toy Toy;

typedef struct {
    Toy *toy;
    SimNodeId id;
    SimRng *rng; /* the node's workload stream, owned by the world */
    ToyState *state;
} ToyNode;

/* Totals over a run, to show the workload and the faults really happened. */
typedef struct {
    guint64 fingerprint;
    guint64 records;
    guint64 delivered;
    guint64 dropped;
    guint64 syncs;
    guint64 disconnects;
    guint64 faults[FAULT_KINDS];
} ToyResult;

struct Toy {
    SimWorld *world;
    SimRng *faults;
    ToyNode nodes[TOY_NODES];
    ToyResult result;
};

/* ---- the workload ---- */

static void toy_tick(SimWorld *world, void *ctx, void *arg);

static void
toy_schedule_tick(ToyNode *node)
{
    gint64 delay_ns = (gint64)sim_rng_exponential(node->rng, (double)TICK_MEAN_NS);
    sim_timer_set(node->toy->world, node->id, delay_ns, toy_tick, NULL);
}

static void
toy_send(ToyNode *node, SimNodeId to, guint32 type, guint64 payload)
{
    ToyMsg *msg = g_new0(ToyMsg, 1);
    msg->header.type = type;
    msg->header.size_bytes = (guint32)sim_rng_range(node->rng, 64, 4096);
    msg->header.size_of = sizeof(ToyMsg);
    msg->payload = payload;
    sim_net_send(sim_world_net(node->toy->world), node->id, to, &msg->header);
}

static void
toy_synced(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    ToyNode *node = ctx;
    (void)world;
    (void)arg;
    assert_int_equal(status, SIM_DISK_OK);
    node->state->syncs++;
    node->toy->result.syncs++;
}

static void
toy_tick(SimWorld *world, void *ctx, void *arg)
{
    ToyNode *node = ctx;
    (void)arg;
    ToyState *state = node->state;
    state->ticks++;
    SimNodeId to = (SimNodeId)sim_rng_range(node->rng, 0, TOY_NODES - 1);
    if (to >= node->id)
        to++;
    toy_send(node, to, PING, state->ticks);
    SimDisk *disk = sim_node_disk(world, node->id);
    if (state->ticks % 3 == 0) {
        guint64 record[2] = {state->ticks, (guint64)sim_now_ns(world)};
        sim_disk_append(disk, "log", record, sizeof record);
    }
    if (state->ticks % 5 == 0)
        sim_disk_fsync(disk, "log", toy_synced, NULL);
    toy_schedule_tick(node);
}

static void
toy_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    ToyNode *node = ctx;
    ToyMsg *toy_msg = (ToyMsg *)msg;
    assert_non_null(node->state);
    if (msg->type == PING)
        toy_send(node, from, PONG, toy_msg->payload);
    else
        node->state->pongs++;
    sim_trace_add(sim_world_trace(world), sim_now_ns(world), SIM_TRACE_MODEL, node->id, from,
                  msg->type, node->state->pongs, NULL);
    sim_msg_free(msg);
}

static void
toy_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    ToyNode *node = ctx;
    (void)world;
    (void)peer;
    (void)reason;
    node->toy->result.disconnects++;
}

static void
toy_crash(SimWorld *world, void *ctx)
{
    ToyNode *node = ctx;
    (void)world;
    g_clear_pointer(&node->state, g_free);
}

static void
toy_start(ToyNode *node)
{
    assert_null(node->state);
    node->state = g_new0(ToyState, 1);
    SimDisk *disk = sim_node_disk(node->toy->world, node->id);
    if (!sim_disk_exists(disk, "log"))
        sim_disk_create(disk, "log");
    node->state->log_bytes_at_start = sim_disk_size(disk, "log");
    toy_schedule_tick(node);
}

static void
toy_restart(SimWorld *world, void *ctx)
{
    (void)world;
    toy_start(ctx);
}

static const SimNodeOps toy_ops = {toy_message, toy_disconnect, toy_crash, toy_restart};

/* ---- the faults ---- */

static void
toy_restart_event(void *ctx, void *arg, guint64 node)
{
    Toy *toy = ctx;
    (void)arg;
    sim_node_restart(toy->world, (SimNodeId)node);
}

static void
toy_resume_event(void *ctx, void *arg, guint64 node)
{
    Toy *toy = ctx;
    (void)arg;
    sim_node_resume(toy->world, (SimNodeId)node);
}

static SimNodeId
toy_random_node(Toy *toy)
{
    return (SimNodeId)sim_rng_range(toy->faults, 0, TOY_NODES);
}

static void
toy_later(Toy *toy, SimEventFn fn, SimNodeId node, gint64 min_ns, gint64 max_ns)
{
    gint64 at_ns = sim_now_ns(toy->world) + sim_rng_range(toy->faults, min_ns, max_ns);
    sim_world_schedule(toy->world, at_ns, fn, NULL, toy, NULL, node);
}

static void
toy_partition(Toy *toy)
{
    guint groups[TOY_NODES];
    for (guint i = 0; i < TOY_NODES; i++)
        groups[i] = (guint)sim_rng_range(toy->faults, 0, 2);
    sim_net_partition(sim_world_net(toy->world), groups, TOY_NODES);
}

/* Injects one fault on the world's two nodes `a` and `b` (distinct). */
static void
toy_inject(Toy *toy, ToyFault fault, SimNodeId a, SimNodeId b)
{
    SimNet *net = sim_world_net(toy->world);
    switch (fault) {
    case FAULT_PARTITION:
        toy_partition(toy);
        break;
    case FAULT_HEAL:
        sim_net_heal(net);
        break;
    case FAULT_CRASH:
    case FAULT_POWER_LOSS:
        if (fault == FAULT_CRASH)
            sim_node_crash(toy->world, a);
        else
            sim_node_power_loss(toy->world, a);
        toy_later(toy, toy_restart_event, a, 10 * SIM_NS_PER_MS, 100 * SIM_NS_PER_MS);
        break;
    case FAULT_PAUSE:
        sim_node_pause(toy->world, a);
        toy_later(toy, toy_resume_event, a, 1 * SIM_NS_PER_MS, 50 * SIM_NS_PER_MS);
        break;
    case FAULT_ISOLATE:
        sim_net_isolate(net, a);
        break;
    case FAULT_CUT_ONE_WAY:
        sim_net_cut_one_way(net, a, b);
        break;
    case FAULT_LOSE:
        sim_net_lose_next(net, a, b, (guint)sim_rng_range(toy->faults, 1, 4));
        break;
    case FAULT_DELAY:
        sim_net_delay_next(net, a, b, 2, sim_rng_range(toy->faults, 1, 20) * SIM_NS_PER_MS);
        break;
    case FAULT_DUPLICATE:
        sim_net_duplicate_next(net, a, b, 2);
        break;
    case FAULT_LOSS_RATIO:
        sim_net_set_loss(net, a, b, 1, 10);
        break;
    case FAULT_KINDS:
        fail_msg("not a fault");
    }
}

static void
toy_fault_event(void *ctx, void *arg, guint64 arg_u64)
{
    Toy *toy = ctx;
    (void)arg;
    (void)arg_u64;
    ToyFault fault = (ToyFault)sim_rng_range(toy->faults, 0, FAULT_KINDS);
    SimNodeId a = toy_random_node(toy);
    SimNodeId b = (SimNodeId)sim_rng_range(toy->faults, 0, TOY_NODES - 1);
    if (b >= a)
        b++;
    toy_inject(toy, fault, a, b);
    toy->result.faults[fault]++;
    gint64 next_ns = (gint64)sim_rng_exponential(toy->faults, (double)FAULT_MEAN_NS);
    sim_world_schedule(toy->world, sim_now_ns(toy->world) + next_ns, toy_fault_event, NULL, toy,
                       NULL, 0);
}

/* ---- a run ---- */

static void
toy_check_invariants(SimWorld *world, void *user_data)
{
    (void)user_data;
    sim_net_check_invariants(sim_world_net(world));
}

static void
toy_run(guint64 seed, FILE *jsonl, ToyResult *out)
{
    Toy toy = {0};
    toy.world = sim_world_new(seed);
    toy.faults = sim_world_rng(toy.world, "toy/faults");
    SimDist latency = {SIM_DIST_LOGNORMAL, 200.0 * SIM_NS_PER_US, 0.5};
    sim_net_set_default_link(sim_world_net(toy.world), latency, 100 * 1000 * 1000);
    for (SimNodeId i = 0; i < TOY_NODES; i++) {
        g_autofree char *name = g_strdup_printf("toy%u", i);
        g_autofree char *stream = g_strdup_printf("toy/node/%u", i);
        toy.nodes[i] = (ToyNode){&toy, i, sim_world_rng(toy.world, stream), NULL};
        sim_node_add(toy.world, name, &toy_ops, &toy.nodes[i]);
        SimDist fsync = {SIM_DIST_UNIFORM, 1.0 * SIM_NS_PER_MS, 5.0 * SIM_NS_PER_MS};
        sim_disk_set_fsync_latency(sim_node_disk(toy.world, i), fsync);
    }
    g_autoptr(TraceWriter) writer = NULL;
    if (jsonl != NULL) {
        writer = trace_writer_new(jsonl, sim_world_node_names(toy.world), TRACE_FORMAT_JSONL);
        sim_trace_set_listener(sim_world_trace(toy.world), trace_writer_record, writer);
    }
    sim_world_set_after_event(toy.world, toy_check_invariants, NULL);
    for (SimNodeId i = 0; i < TOY_NODES; i++)
        toy_start(&toy.nodes[i]);
    sim_world_schedule(toy.world, 0, toy_fault_event, NULL, &toy, NULL, 0);
    sim_world_run_until(toy.world, RUN_NS);
    for (SimNodeId i = 0; i < TOY_NODES; i++)
        sim_disk_check_invariants(sim_node_disk(toy.world, i));
    SimNet *net = sim_world_net(toy.world);
    toy.result.fingerprint = sim_trace_fingerprint(sim_world_trace(toy.world));
    toy.result.records = sim_trace_count(sim_world_trace(toy.world));
    toy.result.delivered = sim_net_messages_delivered(net);
    toy.result.dropped = sim_net_messages_dropped(net);
    sim_world_free(toy.world);
    for (SimNodeId i = 0; i < TOY_NODES; i++)
        g_free(toy.nodes[i].state);
    *out = toy.result;
}

/* ---- tests ---- */

static int
compare_u64(gconstpointer a, gconstpointer b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
    return (x > y) - (x < y);
}

static void
test_determinism_same_seed_same_fingerprint(void **state)
{
    /* Goal: for each of many seeds, two runs of the faulty toy workload give
     * the same fingerprint, and all the seeds' fingerprints differ. */
    (void)state;
    guint64 fingerprints[SEEDS];
    ToyResult total = {0};
    for (guint64 seed = 0; seed < SEEDS; seed++) {
        ToyResult first, second;
        toy_run(seed, NULL, &first);
        toy_run(seed, NULL, &second);
        if (first.fingerprint != second.fingerprint || first.records != second.records)
            fail_msg("seed %" G_GUINT64_FORMAT ": runs diverged (%016" G_GINT64_MODIFIER
                     "x, %" G_GUINT64_FORMAT " records vs %016" G_GINT64_MODIFIER
                     "x, %" G_GUINT64_FORMAT " records)",
                     seed, first.fingerprint, first.records, second.fingerprint, second.records);
        assert_memory_equal(&first, &second, sizeof first);
        assert_true(first.records > 1000);
        fingerprints[seed] = first.fingerprint;
        total.delivered += first.delivered;
        total.dropped += first.dropped;
        total.syncs += first.syncs;
        total.disconnects += first.disconnects;
        for (guint k = 0; k < FAULT_KINDS; k++)
            total.faults[k] += first.faults[k];
    }
    qsort(fingerprints, SEEDS, sizeof fingerprints[0], compare_u64);
    for (guint i = 1; i < SEEDS; i++)
        assert_true(fingerprints[i] != fingerprints[i - 1]);
    /* The workload did what it claims, so the test can catch divergence in
     * each of these paths. */
    assert_true(total.delivered > 100000);
    assert_true(total.dropped > 1000);
    assert_true(total.syncs > 1000);
    assert_true(total.disconnects > 100);
    for (guint k = 0; k < FAULT_KINDS; k++)
        assert_true(total.faults[k] > 50);
}

static void
test_determinism_jsonl_does_not_change_fingerprint(void **state)
{
    /* Goal: writing the full trace as JSON Lines leaves the fingerprint as it
     * is without it, and writes one line per record. */
    (void)state;
    g_autofree char *path = NULL;
    int fd = g_file_open_tmp("ksim-determinism-XXXXXX.jsonl", &path, NULL);
    assert_true(fd >= 0);
    FILE *out = fdopen(fd, "w");
    assert_non_null(out);
    ToyResult plain, written;
    toy_run(7, NULL, &plain);
    toy_run(7, out, &written);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(plain.fingerprint, written.fingerprint);
    g_autofree char *text = NULL;
    gsize length = 0;
    assert_true(g_file_get_contents(path, &text, &length, NULL));
    guint64 lines = 0;
    for (gsize i = 0; i < length; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines, written.records);
    g_unlink(path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_determinism_same_seed_same_fingerprint),
        cmocka_unit_test(test_determinism_jsonl_does_not_change_fingerprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
