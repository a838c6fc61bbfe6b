/*
 * kraft_proto: the requests KRaft brokers send the active controller
 * (KIP-631's broker lifecycle, KIP-497's AlterPartition), as Kafka's
 * BrokerRegistration, BrokerHeartbeat and AlterPartition requests carry them:
 *
 *   broker ── BROKER_REGISTRATION(broker id, incarnation id) ──▶ controller
 *          ◀── (error, broker epoch)         once the RegisterBroker record commits
 *   broker ── BROKER_HEARTBEAT(broker id, broker epoch, metadata offset,
 *                              want fence, want shut down) ──▶ controller
 *          ◀── (error, caught up, fenced, in controlled shutdown,
 *               should shut down)
 *   broker ── ALLOCATE_PRODUCER_IDS(broker id, broker epoch) ──▶ controller
 *          ◀── (error, first id, count)   once the ProducerIds record commits
 *   leader ── ALTER_PARTITION(broker id, broker epoch, topic, partition,
 *                             leader epoch, partition epoch, new ISR) ──▶ controller
 *          ◀── (error, leader, leader epoch, partition epoch, ISR)
 *   broker ── CREATE_TOPICS(topic, partitions, replication factor, its
 *                           unclean.leader.election.enable and
 *                           min.insync.replicas) ──▶ controller
 *          ◀── (error)       once the Topic and Partition records commit
 * (a broker's auto-creation of an internal topic: AutoTopicCreationManager)
 *   controller ── GET_REPLICA_LOG_INFO(topic, partition) ──▶ broker
 *              ◀── (error, leader epoch, last written leader epoch, log end offset)
 * (KIP-966's unclean recovery manager asking a replica how long its log is:
 * the controller's only request to a broker; the broker answers from its
 * log, fenced or not)
 *
 * A controller that is not the active one answers NOT_CONTROLLER, as Kafka's
 * ControllerApis does, with the leader it knows, so the broker asks it next.
 * One struct carries every kind, without pointers (a shallow copy clones it).
 */
#ifndef KRAFT_PROTO_H
#define KRAFT_PROTO_H

#include <glib.h>

#include "kafka_error.h"
#include "kafka_proto.h"
#include "sim_net.h"

typedef enum {
    KRAFT_MSG_REGISTRATION_REQUEST = 320,
    KRAFT_MSG_REGISTRATION_RESPONSE,
    KRAFT_MSG_HEARTBEAT_REQUEST,
    KRAFT_MSG_HEARTBEAT_RESPONSE,
    KRAFT_MSG_ALTER_PARTITION_REQUEST,
    KRAFT_MSG_ALTER_PARTITION_RESPONSE,
    KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST,
    KRAFT_MSG_ALLOCATE_PRODUCER_IDS_RESPONSE,
    KRAFT_MSG_CREATE_TOPICS_REQUEST,
    KRAFT_MSG_CREATE_TOPICS_RESPONSE,
    KRAFT_MSG_GET_REPLICA_LOG_INFO_REQUEST,
    KRAFT_MSG_GET_REPLICA_LOG_INFO_RESPONSE,
    KRAFT_MSG_FIRST = 320,
    KRAFT_MSG_LAST = 331,
} KraftMsgType;

typedef struct {
    SimMsg base;
    gint32 correlation_id;
    gint16 error;          /* responses */
    gint32 controller_id;  /* responses: the active controller the responder knows, or -1 */
    gint32 broker_id;
    guint64 incarnation;   /* REGISTRATION */
    gint64 previous_broker_epoch; /* REGISTRATION: from its clean shutdown file, -1: none */
    gint64 broker_epoch;   /* HEARTBEAT, ALTER_PARTITION; REGISTRATION_RESPONSE */
    gint64 metadata_offset; /* HEARTBEAT: the offset the broker has replayed up to */
    gboolean want_fence;    /* HEARTBEAT */
    gboolean want_shut_down; /* HEARTBEAT: a controlled shutdown */
    gboolean caught_up;     /* HEARTBEAT_RESPONSE */
    gboolean fenced;        /* HEARTBEAT_RESPONSE */
    gboolean in_controlled_shutdown; /* HEARTBEAT_RESPONSE */
    gboolean should_shut_down;       /* HEARTBEAT_RESPONSE */
    gint64 producer_id_start; /* ALLOCATE_PRODUCER_IDS_RESPONSE */
    gint32 producer_id_count; /* ALLOCATE_PRODUCER_IDS_RESPONSE */
    /* CREATE_TOPICS. */
    gint32 n_partitions;
    gint16 replication_factor;
    gboolean unclean;
    gint32 min_isr;
    /* ALTER_PARTITION and its response; CREATE_TOPICS. */
    guint32 topic;
    gint32 partition;
    gint32 leader;
    gint32 leader_epoch;
    gint32 partition_epoch;
    guint8 n_isr;
    gint32 isr[KAFKA_REPLICAS_MAX];
    /* GET_REPLICA_LOG_INFO_RESPONSE: its log's end offset and the leader
     * epoch of its last batch (LastWrittenLeaderEpoch); -1 without a log. */
    gint64 log_end_offset;
    gint32 last_written_epoch;
} KraftMsg;

/* A new message of `type`, its optional fields at their sentinels and its
 * wire size set. (transfer full) */
KraftMsg *kraft_msg_new(KraftMsgType type, gint32 correlation_id);
/* "BrokerRegistration", ..., NULL for a type that is not one of these. */
const char *kraft_msg_type_name(guint type);

#endif
