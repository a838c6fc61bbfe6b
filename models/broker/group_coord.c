/*
 * group_coord: the group coordinator of one broker process (see
 * group_coord.h for the protocol and the commit record encoding).
 *
 * Transitions, and the function that performs each:
 *   Empty/Stable/CompletingRebalance ──prepare_rebalance──▶ PreparingRebalance
 *   PreparingRebalance ──complete_join──▶ CompletingRebalance, or Empty
 *   CompletingRebalance ──group_stored (the leader's sync, once its group
 *     record is replicated)──▶ Stable; a failed store ──▶ PreparingRebalance
 *   (loaded) ──group_load──▶ Stable, or Empty without members
 *   any ──partition_resigned──▶ (freed; awaiting members get NOT_COORDINATOR)
 *
 * Invariants (group_coord_check_invariants):
 *  1. `partitions` is sorted by partition without duplicates, and holds
 *     exactly the __consumer_offsets partitions this broker leads.
 *  2. A partition is loaded exactly when its load timer is not pending, and
 *     its offsets cache exists only once loaded.
 *  3. `groups` is sorted by id without duplicates; every group's offsets
 *     partition is in `partitions` and loaded.
 *  4. A group's members are sorted by id without duplicates; it has a leader,
 *     one of them, exactly when it has members; Empty ⇔ no members.
 *  5. Members await a join only in PreparingRebalance, a sync only in
 *     CompletingRebalance; the join timer runs exactly in PreparingRebalance.
 *  6. Every pending commit belongs to a partition in `partitions`.
 *
 * Ownership: the GroupCoord owns its partitions, groups, members and pending
 * commits; timers point at them and are cancelled before they are freed
 * (a crash drops them with the node). A timer finds the coordinator through
 * its group (Group.coord), not through the broker.
 *
 * It sees its broker only through broker_services.h: the clock's world and
 * node, the broker's id and config, sending, FindCoordinator, the
 * replica manager's leadership and marker listeners, internal appends to
 * __consumer_offsets, and (for the views) the broker's group coordinator.
 */
#include "group_coord.h"

#include "broker_services.h"
#include "group_coord_classic.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* ---- lookups ---- */

static const BrokerConfig *
config_of(const GroupCoord *coord)
{
    return broker_services_config(coord->services);
}

gint32
classic_partition_of(const GroupCoord *coord, const char *group_id)
{
    return group_coord_partition_for(group_id, config_of(coord)->offsets_topic_num_partitions);
}

OffsetsPartition *
classic_offsets_partition_find(const GroupCoord *coord, gint32 partition)
{
    return coord_partition_find(coord->partitions, partition);
}

Group *
classic_group_find(const GroupCoord *coord, const char *group_id)
{
    for (guint i = 0; i < coord->groups->len; i++) {
        Group *group = g_ptr_array_index(coord->groups, i);
        if (strcmp(group->id, group_id) == 0)
            return group;
    }
    return NULL;
}

Member *
classic_member_find(const Group *group, const char *member_id)
{
    for (guint i = 0; i < group->members->len; i++) {
        Member *member = g_ptr_array_index(group->members, i);
        if (strcmp(member->member_id, member_id) == 0)
            return member;
    }
    return NULL;
}

/* NONE when this broker may serve the group now. */
static KafkaError
check_coordinator(const GroupCoord *coord, const char *group_id)
{
    if (group_id[0] == '\0')
        return KAFKA_ERROR_INVALID_GROUP_ID;
    const OffsetsPartition *op =
        classic_offsets_partition_find(coord, classic_partition_of(coord, group_id));
    if (op == NULL)
        return KAFKA_ERROR_NOT_COORDINATOR;
    if (op->offsets == NULL)
        return KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS;
    return KAFKA_ERROR_NONE;
}

KafkaError
group_coord_check_coordinator(const GroupCoord *coord, const char *group_id)
{
    return check_coordinator(coord, group_id);
}

gint32
group_coord_group_partition(const GroupCoord *coord, const char *group_id)
{
    return classic_partition_of(coord, group_id);
}

BrokerServices *
group_coord_services(const GroupCoord *coord)
{
    return coord->services;
}

gboolean
group_coord_classic_active(const GroupCoord *coord, const char *group_id)
{
    const Group *group = classic_group_find(coord, group_id);
    return group != NULL && group->members->len > 0;
}

ConsumerGroups *
group_coord_consumer_groups(const GroupCoord *coord)
{
    return coord->consumer;
}

/* ---- members and groups ---- */

SimWorld *
classic_world_of(const GroupCoord *coord)
{
    return broker_services_world(coord->services);
}

static void
member_free(GroupCoord *coord, Member *member)
{
    sim_timer_cancel(classic_world_of(coord), member->heartbeat_timer);
    g_array_free(member->topics, TRUE);
    g_array_free(member->owned, TRUE);
    g_array_free(member->assignment, TRUE);
    g_free(member->member_id);
    g_free(member->client_id);
    g_free(member);
}

static void
group_free(GroupCoord *coord, Group *group)
{
    sim_timer_cancel(classic_world_of(coord), group->join_timer);
    for (guint i = 0; i < group->members->len; i++)
        member_free(coord, g_ptr_array_index(group->members, i));
    g_ptr_array_free(group->members, TRUE);
    g_free(group->id);
    g_free(group);
}

static gint
group_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(Group *const *)a)->id, (*(Group *const *)b)->id);
}

static gint
member_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(Member *const *)a)->member_id, (*(Member *const *)b)->member_id);
}

Group *
classic_group_new(GroupCoord *coord, const char *group_id)
{
    Group *group = g_new0(Group, 1);
    group->coord = coord;
    group->id = g_strdup(group_id);
    group->partition = classic_partition_of(coord, group_id);
    group->state = GROUP_STATE_EMPTY;
    group->protocol = -1;
    group->members = g_ptr_array_new();
    group->join_timer = SIM_EVENT_ID_NONE;
    g_ptr_array_add(coord->groups, group);
    g_ptr_array_sort(coord->groups, group_compare);
    return group;
}

static gint32
rebalance_timeout_ms(const Group *group)
{
    gint32 timeout = 0;
    for (guint i = 0; i < group->members->len; i++)
        timeout = MAX(timeout,
                      ((const Member *)g_ptr_array_index(group->members, i))->rebalance_timeout_ms);
    return timeout;
}

static void heartbeat_expired(SimWorld *world, void *ctx, void *arg);

/* Kafka's completeAndScheduleNextHeartbeatExpiration. */
void
classic_heartbeat_schedule(GroupCoord *coord, Member *member)
{
    sim_timer_cancel(classic_world_of(coord), member->heartbeat_timer);
    member->heartbeat_timer = sim_timer_set(
        classic_world_of(coord), broker_services_node(coord->services),
        (gint64)member->session_timeout_ms * SIM_NS_PER_MS, heartbeat_expired, member);
}

static gint
topic_name_compare(gconstpointer a, gconstpointer b)
{
    return strcmp(((const KTopicName *)a)->name, ((const KTopicName *)b)->name);
}

static void
set_subscription(Member *member, const KJoinGroupRequest *request)
{
    g_array_set_size(member->topics, 0);
    g_array_append_vals(member->topics, request->topics->data, request->topics->len);
    g_array_sort(member->topics, topic_name_compare);
    g_array_set_size(member->owned, 0);
    g_array_append_vals(member->owned, request->owned->data, request->owned->len);
    member->protocol = request->protocol;
    member->owned_generation = request->owned_generation;
    member->session_timeout_ms = request->session_timeout_ms;
    member->rebalance_timeout_ms = request->rebalance_timeout_ms;
}

/* TRUE when the request's subscription or protocol differs from the
 * member's. Kafka compares the protocol metadata byte for byte, and the
 * consumer's (ConsumerProtocolSubscription) carries the owned partitions and
 * their generation too: a cooperative member that revoked partitions and
 * rejoins changes it, and so starts the rebalance that gives them out. */
static gboolean
subscription_changed(const Member *member, const KJoinGroupRequest *request)
{
    if (member->protocol != request->protocol || member->topics->len != request->topics->len ||
        member->owned_generation != request->owned_generation ||
        member->owned->len != request->owned->len)
        return TRUE;
    for (guint i = 0; i < member->owned->len; i++) {
        if (ktp_compare(&g_array_index(member->owned, KTopicPartition, i),
                        &g_array_index(request->owned, KTopicPartition, i)) != 0)
            return TRUE;
    }
    g_autoptr(GArray) sorted = g_array_copy(request->topics);
    g_array_sort(sorted, topic_name_compare);
    for (guint i = 0; i < sorted->len; i++) {
        if (topic_name_compare(&g_array_index(sorted, KTopicName, i),
                               &g_array_index(member->topics, KTopicName, i)) != 0)
            return TRUE;
    }
    return FALSE;
}

/* Kafka's supportsProtocols: every other member speaks `protocol`. */
static gboolean
protocol_supported(const Group *group, const Member *self, gint32 protocol)
{
    for (guint i = 0; i < group->members->len; i++) {
        const Member *member = g_ptr_array_index(group->members, i);
        if (member != self && member->protocol != protocol)
            return FALSE;
    }
    return TRUE;
}

/* ---- responses ---- */

static void
join_respond_error(GroupCoord *coord, SimNodeId to, gint32 correlation_id, const char *member_id,
                   KafkaError error)
{
    KJoinGroupResponse *response = kproto_new(KMSG_JOIN_GROUP_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->generation_id = KAFKA_GENERATION_NONE;
    response->protocol = -1;
    KPROTO_SET_ID(response->member_id, member_id);
    broker_services_send(coord->services, to, &response->base);
}

/* The JoinGroup answer of the group's current generation; the leader's
 * lists every member's subscription. */
static void
join_respond(GroupCoord *coord, const Group *group, const Member *member, SimNodeId to,
             gint32 correlation_id)
{
    KJoinGroupResponse *response = kproto_new(KMSG_JOIN_GROUP_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = KAFKA_ERROR_NONE;
    response->generation_id = group->generation;
    response->protocol = group->protocol;
    KPROTO_SET_ID(response->leader_id, group->leader->member_id);
    KPROTO_SET_ID(response->member_id, member->member_id);
    for (guint i = 0; member == group->leader && i < group->members->len; i++) {
        const Member *m = g_ptr_array_index(group->members, i);
        KMemberGeneration generation = {{0}, m->owned_generation};
        KPROTO_SET_ID(generation.member_id, m->member_id);
        g_array_append_val(response->members, generation);
        for (guint t = 0; t < m->topics->len; t++) {
            KMemberTopic topic = {{0}, {0}};
            KPROTO_SET_ID(topic.member_id, m->member_id);
            KPROTO_SET_ID(topic.topic, g_array_index(m->topics, KTopicName, t).name);
            g_array_append_val(response->subscriptions, topic);
        }
        for (guint p = 0; p < m->owned->len; p++) {
            KMemberPartition owned = {{0}, g_array_index(m->owned, KTopicPartition, p)};
            KPROTO_SET_ID(owned.member_id, m->member_id);
            g_array_append_val(response->owned, owned);
        }
    }
    kproto_update_size(&response->base);
    broker_services_send(coord->services, to, &response->base);
}

static void
sync_respond(GroupCoord *coord, SimNodeId to, gint32 correlation_id, KafkaError error,
             const GArray *assignment)
{
    KSyncGroupResponse *response = kproto_new(KMSG_SYNC_GROUP_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    if (error == KAFKA_ERROR_NONE)
        g_array_append_vals(response->assignment, assignment->data, assignment->len);
    kproto_update_size(&response->base);
    broker_services_send(coord->services, to, &response->base);
}

static void
group_respond(GroupCoord *coord, SimNodeId to, KafkaMsgType type, gint32 correlation_id,
              KafkaError error)
{
    KGroupResponse *response = kproto_new(type);
    response->correlation_id = correlation_id;
    response->error = error;
    broker_services_send(coord->services, to, &response->base);
}

/* ---- rebalancing ---- */

static void join_timer_fired(SimWorld *world, void *ctx, void *arg);
static void store_group(GroupCoord *coord, const Group *group, const GArray *assignments);

static guint
awaiting_join_count(const Group *group)
{
    guint n = 0;
    for (guint i = 0; i < group->members->len; i++)
        n += ((const Member *)g_ptr_array_index(group->members, i))->awaiting_join ? 1 : 0;
    return n;
}

/* Kafka's onCompleteJoin: members that did not rejoin are removed, the
 * generation advances, and every member gets its JoinGroup answer. */
static void
complete_join(GroupCoord *coord, Group *group)
{
    KSIM_ASSERT(group->state == GROUP_STATE_PREPARING_REBALANCE);
    sim_timer_cancel(classic_world_of(coord), group->join_timer);
    group->join_timer = SIM_EVENT_ID_NONE;
    for (guint i = group->members->len; i > 0; i--) {
        Member *member = g_ptr_array_index(group->members, i - 1);
        if (member->awaiting_join)
            continue;
        if (group->leader == member)
            group->leader = NULL;
        g_ptr_array_remove_index(group->members, i - 1);
        member_free(coord, member);
    }
    if (group->leader == NULL && group->members->len > 0)
        group->leader = g_ptr_array_index(group->members, 0);
    group->generation++;
    group->new_member_added = FALSE;
    group->initial_delay = FALSE;
    if (group->members->len == 0) {
        /* Kafka stores the empty group; a failed store is only logged. */
        group->state = GROUP_STATE_EMPTY;
        group->protocol = -1;
        g_autoptr(GArray) none = g_array_new(FALSE, FALSE, sizeof(KMemberPartition));
        store_group(coord, group, none);
        return;
    }
    group->state = GROUP_STATE_COMPLETING_REBALANCE;
    group->protocol = group->leader->protocol;
    for (guint i = 0; i < group->members->len; i++) {
        Member *member = g_ptr_array_index(group->members, i);
        member->awaiting_join = FALSE;
        g_array_set_size(member->assignment, 0);
        join_respond(coord, group, member, member->join_node, member->join_correlation);
        classic_heartbeat_schedule(coord, member);
    }
}

/* Kafka's DelayedJoin.tryComplete: done once every member has rejoined. The
 * initial delayed join never completes early. */
static void
try_complete_join(GroupCoord *coord, Group *group)
{
    if (group->state != GROUP_STATE_PREPARING_REBALANCE || group->initial_delay)
        return;
    if (awaiting_join_count(group) == group->members->len)
        complete_join(coord, group);
}

static void
join_timer_fired(SimWorld *world, void *ctx, void *arg)
{
    Group *group = arg;
    GroupCoord *coord = group->coord;
    (void)ctx;
    group->join_timer = SIM_EVENT_ID_NONE;
    gint64 initial_ms = config_of(coord)->group_initial_rebalance_delay_ms;
    if (group->initial_delay && group->new_member_added && group->initial_remaining_ms > 0) {
        /* Kafka's InitialDelayedJoin: members keep arriving, wait again. */
        group->new_member_added = FALSE;
        gint64 delay_ms = MIN(initial_ms, group->initial_remaining_ms);
        group->initial_remaining_ms -= delay_ms;
        group->join_timer = sim_timer_set(world, broker_services_node(coord->services),
                                          delay_ms * SIM_NS_PER_MS, join_timer_fired, group);
        return;
    }
    complete_join(coord, group);
}

/* Members waiting for a sync of a generation that will not complete. */
static void
fail_awaiting_sync(GroupCoord *coord, Group *group, KafkaError error)
{
    for (guint i = 0; i < group->members->len; i++) {
        Member *member = g_ptr_array_index(group->members, i);
        if (!member->awaiting_sync)
            continue;
        member->awaiting_sync = FALSE;
        sync_respond(coord, member->sync_node, member->sync_correlation, error, NULL);
    }
}

/* Kafka's prepareRebalance. */
static void
prepare_rebalance(GroupCoord *coord, Group *group)
{
    KSIM_ASSERT(group->state != GROUP_STATE_PREPARING_REBALANCE);
    if (group->state == GROUP_STATE_COMPLETING_REBALANCE)
        fail_awaiting_sync(coord, group, KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    gint64 rebalance_ms = rebalance_timeout_ms(group);
    gint64 delay_ms = rebalance_ms;
    group->initial_delay = group->state == GROUP_STATE_EMPTY;
    if (group->initial_delay) {
        delay_ms = config_of(coord)->group_initial_rebalance_delay_ms;
        group->initial_remaining_ms = MAX(rebalance_ms - delay_ms, 0);
    }
    group->state = GROUP_STATE_PREPARING_REBALANCE;
    group->join_timer =
        sim_timer_set(classic_world_of(coord), broker_services_node(coord->services),
                      delay_ms * SIM_NS_PER_MS, join_timer_fired, group);
    try_complete_join(coord, group);
}

static void
maybe_prepare_rebalance(GroupCoord *coord, Group *group)
{
    if (group->state == GROUP_STATE_PREPARING_REBALANCE)
        try_complete_join(coord, group);
    else if (group->state != GROUP_STATE_DEAD)
        prepare_rebalance(coord, group);
}

/* Kafka's removeMemberAndUpdateGroup (a leave or a session expiry). */
static void
remove_member(GroupCoord *coord, Group *group, Member *member)
{
    gboolean removed = g_ptr_array_remove(group->members, member);
    KSIM_ASSERT(removed);
    if (group->leader == member)
        group->leader = group->members->len > 0 ? g_ptr_array_index(group->members, 0) : NULL;
    if (member->awaiting_join)
        join_respond_error(coord, member->join_node, member->join_correlation, member->member_id,
                           KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    if (member->awaiting_sync)
        sync_respond(coord, member->sync_node, member->sync_correlation,
                     KAFKA_ERROR_UNKNOWN_MEMBER_ID, NULL);
    member_free(coord, member);
    if (group->state == GROUP_STATE_STABLE || group->state == GROUP_STATE_COMPLETING_REBALANCE)
        prepare_rebalance(coord, group);
    else if (group->state == GROUP_STATE_PREPARING_REBALANCE)
        try_complete_join(coord, group);
}

static void
heartbeat_expired(SimWorld *world, void *ctx, void *arg)
{
    Member *member = arg;
    (void)world;
    (void)ctx;
    GroupCoord *coord = member->group->coord;
    member->heartbeat_timer = SIM_EVENT_ID_NONE;
    /* Kafka's shouldKeepAlive: a member whose join or sync waits is kept;
     * the rebalance timeout deals with it. */
    if (member->awaiting_join || member->awaiting_sync) {
        classic_heartbeat_schedule(coord, member);
        return;
    }
    remove_member(coord, member->group, member);
}

/* ---- JoinGroup ---- */

/* A member of `group` with id `member_id` (taken) and nothing subscribed,
 * in the group's sorted members. */
Member *
classic_member_add(Group *group, char *member_id, const char *client_id)
{
    KSIM_ASSERT(group->members->len < GROUP_MEMBERS_MAX);
    KSIM_ASSERT(strlen(member_id) <= KAFKA_MEMBER_ID_MAX);
    Member *member = g_new0(Member, 1);
    member->member_id = member_id;
    member->client_id = g_strdup(client_id);
    member->group = group;
    member->topics = g_array_new(FALSE, FALSE, sizeof(KTopicName));
    member->owned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->assignment = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    member->heartbeat_timer = SIM_EVENT_ID_NONE;
    g_ptr_array_add(group->members, member);
    g_ptr_array_sort(group->members, member_compare);
    return member;
}

static Member *
member_new(GroupCoord *coord, Group *group, const KJoinGroupRequest *request)
{
    SimWorld *world = classic_world_of(coord);
    KSIM_ASSERT(request->topics->len <= GROUP_TOPICS_MAX);
    char *member_id = g_strdup_printf(
        "%s-%d-%u-%" G_GUINT64_FORMAT, request->client_id[0] ? request->client_id : "consumer",
        broker_services_broker_id(coord->services),
        sim_node_incarnation(world, broker_services_node(coord->services)), ++coord->member_next);
    Member *member = classic_member_add(group, member_id, request->client_id);
    set_subscription(member, request);
    if (group->leader == NULL)
        group->leader = member;
    return member;
}

static void
await_join(Member *member, SimNodeId from, gint32 correlation_id)
{
    member->awaiting_join = TRUE;
    member->join_node = from;
    member->join_correlation = correlation_id;
}

static void
join_new_member(GroupCoord *coord, Group *group, SimNodeId from, const KJoinGroupRequest *request)
{
    if (!protocol_supported(group, NULL, request->protocol)) {
        join_respond_error(coord, from, request->correlation_id, "",
                           KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    Member *member = member_new(coord, group, request);
    await_join(member, from, request->correlation_id);
    group->new_member_added = TRUE;
    classic_heartbeat_schedule(coord, member);
    maybe_prepare_rebalance(coord, group);
}

static void
join_known_member(GroupCoord *coord, Group *group, Member *member, SimNodeId from,
                  const KJoinGroupRequest *request)
{
    if (!protocol_supported(group, member, request->protocol)) {
        join_respond_error(coord, from, request->correlation_id, member->member_id,
                           KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    gboolean changed = subscription_changed(member, request);
    switch (group->state) {
    case GROUP_STATE_PREPARING_REBALANCE:
        set_subscription(member, request);
        await_join(member, from, request->correlation_id);
        try_complete_join(coord, group);
        return;
    case GROUP_STATE_COMPLETING_REBALANCE:
    case GROUP_STATE_STABLE:
        /* A follower that rejoins with nothing changed gets the current
         * generation back; the leader, or a changed subscription, starts a
         * rebalance. */
        if (!changed &&
            (group->state == GROUP_STATE_COMPLETING_REBALANCE || member != group->leader)) {
            classic_heartbeat_schedule(coord, member);
            join_respond(coord, group, member, from, request->correlation_id);
            return;
        }
        set_subscription(member, request);
        await_join(member, from, request->correlation_id);
        prepare_rebalance(coord, group);
        return;
    case GROUP_STATE_EMPTY:
    case GROUP_STATE_DEAD:
        break;
    }
    join_respond_error(coord, from, request->correlation_id, request->member_id,
                       KAFKA_ERROR_UNKNOWN_MEMBER_ID);
}

static void
handle_join(GroupCoord *coord, SimNodeId from, const KJoinGroupRequest *request)
{
    const BrokerConfig *config = config_of(coord);
    KafkaError error = check_coordinator(coord, request->group_id);
    if (error == KAFKA_ERROR_NONE &&
        (request->session_timeout_ms < config->group_min_session_timeout_ms ||
         request->session_timeout_ms > config->group_max_session_timeout_ms))
        error = KAFKA_ERROR_INVALID_SESSION_TIMEOUT;
    if (error == KAFKA_ERROR_NONE && consumer_groups_exists(coord->consumer, request->group_id))
        error = KAFKA_ERROR_INCONSISTENT_GROUP_PROTOCOL; /* a KIP-848 group's id */
    Group *group = error == KAFKA_ERROR_NONE ? classic_group_find(coord, request->group_id) : NULL;
    if (error == KAFKA_ERROR_NONE && group == NULL) {
        if (request->member_id[0] != '\0')
            error = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
        else
            group = classic_group_new(coord, request->group_id);
    }
    if (error != KAFKA_ERROR_NONE) {
        join_respond_error(coord, from, request->correlation_id, request->member_id, error);
        return;
    }
    if (request->member_id[0] == '\0') {
        join_new_member(coord, group, from, request);
        return;
    }
    Member *member = classic_member_find(group, request->member_id);
    if (member == NULL) {
        join_respond_error(coord, from, request->correlation_id, request->member_id,
                           KAFKA_ERROR_UNKNOWN_MEMBER_ID);
        return;
    }
    join_known_member(coord, group, member, from, request);
}

/* ---- SyncGroup, Heartbeat, LeaveGroup ---- */

/* The leader's assignment becomes every member's; those waiting get it. */
static void
propagate_assignment(GroupCoord *coord, Group *group, const GArray *assignments)
{
    for (guint i = 0; i < group->members->len; i++) {
        Member *member = g_ptr_array_index(group->members, i);
        g_array_set_size(member->assignment, 0);
        for (guint a = 0; a < assignments->len; a++) {
            const KMemberPartition *entry = &g_array_index(assignments, KMemberPartition, a);
            if (strcmp(entry->member_id, member->member_id) == 0)
                g_array_append_val(member->assignment, entry->tp);
        }
    }
    group->state = GROUP_STATE_STABLE;
    for (guint i = 0; i < group->members->len; i++) {
        Member *member = g_ptr_array_index(group->members, i);
        if (member->awaiting_sync) {
            member->awaiting_sync = FALSE;
            sync_respond(coord, member->sync_node, member->sync_correlation, KAFKA_ERROR_NONE,
                         member->assignment);
        }
        classic_heartbeat_schedule(coord, member);
    }
}

/* Checks common to SyncGroup, Heartbeat and OffsetCommit from a member. */
static KafkaError
check_member(const Group *group, const char *member_id, gint32 generation_id, Member **out)
{
    *out = group != NULL ? classic_member_find(group, member_id) : NULL;
    if (*out == NULL || group->state == GROUP_STATE_EMPTY || group->state == GROUP_STATE_DEAD)
        return KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    if (generation_id != group->generation)
        return KAFKA_ERROR_ILLEGAL_GENERATION;
    return KAFKA_ERROR_NONE;
}

static void
handle_sync(GroupCoord *coord, SimNodeId from, const KSyncGroupRequest *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    Group *group = error == KAFKA_ERROR_NONE ? classic_group_find(coord, request->group_id) : NULL;
    Member *member = NULL;
    if (error == KAFKA_ERROR_NONE)
        error = check_member(group, request->member_id, request->generation_id, &member);
    if (error == KAFKA_ERROR_NONE && group->state == GROUP_STATE_PREPARING_REBALANCE)
        error = KAFKA_ERROR_REBALANCE_IN_PROGRESS;
    if (error != KAFKA_ERROR_NONE) {
        sync_respond(coord, from, request->correlation_id, error, NULL);
        return;
    }
    if (group->state == GROUP_STATE_STABLE) {
        classic_heartbeat_schedule(coord, member);
        sync_respond(coord, from, request->correlation_id, KAFKA_ERROR_NONE, member->assignment);
        return;
    }
    KSIM_ASSERT(group->state == GROUP_STATE_COMPLETING_REBALANCE);
    member->awaiting_sync = TRUE;
    member->sync_node = from;
    member->sync_correlation = request->correlation_id;
    /* The leader's assignment is stored first (Kafka's doSyncGroup): the
     * members get it once the group record is replicated (group_stored). */
    if (member == group->leader)
        store_group(coord, group, request->assignments);
}

static void
handle_heartbeat(GroupCoord *coord, SimNodeId from, const KGroupRequest *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    Group *group = error == KAFKA_ERROR_NONE ? classic_group_find(coord, request->group_id) : NULL;
    Member *member = NULL;
    if (error == KAFKA_ERROR_NONE)
        error = check_member(group, request->member_id, request->generation_id, &member);
    if (error == KAFKA_ERROR_NONE) {
        classic_heartbeat_schedule(coord, member);
        if (group->state == GROUP_STATE_PREPARING_REBALANCE)
            error = KAFKA_ERROR_REBALANCE_IN_PROGRESS;
    }
    group_respond(coord, from, KMSG_HEARTBEAT_RESPONSE, request->correlation_id, error);
}

static void
handle_leave(GroupCoord *coord, SimNodeId from, const KGroupRequest *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    Group *group = error == KAFKA_ERROR_NONE ? classic_group_find(coord, request->group_id) : NULL;
    Member *member = group != NULL ? classic_member_find(group, request->member_id) : NULL;
    if (error == KAFKA_ERROR_NONE && member == NULL)
        error = KAFKA_ERROR_UNKNOWN_MEMBER_ID;
    if (error == KAFKA_ERROR_NONE)
        remove_member(coord, group, member);
    group_respond(coord, from, KMSG_LEAVE_GROUP_RESPONSE, request->correlation_id, error);
}

/* ---- offsets ---- */

static void
offsets_respond(GroupCoord *coord, SimNodeId to, KafkaMsgType type, gint32 correlation_id,
                KafkaError error, const GArray *partitions)
{
    KOffsetMessage *response = kproto_new(type);
    response->correlation_id = correlation_id;
    response->error = error;
    g_array_append_vals(response->partitions, partitions->data, partitions->len);
    for (guint i = 0; error != KAFKA_ERROR_NONE && i < response->partitions->len; i++)
        g_array_index(response->partitions, KOffsetPartition, i).error = error;
    kproto_update_size(&response->base);
    broker_services_send(coord->services, to, &response->base);
}

static PendingCommit *
pending_take(GroupCoord *coord, guint64 id)
{
    for (guint i = 0; i < coord->pending->len; i++) {
        PendingCommit *pending = g_ptr_array_index(coord->pending, i);
        if (pending->id == id)
            return g_ptr_array_steal_index(coord->pending, i);
    }
    return NULL;
}

static void
pending_free(PendingCommit *pending)
{
    g_array_free(pending->offsets, TRUE);
    if (pending->assignments != NULL)
        g_array_free(pending->assignments, TRUE);
    g_free(pending);
}

static PendingCommit *
pending_new(GroupCoord *coord, const char *group_id, SimNodeId client, gint32 correlation_id)
{
    PendingCommit *pending = g_new0(PendingCommit, 1);
    pending->id = ++coord->commit_next;
    pending->partition = classic_partition_of(coord, group_id);
    KPROTO_SET_ID(pending->group_id, group_id);
    pending->client = client;
    pending->correlation_id = correlation_id;
    pending->offsets = g_array_new(FALSE, FALSE, sizeof(KOffsetPartition));
    pending->producer_id = -1;
    return pending;
}

void
classic_cache_put(OffsetsPartition *op, guint64 key, guint64 value)
{
    g_hash_table_replace(op->offsets, g_memdup2(&key, sizeof key), g_memdup2(&value, sizeof value));
}

/* The commit value cached for `key`, or NULL. */
const guint64 *
classic_cache_get(const OffsetsPartition *op, guint64 key)
{
    return g_hash_table_lookup(op->offsets, &key);
}

static KafkaMsgType
commit_response_type(const PendingCommit *pending)
{
    return pending->producer_id >= 0 ? KMSG_TXN_OFFSET_COMMIT_RESPONSE
                                     : KMSG_OFFSET_COMMIT_RESPONSE;
}

void
classic_txn_pending_put(OffsetsPartition *op, gint64 producer_id, guint64 key, guint64 value)
{
    KSIM_ASSERT(op->txn_pending->len < TXN_PENDING_MAX);
    TxnPendingOffset entry = {producer_id, key, value};
    g_array_append_val(op->txn_pending, entry);
}

/* The producer's transaction ended: its offsets, in commit order, become
 * the committed ones (commit) or are forgotten (abort). */
/* TRUE when a transaction's offset for `key` awaits its marker. */
static gboolean
txn_pending_has(const OffsetsPartition *op, guint64 key)
{
    for (guint i = 0; i < op->txn_pending->len; i++) {
        if (g_array_index(op->txn_pending, TxnPendingOffset, i).key == key)
            return TRUE;
    }
    return FALSE;
}

void
classic_txn_pending_complete(OffsetsPartition *op, gint64 producer_id, gboolean committed)
{
    guint kept = 0;
    for (guint i = 0; i < op->txn_pending->len; i++) {
        TxnPendingOffset entry = g_array_index(op->txn_pending, TxnPendingOffset, i);
        if (entry.producer_id != producer_id) {
            g_array_index(op->txn_pending, TxnPendingOffset, kept++) = entry;
            continue;
        }
        if (committed)
            classic_cache_put(op, entry.key, entry.value);
    }
    g_array_set_size(op->txn_pending, kept);
}

/* TRUE while a TxnOffsetCommit of `key` is being appended: Kafka prepares
 * the pending transactional offsets before the append, so a stable read
 * waits for it as for a commit awaiting its marker. */
static gboolean
txn_commit_in_flight(const GroupCoord *coord, guint64 key)
{
    for (guint i = 0; i < coord->pending->len; i++) {
        const PendingCommit *pending = g_ptr_array_index(coord->pending, i);
        if (pending->producer_id < 0)
            continue;
        for (guint k = 0; k < pending->offsets->len; k++) {
            const KOffsetPartition *entry = &g_array_index(pending->offsets, KOffsetPartition, k);
            if (group_coord_offset_key(pending->group_id, entry->tp.topic, entry->tp.partition) ==
                key)
                return TRUE;
        }
    }
    return FALSE;
}

/* Kafka's GroupMetadataManager.storeOffsets error mapping. */
static KafkaError
commit_error(KafkaError append_error)
{
    switch (append_error) {
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
    case KAFKA_ERROR_NOT_ENOUGH_REPLICAS:
    case KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    case KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER:
    case KAFKA_ERROR_KAFKA_STORAGE_ERROR:
        return KAFKA_ERROR_NOT_COORDINATOR;
    default:
        return append_error;
    }
}

static void group_stored(GroupCoord *coord, const PendingCommit *pending, KafkaError append_error);

static void
commit_appended(void *user_data, KafkaError append_error, gint64 base_offset, guint64 id)
{
    GroupCoord *coord = user_data;
    (void)base_offset;
    PendingCommit *pending = pending_take(coord, id);
    if (pending == NULL)
        return;
    if (pending->assignments != NULL) {
        group_stored(coord, pending, append_error);
        pending_free(pending);
        return;
    }
    if (pending->answer != NULL) {
        pending->answer(pending->answer_ctx, pending->id, append_error);
        pending_free(pending);
        return;
    }
    KafkaError error = commit_error(append_error);
    if (error == KAFKA_ERROR_NONE) {
        OffsetsPartition *op = classic_offsets_partition_find(coord, pending->partition);
        /* Appended and replicated by this leader: still its partition. */
        KSIM_ASSERT(op != NULL);
        KSIM_ASSERT(op->offsets != NULL);
        for (guint i = 0; i < pending->offsets->len; i++) {
            const KOffsetPartition *entry = &g_array_index(pending->offsets, KOffsetPartition, i);
            guint64 key =
                group_coord_offset_key(pending->group_id, entry->tp.topic, entry->tp.partition);
            guint64 value = group_coord_commit_value(entry->offset, entry->leader_epoch);
            if (pending->producer_id >= 0)
                classic_txn_pending_put(op, pending->producer_id, key, value);
            else
                classic_cache_put(op, key, value);
        }
    }
    if (pending->client != SIM_NODE_NONE)
        offsets_respond(coord, pending->client, commit_response_type(pending),
                        pending->correlation_id, error, pending->offsets);
    pending_free(pending);
}

/* The size Kafka's offset commit record (key v1, value v3) takes. */
static guint32
commit_record_bytes(const char *group_id, const char *topic)
{
    return (guint32)(2 + 2 + strlen(group_id) + 2 + strlen(topic) + 4 + 2 + 8 + 4 + 2 + 8 + 8);
}

/* Appends `batch` for `pending` (which the coordinator then owns) to the
 * group's offsets partition as Kafka's appendForGroup does: acks=-1 within
 * offsets.commit.timeout.ms; commit_appended takes the answer. */
static void
append_for_group(GroupCoord *coord, PendingCommit *pending, PlogBatch *batch)
{
    g_ptr_array_add(coord->pending, pending);
    KTopicPartition tp;
    ktp_set(&tp, GROUP_OFFSETS_TOPIC, pending->partition);
    /* The answer may come before this returns (a one-replica ISR). */
    broker_services_append_internal(coord->services, &tp, batch,
                                    config_of(coord)->offsets_commit_timeout_ms, commit_appended,
                                    coord, pending->id);
}

static void
store_offsets(GroupCoord *coord, SimNodeId from, const KOffsetMessage *request)
{
    PendingCommit *pending = pending_new(coord, request->group_id, from, request->correlation_id);
    g_array_append_vals(pending->offsets, request->partitions->data, request->partitions->len);
    g_autoptr(PlogBatch) batch = plog_batch_new();
    if (request->base.type == KMSG_TXN_OFFSET_COMMIT_REQUEST) {
        /* Kafka writes a TxnOffsetCommit as a transactional batch of the
         * producer: the markers decide whether it counts. */
        pending->producer_id = request->producer_id;
        batch->producer_id = request->producer_id;
        batch->producer_epoch = request->producer_epoch;
        batch->attributes = PLOG_BATCH_TRANSACTIONAL;
    }
    for (guint i = 0; i < request->partitions->len; i++) {
        const KOffsetPartition *entry = &g_array_index(request->partitions, KOffsetPartition, i);
        KSIM_ASSERT(entry->offset >= 0);
        plog_batch_add_record(
            batch, group_coord_offset_key(request->group_id, entry->tp.topic, entry->tp.partition),
            group_coord_commit_value(entry->offset, entry->leader_epoch),
            commit_record_bytes(request->group_id, entry->tp.topic));
    }
    append_for_group(coord, pending, batch);
}

/* Kafka's GroupMetadataManager.storeGroup: the group's generation, members
 * and `assignments` (KMemberPartition; the leader's SyncGroup, or none for a
 * group left empty) as one group metadata record. */
static void
store_group(GroupCoord *coord, const Group *group, const GArray *assignments)
{
    GroupLogRecord record;
    group_log_record_init(&record, group->id);
    record.generation = group->generation;
    record.protocol = group->protocol;
    for (guint i = 0; i < group->members->len; i++) {
        const Member *member = g_ptr_array_index(group->members, i);
        GroupLogMember *m = group_log_record_add_member(&record, member->member_id);
        g_strlcpy(m->client_id, member->client_id, sizeof m->client_id);
        m->session_timeout_ms = member->session_timeout_ms;
        m->rebalance_timeout_ms = member->rebalance_timeout_ms;
        m->protocol = member->protocol;
        m->owned_generation = member->owned_generation;
        g_array_append_vals(m->topics, member->topics->data, member->topics->len);
        g_array_append_vals(m->owned, member->owned->data, member->owned->len);
        for (guint a = 0; a < assignments->len; a++) {
            const KMemberPartition *entry = &g_array_index(assignments, KMemberPartition, a);
            if (strcmp(entry->member_id, member->member_id) == 0)
                g_array_append_val(m->assignment, entry->tp);
        }
        if (member == group->leader)
            record.leader = (gint32)i;
    }
    g_autoptr(PlogBatch) batch = group_coord_encode_group(&record);
    group_log_record_clear(&record);
    PendingCommit *pending = pending_new(coord, group->id, SIM_NODE_NONE, 0);
    pending->generation = group->generation;
    pending->assignments =
        g_array_sized_new(FALSE, FALSE, sizeof(KMemberPartition), assignments->len);
    g_array_append_vals(pending->assignments, assignments->data, assignments->len);
    append_for_group(coord, pending, batch);
}

void
group_coord_append_group_record(GroupCoord *coord, const char *group_id, PlogBatch *batch,
                                GroupRecordAnswer answer, void *ctx, guint64 *id)
{
    PendingCommit *pending = pending_new(coord, group_id, SIM_NODE_NONE, 0);
    pending->answer = answer;
    pending->answer_ctx = ctx;
    *id = pending->id;
    append_for_group(coord, pending, batch);
}

KafkaError
group_coord_write_error(KafkaError append_error)
{
    return append_error == KAFKA_ERROR_REQUEST_TIMED_OUT ? KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE
                                                         : commit_error(append_error);
}

/* The answer to store_group (Kafka 3.9's GroupCoordinator.doSyncGroup
 * callback): a group still completing the stored generation becomes Stable
 * with the stored assignment; an error (storeGroup's mapping of it) fails
 * the waiting SyncGroups with empty assignments and starts a rebalance
 * (resetAndPropagateAssignmentError, maybePrepareRebalance). A group that
 * moved on, or was left empty, ignores it. */
static void
group_stored(GroupCoord *coord, const PendingCommit *pending, KafkaError append_error)
{
    Group *group = classic_group_find(coord, pending->group_id);
    if (group == NULL || group->state != GROUP_STATE_COMPLETING_REBALANCE ||
        group->generation != pending->generation)
        return;
    KafkaError error = append_error == KAFKA_ERROR_REQUEST_TIMED_OUT
                           ? KAFKA_ERROR_REBALANCE_IN_PROGRESS
                           : commit_error(append_error);
    if (error == KAFKA_ERROR_NONE) {
        propagate_assignment(coord, group, pending->assignments);
        return;
    }
    for (guint i = 0; i < group->members->len; i++)
        g_array_set_size(((Member *)g_ptr_array_index(group->members, i))->assignment, 0);
    fail_awaiting_sync(coord, group, error);
    maybe_prepare_rebalance(coord, group);
}

/* Kafka's handleCommitOffsets: the error that refuses the commit, or NONE. */
static KafkaError
check_commit(GroupCoord *coord, const KOffsetMessage *request)
{
    /* A KIP-848 group validates the member epoch the commit carries. */
    if (consumer_groups_exists(coord->consumer, request->group_id))
        return consumer_groups_check_commit(coord->consumer, request->group_id, request->member_id,
                                            request->generation_id);
    Group *group = classic_group_find(coord, request->group_id);
    if (group == NULL) {
        if (request->generation_id >= 0)
            return KAFKA_ERROR_ILLEGAL_GENERATION;
        /* A consumer that only stores offsets (assign() with a group id). */
        classic_group_new(coord, request->group_id);
        return KAFKA_ERROR_NONE;
    }
    if (request->generation_id < 0 && group->state == GROUP_STATE_EMPTY)
        return KAFKA_ERROR_NONE;
    if (group->state == GROUP_STATE_COMPLETING_REBALANCE)
        return KAFKA_ERROR_REBALANCE_IN_PROGRESS;
    Member *member = NULL;
    KafkaError error = check_member(group, request->member_id, request->generation_id, &member);
    if (error == KAFKA_ERROR_NONE)
        classic_heartbeat_schedule(coord, member);
    return error;
}

static void
handle_offset_commit(GroupCoord *coord, SimNodeId from, const KOffsetMessage *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    if (error == KAFKA_ERROR_NONE)
        error = check_commit(coord, request);
    if (error != KAFKA_ERROR_NONE || request->partitions->len == 0) {
        offsets_respond(coord, from, KMSG_OFFSET_COMMIT_RESPONSE, request->correlation_id, error,
                        request->partitions);
        return;
    }
    store_offsets(coord, from, request);
}

/* Kafka's handleTxnCommitOffsets: the producer's offsets are stored in the
 * log now and become visible when its transaction commits. A group with
 * members checks the member and generation when the request names them. */
static void
handle_txn_offset_commit(GroupCoord *coord, SimNodeId from, const KOffsetMessage *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    if (error == KAFKA_ERROR_NONE && request->producer_id < 0)
        error = KAFKA_ERROR_INVALID_REQUEST;
    if (error == KAFKA_ERROR_NONE && request->generation_id >= 0 &&
        consumer_groups_exists(coord->consumer, request->group_id)) {
        error = consumer_groups_check_commit(coord->consumer, request->group_id, request->member_id,
                                             request->generation_id);
    } else if (error == KAFKA_ERROR_NONE && request->generation_id >= 0) {
        /* KIP-447: the member's group metadata fences a zombie. */
        Group *group = classic_group_find(coord, request->group_id);
        Member *member = NULL;
        error = group == NULL
                    ? KAFKA_ERROR_ILLEGAL_GENERATION
                    : check_member(group, request->member_id, request->generation_id, &member);
    }
    if (error != KAFKA_ERROR_NONE || request->partitions->len == 0) {
        offsets_respond(coord, from, KMSG_TXN_OFFSET_COMMIT_RESPONSE, request->correlation_id,
                        error, request->partitions);
        return;
    }
    store_offsets(coord, from, request);
}

static void
handle_offset_fetch(GroupCoord *coord, SimNodeId from, const KOffsetMessage *request)
{
    KafkaError error = check_coordinator(coord, request->group_id);
    g_autoptr(GArray) answers = g_array_copy(request->partitions);
    const OffsetsPartition *op =
        error == KAFKA_ERROR_NONE
            ? classic_offsets_partition_find(coord, classic_partition_of(coord, request->group_id))
            : NULL;
    for (guint i = 0; i < answers->len; i++) {
        KOffsetPartition *entry = &g_array_index(answers, KOffsetPartition, i);
        entry->offset = -1;
        entry->leader_epoch = -1;
        entry->error = error;
        if (op == NULL)
            continue;
        guint64 key =
            group_coord_offset_key(request->group_id, entry->tp.topic, entry->tp.partition);
        if (request->require_stable &&
            (txn_pending_has(op, key) || txn_commit_in_flight(coord, key))) {
            entry->error = KAFKA_ERROR_UNSTABLE_OFFSET_COMMIT;
            continue;
        }
        const guint64 *value = classic_cache_get(op, key);
        if (value != NULL) {
            entry->offset = group_coord_commit_value_offset(*value);
            entry->leader_epoch = group_coord_commit_value_epoch(*value);
        }
    }
    offsets_respond(coord, from, KMSG_OFFSET_FETCH_RESPONSE, request->correlation_id, error,
                    answers);
}

/* ---- FindCoordinator and the offsets topic ---- */

static void
handle_find_coordinator(GroupCoord *coord, SimNodeId from, const KFindCoordinatorRequest *request)
{
    const BrokerConfig *config = config_of(coord);
    broker_services_find_coordinator(
        coord->services, from, request, GROUP_OFFSETS_TOPIC, config->offsets_topic_num_partitions,
        config->offsets_topic_replication_factor, classic_partition_of(coord, request->group_id),
        KAFKA_ERROR_INVALID_GROUP_ID);
}

gboolean
group_coord_handle_message(GroupCoord *coord, SimNodeId from, SimMsg *msg)
{
    switch ((KafkaMsgType)msg->type) {
    case KMSG_FIND_COORDINATOR_REQUEST:
        if (((const KFindCoordinatorRequest *)msg)->key_type != KAFKA_COORDINATOR_GROUP)
            return FALSE; /* the transaction coordinator's */
        handle_find_coordinator(coord, from, (const KFindCoordinatorRequest *)msg);
        return TRUE;
    case KMSG_JOIN_GROUP_REQUEST:
        handle_join(coord, from, (const KJoinGroupRequest *)msg);
        return TRUE;
    case KMSG_SYNC_GROUP_REQUEST:
        handle_sync(coord, from, (const KSyncGroupRequest *)msg);
        return TRUE;
    case KMSG_HEARTBEAT_REQUEST:
        handle_heartbeat(coord, from, (const KGroupRequest *)msg);
        return TRUE;
    case KMSG_LEAVE_GROUP_REQUEST:
        handle_leave(coord, from, (const KGroupRequest *)msg);
        return TRUE;
    case KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST:
        consumer_groups_handle_heartbeat(coord->consumer, from,
                                         (const KConsumerHeartbeatRequest *)msg);
        return TRUE;
    case KMSG_OFFSET_COMMIT_REQUEST:
        handle_offset_commit(coord, from, (const KOffsetMessage *)msg);
        return TRUE;
    case KMSG_OFFSET_FETCH_REQUEST:
        handle_offset_fetch(coord, from, (const KOffsetMessage *)msg);
        return TRUE;
    case KMSG_TXN_OFFSET_COMMIT_REQUEST:
        handle_txn_offset_commit(coord, from, (const KOffsetMessage *)msg);
        return TRUE;
    default:
        return FALSE;
    }
}

/* ---- loading and unloading offsets partitions ---- */

static void
partition_elected(void *user_data, const Partition *p)
{
    GroupCoord *coord = user_data;
    if (strcmp(p->tp.topic, GROUP_OFFSETS_TOPIC) != 0)
        return;
    coord_partition_elected(coord->partitions, sizeof(OffsetsPartition), coord->services,
                            GROUP_OFFSETS_TOPIC, p, group_coord_load_offsets, coord);
}

static void
offsets_partition_free(GroupCoord *coord, OffsetsPartition *op)
{
    coord_partition_stop(coord->services, &op->base);
    if (op->offsets != NULL)
        g_hash_table_destroy(op->offsets);
    if (op->txn_pending != NULL)
        g_array_free(op->txn_pending, TRUE);
    g_free(op);
}

/* Kafka's onResignation: the partition's groups leave this broker; members
 * waiting on a join or sync are told NOT_COORDINATOR. */
static void
partition_resigned(void *user_data, const Partition *p)
{
    GroupCoord *coord = user_data;
    if (strcmp(p->tp.topic, GROUP_OFFSETS_TOPIC) != 0)
        return;
    OffsetsPartition *op = classic_offsets_partition_find(coord, p->tp.partition);
    if (op == NULL)
        return;
    for (guint i = coord->groups->len; i > 0; i--) {
        Group *group = g_ptr_array_index(coord->groups, i - 1);
        if (group->partition != op->base.partition)
            continue;
        for (guint m = 0; m < group->members->len; m++) {
            Member *member = g_ptr_array_index(group->members, m);
            if (member->awaiting_join)
                join_respond_error(coord, member->join_node, member->join_correlation,
                                   member->member_id, KAFKA_ERROR_NOT_COORDINATOR);
            if (member->awaiting_sync)
                sync_respond(coord, member->sync_node, member->sync_correlation,
                             KAFKA_ERROR_NOT_COORDINATOR, NULL);
        }
        g_ptr_array_remove_index(coord->groups, i - 1);
        group_free(coord, group);
    }
    consumer_groups_unload(coord->consumer, op->base.partition);
    for (guint i = coord->pending->len; i > 0; i--) {
        PendingCommit *pending = g_ptr_array_index(coord->pending, i - 1);
        if (pending->partition != op->base.partition)
            continue;
        g_ptr_array_remove_index(coord->pending, i - 1);
        if (pending->client != SIM_NODE_NONE)
            offsets_respond(coord, pending->client, commit_response_type(pending),
                            pending->correlation_id, KAFKA_ERROR_NOT_COORDINATOR, pending->offsets);
        pending_free(pending);
    }
    g_ptr_array_remove(coord->partitions, op);
    offsets_partition_free(coord, op);
}

/* A transaction marker was written to `tp`: when it is a __consumer_offsets
 * partition this broker coordinates, the producer's transactional offsets
 * become visible (commit) or are dropped (abort). */
static void
marker_written(void *user_data, const KTopicPartition *tp, gint64 producer_id, gboolean committed)
{
    GroupCoord *coord = user_data;
    if (strcmp(tp->topic, GROUP_OFFSETS_TOPIC) != 0)
        return;
    OffsetsPartition *op = classic_offsets_partition_find(coord, tp->partition);
    /* Still loading: the load reads the marker from the log. */
    if (op == NULL || op->offsets == NULL)
        return;
    classic_txn_pending_complete(op, producer_id, committed);
}

/* ---- the object ---- */

GroupCoord *
group_coord_new(BrokerServices *services)
{
    GroupCoord *coord = g_new0(GroupCoord, 1);
    coord->services = services;
    coord->partitions = g_ptr_array_new();
    coord->groups = g_ptr_array_new();
    coord->pending = g_ptr_array_new();
    coord->consumer = consumer_groups_new(coord);
    const ReplicaLeadershipListener leadership = {partition_elected, partition_resigned, coord};
    broker_services_add_leadership_listener(services, &leadership);
    const ReplicaMarkerListener markers = {marker_written, coord};
    broker_services_add_marker_listener(services, &markers);
    return coord;
}

void
group_coord_free(GroupCoord *coord)
{
    if (coord == NULL)
        return;
    consumer_groups_free(coord->consumer);
    for (guint i = 0; i < coord->groups->len; i++)
        group_free(coord, g_ptr_array_index(coord->groups, i));
    for (guint i = 0; i < coord->partitions->len; i++)
        offsets_partition_free(coord, g_ptr_array_index(coord->partitions, i));
    for (guint i = 0; i < coord->pending->len; i++)
        pending_free(g_ptr_array_index(coord->pending, i));
    g_ptr_array_free(coord->groups, TRUE);
    g_ptr_array_free(coord->partitions, TRUE);
    g_ptr_array_free(coord->pending, TRUE);
    g_free(coord);
}
