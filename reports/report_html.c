/*
 * report_html: report.html, the Document rendered as one self-contained
 * HTML page with its images inline (report_html_render).
 */
#include "report_internal.h"

#include "plot.h"

#include <string.h>

#define HTML_STYLE                                                                                 \
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;"       \
    "line-height:1.45}table{border-collapse:collapse;margin:1em 0;font-size:0.9em}"                \
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"              \
    "th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}"               \
    "img{max-width:100%;display:block;margin:1em 0}ol{margin-top:0}"                               \
    ".warning{background:#fff3cd;border-left:4px solid #e0a800;padding:0.5em 1em}"

static gboolean
looks_numeric(const char *text)
{
    if (*text == '-' && text[1] != '\0')
        text++;
    return g_ascii_isdigit(*text);
}

static void
html_table(GString *out, const Block *block)
{
    g_string_append(out, "<table>\n");
    for (guint r = 0; r < block->rows->len; r++) {
        const GPtrArray *row = g_ptr_array_index(block->rows, r);
        g_string_append(out, "<tr>");
        for (guint c = 0; c < row->len; c++) {
            const char *text = g_ptr_array_index(row, c);
            const char *tag = r == 0 ? "th" : "td";
            gboolean number = r > 0 && looks_numeric(text);
            g_string_append_printf(out, "<%s%s>", tag, number ? " class=\"n\"" : "");
            plot_html_escape(out, text);
            g_string_append_printf(out, "</%s>", tag);
        }
        g_string_append(out, "</tr>\n");
    }
    g_string_append(out, "</table>\n");
}

static void
html_list(GString *out, const Block *block)
{
    const char *tag = block->kind == BLOCK_LIST ? "ul" : "ol";
    g_string_append_printf(out, "<%s>\n", tag);
    for (guint i = 0; i < block->rows->len; i++) {
        const char *link =
            block->links != NULL && i < block->links->len ? g_ptr_array_index(block->links, i)
                                                          : NULL;
        g_string_append(out, "<li>");
        plot_html_escape(out, g_ptr_array_index(block->rows, i));
        if (link != NULL) {
            /* The diagram's id: its inline <svg>, or the link to its file. */
            g_string_append(out, " (<a href=\"#");
            plot_html_escape(out, link);
            g_string_append(out, "\">diagram</a>)");
        }
        g_string_append(out, "</li>\n");
    }
    g_string_append_printf(out, "</%s>\n", tag);
}

/* A link to an image's PNG file, for one past the inline budget. */
static void
html_png_link(GString *out, const Block *block)
{
    g_string_append(out, "<p class=\"plot-link\">Plot: <a href=\"");
    plot_html_escape(out, block->name);
    g_string_append(out, ".png\">");
    plot_html_escape(out, block->text);
    g_string_append(out, " (");
    plot_html_escape(out, block->name);
    g_string_append(out, ".png)</a></p>\n");
}

/* The PNG inline while `*inline_bytes` stays within
 * REPORT_PNG_INLINE_BUDGET (the first one always is), past it a link to its
 * file; without a PNG (gnuplot lacking a PNG terminal), the SVG. */
static void
html_image(GString *out, const Block *block, const char *dir, gsize *inline_bytes)
{
    g_autofree char *png_name = g_strconcat(block->name, ".png", NULL);
    g_autofree char *png = g_build_filename(dir, png_name, NULL);
    g_autoptr(GString) embedded = g_string_new(NULL);
    if (plot_html_embed_png(embedded, png, block->text, NULL)) {
        if (*inline_bytes > 0 && *inline_bytes + embedded->len > REPORT_PNG_INLINE_BUDGET) {
            html_png_link(out, block);
            return;
        }
        *inline_bytes += embedded->len;
        g_string_append_len(out, embedded->str, (gssize)embedded->len);
        g_string_append_c(out, '\n');
        return;
    }
    g_autofree char *svg_name = g_strconcat(block->name, ".svg", NULL);
    g_autofree char *svg = g_build_filename(dir, svg_name, NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(svg, &contents, &len, NULL))
        return;
    g_autofree char *encoded = g_base64_encode((const guchar *)contents, len);
    g_string_append_printf(out, "<img src=\"data:image/svg+xml;base64,%s\" alt=\"", encoded);
    plot_html_escape(out, block->text);
    g_string_append(out, "\">\n");
}

/* A link to an SVG of the report, for one past the inline budget. */
static void
html_svg_link(GString *out, const Block *block)
{
    g_string_append(out, "<p class=\"diagram-link\" id=\"");
    plot_html_escape(out, block->name);
    g_string_append(out, "\">Diagram: <a href=\"");
    plot_html_escape(out, block->name);
    g_string_append(out, ".svg\">");
    plot_html_escape(out, block->text);
    g_string_append_printf(out, " (%s.svg)</a></p>\n", block->name);
}

/* An SVG of the report inline (without its XML declaration), so its hover
 * titles work, while `*inline_bytes` stays within REPORT_SVG_INLINE_BUDGET
 * (the first one always is); past it, a link to its file. Nothing when it
 * cannot be read. */
static void
html_svg(GString *out, const Block *block, const char *dir, gsize *inline_bytes)
{
    g_autofree char *name = g_strconcat(block->name, ".svg", NULL);
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_autofree char *contents = NULL;
    gsize len = 0;
    if (!g_file_get_contents(path, &contents, &len, NULL))
        return;
    if (*inline_bytes > 0 && *inline_bytes + len > REPORT_SVG_INLINE_BUDGET) {
        html_svg_link(out, block);
        return;
    }
    *inline_bytes += len;
    const char *svg = g_str_has_prefix(contents, "<?xml") ? strchr(contents, '\n') : contents;
    g_string_append(out, "<figure style=\"margin:1em 0;overflow:auto;max-height:85vh\">\n");
    g_string_append(out, svg != NULL ? svg : "");
    g_string_append(out, "<figcaption>");
    plot_html_escape(out, block->text);
    g_string_append_printf(out, " (%s.svg)</figcaption>\n</figure>\n", block->name);
}

static void
html_text_block(GString *out, const char *open, const char *close, const char *text)
{
    g_string_append(out, open);
    plot_html_escape(out, text);
    g_string_append(out, close);
}

typedef struct {
    gsize svg; /* bytes of SVG inline so far */
    gsize png; /* bytes of base64 PNG inline so far */
} InlineBytes;

static void
html_block(GString *out, const Block *block, const char *dir, InlineBytes *inline_bytes)
{
    switch (block->kind) {
    case BLOCK_HEADING:
        g_string_append_printf(out, "<h%d>", block->level);
        plot_html_escape(out, block->text);
        g_string_append_printf(out, "</h%d>\n", block->level);
        break;
    case BLOCK_PARAGRAPH:
        html_text_block(out, "<p>", "</p>\n", block->text);
        break;
    case BLOCK_WARNING:
        html_text_block(out, "<p class=\"warning\"><strong>Warning:</strong> ", "</p>\n",
                        block->text);
        break;
    case BLOCK_TABLE:
        html_table(out, block);
        break;
    case BLOCK_LIST:
    case BLOCK_ORDERED:
        html_list(out, block);
        break;
    case BLOCK_IMAGE:
        html_image(out, block, dir, &inline_bytes->png);
        break;
    case BLOCK_SVG:
        html_svg(out, block, dir, &inline_bytes->svg);
        break;
    }
}

GString *
report_html_render(const Document *doc, const Report *report)
{
    GString *out = g_string_new("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                                "<meta charset=\"utf-8\">\n<title>ksim report: ");
    const char *scenario = report->input->scenario ? report->input->scenario : "";
    plot_html_escape(out, scenario);
    g_string_append(out, "</title>\n<style>" HTML_STYLE "</style>\n</head>\n<body>\n");
    InlineBytes inline_bytes = {0, 0};
    for (guint i = 0; i < doc->len; i++)
        html_block(out, g_ptr_array_index(doc, i), report->dir, &inline_bytes);
    g_string_append(out, "</body>\n</html>\n");
    return out;
}
