/*
 * replica_verify: a partition leader's transaction verification (KIP-890),
 * after Kafka 4.0's ReplicaManager.handleProduceAppend,
 * maybeStartTransactionVerificationForPartition(s) and
 * AddPartitionsToTxnManager (trunk 1eb7644).
 *
 * Part 1 (transaction.partition.verification.enable): before a leader
 * appends the first transactional batch of a producer that has no open
 * transaction in the partition's log, it creates the producer's
 * verification guard in the log (plog_txn.h) and asks the transaction
 * coordinator — the leader of the transactional id's __transaction_state
 * partition, as this broker's metadata knows it — with AddPartitionsToTxn v4
 * and verifyOnly whether the partition is in the producer's ongoing
 * transaction. Only then is the batch appended, with the guard
 * (replica_produce_verified), so a batch that arrives after its transaction
 * ended is refused instead of opening a transaction no marker will close.
 *
 * Part 2 (a client of transaction.version 2, produce v12): the same request
 * without verifyOnly adds the partition to the transaction (the client sends
 * no AddPartitionsToTxn); the coordinator checks the producer's epoch, which
 * it bumps at every commit and abort, so a batch of an earlier transaction
 * is fenced. ksim follows KIP-890's design for this path; trunk 1eb7644 has
 * it as work in progress (AddPartitionsToTxnManager's `addPartition`).
 *
 * The coordinator's errors become produce errors as Kafka maps them:
 * PRODUCER_FENCED → INVALID_PRODUCER_EPOCH (AddPartitionsToTxnManager),
 * INVALID_TXN_STATE stays (the coordinator's TRANSACTION_ABORTABLE, which
 * Kafka turns into INVALID_TXN_STATE for clients before produce v11: ksim's
 * coordinator answers INVALID_TXN_STATE directly), and the retriable
 * CONCURRENT_TRANSACTIONS, NETWORK_EXCEPTION, COORDINATOR_LOAD_IN_PROGRESS,
 * COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR → NOT_ENOUGH_REPLICAS,
 * which every client retries without a metadata refresh (ReplicaManager).
 * No coordinator known: COORDINATOR_NOT_AVAILABLE, so NOT_ENOUGH_REPLICAS.
 * A request unanswered within the broker's request timeout, or whose
 * connection broke, fails with NETWORK_EXCEPTION.
 *
 * Not modelled: batching several producers' verifications per coordinator
 * into one request (Kafka's InterBrokerSendThread drains per node), the
 * verification entry's lowest-sequence bookkeeping, and the expiry of
 * unverified entries (producer.id.expiration.ms).
 *
 * Invariants (replica_verify_check_invariants):
 *  1. Each pending verification has a batch, a coordinator and a pending
 *     timeout timer.
 *
 * Transitions of a pending verification:
 *   (new) --replica_verify_start--> PENDING (request sent)
 *   PENDING --answer, timeout, disconnect--> appended or refused
 *           (replica_produce_verified), freed
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"
#include "sim_net.h"
#include "txn_coord.h"

/* The broker's request.timeout.ms for its inter-broker requests. */
#define VERIFY_REQUEST_TIMEOUT_MS 30000
#define VERIFY_PENDING_MAX (1u << 20)

typedef struct {
    BrokerState *state; /* for its timer */
    SimNodeId coordinator;
    gint32 correlation_id;
    KTopicPartition tp;
    ProduceAsk ask;
    PlogBatch *batch; /* owned */
    guint64 guard;
    SimTimerId timeout_timer;
} PendingVerification;

static void
pending_free(BrokerState *state, PendingVerification *pending)
{
    sim_timer_cancel(state->broker->world, pending->timeout_timer);
    plog_batch_free(pending->batch);
    g_free(pending);
}

void
replica_verify_state_init(BrokerState *state)
{
    state->pending_verifications = g_ptr_array_new();
}

/* A crash or a stop: the requests waiting are lost with the process. */
void
replica_verify_state_free(BrokerState *state)
{
    for (guint i = 0; i < state->pending_verifications->len; i++)
        pending_free(state, g_ptr_array_index(state->pending_verifications, i));
    g_ptr_array_free(state->pending_verifications, TRUE);
    state->pending_verifications = NULL;
}

gboolean
replica_verify_needed(const BrokerState *state, const Partition *p,
                      const KProduceRequest *request)
{
    const PlogBatch *batch = request->batch;
    if (request->transactional_id[0] == '\0' || batch->producer_id < 0 ||
        (batch->attributes & PLOG_BATCH_TRANSACTIONAL) == 0 ||
        (batch->attributes & PLOG_BATCH_CONTROL) != 0)
        return FALSE;
    if (!state->broker->config.transaction_partition_verification_enable &&
        request->transaction_version < 2)
        return FALSE;
    /* Kafka's maybeStartTransactionVerification: a producer whose
     * transaction is open here was verified by its first batch. */
    return !plog_txn_state_is_ongoing(plog_txn_state(p->log), batch->producer_id);
}

/* The coordinator's answer as the produce's error. */
static KafkaError
produce_error_of(KafkaError error)
{
    switch (error) {
    case KAFKA_ERROR_PRODUCER_FENCED:
        return KAFKA_ERROR_INVALID_PRODUCER_EPOCH;
    case KAFKA_ERROR_CONCURRENT_TRANSACTIONS:
    case KAFKA_ERROR_NETWORK_EXCEPTION:
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
    case KAFKA_ERROR_NOT_COORDINATOR:
        return KAFKA_ERROR_NOT_ENOUGH_REPLICAS;
    default:
        return error;
    }
}

/* Ends a verification with the coordinator's `error`: the batch is appended
 * or refused. */
static void
finish(BrokerState *state, PendingVerification *pending, KafkaError error)
{
    gboolean removed = g_ptr_array_remove(state->pending_verifications, pending);
    KSIM_ASSERT(removed);
    sim_timer_cancel(state->broker->world, pending->timeout_timer);
    PlogBatch *batch = pending->batch;
    pending->batch = NULL;
    ProduceAsk ask = pending->ask;
    KTopicPartition tp = pending->tp;
    guint64 guard = pending->guard;
    pending_free(state, pending);
    replica_produce_verified(state, &tp, &ask, batch, produce_error_of(error), guard);
}

/* Fails every verification waiting on `node` (Kafka's NetworkClient cancels
 * the requests of a connection that broke or timed out). */
static void
fail_node(BrokerState *state, SimNodeId node)
{
    for (guint i = 0; i < state->pending_verifications->len;) {
        PendingVerification *pending = g_ptr_array_index(state->pending_verifications, i);
        if (pending->coordinator != node) {
            i++;
            continue;
        }
        finish(state, pending, KAFKA_ERROR_NETWORK_EXCEPTION);
        i = 0; /* the append may have changed the array */
    }
}

static void
timed_out(SimWorld *world, void *ctx, void *arg)
{
    (void)ctx;
    PendingVerification *pending = arg;
    BrokerState *state = pending->state;
    pending->timeout_timer = SIM_EVENT_ID_NONE;
    sim_net_close(sim_world_net(world), state->broker->node, pending->coordinator);
    fail_node(state, pending->coordinator);
}

void
replica_verify_start(BrokerState *state, Partition *p, const ProduceAsk *ask,
                     KProduceRequest *request)
{
    KSIM_ASSERT(state->pending_verifications->len < VERIFY_PENDING_MAX);
    const BrokerConfig *config = &state->broker->config;
    PendingVerification *pending = g_new0(PendingVerification, 1);
    pending->state = state;
    pending->tp = request->tp;
    pending->ask = *ask;
    pending->batch = request->batch;
    request->batch = NULL;
    pending->guard = plog_txn_verification_start(p->log, pending->batch->producer_id);
    KTopicPartition coordinator_tp;
    ktp_set(&coordinator_tp, TXN_STATE_TOPIC,
            txn_coord_partition_for(request->transactional_id,
                                    config->transaction_state_log_num_partitions));
    gboolean exists;
    pending->coordinator =
        broker_services_leader_node(state->services, &coordinator_tp, &exists);
    g_ptr_array_add(state->pending_verifications, pending);
    if (pending->coordinator == SIM_NODE_NONE) {
        finish(state, pending, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    KTxnMessage *verify = kproto_new(KMSG_ADD_PARTITIONS_TO_TXN_REQUEST);
    verify->correlation_id = state->correlation_next++;
    KPROTO_SET_ID(verify->transactional_id, request->transactional_id);
    verify->producer_id = pending->batch->producer_id;
    verify->producer_epoch = pending->batch->producer_epoch;
    verify->verify_only = ask->transaction_version < 2;
    verify->transaction_version = ask->transaction_version;
    g_array_append_val(verify->partitions, pending->tp);
    kproto_update_size(&verify->base);
    pending->correlation_id = verify->correlation_id;
    pending->timeout_timer =
        sim_timer_set(state->broker->world, state->broker->node,
                      VERIFY_REQUEST_TIMEOUT_MS * SIM_NS_PER_MS, timed_out, pending);
    broker_send(state, pending->coordinator, &verify->base);
}

void
replica_verify_handle_response(BrokerState *state, SimNodeId from, const KTxnMessage *response)
{
    for (guint i = 0; i < state->pending_verifications->len; i++) {
        PendingVerification *pending = g_ptr_array_index(state->pending_verifications, i);
        if (pending->coordinator == from && pending->correlation_id == response->correlation_id) {
            finish(state, pending, response->error);
            return;
        }
    }
}

void
replica_verify_peer_disconnected(BrokerState *state, SimNodeId peer)
{
    fail_node(state, peer);
}

void
replica_verify_check_invariants(const BrokerState *state)
{
    KSIM_ASSERT(state->pending_verifications->len <= VERIFY_PENDING_MAX);
    for (guint i = 0; i < state->pending_verifications->len; i++) {
        const PendingVerification *pending = g_ptr_array_index(state->pending_verifications, i);
        KSIM_ASSERT(pending->batch != NULL);
        KSIM_ASSERT(pending->coordinator != SIM_NODE_NONE);
        KSIM_ASSERT(sim_timer_pending(state->broker->world, pending->timeout_timer));
    }
}
