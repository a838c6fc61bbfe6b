/*
 * raft_proto: the quorum's messages (see raft_proto.h): construction, sizes,
 * and the free and clone functions the network calls.
 */
#include "raft_proto.h"

#include "sim_assert.h"

/* Kafka's request and response headers and the fixed fields of these
 * small messages come to a few dozen bytes. */
#define RAFT_MSG_HEADER_BYTES 48

static void
raft_msg_free(SimMsg *base)
{
    RaftMsg *msg = (RaftMsg *)base;
    if (msg->batches != NULL)
        g_ptr_array_unref(msg->batches);
    g_free(msg);
}

static SimMsg *
raft_msg_clone(const SimMsg *base)
{
    const RaftMsg *msg = (const RaftMsg *)base;
    RaftMsg *copy = g_memdup2(msg, sizeof *msg);
    if (msg->batches != NULL) {
        copy->batches = plog_batch_array_new();
        for (guint i = 0; i < msg->batches->len; i++)
            g_ptr_array_add(copy->batches, plog_batch_copy(g_ptr_array_index(msg->batches, i)));
    }
    return &copy->base;
}

RaftMsg *
raft_msg_new(RaftMsgType type, gint32 correlation_id)
{
    KSIM_ASSERT(type >= RAFT_MSG_FIRST && type <= RAFT_MSG_LAST);
    RaftMsg *msg = g_new0(RaftMsg, 1);
    msg->base.type = type;
    msg->base.free_fn = raft_msg_free;
    msg->base.clone_fn = raft_msg_clone;
    msg->base.size_of = sizeof *msg;
    msg->correlation_id = correlation_id;
    msg->error = KAFKA_ERROR_NONE;
    msg->node_id = RAFT_NO_NODE;
    msg->leader_id = RAFT_NO_NODE;
    msg->last_epoch = -1;
    msg->offset = -1;
    msg->high_watermark = -1;
    msg->diverging_epoch = -1;
    msg->diverging_end_offset = -1;
    msg->snapshot_end_offset = -1;
    msg->snapshot_epoch = -1;
    msg->position = -1;
    msg->snapshot_size = -1;
    msg->snapshot_timestamp_ms = -1;
    return msg;
}

void
raft_msg_finish(RaftMsg *msg)
{
    gint64 size = RAFT_MSG_HEADER_BYTES + 4 * (gint64)msg->n_successors;
    if (msg->batches != NULL) {
        for (guint i = 0; i < msg->batches->len; i++)
            size += plog_batch_size_bytes(g_ptr_array_index(msg->batches, i));
    }
    if (msg->chunk_bytes > 0)
        size += msg->chunk_bytes;
    KSIM_ASSERT(size <= G_MAXUINT32);
    msg->base.size_bytes = (guint32)size;
}

const char *
raft_msg_type_name(guint type)
{
    switch (type) {
    case RAFT_MSG_VOTE_REQUEST:
        return "Vote";
    case RAFT_MSG_VOTE_RESPONSE:
        return "VoteResponse";
    case RAFT_MSG_BEGIN_EPOCH_REQUEST:
        return "BeginQuorumEpoch";
    case RAFT_MSG_BEGIN_EPOCH_RESPONSE:
        return "BeginQuorumEpochResponse";
    case RAFT_MSG_END_EPOCH_REQUEST:
        return "EndQuorumEpoch";
    case RAFT_MSG_END_EPOCH_RESPONSE:
        return "EndQuorumEpochResponse";
    case RAFT_MSG_FETCH_REQUEST:
        return "RaftFetch";
    case RAFT_MSG_FETCH_RESPONSE:
        return "RaftFetchResponse";
    case RAFT_MSG_FETCH_SNAPSHOT_REQUEST:
        return "FetchSnapshot";
    case RAFT_MSG_FETCH_SNAPSHOT_RESPONSE:
        return "FetchSnapshotResponse";
    default:
        return NULL;
    }
}
