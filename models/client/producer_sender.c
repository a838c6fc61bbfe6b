/*
 * producer_sender: Kafka's Sender thread as events on the producer's node —
 * metadata refreshes, the idempotent producer's id, draining ready batches to
 * partition leaders, responses, retries, request and delivery timeouts.
 *
 * The loop (producer_sender_run) runs at the end of every message, disconnect
 * and timer of the node, and on wakeups from send(); each pass:
 *   1. places blocked sends that can proceed (producer_process_blocked);
 *   2. expires batches past delivery.timeout.ms, queued or in flight;
 *   3. asks for a producer id when it needs one (idempotence);
 *   4. drains ready batches, one per partition per round, rotating the first
 *      partition so that none starves;
 *   5. asks for metadata when it is needed or older than metadata.max.age.ms;
 *   6. arms one poll timer at the earliest time something changes (linger,
 *      backoff, a deadline) — every pass recomputes it.
 *
 * A produce attempt's fate:
 *   response OK (or a duplicate answered as OK) ──▶ complete OK
 *   response error, retriable, retries and time left ──▶ re-enqueue (backoff)
 *   response error otherwise ──▶ complete FAIL, or INFO when an attempt may
 *                                 have been written
 *   request.timeout.ms ──▶ close the connection: every request on it fails as
 *                          REQUEST_TIMED_OUT (Kafka), possibly written
 *   disconnect ──▶ every request on it fails as NETWORK_EXCEPTION, possibly written
 *
 * Idempotence. Sequence numbers are per partition, assigned when a batch is
 * first drained and kept across retries; a batch that holds a sequence is
 * re-enqueued in sequence order and sent again only when nothing else of its
 * partition is in flight, so retries cannot overtake each other.
 * OUT_OF_ORDER_SEQUENCE_NUMBER for a batch whose sequence lies beyond the one
 * after the last acknowledged means an earlier batch is unresolved:
 * retriable (as Kafka's TransactionManager.canRetry); for the next batch, or
 * an older one, it is fatal. A batch holding a sequence of the current
 * producer id that ends without success — a fatal sequence error,
 * INVALID_PRODUCER_EPOCH, UNKNOWN_PRODUCER_ID, out of retries, or expired —
 * leaves a gap the broker would refuse forever, so the producer gets a new
 * producer id (InitProducerId; Kafka bumps the epoch, our brokers hand out a
 * fresh id with epoch 0, which the log accepts at any sequence). The other
 * batches holding a sequence of the old id: one that may have been written
 * fails (INFO), never re-sent under the new id where the broker could not
 * recognise it; one that certainly was not is sent again as a new batch
 * (resequence_queued) — unless its attempt fails only once the new id is in
 * use, when batches of the new id may have overtaken it: then it fails.
 *
 * A response that overtakes an older request on its connection means the
 * network lost messages there (a fault TCP would turn into a reset): the
 * producer closes the connection, failing the requests on it as above.
 *
 * The idempotent producer's id (pid_state; NONE throughout without
 * idempotence, and a transactional producer's id is producer_txn.c's):
 *   NEEDED ──maybe_request_producer_id──▶ REQUESTING
 *   REQUESTING ──handle_pid_response, no error──▶ READY
 *   REQUESTING ──an error, a timeout or a broken connection
 *                (pid_request_failed)──▶ NEEDED, after retry.backoff.ms
 *   READY ──a sequence gap (producer_sender_reset_producer_id)──▶ NEEDED
 *
 * Invariants (producer_sender_check_invariants):
 *  1. A connection has at most max.in.flight.requests.per.connection flights.
 *  2. A partition's in_flight counts the flights that carry one of its batches.
 *  3. buffer.memory in use equals the batches' allocations, queued or in flight.
 *  4. records_pending = records in batches + blocked sends.
 *  5. pid_state is NONE exactly without idempotence; READY exactly when a
 *     producer id is held.
 *  6. At most one Metadata and one InitProducerId request are in flight.
 */
#include "producer_internal.h"

#include "sim_assert.h"
#include "sim_net.h"

/* Bounds the drain rounds of one pass: each round drains at least one batch. */
#define DRAIN_ROUNDS_MAX (1u << 20)
/* Reconnect backoff doubles at most this many times. */
#define RECONNECT_DOUBLINGS_MAX 30

typedef struct {
    ProducerBatch *batch;
    HistoryType type;
    KafkaError error;
} Deferred;

static gint64
ms_to_ns(gint64 ms)
{
    return ms * SIM_NS_PER_MS;
}

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

static void
send_message(ProducerState *state, SimNodeId to, SimMsg *msg)
{
    Producer *producer = state->producer;
    sim_net_send(sim_world_net(producer->world), producer->node, to, msg);
}

void
producer_sender_send_message(ProducerState *state, SimNodeId to, SimMsg *msg)
{
    send_message(state, to, msg);
}

/* ---- state ---- */

static void
connection_free(gpointer data)
{
    ProducerConnection *conn = data;
    KSIM_ASSERT(g_queue_is_empty(&conn->flights));
    g_free(conn);
}

static gint
flight_deadline_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const ProducerFlight *x = a;
    const ProducerFlight *y = b;
    (void)user_data;
    if (x->batch->deadline_ns != y->batch->deadline_ns)
        return x->batch->deadline_ns < y->batch->deadline_ns ? -1 : 1;
    return x->serial < y->serial ? -1 : (x->serial > y->serial);
}

ProducerState *
producer_state_new(Producer *producer)
{
    ProducerState *state = g_new0(ProducerState, 1);
    state->producer = producer;
    state->metadata = producer_metadata_new();
    state->accum = producer_accum_new(&producer->config);
    state->sticky = partitioner_sticky_new(producer->rng);
    state->round_robin = partitioner_round_robin_new();
    g_queue_init(&state->blocked);
    state->connections = g_ptr_array_new_with_free_func(connection_free);
    state->connection_of_node = g_ptr_array_new();
    state->flight_deadlines = g_tree_new_full(flight_deadline_compare, NULL, NULL, NULL);
    state->correlation_next = 1;
    state->metadata_needed = TRUE;
    state->metadata_attempt_ns = G_MININT64;
    state->pid_state = producer_idempotent(producer) ? PRODUCER_ID_NEEDED : PRODUCER_ID_NONE;
    state->producer_id = PLOG_NO_PRODUCER_ID;
    state->producer_epoch = PLOG_NO_PRODUCER_EPOCH;
    state->poll_ns = G_MAXINT64;
    if (producer_transactional(producer))
        state->txn = producer_txn_new(state);
    return state;
}

void
producer_state_free(ProducerState *state)
{
    if (state == NULL)
        return;
    SimWorld *world = state->producer->world;
    for (guint i = 0; i < state->connections->len; i++) {
        ProducerConnection *conn = g_ptr_array_index(state->connections, i);
        ProducerFlight *flight;
        while ((flight = g_queue_pop_head(&conn->flights)) != NULL) {
            sim_timer_cancel(world, flight->timeout_timer);
            if (flight->batch != NULL) {
                flight->batch->in_flight = FALSE;
                producer_accum_release(state->accum, flight->batch);
            }
            g_free(flight);
        }
    }
    sim_timer_cancel(world, state->metadata_timer);
    sim_timer_cancel(world, state->pid_timer);
    sim_timer_cancel(world, state->poll_timer);
    g_queue_clear_full(&state->blocked, g_free);
    g_ptr_array_free(state->connections, TRUE);
    g_ptr_array_free(state->connection_of_node, TRUE);
    g_tree_destroy(state->flight_deadlines);
    producer_accum_free(state->accum);
    partitioner_sticky_free(state->sticky);
    partitioner_round_robin_free(state->round_robin);
    producer_metadata_free(state->metadata);
    producer_txn_free(state->txn);
    g_free(state);
}

/* ---- scheduling ---- */

void
producer_sender_wake_at(ProducerState *state, gint64 time_ns)
{
    state->wake_ns = MIN(state->wake_ns, time_ns);
}

static void
wakeup_fired(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)world;
    (void)arg;
    KSIM_ASSERT(producer->state != NULL);
    producer->state->wakeup_pending = FALSE;
    producer_sender_run(producer->state);
}

void
producer_sender_wakeup(ProducerState *state)
{
    if (state->wakeup_pending)
        return;
    state->wakeup_pending = TRUE;
    sim_timer_set(state->producer->world, state->producer->node, 0, wakeup_fired, NULL);
}

static void
poll_fired(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)world;
    (void)arg;
    KSIM_ASSERT(producer->state != NULL);
    producer->state->poll_ns = G_MAXINT64;
    producer->state->poll_timer = SIM_EVENT_ID_NONE;
    producer_sender_run(producer->state);
}

/* Arms the poll timer for the earliest deadline of this pass. A timer that
 * would fire earlier is kept: it runs a pass that arms the next one. */
static void
schedule_poll(ProducerState *state)
{
    gint64 now = now_of(state);
    if (state->wake_ns == G_MAXINT64 || state->poll_ns <= state->wake_ns)
        return;
    KSIM_ASSERT(state->wake_ns > now);
    SimWorld *world = state->producer->world;
    sim_timer_cancel(world, state->poll_timer);
    state->poll_timer =
        sim_timer_set(world, state->producer->node, state->wake_ns - now, poll_fired, NULL);
    state->poll_ns = state->wake_ns;
}

/* ---- connections and nodes ---- */

static ProducerConnection *
connection_find(const ProducerState *state, SimNodeId node)
{
    if (node >= state->connection_of_node->len)
        return NULL;
    return g_ptr_array_index(state->connection_of_node, node);
}

static ProducerConnection *
connection_get(ProducerState *state, SimNodeId node)
{
    ProducerConnection *conn = connection_find(state, node);
    if (conn != NULL)
        return conn;
    KSIM_ASSERT(node != SIM_NODE_NONE);
    conn = g_new0(ProducerConnection, 1);
    conn->node = node;
    g_queue_init(&conn->flights);
    g_ptr_array_add(state->connections, conn);
    if (node >= state->connection_of_node->len)
        g_ptr_array_set_size(state->connection_of_node, (gint)node + 1);
    state->connection_of_node->pdata[node] = conn;
    return conn;
}

/* FALSE while the node is in its reconnect backoff (and wakes the sender when
 * it ends). */
static gboolean
node_usable(ProducerState *state, SimNodeId node, gint64 now)
{
    const ProducerConnection *conn = connection_find(state, node);
    if (conn == NULL || now >= conn->blackout_until_ns)
        return TRUE;
    producer_sender_wake_at(state, conn->blackout_until_ns);
    return FALSE;
}

/* Kafka's leastLoadedNode: among the brokers the metadata knows (or the
 * bootstrap list before the first answer), the usable one with the fewest
 * requests in flight, starting from a rotating position. */
static SimNodeId
least_loaded_node(ProducerState *state, gint64 now)
{
    const GArray *brokers = producer_metadata_brokers(state->metadata);
    const GArray *bootstrap = state->producer->bootstrap;
    guint n = brokers->len > 0 ? brokers->len : bootstrap->len;
    SimNodeId best = SIM_NODE_NONE;
    guint best_load = G_MAXUINT;
    for (guint i = 0; i < n && best_load > 0; i++) {
        guint index = (state->node_next + i) % n;
        SimNodeId node = brokers->len > 0 ? g_array_index(brokers, KBrokerEndpoint, index).node
                                          : g_array_index(bootstrap, SimNodeId, index);
        if (!node_usable(state, node, now))
            continue;
        const ProducerConnection *conn = connection_find(state, node);
        guint load = conn != NULL ? conn->flights.length : 0;
        if (load < best_load) {
            best = node;
            best_load = load;
        }
    }
    state->node_next++;
    return best;
}

SimNodeId
producer_sender_least_loaded_node(ProducerState *state, gint64 now)
{
    return least_loaded_node(state, now);
}

/* ---- metadata ---- */

/* Kafka's socket.connection.setup.timeout.ms default. */
#define PRODUCER_CONNECTION_SETUP_TIMEOUT_MS 10000

void
producer_sender_request_metadata(ProducerState *state)
{
    state->metadata_needed = TRUE;
}

static void metadata_timed_out(SimWorld *world, void *ctx, void *arg);
static void connection_answered(ProducerState *state, SimNodeId from);

static void
maybe_request_metadata(ProducerState *state, gint64 now)
{
    const ProducerConfig *config = config_of(state);
    gint64 refreshed = producer_metadata_refreshed_ns(state->metadata);
    if (refreshed != G_MININT64) {
        gint64 stale_ns = refreshed + ms_to_ns(config->metadata_max_age_ms);
        if (now >= stale_ns)
            state->metadata_needed = TRUE;
        else
            producer_sender_wake_at(state, stale_ns);
    }
    if (!state->metadata_needed || state->metadata_correlation != 0)
        return;
    if (state->metadata_attempt_ns != G_MININT64) {
        gint64 due_ns = state->metadata_attempt_ns + ms_to_ns(config->retry_backoff_ms);
        if (now < due_ns) {
            producer_sender_wake_at(state, due_ns);
            return;
        }
    }
    SimNodeId node = least_loaded_node(state, now);
    if (node == SIM_NODE_NONE)
        return;
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = state->correlation_next++;
    /* The topics it was asked to send to, as Kafka's ProducerMetadata asks
     * about the topics in its set. Before its first send it asks about
     * every topic: this producer looks the cluster up as it starts, where
     * Kafka's waits for the first send, and knows the topics it may be
     * asked to send to from then on. */
    const GPtrArray *topics = producer_accum_topics(state->accum);
    for (guint i = 0; i < topics->len; i++)
        kproto_metadata_request_add_topic(request,
                                          ((const ProducerTopic *)g_ptr_array_index(topics, i))->name);
    state->metadata_correlation = request->correlation_id;
    state->metadata_node = node;
    state->metadata_attempt_ns = now;
    state->producer->stats.metadata_requests++;
    /* Metadata goes to the least loaded node, often over a fresh
     * connection; Kafka gives up on a connection that is not set up within
     * socket.connection.setup.timeout.ms (10 s) and tries another node, so a
     * metadata request to a host that just died costs at most that. */
    gint64 timeout_ms = MIN(config->request_timeout_ms, PRODUCER_CONNECTION_SETUP_TIMEOUT_MS);
    state->metadata_timer = sim_timer_set(state->producer->world, state->producer->node,
                                          ms_to_ns(timeout_ms), metadata_timed_out, NULL);
    send_message(state, node, &request->base);
}

static void
handle_metadata_response(ProducerState *state, SimNodeId from, const KMetadataResponse *response)
{
    if (response->correlation_id != state->metadata_correlation)
        return;
    KSIM_ASSERT(from == state->metadata_node);
    sim_timer_cancel(state->producer->world, state->metadata_timer);
    state->metadata_correlation = 0;
    state->metadata_needed = FALSE;
    producer_metadata_update(state->metadata, response, now_of(state));
    ProducerConnection *conn = connection_find(state, from);
    if (conn != NULL)
        conn->failures = 0;
}

/* ---- the producer id ---- */

static void pid_timed_out(SimWorld *world, void *ctx, void *arg);

void
producer_sender_reset_producer_id(ProducerState *state, KafkaError error)
{
    KSIM_ASSERT(state->pid_state != PRODUCER_ID_NONE);
    /* A transactional producer keeps its id: the transaction becomes
     * abortable and its abort bumps the epoch (producer_txn.c). */
    if (state->pid_state != PRODUCER_ID_READY || state->txn != NULL)
        return;
    state->pid_state = PRODUCER_ID_NEEDED;
    state->producer_id = PLOG_NO_PRODUCER_ID;
    state->producer_epoch = PLOG_NO_PRODUCER_EPOCH;
    state->pid_reset_error = error;
    state->pid_retry_ns = now_of(state);
    state->producer->stats.producer_id_resets++;
    producer_sender_wakeup(state);
}

static void
maybe_request_producer_id(ProducerState *state, gint64 now)
{
    /* A transactional producer's id comes from its transaction coordinator
     * (producer_init_transactions). */
    if (state->pid_state != PRODUCER_ID_NEEDED || state->txn != NULL)
        return;
    if (now < state->pid_retry_ns) {
        producer_sender_wake_at(state, state->pid_retry_ns);
        return;
    }
    SimNodeId node = least_loaded_node(state, now);
    if (node == SIM_NODE_NONE)
        return;
    KInitProducerIdMessage *request = kproto_new(KMSG_INIT_PRODUCER_ID_REQUEST);
    request->correlation_id = state->correlation_next++;
    state->pid_state = PRODUCER_ID_REQUESTING;
    state->pid_correlation = request->correlation_id;
    state->pid_node = node;
    state->producer->stats.producer_id_requests++;
    state->pid_timer =
        sim_timer_set(state->producer->world, state->producer->node,
                      ms_to_ns(config_of(state)->request_timeout_ms), pid_timed_out, NULL);
    send_message(state, node, &request->base);
}

static void
pid_request_failed(ProducerState *state, gint64 now)
{
    KSIM_ASSERT(state->pid_state == PRODUCER_ID_REQUESTING);
    sim_timer_cancel(state->producer->world, state->pid_timer);
    state->pid_state = PRODUCER_ID_NEEDED;
    state->pid_correlation = 0;
    state->pid_retry_ns = now + ms_to_ns(config_of(state)->retry_backoff_ms);
}

/* After a reset, the queued batches that hold a sequence of an old producer
 * id: one that may have been written fails (INFO: re-sending it under a new
 * id could write it twice); one that certainly was not loses its sequence
 * and goes out again as new, under the new id (Kafka's
 * startSequencesAtBeginning). Sequenced batches lead their queues, so the
 * queues stay in order. */
static void
resequence_queued(ProducerState *state)
{
    g_autoptr(GPtrArray) failed = g_ptr_array_new();
    const GPtrArray *partitions = producer_accum_partitions(state->accum);
    for (guint i = 0; i < partitions->len; i++) {
        ProducerPartition *partition = g_ptr_array_index(partitions, i);
        GList *link = partition->batches.head;
        while (link != NULL && ((ProducerBatch *)link->data)->records->base_sequence >= 0) {
            GList *next = link->next;
            ProducerBatch *batch = link->data;
            if (batch->maybe_written) {
                g_queue_delete_link(&partition->batches, link);
                g_ptr_array_add(failed, batch);
            } else {
                batch->records->base_sequence = PLOG_NO_SEQUENCE;
                batch->records->producer_id = PLOG_NO_PRODUCER_ID;
                batch->records->producer_epoch = PLOG_NO_PRODUCER_EPOCH;
            }
            link = next;
        }
        producer_accum_head_changed(state->accum, partition);
    }
    /* Completions run callbacks that may send: not while walking partitions. */
    for (guint i = 0; i < failed->len; i++)
        producer_complete_batch(state, g_ptr_array_index(failed, i), HISTORY_INFO, -1,
                                state->pid_reset_error);
}

static void
handle_pid_response(ProducerState *state, const KInitProducerIdMessage *response)
{
    if (state->pid_state != PRODUCER_ID_REQUESTING ||
        response->correlation_id != state->pid_correlation)
        return;
    if (response->error != KAFKA_ERROR_NONE || response->producer_id < 0) {
        pid_request_failed(state, now_of(state));
        return;
    }
    sim_timer_cancel(state->producer->world, state->pid_timer);
    state->pid_correlation = 0;
    state->pid_state = PRODUCER_ID_READY;
    state->producer_id = response->producer_id;
    state->producer_epoch = response->producer_epoch;
    resequence_queued(state);
}

/* ---- completing attempts ---- */

static void connection_failed(ProducerState *state, ProducerConnection *conn, KafkaError error,
                              gboolean close);

static gboolean
batch_is_stale(const ProducerState *state, const ProducerBatch *batch)
{
    return batch->records->base_sequence >= 0 &&
           (state->pid_state != PRODUCER_ID_READY ||
            batch->records->producer_id != state->producer_id ||
            batch->records->producer_epoch != state->producer_epoch);
}

/* Errors after which Kafka refreshes metadata (InvalidMetadataException). */
static gboolean
invalidates_metadata(KafkaError error)
{
    switch (error) {
    case KAFKA_ERROR_NOT_LEADER_OR_FOLLOWER:
    case KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION:
    case KAFKA_ERROR_LEADER_NOT_AVAILABLE:
    case KAFKA_ERROR_FENCED_LEADER_EPOCH:
    case KAFKA_ERROR_UNKNOWN_LEADER_EPOCH:
    case KAFKA_ERROR_KAFKA_STORAGE_ERROR:
    case KAFKA_ERROR_NETWORK_EXCEPTION:
    case KAFKA_ERROR_CLIENT_DISCONNECTED:
        return TRUE;
    default:
        return FALSE;
    }
}

/* Kafka's Sender.canRetry and TransactionManager.canRetry. */
static gboolean
can_retry(const ProducerState *state, const ProducerBatch *batch, KafkaError error, gint64 now)
{
    if (batch->retries >= config_of(state)->retries || now >= batch->deadline_ns)
        return FALSE;
    /* A batch of an old producer id may wait for resequence_queued while the
     * new id is being obtained; once it is in use, retrying would reorder. */
    if (batch_is_stale(state, batch))
        return state->pid_state != PRODUCER_ID_READY &&
               (kafka_error_is_retriable(error) ||
                error == KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    gint32 sequence = batch->records->base_sequence;
    if (error == KAFKA_ERROR_OUT_OF_ORDER_SEQUENCE_NUMBER && sequence >= 0) {
        /* A gap behind an earlier unresolved batch may yet be filled by it. */
        return sequence > batch->partition->last_acked_sequence + 1;
    }
    return kafka_error_is_retriable(error);
}

/* An attempt of `batch` (no longer in flight nor queued) failed with `error`. */
static void
attempt_failed(ProducerState *state, ProducerBatch *batch, KafkaError error, gint64 now)
{
    KSIM_ASSERT(!batch->in_flight);
    producer_count_attempt_error(state->producer, error);
    if (invalidates_metadata(error))
        state->metadata_needed = TRUE;
    /* The broker may have appended before answering these. */
    if (error == KAFKA_ERROR_REQUEST_TIMED_OUT ||
        error == KAFKA_ERROR_NOT_ENOUGH_REPLICAS_AFTER_APPEND)
        batch->maybe_written = TRUE;
    if (can_retry(state, batch, error, now)) {
        producer_accum_reenqueue(state->accum, batch, now, producer_idempotent(state->producer));
        state->producer->stats.retries++;
        if (state->producer->history != NULL)
            history_metric(state->producer->history, now, HISTORY_METRIC_RETRY,
                           (gint32)state->producer->process,
                           (guint32)batch->records->record_count, 0);
        return;
    }
    producer_complete_batch(state, batch, batch->maybe_written ? HISTORY_INFO : HISTORY_FAIL, -1,
                            error);
}

static void
attempt_succeeded(ProducerState *state, ProducerBatch *batch, gint64 base_offset)
{
    ProducerPartition *partition = batch->partition;
    const PlogBatch *records = batch->records;
    if (records->base_sequence >= 0 && !batch_is_stale(state, batch)) {
        gint32 last = plog_batch_last_sequence(records);
        if (last > partition->last_acked_sequence)
            partition->last_acked_sequence = last;
    }
    producer_complete_batch(state, batch, HISTORY_OK, base_offset, KAFKA_ERROR_NONE);
}

static ProducerBatch *
flight_finish(ProducerState *state, ProducerFlight *flight)
{
    sim_timer_cancel(state->producer->world, flight->timeout_timer);
    ProducerBatch *batch = flight->batch;
    if (batch != NULL)
        g_tree_remove(state->flight_deadlines, flight);
    g_free(flight);
    if (batch != NULL) {
        KSIM_ASSERT(batch->in_flight);
        KSIM_ASSERT(batch->partition->in_flight > 0);
        batch->in_flight = FALSE;
        batch->partition->in_flight--;
    }
    return batch;
}

static void
handle_produce_response(ProducerState *state, SimNodeId from, const KProduceResponse *response)
{
    ProducerConnection *conn = connection_find(state, from);
    if (conn == NULL)
        return;
    GList *link = conn->flights.head;
    while (link != NULL &&
           ((ProducerFlight *)link->data)->correlation_id != response->correlation_id)
        link = link->next;
    if (link == NULL)
        return;
    /* Over TCP answers come in request order. One that overtakes an older
     * request means the network lost messages in between (an injected
     * fault): the client treats the stream as broken, as Kafka's
     * NetworkClient does on a correlation mismatch, and reconnects. */
    gboolean overtaken = link != conn->flights.head;
    ProducerFlight *flight = link->data;
    g_queue_delete_link(&conn->flights, link);
    conn->failures = 0;
    ProducerBatch *batch = flight_finish(state, flight);
    if (batch != NULL && (response->error == KAFKA_ERROR_NONE ||
                          response->error == KAFKA_ERROR_DUPLICATE_SEQUENCE_NUMBER))
        attempt_succeeded(state, batch, response->base_offset);
    else if (batch != NULL)
        attempt_failed(state, batch, response->error, now_of(state));
    /* A batch that expired while in flight is already completed. */
    if (overtaken)
        connection_failed(state, conn, KAFKA_ERROR_NETWORK_EXCEPTION, TRUE);
}

/* The connection to `conn->node` is gone (a disconnect, or closed by us after
 * a request timeout): every request on it fails with `error`, oldest first,
 * as Kafka's NetworkClient cancels them. */
static void
connection_failed(ProducerState *state, ProducerConnection *conn, KafkaError error, gboolean close)
{
    Producer *producer = state->producer;
    const ProducerConfig *config = config_of(state);
    gint64 now = now_of(state);
    if (close)
        sim_net_close(sim_world_net(producer->world), producer->node, conn->node);
    conn->ready = FALSE;
    conn->handshake_correlation = 0;
    sim_timer_cancel(producer->world, conn->handshake_timer);
    conn->failures++;
    guint doublings = MIN(conn->failures - 1, RECONNECT_DOUBLINGS_MAX);
    gint64 backoff_ms = MIN(config->reconnect_backoff_ms << doublings,
                            MAX(config->reconnect_backoff_max_ms, config->reconnect_backoff_ms));
    conn->blackout_until_ns = now + ms_to_ns(backoff_ms);
    ProducerFlight *flight;
    while ((flight = g_queue_pop_head(&conn->flights)) != NULL) {
        ProducerBatch *batch = flight_finish(state, flight);
        if (batch == NULL)
            continue;
        batch->maybe_written = TRUE;
        attempt_failed(state, batch, error, now);
    }
    if (state->metadata_correlation != 0 && state->metadata_node == conn->node) {
        sim_timer_cancel(producer->world, state->metadata_timer);
        state->metadata_correlation = 0;
    }
    if (state->pid_state == PRODUCER_ID_REQUESTING && state->pid_node == conn->node)
        pid_request_failed(state, now);
    state->metadata_needed = TRUE;
}

static void
flight_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    ProducerFlight *flight = arg;
    (void)world;
    KSIM_ASSERT(producer->state != NULL);
    flight->timeout_timer = SIM_EVENT_ID_NONE;
    connection_failed(producer->state, flight->conn, KAFKA_ERROR_REQUEST_TIMED_OUT, TRUE);
    producer_sender_run(producer->state);
}

static void
metadata_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)world;
    (void)arg;
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(state->metadata_correlation != 0);
    state->metadata_timer = SIM_EVENT_ID_NONE;
    connection_failed(state, connection_get(state, state->metadata_node),
                      KAFKA_ERROR_REQUEST_TIMED_OUT, TRUE);
    producer_sender_run(state);
}

static void
pid_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)world;
    (void)arg;
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(state->pid_state == PRODUCER_ID_REQUESTING);
    state->pid_timer = SIM_EVENT_ID_NONE;
    connection_failed(state, connection_get(state, state->pid_node), KAFKA_ERROR_REQUEST_TIMED_OUT,
                      TRUE);
    producer_sender_run(state);
}

void
producer_sender_handle_message(ProducerState *state, SimNodeId from, SimMsg *msg)
{
    connection_answered(state, from);
    if (producer_txn_handle_message(state, from, msg))
        return;
    switch ((KafkaMsgType)msg->type) {
    case KMSG_PRODUCE_RESPONSE:
        handle_produce_response(state, from, (const KProduceResponse *)msg);
        break;
    case KMSG_METADATA_RESPONSE:
        handle_metadata_response(state, from, (const KMetadataResponse *)msg);
        break;
    case KMSG_INIT_PRODUCER_ID_RESPONSE:
        handle_pid_response(state, (const KInitProducerIdMessage *)msg);
        break;
    default:
        break; /* nothing else is addressed to a producer */
    }
}

void
producer_sender_handle_disconnect(ProducerState *state, SimNodeId peer)
{
    connection_failed(state, connection_get(state, peer), KAFKA_ERROR_NETWORK_EXCEPTION, FALSE);
    producer_txn_handle_disconnect(state, peer);
}

/* ---- expiry (delivery.timeout.ms) ---- */

static void
defer(GArray *deferred, ProducerBatch *batch, HistoryType type, KafkaError error)
{
    Deferred entry = {batch, type, error};
    g_array_append_val(deferred, entry);
}

/* An expired batch that holds a sequence of the current producer id leaves a
 * gap: the id is reset now, before this pass drains anything more under it. */
static void
expire(ProducerState *state, ProducerBatch *batch, GArray *deferred)
{
    if (batch->records->base_sequence >= 0 && !batch_is_stale(state, batch))
        producer_sender_reset_producer_id(state, KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
    defer(deferred, batch, batch->maybe_written ? HISTORY_INFO : HISTORY_FAIL,
          KAFKA_ERROR_CLIENT_DELIVERY_TIMEOUT);
}

/* Kafka checks the first batch of each queue, then the batches in flight. */
static void
expire_batches(ProducerState *state, gint64 now, GArray *deferred)
{
    /* The queues whose first batch is due, in partition order, as a walk
     * over every queue in that order would expire them; then a wakeup at
     * the earliest deadline left. */
    g_autoptr(GPtrArray) partitions = g_ptr_array_new();
    producer_accum_due_partitions(state->accum, now, partitions);
    for (guint i = 0; i < partitions->len; i++) {
        ProducerPartition *partition = g_ptr_array_index(partitions, i);
        ProducerBatch *head;
        while ((head = g_queue_peek_head(&partition->batches)) != NULL &&
               head->deadline_ns <= now) {
            g_queue_pop_head(&partition->batches);
            producer_accum_head_changed(state->accum, partition);
            expire(state, head, deferred);
        }
    }
    gint64 queued_deadline = producer_accum_earliest_head_deadline(state->accum);
    if (queued_deadline != G_MAXINT64)
        producer_sender_wake_at(state, queued_deadline);
    /* No flight's batch is due: the walk below would only ask to wake at
     * the earliest deadline. */
    GTreeNode *first = g_tree_node_first(state->flight_deadlines);
    if (first == NULL)
        return;
    const ProducerFlight *earliest = g_tree_node_key(first);
    if (earliest->batch->deadline_ns > now) {
        producer_sender_wake_at(state, earliest->batch->deadline_ns);
        return;
    }
    for (guint i = 0; i < state->connections->len; i++) {
        ProducerConnection *conn = g_ptr_array_index(state->connections, i);
        for (GList *l = conn->flights.head; l != NULL; l = l->next) {
            ProducerFlight *flight = l->data;
            ProducerBatch *batch = flight->batch;
            if (batch == NULL)
                continue;
            if (batch->deadline_ns > now) {
                producer_sender_wake_at(state, batch->deadline_ns);
                continue;
            }
            /* The request stays outstanding; its answer will be ignored. */
            g_tree_remove(state->flight_deadlines, flight);
            flight->batch = NULL;
            batch->in_flight = FALSE;
            batch->partition->in_flight--;
            batch->maybe_written = TRUE;
            expire(state, batch, deferred);
        }
    }
}

/* ---- draining ---- */

static void
stamp_sequence(ProducerState *state, ProducerBatch *batch)
{
    ProducerPartition *partition = batch->partition;
    if (partition->sequence_producer_id != state->producer_id ||
        partition->sequence_producer_epoch != state->producer_epoch) {
        partition->sequence_producer_id = state->producer_id;
        partition->sequence_producer_epoch = state->producer_epoch;
        partition->next_sequence = 0;
        partition->last_acked_sequence = -1;
    }
    PlogBatch *records = batch->records;
    records->producer_id = state->producer_id;
    records->producer_epoch = state->producer_epoch;
    records->base_sequence = partition->next_sequence;
    if (state->txn != NULL)
        records->attributes |= PLOG_BATCH_TRANSACTIONAL;
    partition->next_sequence = plog_sequence_add(partition->next_sequence, records->record_count);
}

/* CreateTime: KafkaProducer.doSend stamps each record with the producer's
 * wall clock (Time.milliseconds()) when it is sent; ksim stamps a batch's
 * records with the time the batch was created, read on the producer host's
 * wall clock, once: retries carry the same timestamps. The clock's offset is
 * taken now, at the first drain, a linger after the creation. */
static void
stamp_create_time(const Producer *producer, ProducerBatch *batch)
{
    gint64 wall_ns = batch->created_ns + sim_node_clock_offset_ns(producer->world, producer->node);
    batch->records->first_timestamp_ms = MAX(wall_ns, 0) / SIM_NS_PER_MS;
    batch->records->max_timestamp_ms = batch->records->first_timestamp_ms;
}

/* Sends one attempt of `batch`; with acks=0 the batch is done at once. */
static void
send_batch(ProducerState *state, ProducerBatch *batch, ProducerConnection *conn, GArray *deferred)
{
    Producer *producer = state->producer;
    const ProducerConfig *config = config_of(state);
    producer_batch_close(batch);
    if (producer_idempotent(producer) && batch->records->base_sequence < 0)
        stamp_sequence(state, batch);
    if (batch->attempts == 0)
        stamp_create_time(producer, batch);
    batch->attempts++;
    KProduceRequest *request = kproto_new(KMSG_PRODUCE_REQUEST);
    request->correlation_id = state->correlation_next++;
    request->tp = batch->partition->tp;
    request->acks = config->acks;
    request->timeout_ms = config->request_timeout_ms;
    request->batch = plog_batch_copy(batch->records);
    if (state->txn != NULL) {
        KPROTO_SET_ID(request->transactional_id, config->transactional_id);
        request->transaction_version = (gint8)config->transaction_version;
    }
    kproto_update_size(&request->base);
    producer->stats.produce_requests++;
    if (config->acks == 0) {
        send_message(state, conn->node, &request->base);
        defer(deferred, batch, HISTORY_INFO, KAFKA_ERROR_NONE);
        return;
    }
    ProducerFlight *flight = g_new0(ProducerFlight, 1);
    flight->correlation_id = request->correlation_id;
    flight->conn = conn;
    flight->batch = batch;
    flight->serial = state->flight_serial_next++;
    g_tree_insert(state->flight_deadlines, flight, flight);
    flight->timeout_timer =
        sim_timer_set(producer->world, producer->node, ms_to_ns(config->request_timeout_ms),
                      flight_timed_out, flight);
    g_queue_push_tail(&conn->flights, flight);
    KSIM_ASSERT(conn->flights.length <= (guint)config->max_in_flight_requests_per_connection);
    batch->in_flight = TRUE;
    batch->partition->in_flight++;
    send_message(state, conn->node, &request->base);
}

static void
handshake_timed_out(SimWorld *world, void *ctx, void *arg)
{
    Producer *producer = ctx;
    (void)world;
    ProducerState *state = producer->state;
    KSIM_ASSERT(state != NULL);
    ProducerConnection *conn = connection_find(state, (SimNodeId)GPOINTER_TO_UINT(arg));
    KSIM_ASSERT(conn != NULL);
    conn->handshake_timer = SIM_EVENT_ID_NONE;
    connection_failed(state, conn, KAFKA_ERROR_NETWORK_EXCEPTION, TRUE);
    producer_sender_run(state);
}

/* Opens the connection: a Metadata request stands for Kafka's ApiVersions
 * exchange; until it is answered (within the connection-setup timeout) no
 * produce request goes out on it. */
static void
connection_handshake(ProducerState *state, ProducerConnection *conn)
{
    if (conn->handshake_correlation != 0)
        return;
    Producer *producer = state->producer;
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = state->correlation_next++;
    kproto_metadata_request_no_topics(request); /* ApiVersions carries no topic */
    conn->handshake_correlation = request->correlation_id;
    conn->handshake_timer = sim_timer_set(producer->world, producer->node,
                                          ms_to_ns(PRODUCER_CONNECTION_SETUP_TIMEOUT_MS),
                                          handshake_timed_out, GUINT_TO_POINTER(conn->node));
    send_message(state, conn->node, &request->base);
}

/* Any answer from a node proves its connection ready. */
static void
connection_answered(ProducerState *state, SimNodeId from)
{
    ProducerConnection *conn = connection_find(state, from);
    if (conn == NULL)
        return;
    conn->ready = TRUE;
    if (conn->handshake_correlation != 0) {
        sim_timer_cancel(state->producer->world, conn->handshake_timer);
        conn->handshake_correlation = 0;
    }
}

/* Drains the partition's first batch if it is ready and may go; TRUE when
 * the queue changed. */
static gboolean
drain_one(ProducerState *state, ProducerPartition *partition, gint64 now, gboolean exhausted,
          GArray *deferred)
{
    /* The queue's fields are read directly: a pass looks at every queue. */
    if (partition->batches.head == NULL)
        return FALSE;
    gint64 ready_ns = producer_accum_ready_ns(partition, exhausted);
    if (ready_ns > now) {
        producer_sender_wake_at(state, ready_ns);
        return FALSE;
    }
    /* A transaction sends a partition's batches once it was added to it. */
    if (!producer_txn_may_drain(state, partition))
        return FALSE;
    guint64 version = producer_metadata_version(state->metadata) + 1;
    if (partition->route_version != version) {
        partition->route_version = version;
        partition->route_leader = producer_metadata_leader(state->metadata, &partition->tp);
        if (partition->route_leader != KAFKA_NO_LEADER)
            partition->route_node =
                producer_metadata_broker_node(state->metadata, partition->route_leader);
    }
    gint32 leader = partition->route_leader;
    if (leader == KAFKA_NO_LEADER) {
        state->metadata_needed = TRUE;
        return FALSE;
    }
    SimNodeId node = partition->route_node;
    if (!node_usable(state, node, now))
        return FALSE;
    ProducerConnection *conn = connection_get(state, node);
    if (!conn->ready) {
        connection_handshake(state, conn);
        return FALSE; /* the handshake's answer runs the sender */
    }
    if (conn->flights.length >= (guint)config_of(state)->max_in_flight_requests_per_connection)
        return FALSE; /* a response or timeout frees a slot and runs the sender */
    /* The head batch is read only now: most queues a pass looks at wait
     * for their leader's connection, and a batch is one more cache line. */
    ProducerBatch *head = partition->batches.head->data;
    if (head->records->base_sequence >= 0 && partition->in_flight > 0)
        return FALSE; /* idempotent retries go one at a time, in order */
    /* resequence_queued left no batch of an old producer id in a queue
     * (asserted as it goes: a pass looks at many queues it does not drain,
     * and this reads the batch's records). */
    KSIM_ASSERT(!batch_is_stale(state, head));
    g_queue_pop_head(&partition->batches);
    producer_accum_head_changed(state->accum, partition);
    send_batch(state, head, conn, deferred);
    return TRUE;
}

/* How many queues ahead a drain round asks the cache for. */
#define DRAIN_PREFETCH 4u

static void
drain(ProducerState *state, gint64 now, GArray *deferred)
{
    if (state->pid_state != PRODUCER_ID_NONE && state->pid_state != PRODUCER_ID_READY)
        return;
    guint n = producer_accum_partitions(state->accum)->len;
    if (n == 0)
        return;
    const ProducerBlocked *blocked = g_queue_peek_head(&state->blocked);
    gboolean exhausted =
        blocked != NULL && blocked->waiting_for == KAFKA_ERROR_CLIENT_BUFFER_EXHAUSTED;
    guint start = state->drain_next++ % n;
    /* The rotation over every partition, starting at `start`, without the
     * empty queues, where drain_one does nothing. Draining queues nothing
     * (completions wait in `deferred`), so the list holds for every round. */
    g_autoptr(GPtrArray) partitions = g_ptr_array_new();
    producer_accum_queued_partitions(state->accum, start, partitions);
    /* Each round tries again only the partitions that drained a batch in
     * the round before, in the same order: one that could not drain cannot
     * in a later round of the same pass either (its head, leader,
     * connection and backoff stay as they were, and a connection only
     * fills), and trying it again would change nothing (the wakeup, the
     * metadata flag and the handshake it asks for are asked already). */
    for (guint round = 0; partitions->len > 0; round++) {
        KSIM_ASSERT(round < DRAIN_ROUNDS_MAX);
        guint kept = 0;
        for (guint i = 0; i < partitions->len; i++) {
            ProducerPartition *partition = g_ptr_array_index(partitions, i);
            /* The queues are apart in memory and most are only looked at
             * (their leader's connection is full): fetching a few ahead
             * overlaps their cache misses. */
            if (i + DRAIN_PREFETCH < partitions->len)
                __builtin_prefetch(g_ptr_array_index(partitions, i + DRAIN_PREFETCH));
            if (drain_one(state, partition, now, exhausted, deferred))
                partitions->pdata[kept++] = partition;
        }
        g_ptr_array_set_size(partitions, kept);
    }
}

void
producer_sender_run(ProducerState *state)
{
    gint64 now = now_of(state);
    state->wake_ns = G_MAXINT64;
    producer_process_blocked(state);
    /* Completions run user callbacks, which may send and so add partitions:
     * they wait until no partition list is being walked. */
    g_autoptr(GArray) deferred = g_array_new(FALSE, FALSE, sizeof(Deferred));
    expire_batches(state, now, deferred);
    producer_txn_run(state, now);
    maybe_request_producer_id(state, now);
    drain(state, now, deferred);
    maybe_request_metadata(state, now);
    for (guint i = 0; i < deferred->len; i++) {
        const Deferred *entry = &g_array_index(deferred, Deferred, i);
        producer_complete_batch(state, entry->batch, entry->type, -1, entry->error);
    }
    schedule_poll(state);
}

/* ---- invariants ---- */

static void
check_flights(const ProducerState *state, gint64 *buffer_bytes, guint64 *records)
{
    const ProducerConfig *config = config_of(state);
    const GPtrArray *partitions = producer_accum_partitions(state->accum);
    g_autoptr(GHashTable) in_flight = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint flights_with_batch = 0;
    guint indexed = 0;
    for (guint node = 0; node < state->connection_of_node->len; node++) {
        const ProducerConnection *conn = g_ptr_array_index(state->connection_of_node, node);
        if (conn == NULL)
            continue;
        KSIM_ASSERT(conn->node == node);
        indexed++;
    }
    KSIM_ASSERT(indexed == state->connections->len);
    for (guint i = 0; i < state->connections->len; i++) {
        const ProducerConnection *conn = g_ptr_array_index(state->connections, i);
        KSIM_ASSERT(connection_find(state, conn->node) == conn);
        KSIM_ASSERT(conn->flights.length <= (guint)config->max_in_flight_requests_per_connection);
        for (GList *l = conn->flights.head; l != NULL; l = l->next) {
            const ProducerFlight *flight = l->data;
            KSIM_ASSERT(flight->conn == conn);
            if (flight->batch == NULL)
                continue;
            /* Every flight with a batch is in the deadline tree. */
            KSIM_ASSERT(g_tree_lookup(state->flight_deadlines, flight) == flight);
            flights_with_batch++;
            KSIM_ASSERT(flight->batch->in_flight);
            *buffer_bytes += flight->batch->buffer_bytes;
            *records += producer_batch_record_count(flight->batch);
            gpointer key = flight->batch->partition;
            g_hash_table_insert(
                in_flight, key,
                GUINT_TO_POINTER(GPOINTER_TO_UINT(g_hash_table_lookup(in_flight, key)) + 1));
        }
    }
    KSIM_ASSERT((guint)g_tree_nnodes(state->flight_deadlines) == flights_with_batch);
    for (guint i = 0; i < partitions->len; i++) {
        const ProducerPartition *partition = g_ptr_array_index(partitions, i);
        guint counted = GPOINTER_TO_UINT(g_hash_table_lookup(in_flight, partition));
        KSIM_ASSERT(partition->in_flight == counted);
        /* A route looked up in this metadata version is still its answer. */
        if (partition->route_version == producer_metadata_version(state->metadata) + 1) {
            gint32 leader = producer_metadata_leader(state->metadata, &partition->tp);
            KSIM_ASSERT(partition->route_leader == leader);
            if (leader != KAFKA_NO_LEADER)
                KSIM_ASSERT(partition->route_node ==
                            producer_metadata_broker_node(state->metadata, leader));
        }
        for (GList *l = partition->batches.head; l != NULL; l = l->next) {
            const ProducerBatch *batch = l->data;
            *buffer_bytes += batch->buffer_bytes;
            *records += producer_batch_record_count(batch);
        }
    }
}

void
producer_sender_check_invariants(const ProducerState *state)
{
    gboolean idempotent = producer_idempotent(state->producer);
    producer_accum_check_invariants(state->accum, idempotent);
    producer_metadata_check_invariants(state->metadata);
    partitioner_sticky_check_invariants(state->sticky);
    partitioner_round_robin_check_invariants(state->round_robin);
    gint64 buffer_bytes = 0;
    guint64 records = 0;
    check_flights(state, &buffer_bytes, &records);
    KSIM_ASSERT(buffer_bytes == producer_accum_buffer_used(state->accum));
    KSIM_ASSERT(records == producer_accum_records_queued(state->accum));
    KSIM_ASSERT(state->records_pending == records + state->blocked.length);
    if (!idempotent)
        KSIM_ASSERT(state->pid_state == PRODUCER_ID_NONE);
    else
        KSIM_ASSERT(state->pid_state != PRODUCER_ID_NONE);
    KSIM_ASSERT((state->pid_state == PRODUCER_ID_READY) == (state->producer_id >= 0));
    /* Invariant 6: each of the two requests has one correlation field, so at
     * most one is in flight; the InitProducerId one is set exactly while
     * REQUESTING. */
    KSIM_ASSERT((state->pid_correlation != 0) == (state->pid_state == PRODUCER_ID_REQUESTING));
}
