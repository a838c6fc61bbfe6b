/*
 * producer_ids: InitProducerId for idempotent producers, after Kafka's
 * ZooKeeper-based ProducerIdManager: a broker claims blocks of 1000 producer
 * ids by a versioned write of /latest_producer_id_block ("start end"), so no
 * two brokers ever hand out the same id, and gives them out one at a time
 * with epoch 0. Requests that arrive while no id is left wait for the block.
 * The transaction coordinator takes ids from the same blocks
 * (producer_ids_allocate), as Kafka's does.
 *
 * Invariants (producer_ids_check_invariants):
 *  1. next <= block_end; ids in [next, block_end) are this broker's alone
 *     (the coordination service's versioned write guarantees the second half).
 *  2. waiters is empty unless a block claim is in flight (a claim that
 *     fails fails its waiters).
 *
 * In KRaft mode the block comes from the active controller instead
 * (AllocateProducerIds, Kafka's RPCProducerIdManager; broker_kraft.c), which
 * writes the next block's start to the metadata log.
 *
 * Transitions of the block:
 *   NONE LEFT --a waiter--> CLAIMING (claim_block: read the znode)
 *   CLAIMING --read--> WRITING (block_read: the next block, a versioned write)
 *   WRITING --written--> SERVING (block_written: waiters served in order)
 *   WRITING --lost the race--> CLAIMING again; any --error--> NONE LEFT,
 *   waiters failed (fail_waiters)
 */
#include "producer_ids.h"

#include "sim_assert.h"

#include <stdio.h>
#include <string.h>

#define PID_BLOCK_SIZE 1000
#define PID_BLOCK_PATH "/latest_producer_id_block"

/* A client's request, or the transaction coordinator's (done_cb set). */
typedef struct {
    SimNodeId client;
    gint32 correlation_id;
    ProducerIdsCb done_cb;
    void *user_data;
    guint64 done_id;
} PidWaiter;

struct ProducerIds {
    BrokerServices *services;
    gint64 next;
    gint64 block_end;         /* exclusive; next == block_end: none left */
    gboolean block_in_flight;
    GQueue waiters;           /* PidWaiter* */
};

/* The context of a block write: the block claimed, for its ids. */
typedef struct {
    ProducerIds *ids;
    gint64 block[2];
} BlockClaim;

static void claim_block(ProducerIds *ids);

static void
answer(ProducerIds *ids, SimNodeId client, gint32 correlation_id, KafkaError error,
       gint64 producer_id)
{
    KInitProducerIdMessage *response = kproto_new(KMSG_INIT_PRODUCER_ID_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->producer_id = producer_id;
    response->producer_epoch = 0;
    broker_services_send(ids->services, client, &response->base);
}

static void
serve_waiters(ProducerIds *ids)
{
    while (!g_queue_is_empty(&ids->waiters) && ids->next < ids->block_end) {
        PidWaiter *waiter = g_queue_pop_head(&ids->waiters);
        gint64 producer_id = ids->next++;
        if (waiter->done_cb != NULL)
            waiter->done_cb(waiter->user_data, KAFKA_ERROR_NONE, producer_id, waiter->done_id);
        else
            answer(ids, waiter->client, waiter->correlation_id, KAFKA_ERROR_NONE, producer_id);
        g_free(waiter);
    }
    if (!g_queue_is_empty(&ids->waiters))
        claim_block(ids);
}

static void
fail_waiters(ProducerIds *ids)
{
    while (!g_queue_is_empty(&ids->waiters)) {
        PidWaiter *waiter = g_queue_pop_head(&ids->waiters);
        if (waiter->done_cb != NULL)
            waiter->done_cb(waiter->user_data, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, -1,
                            waiter->done_id);
        else
            answer(ids, waiter->client, waiter->correlation_id,
                   KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, -1);
        g_free(waiter);
    }
}

static void
block_written(void *owner, const ZkResult *result, void *arg)
{
    BlockClaim *claim = arg;
    ProducerIds *ids = claim->ids;
    (void)owner;
    ids->block_in_flight = FALSE;
    if (result->error == ZK_OK) {
        ids->next = claim->block[0];
        ids->block_end = claim->block[1];
        serve_waiters(ids);
    } else if (result->error == ZK_BAD_VERSION || result->error == ZK_NODE_EXISTS) {
        /* Another broker claimed the block first: read again. */
        claim_block(ids);
    } else {
        fail_waiters(ids);
    }
    broker_services_zk_context_done(ids->services, claim);
}

static void
block_read(void *owner, const ZkResult *result, void *arg)
{
    ProducerIds *ids = arg;
    (void)owner;
    if (result->error != ZK_OK && result->error != ZK_NO_NODE) {
        ids->block_in_flight = FALSE;
        fail_waiters(ids);
        return;
    }
    BlockClaim *claim = broker_services_zk_context(ids->services, sizeof(BlockClaim));
    claim->ids = ids;
    gint64 *block = claim->block;
    gint64 start = 0;
    if (result->error == ZK_OK) {
        g_autofree char *text = g_strndup((const char *)result->data, result->len);
        gint64 previous_start = 0, previous_end = 0;
        if (sscanf(text, "%" G_GINT64_FORMAT " %" G_GINT64_FORMAT, &previous_start,
                   &previous_end) == 2)
            start = previous_end;
    }
    block[0] = start;
    block[1] = start + PID_BLOCK_SIZE;
    g_autofree char *data = g_strdup_printf("%" G_GINT64_FORMAT " %" G_GINT64_FORMAT, block[0],
                                            block[1]);
    if (result->error == ZK_NO_NODE)
        zk_client_create(broker_services_zk(ids->services), PID_BLOCK_PATH, data, strlen(data), 0,
                         block_written, claim);
    else
        zk_client_set(broker_services_zk(ids->services), PID_BLOCK_PATH, data, strlen(data),
                      result->version, block_written, claim);
}

/* The zk client's callbacks (block_read, block_written) never run after the
 * broker crashed, so `ids` is theirs to use: the client goes with it. */
static void
claim_block(ProducerIds *ids)
{
    if (ids->block_in_flight)
        return;
    ids->block_in_flight = TRUE;
    if (broker_services_kraft_allocate_producer_ids(ids->services))
        return;
    zk_client_get(broker_services_zk(ids->services), PID_BLOCK_PATH, FALSE, block_read, ids);
}

ProducerIds *
producer_ids_new(BrokerServices *services)
{
    ProducerIds *ids = g_new0(ProducerIds, 1);
    ids->services = services;
    g_queue_init(&ids->waiters);
    return ids;
}

void
producer_ids_free(ProducerIds *ids)
{
    if (ids == NULL)
        return;
    g_queue_clear_full(&ids->waiters, g_free);
    g_free(ids);
}

void
producer_ids_handle_request(ProducerIds *ids, SimNodeId from,
                            const KInitProducerIdMessage *request)
{
    KSIM_ASSERT(ids->next <= ids->block_end);
    PidWaiter *waiter = g_new0(PidWaiter, 1);
    waiter->client = from;
    waiter->correlation_id = request->correlation_id;
    g_queue_push_tail(&ids->waiters, waiter);
    serve_waiters(ids);
}

void
producer_ids_allocate(ProducerIds *ids, ProducerIdsCb done_cb, void *user_data,
                      guint64 done_id)
{
    KSIM_ASSERT(done_cb != NULL);
    PidWaiter *waiter = g_new0(PidWaiter, 1);
    waiter->client = SIM_NODE_NONE;
    waiter->done_cb = done_cb;
    waiter->user_data = user_data;
    waiter->done_id = done_id;
    g_queue_push_tail(&ids->waiters, waiter);
    serve_waiters(ids);
}

void
producer_ids_block_granted(ProducerIds *ids, KafkaError error, gint64 start, gint64 count)
{
    if (!ids->block_in_flight)
        return;
    ids->block_in_flight = FALSE;
    if (error != KAFKA_ERROR_NONE) {
        fail_waiters(ids);
        return;
    }
    ids->next = start;
    ids->block_end = start + count;
    serve_waiters(ids);
}

void
producer_ids_check_invariants(const ProducerIds *ids)
{
    KSIM_ASSERT(ids->next <= ids->block_end);
    if (!ids->block_in_flight)
        KSIM_ASSERT(ids->waiters.length == 0);
}
