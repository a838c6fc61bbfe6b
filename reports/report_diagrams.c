/*
 * report_diagrams: the space-time diagram (diagram.h) of each pattern the
 * explanations show, RUN-ANOMALY-pattern-K.svg, written through the
 * report's OutDir so that it lands with the rest of the report or not at
 * all; the documents then show it beside its pattern.
 */
#include "report_internal.h"

#include "diagram.h"

#include <string.h>

/* The diagrams of one anomaly's patterns of one run. */
static gboolean
write_anomaly(Report *report, RunData *data, CheckerAnomaly anomaly, GError **error)
{
    const GPtrArray *patterns = data->patterns[anomaly];
    if (patterns == NULL || patterns->len == 0)
        return TRUE;
    const History *history = checker_result_history(data->result);
    data->diagrams[anomaly] = g_ptr_array_new_with_free_func(g_free);
    guint shown = MIN(patterns->len, (guint)REPORT_PATTERNS_SHOWN);
    for (guint k = 0; k < shown; k++) {
        const Pattern *pattern = g_ptr_array_index(patterns, k);
        GString *basename = g_string_new(data->slug);
        report_slug_append(basename, checker_anomaly_name(anomaly));
        g_string_append_printf(basename, "-pattern-%u", k + 1);
        g_autofree char *title =
            g_strdup_printf("%s, %s, pattern %u: %s", report_run_label(data),
                            checker_anomaly_name(anomaly), k + 1, pattern->signature);
        g_autofree char *svg = diagram_pattern_svg(data->run->diagram_trace, history, pattern,
                                                   title, basename->str);
        if (svg == NULL) {
            g_string_free(basename, TRUE);
            g_ptr_array_add(data->diagrams[anomaly], NULL);
            continue;
        }
        g_autofree char *name = g_strconcat(basename->str, ".svg", NULL);
        if (!outfile_dir_write(report->out, name, svg, strlen(svg), error)) {
            g_string_free(basename, TRUE);
            return FALSE;
        }
        g_ptr_array_add(data->diagrams[anomaly], g_string_free(basename, FALSE));
    }
    return TRUE;
}

gboolean
report_diagrams_write(Report *report, GError **error)
{
    for (guint i = 0; i < report->runs->len; i++) {
        RunData *data = g_ptr_array_index(report->runs, i);
        if (data->run->diagram_trace == NULL)
            continue;
        for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
            if (!write_anomaly(report, data, (CheckerAnomaly)a, error))
                return FALSE;
    }
    return TRUE;
}
