/*
 * cluster: a whole simulated Kafka cluster in one world — the coordination
 * node, N brokers and an admin client that creates topics the way Kafka's
 * `kafka-topics.sh --zookeeper` did: by writing the topic's replica assignment
 * (Kafka's AdminUtils.assignReplicasToBrokers) to /brokers/topics/<name>, for
 * the controller to pick up.
 *
 * It also watches the brokers, without touching what they see, for the
 * invariants the issue lists, and records each breach in the history:
 *  1. at most one leader per partition per leader epoch;
 *  2. a new leader is in its ISR;
 *  3. a leader's HW never decreases during its term;
 *  4. a record acknowledged with acks=all is on every ISR member when acked;
 *  5. replicas agree on every record below both their HWs (checked by
 *     cluster_check_agreement, e.g. at the end of a run).
 * At the end of a run cluster_record_final_state adds every replica's log to
 * the history for the checker; replicas whose logs are byte-identical share
 * one records array there.
 */
#ifndef CLUSTER_H
#define CLUSTER_H

#include <glib.h>

#include "broker.h"
#include "kraft_controller.h"
#include "zk_server.h"
#include "history.h"
#include "sim_world.h"

typedef struct Cluster Cluster;

/* The GError domain of the cluster's refusals (topics, placements). */
#define CLUSTER_ERROR (g_quark_from_static_string("ksim-cluster-error-quark"))

/* The most brokers a cluster has: the registry's `brokers` bound. Nothing in
 * the models limits it further (ISRs and live sets are sets, not masks). */
#define CLUSTER_BROKERS_MAX 1000

/* Each field is a [cluster] key (brokers, network.latency,
 * network.bandwidth, disk.fsync.latency, and the broker keys), whose
 * defaults are the key registry's: kconfig_bind_cluster_defaults. */
typedef struct {
    guint n_brokers;
    BrokerConfig broker; /* broker_id is set per broker (1..n) */
    SimDist network_latency;
    gint64 network_bandwidth_bytes_per_s; /* 0: unlimited */
    SimDist fsync_latency;
    /* Each broker's own settings, as each Kafka broker has its own
     * server.properties: NULL, every broker takes `broker`; else n_brokers
     * configs, broker i+1's at index i (broker_id is set by the cluster).
     * Copied by cluster_new. */
    const BrokerConfig *brokers;
    /* broker.rack: NULL, no broker has a rack; else n_brokers entries,
     * broker i+1's at index i, each a rack name or NULL (no rack). Copied by
     * cluster_new; the admin's replica placement reads them. */
    const char *const *racks;
    gint64 disk_bandwidth_bytes_per_s; /* 0: unlimited */
    gint64 disk_dirty_limit_bytes;     /* 0: writes never wait */
    gint64 disk_page_cache_bytes;      /* 0: every byte stays cached */
    /* The kernel's flusher (sim_disk_set_writeback): a file's writes become
     * durable once the oldest is disk_dirty_expire_ns old, at the flusher's
     * next wake-up (every disk_dirty_writeback_ns); 0: never. */
    gint64 disk_dirty_expire_ns;
    gint64 disk_dirty_writeback_ns;
    /* The coordination node's service time (zookeeper.request.time,
     * zookeeper.byte.time): ZkServerConfig.request_ns and byte_ns. */
    gint64 zk_request_ns;
    gint64 zk_byte_ns;
    /* metadata.mode: FALSE ZooKeeper (the brokers elect a controller
     * through the coordination node), TRUE KRaft (a quorum of `controllers`
     * dedicated controller nodes, ids KRAFT_CONTROLLER_ID_BASE + 0..n-1,
     * runs the metadata log; the coordination node is then idle). */
    gboolean kraft;
    /* KRaft: process.roles = broker,controller (combined mode): the voters
     * run inside brokers (broker_new_combined) rather than on dedicated
     * controller nodes, and their node.ids are those brokers' ids. */
    gboolean combined;
    /* The quorum's size (`controllers`, or the voters that
     * controller.quorum.voters names), at most RAFT_VOTERS_MAX. */
    guint n_controllers;
    /* controller.quorum.voters: the voters' node.ids, n_controllers of them,
     * distinct; all 0 for the default: the dedicated controllers
     * KRAFT_CONTROLLER_ID_BASE + 0..n-1, or in combined mode brokers 1..n.
     * Combined, each is a broker id (1..n_brokers); dedicated, none is. */
    gint32 voter_ids[RAFT_VOTERS_MAX];
    RaftConfig raft;                   /* controller.quorum.* */
    gint64 broker_session_timeout_ms;  /* broker.session.timeout.ms */
    /* metadata.log.max.record.bytes.between.snapshots,
     * metadata.log.max.snapshot.interval.ms */
    gint64 snapshot_max_new_record_bytes;
    gint64 snapshot_max_interval_ms;
    gint32 elr_version;                /* eligible.leader.replicas.version */
    gboolean unclean_recovery_manager_enabled; /* unclean.recovery.manager.enabled */
    gint32 unclean_recovery_strategy;  /* unclean.recovery.strategy: KraftUncleanRecoveryStrategy */
    gint64 unclean_recovery_timeout_ns; /* unclean.recovery.timeout.ms */
    gint32 transaction_version;        /* transaction.version: every broker's */
} ClusterConfig;

/* The node.id of the first dedicated KRaft controller (Kafka's own
 * examples number controllers apart from brokers). */
#define KRAFT_CONTROLLER_ID_BASE 3000

/* Kafka's RackAwareMode (kafka.admin.RackAwareMode, 3.6), how the admin
 * treats racks when it places a topic's replicas:
 * ENFORCED (kafka-topics' default): rack-aware when every broker has a rack,
 * rack-unaware when none has, refused when only some have; SAFE (the
 * brokers' auto-creation): rack-aware when every broker has a rack, else
 * rack-unaware; DISABLED (kafka-topics --disable-rack-aware): rack-unaware. */
typedef enum {
    CLUSTER_RACK_AWARE_ENFORCED,
    CLUSTER_RACK_AWARE_SAFE,
    CLUSTER_RACK_AWARE_DISABLED,
} ClusterRackAwareMode;

/* AdminZkClient.getBrokerMetadatas's check: FALSE with Kafka's message
 * (naming `topic`) when `mode` is ENFORCED and some but not all of the
 * `n_brokers` brokers have a rack (`racks` as in ClusterConfig; NULL: none
 * has). */
gboolean cluster_check_racks(const char *topic, const char *const *racks, guint n_brokers,
                             ClusterRackAwareMode mode, GError **error);

/* Kafka's AdminUtils.assignReplicasToBrokers (3.6) over brokers 1..n_brokers:
 * partitions `from` .. `to`-1 with `rf` replicas each, from the random
 * `start` and `shift` (each in 0..n_brokers-1) Kafka draws; rack-aware when
 * `racks` is non-NULL (every entry non-NULL), else rack-unaware. Appends one
 * GArray of gint32 per partition to `assignment`. */
void cluster_place_replicas(guint n_brokers, const char *const *racks, guint from, guint to,
                            guint rf, guint start, guint shift, GPtrArray *assignment);
/* AdminUtils.getRackAlternatedBrokerList: the brokers 1..n_brokers (each
 * with a rack) taking one broker from each rack in turn, the racks in name
 * order and each rack's brokers by id. Fills `out` (n_brokers entries). */
void cluster_rack_alternated_brokers(guint n_brokers, const char *const *racks, gint32 *out);

/* Builds the nodes in `world`: the coordination node "zk", brokers "broker-1"
 * ... "broker-N" with ids 1..N, and the admin node; in KRaft mode the
 * dedicated controllers "controller-ID" first, or in combined mode the
 * voters inside the brokers named by ClusterConfig.voter_ids.
 *
 * A controller failover (HISTORY_EVENT_CONTROLLER_LOST, reports/failover.c)
 * starts in ZooKeeper mode when the controller's session ends, and in KRaft
 * mode when a voter stands for election against the active controller it
 * knew. A quorum of one voter has nobody to stand: its failover starts when
 * a broker first notices it cannot reach the controller (a heartbeat or
 * metadata fetch whose connection broke or that timed out) while no
 * controller is active, as Kafka's brokers see it. */
Cluster *cluster_new(SimWorld *world, const ClusterConfig *config, History *history);
void cluster_free(Cluster *cluster);

/* Creates a topic; `config` NULL takes the brokers' defaults. Fails with a
 * message for a bad name, too many replicas, or an existing topic. */
/* The most bytes the assignment znode of a topic (/brokers/topics/NAME) of
 * `partitions` partitions with `replication_factor` replicas each takes on a
 * cluster of `n_brokers` brokers (ids 1..n_brokers). */
guint64 cluster_topic_znode_bytes_max(guint partitions, guint replication_factor, guint n_brokers);
/* ZooKeeper's limit on a znode's data (jute.maxbuffer, 1 MiB): a topic whose
 * assignment znode could exceed it is refused, as Kafka's admin client fails
 * to create it. */
guint64 cluster_znode_bytes_limit(void);
gboolean cluster_create_topic(Cluster *cluster, const char *name, guint partitions,
                              guint replication_factor, const TopicConfig *config, GError **error);
/* cluster_create_topic with the admin's rack-aware mode (cluster_create_topic
 * is ENFORCED, as kafka-topics --create); partitions the topic gains later
 * are placed the same way. Fails, as Kafka's admin does, for ENFORCED when
 * only some brokers have a rack. */
gboolean cluster_create_topic_rack_mode(Cluster *cluster, const char *name, guint partitions,
                                        guint replication_factor, const TopicConfig *config,
                                        ClusterRackAwareMode mode, GError **error);
/* Creates a topic with the replicas of each partition given, as
 * kafka-topics --replica-assignment takes them: `assignment` holds one
 * GArray of gint32 broker ids per partition, the first the preferred
 * leader. Every partition needs as many distinct, existing brokers. */
/* Kafka's AdminUtils.validateReplicaAssignment for a cluster of `n_brokers`
 * (ids 1..n_brokers): at least one partition, every partition as many
 * replicas, each an existing broker, none twice. */
gboolean cluster_check_assignment(const char *name, const GPtrArray *assignment, guint n_brokers,
                                  GError **error);
gboolean cluster_create_topic_assigned(Cluster *cluster, const char *name,
                                       const GPtrArray *assignment, const TopicConfig *config,
                                       GError **error);
/* How the partitions a topic gains later are placed (kafka-topics --alter
 * with or without --disable-rack-aware); a topic starts with the mode it
 * was created with, ENFORCED for cluster_create_topic_assigned. */
void cluster_set_topic_rack_mode(Cluster *cluster, const char *name, ClusterRackAwareMode mode);
/* Grows a topic to `partitions`; shrinking is refused, as Kafka refuses it,
 * and so is an ENFORCED placement when only some brokers have a rack. */
gboolean cluster_add_partitions(Cluster *cluster, const char *name, guint partitions,
                                GError **error);
guint cluster_partition_count(const Cluster *cluster, const char *topic);
/* The assigned replicas of a partition (broker ids), or NULL. (transfer none) */
const GArray *cluster_replicas(const Cluster *cluster, const char *topic, gint32 partition);

guint cluster_broker_count(const Cluster *cluster);
/* broker.rack of a broker (1..N), or NULL when it has none. (transfer none) */
const char *cluster_broker_rack(const Cluster *cluster, gint32 broker_id);
/* Brokers by id, 1..N. (transfer none) */
Broker *cluster_broker(const Cluster *cluster, gint32 broker_id);
ZkServer *cluster_zk_server(const Cluster *cluster);
SimNodeId cluster_zk_node(const Cluster *cluster);
/* Nodes a client can bootstrap from: the brokers' nodes, by id. */
GArray *cluster_bootstrap_nodes(const Cluster *cluster); /* SimNodeId, transfer full */

/* The running broker that believes it leads the partition with the highest
 * leader epoch, or -1. */
gint32 cluster_leader(const Cluster *cluster, const char *topic, gint32 partition);
/* A running follower of the partition (the first in assignment order), or -1. */
gint32 cluster_follower(const Cluster *cluster, const char *topic, gint32 partition);
/* The `nth` (1-based) running follower of the partition: its running
 * replicas other than the current leader (cluster_leader), in assignment
 * order; -1 when it has fewer. cluster_follower is nth 1. */
gint32 cluster_follower_nth(const Cluster *cluster, const char *topic, gint32 partition,
                            guint nth);
/* The running broker that believes it is the controller with the highest
 * epoch, or -1; in KRaft's combined mode the broker whose process runs the
 * active controller (cluster_active_controller_node), -1 in dedicated
 * mode. */
gint32 cluster_controller(const Cluster *cluster);
/* TRUE when the cluster runs in KRaft mode (ClusterConfig.kraft). */
gboolean cluster_kraft(const Cluster *cluster);
/* KRaft: the node of the active controller, of the highest epoch if two
 * believe they are; SIM_NODE_NONE when none is (or in ZooKeeper mode). */
SimNodeId cluster_active_controller_node(const Cluster *cluster);
/* KRaft: the controller quorum's nodes, in node.id order (transfer
 * container); empty in ZooKeeper mode. In combined mode they are brokers'
 * nodes. */
GArray *cluster_controller_nodes(const Cluster *cluster);
/* KRaft: the node of controller `node_id`; SIM_NODE_NONE when none has it. */
SimNodeId cluster_controller_node(const Cluster *cluster, gint32 node_id);
/* KRaft: a running voter that is not the active controller, the lowest
 * node.id of them; SIM_NODE_NONE when there is none. */
SimNodeId cluster_quorum_follower_node(const Cluster *cluster);

/* Checks invariant 5 across running replicas; records breaches. */
void cluster_check_agreement(Cluster *cluster);
/* Adds every replica's final state to the history. */
void cluster_record_final_state(Cluster *cluster);
/* Both at once, at the end of a run: each distinct log is read once. */
void cluster_finish(Cluster *cluster);
guint cluster_violations(const Cluster *cluster);

/* NULL when every partition has a leader whose ISR holds all its replicas;
 * otherwise a description of what is missing, partition by partition.
 * (transfer full) */
char *cluster_unconverged(const Cluster *cluster);

/* Runs the world until every partition has a leader and its ISR holds all
 * replicas, or `timeout_ns` passes. TRUE when settled. */
gboolean cluster_wait_settled(Cluster *cluster, gint64 timeout_ns);

void cluster_check_invariants(const Cluster *cluster);
/* Checks every broker's partition logs (broker_check_logs). */
void cluster_check_logs(const Cluster *cluster);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Cluster, cluster_free)

#endif
