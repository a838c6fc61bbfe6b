/* run_core: loading, running, checking and judging (see run_core.h). */
#include "run_core.h"

#include "sim_assert.h"
#include "stats.h"

#include <string.h>

Scenario *
run_core_load(const char *path, char **sets, GError **error)
{
    Scenario *scenario = scenario_load(path, error);
    if (scenario == NULL)
        return NULL;
    for (guint i = 0; sets != NULL && sets[i] != NULL; i++) {
        if (!scenario_apply_set(scenario, sets[i], error)) {
            scenario_free(scenario);
            return NULL;
        }
    }
    return scenario;
}

static double
latency_ms(const CheckerResult *check, double quantile)
{
    const StatsHistogram *histogram = checker_result_latency(check, CHECKER_LATENCY_ACKED);
    if (stats_histogram_count(histogram) == 0)
        return 0.0;
    if (quantile >= 1.0)
        return (double)stats_histogram_max(histogram) / 1e6;
    return (double)stats_histogram_quantile(histogram, quantile) / 1e6;
}

static double
e2e_ms(const RunOutcome *outcome, double quantile)
{
    const StatsHistogram *histogram = checker_consumer_e2e_all(outcome->consumers);
    if (stats_histogram_count(histogram) == 0)
        return 0.0;
    return (double)stats_histogram_quantile(histogram, quantile) / 1e6;
}

/* TRUE and *out set when `metric` is one of the consumer metrics. */
static gboolean
consumer_metric(const RunOutcome *outcome, const char *metric, double *out)
{
    ConsumerCounts totals;
    checker_consumer_totals(outcome->consumers, &totals);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
        if (strcmp(metric, checker_consumer_anomaly_name(a)) == 0) {
            *out = (double)totals.anomalies[a];
            return TRUE;
        }
    }
    const CheckerCounts *counts = checker_result_counts(outcome->check);
    const struct {
        const char *name;
        double value;
    } values[] = {
        {"consumer.groups", (double)checker_consumer_group_count(outcome->consumers)},
        {"consumed.processed", (double)totals.processed},
        {"consumed.unique", (double)totals.unique},
        {"consumed.fanout", counts->acked_committed > 0
                                ? (double)totals.delivered / (double)counts->acked_committed
                                : 0.0},
        {"consumer.commits_ok", (double)totals.commits_ok},
        {"consumer.commits_failed", (double)totals.commits_failed},
        {"consumer.commits_unknown", (double)totals.commits_unknown},
        {"latency_ms.e2e.p50", e2e_ms(outcome, 0.5)},
        {"latency_ms.e2e.p99", e2e_ms(outcome, 0.99)},
    };
    for (guint i = 0; i < G_N_ELEMENTS(values); i++) {
        if (strcmp(metric, values[i].name) == 0) {
            *out = values[i].value;
            return TRUE;
        }
    }
    return FALSE;
}

/* TRUE and *out set when `metric` is one of the transaction metrics. */
static gboolean
txn_metric(const RunOutcome *outcome, const char *metric, double *out)
{
    const TxnCounts *c = checker_txn_counts(outcome->txn);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        if (strcmp(metric, checker_txn_anomaly_name(a)) == 0) {
            *out = (double)c->anomalies[a];
            return TRUE;
        }
    }
    const GArray *pipelines = checker_txn_pipelines(outcome->txn);
    guint64 inputs = 0, outputs = 0;
    for (guint i = 0; i < pipelines->len; i++) {
        inputs += g_array_index(pipelines, TxnPipelineCounts, i).inputs;
        outputs += g_array_index(pipelines, TxnPipelineCounts, i).outputs_visible;
    }
    const struct {
        const char *name;
        double value;
    } values[] = {
        {"aborted_read_uncommitted", (double)c->aborted_read_uncommitted},
        {"txn.committed", (double)c->fates[TXN_FATE_COMMITTED]},
        {"txn.aborted", (double)c->fates[TXN_FATE_ABORTED]},
        {"txn.unknown", (double)(c->fates[TXN_FATE_UNKNOWN] + c->fates[TXN_FATE_UNENDED])},
        {"txn.fenced_instances", (double)c->fenced_instances},
        {"txn.resumed", (double)c->resumed},
        {"pipeline.inputs", (double)inputs},
        {"pipeline.outputs", (double)outputs},
    };
    for (guint i = 0; i < G_N_ELEMENTS(values); i++) {
        if (strcmp(metric, values[i].name) == 0) {
            *out = values[i].value;
            return TRUE;
        }
    }
    return FALSE;
}

double
run_core_metric(const RunOutcome *outcome, const char *metric)
{
    const CheckerCounts *counts = checker_result_counts(outcome->check);
    static const struct {
        const char *name;
        CheckerAnomaly anomaly;
    } anomalies[] = {
        {"lost_write", CHECKER_LOST_WRITE},
        {"duplicate", CHECKER_DUPLICATE},
        {"nonmonotonic_send", CHECKER_NONMONOTONIC_SEND},
        {"inconsistent_offsets", CHECKER_INCONSISTENT_OFFSETS},
        {"failed_but_present", CHECKER_FAILED_BUT_PRESENT},
    };
    for (guint i = 0; i < G_N_ELEMENTS(anomalies); i++) {
        if (strcmp(metric, anomalies[i].name) == 0)
            return (double)counts->anomalies[anomalies[i].anomaly];
    }
    static const struct {
        const char *name;
        double quantile;
    } latencies[] = {
        {"latency_ms.produce.p50", 0.5},   {"latency_ms.produce.p90", 0.9},
        {"latency_ms.produce.p99", 0.99},  {"latency_ms.produce.p999", 0.999},
        {"latency_ms.produce.max", 1.0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(latencies); i++) {
        if (strcmp(metric, latencies[i].name) == 0)
            return latency_ms(outcome->check, latencies[i].quantile);
    }
    double consumer = 0.0;
    if (consumer_metric(outcome, metric, &consumer))
        return consumer;
    double txn = 0.0;
    if (txn_metric(outcome, metric, &txn))
        return txn;
    if (strcmp(metric, "invariant_violations") == 0)
        return (double)counts->invariant_violations;
    if (strcmp(metric, "produce.attempted") == 0)
        return (double)counts->attempted;
    if (strcmp(metric, "produce.acked") == 0)
        return (double)counts->acked;
    if (strcmp(metric, "produce.failed") == 0)
        return (double)counts->failed;
    if (strcmp(metric, "produce.unknown") == 0)
        return (double)counts->unknown;
    /* The parser accepts only the metrics above. */
    KSIM_ASSERT(!"a metric the scenario parser accepts but run_core does not know");
    return 0.0;
}

static void
judge(const Scenario *scenario, RunOutcome *outcome)
{
    const GPtrArray *expects = scenario_expects(scenario);
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = g_ptr_array_index(expects, i);
        if (!scenario_expect_applies(expect, outcome->variant))
            continue;
        double measured = run_core_metric(outcome, expect->metric);
        if (!scenario_expect_holds(expect, measured))
            g_ptr_array_add(outcome->failed,
                            g_strdup_printf("%s: %s, but %s = %g", expect->name, expect->text,
                                            expect->metric, measured));
    }
    if (!outcome->result->converged)
        g_ptr_array_add(outcome->failed,
                        g_strdup_printf("liveness: after every fault healed and the quiet period, "
                                        "%s",
                                        outcome->result->unconverged));
}

RunOutcome *
run_core_variant(const Scenario *scenario, ScenarioVariant *variant, guint64 seed,
                 FILE *trace_out)
{
    return run_core_variant_checked(scenario, variant, seed, trace_out, NULL);
}

RunOutcome *
run_core_variant_checked(const Scenario *scenario, ScenarioVariant *variant, guint64 seed,
                         FILE *trace_out, const RunCoreChecks *checks)
{
    RunOutcome *outcome = g_new0(RunOutcome, 1);
    outcome->variant = variant;
    outcome->failed = g_ptr_array_new_with_free_func(g_free);
    gint64 start = g_get_monotonic_time();
    RunnerChecks runner_checks = {0};
    runner_checks.paranoid = checks != NULL && checks->paranoid;
    outcome->paranoid = runner_paranoid_wanted(variant, &runner_checks);
    /* The replay of a checked run checks too, so it stops where this one did. */
    g_autofree char *replay =
        run_core_replay_command(scenario, seed, checks != NULL ? checks->sets : NULL, variant);
    g_autofree char *replay_checked = g_strconcat(replay, " --paranoid", NULL);
    runner_checks.replay = outcome->paranoid ? replay_checked : replay;
    outcome->result = runner_run_checked(variant, seed, trace_out, &runner_checks);
    CheckerOptions options;
    checker_options_init(&options);
    options.last_heal_ns = outcome->result->last_heal_ns;
    outcome->check = checker_run(outcome->result->history, &options);
    outcome->consumers = checker_consumer_run(outcome->result->history, outcome->check, &options);
    outcome->txn = checker_txn_run(outcome->result->history, outcome->check, &options);
    outcome->wall_s = (double)(g_get_monotonic_time() - start) / 1e6;
    g_snprintf(outcome->fingerprint, sizeof outcome->fingerprint, "%016" G_GINT64_MODIFIER "x",
               outcome->result->fingerprint);
    judge(scenario, outcome);
    return outcome;
}

void
run_outcome_free(RunOutcome *outcome)
{
    if (outcome == NULL)
        return;
    checker_consumer_free(outcome->consumers);
    checker_txn_free(outcome->txn);
    checker_result_free(outcome->check);
    runner_result_free(outcome->result);
    scenario_variant_free(outcome->variant);
    g_ptr_array_free(outcome->failed, TRUE);
    g_free(outcome);
}

char *
run_core_replay_command(const Scenario *scenario, guint64 seed, char **sets,
                        const ScenarioVariant *variant)
{
    GString *command = g_string_new("ksim run ");
    g_autofree char *path = g_shell_quote(scenario_path(scenario));
    g_string_append_printf(command, "%s --seed %" G_GUINT64_FORMAT, path, seed);
    for (guint i = 0; sets != NULL && sets[i] != NULL; i++) {
        g_autofree char *quoted = g_shell_quote(sets[i]);
        g_string_append_printf(command, " --set %s", quoted);
    }
    const GPtrArray *settings = variant != NULL ? scenario_variant_settings(variant) : NULL;
    for (guint i = 0; settings != NULL && i < settings->len; i++) {
        const ScenarioSetting *setting = g_ptr_array_index(settings, i);
        g_autofree char *assignment = g_strdup_printf("%s=%s", setting->key, setting->value);
        if (sets != NULL && g_strv_contains((const char *const *)sets, assignment))
            continue; /* the user's --set already says it */
        g_autofree char *quoted = g_shell_quote(assignment);
        g_string_append_printf(command, " --set %s", quoted);
    }
    return g_string_free(command, FALSE);
}
