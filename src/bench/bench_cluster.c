/*
 * `ksim bench cluster`: 3 brokers, replication factor 3, acks=all, 10^6
 * records of 100 bytes from the simple driver, no faults, everything recorded
 * in the history, then the final state collected and the history checked
 * (anomalies, latency histograms, throughput; no plots). Reports simulated
 * records per wall second, the run and the check included, and peak memory.
 *
 * The driver sends full batches as a producer under load does: Kafka's
 * default batch.size (16384 bytes) of 100-byte records, 163 records. The
 * real producer makes the same batches (`ksim bench cluster --producer`, or
 * `cluster-producer`: 6135 batches for 10^6 records). --batch changes it.
 */
#include "benchmarks.h"

#include "bench_util.h"
#include "cluster.h"
#include "driver.h"
#include "history.h"
#include "kconfig_bind.h"
#include "sim_world.h"

#include <stdio.h>
#include <string.h>

#define BENCH_BATCH_BYTES 16384 /* Kafka's batch.size default */

/* `--producer` among the arguments: the real producer drives the cluster
 * (bench_cluster_producer, which takes the other arguments). */
static int
producer_requested(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--producer") == 0)
            return i;
    }
    return 0;
}

int
bench_cluster(int argc, char **argv)
{
    int producer_at = producer_requested(argc, argv);
    if (producer_at > 0) {
        g_autofree char **rest = g_new0(char *, (gsize)argc);
        int n = 0;
        for (int i = 0; i < argc; i++) {
            if (i != producer_at)
                rest[n++] = argv[i];
        }
        return bench_cluster_producer(n, rest);
    }
    gboolean json = FALSE;
    gint64 records = 1000000;
    gint64 per_batch = BENCH_BATCH_BYTES / BENCH_RECORD_BYTES;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"records", 0, 0, G_OPTION_ARG_INT64, &records, "records to produce (1000000)", "N"},
        {"batch", 0, 0, G_OPTION_ARG_INT64, &per_batch, "records per batch (163: batch.size 16384 of 100-byte records)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    if (!bench_parse_options(&argc, &argv, "cluster", entries))
        return 2;
    if (records <= 0 || per_batch <= 0) {
        fprintf(stderr, "ksim bench cluster: --records and --batch must be positive\n");
        return 2;
    }
    BenchCluster bench;
    if (!bench_cluster_open(&bench, "cluster"))
        return 1;
    gint64 virtual_start = sim_now_ns(bench.world);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(bench.cluster);
    DriverConfig driver_config;
    kconfig_bind_driver_defaults(&driver_config);
    driver_config.record_size_bytes = BENCH_RECORD_BYTES;
    Driver *driver =
        driver_new(bench.world, "driver", 100, bootstrap, &driver_config, bench.history);
    for (guint p = 0; p < BENCH_PARTITIONS; p++)
        driver_produce(driver, BENCH_TOPIC, (gint32)p,
                       (guint64)(records / BENCH_PARTITIONS + (p < records % BENCH_PARTITIONS)),
                       (guint)per_batch);
    gint64 run_us = g_get_monotonic_time();
    while (driver_pending(driver) > 0 && sim_world_step(bench.world)) {
    }
    guint64 acked = driver_acked(driver);
    BenchFigures f;
    bench_cluster_measure(&bench, acked, run_us, virtual_start, &f);
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    bench_cluster_json(builder, &bench, &f);
    json_builder_end_object(builder);
    if (json)
        bench_json_print(builder);
    else
        printf("cluster: %" G_GUINT64_FORMAT " records acked (acks=all, RF 3), %.2f s virtual: "
               "simulated in %.2f s wall (%.2f M records/s), checked in %.2f s more "
               "(%.2f M records/s with the check); peak RSS %.1f MiB "
               "(%.0f bytes/record); %" G_GUINT64_FORMAT " events; lost %" G_GUINT64_FORMAT
               ", p99 %.1f ms\n",
               acked, f.virtual_s, f.simulate_s, bench_figures_per_s(&f) / 1e6, f.check_s,
               bench_figures_per_s_checked(&f) / 1e6, (double)bench_peak_rss_bytes() / 1048576.0,
               (double)bench_peak_rss_bytes() / (double)MAX(acked, 1),
               sim_world_events(bench.world), f.lost_write, f.p99_ms);
    g_object_unref(builder);
    driver_free(driver);
    bench_cluster_close(&bench);
    return acked == (guint64)records ? 0 : 1;
}
