/*
 * trace_messages: message names and send/delivery pairing (see
 * trace_messages.h).
 *
 * Invariants:
 *  1. `in_flight` counts the messages in every link's queue.
 *  2. Each link's queue is in send order (pushed at the tail, in trace
 *     order), so the first match from the head is the oldest.
 * The table of links is only looked up, never iterated (but to free it).
 */
#include "trace_messages.h"

#include "kafka_proto.h"
#include "sim_assert.h"
#include "zk_proto.h"

struct TraceFlights {
    GHashTable *links; /* link key (from << 32 | to) -> GQueue of TraceFlight */
    guint64 next_id;
    guint in_flight;
};

const char *
trace_message_name(guint64 type)
{
    if (type > G_MAXUINT)
        return NULL;
    const char *name = kafka_msg_type_name((guint)type);
    return name != NULL ? name : zk_msg_type_name((guint)type);
}

static void
queue_free(gpointer queue)
{
    g_queue_free_full(queue, g_free);
}

TraceFlights *
trace_flights_new(void)
{
    TraceFlights *flights = g_new0(TraceFlights, 1);
    flights->links = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, queue_free);
    return flights;
}

void
trace_flights_free(TraceFlights *flights)
{
    if (flights == NULL)
        return;
    g_hash_table_destroy(flights->links);
    g_free(flights);
}

static gint64
link_key(guint32 from, guint32 to)
{
    return ((gint64)from << 32) | to;
}

static void
push(TraceFlights *flights, guint32 from, guint32 to, const SimTraceRecord *record,
     TraceFlight *out)
{
    gint64 key = link_key(from, to);
    GQueue *queue = g_hash_table_lookup(flights->links, &key);
    if (queue == NULL) {
        queue = g_queue_new();
        g_hash_table_insert(flights->links, g_memdup2(&key, sizeof key), queue);
    }
    TraceFlight *flight = g_new(TraceFlight, 1);
    *flight = (TraceFlight){record->time_ns, record->a, record->b, ++flights->next_id, from, to};
    g_queue_push_tail(queue, flight);
    flights->in_flight++;
    *out = *flight;
}

/* The oldest message of `type` (and `bytes`, unless G_MAXUINT64) in flight
 * from `from` to `to`, taken off its link into *out; FALSE when none. */
static gboolean
take(TraceFlights *flights, guint32 from, guint32 to, guint64 type, guint64 bytes,
     TraceFlight *out)
{
    gint64 key = link_key(from, to);
    GQueue *queue = g_hash_table_lookup(flights->links, &key);
    if (queue == NULL)
        return FALSE;
    for (GList *l = queue->head; l != NULL; l = l->next) {
        TraceFlight *flight = l->data;
        if (flight->type != type || (bytes != G_MAXUINT64 && flight->bytes != bytes))
            continue;
        *out = *flight;
        g_free(flight);
        g_queue_delete_link(queue, l);
        KSIM_ASSERT(flights->in_flight > 0);
        flights->in_flight--;
        return TRUE;
    }
    return FALSE;
}

TraceFlightEvent
trace_flights_follow(TraceFlights *flights, const SimTraceRecord *record, TraceFlight *flight)
{
    switch ((SimTraceKind)record->kind) {
    case SIM_TRACE_SEND:
        push(flights, record->node, record->peer, record, flight);
        return TRACE_FLIGHT_SENT;
    case SIM_TRACE_DUPLICATE:
        /* node: the receiver; the copy is in flight beside the original.
         * Without a size the message could not be copied. */
        if (record->b == G_MAXUINT64)
            return TRACE_FLIGHT_NONE;
        push(flights, record->peer, record->node, record, flight);
        return TRACE_FLIGHT_SENT;
    case SIM_TRACE_DELIVER:
        return take(flights, record->peer, record->node, record->a, record->b, flight)
                   ? TRACE_FLIGHT_DELIVERED
                   : TRACE_FLIGHT_NONE;
    case SIM_TRACE_DROP:
        return take(flights, record->peer, record->node, record->a, G_MAXUINT64, flight)
                   ? TRACE_FLIGHT_DROPPED
                   : TRACE_FLIGHT_NONE;
    default:
        return TRACE_FLIGHT_NONE;
    }
}

guint
trace_flights_in_flight(const TraceFlights *flights)
{
    return flights->in_flight;
}
