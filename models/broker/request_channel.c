/*
 * request_channel: network threads, the request queue and the I/O threads
 * of a broker (see request_channel.h), built from request_queue stations.
 *
 * Invariants:
 *  1. Every request the channel took is in exactly one place: waiting on
 *     its muted connection, a network thread's station (reading, or blocked
 *     on a full request queue), the request queue or an I/O thread; once
 *     handled it is the handler's, and the channel keeps only its timing in
 *     `pending` until it is answered.
 *  2. `pending` holds at most one entry per (peer, response type,
 *     correlation id): a request answered twice is timed once.
 *  3. A peer's requests and responses all pass through one network thread
 *     (`processor_of`), so a connection's messages keep their order.
 *  4. A connection is muted from the read of a request until its response
 *     is written (or, with no response due, until an I/O thread handled it);
 *     a muted connection has at most one request in the channel and keeps
 *     the others, in arrival order, in `waiting`. As Kafka's SocketServer
 *     (Processor.processCompletedReceives mutes the channel, and
 *     processCompletedSends or a NoOpResponse unmutes it; Kafka 3.7), so
 *     pipelined requests on one connection are handled one at a time, in
 *     order. A connection here is a (peer, request type) pair. That is
 *     Kafka's layout where it matters: a broker's replica fetcher, its
 *     controller channel and a consumer's coordinator each have a
 *     connection of their own, and a producer's requests to a broker are
 *     nearly all Produce. It differs where a client sends other kinds on
 *     the connection it fetches or produces on (Metadata, ListOffsets):
 *     in Kafka those wait behind a long-polling fetch; here they do not.
 *
 * Transitions: arrived --request_channel_arrived--> reading;
 * reading --processor_done_cb, queue has room--> queued (or blocked, retried
 * by io_space); queued --io_done_cb--> handled (pending when a response is
 * due); pending --request_channel_respond--> writing --processor_done_cb-->
 * sent and recorded.
 */
#include "request_channel.h"

#include "kafka_proto.h"
#include "request_queue.h"
#include "sim_assert.h"
#include "sim_net.h"

#define PENDING_MAX 10000000u
#define BYTES_PER_MIB 1048576.0

typedef enum {
    ITEM_REQUEST = 0,
    ITEM_RESPONSE,
} ItemKind;

/* What every request and response begins with (kafka_proto.h: the
 * correlation id follows the message header in each). */
typedef struct {
    SimMsg base;
    gint32 correlation_id;
} KHeader;

typedef struct {
    SimNodeId peer;
    gint32 type;       /* the response's KafkaMsgType */
    gint32 correlation_id;
} PendingKey;

/* A request's timing, from its arrival to its response's write. */
typedef struct {
    PendingKey key;
    gint64 arrived_ns;
    gint64 read_ns;
    gint64 queue_ns;
    gint64 local_ns;
    gint64 handled_ns; /* when its I/O thread finished */
    gint64 remote_ns;
    guint64 conn_id;   /* the connection it came on (Conn.id) */
    guint8 kind;       /* HistoryRequestKind */
    gint8 acks;
} Timing;

/* A connection: a peer and the request type it carries (invariant 4). */
typedef struct {
    SimNodeId peer;
    gint32 type; /* the request's KafkaMsgType */
} ConnKey;
/* key_of_peer reads either key's peer at its start. */
G_STATIC_ASSERT(G_STRUCT_OFFSET(PendingKey, peer) == 0 && G_STRUCT_OFFSET(ConnKey, peer) == 0);

typedef struct {
    ConnKey key;
    guint64 id; /* unique in the channel: a reconnect is a new connection */
    gboolean muted;
    GQueue waiting; /* Item* (owned), arrived while muted */
} Conn;

typedef struct {
    ItemKind kind;
    SimNodeId peer;
    SimMsg *msg;
    Timing timing;
} Item;

struct RequestChannel {
    SimWorld *world;
    SimNodeId node;
    const BrokerConfig *config;
    History *history;
    RequestChannelHandleFn handle;
    void *owner;
    SimRng *rng;
    RequestQueue *io;              /* the request queue and the I/O threads */
    RequestQueue **processors;     /* one station per network thread */
    guint n_processors;
    GHashTable *processor_of;      /* SimNodeId+1 -> processor index+1; looked up only */
    guint processor_next;
    /* Looked up on every request and response, and walked only to drop a
     * peer's entries (frees, in any order) or to check them: hashed. */
    GHashTable *pending;           /* PendingKey* -> Timing* (owned) */
    GHashTable *conns;             /* ConnKey* -> Conn* (owned) */
    guint64 conn_next;
};

static guint
peer_type_hash(SimNodeId peer, gint32 type)
{
    return khash_mix((guint)peer * 0x9e3779b1u ^ (guint)type);
}

static guint
conn_hash(gconstpointer key)
{
    const ConnKey *k = key;
    return peer_type_hash(k->peer, k->type);
}

static gboolean
conn_equal(gconstpointer a, gconstpointer b)
{
    const ConnKey *x = a, *y = b;
    return x->peer == y->peer && x->type == y->type;
}

static guint
pending_hash(gconstpointer key)
{
    const PendingKey *k = key;
    return khash_mix(peer_type_hash(k->peer, k->type) ^ (guint)k->correlation_id);
}

static gboolean
pending_equal(gconstpointer a, gconstpointer b)
{
    const PendingKey *x = a, *y = b;
    return x->peer == y->peer && x->type == y->type && x->correlation_id == y->correlation_id;
}

static void
item_free(gpointer data)
{
    Item *item = data;
    if (item->msg != NULL)
        sim_msg_free(item->msg);
    g_free(item);
}

static void
conn_free(gpointer data)
{
    Conn *conn = data;
    g_queue_clear_full(&conn->waiting, item_free);
    g_free(conn);
}

static Conn *
conn_of(RequestChannel *channel, SimNodeId peer, gint32 type)
{
    ConnKey key = {peer, type};
    Conn *conn = g_hash_table_lookup(channel->conns, &key);
    if (conn == NULL) {
        conn = g_new0(Conn, 1);
        conn->key = key;
        conn->id = ++channel->conn_next;
        g_queue_init(&conn->waiting);
        g_hash_table_insert(channel->conns, &conn->key, conn);
    }
    return conn;
}

static void read_request(RequestChannel *channel, Item *item);

/* The request of connection `conn_id` is done: read its next one, if any.
 * A connection closed since (the peer disconnected, and perhaps came back
 * on a new one) has nothing more to read. */
static void
conn_unmute(RequestChannel *channel, SimNodeId peer, gint32 type, guint64 conn_id)
{
    ConnKey key = {peer, type};
    Conn *conn = g_hash_table_lookup(channel->conns, &key);
    if (conn == NULL || conn->id != conn_id || !conn->muted)
        return;
    Item *next = g_queue_pop_head(&conn->waiting);
    if (next == NULL) {
        conn->muted = FALSE;
        return;
    }
    read_request(channel, next);
}

/* A service time of mean `mean_ns` as ksim.request.service.distribution
 * draws it. */
static gint64
draw_service_ns(RequestChannel *channel, gint64 mean_ns)
{
    if (mean_ns <= 0 || channel->config->request_service_distribution == BROKER_SERVICE_FIXED)
        return MAX(mean_ns, 0);
    double drawn = sim_rng_exponential(channel->rng, (double)mean_ns);
    return (gint64)(drawn + 0.5);
}

static gint64
network_cost_ns(RequestChannel *channel, const SimMsg *msg)
{
    const BrokerConfig *config = channel->config;
    double bytes = (double)msg->size_bytes;
    gint64 mean = config->network_request_time_ns +
                  (gint64)(bytes * (double)config->network_mib_time_ns / BYTES_PER_MIB);
    return draw_service_ns(channel, mean);
}

/* An I/O thread's time for a request: per request, per batch produced or
 * partition fetched, per MiB produced. A fetch's data is read zero-copy
 * (FileRecords.writeTo, sendfile) by the network thread that writes the
 * response, so its bytes cost network time, not I/O-thread time. */
static gint64
io_cost_ns(RequestChannel *channel, const SimMsg *msg)
{
    const BrokerConfig *config = channel->config;
    gint64 mean = config->request_time_ns;
    if (msg->type == KMSG_PRODUCE_REQUEST) {
        mean += config->request_batch_time_ns;
        mean += (gint64)((double)msg->size_bytes * (double)config->request_mib_time_ns /
                         BYTES_PER_MIB);
    } else if (msg->type == KMSG_FETCH_REQUEST) {
        const KFetchRequest *fetch = (const KFetchRequest *)msg;
        mean += (gint64)fetch->partitions->len * config->request_batch_time_ns;
    }
    return draw_service_ns(channel, mean);
}

gboolean
request_channel_takes(const SimMsg *msg)
{
    switch ((KafkaMsgType)msg->type) {
    case KMSG_PRODUCE_REQUEST:
    case KMSG_FETCH_REQUEST:
    case KMSG_METADATA_REQUEST:
    case KMSG_EPOCH_REQUEST:
    case KMSG_INIT_PRODUCER_ID_REQUEST:
    case KMSG_FIND_COORDINATOR_REQUEST:
    case KMSG_JOIN_GROUP_REQUEST:
    case KMSG_SYNC_GROUP_REQUEST:
    case KMSG_HEARTBEAT_REQUEST:
    case KMSG_LEAVE_GROUP_REQUEST:
    case KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST:
    case KMSG_OFFSET_COMMIT_REQUEST:
    case KMSG_OFFSET_FETCH_REQUEST:
    case KMSG_ADD_PARTITIONS_TO_TXN_REQUEST:
    case KMSG_ADD_OFFSETS_TO_TXN_REQUEST:
    case KMSG_END_TXN_REQUEST:
    case KMSG_WRITE_TXN_MARKERS_REQUEST:
    case KMSG_TXN_OFFSET_COMMIT_REQUEST:
        return TRUE;
    default:
        return FALSE;
    }
}

static guint
processor_for(RequestChannel *channel, SimNodeId peer)
{
    gpointer key = GUINT_TO_POINTER((guint)peer + 1);
    guint index = GPOINTER_TO_UINT(g_hash_table_lookup(channel->processor_of, key));
    if (index == 0) {
        /* The Acceptor hands new connections to processors round-robin. */
        index = channel->processor_next % channel->n_processors + 1;
        channel->processor_next++;
        g_hash_table_insert(channel->processor_of, key, GUINT_TO_POINTER(index));
    }
    return index - 1;
}

static void
record(RequestChannel *channel, const Timing *timing, gint64 send_ns)
{
    if (channel->history == NULL)
        return;
    HistoryRequest request = {
        .time_ns = timing->arrived_ns,
        .read_ns = timing->read_ns,
        .queue_ns = timing->queue_ns,
        .local_ns = timing->local_ns,
        .remote_ns = timing->remote_ns,
        .send_ns = send_ns,
        .broker = channel->config->broker_id,
        .io_threads = (guint16)channel->config->num_io_threads,
        .kind = timing->kind,
        .acks = timing->acks,
    };
    history_request(channel->history, &request);
}

static void
classify(Timing *timing, const SimMsg *msg)
{
    timing->kind = HISTORY_REQUEST_OTHER;
    timing->acks = 0;
    if (msg->type == KMSG_PRODUCE_REQUEST) {
        timing->kind = HISTORY_REQUEST_PRODUCE;
        timing->acks = (gint8)((const KProduceRequest *)msg)->acks;
    } else if (msg->type == KMSG_FETCH_REQUEST) {
        gboolean follower = ((const KFetchRequest *)msg)->replica_id >= 0;
        timing->kind = follower ? HISTORY_REQUEST_FETCH_FOLLOWER : HISTORY_REQUEST_FETCH_CONSUMER;
    }
}

/* An I/O thread finished a request: the broker handles it now. A response
 * is due unless it is an acks=0 produce. */
static gboolean
io_done_cb(void *owner, void *data, const RequestQueueTiming *done)
{
    RequestChannel *channel = owner;
    Item *item = data;
    item->timing.queue_ns = done->started_ns - done->enqueued_ns;
    item->timing.local_ns = done->done_ns - done->started_ns;
    item->timing.handled_ns = done->done_ns;
    const KHeader *header = (const KHeader *)item->msg;
    gboolean answered = !(item->timing.kind == HISTORY_REQUEST_PRODUCE && item->timing.acks == 0);
    if (answered) {
        Timing *timing = g_memdup2(&item->timing, sizeof item->timing);
        timing->key.peer = item->peer;
        timing->key.type = (gint32)item->msg->type + 1;
        timing->key.correlation_id = header->correlation_id;
        KSIM_ASSERT(g_hash_table_size(channel->pending) < PENDING_MAX);
        g_hash_table_replace(channel->pending, &timing->key, timing);
    } else {
        record(channel, &item->timing, 0);
    }
    SimMsg *msg = item->msg;
    SimNodeId peer = item->peer;
    gint32 type = (gint32)msg->type;
    guint64 conn_id = item->timing.conn_id;
    item->msg = NULL;
    item_free(item);
    channel->handle(channel->owner, peer, msg);
    if (!answered)
        conn_unmute(channel, peer, type, conn_id); /* Kafka's NoOpResponse */
    return TRUE;
}

static gboolean
processor_done_cb(void *owner, void *data, const RequestQueueTiming *done)
{
    RequestChannel *channel = owner;
    Item *item = data;
    if (item->kind == ITEM_RESPONSE) {
        record(channel, &item->timing, done->done_ns - done->enqueued_ns);
        SimMsg *msg = item->msg;
        SimNodeId peer = item->peer;
        gint32 request_type = (gint32)msg->type - 1; /* responses are requests + 1 */
        guint64 conn_id = item->timing.conn_id;
        item->msg = NULL;
        sim_net_send(sim_world_net(channel->world), channel->node, peer, msg);
        item_free(item);
        conn_unmute(channel, peer, request_type, conn_id);
        return TRUE;
    }
    /* Read: Kafka stamps the request's start here (RequestChannel.Request
     * startTimeNanos), so a wait for room in the queue is queue time. */
    if (item->timing.read_ns < 0)
        item->timing.read_ns = done->done_ns - done->enqueued_ns;
    if (request_queue_full(channel->io))
        return FALSE;
    gboolean offered = request_queue_offer(channel->io, item, io_cost_ns(channel, item->msg));
    KSIM_ASSERT(offered);
    return TRUE;
}

static void
io_space_cb(void *owner)
{
    RequestChannel *channel = owner;
    for (guint i = 0; i < channel->n_processors && !request_queue_full(channel->io); i++)
        request_queue_retry_blocked(channel->processors[i]);
}

RequestChannel *
request_channel_new(SimWorld *world, SimNodeId node, const BrokerConfig *config, History *history,
                    RequestChannelHandleFn handle, void *owner)
{
    KSIM_ASSERT(config->num_io_threads >= 1);
    KSIM_ASSERT(config->num_network_threads >= 1);
    KSIM_ASSERT(config->queued_max_requests >= 1);
    RequestChannel *channel = g_new0(RequestChannel, 1);
    channel->world = world;
    channel->node = node;
    channel->config = config;
    channel->history = history;
    channel->handle = handle;
    channel->owner = owner;
    g_autofree char *stream = g_strdup_printf("broker-%d/request-service", config->broker_id);
    channel->rng = sim_world_rng(world, stream);
    channel->io = request_queue_new(world, node, (guint)config->num_io_threads,
                                    (guint)config->queued_max_requests, io_done_cb, channel);
    request_queue_set_space_cb(channel->io, io_space_cb, channel);
    channel->n_processors = (guint)config->num_network_threads;
    channel->processors = g_new0(RequestQueue *, channel->n_processors);
    for (guint i = 0; i < channel->n_processors; i++)
        channel->processors[i] = request_queue_new(world, node, 1, 0, processor_done_cb, channel);
    channel->processor_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    channel->pending = g_hash_table_new_full(pending_hash, pending_equal, NULL, g_free);
    channel->conns = g_hash_table_new_full(conn_hash, conn_equal, NULL, conn_free);
    return channel;
}

void
request_channel_free(RequestChannel *channel)
{
    if (channel == NULL)
        return;
    request_queue_free(channel->io, item_free);
    for (guint i = 0; i < channel->n_processors; i++)
        request_queue_free(channel->processors[i], item_free);
    g_free(channel->processors);
    g_hash_table_destroy(channel->processor_of);
    g_hash_table_destroy(channel->pending);
    g_hash_table_destroy(channel->conns);
    g_free(channel);
}

void
request_channel_arrived(RequestChannel *channel, SimNodeId from, SimMsg *msg)
{
    KSIM_ASSERT(request_channel_takes(msg));
    Item *item = g_new0(Item, 1);
    item->kind = ITEM_REQUEST;
    item->peer = from;
    item->msg = msg;
    item->timing.read_ns = -1;
    classify(&item->timing, msg);
    Conn *conn = conn_of(channel, from, (gint32)msg->type);
    item->timing.conn_id = conn->id;
    if (conn->muted) {
        g_queue_push_tail(&conn->waiting, item);
        return;
    }
    conn->muted = TRUE;
    read_request(channel, item);
}

/* A network thread reads the request: Kafka's request metrics start here,
 * so the time it waited on a muted connection is the client's alone. */
static void
read_request(RequestChannel *channel, Item *item)
{
    item->timing.arrived_ns = sim_now_ns(channel->world);
    RequestQueue *processor = channel->processors[processor_for(channel, item->peer)];
    gboolean offered = request_queue_offer(processor, item, network_cost_ns(channel, item->msg));
    KSIM_ASSERT(offered); /* a network thread's own queue is unbounded */
}

gboolean
request_channel_respond(RequestChannel *channel, SimNodeId to, SimMsg *msg)
{
    if ((msg->type & 1u) == 0)
        return FALSE; /* requests are even, responses odd (kafka_proto.h) */
    PendingKey key = {to, (gint32)msg->type, ((const KHeader *)msg)->correlation_id};
    Timing *timing = g_hash_table_lookup(channel->pending, &key);
    if (timing == NULL)
        return FALSE;
    Item *item = g_new0(Item, 1);
    item->kind = ITEM_RESPONSE;
    item->peer = to;
    item->msg = msg;
    item->timing = *timing;
    item->timing.remote_ns = sim_now_ns(channel->world) - timing->handled_ns;
    g_hash_table_remove(channel->pending, &key);
    RequestQueue *processor = channel->processors[processor_for(channel, to)];
    gboolean offered = request_queue_offer(processor, item, network_cost_ns(channel, msg));
    KSIM_ASSERT(offered);
    return TRUE;
}

/* Both tables' keys (PendingKey, ConnKey) begin with the peer. */
static gboolean
key_of_peer(gpointer key, gpointer value, gpointer data)
{
    (void)value;
    return *(const SimNodeId *)key == *(const SimNodeId *)data;
}

void
request_channel_peer_disconnected(RequestChannel *channel, SimNodeId peer)
{
    /* The walks only free, so their order reaches nothing. The connections
     * close: what they had not read is gone with them. */
    g_hash_table_foreach_remove(channel->pending, key_of_peer, &peer); /* tidy: allow frees only */
    g_hash_table_foreach_remove(channel->conns, key_of_peer, &peer);   /* tidy: allow frees only */
}

static void
check_conn(gpointer key, gpointer value, gpointer data)
{
    const Conn *conn = value;
    (void)data;
    KSIM_ASSERT(key == &conn->key);
    KSIM_ASSERT(conn->muted || conn->waiting.length == 0); /* invariant 4 */
}

void
request_channel_check_invariants(const RequestChannel *channel)
{
    g_hash_table_foreach(channel->conns, check_conn, NULL); /* tidy: allow each is checked alone */
    request_queue_check_invariants(channel->io);
    for (guint i = 0; i < channel->n_processors; i++)
        request_queue_check_invariants(channel->processors[i]);
    KSIM_ASSERT(g_hash_table_size(channel->pending) <= PENDING_MAX);
}
