/*
 * broker: a Kafka broker on a simulated node — registration with the
 * coordination node, the replica manager (partitions, logs, leader and follower
 * roles, follower fetch, ISR, high watermark, truncation), produce and fetch
 * handling with their purgatories, the HW checkpoint, the group coordinator
 * (group_coord.h), the transaction coordinator (txn_coord.h) and the partition
 * side of transactions (markers, LSO, read_committed fetches), and, when it wins the /controller znode, the controller
 * (controller.c).
 *
 * In KRaft mode it registers with, heartbeats to and replays the metadata
 * log of the controller quorum instead (broker_kraft.h); in combined mode
 * (broker_new_combined) its process also runs one of the quorum's voters.
 *
 * A Broker object lives for the whole run; its in-memory state exists only
 * while its process runs: a crash frees it, a restart rebuilds it from the
 * node's disk (logs, HW checkpoint), registers again and waits for the
 * controller's LeaderAndIsr.
 */
#ifndef BROKER_H
#define BROKER_H

#include <glib.h>

#include "broker_config.h"
#include "history.h"
#include "kafka_proto.h"
#include "kraft_records.h"
#include "metadata_pool.h"
#include "raft_node.h"
#include "plog.h"
#include "sim_world.h"

typedef struct Broker Broker;

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
    /* KRaft: a request of `broker_id` to controller `controller_id` failed
     * (its connection broke, or it went unanswered for
     * controller.quorum.request.timeout.ms): the broker noticed it cannot
     * reach that controller. */
    void (*controller_unreachable)(void *user_data, gint32 broker_id, gint32 controller_id);
    void *user_data;
} BrokerObserver;

/* Creates the broker's node and starts its process. `zk_node` is the
 * coordination node. `history` and `observer` may be NULL. */
Broker *broker_new(SimWorld *world, const char *name, const BrokerConfig *config,
                   SimNodeId zk_node, History *history, const BrokerObserver *observer);
/* The same in KRaft mode: the broker registers with, heartbeats to and
 * replays the metadata log of the controller quorum `voters` (copied),
 * whose records are in `store` (shared, outliving the broker); no
 * coordination node. */
Broker *broker_new_kraft(SimWorld *world, const char *name, const BrokerConfig *config,
                         const RaftVoter *voters, guint n_voters, KraftRecordStore *store,
                         History *history, const BrokerObserver *observer);
/* The same in combined mode (process.roles = broker,controller): the
 * broker's process also runs voter `config->broker_id` of the quorum
 * (raft_node_new_hosted with `raft`), one of `voters`, whose node is the
 * broker's own. The broker replays that voter's log up to its high
 * watermark, as Kafka's combined node's metadata loader follows its one
 * KafkaRaftClient, rather than fetching it as an observer; the metadata log
 * is on the broker's disk, and a crash, pause or power loss stops both
 * roles. The caller sets the voter's quorum (raft_node_set_voters), builds
 * the controller on it (broker_raft_node) and starts it. */
Broker *broker_new_combined(SimWorld *world, const char *name, const BrokerConfig *config,
                            const RaftVoter *voters, guint n_voters, const RaftConfig *raft,
                            KraftRecordStore *store, History *history,
                            const BrokerObserver *observer);
/* The voter in a combined broker's process, NULL otherwise. (transfer none) */
RaftNode *broker_raft_node(const Broker *broker);
/* Frees the broker (its node stays in the world, which must be freed after). */
void broker_free(Broker *broker);
/* Makes the broker's metadata cache keep its partition states in `pool`
 * (a reference is taken), shared with the other brokers given it: they hold
 * one copy of each state between them (metadata_pool.h). Call before the
 * broker caches any state. */
void broker_share_metadata_pool(Broker *broker, MetadataPool *pool);
/* The pool the broker's metadata cache keeps its states in. (transfer none) */
MetadataPool *broker_metadata_pool(const Broker *broker);

SimNodeId broker_node(const Broker *broker);
gint32 broker_id(const Broker *broker);
const BrokerConfig *broker_config(const Broker *broker);
/* Sets a topic's config, as the topic's config znode would; the topic's replicas
 * here see the change (they share the broker's copy). */
void broker_set_topic_config(Broker *broker, const char *topic, const TopicConfig *config);

/* Stops the broker cleanly, as SIGTERM does (broker_shutdown.c): a
 * controlled shutdown when controlled.shutdown.enable, then flushed logs,
 * the HW checkpoint, the coordination session closed, and the node down.
 * Does nothing if it is down or already stopping. */
void broker_shutdown(Broker *broker);
/* TRUE from broker_shutdown until the node is down. */
gboolean broker_shutting_down(const Broker *broker);

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
    /* How long the oldest open transaction has been open, by this broker's
     * clock against its first batch's timestamp (Kafka's find-hanging
     * transactions tool reads the same from DescribeProducers); -1: none. */
    gint64 txn_open_ms;
    gint64 txn_max_timeout_ms; /* the broker's transaction.max.timeout.ms */
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
/* The incremental fetch sessions (KIP-227) the broker's cache holds as a
 * leader; 0 while it is down. */
guint broker_fetch_sessions(const Broker *broker);

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
