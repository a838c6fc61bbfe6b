/*
 * sim_world: the run, its nodes and the dispatch loop (see sim_world.h).
 *
 * Invariants (sim_world_check_invariants checks 3 to 6; 1 is asserted at
 * every schedule and dispatch, where it could break; 2 holds by construction):
 *  1. `now_ns` never decreases; every queued event is at or after `now_ns`.
 *  2. An event owned by a node carries the incarnation it was scheduled in; it
 *     runs only if the node's incarnation is unchanged, so a crash (which bumps
 *     the incarnation) drops the node's timers in O(1), without a scan.
 *  3. A PAUSED node's due events are HELD in the queue, listed in `held` in
 *     the order they came due; a DOWN or UP node holds none.
 *  4. Node ids are dense: nodes[i] is node i, for i < nodes->len, and
 *     node_names[i] is its name.
 *  5. A node whose host is off (a power loss) is DOWN.
 *  6. Outside dispatch no node is current.
 */
#include "sim_world.h"

#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

typedef struct {
    char *name;
    const SimNodeOps *ops;
    void *ctx;
    SimNodeState state;
    gboolean host_off;
    guint32 incarnation;
    gint64 clock_offset_ns; /* the wall clock minus virtual time */
    SimDisk *disk;
    GArray *held; /* SimEventId, in the order the events came due */
    /* sim_disk_changes(disk) + 1 when the disk was last checked; 0: never. */
    guint64 disk_checked;
} Node;

struct SimWorld {
    guint64 seed;
    gint64 now_ns;
    SimSched *sched;
    SimTrace *trace;
    SimMarks marks; /* observed only: never reaches the trace or the queue */
    SimNet *net;
    GHashTable *rngs; /* name -> SimRng; looked up, never iterated */
    GArray *nodes;    /* Node */
    GPtrArray *node_names;
    guint64 events;
    gboolean stop;
    SimNodeId current_node;
    SimAfterEventFn after_event;
    void *after_event_data;
    /* The event being dispatched, for failure reports (sim_world_current_event). */
    gboolean dispatching;
    gboolean dispatch_after;
    SimNodeId dispatch_owner;
};

SimWorld *
sim_world_new(guint64 seed)
{
    SimWorld *world = g_new0(SimWorld, 1);
    world->seed = seed;
    world->sched = sim_sched_new();
    world->trace = sim_trace_new();
    world->rngs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify)sim_rng_free);
    world->nodes = g_array_new(FALSE, TRUE, sizeof(Node));
    world->node_names = g_ptr_array_new();
    world->current_node = SIM_NODE_NONE;
    world->net = sim_net_new(world);
    return world;
}

void
sim_world_free(SimWorld *world)
{
    if (world == NULL)
        return;
    /* Pending events may own messages that the network frees, so the queue
     * goes first, while the network and nodes still exist. */
    sim_sched_free(world->sched);
    world->sched = NULL;
    sim_net_free(world->net);
    for (guint i = 0; i < world->nodes->len; i++) {
        Node *node = &g_array_index(world->nodes, Node, i);
        sim_disk_free(node->disk);
        g_array_free(node->held, TRUE);
        g_free(node->name);
    }
    g_array_free(world->nodes, TRUE);
    g_ptr_array_free(world->node_names, TRUE);
    g_hash_table_destroy(world->rngs);
    sim_trace_free(world->trace);
    g_free(world);
}

guint64
sim_world_seed(const SimWorld *world)
{
    return world->seed;
}

gint64
sim_now_ns(const SimWorld *world)
{
    return world->now_ns;
}

SimMarks *
sim_world_marks(SimWorld *world)
{
    return &world->marks;
}

SimTrace *
sim_world_trace(SimWorld *world)
{
    return world->trace;
}

SimNet *
sim_world_net(SimWorld *world)
{
    return world->net;
}

SimRng *
sim_world_rng(SimWorld *world, const char *name)
{
    SimRng *rng = g_hash_table_lookup(world->rngs, name);
    if (rng == NULL) {
        rng = sim_rng_new(world->seed, name);
        g_hash_table_insert(world->rngs, g_strdup(name), rng);
    }
    return rng;
}

static Node *
node_get(const SimWorld *world, SimNodeId id)
{
    KSIM_ASSERT(id < world->nodes->len);
    return &g_array_index(world->nodes, Node, id);
}

SimNodeId
sim_node_add(SimWorld *world, const char *name, const SimNodeOps *ops, void *ctx)
{
    KSIM_ASSERT(ops != NULL);
    KSIM_ASSERT(world->nodes->len < SIM_NODE_NONE);
    SimNodeId id = world->nodes->len;
    Node node = {0};
    node.name = g_strdup(name);
    node.ops = ops;
    node.ctx = ctx;
    node.state = SIM_NODE_UP;
    node.held = g_array_new(FALSE, FALSE, sizeof(SimEventId));
    g_array_append_val(world->nodes, node);
    g_ptr_array_add(world->node_names, node_get(world, id)->name);
    g_autofree char *rng_name = g_strdup_printf("disk/%s", name);
    node_get(world, id)->disk = sim_disk_new(world, id, sim_world_rng(world, rng_name));
    sim_net_node_added(world->net, id);
    return id;
}

guint
sim_world_node_count(const SimWorld *world)
{
    return world->nodes->len;
}

const char *
sim_node_name(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->name;
}

SimNodeState
sim_node_state(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->state;
}

void *
sim_node_ctx(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->ctx;
}

const SimNodeOps *
sim_node_ops(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->ops;
}

gboolean
sim_node_host_up(const SimWorld *world, SimNodeId node)
{
    return !node_get(world, node)->host_off;
}

SimDisk *
sim_node_disk(SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->disk;
}

guint32
sim_node_incarnation(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->incarnation;
}

const GPtrArray *
sim_world_node_names(const SimWorld *world)
{
    return world->node_names;
}

gint64
sim_node_clock_offset_ns(const SimWorld *world, SimNodeId node)
{
    return node_get(world, node)->clock_offset_ns;
}

gint64
sim_node_wall_ns(const SimWorld *world, SimNodeId node)
{
    gint64 offset = node_get(world, node)->clock_offset_ns;
    /* A step back past the epoch stops at it (offsets are bounded far below
     * the int64 range, so the sum cannot overflow). */
    return MAX(world->now_ns + offset, 0);
}

gint64
sim_node_wall_ms(const SimWorld *world, SimNodeId node)
{
    return sim_node_wall_ns(world, node) / SIM_NS_PER_MS;
}

void
sim_node_clock_step(SimWorld *world, SimNodeId node, gint64 delta_ns)
{
    Node *n = node_get(world, node);
    KSIM_ASSERT(delta_ns >= -SIM_CLOCK_OFFSET_NS_MAX && delta_ns <= SIM_CLOCK_OFFSET_NS_MAX);
    n->clock_offset_ns = CLAMP(n->clock_offset_ns + delta_ns, -SIM_CLOCK_OFFSET_NS_MAX,
                               SIM_CLOCK_OFFSET_NS_MAX);
    sim_trace_add(world->trace, world->now_ns, SIM_TRACE_FAULT, node, SIM_NODE_NONE,
                  SIM_FAULT_CLOCK, (guint64)delta_ns, NULL);
}

static void
trace_node(SimWorld *world, SimTraceKind kind, SimNodeId node, guint64 a)
{
    sim_trace_add(world->trace, world->now_ns, kind, node, SIM_NODE_NONE, a, 0, NULL);
}

/* Drops the node's held events and makes its queued ones stale. */
static void
node_kill(SimWorld *world, SimNodeId id)
{
    Node *node = node_get(world, id);
    KSIM_ASSERT(node->state != SIM_NODE_DOWN);
    for (guint i = 0; i < node->held->len; i++)
        sim_sched_cancel(world->sched, g_array_index(node->held, SimEventId, i));
    g_array_set_size(node->held, 0);
    node->state = SIM_NODE_DOWN;
    node->incarnation++;
}

static void
node_crash(SimWorld *world, SimNodeId id, gboolean power_loss)
{
    Node *node = node_get(world, id);
    if (node->state == SIM_NODE_DOWN)
        return;
    trace_node(world, power_loss ? SIM_TRACE_POWER_LOSS : SIM_TRACE_CRASH, id, 0);
    node_kill(world, id);
    node->host_off = power_loss;
    sim_net_node_crashed(world->net, id, power_loss);
    if (power_loss)
        sim_disk_power_loss(node->disk);
    else
        sim_disk_process_crash(node->disk);
    if (node->ops->crash != NULL)
        node->ops->crash(world, node->ctx);
}

void
sim_node_crash(SimWorld *world, SimNodeId node)
{
    node_crash(world, node, FALSE);
}

void
sim_node_power_loss(SimWorld *world, SimNodeId node)
{
    node_crash(world, node, TRUE);
}

void
sim_node_restart(SimWorld *world, SimNodeId id)
{
    Node *node = node_get(world, id);
    if (node->state != SIM_NODE_DOWN)
        return;
    trace_node(world, SIM_TRACE_RESTART, id, node->incarnation);
    node->state = SIM_NODE_UP;
    node->host_off = FALSE;
    sim_net_node_restarted(world->net, id);
    if (node->ops->restart != NULL)
        node->ops->restart(world, node->ctx);
}

void
sim_node_pause(SimWorld *world, SimNodeId id)
{
    Node *node = node_get(world, id);
    if (node->state != SIM_NODE_UP)
        return;
    trace_node(world, SIM_TRACE_PAUSE, id, 0);
    node->state = SIM_NODE_PAUSED;
}

void
sim_node_resume(SimWorld *world, SimNodeId id)
{
    Node *node = node_get(world, id);
    if (node->state != SIM_NODE_PAUSED)
        return;
    trace_node(world, SIM_TRACE_RESUME, id, node->held->len);
    node->state = SIM_NODE_UP;
    for (guint i = 0; i < node->held->len; i++)
        sim_sched_unhold(world->sched, g_array_index(node->held, SimEventId, i), world->now_ns);
    g_array_set_size(node->held, 0);
}

static void
timer_fire(void *ctx, void *arg, guint64 arg_u64)
{
    SimWorld *world = ctx;
    SimNodeId id = world->current_node;
    Node *node = node_get(world, id);
    SimTimerFn fn = (SimTimerFn)(guintptr)arg_u64;
    trace_node(world, SIM_TRACE_TIMER, id, 0);
    fn(world, node->ctx, arg);
}

SimEventId
sim_world_schedule_for(SimWorld *world, SimNodeId id, gint64 time_ns, SimEventFn fn,
                       SimEventDropFn drop_fn, void *arg, guint64 arg_u64)
{
    Node *node = node_get(world, id);
    KSIM_ASSERT(node->state != SIM_NODE_DOWN);
    KSIM_ASSERT(time_ns >= world->now_ns);
    return sim_sched_push(world->sched, time_ns, fn, drop_fn, world, arg, arg_u64, id,
                          node->incarnation);
}

SimTimerId
sim_timer_set(SimWorld *world, SimNodeId node, gint64 delay_ns, SimTimerFn fn, void *arg)
{
    KSIM_ASSERT(delay_ns >= 0);
    KSIM_ASSERT(fn != NULL);
    return sim_world_schedule_for(world, node, world->now_ns + delay_ns, timer_fire, NULL, arg,
                                  (guint64)(guintptr)fn);
}

/* A node's event is alive while it is pending and its node has not crashed
 * since it was scheduled. */
static gboolean
event_alive(const SimWorld *world, SimEventId id)
{
    SimEvent event;
    if (!sim_sched_get(world->sched, id, &event))
        return FALSE;
    return event.owner == SIM_NODE_NONE ||
           event.incarnation == node_get(world, event.owner)->incarnation;
}

gboolean
sim_timer_cancel(SimWorld *world, SimTimerId id)
{
    gboolean alive = event_alive(world, id);
    sim_sched_cancel(world->sched, id);
    return alive;
}

gboolean
sim_timer_pending(const SimWorld *world, SimTimerId id)
{
    return event_alive(world, id);
}

SimEventId
sim_world_schedule(SimWorld *world, gint64 time_ns, SimEventFn fn, SimEventDropFn drop_fn,
                   void *ctx, void *arg, guint64 arg_u64)
{
    KSIM_ASSERT(time_ns >= world->now_ns);
    return sim_sched_push(world->sched, time_ns, fn, drop_fn, ctx, arg, arg_u64, SIM_NODE_NONE,
                          0);
}

gboolean
sim_world_cancel(SimWorld *world, SimEventId id)
{
    return sim_timer_cancel(world, id);
}

/* Decides the fate of the earliest event of a node: TRUE when it may run now;
 * otherwise it was dropped (stale incarnation) or held (paused node). */
static gboolean
owner_admits(SimWorld *world, const SimEvent *event)
{
    Node *node = node_get(world, event->owner);
    if (event->incarnation != node->incarnation) {
        SimEvent dropped;
        sim_sched_pop(world->sched, &dropped);
        if (dropped.drop_fn != NULL)
            dropped.drop_fn(dropped.ctx, dropped.arg, dropped.arg_u64);
        return FALSE;
    }
    if (node->state == SIM_NODE_PAUSED) {
        SimEventId id = sim_sched_hold_top(world->sched);
        g_array_append_val(node->held, id);
        return FALSE;
    }
    KSIM_ASSERT(node->state == SIM_NODE_UP);
    return TRUE;
}

/* Runs the earliest admissible event due at or before `limit_ns`. */
static gboolean
step_until(SimWorld *world, gint64 limit_ns)
{
    SimEvent event;
    for (;;) {
        if (!sim_sched_peek(world->sched, &event) || event.time_ns > limit_ns)
            return FALSE;
        if (event.owner == SIM_NODE_NONE || owner_admits(world, &event))
            break;
    }
    sim_sched_pop(world->sched, &event);
    KSIM_ASSERT(event.time_ns >= world->now_ns);
    world->now_ns = event.time_ns;
    world->events++;
    world->current_node = event.owner;
    world->dispatching = TRUE;
    world->dispatch_after = FALSE;
    world->dispatch_owner = event.owner;
    sim_trace_mark(world->trace);
    event.fn(event.ctx, event.arg, event.arg_u64);
    world->current_node = SIM_NODE_NONE;
    if (world->after_event != NULL) {
        world->dispatch_after = TRUE;
        world->after_event(world, world->after_event_data);
    }
    world->dispatching = FALSE;
    return TRUE;
}

gboolean
sim_world_step(SimWorld *world)
{
    return step_until(world, G_MAXINT64);
}

void
sim_world_run_until(SimWorld *world, gint64 time_ns)
{
    KSIM_ASSERT(time_ns >= world->now_ns);
    world->stop = FALSE;
    while (!world->stop && step_until(world, time_ns)) {
    }
    if (!world->stop && world->now_ns < time_ns)
        world->now_ns = time_ns;
}

void
sim_world_stop(SimWorld *world)
{
    world->stop = TRUE;
}

guint64
sim_world_events(const SimWorld *world)
{
    return world->events;
}

guint
sim_world_pending(const SimWorld *world)
{
    return sim_sched_size(world->sched);
}

void
sim_world_set_after_event(SimWorld *world, SimAfterEventFn fn, void *user_data)
{
    world->after_event = fn;
    world->after_event_data = user_data;
}

/* ---- invariants and failure reports ---- */

static void
node_check_invariants(SimWorld *world, SimNodeId id, gboolean disks)
{
    Node *node = node_get(world, id);
    KSIM_ASSERT(g_ptr_array_index(world->node_names, id) == node->name);
    KSIM_ASSERT(node->ops != NULL);
    if (node->host_off)
        KSIM_ASSERT(node->state == SIM_NODE_DOWN);
    if (node->state != SIM_NODE_PAUSED)
        KSIM_ASSERT(node->held->len == 0);
    for (guint i = 0; i < node->held->len; i++)
        KSIM_ASSERT(sim_sched_pending(world->sched, g_array_index(node->held, SimEventId, i)));
    /* A disk's invariants depend on its own state alone: one unchanged since
     * its last check passes again, and checking the long write lists of
     * every disk after every event would cost more than the run. */
    guint64 changes = sim_disk_changes(node->disk);
    if (!disks || node->disk_checked == changes + 1)
        return;
    sim_disk_check_invariants(node->disk);
    node->disk_checked = changes + 1;
}

/* Invariant 1 is asserted where it could break (every schedule and dispatch),
 * and 2 holds by construction; this checks 3 and 4 and the parts. */
void
sim_world_check_invariants(SimWorld *world, gboolean disks)
{
    KSIM_ASSERT(world->node_names->len == world->nodes->len);
    for (SimNodeId id = 0; id < world->nodes->len; id++)
        node_check_invariants(world, id, disks);
    if (!world->dispatching || world->dispatch_after)
        KSIM_ASSERT(world->current_node == SIM_NODE_NONE);
    sim_sched_check_invariants(world->sched);
    sim_net_check_invariants(world->net);
}

gboolean
sim_world_current_event(const SimWorld *world, SimWorldEvent *out)
{
    if (!world->dispatching)
        return FALSE;
    *out = (SimWorldEvent){0};
    out->number = world->events;
    out->time_ns = world->now_ns;
    out->owner = world->dispatch_owner;
    out->after = world->dispatch_after;
    out->traced = sim_trace_marked(world->trace, &out->record, &out->record_index);
    return TRUE;
}

static const char *
name_or_dash(const SimWorld *world, guint32 node)
{
    return node < world->nodes->len ? node_get(world, node)->name : "-";
}

char *
sim_world_describe_event(const SimWorld *world)
{
    SimWorldEvent event;
    gint64 now = world->now_ns;
    if (!sim_world_current_event(world, &event))
        return g_strdup_printf("no event (between events, at %" G_GINT64_FORMAT
                               ".%09" G_GINT64_FORMAT " s)",
                               now / SIM_NS_PER_S, now % SIM_NS_PER_S);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text,
                           "event %" G_GUINT64_FORMAT " at %" G_GINT64_FORMAT
                           ".%09" G_GINT64_FORMAT " s",
                           event.number, now / SIM_NS_PER_S, now % SIM_NS_PER_S);
    if (event.owner != SIM_NODE_NONE)
        g_string_append_printf(text, " on %s", name_or_dash(world, event.owner));
    if (!event.traced) {
        g_string_append(text, ": (it added no trace record)");
        return g_string_free(text, FALSE);
    }
    const SimTraceRecord *r = &event.record;
    /* The fields of the record's JSON Lines form (sim_trace.c). */
    g_string_append_printf(text, ": %s node=%s", sim_trace_kind_name(r->kind),
                           name_or_dash(world, r->node));
    if (r->peer != SIM_NODE_NONE)
        g_string_append_printf(text, " peer=%s", name_or_dash(world, r->peer));
    g_string_append_printf(text,
                           " a=%" G_GUINT64_FORMAT " b=%" G_GUINT64_FORMAT
                           " (trace record %" G_GUINT64_FORMAT ")",
                           r->a, r->b, event.record_index);
    return g_string_free(text, FALSE);
}
