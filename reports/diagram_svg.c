/*
 * diagram_svg: the layout and the SVG text of a space-time diagram (see
 * diagram.h; what it shows is diagram.c's).
 *
 * Layout: lanes side by side (their headers at the top), time downward.
 * Each slice is a list of rows, one per distinct moment something happens
 * in it (a send, a delivery, a label, a band's edge, the slice's ends); a
 * row follows the one before by ROW_MIN_PX plus ROW_LOG_PX per decade of
 * the time between them (in units of 0.1 ms, the default link latency), and
 * by at least the height of the labels stacked on the row before. Slices
 * follow each other with a break that says how much time it skips. Every
 * text is placed so that it overlaps no text placed before it (labels of
 * events first, then message names, alternating along their arrows); a
 * message name that finds no room is left to the arrow's hover title,
 * except a step's, which is drawn anyway.
 *
 * Numbers are written with g_ascii_formatd, so the text does not depend on
 * the locale.
 */
#include "diagram_internal.h"

#include "plot.h"
#include "sim_assert.h"
#include "sim_net.h"
#include "trace_messages.h"

#include <math.h>
#include <string.h>

#define MARGIN_LEFT_PX 84.0
#define LANE_GAP_MAX_PX 180.0
#define LANE_GAP_MIN_PX 120.0
#define HEADER_TOP_PX 40.0
#define HEADER_HEIGHT_PX 22.0
#define CONTENT_TOP_PX 90.0
#define ROW_MIN_PX 13.0
#define ROW_LOG_PX 10.0
#define LABEL_LINE_PX 12.0
#define BREAK_PX 36.0
#define SLICE_PAD_PX 10.0
#define LABEL_CHAR_PX 5.6 /* 10 px text */
#define NAME_CHAR_PX 5.0  /* 9 px text */
#define WIDTH_MIN_PX 760.0

typedef struct {
    gint64 t_ns;
    double y;
    guint labels_max; /* labels stacked on one lane at this row */
} Row;

typedef struct {
    double x0, y0, x1, y1;
} Box;

typedef struct {
    const Diagram *d;
    GString *out;
    char *id;
    double lane_gap;
    double width;
    GArray *rows;       /* Row, every slice's, in time order */
    GArray *slice_rows; /* guint: slice i's rows are slice_rows[i] .. slice_rows[i+1] - 1 */
    GArray *boxes;      /* Box: the texts placed */
    GPtrArray *shown;   /* per label, its text as drawn (cut to its room) */
    double bottom;      /* of the last slice */
    gboolean traffic_used[DIAGRAM_TRAFFIC_COUNT];
    gboolean band_used[DIAGRAM_BAND_COUNT];
    gboolean dropped_used;
    gboolean step_used;
} Layout;

static const char *const TRAFFIC_COLOR[DIAGRAM_TRAFFIC_COUNT] = {
    [DIAGRAM_TRAFFIC_PRODUCE] = "#1f6fb4", [DIAGRAM_TRAFFIC_FETCH] = "#2a9d3a",
    [DIAGRAM_TRAFFIC_CONTROL] = "#8a4fbf", [DIAGRAM_TRAFFIC_ZK] = "#e07b00",
    [DIAGRAM_TRAFFIC_OTHER] = "#6b6b6b",
};
static const char *const TRAFFIC_NAME[DIAGRAM_TRAFFIC_COUNT] = {
    [DIAGRAM_TRAFFIC_PRODUCE] = "produce", [DIAGRAM_TRAFFIC_FETCH] = "fetch",
    [DIAGRAM_TRAFFIC_CONTROL] = "control", [DIAGRAM_TRAFFIC_ZK] = "zk",
    [DIAGRAM_TRAFFIC_OTHER] = "other",
};
static const char *const TRAFFIC_LEGEND[DIAGRAM_TRAFFIC_COUNT] = {
    [DIAGRAM_TRAFFIC_PRODUCE] = "Produce",
    [DIAGRAM_TRAFFIC_FETCH] = "Fetch (replication, consumers)",
    [DIAGRAM_TRAFFIC_CONTROL] = "controller: LeaderAndIsr, UpdateMetadata, StopReplica",
    [DIAGRAM_TRAFFIC_ZK] = "ZooKeeper: requests, replies, watches",
    [DIAGRAM_TRAFFIC_OTHER] = "other (metadata, groups, transactions)",
};
static const char *const BAND_NAME[DIAGRAM_BAND_COUNT] = {
    [DIAGRAM_BAND_DOWN] = "down", [DIAGRAM_BAND_POWER_LOSS] = "power-loss",
    [DIAGRAM_BAND_PAUSED] = "paused", [DIAGRAM_BAND_CUT] = "cut",
    [DIAGRAM_BAND_ISOLATED] = "isolated",
};
static const char *const BAND_LEGEND[DIAGRAM_BAND_COUNT] = {
    [DIAGRAM_BAND_DOWN] = "crashed (down until restart)",
    [DIAGRAM_BAND_POWER_LOSS] = "lost power (down until restart)",
    [DIAGRAM_BAND_PAUSED] = "paused",
    [DIAGRAM_BAND_CUT] = "cut off by a partition",
    [DIAGRAM_BAND_ISOLATED] = "isolated",
};
static const char *const BAND_FILL[DIAGRAM_BAND_COUNT] = {
    [DIAGRAM_BAND_DOWN] = "#9e9e9e", [DIAGRAM_BAND_POWER_LOSS] = "#5b3a3a",
    [DIAGRAM_BAND_PAUSED] = "#f2b632", [DIAGRAM_BAND_CUT] = "#6baed6",
    [DIAGRAM_BAND_ISOLATED] = "#2f6fab",
};
#define STEP_COLOR "#b00020"
#define DROP_COLOR "#d62728"

/* ---- text ---- */

/* Appends `text` escaped for XML character data and attribute values:
 * invalid UTF-8 replaced, control characters (which XML 1.0 does not
 * allow) as '?', then the five special characters as plot_html_escape
 * writes them. */
static void
xml_escape(GString *out, const char *text)
{
    if (text == NULL)
        return;
    g_autofree char *valid = g_utf8_make_valid(text, -1);
    for (char *c = valid; *c != '\0'; c++)
        if ((guchar)*c < 0x20 && *c != '\t' && *c != '\n')
            *c = '?';
    plot_html_escape(out, valid);
}

static void
num(GString *out, double value)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_string_append(out, g_ascii_formatd(buf, sizeof buf, "%.1f", value));
}

/* Virtual time in ms, as few decimals as it needs (at most 3). */
static void
time_ms(GString *out, gint64 ns)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.3f", (double)ns / 1e6);
    char *end = buf + strlen(buf);
    while (end > buf && end[-1] == '0')
        *--end = '\0';
    if (end > buf && end[-1] == '.')
        *--end = '\0';
    g_string_append(out, buf);
}

/* A duration as "12.3 ms" or "5.994 s". */
static void
span_text(GString *out, gint64 ns)
{
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    if (ns >= G_GINT64_CONSTANT(1000000000))
        g_string_append_printf(out, "%s s", g_ascii_formatd(buf, sizeof buf, "%.3f", ns / 1e9));
    else
        g_string_append_printf(out, "%s ms", g_ascii_formatd(buf, sizeof buf, "%.1f", ns / 1e6));
}

/* `id` as an XML name: letters, digits, '-' and '_', starting with a
 * letter. */
static char *
id_sanitize(const char *id)
{
    GString *out = g_string_new(NULL);
    for (const char *c = id != NULL ? id : ""; *c != '\0'; c++)
        g_string_append_c(out, g_ascii_isalnum(*c) || *c == '-' || *c == '_' ? *c : '-');
    if (out->len == 0 || !g_ascii_isalpha(out->str[0]))
        g_string_prepend(out, "d-");
    return g_string_free(out, FALSE);
}

/* `text` cut to `chars` characters, the last an ellipsis, when it is
 * longer. (transfer full) */
static char *
cut_text(const char *text, glong chars)
{
    if (g_utf8_strlen(text, -1) <= chars)
        return g_strdup(text);
    g_autofree char *head = g_utf8_substring(text, 0, MAX(chars - 1, 0));
    return g_strconcat(head, "…", NULL);
}

/* ---- layout ---- */

static double
lane_x(const Layout *l, guint lane)
{
    return MARGIN_LEFT_PX + 40.0 + lane * l->lane_gap;
}

static gint
row_compare(gconstpointer a, gconstpointer b)
{
    const Row *x = a, *y = b;
    return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

static gint64
clamp_ns(gint64 t, const DiagramSlice *s)
{
    return CLAMP(t, s->from_ns, s->to_ns);
}

static void
row_add(GArray *rows, gint64 t_ns)
{
    Row row = {t_ns, 0.0, 0};
    g_array_append_val(rows, row);
}

/* The rows of slice `s`: its moments, sorted and distinct, with the most
 * labels any lane stacks on each. */
static GArray *
slice_rows(const Diagram *d, guint s)
{
    const DiagramSlice *slice = &g_array_index(d->slices, DiagramSlice, s);
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
    row_add(rows, slice->from_ns);
    row_add(rows, slice->to_ns);
    for (guint i = 0; i < d->messages->len; i++) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->slice != s)
            continue;
        row_add(rows, clamp_ns(m->send_ns, slice));
        row_add(rows, clamp_ns(m->end_ns, slice));
    }
    for (guint i = 0; i < d->bands->len; i++) {
        const DiagramBand *b = &g_array_index(d->bands, DiagramBand, i);
        if (b->from_ns >= slice->from_ns && b->from_ns <= slice->to_ns)
            row_add(rows, b->from_ns);
        if (b->to_ns >= slice->from_ns && b->to_ns <= slice->to_ns)
            row_add(rows, b->to_ns);
    }
    for (guint i = 0; i < d->labels->len; i++) {
        const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        if (label->time_ns >= slice->from_ns && label->time_ns <= slice->to_ns)
            row_add(rows, label->time_ns);
    }
    g_array_sort(rows, row_compare);
    guint w = 0;
    for (guint i = 0; i < rows->len; i++) {
        if (w > 0 && g_array_index(rows, Row, w - 1).t_ns == g_array_index(rows, Row, i).t_ns)
            continue;
        g_array_index(rows, Row, w++) = g_array_index(rows, Row, i);
    }
    g_array_set_size(rows, w);
    /* Labels stacked per row and lane (lane G_MAXUINT: across, its own). */
    for (guint i = 0; i < d->labels->len; i++) {
        const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        if (label->time_ns < slice->from_ns || label->time_ns > slice->to_ns)
            continue;
        guint same = 0;
        for (guint k = 0; k < d->labels->len; k++) {
            const DiagramLabel *other = &g_array_index(d->labels, DiagramLabel, k);
            same += other->time_ns == label->time_ns && other->lane == label->lane;
        }
        for (guint r = 0; r < rows->len; r++) {
            Row *row = &g_array_index(rows, Row, r);
            if (row->t_ns == label->time_ns)
                row->labels_max = MAX(row->labels_max, same);
        }
    }
    return rows;
}

/* The space between two rows `dt_ns` apart. */
static double
row_gap(gint64 dt_ns, guint labels_before)
{
    double gap = ROW_MIN_PX + ROW_LOG_PX * log10(1.0 + (double)dt_ns / 1e5);
    return MAX(gap, labels_before * LABEL_LINE_PX + 3.0);
}

static void
layout_rows(Layout *l)
{
    const Diagram *d = l->d;
    double y = CONTENT_TOP_PX;
    for (guint s = 0; s < d->slices->len; s++) {
        g_autoptr(GArray) rows = slice_rows(d, s);
        guint first = l->rows->len;
        g_array_append_val(l->slice_rows, first);
        for (guint i = 0; i < rows->len; i++) {
            Row *row = &g_array_index(rows, Row, i);
            if (i > 0) {
                const Row *before = &g_array_index(rows, Row, i - 1);
                y += row_gap(row->t_ns - before->t_ns, before->labels_max);
            }
            row->y = y;
            g_array_append_val(l->rows, *row);
        }
        const Row *last = &g_array_index(rows, Row, rows->len - 1);
        y += MAX(SLICE_PAD_PX, last->labels_max * LABEL_LINE_PX);
        if (s + 1 < d->slices->len)
            y += BREAK_PX;
    }
    guint end = l->rows->len;
    g_array_append_val(l->slice_rows, end);
    l->bottom = y;
}

static const Row *
row_at(const Layout *l, guint i)
{
    return &g_array_index(l->rows, Row, i);
}

/* The y of time `t_ns`: its row's (between rows, interpolated); in a break,
 * the break's middle; before the first slice or after the last, the edge. */
static double
y_of(const Layout *l, gint64 t_ns)
{
    const Diagram *d = l->d;
    for (guint s = 0; s < d->slices->len; s++) {
        const DiagramSlice *slice = &g_array_index(d->slices, DiagramSlice, s);
        guint first = g_array_index(l->slice_rows, guint, s);
        guint end = g_array_index(l->slice_rows, guint, s + 1);
        if (t_ns < slice->from_ns)
            return s == 0 ? row_at(l, first)->y
                          : (row_at(l, first - 1)->y + row_at(l, first)->y) / 2.0;
        if (t_ns > slice->to_ns)
            continue;
        for (guint i = first; i < end; i++) {
            const Row *row = row_at(l, i);
            if (row->t_ns == t_ns)
                return row->y;
            if (row->t_ns > t_ns && i > first) {
                const Row *before = row_at(l, i - 1);
                double f = (double)(t_ns - before->t_ns) / (double)(row->t_ns - before->t_ns);
                return before->y + f * (row->y - before->y);
            }
        }
        return row_at(l, end - 1)->y;
    }
    return row_at(l, l->rows->len - 1)->y;
}

static gboolean
box_free_of_others(const Layout *l, Box b)
{
    if (b.x0 < MARGIN_LEFT_PX || b.x1 > l->width - 4)
        return FALSE;
    for (guint i = 0; i < l->boxes->len; i++) {
        const Box *o = &g_array_index(l->boxes, Box, i);
        if (b.x0 < o->x1 && o->x0 < b.x1 && b.y0 < o->y1 && o->y0 < b.y1)
            return FALSE;
    }
    return TRUE;
}

static void
box_add(Layout *l, double x0, double y0, double x1, double y1)
{
    Box b = {x0, y0, x1, y1};
    g_array_append_val(l->boxes, b);
}

/* Wide enough for the last lane's header and every label right of its
 * lane. */
static double
diagram_width(const Layout *l)
{
    const Diagram *d = l->d;
    guint lanes = MAX(d->lanes->len, 1u);
    double width = MAX(WIDTH_MIN_PX, lane_x(l, lanes - 1) + 80);
    for (guint i = 0; i < d->labels->len; i++) {
        const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        double x = label->lane == G_MAXUINT ? lane_x(l, lanes - 1) + 10 : lane_x(l, label->lane) + 7;
        double w = (g_utf8_strlen(label->text, -1) + (label->step ? 4 : 0)) * LABEL_CHAR_PX;
        width = MAX(width, x + w + 12);
    }
    return width;
}

/* ---- drawing ---- */

static void
defs(Layout *l)
{
    GString *o = l->out;
    g_string_append(o, "<defs>\n");
    for (guint t = 0; t < DIAGRAM_TRAFFIC_COUNT; t++)
        g_string_append_printf(o,
                               "<marker id=\"%s-arrow-%s\" viewBox=\"0 0 10 10\" refX=\"9\" "
                               "refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
                               "orient=\"auto\"><path d=\"M0,1 L10,5 L0,9 z\" fill=\"%s\"/>"
                               "</marker>\n",
                               l->id, TRAFFIC_NAME[t], TRAFFIC_COLOR[t]);
    for (guint b = 0; b < DIAGRAM_BAND_COUNT; b++)
        g_string_append_printf(o,
                               "<pattern id=\"%s-band-%s\" width=\"6\" height=\"6\" "
                               "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                               "<rect width=\"6\" height=\"6\" fill=\"%s\" fill-opacity=\"0.25\"/>"
                               "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"%s\" "
                               "stroke-width=\"%s\" stroke-opacity=\"0.6\"/></pattern>\n",
                               l->id, BAND_NAME[b], BAND_FILL[b], BAND_FILL[b],
                               b == DIAGRAM_BAND_DOWN || b == DIAGRAM_BAND_POWER_LOSS ? "3" : "1");
    g_string_append(o, "</defs>\n");
}

static void
draw_slices(Layout *l)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    double right = l->width - 8;
    g_string_append(o, "<g class=\"axis\">\n<text x=\"");
    num(o, MARGIN_LEFT_PX - 10);
    g_string_append(o, "\" y=\"");
    num(o, CONTENT_TOP_PX - 14);
    g_string_append(o, "\" text-anchor=\"end\" font-weight=\"bold\" fill=\"#555\">time (ms)</text>\n");
    for (guint s = 0; s < d->slices->len; s++) {
        guint first = g_array_index(l->slice_rows, guint, s);
        guint end = g_array_index(l->slice_rows, guint, s + 1);
        double top = row_at(l, first)->y - 6, bottom = row_at(l, end - 1)->y + 6;
        g_string_append_printf(o, "<rect class=\"slice\" x=\"%d\" y=\"", (int)MARGIN_LEFT_PX);
        num(o, top);
        g_string_append(o, "\" width=\"");
        num(o, right - MARGIN_LEFT_PX);
        g_string_append(o, "\" height=\"");
        num(o, bottom - top);
        g_string_append(o, "\" fill=\"#f6f8fb\"/>\n");
        double last_label = -1e9;
        for (guint i = first; i < end; i++) {
            const Row *row = row_at(l, i);
            if (row->y - last_label < 11.0)
                continue;
            last_label = row->y;
            g_string_append(o, "<text x=\"");
            num(o, MARGIN_LEFT_PX - 10);
            g_string_append(o, "\" y=\"");
            num(o, row->y + 3);
            g_string_append(o, "\" text-anchor=\"end\" font-size=\"9\" fill=\"#444\">");
            time_ms(o, row->t_ns);
            g_string_append(o, "</text><line x1=\"");
            num(o, MARGIN_LEFT_PX - 6);
            g_string_append(o, "\" x2=\"");
            num(o, MARGIN_LEFT_PX);
            g_string_append(o, "\" y1=\"");
            num(o, row->y);
            g_string_append(o, "\" y2=\"");
            num(o, row->y);
            g_string_append(o, "\" stroke=\"#888\"/>\n");
        }
        if (s + 1 == d->slices->len)
            continue;
        const DiagramSlice *a = &g_array_index(d->slices, DiagramSlice, s);
        const DiagramSlice *b = &g_array_index(d->slices, DiagramSlice, s + 1);
        double mid = (row_at(l, end - 1)->y + row_at(l, end)->y) / 2.0;
        g_string_append(o, "<path class=\"break\" d=\"M");
        num(o, MARGIN_LEFT_PX - 40);
        g_string_append_c(o, ',');
        num(o, mid);
        for (double x = MARGIN_LEFT_PX - 32; x <= right; x += 8) {
            g_string_append(o, " L");
            num(o, x);
            g_string_append_c(o, ',');
            num(o, mid + ((int)(x / 8) % 2 == 0 ? -3 : 3));
        }
        g_string_append(o, "\" fill=\"none\" stroke=\"#aaa\"/>\n<text x=\"");
        num(o, MARGIN_LEFT_PX + 8);
        g_string_append(o, "\" y=\"");
        num(o, mid - 6);
        g_string_append(o, "\" font-size=\"9\" fill=\"#666\" font-style=\"italic\">… ");
        span_text(o, b->from_ns - a->to_ns);
        g_string_append(o, " later …</text>\n");
    }
    g_string_append(o, "</g>\n");
}

static void
draw_lanes(Layout *l)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    for (guint i = 0; i < d->lanes->len; i++) {
        const char *name = diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, i));
        double x = lane_x(l, i);
        g_string_append(o, "<g class=\"lane\" data-node=\"");
        xml_escape(o, name);
        g_string_append(o, "\"><line x1=\"");
        num(o, x);
        g_string_append(o, "\" x2=\"");
        num(o, x);
        g_string_append(o, "\" y1=\"");
        num(o, HEADER_TOP_PX + HEADER_HEIGHT_PX);
        g_string_append(o, "\" y2=\"");
        num(o, l->bottom);
        g_string_append(o, "\" stroke=\"#b8b8b8\" stroke-dasharray=\"3,3\"/><rect x=\"");
        num(o, x - 60);
        g_string_append(o, "\" y=\"");
        num(o, HEADER_TOP_PX);
        g_string_append(o, "\" width=\"120\" height=\"");
        num(o, HEADER_HEIGHT_PX);
        g_string_append(o, "\" rx=\"4\" fill=\"#eef1f5\" stroke=\"#8a94a3\"/><text x=\"");
        num(o, x);
        g_string_append(o, "\" y=\"");
        num(o, HEADER_TOP_PX + 15);
        g_string_append(o, "\" text-anchor=\"middle\" font-weight=\"bold\" font-size=\"11\">");
        g_autofree char *shown = cut_text(name, 20);
        xml_escape(o, shown);
        g_string_append(o, "<title>");
        xml_escape(o, name);
        g_string_append(o, "</title></text></g>\n");
    }
}

static void
draw_bands(Layout *l)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    for (guint i = 0; i < d->bands->len; i++) {
        const DiagramBand *b = &g_array_index(d->bands, DiagramBand, i);
        l->band_used[b->kind] = TRUE;
        double x = lane_x(l, b->lane), y0 = y_of(l, b->from_ns), y1 = y_of(l, b->to_ns);
        y1 = MAX(y1, y0 + 2);
        g_string_append_printf(o, "<g class=\"band\" data-kind=\"%s\" data-node=\"",
                               BAND_NAME[b->kind]);
        xml_escape(o, diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, b->lane)));
        g_string_append(o, "\"><title>");
        xml_escape(o, b->text);
        g_string_append(o, ": ");
        time_ms(o, b->from_ns);
        g_string_append(o, "–");
        time_ms(o, b->to_ns);
        g_string_append(o, " ms</title><rect x=\"");
        num(o, x - 7);
        g_string_append(o, "\" y=\"");
        num(o, y0);
        g_string_append(o, "\" width=\"14\" height=\"");
        num(o, y1 - y0);
        g_string_append_printf(o, "\" fill=\"url(#%s-band-%s)\" stroke=\"%s\"/>", l->id,
                               BAND_NAME[b->kind], BAND_FILL[b->kind]);
        /* Its name down the lane's left side from its start, cut to the
         * band's length (the title has it whole). */
        glong room = (glong)((y1 - y0 - 6) / NAME_CHAR_PX);
        glong chars = g_utf8_strlen(b->text, -1);
        if (room >= 6) {
            g_autofree char *shown = cut_text(b->text, room);
            double w = MIN(chars, room) * NAME_CHAR_PX;
            g_string_append(o, "<text x=\"");
            num(o, x - 10);
            g_string_append(o, "\" y=\"");
            num(o, y0 + 4);
            g_string_append(o, "\" transform=\"rotate(90 ");
            num(o, x - 10);
            g_string_append_c(o, ' ');
            num(o, y0 + 4);
            g_string_append_printf(o, ")\" font-size=\"9\" font-style=\"italic\" fill=\"%s\" "
                                      "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">",
                                   b->kind == DIAGRAM_BAND_PAUSED ? "#8a6200" : BAND_FILL[b->kind]);
            xml_escape(o, shown);
            g_string_append(o, "</text>");
            box_add(l, x - 20, y0, x - 8, y0 + 4 + w);
        }
        g_string_append(o, "</g>\n");
    }
}

/* The y of label `i`'s line: its row's, below the labels of its moment and
 * lane before it. */
static double
label_y(const Layout *l, guint i)
{
    const Diagram *d = l->d;
    const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
    guint before = 0;
    for (guint k = 0; k < i; k++) {
        const DiagramLabel *other = &g_array_index(d->labels, DiagramLabel, k);
        before += other->time_ns == label->time_ns && other->lane == label->lane;
    }
    return y_of(l, label->time_ns) + before * LABEL_LINE_PX;
}

/* The room right of label `i`: up to the nearest lane to its right with a
 * label beside it (within a line), else unbounded. */
static double
label_room(const Layout *l, guint i)
{
    const Diagram *d = l->d;
    const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
    if (label->lane == G_MAXUINT)
        return G_MAXDOUBLE;
    double y = label_y(l, i), room = G_MAXDOUBLE;
    for (guint k = 0; k < d->labels->len; k++) {
        const DiagramLabel *other = &g_array_index(d->labels, DiagramLabel, k);
        if (other->lane == G_MAXUINT || other->lane <= label->lane ||
            fabs(label_y(l, k) - y) >= LABEL_LINE_PX)
            continue;
        room = MIN(room, lane_x(l, other->lane) - lane_x(l, label->lane) - 16);
    }
    return room;
}

/* Cuts each label's text to its room and reserves its place, before any
 * message name is placed. */
static void
reserve_labels(Layout *l)
{
    const Diagram *d = l->d;
    for (guint i = 0; i < d->labels->len; i++) {
        const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        double x = label->lane == G_MAXUINT ? lane_x(l, d->lanes->len - 1) + 10
                                            : lane_x(l, label->lane) + 7;
        double y = label_y(l, i);
        glong chars = g_utf8_strlen(label->text, -1) + (label->step ? 4 : 0);
        double room = label_room(l, i);
        char *text = g_strdup(label->text);
        if (chars * LABEL_CHAR_PX > room) {
            glong keep = MAX(4, (glong)(room / LABEL_CHAR_PX) - (label->step ? 4 : 0) - 1);
            g_autofree char *cut = g_utf8_substring(text, 0, MIN(keep, g_utf8_strlen(text, -1)));
            g_free(text);
            text = g_strconcat(cut, "…", NULL);
            chars = g_utf8_strlen(text, -1) + (label->step ? 4 : 0);
        }
        g_ptr_array_add(l->shown, text);
        box_add(l, x - 2, y - 8, x + chars * LABEL_CHAR_PX, y + 4);
    }
}

static void
draw_labels(Layout *l)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    for (guint i = 0; i < d->labels->len; i++) {
        const DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        gboolean across = label->lane == G_MAXUINT;
        double y = label_y(l, i), y_dot = y_of(l, label->time_ns);
        double x_dot = across ? lane_x(l, 0) : lane_x(l, label->lane);
        double x = across ? lane_x(l, d->lanes->len - 1) + 10 : x_dot + 7;
        const char *color = label->step ? STEP_COLOR : label->note ? "#777" : "#222";
        l->step_used |= label->step != 0;
        g_string_append_printf(o, "<g class=\"label\" data-kind=\"%s\"",
                               label->step ? "step" : label->note ? "note" : "event");
        if (label->step)
            g_string_append_printf(o, " data-step=\"%u\"", label->step);
        g_string_append(o, "><title>");
        time_ms(o, label->time_ns);
        g_string_append(o, " ms: ");
        xml_escape(o, label->title != NULL ? label->title : label->text);
        g_string_append(o, "</title>");
        if (across) {
            g_string_append(o, "<line x1=\"");
            num(o, x_dot - 20);
            g_string_append(o, "\" x2=\"");
            num(o, x - 4);
            g_string_append(o, "\" y1=\"");
            num(o, y_dot);
            g_string_append(o, "\" y2=\"");
            num(o, y_dot);
            g_string_append_printf(o, "\" stroke=\"%s\" stroke-dasharray=\"6,3\"/>", color);
        } else if (label->note) {
            g_string_append(o, "<rect x=\"");
            num(o, x_dot - 2.5);
            g_string_append(o, "\" y=\"");
            num(o, y_dot - 2.5);
            g_string_append(o, "\" width=\"5\" height=\"5\" fill=\"#999\"/>");
        } else {
            g_string_append(o, "<circle cx=\"");
            num(o, x_dot);
            g_string_append(o, "\" cy=\"");
            num(o, y_dot);
            g_string_append_printf(o, "\" r=\"%s\" fill=\"%s\"/>", label->step ? "4.5" : "3",
                                   color);
        }
        g_string_append(o, "<text x=\"");
        num(o, x);
        g_string_append(o, "\" y=\"");
        num(o, y + 3.5);
        g_string_append_printf(o, "\" fill=\"%s\"%s%s stroke=\"#fff\" stroke-width=\"3\" "
                                  "paint-order=\"stroke\">",
                               color, label->step ? " font-weight=\"bold\"" : "",
                               label->note ? " font-style=\"italic\"" : "");
        if (label->step)
            g_string_append_printf(o, "%u. ", label->step);
        xml_escape(o, g_ptr_array_index(l->shown, i));
        g_string_append(o, "</text></g>\n");
    }
}

/* A message's name on its arrow: its short name, the note it carried. */
static char *
message_label(const DiagramMessage *m)
{
    GString *text = g_string_new(NULL);
    diagram_message_short_name(text, m->type);
    if (m->drop_reason >= 0)
        g_string_append(text, " dropped");
    if (m->note != NULL) {
        g_autofree char *note = cut_text(m->note, 44);
        g_string_append_printf(text, ": %s", note);
    }
    return g_string_free(text, FALSE);
}

static void
message_title(GString *o, const Diagram *d, const DiagramMessage *m)
{
    const char *name = trace_message_name(m->type);
    if (name != NULL)
        xml_escape(o, name);
    else
        g_string_append_printf(o, "message %" G_GUINT64_FORMAT, m->type);
    g_string_append(o, ": ");
    xml_escape(o, diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, m->from)));
    g_string_append(o, " → ");
    xml_escape(o, diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, m->to)));
    g_string_append_printf(o, ", %" G_GUINT64_FORMAT " bytes; sent ", m->bytes);
    time_ms(o, m->send_ns);
    g_string_append(o, m->drop_reason >= 0 ? " ms, dropped " : " ms, delivered ");
    time_ms(o, m->end_ns);
    g_string_append(o, " ms");
    if (m->drop_reason >= 0) {
        const char *reason = sim_net_drop_reason_name((guint)m->drop_reason);
        g_string_append_printf(o, " (%s)", reason != NULL ? reason : "dropped");
    }
    if (m->note != NULL) {
        g_string_append(o, "; ");
        xml_escape(o, m->note);
    }
}

/* Places message `i`'s name along its arrow from (x1, y1) to (x2, y2):
 * the first of a few points along it (alternating between neighbours)
 * where it overlaps no text placed; FALSE when none is free. */
static gboolean
place_name(Layout *l, guint i, const char *text, gboolean self, double x1, double y1, double x2,
           double y2, gboolean force, double *x, double *y)
{
    static const double even[] = {0.5, 0.3, 0.7, 0.15, 0.85};
    static const double odd[] = {0.35, 0.65, 0.5, 0.2, 0.8};
    const double *fractions = i % 2 == 0 ? even : odd;
    double w = g_utf8_strlen(text, -1) * NAME_CHAR_PX;
    for (guint k = 0; k < G_N_ELEMENTS(even); k++) {
        double f = fractions[k];
        double px = self ? x1 + 40 + w / 2 : x1 + f * (x2 - x1);
        double py = (self ? y1 + (k + 0.5) * (y2 - y1) / 5 : y1 + f * (y2 - y1)) - 2;
        Box b = {px - w / 2, py - 8, px + w / 2, py + 1};
        if (!box_free_of_others(l, b) && !(force && k + 1 == G_N_ELEMENTS(even)))
            continue;
        box_add(l, b.x0, b.y0, b.x1, b.y1);
        *x = px;
        *y = py;
        return TRUE;
    }
    return FALSE;
}

static void
draw_message(Layout *l, guint i)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
    const DiagramSlice *slice = &g_array_index(d->slices, DiagramSlice, m->slice);
    gboolean dropped = m->drop_reason >= 0, self = m->from == m->to;
    double x1 = lane_x(l, m->from), x2 = lane_x(l, m->to);
    double y1 = y_of(l, clamp_ns(m->send_ns, slice)), y2 = y_of(l, clamp_ns(m->end_ns, slice));
    if (self)
        y2 = MAX(y2, y1 + 8);
    const char *color = dropped ? DROP_COLOR : TRAFFIC_COLOR[m->traffic];
    l->traffic_used[m->traffic] |= !dropped;
    l->dropped_used |= dropped;
    g_autofree char *name = message_label(m);
    g_string_append(o, "<g class=\"message\" data-type=\"");
    xml_escape(o, trace_message_name(m->type) != NULL ? trace_message_name(m->type) : "other");
    g_string_append(o, "\" data-from=\"");
    xml_escape(o, diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, m->from)));
    g_string_append(o, "\" data-to=\"");
    xml_escape(o, diagram_trace_node_name(d->trace, g_array_index(d->lanes, guint32, m->to)));
    g_string_append_printf(o, "\"%s%s><title>", m->step ? " data-step=\"true\"" : "",
                           dropped ? " data-dropped=\"true\"" : "");
    message_title(o, d, m);
    g_string_append(o, "</title>");
    const char *width = m->step ? "2.2" : "1.1";
    g_autofree char *marker = dropped ? g_strdup("")
                                      : g_strdup_printf(" marker-end=\"url(#%s-arrow-%s)\"", l->id,
                                                        TRAFFIC_NAME[m->traffic]);
    const char *dash = dropped ? " stroke-dasharray=\"4,3\"" : "";
    if (self) {
        g_string_append(o, "<path d=\"M");
        num(o, x1);
        g_string_append_c(o, ',');
        num(o, y1);
        g_string_append(o, " C");
        num(o, x1 + 34);
        g_string_append_c(o, ',');
        num(o, y1);
        g_string_append_c(o, ' ');
        num(o, x1 + 34);
        g_string_append_c(o, ',');
        num(o, y2);
        g_string_append_c(o, ' ');
        num(o, x1 + 2);
        g_string_append_c(o, ',');
        num(o, y2);
        g_string_append_printf(o, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s%s/>", color,
                               width, dash, marker);
    } else {
        g_string_append(o, "<line x1=\"");
        num(o, x1);
        g_string_append(o, "\" y1=\"");
        num(o, y1);
        g_string_append(o, "\" x2=\"");
        num(o, x2);
        g_string_append(o, "\" y2=\"");
        num(o, y2);
        g_string_append_printf(o, "\" stroke=\"%s\" stroke-width=\"%s\"%s%s%s/>", color, width,
                               m->step ? "" : " stroke-opacity=\"0.8\"", dash, marker);
    }
    if (dropped) {
        g_string_append(o, "<path d=\"M");
        num(o, x2 - 4);
        g_string_append_c(o, ',');
        num(o, y2 - 4);
        g_string_append(o, " l8,8 m0,-8 l-8,8\"");
        g_string_append_printf(o, " stroke=\"%s\" stroke-width=\"1.6\"/>", DROP_COLOR);
    }
    double tx, ty;
    if (place_name(l, i, name, self, x1, y1, x2, y2, m->step, &tx, &ty)) {
        g_string_append(o, "<text x=\"");
        num(o, tx);
        g_string_append(o, "\" y=\"");
        num(o, ty);
        g_string_append_printf(o, "\" text-anchor=\"middle\" font-size=\"9\" fill=\"%s\"%s "
                                  "stroke=\"#fff\" stroke-width=\"2.5\" paint-order=\"stroke\">",
                               color, m->step ? " font-weight=\"bold\"" : "");
        xml_escape(o, name);
        g_string_append(o, "</text>");
    }
    g_string_append(o, "</g>\n");
}

/* ---- legend and notes ---- */

typedef struct {
    double x;
    double y;
    double right;
} Flow;

static void
legend_item_start(Layout *l, Flow *f, const char *text)
{
    double w = 30 + g_utf8_strlen(text, -1) * LABEL_CHAR_PX + 18;
    if (f->x + w > f->right && f->x > 16) {
        f->x = 16;
        f->y += 18;
    }
    (void)l;
}

static void
legend_text(Layout *l, Flow *f, const char *text)
{
    GString *o = l->out;
    g_string_append(o, "<text x=\"");
    num(o, f->x + 26);
    g_string_append(o, "\" y=\"");
    num(o, f->y + 4);
    g_string_append(o, "\" fill=\"#333\">");
    xml_escape(o, text);
    g_string_append(o, "</text>\n");
    f->x += 30 + g_utf8_strlen(text, -1) * LABEL_CHAR_PX + 18;
}

static double
draw_legend(Layout *l, double top)
{
    GString *o = l->out;
    Flow f = {16, top + 12, l->width - 16};
    g_string_append(o, "<g class=\"legend\">\n");
    for (guint t = 0; t < DIAGRAM_TRAFFIC_COUNT; t++) {
        if (!l->traffic_used[t])
            continue;
        legend_item_start(l, &f, TRAFFIC_LEGEND[t]);
        g_string_append(o, "<line x1=\"");
        num(o, f.x);
        g_string_append(o, "\" x2=\"");
        num(o, f.x + 20);
        g_string_append(o, "\" y1=\"");
        num(o, f.y);
        g_string_append(o, "\" y2=\"");
        num(o, f.y);
        g_string_append_printf(o, "\" stroke=\"%s\" stroke-width=\"1.4\" "
                                  "marker-end=\"url(#%s-arrow-%s)\"/>",
                               TRAFFIC_COLOR[t], l->id, TRAFFIC_NAME[t]);
        legend_text(l, &f, TRAFFIC_LEGEND[t]);
    }
    if (l->dropped_used) {
        legend_item_start(l, &f, "dropped");
        g_string_append(o, "<line x1=\"");
        num(o, f.x);
        g_string_append(o, "\" x2=\"");
        num(o, f.x + 18);
        g_string_append(o, "\" y1=\"");
        num(o, f.y);
        g_string_append(o, "\" y2=\"");
        num(o, f.y);
        g_string_append_printf(o, "\" stroke=\"%s\" stroke-dasharray=\"4,3\"/>", DROP_COLOR);
        legend_text(l, &f, "dropped");
    }
    for (guint b = 0; b < DIAGRAM_BAND_COUNT; b++) {
        if (!l->band_used[b])
            continue;
        legend_item_start(l, &f, BAND_LEGEND[b]);
        g_string_append_printf(o, "<rect class=\"legend-band\" data-kind=\"%s\" x=\"", BAND_NAME[b]);
        num(o, f.x + 4);
        g_string_append(o, "\" y=\"");
        num(o, f.y - 7);
        g_string_append_printf(o, "\" width=\"14\" height=\"14\" fill=\"url(#%s-band-%s)\" "
                                  "stroke=\"%s\"/>",
                               l->id, BAND_NAME[b], BAND_FILL[b]);
        legend_text(l, &f, BAND_LEGEND[b]);
    }
    if (l->step_used) {
        const char *text = "a step of the explanation, numbered as there; bold arrows: what it "
                           "received and sent";
        legend_item_start(l, &f, text);
        g_string_append(o, "<circle cx=\"");
        num(o, f.x + 10);
        g_string_append(o, "\" cy=\"");
        num(o, f.y);
        g_string_append(o, "\" r=\"4.5\" fill=\"" STEP_COLOR "\"/>");
        legend_text(l, &f, text);
    }
    g_string_append(o, "</g>\n");
    return f.y + 12;
}

/* Splits `text` into lines of at most `chars` characters, at spaces. */
static GPtrArray *
wrap(const char *text, glong chars)
{
    GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) words = g_strsplit(text, " ", -1);
    GString *line = g_string_new(NULL);
    for (guint i = 0; words[i] != NULL; i++) {
        if (line->len > 0 && g_utf8_strlen(line->str, -1) + 1 + g_utf8_strlen(words[i], -1) >
                                 chars) {
            g_ptr_array_add(lines, g_strdup(line->str));
            g_string_truncate(line, 0);
        }
        g_string_append_printf(line, "%s%s", line->len > 0 ? " " : "", words[i]);
    }
    if (line->len > 0)
        g_ptr_array_add(lines, g_strdup(line->str));
    g_string_free(line, TRUE);
    return lines;
}

static double
draw_notes(Layout *l, double top)
{
    const Diagram *d = l->d;
    GString *o = l->out;
    double y = top + 8;
    g_string_append(o, "<g class=\"notes\" font-size=\"10\" fill=\"#555\">\n");
    static const char *const axis =
        "Time runs downward: one row per moment something happens, spaced by the logarithm of "
        "the time between; hover over an arrow, band or label for its details.";
    for (guint i = 0; i <= d->notes->len; i++) {
        g_autoptr(GPtrArray) lines = wrap(i < d->notes->len ? g_ptr_array_index(d->notes, i) : axis,
                                          (glong)((l->width - 32) / LABEL_CHAR_PX));
        for (guint k = 0; k < lines->len; k++) {
            y += 13;
            g_string_append(o, "<text x=\"16\" y=\"");
            num(o, y);
            g_string_append(o, "\">");
            xml_escape(o, g_ptr_array_index(lines, k));
            g_string_append(o, "</text>\n");
        }
    }
    g_string_append(o, "</g>\n");
    return y + 10;
}

/* ---- the document ---- */

char *
diagram_svg_render(const Diagram *d)
{
    KSIM_ASSERT(d->slices->len > 0);
    Layout l = {0};
    l.d = d;
    l.id = id_sanitize(d->id);
    guint lanes = MAX(d->lanes->len, 1u);
    l.lane_gap = lanes <= 6 ? LANE_GAP_MAX_PX
                            : MAX(LANE_GAP_MIN_PX, LANE_GAP_MAX_PX - 12.0 * (lanes - 6));
    l.width = diagram_width(&l);
    l.rows = g_array_new(FALSE, FALSE, sizeof(Row));
    l.slice_rows = g_array_new(FALSE, FALSE, sizeof(guint));
    l.boxes = g_array_new(FALSE, FALSE, sizeof(Box));
    l.shown = g_ptr_array_new_with_free_func(g_free);
    l.out = g_string_new(NULL);
    layout_rows(&l);

    defs(&l);
    g_string_append(l.out, "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
                           "<text class=\"title\" x=\"16\" y=\"22\" font-size=\"13\" "
                           "font-weight=\"bold\">");
    xml_escape(l.out, d->title);
    g_string_append(l.out, "</text>\n");
    draw_slices(&l);
    draw_lanes(&l);
    draw_bands(&l);
    reserve_labels(&l);
    for (guint i = 0; i < d->messages->len; i++)
        draw_message(&l, i);
    draw_labels(&l);
    double y = draw_legend(&l, l.bottom + 8);
    y = draw_notes(&l, y);

    GString *svg = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    g_string_append_printf(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"%s\" "
                                "class=\"ksim-diagram\" width=\"",
                           l.id);
    num(svg, l.width);
    g_string_append(svg, "\" height=\"");
    num(svg, y);
    g_string_append(svg, "\" viewBox=\"0 0 ");
    num(svg, l.width);
    g_string_append_c(svg, ' ');
    num(svg, y);
    g_string_append(svg, "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"10\">\n"
                         "<title>");
    xml_escape(svg, d->title);
    g_string_append(svg, "</title>\n");
    g_string_append_len(svg, l.out->str, (gssize)l.out->len);
    g_string_append(svg, "</svg>\n");
    g_string_free(l.out, TRUE);
    g_array_free(l.rows, TRUE);
    g_array_free(l.slice_rows, TRUE);
    g_array_free(l.boxes, TRUE);
    g_ptr_array_free(l.shown, TRUE);
    g_free(l.id);
    return g_string_free(svg, FALSE);
}
