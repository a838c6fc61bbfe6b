/*
 * `ksim run SCENARIO [--seed N] [--out DIR] [--set KEY=VALUE ...] [--trace]
 *  [--paranoid] [--check] [--force]`: runs every variant of a scenario with one
 * seed (unless a run's estimated size is over run_estimate's limits and
 * --force is not given; --check only validates, as `ksim check`), prints the
 * settings first, then a compact result table and where the report is. With
 * --paranoid (or the scenario's `paranoid = true`) every module's invariants
 * are checked after every event (runner_paranoid.h). Exit status: 0 when
 * every expectation holds, 1 when one fails, 2 on bad input, 3
 * (RUNNER_EXIT_INVARIANT) when a check found an invariant violated.
 */
#include "commands.h"

#include "ksim_version.h"
#include "report.h"
#include "run_core.h"
#include "run_estimate.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char *seed_text;
    gint64 seed;
    gboolean seed_set;
    char *out_dir;
    char **sets;
    gboolean trace;
    gboolean paranoid;
    gboolean check; /* --check: only what `ksim check` does */
    gboolean force; /* --force: run even over the size estimate's limits */
    char **rest;
} RunOptions;

/* A seed as the scenario's `seed` key takes it: a decimal integer from 0 to
 * G_MAXINT64, without a sign or white space, refused rather than wrapped. */
static gboolean
parse_seed(const char *value, RunOptions *options, GError **error)
{
    guint64 seed = 0;
    if (!g_ascii_string_to_unsigned(value, 10, 0, G_MAXINT64, &seed, NULL)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--seed: '%s' is not a non-negative integer up to %" G_GINT64_FORMAT, value,
                    G_MAXINT64);
        return FALSE;
    }
    options->seed = (gint64)seed;
    options->seed_set = TRUE;
    return TRUE;
}

static gboolean
parse_run_options(int *argc, char ***argv, RunOptions *options)
{
    GOptionEntry entries[] = {
        {"seed", 0, 0, G_OPTION_ARG_STRING, &options->seed_text,
         "the run's seed (default: the scenario's)", "N"},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &options->out_dir,
         "where the report goes (default: out/NAME)", "DIR"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &options->sets,
         "override a scenario key, e.g. --set acks=1 or --set 'topic orders:min.insync.replicas=2'",
         "KEY=VALUE"},
        {"trace", 0, 0, G_OPTION_ARG_NONE, &options->trace,
         "also write the full trace of each run as JSON Lines", NULL},
        {"paranoid", 0, 0, G_OPTION_ARG_NONE, &options->paranoid,
         "check every invariant after every event; a violation stops the run (exit status 3)",
         NULL},
        {"check", 0, 0, G_OPTION_ARG_NONE, &options->check,
         "validate the scenario and list its runs without running them (as ksim check)", NULL},
        {"force", 0, 0, G_OPTION_ARG_NONE, &options->force,
         "run even when a run's estimated memory or events are over the limits", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->rest, NULL,
         "SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new("SCENARIO - run a scenario file");
    GOptionGroup *group = g_option_group_new("run", "run options", "run options", options, NULL);
    g_option_group_add_entries(group, entries);
    g_option_context_set_main_group(context, group);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error) &&
                  (options->seed_text == NULL || parse_seed(options->seed_text, options, &error));
    if (!ok)
        fprintf(stderr, "ksim run: %s\n", error->message);
    else if (options->rest == NULL || options->rest[0] == NULL || options->rest[1] != NULL) {
        fprintf(stderr, "ksim run: give exactly one scenario file (see 'ksim run --help')\n");
        ok = FALSE;
    }
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

static void
print_banner(const Scenario *scenario, guint64 seed, const RunOptions *options, guint n_runs)
{
    printf("ksim %s (commit %s)\n", KSIM_VERSION, KSIM_GIT_COMMIT);
    printf("scenario  %s (%s)\n", scenario_name(scenario), scenario_path(scenario));
    printf("sha256    %s\n", scenario_sha256(scenario));
    printf("seed      %" G_GUINT64_FORMAT "\n", seed);
    for (guint i = 0; options->sets != NULL && options->sets[i] != NULL; i++)
        printf("set       %s\n", options->sets[i]);
    if (options->paranoid)
        printf("checks    every invariant after every event (--paranoid)\n");
    printf("runs      %u\n", n_runs);
    fflush(stdout);
}

/* The trace of run `index`, written into the report's directory with the
 * rest of the report. */
static OutFile *
open_trace(OutDir *dir, guint index, GError **error)
{
    g_autofree char *name = g_strdup_printf("trace-%u.jsonl", index + 1);
    return outfile_dir_file_open(dir, name, error);
}

/* Fills a report run from an outcome; the arrays are freed by the caller. */
static void
fill_report_run(ReportRun *run, const RunOutcome *outcome, GArray *settings, GArray *windows)
{
    report_run_init(run);
    const GPtrArray *scenario_settings = scenario_variant_settings(outcome->variant);
    for (guint i = 0; i < scenario_settings->len; i++) {
        const ScenarioSetting *s = g_ptr_array_index(scenario_settings, i);
        ReportSetting setting = {s->key, s->value};
        g_array_append_val(settings, setting);
    }
    const GArray *fault_windows = outcome->result->fault_windows;
    for (guint i = 0; i < fault_windows->len; i++) {
        const RunnerFaultWindow *w = &g_array_index(fault_windows, RunnerFaultWindow, i);
        ReportWindow window = {w->start_ns, w->end_ns, w->label};
        g_array_append_val(windows, window);
    }
    run->label = outcome->result->label;
    run->settings = (const ReportSetting *)settings->data;
    run->settings_len = settings->len;
    run->fingerprint = outcome->fingerprint;
    run->virtual_s = (double)outcome->result->virtual_ns / 1e9;
    run->wall_s = outcome->wall_s;
    run->events = outcome->result->events;
    run->history = outcome->result->history;
    run->result = outcome->check;
    run->consumers = outcome->consumers;
    run->txn = outcome->txn;
    run->last_heal_ns = outcome->result->last_heal_ns;
    run->windows = (const ReportWindow *)windows->data;
    run->windows_len = windows->len;
    g_ptr_array_add(outcome->failed, NULL); /* NULL-terminate for the report */
    run->expectations_failed = (const char *const *)outcome->failed->pdata;
    g_ptr_array_set_size(outcome->failed, outcome->failed->len - 1);
}

/* The marks the run reached, in table order; `marks` is freed by the caller. */
static void
fill_report_marks(ReportRun *run, const RunOutcome *outcome, GArray *marks)
{
    for (guint m = 0; m < SIM_MARKS_COUNT; m++) {
        ReportMark mark = {sim_marks_name((SimMarkId)m), outcome->result->marks.hits[m]};
        if (mark.hits > 0)
            g_array_append_val(marks, mark);
    }
    run->marks = (const ReportMark *)marks->data;
    run->marks_len = marks->len;
}

/* Writes the report into `dir` and renames it into place; takes `dir`. */
static int
write_report(const Scenario *scenario, guint64 seed, GPtrArray *outcomes, OutDir *dir)
{
    g_autofree char *out_dir = g_strdup(outfile_dir_target(dir));
    guint n = outcomes->len;
    g_autofree ReportRun *runs = g_new0(ReportRun, n);
    g_autoptr(GPtrArray) arrays = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint i = 0; i < n; i++) {
        GArray *settings = g_array_new(FALSE, FALSE, sizeof(ReportSetting));
        GArray *windows = g_array_new(FALSE, FALSE, sizeof(ReportWindow));
        g_ptr_array_add(arrays, settings);
        g_ptr_array_add(arrays, windows);
        fill_report_run(&runs[i], g_ptr_array_index(outcomes, i), settings, windows);
        GArray *marks = g_array_new(FALSE, FALSE, sizeof(ReportMark));
        g_ptr_array_add(arrays, marks);
        fill_report_marks(&runs[i], g_ptr_array_index(outcomes, i), marks);
    }
    ReportInput input = {KSIM_VERSION, KSIM_GIT_COMMIT, scenario_name(scenario),
                         scenario_sha256(scenario), seed, runs, n};
    printf("\n");
    report_print_table(stdout, &input);
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    gboolean written = report_write_into(&input, dir, warnings, &error);
    if (!written)
        outfile_dir_abort(dir);
    if (!written || !outfile_dir_commit(dir, &error)) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "ksim run: warning: %s\n", (char *)g_ptr_array_index(warnings, i));
    printf("\nreport    %s/report.html (also report.md, summary.json)\n", out_dir);
    return 0;
}

static gboolean
print_verdicts(const Scenario *scenario, guint64 seed, GPtrArray *outcomes, char **sets)
{
    gboolean passed = TRUE;
    for (guint i = 0; i < outcomes->len; i++) {
        const RunOutcome *outcome = g_ptr_array_index(outcomes, i);
        if (outcome->failed->len == 0)
            continue;
        if (passed)
            printf("\nexpectations failed:\n");
        passed = FALSE;
        for (guint k = 0; k < outcome->failed->len; k++)
            printf("  [%s] %s\n", outcome->result->label,
                   (char *)g_ptr_array_index(outcome->failed, k));
        g_autofree char *replay =
            run_core_replay_command(scenario, seed, sets, outcome->variant);
        printf("  replay: %s\n", replay);
    }
    if (passed && scenario_expects(scenario)->len > 0)
        printf("\nexpectations: all %u hold\n", scenario_expects(scenario)->len);
    return passed;
}

static int run_scenario(RunOptions *options);

static void
options_clear(RunOptions *options)
{
    g_free(options->out_dir);
    g_free(options->seed_text);
    g_strfreev(options->sets);
    g_strfreev(options->rest);
}

int
cmd_run(int argc, char **argv)
{
    RunOptions options = {0};
    int status = 2;
    if (parse_run_options(&argc, &argv, &options))
        status = options.check ? cmd_check_scenario(options.rest[0], options.sets, options.force,
                                                    "ksim run")
                               : run_scenario(&options);
    options_clear(&options);
    return status;
}

static int
run_scenario(RunOptions *options_in)
{
    RunOptions options = *options_in;
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(options.rest[0], options.sets, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    if (!options.force && !run_estimate_check(scenario, options.rest[0], &error)) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    guint64 seed = options.seed_set ? (guint64)options.seed : scenario_seed(scenario);
    g_autofree char *out_dir = options.out_dir != NULL
                                   ? g_strdup(options.out_dir)
                                   : g_strdup_printf("out/%s", scenario_name(scenario));
    /* The report's directory is opened before the first run, so a place
     * that cannot be written is found now, not after the simulation. */
    g_autoptr(OutDir) dir = outfile_dir_open(out_dir, REPORT_MARKER, &error);
    if (dir == NULL) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    print_banner(scenario, seed, &options, variants->len);
    g_autoptr(GPtrArray) outcomes =
        g_ptr_array_new_with_free_func((GDestroyNotify)run_outcome_free);
    guint n_runs = variants->len;
    for (guint i = 0; i < n_runs; i++) {
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, 0);
        OutFile *trace = options.trace ? open_trace(dir, i, &error) : NULL;
        if (options.trace && trace == NULL) {
            fprintf(stderr, "ksim run: %s\n", error->message);
            g_error_free(error);
            scenario_variant_free(variant);
            return 2;
        }
        printf("run %u/%u  %-28s ", i + 1, n_runs, scenario_variant_label(variant));
        fflush(stdout);
        RunCoreChecks checks = {.paranoid = options.paranoid, .sets = options.sets};
        RunOutcome *outcome = run_core_variant_checked(
            scenario, variant, seed, trace != NULL ? outfile_stream(trace) : NULL, &checks);
        if (trace != NULL && !outfile_commit(trace, &error)) {
            fprintf(stderr, "ksim run: %s\n", error->message);
            g_error_free(error);
            run_outcome_free(outcome);
            return 2;
        }
        printf("%.2f s wall, %.1f s virtual, %" G_GUINT64_FORMAT " events, fingerprint %s%s\n",
               outcome->wall_s, (double)outcome->result->virtual_ns / 1e9, outcome->result->events,
               outcome->fingerprint, outcome->paranoid ? ", checked" : "");
        g_ptr_array_add(outcomes, outcome);
    }
    int status = write_report(scenario, seed, outcomes, g_steal_pointer(&dir));
    gboolean passed = print_verdicts(scenario, seed, outcomes, options.sets);
    if (status != 0)
        return status;
    return passed ? 0 : 1;
}
