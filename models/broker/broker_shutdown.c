/*
 * broker_shutdown: a broker stopping cleanly, as SIGTERM stops Kafka's
 * (KafkaServer.shutdown and controlledShutdown, Kafka 2.8, ZooKeeper mode).
 *
 *  1. With controlled.shutdown.enable, it asks the controller to move its
 *     leaderships away. In KRaft mode (BrokerServer.shutdown, Kafka 4.0) its
 *     heartbeats want to shut down: the controller moves its leaderships
 *     and ISR memberships away and answers "should shut down" once it
 *     leads nothing and every unfenced broker has replayed that; the broker
 *     waits at most five minutes. In ZooKeeper mode it sends
 *     ControlledShutdown. The controller answers once it
 *     has moved what it could, with the partitions the broker still leads;
 *     while some remain, or on an error or no answer within
 *     controller.socket.timeout.ms, the broker waits
 *     controlled.shutdown.retry.backoff.ms and asks again, at most
 *     controlled.shutdown.max.retries times in all, then stops anyway.
 *  2. It stops serving: requests are no longer read (the socket server
 *     stops), its replica fetchers stop, it resigns as controller.
 *  3. It flushes every log (LogManager.shutdown): each recovery point
 *     reaches its LEO, so the next start re-reads nothing (Kafka skips
 *     recovery on its clean-shutdown marker; here the recovery point at the
 *     LEO leaves recovery nothing to check, which is the same), and writes
 *     the HW checkpoint (ReplicaManager.shutdown) and the recovery-point
 *     checkpoint.
 *  4. It closes its coordination session: its registration and, if it was
 *     the controller, /controller go at once instead of at the session
 *     timeout, so the controller learns of it in milliseconds.
 *  5. The process exits: the node goes down as after a crash, but with
 *     nothing unflushed and no leadership left behind.
 *
 * The other way a broker stops itself: its log directory fails (an I/O
 * error, broker_log_dir_failed) and, that being its only one, it halts at
 * once — none of the steps above (see broker_log_dir_failed).
 *
 * Invariants (broker_shutdown_check_invariants):
 *  1. phase NONE: no shutdown timer and no ControlledShutdown in flight.
 *  2. phase CONTROLLED: a timer is pending (the answer's timeout or the
 *     backoff before the next attempt), and attempts_left never grows.
 *  3. phase STOPPING and later: no replica fetcher has a partition.
 *
 * Transitions: NONE --broker_shutdown--> CONTROLLED (enabled, retries > 0)
 * or STOPPING; CONTROLLED --no partition remains, or no attempt left-->
 * STOPPING --flushed and checkpointed--> CLOSING --session closed, or the
 * session timeout passed--> the node exits.
 */
#include "broker_internal.h"

#include "broker_kraft.h"

#include "replica_internal.h"
#include "sim_assert.h"

/* How often a stopping broker looks whether its flushes are done. */
#define STOP_POLL_NS SIM_NS_PER_MS

static void attempt(BrokerState *state);
static void stop_begin(BrokerState *state);

static void
shutdown_timer_set(BrokerState *state, gint64 delay_ns, SimTimerFn fn)
{
    Broker *broker = state->broker;
    sim_timer_cancel(broker->world, state->shutdown_timer);
    state->shutdown_timer = sim_timer_set(broker->world, broker->node, delay_ns, fn, NULL);
}

/* ---- 1: the controlled shutdown ---- */

static void
attempt_timer(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    attempt(broker->state);
}

/* An attempt failed: back off, then try again (or stop when none is left). */
static void
attempt_failed(BrokerState *state)
{
    state->shutdown_correlation = -1;
    shutdown_timer_set(state, state->broker->config.controlled_shutdown_retry_backoff_ms *
                                  SIM_NS_PER_MS,
                       attempt_timer);
}

static void
attempt_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d: its controlled shutdown request got no answer",
                        broker->config.broker_id);
    attempt_failed(broker->state);
}

static void
attempt(BrokerState *state)
{
    Broker *broker = state->broker;
    if (state->shutdown_attempts_left <= 0) {
        broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                            "broker %d stops without a completed controlled shutdown",
                            broker->config.broker_id);
        stop_begin(state);
        return;
    }
    state->shutdown_attempts_left--;
    SimNodeId controller = kbroker_endpoint_node(state->live_brokers, state->controller_id);
    if (state->controller_id < 0 || controller == SIM_NODE_NONE) {
        /* Kafka's broker counts an attempt with no known controller too. */
        attempt_failed(state);
        return;
    }
    KControlledShutdownRequest *request = kproto_new(KMSG_CONTROLLED_SHUTDOWN_REQUEST);
    request->correlation_id = state->correlation_next++;
    request->broker_id = broker->config.broker_id;
    state->shutdown_correlation = request->correlation_id;
    broker_send(state, controller, (SimMsg *)request);
    shutdown_timer_set(state, broker->config.controller_socket_timeout_ms * SIM_NS_PER_MS,
                       attempt_timeout);
}

void
broker_shutdown_handle_response(BrokerState *state, const KControlledShutdownResponse *response)
{
    if (state->shutdown_phase != BROKER_SHUTDOWN_CONTROLLED ||
        response->correlation_id != state->shutdown_correlation)
        return; /* late, or for an attempt given up */
    Broker *broker = state->broker;
    if (response->error == KAFKA_ERROR_NONE && response->partitions_remaining == 0) {
        broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                            "broker %d: controlled shutdown succeeded, it leads nothing",
                            broker->config.broker_id);
        stop_begin(state);
        return;
    }
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d: controlled shutdown answered %s with %u partition(s) "
                        "still led",
                        broker->config.broker_id, kafka_error_name(response->error),
                        response->partitions_remaining);
    attempt_failed(state);
}

/* KRaft (BrokerServer.shutdown, Kafka 4.0 commit 1eb7644): the wait for
 * the controller's approval is bounded by the shutdown's timeout, the five
 * minutes of Server.shutdown(). */
#define KRAFT_SHUTDOWN_TIMEOUT_NS (5 * 60 * SIM_NS_PER_S)

static void
kraft_shutdown_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d timed out waiting for the controller to approve its "
                        "controlled shutdown",
                        broker->config.broker_id);
    stop_begin(broker->state);
}

void
broker_shutdown_kraft_approved(BrokerState *state)
{
    if (state->shutdown_phase != BROKER_SHUTDOWN_CONTROLLED)
        return;
    broker_record_event(state->broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d: the controller approved its controlled shutdown, it leads "
                        "nothing",
                        state->broker->config.broker_id);
    stop_begin(state);
}

/* ---- 2 to 5: stopping ---- */

/* The process exits; `arg` says how ("stopped cleanly", "halted: ..."). */
static void
exit_event(void *ctx, void *arg, guint64 incarnation)
{
    Broker *broker = ctx;
    const char *how = arg;
    /* Only the process that asked to exit: not one started since. */
    if (broker->state == NULL ||
        sim_node_incarnation(broker->world, broker->node) != (guint32)incarnation)
        return;
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL, "broker %d %s",
                        broker->config.broker_id, how);
    sim_node_crash(broker->world, broker->node);
}

/* The process exits once the caller's stack has unwound: the exit frees
 * the state (and the coordination client) that the caller still uses. */
static void
exit_soon(BrokerState *state)
{
    Broker *broker = state->broker;
    sim_timer_cancel(broker->world, state->shutdown_timer);
    state->shutdown_timer = SIM_EVENT_ID_NONE;
    state->shutdown_phase = BROKER_SHUTDOWN_EXITING;
    sim_world_schedule(broker->world, sim_now_ns(broker->world), exit_event, NULL, broker,
                       (void *)"stopped cleanly", sim_node_incarnation(broker->world, broker->node));
}

static void
session_closed(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    (void)result;
    (void)arg;
    if (state->shutdown_phase == BROKER_SHUTDOWN_CLOSING)
        exit_soon(state);
}

static void
close_timeout(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    (void)world;
    (void)arg;
    /* The session could not be closed (the coordination node is away): it
     * expires by itself; the process does not wait longer. */
    exit_soon(broker->state);
}

static gboolean
flushes_done(const BrokerState *state)
{
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        if (plog_flushes_in_flight(p->log) > 0)
            return FALSE;
    }
    return !state->checkpoint_in_flight;
}

static void
stop_poll(SimWorld *world, void *ctx, void *arg)
{
    Broker *broker = ctx;
    BrokerState *state = broker->state;
    (void)world;
    (void)arg;
    if (!flushes_done(state)) {
        shutdown_timer_set(state, STOP_POLL_NS, stop_poll);
        return;
    }
    if (!state->shutdown_checkpointed) {
        /* After any periodic write in flight, so this one has the last word. */
        state->shutdown_checkpointed = TRUE;
        replica_hw_checkpoint_write(state);
        /* Kafka's LogManager.shutdown, after every log is flushed: the
         * recovery points are the LEOs now, and the next start trusts them. */
        replica_recovery_points_checkpoint(state);
        shutdown_timer_set(state, STOP_POLL_NS, stop_poll);
        return;
    }
    if (state->zk == NULL) {
        /* KRaft: no coordination session to close; the clean shutdown file
         * records the broker epoch, for the next registration to show. */
        broker->kraft_clean_epoch = broker_kraft_broker_epoch(state->kraft);
        exit_soon(state);
        return;
    }
    state->shutdown_phase = BROKER_SHUTDOWN_CLOSING;
    shutdown_timer_set(state, broker->config.zookeeper_session_timeout_ms * SIM_NS_PER_MS,
                       close_timeout);
    zk_client_close_session(state->zk, session_closed, NULL);
}

static void
stop_begin(BrokerState *state)
{
    state->shutdown_phase = BROKER_SHUTDOWN_STOPPING;
    state->shutdown_correlation = -1;
    broker_resign_controller(state);
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        replica_fetcher_remove_partition(state, p);
        plog_flush(p->log, plog_log_end_offset(p->log));
    }
    shutdown_timer_set(state, 0, stop_poll);
}

void
broker_shutdown(Broker *broker)
{
    BrokerState *state = broker->state;
    if (state == NULL || state->shutdown_phase != BROKER_SHUTDOWN_NONE)
        return;
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d begins a clean shutdown (controlled.shutdown.enable=%s)",
                        broker->config.broker_id,
                        broker->config.controlled_shutdown_enable ? "true" : "false");
    if (!broker->config.controlled_shutdown_enable) {
        stop_begin(state);
        return;
    }
    if (state->kraft != NULL) {
        /* KRaft: heartbeats wanting to shut down, until the controller has
         * moved every leadership away and says it should (BrokerServer
         * .shutdown waits for it within the shutdown's timeout). */
        state->shutdown_phase = BROKER_SHUTDOWN_CONTROLLED;
        shutdown_timer_set(state, KRAFT_SHUTDOWN_TIMEOUT_NS, kraft_shutdown_timeout);
        broker_kraft_begin_controlled_shutdown(state->kraft);
        return;
    }
    state->shutdown_phase = BROKER_SHUTDOWN_CONTROLLED;
    state->shutdown_attempts_left = broker->config.controlled_shutdown_max_retries;
    attempt(state);
}

gboolean
broker_shutting_down(const Broker *broker)
{
    return broker->state != NULL && broker->state->shutdown_phase != BROKER_SHUTDOWN_NONE;
}

gboolean
broker_serving(const BrokerState *state)
{
    return state->shutdown_phase < BROKER_SHUTDOWN_STOPPING && !state->log_dir_failed;
}

/* ---- the log directory's failure: a halt ---- */

/* Kafka 2.8 and 3.4 (ZooKeeper mode): an IOException on a log directory is
 * wrapped in a KafkaStorageException (the request that met it is answered
 * KAFKA_STORAGE_ERROR) and the directory is put on the LogDirFailureChannel;
 * the ReplicaManager's LogDirFailureHandler thread takes it at once and runs
 * ReplicaManager.handleLogDirFailure: fetchers removed and the directory's
 * partitions marked offline, then LogManager.handleLogDirFailure removes the
 * directory from the live ones and, when none is left, logs "Shutdown broker
 * because all log dirs in ... have failed" and calls Exit.halt(1) — before
 * the /log_dir_event_notification znode that would tell the controller is
 * written. A ksim broker has one log directory (log.dirs with one entry), so
 * its failure halts the process: no controlled shutdown, no session close;
 * the controller learns of it when the broker's coordination session
 * expires, as after a crash. The halt runs once the caller's stack has
 * unwound (the crash frees the state the caller uses); until then the
 * broker serves nothing. */
void
broker_log_dir_failed(BrokerState *state, const char *operation)
{
    Broker *broker = state->broker;
    if (state->log_dir_failed)
        return;
    state->log_dir_failed = TRUE;
    broker_record_event(broker, HISTORY_EVENT_NODE, NULL, NULL,
                        "broker %d: I/O error on its log dir (%s): the dir goes offline, "
                        "and with it every replica; it was the broker's only log dir",
                        broker->config.broker_id, operation);
    sim_world_schedule(broker->world, sim_now_ns(broker->world), exit_event, NULL, broker,
                       (void *)"halted: all its log dirs have failed",
                       sim_node_incarnation(broker->world, broker->node));
}

SimDiskStatus
broker_log_dir_status(BrokerState *state, SimDiskStatus status, const char *operation)
{
    if (status == SIM_DISK_EIO)
        broker_log_dir_failed(state, operation);
    return status;
}

void
broker_shutdown_check_invariants(const BrokerState *state)
{
    SimWorld *world = state->broker->world;
    switch ((BrokerShutdownPhase)state->shutdown_phase) {
    case BROKER_SHUTDOWN_NONE:
        KSIM_ASSERT(!sim_timer_pending(world, state->shutdown_timer));
        KSIM_ASSERT(state->shutdown_correlation == -1);
        break;
    case BROKER_SHUTDOWN_CONTROLLED:
        KSIM_ASSERT(sim_timer_pending(world, state->shutdown_timer));
        KSIM_ASSERT(state->shutdown_attempts_left <=
                    state->broker->config.controlled_shutdown_max_retries);
        break;
    default:
        for (guint i = 0; i < state->fetchers->len; i++) {
            const Fetcher *fetcher = g_ptr_array_index(state->fetchers, i);
            KSIM_ASSERT(fetcher->partitions->len == 0);
        }
        break;
    }
}
