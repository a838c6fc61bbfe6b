/*
 * broker_config: a broker's configuration and a topic's overrides of it, with
 * Kafka's key names and defaults (KafkaConfig, LogConfig). It has a file of
 * its own so that the configuration and the broker process can change apart;
 * broker.h includes it.
 *
 * The keys' defaults, ranges and docs are the harness's key registry
 * (src/harness/kconfig.c) and nowhere else: its bindings
 * (src/harness/kconfig_bind.h) fill these structs, for a scenario, a
 * benchmark or a test alike. A zeroed struct is no valid config.
 */
#ifndef BROKER_CONFIG_H
#define BROKER_CONFIG_H

#include <glib.h>

#include "plog.h"

typedef enum {
    /* The seeds' design: a replica that becomes follower, or restarts,
     * truncates its log to its high watermark. */
    BROKER_TRUNCATE_HW = 0,
    /* KIP-101/KIP-279 (Kafka 2.1+): truncate to the end offset of the
     * follower's latest epoch as the leader knows it (OffsetsForLeaderEpoch),
     * asking again until the epochs match. */
    BROKER_TRUNCATE_LEADER_EPOCH,
    /* KIP-101 without KIP-279 (Kafka 0.11-1.1): the leader answers only the
     * end offset, and the follower truncates to it once. */
    BROKER_TRUNCATE_KIP101,
} BrokerTruncationMode;

/* How a request's service time is drawn from its mean (request_channel.c). */
typedef enum {
    BROKER_SERVICE_FIXED = 0,   /* exactly the mean */
    BROKER_SERVICE_EXPONENTIAL, /* exponential with that mean (an M/M/c station) */
} BrokerServiceDistribution;

/* Broker configuration; each field is the Kafka key in its comment, in the
 * unit its name ends with (a *.seconds key is kept in ms). */
typedef struct {
    gint32 broker_id;                                     /* broker.id: set per broker */
    gint32 min_insync_replicas;                           /* min.insync.replicas */
    gboolean unclean_leader_election;                     /* unclean.leader.election.enable */
    gint64 replica_lag_time_max_ms;                       /* replica.lag.time.max.ms */
    gint64 replica_fetch_wait_max_ms;                     /* replica.fetch.wait.max.ms */
    gint64 replica_fetch_min_bytes;                       /* replica.fetch.min.bytes */
    gint64 replica_fetch_max_bytes;                       /* replica.fetch.max.bytes */
    gint64 replica_fetch_backoff_ms;                      /* replica.fetch.backoff.ms */
    gint64 replica_socket_timeout_ms;                     /* replica.socket.timeout.ms */
    /* max.incremental.fetch.session.cache.slots: KIP-227's incremental fetch
     * sessions a broker keeps; 0 makes every fetch a full one. */
    gint32 max_incremental_fetch_session_cache_slots;
    gint64 replica_high_watermark_checkpoint_interval_ms; /* replica.high.watermark.checkpoint... */
    gint64 zookeeper_session_timeout_ms;                  /* zookeeper.session.timeout.ms */
    gint32 zookeeper_max_in_flight_requests;              /* zookeeper.max.in.flight.requests */
    /* KRaft mode (broker_new_kraft). */
    gint64 broker_heartbeat_interval_ms;                  /* broker.heartbeat.interval.ms */
    /* broker.session.timeout.ms, a [cluster] key (the controller's session),
     * which the broker's lifecycle manager reads too: the longest backoff
     * between registrations. Set by the cluster. */
    gint64 broker_session_timeout_ms;
    gint64 controller_quorum_request_timeout_ms;          /* controller.quorum.request.timeout.ms */
    gint64 controller_socket_timeout_ms;                  /* controller.socket.timeout.ms */
    gint64 log_retention_check_interval_ms;               /* log.retention.check.interval.ms */
    gint64 log_flush_offset_checkpoint_interval_ms; /* log.flush.offset.checkpoint.interval.ms */
    gboolean auto_leader_rebalance_enable;                /* auto.leader.rebalance.enable */
    gboolean controlled_shutdown_enable;                  /* controlled.shutdown.enable */
    gint32 controlled_shutdown_max_retries;               /* controlled.shutdown.max.retries */
    gint64 controlled_shutdown_retry_backoff_ms;          /* controlled.shutdown.retry.backoff.ms */
    gint64 leader_imbalance_check_interval_ms;     /* leader.imbalance.check.interval.seconds */
    gint32 leader_imbalance_per_broker_percentage; /* leader.imbalance.per.broker.percentage */
    BrokerTruncationMode truncation_mode;          /* ksim.truncation.mode */
    /* ksim.fetch.quiet.partitions: a leader's fetch sessions skip their quiet
     * partitions (replica_fetch.c); off, every fetch reads all, as Kafka's. */
    gboolean fetch_quiet_partitions;
    /* The broker's time to apply one partition state of a LeaderAndIsr
     * request (ksim.leader.and.isr.partition.time) and of an UpdateMetadata
     * request (ksim.update.metadata.partition.time), in ns. */
    gint64 leader_and_isr_partition_ns;
    gint64 update_metadata_partition_ns;
    /* Request handling (request_channel.c): Kafka's SocketServer and
     * KafkaRequestHandlerPool, and the service-time model (ksim keys). */
    gint32 num_network_threads;              /* num.network.threads */
    gint32 queued_max_requests;              /* queued.max.requests */
    gint32 num_io_threads;                   /* num.io.threads */
    BrokerServiceDistribution request_service_distribution; /* ksim.request.service.distribution */
    gint64 request_time_ns;                  /* ksim.request.time: per request, I/O thread */
    gint64 request_batch_time_ns;            /* ksim.request.batch.time: per batch/partition */
    gint64 request_mib_time_ns;              /* ksim.request.mib.time: per MiB produced */
    gint64 network_request_time_ns;          /* ksim.network.request.time: per request/response */
    gint64 network_mib_time_ns;              /* ksim.network.mib.time: per MiB read or written */
    /* The group coordinator (group_coord.h). */
    gint32 offsets_topic_num_partitions;     /* offsets.topic.num.partitions */
    gint16 offsets_topic_replication_factor; /* offsets.topic.replication.factor */
    gint64 offsets_commit_timeout_ms;        /* offsets.commit.timeout.ms */
    gint64 group_initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms */
    gint64 group_min_session_timeout_ms;     /* group.min.session.timeout.ms */
    gint64 group_max_session_timeout_ms;     /* group.max.session.timeout.ms */
    /* KIP-848 groups (group_coord_consumer.c). */
    gint64 group_consumer_session_timeout_ms;    /* group.consumer.session.timeout.ms */
    gint64 group_consumer_heartbeat_interval_ms; /* group.consumer.heartbeat.interval.ms */
    gint32 group_consumer_assignor_default;      /* group.consumer.assignors' first */
    guint32 group_consumer_assignors;            /* group.consumer.assignors: 1 << kind each */
    /* The transaction coordinator (txn_coord.h), transaction.state.log.*
     * and transaction.max.timeout.ms. */
    gint32 transaction_state_log_num_partitions;
    gint16 transaction_state_log_replication_factor;
    gint32 transaction_state_log_min_isr;
    gint64 transaction_max_timeout_ms;
    /* transaction.abort.timed.out.transaction.cleanup.interval.ms */
    gint64 transaction_abort_timed_out_transaction_cleanup_interval_ms;
    /* transaction.partition.verification.enable (KIP-890 part 1, Kafka
     * 3.6+): a leader verifies a producer's first transactional batch with
     * the transaction coordinator before it appends it. */
    gboolean transaction_partition_verification_enable;
    /* The cluster's finalized transaction.version feature level (KIP-890
     * part 2 at 2: an epoch bump per transaction, partitions added by the
     * leader's verification); set by the cluster, not from a broker key. */
    gint32 transaction_version;
    PlogConfig log; /* the log.* keys */
} BrokerConfig;

/* Per-topic settings that override the broker's. */
typedef struct {
    gint32 min_insync_replicas;
    gboolean unclean_leader_election;
    PlogConfig log;
} TopicConfig;

/* The topic config a topic gets when it sets nothing: the broker's values. */
void topic_config_from_broker(TopicConfig *topic, const BrokerConfig *broker);

#endif
