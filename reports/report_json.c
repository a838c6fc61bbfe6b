/*
 * report_json: summary.json, the machine-readable summary of every run
 * (report_summary_json, report_json_summary).
 *
 * json-glib's JsonBuilder builds the tree; the writer below walks that tree
 * itself so that doubles come out in their shortest exact form.
 *
 * A member that is one of the [expect] metrics (metrics.h: the anomalies,
 * produce.*, invariant_violations, the produce latency quantiles, txn.* and
 * aborted_read_uncommitted) takes its value from the metric table, by the
 * metric's name, so the summary shows what an expectation is judged
 * against. The members that are no metric (per group, per pipeline, the
 * checker's finer counts) are read from the checkers' results.
 */
#include "report_internal.h"

#include "failover.h"
#include "metrics.h"
#include "sim_assert.h"

#include <math.h>

#include <json-glib/json-glib.h>

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

/* ---- members that are metrics ---- */

static MetricsRun
metrics_run_of(const RunData *data)
{
    return (MetricsRun){data->result, data->consumers, data->txn};
}

static const Metric *
metric_named(const char *name)
{
    const Metric *metric = metrics_find(name);
    KSIM_ASSERT(metric != NULL);
    return metric;
}

/* Member `member`: the value of the count metric `metric`. */
static void
json_metric_count(JsonBuilder *b, const char *member, const char *metric, const MetricsRun *run)
{
    json_int(b, member, (gint64)metrics_value(metric_named(metric), run));
}

static void
json_metric_double(JsonBuilder *b, const char *member, const char *metric, const MetricsRun *run)
{
    json_double(b, member, metrics_value(metric_named(metric), run));
}

/* A latency object. `metric_prefix` (NULL: none) names the metrics behind
 * its quantiles, "latency_ms.produce" for latency_ms.produce.p50 and so on.
 * Its max is not the metric's: summary.json has always written the top of
 * the highest bucket (a quantile of 1), latency_ms.produce.max is the exact
 * longest latency. */
static void
json_latency(JsonBuilder *b, const char *name, const StatsHistogram *h, const char *metric_prefix,
             const MetricsRun *run)
{
    static const struct {
        const char *name;
        double q;
        gboolean metric;
    } points[] = {{"p50", 0.5, TRUE},
                  {"p90", 0.9, TRUE},
                  {"p99", 0.99, TRUE},
                  {"p999", 0.999, TRUE},
                  {"max", 1.0, FALSE}};
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    for (guint i = 0; i < G_N_ELEMENTS(points); i++) {
        if (metric_prefix != NULL && points[i].metric) {
            g_autofree char *metric = g_strdup_printf("%s.%s", metric_prefix, points[i].name);
            json_metric_double(b, points[i].name, metric, run);
        } else {
            json_double(b, points[i].name, (double)stats_histogram_quantile(h, points[i].q) / 1e6);
        }
    }
    json_int(b, "count", stats_histogram_count(h));
    json_double(b, "mean", stats_histogram_mean(h) / 1e6);
    json_builder_end_object(b);
}

static void
json_produce(JsonBuilder *b, const CheckerCounts *c, const MetricsRun *run)
{
    static const char *const metric_members[] = {"attempted", "acked", "failed", "unknown"};
    json_builder_set_member_name(b, "produce");
    json_builder_begin_object(b);
    for (guint i = 0; i < G_N_ELEMENTS(metric_members); i++) {
        g_autofree char *metric = g_strconcat("produce.", metric_members[i], NULL);
        json_metric_count(b, metric_members[i], metric, run);
    }
    json_int(b, "acked_without_offset", (gint64)c->acked_without_offset);
    json_int(b, "acked_committed", (gint64)c->acked_committed);
    json_int(b, "expired", (gint64)c->expired);
    json_int(b, "leaderless", (gint64)c->leaderless);
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
    json_builder_add_boolean_value(b, report_expectations_passed(run));
    json_builder_set_member_name(b, "failed");
    json_builder_begin_array(b);
    for (guint i = 0; run->expectations_failed != NULL && run->expectations_failed[i]; i++)
        json_builder_add_string_value(b, run->expectations_failed[i]);
    json_builder_end_array(b);
    json_builder_end_object(b);
    json_builder_set_member_name(b, "marks");
    json_builder_begin_object(b);
    for (guint i = 0; i < run->marks_len; i++) {
        json_builder_set_member_name(b, run->marks[i].name);
        json_builder_add_int_value(b, (gint64)run->marks[i].hits);
    }
    json_builder_end_object(b);
}

static void
json_stats(JsonBuilder *b, const CheckerResult *result, const MetricsRun *run)
{
    const CheckerStats *stats = checker_result_stats(result);
    json_builder_set_member_name(b, "latency_ms");
    json_builder_begin_object(b);
    json_latency(b, "produce", checker_result_latency(result, CHECKER_LATENCY_ACKED),
                 "latency_ms.produce", run);
    json_latency(b, "failed", checker_result_latency(result, CHECKER_LATENCY_FAILED), NULL, run);
    json_latency(b, "unknown", checker_result_latency(result, CHECKER_LATENCY_UNKNOWN), NULL, run);
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
    json_int(b, "resets", (gint64)c->resets);
    json_int(b, "reset_skipped", (gint64)c->reset_skipped);
    json_int(b, "reset_failures", (gint64)c->reset_failures);
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

/* The metric behind a fate's count, or NULL: txn.unknown counts the
 * unknown and the unended together, so those two are the checker's. */
static const char *
fate_metric(TxnFate fate)
{
    switch (fate) {
    case TXN_FATE_COMMITTED:
        return "txn.committed";
    case TXN_FATE_ABORTED:
        return "txn.aborted";
    default:
        return NULL;
    }
}

static void
json_transactions(JsonBuilder *b, const RunData *data, const MetricsRun *run)
{
    const TxnCounts *c = checker_txn_counts(data->txn);
    json_builder_set_member_name(b, "transactions");
    json_builder_begin_object(b);
    json_int(b, "transactions", (gint64)c->transactions);
    for (guint f = 0; f < TXN_FATE_COUNT; f++) {
        if (fate_metric(f) != NULL)
            json_metric_count(b, checker_txn_fate_name(f), fate_metric(f), run);
        else
            json_int(b, checker_txn_fate_name(f), (gint64)c->fates[f]);
    }
    json_int(b, "sends", (gint64)c->sends);
    json_metric_count(b, "fenced_instances", "txn.fenced_instances", run);
    json_metric_count(b, "resumed", "txn.resumed", run);
    json_metric_count(b, "hanging", "txn.hanging", run);
    json_metric_count(b, "open_ms_max", "txn.open_ms_max", run);
    json_int(b, "reads_committed", (gint64)c->reads_committed);
    json_metric_count(b, "aborted_read_uncommitted", "aborted_read_uncommitted", run);
    json_builder_set_member_name(b, "anomalies");
    json_builder_begin_object(b);
    for (guint a = 0; a < TXN_PIPELINE_DUPLICATE; a++)
        json_metric_count(b, checker_txn_anomaly_name(a), checker_txn_anomaly_name(a), run);
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

/* Per-partition lists in summary.json name at most this many partitions;
 * a larger run gets a count and aggregates with them. */
#define JSON_PARTITIONS_MAX 1000u
#define JSON_WORST_MAX 10u

static void
json_failover(JsonBuilder *b, const RunData *data)
{
    const History *history = checker_result_history(data->result);
    const FailoverResult *failover = data->failover;
    json_builder_set_member_name(b, "failover");
    json_builder_begin_object(b);
    json_double(b, "controller_failover_ms", failover_result_longest_ms(failover));
    json_builder_set_member_name(b, "controller_failovers");
    json_builder_begin_array(b);
    const GArray *windows = failover_result_windows(failover);
    for (guint i = 0; i < windows->len; i++) {
        const FailoverWindow *w = &g_array_index(windows, FailoverWindow, i);
        json_builder_begin_object(b);
        json_int(b, "old_controller", w->old_controller);
        json_double(b, "lost_s", (double)w->lost_ns / 1e9);
        json_seconds_or_null(b, "claimed_s", w->claimed_ns);
        json_seconds_or_null(b, "led_again_s", w->led_ns);
        json_double(b, "ms", (double)failover_window_ns(failover, w) / 1e6);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_double(b, "unavailable_partition_s",
                (double)failover_result_unavailable_ns(failover) / 1e9);
    g_autoptr(GArray) worst = failover_result_worst(failover, G_MAXUINT);
    json_int(b, "partitions_unavailable", worst->len);
    json_builder_set_member_name(b, "worst_partitions");
    json_builder_begin_array(b);
    for (guint i = 0; i < MIN(worst->len, JSON_WORST_MAX); i++) {
        const FailoverPartition *p = &g_array_index(worst, FailoverPartition, i);
        g_autofree char *where = checker_partition_label(history, p->topic, p->partition);
        json_builder_begin_object(b);
        json_string(b, "partition", where);
        json_double(b, "unavailable_s", (double)p->unavailable_ns / 1e9);
        json_int(b, "outages", p->outages);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* The replica whose state stands for its partition at the end: the online
 * leader, else the online replica with the highest HW, else NULL. */
static gboolean
replica_better(const HistoryReplica *r, const HistoryReplica *best)
{
    if (best == NULL)
        return TRUE;
    if (r->online != best->online)
        return r->online;
    if (r->is_leader != best->is_leader)
        return r->is_leader;
    return r->hw > best->hw;
}

static gint
replica_ptr_compare(gconstpointer a, gconstpointer b)
{
    const HistoryReplica *x = *(const HistoryReplica *const *)a;
    const HistoryReplica *y = *(const HistoryReplica *const *)b;
    if (x->topic != y->topic)
        return x->topic < y->topic ? -1 : 1;
    return (x->partition > y->partition) - (x->partition < y->partition);
}

/* Each partition's high watermark and log end offset at the end (its
 * leader's, or its best replica's); a per-partition array up to
 * JSON_PARTITIONS_MAX partitions, aggregates with the first ones beyond. */
static void
json_partitions_final(JsonBuilder *b, const RunData *data)
{
    const History *history = checker_result_history(data->result);
    const GArray *replicas = history_replicas(history);
    g_autoptr(GPtrArray) best = g_ptr_array_new();
    g_autoptr(GPtrArray) sorted = g_ptr_array_new();
    for (guint i = 0; i < replicas->len; i++)
        g_ptr_array_add(sorted, &g_array_index(replicas, HistoryReplica, i));
    g_ptr_array_sort(sorted, replica_ptr_compare);
    for (guint i = 0; i < sorted->len; i++) {
        const HistoryReplica *r = g_ptr_array_index(sorted, i);
        const HistoryReplica *last = best->len > 0 ? g_ptr_array_index(best, best->len - 1) : NULL;
        if (last != NULL && replica_ptr_compare(&r, &last) == 0) {
            if (replica_better(r, last))
                best->pdata[best->len - 1] = (gpointer)r;
        } else {
            g_ptr_array_add(best, (gpointer)r);
        }
    }
    gint64 hw_sum = 0, hw_min = G_MAXINT64, hw_max = -1;
    for (guint i = 0; i < best->len; i++) {
        const HistoryReplica *r = g_ptr_array_index(best, i);
        hw_sum += r->hw;
        hw_min = MIN(hw_min, r->hw);
        hw_max = MAX(hw_max, r->hw);
    }
    json_builder_set_member_name(b, "partitions_final");
    json_builder_begin_object(b);
    json_int(b, "count", best->len);
    json_int(b, "high_watermark_sum", hw_sum);
    json_int(b, "high_watermark_min", best->len > 0 ? hw_min : 0);
    json_int(b, "high_watermark_max", best->len > 0 ? hw_max : 0);
    json_builder_set_member_name(b, best->len <= JSON_PARTITIONS_MAX ? "partitions" : "first");
    json_builder_begin_array(b);
    guint shown = best->len <= JSON_PARTITIONS_MAX ? best->len : JSON_WORST_MAX;
    for (guint i = 0; i < shown; i++) {
        const HistoryReplica *r = g_ptr_array_index(best, i);
        g_autofree char *where = checker_partition_label(history, r->topic, r->partition);
        json_builder_begin_object(b);
        json_string(b, "partition", where);
        json_int(b, "replica", r->broker);
        json_builder_set_member_name(b, "leader");
        json_builder_add_boolean_value(b, r->is_leader && r->online);
        json_int(b, "high_watermark", r->hw);
        json_int(b, "log_end_offset", r->leo);
        json_int(b, "log_start_offset", r->log_start);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

/* A distribution's p50, p99, p99.9 in ms (0 when empty). */
static void
json_quantiles(JsonBuilder *b, const char *name, const StatsHistogram *h)
{
    gboolean any = stats_histogram_count(h) > 0;
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    json_double(b, "p50", any ? (double)stats_histogram_quantile(h, 0.5) / 1e6 : 0);
    json_double(b, "p99", any ? (double)stats_histogram_quantile(h, 0.99) / 1e6 : 0);
    json_double(b, "p999", any ? (double)stats_histogram_quantile(h, 0.999) / 1e6 : 0);
    json_builder_end_object(b);
}

/* Produce requests' time on their leaders, split as Kafka's request metrics
 * split it (each part its own distribution), beside the client's latency:
 * "latency_breakdown_ms": {"requests", "read", "queue" (RequestQueueTimeMs),
 * "local" (LocalTimeMs), "remote" (RemoteTimeMs), "send"
 * (ResponseSendTimeMs), "broker_total" (TotalTimeMs), "client"}. What the
 * client's latency holds beyond the broker's total is batching, the network
 * and retries. */
static void
json_latency_breakdown(JsonBuilder *b, const RunData *data)
{
    static const char *const names[REPORT_PARTS] = {"read",   "queue", "local",
                                                    "remote", "send",  "broker_total"};
    StatsHistogram *parts[REPORT_PARTS];
    guint64 count = report_request_parts(data, parts);
    json_builder_set_member_name(b, "latency_breakdown_ms");
    json_builder_begin_object(b);
    json_int(b, "requests", (gint64)count);
    for (guint k = 0; k < REPORT_PARTS; k++)
        json_quantiles(b, names[k], parts[k]);
    json_quantiles(b, "client", checker_result_latency(data->result, CHECKER_LATENCY_ACKED));
    json_builder_end_object(b);
    for (guint k = 0; k < REPORT_PARTS; k++)
        stats_histogram_free(parts[k]);
}

/* "utilization": {"bucket_s", "brokers": [{"broker", "io_threads", "mean",
 * "peak"}]}: each broker's I/O-thread utilisation (utilization.h). */
static void
json_utilization(JsonBuilder *b, const RunData *data)
{
    const Utilization *u = data->utilization;
    json_builder_set_member_name(b, "utilization");
    json_builder_begin_object(b);
    json_double(b, "bucket_s", u->bucket_s);
    json_builder_set_member_name(b, "brokers");
    json_builder_begin_array(b);
    for (guint i = 0; i < u->brokers->len; i++) {
        const UtilizationBroker *broker = g_ptr_array_index(u->brokers, i);
        json_builder_begin_object(b);
        json_int(b, "broker", broker->broker);
        json_int(b, "io_threads", broker->io_threads);
        json_double(b, "mean", broker->mean);
        json_double(b, "peak", broker->peak);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
}

static void
json_run(JsonBuilder *b, const RunData *data)
{
    const ReportRun *run = data->run;
    const CheckerCounts *c = checker_result_counts(data->result);
    MetricsRun metrics = metrics_run_of(data);
    json_builder_begin_object(b);
    json_string(b, "label", run->label);
    json_string(b, "files", data->slug);
    json_settings_and_expectations(b, run);
    json_string(b, "fingerprint", run->fingerprint);
    json_double(b, "virtual_s", run->virtual_s);
    json_double(b, "wall_s", run->wall_s);
    json_int(b, "events", (gint64)run->events);
    json_produce(b, c, &metrics);
    json_builder_set_member_name(b, "anomalies");
    json_builder_begin_object(b);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        json_metric_count(b, checker_anomaly_name(a), checker_anomaly_name(a), &metrics);
    json_builder_end_object(b);
    json_metric_count(b, "invariant_violations", "invariant_violations", &metrics);
    json_strings(b, "violations", checker_result_violations(data->result));
    json_stats(b, data->result, &metrics);
    json_latency_breakdown(b, data);
    json_utilization(b, data);
    json_failover(b, data);
    json_partitions_final(b, data);
    json_examples(b, data);
    json_consumers(b, data);
    json_transactions(b, data, &metrics);
    json_pipelines(b, data);
    json_builder_end_object(b);
}

/* The [vary] runs' load curves (compare.h), when a varied key is a load:
 * "comparison": {"load_key", "curves": [{"label", "knee" (the load, or
 * null), "points": [{"load", "p50_ms", "p99_ms", "run"}]}]}. */
static void
json_comparison(JsonBuilder *b, const GPtrArray *runs)
{
    Comparison *comparison = report_comparison_new(runs);
    if (comparison == NULL || compare_load_key(comparison) == NULL) {
        compare_free(comparison);
        return;
    }
    json_builder_set_member_name(b, "comparison");
    json_builder_begin_object(b);
    json_string(b, "load_key", compare_load_key(comparison));
    json_builder_set_member_name(b, "curves");
    json_builder_begin_array(b);
    const GPtrArray *curves = compare_curves(comparison);
    for (guint i = 0; i < curves->len; i++) {
        const CompareCurve *curve = g_ptr_array_index(curves, i);
        json_builder_begin_object(b);
        json_string(b, "label", curve->label);
        json_builder_set_member_name(b, "knee");
        if (curve->knee >= 0)
            json_builder_add_double_value(
                b, g_array_index(curve->points, ComparePoint, (guint)curve->knee).x);
        else
            json_builder_add_null_value(b);
        json_builder_set_member_name(b, "points");
        json_builder_begin_array(b);
        for (guint p = 0; p < curve->points->len; p++) {
            const ComparePoint *point = &g_array_index(curve->points, ComparePoint, p);
            const RunData *data = g_ptr_array_index(runs, point->run);
            json_builder_begin_object(b);
            json_double(b, "load", point->x);
            json_double(b, "p50_ms", point->p50_ms);
            json_double(b, "p99_ms", point->p99_ms);
            json_string(b, "run", report_run_label(data));
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    compare_free(comparison);
}

char *
report_json_summary(const ReportInput *input, const GPtrArray *runs, const GPtrArray *warnings)
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
    json_comparison(b, runs);
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
    g_autoptr(GPtrArray) runs = report_runs_prepare(input, TRUE);
    return report_json_summary(input, runs, warnings);
}
