/*
 * Unit tests for sim_world: timers at the right virtual time, cancel, the node
 * lifecycle (crash, power loss, restart, pause, resume), run_until and stop,
 * and the rule that an event scheduled for "now" runs after those already
 * due, and what the world says of the event it dispatches. Every test runs a
 * real world; the world's invariants (its nodes', queue's, network's and
 * disks') are checked after every event.
 */
#include "sim_world.h"

#include "sim_net.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- fixture ---- */

enum { NODES = 3 };

typedef enum { ENTRY_TIMER = 1, ENTRY_MESSAGE, ENTRY_EVENT, ENTRY_DROP } EntryKind;

/* One thing that happened on a node, in the order it happened. */
typedef struct {
    gint64 time_ns;
    guint32 node;
    guint32 kind;
    guint32 tag;
} Entry;

typedef struct Fixture Fixture;

typedef struct {
    Fixture *fx;
    SimNodeId id;
    int crashes;
    int restarts;
    gint64 restart_timer_ns; /* a timer the restart callback sets, or -1 */
} NodeCtx;

struct Fixture {
    SimWorld *world;
    NodeCtx nodes[NODES];
    GArray *log; /* Entry */
};

typedef struct {
    SimMsg header;
    guint32 tag;
} TestMsg;

static void
log_entry(Fixture *fx, SimNodeId node, EntryKind kind, guint32 tag)
{
    Entry entry = {sim_now_ns(fx->world), node, kind, tag};
    g_array_append_val(fx->log, entry);
}

static void
on_timer(SimWorld *world, void *ctx, void *arg)
{
    NodeCtx *node = ctx;
    assert_ptr_equal(world, node->fx->world);
    log_entry(node->fx, node->id, ENTRY_TIMER, GPOINTER_TO_UINT(arg));
}

static void
on_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    NodeCtx *node = ctx;
    (void)world;
    (void)from;
    log_entry(node->fx, node->id, ENTRY_MESSAGE, ((TestMsg *)msg)->tag);
    sim_msg_free(msg);
}

static void
on_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)ctx;
    (void)peer;
    (void)reason;
}

static void
on_crash(SimWorld *world, void *ctx)
{
    NodeCtx *node = ctx;
    (void)world;
    node->crashes++;
}

static void
on_restart(SimWorld *world, void *ctx)
{
    NodeCtx *node = ctx;
    node->restarts++;
    assert_int_equal(sim_node_state(world, node->id), SIM_NODE_UP);
    if (node->restart_timer_ns >= 0)
        sim_timer_set(world, node->id, node->restart_timer_ns, on_timer, GUINT_TO_POINTER(99));
}

static const SimNodeOps test_ops = {on_message, on_disconnect, on_crash, on_restart};

static void
check_after_event(SimWorld *world, void *user_data)
{
    (void)user_data;
    sim_world_check_invariants(world, TRUE);
}

static int
setup(void **state)
{
    Fixture *fx = g_new0(Fixture, 1);
    fx->world = sim_world_new(1);
    fx->log = g_array_new(FALSE, FALSE, sizeof(Entry));
    static const char *const names[NODES] = {"n0", "n1", "n2"};
    for (guint i = 0; i < NODES; i++) {
        fx->nodes[i] = (NodeCtx){fx, i, 0, 0, -1};
        assert_int_equal(sim_node_add(fx->world, names[i], &test_ops, &fx->nodes[i]), i);
    }
    sim_world_set_after_event(fx->world, check_after_event, NULL);
    *state = fx;
    return 0;
}

static int
teardown(void **state)
{
    Fixture *fx = *state;
    sim_world_free(fx->world);
    g_array_free(fx->log, TRUE);
    g_free(fx);
    return 0;
}

/* ---- helpers ---- */

static SimTimerId
timer(Fixture *fx, SimNodeId node, gint64 delay_ns, guint32 tag)
{
    return sim_timer_set(fx->world, node, delay_ns, on_timer, GUINT_TO_POINTER(tag));
}

static void
send_msg(Fixture *fx, SimNodeId from, SimNodeId to, guint32 tag)
{
    TestMsg *msg = g_new0(TestMsg, 1);
    msg->header.size_bytes = 100;
    msg->tag = tag;
    sim_net_send(sim_world_net(fx->world), from, to, &msg->header);
}

/* Asserts the log is exactly `expected` (count entries). */
static void
assert_log(const Fixture *fx, const Entry *expected, guint count)
{
    for (guint i = 0; i < MIN(count, fx->log->len); i++) {
        const Entry *got = &g_array_index(fx->log, Entry, i);
        if (got->time_ns != expected[i].time_ns || got->node != expected[i].node ||
            got->kind != expected[i].kind || got->tag != expected[i].tag)
            fail_msg("entry %u: got {%" G_GINT64_FORMAT " ns, node %u, kind %u, tag %u}, "
                     "expected {%" G_GINT64_FORMAT " ns, node %u, kind %u, tag %u}",
                     i, got->time_ns, got->node, got->kind, got->tag, expected[i].time_ns,
                     expected[i].node, expected[i].kind, expected[i].tag);
    }
    assert_int_equal(fx->log->len, count);
}

#define MS SIM_NS_PER_MS
#define US SIM_NS_PER_US

/* ---- registry ---- */

static void
test_sim_world_nodes_are_registered(void **state)
{
    /* Goal: node ids are dense, and the registry returns each node's name,
     * ctx, ops and initial state. */
    Fixture *fx = *state;
    assert_int_equal(sim_world_node_count(fx->world), NODES);
    const GPtrArray *names = sim_world_node_names(fx->world);
    assert_int_equal(names->len, NODES);
    for (SimNodeId i = 0; i < NODES; i++) {
        g_autofree char *name = g_strdup_printf("n%u", i);
        assert_string_equal(sim_node_name(fx->world, i), name);
        assert_string_equal(g_ptr_array_index(names, i), name);
        assert_ptr_equal(sim_node_ctx(fx->world, i), &fx->nodes[i]);
        assert_ptr_equal(sim_node_ops(fx->world, i), &test_ops);
        assert_int_equal(sim_node_state(fx->world, i), SIM_NODE_UP);
        assert_true(sim_node_host_up(fx->world, i));
        assert_int_equal(sim_node_incarnation(fx->world, i), 0);
        assert_non_null(sim_node_disk(fx->world, i));
    }
    assert_int_equal(sim_world_seed(fx->world), 1);
    assert_int_equal(sim_now_ns(fx->world), 0);
    assert_non_null(sim_world_trace(fx->world));
    assert_non_null(sim_world_net(fx->world));
}

/* ---- timers ---- */

static void
test_sim_world_timers_fire_at_virtual_time(void **state)
{
    /* Goal: each timer fires once, at set time + delay, in (time, set order). */
    Fixture *fx = *state;
    static const struct {
        SimNodeId node;
        gint64 delay_ns;
        guint32 tag;
    } timers[] = {
        {0, 30 * MS, 1}, {1, 10 * MS, 2}, {2, 10 * MS, 3}, {0, 0, 4},
        {1, 20 * MS, 5}, {0, 10 * MS, 6}, {2, 1, 7},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(timers); i++)
        timer(fx, timers[i].node, timers[i].delay_ns, timers[i].tag);
    assert_int_equal(sim_world_pending(fx->world), G_N_ELEMENTS(timers));
    sim_world_run_until(fx->world, 100 * MS);
    static const Entry expected[] = {
        {0, 0, ENTRY_TIMER, 4},       {1, 2, ENTRY_TIMER, 7},       {10 * MS, 1, ENTRY_TIMER, 2},
        {10 * MS, 2, ENTRY_TIMER, 3}, {10 * MS, 0, ENTRY_TIMER, 6}, {20 * MS, 1, ENTRY_TIMER, 5},
        {30 * MS, 0, ENTRY_TIMER, 1},
    };
    assert_log(fx, expected, G_N_ELEMENTS(expected));
    assert_int_equal(sim_world_events(fx->world), G_N_ELEMENTS(timers));
    assert_int_equal(sim_world_pending(fx->world), 0);
    /* A timer set later counts its delay from the current time. */
    timer(fx, 1, 5 * MS, 8);
    sim_world_run_until(fx->world, 200 * MS);
    assert_int_equal(g_array_index(fx->log, Entry, fx->log->len - 1).time_ns, 105 * MS);
}

static void
test_sim_world_timer_cancel(void **state)
{
    /* Goal: a cancelled timer never fires; cancelling twice, or after the
     * timer fired, returns FALSE. */
    Fixture *fx = *state;
    SimTimerId first = timer(fx, 0, 1 * MS, 1);
    SimTimerId second = timer(fx, 0, 2 * MS, 2);
    SimTimerId third = timer(fx, 1, 3 * MS, 3);
    assert_true(sim_timer_pending(fx->world, second));
    assert_true(sim_timer_cancel(fx->world, second));
    assert_false(sim_timer_pending(fx->world, second));
    assert_false(sim_timer_cancel(fx->world, second));
    assert_int_equal(sim_world_pending(fx->world), 2);
    sim_world_run_until(fx->world, 10 * MS);
    static const Entry expected[] = {{1 * MS, 0, ENTRY_TIMER, 1}, {3 * MS, 1, ENTRY_TIMER, 3}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
    assert_false(sim_timer_pending(fx->world, first));
    assert_false(sim_timer_cancel(fx->world, first));
    assert_false(sim_timer_cancel(fx->world, third));
}

/* ---- crash and restart ---- */

static void
test_sim_world_crash_drops_timers_and_calls_crash(void **state)
{
    /* Goal: a crash calls the crash callback once and drops the node's
     * pending timers; other nodes' timers still fire. */
    Fixture *fx = *state;
    timer(fx, 0, 10 * MS, 1);
    timer(fx, 0, 20 * MS, 2);
    timer(fx, 0, 30 * MS, 3);
    timer(fx, 1, 20 * MS, 4);
    sim_world_run_until(fx->world, 15 * MS);
    sim_node_crash(fx->world, 0);
    assert_int_equal(fx->nodes[0].crashes, 1);
    assert_int_equal(sim_node_state(fx->world, 0), SIM_NODE_DOWN);
    assert_true(sim_node_host_up(fx->world, 0));
    assert_int_equal(sim_node_incarnation(fx->world, 0), 1);
    sim_node_crash(fx->world, 0); /* already down: nothing happens */
    assert_int_equal(fx->nodes[0].crashes, 1);
    sim_world_run_until(fx->world, 100 * MS);
    static const Entry expected[] = {{10 * MS, 0, ENTRY_TIMER, 1}, {20 * MS, 1, ENTRY_TIMER, 4}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
    assert_int_equal(fx->nodes[1].crashes, 0);
    assert_int_equal(sim_world_pending(fx->world), 0);
}

static void
test_sim_world_crashed_node_timer_handles_are_dead(void **state)
{
    /* Goal: after a crash the node's timers count as dropped, as sim_world.h
     * promises: not pending, and cancelling them returns FALSE. */
    Fixture *fx = *state;
    SimTimerId id = timer(fx, 0, 10 * MS, 1);
    sim_node_crash(fx->world, 0);
    assert_false(sim_timer_pending(fx->world, id));
    assert_false(sim_timer_cancel(fx->world, id));
}

/* Events scheduled with sim_world_schedule_for get the world as ctx, so the
 * fixture travels in arg. */
static void
count_drop(void *ctx, void *arg, guint64 tag)
{
    Fixture *fx = arg;
    assert_ptr_equal(ctx, fx->world);
    log_entry(fx, 0, ENTRY_DROP, (guint32)tag);
}

static void
node_event(void *ctx, void *arg, guint64 tag)
{
    Fixture *fx = arg;
    assert_ptr_equal(ctx, fx->world);
    log_entry(fx, 0, ENTRY_EVENT, (guint32)tag);
}

static void
test_sim_world_crash_discards_events_through_drop_fn(void **state)
{
    /* Goal: events scheduled for a node that crashes are discarded through
     * their drop_fn (queued ones when they come due, held ones at once) and
     * never run. */
    Fixture *fx = *state;
    sim_world_schedule_for(fx->world, 0, 5 * MS, node_event, count_drop, fx, 1);
    sim_world_schedule_for(fx->world, 0, 50 * MS, node_event, count_drop, fx, 2);
    sim_world_run_until(fx->world, 1 * MS);
    sim_node_pause(fx->world, 0);
    sim_world_run_until(fx->world, 10 * MS); /* event 1 is now held */
    assert_int_equal(fx->log->len, 0);
    sim_node_crash(fx->world, 0);
    assert_int_equal(fx->log->len, 1); /* the held event was dropped at once */
    sim_world_run_until(fx->world, 100 * MS);
    /* The queued event is dropped lazily, when it reaches the top of the
     * queue; its drop_fn runs before the clock moves, so its time is not
     * asserted. */
    assert_int_equal(fx->log->len, 2);
    const Entry *held = &g_array_index(fx->log, Entry, 0);
    const Entry *queued = &g_array_index(fx->log, Entry, 1);
    assert_int_equal(held->kind, ENTRY_DROP);
    assert_int_equal(held->tag, 1);
    assert_int_equal(held->time_ns, 10 * MS);
    assert_int_equal(queued->kind, ENTRY_DROP);
    assert_int_equal(queued->tag, 2);
    assert_int_equal(sim_world_pending(fx->world), 0);
}

static void
test_sim_world_restart_calls_restart(void **state)
{
    /* Goal: restart brings a crashed node up, calls its restart callback
     * (which may set timers), and is a no-op for a node that is up. */
    Fixture *fx = *state;
    fx->nodes[0].restart_timer_ns = 4 * MS;
    sim_node_restart(fx->world, 0);
    assert_int_equal(fx->nodes[0].restarts, 0);
    timer(fx, 0, 10 * MS, 1);
    sim_world_run_until(fx->world, 5 * MS);
    sim_node_crash(fx->world, 0);
    sim_world_run_until(fx->world, 6 * MS);
    sim_node_restart(fx->world, 0);
    assert_int_equal(fx->nodes[0].restarts, 1);
    assert_int_equal(sim_node_state(fx->world, 0), SIM_NODE_UP);
    assert_int_equal(sim_node_incarnation(fx->world, 0), 1);
    sim_world_run_until(fx->world, 100 * MS);
    /* The old incarnation's timer (at 10ms) is gone; the new one fires. */
    static const Entry expected[] = {{10 * MS, 0, ENTRY_TIMER, 99}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
}

static void
test_sim_world_power_loss_turns_host_off_until_restart(void **state)
{
    /* Goal: a power loss is a crash (callback, timers dropped) with the host
     * off until restart. */
    Fixture *fx = *state;
    timer(fx, 2, 10 * MS, 1);
    sim_node_power_loss(fx->world, 2);
    assert_int_equal(fx->nodes[2].crashes, 1);
    assert_int_equal(sim_node_state(fx->world, 2), SIM_NODE_DOWN);
    assert_false(sim_node_host_up(fx->world, 2));
    sim_world_run_until(fx->world, 20 * MS);
    assert_int_equal(fx->log->len, 0);
    sim_node_restart(fx->world, 2);
    assert_true(sim_node_host_up(fx->world, 2));
    assert_int_equal(fx->nodes[2].restarts, 1);
}

/* ---- pause ---- */

static void
test_sim_world_pause_holds_and_resume_runs_late(void **state)
{
    /* Goal: a paused node's due timers and deliveries wait; on resume they
     * run at the resume time, in order; timers due later fire on time; other
     * nodes are unaffected. */
    Fixture *fx = *state;
    send_msg(fx, 1, 0, 7); /* arrives at 100us (default latency) */
    timer(fx, 0, 10 * MS, 1);
    timer(fx, 0, 20 * MS, 2);
    timer(fx, 0, 40 * MS, 3);
    timer(fx, 1, 15 * MS, 4);
    sim_world_run_until(fx->world, 50 * US);
    sim_node_pause(fx->world, 0);
    assert_int_equal(sim_node_state(fx->world, 0), SIM_NODE_PAUSED);
    sim_world_run_until(fx->world, 30 * MS);
    static const Entry before[] = {{15 * MS, 1, ENTRY_TIMER, 4}};
    assert_log(fx, before, G_N_ELEMENTS(before));
    assert_int_equal(sim_world_pending(fx->world), 4);
    sim_node_resume(fx->world, 0);
    assert_int_equal(sim_node_state(fx->world, 0), SIM_NODE_UP);
    sim_world_run_until(fx->world, 100 * MS);
    static const Entry expected[] = {
        {15 * MS, 1, ENTRY_TIMER, 4}, {30 * MS, 0, ENTRY_MESSAGE, 7}, {30 * MS, 0, ENTRY_TIMER, 1},
        {30 * MS, 0, ENTRY_TIMER, 2}, {40 * MS, 0, ENTRY_TIMER, 3},
    };
    assert_log(fx, expected, G_N_ELEMENTS(expected));
}

static void
test_sim_world_resume_keeps_due_order(void **state)
{
    /* Goal: held events run on resume in the order they came due, even when
     * that differs from the order they were scheduled in: a timer set first
     * for later, then a shorter timer and a delivery due earlier. A model
     * must not see its timeout fire before a reply that arrived in time. */
    Fixture *fx = *state;
    timer(fx, 0, 10 * MS, 1); /* due at 10ms, scheduled first */
    sim_world_run_until(fx->world, 1 * MS);
    sim_node_pause(fx->world, 0);
    send_msg(fx, 1, 0, 7);   /* arrives at 1.1ms */
    timer(fx, 0, 3 * MS, 2); /* due at 4ms */
    sim_world_run_until(fx->world, 20 * MS);
    assert_int_equal(fx->log->len, 0);
    sim_node_resume(fx->world, 0);
    sim_world_run_until(fx->world, 30 * MS);
    static const Entry expected[] = {
        {20 * MS, 0, ENTRY_MESSAGE, 7},
        {20 * MS, 0, ENTRY_TIMER, 2},
        {20 * MS, 0, ENTRY_TIMER, 1},
    };
    assert_log(fx, expected, G_N_ELEMENTS(expected));
}

static void
test_sim_world_timer_cancelled_while_held_never_fires(void **state)
{
    /* Goal: a timer held by a pause and cancelled before resume never fires. */
    Fixture *fx = *state;
    SimTimerId held = timer(fx, 0, 5 * MS, 1);
    timer(fx, 0, 6 * MS, 2);
    sim_node_pause(fx->world, 0);
    sim_world_run_until(fx->world, 10 * MS);
    assert_true(sim_timer_pending(fx->world, held));
    assert_true(sim_timer_cancel(fx->world, held));
    assert_false(sim_timer_pending(fx->world, held));
    assert_false(sim_timer_cancel(fx->world, held));
    /* The cancelled timer's slot may be reused while it sits in the held list. */
    timer(fx, 1, 1 * MS, 3);
    sim_node_resume(fx->world, 0);
    sim_world_run_until(fx->world, 20 * MS);
    static const Entry expected[] = {{10 * MS, 0, ENTRY_TIMER, 2}, {11 * MS, 1, ENTRY_TIMER, 3}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
}

static void
test_sim_world_crash_while_paused(void **state)
{
    /* Goal: a paused node can crash: its held and queued timers are dropped,
     * and after restart it is up with none of them. */
    Fixture *fx = *state;
    timer(fx, 0, 5 * MS, 1);
    timer(fx, 0, 50 * MS, 2);
    sim_node_pause(fx->world, 0);
    sim_world_run_until(fx->world, 10 * MS);
    sim_node_crash(fx->world, 0);
    assert_int_equal(fx->nodes[0].crashes, 1);
    sim_node_resume(fx->world, 0); /* not paused any more: nothing happens */
    assert_int_equal(sim_node_state(fx->world, 0), SIM_NODE_DOWN);
    sim_node_restart(fx->world, 0);
    sim_world_run_until(fx->world, 100 * MS);
    assert_int_equal(fx->log->len, 0);
    assert_int_equal(sim_world_pending(fx->world), 0);
}

/* ---- the dispatch loop ---- */

static void
test_sim_world_run_until_stops_at_limit(void **state)
{
    /* Goal: run_until runs the events due up to and including the limit,
     * leaves later ones, and sets the clock to the limit. */
    Fixture *fx = *state;
    sim_world_run_until(fx->world, 3 * MS); /* nothing to run: the clock moves */
    assert_int_equal(sim_now_ns(fx->world), 3 * MS);
    timer(fx, 0, 2 * MS, 1);
    timer(fx, 0, 7 * MS, 2);
    timer(fx, 0, 12 * MS, 3);
    sim_world_run_until(fx->world, 10 * MS);
    static const Entry first[] = {{5 * MS, 0, ENTRY_TIMER, 1}, {10 * MS, 0, ENTRY_TIMER, 2}};
    assert_log(fx, first, G_N_ELEMENTS(first));
    assert_int_equal(sim_now_ns(fx->world), 10 * MS);
    assert_int_equal(sim_world_pending(fx->world), 1);
    sim_world_run_until(fx->world, 12 * MS - 1);
    assert_int_equal(sim_now_ns(fx->world), 12 * MS - 1);
    assert_int_equal(fx->log->len, 2);
    sim_world_run_until(fx->world, 1000 * MS);
    assert_int_equal(fx->log->len, 3);
    assert_int_equal(sim_now_ns(fx->world), 1000 * MS);
    assert_false(sim_world_step(fx->world));
}

static void
stop_timer(SimWorld *world, void *ctx, void *arg)
{
    on_timer(world, ctx, arg);
    sim_world_stop(world);
}

static void
test_sim_world_stop_ends_run_after_current_event(void **state)
{
    /* Goal: sim_world_stop from a callback ends run_until after that event,
     * leaving the clock at the event's time; the next run continues. */
    Fixture *fx = *state;
    sim_timer_set(fx->world, 0, 20 * MS, stop_timer, GUINT_TO_POINTER(1));
    timer(fx, 1, 20 * MS, 2);
    timer(fx, 1, 25 * MS, 3);
    sim_world_run_until(fx->world, 100 * MS);
    static const Entry first[] = {{20 * MS, 0, ENTRY_TIMER, 1}};
    assert_log(fx, first, G_N_ELEMENTS(first));
    assert_int_equal(sim_now_ns(fx->world), 20 * MS);
    sim_world_run_until(fx->world, 100 * MS);
    assert_int_equal(fx->log->len, 3);
    assert_int_equal(sim_now_ns(fx->world), 100 * MS);
}

static void
schedule_now_timer(SimWorld *world, void *ctx, void *arg)
{
    NodeCtx *node = ctx;
    on_timer(world, ctx, arg);
    sim_timer_set(world, node->id, 0, on_timer, GUINT_TO_POINTER(GPOINTER_TO_UINT(arg) + 10));
}

static void
test_sim_world_now_event_runs_after_due(void **state)
{
    /* Goal: a timer set for "now" during dispatch runs after every event
     * already due at this time, and before later ones. */
    Fixture *fx = *state;
    sim_timer_set(fx->world, 0, 10 * MS, schedule_now_timer, GUINT_TO_POINTER(1));
    timer(fx, 1, 10 * MS, 2);
    sim_timer_set(fx->world, 2, 10 * MS, schedule_now_timer, GUINT_TO_POINTER(3));
    timer(fx, 1, 10 * MS + 1, 4);
    sim_world_run_until(fx->world, 100 * MS);
    static const Entry expected[] = {
        {10 * MS, 0, ENTRY_TIMER, 1},  {10 * MS, 1, ENTRY_TIMER, 2},
        {10 * MS, 2, ENTRY_TIMER, 3},  {10 * MS, 0, ENTRY_TIMER, 11},
        {10 * MS, 2, ENTRY_TIMER, 13}, {10 * MS + 1, 1, ENTRY_TIMER, 4},
    };
    assert_log(fx, expected, G_N_ELEMENTS(expected));
}

static void
engine_event(void *ctx, void *arg, guint64 tag)
{
    Fixture *fx = ctx;
    (void)arg;
    log_entry(fx, 0, ENTRY_EVENT, (guint32)tag);
}

static void
test_sim_world_engine_events_ignore_node_state(void **state)
{
    /* Goal: engine-level events (owned by no node) run on time whatever
     * state the nodes are in, and can be cancelled. */
    Fixture *fx = *state;
    sim_node_pause(fx->world, 0);
    sim_node_crash(fx->world, 1);
    sim_world_schedule(fx->world, 5 * MS, engine_event, NULL, fx, NULL, 1);
    SimEventId cancelled = sim_world_schedule(fx->world, 6 * MS, engine_event, NULL, fx, NULL, 2);
    assert_true(sim_world_cancel(fx->world, cancelled));
    assert_false(sim_world_cancel(fx->world, cancelled));
    sim_world_run_until(fx->world, 10 * MS);
    static const Entry expected[] = {{5 * MS, 0, ENTRY_EVENT, 1}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
    assert_int_equal(sim_world_events(fx->world), 1);
}

typedef struct {
    SimWorldEvent during;
    gboolean seen;
    char *described;
} EventProbe;

static void
probe_timer(SimWorld *world, void *ctx, void *arg)
{
    EventProbe *probe = arg;
    (void)ctx;
    sim_trace_add(sim_world_trace(world), sim_now_ns(world), SIM_TRACE_MODEL, 1, 2, 5, 6, NULL);
    probe->seen = sim_world_current_event(world, &probe->during);
    probe->described = sim_world_describe_event(world);
}

static void
test_sim_world_names_the_event_it_dispatches(void **state)
{
    /* Goal: during dispatch the world reports the event's number, time, node and first record. */
    Fixture *fx = *state;
    EventProbe probe = {0};
    sim_timer_set(fx->world, 0, 1 * SIM_NS_PER_MS, on_timer, GUINT_TO_POINTER(1));
    sim_timer_set(fx->world, 1, 3 * SIM_NS_PER_MS + 7, probe_timer, &probe);
    SimWorldEvent outside;
    assert_false(sim_world_current_event(fx->world, &outside));
    sim_world_run_until(fx->world, 10 * SIM_NS_PER_MS);
    assert_true(probe.seen);
    assert_int_equal(probe.during.number, 2);
    assert_int_equal(probe.during.time_ns, 3 * SIM_NS_PER_MS + 7);
    assert_int_equal(probe.during.owner, 1);
    assert_false(probe.during.after);
    assert_true(probe.during.traced);
    /* The timer's own record comes first, then the model's note. */
    assert_int_equal(probe.during.record.kind, SIM_TRACE_TIMER);
    assert_int_equal(probe.during.record.node, 1);
    assert_int_equal(probe.during.record_index, 1);
    assert_string_equal(probe.described, "event 2 at 0.003000007 s on n1: timer node=n1 a=0 b=0 "
                                         "(trace record 1)");
    assert_false(sim_world_current_event(fx->world, &outside));
    g_autofree char *between = sim_world_describe_event(fx->world);
    assert_string_equal(between, "no event (between events, at 0.010000000 s)");
    g_free(probe.described);
}

static void
test_sim_world_wall_clock_steps(void **state)
{
    /* Goal: a node's wall clock is virtual time until a step moves it; steps
     * add up, leave other nodes' clocks and timers (virtual time) alone,
     * survive a crash and restart, and a step back past the epoch reads 0. */
    Fixture *fx = *state;
    timer(fx, 0, 10 * MS, 1);
    sim_world_run_until(fx->world, 4 * MS);
    assert_int_equal(sim_node_wall_ns(fx->world, 0), 4 * MS);
    sim_node_clock_step(fx->world, 0, 30 * SIM_NS_PER_S);
    sim_node_clock_step(fx->world, 0, 2 * SIM_NS_PER_S);
    assert_int_equal(sim_node_wall_ms(fx->world, 0), 32004);
    assert_int_equal(sim_node_clock_offset_ns(fx->world, 0), 32 * SIM_NS_PER_S);
    assert_int_equal(sim_node_wall_ms(fx->world, 1), 4);
    sim_world_run_until(fx->world, 20 * MS);
    static const Entry expected[] = {{10 * MS, 0, ENTRY_TIMER, 1}};
    assert_log(fx, expected, G_N_ELEMENTS(expected));
    sim_node_crash(fx->world, 0);
    sim_node_restart(fx->world, 0);
    assert_int_equal(sim_node_wall_ms(fx->world, 0), 32020);
    sim_node_clock_step(fx->world, 1, -1 * SIM_NS_PER_S);
    assert_int_equal(sim_node_wall_ns(fx->world, 1), 0);
    sim_node_clock_step(fx->world, 1, SIM_CLOCK_OFFSET_NS_MAX);
    sim_node_clock_step(fx->world, 1, SIM_CLOCK_OFFSET_NS_MAX);
    assert_int_equal(sim_node_clock_offset_ns(fx->world, 1), SIM_CLOCK_OFFSET_NS_MAX);
}

static void
test_sim_world_free_accepts_null(void **state)
{
    /* Goal: sim_world_free(NULL) is a no-op, as the house style promises. */
    (void)state;
    sim_world_free(NULL);
}

#define WORLD_TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int
main(void)
{
    const struct CMUnitTest tests[] = {
        WORLD_TEST(test_sim_world_nodes_are_registered),
        WORLD_TEST(test_sim_world_timers_fire_at_virtual_time),
        WORLD_TEST(test_sim_world_timer_cancel),
        WORLD_TEST(test_sim_world_crash_drops_timers_and_calls_crash),
        WORLD_TEST(test_sim_world_crashed_node_timer_handles_are_dead),
        WORLD_TEST(test_sim_world_crash_discards_events_through_drop_fn),
        WORLD_TEST(test_sim_world_restart_calls_restart),
        WORLD_TEST(test_sim_world_power_loss_turns_host_off_until_restart),
        WORLD_TEST(test_sim_world_pause_holds_and_resume_runs_late),
        WORLD_TEST(test_sim_world_resume_keeps_due_order),
        WORLD_TEST(test_sim_world_timer_cancelled_while_held_never_fires),
        WORLD_TEST(test_sim_world_crash_while_paused),
        WORLD_TEST(test_sim_world_run_until_stops_at_limit),
        WORLD_TEST(test_sim_world_stop_ends_run_after_current_event),
        WORLD_TEST(test_sim_world_now_event_runs_after_due),
        WORLD_TEST(test_sim_world_engine_events_ignore_node_state),
        WORLD_TEST(test_sim_world_names_the_event_it_dispatches),
        WORLD_TEST(test_sim_world_wall_clock_steps),
        cmocka_unit_test(test_sim_world_free_accepts_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
