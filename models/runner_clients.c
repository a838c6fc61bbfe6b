/*
 * runner_clients: producers and their workloads built from a variant (see
 * runner_clients.h).
 *
 * Invariants:
 *  1. producers[i] and workloads[i] belong together; names[i] is the
 *     [producer NAME] they came from.
 *  2. Process ids are 100 + the instance's position, so they never collide
 *     with broker ids (1..31) in the history.
 */
#include "runner_clients.h"

#include "kconfig.h"
#include "producer.h"
#include "sim_assert.h"
#include "workload.h"

#include <string.h>

#define PROCESS_FIRST 100

struct RunnerClients {
    GPtrArray *producers; /* Producer* */
    GPtrArray *workloads; /* Workload* */
    GPtrArray *names;     /* char*: the [producer NAME] of each */
};

/* The ProducerConfig a [producer] group's Kafka keys describe. */
static void
producer_config_from(ProducerConfig *config, const KConfig *cfg)
{
    producer_config_init(config);
    const char *acks = kconfig_get_string(cfg, "acks");
    config->acks = strcmp(acks, "all") == 0 ? -1 : (gint16)g_ascii_strtoll(acks, NULL, 10);
    config->enable_idempotence = kconfig_get_bool(cfg, "enable.idempotence");
    config->enable_idempotence_explicit = kconfig_is_set(cfg, "enable.idempotence");
    config->retries = (gint32)kconfig_get_int64(cfg, "retries");
    config->batch_size = (gint32)kconfig_get_bytes(cfg, "batch.size");
    config->linger_ms = kconfig_get_duration_ms(cfg, "linger.ms");
    config->buffer_memory = kconfig_get_bytes(cfg, "buffer.memory");
    config->max_block_ms = kconfig_get_duration_ms(cfg, "max.block.ms");
    config->max_in_flight_requests_per_connection =
        (gint32)kconfig_get_int64(cfg, "max.in.flight.requests.per.connection");
    config->request_timeout_ms = kconfig_get_duration_ms(cfg, "request.timeout.ms");
    config->retry_backoff_ms = kconfig_get_duration_ms(cfg, "retry.backoff.ms");
    config->delivery_timeout_ms = kconfig_get_duration_ms(cfg, "delivery.timeout.ms");
    config->delivery_timeout_ms_explicit = kconfig_is_set(cfg, "delivery.timeout.ms");
    config->metadata_max_age_ms = kconfig_get_duration_ms(cfg, "metadata.max.age.ms");
    config->max_request_size = (gint32)kconfig_get_bytes(cfg, "max.request.size");
    config->reconnect_backoff_ms = kconfig_get_duration_ms(cfg, "reconnect.backoff.ms");
    config->reconnect_backoff_max_ms = kconfig_get_duration_ms(cfg, "reconnect.backoff.max.ms");
    const char *partitioner =
        kconfig_is_null(cfg, "partitioner.class") ? NULL : kconfig_get_string(cfg, "partitioner.class");
    config->partitioner = partitioner != NULL && strcmp(partitioner, "round-robin") == 0
                              ? PRODUCER_PARTITIONER_ROUND_ROBIN
                              : PRODUCER_PARTITIONER_STICKY;
    if (!kconfig_is_null(cfg, "client.id"))
        producer_config_set_client_id(config, kconfig_get_string(cfg, "client.id"));
}

static void
workload_config_from(WorkloadConfig *config, const ScenarioProducer *spec, gint64 duration_ns)
{
    const ScenarioWorkload *w = &spec->workload;
    workload_config_init(config, spec->topic);
    config->rate_per_s = w->rate_per_s;
    config->arrival = w->arrival == SCENARIO_ARRIVAL_POISSON  ? WORKLOAD_ARRIVAL_POISSON
                      : w->arrival == SCENARIO_ARRIVAL_BURSTS ? WORKLOAD_ARRIVAL_BURSTS
                                                              : WORKLOAD_ARRIVAL_CONSTANT;
    config->burst_on_ns = w->burst_on_ns;
    config->burst_off_ns = w->burst_off_ns;
    config->keys = w->keys == SCENARIO_KEYS_UNIFORM ? WORKLOAD_KEYS_UNIFORM
                   : w->keys == SCENARIO_KEYS_ZIPF  ? WORKLOAD_KEYS_ZIPF
                                                    : WORKLOAD_KEYS_NONE;
    config->key_count = w->key_count;
    config->zipf_s = w->zipf_s;
    config->record_size = w->record_size;
    config->partition = w->partition;
    config->send_sync = w->send_sync;
    config->start_ns = w->start_ns;
    /* No new record after the fault phase: the liveness phase only lets
     * what is in flight finish. */
    config->stop_ns = MIN(w->stop_ns > 0 ? w->stop_ns : duration_ns, duration_ns);
}

RunnerClients *
runner_clients_new(SimWorld *world, Cluster *cluster, History *history,
                   const ScenarioVariant *variant)
{
    RunnerClients *clients = g_new0(RunnerClients, 1);
    clients->producers = g_ptr_array_new_with_free_func((GDestroyNotify)producer_free);
    clients->workloads = g_ptr_array_new_with_free_func((GDestroyNotify)workload_free);
    clients->names = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(cluster);
    const GPtrArray *specs = scenario_variant_producers(variant);
    gint64 duration_ns = scenario_variant_duration_ns(variant);
    for (guint i = 0; i < specs->len; i++) {
        const ScenarioProducer *spec = g_ptr_array_index(specs, i);
        ProducerConfig config;
        producer_config_from(&config, spec->config);
        WorkloadConfig workload;
        workload_config_from(&workload, spec, duration_ns);
        for (guint k = 0; k < spec->instances; k++) {
            guint32 process = PROCESS_FIRST + clients->producers->len;
            g_autofree char *name = spec->instances == 1
                                        ? g_strdup_printf("producer-%s", spec->name)
                                        : g_strdup_printf("producer-%s-%u", spec->name, k + 1);
            Producer *producer =
                producer_new(world, name, process, bootstrap, &config, history);
            g_ptr_array_add(clients->producers, producer);
            g_ptr_array_add(clients->workloads, workload_new(world, name, producer, &workload));
            g_ptr_array_add(clients->names, g_strdup(spec->name));
        }
    }
    return clients;
}

void
runner_clients_free(RunnerClients *clients)
{
    if (clients == NULL)
        return;
    /* Workloads drive producers: free them first. */
    g_ptr_array_free(clients->workloads, TRUE);
    g_ptr_array_free(clients->producers, TRUE);
    g_ptr_array_free(clients->names, TRUE);
    g_free(clients);
}

void
runner_clients_nodes(const RunnerClients *clients, const char *name, GArray *nodes)
{
    for (guint i = 0; i < clients->producers->len; i++) {
        if (strcmp(g_ptr_array_index(clients->names, i), name) != 0)
            continue;
        SimNodeId node = producer_node(g_ptr_array_index(clients->producers, i));
        g_array_append_val(nodes, node);
    }
}
