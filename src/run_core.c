/* run_core: loading, running, checking and judging (see run_core.h). */
#include "run_core.h"

#include "ksim_version.h"
#include "metrics.h"
#include "outfile.h"
#include "selfcheck.h"
#include "sim_assert.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

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

static Scenario *
finish_load(Scenario *scenario, const char *path, char **sets, GError **error)
{
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

Scenario *
run_core_load(const char *path, char **sets, GError **error)
{
    return finish_load(scenario_load(path, error), path, sets, error);
}

Scenario *
run_core_load_bytes(const char *text, gsize length, const char *display_name, char **sets,
                    GError **error)
{
    return finish_load(scenario_load_bytes(text, length, display_name, error), display_name,
                       sets, error);
}

static void
judge(const Scenario *scenario, RunOutcome *outcome)
{
    const GPtrArray *expects = scenario_expects(scenario);
    MetricsRun run = {outcome->check, outcome->consumers, outcome->txn};
    /* A scenario that expects partitions offline at the end (KIP-966's
     * unclean.recovery.strategy=None keeps them so) says how many with an
     * expectation on offline_partitions, which then judges liveness. */
    gboolean offline_expected = FALSE;
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = g_ptr_array_index(expects, i);
        if (!scenario_expect_applies(expect, outcome->variant))
            continue;
        if (strcmp(expect->metric, "offline_partitions") == 0)
            offline_expected = TRUE;
        const Metric *metric = metrics_find(expect->metric);
        /* The parser accepts only the metrics of the table. */
        KSIM_ASSERT(metric != NULL);
        double measured = metrics_value(metric, &run);
        if (!scenario_expect_holds(expect, measured))
            g_ptr_array_add(outcome->failed,
                            g_strdup_printf("%s: %s, but %s = %g", expect->name, expect->text,
                                            expect->metric, measured));
    }
    if (!outcome->result->converged && !offline_expected)
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
    runner_checks.trace_format = checks != NULL ? checks->trace_format : TRACE_FORMAT_JSONL;
    runner_checks.keep_diagrams = checks != NULL && checks->keep_diagrams;
    outcome->paranoid = runner_paranoid_wanted(variant, &runner_checks);
    /* The replay of a checked run checks too, so it stops where this one did. */
    g_autofree char *replay =
        run_core_replay_command(scenario, seed, checks != NULL ? checks->sets : NULL, variant);
    g_autofree char *replay_checked = g_strconcat(replay, " --paranoid", NULL);
    runner_checks.replay = outcome->paranoid ? replay_checked : replay;
    g_autofree char *mismatch = NULL;
    outcome->determinism_checked = checks != NULL && checks->check_determinism;
    if (outcome->determinism_checked)
        outcome->result =
            selfcheck_run(variant, seed, trace_out, &runner_checks, NULL, &mismatch);
    else
        outcome->result = runner_run_healed(variant, seed, trace_out, &runner_checks,
                                            checks != NULL && checks->heal ? checks->heal_at_ns
                                                                           : -1);
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
    if (mismatch != NULL)
        g_ptr_array_add(outcome->failed, g_strdup_printf("determinism: %s", mismatch));
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
    /* A scenario read from memory (a replay capsule's) has no path: its
     * name stands for the file. */
    g_autofree char *file = scenario_path(scenario) != NULL
                                ? g_strdup(scenario_path(scenario))
                                : g_strdup_printf("%s.ini", scenario_name(scenario));
    g_autofree char *path = g_shell_quote(file);
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

Capsule *
run_core_capsule(const Scenario *scenario, guint64 seed, char **sets, const GPtrArray *outcomes)
{
    Capsule *capsule = capsule_new(KSIM_VERSION, KSIM_GIT_COMMIT);
    capsule->command = run_core_replay_command(scenario, seed, sets, NULL);
    capsule->scenario_name = g_strdup(scenario_name(scenario));
    capsule->scenario_path = g_strdup(scenario_path(scenario));
    capsule->scenario_sha256 = g_strdup(scenario_sha256(scenario));
    capsule->scenario_text = g_strdup(scenario_text(scenario, NULL));
    capsule->seed = seed;
    for (guint i = 0; sets != NULL && sets[i] != NULL; i++)
        g_ptr_array_add(capsule->sets, g_strdup(sets[i]));
    for (guint i = 0; i < outcomes->len; i++) {
        const RunOutcome *outcome = g_ptr_array_index(outcomes, i);
        CapsuleRun *run =
            capsule_add_run(capsule, scenario_variant_label(outcome->variant), outcome->fingerprint);
        const GPtrArray *settings = scenario_variant_settings(outcome->variant);
        for (guint k = 0; k < settings->len; k++) {
            const ScenarioSetting *setting = g_ptr_array_index(settings, k);
            g_ptr_array_add(run->settings, g_strdup_printf("%s=%s", setting->key, setting->value));
        }
        for (guint k = 0; k < outcome->failed->len; k++)
            g_ptr_array_add(run->failed, g_strdup(g_ptr_array_index(outcome->failed, k)));
    }
    return capsule;
}

/* The capsule of a sweep's result line (cmd_sweep.c: {"seed", "runs": [{"label",
 * "fingerprint", "failed"}]}), its settings from the scenario's runs. */
static Capsule *
capsule_of_line(const Scenario *scenario, char **sets, guint64 seed, const char *line,
                GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, line, -1, error))
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    JsonArray *runs = root != NULL && JSON_NODE_HOLDS_OBJECT(root)
                          ? json_object_get_array_member(json_node_get_object(root), "runs")
                          : NULL;
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    if (runs == NULL || json_array_get_length(runs) != variants->len) {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO,
                    "seed %" G_GUINT64_FORMAT ": no capsule: its result names no runs", seed);
        return NULL;
    }
    g_autoptr(GPtrArray) outcomes = g_ptr_array_new();
    Capsule *capsule = run_core_capsule(scenario, seed, sets, outcomes);
    for (guint i = 0; i < variants->len; i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        const ScenarioVariant *variant = g_ptr_array_index(variants, i);
        CapsuleRun *added = capsule_add_run(capsule, scenario_variant_label(variant),
                                            json_object_get_string_member(run, "fingerprint"));
        const GPtrArray *settings = scenario_variant_settings(variant);
        for (guint k = 0; k < settings->len; k++) {
            const ScenarioSetting *setting = g_ptr_array_index(settings, k);
            g_ptr_array_add(added->settings,
                            g_strdup_printf("%s=%s", setting->key, setting->value));
        }
        JsonArray *failed = json_object_get_array_member(run, "failed");
        for (guint k = 0; failed != NULL && k < json_array_get_length(failed); k++)
            g_ptr_array_add(added->failed, g_strdup(json_array_get_string_element(failed, k)));
    }
    return capsule;
}

char *
run_core_write_seed_capsule(const Scenario *scenario, char **sets, guint64 seed,
                            const char *line, const char *dir, GError **error)
{
    g_autoptr(Capsule) capsule = capsule_of_line(scenario, sets, seed, line, error);
    if (capsule == NULL)
        return NULL;
    g_autofree char *name = g_strdup_printf("seed-%" G_GUINT64_FORMAT, seed);
    g_autofree char *seed_dir = g_build_filename(dir, name, NULL);
    if (g_mkdir_with_parents(seed_dir, 0777) != 0) {
        int saved = errno;
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO, "%s: cannot create: %s",
                    seed_dir, g_strerror(saved));
        return NULL;
    }
    char *path = g_build_filename(seed_dir, "capsule.json", NULL);
    g_autofree char *json = capsule_to_json(capsule);
    if (!outfile_write(path, json, strlen(json), error)) {
        g_free(path);
        return NULL;
    }
    return path;
}
