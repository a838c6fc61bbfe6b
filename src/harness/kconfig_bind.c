/*
 * kconfig_bind: the binding tables and the generic fill (see kconfig_bind.h).
 *
 * The module has no state: its tables are static and immutable, and the fill
 * reads a KConfig and writes the caller's struct. The tables list their keys
 * in the registry's order, which is also the order of the fill; every value
 * is read without side effects, so the order cannot change a run.
 */
#include "kconfig_bind.h"

#include "server_assignor.h"
#include "sim_assert.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define FIELD_WIDTH(type_, field_) (sizeof(((type_ *)0)->field_))

#define BIND(type_, field_, key_, kind_)                                                           \
    {                                                                                              \
        .key = (key_), .kind = KCONFIG_BIND_##kind_, .offset = offsetof(type_, field_),            \
        .width = FIELD_WIDTH(type_, field_)                                                        \
    }
/* The same with more fields: VALUES(...) or EXPLICIT(...). */
#define BIND_WITH(type_, field_, key_, kind_, ...)                                                 \
    {                                                                                              \
        .key = (key_), .kind = KCONFIG_BIND_##kind_, .offset = offsetof(type_, field_),            \
        .width = FIELD_WIDTH(type_, field_), __VA_ARGS__                                           \
    }
#define VALUES(table_) .values = (table_), .n_values = G_N_ELEMENTS(table_)
#define EXPLICIT(type_, field_) .has_explicit = TRUE, .explicit_offset = offsetof(type_, field_)

#define TABLE(name_, scope_, type_, bindings_)                                                     \
    {                                                                                              \
        .name = (name_), .scope = KCONFIG_SCOPE_##scope_, .struct_size = sizeof(type_),            \
        .bindings = (bindings_), .n_bindings = G_N_ELEMENTS(bindings_)                             \
    }

/* ---- What ENUM and LIST choices mean to the models ---- */

/* Kafka's acks as the wire carries it: all is -1. */
static const KConfigBindValue ACKS_VALUES[] = {{"all", -1}, {"0", 0}, {"1", 1}};
static const KConfigBindValue TRUNCATION_VALUES[] = {
    {"hw", BROKER_TRUNCATE_HW},
    {"leader-epoch", BROKER_TRUNCATE_LEADER_EPOCH},
    {"kip-101", BROKER_TRUNCATE_KIP101},
};
static const KConfigBindValue SERVICE_DISTRIBUTION_VALUES[] = {
    {"fixed", BROKER_SERVICE_FIXED},
    {"exponential", BROKER_SERVICE_EXPONENTIAL},
};
/* PlogConfig.log_append_time. */
static const KConfigBindValue TIMESTAMP_TYPE_VALUES[] = {
    {"CreateTime", FALSE},
    {"LogAppendTime", TRUE},
};
/* A null partitioner.class is Kafka's built-in partitioner: sticky for
 * keyless records (Kafka 2.4+). */
static const KConfigBindValue PARTITIONER_VALUES[] = {
    {"sticky", PRODUCER_PARTITIONER_STICKY},
    {"round-robin", PRODUCER_PARTITIONER_ROUND_ROBIN},
    {NULL, PRODUCER_PARTITIONER_STICKY},
};
static const KConfigBindValue OFFSET_RESET_VALUES[] = {
    {"latest", CONSUMER_RESET_LATEST},
    {"earliest", CONSUMER_RESET_EARLIEST},
    {"none", CONSUMER_RESET_NONE},
};
/* ConsumerConfig.isolation_level is the wire's IsolationLevel byte. */
static const KConfigBindValue ISOLATION_VALUES[] = {{"read_uncommitted", 0}, {"read_committed", 1}};
static const KConfigBindValue ASSIGNOR_VALUES[] = {
    {"range", ASSIGNOR_RANGE},
    {"roundrobin", ASSIGNOR_ROUNDROBIN},
    {"sticky", ASSIGNOR_STICKY},
    {"cooperative-sticky", ASSIGNOR_COOPERATIVE_STICKY},
};

static const KConfigBindValue GROUP_PROTOCOL_VALUES[] = {
    {"classic", CONSUMER_GROUP_PROTOCOL_CLASSIC},
    {"consumer", CONSUMER_GROUP_PROTOCOL_CONSUMER},
};
static const KConfigBindValue SERVER_ASSIGNOR_VALUES[] = {
    {"uniform", SERVER_ASSIGNOR_UNIFORM},
    {"range", SERVER_ASSIGNOR_RANGE},
};
static const KConfigBindValue ARRIVAL_VALUES[] = {
    {"constant", WORKLOAD_ARRIVAL_CONSTANT},
    {"poisson", WORKLOAD_ARRIVAL_POISSON},
    {"bursts", WORKLOAD_ARRIVAL_BURSTS},
};
/* WorkloadConfig.send_sync: Kafka's send().get() is sync. */
static const KConfigBindValue SEND_VALUES[] = {{"async", FALSE}, {"sync", TRUE}};

static const KConfigBindValue PROCESSING_MODE_VALUES[] = {
    {"auto", CONSUMER_PROCESSING_AUTO},
    {"commit-before-processing", CONSUMER_COMMIT_BEFORE_PROCESSING},
    {"process-then-commit", CONSUMER_PROCESS_THEN_COMMIT},
    {"process-then-commit-async", CONSUMER_PROCESS_THEN_COMMIT_ASYNC},
};

/* ---- The tables ---- */

static const KConfigBinding BROKER_BINDINGS[] = {
    BIND(BrokerConfig, min_insync_replicas, "min.insync.replicas", INT),
    BIND(BrokerConfig, unclean_leader_election, "unclean.leader.election.enable", BOOL),
    BIND(BrokerConfig, replica_lag_time_max_ms, "replica.lag.time.max.ms", MS),
    BIND(BrokerConfig, replica_fetch_wait_max_ms, "replica.fetch.wait.max.ms", MS),
    BIND(BrokerConfig, replica_fetch_min_bytes, "replica.fetch.min.bytes", BYTES),
    BIND(BrokerConfig, replica_fetch_max_bytes, "replica.fetch.max.bytes", BYTES),
    BIND(BrokerConfig, replica_fetch_backoff_ms, "replica.fetch.backoff.ms", MS),
    BIND(BrokerConfig, replica_socket_timeout_ms, "replica.socket.timeout.ms", MS),
    BIND(BrokerConfig, max_incremental_fetch_session_cache_slots,
         "max.incremental.fetch.session.cache.slots", INT),
    BIND(BrokerConfig, replica_high_watermark_checkpoint_interval_ms,
         "replica.high.watermark.checkpoint.interval.ms", MS),
    BIND(BrokerConfig, zookeeper_session_timeout_ms, "zookeeper.session.timeout.ms", MS),
    BIND(BrokerConfig, zookeeper_max_in_flight_requests, "zookeeper.max.in.flight.requests", INT),
    BIND(BrokerConfig, broker_heartbeat_interval_ms, "broker.heartbeat.interval.ms", MS),
    BIND(BrokerConfig, controller_quorum_request_timeout_ms,
         "controller.quorum.request.timeout.ms", MS),
    BIND(BrokerConfig, controller_socket_timeout_ms, "controller.socket.timeout.ms", MS),
    BIND(BrokerConfig, log.segment_bytes, "log.segment.bytes", BYTES),
    BIND(BrokerConfig, log.roll_ms, "log.roll.ms", MS),
    BIND(BrokerConfig, log.index_interval_bytes, "log.index.interval.bytes", BYTES),
    BIND_WITH(BrokerConfig, log.log_append_time, "log.message.timestamp.type", ENUM,
              VALUES(TIMESTAMP_TYPE_VALUES)),
    BIND(BrokerConfig, log.retention_ms, "log.retention.ms", MS),
    BIND(BrokerConfig, log.retention_bytes, "log.retention.bytes", BYTES),
    BIND(BrokerConfig, log_retention_check_interval_ms, "log.retention.check.interval.ms", MS),
    BIND(BrokerConfig, log_flush_offset_checkpoint_interval_ms,
         "log.flush.offset.checkpoint.interval.ms", MS),
    BIND(BrokerConfig, log.flush_interval_messages, "log.flush.interval.messages", INT),
    BIND(BrokerConfig, log.flush_interval_ms, "log.flush.interval.ms", MS_OR_NEVER),
    BIND(BrokerConfig, offsets_topic_num_partitions, "offsets.topic.num.partitions", INT),
    BIND(BrokerConfig, offsets_topic_replication_factor, "offsets.topic.replication.factor", INT),
    BIND(BrokerConfig, offsets_commit_timeout_ms, "offsets.commit.timeout.ms", MS),
    BIND(BrokerConfig, transaction_state_log_num_partitions, "transaction.state.log.num.partitions",
         INT),
    BIND(BrokerConfig, transaction_state_log_replication_factor,
         "transaction.state.log.replication.factor", INT),
    BIND(BrokerConfig, transaction_state_log_min_isr, "transaction.state.log.min.isr", INT),
    BIND(BrokerConfig, transaction_max_timeout_ms, "transaction.max.timeout.ms", MS),
    BIND(BrokerConfig, transaction_abort_timed_out_transaction_cleanup_interval_ms,
         "transaction.abort.timed.out.transaction.cleanup.interval.ms", MS),
    BIND(BrokerConfig, transaction_partition_verification_enable,
         "transaction.partition.verification.enable", BOOL),
    BIND(BrokerConfig, group_initial_rebalance_delay_ms, "group.initial.rebalance.delay.ms", MS),
    BIND(BrokerConfig, group_min_session_timeout_ms, "group.min.session.timeout.ms", MS),
    BIND(BrokerConfig, group_max_session_timeout_ms, "group.max.session.timeout.ms", MS),
    BIND(BrokerConfig, group_consumer_session_timeout_ms, "group.consumer.session.timeout.ms", MS),
    BIND(BrokerConfig, group_consumer_heartbeat_interval_ms,
         "group.consumer.heartbeat.interval.ms", MS),
    BIND_WITH(BrokerConfig, group_consumer_assignor_default, "group.consumer.assignors",
              LIST_FIRST, VALUES(SERVER_ASSIGNOR_VALUES)),
    BIND(BrokerConfig, auto_leader_rebalance_enable, "auto.leader.rebalance.enable", BOOL),
    BIND(BrokerConfig, controlled_shutdown_enable, "controlled.shutdown.enable", BOOL),
    BIND(BrokerConfig, controlled_shutdown_max_retries, "controlled.shutdown.max.retries", INT),
    BIND(BrokerConfig, controlled_shutdown_retry_backoff_ms,
         "controlled.shutdown.retry.backoff.ms", MS),
    BIND(BrokerConfig, leader_imbalance_check_interval_ms,
         "leader.imbalance.check.interval.seconds", MS),
    BIND(BrokerConfig, leader_imbalance_per_broker_percentage,
         "leader.imbalance.per.broker.percentage", INT),
    BIND_WITH(BrokerConfig, truncation_mode, "ksim.truncation.mode", ENUM,
              VALUES(TRUNCATION_VALUES)),
    BIND(BrokerConfig, fetch_quiet_partitions, "ksim.fetch.quiet.partitions", BOOL),
    BIND(BrokerConfig, leader_and_isr_partition_ns, "ksim.leader.and.isr.partition.time", NS),
    BIND(BrokerConfig, update_metadata_partition_ns, "ksim.update.metadata.partition.time", NS),
    BIND(BrokerConfig, num_network_threads, "num.network.threads", INT),
    BIND(BrokerConfig, queued_max_requests, "queued.max.requests", INT),
    BIND(BrokerConfig, num_io_threads, "num.io.threads", INT),
    BIND_WITH(BrokerConfig, request_service_distribution, "ksim.request.service.distribution",
              ENUM, VALUES(SERVICE_DISTRIBUTION_VALUES)),
    BIND(BrokerConfig, request_time_ns, "ksim.request.time", NS),
    BIND(BrokerConfig, request_batch_time_ns, "ksim.request.batch.time", NS),
    BIND(BrokerConfig, request_mib_time_ns, "ksim.request.mib.time", NS),
    BIND(BrokerConfig, network_request_time_ns, "ksim.network.request.time", NS),
    BIND(BrokerConfig, network_mib_time_ns, "ksim.network.mib.time", NS),
};

static const KConfigBinding TOPIC_BINDINGS[] = {
    BIND(TopicConfig, min_insync_replicas, "min.insync.replicas", INT),
    BIND(TopicConfig, unclean_leader_election, "unclean.leader.election.enable", BOOL),
    BIND(TopicConfig, log.retention_ms, "retention.ms", MS),
    BIND(TopicConfig, log.retention_bytes, "retention.bytes", BYTES),
    BIND(TopicConfig, log.segment_bytes, "segment.bytes", BYTES),
    BIND(TopicConfig, log.roll_ms, "segment.ms", MS),
    BIND(TopicConfig, log.flush_interval_messages, "flush.messages", INT),
    BIND(TopicConfig, log.flush_interval_ms, "flush.ms", MS_OR_NEVER),
    BIND(TopicConfig, log.index_interval_bytes, "index.interval.bytes", BYTES),
    BIND_WITH(TopicConfig, log.log_append_time, "message.timestamp.type", ENUM,
              VALUES(TIMESTAMP_TYPE_VALUES)),
};

static const KConfigBinding PRODUCER_BINDINGS[] = {
    BIND_WITH(ProducerConfig, acks, "acks", ENUM, VALUES(ACKS_VALUES)),
    BIND_WITH(ProducerConfig, enable_idempotence, "enable.idempotence", BOOL,
              EXPLICIT(ProducerConfig, enable_idempotence_explicit)),
    BIND(ProducerConfig, retries, "retries", INT),
    BIND(ProducerConfig, batch_size, "batch.size", BYTES),
    BIND(ProducerConfig, linger_ms, "linger.ms", MS),
    BIND(ProducerConfig, buffer_memory, "buffer.memory", BYTES),
    BIND(ProducerConfig, max_block_ms, "max.block.ms", MS),
    BIND(ProducerConfig, max_in_flight_requests_per_connection,
         "max.in.flight.requests.per.connection", INT),
    BIND(ProducerConfig, request_timeout_ms, "request.timeout.ms", MS),
    BIND(ProducerConfig, retry_backoff_ms, "retry.backoff.ms", MS),
    BIND_WITH(ProducerConfig, delivery_timeout_ms, "delivery.timeout.ms", MS,
              EXPLICIT(ProducerConfig, delivery_timeout_ms_explicit)),
    BIND(ProducerConfig, metadata_max_age_ms, "metadata.max.age.ms", MS),
    BIND(ProducerConfig, max_request_size, "max.request.size", BYTES),
    BIND(ProducerConfig, reconnect_backoff_ms, "reconnect.backoff.ms", MS),
    BIND(ProducerConfig, reconnect_backoff_max_ms, "reconnect.backoff.max.ms", MS),
    BIND_WITH(ProducerConfig, partitioner, "partitioner.class", ENUM, VALUES(PARTITIONER_VALUES)),
    BIND(ProducerConfig, client_id, "client.id", TEXT),
    BIND(ProducerConfig, transactional_id, "transactional.id", TEXT),
    BIND(ProducerConfig, transaction_timeout_ms, "transaction.timeout.ms", MS),
};

static const KConfigBinding CONSUMER_BINDINGS[] = {
    BIND_WITH(ConsumerConfig, auto_offset_reset, "auto.offset.reset", ENUM,
              VALUES(OFFSET_RESET_VALUES)),
    BIND(ConsumerConfig, enable_auto_commit, "enable.auto.commit", BOOL),
    BIND(ConsumerConfig, auto_commit_interval_ms, "auto.commit.interval.ms", MS),
    BIND(ConsumerConfig, fetch_min_bytes, "fetch.min.bytes", BYTES),
    BIND(ConsumerConfig, fetch_max_wait_ms, "fetch.max.wait.ms", MS),
    BIND(ConsumerConfig, fetch_max_bytes, "fetch.max.bytes", BYTES),
    BIND(ConsumerConfig, max_partition_fetch_bytes, "max.partition.fetch.bytes", BYTES),
    BIND(ConsumerConfig, max_poll_records, "max.poll.records", INT),
    BIND(ConsumerConfig, max_poll_interval_ms, "max.poll.interval.ms", MS),
    BIND(ConsumerConfig, session_timeout_ms, "session.timeout.ms", MS),
    BIND(ConsumerConfig, heartbeat_interval_ms, "heartbeat.interval.ms", MS),
    BIND_WITH(ConsumerConfig, partition_assignment_strategy, "partition.assignment.strategy",
              LIST_FIRST, VALUES(ASSIGNOR_VALUES)),
    BIND_WITH(ConsumerConfig, isolation_level, "isolation.level", ENUM, VALUES(ISOLATION_VALUES)),
    BIND(ConsumerConfig, default_api_timeout_ms, "default.api.timeout.ms", MS),
    BIND(ConsumerConfig, request_timeout_ms, "request.timeout.ms", MS),
    BIND(ConsumerConfig, retry_backoff_ms, "retry.backoff.ms", MS),
    BIND(ConsumerConfig, metadata_max_age_ms, "metadata.max.age.ms", MS),
    BIND(ConsumerConfig, validate_positions, "ksim.consumer.validate.positions", BOOL),
    BIND_WITH(ConsumerConfig, group_protocol, "group.protocol", ENUM,
              VALUES(GROUP_PROTOCOL_VALUES)),
};

/* The one [consumer-group] ksim key the consumer itself honours; the others
 * (topics, members, their schedule, processing and poll times, the
 * pipeline) belong to the runner's members, which read the parse result. */
static const KConfigBinding CONSUMER_GROUP_BINDINGS[] = {
    BIND_WITH(ConsumerConfig, processing_mode, "processing.mode", ENUM,
              VALUES(PROCESSING_MODE_VALUES)),
};

static const KConfigBinding WORKLOAD_BINDINGS[] = {
    BIND(WorkloadConfig, rate_per_s, "workload.rate", DOUBLE),
    BIND_WITH(WorkloadConfig, arrival, "workload.arrival", ENUM, VALUES(ARRIVAL_VALUES)),
    BIND(WorkloadConfig, record_size, "workload.record.size", DIST),
    BIND(WorkloadConfig, partition, "workload.partition", INT),
    BIND_WITH(WorkloadConfig, send_sync, "workload.send", ENUM, VALUES(SEND_VALUES)),
    BIND(WorkloadConfig, start_ns, "workload.start", NS),
    BIND(WorkloadConfig, stop_ns, "workload.stop", NS_OR_NEVER),
    BIND(WorkloadConfig, txn_abort_per_million, "transaction.abort.ratio", PER_MILLION),
};

static const KConfigBindValue METADATA_MODE_VALUES[] = {{"zookeeper", FALSE}, {"kraft", TRUE}};

static const KConfigBindValue UNCLEAN_RECOVERY_VALUES[] = {
    {"Balanced", KRAFT_UNCLEAN_RECOVERY_BALANCED},
    {"Aggressive", KRAFT_UNCLEAN_RECOVERY_AGGRESSIVE},
    {"None", KRAFT_UNCLEAN_RECOVERY_NONE},
};

static const KConfigBinding CLUSTER_BINDINGS[] = {
    BIND(ClusterConfig, n_brokers, "brokers", INT),
    BIND_WITH(ClusterConfig, kraft, "metadata.mode", ENUM, VALUES(METADATA_MODE_VALUES)),
    BIND(ClusterConfig, n_controllers, "controllers", INT),
    BIND(ClusterConfig, raft.election_timeout_ns, "controller.quorum.election.timeout.ms", NS),
    BIND(ClusterConfig, raft.election_backoff_max_ns, "controller.quorum.election.backoff.max.ms",
         NS),
    BIND(ClusterConfig, raft.fetch_timeout_ns, "controller.quorum.fetch.timeout.ms", NS),
    BIND(ClusterConfig, broker_session_timeout_ms, "broker.session.timeout.ms", MS),
    BIND(ClusterConfig, raft.segment_bytes, "metadata.log.segment.bytes", BYTES),
    BIND(ClusterConfig, raft.retention_bytes, "metadata.max.retention.bytes", BYTES),
    BIND(ClusterConfig, raft.retention_ms, "metadata.max.retention.ms", MS),
    BIND(ClusterConfig, snapshot_max_new_record_bytes,
         "metadata.log.max.record.bytes.between.snapshots", BYTES),
    BIND(ClusterConfig, snapshot_max_interval_ms, "metadata.log.max.snapshot.interval.ms", MS),
    BIND(ClusterConfig, elr_version, "eligible.leader.replicas.version", INT),
    BIND(ClusterConfig, unclean_recovery_manager_enabled, "unclean.recovery.manager.enabled",
         BOOL),
    BIND_WITH(ClusterConfig, unclean_recovery_strategy, "unclean.recovery.strategy", ENUM,
              VALUES(UNCLEAN_RECOVERY_VALUES)),
    BIND(ClusterConfig, unclean_recovery_timeout_ns, "unclean.recovery.timeout.ms", NS),
    BIND(ClusterConfig, transaction_version, "transaction.version", INT),
    BIND(ClusterConfig, network_latency, "network.latency", DIST),
    BIND(ClusterConfig, network_bandwidth_bytes_per_s, "network.bandwidth", BYTES),
    BIND(ClusterConfig, fsync_latency, "disk.fsync.latency", DIST),
    BIND(ClusterConfig, disk_bandwidth_bytes_per_s, "disk.bandwidth", BYTES),
    BIND(ClusterConfig, disk_dirty_limit_bytes, "disk.dirty.bytes", BYTES),
    BIND(ClusterConfig, disk_page_cache_bytes, "disk.page.cache.bytes", BYTES),
    BIND(ClusterConfig, disk_dirty_expire_ns, "disk.dirty.expire", NS),
    BIND(ClusterConfig, disk_dirty_writeback_ns, "disk.dirty.writeback", NS),
    BIND(ClusterConfig, zk_request_ns, "zookeeper.request.time", NS),
    BIND(ClusterConfig, zk_byte_ns, "zookeeper.byte.time", NS),
};

static const KConfigBindTable BROKER_TABLE = TABLE("broker", BROKER, BrokerConfig, BROKER_BINDINGS);
static const KConfigBindTable TOPIC_TABLE = TABLE("topic", TOPIC, TopicConfig, TOPIC_BINDINGS);
static const KConfigBindTable PRODUCER_TABLE =
    TABLE("producer", PRODUCER, ProducerConfig, PRODUCER_BINDINGS);
static const KConfigBindTable CONSUMER_TABLE =
    TABLE("consumer", CONSUMER, ConsumerConfig, CONSUMER_BINDINGS);

static const KConfigBindTable CONSUMER_GROUP_TABLE =
    TABLE("consumer group", CONSUMER_GROUP, ConsumerConfig, CONSUMER_GROUP_BINDINGS);
static const KConfigBindTable WORKLOAD_TABLE =
    TABLE("workload", WORKLOAD, WorkloadConfig, WORKLOAD_BINDINGS);
static const KConfigBindTable CLUSTER_TABLE =
    TABLE("cluster", CLUSTER, ClusterConfig, CLUSTER_BINDINGS);

static const KConfigBindTable *const TABLES[] = {
    &BROKER_TABLE,         &TOPIC_TABLE,    &PRODUCER_TABLE, &CONSUMER_TABLE,
    &CONSUMER_GROUP_TABLE, &WORKLOAD_TABLE, &CLUSTER_TABLE,
};

const KConfigBindTable *
kconfig_bind_broker(void)
{
    return &BROKER_TABLE;
}

const KConfigBindTable *
kconfig_bind_topic(void)
{
    return &TOPIC_TABLE;
}

const KConfigBindTable *
kconfig_bind_producer(void)
{
    return &PRODUCER_TABLE;
}

const KConfigBindTable *
kconfig_bind_consumer(void)
{
    return &CONSUMER_TABLE;
}

const KConfigBindTable *
kconfig_bind_consumer_group(void)
{
    return &CONSUMER_GROUP_TABLE;
}

const KConfigBindTable *
kconfig_bind_workload(void)
{
    return &WORKLOAD_TABLE;
}

const KConfigBindTable *
kconfig_bind_cluster(void)
{
    return &CLUSTER_TABLE;
}

const KConfigBindTable *const *
kconfig_bind_tables(guint *n_tables)
{
    KSIM_ASSERT(n_tables != NULL);
    *n_tables = G_N_ELEMENTS(TABLES);
    return TABLES;
}

const KConfigBinding *
kconfig_bind_lookup(const KConfigBindTable *table, const char *key)
{
    KSIM_ASSERT(table != NULL);
    KSIM_ASSERT(key != NULL);
    for (guint i = 0; i < table->n_bindings; i++) {
        if (strcmp(table->bindings[i].key, key) == 0)
            return &table->bindings[i];
    }
    return NULL;
}

/* ---- The fill ---- */

/* Stores `value` in a signed integer field of `width` bytes, asserting that
 * it fits: a registry range wider than the field is a programming error. */
static void
store_int(guint8 *field, gsize width, gint64 value)
{
    switch (width) {
    case 1: {
        KSIM_ASSERT(value >= G_MININT8 && value <= G_MAXINT8);
        gint8 narrow = (gint8)value;
        memcpy(field, &narrow, sizeof narrow);
        return;
    }
    case 2: {
        KSIM_ASSERT(value >= G_MININT16 && value <= G_MAXINT16);
        gint16 narrow = (gint16)value;
        memcpy(field, &narrow, sizeof narrow);
        return;
    }
    case 4: {
        KSIM_ASSERT(value >= G_MININT32 && value <= G_MAXINT32);
        gint32 narrow = (gint32)value;
        memcpy(field, &narrow, sizeof narrow);
        return;
    }
    case 8:
        memcpy(field, &value, sizeof value);
        return;
    }
    KSIM_ASSERT(!"a bound number field of an unsupported width");
}

/* The model's value for canonical choice `choice` (NULL: the key's null). */
static gint64
mapped_value(const KConfigBinding *binding, const char *choice)
{
    for (guint i = 0; i < binding->n_values; i++) {
        const char *bound = binding->values[i].choice;
        if (bound == NULL ? choice == NULL : choice != NULL && strcmp(bound, choice) == 0)
            return binding->values[i].value;
    }
    KSIM_ASSERT(!"a choice its binding does not map");
    return 0;
}

/* A *.ms key whose value may be null or Kafka's "never" (Long.MAX_VALUE),
 * both of which the models write as -1. */
static gint64
ms_or_never(const KConfig *cfg, const char *key)
{
    if (kconfig_is_null(cfg, key))
        return -1;
    gint64 ms = kconfig_get_duration_ms(cfg, key);
    return ms == G_MAXINT64 ? -1 : ms;
}

/* The first canonical value of a LIST key; an empty list means the key's
 * registry default, whose first value is read the same way. */
static const char *
first_of_list(const KConfig *cfg, const char *key, GStrv *items)
{
    *items = kconfig_get_list(cfg, key);
    if ((*items)[0] != NULL)
        return (*items)[0];
    const KConfigKey *entry = kconfig_lookup(key, kconfig_scope_mask(cfg));
    KSIM_ASSERT(entry != NULL && entry->default_value != NULL);
    g_strfreev(*items);
    *items = g_strsplit(entry->default_value, ",", 2);
    KSIM_ASSERT((*items)[0] != NULL);
    const char *canonical = kconfig_choice_canonical(entry, g_strstrip((*items)[0]));
    KSIM_ASSERT(canonical != NULL);
    return canonical;
}

static void
store_text(guint8 *field, gsize width, const char *text)
{
    if (text == NULL)
        return;
    KSIM_ASSERT(strlen(text) < width);
    g_strlcpy((char *)field, text, width);
}

static void
store_double(guint8 *field, gsize width, double value)
{
    KSIM_ASSERT(width == sizeof(double));
    memcpy(field, &value, sizeof value);
}

/* A ratio in 0..1 as parts per million, rounded to the nearest. */
static gint64
per_million(double ratio)
{
    KSIM_ASSERT(ratio >= 0.0 && ratio <= 1.0);
    return (gint64)(ratio * 1e6 + 0.5);
}

static void
fill_one(const KConfigBinding *binding, const KConfig *cfg, guint8 *base)
{
    guint8 *field = base + binding->offset;
    const char *key = binding->key;
    switch (binding->kind) {
    case KCONFIG_BIND_INT:
        store_int(field, binding->width, kconfig_get_int64(cfg, key));
        break;
    case KCONFIG_BIND_BOOL:
        KSIM_ASSERT(binding->width == sizeof(gboolean));
        store_int(field, binding->width, kconfig_get_bool(cfg, key) ? TRUE : FALSE);
        break;
    case KCONFIG_BIND_MS:
        store_int(field, binding->width, kconfig_get_duration_ms(cfg, key));
        break;
    case KCONFIG_BIND_MS_OR_NEVER:
        store_int(field, binding->width, ms_or_never(cfg, key));
        break;
    case KCONFIG_BIND_BYTES:
        store_int(field, binding->width, kconfig_get_bytes(cfg, key));
        break;
    case KCONFIG_BIND_ENUM:
        store_int(field, binding->width, mapped_value(binding, kconfig_get_string(cfg, key)));
        break;
    case KCONFIG_BIND_LIST_FIRST: {
        GStrv items = NULL;
        const char *first = first_of_list(cfg, key, &items);
        store_int(field, binding->width, mapped_value(binding, first));
        g_strfreev(items);
        break;
    }
    case KCONFIG_BIND_TEXT:
        store_text(field, binding->width, kconfig_get_string(cfg, key));
        break;
    case KCONFIG_BIND_DOUBLE:
        store_double(field, binding->width, kconfig_get_double(cfg, key));
        break;
    case KCONFIG_BIND_PER_MILLION:
        store_int(field, binding->width, per_million(kconfig_get_double(cfg, key)));
        break;
    case KCONFIG_BIND_NS:
        store_int(field, binding->width, kconfig_get_duration_ns(cfg, key));
        break;
    case KCONFIG_BIND_NS_OR_NEVER:
        store_int(field, binding->width,
                  kconfig_is_null(cfg, key) ? G_MAXINT64 : kconfig_get_duration_ns(cfg, key));
        break;
    case KCONFIG_BIND_DIST: {
        KSIM_ASSERT(binding->width == sizeof(SimDist));
        SimDist dist = kconfig_get_dist(cfg, key);
        memcpy(field, &dist, sizeof dist);
        break;
    }
    }
    if (binding->has_explicit)
        store_int(base + binding->explicit_offset, sizeof(gboolean),
                  kconfig_is_set(cfg, key) ? TRUE : FALSE);
}

void
kconfig_bind_fill(const KConfigBindTable *table, const KConfig *cfg, void *target)
{
    KSIM_ASSERT(table != NULL);
    KSIM_ASSERT(cfg != NULL);
    KSIM_ASSERT(target != NULL);
    KSIM_ASSERT((kconfig_scope_mask(cfg) & table->scope) != 0);
    for (guint i = 0; i < table->n_bindings; i++) {
        const KConfigBinding *binding = &table->bindings[i];
        KSIM_ASSERT(binding->offset + binding->width <= table->struct_size);
        fill_one(binding, cfg, target);
    }
}

/* ---- The model structs, from the registry ---- */

/* Zeroes `target` and fills it from `cfg`, or from an empty configuration of
 * the table's scope (every key at its default) when `cfg` is NULL. */
static void
fill_fresh(const KConfigBindTable *table, const KConfig *cfg, void *target)
{
    memset(target, 0, table->struct_size);
    if (cfg != NULL) {
        kconfig_bind_fill(table, cfg, target);
        return;
    }
    g_autoptr(KConfig) defaults = kconfig_new(table->scope);
    kconfig_bind_fill(table, defaults, target);
}

/* Every assignor group.consumer.assignors lists, as a mask of 1 << kind. */
static guint32
server_assignors_listed(const KConfig *cfg)
{
    if (cfg == NULL)
        return (1u << SERVER_ASSIGNOR_UNIFORM) | (1u << SERVER_ASSIGNOR_RANGE);
    g_auto(GStrv) names = kconfig_get_list(cfg, "group.consumer.assignors");
    guint32 mask = 0;
    for (guint i = 0; names[i] != NULL; i++) {
        ServerAssignorKind kind;
        gboolean known = server_assignor_parse(names[i], &kind);
        KSIM_ASSERT(known); /* the registry's choices are canonical */
        mask |= 1u << kind;
    }
    return mask;
}

/* group.remote.assignor as the wire numbers it (-1: null); the scenario
 * checks refused any other name. */
static gint32
remote_assignor(const KConfig *cfg)
{
    const char *name = cfg != NULL ? kconfig_get_string(cfg, "group.remote.assignor") : NULL;
    ServerAssignorKind kind;
    if (name == NULL || g_ascii_strcasecmp(name, "null") == 0 ||
        !server_assignor_parse(name, &kind))
        return -1;
    return (gint32)kind;
}

void
kconfig_bind_broker_from(BrokerConfig *config, const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    fill_fresh(&BROKER_TABLE, cfg, config);
    config->group_consumer_assignors = server_assignors_listed(cfg);
}

void
kconfig_bind_broker_defaults(BrokerConfig *config)
{
    fill_fresh(&BROKER_TABLE, NULL, config);
    config->group_consumer_assignors = server_assignors_listed(NULL);
}

void
kconfig_bind_topic_from(TopicConfig *config, const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    fill_fresh(&TOPIC_TABLE, cfg, config);
}

void
kconfig_bind_log_defaults(PlogConfig *config)
{
    BrokerConfig broker;
    kconfig_bind_broker_defaults(&broker);
    *config = broker.log;
}

void
kconfig_bind_producer_from(ProducerConfig *config, const KConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    fill_fresh(&PRODUCER_TABLE, cfg, config);
}

void
kconfig_bind_producer_defaults(ProducerConfig *config)
{
    fill_fresh(&PRODUCER_TABLE, NULL, config);
}

/* Kafka's ConsumerCoordinator runs the highest rebalance protocol that every
 * configured assignor supports: COOPERATIVE only when all are
 * cooperative-sticky. */
static gboolean
eager_assignor_listed(const KConfig *cfg)
{
    if (cfg == NULL)
        return TRUE; /* the default, range */
    g_auto(GStrv) strategies = kconfig_get_list(cfg, "partition.assignment.strategy");
    for (guint i = 0; strategies[i] != NULL; i++) {
        AssignorStrategy strategy;
        gboolean known = assignor_strategy_parse(strategies[i], &strategy);
        KSIM_ASSERT(known); /* the registry's choices are canonical */
        if (!assignor_strategy_cooperative(strategy))
            return TRUE;
    }
    return FALSE;
}

void
kconfig_bind_consumer_from(ConsumerConfig *config, const KConfig *cfg, const KConfig *group)
{
    fill_fresh(&CONSUMER_TABLE, cfg, config);
    config->eager_assignor_listed = eager_assignor_listed(cfg);
    config->group_remote_assignor = remote_assignor(cfg);
    if (group != NULL) {
        kconfig_bind_fill(&CONSUMER_GROUP_TABLE, group, config);
        return;
    }
    g_autoptr(KConfig) defaults = kconfig_new(KCONFIG_SCOPE_CONSUMER_GROUP);
    kconfig_bind_fill(&CONSUMER_GROUP_TABLE, defaults, config);
}

void
kconfig_bind_consumer_defaults(ConsumerConfig *config)
{
    kconfig_bind_consumer_from(config, NULL, NULL);
}

void
kconfig_bind_cluster_from(ClusterConfig *config, const KConfig *hardware, const KConfig *broker)
{
    fill_fresh(&CLUSTER_TABLE, hardware, config);
    /* The quorum's timings no key sets are Kafka's defaults. */
    RaftConfig raft;
    raft_config_init(&raft);
    config->raft.request_timeout_ns = raft.request_timeout_ns;
    config->raft.retry_backoff_ns = raft.retry_backoff_ns;
    config->raft.fetch_max_wait_ns = raft.fetch_max_wait_ns;
    config->raft.election_backoff_base_ns = raft.election_backoff_base_ns;
    config->raft.clean_interval_ns = raft.clean_interval_ns;
    if (broker != NULL)
        kconfig_bind_broker_from(&config->broker, broker);
    else
        kconfig_bind_broker_defaults(&config->broker);
}

void
kconfig_bind_cluster_defaults(ClusterConfig *config)
{
    kconfig_bind_cluster_from(config, NULL, NULL);
}

gboolean
kconfig_bind_parse_burst(const char *text, gint64 *on_ns, gint64 *off_ns)
{
    g_auto(GStrv) parts = g_strsplit(text, ",", -1);
    gint64 *outs[] = {on_ns, off_ns};
    gboolean ok = g_strv_length(parts) == 2;
    for (guint i = 0; ok && i < 2; i++) {
        const char *part = g_strstrip(parts[i]);
        ok = kconfig_parse_time_ns(part, outs[i], NULL) && *outs[i] > 0;
    }
    return ok;
}

gboolean
kconfig_bind_parse_keys(const char *text, WorkloadKeys *keys, guint64 *key_count, double *zipf_s)
{
    *keys = WORKLOAD_KEYS_NONE;
    if (strcmp(text, "none") == 0)
        return TRUE;
    /* g_strsplit gives an empty vector for "", so parts[0] may be NULL. */
    g_auto(GStrv) parts = g_strsplit(text, ":", 2);
    const char *kind = parts[0] != NULL ? parts[0] : "";
    const char *body = parts[0] != NULL ? parts[1] : NULL;
    g_auto(GStrv) params = body != NULL ? g_strsplit(body, ",", -1) : NULL;
    guint n_params = params != NULL ? g_strv_length(params) : 0;
    gboolean uniform = strcmp(kind, "uniform") == 0 && n_params == 1;
    gboolean zipf = strcmp(kind, "zipf") == 0 && n_params == 2;
    gboolean ok = (uniform || zipf) && g_ascii_string_to_unsigned(g_strstrip(params[0]), 10, 1,
                                                                  G_MAXUINT32, key_count, NULL);
    if (ok && zipf) {
        char *end = NULL;
        const char *s_text = g_strstrip(params[1]);
        *zipf_s = g_ascii_strtod(s_text, &end);
        ok = end != s_text && *end == '\0' && isfinite(*zipf_s) && *zipf_s > 0;
    }
    if (ok)
        *keys = uniform ? WORKLOAD_KEYS_UNIFORM : WORKLOAD_KEYS_ZIPF;
    return ok;
}

void
kconfig_bind_workload_from(WorkloadConfig *config, const KConfig *cfg, const char *topic)
{
    KSIM_ASSERT(cfg != NULL);
    KSIM_ASSERT(topic != NULL && strlen(topic) < sizeof config->topic);
    fill_fresh(&WORKLOAD_TABLE, cfg, config);
    g_strlcpy(config->topic, topic, sizeof config->topic);
    /* The scenario parser refused values these parsers refuse. */
    gboolean burst = kconfig_bind_parse_burst(kconfig_get_string(cfg, "workload.burst"),
                                              &config->burst_on_ns, &config->burst_off_ns);
    KSIM_ASSERT(burst);
    gboolean keys = kconfig_bind_parse_keys(kconfig_get_string(cfg, "workload.keys"), &config->keys,
                                            &config->key_count, &config->zipf_s);
    KSIM_ASSERT(keys);
}

void
kconfig_bind_workload_defaults(WorkloadConfig *config, const char *topic)
{
    g_autoptr(KConfig) defaults = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    kconfig_bind_workload_from(config, defaults, topic);
}

void
kconfig_bind_driver_defaults(DriverConfig *config)
{
    ProducerConfig producer;
    kconfig_bind_producer_defaults(&producer);
    WorkloadConfig workload;
    kconfig_bind_workload_defaults(&workload, "");
    KSIM_ASSERT(workload.record_size.kind == SIM_DIST_CONSTANT);
    KSIM_ASSERT(producer.max_in_flight_requests_per_connection > 0);
    *config = (DriverConfig){
        .acks = producer.acks,
        .request_timeout_ms = producer.request_timeout_ms,
        .max_in_flight = (guint)producer.max_in_flight_requests_per_connection,
        .record_size_bytes = (guint32)workload.record_size.a,
    };
}
