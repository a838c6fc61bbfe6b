/*
 * report_internal: the types and helpers the report writers share —
 * report.c (entry points, per-run data, number formatting, warnings),
 * report_json.c, report_table.c, report_csv.c, report_latency.c, report_plots.c,
 * report_document.c, report_markdown.c and report_html.c. Nothing outside
 * reports/ includes it.
 */
#ifndef REPORT_INTERNAL_H
#define REPORT_INTERNAL_H

#include <glib.h>

#include "compare.h"
#include "explain.h"
#include "failover.h"
#include "jmx.h"
#include "patterns.h"
#include "plot.h"
#include "report.h"
#include "stats.h"
#include "utilization.h"

/* ---- per-run data ---- */

typedef struct {
    const ReportRun *run;
    guint number; /* from 1 */
    char *slug;   /* "run1-acks-all": the run's file name prefix */
    CheckerResult *owned;
    const CheckerResult *result;
    Explainer *explainer;
    GPtrArray *chains[CHECKER_ANOMALY_COUNT]; /* per example: GPtrArray of sentences */
    /* Per anomaly, its records grouped by causal pattern (Pattern,
     * patterns.h): every lost write, the examples of the others. */
    GPtrArray *patterns[CHECKER_ANOMALY_COUNT];
    ConsumerCheck *consumers_owned;
    const ConsumerCheck *consumers;
    /* Per group g and anomaly a, at g * CONSUMER_ANOMALY_COUNT + a: per
     * example, a GPtrArray of sentences. */
    GPtrArray *consumer_chains;
    TxnCheck *txn_owned;
    const TxnCheck *txn;
    GPtrArray *txn_chains[TXN_ANOMALY_COUNT]; /* per example: GPtrArray of sentences */
    /* Per anomaly, per pattern shown, the basename of its diagram's SVG
     * (NULL: none drawn); NULL when the run has no diagrams. */
    GPtrArray *diagrams[CHECKER_ANOMALY_COUNT];
    /* What the run's history shows beside the checkers, read once (owned):
     * leadership (failover.h), the brokers' I/O threads (utilization.h) and
     * Kafka's metrics (jmx.h). */
    FailoverResult *failover;
    Utilization *utilization;
    JmxMetrics *metrics;
} RunData;

/* Patterns of one anomaly the report explains; the rest are counted. */
#define REPORT_PATTERNS_SHOWN 5

/* One plot to draw: a builder, the series and the shaded windows. */
typedef enum {
    JOB_BARS = 0,
    JOB_CDF,
    JOB_TIMELINE,
    JOB_THROUGHPUT,
    JOB_REPLICAS,
    JOB_TRADEOFF,
    JOB_LOAD,
    JOB_UTILIZATION,
    JOB_METRICS,
    JOB_OUTAGES,
} JobKind;

/* Partitions the unavailability plot draws; the rest are counted. */
#define REPORT_OUTAGE_PARTITIONS 20u

typedef struct {
    JobKind kind;
    char *basename;
    char *title;
    GArray *series;     /* PlotSeries; strings borrowed from `strings` */
    GPtrArray *strings; /* owned */
    GArray *windows;    /* PlotWindow; labels borrowed from the input */
    char *x_label;      /* NULL: the plot's default */
    char *marks_csv;    /* JOB_LOAD's marked points, or NULL */
    gboolean drawn;
} PlotJob;

typedef struct {
    const ReportInput *input;
    OutDir *out;     /* every file is written through it */
    const char *dir; /* its temporary directory, where gnuplot draws */
    GPtrArray *runs;     /* RunData */
    GPtrArray *jobs;     /* PlotJob */
    GPtrArray *warnings; /* strings */
    Comparison *comparison; /* the [vary] runs side by side, or NULL */
} Report;

/* The bytes of SVG report.html holds inline; diagrams beyond it are linked
 * (they are files of their own), so the page stays under a megabyte. */
#define REPORT_SVG_INLINE_BUDGET (320 * 1024)
/* The bytes of base64 PNG plots it holds inline; plots beyond it are linked
 * (their PNG files sit beside the report). With the SVG budget and the text,
 * the page stays under 1 MB (10^6 bytes). */
#define REPORT_PNG_INLINE_BUDGET (500 * 1000)

/* ---- document model ---- */

typedef enum {
    BLOCK_HEADING = 0,
    BLOCK_PARAGRAPH,
    BLOCK_WARNING,
    BLOCK_TABLE,
    BLOCK_LIST,
    BLOCK_ORDERED,
    BLOCK_IMAGE,
    BLOCK_SVG, /* an SVG of the report (`name`.svg), inline in HTML */
} BlockKind;

typedef struct {
    BlockKind kind;
    int level;       /* headings */
    char *text;      /* heading, paragraph, warning, image alt text */
    char *name;      /* image basename */
    GPtrArray *rows; /* table: GPtrArray of cells (header first); lists: items */
    /* lists: per item, the basename of the diagram it links to, or NULL
     * (NULL: none links) */
    GPtrArray *links;
} Block;

typedef GPtrArray Document; /* Block */

/* ---- report.c ---- */

/* Each run's data, in input order (GPtrArray of RunData, owned by the
 * caller); with `explain`, every example's explanation too. */
GPtrArray *report_runs_prepare(const ReportInput *input, gboolean explain);

/* Appends `text` as a file name part (see report.c). */
void report_slug_append(GString *slug, const char *text);

/* The run's label, or its file name prefix when it has none. (transfer
 * none) */
const char *report_run_label(const RunData *data);

/* TRUE when no expectation of `run` failed. */
gboolean report_expectations_passed(const ReportRun *run);

/* A quantile of `h` in milliseconds ("12.345"), or "-" when it is empty;
 * the caller frees it. */
char *report_quantile_ms_text(const StatsHistogram *h, double q);

/* `value` in decimal; the caller frees it. */
char *report_u64_text(guint64 value);

/* Adds a warning to the report (shown in the documents, returned to the
 * caller of report_write). */
void report_warn(Report *report, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* The parts of a produce request's time on its leader, as Kafka's request
 * metrics split it (HistoryRequest). */
typedef enum {
    REPORT_PART_READ = 0,
    REPORT_PART_QUEUE,  /* RequestQueueTimeMs */
    REPORT_PART_LOCAL,  /* LocalTimeMs */
    REPORT_PART_REMOTE, /* RemoteTimeMs */
    REPORT_PART_SEND,   /* ResponseSendTimeMs */
    REPORT_PART_TOTAL,  /* TotalTimeMs */
    REPORT_PARTS,
} ReportRequestPart;

/* Fills `parts` with new histograms of each part over the run's produce
 * requests (free each with stats_histogram_free) and returns how many there
 * were. */
guint64 report_request_parts(const RunData *data, StatsHistogram *parts[REPORT_PARTS]);

/* The comparison of the runs (compare.h), or NULL when there is none. */
Comparison *report_comparison_new(const GPtrArray *runs);

/* ---- report_json.c ---- */

/* summary.json's text; the caller frees it. */
char *report_json_summary(const ReportInput *input, const GPtrArray *runs,
                          const GPtrArray *warnings);

/* ---- report_csv.c ---- */

/* A CSV file of the report being written. */
typedef struct {
    OutFile *file;
    OutFileCsv *csv;
} CsvOut;

/* Opens `name` in `dir` and writes `header` (NULL-terminated). FALSE with
 * `error` set when it cannot be created. */
gboolean report_csv_open(CsvOut *out, OutDir *dir, const char *name, const char *const *header,
                         GError **error);
/* The same, with the header's names in `columns` (borrowed; not
 * NULL-terminated: report_csv_open_columns adds the NULL). */
gboolean report_csv_open_columns(CsvOut *out, OutDir *dir, const char *name, GPtrArray *columns,
                                 GError **error);
/* Finishes the file and puts it in place. */
gboolean report_csv_commit(CsvOut *out, GError **error);
/* Drops the file unfinished. */
void report_csv_abort(CsvOut *out);

/* TRUE when an anomaly example of `data` lies in `partition` (the replicas
 * plots `--plots anomalies` keeps). */
gboolean report_partition_has_anomaly(const RunData *data, const CheckerPartition *partition);

/* Writes every CSV file and adds the plot jobs their series feed. */
gboolean report_csv_write_all(Report *report, GError **error);

/* ---- report_latency.c ---- */

/* Writes each run's utilisation CSV and adds the utilisation plot job. */
gboolean report_latency_write(Report *report, GError **error);

/* ---- report_jmx.c ---- */

/* Writes each run's metrics CSV (jmx.h) and adds the moved-metrics plot job. */
gboolean report_jmx_write(Report *report, GError **error);

/* ---- report_plots.c ---- */

/* A new plot job owned by report->jobs; takes `basename` and `title`. */
PlotJob *report_plots_job_add(Report *report, JobKind kind, char *basename, char *title);

/* Adds a series to `job`; takes `csv` and `label`. */
void report_plots_job_series(PlotJob *job, char *csv, char *label, guint x, guint y, PlotAxis axis);

/* The number fault window `index` (from 0) carries on the plots and in the
 * fault table: "1", "2", ... (transfer full). */
char *report_plots_fault_number(guint index);

/* Adds `windows` to the windows `job` shades, each labelled with its number. */
void report_plots_job_windows(PlotJob *job, const ReportWindow *windows, guint len);

/* Adds the windows every run shares, if they all share them. */
void report_plots_job_shared_windows(PlotJob *job, const Report *report);

/* Frees a PlotJob (a GDestroyNotify for report->jobs). */
void report_plots_job_free(gpointer pointer);

/* Draws every job with series; a plot that cannot be drawn is a warning.
 * FALSE with `error` set when a script cannot be written. */
gboolean report_plots_render(Report *report, GError **error);

/* ---- report_diagrams.c ---- */

/* Writes the space-time diagram of each pattern the explanations show, for
 * the runs that kept their trace for diagrams, and notes them in each
 * RunData's `diagrams`. FALSE with `error` set when a file cannot be
 * written. */
gboolean report_diagrams_write(Report *report, GError **error);

/* ---- report_document.c ---- */

/* The document report.md and report.html render; free it with
 * g_ptr_array_free(doc, TRUE). */
Document *report_document_build(const Report *report);

/* ---- report_markdown.c, report_html.c ---- */

/* report.md's text. */
GString *report_markdown_render(const Document *doc);

/* report.html's text, with the images inline. */
GString *report_html_render(const Document *doc, const Report *report);

#endif /* REPORT_INTERNAL_H */
