/*
 * runner_paranoid: the run-time invariant checks of `ksim run --paranoid`,
 * of the scenario key `paranoid = true`, and of the seeds `ksim sweep`
 * samples.
 *
 * A checked run checks, after every event, every module's invariants: the
 * engine's (event queue, network, every node's disk:
 * sim_world_check_invariants), the cluster's (every broker's replicas and
 * their logs, group and transaction coordinators and coordination client,
 * and the coordination server: cluster_check_invariants), and the clients'
 * (every producer with its workload, accumulator, metadata and partitioners,
 * every consumer and pipeline: runner_clients_check_invariants). The checks
 * only read, so a checked run has the trace fingerprint of the same run
 * unchecked.
 *
 * Every run, checked or not, registers its failure context with KSIM_ASSERT:
 * an assertion that fails names the run, its seed, the event being
 * dispatched with its virtual time, and the command that replays the run.
 * A check that fails ends the process with RUNNER_EXIT_INVARIANT; an
 * assertion inside an event still aborts, as it always did.
 */
#ifndef RUNNER_PARANOID_H
#define RUNNER_PARANOID_H

#include <glib.h>

#include "cluster.h"
#include "runner_clients.h"
#include "scenario.h"
#include "trace_writer.h"

/* The exit status of a process whose run-time check found an invariant
 * violated (0, 1 and 2 are the command line's own). */
#define RUNNER_EXIT_INVARIANT 3

/* The storage checks (every disk changed since its last check, and every
 * partition log) run once every this many events, and at the first and last
 * check: they walk every unsynced write of a disk and every index entry of a
 * log, and after every event they made a chaos run about a hundred times
 * slower than unchecked (README.md has the numbers). Every other check runs
 * after every event. */
#define RUNNER_PARANOID_STORAGE_EVENTS 1000

/* A check of the whole world, run after the models' checks. */
typedef void (*RunnerParanoidCheckFn)(const SimWorld *world, void *user_data);

/* How a run is checked and observed; all fields may be zero. */
typedef struct {
    gboolean paranoid;  /* check after every event, whatever the scenario says */
    const char *replay; /* the command that replays the run, for failure reports */
    /* Tests only: one more check after the models' (a scenario cannot name
     * one), to show what a violation reports. */
    RunnerParanoidCheckFn extra_check;
    void *extra_check_data;
    TraceFormat trace_format; /* of the run's trace_out (runner_run_checked) */
    /* Hears every trace record as it is added, beside the --trace writer
     * (the determinism self-check's digest, selfcheck.h); NULL: none. */
    SimTraceListener trace_listener;
    void *trace_listener_data;
    /* Keep what space-time diagrams draw (diagram_trace.h) in
     * RunnerResult.diagram_trace: the messages near the run's cluster
     * events (keep_diagrams, for the report), and every message of
     * [diagram_from_ns, diagram_to_ns] when diagram_to_ns > 0 (ksim
     * diagram), at most diagram_records_max records (0: the default). */
    gboolean keep_diagrams;
    gint64 diagram_from_ns;
    gint64 diagram_to_ns;
    guint diagram_records_max;
} RunnerChecks;

typedef struct RunnerParanoid RunnerParanoid;

/* TRUE when the run of `variant` is checked: its scenario says
 * `paranoid = true`, or `checks` asks for it (`checks` may be NULL). */
gboolean runner_paranoid_wanted(const ScenarioVariant *variant, const RunnerChecks *checks);

/* Registers the run's failure context and, when runner_paranoid_wanted,
 * checks every invariant once now and installs the after-event check on
 * `world`. The world, cluster, clients, variant and `checks` (with its
 * replay) must outlive the result. (transfer full) */
RunnerParanoid *runner_paranoid_new(SimWorld *world, const Cluster *cluster,
                                    const RunnerClients *clients, const ScenarioVariant *variant,
                                    guint64 seed, const RunnerChecks *checks);
/* Removes the after-event check and the failure context (accepts NULL). */
void runner_paranoid_free(RunnerParanoid *paranoid);

/* TRUE when `ksim sweep` checks `seed` at `percent` (0..100): a pure
 * function of the seed (XXH3 of its eight little-endian bytes, modulo 100,
 * below `percent`), so shards and jobs agree on which seeds are checked. */
gboolean runner_paranoid_sampled(guint64 seed, guint percent);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RunnerParanoid, runner_paranoid_free)

#endif
