/*
 * metrics: the [expect] metrics of a run (see metrics.h).
 *
 * A row takes its value through one of a few readers, each given the row's
 * `arg`: an anomaly index, a field's offset in a counts struct, or a quantile
 * in thousandths. The table is constant; nothing here has state.
 */
#include "metrics.h"

#include <stddef.h>
#include <string.h>

#include "failover.h"
#include "sim_assert.h"
#include "stats.h"

typedef double (*MetricValueFn)(const MetricsRun *run, guint arg);
typedef const char *(*MetricNameFn)(guint arg);

struct Metric {
    const char *name;     /* NULL: name_fn(arg), the checker's name of anomaly `arg` */
    MetricNameFn name_fn; /* with name NULL only */
    MetricValueFn value_fn;
    guint arg;
    const char *doc;
};

/* ---- Names the checkers give ---- */

static const char *
checker_name(guint anomaly)
{
    return checker_anomaly_name((CheckerAnomaly)anomaly);
}

static const char *
consumer_name(guint anomaly)
{
    return checker_consumer_anomaly_name((ConsumerAnomaly)anomaly);
}

static const char *
txn_name(guint anomaly)
{
    return checker_txn_anomaly_name((TxnAnomaly)anomaly);
}

/* ---- Readers ---- */

static double
checker_anomaly(const MetricsRun *run, guint anomaly)
{
    KSIM_ASSERT(anomaly < CHECKER_ANOMALY_COUNT);
    return (double)checker_result_counts(run->check)->anomalies[anomaly];
}

/* A guint64 field of CheckerCounts, by offset. */
static double
checker_count(const MetricsRun *run, guint offset)
{
    KSIM_ASSERT(offset + sizeof(guint64) <= sizeof(CheckerCounts));
    const char *counts = (const char *)checker_result_counts(run->check);
    guint64 value;
    memcpy(&value, counts + offset, sizeof value);
    return (double)value;
}

/* Acked sends' latency at a quantile in thousandths; 1000: the maximum. */
static double
produce_latency_ms(const MetricsRun *run, guint permille)
{
    KSIM_ASSERT(permille >= 1 && permille <= 1000);
    const StatsHistogram *histogram = checker_result_latency(run->check, CHECKER_LATENCY_ACKED);
    if (stats_histogram_count(histogram) == 0)
        return 0.0;
    if (permille == 1000)
        return (double)stats_histogram_max(histogram) / 1e6;
    return (double)stats_histogram_quantile(histogram, permille / 1000.0) / 1e6;
}

/* The share of one-second windows with a send outstanding that also hold an
 * acknowledgement (1: always available); 1 when nothing was sent. */
static double
availability(const MetricsRun *run, guint unused)
{
    (void)unused;
    double share = checker_result_stats(run->check)->availability;
    return share < 0 ? 1.0 : share;
}

enum { FAILOVER_LONGEST, FAILOVER_UNAVAILABLE, FAILOVER_OFFLINE_AT_END };

/* The longest controller failover (ms), or the partitions' summed
 * unavailability (s), from the history (failover.h). */
static double
failover_value(const MetricsRun *run, guint which)
{
    g_autoptr(FailoverResult) result = failover_run(checker_result_history(run->check));
    if (which == FAILOVER_LONGEST)
        return failover_result_longest_ms(result);
    if (which == FAILOVER_OFFLINE_AT_END)
        return failover_result_offline_at_end(result);
    return (double)failover_result_unavailable_ns(result) / 1e9;
}

/* ISR changes that shrank an ISR: each partition's ISR is the one its latest
 * election or ISR change named, as jmx.c's IsrShrinksPerSec reads them. */
static double
isr_shrinks(const MetricsRun *run, guint unused)
{
    (void)unused;
    const History *history = checker_result_history(run->check);
    const GArray *events = history_events(history);
    /* (topic, partition) -> 1 + the ISR's size; looked up only */
    g_autoptr(GHashTable) isr_of = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    guint shrinks = 0;
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if ((e->kind != HISTORY_EVENT_ELECTED && e->kind != HISTORY_EVENT_ISR_CHANGED) ||
            e->partition < 0)
            continue;
        const gint32 *members = NULL;
        guint size = e->isr == 0 ? 0 : history_isr_members(history, e->isr, &members);
        gint64 key = ((gint64)e->topic << 32) | (guint32)e->partition;
        guint before = GPOINTER_TO_UINT(g_hash_table_lookup(isr_of, &key));
        if (e->kind == HISTORY_EVENT_ISR_CHANGED && before > 0 && size + 1 < before)
            shrinks++;
        g_hash_table_replace(isr_of, g_memdup2(&key, sizeof key), GUINT_TO_POINTER(size + 1));
    }
    return (double)shrinks;
}

static double
consumer_anomaly(const MetricsRun *run, guint anomaly)
{
    KSIM_ASSERT(anomaly < CONSUMER_ANOMALY_COUNT);
    ConsumerCounts totals;
    checker_consumer_totals(run->consumers, &totals);
    return (double)totals.anomalies[anomaly];
}

/* A guint64 field of ConsumerCounts summed over the groups, by offset. */
static double
consumer_count(const MetricsRun *run, guint offset)
{
    KSIM_ASSERT(offset + sizeof(guint64) <= sizeof(ConsumerCounts));
    ConsumerCounts totals;
    checker_consumer_totals(run->consumers, &totals);
    guint64 value;
    memcpy(&value, (const char *)&totals + offset, sizeof value);
    return (double)value;
}

/* A nanosecond field of ConsumerCounts, by offset, in seconds. */
static double
consumer_ns_as_s(const MetricsRun *run, guint offset)
{
    return consumer_count(run, offset) / 1e9;
}

/* The same in milliseconds. */
static double
consumer_ns_as_ms(const MetricsRun *run, guint offset)
{
    return consumer_count(run, offset) / 1e6;
}

static double
consumer_groups(const MetricsRun *run, guint unused)
{
    (void)unused;
    return (double)checker_consumer_group_count(run->consumers);
}

/* Distinct acknowledged committed values processed, summed over the groups,
 * per acknowledged committed record: 1 when one group reads everything once,
 * N when N groups each do; 0 without such records. */
static double
consumed_fanout(const MetricsRun *run, guint unused)
{
    (void)unused;
    ConsumerCounts totals;
    checker_consumer_totals(run->consumers, &totals);
    const CheckerCounts *counts = checker_result_counts(run->check);
    if (counts->acked_committed == 0)
        return 0.0;
    return (double)totals.delivered / (double)counts->acked_committed;
}

/* End-to-end latency over every group at a quantile in thousandths. */
static double
e2e_latency_ms(const MetricsRun *run, guint permille)
{
    KSIM_ASSERT(permille >= 1 && permille < 1000);
    const StatsHistogram *histogram = checker_consumer_e2e_all(run->consumers);
    if (stats_histogram_count(histogram) == 0)
        return 0.0;
    return (double)stats_histogram_quantile(histogram, permille / 1000.0) / 1e6;
}

static double
txn_anomaly(const MetricsRun *run, guint anomaly)
{
    KSIM_ASSERT(anomaly < TXN_ANOMALY_COUNT);
    return (double)checker_txn_counts(run->txn)->anomalies[anomaly];
}

/* A guint64 field of TxnCounts, by offset. */
static double
txn_count(const MetricsRun *run, guint offset)
{
    KSIM_ASSERT(offset + sizeof(guint64) <= sizeof(TxnCounts));
    guint64 value;
    memcpy(&value, (const char *)checker_txn_counts(run->txn) + offset, sizeof value);
    return (double)value;
}

/* Every transaction anomaly, summed: the one metric that says exactly-once
 * broke, whichever way a run's timing broke it. */
static double
txn_anomalies(const MetricsRun *run, guint unused)
{
    (void)unused;
    return (double)checker_txn_anomaly_total(run->txn);
}

/* Transactions whose fate is unknown, and those that never ended. */
static double
txn_unknown(const MetricsRun *run, guint unused)
{
    (void)unused;
    const TxnCounts *c = checker_txn_counts(run->txn);
    return (double)(c->fates[TXN_FATE_UNKNOWN] + c->fates[TXN_FATE_UNENDED]);
}

enum { PIPELINE_INPUTS, PIPELINE_OUTPUTS };

/* Inputs or visible outputs, summed over the pipelines. */
static double
pipeline_sum(const MetricsRun *run, guint which)
{
    const GArray *pipelines = checker_txn_pipelines(run->txn);
    guint64 sum = 0;
    for (guint i = 0; i < pipelines->len; i++) {
        const TxnPipelineCounts *p = &g_array_index(pipelines, TxnPipelineCounts, i);
        sum += which == PIPELINE_INPUTS ? p->inputs : p->outputs_visible;
    }
    return (double)sum;
}

/* ---- The table ---- */

#define ANOMALY(fn, name_of, anomaly, doc)                                                         \
    {                                                                                              \
        NULL, name_of, fn, anomaly, doc                                                            \
    }
#define FIELD(name, fn, type, field, doc)                                                          \
    {                                                                                              \
        name, NULL, fn, G_STRUCT_OFFSET(type, field), doc                                          \
    }
#define VALUE(name, fn, arg, doc)                                                                  \
    {                                                                                              \
        name, NULL, fn, arg, doc                                                                   \
    }

/* In the order [expect] documentation lists them: the producer checker's,
 * then the consumers', then the transactions'. */
static const Metric METRICS[] = {
    ANOMALY(checker_anomaly, checker_name, CHECKER_LOST_WRITE,
            "acknowledged records in no committed log"),
    ANOMALY(checker_anomaly, checker_name, CHECKER_DUPLICATE,
            "values at more than one offset of the committed logs"),
    ANOMALY(checker_anomaly, checker_name, CHECKER_NONMONOTONIC_SEND,
            "committed records their producer sent before a record at a lower offset"),
    ANOMALY(checker_anomaly, checker_name, CHECKER_INCONSISTENT_OFFSETS,
            "replica records that differ from the committed log, and sends committed at "
            "another offset than the client was told"),
    ANOMALY(checker_anomaly, checker_name, CHECKER_FAILED_BUT_PRESENT,
            "sends the client was told failed whose value is committed"),
    FIELD("expired", checker_count, CheckerCounts, expired,
          "acknowledged records retention deleted after they were committed (not an anomaly)"),
    FIELD("leaderless", checker_count, CheckerCounts, leaderless,
          "acknowledged records a replica holds above the committed log's HW of a partition no "
          "online replica leads at the end: the next leader decides them (not an anomaly)"),
    FIELD("invariant_violations", checker_count, CheckerCounts, invariant_violations,
          "invariant breaches the cluster recorded"),
    FIELD("produce.attempted", checker_count, CheckerCounts, attempted, "sends invoked"),
    FIELD("produce.acked", checker_count, CheckerCounts, acked,
          "sends acknowledged, acks=0 sends included"),
    FIELD("produce.failed", checker_count, CheckerCounts, failed, "sends that failed"),
    FIELD("produce.unknown", checker_count, CheckerCounts, unknown,
          "sends whose outcome is unknown (an error such as a timeout, or no answer)"),
    VALUE("latency_ms.produce.p50", produce_latency_ms, 500,
          "median latency of acknowledged sends, ms"),
    VALUE("latency_ms.produce.p90", produce_latency_ms, 900,
          "90th percentile latency of acknowledged sends, ms"),
    VALUE("latency_ms.produce.p99", produce_latency_ms, 990,
          "99th percentile latency of acknowledged sends, ms"),
    VALUE("latency_ms.produce.p999", produce_latency_ms, 999,
          "99.9th percentile latency of acknowledged sends, ms"),
    VALUE("latency_ms.produce.max", produce_latency_ms, 1000,
          "the longest latency of an acknowledged send, ms"),
    VALUE("availability", availability, 0,
          "share of the one-second windows with a send outstanding that also hold an "
          "acknowledgement (1: always; 1 without sends)"),
    VALUE("controller_failover_ms", failover_value, FAILOVER_LONGEST,
          "the longest controller failover: from the controller's loss being noticed (its "
          "session ending; KRaft: a voter standing for election, or a broker's request to a "
          "single voter failing) to a new "
          "controller in charge and every partition that can be led led again, ms (0: none)"),
    VALUE("isr_shrinks", isr_shrinks, 0,
          "ISR changes that removed a replica from a partition's ISR, as its leader made them "
          "(Kafka's IsrShrinksPerSec, counted over the run)"),
    VALUE("unavailable_partition_s", failover_value, FAILOVER_UNAVAILABLE,
          "seconds without a leader serving produce, summed over the partitions"),
    VALUE("offline_partitions", failover_value, FAILOVER_OFFLINE_AT_END,
          "partitions the controller left offline (no eligible leader) at the end of the run; "
          "a run an expectation on it applies to is not judged by the liveness check"),
    ANOMALY(consumer_anomaly, consumer_name, CONSUMER_LOST_CONSUMPTION,
            "acknowledged committed records below a group's committed offset that no member "
            "processed, summed over the groups"),
    ANOMALY(consumer_anomaly, consumer_name, CONSUMER_DUPLICATE_CONSUMPTION,
            "values a group processed more than once, summed over the groups"),
    ANOMALY(consumer_anomaly, consumer_name, CONSUMER_POLL_SKIP,
            "polls that skipped a committed offset within one assignment, summed over the "
            "groups"),
    ANOMALY(consumer_anomaly, consumer_name, CONSUMER_NONMONOTONIC_POLL,
            "polls at or below an offset polled before within one assignment, summed over the "
            "groups"),
    ANOMALY(consumer_anomaly, consumer_name, CONSUMER_TRUNCATED_READ,
            "polls of a record the final log no longer holds at its offset (read, then "
            "truncated away), summed over the groups"),
    VALUE("consumer.groups", consumer_groups, 0, "consumer groups (by group.id)"),
    FIELD("consumed.processed", consumer_count, ConsumerCounts, processed,
          "records processed, summed over the groups"),
    FIELD("consumed.unique", consumer_count, ConsumerCounts, unique,
          "distinct values processed, summed over the groups"),
    VALUE("consumed.fanout", consumed_fanout, 0,
          "distinct acknowledged committed values processed, summed over the groups, per "
          "acknowledged committed record (0 without any)"),
    FIELD("consumer.commits_ok", consumer_count, ConsumerCounts, commits_ok,
          "offset commits that succeeded, summed over the groups"),
    FIELD("consumer.commits_failed", consumer_count, ConsumerCounts, commits_failed,
          "offset commits that failed, summed over the groups"),
    FIELD("consumer.commits_unknown", consumer_count, ConsumerCounts, commits_unknown,
          "offset commits whose outcome is unknown, summed over the groups"),
    FIELD("consumer.resets", consumer_count, ConsumerCounts, resets,
          "positions auto.offset.reset moved after OFFSET_OUT_OF_RANGE, summed over the groups"),
    FIELD("consumer.reset_skipped", consumer_count, ConsumerCounts, reset_skipped,
          "offsets resets caused by retention moved positions past (skipped by reset, not an "
          "anomaly), summed over the groups"),
    FIELD("consumer.reset_failures", consumer_count, ConsumerCounts, reset_failures,
          "out-of-range fetches auto.offset.reset=none raised to the application, stopping its "
          "poll loop, summed over the groups"),
    FIELD("consumer.revocations", consumer_count, ConsumerCounts, revocations,
          "partitions taken from members (REVOKE: a rebalance, a lost membership, a leave), "
          "summed over the groups"),
    FIELD("consumer.partition_pause_s", consumer_ns_as_s, ConsumerCounts, pause_ns_total,
          "seconds revoked partitions waited for their next owner's position, summed over the "
          "revocations of every group"),
    FIELD("consumer.partition_pause_ms.max", consumer_ns_as_ms, ConsumerCounts, pause_ns_max,
          "the longest wait of a revoked partition for its next owner's position, ms"),
    FIELD("consumer.member_idle_s", consumer_ns_as_s, ConsumerCounts, member_idle_ns_total,
          "seconds members spent without partitions between losing their last one and getting "
          "one again, summed over the members"),
    FIELD("consumer.member_idle_ms.max", consumer_ns_as_ms, ConsumerCounts, member_idle_ns_max,
          "the longest time a member spent without partitions between losing and regaining "
          "one, ms"),
    VALUE("latency_ms.e2e.p50", e2e_latency_ms, 500,
          "median time from a send to its first processing, over every group, ms"),
    VALUE("latency_ms.e2e.p99", e2e_latency_ms, 990,
          "99th percentile time from a send to its first processing, over every group, ms"),
    ANOMALY(txn_anomaly, txn_name, TXN_G1A,
            "read_committed polls of a write of an aborted transaction"),
    ANOMALY(txn_anomaly, txn_name, TXN_UNCOMMITTED_READ,
            "read_committed polls of a write not yet committed"),
    ANOMALY(txn_anomaly, txn_name, TXN_PARTIAL_COMMIT,
            "committed transactions only partly in the committed logs or partly seen"),
    ANOMALY(txn_anomaly, txn_name, TXN_ZOMBIE_WRITE,
            "visible writes of a producer fenced by a newer instance of its transactional.id"),
    ANOMALY(txn_anomaly, txn_name, TXN_INT_SEND_SKIP,
            "pairs of a transaction's sends to a partition with another record of their "
            "producer between them"),
    ANOMALY(txn_anomaly, txn_name, TXN_INT_NONMONOTONIC_SEND,
            "pairs of a transaction's consecutive sends to a partition committed in "
            "decreasing offsets"),
    ANOMALY(txn_anomaly, txn_name, TXN_PIPELINE_DUPLICATE,
            "pipeline inputs with more than one visible output"),
    ANOMALY(txn_anomaly, txn_name, TXN_PIPELINE_LOST,
            "pipeline inputs below the committed position with no output"),
    VALUE("txn.anomalies", txn_anomalies, 0,
          "the transaction anomalies above (G1a to pipeline_lost), summed"),
    FIELD("aborted_read_uncommitted", txn_count, TxnCounts, aborted_read_uncommitted,
          "read_uncommitted polls of writes of aborted or unended transactions (allowed)"),
    FIELD("txn.committed", txn_count, TxnCounts, fates[TXN_FATE_COMMITTED],
          "transactions committed"),
    FIELD("txn.aborted", txn_count, TxnCounts, fates[TXN_FATE_ABORTED], "transactions aborted"),
    VALUE("txn.unknown", txn_unknown, 0,
          "transactions whose fate is unknown, and those that never ended"),
    FIELD("txn.fenced_instances", txn_count, TxnCounts, fenced_instances,
          "producers fenced by a newer instance of their transactional.id"),
    FIELD("txn.resumed", txn_count, TxnCounts, resumed,
          "prepared transactions a new coordinator completed"),
    FIELD("txn.hanging", txn_count, TxnCounts, hanging,
          "partitions whose leader held an open transaction longer than "
          "transaction.max.timeout.ms at the end (hanging: the LSO stuck behind it)"),
    FIELD("txn.open_ms_max", txn_count, TxnCounts, open_ms_max,
          "the longest any leader's oldest open transaction had been open at the end, ms"),
    VALUE("pipeline.inputs", pipeline_sum, PIPELINE_INPUTS,
          "distinct values the pipelines consumed, summed over the pipelines"),
    VALUE("pipeline.outputs", pipeline_sum, PIPELINE_OUTPUTS,
          "visible outputs, summed over the pipelines"),
};

guint
metrics_count(void)
{
    return G_N_ELEMENTS(METRICS);
}

const Metric *
metrics_at(guint index)
{
    KSIM_ASSERT(index < G_N_ELEMENTS(METRICS));
    return &METRICS[index];
}

const char *
metrics_name(const Metric *metric)
{
    KSIM_ASSERT(metric != NULL);
    if (metric->name != NULL)
        return metric->name;
    KSIM_ASSERT(metric->name_fn != NULL);
    return metric->name_fn(metric->arg);
}

const char *
metrics_doc(const Metric *metric)
{
    KSIM_ASSERT(metric != NULL);
    return metric->doc;
}

const Metric *
metrics_find(const char *name)
{
    KSIM_ASSERT(name != NULL);
    for (guint i = 0; i < G_N_ELEMENTS(METRICS); i++) {
        if (strcmp(metrics_name(&METRICS[i]), name) == 0)
            return &METRICS[i];
    }
    return NULL;
}

double
metrics_value(const Metric *metric, const MetricsRun *run)
{
    KSIM_ASSERT(metric != NULL);
    KSIM_ASSERT(run != NULL);
    KSIM_ASSERT(run->check != NULL);
    KSIM_ASSERT(run->consumers != NULL);
    KSIM_ASSERT(run->txn != NULL);
    return metric->value_fn(run, metric->arg);
}

/* The number of rows that name anomaly `anomaly` by `name_fn`. */
static guint
anomaly_rows(MetricNameFn name_fn, guint anomaly)
{
    guint rows = 0;
    for (guint i = 0; i < G_N_ELEMENTS(METRICS); i++)
        rows +=
            METRICS[i].name == NULL && METRICS[i].name_fn == name_fn && METRICS[i].arg == anomaly;
    return rows;
}

void
metrics_check_invariants(void)
{
    for (guint i = 0; i < G_N_ELEMENTS(METRICS); i++) {
        const Metric *metric = &METRICS[i];
        KSIM_ASSERT((metric->name == NULL) == (metric->name_fn != NULL));
        KSIM_ASSERT(metric->value_fn != NULL);
        KSIM_ASSERT(metric->doc != NULL && metric->doc[0] != '\0');
        KSIM_ASSERT(metrics_find(metrics_name(metric)) == metric);
    }
    for (guint i = 0; i < G_N_ELEMENTS(METRICS); i++) {
        const Metric *metric = &METRICS[i];
        if (metric->name_fn == checker_name)
            KSIM_ASSERT(metric->value_fn == checker_anomaly);
        if (metric->name_fn == consumer_name)
            KSIM_ASSERT(metric->value_fn == consumer_anomaly);
        if (metric->name_fn == txn_name)
            KSIM_ASSERT(metric->value_fn == txn_anomaly);
    }
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        KSIM_ASSERT(anomaly_rows(checker_name, a) == 1);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        KSIM_ASSERT(anomaly_rows(consumer_name, a) == 1);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        KSIM_ASSERT(anomaly_rows(txn_name, a) == 1);
}
