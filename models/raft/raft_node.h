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
 * (brokers replaying the log, models/broker/broker_kraft.c) fetch from the
 * leader; --paranoid runs check raft_check.h's invariants. In combined mode
 * (process.roles = broker,controller) a voter is hosted by a broker's node
 * (raft_node_new_hosted): it shares the broker's process, timers and disk,
 * and its callbacks find their voter through what they carry, never
 * through the node's model object, which is the broker's.
 *
 * Snapshots (KIP-630, raft_snapshot.c): the layer above writes snapshots at
 * committed offsets (raft_node_create_snapshot); they are files beside the
 * log's segments, fsynced before they count. Every clean_interval_ns
 * (KafkaMetadataLog.maybeClean) the oldest snapshots and the log before the
 * next are deleted past metadata.max.retention.bytes / .ms, never past the
 * latest snapshot. A fetch below the leader's log start offset (or from an
 * empty log while a snapshot exists) is answered with the latest snapshot's
 * id; the follower (or observer) fetches it with FetchSnapshot, in chunks of
 * at most RAFT_FETCH_MAX_BYTES, and truncates its log fully to it
 * (truncateToLatestSnapshot). The log start offset raised by cleaning is
 * kept in memory, as Kafka's metadata log keeps it.
 *
 * Not modelled: voter changes (KIP-853), pre-vote (KIP-996), graceful
 * shutdown's EndQuorumEpoch from a leader that stops (a resigned leader sends
 * it), metadata.log.segment.ms, the delay before a deleted snapshot's file
 * goes (Kafka renames it .deleted and deletes it a minute later).
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
    /* metadata.max.retention.bytes (100 MiB) and metadata.max.retention.ms
     * (7 days): KafkaMetadataLog.maybeClean deletes the oldest snapshots,
     * and the log before the next one, while the log and the snapshots
     * together exceed the first or a snapshot is older than the second;
     * -1 turns either off. */
    gint64 retention_bytes;
    gint64 retention_ms;
    /* KafkaRaftClient's RaftMetadataLogCleanerManager runs maybeClean every
     * 60 s (not a key in Kafka). */
    gint64 clean_interval_ns;
} RaftConfig;

/* A snapshot of the state the log's records up to end_offset build (Kafka's
 * OffsetAndEpoch snapshot id: the end offset and the epoch of the record
 * before it). Its content is the layer above's: `payload` names it (the
 * controller's image, kept once for the whole run as the records are, see
 * kraft_records.h), `size_bytes` is its logical size (what retention counts
 * and FetchSnapshot carries), `timestamp_ms` its lastContainedLogTimestamp
 * (what metadata.max.retention.ms ages). */
typedef struct {
    gint64 end_offset;
    gint32 epoch;
    guint64 payload;
    gint64 size_bytes;
    gint64 timestamp_ms;
} RaftSnapshot;

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

/* The snapshot files of the metadata log, as Kafka's SnapshotPath names
 * them: `__cluster_metadata-0/<end offset, 20 digits>-<epoch, 10
 * digits>.checkpoint`, written as `.checkpoint.part`, fsynced and renamed
 * (FileRawSnapshotWriter.freeze); a file that lost its snapshot to retention
 * is deleted (Kafka renames it `.deleted` and deletes it later). */
#define RAFT_SNAPSHOT_SUFFIX ".checkpoint"
#define RAFT_SNAPSHOT_PARTIAL_SUFFIX ".checkpoint.part"

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

/* KafkaRaftClient.createSnapshot: starts writing a snapshot whose state is
 * the log's up to `end_offset` (at most the high watermark, at least the log
 * start offset), its epoch the one of the record before it. It is visible
 * (raft_node_latest_snapshot) once its file is fsynced and renamed. FALSE,
 * and nothing written, when the node is down or halted, `end_offset` is
 * outside [log start, HW], or the snapshot exists or is being written. */
gboolean raft_node_create_snapshot(RaftNode *node, gint64 end_offset, guint64 payload,
                                   gint64 size_bytes, gint64 timestamp_ms);
/* The snapshots the node holds, oldest first (NULL / 0 while down).
 * (transfer none) */
guint raft_node_snapshot_count(const RaftNode *node);
const RaftSnapshot *raft_node_snapshot(const RaftNode *node, guint i);
const RaftSnapshot *raft_node_latest_snapshot(const RaftNode *node);
/* KafkaMetadataLog.startOffset: the log's first offset, raised to a
 * snapshot's end when the log before it is deleted (kept in memory: after a
 * restart it is the first segment's base offset again, as Kafka's). -1 while
 * down. */
gint64 raft_node_log_start_offset(const RaftNode *node);
/* How many snapshots the node has fetched from a leader (FetchSnapshot)
 * over its life, restarts included. */
guint64 raft_node_snapshots_fetched(const RaftNode *node);
/* Runs KafkaMetadataLog.maybeClean now (tests; the node runs it every
 * clean_interval_ns by itself). TRUE when it deleted something. */
gboolean raft_node_clean(RaftNode *node);

/* Asserts the invariants listed in raft_node.c. */
void raft_node_check_invariants(const RaftNode *node);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(RaftNode, raft_node_free)

#endif
