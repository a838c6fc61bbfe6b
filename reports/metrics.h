/*
 * metrics: the numbers of one run that a scenario's [expect] lines can test,
 * in one table: each metric's name, a one-line description, and how its value
 * is taken from the run's checked results.
 *
 * The scenario parser accepts exactly these names (src/harness/scenario),
 * and `ksim run` and `ksim sweep` judge expectations with metrics_value
 * (src/run_core). The anomaly metrics are named by their checkers
 * (checker_anomaly_name, checker_consumer_anomaly_name,
 * checker_txn_anomaly_name), which are also the names summary.json uses, so
 * every anomaly a checker counts is a metric under the name the run summary
 * shows it; metrics_check_invariants fails when a checker gains an anomaly
 * the table lacks.
 *
 * The table lives here, beside the checkers, because every value is read
 * from their results alone, and because both floors that need it can reach
 * reports/: the harness below the command line, and the command line itself.
 */
#ifndef METRICS_H
#define METRICS_H

#include <glib.h>

#include "checker.h"
#include "checker_consumer.h"
#include "checker_txn.h"

/* The checked results of one run (all borrowed, none NULL). */
typedef struct {
    const CheckerResult *check;
    const ConsumerCheck *consumers;
    const TxnCheck *txn;
} MetricsRun;

/* One row of the table. */
typedef struct Metric Metric;

/* The number of metrics, and the index-th, in the order of the table. */
guint metrics_count(void);
const Metric *metrics_at(guint index);

/* The metric called `name`, or NULL when there is none. */
const Metric *metrics_find(const char *name);

/* Its name, as [expect] and summary.json write it, and what it counts.
 * (transfer none) */
const char *metrics_name(const Metric *metric);
const char *metrics_doc(const Metric *metric);

/* Its value for one run. Counts are whole numbers; latencies are in ms and 0
 * when nothing was measured. */
double metrics_value(const Metric *metric, const MetricsRun *run);

/* Checks the table: every row named and described, no name twice, and every
 * anomaly of the three checkers a metric exactly once. */
void metrics_check_invariants(void);

#endif
