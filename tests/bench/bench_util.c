/* Helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"

#include "checker.h"
#include "stats.h"

#include <stdio.h>
#include <string.h>

gboolean
bench_parse_options(int *argc, char ***argv, const char *name, GOptionEntry *entries)
{
    g_autofree char *title = g_strdup_printf("- ksim bench %s", name);
    GOptionContext *context = g_option_context_new(title);
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, argc, argv, &error);
    if (!ok) {
        fprintf(stderr, "ksim bench %s: %s\n", name, error->message);
        g_error_free(error);
    } else if (*argc > 1) {
        fprintf(stderr, "ksim bench %s: unexpected argument '%s'\n", name, (*argv)[1]);
        ok = FALSE;
    }
    g_option_context_free(context);
    return ok;
}

void
bench_json_int(JsonBuilder *builder, const char *name, gint64 value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_int_value(builder, value);
}

void
bench_json_double(JsonBuilder *builder, const char *name, double value)
{
    json_builder_set_member_name(builder, name);
    json_builder_add_double_value(builder, value);
}

void
bench_json_print(JsonBuilder *builder)
{
    JsonGenerator *generator = json_generator_new();
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    printf("%s\n", text);
    json_node_unref(root);
    g_object_unref(generator);
}

static gint64
status_kib(const char *field)
{
    g_autofree char *status = NULL;
    if (!g_file_get_contents("/proc/self/status", &status, NULL, NULL))
        return 0;
    const char *line = strstr(status, field);
    if (line == NULL)
        return 0;
    return g_ascii_strtoll(line + strlen(field), NULL, 10) * 1024;
}

gint64
bench_peak_rss_bytes(void)
{
    return status_kib("VmHWM:");
}

gint64
bench_rss_bytes(void)
{
    return status_kib("VmRSS:");
}

void
bench_check(Cluster *cluster, History *history, BenchCheck *out)
{
    gint64 start_us = g_get_monotonic_time();
    cluster_record_final_state(cluster);
    CheckerResult *check = checker_run(history, NULL);
    const CheckerCounts *counts = checker_result_counts(check);
    out->lost_write = counts->anomalies[CHECKER_LOST_WRITE];
    out->p99_ms = (double)stats_histogram_quantile(
                      checker_result_latency(check, CHECKER_LATENCY_ACKED), 0.99) /
                  1e6;
    out->check_s = (double)(g_get_monotonic_time() - start_us) / 1e6;
    checker_result_free(check);
}
