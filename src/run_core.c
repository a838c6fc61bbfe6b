/* run_core: loading, running, checking and judging (see run_core.h). */
#include "run_core.h"

#include "metrics.h"
#include "outfile.h"
#include "sim_assert.h"

#include <string.h>

/* At most this many characters of a refused name are shown. */
#define NAME_SHOWN_MAX 80

/* The scenario's name becomes a directory (out/NAME, out/NAME-sweep), so a
 * name that is not one safe path component ("../../x", ".hidden", "a/b") is
 * refused, with the file and key, rather than changed into another name
 * behind the user's back. The message shows the name escaped and cut short,
 * as it may hold control characters or be very long. */
static gboolean
check_name(const Scenario *scenario, const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    if (outfile_name_check(scenario_name(scenario), &local))
        return TRUE;
    g_autofree char *escaped = g_strescape(scenario_name(scenario), NULL);
    if (g_utf8_strlen(escaped, -1) > NAME_SHOWN_MAX)
        g_utf8_offset_to_pointer(escaped, NAME_SHOWN_MAX)[0] = '\0';
    g_set_error(error, KSIM_SCENARIO_ERROR, KSIM_SCENARIO_ERROR_VALUE,
                "%s: [scenario] name: '%s' %s (it names the report's directory, out/NAME)", path,
                escaped, local->message);
    return FALSE;
}

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
    if (!check_name(scenario, path, error)) {
        scenario_free(scenario);
        return NULL;
    }
    return scenario;
}

static void
judge(const Scenario *scenario, RunOutcome *outcome)
{
    const GPtrArray *expects = scenario_expects(scenario);
    MetricsRun run = {outcome->check, outcome->consumers, outcome->txn};
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = g_ptr_array_index(expects, i);
        if (!scenario_expect_applies(expect, outcome->variant))
            continue;
        const Metric *metric = metrics_find(expect->metric);
        /* The parser accepts only the metrics of the table. */
        KSIM_ASSERT(metric != NULL);
        double measured = metrics_value(metric, &run);
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
run_core_variant(const Scenario *scenario, ScenarioVariant *variant, guint64 seed, FILE *trace_out)
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
    outcome->result = runner_run_healed(variant, seed, trace_out, &runner_checks,
                                        checks != NULL && checks->heal ? checks->heal_at_ns : -1);
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
