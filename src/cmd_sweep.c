/*
 * `ksim sweep SCENARIO --seeds A..B [--jobs N] [--shard K/N] [--out DIR]
 *  [--set KEY=VALUE ...] [--paranoid-sample PERCENT | --paranoid] [--recheck PERCENT]
 *  [--resume] [--until-marks [--budget N|TIME]] [--force]`: runs a scenario over many
 * seeds in worker processes and lists the failing seeds, each with what failed and the
 * command that replays it.
 * `ksim sweep --merge DIR... --out DIR` merges shard results into one sweep.
 *
 * A sample of the seeds (5% by default) runs with every invariant checked
 * after every event (runner_paranoid.h); which ones is a pure function of the
 * seed (runner_paranoid_sampled), so shards and jobs check the same seeds.
 * A check that fails stops its worker with RUNNER_EXIT_INVARIANT after
 * printing the violation and its replay command, and the sweep exits with
 * that status too.
 *
 * Another sample (--recheck, 5% by default, FoundationDB's habit; also a pure
 * function of the seed) runs a second time, in another worker process after
 * the first pass, and a fingerprint that differs fails the seed on its own
 * ("determinism").
 *
 * Results that survive. Each seed's result is one JSON line (seed, verdict,
 * per run: label, fingerprint, anomaly counts, failed expectations, marks
 * reached). The report directory DIR is written as outfile.h's OutDir does:
 * in a temporary directory renamed into place at the end, so a reader sees a
 * whole sweep or none, and a later OutDir open removes what a killed one
 * left. A file that grows seed by seed cannot live in there, so the
 * results are also appended, one flushed line per finished seed, to the
 * journal "DIR.journal.jsonl" beside DIR (first line: what was swept). A
 * killed sweep (a kill -9, a Ctrl-C, a lost host) keeps its journal, and
 * `--resume` runs only the seeds missing from it. When the sweep ends, DIR
 * is committed with the results sorted by seed (DIR/sweep.jsonl) and the
 * summary (DIR/sweep.json), so they never depend on --jobs, and the journal
 * is removed. A journal or DIR of another scenario text, binary, --set or
 * seed range is never mixed in: the sweep refuses, naming the difference.
 *
 * Workers are forked; each asks the kernel to kill it when the sweep dies
 * (PR_SET_PDEATHSIG). A worker that dies of a signal fails the seed it was
 * running (with the signal), and a new worker takes over its other seeds.
 *
 * Coverage marks (sim_marks.h): each run's line lists the marks it reached;
 * the sweep prints, per mark, how many seeds reached it and names those no
 * seed reached. `--until-marks` draws seeds from the range in rounds of
 * UNTIL_MARKS_ROUND until every mark is reached or the budget is spent.
 *
 * Test hook (tests only; nothing else sets it): KSIM_TEST_SWEEP_CRASH=SEED
 * makes the worker that runs SEED (its first pass) abort, as a crash would.
 */
#include "cmd_sweep.h"
#include "commands.h"

#include "ksim_version.h"
#include "outfile.h"
#include "run_core.h"
#include "run_estimate.h"
#include "runner_paranoid.h"
#include "sim_marks.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#define CRASH_ENV "KSIM_TEST_SWEEP_CRASH"
/* Seeds drawn per round of --until-marks: a constant, so which seeds ran
 * depends on the range and the marks alone, never on --jobs. */
#define UNTIL_MARKS_ROUND 16
/* Missing seeds named in a message; the rest are counted. */
#define MISSING_SHOWN 20

typedef struct {
    guint64 seed;
    gboolean passed;
    gboolean paranoid; /* some run of the seed was checked after every event */
    gboolean rerun;    /* a determinism re-run's line */
    guint64 marks;     /* bit i: mark i was reached by some run */
    char *line;        /* the JSON line */
} SeedResult;

typedef struct {
    guint64 seed;
    gboolean rerun;
} SeedTask;

/* ---- JSON ---- */

static void
json_count(JsonBuilder *builder, const char *name, guint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, (gint64)value);
}

static void
json_string(JsonBuilder *builder, const char *name, const char *value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_string_value(builder, value);
}

/* One line of JSON text for `root` (transfer full). */
static char *
json_text(JsonNode *root)
{
    g_autoptr(JsonGenerator) generator = json_generator_new();
    json_generator_set_root(generator, root);
    return json_generator_to_data(generator, NULL);
}

static char *
builder_text(JsonBuilder *builder)
{
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    return json_text(root);
}

/* The object of a JSON line, or NULL (transfer full: unref the node). */
static JsonNode *
json_line_parse(const char *line)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    if (!json_parser_load_from_data(parser, line, -1, NULL))
        return NULL;
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
        return NULL;
    return json_node_copy(root);
}

/* The array or object member `name` of `object`, or NULL when it has none
 * of that type (transfer none). */
static JsonArray *
member_array(JsonObject *object, const char *name)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && JSON_NODE_HOLDS_ARRAY(node) ? json_node_get_array(node) : NULL;
}

static JsonObject *
member_object(JsonObject *object, const char *name)
{
    JsonNode *node = object != NULL ? json_object_get_member(object, name) : NULL;
    return node != NULL && JSON_NODE_HOLDS_OBJECT(node) ? json_node_get_object(node) : NULL;
}

/* ---- one seed ---- */

static void
add_marks(JsonBuilder *builder, const SimMarks *marks)
{
    json_builder_set_member_name(builder, "marks");
    json_builder_begin_object(builder);
    for (guint m = 0; m < SIM_MARKS_COUNT; m++) {
        if (marks->hits[m] > 0)
            json_count(builder, sim_marks_name((SimMarkId)m), marks->hits[m]);
    }
    json_builder_end_object(builder);
}

static void
add_run(JsonBuilder *builder, const RunOutcome *outcome)
{
    const CheckerCounts *counts = checker_result_counts(outcome->check);
    json_builder_begin_object(builder);
    json_string(builder, "label", outcome->result->label);
    json_string(builder, "fingerprint", outcome->fingerprint);
    json_builder_set_member_name(builder, "passed");
    json_builder_add_boolean_value(builder, outcome->failed->len == 0);
    json_count(builder, "acked", counts->acked);
    json_count(builder, "lost_write", counts->anomalies[CHECKER_LOST_WRITE]);
    json_count(builder, "duplicate", counts->anomalies[CHECKER_DUPLICATE]);
    json_count(builder, "nonmonotonic_send", counts->anomalies[CHECKER_NONMONOTONIC_SEND]);
    json_count(builder, "inconsistent_offsets", counts->anomalies[CHECKER_INCONSISTENT_OFFSETS]);
    json_count(builder, "invariant_violations", counts->invariant_violations);
    json_builder_set_member_name(builder, "failed");
    json_builder_begin_array(builder);
    for (guint i = 0; i < outcome->failed->len; i++)
        json_builder_add_string_value(builder, g_ptr_array_index(outcome->failed, i));
    json_builder_end_array(builder);
    add_marks(builder, &outcome->result->marks);
    json_builder_end_object(builder);
}

/* A seed's line opens with its seed, whether it is a re-run, and its runs. */
static void
seed_line_begin(JsonBuilder *builder, const SeedTask *task)
{
    json_count(builder, "seed", task->seed);
    if (task->rerun) {
        json_builder_set_member_name(builder, "rerun");
        json_builder_add_boolean_value(builder, TRUE);
    }
    json_builder_set_member_name(builder, "runs");
    json_builder_begin_array(builder);
}

/* ... and closes with its verdict and, failing, the command that replays
 * it (transfer full). */
static char *
seed_line_end(JsonBuilder *builder, const Scenario *scenario, const SweepOptions *o,
              const SeedTask *task, gboolean passed)
{
    json_builder_set_member_name(builder, "passed");
    json_builder_add_boolean_value(builder, passed);
    if (!passed) {
        g_autofree char *replay = run_core_replay_command(scenario, task->seed, o->sets, NULL);
        json_string(builder, "replay", replay);
    }
    json_builder_end_object(builder);
    return builder_text(builder);
}

static char *
run_seed(const Scenario *scenario, const SweepOptions *o, const SeedTask *task)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    RunCoreChecks checks = {.paranoid =
                                runner_paranoid_sampled(task->seed, (guint)o->paranoid_sample),
                            .sets = o->sets};
    gboolean paranoid = FALSE, passed = TRUE;
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    seed_line_begin(builder, task);
    while (variants->len > 0) {
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, 0);
        g_autoptr(RunOutcome) outcome =
            run_core_variant_checked(scenario, variant, task->seed, NULL, &checks);
        paranoid = paranoid || outcome->paranoid;
        add_run(builder, outcome);
        passed = passed && outcome->failed->len == 0;
    }
    json_builder_end_array(builder);
    json_builder_set_member_name(builder, "paranoid");
    json_builder_add_boolean_value(builder, paranoid);
    return seed_line_end(builder, scenario, o, task, passed);
}

/* The line of a seed whose worker died of `signal` while running it. */
static char *
crash_line(const Scenario *scenario, const SweepOptions *o, const SeedTask *task, int signal)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    seed_line_begin(builder, task);
    json_builder_end_array(builder);
    g_autofree char *why =
        g_strdup_printf("the worker died of signal %d (%s)", signal, g_strsignal(signal));
    json_string(builder, "crashed", why);
    return seed_line_end(builder, scenario, o, task, FALSE);
}

/* TRUE when --recheck runs `seed` twice: a pure function of the seed, of
 * another hash than the paranoid sample's, so the two samples differ. */
static gboolean
recheck_sampled(guint64 seed, guint percent)
{
    guint8 bytes[8];
    for (guint i = 0; i < sizeof bytes; i++)
        bytes[i] = (guint8)(seed >> (8 * i));
    return XXH3_64bits_withSeed(bytes, sizeof bytes, 0x726563686563ULL) % 100 < percent;
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

static void
crash_hook(const SeedTask *task)
{
    const char *text = g_getenv(CRASH_ENV);
    guint64 seed;
    if (text != NULL && !task->rerun && sweep_parse_seed_number(text, &seed) && seed == task->seed)
        abort();
}

/* A worker runs tasks[from..] and writes one line per seed to `fd`. */
static void
worker(const Scenario *scenario, const SweepOptions *o, const GArray *tasks, guint from, int fd)
{
    for (guint i = from; i < tasks->len; i++) {
        const SeedTask *task = &g_array_index(tasks, SeedTask, i);
        crash_hook(task);
        g_autofree char *line = run_seed(scenario, o, task);
        write_all(fd, line, strlen(line));
        write_all(fd, "\n", 1);
    }
}

static void
progress(guint64 done, guint64 total, guint failed, gint64 start_us)
{
    double elapsed = (double)(g_get_monotonic_time() - start_us) / 1e6;
    double rate = elapsed > 0 ? (double)done / elapsed : 0;
    double left = rate > 0 && total > done ? (double)(total - done) / rate : 0;
    int width = 30;
    int filled =
        total > 0 ? (int)((double)width * (double)MIN(done, total) / (double)total) : width;
    fprintf(stderr,
            "\r[%.*s%*s] %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT
            " seeds, %u failed, %.1f seeds/s, %.0f s left   ",
            filled, "##############################", width - filled, "", done, total, failed, rate,
            left);
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

static GArray *
results_new(void)
{
    GArray *results = g_array_new(FALSE, FALSE, sizeof(SeedResult));
    g_array_set_clear_func(results, seed_result_clear);
    return results;
}

/* The marks the runs of a line reached, as bits. */
static guint64
line_marks(JsonObject *object)
{
    guint64 bits = 0;
    JsonArray *runs = member_array(object, "runs");
    for (guint i = 0; runs != NULL && i < json_array_get_length(runs); i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        JsonObject *marks = run != NULL ? member_object(run, "marks") : NULL;
        if (marks == NULL)
            continue;
        g_autoptr(GList) names = json_object_get_members(marks);
        for (GList *n = names; n != NULL; n = n->next) {
            SimMarkId id;
            if (sim_marks_lookup(n->data, &id))
                bits |= G_GUINT64_CONSTANT(1) << id;
        }
    }
    return bits;
}

/* Parses one result line; FALSE if it is not one. */
static gboolean
parse_line(const char *line, SeedResult *out)
{
    g_autoptr(JsonNode) root = json_line_parse(line);
    if (root == NULL)
        return FALSE;
    JsonObject *object = json_node_get_object(root);
    if (!json_object_has_member(object, "seed") || !json_object_has_member(object, "passed"))
        return FALSE;
    out->seed = (guint64)json_object_get_int_member(object, "seed");
    out->passed = json_object_get_boolean_member(object, "passed");
    out->paranoid = json_object_get_boolean_member_with_default(object, "paranoid", FALSE);
    out->rerun = json_object_get_boolean_member_with_default(object, "rerun", FALSE);
    out->marks = line_marks(object);
    out->line = g_strdup(line);
    return TRUE;
}

/* ---- the journal ---- */

/* DIR.journal.jsonl, beside DIR (transfer full). */
static char *
journal_path(const char *out_dir)
{
    g_autofree char *dir = g_strdup(out_dir);
    gsize len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = '\0';
    return g_strconcat(dir, ".journal.jsonl", NULL);
}

/* What a sweep is of: the scenario text, the binary, the --set options and
 * the seeds; sweep.json and the journal's first line carry it. */
static void
add_identity(JsonBuilder *builder, const Scenario *scenario, const SweepOptions *o)
{
    g_autofree char *shard = g_strdup_printf("%u/%u", o->shard_index + 1, o->shard_count);
    json_string(builder, "ksim_version", KSIM_VERSION);
    json_string(builder, "git_commit", KSIM_GIT_COMMIT);
    json_string(builder, "scenario", scenario_name(scenario));
    json_string(builder, "scenario_sha256", scenario_sha256(scenario));
    json_builder_set_member_name(builder, "sets");
    json_builder_begin_array(builder);
    for (guint i = 0; o->sets != NULL && o->sets[i] != NULL; i++)
        json_builder_add_string_value(builder, o->sets[i]);
    json_builder_end_array(builder);
    json_count(builder, "first", o->first);
    json_count(builder, "last", o->last);
    json_string(builder, "shard", shard);
}

static char *
sets_text(JsonObject *object)
{
    JsonArray *sets = member_array(object, "sets");
    GString *text = g_string_new(NULL);
    for (guint i = 0; sets != NULL && i < json_array_get_length(sets); i++)
        g_string_append_printf(text, "%s--set %s", i ? " " : "",
                               json_array_get_string_element(sets, i));
    if (text->len == 0)
        g_string_append(text, "no --set");
    return g_string_free(text, FALSE);
}

static const char *
member_text(JsonObject *object, const char *name)
{
    return json_object_get_string_member_with_default(object, name, "?");
}

/* NULL when `there` (a journal's first line or a sweep.json) is of the
 * same sweep as `here`, else what differs (transfer full). The binary counts
 * only when `binary`: a finished sweep may be redone by a rebuilt ksim. */
static char *
identity_difference(JsonObject *there, JsonObject *here, gboolean binary, gboolean shard)
{
    if (!json_object_has_member(there, "scenario_sha256"))
        return g_strdup("merged shards, not one sweep");
    if (g_strcmp0(member_text(there, "scenario_sha256"), member_text(here, "scenario_sha256")))
        return g_strdup_printf(
            "another scenario text (%s, sha256 %.12s…, not %.12s…)", member_text(there, "scenario"),
            member_text(there, "scenario_sha256"), member_text(here, "scenario_sha256"));
    gint64 first = json_object_get_int_member_with_default(there, "first", -1);
    gint64 last = json_object_get_int_member_with_default(there, "last", -1);
    if (first != json_object_get_int_member(here, "first") ||
        last != json_object_get_int_member(here, "last"))
        return g_strdup_printf("another seed range (%" G_GINT64_FORMAT "..%" G_GINT64_FORMAT
                               ", not %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT ")",
                               first, last, json_object_get_int_member(here, "first"),
                               json_object_get_int_member(here, "last"));
    if (shard && g_strcmp0(member_text(there, "shard"), member_text(here, "shard")))
        return g_strdup_printf("another shard (%s, not %s)", member_text(there, "shard"),
                               member_text(here, "shard"));
    g_autofree char *sets_there = sets_text(there), *sets_here = sets_text(here);
    if (strcmp(sets_there, sets_here) != 0)
        return g_strdup_printf("other settings (%s, not %s)", sets_there, sets_here);
    if (binary && g_strcmp0(member_text(there, "git_commit"), member_text(here, "git_commit")))
        return g_strdup_printf("another ksim binary (commit %s, not %s)",
                               member_text(there, "git_commit"), member_text(here, "git_commit"));
    return NULL;
}

/* The journal's first line for this sweep (transfer full). */
static char *
journal_header(const Scenario *scenario, const SweepOptions *o)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "ksim_sweep_journal");
    json_builder_add_int_value(builder, 1);
    add_identity(builder, scenario, o);
    json_builder_end_object(builder);
    return builder_text(builder);
}

/* Checks that `path`'s identity (its whole text for sweep.json, its first
 * line for a journal) is this sweep's; FALSE with a message otherwise. A
 * missing file is fine. */
static gboolean
check_identity(const char *path, const char *what, const char *header, gboolean binary)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return TRUE;
    char *newline = strchr(text, '\n');
    if (newline != NULL)
        *newline = '\0';
    g_autoptr(JsonNode) there = json_line_parse(text);
    g_autoptr(JsonNode) here = json_line_parse(header);
    g_autofree char *difference =
        there != NULL ? identity_difference(json_node_get_object(there), json_node_get_object(here),
                                            binary, TRUE)
                      : g_strdup("something that is not a sweep's results");
    if (difference == NULL)
        return TRUE;
    fprintf(stderr, "ksim sweep: %s holds %s of %s; give another --out, or remove it\n", path, what,
            difference);
    return FALSE;
}

/* Reads the result lines of the journal at `path` (after its first line)
 * into `results` and `reruns`; a line cut short by a kill is dropped. */
static void
journal_read(const char *path, GArray *results, GArray *reruns)
{
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL))
        return;
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    for (guint i = 1; lines[i] != NULL; i++) {
        SeedResult result;
        if (lines[i][0] != '\0' && parse_line(lines[i], &result))
            g_array_append_val(result.rerun ? reruns : results, result);
    }
}

/* Rewrites the journal atomically with `header` and the results read, so an
 * earlier torn line is gone, and opens it to append. */
static FILE *
journal_open(const char *path, const char *header, GArray *results, GArray *reruns)
{
    GString *text = g_string_new(header);
    g_string_append_c(text, '\n');
    GArray *sets[2] = {results, reruns};
    for (guint s = 0; s < 2; s++) {
        for (guint i = 0; i < sets[s]->len; i++)
            g_string_append_printf(text, "%s\n", g_array_index(sets[s], SeedResult, i).line);
    }
    GError *error = NULL;
    gboolean ok = outfile_write(path, text->str, text->len, &error);
    g_string_free(text, TRUE);
    FILE *file = ok ? fopen(path, "a") : NULL;
    if (ok && file == NULL)
        fprintf(stderr, "ksim sweep: cannot open \"%s\": %s\n", path, g_strerror(errno));
    if (!ok) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
    }
    return file;
}

/* Appends one finished seed's line and flushes it to the kernel, so it
 * survives the death of this process. */
static void
journal_append(FILE *journal, const char *line)
{
    if (journal == NULL)
        return;
    fprintf(journal, "%s\n", line);
    fflush(journal);
}

/* ---- running tasks ---- */

typedef struct {
    const GArray *tasks; /* SeedTask, borrowed */
    guint done;          /* lines received (or crashes counted) */
    pid_t pid;
    int fd;
    GString *buffer;
} Job;

typedef struct {
    const Scenario *scenario;
    const SweepOptions *o;
    FILE *journal;
    GArray *results; /* first-pass lines */
    GArray *reruns;  /* --recheck lines */
    guint failed;
    guint64 total; /* for the progress bar */
    guint64 done;
    gint64 start_us;
    gboolean show;
} Pass;

static void
take_result(Pass *pass, const char *line)
{
    SeedResult result;
    if (!parse_line(line, &result))
        return;
    journal_append(pass->journal, line);
    g_array_append_val(result.rerun ? pass->reruns : pass->results, result);
    pass->failed += !result.passed;
    pass->done++;
}

/* Reads every complete line in the job's buffer. */
static void
take_lines(Pass *pass, Job *job)
{
    char *newline;
    while ((newline = strchr(job->buffer->str, '\n')) != NULL) {
        *newline = '\0';
        take_result(pass, job->buffer->str);
        job->done++;
        g_string_erase(job->buffer, 0, newline - job->buffer->str + 1);
    }
}

/* Forks the job's worker for its tasks from job->done on; FALSE if it
 * cannot. `jobs` are closed in the child. */
static gboolean
spawn(Pass *pass, Job *job, Job *jobs, guint n_jobs)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) {
        fprintf(stderr, "ksim sweep: pipe: %s\n", g_strerror(errno));
        return FALSE;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    job->pid = fork();
    if (job->pid < 0) {
        fprintf(stderr, "ksim sweep: fork: %s\n", g_strerror(errno));
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        return FALSE;
    }
    if (job->pid == 0) {
        /* Die with the sweep; it may have died before the call. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(2);
        close(pipe_fds[0]);
        for (guint k = 0; k < n_jobs; k++) {
            if (jobs[k].fd >= 0)
                close(jobs[k].fd);
        }
        worker(pass->scenario, pass->o, job->tasks, job->done, pipe_fds[1]);
        close(pipe_fds[1]);
        _exit(0);
    }
    close(pipe_fds[1]);
    job->fd = pipe_fds[0];
    return TRUE;
}

/* The job's worker ended: 0 when it finished, RUNNER_EXIT_INVARIANT when a
 * check stopped it, 2 otherwise. A worker killed by a signal fails the seed
 * it was running, and a new worker takes over the rest. */
static int
job_ended(Pass *pass, Job *job, Job *jobs, guint n_jobs, guint index)
{
    int status = 0;
    waitpid(job->pid, &status, 0);
    job->pid = -1;
    if (WIFSIGNALED(status) && job->done < job->tasks->len) {
        const SeedTask *task = &g_array_index(job->tasks, SeedTask, job->done);
        fprintf(stderr,
                "%sksim sweep: the worker running seed %" G_GUINT64_FORMAT
                " died of signal %d (%s); carrying on\n",
                pass->show ? "\n" : "", task->seed, WTERMSIG(status),
                g_strsignal(WTERMSIG(status)));
        g_autofree char *line = crash_line(pass->scenario, pass->o, task, WTERMSIG(status));
        take_result(pass, line);
        job->done++;
        g_string_truncate(job->buffer, 0);
        if (job->done < job->tasks->len && !spawn(pass, job, jobs, n_jobs))
            return 2;
        return 0;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == RUNNER_EXIT_INVARIANT) {
        fprintf(stderr, "ksim sweep: worker %u stopped: an invariant was violated (above)\n",
                index);
        return RUNNER_EXIT_INVARIANT;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "ksim sweep: worker %u failed (status %d)\n", index, status);
        return 2;
    }
    return 0;
}

static int
collect(Pass *pass, Job *jobs, guint n_jobs)
{
    struct pollfd *polls = g_new0(struct pollfd, n_jobs);
    int failure = 0;
    for (;;) {
        guint open = 0;
        for (guint j = 0; j < n_jobs; j++) {
            polls[j] = (struct pollfd){jobs[j].fd, POLLIN, 0};
            open += jobs[j].fd >= 0;
        }
        if (open == 0)
            break;
        if (poll(polls, n_jobs, -1) < 0 && errno != EINTR)
            break;
        for (guint j = 0; j < n_jobs; j++) {
            if (polls[j].fd < 0 || polls[j].revents == 0)
                continue;
            char chunk[65536];
            gssize got = read(polls[j].fd, chunk, sizeof chunk);
            if (got > 0) {
                g_string_append_len(jobs[j].buffer, chunk, got);
                take_lines(pass, &jobs[j]);
            } else if (got == 0 || errno != EINTR) {
                close(jobs[j].fd);
                jobs[j].fd = -1;
                int status = job_ended(pass, &jobs[j], jobs, n_jobs, j);
                failure = failure == RUNNER_EXIT_INVARIANT ? failure : MAX(failure, status);
            }
        }
        if (pass->show)
            progress(pass->done, pass->total, pass->failed, pass->start_us);
    }
    g_free(polls);
    return failure;
}

/* Runs `tasks` over the jobs, each job every jobs-th task; 0 when every
 * worker finished, RUNNER_EXIT_INVARIANT when a check stopped one, 2 when one
 * failed otherwise. */
static int
run_tasks(Pass *pass, const GArray *tasks)
{
    guint n_jobs = MIN((guint)pass->o->jobs, MAX(tasks->len, 1));
    Job *jobs = g_new0(Job, n_jobs);
    GArray **slices = g_new0(GArray *, n_jobs);
    for (guint j = 0; j < n_jobs; j++) {
        slices[j] = g_array_new(FALSE, FALSE, sizeof(SeedTask));
        jobs[j] = (Job){slices[j], 0, -1, -1, g_string_new(NULL)};
    }
    for (guint i = 0; i < tasks->len; i++)
        g_array_append_val(slices[i % n_jobs], g_array_index(tasks, SeedTask, i));
    int failure = 0;
    for (guint j = 0; j < n_jobs && failure == 0; j++) {
        if (slices[j]->len > 0 && !spawn(pass, &jobs[j], jobs, n_jobs))
            failure = 2;
    }
    int collected = collect(pass, jobs, n_jobs);
    failure = failure != 0 ? failure : collected;
    for (guint j = 0; j < n_jobs; j++) {
        g_string_free(jobs[j].buffer, TRUE);
        g_array_free(slices[j], TRUE);
    }
    g_free(slices);
    g_free(jobs);
    return failure;
}

/* ---- determinism re-runs ---- */

/* "label=fingerprint,..." of a line's runs (transfer full). */
static char *
fingerprints(JsonObject *object)
{
    GString *text = g_string_new(NULL);
    JsonArray *runs = member_array(object, "runs");
    for (guint i = 0; runs != NULL && i < json_array_get_length(runs); i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        g_string_append_printf(text, "%s%s %s", i ? ", " : "", member_text(run, "label"),
                               member_text(run, "fingerprint"));
    }
    return g_string_free(text, FALSE);
}

/* Adds to `result`'s line what its re-run found: "recheck": "same", or
 * "differs" with both fingerprint lists, which fails the seed. */
static void
fold_rerun(SeedResult *result, const SeedResult *rerun)
{
    g_autoptr(JsonNode) root = json_line_parse(result->line);
    g_autoptr(JsonNode) again = json_line_parse(rerun->line);
    JsonObject *object = json_node_get_object(root);
    g_autofree char *first = fingerprints(object);
    g_autofree char *second = fingerprints(json_node_get_object(again));
    gboolean same = strcmp(first, second) == 0 &&
                    !json_object_has_member(json_node_get_object(again), "crashed");
    json_object_set_string_member(object, "recheck", same ? "same" : "differs");
    if (!same) {
        g_autofree char *why =
            g_strdup_printf("determinism: fingerprints %s, on the re-run %s", first, second);
        json_object_set_string_member(object, "determinism", why);
        json_object_set_boolean_member(object, "passed", FALSE);
        result->passed = FALSE;
    }
    g_free(result->line);
    result->line = json_text(root);
}

/* A seed whose worker crashed: its line holds no runs (nor fingerprints). */
static gboolean
line_crashed(const SeedResult *r)
{
    return strstr(r->line, "\"crashed\":") != NULL;
}

static gboolean
line_rechecked(const SeedResult *result)
{
    return strstr(result->line, "\"recheck\":") != NULL;
}

/* Folds every re-run into its seed's result; empties `reruns`. */
static void
fold_reruns(GArray *results, GArray *reruns)
{
    g_autoptr(GHashTable) index = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < results->len; i++) {
        SeedResult *r = &g_array_index(results, SeedResult, i);
        g_hash_table_insert(index, &r->seed, r);
    }
    for (guint i = 0; i < reruns->len; i++) {
        const SeedResult *rerun = &g_array_index(reruns, SeedResult, i);
        SeedResult *result = g_hash_table_lookup(index, &rerun->seed);
        if (result != NULL && !line_rechecked(result))
            fold_rerun(result, rerun);
    }
    g_array_set_size(reruns, 0);
}

/* ---- output ---- */

/* The file that marks a directory as an earlier sweep's, which a later sweep
 * may replace (outfile_dir_open). */
#define SWEEP_MARKER "sweep.jsonl"

static void
marks_count(const GArray *results, guint seeds_by_mark[SIM_MARKS_COUNT])
{
    memset(seeds_by_mark, 0, sizeof(guint) * SIM_MARKS_COUNT);
    for (guint i = 0; i < results->len; i++) {
        guint64 bits = g_array_index(results, SeedResult, i).marks;
        for (guint m = 0; m < SIM_MARKS_COUNT; m++)
            seeds_by_mark[m] += (bits >> m) & 1;
    }
}

/* sweep.json's text: the identity (unless `scenario` is NULL: a merge,
 * whose `identity` is the shards' common one), the counts and the seeds
 * per mark, on one line. */
static char *
summary_json(const Scenario *scenario, const SweepOptions *o, JsonObject *identity,
             const GArray *results, guint failed, guint paranoid)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    if (scenario != NULL) {
        add_identity(builder, scenario, o);
    } else {
        json_string(builder, "ksim_version", KSIM_VERSION);
        json_string(builder, "git_commit", KSIM_GIT_COMMIT);
    }
    static const char *const copied[] = {"scenario", "scenario_sha256", "first", "last", NULL};
    for (guint i = 0; identity != NULL && copied[i] != NULL; i++) {
        JsonNode *node = json_object_get_member(identity, copied[i]);
        if (node == NULL)
            continue;
        json_builder_set_member_name(builder, copied[i]);
        json_builder_add_value(builder, json_node_copy(node));
    }
    json_count(builder, "seeds", results->len);
    json_count(builder, "failed", failed);
    json_count(builder, "paranoid_seeds", paranoid);
    guint seeds_by_mark[SIM_MARKS_COUNT];
    marks_count(results, seeds_by_mark);
    json_builder_set_member_name(builder, "marks");
    json_builder_begin_object(builder);
    for (guint m = 0; m < SIM_MARKS_COUNT; m++)
        json_count(builder, sim_marks_name((SimMarkId)m), seeds_by_mark[m]);
    json_builder_end_object(builder);
    json_builder_end_object(builder);
    g_autofree char *text = builder_text(builder);
    return g_strconcat(text, "\n", NULL);
}

/* Writes sweep.jsonl (sorted by seed) and sweep.json into `dir` and renames
 * it into place; takes `dir`. `scenario` is NULL for a merge. */
static gboolean
write_results(OutDir *dir, GArray *results, const Scenario *scenario, const SweepOptions *o,
              JsonObject *identity, GError **error)
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
    g_autofree char *summary = summary_json(scenario, o, identity, results, failed, paranoid);
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

/* What failed in a seed's line: its crash, its determinism re-run, each
 * run's failed expectations (transfer full). */
static char *
failure_reasons(const char *line)
{
    g_autoptr(JsonNode) root = json_line_parse(line);
    GString *text = g_string_new(NULL);
    JsonObject *object = root != NULL ? json_node_get_object(root) : NULL;
    static const char *const own[] = {"crashed", "determinism", NULL};
    for (guint i = 0; object != NULL && own[i] != NULL; i++) {
        if (json_object_has_member(object, own[i]))
            g_string_append_printf(text, "%s%s", text->len ? "; " : "",
                                   member_text(object, own[i]));
    }
    JsonArray *runs = object != NULL ? member_array(object, "runs") : NULL;
    for (guint i = 0; runs != NULL && i < json_array_get_length(runs); i++) {
        JsonObject *run = json_array_get_object_element(runs, i);
        JsonArray *failed = member_array(run, "failed");
        for (guint f = 0; failed != NULL && f < json_array_get_length(failed); f++)
            g_string_append_printf(text, "%s[%s] %s", text->len ? "; " : "",
                                   member_text(run, "label"),
                                   json_array_get_string_element(failed, f));
    }
    return g_string_free(text, FALSE);
}

/* The replay command stored in a failing seed's line (transfer full), or
 * NULL in lines of older sweeps. */
static char *
line_replay(const char *line)
{
    g_autoptr(JsonNode) root = json_line_parse(line);
    JsonObject *object = root != NULL ? json_node_get_object(root) : NULL;
    if (object == NULL || !json_object_has_member(object, "replay"))
        return NULL;
    return g_strdup(member_text(object, "replay"));
}

/* Lists the failing seeds, each with the command that replays it (from the
 * scenario, or as its line recorded it when `scenario` is NULL: a merge)
 * and what failed. */
/* Writes DIR/seed-N/capsule.json for a failing seed and prints its
 * `ksim replay` line. */
static void
print_seed_capsule(const Scenario *scenario, char **sets, const SeedResult *r, const char *out_dir)
{
    GError *error = NULL;
    g_autofree char *capsule =
        run_core_write_seed_capsule(scenario, sets, r->seed, r->line, out_dir, &error);
    if (capsule != NULL) {
        g_autofree char *quoted = g_shell_quote(capsule);
        printf("      or: ksim replay %s\n", quoted);
    } else {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
    }
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
        g_autofree char *replay = scenario != NULL
                                      ? run_core_replay_command(scenario, r->seed, sets, NULL)
                                      : line_replay(r->line);
        if (replay != NULL)
            printf("  seed %" G_GUINT64_FORMAT ": %s\n", r->seed, replay);
        else
            printf("  seed %" G_GUINT64_FORMAT "\n", r->seed);
        if (scenario != NULL && out_dir != NULL && !line_crashed(r))
            print_seed_capsule(scenario, sets, r, out_dir);
        g_autofree char *why = failure_reasons(r->line);
        if (why[0] != '\0')
            printf("      failed: %s\n", why);
    }
    return failed;
}

/* The mark table: seeds per mark, and the marks no seed reached. */
static void
print_marks(const GArray *results)
{
    guint seeds_by_mark[SIM_MARKS_COUNT];
    marks_count(results, seeds_by_mark);
    printf("coverage marks (seeds that reached each, of %u):\n", results->len);
    GString *missed = g_string_new(NULL);
    guint hit = 0;
    for (guint m = 0; m < SIM_MARKS_COUNT; m++) {
        printf("  %-26s %6u\n", sim_marks_name((SimMarkId)m), seeds_by_mark[m]);
        if (seeds_by_mark[m] == 0)
            g_string_append_printf(missed, " %s", sim_marks_name((SimMarkId)m));
        hit += seeds_by_mark[m] > 0;
    }
    printf("marks reached: %u of %u%s%s\n", hit, SIM_MARKS_COUNT,
           missed->len ? "; no seed reached:" : "", missed->str);
    g_string_free(missed, TRUE);
}

static guint
paranoid_count(const GArray *results)
{
    guint count = 0;
    for (guint i = 0; i < results->len; i++)
        count += g_array_index(results, SeedResult, i).paranoid;
    return count;
}

/* ---- merge ---- */

/* A shard's sweep.json, or NULL with a message. */
static JsonNode *
read_summary(const char *dir)
{
    g_autofree char *path = g_build_filename(dir, "sweep.json", NULL);
    g_autofree char *text = NULL;
    GError *error = NULL;
    if (!g_file_get_contents(path, &text, NULL, &error)) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return NULL;
    }
    g_strchomp(text);
    JsonNode *node = json_line_parse(text);
    if (node == NULL)
        fprintf(stderr, "ksim sweep: \"%s\" is not a sweep's summary\n", path);
    return node;
}

/* TRUE when the shards are of one scenario text, one binary, one --set and
 * one seed range, each shard K/N of the same N at most once. */
static gboolean
check_shards(GPtrArray *summaries, char **dirs)
{
    JsonObject *one = json_node_get_object(g_ptr_array_index(summaries, 0));
    g_autoptr(GHashTable) shards = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, NULL);
    for (guint i = 0; i < summaries->len; i++) {
        JsonObject *shard = json_node_get_object(g_ptr_array_index(summaries, i));
        g_autofree char *difference = i > 0 ? identity_difference(shard, one, TRUE, FALSE) : NULL;
        if (difference == NULL && !json_object_has_member(shard, "scenario_sha256"))
            difference = g_strdup("merged shards, not one sweep");
        const char *k = member_text(shard, "shard"), *n = strchr(k, '/');
        const char *n_one = strchr(member_text(one, "shard"), '/');
        if (difference == NULL && g_strcmp0(n, n_one) != 0)
            difference = g_strdup_printf("shard %s, of another number of shards than %s", k,
                                         member_text(one, "shard"));
        if (difference != NULL) {
            fprintf(stderr, "ksim sweep: %s is not a shard of the same sweep as %s: it holds %s\n",
                    dirs[i], dirs[0], difference);
            return FALSE;
        }
        if (g_hash_table_contains(shards, k)) {
            fprintf(stderr, "ksim sweep: shard %s is given twice (%s)\n", k, dirs[i]);
            return FALSE;
        }
        g_hash_table_add(shards, (gpointer)k);
    }
    return TRUE;
}

/* Prints the seeds of first..last no shard has; TRUE when there are none. */
static gboolean
report_missing(GArray *results, JsonObject *identity)
{
    guint64 first = (guint64)json_object_get_int_member(identity, "first");
    guint64 last = (guint64)json_object_get_int_member(identity, "last");
    g_array_sort(results, seed_result_compare);
    GString *shown = g_string_new(NULL);
    guint64 missing = 0;
    guint at = 0;
    for (guint64 seed = first; seed <= last; seed++) {
        while (at < results->len && g_array_index(results, SeedResult, at).seed < seed)
            at++;
        if (at < results->len && g_array_index(results, SeedResult, at).seed == seed)
            continue;
        if (missing++ < MISSING_SHOWN)
            g_string_append_printf(shown, " %" G_GUINT64_FORMAT, seed);
        if (seed == last)
            break;
    }
    if (missing > 0)
        printf("missing seeds (%" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
               "):%s%s\n",
               missing, first, last, shown->str, missing > MISSING_SHOWN ? " ..." : "");
    g_string_free(shown, TRUE);
    return missing == 0;
}

static int
merge(const SweepOptions *o)
{
    g_autoptr(GArray) results = results_new();
    g_autoptr(GArray) reruns = results_new();
    g_autoptr(GPtrArray) summaries =
        g_ptr_array_new_with_free_func((GDestroyNotify)json_node_unref);
    for (guint i = 0; o->rest[i] != NULL; i++) {
        JsonNode *summary = read_summary(o->rest[i]);
        if (summary == NULL)
            return 2;
        g_ptr_array_add(summaries, summary);
        g_autofree char *path = g_build_filename(o->rest[i], "sweep.jsonl", NULL);
        g_autofree char *text = NULL;
        GError *error = NULL;
        if (!g_file_get_contents(path, &text, NULL, &error)) {
            fprintf(stderr, "ksim sweep: %s\n", error->message);
            g_error_free(error);
            return 2;
        }
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        for (guint l = 0; lines[l] != NULL; l++) {
            SeedResult result;
            if (lines[l][0] != '\0' && parse_line(lines[l], &result))
                g_array_append_val(result.rerun ? reruns : results, result);
        }
    }
    if (!check_shards(summaries, o->rest))
        return 2;
    JsonObject *identity = json_node_get_object(g_ptr_array_index(summaries, 0));
    OutDir *dir = open_out(o->out_dir);
    if (dir == NULL)
        return 2;
    GError *error = NULL;
    if (!write_results(dir, results, NULL, o, identity, &error)) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    guint failed = print_failures(results, NULL, NULL, NULL);
    gboolean complete = report_missing(results, identity);
    printf("merged %u seeds, %u failed, %u checked after every event: %s/sweep.jsonl\n",
           results->len, failed, paranoid_count(results), o->out_dir);
    if (!complete)
        return 2;
    return failed > 0 ? 1 : 0;
}

/* ---- the sweep ---- */

/* The shard's seeds of the range not in `done`, from `*next` on, at most
 * `max` of them (0: all); `*next` moves past them. */
static GArray *
missing_tasks(const SweepOptions *o, GHashTable *done, guint64 *next, guint64 max)
{
    GArray *tasks = g_array_new(FALSE, FALSE, sizeof(SeedTask));
    guint64 step = o->shard_count;
    while (*next <= o->last) {
        guint64 seed = *next;
        *next = o->last - seed < step ? o->last + 1 : seed + step;
        if (g_hash_table_contains(done, &seed))
            continue;
        SeedTask task = {seed, FALSE};
        g_array_append_val(tasks, task);
        if (max > 0 && tasks->len >= max)
            break;
    }
    return tasks;
}

static guint64
seed_count(const SweepOptions *o)
{
    if (o->first + o->shard_index > o->last)
        return 0;
    return (o->last - o->first - o->shard_index) / o->shard_count + 1;
}

static GHashTable *
seed_set(const GArray *results)
{
    GHashTable *set = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < results->len; i++)
        g_hash_table_add(set, &g_array_index(results, SeedResult, i).seed);
    return set;
}

/* The re-runs --recheck asks for that are not done yet: sampled seeds with
 * a first-pass result that did not crash and no re-run. */
static GArray *
rerun_tasks(const SweepOptions *o, const GArray *results, const GArray *reruns)
{
    g_autoptr(GHashTable) done = seed_set(reruns);
    GArray *tasks = g_array_new(FALSE, FALSE, sizeof(SeedTask));
    for (guint i = 0; i < results->len; i++) {
        const SeedResult *r = &g_array_index(results, SeedResult, i);
        if (!recheck_sampled(r->seed, o->recheck) || g_hash_table_contains(done, &r->seed) ||
            line_rechecked(r) || line_crashed(r))
            continue;
        SeedTask task = {r->seed, TRUE};
        g_array_append_val(tasks, task);
    }
    return tasks;
}

static guint64
marks_reached(const GArray *results)
{
    guint64 bits = 0;
    for (guint i = 0; i < results->len; i++)
        bits |= g_array_index(results, SeedResult, i).marks;
    return bits;
}

/* The first pass: every missing seed, or with --until-marks rounds of them
 * until every mark is reached or the budget is spent. */
static int
first_pass(Pass *pass)
{
    const SweepOptions *o = pass->o;
    g_autoptr(GHashTable) done = seed_set(pass->results);
    guint64 next = o->first + o->shard_index;
    if (!o->until_marks) {
        g_autoptr(GArray) tasks = missing_tasks(o, done, &next, 0);
        pass->total = tasks->len;
        return run_tasks(pass, tasks);
    }
    const guint64 all = (G_GUINT64_CONSTANT(1) << SIM_MARKS_COUNT) - 1;
    guint64 drawn = 0;
    pass->total = o->budget_seeds > 0 ? MIN(o->budget_seeds, seed_count(o)) : seed_count(o);
    while (next <= o->last && marks_reached(pass->results) != all) {
        if (o->budget_seeds > 0 && drawn >= o->budget_seeds)
            break;
        if (o->budget_us > 0 && g_get_monotonic_time() - pass->start_us >= o->budget_us)
            break;
        guint64 round = UNTIL_MARKS_ROUND;
        if (o->budget_seeds > 0)
            round = MIN(round, o->budget_seeds - drawn);
        g_autoptr(GArray) tasks = missing_tasks(o, done, &next, round);
        drawn += tasks->len;
        int status = run_tasks(pass, tasks);
        if (status != 0)
            return status;
    }
    return 0;
}

/* Checks the directory and the journal of an earlier sweep, and on
 * --resume reads the journal's results. FALSE with a message when they are
 * another sweep's, or when a journal is there without --resume. */
static gboolean
prepare(const char *out_dir, const char *journal, const char *header, const SweepOptions *o,
        GArray *results, GArray *reruns)
{
    g_autofree char *summary = g_build_filename(out_dir, "sweep.json", NULL);
    if (!check_identity(summary, "the results", header, FALSE) ||
        !check_identity(journal, "an interrupted sweep", header, TRUE))
        return FALSE;
    if (!g_file_test(journal, G_FILE_TEST_EXISTS)) {
        if (o->resume)
            fprintf(stderr, "ksim sweep: nothing to resume (no %s): running every seed\n", journal);
        return TRUE;
    }
    if (!o->resume) {
        fprintf(stderr,
                "ksim sweep: %s holds an interrupted sweep of this scenario: --resume runs only "
                "its missing seeds; remove it to start again\n",
                journal);
        return FALSE;
    }
    journal_read(journal, results, reruns);
    printf("resuming %s: %u seeds done\n", journal, results->len);
    return TRUE;
}

static void
print_header(const Scenario *scenario, const SweepOptions *o)
{
    printf("ksim %s (commit %s)\nscenario  %s (%s)\nsha256    %s\n", KSIM_VERSION, KSIM_GIT_COMMIT,
           scenario_name(scenario), scenario_path(scenario), scenario_sha256(scenario));
    printf("seeds     %s%s%s, %" G_GUINT64_FORMAT " %s with %d jobs\n", o->seeds_text,
           o->shard_text != NULL ? ", shard " : "", o->shard_text != NULL ? o->shard_text : "",
           seed_count(o), o->until_marks ? "to draw from until every mark is reached" : "to run",
           o->jobs);
    printf("checks    every invariant after every event for %d%% of the seeds "
           "(--paranoid-sample); %u%% run twice (--recheck)\n",
           o->paranoid_sample, o->recheck);
}

static int
sweep_run(const Scenario *scenario, SweepOptions *o, const char *out_dir)
{
    g_autofree char *journal = journal_path(out_dir);
    g_autofree char *header = journal_header(scenario, o);
    g_autoptr(GArray) results = results_new();
    g_autoptr(GArray) reruns = results_new();
    if (!prepare(out_dir, journal, header, o, results, reruns))
        return 2;
    /* Opened before the workers start, so a place that cannot be written is
     * found before the seeds run, not after. */
    g_autoptr(OutDir) dir = open_out(out_dir);
    if (dir == NULL)
        return 2;
    print_header(scenario, o);
    Pass pass = {scenario, o, NULL, results, reruns, 0, 0, 0, 0, isatty(STDERR_FILENO)};
    pass.journal = journal_open(journal, header, results, reruns);
    if (pass.journal == NULL)
        return 2;
    pass.start_us = g_get_monotonic_time();
    int workers = first_pass(&pass);
    if (workers == 0) {
        g_autoptr(GArray) again = rerun_tasks(o, results, reruns);
        pass.total += again->len;
        workers = run_tasks(&pass, again);
    }
    if (pass.show)
        fprintf(stderr, "\n");
    fclose(pass.journal);
    double wall_s = (double)(g_get_monotonic_time() - pass.start_us) / 1e6;
    guint rechecked = reruns->len;
    fold_reruns(results, reruns);
    GError *error = NULL;
    if (!write_results(g_steal_pointer(&dir), results, scenario, o, NULL, &error)) {
        fprintf(stderr, "ksim sweep: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    gboolean complete = o->until_marks || results->len == seed_count(o);
    if (workers == 0 && complete)
        g_unlink(journal);
    guint failed = print_failures(results, scenario, o->sets, out_dir);
    print_marks(results);
    printf("%u seeds in %.1f s (%.2f seeds/s), %u failed, %u checked after every event, "
           "%u run twice; results in %s/sweep.jsonl\n",
           results->len, wall_s, results->len / MAX(wall_s, 1e-9), failed, paranoid_count(results),
           rechecked, out_dir);
    if (workers != 0)
        return workers;
    if (!complete)
        return 2;
    return failed > 0 ? 1 : 0;
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
    g_autofree char *warning = run_estimate_memory_warning(
        scenario, o->rest[0], (guint)o->jobs, run_estimate_machine_bytes());
    if (warning != NULL)
        fprintf(stderr, "ksim sweep: %s\n", warning);
    g_autofree char *out_dir = o->out_dir != NULL
                                   ? g_strdup(o->out_dir)
                                   : g_strdup_printf("out/%s-sweep", scenario_name(scenario));
    return sweep_run(scenario, o, out_dir);
}

int
cmd_sweep(int argc, char **argv)
{
    SweepOptions options = {0};
    if (!sweep_options_parse(&argc, &argv, &options)) {
        sweep_options_clear(&options);
        return 2;
    }
    int status = options.merge ? merge(&options) : sweep(&options);
    sweep_options_clear(&options);
    return status;
}
