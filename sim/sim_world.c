/*
 * sim_world: the run, its nodes and the dispatch loop (see sim_world.h).
 *
 * Invariants:
 *  1. `now_ns` never decreases; every queued event is at or after `now_ns`.
 *  2. An event owned by a node carries the incarnation it was scheduled in; it
 *     runs only if the node's incarnation is unchanged, so a crash (which bumps
 *     the incarnation) drops the node's timers in O(1), without a scan.
 *  3. A PAUSED node's due events are HELD in the queue, listed in `held` in
 *     the order they came due; a DOWN or UP node holds none.
 *  4. Node ids are dense: nodes[i] is node i, for i < nodes->len.
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
    SimDisk *disk;
    GArray *held; /* SimEventId, in the order the events came due */
} Node;

struct SimWorld {
    guint64 seed;
    gint64 now_ns;
    SimSched *sched;
    SimTrace *trace;
    SimNet *net;
    GHashTable *rngs; /* name -> SimRng; looked up, never iterated */
    GArray *nodes;    /* Node */
    GPtrArray *node_names;
    guint64 events;
    gboolean stop;
    SimNodeId current_node;
    void (*after_event)(SimWorld *world, void *user_data);
    void *after_event_data;
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
    event.fn(event.ctx, event.arg, event.arg_u64);
    world->current_node = SIM_NODE_NONE;
    if (world->after_event != NULL)
        world->after_event(world, world->after_event_data);
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
sim_world_set_after_event(SimWorld *world, void (*fn)(SimWorld *world, void *user_data),
                          void *user_data)
{
    world->after_event = fn;
    world->after_event_data = user_data;
}
