/*
 * raft_proto: the messages between the voters of a KRaft quorum (KIP-595),
 * as Kafka's raft module exchanges them: Vote, BeginQuorumEpoch,
 * EndQuorumEpoch and Fetch, each a request and a response.
 *
 *   candidate ── VOTE(candidate epoch, id, last epoch, end offset) ──▶ voter
 *             ◀── VOTE_RESPONSE(error, leader epoch, leader id, granted)
 *   leader ── BEGIN_EPOCH(epoch, leader id) ──▶ voter ◀── BEGIN_EPOCH_RESPONSE
 *   leader ── END_EPOCH(epoch, leader id, preferred successors) ──▶ voter
 *   follower ── FETCH(current leader epoch, replica id, fetch offset,
 *                     last fetched epoch, max wait) ──▶ leader
 *            ◀── FETCH_RESPONSE(error, leader epoch, leader id, high watermark,
 *                               diverging epoch and end offset | snapshot id
 *                               | batches)
 *   follower ── FETCH_SNAPSHOT(current leader epoch, replica id, snapshot id,
 *                              position) ──▶ leader
 *            ◀── FETCH_SNAPSHOT_RESPONSE(error, leader epoch, leader id,
 *                                        snapshot id, size, position, chunk)
 *
 * One struct, RaftMsg, carries every kind; each kind uses the fields its
 * comment names. Errors are Kafka's codes (kafka_error.h).
 *
 * Ownership: a message belongs to the network in flight and to the receiver
 * after delivery. A fetch response owns its batches; its free and clone
 * functions (raft_proto.c) free and copy them for the network.
 */
#ifndef RAFT_PROTO_H
#define RAFT_PROTO_H

#include <glib.h>

#include "kafka_error.h"
#include "plog_batch.h"
#include "sim_net.h"

/* SimMsg.type of the quorum's messages. */
typedef enum {
    RAFT_MSG_VOTE_REQUEST = 300,
    RAFT_MSG_VOTE_RESPONSE,
    RAFT_MSG_BEGIN_EPOCH_REQUEST,
    RAFT_MSG_BEGIN_EPOCH_RESPONSE,
    RAFT_MSG_END_EPOCH_REQUEST,
    RAFT_MSG_END_EPOCH_RESPONSE,
    RAFT_MSG_FETCH_REQUEST,
    RAFT_MSG_FETCH_RESPONSE,
    RAFT_MSG_FETCH_SNAPSHOT_REQUEST,
    RAFT_MSG_FETCH_SNAPSHOT_RESPONSE,
    RAFT_MSG_FIRST = 300,
    RAFT_MSG_LAST = 309,
} RaftMsgType;

/* At most this many voters in a quorum (Kafka has no hard limit; real
 * quorums have 3 or 5). */
#define RAFT_VOTERS_MAX 16
/* Kafka's sentinel for "no leader" and "no vote". */
#define RAFT_NO_NODE (-1)

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint16 error;   /* responses: a KafkaError code */
    gint32 epoch;   /* VOTE: the candidate's epoch; BEGIN/END: the leader's;
                       FETCH: the fetcher's current leader epoch; responses:
                       the responder's epoch */
    gint32 node_id; /* VOTE: candidate id; BEGIN/END: leader id; FETCH: replica id;
                       responses: the responder */
    gint32 leader_id; /* responses: the leader the responder knows, or RAFT_NO_NODE */
    /* VOTE: the candidate's last epoch and end offset; FETCH: the last
     * fetched epoch and the fetch offset. */
    gint32 last_epoch;
    gint64 offset;
    gboolean vote_granted; /* VOTE_RESPONSE */
    gint64 max_wait_ns;    /* FETCH: how long the leader may park it */
    gint64 high_watermark; /* FETCH_RESPONSE: -1 when the leader has none */
    /* FETCH_RESPONSE: the leader's end offset for last_epoch when the
     * fetcher's log diverges; epoch -1 when it does not. */
    gint32 diverging_epoch;
    gint64 diverging_end_offset;
    GPtrArray *batches; /* FETCH_RESPONSE: PlogBatch * (owned), may be NULL */
    /* FETCH_RESPONSE: the leader's latest snapshot when the fetch offset is
     * below its log start (validateOffsetAndEpoch's SNAPSHOT), end offset -1
     * when none; FETCH_SNAPSHOT and its response: the snapshot asked for. */
    gint64 snapshot_end_offset;
    gint32 snapshot_epoch;
    /* FETCH_SNAPSHOT: the byte position to read from; its response: the
     * position of the chunk, the chunk's bytes and the snapshot's whole size
     * (logical sizes), and its content (the layer above's reference: a
     * snapshot's bytes are not carried, as a batch's payload is not). */
    gint64 position;
    gint64 chunk_bytes;
    gint64 snapshot_size;
    guint64 snapshot_payload;
    gint64 snapshot_timestamp_ms;
    /* END_EPOCH: the voters to prefer as the next leader, best first. */
    guint8 n_successors;
    gint32 successors[RAFT_VOTERS_MAX];
} RaftMsg;

/* A new message of `type` with every optional field at its sentinel.
 * (transfer full) */
RaftMsg *raft_msg_new(RaftMsgType type, gint32 correlation_id);
/* Sets the wire size from the fields and batches (call after filling). */
void raft_msg_finish(RaftMsg *msg);

/* "Vote", "VoteResponse", ..., NULL for a type that is not the quorum's. */
const char *raft_msg_type_name(guint type);

#endif
