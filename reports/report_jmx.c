/*
 * report_jmx: each run's Kafka metrics under their JMX names (jmx.h) —
 * RUN-metrics.csv with a column per metric and broker, a plot of the
 * cluster metrics that moved in the first run with faults, and per fault the
 * change of each cluster metric across it; and, for that run, when each of
 * its most unavailable partitions had no leader (RUN-unavailability.csv and
 * its plot).
 */
#include "report_internal.h"


/* The run whose metrics are plotted: the first with a fault window, else
 * the first. */
static guint
plotted_run(const Report *report)
{
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        if (data->run->windows_len > 0)
            return i;
    }
    return 0;
}

static gboolean
metrics_csv(Report *report, const JmxMetrics *m, const char *name, GError **error)
{
    GPtrArray *header = g_ptr_array_new();
    g_ptr_array_add(header, (gpointer) "time_s");
    for (guint i = 0; i < m->series->len; i++)
        g_ptr_array_add(header, ((JmxSeries *)g_ptr_array_index(m->series, i))->name);
    CsvOut out;
    gboolean opened = report_csv_open_columns(&out, report->out, name, header, error);
    g_ptr_array_free(header, TRUE);
    if (!opened)
        return FALSE;
    for (guint b = 0; b < m->buckets; b++) {
        outfile_csv_double(out.csv, b * m->bucket_s);
        for (guint i = 0; i < m->series->len; i++) {
            const JmxSeries *series = g_ptr_array_index(m->series, i);
            outfile_csv_double(out.csv, g_array_index(series->values, double, b));
        }
        outfile_csv_end_row(out.csv);
    }
    return report_csv_commit(&out, error);
}

/* The plotted run's outages (failover.h) of its REPORT_OUTAGE_PARTITIONS most
 * unavailable partitions: a row per outage, the partition's row on the plot
 * (0 the worst), its name, start and end in seconds. */
static gboolean
outages_csv(Report *report, const RunData *data, GError **error)
{
    const History *history = checker_result_history(data->result);
    g_autoptr(GArray) worst = failover_result_worst(data->failover, REPORT_OUTAGE_PARTITIONS);
    if (worst->len == 0)
        return TRUE;
    static const char *const header[] = {"row", "partition", "start_s", "end_s", NULL};
    g_autofree char *name = g_strdup_printf("%s-unavailability.csv", data->slug);
    CsvOut out;
    if (!report_csv_open(&out, report->out, name, header, error))
        return FALSE;
    const GArray *outages = failover_result_outages(data->failover);
    for (guint w = 0; w < worst->len; w++) {
        const FailoverPartition *p = &g_array_index(worst, FailoverPartition, w);
        g_autofree char *where = checker_partition_label(history, p->topic, p->partition);
        for (guint i = 0; i < outages->len; i++) {
            const FailoverOutage *o = &g_array_index(outages, FailoverOutage, i);
            if (o->topic != p->topic || o->partition != p->partition)
                continue;
            outfile_csv_int(out.csv, (gint64)w);
            outfile_csv_string(out.csv, where);
            outfile_csv_double(out.csv, (double)o->start_ns / 1e9);
            outfile_csv_double(out.csv, (double)o->end_ns / 1e9);
            outfile_csv_end_row(out.csv);
        }
    }
    if (!report_csv_commit(&out, error))
        return FALSE;
    PlotJob *job = report_plots_job_add(
        report, JOB_OUTAGES, g_strdup("unavailability"),
        g_strdup_printf("%s: when each partition had no leader (the %u most unavailable)",
                        report_run_label(data), worst->len));
    report_plots_job_windows(job, data->run->windows, data->run->windows_len);
    report_plots_job_series(job, g_strdup(name), g_strdup("no leader"), 3, 1, PLOT_AXIS_Y1);
    return TRUE;
}

gboolean
report_jmx_write(Report *report, GError **error)
{
    if (report->runs->len == 0)
        return TRUE;
    guint plotted = plotted_run(report);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const JmxMetrics *m = data->metrics;
        if (m->buckets == 0)
            continue;
        g_autofree char *name = g_strdup_printf("%s-metrics.csv", data->slug);
        if (!metrics_csv(report, m, name, error))
            return FALSE;
        if (i != plotted)
            continue;
        PlotJob *job = report_plots_job_add(
            report, JOB_METRICS, g_strdup("metrics"),
            g_strdup_printf("%s: the cluster's metrics that moved", report_run_label(data)));
        report_plots_job_windows(job, data->run->windows, data->run->windows_len);
        for (guint s = 0; s < m->series->len; s++) {
            const JmxSeries *series = g_ptr_array_index(m->series, s);
            /* One axis: the cluster's counts and rates of a few a second. */
            if (series->broker >= 0 || !series->small || !jmx_series_moved(series))
                continue;
            report_plots_job_series(job, g_strdup(name), g_strdup(series->short_name), 1, 2 + s,
                                    PLOT_AXIS_Y1);
        }
    }
    return outages_csv(report, g_ptr_array_index(report->runs, plotted), error);
}
