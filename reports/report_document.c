/*
 * report_document: the Document both report.md and report.html render —
 * its blocks (headings, paragraphs, warnings, tables, lists, images) and
 * its sections: durability, explanations, consumers, transactions,
 * latency, replicas, timeline and runs (report_document_build).
 */
#include "report_internal.h"

#include "failover.h"

#include <stdarg.h>
#include <string.h>

/* Patterns of one anomaly the report explains; the rest are counted. */
#define REPORT_PATTERNS_SHOWN 5

/* ---- document ---- */

static void
block_free(gpointer pointer)
{
    Block *block = pointer;
    g_free(block->text);
    g_free(block->name);
    if (block->rows != NULL)
        g_ptr_array_free(block->rows, TRUE);
    if (block->links != NULL)
        g_ptr_array_free(block->links, TRUE);
    g_free(block);
}

static Block *
doc_add(Document *doc, BlockKind kind, char *text)
{
    Block *block = g_new0(Block, 1);
    block->kind = kind;
    block->text = text;
    g_ptr_array_add(doc, block);
    return block;
}

static void doc_heading(Document *doc, int level, const char *format, ...) G_GNUC_PRINTF(3, 4);
static void doc_paragraph(Document *doc, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
doc_heading(Document *doc, int level, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    Block *block = doc_add(doc, BLOCK_HEADING, g_strdup_vprintf(format, args));
    va_end(args);
    block->level = level;
}

static void
doc_paragraph(Document *doc, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    doc_add(doc, BLOCK_PARAGRAPH, g_strdup_vprintf(format, args));
    va_end(args);
}

static Block *
doc_list(Document *doc, gboolean ordered)
{
    Block *block = doc_add(doc, ordered ? BLOCK_ORDERED : BLOCK_LIST, NULL);
    block->rows = g_ptr_array_new_with_free_func(g_free);
    return block;
}

static void
row_free(gpointer pointer)
{
    g_ptr_array_free(pointer, TRUE);
}

/* A table whose header is the NULL-terminated list of column names. */
static Block *
doc_table(Document *doc, const char *const *header)
{
    Block *block = doc_add(doc, BLOCK_TABLE, NULL);
    block->rows = g_ptr_array_new_with_free_func(row_free);
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; header[i] != NULL; i++)
        g_ptr_array_add(row, g_strdup(header[i]));
    g_ptr_array_add(block->rows, row);
    return block;
}

/* A new row of `table`, to fill with row_cell (cells are taken). */
static GPtrArray *
table_row(Block *table)
{
    GPtrArray *row = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(table->rows, row);
    return row;
}

static void
row_cell(GPtrArray *row, char *text)
{
    g_ptr_array_add(row, text);
}

static void
doc_image(Document *doc, const PlotJob *job)
{
    if (job == NULL || !job->drawn)
        return;
    Block *block = doc_add(doc, BLOCK_IMAGE, g_strdup(job->title));
    block->name = g_strdup(job->basename);
}

static const PlotJob *
job_find(const Report *report, const char *basename)
{
    for (guint i = 0; i < report->jobs->len; i++) {
        const PlotJob *job = g_ptr_array_index(report->jobs, i);
        if (strcmp(job->basename, basename) == 0)
            return job;
    }
    return NULL;
}

/* ---- document: sections ---- */

static void
doc_header(Document *doc, const Report *report)
{
    const ReportInput *input = report->input;
    doc_heading(doc, 1, "ksim report: %s", input->scenario ? input->scenario : "(scenario)");
    doc_paragraph(doc,
                  "Scenario %s (SHA-256 %s), seed %" G_GUINT64_FORMAT ", %u run%s; ksim %s, "
                  "commit %s.",
                  input->scenario ? input->scenario : "-",
                  input->scenario_sha256 ? input->scenario_sha256 : "-", input->seed,
                  input->runs_len, input->runs_len == 1 ? "" : "s",
                  input->ksim_version ? input->ksim_version : "-",
                  input->git_commit ? input->git_commit : "-");
    for (guint i = 0; i < report->warnings->len; i++)
        doc_add(doc, BLOCK_WARNING, g_strdup(g_ptr_array_index(report->warnings, i)));
}

static void
durability_row(Block *table, const RunData *data)
{
    const CheckerCounts *c = checker_result_counts(data->result);
    GPtrArray *row = table_row(table);
    row_cell(row, g_strdup(report_run_label(data)));
    row_cell(row, report_u64_text(c->attempted));
    row_cell(row, report_u64_text(c->acked));
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        row_cell(row, report_u64_text(c->anomalies[a]));
    row_cell(row, report_u64_text(c->unknown_committed));
    row_cell(row, report_u64_text(c->invariant_violations));
    row_cell(row, g_strdup(report_expectations_passed(data->run) ? "passed" : "FAILED"));
}

static void
doc_durability(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",
                                         "Sent",
                                         "Acked",
                                         "Lost",
                                         "Duplicated",
                                         "Reordered",
                                         "Inconsistent",
                                         "Failed but present",
                                         "Unknown, committed",
                                         "Invariant violations",
                                         "Expectations",
                                         NULL};
    doc_heading(doc, 2, "Durability");
    doc_paragraph(doc, "Every acknowledged record is looked for in the final committed log of "
                       "its partition (the leader's log below its high watermark). Sends with "
                       "acks=0 count as acknowledged: the client was told nothing, yet believes "
                       "them written. Lost: acknowledged but not committed. Duplicated: one value "
                       "at several offsets. Reordered: a producer's record committed after one "
                       "it sent later. Inconsistent: replicas disagreeing below their high "
                       "watermarks, or a record committed at another offset than the client was "
                       "told. Failed but present: the client was told the send failed, yet it "
                       "is committed.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++)
        durability_row(table, g_ptr_array_index(report->runs, i));
    doc_image(doc, job_find(report, "outcomes"));
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        if (report_expectations_passed(data->run))
            continue;
        doc_paragraph(doc, "Expectations of %s that failed:", data->run->label);
        Block *list = doc_list(doc, FALSE);
        for (guint k = 0; data->run->expectations_failed[k] != NULL; k++)
            g_ptr_array_add(list->rows, g_strdup(data->run->expectations_failed[k]));
    }
    for (guint i = 0; i < report->runs->len; i++) {
        const ReportRun *run = ((const RunData *)g_ptr_array_index(report->runs, i))->run;
        GString *marks = g_string_new(NULL);
        for (guint m = 0; m < run->marks_len; m++)
            g_string_append_printf(marks, "%s%s (%" G_GUINT64_FORMAT ")", m ? ", " : "",
                                   run->marks[m].name, run->marks[m].hits);
        doc_paragraph(doc, "Coverage marks %s reached: %s.", run->label,
                      marks->len ? marks->str : "none");
        g_string_free(marks, TRUE);
    }
}

/* "orders-0, orders-1 and 3 more" for a pattern's partitions. */
static char *
pattern_partitions_text(const History *history, const Pattern *pattern)
{
    GString *out = g_string_new(NULL);
    guint shown = MIN(pattern->partitions->len, 3u);
    for (guint i = 0; i < shown; i++) {
        guint64 key = g_array_index(pattern->partitions, guint64, i);
        g_autofree char *label =
            checker_partition_label(history, (guint16)(key >> 32), (gint32)(guint32)key);
        g_string_append_printf(out, "%s%s", i == 0 ? "" : ", ", label);
    }
    if (pattern->partitions->len > shown)
        g_string_append_printf(out, " and %u more", pattern->partitions->len - shown);
    return g_string_free(out, FALSE);
}

/* Pattern `k`'s space-time diagram, when one was drawn; the one the
 * verdict shows (`featured`) is pointed to instead. */
static void
doc_diagram(Document *doc, const GPtrArray *diagrams, guint k, const char *featured)
{
    if (diagrams == NULL || k >= diagrams->len || g_ptr_array_index(diagrams, k) == NULL)
        return;
    if (featured != NULL && strcmp(featured, g_ptr_array_index(diagrams, k)) == 0) {
        doc_paragraph(doc, "Its space-time diagram is under the Verdict, at the top of the "
                           "report.");
        return;
    }
    Block *block = doc_add(doc, BLOCK_SVG,
                           g_strdup_printf("Space-time diagram of pattern %u, its steps numbered "
                                           "as in the list",
                                           k + 1));
    block->name = g_strdup(g_ptr_array_index(diagrams, k));
}

static char *
pattern_examples_text(const Pattern *pattern)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < pattern->examples->len; i++) {
        const CheckerExample *e = &g_array_index(pattern->examples, CheckerExample, i);
        g_string_append_printf(out, "%svalue %" G_GUINT64_FORMAT, i == 0 ? "" : " and ", e->value);
        if (e->offset >= 0)
            g_string_append_printf(out, " (offset %" G_GINT64_FORMAT ")", e->offset);
    }
    return g_string_free(out, FALSE);
}

/* An anomaly's records by causal pattern (patterns.h): each pattern once,
 * with its count, partitions, span and two examples, then the explanation
 * of its first record. Every example is in anomalies.csv. */
static void
doc_examples(Document *doc, const RunData *data, CheckerAnomaly anomaly, const char *featured)
{
    guint64 count = checker_result_counts(data->result)->anomalies[anomaly];
    const GPtrArray *patterns = data->patterns[anomaly];
    if (count == 0 || patterns == NULL || patterns->len == 0)
        return;
    const History *history = checker_result_history(data->result);
    gboolean all = anomaly == CHECKER_LOST_WRITE;
    const char *unit = all ? "record" : "example";
    guint64 grouped = 0;
    for (guint k = 0; k < patterns->len; k++)
        grouped += ((const Pattern *)g_ptr_array_index(patterns, k))->count;
    g_autofree char *of = all ? g_strdup("")
                              : g_strdup_printf(" (the first %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT ")",
                                                grouped, count);
    doc_paragraph(doc, "%s: %" G_GUINT64_FORMAT ", %s%s in %u pattern%s; anomalies.csv lists the "
                       "examples.",
                  checker_anomaly_name(anomaly), count, all ? "every record" : "the examples", of,
                  patterns->len, patterns->len == 1 ? "" : "s");
    guint shown = MIN(patterns->len, (guint)REPORT_PATTERNS_SHOWN);
    for (guint k = 0; k < shown; k++) {
        const Pattern *pattern = g_ptr_array_index(patterns, k);
        g_autofree char *where = pattern_partitions_text(history, pattern);
        g_autofree char *examples = pattern_examples_text(pattern);
        g_autofree char *span =
            pattern->first_ns < 0
                ? g_strdup("")
                : pattern->first_ns == pattern->last_ns
                      ? g_strdup_printf(", sent at %.3f s", pattern->first_ns / 1e9)
                      : g_strdup_printf(", sent %.3f–%.3f s", pattern->first_ns / 1e9,
                                        pattern->last_ns / 1e9);
        doc_paragraph(doc, "Pattern %u (%s): %" G_GUINT64_FORMAT " %s%s on %s (%u partition%s)%s; "
                           "for example %s. The first:",
                      k + 1, pattern->signature, pattern->count, unit,
                      pattern->count == 1 ? "" : "s", where, pattern->partitions->len,
                      pattern->partitions->len == 1 ? "" : "s", span, examples);
        Block *list = doc_list(doc, TRUE);
        for (guint i = 0; i < pattern->chain->len; i++)
            g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(pattern->chain, i)));
        doc_diagram(doc, data->diagrams[anomaly], k, featured);
    }
    if (patterns->len > shown)
        doc_paragraph(doc, "%u more patterns, of %s listed in anomalies.csv.", patterns->len - shown,
                      all ? "records" : "examples");
}

static char *
availability_text(const CheckerStats *stats)
{
    if (stats->availability < 0)
        return g_strdup("-");
    return g_strdup_printf("%.1f%%", stats->availability * 100.0);
}

/* The first screen: per run, whether its expectations held, its anomaly
 * counts, what it cost, and what went wrong, pattern by pattern. */
static void
doc_verdict(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",    "Expectations", "Lost",   "Duplicated",
                                         "Reordered", "Inconsistent", "p50 ms", "p99 ms",
                                         "max ms", "Availability", NULL};
    doc_heading(doc, 2, "Verdict");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const CheckerCounts *c = checker_result_counts(data->result);
        const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup(report_run_label(data)));
        row_cell(row, g_strdup(report_expectations_passed(data->run) ? "passed" : "FAILED"));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_LOST_WRITE]));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_DUPLICATE]));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_NONMONOTONIC_SEND]));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_INCONSISTENT_OFFSETS]));
        row_cell(row, report_quantile_ms_text(acked, 0.5));
        row_cell(row, report_quantile_ms_text(acked, 0.99));
        row_cell(row, report_quantile_ms_text(acked, 1.0));
        row_cell(row, availability_text(checker_result_stats(data->result)));
    }
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const char *label = report_run_label(data);
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
            const GPtrArray *patterns = data->patterns[a];
            guint64 count = checker_result_counts(data->result)->anomalies[a];
            if (count == 0 || patterns == NULL || patterns->len == 0)
                continue;
            gboolean all = a == CHECKER_LOST_WRITE;
            doc_paragraph(doc, "%s: %" G_GUINT64_FORMAT " %s, %s in %u pattern%s:", label, count,
                          checker_anomaly_name(a), all ? "every record" : "the examples",
                          patterns->len, patterns->len == 1 ? "" : "s");
            Block *list = doc_list(doc, FALSE);
            /* Each pattern links to its space-time diagram. */
            list->links = g_ptr_array_new_with_free_func(g_free);
            const GPtrArray *diagrams = data->diagrams[a];
            guint shown = MIN(patterns->len, (guint)REPORT_PATTERNS_SHOWN);
            for (guint k = 0; k < shown; k++) {
                const Pattern *pattern = g_ptr_array_index(patterns, k);
                g_ptr_array_add(list->rows,
                                g_strdup_printf("%" G_GUINT64_FORMAT " %s: %s", pattern->count,
                                                all ? "records" : "examples", pattern->signature));
                const char *diagram = diagrams != NULL && k < diagrams->len
                                          ? g_ptr_array_index(diagrams, k)
                                          : NULL;
                g_ptr_array_add(list->links, g_strdup(diagram));
            }
            if (patterns->len > shown) {
                g_ptr_array_add(list->rows,
                                g_strdup_printf("%u more patterns", patterns->len - shown));
                g_ptr_array_add(list->links, NULL);
            }
        }
    }
}

/* ---- document: the [vary] runs compared ---- */

static char *
load_value_text(double value)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_formatd(text, sizeof text, "%.6g", value));
}

/* What one load curve shows: where its p99 starts to climb, in words. */
static void
doc_curve_sentence(Block *list, const char *key, const CompareCurve *curve)
{
    guint n = curve->points->len;
    if (n == 0)
        return;
    const ComparePoint *first = &g_array_index(curve->points, ComparePoint, 0);
    const ComparePoint *last = &g_array_index(curve->points, ComparePoint, n - 1);
    g_autofree char *first_x = load_value_text(first->x);
    g_autofree char *last_x = load_value_text(last->x);
    if (curve->knee < 0) {
        g_ptr_array_add(list->rows,
                        g_strdup_printf("%s: no knee between %s = %s and %s (p99 %.3f ms to "
                                        "%.3f ms)",
                                        curve->label, key, first_x, last_x, first->p99_ms,
                                        last->p99_ms));
        return;
    }
    const ComparePoint *knee = &g_array_index(curve->points, ComparePoint, (guint)curve->knee);
    g_autofree char *knee_x = load_value_text(knee->x);
    g_ptr_array_add(list->rows,
                    g_strdup_printf("%s: p99 grows slowly up to the knee at %s = %s (%.3f ms, "
                                    "against %.3f ms at %s), then steeply: %.3f ms at %s",
                                    curve->label, key, knee_x, knee->p99_ms, first->p99_ms,
                                    first_x, last->p99_ms, last_x));
}

/* The load curves as a table: a row per load, a p50 and p99 column per
 * curve. */
static void
doc_load_table(Document *doc, const Comparison *comparison)
{
    const GPtrArray *curves = compare_curves(comparison);
    GPtrArray *header = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(header, g_strdup(compare_load_key(comparison)));
    for (guint i = 0; i < curves->len; i++) {
        const CompareCurve *curve = g_ptr_array_index(curves, i);
        g_ptr_array_add(header, g_strdup_printf("%s p50 ms", curve->label));
        g_ptr_array_add(header, g_strdup_printf("%s p99 ms", curve->label));
    }
    g_ptr_array_add(header, NULL);
    Block *table = doc_table(doc, (const char *const *)header->pdata);
    g_ptr_array_free(header, TRUE);
    /* The loads of every curve, in increasing order, once each. */
    g_autoptr(GArray) loads = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; i < curves->len; i++) {
        const CompareCurve *curve = g_ptr_array_index(curves, i);
        for (guint p = 0; p < curve->points->len; p++) {
            double x = g_array_index(curve->points, ComparePoint, p).x;
            guint at = 0;
            while (at < loads->len && g_array_index(loads, double, at) < x)
                at++;
            if (at == loads->len || g_array_index(loads, double, at) != x)
                g_array_insert_val(loads, at, x);
        }
    }
    for (guint l = 0; l < loads->len; l++) {
        double x = g_array_index(loads, double, l);
        GPtrArray *row = table_row(table);
        row_cell(row, load_value_text(x));
        for (guint i = 0; i < curves->len; i++) {
            const CompareCurve *curve = g_ptr_array_index(curves, i);
            const ComparePoint *found = NULL;
            for (guint p = 0; p < curve->points->len && found == NULL; p++) {
                const ComparePoint *point = &g_array_index(curve->points, ComparePoint, p);
                if (point->x == x)
                    found = point;
            }
            gboolean knee = found != NULL && curve->knee >= 0 &&
                            found == &g_array_index(curve->points, ComparePoint, (guint)curve->knee);
            row_cell(row, found ? g_strdup_printf("%.3f", found->p50_ms) : g_strdup("-"));
            row_cell(row, found ? g_strdup_printf("%.3f%s", found->p99_ms, knee ? " (knee)" : "")
                                : g_strdup("-"));
        }
    }
}

/* A row per run: its number, its varied values as columns, what it lost
 * and what it paid. */
static void
doc_runs_side_by_side(Document *doc, const Report *report)
{
    const RunData *first = g_ptr_array_index(report->runs, 0);
    GPtrArray *header = g_ptr_array_new();
    g_ptr_array_add(header, (gpointer) "#");
    for (guint k = 0; k < first->run->settings_len; k++)
        g_ptr_array_add(header, (gpointer)first->run->settings[k].key);
    static const char *const columns[] = {"Lost", "Duplicated", "Reordered", "p50 ms", "p99 ms",
                                          "Availability"};
    for (guint i = 0; i < G_N_ELEMENTS(columns); i++)
        g_ptr_array_add(header, (gpointer)columns[i]);
    g_ptr_array_add(header, NULL);
    Block *table = doc_table(doc, (const char *const *)header->pdata);
    g_ptr_array_free(header, TRUE);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const CheckerCounts *c = checker_result_counts(data->result);
        const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup_printf("%u", data->number));
        for (guint k = 0; k < data->run->settings_len; k++)
            row_cell(row, g_strdup(data->run->settings[k].value));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_LOST_WRITE]));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_DUPLICATE]));
        row_cell(row, report_u64_text(c->anomalies[CHECKER_NONMONOTONIC_SEND]));
        row_cell(row, report_quantile_ms_text(acked, 0.5));
        row_cell(row, report_quantile_ms_text(acked, 0.99));
        row_cell(row, availability_text(checker_result_stats(data->result)));
    }
}

/* The [vary] runs side by side: durability against latency on one plot,
 * and latency along an offered load with its knee. */
static void
doc_comparison(Document *doc, const Report *report)
{
    const Comparison *comparison = report->comparison;
    if (comparison == NULL)
        return;
    const RunData *first = g_ptr_array_index(report->runs, 0);
    GString *keys = g_string_new(NULL);
    for (guint k = 0; k < first->run->settings_len; k++)
        g_string_append_printf(keys, "%s%s", k > 0 ? ", " : "", first->run->settings[k].key);
    doc_heading(doc, 2, "Comparison");
    doc_paragraph(doc,
                  "The %u runs side by side over %s: what each paid in latency and kept in "
                  "durability. The plot numbers each run as the table does; comparison.csv "
                  "has these rows.",
                  report->runs->len, keys->str);
    g_string_free(keys, TRUE);
    doc_runs_side_by_side(doc, report);
    doc_image(doc, job_find(report, "comparison-tradeoff"));
    const char *key = compare_load_key(comparison);
    if (key == NULL)
        return;
    doc_paragraph(doc,
                  "Latency against %s. The knee is where p99 stops growing with the load and "
                  "starts to climb (Kneedle: the point farthest below the straight line from "
                  "the lowest load's p99 to the highest's, both scaled to [0, 1]; none when "
                  "the curve bends less than %.1f).",
                  key, COMPARE_KNEE_MIN);
    Block *list = doc_list(doc, FALSE);
    const GPtrArray *curves = compare_curves(comparison);
    for (guint i = 0; i < curves->len; i++)
        doc_curve_sentence(list, key, g_ptr_array_index(curves, i));
    doc_load_table(doc, comparison);
    doc_image(doc, job_find(report, "comparison-load"));
}

/* Records retention deleted after they were committed: not an anomaly, but
 * the reason they are not in the committed log, with the first example. */
static void
doc_expired(Document *doc, const RunData *data)
{
    const CheckerCounts *c = checker_result_counts(data->result);
    const GArray *examples = checker_result_expired_examples(data->result);
    if (c->expired == 0 || examples->len == 0 || data->explainer == NULL)
        return;
    const CheckerExample *example = &g_array_index(examples, CheckerExample, 0);
    doc_paragraph(doc, "expired (not an anomaly): %" G_GUINT64_FORMAT " acknowledged records "
                       "were committed and later deleted by retention. For example, %s.",
                  c->expired, example->summary);
    g_autoptr(GPtrArray) chain = explain_expired(data->explainer, example);
    Block *list = doc_list(doc, TRUE);
    for (guint k = 0; k < chain->len; k++)
        g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(chain, k)));
}

/* Records of partitions without a leader at the end, above the committed
 * log's HW: not an anomaly, and not in the committed log (checker.h). */
static void
doc_leaderless(Document *doc, const RunData *data)
{
    const CheckerCounts *c = checker_result_counts(data->result);
    if (c->leaderless == 0)
        return;
    doc_paragraph(doc,
                  "leaderless (not an anomaly): %" G_GUINT64_FORMAT " acknowledged records "
                  "are held by a replica of a partition that no online replica led at the "
                  "end, above the HW of its committed log: no leader has committed them "
                  "again yet, and the next one decides them. The liveness check names "
                  "these partitions.",
                  c->leaderless);
}

static void
doc_run_explanations(Document *doc, const RunData *data, const char *featured)
{
    const CheckerCounts *c = checker_result_counts(data->result);
    doc_heading(doc, 3, "%s", report_run_label(data));
    doc_expired(doc, data);
    doc_leaderless(doc, data);
    guint64 total = c->invariant_violations;
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        total += c->anomalies[a];
    if (total == 0) {
        doc_paragraph(doc, "No anomalies: every acknowledged record is in the committed log, "
                           "once and in order, and the online replicas agree.");
        return;
    }
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        doc_examples(doc, data, a, featured);
    if (c->invariant_violations == 0)
        return;
    doc_paragraph(doc, "Invariant violations detected by the cluster: %" G_GUINT64_FORMAT ".",
                  c->invariant_violations);
    const GPtrArray *texts = checker_result_violations(data->result);
    Block *list = doc_list(doc, FALSE);
    for (guint i = 0; i < texts->len; i++)
        g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(texts, i)));
}

static gboolean
report_has_consumers(const Report *report)
{
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        if (checker_consumer_group_count(data->consumers) > 0)
            return TRUE;
    }
    return FALSE;
}

static void
consumer_row(Block *table, const RunData *data, const ConsumerGroupResult *group)
{
    const ConsumerCounts *c = &group->counts;
    GPtrArray *row = table_row(table);
    row_cell(row, g_strdup(report_run_label(data)));
    row_cell(row, g_strdup(group->group));
    row_cell(row, report_u64_text(c->members));
    row_cell(row, report_u64_text(c->processed));
    row_cell(row, report_u64_text(c->unique));
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        row_cell(row, report_u64_text(c->anomalies[a]));
    row_cell(row, g_strdup_printf("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT,
                                  c->commits_ok, c->commits_failed, c->commits_unknown));
    row_cell(row, report_quantile_ms_text(group->e2e, 0.5));
    row_cell(row, report_quantile_ms_text(group->e2e, 0.99));
}

/* Resets retention caused, and errors auto.offset.reset=none raised: not
 * anomalies, with the first reset's explanation. */
static void
doc_consumer_resets(Document *doc, const ConsumerGroupResult *group, const ConsumerCheck *check)
{
    const ConsumerCounts *c = &group->counts;
    if (c->reset_failures > 0)
        doc_paragraph(doc, "Group %s: %" G_GUINT64_FORMAT " fetch%s out of range with "
                           "auto.offset.reset=none: the error was raised to the application, "
                           "whose poll loop stopped.",
                      group->group, c->reset_failures, c->reset_failures == 1 ? "" : "es");
    if (group->reset_examples->len == 0)
        return;
    const ConsumerExample *example = &g_array_index(group->reset_examples, ConsumerExample, 0);
    doc_paragraph(doc, "Group %s, skipped by reset (not an anomaly): %" G_GUINT64_FORMAT
                       " offsets. For example, %s.",
                  group->group, c->reset_skipped, example->summary);
    g_autoptr(GPtrArray) chain = explain_consumer_reset(check, example);
    Block *list = doc_list(doc, TRUE);
    for (guint k = 0; k < chain->len; k++)
        g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(chain, k)));
}

static void
doc_consumer_examples(Document *doc, const RunData *data, guint index)
{
    const ConsumerGroupResult *group = checker_consumer_group(data->consumers, index);
    doc_consumer_resets(doc, group, data->consumers);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
        const GArray *examples = group->examples[a];
        if (group->counts.anomalies[a] == 0)
            continue;
        doc_paragraph(doc, "Group %s, %s: %" G_GUINT64_FORMAT " (%u example%s below).",
                      group->group, checker_consumer_anomaly_name(a), group->counts.anomalies[a],
                      examples->len, examples->len == 1 ? "" : "s");
        const GPtrArray *chains =
            g_ptr_array_index(data->consumer_chains, index * CONSUMER_ANOMALY_COUNT + a);
        for (guint e = 0; e < examples->len; e++) {
            doc_paragraph(doc, "Example %u: %s.", e + 1,
                          g_array_index(examples, ConsumerExample, e).summary);
            const GPtrArray *chain = g_ptr_array_index(chains, e);
            Block *list = doc_list(doc, TRUE);
            for (guint k = 0; k < chain->len; k++)
                g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(chain, k)));
        }
    }
}

static void
doc_consumers(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",         "Group",
                                         "Members",     "Processed",
                                         "Distinct",    "Lost consumption",
                                         "Duplicate consumption", "Poll skips",
                                         "Non-monotonic polls", "Commits ok / failed / unknown",
                                         "e2e p50 ms",  "e2e p99 ms",
                                         NULL};
    if (!report_has_consumers(report))
        return;
    doc_heading(doc, 2, "Consumer groups");
    doc_paragraph(doc, "Per consumer group (members sharing a group.id). Lost consumption: an "
                       "acknowledged committed record below the group's final committed offset "
                       "that no member processed. Duplicate consumption: a record processed more "
                       "than once by the group. Poll skip: within one member's continuous "
                       "assignment of a partition, a poll that jumped over committed offsets. "
                       "Non-monotonic poll: within one, a poll at or below an offset polled "
                       "before. End-to-end latency runs from a record's send to the end of its "
                       "first processing.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++)
            consumer_row(table, data, checker_consumer_group(data->consumers, g));
    }
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        ConsumerCounts totals;
        checker_consumer_totals(data->consumers, &totals);
        guint64 anomalies = totals.reset_skipped + totals.reset_failures;
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
            anomalies += totals.anomalies[a];
        if (anomalies == 0)
            continue;
        doc_heading(doc, 3, "%s", report_run_label(data));
        for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++)
            doc_consumer_examples(doc, data, g);
    }
}

static gboolean
report_has_transactions(const Report *report)
{
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        if (checker_txn_counts(data->txn)->transactions > 0 ||
            checker_txn_pipelines(data->txn)->len > 0)
            return TRUE;
    }
    return FALSE;
}

static void
txn_row(Block *table, const RunData *data)
{
    const TxnCounts *c = checker_txn_counts(data->txn);
    GPtrArray *row = table_row(table);
    row_cell(row, g_strdup(report_run_label(data)));
    row_cell(row, report_u64_text(c->transactions));
    for (guint f = 0; f < TXN_FATE_COUNT; f++)
        row_cell(row, report_u64_text(c->fates[f]));
    row_cell(row, report_u64_text(c->fenced_instances));
    row_cell(row, report_u64_text(c->aborted_read_uncommitted));
    for (guint a = 0; a < TXN_PIPELINE_DUPLICATE; a++)
        row_cell(row, report_u64_text(c->anomalies[a]));
    row_cell(row, report_u64_text(c->hanging));
}

static void
pipeline_rows(Block *table, const RunData *data)
{
    const GArray *pipelines = checker_txn_pipelines(data->txn);
    for (guint i = 0; i < pipelines->len; i++) {
        const TxnPipelineCounts *p = &g_array_index(pipelines, TxnPipelineCounts, i);
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup(report_run_label(data)));
        row_cell(row, g_strdup(p->pipeline));
        row_cell(row, g_strdup(p->transactional ? "yes" : "no"));
        row_cell(row, report_u64_text(p->inputs));
        row_cell(row, report_u64_text(p->outputs_visible));
        row_cell(row, report_u64_text(p->duplicates));
        row_cell(row, report_u64_text(p->lost));
        row_cell(row, report_u64_text(p->unconsumed));
    }
}

static void
doc_txn_examples(Document *doc, const RunData *data)
{
    const TxnCounts *c = checker_txn_counts(data->txn);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_txn_examples(data->txn, a);
        if (c->anomalies[a] == 0)
            continue;
        doc_paragraph(doc, "%s: %" G_GUINT64_FORMAT " (%u example%s below).",
                      checker_txn_anomaly_name(a), c->anomalies[a], examples->len,
                      examples->len == 1 ? "" : "s");
        for (guint e = 0; e < examples->len; e++) {
            doc_paragraph(doc, "Example %u: %s.", e + 1,
                          g_array_index(examples, TxnExample, e).summary);
            const GPtrArray *chain = g_ptr_array_index(data->txn_chains[a], e);
            Block *list = doc_list(doc, TRUE);
            for (guint k = 0; k < chain->len; k++)
                g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(chain, k)));
        }
    }
}

static void
doc_transactions(Document *doc, const Report *report)
{
    static const char *const header[] = {
        "Run", "Transactions", "Committed", "Aborted", "Unknown", "Unended", "Fenced instances",
        "Aborted reads (read_uncommitted)", "G1a", "Uncommitted reads", "Partial commits",
        "Zombie writes", "int_nonmonotonic_send", "int_send_skip", "Hanging", NULL};
    static const char *const pipeline_header[] = {"Run", "Pipeline", "Exactly once", "Inputs",
                                                  "Visible outputs", "Duplicates", "Lost",
                                                  "Unconsumed", NULL};
    if (!report_has_transactions(report))
        return;
    doc_heading(doc, 2, "Transactions");
    doc_paragraph(doc, "Each transaction's fate as its producer knows it: committed "
                       "(commitTransaction OK), aborted (abortTransaction, or a commit refused), "
                       "unknown (the commit's outcome is unknown), unended (never committed nor "
                       "aborted: the producer crashed or was fenced first). G1a: a "
                       "read_committed consumer read a write of an aborted transaction. "
                       "Uncommitted read: it read a write of an unended transaction, or before "
                       "the commit began. Partial commit: a committed transaction partly in the "
                       "committed logs, or partly seen by a reader that read past the rest. "
                       "Zombie write: a write of a fenced producer instance that became visible. "
                       "int_*: one transaction's sends to a partition out of order, or with "
                       "another write of the producer between them. Hanging: partitions whose "
                       "leader still held, at the end, a transaction open longer than "
                       "transaction.max.timeout.ms (its LSO stuck behind it, read_committed "
                       "consumers stalled). Aborted reads by "
                       "read_uncommitted consumers are allowed and shown for comparison.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++)
        txn_row(table, g_ptr_array_index(report->runs, i));
    gboolean pipelines = FALSE;
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        pipelines = pipelines || checker_txn_pipelines(data->txn)->len > 0;
    }
    if (pipelines) {
        doc_heading(doc, 3, "Pipelines");
        doc_paragraph(doc, "Consume-transform-produce jobs: every input record polled should "
                           "give exactly one visible output (in the committed log, not in an "
                           "aborted transaction). Lost: an input below the group's committed "
                           "position without any output; unconsumed: one above it.");
        Block *ptable = doc_table(doc, pipeline_header);
        for (guint i = 0; i < report->runs->len; i++)
            pipeline_rows(ptable, g_ptr_array_index(report->runs, i));
    }
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        if (checker_txn_anomaly_total(data->txn) == 0)
            continue;
        doc_heading(doc, 3, "%s", report_run_label(data));
        doc_txn_examples(doc, data);
    }
}

static char *
recovery_text(const CheckerStats *stats)
{
    if (stats->last_heal_ns < 0)
        return g_strdup("no heal");
    if (stats->recovery_ns < 0 && stats->last_invoke_ns < stats->last_heal_ns)
        return g_strdup("not measured: the workload stopped at the heal");
    if (stats->recovery_ns < 0)
        return g_strdup("never");
    return g_strdup_printf("%.3f s", (double)stats->recovery_ns / 1e9);
}

static void
latency_row(Block *table, const RunData *data)
{
    static const double qs[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
    const StatsHistogram *failed = checker_result_latency(data->result, CHECKER_LATENCY_FAILED);
    const CheckerStats *stats = checker_result_stats(data->result);
    GPtrArray *row = table_row(table);
    row_cell(row, g_strdup(report_run_label(data)));
    row_cell(row, report_u64_text((guint64)stats_histogram_count(acked)));
    for (guint i = 0; i < G_N_ELEMENTS(qs); i++)
        row_cell(row, report_quantile_ms_text(acked, qs[i]));
    row_cell(row, report_quantile_ms_text(failed, 0.99));
    row_cell(row, stats->throughput_per_s >= 0 ? g_strdup_printf("%.1f", stats->throughput_per_s)
                                               : g_strdup("-"));
    row_cell(row, availability_text(stats));
    row_cell(row, recovery_text(stats));
}

/* TRUE when every run has the first run's fault windows. */
static gboolean
windows_shared(const Report *report)
{
    const RunData *first = g_ptr_array_index(report->runs, 0);
    for (guint r = 1; r < report->runs->len; r++) {
        const RunData *data = g_ptr_array_index(report->runs, r);
        if (data->run->windows_len != first->run->windows_len)
            return FALSE;
        for (guint i = 0; i < data->run->windows_len; i++) {
            if (data->run->windows[i].start_ns != first->run->windows[i].start_ns ||
                data->run->windows[i].end_ns != first->run->windows[i].end_ns)
                return FALSE;
        }
    }
    return TRUE;
}

/* The legend of the numbered fault bands the time plots shade: per number,
 * the fault, its target and its window; once for all runs when they share
 * their windows (also in faults.csv). */
static void
doc_fault_legend(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run", "#", "Fault and target", "Start–end (s)", NULL};
    if (report->runs->len == 0)
        return;
    gboolean shared = windows_shared(report);
    guint runs = shared ? 1 : report->runs->len;
    const RunData *first = g_ptr_array_index(report->runs, 0);
    if (shared && first->run->windows_len == 0)
        return;
    doc_paragraph(doc, "Faults, numbered as the shaded bands on the plots (also faults.csv):");
    Block *table = doc_table(doc, header);
    for (guint r = 0; r < runs; r++) {
        const RunData *data = g_ptr_array_index(report->runs, r);
        for (guint i = 0; i < data->run->windows_len; i++) {
            const ReportWindow *w = &data->run->windows[i];
            GPtrArray *row = table_row(table);
            row_cell(row, g_strdup(shared ? "all runs" : report_run_label(data)));
            row_cell(row, report_plots_fault_number(i));
            row_cell(row, g_strdup(w->label ? w->label : "fault"));
            row_cell(row, g_strdup_printf("%.3f–%.3f", (double)w->start_ns / 1e9,
                                          (double)w->end_ns / 1e9));
        }
    }
}
static void doc_requests(Document *doc, const Report *report);
static void doc_utilization(Document *doc, const Report *report);

static void
doc_latency(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",
                                         "Acked",
                                         "p50 ms",
                                         "p90 ms",
                                         "p99 ms",
                                         "p99.9 ms",
                                         "max ms",
                                         "failed p99 ms",
                                         "records/s",
                                         "Availability",
                                         "Recovery after the last heal",
                                         NULL};
    doc_heading(doc, 2, "Latency");
    doc_paragraph(doc, "Produce latency runs from a send to its acknowledgement, in virtual "
                       "time. Availability is the share of one-second windows, among those in "
                       "which a send was waiting for its answer, that saw a send acknowledged, "
                       "from the cluster's first acknowledgement on (its start is no outage). "
                       "Recovery runs from the last heal to the first acknowledgement of a send "
                       "made after it.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++)
        latency_row(table, g_ptr_array_index(report->runs, i));
    doc_image(doc, job_find(report, "latency-cdf"));
    doc_image(doc, job_find(report, "latency-timeline"));
    doc_image(doc, job_find(report, "throughput"));
    doc_fault_legend(doc, report);
    doc_requests(doc, report);
    doc_utilization(doc, report);
}

/* Per-request broker times of produce requests (HistoryRequest), as Kafka's
 * request metrics split them; each column is the percentile of its own
 * distribution, so they need not add up to the total's. */
static void
request_rows(Block *table, const RunData *data)
{
    static const double qs[] = {0.5, 0.99, 0.999};
    static const char *const names[] = {"p50", "p99", "p99.9"};
    StatsHistogram *parts[REPORT_PARTS];
    report_request_parts(data, parts);
    const StatsHistogram *acked = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
    for (guint q = 0; q < G_N_ELEMENTS(qs); q++) {
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup_printf("%s %s", report_run_label(data),
                                      names[q]));
        for (guint k = 0; k < REPORT_PARTS; k++)
            row_cell(row, report_quantile_ms_text(parts[k], qs[q]));
        row_cell(row, report_quantile_ms_text(acked, qs[q]));
    }
    for (guint k = 0; k < REPORT_PARTS; k++)
        stats_histogram_free(parts[k]);
}

static void
doc_requests(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",      "read ms",   "queue ms",
                                         "local ms", "remote ms", "send ms",
                                         "broker total ms", "client latency ms", NULL};
    doc_heading(doc, 3, "Where produce time goes on the broker");
    doc_paragraph(doc, "Each produce request's time on its leader, split as Kafka's request "
                       "metrics split it: read (network thread), queue (RequestQueueTimeMs), "
                       "local (an I/O thread, LocalTimeMs), remote (waiting for followers under "
                       "acks=all, RemoteTimeMs) and send (writing the response, "
                       "ResponseSendTimeMs). Each column is that part's own percentile; the "
                       "client latency (a record's send to its acknowledgement) also holds "
                       "batching and the network.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++)
        request_rows(table, g_ptr_array_index(report->runs, i));
}

/* How busy the brokers' I/O threads were (utilization.h). */
static void
doc_utilization(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run",  "Busiest broker", "its mean", "its peak",
                                         "all brokers' mean", NULL};
    doc_heading(doc, 3, "How busy the brokers were");
    doc_paragraph(doc, "The share of each broker's I/O threads (num.io.threads) busy handling "
                       "requests: a request holds one from the end of its queue wait to the end "
                       "of its local time. Kafka shows the same as 1 − "
                       "RequestHandlerAvgIdlePercent. A broker near 1 queues every request: its "
                       "latency climbs with the load. Per broker and time bucket in "
                       "RUN-utilization.csv.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const Utilization *u = data->utilization;
        const UtilizationBroker *busiest = utilization_busiest(u);
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup(report_run_label(data)));
        if (busiest == NULL) {
            for (guint k = 0; k < 4; k++)
                row_cell(row, g_strdup("-"));
            continue;
        }
        double busy = 0, capacity = 0;
        for (guint b = 0; b < u->brokers->len; b++) {
            const UtilizationBroker *broker = g_ptr_array_index(u->brokers, b);
            busy += broker->busy_s;
            capacity += u->span_s * broker->io_threads;
        }
        row_cell(row, g_strdup_printf("%d (%u I/O thread%s)", busiest->broker, busiest->io_threads,
                                      busiest->io_threads == 1 ? "" : "s"));
        row_cell(row, g_strdup_printf("%.1f%%", busiest->mean * 100));
        row_cell(row, g_strdup_printf("%.1f%% (%.3g s buckets)", busiest->peak * 100, u->bucket_s));
        row_cell(row, g_strdup_printf("%.1f%%", capacity > 0 ? busy / capacity * 100 : 0));
    }
    doc_image(doc, job_find(report, "utilization"));
}

static void
doc_replicas(Document *doc, const Report *report)
{
    doc_heading(doc, 2, "Replicas");
    doc_paragraph(doc, "LEO and HW of each replica and the ISR size over time, per partition, "
                       "derived from the leaders' acknowledgements, elections, truncations and "
                       "ISR changes; a follower's lines are lower bounds that move when its "
                       "leader acknowledges. Shaded and numbered: fault windows (see the fault "
                       "table under Latency). Only the partitions an anomaly names are drawn "
                       "unless the run asked for --plots all.");
    for (guint i = 0; i < report->jobs->len; i++) {
        const PlotJob *job = g_ptr_array_index(report->jobs, i);
        if (job->kind == JOB_REPLICAS)
            doc_image(doc, job);
    }
}

static void
timeline_rows(Block *table, const RunData *data, guint *shown, guint *left)
{
    const History *history = checker_result_history(data->result);
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind == HISTORY_EVENT_ACK)
            continue;
        if (*shown >= REPORT_TIMELINE_ROWS_MAX) {
            (*left)++;
            continue;
        }
        (*shown)++;
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup_printf("%.3f", (double)event->time_ns / 1e9));
        row_cell(row, g_strdup(explain_event_kind_name(event->kind)));
        row_cell(row, explain_event_sentence(data->explainer, i));
    }
}

static void
doc_run_timeline(Document *doc, const RunData *data)
{
    static const char *const header[] = {"Time (s)", "Event", "What happened", NULL};
    doc_heading(doc, 3, "%s", report_run_label(data));
    if (data->run->windows_len > 0) {
        doc_paragraph(doc, "Fault windows:");
        Block *list = doc_list(doc, FALSE);
        for (guint i = 0; i < data->run->windows_len; i++) {
            const ReportWindow *w = &data->run->windows[i];
            g_ptr_array_add(list->rows,
                            g_strdup_printf("%.3f s to %.3f s: %s", (double)w->start_ns / 1e9,
                                            (double)w->end_ns / 1e9,
                                            w->label ? w->label : "fault"));
        }
    }
    Block *table = doc_table(doc, header);
    guint shown = 0, left = 0;
    timeline_rows(table, data, &shown, &left);
    if (left > 0)
        doc_paragraph(doc, "%u more events are in %s-events.csv.", left, data->slug);
}

static void
doc_runs(Document *doc, const Report *report)
{
    static const char *const header[] = {"Setting", "Value", NULL};
    doc_heading(doc, 2, "Runs and settings");
    for (guint i = 0; i < report->runs->len; i++) {
        const RunData *data = g_ptr_array_index(report->runs, i);
        const ReportRun *run = data->run;
        doc_heading(doc, 3, "%s", report_run_label(data));
        doc_paragraph(doc,
                      "Fingerprint %s; %.3f s of virtual time in %.3f s of wall time; "
                      "%" G_GUINT64_FORMAT " events. Files: %s-*.csv.",
                      run->fingerprint ? run->fingerprint : "-", run->virtual_s, run->wall_s,
                      run->events, data->slug);
        if (run->settings_len == 0)
            continue;
        Block *table = doc_table(doc, header);
        for (guint k = 0; k < run->settings_len; k++) {
            GPtrArray *row = table_row(table);
            row_cell(row, g_strdup(run->settings[k].key));
            row_cell(row, g_strdup(run->settings[k].value));
        }
    }
}

/* Worst partitions a report names per run. */
#define DOC_WORST_MAX 5u

static void
failover_row(Block *table, const RunData *data)
{
    const FailoverResult *failover = data->failover;
    const History *history = checker_result_history(data->result);
    GPtrArray *row = table_row(table);
    row_cell(row, g_strdup(report_run_label(data)));
    row_cell(row, g_strdup_printf("%u", failover_result_windows(failover)->len));
    row_cell(row, g_strdup_printf("%.1f", failover_result_longest_ms(failover)));
    row_cell(row, g_strdup_printf("%.3f", (double)failover_result_unavailable_ns(failover) / 1e9));
    g_autoptr(GArray) worst = failover_result_worst(failover, G_MAXUINT);
    row_cell(row, g_strdup_printf("%u", worst->len));
    GString *names = g_string_new(worst->len == 0 ? "-" : "");
    for (guint i = 0; i < MIN(worst->len, DOC_WORST_MAX); i++) {
        const FailoverPartition *p = &g_array_index(worst, FailoverPartition, i);
        g_autofree char *where = checker_partition_label(history, p->topic, p->partition);
        g_string_append_printf(names, "%s%s %.3f s", i > 0 ? ", " : "", where,
                               (double)p->unavailable_ns / 1e9);
    }
    if (worst->len > DOC_WORST_MAX)
        g_string_append_printf(names, " and %u more", worst->len - DOC_WORST_MAX);
    row_cell(row, g_string_free(names, FALSE));
}

/* Controller failovers and partitions without a leader, when a run had any. */
static void
doc_failover(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run", "Controller failovers", "Longest (ms)",
                                         "Unavailable (partition-s)", "Partitions unavailable",
                                         "Worst partitions", NULL};
    gboolean any = FALSE;
    for (guint i = 0; i < report->runs->len; i++) {
        const FailoverResult *failover =
            ((const RunData *)g_ptr_array_index(report->runs, i))->failover;
        any |= failover_result_windows(failover)->len > 0 ||
               failover_result_unavailable_ns(failover) > 0;
    }
    if (any) {
        doc_heading(doc, 2, "Leadership");
        doc_paragraph(doc, "A controller failover runs from the old controller's loss being "
                           "noticed (its coordination session ending; in KRaft mode a voter "
                           "standing for election, or with a single voter a broker's request to "
                           "it failing) to the new controller in charge with every partition "
                           "that can be led led again (controller_failover_ms). A partition is "
                           "unavailable while no broker leads it: from its leader's crash or "
                           "stop, or its going offline, to its next leader.");
        Block *table = doc_table(doc, header);
        for (guint i = 0; i < report->runs->len; i++)
            failover_row(table, g_ptr_array_index(report->runs, i));
        const PlotJob *outages = job_find(report, "unavailability");
        if (outages != NULL && outages->drawn) {
            doc_paragraph(doc, "When each partition had no leader, a bar per outage, for the "
                               "first run with faults and its %u most unavailable partitions "
                               "(RUN-unavailability.csv).",
                          REPORT_OUTAGE_PARTITIONS);
            doc_image(doc, outages);
        }
    }
}

/* ---- document: Kafka's metrics ---- */

/* Rows of changes a run's fault table shows; the rest are counted. */
#define DOC_CHANGES_MAX 15u

static char *
jmx_value_text(const JmxSeries *series, double value)
{
    switch (series->kind) {
    case JMX_METER:
        return g_strdup_printf("%.1f/s", value);
    case JMX_TIMER_P99:
        return g_strdup_printf("%.1f ms", value);
    default:
        return g_strdup_printf("%.0f", value);
    }
}

static void
doc_metric_changes(Block *table, const RunData *data, guint *left)
{
    const ReportRun *run = data->run;
    const JmxMetrics *m = data->metrics;
    guint shown = 0;
    for (guint w = 0; w < run->windows_len; w++) {
        const ReportWindow *window = &run->windows[w];
        double start = (double)window->start_ns / 1e9, end = (double)window->end_ns / 1e9;
        /* Until ten seconds after the fault, or the next fault's start. */
        double until = end + 10.0;
        if (w + 1 < run->windows_len) {
            double next = (double)run->windows[w + 1].start_ns / 1e9;
            if (next > start && next < until)
                until = MAX(next, end);
        }
        g_autoptr(GArray) changes = jmx_changes(m, start, until);
        for (guint c = 0; c < changes->len; c++) {
            const JmxChange *change = &g_array_index(changes, JmxChange, c);
            if (shown >= DOC_CHANGES_MAX) {
                (*left)++;
                continue;
            }
            shown++;
            GPtrArray *row = table_row(table);
            row_cell(row, g_strdup(report_run_label(data)));
            g_autofree char *number = report_plots_fault_number(w);
            row_cell(row, g_strdup_printf("%s: %s", number, window->label ? window->label : "fault"));
            row_cell(row, g_strdup(change->series->short_name));
            g_autofree char *before = jmx_value_text(change->series, change->before);
            g_autofree char *after = jmx_value_text(change->series, change->after);
            row_cell(row, g_strdup_printf("%s → %s", before, after));
            row_cell(row, g_strdup_printf("%.1f s", change->at_s));
        }
    }
}

/* The metrics operators watch, and how each fault moved them. */
static void
doc_metrics(Document *doc, const Report *report)
{
    static const char *const header[] = {"Run", "Fault", "Metric", "Change", "At", NULL};
    gboolean any_window = FALSE;
    for (guint i = 0; i < report->runs->len; i++)
        any_window |= ((const RunData *)g_ptr_array_index(report->runs, i))->run->windows_len > 0;
    doc_heading(doc, 2, "Kafka's metrics");
    doc_paragraph(doc, "The broker and client metrics an operator's dashboards show, under "
                       "their JMX names, read from the run: RUN-metrics.csv has one column per "
                       "metric and broker, a row per time bucket. Gauges "
                       "(UnderReplicatedPartitions, OfflinePartitionsCount, "
                       "ActiveControllerCount) take their worst value in each bucket, so a blip "
                       "shorter than a dashboard's sampling still shows; meters are per second; "
                       "request times are the p99 of the produce requests completed in the "
                       "bucket.");
    doc_image(doc, job_find(report, "metrics"));
    if (!any_window)
        return;
    doc_paragraph(doc, "How each fault moved the cluster's metrics: the value in the bucket "
                       "before it began, and the one farthest from it until ten seconds after "
                       "it ended (or the next fault began), with when.");
    Block *table = doc_table(doc, header);
    guint left = 0;
    for (guint i = 0; i < report->runs->len; i++)
        doc_metric_changes(table, g_ptr_array_index(report->runs, i), &left);
    if (left > 0)
        doc_paragraph(doc, "… and %u more changes, past %u per run (RUN-metrics.csv has them "
                           "all).",
                      left, DOC_CHANGES_MAX);
}

/* The first screen's picture: the space-time diagram of the largest
 * pattern of lost writes, in the run that lost the most (else of the first
 * anomaly that has one), under the verdict. Returns its basename, or NULL
 * when no diagram was drawn. */
static const char *
doc_featured_diagram(Document *doc, const Report *report)
{
    const RunData *best = NULL;
    CheckerAnomaly anomaly = CHECKER_LOST_WRITE;
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT && best == NULL; a++) {
        guint64 most = 0;
        for (guint i = 0; i < report->runs->len; i++) {
            const RunData *data = g_ptr_array_index(report->runs, i);
            const GPtrArray *diagrams = data->diagrams[a];
            guint64 count = checker_result_counts(data->result)->anomalies[a];
            if (diagrams == NULL || diagrams->len == 0 || g_ptr_array_index(diagrams, 0) == NULL ||
                count <= most)
                continue;
            most = count;
            best = data;
            anomaly = a;
        }
    }
    if (best == NULL)
        return NULL;
    const Pattern *pattern = g_ptr_array_index(best->patterns[anomaly], 0);
    const char *name = g_ptr_array_index(best->diagrams[anomaly], 0);
    doc_paragraph(doc, "Why, for the largest pattern: %s, %s, %" G_GUINT64_FORMAT " %s — %s. Its "
                       "space-time diagram, one lane per node, time downward, the steps numbered "
                       "as in its explanation below:",
                  report_run_label(best), checker_anomaly_name(anomaly),
                  pattern->count, anomaly == CHECKER_LOST_WRITE ? "records" : "examples",
                  pattern->signature);
    Block *block = doc_add(doc, BLOCK_SVG,
                           g_strdup_printf("%s, %s, pattern 1",
                                           report_run_label(best),
                                           checker_anomaly_name(anomaly)));
    block->name = g_strdup(name);
    return name;
}

Document *
report_document_build(const Report *report)
{
    Document *doc = g_ptr_array_new_with_free_func(block_free);
    doc_header(doc, report);
    doc_verdict(doc, report);
    const char *featured = doc_featured_diagram(doc, report);
    doc_comparison(doc, report);
    doc_heading(doc, 2, "Explanations");
    for (guint i = 0; i < report->runs->len; i++)
        doc_run_explanations(doc, g_ptr_array_index(report->runs, i), featured);
    doc_durability(doc, report);
    doc_consumers(doc, report);
    doc_transactions(doc, report);
    doc_latency(doc, report);
    doc_failover(doc, report);
    doc_metrics(doc, report);
    doc_replicas(doc, report);
    doc_heading(doc, 2, "Timeline");
    doc_paragraph(doc, "Cluster events in time order (acknowledgements left out; they are in "
                       "the trace).");
    for (guint i = 0; i < report->runs->len; i++)
        doc_run_timeline(doc, g_ptr_array_index(report->runs, i));
    doc_runs(doc, report);
    return doc;
}
