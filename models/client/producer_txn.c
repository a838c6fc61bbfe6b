/*
 * producer_txn: the transactional producer's TransactionManager (see
 * producer.h for the API and txn_coord.h for the coordinator).
 *
 * States (Kafka's TransactionManager.State):
 *
 *   UNINITIALIZED ──init──▶ INITIALIZING ──InitProducerId ok──▶ READY
 *   READY ──begin──▶ IN_TRANSACTION ──commit──▶ COMMITTING ──EndTxn ok──▶ READY
 *   IN_TRANSACTION/COMMITTING ──a send failed──▶ ABORTABLE_ERROR
 *   IN_TRANSACTION/ABORTABLE_ERROR ──abort──▶ ABORTING ──EndTxn ok──▶ READY,
 *        or INITIALIZING (epoch bump after a sequence gap) ──▶ READY
 *   any ──fenced (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, ...)──▶ FATAL_ERROR
 *
 * The functions that make them: producer_init_transactions (INITIALIZING),
 * handle_init (READY), producer_begin_transaction, producer_commit_transaction
 * and producer_abort_transaction (IN_TRANSACTION, COMMITTING, ABORTING),
 * handle_end_txn (READY, or INITIALIZING for the bump), maybe_end_locally
 * (READY when a transaction ends with nothing to tell the coordinator),
 * producer_txn_batch_failed, handle_add_offsets and handle_txn_offset_commit
 * (ABORTABLE_ERROR), and fatal (FATAL_ERROR).
 *
 * One transactional request is in flight at a time, in this priority:
 * FindCoordinator (transaction, or group for TxnOffsetCommit), InitProducerId,
 * AddPartitionsToTxn (the partitions used since the last one),
 * AddOffsetsToTxn then TxnOffsetCommit, EndTxn (once every send completed).
 * Retriable errors retry after retry.backoff.ms; NOT_COORDINATOR,
 * COORDINATOR_NOT_AVAILABLE, a timeout (request.timeout.ms) or a broken
 * connection look the coordinator up again.
 *
 * Transaction version 2 (KIP-890 part 2; the cluster's transaction.version
 * feature at 2, which Kafka 4.0's TransactionManager reads from ApiVersions):
 * a partition is in the transaction as soon as it is used (`added`, no
 * AddPartitionsToTxn: the leader's verification adds it when the produce
 * arrives), and EndTxn answers with the producer epoch the coordinator bumped
 * to, which the producer adopts: the next transaction's batches restart their
 * sequences under it, and a delayed request of this one is fenced. The bump
 * also closes a sequence gap, so an abort needs no InitProducerId.
 *
 * Invariants (producer_txn_check_invariants):
 *  1. A partition is in at most one of `added`, `adding`, `fresh`.
 *  2. `adding` is non-empty only while an AddPartitionsToTxn is in flight.
 *  3. An open transaction (IN_TRANSACTION .. ABORTING) has a log entry, and
 *     only then; batches are drained only for `added` partitions in
 *     IN_TRANSACTION or COMMITTING.
 *  4. A user operation is pending only in INITIALIZING, COMMITTING, ABORTING
 *     or IN_TRANSACTION (send offsets).
 */
#include "producer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

#define TXN_LOG_MAX (1u << 24)
#define TXN_OPS_MAX (1u << 24)

typedef enum {
    TXN_UNINITIALIZED = 0,
    TXN_INITIALIZING,
    TXN_READY,
    TXN_IN_TRANSACTION,
    TXN_COMMITTING,
    TXN_ABORTING,
    TXN_ABORTABLE_ERROR,
    TXN_FATAL_ERROR,
} TxnClientState;

typedef enum {
    OP_NONE = 0,
    OP_INIT,
    OP_SEND_OFFSETS,
    OP_COMMIT,
    OP_ABORT,
} TxnOp;

struct ProducerTxn {
    TxnClientState state;
    KafkaError error; /* the abortable or fatal error */
    gboolean bump_needed; /* a failed send left a sequence gap */
    gint32 log_index;     /* of the open transaction in the producer's log, -1 none */
    /* Coordinators. */
    SimNodeId coordinator;       /* the transaction coordinator, or NONE */
    SimNodeId group_coordinator; /* for TxnOffsetCommit, or NONE */
    /* The request in flight. */
    gint32 correlation_id; /* 0: none */
    SimNodeId request_node;
    KafkaMsgType response_type;
    KCoordinatorType find_type;
    SimTimerId request_timer;
    gint64 retry_ns;
    /* Partitions of the open transaction (KTopicPartition). */
    GArray *added;
    GArray *adding;
    GArray *fresh;
    gboolean offsets_added; /* AddOffsetsToTxn done: the transaction has begun */
    /* The user's operation. */
    TxnOp op;
    ProducerTxnCb op_cb;
    void *op_user_data;
    gboolean offsets_step_commit; /* send offsets: AddOffsetsToTxn done, TxnOffsetCommit next */
    char group_id[KAFKA_GROUP_ID_MAX + 1];
    char member_id[KAFKA_MEMBER_ID_MAX + 1]; /* KIP-447 group metadata; "" none */
    gint32 generation_id;                    /* KAFKA_GENERATION_NONE: none */
    GArray *offsets; /* KOffsetPartition */
    guint64 history_op; /* the TXN_INIT/COMMIT/ABORT op of `op`, 0 none */
};

static const ProducerConfig *
config_of(const ProducerState *state)
{
    return &state->producer->config;
}

static gint64
now_of(const ProducerState *state)
{
    return sim_now_ns(state->producer->world);
}

/* ---- the history (history.h: HISTORY_FN_TXN_*) ---- */

static guint64
history_txn_invoke(Producer *producer, HistoryFn fn, guint64 number)
{
    return history_invoke(producer->history, sim_now_ns(producer->world), fn, producer->process,
                          0, -1, 0, number);
}

static void
history_txn_complete(Producer *producer, guint64 op, KafkaError error)
{
    history_complete(producer->history, op, sim_now_ns(producer->world),
                     error == KAFKA_ERROR_NONE ? HISTORY_OK : HISTORY_FAIL, -1, -1, (gint32)error);
}

/* The history op of a user operation: TXN_INIT, TXN_COMMIT, TXN_ABORT, or
 * none (send offsets records its TXN_OFFSETS ops when accepted). */
static HistoryFn
history_fn_of(TxnOp op, gboolean *recorded)
{
    *recorded = op == OP_INIT || op == OP_COMMIT || op == OP_ABORT;
    return op == OP_INIT ? HISTORY_FN_TXN_INIT
           : op == OP_COMMIT ? HISTORY_FN_TXN_COMMIT
                             : HISTORY_FN_TXN_ABORT;
}

/* ---- the log of transactions ---- */

static void
txn_info_free(gpointer data)
{
    ProducerTxnInfo *info = data;
    g_array_free(info->ops, TRUE);
    g_array_free(info->offsets, TRUE);
    g_free(info);
}

void
producer_txn_log_free(GPtrArray *log)
{
    if (log == NULL)
        return;
    for (guint i = 0; i < log->len; i++)
        txn_info_free(g_ptr_array_index(log, i));
    g_ptr_array_free(log, TRUE);
}

static ProducerTxnInfo *
open_info(const ProducerState *state)
{
    const ProducerTxn *txn = state->txn;
    if (txn == NULL || txn->log_index < 0)
        return NULL;
    return g_ptr_array_index(state->producer->txn_log, (guint)txn->log_index);
}

static void
log_begin(ProducerState *state)
{
    Producer *producer = state->producer;
    KSIM_ASSERT(producer->txn_log->len < TXN_LOG_MAX);
    ProducerTxnInfo *info = g_new0(ProducerTxnInfo, 1);
    info->number = producer->txn_log->len + 1;
    info->incarnation = producer->incarnation;
    info->producer_id = state->producer_id;
    info->producer_epoch = state->producer_epoch;
    info->begin_ns = now_of(state);
    info->end_ns = -1;
    info->outcome = PRODUCER_TXN_OPEN;
    info->ops = g_array_new(FALSE, FALSE, sizeof(guint64));
    info->offsets = g_array_new(FALSE, FALSE, sizeof(KOffsetPartition));
    state->txn->log_index = (gint32)producer->txn_log->len;
    g_ptr_array_add(producer->txn_log, info);
}

static void
log_end(ProducerState *state, ProducerTxnOutcome outcome, KafkaError error)
{
    ProducerTxnInfo *info = open_info(state);
    if (info == NULL)
        return;
    info->outcome = outcome;
    info->error = error;
    info->end_ns = now_of(state);
    state->txn->log_index = -1;
}

void
producer_txn_note_op(ProducerState *state, guint64 op)
{
    ProducerTxnInfo *info = open_info(state);
    if (info == NULL)
        return;
    KSIM_ASSERT(info->ops->len < TXN_OPS_MAX);
    g_array_append_val(info->ops, op);
}

/* ---- object ---- */

ProducerTxn *
producer_txn_new(ProducerState *state)
{
    (void)state;
    ProducerTxn *txn = g_new0(ProducerTxn, 1);
    txn->state = TXN_UNINITIALIZED;
    txn->log_index = -1;
    txn->coordinator = SIM_NODE_NONE;
    txn->group_coordinator = SIM_NODE_NONE;
    txn->request_node = SIM_NODE_NONE;
    txn->added = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    txn->adding = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    txn->fresh = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    txn->offsets = g_array_new(FALSE, FALSE, sizeof(KOffsetPartition));
    return txn;
}

/* Memory only: a crash (the engine drops the node's timers). */
void
producer_txn_free(ProducerTxn *txn)
{
    if (txn == NULL)
        return;
    g_array_free(txn->added, TRUE);
    g_array_free(txn->adding, TRUE);
    g_array_free(txn->fresh, TRUE);
    g_array_free(txn->offsets, TRUE);
    g_free(txn);
}

/* ---- partitions ---- */

static gboolean
tp_in(const GArray *tps, const KTopicPartition *tp)
{
    for (guint i = 0; i < tps->len; i++) {
        if (ktp_equal(&g_array_index(tps, KTopicPartition, i), tp))
            return TRUE;
    }
    return FALSE;
}

/* Transaction version 2 in use (TransactionManager.isTransactionV2Enabled). */
static gboolean
version2(const ProducerState *state)
{
    return config_of(state)->transaction_version >= 2;
}

void
producer_txn_partition_used(ProducerState *state, const ProducerPartition *partition)
{
    ProducerTxn *txn = state->txn;
    if (txn == NULL || tp_in(txn->added, &partition->tp) || tp_in(txn->adding, &partition->tp) ||
        tp_in(txn->fresh, &partition->tp))
        return;
    /* Version 2: the produce request adds it (Kafka 4.0's maybeAddPartition
     * puts it in partitionsInTransaction at once). */
    g_array_append_val(version2(state) ? txn->added : txn->fresh, partition->tp);
    producer_sender_wakeup(state);
}

gboolean
producer_txn_may_drain(const ProducerState *state, const ProducerPartition *partition)
{
    const ProducerTxn *txn = state->txn;
    if (txn == NULL)
        return TRUE;
    return (txn->state == TXN_IN_TRANSACTION || txn->state == TXN_COMMITTING) &&
           tp_in(txn->added, &partition->tp);
}

KafkaError
producer_txn_check_send(const ProducerState *state)
{
    const ProducerTxn *txn = state->txn;
    if (txn == NULL || txn->state == TXN_IN_TRANSACTION)
        return KAFKA_ERROR_NONE;
    if (txn->state == TXN_FATAL_ERROR || txn->state == TXN_ABORTABLE_ERROR)
        return txn->error;
    return KAFKA_ERROR_INVALID_TXN_STATE;
}

/* ---- operations ---- */

static gboolean
is_fencing(KafkaError error)
{
    return error == KAFKA_ERROR_PRODUCER_FENCED || error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH ||
           error == KAFKA_ERROR_INVALID_PRODUCER_ID_MAPPING ||
           error == KAFKA_ERROR_INVALID_TXN_STATE ||
           error == KAFKA_ERROR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED ||
           error == KAFKA_ERROR_INVALID_TRANSACTION_TIMEOUT;
}

static void
op_finish(ProducerState *state, KafkaError error)
{
    ProducerTxn *txn = state->txn;
    if (txn->op == OP_NONE)
        return;
    ProducerTxnCb done_cb = txn->op_cb;
    void *user_data = txn->op_user_data;
    if (txn->history_op != 0)
        history_txn_complete(state->producer, txn->history_op, error);
    txn->history_op = 0;
    txn->op = OP_NONE;
    txn->op_cb = NULL;
    txn->op_user_data = NULL;
    g_array_set_size(txn->offsets, 0);
    txn->offsets_step_commit = FALSE;
    if (done_cb != NULL)
        done_cb(state->producer, error, user_data);
}

static void
fatal(ProducerState *state, KafkaError error)
{
    ProducerTxn *txn = state->txn;
    if (txn->state == TXN_FATAL_ERROR)
        return;
    txn->state = TXN_FATAL_ERROR;
    txn->error = error;
    log_end(state, PRODUCER_TXN_FENCED, error);
    op_finish(state, error);
    producer_sender_wakeup(state);
}

void
producer_txn_batch_failed(ProducerState *state, KafkaError error, gboolean sequenced)
{
    ProducerTxn *txn = state->txn;
    KSIM_ASSERT(txn != NULL);
    txn->bump_needed = txn->bump_needed || sequenced;
    if (error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH || error == KAFKA_ERROR_PRODUCER_FENCED) {
        fatal(state, KAFKA_ERROR_PRODUCER_FENCED);
        return;
    }
    if (txn->state != TXN_IN_TRANSACTION && txn->state != TXN_COMMITTING)
        return;
    txn->state = TXN_ABORTABLE_ERROR;
    txn->error = error;
    /* A commit waiting for its sends fails (Kafka's KafkaException from
     * commitTransaction); the application must abort. */
    if (txn->op == OP_COMMIT || txn->op == OP_SEND_OFFSETS)
        op_finish(state, error);
    producer_sender_wakeup(state);
}

/* Starts `op` unless another one is running; FALSE when refused (the
 * callback ran with the error). */
static gboolean
op_start(Producer *producer, TxnOp op, ProducerTxnCb done_cb, void *user_data)
{
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(state->txn != NULL); /* transactional.id is set */
    ProducerTxn *txn = state->txn;
    gboolean recorded = FALSE;
    HistoryFn fn = history_fn_of(op, &recorded);
    const ProducerTxnInfo *info = open_info(state);
    guint64 history_op =
        recorded ? history_txn_invoke(producer, fn, info != NULL ? info->number : 0) : 0;
    KafkaError error = KAFKA_ERROR_NONE;
    if (txn->state == TXN_FATAL_ERROR)
        error = txn->error;
    else if (txn->op != OP_NONE)
        error = KAFKA_ERROR_INVALID_TXN_STATE;
    if (error != KAFKA_ERROR_NONE) {
        if (history_op != 0)
            history_txn_complete(producer, history_op, error);
        if (done_cb != NULL)
            done_cb(producer, error, user_data);
        return FALSE;
    }
    txn->history_op = history_op;
    txn->op = op;
    txn->op_cb = done_cb;
    txn->op_user_data = user_data;
    producer_sender_wakeup(state);
    return TRUE;
}

static void
refuse(Producer *producer, KafkaError error)
{
    ProducerTxn *txn = producer->state->txn;
    ProducerTxnCb done_cb = txn->op_cb;
    void *user_data = txn->op_user_data;
    if (txn->history_op != 0)
        history_txn_complete(producer, txn->history_op, error);
    txn->history_op = 0;
    txn->op = OP_NONE;
    txn->op_cb = NULL;
    txn->op_user_data = NULL;
    if (done_cb != NULL)
        done_cb(producer, error, user_data);
}

gboolean
producer_transactional(const Producer *producer)
{
    return producer->config.transactional_id[0] != '\0';
}

void
producer_init_transactions(Producer *producer, ProducerTxnCb done_cb, void *user_data)
{
    if (!op_start(producer, OP_INIT, done_cb, user_data))
        return;
    ProducerTxn *txn = producer->state->txn;
    if (txn->state != TXN_UNINITIALIZED) {
        refuse(producer, KAFKA_ERROR_INVALID_TXN_STATE);
        return;
    }
    txn->state = TXN_INITIALIZING;
}

KafkaError
producer_begin_transaction(Producer *producer)
{
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL && state->txn != NULL);
    ProducerTxn *txn = state->txn;
    KafkaError error = txn->state == TXN_FATAL_ERROR ? txn->error
                       : txn->state != TXN_READY     ? KAFKA_ERROR_INVALID_TXN_STATE
                                                     : KAFKA_ERROR_NONE;
    if (error != KAFKA_ERROR_NONE) {
        history_txn_complete(producer, history_txn_invoke(producer, HISTORY_FN_TXN_BEGIN, 0),
                             error);
        return error;
    }
    txn->state = TXN_IN_TRANSACTION;
    txn->offsets_added = FALSE;
    txn->bump_needed = FALSE;
    txn->error = KAFKA_ERROR_NONE;
    g_array_set_size(txn->added, 0);
    g_array_set_size(txn->fresh, 0);
    log_begin(state);
    history_record(producer->history, now_of(state), HISTORY_FN_TXN_BEGIN, producer->process, 0, -1,
                   -1, 0, open_info(state)->number);
    return KAFKA_ERROR_NONE;
}

void
producer_send_offsets_to_transaction(Producer *producer, const char *group_id,
                                     const GArray *offsets, ProducerTxnCb done_cb,
                                     void *user_data)
{
    producer_send_offsets_to_transaction_member(producer, group_id, NULL, KAFKA_GENERATION_NONE,
                                                offsets, done_cb, user_data);
}

void
producer_send_offsets_to_transaction_member(Producer *producer, const char *group_id,
                                            const char *member_id, gint32 generation_id,
                                            const GArray *offsets, ProducerTxnCb done_cb,
                                            void *user_data)
{
    if (!op_start(producer, OP_SEND_OFFSETS, done_cb, user_data))
        return;
    ProducerState *state = producer->state;
    ProducerTxn *txn = state->txn;
    if (txn->state != TXN_IN_TRANSACTION) {
        refuse(producer, txn->state == TXN_ABORTABLE_ERROR ? txn->error
                                                           : KAFKA_ERROR_INVALID_TXN_STATE);
        return;
    }
    KPROTO_SET_ID(txn->group_id, group_id);
    KPROTO_SET_ID(txn->member_id, member_id != NULL ? member_id : "");
    txn->generation_id = generation_id;
    g_array_set_size(txn->offsets, 0);
    g_array_append_vals(txn->offsets, offsets->data, offsets->len);
    txn->offsets_step_commit = FALSE;
    ProducerTxnInfo *info = open_info(state);
    g_strlcpy(info->group_id, group_id, sizeof info->group_id);
    g_array_append_vals(info->offsets, offsets->data, offsets->len);
    for (guint i = 0; i < offsets->len; i++) {
        const KOffsetPartition *entry = &g_array_index(offsets, KOffsetPartition, i);
        history_record(producer->history, now_of(state), HISTORY_FN_TXN_OFFSETS, producer->process,
                       history_topic(producer->history, entry->tp.topic), entry->tp.partition,
                       entry->offset, 0, info->number);
    }
}

void
producer_commit_transaction(Producer *producer, ProducerTxnCb done_cb, void *user_data)
{
    if (!op_start(producer, OP_COMMIT, done_cb, user_data))
        return;
    ProducerTxn *txn = producer->state->txn;
    if (txn->state == TXN_ABORTABLE_ERROR) {
        refuse(producer, txn->error);
        return;
    }
    if (txn->state != TXN_IN_TRANSACTION) {
        refuse(producer, KAFKA_ERROR_INVALID_TXN_STATE);
        return;
    }
    txn->state = TXN_COMMITTING;
}

void
producer_abort_transaction(Producer *producer, ProducerTxnCb done_cb, void *user_data)
{
    if (!op_start(producer, OP_ABORT, done_cb, user_data))
        return;
    ProducerTxn *txn = producer->state->txn;
    if (txn->state != TXN_IN_TRANSACTION && txn->state != TXN_ABORTABLE_ERROR) {
        refuse(producer, KAFKA_ERROR_INVALID_TXN_STATE);
        return;
    }
    txn->state = TXN_ABORTING;
}

guint
producer_txn_count(const Producer *producer)
{
    return producer->txn_log->len;
}

const ProducerTxnInfo *
producer_txn_info(const Producer *producer, guint i)
{
    KSIM_ASSERT(i < producer->txn_log->len);
    return g_ptr_array_index(producer->txn_log, i);
}

/* ---- requests ---- */

static void request_timed_out(SimWorld *world, void *ctx, void *arg);

static void
request_send(ProducerState *state, SimNodeId node, SimMsg *msg, gint32 correlation_id,
             KafkaMsgType response_type)
{
    ProducerTxn *txn = state->txn;
    Producer *producer = state->producer;
    txn->correlation_id = correlation_id;
    txn->request_node = node;
    txn->response_type = response_type;
    txn->request_timer =
        sim_timer_set(producer->world, producer->node,
                      config_of(state)->request_timeout_ms * SIM_NS_PER_MS, request_timed_out, NULL);
    producer_sender_send_message(state, node, msg);
}

static void
request_done(ProducerState *state)
{
    ProducerTxn *txn = state->txn;
    sim_timer_cancel(state->producer->world, txn->request_timer);
    txn->correlation_id = 0;
    txn->request_node = SIM_NODE_NONE;
}

static void
retry_later(ProducerState *state)
{
    state->txn->retry_ns = now_of(state) + config_of(state)->retry_backoff_ms * SIM_NS_PER_MS;
}

/* The request failed without an answer, or the coordinator moved. */
static void
coordinator_lost(ProducerState *state, gboolean group)
{
    ProducerTxn *txn = state->txn;
    if (group)
        txn->group_coordinator = SIM_NODE_NONE;
    else
        txn->coordinator = SIM_NODE_NONE;
    retry_later(state);
}

static void
request_failed(ProducerState *state)
{
    ProducerTxn *txn = state->txn;
    gboolean group = txn->response_type == KMSG_TXN_OFFSET_COMMIT_RESPONSE;
    gboolean adding = txn->response_type == KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE;
    request_done(state);
    if (adding) {
        g_array_append_vals(txn->fresh, txn->adding->data, txn->adding->len);
        g_array_set_size(txn->adding, 0);
    }
    coordinator_lost(state, group);
}

static void
request_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)arg;
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL && state->txn != NULL);
    state->txn->request_timer = SIM_EVENT_ID_NONE;
    sim_net_close(sim_world_net(world), producer->node, state->txn->request_node);
    request_failed(state);
    producer_sender_run(state);
}

void
producer_txn_handle_disconnect(ProducerState *state, SimNodeId peer)
{
    ProducerTxn *txn = state->txn;
    if (txn == NULL || txn->correlation_id == 0 || txn->request_node != peer)
        return;
    request_failed(state);
}

static void
send_find_coordinator(ProducerState *state, KCoordinatorType type, const char *key, gint64 now)
{
    SimNodeId node = producer_sender_least_loaded_node(state, now);
    if (node == SIM_NODE_NONE)
        return;
    KFindCoordinatorRequest *request = kproto_new(KMSG_FIND_COORDINATOR_REQUEST);
    request->correlation_id = state->correlation_next++;
    request->key_type = (gint8)type;
    KPROTO_SET_ID(request->group_id, key);
    state->txn->find_type = type;
    request_send(state, node, &request->base, request->correlation_id,
                 KMSG_FIND_COORDINATOR_RESPONSE);
}

static void
send_init(ProducerState *state)
{
    KInitProducerIdMessage *request = kproto_new(KMSG_INIT_PRODUCER_ID_REQUEST);
    request->correlation_id = state->correlation_next++;
    KPROTO_SET_ID(request->transactional_id, config_of(state)->transactional_id);
    request->transaction_timeout_ms = (gint32)MIN(config_of(state)->transaction_timeout_ms,
                                                  (gint64)G_MAXINT32);
    /* Not the application's initTransactions: this instance bumps its own
     * epoch (KIP-360), and must still own it. */
    if (state->txn->op != OP_INIT && state->pid_state == PRODUCER_ID_READY) {
        request->bump = TRUE;
        request->producer_id = state->producer_id;
        request->producer_epoch = state->producer_epoch;
    }
    state->producer->stats.producer_id_requests++;
    request_send(state, state->txn->coordinator, &request->base, request->correlation_id,
                 KMSG_INIT_PRODUCER_ID_RESPONSE);
}

static KTxnMessage *
txn_request_new(ProducerState *state, KafkaMsgType type)
{
    KTxnMessage *request = kproto_new(type);
    request->correlation_id = state->correlation_next++;
    KPROTO_SET_ID(request->transactional_id, config_of(state)->transactional_id);
    request->producer_id = state->producer_id;
    request->producer_epoch = state->producer_epoch;
    return request;
}

static void
send_add_partitions(ProducerState *state)
{
    ProducerTxn *txn = state->txn;
    KTxnMessage *request = txn_request_new(state, KMSG_ADD_PARTITIONS_TO_TXN_REQUEST);
    g_array_append_vals(txn->adding, txn->fresh->data, txn->fresh->len);
    g_array_set_size(txn->fresh, 0);
    g_array_append_vals(request->partitions, txn->adding->data, txn->adding->len);
    kproto_update_size(&request->base);
    request_send(state, txn->coordinator, &request->base, request->correlation_id,
                 KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE);
}

static void
send_add_offsets(ProducerState *state)
{
    KTxnMessage *request = txn_request_new(state, KMSG_ADD_OFFSETS_TO_TXN_REQUEST);
    KPROTO_SET_ID(request->group_id, state->txn->group_id);
    request_send(state, state->txn->coordinator, &request->base, request->correlation_id,
                 KMSG_ADD_OFFSETS_TO_TXN_RESPONSE);
}

static void
send_txn_offset_commit(ProducerState *state)
{
    ProducerTxn *txn = state->txn;
    KOffsetMessage *request = kproto_new(KMSG_TXN_OFFSET_COMMIT_REQUEST);
    request->correlation_id = state->correlation_next++;
    KPROTO_SET_ID(request->group_id, txn->group_id);
    KPROTO_SET_ID(request->member_id, txn->member_id);
    request->generation_id = txn->generation_id;
    KPROTO_SET_ID(request->transactional_id, config_of(state)->transactional_id);
    request->producer_id = state->producer_id;
    request->producer_epoch = state->producer_epoch;
    g_array_append_vals(request->partitions, txn->offsets->data, txn->offsets->len);
    kproto_update_size(&request->base);
    request_send(state, txn->group_coordinator, &request->base, request->correlation_id,
                 KMSG_TXN_OFFSET_COMMIT_RESPONSE);
}

static void
send_end_txn(ProducerState *state, gboolean commit)
{
    KTxnMessage *request = txn_request_new(state, KMSG_END_TXN_REQUEST);
    request->committed = commit;
    request->transaction_version = version2(state) ? 2 : 0;
    request_send(state, state->txn->coordinator, &request->base, request->correlation_id,
                 KMSG_END_TXN_RESPONSE);
}

/* ---- the pass ---- */

/* Fails every batch not yet sent (Kafka's abortUndrainedBatches) with the
 * transaction's error; completions wait until the walk is over. */
static void
abort_undrained(ProducerState *state, KafkaError error)
{
    g_autoptr(GPtrArray) failed = g_ptr_array_new();
    const GPtrArray *partitions = producer_accum_partitions(state->accum);
    for (guint i = 0; i < partitions->len; i++) {
        ProducerPartition *partition = g_ptr_array_index(partitions, i);
        ProducerBatch *batch;
        while ((batch = g_queue_pop_head(&partition->batches)) != NULL)
            g_ptr_array_add(failed, batch);
        producer_accum_head_changed(state->accum, partition);
    }
    for (guint i = 0; i < failed->len; i++) {
        ProducerBatch *batch = g_ptr_array_index(failed, i);
        producer_complete_batch(state, batch, batch->maybe_written ? HISTORY_INFO : HISTORY_FAIL,
                                -1, error);
    }
}

/* What the transaction needs from its coordinator next, if anything. */
static void
next_request(ProducerState *state, gint64 now)
{
    ProducerTxn *txn = state->txn;
    const char *id = config_of(state)->transactional_id;
    gboolean ending = txn->state == TXN_COMMITTING || txn->state == TXN_ABORTING;
    gboolean quiet = state->records_pending == 0;
    gboolean want_init = txn->state == TXN_INITIALIZING;
    gboolean want_add = txn->fresh->len > 0 &&
                        (txn->state == TXN_IN_TRANSACTION || txn->state == TXN_COMMITTING);
    gboolean want_offsets = txn->op == OP_SEND_OFFSETS && txn->state == TXN_IN_TRANSACTION;
    gboolean begun = txn->added->len > 0 || txn->offsets_added;
    gboolean want_end = ending && quiet && !want_add && begun;
    if (!want_init && !want_add && !want_offsets && !want_end)
        return;
    if (txn->coordinator == SIM_NODE_NONE) {
        send_find_coordinator(state, KAFKA_COORDINATOR_TRANSACTION, id, now);
        return;
    }
    if (want_init)
        send_init(state);
    else if (want_add)
        send_add_partitions(state);
    else if (want_offsets && !txn->offsets_step_commit)
        send_add_offsets(state);
    else if (want_offsets && txn->group_coordinator == SIM_NODE_NONE)
        send_find_coordinator(state, KAFKA_COORDINATOR_GROUP, txn->group_id, now);
    else if (want_offsets)
        send_txn_offset_commit(state);
    else
        send_end_txn(state, txn->state == TXN_COMMITTING);
}

/* A transaction that needs nothing from its coordinator to end. */
static void
maybe_end_locally(ProducerState *state)
{
    ProducerTxn *txn = state->txn;
    gboolean begun = txn->added->len > 0 || txn->offsets_added;
    if (begun || state->records_pending > 0 || txn->correlation_id != 0)
        return;
    if (txn->state == TXN_COMMITTING && txn->fresh->len == 0) {
        txn->state = TXN_READY;
        log_end(state, PRODUCER_TXN_COMMITTED, KAFKA_ERROR_NONE);
        op_finish(state, KAFKA_ERROR_NONE);
    } else if (txn->state == TXN_ABORTING) {
        g_array_set_size(txn->fresh, 0);
        txn->state = TXN_READY;
        log_end(state, PRODUCER_TXN_ABORTED, txn->error);
        op_finish(state, KAFKA_ERROR_NONE);
    }
}

void
producer_txn_run(ProducerState *state, gint64 now)
{
    ProducerTxn *txn = state->txn;
    if (txn == NULL)
        return;
    if (txn->state == TXN_ABORTING || txn->state == TXN_ABORTABLE_ERROR ||
        txn->state == TXN_FATAL_ERROR)
        abort_undrained(state, txn->state == TXN_ABORTING && txn->error == KAFKA_ERROR_NONE
                                   ? KAFKA_ERROR_CLIENT_TRANSACTION_ABORTED
                                   : txn->error);
    if (txn->state == TXN_ABORTING)
        g_array_set_size(txn->fresh, 0); /* never added: nothing to abort there */
    maybe_end_locally(state);
    if (txn->correlation_id != 0 || txn->state == TXN_FATAL_ERROR)
        return;
    if (now < txn->retry_ns) {
        producer_sender_wake_at(state, txn->retry_ns);
        return;
    }
    next_request(state, now);
}

/* ---- responses ---- */

static void
handle_find_coordinator(ProducerState *state, const KFindCoordinatorResponse *response)
{
    ProducerTxn *txn = state->txn;
    request_done(state);
    if (response->error != KAFKA_ERROR_NONE || response->node == SIM_NODE_NONE) {
        retry_later(state);
        return;
    }
    if (txn->find_type == KAFKA_COORDINATOR_GROUP)
        txn->group_coordinator = response->node;
    else
        txn->coordinator = response->node;
}

/* The common handling of a coordinator's error; TRUE when handled. */
static gboolean
handle_error(ProducerState *state, KafkaError error, gboolean group)
{
    switch (error) {
    case KAFKA_ERROR_NONE:
        return FALSE;
    case KAFKA_ERROR_NOT_COORDINATOR:
    case KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE:
        coordinator_lost(state, group);
        return TRUE;
    case KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS:
    case KAFKA_ERROR_CONCURRENT_TRANSACTIONS:
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
    case KAFKA_ERROR_NETWORK_EXCEPTION:
        retry_later(state);
        return TRUE;
    default:
        if (is_fencing(error)) {
            fatal(state, error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH ? KAFKA_ERROR_PRODUCER_FENCED
                                                                     : error);
            return TRUE;
        }
        if (kafka_error_is_retriable(error)) {
            retry_later(state);
            return TRUE;
        }
        return FALSE;
    }
}

/* Ends the request an answer closes; TRUE when it succeeded. A retriable
 * error is retried, any other is fatal. */
static gboolean
answer_ok(ProducerState *state, KafkaError error)
{
    request_done(state);
    if (handle_error(state, error, FALSE))
        return FALSE;
    if (error != KAFKA_ERROR_NONE) {
        fatal(state, error);
        return FALSE;
    }
    return TRUE;
}

static void
handle_init(ProducerState *state, const KInitProducerIdMessage *response)
{
    ProducerTxn *txn = state->txn;
    if (!answer_ok(state, response->error))
        return;
    state->pid_state = PRODUCER_ID_READY;
    state->producer_id = response->producer_id;
    state->producer_epoch = response->producer_epoch;
    txn->state = TXN_READY;
    txn->bump_needed = FALSE;
    if (txn->op == OP_ABORT)
        log_end(state, PRODUCER_TXN_ABORTED, txn->error);
    op_finish(state, KAFKA_ERROR_NONE);
}

static void
handle_add_partitions(ProducerState *state, const KTxnMessage *response)
{
    ProducerTxn *txn = state->txn;
    request_done(state);
    if (response->error == KAFKA_ERROR_NONE) {
        g_array_append_vals(txn->added, txn->adding->data, txn->adding->len);
        g_array_set_size(txn->adding, 0);
        return;
    }
    g_array_append_vals(txn->fresh, txn->adding->data, txn->adding->len);
    g_array_set_size(txn->adding, 0);
    if (handle_error(state, response->error, FALSE))
        return;
    producer_txn_batch_failed(state, response->error, FALSE);
}

static void
handle_add_offsets(ProducerState *state, const KTxnMessage *response)
{
    ProducerTxn *txn = state->txn;
    request_done(state);
    if (response->error == KAFKA_ERROR_NONE) {
        txn->offsets_added = TRUE;
        txn->offsets_step_commit = TRUE;
        return;
    }
    if (handle_error(state, response->error, FALSE))
        return;
    txn->state = TXN_ABORTABLE_ERROR;
    txn->error = response->error;
    op_finish(state, response->error);
}

static void
handle_txn_offset_commit(ProducerState *state, const KOffsetMessage *response)
{
    ProducerTxn *txn = state->txn;
    request_done(state);
    KafkaError error = response->error;
    for (guint i = 0; error == KAFKA_ERROR_NONE && i < response->partitions->len; i++)
        error = g_array_index(response->partitions, KOffsetPartition, i).error;
    if (error == KAFKA_ERROR_NONE) {
        op_finish(state, KAFKA_ERROR_NONE);
        return;
    }
    if (handle_error(state, error, TRUE))
        return;
    txn->state = TXN_ABORTABLE_ERROR;
    txn->error = error;
    op_finish(state, error);
}

static void
handle_end_txn(ProducerState *state, const KTxnMessage *response)
{
    ProducerTxn *txn = state->txn;
    if (!answer_ok(state, response->error))
        return;
    gboolean committed = txn->state == TXN_COMMITTING;
    g_array_set_size(txn->added, 0);
    txn->offsets_added = FALSE;
    if (version2(state) && response->producer_epoch >= 0) {
        /* The epoch the coordinator bumped to ends this transaction's
         * sequences; a gap of an aborted batch is closed with them. */
        state->producer_id = response->producer_id;
        state->producer_epoch = response->producer_epoch;
        txn->bump_needed = FALSE;
    }
    if (!committed && txn->bump_needed) {
        /* KIP-360: a sequence gap is closed by a bumped epoch. */
        txn->state = TXN_INITIALIZING;
        return;
    }
    txn->state = TXN_READY;
    log_end(state, committed ? PRODUCER_TXN_COMMITTED : PRODUCER_TXN_ABORTED,
            committed ? KAFKA_ERROR_NONE : txn->error);
    op_finish(state, KAFKA_ERROR_NONE);
}

gboolean
producer_txn_handle_message(ProducerState *state, SimNodeId from, const SimMsg *msg)
{
    ProducerTxn *txn = state->txn;
    if (txn == NULL || txn->correlation_id == 0 || from != txn->request_node ||
        (KafkaMsgType)msg->type != txn->response_type)
        return FALSE;
    switch ((KafkaMsgType)msg->type) {
    case KMSG_FIND_COORDINATOR_RESPONSE:
        if (((const KFindCoordinatorResponse *)msg)->correlation_id != txn->correlation_id)
            return FALSE;
        handle_find_coordinator(state, (const KFindCoordinatorResponse *)msg);
        return TRUE;
    case KMSG_INIT_PRODUCER_ID_RESPONSE:
        if (((const KInitProducerIdMessage *)msg)->correlation_id != txn->correlation_id)
            return FALSE;
        handle_init(state, (const KInitProducerIdMessage *)msg);
        return TRUE;
    case KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE:
    case KMSG_ADD_OFFSETS_TO_TXN_RESPONSE:
    case KMSG_END_TXN_RESPONSE: {
        const KTxnMessage *response = (const KTxnMessage *)msg;
        if (response->correlation_id != txn->correlation_id)
            return FALSE;
        if (msg->type == KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE)
            handle_add_partitions(state, response);
        else if (msg->type == KMSG_ADD_OFFSETS_TO_TXN_RESPONSE)
            handle_add_offsets(state, response);
        else
            handle_end_txn(state, response);
        return TRUE;
    }
    case KMSG_TXN_OFFSET_COMMIT_RESPONSE:
        if (((const KOffsetMessage *)msg)->correlation_id != txn->correlation_id)
            return FALSE;
        handle_txn_offset_commit(state, (const KOffsetMessage *)msg);
        return TRUE;
    default:
        return FALSE;
    }
}

/* ---- invariants ---- */

/* Invariant 3, its second half as state: a partition with a batch in flight
 * was added to the open transaction. A fatal error ends the transaction
 * without waiting for its flights, which may then still be out. */
static void
check_flights_added(const ProducerState *state, gboolean open)
{
    const ProducerTxn *txn = state->txn;
    if (txn->state == TXN_FATAL_ERROR)
        return;
    const GPtrArray *partitions = producer_accum_partitions(state->accum);
    for (guint i = 0; i < partitions->len; i++) {
        const ProducerPartition *partition = g_ptr_array_index(partitions, i);
        if (partition == NULL || partition->in_flight == 0)
            continue;
        KSIM_ASSERT(open);
        KSIM_ASSERT(tp_in(txn->added, &partition->tp));
    }
}

void
producer_txn_check_invariants(const ProducerState *state)
{
    const ProducerTxn *txn = state->txn;
    if (txn == NULL)
        return;
    for (guint i = 0; i < txn->fresh->len; i++) {
        const KTopicPartition *tp = &g_array_index(txn->fresh, KTopicPartition, i);
        KSIM_ASSERT(!tp_in(txn->added, tp));
        KSIM_ASSERT(!tp_in(txn->adding, tp));
    }
    for (guint i = 0; i < txn->adding->len; i++)
        KSIM_ASSERT(!tp_in(txn->added, &g_array_index(txn->adding, KTopicPartition, i)));
    if (txn->adding->len > 0)
        KSIM_ASSERT(txn->correlation_id != 0 &&
                    txn->response_type == KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE);
    gboolean open = txn->state == TXN_IN_TRANSACTION || txn->state == TXN_COMMITTING ||
                    txn->state == TXN_ABORTING || txn->state == TXN_ABORTABLE_ERROR;
    if (open)
        KSIM_ASSERT(txn->log_index >= 0);
    if (txn->state == TXN_READY || txn->state == TXN_UNINITIALIZED)
        KSIM_ASSERT(txn->log_index < 0);
    if (txn->op == OP_INIT)
        KSIM_ASSERT(txn->state == TXN_INITIALIZING);
    if (txn->op == OP_COMMIT)
        KSIM_ASSERT(txn->state == TXN_COMMITTING);
    if (txn->op == OP_SEND_OFFSETS)
        KSIM_ASSERT(txn->state == TXN_IN_TRANSACTION);
    if (txn->op == OP_ABORT)
        KSIM_ASSERT(txn->state == TXN_ABORTING || txn->state == TXN_INITIALIZING);
    check_flights_added(state, open);
}
