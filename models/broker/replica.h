/*
 * replica: the broker's replica manager (Kafka's ReplicaManager), as the rest
 * of the broker folder sees it — the partitions this broker holds a replica
 * of, their roles, produce and fetch, the ISR and the high watermark.
 *
 * Where each concern lives:
 *   replica.c           the partition table, role changes (LeaderAndIsr),
 *                       leadership listeners, retention, the invariants
 *   replica_recovery.c  loading the logs and their HWs when the process starts
 *   replica_hw.c        where the HW advances, the produce purgatory and the
 *                       HW checkpoint (replication-offset-checkpoint)
 *   replica_produce.c   Produce and internal appends on the leader
 *   replica_isr.c       ISR shrink (replica.lag.time.max.ms) and expand
 *   replica_fetch.c     the leader side of Fetch, the fetch purgatory and
 *                       OffsetsForLeaderEpoch answers
 *   replica_fetcher.c   the follower side: fetchers, follower append and
 *                       where a follower is truncated (both modes)
 *   replica_markers.c   WriteTxnMarkers on a partition leader
 *
 * The replica manager shares BrokerState with broker.c and broker_services.c
 * (broker_internal.h); it never names the coordinators: they learn of leadership changes and of
 * written transaction markers through listeners registered here.
 */
#ifndef REPLICA_H
#define REPLICA_H

#include "broker.h"

typedef struct BrokerState BrokerState;

/* What the leader knows of one follower (Kafka's remote Replica). */
typedef struct {
    gint32 broker_id;
    gint64 leo;                       /* -1: unknown since this leader's term began */
    gint64 last_caught_up_ns;
    gint64 last_fetch_leader_leo;
    gint64 last_fetch_ns;
} RemoteReplica;

typedef struct Partition {
    KTopicPartition tp;
    Plog *log;
    /* Its topic's config on this broker (borrowed from the Broker, which
     * outlives its replicas; one for all the topic's replicas). */
    const TopicConfig *config;
    gboolean is_leader;
    gint32 leader_id;
    gint32 leader_epoch;
    gint32 controller_epoch;
    gint32 zk_version;
    guint8 n_replicas;
    guint8 n_isr;
    /* Interned (kbroker_ids_intern): n_replicas and n_isr ids. */
    const gint32 *replicas;
    const gint32 *isr;
    gint64 hw;
    /* Leader side. */
    /* The other replicas' state while leader (n_remotes of them, room
     * for n_replicas); NULL on a follower, which pays nothing for it. */
    RemoteReplica *remotes;
    guint n_remotes;
    gint64 leader_epoch_start_offset;
    gboolean isr_update_in_flight;
    /* KRaft: when an AlterPartition in flight is given up as lost (Kafka's
     * AlterPartitionManager retries after its request timeout). */
    gint64 isr_update_deadline_ns;
    GQueue delayed_produce;           /* DelayedProduce*, by required offset */
    /* The long-polling fetches that name this partition, in the order they
     * were delayed (DelayedFetch*, borrowed; NULL until the first): its
     * watch key in the fetch purgatory. */
    GPtrArray *fetch_watchers;
    /* Follower side. */
    gboolean fetching;                /* in its leader's fetcher */
    gboolean truncation_pending;      /* leader-epoch, kip-101: ask before fetching */
} Partition;

/* Completion of an internal append (replica_append_internal): `done_id` is
 * the caller's handle for what it waits on. */
typedef void (*ReplicaAppendCb)(BrokerState *state, KafkaError error, gint64 base_offset,
                                guint64 done_id);

/* Told when this broker starts or stops leading a partition: Kafka's
 * onLeadershipChange callback, which KafkaApis gives
 * ReplicaManager.becomeLeaderOrFollower and which calls the group and
 * transaction coordinators' onElection and onResignation. `resigned` runs
 * for every partition that becomes (or stays) a follower, before it starts
 * fetching; a listener ignores the partitions it does not lead. */
typedef struct {
    void (*elected)(void *user_data, const Partition *p);
    void (*resigned)(void *user_data, const Partition *p);
    void *user_data;
} ReplicaLeadershipListener;

/* Told that a transaction marker of `producer_id` (commit or abort) was
 * written to `tp`, a partition this broker leads (Kafka's KafkaApis calling
 * GroupCoordinator.onTransactionCompleted after WriteTxnMarkers). */
typedef struct {
    void (*marker_written)(void *user_data, const KTopicPartition *tp, gint64 producer_id,
                           gboolean committed);
    void *user_data;
} ReplicaMarkerListener;

/* At most this many listeners of each kind (the two coordinators). */
#define REPLICA_LISTENERS_MAX 4

/* ---- the partition table (replica.c) ---- */

/* Allocates the replica manager's part of `state` (empty). */
void replica_state_init(BrokerState *state);
/* Frees every partition, fetcher and delayed fetch of `state`. */
void replica_state_free(BrokerState *state);
/* Adds a listener (copied), called after those added before it. */
void replica_add_leadership_listener(BrokerState *state,
                                     const ReplicaLeadershipListener *listener);
void replica_add_marker_listener(BrokerState *state, const ReplicaMarkerListener *listener);
/* Inserts `p` into `partitions`, sorted by topic-partition, after any equal
 * one (what appending and a stable sort give, in O(log N) compares). */
void replica_sorted_insert(GPtrArray *partitions, Partition *p);
/* The place of `p` in `partitions` (sorted as replica_sorted_insert keeps
 * them), by binary search; -1 when it is not there. */
gint replica_sorted_find(const GPtrArray *partitions, const Partition *p);
/* The broker's replica of `tp`, or NULL. (transfer none) */
Partition *replica_get(BrokerState *state, const KTopicPartition *tp);
/* The replica of `tp`, its log opened (or created) when it is new. */
Partition *replica_get_or_create(BrokerState *state, const KTopicPartition *tp);
/* Opens the log of `tp`, which has no replica yet, trusting what lies below
 * `recovery_point` (-1: none, every batch is verified; plog.h). */
Partition *replica_open(BrokerState *state, const KTopicPartition *tp, gint64 recovery_point);
/* Applies a controller's LeaderAndIsr: each partition of a newer leader
 * epoch that names this broker becomes leader or follower. */
void replica_handle_leader_and_isr(BrokerState *state, KLeaderAndIsrRequest *req);
/* Applies a controller's StopReplica without deletion (Kafka's
 * ReplicaManager.stopReplicas, deletePartition=false): the follower replicas
 * it names stop fetching and keep their logs. */
void replica_handle_stop_replica(BrokerState *state, const KLeaderAndIsrRequest *req);
/* Starts the log.retention.check.interval.ms timer. */
void replica_retention_start(BrokerState *state);
void replica_check_invariants(const BrokerState *state);

/* ---- recovery at start (replica_recovery.c) ---- */

/* Opens every log on the node's disk, with its recovery point and HW from
 * their checkpoints. */
void replica_load_logs(BrokerState *state);
/* Writes the recovery points of all the broker's logs to the log
 * directory's checkpoint now (Kafka's LogManager.checkpointLogRecoveryOffsets). */
void replica_recovery_points_checkpoint(BrokerState *state);
/* Starts the log.flush.offset.checkpoint.interval.ms timer. */
void replica_recovery_points_start(BrokerState *state);
/* After a truncation of `p`: checkpoints the recovery points when the
 * truncation lowered its log's below `recovery_point_before`. */
void replica_truncation_checkpoint(BrokerState *state, const Partition *p,
                                   gint64 recovery_point_before);

/* ---- the high watermark (replica_hw.c) ---- */

/* Starts the replica.high.watermark.checkpoint.interval.ms timer. */
void replica_hw_checkpoint_start(BrokerState *state);
/* Writes the HW checkpoint now (a temporary file, fsynced, renamed) unless
 * a write is in flight; BrokerState.checkpoint_in_flight tells when done. */
void replica_hw_checkpoint_write(BrokerState *state);

/* ---- produce on the leader (replica_produce.c) ---- */

void replica_handle_produce(BrokerState *state, SimNodeId from, KProduceRequest *req);
/* Appends `batch` (the caller's) to a partition this broker leads, as Kafka's
 * coordinators append with acks=-1: `done_cb` runs once the HW passes it, or
 * with an error (not leader, too small an ISR, disk, `timeout_ms`, leadership
 * lost while waiting); it may run before this returns. It never runs after
 * the broker crashed. */
void replica_append_internal(BrokerState *state, const KTopicPartition *tp, PlogBatch *batch,
                             gint64 timeout_ms, ReplicaAppendCb done_cb, guint64 done_id);

/* ---- the ISR (replica_isr.c) ---- */

/* Starts the ISR expiration timer (every replica.lag.time.max.ms / 2). */
void replica_isr_start(BrokerState *state);

/* ---- fetch on the leader (replica_fetch.c) ---- */

void replica_handle_fetch(BrokerState *state, SimNodeId from, KFetchRequest *req);
void replica_handle_epoch_request(BrokerState *state, SimNodeId from, KEpochMessage *req);
/* The last stable offset of a partition this broker leads: min(HW, the
 * first offset of its oldest open transaction). */
gint64 replica_last_stable_offset(const Partition *p);

/* ---- the follower side (replica_fetcher.c) ---- */

void replica_handle_fetch_response(BrokerState *state, SimNodeId from, KFetchResponse *resp);
void replica_handle_epoch_response(BrokerState *state, SimNodeId from, KEpochMessage *resp);
void replica_peer_disconnected(BrokerState *state, SimNodeId peer);

/* ---- WriteTxnMarkers (replica_markers.c) ---- */

/* WriteTxnMarkers from a transaction coordinator. */
void replica_handle_write_txn_markers(BrokerState *state, SimNodeId from,
                                      const KTxnMarkersMessage *request);
void replica_markers_state_init(BrokerState *state);
void replica_markers_state_free(BrokerState *state);

/* ---- transaction verification (replica_verify.c) ---- */

/* An AddPartitionsToTxn answer to this broker's verification. */
void replica_verify_handle_response(BrokerState *state, SimNodeId from,
                                    const KTxnMessage *response);
/* The connection to `peer` broke: its verifications fail. */
void replica_verify_peer_disconnected(BrokerState *state, SimNodeId peer);
void replica_verify_state_init(BrokerState *state);
void replica_verify_state_free(BrokerState *state);

#endif
