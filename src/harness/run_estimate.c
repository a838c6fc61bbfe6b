/*
 * run_estimate: the cost of a run before it is simulated (see run_estimate.h).
 * Pure functions of a resolved run; no state.
 */
#include "run_estimate.h"

#include "sim_assert.h"

#include <math.h>
#include <unistd.h>

#define NS_PER_S 1e9
/* Per-item costs; run_estimate.h says where they come from. */
#define BASE_BYTES (32.0 * 1024 * 1024)
#define REPLICA_BYTES (8.0 * 1024)
#define REPLICA_EVENTS_PER_S 1.0
#define BROKER_EVENTS_PER_S 10.0
#define RECORD_EVENTS_BASE 2.0
#define RECORD_EVENTS_PER_REPLICA 2.0
#define RECORD_BYTES_BASE 200.0
#define RECORD_BYTES_PER_REPLICA 200.0
#define CONSUMED_RECORD_EVENTS 3.0
#define CONSUMED_RECORD_BYTES 100.0

GQuark
ksim_run_estimate_error_quark(void)
{
    return g_quark_from_static_string("ksim-run-estimate-error-quark");
}

/* The replicas of an internal topic (__consumer_offsets,
 * __transaction_state): its partitions times its replication factor, which
 * Kafka caps at the live brokers when it creates the topic. */
static double
internal_topic_replicas(const ScenarioVariant *variant, const char *partitions_key,
                        const char *replication_key)
{
    const KConfig *broker = scenario_variant_broker_config(variant);
    double brokers = scenario_variant_cluster(variant)->brokers;
    double partitions = (double)kconfig_get_int64(broker, partitions_key);
    double rf = MIN((double)kconfig_get_int64(broker, replication_key), brokers);
    return partitions * rf;
}

static gboolean
has_transactions(const ScenarioVariant *variant)
{
    const GPtrArray *producers = scenario_variant_producers(variant);
    for (guint i = 0; i < producers->len; i++) {
        const ScenarioProducer *p = g_ptr_array_index(producers, i);
        if (!kconfig_is_null(p->config, "transactional.id"))
            return TRUE;
    }
    const GPtrArray *groups = scenario_variant_consumer_groups(variant);
    for (guint i = 0; i < groups->len; i++) {
        const ScenarioConsumerGroup *g = g_ptr_array_index(groups, i);
        if (g->exactly_once)
            return TRUE;
    }
    return FALSE;
}

static double
replicas_of(const ScenarioVariant *variant)
{
    double replicas = 0.0;
    const GPtrArray *topics = scenario_variant_topics(variant);
    for (guint i = 0; i < topics->len; i++) {
        const ScenarioTopic *t = g_ptr_array_index(topics, i);
        replicas += (double)t->partitions * (double)t->replication_factor;
    }
    if (scenario_variant_consumer_groups(variant)->len > 0)
        replicas += internal_topic_replicas(variant, "offsets.topic.num.partitions",
                                            "offsets.topic.replication.factor");
    if (has_transactions(variant))
        replicas += internal_topic_replicas(variant, "transaction.state.log.num.partitions",
                                            "transaction.state.log.replication.factor");
    return replicas;
}

/* Records one instance of `producer` sends: its rate over its send window,
 * times the share of time a burst workload is on. */
static double
records_per_instance(const ScenarioProducer *producer)
{
    const ScenarioWorkload *w = &producer->workload;
    double window_s = (double)MAX(w->stop_ns - w->start_ns, 0) / NS_PER_S;
    double share = 1.0;
    if (w->arrival == SCENARIO_ARRIVAL_BURSTS && w->burst_on_ns + w->burst_off_ns > 0)
        share = (double)w->burst_on_ns / ((double)w->burst_on_ns + (double)w->burst_off_ns);
    return w->rate_per_s * window_s * share;
}

/* The replication factor of the topic `producer` writes (1 when unknown). */
static double
producer_rf(const ScenarioVariant *variant, const ScenarioProducer *producer)
{
    const ScenarioTopic *topic =
        producer->topic != NULL ? scenario_variant_find_topic(variant, producer->topic) : NULL;
    return topic != NULL ? (double)topic->replication_factor : 1.0;
}

static void
add_records(const ScenarioVariant *variant, RunEstimate *e)
{
    const GPtrArray *producers = scenario_variant_producers(variant);
    double groups = (double)scenario_variant_consumer_groups(variant)->len;
    for (guint i = 0; i < producers->len; i++) {
        const ScenarioProducer *p = g_ptr_array_index(producers, i);
        double records = records_per_instance(p) * (double)p->instances;
        double rf = producer_rf(variant, p);
        e->records += records;
        e->events += records * (RECORD_EVENTS_BASE + RECORD_EVENTS_PER_REPLICA * rf +
                                CONSUMED_RECORD_EVENTS * groups);
        e->bytes += records * (RECORD_BYTES_BASE + RECORD_BYTES_PER_REPLICA * rf +
                               CONSUMED_RECORD_BYTES * groups);
    }
}

RunEstimate
run_estimate_variant(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    RunEstimate e = {0};
    double seconds = ((double)scenario_variant_duration_ns(variant) +
                      (double)scenario_variant_quiet_ns(variant)) /
                     NS_PER_S;
    double brokers = scenario_variant_cluster(variant)->brokers;
    e.replicas = replicas_of(variant);
    e.bytes = BASE_BYTES + e.replicas * REPLICA_BYTES;
    e.events = seconds * (brokers * BROKER_EVENTS_PER_S + e.replicas * REPLICA_EVENTS_PER_S);
    add_records(variant, &e);
    KSIM_ASSERT(e.events >= 0.0 && e.bytes >= BASE_BYTES);
    return e;
}

gboolean
run_estimate_fits(const RunEstimate *estimate)
{
    KSIM_ASSERT(estimate != NULL);
    return estimate->bytes <= (double)RUN_ESTIMATE_BYTES_MAX &&
           estimate->events <= RUN_ESTIMATE_EVENTS_MAX;
}

char *
run_estimate_format_bytes(double bytes)
{
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    guint unit = 0;
    while (bytes >= 1024.0 && unit + 1 < G_N_ELEMENTS(units)) {
        bytes /= 1024.0;
        unit++;
    }
    return g_strdup_printf(unit == 0 ? "%.0f %s" : "%.1f %s", bytes, units[unit]);
}

gboolean
run_estimate_check(const Scenario *scenario, const char *display_name, GError **error)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(display_name != NULL);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    for (guint i = 0; i < variants->len; i++) {
        const ScenarioVariant *variant = g_ptr_array_index(variants, i);
        RunEstimate e = run_estimate_variant(variant);
        if (run_estimate_fits(&e))
            continue;
        g_autofree char *bytes = run_estimate_format_bytes(e.bytes);
        g_autofree char *bytes_max = run_estimate_format_bytes((double)RUN_ESTIMATE_BYTES_MAX);
        g_set_error(error, KSIM_RUN_ESTIMATE_ERROR, KSIM_RUN_ESTIMATE_ERROR_TOO_LARGE,
                    "%s: run %u (%s) is too large to simulate: an estimated %s of memory and "
                    "%.3g events (%.3g partition replicas, %.3g records), above the limits of %s "
                    "and %.3g events; --force runs it anyway",
                    display_name, i + 1, scenario_variant_label(variant), bytes, e.events,
                    e.replicas, e.records, bytes_max, RUN_ESTIMATE_EVENTS_MAX);
        return FALSE;
    }
    return TRUE;
}

gint64
run_estimate_machine_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_bytes <= 0)
        return 0;
    return (gint64)pages * (gint64)page_bytes;
}

char *
run_estimate_memory_warning(const Scenario *scenario, const char *display_name, guint concurrent,
                            gint64 machine_bytes)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(display_name != NULL);
    KSIM_ASSERT(concurrent >= 1);
    if (machine_bytes <= 0)
        return NULL;
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    double largest = 0.0;
    guint largest_index = 0;
    for (guint i = 0; i < variants->len; i++) {
        RunEstimate e = run_estimate_variant(g_ptr_array_index(variants, i));
        if (e.bytes > largest) {
            largest = e.bytes;
            largest_index = i;
        }
    }
    /* Concurrent runs are as large as the largest at worst. */
    double need = largest * concurrent;
    if (need <= (double)machine_bytes)
        return NULL;
    const ScenarioVariant *variant = g_ptr_array_index(variants, largest_index);
    g_autofree char *run_bytes = run_estimate_format_bytes(largest);
    g_autofree char *machine = run_estimate_format_bytes((double)machine_bytes);
    if (concurrent == 1 || largest > (double)machine_bytes)
        return g_strdup_printf("%s: warning: run %u (%s) is estimated to need %s of memory, more "
                               "than this machine's %s: expect it to swap or be killed",
                               display_name, largest_index + 1, scenario_variant_label(variant),
                               run_bytes, machine);
    guint fit = (guint)MAX(1.0, floor((double)machine_bytes / largest));
    g_autofree char *need_bytes = run_estimate_format_bytes(need);
    return g_strdup_printf("%s: warning: %u runs at once may need %s of memory (%s for run %u, "
                           "%s), more than this machine's %s: --jobs %u fits",
                           display_name, concurrent, need_bytes, run_bytes, largest_index + 1,
                           scenario_variant_label(variant), machine, fit);
}
