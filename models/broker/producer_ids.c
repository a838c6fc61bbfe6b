/*
 * producer_ids: InitProducerId for idempotent producers, after Kafka's
 * ZooKeeper-based ProducerIdManager: a broker claims blocks of 1000 producer
 * ids by a versioned write of /latest_producer_id_block ("start end"), so no
 * two brokers ever hand out the same id, and gives them out one at a time
 * with epoch 0. Requests that arrive while no id is left wait for the block.
 * The transaction coordinator takes ids from the same blocks
 * (producer_ids_allocate), as Kafka's does.
 *
 * Invariants:
 *  1. pid_next <= pid_block_end; ids in [pid_next, pid_block_end) are this
 *     broker's alone.
 *  2. pid_waiters is empty unless a block claim is in flight.
 */
#include "broker_internal.h"

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
    guint64 done_id;
} PidWaiter;

static void claim_block(BrokerState *state);

static void
answer(BrokerState *state, SimNodeId client, gint32 correlation_id, KafkaError error,
       gint64 producer_id)
{
    KInitProducerIdMessage *response = kproto_new(KMSG_INIT_PRODUCER_ID_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->producer_id = producer_id;
    response->producer_epoch = 0;
    broker_send(state, client, &response->base);
}

static void
serve_waiters(BrokerState *state)
{
    while (!g_queue_is_empty(&state->pid_waiters) && state->pid_next < state->pid_block_end) {
        PidWaiter *waiter = g_queue_pop_head(&state->pid_waiters);
        gint64 producer_id = state->pid_next++;
        if (waiter->done_cb != NULL)
            waiter->done_cb(state, KAFKA_ERROR_NONE, producer_id, waiter->done_id);
        else
            answer(state, waiter->client, waiter->correlation_id, KAFKA_ERROR_NONE, producer_id);
        g_free(waiter);
    }
    if (!g_queue_is_empty(&state->pid_waiters))
        claim_block(state);
}

static void
fail_waiters(BrokerState *state)
{
    while (!g_queue_is_empty(&state->pid_waiters)) {
        PidWaiter *waiter = g_queue_pop_head(&state->pid_waiters);
        if (waiter->done_cb != NULL)
            waiter->done_cb(state, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, -1, waiter->done_id);
        else
            answer(state, waiter->client, waiter->correlation_id,
                   KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, -1);
        g_free(waiter);
    }
}

static void
block_written(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    gint64 *block = arg;
    state->pid_block_in_flight = FALSE;
    if (result->error == ZK_OK) {
        state->pid_next = block[0];
        state->pid_block_end = block[1];
        serve_waiters(state);
    } else if (result->error == ZK_BAD_VERSION || result->error == ZK_NODE_EXISTS) {
        /* Another broker claimed the block first: read again. */
        claim_block(state);
    } else {
        fail_waiters(state);
    }
    broker_zk_context_done(state, block);
}

static void
block_read(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    (void)arg;
    if (result->error != ZK_OK && result->error != ZK_NO_NODE) {
        state->pid_block_in_flight = FALSE;
        fail_waiters(state);
        return;
    }
    gint64 *block = broker_zk_context(state, 2 * sizeof(gint64));
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
        zk_client_create(state->zk, PID_BLOCK_PATH, data, strlen(data), 0, block_written,
                            block);
    else
        zk_client_set(state->zk, PID_BLOCK_PATH, data, strlen(data), result->version,
                         block_written, block);
}

static void
claim_block(BrokerState *state)
{
    if (state->pid_block_in_flight)
        return;
    state->pid_block_in_flight = TRUE;
    zk_client_get(state->zk, PID_BLOCK_PATH, FALSE, block_read, NULL);
}

void
producer_ids_handle_request(BrokerState *state, SimNodeId from, KInitProducerIdMessage *request)
{
    KSIM_ASSERT(state->pid_next <= state->pid_block_end);
    PidWaiter *waiter = g_new0(PidWaiter, 1);
    waiter->client = from;
    waiter->correlation_id = request->correlation_id;
    g_queue_push_tail(&state->pid_waiters, waiter);
    serve_waiters(state);
}

void
producer_ids_allocate(BrokerState *state, ProducerIdsCb done_cb, guint64 done_id)
{
    KSIM_ASSERT(done_cb != NULL);
    PidWaiter *waiter = g_new0(PidWaiter, 1);
    waiter->client = SIM_NODE_NONE;
    waiter->done_cb = done_cb;
    waiter->done_id = done_id;
    g_queue_push_tail(&state->pid_waiters, waiter);
    serve_waiters(state);
}

void
producer_ids_state_free(BrokerState *state)
{
    g_queue_clear_full(&state->pid_waiters, g_free);
}
