/*
 * replica_markers: WriteTxnMarkers on a partition leader (Kafka's
 * KafkaApis.handleWriteTxnMarkersRequest): each partition of the request
 * gets a control batch (COMMIT or ABORT) of the producer's id and epoch,
 * appended with acks=-1 (replica_produce.c); the answer goes back to the
 * transaction coordinator once every marker is replicated or failed. A
 * marker written tells the marker listeners (the group coordinator's
 * transactional offsets become visible or are dropped).
 *
 * Invariants (replica_markers_check_invariants):
 *  1. Every pending request has an id this process handed out, and between
 *     one and its partition count markers unanswered (one that reaches zero
 *     is answered and leaves at once).
 *
 * Transitions of a pending request:
 *   (new) --WriteTxnMarkers--> PENDING (replica_handle_write_txn_markers)
 *   PENDING --last marker replicated or failed--> answered (markers_respond)
 */
#include "replica.h"

#include "replica_internal.h"
#include "sim_assert.h"

/* Kafka appends markers with the broker's request.timeout.ms. */
#define MARKER_APPEND_TIMEOUT_MS 30000
/* A marker's control record: Kafka's ControlRecord key and value. */
#define MARKER_RECORD_BYTES 10

/* One WriteTxnMarkers request waiting for its markers to be replicated. */
typedef struct {
    guint64 id;
    SimNodeId coordinator;
    gint32 correlation_id;
    gint64 producer_id;
    gint16 producer_epoch;
    gboolean committed;
    GArray *partitions; /* KTxnMarkerPartition */
    guint remaining;    /* markers not yet answered */
} PendingMarkers;

static void
pending_markers_free(gpointer data)
{
    PendingMarkers *pending = data;
    g_array_free(pending->partitions, TRUE);
    g_free(pending);
}

void
replica_markers_state_init(BrokerState *state)
{
    state->pending_markers = g_ptr_array_new_with_free_func(pending_markers_free);
}

void
replica_markers_state_free(BrokerState *state)
{
    g_ptr_array_free(state->pending_markers, TRUE);
}

static PendingMarkers *
pending_markers_find(BrokerState *state, guint64 id)
{
    for (guint i = 0; i < state->pending_markers->len; i++) {
        PendingMarkers *pending = g_ptr_array_index(state->pending_markers, i);
        if (pending->id == id)
            return pending;
    }
    return NULL;
}

static void
markers_respond(BrokerState *state, PendingMarkers *pending)
{
    KTxnMarkersMessage *response = kproto_new(KMSG_WRITE_TXN_MARKERS_RESPONSE);
    response->correlation_id = pending->correlation_id;
    response->producer_id = pending->producer_id;
    response->producer_epoch = pending->producer_epoch;
    response->committed = pending->committed;
    g_array_append_vals(response->partitions, pending->partitions->data, pending->partitions->len);
    kproto_update_size(&response->base);
    broker_send(state, pending->coordinator, &response->base);
    g_ptr_array_remove(state->pending_markers, pending);
}

/* The marker of partition index `done_id & 0xffff` of request
 * `done_id >> 16` was replicated (or failed). */
static void
marker_appended(BrokerState *state, KafkaError error, gint64 base_offset, guint64 done_id)
{
    (void)base_offset;
    PendingMarkers *pending = pending_markers_find(state, done_id >> 16);
    guint index = (guint)(done_id & 0xffff);
    if (pending == NULL)
        return;
    KTxnMarkerPartition *entry = &g_array_index(pending->partitions, KTxnMarkerPartition, index);
    entry->error = error;
    if (error == KAFKA_ERROR_NONE) {
        /* Kafka's GroupCoordinator.onTransactionCompleted: the group
         * coordinator makes the transaction's offsets visible, or drops them. */
        for (guint i = 0; i < state->n_marker_listeners; i++) {
            const ReplicaMarkerListener *listener = &state->marker_listeners[i];
            listener->marker_written(listener->user_data, &entry->tp, pending->producer_id,
                                     pending->committed);
        }
    }
    KSIM_ASSERT(pending->remaining > 0);
    if (--pending->remaining == 0)
        markers_respond(state, pending);
}

/* Kafka's ReplicaManager.appendRecords of the markers with acks=-1: each
 * partition this broker leads gets a control batch of the producer's id and
 * epoch; the answer goes back once all are replicated or failed. */
void
replica_handle_write_txn_markers(BrokerState *state, SimNodeId from,
                                 const KTxnMarkersMessage *request)
{
    KSIM_ASSERT(request->partitions->len > 0 && request->partitions->len <= 0xffff);
    PendingMarkers *pending = g_new0(PendingMarkers, 1);
    pending->id = ++state->marker_next;
    pending->coordinator = from;
    pending->correlation_id = request->correlation_id;
    pending->producer_id = request->producer_id;
    pending->producer_epoch = request->producer_epoch;
    pending->committed = request->committed;
    pending->partitions = g_array_copy(request->partitions);
    pending->remaining = pending->partitions->len + 1; /* + this call's hold */
    g_ptr_array_add(state->pending_markers, pending);
    guint64 id = pending->id;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KTxnMarkerPartition *entry =
            &g_array_index(request->partitions, KTxnMarkerPartition, i);
        g_autoptr(PlogBatch) batch = plog_batch_new();
        batch->producer_id = request->producer_id;
        batch->producer_epoch = request->producer_epoch;
        batch->attributes = PLOG_BATCH_TRANSACTIONAL | PLOG_BATCH_CONTROL |
                            (request->committed ? PLOG_BATCH_CONTROL_COMMIT : 0);
        plog_batch_add_record(batch, request->committed ? PLOG_CONTROL_COMMIT_KEY
                                                        : PLOG_CONTROL_ABORT_KEY,
                              0, MARKER_RECORD_BYTES);
        batch->first_timestamp_ms = broker_now_ms(state->broker);
        batch->max_timestamp_ms = batch->first_timestamp_ms;
        replica_append_internal(state, &entry->tp, batch, MARKER_APPEND_TIMEOUT_MS,
                                marker_appended, id << 16 | i);
    }
    /* Release the hold: answers now if every append completed at once. */
    pending = pending_markers_find(state, id);
    KSIM_ASSERT(pending != NULL && pending->remaining > 0);
    if (--pending->remaining == 0)
        markers_respond(state, pending);
}

void
replica_markers_check_invariants(const BrokerState *state)
{
    for (guint i = 0; i < state->pending_markers->len; i++) {
        const PendingMarkers *pending = g_ptr_array_index(state->pending_markers, i);
        KSIM_ASSERT(pending->id >= 1 && pending->id <= state->marker_next);
        KSIM_ASSERT(pending->remaining >= 1);
        KSIM_ASSERT(pending->remaining <= pending->partitions->len);
    }
}
