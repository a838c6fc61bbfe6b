/*
 * broker_config: a broker's configuration and a topic's overrides of it, with
 * Kafka's key names and defaults (KafkaConfig, LogConfig). It has a file of
 * its own so that the configuration and the broker process can change apart;
 * broker.h includes it.
 */
#ifndef BROKER_CONFIG_H
#define BROKER_CONFIG_H

#include <glib.h>

#include "plog.h"

typedef enum {
    /* The seeds' design: a replica that becomes follower, or restarts,
     * truncates its log to its high watermark. */
    BROKER_TRUNCATE_HW = 0,
    /* KIP-101/KIP-279: truncate to the end offset of the follower's latest
     * epoch as the leader knows it (OffsetsForLeaderEpoch). */
    BROKER_TRUNCATE_LEADER_EPOCH,
} BrokerTruncationMode;

/* Broker configuration; field names follow Kafka's keys. */
typedef struct {
    gint32 broker_id;
    gint32 min_insync_replicas;       /* min.insync.replicas = 1 */
    gboolean unclean_leader_election; /* unclean.leader.election.enable = false */
    gint64 replica_lag_time_max_ms;   /* 30000 */
    gint64 replica_fetch_wait_max_ms; /* 500 */
    gint64 replica_fetch_min_bytes;   /* 1 */
    gint64 replica_fetch_max_bytes;   /* 1048576 */
    gint64 replica_fetch_backoff_ms;  /* 1000 */
    gint64 replica_socket_timeout_ms; /* 30000 */
    gint64 replica_high_watermark_checkpoint_interval_ms; /* 5000 */
    gint64 zookeeper_session_timeout_ms;                  /* 18000 */
    gint64 controller_socket_timeout_ms;                  /* 30000 */
    gint64 log_retention_check_interval_ms;               /* 300000 */
    gboolean auto_leader_rebalance_enable;                /* auto.leader.rebalance.enable = true */
    gint64 leader_imbalance_check_interval_ms; /* leader.imbalance.check.interval.seconds = 300 */
    gint32 leader_imbalance_per_broker_percentage; /* leader.imbalance.per.broker.percentage = 10 */
    BrokerTruncationMode truncation_mode;          /* ksim.truncation.mode = hw */
    /* The group coordinator (group_coord.h). */
    gint32 offsets_topic_num_partitions;     /* offsets.topic.num.partitions = 50 */
    gint16 offsets_topic_replication_factor; /* offsets.topic.replication.factor = 3 */
    gint64 offsets_commit_timeout_ms;        /* offsets.commit.timeout.ms = 5000 */
    gint64 group_initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms = 3000 */
    gint64 group_min_session_timeout_ms;     /* group.min.session.timeout.ms = 6000 */
    gint64 group_max_session_timeout_ms;     /* group.max.session.timeout.ms = 1800000 */
    /* The transaction coordinator (txn_coord.h). */
    gint32 transaction_state_log_num_partitions;     /* = 50 */
    gint16 transaction_state_log_replication_factor; /* = 3 */
    gint32 transaction_state_log_min_isr;            /* = 2 */
    gint64 transaction_max_timeout_ms;               /* transaction.max.timeout.ms = 900000 */
    /* transaction.abort.timed.out.transaction.cleanup.interval.ms = 10000 */
    gint64 transaction_abort_timed_out_transaction_cleanup_interval_ms;
    PlogConfig log; /* log.* defaults */
} BrokerConfig;

/* Per-topic settings that override the broker's. */
typedef struct {
    gint32 min_insync_replicas;
    gboolean unclean_leader_election;
    PlogConfig log;
} TopicConfig;

/* Kafka's defaults. */
void broker_config_init(BrokerConfig *config);
/* The topic config a topic gets when it sets nothing: the broker's values. */
void topic_config_from_broker(TopicConfig *topic, const BrokerConfig *broker);

#endif
