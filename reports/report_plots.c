/*
 * report_plots: plot jobs (what to draw: series and shaded windows) and
 * their rendering with gnuplot — each job's .gp script, then its images,
 * drawn in the report's temporary directory (report_plots_render).
 */
#include "report_internal.h"

#include <string.h>

#include <glib/gstdio.h>

#include "outfile.h"
#include "plot.h"

/* ---- plot jobs ---- */

void
report_plots_job_free(gpointer pointer)
{
    PlotJob *job = pointer;
    g_free(job->basename);
    g_free(job->title);
    g_array_free(job->series, TRUE);
    g_ptr_array_free(job->strings, TRUE);
    g_array_free(job->windows, TRUE);
    g_free(job->x_label);
    g_free(job->marks_csv);
    g_free(job);
}

PlotJob *
report_plots_job_add(Report *report, JobKind kind, char *basename, char *title)
{
    PlotJob *job = g_new0(PlotJob, 1);
    job->kind = kind;
    job->basename = basename;
    job->title = title;
    job->series = g_array_new(FALSE, TRUE, sizeof(PlotSeries));
    job->strings = g_ptr_array_new_with_free_func(g_free);
    job->windows = g_array_new(FALSE, TRUE, sizeof(PlotWindow));
    g_ptr_array_add(report->jobs, job);
    return job;
}

/* Adds a series; takes `csv` and `label`. */
void
report_plots_job_series(PlotJob *job, char *csv, char *label, guint x, guint y, PlotAxis axis)
{
    g_ptr_array_add(job->strings, csv);
    g_ptr_array_add(job->strings, label);
    PlotSeries series = {csv, label, x, y, axis};
    g_array_append_val(job->series, series);
}

char *
report_plots_fault_number(guint index)
{
    return g_strdup_printf("%u", index + 1);
}

void
report_plots_job_windows(PlotJob *job, const ReportWindow *windows, guint len)
{
    /* A band shows its number; the fault table beside the plot names it
     * (report_plots_fault_number), as full labels overlap each other. */
    for (guint i = 0; i < len; i++) {
        char *number = report_plots_fault_number(i);
        g_ptr_array_add(job->strings, number);
        PlotWindow window = {(double)windows[i].start_ns / 1e9, (double)windows[i].end_ns / 1e9,
                             number};
        g_array_append_val(job->windows, window);
    }
}

/* The windows to shade on plots of every run: the runs' windows when all
 * runs share them, else none (shading one run's faults over another run's
 * curve would mislead). */
void
report_plots_job_shared_windows(PlotJob *job, const Report *report)
{
    const ReportInput *input = report->input;
    if (input->runs_len == 0)
        return;
    const ReportRun *first = &input->runs[0];
    for (guint r = 1; r < input->runs_len; r++) {
        const ReportRun *run = &input->runs[r];
        if (run->windows_len != first->windows_len)
            return;
        for (guint i = 0; i < run->windows_len; i++) {
            if (run->windows[i].start_ns != first->windows[i].start_ns ||
                run->windows[i].end_ns != first->windows[i].end_ns)
                return;
        }
    }
    report_plots_job_windows(job, first->windows, first->windows_len);
}

/* ---- rendering plots ---- */

static GString *
job_script(const PlotJob *job, const PlotSpec *spec)
{
    switch (job->kind) {
    case JOB_BARS:
        return plot_script_outcome_bars(spec);
    case JOB_CDF:
        return plot_script_latency_cdf(spec);
    case JOB_TIMELINE:
        return plot_script_latency_timeline(spec);
    case JOB_THROUGHPUT:
        return plot_script_throughput(spec);
    case JOB_TRADEOFF:
        return plot_script_tradeoff(spec);
    case JOB_LOAD:
        return plot_script_load(spec);
    case JOB_UTILIZATION:
        return plot_script_utilization(spec);
    case JOB_METRICS:
        return plot_script_metrics(spec);
    case JOB_OUTAGES:
        return plot_script_outages(spec);
    default:
        return plot_script_replicas(spec);
    }
}

static void
job_spec(const PlotJob *job, PlotPng png, const char *basename, PlotSpec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->output_basename = basename;
    spec->title = job->title;
    spec->series = (const PlotSeries *)(gconstpointer)job->series->data;
    spec->series_len = job->series->len;
    spec->windows = (const PlotWindow *)(gconstpointer)job->windows->data;
    spec->windows_len = job->windows->len;
    spec->label_column = 1;
    spec->x_label = job->x_label;
    spec->marks_csv = job->marks_csv;
    spec->png = png;
}

/* Removes what gnuplot drew of a plot it failed to finish. */
static void
images_remove(const char *dir, const char *basename)
{
    static const char *const extensions[] = {"svg", "png"};
    for (guint i = 0; i < G_N_ELEMENTS(extensions); i++) {
        g_autofree char *name = g_strconcat(basename, ".", extensions[i], NULL);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_unlink(path);
    }
}

/* `message` with the temporary directory gnuplot ran in named as the report
 * directory, which is where the user will look (transfer full). */
static char *
shown_message(const Report *report, const char *message)
{
    g_auto(GStrv) parts = g_strsplit(message, report->dir, -1);
    return g_strjoinv(outfile_dir_target(report->out), parts);
}

/* Writes NAME.gp, then lets gnuplot draw its images. They are drawn under
 * their own names: the directory is the report's temporary one, so no reader
 * sees half an image, and a killed run's are removed with it. A script that
 * cannot be written is an error (the disk is failing); a plot gnuplot cannot
 * draw is a warning. */
static gboolean
job_render(Report *report, PlotJob *job, PlotPng png, GError **error)
{
    PlotSpec spec;
    job_spec(job, png, job->basename, &spec);
    g_autoptr(GString) script = job_script(job, &spec);
    g_autofree char *script_name = g_strdup_printf("%s.gp", job->basename);
    if (!outfile_dir_write(report->out, script_name, script->str, script->len, error))
        return FALSE;
    g_autoptr(GError) local = NULL;
    job->drawn = plot_render(script, &spec, report->dir, &local);
    if (!job->drawn) {
        images_remove(report->dir, job->basename);
        g_autofree char *why = shown_message(report, local->message);
        report_warn(report, "plot %s left out: %s", job->basename, why);
    }
    return TRUE;
}

gboolean
report_plots_render(Report *report, GError **error)
{
    if (!plot_gnuplot_available()) {
        report_warn(report, "gnuplot is not on the PATH: the report was written without its "
                            "plots (install gnuplot and run again to get them)");
        return TRUE;
    }
    PlotTerminals terminals = {0};
    g_autoptr(GError) local = NULL;
    if (!plot_terminals_probe(&terminals, &local) || !terminals.svg) {
        report_warn(report, "gnuplot cannot draw SVG, so the report has no plots%s%s",
                    local ? ": " : "", local ? local->message : "");
        return TRUE;
    }
    for (guint i = 0; i < report->jobs->len; i++) {
        PlotJob *job = g_ptr_array_index(report->jobs, i);
        if (job->series->len > 0 && !job_render(report, job, terminals.png, error))
            return FALSE;
    }
    return TRUE;
}
