/*
 * runner: builds a world from a scenario variant, injects its faults, runs the
 * fault phase and the liveness phase, and collects the result (see runner.h).
 *
 * Invariants:
 *  1. Every fault that starts opens a window; heal_everything closes every
 *     window still open, so at the end every window has start <= end.
 *  2. At most `concurrent_max` random faults are active at once.
 *  3. After the fault phase no fault starts: timeline faults lie within the
 *     duration (the parser checks it), the random generator stops itself, and
 *     undo events that come late find nothing to undo.
 */
#include "runner.h"

#include "cluster.h"
#include "kconfig.h"
#include "kconfig_bind.h"
#include "runner_clients.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"
#include "trace_writer.h"

#include <string.h>

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    const ScenarioVariant *variant;
    RunnerClients *clients;
    SimRng *rng;
    GArray *windows;       /* RunnerFaultWindow */
    GArray *random_faults; /* RunnerRandomFault */
    guint random_active;
    gboolean fault_phase_over;
    /* Swarm testing ([random-faults] swarm = true): the kinds this seed
     * draws from and its interval scale in quarters; else the spec's, 4. */
    GArray *swarm_kinds;
    guint interval_quarters;
} Run;

/* What an undo event must do when a fault's duration ends. */
typedef struct {
    Run *run;
    ScenarioAction action;
    GArray *nodes;         /* SimNodeId the fault hit */
    GArray *cuts;          /* pairs of SimNodeId cut (from, to) */
    GArray *impairs;       /* guint64 ids of the link impairments begun */
    gint64 clock_step_ns;  /* clock: the step each node's wall clock took */
    guint window;          /* index in run->windows */
    gint32 broker;         /* the one broker the fault hit, or -1 */
    gboolean random;
} Undo;

/* ---- fault windows and history notes ---- */

static guint
window_open(Run *run, const char *label, gint32 broker)
{
    RunnerFaultWindow window = {sim_now_ns(run->world), -1, g_strdup(label), broker};
    g_array_append_val(run->windows, window);
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(run->world);
    event.kind = HISTORY_EVENT_FAULT;
    event.broker = broker;
    event.partition = -1;
    event.text = g_strdup_printf("%.3f s: fault began: %s", event.time_ns / 1e9, label);
    history_event(run->history, &event);
    g_free(event.text);
    return run->windows->len - 1;
}

static void
window_close(Run *run, guint index)
{
    RunnerFaultWindow *window = &g_array_index(run->windows, RunnerFaultWindow, index);
    if (window->end_ns >= 0)
        return;
    window->end_ns = sim_now_ns(run->world);
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(run->world);
    event.kind = HISTORY_EVENT_FAULT;
    event.broker = window->broker;
    event.partition = -1;
    event.text = g_strdup_printf("%.3f s: fault ended: %s", event.time_ns / 1e9, window->label);
    history_event(run->history, &event);
    g_free(event.text);
}

/* ---- targets ---- */

static gint32
broker_of_node(const Run *run, SimNodeId node)
{
    for (guint id = 1; id <= cluster_broker_count(run->cluster); id++) {
        if (broker_node(cluster_broker(run->cluster, (gint32)id)) == node)
            return (gint32)id;
    }
    return -1;
}

static gint32
random_live_broker(Run *run)
{
    g_autoptr(GArray) live = g_array_new(FALSE, FALSE, sizeof(gint32));
    for (guint id = 1; id <= cluster_broker_count(run->cluster); id++) {
        if (sim_node_state(run->world, broker_node(cluster_broker(run->cluster, (gint32)id))) ==
            SIM_NODE_UP)
            g_array_append_val(live, id);
    }
    if (live->len == 0)
        return -1;
    return g_array_index(live, gint32, sim_rng_range(run->rng, 0, live->len));
}

/* rack:NAME: every broker in the rack, by id. */
static void
resolve_rack(Run *run, const char *rack, GArray *nodes, GString *describe)
{
    g_string_append_printf(describe, "rack %s (", rack);
    guint before = nodes->len;
    for (guint id = 1; id <= cluster_broker_count(run->cluster); id++) {
        const char *own = cluster_broker_rack(run->cluster, (gint32)id);
        if (own == NULL || strcmp(own, rack) != 0)
            continue;
        SimNodeId node = broker_node(cluster_broker(run->cluster, (gint32)id));
        g_string_append_printf(describe, "%sbroker-%u", nodes->len > before ? " " : "", id);
        g_array_append_val(nodes, node);
    }
    g_string_append_c(describe, ')');
}

/* Resolves a target to nodes when the fault fires; `describe` gets a name. */
static void
resolve(Run *run, const ScenarioTarget *target, GArray *nodes, GString *describe)
{
    gint32 broker = -1;
    switch (target->kind) {
    case SCENARIO_TARGET_NONE:
        return;
    case SCENARIO_TARGET_BROKER:
        broker = (gint32)target->broker;
        break;
    case SCENARIO_TARGET_LEADER:
        broker = cluster_leader(run->cluster, target->topic, (gint32)target->partition);
        break;
    case SCENARIO_TARGET_FOLLOWER:
        broker = cluster_follower_nth(run->cluster, target->topic, (gint32)target->partition,
                                      MAX(target->nth, 1));
        break;
    case SCENARIO_TARGET_REPLICA:
        broker = (gint32)target->broker; /* the parser checked it holds a replica */
        break;
    case SCENARIO_TARGET_RACK:
        resolve_rack(run, target->rack, nodes, describe);
        return;
    case SCENARIO_TARGET_CONTROLLER:
        if (cluster_kraft(run->cluster)) {
            /* KRaft: the active controller, a node of its own. */
            SimNodeId node = cluster_active_controller_node(run->cluster);
            if (node == SIM_NODE_NONE) {
                g_string_append(describe, "controller (nobody: no active controller)");
                return;
            }
            g_array_append_val(nodes, node);
            g_string_append_printf(describe, "%s (controller)", sim_node_name(run->world, node));
            return;
        }
        broker = cluster_controller(run->cluster);
        break;
    case SCENARIO_TARGET_RANDOM:
        broker = random_live_broker(run);
        break;
    case SCENARIO_TARGET_CONTROLLER_NODE:
    case SCENARIO_TARGET_QUORUM_FOLLOWER: {
        SimNodeId node = target->kind == SCENARIO_TARGET_CONTROLLER_NODE
                             ? cluster_controller_node(run->cluster, (gint32)target->broker)
                             : cluster_quorum_follower_node(run->cluster);
        if (node == SIM_NODE_NONE) {
            g_string_append(describe, "quorum-follower (nobody: no running follower)");
            return;
        }
        g_array_append_val(nodes, node);
        if (target->kind == SCENARIO_TARGET_CONTROLLER_NODE)
            g_string_append(describe, sim_node_name(run->world, node));
        else
            g_string_append_printf(describe, "%s (quorum-follower)", sim_node_name(run->world, node));
        return;
    }
    case SCENARIO_TARGET_ZK: {
        SimNodeId zk = cluster_zk_node(run->cluster);
        g_array_append_val(nodes, zk);
        g_string_append(describe, "zk");
        return;
    }
    case SCENARIO_TARGET_PRODUCER:
        runner_clients_nodes(run->clients, target->producer, nodes);
        g_string_append_printf(describe, "producer %s", target->producer);
        return;
    case SCENARIO_TARGET_CONSUMER: {
        /* Named by their processes' names, so explanations find them. */
        guint before = nodes->len;
        runner_clients_consumer_nodes(run->clients, target->consumer, target->instance, nodes);
        for (guint i = before; i < nodes->len; i++)
            g_string_append_printf(describe, "%s%s", i > before ? ", " : "",
                                   sim_node_name(run->world, g_array_index(nodes, SimNodeId, i)));
        return;
    }
    case SCENARIO_TARGET_REST:
        return; /* only in partition groups, resolved there */
    }
    g_autofree char *what = scenario_target_format(target);
    if (broker < 0) {
        g_string_append_printf(describe, "%s (nobody: not resolved)", what);
        return;
    }
    SimNodeId node = broker_node(cluster_broker(run->cluster, broker));
    g_array_append_val(nodes, node);
    if (target->kind == SCENARIO_TARGET_BROKER)
        g_string_append_printf(describe, "broker-%d", broker);
    else
        g_string_append_printf(describe, "broker-%d (%s)", broker, what);
}

/* ---- applying faults ---- */

static void
cut_both(Run *run, Undo *undo, SimNodeId a, SimNodeId b)
{
    SimNet *net = sim_world_net(run->world);
    SimNodeId pair[4] = {a, b, b, a};
    sim_net_cut_one_way(net, a, b);
    sim_net_cut_one_way(net, b, a);
    g_array_append_vals(undo->cuts, pair, 4);
}

static gboolean
node_in(const GArray *nodes, SimNodeId node)
{
    for (guint i = 0; i < nodes->len; i++) {
        if (g_array_index(nodes, SimNodeId, i) == node)
            return TRUE;
    }
    return FALSE;
}

/* "*": every broker and the coordination node that no other group names. */
static void
resolve_rest(Run *run, const GPtrArray *groups, GArray *nodes, GString *describe)
{
    g_autoptr(GArray) named = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    for (guint g = 0; g < groups->len; g++) {
        const GArray *group = g_ptr_array_index(groups, g);
        g_array_append_vals(named, group->data, group->len);
    }
    g_autoptr(GArray) candidates = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    for (guint id = 1; id <= cluster_broker_count(run->cluster); id++) {
        SimNodeId node = broker_node(cluster_broker(run->cluster, (gint32)id));
        g_array_append_val(candidates, node);
    }
    if (cluster_kraft(run->cluster)) {
        g_autoptr(GArray) controllers = cluster_controller_nodes(run->cluster);
        g_array_append_vals(candidates, controllers->data, controllers->len);
    } else {
        SimNodeId zk = cluster_zk_node(run->cluster);
        g_array_append_val(candidates, zk);
    }
    g_string_append(describe, "the rest (");
    for (guint i = 0; i < candidates->len; i++) {
        SimNodeId node = g_array_index(candidates, SimNodeId, i);
        if (node_in(named, node) || node_in(nodes, node))
            continue;
        g_string_append_printf(describe, "%s%s", nodes->len ? " " : "",
                               sim_node_name(run->world, node));
        g_array_append_val(nodes, node);
    }
    g_string_append_c(describe, ')');
}

static void
apply_partition(Run *run, const ScenarioFault *fault, Undo *undo, GString *describe)
{
    g_autoptr(GPtrArray) groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_string_append(describe, "partition");
    gint rest_group = -1;
    for (guint g = 0; g < fault->groups->len; g++) {
        const GArray *targets = g_ptr_array_index(fault->groups, g);
        GArray *nodes = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
        g_string_append(describe, g ? " |" : "");
        for (guint t = 0; t < targets->len; t++) {
            const ScenarioTarget *target = &g_array_index(targets, ScenarioTarget, t);
            if (target->kind == SCENARIO_TARGET_REST) {
                rest_group = (gint)g;
                continue;
            }
            g_string_append_c(describe, ' ');
            resolve(run, target, nodes, describe);
        }
        g_ptr_array_add(groups, nodes);
    }
    if (rest_group >= 0) {
        g_string_append(describe, " + ");
        resolve_rest(run, groups, g_ptr_array_index(groups, rest_group), describe);
    }
    for (guint g = 0; g < groups->len; g++) {
        for (guint h = g + 1; h < groups->len; h++) {
            const GArray *x = g_ptr_array_index(groups, g), *y = g_ptr_array_index(groups, h);
            for (guint i = 0; i < x->len; i++) {
                for (guint j = 0; j < y->len; j++)
                    cut_both(run, undo, g_array_index(x, SimNodeId, i),
                             g_array_index(y, SimNodeId, j));
            }
        }
    }
}

static void
expire_session(Run *run, Undo *undo, SimNodeId node)
{
    /* Cut the broker off the coordination node for longer than its session
     * timeout: the server expires the session, the broker keeps running. */
    SimNodeId zk = cluster_zk_node(run->cluster);
    cut_both(run, undo, node, zk);
}

/* Longer than the longest session timeout of the brokers cut off (each
 * broker has its own), or broker 1's when the target named nobody. */
static gint64
expire_session_duration(const Run *run, const GArray *nodes)
{
    gint64 timeout_ms = broker_config(cluster_broker(run->cluster, 1))->zookeeper_session_timeout_ms;
    for (guint i = 0; i < nodes->len; i++) {
        gint32 broker = broker_of_node(run, g_array_index(nodes, SimNodeId, i));
        if (i == 0)
            timeout_ms = 0;
        if (broker >= 0)
            timeout_ms = MAX(timeout_ms,
                             broker_config(cluster_broker(run->cluster, broker))
                                 ->zookeeper_session_timeout_ms);
    }
    return timeout_ms * SIM_NS_PER_MS + 2 * SIM_NS_PER_S;
}

/* A broker stopping cleanly is restarted once it is down: its shutdown takes
 * the time its controlled shutdown, flushes and session close take. */
#define RESTART_POLL_NS (10 * SIM_NS_PER_MS)

static void
restart_when_down(void *ctx, void *arg, guint64 node)
{
    Run *run = ctx;
    (void)arg;
    if (sim_node_state(run->world, (SimNodeId)node) == SIM_NODE_DOWN) {
        sim_node_restart(run->world, (SimNodeId)node);
        return;
    }
    gint32 broker = broker_of_node(run, (SimNodeId)node);
    if (broker >= 0 && broker_shutting_down(cluster_broker(run->cluster, broker)))
        sim_world_schedule(run->world, sim_now_ns(run->world) + RESTART_POLL_NS, restart_when_down,
                           NULL, run, NULL, node);
}

/* The end of a disk-error: the operator replaces the failed disk with a new,
 * empty one (stopping the broker first if it has not halted yet) and starts
 * the broker, which recovers with no log and fetches its replicas again. */
static void
replace_failed_disk(Run *run, SimNodeId node)
{
    SimDisk *disk = sim_node_disk(run->world, node);
    if (!sim_disk_io_error(disk))
        return;
    if (sim_node_state(run->world, node) != SIM_NODE_DOWN)
        sim_node_crash(run->world, node);
    sim_disk_replace(disk);
    restart_when_down(run, NULL, node);
}

/* Applies a fault to nodes and net; fills `undo` so it can be reverted. */
static void
apply_action(Run *run, ScenarioAction action, const ScenarioFault *fault, Undo *undo)
{
    SimNet *net = sim_world_net(run->world);
    GArray *nodes = undo->nodes;
    for (guint i = 0; i < nodes->len; i++) {
        SimNodeId node = g_array_index(nodes, SimNodeId, i);
        switch (action) {
        case SCENARIO_ACTION_CRASH:
        case SCENARIO_ACTION_CRASH_ZK:
            sim_node_crash(run->world, node);
            break;
        case SCENARIO_ACTION_POWER_LOSS:
            sim_node_power_loss(run->world, node);
            break;
        case SCENARIO_ACTION_RESTART:
        case SCENARIO_ACTION_RESTART_ZK:
            sim_node_restart(run->world, node);
            break;
        case SCENARIO_ACTION_PAUSE:
            sim_node_pause(run->world, node);
            break;
        case SCENARIO_ACTION_SHUTDOWN:
            broker_shutdown(cluster_broker(run->cluster, broker_of_node(run, node)));
            break;
        case SCENARIO_ACTION_RESUME:
            sim_node_resume(run->world, node);
            break;
        case SCENARIO_ACTION_ISOLATE:
            sim_net_isolate(net, node);
            break;
        case SCENARIO_ACTION_DISK_SLOW:
            sim_disk_set_slow(sim_node_disk(run->world, node), fault != NULL ? fault->factor : 10);
            break;
        case SCENARIO_ACTION_DISK_FULL:
            sim_disk_set_full(sim_node_disk(run->world, node), TRUE);
            break;
        case SCENARIO_ACTION_DISK_ERROR:
            sim_disk_set_io_error(sim_node_disk(run->world, node), TRUE);
            break;
        case SCENARIO_ACTION_EXPIRE_SESSION:
            expire_session(run, undo, node);
            break;
        default:
            break;
        }
    }
}

static void
apply_link_fault(Run *run, const ScenarioFault *fault, Undo *undo, GString *describe)
{
    g_autoptr(GArray) to = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    SimNet *net = sim_world_net(run->world);
    if (fault->action == SCENARIO_ACTION_HOLD && fault->to.kind == SCENARIO_TARGET_NONE) {
        /* hold without `to`: the next such requests to any node. */
        g_string_append_printf(describe, " -> any: %s held", kafka_msg_type_name(fault->message_type));
        for (guint i = 0; i < undo->nodes->len; i++)
            sim_net_hold_next(net, g_array_index(undo->nodes, SimNodeId, i), SIM_NODE_NONE,
                              fault->message_type, fault->count, fault->delay_ns);
        return;
    }
    g_string_append(describe, " -> ");
    resolve(run, &fault->to, to, describe);
    for (guint i = 0; i < undo->nodes->len; i++) {
        for (guint j = 0; j < to->len; j++) {
            SimNodeId a = g_array_index(undo->nodes, SimNodeId, i);
            SimNodeId b = g_array_index(to, SimNodeId, j);
            if (fault->action == SCENARIO_ACTION_ONE_WAY) {
                SimNodeId pair[2] = {a, b};
                sim_net_cut_one_way(net, a, b);
                g_array_append_vals(undo->cuts, pair, 2);
            } else if (fault->action == SCENARIO_ACTION_LOSE) {
                sim_net_lose_next(net, a, b, fault->count);
            } else if (fault->action == SCENARIO_ACTION_DELAY) {
                sim_net_delay_next(net, a, b, fault->count, fault->delay_ns);
            } else if (fault->action == SCENARIO_ACTION_HOLD) {
                sim_net_hold_next(net, a, b, fault->message_type, fault->count, fault->delay_ns);
            } else {
                sim_net_duplicate_next(net, a, b, fault->count);
            }
        }
    }
}

/* loss, latency, bandwidth: the link impairment a fault asks for, and its
 * parameters in words. */
static SimImpairment
impairment_of(const ScenarioFault *fault, GString *describe)
{
    SimImpairment imp = {0};
    switch (fault->action) {
    case SCENARIO_ACTION_LOSS:
        imp.kind = SIM_IMPAIR_LOSS;
        imp.loss_numerator = fault->loss_per_million;
        imp.loss_denominator = SCENARIO_LOSS_DENOMINATOR;
        g_string_append_printf(describe, ", %g%% of transmissions lost (TCP retransmits)",
                               fault->loss_per_million * 100.0 / SCENARIO_LOSS_DENOMINATOR);
        break;
    case SCENARIO_ACTION_LATENCY: {
        imp.kind = SIM_IMPAIR_LATENCY;
        imp.latency = fault->latency;
        g_string_append_printf(describe, ", +%.6g ms%s one way",
                               sim_dist_mean(&fault->latency) / (double)SIM_NS_PER_MS,
                               fault->latency.kind == SIM_DIST_CONSTANT ? "" : " on average");
        break;
    }
    case SCENARIO_ACTION_BANDWIDTH:
        imp.kind = SIM_IMPAIR_BANDWIDTH;
        imp.bandwidth_bytes_per_s = fault->bandwidth_bytes_per_s;
        g_string_append_printf(describe, ", at most %" G_GINT64_FORMAT " bytes/s",
                               fault->bandwidth_bytes_per_s);
        break;
    default:
        KSIM_ASSERT(!"not a link impairment");
    }
    return imp;
}

static void
impair_one(Run *run, Undo *undo, SimNodeId from, SimNodeId to, const SimImpairment *imp)
{
    guint64 id = sim_net_impair(sim_world_net(run->world), from, to, imp);
    g_array_append_val(undo->impairs, id);
}

/* With `to`: the links from each target node to each `to` node. Without:
 * every link to and from each target node, once each. */
static void
apply_impairment(Run *run, const ScenarioFault *fault, Undo *undo, GString *describe)
{
    g_autoptr(GArray) to = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    gboolean directed = fault->to.kind != SCENARIO_TARGET_NONE;
    if (directed) {
        g_string_append(describe, " -> ");
        resolve(run, &fault->to, to, describe);
    } else {
        g_string_append(describe, " (every link to and from it)");
    }
    SimImpairment imp = impairment_of(fault, describe);
    for (guint i = 0; i < undo->nodes->len; i++) {
        SimNodeId a = g_array_index(undo->nodes, SimNodeId, i);
        if (directed) {
            for (guint j = 0; j < to->len; j++) {
                SimNodeId b = g_array_index(to, SimNodeId, j);
                if (a != b)
                    impair_one(run, undo, a, b, &imp);
            }
            continue;
        }
        for (SimNodeId b = 0; b < sim_world_node_count(run->world); b++) {
            if (b == a)
                continue;
            impair_one(run, undo, a, b, &imp);
            /* A link between two targets gets its other direction from b. */
            if (!node_in(undo->nodes, b))
                impair_one(run, undo, b, a, &imp);
        }
    }
}

/* clock: steps each target's wall clock. */
static void
apply_clock(Run *run, const ScenarioFault *fault, Undo *undo, GString *describe)
{
    g_string_append_printf(describe, ", wall clock %+.6g s",
                           (double)fault->clock_offset_ns / (double)SIM_NS_PER_S);
    undo->clock_step_ns = fault->clock_offset_ns;
    for (guint i = 0; i < undo->nodes->len; i++)
        sim_node_clock_step(run->world, g_array_index(undo->nodes, SimNodeId, i),
                            fault->clock_offset_ns);
}

static void undo_fire(void *ctx, void *arg, guint64 arg_u64);
static void undo_drop(void *ctx, void *arg, guint64 arg_u64);

/* kafka-topics --alter --partitions: the controller creates the new
 * partitions; subscribed groups rebalance when their leader's metadata shows
 * them. */
static void
add_partitions(Run *run, const ScenarioFault *fault, GString *describe)
{
    guint before = cluster_partition_count(run->cluster, fault->topic);
    g_string_append_printf(describe, "%s from %u to %u partitions", fault->topic, before,
                           fault->partitions);
    if (fault->partitions <= before)
        return; /* a --set made it grow already; Kafka refuses to shrink */
    GError *error = NULL;
    gboolean added = cluster_add_partitions(run->cluster, fault->topic, fault->partitions, &error);
    /* The parser checked the topic and the count. */
    KSIM_ASSERT(added);
}

static Undo *
undo_new(Run *run, ScenarioAction action)
{
    Undo *undo = g_new0(Undo, 1);
    undo->run = run;
    undo->action = action;
    undo->nodes = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    undo->cuts = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    undo->impairs = g_array_new(FALSE, FALSE, sizeof(guint64));
    return undo;
}

static void
undo_free(Undo *undo)
{
    g_array_free(undo->nodes, TRUE);
    g_array_free(undo->cuts, TRUE);
    g_array_free(undo->impairs, TRUE);
    g_free(undo);
}

/* Starts a fault (from the timeline, or random with `fault` NULL-able fields
 * filled by the caller) and schedules its end. */
static gint32
start_fault(Run *run, const ScenarioFault *fault, gint64 duration_ns, gboolean random)
{
    Undo *undo = undo_new(run, fault->action);
    undo->random = random;
    GString *describe = g_string_new(scenario_action_name(fault->action));
    g_string_append_c(describe, ' ');
    if (fault->action == SCENARIO_ACTION_CRASH_ZK || fault->action == SCENARIO_ACTION_RESTART_ZK) {
        ScenarioTarget zk = {.kind = SCENARIO_TARGET_ZK};
        resolve(run, &zk, undo->nodes, describe);
    } else if (fault->action == SCENARIO_ACTION_PARTITION) {
        g_string_truncate(describe, 0);
        apply_partition(run, fault, undo, describe);
    } else if (fault->action == SCENARIO_ACTION_HEAL) {
        sim_net_heal(sim_world_net(run->world));
    } else if (fault->action == SCENARIO_ACTION_ADD_PARTITIONS) {
        add_partitions(run, fault, describe);
    } else {
        resolve(run, &fault->target, undo->nodes, describe);
    }
    gboolean link = fault->action == SCENARIO_ACTION_ONE_WAY ||
                    fault->action == SCENARIO_ACTION_LOSE ||
                    fault->action == SCENARIO_ACTION_DELAY ||
                    fault->action == SCENARIO_ACTION_DUPLICATE ||
                    fault->action == SCENARIO_ACTION_HOLD;
    gboolean impairment = fault->action == SCENARIO_ACTION_LOSS ||
                          fault->action == SCENARIO_ACTION_LATENCY ||
                          fault->action == SCENARIO_ACTION_BANDWIDTH;
    if (impairment)
        apply_impairment(run, fault, undo, describe);
    else if (fault->action == SCENARIO_ACTION_CLOCK)
        apply_clock(run, fault, undo, describe);
    else if (link)
        apply_link_fault(run, fault, undo, describe);
    else
        apply_action(run, fault->action, fault, undo);
    if (fault->action == SCENARIO_ACTION_EXPIRE_SESSION && duration_ns == 0)
        duration_ns = expire_session_duration(run, undo->nodes);
    gint32 broker = undo->nodes->len == 1
                        ? broker_of_node(run, g_array_index(undo->nodes, SimNodeId, 0))
                        : -1;
    undo->window = window_open(run, describe->str, broker);
    undo->broker = broker;
    g_string_free(describe, TRUE);
    if (random)
        run->random_active++;
    if (duration_ns > 0)
        sim_world_schedule(run->world, sim_now_ns(run->world) + duration_ns, undo_fire, undo_drop,
                           run, undo, 0);
    else
        undo_fire(run, undo, 1);
    return broker;
}

/* Ends a fault: the inverse action on the same nodes, the cuts mended. With
 * `instant` the fault had no duration: only its window closes (a crash
 * without a duration stays until a restart or the end of the fault phase). */
static void
undo_fire(void *ctx, void *arg, guint64 instant)
{
    Run *run = ctx;
    Undo *undo = arg;
    if (!instant && !run->fault_phase_over) {
        ScenarioAction inverse = undo->action;
        switch (undo->action) {
        case SCENARIO_ACTION_CRASH:
        case SCENARIO_ACTION_POWER_LOSS:
        case SCENARIO_ACTION_CRASH_ZK:
            inverse = SCENARIO_ACTION_RESTART;
            break;
        case SCENARIO_ACTION_PAUSE:
            inverse = SCENARIO_ACTION_RESUME;
            break;
        case SCENARIO_ACTION_SHUTDOWN:
            for (guint i = 0; i < undo->nodes->len; i++)
                restart_when_down(run, NULL, g_array_index(undo->nodes, SimNodeId, i));
            break;
        default:
            break;
        }
        for (guint i = 0; i < undo->nodes->len; i++) {
            SimNodeId node = g_array_index(undo->nodes, SimNodeId, i);
            if (undo->action == SCENARIO_ACTION_DISK_SLOW)
                sim_disk_set_slow(sim_node_disk(run->world, node), 1.0);
            if (undo->action == SCENARIO_ACTION_DISK_FULL)
                sim_disk_set_full(sim_node_disk(run->world, node), FALSE);
            if (undo->action == SCENARIO_ACTION_DISK_ERROR)
                replace_failed_disk(run, node);
        }
        if (inverse != undo->action)
            apply_action(run, inverse, NULL, undo);
        if (undo->action == SCENARIO_ACTION_ISOLATE)
            sim_net_heal(sim_world_net(run->world));
        for (guint i = 0; i + 1 < undo->cuts->len; i += 2)
            sim_net_mend_one_way(sim_world_net(run->world), g_array_index(undo->cuts, SimNodeId, i),
                                 g_array_index(undo->cuts, SimNodeId, i + 1));
        for (guint i = 0; i < undo->impairs->len; i++)
            sim_net_impair_end(sim_world_net(run->world), g_array_index(undo->impairs, guint64, i));
        /* The clock is corrected by the step back (an NTP step). */
        for (guint i = 0; i < undo->nodes->len && undo->clock_step_ns != 0; i++)
            sim_node_clock_step(run->world, g_array_index(undo->nodes, SimNodeId, i),
                                -undo->clock_step_ns);
    }
    if (!instant || undo->action == SCENARIO_ACTION_HEAL || undo->action == SCENARIO_ACTION_RESTART ||
        undo->action == SCENARIO_ACTION_RESUME || undo->action == SCENARIO_ACTION_LOSE ||
        undo->action == SCENARIO_ACTION_ADD_PARTITIONS ||
        undo->action == SCENARIO_ACTION_DELAY || undo->action == SCENARIO_ACTION_DUPLICATE ||
        undo->action == SCENARIO_ACTION_HOLD)
        window_close(run, undo->window);
    if (undo->random)
        run->random_active--;
    undo_free(undo);
}

static void
undo_drop(void *ctx, void *arg, guint64 arg_u64)
{
    (void)ctx;
    (void)arg_u64;
    undo_free(arg);
}

static void
timeline_fire(void *ctx, void *arg, guint64 arg_u64)
{
    Run *run = ctx;
    const ScenarioFault *fault = arg;
    (void)arg_u64;
    if (!run->fault_phase_over)
        start_fault(run, fault, fault->duration_ns, FALSE);
}

/* ---- random faults ---- */

static void random_next(Run *run);

static void
random_fire(void *ctx, void *arg, guint64 arg_u64)
{
    Run *run = ctx;
    (void)arg;
    (void)arg_u64;
    const ScenarioRandomFaults *spec = scenario_variant_random_faults(run->variant);
    if (run->fault_phase_over || sim_now_ns(run->world) > spec->stop_ns)
        return;
    const GArray *kinds = run->swarm_kinds != NULL ? run->swarm_kinds : spec->kinds;
    if (run->random_active < spec->concurrent_max && kinds->len > 0) {
        ScenarioFault fault = {0};
        fault.action =
            g_array_index(kinds, ScenarioAction, sim_rng_range(run->rng, 0, kinds->len));
        fault.target.kind = SCENARIO_TARGET_RANDOM;
        fault.factor = 10.0;
        g_autoptr(GPtrArray) groups =
            g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
        fault.groups = groups;
        gint32 alone = -1;
        if (fault.action == SCENARIO_ACTION_PARTITION) {
            /* A random broker alone against the rest. */
            alone = random_live_broker(run);
            GArray *one = g_array_new(FALSE, FALSE, sizeof(ScenarioTarget));
            GArray *rest = g_array_new(FALSE, FALSE, sizeof(ScenarioTarget));
            for (guint id = 1; id <= cluster_broker_count(run->cluster); id++) {
                ScenarioTarget t = {.kind = SCENARIO_TARGET_BROKER, .broker = id};
                g_array_append_val((gint32)id == alone ? one : rest, t);
            }
            g_ptr_array_add(groups, one);
            g_ptr_array_add(groups, rest);
        }
        gint64 duration = MAX(sim_dist_sample(&spec->duration, run->rng), SIM_NS_PER_MS);
        gint32 hit = start_fault(run, &fault, duration, TRUE);
        RunnerRandomFault started = {sim_now_ns(run->world), fault.action,
                                     fault.action == SCENARIO_ACTION_PARTITION ? alone : hit,
                                     duration};
        if (started.broker >= 0)
            g_array_append_val(run->random_faults, started);
    }
    random_next(run);
}

static void
random_next(Run *run)
{
    const ScenarioRandomFaults *spec = scenario_variant_random_faults(run->variant);
    /* GLib's MAX evaluates the larger argument twice, so an interval above
     * 1 ms is a second draw; kept as it is, so fingerprints stay. */
    gint64 at = MAX(sim_now_ns(run->world), spec->start_ns) +
                MAX(sim_dist_sample(&spec->interval, run->rng), SIM_NS_PER_MS);
    if (run->interval_quarters != 4) {
        gint64 interval = sim_dist_sample(&spec->interval, run->rng) / 4 * run->interval_quarters;
        at = MAX(sim_now_ns(run->world), spec->start_ns) + MAX(interval, SIM_NS_PER_MS);
    }
    if (at <= spec->stop_ns && at < scenario_variant_duration_ns(run->variant))
        sim_world_schedule(run->world, at, random_fire, NULL, run, NULL, 0);
}

/* Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012): each seed
 * leaves out some fault kinds (each kept with probability 1/2, at least one)
 * and runs the rest at 1/4, 1/2, 1 or 2 times the interval, so that rare
 * combinations one kind crowds out get their turn. Drawn from a stream of
 * its own, so the "faults" stream draws as it does without swarm. */
static void
swarm_draw(Run *run, const ScenarioRandomFaults *spec)
{
    SimRng *rng = sim_world_rng(run->world, "faults/swarm");
    run->swarm_kinds = g_array_new(FALSE, FALSE, sizeof(ScenarioAction));
    for (guint i = 0; i < spec->kinds->len; i++) {
        if (sim_rng_range(rng, 0, 2) == 1)
            g_array_append_val(run->swarm_kinds, g_array_index(spec->kinds, ScenarioAction, i));
    }
    if (run->swarm_kinds->len == 0 && spec->kinds->len > 0)
        g_array_append_val(run->swarm_kinds, g_array_index(spec->kinds, ScenarioAction,
                                                           sim_rng_range(rng, 0,
                                                                         spec->kinds->len)));
    static const guint quarters[] = {1, 2, 4, 8};
    run->interval_quarters = quarters[sim_rng_range(rng, 0, G_N_ELEMENTS(quarters))];
}

/* ---- the end of the fault phase ---- */

static void
heal_everything(Run *run)
{
    run->fault_phase_over = TRUE;
    for (SimNodeId node = 0; node < sim_world_node_count(run->world); node++) {
        sim_disk_set_slow(sim_node_disk(run->world, node), 1.0);
        sim_disk_set_full(sim_node_disk(run->world, node), FALSE);
        replace_failed_disk(run, node);
        if (sim_node_state(run->world, node) == SIM_NODE_PAUSED)
            sim_node_resume(run->world, node);
        restart_when_down(run, NULL, node);
        gint64 clock_offset = sim_node_clock_offset_ns(run->world, node);
        if (clock_offset != 0)
            sim_node_clock_step(run->world, node, -clock_offset);
    }
    sim_net_heal(sim_world_net(run->world));
    for (guint i = 0; i < run->windows->len; i++)
        window_close(run, i);
}

/* ---- the run ---- */

/* The --trace writer, the checks' trace listener and the diagrams' trace,
 * each hearing every record. */
typedef struct {
    TraceWriter *writer; /* may be NULL */
    const RunnerChecks *checks;
    DiagramTrace *diagram; /* may be NULL */
} TraceTee;

static void
trace_tee(void *user_data, const SimTraceRecord *record, const char *note)
{
    TraceTee *tee = user_data;
    if (tee->writer != NULL)
        trace_writer_record(tee->writer, record, note);
    if (tee->checks->trace_listener != NULL)
        tee->checks->trace_listener(tee->checks->trace_listener_data, record, note);
    if (tee->diagram != NULL)
        diagram_trace_record(tee->diagram, record, note);
}

/* The diagrams' trace the checks ask for, or NULL. */
static DiagramTrace *
diagram_trace_wanted(const Run *run, const RunnerChecks *checks)
{
    if (checks == NULL || (!checks->keep_diagrams && checks->diagram_to_ns <= 0))
        return NULL;
    DiagramTrace *trace = diagram_trace_new(
        sim_world_node_names(run->world), checks->keep_diagrams ? run->history : NULL,
        checks->diagram_records_max > 0 ? checks->diagram_records_max : DIAGRAM_TRACE_RECORDS_MAX);
    if (checks->diagram_to_ns > 0)
        diagram_trace_keep_between(trace, checks->diagram_from_ns, checks->diagram_to_ns);
    return trace;
}

static gboolean
has_own_configs(const ScenarioCluster *spec)
{
    for (guint i = 0; i < spec->broker_configs->len; i++) {
        if (g_ptr_array_index(spec->broker_configs, i) != NULL)
            return TRUE;
    }
    return FALSE;
}

/* A broker with its own keys fills the topic's unset keys from them. */
static void
set_own_topic_configs(const Run *run, Cluster *cluster, const ScenarioTopic *topic)
{
    const ScenarioCluster *spec = scenario_variant_cluster(run->variant);
    for (guint id = 1; id <= spec->brokers; id++) {
        if (g_ptr_array_index(spec->broker_configs, id - 1) == NULL)
            continue;
        g_autoptr(KConfig) cfg = scenario_topic_config_of(run->variant, topic, id);
        TopicConfig own;
        kconfig_bind_topic_from(&own, cfg);
        broker_set_topic_config(cluster_broker(cluster, (gint32)id), topic->name, &own);
    }
}

static Cluster *
build_cluster(Run *run)
{
    const ScenarioCluster *spec = scenario_variant_cluster(run->variant);
    /* The registry's bindings fill the model structs (kconfig_bind.h);
     * broker_id is set per broker by the cluster. */
    ClusterConfig config;
    kconfig_bind_cluster_from(&config, spec->hardware, spec->config);
    /* [broker N] groups: each broker its own server.properties. */
    g_autofree BrokerConfig *brokers = NULL;
    if (has_own_configs(spec)) {
        brokers = g_new(BrokerConfig, spec->brokers);
        for (guint id = 1; id <= spec->brokers; id++)
            kconfig_bind_broker_from(&brokers[id - 1],
                                     scenario_variant_broker_config_of(run->variant, id));
        config.brokers = brokers;
    }
    config.racks = spec->racks != NULL ? (const char *const *)spec->racks->pdata : NULL;
    /* KRaft's roles and voters, as the scenario parser resolved them. */
    if (config.kraft) {
        KSIM_ASSERT(spec->n_voters >= 1 && spec->n_voters <= RAFT_VOTERS_MAX);
        config.combined = spec->combined;
        config.n_controllers = spec->n_voters;
        memcpy(config.voter_ids, spec->voter_ids, sizeof(gint32) * spec->n_voters);
    }
    Cluster *cluster = cluster_new(run->world, &config, run->history);
    const GPtrArray *topics = scenario_variant_topics(run->variant);
    for (guint i = 0; i < topics->len; i++) {
        const ScenarioTopic *topic = g_ptr_array_index(topics, i);
        TopicConfig topic_config;
        kconfig_bind_topic_from(&topic_config, topic->config);
        GError *error = NULL;
        ClusterRackAwareMode mode =
            topic->disable_rack_aware ? CLUSTER_RACK_AWARE_DISABLED : CLUSTER_RACK_AWARE_ENFORCED;
        gboolean created =
            topic->assignment != NULL
                ? cluster_create_topic_assigned(cluster, topic->name, topic->assignment,
                                                &topic_config, &error)
                : cluster_create_topic_rack_mode(cluster, topic->name, topic->partitions,
                                                 topic->replication_factor, &topic_config, mode,
                                                 &error);
        /* The parser validated names, counts and racks already. */
        KSIM_ASSERT(created);
        cluster_set_topic_rack_mode(cluster, topic->name, mode);
        if (brokers != NULL)
            set_own_topic_configs(run, cluster, topic);
    }
    return cluster;
}

RunnerResult *
runner_run(const ScenarioVariant *variant, guint64 seed, FILE *trace_out)
{
    return runner_run_checked(variant, seed, trace_out, NULL);
}

RunnerResult *
runner_run_checked(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
                   const RunnerChecks *checks)
{
    return runner_run_healed(variant, seed, trace_out, checks, -1);
}

RunnerResult *
runner_run_healed(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
                  const RunnerChecks *checks, gint64 heal_at_ns)
{
    Run run = {0};
    run.world = sim_world_new(seed);
    run.history = history_new();
    run.variant = variant;
    run.windows = g_array_new(FALSE, FALSE, sizeof(RunnerFaultWindow));
    run.rng = sim_world_rng(run.world, "faults");
    run.random_faults = g_array_new(FALSE, FALSE, sizeof(RunnerRandomFault));
    g_autoptr(TraceWriter) trace_writer = NULL;
    if (trace_out != NULL) {
        trace_writer = trace_writer_new(trace_out, sim_world_node_names(run.world),
                                        checks != NULL ? checks->trace_format : TRACE_FORMAT_JSONL);
        sim_trace_set_listener(sim_world_trace(run.world), trace_writer_record, trace_writer);
    }
    TraceTee tee = {trace_writer, checks, diagram_trace_wanted(&run, checks)};
    if (checks != NULL && (checks->trace_listener != NULL || tee.diagram != NULL))
        sim_trace_set_listener(sim_world_trace(run.world), trace_tee, &tee);
    run.cluster = build_cluster(&run);
    run.clients = runner_clients_new(run.world, run.cluster, run.history, variant);
    RunnerParanoid *paranoid =
        runner_paranoid_new(run.world, run.cluster, run.clients, variant, seed, checks);
    const GPtrArray *faults = scenario_variant_faults(variant);
    for (guint i = 0; i < faults->len; i++) {
        const ScenarioFault *fault = g_ptr_array_index(faults, i);
        sim_world_schedule(run.world, fault->time_ns, timeline_fire, NULL, &run, (void *)fault, 0);
    }
    run.interval_quarters = 4;
    if (scenario_variant_random_faults(variant) != NULL &&
        scenario_variant_random_faults(variant)->swarm)
        swarm_draw(&run, scenario_variant_random_faults(variant));
    if (scenario_variant_random_faults(variant) != NULL)
        random_next(&run);
    gint64 duration = scenario_variant_duration_ns(variant);
    gint64 heal_at = heal_at_ns >= 0 ? MIN(heal_at_ns, duration) : duration;
    sim_world_run_until(run.world, heal_at);
    heal_everything(&run);
    sim_world_run_until(run.world, duration + scenario_variant_quiet_ns(variant));

    RunnerResult *result = g_new0(RunnerResult, 1);
    result->label = g_strdup(scenario_variant_label(variant));
    result->seed = seed;
    result->last_heal_ns = heal_at;
    result->unconverged = cluster_unconverged(run.cluster);
    result->converged = result->unconverged == NULL;
    cluster_finish(run.cluster);
    if (trace_writer != NULL)
        trace_writer_finish(trace_writer, run.history);
    if (tee.diagram != NULL)
        diagram_trace_finish(tee.diagram, sim_now_ns(run.world));
    /* Freeing the clients and the cluster below may still trace (closing
     * connections); the diagrams' trace has ended. */
    result->diagram_trace = g_steal_pointer(&tee.diagram);
    /* The run ends here: freeing the world drops the messages still in flight, and those
     * drops are no part of the run (the fingerprint is taken below, before them). */
    sim_trace_set_listener(sim_world_trace(run.world), NULL, NULL);
    result->violations = cluster_violations(run.cluster);
    result->virtual_ns = sim_now_ns(run.world);
    result->events = sim_world_events(run.world);
    result->trace_records = sim_trace_count(sim_world_trace(run.world));
    result->fingerprint = sim_trace_fingerprint(sim_world_trace(run.world));
    result->history = run.history;
    result->fault_windows = run.windows;
    result->random_faults = run.random_faults;
    result->marks = *sim_world_marks(run.world);
    runner_paranoid_free(paranoid);
    runner_clients_free(run.clients);
    if (run.swarm_kinds != NULL)
        g_array_free(run.swarm_kinds, TRUE);
    cluster_free(run.cluster);
    sim_world_free(run.world);
    return result;
}

void
runner_result_free(RunnerResult *result)
{
    if (result == NULL)
        return;
    for (guint i = 0; i < result->fault_windows->len; i++)
        g_free(g_array_index(result->fault_windows, RunnerFaultWindow, i).label);
    g_array_free(result->fault_windows, TRUE);
    g_array_free(result->random_faults, TRUE);
    history_free(result->history);
    diagram_trace_free(result->diagram_trace);
    g_free(result->label);
    g_free(result->unconverged);
    g_free(result);
}
