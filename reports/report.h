/*
 * report: the files a user reads after `ksim run --out DIR`, and the table
 * printed on the terminal.
 *
 * report_write writes into DIR atomically as a whole: every file goes into a
 * temporary directory beside DIR, renamed into place when all are written, so
 * DIR holds the complete previous report or the complete new one (outfile.h's
 * OutDir). Its files:
 *   summary.json          the schema of issue 7 (names stable; more added),
 *                         with per run "consumers": {GROUP: {members, polled,
 *                         processed, unique, delivered, lost_consumption,
 *                         duplicate_consumption, poll_skip, nonmonotonic_poll,
 *                         commits_ok, commits_failed, commits_unknown,
 *                         e2e_p50_ms, e2e_p99_ms, examples}} ({} without groups),
 *                         "transactions": {transactions, committed, aborted,
 *                         unknown, unended, sends, fenced_instances,
 *                         reads_committed, aborted_read_uncommitted,
 *                         anomalies: {G1a, uncommitted_read, partial_commit,
 *                         zombie_write, int_nonmonotonic_send, int_send_skip},
 *                         examples} and "pipelines": {GROUP: {exactly_once,
 *                         inputs, outputs_visible, outputs_maybe, unconsumed,
 *                         pipeline_duplicate, pipeline_lost, examples}};
 *   report.md             durability table, explanations, consumer groups
 *                         (when the scenario has some), transactions and
 *                         pipelines (when it has some), latency, replicas,
 *                         timeline, runs and settings; images as links;
 *   report.html           the same, self-contained: images inline;
 *   outcomes.csv          per run: acked, lost, duplicated, ... (bars plot);
 *   anomalies.csv         every example with its summary and explanation;
 *   RUN-latency.csv       acked sends: invoke time, latency (timeline plot;
 *                         beyond LATENCY_POINTS_TARGET points, every k-th send
 *                         plus every send slower than the run's p99);
 *   RUN-latency-cdf.csv   latency CDF of acked sends (CDF plot);
 *   RUN-throughput.csv    acked and offered (sends invoked) records/s per
 *                         window (throughput plot);
 *   faults.csv            per run, each fault window: its number (as the
 *                         plots' shaded bands show it), label, start, end;
 *   RUN-replicas-T-P.csv  per partition (the first REPORT_PARTITION_PLOTS_MAX),
 *                         LEO and HW of each replica and the ISR size over time
 *                         (replicas plot; see below how they are derived);
 *   RUN-events.csv        every cluster event but the ACKs, in time order;
 *   RUN-ANOMALY-pattern-K.svg  the space-time diagram of pattern K of an
 *                         anomaly (diagram.h; ANOMALY as "lost-write"), for
 *                         the patterns the explanations show, when the run
 *                         kept its trace for diagrams (ReportRun.diagram_trace);
 *                         inline in report.html beside the pattern;
 *   NAME.gp, NAME.svg, NAME.png  each plot's gnuplot script and images:
 *                         outcomes, latency-cdf, latency-timeline, throughput,
 *                         RUN-replicas-T-P.
 * RUN is "run<N>-<label as a file name>", N counting runs from 1.
 *
 * Without gnuplot on the PATH everything but the images (and scripts) is
 * written, with one warning; a plot gnuplot fails to draw is left out with a
 * warning of its own. Warnings are appended to the caller's array, shown in
 * report.md/html and listed in summary.json.
 *
 * Replica LEO/HW series are derived from the history's events, as no event is
 * recorded per HW change: an ACK sets its leader's LEO to the end of the
 * acknowledged range and its HW to the HW reported, and raises each other ISR
 * member's LEO to at least that HW (HW = min LEO over the ISR) and its HW to
 * min(that HW, its LEO) (a follower learns it within a fetch); ELECTED sets the
 * new leader's LEO and HW; TRUNCATED sets the replica's LEO and HW; ELECTED,
 * ISR_CHANGED and ACK give the ISR size. Followers' lines are therefore lower
 * bounds that move in steps at the leader's acknowledgements.
 */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include <glib.h>

#include "checker.h"
#include "checker_consumer.h"
#include "checker_txn.h"
#include "diagram_trace.h"
#include "history.h"
#include "outfile.h"

#define REPORT_PARTITION_PLOTS_MAX 8
#define REPORT_LATENCY_POINTS_TARGET 10000
#define REPORT_TIMELINE_ROWS_MAX 200

/* One setting of a run, e.g. {"acks", "all"}; strings borrowed. */
typedef struct {
    const char *key;
    const char *value;
} ReportSetting;

/* One fault window of a run (the same fields as the runner's). */
typedef struct {
    gint64 start_ns;
    gint64 end_ns;
    const char *label; /* may be NULL */
} ReportWindow;

/* A coverage mark a run reached (sim_marks.h), and how often. */
typedef struct {
    const char *name;
    guint64 hits;
} ReportMark;

/* One run. Everything is borrowed for the call. */
typedef struct {
    const char *label;
    const ReportSetting *settings; /* in the order to show them */
    guint settings_len;
    const char *fingerprint; /* hex */
    double virtual_s;
    double wall_s;
    guint64 events;
    const History *history;
    /* The run's checker result, or NULL: then the report runs the checker
     * with the defaults and `last_heal_ns`. */
    const CheckerResult *result;
    /* The run's consumer checker result (of `result`), or NULL: then the
     * report runs the consumer checker when the history has groups. */
    const ConsumerCheck *consumers;
    /* The run's transaction checker result (of `result`), or NULL: then the
     * report runs it. */
    const TxnCheck *txn;
    gint64 last_heal_ns; /* CHECKER_HEAL_AUTO after report_run_init */
    const ReportWindow *windows;
    guint windows_len;
    /* NULL-terminated descriptions of the failed expectations; NULL or
     * empty: they passed (or there were none). */
    const char *const *expectations_failed;
    /* The coverage marks the run reached, in the marks table's order. */
    const ReportMark *marks;
    guint marks_len;
    /* What the run kept of its trace for space-time diagrams, or NULL: the
     * explanations then have none. */
    const DiagramTrace *diagram_trace;
} ReportRun;

typedef struct {
    const char *ksim_version;
    const char *git_commit;
    const char *scenario;
    const char *scenario_sha256;
    guint64 seed;
    const ReportRun *runs;
    guint runs_len;
    /* TRUE: a replicas plot for every partition (up to
     * REPORT_PARTITION_PLOTS_MAX); FALSE (`--plots anomalies`, the default):
     * only for the partitions an anomaly example names. */
    gboolean plots_all;
} ReportInput;

/* Zeroes `run` and sets last_heal_ns to CHECKER_HEAL_AUTO. */
void report_run_init(ReportRun *run);

/* The file whose presence marks a directory as a report that a later
 * report_write may replace (outfile_dir_open's `marker`). */
#define REPORT_MARKER "summary.json"

/* Writes every report file into `out_dir` (its parent created if missing),
 * replacing an earlier report there as a whole. Warnings (no gnuplot, a
 * failed plot) are appended to `warnings` (strings it frees; may be NULL).
 * FALSE with `error` set when a file cannot be written; `out_dir` then is as
 * it was and no temporary remains. */
gboolean report_write(const ReportInput *input, const char *out_dir, GPtrArray *warnings,
                      GError **error);

/* Writes every report file into `out` (opened with REPORT_MARKER), without
 * committing it: the caller commits or aborts, and may have written files of
 * its own there (traces). Warnings and errors as report_write. */
gboolean report_write_into(const ReportInput *input, OutDir *out, GPtrArray *warnings,
                           GError **error);

/* summary.json's text, with `warnings` (may be NULL) listed (transfer full). */
char *report_summary_json(const ReportInput *input, const GPtrArray *warnings);

/* Prints the compact table: run, acked, lost, duplicated, reordered, p50 and
 * p99 of produce latency in ms; below a run with consumer groups, one line
 * per group: records processed, the four consumer anomalies and the
 * end-to-end latency; below a run with transactions, one line of their
 * fates and anomalies, and one per pipeline. */
void report_print_table(FILE *stream, const ReportInput *input);

#endif
