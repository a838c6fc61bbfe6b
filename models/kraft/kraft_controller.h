/*
 * kraft_controller: the KRaft controller (Kafka's QuorumController with its
 * ClusterControlManager, BrokerHeartbeatManager and ReplicationControlManager;
 * Apache Kafka 4.0, commit 1eb7644 of trunk) running on one voter of the
 * metadata quorum (raft_node.h), on a dedicated controller node or, in
 * combined mode, inside a broker's process (raft_node_new_hosted; its
 * timers run on that node, so a pause of the broker is the controller's
 * too). Every voter runs one; the quorum's leader is
 * the active controller once its LeaderChange record is committed and it
 * has replayed the log up to it (KafkaRaftClient fires handleLeaderChange
 * for the local leader only then), and the others are standbys that replay
 * what is committed.
 *
 * The active controller:
 *  - registers brokers (BrokerRegistration → a RegisterBroker record; the
 *    registration is fenced, its broker epoch the record's offset; a broker
 *    id whose previous incarnation still has a live session is refused with
 *    DUPLICATE_BROKER_REGISTRATION). A new incarnation's partitions are
 *    handled as an unclean shutdown's: it leaves every ISR and leadership
 *    (handleBrokerUncleanShutdown without ELR);
 *  - keeps each broker's session from its heartbeats, in memory only (a new
 *    active controller starts every session afresh): a fenced broker whose
 *    heartbeat reports a metadata offset at or past its registration is
 *    unfenced (BrokerHeartbeatManager.calculateNextBrokerState), and leaders
 *    are elected where it is the only eligible replica (handleBrokerUnfenced);
 *    an unfenced broker silent for broker.session.timeout.ms is fenced, one
 *    at a time (maybeFenceOneStaleBroker), and leaves every ISR and
 *    leadership (handleBrokerFenced, KIP-841);
 *  - elects leaders as PartitionChangeBuilder does: the current leader if
 *    still eligible, else the first replica in assignment order that is in
 *    the target ISR and active, else (unclean.leader.election.enable) the
 *    first active replica, which becomes the whole ISR; else no leader. An
 *    ISR never empties: without a leader the last member stays;
 *  - changes ISRs on AlterPartition from a partition's leader, with Kafka's
 *    checks in order (validateAlterPartitionData): STALE_BROKER_EPOCH,
 *    NOT_CONTROLLER for epochs newer than its own, FENCED_LEADER_EPOCH,
 *    INVALID_REQUEST (not the leader, an ISR without it or outside the
 *    replicas), INVALID_UPDATE_VERSION, INELIGIBLE_REPLICA (a fenced member);
 *  - hands out producer id blocks of 1000 (AllocateProducerIds, a
 *    ProducerIds record: ProducerIdControlManager);
 *  - creates the cluster's topics once every assigned replica is active (an
 *    administrator's CreateTopics after the brokers are up), as Topic and
 *    Partition records with the full ISR and the first replica leading;
 *  - creates the internal topics brokers ask for (CreateTopics from
 *    AutoTopicCreationManager), placed by StripedReplicaPlacer
 *    (kraft_placer.h), refused with TOPIC_ALREADY_EXISTS or
 *    INVALID_REPLICATION_FACTOR as Kafka refuses them.
 * A request is answered once the records it wrote are committed; a
 * controller that stops being active drops what it has not answered, and the
 * brokers ask again (Kafka fails them with NOT_CONTROLLER).
 *
 *  - grants controlled shutdowns (BrokerHeartbeatManager
 *    .calculateNextBrokerState): a heartbeat wanting to shut down from a
 *    broker that leads something puts it in CONTROLLED_SHUTDOWN (a
 *    BrokerRegistrationChange record, its leaderships and ISR memberships
 *    moved); once it leads nothing and every unfenced broker's heartbeat has
 *    reported that offset, SHUTDOWN_NOW fences it and tells it to go.
 *  - with eligible.leader.replicas.version = 1, keeps each partition's
 *    eligible leader replicas (KIP-966, see build_change) and elects from
 *    them when the ISR is empty. When ISR and ELR are both empty:
 *    - with unclean.recovery.manager.enabled = false (Kafka 4.0), the
 *      partition's last known leader (LastKnownElr, the leader it had when
 *      its ISR emptied) is elected, unclean, once it is active again
 *      (PartitionChangeBuilder.canElectLastKnownLeader), else the first
 *      active replica if unclean.leader.election.enable;
 *    - with it true (KIP-966's unclean recovery manager, which came to
 *      Kafka after 4.0), LastKnownElr keeps the replicas last known
 *      eligible, unclean.leader.election.enable is not read, and
 *      unclean.recovery.strategy decides: None leaves the partition
 *      offline; Aggressive asks every active replica for its log
 *      (GetReplicaLogInfo) and elects the longest (highest last written
 *      leader epoch, then log end offset) once they have all answered;
 *      Balanced also waits for every LastKnownElr member (every replica
 *      when it is empty) to answer; either waits at most
 *      unclean.recovery.timeout.ms, then elects the longest log heard of.
 *      The recovery is the active controller's, in memory: a new active
 *      controller starts it again.
 * Not modelled yet: preferred-leader balancing, the periodic unclean
 * election check (unclean.leader.election.interval.ms: elections are tried
 * when a broker's state changes), the controller's own processing time
 * (events are handled at once).
 * Snapshots: every controller writes snapshots of its committed image and
 * starts from the latest after a restart (kraft_snapshot.h).
 */
#ifndef KRAFT_CONTROLLER_H
#define KRAFT_CONTROLLER_H

#include <glib.h>

#include "history.h"
#include "kraft_records.h"
#include "raft_node.h"

typedef struct KraftController KraftController;

/* KIP-966's unclean.recovery.strategy. */
typedef enum {
    KRAFT_UNCLEAN_RECOVERY_BALANCED,
    KRAFT_UNCLEAN_RECOVERY_AGGRESSIVE,
    KRAFT_UNCLEAN_RECOVERY_NONE,
} KraftUncleanRecoveryStrategy;

typedef struct {
    gint64 session_timeout_ns; /* broker.session.timeout.ms: 9000 */
    gboolean elr_enabled;      /* eligible.leader.replicas.version = 1 (KIP-966) */
    /* KIP-966's unclean recovery (only with elr_enabled):
     * unclean.recovery.manager.enabled (false), unclean.recovery.strategy
     * (Balanced), unclean.recovery.timeout.ms (300000). */
    gboolean unclean_recovery_manager_enabled;
    KraftUncleanRecoveryStrategy unclean_recovery_strategy;
    gint64 unclean_recovery_timeout_ns;
    /* Snapshots of the committed image (kraft_snapshot.h):
     * metadata.log.max.record.bytes.between.snapshots (20 MiB) and
     * metadata.log.max.snapshot.interval.ms (1 hour; 0: never by time). */
    gint64 snapshot_max_new_record_bytes;
    gint64 snapshot_max_interval_ns;
} KraftControllerConfig;

void kraft_controller_config_init(KraftControllerConfig *cfg);

/* A controller on `raft` (which it becomes the listener of), writing and
 * reading records in `store` (shared by every node of the cluster). `history`
 * may be NULL. (transfer full) */
KraftController *kraft_controller_new(RaftNode *raft, KraftRecordStore *store,
                                      const KraftControllerConfig *cfg, History *history);
void kraft_controller_free(KraftController *controller);

/* A topic to create: its replicas, `n_partitions` rows of `rf` broker ids;
 * `unclean` its unclean.leader.election.enable, `min_isr` its
 * min.insync.replicas. Every controller is told the
 * same topics (the cluster's), and the active one creates those the log does
 * not have yet. */
void kraft_controller_add_topic(KraftController *controller, const char *name,
                                const gint32 *replicas, guint n_partitions, guint rf,
                                gboolean unclean, gint32 min_isr);

/* An administrator's CreatePartitions: `name` grows to `partitions`. The
 * active controller places the new partitions (StripedReplicaPlacer) and
 * writes their Partition records; a controller that becomes active later
 * does it then. */
void kraft_controller_add_partitions(KraftController *controller, const char *name,
                                     guint partitions);

/* Told when this voter stands for election against the leader it knew
 * (a candidate in a new epoch): the quorum's first sign that the active
 * controller is gone, as a session's expiry is ZooKeeper's. */
typedef void (*KraftElectionFn)(void *user_data, gint32 old_leader_id, gint32 epoch);
void kraft_controller_set_election_observer(KraftController *controller, KraftElectionFn fn,
                                            void *user_data);

/* TRUE while it is the active controller. */
gboolean kraft_controller_active(const KraftController *controller);
/* What it has replayed of the committed log. (transfer none) */
const KraftImage *kraft_controller_image(const KraftController *controller);
RaftNode *kraft_controller_raft(const KraftController *controller);

/* Asserts its invariants: an active controller's image holds what the
 * committed one does; an ISR is within the replicas, apart from the ELR, and
 * empty only without a leader (ELR); a leader is in its ISR. */
void kraft_controller_check_invariants(const KraftController *controller);

#endif
