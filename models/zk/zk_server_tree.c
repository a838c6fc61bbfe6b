/*
 * zk_server_tree: the znode tree's paths, and transactions — a write's ops
 * applied to the tree with an undo log (zk_server_txn_run), committed or
 * undone as a whole (zk_server_txn_commit, zk_server_txn_undo).
 */
#include "zk_server_internal.h"

#include "sim_assert.h"

#include <string.h>

#define PATH_BYTES_MAX 4096

/* ---- paths ---- */

/* ZooKeeper's PathUtils.validatePath, without the character classes: an
 * absolute path, no empty, "." or ".." component, no trailing slash. */
gboolean
zk_server_path_valid(const char *path)
{
    if (path == NULL || path[0] != '/')
        return FALSE;
    gsize len = strlen(path);
    if (len == 1)
        return TRUE;
    if (len > PATH_BYTES_MAX || path[len - 1] == '/')
        return FALSE;
    const char *component = path + 1;
    while (component != NULL) {
        const char *slash = strchr(component, '/');
        gsize n = slash == NULL ? strlen(component) : (gsize)(slash - component);
        if (n == 0 || (n == 1 && component[0] == '.') ||
            (n == 2 && component[0] == '.' && component[1] == '.'))
            return FALSE;
        component = slash == NULL ? NULL : slash + 1;
    }
    return TRUE;
}

/* The znode that would be `path`'s parent, or NULL. `path` starts with '/'. */
Znode *
zk_server_parent_lookup(const ZkState *state, const char *path)
{
    const char *slash = strrchr(path, '/');
    KSIM_ASSERT(slash != NULL);
    if (slash == path)
        return state->root;
    g_autofree char *parent = g_strndup(path, (gsize)(slash - path));
    return zk_server_znode_lookup(state, parent);
}

void
zk_server_tree_attach(ZkState *state, Znode *node, Znode *parent)
{
    KSIM_ASSERT(zk_server_znode_lookup(state, node->path) == NULL);
    node->parent = parent;
    g_hash_table_insert(state->znodes, node->path, node);
    g_tree_insert(parent->children, (gpointer)node->name, node);
}

static void
tree_detach(ZkState *state, Znode *node)
{
    KSIM_ASSERT(node->parent != NULL);
    KSIM_ASSERT(g_tree_nnodes(node->children) == 0);
    gboolean in_table = g_hash_table_steal(state->znodes, node->path);
    gboolean in_parent = g_tree_remove(node->parent->children, node->name);
    KSIM_ASSERT(in_table);
    KSIM_ASSERT(in_parent);
}

void
zk_server_stat_fill(const Znode *node, ZkStat *stat)
{
    *stat = node->stat;
    stat->data_length = (guint32)g_bytes_get_size(node->data);
    stat->num_children = (guint32)g_tree_nnodes(node->children);
}

/* ---- transactions: ops applied with an undo log ---- */

typedef enum { UNDO_CREATE = 1, UNDO_DELETE, UNDO_SET } UndoKind;

typedef struct {
    UndoKind kind;
    Znode *node; /* created, detached or changed */
    gint32 parent_cversion;
    guint64 parent_pzxid;
    GBytes *old_data;
    gint32 old_version;
    guint64 old_mzxid;
} Undo;

static void
trigger_clear(gpointer data)
{
    g_free(((Trigger *)data)->path);
}

void
zk_server_txn_init(Txn *txn, guint64 zxid, guint64 session_id)
{
    txn->zxid = zxid;
    txn->session_id = session_id;
    txn->undo = g_array_new(FALSE, TRUE, sizeof(Undo));
    txn->triggers = g_array_new(FALSE, TRUE, sizeof(Trigger));
    g_array_set_clear_func(txn->triggers, trigger_clear);
    txn->record = g_byte_array_new();
    txn->n_logged = 0;
}

void
zk_server_txn_clear(Txn *txn)
{
    KSIM_ASSERT(txn->undo->len == 0);
    g_array_free(txn->undo, TRUE);
    g_array_free(txn->triggers, TRUE);
    g_byte_array_free(txn->record, TRUE);
}

static void
txn_trigger(Txn *txn, const char *path, ZkEventType type)
{
    Trigger trigger = {g_strdup(path), type};
    g_array_append_val(txn->triggers, trigger);
}

static void
txn_log_op(Txn *txn, ZkOpType type, gboolean ephemeral, const char *path, GBytes *data)
{
    KSIM_ASSERT(txn->n_logged < OPS_MAX);
    zk_server_put_u8(txn->record, (guint8)type);
    zk_server_put_u8(txn->record, ephemeral ? 1 : 0);
    zk_server_put_str(txn->record, path);
    zk_server_put_bytes(txn->record, data);
    txn->n_logged++;
}

static void
parent_touch(Txn *txn, Znode *parent, Undo *undo)
{
    undo->parent_cversion = parent->stat.cversion;
    undo->parent_pzxid = parent->stat.pzxid;
    KSIM_ASSERT(parent->stat.cversion < G_MAXINT32);
    parent->stat.cversion++;
    parent->stat.pzxid = txn->zxid;
}

static gboolean
version_matches(const Znode *node, gint32 version)
{
    return version == ZK_VERSION_ANY || version == node->stat.version;
}

/* The path a create makes: sequential names end in the parent's child version
 * as ten digits, as ZooKeeper's do. (transfer full) */
static char *
create_path(const Znode *parent, const ZkWireOp *op)
{
    if ((op->flags & ZK_SEQUENTIAL) == 0)
        return g_strdup(op->path);
    return g_strdup_printf("%s%010d", op->path, parent->stat.cversion);
}

/* ZooKeeper validates a sequential path as if the suffix were there, so
 * "/queue/" may create "/queue/0000000003". The root cannot be created. */
static gboolean
create_path_valid(const ZkWireOp *op)
{
    if ((op->flags & ZK_SEQUENTIAL) == 0)
        return zk_server_path_valid(op->path) && strcmp(op->path, "/") != 0;
    g_autofree char *suffixed = g_strconcat(op->path, "0", NULL);
    return zk_server_path_valid(suffixed);
}

static ZkError
apply_create(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result)
{
    if (!create_path_valid(op) || zk_proto_bytes_size(op->data) > ZK_DATA_BYTES_MAX)
        return ZK_BAD_ARGUMENTS;
    Znode *parent = zk_server_parent_lookup(state, op->path);
    if (parent == NULL)
        return ZK_NO_NODE;
    if (parent->stat.ephemeral_owner != 0)
        return ZK_NO_CHILDREN_FOR_EPHEMERALS;
    g_autofree char *path = create_path(parent, op);
    if (zk_server_znode_lookup(state, path) != NULL)
        return ZK_NODE_EXISTS;
    gboolean ephemeral = (op->flags & ZK_EPHEMERAL) != 0;
    Znode *node = zk_server_znode_new(path, op->data);
    node->stat.czxid = node->stat.mzxid = node->stat.pzxid = txn->zxid;
    Undo undo = {.kind = UNDO_CREATE, .node = node};
    parent_touch(txn, parent, &undo);
    zk_server_tree_attach(state, node, parent);
    if (ephemeral) {
        Session *s = zk_server_session_lookup(state, txn->session_id);
        KSIM_ASSERT(s != NULL);
        node->stat.ephemeral_owner = s->id;
        g_tree_insert(s->ephemerals, g_strdup(path), GINT_TO_POINTER(1));
    }
    g_array_append_val(txn->undo, undo);
    txn_trigger(txn, path, ZK_EVENT_NODE_CREATED);
    txn_trigger(txn, parent->path, ZK_EVENT_NODE_CHILDREN_CHANGED);
    txn_log_op(txn, ZK_OP_CREATE, ephemeral, path, node->data);
    result->path = g_strdup(path);
    zk_server_stat_fill(node, &result->stat);
    return ZK_OK;
}

/* Detaches a znode without children, with its undo record and triggers. */
static void
znode_delete(ZkState *state, Txn *txn, Znode *node)
{
    Undo undo = {.kind = UNDO_DELETE, .node = node};
    parent_touch(txn, node->parent, &undo);
    tree_detach(state, node);
    if (node->stat.ephemeral_owner != 0) {
        Session *owner = zk_server_session_lookup(state, node->stat.ephemeral_owner);
        KSIM_ASSERT(owner != NULL);
        gboolean removed = g_tree_remove(owner->ephemerals, node->path);
        KSIM_ASSERT(removed);
    }
    g_array_append_val(txn->undo, undo);
    txn_trigger(txn, node->path, ZK_EVENT_NODE_DELETED);
    txn_trigger(txn, node->parent->path, ZK_EVENT_NODE_CHILDREN_CHANGED);
    txn_log_op(txn, ZK_OP_DELETE, FALSE, node->path, NULL);
}

static ZkError
apply_delete(ZkState *state, Txn *txn, const ZkWireOp *op)
{
    if (!zk_server_path_valid(op->path) || strcmp(op->path, "/") == 0)
        return ZK_BAD_ARGUMENTS;
    Znode *node = zk_server_znode_lookup(state, op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    if (!version_matches(node, op->version))
        return ZK_BAD_VERSION;
    if (g_tree_nnodes(node->children) > 0)
        return ZK_NOT_EMPTY;
    znode_delete(state, txn, node);
    return ZK_OK;
}

static ZkError
apply_set(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result)
{
    if (!zk_server_path_valid(op->path) || zk_proto_bytes_size(op->data) > ZK_DATA_BYTES_MAX)
        return ZK_BAD_ARGUMENTS;
    Znode *node = zk_server_znode_lookup(state, op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    if (!version_matches(node, op->version))
        return ZK_BAD_VERSION;
    Undo undo = {.kind = UNDO_SET, .node = node};
    undo.old_data = node->data;
    undo.old_version = node->stat.version;
    undo.old_mzxid = node->stat.mzxid;
    node->data = op->data == NULL ? g_bytes_new(NULL, 0) : g_bytes_ref(op->data);
    KSIM_ASSERT(node->stat.version < G_MAXINT32);
    node->stat.version++;
    node->stat.mzxid = txn->zxid;
    g_array_append_val(txn->undo, undo);
    txn_trigger(txn, node->path, ZK_EVENT_NODE_DATA_CHANGED);
    txn_log_op(txn, ZK_OP_SET, FALSE, node->path, node->data);
    zk_server_stat_fill(node, &result->stat);
    return ZK_OK;
}

static ZkError
apply_check(const ZkState *state, const ZkWireOp *op, ZkWireResult *result)
{
    if (!zk_server_path_valid(op->path))
        return ZK_BAD_ARGUMENTS;
    Znode *node = zk_server_znode_lookup(state, op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    if (!version_matches(node, op->version))
        return ZK_BAD_VERSION;
    zk_server_stat_fill(node, &result->stat);
    return ZK_OK;
}

ZkError
zk_server_apply_op(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result)
{
    if (op->path == NULL)
        return ZK_BAD_ARGUMENTS;
    switch (op->type) {
    case ZK_OP_CREATE:
        return apply_create(state, txn, op, result);
    case ZK_OP_DELETE:
        return apply_delete(state, txn, op);
    case ZK_OP_SET:
        return apply_set(state, txn, op, result);
    case ZK_OP_CHECK:
        return apply_check(state, op, result);
    default:
        return ZK_BAD_ARGUMENTS;
    }
}

static void
undo_one(ZkState *state, const Undo *undo)
{
    Znode *node = undo->node;
    if (undo->kind == UNDO_SET) {
        g_bytes_unref(node->data);
        node->data = undo->old_data;
        node->stat.version = undo->old_version;
        node->stat.mzxid = undo->old_mzxid;
        return;
    }
    Session *owner = node->stat.ephemeral_owner == 0
                         ? NULL
                         : zk_server_session_lookup(state, node->stat.ephemeral_owner);
    if (undo->kind == UNDO_CREATE) {
        tree_detach(state, node);
        if (owner != NULL)
            g_tree_remove(owner->ephemerals, node->path);
    } else {
        zk_server_tree_attach(state, node, node->parent);
        if (owner != NULL)
            g_tree_insert(owner->ephemerals, g_strdup(node->path), GINT_TO_POINTER(1));
    }
    node->parent->stat.cversion = undo->parent_cversion;
    node->parent->stat.pzxid = undo->parent_pzxid;
    if (undo->kind == UNDO_CREATE)
        zk_server_znode_free(node);
}

/* Restores the tree as it was before the transaction. */
void
zk_server_txn_undo(ZkState *state, Txn *txn)
{
    for (guint i = txn->undo->len; i > 0; i--)
        undo_one(state, &g_array_index(txn->undo, Undo, i - 1));
    g_array_set_size(txn->undo, 0);
    g_array_set_size(txn->triggers, 0);
}

/* Makes the transaction final: frees what the undo log kept. */
void
zk_server_txn_commit(ZkState *state, Txn *txn)
{
    KSIM_ASSERT(txn->zxid == state->zxid + 1);
    for (guint i = 0; i < txn->undo->len; i++) {
        Undo *undo = &g_array_index(txn->undo, Undo, i);
        if (undo->kind == UNDO_DELETE)
            zk_server_znode_free(undo->node);
        else if (undo->kind == UNDO_SET)
            g_bytes_unref(undo->old_data);
    }
    g_array_set_size(txn->undo, 0);
    state->zxid = txn->zxid;
}

/* Applies the request's ops in order; on the first failure the others are
 * marked RUNTIMEINCONSISTENCY (none of them is applied). */
ZkError
zk_server_txn_run(ZkState *state, Txn *txn, const ZkRequestMsg *req, ZkReplyMsg *reply)
{
    KSIM_ASSERT(reply->n_results == req->n_ops);
    for (guint i = 0; i < req->n_ops; i++) {
        ZkError error = zk_server_apply_op(state, txn, &req->ops[i], &reply->results[i]);
        if (error == ZK_OK)
            continue;
        for (guint j = 0; j < req->n_ops; j++) {
            zk_proto_wire_result_clear(&reply->results[j]);
            reply->results[j].error = j == i ? error : ZK_RUNTIME_INCONSISTENCY;
        }
        return error;
    }
    return ZK_OK;
}

/* Removes a session: its watches, then its ephemerals (in path order). */
void
zk_server_session_close_apply(ZkState *state, Txn *txn, Session *s)
{
    zk_server_session_drop_watches(state, s);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    for (GTreeNode *n = g_tree_node_first(s->ephemerals); n != NULL; n = g_tree_node_next(n))
        g_ptr_array_add(paths, g_strdup(g_tree_node_key(n)));
    for (guint i = 0; i < paths->len; i++)
        znode_delete(state, txn, zk_server_znode_lookup(state, g_ptr_array_index(paths, i)));
    g_tree_remove(state->sessions, GSIZE_TO_POINTER(s->id));
}
