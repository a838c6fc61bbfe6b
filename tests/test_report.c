/*
 * Report tests: the files of report_write are written and well-formed
 * (summary.json parses with the schema and the checker's numbers,
 * every CSV row has its header's columns, the HTML opens with the durability
 * table and is self-contained), the data behind the plots (latency thinning,
 * replica lines), the behaviour without gnuplot, and the terminal table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#include "checker.h"
#include "history.h"
#include "isr_fixture.h"
#include "plot.h"
#include "report.h"

#define MS(x) ((gint64)(x)*G_GINT64_CONSTANT(1000000))
#define PROCESS 3

/* ---- fixtures ---- */

static void
remove_tree(const char *directory)
{
    g_autoptr(GDir) dir = g_dir_open(directory, 0, NULL);
    const char *name;
    while (dir != NULL && (name = g_dir_read_name(dir)) != NULL) {
        g_autofree char *path = g_build_filename(directory, name, NULL);
        g_unlink(path);
    }
    g_rmdir(directory);
}

static int
setup_tmpdir(void **state)
{
    *state = g_dir_make_tmp("ksim-test-report-XXXXXX", NULL);
    return *state == NULL ? -1 : 0;
}

static int
teardown_tmpdir(void **state)
{
    remove_tree(*state);
    g_free(*state);
    return 0;
}

static void
event_add(History *h, gint64 time_ms, HistoryEventKind kind, gint32 broker, gint64 offset,
          gint64 offset_end, gint64 hw, guint32 isr_mask, const char *text)
{
    HistoryEvent event = {0};
    event.time_ns = MS(time_ms);
    event.kind = kind;
    event.broker = broker;
    event.partition = kind == HISTORY_EVENT_NODE ? -1 : 0;
    event.leader_epoch = 1;
    event.offset = offset;
    event.offset_end = offset_end;
    event.hw = hw;
    event.isr = isr_of_mask(h, isr_mask);
    event.acks = 1;
    event.text = (char *)text;
    history_event(h, &event);
}

static void
replica_add(History *h, gint32 broker, gboolean leader, gint64 hw, const guint64 *values, guint n)
{
    HistoryReplica replica = {0};
    replica.broker = broker;
    replica.is_leader = leader;
    replica.online = TRUE;
    replica.leo = n;
    replica.hw = hw;
    replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
    for (guint i = 0; i < n; i++) {
        HistoryRecord record = {(gint64)i, values[i]};
        g_array_append_val(replica.records, record);
    }
    /* Every record from a leader of epoch 1. */
    replica.epochs = g_array_new(FALSE, FALSE, sizeof(HistoryEpochStart));
    HistoryEpochStart epoch = {0, 1};
    g_array_append_val(replica.epochs, epoch);
    history_add_replica(h, &replica);
}

/* `n` sends of 10 ms each, acknowledged by broker 1; with `lost` > 0 the
 * leader crashes after the last ack, broker 2 is elected with the first n -
 * lost records, broker 3 truncates, and the last `lost` are lost. */
static History *
history_run(guint n, guint lost)
{
    History *h = history_new();
    history_topic(h, "t");
    history_set_process_name(h, PROCESS, "producer");
    g_autofree guint64 *values = g_new0(guint64, n);
    for (guint i = 0; i < n; i++) {
        values[i] = 1000 + i;
        guint64 op = history_invoke(h, MS(100 * i), HISTORY_FN_SEND, PROCESS, 0, 0, 0, values[i]);
        event_add(h, 100 * i + 5 + i % 7, HISTORY_EVENT_ACK, 1, i, i + 1, i, 0xe, NULL);
        history_complete(h, op, MS(100 * i + 6 + i % 7), HISTORY_OK, 0, i, 0);
    }
    if (lost > 0) {
        gint64 t = 100 * n;
        event_add(h, t, HISTORY_EVENT_NODE, 1, -1, -1, -1, 0, "broker 1 crashed");
        event_add(h, t + 50, HISTORY_EVENT_ELECTED, 2, n - lost, -1, n - lost, 0xc,
                  "broker 2 became leader of t-0 in epoch 2");
        event_add(h, t + 60, HISTORY_EVENT_TRUNCATED, 3, n - lost, n, n - lost, 0,
                  "broker 3 truncated t-0 (becoming follower)");
    }
    replica_add(h, 2, TRUE, n - lost, values, n - lost);
    replica_add(h, 3, FALSE, n - lost, values, n - lost);
    return h;
}

typedef struct {
    History *histories[2];
    ReportRun runs[2];
    ReportSetting settings[2][2];
    ReportWindow window;
    ReportInput input;
} Scenario;

static Scenario *
scenario_new(void)
{
    static const char *const failed[] = {"lost_write == 0", NULL};
    Scenario *s = g_new0(Scenario, 1);
    s->histories[0] = history_run(40, 3);
    s->histories[1] = history_run(40, 0);
    s->window = (ReportWindow){MS(3000), MS(4100), "crash broker 1"};
    for (guint i = 0; i < 2; i++) {
        ReportRun *run = &s->runs[i];
        report_run_init(run);
        run->label = i == 0 ? "acks=1" : "acks=all, min.insync.replicas=2";
        s->settings[i][0] = (ReportSetting){"acks", i == 0 ? "1" : "all"};
        s->settings[i][1] = (ReportSetting){"min.insync.replicas", i == 0 ? "1" : "2"};
        run->settings = s->settings[i];
        run->settings_len = 2;
        run->fingerprint = "00ff00ff00ff00ff";
        run->virtual_s = 4.4;
        run->wall_s = 0.25;
        run->events = 12345;
        run->history = s->histories[i];
        run->windows = &s->window;
        run->windows_len = 1;
        run->last_heal_ns = MS(4100);
    }
    s->runs[0].expectations_failed = failed;
    s->input = (ReportInput){"0.1.0", "abcdef123456", "acks-durability", "5e5e", 7, s->runs, 2, TRUE};
    return s;
}

static void
scenario_free(Scenario *s)
{
    history_free(s->histories[0]);
    history_free(s->histories[1]);
    g_free(s);
}

/* ---- reading the files back ---- */

/* Not inlined: GCC 12 at -O3 then takes the returned text for a pointer to
 * the local `contents` (a false -Wdangling-pointer). */
static G_NO_INLINE char *
read_file(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    char *contents = NULL;
    if (!g_file_get_contents(path, &contents, NULL, NULL))
        fail_msg("cannot read %s", path);
    return contents;
}

static gboolean
file_exists(const char *dir, const char *name)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);
    return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

/* Fields of one CSV line: commas outside double quotes, plus one. */
static guint
csv_fields(const char *line)
{
    guint fields = 1;
    gboolean quoted = FALSE;
    for (const char *c = line; *c != '\0'; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == ',' && !quoted)
            fields++;
    }
    assert_false(quoted);
    return fields;
}

/* Checks every row against the header; returns the data rows. */
static guint
csv_check(const char *dir, const char *name)
{
    g_autofree char *text = read_file(dir, name);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    guint columns = csv_fields(lines[0]), rows = 0;
    for (guint i = 1; lines[i] != NULL; i++) {
        if (lines[i][0] == '\0')
            continue;
        if (csv_fields(lines[i]) != columns)
            fail_msg("%s line %u: %u fields, header has %u", name, i + 1, csv_fields(lines[i]),
                     columns);
        rows++;
    }
    return rows;
}

static JsonObject *
object_member(JsonObject *object, const char *name)
{
    if (!json_object_has_member(object, name))
        fail_msg("summary.json lacks \"%s\"", name);
    return json_object_get_object_member(object, name);
}

static void
assert_members(JsonObject *object, const char *const *names)
{
    for (guint i = 0; names[i] != NULL; i++) {
        if (!json_object_has_member(object, names[i]))
            fail_msg("summary.json lacks \"%s\"", names[i]);
    }
}

static gboolean
gnuplot_draws_png(void)
{
    PlotTerminals terminals = {0};
    return plot_gnuplot_available() && plot_terminals_probe(&terminals, NULL) && terminals.svg &&
           terminals.png != PLOT_PNG_NONE;
}

/* ---- tests ---- */

static void
check_run_schema(JsonObject *run)
{
    static const char *const members[] = {
        "label",   "settings",  "fingerprint",          "virtual_s",  "wall_s",       "events",
        "produce", "anomalies", "invariant_violations", "latency_ms", "expectations", NULL};
    static const char *const produce[] = {"attempted", "acked", "failed", "unknown", NULL};
    static const char *const anomalies[] = {"lost_write", "duplicate", "nonmonotonic_send",
                                            "inconsistent_offsets", NULL};
    static const char *const latency[] = {"p50", "p90", "p99", "p999", "max", NULL};
    static const char *const expectations[] = {"passed", "failed", NULL};
    assert_members(run, members);
    assert_members(object_member(run, "produce"), produce);
    assert_members(object_member(run, "anomalies"), anomalies);
    assert_members(object_member(object_member(run, "latency_ms"), "produce"), latency);
    assert_members(object_member(run, "expectations"), expectations);
}

static void
test_report_summary_json_schema(void **state)
{
    /* Goal: summary.json parses, has the schema and the checker's numbers. */
    Scenario *s = scenario_new();
    g_autoptr(GError) error = NULL;
    assert_true(report_write(&s->input, *state, NULL, &error));
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autofree char *path = g_build_filename(*state, "summary.json", NULL);
    assert_true(json_parser_load_from_file(parser, path, &error));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    static const char *const top[] = {"ksim_version", "git_commit", "scenario", "scenario_sha256",
                                      "seed",         "runs",       NULL};
    assert_members(root, top);
    assert_int_equal(json_object_get_int_member(root, "seed"), 7);
    assert_string_equal(json_object_get_string_member(root, "scenario"), "acks-durability");
    JsonArray *runs = json_object_get_array_member(root, "runs");
    assert_int_equal(json_array_get_length(runs), 2);
    for (guint i = 0; i < 2; i++)
        check_run_schema(json_array_get_object_element(runs, i));
    JsonObject *lossy = json_array_get_object_element(runs, 0);
    assert_string_equal(json_object_get_string_member(lossy, "label"), "acks=1");
    assert_string_equal(
        json_object_get_string_member(object_member(lossy, "settings"), "min.insync.replicas"),
        "1");
    assert_int_equal(json_object_get_int_member(object_member(lossy, "anomalies"), "lost_write"),
                     3);
    assert_int_equal(json_object_get_int_member(object_member(lossy, "produce"), "acked"), 40);
    JsonObject *expectations = object_member(lossy, "expectations");
    assert_false(json_object_get_boolean_member(expectations, "passed"));
    assert_string_equal(
        json_array_get_string_element(json_object_get_array_member(expectations, "failed"), 0),
        "lost_write == 0");
    JsonObject *clean = json_array_get_object_element(runs, 1);
    assert_true(json_object_get_boolean_member(object_member(clean, "expectations"), "passed"));
    assert_int_equal(json_object_get_int_member(object_member(clean, "anomalies"), "lost_write"),
                     0);
    scenario_free(s);
}

static void
test_report_consumer_group_section(void **state)
{
    /* Goal: a history with a consumer group gets its "consumers" object in
     * summary.json (with examples explained), a line in the terminal table,
     * and a section in report.md; one without groups gets an empty object
     * and no section. */
    Scenario *s = scenario_new();
    History *h = s->histories[1];
    history_set_process_name(h, 60, "consumer-g-1");
    history_set_process_group(h, 60, "g");
    gint64 t = MS(5000);
    history_record(h, t, HISTORY_FN_ASSIGN, 60, 0, 0, 0, 0, 0);
    for (gint64 o = 0; o < 40; o++)
        history_record(h, t + o, HISTORY_FN_POLL, 60, 0, 0, o, 0, (guint64)(1000 + o));
    guint64 op = history_invoke(h, MS(5100), HISTORY_FN_COMMIT, 60, 0, 0, 0, 40);
    history_complete(h, op, MS(5101), HISTORY_OK, 0, 40, 0);
    for (gint64 o = 0; o < 38; o++)
        history_record(h, MS(5200) + o, HISTORY_FN_PROCESS, 60, 0, 0, o, 0, (guint64)(1000 + o));
    g_autofree char *text = report_summary_json(&s->input, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    assert_true(json_parser_load_from_data(parser, text, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonArray *runs = json_object_get_array_member(root, "runs");
    JsonObject *none = object_member(json_array_get_object_element(runs, 0), "consumers");
    assert_int_equal(json_object_get_size(none), 0);
    JsonObject *consumers = object_member(json_array_get_object_element(runs, 1), "consumers");
    JsonObject *g = object_member(consumers, "g");
    static const char *const members[] = {"processed", "lost_consumption", "duplicate_consumption",
                                          "poll_skip", "nonmonotonic_poll", "e2e_p50_ms",
                                          "e2e_p99_ms", "examples", NULL};
    assert_members(g, members);
    assert_int_equal(json_object_get_int_member(g, "processed"), 38);
    assert_int_equal(json_object_get_int_member(g, "lost_consumption"), 2);
    JsonArray *lost =
        json_object_get_array_member(object_member(g, "examples"), "lost_consumption");
    assert_int_equal(json_array_get_length(lost), 2);
    JsonArray *chain =
        json_object_get_array_member(json_array_get_object_element(lost, 0), "explanation");
    assert_true(json_array_get_length(chain) >= 2);
    char *table = NULL;
    size_t table_len = 0;
    FILE *stream = open_memstream(&table, &table_len);
    report_print_table(stream, &s->input);
    fclose(stream);
    assert_non_null(strstr(table, "  group g: processed 38, lost_consumption 2"));
    free(table);
    g_autoptr(GError) error = NULL;
    assert_true(report_write(&s->input, *state, NULL, &error));
    g_autofree char *md = read_file(*state, "report.md");
    assert_non_null(strstr(md, "## Consumer groups"));
    assert_non_null(strstr(md, "Group g, lost_consumption: 2"));
    scenario_free(s);
}

static void
test_report_summary_numbers_match_checker(void **state)
{
    /* Goal: the latency and counts in the JSON are the checker's, and short
     * decimals are written short. */
    (void)state;
    Scenario *s = scenario_new();
    g_autoptr(CheckerResult) result = checker_run(s->histories[0], NULL);
    s->runs[0].result = result;
    g_autofree char *text = report_summary_json(&s->input, NULL);
    assert_non_null(strstr(text, "\"virtual_s\": 4.4,"));
    assert_non_null(strstr(text, "\"wall_s\": 0.25,"));
    g_autoptr(JsonParser) parser = json_parser_new();
    assert_true(json_parser_load_from_data(parser, text, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    JsonObject *run = json_array_get_object_element(json_object_get_array_member(root, "runs"), 0);
    JsonObject *produce = object_member(object_member(run, "latency_ms"), "produce");
    const StatsHistogram *h = checker_result_latency(result, CHECKER_LATENCY_ACKED);
    assert_true(json_object_get_double_member(produce, "p50") ==
                (double)stats_histogram_quantile(h, 0.5) / 1e6);
    assert_true(json_object_get_double_member(produce, "max") ==
                (double)stats_histogram_max(h) / 1e6);
    JsonArray *lost = json_object_get_array_member(object_member(run, "examples"), "lost_write");
    assert_int_equal(json_array_get_length(lost), 3);
    JsonObject *example = json_array_get_object_element(lost, 0);
    JsonArray *chain = json_object_get_array_member(example, "explanation");
    assert_true(json_array_get_length(chain) >= 4);
    checker_result_free(g_steal_pointer(&result));
    scenario_free(s);
}

static void
test_report_csv_files_well_formed(void **state)
{
    /* Goal: every CSV exists with a consistent column count and the rows
     * its plot needs. */
    Scenario *s = scenario_new();
    assert_true(report_write(&s->input, *state, NULL, NULL));
    assert_int_equal(csv_check(*state, "outcomes.csv"), 2);
    assert_int_equal(csv_check(*state, "anomalies.csv"), 3);
    static const char *const prefixes[] = {"run1-acks-1", "run2-acks-all-min-insync-replicas-2"};
    for (guint i = 0; i < 2; i++) {
        g_autofree char *latency = g_strdup_printf("%s-latency.csv", prefixes[i]);
        g_autofree char *cdf = g_strdup_printf("%s-latency-cdf.csv", prefixes[i]);
        g_autofree char *throughput = g_strdup_printf("%s-throughput.csv", prefixes[i]);
        g_autofree char *events = g_strdup_printf("%s-events.csv", prefixes[i]);
        g_autofree char *replicas = g_strdup_printf("%s-replicas-t-0.csv", prefixes[i]);
        assert_int_equal(csv_check(*state, latency), 40);
        assert_true(csv_check(*state, cdf) > 0);
        assert_int_equal(csv_check(*state, throughput), 4);
        assert_int_equal(csv_check(*state, events), i == 0 ? 3 : 0);
        assert_true(csv_check(*state, replicas) > 2);
    }
    g_autofree char *outcomes = read_file(*state, "outcomes.csv");
    assert_non_null(strstr(outcomes, "\"acks=all, min.insync.replicas=2\",40,40,0,"));
    scenario_free(s);
}

/* Reads column `column` (from 0) of the row of a CSV whose time column is
 * the last at or before time_s. */
static gint64
replica_value_at(const char *dir, const char *name, double time_s, guint column)
{
    g_autofree char *text = read_file(dir, name);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    gint64 value = -1;
    for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++) {
        g_auto(GStrv) fields = g_strsplit(lines[i], ",", -1);
        if (g_ascii_strtod(fields[0], NULL) > time_s)
            break;
        value = g_ascii_strtoll(fields[column], NULL, 10);
    }
    return value;
}

static void
test_report_replica_lines(void **state)
{
    /* Goal: the LEO/HW lines follow the ACK, ELECTED and TRUNCATED events. */
    Scenario *s = scenario_new();
    assert_true(report_write(&s->input, *state, NULL, NULL));
    const char *name = "run1-acks-1-replicas-t-0.csv";
    g_autofree char *text = read_file(*state, name);
    assert_true(g_str_has_prefix(
        text, "time_s,leo_broker1,hw_broker1,leo_broker2,hw_broker2,leo_broker3,hw_broker3,"
              "isr_size\n"));
    /* After the last ACK (3.9 s): leader 1 at LEO 40, HW 39; followers 2
     * and 3 in the ISR at least at the HW. */
    assert_int_equal(replica_value_at(*state, name, 3.95, 1), 40);
    assert_int_equal(replica_value_at(*state, name, 3.95, 2), 39);
    assert_int_equal(replica_value_at(*state, name, 3.95, 3), 39);
    assert_int_equal(replica_value_at(*state, name, 3.95, 7), 3);
    /* Broker 2 elected with LEO 37; broker 3 truncated to 37. */
    assert_int_equal(replica_value_at(*state, name, 4.055, 3), 37);
    assert_int_equal(replica_value_at(*state, name, 4.055, 7), 2);
    assert_int_equal(replica_value_at(*state, name, 4.065, 5), 37);
    assert_int_equal(replica_value_at(*state, name, 4.065, 6), 37);
    scenario_free(s);
}

static void
test_report_latency_points_thinned(void **state)
{
    /* Goal: a long run's latency CSV keeps about the target number of points
     * plus every send slower than the p99, including the slowest. */
    History *h = history_new();
    history_topic(h, "t");
    const guint n = 50000;
    gint64 slowest = 0, now = 0;
    for (guint i = 0; i < n; i++) {
        gint64 latency = MS(1) + (i % 997) * 1000 + (i == 31337 ? MS(900) : 0);
        slowest = MAX(slowest, latency);
        guint64 op = history_invoke(h, now, HISTORY_FN_SEND, 1, 0, 0, 0, i + 1);
        now += latency;
        history_complete(h, op, now, HISTORY_OK, 0, i, 0);
    }
    ReportRun run;
    report_run_init(&run);
    run.label = "long";
    run.history = h;
    ReportInput input = {"0", "0", "long", "0", 1, &run, 1, FALSE};
    assert_true(report_write(&input, *state, NULL, NULL));
    guint rows = csv_check(*state, "run1-long-latency.csv");
    assert_true(rows >= REPORT_LATENCY_POINTS_TARGET - 1);
    assert_true(rows <= REPORT_LATENCY_POINTS_TARGET + n / 100 + 1);
    g_autofree char *text = read_file(*state, "run1-long-latency.csv");
    g_autofree char *slow = g_strdup_printf(",%.15g\n", (double)slowest / 1e6);
    assert_non_null(strstr(text, slow));
    history_free(h);
}

static void
test_report_html_order_and_plots(void **state)
{
    /* Goal: report.html/md open with the verdict (its table and the runs'
     * patterns), then explanations, durability, latency, timeline; with
     * gnuplot the plots are inline and no temporary is left. */
    Scenario *s = scenario_new();
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    assert_true(report_write(&s->input, *state, warnings, NULL));
    static const char *const files[] = {"report.html", "report.md"};
    for (guint f = 0; f < 2; f++) {
        g_autofree char *text = read_file(*state, files[f]);
        const char *verdict = strstr(text, "Verdict");
        const char *durability = strstr(text, "Durability");
        const char *explanations = strstr(text, "Explanations");
        const char *latency = strstr(text, "Latency");
        const char *timeline = strstr(text, "Timeline");
        assert_non_null(verdict);
        assert_non_null(strstr(text, "pattern"));
        assert_true(verdict < explanations && explanations < durability && durability < latency &&
                    latency < timeline);
        assert_non_null(strstr(text, "broker 1, leader of t-0 in epoch 1, acknowledged offset"));
        assert_non_null(strstr(text, "FAILED"));
    }
    g_autofree char *html = read_file(*state, "report.html");
    assert_true(g_str_has_prefix(html, "<!DOCTYPE html>"));
    assert_non_null(strstr(html, "</html>"));
    if (!gnuplot_draws_png()) {
        assert_int_equal(warnings->len, 1);
        scenario_free(s);
        return;
    }
    assert_int_equal(warnings->len, 0);
    static const char *const plots[] = {"outcomes", "latency-cdf", "latency-timeline", "throughput",
                                        "run1-acks-1-replicas-t-0"};
    for (guint i = 0; i < G_N_ELEMENTS(plots); i++) {
        g_autofree char *svg = g_strdup_printf("%s.svg", plots[i]);
        g_autofree char *png = g_strdup_printf("%s.png", plots[i]);
        g_autofree char *gp = g_strdup_printf("%s.gp", plots[i]);
        assert_true(file_exists(*state, svg) && file_exists(*state, png));
        assert_true(file_exists(*state, gp));
    }
    assert_non_null(strstr(html, "<img src=\"data:image/png;base64,"));
    assert_null(strstr(html, ".svg\""));
    g_autoptr(GDir) dir = g_dir_open(*state, 0, NULL);
    const char *name;
    while ((name = g_dir_read_name(dir)) != NULL)
        assert_null(strstr(name, ".tmp."));
    scenario_free(s);
}

static void
test_report_without_gnuplot(void **state)
{
    /* Goal: without gnuplot everything but the images is written, with one
     * warning that names gnuplot, shown in the report and the summary. */
    Scenario *s = scenario_new();
    g_autofree char *path = g_strdup(g_getenv("PATH"));
    g_setenv("PATH", *state, TRUE);
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    gboolean ok = report_write(&s->input, *state, warnings, NULL);
    if (path != NULL)
        g_setenv("PATH", path, TRUE);
    assert_true(ok);
    assert_int_equal(warnings->len, 1);
    assert_non_null(strstr(g_ptr_array_index(warnings, 0), "gnuplot"));
    static const char *const files[] = {"summary.json", "report.md", "report.html", "outcomes.csv",
                                        "run1-acks-1-latency.csv"};
    for (guint i = 0; i < G_N_ELEMENTS(files); i++)
        assert_true(file_exists(*state, files[i]));
    assert_false(file_exists(*state, "outcomes.svg"));
    assert_false(file_exists(*state, "outcomes.png"));
    g_autofree char *summary = read_file(*state, "summary.json");
    assert_non_null(strstr(summary, "gnuplot is not on the PATH"));
    g_autofree char *html = read_file(*state, "report.html");
    assert_non_null(strstr(html, "class=\"warning\""));
    assert_null(strstr(html, "<img"));
    scenario_free(s);
}

/* A gnuplot that lists an SVG terminal, then draws half of each plot's first
 * image and fails, saying where it ran. */
static const char fake_gnuplot[] =
    "#!/bin/sh\n"
    "case \"$*\" in *'set terminal'*) echo '   svg  W3C Scalable Vector Graphics'; exit 0;; esac\n"
    "out=$(sed -n \"s/^set output '\\(.*\\)'$/\\1/p\" | head -n 1)\n"
    "echo '<svg' > \"$out\"\n"
    "echo \"cannot finish $(pwd)/$out\" >&2\n"
    "exit 1\n";

static void
test_report_gnuplot_fails(void **state)
{
    /* Goal: a plot gnuplot fails to draw is a warning naming the report
     * directory (not the temporary one it was drawn in), its half image is
     * removed, and the rest of the report is written. */
    Scenario *s = scenario_new();
    g_autofree char *bin = g_dir_make_tmp("ksim-test-report-bin-XXXXXX", NULL);
    assert_non_null(bin);
    g_autofree char *program = g_build_filename(bin, "gnuplot", NULL);
    assert_true(g_file_set_contents(program, fake_gnuplot, -1, NULL));
    assert_int_equal(g_chmod(program, 0755), 0);
    g_autofree char *path = g_strdup(g_getenv("PATH"));
    g_autofree char *fake_path = g_strconcat(bin, ":", path, NULL);
    g_setenv("PATH", fake_path, TRUE);
    g_autoptr(GPtrArray) warnings = g_ptr_array_new_with_free_func(g_free);
    gboolean ok = report_write(&s->input, *state, warnings, NULL);
    g_setenv("PATH", path, TRUE);
    g_unlink(program);
    g_rmdir(bin);
    assert_true(ok);
    assert_true(warnings->len > 0);
    g_autofree char *shown = g_strdup_printf("cannot finish %s/outcomes.svg", (char *)*state);
    g_autofree char *where = g_strdup_printf("gnuplot failed in \"%s\"", (char *)*state);
    assert_non_null(strstr(g_ptr_array_index(warnings, 0), "plot outcomes left out"));
    assert_non_null(strstr(g_ptr_array_index(warnings, 0), shown));
    for (guint i = 0; i < warnings->len; i++) {
        assert_non_null(strstr(g_ptr_array_index(warnings, i), where));
        assert_null(strstr(g_ptr_array_index(warnings, i), ".tmp-"));
    }
    assert_true(file_exists(*state, "outcomes.gp"));
    assert_false(file_exists(*state, "outcomes.svg"));
    assert_true(file_exists(*state, "summary.json"));
    scenario_free(s);
}

static void
test_report_terminal_table(void **state)
{
    /* Goal: the table shows run, acked, lost, duplicated, reordered, p50, p99. */
    (void)state;
    Scenario *s = scenario_new();
    char *text = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&text, &len);
    report_print_table(stream, &s->input);
    fclose(stream);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    assert_int_equal(g_strv_length(lines), 4);
    assert_true(g_str_has_prefix(lines[0], "run"));
    static const char *const columns[] = {"acked",     "lost",   "duplicated",
                                          "reordered", "p50 ms", "p99 ms"};
    for (guint i = 0; i < G_N_ELEMENTS(columns); i++)
        assert_non_null(strstr(lines[0], columns[i]));
    g_auto(GStrv) fields = g_strsplit_set(lines[1], " ", -1);
    GPtrArray *words = g_ptr_array_new();
    for (guint i = 0; fields[i] != NULL; i++) {
        if (fields[i][0] != '\0')
            g_ptr_array_add(words, fields[i]);
    }
    assert_int_equal(words->len, 7);
    assert_string_equal(g_ptr_array_index(words, 0), "acks=1");
    assert_string_equal(g_ptr_array_index(words, 1), "40");
    assert_string_equal(g_ptr_array_index(words, 2), "3");
    assert_string_equal(g_ptr_array_index(words, 3), "0");
    g_ptr_array_free(words, TRUE);
    free(text);
    scenario_free(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_report_summary_json_schema, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test(test_report_summary_numbers_match_checker),
        cmocka_unit_test_setup_teardown(test_report_consumer_group_section, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_csv_files_well_formed, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_replica_lines, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_latency_points_thinned, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_html_order_and_plots, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_without_gnuplot, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_report_gnuplot_fails, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test(test_report_terminal_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
