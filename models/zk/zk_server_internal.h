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
/* A bound on messages waiting to be served (ZooKeeper bounds them with
 * globalOutstandingLimit). */
#define ZK_SERVER_INBOX_MAX (1u << 22)

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
    guint watch_count;  /* watches, counted as sessions gain and lose them */
    guint watch_pairs;  /* (path, session) pairs of the two tables, counted there */
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
    GQueue inbox;               /* SimMsg * received, not yet served, in arrival order */
    SimTimerId service_timer;   /* pending while the inbox's head is being served */
} ZkState;

struct ZkServer {
    SimWorld *world;
    SimNodeId node;
    ZkServerConfig cfg;
    ZkState *state; /* NULL while down or loading */
    ZkEphemeralEndedFn ephemeral_ended_cb;
    void *ephemeral_ended_data;
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

/* The size of `bytes`, 0 for NULL. */
gsize zk_proto_bytes_size(GBytes *bytes);
/* Frees what an op owns (its path and data). */
void zk_proto_wire_op_clear(ZkWireOp *op);
/* Frees what a result owns and zeroes it. */
void zk_proto_wire_result_clear(ZkWireResult *result);

/* ---- zk_server.c: state ---- */

/* A set of session ids (GTree keys), in id order. */
GTree *zk_server_id_set_new(void);
/* A detached znode; takes a reference to `data` (NULL: empty). */
Znode *zk_server_znode_new(const char *path, GBytes *data);
void zk_server_znode_free(gpointer data);
/* A session without a client, watches or ephemerals. */
Session *zk_server_session_new(guint64 id, gint64 timeout_ns);
void zk_server_outgoing_free(gpointer data);
/* An empty state: the root znode alone. */
ZkState *zk_server_state_new(void);
/* The live session `id`, or NULL. */
Session *zk_server_session_lookup(const ZkState *state, guint64 id);
/* The znode at `path`, or NULL. */
Znode *zk_server_znode_lookup(const ZkState *state, const char *path);
SimNet *zk_server_net(const ZkServer *server);
SimDisk *zk_server_disk(const ZkServer *server);

/* A model note in the trace; `a` is a zxid and `b` a session id, or 0. */
void zk_server_note(ZkServer *server, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
    G_GNUC_PRINTF(5, 6);

/* ---- zk_server_tree.c: paths and transactions ---- */

/* ZooKeeper's PathUtils.validatePath, without the character classes. */
gboolean zk_server_path_valid(const char *path);
/* The znode that would be `path`'s parent, or NULL. */
Znode *zk_server_parent_lookup(const ZkState *state, const char *path);
/* Puts `node` into the znode table and under `parent`. */
void zk_server_tree_attach(ZkState *state, Znode *node, Znode *parent);
/* The znode's stat, with its data length and child count. */
void zk_server_stat_fill(const Znode *node, ZkStat *stat);
void zk_server_txn_init(Txn *txn, guint64 zxid, guint64 session_id);
void zk_server_txn_clear(Txn *txn);
/* Applies one op of a transaction, recording its undo. */
ZkError zk_server_apply_op(ZkState *state, Txn *txn, const ZkWireOp *op, ZkWireResult *result);
/* Restores the tree as it was before the transaction. */
void zk_server_txn_undo(ZkState *state, Txn *txn);
/* Makes the transaction final: frees what the undo log kept. */
void zk_server_txn_commit(ZkState *state, Txn *txn);
/* Applies the request's ops in order, all or none. */
ZkError zk_server_txn_run(ZkState *state, Txn *txn, const ZkRequestMsg *req, ZkReplyMsg *reply);
/* Removes a session: its watches, then its ephemerals (in path order). */
void zk_server_session_close_apply(ZkState *state, Txn *txn, Session *s);

/* ---- zk_server_session.c: sessions ---- */

/* The world's virtual time. */
gint64 zk_server_now(const ZkServer *server);
/* Moves the session's deadline to its timeout from now, rounded up to the
 * next tick (ZooKeeper's expiry buckets). */
void zk_server_session_touch(ZkServer *server, Session *s);
/* Sets the session's expiry timer for its deadline. */
void zk_server_session_arm(ZkServer *server, Session *s);
/* Fires the watches of a committed transaction's changes, in order. */
void zk_server_txn_fire_triggers(ZkServer *server, const Txn *txn);
/* Ends a session (expiry or close); FALSE when the disk is full. */
gboolean zk_server_session_close(ZkServer *server, Session *s);
/* The connection from `node` is gone or replaced. */
void zk_server_unbind_node(ZkServer *server, SimNodeId node);

/* ---- zk_server_request.c: watches and requests ---- */

/* The data ('d') or child ('c') watch table. */
GHashTable *zk_server_watch_table(const ZkState *state, char kind);
/* Drops every watch of the session (its connection is gone). */
void zk_server_session_drop_watches(ZkState *state, Session *s);
/* Fires the watches a change of `path` triggers, each session once. */
void zk_server_watch_fire(ZkServer *server, const char *path, ZkEventType type);
/* A client connects: a new session, or an old one resumed. */
void zk_server_on_connect(ZkServer *server, SimNodeId from, const ZkConnectMsg *msg);
/* A client request: checked against its session, then dispatched. */
void zk_server_on_request(ZkServer *server, SimNodeId from, const ZkRequestMsg *req);

/* ---- zk_server_log.c: codec, log and outbox, snapshots, loading ---- */

void zk_server_put_u8(GByteArray *out, guint8 value);
void zk_server_put_bytes(GByteArray *out, GBytes *bytes);
void zk_server_put_str(GByteArray *out, const char *text);
/* Appends one transaction record; FALSE when the disk is full. */
gboolean zk_server_log_append(ZkServer *server, TxnKind kind, guint64 zxid, guint64 session_id,
                              const Txn *txn, gint64 timeout_ns);
/* Sends `msg` to `to` once every transaction logged so far is durable. */
void zk_server_outbox_push(ZkServer *server, SimNodeId to, SimMsg *msg);
/* Forgets the messages waiting for `peer`: its connection is gone. */
void zk_server_outbox_purge(ZkState *state, SimNodeId peer);
/* Loads the state from disk (snapshot, then logs) and rearms the sessions. */
void zk_server_load(ZkServer *server);

#endif /* ZK_SERVER_INTERNAL_H */
