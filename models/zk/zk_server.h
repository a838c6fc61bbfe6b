/*
 * zk_server: the coordination node, a ZooKeeper-like server that runs as a
 * simulated node of its own (one server, no ensemble).
 *
 * What it keeps:
 *  - a tree of znodes named by paths ("/brokers/ids/1"): persistent,
 *    ephemeral (owned by a session, deleted when it ends) or sequential (the
 *    name gets a 10-digit suffix, the parent's child version, as ZooKeeper
 *    does); each has data (bytes), a data version bumped by every set, a child
 *    version, the zxids of its create, last change and last child change;
 *  - sessions, created by a connect request with a requested timeout that is
 *    negotiated into [session_timeout_ns_min, session_timeout_ns_max], kept
 *    alive by any request or ping, and expired `timeout` after the last one
 *    (rounded up to the next tick, as ZooKeeper's expiry buckets are):
 *    expiry deletes the session's ephemerals, firing their watches, and later
 *    requests of the session are answered SESSION_EXPIRED;
 *  - one-shot watches: data watches set by get and exists, fired by a create,
 *    set or delete of the path; child watches set by get-children, fired by a
 *    child create or delete and by the delete of the node. A watch fires once,
 *    as a notification to the session's connection. Watches belong to the
 *    connection: when it fails the server drops them, and a client that
 *    resumes its session registers them again with the last zxid it saw
 *    (ZooKeeper's SetWatches), so a change it missed fires at once.
 *
 * Durability, as ZooKeeper with forceSync: every change is a transaction
 * appended to a log on the node's disk ("coord/log.<n>", each record
 * checksummed), and nothing that depends on it (the reply, the watch
 * notifications, any later answer) leaves the server before an fsync has made
 * it durable. After `snapshot_txns` transactions the server writes a snapshot
 * ("coord/snapshot", written to a temporary file, fsynced, then renamed) and
 * deletes the logs it covers.
 *
 * Crash and restart: a crash frees the server's memory. On restart the server
 * answers nothing (it closes any connection that reaches it) for
 * `load_delay_ns`, then loads the snapshot and replays the logs (a torn tail is
 * cut off). Persistent znodes and sessions survive; each recovered session gets
 * a fresh timeout, as ZooKeeper's do after recovery. Acknowledged changes
 * survive a power loss, since they were fsynced before they were answered.
 *
 * Service time: requests and connects wait in an inbox and are served one at
 * a time, in arrival order, each taking `request_ns` plus `byte_ns` a byte
 * (ZooKeeper's request processors are a pipeline of single threads); a
 * connection that fails takes its waiting requests with it.
 *
 * Disk full: a change that cannot be logged is refused with ZK_SYSTEM_ERROR
 * and changes nothing; a session expiry that cannot be logged is retried a tick
 * later.
 *
 * One client per client node: a new connection from a node replaces the
 * node's earlier one, so sessions still bound to that node lose their watches.
 */
#ifndef ZK_SERVER_H
#define ZK_SERVER_H

#include <glib.h>

#include "zk_proto.h"
#include "sim_world.h"

typedef struct ZkServer ZkServer;

typedef struct {
    /* ZooKeeper's tickTime: the expiry granularity. */
    gint64 tick_ns;
    /* Bounds on negotiated session timeouts; 0 means 2 and 20 ticks, as
     * ZooKeeper's minSessionTimeout and maxSessionTimeout defaults. */
    gint64 session_timeout_ns_min;
    gint64 session_timeout_ns_max;
    /* ZooKeeper's snapCount: transactions per log before a snapshot. */
    guint32 snapshot_txns;
    /* How long a restarted server takes to load before it serves. */
    gint64 load_delay_ns;
    /* Service time of one request, as one request processor thread
     * serves them in arrival order: `request_ns` plus `byte_ns` for each
     * byte of the request and of the data it reads (a GET's znode data, a
     * listing's child names). Both 0: served on arrival, taking no time. */
    gint64 request_ns;
    gint64 byte_ns;
} ZkServerConfig;

/* ZooKeeper's defaults: tick 2 s, sessions 4 s..40 s, snapshot every 100000
 * transactions; loading takes 10 ms; a request takes 10 us plus 20 ns a
 * byte (about 30,000 1 KiB reads a second, the order of one server's share
 * in the ZooKeeper 3.2 benchmark of its overview's "ZooKeeper Throughput as
 * the Read-Write Ratio Varies"). These stay here, unlike the Kafka
 * models' defaults (which are the harness's key registry's): a scenario has
 * no key for the coordination service's internals, so this is their only
 * source. */
void zk_server_config_init(ZkServerConfig *cfg);

/* Adds a node named `name` to `world` running the server, and loads its state
 * from the node's disk. `cfg` is copied (NULL: defaults). The server object is
 * the node's model object; it stays valid across crashes and restarts until
 * zk_server_free. (transfer full) */
ZkServer *zk_server_new(SimWorld *world, const char *name, const ZkServerConfig *cfg);
/* Frees the server object. Call after sim_world_free, or while the world
 * will no longer run the node's events. Accepts NULL. */
void zk_server_free(ZkServer *server);

SimNodeId zk_server_node(const ZkServer *server);

/* TRUE when the server is up and has loaded its state. */
gboolean zk_server_serving(const ZkServer *server);

/* Inspection, for tests and reports; all answer "nothing" while the server is
 * not serving. */
guint64 zk_server_zxid(const ZkServer *server);
guint zk_server_session_count(const ZkServer *server);
gboolean zk_server_session_alive(const ZkServer *server, guint64 session_id);
/* Copies the znode's stat into `stat` (may be NULL) and returns its data, or
 * NULL when there is no such znode. (transfer full) */
GBytes *zk_server_znode_get(const ZkServer *server, const char *path, ZkStat *stat);

/* Told of every ephemeral znode a session's end (expiry or close) deletes,
 * with its data, at the instant the server ends the session: an observer's
 * view (the cluster's monitor notes when /controller goes), which changes
 * nothing the server does. */
typedef void (*ZkEphemeralEndedFn)(void *user_data, const char *path, GBytes *data);
void zk_server_set_ephemeral_listener(ZkServer *server, ZkEphemeralEndedFn ended_cb,
                                      void *user_data);

/* Asserts the invariants listed in zk_server.c (O(size of the tree)). */
void zk_server_check_invariants(const ZkServer *server);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ZkServer, zk_server_free)

#endif
