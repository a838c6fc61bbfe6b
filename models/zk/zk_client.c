/*
 * zk_client: the coordination client library (see zk_client.h).
 *
 * States and the functions that move between them:
 *
 *   zk_client_new ─▶ CONNECTING ──connect reply OK (client_on_connect_reply)──▶ CONNECTED
 *                          │  ▲                                                      │
 *     disconnect or connect│  │ reconnect timer (client_reconnect_cb)   disconnect,  │
 *     timeout              │  │                                         read timeout,│
 *     (client_connection_  ▼  │                                         xid gap      │
 *      lost)             BACKOFF ◀─────────────(client_connection_lost)──────────────┘
 *   CONNECTING ──reply SESSION_EXPIRED (client_expire)──▶ EXPIRED
 *   CONNECTED ──close-session reply (client_closed)──▶ CLOSED
 *   EXPIRED | CLOSED ──zk_client_new_session──▶ CONNECTING
 *
 * Invariants (zk_client_check_invariants):
 *  1. CONNECTED ⇔ a session is established on the connection: session_id and
 *     the negotiated timeout are set; requests wait in `queued` there only
 *     while `max_in_flight` of them are in flight (`in_flight`, which counts
 *     the requests of client_pump in `pending`: not pings or SetWatches).
 *  2. Only CONNECTED has requests in flight (`pending`), in increasing xid
 *     order, all below `xid_next`.
 *  3. The tick timer is pending in CONNECTING and CONNECTED (connect, read
 *     and ping deadlines); the reconnect timer exactly in BACKOFF.
 *  4. EXPIRED and CLOSED have nothing queued or in flight and no watches; a
 *     client without a session (id 0) has no watches.
 *  5. Requests refused at submission (`completions`) have the completion
 *     timer pending.
 */
#include "zk_client.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* A bound on requests queued or in flight: a broker that never gets answers
 * must not grow them without limit. */
#define REQUESTS_MAX (1u << 20)

/* Watches re-registered per SetWatches request. */
#define SET_WATCHES_BATCH 1024u

typedef struct {
    ZkOpType type;
    char *path; /* the first op's path, for watches and results (may be NULL) */
    gboolean watch;
    gboolean counted;     /* sent by client_pump: counted in `in_flight` */
    ZkResultFn cb;
    void *arg;
    guint version_op;     /* MULTI: the op whose version the result reports */
    gint64 xid;           /* set when sent */
    ZkRequestMsg *msg; /* owned until sent */
    ZkError error;     /* the failure a completion reports */
} Request;

struct ZkClient {
    SimWorld *world;
    SimNodeId self;
    SimNodeId server;
    gint64 session_timeout_ns;    /* requested */
    gint64 negotiated_timeout_ns; /* 0 until the first session */
    ZkClientCallbacks callbacks;
    void *owner;
    SimRng *rng; /* (transfer none) the world's stream for this node's client */
    ZkClientState state;
    guint64 session_id;
    guint64 last_zxid;
    gint64 xid_next;
    guint32 attempt;
    gint64 last_send_ns;
    gint64 last_recv_ns;
    gint64 connect_sent_ns;
    GQueue queued;      /* Request *, waiting for the session */
    GQueue pending;     /* Request *, sent, in xid order */
    guint in_flight;     /* requests in `pending` sent by client_pump */
    guint max_in_flight; /* 0: unlimited */
    GQueue completions; /* Request *, refused, completed by the completion timer */
    GTree *watch_data;  /* paths with a data watch */
    GTree *watch_exist; /* paths with an exist watch (the znode did not exist) */
    GTree *watch_child; /* paths with a child watch */
    SimTimerId tick_timer;
    gint64 tick_at_ns;
    SimTimerId reconnect_timer;
    SimTimerId completion_timer;
    guint depth;             /* nesting of entry points on the stack */
    gboolean free_requested; /* freed from a callback: destroyed on the way out */
};

static gint
path_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    return strcmp(a, b);
}

static GTree *
path_set_new(void)
{
    return g_tree_new_full(path_compare, NULL, g_free, NULL);
}

static void
request_free(Request *r)
{
    g_free(r->path);
    sim_msg_free(r->msg ? &r->msg->base : NULL);
    g_free(r);
}

static void
request_free_cb(gpointer data)
{
    request_free(data);
}

static gint64
client_now(const ZkClient *c)
{
    return sim_now_ns(c->world);
}

static SimNet *
client_net(const ZkClient *c)
{
    return sim_world_net(c->world);
}

/* ---- entry points and the deferred free ---- */

static void
client_destroy(ZkClient *c)
{
    sim_timer_cancel(c->world, c->tick_timer);
    sim_timer_cancel(c->world, c->reconnect_timer);
    sim_timer_cancel(c->world, c->completion_timer);
    g_queue_clear_full(&c->queued, request_free_cb);
    g_queue_clear_full(&c->pending, request_free_cb);
    g_queue_clear_full(&c->completions, request_free_cb);
    g_tree_destroy(c->watch_data);
    g_tree_destroy(c->watch_exist);
    g_tree_destroy(c->watch_child);
    g_free(c);
}

static void
client_enter(ZkClient *c)
{
    KSIM_ASSERT(c->depth < G_MAXUINT);
    c->depth++;
}

/* Leaves an entry point; the last one out destroys a client freed meanwhile. */
static void
client_leave(ZkClient *c)
{
    KSIM_ASSERT(c->depth > 0);
    c->depth--;
    if (c->depth == 0 && c->free_requested)
        client_destroy(c);
}

/* ---- callbacks to the owner (never after the client was freed) ---- */

static void
notify_established(ZkClient *c, gboolean is_new)
{
    if (!c->free_requested && c->callbacks.session_established != NULL)
        c->callbacks.session_established(c->owner, is_new);
}

static void
notify_expired(ZkClient *c)
{
    if (!c->free_requested && c->callbacks.session_expired != NULL)
        c->callbacks.session_expired(c->owner);
}

static void
notify_disconnected(ZkClient *c)
{
    if (!c->free_requested && c->callbacks.disconnected != NULL)
        c->callbacks.disconnected(c->owner);
}

static void
notify_watch(ZkClient *c, const char *path, ZkEventType type)
{
    if (!c->free_requested && c->callbacks.watch_fired != NULL)
        c->callbacks.watch_fired(c->owner, path, type);
}

static void
request_fail(ZkClient *c, Request *r, ZkError error)
{
    if (c->free_requested || r->cb == NULL)
        return;
    ZkResult result = {0};
    result.error = error;
    result.op = r->type;
    result.path = r->path;
    r->cb(c->owner, &result, r->arg);
}

/* Completes every request in `requests` (taken from the client) with `error`. */
static void
requests_fail(ZkClient *c, GQueue *requests, ZkError error)
{
    Request *r;
    while ((r = g_queue_pop_head(requests)) != NULL) {
        request_fail(c, r, error);
        request_free(r);
    }
}

/* Moves everything in flight and queued, in submission order, into `out`. */
static void
requests_take(ZkClient *c, GQueue *out)
{
    g_queue_init(out);
    Request *r;
    while ((r = g_queue_pop_head(&c->pending)) != NULL) {
        r->counted = FALSE;
        g_queue_push_tail(out, r);
    }
    c->in_flight = 0;
    while ((r = g_queue_pop_head(&c->queued)) != NULL)
        g_queue_push_tail(out, r);
}

/* ---- timers ---- */

static gint64
client_read_timeout_ns(const ZkClient *c)
{
    return c->negotiated_timeout_ns * 2 / 3;
}

static gint64
client_ping_interval_ns(const ZkClient *c)
{
    return c->negotiated_timeout_ns / 3;
}

/* ZooKeeper's connectTimeout: the session timeout over the number of servers
 * (one here). */
static gint64
client_connect_timeout_ns(const ZkClient *c)
{
    return c->negotiated_timeout_ns > 0 ? c->negotiated_timeout_ns : c->session_timeout_ns;
}

/* When the tick must next look at the connection, or -1 for never. */
static gint64
client_next_tick_ns(const ZkClient *c)
{
    if (c->state == ZK_CLIENT_CONNECTED)
        return MIN(c->last_recv_ns + client_read_timeout_ns(c),
                   c->last_send_ns + client_ping_interval_ns(c));
    if (c->state == ZK_CLIENT_CONNECTING)
        return MIN(c->connect_sent_ns + client_connect_timeout_ns(c),
                   c->last_send_ns + ZK_CLIENT_PROBE_NS);
    return -1;
}

static void client_tick_cb(SimWorld *world, void *ctx, void *arg);

/* Keeps the tick timer at or before the next deadline. Deadlines only move
 * later with traffic, so a tick that fires early just re-arms. */
static void
client_arm_tick(ZkClient *c)
{
    gint64 at_ns = client_next_tick_ns(c);
    gboolean armed = sim_timer_pending(c->world, c->tick_timer);
    if (at_ns < 0) {
        sim_timer_cancel(c->world, c->tick_timer);
        return;
    }
    if (armed && c->tick_at_ns <= at_ns)
        return;
    sim_timer_cancel(c->world, c->tick_timer);
    c->tick_at_ns = MAX(at_ns, client_now(c));
    c->tick_timer =
        sim_timer_set(c->world, c->self, c->tick_at_ns - client_now(c), client_tick_cb, c);
}

static void client_reconnect_cb(SimWorld *world, void *ctx, void *arg);

/* The connection failed (or we give up on it): everything outstanding
 * completes with CONNECTION_LOSS and the client reconnects after a backoff. */
static void
client_connection_lost(ZkClient *c, gboolean close_connection)
{
    KSIM_ASSERT(c->state == ZK_CLIENT_CONNECTED || c->state == ZK_CLIENT_CONNECTING);
    gboolean was_connected = c->state == ZK_CLIENT_CONNECTED;
    if (close_connection)
        sim_net_close(client_net(c), c->self, c->server);
    c->state = ZK_CLIENT_BACKOFF;
    GQueue failed;
    requests_take(c, &failed);
    sim_timer_cancel(c->world, c->tick_timer);
    gint64 backoff_ns = sim_rng_range(c->rng, 0, ZK_CLIENT_BACKOFF_NS_MAX);
    c->reconnect_timer = sim_timer_set(c->world, c->self, backoff_ns, client_reconnect_cb, c);
    requests_fail(c, &failed, ZK_CONNECTION_LOSS);
    if (was_connected)
        notify_disconnected(c);
}

static void
watches_clear(ZkClient *c)
{
    g_tree_remove_all(c->watch_data);
    g_tree_remove_all(c->watch_exist);
    g_tree_remove_all(c->watch_child);
}

/* The session is gone, or was closed: nothing outstanding can succeed. */
static void
client_session_end(ZkClient *c, ZkClientState state)
{
    KSIM_ASSERT(state == ZK_CLIENT_EXPIRED || state == ZK_CLIENT_CLOSED);
    sim_net_close(client_net(c), c->self, c->server);
    c->state = state;
    GQueue failed;
    requests_take(c, &failed);
    sim_timer_cancel(c->world, c->tick_timer);
    watches_clear(c);
    requests_fail(c, &failed, ZK_SESSION_EXPIRED);
}

static void
client_expire(ZkClient *c)
{
    client_session_end(c, ZK_CLIENT_EXPIRED);
    notify_expired(c);
}

static void
client_send(ZkClient *c, Request *r)
{
    KSIM_ASSERT(c->state == ZK_CLIENT_CONNECTED);
    KSIM_ASSERT(r->msg != NULL);
    KSIM_ASSERT(g_queue_get_length(&c->pending) < REQUESTS_MAX);
    r->xid = c->xid_next++;
    r->msg->session_id = c->session_id;
    r->msg->xid = r->xid;
    sim_net_send(client_net(c), c->self, c->server, &r->msg->base);
    r->msg = NULL;
    g_queue_push_tail(&c->pending, r);
    c->last_send_ns = client_now(c);
}

/* Sends queued requests while fewer than `max_in_flight` are unanswered, as
 * Kafka's ZooKeeperClient does with a semaphore of
 * zookeeper.max.in.flight.requests permits (Kafka 2.x, ZooKeeperClient.send):
 * KafkaZkClient pipelines its reads and writes up to that many. */
static void
client_pump(ZkClient *c)
{
    while (c->state == ZK_CLIENT_CONNECTED && !g_queue_is_empty(&c->queued) &&
           (c->max_in_flight == 0 || c->in_flight < c->max_in_flight)) {
        Request *r = g_queue_pop_head(&c->queued);
        r->counted = TRUE;
        c->in_flight++;
        client_send(c, r);
    }
}

static Request *
request_new(ZkOpType type, guint n_ops, const char *path, ZkResultFn cb, void *arg)
{
    Request *r = g_new0(Request, 1);
    r->type = type;
    r->path = g_strdup(path);
    r->cb = cb;
    r->arg = arg;
    r->msg = zk_msg_request_new(type, n_ops);
    return r;
}

static void
client_send_ping(ZkClient *c)
{
    Request *r = request_new(ZK_OP_PING, 0, NULL, NULL, NULL);
    zk_msg_request_finish(r->msg);
    client_send(c, r);
}

/* TCP's retransmission while connecting (see zk_proto.h). */
static void
client_send_probe(ZkClient *c)
{
    sim_net_send(client_net(c), c->self, c->server, zk_msg_probe_new());
    c->last_send_ns = client_now(c);
}

static void
client_tick_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkClient *c = arg;
    (void)world;
    (void)ctx;
    client_enter(c);
    gint64 now = client_now(c);
    if (c->state == ZK_CLIENT_CONNECTED) {
        if (now >= c->last_recv_ns + client_read_timeout_ns(c))
            client_connection_lost(c, TRUE);
        else if (now >= c->last_send_ns + client_ping_interval_ns(c))
            client_send_ping(c);
    } else if (c->state == ZK_CLIENT_CONNECTING) {
        if (now >= c->connect_sent_ns + client_connect_timeout_ns(c))
            client_connection_lost(c, TRUE);
        else if (now >= c->last_send_ns + ZK_CLIENT_PROBE_NS)
            client_send_probe(c);
    }
    if (!c->free_requested)
        client_arm_tick(c);
    client_leave(c);
}

static void
client_connect(ZkClient *c)
{
    c->attempt++;
    c->state = ZK_CLIENT_CONNECTING;
    c->connect_sent_ns = client_now(c);
    c->last_send_ns = c->connect_sent_ns;
    ZkConnectMsg *msg =
        zk_msg_connect_new(c->session_id, c->session_timeout_ns, c->last_zxid, c->attempt);
    sim_net_send(client_net(c), c->self, c->server, &msg->base);
    client_arm_tick(c);
}

static void
client_reconnect_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkClient *c = arg;
    (void)world;
    (void)ctx;
    client_enter(c);
    KSIM_ASSERT(c->state == ZK_CLIENT_BACKOFF);
    client_connect(c);
    client_leave(c);
}

static void
client_completion_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkClient *c = arg;
    (void)world;
    (void)ctx;
    client_enter(c);
    GQueue done = c->completions;
    g_queue_init(&c->completions);
    Request *r;
    while ((r = g_queue_pop_head(&done)) != NULL) {
        request_fail(c, r, r->error);
        request_free(r);
    }
    client_leave(c);
}

/* ---- incoming messages ---- */

typedef struct {
    ZkOpType type; /* GET: a data watch, EXISTS: an exist watch, CHILDREN: a child watch */
    const char *path;
} WatchEntry;

static void
client_send_watch_batch(ZkClient *c, const WatchEntry *entries, guint n)
{
    Request *r = request_new(ZK_OP_SET_WATCHES, n, NULL, NULL, NULL);
    r->msg->relative_zxid = c->last_zxid;
    for (guint i = 0; i < n; i++) {
        r->msg->ops[i].type = entries[i].type;
        r->msg->ops[i].path = g_strdup(entries[i].path);
    }
    zk_msg_request_finish(r->msg);
    client_send(c, r);
}

/* ZooKeeper's SetWatches: after resuming a session, the client registers its
 * watches again with the last zxid it saw, in batches as ZooKeeper does. */
static void
client_send_set_watches(ZkClient *c)
{
    GTree *sets[3] = {c->watch_data, c->watch_exist, c->watch_child};
    const ZkOpType types[3] = {ZK_OP_GET, ZK_OP_EXISTS, ZK_OP_CHILDREN};
    g_autoptr(GArray) entries = g_array_new(FALSE, FALSE, sizeof(WatchEntry));
    for (guint k = 0; k < 3; k++) {
        for (GTreeNode *w = g_tree_node_first(sets[k]); w != NULL; w = g_tree_node_next(w)) {
            WatchEntry entry = {types[k], g_tree_node_key(w)};
            g_array_append_val(entries, entry);
        }
    }
    for (guint i = 0; i < entries->len; i += SET_WATCHES_BATCH)
        client_send_watch_batch(c, &g_array_index(entries, WatchEntry, i),
                                MIN(SET_WATCHES_BATCH, entries->len - i));
}

static void
client_on_connect_reply(ZkClient *c, const ZkConnectReplyMsg *msg)
{
    if (c->state != ZK_CLIENT_CONNECTING || msg->attempt != c->attempt)
        return; /* an answer to an attempt we gave up on */
    if (msg->error != ZK_OK) {
        client_expire(c);
        return;
    }
    gboolean is_new = c->session_id == 0;
    KSIM_ASSERT(is_new || msg->session_id == c->session_id);
    KSIM_ASSERT(msg->timeout_ns > 0);
    c->session_id = msg->session_id;
    c->negotiated_timeout_ns = msg->timeout_ns;
    c->state = ZK_CLIENT_CONNECTED;
    if (!is_new)
        client_send_set_watches(c);
    client_pump(c);
    client_arm_tick(c);
    notify_established(c, is_new);
}

static void
request_register_watch(ZkClient *c, const Request *r, ZkError error)
{
    if (!r->watch)
        return;
    GTree *set = NULL;
    if (r->type == ZK_OP_GET && error == ZK_OK)
        set = c->watch_data;
    else if (r->type == ZK_OP_EXISTS && error == ZK_OK)
        set = c->watch_data;
    else if (r->type == ZK_OP_EXISTS && error == ZK_NO_NODE)
        set = c->watch_exist;
    else if (r->type == ZK_OP_CHILDREN && error == ZK_OK)
        set = c->watch_child;
    if (set != NULL)
        g_tree_insert(set, g_strdup(r->path), GINT_TO_POINTER(1));
}

static void
request_complete(ZkClient *c, const Request *r, const ZkReplyMsg *reply)
{
    if (c->free_requested || r->cb == NULL)
        return;
    ZkResult result = {0};
    result.error = reply->error;
    result.op = r->type;
    result.path = r->path;
    g_autofree ZkOpResult *ops = NULL;
    if (r->type == ZK_OP_MULTI) {
        ops = g_new0(ZkOpResult, MAX(reply->n_results, 1));
        for (guint i = 0; i < reply->n_results; i++) {
            ops[i].error = reply->results[i].error;
            ops[i].path = reply->results[i].path;
            ops[i].stat = reply->results[i].stat;
        }
        result.n_ops = reply->n_results;
        result.ops = ops;
        if (r->version_op < reply->n_results)
            result.version = reply->results[r->version_op].stat.version;
    } else if (reply->n_results == 1) {
        const ZkWireResult *w = &reply->results[0];
        result.stat = w->stat;
        result.version = w->stat.version;
        result.path = w->path != NULL ? w->path : r->path;
        result.data = w->data == NULL ? NULL : g_bytes_get_data(w->data, &result.len);
        result.children = (const char *const *)w->children;
    }
    r->cb(c->owner, &result, r->arg);
}

static void
client_on_reply(ZkClient *c, const ZkReplyMsg *reply)
{
    if (c->state != ZK_CLIENT_CONNECTED || reply->session_id != c->session_id)
        return;
    Request *head = g_queue_peek_head(&c->pending);
    if (head == NULL || reply->xid < head->xid)
        return; /* a stale or duplicated reply */
    if (reply->xid > head->xid) {
        /* A reply went missing: ZooKeeper's "Xid out of order" ends the
         * connection. */
        client_connection_lost(c, TRUE);
        return;
    }
    g_queue_pop_head(&c->pending);
    if (head->counted) {
        KSIM_ASSERT(c->in_flight > 0);
        c->in_flight--;
    }
    /* As ZooKeeper's client, only answers to real requests advance the last
     * zxid seen (the one SetWatches compares against). */
    if (head->type != ZK_OP_PING)
        c->last_zxid = MAX(c->last_zxid, reply->zxid);
    request_register_watch(c, head, reply->error);
    gboolean closed = head->type == ZK_OP_CLOSE_SESSION && reply->error == ZK_OK;
    gboolean expired = reply->error == ZK_SESSION_EXPIRED;
    if (closed)
        client_session_end(c, ZK_CLIENT_CLOSED);
    request_complete(c, head, reply);
    request_free(head);
    if (expired && !c->free_requested && c->state == ZK_CLIENT_CONNECTED)
        client_expire(c);
    if (!c->free_requested)
        client_pump(c);
}

static void
client_on_watch_event(ZkClient *c, const ZkWatchEventMsg *event)
{
    if (c->state != ZK_CLIENT_CONNECTED || event->session_id != c->session_id)
        return;
    gboolean registered = FALSE;
    if (event->type != ZK_EVENT_NODE_CHILDREN_CHANGED) {
        registered |= g_tree_remove(c->watch_data, event->path);
        registered |= g_tree_remove(c->watch_exist, event->path);
    }
    if (event->type == ZK_EVENT_NODE_CHILDREN_CHANGED || event->type == ZK_EVENT_NODE_DELETED)
        registered |= g_tree_remove(c->watch_child, event->path);
    if (registered)
        notify_watch(c, event->path, event->type);
}

gboolean
zk_client_handle_message(ZkClient *c, SimNodeId from, SimMsg *msg)
{
    KSIM_ASSERT(c != NULL);
    KSIM_ASSERT(msg != NULL);
    if (from != c->server || msg->type < ZK_MSG_FIRST || msg->type > ZK_MSG_LAST)
        return FALSE;
    client_enter(c);
    c->last_recv_ns = client_now(c);
    if (msg->type == ZK_MSG_CONNECT_REPLY)
        client_on_connect_reply(c, (const ZkConnectReplyMsg *)msg);
    else if (msg->type == ZK_MSG_REPLY)
        client_on_reply(c, (const ZkReplyMsg *)msg);
    else if (msg->type == ZK_MSG_WATCH_EVENT)
        client_on_watch_event(c, (const ZkWatchEventMsg *)msg);
    sim_msg_free(msg);
    client_leave(c);
    return TRUE;
}

void
zk_client_handle_disconnect(ZkClient *c, SimNodeId peer)
{
    KSIM_ASSERT(c != NULL);
    if (peer != c->server)
        return;
    client_enter(c);
    if (c->state == ZK_CLIENT_CONNECTED || c->state == ZK_CLIENT_CONNECTING)
        client_connection_lost(c, FALSE);
    client_leave(c);
}

/* ---- lifecycle ---- */

ZkClient *
zk_client_new(SimWorld *world, SimNodeId self, SimNodeId server, gint64 session_timeout_ns,
                 const ZkClientCallbacks *callbacks, void *owner)
{
    KSIM_ASSERT(world != NULL);
    KSIM_ASSERT(self != server);
    KSIM_ASSERT(session_timeout_ns > 0);
    ZkClient *c = g_new0(ZkClient, 1);
    c->world = world;
    c->self = self;
    c->server = server;
    c->session_timeout_ns = session_timeout_ns;
    if (callbacks != NULL)
        c->callbacks = *callbacks;
    c->owner = owner;
    g_autofree char *rng_name = g_strdup_printf("coord_client/%s", sim_node_name(world, self));
    c->rng = sim_world_rng(world, rng_name);
    c->xid_next = 1;
    g_queue_init(&c->queued);
    g_queue_init(&c->pending);
    g_queue_init(&c->completions);
    c->watch_data = path_set_new();
    c->watch_exist = path_set_new();
    c->watch_child = path_set_new();
    client_connect(c);
    return c;
}

void
zk_client_free(ZkClient *c)
{
    if (c == NULL)
        return;
    if (c->depth > 0) {
        c->free_requested = TRUE;
        return;
    }
    client_destroy(c);
}

void
zk_client_new_session(ZkClient *c)
{
    KSIM_ASSERT(c != NULL);
    KSIM_ASSERT(!c->free_requested);
    if (c->state != ZK_CLIENT_EXPIRED && c->state != ZK_CLIENT_CLOSED)
        return;
    c->session_id = 0;
    c->last_zxid = 0;
    c->negotiated_timeout_ns = 0;
    watches_clear(c);
    client_connect(c);
}

void
zk_client_set_max_in_flight(ZkClient *c, guint max_in_flight)
{
    KSIM_ASSERT(c != NULL);
    c->max_in_flight = max_in_flight;
    client_enter(c);
    client_pump(c);
    client_leave(c);
}

ZkClientState
zk_client_state(const ZkClient *c)
{
    return c->state;
}

guint64
zk_client_session_id(const ZkClient *c)
{
    return c->session_id;
}

gint64
zk_client_session_timeout_ns(const ZkClient *c)
{
    return c->negotiated_timeout_ns;
}

/* ---- operations ---- */

static void
client_submit(ZkClient *c, Request *r)
{
    KSIM_ASSERT(!c->free_requested);
    zk_msg_request_finish(r->msg);
    switch (c->state) {
    case ZK_CLIENT_CONNECTED:
        KSIM_ASSERT(g_queue_get_length(&c->queued) < REQUESTS_MAX);
        g_queue_push_tail(&c->queued, r);
        client_pump(c);
        client_arm_tick(c);
        return;
    case ZK_CLIENT_CONNECTING:
    case ZK_CLIENT_BACKOFF:
        KSIM_ASSERT(g_queue_get_length(&c->queued) < REQUESTS_MAX);
        g_queue_push_tail(&c->queued, r);
        return;
    case ZK_CLIENT_EXPIRED:
    case ZK_CLIENT_CLOSED:
        break;
    }
    /* Refused at once, but completed from a timer so the caller's callback
     * never runs inside its own call. */
    r->error = ZK_SESSION_EXPIRED;
    g_queue_push_tail(&c->completions, r);
    if (!sim_timer_pending(c->world, c->completion_timer))
        c->completion_timer = sim_timer_set(c->world, c->self, 0, client_completion_cb, c);
}

static void
wire_op_fill(ZkWireOp *op, ZkOpType type, const char *path, const void *data, gsize len,
             gint32 version, guint32 flags)
{
    KSIM_ASSERT(path != NULL);
    KSIM_ASSERT(data != NULL || len == 0);
    op->type = type;
    op->path = g_strdup(path);
    op->version = version;
    op->flags = flags;
    if (type == ZK_OP_CREATE || type == ZK_OP_SET)
        op->data = g_bytes_new(data, len);
}

/* A request of one op. */
static Request *
request_single(ZkOpType type, const char *path, const void *data, gsize len, gint32 version,
               guint32 flags, ZkResultFn cb, void *arg)
{
    Request *r = request_new(type, 1, path, cb, arg);
    wire_op_fill(&r->msg->ops[0], type, path, data, len, version, flags);
    return r;
}

void
zk_client_create(ZkClient *c, const char *path, const void *data, gsize len, guint32 flags,
                    ZkResultFn result_cb, void *arg)
{
    client_submit(c, request_single(ZK_OP_CREATE, path, data, len, 0, flags, result_cb, arg));
}

void
zk_client_delete(ZkClient *c, const char *path, gint32 version, ZkResultFn result_cb,
                    void *arg)
{
    client_submit(c, request_single(ZK_OP_DELETE, path, NULL, 0, version, 0, result_cb, arg));
}

static void
client_read(ZkClient *c, ZkOpType type, const char *path, gboolean watch,
            ZkResultFn result_cb, void *arg)
{
    Request *r = request_single(type, path, NULL, 0, ZK_VERSION_ANY, 0, result_cb, arg);
    r->watch = watch;
    r->msg->ops[0].watch = watch;
    client_submit(c, r);
}

void
zk_client_get(ZkClient *c, const char *path, gboolean watch, ZkResultFn result_cb,
                 void *arg)
{
    client_read(c, ZK_OP_GET, path, watch, result_cb, arg);
}

void
zk_client_exists(ZkClient *c, const char *path, gboolean watch, ZkResultFn result_cb,
                    void *arg)
{
    client_read(c, ZK_OP_EXISTS, path, watch, result_cb, arg);
}

void
zk_client_children(ZkClient *c, const char *path, gboolean watch, ZkResultFn result_cb,
                      void *arg)
{
    client_read(c, ZK_OP_CHILDREN, path, watch, result_cb, arg);
}

void
zk_client_set(ZkClient *c, const char *path, const void *data, gsize len, gint32 version,
                 ZkResultFn result_cb, void *arg)
{
    client_submit(c, request_single(ZK_OP_SET, path, data, len, version, 0, result_cb, arg));
}

void
zk_client_multi(ZkClient *c, const ZkOp *ops, guint n_ops, ZkResultFn result_cb,
                   void *arg)
{
    KSIM_ASSERT(ops != NULL || n_ops == 0);
    Request *r = request_new(ZK_OP_MULTI, n_ops, n_ops > 0 ? ops[0].path : NULL, result_cb, arg);
    r->version_op = n_ops > 0 ? n_ops - 1 : 0;
    for (guint i = 0; i < n_ops; i++) {
        KSIM_ASSERT(ops[i].type == ZK_OP_CHECK || ops[i].type == ZK_OP_CREATE ||
                    ops[i].type == ZK_OP_SET || ops[i].type == ZK_OP_DELETE);
        if (ops[i].type == ZK_OP_CREATE || ops[i].type == ZK_OP_SET)
            r->version_op = i;
        wire_op_fill(&r->msg->ops[i], ops[i].type, ops[i].path, ops[i].data, ops[i].len,
                     ops[i].version, ops[i].flags);
    }
    client_submit(c, r);
}

void
zk_client_set_checked(ZkClient *c, const char *check_path, gint32 check_version,
                         const char *path, const void *data, gsize len, gint32 version,
                         ZkResultFn result_cb, void *arg)
{
    const ZkOp ops[2] = {
        {.type = ZK_OP_CHECK, .path = check_path, .version = check_version},
        {.type = ZK_OP_SET, .path = path, .data = data, .len = len, .version = version},
    };
    zk_client_multi(c, ops, 2, result_cb, arg);
}

void
zk_client_create_checked(ZkClient *c, const char *check_path, gint32 check_version,
                            const char *path, const void *data, gsize len, guint32 flags,
                            ZkResultFn result_cb, void *arg)
{
    const ZkOp ops[2] = {
        {.type = ZK_OP_CHECK, .path = check_path, .version = check_version},
        {.type = ZK_OP_CREATE, .path = path, .data = data, .len = len, .flags = flags},
    };
    zk_client_multi(c, ops, 2, result_cb, arg);
}

void
zk_client_delete_checked(ZkClient *c, const char *check_path, gint32 check_version,
                            const char *path, gint32 version, ZkResultFn result_cb, void *arg)
{
    const ZkOp ops[2] = {
        {.type = ZK_OP_CHECK, .path = check_path, .version = check_version},
        {.type = ZK_OP_DELETE, .path = path, .version = version},
    };
    zk_client_multi(c, ops, 2, result_cb, arg);
}

void
zk_client_close_session(ZkClient *c, ZkResultFn result_cb, void *arg)
{
    client_submit(c, request_new(ZK_OP_CLOSE_SESSION, 0, NULL, result_cb, arg));
}

/* ---- invariants ---- */

static guint
client_watch_count(const ZkClient *c)
{
    return (guint)(g_tree_nnodes(c->watch_data) + g_tree_nnodes(c->watch_exist) +
                   g_tree_nnodes(c->watch_child));
}

void
zk_client_check_invariants(const ZkClient *c)
{
    KSIM_ASSERT(c != NULL);
    KSIM_ASSERT(!c->free_requested);
    gboolean connected = c->state == ZK_CLIENT_CONNECTED;
    if (connected) {
        KSIM_ASSERT(c->session_id != 0);
        KSIM_ASSERT(c->negotiated_timeout_ns > 0);
        if (c->queued.length > 0) {
            KSIM_ASSERT(c->max_in_flight > 0);
            KSIM_ASSERT(c->in_flight >= c->max_in_flight);
        }
    }
    guint counted = 0;
    for (GList *link = c->pending.head; link != NULL; link = link->next)
        counted += ((const Request *)link->data)->counted ? 1u : 0u;
    KSIM_ASSERT(counted == c->in_flight);
    if (!connected)
        KSIM_ASSERT(c->pending.length == 0);
    gint64 xid_last = 0;
    for (GList *link = c->pending.head; link != NULL; link = link->next) {
        const Request *r = link->data;
        KSIM_ASSERT(r->xid > xid_last);
        KSIM_ASSERT(r->xid < c->xid_next);
        xid_last = r->xid;
    }
    gboolean ticking = connected || c->state == ZK_CLIENT_CONNECTING;
    KSIM_ASSERT(sim_timer_pending(c->world, c->tick_timer) == ticking);
    KSIM_ASSERT(sim_timer_pending(c->world, c->reconnect_timer) ==
                (c->state == ZK_CLIENT_BACKOFF));
    if (c->state == ZK_CLIENT_EXPIRED || c->state == ZK_CLIENT_CLOSED) {
        KSIM_ASSERT(c->queued.length == 0);
        KSIM_ASSERT(client_watch_count(c) == 0);
    }
    if (c->session_id == 0)
        KSIM_ASSERT(client_watch_count(c) == 0);
    if (c->completions.length > 0)
        KSIM_ASSERT(sim_timer_pending(c->world, c->completion_timer));
}
