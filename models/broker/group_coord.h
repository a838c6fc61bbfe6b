/*
 * group_coord: Kafka's group coordinator (the classic consumer group
 * protocol, GroupCoordinator and GroupMetadataManager), run by every broker
 * for the groups whose __consumer_offsets partition it leads.
 *
 * Which broker. A group belongs to partition
 * Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions of
 * __consumer_offsets (group_coord_partition_for, with Java's String.hashCode
 * over UTF-16 code units); its coordinator is that partition's leader.
 * FindCoordinator, sent to any broker, answers from that broker's metadata
 * cache. The first FindCoordinator that finds no __consumer_offsets creates it
 * as Kafka's auto-creation does: the broker writes the topic's replica
 * assignment (AdminUtils.assignReplicasToBrokers over the live brokers, with
 * offsets.topic.replication.factor capped at their number) to
 * /brokers/topics/__consumer_offsets, for the controller to pick up, and
 * answers COORDINATOR_NOT_AVAILABLE until a leader is known.
 *
 * Consumer groups of KIP-848's protocol (ConsumerGroupHeartbeat) live beside
 * the classic ones, in group_coord_consumer.c, which describes them; their
 * offsets are stored the same way, commits validated by member epoch, and
 * their state is stored as group metadata records too (below).
 *
 * Groups. Each classic group runs Kafka's state machine:
 *
 *   Empty ──join──▶ PreparingRebalance ──all members joined, or the
 *     ▲               ▲      │          rebalance timeout──▶ CompletingRebalance
 *     │               │      └──no member left──▶ Empty        │
 *     │               │                                        │ leader's SyncGroup
 *     │               └──join (leader, or changed subscription),│ the group
 *     │                  leave, session expiry ─── Stable ◀─────┘ record stored
 *     └── (unloaded when the broker stops leading the offsets partition: the
 *          group leaves this broker's memory; Kafka marks it Dead)
 *
 * The first rebalance of an Empty group waits group.initial.rebalance.delay.ms
 * for more members, extended while members keep arriving, up to the
 * rebalance timeout (the largest max.poll.interval.ms of the members); later
 * ones complete as soon as every member has rejoined or at the rebalance
 * timeout, removing those that did not. A member is removed when
 * session.timeout.ms passes without a heartbeat, join or sync (except while
 * its JoinGroup or SyncGroup waits), and when it leaves. The group leader
 * (the first member to join, or a rejoined member when it is gone) receives
 * every member's subscription and sends the assignment in SyncGroup. New
 * member ids are made by the coordinator (MEMBER_ID_REQUIRED and static
 * membership are not modelled).
 *
 * The group metadata record. The leader's SyncGroup stores the generation,
 * its members (ids, client ids, timeouts, subscriptions, owned partitions)
 * and the assignment in one record of the group's __consumer_offsets
 * partition (Kafka's GroupMetadataManager.storeGroup, GroupMetadataValue
 * v3), appended and replicated as commits are; only once it is replicated
 * does the group become Stable and the waiting members get their
 * assignment. A failed append fails the waiting SyncGroups (the error mapped
 * as storeGroup maps it: a timeout is REBALANCE_IN_PROGRESS) and starts a
 * rebalance; a group that another join moved on ignores the answer. A group
 * left with no members stores itself Empty. A new coordinator's load reads
 * the latest record of each group and brings the group back Stable (Empty
 * without members) in its generation, with its members' assignments, and
 * schedules each member's session expiry (GroupCoordinator.onGroupLoaded,
 * Kafka 3.9): a member that goes on heartbeating and committing is not
 * asked to rejoin. The record's layout is group_coord_encode_group's.
 *
 * Offsets. OffsetCommit appends one batch to the group's __consumer_offsets
 * partition through the leader's normal append path (acks=-1,
 * offsets.commit.timeout.ms), and is answered once the HW passes it; errors
 * map as in Kafka's GroupMetadataManager.storeOffsets. Commits therefore
 * share the replication, the truncation and the loss of any data. A record:
 *
 *   key   = group_coord_offset_key(group, topic, partition): FNV-1a 64 over
 *           the group id, a NUL, the topic, a NUL and the partition's 4 bytes
 *           (little endian); 0 is mapped to 1, since key 0 means "no key";
 *   value = the committed offset (the next offset to read), with the committed
 *           leader epoch plus one above its low 40 bits (0: no epoch), the
 *           two fields of Kafka's OffsetCommitValue v3 (KIP-320).
 *
 * TxnOffsetCommit (a transactional producer's sendOffsetsToTransaction)
 * appends the same records as a transactional batch of the producer (its id
 * and epoch: a fenced epoch is refused with INVALID_PRODUCER_EPOCH); once
 * replicated they wait, per producer, until the transaction coordinator's
 * marker reaches the partition: a COMMIT makes them the committed offsets, an
 * ABORT drops them (Kafka's onTransactionCompleted). Loading replays the same
 * rule from the log.
 *
 * The coordinator caches, per offsets partition it leads, the latest offset
 * per key. On becoming leader of a partition it rebuilds that cache by reading
 * the partition's log from its start to its LEO (later records win; the log
 * is not compacted), which takes a modelled 1 ms plus 10 ns per logical byte
 * (a 100 MB/s read); until then the partition's groups get
 * COORDINATOR_LOAD_IN_PROGRESS. On losing the leadership the cache and the
 * groups are dropped (NOT_COORDINATOR). OffsetFetch answers the cached offset,
 * or -1.
 */
#ifndef GROUP_COORD_H
#define GROUP_COORD_H

#include <glib.h>

#include "broker.h"
#include "broker_services.h"

#define GROUP_OFFSETS_TOPIC "__consumer_offsets"

typedef enum {
    GROUP_STATE_EMPTY = 0,
    GROUP_STATE_PREPARING_REBALANCE,
    GROUP_STATE_COMPLETING_REBALANCE,
    GROUP_STATE_STABLE,
    GROUP_STATE_DEAD,
} GroupState;


/* Java's String.hashCode of a UTF-8 string, over its UTF-16 code units. */
gint32 group_coord_java_hash(const char *text);
/* The __consumer_offsets partition of a group: Utils.abs(hashCode) %
 * num_partitions, where Utils.abs maps G_MININT32 to 0. */
gint32 group_coord_partition_for(const char *group_id, gint32 num_partitions);
/* The key of a commit record (see above); never 0. */
guint64 group_coord_offset_key(const char *group_id, const char *topic, gint32 partition);

/* The key of a group metadata record: the commit key of the pseudo-partition
 * ("", -2) of the group, which no consumer can name. */
guint64 group_coord_group_key(const char *group_id);

/* One member of a group metadata record. */
typedef struct {
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    char client_id[KAFKA_GROUP_ID_MAX + 1];
    gint32 session_timeout_ms;
    gint32 rebalance_timeout_ms;
    /* Classic: the assignor it speaks, as the wire numbers it; KIP-848: the
     * server assignor it asks for (-1: none). */
    gint32 protocol;
    gint32 owned_generation;
    GArray *topics;     /* KTopicName: its subscription */
    GArray *owned;      /* KTopicPartition: what it said it owned at its join */
    GArray *assignment; /* KTopicPartition: assigned */
    /* KIP-848 only (ConsumerGroupCurrentMemberAssignment and
     * ConsumerGroupTargetAssignmentMember): */
    gint32 state; /* MemberState of group_coord_consumer.c */
    gint32 member_epoch;
    gint32 previous_member_epoch;
    GArray *pending; /* KTopicPartition: pending revocation */
    GArray *target;  /* KTopicPartition: its target assignment */
} GroupLogMember;

/* A subscribed topic's partition count in a KIP-848 group's record (Kafka's
 * ConsumerGroupPartitionMetadata). */
typedef struct {
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
    gint32 partitions;
} GroupLogTopic;

/* A group metadata record: a classic group's (Kafka's GroupMetadataValue),
 * or a KIP-848 consumer group's state as Kafka 4's records of it add up
 * (ConsumerGroupMetadata, ConsumerGroupTargetAssignmentMetadata and the
 * members' records) when `consumer_protocol`. */
typedef struct {
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    gboolean consumer_protocol;
    gint32 generation;   /* classic: the generation; KIP-848: the group epoch */
    gint32 target_epoch; /* KIP-848: the target assignment's epoch */
    gint32 protocol;     /* classic: the chosen assignor; -1: none (an Empty group) */
    gint32 leader;       /* classic: the leader's index in `members`; -1: none */
    GArray *members;     /* GroupLogMember (owned, with their arrays) */
    GArray *metadata;    /* KIP-848: GroupLogTopic, the subscription metadata */
} GroupLogRecord;

/* An empty record of `group_id` (its members array created). */
void group_log_record_init(GroupLogRecord *record, const char *group_id);
/* Appends a member with empty arrays and returns it. */
GroupLogMember *group_log_record_add_member(GroupLogRecord *record, const char *member_id);
void group_log_record_clear(GroupLogRecord *record);
/* The record as one batch of __consumer_offsets: a header record keyed
 * group_coord_group_key (the magic, the group id's length, the member count)
 * that counts the bytes Kafka's record takes, then keyless records holding
 * the fields, the ids and topics 8 bytes a record, and each list of
 * partitions as runs of one topic with their partition numbers two a
 * record. */
PlogBatch *group_coord_encode_group(const GroupLogRecord *record);
/* Decodes a batch of __consumer_offsets into `out` (free with
 * group_log_record_clear). FALSE, with `out` cleared, when the batch is not
 * a group metadata record. */
gboolean group_coord_decode_group(const PlogBatch *batch, GroupLogRecord *out);

/* What one broker knows of a group, for tests and reports. */
typedef struct {
    gboolean coordinator; /* it leads the group's offsets partition and has loaded it */
    gboolean loading;     /* it leads it and is still loading it */
    gboolean exists;      /* the group is in its memory */
    GroupState state;
    gint32 generation;
    guint members;
    gint32 protocol; /* AssignorStrategy, -1 none */
    /* A KIP-848 consumer group (group_coord_consumer.c): `generation` is its
     * group epoch, `state` STABLE once every member reached the target
     * (PREPARING_REBALANCE while some reconcile: Kafka's RECONCILING). */
    gboolean consumer_protocol;
    gint32 target_epoch;
} GroupCoordInfo;

/* The group coordinator of one broker process, which creates it at start
 * with its services and frees it at a crash: it is told of requests, and
 * registers with the replica manager to hear of the __consumer_offsets
 * partitions this broker starts or stops leading and of transaction markers
 * written. */
GroupCoord *group_coord_new(BrokerServices *services);
void group_coord_free(GroupCoord *coord);
/* TRUE when `msg` is a group request it handled (the caller frees it). */
gboolean group_coord_handle_message(GroupCoord *coord, SimNodeId from, SimMsg *msg);
void group_coord_check_invariants(const GroupCoord *coord);

void group_coord_describe(const Broker *broker, const char *group_id, GroupCoordInfo *out);
/* The committed offset the broker's coordinator cache holds for the
 * partition, or -1 (none, or the broker does not coordinate the group). */
gint64 group_coord_committed_offset(const Broker *broker, const char *group_id, const char *topic,
                                    gint32 partition);
/* The leader epoch committed with that offset (KIP-320), or -1 (none). */
gint32 group_coord_committed_leader_epoch(const Broker *broker, const char *group_id,
                                          const char *topic, gint32 partition);

#endif
