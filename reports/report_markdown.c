/*
 * report_markdown: report.md, the Document rendered as Markdown
 * (report_markdown_render).
 */
#include "report_internal.h"

static void
md_cell(GString *out, const char *text)
{
    for (const char *c = text; *c != '\0'; c++) {
        if (*c == '|')
            g_string_append(out, "\\|");
        else if (*c == '\n')
            g_string_append_c(out, ' ');
        else
            g_string_append_c(out, *c);
    }
}

static void
md_table(GString *out, const Block *block)
{
    for (guint r = 0; r < block->rows->len; r++) {
        const GPtrArray *row = g_ptr_array_index(block->rows, r);
        g_string_append(out, "|");
        for (guint c = 0; c < row->len; c++) {
            g_string_append_c(out, ' ');
            md_cell(out, g_ptr_array_index(row, c));
            g_string_append(out, " |");
        }
        g_string_append_c(out, '\n');
        if (r > 0)
            continue;
        g_string_append(out, "|");
        for (guint c = 0; c < row->len; c++)
            g_string_append(out, c == 0 ? " --- |" : " ---: |");
        g_string_append_c(out, '\n');
    }
    g_string_append_c(out, '\n');
}

static void
md_block(GString *out, const Block *block)
{
    switch (block->kind) {
    case BLOCK_HEADING:
        g_string_append_printf(out, "%.*s %s\n\n", block->level, "######", block->text);
        break;
    case BLOCK_PARAGRAPH:
        g_string_append_printf(out, "%s\n\n", block->text);
        break;
    case BLOCK_WARNING:
        g_string_append_printf(out, "> **Warning:** %s\n\n", block->text);
        break;
    case BLOCK_TABLE:
        md_table(out, block);
        break;
    case BLOCK_LIST:
    case BLOCK_ORDERED:
        for (guint i = 0; i < block->rows->len; i++) {
            const char *link = block->links != NULL && i < block->links->len
                                   ? g_ptr_array_index(block->links, i)
                                   : NULL;
            g_string_append_printf(out, "%s %s", block->kind == BLOCK_LIST ? "-" : "1.",
                                   (char *)g_ptr_array_index(block->rows, i));
            if (link != NULL)
                g_string_append_printf(out, " ([diagram](%s.svg))", link);
            g_string_append_c(out, '\n');
        }
        g_string_append_c(out, '\n');
        break;
    case BLOCK_IMAGE:
    case BLOCK_SVG:
        g_string_append_printf(out, "![%s](%s.svg)\n\n", block->text, block->name);
        break;
    }
}

GString *
report_markdown_render(const Document *doc)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < doc->len; i++)
        md_block(out, g_ptr_array_index(doc, i));
    return out;
}
