/*
 * report_latency: what the brokers' request handling shows beside the
 * produce latency — each run's I/O-thread utilisation over time
 * (utilization.h, read once per run into RunData), as RUN-utilization.csv
 * (a column per broker) and one plot of each run's busiest broker.
 */
#include "report_internal.h"

static gboolean
utilization_csv(Report *report, const Utilization *u, const char *name, GError **error)
{
    GPtrArray *header = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(header, g_strdup("time_s"));
    for (guint i = 0; i < u->brokers->len; i++) {
        const UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
        g_ptr_array_add(header, g_strdup_printf("broker_%d", broker->broker));
    }
    CsvOut out;
    gboolean opened = report_csv_open_columns(&out, report->out, name, header, error);
    g_ptr_array_free(header, TRUE);
    if (!opened)
        return FALSE;
    for (guint b = 0; b < u->buckets; b++) {
        /* Each bucket at its middle. */
        outfile_csv_double(out.csv, (b + 0.5) * u->bucket_s);
        for (guint i = 0; i < u->brokers->len; i++) {
            const UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
            outfile_csv_double(out.csv, g_array_index(broker->share, double, b));
        }
        outfile_csv_end_row(out.csv);
    }
    return report_csv_commit(&out, error);
}

gboolean
report_latency_write(Report *report, GError **error)
{
    PlotJob *job = report_plots_job_add(
        report, JOB_UTILIZATION, g_strdup("utilization"),
        g_strdup("I/O-thread utilisation of each run's busiest broker"));
    report_plots_job_shared_windows(job, report);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const Utilization *u = data->utilization;
        const UtilizationBroker *busiest = utilization_busiest(u);
        if (busiest == NULL)
            continue;
        g_autofree char *name = g_strdup_printf("%s-utilization.csv", data->slug);
        if (!utilization_csv(report, u, name, error))
            return FALSE;
        guint column = 0; /* its column in the CSV: after time_s, in broker order */
        while (g_ptr_array_index(u->brokers, column) != busiest)
            column++;
        char *shown = g_strdup_printf("%s: broker %d", report_run_label(data), busiest->broker);
        g_strdelimit(shown, "\"", '\'');
        report_plots_job_series(job, g_strdup(name), shown, 1, 2 + column, PLOT_AXIS_Y1);
    }
    return TRUE;
}
