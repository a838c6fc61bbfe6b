/*
 * zk_server_session: sessions — touching them on traffic, their expiry
 * timers (zk_server_session_arm, session_expiry_cb), closing them
 * (zk_server_session_close) and unbinding them from a client node.
 */
#include "zk_server_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

/* ---- sessions ---- */

gint64
zk_server_now(const ZkServer *server)
{
    return sim_now_ns(server->world);
}

/* ZooKeeper's expiry buckets: deadlines round up to the next tick. */
void
zk_server_session_touch(ZkServer *server, Session *s)
{
    gint64 tick = server->cfg.tick_ns;
    s->deadline_ns = ((zk_server_now(server) + s->timeout_ns) / tick + 1) * tick;
}

static void session_expiry_cb(SimWorld *world, void *ctx, void *arg);

void
zk_server_session_arm(ZkServer *server, Session *s)
{
    KSIM_ASSERT(s->deadline_ns >= zk_server_now(server));
    s->expiry_timer =
        sim_timer_set(server->world, server->node, s->deadline_ns - zk_server_now(server),
                      session_expiry_cb, GSIZE_TO_POINTER(s->id));
}

void
zk_server_txn_fire_triggers(ZkServer *server, const Txn *txn)
{
    for (guint i = 0; i < txn->triggers->len; i++) {
        const Trigger *trigger = &g_array_index(txn->triggers, Trigger, i);
        zk_server_watch_fire(server, trigger->path, trigger->type);
    }
}

/* Ends a session (expiry or close): logs it, deletes its ephemerals and fires
 * their watches. FALSE when the disk is full: nothing changed. */
gboolean
zk_server_session_close(ZkServer *server, Session *s)
{
    ZkState *state = server->state;
    guint64 zxid = state->zxid + 1;
    if (!zk_server_log_append(server, TXN_CLOSE_SESSION, zxid, s->id, NULL, 0))
        return FALSE;
    sim_timer_cancel(server->world, s->expiry_timer);
    for (GTreeNode *n = g_tree_node_first(s->ephemerals);
         server->ephemeral_ended_cb != NULL && n != NULL; n = g_tree_node_next(n)) {
        const Znode *node = zk_server_znode_lookup(state, g_tree_node_key(n));
        server->ephemeral_ended_cb(server->ephemeral_ended_data, node->path, node->data);
    }
    Txn txn;
    zk_server_txn_init(&txn, zxid, s->id);
    zk_server_session_close_apply(state, &txn, s);
    zk_server_txn_commit(state, &txn);
    zk_server_txn_fire_triggers(server, &txn);
    zk_server_txn_clear(&txn);
    return TRUE;
}

static void
session_expiry_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkServer *server = ctx;
    guint64 id = GPOINTER_TO_SIZE(arg);
    (void)world;
    KSIM_ASSERT(server->state != NULL);
    Session *s = zk_server_session_lookup(server->state, id);
    KSIM_ASSERT(s != NULL);
    if (zk_server_now(server) < s->deadline_ns) {
        zk_server_session_arm(server, s);
        return;
    }
    SIM_MARK(world, zk_session_expired);
    SimNodeId client = s->client;
    zk_server_note(server, client, server->state->zxid + 1, id,
                   "session 0x%" G_GINT64_MODIFIER "x expired", id);
    if (!zk_server_session_close(server, s)) {
        s->deadline_ns = zk_server_now(server) + server->cfg.tick_ns;
        zk_server_session_arm(server, s);
        return;
    }
    /* As ZooKeeper, the server closes an expired session's connection; the
     * client learns of the expiry when it reconnects. */
    if (client != SIM_NODE_NONE) {
        zk_server_outbox_purge(server->state, client);
        sim_net_close(zk_server_net(server), server->node, client);
    }
}

/* The connection from `node` is gone or replaced: sessions bound to it lose
 * their watches until a client resumes them. */
void
zk_server_unbind_node(ZkServer *server, SimNodeId node)
{
    ZkState *state = server->state;
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n)) {
        Session *s = g_tree_node_value(n);
        if (s->client != node)
            continue;
        zk_server_session_drop_watches(state, s);
        s->client = SIM_NODE_NONE;
    }
}
