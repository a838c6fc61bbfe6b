/*
 * request_queue: one service station of a broker's request handling — a FIFO
 * of waiting items in front of `servers` identical servers, in virtual time.
 * Kafka's RequestChannel request queue in front of the KafkaRequestHandlerPool
 * (num.io.threads servers, queued.max.requests waiting places) is one; each
 * SocketServer Processor (a network thread) is another with one server.
 *
 * It knows nothing of Kafka: an item is an opaque pointer with a service time
 * chosen by the caller. When an item's service ends, `done` is called; it
 * returns FALSE when the item cannot go on yet (the next station is full),
 * and the server then stays blocked holding it, as a Kafka network thread
 * blocks in RequestChannel.sendRequest on a full queue, until
 * request_queue_retry_blocked. Timers are the owning node's, so a crash drops
 * them and a pause holds them; the caller frees the queue with the node's
 * state.
 */
#ifndef REQUEST_QUEUE_H
#define REQUEST_QUEUE_H

#include <glib.h>

#include "sim_world.h"

typedef struct RequestQueue RequestQueue;

/* When an item was offered, started service and ended it (ns, virtual). */
typedef struct {
    gint64 enqueued_ns;
    gint64 started_ns;
    gint64 done_ns;
} RequestQueueTiming;

/* An item's service ended; FALSE keeps the server blocked with it. */
typedef gboolean (*RequestQueueDoneFn)(void *owner, void *item, const RequestQueueTiming *timing);

/* A station on `node` with `servers` servers (>= 1) and room for `capacity`
 * waiting items (0: unbounded). (transfer full) */
RequestQueue *request_queue_new(SimWorld *world, SimNodeId node, guint servers, guint capacity,
                                RequestQueueDoneFn done, void *owner);
/* Frees the queue and, with `item_free` (may be NULL), every item it holds. */
void request_queue_free(RequestQueue *queue, GDestroyNotify item_free);

/* Offers an item needing `service_ns` of a server; FALSE (nothing kept) when
 * every server is busy and the waiting places are full. */
gboolean request_queue_offer(RequestQueue *queue, void *item, gint64 service_ns);
/* TRUE when request_queue_offer would refuse. */
gboolean request_queue_full(const RequestQueue *queue);
/* Calls `done` again for each blocked server, in server order; a server
 * whose item goes on takes the next waiting item. */
void request_queue_retry_blocked(RequestQueue *queue);

/* `space` is called after a service ended and its server moved on, so that
 * a waiting place may have freed (the I/O stage's room for blocked network
 * threads). */
void request_queue_set_space_cb(RequestQueue *queue, void (*space)(void *owner), void *owner);

guint request_queue_waiting(const RequestQueue *queue);
guint request_queue_busy(const RequestQueue *queue);
/* Server time spent serving (not blocked) so far, summed over servers, ns;
 * a service in progress counts up to now. */
gint64 request_queue_busy_ns(const RequestQueue *queue);

void request_queue_check_invariants(const RequestQueue *queue);


#endif
