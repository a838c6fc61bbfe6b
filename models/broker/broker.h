/*
 * broker: a Kafka broker on a simulated node — registration with the
 * coordination node, the replica manager (partitions, logs, leader and follower
 * roles, follower fetch, ISR, high watermark, truncation), produce and fetch
 * handling with their purgatories, the HW checkpoint, the group coordinator
 * (group_coord.h), the transaction coordinator (txn_coord.h) and the partition
 * side of transactions (markers, LSO, read_committed fetches), and, when it wins the /controller znode, the controller
 * (controller.c).
 *
 * A Broker object lives for the whole run; its in-memory state exists only
 * while its process runs: a crash frees it, a restart rebuilds it from the
 * node's disk (logs, HW checkpoint), registers again and waits for the
 * controller's LeaderAndIsr.
 */
#ifndef BROKER_H
#define BROKER_H

#include <glib.h>

#include "history.h"
#include "kafka_proto.h"
#include "plog.h"
#include "sim_world.h"

typedef struct Broker Broker;

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
    gint32 min_insync_replicas;            /* min.insync.replicas = 1 */
    gboolean unclean_leader_election;      /* unclean.leader.election.enable = false */
    gint64 replica_lag_time_max_ms;        /* 30000 */
    gint64 replica_fetch_wait_max_ms;      /* 500 */
    gint64 replica_fetch_min_bytes;        /* 1 */
    gint64 replica_fetch_max_bytes;        /* 1048576 */
    gint64 replica_fetch_backoff_ms;       /* 1000 */
    gint64 replica_socket_timeout_ms;      /* 30000 */
    gint64 replica_high_watermark_checkpoint_interval_ms; /* 5000 */
    gint64 zookeeper_session_timeout_ms;   /* 18000 */
    gint64 controller_socket_timeout_ms;   /* 30000 */
    gint64 log_retention_check_interval_ms; /* 300000 */
    gboolean auto_leader_rebalance_enable; /* auto.leader.rebalance.enable = true */
    gint64 leader_imbalance_check_interval_ms; /* leader.imbalance.check.interval.seconds = 300 */
    gint32 leader_imbalance_per_broker_percentage; /* leader.imbalance.per.broker.percentage = 10 */
    BrokerTruncationMode truncation_mode;  /* ksim.truncation.mode = hw */
    /* The group coordinator (group_coord.h). */
    gint32 offsets_topic_num_partitions;   /* offsets.topic.num.partitions = 50 */
    gint16 offsets_topic_replication_factor; /* offsets.topic.replication.factor = 3 */
    gint64 offsets_commit_timeout_ms;      /* offsets.commit.timeout.ms = 5000 */
    gint64 group_initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms = 3000 */
    gint64 group_min_session_timeout_ms;   /* group.min.session.timeout.ms = 6000 */
    gint64 group_max_session_timeout_ms;   /* group.max.session.timeout.ms = 1800000 */
    /* The transaction coordinator (txn_coord.h). */
    gint32 transaction_state_log_num_partitions;     /* = 50 */
    gint16 transaction_state_log_replication_factor; /* = 3 */
    gint32 transaction_state_log_min_isr;            /* = 2 */
    gint64 transaction_max_timeout_ms;               /* transaction.max.timeout.ms = 900000 */
    /* transaction.abort.timed.out.transaction.cleanup.interval.ms = 10000 */
    gint64 transaction_abort_timed_out_transaction_cleanup_interval_ms;
    PlogConfig log;                        /* log.* defaults */
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

/* Hooks through which a cluster observes brokers to check invariants; they
 * must not change anything a broker sees. All may be NULL. */
typedef struct {
    void (*became_leader)(void *user_data, gint32 broker_id, const KTopicPartition *tp,
                          gint32 leader_epoch, gint64 leo);
    void (*hw_changed)(void *user_data, gint32 broker_id, const KTopicPartition *tp,
                       gboolean is_leader, gint32 leader_epoch, gint64 old_hw, gint64 new_hw);
    /* acks=all answered: offsets [base, end) were acknowledged by `broker_id`
     * with `isr` as its ISR. */
    void (*acked)(void *user_data, gint32 broker_id, const KTopicPartition *tp, gint64 base,
                  gint64 end, const gint32 *isr, guint n_isr, gint16 acks);
    void *user_data;
} BrokerObserver;

/* Creates the broker's node and starts its process. `zk_node` is the
 * coordination node. `history` and `observer` may be NULL. */
Broker *broker_new(SimWorld *world, const char *name, const BrokerConfig *config,
                   SimNodeId zk_node, History *history, const BrokerObserver *observer);
/* Frees the broker (its node stays in the world, which must be freed after). */
void broker_free(Broker *broker);

SimNodeId broker_node(const Broker *broker);
gint32 broker_id(const Broker *broker);
const BrokerConfig *broker_config(const Broker *broker);
/* Sets a topic's config, as the topic's config znode would. */
void broker_set_topic_config(Broker *broker, const char *topic, const TopicConfig *config);

/* Read-only views for tests, the cluster's invariant checks and final state. */
gboolean broker_running(const Broker *broker);
gboolean broker_is_controller(const Broker *broker);
gint32 broker_controller_epoch(const Broker *broker);

typedef struct {
    gboolean present;
    gboolean is_leader;
    gint32 leader;
    gint32 leader_epoch;
    gint64 log_start;
    gint64 leo;
    gint64 hw;
    /* The last stable offset: min(HW, the first offset of the oldest open
     * transaction); what read_committed consumers read below. */
    gint64 lso;
    guint open_transactions; /* producers with an open transaction in the log */
    guint n_isr;
    gint32 isr[KAFKA_REPLICAS_MAX];
} BrokerPartitionInfo;

/* Fills `info` for the broker's replica of topic-partition; present is FALSE
 * when the broker is down or has no such replica. */
void broker_partition_info(const Broker *broker, const char *topic, gint32 partition,
                           BrokerPartitionInfo *info);
/* The replica's log, or NULL. (transfer none) */
Plog *broker_partition_log(const Broker *broker, const char *topic, gint32 partition);
/* The topic-partitions the broker holds a replica of, sorted. (transfer full) */
GArray *broker_partitions(const Broker *broker); /* KTopicPartition */

/* How many partitions of `topic` the broker's metadata cache (what it
 * answers Metadata requests from) holds. */
guint broker_metadata_partitions(const Broker *broker, const char *topic);

void broker_check_invariants(const Broker *broker);
/* Checks the invariants of every partition log the broker holds
 * (plog_check_invariants): apart from broker_check_invariants because they
 * cost O(each log's index), too much to run after every event. */
void broker_check_logs(const Broker *broker);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Broker, broker_free)

#endif
