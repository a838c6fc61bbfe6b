/*
 * group_coord_consumer: KIP-848's consumer groups (group.protocol=consumer
 * on the clients), as Kafka 4.0's group coordinator runs them
 * (GroupMetadataManager.consumerGroupHeartbeat, ConsumerGroup,
 * ConsumerGroupMember and CurrentAssignmentBuilder, trunk 1eb7644).
 *
 * A member sends ConsumerGroupHeartbeat every heartbeat interval (the
 * coordinator's group.consumer.heartbeat.interval.ms, given in every
 * answer) with its member epoch, subscription and owned partitions. The
 * group has a group epoch, bumped whenever a member joins, leaves, is fenced
 * or changes its subscription, or the subscribed topics' partition counts
 * change (its subscription metadata, from this broker's metadata cache).
 * When the group epoch passes the target assignment epoch, the coordinator
 * computes a new target assignment for every member with the group's
 * server assignor (server_assignor.h): the one most members ask for
 * (group.remote.assignor), else the first of group.consumer.assignors.
 *
 * Each member then moves towards its target one heartbeat at a time
 * (CurrentAssignmentBuilder):
 *
 *   STABLE ──a newer target: computeNextAssignment──▶
 *       UNREVOKED_PARTITIONS  when it owns partitions the target lacks: it
 *                             keeps its epoch, its assignment shrinks to
 *                             what it keeps, the rest is pending revocation;
 *       UNRELEASED_PARTITIONS when partitions of its target are still held
 *                             (assigned or pending revocation) by another
 *                             member: it gets the target epoch and the free
 *                             ones only;
 *       STABLE                otherwise, at the target epoch.
 *   UNREVOKED_PARTITIONS ──a heartbeat whose owned partitions no longer hold
 *       any pending revocation──▶ computeNextAssignment(epoch + 1)
 *   UNRELEASED_PARTITIONS ──each heartbeat──▶ computeNextAssignment
 *
 * So a partition reaches its new owner only after its previous owner said
 * it revoked it: no two members ever hold one partition (invariant 4).
 *
 * Fencing (throwIfMemberEpochIsInvalid): a heartbeat with an epoch above the
 * member's, or below it unless it is the member's previous epoch and its
 * owned partitions are a subset of its assignment (a lost answer), gets
 * FENCED_MEMBER_EPOCH; an unknown member id with epoch > 0 gets
 * UNKNOWN_MEMBER_ID. The client then drops its partitions and rejoins with
 * epoch 0. Epoch -1 leaves. A member silent for
 * group.consumer.session.timeout.ms, or still holding partitions pending
 * revocation a rebalance timeout (its max.poll.interval.ms) after it was
 * asked to revoke them, is fenced: removed, its partitions freed, the group
 * epoch bumped (the target follows at the next heartbeat).
 *
 * Offset commits carry the member id and member epoch: a commit from an
 * unknown member gets UNKNOWN_MEMBER_ID, one whose epoch is not the
 * member's current one STALE_MEMBER_EPOCH (ConsumerGroup.validateOffsetCommit).
 *
 * Records. Whenever a heartbeat, a leave or a fence changes the group, its
 * whole state (the group and target epochs, each member's epochs, state,
 * subscription, assignor, assigned, pending and target partitions) is
 * appended to the group's __consumer_offsets partition as one group record
 * (group_coord_encode_group; Kafka 4 writes ConsumerGroupMetadata, the
 * member, target-assignment and current-assignment records of what
 * changed). The heartbeat's answer waits until that record, or the group's
 * record being written when nothing changed, is replicated (Kafka's
 * CoordinatorRuntime). A write the append refuses at once (not the leader,
 * too few in-sync replicas, a failed disk) reverts the group to its previous
 * record, as Kafka's runtime reverts a failed write, and the heartbeat gets
 * the write's error (group_coord_write_error); one that fails after it was
 * appended (a timeout, the ISR below min.insync.replicas by the time it is
 * replicated) answers its waiting heartbeats that error and keeps its state.
 * Kafka 4's runtime appends with acks=1 and waits for the HW, so
 * min.insync.replicas refuses none of its writes; ksim appends with acks=-1,
 * as the classic coordinator and the commits here do. A new coordinator loads
 * each group's latest record (consumer_groups_load): its members go on in
 * their epochs with their partitions, their session timers (and the
 * rebalance timers of those that must revoke) start again
 * (GroupMetadataManager.onLoaded), and no member epoch is ever given twice,
 * so a zombie's commit with an epoch of an older coordinator stays stale.
 * The record holds the subscription metadata too (Kafka's
 * ConsumerGroupPartitionMetadata), so a topic that grew meanwhile bumps the
 * epoch at the next heartbeat.
 *
 * Not modelled: static membership (instance ids, epoch -2), regular-expression
 * subscriptions, rack-aware assignment, client-side assignors, the
 * group.consumer.max.size and min/max session and heartbeat bounds, and
 * conversions between a classic group and a consumer group (a group id a
 * classic group with members uses is refused with
 * INCONSISTENT_GROUP_PROTOCOL, and a JoinGroup for a consumer group's id
 * too).
 *
 * Invariants (consumer_groups_check_invariants):
 *  1. `groups` is sorted by id without duplicates; every group's offsets
 *     partition is led and loaded by this broker.
 *  2. A group's members are sorted by id without duplicates.
 *  3. target epoch <= group epoch; a member's epoch <= the target epoch.
 *  4. No partition is held (assigned or pending revocation) by two members.
 *  5. Pending revocation is non-empty exactly in UNREVOKED_PARTITIONS, and
 *     disjoint from the member's assignment; its rebalance timer runs
 *     exactly then; every member's session timer runs.
 *  6. Assigned, pending and target partitions are sorted and distinct.
 *  7. A heartbeat answer waiting for a group record waits for a write not
 *     yet ended (its group's last, or an earlier one).
 */
#include "group_coord_internal.h"

#include "broker_services.h"
#include "server_assignor.h"
#include "sim_assert.h"

#include <stdlib.h>
#include <string.h>

#define CGROUP_MEMBERS_MAX 4096
#define CGROUP_TOPICS_MAX 1024

typedef enum {
    MEMBER_STABLE = 0,
    MEMBER_UNREVOKED_PARTITIONS,
    MEMBER_UNRELEASED_PARTITIONS,
} MemberState;

typedef struct CGroup CGroup;

typedef struct {
    char *member_id;
    CGroup *group;
    MemberState state;
    gint32 member_epoch;
    gint32 previous_member_epoch;
    gint32 rebalance_timeout_ms;
    gint32 server_assignor; /* -1: none asked for */
    GArray *topics;         /* KTopicName, sorted */
    GArray *assigned;       /* KTopicPartition, sorted */
    GArray *pending;        /* KTopicPartition, sorted: pending revocation */
    GArray *target;         /* KTopicPartition, sorted: its target assignment */
    SimTimerId session_timer;
    SimTimerId rebalance_timer;
} CMember;

struct CGroup {
    ConsumerGroups *owner;
    char *id;
    gint32 partition;
    gint32 group_epoch;
    gint32 target_epoch;
    GPtrArray *members; /* CMember* (owned), sorted by id */
    GArray *metadata;   /* ServerAssignorTopic, sorted: the subscription metadata */
    /* The last record written (owned; NULL: none): a change is written
     * only when its record differs, and a refused write reverts to it. */
    PlogBatch *stored;
    guint64 last_write;     /* the id of its last record being appended; 0: none */
    KafkaError write_error; /* how its last write ended (mapped) */
};

/* A heartbeat answer waiting for the group record it follows. */
typedef struct {
    guint64 write; /* the append it waits for */
    gint32 partition;
    SimNodeId to;
    KConsumerHeartbeatResponse *response;
} Deferred;

struct ConsumerGroups {
    GroupCoord *coord;
    GPtrArray *groups; /* CGroup* (owned), sorted by id */
    guint64 member_next;
    GPtrArray *deferred; /* Deferred* (owned), in the order they were made */
};

/* ---- lookups ---- */

static BrokerServices *
services_of(const ConsumerGroups *groups)
{
    return group_coord_services(groups->coord);
}

static SimWorld *
world_of(const ConsumerGroups *groups)
{
    return broker_services_world(services_of(groups));
}

static const BrokerConfig *
config_of(const ConsumerGroups *groups)
{
    return broker_services_config(services_of(groups));
}

static CGroup *
group_find(const ConsumerGroups *groups, const char *group_id)
{
    for (guint i = 0; i < groups->groups->len; i++) {
        CGroup *group = g_ptr_array_index(groups->groups, i);
        if (strcmp(group->id, group_id) == 0)
            return group;
    }
    return NULL;
}

static CMember *
member_find(const CGroup *group, const char *member_id)
{
    for (guint i = 0; i < group->members->len; i++) {
        CMember *member = g_ptr_array_index(group->members, i);
        if (strcmp(member->member_id, member_id) == 0)
            return member;
    }
    return NULL;
}

static gint
tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

static gboolean
tps_contain(const GArray *tps, const KTopicPartition *tp)
{
    return tps->len > 0 &&
           bsearch(tp, tps->data, tps->len, sizeof(KTopicPartition), tp_compare) != NULL;
}

/* Kafka's currentPartitionEpoch != -1: another member holds `tp`. */
static gboolean
held_by_other(const CGroup *group, const CMember *self, const KTopicPartition *tp)
{
    for (guint i = 0; i < group->members->len; i++) {
        const CMember *member = g_ptr_array_index(group->members, i);
        if (member != self &&
            (tps_contain(member->assigned, tp) || tps_contain(member->pending, tp)))
            return TRUE;
    }
    return FALSE;
}

/* ---- members ---- */

static void
member_free(ConsumerGroups *groups, CMember *member)
{
    sim_timer_cancel(world_of(groups), member->session_timer);
    sim_timer_cancel(world_of(groups), member->rebalance_timer);
    g_array_free(member->topics, TRUE);
    g_array_free(member->assigned, TRUE);
    g_array_free(member->pending, TRUE);
    g_array_free(member->target, TRUE);
    g_free(member->member_id);
    g_free(member);
}

static void
group_free(ConsumerGroups *groups, CGroup *group)
{
    for (guint i = 0; i < group->members->len; i++)
        member_free(groups, g_ptr_array_index(group->members, i));
    g_ptr_array_free(group->members, TRUE);
    g_array_free(group->metadata, TRUE);
    plog_batch_free(group->stored);
    g_free(group->id);
    g_free(group);
}

static gint
member_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(CMember *const *)a)->member_id, (*(CMember *const *)b)->member_id);
}

static gint
group_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(CGroup *const *)a)->id, (*(CGroup *const *)b)->id);
}

static CGroup *
group_new(ConsumerGroups *groups, const char *group_id)
{
    CGroup *group = g_new0(CGroup, 1);
    group->owner = groups;
    group->id = g_strdup(group_id);
    group->partition = group_coord_group_partition(groups->coord, group_id);
    group->members = g_ptr_array_new();
    group->metadata = g_array_new(FALSE, FALSE, sizeof(ServerAssignorTopic));
    g_ptr_array_add(groups->groups, group);
    g_ptr_array_sort(groups->groups, group_compare);
    return group;
}

static CMember *
member_new(ConsumerGroups *groups, CGroup *group, const char *member_id,
           const KConsumerHeartbeatRequest *request)
{
    KSIM_ASSERT(group->members->len < CGROUP_MEMBERS_MAX);
    CMember *member = g_new0(CMember, 1);
    if (member_id[0] != '\0') {
        member->member_id = g_strdup(member_id);
    } else {
        /* Kafka makes a random Uuid; ksim a name unique in the run. */
        SimWorld *world = world_of(groups);
        SimNodeId node = broker_services_node(services_of(groups));
        member->member_id = g_strdup_printf(
            "%s-%d-%u-%" G_GUINT64_FORMAT,
            request != NULL && request->client_id[0] ? request->client_id : "consumer",
            broker_services_broker_id(services_of(groups)), sim_node_incarnation(world, node),
            ++groups->member_next);
    }
    KSIM_ASSERT(strlen(member->member_id) <= KAFKA_MEMBER_ID_MAX);
    member->group = group;
    member->state = MEMBER_STABLE;
    member->server_assignor = -1;
    member->topics = g_array_new(FALSE, FALSE, sizeof(KTopicName));
    member->assigned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->pending = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->target = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->session_timer = SIM_EVENT_ID_NONE;
    member->rebalance_timer = SIM_EVENT_ID_NONE;
    g_ptr_array_add(group->members, member);
    g_ptr_array_sort(group->members, member_compare);
    return member;
}

/* A new group epoch (stored with the group's next record). */
static void
group_epoch_bump(ConsumerGroups *groups, CGroup *group)
{
    (void)groups;
    group->group_epoch++;
}

/* Kafka's removeMember with a new group epoch (a leave or a fence): its
 * partitions are free at once. */
static void
member_remove(ConsumerGroups *groups, CMember *member)
{
    CGroup *group = member->group;
    gboolean removed = g_ptr_array_remove(group->members, member);
    KSIM_ASSERT(removed);
    member_free(groups, member);
    group_epoch_bump(groups, group);
}

static void session_expired(SimWorld *world, void *ctx, void *arg);
static void rebalance_expired(SimWorld *world, void *ctx, void *arg);
static KafkaError persist(ConsumerGroups *groups, CGroup *group);

/* Kafka's scheduleConsumerGroupSessionTimeout. */
static void
session_schedule(ConsumerGroups *groups, CMember *member)
{
    SimWorld *world = world_of(groups);
    sim_timer_cancel(world, member->session_timer);
    member->session_timer =
        sim_timer_set(world, broker_services_node(services_of(groups)),
                      config_of(groups)->group_consumer_session_timeout_ms * SIM_NS_PER_MS,
                      session_expired, member);
}

static void
session_expired(SimWorld *world, void *ctx, void *arg)
{
    CMember *member = arg;
    (void)world;
    (void)ctx;
    member->session_timer = SIM_EVENT_ID_NONE;
    CGroup *group = member->group;
    member_remove(group->owner, member);
    (void)persist(group->owner, group);
}

/* Kafka's consumerGroupRebalanceTimeout: a member that did not revoke in
 * time is fenced. */
static void
rebalance_expired(SimWorld *world, void *ctx, void *arg)
{
    CMember *member = arg;
    (void)world;
    (void)ctx;
    member->rebalance_timer = SIM_EVENT_ID_NONE;
    KSIM_ASSERT(member->state == MEMBER_UNREVOKED_PARTITIONS);
    CGroup *group = member->group;
    member_remove(group->owner, member);
    (void)persist(group->owner, group);
}

/* ---- the subscription and the target assignment ---- */

static gint
topic_name_compare(gconstpointer a, gconstpointer b)
{
    return strcmp(((const KTopicName *)a)->name, ((const KTopicName *)b)->name);
}

/* Sets the member's subscription from the request; TRUE when it changed. */
static gboolean
subscription_update(CMember *member, const KConsumerHeartbeatRequest *request)
{
    KSIM_ASSERT(request->topics->len <= CGROUP_TOPICS_MAX);
    g_autoptr(GArray) topics = g_array_copy(request->topics);
    g_array_sort(topics, topic_name_compare);
    guint kept = 0;
    for (guint i = 0; i < topics->len; i++) {
        if (kept > 0 && topic_name_compare(&g_array_index(topics, KTopicName, kept - 1),
                                           &g_array_index(topics, KTopicName, i)) == 0)
            continue;
        g_array_index(topics, KTopicName, kept++) = g_array_index(topics, KTopicName, i);
    }
    g_array_set_size(topics, kept);
    gboolean changed =
        topics->len != member->topics->len || member->server_assignor != request->server_assignor;
    for (guint i = 0; !changed && i < topics->len; i++)
        changed = topic_name_compare(&g_array_index(topics, KTopicName, i),
                                     &g_array_index(member->topics, KTopicName, i)) != 0;
    g_array_set_size(member->topics, 0);
    g_array_append_vals(member->topics, topics->data, topics->len);
    member->server_assignor = request->server_assignor;
    member->rebalance_timeout_ms = request->rebalance_timeout_ms;
    return changed;
}

/* The partition count of `topic` in this broker's metadata (0: unknown). */
static gint32
topic_partitions(const ConsumerGroups *groups, const char *topic)
{
    gint32 count = 0;
    for (;; count++) {
        KTopicPartition tp;
        gboolean exists = FALSE;
        ktp_set(&tp, topic, count);
        broker_services_leader_node(services_of(groups), &tp, &exists);
        if (!exists)
            return count;
    }
}

static gint
metadata_compare(gconstpointer a, gconstpointer b)
{
    return strcmp(((const ServerAssignorTopic *)a)->topic, ((const ServerAssignorTopic *)b)->topic);
}

/* Kafka's computeSubscriptionMetadata: the partition counts of every
 * subscribed topic the metadata knows; TRUE when they changed. */
static gboolean
metadata_update(const ConsumerGroups *groups, CGroup *group)
{
    g_autoptr(GArray) metadata = g_array_new(FALSE, FALSE, sizeof(ServerAssignorTopic));
    for (guint m = 0; m < group->members->len; m++) {
        const CMember *member = g_ptr_array_index(group->members, m);
        for (guint t = 0; t < member->topics->len; t++) {
            const char *topic = g_array_index(member->topics, KTopicName, t).name;
            gboolean seen = FALSE;
            for (guint i = 0; i < metadata->len && !seen; i++)
                seen = strcmp(g_array_index(metadata, ServerAssignorTopic, i).topic, topic) == 0;
            gint32 count = seen ? 0 : topic_partitions(groups, topic);
            if (seen || count == 0)
                continue;
            ServerAssignorTopic entry;
            KPROTO_SET_ID(entry.topic, topic);
            entry.partitions = count;
            g_array_append_val(metadata, entry);
        }
    }
    g_array_sort(metadata, metadata_compare);
    gboolean changed = metadata->len != group->metadata->len ||
                       memcmp(metadata->data, group->metadata->data,
                              metadata->len * sizeof(ServerAssignorTopic)) != 0;
    g_array_set_size(group->metadata, 0);
    g_array_append_vals(group->metadata, metadata->data, metadata->len);
    return changed;
}

/* Kafka's ConsumerGroup.preferredServerAssignor: the assignor most members
 * ask for (ties: the lower number), else the brokers' default. */
static ServerAssignorKind
group_assignor(const ConsumerGroups *groups, const CGroup *group)
{
    guint votes[SERVER_ASSIGNOR_COUNT] = {0};
    for (guint m = 0; m < group->members->len; m++) {
        const CMember *member = g_ptr_array_index(group->members, m);
        if (member->server_assignor >= 0 && member->server_assignor < SERVER_ASSIGNOR_COUNT)
            votes[member->server_assignor]++;
    }
    guint best = 0;
    ServerAssignorKind kind =
        (ServerAssignorKind)config_of(groups)->group_consumer_assignor_default;
    for (guint k = 0; k < SERVER_ASSIGNOR_COUNT; k++) {
        if (votes[k] > best) {
            best = votes[k];
            kind = (ServerAssignorKind)k;
        }
    }
    return kind;
}

/* Kafka's TargetAssignmentBuilder: every member's target, at the group
 * epoch. The assignor's stickiness starts from the previous targets. */
static void
target_update(const ConsumerGroups *groups, CGroup *group)
{
    guint n = group->members->len;
    g_autofree ServerAssignorMember *input = g_new0(ServerAssignorMember, MAX(n, 1));
    for (guint m = 0; m < n; m++) {
        const CMember *member = g_ptr_array_index(group->members, m);
        input[m].member_id = member->member_id;
        input[m].topics = member->topics;
        input[m].current = member->target;
    }
    g_autoptr(GPtrArray) targets =
        server_assignor_assign(group_assignor(groups, group), input, n, group->metadata);
    for (guint m = 0; m < n; m++) {
        CMember *member = g_ptr_array_index(group->members, m);
        const GArray *target = g_ptr_array_index(targets, m);
        g_array_set_size(member->target, 0);
        g_array_append_vals(member->target, target->data, target->len);
    }
    group->target_epoch = group->group_epoch;
}

/* ---- CurrentAssignmentBuilder ---- */

static gboolean
owns_any(const GArray *owned, const GArray *tps)
{
    for (guint i = 0; i < owned->len; i++) {
        if (tps_contain(tps, &g_array_index(owned, KTopicPartition, i)))
            return TRUE;
    }
    return FALSE;
}

static void
set_epoch(CMember *member, gint32 epoch)
{
    if (epoch != member->member_epoch)
        member->previous_member_epoch = member->member_epoch;
    member->member_epoch = epoch;
}

/* Kafka's computeNextAssignment, `owned` the partitions the heartbeat
 * reported (ksim always reports them). */
static void
compute_next(CMember *member, gint32 epoch, const GArray *owned)
{
    const CGroup *group = member->group;
    g_autoptr(GArray) kept = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    g_autoptr(GArray) revoke = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    g_autoptr(GArray) gain = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    gboolean unreleased = FALSE;
    for (guint i = 0; i < member->assigned->len; i++) {
        const KTopicPartition *tp = &g_array_index(member->assigned, KTopicPartition, i);
        g_array_append_val(tps_contain(member->target, tp) ? kept : revoke, *tp);
    }
    for (guint i = 0; i < member->target->len; i++) {
        const KTopicPartition *tp = &g_array_index(member->target, KTopicPartition, i);
        if (tps_contain(member->assigned, tp))
            continue;
        if (held_by_other(group, member, tp))
            unreleased = TRUE;
        else
            g_array_append_val(gain, *tp);
    }
    g_array_set_size(member->pending, 0);
    if (revoke->len > 0 && owns_any(owned, revoke)) {
        member->state = MEMBER_UNREVOKED_PARTITIONS;
        set_epoch(member, epoch);
        g_array_set_size(member->assigned, 0);
        g_array_append_vals(member->assigned, kept->data, kept->len);
        g_array_append_vals(member->pending, revoke->data, revoke->len);
        return;
    }
    g_array_append_vals(kept, gain->data, gain->len);
    g_array_sort(kept, tp_compare);
    member->state = unreleased ? MEMBER_UNRELEASED_PARTITIONS : MEMBER_STABLE;
    set_epoch(member, group->target_epoch);
    g_array_set_size(member->assigned, 0);
    g_array_append_vals(member->assigned, kept->data, kept->len);
}

/* Kafka's CurrentAssignmentBuilder.build. */
static void
reconcile(CMember *member, const GArray *owned)
{
    switch (member->state) {
    case MEMBER_STABLE:
        if (member->member_epoch != member->group->target_epoch)
            compute_next(member, member->member_epoch, owned);
        return;
    case MEMBER_UNREVOKED_PARTITIONS:
        if (owns_any(owned, member->pending))
            return;
        compute_next(member, member->member_epoch + 1, owned);
        return;
    case MEMBER_UNRELEASED_PARTITIONS:
        compute_next(member, member->member_epoch, owned);
        return;
    }
}

/* The rebalance timer runs exactly while the member must revoke. */
static void
rebalance_timer_update(ConsumerGroups *groups, CMember *member, gboolean was_unrevoked)
{
    SimWorld *world = world_of(groups);
    if (member->state != MEMBER_UNREVOKED_PARTITIONS) {
        sim_timer_cancel(world, member->rebalance_timer);
        member->rebalance_timer = SIM_EVENT_ID_NONE;
        return;
    }
    if (was_unrevoked && sim_timer_pending(world, member->rebalance_timer))
        return;
    sim_timer_cancel(world, member->rebalance_timer);
    member->rebalance_timer = sim_timer_set(
        world, broker_services_node(services_of(groups)),
        (gint64)MAX(member->rebalance_timeout_ms, 1) * SIM_NS_PER_MS, rebalance_expired, member);
}

/* ---- ConsumerGroupHeartbeat ---- */

/* ---- the group's record ---- */

/* The group's state as one record: what Kafka 4's records of the group
 * (ConsumerGroupMetadata, ConsumerGroupMemberMetadata, the target
 * assignment's and ConsumerGroupCurrentMemberAssignment) add up to. */
static PlogBatch *
group_encode(const CGroup *group)
{
    GroupLogRecord record;
    group_log_record_init(&record, group->id);
    record.consumer_protocol = TRUE;
    record.generation = group->group_epoch;
    record.target_epoch = group->target_epoch;
    for (guint i = 0; i < group->members->len; i++) {
        const CMember *member = g_ptr_array_index(group->members, i);
        GroupLogMember *m = group_log_record_add_member(&record, member->member_id);
        m->rebalance_timeout_ms = member->rebalance_timeout_ms;
        m->protocol = member->server_assignor;
        m->state = (gint32)member->state;
        m->member_epoch = member->member_epoch;
        m->previous_member_epoch = member->previous_member_epoch;
        g_array_append_vals(m->topics, member->topics->data, member->topics->len);
        g_array_append_vals(m->assignment, member->assigned->data, member->assigned->len);
        g_array_append_vals(m->pending, member->pending->data, member->pending->len);
        g_array_append_vals(m->target, member->target->data, member->target->len);
    }
    for (guint i = 0; i < group->metadata->len; i++) {
        const ServerAssignorTopic *topic = &g_array_index(group->metadata, ServerAssignorTopic, i);
        GroupLogTopic entry;
        KPROTO_SET_ID(entry.topic, topic->topic);
        entry.partitions = topic->partitions;
        g_array_append_val(record.metadata, entry);
    }
    PlogBatch *batch = group_coord_encode_group(&record);
    group_log_record_clear(&record);
    return batch;
}

/* TRUE when `batch` holds what the group's last record holds. */
static gboolean
stored_equal(const CGroup *group, const PlogBatch *batch)
{
    const GArray *stored = group->stored != NULL ? group->stored->records : NULL;
    if (stored == NULL || stored->len != batch->records->len)
        return FALSE;
    for (guint i = 0; i < stored->len; i++) {
        if (g_array_index(stored, PlogRecord, i).value !=
            g_array_index(batch->records, PlogRecord, i).value)
            return FALSE;
    }
    return TRUE;
}

static void send_deferred(ConsumerGroups *groups, guint index, KafkaError error);

/* A group record's append ended: the heartbeats that waited for it get
 * their answers, or, when it failed, the write's error (Kafka's
 * CoordinatorRuntime fails the operations of a failed write). */
static void
record_written(void *ctx, guint64 id, KafkaError append_error)
{
    ConsumerGroups *groups = ctx;
    KafkaError error =
        append_error == KAFKA_ERROR_NONE ? KAFKA_ERROR_NONE : group_coord_write_error(append_error);
    for (guint i = 0; i < groups->groups->len; i++) {
        CGroup *group = g_ptr_array_index(groups->groups, i);
        if (group->last_write != id)
            continue;
        group->last_write = 0;
        group->write_error = error;
    }
    /* In the order they were made, as Kafka completes them. */
    for (guint i = 0; i < groups->deferred->len;) {
        const Deferred *deferred = g_ptr_array_index(groups->deferred, i);
        if (deferred->write == id)
            send_deferred(groups, i, error);
        else
            i++;
    }
}

static void group_fill(ConsumerGroups *groups, CGroup *group, const GroupLogRecord *record);

/* Kafka's CoordinatorRuntime reverts the state of a write whose append
 * failed: the group goes back to `previous`, the record written before it
 * (taken). */
static void
group_revert(ConsumerGroups *groups, CGroup *group, PlogBatch *previous)
{
    GroupLogRecord record;
    gboolean decoded = group_coord_decode_group(previous, &record);
    KSIM_ASSERT(decoded); /* what group_encode wrote */
    group_fill(groups, group, &record);
    group_log_record_clear(&record);
    plog_batch_free(group->stored);
    group->stored = previous;
}

static void group_free(ConsumerGroups *groups, CGroup *group);

/* Writes the group's record when its state changed since the last one
 * (Kafka 4 writes the records of what a heartbeat changed; ksim the whole
 * group, which for a few members is about as many bytes). Returns the
 * write's error when the append refused it at once (no longer the leader,
 * too few in-sync replicas, a failed disk): the group then goes back to the
 * record written before (`stored`), and a group that had none is removed
 * (the caller must not use it then); else NONE. A write that fails later
 * (its replicas too slow) was appended: the state stays, as Kafka's does. */
static KafkaError
persist(ConsumerGroups *groups, CGroup *group)
{
    g_autoptr(PlogBatch) batch = group_encode(group);
    if (stored_equal(group, batch))
        return KAFKA_ERROR_NONE;
    PlogBatch *previous = group->stored;
    guint64 pending = group->last_write;
    group->stored = g_steal_pointer(&batch);
    group->write_error = KAFKA_ERROR_NONE;
    group_coord_append_group_record(groups->coord, group->id, group->stored, record_written, groups,
                                    &group->last_write);
    if (group->last_write != 0 || group->write_error == KAFKA_ERROR_NONE) {
        plog_batch_free(previous);
        return KAFKA_ERROR_NONE;
    }
    KafkaError error = group->write_error;
    group->last_write = pending; /* an earlier write may still be waited for */
    if (previous == NULL) {
        KSIM_ASSERT(pending == 0);
        g_ptr_array_remove(groups->groups, group);
        group_free(groups, group);
        return error;
    }
    group_revert(groups, group, previous);
    return error;
}

/* ---- ConsumerGroupHeartbeat ---- */

/* Sends the deferred answer at `index` (with `error`, its assignment
 * dropped, when not NONE) and forgets it. */
static void
send_deferred(ConsumerGroups *groups, guint index, KafkaError error)
{
    Deferred *deferred = g_ptr_array_steal_index(groups->deferred, index);
    if (error != KAFKA_ERROR_NONE) {
        deferred->response->error = error;
        g_array_set_size(deferred->response->assignment, 0);
        kproto_update_size(&deferred->response->base);
    }
    broker_services_send(services_of(groups), deferred->to, &deferred->response->base);
    g_free(deferred);
}

/* Sends `response`, or, while the group's record is being written, keeps it
 * until the write ends (Kafka's CoordinatorRuntime answers an operation
 * once the records it wrote, or the pending ones it read, are committed). */
static void
send_after_write(ConsumerGroups *groups, const CGroup *group, SimNodeId to,
                 KConsumerHeartbeatResponse *response)
{
    if (group == NULL || group->last_write == 0) {
        broker_services_send(services_of(groups), to, &response->base);
        return;
    }
    Deferred *deferred = g_new0(Deferred, 1);
    deferred->write = group->last_write;
    deferred->partition = group->partition;
    deferred->to = to;
    deferred->response = response;
    g_ptr_array_add(groups->deferred, deferred);
}

static void
respond_after(ConsumerGroups *groups, const CGroup *group, SimNodeId to,
              const KConsumerHeartbeatRequest *request, KafkaError error, const CMember *member,
              gint32 epoch)
{
    KConsumerHeartbeatResponse *response = kproto_new(KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE);
    response->correlation_id = request->correlation_id;
    response->error = error;
    KPROTO_SET_ID(response->member_id, member != NULL ? member->member_id : request->member_id);
    response->member_epoch = epoch;
    response->heartbeat_interval_ms =
        (gint32)config_of(groups)->group_consumer_heartbeat_interval_ms;
    if (error == KAFKA_ERROR_NONE && member != NULL)
        g_array_append_vals(response->assignment, member->assigned->data, member->assigned->len);
    kproto_update_size(&response->base);
    send_after_write(groups, group, to, response);
}

/* An answer that follows no write: an error before the group is touched. */
static void
respond(ConsumerGroups *groups, SimNodeId to, const KConsumerHeartbeatRequest *request,
        KafkaError error, const CMember *member, gint32 epoch)
{
    respond_after(groups, NULL, to, request, error, member, epoch);
}

/* Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid and the checks
 * before the member is touched. */
static KafkaError
check_request(const ConsumerGroups *groups, const KConsumerHeartbeatRequest *request)
{
    KafkaError error = group_coord_check_coordinator(groups->coord, request->group_id);
    if (error != KAFKA_ERROR_NONE)
        return error;
    if (request->member_epoch > 0 && request->member_id[0] == '\0')
        return KAFKA_ERROR_INVALID_REQUEST;
    if (request->member_epoch == KAFKA_MEMBER_EPOCH_JOIN &&
        (request->topics->len == 0 || request->rebalance_timeout_ms <= 0))
        return KAFKA_ERROR_INVALID_REQUEST;
    if (request->member_epoch < KAFKA_MEMBER_EPOCH_LEAVE)
        return KAFKA_ERROR_INVALID_REQUEST; /* -2: static members, not modelled */
    if (request->server_assignor >= 0 &&
        (request->server_assignor >= SERVER_ASSIGNOR_COUNT ||
         (config_of(groups)->group_consumer_assignors & (1u << request->server_assignor)) == 0))
        return KAFKA_ERROR_UNSUPPORTED_ASSIGNOR;
    if (group_coord_classic_active(groups->coord, request->group_id))
        return KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL;
    return KAFKA_ERROR_NONE;
}

/* Kafka's throwIfMemberEpochIsInvalid. */
static KafkaError
check_epoch(const CMember *member, const KConsumerHeartbeatRequest *request)
{
    if (request->member_epoch > member->member_epoch)
        return KAFKA_ERROR_FENCED_MEMBER_EPOCH;
    if (request->member_epoch < member->member_epoch) {
        if (request->member_epoch != member->previous_member_epoch)
            return KAFKA_ERROR_FENCED_MEMBER_EPOCH;
        for (guint i = 0; i < request->owned->len; i++) {
            if (!tps_contain(member->assigned, &g_array_index(request->owned, KTopicPartition, i)))
                return KAFKA_ERROR_FENCED_MEMBER_EPOCH;
        }
    }
    return KAFKA_ERROR_NONE;
}

/* Kafka's consumerGroupLeave: the member goes, the group epoch moves. */
static void
handle_leave(ConsumerGroups *groups, SimNodeId from, const KConsumerHeartbeatRequest *request)
{
    CGroup *group = group_find(groups, request->group_id);
    CMember *member = group != NULL ? member_find(group, request->member_id) : NULL;
    if (member == NULL) {
        respond(groups, from, request, KAFKA_ERROR_UNKNOWN_MEMBER_ID, NULL, request->member_epoch);
        return;
    }
    member_remove(groups, member);
    KafkaError error = persist(groups, group);
    if (error != KAFKA_ERROR_NONE) {
        respond(groups, from, request, error, NULL, request->member_epoch);
        return;
    }
    respond_after(groups, group, from, request, KAFKA_ERROR_NONE, NULL, KAFKA_MEMBER_EPOCH_LEAVE);
}

/* The member of the heartbeat, created when it joins; NULL with *error. */
static CMember *
member_of(ConsumerGroups *groups, const KConsumerHeartbeatRequest *request, KafkaError *error)
{
    gboolean joining = request->member_epoch == KAFKA_MEMBER_EPOCH_JOIN;
    CGroup *group = group_find(groups, request->group_id);
    if (group == NULL && !joining) {
        *error = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        return NULL;
    }
    if (group == NULL)
        group = group_new(groups, request->group_id);
    CMember *member = request->member_id[0] != '\0' ? member_find(group, request->member_id) : NULL;
    if (member == NULL && !joining) {
        *error = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        return NULL;
    }
    if (member == NULL) {
        member = member_new(groups, group, request->member_id, request);
        group_epoch_bump(groups, group); /* a new member changes the group */
        return member;
    }
    if (!joining) {
        *error = check_epoch(member, request);
        return *error == KAFKA_ERROR_NONE ? member : NULL;
    }
    return member;
}

void
consumer_groups_handle_heartbeat(ConsumerGroups *groups, SimNodeId from,
                                 const KConsumerHeartbeatRequest *request)
{
    KafkaError error = check_request(groups, request);
    if (error != KAFKA_ERROR_NONE) {
        respond(groups, from, request, error, NULL, request->member_epoch);
        return;
    }
    if (request->member_epoch == KAFKA_MEMBER_EPOCH_LEAVE) {
        handle_leave(groups, from, request);
        return;
    }
    CMember *member = member_of(groups, request, &error);
    if (member == NULL) {
        respond(groups, from, request, error, NULL, request->member_epoch);
        return;
    }
    CGroup *group = member->group;
    gboolean bump = subscription_update(member, request);
    bump = metadata_update(groups, group) || bump;
    /* A new member bumped the epoch already. */
    if (bump && (request->member_epoch != KAFKA_MEMBER_EPOCH_JOIN || member->member_epoch != 0))
        group_epoch_bump(groups, group);
    if (group->group_epoch > group->target_epoch)
        target_update(groups, group);
    gboolean was_unrevoked = member->state == MEMBER_UNREVOKED_PARTITIONS;
    reconcile(member, request->owned);
    rebalance_timer_update(groups, member, was_unrevoked);
    session_schedule(groups, member);
    error = persist(groups, group);
    if (error != KAFKA_ERROR_NONE) {
        respond(groups, from, request, error, NULL, request->member_epoch);
        return;
    }
    respond_after(groups, group, from, request, KAFKA_ERROR_NONE, member, member->member_epoch);
}

/* ---- offsets, views, unloading ---- */

gboolean
consumer_groups_exists(const ConsumerGroups *groups, const char *group_id)
{
    return group_find(groups, group_id) != NULL;
}

KafkaError
consumer_groups_check_commit(ConsumerGroups *groups, const char *group_id, const char *member_id,
                             gint32 member_epoch)
{
    CGroup *group = group_find(groups, group_id);
    KSIM_ASSERT(group != NULL);
    if (member_epoch < 0 && group->members->len == 0)
        return KAFKA_ERROR_NONE;
    CMember *member = member_find(group, member_id);
    if (member == NULL)
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    if (member_epoch != member->member_epoch)
        return KAFKA_ERROR_STALE_MEMBER_EPOCH;
    return KAFKA_ERROR_NONE;
}

/* Sets the group to what `record` holds: its epochs, subscription metadata
 * and members, their session timers and the rebalance timers of those that
 * must revoke (Kafka's onLoaded); the members it had go. A topic that grew
 * since is seen at the next heartbeat, which bumps the epoch. */
static void
group_fill(ConsumerGroups *groups, CGroup *group, const GroupLogRecord *record)
{
    for (guint i = 0; i < group->members->len; i++)
        member_free(groups, g_ptr_array_index(group->members, i));
    g_ptr_array_set_size(group->members, 0);
    group->group_epoch = record->generation;
    group->target_epoch = record->target_epoch;
    g_array_set_size(group->metadata, 0);
    for (guint i = 0; i < record->metadata->len; i++) {
        const GroupLogTopic *topic = &g_array_index(record->metadata, GroupLogTopic, i);
        ServerAssignorTopic entry;
        KPROTO_SET_ID(entry.topic, topic->topic);
        entry.partitions = topic->partitions;
        g_array_append_val(group->metadata, entry);
    }
    for (guint i = 0; i < record->members->len; i++) {
        const GroupLogMember *m = &g_array_index(record->members, GroupLogMember, i);
        if (m->member_id[0] == '\0' || member_find(group, m->member_id) != NULL ||
            m->topics->len > CGROUP_TOPICS_MAX)
            continue;
        CMember *member = member_new(groups, group, m->member_id, NULL);
        member->state = m->state == MEMBER_UNREVOKED_PARTITIONS    ? MEMBER_UNREVOKED_PARTITIONS
                        : m->state == MEMBER_UNRELEASED_PARTITIONS ? MEMBER_UNRELEASED_PARTITIONS
                                                                   : MEMBER_STABLE;
        member->member_epoch = m->member_epoch;
        member->previous_member_epoch = m->previous_member_epoch;
        member->rebalance_timeout_ms = m->rebalance_timeout_ms;
        member->server_assignor = m->protocol;
        g_array_append_vals(member->topics, m->topics->data, m->topics->len);
        g_array_append_vals(member->assigned, m->assignment->data, m->assignment->len);
        g_array_append_vals(member->pending, m->pending->data, m->pending->len);
        g_array_append_vals(member->target, m->target->data, m->target->len);
    }
    for (guint i = 0; i < group->members->len; i++) {
        CMember *member = g_ptr_array_index(group->members, i);
        session_schedule(groups, member);
        rebalance_timer_update(groups, member, FALSE);
    }
}

void
consumer_groups_load(ConsumerGroups *groups, const GroupLogRecord *record)
{
    KSIM_ASSERT(record->consumer_protocol);
    if (group_find(groups, record->group_id) != NULL || record->members->len > CGROUP_MEMBERS_MAX)
        return;
    CGroup *group = group_new(groups, record->group_id);
    group_fill(groups, group, record);
    group->stored = group_encode(group);
}

void
consumer_groups_unload(ConsumerGroups *groups, gint32 partition)
{
    for (guint i = 0; i < groups->deferred->len;) {
        const Deferred *deferred = g_ptr_array_index(groups->deferred, i);
        if (deferred->partition == partition)
            send_deferred(groups, i, KAFKA_ERROR_NOT_COORDINATOR);
        else
            i++;
    }
    for (guint i = groups->groups->len; i > 0; i--) {
        CGroup *group = g_ptr_array_index(groups->groups, i - 1);
        if (group->partition != partition)
            continue;
        g_ptr_array_remove_index(groups->groups, i - 1);
        group_free(groups, group);
    }
}

void
consumer_groups_describe(const ConsumerGroups *groups, const char *group_id, GroupCoordInfo *out)
{
    const CGroup *group = group_find(groups, group_id);
    if (group == NULL)
        return;
    out->exists = TRUE;
    out->consumer_protocol = TRUE;
    out->state = group->members->len == 0 ? GROUP_STATE_EMPTY : GROUP_STATE_STABLE;
    out->generation = group->group_epoch;
    out->target_epoch = group->target_epoch;
    out->members = group->members->len;
    for (guint m = 0; m < group->members->len; m++) {
        const CMember *member = g_ptr_array_index(group->members, m);
        if (member->state != MEMBER_STABLE || member->member_epoch != group->target_epoch)
            out->state = GROUP_STATE_PREPARING_REBALANCE; /* Kafka's RECONCILING */
    }
}

ConsumerGroups *
consumer_groups_new(GroupCoord *coord)
{
    ConsumerGroups *groups = g_new0(ConsumerGroups, 1);
    groups->coord = coord;
    groups->groups = g_ptr_array_new();
    groups->deferred = g_ptr_array_new();
    return groups;
}

void
consumer_groups_free(ConsumerGroups *groups)
{
    if (groups == NULL)
        return;
    for (guint i = 0; i < groups->groups->len; i++)
        group_free(groups, g_ptr_array_index(groups->groups, i));
    g_ptr_array_free(groups->groups, TRUE);
    for (guint i = 0; i < groups->deferred->len; i++) {
        Deferred *deferred = g_ptr_array_index(groups->deferred, i);
        sim_msg_free(&deferred->response->base);
        g_free(deferred);
    }
    g_ptr_array_free(groups->deferred, TRUE);
    g_free(groups);
}

/* ---- invariants ---- */

static void
check_sorted(const GArray *tps)
{
    for (guint i = 1; i < tps->len; i++)
        KSIM_ASSERT(ktp_compare(&g_array_index(tps, KTopicPartition, i - 1),
                                &g_array_index(tps, KTopicPartition, i)) < 0);
}

static void
check_member(const ConsumerGroups *groups, const CGroup *group, const CMember *member)
{
    SimWorld *world = world_of(groups);
    KSIM_ASSERT(member->group == group);
    KSIM_ASSERT(member->member_epoch <= group->target_epoch);
    check_sorted(member->assigned);
    check_sorted(member->pending);
    check_sorted(member->target);
    KSIM_ASSERT((member->pending->len > 0) == (member->state == MEMBER_UNREVOKED_PARTITIONS));
    KSIM_ASSERT(sim_timer_pending(world, member->rebalance_timer) ==
                (member->state == MEMBER_UNREVOKED_PARTITIONS));
    KSIM_ASSERT(sim_timer_pending(world, member->session_timer));
    for (guint i = 0; i < member->pending->len; i++)
        KSIM_ASSERT(
            !tps_contain(member->assigned, &g_array_index(member->pending, KTopicPartition, i)));
    /* 4: no partition held twice (checked against later members). */
    for (guint m = 0; m < group->members->len; m++) {
        const CMember *other = g_ptr_array_index(group->members, m);
        if (other == member)
            continue;
        KSIM_ASSERT(!owns_any(member->assigned, other->assigned));
        KSIM_ASSERT(!owns_any(member->assigned, other->pending));
        KSIM_ASSERT(!owns_any(member->pending, other->pending));
    }
}

void
consumer_groups_check_invariants(const ConsumerGroups *groups)
{
    for (guint i = 0; i < groups->groups->len; i++) {
        const CGroup *group = g_ptr_array_index(groups->groups, i);
        if (i > 0)
            KSIM_ASSERT(strcmp(((const CGroup *)g_ptr_array_index(groups->groups, i - 1))->id,
                               group->id) < 0);
        KSIM_ASSERT(group_coord_check_coordinator(groups->coord, group->id) == KAFKA_ERROR_NONE);
        KSIM_ASSERT(group->target_epoch <= group->group_epoch);
        for (guint m = 0; m < group->members->len; m++) {
            const CMember *member = g_ptr_array_index(group->members, m);
            if (m > 0)
                KSIM_ASSERT(
                    strcmp(((const CMember *)g_ptr_array_index(group->members, m - 1))->member_id,
                           member->member_id) < 0);
            check_member(groups, group, member);
        }
    }
    /* 7. A deferred answer waits for a write of a group on its partition
     *    that has not ended: one no later than that group's last. */
    for (guint i = 0; i < groups->deferred->len; i++) {
        const Deferred *deferred = g_ptr_array_index(groups->deferred, i);
        gboolean waited = FALSE;
        for (guint g = 0; g < groups->groups->len && !waited; g++) {
            const CGroup *group = g_ptr_array_index(groups->groups, g);
            waited = group->partition == deferred->partition && group->last_write != 0 &&
                     deferred->write <= group->last_write;
        }
        KSIM_ASSERT(waited);
    }
}
