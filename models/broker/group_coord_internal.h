/*
 * group_coord_internal: what group_coord.c (the classic protocol, offsets,
 * loading), group_coord_consumer.c (KIP-848's consumer groups) and
 * group_coord_record.c (the records' partition, key and commit value) share.
 * Nothing outside models/broker/group_coord*.c includes it.
 */
#ifndef GROUP_COORD_INTERNAL_H
#define GROUP_COORD_INTERNAL_H

#include "group_coord.h"

/* The consumer groups of one coordinator (group_coord_consumer.c). */
typedef struct ConsumerGroups ConsumerGroups;

/* ---- group_coord.c ---- */

/* NONE when this broker may serve `group_id` now; else NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS or INVALID_GROUP_ID. */
KafkaError group_coord_check_coordinator(const GroupCoord *coord, const char *group_id);
/* The __consumer_offsets partition of `group_id`. */
gint32 group_coord_group_partition(const GroupCoord *coord, const char *group_id);
BrokerServices *group_coord_services(const GroupCoord *coord);
/* TRUE when a classic group `group_id` has members. */
gboolean group_coord_classic_active(const GroupCoord *coord, const char *group_id);
/* Told how the append of a group record ended: its id (what
 * group_coord_append_group_record returned) and the append's error. */
typedef void (*GroupRecordAnswer)(void *ctx, guint64 id, KafkaError append_error);
/* Appends `batch`, a group metadata record of `group_id`, to the group's
 * __consumer_offsets partition as commits are appended (Kafka's
 * appendForGroup); `answer` hears how it ended, unless the broker stops
 * leading the partition first. *id gets the append's id (never 0) before
 * the append starts: the answer may come before this returns. */
void group_coord_append_group_record(GroupCoord *coord, const char *group_id, PlogBatch *batch,
                                     GroupRecordAnswer answer, void *ctx, guint64 *id);
/* Kafka's mapping of a failed coordinator write to the error the client
 * gets: NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE (a timeout too, as
 * GroupCoordinatorService.handleOperationException maps it), or the error. */
KafkaError group_coord_write_error(KafkaError append_error);
/* The coordinator's consumer groups. (transfer none) */
ConsumerGroups *group_coord_consumer_groups(const GroupCoord *coord);

/* ---- group_coord_record.c ---- */

/* A commit record's value, as the log and the cache keep it: the offset (0
 * up to 2^40) and the committed leader epoch (-1: none), which Kafka's
 * OffsetCommitValue (v3, KIP-320) stores side by side. */
guint64 group_coord_commit_value(gint64 offset, gint32 leader_epoch);
gint64 group_coord_commit_value_offset(guint64 value);
gint32 group_coord_commit_value_epoch(guint64 value);

/* ---- group_coord_consumer.c ---- */

ConsumerGroups *consumer_groups_new(GroupCoord *coord);
void consumer_groups_free(ConsumerGroups *groups);
void consumer_groups_handle_heartbeat(ConsumerGroups *groups, SimNodeId from,
                                      const KConsumerHeartbeatRequest *request);
/* TRUE when a consumer group `group_id` exists (in memory). */
gboolean consumer_groups_exists(const ConsumerGroups *groups, const char *group_id);
/* Kafka's ConsumerGroup.validateOffsetCommit: NONE, UNKNOWN_MEMBER_ID or
 * STALE_MEMBER_EPOCH. A commit without a member epoch (< 0, as assign()
 * or an admin sends) is accepted only by a group without members. */
KafkaError consumer_groups_check_commit(ConsumerGroups *groups, const char *group_id,
                                        const char *member_id, gint32 member_epoch);
/* A KIP-848 group's record read by the load of its offsets partition: the
 * group comes back with its members (GroupMetadataManager.onLoaded). */
void consumer_groups_load(ConsumerGroups *groups, const GroupLogRecord *record);
/* The broker stopped leading offsets partition `partition`: its groups go,
 * and the heartbeats waiting for their records are answered
 * NOT_COORDINATOR. */
void consumer_groups_unload(ConsumerGroups *groups, gint32 partition);
void consumer_groups_describe(const ConsumerGroups *groups, const char *group_id,
                              GroupCoordInfo *out);
void consumer_groups_check_invariants(const ConsumerGroups *groups);

#endif
