/*
 * raft_rpc: the quorum's request and response handlers (see raft_node.h),
 * as KafkaRaftClient's handleVoteRequest, handleVoteResponse,
 * handleBeginQuorumEpochRequest, handleEndQuorumEpochRequest,
 * handleFetchRequest / tryCompleteFetchRequest, handleFetchResponse and
 * maybeHandleCommonResponse, handleFetchSnapshotRequest and
 * handleFetchSnapshotResponse (Apache Kafka 4.0, trunk 1eb7644), and the
 * sending side of its poll loop (maybeSendVoteRequests,
 * maybeSendFetchOrFetchSnapshot, maybeSendBeginQuorumEpochRequests,
 * maybeSendEndQuorumEpochRequests).
 */
#include "raft_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

/* ---- sending ---- */

static RaftMsg *
response_new(RaftNode *node, RaftMsgType type, const RaftMsg *request, KafkaError error)
{
    RaftState *state = node->state;
    RaftMsg *msg = raft_msg_new(type, request->correlation_id);
    msg->error = (gint16)error;
    msg->epoch = state->epoch;
    msg->node_id = node->id;
    msg->leader_id = state->leader_id;
    return msg;
}

static void
request_send(RaftNode *node, guint index, RaftMsg *msg)
{
    RaftState *state = node->state;
    RaftPending *p = &state->pending[index];
    KSIM_ASSERT(!p->in_flight);
    p->in_flight = TRUE;
    p->type = msg->base.type;
    p->correlation_id = msg->correlation_id;
    p->deadline_ns = sim_now_ns(node->world) + node->cfg.request_timeout_ns;
    p->retry_after_ns = 0;
    raft_send(node, node->voters[index].node, msg);
}

static RaftMsg *
request_new(RaftNode *node, RaftMsgType type)
{
    RaftState *state = node->state;
    RaftMsg *msg = raft_msg_new(type, ++state->next_correlation_id);
    msg->epoch = state->epoch;
    msg->node_id = node->id;
    return msg;
}

/* Takes the pending request a response answers; FALSE when it answers none
 * (a stale response, or one to a request the role has forgotten). */
static gboolean
response_match(RaftNode *node, SimNodeId from, const RaftMsg *msg, guint32 request_type)
{
    gint index = raft_voter_index_of_node(node, from);
    RaftPending *p = &node->state->pending[index];
    if (!p->in_flight || p->type != request_type || p->correlation_id != msg->correlation_id)
        return FALSE;
    p->in_flight = FALSE;
    return TRUE;
}

static void
request_failed(RaftNode *node, SimNodeId from)
{
    gint index = raft_voter_index_of_node(node, from);
    node->state->pending[index].retry_after_ns =
        sim_now_ns(node->world) + node->cfg.retry_backoff_ns;
}

/* ---- transitions on what others say ---- */

/* KafkaRaftClient.maybeTransition: a leader or epoch learned from a peer. */
static void
maybe_transition(RaftNode *node, gint32 leader_id, gint32 epoch)
{
    RaftState *state = node->state;
    gboolean known = leader_id != RAFT_NO_NODE && raft_voter_index(node, leader_id) >= 0;
    /* hasConsistentLeader: one leader per epoch. */
    if (epoch == state->epoch && known && state->leader_id != RAFT_NO_NODE)
        KSIM_ASSERT(state->leader_id == leader_id);
    if (epoch > state->epoch) {
        if (known && leader_id != node->id)
            raft_become_follower(node, epoch, leader_id);
        else
            raft_become_unattached(node, epoch);
    } else if (epoch == state->epoch && known && state->leader_id == RAFT_NO_NODE &&
               leader_id != node->id) {
        raft_become_follower(node, epoch, leader_id);
    }
}

/* KafkaRaftClient.maybeHandleCommonResponse: TRUE when the response needs
 * no more handling. */
static gboolean
handle_common_response(RaftNode *node, const RaftMsg *msg)
{
    RaftState *state = node->state;
    if (msg->epoch < state->epoch || msg->error == KAFKA_ERROR_UNKNOWN_LEADER_EPOCH)
        return TRUE;
    if (msg->epoch > state->epoch || msg->error == KAFKA_ERROR_FENCED_LEADER_EPOCH ||
        msg->error == KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER) {
        maybe_transition(node, msg->leader_id, msg->epoch);
        return TRUE;
    }
    if (msg->leader_id != RAFT_NO_NODE && state->leader_id == RAFT_NO_NODE &&
        msg->leader_id != node->id && raft_voter_index(node, msg->leader_id) >= 0) {
        raft_become_follower(node, msg->epoch, msg->leader_id);
        return msg->error != KAFKA_ERROR_NONE;
    }
    return FALSE;
}

/* ---- Vote ---- */

/* The states' canGrantVote. */
static gboolean
can_grant_vote(const RaftNode *node, gint32 candidate_id, gboolean log_up_to_date)
{
    const RaftState *state = node->state;
    switch (state->role) {
    case RAFT_ROLE_UNATTACHED:
        return log_up_to_date;
    case RAFT_ROLE_VOTED:
        return state->voted_id == candidate_id;
    default:
        /* A follower or resigned leader knows a leader of this epoch; a
         * candidate voted for itself; a leader is one. */
        return FALSE;
    }
}

static void
handle_vote_request(RaftNode *node, SimNodeId from, const RaftMsg *req)
{
    RaftState *state = node->state;
    if (req->offset < 0 || req->last_epoch < 0 || req->last_epoch >= req->epoch) {
        raft_send(node, from,
                  response_new(node, RAFT_MSG_VOTE_RESPONSE, req, KAFKA_ERROR_INVALID_REQUEST));
        return;
    }
    if (req->epoch < state->epoch) {
        raft_send(node, from, response_new(node, RAFT_MSG_VOTE_RESPONSE, req,
                                           KAFKA_ERROR_FENCED_LEADER_EPOCH));
        return;
    }
    if (req->epoch > state->epoch)
        raft_become_unattached(node, req->epoch);
    /* OffsetAndEpoch.compareTo: by epoch, then offset. */
    gint32 last_epoch = raft_last_epoch(node);
    gint64 end_offset = plog_log_end_offset(state->log);
    gboolean up_to_date = req->last_epoch > last_epoch ||
                          (req->last_epoch == last_epoch && req->offset >= end_offset);
    gboolean granted = can_grant_vote(node, req->node_id, up_to_date);
    if (granted && state->role == RAFT_ROLE_UNATTACHED)
        raft_become_voted(node, state->epoch, req->node_id);
    raft_note(node, from, (guint64)req->epoch, (guint64)granted,
              "raft %d: vote for %d in epoch %d %s (its log %d@%" G_GINT64_FORMAT
              ", ours %d@%" G_GINT64_FORMAT ")",
              node->id, req->node_id, req->epoch, granted ? "granted" : "rejected",
              req->last_epoch, req->offset, last_epoch, end_offset);
    RaftMsg *resp = response_new(node, RAFT_MSG_VOTE_RESPONSE, req, KAFKA_ERROR_NONE);
    resp->vote_granted = granted;
    raft_send(node, from, resp);
}

static void
handle_vote_response(RaftNode *node, SimNodeId from, const RaftMsg *msg)
{
    RaftState *state = node->state;
    if (!response_match(node, from, msg, RAFT_MSG_VOTE_REQUEST))
        return;
    if (handle_common_response(node, msg))
        return;
    if (msg->error != KAFKA_ERROR_NONE) {
        request_failed(node, from);
        return;
    }
    if (state->role != RAFT_ROLE_CANDIDATE || msg->epoch != state->epoch)
        return;
    guint32 bit = 1u << raft_voter_index_of_node(node, from);
    if (msg->vote_granted) {
        state->granted |= bit;
        state->rejected &= ~bit;
        if ((guint)__builtin_popcount(state->granted) >= raft_majority(node))
            raft_become_leader(node);
        return;
    }
    state->rejected |= bit;
    state->granted &= ~bit;
    /* CandidateState.isVoteRejected: a majority can no longer be reached;
     * back off at once rather than wait for the election timeout. */
    guint rejected = (guint)__builtin_popcount(state->rejected);
    if (rejected > node->n_voters - raft_majority(node) &&
        state->backoff_deadline_ns == RAFT_NEVER)
        raft_start_backoff(node);
}

/* ---- BeginQuorumEpoch and EndQuorumEpoch ---- */

static void
handle_begin_epoch_request(RaftNode *node, SimNodeId from, const RaftMsg *req)
{
    RaftState *state = node->state;
    if (req->epoch < state->epoch) {
        raft_send(node, from, response_new(node, RAFT_MSG_BEGIN_EPOCH_RESPONSE, req,
                                           KAFKA_ERROR_FENCED_LEADER_EPOCH));
        return;
    }
    maybe_transition(node, req->node_id, req->epoch);
    raft_send(node, from,
              response_new(node, RAFT_MSG_BEGIN_EPOCH_RESPONSE, req, KAFKA_ERROR_NONE));
}

static void
handle_begin_epoch_response(RaftNode *node, SimNodeId from, const RaftMsg *msg)
{
    RaftState *state = node->state;
    if (!response_match(node, from, msg, RAFT_MSG_BEGIN_EPOCH_REQUEST))
        return;
    if (handle_common_response(node, msg))
        return;
    if (msg->error != KAFKA_ERROR_NONE) {
        request_failed(node, from);
        return;
    }
    if (state->role == RAFT_ROLE_LEADER && msg->epoch == state->epoch)
        state->acknowledged |= 1u << raft_voter_index_of_node(node, from);
}

/* KafkaRaftClient.strictExponentialElectionBackoffMs: the preferred
 * successor stands at once, the others later, the unnamed at the maximum. */
static gint64
end_epoch_backoff_ns(const RaftNode *node, const RaftMsg *req)
{
    gint position = -1;
    for (guint i = 0; i < req->n_successors; i++) {
        if (req->successors[i] == node->id)
            position = (gint)i;
    }
    gint64 max = node->cfg.election_backoff_max_ns;
    if (position == 0)
        return 0;
    if (position < 0)
        return max;
    gint64 base = max >> (req->n_successors - 1);
    return MIN(max, base << (position - 1));
}

static void
handle_end_epoch_request(RaftNode *node, SimNodeId from, const RaftMsg *req)
{
    RaftState *state = node->state;
    if (req->epoch < state->epoch) {
        raft_send(node, from, response_new(node, RAFT_MSG_END_EPOCH_RESPONSE, req,
                                           KAFKA_ERROR_FENCED_LEADER_EPOCH));
        return;
    }
    maybe_transition(node, req->node_id, req->epoch);
    if (state->role == RAFT_ROLE_FOLLOWER && state->leader_id == req->node_id) {
        /* FollowerState.overrideFetchTimeout. */
        state->fetch_deadline_ns = sim_now_ns(node->world) + end_epoch_backoff_ns(node, req);
    }
    raft_send(node, from, response_new(node, RAFT_MSG_END_EPOCH_RESPONSE, req, KAFKA_ERROR_NONE));
}

static void
handle_end_epoch_response(RaftNode *node, SimNodeId from, const RaftMsg *msg)
{
    RaftState *state = node->state;
    if (!response_match(node, from, msg, RAFT_MSG_END_EPOCH_REQUEST))
        return;
    if (handle_common_response(node, msg))
        return;
    if (msg->error != KAFKA_ERROR_NONE) {
        request_failed(node, from);
        return;
    }
    if (state->role == RAFT_ROLE_RESIGNED && msg->epoch == state->epoch)
        state->acknowledged |= 1u << raft_voter_index_of_node(node, from);
}

/* ---- Fetch, at the leader ---- */

void
raft_parked_free(RaftParked *parked)
{
    sim_msg_free(&parked->request->base);
    g_free(parked);
}

/* KafkaRaftClient.validateLeaderOnlyRequest. */
static KafkaError
validate_leader_only(const RaftNode *node, gint32 request_epoch)
{
    const RaftState *state = node->state;
    if (request_epoch < state->epoch)
        return KAFKA_ERROR_FENCED_LEADER_EPOCH;
    if (request_epoch > state->epoch)
        return KAFKA_ERROR_UNKNOWN_LEADER_EPOCH;
    if (state->role != RAFT_ROLE_LEADER)
        return KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER;
    return KAFKA_ERROR_NONE;
}

/* LeaderState.updateCheckQuorumForFollowingVoter: a majority fetching
 * within the interval restarts it. */
static void
note_voter_fetched(RaftNode *node, guint index)
{
    RaftState *state = node->state;
    state->fetched |= 1u << index;
    state->acknowledged |= 1u << index;
    guint needed = raft_majority(node) - 1; /* the leader counts itself */
    if ((guint)__builtin_popcount(state->fetched) >= needed) {
        state->fetched = 0;
        state->check_quorum_deadline_ns =
            sim_now_ns(node->world) + node->cfg.fetch_timeout_ns * 3 / 2;
    }
}

/* The snapshot a fetch is sent to instead of the log, or NULL:
 * KafkaRaftClient.tryCompleteFetchRequest sends the latest snapshot to a
 * fetcher with an empty log, and ReplicatedLog.validateOffsetAndEpoch to one
 * below the log start offset, at it with another epoch than the oldest
 * snapshot's, or with an older epoch than that. */
static const RaftSnapshot *
fetch_snapshot_id(const RaftNode *node, const RaftMsg *req)
{
    const RaftState *state = node->state;
    const RaftSnapshot *latest = raft_snapshot_latest(node);
    if (latest == NULL)
        return NULL;
    if (req->offset == 0)
        return latest;
    const RaftSnapshot *earliest = raft_snapshot_earliest(node);
    gint64 start = state->log_start_offset;
    if (req->offset < start || (req->offset == start && req->last_epoch != earliest->epoch) ||
        req->last_epoch < earliest->epoch)
        return latest;
    return NULL;
}

/* KafkaRaftClient.tryCompleteFetchRequest with ReplicatedLog's
 * validateOffsetAndEpoch. */
static RaftMsg *
try_complete_fetch(RaftNode *node, SimNodeId from, const RaftMsg *req)
{
    RaftState *state = node->state;
    KafkaError error = validate_leader_only(node, req->epoch);
    RaftMsg *resp = response_new(node, RAFT_MSG_FETCH_RESPONSE, req, error);
    if (error != KAFKA_ERROR_NONE)
        return resp;
    /* An observer (a broker replaying the metadata log) fetches like a
     * follower, but neither its end offset nor its fetches count: Kafka's
     * LeaderState keeps observers apart from voters. */
    gint index = raft_voter_index_of_node(node, from);
    if (index >= 0)
        note_voter_fetched(node, (guint)index);
    Plog *log = state->log;
    gboolean valid = FALSE;
    const RaftSnapshot *snapshot = fetch_snapshot_id(node, req);
    if (snapshot != NULL) {
        resp->snapshot_end_offset = snapshot->end_offset;
        resp->snapshot_epoch = snapshot->epoch;
    } else if (req->offset == 0 && state->log_start_offset == 0) {
        valid = TRUE;
    } else {
        gint32 epoch;
        gint64 end_offset;
        raft_end_offset_for_epoch(node, req->last_epoch, &epoch, &end_offset);
        valid = epoch == req->last_epoch && end_offset >= req->offset;
        if (!valid) {
            resp->diverging_epoch = epoch;
            resp->diverging_end_offset = end_offset;
        }
    }
    if (valid) {
        /* LeaderState.updateReplicaState: the fetch offset is the
         * follower's end offset. */
        if (index >= 0) {
            state->end_offset[index] = req->offset;
            raft_leader_update_high_watermark(node);
        }
        if (req->offset < plog_log_end_offset(log)) {
            resp->batches = plog_batch_array_new();
            PlogReadStatus status = plog_read(log, req->offset, RAFT_FETCH_MAX_BYTES, resp->batches);
            KSIM_ASSERT(status == PLOG_READ_OK);
        }
    }
    resp->high_watermark = state->high_watermark;
    return resp;
}

static gboolean
fetch_response_is_empty(const RaftMsg *resp)
{
    return resp->error == KAFKA_ERROR_NONE && resp->diverging_epoch < 0 &&
           resp->snapshot_end_offset < 0 &&
           (resp->batches == NULL || resp->batches->len == 0);
}

static void
handle_fetch_request(RaftNode *node, SimNodeId from, RaftMsg *req)
{
    RaftState *state = node->state;
    RaftMsg *resp = try_complete_fetch(node, from, req);
    if (!fetch_response_is_empty(resp) || req->max_wait_ns == 0 ||
        state->parked->len >= RAFT_PARKED_MAX) {
        raft_send(node, from, resp);
        sim_msg_free(&req->base);
        return;
    }
    sim_msg_free(&resp->base);
    /* One parked fetch per follower: a newer one replaces it. */
    for (guint i = 0; i < state->parked->len; i++) {
        RaftParked *old = g_ptr_array_index(state->parked, i);
        if (old->from == from) {
            g_ptr_array_remove_index(state->parked, i);
            break;
        }
    }
    RaftParked *parked = g_new0(RaftParked, 1);
    parked->from = from;
    parked->request = req;
    parked->deadline_ns = sim_now_ns(node->world) + req->max_wait_ns;
    g_ptr_array_add(state->parked, parked);
}

void
raft_rpc_complete_parked(RaftNode *node, gboolean all)
{
    RaftState *state = node->state;
    gint64 now = sim_now_ns(node->world);
    gint64 leo = plog_log_end_offset(state->log);
    guint i = 0;
    while (i < state->parked->len) {
        RaftParked *parked = g_ptr_array_index(state->parked, i);
        if (!all && parked->request->offset >= leo && parked->deadline_ns > now) {
            i++;
            continue;
        }
        g_ptr_array_steal_index(state->parked, i);
        /* ThresholdPurgatory completes it; tryCompleteFetchRequest runs again
         * (a node no longer leading answers NOT_LEADER_OR_FOLLOWER). */
        gboolean leading = state->role == RAFT_ROLE_LEADER;
        RaftMsg *resp = leading ? try_complete_fetch(node, parked->from, parked->request)
                                : response_new(node, RAFT_MSG_FETCH_RESPONSE, parked->request,
                                               KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER);
        raft_send(node, parked->from, resp);
        raft_parked_free(parked);
    }
}

/* ---- Fetch, at the follower ---- */

/* ReplicatedLog.truncateToEndOffset. */
static void
truncate_to_end_offset(RaftNode *node, gint32 epoch, gint64 end_offset)
{
    RaftState *state = node->state;
    gint64 offset;
    if (epoch == 0) {
        offset = MIN(end_offset, plog_log_end_offset(state->log));
    } else {
        gint32 local_epoch;
        gint64 local_offset;
        raft_end_offset_for_epoch(node, epoch, &local_epoch, &local_offset);
        offset = local_epoch == epoch ? MIN(local_offset, end_offset) : local_offset;
    }
    /* "The leader requested truncation ... below the current high
     * watermark" is fatal in Kafka: committed data never moves. */
    KSIM_ASSERT(offset >= state->high_watermark);
    gint64 old_leo = plog_log_end_offset(state->log);
    gint64 leo = plog_truncate_to(state->log, offset);
    state->log_start_offset = CLAMP(state->log_start_offset, plog_log_start_offset(state->log), leo);
    raft_note(node, SIM_NODE_NONE, (guint64)old_leo, (guint64)leo,
              "raft %d: truncated from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT
              " (leader's epoch %d ends at %" G_GINT64_FORMAT ")",
              node->id, old_leo, leo, epoch, end_offset);
}

/* KafkaRaftClient.appendAsFollower: batches the log already holds are
 * skipped; one that straddles the end replaces the local tail from its
 * base. */
static void
append_as_follower(RaftNode *node, GPtrArray *batches)
{
    RaftState *state = node->state;
    gint64 now_ms = sim_node_wall_ms(node->world, node->node);
    for (guint i = 0; i < batches->len; i++) {
        PlogBatch *batch = g_ptr_array_index(batches, i);
        gint64 leo = plog_log_end_offset(state->log);
        if (plog_batch_last_offset(batch) < leo)
            continue;
        if (batch->base_offset < leo) {
            KSIM_ASSERT(batch->base_offset >= state->high_watermark);
            plog_truncate_to(state->log, batch->base_offset);
            state->log_start_offset =
                CLAMP(state->log_start_offset, plog_log_start_offset(state->log),
                      plog_log_end_offset(state->log));
        }
        if (batch->base_offset != plog_log_end_offset(state->log))
            break;
        SimDiskStatus status = SIM_DISK_OK;
        if (plog_append_as_follower(state->log, batch, now_ms, &status) < 0) {
            raft_halt(node);
            return;
        }
    }
    plog_flush(state->log, plog_log_end_offset(state->log));
}

static void
handle_fetch_response(RaftNode *node, SimNodeId from, RaftMsg *msg)
{
    RaftState *state = node->state;
    if (!response_match(node, from, msg, RAFT_MSG_FETCH_REQUEST))
        return;
    if (handle_common_response(node, msg))
        return;
    if (state->role != RAFT_ROLE_FOLLOWER ||
        node->voters[raft_voter_index(node, state->leader_id)].node != from)
        return;
    if (msg->error != KAFKA_ERROR_NONE) {
        request_failed(node, from);
        return;
    }
    if (msg->diverging_epoch >= 0) {
        truncate_to_end_offset(node, msg->diverging_epoch, msg->diverging_end_offset);
    } else if (msg->snapshot_end_offset >= 0 || msg->snapshot_epoch >= 0) {
        /* The leader asks for a snapshot: createNewSnapshotUnchecked, none
         * when it is already stored. */
        if (msg->snapshot_end_offset >= 0 && msg->snapshot_epoch >= 0 &&
            raft_snapshot_find(node, msg->snapshot_end_offset, msg->snapshot_epoch) == NULL) {
            state->fetching_snapshot = TRUE;
            state->fetching_done = FALSE;
            state->fetching = (RaftSnapshot){msg->snapshot_end_offset, msg->snapshot_epoch, 0,
                                             -1, -1};
            state->fetching_position = 0;
            raft_note(node, from, (guint64)msg->snapshot_end_offset, (guint64)msg->snapshot_epoch,
                      "raft %d: fetching snapshot %" G_GINT64_FORMAT "-%d from leader %d",
                      node->id, msg->snapshot_end_offset, msg->snapshot_epoch, state->leader_id);
        }
        state->fetch_deadline_ns = sim_now_ns(node->world) + node->cfg.fetch_timeout_ns;
        return;
    } else if (msg->batches != NULL && msg->batches->len > 0) {
        append_as_follower(node, msg->batches);
        if (state->halted)
            return;
    }
    raft_follower_update_high_watermark(node, msg->high_watermark);
    /* FollowerState.resetFetchTimeout. */
    state->fetch_deadline_ns = sim_now_ns(node->world) + node->cfg.fetch_timeout_ns;
}

/* ---- FetchSnapshot ---- */

/* KafkaRaftClient.handleFetchSnapshotRequest: a chunk of the snapshot from
 * `position`, at most RAFT_FETCH_MAX_BYTES (Kafka's maxBytes). */
static void
handle_fetch_snapshot_request(RaftNode *node, SimNodeId from, const RaftMsg *req)
{
    KafkaError error = validate_leader_only(node, req->epoch);
    RaftMsg *resp = response_new(node, RAFT_MSG_FETCH_SNAPSHOT_RESPONSE, req, error);
    resp->snapshot_end_offset = req->snapshot_end_offset;
    resp->snapshot_epoch = req->snapshot_epoch;
    if (error != KAFKA_ERROR_NONE) {
        raft_send(node, from, resp);
        return;
    }
    const RaftSnapshot *snapshot =
        raft_snapshot_find(node, req->snapshot_end_offset, req->snapshot_epoch);
    if (snapshot == NULL) {
        resp->error = KAFKA_ERROR_SNAPSHOT_NOT_FOUND;
        raft_send(node, from, resp);
        return;
    }
    if (req->position < 0 || req->position >= snapshot->size_bytes) {
        resp->error = KAFKA_ERROR_POSITION_OUT_OF_RANGE;
        raft_send(node, from, resp);
        return;
    }
    gint index = raft_voter_index_of_node(node, from);
    if (index >= 0)
        note_voter_fetched(node, (guint)index);
    resp->snapshot_size = snapshot->size_bytes;
    resp->position = req->position;
    resp->chunk_bytes = MIN(snapshot->size_bytes - req->position, (gint64)RAFT_FETCH_MAX_BYTES);
    resp->snapshot_payload = snapshot->payload;
    resp->snapshot_timestamp_ms = snapshot->timestamp_ms;
    raft_send(node, from, resp);
}

/* KafkaRaftClient.handleFetchSnapshotResponse. */
static void
handle_fetch_snapshot_response(RaftNode *node, SimNodeId from, const RaftMsg *msg)
{
    RaftState *state = node->state;
    if (!response_match(node, from, msg, RAFT_MSG_FETCH_SNAPSHOT_REQUEST))
        return;
    if (handle_common_response(node, msg))
        return;
    if (state->role != RAFT_ROLE_FOLLOWER || !state->fetching_snapshot ||
        node->voters[raft_voter_index(node, state->leader_id)].node != from)
        return;
    if (msg->error == KAFKA_ERROR_SNAPSHOT_NOT_FOUND || msg->snapshot_end_offset < 0 ||
        msg->snapshot_epoch < 0) {
        /* The leader no longer has it: fetch again, and be told anew. */
        state->fetching_snapshot = FALSE;
        return;
    }
    if (msg->error != KAFKA_ERROR_NONE) {
        request_failed(node, from);
        return;
    }
    if (msg->snapshot_end_offset != state->fetching.end_offset ||
        msg->snapshot_epoch != state->fetching.epoch ||
        msg->position != state->fetching_position)
        return;
    state->fetching_position += msg->chunk_bytes;
    state->fetching.size_bytes = msg->snapshot_size;
    state->fetching.payload = msg->snapshot_payload;
    state->fetching.timestamp_ms = msg->snapshot_timestamp_ms;
    state->fetch_deadline_ns = sim_now_ns(node->world) + node->cfg.fetch_timeout_ns;
    if (state->fetching_position < msg->snapshot_size)
        return;
    /* Every byte is here: freeze it (raft_snapshot.c truncates the log to
     * it once it is durable). */
    state->fetching_done = TRUE;
    raft_snapshot_write(node, &state->fetching, TRUE);
}

/* ---- dispatch ---- */

void
raft_rpc_message(RaftNode *node, SimNodeId from, RaftMsg *msg)
{
    switch ((RaftMsgType)msg->base.type) {
    case RAFT_MSG_VOTE_REQUEST:
        handle_vote_request(node, from, msg);
        break;
    case RAFT_MSG_VOTE_RESPONSE:
        handle_vote_response(node, from, msg);
        break;
    case RAFT_MSG_BEGIN_EPOCH_REQUEST:
        handle_begin_epoch_request(node, from, msg);
        break;
    case RAFT_MSG_BEGIN_EPOCH_RESPONSE:
        handle_begin_epoch_response(node, from, msg);
        break;
    case RAFT_MSG_END_EPOCH_REQUEST:
        handle_end_epoch_request(node, from, msg);
        break;
    case RAFT_MSG_END_EPOCH_RESPONSE:
        handle_end_epoch_response(node, from, msg);
        break;
    case RAFT_MSG_FETCH_REQUEST:
        handle_fetch_request(node, from, msg);
        return; /* it owns the request now (parked or freed) */
    case RAFT_MSG_FETCH_RESPONSE:
        handle_fetch_response(node, from, msg);
        break;
    case RAFT_MSG_FETCH_SNAPSHOT_REQUEST:
        handle_fetch_snapshot_request(node, from, msg);
        break;
    case RAFT_MSG_FETCH_SNAPSHOT_RESPONSE:
        handle_fetch_snapshot_response(node, from, msg);
        break;
    }
    sim_msg_free(&msg->base);
}

void
raft_rpc_disconnect(RaftNode *node, SimNodeId peer)
{
    RaftState *state = node->state;
    gint index = raft_voter_index_of_node(node, peer);
    RaftPending *p = index >= 0 ? &state->pending[index] : NULL;
    if (p != NULL && p->in_flight) {
        p->in_flight = FALSE;
        p->retry_after_ns = sim_now_ns(node->world) + node->cfg.retry_backoff_ns;
    }
    /* A parked fetch's answer would go nowhere (a voter's or an
     * observer's). */
    for (guint i = 0; i < state->parked->len; i++) {
        RaftParked *parked = g_ptr_array_index(state->parked, i);
        if (parked->from == peer) {
            g_ptr_array_remove_index(state->parked, i);
            break;
        }
    }
}

/* ---- what the poll loop sends ---- */

static RaftMsg *
vote_request_new(RaftNode *node)
{
    RaftMsg *msg = request_new(node, RAFT_MSG_VOTE_REQUEST);
    msg->last_epoch = raft_last_epoch(node);
    msg->offset = plog_log_end_offset(node->state->log);
    return msg;
}

static RaftMsg *
fetch_request_new(RaftNode *node)
{
    RaftMsg *msg = request_new(node, RAFT_MSG_FETCH_REQUEST);
    msg->last_epoch = raft_last_epoch(node);
    msg->offset = plog_log_end_offset(node->state->log);
    msg->max_wait_ns = node->cfg.fetch_max_wait_ns;
    return msg;
}

static RaftMsg *
fetch_snapshot_request_new(RaftNode *node)
{
    RaftState *state = node->state;
    RaftMsg *msg = request_new(node, RAFT_MSG_FETCH_SNAPSHOT_REQUEST);
    msg->snapshot_end_offset = state->fetching.end_offset;
    msg->snapshot_epoch = state->fetching.epoch;
    msg->position = state->fetching_position;
    return msg;
}

static RaftMsg *
end_epoch_request_new(RaftNode *node)
{
    RaftState *state = node->state;
    RaftMsg *msg = request_new(node, RAFT_MSG_END_EPOCH_REQUEST);
    msg->n_successors = (guint8)state->n_successors;
    for (guint i = 0; i < state->n_successors; i++)
        msg->successors[i] = state->successors[i];
    return msg;
}

/* The request the role wants sent to voter `i` now, or NULL. */
static RaftMsg *
due_request(RaftNode *node, guint i, gint64 now)
{
    RaftState *state = node->state;
    guint32 bit = 1u << i;
    switch (state->role) {
    case RAFT_ROLE_CANDIDATE:
        if (state->backoff_deadline_ns == RAFT_NEVER && !((state->granted | state->rejected) & bit))
            return vote_request_new(node);
        return NULL;
    case RAFT_ROLE_FOLLOWER:
        /* maybeSendFetchOrFetchSnapshot: the snapshot first, while one is
         * being fetched (none while it is being written). */
        if (node->voters[i].id == state->leader_id && state->fetching_snapshot)
            return state->fetching_done ? NULL : fetch_snapshot_request_new(node);
        /* A follower fetches from a flushed log only. */
        if (node->voters[i].id == state->leader_id &&
            plog_recovery_point(state->log) >= plog_log_end_offset(state->log))
            return fetch_request_new(node);
        return NULL;
    case RAFT_ROLE_LEADER:
        if (!(state->acknowledged & bit) && now >= state->begin_epoch_deadline_ns)
            return request_new(node, RAFT_MSG_BEGIN_EPOCH_REQUEST);
        return NULL;
    case RAFT_ROLE_RESIGNED:
        if (!(state->acknowledged & bit))
            return end_epoch_request_new(node);
        return NULL;
    default:
        return NULL;
    }
}

void
raft_rpc_send_due(RaftNode *node)
{
    RaftState *state = node->state;
    gint64 now = sim_now_ns(node->world);
    gboolean begin_sent = FALSE;
    for (guint i = 0; i < node->n_voters; i++) {
        RaftPending *p = &state->pending[i];
        if (i == node->self_index || p->in_flight || now < p->retry_after_ns)
            continue;
        RaftMsg *msg = due_request(node, i, now);
        if (msg == NULL)
            continue;
        begin_sent |= msg->base.type == RAFT_MSG_BEGIN_EPOCH_REQUEST;
        request_send(node, i, msg);
    }
    /* LeaderState.resetBeginQuorumEpochTimer: fetchTimeoutMs / 2. */
    if (state->role == RAFT_ROLE_LEADER && now >= state->begin_epoch_deadline_ns)
        state->begin_epoch_deadline_ns =
            begin_sent || state->acknowledged != (1u << node->n_voters) - 1
                ? now + node->cfg.fetch_timeout_ns / 2
                : RAFT_NEVER;
    if (state->role == RAFT_ROLE_LEADER && state->parked->len > 0)
        raft_rpc_complete_parked(node, FALSE);
}
