/*
 * group_coord_load: the classic coordinator's load of an offsets partition
 * (commits into the cache, transactional ones awaiting their markers, and
 * the groups of their metadata records: GroupMetadataManager
 * .loadGroupsAndOffsets and GroupCoordinator.onGroupLoaded, Kafka 3.9), its
 * views for tests and reports, and its invariants (group_coord.c lists
 * them).
 */
#include "group_coord_classic.h"

#include "sim_assert.h"

#include <string.h>

/* What a load has read so far. */
typedef struct {
    OffsetsPartition *op;
    GTree *groups; /* group id -> its latest GroupLogRecord* (owned) */
} OffsetsLoad;

static gint
group_id_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    return strcmp(a, b);
}

static void
group_log_record_free(gpointer record)
{
    group_log_record_clear(record);
    g_free(record);
}

/* One batch of the log into the load: a group metadata record replaces the
 * group's earlier one; a commit goes to the cache, or, transactional, waits
 * in txn_pending for its producer's marker, which applies or drops it;
 * records below `asked` were read before. */
static void
load_batch(const PlogBatch *batch, gint64 asked, void *user_data)
{
    OffsetsLoad *load = user_data;
    OffsetsPartition *op = load->op;
    GroupLogRecord *group = g_new(GroupLogRecord, 1);
    if (group_coord_decode_group(batch, group)) {
        if (batch->base_offset >= asked)
            g_tree_replace(load->groups, group->group_id, group);
        else
            group_log_record_free(group);
        return;
    }
    g_free(group);
    gboolean transactional = (batch->attributes & PLOG_BATCH_TRANSACTIONAL) != 0;
    if ((batch->attributes & PLOG_BATCH_CONTROL) != 0) {
        classic_txn_pending_complete(op, batch->producer_id,
                                     (batch->attributes & PLOG_BATCH_CONTROL_COMMIT) != 0);
        return;
    }
    for (guint r = 0; r < batch->records->len; r++) {
        const PlogRecord *record = &g_array_index(batch->records, PlogRecord, r);
        if (batch->base_offset + r < asked || record->key == 0)
            continue;
        if (transactional)
            classic_txn_pending_put(op, batch->producer_id, record->key, record->value);
        else
            classic_cache_put(op, record->key, record->value);
    }
}

/* Kafka's loadGroup and onGroupLoaded (GroupMetadataManager and
 * GroupCoordinator, 3.9): the group of a metadata record comes back in its
 * generation, Stable with its members and their assignments (Empty without
 * members), and each member's session expiry is scheduled. */
static gboolean
group_load(gpointer key, gpointer value, gpointer user_data)
{
    GroupCoord *coord = user_data;
    const GroupLogRecord *record = value;
    (void)key;
    if (record->consumer_protocol) {
        if (classic_group_find(coord, record->group_id) == NULL)
            consumer_groups_load(coord->consumer, record);
        return FALSE;
    }
    if (classic_group_find(coord, record->group_id) != NULL ||
        consumer_groups_exists(coord->consumer, record->group_id))
        return FALSE;
    Group *group = classic_group_new(coord, record->group_id);
    group->generation = record->generation;
    for (guint i = 0; i < record->members->len; i++) {
        const GroupLogMember *m = &g_array_index(record->members, GroupLogMember, i);
        if (classic_member_find(group, m->member_id) != NULL ||
            group->members->len >= GROUP_MEMBERS_MAX || m->topics->len > GROUP_TOPICS_MAX)
            continue;
        Member *member = classic_member_add(group, g_strdup(m->member_id), m->client_id);
        member->session_timeout_ms = m->session_timeout_ms;
        member->rebalance_timeout_ms = m->rebalance_timeout_ms;
        member->protocol = m->protocol;
        member->owned_generation = m->owned_generation;
        g_array_append_vals(member->topics, m->topics->data, m->topics->len);
        g_array_append_vals(member->owned, m->owned->data, m->owned->len);
        g_array_append_vals(member->assignment, m->assignment->data, m->assignment->len);
    }
    if (group->members->len == 0)
        return FALSE;
    const GroupLogMember *leader =
        record->leader >= 0 ? &g_array_index(record->members, GroupLogMember, record->leader)
                            : NULL;
    group->leader = leader != NULL ? classic_member_find(group, leader->member_id) : NULL;
    if (group->leader == NULL)
        group->leader = g_ptr_array_index(group->members, 0);
    group->protocol = record->protocol;
    group->state = GROUP_STATE_STABLE;
    for (guint i = 0; i < group->members->len; i++)
        classic_heartbeat_schedule(coord, g_ptr_array_index(group->members, i));
    return FALSE;
}

/* Reads the partition's log into its cache, latest record per key winning,
 * then loads the groups whose metadata records it holds, in id order. */
void
group_coord_load_offsets(void *user_data, CoordPartition *partition, Plog *log)
{
    GroupCoord *coord = user_data;
    OffsetsPartition *op = (OffsetsPartition *)partition;
    op->offsets = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    op->txn_pending = g_array_new(FALSE, FALSE, sizeof(TxnPendingOffset));
    OffsetsLoad load = {op, g_tree_new_full(group_id_compare, NULL, NULL, group_log_record_free)};
    coord_partition_read_log(log, load_batch, &load);
    g_tree_foreach(load.groups, group_load, coord);
    g_tree_destroy(load.groups);
}

/* ---- views ---- */

void
group_coord_describe(const Broker *broker, const char *group_id, GroupCoordInfo *out)
{
    memset(out, 0, sizeof *out);
    out->state = GROUP_STATE_DEAD;
    out->protocol = -1;
    const BrokerServices *services = broker_services_of(broker);
    if (services == NULL)
        return;
    const GroupCoord *coord = broker_services_group_coord(services);
    const OffsetsPartition *op =
        classic_offsets_partition_find(coord, classic_partition_of(coord, group_id));
    out->coordinator = op != NULL && op->offsets != NULL;
    out->loading = op != NULL && op->offsets == NULL;
    const Group *group = classic_group_find(coord, group_id);
    if (group == NULL) {
        consumer_groups_describe(coord->consumer, group_id, out);
        return;
    }
    out->exists = TRUE;
    out->state = group->state;
    out->generation = group->generation;
    out->members = group->members->len;
    out->protocol = group->protocol;
}

/* The commit value the broker's coordinator cache holds for the partition,
 * or NULL. */
static const guint64 *
committed_value(const Broker *broker, const char *group_id, const char *topic, gint32 partition)
{
    const BrokerServices *services = broker_services_of(broker);
    if (services == NULL)
        return NULL;
    const GroupCoord *coord = broker_services_group_coord(services);
    const OffsetsPartition *op =
        classic_offsets_partition_find(coord, classic_partition_of(coord, group_id));
    if (op == NULL || op->offsets == NULL)
        return NULL;
    return classic_cache_get(op, group_coord_offset_key(group_id, topic, partition));
}

gint64
group_coord_committed_offset(const Broker *broker, const char *group_id, const char *topic,
                             gint32 partition)
{
    const guint64 *value = committed_value(broker, group_id, topic, partition);
    return value != NULL ? group_coord_commit_value_offset(*value) : -1;
}

gint32
group_coord_committed_leader_epoch(const Broker *broker, const char *group_id, const char *topic,
                                   gint32 partition)
{
    const guint64 *value = committed_value(broker, group_id, topic, partition);
    return value != NULL ? group_coord_commit_value_epoch(*value) : -1;
}

/* ---- invariants ---- */

static void
check_group(const GroupCoord *coord, const Group *group)
{
    const OffsetsPartition *op = classic_offsets_partition_find(coord, group->partition);
    KSIM_ASSERT(op != NULL);
    KSIM_ASSERT(op->offsets != NULL);
    KSIM_ASSERT((group->leader == NULL) == (group->members->len == 0));
    KSIM_ASSERT((group->state == GROUP_STATE_EMPTY) == (group->members->len == 0) ||
                group->state == GROUP_STATE_PREPARING_REBALANCE);
    KSIM_ASSERT(sim_timer_pending(classic_world_of(coord), group->join_timer) ==
                (group->state == GROUP_STATE_PREPARING_REBALANCE));
    gboolean leader_found = group->leader == NULL;
    for (guint m = 0; m < group->members->len; m++) {
        const Member *member = g_ptr_array_index(group->members, m);
        if (m > 0)
            KSIM_ASSERT(
                strcmp(((const Member *)g_ptr_array_index(group->members, m - 1))->member_id,
                       member->member_id) < 0);
        KSIM_ASSERT(member->group == group);
        leader_found = leader_found || member == group->leader;
        if (member->awaiting_join)
            KSIM_ASSERT(group->state == GROUP_STATE_PREPARING_REBALANCE);
        if (member->awaiting_sync)
            KSIM_ASSERT(group->state == GROUP_STATE_COMPLETING_REBALANCE);
    }
    KSIM_ASSERT(leader_found);
}

void
group_coord_check_invariants(const GroupCoord *coord)
{
    coord_partitions_check(coord->services, coord->partitions, GROUP_OFFSETS_TOPIC);
    for (guint i = 0; i < coord->partitions->len; i++) {
        const OffsetsPartition *op = g_ptr_array_index(coord->partitions, i);
        KSIM_ASSERT((op->offsets != NULL) == op->base.loaded);
        KSIM_ASSERT((op->txn_pending != NULL) == op->base.loaded);
    }
    for (guint i = 0; i < coord->groups->len; i++) {
        const Group *group = g_ptr_array_index(coord->groups, i);
        if (i > 0)
            KSIM_ASSERT(strcmp(((const Group *)g_ptr_array_index(coord->groups, i - 1))->id,
                               group->id) < 0);
        check_group(coord, group);
    }
    for (guint i = 0; i < coord->pending->len; i++) {
        const PendingCommit *pending = g_ptr_array_index(coord->pending, i);
        KSIM_ASSERT(classic_offsets_partition_find(coord, pending->partition) != NULL);
    }
    consumer_groups_check_invariants(coord->consumer);
}
