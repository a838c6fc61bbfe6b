/*
 * `ksim diagram CAPSULE|SCENARIO [--seed N] [--set KEY=VALUE ...] [--run N]
 *  --from T1 --to T2 [--nodes NODE,...] [--out FILE.svg] [--force]`: the
 * space-time diagram (diagram.h) of any window of any run. The run is made
 * again, exactly: from a replay capsule (DIR/capsule.json as `ksim run`
 * writes it, or DIR itself) with its scenario text, seed and --set
 * assignments, or from a scenario file loaded as `ksim run` loads it (its
 * seed, or --seed; --set). --run picks one of the scenario's runs (from 1;
 * the first by default). The window is given in durations as the scenario
 * format takes them (25s, 24500ms); --nodes names the lanes, left to right,
 * as the trace names nodes (broker-1, zk, producer-writer) or as KIND:NAME
 * (broker:1, producer:writer); without it, every node that sends or
 * receives a message in the window. Writes FILE.svg (default
 * NAME-runN-FROM-TO.svg here), atomically. Exit status: 0 when written, 2
 * on bad input (a message naming the argument).
 */
#include "commands.h"

#include "capsule.h"
#include "diagram.h"
#include "ksim_version.h"
#include "outfile.h"
#include "run_core.h"
#include "run_estimate.h"
#include "sim_rng.h"
#include "sim_world.h"

#include <stdio.h>
#include <string.h>

/* The message and note records a window keeps at most (80 MiB). */
#define DIAGRAM_COMMAND_RECORDS_MAX (1u << 21)

typedef struct {
    char *seed_text;
    char **sets;
    char *run_text;
    char *from_text;
    char *to_text;
    char *nodes;
    char *out;
    gboolean force;
    char **rest;
} DiagramOptions;

/* What to run: a scenario, its seed and --set assignments, and whether
 * it came from a capsule (whose run's fingerprint is then known). */
typedef struct {
    Scenario *scenario;
    guint64 seed;
    const Capsule *capsule; /* NULL: a scenario file */
} DiagramSource;

static void
options_clear(DiagramOptions *o)
{
    g_free(o->seed_text);
    g_strfreev(o->sets);
    g_free(o->run_text);
    g_free(o->from_text);
    g_free(o->to_text);
    g_free(o->nodes);
    g_free(o->out);
    g_strfreev(o->rest);
}

static gboolean
parse_options(int *argc, char ***argv, DiagramOptions *o)
{
    GOptionEntry entries[] = {
        {"seed", 0, 0, G_OPTION_ARG_STRING, &o->seed_text,
         "the run's seed (a scenario's default: its own; not with a capsule)", "N"},
        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->sets,
         "override a scenario key, as ksim run (not with a capsule)", "KEY=VALUE"},
        {"run", 0, 0, G_OPTION_ARG_STRING, &o->run_text,
         "which of the scenario's runs, from 1 (default 1)", "N"},
        {"from", 0, 0, G_OPTION_ARG_STRING, &o->from_text,
         "the window's start in virtual time, e.g. 9800ms or 9.8s (required)", "T1"},
        {"to", 0, 0, G_OPTION_ARG_STRING, &o->to_text, "the window's end (required)", "T2"},
        {"nodes", 0, 0, G_OPTION_ARG_STRING, &o->nodes,
         "the lanes, left to right, e.g. producer:writer,broker:1,broker:2,zk (default: every "
         "node with a message in the window)",
         "NODE,..."},
        {"out", 0, 0, G_OPTION_ARG_FILENAME, &o->out,
         "the SVG file to write (default: NAME-runN-FROM-TO.svg here)", "FILE.svg"},
        {"force", 0, 0, G_OPTION_ARG_NONE, &o->force,
         "run even when the run's estimated memory or events are over the limits", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->rest, NULL,
         "CAPSULE|SCENARIO"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context = g_option_context_new(
        "- draw the space-time diagram of a window of a run");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok)
        fprintf(stderr, "ksim diagram: %s\n", error->message);
    else if (o->rest == NULL || o->rest[0] == NULL || o->rest[1] != NULL) {
        fprintf(stderr, "ksim diagram: give exactly one capsule or scenario file (see 'ksim "
                        "diagram --help')\n");
        ok = FALSE;
    } else if (o->from_text == NULL || o->to_text == NULL) {
        fprintf(stderr, "ksim diagram: give the window with --from and --to (e.g. --from 9.8s "
                        "--to 10.2s)\n");
        ok = FALSE;
    }
    g_clear_error(&error);
    g_option_context_free(context);
    return ok;
}

/* A duration as the scenario format takes it: a number with a unit
 * (ns, us, ms, s, m, h); a bare number only when it is 0. */
static gboolean
parse_time(const char *option, const char *text, gint64 *ns)
{
    g_autoptr(GError) error = NULL;
    char *end = NULL;
    double bare = g_ascii_strtod(text, &end);
    if (end != text && *end == '\0' && bare != 0.0) {
        fprintf(stderr, "ksim diagram: %s: '%s' needs a unit (ns, us, ms, s, m, h), e.g. %ss\n",
                option, text, text);
        return FALSE;
    }
    if (!sim_parse_duration_ns(text, 0, ns, &error)) {
        fprintf(stderr, "ksim diagram: %s: %s\n", option, error->message);
        return FALSE;
    }
    return TRUE;
}

static gboolean
parse_run(const char *text, guint64 *run)
{
    if (text == NULL) {
        *run = 1;
        return TRUE;
    }
    if (g_ascii_string_to_unsigned(text, 10, 1, G_MAXUINT, run, NULL))
        return TRUE;
    fprintf(stderr, "ksim diagram: --run: '%s' is not a run number (1, 2, ...)\n", text);
    return FALSE;
}

/* DIR stands for DIR/capsule.json; a file ending in .json is a capsule. */
static char *
capsule_path(const char *path)
{
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
        return g_build_filename(path, "capsule.json", NULL);
    if (g_str_has_suffix(path, ".json"))
        return g_strdup(path);
    return NULL;
}

/* Loads what to run; FALSE with the message printed. */
static gboolean
load_source(const DiagramOptions *o, Capsule **capsule_out, DiagramSource *source)
{
    GError *error = NULL;
    g_autofree char *capsule_file = capsule_path(o->rest[0]);
    if (capsule_file == NULL) {
        guint64 seed = 0;
        if (o->seed_text != NULL &&
            !g_ascii_string_to_unsigned(o->seed_text, 10, 0, G_MAXINT64, &seed, NULL)) {
            fprintf(stderr, "ksim diagram: --seed: '%s' is not a non-negative integer up to "
                            "%" G_GINT64_FORMAT "\n",
                    o->seed_text, G_MAXINT64);
            return FALSE;
        }
        source->scenario = run_core_load(o->rest[0], o->sets, &error);
        if (source->scenario == NULL) {
            fprintf(stderr, "ksim diagram: %s\n", error->message);
            g_error_free(error);
            return FALSE;
        }
        source->seed = o->seed_text != NULL ? seed : scenario_seed(source->scenario);
        return TRUE;
    }
    if (o->seed_text != NULL || o->sets != NULL) {
        fprintf(stderr, "ksim diagram: --seed and --set do not go with a capsule: %s fixes the "
                        "seed and the --set assignments of its runs\n",
                capsule_file);
        return FALSE;
    }
    Capsule *capsule = capsule_load(capsule_file, &error);
    if (capsule == NULL) {
        fprintf(stderr, "ksim diagram: %s\n", error->message);
        g_error_free(error);
        return FALSE;
    }
    *capsule_out = capsule;
    if (strcmp(capsule->git_commit, KSIM_GIT_COMMIT) != 0)
        fprintf(stderr, "ksim diagram: warning: %s was made by commit %s, this is commit %s: "
                        "its runs may differ\n",
                capsule_file, capsule->git_commit, KSIM_GIT_COMMIT);
    g_ptr_array_add(capsule->sets, NULL);
    char **sets = (char **)capsule->sets->pdata;
    g_autofree char *display = capsule->scenario_path != NULL
                                   ? g_strdup(capsule->scenario_path)
                                   : g_strdup_printf("%s.ini", capsule->scenario_name);
    source->scenario = run_core_load_bytes(capsule->scenario_text,
                                           strlen(capsule->scenario_text), display, sets, &error);
    g_ptr_array_set_size(capsule->sets, capsule->sets->len - 1);
    if (source->scenario == NULL) {
        fprintf(stderr, "ksim diagram: %s: its scenario does not load: %s\n", capsule_file,
                error->message);
        g_error_free(error);
        return FALSE;
    }
    source->seed = capsule->seed;
    source->capsule = capsule;
    return TRUE;
}

/* "broker:1" -> "broker-1"; any other name as it is. */
static char *
node_name_of(const char *item)
{
    g_autofree char *name = g_strstrip(g_strdup(item));
    const char *colon = strchr(name, ':');
    if (colon == NULL)
        return g_steal_pointer(&name);
    return g_strdup_printf("%.*s-%s", (int)(colon - name), name, colon + 1);
}

static char *
known_nodes(const DiagramTrace *trace)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < diagram_trace_node_count(trace); i++)
        g_string_append_printf(out, "%s%s", i == 0 ? "" : ", ", diagram_trace_node_name(trace, i));
    return g_string_free(out, FALSE);
}

/* The lanes --nodes names (NULL when it is not given); FALSE with the
 * message printed on a name no node has, or one named twice. */
static gboolean
parse_nodes(const char *text, const DiagramTrace *trace, GArray **lanes)
{
    *lanes = NULL;
    if (text == NULL)
        return TRUE;
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    GArray *nodes = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; items[i] != NULL; i++) {
        g_autofree char *name = node_name_of(items[i]);
        guint32 node;
        if (!diagram_trace_node_find(trace, name, &node)) {
            g_autofree char *known = known_nodes(trace);
            fprintf(stderr, "ksim diagram: --nodes: no node '%s' in this run (its nodes: %s; "
                            "broker:1 stands for broker-1)\n",
                    *name != '\0' ? name : items[i], known);
            g_array_free(nodes, TRUE);
            return FALSE;
        }
        for (guint k = 0; k < nodes->len; k++) {
            if (g_array_index(nodes, guint32, k) == node) {
                fprintf(stderr, "ksim diagram: --nodes: '%s' is named twice\n", name);
                g_array_free(nodes, TRUE);
                return FALSE;
            }
        }
        g_array_append_val(nodes, node);
    }
    *lanes = nodes;
    return TRUE;
}

/* Checks --nodes' syntax before the run (the names are checked after it,
 * when the run's nodes are known). */
static gboolean
check_nodes_syntax(const char *text)
{
    if (text == NULL)
        return TRUE;
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        g_autofree char *item = g_strstrip(g_strdup(items[i]));
        if (*item == '\0' || g_str_has_suffix(item, ":") || item[0] == ':') {
            fprintf(stderr, "ksim diagram: --nodes: '%s' has an empty node name (give "
                            "NODE,NODE,... such as broker:1,zk)\n",
                    text);
            return FALSE;
        }
    }
    return TRUE;
}

static guint
count_of(const char *text, const char *needle)
{
    guint n = 0;
    for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

static char *
default_out(const Scenario *scenario, guint64 run, gint64 from_ns, gint64 to_ns)
{
    return g_strdup_printf("%s-run%" G_GUINT64_FORMAT "-%" G_GINT64_FORMAT "ms-%" G_GINT64_FORMAT
                           "ms.svg",
                           scenario_name(scenario), run, from_ns / SIM_NS_PER_MS,
                           (to_ns + SIM_NS_PER_MS - 1) / SIM_NS_PER_MS);
}

static int
draw(const DiagramOptions *o, const DiagramSource *source, guint64 run, gint64 from_ns,
     gint64 to_ns)
{
    g_autoptr(GPtrArray) variants = scenario_variants(source->scenario);
    if (run > variants->len) {
        fprintf(stderr, "ksim diagram: --run %" G_GUINT64_FORMAT ": the scenario makes %u run%s "
                        "(1..%u)\n",
                run, variants->len, variants->len == 1 ? "" : "s", variants->len);
        return 2;
    }
    const ScenarioVariant *variant = g_ptr_array_index(variants, run - 1);
    gint64 end_ns = scenario_variant_duration_ns(variant) + scenario_variant_quiet_ns(variant);
    if (from_ns >= end_ns) {
        fprintf(stderr, "ksim diagram: --from %s: the run ends at %.3f s\n", o->from_text,
                (double)end_ns / 1e9);
        return 2;
    }
    GError *error = NULL;
    if (!o->force && !run_estimate_check(source->scenario, o->rest[0], &error)) {
        fprintf(stderr, "ksim diagram: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    to_ns = MIN(to_ns, end_ns);
    printf("ksim diagram: run %" G_GUINT64_FORMAT "/%u [%s], seed %" G_GUINT64_FORMAT
           ", %.3f–%.3f s\n",
           run, variants->len, scenario_variant_label(variant), source->seed,
           (double)from_ns / 1e9, (double)to_ns / 1e9);
    fflush(stdout);
    RunnerChecks checks = {0};
    checks.diagram_from_ns = from_ns;
    checks.diagram_to_ns = to_ns;
    checks.diagram_records_max = DIAGRAM_COMMAND_RECORDS_MAX;
    g_autoptr(RunnerResult) result = runner_run_checked(variant, source->seed, NULL, &checks);
    g_autoptr(GArray) lanes = NULL;
    if (!parse_nodes(o->nodes, result->diagram_trace, &lanes))
        return 2;
    if (source->capsule != NULL) {
        const CapsuleRun *recorded = g_ptr_array_index(source->capsule->runs, run - 1);
        g_autofree char *now = g_strdup_printf("%016" G_GINT64_MODIFIER "x", result->fingerprint);
        if (g_ascii_strcasecmp(recorded->fingerprint, now) != 0)
            fprintf(stderr, "ksim diagram: warning: run %" G_GUINT64_FORMAT " has fingerprint %s, "
                            "the capsule recorded %s: this is not the run it recorded\n",
                    run, now, recorded->fingerprint);
    }
    g_autofree char *title =
        g_strdup_printf("%s, run %" G_GUINT64_FORMAT " (%s), seed %" G_GUINT64_FORMAT
                        ": %.3f–%.3f s",
                        scenario_name(source->scenario), run, scenario_variant_label(variant),
                        source->seed, (double)from_ns / 1e9, (double)to_ns / 1e9);
    g_autofree char *svg = diagram_window_svg(result->diagram_trace, result->history, from_ns,
                                              to_ns, lanes, title, "ksim-diagram");
    g_autofree char *out =
        o->out != NULL ? g_strdup(o->out) : default_out(source->scenario, run, from_ns, to_ns);
    if (!outfile_write(out, svg, strlen(svg), &error)) {
        fprintf(stderr, "ksim diagram: %s\n", error->message);
        g_error_free(error);
        return 2;
    }
    printf("wrote %s: %u lanes, %u messages, %u fault bands, %u labels (%zu bytes)\n", out,
           count_of(svg, "<g class=\"lane\""), count_of(svg, "<g class=\"message\""),
           count_of(svg, "<g class=\"band\""), count_of(svg, "<g class=\"label\""), strlen(svg));
    return 0;
}

static int
diagram(const DiagramOptions *o)
{
    guint64 run = 1;
    gint64 from_ns = 0, to_ns = 0;
    if (!parse_run(o->run_text, &run) || !parse_time("--from", o->from_text, &from_ns) ||
        !parse_time("--to", o->to_text, &to_ns) || !check_nodes_syntax(o->nodes))
        return 2;
    if (from_ns >= to_ns) {
        fprintf(stderr, "ksim diagram: --from %s is not before --to %s\n", o->from_text,
                o->to_text);
        return 2;
    }
    g_autoptr(Capsule) capsule = NULL;
    DiagramSource source = {0};
    if (!load_source(o, &capsule, &source))
        return 2;
    g_autoptr(Scenario) scenario = source.scenario;
    return draw(o, &source, run, from_ns, to_ns);
}

int
cmd_diagram(int argc, char **argv)
{
    DiagramOptions options = {0};
    int status = 2;
    if (parse_options(&argc, &argv, &options))
        status = diagram(&options);
    options_clear(&options);
    return status;
}
