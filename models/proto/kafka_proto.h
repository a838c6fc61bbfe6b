/*
 * kafka_proto: the requests and responses brokers, controllers and clients
 * exchange over sim_net, after Kafka's protocol (Produce, Fetch, Metadata,
 * LeaderAndIsr, UpdateMetadata, StopReplica, ControlledShutdown, OffsetsForLeaderEpoch,
 * InitProducerId, and
 * the group protocol: FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
 * LeaveGroup, OffsetCommit, OffsetFetch, KIP-848's ConsumerGroupHeartbeat,
 * and the transaction protocol:
 * AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
 * WriteTxnMarkers).
 *
 * Every message embeds SimMsg first. Messages are created with kproto_new and
 * freed with sim_msg_free; batches and arrays inside a message belong to it.
 * A request's `correlation_id` comes back in its response, as in Kafka.
 * Sizes on the wire approximate Kafka's: a fixed header plus the batches'
 * logical sizes.
 */
#ifndef KAFKA_PROTO_H
#define KAFKA_PROTO_H

#include <glib.h>

#include "kafka_error.h"
#include "plog_batch.h"
#include "sim_net.h"

#define KAFKA_TOPIC_NAME_MAX 63

/* A topic's partition. The name is interned (ktp_set, ktopic_intern): one
 * copy of each name for the process, so two partitions of a topic hold the
 * same pointer, a comparison of topics is a pointer comparison and a
 * partition costs 16 bytes wherever it is named (a fetch session's entry,
 * a replica, a metadata state, every request's partition list), not the 68
 * of a name kept inline. The order of partitions (ktp_compare) and their
 * hash (ktp_hash) still come from the name's text, so neither depends on
 * where a name happens to live. NULL names no topic and orders before
 * every name. */
typedef struct {
    const char *topic;
    gint32 partition;
} KTopicPartition;

typedef enum {
    KMSG_PRODUCE_REQUEST = 200,
    KMSG_PRODUCE_RESPONSE,
    KMSG_FETCH_REQUEST,
    KMSG_FETCH_RESPONSE,
    KMSG_LEADER_AND_ISR_REQUEST,
    KMSG_LEADER_AND_ISR_RESPONSE,
    KMSG_UPDATE_METADATA_REQUEST,
    KMSG_UPDATE_METADATA_RESPONSE,
    KMSG_METADATA_REQUEST,
    KMSG_METADATA_RESPONSE,
    KMSG_EPOCH_REQUEST, /* OffsetsForLeaderEpoch */
    KMSG_EPOCH_RESPONSE,
    KMSG_INIT_PRODUCER_ID_REQUEST,
    KMSG_INIT_PRODUCER_ID_RESPONSE,
    KMSG_FIND_COORDINATOR_REQUEST,
    KMSG_FIND_COORDINATOR_RESPONSE,
    KMSG_JOIN_GROUP_REQUEST,
    KMSG_JOIN_GROUP_RESPONSE,
    KMSG_SYNC_GROUP_REQUEST,
    KMSG_SYNC_GROUP_RESPONSE,
    KMSG_HEARTBEAT_REQUEST,
    KMSG_HEARTBEAT_RESPONSE,
    KMSG_LEAVE_GROUP_REQUEST,
    KMSG_LEAVE_GROUP_RESPONSE,
    KMSG_OFFSET_COMMIT_REQUEST,
    KMSG_OFFSET_COMMIT_RESPONSE,
    KMSG_OFFSET_FETCH_REQUEST,
    KMSG_OFFSET_FETCH_RESPONSE,
    KMSG_ADD_PARTITIONS_TO_TXN_REQUEST,
    KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE,
    KMSG_ADD_OFFSETS_TO_TXN_REQUEST,
    KMSG_ADD_OFFSETS_TO_TXN_RESPONSE,
    KMSG_END_TXN_REQUEST,
    KMSG_END_TXN_RESPONSE,
    KMSG_WRITE_TXN_MARKERS_REQUEST,
    KMSG_WRITE_TXN_MARKERS_RESPONSE,
    KMSG_TXN_OFFSET_COMMIT_REQUEST,
    KMSG_TXN_OFFSET_COMMIT_RESPONSE,
    KMSG_CONTROLLED_SHUTDOWN_REQUEST,
    KMSG_CONTROLLED_SHUTDOWN_RESPONSE,
    KMSG_STOP_REPLICA_REQUEST, /* KLeaderAndIsrRequest: the partitions to stop fetching */
    KMSG_STOP_REPLICA_RESPONSE,
    KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST, /* KIP-848 */
    KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE,
} KafkaMsgType;

#define KAFKA_REPLICAS_MAX 16
#define KAFKA_NO_LEADER (-1)
/* KFetchRequest.isolation (Kafka's IsolationLevel). */
#define KAFKA_READ_UNCOMMITTED 0
#define KAFKA_READ_COMMITTED 1
/* A fetch from a consumer rather than a follower carries this replica id. */
#define KAFKA_CONSUMER_REPLICA_ID (-1)

/* Transactional ids are bounded so messages stay flat. */
#define KAFKA_TXN_ID_MAX 63

/* The state of one partition as the controller publishes it. */
typedef struct {
    KTopicPartition tp;
    gint32 leader;      /* broker id or KAFKA_NO_LEADER */
    gint32 leader_epoch;
    gint32 controller_epoch;
    gint32 zk_version;  /* the version of the state znode this came from */
    guint8 n_replicas;
    guint8 n_isr;
    gint32 replicas[KAFKA_REPLICAS_MAX];
    gint32 isr[KAFKA_REPLICAS_MAX];
} KPartitionState;

typedef struct {
    gint32 broker_id;
    SimNodeId node;
    /* KIP-380's broker epoch: the creation zxid of its registration znode. A
     * broker that restarted has a new one, so the controller can tell a
     * bounce from a broker that never went away. */
    gint64 broker_epoch;
} KBrokerEndpoint;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KTopicPartition tp;
    gint16 acks;         /* 0, 1 or -1 (all) */
    gint64 timeout_ms;
    PlogBatch *batch;    /* owned */
    /* A transactional producer's id ("" none), which the leader needs to
     * verify the batch with the transaction coordinator (KIP-890), and the
     * transaction version the client uses (2: produce v12, the partition is
     * added to the transaction by the broker). Their bytes are not counted
     * in the size. */
    char transactional_id[KAFKA_TXN_ID_MAX + 1];
    gint8 transaction_version;
} KProduceRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KTopicPartition tp;
    KafkaError error;
    gint64 base_offset;
    gint64 log_start_offset;
} KProduceResponse;

typedef struct {
    KTopicPartition tp;
    gint64 fetch_offset;
    gint32 current_leader_epoch; /* -1: not checked */
    gint64 max_bytes;
    gint64 log_start_offset;     /* the follower's; -1 from a consumer */
} KFetchPartition;

/* Incremental fetch sessions (KIP-227, Kafka's FetchMetadata): a request's
 * session id and epoch. Epoch 0 asks for a full fetch that creates a
 * session (closing the one named, if any); FINAL closes the one named and
 * creates none; any other epoch is an incremental fetch in the session. */
#define KAFKA_FETCH_SESSION_ID_INVALID 0
#define KAFKA_FETCH_EPOCH_INITIAL 0
#define KAFKA_FETCH_EPOCH_FINAL (-1)

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 replica_id;   /* follower broker id, or KAFKA_CONSUMER_REPLICA_ID */
    gint64 max_wait_ms;
    gint64 min_bytes;
    gint64 max_bytes;
    gint8 isolation;     /* 0 read_uncommitted, 1 read_committed */
    gint32 session_id;   /* KAFKA_FETCH_SESSION_ID_INVALID: none */
    gint32 session_epoch;
    /* A full fetch: every partition to fetch. An incremental one: the
     * partitions added to the session or whose fetch state changed. */
    GArray *partitions;  /* KFetchPartition (owned) */
    /* An incremental fetch: the partitions leaving the session. */
    GArray *forgotten;   /* KTopicPartition (owned) */
} KFetchRequest;

/* An aborted transaction in a fetch answer (Kafka's AbortedTransaction). */
typedef struct {
    gint64 producer_id;
    gint64 first_offset;
} KAbortedTxn;

typedef struct {
    KTopicPartition tp;
    KafkaError error;
    gint64 high_watermark;
    gint64 log_start_offset;
    gint64 last_stable_offset;
    gint64 log_end_offset;   /* the leader's LEO, sent with OFFSET_OUT_OF_RANGE */
    GPtrArray *batches;  /* PlogBatch (owned; frees them): what consumers get;
                          * NULL for followers and with an error */
    /* read_committed: the aborted transactions overlapping what was read
     * (KAbortedTxn, owned); NULL otherwise. */
    GArray *aborted_transactions;
    /* To followers: the batches as encoded in the leader's log (Kafka sends
     * them zero-copy), and their logical size. NULL for consumers, with an
     * error, and for a follower already at the leader's LEO. */
    GByteArray *encoded;
    gint64 encoded_size_bytes;
} KFetchPartitionResponse;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    /* A session-level error (FETCH_SESSION_ID_NOT_FOUND,
     * INVALID_FETCH_SESSION_EPOCH): then no partitions. */
    KafkaError error;
    gint32 session_id;   /* the session it belongs to; INVALID: none */
    /* All requested partitions (full fetch), or only those with records,
     * a new HW or log start, or an error (incremental fetch). */
    GArray *partitions;  /* KFetchPartitionResponse (owned, with their batches) */
} KFetchResponse;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 controller_id;
    gint32 controller_epoch;
    GArray *partitions;  /* KPartitionState */
    /* NULL, or more states, after `partitions`, interned in the receiving
     * broker's pool, as KUpdateMetadataRequest's `pooled` (a KRaft broker's
     * own LeaderAndIsr) */
    GPtrArray *pooled;
    GArray *live_leaders; /* KBrokerEndpoint: where the leaders are */
} KLeaderAndIsrRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
} KControllerResponse; /* LeaderAndIsr, UpdateMetadata and StopReplica responses */

/* A broker asks the controller to move its leaderships away before it stops
 * (Kafka's ControlledShutdownRequest). */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 broker_id;
} KControlledShutdownRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    /* Partitions the broker still leads with other replicas assigned: the
     * broker retries while any remain (Kafka's partitionsRemaining). */
    guint32 partitions_remaining;
} KControlledShutdownResponse;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 controller_id;
    gint32 controller_epoch;
    GArray *live_brokers; /* KBrokerEndpoint */
    /* KPartitionState; may be shared with other requests
     * (kproto_update_metadata_share_partitions): read only once sent */
    GArray *partitions;
    /* NULL, or more states, after `partitions`, already interned in the
     * receiving broker's MetadataPool (metadata_pool.h): a reference each,
     * which the array's free function releases. A KRaft broker hands its
     * own cache what its image changed this way; at a million partitions a
     * copy of each state for each of thirty brokers would take gigabytes. */
    GPtrArray *pooled;
} KUpdateMetadataRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    /* The topics asked about (char*, owned), as Kafka's MetadataRequest
     * v1+ carries them: NULL asks for every topic (the null list), an empty
     * array for none (only the brokers). kproto_metadata_request_add_topic
     * fills it. */
    GPtrArray *topics;
} KMetadataRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 controller_id;
    GArray *brokers;     /* KBrokerEndpoint */
    /* KPartitionState: by topic (in the order the request names them, else
     * sorted), then by partition */
    GArray *partitions;
} KMetadataResponse;

typedef struct {
    KTopicPartition tp;
    gint32 current_leader_epoch;
    gint32 leader_epoch;     /* the epoch whose end offset is asked */
    KafkaError error;        /* response */
    gint32 end_epoch;        /* response: largest epoch <= leader_epoch */
    gint64 end_offset;       /* response */
} KEpochPartition;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint32 replica_id;
    GArray *partitions; /* KEpochPartition; the response fills the answer fields */
} KEpochMessage; /* OffsetsForLeaderEpoch request and response */

/* InitProducerId. A request without a transactional id ("") asks any broker
 * for a fresh idempotent producer id; with one, it goes to the transaction
 * coordinator, which bumps the id's epoch (fencing older instances). A
 * request with `bump` (KIP-360) comes from a running instance closing a
 * sequence gap: it carries its producer id and epoch, and is fenced when
 * they are no longer the id's current ones. */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    gboolean bump;         /* request */
    gint64 producer_id;    /* response; request with `bump`: the requester's */
    gint16 producer_epoch; /* the same */
    char transactional_id[KAFKA_TXN_ID_MAX + 1]; /* request */
    gint32 transaction_timeout_ms;               /* request */
} KInitProducerIdMessage; /* request and response */

/* ---- the group protocol ---- */

/* Group and member ids are bounded so messages stay flat; a member id is the
 * client id, a dash and a coordinator-made suffix, as Kafka makes them. */
#define KAFKA_GROUP_ID_MAX 63
#define KAFKA_MEMBER_ID_MAX 95
/* JoinGroup's generation before any (Kafka's JoinGroupRequest.UNKNOWN_GENERATION_ID)
 * and an OffsetCommit from a consumer outside any group (manual assign). */
#define KAFKA_GENERATION_NONE (-1)

/* FindCoordinator's key type (Kafka's CoordinatorType). */
typedef enum {
    KAFKA_COORDINATOR_GROUP = 0,
    KAFKA_COORDINATOR_TRANSACTION = 1,
} KCoordinatorType;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    char group_id[KAFKA_GROUP_ID_MAX + 1]; /* the key: a group id or a transactional id */
    gint8 key_type;                        /* KCoordinatorType */
} KFindCoordinatorRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    gint32 coordinator_id; /* broker id, -1 with an error */
    SimNodeId node;        /* where that broker is */
} KFindCoordinatorResponse;

/* One topic of a subscription. */
typedef struct {
    char name[KAFKA_TOPIC_NAME_MAX + 1];
} KTopicName;

/* JoinGroup. The member's one supported protocol is its assignor
 * (AssignorStrategy); its metadata is the ConsumerProtocol subscription:
 * topics, the partitions it owns and the generation they date from (for the
 * sticky assignor). */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1]; /* "" for a new member */
    char client_id[KAFKA_GROUP_ID_MAX + 1];
    gint32 session_timeout_ms;
    gint32 rebalance_timeout_ms; /* the consumer's max.poll.interval.ms */
    gint32 protocol;             /* AssignorStrategy */
    gint32 owned_generation;     /* KAFKA_GENERATION_NONE: owns nothing */
    GArray *topics;              /* KTopicName (owned) */
    GArray *owned;               /* KTopicPartition (owned) */
} KJoinGroupRequest;

/* A member's subscription as the group leader receives it. */
typedef struct {
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
} KMemberTopic;

/* A partition a member owns (JoinGroup) or is assigned (SyncGroup). */
typedef struct {
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    KTopicPartition tp;
} KMemberPartition;

typedef struct {
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 owned_generation;
} KMemberGeneration;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    gint32 generation_id;
    gint32 protocol;                         /* AssignorStrategy */
    char leader_id[KAFKA_MEMBER_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    /* Only the leader's answer lists the members (sorted by member id). */
    GArray *members;       /* KMemberGeneration (owned) */
    GArray *subscriptions; /* KMemberTopic (owned) */
    GArray *owned;         /* KMemberPartition (owned) */
} KJoinGroupResponse;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 generation_id;
    GArray *assignments; /* KMemberPartition (owned): the leader's, empty otherwise */
} KSyncGroupRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    GArray *assignment; /* KTopicPartition (owned), sorted */
} KSyncGroupResponse;

/* Heartbeat and LeaveGroup requests. */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 generation_id;
} KGroupRequest;

/* Heartbeat and LeaveGroup responses. */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
} KGroupResponse;

/* ConsumerGroupHeartbeat (KIP-848, Kafka 4.0's ConsumerGroupHeartbeatRequest
 * v0). Kafka sends the subscription and the owned partitions only when they
 * changed (null otherwise) and names topics by id; ksim sends both every
 * time, by name. The member epoch is 0 to join, -1 to leave. */
#define KAFKA_MEMBER_EPOCH_JOIN 0
#define KAFKA_MEMBER_EPOCH_LEAVE (-1)
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1]; /* "" to join as a new member */
    char client_id[KAFKA_GROUP_ID_MAX + 1];
    gint32 member_epoch;
    gint32 rebalance_timeout_ms; /* the consumer's max.poll.interval.ms */
    gint32 server_assignor;      /* group.remote.assignor (ServerAssignorKind); -1: null */
    GArray *topics;              /* KTopicName (owned): the subscription */
    GArray *owned;               /* KTopicPartition (owned): the partitions it owns now */
} KConsumerHeartbeatRequest;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 member_epoch;
    gint32 heartbeat_interval_ms;
    /* The partitions the member may own now (Kafka's assignment field,
     * which omits it when unchanged; ksim always sends it), sorted. */
    GArray *assignment; /* KTopicPartition (owned) */
} KConsumerHeartbeatResponse;

typedef struct {
    KTopicPartition tp;
    gint64 offset; /* committed: the next offset to read; -1 none (OffsetFetch) */
    KafkaError error;
    /* The committed leader epoch (KIP-320: OffsetCommit v7+, OffsetFetch
     * v5+): the leader epoch of the record before `offset`, with which the
     * consumer that reads from it validates it; -1: none (Kafka's
     * RecordBatch.NO_PARTITION_LEADER_EPOCH). */
    gint32 leader_epoch;
} KOffsetPartition;

/* OffsetCommit and OffsetFetch, request and response. A commit carries the
 * member and generation (KAFKA_GENERATION_NONE outside a group); a fetch
 * only the group. A response's `error` is a group-level error (OffsetFetch);
 * partition errors are in the entries. */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 generation_id;
    GArray *partitions; /* KOffsetPartition (owned) */
    /* OffsetFetch only (KIP-447): a partition with a transactional offset
     * commit still pending answers UNSTABLE_OFFSET_COMMIT, so a
     * read_committed consumer waits for the transaction's outcome. */
    gboolean require_stable;
    /* TxnOffsetCommit only: the transaction's producer. */
    char transactional_id[KAFKA_TXN_ID_MAX + 1];
    gint64 producer_id;
    gint16 producer_epoch;
} KOffsetMessage; /* also TxnOffsetCommit, request and response */

/* ---- the transaction protocol ---- */

/* AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, request and response: a
 * response carries the correlation id and `error` only (Kafka answers
 * AddPartitionsToTxn per partition; its errors are the same for all). */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    KafkaError error;                            /* response */
    char transactional_id[KAFKA_TXN_ID_MAX + 1];
    gint64 producer_id;
    gint16 producer_epoch;
    char group_id[KAFKA_GROUP_ID_MAX + 1];       /* AddOffsetsToTxn */
    gboolean committed;                          /* EndTxn: TRUE commit, FALSE abort */
    GArray *partitions;                          /* KTopicPartition (owned): AddPartitionsToTxn */
    /* AddPartitionsToTxn v4 from a broker (KIP-890): TRUE asks only whether
     * the partitions are in the transaction (verification); FALSE, with
     * transaction_version 2, adds them. */
    gboolean verify_only;
    /* Requests: the transaction version the sender uses (EndTxn v5 and the
     * broker's add for produce v12 are 2); 0 for older clients. The EndTxn
     * response of version 2 carries the producer id and epoch the
     * coordinator bumped to in producer_id and producer_epoch. */
    gint8 transaction_version;
} KTxnMessage;

typedef struct {
    KTopicPartition tp;
    KafkaError error; /* response */
} KTxnMarkerPartition;

/* WriteTxnMarkers (one marker: Kafka batches several per request), request
 * and response. */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint64 producer_id;
    gint16 producer_epoch;
    gboolean committed;       /* COMMIT or ABORT marker */
    gint32 coordinator_epoch; /* the coordinator's leader epoch of its partition */
    GArray *partitions;       /* KTxnMarkerPartition (owned) */
} KTxnMarkersMessage;

/* Kafka's name of a message type's API with "request" or "response", e.g.
 * "LeaderAndIsr request"; NULL for a type that is not a Kafka message. */
const char *kafka_msg_type_name(guint type);
/* TRUE for a request type (a response type is its request's + 1). */
gboolean kafka_msg_type_is_request(guint type);

/* A new zeroed message of `type`, with its size and free function set. The
 * arrays of the type are created empty. (transfer full) */
void *kproto_new(KafkaMsgType type);

/* `name`'s interned copy: the same pointer for every equal name, for the
 * life of the process. */
const char *ktopic_intern(const char *name);
/* A list of at most KAFKA_REPLICAS_MAX broker ids (a replica set, an ISR)
 * interned: the same pointer for every equal list of `n` ids, for the life
 * of the process, so that a replica keeps 8 bytes for each instead of room
 * for the largest. Read-only; never NULL (for n = 0 too). */
const gint32 *kbroker_ids_intern(const gint32 *ids, guint n);
/* Sets a topic-partition, asserting the name fits; the name is interned. */
void ktp_set(KTopicPartition *tp, const char *topic, gint32 partition);
gboolean ktp_equal(const KTopicPartition *a, const KTopicPartition *b);
/* Orders by topic, then partition. */
int ktp_compare(const KTopicPartition *a, const KTopicPartition *b);
/* MurmurHash3's 32-bit finalizer: every input bit moves every output bit,
 * so keys of small integers spread over a hash table's buckets. */
guint khash_mix(guint h);
/* GHashTable functions for KTopicPartition keys. */
guint ktp_hash(gconstpointer key);
gboolean ktp_hash_equal(gconstpointer a, gconstpointer b);
/* "topic-partition", as Kafka names a partition's log directory. (transfer full) */
char *ktp_name(const KTopicPartition *tp);

gboolean kpartition_state_in_isr(const KPartitionState *state, gint32 broker_id);
/* The node of broker `broker_id` in an array of KBrokerEndpoint, or
 * SIM_NODE_NONE. */
SimNodeId kbroker_endpoint_node(const GArray *endpoints, gint32 broker_id);
gboolean kpartition_state_has_replica(const KPartitionState *state, gint32 broker_id);

/* The partition state znode's data: "leader=L leader_epoch=E
 * controller_epoch=C isr=a,b,c". The replicas and zk_version are not part of
 * it (the replicas live in the topic's assignment znode, the version in the
 * znode's stat). */
void kpartition_state_serialize(const KPartitionState *state, GString *out);
/* Parses the znode data into leader, epochs and ISR; FALSE if malformed. */
gboolean kpartition_state_parse(const char *data, gsize len, KPartitionState *state);

/* Copies a group or member id into a message field, asserting it fits. */
void kproto_set_id(char *field, gsize field_size, const char *id);
#define KPROTO_SET_ID(field, id) kproto_set_id((field), sizeof(field), (id))

/* Recomputes a message's size on the wire (after batches are attached). */
void kproto_update_size(SimMsg *msg);
/* Frees what a KFetchPartitionResponse owns (the clear function of
 * KFetchResponse.partitions); its pointers may be NULL. */
void kproto_fetch_partition_response_clear(gpointer data);
/* Adds `topic` to the request's topics, which it makes a list (not every
 * topic) if it was not one. */
void kproto_metadata_request_add_topic(KMetadataRequest *request, const char *topic);
/* Makes `request` carry `partitions` (KPartitionState), shared with
 * whoever else holds it (a reference is taken): the controller sends every
 * broker the same states. Its own, empty, array is dropped. */
void kproto_update_metadata_share_partitions(KUpdateMetadataRequest *request, GArray *partitions);
/* How many partition states `request` carries, copied and pooled. */
guint kproto_update_metadata_count(const KUpdateMetadataRequest *request);
/* The `i`th of them. (transfer none) */
const KPartitionState *kproto_update_metadata_state(const KUpdateMetadataRequest *request, guint i);
/* The same for a LeaderAndIsr or StopReplica request. */
guint kproto_leader_and_isr_count(const KLeaderAndIsrRequest *request);
const KPartitionState *kproto_leader_and_isr_state(const KLeaderAndIsrRequest *request, guint i);
/* Makes the request ask for no topic: only the brokers. */
void kproto_metadata_request_no_topics(KMetadataRequest *request);

#endif
