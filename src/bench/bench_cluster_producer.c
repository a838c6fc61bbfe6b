/*
 * `ksim bench cluster-producer`: the cluster benchmark (3 brokers,
 * replication factor 3, acks=all, 10^6 records of 100 bytes, no faults,
 * everything recorded in the history) driven by the real producer with
 * batching on — Kafka's defaults (idempotence, batch.size 16384, the sticky
 * partitioner) plus linger.ms=5 — instead of the simple driver. An
 * application feeds it asynchronously, keeping up to --window records
 * outstanding (the producer blocks it earlier if buffer.memory fills).
 * Then the final state is collected and the history checked, as in
 * `ksim bench cluster`. Reports simulated records per wall second without
 * and with the check, and peak memory.
 */
#include "benchmarks.h"

#include "bench_util.h"
#include "cluster.h"
#include "history.h"
#include "kconfig_bind.h"
#include "producer.h"
#include "sim_world.h"

#include <stdio.h>

#define BENCH_PROCESS 100

/* Declared in benchmarks.h. */

typedef struct {
    SimWorld *world;
    Producer *producer;
    guint64 total;
    guint64 window;
    guint64 sent;
    guint64 completed;
    guint64 ok;
    gboolean armed;
} Feeder;

static void feed(SimWorld *world, void *ctx, void *arg);

static void
feeder_arm(Feeder *feeder)
{
    if (feeder->armed || feeder->sent >= feeder->total)
        return;
    feeder->armed = TRUE;
    sim_timer_set(feeder->world, producer_node(feeder->producer), 0, feed, feeder);
}

static void
record_done(Producer *producer, const ProducerResult *result, void *user_data)
{
    Feeder *feeder = user_data;
    (void)producer;
    feeder->completed++;
    feeder->ok += result->outcome == HISTORY_OK;
    if (feeder->sent - feeder->completed <= feeder->window / 2)
        feeder_arm(feeder);
}

/* Sends until the window is full, the producer blocks, or all are sent. */
static void
feed(SimWorld *world, void *ctx, void *arg)
{
    Feeder *feeder = arg;
    (void)world;
    (void)ctx;
    feeder->armed = FALSE;
    while (feeder->sent < feeder->total && feeder->sent - feeder->completed < feeder->window &&
           !producer_blocked(feeder->producer)) {
        guint64 value = ((guint64)BENCH_PROCESS << 40) | ++feeder->sent;
        producer_send(feeder->producer, BENCH_TOPIC, -1, 0, value, BENCH_RECORD_BYTES, record_done,
                      feeder);
    }
}

static void
unblocked(Producer *producer, void *user_data)
{
    (void)producer;
    feeder_arm(user_data);
}

static void
print_figures(gboolean json, const BenchCluster *bench, const BenchFigures *f,
              const ProducerStats *stats)
{
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    bench_cluster_json(builder, bench, f);
    bench_json_int(builder, "produce_requests", (gint64)stats->produce_requests);
    bench_json_int(builder, "batches", (gint64)stats->batches_created);
    json_builder_end_object(builder);
    gint64 rss = bench_peak_rss_bytes();
    if (json)
        bench_json_print(builder);
    else
        printf("cluster (producer): %" G_GUINT64_FORMAT " records acked (acks=all, RF 3, "
               "idempotent, %" G_GUINT64_FORMAT " batches), %.2f s virtual: simulated in "
               "%.2f s wall (%.2f M records/s), checked in %.2f s more (%.2f M records/s with "
               "the check); peak RSS %.1f MiB (%.0f bytes/record); %" G_GUINT64_FORMAT
               " events; lost %" G_GUINT64_FORMAT ", p99 %.1f ms\n",
               f->acked, stats->batches_created, f->virtual_s, f->simulate_s,
               bench_figures_per_s(f) / 1e6, f->check_s, bench_figures_per_s_checked(f) / 1e6,
               (double)rss / 1048576.0, (double)rss / (double)MAX(f->acked, 1),
               sim_world_events(bench->world), f->lost_write, f->p99_ms);
    g_object_unref(builder);
}

int
bench_cluster_producer(int argc, char **argv)
{
    gboolean json = FALSE;
    gint64 records = 1000000, linger_ms = 5, window = 50000;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"records", 0, 0, G_OPTION_ARG_INT64, &records, "records to produce (1000000)", "N"},
        {"linger-ms", 0, 0, G_OPTION_ARG_INT64, &linger_ms, "the producer's linger.ms (5)", "MS"},
        {"window", 0, 0, G_OPTION_ARG_INT64, &window, "records outstanding at most (50000)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    if (!bench_parse_options(&argc, &argv, "cluster --producer", entries))
        return 2;
    if (records <= 0 || linger_ms < 0 || window <= 0) {
        fprintf(stderr, "ksim bench cluster --producer: --records and --window must be positive, "
                        "--linger-ms not negative\n");
        return 2;
    }
    BenchCluster bench;
    if (!bench_cluster_open(&bench, "cluster --producer"))
        return 1;
    SimWorld *world = bench.world;
    /* Let every broker's metadata hold the topic before the client asks. */
    sim_world_run_until(world, sim_now_ns(world) + SIM_NS_PER_S);
    gint64 virtual_start = sim_now_ns(world);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(bench.cluster);
    ProducerConfig producer_config;
    kconfig_bind_producer_defaults(&producer_config);
    producer_config.linger_ms = linger_ms;
    Producer *producer = producer_new(world, "producer", BENCH_PROCESS, bootstrap,
                                      &producer_config, bench.history);
    Feeder feeder = {world, producer, (guint64)records, (guint64)window, 0, 0, 0, FALSE};
    ProducerListener listener = {NULL, unblocked, &feeder};
    producer_set_listener(producer, &listener);
    feeder_arm(&feeder);
    gint64 run_us = g_get_monotonic_time();
    while (feeder.completed < feeder.total && sim_world_step(world)) {
    }
    BenchFigures f;
    bench_cluster_measure(&bench, feeder.ok, run_us, virtual_start, &f);
    ProducerStats stats;
    producer_stats(producer, &stats);
    print_figures(json, &bench, &f, &stats);
    producer_free(producer);
    bench_cluster_close(&bench);
    return feeder.ok == feeder.total ? 0 : 1;
}
