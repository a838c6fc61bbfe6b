/*
 * producer: the Producer object, its node callbacks, send() and the
 * completion of records (see producer.h; the accumulator is
 * producer_accum.c, the sender producer_sender.c).
 *
 * Lifecycle of the process:
 *
 *   running ──sim_node_crash (producer_crash_cb: free the state, record
 *      ▲      nothing)──▶ down
 *      └──sim_node_restart (producer_restart_cb: a new state, bootstrap,
 *          a new producer id, listener started_cb)──┘
 *
 * Lifecycle of one send (producer_send):
 *   INVOKE ─▶ appended to a batch ─▶ ... ─▶ OK / FAIL / INFO (producer_complete_batch)
 *      └───▶ blocked (metadata or buffer.memory) ─▶ appended when possible
 *                                                └▶ FAIL after max.block.ms
 *
 * Invariants:
 *  1. `state` is NULL exactly while the node is down.
 *  2. Every op this incarnation invoked is in exactly one place: a batch (queued
 *     or in flight), the blocked queue, or completed (records_pending counts the
 *     first two).
 *  3. Blocked sends are in invocation order and their deadlines ascend.
 */
#include "producer.h"

#include "producer_internal.h"
#include "sim_assert.h"

#include <string.h>

/* The bound on process ids, so that (process << 40 | n) values stay unique. */
#define PROCESS_MAX (1u << 24)
/* Bounds one pass over the blocked queue. */
#define BLOCKED_PASS_MAX (1u << 24)

typedef enum {
    PLACE_OK = 0,
    PLACE_NO_METADATA, /* the topic or the explicit partition is not in the metadata */
    PLACE_NO_BUFFER,   /* buffer.memory cannot hold a new batch */
} PlaceStatus;

gboolean
producer_idempotent(const Producer *producer)
{
    return producer->config.enable_idempotence;
}

guint32
producer_partition_for_key(guint64 key, guint32 num_partitions)
{
    KSIM_ASSERT(key != 0);
    KSIM_ASSERT(num_partitions > 0);
    /* Kafka's StringSerializer on String.valueOf(key): the decimal digits. */
    char text[24];
    int len = g_snprintf(text, sizeof text, "%" G_GUINT64_FORMAT, key);
    KSIM_ASSERT(len > 0 && (gsize)len < sizeof text);
    return partitioner_partition_for_key((const guint8 *)text, (gsize)len, num_partitions);
}

/* ---- completions ---- */

/* Counts `n` records completed alike. */
static void
count_completed(ProducerState *state, HistoryType type, guint64 n)
{
    ProducerStats *stats = &state->producer->stats;
    KSIM_ASSERT(type != HISTORY_INVOKE);
    KSIM_ASSERT(state->records_pending >= n);
    state->records_pending -= n;
    if (type == HISTORY_OK)
        stats->records_ok += n;
    else if (type == HISTORY_FAIL)
        stats->records_failed += n;
    else
        stats->records_unknown += n;
}

/* Calls a completed record's callback, if it has one. */
static void
notify(ProducerState *state, ProducerSendCb send_cb, void *user_data, guint64 op, guint64 value,
       gint32 partition, HistoryType type, gint64 offset, KafkaError error)
{
    if (send_cb == NULL)
        return;
    ProducerResult result = {
        .op = op,
        .outcome = type,
        .error = type == HISTORY_OK ? KAFKA_ERROR_NONE : error,
        .partition = partition,
        .offset = offset,
        .value = value,
    };
    send_cb(state->producer, &result, user_data);
}

static void
complete_record(ProducerState *state, const ProducerThunk *thunk, guint64 value, gint32 partition,
                HistoryType type, gint64 offset, KafkaError error)
{
    Producer *producer = state->producer;
    KSIM_ASSERT(type != HISTORY_INVOKE);
    history_complete(producer->history, thunk->op, sim_now_ns(producer->world), type, partition,
                     offset, type == HISTORY_OK ? KAFKA_ERROR_NONE : error);
    count_completed(state, type, 1);
    notify(state, thunk->send_cb, thunk->user_data, thunk->op, value, partition, type, offset,
           error);
}

void
producer_complete_batch(ProducerState *state, ProducerBatch *batch, HistoryType type,
                        gint64 base_offset, KafkaError error)
{
    KSIM_ASSERT(!batch->in_flight);
    KSIM_ASSERT(type == HISTORY_OK || base_offset < 0);
    KSIM_ASSERT(type != HISTORY_INVOKE);
    /* A batch that fails before it was ever drained still holds its records
     * open; the callbacks below read them from batch->records. */
    producer_batch_close(batch);
    const PlogBatch *records = batch->records;
    gboolean sequenced = records->base_sequence >= 0 && state->pid_state == PRODUCER_ID_READY &&
                         records->producer_id == state->producer_id &&
                         records->producer_epoch == state->producer_epoch;
    if (type != HISTORY_OK && state->txn != NULL)
        producer_txn_batch_failed(state, error, sequenced);
    else if (type != HISTORY_OK && sequenced)
        producer_sender_reset_producer_id(state, error);
    Producer *producer = state->producer;
    gint64 now = sim_now_ns(producer->world);
    gint32 partition = batch->partition->tp.partition;
    KafkaError recorded = type == HISTORY_OK ? KAFKA_ERROR_NONE : error;
    const ProducerThunkRun *runs = (const ProducerThunkRun *)batch->thunks->data;
    guint n_runs = batch->thunks->len;
    /* The history first, a run at a time; then the callbacks, in record
     * order, as Kafka's ProducerBatch.done calls its thunks. */
    guint first = 0;
    for (guint r = 0; r < n_runs; r++) {
        history_complete_range(producer->history, runs[r].first_op, runs[r].count, now, type,
                               partition, base_offset >= 0 ? base_offset + first : -1, recorded);
        first += runs[r].count;
    }
    KSIM_ASSERT(first == (guint)records->record_count);
    count_completed(state, type, first);
    const PlogRecord *record = (const PlogRecord *)records->records->data;
    first = 0;
    for (guint r = 0; r < n_runs; r++) {
        for (guint32 i = 0; i < runs[r].count && runs[r].send_cb != NULL; i++) {
            guint index = first + i;
            notify(state, runs[r].send_cb, runs[r].user_data, runs[r].first_op + i,
                   record[index].value, partition, type,
                   base_offset >= 0 ? base_offset + index : -1, error);
        }
        first += runs[r].count;
    }
    producer_accum_release(state->accum, batch);
    if (!g_queue_is_empty(&state->blocked))
        producer_sender_wakeup(state);
}

/* ---- placing records ---- */

static ProducerTopic *
topic_of(ProducerState *state, const char *name)
{
    if (state->last_topic != NULL && strcmp(state->last_topic->name, name) == 0)
        return state->last_topic;
    state->last_topic = producer_accum_topic(state->accum, name, state->producer->history);
    return state->last_topic;
}

/* Refreshes the topic's cached partition count and available partitions
 * when the metadata changed since they were read. */
static void
topic_refresh_metadata(ProducerState *state, ProducerTopic *topic)
{
    guint64 version = producer_metadata_version(state->metadata);
    if (topic->metadata_version == version)
        return;
    topic->metadata_version = version;
    topic->partition_count = producer_metadata_partition_count(state->metadata, topic->name);
    topic->available = producer_metadata_available(state->metadata, topic->name);
    KSIM_ASSERT((topic->available != NULL) == (topic->partition_count > 0));
}

static guint32
sticky_partition(ProducerState *state, ProducerTopic *topic)
{
    const GArray *available = topic->available;
    if (topic->sticky_partition < 0)
        topic->sticky_partition =
            (gint32)partitioner_sticky_partition(state->sticky, topic->name, topic->partition_count,
                                                 (const guint32 *)available->data, available->len);
    return (guint32)topic->sticky_partition;
}

/* Kafka's abortOnNewBatch: a keyless record that would open a batch first
 * lets the sticky partitioner move on. */
static guint32
sticky_next(ProducerState *state, ProducerTopic *topic, guint32 previous)
{
    const GArray *available = topic->available;
    topic->sticky_partition = (gint32)partitioner_sticky_on_new_batch(
        state->sticky, topic->name, topic->partition_count, (const guint32 *)available->data,
        available->len, previous);
    return (guint32)topic->sticky_partition;
}

/* Chooses the partition of a record and checks that it can be appended now,
 * as Kafka's send() does before it would block. `chosen` carries a partition
 * already chosen for this record (or -1) and returns the choice; `room` says
 * whether the record fits that partition's open batch. */
static PlaceStatus
place(ProducerState *state, ProducerTopic *topic, gint32 *chosen, guint64 key, guint32 size_bytes,
      ProducerPartition **out, gboolean *room)
{
    topic_refresh_metadata(state, topic);
    guint32 count = topic->partition_count;
    if (count == 0 || (*chosen >= 0 && (guint32)*chosen >= count))
        return PLACE_NO_METADATA;
    gboolean sticky = FALSE;
    if (*chosen < 0 && key != 0) {
        *chosen = (gint32)producer_partition_for_key(key, count);
    } else if (*chosen < 0 && state->producer->config.partitioner == PRODUCER_PARTITIONER_STICKY) {
        sticky = TRUE;
        *chosen = (gint32)sticky_partition(state, topic);
    } else if (*chosen < 0) {
        *chosen = (gint32)partitioner_round_robin_partition(state->round_robin, topic->name, count,
                                                            (const guint32 *)topic->available->data,
                                                            topic->available->len);
    }
    *out = producer_accum_partition(state->accum, topic, *chosen);
    *room = producer_accum_has_room(state->accum, *out, size_bytes);
    if (*room)
        return PLACE_OK;
    if (sticky) {
        *chosen = (gint32)sticky_next(state, topic, (guint32)*chosen);
        *out = producer_accum_partition(state->accum, topic, *chosen);
        *room = producer_accum_has_room(state->accum, *out, size_bytes);
        if (*room)
            return PLACE_OK;
    }
    return producer_accum_can_allocate(state->accum, size_bytes) ? PLACE_OK : PLACE_NO_BUFFER;
}

/* Appends a placed record; `room`: it fits the partition's open batch. */
static void
append_record(ProducerState *state, ProducerPartition *partition, gboolean room, guint64 key,
              guint64 value, guint32 size_bytes, const ProducerThunk *thunk)
{
    Producer *producer = state->producer;
    gboolean ready = producer_accum_append(state->accum, partition, room, key, value, size_bytes,
                                           thunk, sim_now_ns(producer->world));
    if (!room)
        producer->stats.batches_created++;
    if (state->txn != NULL)
        producer_txn_partition_used(state, partition);
    /* A new batch may need a linger timer, a full one a drain. */
    if (ready || !room)
        producer_sender_wakeup(state);
}

static void
fail_blocked(ProducerState *state, ProducerBlocked *blocked)
{
    ProducerThunk thunk = {blocked->op, blocked->send_cb, blocked->user_data};
    complete_record(state, &thunk, blocked->value, blocked->partition, HISTORY_FAIL, -1,
                    blocked->waiting_for);
    g_free(blocked);
}

/* Tries the first blocked send; TRUE when it left the queue. */
static gboolean
unblock_one(ProducerState *state, ProducerBlocked *blocked, gint64 now)
{
    ProducerPartition *partition = NULL;
    gboolean room = FALSE;
    PlaceStatus status = place(state, topic_of(state, blocked->topic), &blocked->partition,
                               blocked->key, blocked->size_bytes, &partition, &room);
    if (status == PLACE_OK) {
        g_queue_pop_head(&state->blocked);
        ProducerThunk thunk = {blocked->op, blocked->send_cb, blocked->user_data};
        append_record(state, partition, room, blocked->key, blocked->value, blocked->size_bytes,
                      &thunk);
        g_free(blocked);
        return TRUE;
    }
    if (status == PLACE_NO_METADATA) {
        blocked->waiting_for = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
        producer_sender_request_metadata(state);
    } else {
        blocked->waiting_for = KAFKA_ERROR_CLIENT_BUFFER_EXHAUSTED;
    }
    if (now < blocked->deadline_ns) {
        producer_sender_wake_at(state, blocked->deadline_ns);
        return FALSE;
    }
    g_queue_pop_head(&state->blocked);
    fail_blocked(state, blocked);
    return TRUE;
}

void
producer_process_blocked(ProducerState *state)
{
    if (g_queue_is_empty(&state->blocked))
        return;
    gint64 now = sim_now_ns(state->producer->world);
    guint passes = 0;
    ProducerBlocked *blocked;
    while ((blocked = g_queue_peek_head(&state->blocked)) != NULL) {
        KSIM_ASSERT(++passes < BLOCKED_PASS_MAX);
        if (!unblock_one(state, blocked, now))
            return;
    }
    const ProducerListener *listener = &state->producer->listener;
    if (listener->unblocked_cb != NULL)
        listener->unblocked_cb(state->producer, listener->user_data);
}

/* ---- send ---- */

static guint64
invoke(ProducerState *state, const ProducerTopic *topic, gint32 partition, guint64 key,
       guint64 value)
{
    Producer *producer = state->producer;
    producer->stats.records_sent++;
    state->records_pending++;
    guint64 op = history_invoke(producer->history, sim_now_ns(producer->world), HISTORY_FN_SEND,
                                producer->process, topic->history_topic, partition, key, value);
    if (state->txn != NULL)
        producer_txn_note_op(state, op);
    return op;
}

static gboolean
too_large(const Producer *producer, guint32 size_bytes)
{
    gint64 bytes = PLOG_BATCH_OVERHEAD_BYTES + (gint64)size_bytes;
    return bytes > producer->config.max_request_size || bytes > producer->config.buffer_memory;
}

static guint64
send_blocked(ProducerState *state, const char *topic, gint32 partition, guint64 key, guint64 value,
             guint32 size_bytes, ProducerSendCb send_cb, void *user_data, PlaceStatus status)
{
    Producer *producer = state->producer;
    ProducerBlocked *blocked = g_new0(ProducerBlocked, 1);
    blocked->op = invoke(state, topic_of(state, topic), partition, key, value);
    g_strlcpy(blocked->topic, topic, sizeof blocked->topic);
    blocked->partition = partition;
    blocked->key = key;
    blocked->value = value;
    blocked->size_bytes = size_bytes;
    blocked->send_cb = send_cb;
    blocked->user_data = user_data;
    blocked->deadline_ns =
        sim_now_ns(producer->world) + producer->config.max_block_ms * SIM_NS_PER_MS;
    blocked->waiting_for = status == PLACE_NO_METADATA ? KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION
                                                       : KAFKA_ERROR_CLIENT_BUFFER_EXHAUSTED;
    g_queue_push_tail(&state->blocked, blocked);
    if (status == PLACE_NO_METADATA)
        producer_sender_request_metadata(state);
    producer_sender_wakeup(state);
    return blocked->op;
}

guint64
producer_send(Producer *producer, const char *topic_name, gint32 partition, guint64 key,
              guint64 value, guint32 size_bytes, ProducerSendCb send_cb, void *user_data)
{
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(partition >= -1);
    ProducerTopic *topic = topic_of(state, topic_name);
    /* A transactional producer sends only inside a transaction (Kafka's
     * IllegalStateException, or the transaction's error). */
    KafkaError refused = state->txn != NULL ? producer_txn_check_send(state) : KAFKA_ERROR_NONE;
    if (refused == KAFKA_ERROR_NONE && too_large(producer, size_bytes))
        refused = KAFKA_ERROR_INVALID_REQUEST; /* Kafka's RecordTooLargeException */
    if (refused != KAFKA_ERROR_NONE) {
        ProducerThunk thunk = {invoke(state, topic, partition, key, value), send_cb, user_data};
        complete_record(state, &thunk, value, partition, HISTORY_FAIL, -1, refused);
        return thunk.op;
    }
    PlaceStatus status = PLACE_NO_BUFFER;
    gint32 chosen = partition;
    ProducerPartition *target = NULL;
    gboolean room = FALSE;
    if (state->blocked.length == 0) /* GQueue's public field: a send per record */
        status = place(state, topic, &chosen, key, size_bytes, &target, &room);
    if (status != PLACE_OK)
        return send_blocked(state, topic_name, chosen, key, value, size_bytes, send_cb, user_data,
                            status);
    ProducerThunk thunk = {invoke(state, topic, chosen, key, value), send_cb, user_data};
    append_record(state, target, room, key, value, size_bytes, &thunk);
    return thunk.op;
}

/* ---- node callbacks ---- */

static void
producer_message_cb(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Producer *producer = ctx;
    (void)world;
    KSIM_ASSERT(producer->state != NULL);
    producer_sender_handle_message(producer->state, from, msg);
    sim_msg_free(msg);
    producer_sender_run(producer->state);
}

static void
producer_disconnect_cb(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Producer *producer = ctx;
    (void)world;
    (void)reason;
    KSIM_ASSERT(producer->state != NULL);
    producer_sender_handle_disconnect(producer->state, peer);
    producer_sender_run(producer->state);
}

static void
producer_crash_cb(SimWorld *world, void *ctx)
{
    Producer *producer = ctx;
    (void)world;
    KSIM_ASSERT(producer->state != NULL);
    /* Memory is gone; a dead client records nothing. */
    producer_state_free(producer->state);
    producer->state = NULL;
}

static void
producer_restart_cb(SimWorld *world, void *ctx)
{
    Producer *producer = ctx;
    (void)world;
    KSIM_ASSERT(producer->state == NULL);
    producer->incarnation++;
    producer->state = producer_state_new(producer);
    producer_sender_wakeup(producer->state);
    if (producer->listener.started_cb != NULL)
        producer->listener.started_cb(producer, producer->listener.user_data);
}

static const SimNodeOps PRODUCER_OPS = {
    producer_message_cb,
    producer_disconnect_cb,
    producer_crash_cb,
    producer_restart_cb,
};

/* ---- the object ---- */

Producer *
producer_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
             const ProducerConfig *config, History *history)
{
    KSIM_ASSERT(history != NULL);
    KSIM_ASSERT(process < PROCESS_MAX);
    KSIM_ASSERT(bootstrap != NULL && bootstrap->len > 0);
    KSIM_ASSERT(producer_config_validate(config, NULL));
    Producer *producer = g_new0(Producer, 1);
    producer->world = world;
    producer->name = g_strdup(name);
    producer->process = process;
    producer_config_resolve(config, &producer->config);
    producer->bootstrap = g_array_copy((GArray *)bootstrap);
    producer->history = history;
    producer->attempt_errors = g_hash_table_new(g_direct_hash, g_direct_equal);
    producer->txn_log = g_ptr_array_new();
    g_autofree char *stream = g_strdup_printf("producer/%s", name);
    producer->rng = sim_world_rng(world, stream);
    producer->node = sim_node_add(world, name, &PRODUCER_OPS, producer);
    history_set_process_name(history, process, name);
    producer->state = producer_state_new(producer);
    producer_sender_wakeup(producer->state);
    return producer;
}

void
producer_free(Producer *producer)
{
    if (producer == NULL)
        return;
    producer_state_free(producer->state);
    g_hash_table_destroy(producer->attempt_errors);
    producer_txn_log_free(producer->txn_log);
    g_array_free(producer->bootstrap, TRUE);
    g_free(producer->name);
    g_free(producer);
}

SimNodeId
producer_node(const Producer *producer)
{
    return producer->node;
}

guint32
producer_process(const Producer *producer)
{
    return producer->process;
}

const ProducerConfig *
producer_config(const Producer *producer)
{
    return &producer->config;
}

gboolean
producer_running(const Producer *producer)
{
    return producer->state != NULL;
}

void
producer_set_listener(Producer *producer, const ProducerListener *listener)
{
    KSIM_ASSERT(listener != NULL);
    producer->listener = *listener;
}

gboolean
producer_blocked(const Producer *producer)
{
    return producer->state != NULL && !g_queue_is_empty(&producer->state->blocked);
}

guint64
producer_pending(const Producer *producer)
{
    return producer->state != NULL ? producer->state->records_pending : 0;
}

gint64
producer_id(const Producer *producer)
{
    return producer->state != NULL ? producer->state->producer_id : PLOG_NO_PRODUCER_ID;
}

gint16
producer_epoch(const Producer *producer)
{
    return producer->state != NULL ? producer->state->producer_epoch : PLOG_NO_PRODUCER_EPOCH;
}

void
producer_stats(const Producer *producer, ProducerStats *out)
{
    *out = producer->stats;
}

guint64
producer_attempt_errors(const Producer *producer, KafkaError error)
{
    gpointer count = g_hash_table_lookup(producer->attempt_errors, GINT_TO_POINTER(error));
    return GPOINTER_TO_SIZE(count);
}

void
producer_count_attempt_error(Producer *producer, KafkaError error)
{
    KSIM_ASSERT(error != KAFKA_ERROR_NONE);
    gpointer key = GINT_TO_POINTER(error);
    gsize count = GPOINTER_TO_SIZE(g_hash_table_lookup(producer->attempt_errors, key));
    g_hash_table_insert(producer->attempt_errors, key, GSIZE_TO_POINTER(count + 1));
}

void
producer_check_invariants(const Producer *producer)
{
    SimNodeState node_state = sim_node_state(producer->world, producer->node);
    KSIM_ASSERT((producer->state == NULL) == (node_state == SIM_NODE_DOWN));
    const ProducerStats *stats = &producer->stats;
    KSIM_ASSERT(stats->records_ok + stats->records_failed + stats->records_unknown <=
                stats->records_sent);
    if (producer->state == NULL)
        return;
    const ProducerState *state = producer->state;
    gint64 previous_deadline = G_MININT64;
    for (GList *l = state->blocked.head; l != NULL; l = l->next) {
        const ProducerBlocked *blocked = l->data;
        KSIM_ASSERT(blocked->deadline_ns >= previous_deadline);
        previous_deadline = blocked->deadline_ns;
    }
    producer_sender_check_invariants(state);
    producer_txn_check_invariants(state);
}
