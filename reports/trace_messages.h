/*
 * trace_messages: the messages of an engine trace (sim_trace.h), as the
 * trace writer (trace_writer.h) and the space-time diagrams (diagram.h) both
 * read them: each message's name, and each send paired with its delivery or
 * its drop.
 *
 * The trace records a send (node -> peer, message type, size) and, later, a
 * delivery or a drop on the receiver, but no message id. Links are FIFO per
 * direction (sim_net.h: Kafka runs over TCP), so the oldest message in
 * flight on a link with the delivered message's type and size is the one
 * delivered (for a drop, the oldest of its type: a drop record carries the
 * reason, not the size). A duplicate (a copy a fault made) is in flight
 * beside its original. A delivery or drop whose send was not followed (the
 * follower started after it) pairs with nothing.
 */
#ifndef TRACE_MESSAGES_H
#define TRACE_MESSAGES_H

#include <glib.h>

#include "sim_trace.h"

/* The name of a message type: Kafka's ("Produce request", kafka_proto.h) or
 * the coordination service's ("ZooKeeper request", zk_proto.h); NULL for a
 * type neither names. (transfer none: a static string) */
const char *trace_message_name(guint64 type);

/* A message in flight, from its send. */
typedef struct {
    gint64 send_ns;
    guint64 type;
    guint64 bytes;
    guint64 id;   /* 1 for the first message followed, 2 for the next, ... */
    guint32 from; /* the sender's node */
    guint32 to;   /* the receiver's node */
} TraceFlight;

/* What a record did to the messages in flight. */
typedef enum {
    TRACE_FLIGHT_NONE = 0, /* nothing: not a message record, or one paired with no send */
    TRACE_FLIGHT_SENT,     /* a send (or a duplicate) put a message in flight */
    TRACE_FLIGHT_DELIVERED,
    TRACE_FLIGHT_DROPPED,
} TraceFlightEvent;

typedef struct TraceFlights TraceFlights;

/* An empty follower: no message in flight. (transfer full) */
TraceFlights *trace_flights_new(void);
/* Frees it and every message still in flight; accepts NULL. */
void trace_flights_free(TraceFlights *flights);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceFlights, trace_flights_free)

/* Follows one record, in trace order. A send, or a duplicate with its size,
 * puts a message in flight (SENT; *flight is it). A delivery or a drop takes
 * its message off its link (DELIVERED or DROPPED; *flight is the message as
 * sent). Anything else, and a delivery or drop of no message in flight,
 * gives NONE and leaves *flight alone. */
TraceFlightEvent trace_flights_follow(TraceFlights *flights, const SimTraceRecord *record,
                                      TraceFlight *flight);

/* The messages in flight now. */
guint trace_flights_in_flight(const TraceFlights *flights);

#endif
