/*
 * report: summary.json, report.md/html, CSV series and gnuplot plots of a
 * scenario's runs, and the terminal table (see report.h).
 *
 * report_write proceeds as:
 *   report_runs_prepare    each run's checker result (given or computed)
 *                          and the explanation of every example (here)
 *   report_csv_write_all   the CSV files, and one PlotJob per plot whose
 *                          series have data (report_csv.c)
 *   report_plots_render    each PlotJob: its .gp script, then its images
 *                          drawn by gnuplot (report_plots.c)
 *   report_document_build  one Document (headings, paragraphs, tables,
 *                          lists, images; report_document.c), rendered
 *                          twice: report.md (report_markdown.c) and
 *                          report.html (report_html.c)
 *   summary.json           last (report_json.c)
 * all into the temporary directory of an OutDir (outfile.h), renamed into
 * place by report_write once everything is written, so the report directory
 * holds the whole previous report until then and never a mix of two runs.
 * The terminal table is report_table.c. This file holds the entry points,
 * each run's prepared data and the helpers the writers share; the types
 * they share are in report_internal.h.
 *
 * The Document keeps Markdown and HTML from drifting apart: both are
 * renderings of the same blocks.
 *
 * Nothing here is stateful beyond one report_write call; the checker result
 * of a run is only read.
 */
#include "report.h"

#include <stdarg.h>
#include <string.h>

#include "explain.h"
#include "outfile.h"
#include "report_internal.h"
#include "sim_assert.h"
#include "stats.h"

#define SLUG_LABEL_MAX 40

void
report_run_init(ReportRun *run)
{
    KSIM_ASSERT(run != NULL);
    memset(run, 0, sizeof *run);
    run->last_heal_ns = CHECKER_HEAL_AUTO;
}

/* Appends `text` as a file name part: "acks=all, min.insync.replicas=2"
 * gives "-acks-all-min-insync-replicas-2" (runs of other characters become
 * one dash), at most SLUG_LABEL_MAX characters of it. */
void
report_slug_append(GString *slug, const char *text)
{
    gboolean dash = TRUE;
    gsize start = slug->len;
    for (const char *c = text != NULL ? text : ""; *c != '\0'; c++) {
        if (slug->len - start >= SLUG_LABEL_MAX)
            break;
        if (!g_ascii_isalnum(*c)) {
            dash = TRUE;
            continue;
        }
        if (dash)
            g_string_append_c(slug, '-');
        g_string_append_c(slug, g_ascii_tolower(*c));
        dash = FALSE;
    }
}

/* "run1-acks-all": the prefix of a run's files. */
static char *
slug_new(guint number, const char *label)
{
    GString *slug = g_string_new(NULL);
    g_string_printf(slug, "run%u", number);
    report_slug_append(slug, label);
    return g_string_free(slug, FALSE);
}

static void
chains_free(gpointer data)
{
    g_ptr_array_free(data, TRUE);
}

static RunData *
run_data_new(const ReportRun *run, guint number, gboolean explain)
{
    KSIM_ASSERT(run->history != NULL);
    RunData *data = g_new0(RunData, 1);
    data->run = run;
    data->number = number;
    data->slug = slug_new(number, run->label);
    data->result = run->result;
    if (data->result == NULL) {
        CheckerOptions options;
        checker_options_init(&options);
        options.last_heal_ns = run->last_heal_ns;
        data->owned = checker_run(run->history, &options);
        data->result = data->owned;
    }
    data->consumers = run->consumers;
    if (data->consumers == NULL) {
        data->consumers_owned = checker_consumer_run(run->history, data->result, NULL);
        data->consumers = data->consumers_owned;
    }
    data->txn = run->txn;
    if (data->txn == NULL) {
        data->txn_owned = checker_txn_run(run->history, data->result, NULL);
        data->txn = data->txn_owned;
    }
    const History *history = checker_result_history(data->result);
    data->failover = failover_run(history);
    data->utilization = utilization_new(history, run->virtual_s);
    data->metrics = jmx_metrics_new(history, run->virtual_s);
    if (!explain)
        return data;
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_txn_examples(data->txn, a);
        data->txn_chains[a] = g_ptr_array_new_with_free_func(chains_free);
        for (guint e = 0; e < examples->len; e++)
            g_ptr_array_add(data->txn_chains[a],
                            explain_txn_example(data->txn,
                                                &g_array_index(examples, TxnExample, e)));
    }
    data->explainer = explain_new(data->result);
    data->consumer_chains = g_ptr_array_new_with_free_func(chains_free);
    for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++) {
        const ConsumerGroupResult *group = checker_consumer_group(data->consumers, g);
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
            GPtrArray *chains = g_ptr_array_new_with_free_func(chains_free);
            for (guint e = 0; e < group->examples[a]->len; e++)
                g_ptr_array_add(chains, explain_consumer_example(
                                            data->explainer, data->consumers, group,
                                            &g_array_index(group->examples[a], ConsumerExample, e)));
            g_ptr_array_add(data->consumer_chains, chains);
        }
    }
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_result_examples(data->result, a);
        data->chains[a] = g_ptr_array_new_with_free_func(chains_free);
        for (guint e = 0; e < examples->len; e++)
            g_ptr_array_add(
                data->chains[a],
                explain_example(data->explainer, &g_array_index(examples, CheckerExample, e)));
        data->patterns[a] = a == CHECKER_LOST_WRITE
                                ? patterns_lost_writes(data->explainer, data->result)
                                : patterns_of_examples(data->explainer, data->result, examples);
    }
    return data;
}

static void
run_data_free(gpointer pointer)
{
    RunData *data = pointer;
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        if (data->chains[a] != NULL)
            g_ptr_array_free(data->chains[a], TRUE);
        if (data->patterns[a] != NULL)
            g_ptr_array_free(data->patterns[a], TRUE);
        if (data->diagrams[a] != NULL)
            g_ptr_array_free(data->diagrams[a], TRUE);
    }
    if (data->consumer_chains != NULL)
        g_ptr_array_free(data->consumer_chains, TRUE);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        if (data->txn_chains[a] != NULL)
            g_ptr_array_free(data->txn_chains[a], TRUE);
    }
    checker_txn_free(data->txn_owned);
    failover_result_free(data->failover);
    utilization_free(data->utilization);
    jmx_metrics_free(data->metrics);
    explain_free(data->explainer);
    checker_consumer_free(data->consumers_owned);
    checker_result_free(data->owned);
    g_free(data->slug);
    g_free(data);
}

GPtrArray *
report_runs_prepare(const ReportInput *input, gboolean explain)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(input->runs != NULL || input->runs_len == 0);
    GPtrArray *runs = g_ptr_array_new_with_free_func(run_data_free);
    for (guint i = 0; i < input->runs_len; i++)
        g_ptr_array_add(runs, run_data_new(&input->runs[i], i + 1, explain));
    return runs;
}

guint64
report_request_parts(const RunData *data, StatsHistogram *parts[REPORT_PARTS])
{
    for (guint k = 0; k < REPORT_PARTS; k++)
        parts[k] = stats_histogram_new(2);
    const GArray *requests = history_requests(checker_result_history(data->result));
    guint64 count = 0;
    for (guint i = 0; i < requests->len; i++) {
        const HistoryRequest *r = &g_array_index(requests, HistoryRequest, i);
        if (r->kind != HISTORY_REQUEST_PRODUCE)
            continue;
        const gint64 values[REPORT_PARTS] = {r->read_ns,   r->queue_ns, r->local_ns,
                                             r->remote_ns, r->send_ns,  history_request_total_ns(r)};
        for (guint k = 0; k < REPORT_PARTS; k++)
            stats_histogram_record(parts[k], MAX(values[k], 0));
        count++;
    }
    return count;
}

Comparison *
report_comparison_new(const GPtrArray *runs)
{
    guint n = runs->len;
    g_autofree CompareRun *compared = g_new0(CompareRun, MAX(n, 1u));
    GPtrArray *strings = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n; i++) {
        const RunData *data = g_ptr_array_index(runs, i);
        const ReportRun *run = data->run;
        const char **keys = g_new0(const char *, run->settings_len + 1);
        const char **values = g_new0(const char *, run->settings_len + 1);
        for (guint k = 0; k < run->settings_len; k++) {
            keys[k] = run->settings[k].key;
            values[k] = run->settings[k].value;
        }
        g_ptr_array_add(strings, keys);
        g_ptr_array_add(strings, values);
        const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
        gboolean measured = stats_histogram_count(acked) > 0;
        compared[i] = (CompareRun){
            .label = report_run_label(data),
            .keys = keys,
            .values = values,
            .keys_len = run->settings_len,
            .p50_ms = measured ? (double)stats_histogram_quantile(acked, 0.5) / 1e6 : -1,
            .p99_ms = measured ? (double)stats_histogram_quantile(acked, 0.99) / 1e6 : -1,
            .lost = checker_result_counts(data->result)->anomalies[CHECKER_LOST_WRITE],
        };
    }
    /* Runs of one scenario share its [vary] keys; anything else (a report
     * of runs put together by hand) has nothing to compare. */
    gboolean same = n > 0;
    for (guint i = 1; i < n && same; i++) {
        same = compared[i].keys_len == compared[0].keys_len;
        for (guint k = 0; same && k < compared[0].keys_len; k++)
            same = strcmp(compared[i].keys[k], compared[0].keys[k]) == 0;
    }
    Comparison *comparison = same ? compare_new(compared, n) : NULL;
    g_ptr_array_free(strings, TRUE);
    return comparison;
}

const char *
report_run_label(const RunData *data)
{
    return data->run->label != NULL ? data->run->label : data->slug;
}

gboolean
report_expectations_passed(const ReportRun *run)
{
    return run->expectations_failed == NULL || run->expectations_failed[0] == NULL;
}

/* ---- number formatting ---- */

static char *
ms_text(gint64 ns)
{
    return g_strdup_printf("%.3f", (double)ns / 1e6);
}

char *
report_quantile_ms_text(const StatsHistogram *h, double q)
{
    if (stats_histogram_count(h) == 0)
        return g_strdup("-");
    return ms_text(stats_histogram_quantile(h, q));
}

char *
report_u64_text(guint64 value)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT, value);
}

/* ---- warnings ---- */

void
report_warn(Report *report, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(report->warnings, g_strdup_vprintf(format, args));
    va_end(args);
}

/* ---- report_write ---- */

static gboolean
documents_write(const Report *report, GError **error)
{
    Document *doc = report_document_build(report);
    g_autoptr(GString) markdown = report_markdown_render(doc);
    g_autoptr(GString) html = report_html_render(doc, report);
    g_ptr_array_free(doc, TRUE);
    return outfile_dir_write(report->out, "report.md", markdown->str, markdown->len, error) &&
           outfile_dir_write(report->out, "report.html", html->str, html->len, error);
}

static gboolean
report_write_all(Report *report, GError **error)
{
    if (!report_csv_write_all(report, error) || !report_latency_write(report, error) ||
        !report_jmx_write(report, error) ||
        !report_plots_render(report, error) ||
        !report_diagrams_write(report, error) || !documents_write(report, error))
        return FALSE;
    g_autofree char *summary = report_json_summary(report->input, report->runs, report->warnings);
    return outfile_dir_write(report->out, "summary.json", summary, strlen(summary), error);
}

gboolean
report_write_into(const ReportInput *input, OutDir *out, GPtrArray *warnings, GError **error)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(out != NULL);
    Report report = {0};
    report.input = input;
    report.out = out;
    report.dir = outfile_dir_path(out);
    report.runs = report_runs_prepare(input, TRUE);
    report.jobs = g_ptr_array_new_with_free_func(report_plots_job_free);
    report.warnings = g_ptr_array_new_with_free_func(g_free);
    report.comparison = report_comparison_new(report.runs);
    gboolean ok = report_write_all(&report, error);
    compare_free(report.comparison);
    for (guint i = 0; warnings != NULL && i < report.warnings->len; i++)
        g_ptr_array_add(warnings, g_strdup(g_ptr_array_index(report.warnings, i)));
    g_ptr_array_free(report.warnings, TRUE);
    g_ptr_array_free(report.jobs, TRUE);
    g_ptr_array_free(report.runs, TRUE);
    return ok;
}

gboolean
report_write(const ReportInput *input, const char *out_dir, GPtrArray *warnings, GError **error)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(out_dir != NULL);
    OutDir *out = outfile_dir_open(out_dir, REPORT_MARKER, error);
    if (out == NULL)
        return FALSE;
    if (!report_write_into(input, out, warnings, error)) {
        outfile_dir_abort(out);
        return FALSE;
    }
    return outfile_dir_commit(out, error);
}
