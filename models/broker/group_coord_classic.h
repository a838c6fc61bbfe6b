/*
 * group_coord_classic: what group_coord.c (the classic protocol, offsets,
 * the group records' store) and group_coord_load.c (loading an offsets
 * partition, the views, the invariants) share of the classic coordinator:
 * its structs and the lookups and cache operations both use. Nothing else
 * includes it.
 */
#ifndef GROUP_COORD_CLASSIC_H
#define GROUP_COORD_CLASSIC_H

#include "coord_partition.h"
#include "group_coord_internal.h"

/* Bounds asserted on what one group holds. */
#define GROUP_MEMBERS_MAX 4096
#define GROUP_TOPICS_MAX 1024
/* Bounds the transactional offsets awaiting their markers per partition. */
#define TXN_PENDING_MAX (1u << 20)

typedef struct {
    CoordPartition base; /* loaded once `offsets` and `txn_pending` exist */
    GHashTable *offsets; /* guint64 key* -> guint64 commit value* (owned); lookups only */
    /* Transactional offsets not yet committed (TxnPendingOffset), in commit
     * order; created with `offsets`. */
    GArray *txn_pending;
} OffsetsPartition;

/* An offset a TxnOffsetCommit stored, visible once its transaction commits
 * (Kafka's pendingTransactionalOffsetCommits). */
typedef struct {
    gint64 producer_id;
    guint64 key;
    guint64 value; /* group_coord_commit_value */
} TxnPendingOffset;

typedef struct Group Group;

typedef struct {
    char *member_id;
    char *client_id;
    Group *group;
    gint32 session_timeout_ms;
    gint32 rebalance_timeout_ms;
    gint32 protocol;
    gint32 owned_generation;
    GArray *topics;     /* KTopicName, sorted */
    GArray *owned;      /* KTopicPartition */
    GArray *assignment; /* KTopicPartition */
    gboolean awaiting_join;
    gboolean awaiting_sync;
    SimNodeId join_node;
    gint32 join_correlation;
    SimNodeId sync_node;
    gint32 sync_correlation;
    SimTimerId heartbeat_timer;
} Member;

struct Group {
    GroupCoord *coord; /* its coordinator, for its timers */
    char *id;
    gint32 partition; /* of __consumer_offsets */
    GroupState state;
    gint32 generation;
    gint32 protocol; /* the chosen assignor, as the wire numbers it; -1 none */
    Member *leader;
    GPtrArray *members; /* Member* (owned), sorted by id */
    SimTimerId join_timer;
    gboolean initial_delay; /* the join timer is the initial delayed join */
    gint64 initial_remaining_ms;
    gboolean new_member_added;
};

typedef struct {
    guint64 id;
    gint32 partition;
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    SimNodeId client; /* SIM_NODE_NONE: a record of the coordinator's own, unanswered */
    gint32 correlation_id;
    GArray *offsets;    /* KOffsetPartition */
    gint64 producer_id; /* a TxnOffsetCommit's producer; -1 for an OffsetCommit */
    /* A group metadata record (store_group): the generation it stores and
     * the leader's assignment (KMemberPartition), or NULL for commits. */
    gint32 generation;
    GArray *assignments;
    /* A KIP-848 group's record (group_coord_append_group_record): who hears
     * the answer, or NULL. */
    GroupRecordAnswer answer;
    void *answer_ctx;
} PendingCommit;

struct GroupCoord {
    BrokerServices *services;
    GPtrArray *partitions; /* OffsetsPartition* (owned), by partition */
    GPtrArray *groups;     /* Group* (owned), by id */
    GPtrArray *pending;    /* PendingCommit* (owned), by id */
    guint64 commit_next;
    guint64 member_next;
    ConsumerGroups *consumer; /* KIP-848's groups (group_coord_consumer.c) */
};

/* ---- group_coord.c ---- */

/* The __consumer_offsets partition of `group_id`. */
gint32 classic_partition_of(const GroupCoord *coord, const char *group_id);
/* The offsets partition `partition` this broker leads, or NULL. */
OffsetsPartition *classic_offsets_partition_find(const GroupCoord *coord, gint32 partition);
Group *classic_group_find(const GroupCoord *coord, const char *group_id);
Member *classic_member_find(const Group *group, const char *member_id);
SimWorld *classic_world_of(const GroupCoord *coord);
/* A new Empty group `group_id`, in the coordinator's sorted groups. */
Group *classic_group_new(GroupCoord *coord, const char *group_id);
/* Kafka's completeAndScheduleNextHeartbeatExpiration. */
void classic_heartbeat_schedule(GroupCoord *coord, Member *member);
/* A member of `group` with id `member_id` (taken) and nothing subscribed,
 * in the group's sorted members. */
Member *classic_member_add(Group *group, char *member_id, const char *client_id);
void classic_cache_put(OffsetsPartition *op, guint64 key, guint64 value);
/* The commit value cached for `key`, or NULL. */
const guint64 *classic_cache_get(const OffsetsPartition *op, guint64 key);
void classic_txn_pending_put(OffsetsPartition *op, gint64 producer_id, guint64 key, guint64 value);
/* The producer's transaction ended: its offsets, in commit order, become
 * the committed ones (commit) or are forgotten (abort). */
void classic_txn_pending_complete(OffsetsPartition *op, gint64 producer_id, gboolean committed);

/* ---- group_coord_load.c ---- */

/* Reads the partition's log into its cache, latest record per key winning,
 * then loads the groups whose metadata records it holds, in id order
 * (a CoordLoadFn; `user_data` is the GroupCoord). */
void group_coord_load_offsets(void *user_data, CoordPartition *partition, Plog *log);

#endif
