/*
 * The sub-commands of the `ksim` binary. Each takes the arguments after the
 * sub-command name (argv[0] is the sub-command) and returns the exit status:
 * 0 success, 1 a failed expectation or check, 2 bad input.
 */
#ifndef KSIM_COMMANDS_H
#define KSIM_COMMANDS_H

#include <glib.h>

#include "scenario.h"
#include "trace_writer.h"

int cmd_bench(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_assign(int argc, char **argv);
int cmd_check(int argc, char **argv);

int cmd_replay(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_diagram(int argc, char **argv);

/* What `ksim run` makes of a loaded scenario; `ksim replay` asks the same. */
typedef struct {
    const char *command; /* "ksim run", "ksim replay": the prefix of messages */
    const char *out_dir; /* NULL: out/NAME */
    guint64 seed;
    char **sets; /* the --set assignments the scenario was loaded with */
    gboolean trace;
    gboolean paranoid;
    gboolean check_determinism;
    TraceFormat trace_format; /* of the trace, when `trace` */
    const char *history;      /* --history=jepsen; NULL: none */
    gboolean plots_all;       /* --plots all (ReportInput.plots_all) */
} RunRequest;

/* Runs every variant of `scenario` as `request` says, prints the banner, one
 * line per run, the result table and the verdicts, and writes the report
 * and DIR/capsule.json. Appends each run's fingerprint (char*, owned by the
 * array) to `fingerprints` when it is not NULL. Returns the exit status of
 * `ksim run`. */
int cmd_run_scenario(const Scenario *scenario, const RunRequest *request, GPtrArray *fingerprints);

/* The body of `ksim check` for one file, shared with `ksim run --check`:
 * prints the runs the scenario would make, or the error prefixed with
 * `command`; returns 0 or 2. */
int cmd_check_scenario(const char *path, char **sets, gboolean force, const char *command);

#endif
