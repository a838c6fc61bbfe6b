/*
 * kraft_recovery: KIP-966's unclean recovery manager (Kafka's came after
 * 4.0: the GetReplicaLogInfo RPC in KAFKA-18681, the manager in KAFKA-15580; this
 * follows the KIP's design). A partition whose ISR and ELR are empty and
 * has no leader is recovered: the active controller asks each of its active
 * replicas for its log (again when a replica registers anew), and elects
 * the replica whose log is longest — the highest last written leader
 * epoch, then the highest log end offset, then assignment order — as an
 * unclean election (ISR the new leader alone, RECOVERING). Aggressive
 * elects once every active replica has answered; Balanced also waits for
 * every replica in LastKnownElr (every replica when it is empty: our
 * reading of "the replicas that were last known eligible"). Either waits
 * at most unclean.recovery.timeout.ms from the recovery's start ("the time
 * limit of waiting for the replicas' response"), then elects the longest
 * log it has heard of, as soon as it has heard of one.
 *
 * Part of the controller (kraft_controller_internal.h): it runs on the
 * active controller and writes its elections through the controller's
 * batches.
 */
#include "kraft_controller_internal.h"

#include "sim_assert.h"
#include "sim_world.h"

typedef struct {
    gint32 broker_id;
    gint64 broker_epoch; /* the registration asked; -1: not asked */
    gint32 correlation_id;
    gboolean answered;
    gboolean has_log;
    gint32 last_written_epoch;
    gint64 log_end_offset;
} RecoveryReplica;

typedef struct {
    guint32 topic;
    gint32 partition;
    gint64 started_ns;
    SimTimerId timeout_timer;
    guint n_replicas;
    RecoveryReplica replicas[KAFKA_REPLICAS_MAX]; /* in assignment order */
} Recovery;

static const char *
strategy_name(KraftUncleanRecoveryStrategy strategy)
{
    switch (strategy) {
    case KRAFT_UNCLEAN_RECOVERY_BALANCED:
        return "Balanced";
    case KRAFT_UNCLEAN_RECOVERY_AGGRESSIVE:
        return "Aggressive";
    case KRAFT_UNCLEAN_RECOVERY_NONE:
        break;
    }
    return "None";
}

static gboolean
recovery_needed(const KraftController *c, const KraftPartition *p)
{
    return c->cfg.elr_enabled && c->cfg.unclean_recovery_manager_enabled &&
           c->cfg.unclean_recovery_strategy != KRAFT_UNCLEAN_RECOVERY_NONE &&
           p->leader == KRAFT_NO_LEADER && p->n_isr == 0 && p->n_elr == 0;
}

static void
recovery_free(KraftController *c, Recovery *rec)
{
    sim_timer_cancel(c->world, rec->timeout_timer);
    g_free(rec);
}

static void
recovery_timeout_fired(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    KraftController *c = arg;
    kraft_recovery_schedule_poll(c);
}

/* Its replica whose log is longest among those that answered and are still
 * the registration asked, active; NULL when none. *waiting: before
 * unclean.recovery.timeout.ms, an active replica has not answered, or
 * (Balanced) a LastKnownElr member has not. */
static const RecoveryReplica *
recovery_best(const KraftController *c, const Recovery *rec, const KraftPartition *p,
              gboolean *waiting)
{
    const RecoveryReplica *best = NULL;
    gboolean in_time = kraft_controller_now_ns(c) < rec->started_ns + c->cfg.unclean_recovery_timeout_ns;
    gboolean balanced = c->cfg.unclean_recovery_strategy == KRAFT_UNCLEAN_RECOVERY_BALANCED;
    *waiting = FALSE;
    for (guint i = 0; i < rec->n_replicas; i++) {
        const RecoveryReplica *rr = &rec->replicas[i];
        const KraftBroker *broker = kraft_image_broker(c->latest, rr->broker_id);
        gboolean active = kraft_image_broker_active(c->latest, rr->broker_id) &&
                          broker->epoch == rr->broker_epoch;
        gboolean awaited = p->n_last_known_elr == 0 ||
                           kraft_ids_contain(p->last_known_elr, p->n_last_known_elr, rr->broker_id);
        if (!active || !rr->answered) {
            if (in_time && ((active && !rr->answered) || (balanced && awaited)))
                *waiting = TRUE;
            continue;
        }
        if (!rr->has_log)
            continue;
        if (best == NULL || rr->last_written_epoch > best->last_written_epoch ||
            (rr->last_written_epoch == best->last_written_epoch &&
             rr->log_end_offset > best->log_end_offset))
            best = rr;
    }
    return best;
}

static void
recovery_elect(KraftController *c, const KraftPartition *p, const RecoveryReplica *best)
{
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = p->topic,
                     .partition = p->partition, .leader = best->broker_id};
    r.isr_set = TRUE;
    r.n_isr = 1;
    r.isr[0] = best->broker_id;
    r.leader_recovering = TRUE;
    if (p->n_last_known_elr > 0)
        r.last_known_elr_set = TRUE; /* emptied: the partition has a leader */
    g_array_append_val(b.records, r);
    g_autofree char *note = g_strdup_printf(
        " (unclean recovery, unclean.recovery.strategy=%s: of the replicas that answered "
        "GetReplicaLogInfo it had the longest log, last written leader epoch %d, log end "
        "offset %" G_GINT64_FORMAT "; KIP-966)",
        strategy_name(c->cfg.unclean_recovery_strategy), best->last_written_epoch,
        best->log_end_offset);
    c->election_note = note;
    kraft_controller_write_batch(c, &b);
    c->election_note = NULL;
    kraft_controller_batch_clear(&b);
}

/* Asks the active replicas of `rec` that have not been asked in their
 * present registration. */
static void
recovery_ask(KraftController *c, Recovery *rec)
{
    for (guint i = 0; i < rec->n_replicas; i++) {
        RecoveryReplica *rr = &rec->replicas[i];
        const KraftBroker *broker = kraft_image_broker(c->latest, rr->broker_id);
        if (!kraft_image_broker_active(c->latest, rr->broker_id) ||
            broker->epoch == rr->broker_epoch)
            continue;
        rr->broker_epoch = broker->epoch;
        rr->answered = FALSE;
        rr->correlation_id = ++c->correlation_next;
        KraftMsg *msg = kraft_msg_new(KRAFT_MSG_GET_REPLICA_LOG_INFO_REQUEST, rr->correlation_id);
        msg->broker_id = rr->broker_id;
        msg->topic = rec->topic;
        msg->partition = rec->partition;
        kraft_controller_send(c, broker->node, msg);
    }
}

static Recovery *
recovery_start(KraftController *c, const KraftPartition *p)
{
    Recovery *rec = g_new0(Recovery, 1);
    rec->topic = p->topic;
    rec->partition = p->partition;
    rec->started_ns = kraft_controller_now_ns(c);
    rec->n_replicas = p->n_replicas;
    for (guint i = 0; i < p->n_replicas; i++)
        rec->replicas[i] = (RecoveryReplica){.broker_id = p->replicas[i], .broker_epoch = -1};
    rec->timeout_timer = sim_timer_set(c->world, raft_node_sim_node(c->raft),
                                       c->cfg.unclean_recovery_timeout_ns, recovery_timeout_fired,
                                       c);
    g_ptr_array_add(c->recoveries, rec);
    kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, p->topic, p->partition, p,
                 "controller %d: %s-%d has neither ISR nor ELR; its unclean recovery "
                 "(unclean.recovery.strategy=%s) asks its replicas for their logs "
                 "(GetReplicaLogInfo)",
                 kraft_controller_self_id(c), kraft_record_store_topic_name(c->store, p->topic), p->partition,
                 strategy_name(c->cfg.unclean_recovery_strategy));
    return rec;
}

static Recovery *
recovery_find(const KraftController *c, guint32 topic, gint32 partition)
{
    for (guint i = 0; i < c->recoveries->len; i++) {
        Recovery *rec = g_ptr_array_index(c->recoveries, i);
        if (rec->topic == topic && rec->partition == partition)
            return rec;
    }
    return NULL;
}

/* Ends the recoveries of partitions that need none any more, starts those
 * that do, asks the replicas that came back, and elects where the strategy
 * has heard enough. */
static void
recovery_poll(KraftController *c)
{
    if (!c->active)
        return;
    for (guint i = c->recoveries->len; i-- > 0;) {
        Recovery *rec = g_ptr_array_index(c->recoveries, i);
        const KraftPartition *p = kraft_image_partition(c->latest, rec->topic, rec->partition);
        if (p == NULL || !recovery_needed(c, p)) {
            recovery_free(c, rec);
            g_ptr_array_remove_index(c->recoveries, i);
        }
    }
    g_autoptr(GPtrArray) all = kraft_image_partitions(c->latest);
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        if (!recovery_needed(c, p))
            continue;
        Recovery *rec = recovery_find(c, p->topic, p->partition);
        if (rec == NULL)
            rec = recovery_start(c, p);
        recovery_ask(c, rec);
        gboolean waiting = FALSE;
        const RecoveryReplica *best = recovery_best(c, rec, p, &waiting);
        if (best != NULL && !waiting)
            recovery_elect(c, p, best); /* its record schedules the next poll, which ends it */
    }
}

static void
recovery_poll_fired(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    KraftController *c = arg;
    c->recovery_poll_timer = SIM_EVENT_ID_NONE;
    recovery_poll(c);
}

/* Looks at the recoveries from the event loop, after what is being written
 * now: an election writes records itself. */
void
kraft_recovery_schedule_poll(KraftController *c)
{
    if (!c->active || sim_timer_pending(c->world, c->recovery_poll_timer))
        return;
    c->recovery_poll_timer =
        sim_timer_set(c->world, raft_node_sim_node(c->raft), 0, recovery_poll_fired, c);
}

void
kraft_recovery_clear(KraftController *c)
{
    for (guint i = 0; i < c->recoveries->len; i++)
        recovery_free(c, g_ptr_array_index(c->recoveries, i));
    g_ptr_array_set_size(c->recoveries, 0);
    sim_timer_cancel(c->world, c->recovery_poll_timer);
    c->recovery_poll_timer = SIM_EVENT_ID_NONE;
}

void
kraft_recovery_handle_log_info(KraftController *c, const KraftMsg *response)
{
    Recovery *rec = recovery_find(c, response->topic, response->partition);
    if (rec == NULL)
        return;
    for (guint i = 0; i < rec->n_replicas; i++) {
        RecoveryReplica *rr = &rec->replicas[i];
        if (rr->broker_id != response->broker_id || rr->correlation_id != response->correlation_id)
            continue;
        rr->answered = TRUE;
        rr->has_log = response->error == KAFKA_ERROR_NONE;
        rr->last_written_epoch = response->last_written_epoch;
        rr->log_end_offset = response->log_end_offset;
    }
    recovery_poll(c);
}
