/*
 * `ksim run SCENARIO [--seed N] [--out DIR] [--set KEY=VALUE ...] [--trace[=FORMAT]]
 *  [--history=jepsen] [--paranoid] [--check] [--force] [--check-determinism]`:
 * runs every variant of a scenario with one seed (unless a run's estimated
 * size is over run_estimate's limits and --force is not given; --check only
 * validates, as `ksim check`), prints the settings first, then a compact
 * result table and where the report is, and writes DIR/capsule.json, the
 * replay capsule that `ksim replay` reruns (capsule.h). With
 * --check-determinism each run is made twice, in two processes, and a run
 * whose traces differ fails, naming the first differing trace event
 * (selfcheck.h). With
 * --paranoid (or the scenario's `paranoid = true`) every module's invariants
 * are checked after every event (runner_paranoid.h). Exit status: 0 when
 * every expectation holds, 1 when one fails, 2 on bad input, 3
 * (RUNNER_EXIT_INVARIANT) when a check found an invariant violated.
 */
#include "commands.h"

#include "capsule.h"
#include "jepsen_history.h"
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
    TraceFormat trace_format;
    char *history; /* --history=jepsen */
    char *plots;   /* --plots=all|anomalies */
    gboolean paranoid;
    gboolean check; /* --check: only what `ksim check` does */
    gboolean force; /* --force: run even over the size estimate's limits */
    gboolean check_determinism;
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

/* --trace[=FORMAT]: jsonl (the default) or chrome. */
static gboolean
parse_trace(const char *name, const char *value, gpointer data, GError **error)
{
    (void)name;
    RunOptions *options = data;
    options->trace = TRUE;
    if (value == NULL) {
        options->trace_format = TRACE_FORMAT_JSONL;
        return TRUE;
    }
    if (!trace_format_parse(value, &options->trace_format)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--trace: '%s' is not a trace format (jsonl, chrome)", value);
        return FALSE;
    }
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
        {"trace", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, NULL /* parse_trace */,
         "also write the full trace of each run: as JSON Lines (trace-N.jsonl; the default), or "
         "chrome: the Trace Event Format of chrome://tracing and Perfetto (trace-N.json)",
         "FORMAT"},
        {"history", 0, 0, G_OPTION_ARG_STRING, &options->history,
         "also write each run's client history in another checker's form: jepsen (history-N.edn, "
         "as Jepsen's Kafka workload reads it)",
         "FORMAT"},
        {"plots", 0, 0, G_OPTION_ARG_STRING, &options->plots,
         "which partitions get a replicas plot: anomalies (those an anomaly names; the default) "
         "or all",
         "WHICH"},
        {"paranoid", 0, 0, G_OPTION_ARG_NONE, &options->paranoid,
         "check every invariant after every event; a violation stops the run (exit status 3)",
         NULL},
        {"check", 0, 0, G_OPTION_ARG_NONE, &options->check,
         "validate the scenario and list its runs without running them (as ksim check)", NULL},
        {"force", 0, 0, G_OPTION_ARG_NONE, &options->force,
         "run even when a run's estimated memory or events are over the limits", NULL},
        {"check-determinism", 0, 0, G_OPTION_ARG_NONE, &options->check_determinism,
         "make each run twice, in two processes, and fail when their traces differ", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->rest, NULL,
         "SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    /* A callback goes in arg_data, an object pointer: through a union, as
     * ISO C has no cast between the two. */
    union {
        GOptionArgFunc fn;
        gpointer data;
    } trace_callback = {.fn = parse_trace};
    for (GOptionEntry *e = entries; e->long_name != NULL; e++)
        if (e->arg == G_OPTION_ARG_CALLBACK)
            e->arg_data = trace_callback.data;
    GOptionContext *context = g_option_context_new("- run a scenario file");
    GOptionGroup *group = g_option_group_new("run", "run options", "run options", options, NULL);
    g_option_group_add_entries(group, entries);
    g_option_context_set_main_group(context, group);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error) &&
                  (options->seed_text == NULL || parse_seed(options->seed_text, options, &error));
    if (ok && options->history != NULL && strcmp(options->history, "jepsen") != 0) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--history: '%s' is not a history format (jepsen)", options->history);
        ok = FALSE;
    }
    if (ok && options->plots != NULL && strcmp(options->plots, "all") != 0 &&
        strcmp(options->plots, "anomalies") != 0) {
        g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--plots: '%s' is not a choice (all, anomalies)", options->plots);
        ok = FALSE;
    }
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
print_banner(const Scenario *scenario, guint64 seed, const RunRequest *options, guint n_runs)
{
    printf("ksim %s (commit %s)\n", KSIM_VERSION, KSIM_GIT_COMMIT);
    printf("scenario  %s (%s)\n", scenario_name(scenario),
           scenario_path(scenario) != NULL ? scenario_path(scenario) : "its text from a capsule");
    printf("sha256    %s\n", scenario_sha256(scenario));
    printf("seed      %" G_GUINT64_FORMAT "\n", seed);
    for (guint i = 0; options->sets != NULL && options->sets[i] != NULL; i++)
        printf("set       %s\n", options->sets[i]);
    if (options->paranoid)
        printf("checks    every invariant after every event (--paranoid)\n");
    if (options->check_determinism)
        printf("checks    each run made twice, in two processes (--check-determinism)\n");
    printf("runs      %u\n", n_runs);
    fflush(stdout);
}

/* The trace of run `index`, written into the report's directory with the
 * rest of the report. */
static OutFile *
open_trace(OutDir *dir, guint index, TraceFormat format, GError **error)
{
    g_autofree char *name = g_strdup_printf(
        format == TRACE_FORMAT_CHROME ? "trace-%u.json" : "trace-%u.jsonl", index + 1);
    return outfile_dir_file_open(dir, name, error);
}

/* Run `index`'s client history as Jepsen's Kafka workload reads it
 * (history-N.edn) and its keys' topic-partitions (history-N-keys.json),
 * written into the report's directory. */
static gboolean
write_jepsen_history(OutDir *dir, guint index, const RunOutcome *outcome, GError **error)
{
    g_autofree char *name = g_strdup_printf("history-%u.edn", index + 1);
    OutFile *file = outfile_dir_file_open(dir, name, error);
    if (file == NULL)
        return FALSE;
    const History *history = outcome->result->history;
    if (!jepsen_history_write(history, outcome->txn, outfile_stream(file), error)) {
        outfile_abort(file);
        return FALSE;
    }
    if (!outfile_commit(file, error))
        return FALSE;
    g_autofree char *keys_name = g_strdup_printf("history-%u-keys.json", index + 1);
    g_autofree char *keys = jepsen_history_keys_json(history);
    return outfile_dir_write(dir, keys_name, keys, strlen(keys), error);
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

/* The run's kept trace for its diagrams. */
static void
fill_report_diagrams(ReportRun *run, const RunOutcome *outcome)
{
    run->diagram_trace = outcome->result->diagram_trace;
}

/* Writes the report and the replay capsule into `dir` and renames it into
 * place; takes `dir`. */
static int
write_report(const Scenario *scenario, guint64 seed, GPtrArray *outcomes, OutDir *dir,
             const RunRequest *request)
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
        fill_report_diagrams(&runs[i], g_ptr_array_index(outcomes, i));
    }
    ReportInput input = {KSIM_VERSION, KSIM_GIT_COMMIT, scenario_name(scenario),
                         scenario_sha256(scenario), seed, runs, n, request->plots_all};
    printf("\n");
    report_print_table(stdout, &input);
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    GError *error = NULL;
    g_autoptr(Capsule) capsule = run_core_capsule(scenario, seed, request->sets, outcomes);
    g_autofree char *capsule_json = capsule_to_json(capsule);
    gboolean written =
        report_write_into(&input, dir, warnings, &error) &&
        outfile_dir_write(dir, "capsule.json", capsule_json, strlen(capsule_json), &error);
    if (!written)
        outfile_dir_abort(dir);
    if (!written || !outfile_dir_commit(dir, &error)) {
        fprintf(stderr, "%s: %s\n", request->command, error->message);
        g_error_free(error);
        return 2;
    }
    for (guint i = 0; i < warnings->len; i++)
        fprintf(stderr, "%s: warning: %s\n", request->command,
                (char *)g_ptr_array_index(warnings, i));
    printf("\nreport    %s/report.html (also report.md, summary.json)\n", out_dir);
    g_autofree char *capsule_path = g_build_filename(out_dir, "capsule.json", NULL);
    g_autofree char *quoted = g_shell_quote(capsule_path);
    printf("capsule   %s (replay: ksim replay %s)\n", capsule_path, quoted);
    return 0;
}

static gboolean
print_verdicts(const Scenario *scenario, guint64 seed, GPtrArray *outcomes, char **sets,
               const char *capsule)
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
        if (capsule != NULL)
            printf("      or: ksim replay %s\n", capsule);
    }
    if (passed && scenario_expects(scenario)->len > 0)
        printf("\nexpectations: all %u hold\n", scenario_expects(scenario)->len);
    return passed;
}

static int run_scenario(const RunOptions *options);

static void
options_clear(RunOptions *options)
{
    g_free(options->out_dir);
    g_free(options->seed_text);
    g_free(options->history);
    g_free(options->plots);
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
run_scenario(const RunOptions *options)
{
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(options->rest[0], options->sets, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    if (!options->force && !run_estimate_check(scenario, options->rest[0], &error)) {
        fprintf(stderr, "ksim run: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    g_autofree char *warning =
        run_estimate_memory_warning(scenario, options->rest[0], 1, run_estimate_machine_bytes());
    if (warning != NULL)
        fprintf(stderr, "ksim run: %s\n", warning);
    RunRequest request = {"ksim run", options->out_dir,
                          options->seed_set ? (guint64)options->seed : scenario_seed(scenario),
                          options->sets, options->trace, options->paranoid,
                          options->check_determinism, options->trace_format, options->history,
                          options->plots != NULL && strcmp(options->plots, "all") == 0};
    return cmd_run_scenario(scenario, &request, NULL);
}

int
cmd_run_scenario(const Scenario *scenario, const RunRequest *request, GPtrArray *fingerprints)
{
    GError *error = NULL;
    guint64 seed = request->seed;
    g_autofree char *out_dir = request->out_dir != NULL
                                   ? g_strdup(request->out_dir)
                                   : g_strdup_printf("out/%s", scenario_name(scenario));
    /* The report's directory is opened before the first run, so a place
     * that cannot be written is found now, not after the simulation. */
    g_autoptr(OutDir) dir = outfile_dir_open(out_dir, REPORT_MARKER, &error);
    if (dir == NULL) {
        fprintf(stderr, "%s: %s\n", request->command, error->message);
        g_error_free(error);
        return 2;
    }
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    print_banner(scenario, seed, request, variants->len);
    g_autoptr(GPtrArray) outcomes =
        g_ptr_array_new_with_free_func((GDestroyNotify)run_outcome_free);
    guint n_runs = variants->len;
    for (guint i = 0; i < n_runs; i++) {
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, 0);
        OutFile *trace =
            request->trace ? open_trace(dir, i, request->trace_format, &error) : NULL;
        if (request->trace && trace == NULL) {
            fprintf(stderr, "%s: %s\n", request->command, error->message);
            g_error_free(error);
            scenario_variant_free(variant);
            return 2;
        }
        printf("run %u/%u  %-28s ", i + 1, n_runs, scenario_variant_label(variant));
        fflush(stdout);
        RunCoreChecks checks = {.paranoid = request->paranoid,
                                .sets = request->sets,
                                .check_determinism = request->check_determinism,
                                .trace_format = request->trace_format,
                                .keep_diagrams = TRUE};
        RunOutcome *outcome = run_core_variant_checked(
            scenario, variant, seed, trace != NULL ? outfile_stream(trace) : NULL, &checks);
        if (trace != NULL && !outfile_commit(trace, &error)) {
            fprintf(stderr, "%s: %s\n", request->command, error->message);
            g_error_free(error);
            run_outcome_free(outcome);
            return 2;
        }
        if (request->history != NULL && !write_jepsen_history(dir, i, outcome, &error)) {
            fprintf(stderr, "%s: %s\n", request->command, error->message);
            g_error_free(error);
            run_outcome_free(outcome);
            return 2;
        }
        printf("%.2f s wall, %.1f s virtual, %" G_GUINT64_FORMAT " events, fingerprint %s%s%s\n",
               outcome->wall_s, (double)outcome->result->virtual_ns / 1e9, outcome->result->events,
               outcome->fingerprint, outcome->paranoid ? ", checked" : "",
               outcome->determinism_checked ? ", made twice" : "");
        if (fingerprints != NULL)
            g_ptr_array_add(fingerprints, g_strdup(outcome->fingerprint));
        g_ptr_array_add(outcomes, outcome);
    }
    int status = write_report(scenario, seed, outcomes, g_steal_pointer(&dir), request);
    g_autofree char *capsule_path = g_build_filename(out_dir, "capsule.json", NULL);
    g_autofree char *capsule = g_shell_quote(capsule_path);
    gboolean passed =
        print_verdicts(scenario, seed, outcomes, request->sets, status == 0 ? capsule : NULL);
    if (status != 0)
        return status;
    return passed ? 0 : 1;
}
