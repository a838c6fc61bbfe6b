/* Helpers shared by the benchmarks: option parsing and JSON output. */
#ifndef KSIM_BENCH_UTIL_H
#define KSIM_BENCH_UTIL_H

#include "cluster.h"
#include "history.h"

#include <glib.h>
#include <json-glib/json-glib.h>

/* Parses the benchmark's options; prints the error and returns FALSE on bad
 * input (the caller exits with status 2). */
gboolean bench_parse_options(int *argc, char ***argv, const char *name, GOptionEntry *entries);

void bench_json_int(JsonBuilder *builder, const char *name, gint64 value);
void bench_json_double(JsonBuilder *builder, const char *name, double value);
/* Prints the builder's root as one line of JSON on stdout. */
void bench_json_print(JsonBuilder *builder);

/* The process's peak resident set size in bytes (VmHWM), or 0 if unknown. */
gint64 bench_peak_rss_bytes(void);
/* The current resident set size in bytes (VmRSS), or 0 if unknown. */
gint64 bench_rss_bytes(void);
/* Resets the peak (VmHWM) to the current RSS, so that the next
 * bench_peak_rss_bytes measures what follows; a no-op where Linux cannot. */
void bench_reset_peak_rss(void);

/* The cluster benchmarks' cluster: 3 brokers with Kafka's defaults and the
 * topic "bench" of 3 partitions, replication factor 3, settled. */
#define BENCH_TOPIC "bench"
#define BENCH_PARTITIONS 3
#define BENCH_RECORD_BYTES 100

typedef struct {
    gint64 start_us; /* wall clock when the setup began */
    SimWorld *world;
    History *history;
    Cluster *cluster;
} BenchCluster;

/* Sets up the cluster; FALSE (with a message naming `name`) when it cannot. */
gboolean bench_cluster_open(BenchCluster *bench, const char *name);
void bench_cluster_close(BenchCluster *bench);

/* What a cluster benchmark measured. */
typedef struct {
    guint64 acked;
    double setup_s;    /* wall seconds before the run */
    double simulate_s; /* wall seconds of the run */
    double check_s;    /* wall seconds to collect the final state and check */
    double virtual_s;
    guint64 lost_write; /* the checker's lost_write count */
    double p99_ms;      /* acknowledged produce latency, p99 */
} BenchFigures;

/* Ends a run of `acked` records that began at `run_us` (wall) and
 * `virtual_start_ns`: collects the final state of every replica and checks
 * the history, as `ksim run` does after a run (anomalies, explanations,
 * latency histograms, throughput, availability; no reports or plots). */
void bench_cluster_measure(BenchCluster *bench, guint64 acked, gint64 run_us,
                           gint64 virtual_start_ns, BenchFigures *out);
/* The figures' JSON members, which both cluster benchmarks report, into an
 * object the caller began. */
void bench_cluster_json(JsonBuilder *builder, const BenchCluster *bench, const BenchFigures *f);
/* records_per_s: the simulation, with everything recorded for the checker;
 * records_per_s_checked: with the final state collected and the history
 * checked too. */
double bench_figures_per_s(const BenchFigures *f);
double bench_figures_per_s_checked(const BenchFigures *f);

#endif
