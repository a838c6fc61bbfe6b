/*
 * report_jmx: each run's Kafka metrics under their JMX names (jmx.h) —
 * RUN-metrics.csv with a column per metric and broker, a plot of the
 * cluster metrics that moved in the first run with faults, and per fault the
 * change of each cluster metric across it; and, for that run, when each of
 * its most unavailable partitions had no leader (RUN-unavailability.csv and
 * its plot).
 */
#include "report_internal.h"

#include "failover.h"
#include "jmx.h"
#include "outfile.h"

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
    g_ptr_array_add(header, NULL);
    OutFile *file = outfile_dir_file_open(report->out, name, error);
    if (file == NULL) {
        g_ptr_array_free(header, TRUE);
        return FALSE;
    }
    OutFileCsv *csv = outfile_csv_new(outfile_stream(file), (const char *const *)header->pdata);
    g_ptr_array_free(header, TRUE);
    for (guint b = 0; b < m->buckets; b++) {
        outfile_csv_double(csv, b * m->bucket_s);
        for (guint i = 0; i < m->series->len; i++)
            outfile_csv_double(csv, g_array_index(((JmxSeries *)g_ptr_array_index(m->series, i))->values,
                                                  double, b));
        outfile_csv_end_row(csv);
    }
    outfile_csv_free(csv);
    return outfile_commit(file, error);
}

/* The plotted run's outages (failover.h) of its REPORT_OUTAGE_PARTITIONS most
 * unavailable partitions: a row per outage, the partition's row on the plot
 * (0 the worst), its name, start and end in seconds. */
static gboolean
outages_csv(Report *report, const RunData *data, GError **error)
{
    const History *history = checker_result_history(data->result);
    g_autoptr(FailoverResult) failover = failover_run(history);
    g_autoptr(GArray) worst = failover_result_worst(failover, REPORT_OUTAGE_PARTITIONS);
    if (worst->len == 0)
        return TRUE;
    static const char *const header[] = {"row", "partition", "start_s", "end_s", NULL};
    g_autofree char *name = g_strdup_printf("%s-unavailability.csv", data->slug);
    OutFile *file = outfile_dir_file_open(report->out, name, error);
    if (file == NULL)
        return FALSE;
    OutFileCsv *csv = outfile_csv_new(outfile_stream(file), header);
    const GArray *outages = failover_result_outages(failover);
    for (guint w = 0; w < worst->len; w++) {
        const FailoverPartition *p = &g_array_index(worst, FailoverPartition, w);
        g_autofree char *where = checker_partition_label(history, p->topic, p->partition);
        for (guint i = 0; i < outages->len; i++) {
            const FailoverOutage *o = &g_array_index(outages, FailoverOutage, i);
            if (o->topic != p->topic || o->partition != p->partition)
                continue;
            outfile_csv_int(csv, (gint64)w);
            outfile_csv_string(csv, where);
            outfile_csv_double(csv, (double)o->start_ns / 1e9);
            outfile_csv_double(csv, (double)o->end_ns / 1e9);
            outfile_csv_end_row(csv);
        }
    }
    outfile_csv_free(csv);
    if (!outfile_commit(file, error))
        return FALSE;
    const char *label = data->run->label ? data->run->label : data->slug;
    PlotJob *job = report_plots_job_add(
        report, JOB_OUTAGES, g_strdup("unavailability"),
        g_strdup_printf("%s: when each partition had no leader (the %u most unavailable)", label,
                        worst->len));
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
        JmxMetrics *m = jmx_metrics_new(checker_result_history(data->result), data->run->virtual_s);
        if (m->buckets == 0) {
            jmx_metrics_free(m);
            continue;
        }
        g_autofree char *name = g_strdup_printf("%s-metrics.csv", data->slug);
        if (!metrics_csv(report, m, name, error)) {
            jmx_metrics_free(m);
            return FALSE;
        }
        if (i == plotted) {
            const char *label = data->run->label ? data->run->label : data->slug;
            PlotJob *job = report_plots_job_add(
                report, JOB_METRICS, g_strdup("metrics"),
                g_strdup_printf("%s: the cluster's metrics that moved", label));
            report_plots_job_windows(job, data->run->windows, data->run->windows_len);
            for (guint s = 0; s < m->series->len; s++) {
                const JmxSeries *series = g_ptr_array_index(m->series, s);
                /* Counts of partitions and controllers, and ISR and
                 * election rates: values on one scale. */
                gboolean small = series->kind == JMX_GAUGE_MAX || series->kind == JMX_GAUGE_MIN ||
                                 g_str_has_prefix(series->short_name, "Isr") ||
                                 g_str_has_prefix(series->short_name, "LeaderElection");
                if (series->broker >= 0 || !small || !jmx_series_moved(series))
                    continue;
                report_plots_job_series(job, g_strdup(name), g_strdup(series->short_name), 1,
                                        2 + s, PLOT_AXIS_Y1);
            }
        }
        jmx_metrics_free(m);
    }
    return outages_csv(report, g_ptr_array_index(report->runs, plotted), error);
}
