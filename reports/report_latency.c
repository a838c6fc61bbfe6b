/*
 * report_latency: what the brokers' request handling shows beside the
 * produce latency — each run's I/O-thread utilisation over time
 * (utilization.h), as RUN-utilization.csv (a column per broker) and one plot
 * of each run's busiest broker.
 */
#include "report_internal.h"

#include "outfile.h"
#include "utilization.h"

static gboolean
utilization_csv(Report *report, const Utilization *u, const char *name, GError **error)
{
    GPtrArray *header = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(header, g_strdup("time_s"));
    for (guint i = 0; i < u->brokers->len; i++) {
        const UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
        g_ptr_array_add(header, g_strdup_printf("broker_%d", broker->broker));
    }
    g_ptr_array_add(header, NULL);
    OutFile *file = outfile_dir_file_open(report->out, name, error);
    if (file == NULL) {
        g_ptr_array_free(header, TRUE);
        return FALSE;
    }
    OutFileCsv *csv = outfile_csv_new(outfile_stream(file), (const char *const *)header->pdata);
    g_ptr_array_free(header, TRUE);
    for (guint b = 0; b < u->buckets; b++) {
        /* Each bucket at its middle. */
        outfile_csv_double(csv, (b + 0.5) * u->bucket_s);
        for (guint i = 0; i < u->brokers->len; i++) {
            const UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
            outfile_csv_double(csv, g_array_index(broker->share, double, b));
        }
        outfile_csv_end_row(csv);
    }
    outfile_csv_free(csv);
    return outfile_commit(file, error);
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
        Utilization *u =
            utilization_new(checker_result_history(data->result), data->run->virtual_s);
        const UtilizationBroker *busiest = utilization_busiest(u);
        if (busiest == NULL) {
            utilization_free(u);
            continue;
        }
        g_autofree char *name = g_strdup_printf("%s-utilization.csv", data->slug);
        if (!utilization_csv(report, u, name, error)) {
            utilization_free(u);
            return FALSE;
        }
        guint column = 2;
        for (guint b = 0; b < u->brokers->len; b++) {
            if (g_ptr_array_index(u->brokers, b) == busiest)
                column = 2 + b;
        }
        const char *label = data->run->label ? data->run->label : data->slug;
        char *shown = g_strdup_printf("%s: broker %d", label, busiest->broker);
        g_strdelimit(shown, "\"", '\'');
        report_plots_job_series(job, g_strdup(name), shown, 1, column, PLOT_AXIS_Y1);
        utilization_free(u);
    }
    return TRUE;
}
