/*
 * controller_election: the controller's election rules (controller_election.h).
 * Stateless: every function reads its arguments and writes only `*next`.
 */
#include "controller_election.h"

#include "sim_assert.h"

static gboolean
is_live(const ControllerElectionInput *input, gint32 broker_id)
{
    if (broker_id < 0 || (guint)broker_id >= input->n_live)
        return FALSE;
    return input->live[broker_id] != 0;
}

static gboolean
is_shutting(const ControllerElectionInput *input, gint32 broker_id)
{
    if (input->shutting == NULL || broker_id < 0 || (guint)broker_id >= input->n_shutting)
        return FALSE;
    return input->shutting[broker_id] != 0;
}

/* The members of `old`'s ISR that are live, in ISR order, into `next`. */
static void
keep_live_isr(const ControllerElectionInput *input, const KPartitionState *old,
              KPartitionState *next)
{
    guint8 n = 0;
    for (guint i = 0; i < old->n_isr; i++) {
        if (is_live(input, old->isr[i]))
            next->isr[n++] = old->isr[i];
    }
    next->n_isr = n;
}

gint32
controller_election_first_live(const ControllerElectionInput *input, const KPartitionState *state,
                               gboolean require_isr)
{
    KSIM_ASSERT(input->assignment != NULL || input->n_assignment == 0);
    for (guint i = 0; i < input->n_assignment; i++) {
        gint32 replica = input->assignment[i];
        if (!is_live(input, replica))
            continue;
        if (require_isr && !kpartition_state_in_isr(state, replica))
            continue;
        return replica;
    }
    return KAFKA_NO_LEADER;
}

/* No replica can lead: the partition goes offline, keeping the live part of
 * its ISR, or its last member when all died. */
static ControllerElectionOutcome
go_offline(const ControllerElectionInput *input, const KPartitionState *old, KPartitionState *next)
{
    /* Already offline: nothing to write until a replica can lead. */
    if (old->leader == KAFKA_NO_LEADER)
        return CONTROLLER_ELECTION_UNCHANGED;
    next->leader = KAFKA_NO_LEADER;
    keep_live_isr(input, old, next);
    if (next->n_isr == 0 && old->n_isr > 0) {
        /* Kafka removes dead replicas from the ISR one at a time and never
         * the last one: when they all died, the last of them stays. */
        next->isr[0] = old->isr[old->n_isr - 1];
        next->n_isr = 1;
    }
    next->leader_epoch = old->leader_epoch + 1;
    return CONTROLLER_ELECTION_OFFLINE;
}

ControllerElectionOutcome
controller_election_decide(const ControllerElectionInput *input, const KPartitionState *old,
                           KPartitionState *next)
{
    KSIM_ASSERT(old->n_isr <= KAFKA_REPLICAS_MAX);
    *next = *old;
    next->controller_epoch = input->controller_epoch;
    if (old->leader != KAFKA_NO_LEADER && is_live(input, old->leader)) {
        /* The leader lives: it stays, and dead brokers leave the ISR. */
        keep_live_isr(input, old, next);
        if (next->n_isr == old->n_isr)
            return CONTROLLER_ELECTION_UNCHANGED;
        next->leader_epoch = old->leader_epoch + 1;
        return CONTROLLER_ELECTION_ISR_SHRUNK;
    }
    ControllerElectionOutcome outcome = CONTROLLER_ELECTION_CLEAN;
    gint32 leader = controller_election_first_live(input, old, TRUE);
    if (leader == KAFKA_NO_LEADER && input->unclean_leader_election) {
        leader = controller_election_first_live(input, old, FALSE);
        outcome = CONTROLLER_ELECTION_UNCLEAN;
    }
    if (leader == KAFKA_NO_LEADER)
        return go_offline(input, old, next);
    next->leader = leader;
    next->leader_epoch = old->leader_epoch + 1;
    if (outcome == CONTROLLER_ELECTION_UNCLEAN) {
        /* A leader from outside the ISR: its log is all the ISR there is. */
        next->isr[0] = leader;
        next->n_isr = 1;
    } else {
        keep_live_isr(input, old, next);
    }
    /* Postconditions: a live leader, in its ISR, in a newer epoch. */
    KSIM_ASSERT(is_live(input, next->leader));
    KSIM_ASSERT(kpartition_state_in_isr(next, next->leader));
    KSIM_ASSERT(next->leader_epoch > old->leader_epoch);
    return outcome;
}

/* The members of `old`'s ISR that are not shutting down, in ISR order, into
 * `next`; the last member stays when every member is shutting down (Kafka's
 * OfflineReplica transition never empties an ISR). */
static void
drop_shutting_from_isr(const ControllerElectionInput *input, const KPartitionState *old,
                       KPartitionState *next)
{
    guint8 n = 0;
    for (guint i = 0; i < old->n_isr; i++) {
        if (!is_shutting(input, old->isr[i]))
            next->isr[n++] = old->isr[i];
    }
    if (n == 0 && old->n_isr > 0)
        next->isr[n++] = old->isr[old->n_isr - 1];
    next->n_isr = n;
}

ControllerElectionOutcome
controller_election_shutdown(const ControllerElectionInput *input, const KPartitionState *old,
                             KPartitionState *next)
{
    *next = *old;
    next->controller_epoch = input->controller_epoch;
    if (old->leader == KAFKA_NO_LEADER)
        return CONTROLLER_ELECTION_UNCHANGED;
    if (is_shutting(input, old->leader)) {
        if (input->n_assignment <= 1)
            return CONTROLLER_ELECTION_UNCHANGED; /* nobody else is assigned */
        gint32 leader = KAFKA_NO_LEADER;
        for (guint i = 0; i < input->n_assignment && leader == KAFKA_NO_LEADER; i++) {
            gint32 replica = input->assignment[i];
            if (is_live(input, replica) && !is_shutting(input, replica) &&
                kpartition_state_in_isr(old, replica))
                leader = replica;
        }
        if (leader == KAFKA_NO_LEADER)
            return CONTROLLER_ELECTION_UNCHANGED;
        next->leader = leader;
        drop_shutting_from_isr(input, old, next);
        next->leader_epoch = old->leader_epoch + 1;
        KSIM_ASSERT(kpartition_state_in_isr(next, next->leader));
        return CONTROLLER_ELECTION_CLEAN;
    }
    drop_shutting_from_isr(input, old, next);
    if (next->n_isr == old->n_isr)
        return CONTROLLER_ELECTION_UNCHANGED;
    next->leader_epoch = old->leader_epoch + 1;
    return CONTROLLER_ELECTION_ISR_SHRUNK;
}

gboolean
controller_election_preferred(const KPartitionState *old, gint32 preferred, gint32 controller_epoch,
                              KPartitionState *next)
{
    KSIM_ASSERT(preferred >= 0);
    KSIM_ASSERT(old->leader != preferred);
    /* Kafka also leaves a partition alone while its leader is unknown: an
     * offline partition is the offline election's business. */
    if (old->leader == KAFKA_NO_LEADER || !kpartition_state_in_isr(old, preferred))
        return FALSE;
    *next = *old;
    next->leader = preferred;
    next->leader_epoch = old->leader_epoch + 1;
    next->controller_epoch = controller_epoch;
    return TRUE;
}
