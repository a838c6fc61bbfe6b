/*
 * zk_server_request: watches (set, dropped, fired once), and the requests
 * of clients — connect, reads, writes (one transaction each), set-watches
 * and close — from arrival (zk_server_on_request) to reply.
 */
#include "zk_server_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* ---- watches ---- */

GHashTable *
zk_server_watch_table(const ZkState *state, char kind)
{
    KSIM_ASSERT(kind == 'd' || kind == 'c');
    return kind == 'd' ? state->data_watches : state->child_watches;
}

static void
watch_add(ZkState *state, Session *s, char kind, const char *path)
{
    KSIM_ASSERT(s->client != SIM_NODE_NONE);
    GHashTable *table = zk_server_watch_table(state, kind);
    GTree *set = g_hash_table_lookup(table, path);
    if (set == NULL) {
        set = zk_server_id_set_new();
        g_hash_table_insert(table, g_strdup(path), set);
    }
    if (g_tree_lookup(set, GSIZE_TO_POINTER(s->id)) != NULL)
        return;
    g_tree_insert(set, GSIZE_TO_POINTER(s->id), GSIZE_TO_POINTER(s->id));
    state->watch_pairs++;
    g_tree_insert(s->watches, g_strdup_printf("%c%s", kind, path), GINT_TO_POINTER(1));
    state->watch_count++;
}

/* Drops every watch of the session (its connection is gone). */
void
zk_server_session_drop_watches(ZkState *state, Session *s)
{
    for (GTreeNode *n = g_tree_node_first(s->watches); n != NULL; n = g_tree_node_next(n)) {
        const char *key = g_tree_node_key(n);
        GHashTable *table = zk_server_watch_table(state, key[0]);
        GTree *set = g_hash_table_lookup(table, key + 1);
        KSIM_ASSERT(set != NULL);
        gboolean removed = g_tree_remove(set, GSIZE_TO_POINTER(s->id));
        KSIM_ASSERT(removed);
        state->watch_pairs--;
        if (g_tree_nnodes(set) == 0)
            g_hash_table_remove(table, key + 1);
        KSIM_ASSERT(state->watch_count > 0);
        state->watch_count--;
    }
    g_tree_remove_all(s->watches);
}

/* Takes the watchers of `path` in one table (a watch fires once) into `fired`. */
static void
watch_take(ZkState *state, char kind, const char *path, GTree *fired)
{
    GHashTable *table = zk_server_watch_table(state, kind);
    GTree *set = g_hash_table_lookup(table, path);
    if (set == NULL)
        return;
    g_autofree char *key = g_strdup_printf("%c%s", kind, path);
    for (GTreeNode *n = g_tree_node_first(set); n != NULL; n = g_tree_node_next(n)) {
        Session *s = zk_server_session_lookup(state, GPOINTER_TO_SIZE(g_tree_node_key(n)));
        KSIM_ASSERT(s != NULL);
        gboolean removed = g_tree_remove(s->watches, key);
        KSIM_ASSERT(removed);
        g_tree_insert(fired, g_tree_node_key(n), g_tree_node_key(n));
        KSIM_ASSERT(state->watch_count > 0);
        state->watch_count--;
    }
    KSIM_ASSERT(state->watch_pairs >= (guint)g_tree_nnodes(set));
    state->watch_pairs -= (guint)g_tree_nnodes(set);
    g_hash_table_remove(table, path);
}


/* Fires the watches a change of `path` triggers, as ZooKeeper's
 * DataTree does: a session watching both data and children of a deleted
 * node hears of it once. */
void
zk_server_watch_fire(ZkServer *server, const char *path, ZkEventType type)
{
    ZkState *state = server->state;
    g_autoptr(GTree) fired = zk_server_id_set_new();
    if (type != ZK_EVENT_NODE_CHILDREN_CHANGED)
        watch_take(state, 'd', path, fired);
    if (type == ZK_EVENT_NODE_CHILDREN_CHANGED || type == ZK_EVENT_NODE_DELETED)
        watch_take(state, 'c', path, fired);
    for (GTreeNode *n = g_tree_node_first(fired); n != NULL; n = g_tree_node_next(n)) {
        guint64 id = GPOINTER_TO_SIZE(g_tree_node_key(n));
        Session *s = zk_server_session_lookup(state, id);
        KSIM_ASSERT(s->client != SIM_NODE_NONE);
        zk_server_outbox_push(server, s->client, &zk_msg_watch_event_new(id, type, path)->base);
    }
}

/* ---- requests ---- */

static void
server_session_create(ZkServer *server, SimNodeId from, const ZkConnectMsg *msg)
{
    ZkState *state = server->state;
    gint64 timeout_ns = CLAMP(msg->timeout_ns, server->cfg.session_timeout_ns_min,
                              server->cfg.session_timeout_ns_max);
    guint64 id = state->zxid + 1;
    if (!zk_server_log_append(server, TXN_CREATE_SESSION, id, id, NULL, timeout_ns)) {
        sim_net_close(zk_server_net(server), server->node, from);
        return;
    }
    Session *s = zk_server_session_new(id, timeout_ns);
    g_tree_insert(state->sessions, GSIZE_TO_POINTER(id), s);
    state->zxid = id;
    s->client = from;
    zk_server_session_touch(server, s);
    zk_server_session_arm(server, s);
    zk_server_note(server, from, id, id, "session 0x%" G_GINT64_MODIFIER "x created by %s", id,
                   sim_node_name(server->world, from));
    zk_server_outbox_push(server, from,
                          &zk_msg_connect_reply_new(id, timeout_ns, msg->attempt, ZK_OK)->base);
}

void
zk_server_on_connect(ZkServer *server, SimNodeId from, const ZkConnectMsg *msg)
{
    ZkState *state = server->state;
    zk_server_unbind_node(server, from);
    if (msg->session_id == 0) {
        server_session_create(server, from, msg);
        return;
    }
    Session *s = zk_server_session_lookup(state, msg->session_id);
    if (s == NULL) {
        zk_server_outbox_push(
            server, from, &zk_msg_connect_reply_new(0, 0, msg->attempt, ZK_SESSION_EXPIRED)->base);
        return;
    }
    /* Watches belong to the connection: the client registers them again. */
    zk_server_session_drop_watches(state, s);
    s->client = from;
    zk_server_session_touch(server, s);
    zk_server_outbox_push(
        server, from, &zk_msg_connect_reply_new(s->id, s->timeout_ns, msg->attempt, ZK_OK)->base);
}

static void
server_reply(ZkServer *server, SimNodeId to, ZkReplyMsg *reply, ZkError error)
{
    reply->error = error;
    reply->zxid = server->state->zxid;
    zk_msg_reply_finish(reply);
    zk_server_outbox_push(server, to, &reply->base);
}

static void
server_reply_error(ZkServer *server, SimNodeId to, const ZkRequestMsg *req, ZkError error)
{
    server_reply(server, to, zk_msg_reply_new(req->session_id, req->xid, 0), error);
}

static ZkError
server_read_op(ZkState *state, Session *s, const ZkWireOp *op, ZkWireResult *result)
{
    if (!zk_server_path_valid(op->path))
        return ZK_BAD_ARGUMENTS;
    Znode *node = zk_server_znode_lookup(state, op->path);
    if (op->type == ZK_OP_EXISTS && op->watch)
        watch_add(state, s, 'd', op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    zk_server_stat_fill(node, &result->stat);
    if (op->type == ZK_OP_GET) {
        result->data = g_bytes_ref(node->data);
        if (op->watch)
            watch_add(state, s, 'd', op->path);
    } else if (op->type == ZK_OP_CHILDREN) {
        guint n = (guint)g_tree_nnodes(node->children);
        result->children = g_new0(char *, n + 1);
        guint i = 0;
        for (GTreeNode *c = g_tree_node_first(node->children); c; c = g_tree_node_next(c))
            result->children[i++] = g_strdup(g_tree_node_key(c));
        if (op->watch)
            watch_add(state, s, 'c', op->path);
    }
    return ZK_OK;
}

static void
server_read(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    if (req->n_ops != 1) {
        server_reply_error(server, from, req, ZK_BAD_ARGUMENTS);
        return;
    }
    ZkReplyMsg *reply = zk_msg_reply_new(s->id, req->xid, 1);
    ZkError error = server_read_op(server->state, s, &req->ops[0], &reply->results[0]);
    reply->results[0].error = error;
    server_reply(server, from, reply, error);
}

static const char *
op_verb(ZkOpType type)
{
    switch (type) {
    case ZK_OP_CREATE:
        return "create";
    case ZK_OP_DELETE:
        return "delete";
    case ZK_OP_SET:
        return "set";
    case ZK_OP_CHECK:
        return "check";
    default:
        return "op";
    }
}

/* A short description of a write for the trace, e.g. "set /a v2". */
static char *
write_describe(const ZkRequestMsg *req, const ZkReplyMsg *reply)
{
    GString *text = g_string_new(req->type == ZK_OP_MULTI ? "multi:" : "");
    for (guint i = 0; i < req->n_ops; i++) {
        const ZkWireOp *op = &req->ops[i];
        const ZkWireResult *result = &reply->results[i];
        g_string_append_printf(text, "%s%s %s", i == 0 ? "" : ",", op_verb(op->type),
                               result->path != NULL ? result->path : op->path);
        if (op->type == ZK_OP_SET && reply->error == ZK_OK)
            g_string_append_printf(text, " v%d", result->stat.version);
    }
    if (reply->error != ZK_OK)
        g_string_append_printf(text, ": %s", zk_error_name(reply->error));
    return g_string_free(text, FALSE);
}

/* Runs a write (one op or a multi) as a transaction: applied and logged, or
 * not applied at all. */
static void
server_write(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    ZkState *state = server->state;
    if (req->type != ZK_OP_MULTI && req->n_ops != 1) {
        server_reply_error(server, from, req, ZK_BAD_ARGUMENTS);
        return;
    }
    ZkReplyMsg *reply = zk_msg_reply_new(s->id, req->xid, req->n_ops);
    Txn txn;
    zk_server_txn_init(&txn, state->zxid + 1, s->id);
    ZkError error = zk_server_txn_run(state, &txn, req, reply);
    gboolean logged = error == ZK_OK && txn.n_logged > 0 &&
                      zk_server_log_append(server, TXN_OPS, txn.zxid, s->id, &txn, 0);
    if (error == ZK_OK && txn.n_logged > 0 && !logged) {
        error = ZK_SYSTEM_ERROR;
        for (guint i = 0; i < reply->n_results; i++)
            reply->results[i].error = ZK_SYSTEM_ERROR;
    }
    if (logged) {
        zk_server_txn_commit(state, &txn);
        zk_server_txn_fire_triggers(server, &txn);
    } else {
        zk_server_txn_undo(state, &txn);
    }
    reply->error = error;
    g_autofree char *note = write_describe(req, reply);
    zk_server_note(server, from, state->zxid, s->id, "%s", note);
    zk_server_txn_clear(&txn);
    server_reply(server, from, reply, error);
}

/* What a re-registered watch must report at once, or 0 to register it: a
 * data watch hears of a delete or of a change after `relative_zxid`, an exist
 * watch of a creation, a child watch of a delete or of a child change. */
static ZkEventType
set_watch_event(const Znode *node, ZkOpType kind, guint64 relative_zxid)
{
    if (kind == ZK_OP_EXISTS)
        return node != NULL ? ZK_EVENT_NODE_CREATED : 0;
    if (node == NULL)
        return ZK_EVENT_NODE_DELETED;
    if (kind == ZK_OP_GET && node->stat.mzxid > relative_zxid)
        return ZK_EVENT_NODE_DATA_CHANGED;
    if (kind == ZK_OP_CHILDREN && node->stat.pzxid > relative_zxid)
        return ZK_EVENT_NODE_CHILDREN_CHANGED;
    return 0;
}

/* ZooKeeper's SetWatches: a resumed session re-registers the watches its
 * client holds; those whose znode changed after `relative_zxid` (the last
 * zxid the client saw) fire at once instead. */
static void
server_set_watches(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    ZkState *state = server->state;
    for (guint i = 0; i < req->n_ops; i++) {
        const ZkWireOp *op = &req->ops[i];
        gboolean known = op->type == ZK_OP_GET || op->type == ZK_OP_EXISTS ||
                         op->type == ZK_OP_CHILDREN;
        if (!known || !zk_server_path_valid(op->path))
            continue;
        const Znode *node = zk_server_znode_lookup(state, op->path);
        ZkEventType fire = set_watch_event(node, op->type, req->relative_zxid);
        if (fire != 0)
            zk_server_outbox_push(server, from,
                                  &zk_msg_watch_event_new(s->id, fire, op->path)->base);
        else
            watch_add(state, s, op->type == ZK_OP_CHILDREN ? 'c' : 'd', op->path);
    }
    server_reply(server, from, zk_msg_reply_new(s->id, req->xid, 0), ZK_OK);
}

static void
server_close_request(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    guint64 id = s->id;
    zk_server_note(server, from, server->state->zxid + 1, id,
                   "session 0x%" G_GINT64_MODIFIER "x closed", id);
    ZkError error = zk_server_session_close(server, s) ? ZK_OK : ZK_SYSTEM_ERROR;
    server_reply(server, from, zk_msg_reply_new(id, req->xid, 0), error);
}

static void
server_dispatch(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    switch (req->type) {
    case ZK_OP_PING:
        server_reply(server, from, zk_msg_reply_new(s->id, req->xid, 0), ZK_OK);
        break;
    case ZK_OP_GET:
    case ZK_OP_EXISTS:
    case ZK_OP_CHILDREN:
        server_read(server, s, from, req);
        break;
    case ZK_OP_CREATE:
    case ZK_OP_DELETE:
    case ZK_OP_SET:
    case ZK_OP_CHECK:
    case ZK_OP_MULTI:
        server_write(server, s, from, req);
        break;
    case ZK_OP_SET_WATCHES:
        server_set_watches(server, s, from, req);
        break;
    case ZK_OP_CLOSE_SESSION:
        server_close_request(server, s, from, req);
        break;
    default:
        server_reply_error(server, from, req, ZK_BAD_ARGUMENTS);
        break;
    }
}

void
zk_server_on_request(ZkServer *server, SimNodeId from, const ZkRequestMsg *req)
{
    Session *s = zk_server_session_lookup(server->state, req->session_id);
    if (s == NULL) {
        server_reply_error(server, from, req, ZK_SESSION_EXPIRED);
        return;
    }
    if (s->client == SIM_NODE_NONE) {
        /* A request on a connection that never sent a connect request (the
         * old one died without the client noticing): as ZooKeeper, which
         * expects a ConnectRequest first, close it so the client reconnects
         * and resumes its session. */
        zk_server_outbox_purge(server->state, from);
        sim_net_close(zk_server_net(server), server->node, from);
        return;
    }
    if (s->client != from) {
        server_reply_error(server, from, req, ZK_SESSION_MOVED);
        return;
    }
    /* TCP would never deliver a request twice; a duplicated message (an
     * injected fault) is dropped here as TCP's sequence numbers would. */
    if (req->xid <= s->xid_last)
        return;
    s->xid_last = req->xid;
    zk_server_session_touch(server, s);
    server_dispatch(server, s, from, req);
}
