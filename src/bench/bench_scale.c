/*
 * `ksim bench scale`: production-size clusters. 30 brokers, replication
 * factor 3, min.insync.replicas = 2, acks=all, the partitions of each size
 * spread over 100 topics, 10,000 records/s keyed over every partition (one
 * producer per topic, 100 records/s each, keys uniform over ten times the
 * topic's partitions), 60 s of virtual time with one broker crash and one
 * controller failover. Each size is a scenario in memory, run as `ksim run`
 * runs it (no check, no reports), and measured: wall seconds of the run,
 * its CPU seconds (steadier than wall time on a shared machine), virtual
 * seconds per wall second, events, peak RSS, bytes per partition and
 * the longest controller failover (reports/failover.h).
 *
 * Bytes per partition is the run's peak RSS above the process's RSS before
 * the run, over the partitions: it includes the history of the records,
 * which is the same at every size, so the marginal figure (the growth of
 * peak RSS from the previous size, over the added partitions) is what an
 * added partition, mostly idle, costs.
 */
#include "benchmarks.h"

#include "bench_util.h"
#include "failover.h"
#include "runner.h"
#include "scenario.h"

#include <stdio.h>
#include <sys/resource.h>
#include <string.h>

#define SCALE_BROKERS 30
#define SCALE_TOPICS 100
#define SCALE_RATE_TOTAL 10000 /* records per virtual second, over every topic */
#define SCALE_SIZES_MAX 16

typedef struct {
    gint64 partitions;
    double wall_s;
    double cpu_s; /* user and system time of the run: steadier than wall on a busy machine */
    double virtual_s;
    guint64 events;
    gint64 peak_rss_bytes;
    gint64 rss_before_bytes;
    double failover_ms;
    guint64 acked; /* records acknowledged: what the run got done */
    guint64 fingerprint;
} ScaleFigures;

static guint64
acked_records(const History *history)
{
    const HistoryOpArray *ops = history_ops(history);
    guint64 n = 0;
    for (guint i = 0; i < ops->len; i++)
        n += ops->data[i].fn == HISTORY_FN_SEND && ops->data[i].type == HISTORY_OK;
    return n;
}

/* The scenario of one size, as text: broker 7 crashes a quarter into the
 * run, for a sixth of it; the controller crashes half way, for a third, so
 * that its ZooKeeper session (6 s) expires and another broker takes over
 * well before the end (in a run of 20 s virtual or more; a shorter one
 * measures the failover until the end). (transfer full) */
static char *
scale_scenario(gint64 partitions, gint64 virtual_ms, gboolean sessions, const char *mode)
{
    GString *s = g_string_new(NULL);
    g_string_append_printf(s,
                           "[scenario]\nname = bench-scale-%" G_GINT64_FORMAT "\n"
                           "duration = %" G_GINT64_FORMAT "ms\nquiet = 1s\nseed = 1\n\n"
                           "[cluster]\nbrokers = %d\nmetadata.mode = %s\n"
                           "zookeeper.session.timeout.ms = 6000\n",
                           partitions, virtual_ms, SCALE_BROKERS, mode);
    if (!sessions)
        g_string_append(s, "max.incremental.fetch.session.cache.slots = 0\n");
    g_string_append(s, "\n");
    gint64 per_topic = partitions / SCALE_TOPICS;
    for (int t = 0; t < SCALE_TOPICS; t++) {
        gint64 n = per_topic + (t < partitions % SCALE_TOPICS);
        g_string_append_printf(s,
                               "[topic t%02d]\npartitions = %" G_GINT64_FORMAT "\n"
                               "replication.factor = 3\nmin.insync.replicas = 2\n\n",
                               t, n);
        g_string_append_printf(s,
                               "[producer p%02d]\ntopic = t%02d\nacks = all\n"
                               "workload.rate = %d\nworkload.keys = uniform:%" G_GINT64_FORMAT
                               "\n\n",
                               t, t, SCALE_RATE_TOTAL / SCALE_TOPICS, n * 10);
    }
    g_string_append_printf(s,
                           "[fault crash-a-broker]\nat = %" G_GINT64_FORMAT "ms\n"
                           "action = crash\ntarget = broker:7\nduration = %" G_GINT64_FORMAT
                           "ms\n\n",
                           virtual_ms / 4, virtual_ms / 6);
    g_string_append_printf(s,
                           "[fault crash-the-controller]\nat = %" G_GINT64_FORMAT "ms\n"
                           "action = crash\ntarget = controller\nduration = %" G_GINT64_FORMAT
                           "ms\n",
                           virtual_ms / 2, virtual_ms / 3);
    return g_string_free(s, FALSE);
}

/* Parses "1000,10000" into `sizes`; FALSE with a message on bad input. */
static gboolean
parse_sizes(const char *text, GArray *sizes)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    for (guint i = 0; parts[i] != NULL; i++) {
        gint64 n = 0;
        if (!g_ascii_string_to_signed(g_strstrip(parts[i]), 10, SCALE_TOPICS, 10000000, &n,
                                      NULL) ||
            sizes->len >= SCALE_SIZES_MAX) {
            fprintf(stderr,
                    "ksim bench scale: --sizes '%s': each size is a partition count from %d "
                    "to 10000000, at most %d sizes\n",
                    text, SCALE_TOPICS, SCALE_SIZES_MAX);
            return FALSE;
        }
        g_array_append_val(sizes, n);
    }
    return sizes->len > 0;
}

static double
cpu_seconds(void)
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

/* Runs one size; FALSE when its scenario does not load (a bug: it is ours). */
static gboolean
scale_run(gint64 partitions, gint64 virtual_ms, gboolean sessions, const char *mode,
          ScaleFigures *out)
{
    g_autofree char *text = scale_scenario(partitions, virtual_ms, sessions, mode);
    GError *error = NULL;
    Scenario *scenario = scenario_load_data(text, "bench-scale.ini", &error);
    if (scenario == NULL) {
        fprintf(stderr, "ksim bench scale: %s\n", error->message);
        g_error_free(error);
        return FALSE;
    }
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    ScenarioVariant *variant = g_ptr_array_index(variants, 0);
    bench_reset_peak_rss();
    out->partitions = partitions;
    out->rss_before_bytes = bench_rss_bytes();
    gint64 start_us = g_get_monotonic_time();
    double cpu_start = cpu_seconds();
    RunnerResult *result = runner_run(variant, 1, NULL);
    out->wall_s = (double)(g_get_monotonic_time() - start_us) / 1e6;
    out->cpu_s = cpu_seconds() - cpu_start;
    out->virtual_s = (double)result->virtual_ns / 1e9;
    out->events = result->events;
    out->fingerprint = result->fingerprint;
    out->acked = acked_records(result->history);
    out->peak_rss_bytes = bench_peak_rss_bytes();
    FailoverResult *failover = failover_run(result->history);
    out->failover_ms = failover_result_longest_ms(failover);
    failover_result_free(failover);
    runner_result_free(result);
    g_ptr_array_set_free_func(variants, (GDestroyNotify)scenario_variant_free);
    scenario_free(scenario);
    return TRUE;
}

static double
bytes_per_partition(const ScaleFigures *f)
{
    return (double)(f->peak_rss_bytes - f->rss_before_bytes) / (double)f->partitions;
}

static double
cpu_us_per_event(const ScaleFigures *f)
{
    return f->events > 0 ? f->cpu_s * 1e6 / (double)f->events : 0;
}

static double
ratio(double num, double den)
{
    return den > 0 ? num / den : 0;
}

/* One size over the one before it, both measured in this run: how the cost
 * grows with the partitions (the "figures as ratios between
 * sizes"). 0 where the earlier figure is 0. */
typedef struct {
    double partitions;
    double events;
    double cpu_s;
    double cpu_per_event;
    double peak_rss;
    double acked;
} ScaleRatios;

static ScaleRatios
ratios_between(const ScaleFigures *before, const ScaleFigures *after)
{
    return (ScaleRatios){
        .partitions = ratio((double)after->partitions, (double)before->partitions),
        .events = ratio((double)after->events, (double)before->events),
        .cpu_s = ratio(after->cpu_s, before->cpu_s),
        .cpu_per_event = ratio(cpu_us_per_event(after), cpu_us_per_event(before)),
        .peak_rss = ratio((double)after->peak_rss_bytes, (double)before->peak_rss_bytes),
        .acked = ratio((double)after->acked, (double)before->acked),
    };
}

static void
print_ratios(const ScaleFigures *figures, guint n)
{
    if (n < 2)
        return;
    printf("\nratios, each size over the one before it (this run):\n");
    printf("%10s %10s %10s %9s %9s %9s %9s %9s\n", "from", "to", "partitions", "events",
           "cpu_s", "cpu/event", "peak_rss", "acked");
    for (guint i = 1; i < n; i++) {
        ScaleRatios r = ratios_between(&figures[i - 1], &figures[i]);
        printf("%10" G_GINT64_FORMAT " %10" G_GINT64_FORMAT " %10.2f %9.2f %9.2f %9.2f %9.2f "
               "%9.2f\n",
               figures[i - 1].partitions, figures[i].partitions, r.partitions, r.events, r.cpu_s,
               r.cpu_per_event, r.peak_rss, r.acked);
    }
}

static void
print_table(const ScaleFigures *figures, guint n)
{
    printf("%10s %9s %9s %9s %11s %10s %11s %11s %12s %10s\n", "partitions", "wall_s", "cpu_s",
           "virt/wall", "events", "peak_MiB", "B/partition", "marginal_B", "failover_ms",
           "acked");
    for (guint i = 0; i < n; i++) {
        const ScaleFigures *f = &figures[i];
        double marginal = 0;
        if (i > 0 && f->partitions > figures[i - 1].partitions)
            marginal = (double)(f->peak_rss_bytes - figures[i - 1].peak_rss_bytes) /
                       (double)(f->partitions - figures[i - 1].partitions);
        printf("%10" G_GINT64_FORMAT " %9.2f %9.2f %9.2f %11" G_GUINT64_FORMAT
               " %10.1f %11.0f %11.0f %12.1f %10" G_GUINT64_FORMAT "\n",
               f->partitions, f->wall_s, f->cpu_s, f->wall_s > 0 ? f->virtual_s / f->wall_s : 0,
               f->events, (double)f->peak_rss_bytes / 1048576.0, bytes_per_partition(f),
               marginal, f->failover_ms, f->acked);
    }
}

static void
print_json(const ScaleFigures *figures, guint n, const char *mode)
{
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "metadata_mode");
    json_builder_add_string_value(b, mode);
    json_builder_set_member_name(b, "sizes");
    json_builder_begin_array(b);
    for (guint i = 0; i < n; i++) {
        const ScaleFigures *f = &figures[i];
        json_builder_begin_object(b);
        bench_json_int(b, "partitions", f->partitions);
        bench_json_double(b, "wall_s", f->wall_s);
        bench_json_double(b, "cpu_s", f->cpu_s);
        bench_json_double(b, "cpu_us_per_event", cpu_us_per_event(f));
        bench_json_double(b, "virtual_s", f->virtual_s);
        bench_json_double(b, "virtual_per_wall", f->wall_s > 0 ? f->virtual_s / f->wall_s : 0);
        bench_json_int(b, "events", (gint64)f->events);
        bench_json_int(b, "peak_rss_bytes", f->peak_rss_bytes);
        bench_json_double(b, "bytes_per_partition", bytes_per_partition(f));
        bench_json_double(b, "controller_failover_ms", f->failover_ms);
        bench_json_int(b, "acked", (gint64)f->acked);
        g_autofree char *fp = g_strdup_printf("%016" G_GINT64_MODIFIER "x", f->fingerprint);
        json_builder_set_member_name(b, "fingerprint");
        json_builder_add_string_value(b, fp);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_set_member_name(b, "ratios");
    json_builder_begin_array(b);
    for (guint i = 1; i < n; i++) {
        ScaleRatios r = ratios_between(&figures[i - 1], &figures[i]);
        json_builder_begin_object(b);
        bench_json_int(b, "from", figures[i - 1].partitions);
        bench_json_int(b, "to", figures[i].partitions);
        bench_json_double(b, "partitions", r.partitions);
        bench_json_double(b, "events", r.events);
        bench_json_double(b, "cpu_s", r.cpu_s);
        bench_json_double(b, "cpu_per_event", r.cpu_per_event);
        bench_json_double(b, "peak_rss", r.peak_rss);
        bench_json_double(b, "acked", r.acked);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    bench_json_print(b);
    g_object_unref(b);
}

int
bench_scale(int argc, char **argv)
{
    gboolean json = FALSE;
    gboolean no_sessions = FALSE;
    g_autofree char *sizes_text = NULL;
    gint64 virtual_s = 60;
    g_autofree char *mode = NULL;
    GOptionEntry entries[] = {
        {"mode", 0, 0, G_OPTION_ARG_STRING, &mode,
         "the cluster's metadata.mode: zookeeper (the default) or kraft", "MODE"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
        {"sizes", 0, 0, G_OPTION_ARG_STRING, &sizes_text,
         "partition counts to run (1000,10000,100000)", "N,N,..."},
        {"virtual", 0, 0, G_OPTION_ARG_INT64, &virtual_s, "virtual seconds per size (60)", "S"},
        {"no-sessions", 0, 0, G_OPTION_ARG_NONE, &no_sessions,
         "full fetches only (max.incremental.fetch.session.cache.slots = 0)", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    if (!bench_parse_options(&argc, &argv, "scale", entries))
        return 2;
    if (virtual_s < 10 || virtual_s > 86400) {
        fprintf(stderr, "ksim bench scale: --virtual must be 10 to 86400 seconds\n");
        return 2;
    }
    if (mode != NULL && strcmp(mode, "zookeeper") != 0 && strcmp(mode, "kraft") != 0) {
        fprintf(stderr, "ksim bench scale: --mode '%s': zookeeper or kraft\n", mode);
        return 2;
    }
    const char *metadata_mode = mode != NULL ? mode : "zookeeper";
    g_autoptr(GArray) sizes = g_array_new(FALSE, FALSE, sizeof(gint64));
    if (!parse_sizes(sizes_text != NULL ? sizes_text : "1000,10000,100000", sizes))
        return 2;
    ScaleFigures figures[SCALE_SIZES_MAX];
    for (guint i = 0; i < sizes->len; i++) {
        gint64 n = g_array_index(sizes, gint64, i);
        fprintf(stderr, "bench scale: %" G_GINT64_FORMAT " partitions, %" G_GINT64_FORMAT
                        " s virtual, %s ...\n", n, virtual_s, metadata_mode);
        if (!scale_run(n, virtual_s * 1000, !no_sessions, metadata_mode, &figures[i]))
            return 1;
        fprintf(stderr, "bench scale: %" G_GINT64_FORMAT " partitions done in %.1f s wall\n", n,
                figures[i].wall_s);
    }
    if (json)
        print_json(figures, sizes->len, metadata_mode);
    else {
        print_table(figures, sizes->len);
        print_ratios(figures, sizes->len);
    }
    return 0;
}
