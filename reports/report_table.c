/*
 * report_table: the terminal table `ksim run` prints — one line per run,
 * with a line per consumer group, transactions and pipelines below it
 * (report_print_table).
 */
#include "report_internal.h"

#include <string.h>

/* One line per consumer group under its run. */
static void
print_consumer_lines(FILE *stream, const RunData *data)
{
    for (guint g = 0; g < checker_consumer_group_count(data->consumers); g++) {
        const ConsumerGroupResult *group = checker_consumer_group(data->consumers, g);
        const ConsumerCounts *c = &group->counts;
        g_autofree char *p50 = report_quantile_ms_text(group->e2e, 0.5);
        g_autofree char *p99 = report_quantile_ms_text(group->e2e, 0.99);
        fprintf(stream,
                "  group %s: processed %" G_GUINT64_FORMAT ", lost_consumption %" G_GUINT64_FORMAT
                ", duplicate_consumption %" G_GUINT64_FORMAT ", poll_skip %" G_GUINT64_FORMAT
                ", nonmonotonic_poll %" G_GUINT64_FORMAT ", e2e p50 %s ms, p99 %s ms\n",
                group->group, c->processed, c->anomalies[CONSUMER_LOST_CONSUMPTION],
                c->anomalies[CONSUMER_DUPLICATE_CONSUMPTION], c->anomalies[CONSUMER_POLL_SKIP],
                c->anomalies[CONSUMER_NONMONOTONIC_POLL], p50, p99);
        if (c->anomalies[CONSUMER_TRUNCATED_READ] > 0)
            fprintf(stream,
                    "  group %s: truncated_read %" G_GUINT64_FORMAT
                    " (polls of records that no longer exist: truncated away after the read)\n",
                    group->group, c->anomalies[CONSUMER_TRUNCATED_READ]);
        if (c->resets > 0 || c->reset_failures > 0)
            fprintf(stream,
                    "  group %s: resets %" G_GUINT64_FORMAT ", reset_skipped %" G_GUINT64_FORMAT
                    " (offsets past what retention deleted), reset_failures %" G_GUINT64_FORMAT
                    "\n",
                    group->group, c->resets, c->reset_skipped, c->reset_failures);
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
        if (c->open_ms_max > 0)
            fprintf(stream,
                    "  open at the end: %" G_GUINT64_FORMAT " ms the longest; hanging (past "
                    "transaction.max.timeout.ms) %" G_GUINT64_FORMAT "\n",
                    c->open_ms_max, c->hanging);
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
    g_autoptr(GPtrArray) runs = report_runs_prepare(input, FALSE);
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
        g_autofree char *p50 = report_quantile_ms_text(h, 0.5);
        g_autofree char *p99 = report_quantile_ms_text(h, 0.99);
        fprintf(stream,
                "%-*s %10" G_GUINT64_FORMAT " %8" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                " %9" G_GUINT64_FORMAT " %10s %10s\n",
                width, data->run->label ? data->run->label : "", c->acked,
                c->anomalies[CHECKER_LOST_WRITE], c->anomalies[CHECKER_DUPLICATE],
                c->anomalies[CHECKER_NONMONOTONIC_SEND], p50, p99);
        if (c->expired > 0)
            fprintf(stream,
                    "  expired %" G_GUINT64_FORMAT ": acknowledged, committed, then deleted by "
                    "retention (not lost)\n",
                    c->expired);
        if (c->leaderless > 0)
            fprintf(stream,
                    "  leaderless %" G_GUINT64_FORMAT ": acknowledged, held by a replica of a "
                    "partition no one leads at the end (undecided, not lost)\n",
                    c->leaderless);
        print_consumer_lines(stream, data);
        print_txn_lines(stream, data);
    }
}
