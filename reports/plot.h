/*
 * plot: gnuplot scripts for the report's plots, run by the gnuplot program.
 *
 * gnuplot is never linked: a builder turns a PlotSpec into the text of a
 * script, and plot_run feeds that text to a `gnuplot` process on its stdin,
 * in the directory that holds the CSV files. Each script draws one plot
 * twice, to BASENAME.svg and to BASENAME.png, so the HTML report can embed
 * the PNG and the SVG scales for print.
 *
 * The plots (issue 7):
 *   plot_script_latency_timeline  produce latency (ms, log scale) over virtual
 *                                 time, points per run, fault windows shaded;
 *   plot_script_latency_cdf       latency CDFs of several runs overlaid;
 *   plot_script_throughput        throughput over virtual time per run;
 *   plot_script_replicas          one partition: LEO and HW of each replica
 *                                 (left axis) and ISR size (right axis) over
 *                                 time, fault windows shaded;
 *   plot_script_outcome_bars      acknowledged / lost / duplicated per run as
 *                                 grouped bars with their numbers on top;
 *   plot_script_utilization       a broker's I/O-thread utilisation over time;
 *   plot_script_metrics           Kafka's metrics (JMX names) over time;
 *   plot_script_outages           when each partition had no leader;
 *   plot_script_tradeoff          [vary] runs: records lost against p99
 *                                 latency (log scale), one labelled point each;
 *   plot_script_load              [vary] runs along an offered load: p99
 *                                 latency (log scale) per curve, knees marked.
 *
 * CSV files are read with `set datafile separator comma` and their first row
 * is skipped as a header (outfile_csv writes one). A series whose CSV has no
 * data rows is skipped by gnuplot with a warning; when every series of a
 * plot is empty gnuplot fails, so callers leave such plots out. gnuplot honours double
 * quotes around a field that holds a comma, but not RFC 4180's doubled
 * quotes inside one, so run labels should not contain double quotes.
 *
 * Paths in a script are quoted for gnuplot, so any file name is safe except
 * one holding a control character (a line break would end the command), which
 * is a programming error. Pass names relative to the working directory given
 * to plot_run: then the user's output directory never appears in a script.
 * Titles and labels are shown literally (no enhanced-text markup); control
 * characters in them become spaces.
 */
#ifndef PLOT_H
#define PLOT_H

#include <glib.h>

/* The PNG terminal a script uses. */
typedef enum {
    PLOT_PNG_CAIRO = 0, /* `pngcairo`: anti-aliased; the default */
    PLOT_PNG_GD,        /* `png` (libgd), when gnuplot lacks pngcairo */
    PLOT_PNG_NONE,      /* gnuplot has no PNG terminal: SVG only */
} PlotPng;

/* What the installed gnuplot can draw; caller-owned, zero-initialise it and
 * let plot_terminals_probe fill it once. */
typedef struct {
    gboolean probed;   /* TRUE once plot_terminals_probe succeeded */
    gboolean svg;      /* the `svg` terminal exists (the scripts need it) */
    gboolean pngcairo; /* the `pngcairo` terminal exists */
    gboolean png_gd;   /* the `png` (libgd) terminal exists */
    PlotPng png;       /* the best of them, for PlotSpec.png */
} PlotTerminals;

/* TRUE when a `gnuplot` program is on the PATH. */
gboolean plot_gnuplot_available(void);

/* Runs `gnuplot -e "set terminal"` and records which terminals exist, unless
 * `terminals->probed` is already TRUE. FALSE with `error` set when gnuplot
 * cannot be run. */
gboolean plot_terminals_probe(PlotTerminals *terminals, GError **error);

/* Runs `gnuplot` with `script` on its stdin, in directory `workdir` (NULL:
 * the current one). FALSE with a KSIM_REPORTS_ERROR_PLOT `error` when gnuplot
 * cannot be started or exits unsuccessfully; the message names the workdir
 * and carries what gnuplot wrote. */
gboolean plot_run(const char *script, const char *workdir, GError **error);

/* Which y axis a series is drawn against. */
typedef enum {
    PLOT_AXIS_Y1 = 0, /* left */
    PLOT_AXIS_Y2,     /* right (plot_script_replicas only) */
} PlotAxis;

/* One curve, bar group member or point cloud. Strings are borrowed. */
typedef struct {
    const char *csv_path; /* the data file, relative to the workdir */
    const char *label;    /* legend entry */
    guint x_column;       /* 1-based column of x values (unused by bars) */
    guint y_column;       /* 1-based column of y values */
    PlotAxis axis;
} PlotSeries;

/* One fault window, shaded on the time plots; times in virtual seconds. */
typedef struct {
    double start_s;
    double end_s;
    const char *label; /* written at the window's top left; may be NULL */
} PlotWindow;

/* Everything a builder needs. Strings and arrays are borrowed for the call.
 * NULL labels take the plot's defaults. */
typedef struct {
    const char *output_basename; /* BASENAME.svg and BASENAME.png, relative to the workdir */
    const char *title;
    const char *x_label;
    const char *y_label;
    const char *y2_label;     /* plot_script_replicas only */
    const PlotSeries *series; /* at least one */
    guint series_len;
    const PlotWindow *windows; /* time plots only; ignored by the CDF and bars */
    guint windows_len;
    guint label_column; /* bars, tradeoff: 1-based column of the run labels */
    PlotPng png;        /* copy PlotTerminals.png here */
    /* plot_script_load: a CSV of marked points (x, y, label; may be NULL). */
    const char *marks_csv;
} PlotSpec;

/* The builders. Each returns a new script (transfer full). */
GString *plot_script_latency_timeline(const PlotSpec *spec);
GString *plot_script_latency_cdf(const PlotSpec *spec);
GString *plot_script_throughput(const PlotSpec *spec);
GString *plot_script_replicas(const PlotSpec *spec);
/* Utilisation (a share in [0, 1]) over virtual time, fault windows shaded. */
GString *plot_script_utilization(const PlotSpec *spec);
/* Metrics (counts and rates on one axis) over virtual time, as steps, the
 * key below, fault windows shaded. */
GString *plot_script_metrics(const PlotSpec *spec);
/* Outages: series[0]'s y column is a partition's row (0 on top), the next
 * its name, its x column an outage's start and the next its end, in
 * seconds; a bar per outage. */
GString *plot_script_outages(const PlotSpec *spec);

/* Bars: every series names the same CSV, one row per run; `label_column`
 * holds the run labels and each series' `y_column` one count. The CSV must
 * have at least one data row. */
GString *plot_script_outcome_bars(const PlotSpec *spec);

/* Tradeoff: series[0]'s x column is each run's p99 in ms, its y column the
 * records it lost; `label_column` names the point. */
GString *plot_script_tradeoff(const PlotSpec *spec);

/* Load: one curve per series (x the load, y a latency in ms), drawn with
 * lines and points; `marks_csv`, when set, adds a ringed point and its label
 * at each of its rows. */
GString *plot_script_load(const PlotSpec *spec);

/* Runs `script` in `workdir` (see plot_run), then checks that gnuplot made
 * BASENAME.svg and, unless spec->png is PLOT_PNG_NONE, BASENAME.png, both
 * non-empty; a missing image is a KSIM_REPORTS_ERROR_PLOT error. */
gboolean plot_render(const GString *script, const PlotSpec *spec, const char *workdir,
                     GError **error);

/* Appends `text` to `out` as a single-quoted gnuplot string ('' for a quote);
 * control characters become spaces. */
void plot_gnuplot_quote(GString *out, const char *text);

/* Appends `text` to `out` with &, <, >, " and ' escaped for HTML. */
void plot_html_escape(GString *out, const char *text);

/* Appends <img src="data:image/png;base64,..." alt="ALT"> holding the PNG
 * file at `png_path`, so the HTML report needs no other file. FALSE with
 * `error` set (naming the path) when the file cannot be read or is not a PNG;
 * `html` is then unchanged. */
gboolean plot_html_embed_png(GString *html, const char *png_path, const char *alt, GError **error);

#endif
