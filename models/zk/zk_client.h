/*
 * zk_client: the client library a broker embeds to use the coordination
 * node (zk_server.h), behaving as ZooKeeper's Java client does.
 *
 *  - Creating the client connects and asks for a new session with the given
 *    timeout (Kafka's `zookeeper.session.timeout.ms`, default 18000 ms); the
 *    server may negotiate it into its bounds.
 *  - Requests are pipelined in order on the connection and answered in order.
 *    Requests made while the client is (re)connecting are queued and sent once
 *    the session is established.
 *  - While a connect request is unanswered the client probes every second
 *    (TCP's retransmissions, see zk_proto.h) and gives up after the session
 *    timeout (ZooKeeper's connect timeout with one server).
 *  - When nothing was sent for a third of the negotiated timeout the client
 *    pings. When nothing was heard for two thirds of it (or a connect attempt
 *    got no answer within the timeout) the client closes the connection. On
 *    any connection failure (that one, or a disconnect from sim_net) every
 *    outstanding and queued request completes with CONNECTION_LOSS, the
 *    `disconnected` callback runs, and after a random backoff (up to 1 s) the
 *    client reconnects and resumes its session, re-registering its watches
 *    (a watched znode that changed meanwhile fires at once).
 *  - If the server no longer has the session, outstanding requests complete
 *    with SESSION_EXPIRED, the watches are dropped, and `session_expired` runs.
 *    The client then stays EXPIRED, failing new requests with SESSION_EXPIRED,
 *    until the owner calls zk_client_new_session() (Kafka's broker does so
 *    and registers itself again) — from the callback or later.
 *  - Watches are one-shot: `watch_fired` runs once per registered watch path
 *    and event (a data and a child watch on a deleted node fire once).
 *
 * Callbacks run from zk_client_handle_message, zk_client_handle_disconnect
 * or the client's timers, never from inside a call that submits a request
 * (a request refused at once completes from a zero-delay timer). A callback may
 * submit requests, call zk_client_new_session, or free the client: nothing
 * more is delivered to the owner after zk_client_free.
 *
 * Embedding: the owner's SimNodeOps forward every message to
 * zk_client_handle_message (which returns FALSE for messages that are not
 * the client's) and every disconnect to zk_client_handle_disconnect. The
 * owner frees the client in its crash callback. Free the client while its
 * world is alive (it cancels its timers).
 */
#ifndef ZK_CLIENT_H
#define ZK_CLIENT_H

#include <glib.h>

#include "zk_proto.h"
#include "sim_world.h"

typedef struct ZkClient ZkClient;

typedef enum {
    ZK_CLIENT_CONNECTING = 1, /* a connect request is in flight */
    ZK_CLIENT_CONNECTED,      /* the session is established on a connection */
    ZK_CLIENT_BACKOFF,        /* the connection failed; reconnecting after a backoff */
    ZK_CLIENT_EXPIRED,        /* the server no longer has the session */
    ZK_CLIENT_CLOSED,         /* the session was closed by zk_client_close_session */
} ZkClientState;

/* The result of one op of a multi. */
typedef struct {
    ZkError error;
    const char *path; /* CREATE: the created path; otherwise NULL */
    ZkStat stat;   /* CREATE, SET, CHECK */
} ZkOpResult;

/* A request's result, valid only during the result callback. */
typedef struct {
    ZkError error;
    ZkOpType op;
    const char *path;   /* the request's path; for a create, the created path */
    const guint8 *data; /* GET */
    gsize len;
    /* The znode's data version after the request: stat.version, or for a
     * multi that of its last CREATE or SET op (of its last op if none), so a
     * checked write reports the version it wrote. */
    gint32 version;
    ZkStat stat;              /* GET, EXISTS, SET, CREATE, CHILDREN */
    const char *const *children; /* CHILDREN: sorted, NULL-terminated; NULL otherwise */
    guint n_ops;                 /* MULTI: one result per op (0 when the request failed */
    const ZkOpResult *ops;    /*        before the server ran it) */
} ZkResult;

typedef void (*ZkResultFn)(void *owner, const ZkResult *result, void *arg);

/* The owner's callbacks; any may be NULL. */
typedef struct {
    /* A session is established: a new one, or the old one resumed after a
     * reconnect. */
    void (*session_established)(void *owner, gboolean is_new_session);
    /* The client learned that the server expired its session. */
    void (*session_expired)(void *owner);
    /* The connection failed; the session may survive. */
    void (*disconnected)(void *owner);
    /* A one-shot watch on `path` fired. */
    void (*watch_fired)(void *owner, const char *path, ZkEventType type);
} ZkClientCallbacks;

/* The largest reconnect backoff, as ZooKeeper's client (a random sleep below
 * one second). */
#define ZK_CLIENT_BACKOFF_NS_MAX (1000 * SIM_NS_PER_MS)

/* While a connect is unanswered the client probes this often, standing for
 * TCP's retransmissions (TCP's initial retransmission timeout is 1 s). */
#define ZK_CLIENT_PROBE_NS (1000 * SIM_NS_PER_MS)

/* A client on node `self` of the server on node `server`; it sends its connect
 * request at once. `callbacks` is copied; `owner` is passed to every callback.
 * (transfer full) */
ZkClient *zk_client_new(SimWorld *world, SimNodeId self, SimNodeId server,
                              gint64 session_timeout_ns, const ZkClientCallbacks *callbacks,
                              void *owner);
/* Frees the client without delivering anything more; outstanding requests
 * are dropped. Accepts NULL. Safe from the client's own callbacks. */
void zk_client_free(ZkClient *client);

/* Takes `msg` if it is the client's (from the server, a coordination type):
 * it is then handled and freed, and TRUE is returned. Otherwise FALSE and the
 * caller keeps `msg`. */
gboolean zk_client_handle_message(ZkClient *client, SimNodeId from, SimMsg *msg);
/* The owner's connection to `peer` failed (ignored unless peer is the server). */
void zk_client_handle_disconnect(ZkClient *client, SimNodeId peer);

/* After session_expired (or a close): starts a new session. Does nothing in
 * other states. */
void zk_client_new_session(ZkClient *client);

/* At most `max_in_flight` requests unanswered at once (0, the default: no
 * limit); the others wait, in order, for answers. Kafka's
 * zookeeper.max.in.flight.requests. Pings and SetWatches are not counted. */
void zk_client_set_max_in_flight(ZkClient *client, guint max_in_flight);

ZkClientState zk_client_state(const ZkClient *client);
/* The current session's id (0 before the first is established). */
guint64 zk_client_session_id(const ZkClient *client);
/* The negotiated session timeout (0 before the first session). */
gint64 zk_client_session_timeout_ns(const ZkClient *client);

/* Asynchronous operations. `path`, `data` and `ops` are copied; `result_cb`
 * may be NULL. */
void zk_client_create(ZkClient *client, const char *path, const void *data, gsize len,
                         guint32 flags, ZkResultFn result_cb, void *arg);
void zk_client_delete(ZkClient *client, const char *path, gint32 version,
                         ZkResultFn result_cb, void *arg);
/* `watch`: a data watch, registered if the znode exists. */
void zk_client_get(ZkClient *client, const char *path, gboolean watch,
                      ZkResultFn result_cb, void *arg);
/* `watch`: a data watch if the znode exists, else an exist watch (fires on
 * creation). */
void zk_client_exists(ZkClient *client, const char *path, gboolean watch,
                         ZkResultFn result_cb, void *arg);
void zk_client_set(ZkClient *client, const char *path, const void *data, gsize len,
                      gint32 version, ZkResultFn result_cb, void *arg);
/* `watch`: a child watch, registered if the znode exists. */
void zk_client_children(ZkClient *client, const char *path, gboolean watch,
                           ZkResultFn result_cb, void *arg);
/* Applies CHECK, CREATE, SET and DELETE ops atomically: all or none. */
void zk_client_multi(ZkClient *client, const ZkOp *ops, guint n_ops,
                        ZkResultFn result_cb, void *arg);
/* Multis fenced by a version check, as Kafka's controller writes with a check
 * of /controller_epoch's version. */
void zk_client_set_checked(ZkClient *client, const char *check_path, gint32 check_version,
                              const char *path, const void *data, gsize len, gint32 version,
                              ZkResultFn result_cb, void *arg);
void zk_client_create_checked(ZkClient *client, const char *check_path, gint32 check_version,
                                 const char *path, const void *data, gsize len, guint32 flags,
                                 ZkResultFn result_cb, void *arg);
void zk_client_delete_checked(ZkClient *client, const char *check_path, gint32 check_version,
                                 const char *path, gint32 version, ZkResultFn result_cb,
                                 void *arg);
/* Closes the session (its ephemerals go at once, as at a controlled
 * shutdown); on success the client becomes CLOSED. */
void zk_client_close_session(ZkClient *client, ZkResultFn result_cb, void *arg);

/* Asserts the invariants listed in zk_client.c. */
void zk_client_check_invariants(const ZkClient *client);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ZkClient, zk_client_free)

#endif
