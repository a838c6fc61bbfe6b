/*
 * `ksim sweep SCENARIO --seeds A..B [--jobs N] [--shard K/N] [--out DIR]
 *  [--set KEY=VALUE ...] [--paranoid-sample PERCENT | --paranoid] [--force]`: runs a
 * scenario over many seeds in worker processes and lists the failing seeds,
 * each with the command that replays it.
 * `ksim sweep --merge DIR... --out DIR` merges shard results into one sweep.
 *
 * A sample of the seeds (5% by default) runs with every invariant checked
 * after every event (runner_paranoid.h); which ones is a pure function of the
 * seed (runner_paranoid_sampled), so shards and jobs check the same seeds.
 * A check that fails stops its worker with RUNNER_EXIT_INVARIANT after
 * printing the violation and its replay command, and the sweep exits with
 * that status too.
 *
 * Each seed's result is one JSON line (seed, verdict, per run: label,
 * fingerprint, anomaly counts, failed expectations); the results are written
 * sorted by seed to DIR/sweep.jsonl, with a summary in DIR/sweep.json, so they
 * never depend on --jobs, and shards merge into exactly what one sweep would
 * have written. DIR is replaced as a whole once both are written
 * (outfile.h's OutDir), and checked before the workers start.
 */
#include "commands.h"

#include "ksim_version.h"
#include "outfile.h"
#include "run_core.h"
#include "run_estimate.h"
#include "runner_paranoid.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define JOBS_MAX 256
#define PARANOID_SAMPLE_DEFAULT 5

typedef struct {
    char *seeds_text;
    char *shard_text;
    gint jobs;
    char *out_dir;
    char **sets;
    gboolean merge;
    gint paranoid_sample; /* percent of the seeds checked after every event */
    gboolean paranoid;    /* all of them */
    gboolean force;       /* run seeds even over the size estimate's limits */
    char **rest;
    guint64 first, last;
    guint shard_index, shard_count;
} SweepOptions;

typedef struct {
    guint64 seed;
    gboolean passed;
    gboolean paranoid; /* some run of the seed was checked after every event */
    char *line;        /* the JSON line */
} SeedResult;

/* A seed as the scenario's `seed` key takes it: a decimal integer from 0 to
 * G_MAXINT64, no sign, no wrap-around. So `seed += shards` never overflows. */
static gboolean
parse_seed_number(const char *text, guint64 *out)
{
    return g_ascii_string_to_unsigned(text, 10, 0, G_MAXINT64, out, NULL);
}

static gboolean
parse_range(const char *text, guint64 *first, guint64 *last)
{
    g_auto(GStrv) parts = g_strsplit(text, "..", 2);
    if (g_strv_length(parts) != 2)
        return FALSE;
    if (!parse_seed_number(parts[0], first) || !parse_seed_number(parts[1], last))
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
                G_MAXINT64,
                o->seeds_text != NULL ? o->seeds_text : "");
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
    return TRUE;
}

static gboolean
parse_sweep_options(int *argc, char ***argv, SweepOptions *o)
{
    o->jobs = (gint)MAX(1, MIN(g_get_num_processors(), JOBS_MAX));
    o->paranoid_sample = PARANOID_SAMPLE_DEFAULT;
    GOptionEntry entries[] = {
        {"seeds", 0, 0, G_OPTION_ARG_STRING, &o->seeds_text, "the seeds to run, e.g. 1..1000",
         "A..B"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "worker processes (default: the cores)",
         "N"},
        {"shard", 0, 0, G_OPTION_ARG_STRING, &o->shard_text,
         "run every N-th seed, starting with the K-th (for spreading over hosts)", "K/N"},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &o->out_dir,
         "where sweep.jsonl and sweep.json go (default: out/NAME-sweep)", "DIR"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a scenario key",
         "KEY=VALUE"},
        {"merge", 0, 0, G_OPTION_ARG_NONE, &o->merge,
         "merge the sweep.jsonl of shard directories into --out", NULL},
        {"paranoid-sample", 0, 0, G_OPTION_ARG_INT, &o->paranoid_sample,
         "check every invariant after every event for this percentage of the seeds, chosen by "
         "a hash of the seed (default: 5)",
         "PERCENT"},
        {"paranoid", 0, 0, G_OPTION_ARG_NONE, &o->paranoid,
         "check every seed (--paranoid-sample 100)", NULL},
        {"force", 0, 0, G_OPTION_ARG_NONE, &o->force,
         "run even when a run's estimated memory or events are over the limits", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL,
         "SCENARIO | DIR..."},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("SCENARIO --seeds A..B - run a scenario over many seeds");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim sweep: %s\n", error->message);
    g_clear_error(&error);
    g_option_context_free(context);
    return ok && check_options(o);
}

/* ---- one seed ---- */

static void
json_count(JsonBuilder *builder, const char *name, guint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, (gint64)value);
}

static char *
run_seed(const Scenario *scenario, const SweepOptions *o, guint64 seed, gboolean *passed)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    RunCoreChecks checks = {.paranoid = runner_paranoid_sampled(seed, (guint)o->paranoid_sample),
                            .sets = o->sets};
    gboolean paranoid = FALSE;
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    json_count(builder, "seed", seed);
    json_builder_set_member_name(builder, "runs");
    json_builder_begin_array(builder);
    *passed = TRUE;
    while (variants->len > 0) {
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, 0);
        g_autoptr(RunOutcome) outcome =
            run_core_variant_checked(scenario, variant, seed, NULL, &checks);
        paranoid = paranoid || outcome->paranoid;
        const CheckerCounts *counts = checker_result_counts(outcome->check);
        json_builder_begin_object(builder);
        json_builder_set_member_name(builder, "label");
        json_builder_add_string_value(builder, outcome->result->label);
        json_builder_set_member_name(builder, "fingerprint");
        json_builder_add_string_value(builder, outcome->fingerprint);
        json_builder_set_member_name(builder, "passed");
        json_builder_add_boolean_value(builder, outcome->failed->len == 0);
        json_count(builder, "acked", counts->acked);
        json_count(builder, "lost_write", counts->anomalies[CHECKER_LOST_WRITE]);
        json_count(builder, "duplicate", counts->anomalies[CHECKER_DUPLICATE]);
        json_count(builder, "nonmonotonic_send", counts->anomalies[CHECKER_NONMONOTONIC_SEND]);
        json_count(builder, "inconsistent_offsets",
                   counts->anomalies[CHECKER_INCONSISTENT_OFFSETS]);
        json_count(builder, "invariant_violations", counts->invariant_violations);
        json_builder_set_member_name(builder, "failed");
        json_builder_begin_array(builder);
        for (guint i = 0; i < outcome->failed->len; i++)
            json_builder_add_string_value(builder, g_ptr_array_index(outcome->failed, i));
        json_builder_end_array(builder);
        json_builder_end_object(builder);
        *passed = *passed && outcome->failed->len == 0;
    }
    json_builder_end_array(builder);
    json_builder_set_member_name(builder, "paranoid");
    json_builder_add_boolean_value(builder, paranoid);
    json_builder_set_member_name(builder, "passed");
    json_builder_add_boolean_value(builder, *passed);
    json_builder_end_object(builder);
    JsonGenerator *generator = json_generator_new();
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    char *line = json_generator_to_data(generator, NULL);
    json_node_unref(root);
    g_object_unref(generator);
    g_object_unref(builder);
    return line;
}

/* ---- workers ---- */

static void
write_all(int fd, const char *data, gsize len)
{
    while (len > 0) {
        gssize written = write(fd, data, len);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            _exit(2); /* the parent is gone; 3 would claim a violation */
        data += written;
        len -= (gsize)written;
    }
}

/* A worker runs seeds first + shard + k * shards * jobs... of its slice and
 * writes one line per seed to `fd`. */
static void
worker(const Scenario *scenario, const SweepOptions *o, guint job, int fd)
{
    guint64 step = (guint64)o->shard_count;
    guint64 index = 0;
    for (guint64 seed = o->first + o->shard_index; seed <= o->last; seed += step, index++) {
        if (index % (guint64)o->jobs != job)
            continue;
        gboolean passed;
        g_autofree char *line = run_seed(scenario, o, seed, &passed);
        write_all(fd, line, strlen(line));
        write_all(fd, "\n", 1);
        if (seed > G_MAXUINT64 - step)
            break;
    }
}

static guint64
seed_count(const SweepOptions *o)
{
    if (o->first + o->shard_index > o->last)
        return 0;
    return (o->last - o->first - o->shard_index) / o->shard_count + 1;
}

static void
progress(guint64 done, guint64 total, guint failed, gint64 start_us)
{
    double elapsed = (double)(g_get_monotonic_time() - start_us) / 1e6;
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    double left = rate > 0 ? (double)(total - done) / rate : 0;
    int width = 30;
    int filled = total > 0 ? (int)((double)width * (double)done / (double)total) : width;
    fprintf(stderr, "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
                    " seeds, %u failed, %.1f seeds/s, %.0f s left   ",
            filled, "##############################", width - filled, "", done, total, failed,
            rate, left);
    fflush(stderr);
}

static gint
seed_result_compare(gconstpointer a, gconstpointer b)
{
    const SeedResult *x = a, *y = b;
    return (x->seed > y->seed) - (x->seed < y->seed);
}

static void
seed_result_clear(gpointer data)
{
    g_free(((SeedResult *)data)->line);
}

/* Parses one result line; FALSE if it is not one. */
static gboolean
parse_line(const char *line, SeedResult *out)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, line, -1, NULL))
        return FALSE;
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        return FALSE;
    JsonObject *object = json_node_get_object(root);
    if (!json_object_has_member(object, "seed") || !json_object_has_member(object, "passed"))
        return FALSE;
    out->seed = (guint64)json_object_get_int_member(object, "seed");
    out->passed = json_object_get_boolean_member(object, "passed");
    out->paranoid = json_object_get_boolean_member_with_default(object, "paranoid", FALSE);
    out->line = g_strdup(line);
    return TRUE;
}

/* Reads every complete line in `buffer` into results. */
static guint
take_lines(GString *buffer, GArray *results, guint *failed)
{
    guint taken = 0;
    char *newline;
    while ((newline = strchr(buffer->str, '\n')) != NULL) {
        *newline = '\0';
        SeedResult result;
        if (parse_line(buffer->str, &result)) {
            g_array_append_val(results, result);
            *failed += !result.passed;
            taken++;
        }
        g_string_erase(buffer, 0, newline - buffer->str + 1);
    }
    return taken;
}

static gboolean
collect(guint jobs, int *fds, GArray *results, guint64 total, gboolean show)
{
    GString **buffers = g_new0(GString *, jobs);
    struct pollfd *polls = g_new0(struct pollfd, jobs);
    for (guint j = 0; j < jobs; j++) {
        buffers[j] = g_string_new(NULL);
        polls[j] = (struct pollfd){fds[j], POLLIN, 0};
    }
    guint open = jobs, failed = 0;
    gint64 start = g_get_monotonic_time();
    while (open > 0) {
        if (poll(polls, jobs, -1) < 0 && errno != EINTR)
            break;
        for (guint j = 0; j < jobs; j++) {
            if (polls[j].fd < 0 || polls[j].revents == 0)
                continue;
            char chunk[65536];
            gssize got = read(polls[j].fd, chunk, sizeof chunk);
            if (got > 0) {
                g_string_append_len(buffers[j], chunk, got);
                take_lines(buffers[j], results, &failed);
            } else if (got == 0 || errno != EINTR) {
                close(polls[j].fd);
                polls[j].fd = -1;
                open--;
            }
        }
        if (show)
            progress(results->len, total, failed, start);
    }
    if (show)
        fprintf(stderr, "\n");
    for (guint j = 0; j < jobs; j++)
        g_string_free(buffers[j], TRUE);
    g_free(buffers);
    g_free(polls);
    return TRUE;
}

/* 0 when every worker finished, RUNNER_EXIT_INVARIANT when a check stopped
 * one, 2 when one failed otherwise. */
static int
run_workers(const Scenario *scenario, const SweepOptions *o, GArray *results)
{
    guint jobs = (guint)o->jobs;
    int *fds = g_new0(int, jobs);
    pid_t *pids = g_new0(pid_t, jobs);
    fflush(stdout);
    fflush(stderr);
    for (guint j = 0; j < jobs; j++) {
        int pipe_fds[2];
        if (pipe(pipe_fds) != 0) {
            fprintf(stderr, "ksim sweep: pipe: %s\n", g_strerror(errno));
            return 2;
        }
        pids[j] = fork();
        if (pids[j] == 0) {
            close(pipe_fds[0]);
            for (guint k = 0; k < j; k++)
                close(fds[k]);
            worker(scenario, o, j, pipe_fds[1]);
            close(pipe_fds[1]);
            _exit(0);
        }
        close(pipe_fds[1]);
        fds[j] = pipe_fds[0];
    }
    collect(jobs, fds, results, seed_count(o), isatty(STDERR_FILENO));
    int failure = 0;
    for (guint j = 0; j < jobs; j++) {
        int status = 0;
        waitpid(pids[j], &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_INVARIANT) {
            fprintf(stderr, "ksim sweep: worker %u stopped: an invariant was violated (above)\n",
                    j);
            failure = RUNNER_EXIT_INVARIANT;
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "ksim sweep: worker %u failed (status %d)\n", j, status);
            failure = failure != 0 ? failure : 2;
        }
    }
    g_free(fds);
    g_free(pids);
    return failure;
}

/* ---- output ---- */

/* The file that marks a directory as an earlier sweep's, which a later sweep
 * may replace (outfile_dir_open). */
#define SWEEP_MARKER "sweep.jsonl"

static void
json_string(JsonBuilder *builder, const char *name, const char *value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_string_value(builder, value);
}

/* sweep.json's text: the version, the scenario and seeds swept (unless
 * `scenario` is NULL: a merge), and the counts, on one line. */
static char *
summary_json(const Scenario *scenario, const SweepOptions *o, guint seeds, guint failed,
             guint paranoid)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    json_string(builder, "ksim_version", KSIM_VERSION);
    json_string(builder, "git_commit", KSIM_GIT_COMMIT);
    if (scenario != NULL) {
        g_autofree char *shard = g_strdup_printf("%u/%u", o->shard_index + 1, o->shard_count);
        json_string(builder, "scenario", scenario_name(scenario));
        json_string(builder, "scenario_sha256", scenario_sha256(scenario));
        json_count(builder, "first", o->first);
        json_count(builder, "last", o->last);
        json_string(builder, "shard", shard);
    }
    json_count(builder, "seeds", seeds);
    json_count(builder, "failed", failed);
    json_count(builder, "paranoid_seeds", paranoid);
    json_builder_end_object(builder);
    g_autoptr(JsonGenerator) generator = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    return g_strconcat(text, "\n", NULL);
}

/* Writes sweep.jsonl (sorted by seed) and sweep.json into `dir` and renames
 * it into place; takes `dir`. `scenario` is NULL for a merge. */
static gboolean
write_results(OutDir *dir, GArray *results, const Scenario *scenario, const SweepOptions *o,
              GError **error)
{
    g_array_sort(results, seed_result_compare);
    GString *lines = g_string_new(NULL);
    guint failed = 0, paranoid = 0;
    for (guint i = 0; i < results->len; i++) {
        const SeedResult *r = &g_array_index(results, SeedResult, i);
        g_string_append_printf(lines, "%s\n", r->line);
        failed += !r->passed;
        paranoid += r->paranoid;
    }
    gboolean ok = outfile_dir_write(dir, "sweep.jsonl", lines->str, lines->len, error);
    g_string_free(lines, TRUE);
    g_autofree char *summary = summary_json(scenario, o, results->len, failed, paranoid);
    ok = ok && outfile_dir_write(dir, "sweep.json", summary, strlen(summary), error);
    if (!ok) {
        outfile_dir_abort(dir);
        return FALSE;
    }
    return outfile_dir_commit(dir, error);
}

/* Opens the sweep's output directory, or says why not. */
static OutDir *
open_out(const char *out_dir)
{
    GError *error = NULL;
    OutDir *dir = outfile_dir_open(out_dir, SWEEP_MARKER, &error);
    if (dir == NULL) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
    }
    return dir;
}

static guint
print_failures(GArray *results, const Scenario *scenario, char **sets, const char *out_dir)
{
    guint failed = 0;
    for (guint i = 0; i < results->len; i++) {
        const SeedResult *r = &g_array_index(results, SeedResult, i);
        if (r->passed)
            continue;
        if (failed++ == 0)
            printf("failing seeds:\n");
        if (scenario != NULL) {
            g_autofree char *replay = run_core_replay_command(scenario, r->seed, sets, NULL);
            printf("  seed %" G_GUINT64_FORMAT ": %s\n", r->seed, replay);
            GError *error = NULL;
            g_autofree char *capsule =
                run_core_write_seed_capsule(scenario, sets, r->seed, r->line, out_dir, &error);
            g_autofree char *quoted = capsule != NULL ? g_shell_quote(capsule) : NULL;
            if (capsule != NULL)
                printf("      or: ksim replay %s\n", quoted);
            else
                fprintf(stderr, "ksim sweep: %s\n", error->message);
            g_clear_error(&error);
        } else {
            printf("  seed %" G_GUINT64_FORMAT "\n", r->seed);
        }
    }
    return failed;
}

static guint
paranoid_count(const GArray *results)
{
    guint count = 0;
    for (guint i = 0; i < results->len; i++)
        count += g_array_index(results, SeedResult, i).paranoid;
    return count;
}

static int
merge(const SweepOptions *o)
{
    g_autoptr(GArray) results = g_array_new(FALSE, FALSE, sizeof(SeedResult));
    g_array_set_clear_func(results, seed_result_clear);
    for (guint i = 0; o->rest[i] != NULL; i++) {
        g_autofree char *path = g_build_filename(o->rest[i], "sweep.jsonl", NULL);
        g_autofree char *text = NULL;
        GError *error = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error)) {
            fprintf(stderr, "ksim sweep: %s\n", error->message);
            g_error_free(error);
            return 2;
        }
        GString *buffer = g_string_new(text);
        guint failed = 0;
        take_lines(buffer, results, &failed);
        g_string_free(buffer, TRUE);
    }
    OutDir *dir = open_out(o->out_dir);
    if (dir == NULL)
        return 2;
    GError *error = NULL;
    if (!write_results(dir, results, NULL, o, &error)) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    guint failed = print_failures(results, NULL, NULL, NULL);
    printf("merged %u seeds, %u failed, %u checked after every event: %s/sweep.jsonl\n",
           results->len, failed, paranoid_count(results), o->out_dir);
    return failed > 0 ? 1 : 0;
}

static void
options_clear(SweepOptions *o)
{
    g_free(o->seeds_text);
    g_free(o->shard_text);
    g_free(o->out_dir);
    g_strfreev(o->sets);
    g_strfreev(o->rest);
}

static int
sweep(SweepOptions *o)
{
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(o->rest[0], o->sets, &error);
    if (scenario == NULL || (!o->force && !run_estimate_check(scenario, o->rest[0], &error))) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    g_autofree char *out_dir = o->out_dir != NULL
                                   ? g_strdup(o->out_dir)
                                   : g_strdup_printf("out/%s-sweep", scenario_name(scenario));
    /* Opened before the workers start, so a place that cannot be written is
     * found before the seeds run, not after. */
    g_autoptr(OutDir) dir = open_out(out_dir);
    if (dir == NULL)
        return 2;
    printf("ksim %s (commit %s)\nscenario  %s (%s)\nsha256    %s\n", KSIM_VERSION,
           KSIM_GIT_COMMIT, scenario_name(scenario), scenario_path(scenario),
           scenario_sha256(scenario));
    printf("seeds     %s%s%s, %" G_GUINT64_FORMAT " to run with %d jobs\n", o->seeds_text,
           o->shard_text != NULL ? ", shard " : "", o->shard_text != NULL ? o->shard_text : "",
           seed_count(o), o->jobs);
    printf("checks    every invariant after every event for %d%% of the seeds "
           "(--paranoid-sample)\n",
           o->paranoid_sample);
    g_autoptr(GArray) results = g_array_new(FALSE, FALSE, sizeof(SeedResult));
    g_array_set_clear_func(results, seed_result_clear);
    gint64 start = g_get_monotonic_time();
    int workers = run_workers(scenario, o, results);
    double wall_s = (double)(g_get_monotonic_time() - start) / 1e6;
    if (!write_results(g_steal_pointer(&dir), results, scenario, o, &error)) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    guint failed = print_failures(results, scenario, o->sets, out_dir);
    printf("%u seeds in %.1f s (%.2f seeds/s), %u failed, %u checked after every event; "
           "results in %s/sweep.jsonl\n",
           results->len, wall_s, results->len / MAX(wall_s, 1e-9), failed,
           paranoid_count(results), out_dir);
    if (workers != 0)
        return workers;
    if (results->len != seed_count(o))
        return 2;
    return failed > 0 ? 1 : 0;
}

int
cmd_sweep(int argc, char **argv)
{
    SweepOptions options = {0};
    if (!parse_sweep_options(&argc, &argv, &options)) {
        options_clear(&options);
        return 2;
    }
    int status = options.merge ? merge(&options) : sweep(&options);
    options_clear(&options);
    return status;
}
