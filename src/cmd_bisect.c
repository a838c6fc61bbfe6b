/*
 * `ksim bisect`: two searches over runs, each probe a normal run.
 *
 * The point of no return: `ksim bisect SCENARIO --seed N [--expect NAME |
 * --anomaly KIND] [--set KEY=VALUE ...]` takes a failing run and finds the
 * earliest virtual time T such that healing every fault at T (the runner's
 * runner_run_healed: everything restarted, resumed and mended, no fault after
 * T, the workload and the quiet period as scenarized) still fails the same
 * way: the same expectation fails, or the same anomaly kind is found. It
 * bisects over heal times in milliseconds, between 0 (no fault at all) and
 * the fault phase's end (the run as it is), and prints T with the cluster
 * events just before it: what happened between the last heal time that
 * passes and T sealed the failure.
 *
 * A threshold: `ksim bisect SCENARIO --key K --range A..B [--seeds 1..20]
 * [--expect NAME | --anomaly KIND]` finds the value of one integer key
 * (with an optional unit, e.g. 1000ms..9000ms) where the failure starts:
 * it runs every seed at both ends, then bisects between the end where no
 * seed fails and the end where some do, printing the failing fraction at
 * each probe.
 *
 * Both searches assume the failure is monotone in what they vary (healing
 * later never helps; the key's effect has one direction); each probe is
 * printed, so a reader sees where that does not hold.
 *
 * "The same way": --expect NAME, an expectation of that name fails (or
 * "liveness", the convergence check); --anomaly KIND, the checker counts at
 * least one anomaly of that kind (lost_write, duplicate, nonmonotonic_send,
 * inconsistent_offsets, failed_but_present). Without either, the first
 * expectation the unhealed run fails.
 */
#include "commands.h"

#include "run_core.h"

#include <stdio.h>
#include <string.h>

/* Events printed before the point of no return. */
#define EVENTS_SHOWN 12
/* Probes at most, whatever the range (each halves it). */
#define PROBES_MAX 80

typedef struct {
    gint64 seed;
    char *expect;
    char *anomaly;
    char **sets;
    char *key;
    char *range_text;
    char *seeds_text;
    char **rest;
} BisectOptions;

/* How a run must fail: one expectation, or one anomaly kind. */
typedef struct {
    char *expect;          /* the expectation's name, or NULL */
    gint anomaly;          /* a CheckerAnomaly, or -1 */
} Failure;

static void
options_clear(BisectOptions *o)
{
    g_free(o->expect);
    g_free(o->anomaly);
    g_strfreev(o->sets);
    g_free(o->key);
    g_free(o->range_text);
    g_free(o->seeds_text);
    g_strfreev(o->rest);
}

static gboolean
parse_options(int *argc, char ***argv, BisectOptions *o)
{
    o->seed = -1;
    GOptionEntry entries[] = {
        {"seed", 0, 0, G_OPTION_ARG_INT64, &o->seed,
         "the failing run's seed (the point of no return)", "N"},
        {"expect", 0, 0, G_OPTION_ARG_STRING, &o->expect,
         "the expectation that must fail (default: the first that fails)", "NAME"},
        {"anomaly", 0, 0, G_OPTION_ARG_STRING, &o->anomaly,
         "the anomaly kind that must be found, e.g. lost_write", "KIND"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets, "override a scenario key",
         "KEY=VALUE"},
        {"key", 0, 0, G_OPTION_ARG_STRING, &o->key,
         "the key whose threshold to find (as --set names it)", "KEY"},
        {"range", 0, 0, G_OPTION_ARG_STRING, &o->range_text,
         "the key's values to search, integers with an optional unit", "A..B"},
        {"seeds", 0, 0, G_OPTION_ARG_STRING, &o->seeds_text,
         "with --key: the seeds each value runs (default: 1..20)", "A..B"},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL, "SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new(
        "(--seed N | --key K --range A..B) - the point of no return, or a key's "
        "threshold");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim bisect: %s\n", error->message);
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

/* ---- failures ---- */

static gboolean
parse_anomaly(const char *name, gint *out)
{
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        if (strcmp(checker_anomaly_name((CheckerAnomaly)a), name) == 0) {
            *out = (gint)a;
            return TRUE;
        }
    }
    return FALSE;
}

/* The name of a failed expectation's description ("NAME: ..."). */
static char *
expect_name(const char *description)
{
    const char *colon = strchr(description, ':');
    return colon != NULL ? g_strndup(description, (gsize)(colon - description))
                         : g_strdup(description);
}

static gboolean
fails(const RunOutcome *outcome, const Failure *failure)
{
    if (failure->anomaly >= 0)
        return checker_result_counts(outcome->check)->anomalies[failure->anomaly] > 0;
    for (guint i = 0; i < outcome->failed->len; i++) {
        g_autofree char *name = expect_name(g_ptr_array_index(outcome->failed, i));
        if (strcmp(name, failure->expect) == 0)
            return TRUE;
    }
    return FALSE;
}

static char *
failure_text(const Failure *failure)
{
    if (failure->anomaly >= 0)
        return g_strdup_printf("anomaly %s", checker_anomaly_name((CheckerAnomaly)failure->anomaly));
    return g_strdup_printf("expectation %s", failure->expect);
}

/* Reads --expect or --anomaly; FALSE with a message when wrong. */
static gboolean
failure_from_options(const BisectOptions *o, const Scenario *scenario, Failure *failure)
{
    failure->anomaly = -1;
    failure->expect = NULL;
    if (o->expect != NULL && o->anomaly != NULL) {
        fprintf(stderr, "ksim bisect: give --expect or --anomaly, not both\n");
        return FALSE;
    }
    if (o->anomaly != NULL && !parse_anomaly(o->anomaly, &failure->anomaly)) {
        fprintf(stderr, "ksim bisect: --anomaly takes one of");
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
            fprintf(stderr, " %s", checker_anomaly_name((CheckerAnomaly)a));
        fprintf(stderr, " (got '%s')\n", o->anomaly);
        return FALSE;
    }
    if (o->expect == NULL)
        return TRUE;
    const GPtrArray *expects = scenario_expects(scenario);
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = g_ptr_array_index(expects, i);
        if (strcmp(expect->name, o->expect) == 0) {
            failure->expect = g_strdup(o->expect);
            return TRUE;
        }
    }
    if (strcmp(o->expect, "liveness") == 0) {
        failure->expect = g_strdup(o->expect);
        return TRUE;
    }
    fprintf(stderr, "ksim bisect: %s has no expectation named '%s'\n", scenario_path(scenario),
            o->expect);
    return FALSE;
}

/* ---- runs ---- */

/* Runs variant `index` of `scenario` with `seed`, healed at `heal_at_ns`
 * (-1: as scenarized). (transfer full) */
static RunOutcome *
probe(const Scenario *scenario, guint index, guint64 seed, char **sets, gint64 heal_at_ns)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    ScenarioVariant *variant = g_ptr_array_steal_index(variants, index);
    RunCoreChecks checks = {.sets = sets, .heal = heal_at_ns >= 0, .heal_at_ns = heal_at_ns};
    return run_core_variant_checked(scenario, variant, seed, NULL, &checks);
}

static guint
variant_count(const Scenario *scenario)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    return variants->len;
}

/* Finds the first variant whose unhealed run fails as `failure` says (and
 * fills `failure` from it when no kind was given); FALSE when none does. */
static gboolean
find_failing_variant(const Scenario *scenario, guint64 seed, char **sets, Failure *failure,
                     guint *index, gint64 *duration_ns)
{
    for (guint v = 0; v < variant_count(scenario); v++) {
        g_autoptr(RunOutcome) outcome = probe(scenario, v, seed, sets, -1);
        if (failure->expect == NULL && failure->anomaly < 0 && outcome->failed->len > 0)
            failure->expect = expect_name(g_ptr_array_index(outcome->failed, 0));
        if ((failure->expect != NULL || failure->anomaly >= 0) && fails(outcome, failure)) {
            *index = v;
            *duration_ns = outcome->result->last_heal_ns;
            return TRUE;
        }
    }
    return FALSE;
}

/* Prints the cluster events of `outcome` from `from_ns` to `to_ns`, the
 * last EVENTS_SHOWN of them. */
static void
print_events(const RunOutcome *outcome, gint64 from_ns, gint64 to_ns)
{
    const GArray *events = history_events(outcome->result->history);
    g_autoptr(GPtrArray) shown = g_ptr_array_new();
    for (guint i = events->len; i > 0 && shown->len < EVENTS_SHOWN; i--) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i - 1);
        if (e->time_ns < from_ns)
            break;
        /* Events without a text are the LEO/HW records the checker reads. */
        if (e->time_ns <= to_ns && e->text != NULL && e->text[0] != '\0')
            g_ptr_array_add(shown, (gpointer)e);
    }
    if (shown->len == 0)
        printf("  (no cluster event between %.3f s and %.3f s)\n", from_ns / 1e9, to_ns / 1e9);
    for (guint i = shown->len; i > 0; i--) {
        const HistoryEvent *e = g_ptr_array_index(shown, i - 1);
        printf("  %s\n", e->text);
    }
}

/* The first examples of the failure's anomaly kind, one sentence each. */
static void
print_examples(const RunOutcome *outcome, const Failure *failure)
{
    if (failure->anomaly < 0)
        return;
    const GArray *examples = checker_result_examples(outcome->check, failure->anomaly);
    for (guint i = 0; i < examples->len && i < 3; i++)
        printf("  %s\n", g_array_index(examples, CheckerExample, i).summary);
}

static const char *
verdict(gboolean failed)
{
    return failed ? "fails" : "passes";
}

/* ---- the point of no return ---- */

static int
bisect_heal(const Scenario *scenario, const BisectOptions *o, Failure *failure)
{
    guint64 seed = (guint64)o->seed;
    guint index = 0;
    gint64 duration_ns = 0;
    if (!find_failing_variant(scenario, seed, o->sets, failure, &index, &duration_ns)) {
        g_autofree char *what =
            failure->expect != NULL || failure->anomaly >= 0 ? failure_text(failure) : NULL;
        fprintf(stderr, "ksim bisect: seed %" G_GUINT64_FORMAT " of %s does not fail%s%s: "
                        "nothing to bisect\n",
                seed, scenario_path(scenario), what != NULL ? " by " : "",
                what != NULL ? what : "");
        return 2;
    }
    g_autofree char *what = failure_text(failure);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    printf("bisect    %s seed %" G_GUINT64_FORMAT ", run %s: fails by %s\n",
           scenario_name(scenario), seed,
           scenario_variant_label(g_ptr_array_index(variants, index)), what);
    printf("probe     heal at %9.3f s: fails (the run as it is)\n", duration_ns / 1e9);
    /* Invariant: healing at hi fails, healing at lo passes (once checked). */
    gint64 lo = 0, hi = duration_ns / SIM_NS_PER_MS;
    {
        g_autoptr(RunOutcome) none = probe(scenario, index, seed, o->sets, 0);
        gboolean failed = fails(none, failure);
        printf("probe     heal at %9.3f s: %s\n", 0.0, verdict(failed));
        if (failed) {
            printf("it fails without any fault: there is no point of no return to find\n");
            return 1;
        }
    }
    for (guint probes = 0; hi - lo > 1 && probes < PROBES_MAX; probes++) {
        gint64 mid = lo + (hi - lo) / 2;
        g_autoptr(RunOutcome) outcome = probe(scenario, index, seed, o->sets, mid * SIM_NS_PER_MS);
        gboolean failed = fails(outcome, failure);
        printf("probe     heal at %9.3f s: %s\n", mid / 1e3, verdict(failed));
        fflush(stdout);
        if (failed)
            hi = mid;
        else
            lo = mid;
    }
    g_autoptr(RunOutcome) sealed = probe(scenario, index, seed, o->sets, hi * SIM_NS_PER_MS);
    printf("\npoint of no return: %.3f s. Healing every fault at %.3f s passes; at %.3f s the "
           "run still fails by %s.\n",
           hi / 1e3, lo / 1e3, hi / 1e3, what);
    const CheckerCounts *counts = checker_result_counts(sealed->check);
    printf("healed at %.3f s:", hi / 1e3);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        printf(" %s=%" G_GUINT64_FORMAT, checker_anomaly_name((CheckerAnomaly)a),
               counts->anomalies[a]);
    printf("\n");
    print_examples(sealed, failure);
    printf("cluster events in the second before it (of the run healed at %.3f s):\n", hi / 1e3);
    print_events(sealed, (hi - 1000) * SIM_NS_PER_MS, hi * SIM_NS_PER_MS);
    g_autofree char *replay = run_core_replay_command(scenario, seed, o->sets, NULL);
    printf("replay    %s\n", replay);
    return 0;
}

/* ---- a key's threshold ---- */

/* "1000ms" into 1000 and "ms". */
static gboolean
split_value(const char *text, gint64 *number, char **unit)
{
    const char *end = text;
    while (g_ascii_isdigit(*end))
        end++;
    g_autofree char *digits = g_strndup(text, (gsize)(end - text));
    guint64 value;
    if (!g_ascii_string_to_unsigned(digits, 10, 0, G_MAXINT64 / 2, &value, NULL))
        return FALSE;
    for (const char *c = end; *c != '\0'; c++) {
        if (!g_ascii_isalpha(*c))
            return FALSE;
    }
    *number = (gint64)value;
    *unit = g_strdup(end);
    return TRUE;
}

static gboolean
parse_value_range(const char *text, gint64 *a, gint64 *b, char **unit)
{
    g_auto(GStrv) parts = g_strsplit(text, "..", 2);
    g_autofree char *unit_b = NULL;
    if (g_strv_length(parts) != 2 || !split_value(parts[0], a, unit) ||
        !split_value(parts[1], b, &unit_b))
        return FALSE;
    return strcmp(*unit, unit_b) == 0 && *a < *b;
}

typedef struct {
    const Scenario *scenario; /* the scenario as loaded, for its path */
    const BisectOptions *o;
    const Failure *failure;
    guint64 first, last;      /* the seeds */
    const char *unit;
} KeySearch;

/* How many seeds fail with the key at `value`; -1 when the value is bad
 * input (the message is printed). */
static gint64
failing_seeds(const KeySearch *k, gint64 value)
{
    g_autofree char *assignment =
        g_strdup_printf("%s=%" G_GINT64_FORMAT "%s", k->o->key, value, k->unit);
    GPtrArray *sets = g_ptr_array_new();
    for (guint i = 0; k->o->sets != NULL && k->o->sets[i] != NULL; i++)
        g_ptr_array_add(sets, k->o->sets[i]);
    g_ptr_array_add(sets, assignment);
    g_ptr_array_add(sets, NULL);
    char **all = (char **)g_ptr_array_free(sets, FALSE);
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(scenario_path(k->scenario), all, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim bisect: %s\n", error->message);
        g_error_free(error);
        g_free(all);
        return -1;
    }
    gint64 failed = 0;
    for (guint64 seed = k->first; seed <= k->last; seed++) {
        gboolean seed_failed = FALSE;
        for (guint v = 0; v < variant_count(scenario) && !seed_failed; v++) {
            g_autoptr(RunOutcome) outcome = probe(scenario, v, seed, all, -1);
            seed_failed = fails(outcome, k->failure);
        }
        failed += seed_failed;
    }
    g_free(all);
    printf("probe     %s=%" G_GINT64_FORMAT "%s: %" G_GINT64_FORMAT "/%" G_GUINT64_FORMAT
           " seeds fail (%.0f%%)\n",
           k->o->key, value, k->unit, failed, k->last - k->first + 1,
           100.0 * (double)failed / (double)(k->last - k->first + 1));
    fflush(stdout);
    return failed;
}

static int
bisect_key(const Scenario *scenario, const BisectOptions *o, Failure *failure)
{
    gint64 a, b;
    g_autofree char *unit = NULL;
    if (o->range_text == NULL || !parse_value_range(o->range_text, &a, &b, &unit)) {
        fprintf(stderr, "ksim bisect: --range takes A..B, integers with A < B and the same "
                        "optional unit, e.g. 1000..9000 or 1000ms..9000ms (got '%s')\n",
                o->range_text != NULL ? o->range_text : "");
        return 2;
    }
    KeySearch k = {scenario, o, failure, 1, 20, unit};
    if (o->seeds_text != NULL) {
        g_auto(GStrv) parts = g_strsplit(o->seeds_text, "..", 2);
        if (g_strv_length(parts) != 2 ||
            !g_ascii_string_to_unsigned(parts[0], 10, 0, G_MAXINT64, &k.first, NULL) ||
            !g_ascii_string_to_unsigned(parts[1], 10, 0, G_MAXINT64, &k.last, NULL) ||
            k.first > k.last) {
            fprintf(stderr, "ksim bisect: --seeds takes A..B with A <= B (got '%s')\n",
                    o->seeds_text);
            return 2;
        }
    }
    if (failure->expect == NULL && failure->anomaly < 0) {
        fprintf(stderr, "ksim bisect: --key needs --expect NAME or --anomaly KIND\n");
        return 2;
    }
    g_autofree char *what = failure_text(failure);
    printf("bisect    %s over %s, seeds %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
           ": where %s starts to fail\n",
           o->key, o->range_text, k.first, k.last, what);
    gint64 at_a = failing_seeds(&k, a), at_b = at_a < 0 ? -1 : failing_seeds(&k, b);
    if (at_a < 0 || at_b < 0)
        return 2;
    if ((at_a == 0) == (at_b == 0)) {
        printf("no threshold in %s: %s at both ends\n", o->range_text,
               at_a == 0 ? "no seed fails" : "some seeds fail");
        return 1;
    }
    /* Invariant: no seed fails at `good`, some fail at `bad`. */
    gint64 good = at_a == 0 ? a : b, bad = at_a == 0 ? b : a, bad_count = at_a == 0 ? at_b : at_a;
    for (guint probes = 0; ABS(bad - good) > 1 && probes < PROBES_MAX; probes++) {
        gint64 mid = good + (bad - good) / 2;
        gint64 count = failing_seeds(&k, mid);
        if (count < 0)
            return 2;
        if (count > 0) {
            bad = mid;
            bad_count = count;
        } else {
            good = mid;
        }
    }
    printf("\nthreshold: %s=%" G_GINT64_FORMAT "%s is the first value %s which %s fails "
           "(%" G_GINT64_FORMAT "/%" G_GUINT64_FORMAT " seeds); at %" G_GINT64_FORMAT
           "%s no seed fails\n",
           o->key, bad, unit, bad > good ? "upward" : "downward", what, bad_count,
           k.last - k.first + 1, good, unit);
    return 0;
}

static int
bisect(BisectOptions *o)
{
    if (o->rest == NULL || o->rest[0] == NULL || o->rest[1] != NULL) {
        fprintf(stderr, "ksim bisect: give exactly one scenario file (see 'ksim bisect --help')\n");
        return 2;
    }
    if ((o->seed >= 0) == (o->key != NULL)) {
        fprintf(stderr, "ksim bisect: give --seed N (the point of no return) or --key K "
                        "--range A..B (a threshold)\n");
        return 2;
    }
    GError *error = NULL;
    g_autoptr(Scenario) scenario = run_core_load(o->rest[0], o->sets, &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim bisect: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    Failure failure;
    if (!failure_from_options(o, scenario, &failure))
        return 2;
    int status =
        o->seed >= 0 ? bisect_heal(scenario, o, &failure) : bisect_key(scenario, o, &failure);
    g_free(failure.expect);
    return status;
}

int
cmd_bisect(int argc, char **argv)
{
    BisectOptions options = {0};
    int status = parse_options(&argc, &argv, &options) ? bisect(&options) : 2;
    options_clear(&options);
    return status;
}
