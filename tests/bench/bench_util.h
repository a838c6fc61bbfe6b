/* Helpers shared by the benchmarks: option parsing and JSON output. */
#ifndef KSIM_BENCH_UTIL_H
#define KSIM_BENCH_UTIL_H

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

#endif
