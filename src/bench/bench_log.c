/*
 * `ksim bench log`: the partition log's cost as it grows.
 *
 * Two logs on one simulated node, filled with batches of 100 records of 100
 * bytes (Kafka's defaults otherwise: 1 GiB segments, an index entry every
 * 4096 bytes, no forced flush): a small one holding 10^4 records and a large
 * one holding 10^7.
 *
 *  - append: rounds of 100 batches (10^4 records) appended to each log, timed
 *    (see measure_appends); the fastest round gives records per second, and
 *    append_ratio = cost per record at 10^7 / cost at 10^4 (target <= 1.3: an
 *    append must not depend on what the log already holds).
 *  - lookup: reads of the batch holding a random offset (segment by binary
 *    search, index entry by binary search, a scan of at most one interval,
 *    then the batch decoded), in ns per read (target: at most logarithmic
 *    growth, i.e. lookup_ns_large / lookup_ns_small <= log 10^7 / log 10^4).
 *  - memory: the growth of the resident set while the large log is filled,
 *    per record. It counts everything the log costs: its own indexes and the
 *    simulated disk's page cache, write list and durable image (target <= 48
 *    bytes per record; payloads are not stored).
 *
 * Wall-clock time is read here, outside sim/ and models/.
 */
#include "benchmarks.h"

#include "bench_util.h"
#include "kconfig_bind.h"
#include "plog.h"
#include "sim_rng.h"
#include "sim_world.h"

#include <glib.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define RECORDS_PER_BATCH 100
#define RECORD_BYTES 100
#define SMALL_RECORDS G_GINT64_CONSTANT(10000)
#define LARGE_RECORDS G_GINT64_CONSTANT(10000000)
#define ROUND_BATCHES 100
#define ROUNDS 41
#define LOOKUP_ROUNDS 20
#define LOOKUPS_PER_ROUND 2000

static const SimNodeOps BENCH_NODE_OPS = {NULL, NULL, NULL, NULL};

typedef struct {
    Plog *log;
    PlogBatch *batch; /* reused for every append */
    guint64 next_value;
    gint64 batches_appended;
} BenchLog;

static void
bench_log_init(BenchLog *bench, SimWorld *world, SimNodeId node, guint32 partition)
{
    PlogConfig config;
    kconfig_bind_log_defaults(&config);
    bench->log = plog_open(world, node, "bench", partition, &config);
    bench->batch = plog_batch_new();
    for (guint i = 0; i < RECORDS_PER_BATCH; i++)
        plog_batch_add_record(bench->batch, 0, 0, RECORD_BYTES);
    bench->next_value = (guint64)partition << 40;
    bench->batches_appended = 0;
}

static void
bench_log_clear(BenchLog *bench)
{
    plog_batch_free(bench->batch);
    plog_free(bench->log);
}

static void
append_batches(BenchLog *bench, gint64 count)
{
    PlogRecord *records = (PlogRecord *)bench->batch->records->data;
    for (gint64 b = 0; b < count; b++) {
        for (guint i = 0; i < RECORDS_PER_BATCH; i++)
            records[i].value = bench->next_value++;
        /* One batch per millisecond of producer time. */
        gint64 timestamp_ms = bench->batches_appended++;
        bench->batch->first_timestamp_ms = timestamp_ms;
        bench->batch->max_timestamp_ms = timestamp_ms;
        SimDiskStatus status;
        if (plog_append(bench->log, bench->batch, timestamp_ms, &status) < 0) {
            fprintf(stderr, "ksim bench log: append failed: %s\n", sim_disk_status_name(status));
            exit(1);
        }
    }
}

static double
time_round(BenchLog *bench)
{
    gint64 start = g_get_monotonic_time();
    append_batches(bench, ROUND_BATCHES);
    return (double)MAX(g_get_monotonic_time() - start, 1) / 1e6;
}

/* Records per second appending to each log: the fastest of ROUNDS rounds,
 * alternating between the logs so both see the same machine (the fastest
 * round is the one least disturbed by other work on the host). Each log is
 * truncated back after each round, untimed, so it keeps its size and both
 * append into memory they have used before. */
static void
measure_appends(BenchLog *small, BenchLog *large, double *out_small, double *out_large)
{
    BenchLog *logs[] = {small, large};
    gint64 leos[] = {plog_log_end_offset(small->log), plog_log_end_offset(large->log)};
    double best[] = {G_MAXDOUBLE, G_MAXDOUBLE};
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < 2; i++) {
            best[i] = MIN(best[i], time_round(logs[i]));
            plog_truncate_to(logs[i]->log, leos[i]);
        }
    }
    *out_small = ROUND_BATCHES * RECORDS_PER_BATCH / best[0];
    *out_large = ROUND_BATCHES * RECORDS_PER_BATCH / best[1];
}

/* Nanoseconds per read of the batch holding a random offset, over `count`
 * reads. */
static double
time_lookups(BenchLog *bench, SimRng *rng, int count)
{
    gint64 leo = plog_log_end_offset(bench->log);
    GPtrArray *out = plog_batch_array_new();
    gint64 start = g_get_monotonic_time();
    for (int i = 0; i < count; i++) {
        gint64 offset = sim_rng_range(rng, 0, leo);
        if (plog_read(bench->log, offset, 1, out) != PLOG_READ_OK || out->len != 1) {
            fprintf(stderr, "ksim bench log: read at %" G_GINT64_FORMAT " failed\n", offset);
            exit(1);
        }
        const PlogBatch *batch = g_ptr_array_index(out, 0);
        if (offset < batch->base_offset || offset > plog_batch_last_offset(batch)) {
            fprintf(stderr, "ksim bench log: read at %" G_GINT64_FORMAT " wrong\n", offset);
            exit(1);
        }
        g_ptr_array_set_size(out, 0);
    }
    gint64 elapsed_us = g_get_monotonic_time() - start;
    g_ptr_array_unref(out);
    return (double)MAX(elapsed_us, 1) * 1e3 / count;
}

/* The fastest of LOOKUP_ROUNDS rounds for each log, alternating. */
static void
measure_lookups(BenchLog *small, BenchLog *large, SimRng *rng, double *out_small, double *out_large)
{
    *out_small = G_MAXDOUBLE;
    *out_large = G_MAXDOUBLE;
    for (int r = 0; r < LOOKUP_ROUNDS; r++) {
        *out_small = MIN(*out_small, time_lookups(small, rng, LOOKUPS_PER_ROUND));
        *out_large = MIN(*out_large, time_lookups(large, rng, LOOKUPS_PER_ROUND));
    }
}

typedef struct {
    double append_small;
    double append_large;
    double lookup_ns_small;
    double lookup_ns_large;
    double bytes_per_record;
    guint segments_large;
    double wall_s;
} LogFigures;

static void
run_benchmark(LogFigures *fig)
{
    gint64 wall_start = g_get_monotonic_time();
    SimWorld *world = sim_world_new(1);
    SimNodeId node = sim_node_add(world, "broker", &BENCH_NODE_OPS, NULL);
    SimRng *rng = sim_rng_new(1, "bench/log");
    BenchLog small, large;
    bench_log_init(&small, world, node, 0);
    append_batches(&small, SMALL_RECORDS / RECORDS_PER_BATCH);
    bench_log_init(&large, world, node, 1);
    gint64 rss_before = bench_rss_bytes();
    append_batches(&large, LARGE_RECORDS / RECORDS_PER_BATCH);
    gint64 rss_after = bench_rss_bytes();
    fig->bytes_per_record = (double)(rss_after - rss_before) / (double)LARGE_RECORDS;
    fig->segments_large = plog_segment_count(large.log);
    measure_appends(&small, &large, &fig->append_small, &fig->append_large);
    measure_lookups(&small, &large, rng, &fig->lookup_ns_small, &fig->lookup_ns_large);
    bench_log_clear(&small);
    bench_log_clear(&large);
    sim_rng_free(rng);
    sim_world_free(world);
    fig->wall_s = (double)(g_get_monotonic_time() - wall_start) / 1e6;
}

static void
print_json(const LogFigures *fig)
{
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    bench_json_double(builder, "append_records_per_s_small", fig->append_small);
    bench_json_double(builder, "append_records_per_s_large", fig->append_large);
    bench_json_double(builder, "append_ratio", fig->append_small / fig->append_large);
    bench_json_double(builder, "lookup_ns_small", fig->lookup_ns_small);
    bench_json_double(builder, "lookup_ns_large", fig->lookup_ns_large);
    bench_json_double(builder, "bytes_per_record", fig->bytes_per_record);
    bench_json_int(builder, "records_small", SMALL_RECORDS);
    bench_json_int(builder, "records_large", LARGE_RECORDS);
    bench_json_int(builder, "segments_large", fig->segments_large);
    bench_json_double(builder, "wall_s", fig->wall_s);
    json_builder_end_object(builder);
    bench_json_print(builder);
    g_object_unref(builder);
}

static void
print_text(const LogFigures *fig)
{
    double ratio = fig->append_small / fig->append_large;
    double lookup_bound = log((double)LARGE_RECORDS) / log((double)SMALL_RECORDS);
    printf("append  10^4 records: %6.2f M records/s\n", fig->append_small / 1e6);
    printf("append  10^7 records: %6.2f M records/s (%u segment%s)\n", fig->append_large / 1e6,
           fig->segments_large, fig->segments_large == 1 ? "" : "s");
    printf("append ratio:         %6.2f   (target <= 1.30)\n", ratio);
    printf("lookup  10^4 records: %6.0f ns\n", fig->lookup_ns_small);
    printf("lookup  10^7 records: %6.0f ns\n", fig->lookup_ns_large);
    printf("lookup ratio:         %6.2f   (target <= %.2f, logarithmic)\n",
           fig->lookup_ns_large / fig->lookup_ns_small, lookup_bound);
    printf("memory:               %6.2f bytes per record (target <= 48)\n", fig->bytes_per_record);
    printf("wall time:            %6.2f s\n", fig->wall_s);
}

int
bench_log(int argc, char **argv)
{
    gboolean json = FALSE;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    if (!bench_parse_options(&argc, &argv, "log", entries))
        return 2;
    LogFigures fig = {0};
    run_benchmark(&fig);
    if (json)
        print_json(&fig);
    else
        print_text(&fig);
    return 0;
}
