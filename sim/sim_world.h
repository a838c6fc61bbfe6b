/*
 * sim_world: one simulated run. It owns the clock, the event queue, the random
 * streams, the network, every node's disk and the node registry, and it is
 * passed explicitly to everything; there is no global state.
 *
 * Nodes. A node is a process on a host, with a lifecycle:
 *
 *              sim_node_crash / sim_node_power_loss
 *     UP ─────────────────────────────────────────▶ DOWN
 *      ▲ │ sim_node_pause                              │ sim_node_restart
 *      │ ▼                                             │
 *     PAUSED ──sim_node_resume──▶ UP ◀─────────────────┘
 *
 *  - A crash (the process dies, the host stays up) calls the model's
 *    `crash` callback, which must free the node's memory, and drops the node's
 *    timers and undelivered messages. Its disk keeps the page cache.
 *  - A power loss is a crash in which the host dies too: the disk loses what was
 *    not durable (see sim_disk.h), and peers learn nothing until they time out.
 *  - A restart calls the model's `restart` callback, which may use only the
 *    node's disk to rebuild its state.
 *  - A pause (a GC pause, a frozen VM) holds every event and delivery of the
 *    node; on resume they run, late, in their original order, and the node
 *    carries on believing what it believed before.
 *
 * Time. sim_now_ns() is the only clock. An event scheduled for "now" runs after
 * the events already due.
 *
 * Wall clocks. Each node also has a wall clock (what System.currentTimeMillis
 * returns on its host): virtual time plus the node's clock offset, 0 unless a
 * clock fault stepped it (sim_node_clock_step). It is for what a model stamps
 * or compares with a stamp (record timestamps, time-based retention and
 * segment rolls); timers and timeouts run on sim_now_ns, a monotonic clock.
 * A wall clock reads 0 at virtual time 0 and never below 0.
 */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include <glib.h>

#include "sim_marks.h"
#include "sim_rng.h"
#include "sim_sched.h"
#include "sim_trace.h"

typedef struct SimWorld SimWorld;
typedef struct SimNet SimNet;
typedef struct SimDisk SimDisk;
typedef struct SimMsg SimMsg;

typedef guint32 SimNodeId;
#define SIM_NODE_NONE G_MAXUINT32

#define SIM_NS_PER_US G_GINT64_CONSTANT(1000)
#define SIM_NS_PER_MS G_GINT64_CONSTANT(1000000)
#define SIM_NS_PER_S G_GINT64_CONSTANT(1000000000)

typedef enum {
    SIM_NODE_UP = 0,
    SIM_NODE_PAUSED,
    SIM_NODE_DOWN,
} SimNodeState;

/* Why a node learns that a connection failed. */
typedef enum {
    SIM_DISCONNECT_CLOSED = 1, /* the peer's process exited: its OS closed the socket */
    SIM_DISCONNECT_RESET,      /* a send reached a peer that no longer knows the connection */
} SimDisconnectReason;

/* A model's callbacks for one node. `ctx` is the model's object for the node. */
typedef struct {
    /* A message arrived; the model owns `msg` and frees it with sim_msg_free. */
    void (*message)(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg);
    /* The connection to `peer` failed; anything in flight on it is lost. */
    void (*disconnect)(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason);
    /* The process died: free every byte of the node's memory. */
    void (*crash)(SimWorld *world, void *ctx);
    /* The process starts again: rebuild from the disk. */
    void (*restart)(SimWorld *world, void *ctx);
} SimNodeOps;

/* A timer callback: `ctx` is the node's model object, `arg` the caller's. */
typedef void (*SimTimerFn)(SimWorld *world, void *ctx, void *arg);

typedef SimEventId SimTimerId;

SimWorld *sim_world_new(guint64 seed);
/* Frees the world, its nodes' engine state, disks and pending events. The
 * models' node objects are the caller's. */
void sim_world_free(SimWorld *world);

guint64 sim_world_seed(const SimWorld *world);
gint64 sim_now_ns(const SimWorld *world);
SimTrace *sim_world_trace(SimWorld *world);
/* The world's coverage-mark counters (sim_marks.h; transfer none). */
SimMarks *sim_world_marks(SimWorld *world);
SimNet *sim_world_net(SimWorld *world);

/* The random stream named `name`, created on first use and owned by the world. */
SimRng *sim_world_rng(SimWorld *world, const char *name);

/* Adds a node; ids are dense and start at 0. `ops` must outlive the world. */
SimNodeId sim_node_add(SimWorld *world, const char *name, const SimNodeOps *ops, void *ctx);
guint sim_world_node_count(const SimWorld *world);
const char *sim_node_name(const SimWorld *world, SimNodeId node);
SimNodeState sim_node_state(const SimWorld *world, SimNodeId node);
void *sim_node_ctx(const SimWorld *world, SimNodeId node);
const SimNodeOps *sim_node_ops(const SimWorld *world, SimNodeId node);
/* FALSE while the node's host is off (after a power loss, until restart). A
 * crashed process on a running host still has a kernel that resets
 * connections. */
gboolean sim_node_host_up(const SimWorld *world, SimNodeId node);
/* The node's disk, owned by the world; it survives crashes. */
SimDisk *sim_node_disk(SimWorld *world, SimNodeId node);
/* Counts the node's restarts; it changes on every crash. */
guint32 sim_node_incarnation(const SimWorld *world, SimNodeId node);
/* The node names indexed by id, for trace writers. (transfer none) */
const GPtrArray *sim_world_node_names(const SimWorld *world);

/* The largest clock offset either way (about 126 years); steps saturate
 * there, so wall time plus virtual time stays far inside int64. */
#define SIM_CLOCK_OFFSET_NS_MAX (G_GINT64_CONSTANT(4000000000) * SIM_NS_PER_S)

/* The node's wall clock: sim_now_ns plus its offset, at least 0. */
gint64 sim_node_wall_ns(const SimWorld *world, SimNodeId node);
/* The same in milliseconds, as Kafka's Time.milliseconds() reads it. */
gint64 sim_node_wall_ms(const SimWorld *world, SimNodeId node);
/* The node's offset: its wall clock minus virtual time (before the clamp at 0). */
gint64 sim_node_clock_offset_ns(const SimWorld *world, SimNodeId node);
/* Steps the node's wall clock by `delta_ns` (forward when positive), as an
 * NTP step or an operator's `date -s` does; traced. The offset survives
 * crashes and restarts: it belongs to the host, not the process. */
void sim_node_clock_step(SimWorld *world, SimNodeId node, gint64 delta_ns);

void sim_node_crash(SimWorld *world, SimNodeId node);
void sim_node_power_loss(SimWorld *world, SimNodeId node);
void sim_node_restart(SimWorld *world, SimNodeId node);
void sim_node_pause(SimWorld *world, SimNodeId node);
void sim_node_resume(SimWorld *world, SimNodeId node);

/* Runs `fn(world, ctx-of-node, arg)` on `node` after `delay_ns`. Dropped if the
 * node crashes first; held while it is paused. */
SimTimerId sim_timer_set(SimWorld *world, SimNodeId node, gint64 delay_ns, SimTimerFn fn,
                         void *arg);
/* Cancels a timer; FALSE if it already fired, was cancelled or was dropped. */
gboolean sim_timer_cancel(SimWorld *world, SimTimerId id);
gboolean sim_timer_pending(const SimWorld *world, SimTimerId id);

/* Engine-level scheduling, owned by no node (faults, network internals). */
SimEventId sim_world_schedule(SimWorld *world, gint64 time_ns, SimEventFn fn,
                              SimEventDropFn drop_fn, void *ctx, void *arg, guint64 arg_u64);
/* Scheduling on behalf of a node: dropped if the node crashes, held while it is
 * paused, and discarded through `drop_fn`. */
SimEventId sim_world_schedule_for(SimWorld *world, SimNodeId node, gint64 time_ns, SimEventFn fn,
                                  SimEventDropFn drop_fn, void *arg, guint64 arg_u64);
gboolean sim_world_cancel(SimWorld *world, SimEventId id);

/* Runs one event; FALSE when the queue is empty. */
gboolean sim_world_step(SimWorld *world);
/* Runs every event due at or before `time_ns`, then sets the clock to it. */
void sim_world_run_until(SimWorld *world, gint64 time_ns);
/* Stops sim_world_run_until after the current event (from a callback). */
void sim_world_stop(SimWorld *world);
guint64 sim_world_events(const SimWorld *world);
guint sim_world_pending(const SimWorld *world);

/* A hook run after every dispatched event, when set: tests and `ksim run
 * --paranoid` check invariants with it. It must change nothing the models can
 * see (no scheduling, no RNG draws, no trace records), so a run with a hook
 * has the fingerprint of the same run without. Unset (fn NULL), it costs one
 * branch per event. */
typedef void (*SimAfterEventFn)(SimWorld *world, void *user_data);
void sim_world_set_after_event(SimWorld *world, SimAfterEventFn fn, void *user_data);

/* Checks the world's invariants (see sim_world.c) and those of its queue and
 * network and, with `disks`, of every node's disk changed since it was last
 * checked (sim_disk_changes; a disk's check costs O(its unsynced writes), the
 * most of all). It changes nothing a model can see; it only remembers which
 * disks it checked. */
void sim_world_check_invariants(SimWorld *world, gboolean disks);

/* The event the world is dispatching, for failure reports. */
typedef struct {
    guint64 number;        /* 1 for the run's first event (sim_world_events then) */
    gint64 time_ns;
    SimNodeId owner;       /* the node the event belongs to, or SIM_NODE_NONE */
    gboolean after;        /* its function returned; the after-event hook runs */
    gboolean traced;       /* it added a trace record; then: */
    guint64 record_index;  /* the first one's index (0-based, as in the JSON Lines) */
    SimTraceRecord record; /* and the record itself */
} SimWorldEvent;

/* Fills `out` and returns TRUE while an event is being dispatched (its
 * function or the after-event hook runs); FALSE between events. */
gboolean sim_world_current_event(const SimWorld *world, SimWorldEvent *out);
/* The current event in words, as the trace names it, e.g. "event 812 at
 * 1.234567890 s: deliver broker-2 <- broker-1, a=7 b=412 (trace record 9021)";
 * "no event (between events, at 12.000000000 s)" outside dispatch.
 * (transfer full) */
char *sim_world_describe_event(const SimWorld *world);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimWorld, sim_world_free)

#endif
