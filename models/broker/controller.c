/*
 * controller: the Kafka controller, run by the broker that holds /controller.
 *
 * It fences itself with a controller epoch stored in /controller_epoch,
 * watches broker registrations (/brokers/ids), topics (/brokers/topics and
 * each topic's assignment) and ISR change notifications, and keeps every
 * partition's state znode (leader, leader epoch, ISR) right:
 *  - a new partition gets the first live replica of its assignment as leader
 *    and the live replicas as ISR;
 *  - a partition whose leader died gets the first live replica, in assignment
 *    order, that is in the ISR; if none and unclean.leader.election.enable,
 *    the first live replica (ISR = just it); otherwise it goes offline
 *    (leader -1; the last ISR member stays in the ISR, as in Kafka);
 *  - dead brokers leave the ISR of partitions whose leader lives.
 * Every change bumps the leader epoch and is a write conditional on the
 * controller epoch's znode version, so a deposed controller's writes fail.
 * Then LeaderAndIsr goes to the partition's live replicas and UpdateMetadata
 * to every live broker.
 *
 * Its work is one idempotent pass, `refresh`: read everything, then reconcile.
 * A watch that fires during a pass schedules another pass after it.
 *
 * What a failover costs (Kafka 2.8's KafkaController.onControllerFailover):
 * the first pass of a new controller is initializeControllerContext's
 * reads — the brokers (getAllBrokerAndEpochsInCluster), the topics and
 * their assignments (getAllTopicsInCluster,
 * getReplicaAssignmentAndTopicIdForTopics) and every partition's state
 * znode, one GetData each (KafkaZkClient.getTopicPartitionStates, which
 * since Kafka 1.1, KAFKA-5642, sends them all asynchronously) — each a real
 * request the coordination node serves in turn (zk_server.h: service time),
 * at most zookeeper.max.in.flight.requests unanswered (ZooKeeperClient's
 * semaphore, zk_client_set_max_in_flight). Then the state writes, pipelined
 * the same way, and the requests of ControllerBrokerRequestBatch: to each
 * live broker one LeaderAndIsr with every partition it replicates (Kafka's
 * replicaStateMachine.startup) and one UpdateMetadata with every partition,
 * then those of the partitions elected. Their size grows with the
 * partitions they carry (kproto_update_size), and each broker applies them
 * one partition state after another (broker.c, "controller requests"), so a
 * failover's time grows with the partition count.
 *
 * Controlled shutdown (Kafka 2.8's KafkaController.doControlledShutdown): a
 * broker about to stop sends ControlledShutdown; it is marked as shutting
 * down until it leaves /brokers/ids, and every pass from then on moves its
 * leaderships to other ISR members and takes it out of the ISRs
 * (controller_election_shutdown). It is answered once a pass that began
 * after its request has been written, with the partitions it still leads.
 *
 * Preferred leaders (auto.leader.rebalance.enable): every
 * leader.imbalance.check.interval.seconds, as Kafka's
 * checkAndTriggerAutoLeaderRebalance does, a broker whose share of
 * partitions it should lead (it is their first assigned replica) but does
 * not is above leader.imbalance.per.broker.percentage gets those partitions
 * back where it is live and in the ISR: a new leader epoch, the same ISR.
 *
 * Invariants (controller_check_invariants):
 *  1. While `epoch_zk_version` is -1 the controller has not claimed its epoch
 *     and sends nothing: it has no channel and no state write pending.
 *  2. Requests to one broker go out one at a time, in order, and are resent
 *     after a failure until answered (Kafka's ControllerChannelManager): a
 *     channel with a request in flight has it at the head of its queue and a
 *     timeout or retry timer pending; one without has an empty queue. There
 *     is one channel per broker.
 *  3. A broker marked as shutting down is live in the last pass's view; a
 *     waiting shutdown request names a pass not yet done, or that pass's
 *     state writes are not all answered yet.
 *
 * Everything the controller owns is freed by controller_free; its pending
 * coordination callbacks then find a different generation (or no
 * controller) and do nothing (current).
 *
 * Transitions: CLAIMING (controller_start reads /controller_epoch) --epoch
 * written--> ACTIVE (epoch_claimed: a refresh pass, the rebalance timer);
 * CLAIMING --another won the epoch--> freed (epoch_claimed). ACTIVE: each
 * watch starts a refresh pass (refresh), or marks one to follow the current.
 */
#include "controller.h"

#include "controller_election.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <stdio.h>
#include <string.h>

#define CHANNEL_BACKOFF_MS 100

typedef struct {
    gint32 broker_id;
    SimNodeId node;
    GQueue queue;               /* SimMsg* waiting, head in flight when `in_flight` */
    gboolean in_flight;
    gint32 in_flight_correlation;
    SimTimerId timer;           /* request timeout or retry backoff */
} Channel;

typedef struct {
    char *name;
    GArray *assignment;         /* per partition: a GArray of gint32 replicas */
} Topic;

struct Controller {
    BrokerServices *services;   /* the broker it runs in */
    guint64 generation;
    gint32 epoch;
    gint32 epoch_zk_version;
    GArray *live;               /* KBrokerEndpoint, by id */
    GByteArray *live_by_id;     /* scratch of decide: a byte per broker id, 1 if live */
    GByteArray *shutting_by_id; /* a byte per broker id, 1 while it shuts down */
    GArray *shutdown_waiters;   /* ShutdownWaiter, in arrival order */
    guint64 passes_started, passes_done;
    GPtrArray *topics;          /* Topic*, by name */
    GTree *states;              /* KTopicPartition* -> KPartitionState* */
    GPtrArray *channels;        /* Channel*, by broker id */
    gboolean refreshing;
    gboolean refresh_again;
    guint reads_pending;
    /* The pass being built. */
    GArray *next_live;
    GPtrArray *next_topics;
    GTree *next_states;
    GPtrArray *notifications;   /* isr_change znode names to delete */
    guint writes_pending;       /* state writes not answered yet */
    GArray *written;            /* KPartitionState written, not yet announced */
    SimTimerId rebalance_timer; /* the next preferred-leader check */
};

/* The longest znode path a context names: a partition's state znode,
 * /brokers/topics/<topic>/partitions/<partition>/state. */
#define CTX_PATH_MAX (KAFKA_TOPIC_NAME_MAX + 64)

/* Coordination callbacks carry this context so a callback that arrives after
 * the controller resigned (another generation) does nothing. The path is held
 * inline: a crash frees the broker's pending contexts with g_free alone. */
typedef struct {
    guint64 generation;
    char path[CTX_PATH_MAX + 1];
    gint32 extra;
    KPartitionState proposed;
} Ctx;

/* A ControlledShutdown request waiting for the pass that acts on it. */
typedef struct {
    gint32 broker_id;
    SimNodeId node;
    gint32 correlation_id;
    guint64 pass; /* answered once passes_done reaches it */
} ShutdownWaiter;

static void refresh(Controller *c);
static void answer_shutdowns(Controller *c);
static void handle_controlled_shutdown(Controller *c, SimNodeId from,
                                       const KControlledShutdownRequest *request);

static Controller *
current(BrokerServices *services, Ctx *ctx)
{
    Controller *c = broker_services_controller(services);
    if (c == NULL || c->generation != ctx->generation)
        return NULL;
    return c;
}

static Ctx *
ctx_new(Controller *c, const char *path)
{
    Ctx *ctx = broker_services_zk_context(c->services, sizeof(Ctx));
    ctx->generation = c->generation;
    gsize length = g_strlcpy(ctx->path, path, sizeof ctx->path);
    KSIM_ASSERT(length <= CTX_PATH_MAX);
    return ctx;
}

static void
ctx_done(BrokerServices *services, Ctx *ctx)
{
    broker_services_zk_context_done(services, ctx);
}

static gint
tree_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    return ktp_compare(a, b);
}

static GTree *
states_new(void)
{
    return g_tree_new_full(tree_compare, NULL, NULL, g_free);
}

static void
topic_free(gpointer data)
{
    Topic *topic = data;
    for (guint i = 0; i < topic->assignment->len; i++)
        g_array_free(g_array_index(topic->assignment, GArray *, i), TRUE);
    g_array_free(topic->assignment, TRUE);
    g_free(topic->name);
    g_free(topic);
}

/* ---- channels to brokers ---- */

static void channel_send_next(Controller *c, Channel *channel);

static void
channel_free(gpointer data)
{
    Channel *channel = data;
    g_queue_clear_full(&channel->queue, (GDestroyNotify)sim_msg_free);
    g_free(channel);
}

static Channel *
channel_for(Controller *c, gint32 broker_id, SimNodeId node)
{
    for (guint i = 0; i < c->channels->len; i++) {
        Channel *channel = g_ptr_array_index(c->channels, i);
        if (channel->broker_id == broker_id) {
            channel->node = node;
            return channel;
        }
    }
    Channel *channel = g_new0(Channel, 1);
    channel->broker_id = broker_id;
    channel->node = node;
    g_queue_init(&channel->queue);
    g_ptr_array_add(c->channels, channel);
    return channel;
}

static gint32
msg_correlation(SimMsg *msg)
{
    if (msg->type == KMSG_LEADER_AND_ISR_REQUEST || msg->type == KMSG_STOP_REPLICA_REQUEST)
        return ((KLeaderAndIsrRequest *)msg)->correlation_id;
    return ((KUpdateMetadataRequest *)msg)->correlation_id;
}

static SimMsg *
msg_copy(SimMsg *msg)
{
    if (msg->type == KMSG_LEADER_AND_ISR_REQUEST || msg->type == KMSG_STOP_REPLICA_REQUEST) {
        KLeaderAndIsrRequest *from = (KLeaderAndIsrRequest *)msg;
        KSIM_ASSERT(from->pooled == NULL); /* pooled: a KRaft broker's own */
        KLeaderAndIsrRequest *to = kproto_new(msg->type);
        to->correlation_id = from->correlation_id;
        to->controller_id = from->controller_id;
        to->controller_epoch = from->controller_epoch;
        g_array_append_vals(to->partitions, from->partitions->data, from->partitions->len);
        g_array_append_vals(to->live_leaders, from->live_leaders->data, from->live_leaders->len);
        kproto_update_size(&to->base);
        return &to->base;
    }
    KUpdateMetadataRequest *from = (KUpdateMetadataRequest *)msg;
    KSIM_ASSERT(from->pooled == NULL);
    KUpdateMetadataRequest *to = kproto_new(KMSG_UPDATE_METADATA_REQUEST);
    to->correlation_id = from->correlation_id;
    to->controller_id = from->controller_id;
    to->controller_epoch = from->controller_epoch;
    kproto_update_metadata_share_partitions(to, from->partitions);
    g_array_append_vals(to->live_brokers, from->live_brokers->data, from->live_brokers->len);
    kproto_update_size(&to->base);
    return &to->base;
}

static Channel *
channel_by_id(Controller *c, gint32 broker_id)
{
    for (guint i = 0; i < c->channels->len; i++) {
        Channel *channel = g_ptr_array_index(c->channels, i);
        if (channel->broker_id == broker_id)
            return channel;
    }
    return NULL;
}

static void
channel_retry(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    Controller *c = broker_services_controller(broker_services_from_node_ctx(ctx));
    KSIM_ASSERT(c != NULL);
    Channel *channel = channel_by_id(c, GPOINTER_TO_INT(arg));
    KSIM_ASSERT(channel != NULL);
    channel->timer = SIM_EVENT_ID_NONE;
    channel->in_flight = FALSE;
    channel_send_next(c, channel);
}

static void
channel_failed(Controller *c, Channel *channel, gboolean close)
{
    SimWorld *world = broker_services_world(c->services);
    SimNodeId node = broker_services_node(c->services);
    sim_timer_cancel(world, channel->timer);
    if (close)
        sim_net_close(sim_world_net(world), node, channel->node);
    channel->timer = sim_timer_set(world, node, CHANNEL_BACKOFF_MS * SIM_NS_PER_MS, channel_retry,
                                   GINT_TO_POINTER(channel->broker_id));
}

static void
channel_timeout(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    Controller *c = broker_services_controller(broker_services_from_node_ctx(ctx));
    KSIM_ASSERT(c != NULL);
    Channel *channel = channel_by_id(c, GPOINTER_TO_INT(arg));
    KSIM_ASSERT(channel != NULL);
    channel->timer = SIM_EVENT_ID_NONE;
    channel_failed(c, channel, TRUE);
}

static void
channel_send_next(Controller *c, Channel *channel)
{
    const BrokerConfig *config = broker_services_config(c->services);
    if (channel->in_flight || g_queue_is_empty(&channel->queue))
        return;
    SimMsg *head = g_queue_peek_head(&channel->queue);
    channel->in_flight = TRUE;
    channel->in_flight_correlation = msg_correlation(head);
    broker_services_send(c->services, channel->node, msg_copy(head));
    channel->timer =
        sim_timer_set(broker_services_world(c->services), broker_services_node(c->services),
                      config->controller_socket_timeout_ms * SIM_NS_PER_MS, channel_timeout,
                      GINT_TO_POINTER(channel->broker_id));
}

static void
channel_enqueue(Controller *c, gint32 broker_id, SimNodeId node, SimMsg *msg)
{
    Channel *channel = channel_for(c, broker_id, node);
    g_queue_push_tail(&channel->queue, msg);
    channel_send_next(c, channel);
}

gboolean
controller_handle_message(Controller *c, SimNodeId from, SimMsg *msg)
{
    if (msg->type == KMSG_CONTROLLED_SHUTDOWN_REQUEST) {
        handle_controlled_shutdown(c, from, (const KControlledShutdownRequest *)msg);
        sim_msg_free(msg);
        return TRUE;
    }
    if (msg->type != KMSG_LEADER_AND_ISR_RESPONSE && msg->type != KMSG_UPDATE_METADATA_RESPONSE &&
        msg->type != KMSG_STOP_REPLICA_RESPONSE)
        return FALSE;
    KControllerResponse *response = (KControllerResponse *)msg;
    for (guint i = 0; i < c->channels->len; i++) {
        Channel *channel = g_ptr_array_index(c->channels, i);
        if (channel->node != from || !channel->in_flight ||
            channel->in_flight_correlation != response->correlation_id)
            continue;
        sim_timer_cancel(broker_services_world(c->services), channel->timer);
        channel->in_flight = FALSE;
        sim_msg_free(g_queue_pop_head(&channel->queue));
        channel_send_next(c, channel);
        break;
    }
    sim_msg_free(msg);
    return TRUE;
}

void
controller_peer_disconnected(Controller *c, SimNodeId peer)
{
    for (guint i = 0; i < c->channels->len; i++) {
        Channel *channel = g_ptr_array_index(c->channels, i);
        if (channel->node == peer && channel->in_flight)
            channel_failed(c, channel, FALSE);
    }
}

/* Drops the channel of a broker that is gone, as Kafka removes its queue. */
static void
channel_remove(Controller *c, gint32 broker_id)
{
    for (guint i = 0; i < c->channels->len; i++) {
        Channel *channel = g_ptr_array_index(c->channels, i);
        if (channel->broker_id != broker_id)
            continue;
        sim_timer_cancel(broker_services_world(c->services), channel->timer);
        g_ptr_array_remove_index(c->channels, i);
        return;
    }
}

/* ---- sending state to brokers ---- */

static gboolean
is_live(const GArray *live, gint32 broker_id)
{
    for (guint i = 0; i < live->len; i++) {
        if (g_array_index(live, KBrokerEndpoint, i).broker_id == broker_id)
            return TRUE;
    }
    return FALSE;
}


/* Sets byte `id` of `by_id` to 1, growing it with zeros as needed. */
static void
by_id_set(GByteArray *by_id, gint32 id)
{
    KSIM_ASSERT(id >= 0);
    if ((guint)id >= by_id->len) {
        guint old = by_id->len;
        g_byte_array_set_size(by_id, (guint)id + 1);
        memset(by_id->data + old, 0, by_id->len - old);
    }
    by_id->data[id] = 1;
}

/* The live brokers as ControllerElectionInput.live: `by_id` (reused across
 * calls) gets a byte per broker id up to the largest live one. */
static void
live_by_id(const GArray *live, GByteArray *by_id, ControllerElectionInput *input)
{
    g_byte_array_set_size(by_id, 0);
    for (guint i = 0; i < live->len; i++)
        by_id_set(by_id, g_array_index(live, KBrokerEndpoint, i).broker_id);
    input->live = by_id->data;
    input->n_live = by_id->len;
}

static void
send_leader_and_isr(Controller *c, gint32 broker_id, const GArray *states)
{
    SimNodeId node = kbroker_endpoint_node(c->live, broker_id);
    if (node == SIM_NODE_NONE || states->len == 0)
        return;
    KLeaderAndIsrRequest *request = kproto_new(KMSG_LEADER_AND_ISR_REQUEST);
    request->correlation_id = broker_services_next_correlation(c->services);
    request->controller_id = broker_services_broker_id(c->services);
    request->controller_epoch = c->epoch;
    g_array_append_vals(request->partitions, states->data, states->len);
    g_array_append_vals(request->live_leaders, c->live->data, c->live->len);
    kproto_update_size(&request->base);
    channel_enqueue(c, broker_id, node, &request->base);
}

static gboolean
append_state(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    g_array_append_val((GArray *)data, *(KPartitionState *)value);
    return FALSE;
}

static void
send_update_metadata(Controller *c)
{
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    g_tree_foreach(c->states, append_state, all);
    for (guint i = 0; i < c->live->len; i++) {
        const KBrokerEndpoint *e = &g_array_index(c->live, KBrokerEndpoint, i);
        KUpdateMetadataRequest *request = kproto_new(KMSG_UPDATE_METADATA_REQUEST);
        request->correlation_id = broker_services_next_correlation(c->services);
        request->controller_id = broker_services_broker_id(c->services);
        request->controller_epoch = c->epoch;
        /* Every broker is sent the same states: one array serves them all. */
        kproto_update_metadata_share_partitions(request, all);
        g_array_append_vals(request->live_brokers, c->live->data, c->live->len);
        kproto_update_size(&request->base);
        channel_enqueue(c, e->broker_id, e->node, &request->base);
    }
}

/* LeaderAndIsr to each live replica of `changed` (or of every partition
 * for the brokers in `everything_to`). */
static void
send_leader_and_isr_all(Controller *c, const GArray *changed, const GArray *everything_to)
{
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    g_tree_foreach(c->states, append_state, all);
    for (guint b = 0; b < c->live->len; b++) {
        gint32 id = g_array_index(c->live, KBrokerEndpoint, b).broker_id;
        gboolean everything = is_live(everything_to, id);
        const GArray *source = everything ? all : changed;
        g_autoptr(GArray) mine = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
        for (guint i = 0; i < source->len; i++) {
            const KPartitionState *ps = &g_array_index(source, KPartitionState, i);
            if (kpartition_state_has_replica(ps, id))
                g_array_append_val(mine, *ps);
        }
        send_leader_and_isr(c, id, mine);
    }
}

/* ---- reconciling ---- */

/* For coordination requests whose answer does not matter (a parent that may
 * exist already, a notification to delete). */
static void
notification_deleted(void *owner, const ZkResult *result, void *arg)
{
    (void)owner;
    (void)result;
    (void)arg;
}

static void
state_set_replicas(KPartitionState *ps, const GArray *replicas)
{
    ps->n_replicas = (guint8)MIN(replicas->len, KAFKA_REPLICAS_MAX);
    for (guint i = 0; i < ps->n_replicas; i++)
        ps->replicas[i] = g_array_index(replicas, gint32, i);
}

/* Decides a partition's next state (controller_election.c); FALSE when it
 * stays as it is. */
static gboolean
decide(Controller *c, const GArray *replicas, const KPartitionState *old, KPartitionState *next,
       gboolean *unclean)
{
    const TopicConfig *config = broker_services_topic_config(c->services, next->tp.topic);
    ControllerElectionInput input = {0};
    input.assignment = (const gint32 *)(const void *)replicas->data;
    input.n_assignment = replicas->len;
    live_by_id(c->live, c->live_by_id, &input);
    input.shutting = c->shutting_by_id->data;
    input.n_shutting = c->shutting_by_id->len;
    input.unclean_leader_election = config->unclean_leader_election;
    input.controller_epoch = c->epoch;
    ControllerElectionOutcome outcome = controller_election_decide(&input, old, next);
    *unclean = outcome == CONTROLLER_ELECTION_UNCLEAN;
    if (outcome == CONTROLLER_ELECTION_UNCLEAN)
        SIM_MARK(broker_services_world(c->services), unclean_election);
    if (outcome == CONTROLLER_ELECTION_OFFLINE)
        SIM_MARK(broker_services_world(c->services), offline_partition);
    if (c->shutting_by_id->len == 0)
        return outcome != CONTROLLER_ELECTION_UNCHANGED;
    /* Then the brokers shutting down hand over what they still lead. */
    KPartitionState decided = *next;
    ControllerElectionOutcome shutdown = controller_election_shutdown(&input, &decided, next);
    if (shutdown != CONTROLLER_ELECTION_UNCHANGED && outcome != CONTROLLER_ELECTION_UNCHANGED)
        next->leader_epoch = decided.leader_epoch; /* one change, one new epoch */
    return outcome != CONTROLLER_ELECTION_UNCHANGED || shutdown != CONTROLLER_ELECTION_UNCHANGED;
}

static void
new_partition_state(Controller *c, const GArray *replicas, KPartitionState *ps)
{
    ps->leader = KAFKA_NO_LEADER;
    ps->leader_epoch = 0;
    ps->controller_epoch = c->epoch;
    ps->zk_version = -1;
    ps->n_isr = 0;
    for (guint i = 0; i < replicas->len; i++) {
        gint32 r = g_array_index(replicas, gint32, i);
        if (!is_live(c->live, r))
            continue;
        if (ps->leader == KAFKA_NO_LEADER)
            ps->leader = r;
        ps->isr[ps->n_isr++] = r;
    }
}

/* The state writes of a pass are announced together once they have all
 * been answered, as Kafka's controller sends one LeaderAndIsr per broker and
 * one UpdateMetadata for a batch of partitions: a client that asks right
 * after a topic appears sees all of its partitions, not the first few. */
static void
announce_written(Controller *c)
{
    if (c->writes_pending > 0 || c->written->len == 0)
        return;
    g_autoptr(GArray) nobody = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    send_leader_and_isr_all(c, c->written, nobody);
    send_update_metadata(c);
    g_array_set_size(c->written, 0);
    answer_shutdowns(c);
}

static void
state_written(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        KSIM_ASSERT(c->writes_pending > 0);
        c->writes_pending--;
        if (result->error == ZK_OK) {
            KPartitionState *ps = g_memdup2(&ctx->proposed, sizeof ctx->proposed);
            ps->zk_version = result->version;
            g_tree_replace(c->states, &ps->tp, ps);
            g_array_append_val(c->written, *ps);
        } else if (result->error == ZK_BAD_VERSION) {
            /* Either the leader changed the ISR meanwhile (read it again) or
             * another controller took over (its epoch check failed). */
            refresh(c);
        }
        announce_written(c);
    }
    ctx_done(services, ctx);
}

static void
write_state(Controller *c, const KPartitionState *next, gboolean create)
{
    g_autofree char *path = g_strdup_printf("/brokers/topics/%s/partitions/%d/state",
                                            next->tp.topic, next->tp.partition);
    Ctx *ctx = ctx_new(c, path);
    ctx->proposed = *next;
    c->writes_pending++;
    GString *data = g_string_new(NULL);
    kpartition_state_serialize(next, data);
    if (create) {
        /* Kafka's controller creates the parents of a new state znode. */
        g_autofree char *partitions = g_strdup_printf("/brokers/topics/%s/partitions", next->tp.topic);
        g_autofree char *partition = g_strdup_printf("%s/%d", partitions, next->tp.partition);
        zk_client_create(broker_services_zk(c->services), partitions, "", 0, 0,
                         notification_deleted, NULL);
        zk_client_create(broker_services_zk(c->services), partition, "", 0, 0, notification_deleted,
                         NULL);
    }
    if (create)
        zk_client_create_checked(broker_services_zk(c->services), "/controller_epoch",
                                 c->epoch_zk_version, path, data->str, data->len, 0, state_written,
                                 ctx);
    else
        zk_client_set_checked(broker_services_zk(c->services), "/controller_epoch",
                              c->epoch_zk_version, path, data->str, data->len, next->zk_version,
                              state_written, ctx);
    g_string_free(data, TRUE);
}

static void
record_election(Controller *c, const KPartitionState *old, const KPartitionState *next,
                gboolean unclean)
{
    HistoryEvent fields = {0};
    fields.leader_epoch = next->leader_epoch;
    fields.isr = broker_services_history_isr(c->services, next->isr, next->n_isr);
    if (next->leader == KAFKA_NO_LEADER) {
        broker_services_record_event(c->services, HISTORY_EVENT_OFFLINE, &next->tp, &fields,
                                     "controller %d: %s-%d has no eligible leader and went offline",
                                     broker_services_broker_id(c->services), next->tp.topic,
                                     next->tp.partition);
        return;
    }
    if (old != NULL && old->leader == next->leader)
        return;
    /* Kafka's PartitionStateMachine marks uncleanLeaderElectionRate as it
     * picks a leader outside the ISR (ZooKeeper mode, 2.x-3.x). */
    if (unclean)
        broker_services_record_metric(c->services, HISTORY_METRIC_UNCLEAN_ELECTION, 1, 0);
    broker_services_record_event(c->services, HISTORY_EVENT_CONTROLLER, &next->tp, &fields,
                                 "controller %d elected broker %d leader of %s-%d in epoch %d%s",
                                 broker_services_broker_id(c->services), next->leader,
                                 next->tp.topic, next->tp.partition, next->leader_epoch,
                                 unclean ? " (unclean: it was not in the ISR)" : "");
}

static void
reconcile_partition(Controller *c, const Topic *topic, gint32 partition)
{
    const GArray *replicas = g_array_index(topic->assignment, GArray *, partition);
    KTopicPartition tp;
    ktp_set(&tp, topic->name, partition);
    const KPartitionState *old = g_tree_lookup(c->states, &tp);
    KPartitionState next = {0};
    next.tp = tp;
    if (old == NULL) {
        new_partition_state(c, replicas, &next);
        state_set_replicas(&next, replicas);
        if (next.leader == KAFKA_NO_LEADER)
            return;
        record_election(c, NULL, &next, FALSE);
        write_state(c, &next, TRUE);
        return;
    }
    gboolean unclean;
    if (!decide(c, replicas, old, &next, &unclean))
        return;
    state_set_replicas(&next, replicas);
    record_election(c, old, &next, unclean);
    write_state(c, &next, FALSE);
}

/* TRUE when `e` was live in `previous` under another broker epoch: it
 * restarted between two passes (a bounce). */
static gboolean
bounced(const GArray *previous, const KBrokerEndpoint *e)
{
    for (guint i = 0; previous != NULL && i < previous->len; i++) {
        const KBrokerEndpoint *old = &g_array_index(previous, KBrokerEndpoint, i);
        if (old->broker_id == e->broker_id)
            return old->broker_epoch != e->broker_epoch;
    }
    return FALSE;
}

static void
reconcile(Controller *c, GArray *previous_live)
{
    /* Brokers that just appeared, or restarted since the last pass, learn
     * everything they replicate. A restarted broker lost what it believed:
     * as Kafka's controller does (KIP-380), the decisions of this pass treat
     * it as failed (its leaderships move, it leaves the ISRs) and it joins
     * again as a new broker. */
    g_autoptr(GArray) fresh = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    GArray *all_live = c->live;
    GArray *deciding = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    for (guint i = 0; i < all_live->len; i++) {
        const KBrokerEndpoint *e = &g_array_index(all_live, KBrokerEndpoint, i);
        gboolean restarted = bounced(previous_live, e);
        if (previous_live == NULL || !is_live(previous_live, e->broker_id) || restarted)
            g_array_append_val(fresh, *e);
        if (!restarted)
            g_array_append_val(deciding, *e);
    }
    c->live = deciding;
    for (guint t = 0; t < c->topics->len; t++) {
        const Topic *topic = g_ptr_array_index(c->topics, t);
        for (guint p = 0; p < topic->assignment->len; p++)
            reconcile_partition(c, topic, (gint32)p);
    }
    c->live = all_live;
    g_array_unref(deciding);
    for (guint i = 0; previous_live != NULL && i < previous_live->len; i++) {
        gint32 id = g_array_index(previous_live, KBrokerEndpoint, i).broker_id;
        if (!is_live(c->live, id))
            channel_remove(c, id);
    }
    g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    send_leader_and_isr_all(c, none, fresh);
    send_update_metadata(c);
}

/* ---- controlled shutdown ---- */

static void
shutdown_respond(Controller *c, SimNodeId to, gint32 correlation_id, KafkaError error,
                 guint32 remaining)
{
    KControlledShutdownResponse *response = kproto_new(KMSG_CONTROLLED_SHUTDOWN_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->partitions_remaining = remaining;
    broker_services_send(c->services, to, (SimMsg *)response);
}

/* The partitions `broker_id` leads that have other replicas assigned: what
 * a controlled shutdown could not move yet. */
static guint32
partitions_remaining(const Controller *c, gint32 broker_id)
{
    guint32 remaining = 0;
    for (guint t = 0; t < c->topics->len; t++) {
        const Topic *topic = g_ptr_array_index(c->topics, t);
        for (guint p = 0; p < topic->assignment->len; p++) {
            KTopicPartition tp;
            ktp_set(&tp, topic->name, (gint32)p);
            const KPartitionState *state = g_tree_lookup(c->states, &tp);
            const GArray *replicas = g_array_index(topic->assignment, GArray *, p);
            if (state != NULL && state->leader == broker_id && replicas->len > 1)
                remaining++;
        }
    }
    return remaining;
}

/* StopReplica (without deletion) to `broker_id` for every partition it
 * follows, as doControlledShutdown moves its follower replicas to
 * OfflineReplica: it stops fetching, so it cannot rejoin an ISR it just
 * left. Queued behind the LeaderAndIsr that made it a follower. */
static void
send_stop_replica(Controller *c, gint32 broker_id)
{
    SimNodeId node = kbroker_endpoint_node(c->live, broker_id);
    g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    g_tree_foreach(c->states, append_state, all);
    KLeaderAndIsrRequest *request = kproto_new(KMSG_STOP_REPLICA_REQUEST);
    for (guint i = 0; i < all->len; i++) {
        const KPartitionState *ps = &g_array_index(all, KPartitionState, i);
        if (ps->leader != broker_id && kpartition_state_has_replica(ps, broker_id))
            g_array_append_val(request->partitions, *ps);
    }
    if (node == SIM_NODE_NONE || request->partitions->len == 0) {
        sim_msg_free(&request->base);
        return;
    }
    request->correlation_id = broker_services_next_correlation(c->services);
    request->controller_id = broker_services_broker_id(c->services);
    request->controller_epoch = c->epoch;
    kproto_update_size(&request->base);
    channel_enqueue(c, broker_id, node, &request->base);
}

/* Answers the shutdown requests whose pass is done and written. */
static void
answer_shutdowns(Controller *c)
{
    if (c->writes_pending > 0)
        return;
    guint kept = 0;
    for (guint i = 0; i < c->shutdown_waiters->len; i++) {
        ShutdownWaiter w = g_array_index(c->shutdown_waiters, ShutdownWaiter, i);
        if (w.pass > c->passes_done) {
            g_array_index(c->shutdown_waiters, ShutdownWaiter, kept++) = w;
            continue;
        }
        send_stop_replica(c, w.broker_id);
        guint32 remaining = partitions_remaining(c, w.broker_id);
        broker_services_record_event(c->services, HISTORY_EVENT_CONTROLLER, NULL, NULL,
                                     "controller %d: broker %d's controlled shutdown leaves it "
                                     "leading %u partition(s)",
                                     broker_services_broker_id(c->services), w.broker_id,
                                     remaining);
        shutdown_respond(c, w.node, w.correlation_id, KAFKA_ERROR_NONE, remaining);
    }
    g_array_set_size(c->shutdown_waiters, kept);
}

/* Forgets the shutdown marks of brokers that are no longer live: a broker
 * that comes back is a new one (Kafka's onBrokerFailure clears them). */
static void
shutting_prune(Controller *c)
{
    for (guint id = 0; id < c->shutting_by_id->len; id++) {
        if (!is_live(c->live, (gint32)id))
            c->shutting_by_id->data[id] = 0;
    }
}

static void
handle_controlled_shutdown(Controller *c, SimNodeId from, const KControlledShutdownRequest *request)
{
    if (c->epoch_zk_version < 0) {
        shutdown_respond(c, from, request->correlation_id, KAFKA_ERROR_NOT_CONTROLLER, 0);
        return;
    }
    gint32 id = request->broker_id;
    if (kbroker_endpoint_node(c->live, id) != from) {
        /* Kafka: "Broker id X does not exist" (BrokerNotAvailableException). */
        shutdown_respond(c, from, request->correlation_id, KAFKA_ERROR_BROKER_NOT_AVAILABLE, 0);
        return;
    }
    by_id_set(c->shutting_by_id, id);
    broker_services_record_event(c->services, HISTORY_EVENT_CONTROLLER, NULL, NULL,
                                 "controller %d: broker %d asked for a controlled shutdown",
                                 broker_services_broker_id(c->services), id);
    /* The pass that acts on it is the next one to start: the one refresh
     * starts now, or the one it schedules after the pass under way. */
    ShutdownWaiter w = {id, from, request->correlation_id, c->passes_started + 1};
    g_array_append_val(c->shutdown_waiters, w);
    refresh(c);
}

/* ---- reading everything (one refresh pass) ---- */

static void read_done(Controller *c);

static void
read_started(Controller *c)
{
    c->reads_pending++;
}

static gint
endpoint_compare(gconstpointer a, gconstpointer b)
{
    const KBrokerEndpoint *x = a, *y = b;
    return (x->broker_id > y->broker_id) - (x->broker_id < y->broker_id);
}

static void
broker_data_read(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        if (result->error == ZK_OK) {
            g_autofree char *text = g_strndup((const char *)result->data, result->len);
            KBrokerEndpoint e = {ctx->extra, (SimNodeId)g_ascii_strtoull(text, NULL, 10),
                                 (gint64)result->stat.czxid};
            g_array_append_val(c->next_live, e);
        }
        read_done(c);
    }
    ctx_done(services, ctx);
}

static void
brokers_listed(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        for (guint i = 0; result->error == ZK_OK && result->children[i] != NULL; i++) {
            g_autofree char *path = g_strdup_printf("/brokers/ids/%s", result->children[i]);
            Ctx *child = ctx_new(c, path);
            child->extra = (gint32)g_ascii_strtoll(result->children[i], NULL, 10);
            read_started(c);
            zk_client_get(broker_services_zk(services), path, FALSE, broker_data_read, child);
        }
        read_done(c);
    }
    ctx_done(services, ctx);
}

static void
partition_state_read(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        KPartitionState ps = ctx->proposed;
        if (result->error == ZK_OK &&
            kpartition_state_parse((const char *)result->data, result->len, &ps)) {
            ps.zk_version = result->version;
            KPartitionState *copy = g_memdup2(&ps, sizeof ps);
            g_tree_replace(c->next_states, &copy->tp, copy);
        }
        read_done(c);
    }
    ctx_done(services, ctx);
}

/* Parses a topic's assignment "0:1,2,3|1:2,3,1" into per-partition arrays. */
static GArray *
parse_assignment(const char *data, gsize len)
{
    g_autofree char *text = g_strndup(data, len);
    GArray *assignment = g_array_new(FALSE, FALSE, sizeof(GArray *));
    g_auto(GStrv) partitions = g_strsplit(text, "|", -1);
    for (guint p = 0; partitions[p] != NULL && *partitions[p] != '\0'; p++) {
        const char *colon = strchr(partitions[p], ':');
        GArray *replicas = g_array_new(FALSE, FALSE, sizeof(gint32));
        g_auto(GStrv) ids = g_strsplit(colon != NULL ? colon + 1 : "", ",", -1);
        for (guint i = 0; ids[i] != NULL && *ids[i] != '\0'; i++) {
            gint32 id = (gint32)g_ascii_strtoll(ids[i], NULL, 10);
            g_array_append_val(replicas, id);
        }
        g_array_append_val(assignment, replicas);
    }
    return assignment;
}

static void
topic_read(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        if (result->error == ZK_OK) {
            Topic *topic = g_new0(Topic, 1);
            topic->name = g_strdup(ctx->path + strlen("/brokers/topics/"));
            topic->assignment = parse_assignment((const char *)result->data, result->len);
            g_ptr_array_add(c->next_topics, topic);
            for (guint p = 0; p < topic->assignment->len; p++) {
                g_autofree char *path = g_strdup_printf("%s/partitions/%u/state", ctx->path, p);
                Ctx *child = ctx_new(c, path);
                ktp_set(&child->proposed.tp, topic->name, (gint32)p);
                state_set_replicas(&child->proposed,
                                   g_array_index(topic->assignment, GArray *, p));
                read_started(c);
                zk_client_get(broker_services_zk(services), path, FALSE, partition_state_read,
                              child);
            }
        }
        read_done(c);
    }
    ctx_done(services, ctx);
}

static void
topics_listed(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        for (guint i = 0; result->error == ZK_OK && result->children[i] != NULL; i++) {
            g_autofree char *path = g_strdup_printf("/brokers/topics/%s", result->children[i]);
            read_started(c);
            /* A data watch on the topic catches added partitions. */
            zk_client_get(broker_services_zk(services), path, TRUE, topic_read, ctx_new(c, path));
        }
        read_done(c);
    }
    ctx_done(services, ctx);
}

static void
notifications_listed(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        for (guint i = 0; result->error == ZK_OK && result->children[i] != NULL; i++)
            g_ptr_array_add(c->notifications,
                            g_strdup_printf("/isr_change_notification/%s", result->children[i]));
        read_done(c);
    }
    ctx_done(services, ctx);
}

static gint
topic_compare(gconstpointer a, gconstpointer b)
{
    const Topic *x = *(Topic *const *)a, *y = *(Topic *const *)b;
    return strcmp(x->name, y->name);
}

static void
pass_clear(Controller *c)
{
    g_clear_pointer(&c->next_live, g_array_unref);
    g_clear_pointer(&c->next_topics, g_ptr_array_unref);
    g_clear_pointer(&c->next_states, g_tree_destroy);
}

/* Every read of the pass has answered: adopt what was read and reconcile. */
static void
read_done(Controller *c)
{
    KSIM_ASSERT(c->reads_pending > 0);
    if (--c->reads_pending > 0)
        return;
    g_array_sort(c->next_live, endpoint_compare);
    g_ptr_array_sort(c->next_topics, topic_compare);
    GArray *previous_live = c->live;
    c->live = g_steal_pointer(&c->next_live);
    g_ptr_array_unref(c->topics);
    c->topics = g_steal_pointer(&c->next_topics);
    GTree *previous_states = c->states;
    c->states = g_steal_pointer(&c->next_states);
    g_tree_destroy(previous_states);
    reconcile(c, previous_live);
    g_array_unref(previous_live);
    shutting_prune(c);
    c->passes_done++;
    answer_shutdowns(c);
    for (guint i = 0; i < c->notifications->len; i++)
        zk_client_delete(broker_services_zk(c->services), g_ptr_array_index(c->notifications, i),
                         -1, notification_deleted, NULL);
    g_ptr_array_set_size(c->notifications, 0);
    c->refreshing = FALSE;
    if (c->refresh_again) {
        c->refresh_again = FALSE;
        refresh(c);
    }
}

static void
refresh(Controller *c)
{
    if (c->refreshing) {
        c->refresh_again = TRUE;
        return;
    }
    c->refreshing = TRUE;
    c->passes_started++;
    pass_clear(c);
    c->next_live = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    c->next_topics = g_ptr_array_new_with_free_func(topic_free);
    c->next_states = states_new();
    ZkClient *zk = broker_services_zk(c->services);
    c->reads_pending = 3;
    zk_client_children(zk, "/brokers/ids", TRUE, brokers_listed, ctx_new(c, "/brokers/ids"));
    zk_client_children(zk, "/brokers/topics", TRUE, topics_listed, ctx_new(c, "/brokers/topics"));
    zk_client_children(zk, "/isr_change_notification", TRUE, notifications_listed,
                       ctx_new(c, "/isr_change_notification"));
}

void
controller_watch_fired(Controller *c, const char *path)
{
    (void)path;
    if (c->epoch_zk_version >= 0)
        refresh(c);
}

/* ---- preferred leaders ---- */

static void rebalance_schedule(Controller *c);

/* The partitions broker `preferred` should lead but does not, where it could
 * (live, in the ISR); only when they are more than the imbalance allowed of
 * the partitions it is preferred for. Appends their next states. */
static void
rebalance_broker(Controller *c, gint32 preferred, GArray *moves)
{
    guint preferred_for = 0, not_led = 0;
    g_autoptr(GArray) eligible = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    for (guint t = 0; t < c->topics->len; t++) {
        const Topic *topic = g_ptr_array_index(c->topics, t);
        for (guint p = 0; p < topic->assignment->len; p++) {
            const GArray *replicas = g_array_index(topic->assignment, GArray *, p);
            if (replicas->len == 0 || g_array_index(replicas, gint32, 0) != preferred)
                continue;
            KTopicPartition tp;
            ktp_set(&tp, topic->name, (gint32)p);
            const KPartitionState *ps = g_tree_lookup(c->states, &tp);
            if (ps == NULL)
                continue;
            preferred_for++;
            if (ps->leader == preferred)
                continue;
            not_led++;
            KPartitionState next;
            if (controller_election_preferred(ps, preferred, c->epoch, &next))
                g_array_append_val(eligible, next);
        }
    }
    gint32 percentage = broker_services_config(c->services)->leader_imbalance_per_broker_percentage;
    if (preferred_for == 0 || (guint64)not_led * 100 <= (guint64)preferred_for * (guint64)percentage)
        return;
    g_array_append_vals(moves, eligible->data, eligible->len);
}

static void
rebalance_fire(SimWorld *world, void *ctx, void *arg)
{
    Controller *c = arg;
    (void)world;
    (void)ctx;
    c->rebalance_timer = SIM_EVENT_ID_NONE;
    rebalance_schedule(c);
    /* A pass in progress decides from fresher reads; the next check comes. */
    if (c->refreshing || c->writes_pending > 0 || c->epoch_zk_version < 0)
        return;
    g_autoptr(GArray) moves = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    for (guint i = 0; i < c->live->len; i++)
        rebalance_broker(c, g_array_index(c->live, KBrokerEndpoint, i).broker_id, moves);
    for (guint i = 0; i < moves->len; i++) {
        const KPartitionState *next = &g_array_index(moves, KPartitionState, i);
        const KPartitionState *old = g_tree_lookup(c->states, &next->tp);
        HistoryEvent fields = {0};
        fields.leader_epoch = next->leader_epoch;
        fields.isr = broker_services_history_isr(c->services, next->isr, next->n_isr);
        broker_services_record_event(
            c->services, HISTORY_EVENT_CONTROLLER, &next->tp, &fields,
            "controller %d moved the leadership of %s-%d back to its preferred "
            "replica %d (from %d) in epoch %d",
            broker_services_broker_id(c->services), next->tp.topic, next->tp.partition,
            next->leader, old->leader, next->leader_epoch);
        write_state(c, next, FALSE);
    }
}

static void
rebalance_schedule(Controller *c)
{
    const BrokerConfig *config = broker_services_config(c->services);
    if (!config->auto_leader_rebalance_enable)
        return;
    c->rebalance_timer = sim_timer_set(
        broker_services_world(c->services), broker_services_node(c->services),
        config->leader_imbalance_check_interval_ms * SIM_NS_PER_MS, rebalance_fire, c);
}

/* ---- claiming the epoch ---- */

static void
epoch_claimed(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        if (result->error == ZK_OK) {
            c->epoch = ctx->extra;
            c->epoch_zk_version = result->version;
            broker_services_controller_claimed(services, c->epoch);
            broker_services_record_event(services, HISTORY_EVENT_CONTROLLER, NULL, NULL,
                                         "broker %d became controller with epoch %d",
                                         broker_services_broker_id(services), c->epoch);
            refresh(c);
            rebalance_schedule(c);
        } else {
            /* Another controller won the race for the epoch. */
            broker_services_controller_lost(services);
            controller_free(c);
        }
    }
    ctx_done(services, ctx);
}

static void
epoch_read(void *owner, const ZkResult *result, void *arg)
{
    BrokerServices *services = broker_services_from_zk_owner(owner);
    Ctx *ctx = arg;
    Controller *c = current(services, ctx);
    if (c != NULL) {
        Ctx *claim = ctx_new(c, "/controller_epoch");
        if (result->error == ZK_NO_NODE) {
            claim->extra = 1;
            zk_client_create(broker_services_zk(services), "/controller_epoch", "1", 1, 0,
                             epoch_claimed, claim);
        } else {
            g_autofree char *text = g_strndup((const char *)result->data, result->len);
            claim->extra = (gint32)g_ascii_strtoll(text, NULL, 10) + 1;
            g_autofree char *data = g_strdup_printf("%d", claim->extra);
            zk_client_set(broker_services_zk(services), "/controller_epoch", data, strlen(data),
                          result->version, epoch_claimed, claim);
        }
    }
    ctx_done(services, ctx);
}

Controller *
controller_new(BrokerServices *services)
{
    Controller *c = g_new0(Controller, 1);
    c->services = services;
    c->generation = broker_services_controller_generation_next(services);
    c->epoch = -1;
    c->epoch_zk_version = -1;
    c->live = g_array_new(FALSE, FALSE, sizeof(KBrokerEndpoint));
    c->live_by_id = g_byte_array_new();
    c->shutting_by_id = g_byte_array_new();
    c->shutdown_waiters = g_array_new(FALSE, FALSE, sizeof(ShutdownWaiter));
    c->topics = g_ptr_array_new_with_free_func(topic_free);
    c->states = states_new();
    c->channels = g_ptr_array_new_with_free_func(channel_free);
    c->notifications = g_ptr_array_new_with_free_func(g_free);
    c->written = g_array_new(FALSE, FALSE, sizeof(KPartitionState));
    c->rebalance_timer = SIM_EVENT_ID_NONE;
    return c;
}

void
controller_start(Controller *c)
{
    zk_client_get(broker_services_zk(c->services), "/controller_epoch", FALSE, epoch_read,
                  ctx_new(c, "/controller_epoch"));
}

void
controller_free(Controller *c)
{
    if (c == NULL)
        return;
    SimWorld *world = broker_services_world(c->services);
    sim_timer_cancel(world, c->rebalance_timer);
    for (guint i = 0; i < c->channels->len; i++)
        sim_timer_cancel(world, ((Channel *)g_ptr_array_index(c->channels, i))->timer);
    g_ptr_array_free(c->channels, TRUE);
    pass_clear(c);
    g_array_unref(c->live);
    g_byte_array_unref(c->live_by_id);
    g_byte_array_unref(c->shutting_by_id);
    g_array_free(c->shutdown_waiters, TRUE);
    g_ptr_array_unref(c->topics);
    g_tree_destroy(c->states);
    g_ptr_array_free(c->notifications, TRUE);
    g_array_free(c->written, TRUE);
    g_free(c);
}

void
controller_check_invariants(const Controller *c)
{
    SimWorld *world = broker_services_world(c->services);
    if (c->epoch_zk_version < 0) {
        KSIM_ASSERT(c->channels->len == 0);
        KSIM_ASSERT(c->writes_pending == 0);
    }
    for (guint i = 0; i < c->channels->len; i++) {
        const Channel *channel = g_ptr_array_index(c->channels, i);
        for (guint k = 0; k < i; k++)
            KSIM_ASSERT(((const Channel *)g_ptr_array_index(c->channels, k))->broker_id !=
                        channel->broker_id);
        if (channel->in_flight) {
            KSIM_ASSERT(!g_queue_is_empty((GQueue *)&channel->queue));
            KSIM_ASSERT(sim_timer_pending(world, channel->timer));
        } else {
            KSIM_ASSERT(g_queue_is_empty((GQueue *)&channel->queue));
        }
    }
    for (guint id = 0; id < c->shutting_by_id->len; id++)
        KSIM_ASSERT(c->shutting_by_id->data[id] == 0 || is_live(c->live, (gint32)id));
    for (guint i = 0; i < c->shutdown_waiters->len; i++) {
        const ShutdownWaiter *w = &g_array_index(c->shutdown_waiters, ShutdownWaiter, i);
        KSIM_ASSERT(w->pass > c->passes_done || c->writes_pending > 0);
    }
}
