/*
 * sim_sched: the event queue of a simulated world.
 *
 * Events are ordered by (time_ns, seq), where seq is a per-queue insertion
 * counter, so events due at the same time run in the order they were scheduled,
 * on every run. An event scheduled during dispatch for the current time runs
 * after every event already due at that time.
 *
 * Cancelling is O(1) and never scans the queue: an event lives in a slot; its
 * heap entry names the slot and the seq it was scheduled with. Cancelling frees
 * the slot at once; a heap entry whose seq no longer matches its slot is stale
 * and is skipped when it reaches the top. When stale entries outnumber live
 * ones the heap is rebuilt, so the amortized cost of a cancel stays O(1).
 *
 * The queue knows nothing of nodes; it carries an owner and an incarnation with
 * each event for sim_world, which uses them to drop the timers of a crashed node.
 */
#ifndef SIM_SCHED_H
#define SIM_SCHED_H

#include <glib.h>

typedef struct SimSched SimSched;

/* What an event does when it runs. `ctx` and `arg` are the caller's; the
 * queue neither owns nor frees them. */
typedef void (*SimEventFn)(void *ctx, void *arg, guint64 arg_u64);

/* Called instead of the event function when an event is discarded without
 * running (cancelled, or dropped by sim_world because its node crashed), so an
 * owned argument such as an in-flight message can be freed. */
typedef void (*SimEventDropFn)(void *ctx, void *arg, guint64 arg_u64);

/* A handle on a scheduled event; {0, 0} is "no event". Handles of events that
 * already ran or were cancelled are harmless to cancel again. */
typedef struct {
    guint64 seq;
    guint32 slot;
} SimEventId;

#define SIM_EVENT_ID_NONE ((SimEventId){0, 0})

/* The bounds the queue asserts: at most 2^24 pending events at once and 2^40
 * events scheduled over a queue's lifetime. */
#define SIM_SCHED_PENDING_MAX (1u << 24)
#define SIM_SCHED_SEQ_MAX (G_GUINT64_CONSTANT(1) << 40)

/* A popped event, copied out of its slot. */
typedef struct {
    gint64 time_ns;
    guint64 seq;
    SimEventFn fn;
    SimEventDropFn drop_fn;
    void *ctx;
    void *arg;
    guint64 arg_u64;
    guint32 owner;
    guint32 incarnation;
} SimEvent;

SimSched *sim_sched_new(void);
/* Frees the queue; pending events are discarded through their drop_fn. */
void sim_sched_free(SimSched *sched);

/* Schedules `fn(ctx, arg, arg_u64)` at `time_ns`. `drop_fn` may be NULL. */
SimEventId sim_sched_push(SimSched *sched, gint64 time_ns, SimEventFn fn, SimEventDropFn drop_fn,
                          void *ctx, void *arg, guint64 arg_u64, guint32 owner,
                          guint32 incarnation);

/* Cancels a pending event, calling its drop_fn. Returns FALSE when the event
 * already ran or was cancelled. */
gboolean sim_sched_cancel(SimSched *sched, SimEventId id);

/* TRUE when `id` names an event that is still pending. */
gboolean sim_sched_pending(const SimSched *sched, SimEventId id);

/* Copies a pending event into `out`; FALSE when it is not pending. */
gboolean sim_sched_get(const SimSched *sched, SimEventId id, SimEvent *out);

/* Pops the earliest pending event into `out`; FALSE when the queue is empty. */
gboolean sim_sched_pop(SimSched *sched, SimEvent *out);

/* Copies the earliest pending event into `out` without removing it; FALSE
 * when the queue is empty. */
gboolean sim_sched_peek(SimSched *sched, SimEvent *out);

/* Takes the earliest pending event out of the order but keeps it pending and
 * its handle valid: it is "held" (a paused node's event). Returns its handle. */
SimEventId sim_sched_hold_top(SimSched *sched);

/* Puts a held event back in the order at `time_ns`. Its handle stays valid;
 * among events due at the same time it runs after those already queued, and
 * held events unheld one after another run in that order. A held event
 * cancelled meanwhile is ignored (FALSE). */
gboolean sim_sched_unhold(SimSched *sched, SimEventId id, gint64 time_ns);

/* The time of the earliest pending event, or G_MAXINT64 when empty. */
gint64 sim_sched_peek_time(SimSched *sched);

/* Number of pending (not cancelled) events. */
guint sim_sched_size(const SimSched *sched);

/* Checks the heap order and slot bookkeeping; O(n), for tests. */
void sim_sched_check_invariants(const SimSched *sched);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimSched, sim_sched_free)

#endif
