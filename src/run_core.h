/*
 * run_core: what `ksim run` and `ksim sweep` share — loading a scenario with
 * its --set overrides, running every variant for a seed, checking the history,
 * judging the expectations (each metric as reports/metrics.h takes it), and
 * the command that replays a run.
 */
#ifndef KSIM_RUN_CORE_H
#define KSIM_RUN_CORE_H

#include <glib.h>
#include <stdio.h>

#include "capsule.h"
#include "checker.h"
#include "checker_consumer.h"
#include "checker_txn.h"
#include "runner.h"
#include "scenario.h"

typedef struct {
    ScenarioVariant *variant;      /* owned */
    RunnerResult *result;          /* owned */
    CheckerResult *check;          /* owned; borrows result->history */
    ConsumerCheck *consumers;      /* owned; borrows result->history and check */
    TxnCheck *txn;                 /* owned; borrows result->history and check */
    double wall_s;
    gboolean paranoid;             /* checked after every event */
    gboolean determinism_checked;  /* made twice (RunCoreChecks.check_determinism) */
    char fingerprint[17];
    GPtrArray *failed;             /* descriptions of failed expectations (owned) */
} RunOutcome;

/* run_core_load for a scenario's text in memory (`length` bytes),
 * `display_name` standing for its file (a replay capsule's scenario).
 * (transfer full) */
Scenario *run_core_load_bytes(const char *text, gsize length, const char *display_name,
                              char **sets, GError **error);

/* Loads `path` and applies every "KEY=VALUE" of `sets`. NULL with a message
 * naming the file, group, key and line on bad input, and on a name that
 * cannot be a directory's (outfile_name_check). (transfer full) */
Scenario *run_core_load(const char *path, char **sets, GError **error);

/* Runs one variant with `seed` and judges it; `trace_out` may be NULL.
 * Takes ownership of `variant`. (transfer full) */
RunOutcome *run_core_variant(const Scenario *scenario, ScenarioVariant *variant, guint64 seed,
                             FILE *trace_out);

/* How run_core_variant_checked checks a run. */
typedef struct {
    gboolean paranoid; /* every invariant after every event (ksim run --paranoid) */
    char **sets;       /* the --set options, for the replay command a failure prints */
    TraceFormat trace_format; /* of trace_out */
    /* Make the run twice, in two processes, and fail it when their traces
     * differ (ksim run --check-determinism, selfcheck.h). */
    gboolean check_determinism;
    gboolean heal;     /* ksim bisect: heal every fault at heal_at_ns (runner_run_healed) */
    gint64 heal_at_ns;
    /* Keep what the report's space-time diagrams draw (RunnerChecks). */
    gboolean keep_diagrams;
} RunCoreChecks;

/* run_core_variant, checked as `checks` (NULL: unchecked, unless the
 * scenario says paranoid = true) and with the run's failure context
 * registered (runner_paranoid.h). (transfer full) */
RunOutcome *run_core_variant_checked(const Scenario *scenario, ScenarioVariant *variant,
                                     guint64 seed, FILE *trace_out, const RunCoreChecks *checks);
void run_outcome_free(RunOutcome *outcome);

/* The shell command that replays a run exactly; with `variant`, only that
 * variant (its varied settings become --set options). (transfer full) */
char *run_core_replay_command(const Scenario *scenario, guint64 seed, char **sets,
                              const ScenarioVariant *variant);

/* The replay capsule of `outcomes` (RunOutcome*, the runs of `scenario`
 * with `seed` and the --set assignments `sets`, in run order), naming this
 * binary. (transfer full) */
Capsule *run_core_capsule(const Scenario *scenario, guint64 seed, char **sets,
                          const GPtrArray *outcomes);

/* Writes DIR/seed-N/capsule.json, the capsule of a sweep's seed from its
 * result line (a line of sweep.jsonl), and returns its path; NULL with an
 * error when it cannot be written. (transfer full) */
char *run_core_write_seed_capsule(const Scenario *scenario, char **sets, guint64 seed,
                                  const char *line, const char *dir, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RunOutcome, run_outcome_free)

#endif
