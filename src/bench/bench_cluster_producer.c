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
 *
 * --vs-rdkafka then runs the same load (records, partitions, value size,
 * linger.ms, window) on librdkafka's mock cluster, in the program
 * ksim-rdkafka-mock beside ksim (bench_rdkafka.h), and reports its rate and
 * the ratios of ksim's two rates to it: a yardstick measured in the same run
 * on the same machine. The mock's brokers do not replicate and it checks
 * nothing, so the comparison flatters the mock.
 */
#include "benchmarks.h"

#include "bench_rdkafka.h"
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

/* ksim's rate over the mock's. */
static double
ratio_to_mock(double per_s, JsonObject *mock)
{
    return per_s / MAX(json_object_get_double_member(mock, "records_per_s"), 1e-9);
}

/* The mock's figures and the ratios, as members of the object the caller
 * began. */
static void
mock_json(JsonBuilder *builder, JsonObject *mock, const BenchFigures *f)
{
    json_builder_set_member_name(builder, "rdkafka_mock");
    JsonNode *node = json_node_new(JSON_NODE_OBJECT);
    json_node_set_object(node, mock);
    json_builder_add_value(builder, node);
    bench_json_double(builder, "ratio_checked_vs_rdkafka_mock",
                      ratio_to_mock(bench_figures_per_s_checked(f), mock));
    bench_json_double(builder, "ratio_simulated_vs_rdkafka_mock",
                      ratio_to_mock(bench_figures_per_s(f), mock));
}

static void
print_mock(JsonObject *mock, const BenchFigures *f)
{
    double mock_per_s = json_object_get_double_member(mock, "records_per_s");
    printf("rdkafka mock (librdkafka %s): %" G_GINT64_FORMAT " records delivered (acks=all, "
           "idempotent, %" G_GINT64_FORMAT " brokers, RF %" G_GINT64_FORMAT
           " not replicated, nothing checked) in %.2f s wall (%.2f M records/s)\n",
           json_object_get_string_member(mock, "librdkafka_version"),
           json_object_get_int_member(mock, "records_delivered"),
           json_object_get_int_member(mock, "brokers"),
           json_object_get_int_member(mock, "replication_factor"),
           json_object_get_double_member(mock, "wall_s"), mock_per_s / 1e6);
    printf("ksim checked / librdkafka mock: %.2f; simulated only / mock: %.2f\n",
           ratio_to_mock(bench_figures_per_s_checked(f), mock),
           ratio_to_mock(bench_figures_per_s(f), mock));
}

/* Prints ksim's figures and, when `mock` is not NULL, the mock's and the
 * ratios. */
static void
print_figures(gboolean json, const BenchCluster *bench, const BenchFigures *f,
              const ProducerStats *stats, JsonObject *mock)
{
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    bench_cluster_json(builder, bench, f);
    bench_json_int(builder, "produce_requests", (gint64)stats->produce_requests);
    bench_json_int(builder, "batches", (gint64)stats->batches_created);
    if (mock != NULL)
        mock_json(builder, mock, f);
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
    if (!json && mock != NULL)
        print_mock(mock, f);
    g_object_unref(builder);
}

/* For --vs-rdkafka: the mock program's path, or NULL with the message that
 * it is missing. (transfer full) */
static char *
mock_path_or_complain(void)
{
    char *path = bench_rdkafka_mock_path();
    if (path == NULL)
        fprintf(stderr, "ksim bench: --vs-rdkafka needs librdkafka's mock cluster: install "
                        "librdkafka-dev and reconfigure\n"
                        "ksim bench: (ksim looks for ksim-rdkafka-mock beside its executable; "
                        "the build makes it when pkg-config finds rdkafka)\n");
    return path;
}

/* Runs the load on the mock; NULL with a message when it fails. (transfer
 * full) */
static JsonObject *
mock_run(const char *path, gint64 records, gint64 linger_ms, gint64 window)
{
    BenchRdkafkaLoad load = {records, BENCH_PARTITIONS, BENCH_RECORD_BYTES, linger_ms, window};
    g_autoptr(GError) error = NULL;
    JsonObject *mock = bench_rdkafka_mock_run(path, &load, &error);
    if (mock == NULL)
        fprintf(stderr, "ksim bench cluster --producer --vs-rdkafka: %s\n", error->message);
    return mock;
}

int
bench_cluster_producer(int argc, char **argv)
{
    gboolean json = FALSE, vs_rdkafka = FALSE;
    gint64 records = 1000000, linger_ms = 5, window = 50000;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"vs-rdkafka", 0, 0, G_OPTION_ARG_NONE, &vs_rdkafka,
         "then the same load on librdkafka's mock cluster, and the ratios", NULL},
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
    if (vs_rdkafka &&
        (linger_ms > BENCH_RDKAFKA_LINGER_MS_MAX || window > BENCH_RDKAFKA_WINDOW_MAX)) {
        fprintf(stderr,
                "ksim bench cluster --producer: with --vs-rdkafka, --linger-ms at most %d and "
                "--window at most %d (librdkafka's limits)\n",
                BENCH_RDKAFKA_LINGER_MS_MAX, BENCH_RDKAFKA_WINDOW_MAX);
        return 2;
    }
    /* Before the run, so that a missing program costs no benchmark. */
    g_autofree char *mock_path = vs_rdkafka ? mock_path_or_complain() : NULL;
    if (vs_rdkafka && mock_path == NULL)
        return 2;
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
    /* The mock runs after ksim's run, with ksim idle, so that neither
     * takes the other's processor. */
    JsonObject *mock = mock_path != NULL ? mock_run(mock_path, records, linger_ms, window) : NULL;
    print_figures(json, &bench, &f, &stats, mock);
    producer_free(producer);
    bench_cluster_close(&bench);
    gboolean mock_ok = mock_path == NULL || mock != NULL;
    if (mock != NULL)
        json_object_unref(mock);
    return feeder.ok == feeder.total && mock_ok ? 0 : 1;
}
