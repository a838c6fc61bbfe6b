/*
 * kraft_controller: the KRaft controller on a quorum voter (see
 * kraft_controller.h).
 *
 * Two images: `committed`, replayed from the log up to the high watermark
 * (what a standby knows, and what survives a loss of leadership), and, while
 * active, `latest`, which also holds what this controller has written and
 * the quorum not yet committed (Kafka's SnapshotRegistry keeps the same
 * distinction and reverts to the committed state on renouncing). Decisions
 * read `latest`, as QuorumController's do.
 *
 * Invariants (kraft_controller_check_invariants):
 *  1. Only an active controller has a `latest` image, sessions and replies
 *     waiting; `latest` has replayed at least as far as `committed`.
 *  2. In either image, every partition's ISR is within its replicas, empty
 *     only without a leader (with ELR) and apart from its ELR; a leader is
 *     a member of its ISR.
 */
#include "kraft_controller_internal.h"

#include "kraft_placer.h"
#include "sim_assert.h"
#include "sim_world.h"

#include <string.h>

/* A response sent once the quorum has committed `offset`. */
typedef struct {
    gint64 offset;
    SimNodeId to;
    KraftMsg *response; /* owned */
} PendingReply;

/* BrokerHeartbeatManager's per-broker state: when it was last heard, the
 * metadata offset its last heartbeat reported, and the offset of the
 * records that put it in controlled shutdown (-1: not in one). */
typedef struct {
    gint32 broker_id;
    gint64 last_contact_ns;
    gint64 metadata_offset;
    gint64 controlled_shutdown_offset;
} Session;

typedef struct {
    char *name;
    guint n_partitions;
    guint wanted; /* its partition count after an administrator's CreatePartitions */
    guint rf;
    gint32 *replicas; /* n_partitions * rf */
    gboolean unclean;
    gint32 min_isr;
} TopicSpec;

void
kraft_controller_config_init(KraftControllerConfig *cfg)
{
    cfg->session_timeout_ns = 9000 * SIM_NS_PER_MS;
    cfg->elr_enabled = FALSE;
    cfg->unclean_recovery_manager_enabled = FALSE;
    cfg->unclean_recovery_strategy = KRAFT_UNCLEAN_RECOVERY_BALANCED;
    cfg->unclean_recovery_timeout_ns = 300000 * SIM_NS_PER_MS;
    cfg->snapshot_max_new_record_bytes = G_GINT64_CONSTANT(20) * 1024 * 1024;
    cfg->snapshot_max_interval_ns = G_GINT64_CONSTANT(3600000) * SIM_NS_PER_MS;
}

gint32
kraft_controller_self_id(const KraftController *c)
{
    return raft_node_id(c->raft);
}

gint64
kraft_controller_now_ns(const KraftController *c)
{
    return sim_now_ns(c->world);
}

static void
topic_spec_free(gpointer data)
{
    TopicSpec *spec = data;
    g_free(spec->name);
    g_free(spec->replicas);
    g_free(spec);
}

static void
pending_reply_free(gpointer data)
{
    PendingReply *reply = data;
    sim_msg_free(&reply->response->base);
    g_free(reply);
}

void
kraft_controller_send(KraftController *c, SimNodeId to, KraftMsg *msg)
{
    sim_net_send(sim_world_net(c->world), raft_node_sim_node(c->raft), to, &msg->base);
}


void
kraft_controller_record_event(KraftController *c, HistoryEventKind kind, guint32 topic, gint32 partition,
             const KraftPartition *p, const char *format, ...)
{
    if (c->history == NULL)
        return;
    HistoryEvent event = {0};
    event.time_ns = kraft_controller_now_ns(c);
    event.kind = kind;
    event.broker = kraft_controller_self_id(c);
    event.partition = partition;
    event.leader_epoch = -1;
    if (partition >= 0) {
        event.topic = history_topic(c->history, kraft_record_store_topic_name(c->store, topic));
        if (p != NULL) {
            event.leader_epoch = p->leader_epoch;
            event.isr = history_isr_intern(c->history, p->isr, p->n_isr);
        }
    }
    va_list args;
    va_start(args, format);
    event.text = g_strdup_vprintf(format, args);
    va_end(args);
    history_event(c->history, &event);
    g_free(event.text);
}

/* ---- replay ---- */

/* Replays the local log from the image's end up to `end`; returns the
 * bytes of the batches replayed, and the last one's timestamp in
 * *last_timestamp_ms (may be NULL). */
static gint64
replay_log(KraftController *c, KraftImage *image, gint64 end, gint64 *last_timestamp_ms)
{
    Plog *log = raft_node_log(c->raft);
    gint64 bytes = 0;
    if (log == NULL)
        return 0;
    end = MIN(end, plog_log_end_offset(log));
    while (kraft_image_end_offset(image) < end) {
        g_autoptr(GPtrArray) batches = plog_batch_array_new();
        PlogReadStatus status =
            plog_read(log, kraft_image_end_offset(image), 1024 * 1024, batches);
        KSIM_ASSERT(status == PLOG_READ_OK && batches->len > 0);
        for (guint i = 0; i < batches->len; i++) {
            const PlogBatch *batch = g_ptr_array_index(batches, i);
            if (batch->base_offset >= end)
                break;
            kraft_image_replay_batch(image, c->store, batch, end);
            bytes += plog_batch_size_bytes(batch);
            if (last_timestamp_ms != NULL)
                *last_timestamp_ms = batch->max_timestamp_ms;
        }
    }
    return bytes;
}

/* ---- sessions ---- */

static Session *
session_find(KraftController *c, gint32 broker_id)
{
    for (guint i = 0; i < c->sessions->len; i++) {
        Session *s = &g_array_index(c->sessions, Session, i);
        if (s->broker_id == broker_id)
            return s;
        if (s->broker_id > broker_id)
            break;
    }
    return NULL;
}

static void
session_touch(KraftController *c, gint32 broker_id)
{
    Session *s = session_find(c, broker_id);
    if (s != NULL) {
        s->last_contact_ns = kraft_controller_now_ns(c);
        return;
    }
    guint i = 0;
    while (i < c->sessions->len && g_array_index(c->sessions, Session, i).broker_id < broker_id)
        i++;
    Session fresh = {broker_id, kraft_controller_now_ns(c), -1, -1};
    g_array_insert_val(c->sessions, i, fresh);
}

/* BrokerHeartbeatManager.hasValidSession (Kafka 4.0): a fenced broker has
 * none, whenever it was last heard (so a broker fenced by its controlled
 * shutdown registers again at once when it restarts); an unfenced one while
 * its session lasts. */
static gboolean
session_valid(KraftController *c, gint32 broker_id)
{
    const Session *s = session_find(c, broker_id);
    return s != NULL && kraft_image_broker_unfenced(c->latest, broker_id) &&
           kraft_controller_now_ns(c) - s->last_contact_ns < c->cfg.session_timeout_ns;
}

/* ---- writing ---- */

void
kraft_controller_batch_init(Batch *b)
{
    b->records = g_array_new(FALSE, FALSE, sizeof(KraftRecord));
}

void
kraft_controller_batch_clear(Batch *b)
{
    g_array_free(b->records, TRUE);
}

static gboolean
unclean_allowed(const KraftController *c, guint32 topic)
{
    return kraft_image_topic_unclean(c->latest, topic);
}

/* Kafka's LeaderAcceptor with generateLeaderAndIsrUpdates' predicate. */
static gboolean
acceptable_leader(const KraftController *c, gint32 replica, gint32 to_remove, gint32 to_add)
{
    return replica != to_remove &&
           (replica == to_add || kraft_image_broker_active(c->latest, replica));
}

static guint
ids_without(const gint32 *ids, guint n, gint32 id, gint32 *out)
{
    guint kept = 0;
    for (guint i = 0; i < n; i++)
        if (ids[i] != id)
            out[kept++] = ids[i];
    return kept;
}

static gboolean
ids_equal(const gint32 *a, guint n_a, const gint32 *b, guint n_b)
{
    return n_a == n_b && memcmp(a, b, sizeof(gint32) * n_a) == 0;
}

/* Kafka's useLastKnownLeaderInBalancedRecovery: TRUE until the unclean
 * recovery manager that inspects the replicas' logs is on ("it should be set
 * to false if log inspection recovery is ready", KAFKA-15584). While TRUE,
 * LastKnownElr holds the last known leader alone. */
static gboolean
use_last_known_leader(const KraftController *c)
{
    return !c->cfg.unclean_recovery_manager_enabled;
}

/* The targets PartitionChangeBuilder starts from and
 * maybePopulateTargetElr makes. */
typedef struct {
    guint8 n_isr;
    gint32 isr[KAFKA_REPLICAS_MAX];
    guint8 n_elr;
    gint32 elr[KAFKA_REPLICAS_MAX];
    guint8 n_last_known_elr;
    gint32 last_known_elr[KAFKA_REPLICAS_MAX];
} ChangeTargets;

/* maybePopulateTargetElr: while the target ISR is below min.insync.replicas,
 * the ELR is the current ELR and ISR less the target ISR and an unclean
 * shutdown's replica, and LastKnownElr gathers what was in either (or in it
 * already) and is in neither now; at or above it, both are empty. In
 * assignment order (Kafka's are a HashSet's). */
static void
populate_target_elr(const KraftController *c, const KraftPartition *p, gint32 unclean_shutdown,
                    ChangeTargets *t)
{
    if ((gint32)t->n_isr >= kraft_image_topic_min_isr(c->latest, p->topic)) {
        t->n_elr = 0;
        t->n_last_known_elr = 0;
        return;
    }
    guint8 n_elr = 0, n_last = 0;
    gint32 elr[KAFKA_REPLICAS_MAX], last[KAFKA_REPLICAS_MAX];
    for (guint i = 0; i < p->n_replicas; i++) {
        gint32 r = p->replicas[i];
        gboolean was = kraft_ids_contain(p->elr, p->n_elr, r) || kraft_ids_contain(p->isr, p->n_isr, r);
        if (was && !kraft_ids_contain(t->isr, t->n_isr, r) && r != unclean_shutdown)
            elr[n_elr++] = r;
    }
    for (guint i = 0; i < p->n_replicas; i++) {
        gint32 r = p->replicas[i];
        gboolean was = kraft_ids_contain(p->elr, p->n_elr, r) ||
                       kraft_ids_contain(p->isr, p->n_isr, r) ||
                       kraft_ids_contain(t->last_known_elr, t->n_last_known_elr, r);
        if (was && !kraft_ids_contain(t->isr, t->n_isr, r) && !kraft_ids_contain(elr, n_elr, r))
            last[n_last++] = r;
    }
    t->n_elr = n_elr;
    memcpy(t->elr, elr, sizeof(gint32) * n_elr);
    t->n_last_known_elr = n_last;
    memcpy(t->last_known_elr, last, sizeof(gint32) * n_last);
}

/* canElectLastKnownLeader (Kafka 4.0): with ELR, before the recovery
 * manager, a partition whose ISR and ELR are empty may elect its last known
 * leader. Kafka 4.0's method logs "last known leader is not alive" when
 * the leader IS acceptable and then elects it either way; we follow the
 * intent its message states: only an acceptable last known leader. */
static gboolean
can_elect_last_known_leader(const KraftController *c, const KraftPartition *p,
                            const ChangeTargets *t, gint32 to_remove, gint32 to_add,
                            gint32 unclean_shutdown)
{
    if (!c->cfg.elr_enabled || !use_last_known_leader(c))
        return FALSE;
    if (t->n_elr > 0 || t->n_isr > 0 || p->n_last_known_elr != 1)
        return FALSE;
    gint32 last = p->last_known_elr[0];
    return last != unclean_shutdown && acceptable_leader(c, last, to_remove, to_add);
}

/* The election of electAnyLeader: returns the leader, KRAFT_NO_LEADER when
 * none; *unclean when it is not from the ISR or ELR. */
static gint32
elect_leader(const KraftController *c, const KraftPartition *p, const ChangeTargets *t,
             gint32 to_remove, gint32 to_add, gint32 unclean_shutdown, gboolean *unclean)
{
    *unclean = FALSE;
    /* isValidNewLeader: in the target ISR, or in the ELR when the ISR is
     * empty; and acceptable. */
#define VALID(r)                                                                                   \
    ((kraft_ids_contain(t->isr, t->n_isr, (r)) ||                                                  \
      (t->n_isr == 0 && kraft_ids_contain(t->elr, t->n_elr, (r)))) &&                              \
     (r) != unclean_shutdown && acceptable_leader(c, (r), to_remove, to_add))
    if (p->leader != KRAFT_NO_LEADER && VALID(p->leader))
        return p->leader; /* the current leader meets every constraint */
    for (guint i = 0; i < p->n_replicas; i++)
        if (VALID(p->replicas[i]))
            return p->replicas[i];
#undef VALID
    if (can_elect_last_known_leader(c, p, t, to_remove, to_add, unclean_shutdown)) {
        *unclean = TRUE;
        return p->last_known_elr[0];
    }
    /* Election.UNCLEAN for a topic with unclean.leader.election.enable; the
     * unclean recovery manager replaces it (KIP-966: the strategy takes
     * priority). */
    if (c->cfg.unclean_recovery_manager_enabled || !unclean_allowed(c, p->topic))
        return KRAFT_NO_LEADER;
    for (guint i = 0; i < p->n_replicas; i++)
        if (p->replicas[i] != unclean_shutdown &&
            acceptable_leader(c, p->replicas[i], to_remove, to_add)) {
            *unclean = TRUE;
            return p->replicas[i];
        }
    return KRAFT_NO_LEADER;
}

/* maybeUpdateLastKnownLeader: the leader is remembered the first time the
 * ISR empties, and forgotten once the partition has a leader again. */
static void
update_last_known_leader(const KraftController *c, const KraftPartition *p, KraftRecord *r)
{
    if (!use_last_known_leader(c) || !c->cfg.elr_enabled)
        return;
    if (r->isr_set && r->n_isr == 0 &&
        (p->n_last_known_elr != 1 || p->last_known_elr[0] != p->leader)) {
        r->last_known_elr_set = TRUE;
        r->n_last_known_elr = 1;
        r->last_known_elr[0] = p->leader;
    } else if ((r->leader >= 0 || (p->leader != KRAFT_NO_LEADER && r->leader != KRAFT_NO_LEADER)) &&
               p->n_last_known_elr > 0) {
        r->last_known_elr_set = TRUE;
        r->n_last_known_elr = 0;
    }
}

/* PartitionChangeBuilder.build with a target ISR: adds the PartitionChange
 * it makes, if any, to `b`. `to_remove` may not lead (a fenced or shutting
 * down broker); `unclean_shutdown` (a broker restarted without a clean
 * shutdown, or KRAFT_NO_LEADER) may not lead and leaves the ELR too. With
 * eligible leader replicas (KIP-966, eligible.leader.replicas.version=1):
 * while the target ISR is below min.insync.replicas, what leaves the ISR
 * joins the ELR (maybePopulateTargetElr), the ISR may become empty, a
 * partition with an empty ISR elects from its ELR, and one whose ELR is
 * empty too its last known leader (elect_leader). */
static void
build_change(KraftController *c, const KraftPartition *p, const gint32 *target_in, guint n_target,
             gint32 to_remove, gint32 to_add, gint32 unclean_shutdown, Batch *b)
{
    gboolean elr_on = c->cfg.elr_enabled;
    ChangeTargets t = {0};
    t.n_isr = (guint8)ids_without(target_in, n_target, unclean_shutdown, t.isr);
    t.n_elr = p->n_elr;
    memcpy(t.elr, p->elr, sizeof(gint32) * p->n_elr);
    t.n_last_known_elr = p->n_last_known_elr;
    memcpy(t.last_known_elr, p->last_known_elr, sizeof(gint32) * p->n_last_known_elr);
    if (elr_on)
        populate_target_elr(c, p, unclean_shutdown, &t);
    gboolean unclean = FALSE;
    gint32 leader = elect_leader(c, p, &t, to_remove, to_add, unclean_shutdown, &unclean);
    /* tryElection: elected from the ELR, it is the whole ISR now. */
    if (leader != KRAFT_NO_LEADER && leader != p->leader &&
        kraft_ids_contain(t.elr, t.n_elr, leader)) {
        t.n_isr = 1;
        t.isr[0] = leader;
        t.n_elr = (guint8)ids_without(t.elr, t.n_elr, leader, t.elr);
    }
    KraftRecord r = {0};
    r.type = KRAFT_REC_PARTITION_CHANGE;
    r.topic = p->topic;
    r.partition = p->partition;
    r.leader = leader != p->leader ? leader : KRAFT_NO_LEADER_CHANGE;
    if (unclean) {
        /* "If the election was unclean, we have to forcibly set the ISR to
         * just the new leader. This can result in data loss!" */
        r.isr_set = TRUE;
        r.n_isr = 1;
        r.isr[0] = leader;
        r.leader_recovering = TRUE;
    }
    /* maybeUpdateRecordElr: an unclean election, or ELR off, clears both. */
    if (unclean || !elr_on) {
        t.n_elr = 0;
        t.n_last_known_elr = 0;
    }
    if (!ids_equal(t.elr, t.n_elr, p->elr, p->n_elr)) {
        r.elr_set = TRUE;
        r.n_elr = t.n_elr;
        memcpy(r.elr, t.elr, sizeof(gint32) * t.n_elr);
    }
    if (!use_last_known_leader(c) &&
        !ids_equal(t.last_known_elr, t.n_last_known_elr, p->last_known_elr, p->n_last_known_elr)) {
        r.last_known_elr_set = TRUE;
        r.n_last_known_elr = t.n_last_known_elr;
        memcpy(r.last_known_elr, t.last_known_elr, sizeof(gint32) * t.n_last_known_elr);
    }
    /* With ELR the ISR may empty. */
    if (!r.isr_set && (t.n_isr > 0 || elr_on) && !ids_equal(t.isr, t.n_isr, p->isr, p->n_isr)) {
        r.isr_set = TRUE;
        r.n_isr = t.n_isr;
        memcpy(r.isr, t.isr, sizeof(gint32) * t.n_isr);
    }
    update_last_known_leader(c, p, &r);
    if (r.leader == KRAFT_NO_LEADER_CHANGE && !r.isr_set && !r.elr_set && !r.last_known_elr_set)
        return;
    g_array_append_val(b->records, r);
}

/* Appends the records of `b` as one batch and replays them into `latest`;
 * returns the offset of the last, or -1 when nothing was written. Leader
 * changes are recorded in the history as the ZooKeeper-mode controller's
 * elections are. */
gint64
kraft_controller_write_batch(KraftController *c, Batch *b)
{
    if (b->records->len == 0)
        return -1;
    PlogRecord *plogs = g_new(PlogRecord, b->records->len);
    for (guint i = 0; i < b->records->len; i++) {
        guint64 id = kraft_record_store_add(c->store, &g_array_index(b->records, KraftRecord, i));
        plogs[i] = kraft_record_to_plog(c->store, id);
    }
    gint64 base = raft_node_append(c->raft, plogs, b->records->len);
    if (base < 0) {
        g_free(plogs);
        return -1;
    }
    for (guint i = 0; i < b->records->len; i++) {
        const KraftRecord *r = kraft_record_store_get(c->store, plogs[i].value);
        gint64 offset = base + i;
        gboolean last_known = FALSE;
        if (r->type == KRAFT_REC_PARTITION_CHANGE && r->leader_recovering &&
            use_last_known_leader(c)) {
            const KraftPartition *before = kraft_image_partition(c->latest, r->topic, r->partition);
            last_known = before != NULL && before->n_last_known_elr == 1 &&
                         before->last_known_elr[0] == r->leader;
        }
        kraft_image_replay(c->latest, r, offset);
        if (r->type != KRAFT_REC_PARTITION_CHANGE || r->leader == KRAFT_NO_LEADER_CHANGE)
            continue;
        const KraftPartition *p = kraft_image_partition(c->latest, r->topic, r->partition);
        const char *topic = kraft_record_store_topic_name(c->store, r->topic);
        if (p->leader == KRAFT_NO_LEADER) {
            kraft_controller_record_event(c, HISTORY_EVENT_OFFLINE, r->topic, r->partition, p,
                         "controller %d: %s-%d has no eligible leader and went offline "
                         "(PartitionChange at offset %" G_GINT64_FORMAT " of the metadata log)",
                         kraft_controller_self_id(c), topic, r->partition, offset);
            continue;
        }
        gboolean unclean = r->leader_recovering;
        if (unclean && c->history != NULL)
            history_metric(c->history, kraft_controller_now_ns(c), HISTORY_METRIC_UNCLEAN_ELECTION, kraft_controller_self_id(c), 1,
                           0);
        const char *how = !unclean     ? ""
                          : last_known ? " (unclean: its last known leader, elected as the "
                                         "partition had neither ISR nor ELR; KIP-966)"
                          : c->election_note != NULL ? c->election_note
                                                     : " (unclean: it was not in the ISR)";
        kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, r->topic, r->partition, p,
                     "controller %d elected broker %d leader of %s-%d in epoch %d%s "
                     "(PartitionChange at offset %" G_GINT64_FORMAT " of the metadata log)",
                     kraft_controller_self_id(c), p->leader, topic, r->partition, p->leader_epoch, how, offset);
    }
    gint64 last = base + b->records->len - 1;
    g_free(plogs);
    if (c->cfg.unclean_recovery_manager_enabled)
        kraft_recovery_schedule_poll(c);
    return last;
}

/* Sends `response` once the quorum has committed `offset` (at once when it
 * has); -1 waits for what is already written, as a write event without
 * records of its own does. */
static void
reply_after(KraftController *c, SimNodeId to, KraftMsg *response, gint64 offset)
{
    if (offset < 0)
        offset = kraft_image_end_offset(c->latest) - 1;
    if (offset < raft_node_high_watermark(c->raft)) {
        kraft_controller_send(c, to, response);
        return;
    }
    PendingReply *reply = g_new0(PendingReply, 1);
    reply->offset = offset;
    reply->to = to;
    reply->response = response;
    g_queue_push_tail(c->replies, reply);
}

static void
release_replies(KraftController *c, gint64 high_watermark)
{
    while (!g_queue_is_empty(c->replies)) {
        PendingReply *reply = g_queue_peek_head(c->replies);
        if (reply->offset >= high_watermark)
            break;
        g_queue_pop_head(c->replies);
        kraft_controller_send(c, reply->to, reply->response);
        g_free(reply);
    }
}

/* ---- what the active controller decides ---- */

/* Partition changes for every partition `broker` is in the ISR of or leads,
 * without it (handleBrokerFenced, handleBrokerInControlledShutdown); with
 * `unclean_shutdown`, also those it is an eligible leader replica of, which
 * it leaves (handleBrokerUncleanShutdown). */
static void
remove_broker(KraftController *c, gint32 broker, gboolean unclean_shutdown, Batch *b)
{
    g_autoptr(GPtrArray) all = kraft_image_partitions(c->latest);
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        if (!kraft_ids_contain(p->isr, p->n_isr, broker) && p->leader != broker &&
            !(unclean_shutdown && kraft_ids_contain(p->elr, p->n_elr, broker)))
            continue;
        gint32 target[KAFKA_REPLICAS_MAX];
        guint n = ids_without(p->isr, p->n_isr, broker, target);
        if (unclean_shutdown)
            build_change(c, p, target, n, KRAFT_NO_LEADER, KRAFT_NO_LEADER, broker, b);
        else
            build_change(c, p, target, n, broker, KRAFT_NO_LEADER, KRAFT_NO_LEADER, b);
    }
}

static void
fence_broker(KraftController *c, gint32 broker, const char *why)
{
    const KraftBroker *registration = kraft_image_broker(c->latest, broker);
    if (registration == NULL || registration->fenced)
        return;
    Batch b;
    kraft_controller_batch_init(&b);
    remove_broker(c, broker, FALSE, &b);
    KraftRecord fence = {.type = KRAFT_REC_FENCE_BROKER, .broker_id = broker,
                         .broker_epoch = registration->epoch};
    g_array_append_val(b.records, fence);
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset >= 0)
        kraft_controller_record_event(c, HISTORY_EVENT_SESSION, 0, -1, NULL,
                     "controller %d fenced broker %d (%s; FenceBroker at offset %" G_GINT64_FORMAT
                     " of the metadata log)",
                     kraft_controller_self_id(c), broker, why, offset);
}

static void schedule_fence_check(KraftController *c);

/* maybeFenceOneStaleBroker: the unfenced broker silent longest, if past
 * its session. */
static void
fence_timer_fired(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    KraftController *c = arg;
    c->fence_timer = SIM_EVENT_ID_NONE;
    if (!c->active)
        return;
    const Session *stale = NULL;
    for (guint i = 0; i < c->sessions->len; i++) {
        const Session *s = &g_array_index(c->sessions, Session, i);
        if (!kraft_image_broker_unfenced(c->latest, s->broker_id))
            continue;
        if (kraft_controller_now_ns(c) - s->last_contact_ns < c->cfg.session_timeout_ns)
            continue;
        if (stale == NULL || s->last_contact_ns < stale->last_contact_ns)
            stale = s;
    }
    /* A leader that resigned (its check quorum failed) keeps its epoch and
     * so stays active here until the next epoch, but cannot write the
     * FenceBroker record: the check would fire again at once, for ever.
     * Kafka's controller renounces when a write fails; this one waits for
     * the next epoch, which deactivates it (or activates it afresh). */
    if (stale != NULL && raft_node_role(c->raft) != RAFT_ROLE_LEADER)
        return;
    if (stale != NULL)
        fence_broker(c, stale->broker_id, "its session timed out");
    schedule_fence_check(c);
}

/* BrokerHeartbeatManager.nextCheckTimeNs: when the first unfenced broker's
 * session would lapse. */
static void
schedule_fence_check(KraftController *c)
{
    if (sim_timer_pending(c->world, c->fence_timer))
        sim_timer_cancel(c->world, c->fence_timer);
    c->fence_timer = SIM_EVENT_ID_NONE;
    gint64 next = G_MAXINT64;
    for (guint i = 0; i < c->sessions->len; i++) {
        const Session *s = &g_array_index(c->sessions, Session, i);
        if (kraft_image_broker_unfenced(c->latest, s->broker_id))
            next = MIN(next, s->last_contact_ns + c->cfg.session_timeout_ns);
    }
    if (next == G_MAXINT64)
        return;
    c->fence_timer = sim_timer_set(c->world, raft_node_sim_node(c->raft),
                                   MAX(next - kraft_controller_now_ns(c), 0), fence_timer_fired, c);
}

/* ReplicationControlManager.createTopic's records: the Topic (with its
 * configs) and each Partition, whose ISR is its active replicas and whose
 * leader the first of them. Returns the offset of the last, or -1. */
static gint64
write_topic(KraftController *c, guint32 topic, guint n_partitions, guint rf,
            const gint32 *replicas, gboolean unclean, gint32 min_isr)
{
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_TOPIC, .topic = topic, .partitions = (gint32)n_partitions,
                     .unclean = unclean, .min_isr = min_isr};
    g_array_append_val(b.records, r);
    for (guint p = 0; p < n_partitions; p++) {
        KraftRecord pr = {.type = KRAFT_REC_PARTITION, .topic = topic, .partition = (gint32)p};
        pr.n_replicas = (guint8)rf;
        memcpy(pr.replicas, &replicas[p * rf], sizeof(gint32) * rf);
        for (guint k = 0; k < rf; k++)
            if (kraft_image_broker_active(c->latest, pr.replicas[k]))
                pr.isr[pr.n_isr++] = pr.replicas[k];
        KSIM_ASSERT(pr.n_isr > 0);
        pr.leader = pr.isr[0];
        g_array_append_val(b.records, pr);
    }
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset >= 0)
        kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                     "controller %d created topic %s with %u partitions (Topic and "
                     "Partition records up to offset %" G_GINT64_FORMAT " of the metadata log)",
                     kraft_controller_self_id(c), kraft_record_store_topic_name(c->store, topic), n_partitions,
                     offset);
    return offset;
}

/* The registered brokers as StripedReplicaPlacer sees them. (transfer full) */
static KraftUsableBroker *
usable_brokers(const KraftController *c, guint *n)
{
    const GArray *brokers = kraft_image_brokers(c->latest);
    KraftUsableBroker *usable = g_new(KraftUsableBroker, MAX(brokers->len, 1));
    for (guint i = 0; i < brokers->len; i++) {
        const KraftBroker *broker = &g_array_index(brokers, KraftBroker, i);
        usable[i] = (KraftUsableBroker){broker->id, -1,
                                        broker->fenced || broker->in_controlled_shutdown};
    }
    *n = brokers->len;
    return usable;
}

/* ReplicationControlManager.createPartitions: the partitions from the
 * topic's count up to `wanted`, placed by StripedReplicaPlacer, as
 * Partition records (their ISR the active replicas). */
static void
add_partitions(KraftController *c, guint32 topic, guint wanted, guint rf)
{
    guint current = (guint)kraft_image_topic_partitions(c->latest, topic);
    if (wanted <= current)
        return;
    guint n_brokers = 0;
    g_autofree KraftUsableBroker *usable = usable_brokers(c, &n_brokers);
    g_autofree gint32 *replicas = g_new(gint32, (gsize)(wanted - current) * rf);
    const char *why = NULL;
    const char *name = kraft_record_store_topic_name(c->store, topic);
    if (!kraft_place_replicas(usable, n_brokers, wanted - current, rf, c->placer_rng, replicas,
                              &why)) {
        kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                     "controller %d could not add partitions to %s: %s", kraft_controller_self_id(c), name, why);
        return;
    }
    Batch b;
    kraft_controller_batch_init(&b);
    for (guint p = current; p < wanted; p++) {
        KraftRecord pr = {.type = KRAFT_REC_PARTITION, .topic = topic, .partition = (gint32)p};
        pr.n_replicas = (guint8)rf;
        memcpy(pr.replicas, &replicas[(p - current) * rf], sizeof(gint32) * rf);
        for (guint k = 0; k < rf; k++)
            if (kraft_image_broker_active(c->latest, pr.replicas[k]))
                pr.isr[pr.n_isr++] = pr.replicas[k];
        pr.leader = pr.isr[0]; /* the placer's leader is unfenced */
        g_array_append_val(b.records, pr);
    }
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset >= 0)
        kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                     "controller %d added partitions %u to %u of %s (Partition records up to "
                     "offset %" G_GINT64_FORMAT " of the metadata log)",
                     kraft_controller_self_id(c), current, wanted - 1, name, offset);
}

/* Creates the topics the log lacks whose replicas are all active, and the
 * partitions an administrator added. */
static void
create_topics(KraftController *c)
{
    for (guint t = 0; t < c->topics->len; t++) {
        const TopicSpec *spec = g_ptr_array_index(c->topics, t);
        guint32 topic = kraft_record_store_topic(c->store, spec->name);
        if (kraft_image_topic_partitions(c->latest, topic) > 0) {
            add_partitions(c, topic, spec->wanted, spec->rf);
            continue;
        }
        gboolean ready = TRUE;
        for (guint i = 0; i < spec->n_partitions * spec->rf && ready; i++)
            ready = kraft_image_broker_active(c->latest, spec->replicas[i]);
        if (ready)
            write_topic(c, topic, spec->n_partitions, spec->rf, spec->replicas, spec->unclean,
                        spec->min_isr);
    }
}

/* ---- requests ---- */

static KraftMsg *
response_new(const KraftController *c, const KraftMsg *request, KraftMsgType type,
             KafkaError error)
{
    KraftMsg *response = kraft_msg_new(type, request->correlation_id);
    response->error = (gint16)error;
    response->controller_id = c->active ? kraft_controller_self_id(c) : raft_node_leader_id(c->raft);
    response->broker_id = request->broker_id;
    return response;
}

static void
handle_registration(KraftController *c, SimNodeId from, const KraftMsg *req)
{
    const KraftBroker *existing = kraft_image_broker(c->latest, req->broker_id);
    if (existing != NULL && existing->incarnation != req->incarnation &&
        session_valid(c, req->broker_id)) {
        kraft_controller_send(c, from, response_new(c, req, KRAFT_MSG_REGISTRATION_RESPONSE,
                                   KAFKA_ERROR_DUPLICATE_BROKER_REGISTRATION));
        return;
    }
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_REGISTER_BROKER, .broker_id = req->broker_id,
                     .incarnation = req->incarnation, .node = from};
    g_array_append_val(b.records, r);
    /* A new incarnation whose previous broker epoch (from its clean
     * shutdown file) is not the registration's restarted without a clean
     * shutdown: what the old one led, was in sync for or was an eligible
     * leader replica of, it is no longer (ClusterControlManager
     * .registerBroker, handleBrokerUncleanShutdown). */
    if (existing != NULL && existing->incarnation != req->incarnation &&
        req->previous_broker_epoch != existing->epoch)
        remove_broker(c, req->broker_id, TRUE, &b);
    gint64 last = kraft_controller_write_batch(c, &b);
    gint64 epoch = last - (gint64)b.records->len + 1;
    kraft_controller_batch_clear(&b);
    if (last < 0)
        return;
    session_touch(c, req->broker_id);
    schedule_fence_check(c);
    KraftMsg *response = response_new(c, req, KRAFT_MSG_REGISTRATION_RESPONSE, KAFKA_ERROR_NONE);
    response->broker_epoch = epoch;
    reply_after(c, from, response, last);
}

/* BrokerHeartbeatManager's broker states. */
typedef enum {
    STATE_FENCED,
    STATE_UNFENCED,
    STATE_CONTROLLED_SHUTDOWN,
    STATE_SHUTDOWN_NOW,
} BrokerControlState;

/* BrokerHeartbeatManager.lowestActiveOffset: the lowest metadata offset an
 * unfenced broker's heartbeat reported. */
static gint64
lowest_active_offset(const KraftController *c)
{
    gint64 lowest = G_MAXINT64;
    for (guint i = 0; i < c->sessions->len; i++) {
        const Session *s = &g_array_index(c->sessions, Session, i);
        if (kraft_image_broker_unfenced(c->latest, s->broker_id))
            lowest = MIN(lowest, s->metadata_offset);
    }
    return lowest;
}

static gboolean
has_leaderships(const KraftController *c, gint32 broker)
{
    g_autoptr(GPtrArray) all = kraft_image_partitions(c->latest);
    for (guint i = 0; i < all->len; i++)
        if (((const KraftPartition *)g_ptr_array_index(all, i))->leader == broker)
            return TRUE;
    return FALSE;
}

/* BrokerHeartbeatManager.calculateNextBrokerState. */
static BrokerControlState
next_state(const KraftController *c, const KraftBroker *broker, const Session *session,
           const KraftMsg *req, BrokerControlState current)
{
    switch (current) {
    case STATE_FENCED:
        if (req->want_shut_down)
            return STATE_SHUTDOWN_NOW;
        if (!req->want_fence && req->metadata_offset >= broker->epoch)
            return STATE_UNFENCED;
        return STATE_FENCED;
    case STATE_UNFENCED:
        if (req->want_fence)
            return req->want_shut_down ? STATE_SHUTDOWN_NOW : STATE_FENCED;
        if (req->want_shut_down)
            return has_leaderships(c, broker->id) ? STATE_CONTROLLED_SHUTDOWN : STATE_SHUTDOWN_NOW;
        return STATE_UNFENCED;
    case STATE_CONTROLLED_SHUTDOWN:
        if (has_leaderships(c, broker->id))
            return STATE_CONTROLLED_SHUTDOWN;
        /* Shut down once every unfenced broker has replayed the records
         * that moved its leaderships away. */
        return session->controlled_shutdown_offset <= lowest_active_offset(c)
                   ? STATE_SHUTDOWN_NOW
                   : STATE_CONTROLLED_SHUTDOWN;
    case STATE_SHUTDOWN_NOW:
        break;
    }
    return STATE_SHUTDOWN_NOW;
}

/* handleBrokerUnfenced: unfence it, then elect leaders where it is the one
 * that can lead. */
static gint64
unfence_broker(KraftController *c, const KraftBroker *broker)
{
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_UNFENCE_BROKER, .broker_id = broker->id,
                     .broker_epoch = broker->epoch};
    g_array_append_val(b.records, r);
    g_autoptr(GPtrArray) all = kraft_image_partitions(c->latest);
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        if (p->leader == KRAFT_NO_LEADER && kraft_ids_contain(p->replicas, p->n_replicas, broker->id))
            build_change(c, p, p->isr, p->n_isr, KRAFT_NO_LEADER, broker->id, KRAFT_NO_LEADER, &b);
    }
    gint32 id = broker->id;
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset >= 0)
        kraft_controller_record_event(c, HISTORY_EVENT_SESSION, 0, -1, NULL,
                     "controller %d unfenced broker %d (UnfenceBroker at offset %" G_GINT64_FORMAT
                     " of the metadata log)",
                     kraft_controller_self_id(c), id, offset);
    return offset;
}

/* handleBrokerInControlledShutdown: a BrokerRegistrationChange, then every
 * partition it leads or is in the ISR of without it (KIP-841). */
static gint64
begin_controlled_shutdown(KraftController *c, const KraftBroker *broker)
{
    gint32 id = broker->id;
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_BROKER_REGISTRATION_CHANGE, .broker_id = id,
                     .broker_epoch = broker->epoch, .in_controlled_shutdown = TRUE};
    g_array_append_val(b.records, r);
    remove_broker(c, id, FALSE, &b);
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset >= 0)
        kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                     "controller %d: broker %d is in controlled shutdown; its leaderships and "
                     "ISR memberships move away (BrokerRegistrationChange and PartitionChange "
                     "records up to offset %" G_GINT64_FORMAT " of the metadata log)",
                     kraft_controller_self_id(c), id, offset);
    return offset;
}

/* ReplicationControlManager.processBrokerHeartbeat. */
static void
handle_heartbeat(KraftController *c, SimNodeId from, const KraftMsg *req)
{
    const KraftBroker *broker = kraft_image_broker(c->latest, req->broker_id);
    if (broker == NULL || broker->epoch != req->broker_epoch) {
        kraft_controller_send(c, from, response_new(c, req, KRAFT_MSG_HEARTBEAT_RESPONSE,
                                   KAFKA_ERROR_STALE_BROKER_EPOCH));
        return;
    }
    session_touch(c, req->broker_id);
    Session *session = session_find(c, req->broker_id);
    session->metadata_offset = req->metadata_offset;
    BrokerControlState current = broker->fenced                    ? STATE_FENCED
                                 : session->controlled_shutdown_offset >= 0 ||
                                         broker->in_controlled_shutdown
                                     ? STATE_CONTROLLED_SHUTDOWN
                                     : STATE_UNFENCED;
    BrokerControlState next = next_state(c, broker, session, req, current);
    gint64 offset = -1;
    if (next != current) {
        switch (next) {
        case STATE_FENCED:
        case STATE_SHUTDOWN_NOW:
            fence_broker(c, broker->id,
                         next == STATE_FENCED ? "it asked to be fenced"
                                              : "it was granted its shutdown");
            break;
        case STATE_UNFENCED:
            offset = unfence_broker(c, broker);
            create_topics(c);
            break;
        case STATE_CONTROLLED_SHUTDOWN:
            offset = begin_controlled_shutdown(c, broker);
            break;
        }
    }
    /* maybeUpdateControlledShutdownOffset: the offset of what it wrote, or
     * the log's end when it wrote nothing. */
    if (next == STATE_CONTROLLED_SHUTDOWN && session->controlled_shutdown_offset < 0)
        session->controlled_shutdown_offset =
            offset >= 0 ? offset : kraft_image_end_offset(c->latest) - 1;
    if (next == STATE_FENCED || next == STATE_SHUTDOWN_NOW || next == STATE_UNFENCED)
        session->controlled_shutdown_offset = -1;
    schedule_fence_check(c);
    broker = kraft_image_broker(c->latest, req->broker_id);
    KraftMsg *response = response_new(c, req, KRAFT_MSG_HEARTBEAT_RESPONSE, KAFKA_ERROR_NONE);
    response->broker_epoch = broker->epoch;
    response->caught_up = req->metadata_offset >= broker->epoch;
    response->fenced = next == STATE_FENCED || next == STATE_SHUTDOWN_NOW;
    response->in_controlled_shutdown = next == STATE_CONTROLLED_SHUTDOWN;
    response->should_shut_down = next == STATE_SHUTDOWN_NOW;
    reply_after(c, from, response, offset);
}

/* ReplicationControlManager.validateAlterPartitionData. */
static KafkaError
validate_alter(KraftController *c, const KraftMsg *req, const KraftPartition *p)
{
    if (p == NULL)
        return KAFKA_ERROR_UNKNOWN_TOPIC_OR_PARTITION;
    if (req->leader_epoch > p->leader_epoch || req->partition_epoch > p->partition_epoch)
        return KAFKA_ERROR_NOT_CONTROLLER;
    if (req->leader_epoch < p->leader_epoch)
        return KAFKA_ERROR_FENCED_LEADER_EPOCH;
    if (req->broker_id != p->leader)
        return KAFKA_ERROR_INVALID_REQUEST;
    if (req->partition_epoch < p->partition_epoch)
        return KAFKA_ERROR_INVALID_UPDATE_VERSION;
    if (req->n_isr == 0 || !kraft_ids_contain(req->isr, req->n_isr, p->leader))
        return KAFKA_ERROR_INVALID_REQUEST;
    for (guint i = 0; i < req->n_isr; i++)
        if (!kraft_ids_contain(p->replicas, p->n_replicas, req->isr[i]))
            return KAFKA_ERROR_INVALID_REQUEST;
    for (guint i = 0; i < req->n_isr; i++)
        if (!kraft_image_broker_active(c->latest, req->isr[i]))
            return KAFKA_ERROR_INELIGIBLE_REPLICA; /* KIP-841 */
    return KAFKA_ERROR_NONE;
}

static void
fill_partition(KraftMsg *response, const KraftPartition *p)
{
    response->topic = p->topic;
    response->partition = p->partition;
    response->leader = p->leader;
    response->leader_epoch = p->leader_epoch;
    response->partition_epoch = p->partition_epoch;
    response->n_isr = p->n_isr;
    memcpy(response->isr, p->isr, sizeof(gint32) * p->n_isr);
}

static void
handle_alter_partition(KraftController *c, SimNodeId from, const KraftMsg *req)
{
    const KraftBroker *broker = kraft_image_broker(c->latest, req->broker_id);
    KafkaError error = KAFKA_ERROR_NONE;
    if (broker == NULL || broker->epoch != req->broker_epoch)
        error = KAFKA_ERROR_STALE_BROKER_EPOCH;
    const KraftPartition *p = kraft_image_partition(c->latest, req->topic, req->partition);
    if (error == KAFKA_ERROR_NONE)
        error = validate_alter(c, req, p);
    KraftMsg *response = response_new(c, req, KRAFT_MSG_ALTER_PARTITION_RESPONSE, error);
    response->topic = req->topic;
    response->partition = req->partition;
    if (error != KAFKA_ERROR_NONE) {
        kraft_controller_send(c, from, response);
        return;
    }
    Batch b;
    kraft_controller_batch_init(&b);
    build_change(c, p, req->isr, req->n_isr, KRAFT_NO_LEADER, KRAFT_NO_LEADER, KRAFT_NO_LEADER,
                 &b);
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    p = kraft_image_partition(c->latest, req->topic, req->partition);
    fill_partition(response, p);
    reply_after(c, from, response, offset);
}

/* ProducerIdControlManager.generateNextProducerId: a block of 1000 for a
 * registered broker. */
#define PRODUCER_ID_BLOCK 1000

static void
handle_allocate_producer_ids(KraftController *c, SimNodeId from, const KraftMsg *req)
{
    const KraftBroker *broker = kraft_image_broker(c->latest, req->broker_id);
    if (broker == NULL || broker->epoch != req->broker_epoch) {
        kraft_controller_send(c, from, response_new(c, req, KRAFT_MSG_ALLOCATE_PRODUCER_IDS_RESPONSE,
                                   KAFKA_ERROR_STALE_BROKER_EPOCH));
        return;
    }
    gint64 start = kraft_image_next_producer_id(c->latest);
    Batch b;
    kraft_controller_batch_init(&b);
    KraftRecord r = {.type = KRAFT_REC_PRODUCER_IDS, .broker_id = req->broker_id,
                     .broker_epoch = req->broker_epoch,
                     .next_producer_id = start + PRODUCER_ID_BLOCK};
    g_array_append_val(b.records, r);
    gint64 offset = kraft_controller_write_batch(c, &b);
    kraft_controller_batch_clear(&b);
    if (offset < 0)
        return;
    KraftMsg *response =
        response_new(c, req, KRAFT_MSG_ALLOCATE_PRODUCER_IDS_RESPONSE, KAFKA_ERROR_NONE);
    response->producer_id_start = start;
    response->producer_id_count = PRODUCER_ID_BLOCK;
    reply_after(c, from, response, offset);
}

/* A broker's CreateTopics (its auto-creation of an internal topic):
 * ReplicationControlManager.createTopic placing the replicas with
 * StripedReplicaPlacer over the registered brokers, fenced ones last. */
static void
handle_create_topics(KraftController *c, SimNodeId from, const KraftMsg *req)
{
    KraftMsg *response = response_new(c, req, KRAFT_MSG_CREATE_TOPICS_RESPONSE, KAFKA_ERROR_NONE);
    response->topic = req->topic;
    if (kraft_image_topic_partitions(c->latest, req->topic) > 0) {
        response->error = KAFKA_ERROR_TOPIC_ALREADY_EXISTS;
    } else if (req->n_partitions <= 0) {
        response->error = KAFKA_ERROR_INVALID_PARTITIONS;
    } else if (req->replication_factor <= 0 || req->replication_factor > KAFKA_REPLICAS_MAX) {
        response->error = KAFKA_ERROR_INVALID_REPLICATION_FACTOR;
    } else {
        guint n_brokers = 0;
        g_autofree KraftUsableBroker *usable = usable_brokers(c, &n_brokers);
        guint rf = (guint)req->replication_factor;
        g_autofree gint32 *replicas = g_new(gint32, (gsize)req->n_partitions * rf);
        const char *why = NULL;
        if (!kraft_place_replicas(usable, n_brokers, (guint)req->n_partitions, rf,
                                  c->placer_rng, replicas, &why)) {
            response->error = KAFKA_ERROR_INVALID_REPLICATION_FACTOR;
            kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                         "controller %d refused to create topic %s: %s", kraft_controller_self_id(c),
                         kraft_record_store_topic_name(c->store, req->topic), why);
        } else {
            gint64 offset = write_topic(c, req->topic, (guint)req->n_partitions, rf, replicas,
                                        req->unclean, req->min_isr);
            if (offset < 0) {
                sim_msg_free(&response->base);
                return;
            }
            reply_after(c, from, response, offset);
            return;
        }
    }
    kraft_controller_send(c, from, response);
}

/* ---- the quorum's callbacks ---- */

static void
deactivate(KraftController *c)
{
    if (!c->active)
        return;
    c->active = FALSE;
    kraft_image_free(c->latest);
    c->latest = NULL;
    g_array_set_size(c->sessions, 0);
    g_queue_clear_full(c->replies, pending_reply_free);
    sim_timer_cancel(c->world, c->fence_timer);
    c->fence_timer = SIM_EVENT_ID_NONE;
    kraft_recovery_clear(c);
}

/* QuorumController.claim: active from the epoch's first commit, every
 * registered broker's session starting now. */
static void
activate(KraftController *c)
{
    c->active = TRUE;
    c->active_epoch = raft_node_epoch(c->raft);
    c->latest = kraft_image_copy(c->committed);
    replay_log(c, c->latest, G_MAXINT64, NULL);
    const GArray *brokers = kraft_image_brokers(c->latest);
    for (guint i = 0; i < brokers->len; i++)
        session_touch(c, g_array_index(brokers, KraftBroker, i).id);
    kraft_controller_record_event(c, HISTORY_EVENT_CONTROLLER, 0, -1, NULL,
                 "controller %d became controller (the active KRaft controller) in epoch %d",
                 kraft_controller_self_id(c), c->active_epoch);
    schedule_fence_check(c);
    create_topics(c);
    if (c->cfg.unclean_recovery_manager_enabled)
        kraft_recovery_schedule_poll(c);
}

static void
claim_fired(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    KraftController *c = arg;
    c->claim_timer = SIM_EVENT_ID_NONE;
    if (!c->active && raft_node_role(c->raft) == RAFT_ROLE_LEADER &&
        raft_node_high_watermark(c->raft) >= 0)
        activate(c);
}

static void
on_committed(void *user_data, RaftNode *raft, gint64 high_watermark)
{
    KraftController *c = user_data;
    /* A follower hears of its leader through what commits, also after a
     * restart that announced none. */
    if (raft_node_leader_id(raft) != RAFT_NO_NODE)
        c->known_leader = raft_node_leader_id(raft);
    /* A new image, or one below the log start offset, starts from the
     * latest snapshot (kraft_snapshot.h); what it replays after counts
     * toward the next snapshot. */
    if (kraft_snapshot_maybe_load(raft, c->store, c->committed, high_watermark))
        kraft_snapshot_generator_reset(&c->snapshots, kraft_controller_now_ns(c));
    gint64 timestamp_ms = -1;
    gint64 bytes = replay_log(c, c->committed, high_watermark, &timestamp_ms);
    kraft_snapshot_publish(&c->snapshots, raft, c->store, c->committed, bytes, timestamp_ms);
    /* The quorum's controllers, and the brokers, replay one log: they keep
     * one copy of what their committed images agree on. */
    kraft_image_intern(c->committed, c->store);
    if (c->active)
        release_replies(c, high_watermark);
    else if (raft_node_role(c->raft) == RAFT_ROLE_LEADER &&
             !sim_timer_pending(c->world, c->claim_timer))
        /* Claimed from the event loop, not inside the quorum's callback:
         * activating writes records. */
        c->claim_timer =
            sim_timer_set(c->world, raft_node_sim_node(c->raft), 0, claim_fired, c);
}

static void
on_leader_changed(void *user_data, RaftNode *raft, gint32 epoch, gint32 leader_id)
{
    (void)raft;
    KraftController *c = user_data;
    if (c->active && (leader_id != kraft_controller_self_id(c) || epoch != c->active_epoch))
        deactivate(c);
    if (leader_id == RAFT_NO_NODE && raft_node_role(raft) == RAFT_ROLE_CANDIDATE &&
        c->known_leader != RAFT_NO_NODE && c->election_fn != NULL)
        c->election_fn(c->election_data, c->known_leader, epoch);
    if (leader_id != RAFT_NO_NODE)
        c->known_leader = leader_id;
    else if (raft_node_role(raft) == RAFT_ROLE_CANDIDATE)
        c->known_leader = RAFT_NO_NODE;
}

static void
on_message(void *user_data, RaftNode *raft, SimNodeId from, SimMsg *msg)
{
    (void)raft;
    KraftController *c = user_data;
    if (msg->type < KRAFT_MSG_FIRST || msg->type > KRAFT_MSG_LAST) {
        sim_msg_free(msg);
        return;
    }
    const KraftMsg *req = (const KraftMsg *)msg;
    if (msg->type == KRAFT_MSG_GET_REPLICA_LOG_INFO_RESPONSE) {
        if (c->active)
            kraft_recovery_handle_log_info(c, req);
        sim_msg_free(msg);
        return;
    }
    KraftMsgType answer = req->base.type + 1;
    gboolean request = msg->type == KRAFT_MSG_REGISTRATION_REQUEST ||
                       msg->type == KRAFT_MSG_HEARTBEAT_REQUEST ||
                       msg->type == KRAFT_MSG_ALTER_PARTITION_REQUEST ||
                       msg->type == KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST ||
                       msg->type == KRAFT_MSG_CREATE_TOPICS_REQUEST;
    if (!request) {
        sim_msg_free(msg);
        return;
    }
    if (!c->active) {
        kraft_controller_send(c, from, response_new(c, req, answer, KAFKA_ERROR_NOT_CONTROLLER));
    } else if (msg->type == KRAFT_MSG_REGISTRATION_REQUEST) {
        handle_registration(c, from, req);
    } else if (msg->type == KRAFT_MSG_HEARTBEAT_REQUEST) {
        handle_heartbeat(c, from, req);
    } else if (msg->type == KRAFT_MSG_ALLOCATE_PRODUCER_IDS_REQUEST) {
        handle_allocate_producer_ids(c, from, req);
    } else if (msg->type == KRAFT_MSG_CREATE_TOPICS_REQUEST) {
        handle_create_topics(c, from, req);
    } else {
        handle_alter_partition(c, from, req);
    }
    sim_msg_free(msg);
}

static void
on_crashed(void *user_data, RaftNode *raft)
{
    (void)raft;
    KraftController *c = user_data;
    deactivate(c);
    c->known_leader = RAFT_NO_NODE;
    sim_timer_cancel(c->world, c->claim_timer);
    c->claim_timer = SIM_EVENT_ID_NONE;
    /* Memory is gone: a restarted controller replays the log from the start. */
    kraft_image_free(c->committed);
    c->committed = kraft_image_new();
    kraft_snapshot_generator_reset(&c->snapshots, kraft_controller_now_ns(c));
}

KraftController *
kraft_controller_new(RaftNode *raft, KraftRecordStore *store, const KraftControllerConfig *cfg,
                     History *history)
{
    KraftController *c = g_new0(KraftController, 1);
    c->raft = raft;
    c->world = raft_node_world(raft);
    c->store = store;
    if (cfg != NULL)
        c->cfg = *cfg;
    else
        kraft_controller_config_init(&c->cfg);
    c->history = history;
    c->topics = g_ptr_array_new_with_free_func(topic_spec_free);
    g_autofree char *stream = g_strdup_printf("controller-%d/placer", raft_node_id(raft));
    c->placer_rng = sim_world_rng(c->world, stream);
    c->committed = kraft_image_new();
    c->sessions = g_array_new(FALSE, FALSE, sizeof(Session));
    c->replies = g_queue_new();
    c->fence_timer = SIM_EVENT_ID_NONE;
    c->claim_timer = SIM_EVENT_ID_NONE;
    c->known_leader = RAFT_NO_NODE;
    c->recoveries = g_ptr_array_new();
    c->recovery_poll_timer = SIM_EVENT_ID_NONE;
    kraft_snapshot_generator_init(&c->snapshots, c->cfg.snapshot_max_new_record_bytes,
                                  c->cfg.snapshot_max_interval_ns, kraft_controller_now_ns(c));
    RaftListener listener = {on_committed, on_leader_changed, on_message, on_crashed};
    raft_node_set_listener(raft, &listener, c);
    return c;
}

void
kraft_controller_free(KraftController *c)
{
    if (c == NULL)
        return;
    kraft_image_free(c->committed);
    kraft_image_free(c->latest);
    g_array_free(c->sessions, TRUE);
    g_queue_free_full(c->replies, pending_reply_free);
    for (guint i = 0; i < c->recoveries->len; i++)
        g_free(g_ptr_array_index(c->recoveries, i));
    g_ptr_array_free(c->recoveries, TRUE);
    g_ptr_array_free(c->topics, TRUE);
    g_free(c);
}

void
kraft_controller_add_topic(KraftController *c, const char *name, const gint32 *replicas,
                           guint n_partitions, guint rf, gboolean unclean, gint32 min_isr)
{
    KSIM_ASSERT(n_partitions > 0 && rf > 0 && rf <= KAFKA_REPLICAS_MAX);
    TopicSpec *spec = g_new0(TopicSpec, 1);
    spec->name = g_strdup(name);
    spec->n_partitions = n_partitions;
    spec->wanted = n_partitions;
    spec->rf = rf;
    spec->replicas = g_memdup2(replicas, sizeof(gint32) * n_partitions * rf);
    spec->unclean = unclean;
    spec->min_isr = min_isr;
    g_ptr_array_add(c->topics, spec);
    kraft_record_store_topic(c->store, name);
}

static void
add_partitions_fired(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)ctx;
    KraftController *c = arg;
    if (c->active)
        create_topics(c);
}

void
kraft_controller_add_partitions(KraftController *c, const char *name, guint partitions)
{
    for (guint t = 0; t < c->topics->len; t++) {
        TopicSpec *spec = g_ptr_array_index(c->topics, t);
        if (strcmp(spec->name, name) == 0)
            spec->wanted = MAX(spec->wanted, partitions);
    }
    /* Handled on the controller's own node: not while it is paused, not at
     * all when it is down (the next active controller does it). */
    sim_timer_set(c->world, raft_node_sim_node(c->raft), 0, add_partitions_fired, c);
}

void
kraft_controller_set_election_observer(KraftController *c, KraftElectionFn fn, void *user_data)
{
    c->election_fn = fn;
    c->election_data = user_data;
}

gboolean
kraft_controller_active(const KraftController *c)
{
    return c->active;
}

const KraftImage *
kraft_controller_image(const KraftController *c)
{
    return c->committed;
}

RaftNode *
kraft_controller_raft(const KraftController *c)
{
    return c->raft;
}

static void
check_image(const KraftImage *image)
{
    g_autoptr(GPtrArray) all = kraft_image_partitions(image);
    for (guint i = 0; i < all->len; i++) {
        const KraftPartition *p = g_ptr_array_index(all, i);
        KSIM_ASSERT(p->n_isr > 0 || p->leader == KRAFT_NO_LEADER);
        for (guint k = 0; k < p->n_elr; k++)
            KSIM_ASSERT(!kraft_ids_contain(p->isr, p->n_isr, p->elr[k]));
        for (guint k = 0; k < p->n_isr; k++)
            KSIM_ASSERT(kraft_ids_contain(p->replicas, p->n_replicas, p->isr[k]));
        KSIM_ASSERT(p->leader == KRAFT_NO_LEADER || kraft_ids_contain(p->isr, p->n_isr, p->leader));
    }
}

void
kraft_controller_check_invariants(const KraftController *c)
{
    KSIM_ASSERT(c->active || (c->latest == NULL && c->sessions->len == 0 &&
                              g_queue_is_empty(c->replies) && c->recoveries->len == 0));
    if (!c->cfg.unclean_recovery_manager_enabled)
        KSIM_ASSERT(c->recoveries->len == 0);
    if (c->active)
        KSIM_ASSERT(kraft_image_end_offset(c->latest) >= kraft_image_end_offset(c->committed));
    check_image(c->committed);
    if (c->latest != NULL)
        check_image(c->latest);
}
