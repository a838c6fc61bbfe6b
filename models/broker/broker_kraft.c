/*
 * broker_kraft: the broker's KRaft lifecycle, metadata replay and
 * AlterPartition (see broker_kraft.h).
 *
 * Invariants (broker_kraft_check_invariants):
 *  1. The buffer holds fetched batches in offset order, all at or above the
 *     image's end offset.
 *  2. At most one Fetch (or FetchSnapshot) and one lifecycle request are in
 *     flight.
 *  3. While a snapshot is fetched, the buffer is empty.
 *
 * A broker whose fetch offset the leader no longer has in its log (it was
 * cleaned up to a snapshot) is told the leader's latest snapshot in the
 * Fetch response, fetches it with FetchSnapshot, in chunks (Kafka's
 * KafkaRaftClient does the same as an observer), loads it as its image and
 * fetches on from its end offset. It keeps the metadata in memory only: no
 * copy of the log or snapshots on its disk (kraft_snapshot.h).
 */
#include "broker_kraft.h"

#include "kraft_publish.h"
#include "raft_proto.h"
#include "replica_internal.h"
#include "sim_assert.h"

#include <math.h>
#include <string.h>

#define METADATA_FETCH_MAX_WAIT_NS (500 * SIM_NS_PER_MS)
#define METADATA_FETCH_MAX_BYTES (8 * 1024 * 1024)
/* The backoff after a failed request (controller.quorum.retry.backoff.ms). */
#define RETRY_BACKOFF_NS (20 * SIM_NS_PER_MS)
/* BrokerLifecycleManager's resendExponentialBackoff after a refused
 * registration: ExponentialBackoff(100 ms, 2, broker.session.timeout.ms,
 * jitter 0.02). */
#define REGISTRATION_BACKOFF_INITIAL_MS 100.0
#define REGISTRATION_BACKOFF_JITTER 0.02

struct BrokerKraft {
    BrokerState *state;
    /* Lifecycle. */
    guint64 incarnation;
    gint64 previous_epoch;  /* from the clean shutdown file; -1: none */
    gint64 epoch;           /* -1: not registered */
    gboolean fenced;
    /* BrokerLifecycleManager's STARTING (FALSE) until a heartbeat answer
     * says it caught up, then RECOVERY and RUNNING: it wants to stay fenced
     * until then. */
    gboolean caught_up;
    /* PENDING_CONTROLLED_SHUTDOWN: heartbeats want to shut down. */
    gboolean want_shut_down;
    gboolean got_shutdown_response;
    gboolean send_immediately; /* a heartbeat is due once the one in flight returns */
    guint failed_attempts;     /* refused registrations in a row (failedAttempts) */
    guint target;           /* voter index asked next */
    gint32 lifecycle_correlation; /* in flight; -1: none */
    gint64 lifecycle_deadline_ns;
    SimTimerId lifecycle_timer;
    /* Metadata. */
    KraftImage *image;
    /* The image as last handed to the broker (its LeaderAndIsr and
     * UpdateMetadata deltas), and whether it is handed any: not before the
     * controller first said the broker caught up with the metadata log, as
     * Kafka's BrokerServer starts its BrokerMetadataPublisher only once
     * lifecycleManager.initialCatchUpFuture completes (so a broker back from
     * a crash does not lead, in the old epoch, the partitions it led before,
     * until the controller has handled its new registration). Set once a
     * process life. */
    KraftImage *published;
    gboolean publishing;
    GPtrArray *buffer;      /* PlogBatch * (owned), fetched above the image's end */
    gint64 fetch_offset;
    gint32 last_epoch;      /* of the last batch fetched; 0: none */
    gint32 replayed_epoch;  /* of the last batch replayed whole; 0: none */
    gint32 leader_epoch;    /* of the quorum leader, as known */
    gint32 leader_id;       /* RAFT_NO_NODE: unknown */
    guint fetch_target;
    gint32 fetch_correlation; /* in flight; -1: none */
    gint64 fetch_deadline_ns;
    SimTimerId fetch_timer;
    /* The leader's snapshot being fetched (FetchSnapshot), and the bytes of
     * it received. */
    gboolean fetching_snapshot;
    gint64 snapshot_end_offset;
    gint32 snapshot_epoch;
    gint64 snapshot_position;
    gint32 pid_correlation; /* AllocateProducerIds in flight; -1: none */
    SimTimerId pid_timer;
    /* CreateTopics in flight, by internal topic kind; -1: none. */
    gint32 create_correlation[2];
    gint64 create_deadline_ns[2];
    SimTimerId create_timer[2];
    gint32 correlation_next;
};

static Broker *
broker_of(const BrokerKraft *k)
{
    return k->state->broker;
}

static const RaftVoter *
voter(const BrokerKraft *k, guint index)
{
    return &broker_of(k)->kraft_voters[index % broker_of(k)->n_kraft_voters];
}

static gint
voter_index_of_id(const BrokerKraft *k, gint32 id)
{
    for (guint i = 0; i < broker_of(k)->n_kraft_voters; i++)
        if (broker_of(k)->kraft_voters[i].id == id)
            return (gint)i;
    return -1;
}

static gint64
now_ns(const BrokerKraft *k)
{
    return sim_now_ns(broker_of(k)->world);
}

/* A request to voter `index` failed: the cluster's observer hears of it. */
static void
note_unreachable(const BrokerKraft *k, guint index)
{
    const Broker *broker = broker_of(k);
    if (broker->observer.controller_unreachable != NULL)
        broker->observer.controller_unreachable(broker->observer.user_data,
                                                broker->config.broker_id, voter(k, index)->id);
}

/* ---- the lifecycle ---- */

static void lifecycle_fire(SimWorld *world, void *ctx, void *arg);

static void
lifecycle_schedule(BrokerKraft *k, gint64 delay_ns)
{
    sim_timer_cancel(broker_of(k)->world, k->lifecycle_timer);
    k->lifecycle_timer =
        sim_timer_set(broker_of(k)->world, broker_of(k)->node, delay_ns, lifecycle_fire, k);
}

static void
lifecycle_send(BrokerKraft *k)
{
    Broker *broker = broker_of(k);
    KraftMsgType type = k->epoch < 0 ? KRAFT_MSG_REGISTRATION_REQUEST : KRAFT_MSG_HEARTBEAT_REQUEST;
    KraftMsg *msg = kraft_msg_new(type, ++k->correlation_next);
    msg->broker_id = broker->config.broker_id;
    msg->broker_epoch = k->epoch;
    msg->incarnation = k->incarnation;
    msg->previous_broker_epoch = k->previous_epoch;
    msg->metadata_offset = kraft_image_end_offset(k->image) - 1;
    msg->want_fence = !k->caught_up;
    msg->want_shut_down = k->want_shut_down;
    k->lifecycle_correlation = msg->correlation_id;
    k->lifecycle_deadline_ns = now_ns(k) + broker->config.controller_quorum_request_timeout_ms *
                                               SIM_NS_PER_MS;
    broker_send(k->state, voter(k, k->target)->node, &msg->base);
    lifecycle_schedule(k, k->lifecycle_deadline_ns - now_ns(k));
}

/* The heartbeat timer, or the request timeout of the one in flight. */
static void
lifecycle_fire(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    BrokerKraft *k = arg;
    k->lifecycle_timer = SIM_EVENT_ID_NONE;
    /* SHUTTING_DOWN: the lifecycle manager sends nothing more. */
    if (!broker_serving(k->state))
        return;
    if (k->lifecycle_correlation >= 0) {
        /* Unanswered: ask the next voter. */
        note_unreachable(k, k->target);
        k->lifecycle_correlation = -1;
        k->target = (k->target + 1) % broker_of(k)->n_kraft_voters;
    }
    lifecycle_send(k);
}

/* ExponentialBackoff.backoff(failed_attempts), in ns: 100 ms doubling per
 * failed attempt, times a jitter factor drawn in [0.98, 1.02), at most
 * broker.session.timeout.ms (Kafka 4.0's BrokerLifecycleManager
 * .scheduleNextCommunicationAfterFailure). */
static gint64
registration_backoff_ns(BrokerKraft *k)
{
    const Broker *broker = broker_of(k);
    KSIM_ASSERT(broker->config.broker_session_timeout_ms > 0);
    double max_ms = (double)broker->config.broker_session_timeout_ms;
    double exp_max = max_ms > REGISTRATION_BACKOFF_INITIAL_MS
                         ? log(max_ms / REGISTRATION_BACKOFF_INITIAL_MS) / log(2.0)
                         : 0.0;
    double term =
        REGISTRATION_BACKOFF_INITIAL_MS * pow(2.0, MIN((double)k->failed_attempts, exp_max));
    g_autofree char *stream = g_strdup_printf("broker-%d/lifecycle", broker->config.broker_id);
    SimRng *rng = sim_world_rng(broker->world, stream);
    double factor = 1.0 - REGISTRATION_BACKOFF_JITTER +
                    2.0 * REGISTRATION_BACKOFF_JITTER * sim_rng_uniform(rng);
    gint64 ms = MIN((gint64)(factor * term), (gint64)max_ms);
    k->failed_attempts++;
    return ms * SIM_NS_PER_MS;
}

static void publish(BrokerKraft *k);

static void
handle_lifecycle_response(BrokerKraft *k, const KraftMsg *msg)
{
    Broker *broker = broker_of(k);
    if (msg->correlation_id != k->lifecycle_correlation)
        return;
    k->lifecycle_correlation = -1;
    if (msg->error == KAFKA_ERROR_NOT_CONTROLLER) {
        gint index = voter_index_of_id(k, msg->controller_id);
        k->target = index >= 0 ? (guint)index : (k->target + 1) % broker->n_kraft_voters;
        lifecycle_schedule(k, RETRY_BACKOFF_NS);
        return;
    }
    if (msg->base.type == KRAFT_MSG_REGISTRATION_RESPONSE) {
        if (msg->error == KAFKA_ERROR_NONE) {
            k->failed_attempts = 0;
            k->epoch = msg->broker_epoch;
            k->fenced = TRUE;
            k->caught_up = FALSE;
            broker_record_event(broker, HISTORY_EVENT_SESSION, NULL, NULL,
                                "broker %d registered with the KRaft controller %d (broker "
                                "epoch %" G_GINT64_FORMAT ")",
                                broker->config.broker_id, msg->controller_id, k->epoch);
            lifecycle_schedule(k, 0);
        } else {
            /* DUPLICATE_BROKER_REGISTRATION: the previous incarnation's
             * session lingers (until it lapses, broker.session.timeout.ms
             * after its last heartbeat); try again after the exponential
             * backoff. */
            lifecycle_schedule(k, registration_backoff_ns(k));
        }
        return;
    }
    if (msg->error == KAFKA_ERROR_STALE_BROKER_EPOCH) {
        k->epoch = -1;
        lifecycle_schedule(k, RETRY_BACKOFF_NS);
        return;
    }
    if (msg->error == KAFKA_ERROR_NONE && k->want_shut_down) {
        if (msg->should_shut_down) {
            broker_shutdown_kraft_approved(k->state);
            return;
        }
        /* Still waiting for the controller: the first answer a little
         * sooner than the heartbeat interval. */
        gint64 delay = k->got_shutdown_response
                           ? broker->config.broker_heartbeat_interval_ms * SIM_NS_PER_MS
                           : 50 * SIM_NS_PER_MS;
        k->got_shutdown_response = TRUE;
        lifecycle_schedule(k, k->send_immediately ? 0 : delay);
        k->send_immediately = FALSE;
        return;
    }
    if (msg->error == KAFKA_ERROR_NONE && !k->caught_up) {
        /* STARTING: every 10 ms until caught up with the metadata log, then
         * at once asking to be unfenced (its logs are recovered already). */
        k->caught_up = msg->caught_up;
        if (k->caught_up && !k->publishing) {
            k->publishing = TRUE;
            publish(k);
        }
        lifecycle_schedule(k, k->caught_up ? 0 : 10 * SIM_NS_PER_MS);
        return;
    }
    if (msg->error == KAFKA_ERROR_NONE && k->fenced != msg->fenced) {
        k->fenced = msg->fenced;
        broker_record_event(broker, HISTORY_EVENT_SESSION, NULL, NULL,
                            "broker %d learnt it is %s", broker->config.broker_id,
                            msg->fenced ? "fenced" : "unfenced");
    }
    lifecycle_schedule(k, broker->config.broker_heartbeat_interval_ms * SIM_NS_PER_MS);
}

void
broker_kraft_begin_controlled_shutdown(BrokerKraft *k)
{
    if (k->epoch < 0) {
        /* Never registered: there is nothing for the controller to move. */
        broker_shutdown_kraft_approved(k->state);
        return;
    }
    k->want_shut_down = TRUE;
    if (k->lifecycle_correlation >= 0)
        k->send_immediately = TRUE;
    else
        lifecycle_schedule(k, 0);
}

/* ---- the metadata log ---- */

static void fetch_fire(SimWorld *world, void *ctx, void *arg);

static void
fetch_schedule(BrokerKraft *k, gint64 delay_ns)
{
    sim_timer_cancel(broker_of(k)->world, k->fetch_timer);
    k->fetch_timer =
        sim_timer_set(broker_of(k)->world, broker_of(k)->node, delay_ns, fetch_fire, k);
}

static void
fetch_send(BrokerKraft *k)
{
    Broker *broker = broker_of(k);
    RaftMsg *msg;
    if (k->fetching_snapshot) {
        msg = raft_msg_new(RAFT_MSG_FETCH_SNAPSHOT_REQUEST, ++k->correlation_next);
        msg->snapshot_end_offset = k->snapshot_end_offset;
        msg->snapshot_epoch = k->snapshot_epoch;
        msg->position = k->snapshot_position;
    } else {
        msg = raft_msg_new(RAFT_MSG_FETCH_REQUEST, ++k->correlation_next);
        msg->offset = k->fetch_offset;
        msg->last_epoch = k->last_epoch;
        msg->max_wait_ns = METADATA_FETCH_MAX_WAIT_NS;
    }
    msg->node_id = broker->config.broker_id;
    msg->epoch = k->leader_epoch;
    raft_msg_finish(msg);
    k->fetch_correlation = msg->correlation_id;
    gint64 timeout_ns = broker->config.controller_quorum_request_timeout_ms * SIM_NS_PER_MS;
    k->fetch_deadline_ns = now_ns(k) + METADATA_FETCH_MAX_WAIT_NS + timeout_ns;
    gint leader = k->leader_id != RAFT_NO_NODE ? voter_index_of_id(k, k->leader_id) : -1;
    if (leader >= 0)
        k->fetch_target = (guint)leader;
    broker_send(k->state, voter(k, k->fetch_target)->node, &msg->base);
    fetch_schedule(k, k->fetch_deadline_ns - now_ns(k));
}

static void
fetch_fire(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    BrokerKraft *k = arg;
    k->fetch_timer = SIM_EVENT_ID_NONE;
    if (k->fetch_correlation >= 0) {
        /* Unanswered: that voter may be gone; forget the leader and try
         * the next. */
        note_unreachable(k, k->fetch_target);
        k->fetch_correlation = -1;
        k->leader_id = RAFT_NO_NODE;
        k->fetch_target = (k->fetch_target + 1) % broker_of(k)->n_kraft_voters;
    }
    fetch_send(k);
}

/* Drops buffered records at and above `offset` (a diverging leader). */
static void
buffer_truncate(BrokerKraft *k, gint64 offset)
{
    while (k->buffer->len > 0) {
        PlogBatch *last = g_ptr_array_index(k->buffer, k->buffer->len - 1);
        if (last->base_offset < offset)
            break;
        g_ptr_array_remove_index(k->buffer, k->buffer->len - 1);
    }
    /* A batch that straddles `offset` cannot be cut here: drop it too and
     * fetch from its start. */
    if (k->buffer->len > 0) {
        PlogBatch *last = g_ptr_array_index(k->buffer, k->buffer->len - 1);
        if (last->base_offset + last->record_count > offset) {
            offset = last->base_offset;
            g_ptr_array_remove_index(k->buffer, k->buffer->len - 1);
        }
    }
    offset = MAX(offset, kraft_image_end_offset(k->image));
    k->fetch_offset = offset;
    /* With the buffer empty, the fetch resumes after what was replayed, so
     * it names that batch's epoch (an epoch of 0 past offset 0 would
     * diverge again, for ever). */
    k->last_epoch = k->replayed_epoch;
    if (k->buffer->len > 0)
        k->last_epoch = ((PlogBatch *)g_ptr_array_index(k->buffer, k->buffer->len - 1))->leader_epoch;
}

/* Hands the broker what changed since the last image it was handed. */
static void
publish(BrokerKraft *k)
{
    if (!k->publishing)
        return;
    BrokerState *state = k->state;
    KUpdateMetadataRequest *metadata =
        kraft_publish_update_metadata(k->published, k->image, broker_of(k)->kraft_store,
                                      broker_of(k)->metadata_pool);
    if (metadata != NULL)
        broker_controller_request_arrived(state, &metadata->base);
    KLeaderAndIsrRequest *lai = kraft_publish_leader_and_isr(
        k->published, k->image, broker_of(k)->kraft_store, broker_of(k)->config.broker_id,
        broker_of(k)->metadata_pool);
    if (lai != NULL)
        broker_controller_request_arrived(state, &lai->base);
    /* The brokers replay the same log: they share what their images agree on. */
    kraft_image_intern(k->image, broker_of(k)->kraft_store);
    kraft_image_assign(k->published, k->image);
}

/* Replays what the buffer holds below `high_watermark`. */
static void
replay_committed(BrokerKraft *k, gint64 high_watermark)
{
    if (high_watermark <= kraft_image_end_offset(k->image))
        return;
    while (k->buffer->len > 0) {
        PlogBatch *batch = g_ptr_array_index(k->buffer, 0);
        kraft_image_replay_batch(k->image, broker_of(k)->kraft_store, batch, high_watermark);
        if (batch->base_offset + batch->record_count > high_watermark)
            break;
        k->replayed_epoch = batch->leader_epoch;
        g_ptr_array_remove_index(k->buffer, 0);
    }
    publish(k);
}

/* A Fetch or FetchSnapshot refused (NOT_LEADER_OR_FOLLOWER,
 * FENCED_LEADER_EPOCH...): the answer names the leader the responder knows;
 * without one, the next voter is asked, after the retry backoff. */
static void
fetch_retry_after_error(BrokerKraft *k, const RaftMsg *msg)
{
    if (msg->epoch >= k->leader_epoch) {
        k->leader_epoch = msg->epoch;
        k->leader_id = msg->leader_id;
    }
    if (k->leader_id == RAFT_NO_NODE)
        k->fetch_target = (k->fetch_target + 1) % broker_of(k)->n_kraft_voters;
    fetch_schedule(k, RETRY_BACKOFF_NS);
}

static void
handle_fetch_response(BrokerKraft *k, RaftMsg *msg)
{
    if (msg->correlation_id != k->fetch_correlation)
        return;
    k->fetch_correlation = -1;
    if (msg->error != KAFKA_ERROR_NONE) {
        fetch_retry_after_error(k, msg);
        return;
    }
    k->leader_epoch = msg->epoch;
    k->leader_id = msg->leader_id;
    if (msg->snapshot_end_offset >= 0 && msg->snapshot_epoch >= 0) {
        /* The leader sends a snapshot instead (observers fetch it as
         * followers do). */
        k->fetching_snapshot = TRUE;
        k->snapshot_end_offset = msg->snapshot_end_offset;
        k->snapshot_epoch = msg->snapshot_epoch;
        k->snapshot_position = 0;
        g_ptr_array_set_size(k->buffer, 0);
        fetch_schedule(k, 0);
        return;
    }
    if (msg->diverging_epoch >= 0) {
        buffer_truncate(k, msg->diverging_end_offset);
    } else if (msg->batches != NULL) {
        for (guint i = 0; i < msg->batches->len; i++) {
            PlogBatch *batch = g_ptr_array_index(msg->batches, i);
            if (batch->base_offset + batch->record_count <= k->fetch_offset)
                continue;
            KSIM_ASSERT(batch->base_offset == k->fetch_offset);
            k->fetch_offset = batch->base_offset + batch->record_count;
            k->last_epoch = batch->leader_epoch;
            g_ptr_array_add(k->buffer, plog_batch_copy(batch));
        }
    }
    replay_committed(k, msg->high_watermark);
    fetch_schedule(k, 0);
}

/* Snapshot `payload`, ending at `end_offset` in `epoch`, becomes the image,
 * published as a delta from the old one, and replay goes on from its end;
 * `how` says where it came from, for the history. */
static void
install_snapshot(BrokerKraft *k, guint64 payload, gint64 end_offset, gint32 epoch,
                 const char *how)
{
    const KraftImage *content = kraft_record_store_image(broker_of(k)->kraft_store, payload);
    KSIM_ASSERT(content != NULL);
    KSIM_ASSERT(kraft_image_end_offset(content) == end_offset);
    if (kraft_image_end_offset(k->image) >= end_offset)
        return;
    kraft_image_assign(k->image, content);
    g_ptr_array_set_size(k->buffer, 0);
    k->fetch_offset = end_offset;
    k->last_epoch = epoch;
    k->replayed_epoch = epoch;
    broker_record_event(broker_of(k), HISTORY_EVENT_SESSION, NULL, NULL,
                        "broker %d loaded the metadata snapshot %" G_GINT64_FORMAT
                        "-%d (%s) and replays the log from offset %" G_GINT64_FORMAT,
                        broker_of(k)->config.broker_id, end_offset, epoch, how, end_offset);
    publish(k);
}

/* The snapshot is here whole (FetchSnapshot). */
static void
load_snapshot(BrokerKraft *k, guint64 payload)
{
    k->fetching_snapshot = FALSE;
    g_autofree char *how = g_strdup_printf("FetchSnapshot from controller %d", k->leader_id);
    install_snapshot(k, payload, k->snapshot_end_offset, k->snapshot_epoch, how);
}

/* KafkaRaftClient.handleFetchSnapshotResponse, as an observer. */
static void
handle_fetch_snapshot_response(BrokerKraft *k, RaftMsg *msg)
{
    if (msg->correlation_id != k->fetch_correlation)
        return;
    k->fetch_correlation = -1;
    if (!k->fetching_snapshot)
        return;
    if (msg->error == KAFKA_ERROR_SNAPSHOT_NOT_FOUND) {
        /* Gone from the leader: a Fetch names the one it has now. */
        k->fetching_snapshot = FALSE;
        fetch_schedule(k, 0);
        return;
    }
    if (msg->error != KAFKA_ERROR_NONE) {
        fetch_retry_after_error(k, msg);
        return;
    }
    if (msg->snapshot_end_offset == k->snapshot_end_offset &&
        msg->snapshot_epoch == k->snapshot_epoch && msg->position == k->snapshot_position) {
        k->snapshot_position += msg->chunk_bytes;
        if (k->snapshot_position >= msg->snapshot_size)
            load_snapshot(k, msg->snapshot_payload);
    }
    fetch_schedule(k, 0);
}

/* ---- combined mode: the local voter's log ---- */

void
broker_kraft_local_advanced(BrokerKraft *k)
{
    RaftNode *raft = broker_of(k)->raft;
    KSIM_ASSERT(raft != NULL);
    /* The active controller is the local voter's leader, as it knows it. */
    if (raft_node_epoch(raft) >= k->leader_epoch) {
        k->leader_epoch = raft_node_epoch(raft);
        k->leader_id = raft_node_leader_id(raft);
    }
    Plog *log = raft_node_log(raft);
    gint64 high_watermark = raft_node_high_watermark(raft);
    if (log == NULL || high_watermark <= kraft_image_end_offset(k->image))
        return;
    /* Behind the local log's start (a restarted node whose voter cleaned
     * its log): the voter's latest snapshot first, as Kafka's metadata
     * loader is handed the raft client's snapshot (handleLoadSnapshot). */
    const RaftSnapshot *latest = raft_node_latest_snapshot(raft);
    if (kraft_image_end_offset(k->image) < raft_node_log_start_offset(raft) && latest != NULL)
        install_snapshot(k, latest->payload, latest->end_offset, latest->epoch,
                         "its own voter's");
    /* What is committed is never truncated (Raft), so the batches from the
     * image's end up to the high watermark are read again each time; the
     * ones above it stay in the log, not in the buffer. */
    KSIM_ASSERT(k->buffer->len == 0);
    gint64 offset = kraft_image_end_offset(k->image);
    while (offset < high_watermark) {
        guint before = k->buffer->len;
        PlogReadStatus status = plog_read(log, offset, METADATA_FETCH_MAX_BYTES, k->buffer);
        if (status != PLOG_READ_OK || k->buffer->len == before)
            break;
        const PlogBatch *last = g_ptr_array_index(k->buffer, k->buffer->len - 1);
        offset = last->base_offset + last->record_count;
    }
    k->fetch_offset = offset;
    replay_committed(k, high_watermark);
    g_ptr_array_set_size(k->buffer, 0);
    k->fetch_offset = kraft_image_end_offset(k->image);
}

/* ---- producer ids ---- */

static void
pid_timeout(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    BrokerKraft *k = arg;
    k->pid_timer = SIM_EVENT_ID_NONE;
    if (k->pid_correlation < 0)
        return;
    k->pid_correlation = -1;
    producer_ids_block_granted(k->state->producer_ids, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE, -1,
                               0);
}

void
broker_kraft_allocate_producer_ids(BrokerKraft *k)
{
    Broker *broker = broker_of(k);
    if (k->epoch < 0) {
        producer_ids_block_granted(k->state->producer_ids, KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE,
                                   -1, 0);
        return;
    }
    KraftMsg *msg = kraft_msg_new(KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST, ++k->correlation_next);
    msg->broker_id = broker->config.broker_id;
    msg->broker_epoch = k->epoch;
    k->pid_correlation = msg->correlation_id;
    gint leader = k->leader_id != RAFT_NO_NODE ? voter_index_of_id(k, k->leader_id) : -1;
    broker_send(k->state, voter(k, leader >= 0 ? (guint)leader : k->target)->node, &msg->base);
    sim_timer_cancel(broker->world, k->pid_timer);
    k->pid_timer = sim_timer_set(broker->world, broker->node,
                                 broker->config.controller_quorum_request_timeout_ms *
                                     SIM_NS_PER_MS,
                                 pid_timeout, k);
}

static void
handle_pid_response(BrokerKraft *k, const KraftMsg *msg)
{
    if (msg->correlation_id != k->pid_correlation)
        return;
    k->pid_correlation = -1;
    sim_timer_cancel(broker_of(k)->world, k->pid_timer);
    k->pid_timer = SIM_EVENT_ID_NONE;
    producer_ids_block_granted(
        k->state->producer_ids,
        msg->error == KAFKA_ERROR_NONE ? KAFKA_ERROR_NONE : KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE,
        msg->producer_id_start, msg->producer_id_count);
}

/* ---- internal topics ---- */

static void
create_timeout(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    BrokerKraft *k = arg;
    for (guint kind = 0; kind < G_N_ELEMENTS(k->create_timer); kind++) {
        if (k->create_correlation[kind] < 0 || k->create_deadline_ns[kind] > now_ns(k))
            continue;
        k->create_timer[kind] = SIM_EVENT_ID_NONE;
        k->create_correlation[kind] = -1;
        broker_internal_topic_failed(k->state, kind);
    }
}

gboolean
broker_kraft_create_topic(BrokerKraft *k, guint kind, const char *topic, gint32 partitions,
                          gint16 replication_factor, gboolean unclean, gint32 min_isr)
{
    Broker *broker = broker_of(k);
    KSIM_ASSERT(kind < G_N_ELEMENTS(k->create_correlation));
    if (k->epoch < 0)
        return FALSE;
    KraftMsg *msg = kraft_msg_new(KRAFT_MSG_CREATE_TOPICS_REQUEST, ++k->correlation_next);
    msg->broker_id = broker->config.broker_id;
    msg->broker_epoch = k->epoch;
    msg->topic = kraft_record_store_topic(broker->kraft_store, topic);
    msg->n_partitions = partitions;
    msg->replication_factor = replication_factor;
    msg->unclean = unclean;
    msg->min_isr = min_isr;
    k->create_correlation[kind] = msg->correlation_id;
    gint leader = k->leader_id != RAFT_NO_NODE ? voter_index_of_id(k, k->leader_id) : -1;
    broker_send(k->state, voter(k, leader >= 0 ? (guint)leader : k->target)->node, &msg->base);
    gint64 timeout_ns = broker->config.controller_quorum_request_timeout_ms * SIM_NS_PER_MS;
    k->create_deadline_ns[kind] = now_ns(k) + timeout_ns;
    sim_timer_cancel(broker->world, k->create_timer[kind]);
    k->create_timer[kind] = sim_timer_set(broker->world, broker->node, timeout_ns, create_timeout, k);
    return TRUE;
}

static void
handle_create_response(BrokerKraft *k, const KraftMsg *msg)
{
    for (guint kind = 0; kind < G_N_ELEMENTS(k->create_correlation); kind++) {
        if (msg->correlation_id != k->create_correlation[kind])
            continue;
        k->create_correlation[kind] = -1;
        sim_timer_cancel(broker_of(k)->world, k->create_timer[kind]);
        k->create_timer[kind] = SIM_EVENT_ID_NONE;
        /* Created, or by another broker first: the metadata log brings it.
         * Otherwise (NOT_CONTROLLER, too few brokers) ask again later. */
        if (msg->error != KAFKA_ERROR_NONE && msg->error != KAFKA_ERROR_TOPIC_ALREADY_EXISTS)
            broker_internal_topic_failed(k->state, kind);
        if (msg->error == KAFKA_ERROR_NOT_CONTROLLER) {
            gint index = voter_index_of_id(k, msg->controller_id);
            if (index >= 0)
                k->target = (guint)index;
        }
    }
}

/* ---- the interface ---- */

BrokerKraft *
broker_kraft_new(BrokerState *state)
{
    Broker *broker = state->broker;
    KSIM_ASSERT(broker->n_kraft_voters > 0 && broker->kraft_store != NULL);
    BrokerKraft *k = g_new0(BrokerKraft, 1);
    k->state = state;
    /* A process start is a new incarnation (Kafka draws a random UUID). */
    k->incarnation = sim_node_incarnation(broker->world, broker->node) + 1;
    k->epoch = -1;
    /* BrokerServer reads and deletes the clean shutdown file at start. */
    k->previous_epoch = broker->kraft_clean_epoch;
    broker->kraft_clean_epoch = -1;
    k->lifecycle_correlation = -1;
    k->lifecycle_timer = SIM_EVENT_ID_NONE;
    k->image = kraft_image_new();
    k->published = kraft_image_new();
    k->buffer = plog_batch_array_new();
    k->leader_id = RAFT_NO_NODE;
    k->fetch_correlation = -1;
    k->fetch_timer = SIM_EVENT_ID_NONE;
    k->pid_correlation = -1;
    k->pid_timer = SIM_EVENT_ID_NONE;
    for (guint kind = 0; kind < G_N_ELEMENTS(k->create_correlation); kind++) {
        k->create_correlation[kind] = -1;
        k->create_timer[kind] = SIM_EVENT_ID_NONE;
    }
    /* Spread first requests over the voters by broker id. */
    k->target = (guint)broker->config.broker_id % broker->n_kraft_voters;
    k->fetch_target = k->target;
    lifecycle_schedule(k, 0);
    if (broker->raft == NULL)
        fetch_schedule(k, 0);
    else
        broker_kraft_local_advanced(k);
    return k;
}

void
broker_kraft_free(BrokerKraft *k)
{
    if (k == NULL)
        return;
    sim_timer_cancel(broker_of(k)->world, k->lifecycle_timer);
    sim_timer_cancel(broker_of(k)->world, k->fetch_timer);
    sim_timer_cancel(broker_of(k)->world, k->pid_timer);
    for (guint kind = 0; kind < G_N_ELEMENTS(k->create_timer); kind++)
        sim_timer_cancel(broker_of(k)->world, k->create_timer[kind]);
    kraft_image_free(k->image);
    kraft_image_free(k->published);
    g_ptr_array_unref(k->buffer);
    g_free(k);
}

/* KIP-966's GetReplicaLogInfo, from the active controller's unclean
 * recovery: this replica's log end offset and the leader epoch of its last
 * batch, read from the log as it is now (after the recovery a restart ran),
 * fenced or not. Kafka's RPC came after 4.0 (KAFKA-18681); the fields are
 * the KIP's. */
static void
handle_replica_log_info(BrokerKraft *k, SimNodeId from, const KraftMsg *req)
{
    KraftMsg *response =
        kraft_msg_new(KRAFT_MSG_GET_REPLICA_LOG_INFO_RESPONSE, req->correlation_id);
    response->broker_id = broker_of(k)->config.broker_id;
    response->broker_epoch = k->epoch;
    response->topic = req->topic;
    response->partition = req->partition;
    KTopicPartition tp;
    ktp_set(&tp, kraft_record_store_topic_name(broker_of(k)->kraft_store, req->topic),
            req->partition);
    const Partition *p = replica_get(k->state, &tp);
    if (p == NULL || p->log == NULL) {
        response->error = KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    } else {
        response->leader_epoch = p->leader_epoch;
        response->last_written_epoch = plog_epoch_latest(p->log);
        response->log_end_offset = plog_log_end_offset(p->log);
    }
    broker_send(k->state, from, &response->base);
}

gboolean
broker_kraft_handle_message(BrokerKraft *k, SimNodeId from, SimMsg *msg)
{
    if (msg->type == KRAFT_MSG_GET_REPLICA_LOG_INFO_REQUEST) {
        handle_replica_log_info(k, from, (const KraftMsg *)msg);
    } else if (msg->type == RAFT_MSG_FETCH_RESPONSE) {
        handle_fetch_response(k, (RaftMsg *)msg);
    } else if (msg->type == RAFT_MSG_FETCH_SNAPSHOT_RESPONSE) {
        handle_fetch_snapshot_response(k, (RaftMsg *)msg);
    } else if (msg->type == KRAFT_MSG_REGISTRATION_RESPONSE ||
               msg->type == KRAFT_MSG_HEARTBEAT_RESPONSE) {
        handle_lifecycle_response(k, (const KraftMsg *)msg);
    } else if (msg->type == KRAFT_MSG_ALLOCATE_PRODUCER_IDS_RESPONSE) {
        handle_pid_response(k, (const KraftMsg *)msg);
    } else if (msg->type == KRAFT_MSG_CREATE_TOPICS_RESPONSE) {
        handle_create_response(k, (const KraftMsg *)msg);
    } else if (msg->type == KRAFT_MSG_ALTER_PARTITION_RESPONSE) {
        replica_isr_altered(k->state, (const KraftMsg *)msg,
                            kraft_record_store_topic_name(broker_of(k)->kraft_store,
                                                          ((const KraftMsg *)msg)->topic));
    } else {
        return FALSE;
    }
    sim_msg_free(msg);
    return TRUE;
}

void
broker_kraft_peer_disconnected(BrokerKraft *k, SimNodeId peer)
{
    /* What was in flight to `peer` is lost: ask again (another voter if it
     * does not come back). */
    if (k->fetch_correlation >= 0 && voter(k, k->fetch_target)->node == peer) {
        note_unreachable(k, k->fetch_target);
        fetch_schedule(k, RETRY_BACKOFF_NS);
    }
    if (k->lifecycle_correlation >= 0 && voter(k, k->target)->node == peer) {
        note_unreachable(k, k->target);
        lifecycle_schedule(k, RETRY_BACKOFF_NS);
    }
}

void
broker_kraft_check_invariants(const BrokerKraft *k)
{
    KSIM_ASSERT(k != NULL);
    gint64 next = kraft_image_end_offset(k->image);
    for (guint i = 0; i < k->buffer->len; i++) {
        const PlogBatch *batch = g_ptr_array_index(k->buffer, i);
        KSIM_ASSERT(batch->base_offset + batch->record_count > next || i == 0);
        KSIM_ASSERT(i == 0 || batch->base_offset == next);
        next = batch->base_offset + batch->record_count;
    }
    KSIM_ASSERT(k->buffer->len == 0 || next == k->fetch_offset);
    if (k->fetching_snapshot)
        KSIM_ASSERT(k->buffer->len == 0);
    KSIM_ASSERT(k->fetch_correlation < 0 || sim_timer_pending(broker_of(k)->world, k->fetch_timer));
}

gint64
broker_kraft_broker_epoch(const BrokerKraft *k)
{
    return k->epoch;
}

guint32
broker_kraft_topic_id(const BrokerKraft *k, const char *topic)
{
    gint64 id = kraft_record_store_find_topic(broker_of(k)->kraft_store, topic);
    KSIM_ASSERT(id >= 0);
    return (guint32)id;
}

gboolean
broker_kraft_send_alter(BrokerKraft *k, KraftMsg *request)
{
    if (k->epoch < 0) {
        sim_msg_free(&request->base);
        return FALSE;
    }
    request->broker_id = broker_of(k)->config.broker_id;
    request->broker_epoch = k->epoch;
    request->correlation_id = ++k->correlation_next;
    /* The active controller is the quorum's leader, as far as it knows. */
    gint leader = k->leader_id != RAFT_NO_NODE ? voter_index_of_id(k, k->leader_id) : -1;
    broker_send(k->state, voter(k, leader >= 0 ? (guint)leader : k->target)->node,
                &request->base);
    return TRUE;
}
