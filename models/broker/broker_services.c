/*
 * broker_services: the broker's side of the interface its children see
 * (broker_services.h), over the broker's private state.
 *
 * Invariants: a BrokerServices points at the state that owns it, and that
 * state points back at it (broker_services_check_invariants).
 */
#include "broker_services.h"

#include "broker_internal.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <stdarg.h>
#include <string.h>

struct BrokerServices {
    BrokerState *state;
};

BrokerServices *
broker_services_new(BrokerState *state)
{
    BrokerServices *services = g_new0(BrokerServices, 1);
    services->state = state;
    return services;
}

void
broker_services_free(BrokerServices *services)
{
    g_free(services);
}

void
broker_services_check_invariants(const BrokerState *state)
{
    KSIM_ASSERT(state->services != NULL);
    KSIM_ASSERT(state->services->state == state);
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
