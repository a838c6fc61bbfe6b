/*
 * broker: the broker process — start and crash, registration with the
 * coordination node, controller election, request dispatch, controller
 * requests (LeaderAndIsr, UpdateMetadata) and metadata answers. Replication
 * lives in the replica manager (replica.h, replica*.c; the HW checkpoint
 * beside the HW in replica_hw.c), the controller in controller.c.
 *
 * Invariants:
 *  1. `state` is non-NULL exactly while the broker's node is UP or PAUSED.
 *  2. The broker acts on a controller request only if its controller epoch is
 *     at least the highest the broker has seen (a deposed controller is fenced).
 *  3. `controller` is non-NULL only while this broker believes it holds
 *     /controller.
 *  4. Controller requests wait in `controller_requests` only while the head
 *     is being applied (its timer pending), and are applied in arrival order
 *     (controller_request_arrived, controller_request_done_cb).
 *
 * Group requests (FindCoordinator ... OffsetFetch, TxnOffsetCommit) go to the
 * group coordinator, group_coord.c; transaction requests (FindCoordinator for
 * a transactional id, InitProducerId with one, AddPartitionsToTxn,
 * AddOffsetsToTxn, EndTxn, and the responses to its WriteTxnMarkers) to
 * txn_coord.c; a WriteTxnMarkers request to the replica manager
 * (replica_markers.c). Both coordinators are created with the broker's
 * services (broker_services.h) and see nothing else of it.
 *
 * Process lifecycle:
 *   (new) --broker_new/restart--> STARTING: logs recovered, session opening
 *   STARTING --session established--> REGISTERING: create /brokers/ids/<id>
 *   REGISTERING --created--> RUNNING: elect controller (create /controller)
 *   RUNNING --session expired--> REGISTERING (resign as controller first)
 *   RUNNING --broker_shutdown--> (stopping, broker_shutdown.c) --exit--> (down)
 *   any --crash--> (down): broker_crash frees `state`
 */
#include "broker.h"

#include "broker_internal.h"
#include "broker_kraft.h"
#include "fetch_session.h"
#include "group_coord.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"
#include "txn_coord.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define REGISTRATION_RETRY_MS 1000
/* A bound on controller requests waiting to be applied: a controller sends
 * a broker one at a time, so a few controllers' worth at most. */
#define CONTROLLER_REQUESTS_MAX 1024u

static void broker_start(Broker *broker);
static void register_broker(BrokerState *state);
static void elect_controller(BrokerState *state);

/* ---- internal topics of the coordinators ---- */

void
broker_internal_topic_failed(BrokerState *state, guint kind)
{
    state->internal_topic_requested[kind] = FALSE;
}

static void
internal_topic_created(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    guint kind = GPOINTER_TO_UINT(arg);
    /* Created, or created by another broker first; otherwise try again at
     * the next FindCoordinator. */
    if (result->error != ZK_OK && result->error != ZK_NODE_EXISTS)
        state->internal_topic_requested[kind] = FALSE;
}

/* Kafka's auto-creation of an internal topic (__consumer_offsets,
 * __transaction_state): in ZooKeeper mode AdminUtils.assignReplicasToBrokers
 * over the live brokers (sorted by id), a random start and shift; in KRaft
 * mode a CreateTopics to the controller. */
static void
create_internal_topic(BrokerState *state, guint kind, const char *topic, gint32 partitions,
                      gint16 replication_factor)
{
    static const char *const streams[] = {"offsets-topic", "txn-topic"};
    Broker *broker = state->broker;
    guint n = state->live_brokers->len;
    KSIM_ASSERT(kind < G_N_ELEMENTS(streams));
    if (state->internal_topic_requested[kind])
        return;
    if (state->kraft != NULL) {
        /* KRaft: the controller places it (AutoTopicCreationManager's
         * CreateTopics, with the topic's configs). */
        const TopicConfig *config = broker_topic_config(broker, topic);
        state->internal_topic_requested[kind] = broker_kraft_create_topic(
            state->kraft, kind, topic, partitions, replication_factor,
            config->unclean_leader_election, config->min_insync_replicas);
        return;
    }
    if (n == 0 || state->zk == NULL)
        return;
    state->internal_topic_requested[kind] = TRUE;
    guint rf = MIN((guint)replication_factor, n);
    rf = MIN(rf, (guint)KAFKA_REPLICAS_MAX);
    g_autofree char *stream = g_strdup_printf("broker-%d/%s", broker->config.broker_id,
                                              streams[kind]);
    SimRng *rng = sim_world_rng(broker->world, stream);
    guint start = (guint)sim_rng_range(rng, 0, n);
    guint shift = (guint)sim_rng_range(rng, 0, n);
    GString *data = g_string_new(NULL);
    for (gint32 p = 0; p < partitions; p++) {
        if (p > 0 && (guint)p % n == 0)
            shift++;
        guint first = ((guint)p + start) % n;
        g_string_append_printf(
            data, "%s%d:%d", p ? "|" : "", p,
            g_array_index(state->live_brokers, KBrokerEndpoint, first).broker_id);
        for (guint j = 0; j + 1 < rf; j++) {
            guint index = (first + 1 + (shift + j) % (n - 1)) % n;
            g_string_append_printf(
                data, ",%d", g_array_index(state->live_brokers, KBrokerEndpoint, index).broker_id);
        }
    }
    g_autofree char *path = g_strdup_printf("/brokers/topics/%s", topic);
    zk_client_create(state->zk, path, data->str, data->len, 0, internal_topic_created,
                        GUINT_TO_POINTER(kind));
    g_string_free(data, TRUE);
}

void
broker_find_coordinator(BrokerState *state, SimNodeId from,
                        const KFindCoordinatorRequest *request, const char *topic,
                        gint32 partitions, gint16 replication_factor, gint32 partition,
                        KafkaError empty_key_error)
{
    KFindCoordinatorResponse *response = kproto_new(KMSG_FIND_COORDINATOR_RESPONSE);
    response->correlation_id = request->correlation_id;
    response->error = KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    response->coordinator_id = -1;
    response->node = SIM_NODE_NONE;
    KTopicPartition tp;
    ktp_set(&tp, topic, partition);
    const KPartitionState *ps = metadata_cache_lookup(state->metadata, &tp);
    SimNodeId node = ps != NULL && ps->leader != KAFKA_NO_LEADER
                         ? kbroker_endpoint_node(state->live_brokers, ps->leader)
                         : SIM_NODE_NONE;
    if (request->group_id[0] == '\0') {
        response->error = empty_key_error;
    } else if (ps == NULL) {
        create_internal_topic(state, (guint)request->key_type, topic, partitions,
                              replication_factor);
    } else if (node != SIM_NODE_NONE) {
        response->error = KAFKA_ERROR_NONE;
        response->coordinator_id = ps->leader;
        response->node = node;
    }
    broker_send(state, from, &response->base);
}

/* The broker host's wall clock (Kafka's Time.milliseconds()): record and
 * marker timestamps, LogAppendTime, time-based retention and rolls, and the
 * transaction coordinator's start times and timeouts read it, as Kafka's do.
 * Timers and the ISR's lag run on virtual time. */
gint64
broker_now_ms(const Broker *broker)
{
    return sim_node_wall_ms(broker->world, broker->node);
}

/* ---- helpers shared with replica.c and controller.c ---- */

void
broker_send(BrokerState *state, SimNodeId to, SimMsg *msg)
{
    if (state->requests != NULL && request_channel_respond(state->requests, to, msg))
        return; /* its network thread writes it */
    sim_net_send(sim_world_net(state->broker->world), state->broker->node, to, msg);
}

G_STATIC_ASSERT(KAFKA_REPLICAS_MAX <= HISTORY_ISR_MAX);

guint32
broker_history_isr(Broker *broker, const gint32 *isr, guint n_isr)
{
    if (broker->history == NULL)
        return 0;
    return history_isr_intern(broker->history, isr, n_isr);
}

void
broker_record_metric(Broker *broker, HistoryMetricKind kind, guint32 count, gint64 value)
{
    if (broker->history != NULL)
        history_metric(broker->history, sim_now_ns(broker->world), kind,
                       broker->config.broker_id, count, value);
}

void
broker_record_event(Broker *broker, HistoryEventKind kind, const KTopicPartition *tp,
                    const HistoryEvent *fields, const char *format, ...)
{
    if (broker->history == NULL)
        return;
    HistoryEvent event = {0};
    if (fields != NULL)
        event = *fields;
    event.time_ns = sim_now_ns(broker->world);
    event.kind = kind;
    event.broker = broker->config.broker_id;
    event.partition = -1;
    if (fields != NULL)
        event.partition = fields->partition;
    if (tp != NULL) {
        event.topic = history_topic(broker->history, tp->topic);
        event.partition = tp->partition;
    }
    va_list args;
    va_start(args, format);
    event.text = g_strdup_vprintf(format, args);
    va_end(args);
    history_event(broker->history, &event);
    g_free(event.text);
}

const TopicConfig *
broker_topic_config(Broker *broker, const char *topic)
{
    const TopicConfig *config = g_hash_table_lookup(broker->topic_configs, topic);
    if (config != NULL)
        return config;
    /* A topic without its own config takes the broker's values. */
    TopicConfig *fresh = g_new0(TopicConfig, 1);
    topic_config_from_broker(fresh, &broker->config);
    g_hash_table_insert(broker->topic_configs, g_strdup(topic), fresh);
    return fresh;
}

void *
broker_zk_context(BrokerState *state, gsize size)
{
    void *context = g_malloc0(size);
    g_ptr_array_add(state->zk_pending, context);
    return context;
}

void
broker_zk_context_done(BrokerState *state, void *context)
{
    gboolean removed = g_ptr_array_remove_fast(state->zk_pending, context);
    KSIM_ASSERT(removed);
}

/* ---- the process ---- */

static void
state_free(BrokerState *state)
{
    if (state->controller != NULL)
        controller_free(state->controller);
    broker_kraft_free(state->kraft);
    group_coord_free(state->groups);
    txn_coord_free(state->txns);
    replica_markers_state_free(state);
    replica_verify_state_free(state);
    replica_state_free(state);
    producer_ids_free(state->producer_ids);
    zk_client_free(state->zk);
    metadata_cache_free(state->metadata);
    g_array_free(state->live_brokers, TRUE);
    g_ptr_array_free(state->zk_pending, TRUE);
    g_queue_clear_full(&state->controller_requests, (GDestroyNotify)sim_msg_free);
    broker_services_free(state->services);
    request_channel_free(state->requests);
    g_free(state);
}

static void
broker_crash(SimWorld *world, void *ctx)
{
    Broker *broker = ctx;
    (void)world;
    KSIM_ASSERT(broker->state != NULL);
    state_free(broker->state);
    broker->state = NULL;
    /* Combined mode: the process that died ran the voter too. */
    if (broker->raft != NULL)
        raft_node_host_crash(broker->raft);
}

static void
broker_restart(SimWorld *world, void *ctx)
{
    Broker *broker = ctx;
    (void)world;
    KSIM_ASSERT(broker->state == NULL);
    /* SharedServer starts the raft manager before the broker. */
    if (broker->raft != NULL)
        raft_node_host_restart(broker->raft);
    broker_start(broker);
}

static gboolean
from_controller_is_current(BrokerState *state, gint32 controller_epoch)
{
    if (controller_epoch < state->controller_epoch)
        SIM_MARK(state->broker->world, controller_epoch_conflict);
    if (controller_epoch < state->controller_epoch)
        return FALSE;
    state->controller_epoch = controller_epoch;
    return TRUE;
}

static void
answer_controller(BrokerState *state, SimNodeId to, KafkaMsgType type, gint32 correlation_id,
                  KafkaError error)
{
    KControllerResponse *response = kproto_new(type);
    response->correlation_id = correlation_id;
    response->error = error;
    broker_send(state, to, &response->base);
}

static void
handle_leader_and_isr(BrokerState *state, SimNodeId from, KLeaderAndIsrRequest *request)
{
    if (!from_controller_is_current(state, request->controller_epoch)) {
        answer_controller(state, from, KMSG_LEADER_AND_ISR_RESPONSE, request->correlation_id,
                          KAFKA_ERROR_STALE_CONTROLLER_EPOCH);
        return;
    }
    state->controller_id = request->controller_id;
    replica_handle_leader_and_isr(state, request);
    if (state->kraft == NULL) /* KRaft's come from the broker's own metadata replay */
        answer_controller(state, from, KMSG_LEADER_AND_ISR_RESPONSE, request->correlation_id,
                          KAFKA_ERROR_NONE);
}

/* StopReplica without deletion (a controlled shutdown's follower
 * replicas): the broker stops fetching those partitions and keeps their logs. */
static void
handle_stop_replica(BrokerState *state, SimNodeId from, KLeaderAndIsrRequest *request)
{
    if (!from_controller_is_current(state, request->controller_epoch)) {
        answer_controller(state, from, KMSG_STOP_REPLICA_RESPONSE, request->correlation_id,
                          KAFKA_ERROR_STALE_CONTROLLER_EPOCH);
        return;
    }
    replica_handle_stop_replica(state, request);
    answer_controller(state, from, KMSG_STOP_REPLICA_RESPONSE, request->correlation_id,
                      KAFKA_ERROR_NONE);
}

static gint
endpoint_compare(gconstpointer a, gconstpointer b)
{
    const KBrokerEndpoint *x = a, *y = b;
    return (x->broker_id > y->broker_id) - (x->broker_id < y->broker_id);
}

static void
broker_handle_update_metadata(BrokerState *state, SimNodeId from, KUpdateMetadataRequest *request)
{
    (void)from;
    g_array_set_size(state->live_brokers, 0);
    g_array_append_vals(state->live_brokers, request->live_brokers->data,
                        request->live_brokers->len);
    g_array_sort(state->live_brokers, endpoint_compare);
    for (guint i = 0; i < request->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index(request->partitions, KPartitionState, i);
        const KPartitionState *shared = metadata_pool_intern(state->broker->metadata_pool, ps);
        metadata_cache_replace(state->metadata, shared);
    }
    for (guint i = 0; request->pooled != NULL && i < request->pooled->len; i++)
        metadata_cache_replace(state->metadata,
                               metadata_pool_acquire(g_ptr_array_index(request->pooled, i)));
}

static void
handle_update_metadata(BrokerState *state, SimNodeId from, KUpdateMetadataRequest *request)
{
    if (!from_controller_is_current(state, request->controller_epoch)) {
        answer_controller(state, from, KMSG_UPDATE_METADATA_RESPONSE, request->correlation_id,
                          KAFKA_ERROR_STALE_CONTROLLER_EPOCH);
        return;
    }
    state->controller_id = request->controller_id;
    broker_handle_update_metadata(state, from, request);
    if (state->kraft == NULL)
        answer_controller(state, from, KMSG_UPDATE_METADATA_RESPONSE, request->correlation_id,
                          KAFKA_ERROR_NONE);
}

/* ---- controller requests ---- */

/* Kafka's broker applies a controller request on a request handler thread,
 * under the replica manager's replicaStateChangeLock for LeaderAndIsr and
 * StopReplica (ReplicaManager.becomeLeaderOrFollower, Kafka 2.8) and the
 * metadata cache's lock for UpdateMetadata, one partition state after
 * another: its time grows with the partitions it carries. Here they are
 * applied one request at a time, in arrival order, each taking its
 * partition count times ksim.leader.and.isr.partition.time (LeaderAndIsr,
 * StopReplica) or ksim.update.metadata.partition.time (UpdateMetadata);
 * the request takes effect, and is answered, when that time is over. */

static gint64
controller_request_cost_ns(const BrokerState *state, const SimMsg *msg)
{
    const BrokerConfig *config = &state->broker->config;
    if (msg->type == KMSG_UPDATE_METADATA_REQUEST)
        return (gint64)kproto_update_metadata_count((const KUpdateMetadataRequest *)msg) *
               config->update_metadata_partition_ns;
    return (gint64)kproto_leader_and_isr_count((const KLeaderAndIsrRequest *)msg) *
           config->leader_and_isr_partition_ns;
}

static void
controller_request_apply(BrokerState *state, SimMsg *msg)
{
    if (msg->type == KMSG_LEADER_AND_ISR_REQUEST)
        handle_leader_and_isr(state, msg->from, (KLeaderAndIsrRequest *)msg);
    else if (msg->type == KMSG_UPDATE_METADATA_REQUEST)
        handle_update_metadata(state, msg->from, (KUpdateMetadataRequest *)msg);
    else
        handle_stop_replica(state, msg->from, (KLeaderAndIsrRequest *)msg);
    sim_msg_free(msg);
}

static void controller_request_next(BrokerState *state);

static void
controller_request_done_cb(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    BrokerState *state = broker->state;
    KSIM_ASSERT(state != NULL);
    state->controller_request_timer = SIM_EVENT_ID_NONE;
    SimMsg *head = g_queue_pop_head(&state->controller_requests);
    KSIM_ASSERT(head != NULL);
    if (broker_serving(state))
        controller_request_apply(state, head);
    else
        sim_msg_free(head); /* stopping: it is never answered */
    controller_request_next(state);
}

/* Starts applying the head of the queue, unless one is being applied. */
static void
controller_request_next(BrokerState *state)
{
    SimWorld *world = state->broker->world;
    if (sim_timer_pending(world, state->controller_request_timer) ||
        g_queue_is_empty(&state->controller_requests))
        return;
    const SimMsg *head = g_queue_peek_head(&state->controller_requests);
    state->controller_request_timer =
        sim_timer_set(world, state->broker->node, controller_request_cost_ns(state, head),
                      controller_request_done_cb, NULL);
}

void
broker_controller_request_arrived(BrokerState *state, SimMsg *msg)
{
    const BrokerConfig *config = &state->broker->config;
    if (config->leader_and_isr_partition_ns == 0 && config->update_metadata_partition_ns == 0) {
        controller_request_apply(state, msg);
        return;
    }
    KSIM_ASSERT(g_queue_get_length(&state->controller_requests) < CONTROLLER_REQUESTS_MAX);
    g_queue_push_tail(&state->controller_requests, msg);
    controller_request_next(state);
}

/* Appends the cached states of `topic`'s partitions, in partition order,
 * or of every partition when `topic` is NULL; returns how many. */
static guint
append_topic_states(const BrokerState *state, const char *topic, GArray *out)
{
    KTopicPartition first;
    if (topic != NULL)
        ktp_set(&first, topic, 0);
    MetadataCacheIter iter;
    metadata_cache_iter_init(state->metadata, topic != NULL ? &first : NULL, &iter);
    guint count = 0;
    for (const KPartitionState *ps; (ps = metadata_cache_iter_next(state->metadata, &iter));) {
        if (topic != NULL && strcmp(ps->tp.topic, topic) != 0)
            break;
        if (out != NULL)
            g_array_append_val(out, *ps);
        count++;
    }
    return count;
}

/* Metadata answers from the broker's own, possibly stale, cache: every
 * topic's partitions for a request that names none (a null list), else
 * those of the topics it names, in the order it names them, as Kafka's
 * KafkaApis.handleTopicMetadataRequest (3.x) answers the topics asked
 * about; a topic the cache does not know has no partition in the answer. */
static void
handle_metadata(BrokerState *state, SimNodeId from, KMetadataRequest *request)
{
    KMetadataResponse *response = kproto_new(KMSG_METADATA_RESPONSE);
    response->correlation_id = request->correlation_id;
    response->controller_id = state->controller_id;
    g_array_append_vals(response->brokers, state->live_brokers->data, state->live_brokers->len);
    if (request->topics == NULL) {
        append_topic_states(state, NULL, response->partitions);
    } else {
        for (guint i = 0; i < request->topics->len; i++)
            append_topic_states(state, g_ptr_array_index(request->topics, i),
                                response->partitions);
    }
    kproto_update_size(&response->base);
    broker_send(state, from, &response->base);
}

static void broker_dispatch(BrokerState *state, SimNodeId from, SimMsg *msg);

/* A request's I/O-thread service is over (request_channel.c). */
static void
request_handle_cb(void *owner, SimNodeId from, SimMsg *msg)
{
    BrokerState *state = owner;
    if (!broker_serving(state)) {
        sim_msg_free(msg); /* stopped meanwhile: never answered */
        return;
    }
    broker_dispatch(state, from, msg);
}

/* Combined mode: what the process's voter and controller take — the
 * quorum's messages and the requests to the controller (responses to this
 * broker's own requests are the broker's). */
static gboolean
voter_takes(const SimMsg *msg)
{
    if (msg->type >= RAFT_MSG_FIRST && msg->type <= RAFT_MSG_LAST)
        return TRUE;
    switch (msg->type) {
    case KRAFT_MSG_REGISTRATION_REQUEST:
    case KRAFT_MSG_HEARTBEAT_REQUEST:
    case KRAFT_MSG_ALTER_PARTITION_REQUEST:
    case KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST:
    case KRAFT_MSG_CREATE_TOPICS_REQUEST:
        return TRUE;
    default:
        return FALSE;
    }
}

static void
broker_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Broker *broker = ctx;
    BrokerState *state = broker->state;
    (void)world;
    KSIM_ASSERT(state != NULL);
    if (broker->raft != NULL && voter_takes(msg)) {
        raft_node_host_message(broker->raft, from, msg);
        return;
    }
    if (state->zk != NULL && zk_client_handle_message(state->zk, from, msg))
        return;
    if (state->kraft != NULL && broker_kraft_handle_message(state->kraft, from, msg))
        return;
    if (!broker_serving(state)) {
        /* Stopping: the socket server reads no more requests. */
        sim_msg_free(msg);
        return;
    }
    if (request_channel_takes(msg)) {
        request_channel_arrived(state->requests, from, msg);
        return;
    }
    broker_dispatch(state, from, msg);
}

static void
broker_dispatch(BrokerState *state, SimNodeId from, SimMsg *msg)
{
    if (state->controller != NULL && controller_handle_message(state->controller, from, msg))
        return;
    if (txn_coord_handle_message(state->txns, from, msg) ||
        group_coord_handle_message(state->groups, from, msg)) {
        sim_msg_free(msg);
        return;
    }
    switch ((KafkaMsgType)msg->type) {
    case KMSG_PRODUCE_REQUEST:
        replica_handle_produce(state, from, (KProduceRequest *)msg);
        break;
    case KMSG_FETCH_REQUEST:
        replica_handle_fetch(state, from, (KFetchRequest *)msg);
        return; /* the fetch path keeps or frees the request itself */
    case KMSG_FETCH_RESPONSE:
        replica_handle_fetch_response(state, from, (KFetchResponse *)msg);
        break;
    case KMSG_EPOCH_REQUEST:
        replica_handle_epoch_request(state, from, (KEpochMessage *)msg);
        break;
    case KMSG_EPOCH_RESPONSE:
        replica_handle_epoch_response(state, from, (KEpochMessage *)msg);
        break;
    case KMSG_LEADER_AND_ISR_REQUEST:
    case KMSG_UPDATE_METADATA_REQUEST:
    case KMSG_STOP_REPLICA_REQUEST:
        broker_controller_request_arrived(state, msg);
        return; /* kept, or handled and freed */
    case KMSG_CONTROLLED_SHUTDOWN_RESPONSE:
        broker_shutdown_handle_response(state, (const KControlledShutdownResponse *)msg);
        break;
    case KMSG_METADATA_REQUEST:
        handle_metadata(state, from, (KMetadataRequest *)msg);
        break;
    case KMSG_INIT_PRODUCER_ID_REQUEST:
        producer_ids_handle_request(state->producer_ids, from, (KInitProducerIdMessage *)msg);
        break;
    case KMSG_WRITE_TXN_MARKERS_REQUEST:
        replica_handle_write_txn_markers(state, from, (const KTxnMarkersMessage *)msg);
        break;
    case KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE:
        replica_verify_handle_response(state, from, (const KTxnMessage *)msg);
        break;
    default:
        /* Late responses to a controller this broker no longer is. */
        break;
    }
    sim_msg_free(msg);
}

static void
broker_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Broker *broker = ctx;
    BrokerState *state = broker->state;
    (void)world;
    (void)reason;
    KSIM_ASSERT(state != NULL);
    if (broker->raft != NULL)
        raft_node_host_disconnect(broker->raft, peer);
    if (state->zk != NULL)
        zk_client_handle_disconnect(state->zk, peer);
    if (state->kraft != NULL)
        broker_kraft_peer_disconnected(state->kraft, peer);
    if (state->controller != NULL)
        controller_peer_disconnected(state->controller, peer);
    replica_peer_disconnected(state, peer);
    replica_verify_peer_disconnected(state, peer);
    txn_coord_peer_disconnected(state->txns, peer);
    request_channel_peer_disconnected(state->requests, peer);
}

static const SimNodeOps BROKER_OPS = {
    .message = broker_message,
    .disconnect = broker_disconnect,
    .crash = broker_crash,
    .restart = broker_restart,
};

/* ---- registration and controller election ---- */

static void
registration_retry(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    register_broker(broker->state);
}

static void
registered_cb(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    (void)arg;
    Broker *broker = state->broker;
    if (result->error == ZK_OK) {
        state->registered = TRUE;
        broker_record_event(broker, HISTORY_EVENT_SESSION, NULL, NULL,
                            "broker %d registered /brokers/ids/%d", broker->config.broker_id,
                            broker->config.broker_id);
        elect_controller(state);
        return;
    }
    /* The previous incarnation's ephemeral registration lingers until its
     * session expires; Kafka refuses to start until then, and a supervisor
     * starts it again. */
    sim_timer_set(broker->world, broker->node, REGISTRATION_RETRY_MS * SIM_NS_PER_MS,
                  registration_retry, NULL);
}

/* Kafka's brokers create the top-level paths they use if they are missing. */
static void
ensure_paths(BrokerState *state)
{
    static const char *const paths[] = {"/brokers", "/brokers/ids", "/brokers/topics",
                                        "/isr_change_notification"};
    for (guint i = 0; i < G_N_ELEMENTS(paths); i++)
        zk_client_create(state->zk, paths[i], "", 0, 0, NULL, NULL);
}

static void
register_broker(BrokerState *state)
{
    Broker *broker = state->broker;
    ensure_paths(state);
    g_autofree char *path = g_strdup_printf("/brokers/ids/%d", broker->config.broker_id);
    g_autofree char *data = g_strdup_printf("%u", broker->node);
    zk_client_create(state->zk, path, data, strlen(data), ZK_EPHEMERAL, registered_cb, NULL);
}

static void
controller_exists_cb(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    (void)arg;
    /* The controller vanished between our failed create and this check. */
    if (result->error == ZK_NO_NODE)
        elect_controller(state);
}

static void
controller_created_cb(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    (void)arg;
    if (result->error == ZK_OK) {
        if (state->controller == NULL) {
            state->controller = controller_new(state->services);
            controller_start(state->controller);
        }
        return;
    }
    if (result->error == ZK_NODE_EXISTS)
        zk_client_exists(state->zk, "/controller", TRUE, controller_exists_cb, NULL);
}

static void
elect_controller(BrokerState *state)
{
    g_autofree char *data = g_strdup_printf("%d", state->broker->config.broker_id);
    zk_client_create(state->zk, "/controller", data, strlen(data), ZK_EPHEMERAL,
                        controller_created_cb, NULL);
}

void
broker_resign_controller(BrokerState *state)
{
    if (state->controller == NULL)
        return;
    controller_free(state->controller);
    state->controller = NULL;
}

static void
zk_session_established(void *owner, gboolean is_new_session)
{
    BrokerState *state = owner;
    if (is_new_session)
        register_broker(state);
}

static void
zk_session_expired(void *owner)
{
    BrokerState *state = owner;
    Broker *broker = state->broker;
    /* Kafka's broker, told its session expired, resigns as controller and
     * registers again with a new session. Until then it has kept serving. */
    broker_record_event(broker, HISTORY_EVENT_SESSION, NULL, NULL,
                        "broker %d learnt its coordination session had expired",
                        broker->config.broker_id);
    broker_resign_controller(state);
    state->registered = FALSE;
    zk_client_new_session(state->zk);
}

static void
zk_watch_fired(void *owner, const char *path, ZkEventType type)
{
    BrokerState *state = owner;
    (void)type;
    if (strcmp(path, "/controller") == 0 && state->controller == NULL) {
        elect_controller(state);
        return;
    }
    if (state->controller != NULL)
        controller_watch_fired(state->controller, path);
}

static const ZkClientCallbacks ZK_CALLBACKS = {
    .session_established = zk_session_established,
    .session_expired = zk_session_expired,
    .disconnected = NULL,
    .watch_fired = zk_watch_fired,
};

static void
broker_start(Broker *broker)
{
    BrokerState *state = g_new0(BrokerState, 1);
    state->broker = broker;
    state->services = broker_services_new(state);
    state->requests = request_channel_new(broker->world, broker->node, &broker->config,
                                          broker->history, request_handle_cb, state);
    state->controller_id = -1;
    state->controller_epoch = -1;
    state->metadata = metadata_cache_new();
    state->live_brokers = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    replica_state_init(state);
    state->zk_pending = g_ptr_array_new_with_free_func(g_free);
    state->correlation_next = 1;
    state->shutdown_correlation = -1;
    state->shutdown_timer = SIM_EVENT_ID_NONE;
    g_queue_init(&state->controller_requests);
    state->controller_request_timer = SIM_EVENT_ID_NONE;
    state->producer_ids = producer_ids_new(state->services);
    broker->state = state;
    state->groups = group_coord_new(state->services);
    state->txns = txn_coord_new(state->services);
    replica_markers_state_init(state);
    replica_verify_state_init(state);
    /* Logs first: Kafka's LogManager recovers every log before the broker
     * registers, and reads the HW checkpoint. */
    SimDisk *disk = sim_node_disk(broker->world, broker->node);
    if (!sim_disk_io_error(disk))
        replica_load_logs(state);
    if (broker->n_kraft_voters > 0) {
        state->kraft = broker_kraft_new(state);
    } else {
        state->zk = zk_client_new(broker->world, broker->node, broker->zk_node,
                                  broker->config.zookeeper_session_timeout_ms * SIM_NS_PER_MS,
                                  &ZK_CALLBACKS, state);
        zk_client_set_max_in_flight(state->zk,
                                    (guint)broker->config.zookeeper_max_in_flight_requests);
    }
    /* The replica manager's and log manager's timers; the order they are set
     * in reaches the event queue, so it stays: the HW checkpoint, ISR
     * expiration, retention, the recovery-point checkpoint. */
    replica_hw_checkpoint_start(state);
    replica_isr_start(state);
    replica_retention_start(state);
    replica_recovery_points_start(state);
    /* Kafka's LogManager cannot validate a failed log directory at startup
     * (createAndValidateLogDirs, 2.8 and 3.4: "none of the specified log dirs
     * ... can be created or validated", then Exit.halt). */
    if (sim_disk_io_error(disk))
        broker_log_dir_failed(state, "startup");
}

/* Combined mode: the local voter's log advanced or its leader changed. */
static void
local_committed(void *user_data, RaftNode *raft, gint64 high_watermark)
{
    Broker *broker = user_data;
    (void)raft;
    (void)high_watermark;
    if (broker->state != NULL && broker->state->kraft != NULL)
        broker_kraft_local_advanced(broker->state->kraft);
}

static void
local_leader_changed(void *user_data, RaftNode *raft, gint32 epoch, gint32 leader_id)
{
    Broker *broker = user_data;
    (void)raft;
    (void)epoch;
    (void)leader_id;
    if (broker->state != NULL && broker->state->kraft != NULL)
        broker_kraft_local_advanced(broker->state->kraft);
}

static Broker *
broker_create(SimWorld *world, const char *name, const BrokerConfig *config, SimNodeId zk_node,
              const RaftVoter *voters, guint n_voters, const RaftConfig *raft,
              KraftRecordStore *store, History *history, const BrokerObserver *observer)
{
    KSIM_ASSERT(config->broker_id >= 0);
    Broker *broker = g_new0(Broker, 1);
    broker->world = world;
    broker->name = g_strdup(name);
    broker->config = *config;
    broker->zk_node = zk_node;
    broker->kraft_voters = n_voters > 0 ? g_memdup2(voters, sizeof(RaftVoter) * n_voters) : NULL;
    broker->n_kraft_voters = n_voters;
    broker->kraft_store = store;
    broker->kraft_clean_epoch = -1;
    broker->history = history;
    if (observer != NULL)
        broker->observer = *observer;
    broker->topic_configs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    broker->metadata_pool = metadata_pool_new();
    /* __transaction_state has its own min.insync.replicas. */
    TopicConfig txn_topic;
    topic_config_from_broker(&txn_topic, config);
    txn_topic.min_insync_replicas = config->transaction_state_log_min_isr;
    broker_set_topic_config(broker, TXN_STATE_TOPIC, &txn_topic);
    broker->node = sim_node_add(world, name, &BROKER_OPS, broker);
    if (raft != NULL) {
        broker->raft = raft_node_new_hosted(world, broker->node, config->broker_id, raft);
        RaftListener local = {local_committed, local_leader_changed, NULL, NULL};
        raft_node_add_local_listener(broker->raft, &local, broker);
    }
    if (history != NULL)
        history_set_process_name(history, (guint32)config->broker_id, name);
    broker_start(broker);
    return broker;
}

Broker *
broker_new(SimWorld *world, const char *name, const BrokerConfig *config, SimNodeId zk_node,
           History *history, const BrokerObserver *observer)
{
    return broker_create(world, name, config, zk_node, NULL, 0, NULL, NULL, history, observer);
}

Broker *
broker_new_kraft(SimWorld *world, const char *name, const BrokerConfig *config,
                 const RaftVoter *voters, guint n_voters, KraftRecordStore *store,
                 History *history, const BrokerObserver *observer)
{
    KSIM_ASSERT(n_voters > 0 && store != NULL);
    return broker_create(world, name, config, SIM_NODE_NONE, voters, n_voters, NULL, store,
                         history, observer);
}

Broker *
broker_new_combined(SimWorld *world, const char *name, const BrokerConfig *config,
                    const RaftVoter *voters, guint n_voters, const RaftConfig *raft,
                    KraftRecordStore *store, History *history, const BrokerObserver *observer)
{
    KSIM_ASSERT(n_voters > 0 && store != NULL && raft != NULL);
    gboolean voter = FALSE;
    for (guint i = 0; i < n_voters; i++)
        voter = voter || voters[i].id == config->broker_id;
    KSIM_ASSERT(voter);
    return broker_create(world, name, config, SIM_NODE_NONE, voters, n_voters, raft, store,
                         history, observer);
}

RaftNode *
broker_raft_node(const Broker *broker)
{
    return broker->raft;
}

void
broker_free(Broker *broker)
{
    if (broker == NULL)
        return;
    if (broker->state != NULL)
        state_free(broker->state);
    g_hash_table_destroy(broker->topic_configs);
    metadata_pool_unref(broker->metadata_pool);
    raft_node_free(broker->raft);
    g_free(broker->kraft_voters);
    g_free(broker->name);
    g_free(broker);
}

void
broker_share_metadata_pool(Broker *broker, MetadataPool *pool)
{
    KSIM_ASSERT(broker->state == NULL || metadata_cache_size(broker->state->metadata) == 0);
    MetadataPool *own = broker->metadata_pool;
    broker->metadata_pool = metadata_pool_ref(pool);
    metadata_pool_unref(own);
}

MetadataPool *
broker_metadata_pool(const Broker *broker)
{
    return broker->metadata_pool;
}

SimNodeId
broker_node(const Broker *broker)
{
    return broker->node;
}

gint32
broker_id(const Broker *broker)
{
    return broker->config.broker_id;
}

const BrokerConfig *
broker_config(const Broker *broker)
{
    return &broker->config;
}

void
broker_set_topic_config(Broker *broker, const char *topic, const TopicConfig *config)
{
    /* Changed in place: the topic's replicas point at it. */
    TopicConfig *own = g_hash_table_lookup(broker->topic_configs, topic);
    if (own != NULL)
        *own = *config;
    else
        g_hash_table_insert(broker->topic_configs, g_strdup(topic),
                            g_memdup2(config, sizeof *config));
}

gboolean
broker_running(const Broker *broker)
{
    return broker->state != NULL;
}

gboolean
broker_is_controller(const Broker *broker)
{
    return broker->state != NULL && broker->state->controller != NULL;
}

gint32
broker_controller_epoch(const Broker *broker)
{
    return broker->state != NULL ? broker->state->controller_epoch : -1;
}

void
broker_partition_info(const Broker *broker, const char *topic, gint32 partition,
                      BrokerPartitionInfo *info)
{
    memset(info, 0, sizeof *info);
    if (broker->state == NULL)
        return;
    KTopicPartition tp;
    ktp_set(&tp, topic, partition);
    Partition *p = replica_get(broker->state, &tp);
    if (p == NULL)
        return;
    info->present = TRUE;
    info->is_leader = p->is_leader;
    info->leader = p->leader_id;
    info->leader_epoch = p->leader_epoch;
    info->log_start = plog_log_start_offset(p->log);
    info->leo = plog_log_end_offset(p->log);
    info->hw = p->hw;
    info->lso = replica_last_stable_offset(p);
    info->open_transactions = plog_txn_state_ongoing_count(plog_txn_state(p->log));
    gint64 first_offset, timestamp_ms;
    info->txn_open_ms = -1;
    if (plog_txn_state_oldest_open(plog_txn_state(p->log), &first_offset, &timestamp_ms))
        info->txn_open_ms = MAX(broker_now_ms(broker) - timestamp_ms, 0);
    info->txn_max_timeout_ms = broker->config.transaction_max_timeout_ms;
    info->n_isr = p->n_isr;
    memcpy(info->isr, p->isr, sizeof(gint32) * p->n_isr); /* the rest zeroed above */
}

Plog *
broker_partition_log(const Broker *broker, const char *topic, gint32 partition)
{
    if (broker->state == NULL)
        return NULL;
    KTopicPartition tp;
    ktp_set(&tp, topic, partition);
    Partition *p = replica_get(broker->state, &tp);
    return p != NULL ? p->log : NULL;
}

GArray *
broker_partitions(const Broker *broker)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    if (broker->state == NULL)
        return out;
    for (guint i = 0; i < broker->state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(broker->state->partitions_sorted, i);
        g_array_append_val(out, p->tp);
    }
    return out;
}

guint
broker_fetch_sessions(const Broker *broker)
{
    return broker->state != NULL ? fetch_session_cache_size(broker->state->fetch_sessions) : 0;
}

guint
broker_metadata_partitions(const Broker *broker, const char *topic)
{
    KSIM_ASSERT(topic != NULL);
    return broker->state != NULL ? append_topic_states(broker->state, topic, NULL) : 0;
}

void
broker_check_invariants(const Broker *broker)
{
    if (broker->state == NULL)
        return;
    BrokerState *state = broker->state;
    SimNodeState node_state = sim_node_state(broker->world, broker->node);
    KSIM_ASSERT(node_state == SIM_NODE_UP || node_state == SIM_NODE_PAUSED);
    KSIM_ASSERT(state->broker == broker);
    if (state->controller != NULL)
        controller_check_invariants(state->controller);
    broker_services_check_invariants(broker->state);
    producer_ids_check_invariants(broker->state->producer_ids);
    replica_check_invariants(broker->state);
    group_coord_check_invariants(broker->state->groups);
    txn_coord_check_invariants(broker->state->txns);
    if (broker->state->zk != NULL)
        zk_client_check_invariants(broker->state->zk);
    else
        broker_kraft_check_invariants(broker->state->kraft);
    broker_shutdown_check_invariants(broker->state);
    request_channel_check_invariants(broker->state->requests);
    metadata_cache_check_invariants(broker->state->metadata);
    /* 4. A controller request is being applied exactly while one waits. */
    KSIM_ASSERT(sim_timer_pending(broker->world, state->controller_request_timer) ==
                !g_queue_is_empty(&state->controller_requests));
}

void
broker_check_logs(const Broker *broker)
{
    if (broker->state == NULL)
        return;
    for (guint i = 0; i < broker->state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(broker->state->partitions_sorted, i);
        plog_check_invariants(p->log);
    }
}
