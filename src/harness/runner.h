/*
 * runner: one run of one scenario variant with one seed. It builds the world —
 * coordination node, brokers, topics, producers with their workloads — from
 * the variant's settings, injects the fault timeline and the random faults,
 * and at the end of the fault phase heals everything (restarts what is down,
 * resumes what is paused, heals the network and the disks, stops the
 * workloads) and lets the cluster converge for the quiet period (the liveness
 * phase). Then it records every replica's final state in the history.
 *
 * Everything a run does comes from the variant and the seed: the same inputs
 * and binary give the same trace fingerprint.
 */
#ifndef RUNNER_H
#define RUNNER_H

#include <glib.h>
#include <stdio.h>

#include "diagram_trace.h"
#include "history.h"
#include "runner_paranoid.h"
#include "scenario.h"

typedef struct {
    gint64 start_ns;
    gint64 end_ns; /* the run's end when never undone */
    char *label;
    gint32 broker; /* the one broker the fault hit, or -1 */
} RunnerFaultWindow;

/* A random fault as it started, its target resolved: the explicit [fault]
 * that does the same (ksim shrink writes them). */
typedef struct {
    gint64 at_ns;
    ScenarioAction action;
    gint32 broker;      /* the target, or for a partition the broker cut off alone */
    gint64 duration_ns; /* as drawn */
} RunnerRandomFault;

typedef struct {
    char *label;
    guint64 seed;
    guint64 fingerprint;
    gint64 virtual_ns;
    gint64 last_heal_ns;      /* when the fault phase ended (everything healed) */
    guint64 events;
    guint64 trace_records;
    gboolean converged;       /* every partition led with a full ISR after the quiet period */
    char *unconverged;        /* NULL, or which partitions were not, and how */
    guint violations;         /* invariant breaches the cluster recorded */
    History *history;         /* owned */
    GArray *fault_windows;    /* RunnerFaultWindow */
    GArray *random_faults;    /* RunnerRandomFault, in start order; a fault that found
                               * no live broker is left out (it did nothing) */
    SimMarks marks;           /* the coverage marks the run reached (sim_marks.h) */
    DiagramTrace *diagram_trace; /* owned; NULL unless RunnerChecks asked for it */
} RunnerResult;

/* Runs `variant` with `seed`; writes the full trace as JSON Lines to
 * `trace_out` when it is not NULL. (transfer full) */
RunnerResult *runner_run(const ScenarioVariant *variant, guint64 seed, FILE *trace_out);
/* runner_run with its run-time checks (runner_paranoid.h); `checks` may be
 * NULL. (transfer full) */
RunnerResult *runner_run_checked(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
                                 const RunnerChecks *checks);
/* runner_run_checked, but the fault phase ends at `heal_at_ns` (when it is
 * at least 0 and before the scenario's duration): then every fault is
 * healed, no fault starts after, and the workload and the quiet period run
 * as scenarized (ksim bisect). (transfer full) */
RunnerResult *runner_run_healed(const ScenarioVariant *variant, guint64 seed, FILE *trace_out,
                                const RunnerChecks *checks, gint64 heal_at_ns);
void runner_result_free(RunnerResult *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RunnerResult, runner_result_free)

#endif
