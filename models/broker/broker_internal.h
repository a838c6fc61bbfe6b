/*
 * broker_internal: the broker's private state, shared by broker.c (process,
 * registration, request dispatch, HW checkpoint), replica.c (partitions,
 * produce, fetch, ISR, HW, truncation, follower fetchers), controller.c,
 * producer_ids.c and group_coord.c (the group coordinator). Nothing outside
 * those files includes it.
 */
#ifndef BROKER_INTERNAL_H
#define BROKER_INTERNAL_H

#include "broker.h"
#include "zk_client.h"

typedef struct Controller Controller;
typedef struct GroupCoord GroupCoord;
typedef struct TxnCoord TxnCoord;
struct BrokerState;

/* Completion of an internal append (replica_append_internal): `done_id` is
 * the caller's handle for what it waits on. */
typedef void (*ReplicaAppendCb)(struct BrokerState *state, KafkaError error, gint64 base_offset,
                                guint64 done_id);

/* Kafka's replication-offset-checkpoint: every partition's HW, written by
 * broker.c, read back at start by replica.c. */
#define HW_CHECKPOINT_FILE "replication-offset-checkpoint"

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
    char *name;                       /* "topic-partition" */
    Plog *log;
    TopicConfig config;
    gboolean is_leader;
    gint32 leader_id;
    gint32 leader_epoch;
    gint32 controller_epoch;
    gint32 zk_version;
    guint8 n_replicas;
    guint8 n_isr;
    gint32 replicas[KAFKA_REPLICAS_MAX];
    gint32 isr[KAFKA_REPLICAS_MAX];
    gint64 hw;
    /* Leader side. */
    RemoteReplica remotes[KAFKA_REPLICAS_MAX];
    guint n_remotes;
    gint64 leader_epoch_start_offset;
    gboolean isr_update_in_flight;
    GQueue delayed_produce;           /* DelayedProduce*, by required offset */
    /* Follower side. */
    gboolean fetching;                /* in its leader's fetcher */
    gboolean truncation_pending;      /* leader-epoch mode: ask before fetching */
} Partition;

typedef struct {
    gint32 leader_id;
    SimNodeId node;
    GPtrArray *partitions;            /* Partition*, not owned */
    gint32 in_flight_correlation;     /* 0: none */
    gboolean epoch_request_in_flight;
    SimTimerId timeout_timer;
    SimTimerId backoff_timer;
} Fetcher;

typedef struct {
    gint32 correlation_id;
    SimNodeId client;
    guint32 client_incarnation;
    KTopicPartition tp;
    gint64 base_offset;
    gint64 required_offset;           /* last offset + 1: HW must reach it */
    gint16 acks;
    SimTimerId timeout_timer;
    struct BrokerState *state;
    /* An internal append (an offset commit) answers its caller, not a
     * client: NULL for a client's produce. */
    ReplicaAppendCb done_cb;
    guint64 done_id;
} DelayedProduce;

typedef struct {
    KFetchRequest *request;           /* owned */
    GArray *sizes_at_delay;           /* gint64 per request partition: its log size then */
    SimNodeId client;
    SimTimerId timeout_timer;
    struct BrokerState *state;
} DelayedFetch;

/* Everything that exists only while the broker's process runs. */
typedef struct BrokerState {
    Broker *broker;
    ZkClient *zk;
    gboolean registered;
    gint32 controller_id;             /* as last learnt; -1 unknown */
    gint32 controller_epoch;          /* the highest seen; older requests are fenced */
    Controller *controller;           /* non-NULL while this broker is the controller */
    GroupCoord *groups;               /* the group coordinator (group_coord.c) */
    TxnCoord *txns;                   /* the transaction coordinator (txn_coord.c) */
    /* broker_find_coordinator asked for the internal topic of a
     * coordinator kind (KafkaCoordinatorType) and has no answer yet. */
    gboolean internal_topic_requested[2];
    GPtrArray *pending_markers;       /* WriteTxnMarkers awaiting replication (replica.c) */
    guint64 marker_next;
    guint64 controller_generation;    /* counts controllers this process started */
    GTree *metadata;                  /* KTopicPartition* -> KPartitionState* (owned) */
    GArray *live_brokers;             /* KBrokerEndpoint, sorted by id */
    GHashTable *partitions;           /* "t-p" -> Partition* (owned) */
    GPtrArray *partitions_sorted;     /* Partition*, by topic-partition */
    GPtrArray *fetchers;              /* Fetcher* (owned), by leader id */
    GPtrArray *delayed_fetches;       /* DelayedFetch* (owned) */
    GPtrArray *zk_pending;            /* contexts of coordination requests (owned) */
    gint32 correlation_next;
    SimTimerId hw_checkpoint_timer;
    SimTimerId isr_expiration_timer;
    SimTimerId retention_timer;
    gboolean checkpoint_in_flight;
    /* Producer ids (Kafka's ZK ProducerIdManager): a block claimed from
     * /latest_producer_id_block, handed out one by one. */
    gint64 pid_next;
    gint64 pid_block_end;             /* exclusive; pid_next == end: none left */
    gboolean pid_block_in_flight;
    GQueue pid_waiters;               /* PidWaiter* */
} BrokerState;

struct Broker {
    SimWorld *world;
    SimNodeId node;
    char *name;
    BrokerConfig config;
    SimNodeId zk_node;
    History *history;
    BrokerObserver observer;
    GHashTable *topic_configs;        /* name -> TopicConfig* (owned); looked up only */
    BrokerState *state;               /* NULL while the process is down */
};

/* broker.c */
gint64 broker_now_ms(const Broker *broker);
void broker_send(BrokerState *state, SimNodeId to, SimMsg *msg);
void broker_record_event(Broker *broker, HistoryEventKind kind, const KTopicPartition *tp,
                         const HistoryEvent *fields, const char *format, ...) G_GNUC_PRINTF(5, 6);
const TopicConfig *broker_topic_config(Broker *broker, const char *topic);
void *broker_zk_context(BrokerState *state, gsize size);
/* An ISR as HistoryEvent.isr_mask: bit i set for broker id i. */
guint32 broker_isr_mask(const gint32 *isr, guint n_isr);
/* FindCoordinator for `request->key_type`: the coordinator is the leader of
 * partition `partition` of `topic` (partitions and replication factor as
 * configured; the topic is created as Kafka auto-creates it when missing).
 * An empty key is answered with `empty_key_error`. */
void broker_find_coordinator(BrokerState *state, SimNodeId from,
                             const KFindCoordinatorRequest *request, const char *topic,
                             gint32 partitions, gint16 replication_factor, gint32 partition,
                             KafkaError empty_key_error);
void broker_zk_context_done(BrokerState *state, void *context);
void broker_handle_update_metadata(BrokerState *state, SimNodeId from,
                                   KUpdateMetadataRequest *req);

/* producer_ids.c */
void producer_ids_handle_request(BrokerState *state, SimNodeId from,
                                 KInitProducerIdMessage *request);
/* A fresh producer id for this broker's own use (the transaction
 * coordinator's): `done_cb` gets it (epoch 0), or an error; it may run before
 * this returns, and never after a crash. */
typedef void (*ProducerIdsCb)(BrokerState *state, KafkaError error, gint64 producer_id,
                              guint64 done_id);
void producer_ids_allocate(BrokerState *state, ProducerIdsCb done_cb, guint64 done_id);
void producer_ids_state_free(BrokerState *state);

/* replica.c */
Partition *replica_get(BrokerState *state, const KTopicPartition *tp);
Partition *replica_get_or_create(BrokerState *state, const KTopicPartition *tp);
void replica_load_logs(BrokerState *state);
void replica_free(Partition *partition);
void replica_handle_leader_and_isr(BrokerState *state, KLeaderAndIsrRequest *req);
void replica_handle_produce(BrokerState *state, SimNodeId from, KProduceRequest *req);
void replica_handle_fetch(BrokerState *state, SimNodeId from, KFetchRequest *req);
void replica_handle_fetch_response(BrokerState *state, SimNodeId from, KFetchResponse *resp);
void replica_handle_epoch_request(BrokerState *state, SimNodeId from, KEpochMessage *req);
void replica_handle_epoch_response(BrokerState *state, SimNodeId from, KEpochMessage *resp);
void replica_peer_disconnected(BrokerState *state, SimNodeId peer);
void replica_isr_expiration(BrokerState *state);
void replica_apply_retention(BrokerState *state);
void replica_state_free(BrokerState *state);
void replica_fetcher_free(gpointer fetcher);
void replica_check_invariants(const BrokerState *state);
/* Appends `batch` (the caller's) to a partition this broker leads, as Kafka's
 * coordinators append with acks=-1: `done_cb` runs once the HW passes it, or
 * with an error (not leader, too small an ISR, disk, `timeout_ms`, leadership
 * lost while waiting); it may run before this returns. It never runs after
 * the broker crashed. */
void replica_append_internal(BrokerState *state, const KTopicPartition *tp, PlogBatch *batch,
                             gint64 timeout_ms, ReplicaAppendCb done_cb, guint64 done_id);
/* The last stable offset of a partition this broker leads: min(HW, the
 * first offset of its oldest open transaction). */
gint64 replica_last_stable_offset(const Partition *p);
/* WriteTxnMarkers from a transaction coordinator. */
void replica_handle_write_txn_markers(BrokerState *state, SimNodeId from,
                                      const KTxnMarkersMessage *request);
void replica_markers_state_init(BrokerState *state);
void replica_markers_state_free(BrokerState *state);

/* group_coord.c: the group coordinator, told of requests and of the
 * __consumer_offsets partitions this broker starts or stops leading. */
GroupCoord *group_coord_new(BrokerState *state);
void group_coord_free(GroupCoord *coord);
/* TRUE when `msg` is a group request it handled (the caller frees it). */
gboolean group_coord_handle_message(BrokerState *state, SimNodeId from, SimMsg *msg);
void group_coord_partition_elected(BrokerState *state, const Partition *p);
void group_coord_partition_resigned(BrokerState *state, const Partition *p);
void group_coord_check_invariants(const BrokerState *state);
/* A transaction marker was written to `tp`: when it is a __consumer_offsets
 * partition this broker coordinates, the producer's transactional offsets
 * become visible (commit) or are dropped (abort). */
void group_coord_txn_completed(BrokerState *state, const KTopicPartition *tp, gint64 producer_id,
                               gboolean committed);

/* txn_coord.c: the transaction coordinator (txn_coord.h), told of requests,
 * of the __transaction_state partitions this broker starts or stops leading,
 * and of broken connections (its marker requests). */
TxnCoord *txn_coord_new(BrokerState *state);
void txn_coord_free(TxnCoord *coord);
/* TRUE when `msg` is a transaction request or response it handled (the
 * caller frees it). */
gboolean txn_coord_handle_message(BrokerState *state, SimNodeId from, SimMsg *msg);
void txn_coord_partition_elected(BrokerState *state, const Partition *p);
void txn_coord_partition_resigned(BrokerState *state, const Partition *p);
void txn_coord_peer_disconnected(BrokerState *state, SimNodeId peer);
void txn_coord_check_invariants(const BrokerState *state);

/* controller.c */
Controller *controller_new(BrokerState *state);
void controller_free(Controller *controller);
void controller_start(Controller *controller);
void controller_watch_fired(Controller *controller, const char *path);
gboolean controller_handle_message(Controller *controller, SimNodeId from, SimMsg *msg);
void controller_peer_disconnected(Controller *controller, SimNodeId peer);

#endif
