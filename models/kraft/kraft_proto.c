/*
 * kraft_proto: construction and names of the broker-to-controller messages
 * (kraft_proto.h).
 */
#include "kraft_proto.h"

#include "sim_assert.h"

/* A request or response header and these few fixed fields. */
#define KRAFT_MSG_BYTES 64

KraftMsg *
kraft_msg_new(KraftMsgType type, gint32 correlation_id)
{
    KSIM_ASSERT(type >= KRAFT_MSG_FIRST && type <= KRAFT_MSG_LAST);
    KraftMsg *msg = g_new0(KraftMsg, 1);
    msg->base.type = type;
    msg->base.size_of = sizeof *msg;
    msg->base.size_bytes = KRAFT_MSG_BYTES;
    msg->correlation_id = correlation_id;
    msg->controller_id = -1;
    msg->broker_id = -1;
    msg->broker_epoch = -1;
    msg->previous_broker_epoch = -1;
    msg->metadata_offset = -1;
    msg->leader = -1;
    msg->leader_epoch = -1;
    msg->partition_epoch = -1;
    msg->log_end_offset = -1;
    msg->last_written_epoch = -1;
    return msg;
}

const char *
kraft_msg_type_name(guint type)
{
    switch (type) {
    case KRAFT_MSG_REGISTRATION_REQUEST:
        return "BrokerRegistration";
    case KRAFT_MSG_REGISTRATION_RESPONSE:
        return "BrokerRegistrationResponse";
    case KRAFT_MSG_HEARTBEAT_REQUEST:
        return "BrokerHeartbeat";
    case KRAFT_MSG_HEARTBEAT_RESPONSE:
        return "BrokerHeartbeatResponse";
    case KRAFT_MSG_ALTER_PARTITION_REQUEST:
        return "AlterPartition";
    case KRAFT_MSG_ALTER_PARTITION_RESPONSE:
        return "AlterPartitionResponse";
    case KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST:
        return "AllocateProducerIds";
    case KRAFT_MSG_ALLOCATE_PRODUCER_IDS_RESPONSE:
        return "AllocateProducerIdsResponse";
    case KRAFT_MSG_CREATE_TOPICS_REQUEST:
        return "CreateTopics";
    case KRAFT_MSG_CREATE_TOPICS_RESPONSE:
        return "CreateTopicsResponse";
    case KRAFT_MSG_GET_REPLICA_LOG_INFO_REQUEST:
        return "GetReplicaLogInfo";
    case KRAFT_MSG_GET_REPLICA_LOG_INFO_RESPONSE:
        return "GetReplicaLogInfoResponse";
    default:
        return NULL;
    }
}
