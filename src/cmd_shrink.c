/*
 * `ksim shrink SCENARIO --seed N [--expect NAME | --anomaly KIND] [--set ...]
 *  [--out DIR] [--jobs N] [--budget 5m]`: from a failing run, the smallest
 * scenario found that still fails the same way.
 *
 * "The same way": with --expect NAME, that expectation fails; with --anomaly
 * KIND, the metric KIND (lost_write, duplicate, ...: reports/metrics.h) is
 * above zero; with neither, the first expectation the run fails (or
 * "liveness") fails. The run shrunk is the first of the scenario's runs that
 * fails so, with the seed given.
 *
 * First the run is materialized: the random faults it drew from the seed
 * become an explicit [fault random-K] timeline (runner.h: RunnerResult's
 * random_faults) and [random-faults] goes. The fault generator draws from
 * its own stream ("faults", sim_rng.h), so no other component's draws move;
 * the materialized scenario must still fail the same way, or shrinking stops.
 * Then, until nothing more can go or the budget is spent:
 *   - ddmin over the faults (shrink.h);
 *   - the cluster: fewer brokers, fewer partitions, a topic fewer;
 *   - the workload: a producer or consumer group fewer, fewer instances, a
 *     lower rate, a shorter scenario;
 *   - each fault: a shorter duration, a later start.
 * Each candidate is a normal run of the edited scenario text in a child
 * process; --jobs N runs N at once. Candidates are tested in a fixed order
 * and the first that still fails is kept, so the result does not depend on
 * --jobs.
 *
 * DIR (default out/NAME-shrink) gets minimal.ini, with a header comment
 * saying what it reproduces, the command it came from and what was removed,
 * and capsule.json, the replay capsule of its run. Exit status: 0 when the
 * minimal scenario fails the same way, 1 when the materialized run does not
 * (nothing to shrink), 2 on bad input or a run that does not fail.
 */
#include "commands.h"

#include "capsule.h"
#include "ksim_version.h"
#include "metrics.h"
#include "outfile.h"
#include "run_core.h"
#include "scenario_write.h"
#include "shrink.h"
#include "sim_assert.h"
#include "sim_world.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Rounds of all passes at most; each round that changes nothing ends it. */
#define SHRINK_ROUNDS_MAX 4
/* The exit status of a candidate's child process. */
#define VERDICT_FAILS 0
#define VERDICT_PASSES 1
#define VERDICT_INVALID 2
#define SHRINK_MARKER "minimal.ini"

typedef struct {
    char *seed_text;
    char *expect;
    char *anomaly;
    char **sets;
    char *out_dir;
    gint jobs;
    char *budget_text;
    char **rest;
} ShrinkOptions;

typedef struct {
    const char *display; /* the scenario's file, for messages */
    char *label;         /* the run being shrunk */
    guint64 seed;
    char *expect;          /* the expectation that must fail, or NULL */
    const Metric *anomaly; /* the metric that must be above zero, or NULL */
    guint jobs;
    gint64 start_us;
    gint64 deadline_us; /* 0: no budget */
    gboolean out_of_time;
    gboolean progress; /* stderr is a terminal */
    guint tried;
    guint invalid;
    guint kept;
    const char *stage;
    ScenarioDoc *doc;  /* the smallest failing scenario so far */
    GPtrArray *removed; /* char*: what the shrink took away, for the header */
} Shrink;

/* ---- options ---- */

static gboolean
parse_options(int *argc, char ***argv, ShrinkOptions *o)
{
    GOptionEntry entries[] = {
        {"seed", 0, 0, G_OPTION_ARG_STRING, &o->seed_text, "the failing run's seed (required)",
         "N"},
        {"expect", 0, 0, G_OPTION_ARG_STRING, &o->expect,
         "the expectation that must keep failing (default: the run's first failed one)", "NAME"},
        {"anomaly", 0, 0, G_OPTION_ARG_STRING, &o->anomaly,
         "instead, the metric that must stay above zero, e.g. lost_write", "KIND"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a scenario key, as ksim run",
         "KEY=VALUE"},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &o->out_dir,
         "where minimal.ini and capsule.json go (default: out/NAME-shrink)", "DIR"},
        {"jobs", 'j', 0, G_OPTION_ARG_INT, &o->jobs, "candidates run at once (default: 1)", "N"},
        {"budget", 0, 0, G_OPTION_ARG_STRING, &o->budget_text,
         "stop trying candidates after this much wall time, e.g. 5m (default: none)", "TIME"},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL, "SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new(
        "- search for the smallest scenario that fails like a failing run");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim shrink: %s\n", error->message);
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

static gboolean
check_options(const ShrinkOptions *o, Shrink *s)
{
    guint64 value = 0;
    const char *problem = NULL;
    if (o->rest == NULL || o->rest[0] == NULL || o->rest[1] != NULL)
        problem = "give exactly one scenario file (see 'ksim shrink --help')";
    else if (o->seed_text == NULL)
        problem = "--seed N is required: the seed of the failing run";
    else if (!g_ascii_string_to_unsigned(o->seed_text, 10, 0, G_MAXINT64, &value, NULL))
        problem = "--seed: not a non-negative integer";
    else if (o->expect != NULL && o->anomaly != NULL)
        problem = "give --expect or --anomaly, not both";
    else if (o->jobs < 0 || o->jobs > 256)
        problem = "--jobs: give 1 to 256";
    if (problem != NULL) {
        fprintf(stderr, "ksim shrink: %s\n", problem);
        return FALSE;
    }
    s->seed = value;
    s->jobs = o->jobs > 0 ? (guint)o->jobs : 1;
    if (o->anomaly != NULL) {
        s->anomaly = metrics_find(o->anomaly);
        if (s->anomaly == NULL) {
            fprintf(stderr, "ksim shrink: --anomaly: '%s' is no metric (see [expect] in "
                            "README.md: lost_write, duplicate, inconsistent_offsets, ...)\n",
                    o->anomaly);
            return FALSE;
        }
    }
    if (o->budget_text != NULL) {
        gint64 budget_ns = 0;
        GError *error = NULL;
        if (!sim_parse_duration_ns(o->budget_text, 0, &budget_ns, &error) || budget_ns <= 0) {
            fprintf(stderr, "ksim shrink: --budget: '%s' is not a positive duration with a unit "
                            "(e.g. 90s, 5m)\n",
                    o->budget_text);
            g_clear_error(&error);
            return FALSE;
        }
        s->deadline_us = s->start_us + budget_ns / 1000;
    }
    return TRUE;
}

/* ---- judging a run ---- */

/* The name of a failed expectation as run_core writes it: "NAME: ...". */
static char *
failed_name(const char *failed)
{
    const char *colon = strchr(failed, ':');
    return colon != NULL ? g_strndup(failed, (gsize)(colon - failed)) : g_strdup(failed);
}

static gboolean
same_failure(const Shrink *s, const RunOutcome *outcome)
{
    if (s->anomaly != NULL) {
        MetricsRun run = {outcome->check, outcome->consumers, outcome->txn};
        return metrics_value(s->anomaly, &run) > 0;
    }
    for (guint i = 0; i < outcome->failed->len; i++) {
        g_autofree char *name = failed_name(g_ptr_array_index(outcome->failed, i));
        if (strcmp(name, s->expect) == 0)
            return TRUE;
    }
    return FALSE;
}

/* How `outcome` fails the way `s` asks: the failed expectation's line, or
 * the anomaly's count. (transfer full) */
static char *
describe_failure(const Shrink *s, const RunOutcome *outcome)
{
    if (s->anomaly != NULL) {
        MetricsRun run = {outcome->check, outcome->consumers, outcome->txn};
        return g_strdup_printf("%s = %g", metrics_name(s->anomaly),
                               metrics_value(s->anomaly, &run));
    }
    for (guint i = 0; i < outcome->failed->len; i++) {
        g_autofree char *name = failed_name(g_ptr_array_index(outcome->failed, i));
        if (strcmp(name, s->expect) == 0)
            return g_strdup(g_ptr_array_index(outcome->failed, i));
    }
    return g_strdup_printf("%s holds", s->expect);
}

/* Runs the run labelled s->label of `text` with the seed: a VERDICT_*. */
static int
verdict(const Shrink *s, const char *text)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario =
        run_core_load_bytes(text, strlen(text), s->display, NULL, &error);
    if (scenario == NULL)
        return VERDICT_INVALID;
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    for (guint i = 0; i < variants->len; i++) {
        if (strcmp(scenario_variant_label(g_ptr_array_index(variants, i)), s->label) != 0)
            continue;
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, i);
        g_autoptr(RunOutcome) outcome = run_core_variant(scenario, variant, s->seed, NULL);
        return same_failure(s, outcome) ? VERDICT_FAILS : VERDICT_PASSES;
    }
    return VERDICT_INVALID;
}

static void
show_progress(const Shrink *s)
{
    if (!s->progress)
        return;
    double elapsed = (double)(g_get_monotonic_time() - s->start_us) / 1e6;
    fprintf(stderr, "\r[%-22.22s] %u candidates tried, %u kept, %.0f s   ", s->stage, s->tried,
            s->kept, elapsed);
    fflush(stderr);
}

static gboolean
budget_spent(Shrink *s)
{
    if (s->deadline_us > 0 && g_get_monotonic_time() >= s->deadline_us)
        s->out_of_time = TRUE;
    return s->out_of_time;
}

/* Runs texts[start..end) at once, one child process each; fills verdicts. */
static void
run_batch(Shrink *s, const GPtrArray *texts, guint start, guint end, int *verdicts)
{
    pid_t pids[256];
    KSIM_ASSERT(end - start <= G_N_ELEMENTS(pids));
    fflush(stdout);
    fflush(stderr);
    for (guint i = start; i < end; i++) {
        pids[i - start] = fork();
        if (pids[i - start] == 0)
            _exit(verdict(s, g_ptr_array_index(texts, i)));
        if (pids[i - start] < 0) /* no process: judged here */
            verdicts[i - start] = verdict(s, g_ptr_array_index(texts, i));
    }
    for (guint i = start; i < end; i++) {
        if (pids[i - start] < 0)
            continue;
        int status = 0;
        while (waitpid(pids[i - start], &status, 0) < 0 && errno == EINTR)
            ;
        /* A candidate that crashes fails another way. */
        verdicts[i - start] = WIFEXITED(status) ? WEXITSTATUS(status) : VERDICT_PASSES;
    }
}

/* The index of the first of `texts` that fails the same way, or -1. */
static gint
first_failing(Shrink *s, const GPtrArray *texts)
{
    for (guint start = 0; start < texts->len; start += s->jobs) {
        if (budget_spent(s))
            return -1;
        guint end = MIN(start + s->jobs, texts->len);
        int verdicts[256];
        run_batch(s, texts, start, end, verdicts);
        s->tried += end - start;
        for (guint i = start; i < end; i++)
            s->invalid += verdicts[i - start] == VERDICT_INVALID;
        show_progress(s);
        for (guint i = start; i < end; i++) {
            if (verdicts[i - start] == VERDICT_FAILS)
                return (gint)i;
        }
    }
    return -1;
}

/* ---- edits ---- */

static void
step(Shrink *s, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
step(Shrink *s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    if (s->progress)
        fprintf(stderr, "\r%*s\r", 70, "");
    double elapsed = (double)(g_get_monotonic_time() - s->start_us) / 1e6;
    printf("  %6.1f s  %s\n", elapsed, text);
    fflush(stdout);
    g_ptr_array_add(s->removed, g_steal_pointer(&text));
}

/* Tries `key` of `group` at each of `values` in order (the smallest change
 * last); keeps the first that still fails. */
static gboolean
try_values(Shrink *s, const char *group, const char *key, GPtrArray *values)
{
    if (values->len == 0)
        return FALSE;
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < values->len; i++) {
        g_autoptr(ScenarioDoc) doc = scenario_doc_copy(s->doc);
        scenario_doc_set(doc, group, key, g_ptr_array_index(values, i));
        g_ptr_array_add(texts, scenario_doc_to_text(doc, NULL));
    }
    gint first = first_failing(s, texts);
    if (first < 0)
        return FALSE;
    const char *old = scenario_doc_get(s->doc, group, key);
    g_autofree char *was = g_strdup(old != NULL ? old : "its default");
    scenario_doc_set(s->doc, group, key, g_ptr_array_index(values, first));
    s->kept++;
    step(s, "[%s] %s: %s -> %s", group, key, was, (char *)g_ptr_array_index(values, first));
    return TRUE;
}

/* Tries removing each of the groups starting with `prefix`, one at a time,
 * until none can go. */
static gboolean
try_remove_groups(Shrink *s, const char *prefix)
{
    gboolean changed = FALSE;
    for (;;) {
        g_autoptr(GPtrArray) names = scenario_doc_groups(s->doc, prefix);
        if (names->len < 2 && strcmp(prefix, "fault ") != 0)
            return changed; /* the last producer, topic or group stays */
        g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < names->len; i++) {
            g_autoptr(ScenarioDoc) doc = scenario_doc_copy(s->doc);
            scenario_doc_remove_group(doc, g_ptr_array_index(names, i));
            g_ptr_array_add(texts, scenario_doc_to_text(doc, NULL));
        }
        gint first = first_failing(s, texts);
        if (first < 0)
            return changed;
        scenario_doc_remove_group(s->doc, g_ptr_array_index(names, first));
        s->kept++;
        step(s, "removed [%s]", (char *)g_ptr_array_index(names, first));
        changed = TRUE;
    }
}

/* The candidates for a count: 1, 2, ... up to `current` - 1, at most eight
 * of them (1, 2, then halves). */
static GPtrArray *
count_candidates(guint64 current, guint64 lowest)
{
    GPtrArray *values = g_ptr_array_new_with_free_func(g_free);
    guint64 picks[] = {lowest, lowest + 1, current / 4, current / 2, current - 1};
    guint64 last = 0;
    for (guint i = 0; i < G_N_ELEMENTS(picks); i++) {
        if (picks[i] < lowest || picks[i] >= current || picks[i] <= last)
            continue;
        g_ptr_array_add(values, g_strdup_printf("%" G_GUINT64_FORMAT, picks[i]));
        last = picks[i];
    }
    return values;
}

static guint64
doc_count(const ScenarioDoc *doc, const char *group, const char *key, guint64 fallback)
{
    const char *text = scenario_doc_get(doc, group, key);
    guint64 value = fallback;
    if (text != NULL && !g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT32, &value, NULL))
        return 0;
    return value;
}

/* A duration key of the document in ns, or -1 when absent or unreadable. */
static gint64
doc_duration(const ScenarioDoc *doc, const char *group, const char *key)
{
    const char *text = scenario_doc_get(doc, group, key);
    gint64 ns = -1;
    if (text == NULL || !sim_parse_duration_ns(text, SIM_NS_PER_MS, &ns, NULL))
        return -1;
    return ns;
}

static char *
format_ms(gint64 ns)
{
    gint64 ms = MAX(ns / SIM_NS_PER_MS, 1);
    return scenario_doc_format_duration(ms * SIM_NS_PER_MS);
}

/* ---- passes ---- */

typedef struct {
    Shrink *shrink;
    GPtrArray *names; /* the fault groups ddmin chooses among */
} FaultSubsets;

static char *
doc_with_faults(const Shrink *s, const GPtrArray *names, const GArray *keep)
{
    g_autoptr(ScenarioDoc) doc = scenario_doc_copy(s->doc);
    for (guint i = 0, k = 0; i < names->len; i++) {
        if (k < keep->len && g_array_index(keep, guint, k) == i) {
            k++;
            continue;
        }
        scenario_doc_remove_group(doc, g_ptr_array_index(names, i));
    }
    return scenario_doc_to_text(doc, NULL);
}

static gint
fault_subsets_test(void *user_data, const GPtrArray *candidates)
{
    FaultSubsets *f = user_data;
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < candidates->len; i++)
        g_ptr_array_add(texts, doc_with_faults(f->shrink, f->names, candidates->pdata[i]));
    return first_failing(f->shrink, texts);
}

static gboolean
pass_faults_ddmin(Shrink *s)
{
    s->stage = "faults (ddmin)";
    g_autoptr(GPtrArray) names = scenario_doc_groups(s->doc, "fault ");
    if (names->len == 0)
        return FALSE;
    /* No fault at all first: a failure without faults needs none. */
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(texts, doc_with_faults(s, names, none));
    g_autoptr(GArray) keep = NULL;
    if (first_failing(s, texts) == 0) {
        keep = g_array_ref(none);
    } else {
        if (names->len < 2)
            return FALSE;
        FaultSubsets subsets = {s, names};
        keep = shrink_ddmin(names->len, fault_subsets_test, &subsets);
    }
    if (keep->len == names->len)
        return FALSE;
    GString *gone = g_string_new(NULL);
    for (guint i = 0, k = 0; i < names->len; i++) {
        if (k < keep->len && g_array_index(keep, guint, k) == i) {
            k++;
            continue;
        }
        const char *name = g_ptr_array_index(names, i);
        g_string_append_printf(gone, "%s%s", gone->len > 0 ? ", " : "", name + strlen("fault "));
        scenario_doc_remove_group(s->doc, name);
    }
    s->kept++;
    step(s, "faults: %u of %u kept; removed %s", keep->len, names->len, gone->str);
    g_string_free(gone, TRUE);
    return TRUE;
}

static gboolean
pass_cluster(Shrink *s)
{
    s->stage = "cluster";
    gboolean changed = FALSE;
    guint64 brokers = doc_count(s->doc, "cluster", "brokers", 3);
    if (brokers > 1) {
        g_autoptr(GPtrArray) values = count_candidates(brokers, 1);
        changed |= try_values(s, "cluster", "brokers", values);
    }
    g_autoptr(GPtrArray) topics = scenario_doc_groups(s->doc, "topic ");
    for (guint i = 0; i < topics->len; i++) {
        const char *topic = g_ptr_array_index(topics, i);
        guint64 partitions = doc_count(s->doc, topic, "partitions", 1);
        if (partitions <= 1)
            continue;
        g_autoptr(GPtrArray) values = count_candidates(partitions, 1);
        changed |= try_values(s, topic, "partitions", values);
    }
    changed |= try_remove_groups(s, "topic ");
    return changed;
}

static gboolean
pass_workload(Shrink *s)
{
    s->stage = "workload";
    gboolean changed = try_remove_groups(s, "producer ");
    changed |= try_remove_groups(s, "consumer-group ");
    g_autoptr(GPtrArray) producers = scenario_doc_groups(s->doc, "producer ");
    for (guint i = 0; i < producers->len; i++) {
        const char *producer = g_ptr_array_index(producers, i);
        guint64 instances = doc_count(s->doc, producer, "instances", 1);
        if (instances > 1) {
            g_autoptr(GPtrArray) values = count_candidates(instances, 1);
            changed |= try_values(s, producer, "instances", values);
        }
        const char *rate_text = scenario_doc_get(s->doc, producer, "workload.rate");
        double rate = rate_text != NULL ? g_ascii_strtod(rate_text, NULL) : 100;
        g_autoptr(GPtrArray) rates = g_ptr_array_new_with_free_func(g_free);
        double divisors[] = {10, 4, 2};
        for (guint d = 0; d < G_N_ELEMENTS(divisors) && isfinite(rate); d++) {
            double lower = floor(rate / divisors[d]);
            if (lower >= 1 && lower < rate)
                g_ptr_array_add(rates, g_strdup_printf("%.0f", lower));
        }
        changed |= try_values(s, producer, "workload.rate", rates);
    }
    return changed;
}

/* The latest time any fault is still on: its start plus its duration. */
static gint64
faults_end(const ScenarioDoc *doc)
{
    gint64 end = 0;
    g_autoptr(GPtrArray) faults = scenario_doc_groups(doc, "fault ");
    for (guint i = 0; i < faults->len; i++) {
        gint64 at = doc_duration(doc, faults->pdata[i], "at");
        gint64 duration = doc_duration(doc, faults->pdata[i], "duration");
        end = MAX(end, MAX(at, 0) + MAX(duration, 0));
    }
    return end;
}

static gboolean
pass_duration(Shrink *s)
{
    s->stage = "duration";
    gint64 duration = doc_duration(s->doc, "scenario", "duration");
    if (duration <= 0)
        return FALSE;
    gint64 end = faults_end(s->doc);
    gint64 tight = (end / SIM_NS_PER_S + 1) * SIM_NS_PER_S;
    g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
    gint64 picks[] = {tight, tight + (duration - tight) / 2};
    for (guint i = 0; i < G_N_ELEMENTS(picks); i++) {
        gint64 pick = picks[i] / SIM_NS_PER_S * SIM_NS_PER_S;
        if (pick > 0 && pick < duration && (i == 0 || pick > picks[0]))
            g_ptr_array_add(values, scenario_doc_format_duration(pick));
    }
    return try_values(s, "scenario", "duration", values);
}

static gboolean
pass_fault_times(Shrink *s)
{
    s->stage = "fault times";
    gboolean changed = FALSE;
    g_autoptr(GPtrArray) faults = scenario_doc_groups(s->doc, "fault ");
    gint64 scenario_end = doc_duration(s->doc, "scenario", "duration");
    for (guint i = 0; i < faults->len; i++) {
        const char *fault = g_ptr_array_index(faults, i);
        gint64 duration = doc_duration(s->doc, fault, "duration");
        if (duration > SIM_NS_PER_MS) {
            g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
            for (gint64 divisor = 16; divisor >= 2; divisor /= 2) {
                gint64 shorter = duration / divisor;
                if (shorter >= SIM_NS_PER_MS)
                    g_ptr_array_add(values, format_ms(shorter));
            }
            changed |= try_values(s, fault, "duration", values);
        }
        /* Later: halfway to the next fault's start, or to the end. */
        gint64 at = doc_duration(s->doc, fault, "at");
        gint64 next = scenario_end;
        for (guint k = 0; k < faults->len; k++) {
            gint64 other = doc_duration(s->doc, faults->pdata[k], "at");
            if (other > at && other < next)
                next = other;
        }
        gint64 later = (at + (next - at) / 2) / SIM_NS_PER_MS * SIM_NS_PER_MS;
        if (at >= 0 && later > at + SIM_NS_PER_MS && later < scenario_end) {
            g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
            g_ptr_array_add(values, scenario_doc_format_duration(later));
            changed |= try_values(s, fault, "at", values);
        }
    }
    return changed;
}

/* ---- materializing ---- */

/* Writes each random fault of `result` as [fault random-K] into `doc`, and
 * drops [random-faults]. */
static guint
materialize(ScenarioDoc *doc, const RunnerResult *result, guint brokers)
{
    scenario_doc_remove_group(doc, "random-faults");
    guint written = 0;
    for (guint i = 0, k = 1; i < result->random_faults->len; i++, k++) {
        const RunnerRandomFault *f = &g_array_index(result->random_faults, RunnerRandomFault, i);
        g_autofree char *group = g_strdup_printf("fault random-%u", k);
        while (scenario_doc_get(doc, group, "at") != NULL) {
            g_free(group);
            group = g_strdup_printf("fault random-%u", ++k);
        }
        g_autofree char *at = scenario_doc_format_duration(f->at_ns);
        scenario_doc_set(doc, group, "at", at);
        scenario_doc_set(doc, group, "action", scenario_action_name(f->action));
        if (f->action == SCENARIO_ACTION_PARTITION) {
            /* As the generator cuts it: the broker alone against the rest. */
            GString *groups = g_string_new(NULL);
            g_string_append_printf(groups, "%d |", f->broker);
            for (guint b = 1, n = 0; b <= brokers; b++) {
                if ((gint32)b != f->broker)
                    g_string_append_printf(groups, "%s%u", n++ > 0 ? "," : " ", b);
            }
            scenario_doc_set(doc, group, "groups", groups->str);
            g_string_free(groups, TRUE);
        } else {
            g_autofree char *target = g_strdup_printf("broker:%d", f->broker);
            scenario_doc_set(doc, group, "target", target);
        }
        if (f->action == SCENARIO_ACTION_DISK_SLOW)
            scenario_doc_set(doc, group, "factor", "10"); /* the generator's factor (runner.c) */
        g_autofree char *duration = scenario_doc_format_duration(f->duration_ns);
        scenario_doc_set(doc, group, "duration", duration);
        written++;
    }
    return written;
}

/* ---- the command ---- */

/* The first run of `scenario` that fails the way `s` asks (setting s->expect
 * from it when neither --expect nor --anomaly was given). NULL with a
 * message when none does. (transfer full) */
static RunOutcome *
failing_run(Shrink *s, const Scenario *scenario)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    while (variants->len > 0) {
        ScenarioVariant *variant = g_ptr_array_steal_index(variants, 0);
        printf("run       %s with seed %" G_GUINT64_FORMAT " ... ", scenario_variant_label(variant),
               s->seed);
        fflush(stdout);
        RunOutcome *outcome = run_core_variant(scenario, variant, s->seed, NULL);
        if (s->expect == NULL && s->anomaly == NULL && outcome->failed->len > 0)
            s->expect = failed_name(g_ptr_array_index(outcome->failed, 0));
        if ((s->expect != NULL || s->anomaly != NULL) && same_failure(s, outcome)) {
            g_autofree char *how = describe_failure(s, outcome);
            printf("fails (%s)\n", how);
            return outcome;
        }
        printf("does not fail that way\n");
        run_outcome_free(outcome);
    }
    if (s->expect == NULL && s->anomaly == NULL)
        fprintf(stderr, "ksim shrink: %s: no run fails with seed %" G_GUINT64_FORMAT
                        "; nothing to shrink\n",
                s->display, s->seed);
    else
        fprintf(stderr, "ksim shrink: %s: no run fails as asked (%s) with seed %" G_GUINT64_FORMAT
                        "; nothing to shrink\n",
                s->display, s->anomaly != NULL ? metrics_name(s->anomaly) : s->expect, s->seed);
    return NULL;
}

static gboolean
check_expect_name(const Shrink *s, const Scenario *scenario)
{
    if (s->expect == NULL || strcmp(s->expect, "liveness") == 0)
        return TRUE;
    const GPtrArray *expects = scenario_expects(scenario);
    GString *names = g_string_new(NULL);
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = g_ptr_array_index(expects, i);
        if (strcmp(expect->name, s->expect) == 0) {
            g_string_free(names, TRUE);
            return TRUE;
        }
        g_string_append_printf(names, "%s%s", i > 0 ? ", " : "", expect->name);
    }
    fprintf(stderr, "ksim shrink: --expect: %s has no expectation '%s' (it has: %s)\n",
            s->display, s->expect, names->len > 0 ? names->str : "none");
    g_string_free(names, TRUE);
    return FALSE;
}

static char *
original_command(const Scenario *scenario, const Shrink *s, char **sets)
{
    return run_core_replay_command(scenario, s->seed, sets, NULL);
}

static char *
header(const Shrink *s, const char *command, const char *reproduces, const char *path)
{
    GString *text = g_string_new(NULL);
    g_string_append_printf(text,
                           "minimal.ini: made by ksim shrink (ksim %s, commit %s).\n"
                           "It reproduces, with seed %" G_GUINT64_FORMAT " and the run '%s':\n"
                           "  %s\n"
                           "as the failing run of\n  %s\n"
                           "did. Run it: ksim run %s (its seed is set below).\n\n"
                           "Removed or changed from the original:\n",
                           KSIM_VERSION, KSIM_GIT_COMMIT, s->seed, s->label, reproduces, command,
                           path);
    for (guint i = 0; i < s->removed->len; i++)
        g_string_append_printf(text, "  - %s\n", (char *)g_ptr_array_index(s->removed, i));
    if (s->out_of_time)
        g_string_append(text, "(the --budget ran out: it may shrink further)\n");
    return g_string_free(text, FALSE);
}

/* Runs the minimal scenario once more, in this process, and writes DIR with
 * minimal.ini and its capsule. */
static int
write_result(Shrink *s, const char *out_dir, const char *command)
{
    g_autofree char *text = scenario_doc_to_text(s->doc, NULL);
    g_autofree char *ini_path = g_build_filename(out_dir, "minimal.ini", NULL);
    GError *error = NULL;
    g_autoptr(Scenario) scenario =
        run_core_load_bytes(text, strlen(text), ini_path, NULL, &error);
    KSIM_ASSERT(scenario != NULL); /* every kept candidate loaded */
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    g_autoptr(GPtrArray) outcomes =
        g_ptr_array_new_with_free_func((GDestroyNotify)run_outcome_free);
    RunOutcome *target = NULL;
    while (variants->len > 0) {
        RunOutcome *outcome =
            run_core_variant(scenario, g_ptr_array_steal_index(variants, 0), s->seed, NULL);
        if (strcmp(scenario_variant_label(outcome->variant), s->label) == 0)
            target = outcome;
        g_ptr_array_add(outcomes, outcome);
    }
    gboolean fails = target != NULL && same_failure(s, target);
    g_autofree char *what = target != NULL ? describe_failure(s, target)
                                           : g_strdup_printf("run '%s' not made", s->label);
    g_autofree char *quoted_ini = g_shell_quote(ini_path);
    g_autofree char *comment = header(s, command, what, quoted_ini);
    g_autofree char *minimal = scenario_doc_to_text(s->doc, comment);
    g_autoptr(Capsule) capsule = run_core_capsule(scenario, s->seed, NULL, outcomes);
    /* The capsule holds the file as written, header and all. */
    g_free(capsule->scenario_text);
    capsule->scenario_text = g_strdup(minimal);
    g_free(capsule->scenario_sha256);
    capsule->scenario_sha256 = g_compute_checksum_for_string(G_CHECKSUM_SHA256, minimal, -1);
    g_free(capsule->scenario_path);
    capsule->scenario_path = g_strdup(ini_path);
    g_free(capsule->command);
    capsule->command = g_strdup_printf("ksim run %s", quoted_ini);
    g_autofree char *json = capsule_to_json(capsule);
    OutDir *dir = outfile_dir_open(out_dir, SHRINK_MARKER, &error);
    gboolean written = dir != NULL &&
                       outfile_dir_write(dir, "minimal.ini", minimal, strlen(minimal), &error) &&
                       outfile_dir_write(dir, "capsule.json", json, strlen(json), &error);
    if (dir != NULL && !written)
        outfile_dir_abort(dir);
    if (!written || !outfile_dir_commit(dir, &error)) {
        fprintf(stderr, "ksim shrink: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    g_autofree char *capsule_path = g_build_filename(out_dir, "capsule.json", NULL);
    g_autofree char *quoted_capsule = g_shell_quote(capsule_path);
    g_autoptr(GPtrArray) faults = scenario_doc_groups(s->doc, "fault ");
    double elapsed = (double)(g_get_monotonic_time() - s->start_us) / 1e6;
    printf("\nshrink    %u candidates tried (%u not valid scenarios), %u kept, in %.1f s%s\n",
           s->tried, s->invalid, s->kept, elapsed,
           s->out_of_time ? " (the budget ran out)" : "");
    printf("minimal   %s: %u fault%s; %s\n", ini_path, faults->len, faults->len == 1 ? "" : "s",
           fails ? "fails the same way" : "DOES NOT fail the same way");
    printf("run it    ksim run %s\n", quoted_ini);
    printf("replay    ksim replay %s\n", quoted_capsule);
    return fails ? 0 : 1;
}

static int
shrink(const ShrinkOptions *o, Shrink *s)
{
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(o->rest[0], o->sets, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim shrink: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    if (!check_expect_name(s, scenario))
        return 2;
    printf("ksim %s (commit %s)\nscenario  %s (%s)\n", KSIM_VERSION, KSIM_GIT_COMMIT,
           scenario_name(scenario), o->rest[0]);
    g_autoptr(RunOutcome) original = failing_run(s, scenario);
    if (original == NULL)
        return 2;
    s->label = g_strdup(scenario_variant_label(original->variant));
    g_autofree char *command = original_command(scenario, s, o->sets);
    s->doc = scenario_doc_new(scenario, original->variant);
    g_autofree char *name = g_strdup_printf("%s-minimal", scenario_name(scenario));
    scenario_doc_set(s->doc, "scenario", "name", name);
    g_autofree char *seed = g_strdup_printf("%" G_GUINT64_FORMAT, s->seed);
    scenario_doc_set(s->doc, "scenario", "seed", seed);
    if (scenario_variant_random_faults(original->variant) != NULL) {
        guint brokers = scenario_variant_cluster(original->variant)->brokers;
        guint written = materialize(s->doc, original->result, brokers);
        step(s, "[random-faults] written out as %u [fault random-K] groups (the faults seed %s "
                "drew)",
             written, seed);
        g_autofree char *text = scenario_doc_to_text(s->doc, NULL);
        g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(texts, g_steal_pointer(&text));
        s->stage = "materialized";
        if (first_failing(s, texts) != 0) {
            fprintf(stderr, "\nksim shrink: the run with its random faults written out does not "
                            "fail the same way%s; nothing shrunk\n",
                    s->out_of_time ? " (or the budget ran out)" : "");
            return 1;
        }
    }
    printf("shrinking with %u job%s%s%s:\n", s->jobs, s->jobs == 1 ? "" : "s",
           o->budget_text != NULL ? ", budget " : "", o->budget_text != NULL ? o->budget_text : "");
    for (guint round = 0; round < SHRINK_ROUNDS_MAX && !budget_spent(s); round++) {
        gboolean changed = pass_faults_ddmin(s);
        changed |= pass_cluster(s);
        changed |= pass_workload(s);
        changed |= pass_duration(s);
        changed |= pass_fault_times(s);
        if (!changed)
            break;
    }
    if (s->progress)
        fprintf(stderr, "\r%*s\r", 70, "");
    g_autofree char *out_dir = o->out_dir != NULL
                                   ? g_strdup(o->out_dir)
                                   : g_strdup_printf("out/%s-shrink", scenario_name(scenario));
    return write_result(s, out_dir, command);
}

int
cmd_shrink(int argc, char **argv)
{
    ShrinkOptions options = {0};
    Shrink s = {0};
    s.start_us = g_get_monotonic_time();
    s.progress = isatty(STDERR_FILENO);
    s.removed = g_ptr_array_new_with_free_func(g_free);
    int status = 2;
    if (parse_options(&argc, &argv, &options) && check_options(&options, &s)) {
        s.display = options.rest[0];
        s.expect = g_strdup(options.expect);
        status = shrink(&options, &s);
    }
    scenario_doc_free(s.doc);
    g_free(s.label);
    g_free(s.expect);
    g_ptr_array_unref(s.removed);
    g_free(options.seed_text);
    g_free(options.expect);
    g_free(options.anomaly);
    g_strfreev(options.sets);
    g_free(options.out_dir);
    g_free(options.budget_text);
    g_strfreev(options.rest);
    return status;
}
