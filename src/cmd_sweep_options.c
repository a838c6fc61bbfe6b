/*
 * cmd_sweep_options: `ksim sweep`'s command line (see cmd_sweep.c for what
 * each option does): parsed with GOptionContext, then checked, so a bad value
 * is named with its option and the sweep exits 2 before any seed runs.
 */
#include "cmd_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOBS_MAX 256
#define PARANOID_SAMPLE_DEFAULT 5
#define RECHECK_DEFAULT 5

/* A seed as the scenario's `seed` key takes it: a decimal integer from 0 to
 * G_MAXINT64, no sign, no wrap-around. So `seed += shards` never overflows. */
gboolean
sweep_parse_seed_number(const char *text, guint64 *out)
{
    return g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, out, NULL);
}

static gboolean
parse_range(const char *text, guint64 *first, guint64 *last)
{
    g_auto(GStrv) parts = g_strsplit(text, "..", 2);
    if (g_strv_length(parts) != 2)
        return FALSE;
    if (!sweep_parse_seed_number(parts[0], first) || !sweep_parse_seed_number(parts[1], last))
        return FALSE;
    return *first <= *last;
}

/* K/N, each a decimal integer from 1 to G_MAXUINT32 without a sign. */
static gboolean
parse_shard(const char *text, guint *index, guint *count)
{
    g_auto(GStrv) parts = g_strsplit(text, "/", -1);
    guint64 k = 0, n = 0;
    if (g_strv_length(parts) != 2 ||
        !g_ascii_string_to_unsigned(parts[0], 10, 1, G_MAXUINT32, &k, NULL) ||
        !g_ascii_string_to_unsigned(parts[1], 10, 1, G_MAXUINT32, &n, NULL) || k > n)
        return FALSE;
    *index = (guint)(k - 1);
    *count = (guint)n;
    return TRUE;
}

/* "5" or "5%": a percentage 0..100. */
static gboolean
parse_percent(const char *text, guint *out)
{
    g_autofree char *digits = g_strdup(text);
    gsize len = strlen(digits);
    if (len > 0 && digits[len - 1] == '%')
        digits[len - 1] = '\0';
    guint64 value;
    if (!g_ascii_string_to_unsigned(digits, 10, 0, 100, &value, NULL))
        return FALSE;
    *out = (guint)value;
    return TRUE;
}

/* "500" (seeds) or "30s", "10m", "2h" (wall time). */
static gboolean
parse_budget(const char *text, guint64 *seeds, gint64 *us)
{
    guint64 value;
    if (g_ascii_string_to_unsigned(text, 10, 1, G_MAXINT64, &value, NULL)) {
        *seeds = value;
        return TRUE;
    }
    gsize len = strlen(text);
    if (len < 2)
        return FALSE;
    g_autofree char *number = g_strndup(text, len - 1);
    const char unit = text[len - 1];
    gint64 scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
    if (scale == 0 || !g_ascii_string_to_unsigned(number, 10, 1, 1000000, &value, NULL))
        return FALSE;
    *us = (gint64)value * scale * G_USEC_PER_SEC;
    return TRUE;
}

static gboolean
check_sweep_options(SweepOptions *o)
{
    o->recheck = RECHECK_DEFAULT;
    if (o->recheck_text != NULL && !parse_percent(o->recheck_text, &o->recheck)) {
        fprintf(stderr, "ksim sweep: --recheck takes a percentage 0..100, e.g. 5%% (got '%s')\n",
                o->recheck_text);
        return FALSE;
    }
    if (o->budget_text != NULL && !o->until_marks) {
        fprintf(stderr, "ksim sweep: --budget goes with --until-marks\n");
        return FALSE;
    }
    if (o->budget_text != NULL && !parse_budget(o->budget_text, &o->budget_seeds, &o->budget_us)) {
        fprintf(stderr,
                "ksim sweep: --budget takes a number of seeds (e.g. 500) or a wall time "
                "(e.g. 30s, 10m, 2h) (got '%s')\n",
                o->budget_text);
        return FALSE;
    }
    if (o->until_marks && o->resume) {
        fprintf(stderr, "ksim sweep: --until-marks cannot --resume: it decides its seeds as it "
                        "goes; run it again\n");
        return FALSE;
    }
    return TRUE;
}

static gboolean
check_options(SweepOptions *o)
{
    if (o->merge) {
        if (o->rest == NULL || o->rest[0] == NULL || o->out_dir == NULL) {
            fprintf(stderr, "ksim sweep: --merge needs shard directories and --out DIR\n");
            return FALSE;
        }
        return TRUE;
    }
    if (o->rest == NULL || o->rest[0] == NULL || o->rest[1] != NULL) {
        fprintf(stderr, "ksim sweep: give exactly one scenario file (see 'ksim sweep --help')\n");
        return FALSE;
    }
    if (o->seeds_text == NULL || !parse_range(o->seeds_text, &o->first, &o->last)) {
        fprintf(stderr,
                "ksim sweep: --seeds takes a range A..B of seeds from 0 to %" G_GINT64_FORMAT
                " with A <= B, e.g. 1..100 (got '%s')\n",
                G_MAXINT64, o->seeds_text != NULL ? o->seeds_text : "");
        return FALSE;
    }
    o->shard_index = 0;
    o->shard_count = 1;
    if (o->shard_text != NULL && !parse_shard(o->shard_text, &o->shard_index, &o->shard_count)) {
        fprintf(stderr,
                "ksim sweep: --shard takes K/N with 1 <= K <= N <= %u, e.g. 2/8 (got '%s')\n",
                G_MAXUINT32, o->shard_text);
        return FALSE;
    }
    if (o->paranoid)
        o->paranoid_sample = 100;
    if (o->paranoid_sample < 0 || o->paranoid_sample > 100) {
        fprintf(stderr, "ksim sweep: --paranoid-sample takes a percentage 0..100 (got %d)\n",
                o->paranoid_sample);
        return FALSE;
    }
    if (o->jobs < 1 || o->jobs > JOBS_MAX) {
        fprintf(stderr, "ksim sweep: --jobs must be between 1 and %d (got %d)\n", JOBS_MAX,
                o->jobs);
        return FALSE;
    }
    return check_sweep_options(o);
}

gboolean
sweep_options_parse(int *argc, char ***argv, SweepOptions *o)
{
    o->jobs = (gint)MAX(1, MIN(g_get_num_processors(), JOBS_MAX));
    o->paranoid_sample = PARANOID_SAMPLE_DEFAULT;
    GOptionEntry entries[] = {
        {"seeds", 0, 0, G_OPTION_ARG_STRING, &o->seeds_text, "the seeds to run, e.g. 1..1000",
         "A..B"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "worker processes (default: the cores)", "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &o->shard_text,
         "run every N-th seed, starting with the K-th (for spreading over hosts)", "K/N"},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &o->out_dir,
         "where sweep.jsonl and sweep.json go (default: out/NAME-sweep)", "DIR"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a scenario key", "KEY=VALUE"},
        {"merge", 0, 0, G_OPTION_ARG_NONE, &o->merge,
         "merge the sweep.jsonl of shard directories into --out", NULL},
        {"paranoid-sample", 0, 0, G_OPTION_ARG_INT, &o->paranoid_sample,
         "check every invariant after every event for this percentage of the seeds, chosen by "
         "a hash of the seed (default: 5)",
         "PERCENT"},
        {"paranoid", 0, 0, G_OPTION_ARG_NONE, &o->paranoid,
         "check every seed (--paranoid-sample 100)", NULL},
        {"recheck", 0, 0, G_OPTION_ARG_STRING, &o->recheck_text,
         "run this percentage of the seeds twice, in separate workers, and fail a seed whose "
         "fingerprints differ (default: 5%)",
         "PERCENT"},
        {"resume", 0, 0, G_OPTION_ARG_NONE, &o->resume,
         "finish an interrupted sweep: run only the seeds missing from DIR.journal.jsonl", NULL},
        {"until-marks", 0, 0, G_OPTION_ARG_NONE, &o->until_marks,
         "draw seeds from the range until every coverage mark is reached", NULL},
        {"budget", 0, 0, G_OPTION_ARG_STRING, &o->budget_text,
         "with --until-marks: stop after this many seeds or this wall time", "N|TIME"},
        {"force", 0, 0, G_OPTION_ARG_NONE, &o->force,
         "run even when a run's estimated memory or events are over the limits", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL,
         "SCENARIO | DIR..."},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("--seeds A..B - run a scenario over many seeds");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim sweep: %s\n", error->message);
    g_clear_error(&error);
    g_option_context_free(context);
    return ok && check_options(o);
}

void
sweep_options_clear(SweepOptions *o)
{
    g_free(o->seeds_text);
    g_free(o->shard_text);
    g_free(o->out_dir);
    g_free(o->recheck_text);
    g_free(o->budget_text);
    g_strfreev(o->sets);
    g_strfreev(o->rest);
}
