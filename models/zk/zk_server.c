/*
 * zk_server: the coordination node (see zk_server.h): its state, node
 * callbacks, public API and invariants. The rest of the server is split by
 * concern, sharing zk_server_internal.h:
 *   zk_server_tree.c     paths, and transactions: ops applied to the znode
 *                        tree with an undo log
 *   zk_server_session.c  sessions: their expiry timers and closing
 *   zk_server_request.c  watches, and the dispatch of client requests
 *   zk_server_log.c      the byte codec, the transaction log and the outbox,
 *                        snapshots, and loading (recovery) at restart
 * The wire messages and names that zk_proto.h declares are in zk_proto.c.
 *
 * The server object lives as long as its node. Everything a crash loses lives
 * in a ZkState, which is NULL while the server is down or loading:
 *
 *    zk_server_new ──▶ SERVING ──crash (server_crash)──▶ DOWN
 *                            ▲                                │
 *                            │                                │ restart (server_restart)
 *                            └──load timer (server_load_cb)── LOADING
 *
 * A write is a transaction: its ops are applied to the tree with an undo log
 * (zk_server_txn_run), then appended to the log (zk_server_log_append); if
 * any op fails, or the disk is full, the undo log restores the tree and
 * nothing is logged. Replies and notifications go through the outbox, which
 * holds each message until every transaction logged before it is durable
 * (zk_server_outbox_push, log_synced_cb), so nobody learns of a change that
 * a power loss could still undo.
 *
 * Invariants (zk_server_check_invariants):
 *  1. The znode table and the tree hold the same znodes: every znode but the
 *     root has a parent that lists it among its children under its name, and
 *     its path is the parent's path, "/" (unless the parent is the root) and
 *     its name.
 *  2. An ephemeral znode has no children; its owner is a live session that
 *     lists the path among its ephemerals, and every path a session lists is
 *     an ephemeral znode it owns.
 *  3. Versions are non-negative; czxid <= mzxid <= zxid and pzxid <= zxid;
 *     every session id (the zxid of its creation) is <= zxid.
 *  4. A session lists a watch key ('d' or 'c' + path) exactly when the data
 *     or child watch table holds the session under that path; `watch_count`
 *     counts them; only a session bound to a client node has watches.
 *  5. txn_durable <= txn_written, with equality unless an fsync is in flight;
 *     every outbox message waits for a transaction that is not yet durable,
 *     in non-decreasing order.
 *  6. Every session has a pending expiry timer, and its deadline is at most
 *     its timeout plus one tick away.
 *  7. The service timer is pending exactly while the inbox holds a message
 *     (its head is being served); with no service time the inbox is empty.
 *
 * Disk layout: "coord/log.<10-digit index>" files of records
 *   u32 length | u32 XXH32(payload) | payload
 * where payload = u8 kind | u64 zxid | u64 session | body; and
 * "coord/snapshot" (written as "coord/snapshot.tmp", fsynced, renamed):
 *   u32 magic | u32 length | u32 XXH32(payload) | payload.
 */
#include "zk_server.h"

#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

#include <stdarg.h>
#include <string.h>

#include "zk_server_internal.h"

static gint
name_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    return strcmp(a, b);
}

static gint
id_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    gsize x = GPOINTER_TO_SIZE(a);
    gsize y = GPOINTER_TO_SIZE(b);
    return x < y ? -1 : x > y;
}

static GTree *
string_set_new(void)
{
    return g_tree_new_full(name_compare, NULL, g_free, NULL);
}

GTree *
zk_server_id_set_new(void)
{
    return g_tree_new_full(id_compare, NULL, NULL, NULL);
}

Znode *
zk_server_znode_new(const char *path, GBytes *data)
{
    Znode *node = g_new0(Znode, 1);
    node->path = g_strdup(path);
    node->name = strrchr(node->path, '/') + 1;
    node->data = data == NULL ? g_bytes_new(NULL, 0) : g_bytes_ref(data);
    node->children = g_tree_new_full(name_compare, NULL, NULL, NULL);
    return node;
}

void
zk_server_znode_free(gpointer data)
{
    Znode *node = data;
    g_free(node->path);
    g_bytes_unref(node->data);
    g_tree_destroy(node->children);
    g_free(node);
}

Session *
zk_server_session_new(guint64 id, gint64 timeout_ns)
{
    KSIM_ASSERT(id > 0);
    KSIM_ASSERT(timeout_ns > 0);
    Session *s = g_new0(Session, 1);
    s->id = id;
    s->timeout_ns = timeout_ns;
    s->client = SIM_NODE_NONE;
    s->ephemerals = string_set_new();
    s->watches = string_set_new();
    return s;
}

static void
session_free(gpointer data)
{
    Session *s = data;
    g_tree_destroy(s->ephemerals);
    g_tree_destroy(s->watches);
    g_free(s);
}

void
zk_server_outgoing_free(gpointer data)
{
    Outgoing *out = data;
    sim_msg_free(out->msg);
    g_free(out);
}

ZkState *
zk_server_state_new(void)
{
    ZkState *state = g_new0(ZkState, 1);
    state->znodes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, zk_server_znode_free);
    state->root = zk_server_znode_new("/", NULL);
    g_hash_table_insert(state->znodes, state->root->path, state->root);
    state->sessions = g_tree_new_full(id_compare, NULL, NULL, session_free);
    state->data_watches =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_tree_destroy);
    state->child_watches =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_tree_destroy);
    g_queue_init(&state->outbox);
    g_queue_init(&state->inbox);
    state->service_timer = SIM_EVENT_ID_NONE;
    return state;
}

/* Frees the state without touching the world: a crash has already dropped the
 * node's timers and fsyncs. */
static void
state_free(ZkState *state)
{
    if (state == NULL)
        return;
    g_queue_clear_full(&state->outbox, zk_server_outgoing_free);
    g_queue_clear_full(&state->inbox, (GDestroyNotify)sim_msg_free);
    g_hash_table_destroy(state->data_watches);
    g_hash_table_destroy(state->child_watches);
    g_tree_destroy(state->sessions);
    g_hash_table_destroy(state->znodes);
    g_free(state);
}

Session *
zk_server_session_lookup(const ZkState *state, guint64 id)
{
    return g_tree_lookup(state->sessions, GSIZE_TO_POINTER(id));
}

Znode *
zk_server_znode_lookup(const ZkState *state, const char *path)
{
    return g_hash_table_lookup(state->znodes, path);
}

SimNet *
zk_server_net(const ZkServer *server)
{
    return sim_world_net(server->world);
}

SimDisk *
zk_server_disk(const ZkServer *server)
{
    return sim_node_disk(server->world, server->node);
}

/* A model note in the trace; `a` is a zxid and `b` a session id, or 0. */
void
zk_server_note(ZkServer *server, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *note = g_strdup_vprintf(format, args);
    va_end(args);
    sim_trace_add(sim_world_trace(server->world), sim_now_ns(server->world), SIM_TRACE_MODEL,
                  server->node, peer, a, b, note);
}

/* ---- node callbacks ---- */

static void
server_serve(ZkServer *server, SimMsg *msg)
{
    if (msg->type == ZK_MSG_CONNECT)
        zk_server_on_connect(server, msg->from, (const ZkConnectMsg *)msg);
    else if (msg->type == ZK_MSG_REQUEST)
        zk_server_on_request(server, msg->from, (const ZkRequestMsg *)msg);
    sim_msg_free(msg);
}

/* The bytes a request costs to serve: its own, and what it reads. */
static guint64
request_bytes(const ZkState *state, const SimMsg *msg)
{
    guint64 bytes = msg->size_bytes;
    if (msg->type != ZK_MSG_REQUEST)
        return bytes;
    const ZkRequestMsg *req = (const ZkRequestMsg *)msg;
    if (req->n_ops != 1 || !zk_server_path_valid(req->ops[0].path))
        return bytes;
    const Znode *node = zk_server_znode_lookup(state, req->ops[0].path);
    if (node == NULL)
        return bytes;
    if (req->type == ZK_OP_GET)
        bytes += g_bytes_get_size(node->data);
    if (req->type == ZK_OP_CHILDREN) {
        for (GTreeNode *n = g_tree_node_first(node->children); n != NULL;
             n = g_tree_node_next(n))
            bytes += 4 + strlen(g_tree_node_key(n));
    }
    return bytes;
}

static void server_service_done_cb(SimWorld *world, void *ctx, void *arg);

/* Starts serving the inbox's head, if any and none is being served. */
static void
server_service_next(ZkServer *server)
{
    ZkState *state = server->state;
    if (sim_timer_pending(server->world, state->service_timer) || g_queue_is_empty(&state->inbox))
        return;
    const SimMsg *head = g_queue_peek_head(&state->inbox);
    gint64 cost = server->cfg.request_ns + server->cfg.byte_ns * (gint64)request_bytes(state, head);
    state->service_timer =
        sim_timer_set(server->world, server->node, cost, server_service_done_cb, NULL);
}

static void
server_service_done_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkServer *server = ctx;
    (void)world;
    (void)arg;
    KSIM_ASSERT(server->state != NULL);
    server->state->service_timer = SIM_EVENT_ID_NONE;
    SimMsg *head = g_queue_pop_head(&server->state->inbox);
    KSIM_ASSERT(head != NULL);
    server_serve(server, head);
    if (server->state != NULL)
        server_service_next(server);
}

static gboolean
server_costs_time(const ZkServer *server)
{
    return server->cfg.request_ns > 0 || server->cfg.byte_ns > 0;
}

static void
server_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    ZkServer *server = ctx;
    (void)world;
    if (server->state == NULL) {
        /* Not listening yet: the client's connection is refused. */
        sim_net_close(zk_server_net(server), server->node, from);
        sim_msg_free(msg);
        return;
    }
    KSIM_ASSERT(msg->from == from);
    if (!server_costs_time(server)) {
        server_serve(server, msg);
        return;
    }
    KSIM_ASSERT(g_queue_get_length(&server->state->inbox) < ZK_SERVER_INBOX_MAX);
    g_queue_push_tail(&server->state->inbox, msg);
    server_service_next(server);
}

/* Drops what `peer` sent that is not served yet: its connection is gone. */
static void
inbox_purge(ZkServer *server, SimNodeId peer)
{
    ZkState *state = server->state;
    gboolean head_dropped = FALSE;
    for (GList *link = state->inbox.head; link != NULL;) {
        GList *next = link->next;
        SimMsg *msg = link->data;
        if (msg->from == peer) {
            head_dropped |= link == state->inbox.head;
            sim_msg_free(msg);
            g_queue_delete_link(&state->inbox, link);
        }
        link = next;
    }
    if (head_dropped) {
        sim_timer_cancel(server->world, state->service_timer);
        state->service_timer = SIM_EVENT_ID_NONE;
        server_service_next(server);
    }
}

static void
server_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    ZkServer *server = ctx;
    (void)world;
    (void)reason;
    if (server->state == NULL)
        return;
    inbox_purge(server, peer);
    zk_server_unbind_node(server, peer);
    zk_server_outbox_purge(server->state, peer);
}

static void
server_crash(SimWorld *world, void *ctx)
{
    ZkServer *server = ctx;
    (void)world;
    state_free(server->state);
    server->state = NULL;
}

static void
server_load_cb(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)arg;
    zk_server_load(ctx);
}

static void
server_restart(SimWorld *world, void *ctx)
{
    ZkServer *server = ctx;
    KSIM_ASSERT(server->state == NULL);
    sim_timer_set(world, server->node, server->cfg.load_delay_ns, server_load_cb, NULL);
}

static const SimNodeOps server_ops = {
    .message = server_message,
    .disconnect = server_disconnect,
    .crash = server_crash,
    .restart = server_restart,
};

/* ---- public API ---- */

void
zk_server_config_init(ZkServerConfig *cfg)
{
    KSIM_ASSERT(cfg != NULL);
    memset(cfg, 0, sizeof *cfg);
    cfg->tick_ns = 2000 * SIM_NS_PER_MS;
    cfg->snapshot_txns = 100000;
    cfg->load_delay_ns = 10 * SIM_NS_PER_MS;
    cfg->request_ns = 10 * SIM_NS_PER_US;
    cfg->byte_ns = 20;
}

ZkServer *
zk_server_new(SimWorld *world, const char *name, const ZkServerConfig *cfg)
{
    KSIM_ASSERT(world != NULL);
    ZkServer *server = g_new0(ZkServer, 1);
    server->world = world;
    if (cfg != NULL)
        server->cfg = *cfg;
    else
        zk_server_config_init(&server->cfg);
    KSIM_ASSERT(server->cfg.tick_ns > 0);
    KSIM_ASSERT(server->cfg.snapshot_txns > 0);
    KSIM_ASSERT(server->cfg.load_delay_ns >= 0);
    KSIM_ASSERT(server->cfg.request_ns >= 0);
    KSIM_ASSERT(server->cfg.byte_ns >= 0);
    if (server->cfg.session_timeout_ns_min == 0)
        server->cfg.session_timeout_ns_min = 2 * server->cfg.tick_ns;
    if (server->cfg.session_timeout_ns_max == 0)
        server->cfg.session_timeout_ns_max = 20 * server->cfg.tick_ns;
    KSIM_ASSERT(server->cfg.session_timeout_ns_min <= server->cfg.session_timeout_ns_max);
    server->node = sim_node_add(world, name, &server_ops, server);
    zk_server_load(server);
    return server;
}

void
zk_server_free(ZkServer *server)
{
    if (server == NULL)
        return;
    state_free(server->state);
    g_free(server);
}

void
zk_server_set_ephemeral_listener(ZkServer *server, ZkEphemeralEndedFn ended_cb, void *user_data)
{
    server->ephemeral_ended_cb = ended_cb;
    server->ephemeral_ended_data = user_data;
}

SimNodeId
zk_server_node(const ZkServer *server)
{
    return server->node;
}

gboolean
zk_server_serving(const ZkServer *server)
{
    return server->state != NULL;
}

guint64
zk_server_zxid(const ZkServer *server)
{
    return server->state == NULL ? 0 : server->state->zxid;
}

guint
zk_server_session_count(const ZkServer *server)
{
    return server->state == NULL ? 0 : (guint)g_tree_nnodes(server->state->sessions);
}

gboolean
zk_server_session_alive(const ZkServer *server, guint64 session_id)
{
    return server->state != NULL && zk_server_session_lookup(server->state, session_id) != NULL;
}

GBytes *
zk_server_znode_get(const ZkServer *server, const char *path, ZkStat *stat)
{
    if (server->state == NULL)
        return NULL;
    const Znode *node = zk_server_znode_lookup(server->state, path);
    if (node == NULL)
        return NULL;
    if (stat != NULL)
        zk_server_stat_fill(node, stat);
    return g_bytes_ref(node->data);
}

/* ---- invariants ---- */

/* Checks one znode and its subtree (1-3); returns the znodes counted. */
static guint
check_znode(const ZkState *state, const Znode *node)
{
    KSIM_ASSERT(zk_server_znode_lookup(state, node->path) == node);
    KSIM_ASSERT(node->stat.version >= 0);
    KSIM_ASSERT(node->stat.cversion >= 0);
    KSIM_ASSERT(node->stat.czxid <= node->stat.mzxid);
    KSIM_ASSERT(node->stat.mzxid <= state->zxid);
    KSIM_ASSERT(node->stat.pzxid <= state->zxid);
    if (node->parent != NULL) {
        KSIM_ASSERT(g_tree_lookup(node->parent->children, node->name) == node);
        g_autofree char *expected = node->parent == state->root
                                        ? g_strconcat("/", node->name, NULL)
                                        : g_strconcat(node->parent->path, "/", node->name, NULL);
        KSIM_ASSERT(strcmp(expected, node->path) == 0);
    }
    if (node->stat.ephemeral_owner != 0) {
        const Session *owner = zk_server_session_lookup(state, node->stat.ephemeral_owner);
        KSIM_ASSERT(owner != NULL);
        KSIM_ASSERT(g_tree_lookup(owner->ephemerals, node->path) != NULL);
        KSIM_ASSERT(g_tree_nnodes(node->children) == 0);
    }
    guint count = 1;
    for (GTreeNode *n = g_tree_node_first(node->children); n != NULL; n = g_tree_node_next(n))
        count += check_znode(state, g_tree_node_value(n));
    return count;
}

/* Checks a session (2, 4, 6); returns its watch count. */
static guint
check_session(const ZkServer *server, const Session *s)
{
    const ZkState *state = server->state;
    KSIM_ASSERT(s->id <= state->zxid);
    KSIM_ASSERT(sim_timer_pending(server->world, s->expiry_timer));
    KSIM_ASSERT(s->deadline_ns <= zk_server_now(server) + s->timeout_ns + server->cfg.tick_ns);
    for (GTreeNode *n = g_tree_node_first(s->ephemerals); n != NULL; n = g_tree_node_next(n)) {
        const Znode *node = zk_server_znode_lookup(state, g_tree_node_key(n));
        KSIM_ASSERT(node != NULL);
        KSIM_ASSERT(node->stat.ephemeral_owner == s->id);
    }
    if (g_tree_nnodes(s->watches) > 0)
        KSIM_ASSERT(s->client != SIM_NODE_NONE);
    for (GTreeNode *n = g_tree_node_first(s->watches); n != NULL; n = g_tree_node_next(n)) {
        const char *key = g_tree_node_key(n);
        GTree *set = g_hash_table_lookup(zk_server_watch_table(state, key[0]), key + 1);
        KSIM_ASSERT(set != NULL);
        KSIM_ASSERT(g_tree_lookup(set, GSIZE_TO_POINTER(s->id)) != NULL);
    }
    return (guint)g_tree_nnodes(s->watches);
}

static void
check_durability(const ZkState *state)
{
    KSIM_ASSERT(state->txn_durable <= state->txn_written);
    if (!state->fsync_in_flight)
        KSIM_ASSERT(state->txn_durable == state->txn_written);
    guint64 needed_last = state->txn_durable + 1;
    for (GList *link = state->outbox.head; link != NULL; link = link->next) {
        const Outgoing *out = link->data;
        KSIM_ASSERT(out->txn_needed >= needed_last);
        KSIM_ASSERT(out->txn_needed <= state->txn_written);
        needed_last = out->txn_needed;
    }
}

void
zk_server_check_invariants(const ZkServer *server)
{
    KSIM_ASSERT(server != NULL);
    const ZkState *state = server->state;
    if (state == NULL)
        return;
    KSIM_ASSERT(state->root->parent == NULL);
    KSIM_ASSERT(check_znode(state, state->root) == g_hash_table_size(state->znodes));
    guint watches = 0;
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n))
        watches += check_session(server, g_tree_node_value(n));
    KSIM_ASSERT(watches == state->watch_count);
    /* With every session's watch found in the tables (check_session), as
     * many pairs in the tables as watches means the tables hold no other:
     * the "exactly when" of 4. */
    KSIM_ASSERT(state->watch_pairs == watches);
    check_durability(state);
    /* 7. The inbox's head is being served exactly when the inbox is not empty. */
    KSIM_ASSERT(sim_timer_pending(server->world, state->service_timer) ==
                !g_queue_is_empty((GQueue *)&state->inbox));
    if (!server_costs_time(server))
        KSIM_ASSERT(g_queue_is_empty((GQueue *)&state->inbox));
}
