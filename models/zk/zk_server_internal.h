/*
 * zk_server_internal: the coordination server's private state and the
 * functions its files share — zk_server.c (state, node callbacks, API,
 * invariants), zk_server_tree.c, zk_server_session.c, zk_server_request.c,
 * zk_server_log.c — and the helpers of zk_proto.c they use. Nothing outside
 * models/zk/ includes it.
 */
#ifndef ZK_SERVER_INTERNAL_H
#define ZK_SERVER_INTERNAL_H

#include <glib.h>

#include "sim_disk.h"
#include "sim_net.h"
#include "zk_proto.h"
#include "zk_server.h"

/* Session ids are stored in GTree keys as pointer-sized integers. */
G_STATIC_ASSERT(sizeof(gsize) >= sizeof(guint64));

/* A bound on ops per request (a multi) and per logged transaction. */
#define OPS_MAX 4096

typedef enum {
    TXN_CREATE_SESSION = 1,
    TXN_CLOSE_SESSION = 2,
    TXN_OPS = 3,
} TxnKind;

typedef struct Znode Znode;
struct Znode {
    char *path;       /* owned */
    const char *name; /* the last component, inside `path` ("" for the root) */
    Znode *parent;    /* NULL for the root */
    GBytes *data;     /* owned, never NULL */
    ZkStat stat;      /* data_length and num_children are filled when reported */
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

/* ---- zk_proto.c: helpers of the wire messages ---- */

gsize zk_proto_bytes_size(GBytes *bytes);
void zk_proto_wire_op_clear(ZkWireOp *op);
void zk_proto_wire_result_clear(ZkWireResult *result);

/* ---- zk_server.c: state ---- */

GTree *zk_server_id_set_new(void);
Znode *zk_server_znode_new(const char *path, GBytes *data);
void zk_server_znode_free(gpointer data);
Session *zk_server_session_new(guint64 id, gint64 timeout_ns);
void zk_server_outgoing_free(gpointer data);
ZkState *zk_server_state_new(void);
Session *zk_server_session_lookup(const ZkState *state, guint64 id);
Znode *zk_server_znode_lookup(const ZkState *state, const char *path);
SimNet *zk_server_net(const ZkServer *server);
SimDisk *zk_server_disk(const ZkServer *server);

/* A model note in the trace; `a` is a zxid and `b` a session id, or 0. */
void zk_server_note(ZkServer *server, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
    G_GNUC_PRINTF(5, 6);

/* ---- zk_server_tree.c: paths and transactions ---- */

gboolean zk_server_path_valid(const char *path);
Znode *zk_server_parent_lookup(const ZkState *state, const char *path);
void zk_server_tree_attach(ZkState *state, Znode *node, Znode *parent);
void zk_server_stat_fill(const Znode *node, ZkStat *stat);
void zk_server_txn_init(Txn *txn, guint64 zxid, guint64 session_id);
void zk_server_txn_clear(Txn *txn);
ZkError zk_server_apply_op(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result);
void zk_server_txn_undo(ZkState *state, Txn *txn);
void zk_server_txn_commit(ZkState *state, Txn *txn);
ZkError zk_server_txn_run(ZkState *state, Txn *txn, const ZkRequestMsg *req, ZkReplyMsg *reply);
void zk_server_session_close_apply(ZkState *state, Txn *txn, Session *s);

/* ---- zk_server_session.c: sessions ---- */

gint64 zk_server_now(const ZkServer *server);
void zk_server_session_touch(ZkServer *server, Session *s);
void zk_server_session_arm(ZkServer *server, Session *s);
void zk_server_txn_fire_triggers(ZkServer *server, const Txn *txn);
gboolean zk_server_session_close(ZkServer *server, Session *s);
void zk_server_unbind_node(ZkServer *server, SimNodeId node);

/* ---- zk_server_request.c: watches and requests ---- */

GHashTable *zk_server_watch_table(const ZkState *state, char kind);
void zk_server_session_drop_watches(ZkState *state, Session *s);
void zk_server_watch_fire(ZkServer *server, const char *path, ZkEventType type);
void zk_server_on_connect(ZkServer *server, SimNodeId from, const ZkConnectMsg *msg);
void zk_server_on_request(ZkServer *server, SimNodeId from, const ZkRequestMsg *req);

/* ---- zk_server_log.c: codec, log and outbox, snapshots, loading ---- */

void zk_server_put_u8(GByteArray *out, guint8 value);
void zk_server_put_bytes(GByteArray *out, GBytes *bytes);
void zk_server_put_str(GByteArray *out, const char *text);
gboolean zk_server_log_append(ZkServer *server, TxnKind kind, guint64 zxid, guint64 session_id,
                              const Txn *txn, gint64 timeout_ns);
void zk_server_outbox_push(ZkServer *server, SimNodeId to, SimMsg *msg);
void zk_server_outbox_purge(ZkState *state, SimNodeId peer);
void zk_server_load(ZkServer *server);

#endif /* ZK_SERVER_INTERNAL_H */
