/*
 * broker_services: the broker's side of the interface its children see
 * (broker_services.h), over the broker's private state.
 *
 * Invariants (broker_services_check_invariants):
 *  1. A BrokerServices points at the state that owns it, and that state
 *     points back at it.
 *  2. Fewer internal appends wait for their completion than were started
 *     (ids start at 1 and `append_next` is the next one).
 *
 * An internal append of a child (broker_services_append_internal) is the
 * replica manager's, whose completion names the broker's state: the
 * services keep the child's callback and user data under an id of their
 * own, the append's done_id, until it completes; a crash frees them with
 * the services, and the replica manager never completes an append after a
 * crash.
 */
#include "broker_services.h"

#include "broker_kraft.h"

#include "broker_internal.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <stdarg.h>
#include <string.h>

/* A child's internal append awaiting its completion. */
typedef struct {
    BrokerAppendFn done_fn;
    void *user_data;
    guint64 done_id; /* the child's */
} PendingAppend;

struct BrokerServices {
    BrokerState *state;
    GHashTable *appends; /* guint64 id* -> PendingAppend* (owned); lookups only */
    guint64 append_next;
};

BrokerServices *
broker_services_new(BrokerState *state)
{
    BrokerServices *services = g_new0(BrokerServices, 1);
    services->state = state;
    services->appends = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    services->append_next = 1;
    return services;
}

void
broker_services_free(BrokerServices *services)
{
    g_hash_table_destroy(services->appends);
    g_free(services);
}

void
broker_services_check_invariants(const BrokerState *state)
{
    KSIM_ASSERT(state->services != NULL);
    KSIM_ASSERT(state->services->state == state);
    KSIM_ASSERT(g_hash_table_size(state->services->appends) < state->services->append_next);
}

BrokerServices *
broker_services_from_zk_owner(void *owner)
{
    BrokerState *state = owner;
    KSIM_ASSERT(state != NULL);
    return state->services;
}

BrokerServices *
broker_services_from_node_ctx(void *ctx)
{
    Broker *broker = ctx;
    KSIM_ASSERT(broker->state != NULL);
    return broker->state->services;
}

BrokerServices *
broker_services_of(const Broker *broker)
{
    return broker->state != NULL ? broker->state->services : NULL;
}

SimWorld *
broker_services_world(const BrokerServices *services)
{
    return services->state->broker->world;
}

SimNodeId
broker_services_node(const BrokerServices *services)
{
    return services->state->broker->node;
}

gint32
broker_services_broker_id(const BrokerServices *services)
{
    return services->state->broker->config.broker_id;
}

const BrokerConfig *
broker_services_config(const BrokerServices *services)
{
    return &services->state->broker->config;
}

const TopicConfig *
broker_services_topic_config(BrokerServices *services, const char *topic)
{
    return broker_topic_config(services->state->broker, topic);
}

gint64
broker_services_now_ms(const BrokerServices *services)
{
    return broker_now_ms(services->state->broker);
}

void
broker_services_send(BrokerServices *services, SimNodeId to, SimMsg *msg)
{
    broker_send(services->state, to, msg);
}

gint32
broker_services_next_correlation(BrokerServices *services)
{
    return services->state->correlation_next++;
}

guint32
broker_services_history_isr(BrokerServices *services, const gint32 *isr, guint n_isr)
{
    return broker_history_isr(services->state->broker, isr, n_isr);
}

void
broker_services_record_metric(BrokerServices *services, HistoryMetricKind kind, guint32 count,
                              gint64 value)
{
    broker_record_metric(services->state->broker, kind, count, value);
}

void
broker_services_record_event(BrokerServices *services, HistoryEventKind kind,
                             const KTopicPartition *tp, const HistoryEvent *fields,
                             const char *format, ...)
{
    Broker *broker = services->state->broker;
    if (broker->history == NULL)
        return;
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    broker_record_event(broker, kind, tp, fields, "%s", text);
}

gboolean
broker_services_kraft_allocate_producer_ids(BrokerServices *services)
{
    BrokerState *state = services->state;
    if (state->kraft == NULL)
        return FALSE;
    broker_kraft_allocate_producer_ids(state->kraft);
    return TRUE;
}

ZkClient *
broker_services_zk(BrokerServices *services)
{
    return services->state->zk;
}

void *
broker_services_zk_context(BrokerServices *services, gsize size)
{
    return broker_zk_context(services->state, size);
}

void
broker_services_zk_context_done(BrokerServices *services, void *context)
{
    broker_zk_context_done(services->state, context);
}

Plog *
broker_services_led_log(const BrokerServices *services, const KTopicPartition *tp)
{
    const Partition *p = replica_get(services->state, tp);
    return p != NULL && p->is_leader ? p->log : NULL;
}

guint
broker_services_led_count(const BrokerServices *services, const char *topic)
{
    const GPtrArray *partitions = services->state->partitions_sorted;
    guint n = 0;
    for (guint i = 0; i < partitions->len; i++) {
        const Partition *p = g_ptr_array_index(partitions, i);
        n += p->is_leader && strcmp(p->tp.topic, topic) == 0;
    }
    return n;
}

void
broker_services_add_leadership_listener(BrokerServices *services,
                                        const ReplicaLeadershipListener *listener)
{
    replica_add_leadership_listener(services->state, listener);
}

void
broker_services_add_marker_listener(BrokerServices *services, const ReplicaMarkerListener *listener)
{
    replica_add_marker_listener(services->state, listener);
}

/* The replica manager completed the append the services know as `id`. */
static void
append_done(BrokerState *state, KafkaError error, gint64 base_offset, guint64 id)
{
    GHashTable *appends = state->services->appends;
    PendingAppend *pending = g_hash_table_lookup(appends, &id);
    KSIM_ASSERT(pending != NULL);
    PendingAppend done = *pending;
    g_hash_table_remove(appends, &id);
    done.done_fn(done.user_data, error, base_offset, done.done_id);
}

void
broker_services_append_internal(BrokerServices *services, const KTopicPartition *tp,
                                PlogBatch *batch, gint64 timeout_ms, BrokerAppendFn done_fn,
                                void *user_data, guint64 done_id)
{
    KSIM_ASSERT(done_fn != NULL);
    PendingAppend *pending = g_new(PendingAppend, 1);
    *pending = (PendingAppend){done_fn, user_data, done_id};
    guint64 *key = g_new(guint64, 1);
    *key = services->append_next++;
    g_hash_table_insert(services->appends, key, pending);
    replica_append_internal(services->state, tp, batch, timeout_ms, append_done, *key);
}

void
broker_services_find_coordinator(BrokerServices *services, SimNodeId from,
                                 const KFindCoordinatorRequest *request, const char *topic,
                                 gint32 partitions, gint16 replication_factor, gint32 partition,
                                 KafkaError empty_key_error)
{
    broker_find_coordinator(services->state, from, request, topic, partitions, replication_factor,
                            partition, empty_key_error);
}

SimNodeId
broker_services_leader_node(const BrokerServices *services, const KTopicPartition *tp,
                            gboolean *exists)
{
    const BrokerState *state = services->state;
    const KPartitionState *ps = metadata_cache_lookup(state->metadata, tp);
    *exists = ps != NULL;
    if (ps == NULL || ps->leader == KAFKA_NO_LEADER)
        return SIM_NODE_NONE;
    return kbroker_endpoint_node(state->live_brokers, ps->leader);
}

ProducerIds *
broker_services_producer_ids(const BrokerServices *services)
{
    return services->state->producer_ids;
}

GroupCoord *
broker_services_group_coord(const BrokerServices *services)
{
    return services->state->groups;
}

TxnCoord *
broker_services_txn_coord(const BrokerServices *services)
{
    return services->state->txns;
}

Controller *
broker_services_controller(const BrokerServices *services)
{
    return services->state->controller;
}

guint64
broker_services_controller_generation_next(BrokerServices *services)
{
    return ++services->state->controller_generation;
}

void
broker_services_controller_claimed(BrokerServices *services, gint32 epoch)
{
    BrokerState *state = services->state;
    state->controller_epoch = MAX(state->controller_epoch, epoch);
    state->controller_id = state->broker->config.broker_id;
}

void
broker_services_controller_lost(BrokerServices *services)
{
    KSIM_ASSERT(services->state->controller != NULL);
    services->state->controller = NULL;
}
