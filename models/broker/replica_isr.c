/*
 * replica_isr: a leader's changes to its ISR (Kafka's Partition.maybeShrinkIsr
 * and maybeExpandIsr, written to the partition's state znode as Kafka's ZK
 * mode does). A follower that has not caught up for replica.lag.time.max.ms
 * leaves (checked every half of it); one whose LEO reached the HW and this
 * term's start offset joins. A leader proposes one change at a time, as a
 * conditional write on the znode version it last knew; an accepted change is
 * adopted, recorded, announced in /isr_change_notification, and may move the
 * HW (replica_hw.c).
 *
 * Invariants (replica_isr_check_invariants):
 *  1. The ISR is a subset of the replicas. (That a new leader is in its ISR is
 *     a cluster invariant the cluster's monitor records when broken; a run
 *     never aborts on it.)
 *  2. Only a leader has an ISR update in flight.
 *
 * Transitions of a leader's ISR update:
 *   IDLE --shrink or expand proposed--> IN FLIGHT (propose_isr)
 *   IN FLIGHT --written--> IDLE, ISR adopted (isr_updated, adopt_isr)
 *   IN FLIGHT --BAD_VERSION--> CHECKING (isr_updated reads the znode)
 *   CHECKING --our own write found--> IDLE, ISR adopted (isr_checked)
 *   CHECKING --the controller moved on--> IDLE, wait for LeaderAndIsr
 *   any --new leader epoch or follower role--> IDLE (replica.c)
 */
#include "replica.h"

#include "replica_internal.h"
#include "broker_kraft.h"
#include "sim_assert.h"

#include <string.h>

typedef struct {
    KTopicPartition tp;
    gint32 leader_epoch;
    KPartitionState proposed;
} IsrUpdate;

static void
isr_notification_created(void *owner, const ZkResult *result, void *arg)
{
    (void)owner;
    (void)result;
    (void)arg;
}

/* The ISR a leader wrote (or found written) at znode version `version`
 * becomes its own; an actual change is recorded and announced. */
static void
adopt_isr(BrokerState *state, Partition *p, const gint32 *isr, guint n_isr, gint32 version)
{
    p->zk_version = version;
    if (n_isr == p->n_isr && memcmp(isr, p->isr, sizeof(gint32) * n_isr) == 0)
        return;
    GString *before = g_string_new(NULL), *after = g_string_new(NULL);
    for (guint i = 0; i < p->n_isr; i++)
        g_string_append_printf(before, "%s%d", i ? "," : "", p->isr[i]);
    if (n_isr == 1 && p->n_isr > 1)
        SIM_MARK(state->broker->world, isr_shrink_to_one);
    p->n_isr = (guint8)n_isr;
    p->isr = kbroker_ids_intern(isr, n_isr);
    replica_fetch_touch(state, p, FALSE);
    for (guint i = 0; i < p->n_isr; i++)
        g_string_append_printf(after, "%s%d", i ? "," : "", p->isr[i]);
    HistoryEvent fields = {0};
    fields.leader_epoch = p->leader_epoch;
    fields.hw = p->hw;
    fields.isr = broker_history_isr(state->broker, p->isr, p->n_isr);
    g_autofree char *name = ktp_name(&p->tp);
    broker_record_event(state->broker, HISTORY_EVENT_ISR_CHANGED, &p->tp, &fields,
                        "leader %d changed the ISR of %s from [%s] to [%s]",
                        state->broker->config.broker_id, name, before->str, after->str);
    g_string_free(before, TRUE);
    g_string_free(after, TRUE);
    if (state->zk != NULL)
        zk_client_create(state->zk, "/isr_change_notification/isr_change_", name, strlen(name),
                         ZK_SEQUENTIAL, isr_notification_created, NULL);
    replica_hw_maybe_increment(state, p);
    replica_hw_try_complete_produces(state, p);
}

static Partition *
update_target(BrokerState *state, const IsrUpdate *update)
{
    Partition *p = replica_get(state, &update->tp);
    if (p == NULL || !p->is_leader || p->leader_epoch != update->leader_epoch)
        return NULL;
    return p;
}

/* After a BAD_VERSION: the znode as it is. If it still names this leader in
 * this epoch, the mismatch came from our own earlier write whose answer was
 * lost (a connection loss after the server applied it): adopt what is there
 * and its version, as Kafka's leader does since KAFKA-2729 (comparing the
 * znode's data with its own). Otherwise the controller moved on: wait for
 * its LeaderAndIsr. */
static void
isr_checked(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    IsrUpdate *update = arg;
    Partition *p = update_target(state, update);
    if (p != NULL) {
        p->isr_update_in_flight = FALSE;
        KPartitionState found = update->proposed;
        if (result->error == ZK_OK &&
            kpartition_state_parse((const char *)result->data, result->len, &found) &&
            found.leader == state->broker->config.broker_id &&
            found.leader_epoch == p->leader_epoch)
            adopt_isr(state, p, found.isr, found.n_isr, result->version);
    }
    broker_zk_context_done(state, update);
}

static void
isr_updated(void *owner, const ZkResult *result, void *arg)
{
    BrokerState *state = owner;
    IsrUpdate *update = arg;
    Partition *p = update_target(state, update);
    if (p != NULL && result->error == ZK_BAD_VERSION) {
        g_autofree char *path = g_strdup_printf("/brokers/topics/%s/partitions/%d/state",
                                                p->tp.topic, p->tp.partition);
        zk_client_get(state->zk, path, FALSE, isr_checked, update);
        return; /* the check's callback owns `update` now */
    }
    if (p != NULL) {
        p->isr_update_in_flight = FALSE;
        if (result->error == ZK_OK)
            adopt_isr(state, p, update->proposed.isr, update->proposed.n_isr, result->version);
    }
    broker_zk_context_done(state, update);
}

/* KRaft (KIP-497): the change goes to the active controller as
 * AlterPartition naming the partition epoch the leader knows. */
static void
propose_isr_kraft(BrokerState *state, Partition *p, const gint32 *isr, guint n_isr)
{
    KraftMsg *msg = kraft_msg_new(KRAFT_MSG_ALTER_PARTITION_REQUEST, 0);
    msg->topic = broker_kraft_topic_id(state->kraft, p->tp.topic);
    msg->partition = p->tp.partition;
    msg->leader_epoch = p->leader_epoch;
    msg->partition_epoch = p->zk_version;
    msg->n_isr = (guint8)n_isr;
    memcpy(msg->isr, isr, sizeof(gint32) * n_isr);
    if (!broker_kraft_send_alter(state->kraft, msg))
        return;
    p->isr_update_in_flight = TRUE;
    p->isr_update_deadline_ns =
        sim_now_ns(state->broker->world) +
        state->broker->config.controller_quorum_request_timeout_ms * SIM_NS_PER_MS;
}

void
replica_isr_altered(BrokerState *state, const KraftMsg *response, const char *topic)
{
    KTopicPartition tp;
    ktp_set(&tp, topic, response->partition);
    Partition *p = replica_get(state, &tp);
    if (p == NULL || !p->is_leader || !p->isr_update_in_flight)
        return;
    p->isr_update_in_flight = FALSE;
    /* An error (a stale partition epoch, a fenced replica, a controller
     * that moved) leaves the change to be proposed again, with what the
     * metadata log says by then. */
    if (response->error == KAFKA_ERROR_NONE && response->leader_epoch == p->leader_epoch &&
        response->leader == state->broker->config.broker_id)
        adopt_isr(state, p, response->isr, response->n_isr, response->partition_epoch);
}

void
replica_isr_from_metadata(BrokerState *state, Partition *p, const KPartitionState *ps)
{
    if (!p->is_leader || ps->leader_epoch != p->leader_epoch || ps->zk_version <= p->zk_version)
        return;
    adopt_isr(state, p, ps->isr, ps->n_isr, ps->zk_version);
}

/* A KRaft AlterPartition unanswered past its request timeout is lost. */
static gboolean
update_in_flight(BrokerState *state, Partition *p)
{
    if (p->isr_update_in_flight && state->kraft != NULL &&
        sim_now_ns(state->broker->world) >= p->isr_update_deadline_ns)
        p->isr_update_in_flight = FALSE;
    return p->isr_update_in_flight;
}

static void
propose_isr(BrokerState *state, Partition *p, const gint32 *isr, guint n_isr)
{
    if (state->kraft != NULL) {
        propose_isr_kraft(state, p, isr, n_isr);
        return;
    }
    IsrUpdate *update = broker_zk_context(state, sizeof(IsrUpdate));
    update->tp = p->tp;
    update->leader_epoch = p->leader_epoch;
    KPartitionState *ps = &update->proposed;
    ps->tp = p->tp;
    ps->leader = p->leader_id;
    ps->leader_epoch = p->leader_epoch;
    ps->controller_epoch = p->controller_epoch;
    ps->n_isr = (guint8)n_isr;
    memcpy(ps->isr, isr, sizeof(gint32) * n_isr);
    GString *data = g_string_new(NULL);
    kpartition_state_serialize(ps, data);
    g_autofree char *path =
        g_strdup_printf("/brokers/topics/%s/partitions/%d/state", p->tp.topic, p->tp.partition);
    p->isr_update_in_flight = TRUE;
    zk_client_set(state->zk, path, data->str, data->len, p->zk_version, isr_updated, update);
    g_string_free(data, TRUE);
}

gboolean
replica_isr_may_join(const Partition *p, const RemoteReplica *remote)
{
    return !replica_in_isr(p, remote->broker_id) && remote->leo >= p->hw &&
           remote->leo >= p->leader_epoch_start_offset;
}

void
replica_isr_maybe_expand(BrokerState *state, Partition *p, const RemoteReplica *remote)
{
    if (update_in_flight(state, p) || !replica_isr_may_join(p, remote))
        return;
    gint32 isr[KAFKA_REPLICAS_MAX];
    guint n = 0;
    for (guint i = 0; i < p->n_isr; i++)
        isr[n++] = p->isr[i];
    isr[n++] = remote->broker_id;
    propose_isr(state, p, isr, n);
}

static void
replica_isr_expiration(BrokerState *state)
{
    Broker *broker = state->broker;
    gint64 now = sim_now_ns(broker->world);
    gint64 lag_max_ns = broker->config.replica_lag_time_max_ms * SIM_NS_PER_MS;
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        if (!p->is_leader || update_in_flight(state, p))
            continue;
        /* The follower fetch times its sessions' quiet reads kept. */
        replica_fetch_settle(state, p);
        gint32 isr[KAFKA_REPLICAS_MAX];
        guint n = 0;
        for (guint r = 0; r < p->n_isr; r++) {
            gint32 id = p->isr[r];
            gboolean lagging = FALSE;
            for (guint k = 0; k < p->n_remotes; k++) {
                if (p->remotes[k].broker_id == id)
                    lagging = now - p->remotes[k].last_caught_up_ns > lag_max_ns;
            }
            if (!lagging)
                isr[n++] = id;
        }
        if (n < p->n_isr)
            propose_isr(state, p, isr, n);
    }
}

/* Kafka checks every replica.lag.time.max.ms / 2. */
static gint64
isr_expiration_period_ns(const BrokerConfig *config)
{
    return config->replica_lag_time_max_ms * SIM_NS_PER_MS / 2;
}

static const ReplicaTask ISR_EXPIRATION = {replica_isr_expiration, isr_expiration_period_ns};

void
replica_isr_start(BrokerState *state)
{
    replica_task_start(state, &ISR_EXPIRATION);
}

void
replica_isr_check_invariants(const BrokerState *state)
{
    for (guint i = 0; i < state->partitions_sorted->len; i++) {
        const Partition *p = g_ptr_array_index(state->partitions_sorted, i);
        KSIM_ASSERT(p->n_isr <= p->n_replicas);
        for (guint k = 0; k < p->n_isr; k++) {
            gboolean assigned = FALSE;
            for (guint r = 0; r < p->n_replicas; r++)
                assigned = assigned || p->replicas[r] == p->isr[k];
            KSIM_ASSERT(assigned);
        }
        if (!p->is_leader)
            KSIM_ASSERT(!p->isr_update_in_flight);
    }
}
