/* Tests of reports/metrics: the table names every anomaly of the three
 * checkers once and each metric of [expect] once, and each value is the
 * checked result it stands for, on a real run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "metrics.h"
#include "runner.h"
#include "scenario.h"

/* Every anomaly a checker counts is a metric under the checker's name (the
 * name summary.json shows), described, and found by that name. */
static void
test_metrics_table_names_every_anomaly(void **state)
{
    (void)state;
    metrics_check_invariants();
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        assert_non_null(metrics_find(checker_anomaly_name(a)));
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        assert_non_null(metrics_find(checker_consumer_anomaly_name(a)));
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        assert_non_null(metrics_find(checker_txn_anomaly_name(a)));
    const Metric *failed = metrics_find("failed_but_present");
    assert_non_null(failed);
    assert_string_equal(metrics_name(failed), "failed_but_present");
    assert_true(strlen(metrics_doc(failed)) > 0);
    assert_null(metrics_find("lost_writes"));
    assert_null(metrics_find(""));
    for (guint i = 0; i < metrics_count(); i++) {
        const Metric *metric = metrics_at(i);
        assert_ptr_equal(metrics_find(metrics_name(metric)), metric);
        assert_null(strchr(metrics_doc(metric), '\n'));
    }
}

static const char SCENARIO_TEXT[] = "[scenario]\n"
                                    "duration = 10s\n"
                                    "quiet = 2s\n"
                                    "[topic t]\n"
                                    "partitions = 2\n"
                                    "replication.factor = 3\n"
                                    "[producer p]\n"
                                    "workload.rate = 200\n"
                                    "[consumer-group g]\n"
                                    "topics = t\n"
                                    "members = 2\n"
                                    "auto.offset.reset = earliest\n";

/* A scenario's first run at seed 1, checked: what [expect] measures. */
typedef struct {
    RunnerResult *result;
    CheckerResult *check;
    ConsumerCheck *consumers;
    TxnCheck *txn;
    MetricsRun run;
} CheckedRun;

static void
checked_run(Scenario *scenario, CheckedRun *out)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    out->result = runner_run(variants->pdata[0], 1, NULL);
    out->check = checker_run(out->result->history, NULL);
    out->consumers = checker_consumer_run(out->result->history, out->check, NULL);
    out->txn = checker_txn_run(out->result->history, out->check, NULL);
    out->run = (MetricsRun){out->check, out->consumers, out->txn};
}

static void
checked_run_clear(CheckedRun *checked)
{
    checker_txn_free(checked->txn);
    checker_consumer_free(checked->consumers);
    checker_result_free(checked->check);
    runner_result_free(checked->result);
}

/* Each metric's value on a real run is the checked count it names. */
static void
test_metrics_values_are_the_checked_results(void **state)
{
    (void)state;
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(SCENARIO_TEXT, "t.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    CheckedRun checked;
    checked_run(scenario, &checked);
    const MetricsRun run = checked.run;
    const CheckerCounts *counts = checker_result_counts(checked.check);
    ConsumerCounts totals;
    checker_consumer_totals(checked.consumers, &totals);
    const struct {
        const char *name;
        double expected;
    } cases[] = {
        {"lost_write", (double)counts->anomalies[CHECKER_LOST_WRITE]},
        {"failed_but_present", (double)counts->anomalies[CHECKER_FAILED_BUT_PRESENT]},
        {"produce.attempted", (double)counts->attempted},
        {"produce.acked", (double)counts->acked},
        {"produce.failed", (double)counts->failed},
        {"produce.unknown", (double)counts->unknown},
        {"invariant_violations", (double)counts->invariant_violations},
        {"consumer.groups", 1.0},
        {"consumed.processed", (double)totals.processed},
        {"consumed.unique", (double)totals.unique},
        {"consumer.commits_ok", (double)totals.commits_ok},
        {"duplicate_consumption", (double)totals.anomalies[CONSUMER_DUPLICATE_CONSUMPTION]},
        {"txn.committed", 0.0},
        {"pipeline.inputs", 0.0},
    };
    assert_true(counts->acked > 0);
    assert_true(totals.processed > 0);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        double value = metrics_value(metrics_find(cases[i].name), &run);
        if (value != cases[i].expected)
            fail_msg("%s = %g, expected %g", cases[i].name, value, cases[i].expected);
    }
    double p50 = metrics_value(metrics_find("latency_ms.produce.p50"), &run);
    double p99 = metrics_value(metrics_find("latency_ms.produce.p99"), &run);
    double max = metrics_value(metrics_find("latency_ms.produce.max"), &run);
    assert_true(p50 > 0.0);
    assert_true(p50 <= p99);
    assert_true(p99 <= max);
    for (guint i = 0; i < metrics_count(); i++) {
        double value = metrics_value(metrics_at(i), &run);
        if (!isfinite(value) || value < 0.0)
            fail_msg("%s = %g", metrics_name(metrics_at(i)), value);
    }
    checked_run_clear(&checked);
}

/* txn.anomalies is the sum of the transaction anomalies, on a run that has
 * more than one kind: late-transaction-requests' first run (transaction
 * version 0, no verification; seed 1 shows G1a, an uncommitted read and a
 * partial commit). */
static void
test_metrics_txn_anomalies_sums_the_transaction_anomalies(void **state)
{
    (void)state;
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario =
        scenario_load(KSIM_SOURCE_DIR "/scenarios/late-transaction-requests.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    CheckedRun checked;
    checked_run(scenario, &checked);
    const MetricsRun run = checked.run;
    double sum = 0.0;
    guint kinds = 0;
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        double value =
            metrics_value(metrics_find(checker_txn_anomaly_name((TxnAnomaly)a)), &run);
        sum += value;
        kinds += value > 0.0;
    }
    assert_true(kinds >= 2);
    assert_true(metrics_value(metrics_find("txn.anomalies"), &run) == sum);
    checked_run_clear(&checked);
}

static void
isr_event(History *history, HistoryEventKind kind, gint32 partition, const gint32 *isr, guint n)
{
    HistoryEvent event = {0};
    event.time_ns = (gint64)history_events(history)->len * 1000;
    event.kind = kind;
    event.broker = isr[0];
    event.topic = history_topic(history, "t");
    event.partition = partition;
    event.isr = history_isr_intern(history, isr, n);
    history_event(history, &event);
}

/* isr_shrinks counts the ISR changes that left a partition a smaller ISR
 * than its latest election or ISR change named: not an expansion, not an
 * election to a smaller ISR, not a change of members at one size, and not a
 * partition's first change when no election came before it. */
static void
test_metrics_isr_shrinks_counts_the_changes_that_shrank(void **state)
{
    (void)state;
    g_autoptr(History) history = history_new();
    const gint32 all[] = {1, 2, 3}, two[] = {1, 2}, other[] = {1, 3}, one[] = {1};
    isr_event(history, HISTORY_EVENT_ELECTED, 0, all, 3);
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 0, two, 2);   /* shrink */
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 0, other, 2); /* same size */
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 0, all, 3);   /* expand */
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 0, one, 1);   /* shrink */
    isr_event(history, HISTORY_EVENT_ELECTED, 0, one, 1);
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 1, two, 2);   /* no ISR known before */
    isr_event(history, HISTORY_EVENT_ISR_CHANGED, 1, one, 1);   /* shrink */
    isr_event(history, HISTORY_EVENT_ELECTED, 2, all, 3);
    isr_event(history, HISTORY_EVENT_ELECTED, 2, two, 2);       /* an election, not a change */
    g_autoptr(CheckerResult) check = checker_run(history, NULL);
    ConsumerCheck *consumers = checker_consumer_run(history, check, NULL);
    TxnCheck *txn = checker_txn_run(history, check, NULL);
    MetricsRun run = {check, consumers, txn};
    assert_int_equal((int)metrics_value(metrics_find("isr_shrinks"), &run), 3);
    checker_txn_free(txn);
    checker_consumer_free(consumers);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_table_names_every_anomaly),
        cmocka_unit_test(test_metrics_values_are_the_checked_results),
        cmocka_unit_test(test_metrics_isr_shrinks_counts_the_changes_that_shrank),
        cmocka_unit_test(test_metrics_txn_anomalies_sums_the_transaction_anomalies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
