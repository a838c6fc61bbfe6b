/* Helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"

#include "checker.h"
#include "kconfig_bind.h"
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
bench_reset_peak_rss(void)
{
    /* Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+);
     * where it cannot, the peak stays the process's. */
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f == NULL)
        return;
    fputs("5", f);
    fclose(f);
}

gboolean
bench_cluster_open(BenchCluster *bench, const char *name)
{
    bench->start_us = g_get_monotonic_time();
    bench->world = sim_world_new(1);
    bench->history = history_new();
    /* The registry's defaults, except the network: the benchmarks have
     * always measured a jittered link (lognormal, median 500 us, sigma 0.3)
     * rather than a scenario's default const:100us, so that their numbers
     * stay comparable from one version to the next. */
    ClusterConfig config;
    kconfig_bind_cluster_defaults(&config);
    config.network_latency = (SimDist){SIM_DIST_LOGNORMAL, 500.0 * SIM_NS_PER_US, 0.3};
    bench->cluster = cluster_new(bench->world, &config, bench->history);
    g_autoptr(GError) error = NULL;
    if (!cluster_create_topic(bench->cluster, BENCH_TOPIC, BENCH_PARTITIONS, 3, NULL, &error)) {
        fprintf(stderr, "ksim bench %s: %s\n", name, error->message);
        bench_cluster_close(bench);
        return FALSE;
    }
    cluster_wait_settled(bench->cluster, 30 * SIM_NS_PER_S);
    return TRUE;
}

void
bench_cluster_close(BenchCluster *bench)
{
    cluster_free(bench->cluster);
    sim_world_free(bench->world);
    history_free(bench->history);
    *bench = (BenchCluster){0};
}

void
bench_cluster_measure(BenchCluster *bench, guint64 acked, gint64 run_us, gint64 virtual_start_ns,
                      BenchFigures *out)
{
    gint64 simulated_us = g_get_monotonic_time();
    out->acked = acked;
    out->setup_s = (double)(run_us - bench->start_us) / 1e6;
    out->simulate_s = (double)(simulated_us - run_us) / 1e6;
    out->virtual_s = (double)(sim_now_ns(bench->world) - virtual_start_ns) / 1e9;
    cluster_record_final_state(bench->cluster);
    CheckerResult *check = checker_run(bench->history, NULL);
    const CheckerCounts *counts = checker_result_counts(check);
    out->lost_write = counts->anomalies[CHECKER_LOST_WRITE];
    out->p99_ms = (double)stats_histogram_quantile(
                      checker_result_latency(check, CHECKER_LATENCY_ACKED), 0.99) /
                  1e6;
    out->check_s = (double)(g_get_monotonic_time() - simulated_us) / 1e6;
    checker_result_free(check);
}

double
bench_figures_per_s(const BenchFigures *f)
{
    return (double)f->acked / MAX(f->simulate_s, 1e-9);
}

double
bench_figures_per_s_checked(const BenchFigures *f)
{
    return (double)f->acked / MAX(f->simulate_s + f->check_s, 1e-9);
}

void
bench_cluster_json(JsonBuilder *builder, const BenchCluster *bench, const BenchFigures *f)
{
    gint64 rss = bench_peak_rss_bytes();
    bench_json_double(builder, "records_per_s", bench_figures_per_s(f));
    bench_json_double(builder, "records_per_s_checked", bench_figures_per_s_checked(f));
    bench_json_double(builder, "simulate_s", f->simulate_s);
    bench_json_int(builder, "records_acked", (gint64)f->acked);
    bench_json_int(builder, "peak_rss_bytes", rss);
    bench_json_double(builder, "peak_rss_bytes_per_record", (double)rss / (double)MAX(f->acked, 1));
    bench_json_double(builder, "virtual_s", f->virtual_s);
    bench_json_double(builder, "wall_s", f->simulate_s + f->check_s);
    bench_json_double(builder, "setup_wall_s", f->setup_s);
    bench_json_int(builder, "events", (gint64)sim_world_events(bench->world));
    bench_json_double(builder, "check_s", f->check_s);
    bench_json_int(builder, "lost_write", (gint64)f->lost_write);
    bench_json_double(builder, "p99_ms", f->p99_ms);
}
