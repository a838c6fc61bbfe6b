/*
 * zk_server_log: what the server keeps on disk and how it recovers it — the
 * byte codec of records, the transaction log and its fsyncs
 * (zk_server_log_append, log_synced_cb), the outbox that holds each reply
 * until the transactions before it are durable, snapshots, and loading the
 * snapshot and replaying the logs at restart (zk_server_load).
 *
 * Disk layout: see zk_server.c.
 */
#include "zk_server_internal.h"

#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

#include <string.h>
#include <xxhash.h>

#define LOG_PREFIX "coord/log."
#define SNAPSHOT_NAME "coord/snapshot"
#define SNAPSHOT_TMP_NAME "coord/snapshot.tmp"
#define SNAPSHOT_MAGIC 0x4b43534eu /* "KCSN" */
#define RECORD_BYTES_MAX (64u * 1024 * 1024)

/* ---- byte codec for the log and the snapshot (little endian) ---- */

void
zk_server_put_u8(GByteArray *out, guint8 value)
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

void
zk_server_put_bytes(GByteArray *out, GBytes *bytes)
{
    gsize len = 0;
    const void *data = bytes == NULL ? NULL : g_bytes_get_data(bytes, &len);
    put_blob(out, data, len);
}

void
zk_server_put_str(GByteArray *out, const char *text)
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
        sim_disk_fsync(zk_server_disk(server), name, log_synced_cb, NULL);
        return;
    }
    snapshot_maybe_start(server);
}

/* Appends one transaction record and starts an fsync if none is in flight
 * (group commit: the next fsync covers whatever was appended meanwhile).
 * FALSE when the disk is full; nothing was written then. */
gboolean
zk_server_log_append(ZkServer *server, TxnKind kind, guint64 zxid, guint64 session_id,
                     const Txn *txn, gint64 timeout_ns)
{
    ZkState *state = server->state;
    g_autoptr(GByteArray) payload = g_byte_array_new();
    zk_server_put_u8(payload, (guint8)kind);
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
    if (sim_disk_append(zk_server_disk(server), name, record->data, record->len) != SIM_DISK_OK)
        return FALSE;
    state->txn_written++;
    state->log_txns++;
    if (!state->fsync_in_flight) {
        state->fsync_in_flight = TRUE;
        state->fsync_target = state->txn_written;
        sim_disk_fsync(zk_server_disk(server), name, log_synced_cb, NULL);
    }
    return TRUE;
}

/* Sends `msg` to `to` once every transaction logged so far is durable. */
void
zk_server_outbox_push(ZkServer *server, SimNodeId to, SimMsg *msg)
{
    ZkState *state = server->state;
    if (g_queue_is_empty(&state->outbox) && state->txn_durable == state->txn_written) {
        sim_net_send(zk_server_net(server), server->node, to, msg);
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
        sim_net_send(zk_server_net(server), server->node, out->to, out->msg);
        g_free(out);
    }
}

/* Forgets the messages waiting for `peer`: its connection is gone. */
void
zk_server_outbox_purge(ZkState *state, SimNodeId peer)
{
    GList *link = state->outbox.head;
    while (link != NULL) {
        GList *next = link->next;
        Outgoing *out = link->data;
        if (out->to == peer) {
            g_queue_delete_link(&state->outbox, link);
            zk_server_outgoing_free(out);
        }
        link = next;
    }
}

/* ---- snapshots ---- */

static void
snapshot_put_znode(GByteArray *out, const Znode *node)
{
    zk_server_put_str(out, node->path);
    zk_server_put_bytes(out, node->data);
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
    SimDisk *disk = zk_server_disk(server);
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
    zk_server_note(server, SIM_NODE_NONE, state->zxid, 0, "snapshot, logs before %u deleted",
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
    SimDisk *disk = zk_server_disk(server);
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
    if (!r->ok || !zk_server_path_valid(path))
        return FALSE;
    Znode *node = state->root;
    if (strcmp(path, "/") != 0) {
        Znode *parent = zk_server_parent_lookup(state, path);
        if (parent == NULL || zk_server_znode_lookup(state, path) != NULL)
            return FALSE;
        node = zk_server_znode_new(path, data);
        zk_server_tree_attach(state, node, parent);
    } else {
        g_bytes_unref(node->data);
        node->data = g_bytes_ref(data);
    }
    node->stat = stat;
    if (stat.ephemeral_owner == 0)
        return TRUE;
    Session *owner = zk_server_session_lookup(state, stat.ephemeral_owner);
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
        g_tree_insert(state->sessions, GSIZE_TO_POINTER(id), zk_server_session_new(id, timeout_ns));
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
    zk_proto_wire_op_clear(data);
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
    zk_server_txn_init(&txn, zxid, session_id);
    if (kind == TXN_CREATE_SESSION) {
        KSIM_ASSERT(session_id == zxid);
        g_tree_insert(state->sessions, GSIZE_TO_POINTER(zxid),
                      zk_server_session_new(zxid, timeout_ns));
    } else if (kind == TXN_CLOSE_SESSION) {
        Session *s = zk_server_session_lookup(state, session_id);
        KSIM_ASSERT(s != NULL);
        zk_server_session_close_apply(state, &txn, s);
    }
    for (guint i = 0; i < ops->len; i++) {
        ZkWireResult result = {0};
        ZkError error = zk_server_apply_op(state, &txn, &g_array_index(ops, ZkWireOp, i), &result);
        KSIM_ASSERT(error == ZK_OK);
        zk_proto_wire_result_clear(&result);
    }
    zk_server_txn_commit(state, &txn);
    zk_server_txn_clear(&txn);
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


/* Rebuilds the state from the snapshot and the logs. */
static ZkState *
state_load(ZkServer *server)
{
    ZkState *state = zk_server_state_new();
    SimDisk *disk = zk_server_disk(server);
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

void
zk_server_load(ZkServer *server)
{
    KSIM_ASSERT(server->state == NULL);
    server->state = state_load(server);
    ZkState *state = server->state;
    /* Recovered sessions get a fresh timeout, as ZooKeeper's do. */
    for (GTreeNode *n = g_tree_node_first(state->sessions); n != NULL; n = g_tree_node_next(n)) {
        Session *s = g_tree_node_value(n);
        zk_server_session_touch(server, s);
        zk_server_session_arm(server, s);
    }
    zk_server_note(server, SIM_NODE_NONE, state->zxid, g_tree_nnodes(state->sessions),
                   "loaded: zxid 0x%" G_GINT64_MODIFIER "x, %u znodes, %d sessions", state->zxid,
                   g_hash_table_size(state->znodes), g_tree_nnodes(state->sessions));
}
