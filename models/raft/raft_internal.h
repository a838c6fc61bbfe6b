/*
 * raft_internal: what raft_node.c (state, lifecycle, transitions, the poll
 * loop) and raft_rpc.c (the request and response handlers) share. Not for
 * other modules.
 */
#ifndef RAFT_INTERNAL_H
#define RAFT_INTERNAL_H

#include "raft_node.h"

#include "sim_rng.h"

/* The metadata log's partition, as Kafka names it. */
#define RAFT_TOPIC "__cluster_metadata"
#define RAFT_NEVER G_MAXINT64
/* Kafka's MAX_FETCH_SIZE_BYTES (= MAX_BATCH_SIZE_BYTES, 8 MiB). */
#define RAFT_FETCH_MAX_BYTES (8 * 1024 * 1024)
/* Bounds the parked fetches and the outbox: a handful per voter, and one
 * per observer (a broker replaying the log). */
#define RAFT_OBSERVERS_MAX 1024
#define RAFT_PARKED_MAX (4 * RAFT_VOTERS_MAX + RAFT_OBSERVERS_MAX)
#define RAFT_OUTBOX_MAX 4096u

/* One request in flight to a voter (Kafka's RequestManager keeps one per
 * destination), and when the next may be sent after a failure. */
typedef struct {
    gboolean in_flight;
    guint32 type; /* the request's RaftMsgType */
    gint32 correlation_id;
    gint64 deadline_ns;    /* request timeout */
    gint64 retry_after_ns; /* backoff after a failure; 0 when none */
} RaftPending;

/* A fetch the leader holds until its log grows past the fetch offset or
 * its max wait ends (Kafka's fetchPurgatory). */
typedef struct {
    SimNodeId from;
    RaftMsg *request; /* owned */
    gint64 deadline_ns;
} RaftParked;

/* A message waiting for the election state it depends on to be durable. */
typedef struct {
    SimNodeId to;
    RaftMsg *msg; /* owned */
    guint64 state_gen;
} RaftOutgoing;

/* A snapshot being written, and whether it was fetched from the leader. */
typedef struct {
    RaftSnapshot snapshot;
    gboolean fetched;
} RaftSnapshotWrite;

/* Everything a crash loses. */
typedef struct {
    Plog *log;
    RaftRole role;
    gint32 epoch;
    gint32 voted_id;
    gint32 leader_id;
    gint64 high_watermark; /* -1: unknown */

    /* Election-state writes: generation of the last started, of the last
     * durable; messages in the outbox wait for theirs. */
    guint64 state_gen_written;
    guint64 state_gen_durable;
    GQueue *outbox; /* RaftOutgoing * */
    GPtrArray *syncs; /* RaftSync * (raft_node.c) and RaftSnapshotSync * (raft_snapshot.c):
                       * election-state and snapshot fsyncs in flight */

    /* Deadlines in virtual ns, RAFT_NEVER when unset; one wake timer at the
     * earliest (raft_poll). */
    gint64 election_deadline_ns;     /* UNATTACHED, VOTED, CANDIDATE, RESIGNED */
    gint64 fetch_deadline_ns;        /* FOLLOWER: fetch timeout */
    gint64 backoff_deadline_ns;      /* CANDIDATE: backing off after a lost election */
    gint64 check_quorum_deadline_ns; /* LEADER */
    gint64 begin_epoch_deadline_ns;  /* LEADER: resend BeginQuorumEpoch */
    SimTimerId wake;
    gint64 wake_at_ns;

    /* CANDIDATE: votes by voter index; retries counts elections in a row. */
    guint32 granted;
    guint32 rejected;
    guint retries;

    /* LEADER: where its epoch starts, each voter's end offset (-1 until it
     * fetches), who acknowledged the epoch and who fetched in this
     * check-quorum interval. */
    gint64 epoch_start_offset;
    gint64 end_offset[RAFT_VOTERS_MAX];
    guint32 acknowledged;
    guint32 fetched;
    GPtrArray *parked; /* RaftParked * */

    /* RESIGNED: the successors its EndQuorumEpoch names, best first. */
    guint n_successors;
    gint32 successors[RAFT_VOTERS_MAX];

    RaftPending pending[RAFT_VOTERS_MAX];
    gint32 next_correlation_id;
    /* FOLLOWER: the last append is not yet flushed; no fetch until it is. */
    gboolean flush_wait;

    /* Snapshots (raft_snapshot.c): those frozen on disk, by end offset
     * (KafkaMetadataLog.snapshots), and those being written. */
    GArray *snapshots;         /* RaftSnapshot */
    GArray *snapshots_writing; /* RaftSnapshotWrite */
    /* KafkaMetadataLog.startOffset: at least the log's first segment base,
     * raised by deleteBeforeSnapshot. */
    gint64 log_start_offset;
    /* RaftMetadataLogCleanerManager's next run; armed while the node holds
     * two snapshots or more (with fewer, maybeClean does nothing). */
    gint64 clean_deadline_ns;
    /* FOLLOWER: the snapshot the leader named, fetched with FetchSnapshot
     * (FollowerState.fetchingSnapshot); `position` bytes of it received. */
    gboolean fetching_snapshot;
    RaftSnapshot fetching;
    gint64 fetching_position;
    gboolean fetching_done; /* every byte received; being written */
    /* A write to the disk failed: the node stops (Kafka's fault handler
     * exits the process) and a crash is scheduled. */
    gboolean halted;
} RaftState;

struct RaftNode {
    SimWorld *world;
    SimNodeId node;
    gint32 id;
    RaftConfig cfg;
    RaftVoter voters[RAFT_VOTERS_MAX];
    guint n_voters;
    guint self_index;
    SimRng *rng; /* the world's stream "raft/<id>" (transfer none) */
    RaftListener listener;
    void *listener_data;
    /* Further listeners of commits and leader changes (another role in a
     * hosted node's process: raft_node_add_local_listener). */
    RaftListener local_listeners[RAFT_LOCAL_LISTENERS_MAX];
    void *local_listener_data[RAFT_LOCAL_LISTENERS_MAX];
    guint n_local_listeners;
    /* Runs in another model's process (raft_node_new_hosted): that model
     * hands it its messages, disconnects, crashes and restarts. */
    gboolean hosted;
    char *state_name; /* the election state's file */
    gboolean started;
    guint64 snapshots_fetched; /* over the node's life, restarts included */
    RaftState *state; /* NULL while down */
};

/* raft_node.c */
gint raft_voter_index(const RaftNode *node, gint32 id);
gint raft_voter_index_of_node(const RaftNode *node, SimNodeId sim_node);
guint raft_majority(const RaftNode *node);
void raft_note(RaftNode *node, SimNodeId peer, guint64 a, guint64 b, const char *format, ...)
    G_GNUC_PRINTF(5, 6);
/* Sends through the outbox: at once when the election state is durable. */
void raft_send(RaftNode *node, SimNodeId to, RaftMsg *msg);
/* (last epoch, end offset) of the local log: Kafka's endOffset(). */
gint32 raft_last_epoch(const RaftNode *node);
/* ReplicatedLog.endOffsetForEpoch on the local log. */
void raft_end_offset_for_epoch(const RaftNode *node, gint32 epoch, gint32 *out_epoch,
                               gint64 *out_offset);
void raft_become_unattached(RaftNode *node, gint32 epoch);
void raft_become_voted(RaftNode *node, gint32 epoch, gint32 candidate_id);
void raft_become_follower(RaftNode *node, gint32 epoch, gint32 leader_id);
void raft_become_candidate(RaftNode *node);
void raft_become_leader(RaftNode *node);
void raft_become_resigned(RaftNode *node);
void raft_start_backoff(RaftNode *node);
gint64 raft_random_election_timeout_ns(RaftNode *node);
/* LeaderState.maybeUpdateHighWatermark; TRUE when it advanced. */
gboolean raft_leader_update_high_watermark(RaftNode *node);
/* The follower's HW from a fetch response (never backwards). */
void raft_follower_update_high_watermark(RaftNode *node, gint64 leader_high_watermark);
void raft_committed(RaftNode *node);
void raft_halt(RaftNode *node);
/* Kafka's poll loop: act on expired deadlines, send what is due, rearm. */
void raft_poll(RaftNode *node);

/* raft_snapshot.c */
void raft_snapshots_open(RaftNode *node);
/* Writes `snapshot` (.part, fsync, rename); it joins the snapshots once
 * durable. Then, for a snapshot fetched from the leader (`fetched`), the
 * log is truncated to it. FALSE when it exists or is being written. */
gboolean raft_snapshot_write(RaftNode *node, const RaftSnapshot *snapshot, gboolean fetched);
const RaftSnapshot *raft_snapshot_find(const RaftNode *node, gint64 end_offset, gint32 epoch);
const RaftSnapshot *raft_snapshot_earliest(const RaftNode *node);
const RaftSnapshot *raft_snapshot_latest(const RaftNode *node);
/* KafkaMetadataLog.truncateToLatestSnapshot; TRUE when it truncated. */
gboolean raft_snapshot_truncate_to_latest(RaftNode *node);
/* KafkaMetadataLog.maybeClean. */
gboolean raft_snapshot_clean(RaftNode *node);
/* Arms or clears the cleaner's deadline by the snapshots held. */
void raft_snapshot_arm_cleaner(RaftNode *node);
/* The epoch of the record at `offset` (its batch's leader epoch), from the
 * leader-epoch cache, or the snapshot ending at offset + 1. */
gint32 raft_epoch_of_offset(const RaftNode *node, gint64 offset);

/* raft_rpc.c */
void raft_rpc_message(RaftNode *node, SimNodeId from, RaftMsg *msg);
void raft_rpc_disconnect(RaftNode *node, SimNodeId peer);
/* Sends what the role wants sent now (votes, fetches, BeginQuorumEpoch,
 * EndQuorumEpoch) and completes parked fetches that are due. */
void raft_rpc_send_due(RaftNode *node);
/* The leader's log grew: complete parked fetches below its end. */
void raft_rpc_complete_parked(RaftNode *node, gboolean all);
void raft_parked_free(RaftParked *parked);

#endif
