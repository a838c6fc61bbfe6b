/*
 * broker_internal: the broker's private state. Exactly these include it:
 * broker.c (process, registration, request dispatch), broker_shutdown.c
 * (its clean stop, through replica_internal.h), broker_services.c (the
 * narrow interface the broker's children see instead:
 * broker_services.h) and replica_internal.h, the replica manager's private
 * header, through which replica.c, replica_recovery.c, replica_hw.c,
 * replica_produce.c, replica_isr.c, replica_fetch.c, replica_fetcher.c and
 * replica_markers.c see it (their interface is replica.h). The controller,
 * producer ids, the group and transaction coordinators and the
 * coordinators' partitions see only broker_services.h. Nothing outside the
 * broker's folder includes it.
 */
#ifndef BROKER_INTERNAL_H
#define BROKER_INTERNAL_H

#include "broker.h"
#include "broker_services.h"
#include "controller.h"
#include "producer_ids.h"
#include "replica.h"
#include "request_channel.h"
#include "kraft_records.h"
#include "raft_node.h"
#include "zk_client.h"

/* Where a clean shutdown is (broker_shutdown.c), in the order it goes. */
typedef enum {
    BROKER_SHUTDOWN_NONE = 0,
    BROKER_SHUTDOWN_CONTROLLED, /* asking the controller to move leaderships */
    BROKER_SHUTDOWN_STOPPING,   /* serving nothing; flushing logs, HW checkpoint */
    BROKER_SHUTDOWN_CLOSING,    /* closing the coordination session */
    BROKER_SHUTDOWN_EXITING,    /* the exit is scheduled */
} BrokerShutdownPhase;

/* Everything that exists only while the broker's process runs. */
typedef struct BrokerState {
    Broker *broker;
    BrokerServices *services;         /* what the children see of this (broker_services.h) */
    RequestChannel *requests;         /* network threads, request queue, I/O threads */
    ZkClient *zk;                     /* NULL in KRaft mode */
    struct BrokerKraft *kraft;        /* KRaft mode only (broker_kraft.h) */
    gboolean registered;
    gint32 controller_id;             /* as last learnt; -1 unknown */
    gint32 controller_epoch;          /* the highest seen; older requests are fenced */
    Controller *controller;           /* non-NULL while this broker is the controller */
    GroupCoord *groups;               /* the group coordinator (group_coord.c) */
    TxnCoord *txns;                   /* the transaction coordinator (txn_coord.c) */
    /* broker_find_coordinator asked for the internal topic of a
     * coordinator kind (KafkaCoordinatorType) and has no answer yet. */
    gboolean internal_topic_requested[2];
    GPtrArray *pending_markers;       /* WriteTxnMarkers awaiting replication (replica_markers.c) */
    guint64 marker_next;
    GPtrArray *pending_verifications; /* produce batches being verified (replica_verify.c) */
    guint64 controller_generation;    /* counts controllers this process started */
    MetadataCache *metadata;          /* the metadata cache: pooled states (owned) */
    GArray *live_brokers;             /* KBrokerEndpoint, sorted by id */
    GHashTable *partitions;           /* "t-p" -> Partition* (owned) */
    GPtrArray *partitions_sorted;     /* Partition*, by topic-partition */
    GPtrArray *fetchers;              /* Fetcher* (owned), by leader id */
    GPtrArray *delayed_fetches;       /* DelayedFetch* (owned) */
    /* Where a fetch's answer is read, one entry per partition, before the
     * entries its session keeps move into the response (replica_fetch.c):
     * reused, so that a fetch of a large session allocates no large array. */
    GArray *fetch_scratch;            /* KFetchPartitionResponse, empty between fetches */
    guint64 fetch_delay_serial;       /* the next delayed fetch's DelayedFetch.serial */
    /* The leader's incremental fetch sessions (fetch_session.h): in the
     * process's memory, lost when it stops. */
    struct FetchSessionCache *fetch_sessions;
    GPtrArray *zk_pending;            /* contexts of coordination requests (owned) */
    gint32 correlation_next;
    gboolean checkpoint_in_flight;
    /* The replica manager's listeners (replica.h), in the order added. */
    ReplicaLeadershipListener leadership_listeners[REPLICA_LISTENERS_MAX];
    guint n_leadership_listeners;
    ReplicaMarkerListener marker_listeners[REPLICA_LISTENERS_MAX];
    guint n_marker_listeners;
    /* Producer ids (Kafka's ZK ProducerIdManager, producer_ids.h). */
    ProducerIds *producer_ids;
    /* A clean shutdown (broker_shutdown.c). */
    guint shutdown_phase;             /* BrokerShutdownPhase */
    gint32 shutdown_attempts_left;    /* ControlledShutdown attempts still allowed */
    gint32 shutdown_correlation;      /* the attempt in flight; -1: none */
    SimTimerId shutdown_timer;
    gboolean shutdown_checkpointed;   /* the last HW and recovery-point checkpoints are written */
    /* The log directory failed (broker_log_dir_failed): the broker serves
     * nothing more and halts. */
    gboolean log_dir_failed;
    /* Controller requests (LeaderAndIsr, UpdateMetadata, StopReplica) waiting
     * to be applied, in arrival order; the head is applied when the timer
     * fires (broker.c, "controller requests"). */
    GQueue controller_requests;       /* SimMsg* (owned) */
    SimTimerId controller_request_timer;
} BrokerState;

struct Broker {
    SimWorld *world;
    SimNodeId node;
    char *name;
    BrokerConfig config;
    SimNodeId zk_node;
    /* KRaft mode (broker_new_kraft): the controller quorum and the metadata
     * records' store; n_kraft_voters 0 in ZooKeeper mode. */
    RaftVoter *kraft_voters;
    guint n_kraft_voters;
    KraftRecordStore *kraft_store;
    /* Combined mode (broker_new_combined): the voter running in this
     * process (owned), NULL otherwise. */
    RaftNode *raft;
    /* KRaft: the broker epoch its clean shutdown file records (written by a
     * clean shutdown, deleted at start, so it outlives the process but not
     * the next start), -1: none. */
    gint64 kraft_clean_epoch;
    History *history;
    BrokerObserver observer;
    GHashTable *topic_configs;        /* name -> TopicConfig* (owned); looked up only */
    /* Where the metadata cache's partition states live (a reference): the
     * broker's own, or one its cluster's brokers share
     * (broker_share_metadata_pool). */
    MetadataPool *metadata_pool;
    BrokerState *state;               /* NULL while the process is down */
};

/* broker.c */
gint64 broker_now_ms(const Broker *broker);
/* Queues a controller request (LeaderAndIsr, UpdateMetadata, StopReplica)
 * to be applied in turn; owned from now. */
void broker_controller_request_arrived(BrokerState *state, SimMsg *msg);
void broker_send(BrokerState *state, SimNodeId to, SimMsg *msg);
/* Resigns as controller (frees it) if this broker is the controller. */
void broker_resign_controller(BrokerState *state);
/* FALSE once a clean shutdown stopped serving requests (broker_shutdown.c). */
gboolean broker_serving(const BrokerState *state);
void broker_shutdown_handle_response(BrokerState *state,
                                     const KControlledShutdownResponse *response);
/* An I/O call on the log directory answered `status`: SIM_DISK_EIO fails the
 * directory (broker_log_dir_failed) with `operation` named; returns
 * `status`. */
SimDiskStatus broker_log_dir_status(BrokerState *state, SimDiskStatus status,
                                    const char *operation);
/* The log directory failed: Kafka's LogDirFailureChannel and
 * ReplicaManager/LogManager.handleLogDirFailure (broker_shutdown.c). */
void broker_log_dir_failed(BrokerState *state, const char *operation);
/* KRaft: the controller answered a heartbeat wanting to shut down with
 * "should shut down" (broker_shutdown.c). */
void broker_shutdown_kraft_approved(BrokerState *state);
/* Asserts broker_shutdown.c's invariants. */
void broker_shutdown_check_invariants(const BrokerState *state);

/* The history's set id of an ISR for HistoryEvent.isr; 0 without a history. */
guint32 broker_history_isr(Broker *broker, const gint32 *isr, guint n_isr);
void broker_record_event(Broker *broker, HistoryEventKind kind, const KTopicPartition *tp,
                         const HistoryEvent *fields, const char *format, ...) G_GNUC_PRINTF(5, 6);
/* Adds a metric sample (history_metric) at the present, as this broker. */
void broker_record_metric(Broker *broker, HistoryMetricKind kind, guint32 count, gint64 value);
/* The creation of internal topic `kind` (0 __consumer_offsets, 1
 * __transaction_state) failed: the next FindCoordinator asks again. */
void broker_internal_topic_failed(BrokerState *state, guint kind);
const TopicConfig *broker_topic_config(Broker *broker, const char *topic);
void *broker_zk_context(BrokerState *state, gsize size);
/* FindCoordinator for `request->key_type`: the coordinator is the leader of
 * partition `partition` of `topic` (partitions and replication factor as
 * configured; the topic is created as Kafka auto-creates it when missing).
 * An empty key is answered with `empty_key_error`. */
void broker_find_coordinator(BrokerState *state, SimNodeId from,
                             const KFindCoordinatorRequest *request, const char *topic,
                             gint32 partitions, gint16 replication_factor, gint32 partition,
                             KafkaError empty_key_error);
void broker_zk_context_done(BrokerState *state, void *context);

/* broker_services.c: the interface over this state for the children. */
BrokerServices *broker_services_new(BrokerState *state);
void broker_services_free(BrokerServices *services);
void broker_services_check_invariants(const BrokerState *state);

#endif
