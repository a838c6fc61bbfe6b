/*
 * `ksim replay CAPSULE [--out DIR] [--force] [--trace] [--paranoid]`: reruns
 * the runs of a replay capsule (capsule.h) from the scenario text it holds,
 * with its seed and --set assignments, writes their report into DIR (default
 * out/NAME-replay) and checks that every run has the fingerprint the capsule
 * recorded. Exit status: 0 when every fingerprint matches (whatever the
 * runs' expectations say: a failing run replayed is a success), 1 when one
 * differs, naming the run, 2 on a capsule that cannot be read or whose
 * scenario does not load, and on a capsule made by another commit of ksim
 * unless --force (another binary may make other traces).
 */
#include "commands.h"

#include "capsule.h"
#include "ksim_version.h"
#include "run_core.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    char *out_dir;
    gboolean force;
    gboolean trace;
    gboolean paranoid;
    char **rest;
} ReplayOptions;

static gboolean
parse_replay_options(int *argc, char ***argv, ReplayOptions *options)
{
    GOptionEntry entries[] = {
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &options->out_dir,
         "where the replay's report goes (default: out/NAME-replay)", "DIR"},
        {"force", 0, 0, G_OPTION_ARG_NONE, &options->force,
         "replay a capsule made by another commit of ksim", NULL},
        {"trace", 0, 0, G_OPTION_ARG_NONE, &options->trace,
         "also write the full trace of each run as JSON Lines", NULL},
        {"paranoid", 0, 0, G_OPTION_ARG_NONE, &options->paranoid,
         "check every invariant after every event (the fingerprints do not change)", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &options->rest, NULL,
         "CAPSULE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("- rerun a run's capsule.json and check its fingerprints");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim replay: %s\n", error->message);
    else if (options->rest == NULL || options->rest[0] == NULL || options->rest[1] != NULL) {
        fprintf(stderr, "ksim replay: give exactly one capsule file (see 'ksim replay --help')\n");
        ok = FALSE;
    }
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

/* FALSE, with the message, when the capsule's runs are not the runs its
 * scenario makes now. */
static gboolean
check_runs(const Capsule *capsule, const Scenario *scenario, const char *path)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    if (variants->len != capsule->runs->len) {
        fprintf(stderr, "ksim replay: %s: the capsule has %u runs, its scenario makes %u\n", path,
                capsule->runs->len, variants->len);
        return FALSE;
    }
    for (guint i = 0; i < variants->len; i++) {
        const CapsuleRun *run = g_ptr_array_index(capsule->runs, i);
        const char *label = scenario_variant_label(g_ptr_array_index(variants, i));
        if (strcmp(run->label, label) != 0) {
            fprintf(stderr, "ksim replay: %s: run %u is '%s' in the capsule, '%s' now\n", path,
                    i + 1, run->label, label);
            return FALSE;
        }
    }
    return TRUE;
}

/* 0 when every fingerprint is the capsule's, else 1, naming each run that
 * differs. */
static int
compare(const Capsule *capsule, const GPtrArray *fingerprints, const char *path)
{
    guint differ = 0;
    for (guint i = 0; i < capsule->runs->len && i < fingerprints->len; i++) {
        const CapsuleRun *run = g_ptr_array_index(capsule->runs, i);
        const char *now = g_ptr_array_index(fingerprints, i);
        if (g_ascii_strcasecmp(run->fingerprint, now) == 0)
            continue;
        if (differ++ == 0)
            printf("\nreplay differs:\n");
        printf("  run %u [%s]: fingerprint %s, but the capsule recorded %s\n", i + 1, run->label,
               now, run->fingerprint);
    }
    if (differ > 0) {
        fprintf(stderr, "ksim replay: %s: %u of %u runs did not replay to the recorded "
                        "fingerprint\n",
                path, differ, capsule->runs->len);
        return 1;
    }
    printf("\nreplay    all %u fingerprints match %s\n", capsule->runs->len, path);
    return 0;
}

static int
replay(const ReplayOptions *options)
{
    const char *path = options->rest[0];
    GError *error = NULL;
    g_autoptr(Capsule) capsule = capsule_load(path, &error);
    if (capsule == NULL) {
        fprintf(stderr, "ksim replay: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    if (strcmp(capsule->git_commit, KSIM_GIT_COMMIT) != 0) {
        if (!options->force) {
            fprintf(stderr,
                    "ksim replay: %s was made by ksim %s (commit %s); this is ksim %s (commit "
                    "%s), whose runs may differ. Replay it with that commit's ksim, or give "
                    "--force to try with this one\n",
                    path, capsule->ksim_version, capsule->git_commit, KSIM_VERSION,
                    KSIM_GIT_COMMIT);
            return 2;
        }
        fprintf(stderr, "ksim replay: warning: %s was made by commit %s, this is commit %s "
                        "(--force)\n",
                path, capsule->git_commit, KSIM_GIT_COMMIT);
    }
    g_ptr_array_add(capsule->sets, NULL);
    char **sets = (char **)capsule->sets->pdata;
    g_autofree char *display = capsule->scenario_path != NULL
                                   ? g_strdup(capsule->scenario_path)
                                   : g_strdup_printf("%s.ini", capsule->scenario_name);
    g_autoptr(Scenario) scenario = run_core_load_bytes(
        capsule->scenario_text, strlen(capsule->scenario_text), display, sets, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim replay: %s: its scenario does not load: %s\n", path,
                error->message);
        g_error_free(error);
        return 2;
    }
    if (!check_runs(capsule, scenario, path))
        return 2;
    g_autofree char *out_dir = options->out_dir != NULL
                                   ? g_strdup(options->out_dir)
                                   : g_strdup_printf("out/%s-replay", scenario_name(scenario));
    printf("replaying %s (%u runs, seed %" G_GUINT64_FORMAT ")\n", path, capsule->runs->len,
           capsule->seed);
    RunRequest request = {"ksim replay", out_dir, capsule->seed, sets, options->trace,
                          options->paranoid, FALSE, TRACE_FORMAT_JSONL, NULL, FALSE};
    g_autoptr(GPtrArray) fingerprints = g_ptr_array_new_with_free_func(g_free);
    int status = cmd_run_scenario(scenario, &request, fingerprints);
    if (status == 2 || status == RUNNER_EXIT_INVARIANT)
        return status;
    return compare(capsule, fingerprints, path);
}

int
cmd_replay(int argc, char **argv)
{
    ReplayOptions options = {0};
    int status = 2;
    if (parse_replay_options(&argc, &argv, &options))
        status = replay(&options);
    g_free(options.out_dir);
    g_strfreev(options.rest);
    return status;
}
