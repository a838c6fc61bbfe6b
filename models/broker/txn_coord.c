/*
 * txn_coord: the transaction coordinator of one broker process (see
 * txn_coord.h for the protocol, the state machine and the record encoding).
 *
 * Transitions, and the function that performs each:
 *   a request or the timeout check ──transition_begin──▶ `pending` set, record
 *     appended ──transition_appended──▶ `current` = `pending` (or dropped on
 *     error); the waiting client is answered there
 *   Prepare* written ──markers_start──▶ one TxnMarker per partition
 *     ──marker_done (all written)──▶ transition_begin(Complete*)
 *   partition loaded ──load_partition──▶ metas rebuilt; Prepare* resume markers
 *   partition resigned ──unload_partition──▶ its metas, markers and waiters freed
 *
 * Invariants (txn_coord_check_invariants):
 *  1. `partitions` is sorted by partition without duplicates and holds
 *     exactly the __transaction_state partitions this broker leads; a
 *     partition is loaded exactly when its load timer is not pending.
 *  2. `metas` is sorted by id without duplicates; each meta's partition is in
 *     `partitions` and loaded.
 *  3. A meta has a reply waiting only while a transition is pending, and
 *     markers (to do or in flight) only in Prepare* without a pending
 *     transition.
 *  4. Every TxnMarker in `markers` belongs to a meta in Prepare*, and names a
 *     partition of its transaction.
 *
 * Ownership: the TxnCoord owns its partitions, metas, markers and pid
 * requests; timers point at them and are cancelled before they are freed
 * (a crash drops them with the node). A timer finds the coordinator through
 * its argument (the TxnCoord, or the TxnMarker's `coord`), not through the
 * broker.
 *
 * It sees its broker only through broker_services.h: the clock, the
 * broker's id and config, sending and correlation ids, FindCoordinator,
 * the metadata's partition leaders (where markers go), the replica
 * manager's leadership listener, internal appends to __transaction_state,
 * the broker's producer ids, history events, and (for the view) the
 * broker's transaction coordinator.
 */
#include "txn_coord.h"

#include "broker_services.h"
#include "coord_partition.h"
#include "group_coord.h"
#include "producer_ids.h"
#include "sim_assert.h"
#include "sim_net.h"

#include <string.h>

/* The broker's request.timeout.ms, for its appends and marker requests. */
#define TXN_REQUEST_TIMEOUT_MS 30000
/* A failed marker is sent again after this pause (Kafka retries as soon as
 * the metadata names a leader; the pause keeps a leaderless partition from
 * spinning). */
#define TXN_MARKER_RETRY_MS 100
#define TXN_RECORD_MAGIC G_GUINT64_CONSTANT(0x7478)
#define TXN_RECORD_BYTES 8
#define TXN_PARTITIONS_MAX 65535u
#define TXN_METAS_MAX (1u << 20)

/* A transaction's state as a record holds it (Kafka's TxnTransitMetadata). */
typedef struct {
    gint64 producer_id;
    gint16 producer_epoch;
    gint32 timeout_ms;
    TxnState state;
    gint64 start_ms;
    GArray *partitions; /* KTopicPartition, sorted */
} TxnSnapshot;

/* A client waiting for a transition to be written. */
typedef struct {
    SimNodeId client; /* SIM_NODE_NONE: nobody */
    gint32 correlation_id;
    KafkaMsgType response_type;
} TxnReply;

typedef struct {
    char *id;
    gint32 partition; /* of __transaction_state */
    TxnSnapshot current;
    TxnSnapshot pending; /* valid while has_pending */
    gboolean has_pending;
    guint64 append_id; /* of the pending transition's append */
    TxnReply reply;
    GArray *markers_todo; /* KTopicPartition whose marker is not yet sent or must be resent */
    guint markers_in_flight;
} TxnMeta;

typedef struct {
    TxnCoord *coord; /* for its timeout timer */
    gint32 correlation_id;
    TxnMeta *meta;
    KTopicPartition tp;
    SimNodeId node;
    SimTimerId timeout_timer;
} TxnMarker;

typedef struct {
    CoordPartition base;
} TxnPartition;

/* An InitProducerId for a new id, waiting for a producer id. */
typedef struct {
    guint64 id;
    char transactional_id[KAFKA_TXN_ID_MAX + 1];
    gint32 timeout_ms;
    SimNodeId client;
    gint32 correlation_id;
} PidRequest;

struct TxnCoord {
    BrokerServices *services;
    GPtrArray *partitions; /* TxnPartition* (owned), by partition */
    GPtrArray *metas;      /* TxnMeta* (owned), by id */
    GPtrArray *markers;    /* TxnMarker* (owned), in send order */
    GPtrArray *pid_requests; /* PidRequest* (owned) */
    guint64 append_next;
    guint64 pid_request_next;
    SimTimerId abort_timer;
    SimTimerId retry_timer;
};

static void markers_send(TxnCoord *coord, TxnMeta *meta);
static void markers_retry_later(TxnCoord *coord);
static void transition_begin(TxnCoord *coord, TxnMeta *meta, const TxnSnapshot *target,
                             const TxnReply *reply);

/* ---- pure functions ---- */

const char *
txn_state_name(TxnState state)
{
    switch (state) {
    case TXN_STATE_EMPTY:
        return "Empty";
    case TXN_STATE_ONGOING:
        return "Ongoing";
    case TXN_STATE_PREPARE_COMMIT:
        return "PrepareCommit";
    case TXN_STATE_PREPARE_ABORT:
        return "PrepareAbort";
    case TXN_STATE_COMPLETE_COMMIT:
        return "CompleteCommit";
    case TXN_STATE_COMPLETE_ABORT:
        return "CompleteAbort";
    case TXN_STATE_DEAD:
        return "Dead";
    }
    return "Unknown";
}

gint32
txn_coord_partition_for(const char *transactional_id, gint32 num_partitions)
{
    return group_coord_partition_for(transactional_id, num_partitions);
}

guint64
txn_coord_record_key(const char *transactional_id)
{
    guint64 hash = G_GUINT64_CONSTANT(14695981039346656037);
    const char *prefix = "txn";
    for (const char *c = prefix; *c; c++)
        hash = (hash ^ (guint8)*c) * G_GUINT64_CONSTANT(1099511628211);
    hash = (hash ^ 0) * G_GUINT64_CONSTANT(1099511628211);
    for (const char *c = transactional_id; *c; c++)
        hash = (hash ^ (guint8)*c) * G_GUINT64_CONSTANT(1099511628211);
    return hash == 0 ? 1 : hash;
}

static gboolean
state_is_prepare(TxnState state)
{
    return state == TXN_STATE_PREPARE_COMMIT || state == TXN_STATE_PREPARE_ABORT;
}

static gboolean
state_is_complete(TxnState state)
{
    return state == TXN_STATE_COMPLETE_COMMIT || state == TXN_STATE_COMPLETE_ABORT;
}

/* ---- snapshots and records ---- */

static void
snapshot_init(TxnSnapshot *snapshot)
{
    memset(snapshot, 0, sizeof *snapshot);
    snapshot->producer_id = -1;
    snapshot->producer_epoch = -1;
    snapshot->partitions = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
}

static void
snapshot_clear(TxnSnapshot *snapshot)
{
    if (snapshot->partitions != NULL)
        g_array_free(snapshot->partitions, TRUE);
    snapshot->partitions = NULL;
}

static void
snapshot_copy(TxnSnapshot *to, const TxnSnapshot *from)
{
    snapshot_clear(to);
    *to = *from;
    to->partitions = g_array_copy(from->partitions);
}

static gint
tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

static gboolean
snapshot_has_partition(const TxnSnapshot *snapshot, const KTopicPartition *tp)
{
    for (guint i = 0; i < snapshot->partitions->len; i++) {
        if (ktp_equal(&g_array_index(snapshot->partitions, KTopicPartition, i), tp))
            return TRUE;
    }
    return FALSE;
}

static void
snapshot_add_partition(TxnSnapshot *snapshot, const KTopicPartition *tp)
{
    if (snapshot_has_partition(snapshot, tp))
        return;
    KSIM_ASSERT(snapshot->partitions->len < TXN_PARTITIONS_MAX);
    g_array_append_val(snapshot->partitions, *tp);
    g_array_sort(snapshot->partitions, tp_compare);
}

static PlogBatch *
record_encode(const char *id, const TxnSnapshot *snapshot)
{
    PlogBatch *batch = plog_batch_new();
    guint64 head = TXN_RECORD_MAGIC << 48 | (guint64)snapshot->state << 40 |
                   (guint64)coord_record_string_chunks(id) << 32 | snapshot->partitions->len;
    plog_batch_add_record(batch, txn_coord_record_key(id), head, TXN_RECORD_BYTES);
    plog_batch_add_record(batch, 0, (guint64)snapshot->producer_id, TXN_RECORD_BYTES);
    plog_batch_add_record(batch, 0,
                          (guint64)(guint16)snapshot->producer_epoch |
                              (guint64)(guint32)snapshot->timeout_ms << 16,
                          TXN_RECORD_BYTES);
    plog_batch_add_record(batch, 0, (guint64)snapshot->start_ms, TXN_RECORD_BYTES);
    coord_record_add_string(batch, id, TXN_RECORD_BYTES);
    for (guint i = 0; i < snapshot->partitions->len; i++) {
        const KTopicPartition *tp = &g_array_index(snapshot->partitions, KTopicPartition, i);
        plog_batch_add_record(batch, 0,
                              (guint64)(guint32)tp->partition |
                                  (guint64)coord_record_string_chunks(tp->topic) << 32,
                              TXN_RECORD_BYTES);
        coord_record_add_string(batch, tp->topic, TXN_RECORD_BYTES);
    }
    return batch;
}

gboolean
txn_coord_decode(const PlogBatch *batch, TxnLogRecord *out)
{
    memset(out, 0, sizeof *out);
    if (batch->records->len < 4 || (batch->attributes & PLOG_BATCH_CONTROL) != 0)
        return FALSE;
    const PlogRecord *r = (const PlogRecord *)batch->records->data;
    if (r[0].key == 0 || r[0].value >> 48 != TXN_RECORD_MAGIC)
        return FALSE;
    TxnState state = (TxnState)((r[0].value >> 40) & 0xff);
    guint id_chunks = (guint)((r[0].value >> 32) & 0xff);
    guint n_partitions = (guint)(r[0].value & 0xffffffffu);
    if (state > TXN_STATE_DEAD || n_partitions > TXN_PARTITIONS_MAX)
        return FALSE;
    out->state = state;
    out->producer_id = (gint64)r[1].value;
    out->producer_epoch = (gint16)(guint16)(r[2].value & 0xffff);
    out->timeout_ms = (gint32)(guint32)(r[2].value >> 16);
    out->start_ms = (gint64)r[3].value;
    guint at = 4;
    out->partitions = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    gboolean ok = coord_record_read_string(batch, &at, id_chunks, out->transactional_id,
                              sizeof out->transactional_id);
    for (guint i = 0; ok && i < n_partitions; i++) {
        if (at >= batch->records->len) {
            ok = FALSE;
            break;
        }
        guint64 head = g_array_index(batch->records, PlogRecord, at++).value;
        char topic[KAFKA_TOPIC_NAME_MAX + 1];
        ok = coord_record_read_string(batch, &at, (guint)(head >> 32), topic, sizeof topic);
        if (ok) {
            KTopicPartition tp;
            ktp_set(&tp, topic, (gint32)(guint32)(head & 0xffffffffu));
            g_array_append_val(out->partitions, tp);
        }
    }
    ok = ok && r[0].key == txn_coord_record_key(out->transactional_id);
    if (!ok)
        txn_log_record_clear(out);
    return ok;
}

void
txn_log_record_clear(TxnLogRecord *record)
{
    if (record->partitions != NULL)
        g_array_free(record->partitions, TRUE);
    record->partitions = NULL;
}

/* ---- lookups ---- */

static SimWorld *
world_of(const TxnCoord *coord)
{
    return broker_services_world(coord->services);
}

static const BrokerConfig *
config_of(const TxnCoord *coord)
{
    return broker_services_config(coord->services);
}

static gint32
partition_of(const TxnCoord *coord, const char *id)
{
    return txn_coord_partition_for(id, config_of(coord)->transaction_state_log_num_partitions);
}

static TxnPartition *
txn_partition_find(const TxnCoord *coord, gint32 partition)
{
    return coord_partition_find(coord->partitions, partition);
}

static TxnMeta *
meta_find(const TxnCoord *coord, const char *id)
{
    for (guint i = 0; i < coord->metas->len; i++) {
        TxnMeta *meta = g_ptr_array_index(coord->metas, i);
        if (strcmp(meta->id, id) == 0)
            return meta;
    }
    return NULL;
}

static KafkaError
check_coordinator(const TxnCoord *coord, const char *id)
{
    if (id[0] == '\0')
        return KAFKA_ERROR_INVALID_REQUEST;
    const TxnPartition *tpart = txn_partition_find(coord, partition_of(coord, id));
    if (tpart == NULL)
        return KAFKA_ERROR_NOT_COORDINATOR;
    if (!tpart->base.loaded)
        return KAFKA_ERROR_COORDINATOR_LOAD_IN_PROGRESS;
    return KAFKA_ERROR_NONE;
}

/* ---- metas ---- */

static gint
meta_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(TxnMeta *const *)a)->id, (*(TxnMeta *const *)b)->id);
}

static TxnMeta *
meta_new(TxnCoord *coord, const char *id)
{
    KSIM_ASSERT(coord->metas->len < TXN_METAS_MAX);
    TxnMeta *meta = g_new0(TxnMeta, 1);
    meta->id = g_strdup(id);
    meta->partition = partition_of(coord, id);
    snapshot_init(&meta->current);
    meta->reply.client = SIM_NODE_NONE;
    meta->markers_todo = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    g_ptr_array_add(coord->metas, meta);
    g_ptr_array_sort(coord->metas, meta_compare);
    return meta;
}

static void
marker_free(TxnCoord *coord, TxnMarker *marker)
{
    sim_timer_cancel(world_of(coord), marker->timeout_timer);
    g_free(marker);
}

static void
meta_free(TxnCoord *coord, TxnMeta *meta)
{
    for (guint i = coord->markers->len; i > 0; i--) {
        TxnMarker *marker = g_ptr_array_index(coord->markers, i - 1);
        if (marker->meta != meta)
            continue;
        g_ptr_array_remove_index(coord->markers, i - 1);
        marker_free(coord, marker);
    }
    snapshot_clear(&meta->current);
    if (meta->has_pending)
        snapshot_clear(&meta->pending);
    g_array_free(meta->markers_todo, TRUE);
    g_free(meta->id);
    g_free(meta);
}

/* ---- answers ---- */

static void
respond_txn(TxnCoord *coord, SimNodeId to, KafkaMsgType type, gint32 correlation_id,
            KafkaError error)
{
    KTxnMessage *response = kproto_new(type);
    response->correlation_id = correlation_id;
    response->error = error;
    broker_services_send(coord->services, to, &response->base);
}

static void
respond_init(TxnCoord *coord, SimNodeId to, gint32 correlation_id, KafkaError error,
             gint64 producer_id, gint16 producer_epoch)
{
    KInitProducerIdMessage *response = kproto_new(KMSG_INIT_PRODUCER_ID_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->producer_id = error == KAFKA_ERROR_NONE ? producer_id : -1;
    response->producer_epoch = error == KAFKA_ERROR_NONE ? producer_epoch : -1;
    broker_services_send(coord->services, to, &response->base);
}

/* An EndTxn answer: with no error, the producer id and epoch the
 * transaction ended with (the bumped epoch for transaction version 2, which
 * the client adopts; older clients ignore them), as Kafka's EndTxnResponse
 * v5 carries them. */
static void
respond_end_txn(TxnCoord *coord, SimNodeId to, gint32 correlation_id, KafkaError error,
                const TxnMeta *meta)
{
    KTxnMessage *response = kproto_new(KMSG_END_TXN_RESPONSE);
    response->correlation_id = correlation_id;
    response->error = error;
    response->producer_id = error == KAFKA_ERROR_NONE && meta != NULL ? meta->current.producer_id
                                                                      : -1;
    response->producer_epoch =
        error == KAFKA_ERROR_NONE && meta != NULL ? meta->current.producer_epoch : -1;
    broker_services_send(coord->services, to, &response->base);
}

static void
reply_send(TxnCoord *coord, const TxnReply *reply, KafkaError error, const TxnMeta *meta)
{
    if (reply->client == SIM_NODE_NONE)
        return;
    if (reply->response_type == KMSG_INIT_PRODUCER_ID_RESPONSE)
        respond_init(coord, reply->client, reply->correlation_id, error,
                     meta != NULL ? meta->current.producer_id : -1,
                     meta != NULL ? meta->current.producer_epoch : -1);
    else if (reply->response_type == KMSG_END_TXN_RESPONSE)
        respond_end_txn(coord, reply->client, reply->correlation_id, error, meta);
    else
        respond_txn(coord, reply->client, reply->response_type, reply->correlation_id, error);
}

/* ---- transitions ---- */

/* Kafka's TransactionStateManager.appendTransactionToLog error mapping. */
static KafkaError
append_error(KafkaError error)
{
    switch (error) {
    case KAFKA_ERROR_NONE:
        return KAFKA_ERROR_NONE;
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
    case KAFKA_ERROR_NOT_ENOUGH_REPLICAS:
    case KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KAFKA_ERROR_REQUEST_TIMED_OUT:
        return KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE;
    case KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER:
    case KAFKA_ERROR_KAFKA_STORAGE_ERROR:
        return KAFKA_ERROR_NOT_COORDINATOR;
    default:
        return error;
    }
}

static TxnMeta *
meta_by_append(const TxnCoord *coord, guint64 append_id)
{
    for (guint i = 0; i < coord->metas->len; i++) {
        TxnMeta *meta = g_ptr_array_index(coord->metas, i);
        if (meta->has_pending && meta->append_id == append_id)
            return meta;
    }
    return NULL;
}

static void
transition_appended(void *user_data, KafkaError error, gint64 base_offset, guint64 append_id)
{
    TxnCoord *coord = user_data;
    (void)base_offset;
    TxnMeta *meta = meta_by_append(coord, append_id);
    if (meta == NULL)
        return; /* its partition was unloaded meanwhile */
    TxnReply reply = meta->reply;
    meta->reply.client = SIM_NODE_NONE;
    meta->has_pending = FALSE;
    KafkaError mapped = append_error(error);
    if (mapped != KAFKA_ERROR_NONE) {
        gboolean completing = state_is_complete(meta->pending.state);
        snapshot_clear(&meta->pending);
        reply_send(coord, &reply, mapped, meta);
        /* Markers are all written: Complete* is tried again later (Kafka
         * retries it while it still coordinates the id). */
        if (completing && mapped == KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE)
            markers_retry_later(coord);
        return;
    }
    snapshot_clear(&meta->current);
    meta->current = meta->pending;
    meta->pending.partitions = NULL;
    reply_send(coord, &reply, KAFKA_ERROR_NONE, meta);
    if (state_is_prepare(meta->current.state)) {
        g_array_set_size(meta->markers_todo, 0);
        g_array_append_vals(meta->markers_todo, meta->current.partitions->data,
                            meta->current.partitions->len);
        markers_send(coord, meta);
    }
}

/* Appends `target` as the meta's next state; `reply` (may be NULL) is
 * answered once it is written or failed. */
static void
transition_begin(TxnCoord *coord, TxnMeta *meta, const TxnSnapshot *target, const TxnReply *reply)
{
    KSIM_ASSERT(!meta->has_pending);
    KSIM_ASSERT(meta->markers_in_flight == 0);
    meta->has_pending = TRUE;
    snapshot_init(&meta->pending);
    snapshot_copy(&meta->pending, target);
    meta->append_id = ++coord->append_next;
    meta->reply.client = SIM_NODE_NONE;
    if (reply != NULL)
        meta->reply = *reply;
    g_autoptr(PlogBatch) batch = record_encode(meta->id, &meta->pending);
    batch->first_timestamp_ms = broker_services_now_ms(coord->services);
    batch->max_timestamp_ms = batch->first_timestamp_ms;
    KTopicPartition tp;
    ktp_set(&tp, TXN_STATE_TOPIC, meta->partition);
    /* The answer may come before this returns (a one-replica ISR). */
    broker_services_append_internal(coord->services, &tp, batch, TXN_REQUEST_TIMEOUT_MS,
                                    transition_appended, coord, meta->append_id);
}

/* A target starting from the meta's current state. (caller clears it) */
static void
target_from_current(const TxnMeta *meta, TxnSnapshot *target)
{
    snapshot_init(target);
    snapshot_copy(target, &meta->current);
}

/* Prepare{Commit,Abort} of the current transaction, with `epoch`. */
static void
begin_prepare(TxnCoord *coord, TxnMeta *meta, gboolean commit, gint16 epoch,
              const TxnReply *reply)
{
    TxnSnapshot target;
    target_from_current(meta, &target);
    target.state = commit ? TXN_STATE_PREPARE_COMMIT : TXN_STATE_PREPARE_ABORT;
    target.producer_epoch = epoch;
    transition_begin(coord, meta, &target, reply);
    snapshot_clear(&target);
}

/* ---- markers ---- */

static void markers_retry_fired(SimWorld *world, void *ctx, void *arg);

static void
markers_retry_later(TxnCoord *coord)
{
    if (sim_timer_pending(world_of(coord), coord->retry_timer))
        return;
    coord->retry_timer =
        sim_timer_set(world_of(coord), broker_services_node(coord->services),
                      TXN_MARKER_RETRY_MS * SIM_NS_PER_MS, markers_retry_fired, coord);
}

static void
complete_transaction(TxnCoord *coord, TxnMeta *meta)
{
    TxnSnapshot target;
    target_from_current(meta, &target);
    target.state = meta->current.state == TXN_STATE_PREPARE_COMMIT ? TXN_STATE_COMPLETE_COMMIT
                                                                   : TXN_STATE_COMPLETE_ABORT;
    g_array_set_size(target.partitions, 0);
    transition_begin(coord, meta, &target, NULL);
    snapshot_clear(&target);
}

static void marker_timed_out(SimWorld *world, void *ctx, void *arg);

static void
marker_send(TxnCoord *coord, TxnMeta *meta, const KTopicPartition *tp, SimNodeId node)
{
    TxnPartition *tpart = txn_partition_find(coord, meta->partition);
    KTxnMarkersMessage *request = kproto_new(KMSG_WRITE_TXN_MARKERS_REQUEST);
    request->correlation_id = broker_services_next_correlation(coord->services);
    request->producer_id = meta->current.producer_id;
    request->producer_epoch = meta->current.producer_epoch;
    request->committed = meta->current.state == TXN_STATE_PREPARE_COMMIT;
    request->coordinator_epoch = tpart != NULL ? tpart->base.leader_epoch : -1;
    KTxnMarkerPartition entry = {*tp, KAFKA_ERROR_NONE};
    g_array_append_val(request->partitions, entry);
    kproto_update_size(&request->base);
    TxnMarker *marker = g_new0(TxnMarker, 1);
    marker->coord = coord;
    marker->correlation_id = request->correlation_id;
    marker->meta = meta;
    marker->tp = *tp;
    marker->node = node;
    marker->timeout_timer =
        sim_timer_set(world_of(coord), broker_services_node(coord->services),
                      TXN_REQUEST_TIMEOUT_MS * SIM_NS_PER_MS, marker_timed_out, marker);
    g_ptr_array_add(coord->markers, marker);
    meta->markers_in_flight++;
    broker_services_send(coord->services, node, &request->base);
}

/* Sends the markers still to do that have a known leader; completes the
 * transaction when none is left. */
static void
markers_send(TxnCoord *coord, TxnMeta *meta)
{
    if (meta->has_pending)
        return;
    guint kept = 0;
    for (guint i = 0; i < meta->markers_todo->len; i++) {
        KTopicPartition tp = g_array_index(meta->markers_todo, KTopicPartition, i);
        gboolean exists;
        SimNodeId node = broker_services_leader_node(coord->services, &tp, &exists);
        if (!exists)
            continue; /* the partition is gone: nothing to mark */
        if (node == SIM_NODE_NONE) {
            g_array_index(meta->markers_todo, KTopicPartition, kept++) = tp;
            continue;
        }
        marker_send(coord, meta, &tp, node);
    }
    g_array_set_size(meta->markers_todo, kept);
    if (kept > 0)
        markers_retry_later(coord);
    if (kept == 0 && meta->markers_in_flight == 0 && state_is_prepare(meta->current.state))
        complete_transaction(coord, meta);
}

static void
markers_retry_fired(SimWorld *world, void *ctx, void *arg)
{
    TxnCoord *coord = arg;
    (void)world;
    (void)ctx;
    coord->retry_timer = SIM_EVENT_ID_NONE;
    /* A copy: completing a transaction never frees a meta, but keep the
     * walk independent of the array anyway. */
    g_autoptr(GPtrArray) metas = g_ptr_array_copy(coord->metas, NULL, NULL);
    for (guint i = 0; i < metas->len; i++) {
        TxnMeta *meta = g_ptr_array_index(metas, i);
        if (meta->markers_todo->len > 0 ||
            (state_is_prepare(meta->current.state) && !meta->has_pending &&
             meta->markers_in_flight == 0))
            markers_send(coord, meta);
    }
}

/* A marker ended: written, or to be sent again. */
static void
marker_finish(TxnCoord *coord, TxnMarker *marker, gboolean written)
{
    TxnMeta *meta = marker->meta;
    g_ptr_array_remove(coord->markers, marker);
    KSIM_ASSERT(meta->markers_in_flight > 0);
    meta->markers_in_flight--;
    if (!written)
        g_array_append_val(meta->markers_todo, marker->tp);
    marker_free(coord, marker);
    if (!written) {
        markers_retry_later(coord);
        return;
    }
    if (meta->markers_todo->len == 0 && meta->markers_in_flight == 0)
        complete_transaction(coord, meta);
}

static void
marker_timed_out(SimWorld *world, void *ctx, void *arg)
{
    TxnMarker *marker = arg;
    TxnCoord *coord = marker->coord;
    (void)ctx;
    marker->timeout_timer = SIM_EVENT_ID_NONE;
    sim_net_close(sim_world_net(world), broker_services_node(coord->services), marker->node);
    marker_finish(coord, marker, FALSE);
}

static TxnMarker *
marker_find(const TxnCoord *coord, SimNodeId from, gint32 correlation_id)
{
    for (guint i = 0; i < coord->markers->len; i++) {
        TxnMarker *marker = g_ptr_array_index(coord->markers, i);
        if (marker->node == from && marker->correlation_id == correlation_id)
            return marker;
    }
    return NULL;
}

/* Kafka's TransactionMarkerRequestCompletionHandler: written, or a
 * partition that moved on (a newer epoch wrote there: the marker is moot),
 * or try again. */
static void
handle_markers_response(TxnCoord *coord, SimNodeId from, const KTxnMarkersMessage *response)
{
    TxnMarker *marker = marker_find(coord, from, response->correlation_id);
    if (marker == NULL)
        return;
    KafkaError error = KAFKA_ERROR_REQUEST_TIMED_OUT;
    for (guint i = 0; i < response->partitions->len; i++) {
        const KTxnMarkerPartition *entry =
            &g_array_index(response->partitions, KTxnMarkerPartition, i);
        if (ktp_equal(&entry->tp, &marker->tp))
            error = entry->error;
    }
    marker_finish(coord, marker,
                  error == KAFKA_ERROR_NONE || error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH);
}

void
txn_coord_peer_disconnected(TxnCoord *coord, SimNodeId peer)
{
    for (guint i = coord->markers->len; i > 0; i--) {
        if (i > coord->markers->len)
            continue;
        TxnMarker *marker = g_ptr_array_index(coord->markers, i - 1);
        if (marker->node == peer)
            marker_finish(coord, marker, FALSE);
    }
}

/* ---- requests ---- */

static void
pid_allocated(void *user_data, KafkaError error, gint64 producer_id, guint64 done_id)
{
    TxnCoord *coord = user_data;
    PidRequest *request = NULL;
    for (guint i = 0; i < coord->pid_requests->len; i++) {
        PidRequest *candidate = g_ptr_array_index(coord->pid_requests, i);
        if (candidate->id == done_id)
            request = g_ptr_array_steal_index(coord->pid_requests, i);
    }
    if (request == NULL)
        return;
    if (error == KAFKA_ERROR_NONE)
        error = check_coordinator(coord, request->transactional_id);
    TxnMeta *meta = NULL;
    if (error == KAFKA_ERROR_NONE) {
        meta = meta_find(coord, request->transactional_id);
        if (meta != NULL)
            error = KAFKA_ERROR_CONCURRENT_TRANSACTIONS; /* another init created it */
    }
    if (error != KAFKA_ERROR_NONE) {
        respond_init(coord, request->client, request->correlation_id, error, -1, -1);
        g_free(request);
        return;
    }
    /* Kafka's new TransactionMetadata: epoch -1, Empty, bumped to 0 by the
     * transition that makes it durable. */
    meta = meta_new(coord, request->transactional_id);
    meta->current.producer_id = producer_id;
    TxnSnapshot target;
    target_from_current(meta, &target);
    target.producer_epoch = 0;
    target.timeout_ms = request->timeout_ms;
    target.state = TXN_STATE_EMPTY;
    TxnReply reply = {request->client, request->correlation_id, KMSG_INIT_PRODUCER_ID_RESPONSE};
    transition_begin(coord, meta, &target, &reply);
    snapshot_clear(&target);
    g_free(request);
}

/* Kafka's prepareInitProducerIdTransit for an existing id. */
static KafkaError
init_existing(TxnCoord *coord, TxnMeta *meta, SimNodeId from, const KInitProducerIdMessage *request)
{
    /* KIP-360: an instance bumping its own epoch must still hold it; a newer
     * instance has fenced it otherwise. */
    if (request->bump && (request->producer_id != meta->current.producer_id ||
                          request->producer_epoch != meta->current.producer_epoch))
        return KAFKA_ERROR_PRODUCER_FENCED;
    if (meta->has_pending || state_is_prepare(meta->current.state))
        return KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    if (meta->current.state == TXN_STATE_ONGOING) {
        /* Fence the old instance: abort its transaction with a bumped
         * epoch; the new instance retries until it completes. */
        begin_prepare(coord, meta, FALSE, (gint16)(meta->current.producer_epoch + 1), NULL);
        return KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    }
    TxnSnapshot target;
    target_from_current(meta, &target);
    target.producer_epoch = (gint16)(meta->current.producer_epoch + 1);
    target.timeout_ms = request->transaction_timeout_ms;
    target.state = TXN_STATE_EMPTY;
    g_array_set_size(target.partitions, 0);
    TxnReply reply = {from, request->correlation_id, KMSG_INIT_PRODUCER_ID_RESPONSE};
    transition_begin(coord, meta, &target, &reply);
    snapshot_clear(&target);
    return KAFKA_ERROR_NONE;
}

static void
handle_init_producer_id(TxnCoord *coord, SimNodeId from, const KInitProducerIdMessage *request)
{
    KafkaError error = check_coordinator(coord, request->transactional_id);
    if (error == KAFKA_ERROR_NONE &&
        (request->transaction_timeout_ms <= 0 ||
         request->transaction_timeout_ms > config_of(coord)->transaction_max_timeout_ms))
        error = KAFKA_ERROR_INVALID_TRANSACTION_TIMEOUT;
    TxnMeta *meta = error == KAFKA_ERROR_NONE ? meta_find(coord, request->transactional_id) : NULL;
    if (error == KAFKA_ERROR_NONE && meta != NULL)
        error = init_existing(coord, meta, from, request);
    else if (error == KAFKA_ERROR_NONE) {
        PidRequest *pending = g_new0(PidRequest, 1);
        pending->id = ++coord->pid_request_next;
        KPROTO_SET_ID(pending->transactional_id, request->transactional_id);
        pending->timeout_ms = request->transaction_timeout_ms;
        pending->client = from;
        pending->correlation_id = request->correlation_id;
        g_ptr_array_add(coord->pid_requests, pending);
        producer_ids_allocate(broker_services_producer_ids(coord->services), pid_allocated, coord,
                              pending->id);
        return;
    }
    if (error != KAFKA_ERROR_NONE)
        respond_init(coord, from, request->correlation_id, error, -1, -1);
}

/* The checks every request of an ongoing producer passes (Kafka's
 * handleAddPartitionsToTransaction and handleEndTransaction). */
static KafkaError
check_producer(const TxnCoord *coord, const KTxnMessage *request, TxnMeta **out)
{
    *out = NULL;
    KafkaError error = check_coordinator(coord, request->transactional_id);
    if (error != KAFKA_ERROR_NONE)
        return error;
    TxnMeta *meta = meta_find(coord, request->transactional_id);
    if (meta == NULL || meta->current.producer_id != request->producer_id)
        return KAFKA_ERROR_INVALID_PRODUCER_ID_MAPPING;
    if (meta->current.producer_epoch != request->producer_epoch)
        return KAFKA_ERROR_PRODUCER_FENCED;
    *out = meta;
    if (meta->has_pending || state_is_prepare(meta->current.state))
        return KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    return KAFKA_ERROR_NONE;
}

/* AddPartitionsToTxn and AddOffsetsToTxn: the partitions join the
 * transaction (Ongoing from now on, if it was not). */
static void
add_partitions(TxnCoord *coord, SimNodeId from, const KTxnMessage *request,
               const GArray *partitions, KafkaMsgType response_type)
{
    TxnMeta *meta;
    KafkaError error = check_producer(coord, request, &meta);
    if (error != KAFKA_ERROR_NONE) {
        respond_txn(coord, from, response_type, request->correlation_id, error);
        return;
    }
    TxnSnapshot target;
    target_from_current(meta, &target);
    if (meta->current.state != TXN_STATE_ONGOING) {
        g_array_set_size(target.partitions, 0);
        target.start_ms = broker_services_now_ms(coord->services);
    }
    for (guint i = 0; i < partitions->len; i++)
        snapshot_add_partition(&target, &g_array_index(partitions, KTopicPartition, i));
    if (meta->current.state == TXN_STATE_ONGOING &&
        target.partitions->len == meta->current.partitions->len) {
        snapshot_clear(&target);
        respond_txn(coord, from, response_type, request->correlation_id, KAFKA_ERROR_NONE);
        return;
    }
    target.state = TXN_STATE_ONGOING;
    TxnReply reply = {from, request->correlation_id, response_type};
    transition_begin(coord, meta, &target, &reply);
    snapshot_clear(&target);
}

static void
handle_add_offsets(TxnCoord *coord, SimNodeId from, const KTxnMessage *request)
{
    g_autoptr(GArray) partitions = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    KTopicPartition tp;
    ktp_set(&tp, GROUP_OFFSETS_TOPIC,
            group_coord_partition_for(request->group_id,
                                      config_of(coord)->offsets_topic_num_partitions));
    g_array_append_val(partitions, tp);
    add_partitions(coord, from, request, partitions, KMSG_ADD_OFFSETS_TO_TXN_RESPONSE);
}

/* Kafka's handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4 with
 * verifyOnly, from a partition leader): whether the partition is in the
 * producer's ongoing transaction. The pending transition is not looked at
 * (the leader's guard covers the race); Kafka answers a partition that is
 * not in the transaction TRANSACTION_ABORTABLE, which the leader turns into
 * INVALID_TXN_STATE for the clients ksim models: answered as that here. */
static void
handle_verify(TxnCoord *coord, SimNodeId from, const KTxnMessage *request)
{
    KafkaError error = check_coordinator(coord, request->transactional_id);
    TxnMeta *meta = error == KAFKA_ERROR_NONE ? meta_find(coord, request->transactional_id) : NULL;
    if (error == KAFKA_ERROR_NONE &&
        (meta == NULL || meta->current.producer_id != request->producer_id))
        error = KAFKA_ERROR_INVALID_PRODUCER_ID_MAPPING;
    else if (error == KAFKA_ERROR_NONE && meta->current.producer_epoch != request->producer_epoch)
        error = KAFKA_ERROR_PRODUCER_FENCED;
    else if (error == KAFKA_ERROR_NONE && state_is_prepare(meta->current.state))
        error = KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    for (guint i = 0; error == KAFKA_ERROR_NONE && i < request->partitions->len; i++) {
        if (!snapshot_has_partition(&meta->current,
                                    &g_array_index(request->partitions, KTopicPartition, i)))
            error = KAFKA_ERROR_INVALID_TXN_STATE;
    }
    respond_txn(coord, from, KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE, request->correlation_id, error);
}

/* The epoch check of an EndTxn (Kafka 4.0's endTransaction, isValidEpoch).
 * Version 2: Ongoing and Empty need the current epoch; Prepare* and
 * Complete* the one just below it (a retry of the EndTxn that bumped it).
 * Older versions: the current epoch. */
static gboolean end_txn_aborts_empty(const TxnMeta *meta, const KTxnMessage *request);

static gboolean
end_txn_epoch_valid(const TxnMeta *meta, const KTxnMessage *request)
{
    gint16 epoch = meta->current.producer_epoch;
    if (request->transaction_version < 2)
        return request->producer_epoch == epoch;
    if (end_txn_aborts_empty(meta, request))
        return TRUE;
    if (meta->current.state == TXN_STATE_ONGOING || meta->current.state == TXN_STATE_EMPTY)
        return request->producer_epoch == epoch;
    return request->producer_epoch + 1 == epoch;
}

/* The bumped epoch a version 2 EndTxn ends its transaction with. (Kafka
 * then moves to a new producer id when the epoch is exhausted; ksim keeps
 * the last epoch there, which no run reaches.) */
static gint16
end_txn_epoch(const TxnMeta *meta, const KTxnMessage *request)
{
    gint16 epoch = meta->current.producer_epoch;
    if (request->transaction_version < 2 || epoch >= G_MAXINT16 - 1)
        return epoch;
    return (gint16)(epoch + 1);
}

/* Version 2: an abort when the coordinator holds no open transaction (the
 * client's produce requests, which add its partitions, were all refused):
 * ksim bumps the epoch and completes the abort without markers, following
 * KIP-890's rule that every EndTxn of a version 2 client bumps the epoch, so
 * that the client can go on; trunk 1eb7644 answers INVALID_TXN_STATE in
 * Empty and PRODUCER_FENCED in Complete* here. */
static gboolean
end_txn_aborts_empty(const TxnMeta *meta, const KTxnMessage *request)
{
    return request->transaction_version >= 2 && !request->committed &&
           request->producer_epoch == meta->current.producer_epoch &&
           (meta->current.state == TXN_STATE_EMPTY || state_is_complete(meta->current.state));
}

static gboolean
end_txn_abort_empty(TxnCoord *coord, TxnMeta *meta, SimNodeId from, const KTxnMessage *request)
{
    if (!end_txn_aborts_empty(meta, request))
        return FALSE;
    TxnReply reply = {from, request->correlation_id, KMSG_END_TXN_RESPONSE};
    TxnSnapshot target;
    target_from_current(meta, &target);
    g_array_set_size(target.partitions, 0);
    target.state = TXN_STATE_PREPARE_ABORT;
    target.producer_epoch = end_txn_epoch(meta, request);
    transition_begin(coord, meta, &target, &reply);
    snapshot_clear(&target);
    return TRUE;
}

/* What an EndTxn gets when the transaction is not Ongoing (Kafka's
 * endTransaction): a retry of the EndTxn that ended it that way succeeds (or
 * waits while its markers are written), anything else is INVALID_TXN_STATE. */
static KafkaError
end_txn_not_ongoing(const TxnMeta *meta, const KTxnMessage *request)
{
    TxnState done = request->committed ? TXN_STATE_COMPLETE_COMMIT : TXN_STATE_COMPLETE_ABORT;
    TxnState preparing = request->committed ? TXN_STATE_PREPARE_COMMIT : TXN_STATE_PREPARE_ABORT;
    if (meta->current.state == done)
        return KAFKA_ERROR_NONE;
    if (meta->current.state == preparing)
        return KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    return KAFKA_ERROR_INVALID_TXN_STATE;
}

/* Kafka's handleEndTransaction. */
static void
handle_end_txn(TxnCoord *coord, SimNodeId from, const KTxnMessage *request)
{
    KafkaError error = check_coordinator(coord, request->transactional_id);
    TxnMeta *meta = error == KAFKA_ERROR_NONE ? meta_find(coord, request->transactional_id) : NULL;
    if (error == KAFKA_ERROR_NONE &&
        (meta == NULL || meta->current.producer_id != request->producer_id))
        error = KAFKA_ERROR_INVALID_PRODUCER_ID_MAPPING;
    else if (error == KAFKA_ERROR_NONE && !end_txn_epoch_valid(meta, request))
        error = KAFKA_ERROR_PRODUCER_FENCED;
    else if (error == KAFKA_ERROR_NONE && meta->has_pending)
        error = KAFKA_ERROR_CONCURRENT_TRANSACTIONS;
    /* A request of an epoch the transactions moved past: with version 2, a
     * delayed EndTxn of an earlier transaction. */
    if (error == KAFKA_ERROR_PRODUCER_FENCED &&
        request->producer_epoch < meta->current.producer_epoch)
        SIM_MARK(world_of(coord), txn_stale_end_refused);
    if (error == KAFKA_ERROR_NONE && end_txn_abort_empty(coord, meta, from, request))
        return;
    if (error == KAFKA_ERROR_NONE && meta->current.state == TXN_STATE_ONGOING) {
        TxnReply reply = {from, request->correlation_id, KMSG_END_TXN_RESPONSE};
        begin_prepare(coord, meta, request->committed, end_txn_epoch(meta, request), &reply);
        return;
    }
    if (error == KAFKA_ERROR_NONE)
        error = end_txn_not_ongoing(meta, request);
    respond_end_txn(coord, from, request->correlation_id, error, meta);
}

/* ---- FindCoordinator and the topic ---- */

static void
handle_find_coordinator(TxnCoord *coord, SimNodeId from, const KFindCoordinatorRequest *request)
{
    const BrokerConfig *config = config_of(coord);
    broker_services_find_coordinator(coord->services, from, request, TXN_STATE_TOPIC,
                                     config->transaction_state_log_num_partitions,
                                     config->transaction_state_log_replication_factor,
                                     partition_of(coord, request->group_id),
                                     KAFKA_ERROR_INVALID_REQUEST);
}

gboolean
txn_coord_handle_message(TxnCoord *coord, SimNodeId from, SimMsg *msg)
{
    switch ((KafkaMsgType)msg->type) {
    case KMSG_FIND_COORDINATOR_REQUEST:
        if (((const KFindCoordinatorRequest *)msg)->key_type != KAFKA_COORDINATOR_TRANSACTION)
            return FALSE;
        handle_find_coordinator(coord, from, (const KFindCoordinatorRequest *)msg);
        return TRUE;
    case KMSG_INIT_PRODUCER_ID_REQUEST:
        if (((const KInitProducerIdMessage *)msg)->transactional_id[0] == '\0')
            return FALSE; /* an idempotent producer's: producer_ids.c */
        handle_init_producer_id(coord, from, (const KInitProducerIdMessage *)msg);
        return TRUE;
    case KMSG_ADD_PARTITIONS_TO_TXN_REQUEST: {
        const KTxnMessage *request = (const KTxnMessage *)msg;
        if (request->verify_only)
            handle_verify(coord, from, request);
        else
            add_partitions(coord, from, request, request->partitions,
                           KMSG_ADD_PARTITIONS_TO_TXN_RESPONSE);
        return TRUE;
    }
    case KMSG_ADD_OFFSETS_TO_TXN_REQUEST:
        handle_add_offsets(coord, from, (const KTxnMessage *)msg);
        return TRUE;
    case KMSG_END_TXN_REQUEST:
        handle_end_txn(coord, from, (const KTxnMessage *)msg);
        return TRUE;
    case KMSG_WRITE_TXN_MARKERS_RESPONSE:
        handle_markers_response(coord, from, (const KTxnMarkersMessage *)msg);
        return TRUE;
    default:
        return FALSE;
    }
}

/* ---- transaction timeouts ---- */

static void abort_timer_fired(SimWorld *world, void *ctx, void *arg);

static void
abort_timer_arm(TxnCoord *coord)
{
    coord->abort_timer = sim_timer_set(
        world_of(coord), broker_services_node(coord->services),
        config_of(coord)->transaction_abort_timed_out_transaction_cleanup_interval_ms *
            SIM_NS_PER_MS,
        abort_timer_fired, coord);
}

/* Kafka's abortTimedOutTransactions: an Ongoing transaction past its
 * timeout is aborted with a bumped epoch, fencing its producer. */
static void
abort_timer_fired(SimWorld *world, void *ctx, void *arg)
{
    TxnCoord *coord = arg;
    (void)world;
    (void)ctx;
    gint64 now_ms = broker_services_now_ms(coord->services);
    for (guint i = 0; i < coord->metas->len; i++) {
        TxnMeta *meta = g_ptr_array_index(coord->metas, i);
        if (meta->current.state != TXN_STATE_ONGOING || meta->has_pending ||
            meta->current.start_ms + meta->current.timeout_ms > now_ms ||
            meta->current.producer_epoch == G_MAXINT16)
            continue;
        begin_prepare(coord, meta, FALSE, (gint16)(meta->current.producer_epoch + 1), NULL);
    }
    abort_timer_arm(coord);
}

/* ---- loading and unloading ---- */

typedef struct {
    TxnCoord *coord;
    gint32 partition;
} LoadContext;

/* One batch of the partition's log: its record, if it is one, becomes its
 * id's meta (the last record per id wins). */
static void
load_batch(const PlogBatch *batch, gint64 asked, void *user_data)
{
    const LoadContext *load = user_data;
    TxnLogRecord record;
    if (batch->base_offset < asked || !txn_coord_decode(batch, &record))
        return;
    TxnMeta *meta = meta_find(load->coord, record.transactional_id);
    if (meta == NULL)
        meta = meta_new(load->coord, record.transactional_id);
    KSIM_ASSERT(meta->partition == load->partition);
    snapshot_clear(&meta->current);
    meta->current.producer_id = record.producer_id;
    meta->current.producer_epoch = record.producer_epoch;
    meta->current.timeout_ms = record.timeout_ms;
    meta->current.state = record.state;
    meta->current.start_ms = record.start_ms;
    meta->current.partitions = record.partitions;
}

/* The partition's metas from its log; then, as Kafka's
 * loadTransactionsForTxnTopicPartition, transactions left in Prepare* get
 * their markers (again). */
static void
load_partition(void *user_data, CoordPartition *partition, Plog *log)
{
    TxnCoord *coord = user_data;
    LoadContext load = {coord, partition->partition};
    coord_partition_read_log(log, load_batch, &load);
    KTopicPartition tp;
    ktp_set(&tp, TXN_STATE_TOPIC, partition->partition);
    for (guint i = 0; i < coord->metas->len; i++) {
        TxnMeta *meta = g_ptr_array_index(coord->metas, i);
        if (meta->partition != partition->partition || !state_is_prepare(meta->current.state))
            continue;
        broker_services_record_event(
            coord->services, HISTORY_EVENT_TXN_RESUMED, &tp, NULL,
            "broker %d, the new transaction coordinator of %s, found it in %s (producer id "
            "%" G_GINT64_FORMAT ", epoch %d) and sends its markers again",
            broker_services_broker_id(coord->services), meta->id,
            txn_state_name(meta->current.state), meta->current.producer_id,
            meta->current.producer_epoch);
        SIM_MARK(world_of(coord), txn_marker_resumed);
        g_array_set_size(meta->markers_todo, 0);
        g_array_append_vals(meta->markers_todo, meta->current.partitions->data,
                            meta->current.partitions->len);
        markers_send(coord, meta);
    }
}

static void
partition_elected(void *user_data, const Partition *p)
{
    TxnCoord *coord = user_data;
    if (strcmp(p->tp.topic, TXN_STATE_TOPIC) != 0)
        return;
    coord_partition_elected(coord->partitions, sizeof(TxnPartition), coord->services,
                            TXN_STATE_TOPIC, p, load_partition, coord);
}

static void
txn_partition_free(TxnCoord *coord, TxnPartition *tpart)
{
    coord_partition_stop(coord->services, &tpart->base);
    g_free(tpart);
}

/* Kafka's removeTransactionsForTxnTopicPartition: the partition's ids leave
 * this broker; clients waiting on a transition are told NOT_COORDINATOR. */
static void
partition_resigned(void *user_data, const Partition *p)
{
    TxnCoord *coord = user_data;
    if (strcmp(p->tp.topic, TXN_STATE_TOPIC) != 0)
        return;
    TxnPartition *tpart = txn_partition_find(coord, p->tp.partition);
    if (tpart == NULL)
        return;
    for (guint i = coord->metas->len; i > 0; i--) {
        TxnMeta *meta = g_ptr_array_index(coord->metas, i - 1);
        if (meta->partition != tpart->base.partition)
            continue;
        if (meta->has_pending)
            reply_send(coord, &meta->reply, KAFKA_ERROR_NOT_COORDINATOR, NULL);
        g_ptr_array_remove_index(coord->metas, i - 1);
        meta_free(coord, meta);
    }
    g_ptr_array_remove(coord->partitions, tpart);
    txn_partition_free(coord, tpart);
}

/* ---- the object ---- */

TxnCoord *
txn_coord_new(BrokerServices *services)
{
    TxnCoord *coord = g_new0(TxnCoord, 1);
    coord->services = services;
    coord->partitions = g_ptr_array_new();
    coord->metas = g_ptr_array_new();
    coord->markers = g_ptr_array_new();
    coord->pid_requests = g_ptr_array_new_with_free_func(g_free);
    abort_timer_arm(coord);
    const ReplicaLeadershipListener leadership = {partition_elected, partition_resigned, coord};
    broker_services_add_leadership_listener(services, &leadership);
    return coord;
}

void
txn_coord_free(TxnCoord *coord)
{
    if (coord == NULL)
        return;
    for (guint i = 0; i < coord->metas->len; i++)
        meta_free(coord, g_ptr_array_index(coord->metas, i));
    KSIM_ASSERT(coord->markers->len == 0);
    for (guint i = 0; i < coord->partitions->len; i++)
        txn_partition_free(coord, g_ptr_array_index(coord->partitions, i));
    sim_timer_cancel(world_of(coord), coord->abort_timer);
    sim_timer_cancel(world_of(coord), coord->retry_timer);
    g_ptr_array_free(coord->metas, TRUE);
    g_ptr_array_free(coord->markers, TRUE);
    g_ptr_array_free(coord->partitions, TRUE);
    g_ptr_array_free(coord->pid_requests, TRUE);
    g_free(coord);
}

/* ---- views ---- */

void
txn_coord_describe(const Broker *broker, const char *transactional_id, TxnCoordInfo *out)
{
    memset(out, 0, sizeof *out);
    out->state = TXN_STATE_DEAD;
    out->producer_id = -1;
    out->producer_epoch = -1;
    const BrokerServices *services = broker_services_of(broker);
    if (services == NULL)
        return;
    const TxnCoord *coord = broker_services_txn_coord(services);
    const TxnPartition *tpart = txn_partition_find(coord, partition_of(coord, transactional_id));
    out->coordinator = tpart != NULL && tpart->base.loaded;
    out->loading = tpart != NULL && !tpart->base.loaded;
    const TxnMeta *meta = meta_find(coord, transactional_id);
    if (meta == NULL)
        return;
    out->exists = TRUE;
    out->state = meta->current.state;
    out->producer_id = meta->current.producer_id;
    out->producer_epoch = meta->current.producer_epoch;
    out->partitions = meta->current.partitions->len;
    out->transition_pending = meta->has_pending;
    out->markers_pending = meta->markers_todo->len + meta->markers_in_flight;
}

/* ---- invariants ---- */

static void
check_meta(const TxnCoord *coord, const TxnMeta *meta)
{
    const TxnPartition *tpart = txn_partition_find(coord, meta->partition);
    KSIM_ASSERT(tpart != NULL);
    KSIM_ASSERT(tpart->base.loaded);
    if (meta->reply.client != SIM_NODE_NONE)
        KSIM_ASSERT(meta->has_pending);
    if (meta->markers_todo->len > 0 || meta->markers_in_flight > 0) {
        KSIM_ASSERT(state_is_prepare(meta->current.state));
        KSIM_ASSERT(!meta->has_pending);
    }
    for (guint i = 1; i < meta->current.partitions->len; i++)
        KSIM_ASSERT(ktp_compare(&g_array_index(meta->current.partitions, KTopicPartition, i - 1),
                                &g_array_index(meta->current.partitions, KTopicPartition, i)) <
                    0);
}

void
txn_coord_check_invariants(const TxnCoord *coord)
{
    coord_partitions_check(coord->services, coord->partitions, TXN_STATE_TOPIC);
    for (guint i = 0; i < coord->metas->len; i++) {
        const TxnMeta *meta = g_ptr_array_index(coord->metas, i);
        if (i > 0)
            KSIM_ASSERT(strcmp(((const TxnMeta *)g_ptr_array_index(coord->metas, i - 1))->id,
                               meta->id) < 0);
        check_meta(coord, meta);
    }
    for (guint i = 0; i < coord->markers->len; i++) {
        const TxnMarker *marker = g_ptr_array_index(coord->markers, i);
        KSIM_ASSERT(state_is_prepare(marker->meta->current.state));
        KSIM_ASSERT(snapshot_has_partition(&marker->meta->current, &marker->tp));
    }
}
