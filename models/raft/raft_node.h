/*
 * raft_node: one voter of a KRaft controller quorum, a simulated node of its
 * own, running KIP-595 Raft as Kafka's raft module does (KafkaRaftClient,
 * QuorumState and its states, LeaderState; Apache Kafka 4.0, commit
 * 1eb7644 of trunk, October 2024, before pre-vote).
 *
 * States (QuorumState), as EpochState subclasses in Kafka:
 *
 *   UNATTACHED ──grant a vote──▶ VOTED          (UnattachedState, with votedKey)
 *     │  ▲ election timeout          │ election timeout
 *     ▼  │ higher epoch seen         ▼
 *   CANDIDATE ──majority granted──▶ LEADER ──check quorum fails──▶ RESIGNED
 *     │ learns the leader                                   │ election timeout
 *     ▼                                                     ▼
 *   FOLLOWER ──fetch timeout / EndQuorumEpoch backoff──▶ CANDIDATE
 *
 * Replication is pull-based: a follower Fetches from the leader with its log
 * end offset and the epoch of its last batch; the leader checks them against
 * its leader-epoch cache (ReplicatedLog.validateOffsetAndEpoch) and either
 * answers with batches and its high watermark, or with a diverging epoch and
 * end offset, to which the follower truncates (truncateToEndOffset) before it
 * fetches again. A fetch with nothing to return is parked at the leader for
 * up to its max wait (the fetch purgatory) and completed when the leader's
 * log grows past its offset.
 *
 * The metadata log `__cluster_metadata-0` is a partition log (plog.h) on the
 * node's disk, its leader-epoch cache the one the data path uses. A follower
 * flushes (fsyncs) every append before it fetches again, so the offset it
 * fetches from is durable; the leader counts its own end offset toward the
 * high watermark as it appends and flushes after, as Kafka's flushLeaderLog
 * does ("We update the end offset before flushing so that parked fetches can
 * return sooner"). The election state (epoch, voted id, leader id) is in
 * `__cluster_metadata-0/quorum-state`, fsynced before any message that
 * depends on it leaves the node (FileQuorumStateStore writes it with a sync).
 *
 * The high watermark (LeaderState.maybeUpdateHighWatermark) is the end offset
 * of the voter at index n/2 when the voters are sorted by descending end
 * offset (a majority has it, the leader counting), and is set only once it
 * passes the leader's epoch start offset: a leader commits nothing before it
 * has committed a record of its own epoch (the LeaderChange record it
 * appends on election). It is kept in memory only; a restarted node learns it
 * again from the leader.
 *
 * Timeouts, Kafka's keys and defaults: controller.quorum.election.timeout.ms
 * (1000; each election timer is that plus a uniform draw below it),
 * controller.quorum.election.backoff.max.ms (1000; a candidate that lost
 * waits min(100 ms * uniform[0, 2^retries), this) before its next
 * election), controller.quorum.fetch.timeout.ms (2000; a follower that has
 * heard nothing from its leader that long stands for election, and a leader
 * that has not been fetched from by a majority for 1.5 times it resigns),
 * controller.quorum.request.timeout.ms (2000), controller.quorum.retry.backoff.ms
 * (20) and the fetch max wait (replica.fetch.wait.max.ms, 500). Random draws
 * come from the stream "raft/<node id>".
 *
 * Status: the KRaft controller runs on it (models/kraft), and observers
 * (brokers replaying the log) may fetch from the leader. Not yet built on
 * it: brokers that register, heartbeat and replay the log, the
 * `metadata.mode` and KRaft scenario keys, `controller:N` fault targets,
 * and these invariants in --paranoid runs (raft_check.h is ready for them).
 *
 * Not modelled: snapshots (the log is never truncated from the front),
 * observers and voter changes (KIP-853), pre-vote (KIP-996), graceful
 * shutdown's EndQuorumEpoch from a leader that stops (a resigned leader sends
 * it).
 */
#ifndef RAFT_NODE_H
#define RAFT_NODE_H

#include <glib.h>

#include "plog.h"
#include "raft_proto.h"
#include "sim_world.h"

typedef struct RaftNode RaftNode;

/* The key of the record a new leader appends first (Kafka's LeaderChange
 * control record); its value is the leader's id. Keys from 2 up are the
 * layer above's (metadata record types). */
#define RAFT_RECORD_KEY_LEADER_CHANGE G_GUINT64_CONSTANT(1)

typedef enum {
    RAFT_ROLE_DOWN = 0, /* the process is not running */
    RAFT_ROLE_UNATTACHED,
    RAFT_ROLE_VOTED,
    RAFT_ROLE_CANDIDATE,
    RAFT_ROLE_LEADER,
    RAFT_ROLE_FOLLOWER,
    RAFT_ROLE_RESIGNED,
} RaftRole;

typedef struct {
    gint64 election_timeout_ns;     /* controller.quorum.election.timeout.ms: 1000 */
    gint64 election_backoff_max_ns; /* controller.quorum.election.backoff.max.ms: 1000 */
    gint64 fetch_timeout_ns;        /* controller.quorum.fetch.timeout.ms: 2000 */
    gint64 request_timeout_ns;      /* controller.quorum.request.timeout.ms: 2000 */
    gint64 retry_backoff_ns;        /* controller.quorum.retry.backoff.ms: 20 */
    gint64 fetch_max_wait_ns;       /* replica.fetch.wait.max.ms: 500 */
    /* KafkaRaftClient.RETRY_BACKOFF_BASE_MS: the unit of the election backoff. */
    gint64 election_backoff_base_ns;
    /* metadata.log.segment.bytes: 1 GiB */
    gint64 segment_bytes;
} RaftConfig;

/* One voter: its node.id and the simulated node it runs on. */
typedef struct {
    gint32 id;
    SimNodeId node;
} RaftVoter;

/* What a layer above (the KRaft controller) hears from its node. Each
 * callback may be NULL. */
typedef struct {
    /* The high watermark advanced to `high_watermark`. */
    void (*committed)(void *user_data, RaftNode *node, gint64 high_watermark);
    /* The node's epoch or the leader it knows changed; `leader_id` may be
     * RAFT_NO_NODE. */
    void (*leader_changed)(void *user_data, RaftNode *node, gint32 epoch, gint32 leader_id);
    /* A message that is not the quorum's (the controller's RPCs from
     * brokers), from any node; the callee owns it. Without this callback
     * such messages are dropped. */
    void (*message)(void *user_data, RaftNode *node, SimNodeId from, SimMsg *msg);
    /* The process crashed: everything the layer above keeps in memory is
     * lost with it (called before the node's state is freed). */
    void (*crashed)(void *user_data, RaftNode *node);
} RaftListener;

/* Kafka's defaults, above. */
void raft_config_init(RaftConfig *cfg);

/* Adds a node named `name` running voter `id` to `world` (it does nothing
 * until raft_node_start). `cfg` is copied (NULL: defaults). The object lives
 * until raft_node_free, across crashes and restarts. (transfer full) */
RaftNode *raft_node_new(SimWorld *world, const char *name, gint32 id, const RaftConfig *cfg);
/* The same voter running inside another model's process (Kafka's combined
 * mode, process.roles = broker,controller: one JVM runs the broker and the
 * controller around one KafkaRaftClient, SharedServer). No node is added:
 * the voter uses `host`'s network endpoint, timers and disk (its metadata
 * log beside the host's logs), so a crash, pause, power loss or partition
 * of the host is the voter's too. The host model hands it, through the
 * raft_node_host_* calls below, the messages that are the quorum's and the
 * controller's requests, every disconnect, and its process's crashes and
 * restarts (the voter's restart before the host's own start, as
 * SharedServer starts the raft manager first). (transfer full) */
RaftNode *raft_node_new_hosted(SimWorld *world, SimNodeId host, gint32 id, const RaftConfig *cfg);
void raft_node_host_message(RaftNode *node, SimNodeId from, SimMsg *msg);
void raft_node_host_disconnect(RaftNode *node, SimNodeId peer);
void raft_node_host_crash(RaftNode *node);
void raft_node_host_restart(RaftNode *node);

/* Frees the object; call after sim_world_free or once the world no longer
 * runs the node's events. Accepts NULL. */
void raft_node_free(RaftNode *node);

/* The quorum (every voter, this one included, ids distinct); copied. Call
 * once, before raft_node_start. */
void raft_node_set_voters(RaftNode *node, const RaftVoter *voters, guint n_voters);
/* Opens the metadata log and the election state from the disk and arms the
 * election timer. The node must be up. */
void raft_node_start(RaftNode *node);
void raft_node_set_listener(RaftNode *node, const RaftListener *listener, void *user_data);
/* Another listener of commits and leader changes (only `committed` and
 * `leader_changed`; messages and crashes are the main listener's), called
 * after the main one: the broker role of a combined node replays the local
 * voter's log as KafkaRaftClient.register lets several listeners follow
 * one log. At most RAFT_LOCAL_LISTENERS_MAX; kept for the object's life. */
#define RAFT_LOCAL_LISTENERS_MAX 2
void raft_node_add_local_listener(RaftNode *node, const RaftListener *listener, void *user_data);

/* The leader appends records with its epoch as one batch; returns the base
 * offset, or -1 when the node is not the leader (or the disk refused). */
gint64 raft_node_append(RaftNode *node, const PlogRecord *records, guint n_records);

SimNodeId raft_node_sim_node(const RaftNode *node);
SimWorld *raft_node_world(const RaftNode *node);
gint32 raft_node_id(const RaftNode *node);
RaftRole raft_node_role(const RaftNode *node);
const char *raft_role_name(RaftRole role);
/* The node's epoch, leader, vote and high watermark (-1 when unknown);
 * all -1 / RAFT_NO_NODE while it is down. */
gint32 raft_node_epoch(const RaftNode *node);
gint32 raft_node_leader_id(const RaftNode *node);
gint32 raft_node_voted_id(const RaftNode *node);
gint64 raft_node_high_watermark(const RaftNode *node);
/* The metadata log, NULL while down. (transfer none) */
Plog *raft_node_log(const RaftNode *node);

/* Asserts the invariants listed in raft_node.c. */
void raft_node_check_invariants(const RaftNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RaftNode, raft_node_free)

#endif
