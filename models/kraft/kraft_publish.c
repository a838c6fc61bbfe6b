/*
 * kraft_publish: image deltas as LeaderAndIsr and UpdateMetadata requests
 * (kraft_publish.h). Partitions are walked in the images' order (topic id,
 * partition), so a delta's order never depends on a hash table.
 */
#include "kraft_publish.h"

#include "sim_assert.h"

#include <string.h>

static gboolean
changed(const KraftImage *before, const KraftPartition *p)
{
    if (before == NULL)
        return TRUE;
    const KraftPartition *old = kraft_image_partition(before, p->topic, p->partition);
    return old == NULL || old->partition_epoch != p->partition_epoch;
}

static KPartitionState
state_of(const KraftRecordStore *store, const KraftPartition *p)
{
    KPartitionState ps = {0};
    ktp_set(&ps.tp, kraft_record_store_topic_name(store, p->topic), p->partition);
    ps.leader = p->leader == KRAFT_NO_LEADER ? KAFKA_NO_LEADER : p->leader;
    ps.leader_epoch = p->leader_epoch;
    ps.controller_epoch = -1;
    ps.zk_version = p->partition_epoch;
    ps.n_replicas = p->n_replicas;
    memcpy(ps.replicas, p->replicas, sizeof(gint32) * p->n_replicas);
    ps.n_isr = p->n_isr;
    memcpy(ps.isr, p->isr, sizeof(gint32) * p->n_isr);
    return ps;
}

static KBrokerEndpoint
endpoint_of(const KraftBroker *b)
{
    KBrokerEndpoint e = {b->id, b->node, b->epoch};
    return e;
}

KLeaderAndIsrRequest *
kraft_publish_leader_and_isr(const KraftImage *before, const KraftImage *after,
                             const KraftRecordStore *store, gint32 broker_id, MetadataPool *pool)
{
    g_autoptr(GPtrArray) all = kraft_image_partitions_not_shared(before, after);
    KLeaderAndIsrRequest *request = NULL;
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        if (!kraft_ids_contain(p->replicas, p->n_replicas, broker_id) || !changed(before, p))
            continue;
        if (request == NULL) {
            request = kproto_new(KMSG_LEADER_AND_ISR_REQUEST);
            request->controller_id = -1;
            request->controller_epoch = -1;
            request->pooled = g_ptr_array_new_with_free_func(metadata_pool_release);
        }
        KPartitionState ps = state_of(store, p);
        g_ptr_array_add(request->pooled, (gpointer)metadata_pool_intern(pool, &ps));
        const KraftBroker *leader =
            p->leader == KRAFT_NO_LEADER ? NULL : kraft_image_broker(after, p->leader);
        gboolean listed = leader == NULL;
        for (guint k = 0; k < request->live_leaders->len && !listed; k++)
            listed = g_array_index(request->live_leaders, KBrokerEndpoint, k).broker_id == leader->id;
        if (!listed) {
            KBrokerEndpoint e = endpoint_of(leader);
            g_array_append_val(request->live_leaders, e);
        }
    }
    if (request != NULL)
        kproto_update_size(&request->base);
    return request;
}

static gboolean
brokers_changed(const KraftImage *before, const KraftImage *after)
{
    if (before == NULL)
        return kraft_image_brokers(after)->len > 0;
    const GArray *a = kraft_image_brokers(before), *b = kraft_image_brokers(after);
    if (a->len != b->len)
        return TRUE;
    for (guint i = 0; i < a->len; i++) {
        const KraftBroker *x = &g_array_index(a, KraftBroker, i);
        const KraftBroker *y = &g_array_index(b, KraftBroker, i);
        if (x->id != y->id || x->epoch != y->epoch || x->fenced != y->fenced)
            return TRUE;
    }
    return FALSE;
}

KUpdateMetadataRequest *
kraft_publish_update_metadata(const KraftImage *before, const KraftImage *after,
                              const KraftRecordStore *store, MetadataPool *pool)
{
    KUpdateMetadataRequest *request = kproto_new(KMSG_UPDATE_METADATA_REQUEST);
    request->controller_id = -1;
    request->controller_epoch = -1;
    g_autoptr(GPtrArray) all = kraft_image_partitions_not_shared(before, after);
    request->pooled = g_ptr_array_new_with_free_func(metadata_pool_release);
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        if (!changed(before, p))
            continue;
        KPartitionState ps = state_of(store, p);
        g_ptr_array_add(request->pooled, (gpointer)metadata_pool_intern(pool, &ps));
    }
    if (request->pooled->len == 0 && !brokers_changed(before, after)) {
        sim_msg_free(&request->base);
        return NULL;
    }
    const GArray *brokers = kraft_image_brokers(after);
    for (guint i = 0; i < brokers->len; i++) {
        const KraftBroker *b = &g_array_index(brokers, KraftBroker, i);
        if (b->fenced)
            continue; /* a fenced broker is not offered to clients */
        KBrokerEndpoint e = endpoint_of(b);
        g_array_append_val(request->live_brokers, e);
    }
    kproto_update_size(&request->base);
    return request;
}
