/* Tests of reports/plot: gnuplot quoting, the scripts' commands, rendering
 * every plot with the installed gnuplot (skipped without one), HTML helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <glib/gstdio.h>
#include <string.h>

#include "outfile.h"
#include "plot.h"
#include "stats.h"

#define SVG_LINE                                                                                   \
    "set terminal svg size 900,500 dynamic enhanced font \"sans,11\" background rgb \"white\"\n"

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
    *state = g_dir_make_tmp("ksim-test-plot-XXXXXX", NULL);
    return *state == NULL ? -1 : 0;
}

static int
teardown_tmpdir(void **state)
{
    remove_tree(*state);
    g_free(*state);
    return 0;
}

/* Every line of a script has balanced single quotes: a quoted string never
 * runs over a line end, so no caller text can spill into a command. */
static void
assert_quotes_balanced(const char *script)
{
    g_auto(GStrv) lines = g_strsplit(script, "\n", -1);
    for (gsize i = 0; lines[i] != NULL; i++) {
        guint quotes = 0;
        for (const char *c = lines[i]; *c != '\0'; c++)
            quotes += *c == '\'';
        if (quotes % 2 != 0)
            fail_msg("unbalanced quotes in line: %s", lines[i]);
    }
}

static void
assert_contains(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) == NULL)
        fail_msg("missing \"%s\" in:\n%s", needle, haystack);
}

static void
assert_lacks(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) != NULL)
        fail_msg("unexpected \"%s\" in:\n%s", needle, haystack);
}

static void
test_plot_gnuplot_quote(void **state)
{
    /* Goal: text becomes one single-quoted gnuplot string, quotes doubled and
     * control characters blanked; backslashes stay literal. */
    (void)state;
    static const struct {
        const char *text;
        const char *expected;
    } cases[] = {
        {"latency.csv", "'latency.csv'"}, {"it's", "'it''s'"}, {"", "''"},
        {"two\nlines\r", "'two lines '"}, {"a\\b", "'a\\b'"},  {"\"dq\"", "'\"dq\"'"},
        {"tab\there", "'tab here'"},      {"''", "''''''"},    {"µs ≤ 1", "'µs ≤ 1'"},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GString) out = g_string_new(NULL);
        plot_gnuplot_quote(out, cases[i].text);
        assert_string_equal(out->str, cases[i].expected);
    }
}

static void
test_plot_html_escape(void **state)
{
    /* Goal: the five HTML-special characters are escaped, others kept. */
    (void)state;
    static const struct {
        const char *text;
        const char *expected;
    } cases[] = {
        {"plain", "plain"},
        {"<script>", "&lt;script&gt;"},
        {"a & b", "a &amp; b"},
        {"\"q\" 'q'", "&quot;q&quot; &#39;q&#39;"},
        {"acks=all µs", "acks=all µs"},
        {"", ""},
    };
    for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GString) out = g_string_new("<p>");
        plot_html_escape(out, cases[i].text);
        assert_string_equal(out->str + 3, cases[i].expected);
    }
}

static const PlotSeries latency_series[] = {
    {"lat-acks0.csv", "acks=0", 1, 2, PLOT_AXIS_Y1},
    {"lat-all.csv", "acks=all", 1, 2, PLOT_AXIS_Y1},
};
static const PlotSeries cdf_series[] = {
    {"cdf-acks0.csv", "acks=0", 1, 2, PLOT_AXIS_Y1},
    {"cdf-all.csv", "acks=all", 1, 2, PLOT_AXIS_Y1},
};
static const PlotSeries throughput_series[] = {
    {"tput-acks0.csv", "acks=0", 1, 2, PLOT_AXIS_Y1},
};
static const PlotSeries replica_series[] = {
    {"replicas.csv", "LEO broker 1", 1, 2, PLOT_AXIS_Y1},
    {"replicas.csv", "HW broker 1", 1, 3, PLOT_AXIS_Y1},
    {"replicas.csv", "LEO broker 2", 1, 4, PLOT_AXIS_Y1},
    {"replicas.csv", "HW broker 2", 1, 5, PLOT_AXIS_Y1},
    {"replicas.csv", "ISR size", 1, 6, PLOT_AXIS_Y2},
};
static const PlotSeries outcome_series[] = {
    {"outcomes.csv", "acknowledged", 0, 2, PLOT_AXIS_Y1},
    {"outcomes.csv", "lost", 0, 3, PLOT_AXIS_Y1},
    {"outcomes.csv", "duplicated", 0, 4, PLOT_AXIS_Y1},
};
static const PlotSeries tradeoff_series[] = {
    {"comparison.csv", "runs", 9, 5, PLOT_AXIS_Y1},
};
static const PlotSeries load_series[] = {
    {"load-1.csv", "acks=1", 1, 3, PLOT_AXIS_Y1},
    {"load-2.csv", "acks=all", 1, 3, PLOT_AXIS_Y1},
};
static const PlotSeries outage_series[] = {
    {"outages.csv", "no leader", 3, 1, PLOT_AXIS_Y1},
};
static const PlotWindow fault_windows[] = {
    {1.0, 2.5, "crash broker 1"},
    {3.0, 3.25, NULL},
};

typedef GString *(*BuildFn)(const PlotSpec *spec);

/* One plot of the report: how to build it, with what, and what its script
 * must and must not say. */
typedef struct {
    const char *name;
    BuildFn build;
    PlotSpec spec;
    const char *expected[10];
    const char *unexpected[3];
} PlotCase;

static const PlotCase plot_cases[] = {
    {"latency_timeline",
     plot_script_latency_timeline,
     {"latency", "Produce latency", NULL, NULL, NULL, latency_series, 2, fault_windows, 2, 0, 0, NULL},
     {"set title 'Produce latency' noenhanced\n", "set xlabel 'virtual time (s)' noenhanced\n",
      "set logscale y\n", "set object 1 rect from first 1, graph 0 to first 2.5, graph 1 behind",
      "set object 2 rect from first 3, graph 0 to first 3.25, graph 1 behind",
      "set label 1 'crash broker 1' at first 1.75, graph 1 center", "set ytics ('1 µs' 0.001",
      "plot 'lat-acks0.csv' using 1:2 every ::1 with points pointtype 7 pointsize 0.4 "
      "title 'acks=0' noenhanced",
      "'lat-all.csv' using 1:2 every ::1 with points pointtype 7 pointsize 0.4 "
      "title 'acks=all' noenhanced\n"},
     {"set label 2", "axes x1y2", NULL}},
    {"latency_cdf",
     plot_script_latency_cdf,
     {"cdf", "Latency CDF", "latency (ms)", NULL, NULL, cdf_series, 2, fault_windows, 2, 0, 0, NULL},
     {"set logscale x\n", "set yrange [0:1]\n", "set xlabel 'latency (ms)' noenhanced\n",
      "plot 'cdf-acks0.csv' using 1:2 every ::1 with steps linewidth 2 title 'acks=0'",
      "'cdf-all.csv' using 1:2 every ::1 with steps linewidth 2 title 'acks=all'"},
     {"set object", "set logscale y", NULL}},
    {"throughput",
     plot_script_throughput,
     {"throughput", NULL, NULL, "records/s", NULL, throughput_series, 1, fault_windows, 1, 0, 0, NULL},
     {"set yrange [0:*]\n", "set ylabel 'records/s' noenhanced\n", "set object 1 rect",
      "plot 'tput-acks0.csv' using 1:2 every ::1 with lines linewidth 2 title 'acks=0'"},
     {"set title", "set object 2", NULL}},
    {"replicas",
     plot_script_replicas,
     {"partition-0", "topic t, partition 0", NULL, NULL, NULL, replica_series, 5, fault_windows, 2,
      0, 0, NULL},
     {"set y2label 'ISR size' noenhanced\n", "set y2tics 1\n", "set ytics nomirror\n",
      "plot 'replicas.csv' using 1:2 every ::1 with steps linewidth 2 title 'LEO broker 1'",
      "'replicas.csv' using 1:5 every ::1 with steps linewidth 2 title 'HW broker 2'",
      "'replicas.csv' using 1:6 every ::1 axes x1y2 with steps linewidth 2 dashtype 2 ",
      "stats 'replicas.csv' using 6 every ::1 nooutput\n", "set object 2 rect"},
     {"stats 'replicas.csv' using 5", NULL}},
    {"outcome_bars",
     plot_script_outcome_bars,
     {"outcomes", "Acknowledged, lost, duplicated", NULL, NULL, NULL, outcome_series, 3, NULL, 0, 1,
      0, NULL},
     {"set style data histogram\n", "set style histogram clustered gap 1\n",
      "stats 'outcomes.csv' using 2 every ::1 nooutput\n",
      "set xrange [-0.5:STATS_records - 0.5]\n",
      "plot 'outcomes.csv' using 2:xtic(1) every ::1 title 'acknowledged' noenhanced",
      "'outcomes.csv' using 3 every ::1 title 'lost' noenhanced",
      "'outcomes.csv' using ($0 + -0.25):2:2 every ::1 with labels",
      "'outcomes.csv' using ($0 + 0.25):4:4 every ::1 with labels"},
     {"set object", NULL}},
    {"utilization",
     plot_script_utilization,
     {"utilization", NULL, NULL, NULL, NULL, throughput_series, 1, fault_windows, 1, 0, 0, NULL},
     {"set yrange [0:1.05]\n", "set ylabel 'I/O threads busy (share)' noenhanced\n",
      "set object 1 rect",
      "plot 'tput-acks0.csv' using 1:2 every ::1 with lines linewidth 2 title 'acks=0'"},
     {"set key below", "set logscale", NULL}},
    {"metrics",
     plot_script_metrics,
     {"metrics", NULL, NULL, NULL, NULL, throughput_series, 1, fault_windows, 2, 0, 0, NULL},
     {"set key below noenhanced\n", "set yrange [0:*]\n", "set object 2 rect",
      "plot 'tput-acks0.csv' using 1:2 every ::1 with steps linewidth 2 title 'acks=0'"},
     {"set logscale", NULL}},
    {"outages",
     plot_script_outages,
     {"outages", NULL, NULL, NULL, NULL, outage_series, 1, fault_windows, 1, 0, 0, NULL},
     {"stats 'outages.csv' using 1 every ::1 nooutput\n",
      "set yrange [STATS_max + 0.5:-0.5]\n", "set object 1 rect",
      "plot 'outages.csv' using 3:1:($4-$3):(0):ytic(2) every ::1 with vectors nohead"},
     {"set logscale", NULL}},
    {"tradeoff",
     plot_script_tradeoff,
     {"tradeoff", "Lost against p99", NULL, NULL, NULL, tradeoff_series, 1, NULL, 0, 1, 0, NULL},
     {"set logscale x\n", "set yrange [0:*]\n", "set xlabel 'produce latency p99 (ms)'",
      "plot 'comparison.csv' using 9:5 every ::1 with points pointtype 7",
      "'comparison.csv' using 9:5:1 every ::1 with labels left"},
     {"set logscale y", "set object", NULL}},
    {"load",
     plot_script_load,
     {"load", NULL, "workload.rate", NULL, NULL, load_series, 2, NULL, 0, 0, 0, "knees.csv"},
     {"set logscale y\n", "set xlabel 'workload.rate' noenhanced\n",
      "plot 'load-1.csv' using 1:3 every ::1 with linespoints linewidth 2 pointtype 7 title "
      "'acks=1'",
      "'load-2.csv' using 1:3 every ::1 with linespoints",
      "'knees.csv' using 1:2 every ::1 with points pointtype 6",
      "'knees.csv' using 1:2:3 every ::1 with labels"},
     {"set logscale x", "set title", NULL}},
};

static void
test_plot_scripts_contain_commands(void **state)
{
    /* Goal: each builder writes the SVG and PNG frame around its own
     * settings and one plot element per series, from the spec's files. */
    (void)state;
    for (gsize i = 0; i < G_N_ELEMENTS(plot_cases); i++) {
        const PlotCase *c = &plot_cases[i];
        g_autoptr(GString) script = c->build(&c->spec);
        g_autofree char *svg = g_strdup_printf("set output '%s.svg'\n", c->spec.output_basename);
        g_autofree char *png = g_strdup_printf("set output '%s.png'\n", c->spec.output_basename);
        assert_contains(script->str, "set datafile separator comma\n");
        assert_contains(script->str, SVG_LINE);
        assert_contains(script->str, svg);
        assert_contains(script->str, "set terminal pngcairo size 900,500 ");
        assert_contains(script->str, png);
        assert_contains(script->str, "\nreplot\nunset output\n");
        assert_true(strstr(script->str, SVG_LINE) < strstr(script->str, "\nplot "));
        assert_true(strstr(script->str, "\nplot ") < strstr(script->str, "pngcairo"));
        for (gsize e = 0; e < G_N_ELEMENTS(c->expected) && c->expected[e] != NULL; e++)
            assert_contains(script->str, c->expected[e]);
        for (gsize u = 0; u < G_N_ELEMENTS(c->unexpected) && c->unexpected[u] != NULL; u++)
            assert_lacks(script->str, c->unexpected[u]);
        assert_quotes_balanced(script->str);
    }
}

static void
test_plot_png_terminal_follows_spec(void **state)
{
    /* Goal: the PNG part uses pngcairo, png (libgd), or is left out, as the
     * spec says. */
    (void)state;
    PlotSpec spec = plot_cases[0].spec;
    spec.png = PLOT_PNG_GD;
    g_autoptr(GString) gd = plot_script_latency_timeline(&spec);
    assert_contains(gd->str, "set terminal png size 900,500 enhanced font \"sans,11\" "
                             "background rgb \"white\"\n");
    assert_lacks(gd->str, "pngcairo");
    spec.png = PLOT_PNG_NONE;
    g_autoptr(GString) none = plot_script_latency_timeline(&spec);
    assert_lacks(none->str, ".png");
    assert_lacks(none->str, "replot");
    assert_contains(none->str, "set output 'latency.svg'\n");
    assert_contains(none->str, "unset output\n");
}

static void
test_plot_scripts_quote_hostile_names(void **state)
{
    /* Goal: quotes, line breaks and command text in names and labels stay
     * inside their strings. */
    (void)state;
    static const PlotSeries series[] = {
        {"it's data.csv", "x'; system 'touch pwned", 1, 2, PLOT_AXIS_Y1},
    };
    static const PlotWindow windows[] = {{0.5, 1.0, "crash\nsystem 'touch pwned'"}};
    PlotSpec spec = {
        "it's out", "title\nsystem 'touch pwned'", NULL, NULL, NULL, series, 1, windows, 1, 0, 0, NULL};
    g_autoptr(GString) script = plot_script_latency_timeline(&spec);
    assert_contains(script->str, "plot 'it''s data.csv' using 1:2");
    assert_contains(script->str, "title 'x''; system ''touch pwned' noenhanced");
    assert_contains(script->str, "set output 'it''s out.svg'\n");
    assert_contains(script->str, "set title 'title system ''touch pwned''' noenhanced\n");
    assert_contains(script->str, "set label 1 'crash system ''touch pwned''' at");
    assert_lacks(script->str, "\nsystem");
    assert_quotes_balanced(script->str);
}

static void
skip_without_gnuplot(void)
{
    if (!plot_gnuplot_available()) {
        print_message("gnuplot is not on the PATH: skipped\n");
        skip();
    }
}

static void
test_plot_probe_terminals(void **state)
{
    /* Goal: probing finds the SVG and a PNG terminal once, then answers from
     * the caller's struct without running gnuplot again. */
    (void)state;
    skip_without_gnuplot();
    PlotTerminals terminals = {0};
    g_autoptr(GError) error = NULL;
    assert_true(plot_terminals_probe(&terminals, &error));
    assert_null(error);
    assert_true(terminals.probed);
    assert_true(terminals.svg);
    assert_true(terminals.png != PLOT_PNG_NONE);
    assert_true(terminals.pngcairo || terminals.png_gd);
    if (terminals.pngcairo)
        assert_int_equal(terminals.png, PLOT_PNG_CAIRO);
    terminals.svg = FALSE;
    assert_true(plot_terminals_probe(&terminals, &error));
    assert_false(terminals.svg);
}

/* Writes a CSV file in `directory` with `header` and rows of doubles. */
static void
write_csv(const char *directory, const char *name, const char *const *header, const double *cells,
          guint rows)
{
    g_autofree char *path = g_build_filename(directory, name, NULL);
    OutFile *file = outfile_open(path, NULL);
    assert_non_null(file);
    g_autoptr(OutFileCsv) csv = outfile_csv_new(outfile_stream(file), header);
    guint columns = g_strv_length((char **)header);
    for (guint r = 0; r < rows; r++) {
        for (guint c = 0; c < columns; c++)
            outfile_csv_double(csv, cells[r * columns + c]);
        outfile_csv_end_row(csv);
    }
    assert_true(outfile_commit(file, NULL));
}

/* Writes a latency CDF from a histogram, as the report will. */
static void
write_cdf_csv(const char *directory, const char *name, gint64 latency_ns_base)
{
    g_autoptr(StatsHistogram) h = stats_histogram_new(2);
    for (gint64 i = 1; i <= 500; i++)
        stats_histogram_record(h, latency_ns_base + i * i * 1000);
    g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(StatsCdfPoint));
    stats_histogram_cdf(h, points);
    g_autofree double *cells = g_new(double, 2 * points->len);
    for (guint i = 0; i < points->len; i++) {
        cells[2 * i] = g_array_index(points, StatsCdfPoint, i).value_ns / 1e6;
        cells[2 * i + 1] = g_array_index(points, StatsCdfPoint, i).fraction;
    }
    static const char *const header[] = {"latency_ms", "fraction", NULL};
    write_csv(directory, name, header, cells, points->len);
}

static void
write_outcomes_csv(const char *directory)
{
    g_autofree char *path = g_build_filename(directory, "outcomes.csv", NULL);
    OutFile *file = outfile_open(path, NULL);
    assert_non_null(file);
    static const char *const header[] = {"run", "acknowledged", "lost", "duplicated", NULL};
    g_autoptr(OutFileCsv) csv = outfile_csv_new(outfile_stream(file), header);
    static const char *const runs[] = {"acks=0", "acks=1", "acks=all,min.insync.replicas=2"};
    static const gint64 counts[][3] = {{900, 120, 0}, {1000, 30, 4}, {980, 0, 0}};
    for (gsize r = 0; r < G_N_ELEMENTS(runs); r++) {
        outfile_csv_string(csv, runs[r]);
        for (gsize c = 0; c < 3; c++)
            outfile_csv_int(csv, counts[r][c]);
        outfile_csv_end_row(csv);
    }
    assert_true(outfile_commit(file, NULL));
}

static void
write_all_csvs(const char *directory)
{
    static const char *const latency_header[] = {"time_s", "latency_ms", NULL};
    static const double latency_acks0[] = {0.1, 0.4, 0.5, 0.5, 1.2, 3.0, 2.0, 0.6, 3.5, 0.7};
    static const double latency_all[] = {0.1, 2.0, 0.6, 2.5, 1.4, 80.0, 2.2, 40.0, 3.6, 3.1};
    static const char *const tput_header[] = {"time_s", "records_per_s", NULL};
    static const double tput[] = {0, 950, 1, 1010, 2, 0, 3, 400, 4, 990};
    static const char *const replica_header[] = {
        "time_s", "leo_broker_1", "hw_broker_1", "leo_broker_2", "hw_broker_2", "isr_size", NULL};
    static const double replicas[] = {0,   0,   0,   0,   0,  2,   1,   100, 90,  95,
                                      90,  2,   1.5, 100, 90, 95,  90,  1,   3,   180,
                                      180, 120, 120, 1,   4,  260, 250, 260, 250, 2};
    write_csv(directory, "lat-acks0.csv", latency_header, latency_acks0, 5);
    write_csv(directory, "lat-all.csv", latency_header, latency_all, 5);
    write_cdf_csv(directory, "cdf-acks0.csv", 500000);
    write_cdf_csv(directory, "cdf-all.csv", 2000000);
    write_csv(directory, "tput-acks0.csv", tput_header, tput, 5);
    write_csv(directory, "replicas.csv", replica_header, replicas, 5);
    write_outcomes_csv(directory);
    /* The comparison's files; numbers stand in for the run labels. */
    static const char *const comparison_header[] = {
        "number", "run", "acks", "acked", "lost_write", "duplicate", "nonmonotonic_send",
        "p50_ms", "p99_ms", NULL};
    static const double comparison[] = {1, 1, 0, 900, 300, 0, 2, 3.5, 5900,
                                        2, 2, 1, 900, 140, 1, 1, 5.0, 8200,
                                        3, 3, -1, 900, 0, 0, 0, 7.2, 9700};
    write_csv(directory, "comparison.csv", comparison_header, comparison, 3);
    static const char *const load_header[] = {"load", "p50_ms", "p99_ms", NULL};
    static const double load_1[] = {3000, 1.4, 3, 9000, 2, 7.4, 15000, 4, 22.8, 21000, 157, 528};
    static const double load_2[] = {3000, 9, 14, 9000, 14, 31, 15000, 333, 965, 21000, 960, 2046};
    write_csv(directory, "load-1.csv", load_header, load_1, 4);
    write_csv(directory, "load-2.csv", load_header, load_2, 4);
    static const char *const knee_header[] = {"load", "p99_ms", "label", NULL};
    static const double knees[] = {15000, 22.8, 1, 9000, 31, 2};
    write_csv(directory, "knees.csv", knee_header, knees, 2);
    static const char *const outage_header[] = {"row", "partition", "start_s", "end_s", NULL};
    static const double outages[] = {0, 7, 1.0, 2.5, 0, 7, 3.0, 3.5, 1, 8, 1.0, 1.2};
    write_csv(directory, "outages.csv", outage_header, outages, 3);
}

static void
assert_file_starts_with(const char *directory, const char *name, const void *prefix, gsize len)
{
    g_autofree char *path = g_build_filename(directory, name, NULL);
    g_autofree char *contents = NULL;
    gsize size = 0;
    assert_true(g_file_get_contents(path, &contents, &size, NULL));
    assert_true(size > len);
    assert_memory_equal(contents, prefix, len);
}

static void
test_plot_render_every_plot(void **state)
{
    /* Goal: gnuplot draws every plot from small CSVs, as SVG and PNG with each
     * PNG terminal the installed gnuplot has. */
    const char *directory = *state;
    skip_without_gnuplot();
    PlotTerminals terminals = {0};
    assert_true(plot_terminals_probe(&terminals, NULL));
    write_all_csvs(directory);
    static const guint8 png_signature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const gboolean available[] = {terminals.pngcairo, terminals.png_gd};
    for (PlotPng png = PLOT_PNG_CAIRO; png <= PLOT_PNG_GD; png++) {
        for (gsize i = 0; available[png] && i < G_N_ELEMENTS(plot_cases); i++) {
            PlotSpec spec = plot_cases[i].spec;
            g_autofree char *basename = g_strdup_printf("%s-%d", spec.output_basename, png);
            spec.output_basename = basename;
            spec.png = png;
            g_autoptr(GString) script = plot_cases[i].build(&spec);
            g_autoptr(GError) error = NULL;
            if (!plot_render(script, &spec, directory, &error))
                fail_msg("%s: %s\n%s", plot_cases[i].name, error->message, script->str);
            g_autofree char *svg = g_strconcat(basename, ".svg", NULL);
            g_autofree char *png_name = g_strconcat(basename, ".png", NULL);
            assert_file_starts_with(directory, svg, "<?xml", 5);
            assert_file_starts_with(directory, png_name, png_signature, sizeof png_signature);
        }
    }
}

static void
test_plot_render_hostile_names(void **state)
{
    /* Goal: gnuplot itself accepts the quoted hostile names and draws. */
    const char *directory = *state;
    skip_without_gnuplot();
    static const char *const header[] = {"time_s", "latency_ms", NULL};
    static const double cells[] = {0.1, 1.0, 0.2, 3.0};
    write_csv(directory, "it's data.csv", header, cells, 2);
    static const PlotSeries series[] = {{"it's data.csv", "x'; print 'y", 1, 2, PLOT_AXIS_Y1}};
    static const PlotWindow windows[] = {{0.12, 0.15, "it's\ndown"}};
    PlotSpec spec = {"it's out", "a\nb", NULL, NULL, NULL, series, 1, windows, 1, 0, 0, NULL};
    g_autoptr(GString) script = plot_script_latency_timeline(&spec);
    g_autoptr(GError) error = NULL;
    if (!plot_render(script, &spec, directory, &error))
        fail_msg("%s", error->message);
}

static void
test_plot_run_reports_gnuplot_errors(void **state)
{
    /* Goal: a failing script or a missing workdir gives a PLOT error naming
     * the directory and carrying gnuplot's complaint; a script that draws
     * nothing is caught by plot_render. */
    const char *directory = *state;
    skip_without_gnuplot();
    g_autoptr(GError) error = NULL;
    assert_false(plot_run("plot 'no-such-file.csv' using 1:2\n", directory, &error));
    assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT));
    assert_contains(error->message, directory);
    assert_contains(error->message, "no-such-file.csv");
    g_clear_error(&error);
    g_autofree char *missing = g_build_filename(directory, "missing-dir", NULL);
    assert_false(plot_run("print 1\n", missing, &error));
    assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT));
    assert_contains(error->message, missing);
    g_clear_error(&error);
    g_autoptr(GString) idle = g_string_new("print 1\n");
    assert_false(plot_render(idle, &plot_cases[0].spec, directory, &error));
    assert_true(g_error_matches(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT));
    assert_contains(error->message, "latency.svg");
}

static void
test_plot_html_embed_png(void **state)
{
    /* Goal: a PNG becomes a data URI image with its alt text escaped; a file
     * that is missing or not a PNG is an error naming it, leaving html as is. */
    const char *directory = *state;
    static const char image[] = "\x89PNG\r\n\x1a\n-not-really-pixels";
    g_autofree char *png_path = g_build_filename(directory, "tiny.png", NULL);
    g_autofree char *text_path = g_build_filename(directory, "not.png", NULL);
    g_autofree char *missing_path = g_build_filename(directory, "missing.png", NULL);
    assert_true(outfile_write(png_path, image, sizeof image - 1, NULL));
    assert_true(outfile_write(text_path, "GIF89a........", 14, NULL));
    g_autoptr(GString) html = g_string_new("<p>");
    assert_true(plot_html_embed_png(html, png_path, "latency <acks=all>", NULL));
    g_autofree char *encoded = g_base64_encode((const guchar *)image, sizeof image - 1);
    g_autofree char *expected = g_strdup_printf(
        "<p><img src=\"data:image/png;base64,%s\" alt=\"latency &lt;acks=all&gt;\">", encoded);
    assert_string_equal(html->str, expected);
    const char *bad_paths[] = {text_path, missing_path};
    for (gsize i = 0; i < G_N_ELEMENTS(bad_paths); i++) {
        g_autoptr(GError) error = NULL;
        assert_false(plot_html_embed_png(html, bad_paths[i], "x", &error));
        assert_true(error->domain == KSIM_REPORTS_ERROR);
        assert_contains(error->message, bad_paths[i]);
        assert_string_equal(html->str, expected);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plot_gnuplot_quote),
        cmocka_unit_test(test_plot_html_escape),
        cmocka_unit_test(test_plot_scripts_contain_commands),
        cmocka_unit_test(test_plot_png_terminal_follows_spec),
        cmocka_unit_test(test_plot_scripts_quote_hostile_names),
        cmocka_unit_test(test_plot_probe_terminals),
        cmocka_unit_test_setup_teardown(test_plot_render_every_plot, setup_tmpdir, teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_plot_render_hostile_names, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_plot_run_reports_gnuplot_errors, setup_tmpdir,
                                        teardown_tmpdir),
        cmocka_unit_test_setup_teardown(test_plot_html_embed_png, setup_tmpdir, teardown_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
