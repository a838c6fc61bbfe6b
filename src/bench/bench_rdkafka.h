/*
 * bench_rdkafka: `ksim bench cluster --producer --vs-rdkafka` runs the same
 * load on librdkafka's mock cluster, through the program ksim-rdkafka-mock
 * (src/bench/rdkafka), which the build makes beside ksim when librdkafka is
 * installed. ksim does not link librdkafka: it runs the program and reads
 * the one JSON object it prints.
 */
#ifndef KSIM_BENCH_RDKAFKA_H
#define KSIM_BENCH_RDKAFKA_H

#include <glib.h>
#include <json-glib/json-glib.h>

#define KSIM_BENCH_RDKAFKA_ERROR (ksim_bench_rdkafka_error_quark())
GQuark ksim_bench_rdkafka_error_quark(void);
typedef enum {
    KSIM_BENCH_RDKAFKA_ERROR_FAILED, /* the program exited with an error */
    KSIM_BENCH_RDKAFKA_ERROR_OUTPUT, /* it printed no JSON object of its figures */
} KsimBenchRdkafkaErrorCode;

/* librdkafka's bounds on what ksim passes: linger.ms, and
 * queue.buffering.max.messages (the window). */
#define BENCH_RDKAFKA_LINGER_MS_MAX 900000
#define BENCH_RDKAFKA_WINDOW_MAX G_MAXINT32

/* What ksim asks the mock program to do: the benchmark's load. */
typedef struct {
    gint64 records;
    gint64 partitions;
    gint64 value_bytes;
    gint64 linger_ms;
    gint64 window; /* records outstanding at most */
} BenchRdkafkaLoad;

/* The path of ksim-rdkafka-mock beside the running ksim executable, or
 * NULL when it is not there (librdkafka was not installed when the build
 * was configured). (transfer full) */
char *bench_rdkafka_mock_path(void);

/* Runs the program at `path` on `load` and returns the JSON object it
 * printed, checked to hold records_per_s and every record delivered; the
 * program's stderr, if any, is passed on to ours. NULL with `error` set
 * when the program fails or prints something else. (transfer full) */
JsonObject *bench_rdkafka_mock_run(const char *path, const BenchRdkafkaLoad *load, GError **error);

#endif
