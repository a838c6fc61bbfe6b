/* kafka_proto: constructors, sizes and destructors of the protocol messages. */
#include "kafka_proto.h"

#include "sim_assert.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Approximate fixed costs on the wire, per request and per partition entry. */
#define HEADER_BYTES 40u
#define PARTITION_ENTRY_BYTES 40u
/* A live broker in LeaderAndIsr and UpdateMetadata: id, host, port, listener. */
#define BROKER_ENTRY_BYTES 32u

void
kproto_fetch_partition_response_clear(gpointer data)
{
    KFetchPartitionResponse *partition = data;
    if (partition->batches != NULL)
        g_ptr_array_free(partition->batches, TRUE);
    if (partition->encoded != NULL)
        g_byte_array_unref(partition->encoded);
    if (partition->aborted_transactions != NULL)
        g_array_free(partition->aborted_transactions, TRUE);
}

static void
free_produce_request(SimMsg *msg)
{
    KProduceRequest *request = (KProduceRequest *)msg;
    plog_batch_free(request->batch);
    g_free(request);
}

static void
free_fetch_request(SimMsg *msg)
{
    KFetchRequest *request = (KFetchRequest *)msg;
    g_array_free(request->partitions, TRUE);
    g_array_free(request->forgotten, TRUE);
    g_free(request);
}

static void
free_fetch_response(SimMsg *msg)
{
    KFetchResponse *response = (KFetchResponse *)msg;
    g_array_free(response->partitions, TRUE);
    g_free(response);
}

static void
free_leader_and_isr(SimMsg *msg)
{
    KLeaderAndIsrRequest *request = (KLeaderAndIsrRequest *)msg;
    g_array_free(request->partitions, TRUE);
    if (request->pooled != NULL)
        g_ptr_array_unref(request->pooled);
    g_array_free(request->live_leaders, TRUE);
    g_free(request);
}

static void
free_update_metadata(SimMsg *msg)
{
    KUpdateMetadataRequest *request = (KUpdateMetadataRequest *)msg;
    g_array_unref(request->partitions);
    if (request->pooled != NULL)
        g_ptr_array_unref(request->pooled);
    g_array_free(request->live_brokers, TRUE);
    g_free(request);
}

static void
free_metadata_request(SimMsg *msg)
{
    KMetadataRequest *request = (KMetadataRequest *)msg;
    if (request->topics != NULL)
        g_ptr_array_unref(request->topics);
    g_free(request);
}

static gpointer
copy_string(gconstpointer text, gpointer user_data)
{
    (void)user_data;
    return g_strdup(text);
}

static SimMsg *
clone_metadata_request(const SimMsg *msg)
{
    const KMetadataRequest *from = (const KMetadataRequest *)msg;
    KMetadataRequest *to = g_memdup2(from, sizeof *from);
    if (from->topics != NULL) {
        to->topics = g_ptr_array_copy(from->topics, copy_string, NULL);
        g_ptr_array_set_free_func(to->topics, g_free);
    }
    return &to->base;
}

void
kproto_update_metadata_share_partitions(KUpdateMetadataRequest *request, GArray *partitions)
{
    KSIM_ASSERT(request->partitions->len == 0);
    g_array_unref(request->partitions);
    request->partitions = g_array_ref(partitions);
}

static guint
states_count(const GArray *partitions, const GPtrArray *pooled)
{
    return partitions->len + (pooled != NULL ? pooled->len : 0);
}

static const KPartitionState *
states_at(const GArray *partitions, const GPtrArray *pooled, guint i)
{
    KSIM_ASSERT(i < states_count(partitions, pooled));
    if (i < partitions->len)
        return &g_array_index(partitions, KPartitionState, i);
    return g_ptr_array_index(pooled, i - partitions->len);
}

guint
kproto_update_metadata_count(const KUpdateMetadataRequest *request)
{
    return states_count(request->partitions, request->pooled);
}

const KPartitionState *
kproto_update_metadata_state(const KUpdateMetadataRequest *request, guint i)
{
    return states_at(request->partitions, request->pooled, i);
}

guint
kproto_leader_and_isr_count(const KLeaderAndIsrRequest *request)
{
    return states_count(request->partitions, request->pooled);
}

const KPartitionState *
kproto_leader_and_isr_state(const KLeaderAndIsrRequest *request, guint i)
{
    return states_at(request->partitions, request->pooled, i);
}

void
kproto_metadata_request_no_topics(KMetadataRequest *request)
{
    if (request->topics == NULL)
        request->topics = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_set_size(request->topics, 0);
}

void
kproto_metadata_request_add_topic(KMetadataRequest *request, const char *topic)
{
    if (request->topics == NULL)
        request->topics = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(request->topics, g_strdup(topic));
}

static void
free_metadata_response(SimMsg *msg)
{
    KMetadataResponse *response = (KMetadataResponse *)msg;
    g_array_free(response->partitions, TRUE);
    g_array_free(response->brokers, TRUE);
    g_free(response);
}

static void
free_epoch(SimMsg *msg)
{
    KEpochMessage *message = (KEpochMessage *)msg;
    g_array_free(message->partitions, TRUE);
    g_free(message);
}

static void
free_join_request(SimMsg *msg)
{
    KJoinGroupRequest *request = (KJoinGroupRequest *)msg;
    g_array_free(request->topics, TRUE);
    g_array_free(request->owned, TRUE);
    g_free(request);
}

static void
free_join_response(SimMsg *msg)
{
    KJoinGroupResponse *response = (KJoinGroupResponse *)msg;
    g_array_free(response->members, TRUE);
    g_array_free(response->subscriptions, TRUE);
    g_array_free(response->owned, TRUE);
    g_free(response);
}

static void
free_sync_request(SimMsg *msg)
{
    KSyncGroupRequest *request = (KSyncGroupRequest *)msg;
    g_array_free(request->assignments, TRUE);
    g_free(request);
}

static void
free_sync_response(SimMsg *msg)
{
    KSyncGroupResponse *response = (KSyncGroupResponse *)msg;
    g_array_free(response->assignment, TRUE);
    g_free(response);
}

static void
free_consumer_heartbeat_request(SimMsg *msg)
{
    KConsumerHeartbeatRequest *request = (KConsumerHeartbeatRequest *)msg;
    g_array_free(request->topics, TRUE);
    g_array_free(request->owned, TRUE);
    g_free(request);
}

static void
free_consumer_heartbeat_response(SimMsg *msg)
{
    KConsumerHeartbeatResponse *response = (KConsumerHeartbeatResponse *)msg;
    g_array_free(response->assignment, TRUE);
    g_free(response);
}

static void
free_offset_message(SimMsg *msg)
{
    KOffsetMessage *message = (KOffsetMessage *)msg;
    g_array_free(message->partitions, TRUE);
    g_free(message);
}

static void
free_txn_message(SimMsg *msg)
{
    KTxnMessage *message = (KTxnMessage *)msg;
    g_array_free(message->partitions, TRUE);
    g_free(message);
}

static void
free_txn_markers(SimMsg *msg)
{
    KTxnMarkersMessage *message = (KTxnMarkersMessage *)msg;
    g_array_free(message->partitions, TRUE);
    g_free(message);
}

/* The transaction protocol's messages; NULL for other types. */
static SimMsg *
txn_message_new(KafkaMsgType type)
{
    switch (type) {
    case KMSG_ADD_PARTITIONS_TO_TXN_REQUEST:
    case KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE:
    case KMSG_ADD_OFFSETS_TO_TXN_REQUEST:
    case KMSG_ADD_OFFSETS_TO_TXN_RESPONSE:
    case KMSG_END_TXN_REQUEST:
    case KMSG_END_TXN_RESPONSE: {
        KTxnMessage *message = g_new0(KTxnMessage, 1);
        message->partitions = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        message->base.free_fn = free_txn_message;
        return (SimMsg *)message;
    }
    case KMSG_WRITE_TXN_MARKERS_REQUEST:
    case KMSG_WRITE_TXN_MARKERS_RESPONSE: {
        KTxnMarkersMessage *message = g_new0(KTxnMarkersMessage, 1);
        message->partitions = g_array_new(FALSE, TRUE, sizeof(KTxnMarkerPartition));
        message->base.free_fn = free_txn_markers;
        return (SimMsg *)message;
    }
    default:
        return NULL;
    }
}

/* The group protocol's messages; NULL for other types. */
static SimMsg *
group_message_new(KafkaMsgType type)
{
    SimMsg *msg = NULL;
    switch (type) {
    case KMSG_FIND_COORDINATOR_REQUEST:
        msg = (SimMsg *)g_new0(KFindCoordinatorRequest, 1);
        msg->size_of = sizeof(KFindCoordinatorRequest);
        break;
    case KMSG_FIND_COORDINATOR_RESPONSE:
        msg = (SimMsg *)g_new0(KFindCoordinatorResponse, 1);
        msg->size_of = sizeof(KFindCoordinatorResponse);
        break;
    case KMSG_JOIN_GROUP_REQUEST: {
        KJoinGroupRequest *request = g_new0(KJoinGroupRequest, 1);
        request->topics = g_array_new(FALSE, TRUE, sizeof(KTopicName));
        request->owned = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        msg = (SimMsg *)request;
        msg->free_fn = free_join_request;
        break;
    }
    case KMSG_JOIN_GROUP_RESPONSE: {
        KJoinGroupResponse *response = g_new0(KJoinGroupResponse, 1);
        response->members = g_array_new(FALSE, TRUE, sizeof(KMemberGeneration));
        response->subscriptions = g_array_new(FALSE, TRUE, sizeof(KMemberTopic));
        response->owned = g_array_new(FALSE, TRUE, sizeof(KMemberPartition));
        msg = (SimMsg *)response;
        msg->free_fn = free_join_response;
        break;
    }
    case KMSG_SYNC_GROUP_REQUEST: {
        KSyncGroupRequest *request = g_new0(KSyncGroupRequest, 1);
        request->assignments = g_array_new(FALSE, TRUE, sizeof(KMemberPartition));
        msg = (SimMsg *)request;
        msg->free_fn = free_sync_request;
        break;
    }
    case KMSG_SYNC_GROUP_RESPONSE: {
        KSyncGroupResponse *response = g_new0(KSyncGroupResponse, 1);
        response->assignment = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        msg = (SimMsg *)response;
        msg->free_fn = free_sync_response;
        break;
    }
    case KMSG_HEARTBEAT_REQUEST:
    case KMSG_LEAVE_GROUP_REQUEST:
        msg = (SimMsg *)g_new0(KGroupRequest, 1);
        msg->size_of = sizeof(KGroupRequest);
        break;
    case KMSG_HEARTBEAT_RESPONSE:
    case KMSG_LEAVE_GROUP_RESPONSE:
        msg = (SimMsg *)g_new0(KGroupResponse, 1);
        msg->size_of = sizeof(KGroupResponse);
        break;
    case KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST: {
        KConsumerHeartbeatRequest *request = g_new0(KConsumerHeartbeatRequest, 1);
        request->topics = g_array_new(FALSE, TRUE, sizeof(KTopicName));
        request->owned = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        msg = (SimMsg *)request;
        msg->free_fn = free_consumer_heartbeat_request;
        break;
    }
    case KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE: {
        KConsumerHeartbeatResponse *response = g_new0(KConsumerHeartbeatResponse, 1);
        response->assignment = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        msg = (SimMsg *)response;
        msg->free_fn = free_consumer_heartbeat_response;
        break;
    }
    case KMSG_OFFSET_COMMIT_REQUEST:
    case KMSG_OFFSET_COMMIT_RESPONSE:
    case KMSG_OFFSET_FETCH_REQUEST:
    case KMSG_OFFSET_FETCH_RESPONSE:
    case KMSG_TXN_OFFSET_COMMIT_REQUEST:
    case KMSG_TXN_OFFSET_COMMIT_RESPONSE: {
        KOffsetMessage *message = g_new0(KOffsetMessage, 1);
        message->partitions = g_array_new(FALSE, TRUE, sizeof(KOffsetPartition));
        msg = (SimMsg *)message;
        msg->free_fn = free_offset_message;
        break;
    }
    default:
        break;
    }
    return msg;
}

void *
kproto_new(KafkaMsgType type)
{
    SimMsg *msg = NULL;
    switch (type) {
    case KMSG_PRODUCE_REQUEST:
        msg = (SimMsg *)g_new0(KProduceRequest, 1);
        msg->free_fn = free_produce_request;
        break;
    case KMSG_PRODUCE_RESPONSE:
        msg = (SimMsg *)g_new0(KProduceResponse, 1);
        msg->size_of = sizeof(KProduceResponse);
        break;
    case KMSG_FETCH_REQUEST: {
        KFetchRequest *request = g_new0(KFetchRequest, 1);
        request->partitions = g_array_new(FALSE, TRUE, sizeof(KFetchPartition));
        request->forgotten = g_array_new(FALSE, TRUE, sizeof(KTopicPartition));
        /* Sessionless unless the fetcher asks for a session (a fetch
         * session handler sets both). */
        request->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
        request->session_epoch = KAFKA_FETCH_EPOCH_FINAL;
        msg = (SimMsg *)request;
        msg->free_fn = free_fetch_request;
        break;
    }
    case KMSG_FETCH_RESPONSE: {
        KFetchResponse *response = g_new0(KFetchResponse, 1);
        response->partitions = g_array_new(FALSE, TRUE, sizeof(KFetchPartitionResponse));
        g_array_set_clear_func(response->partitions, kproto_fetch_partition_response_clear);
        msg = (SimMsg *)response;
        msg->free_fn = free_fetch_response;
        break;
    }
    case KMSG_LEADER_AND_ISR_REQUEST:
    case KMSG_STOP_REPLICA_REQUEST: {
        KLeaderAndIsrRequest *request = g_new0(KLeaderAndIsrRequest, 1);
        request->partitions = g_array_new(FALSE, TRUE, sizeof(KPartitionState));
        request->live_leaders = g_array_new(FALSE, TRUE, sizeof(KBrokerEndpoint));
        msg = (SimMsg *)request;
        msg->free_fn = free_leader_and_isr;
        break;
    }
    case KMSG_UPDATE_METADATA_REQUEST: {
        KUpdateMetadataRequest *request = g_new0(KUpdateMetadataRequest, 1);
        request->partitions = g_array_new(FALSE, TRUE, sizeof(KPartitionState));
        request->live_brokers = g_array_new(FALSE, TRUE, sizeof(KBrokerEndpoint));
        msg = (SimMsg *)request;
        msg->free_fn = free_update_metadata;
        break;
    }
    case KMSG_LEADER_AND_ISR_RESPONSE:
    case KMSG_UPDATE_METADATA_RESPONSE:
    case KMSG_STOP_REPLICA_RESPONSE:
        msg = (SimMsg *)g_new0(KControllerResponse, 1);
        msg->size_of = sizeof(KControllerResponse);
        break;
    case KMSG_METADATA_REQUEST:
        msg = (SimMsg *)g_new0(KMetadataRequest, 1);
        msg->free_fn = free_metadata_request;
        msg->clone_fn = clone_metadata_request;
        break;
    case KMSG_METADATA_RESPONSE: {
        KMetadataResponse *response = g_new0(KMetadataResponse, 1);
        response->partitions = g_array_new(FALSE, TRUE, sizeof(KPartitionState));
        response->brokers = g_array_new(FALSE, TRUE, sizeof(KBrokerEndpoint));
        msg = (SimMsg *)response;
        msg->free_fn = free_metadata_response;
        break;
    }
    case KMSG_EPOCH_REQUEST:
    case KMSG_EPOCH_RESPONSE: {
        KEpochMessage *message = g_new0(KEpochMessage, 1);
        message->partitions = g_array_new(FALSE, TRUE, sizeof(KEpochPartition));
        msg = (SimMsg *)message;
        msg->free_fn = free_epoch;
        break;
    }
    case KMSG_INIT_PRODUCER_ID_REQUEST:
    case KMSG_INIT_PRODUCER_ID_RESPONSE:
        msg = (SimMsg *)g_new0(KInitProducerIdMessage, 1);
        msg->size_of = sizeof(KInitProducerIdMessage);
        break;
    case KMSG_CONTROLLED_SHUTDOWN_REQUEST:
        msg = (SimMsg *)g_new0(KControlledShutdownRequest, 1);
        msg->size_of = sizeof(KControlledShutdownRequest);
        break;
    case KMSG_CONTROLLED_SHUTDOWN_RESPONSE:
        msg = (SimMsg *)g_new0(KControlledShutdownResponse, 1);
        msg->size_of = sizeof(KControlledShutdownResponse);
        break;
    default:
        msg = group_message_new(type);
        if (msg == NULL)
            msg = txn_message_new(type);
        break;
    }
    KSIM_ASSERT(msg != NULL);
    msg->type = type;
    msg->size_bytes = HEADER_BYTES;
    return msg;
}

/* The bytes of one partition state as Kafka 2.8's wire format carries it,
 * partitions grouped under their topic's name:
 *  - LeaderAndIsr v4 (LeaderAndIsrPartitionState): partition, controller
 *    epoch, leader, leader epoch, ISR, zk version, replicas, adding and
 *    removing replicas, is_new: 41 bytes and 4 per ISR member and replica;
 *  - UpdateMetadata v6 (UpdateMetadataPartitionState): partition,
 *    controller epoch, leader, leader epoch, ISR, zk version, replicas,
 *    offline replicas: 32 bytes and 4 per ISR member and replica;
 *  - StopReplica v3 (StopReplicaPartitionState): partition, leader epoch,
 *    delete: 9 bytes.
 * A topic's name costs its length and 2, and 4 for its partition array. */
static guint64
controller_request_bytes(guint32 type, const GArray *partitions, const GPtrArray *pooled)
{
    guint64 size = 0;
    const char *topic = NULL;
    for (guint i = 0; i < states_count(partitions, pooled); i++) {
        const KPartitionState *ps = states_at(partitions, pooled, i);
        if (topic == NULL || strcmp(topic, ps->tp.topic) != 0) {
            topic = ps->tp.topic;
            size += 2 + strlen(topic) + 4;
        }
        guint64 members = 4u * ((guint64)ps->n_isr + ps->n_replicas);
        if (type == KMSG_LEADER_AND_ISR_REQUEST)
            size += 41 + members;
        else if (type == KMSG_UPDATE_METADATA_REQUEST)
            size += 32 + members;
        else
            size += 9;
    }
    return size;
}

void
kproto_update_size(SimMsg *msg)
{
    guint64 size = HEADER_BYTES;
    switch ((KafkaMsgType)msg->type) {
    case KMSG_PRODUCE_REQUEST: {
        KProduceRequest *request = (KProduceRequest *)msg;
        size += PARTITION_ENTRY_BYTES + (guint64)plog_batch_size_bytes(request->batch);
        break;
    }
    case KMSG_FETCH_REQUEST:
        size += PARTITION_ENTRY_BYTES * ((KFetchRequest *)msg)->partitions->len;
        size += PARTITION_ENTRY_BYTES * ((KFetchRequest *)msg)->forgotten->len;
        break;
    case KMSG_FETCH_RESPONSE: {
        GArray *partitions = ((KFetchResponse *)msg)->partitions;
        for (guint i = 0; i < partitions->len; i++) {
            KFetchPartitionResponse *p = &g_array_index(partitions, KFetchPartitionResponse, i);
            size += PARTITION_ENTRY_BYTES + (guint64)p->encoded_size_bytes;
            for (guint b = 0; p->batches != NULL && b < p->batches->len; b++)
                size += (guint64)plog_batch_size_bytes(g_ptr_array_index(p->batches, b));
        }
        break;
    }
    case KMSG_LEADER_AND_ISR_REQUEST:
    case KMSG_STOP_REPLICA_REQUEST: {
        const KLeaderAndIsrRequest *request = (const KLeaderAndIsrRequest *)msg;
        size += controller_request_bytes(msg->type, request->partitions, request->pooled) +
                BROKER_ENTRY_BYTES * request->live_leaders->len;
        break;
    }
    case KMSG_UPDATE_METADATA_REQUEST: {
        const KUpdateMetadataRequest *request = (const KUpdateMetadataRequest *)msg;
        size += controller_request_bytes(msg->type, request->partitions, request->pooled) +
                BROKER_ENTRY_BYTES * request->live_brokers->len;
        break;
    }
    case KMSG_METADATA_REQUEST: {
        /* A topic's name costs its length and 2 (MetadataRequestTopic). */
        const GPtrArray *topics = ((const KMetadataRequest *)msg)->topics;
        for (guint i = 0; topics != NULL && i < topics->len; i++)
            size += 2 + strlen(g_ptr_array_index(topics, i));
        break;
    }
    case KMSG_METADATA_RESPONSE:
        size += PARTITION_ENTRY_BYTES * ((KMetadataResponse *)msg)->partitions->len;
        break;
    case KMSG_JOIN_GROUP_REQUEST: {
        KJoinGroupRequest *request = (KJoinGroupRequest *)msg;
        size += PARTITION_ENTRY_BYTES * (request->topics->len + request->owned->len);
        break;
    }
    case KMSG_JOIN_GROUP_RESPONSE: {
        KJoinGroupResponse *response = (KJoinGroupResponse *)msg;
        size += PARTITION_ENTRY_BYTES * (response->members->len + response->subscriptions->len +
                                         response->owned->len);
        break;
    }
    case KMSG_SYNC_GROUP_REQUEST:
        size += PARTITION_ENTRY_BYTES * ((KSyncGroupRequest *)msg)->assignments->len;
        break;
    case KMSG_SYNC_GROUP_RESPONSE:
        size += PARTITION_ENTRY_BYTES * ((KSyncGroupResponse *)msg)->assignment->len;
        break;
    case KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST: {
        const KConsumerHeartbeatRequest *request = (const KConsumerHeartbeatRequest *)msg;
        size += PARTITION_ENTRY_BYTES * (request->topics->len + request->owned->len);
        break;
    }
    case KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE:
        size += PARTITION_ENTRY_BYTES * ((KConsumerHeartbeatResponse *)msg)->assignment->len;
        break;
    case KMSG_OFFSET_COMMIT_REQUEST:
    case KMSG_OFFSET_COMMIT_RESPONSE:
    case KMSG_OFFSET_FETCH_REQUEST:
    case KMSG_OFFSET_FETCH_RESPONSE:
    case KMSG_TXN_OFFSET_COMMIT_REQUEST:
    case KMSG_TXN_OFFSET_COMMIT_RESPONSE:
        size += PARTITION_ENTRY_BYTES * ((KOffsetMessage *)msg)->partitions->len;
        break;
    case KMSG_ADD_PARTITIONS_TO_TXN_REQUEST:
        size += PARTITION_ENTRY_BYTES * ((KTxnMessage *)msg)->partitions->len;
        break;
    case KMSG_WRITE_TXN_MARKERS_REQUEST:
    case KMSG_WRITE_TXN_MARKERS_RESPONSE:
        size += PARTITION_ENTRY_BYTES * ((KTxnMarkersMessage *)msg)->partitions->len;
        break;
    default:
        break;
    }
    msg->size_bytes = (guint32)MIN(size, (guint64)G_MAXUINT32);
}

/* An interned name: the text's hash is kept before the text, so hashing a
 * partition reads a number instead of walking its topic's name. */
typedef struct {
    guint32 magic;
    guint hash; /* g_str_hash of name */
    char name[];
} InternedTopic;

#define INTERNED_TOPIC_MAGIC 0x6b746f70u /* "ktop" */

/* The process's table of names, never freed (a run names a few hundred
 * topics at most; a process making many runs shares them, and a fuzzing
 * process keeps every valid name its inputs declared). ksim names
 * topics from one thread, as it runs everything (DESIGN: no threads in
 * sim/ or models/), so the table takes no lock. */
static GHashTable *interned_topics; /* name -> InternedTopic * (owned) */

/* The names interned last, by their address: most callers name a topic by
 * a pointer they got from here, and an interned name's address is never
 * another string's (the names are never freed), so a pointer found here is
 * its own answer without hashing the text. */
#define INTERNED_RECENT 256u
static const char *interned_recent[INTERNED_RECENT];

static guint
interned_recent_slot(const char *name)
{
    return (guint)(((guintptr)name >> 4) * G_GUINT64_CONSTANT(0x9e3779b97f4a7c15) >> 56) %
           INTERNED_RECENT;
}

const char *
ktopic_intern(const char *name)
{
    KSIM_ASSERT(name != NULL);
    guint slot = interned_recent_slot(name);
    if (interned_recent[slot] == name)
        return name;
    gsize len = strlen(name);
    KSIM_ASSERT(len <= KAFKA_TOPIC_NAME_MAX);
    if (interned_topics == NULL)
        interned_topics = g_hash_table_new(g_str_hash, g_str_equal);
    InternedTopic *topic = g_hash_table_lookup(interned_topics, name);
    if (topic == NULL) {
        topic = g_malloc(sizeof *topic + len + 1);
        topic->magic = INTERNED_TOPIC_MAGIC;
        topic->hash = g_str_hash(name);
        memcpy(topic->name, name, len + 1);
        g_hash_table_insert(interned_topics, topic->name, topic);
    }
    interned_recent[interned_recent_slot(topic->name)] = topic->name;
    return topic->name;
}

/* Interned broker id lists: each is stored as its count followed by its ids
 * (`list[0]` = n), and handed out from `list + 1`. Never freed, as the
 * topic names: a run's replica sets and ISRs are at most a few per
 * partition, and equal ones across runs are shared. */
static GHashTable *interned_ids; /* gint32 *list -> itself (owned) */

static guint
ids_hash(gconstpointer key)
{
    const gint32 *list = key;
    guint hash = (guint)list[0];
    for (gint32 i = 1; i <= list[0]; i++)
        hash = hash * 31u + (guint)list[i];
    return hash;
}

static gboolean
ids_equal(gconstpointer a, gconstpointer b)
{
    const gint32 *x = a, *y = b;
    return x[0] == y[0] && memcmp(x + 1, y + 1, sizeof(gint32) * (gsize)x[0]) == 0;
}

const gint32 *
kbroker_ids_intern(const gint32 *ids, guint n)
{
    KSIM_ASSERT(n <= KAFKA_REPLICAS_MAX);
    KSIM_ASSERT(ids != NULL || n == 0);
    gint32 key[1 + KAFKA_REPLICAS_MAX];
    key[0] = (gint32)n;
    if (n > 0)
        memcpy(key + 1, ids, sizeof(gint32) * n);
    if (interned_ids == NULL)
        interned_ids = g_hash_table_new_full(ids_hash, ids_equal, g_free, NULL);
    gint32 *list = g_hash_table_lookup(interned_ids, key);
    if (list == NULL) {
        list = g_memdup2(key, sizeof(gint32) * (1 + n));
        g_hash_table_add(interned_ids, list);
    }
    return list + 1;
}

/* The hash of an interned name's text ("" for none: equal partitions still
 * hash alike, which is all a hash owes). */
static guint
topic_hash(const char *topic)
{
    if (topic == NULL)
        return g_str_hash("");
    const InternedTopic *interned =
        (const InternedTopic *)(const void *)(topic - offsetof(InternedTopic, name));
    KSIM_ASSERT(interned->magic == INTERNED_TOPIC_MAGIC);
    return interned->hash;
}

void
ktp_set(KTopicPartition *tp, const char *topic, gint32 partition)
{
    tp->topic = ktopic_intern(topic);
    tp->partition = partition;
}

void
kproto_set_id(char *field, gsize field_size, const char *id)
{
    KSIM_ASSERT(strlen(id) < field_size);
    memset(field, 0, field_size);
    g_strlcpy(field, id, field_size);
}

gboolean
ktp_equal(const KTopicPartition *a, const KTopicPartition *b)
{
    return a->partition == b->partition && a->topic == b->topic;
}

/* No topic (NULL) sorts before every name, "" included, so that compare,
 * equal and hash agree: two partitions compare 0 only when ktp_equal. */
int
ktp_compare(const KTopicPartition *a, const KTopicPartition *b)
{
    if (a->topic != b->topic) {
        if (a->topic == NULL || b->topic == NULL)
            return a->topic == NULL ? -1 : 1;
        int by_topic = strcmp(a->topic, b->topic);
        if (by_topic != 0)
            return by_topic;
    }
    return (a->partition > b->partition) - (a->partition < b->partition);
}

guint
khash_mix(guint h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* The partition is mixed before it meets the name's hash: the sum
 * `g_str_hash(topic) * 31 + partition` this replaced gave the 100,000
 * partitions of 100 topics named t00..t99 only 10,486 distinct hashes (a
 * digit more in a name moves its hash by 31, as a partition 31 higher
 * does), and a lookup compared names with about ten of them. */
guint
ktp_hash(gconstpointer key)
{
    const KTopicPartition *tp = key;
    return khash_mix(topic_hash(tp->topic) ^ khash_mix((guint)tp->partition));
}

gboolean
ktp_hash_equal(gconstpointer a, gconstpointer b)
{
    return ktp_equal(a, b);
}

char *
ktp_name(const KTopicPartition *tp)
{
    return g_strdup_printf("%s-%d", tp->topic, tp->partition);
}

gboolean
kpartition_state_in_isr(const KPartitionState *state, gint32 broker_id)
{
    for (guint i = 0; i < state->n_isr; i++) {
        if (state->isr[i] == broker_id)
            return TRUE;
    }
    return FALSE;
}

SimNodeId
kbroker_endpoint_node(const GArray *endpoints, gint32 broker_id)
{
    for (guint i = 0; i < endpoints->len; i++) {
        const KBrokerEndpoint *e = &g_array_index(endpoints, KBrokerEndpoint, i);
        if (e->broker_id == broker_id)
            return e->node;
    }
    return SIM_NODE_NONE;
}

gboolean
kpartition_state_has_replica(const KPartitionState *state, gint32 broker_id)
{
    for (guint i = 0; i < state->n_replicas; i++) {
        if (state->replicas[i] == broker_id)
            return TRUE;
    }
    return FALSE;
}

void
kpartition_state_serialize(const KPartitionState *state, GString *out)
{
    g_string_append_printf(out, "leader=%d leader_epoch=%d controller_epoch=%d isr=", state->leader,
                           state->leader_epoch, state->controller_epoch);
    for (guint i = 0; i < state->n_isr; i++)
        g_string_append_printf(out, "%s%d", i ? "," : "", state->isr[i]);
}

static gboolean
parse_isr(const char *text, KPartitionState *state)
{
    state->n_isr = 0;
    if (*text == '\0')
        return TRUE;
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        if (state->n_isr == KAFKA_REPLICAS_MAX)
            return FALSE;
        char *end = NULL;
        gint64 id = g_ascii_strtoll(items[i], &end, 10);
        if (end == items[i] || *end != '\0')
            return FALSE;
        state->isr[state->n_isr++] = (gint32)id;
    }
    return TRUE;
}

gboolean
kpartition_state_parse(const char *data, gsize len, KPartitionState *state)
{
    g_autofree char *text = g_strndup(data, len);
    int leader, leader_epoch, controller_epoch, consumed = 0;
    if (sscanf(text, "leader=%d leader_epoch=%d controller_epoch=%d isr=%n", &leader,
               &leader_epoch, &controller_epoch, &consumed) != 3 || consumed == 0)
        return FALSE;
    state->leader = leader;
    state->leader_epoch = leader_epoch;
    state->controller_epoch = controller_epoch;
    return parse_isr(text + consumed, state);
}

const char *
kafka_msg_type_name(guint type)
{
    /* The APIs in KafkaMsgType order, requests and responses alternating. */
    static const char *const names[] = {
        "Produce request", "Produce response", "Fetch request", "Fetch response",
        "LeaderAndIsr request", "LeaderAndIsr response", "UpdateMetadata request",
        "UpdateMetadata response", "Metadata request", "Metadata response",
        "OffsetsForLeaderEpoch request", "OffsetsForLeaderEpoch response",
        "InitProducerId request", "InitProducerId response", "FindCoordinator request",
        "FindCoordinator response", "JoinGroup request", "JoinGroup response",
        "SyncGroup request", "SyncGroup response", "Heartbeat request", "Heartbeat response",
        "LeaveGroup request", "LeaveGroup response", "OffsetCommit request",
        "OffsetCommit response", "OffsetFetch request", "OffsetFetch response",
        "AddPartitionsToTxn request", "AddPartitionsToTxn response", "AddOffsetsToTxn request",
        "AddOffsetsToTxn response", "EndTxn request", "EndTxn response",
        "WriteTxnMarkers request", "WriteTxnMarkers response", "TxnOffsetCommit request",
        "TxnOffsetCommit response", "ControlledShutdown request", "ControlledShutdown response",
        "StopReplica request", "StopReplica response", "ConsumerGroupHeartbeat request",
        "ConsumerGroupHeartbeat response",
    };
    G_STATIC_ASSERT(G_N_ELEMENTS(names) ==
                    KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE - KMSG_PRODUCE_REQUEST + 1);
    if (type < KMSG_PRODUCE_REQUEST || type > KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE)
        return NULL;
    return names[type - KMSG_PRODUCE_REQUEST];
}

gboolean
kafka_msg_type_is_request(guint type)
{
    return kafka_msg_type_name(type) != NULL && (type - KMSG_PRODUCE_REQUEST) % 2 == 0;
}
