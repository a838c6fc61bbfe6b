/*
 * report: summary.json, report.md/html, CSV series and gnuplot plots of a
 * scenario's runs, and the terminal table (see report.h).
 *
 * report_write proceeds as:
 *   runs_prepare     each run's checker result (given or computed) and the
 *                    explanation of every example
 *   csv_write_all    the CSV files, and one PlotJob per plot whose series
 *                    have data
 *   plots_render     each PlotJob: its .gp script, then its images drawn
 *                    under temporary names and renamed into place
 *   document_build   one Document (headings, paragraphs, tables, lists,
 *                    images), rendered twice: report.md and report.html
 *   summary.json     last, so its presence means the report is complete
 *
 * The Document keeps Markdown and HTML from drifting apart: both are
 * renderings of the same blocks.
 *
 * Nothing here is stateful beyond one report_write call; the checker result
 * of a run is only read.
 */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "explain.h"
#include "outfile.h"
#include "plot.h"
#include "sim_assert.h"
#include "stats.h"

#define SLUG_LABEL_MAX 40
#define BROKERS_MAX 32
/* ACK rows of a replicas CSV: at most about this many per partition. */
#define REPLICA_ACK_ROWS_TARGET 2000

/* ---- per-run data ---- */

typedef struct {
    const ReportRun *run;
    guint number; /* from 1 */
    char *slug;   /* "run1-acks-all": the run's file name prefix */
    CheckerResult *owned;
    const CheckerResult *result;
    Explainer *explainer;
    GPtrArray *chains[CHECKER_ANOMALY_COUNT]; /* per example: GPtrArray of sentences */
    ConsumerCheck *consumers_owned;
    const ConsumerCheck *consumers;
    /* Per group g and anomaly a, at g * CONSUMER_ANOMALY_COUNT + a: per
     * example, a GPtrArray of sentences. */
    GPtrArray *consumer_chains;
    TxnCheck *txn_owned;
    const TxnCheck *txn;
    GPtrArray *txn_chains[TXN_ANOMALY_COUNT]; /* per example: GPtrArray of sentences */
} RunData;

/* One plot to draw: a builder, the series and the shaded windows. */
typedef enum {
    JOB_BARS = 0,
    JOB_CDF,
    JOB_TIMELINE,
    JOB_THROUGHPUT,
    JOB_REPLICAS,
} JobKind;

typedef struct {
    JobKind kind;
    char *basename;
    char *title;
    GArray *series;     /* PlotSeries; strings borrowed from `strings` */
    GPtrArray *strings; /* owned */
    GArray *windows;    /* PlotWindow; labels borrowed from the input */
    gboolean drawn;
} PlotJob;

typedef struct {
    const ReportInput *input;
    const char *dir;
    GPtrArray *runs;     /* RunData */
    GPtrArray *jobs;     /* PlotJob */
    GPtrArray *warnings; /* strings */
} Report;

/* ---- document model ---- */

typedef enum {
    BLOCK_HEADING = 0,
    BLOCK_PARAGRAPH,
    BLOCK_WARNING,
    BLOCK_TABLE,
    BLOCK_LIST,
    BLOCK_ORDERED,
    BLOCK_IMAGE,
} BlockKind;

typedef struct {
    BlockKind kind;
    int level;       /* headings */
    char *text;      /* heading, paragraph, warning, image alt text */
    char *name;      /* image basename */
    GPtrArray *rows; /* table: GPtrArray of cells (header first); lists: items */
} Block;

typedef GPtrArray Document; /* Block */

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
static void
slug_append(GString *slug, const char *text)
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
    slug_append(slug, label);
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
    }
    if (data->consumer_chains != NULL)
        g_ptr_array_free(data->consumer_chains, TRUE);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        if (data->txn_chains[a] != NULL)
            g_ptr_array_free(data->txn_chains[a], TRUE);
    }
    checker_txn_free(data->txn_owned);
    explain_free(data->explainer);
    checker_consumer_free(data->consumers_owned);
    checker_result_free(data->owned);
    g_free(data->slug);
    g_free(data);
}

static GPtrArray *
runs_prepare(const ReportInput *input, gboolean explain)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(input->runs != NULL || input->runs_len == 0);
    GPtrArray *runs = g_ptr_array_new_with_free_func(run_data_free);
    for (guint i = 0; i < input->runs_len; i++)
        g_ptr_array_add(runs, run_data_new(&input->runs[i], i + 1, explain));
    return runs;
}

static gboolean
expectations_passed(const ReportRun *run)
{
    return run->expectations_failed == NULL || run->expectations_failed[0] == NULL;
}

/* ---- number formatting ---- */

static char *
ms_text(gint64 ns)
{
    return g_strdup_printf("%.3f", (double)ns / 1e6);
}

static char *
quantile_ms_text(const StatsHistogram *h, double q)
{
    if (stats_histogram_count(h) == 0)
        return g_strdup("-");
    return ms_text(stats_histogram_quantile(h, q));
}

static char *
u64_text(guint64 value)
{
    return g_strdup_printf("%" G_GUINT64_FORMAT, value);
}

/* ---- JSON ---- */

static void
json_write_string(GString *out, const char *text)
{
    g_string_append_c(out, '"');
    for (const char *c = text; *c != '\0'; c++) {
        guchar byte = (guchar)*c;
        if (byte == '"' || byte == '\\')
            g_string_append_printf(out, "\\%c", byte);
        else if (byte == '\n')
            g_string_append(out, "\\n");
        else if (byte < 0x20)
            g_string_append_printf(out, "\\u%04x", byte);
        else
            g_string_append_c(out, (char)byte);
    }
    g_string_append_c(out, '"');
}

/* The shortest decimal form that reads back exactly; null when not finite. */
static void
json_write_double(GString *out, double value)
{
    if (!isfinite(value)) {
        g_string_append(out, "null");
        return;
    }
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    for (int precision = 1; precision <= 17; precision++) {
        char format[8];
        g_snprintf(format, sizeof format, "%%.%dg", precision);
        g_ascii_formatd(text, sizeof text, format, value);
        if (g_ascii_strtod(text, NULL) == value)
            break;
    }
    g_string_append(out, text);
}

static void json_write(GString *out, JsonNode *node, guint depth);

static void
json_indent(GString *out, guint depth)
{
    g_string_append_c(out, '\n');
    for (guint i = 0; i < depth; i++)
        g_string_append(out, "  ");
}

static void
json_write_object(GString *out, JsonObject *object, guint depth)
{
    GList *members = json_object_get_members(object);
    if (members == NULL) {
        g_string_append(out, "{}");
        return;
    }
    g_string_append_c(out, '{');
    for (GList *m = members; m != NULL; m = m->next) {
        json_indent(out, depth + 1);
        json_write_string(out, m->data);
        g_string_append(out, ": ");
        json_write(out, json_object_get_member(object, m->data), depth + 1);
        if (m->next != NULL)
            g_string_append_c(out, ',');
    }
    g_list_free(members);
    json_indent(out, depth);
    g_string_append_c(out, '}');
}

static void
json_write_array(GString *out, JsonArray *array, guint depth)
{
    guint len = json_array_get_length(array);
    if (len == 0) {
        g_string_append(out, "[]");
        return;
    }
    g_string_append_c(out, '[');
    for (guint i = 0; i < len; i++) {
        json_indent(out, depth + 1);
        json_write(out, json_array_get_element(array, i), depth + 1);
        if (i + 1 < len)
            g_string_append_c(out, ',');
    }
    json_indent(out, depth);
    g_string_append_c(out, ']');
}

static void
json_write_value(GString *out, JsonNode *node)
{
    GType type = json_node_get_value_type(node);
    if (type == G_TYPE_INT64)
        g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
    else if (type == G_TYPE_DOUBLE)
        json_write_double(out, json_node_get_double(node));
    else if (type == G_TYPE_BOOLEAN)
        g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
    else
        json_write_string(out, json_node_get_string(node));
}

/* json-glib's generator prints doubles with 17 digits (0.4 as
 * 0.40000000000000002); this writer keeps its tree but prints them short. */
static void
json_write(GString *out, JsonNode *node, guint depth)
{
    switch (JSON_NODE_TYPE(node)) {
    case JSON_NODE_OBJECT:
        json_write_object(out, json_node_get_object(node), depth);
        break;
    case JSON_NODE_ARRAY:
        json_write_array(out, json_node_get_array(node), depth);
        break;
    case JSON_NODE_VALUE:
        json_write_value(out, node);
        break;
    default:
        g_string_append(out, "null");
        break;
    }
}

static void
json_int(JsonBuilder *b, const char *name, gint64 value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, value);
}

static void
json_double(JsonBuilder *b, const char *name, double value)
{
    json_builder_set_member_name(b, name);
    if (isfinite(value))
        json_builder_add_double_value(b, value);
    else
        json_builder_add_null_value(b);
}

static void
json_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, value != NULL ? value : "");
}

/* Seconds from ns, or null for a negative "none". */
static void
json_seconds_or_null(JsonBuilder *b, const char *name, gint64 ns)
{
    json_double(b, name, ns >= 0 ? (double)ns / 1e9 : NAN);
}

static void
json_latency(JsonBuilder *b, const char *name, const StatsHistogram *h)
{
    static const struct {
        const char *name;
        double q;
    } points[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p999", 0.999}, {"max", 1.0}};
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    for (guint i = 0; i < G_N_ELEMENTS(points); i++)
        json_double(b, points[i].name, (double)stats_histogram_quantile(h, points[i].q) / 1e6);
    json_int(b, "count", stats_histogram_count(h));
    json_double(b, "mean", stats_histogram_mean(h) / 1e6);
    json_builder_end_object(b);
}

static void
json_produce(JsonBuilder *b, const CheckerCounts *c)
{
    json_builder_set_member_name(b, "produce");
    json_builder_begin_object(b);
    json_int(b, "attempted", (gint64)c->attempted);
    json_int(b, "acked", (gint64)c->acked);
    json_int(b, "failed", (gint64)c->failed);
    json_int(b, "unknown", (gint64)c->unknown);
    json_int(b, "acked_without_offset", (gint64)c->acked_without_offset);
    json_int(b, "acked_committed", (gint64)c->acked_committed);
    json_int(b, "failed_absent", (gint64)c->failed_absent);
    json_int(b, "unknown_committed", (gint64)c->unknown_committed);
    json_int(b, "unknown_absent", (gint64)c->unknown_absent);
    json_int(b, "pending", (gint64)c->pending);
    json_int(b, "committed", (gint64)c->committed);
    json_int(b, "committed_unknown_origin", (gint64)c->committed_unknown_origin);
    json_builder_end_object(b);
}

static void
json_strings(JsonBuilder *b, const char *name, const GPtrArray *texts)
{
    json_builder_set_member_name(b, name);
    json_builder_begin_array(b);
    for (guint i = 0; texts != NULL && i < texts->len; i++)
        json_builder_add_string_value(b, g_ptr_array_index(texts, i));
    json_builder_end_array(b);
}

static void
json_example(JsonBuilder *b, const RunData *data, const CheckerExample *example,
             const GPtrArray *chain)
{
    const History *history = checker_result_history(data->result);
    g_autofree char *where = checker_partition_label(history, example->topic, example->partition);
    json_builder_begin_object(b);
    json_string(b, "partition", where);
    json_int(b, "value", (gint64)example->value);
    json_int(b, "offset", example->offset);
    if (example->offset_other >= 0)
        json_int(b, "offset_other", example->offset_other);
    if (example->broker >= 0)
        json_int(b, "broker", example->broker);
    json_string(b, "summary", example->summary);
    json_strings(b, "explanation", chain);
    json_builder_end_object(b);
}

static void
json_examples(JsonBuilder *b, const RunData *data)
{
    json_builder_set_member_name(b, "examples");
    json_builder_begin_object(b);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_result_examples(data->result, a);
        json_builder_set_member_name(b, checker_anomaly_name(a));
        json_builder_begin_array(b);
        for (guint e = 0; e < examples->len; e++)
            json_example(b, data, &g_array_index(examples, CheckerExample, e),
                         data->chains[a] ? g_ptr_array_index(data->chains[a], e) : NULL);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
}

static void
json_settings_and_expectations(JsonBuilder *b, const ReportRun *run)
{
    json_builder_set_member_name(b, "settings");
    json_builder_begin_object(b);
    for (guint i = 0; i < run->settings_len; i++)
        json_string(b, run->settings[i].key, run->settings[i].value);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "expectations");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "passed");
    json_builder_add_boolean_value(b, expectations_passed(run));
    json_builder_set_member_name(b, "failed");
    json_builder_begin_array(b);
    for (guint i = 0; run->expectations_failed != NULL && run->expectations_failed[i]; i++)
        json_builder_add_string_value(b, run->expectations_failed[i]);
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void
json_stats(JsonBuilder *b, const CheckerResult *result)
{
    const CheckerStats *stats = checker_result_stats(result);
    json_builder_set_member_name(b, "latency_ms");
    json_builder_begin_object(b);
    json_latency(b, "produce", checker_result_latency(result, CHECKER_LATENCY_ACKED));
    json_latency(b, "failed", checker_result_latency(result, CHECKER_LATENCY_FAILED));
    json_latency(b, "unknown", checker_result_latency(result, CHECKER_LATENCY_UNKNOWN));
    json_builder_end_object(b);
    json_double(b, "throughput_per_s",
                stats->throughput_per_s >= 0 ? stats->throughput_per_s : NAN);
    json_double(b, "availability", stats->availability >= 0 ? stats->availability : NAN);
    json_double(b, "window_s", (double)stats->window_ns / 1e9);
    json_seconds_or_null(b, "last_heal_s", stats->last_heal_ns);
    json_seconds_or_null(b, "recovery_s", stats->recovery_ns);
}

static void
json_consumer_example(JsonBuilder *b, const RunData *data, const ConsumerExample *example,
                      const GPtrArray *chain)
{
    const History *history = checker_consumer_history(data->consumers);
    g_autofree char *where = checker_partition_label(history, example->topic, example->partition);
    g_autofree char *member = checker_process_label(history, example->process);
    json_builder_begin_object(b);
    json_string(b, "partition", where);
    json_int(b, "value", (gint64)example->value);
    json_int(b, "offset", example->offset);
    if (example->offset_other >= 0)
        json_int(b, "offset_other", example->offset_other);
    json_string(b, "member", member);
    json_string(b, "summary", example->summary);
    json_strings(b, "explanation", chain);
    json_builder_end_object(b);
}

static double
e2e_quantile_ms(const StatsHistogram *h, double q)
{
    return stats_histogram_count(h) > 0 ? (double)stats_histogram_quantile(h, q) / 1e6 : NAN;
}

static void
json_consumer_group(JsonBuilder *b, const RunData *data, guint index)
{
    const ConsumerGroupResult *group = checker_consumer_group(data->consumers, index);
    const ConsumerCounts *c = &group->counts;
    json_builder_set_member_name(b, group->group);
    json_builder_begin_object(b);
    json_int(b, "members", c->members);
    json_int(b, "polled", (gint64)c->polled);
    json_int(b, "processed", (gint64)c->processed);
    json_int(b, "unique", (gint64)c->unique);
    json_int(b, "delivered", (gint64)c->delivered);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        json_int(b, checker_consumer_anomaly_name(a), (gint64)c->anomalies[a]);
    json_int(b, "commits_ok", (gint64)c->commits_ok);
    json_int(b, "commits_failed", (gint64)c->commits_failed);
    json_int(b, "commits_unknown", (gint64)c->commits_unknown);
    json_double(b, "e2e_p50_ms", e2e_quantile_ms(group->e2e, 0.5));
    json_double(b, "e2e_p99_ms", e2e_quantile_ms(group->e2e, 0.99));
    json_builder_set_member_name(b, "examples");
    json_builder_begin_object(b);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
        json_builder_set_member_name(b, checker_consumer_anomaly_name(a));
        json_builder_begin_array(b);
        const GPtrArray *chains =
            data->consumer_chains != NULL
                ? g_ptr_array_index(data->consumer_chains, index * CONSUMER_ANOMALY_COUNT + a)
                : NULL;
        for (guint e = 0; e < group->examples[a]->len; e++)
            json_consumer_example(b, data, &g_array_index(group->examples[a], ConsumerExample, e),
                                  chains != NULL ? g_ptr_array_index(chains, e) : NULL);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
}

static void
json_consumers(JsonBuilder *b, const RunData *data)
{
    json_builder_set_member_name(b, "consumers");
    json_builder_begin_object(b);
    for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++)
        json_consumer_group(b, data, g);
    json_builder_end_object(b);
}

static void
json_txn_example(JsonBuilder *b, const RunData *data, const TxnExample *example,
                 const GPtrArray *chain)
{
    const History *history = checker_txn_history(data->txn);
    json_builder_begin_object(b);
    if (example->partition >= 0) {
        g_autofree char *where =
            checker_partition_label(history, example->topic, example->partition);
        json_string(b, "partition", where);
    }
    json_int(b, "value", (gint64)example->value);
    if (example->offset >= 0)
        json_int(b, "offset", example->offset);
    if (example->txn >= 0) {
        const TxnInfo *txn = checker_txn_transaction(data->txn, (guint)example->txn);
        g_autofree char *writer = checker_process_label(history, txn->process);
        json_string(b, "producer", writer);
        json_int(b, "transaction", (gint64)txn->number);
        json_string(b, "fate", checker_txn_fate_name(txn->fate));
    }
    json_string(b, "summary", example->summary);
    json_strings(b, "explanation", chain);
    json_builder_end_object(b);
}

static void
json_txn_examples(JsonBuilder *b, const RunData *data, guint first, guint end)
{
    json_builder_set_member_name(b, "examples");
    json_builder_begin_object(b);
    for (guint a = first; a < end; a++) {
        const GArray *examples = checker_txn_examples(data->txn, a);
        json_builder_set_member_name(b, checker_txn_anomaly_name(a));
        json_builder_begin_array(b);
        for (guint e = 0; e < examples->len; e++)
            json_txn_example(b, data, &g_array_index(examples, TxnExample, e),
                             data->txn_chains[a] != NULL ? g_ptr_array_index(data->txn_chains[a], e)
                                                         : NULL);
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
}

static void
json_transactions(JsonBuilder *b, const RunData *data)
{
    const TxnCounts *c = checker_txn_counts(data->txn);
    json_builder_set_member_name(b, "transactions");
    json_builder_begin_object(b);
    json_int(b, "transactions", (gint64)c->transactions);
    for (guint f = 0; f < TXN_FATE_COUNT; f++)
        json_int(b, checker_txn_fate_name(f), (gint64)c->fates[f]);
    json_int(b, "sends", (gint64)c->sends);
    json_int(b, "fenced_instances", (gint64)c->fenced_instances);
    json_int(b, "resumed", (gint64)c->resumed);
    json_int(b, "reads_committed", (gint64)c->reads_committed);
    json_int(b, "aborted_read_uncommitted", (gint64)c->aborted_read_uncommitted);
    json_builder_set_member_name(b, "anomalies");
    json_builder_begin_object(b);
    for (guint a = 0; a < TXN_PIPELINE_DUPLICATE; a++)
        json_int(b, checker_txn_anomaly_name(a), (gint64)c->anomalies[a]);
    json_builder_end_object(b);
    json_txn_examples(b, data, 0, TXN_PIPELINE_DUPLICATE);
    json_builder_end_object(b);
}

static void
json_pipelines(JsonBuilder *b, const RunData *data)
{
    const GArray *pipelines = checker_txn_pipelines(data->txn);
    json_builder_set_member_name(b, "pipelines");
    json_builder_begin_object(b);
    for (guint i = 0; i < pipelines->len; i++) {
        const TxnPipelineCounts *p = &g_array_index(pipelines, TxnPipelineCounts, i);
        json_builder_set_member_name(b, p->pipeline);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "exactly_once");
        json_builder_add_boolean_value(b, p->transactional);
        json_int(b, "inputs", (gint64)p->inputs);
        json_int(b, "outputs_visible", (gint64)p->outputs_visible);
        json_int(b, "outputs_maybe", (gint64)p->outputs_maybe);
        json_int(b, "unconsumed", (gint64)p->unconsumed);
        json_int(b, "pipeline_duplicate", (gint64)p->duplicates);
        json_int(b, "pipeline_lost", (gint64)p->lost);
        json_builder_end_object(b);
    }
    if (pipelines->len > 0)
        json_txn_examples(b, data, TXN_PIPELINE_DUPLICATE, TXN_ANOMALY_COUNT);
    json_builder_end_object(b);
}

static void
json_run(JsonBuilder *b, const RunData *data)
{
    const ReportRun *run = data->run;
    const CheckerCounts *c = checker_result_counts(data->result);
    json_builder_begin_object(b);
    json_string(b, "label", run->label);
    json_string(b, "files", data->slug);
    json_settings_and_expectations(b, run);
    json_string(b, "fingerprint", run->fingerprint);
    json_double(b, "virtual_s", run->virtual_s);
    json_double(b, "wall_s", run->wall_s);
    json_int(b, "events", (gint64)run->events);
    json_produce(b, c);
    json_builder_set_member_name(b, "anomalies");
    json_builder_begin_object(b);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        json_int(b, checker_anomaly_name(a), (gint64)c->anomalies[a]);
    json_builder_end_object(b);
    json_int(b, "invariant_violations", (gint64)c->invariant_violations);
    json_strings(b, "violations", checker_result_violations(data->result));
    json_stats(b, data->result);
    json_examples(b, data);
    json_consumers(b, data);
    json_transactions(b, data);
    json_pipelines(b, data);
    json_builder_end_object(b);
}

static char *
summary_text(const ReportInput *input, const GPtrArray *runs, const GPtrArray *warnings)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_string(b, "ksim_version", input->ksim_version);
    json_string(b, "git_commit", input->git_commit);
    json_string(b, "scenario", input->scenario);
    json_string(b, "scenario_sha256", input->scenario_sha256);
    /* A seed past 2^63 - 1 does not fit JSON's safe integers; it is written
     * as its two's-complement value, which `ksim run --seed` reads back. */
    json_int(b, "seed", (gint64)input->seed);
    json_builder_set_member_name(b, "runs");
    json_builder_begin_array(b);
    for (guint i = 0; i < runs->len; i++)
        json_run(b, g_ptr_array_index(runs, i));
    json_builder_end_array(b);
    json_strings(b, "warnings", warnings);
    json_builder_end_object(b);
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    GString *out = g_string_new(NULL);
    json_write(out, root, 0);
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
}

char *
report_summary_json(const ReportInput *input, const GPtrArray *warnings)
{
    g_autoptr(GPtrArray) runs = runs_prepare(input, TRUE);
    return summary_text(input, runs, warnings);
}

/* ---- the terminal table ---- */

/* One line per consumer group under its run. */
static void
print_consumer_lines(FILE *stream, const RunData *data)
{
    for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++) {
        const ConsumerGroupResult *group = checker_consumer_group(data->consumers, g);
        const ConsumerCounts *c = &group->counts;
        g_autofree char *p50 = quantile_ms_text(group->e2e, 0.5);
        g_autofree char *p99 = quantile_ms_text(group->e2e, 0.99);
        fprintf(stream,
                "  group %s: processed %" G_GUINT64_FORMAT ", lost_consumption %" G_GUINT64_FORMAT
                ", duplicate_consumption %" G_GUINT64_FORMAT ", poll_skip %" G_GUINT64_FORMAT
                ", nonmonotonic_poll %" G_GUINT64_FORMAT ", e2e p50 %s ms, p99 %s ms\n",
                group->group, c->processed, c->anomalies[CONSUMER_LOST_CONSUMPTION],
                c->anomalies[CONSUMER_DUPLICATE_CONSUMPTION], c->anomalies[CONSUMER_POLL_SKIP],
                c->anomalies[CONSUMER_NONMONOTONIC_POLL], p50, p99);
    }
}

/* Below a run with transactions: their fates and anomalies; one line per
 * pipeline. */
static void
print_txn_lines(FILE *stream, const RunData *data)
{
    const TxnCounts *c = checker_txn_counts(data->txn);
    if (c->transactions > 0) {
        fprintf(stream,
                "  transactions %" G_GUINT64_FORMAT ": committed %" G_GUINT64_FORMAT
                ", aborted %" G_GUINT64_FORMAT ", unknown %" G_GUINT64_FORMAT
                ", unended %" G_GUINT64_FORMAT "; fenced instances %" G_GUINT64_FORMAT
                "; aborted reads (read_uncommitted) %" G_GUINT64_FORMAT "\n",
                c->transactions, c->fates[TXN_FATE_COMMITTED], c->fates[TXN_FATE_ABORTED],
                c->fates[TXN_FATE_UNKNOWN], c->fates[TXN_FATE_UNENDED], c->fenced_instances,
                c->aborted_read_uncommitted);
        fprintf(stream, "  ");
        for (guint a = 0; a < TXN_PIPELINE_DUPLICATE; a++)
            fprintf(stream, "%s%s %" G_GUINT64_FORMAT, a > 0 ? ", " : "",
                    checker_txn_anomaly_name(a), c->anomalies[a]);
        fprintf(stream, "\n");
    }
    const GArray *pipelines = checker_txn_pipelines(data->txn);
    for (guint i = 0; i < pipelines->len; i++) {
        const TxnPipelineCounts *p = &g_array_index(pipelines, TxnPipelineCounts, i);
        fprintf(stream,
                "  pipeline %s (%s): inputs %" G_GUINT64_FORMAT ", visible outputs %"
                G_GUINT64_FORMAT ", pipeline_duplicate %" G_GUINT64_FORMAT ", pipeline_lost %"
                G_GUINT64_FORMAT ", unconsumed %" G_GUINT64_FORMAT "\n",
                p->pipeline, p->transactional ? "transactions" : "no transactions", p->inputs,
                p->outputs_visible, p->duplicates, p->lost, p->unconsumed);
    }
}

void
report_print_table(FILE *stream, const ReportInput *input)
{
    g_autoptr(GPtrArray) runs = runs_prepare(input, FALSE);
    int width = 3;
    for (guint i = 0; i < runs->len; i++) {
        const RunData *data = g_ptr_array_index(runs, i);
        width = MAX(width, (int)strlen(data->run->label ? data->run->label : ""));
    }
    fprintf(stream, "%-*s %10s %8s %10s %9s %10s %10s\n", width, "run", "acked", "lost",
            "duplicated", "reordered", "p50 ms", "p99 ms");
    for (guint i = 0; i < runs->len; i++) {
        const RunData *data = g_ptr_array_index(runs, i);
        const CheckerCounts *c = checker_result_counts(data->result);
        const StatsHistogram *h = checker_result_latency(data->result, CHECKER_LATENCY_ACKED);
        g_autofree char *p50 = quantile_ms_text(h, 0.5);
        g_autofree char *p99 = quantile_ms_text(h, 0.99);
        fprintf(stream,
                "%-*s %10" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                " %9" G_GUINT64_FORMAT " %10s %10s\n",
                width, data->run->label ? data->run->label : "", c->acked,
                c->anomalies[CHECKER_LOST_WRITE], c->anomalies[CHECKER_DUPLICATE],
                c->anomalies[CHECKER_NONMONOTONIC_SEND], p50, p99);
        print_consumer_lines(stream, data);
        print_txn_lines(stream, data);
    }
}

/* ---- warnings ---- */

static void report_warn(Report *report, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
report_warn(Report *report, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(report->warnings, g_strdup_vprintf(format, args));
    va_end(args);
}

/* ---- CSV files ---- */

typedef struct {
    OutFile *file;
    OutFileCsv *csv;
} CsvOut;

static gboolean
csv_open(CsvOut *out, const char *dir, const char *name, const char *const *header, GError **error)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    out->file = outfile_open(path, error);
    if (out->file == NULL)
        return FALSE;
    out->csv = outfile_csv_new(outfile_stream(out->file), header);
    return TRUE;
}

static gboolean
csv_commit(CsvOut *out, GError **error)
{
    outfile_csv_free(out->csv);
    out->csv = NULL;
    return outfile_commit(g_steal_pointer(&out->file), error);
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
    if (!csv_open(&out, report->dir, "outcomes.csv", header, error))
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
    return csv_commit(&out, error);
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
    if (!csv_open(&out, report->dir, "anomalies.csv", header, error))
        return FALSE;
    for (guint i = 0; i < report->runs->len; i++)
        csv_anomaly_rows(out.csv, g_ptr_array_index(report->runs, i));
    return csv_commit(&out, error);
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
    if (!csv_open(&out, report->dir, name, header, error))
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
    return csv_commit(&out, error);
}

static gboolean
csv_cdf(const Report *report, const RunData *data, guint64 *rows, GError **error)
{
    static const char *const header[] = {"latency_ms", "fraction", NULL};
    g_autofree char *name = g_strdup_printf("%s-latency-cdf.csv", data->slug);
    CsvOut out;
    if (!csv_open(&out, report->dir, name, header, error))
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
    return csv_commit(&out, error);
}

static gboolean
csv_throughput(const Report *report, const RunData *data, guint64 *rows, GError **error)
{
    static const char *const header[] = {"time_s", "acked_per_s", NULL};
    g_autofree char *name = g_strdup_printf("%s-throughput.csv", data->slug);
    CsvOut out;
    if (!csv_open(&out, report->dir, name, header, error))
        return FALSE;
    const StatsSeries *series = checker_result_throughput(data->result);
    for (guint w = 0; w < stats_series_window_count(series); w++) {
        outfile_csv_double(out.csv, (double)stats_series_window_start_ns(series, w) / 1e9);
        outfile_csv_double(out.csv, stats_series_rate_per_s(series, w));
        outfile_csv_end_row(out.csv);
    }
    *rows = outfile_csv_rows(out.csv);
    return csv_commit(&out, error);
}

static gboolean
csv_events(const Report *report, const RunData *data, GError **error)
{
    static const char *const header[] = {"time_s", "kind", "broker", "partition", "text", NULL};
    g_autofree char *name = g_strdup_printf("%s-events.csv", data->slug);
    CsvOut out;
    if (!csv_open(&out, report->dir, name, header, error))
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
    return csv_commit(&out, error);
}

/* ---- replica lines ---- */

typedef struct {
    gint32 brokers[BROKERS_MAX];
    guint n;
    gint64 leo[BROKERS_MAX];
    gint64 hw[BROKERS_MAX];
    guint isr;
} ReplicaLines;

static guint
bits_set(guint32 mask)
{
    guint n = 0;
    for (; mask != 0; mask &= mask - 1)
        n++;
    return n;
}

static void
lines_add_broker(ReplicaLines *lines, gint32 broker)
{
    if (broker < 0 || broker >= BROKERS_MAX)
        return;
    for (guint i = 0; i < lines->n; i++) {
        if (lines->brokers[i] == broker)
            return;
    }
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
        for (gint32 id = 0; id < BROKERS_MAX; id++) {
            if (e->isr_mask & (1u << id))
                lines_add_broker(lines, id);
        }
    }
}

static void
lines_ack(ReplicaLines *lines, const HistoryEvent *e, gint b)
{
    lines->leo[b] = MAX(lines->leo[b], e->offset_end);
    lines->hw[b] = MAX(lines->hw[b], e->hw);
    lines->isr = bits_set(e->isr_mask);
    for (guint i = 0; i < lines->n; i++) {
        if ((gint)i == b || (e->isr_mask & (1u << lines->brokers[i])) == 0)
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
        lines->isr = bits_set(e->isr_mask);
        return TRUE;
    case HISTORY_EVENT_TRUNCATED:
        lines->leo[b] = e->offset;
        lines->hw[b] = e->hw >= 0 ? e->hw : MIN(lines->hw[b], e->offset);
        return TRUE;
    case HISTORY_EVENT_ISR_CHANGED:
        lines->isr = bits_set(e->isr_mask);
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

/* ---- plot jobs ---- */

static void
job_free(gpointer pointer)
{
    PlotJob *job = pointer;
    g_free(job->basename);
    g_free(job->title);
    g_array_free(job->series, TRUE);
    g_ptr_array_free(job->strings, TRUE);
    g_array_free(job->windows, TRUE);
    g_free(job);
}

static PlotJob *
job_add(Report *report, JobKind kind, char *basename, char *title)
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
static void
job_series(PlotJob *job, char *csv, char *label, guint x, guint y, PlotAxis axis)
{
    g_ptr_array_add(job->strings, csv);
    g_ptr_array_add(job->strings, label);
    PlotSeries series = {csv, label, x, y, axis};
    g_array_append_val(job->series, series);
}

static void
job_windows(PlotJob *job, const ReportWindow *windows, guint len)
{
    for (guint i = 0; i < len; i++) {
        PlotWindow window = {(double)windows[i].start_ns / 1e9, (double)windows[i].end_ns / 1e9,
                             windows[i].label};
        g_array_append_val(job->windows, window);
    }
}

/* The windows to shade on plots of every run: the runs' windows when all
 * runs share them, else none (shading one run's faults over another run's
 * curve would mislead). */
static void
job_shared_windows(PlotJob *job, const Report *report)
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
    job_windows(job, first->windows, first->windows_len);
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
    slug_append(base, where);
    char *basename = g_string_free(base, FALSE);
    g_autofree char *name = g_strdup_printf("%s.csv", basename);
    g_autoptr(GPtrArray) header = lines_header(&lines);
    CsvOut out;
    if (!csv_open(&out, report->dir, name, (const char *const *)header->pdata, error)) {
        g_free(basename);
        return FALSE;
    }
    lines_rows(out.csv, &lines, history, list, run_end_ns(data));
    PlotJob *job =
        job_add(report, JOB_REPLICAS, basename,
                g_strdup_printf("%s: %s, LEO and HW per replica", data->run->label, where));
    for (guint i = 0; i < lines.n; i++) {
        job_series(job, g_strdup(name), g_strdup_printf("LEO broker %d", lines.brokers[i]), 1,
                   2 + 2 * i, PLOT_AXIS_Y1);
        job_series(job, g_strdup(name), g_strdup_printf("HW broker %d", lines.brokers[i]), 1,
                   3 + 2 * i, PLOT_AXIS_Y1);
    }
    job_series(job, g_strdup(name), g_strdup("ISR size"), 1, 2 + 2 * lines.n, PLOT_AXIS_Y2);
    job_windows(job, data->run->windows, data->run->windows_len);
    return csv_commit(&out, error);
}

/* The per-run CSV files, adding each run's series to the shared plots. */
static gboolean
csv_run(Report *report, const RunData *data, PlotJob *cdf, PlotJob *timeline, PlotJob *throughput,
        GError **error)
{
    guint64 rows = 0;
    const char *label = data->run->label ? data->run->label : data->slug;
    if (!csv_latency(report, data, &rows, error))
        return FALSE;
    if (rows > 0)
        job_series(timeline, g_strdup_printf("%s-latency.csv", data->slug), plot_label(label), 1, 2,
                   PLOT_AXIS_Y1);
    if (!csv_cdf(report, data, &rows, error))
        return FALSE;
    if (rows > 0)
        job_series(cdf, g_strdup_printf("%s-latency-cdf.csv", data->slug), plot_label(label), 1, 2,
                   PLOT_AXIS_Y1);
    if (!csv_throughput(report, data, &rows, error))
        return FALSE;
    if (rows > 0)
        job_series(throughput, g_strdup_printf("%s-throughput.csv", data->slug), plot_label(label),
                   1, 2, PLOT_AXIS_Y1);
    if (!csv_events(report, data, error))
        return FALSE;
    const GArray *partitions = checker_result_partitions(data->result);
    for (guint p = 0; p < partitions->len && p < REPORT_PARTITION_PLOTS_MAX; p++) {
        if (!csv_replicas(report, data, &g_array_index(partitions, CheckerPartition, p), error))
            return FALSE;
    }
    return TRUE;
}

static gboolean
csv_write_all(Report *report, GError **error)
{
    if (!csv_outcomes(report, error) || !csv_anomalies(report, error))
        return FALSE;
    if (report->runs->len > 0) {
        PlotJob *bars = job_add(report, JOB_BARS, g_strdup("outcomes"),
                                g_strdup("Acknowledged, lost and duplicated records per run"));
        job_series(bars, g_strdup("outcomes.csv"), g_strdup("acknowledged"), 1, 3, PLOT_AXIS_Y1);
        job_series(bars, g_strdup("outcomes.csv"), g_strdup("lost"), 1, 4, PLOT_AXIS_Y1);
        job_series(bars, g_strdup("outcomes.csv"), g_strdup("duplicated"), 1, 5, PLOT_AXIS_Y1);
    }
    PlotJob *cdf = job_add(report, JOB_CDF, g_strdup("latency-cdf"),
                           g_strdup("Produce latency CDF (acknowledged sends)"));
    PlotJob *timeline = job_add(report, JOB_TIMELINE, g_strdup("latency-timeline"),
                                g_strdup("Produce latency over time (acknowledged sends)"));
    PlotJob *throughput = job_add(report, JOB_THROUGHPUT, g_strdup("throughput"),
                                  g_strdup("Acknowledged records per second"));
    job_shared_windows(timeline, report);
    job_shared_windows(throughput, report);
    for (guint i = 0; i < report->runs->len; i++) {
        if (!csv_run(report, g_ptr_array_index(report->runs, i), cdf, timeline, throughput, error))
            return FALSE;
    }
    return TRUE;
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
    spec->png = png;
}

/* Renames DIR/FROM.EXT to DIR/TO.EXT, or with `keep` FALSE removes
 * DIR/FROM.EXT; FALSE when the rename failed. */
static gboolean
image_settle(const char *dir, const char *from, const char *to, const char *extension,
             gboolean keep)
{
    g_autofree char *from_name = g_strconcat(from, ".", extension, NULL);
    g_autofree char *to_name = g_strconcat(to, ".", extension, NULL);
    g_autofree char *from_path = g_build_filename(dir, from_name, NULL);
    g_autofree char *to_path = g_build_filename(dir, to_name, NULL);
    if (keep && g_rename(from_path, to_path) == 0)
        return TRUE;
    g_unlink(from_path);
    return FALSE;
}

/* Writes NAME.gp, then draws the images under a temporary name and renames
 * them, so a reader never sees half an image. */
static void
job_render(Report *report, PlotJob *job, PlotPng png)
{
    PlotSpec spec;
    job_spec(job, png, job->basename, &spec);
    g_autoptr(GString) script = job_script(job, &spec);
    g_autofree char *script_name = g_strdup_printf("%s.gp", job->basename);
    g_autofree char *script_path = g_build_filename(report->dir, script_name, NULL);
    g_autoptr(GError) error = NULL;
    if (!outfile_write(script_path, script->str, script->len, &error)) {
        report_warn(report, "plot %s left out: %s", job->basename, error->message);
        return;
    }
    g_autofree char *temporary = g_strdup_printf(".%s.tmp.%d", job->basename, (int)getpid());
    job_spec(job, png, temporary, &spec);
    g_autoptr(GString) drawing = job_script(job, &spec);
    gboolean drawn = plot_render(drawing, &spec, report->dir, &error);
    gboolean png_ok =
        png == PLOT_PNG_NONE || image_settle(report->dir, temporary, job->basename, "png", drawn);
    gboolean svg_ok = image_settle(report->dir, temporary, job->basename, "svg", drawn);
    job->drawn = drawn && png_ok && svg_ok;
    if (!drawn)
        report_warn(report, "plot %s left out: %s", job->basename, error->message);
    else if (!job->drawn)
        report_warn(report, "plot %s left out: cannot rename its images in \"%s\"", job->basename,
                    report->dir);
}

static void
plots_render(Report *report)
{
    if (!plot_gnuplot_available()) {
        report_warn(report, "gnuplot is not on the PATH: the report was written without its "
                            "plots (install gnuplot and run again to get them)");
        return;
    }
    PlotTerminals terminals = {0};
    g_autoptr(GError) error = NULL;
    if (!plot_terminals_probe(&terminals, &error) || !terminals.svg) {
        report_warn(report, "gnuplot cannot draw SVG, so the report has no plots%s%s",
                    error ? ": " : "", error ? error->message : "");
        return;
    }
    for (guint i = 0; i < report->jobs->len; i++) {
        PlotJob *job = g_ptr_array_index(report->jobs, i);
        if (job->series->len > 0)
            job_render(report, job, terminals.png);
    }
}

/* ---- document ---- */

static void
block_free(gpointer pointer)
{
    Block *block = pointer;
    g_free(block->text);
    g_free(block->name);
    if (block->rows != NULL)
        g_ptr_array_free(block->rows, TRUE);
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
    row_cell(row, g_strdup(data->run->label ? data->run->label : data->slug));
    row_cell(row, u64_text(c->attempted));
    row_cell(row, u64_text(c->acked));
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        row_cell(row, u64_text(c->anomalies[a]));
    row_cell(row, u64_text(c->unknown_committed));
    row_cell(row, u64_text(c->invariant_violations));
    row_cell(row, g_strdup(expectations_passed(data->run) ? "passed" : "FAILED"));
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
        if (expectations_passed(data->run))
            continue;
        doc_paragraph(doc, "Expectations of %s that failed:", data->run->label);
        Block *list = doc_list(doc, FALSE);
        for (guint k = 0; data->run->expectations_failed[k] != NULL; k++)
            g_ptr_array_add(list->rows, g_strdup(data->run->expectations_failed[k]));
    }
}

static void
doc_examples(Document *doc, const RunData *data, CheckerAnomaly anomaly)
{
    const GArray *examples = checker_result_examples(data->result, anomaly);
    guint64 count = checker_result_counts(data->result)->anomalies[anomaly];
    if (count == 0)
        return;
    doc_paragraph(doc, "%s: %" G_GUINT64_FORMAT " (%u example%s below).",
                  checker_anomaly_name(anomaly), count, examples->len,
                  examples->len == 1 ? "" : "s");
    for (guint e = 0; e < examples->len; e++) {
        const CheckerExample *example = &g_array_index(examples, CheckerExample, e);
        doc_paragraph(doc, "Example %u: %s.", e + 1, example->summary);
        const GPtrArray *chain = g_ptr_array_index(data->chains[anomaly], e);
        Block *list = doc_list(doc, TRUE);
        for (guint k = 0; k < chain->len; k++)
            g_ptr_array_add(list->rows, g_strdup(g_ptr_array_index(chain, k)));
    }
}

static void
doc_run_explanations(Document *doc, const RunData *data)
{
    const CheckerCounts *c = checker_result_counts(data->result);
    doc_heading(doc, 3, "%s", data->run->label ? data->run->label : data->slug);
    guint64 total = c->invariant_violations;
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        total += c->anomalies[a];
    if (total == 0) {
        doc_paragraph(doc, "No anomalies: every acknowledged record is in the committed log, "
                           "once and in order, and the online replicas agree.");
        return;
    }
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        doc_examples(doc, data, a);
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
    row_cell(row, g_strdup(data->run->label ? data->run->label : data->slug));
    row_cell(row, g_strdup(group->group));
    row_cell(row, u64_text(c->members));
    row_cell(row, u64_text(c->processed));
    row_cell(row, u64_text(c->unique));
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        row_cell(row, u64_text(c->anomalies[a]));
    row_cell(row, g_strdup_printf("%" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT " / %" G_GUINT64_FORMAT,
                                  c->commits_ok, c->commits_failed, c->commits_unknown));
    row_cell(row, quantile_ms_text(group->e2e, 0.5));
    row_cell(row, quantile_ms_text(group->e2e, 0.99));
}

static void
doc_consumer_examples(Document *doc, const RunData *data, guint index)
{
    const ConsumerGroupResult *group = checker_consumer_group(data->consumers, index);
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
        guint64 anomalies = 0;
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
            anomalies += totals.anomalies[a];
        if (anomalies == 0)
            continue;
        doc_heading(doc, 3, "%s", data->run->label ? data->run->label : data->slug);
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
    row_cell(row, g_strdup(data->run->label ? data->run->label : data->slug));
    row_cell(row, u64_text(c->transactions));
    for (guint f = 0; f < TXN_FATE_COUNT; f++)
        row_cell(row, u64_text(c->fates[f]));
    row_cell(row, u64_text(c->fenced_instances));
    row_cell(row, u64_text(c->aborted_read_uncommitted));
    for (guint a = 0; a < TXN_PIPELINE_DUPLICATE; a++)
        row_cell(row, u64_text(c->anomalies[a]));
}

static void
pipeline_rows(Block *table, const RunData *data)
{
    const GArray *pipelines = checker_txn_pipelines(data->txn);
    for (guint i = 0; i < pipelines->len; i++) {
        const TxnPipelineCounts *p = &g_array_index(pipelines, TxnPipelineCounts, i);
        GPtrArray *row = table_row(table);
        row_cell(row, g_strdup(data->run->label ? data->run->label : data->slug));
        row_cell(row, g_strdup(p->pipeline));
        row_cell(row, g_strdup(p->transactional ? "yes" : "no"));
        row_cell(row, u64_text(p->inputs));
        row_cell(row, u64_text(p->outputs_visible));
        row_cell(row, u64_text(p->duplicates));
        row_cell(row, u64_text(p->lost));
        row_cell(row, u64_text(p->unconsumed));
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
        "Zombie writes", "int_nonmonotonic_send", "int_send_skip", NULL};
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
                       "another write of the producer between them. Aborted reads by "
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
        const TxnCounts *c = checker_txn_counts(data->txn);
        guint64 anomalies = 0;
        for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
            anomalies += c->anomalies[a];
        if (anomalies == 0)
            continue;
        doc_heading(doc, 3, "%s", data->run->label ? data->run->label : data->slug);
        doc_txn_examples(doc, data);
    }
}

static char *
availability_text(const CheckerStats *stats)
{
    if (stats->availability < 0)
        return g_strdup("-");
    return g_strdup_printf("%.1f%%", stats->availability * 100.0);
}

static char *
recovery_text(const CheckerStats *stats)
{
    if (stats->last_heal_ns < 0)
        return g_strdup("no heal");
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
    row_cell(row, g_strdup(data->run->label ? data->run->label : data->slug));
    row_cell(row, u64_text((guint64)stats_histogram_count(acked)));
    for (guint i = 0; i < G_N_ELEMENTS(qs); i++)
        row_cell(row, quantile_ms_text(acked, qs[i]));
    row_cell(row, quantile_ms_text(failed, 0.99));
    row_cell(row, stats->throughput_per_s >= 0 ? g_strdup_printf("%.1f", stats->throughput_per_s)
                                               : g_strdup("-"));
    row_cell(row, availability_text(stats));
    row_cell(row, recovery_text(stats));
}

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
                       "which a send was waiting for its answer, that saw a send acknowledged. "
                       "Recovery runs from the last heal to the first acknowledgement of a send "
                       "made after it.");
    Block *table = doc_table(doc, header);
    for (guint i = 0; i < report->runs->len; i++)
        latency_row(table, g_ptr_array_index(report->runs, i));
    doc_image(doc, job_find(report, "latency-cdf"));
    doc_image(doc, job_find(report, "latency-timeline"));
    doc_image(doc, job_find(report, "throughput"));
}

static void
doc_replicas(Document *doc, const Report *report)
{
    doc_heading(doc, 2, "Replicas");
    doc_paragraph(doc, "LEO and HW of each replica and the ISR size over time, per partition, "
                       "derived from the leaders' acknowledgements, elections, truncations and "
                       "ISR changes; a follower's lines are lower bounds that move when its "
                       "leader acknowledges. Shaded: fault windows.");
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
    doc_heading(doc, 3, "%s", data->run->label ? data->run->label : data->slug);
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
        doc_heading(doc, 3, "%s", run->label ? run->label : data->slug);
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

static Document *
document_build(const Report *report)
{
    Document *doc = g_ptr_array_new_with_free_func(block_free);
    doc_header(doc, report);
    doc_durability(doc, report);
    doc_heading(doc, 2, "Explanations");
    for (guint i = 0; i < report->runs->len; i++)
        doc_run_explanations(doc, g_ptr_array_index(report->runs, i));
    doc_consumers(doc, report);
    doc_transactions(doc, report);
    doc_latency(doc, report);
    doc_replicas(doc, report);
    doc_heading(doc, 2, "Timeline");
    doc_paragraph(doc, "Cluster events in time order (acknowledgements left out; they are in "
                       "the trace).");
    for (guint i = 0; i < report->runs->len; i++)
        doc_run_timeline(doc, g_ptr_array_index(report->runs, i));
    doc_runs(doc, report);
    return doc;
}

/* ---- document: Markdown ---- */

static void
md_cell(GString *out, const char *text)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '|')
            g_string_append(out, "\\|");
        else if (*c == '\n')
            g_string_append_c(out, ' ');
        else
            g_string_append_c(out, *c);
    }
}

static void
md_table(GString *out, const Block *block)
{
    for (guint r = 0; r < block->rows->len; r++) {
        const GPtrArray *row = g_ptr_array_index(block->rows, r);
        g_string_append(out, "|");
        for (guint c = 0; c < row->len; c++) {
            g_string_append_c(out, ' ');
            md_cell(out, g_ptr_array_index(row, c));
            g_string_append(out, " |");
        }
        g_string_append_c(out, '\n');
        if (r > 0)
            continue;
        g_string_append(out, "|");
        for (guint c = 0; c < row->len; c++)
            g_string_append(out, c == 0 ? " --- |" : " ---: |");
        g_string_append_c(out, '\n');
    }
    g_string_append_c(out, '\n');
}

static void
md_block(GString *out, const Block *block)
{
    switch (block->kind) {
    case BLOCK_HEADING:
        g_string_append_printf(out, "%.*s %s\n\n", block->level, "######", block->text);
        break;
    case BLOCK_PARAGRAPH:
        g_string_append_printf(out, "%s\n\n", block->text);
        break;
    case BLOCK_WARNING:
        g_string_append_printf(out, "> **Warning:** %s\n\n", block->text);
        break;
    case BLOCK_TABLE:
        md_table(out, block);
        break;
    case BLOCK_LIST:
    case BLOCK_ORDERED:
        for (guint i = 0; i < block->rows->len; i++)
            g_string_append_printf(out, "%s %s\n", block->kind == BLOCK_LIST ? "-" : "1.",
                                   (char *)g_ptr_array_index(block->rows, i));
        g_string_append_c(out, '\n');
        break;
    case BLOCK_IMAGE:
        g_string_append_printf(out, "![%s](%s.svg)\n\n", block->text, block->name);
        break;
    }
}

static GString *
render_markdown(const Document *doc)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < doc->len; i++)
        md_block(out, g_ptr_array_index(doc, i));
    return out;
}

/* ---- document: HTML ---- */

#define HTML_STYLE                                                                                 \
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;"       \
    "line-height:1.45}table{border-collapse:collapse;margin:1em 0;font-size:0.9em}"                \
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"              \
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}"               \
    "img{max-width:100%;display:block;margin:1em 0}ol{margin-top:0}"                               \
    ".warning{background:#fff3cd;border-left:4px solid #e0a800;padding:0.5em 1em}"

static gboolean
looks_numeric(const char *text)
{
    if (*text == '-' && text[1] != '\0')
        text++;
    return g_ascii_isdigit(*text);
}

static void
html_table(GString *out, const Block *block)
{
    g_string_append(out, "<table>\n");
    for (guint r = 0; r < block->rows->len; r++) {
        const GPtrArray *row = g_ptr_array_index(block->rows, r);
        g_string_append(out, "<tr>");
        for (guint c = 0; c < row->len; c++) {
            const char *text = g_ptr_array_index(row, c);
            const char *tag = r == 0 ? "th" : "td";
            gboolean number = r > 0 && looks_numeric(text);
            g_string_append_printf(out, "<%s%s>", tag, number ? " class=\"n\"" : "");
            plot_html_escape(out, text);
            g_string_append_printf(out, "</%s>", tag);
        }
        g_string_append(out, "</tr>\n");
    }
    g_string_append(out, "</table>\n");
}

static void
html_list(GString *out, const Block *block)
{
    const char *tag = block->kind == BLOCK_LIST ? "ul" : "ol";
    g_string_append_printf(out, "<%s>\n", tag);
    for (guint i = 0; i < block->rows->len; i++) {
        g_string_append(out, "<li>");
        plot_html_escape(out, g_ptr_array_index(block->rows, i));
        g_string_append(out, "</li>\n");
    }
    g_string_append_printf(out, "</%s>\n", tag);
}

/* The PNG inline; without one (gnuplot lacking a PNG terminal), the SVG. */
static void
html_image(GString *out, const Block *block, const char *dir)
{
    g_autofree char *png_name = g_strconcat(block->name, ".png", NULL);
    g_autofree char *png = g_build_filename(dir, png_name, NULL);
    if (plot_html_embed_png(out, png, block->text, NULL)) {
        g_string_append_c(out, '\n');
        return;
    }
    g_autofree char *svg_name = g_strconcat(block->name, ".svg", NULL);
    g_autofree char *svg = g_build_filename(dir, svg_name, NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(svg, &contents, &len, NULL))
        return;
    g_autofree char *encoded = g_base64_encode((const guchar *)contents, len);
    g_string_append_printf(out, "<img src=\"data:image/svg+xml;base64,%s\" alt=\"", encoded);
    plot_html_escape(out, block->text);
    g_string_append(out, "\">\n");
}

static void
html_text_block(GString *out, const char *open, const char *close, const char *text)
{
    g_string_append(out, open);
    plot_html_escape(out, text);
    g_string_append(out, close);
}

static void
html_block(GString *out, const Block *block, const char *dir)
{
    switch (block->kind) {
    case BLOCK_HEADING:
        g_string_append_printf(out, "<h%d>", block->level);
        plot_html_escape(out, block->text);
        g_string_append_printf(out, "</h%d>\n", block->level);
        break;
    case BLOCK_PARAGRAPH:
        html_text_block(out, "<p>", "</p>\n", block->text);
        break;
    case BLOCK_WARNING:
        html_text_block(out, "<p class=\"warning\"><strong>Warning:</strong> ", "</p>\n",
                        block->text);
        break;
    case BLOCK_TABLE:
        html_table(out, block);
        break;
    case BLOCK_LIST:
    case BLOCK_ORDERED:
        html_list(out, block);
        break;
    case BLOCK_IMAGE:
        html_image(out, block, dir);
        break;
    }
}

static GString *
render_html(const Document *doc, const Report *report)
{
    GString *out = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                                "<meta charset=\"utf-8\">\n<title>ksim report: ");
    const char *scenario = report->input->scenario ? report->input->scenario : "";
    plot_html_escape(out, scenario);
    g_string_append(out, "</title>\n<style>" HTML_STYLE "</style>\n</head>\n<body>\n");
    for (guint i = 0; i < doc->len; i++)
        html_block(out, g_ptr_array_index(doc, i), report->dir);
    g_string_append(out, "</body>\n</html>\n");
    return out;
}

/* ---- report_write ---- */

static gboolean
write_text(const char *dir, const char *name, const GString *text, GError **error)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return outfile_write(path, text->str, text->len, error);
}

static gboolean
documents_write(const Report *report, GError **error)
{
    Document *doc = document_build(report);
    g_autoptr(GString) markdown = render_markdown(doc);
    g_autoptr(GString) html = render_html(doc, report);
    g_ptr_array_free(doc, TRUE);
    return write_text(report->dir, "report.md", markdown, error) &&
           write_text(report->dir, "report.html", html, error);
}

static gboolean
directory_make(const char *dir, GError **error)
{
    if (g_mkdir_with_parents(dir, 0777) == 0)
        return TRUE;
    int saved = errno;
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO,
                "cannot create the report directory \"%s\": %s", dir, g_strerror(saved));
    return FALSE;
}

static gboolean
report_write_all(Report *report, GError **error)
{
    if (!directory_make(report->dir, error) || !csv_write_all(report, error))
        return FALSE;
    plots_render(report);
    if (!documents_write(report, error))
        return FALSE;
    g_autofree char *summary = summary_text(report->input, report->runs, report->warnings);
    g_autofree char *path = g_build_filename(report->dir, "summary.json", NULL);
    return outfile_write(path, summary, strlen(summary), error);
}

gboolean
report_write(const ReportInput *input, const char *out_dir, GPtrArray *warnings, GError **error)
{
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(out_dir != NULL);
    Report report = {0};
    report.input = input;
    report.dir = out_dir;
    report.runs = runs_prepare(input, TRUE);
    report.jobs = g_ptr_array_new_with_free_func(job_free);
    report.warnings = g_ptr_array_new_with_free_func(g_free);
    gboolean ok = report_write_all(&report, error);
    for (guint i = 0; warnings != NULL && i < report.warnings->len; i++)
        g_ptr_array_add(warnings, g_strdup(g_ptr_array_index(report.warnings, i)));
    g_ptr_array_free(report.warnings, TRUE);
    g_ptr_array_free(report.jobs, TRUE);
    g_ptr_array_free(report.runs, TRUE);
    return ok;
}
