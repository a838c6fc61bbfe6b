/*
 * zk_server: the coordination node (see zk_server.h), and the protocol helpers that
 * zk_proto.h declares.
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
 * (txn_run), then appended to the log (log_append); if any op fails, or the
 * disk is full, the undo log restores the tree and nothing is logged. Replies
 * and notifications go through the outbox, which holds each message until
 * every transaction logged before it is durable (outbox_push, log_synced_cb),
 * so nobody learns of a change that a power loss could still undo.
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
#include <xxhash.h>

/* Session ids are stored in GTree keys as pointer-sized integers. */
G_STATIC_ASSERT(sizeof(gsize) >= sizeof(guint64));

#define LOG_PREFIX "coord/log."
#define SNAPSHOT_NAME "coord/snapshot"
#define SNAPSHOT_TMP_NAME "coord/snapshot.tmp"
#define SNAPSHOT_MAGIC 0x4b43534eu /* "KCSN" */
#define RECORD_BYTES_MAX (64u * 1024 * 1024)
#define PATH_BYTES_MAX 4096
/* A bound on ops per request (a multi) and per logged transaction. */
#define OPS_MAX 4096

typedef enum {
    TXN_CREATE_SESSION = 1,
    TXN_CLOSE_SESSION = 2,
    TXN_OPS = 3,
} TxnKind;

/* ---- error and event names ---- */

const char *
zk_error_name(ZkError error)
{
    switch (error) {
    case ZK_OK:
        return "OK";
    case ZK_SYSTEM_ERROR:
        return "SYSTEMERROR";
    case ZK_RUNTIME_INCONSISTENCY:
        return "RUNTIMEINCONSISTENCY";
    case ZK_CONNECTION_LOSS:
        return "CONNECTIONLOSS";
    case ZK_BAD_ARGUMENTS:
        return "BADARGUMENTS";
    case ZK_NO_NODE:
        return "NONODE";
    case ZK_BAD_VERSION:
        return "BADVERSION";
    case ZK_NO_CHILDREN_FOR_EPHEMERALS:
        return "NOCHILDRENFOREPHEMERALS";
    case ZK_NODE_EXISTS:
        return "NODEEXISTS";
    case ZK_NOT_EMPTY:
        return "NOTEMPTY";
    case ZK_SESSION_EXPIRED:
        return "SESSIONEXPIRED";
    case ZK_SESSION_MOVED:
        return "SESSIONMOVED";
    }
    return "UNKNOWN";
}

const char *
zk_event_name(ZkEventType type)
{
    switch (type) {
    case ZK_EVENT_NODE_CREATED:
        return "NodeCreated";
    case ZK_EVENT_NODE_DELETED:
        return "NodeDeleted";
    case ZK_EVENT_NODE_DATA_CHANGED:
        return "NodeDataChanged";
    case ZK_EVENT_NODE_CHILDREN_CHANGED:
        return "NodeChildrenChanged";
    }
    return "Unknown";
}

/* ---- wire messages ---- */

ZkConnectMsg *
zk_msg_connect_new(guint64 session_id, gint64 timeout_ns, guint64 last_zxid, guint32 attempt)
{
    ZkConnectMsg *msg = g_new0(ZkConnectMsg, 1);
    msg->base.type = ZK_MSG_CONNECT;
    msg->base.size_bytes = 48; /* ZooKeeper's ConnectRequest with a 16-byte password */
    msg->base.size_of = sizeof *msg;
    msg->session_id = session_id;
    msg->timeout_ns = timeout_ns;
    msg->last_zxid = last_zxid;
    msg->attempt = attempt;
    return msg;
}

ZkConnectReplyMsg *
zk_msg_connect_reply_new(guint64 session_id, gint64 timeout_ns, guint32 attempt,
                            ZkError error)
{
    ZkConnectReplyMsg *msg = g_new0(ZkConnectReplyMsg, 1);
    msg->base.type = ZK_MSG_CONNECT_REPLY;
    msg->base.size_bytes = 40;
    msg->base.size_of = sizeof *msg;
    msg->session_id = session_id;
    msg->timeout_ns = timeout_ns;
    msg->attempt = attempt;
    msg->error = error;
    return msg;
}

SimMsg *
zk_msg_probe_new(void)
{
    SimMsg *msg = g_new0(SimMsg, 1);
    msg->type = ZK_MSG_PROBE;
    msg->size_bytes = 40; /* a TCP/IP header */
    msg->size_of = sizeof *msg;
    return msg;
}

static gsize
bytes_size(GBytes *bytes)
{
    return bytes == NULL ? 0 : g_bytes_get_size(bytes);
}

static void
wire_op_clear(ZkWireOp *op)
{
    g_free(op->path);
    if (op->data != NULL)
        g_bytes_unref(op->data);
}

static void
request_free(SimMsg *msg)
{
    ZkRequestMsg *req = (ZkRequestMsg *)msg;
    for (guint i = 0; i < req->n_ops; i++)
        wire_op_clear(&req->ops[i]);
    g_free(req->ops);
    g_free(req);
}

static SimMsg *
request_clone(const SimMsg *msg)
{
    const ZkRequestMsg *req = (const ZkRequestMsg *)msg;
    ZkRequestMsg *copy = g_memdup2(req, sizeof *req);
    copy->ops = g_new0(ZkWireOp, MAX(req->n_ops, 1));
    for (guint i = 0; i < req->n_ops; i++) {
        copy->ops[i] = req->ops[i];
        copy->ops[i].path = g_strdup(req->ops[i].path);
        copy->ops[i].data = req->ops[i].data == NULL ? NULL : g_bytes_ref(req->ops[i].data);
    }
    return &copy->base;
}

ZkRequestMsg *
zk_msg_request_new(ZkOpType type, guint n_ops)
{
    KSIM_ASSERT(n_ops <= OPS_MAX);
    ZkRequestMsg *req = g_new0(ZkRequestMsg, 1);
    req->base.type = ZK_MSG_REQUEST;
    req->base.free_fn = request_free;
    req->base.clone_fn = request_clone;
    req->type = type;
    req->n_ops = n_ops;
    req->ops = g_new0(ZkWireOp, MAX(n_ops, 1));
    return req;
}

void
zk_msg_request_finish(ZkRequestMsg *req)
{
    gsize size = 24; /* length, xid, type, session */
    for (guint i = 0; i < req->n_ops; i++) {
        const ZkWireOp *op = &req->ops[i];
        size += 16 + (op->path == NULL ? 0 : strlen(op->path)) + bytes_size(op->data);
    }
    KSIM_ASSERT(size <= G_MAXUINT32);
    req->base.size_bytes = (guint32)size;
}

static void
wire_result_clear(ZkWireResult *result)
{
    g_free(result->path);
    if (result->data != NULL)
        g_bytes_unref(result->data);
    g_strfreev(result->children);
    memset(result, 0, sizeof *result);
}

static void
reply_free(SimMsg *msg)
{
    ZkReplyMsg *reply = (ZkReplyMsg *)msg;
    for (guint i = 0; i < reply->n_results; i++)
        wire_result_clear(&reply->results[i]);
    g_free(reply->results);
    g_free(reply);
}

static SimMsg *
reply_clone(const SimMsg *msg)
{
    const ZkReplyMsg *reply = (const ZkReplyMsg *)msg;
    ZkReplyMsg *copy = g_memdup2(reply, sizeof *reply);
    copy->results = g_new0(ZkWireResult, MAX(reply->n_results, 1));
    for (guint i = 0; i < reply->n_results; i++) {
        const ZkWireResult *from = &reply->results[i];
        ZkWireResult *to = &copy->results[i];
        *to = *from;
        to->path = g_strdup(from->path);
        to->data = from->data == NULL ? NULL : g_bytes_ref(from->data);
        to->children = g_strdupv(from->children);
    }
    return &copy->base;
}

ZkReplyMsg *
zk_msg_reply_new(guint64 session_id, gint64 xid, guint n_results)
{
    KSIM_ASSERT(n_results <= OPS_MAX);
    ZkReplyMsg *reply = g_new0(ZkReplyMsg, 1);
    reply->base.type = ZK_MSG_REPLY;
    reply->base.free_fn = reply_free;
    reply->base.clone_fn = reply_clone;
    reply->session_id = session_id;
    reply->xid = xid;
    reply->n_results = n_results;
    reply->results = g_new0(ZkWireResult, MAX(n_results, 1));
    return reply;
}

void
zk_msg_reply_finish(ZkReplyMsg *reply)
{
    gsize size = 16; /* xid, zxid, error */
    for (guint i = 0; i < reply->n_results; i++) {
        const ZkWireResult *result = &reply->results[i];
        size += 4 + 68; /* error + stat */
        size += result->path == NULL ? 0 : 4 + strlen(result->path);
        size += result->data == NULL ? 0 : 4 + g_bytes_get_size(result->data);
        for (char **child = result->children; child != NULL && *child != NULL; child++)
            size += 4 + strlen(*child);
    }
    KSIM_ASSERT(size <= G_MAXUINT32);
    reply->base.size_bytes = (guint32)size;
}

static void
watch_event_free(SimMsg *msg)
{
    ZkWatchEventMsg *event = (ZkWatchEventMsg *)msg;
    g_free(event->path);
    g_free(event);
}

static SimMsg *
watch_event_clone(const SimMsg *msg)
{
    const ZkWatchEventMsg *event = (const ZkWatchEventMsg *)msg;
    ZkWatchEventMsg *copy = g_memdup2(event, sizeof *event);
    copy->path = g_strdup(event->path);
    return &copy->base;
}

ZkWatchEventMsg *
zk_msg_watch_event_new(guint64 session_id, ZkEventType type, const char *path)
{
    KSIM_ASSERT(path != NULL);
    ZkWatchEventMsg *event = g_new0(ZkWatchEventMsg, 1);
    event->base.type = ZK_MSG_WATCH_EVENT;
    event->base.size_bytes = (guint32)(20 + strlen(path));
    event->base.free_fn = watch_event_free;
    event->base.clone_fn = watch_event_clone;
    event->session_id = session_id;
    event->type = type;
    event->path = g_strdup(path);
    return event;
}

/* ---- byte codec for the log and the snapshot (little endian) ---- */

static void
put_u8(GByteArray *out, guint8 value)
{
    g_byte_array_append(out, &value, 1);
}

static void
put_u32(GByteArray *out, guint32 value)
{
    guint8 bytes[4];
    for (guint i = 0; i < 4; i++)
        bytes[i] = (guint8)(value >> (8 * i));
    g_byte_array_append(out, bytes, 4);
}

static void
put_u64(GByteArray *out, guint64 value)
{
    put_u32(out, (guint32)value);
    put_u32(out, (guint32)(value >> 32));
}

static void
put_blob(GByteArray *out, const void *data, gsize len)
{
    KSIM_ASSERT(len <= RECORD_BYTES_MAX);
    put_u32(out, (guint32)len);
    if (len > 0)
        g_byte_array_append(out, data, (guint)len);
}

static void
put_bytes(GByteArray *out, GBytes *bytes)
{
    gsize len = 0;
    const void *data = bytes == NULL ? NULL : g_bytes_get_data(bytes, &len);
    put_blob(out, data, len);
}

static void
put_str(GByteArray *out, const char *text)
{
    put_blob(out, text, strlen(text));
}

/* Reads values in order; any read past the end clears `ok` and yields 0. */
typedef struct {
    const guint8 *data;
    gsize len;
    gsize pos;
    gboolean ok;
} Reader;

static const guint8 *
get_raw(Reader *r, gsize n)
{
    if (!r->ok || n > r->len - r->pos) {
        r->ok = FALSE;
        return NULL;
    }
    const guint8 *at = r->data + r->pos;
    r->pos += n;
    return at;
}

static guint8
get_u8(Reader *r)
{
    const guint8 *at = get_raw(r, 1);
    return at == NULL ? 0 : at[0];
}

static guint32
get_u32(Reader *r)
{
    const guint8 *at = get_raw(r, 4);
    if (at == NULL)
        return 0;
    return (guint32)at[0] | ((guint32)at[1] << 8) | ((guint32)at[2] << 16) | ((guint32)at[3] << 24);
}

static guint64
get_u64(Reader *r)
{
    guint64 low = get_u32(r);
    return low | ((guint64)get_u32(r) << 32);
}

/* A blob as GBytes, or NULL when the input is short. (transfer full) */
static GBytes *
get_bytes(Reader *r)
{
    guint32 len = get_u32(r);
    const guint8 *at = get_raw(r, len);
    return r->ok ? g_bytes_new(at, len) : NULL;
}

/* A string, or NULL when the input is short. (transfer full) */
static char *
get_str(Reader *r)
{
    guint32 len = get_u32(r);
    const guint8 *at = get_raw(r, len);
    return r->ok ? g_strndup((const char *)at, len) : NULL;
}

/* ---- state ---- */

typedef struct Znode Znode;
struct Znode {
    char *path;       /* owned */
    const char *name; /* the last component, inside `path` ("" for the root) */
    Znode *parent;    /* NULL for the root */
    GBytes *data;     /* owned, never NULL */
    ZkStat stat;   /* data_length and num_children are filled when reported */
    GTree *children;  /* child name -> Znode, borrowed from the znode table */
};

typedef struct {
    guint64 id;
    gint64 timeout_ns;
    gint64 deadline_ns;
    SimNodeId client; /* SIM_NODE_NONE while no connection is bound */
    gint64 xid_last;  /* the highest xid handled, to drop duplicated requests */
    SimTimerId expiry_timer;
    GTree *ephemerals; /* path (owned) -> non-NULL, sorted */
    GTree *watches;    /* 'd' or 'c' + path (owned) -> non-NULL */
} Session;

typedef struct {
    SimNodeId to;
    SimMsg *msg;
    guint64 txn_needed;
} Outgoing;

typedef struct {
    GHashTable *znodes; /* path -> Znode (owned); looked up, never iterated */
    Znode *root;
    GTree *sessions;          /* id -> Session (owned), in id order */
    GHashTable *data_watches; /* path (owned) -> GTree of session ids */
    GHashTable *child_watches;
    guint watch_count;
    guint64 zxid;
    guint32 log_index; /* the log file appended to */
    guint32 log_txns;  /* transactions in it */
    guint64 txn_written;
    guint64 txn_durable;
    gboolean fsync_in_flight;
    guint64 fsync_target;
    gboolean snapshot_in_flight;
    guint32 snapshot_log_index; /* logs below it are covered by the snapshot */
    GQueue outbox;              /* Outgoing *, in send order */
} ZkState;

struct ZkServer {
    SimWorld *world;
    SimNodeId node;
    ZkServerConfig cfg;
    ZkState *state; /* NULL while down or loading */
};

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

static GTree *
id_set_new(void)
{
    return g_tree_new_full(id_compare, NULL, NULL, NULL);
}

static Znode *
znode_new(const char *path, GBytes *data)
{
    Znode *node = g_new0(Znode, 1);
    node->path = g_strdup(path);
    node->name = strrchr(node->path, '/') + 1;
    node->data = data == NULL ? g_bytes_new(NULL, 0) : g_bytes_ref(data);
    node->children = g_tree_new_full(name_compare, NULL, NULL, NULL);
    return node;
}

static void
znode_free(gpointer data)
{
    Znode *node = data;
    g_free(node->path);
    g_bytes_unref(node->data);
    g_tree_destroy(node->children);
    g_free(node);
}

static Session *
session_new(guint64 id, gint64 timeout_ns)
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

static void
outgoing_free(gpointer data)
{
    Outgoing *out = data;
    sim_msg_free(out->msg);
    g_free(out);
}

static ZkState *
state_new(void)
{
    ZkState *state = g_new0(ZkState, 1);
    state->znodes = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, znode_free);
    state->root = znode_new("/", NULL);
    g_hash_table_insert(state->znodes, state->root->path, state->root);
    state->sessions = g_tree_new_full(id_compare, NULL, NULL, session_free);
    state->data_watches =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_tree_destroy);
    state->child_watches =
        g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_tree_destroy);
    g_queue_init(&state->outbox);
    return state;
}

/* Frees the state without touching the world: a crash has already dropped the
 * node's timers and fsyncs. */
static void
state_free(ZkState *state)
{
    if (state == NULL)
        return;
    g_queue_clear_full(&state->outbox, outgoing_free);
    g_hash_table_destroy(state->data_watches);
    g_hash_table_destroy(state->child_watches);
    g_tree_destroy(state->sessions);
    g_hash_table_destroy(state->znodes);
    g_free(state);
}

static Session *
session_lookup(const ZkState *state, guint64 id)
{
    return g_tree_lookup(state->sessions, GSIZE_TO_POINTER(id));
}

static Znode *
znode_lookup(const ZkState *state, const char *path)
{
    return g_hash_table_lookup(state->znodes, path);
}

static SimNet *
server_net(const ZkServer *server)
{
    return sim_world_net(server->world);
}

static SimDisk *
server_disk(const ZkServer *server)
{
    return sim_node_disk(server->world, server->node);
}

static void server_note(ZkServer *server, SimNodeId peer, guint64 a, guint64 b,
                        const char *format, ...) G_GNUC_PRINTF(5, 6);

/* A model note in the trace; `a` is a zxid and `b` a session id, or 0. */
static void
server_note(ZkServer *server, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *note = g_strdup_vprintf(format, args);
    va_end(args);
    sim_trace_add(sim_world_trace(server->world), sim_now_ns(server->world), SIM_TRACE_MODEL,
                  server->node, peer, a, b, note);
}

/* ---- paths ---- */

/* ZooKeeper's PathUtils.validatePath, without the character classes: an
 * absolute path, no empty, "." or ".." component, no trailing slash. */
static gboolean
path_valid(const char *path)
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
static Znode *
parent_lookup(const ZkState *state, const char *path)
{
    const char *slash = strrchr(path, '/');
    KSIM_ASSERT(slash != NULL);
    if (slash == path)
        return state->root;
    g_autofree char *parent = g_strndup(path, (gsize)(slash - path));
    return znode_lookup(state, parent);
}

static void
tree_attach(ZkState *state, Znode *node, Znode *parent)
{
    KSIM_ASSERT(znode_lookup(state, node->path) == NULL);
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

static void
stat_fill(const Znode *node, ZkStat *stat)
{
    *stat = node->stat;
    stat->data_length = (guint32)g_bytes_get_size(node->data);
    stat->num_children = (guint32)g_tree_nnodes(node->children);
}

/* ---- watches ---- */

static GHashTable *
watch_table(const ZkState *state, char kind)
{
    KSIM_ASSERT(kind == 'd' || kind == 'c');
    return kind == 'd' ? state->data_watches : state->child_watches;
}

static void
watch_add(ZkState *state, Session *s, char kind, const char *path)
{
    KSIM_ASSERT(s->client != SIM_NODE_NONE);
    GHashTable *table = watch_table(state, kind);
    GTree *set = g_hash_table_lookup(table, path);
    if (set == NULL) {
        set = id_set_new();
        g_hash_table_insert(table, g_strdup(path), set);
    }
    if (g_tree_lookup(set, GSIZE_TO_POINTER(s->id)) != NULL)
        return;
    g_tree_insert(set, GSIZE_TO_POINTER(s->id), GSIZE_TO_POINTER(s->id));
    g_tree_insert(s->watches, g_strdup_printf("%c%s", kind, path), GINT_TO_POINTER(1));
    state->watch_count++;
}

/* Drops every watch of the session (its connection is gone). */
static void
session_drop_watches(ZkState *state, Session *s)
{
    for (GTreeNode *n = g_tree_node_first(s->watches); n != NULL; n = g_tree_node_next(n)) {
        const char *key = g_tree_node_key(n);
        GHashTable *table = watch_table(state, key[0]);
        GTree *set = g_hash_table_lookup(table, key + 1);
        KSIM_ASSERT(set != NULL);
        gboolean removed = g_tree_remove(set, GSIZE_TO_POINTER(s->id));
        KSIM_ASSERT(removed);
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
    GHashTable *table = watch_table(state, kind);
    GTree *set = g_hash_table_lookup(table, path);
    if (set == NULL)
        return;
    g_autofree char *key = g_strdup_printf("%c%s", kind, path);
    for (GTreeNode *n = g_tree_node_first(set); n != NULL; n = g_tree_node_next(n)) {
        Session *s = session_lookup(state, GPOINTER_TO_SIZE(g_tree_node_key(n)));
        KSIM_ASSERT(s != NULL);
        gboolean removed = g_tree_remove(s->watches, key);
        KSIM_ASSERT(removed);
        g_tree_insert(fired, g_tree_node_key(n), g_tree_node_key(n));
        KSIM_ASSERT(state->watch_count > 0);
        state->watch_count--;
    }
    g_hash_table_remove(table, path);
}

static void outbox_push(ZkServer *server, SimNodeId to, SimMsg *msg);

/* Fires the watches a change of `path` triggers, as ZooKeeper's
 * DataTree does: a session watching both data and children of a deleted
 * node hears of it once. */
static void
watch_fire(ZkServer *server, const char *path, ZkEventType type)
{
    ZkState *state = server->state;
    g_autoptr(GTree) fired = id_set_new();
    if (type != ZK_EVENT_NODE_CHILDREN_CHANGED)
        watch_take(state, 'd', path, fired);
    if (type == ZK_EVENT_NODE_CHILDREN_CHANGED || type == ZK_EVENT_NODE_DELETED)
        watch_take(state, 'c', path, fired);
    for (GTreeNode *n = g_tree_node_first(fired); n != NULL; n = g_tree_node_next(n)) {
        guint64 id = GPOINTER_TO_SIZE(g_tree_node_key(n));
        Session *s = session_lookup(state, id);
        KSIM_ASSERT(s->client != SIM_NODE_NONE);
        outbox_push(server, s->client, &zk_msg_watch_event_new(id, type, path)->base);
    }
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

typedef struct {
    char *path;
    ZkEventType type;
} Trigger;

typedef struct {
    guint64 zxid;
    guint64 session_id;
    GArray *undo;       /* Undo, in the order applied */
    GArray *triggers;   /* Trigger, fired in order after the commit */
    GByteArray *record; /* the logged ops */
    guint32 n_logged;
} Txn;

static void
trigger_clear(gpointer data)
{
    g_free(((Trigger *)data)->path);
}

static void
txn_init(Txn *txn, guint64 zxid, guint64 session_id)
{
    txn->zxid = zxid;
    txn->session_id = session_id;
    txn->undo = g_array_new(FALSE, TRUE, sizeof(Undo));
    txn->triggers = g_array_new(FALSE, TRUE, sizeof(Trigger));
    g_array_set_clear_func(txn->triggers, trigger_clear);
    txn->record = g_byte_array_new();
    txn->n_logged = 0;
}

static void
txn_clear(Txn *txn)
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
    put_u8(txn->record, (guint8)type);
    put_u8(txn->record, ephemeral ? 1 : 0);
    put_str(txn->record, path);
    put_bytes(txn->record, data);
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
        return path_valid(op->path) && strcmp(op->path, "/") != 0;
    g_autofree char *suffixed = g_strconcat(op->path, "0", NULL);
    return path_valid(suffixed);
}

static ZkError
apply_create(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result)
{
    if (!create_path_valid(op) || bytes_size(op->data) > ZK_DATA_BYTES_MAX)
        return ZK_BAD_ARGUMENTS;
    Znode *parent = parent_lookup(state, op->path);
    if (parent == NULL)
        return ZK_NO_NODE;
    if (parent->stat.ephemeral_owner != 0)
        return ZK_NO_CHILDREN_FOR_EPHEMERALS;
    g_autofree char *path = create_path(parent, op);
    if (znode_lookup(state, path) != NULL)
        return ZK_NODE_EXISTS;
    gboolean ephemeral = (op->flags & ZK_EPHEMERAL) != 0;
    Znode *node = znode_new(path, op->data);
    node->stat.czxid = node->stat.mzxid = node->stat.pzxid = txn->zxid;
    Undo undo = {.kind = UNDO_CREATE, .node = node};
    parent_touch(txn, parent, &undo);
    tree_attach(state, node, parent);
    if (ephemeral) {
        Session *s = session_lookup(state, txn->session_id);
        KSIM_ASSERT(s != NULL);
        node->stat.ephemeral_owner = s->id;
        g_tree_insert(s->ephemerals, g_strdup(path), GINT_TO_POINTER(1));
    }
    g_array_append_val(txn->undo, undo);
    txn_trigger(txn, path, ZK_EVENT_NODE_CREATED);
    txn_trigger(txn, parent->path, ZK_EVENT_NODE_CHILDREN_CHANGED);
    txn_log_op(txn, ZK_OP_CREATE, ephemeral, path, node->data);
    result->path = g_strdup(path);
    stat_fill(node, &result->stat);
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
        Session *owner = session_lookup(state, node->stat.ephemeral_owner);
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
    if (!path_valid(op->path) || strcmp(op->path, "/") == 0)
        return ZK_BAD_ARGUMENTS;
    Znode *node = znode_lookup(state, op->path);
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
    if (!path_valid(op->path) || bytes_size(op->data) > ZK_DATA_BYTES_MAX)
        return ZK_BAD_ARGUMENTS;
    Znode *node = znode_lookup(state, op->path);
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
    stat_fill(node, &result->stat);
    return ZK_OK;
}

static ZkError
apply_check(const ZkState *state, const ZkWireOp *op, ZkWireResult *result)
{
    if (!path_valid(op->path))
        return ZK_BAD_ARGUMENTS;
    Znode *node = znode_lookup(state, op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    if (!version_matches(node, op->version))
        return ZK_BAD_VERSION;
    stat_fill(node, &result->stat);
    return ZK_OK;
}

static ZkError
apply_op(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result)
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
    Session *owner =
        node->stat.ephemeral_owner == 0 ? NULL : session_lookup(state, node->stat.ephemeral_owner);
    if (undo->kind == UNDO_CREATE) {
        tree_detach(state, node);
        if (owner != NULL)
            g_tree_remove(owner->ephemerals, node->path);
    } else {
        tree_attach(state, node, node->parent);
        if (owner != NULL)
            g_tree_insert(owner->ephemerals, g_strdup(node->path), GINT_TO_POINTER(1));
    }
    node->parent->stat.cversion = undo->parent_cversion;
    node->parent->stat.pzxid = undo->parent_pzxid;
    if (undo->kind == UNDO_CREATE)
        znode_free(node);
}

/* Restores the tree as it was before the transaction. */
static void
txn_undo(ZkState *state, Txn *txn)
{
    for (guint i = txn->undo->len; i > 0; i--)
        undo_one(state, &g_array_index(txn->undo, Undo, i - 1));
    g_array_set_size(txn->undo, 0);
    g_array_set_size(txn->triggers, 0);
}

/* Makes the transaction final: frees what the undo log kept. */
static void
txn_commit(ZkState *state, Txn *txn)
{
    KSIM_ASSERT(txn->zxid == state->zxid + 1);
    for (guint i = 0; i < txn->undo->len; i++) {
        Undo *undo = &g_array_index(txn->undo, Undo, i);
        if (undo->kind == UNDO_DELETE)
            znode_free(undo->node);
        else if (undo->kind == UNDO_SET)
            g_bytes_unref(undo->old_data);
    }
    g_array_set_size(txn->undo, 0);
    state->zxid = txn->zxid;
}

/* Applies the request's ops in order; on the first failure the others are
 * marked RUNTIMEINCONSISTENCY (none of them is applied). */
static ZkError
txn_run(ZkState *state, Txn *txn, const ZkRequestMsg *req, ZkReplyMsg *reply)
{
    KSIM_ASSERT(reply->n_results == req->n_ops);
    for (guint i = 0; i < req->n_ops; i++) {
        ZkError error = apply_op(state, txn, &req->ops[i], &reply->results[i]);
        if (error == ZK_OK)
            continue;
        for (guint j = 0; j < req->n_ops; j++) {
            wire_result_clear(&reply->results[j]);
            reply->results[j].error = j == i ? error : ZK_RUNTIME_INCONSISTENCY;
        }
        return error;
    }
    return ZK_OK;
}

/* Removes a session: its watches, then its ephemerals (in path order). */
static void
session_close_apply(ZkState *state, Txn *txn, Session *s)
{
    session_drop_watches(state, s);
    g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
    for (GTreeNode *n = g_tree_node_first(s->ephemerals); n != NULL; n = g_tree_node_next(n))
        g_ptr_array_add(paths, g_strdup(g_tree_node_key(n)));
    for (guint i = 0; i < paths->len; i++)
        znode_delete(state, txn, znode_lookup(state, g_ptr_array_index(paths, i)));
    g_tree_remove(state->sessions, GSIZE_TO_POINTER(s->id));
}

/* ---- the log and the outbox ---- */

static char *
log_name(guint32 index)
{
    return g_strdup_printf(LOG_PREFIX "%010u", index);
}

static void outbox_flush(ZkServer *server);
static void snapshot_maybe_start(ZkServer *server);

static void
log_synced_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    ZkServer *server = ctx;
    ZkState *state = server->state;
    (void)world;
    (void)arg;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(status == SIM_DISK_OK);
    KSIM_ASSERT(state->fsync_in_flight);
    state->fsync_in_flight = FALSE;
    state->txn_durable = state->fsync_target;
    outbox_flush(server);
    if (state->txn_durable < state->txn_written) {
        state->fsync_in_flight = TRUE;
        state->fsync_target = state->txn_written;
        g_autofree char *name = log_name(state->log_index);
        sim_disk_fsync(server_disk(server), name, log_synced_cb, NULL);
        return;
    }
    snapshot_maybe_start(server);
}

/* Appends one transaction record and starts an fsync if none is in flight
 * (group commit: the next fsync covers whatever was appended meanwhile).
 * FALSE when the disk is full; nothing was written then. */
static gboolean
log_append(ZkServer *server, TxnKind kind, guint64 zxid, guint64 session_id, const Txn *txn,
           gint64 timeout_ns)
{
    ZkState *state = server->state;
    g_autoptr(GByteArray) payload = g_byte_array_new();
    put_u8(payload, (guint8)kind);
    put_u64(payload, zxid);
    put_u64(payload, session_id);
    if (kind == TXN_CREATE_SESSION)
        put_u64(payload, (guint64)timeout_ns);
    if (kind == TXN_OPS) {
        put_u32(payload, txn->n_logged);
        g_byte_array_append(payload, txn->record->data, txn->record->len);
    }
    KSIM_ASSERT(payload->len <= RECORD_BYTES_MAX);
    g_autoptr(GByteArray) record = g_byte_array_sized_new(payload->len + 8);
    put_u32(record, payload->len);
    put_u32(record, XXH32(payload->data, payload->len, 0));
    g_byte_array_append(record, payload->data, payload->len);
    g_autofree char *name = log_name(state->log_index);
    if (sim_disk_append(server_disk(server), name, record->data, record->len) != SIM_DISK_OK)
        return FALSE;
    state->txn_written++;
    state->log_txns++;
    if (!state->fsync_in_flight) {
        state->fsync_in_flight = TRUE;
        state->fsync_target = state->txn_written;
        sim_disk_fsync(server_disk(server), name, log_synced_cb, NULL);
    }
    return TRUE;
}

/* Sends `msg` to `to` once every transaction logged so far is durable. */
static void
outbox_push(ZkServer *server, SimNodeId to, SimMsg *msg)
{
    ZkState *state = server->state;
    if (g_queue_is_empty(&state->outbox) && state->txn_durable == state->txn_written) {
        sim_net_send(server_net(server), server->node, to, msg);
        return;
    }
    Outgoing *out = g_new(Outgoing, 1);
    out->to = to;
    out->msg = msg;
    out->txn_needed = state->txn_written;
    g_queue_push_tail(&state->outbox, out);
}

static void
outbox_flush(ZkServer *server)
{
    ZkState *state = server->state;
    for (;;) {
        Outgoing *out = g_queue_peek_head(&state->outbox);
        if (out == NULL || out->txn_needed > state->txn_durable)
            return;
        g_queue_pop_head(&state->outbox);
        sim_net_send(server_net(server), server->node, out->to, out->msg);
        g_free(out);
    }
}

/* Forgets the messages waiting for `peer`: its connection is gone. */
static void
outbox_purge(ZkState *state, SimNodeId peer)
{
    GList *link = state->outbox.head;
    while (link != NULL) {
        GList *next = link->next;
        Outgoing *out = link->data;
        if (out->to == peer) {
            g_queue_delete_link(&state->outbox, link);
            outgoing_free(out);
        }
        link = next;
    }
}

/* ---- snapshots ---- */

static void
snapshot_put_znode(GByteArray *out, const Znode *node)
{
    put_str(out, node->path);
    put_bytes(out, node->data);
    put_u32(out, (guint32)node->stat.version);
    put_u32(out, (guint32)node->stat.cversion);
    put_u64(out, node->stat.czxid);
    put_u64(out, node->stat.mzxid);
    put_u64(out, node->stat.pzxid);
    put_u64(out, node->stat.ephemeral_owner);
    for (GTreeNode *n = g_tree_node_first(node->children); n != NULL; n = g_tree_node_next(n))
        snapshot_put_znode(out, g_tree_node_value(n));
}

static GByteArray *
snapshot_encode(const ZkState *state)
{
    GByteArray *payload = g_byte_array_new();
    put_u64(payload, state->zxid);
    put_u32(payload, (guint32)g_tree_nnodes(state->sessions));
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n)) {
        const Session *s = g_tree_node_value(n);
        put_u64(payload, s->id);
        put_u64(payload, (guint64)s->timeout_ns);
    }
    put_u32(payload, g_hash_table_size(state->znodes));
    snapshot_put_znode(payload, state->root);
    GByteArray *file = g_byte_array_sized_new(payload->len + 12);
    put_u32(file, SNAPSHOT_MAGIC);
    put_u32(file, payload->len);
    put_u32(file, XXH32(payload->data, payload->len, 0));
    g_byte_array_append(file, payload->data, payload->len);
    g_byte_array_free(payload, TRUE);
    return file;
}

static void
snapshot_synced_cb(SimWorld *world, void *ctx, void *arg, SimDiskStatus status)
{
    ZkServer *server = ctx;
    ZkState *state = server->state;
    (void)world;
    (void)arg;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(status == SIM_DISK_OK);
    SimDisk *disk = server_disk(server);
    SimDiskStatus renamed = sim_disk_rename(disk, SNAPSHOT_TMP_NAME, SNAPSHOT_NAME);
    KSIM_ASSERT(renamed == SIM_DISK_OK);
    g_autoptr(GPtrArray) names = sim_disk_list(disk, LOG_PREFIX);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        guint64 index = g_ascii_strtoull(name + strlen(LOG_PREFIX), NULL, 10);
        if (index < state->snapshot_log_index)
            sim_disk_delete(disk, name);
    }
    state->snapshot_in_flight = FALSE;
    server_note(server, SIM_NODE_NONE, state->zxid, 0, "snapshot, logs before %u deleted",
                state->snapshot_log_index);
}

/* Writes a snapshot once the current log holds `snapshot_txns` transactions
 * and all of them are durable: the log rolls to a new file, and the files
 * before it are deleted once the snapshot is durable under its final name. */
static void
snapshot_maybe_start(ZkServer *server)
{
    ZkState *state = server->state;
    if (state->snapshot_in_flight || state->fsync_in_flight ||
        state->log_txns < server->cfg.snapshot_txns)
        return;
    KSIM_ASSERT(state->txn_durable == state->txn_written);
    SimDisk *disk = server_disk(server);
    if (sim_disk_exists(disk, SNAPSHOT_TMP_NAME))
        sim_disk_delete(disk, SNAPSHOT_TMP_NAME);
    g_autoptr(GByteArray) bytes = snapshot_encode(state);
    sim_disk_create(disk, SNAPSHOT_TMP_NAME);
    if (sim_disk_append(disk, SNAPSHOT_TMP_NAME, bytes->data, bytes->len) != SIM_DISK_OK) {
        sim_disk_delete(disk, SNAPSHOT_TMP_NAME);
        return;
    }
    KSIM_ASSERT(state->log_index < G_MAXUINT32);
    state->log_index++;
    state->log_txns = 0;
    state->snapshot_log_index = state->log_index;
    g_autofree char *name = log_name(state->log_index);
    sim_disk_create(disk, name);
    state->snapshot_in_flight = TRUE;
    sim_disk_fsync(disk, SNAPSHOT_TMP_NAME, snapshot_synced_cb, NULL);
}

/* ---- loading ---- */

static gboolean
snapshot_read_znode(ZkState *state, Reader *r)
{
    g_autofree char *path = get_str(r);
    g_autoptr(GBytes) data = get_bytes(r);
    ZkStat stat = {0};
    stat.version = (gint32)get_u32(r);
    stat.cversion = (gint32)get_u32(r);
    stat.czxid = get_u64(r);
    stat.mzxid = get_u64(r);
    stat.pzxid = get_u64(r);
    stat.ephemeral_owner = get_u64(r);
    if (!r->ok || !path_valid(path))
        return FALSE;
    Znode *node = state->root;
    if (strcmp(path, "/") != 0) {
        Znode *parent = parent_lookup(state, path);
        if (parent == NULL || znode_lookup(state, path) != NULL)
            return FALSE;
        node = znode_new(path, data);
        tree_attach(state, node, parent);
    } else {
        g_bytes_unref(node->data);
        node->data = g_bytes_ref(data);
    }
    node->stat = stat;
    if (stat.ephemeral_owner == 0)
        return TRUE;
    Session *owner = session_lookup(state, stat.ephemeral_owner);
    if (owner == NULL)
        return FALSE;
    g_tree_insert(owner->ephemerals, g_strdup(path), GINT_TO_POINTER(1));
    return TRUE;
}

/* Loads the snapshot. It was fsynced before it was renamed into place, so it
 * is whole: a bad one is a bug, not a fault. */
static void
snapshot_load(ZkState *state, SimDisk *disk)
{
    gint64 size = sim_disk_size(disk, SNAPSHOT_NAME);
    KSIM_ASSERT(size >= 12);
    g_autofree guint8 *buf = g_malloc((gsize)size);
    gssize read = sim_disk_read(disk, SNAPSHOT_NAME, 0, buf, (gsize)size);
    KSIM_ASSERT(read == size);
    Reader header = {buf, (gsize)size, 0, TRUE};
    KSIM_ASSERT(get_u32(&header) == SNAPSHOT_MAGIC);
    guint32 len = get_u32(&header);
    guint32 sum = get_u32(&header);
    KSIM_ASSERT(len == size - 12);
    KSIM_ASSERT(XXH32(buf + 12, len, 0) == sum);
    Reader r = {buf + 12, len, 0, TRUE};
    state->zxid = get_u64(&r);
    guint32 n_sessions = get_u32(&r);
    for (guint32 i = 0; i < n_sessions && r.ok; i++) {
        guint64 id = get_u64(&r);
        gint64 timeout_ns = (gint64)get_u64(&r);
        g_tree_insert(state->sessions, GSIZE_TO_POINTER(id), session_new(id, timeout_ns));
    }
    guint32 n_znodes = get_u32(&r);
    for (guint32 i = 0; i < n_znodes; i++) {
        gboolean loaded = snapshot_read_znode(state, &r);
        KSIM_ASSERT(loaded);
    }
    KSIM_ASSERT(r.ok);
    KSIM_ASSERT(r.pos == r.len);
}

/* Parses the ops of a logged transaction into `ops`; FALSE if malformed. */
static gboolean
record_read_ops(Reader *r, GArray *ops)
{
    guint32 n = get_u32(r);
    if (n > OPS_MAX)
        return FALSE;
    for (guint32 i = 0; i < n && r->ok; i++) {
        ZkWireOp op = {0};
        op.type = (ZkOpType)get_u8(r);
        op.flags = get_u8(r) != 0 ? ZK_EPHEMERAL : 0;
        op.version = ZK_VERSION_ANY;
        op.path = get_str(r);
        op.data = get_bytes(r);
        g_array_append_val(ops, op);
    }
    return r->ok && r->pos == r->len;
}

static void
wire_op_array_clear(gpointer data)
{
    wire_op_clear(data);
}

/* Replays one logged transaction; FALSE when it cannot follow the state (a
 * gap in zxids or a malformed record), which ends the replay. */
static gboolean
replay_record(ZkState *state, Reader *r)
{
    TxnKind kind = (TxnKind)get_u8(r);
    guint64 zxid = get_u64(r);
    guint64 session_id = get_u64(r);
    if (!r->ok)
        return FALSE;
    if (zxid <= state->zxid)
        return TRUE; /* covered by the snapshot */
    if (zxid != state->zxid + 1)
        return FALSE;
    g_autoptr(GArray) ops = g_array_new(FALSE, TRUE, sizeof(ZkWireOp));
    g_array_set_clear_func(ops, wire_op_array_clear);
    gint64 timeout_ns = kind == TXN_CREATE_SESSION ? (gint64)get_u64(r) : 0;
    if (kind == TXN_OPS && !record_read_ops(r, ops))
        return FALSE;
    if (!r->ok || r->pos != r->len)
        return FALSE;
    Txn txn;
    txn_init(&txn, zxid, session_id);
    if (kind == TXN_CREATE_SESSION) {
        KSIM_ASSERT(session_id == zxid);
        g_tree_insert(state->sessions, GSIZE_TO_POINTER(zxid), session_new(zxid, timeout_ns));
    } else if (kind == TXN_CLOSE_SESSION) {
        Session *s = session_lookup(state, session_id);
        KSIM_ASSERT(s != NULL);
        session_close_apply(state, &txn, s);
    }
    for (guint i = 0; i < ops->len; i++) {
        ZkWireResult result = {0};
        ZkError error = apply_op(state, &txn, &g_array_index(ops, ZkWireOp, i), &result);
        KSIM_ASSERT(error == ZK_OK);
        wire_result_clear(&result);
    }
    txn_commit(state, &txn);
    txn_clear(&txn);
    return TRUE;
}

/* Replays one log file; a torn or garbage tail is cut off (FALSE then). */
static gboolean
log_replay(ZkState *state, SimDisk *disk, const char *name)
{
    gint64 size = sim_disk_size(disk, name);
    KSIM_ASSERT(size >= 0);
    g_autofree guint8 *buf = g_malloc((gsize)size + 1);
    gssize read = sim_disk_read(disk, name, 0, buf, (gsize)size);
    KSIM_ASSERT(read == size);
    gsize pos = 0;
    while ((gsize)size - pos >= 8) {
        Reader header = {buf + pos, 8, 0, TRUE};
        guint32 len = get_u32(&header);
        guint32 sum = get_u32(&header);
        if (len > RECORD_BYTES_MAX || len > (gsize)size - pos - 8)
            break;
        if (XXH32(buf + pos + 8, len, 0) != sum)
            break;
        Reader r = {buf + pos + 8, len, 0, TRUE};
        if (!replay_record(state, &r))
            break;
        pos += 8 + len;
    }
    if (pos == (gsize)size)
        return TRUE;
    sim_disk_truncate(disk, name, (gint64)pos);
    return FALSE;
}

static void session_touch(ZkServer *server, Session *s);
static void session_arm(ZkServer *server, Session *s);

/* Rebuilds the state from the snapshot and the logs. */
static ZkState *
state_load(ZkServer *server)
{
    ZkState *state = state_new();
    SimDisk *disk = server_disk(server);
    if (sim_disk_exists(disk, SNAPSHOT_TMP_NAME))
        sim_disk_delete(disk, SNAPSHOT_TMP_NAME);
    if (sim_disk_exists(disk, SNAPSHOT_NAME))
        snapshot_load(state, disk);
    g_autoptr(GPtrArray) names = sim_disk_list(disk, LOG_PREFIX);
    gboolean whole = TRUE;
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        if (!whole) {
            sim_disk_delete(disk, name); /* past a cut: cannot follow it */
            continue;
        }
        whole = log_replay(state, disk, name);
        state->log_index = (guint32)g_ascii_strtoull(name + strlen(LOG_PREFIX), NULL, 10);
    }
    if (state->log_index == 0) {
        state->log_index = 1;
        g_autofree char *name = log_name(state->log_index);
        sim_disk_create(disk, name);
    }
    return state;
}

static void
server_load(ZkServer *server)
{
    KSIM_ASSERT(server->state == NULL);
    server->state = state_load(server);
    ZkState *state = server->state;
    /* Recovered sessions get a fresh timeout, as ZooKeeper's do. */
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n)) {
        Session *s = g_tree_node_value(n);
        session_touch(server, s);
        session_arm(server, s);
    }
    server_note(server, SIM_NODE_NONE, state->zxid, g_tree_nnodes(state->sessions),
                "loaded: zxid 0x%" G_GINT64_MODIFIER "x, %u znodes, %d sessions", state->zxid,
                g_hash_table_size(state->znodes), g_tree_nnodes(state->sessions));
}

/* ---- sessions ---- */

static gint64
server_now(const ZkServer *server)
{
    return sim_now_ns(server->world);
}

/* ZooKeeper's expiry buckets: deadlines round up to the next tick. */
static void
session_touch(ZkServer *server, Session *s)
{
    gint64 tick = server->cfg.tick_ns;
    s->deadline_ns = ((server_now(server) + s->timeout_ns) / tick + 1) * tick;
}

static void session_expiry_cb(SimWorld *world, void *ctx, void *arg);

static void
session_arm(ZkServer *server, Session *s)
{
    KSIM_ASSERT(s->deadline_ns >= server_now(server));
    s->expiry_timer =
        sim_timer_set(server->world, server->node, s->deadline_ns - server_now(server),
                      session_expiry_cb, GSIZE_TO_POINTER(s->id));
}

static void
txn_fire_triggers(ZkServer *server, const Txn *txn)
{
    for (guint i = 0; i < txn->triggers->len; i++) {
        const Trigger *trigger = &g_array_index(txn->triggers, Trigger, i);
        watch_fire(server, trigger->path, trigger->type);
    }
}

/* Ends a session (expiry or close): logs it, deletes its ephemerals and fires
 * their watches. FALSE when the disk is full: nothing changed. */
static gboolean
session_close(ZkServer *server, Session *s)
{
    ZkState *state = server->state;
    guint64 zxid = state->zxid + 1;
    if (!log_append(server, TXN_CLOSE_SESSION, zxid, s->id, NULL, 0))
        return FALSE;
    sim_timer_cancel(server->world, s->expiry_timer);
    Txn txn;
    txn_init(&txn, zxid, s->id);
    session_close_apply(state, &txn, s);
    txn_commit(state, &txn);
    txn_fire_triggers(server, &txn);
    txn_clear(&txn);
    return TRUE;
}

static void
session_expiry_cb(SimWorld *world, void *ctx, void *arg)
{
    ZkServer *server = ctx;
    guint64 id = GPOINTER_TO_SIZE(arg);
    (void)world;
    KSIM_ASSERT(server->state != NULL);
    Session *s = session_lookup(server->state, id);
    KSIM_ASSERT(s != NULL);
    if (server_now(server) < s->deadline_ns) {
        session_arm(server, s);
        return;
    }
    SimNodeId client = s->client;
    server_note(server, client, server->state->zxid + 1, id,
                "session 0x%" G_GINT64_MODIFIER "x expired", id);
    if (!session_close(server, s)) {
        s->deadline_ns = server_now(server) + server->cfg.tick_ns;
        session_arm(server, s);
        return;
    }
    /* As ZooKeeper, the server closes an expired session's connection; the
     * client learns of the expiry when it reconnects. */
    if (client != SIM_NODE_NONE) {
        outbox_purge(server->state, client);
        sim_net_close(server_net(server), server->node, client);
    }
}

/* The connection from `node` is gone or replaced: sessions bound to it lose
 * their watches until a client resumes them. */
static void
server_unbind_node(ZkServer *server, SimNodeId node)
{
    ZkState *state = server->state;
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n)) {
        Session *s = g_tree_node_value(n);
        if (s->client != node)
            continue;
        session_drop_watches(state, s);
        s->client = SIM_NODE_NONE;
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
    if (!log_append(server, TXN_CREATE_SESSION, id, id, NULL, timeout_ns)) {
        sim_net_close(server_net(server), server->node, from);
        return;
    }
    Session *s = session_new(id, timeout_ns);
    g_tree_insert(state->sessions, GSIZE_TO_POINTER(id), s);
    state->zxid = id;
    s->client = from;
    session_touch(server, s);
    session_arm(server, s);
    server_note(server, from, id, id, "session 0x%" G_GINT64_MODIFIER "x created by %s", id,
                sim_node_name(server->world, from));
    outbox_push(server, from,
                &zk_msg_connect_reply_new(id, timeout_ns, msg->attempt, ZK_OK)->base);
}

static void
server_on_connect(ZkServer *server, SimNodeId from, const ZkConnectMsg *msg)
{
    ZkState *state = server->state;
    server_unbind_node(server, from);
    if (msg->session_id == 0) {
        server_session_create(server, from, msg);
        return;
    }
    Session *s = session_lookup(state, msg->session_id);
    if (s == NULL) {
        outbox_push(server, from,
                    &zk_msg_connect_reply_new(0, 0, msg->attempt, ZK_SESSION_EXPIRED)->base);
        return;
    }
    /* Watches belong to the connection: the client registers them again. */
    session_drop_watches(state, s);
    s->client = from;
    session_touch(server, s);
    outbox_push(server, from,
                &zk_msg_connect_reply_new(s->id, s->timeout_ns, msg->attempt, ZK_OK)->base);
}

static void
server_reply(ZkServer *server, SimNodeId to, ZkReplyMsg *reply, ZkError error)
{
    reply->error = error;
    reply->zxid = server->state->zxid;
    zk_msg_reply_finish(reply);
    outbox_push(server, to, &reply->base);
}

static void
server_reply_error(ZkServer *server, SimNodeId to, const ZkRequestMsg *req, ZkError error)
{
    server_reply(server, to, zk_msg_reply_new(req->session_id, req->xid, 0), error);
}

static ZkError
server_read_op(ZkState *state, Session *s, const ZkWireOp *op, ZkWireResult *result)
{
    if (!path_valid(op->path))
        return ZK_BAD_ARGUMENTS;
    Znode *node = znode_lookup(state, op->path);
    if (op->type == ZK_OP_EXISTS && op->watch)
        watch_add(state, s, 'd', op->path);
    if (node == NULL)
        return ZK_NO_NODE;
    stat_fill(node, &result->stat);
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
    txn_init(&txn, state->zxid + 1, s->id);
    ZkError error = txn_run(state, &txn, req, reply);
    gboolean logged = error == ZK_OK && txn.n_logged > 0 &&
                      log_append(server, TXN_OPS, txn.zxid, s->id, &txn, 0);
    if (error == ZK_OK && txn.n_logged > 0 && !logged) {
        error = ZK_SYSTEM_ERROR;
        for (guint i = 0; i < reply->n_results; i++)
            reply->results[i].error = ZK_SYSTEM_ERROR;
    }
    if (logged) {
        txn_commit(state, &txn);
        txn_fire_triggers(server, &txn);
    } else {
        txn_undo(state, &txn);
    }
    reply->error = error;
    g_autofree char *note = write_describe(req, reply);
    server_note(server, from, state->zxid, s->id, "%s", note);
    txn_clear(&txn);
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
        if (!known || !path_valid(op->path))
            continue;
        const Znode *node = znode_lookup(state, op->path);
        ZkEventType fire = set_watch_event(node, op->type, req->relative_zxid);
        if (fire != 0)
            outbox_push(server, from, &zk_msg_watch_event_new(s->id, fire, op->path)->base);
        else
            watch_add(state, s, op->type == ZK_OP_CHILDREN ? 'c' : 'd', op->path);
    }
    server_reply(server, from, zk_msg_reply_new(s->id, req->xid, 0), ZK_OK);
}

static void
server_close_request(ZkServer *server, Session *s, SimNodeId from, const ZkRequestMsg *req)
{
    guint64 id = s->id;
    server_note(server, from, server->state->zxid + 1, id,
                "session 0x%" G_GINT64_MODIFIER "x closed", id);
    ZkError error = session_close(server, s) ? ZK_OK : ZK_SYSTEM_ERROR;
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

static void
server_on_request(ZkServer *server, SimNodeId from, const ZkRequestMsg *req)
{
    Session *s = session_lookup(server->state, req->session_id);
    if (s == NULL) {
        server_reply_error(server, from, req, ZK_SESSION_EXPIRED);
        return;
    }
    if (s->client == SIM_NODE_NONE) {
        /* A request on a connection that never sent a connect request (the
         * old one died without the client noticing): as ZooKeeper, which
         * expects a ConnectRequest first, close it so the client reconnects
         * and resumes its session. */
        outbox_purge(server->state, from);
        sim_net_close(server_net(server), server->node, from);
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
    session_touch(server, s);
    server_dispatch(server, s, from, req);
}

/* ---- node callbacks ---- */

static void
server_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    ZkServer *server = ctx;
    (void)world;
    if (server->state == NULL) {
        /* Not listening yet: the client's connection is refused. */
        sim_net_close(server_net(server), server->node, from);
        sim_msg_free(msg);
        return;
    }
    if (msg->type == ZK_MSG_CONNECT)
        server_on_connect(server, from, (const ZkConnectMsg *)msg);
    else if (msg->type == ZK_MSG_REQUEST)
        server_on_request(server, from, (const ZkRequestMsg *)msg);
    sim_msg_free(msg);
}

static void
server_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    ZkServer *server = ctx;
    (void)world;
    (void)reason;
    if (server->state == NULL)
        return;
    server_unbind_node(server, peer);
    outbox_purge(server->state, peer);
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
    server_load(ctx);
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
    if (server->cfg.session_timeout_ns_min == 0)
        server->cfg.session_timeout_ns_min = 2 * server->cfg.tick_ns;
    if (server->cfg.session_timeout_ns_max == 0)
        server->cfg.session_timeout_ns_max = 20 * server->cfg.tick_ns;
    KSIM_ASSERT(server->cfg.session_timeout_ns_min <= server->cfg.session_timeout_ns_max);
    server->node = sim_node_add(world, name, &server_ops, server);
    server_load(server);
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
    return server->state != NULL && session_lookup(server->state, session_id) != NULL;
}

guint
zk_server_znode_count(const ZkServer *server)
{
    return server->state == NULL ? 0 : g_hash_table_size(server->state->znodes);
}

GBytes *
zk_server_znode_get(const ZkServer *server, const char *path, ZkStat *stat)
{
    if (server->state == NULL)
        return NULL;
    const Znode *node = znode_lookup(server->state, path);
    if (node == NULL)
        return NULL;
    if (stat != NULL)
        stat_fill(node, stat);
    return g_bytes_ref(node->data);
}

/* ---- invariants ---- */

/* Checks one znode and its subtree (1-3); returns the znodes counted. */
static guint
check_znode(const ZkState *state, const Znode *node)
{
    KSIM_ASSERT(znode_lookup(state, node->path) == node);
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
        const Session *owner = session_lookup(state, node->stat.ephemeral_owner);
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
    KSIM_ASSERT(s->deadline_ns <= server_now(server) + s->timeout_ns + server->cfg.tick_ns);
    for (GTreeNode *n = g_tree_node_first(s->ephemerals); n != NULL; n = g_tree_node_next(n)) {
        const Znode *node = znode_lookup(state, g_tree_node_key(n));
        KSIM_ASSERT(node != NULL);
        KSIM_ASSERT(node->stat.ephemeral_owner == s->id);
    }
    if (g_tree_nnodes(s->watches) > 0)
        KSIM_ASSERT(s->client != SIM_NODE_NONE);
    for (GTreeNode *n = g_tree_node_first(s->watches); n != NULL; n = g_tree_node_next(n)) {
        const char *key = g_tree_node_key(n);
        GTree *set = g_hash_table_lookup(watch_table(state, key[0]), key + 1);
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
    check_durability(state);
}
