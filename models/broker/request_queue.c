/*
 * request_queue: a multi-server FIFO station in virtual time (see
 * request_queue.h).
 *
 * Invariants:
 *  1. A server is IDLE (no item, no timer), SERVING (an item, its timer
 *     pending) or BLOCKED (an item whose service ended, no timer).
 *  2. Items wait only while no server is IDLE (request_queue_offer starts an
 *     idle server at once; a server freed takes the head: server_take_next).
 *  3. At most `capacity` items wait when capacity > 0.
 *  4. Waiting items start service in the order they were offered: the head
 *     of `waiting` is the oldest.
 *
 * Transitions: IDLE --offer/take_next--> SERVING (server_start);
 * SERVING --timer--> IDLE or BLOCKED (service_done_cb);
 * BLOCKED --retry_blocked, accepted--> IDLE (server_release).
 */
#include "request_queue.h"

#include "sim_assert.h"

/* Bounds: a broker has at most a few hundred threads and a bounded queue;
 * an unbounded station's waiting list is bounded by this assertion. */
#define REQUEST_QUEUE_SERVERS_MAX 1024u
#define REQUEST_QUEUE_WAITING_MAX 10000000u

typedef struct {
    void *item;
    gint64 service_ns;
    gint64 enqueued_ns;
} Waiting;

typedef struct {
    RequestQueue *queue;
    void *item;              /* NULL: idle */
    SimTimerId timer;        /* pending while serving */
    gboolean serving;        /* the timer is set and has not fired */
    RequestQueueTiming timing;
} Server;

struct RequestQueue {
    SimWorld *world;
    SimNodeId node;
    guint capacity;
    RequestQueueDoneFn done;
    void *owner;
    Server *servers;
    guint n_servers;
    GQueue waiting;          /* Waiting* (owned) */
    gint64 busy_ns_done;     /* service time of services that ended */
    void (*space)(void *owner);
    void *space_owner;
};

/* GLib's GQueue accessors take no const. */
static guint
waiting_length(const RequestQueue *queue)
{
    return queue->waiting.length;
}

static void server_start(Server *server, void *item, gint64 service_ns, gint64 enqueued_ns);

RequestQueue *
request_queue_new(SimWorld *world, SimNodeId node, guint servers, guint capacity,
                  RequestQueueDoneFn done, void *owner)
{
    KSIM_ASSERT(servers >= 1);
    KSIM_ASSERT(servers <= REQUEST_QUEUE_SERVERS_MAX);
    KSIM_ASSERT(done != NULL);
    RequestQueue *queue = g_new0(RequestQueue, 1);
    queue->world = world;
    queue->node = node;
    queue->capacity = capacity;
    queue->done = done;
    queue->owner = owner;
    queue->n_servers = servers;
    queue->servers = g_new0(Server, servers);
    for (guint i = 0; i < servers; i++) {
        queue->servers[i].queue = queue;
    }
    g_queue_init(&queue->waiting);
    return queue;
}

void
request_queue_free(RequestQueue *queue, GDestroyNotify item_free)
{
    if (queue == NULL)
        return;
    for (guint i = 0; i < queue->n_servers; i++) {
        Server *server = &queue->servers[i];
        if (server->serving)
            sim_timer_cancel(queue->world, server->timer);
        if (server->item != NULL && item_free != NULL)
            item_free(server->item);
    }
    Waiting *waiting;
    while ((waiting = g_queue_pop_head(&queue->waiting)) != NULL) {
        if (item_free != NULL)
            item_free(waiting->item);
        g_free(waiting);
    }
    g_free(queue->servers);
    g_free(queue);
}

static Server *
idle_server(RequestQueue *queue)
{
    for (guint i = 0; i < queue->n_servers; i++)
        if (queue->servers[i].item == NULL)
            return &queue->servers[i];
    return NULL;
}

/* A server's item went on: the server takes the oldest waiting item. */
static void
server_release(Server *server)
{
    RequestQueue *queue = server->queue;
    server->item = NULL;
    Waiting *head = g_queue_pop_head(&queue->waiting);
    if (head == NULL)
        return;
    server_start(server, head->item, head->service_ns, head->enqueued_ns);
    g_free(head);
}

static void
service_done_cb(SimWorld *world, void *ctx, void *arg)
{
    Server *server = arg;
    RequestQueue *queue = server->queue;
    (void)world;
    (void)ctx;
    server->serving = FALSE;
    server->timing.done_ns = sim_now_ns(queue->world);
    queue->busy_ns_done += server->timing.done_ns - server->timing.started_ns;
    if (!queue->done(queue->owner, server->item, &server->timing))
        return;
    server_release(server);
    if (queue->space != NULL)
        queue->space(queue->space_owner);
}

void
request_queue_set_space_cb(RequestQueue *queue, void (*space)(void *owner), void *owner)
{
    queue->space = space;
    queue->space_owner = owner;
}

static void
server_start(Server *server, void *item, gint64 service_ns, gint64 enqueued_ns)
{
    RequestQueue *queue = server->queue;
    KSIM_ASSERT(server->item == NULL);
    KSIM_ASSERT(item != NULL);
    KSIM_ASSERT(service_ns >= 0);
    server->item = item;
    server->timing.enqueued_ns = enqueued_ns;
    server->timing.started_ns = sim_now_ns(queue->world);
    server->timing.done_ns = -1;
    server->timer = sim_timer_set(queue->world, queue->node, service_ns, service_done_cb, server);
    server->serving = TRUE;
}

gboolean
request_queue_full(const RequestQueue *queue)
{
    for (guint i = 0; i < queue->n_servers; i++)
        if (queue->servers[i].item == NULL)
            return FALSE;
    return queue->capacity > 0 && waiting_length(queue) >= queue->capacity;
}

gboolean
request_queue_offer(RequestQueue *queue, void *item, gint64 service_ns)
{
    KSIM_ASSERT(item != NULL);
    gint64 now = sim_now_ns(queue->world);
    Server *server = idle_server(queue);
    if (server != NULL) {
        server_start(server, item, service_ns, now);
        return TRUE;
    }
    if (request_queue_full(queue))
        return FALSE;
    KSIM_ASSERT(waiting_length(queue) < REQUEST_QUEUE_WAITING_MAX);
    Waiting *waiting = g_new(Waiting, 1);
    waiting->item = item;
    waiting->service_ns = service_ns;
    waiting->enqueued_ns = now;
    g_queue_push_tail(&queue->waiting, waiting);
    return TRUE;
}

void
request_queue_retry_blocked(RequestQueue *queue)
{
    for (guint i = 0; i < queue->n_servers; i++) {
        Server *server = &queue->servers[i];
        gboolean blocked = server->item != NULL && !server->serving;
        if (blocked && queue->done(queue->owner, server->item, &server->timing))
            server_release(server);
    }
}

guint
request_queue_waiting(const RequestQueue *queue)
{
    return waiting_length(queue);
}

guint
request_queue_busy(const RequestQueue *queue)
{
    guint busy = 0;
    for (guint i = 0; i < queue->n_servers; i++)
        busy += queue->servers[i].item != NULL;
    return busy;
}

gint64
request_queue_busy_ns(const RequestQueue *queue)
{
    gint64 total = queue->busy_ns_done;
    gint64 now = sim_now_ns(queue->world);
    for (guint i = 0; i < queue->n_servers; i++) {
        const Server *server = &queue->servers[i];
        if (server->serving)
            total += now - server->timing.started_ns;
    }
    return total;
}

void
request_queue_check_invariants(const RequestQueue *queue)
{
    guint idle = 0;
    for (guint i = 0; i < queue->n_servers; i++) {
        const Server *server = &queue->servers[i];
        /* 1. A timer only with an item. */
        if (server->serving)
            KSIM_ASSERT(server->item != NULL);
        if (server->serving)
            KSIM_ASSERT(sim_timer_pending(queue->world, server->timer));
        idle += server->item == NULL;
    }
    /* 2. Nothing waits beside an idle server. */
    if (idle > 0)
        KSIM_ASSERT(waiting_length(queue) == 0);
    /* 3. */
    if (queue->capacity > 0)
        KSIM_ASSERT(waiting_length(queue) <= queue->capacity);
}
