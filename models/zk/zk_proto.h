/*
 * coord_proto: the protocol between the coordination node (zk_server.h) and its
 * client library (zk_client.h): error codes, event types, znode stats, and
 * the messages on the wire.
 *
 * It follows ZooKeeper's protocol where that matters to Kafka: error codes keep
 * ZooKeeper's names and numbers, a reply carries the server's last zxid, a
 * watch notification carries a path and an event type, and a session is
 * resumed by sending its id in a new connect request.
 *
 * Messages (SimMsg.type 100..104). Every message names its session, so a client
 * can tell a reply or a notification for an older session from one for its own.
 *
 *   client                                  server
 *     CONNECT(session 0 or id, timeout) ──▶  creates or resumes the session
 *     ◀── CONNECT_REPLY(id, negotiated timeout | SESSION_EXPIRED)
 *     REQUEST(xid, ops) ──────────────────▶  one op, or a MULTI, PING,
 *                                            SET_WATCHES or CLOSE_SESSION
 *     ◀── REPLY(xid, zxid, error, results)   in request order (FIFO)
 *     ◀── WATCH_EVENT(path, type)            a one-shot watch fired
 *     PROBE ──────────────────────────────▶  ignored (see below)
 *
 * PROBE stands for TCP's retransmissions while a connection is being set up.
 * sim_net loses a message sent into a cut path for good, and a broken
 * connection is only reported when a later send meets a reset; a real
 * client's SYN would be retransmitted and get through after a heal. So while
 * a connect is unanswered the client sends a probe every second: after a heal
 * it meets the reset and the client reconnects at once, as a real one would.
 *
 * Ownership: a message belongs to the network in flight and to the receiver
 * after delivery, which frees it with sim_msg_free. The constructors and the
 * free and clone functions are implemented in zk_proto.c; messages with owned
 * pointers carry free_fn and clone_fn so the duplication fault can copy them.
 */
#ifndef ZK_PROTO_H
#define ZK_PROTO_H

#include <glib.h>

#include "sim_net.h"

/* SimMsg.type of the coordination messages. */
enum {
    ZK_MSG_CONNECT = 100,
    ZK_MSG_CONNECT_REPLY = 101,
    ZK_MSG_REQUEST = 102,
    ZK_MSG_REPLY = 103,
    ZK_MSG_WATCH_EVENT = 104,
    ZK_MSG_PROBE = 105,
    ZK_MSG_FIRST = 100,
    ZK_MSG_LAST = 199,
};

/* ZooKeeper's KeeperException codes, with their numbers. */
typedef enum {
    ZK_OK = 0,
    ZK_SYSTEM_ERROR = -1,          /* the server could not log the change (disk full) */
    ZK_RUNTIME_INCONSISTENCY = -2, /* a multi op not applied: another op failed */
    ZK_CONNECTION_LOSS = -4,       /* the outcome is unknown: the connection failed */
    ZK_BAD_ARGUMENTS = -8,         /* an invalid path or oversized data */
    ZK_NO_NODE = -101,
    ZK_BAD_VERSION = -103,
    ZK_NO_CHILDREN_FOR_EPHEMERALS = -108,
    ZK_NODE_EXISTS = -110,
    ZK_NOT_EMPTY = -111,
    ZK_SESSION_EXPIRED = -112,
    ZK_SESSION_MOVED = -118, /* the session is bound to another client node */
} ZkError;

/* ZooKeeper's Watcher.Event.EventType values. */
typedef enum {
    ZK_EVENT_NODE_CREATED = 1,
    ZK_EVENT_NODE_DELETED = 2,
    ZK_EVENT_NODE_DATA_CHANGED = 3,
    ZK_EVENT_NODE_CHILDREN_CHANGED = 4,
} ZkEventType;

/* Operations; the values are ZooKeeper's OpCode numbers where it has them. */
typedef enum {
    ZK_OP_CREATE = 1,
    ZK_OP_DELETE = 2,
    ZK_OP_EXISTS = 3,
    ZK_OP_GET = 4,
    ZK_OP_SET = 5,
    ZK_OP_CHILDREN = 8,
    ZK_OP_PING = 11,
    ZK_OP_CHECK = 13,
    ZK_OP_MULTI = 14,
    ZK_OP_CLOSE_SESSION = -11,
    ZK_OP_SET_WATCHES = 101,
} ZkOpType;

/* Create flags. */
enum {
    ZK_EPHEMERAL = 1 << 0,  /* deleted when the creating session ends */
    ZK_SEQUENTIAL = 1 << 1, /* the name gets a 10-digit counter suffix */
};

/* Expected version meaning "any version". */
#define ZK_VERSION_ANY (-1)

/* The largest znode data, as ZooKeeper's jute.maxbuffer default (1 MiB). */
#define ZK_DATA_BYTES_MAX (1024 * 1024)

/* A znode's stat, as ZooKeeper's Stat (without the wall-clock times). */
typedef struct {
    guint64 czxid;           /* the zxid of the create */
    guint64 mzxid;           /* the zxid of the last create or set */
    guint64 pzxid;           /* the zxid of the last child create or delete */
    gint32 version;          /* data version, bumped by every set */
    gint32 cversion;         /* child version, bumped by every child create and delete */
    guint64 ephemeral_owner; /* the owning session, 0 for a persistent znode */
    guint32 data_length;
    guint32 num_children;
} ZkStat;

/* One op of a multi, as the caller describes it; the client copies it.
 * CHECK uses path and version; CREATE path, data, len and flags; SET path,
 * data, len and version; DELETE path and version. */
typedef struct {
    ZkOpType type;
    const char *path;
    const void *data;
    gsize len;
    gint32 version;
    guint32 flags;
} ZkOp;

/* ZooKeeper's name for the error, e.g. "BADVERSION". */
const char *zk_error_name(ZkError error);
/* ZooKeeper's name for the event type, e.g. "NodeDeleted". */
const char *zk_event_name(ZkEventType type);
/* "ZooKeeper connect", "ZooKeeper request", ... for a coordination message
 * type; NULL for another type. */
const char *zk_msg_type_name(guint type);

/* ---- wire messages ---- */

typedef struct {
    SimMsg base;
    guint64 session_id; /* 0 asks for a new session */
    gint64 timeout_ns;  /* requested session timeout */
    guint64 last_zxid;  /* the last zxid the client saw */
    guint32 attempt;    /* echoed in the reply, to match it */
} ZkConnectMsg;

typedef struct {
    SimMsg base;
    guint64 session_id; /* 0 when refused */
    gint64 timeout_ns;  /* negotiated session timeout */
    guint32 attempt;
    ZkError error; /* ZK_OK or ZK_SESSION_EXPIRED */
} ZkConnectReplyMsg;

/* One operation inside a request. For SET_WATCHES requests the op type says
 * which kind of watch to re-register: GET a data watch, EXISTS an exist watch,
 * CHILDREN a child watch. */
typedef struct {
    ZkOpType type;
    guint32 flags;
    gint32 version;
    gboolean watch;
    char *path;   /* owned */
    GBytes *data; /* owned, may be NULL */
} ZkWireOp;

typedef struct {
    SimMsg base;
    guint64 session_id;
    gint64 xid;
    ZkOpType type;      /* a single op's type, or MULTI, PING, SET_WATCHES, CLOSE_SESSION */
    guint64 relative_zxid; /* SET_WATCHES: the last zxid the client saw */
    guint n_ops;
    ZkWireOp *ops; /* owned, n_ops entries */
} ZkRequestMsg;

/* The result of one op. */
typedef struct {
    ZkError error;
    ZkStat stat;
    char *path;      /* owned: the created path (CREATE) */
    GBytes *data;    /* owned: GET's data */
    char **children; /* owned: CHILDREN's names, sorted */
} ZkWireResult;

typedef struct {
    SimMsg base;
    guint64 session_id;
    gint64 xid;
    guint64 zxid; /* the server's last zxid when it answered */
    ZkError error;
    guint n_results;
    ZkWireResult *results; /* owned */
} ZkReplyMsg;

typedef struct {
    SimMsg base;
    guint64 session_id;
    ZkEventType type;
    char *path; /* owned */
} ZkWatchEventMsg;

/* Plain messages (no owned pointers; size_of is set so they can be copied). */
ZkConnectMsg *zk_msg_connect_new(guint64 session_id, gint64 timeout_ns, guint64 last_zxid,
                                       guint32 attempt);
ZkConnectReplyMsg *zk_msg_connect_reply_new(guint64 session_id, gint64 timeout_ns,
                                                  guint32 attempt, ZkError error);
/* A bare header (a TCP retransmission): the server ignores it. */
SimMsg *zk_msg_probe_new(void);

/* A request with `n_ops` zeroed ops for the caller to fill (paths and data
 * become the message's). The wire size is computed by
 * zk_msg_request_finish once the ops are filled. */
ZkRequestMsg *zk_msg_request_new(ZkOpType type, guint n_ops);
void zk_msg_request_finish(ZkRequestMsg *msg);

/* A reply with `n_results` zeroed results; sized by zk_msg_reply_finish. */
ZkReplyMsg *zk_msg_reply_new(guint64 session_id, gint64 xid, guint n_results);
void zk_msg_reply_finish(ZkReplyMsg *msg);

/* `path` is copied. */
ZkWatchEventMsg *zk_msg_watch_event_new(guint64 session_id, ZkEventType type,
                                              const char *path);

#endif
