/*
 * plot: gnuplot scripts and the gnuplot process (see plot.h).
 *
 * Every script has the same frame, so the SVG and PNG show the same plot:
 *
 *   settings: encoding, CSV separator, SVG terminal and output, title, labels
 *   plot-specific settings (log scales, ranges, styles), fault windows
 *   plot ...                         -> BASENAME.svg
 *   PNG terminal and output, replot  -> BASENAME.png (unless PLOT_PNG_NONE)
 *   unset output                     -> the files are closed before exit
 *
 * Invariants of a built script:
 *  1. Every string from the caller is inside a quoted gnuplot string (paths
 *     via append_path, text via plot_gnuplot_quote), so no caller input can
 *     end a command or start another.
 *  2. Numbers are formatted in the C locale, whatever the process locale.
 *  3. Every data reference skips the CSV header row (`every ::1`).
 *
 * This module has no state: the caller owns PlotTerminals.
 */
#include "plot.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "outfile.h"
#include "sim_assert.h"

#define SVG_TERMINAL                                                                               \
    "set terminal svg size 900,500 dynamic enhanced font \"sans,11\" background rgb \"white\""
#define PNG_OPTIONS "size 900,500 enhanced font \"sans,11\" background rgb \"white\""
#define WINDOW_STYLE "behind fillcolor rgb \"#f4cccc\" fillstyle solid 0.7 noborder"

static const guint8 png_signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

gboolean
plot_gnuplot_available(void)
{
    g_autofree char *path = g_find_program_in_path("gnuplot");
    return path != NULL;
}

/* ---- Running gnuplot ---- */

/* Runs gnuplot with `argv`, feeding `stdin_text` (may be NULL: /dev/null),
 * and returns what it wrote, made valid UTF-8, in `output`. stdout and stderr
 * are merged: gnuplot writes messages to stderr, but some builds list
 * terminals on stdout. */
static gboolean
gnuplot_spawn(const char *const *argv, const char *stdin_text, const char *workdir, char **output,
              GError **error)
{
    KSIM_ASSERT(argv != NULL);
    KSIM_ASSERT(output != NULL);
    GSubprocessFlags flags = G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_MERGE;
    if (stdin_text != NULL)
        flags |= G_SUBPROCESS_FLAGS_STDIN_PIPE;
    g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new(flags);
    if (workdir != NULL)
        g_subprocess_launcher_set_cwd(launcher, workdir);
    const char *where = workdir != NULL ? workdir : ".";
    g_autoptr(GError) local = NULL;
    g_autoptr(GSubprocess) process = g_subprocess_launcher_spawnv(launcher, argv, &local);
    g_autoptr(GBytes) input = stdin_text ? g_bytes_new(stdin_text, strlen(stdin_text)) : NULL;
    g_autoptr(GBytes) said = NULL;
    if (process == NULL || !g_subprocess_communicate(process, input, NULL, &said, NULL, &local)) {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT,
                    "cannot run gnuplot in \"%s\": %s", where, local->message);
        return FALSE;
    }
    gsize len = 0;
    const char *bytes = said != NULL ? g_bytes_get_data(said, &len) : NULL;
    *output = g_utf8_make_valid(bytes != NULL ? bytes : "", (gssize)len);
    if (g_subprocess_get_successful(process))
        return TRUE;
    g_autofree char *how =
        g_subprocess_get_if_exited(process)
            ? g_strdup_printf("exit status %d", g_subprocess_get_exit_status(process))
            : g_strdup_printf("signal %d", g_subprocess_get_term_sig(process));
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT,
                "gnuplot failed in \"%s\" (%s): %s", where, how, g_strstrip(*output));
    return FALSE;
}

gboolean
plot_run(const char *script, const char *workdir, GError **error)
{
    KSIM_ASSERT(script != NULL);
    static const char *const argv[] = {"gnuplot", NULL};
    g_autofree char *output = NULL;
    return gnuplot_spawn(argv, script, workdir, &output, error);
}

/* TRUE when a line of `set terminal`'s list names terminal `name`. */
static gboolean
terminal_listed(char *const *lines, const char *name)
{
    for (gsize i = 0; lines[i] != NULL; i++) {
        const char *line = lines[i];
        while (*line == ' ')
            line++;
        gsize len = strlen(name);
        if (strncmp(line, name, len) == 0 && line[len] == ' ')
            return TRUE;
    }
    return FALSE;
}

gboolean
plot_terminals_probe(PlotTerminals *terminals, GError **error)
{
    KSIM_ASSERT(terminals != NULL);
    if (terminals->probed)
        return TRUE;
    static const char *const argv[] = {"gnuplot", "-e", "set terminal", NULL};
    g_autofree char *listing = NULL;
    if (!gnuplot_spawn(argv, NULL, NULL, &listing, error))
        return FALSE;
    /* The list is paged by "Press return for more:" prompts, which simply
     * run on when stdin is not a terminal. */
    g_auto(GStrv) lines = g_strsplit(listing, "\n", -1);
    terminals->svg = terminal_listed(lines, "svg");
    terminals->pngcairo = terminal_listed(lines, "pngcairo");
    terminals->png_gd = terminal_listed(lines, "png");
    terminals->png = PLOT_PNG_NONE;
    if (terminals->png_gd)
        terminals->png = PLOT_PNG_GD;
    if (terminals->pngcairo)
        terminals->png = PLOT_PNG_CAIRO;
    terminals->probed = TRUE;
    return TRUE;
}

/* ---- Script text ---- */

void
plot_gnuplot_quote(GString *out, const char *text)
{
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(text != NULL);
    g_string_append_c(out, '\'');
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '\'')
            g_string_append(out, "''");
        else if ((guchar)*c < 0x20 || *c == 0x7f)
            g_string_append_c(out, ' ');
        else
            g_string_append_c(out, *c);
    }
    g_string_append_c(out, '\'');
}

/* A path is quoted like text, but a control character in it would be
 * silently changed, naming another file, so it is refused instead. */
static void
append_path(GString *out, const char *path)
{
    KSIM_ASSERT(path != NULL);
    KSIM_ASSERT(path[0] != '\0');
    for (const char *c = path; *c != '\0'; c++)
        KSIM_ASSERT((guchar)*c >= 0x20 && *c != 0x7f);
    plot_gnuplot_quote(out, path);
}

static void
append_double(GString *out, double value)
{
    char text[G_ASCII_DTOSTR_BUF_SIZE];
    KSIM_ASSERT(isfinite(value));
    g_string_append(out, g_ascii_formatd(text, sizeof text, "%.9g", value));
}

/* Appends "set KEY 'text' noenhanced\n" when `text` (or `fallback`) is set. */
static void
append_set_text(GString *out, const char *key, const char *text, const char *fallback)
{
    const char *shown = text != NULL ? text : fallback;
    if (shown == NULL)
        return;
    g_string_append_printf(out, "set %s ", key);
    plot_gnuplot_quote(out, shown);
    g_string_append(out, " noenhanced\n");
}

static void
append_output(GString *out, const char *basename, const char *extension)
{
    g_autofree char *name = g_strconcat(basename, ".", extension, NULL);
    g_string_append(out, "set output ");
    append_path(out, name);
    g_string_append_c(out, '\n');
}

static void
check_spec(const PlotSpec *spec)
{
    KSIM_ASSERT(spec != NULL);
    KSIM_ASSERT(spec->output_basename != NULL);
    KSIM_ASSERT(spec->series != NULL);
    KSIM_ASSERT(spec->series_len > 0);
    KSIM_ASSERT(spec->windows != NULL || spec->windows_len == 0);
    KSIM_ASSERT(spec->png <= PLOT_PNG_NONE);
    for (guint i = 0; i < spec->series_len; i++) {
        KSIM_ASSERT(spec->series[i].csv_path != NULL);
        KSIM_ASSERT(spec->series[i].label != NULL);
        KSIM_ASSERT(spec->series[i].y_column > 0);
    }
}

/* The frame's opening: everything up to the plot-specific settings. */
static GString *
script_begin(const PlotSpec *spec, const char *x_label, const char *y_label)
{
    check_spec(spec);
    GString *out = g_string_new("# Written by ksim; run with: gnuplot < this-file\n");
    g_string_append(out, "set encoding utf8\n");
    g_string_append(out, "set datafile separator comma\n");
    g_string_append(out, SVG_TERMINAL "\n");
    append_output(out, spec->output_basename, "svg");
    append_set_text(out, "title", spec->title, NULL);
    append_set_text(out, "xlabel", spec->x_label, x_label);
    append_set_text(out, "ylabel", spec->y_label, y_label);
    g_string_append(out, "set grid\n");
    g_string_append(out, "set key outside right top noenhanced\n");
    return out;
}

/* The frame's closing: the PNG copy, then closing the output. */
static GString *
script_end(GString *out, const PlotSpec *spec)
{
    static const char *const png_terminals[] = {"pngcairo", "png"};
    if (spec->png != PLOT_PNG_NONE) {
        g_string_append_printf(out, "set terminal %s " PNG_OPTIONS "\n", png_terminals[spec->png]);
        append_output(out, spec->output_basename, "png");
        g_string_append(out, "replot\n");
    }
    g_string_append(out, "unset output\n");
    return out;
}

/* One shaded rectangle, full height, per fault window, with its label. */
static void
append_windows(GString *out, const PlotSpec *spec)
{
    for (guint i = 0; i < spec->windows_len; i++) {
        const PlotWindow *window = &spec->windows[i];
        KSIM_ASSERT(window->start_s <= window->end_s);
        g_string_append_printf(out, "set object %u rect from first ", i + 1);
        append_double(out, window->start_s);
        g_string_append(out, ", graph 0 to first ");
        append_double(out, window->end_s);
        g_string_append(out, ", graph 1 " WINDOW_STYLE "\n");
        if (window->label == NULL)
            continue;
        /* The label (the band's number in the report, see the fault table
         * beside the plot) sits inside the top of its band, centred, so
         * labels of neighbouring bands do not run into each other, and the
         * key stays outside the graph. */
        g_string_append_printf(out, "set label %u ", i + 1);
        plot_gnuplot_quote(out, window->label);
        g_string_append(out, " at first ");
        append_double(out, (window->start_s + window->end_s) / 2.0);
        g_string_append(out, ", graph 1 center offset 0,-0.8 front font \",10\" "
                             "textcolor rgb \"#990000\" noenhanced\n");
    }
}

/* `plot` with one element per series, x:y from its columns, in `style_y1`
 * or, for series on the right axis, `style_y2`. */
static void
append_plot_xy(GString *out, const PlotSpec *spec, const char *style_y1, const char *style_y2)
{
    g_string_append(out, "plot ");
    for (guint i = 0; i < spec->series_len; i++) {
        const PlotSeries *series = &spec->series[i];
        KSIM_ASSERT(series->x_column > 0);
        gboolean right = series->axis == PLOT_AXIS_Y2;
        if (i > 0)
            g_string_append(out, ", \\\n     ");
        append_path(out, series->csv_path);
        g_string_append_printf(out, " using %u:%u every ::1%s with %s title ", series->x_column,
                               series->y_column, right ? " axes x1y2" : "",
                               right ? style_y2 : style_y1);
        plot_gnuplot_quote(out, series->label);
        g_string_append(out, " noenhanced");
    }
}

/* ---- The plots ---- */

/* Ticks of a logarithmic axis of milliseconds, labelled with their unit
 * (1 ms, 10 ms, 1 s) rather than gnuplot's "10000.000000"; gnuplot shows
 * only those within the range. */
#define MS_LOG_TICKS                                                                               \
    "('1 µs' 0.001, '10 µs' 0.01, '100 µs' 0.1, '1 ms' 1, '10 ms' 10, '100 ms' 100, '1 s' 1000, " \
    "'10 s' 10000, '100 s' 100000, '1000 s' 1000000)"

GString *
plot_script_latency_timeline(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "produce latency (ms)");
    g_string_append(out, "set logscale y\n");
    g_string_append(out, "set ytics " MS_LOG_TICKS "\n");
    append_windows(out, spec);
    append_plot_xy(out, spec, "points pointtype 7 pointsize 0.4", NULL);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_latency_cdf(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "produce latency (ms)", "fraction of records at or below");
    g_string_append(out, "set logscale x\n");
    g_string_append(out, "set xtics " MS_LOG_TICKS "\n");
    g_string_append(out, "set yrange [0:1]\n");
    g_string_append(out, "set ytics 0.1\n");
    append_plot_xy(out, spec, "steps linewidth 2", NULL);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_throughput(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "records/s");
    g_string_append(out, "set yrange [0:*]\n");
    append_windows(out, spec);
    append_plot_xy(out, spec, "lines linewidth 2", NULL);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_utilization(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "I/O threads busy (share)");
    /* Many runs' names would squeeze the graph from the side. */
    if (spec->series_len > 4)
        g_string_append(out, "set key below noenhanced\n");
    g_string_append(out, "set yrange [0:1.05]\n");
    g_string_append(out, "set ytics 0.1\n");
    append_windows(out, spec);
    append_plot_xy(out, spec, "lines linewidth 2", NULL);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_metrics(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "count, or events per second");
    g_string_append(out, "set key below noenhanced\n");
    g_string_append(out, "set yrange [0:*]\n");
    g_string_append(out, "set offsets 0, 0, graph 0.1, 0\n");
    append_windows(out, spec);
    append_plot_xy(out, spec, "steps linewidth 2", NULL);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_outages(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "partition");
    const PlotSeries *rows = &spec->series[0];
    KSIM_ASSERT(rows->x_column > 0);
    g_string_append(out, "set key off\n");
    g_string_append(out, "set ytics noenhanced\n");
    g_string_append(out, "set grid xtics\n");
    /* The worst partition on top; half a row of room at each end. */
    g_string_append(out, "stats ");
    append_path(out, rows->csv_path);
    g_string_append_printf(out, " using %u every ::1 nooutput\n", rows->y_column);
    g_string_append(out, "set yrange [STATS_max + 0.5:-0.5]\n");
    g_string_append(out, "set xrange [0:*]\n");
    append_windows(out, spec);
    g_string_append(out, "plot ");
    append_path(out, rows->csv_path);
    g_string_append_printf(out,
                           " using %u:%u:($%u-$%u):(0):ytic(%u) every ::1 with vectors nohead "
                           "linewidth 8 linecolor rgb \"#b03030\" notitle\n",
                           rows->x_column, rows->y_column, rows->x_column + 1, rows->x_column,
                           rows->y_column + 1);
    return script_end(out, spec);
}

/* The right axis runs from 0 to half a unit above the largest ISR size, so
 * a full ISR is not drawn on the frame; gnuplot finds the largest itself. */
static void
append_y2_range(GString *out, const PlotSpec *spec)
{
    g_string_append(out, "y2_max = 1\n");
    for (guint i = 0; i < spec->series_len; i++) {
        if (spec->series[i].axis != PLOT_AXIS_Y2)
            continue;
        g_string_append(out, "stats ");
        append_path(out, spec->series[i].csv_path);
        g_string_append_printf(out, " using %u every ::1 nooutput\n", spec->series[i].y_column);
        g_string_append(out, "y2_max = STATS_max > y2_max ? STATS_max : y2_max\n");
    }
    g_string_append(out, "set y2range [0:y2_max + 0.5]\n");
}

GString *
plot_script_replicas(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "virtual time (s)", "offset");
    append_set_text(out, "y2label", spec->y2_label, "ISR size");
    g_string_append(out, "set ytics nomirror\n");
    g_string_append(out, "set y2tics 1\n");
    append_y2_range(out, spec);
    append_windows(out, spec);
    append_plot_xy(out, spec, "steps linewidth 2",
                   "steps linewidth 2 dashtype 2 linecolor rgb \"#404040\"");
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

/* The numbers over the bars. In a clustered histogram with n columns and a
 * gap of 1, bar j of row r is centred at r + (j - (n - 1) / 2) / (n + 1). */
static void
append_bar_numbers(GString *out, const PlotSpec *spec)
{
    for (guint j = 0; j < spec->series_len; j++) {
        double shift = ((double)j - (spec->series_len - 1) / 2.0) / (spec->series_len + 1);
        g_string_append(out, ", \\\n     ");
        append_path(out, spec->series[j].csv_path);
        g_string_append(out, " using ($0 + ");
        append_double(out, shift);
        g_string_append_printf(out, "):%u:%u every ::1 with labels offset 0,0.7 notitle",
                               spec->series[j].y_column, spec->series[j].y_column);
    }
}

GString *
plot_script_outcome_bars(const PlotSpec *spec)
{
    KSIM_ASSERT(spec != NULL);
    KSIM_ASSERT(spec->label_column > 0);
    GString *out = script_begin(spec, "run", "records");
    const PlotSeries *first = &spec->series[0];
    g_string_append(out, "set style data histogram\n"
                         "set style histogram clustered gap 1\n"
                         "set style fill solid 0.85 border -1\n"
                         "set xtics noenhanced\n"
                         "set yrange [0:*]\n"
                         "set offsets 0, 0, graph 0.1, 0\n");
    /* Autoscaling a histogram leaves an empty slot at the left; fit the x
     * range to the number of rows, which gnuplot counts itself. */
    g_string_append(out, "stats ");
    append_path(out, first->csv_path);
    g_string_append_printf(out, " using %u every ::1 nooutput\n", first->y_column);
    g_string_append(out, "set xrange [-0.5:STATS_records - 0.5]\n");
    g_string_append(out, "plot ");
    for (guint j = 0; j < spec->series_len; j++) {
        KSIM_ASSERT(strcmp(spec->series[j].csv_path, first->csv_path) == 0);
        if (j > 0)
            g_string_append(out, ", \\\n     ");
        append_path(out, spec->series[j].csv_path);
        g_string_append_printf(out, " using %u", spec->series[j].y_column);
        if (j == 0)
            g_string_append_printf(out, ":xtic(%u)", spec->label_column);
        g_string_append(out, " every ::1 title ");
        plot_gnuplot_quote(out, spec->series[j].label);
        g_string_append(out, " noenhanced");
    }
    append_bar_numbers(out, spec);
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

GString *
plot_script_tradeoff(const PlotSpec *spec)
{
    KSIM_ASSERT(spec != NULL);
    KSIM_ASSERT(spec->label_column > 0);
    GString *out = script_begin(spec, "produce latency p99 (ms)", "acknowledged records lost");
    const PlotSeries *runs = &spec->series[0];
    KSIM_ASSERT(runs->x_column > 0);
    g_string_append(out, "set logscale x\n");
    g_string_append(out, "set xtics " MS_LOG_TICKS "\n");
    g_string_append(out, "set mxtics 10\n");
    /* Room around the points for their labels; a run that lost nothing
     * sits on the floor of the plot, not below it. */
    g_string_append(out, "set yrange [0:*]\n");
    g_string_append(out, "set offsets graph 0.15, graph 0.3, graph 0.15, 0\n");
    g_string_append(out, "set key off\n");
    g_string_append(out, "plot ");
    append_path(out, runs->csv_path);
    g_string_append_printf(out,
                           " using %u:%u every ::1 with points pointtype 7 pointsize 1.5 "
                           "notitle, \\\n     ",
                           runs->x_column, runs->y_column);
    append_path(out, runs->csv_path);
    g_string_append_printf(out,
                           " using %u:%u:%u every ::1 with labels left offset char 1,0.8 "
                           "noenhanced notitle\n",
                           runs->x_column, runs->y_column, spec->label_column);
    return script_end(out, spec);
}

GString *
plot_script_load(const PlotSpec *spec)
{
    GString *out = script_begin(spec, "offered load", "produce latency p99 (ms)");
    g_string_append(out, "set logscale y\n");
    g_string_append(out, "set ytics " MS_LOG_TICKS "\n");
    g_string_append(out, "set offsets graph 0.05, graph 0.05, 0, 0\n");
    append_plot_xy(out, spec, "linespoints linewidth 2 pointtype 7", NULL);
    if (spec->marks_csv != NULL) {
        g_string_append(out, ", \\\n     ");
        append_path(out, spec->marks_csv);
        g_string_append(out, " using 1:2 every ::1 with points pointtype 6 pointsize 3 "
                             "linewidth 2 linecolor rgb \"#990000\" title 'knee', \\\n     ");
        append_path(out, spec->marks_csv);
        g_string_append(out, " using 1:2:3 every ::1 with labels right offset char -1.5,1 "
                             "textcolor rgb \"#990000\" noenhanced notitle");
    }
    g_string_append_c(out, '\n');
    return script_end(out, spec);
}

/* ---- Rendering ---- */

/* Checks that gnuplot left a non-empty WORKDIR/BASENAME.EXTENSION. */
static gboolean
check_image(const char *workdir, const char *basename, const char *extension, GError **error)
{
    g_autofree char *name = g_strconcat(basename, ".", extension, NULL);
    g_autofree char *path = workdir ? g_build_filename(workdir, name, NULL) : g_strdup(name);
    GStatBuf info;
    if (g_stat(path, &info) == 0 && info.st_size > 0)
        return TRUE;
    g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT, "gnuplot made no image \"%s\"",
                path);
    return FALSE;
}

gboolean
plot_render(const GString *script, const PlotSpec *spec, const char *workdir, GError **error)
{
    KSIM_ASSERT(script != NULL);
    check_spec(spec);
    if (!plot_run(script->str, workdir, error))
        return FALSE;
    if (!check_image(workdir, spec->output_basename, "svg", error))
        return FALSE;
    if (spec->png == PLOT_PNG_NONE)
        return TRUE;
    return check_image(workdir, spec->output_basename, "png", error);
}

/* ---- HTML ---- */

void
plot_html_escape(GString *out, const char *text)
{
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(text != NULL);
    for (const char *c = text; *c != '\0'; c++) {
        switch (*c) {
        case '&':
            g_string_append(out, "&amp;");
            break;
        case '<':
            g_string_append(out, "&lt;");
            break;
        case '>':
            g_string_append(out, "&gt;");
            break;
        case '"':
            g_string_append(out, "&quot;");
            break;
        case '\'':
            g_string_append(out, "&#39;");
            break;
        default:
            g_string_append_c(out, *c);
            break;
        }
    }
}

gboolean
plot_html_embed_png(GString *html, const char *png_path, const char *alt, GError **error)
{
    KSIM_ASSERT(html != NULL);
    KSIM_ASSERT(png_path != NULL);
    KSIM_ASSERT(alt != NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    g_autoptr(GError) local = NULL;
    if (!g_file_get_contents(png_path, &contents, &len, &local)) {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_IO, "cannot read \"%s\": %s",
                    png_path, local->message);
        return FALSE;
    }
    if (len < sizeof png_signature || memcmp(contents, png_signature, sizeof png_signature) != 0) {
        g_set_error(error, KSIM_REPORTS_ERROR, KSIM_REPORTS_ERROR_PLOT, "\"%s\" is not a PNG image",
                    png_path);
        return FALSE;
    }
    g_autofree char *encoded = g_base64_encode((const guchar *)contents, len);
    g_string_append(html, "<img src=\"data:image/png;base64,");
    g_string_append(html, encoded);
    g_string_append(html, "\" alt=\"");
    plot_html_escape(html, alt);
    g_string_append(html, "\">");
    return TRUE;
}
