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

/* What checking a cluster benchmark's run found and cost. */
typedef struct {
    double check_s;      /* wall seconds to collect the final state and check */
    guint64 lost_write;  /* the checker's lost_write count */
    double p99_ms;       /* acknowledged produce latency, p99 */
} BenchCheck;

/* Collects the final state of every replica and checks the history, as
 * `ksim run` does after a run (anomalies, explanations, latency histograms,
 * throughput, availability; no reports or plots). */
void bench_check(Cluster *cluster, History *history, BenchCheck *out);

#endif
