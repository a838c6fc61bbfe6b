/*
 * report_csv: the CSV files of a report — outcomes and anomalies of every
 * run, and per run its latencies, latency CDF, throughput, events and each
 * partition's replica lines (LEO and HW per replica) — and the plot jobs
 * their series feed (report_csv_write_all).
 */
#include "report_internal.h"

#include <string.h>

#include "outfile.h"
#include "plot.h"

/* The lines a partition's plot has room for: its replicas (at most 16) and
 * any other broker its events name. */
#define LINES_MAX 32
/* ACK rows of a replicas CSV: at most about this many per partition. */
#define REPLICA_ACK_ROWS_TARGET 2000

/* ---- CSV files ---- */

gboolean
report_csv_open(CsvOut *out, OutDir *dir, const char *name, const char *const *header,
                GError **error)
{
    out->file = outfile_dir_file_open(dir, name, error);
    if (out->file == NULL)
        return FALSE;
    out->csv = outfile_csv_new(outfile_stream(out->file), header);
    return TRUE;
}

gboolean
report_csv_open_columns(CsvOut *out, OutDir *dir, const char *name, GPtrArray *columns,
                        GError **error)
{
    g_ptr_array_add(columns, NULL);
    gboolean opened =
        report_csv_open(out, dir, name, (const char *const *)(gpointer)columns->pdata, error);
    g_ptr_array_remove_index(columns, columns->len - 1);
    return opened;
}

gboolean
report_csv_commit(CsvOut *out, GError **error)
{
    outfile_csv_free(out->csv);
    out->csv = NULL;
    return outfile_commit(g_steal_pointer(&out->file), error);
}

void
report_csv_abort(CsvOut *out)
{
    outfile_csv_free(out->csv);
    out->csv = NULL;
    outfile_abort(g_steal_pointer(&out->file));
}

/* gnuplot does not read RFC 4180's doubled quotes, so labels shown by a plot
 * have their double quotes turned into single ones. */
static char *
plot_label(const char *label)
{
    char *copy = g_strdup(label != NULL ? label : "");
    g_strdelimit(copy, "\"", '\'');
    return copy;
}

static gboolean
csv_outcomes(Report *report, GError **error)
{
    static const char *const header[] = {"run",
                                         "attempted",
                                         "acked",
                                         "lost_write",
                                         "duplicate",
                                         "nonmonotonic_send",
                                         "inconsistent_offsets",
                                         "failed_but_present",
                                         "failed",
                                         "unknown",
                                         "invariant_violations",
                                         NULL};
    CsvOut out;
    if (!report_csv_open(&out, report->out, "outcomes.csv", header, error))
        return FALSE;
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const CheckerCounts *c = checker_result_counts(data->result);
        g_autofree char *label = plot_label(data->run->label);
        outfile_csv_string(out.csv, label);
        outfile_csv_int(out.csv, (gint64)c->attempted);
        outfile_csv_int(out.csv, (gint64)c->acked);
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
            outfile_csv_int(out.csv, (gint64)c->anomalies[a]);
        outfile_csv_int(out.csv, (gint64)c->failed);
        outfile_csv_int(out.csv, (gint64)c->unknown);
        outfile_csv_int(out.csv, (gint64)c->invariant_violations);
        outfile_csv_end_row(out.csv);
    }
    return report_csv_commit(&out, error);
}

static char *
chain_join(const GPtrArray *chain)
{
    GString *text = g_string_new(NULL);
    for (guint i = 0; chain != NULL && i < chain->len; i++)
        g_string_append_printf(text, "%s%s", i ? " " : "", (char *)g_ptr_array_index(chain, i));
    return g_string_free(text, FALSE);
}

static void
csv_anomaly_rows(OutFileCsv *csv, const RunData *data)
{
    const History *history = checker_result_history(data->result);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_result_examples(data->result, a);
        for (guint e = 0; e < examples->len; e++) {
            const CheckerExample *example = &g_array_index(examples, CheckerExample, e);
            g_autofree char *where =
                checker_partition_label(history, example->topic, example->partition);
            g_autofree char *chain = chain_join(g_ptr_array_index(data->chains[a], e));
            outfile_csv_string(csv, data->run->label ? data->run->label : "");
            outfile_csv_string(csv, checker_anomaly_name(a));
            outfile_csv_string(csv, where);
            outfile_csv_int(csv, (gint64)example->value);
            outfile_csv_int(csv, example->offset);
            outfile_csv_string(csv, example->summary);
            outfile_csv_string(csv, chain);
            outfile_csv_end_row(csv);
        }
    }
}

static gboolean
csv_anomalies(Report *report, GError **error)
{
    static const char *const header[] = {"run",    "anomaly", "partition",   "value",
                                         "offset", "summary", "explanation", NULL};
    CsvOut out;
    if (!report_csv_open(&out, report->out, "anomalies.csv", header, error))
        return FALSE;
    for (guint i = 0; i < report->runs->len; i++)
        csv_anomaly_rows(out.csv, g_ptr_array_index(report->runs, i));
    return report_csv_commit(&out, error);
}

/* Acked sends' latency by invoke time; beyond the target, every k-th send and
 * every send slower than the p99. Returns the rows with a positive latency
 * (the only ones a log scale can show). */
static gboolean
csv_latency(const Report *report, const RunData *data, guint64 *positive, GError **error)
{
    static const char *const header[] = {"time_s", "latency_ms", NULL};
    g_autofree char *name = g_strdup_printf("%s-latency.csv", data->slug);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, header, error))
        return FALSE;
    const StatsHistogram *h = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
    gint64 count = stats_histogram_count(h);
    gint64 stride =
        MAX(1, (count + REPORT_LATENCY_POINTS_TARGET - 1) / REPORT_LATENCY_POINTS_TARGET);
    gint64 p99 = stats_histogram_quantile(h, 0.99);
    guint ops = history_ops(checker_result_history(data->result))->len;
    gint64 k = 0;
    *positive = 0;
    for (guint64 op = 1; op <= ops; op++) {
        CheckerSend view;
        const CheckerSend *send = &view;
        if (!checker_result_send(data->result, op, &view) ||
            (send->outcome != CHECKER_SEND_OK && send->outcome != CHECKER_SEND_SENT))
            continue;
        gint64 latency = send->complete_ns - send->invoke_ns;
        if (k++ % stride != 0 && latency <= p99)
            continue;
        outfile_csv_double(out.csv, (double)send->invoke_ns / 1e9);
        outfile_csv_double(out.csv, (double)latency / 1e6);
        outfile_csv_end_row(out.csv);
        *positive += latency > 0;
    }
    return report_csv_commit(&out, error);
}

static gboolean
csv_cdf(const Report *report, const RunData *data, guint64 *rows, GError **error)
{
    static const char *const header[] = {"latency_ms", "fraction", NULL};
    g_autofree char *name = g_strdup_printf("%s-latency-cdf.csv", data->slug);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, header, error))
        return FALSE;
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(StatsCdfPoint));
    stats_histogram_cdf(checker_result_latency(data->result, CHECKER_LATENCY_ACKED), points);
    for (guint i = 0; i < points->len; i++) {
        const StatsCdfPoint *point = &g_array_index(points, StatsCdfPoint, i);
        if (point->value_ns <= 0)
            continue; /* a log axis cannot show it */
        outfile_csv_double(out.csv, (double)point->value_ns / 1e6);
        outfile_csv_double(out.csv, point->fraction);
        outfile_csv_end_row(out.csv);
    }
    *rows = outfile_csv_rows(out.csv);
    return report_csv_commit(&out, error);
}

/* Sends invoked per window of `series` (the offered load), counted from the
 * history's sends; `offered` gets one count per window. */
static void
offered_counts(const RunData *data, const StatsSeries *series, GArray *offered)
{
    guint windows = stats_series_window_count(series);
    g_array_set_size(offered, windows);
    memset(offered->data, 0, sizeof(guint64) * windows);
    if (windows == 0)
        return;
    gint64 first_ns = stats_series_window_start_ns(series, 0);
    gint64 width_ns = windows > 1 ? stats_series_window_start_ns(series, 1) - first_ns : 0;
    guint ops = history_ops(checker_result_history(data->result))->len;
    for (guint64 op = 1; width_ns > 0 && op <= ops; op++) {
        CheckerSend send;
        if (!checker_result_send(data->result, op, &send) || send.invoke_ns < first_ns)
            continue;
        guint64 w = (guint64)((send.invoke_ns - first_ns) / width_ns);
        if (w < windows)
            g_array_index(offered, guint64, w)++;
    }
}

static gboolean
csv_throughput(const Report *report, const RunData *data, guint64 *rows, GError **error)
{
    static const char *const header[] = {"time_s", "acked_per_s", "offered_per_s", NULL};
    g_autofree char *name = g_strdup_printf("%s-throughput.csv", data->slug);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, header, error))
        return FALSE;
    const StatsSeries *series = checker_result_throughput(data->result);
    g_autoptr(GArray) offered = g_array_new(FALSE, TRUE, sizeof(guint64));
    offered_counts(data, series, offered);
    guint windows = stats_series_window_count(series);
    double width_s = windows > 1 ? (double)(stats_series_window_start_ns(series, 1) -
                                            stats_series_window_start_ns(series, 0)) /
                                       1e9
                                 : 1.0;
    for (guint w = 0; w < windows; w++) {
        outfile_csv_double(out.csv, (double)stats_series_window_start_ns(series, w) / 1e9);
        outfile_csv_double(out.csv, stats_series_rate_per_s(series, w));
        outfile_csv_double(out.csv, (double)g_array_index(offered, guint64, w) / width_s);
        outfile_csv_end_row(out.csv);
    }
    *rows = outfile_csv_rows(out.csv);
    return report_csv_commit(&out, error);
}

static gboolean
csv_events(const Report *report, const RunData *data, GError **error)
{
    static const char *const header[] = {"time_s", "kind", "broker", "partition", "text", NULL};
    g_autofree char *name = g_strdup_printf("%s-events.csv", data->slug);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, header, error))
        return FALSE;
    const History *history = checker_result_history(data->result);
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind == HISTORY_EVENT_ACK)
            continue;
        g_autofree char *where =
            event->partition >= 0 ? checker_partition_label(history, event->topic, event->partition)
                                  : g_strdup("");
        g_autofree char *text = explain_event_sentence(data->explainer, i);
        outfile_csv_double(out.csv, (double)event->time_ns / 1e9);
        outfile_csv_string(out.csv, explain_event_kind_name(event->kind));
        outfile_csv_int(out.csv, event->broker);
        outfile_csv_string(out.csv, where);
        outfile_csv_string(out.csv, text);
        outfile_csv_end_row(out.csv);
    }
    return report_csv_commit(&out, error);
}

/* ---- replica lines ---- */

typedef struct {
    const History *history; /* where the events' ISR sets are */
    gint32 brokers[LINES_MAX];
    guint n;
    gint64 leo[LINES_MAX];
    gint64 hw[LINES_MAX];
    guint isr;
} ReplicaLines;

static guint
isr_size(const ReplicaLines *lines, guint32 isr)
{
    const gint32 *members;
    return history_isr_members(lines->history, isr, &members);
}

static void
lines_add_broker(ReplicaLines *lines, gint32 broker)
{
    if (broker < 0)
        return;
    for (guint i = 0; i < lines->n; i++) {
        if (lines->brokers[i] == broker)
            return;
    }
    if (lines->n == LINES_MAX)
        return;
    guint at = lines->n++;
    while (at > 0 && lines->brokers[at - 1] > broker) {
        lines->brokers[at] = lines->brokers[at - 1];
        at--;
    }
    lines->brokers[at] = broker;
}

static gint
lines_index(const ReplicaLines *lines, gint32 broker)
{
    for (guint i = 0; i < lines->n; i++) {
        if (lines->brokers[i] == broker)
            return (gint)i;
    }
    return -1;
}

/* The brokers of a partition: its final replicas and every broker its
 * events name. */
static void
lines_init(ReplicaLines *lines, const History *history, const GArray *list,
           const CheckerPartition *partition)
{
    memset(lines, 0, sizeof *lines);
    lines->history = history;
    const GArray *replicas = history_replicas(history);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (r->topic == partition->topic && r->partition == partition->partition)
            lines_add_broker(lines, r->broker);
    }
    const GArray *events = history_events(history);
    for (guint k = 0; list != NULL && k < list->len; k++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, g_array_index(list, guint, k));
        if (e->kind == HISTORY_EVENT_ACK || e->kind == HISTORY_EVENT_ELECTED ||
            e->kind == HISTORY_EVENT_TRUNCATED || e->kind == HISTORY_EVENT_ISR_CHANGED)
            lines_add_broker(lines, e->broker);
        const gint32 *members;
        guint n = history_isr_members(history, e->isr, &members);
        for (guint m = 0; m < n; m++)
            lines_add_broker(lines, members[m]);
    }
}

static void
lines_ack(ReplicaLines *lines, const HistoryEvent *e, gint b)
{
    lines->leo[b] = MAX(lines->leo[b], e->offset_end);
    lines->hw[b] = MAX(lines->hw[b], e->hw);
    lines->isr = isr_size(lines, e->isr);
    for (guint i = 0; i < lines->n; i++) {
        if ((gint)i == b || !history_isr_contains(lines->history, e->isr, lines->brokers[i]))
            continue;
        lines->leo[i] = MAX(lines->leo[i], e->hw);
        lines->hw[i] = MAX(lines->hw[i], MIN(e->hw, lines->leo[i]));
    }
}

/* Applies one event (see report.h); FALSE when it changes no line. */
static gboolean
lines_apply(ReplicaLines *lines, const HistoryEvent *e)
{
    gint b = lines_index(lines, e->broker);
    if (b < 0)
        return FALSE;
    switch (e->kind) {
    case HISTORY_EVENT_ACK:
        lines_ack(lines, e, b);
        return TRUE;
    case HISTORY_EVENT_ELECTED:
        lines->leo[b] = e->offset;
        lines->hw[b] = e->hw;
        lines->isr = isr_size(lines, e->isr);
        return TRUE;
    case HISTORY_EVENT_TRUNCATED:
        lines->leo[b] = e->offset;
        lines->hw[b] = e->hw >= 0 ? e->hw : MIN(lines->hw[b], e->offset);
        return TRUE;
    case HISTORY_EVENT_ISR_CHANGED:
        lines->isr = isr_size(lines, e->isr);
        if (e->hw >= 0)
            lines->hw[b] = e->hw;
        return TRUE;
    default:
        return FALSE;
    }
}

static void
lines_row(OutFileCsv *csv, const ReplicaLines *lines, gint64 time_ns)
{
    outfile_csv_double(csv, (double)time_ns / 1e9);
    for (guint i = 0; i < lines->n; i++) {
        outfile_csv_int(csv, lines->leo[i]);
        outfile_csv_int(csv, lines->hw[i]);
    }
    outfile_csv_int(csv, lines->isr);
    outfile_csv_end_row(csv);
}

static GPtrArray *
lines_header(const ReplicaLines *lines)
{
    GPtrArray *header = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(header, g_strdup("time_s"));
    for (guint i = 0; i < lines->n; i++) {
        g_ptr_array_add(header, g_strdup_printf("leo_broker%d", lines->brokers[i]));
        g_ptr_array_add(header, g_strdup_printf("hw_broker%d", lines->brokers[i]));
    }
    g_ptr_array_add(header, g_strdup("isr_size"));
    g_ptr_array_add(header, NULL);
    return header;
}

/* Writes the rows: one per event that changes the lines, ACK rows thinned
 * to about REPLICA_ACK_ROWS_TARGET, and a last row at the run's end. */
static void
lines_rows(OutFileCsv *csv, ReplicaLines *lines, const History *history, const GArray *list,
           gint64 end_ns)
{
    const GArray *events = history_events(history);
    gint64 gap_ns = end_ns / REPLICA_ACK_ROWS_TARGET;
    gint64 last_ack_row_ns = G_MININT64 / 2;
    lines_row(csv, lines, 0);
    for (guint k = 0; list != NULL && k < list->len; k++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, g_array_index(list, guint, k));
        if (!lines_apply(lines, e))
            continue;
        if (e->kind == HISTORY_EVENT_ACK && e->time_ns - last_ack_row_ns < gap_ns)
            continue;
        if (e->kind == HISTORY_EVENT_ACK)
            last_ack_row_ns = e->time_ns;
        lines_row(csv, lines, e->time_ns);
    }
    lines_row(csv, lines, end_ns);
}

/* The run's end: its virtual time, or its last event or operation. */
static gint64
run_end_ns(const RunData *data)
{
    const History *history = checker_result_history(data->result);
    const GArray *events = history_events(history);
    gint64 end_ns = MAX((gint64)(data->run->virtual_s * 1e9), history_ops_end_ns(history));
    if (events->len > 0)
        end_ns = MAX(end_ns, g_array_index(events, HistoryEvent, events->len - 1).time_ns);
    return end_ns;
}

static gboolean
csv_replicas(Report *report, const RunData *data, const CheckerPartition *partition, GError **error)
{
    const History *history = checker_result_history(data->result);
    const GArray *list =
        explain_partition_events(data->explainer, partition->topic, partition->partition);
    ReplicaLines lines;
    lines_init(&lines, history, list, partition);
    if (lines.n == 0)
        return TRUE;
    g_autofree char *where =
        checker_partition_label(history, partition->topic, partition->partition);
    GString *base = g_string_new(data->slug);
    g_string_append(base, "-replicas");
    report_slug_append(base, where);
    char *basename = g_string_free(base, FALSE);
    g_autofree char *name = g_strdup_printf("%s.csv", basename);
    g_autoptr(GPtrArray) header = lines_header(&lines);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, (const char *const *)header->pdata, error)) {
        g_free(basename);
        return FALSE;
    }
    lines_rows(out.csv, &lines, history, list, run_end_ns(data));
    PlotJob *job = report_plots_job_add(
        report, JOB_REPLICAS, basename,
        g_strdup_printf("%s: %s, LEO and HW per replica", data->run->label, where));
    for (guint i = 0; i < lines.n; i++) {
        report_plots_job_series(job, g_strdup(name),
                                g_strdup_printf("LEO broker %d", lines.brokers[i]), 1, 2 + 2 * i,
                                PLOT_AXIS_Y1);
        report_plots_job_series(job, g_strdup(name),
                                g_strdup_printf("HW broker %d", lines.brokers[i]), 1, 3 + 2 * i,
                                PLOT_AXIS_Y1);
    }
    report_plots_job_series(job, g_strdup(name), g_strdup("ISR size"), 1, 2 + 2 * lines.n,
                            PLOT_AXIS_Y2);
    report_plots_job_windows(job, data->run->windows, data->run->windows_len);
    return report_csv_commit(&out, error);
}

/* The per-run CSV files, adding each run's series to the shared plots. */
static gboolean
csv_run(Report *report, const RunData *data, PlotJob *cdf, PlotJob *timeline, PlotJob *throughput,
        GError **error)
{
    guint64 rows = 0;
    const char *label = report_run_label(data);
    if (!csv_latency(report, data, &rows, error))
        return FALSE;
    if (rows > 0)
        report_plots_job_series(timeline, g_strdup_printf("%s-latency.csv", data->slug),
                                plot_label(label), 1, 2, PLOT_AXIS_Y1);
    if (!csv_cdf(report, data, &rows, error))
        return FALSE;
    if (rows > 0)
        report_plots_job_series(cdf, g_strdup_printf("%s-latency-cdf.csv", data->slug),
                                plot_label(label), 1, 2, PLOT_AXIS_Y1);
    if (!csv_throughput(report, data, &rows, error))
        return FALSE;
    if (rows > 0) {
        g_autofree char *shown = plot_label(label);
        report_plots_job_series(throughput, g_strdup_printf("%s-throughput.csv", data->slug),
                                g_strdup_printf("%s acknowledged", shown), 1, 2, PLOT_AXIS_Y1);
        report_plots_job_series(throughput, g_strdup_printf("%s-throughput.csv", data->slug),
                                g_strdup_printf("%s offered", shown), 1, 3, PLOT_AXIS_Y1);
    }
    if (!csv_events(report, data, error))
        return FALSE;
    const GArray *partitions = checker_result_partitions(data->result);
    guint plotted = 0;
    for (guint p = 0; p < partitions->len && plotted < REPORT_PARTITION_PLOTS_MAX; p++) {
        const CheckerPartition *partition = &g_array_index(partitions, CheckerPartition, p);
        if (!report->input->plots_all && !report_partition_has_anomaly(data, partition))
            continue;
        plotted++;
        if (!csv_replicas(report, data, partition, error))
            return FALSE;
    }
    return TRUE;
}

gboolean
report_partition_has_anomaly(const RunData *data, const CheckerPartition *partition)
{
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_result_examples(data->result, a);
        for (guint e = 0; e < examples->len; e++) {
            const CheckerExample *example = &g_array_index(examples, CheckerExample, e);
            if (example->topic == partition->topic && example->partition == partition->partition)
                return TRUE;
        }
    }
    return FALSE;
}

/* faults.csv: each run's fault windows, numbered as the plots show them. */
static gboolean
csv_faults(Report *report, GError **error)
{
    static const char *const header[] = {"run", "number", "fault", "start_s", "end_s", NULL};
    CsvOut out;
    if (!report_csv_open(&out, report->out, "faults.csv", header, error))
        return FALSE;
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        for (guint w = 0; w < data->run->windows_len; w++) {
            const ReportWindow *window = &data->run->windows[w];
            g_autofree char *number = report_plots_fault_number(w);
            outfile_csv_string(out.csv, report_run_label(data));
            outfile_csv_string(out.csv, number);
            outfile_csv_string(out.csv, window->label ? window->label : "fault");
            outfile_csv_double(out.csv, (double)window->start_ns / 1e9);
            outfile_csv_double(out.csv, (double)window->end_ns / 1e9);
            outfile_csv_end_row(out.csv);
        }
    }
    return report_csv_commit(&out, error);
}

/* ---- the comparison of [vary] runs ---- */

/* comparison.csv: one row per run, its varied keys as columns; the
 * durability-against-latency plot reads it and labels each point with the
 * run's number (the report's comparison table names the runs), as labels
 * of whole run names would print over each other. */
static gboolean
csv_comparison_runs(Report *report, GError **error)
{
    const RunData *first = g_ptr_array_index(report->runs, 0);
    GPtrArray *header = g_ptr_array_new();
    g_ptr_array_add(header, (gpointer) "number");
    g_ptr_array_add(header, (gpointer) "run");
    for (guint k = 0; k < first->run->settings_len; k++)
        g_ptr_array_add(header, (gpointer)first->run->settings[k].key);
    static const char *const counts[] = {"acked",  "lost_write", "duplicate", "nonmonotonic_send",
                                         "p50_ms", "p99_ms",     "max_ms",    "availability"};
    for (guint i = 0; i < G_N_ELEMENTS(counts); i++)
        g_ptr_array_add(header, (gpointer)counts[i]);
    CsvOut out;
    gboolean opened = report_csv_open_columns(&out, report->out, "comparison.csv", header, error);
    g_ptr_array_free(header, TRUE);
    if (!opened)
        return FALSE;
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const CheckerCounts *c = checker_result_counts(data->result);
        const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
        const CheckerStats *stats = checker_result_stats(data->result);
        g_autofree char *label = plot_label(data->run->label);
        outfile_csv_int(out.csv, (gint64)data->number);
        outfile_csv_string(out.csv, label);
        for (guint k = 0; k < data->run->settings_len; k++)
            outfile_csv_string(out.csv, data->run->settings[k].value);
        outfile_csv_int(out.csv, (gint64)c->acked);
        outfile_csv_int(out.csv, (gint64)c->anomalies[CHECKER_LOST_WRITE]);
        outfile_csv_int(out.csv, (gint64)c->anomalies[CHECKER_DUPLICATE]);
        outfile_csv_int(out.csv, (gint64)c->anomalies[CHECKER_NONMONOTONIC_SEND]);
        const double quantiles[] = {0.5, 0.99, 1.0};
        for (guint q = 0; q < G_N_ELEMENTS(quantiles); q++) {
            if (stats_histogram_count(acked) == 0)
                outfile_csv_string(out.csv, "");
            else
                outfile_csv_double(out.csv,
                                   (double)stats_histogram_quantile(acked, quantiles[q]) / 1e6);
        }
        if (stats->availability < 0)
            outfile_csv_string(out.csv, "");
        else
            outfile_csv_double(out.csv, stats->availability);
        outfile_csv_end_row(out.csv);
    }
    if (!report_csv_commit(&out, error))
        return FALSE;
    guint keys = first->run->settings_len;
    PlotJob *tradeoff =
        report_plots_job_add(report, JOB_TRADEOFF, g_strdup("comparison-tradeoff"),
                             g_strdup("Records lost against p99 latency, per run"));
    report_plots_job_series(tradeoff, g_strdup("comparison.csv"), g_strdup("runs"), keys + 8,
                            keys + 4, PLOT_AXIS_Y1);
    return TRUE;
}

/* comparison-load-N.csv per curve (the load, p50, p99) and
 * comparison-knees.csv; the latency-against-load plot reads them. */
static gboolean
csv_comparison_load(Report *report, GError **error)
{
    const char *key = compare_load_key(report->comparison);
    const GPtrArray *curves = compare_curves(report->comparison);
    PlotJob *load = report_plots_job_add(
        report, JOB_LOAD, g_strdup("comparison-load"),
        g_strdup_printf("Produce latency p99 against %s, knees marked", key));
    load->x_label = g_strdup(key);
    static const char *const header[] = {"load", "p50_ms", "p99_ms", "run", NULL};
    static const char *const knee_header[] = {"load", "p99_ms", "label", NULL};
    CsvOut knees;
    if (!report_csv_open(&knees, report->out, "comparison-knees.csv", knee_header, error))
        return FALSE;
    gboolean any_knee = FALSE;
    for (guint i = 0; i < curves->len; i++) {
        const CompareCurve *curve = g_ptr_array_index(curves, i);
        if (curve->points->len == 0)
            continue;
        g_autofree char *name = g_strdup_printf("comparison-load-%u.csv", i + 1);
        CsvOut out;
        if (!report_csv_open(&out, report->out, name, header, error)) {
            report_csv_abort(&knees);
            return FALSE;
        }
        for (guint p = 0; p < curve->points->len; p++) {
            const ComparePoint *point = &g_array_index(curve->points, ComparePoint, p);
            const RunData *data = g_ptr_array_index(report->runs, point->run);
            g_autofree char *label = plot_label(data->run->label);
            outfile_csv_double(out.csv, point->x);
            outfile_csv_double(out.csv, point->p50_ms);
            outfile_csv_double(out.csv, point->p99_ms);
            outfile_csv_string(out.csv, label);
            outfile_csv_end_row(out.csv);
        }
        if (!report_csv_commit(&out, error)) {
            report_csv_abort(&knees);
            return FALSE;
        }
        report_plots_job_series(load, g_strdup(name), plot_label(curve->label), 1, 3,
                                PLOT_AXIS_Y1);
        if (curve->knee >= 0) {
            const ComparePoint *knee =
                &g_array_index(curve->points, ComparePoint, (guint)curve->knee);
            g_autofree char *label = plot_label(curve->label);
            outfile_csv_double(knees.csv, knee->x);
            outfile_csv_double(knees.csv, knee->p99_ms);
            outfile_csv_string(knees.csv, label);
            outfile_csv_end_row(knees.csv);
            any_knee = TRUE;
        }
    }
    if (!report_csv_commit(&knees, error))
        return FALSE;
    if (any_knee)
        load->marks_csv = g_strdup("comparison-knees.csv");
    return TRUE;
}

static gboolean
csv_comparison(Report *report, GError **error)
{
    if (report->comparison == NULL)
        return TRUE;
    if (!csv_comparison_runs(report, error))
        return FALSE;
    return compare_load_key(report->comparison) == NULL || csv_comparison_load(report, error);
}

gboolean
report_csv_write_all(Report *report, GError **error)
{
    if (!csv_outcomes(report, error) || !csv_anomalies(report, error) ||
        !csv_faults(report, error))
        return FALSE;
    if (report->runs->len > 0) {
        PlotJob *bars =
            report_plots_job_add(report, JOB_BARS, g_strdup("outcomes"),
                                 g_strdup("Acknowledged, lost and duplicated records per run"));
        report_plots_job_series(bars, g_strdup("outcomes.csv"), g_strdup("acknowledged"), 1, 3,
                                PLOT_AXIS_Y1);
        report_plots_job_series(bars, g_strdup("outcomes.csv"), g_strdup("lost"), 1, 4,
                                PLOT_AXIS_Y1);
        report_plots_job_series(bars, g_strdup("outcomes.csv"), g_strdup("duplicated"), 1, 5,
                                PLOT_AXIS_Y1);
    }
    PlotJob *cdf = report_plots_job_add(report, JOB_CDF, g_strdup("latency-cdf"),
                                        g_strdup("Produce latency CDF (acknowledged sends)"));
    PlotJob *timeline =
        report_plots_job_add(report, JOB_TIMELINE, g_strdup("latency-timeline"),
                             g_strdup("Produce latency over time (acknowledged sends)"));
    PlotJob *throughput = report_plots_job_add(report, JOB_THROUGHPUT, g_strdup("throughput"),
                                               g_strdup("Offered and acknowledged records per second"));
    report_plots_job_shared_windows(timeline, report);
    report_plots_job_shared_windows(throughput, report);
    for (guint i = 0; i < report->runs->len; i++) {
        if (!csv_run(report, g_ptr_array_index(report->runs, i), cdf, timeline, throughput, error))
            return FALSE;
    }
    return csv_comparison(report, error);
}
