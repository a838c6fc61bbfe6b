/*
 * run_estimate: what one run of a scenario will cost, estimated before it is
 * simulated, so that a scenario the parser accepts but no machine can run
 * (partitions = 16777216, a 60-hour run at a high rate) is refused with the
 * estimate instead of growing for minutes to tens of gigabytes.
 *
 * The estimate is a sum of per-item costs measured on ksim itself (release
 * build, 2026): a replica of a partition holds about 8 KiB (log, index,
 * replica state) and costs about one event per virtual second (its share of
 * follower fetches); a produced record costs about 2 + 2 * RF events and
 * 200 + 200 * RF bytes (its history entry and its copies in the logs); each
 * consumer group reading it adds 3 events and 100 bytes; each broker costs
 * about 10 events per virtual second when idle (heartbeats, fetch sessions,
 * checkpoints). It is meant to be right within a factor of a few, which is
 * all a refusal threshold needs: the library's scenarios are more than ten
 * times below it, the runs it refuses more than ten times above.
 *
 * The estimate reads only the resolved run (ScenarioVariant): brokers,
 * topics' partitions and replication factors, the internal topics a run
 * creates, producers' instances, rates and send windows, consumer groups,
 * the duration and the quiet phase.
 */
#ifndef KSIM_RUN_ESTIMATE_H
#define KSIM_RUN_ESTIMATE_H

#include "scenario.h"

#include <glib.h>

/* Above either limit a run is refused unless forced (ksim run --force). The
 * memory limit leaves room for two runs at once on a 24 GiB machine; the
 * events limit is about a quarter of an hour at ksim's usual event rate. */
#define RUN_ESTIMATE_BYTES_MAX (G_GUINT64_CONSTANT(8) << 30)
#define RUN_ESTIMATE_EVENTS_MAX 1e9

typedef struct {
    double replicas; /* partition replicas, internal topics included */
    double records;  /* records produced, every instance of every producer */
    double events;   /* events simulated */
    double bytes;    /* memory held at the end of the run */
} RunEstimate;

/* The estimate of one run. */
RunEstimate run_estimate_variant(const ScenarioVariant *variant);

/* TRUE when `estimate` is within both limits. */
gboolean run_estimate_fits(const RunEstimate *estimate);

/* Checks every run of `scenario`: FALSE with a message naming the first run
 * over a limit, its estimate and the limits, and saying that --force runs it
 * anyway. `display_name` stands for the file. */
gboolean run_estimate_check(const Scenario *scenario, const char *display_name, GError **error);

/* The memory of the machine ksim runs on (physical pages times their
 * size), 0 when the system does not say. */
gint64 run_estimate_machine_bytes(void);

/* A warning when `concurrent` runs of `scenario` at once (a sweep's --jobs;
 * 1 for ksim run) may need more memory than `machine_bytes` (0: unknown, no
 * warning): it names the largest run's estimate, the machine's memory and,
 * for concurrent runs, a --jobs that fits. NULL when they fit. Checked
 * before any run, so a run forced past the limits, or a sweep of many jobs,
 * is told before it starts to swap. (transfer full) */
char *run_estimate_memory_warning(const Scenario *scenario, const char *display_name,
                                  guint concurrent, gint64 machine_bytes);

/* "1.2 GiB", "340 MiB", "12 KiB". (transfer full) */
char *run_estimate_format_bytes(double bytes);

#define KSIM_RUN_ESTIMATE_ERROR (ksim_run_estimate_error_quark())
GQuark ksim_run_estimate_error_quark(void);
typedef enum {
    KSIM_RUN_ESTIMATE_ERROR_TOO_LARGE, /* the run is over a limit */
} KsimRunEstimateErrorCode;

#endif
