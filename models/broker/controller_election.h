/*
 * controller_election: where a partition leader is elected — the controller's
 * decision of a partition's next state from its current state, its
 * assignment and the live brokers, as pure functions (no I/O, no clock).
 *
 * Followed: Kafka's PartitionLeaderElectionAlgorithms.
 *  - offlinePartitionLeaderElection: the first replica in assignment order
 *    that is live and in the ISR; failing that, with
 *    unclean.leader.election.enable, the first live replica in assignment
 *    order (its ISR is just itself); failing that, the partition goes
 *    offline (leader -1).
 *  - preferredReplicaPartitionLeaderElection: the first assigned replica
 *    leads if it is live and in the ISR.
 *  - controlledShutdownPartitionLeaderElection (Kafka 2.8's
 *    PartitionLeaderElectionAlgorithms, with KafkaController
 *    .doControlledShutdown and ReplicaStateMachine's OfflineReplica): a
 *    partition led by a broker that is shutting down gets the first replica
 *    in assignment order that is live, in the ISR and not shutting down, and
 *    the brokers shutting down leave its ISR; with no such replica it stays
 *    as it is (a partition the broker still leads). A partition the broker
 *    only follows loses it from its ISR, unless it is the ISR's last member.
 * A partition whose leader lives keeps it; dead brokers leave its ISR. An
 * offline partition keeps the last member of its ISR when all died (Kafka
 * never removes the last one, so it can come back as leader without losing
 * what it acknowledged).
 */
#ifndef CONTROLLER_ELECTION_H
#define CONTROLLER_ELECTION_H

#include <glib.h>

#include "kafka_proto.h"

/* What the controller knows of a partition's surroundings when it decides. */
typedef struct {
    const gint32 *assignment; /* the replicas, in assignment order */
    guint n_assignment;
    const guint8 *live; /* live[id] != 0: broker `id` is live; ids >= n_live are not */
    guint n_live;
    /* shutting[id] != 0: broker `id` asked for a controlled shutdown; ids >=
     * n_shutting (or all, with NULL) are not shutting down. */
    const guint8 *shutting;
    guint n_shutting;
    gboolean unclean_leader_election; /* the topic's unclean.leader.election.enable */
    gint32 controller_epoch;          /* stamped on every next state */
} ControllerElectionInput;

typedef enum {
    CONTROLLER_ELECTION_UNCHANGED = 0, /* the state stays as it is */
    CONTROLLER_ELECTION_ISR_SHRUNK,    /* the live leader stays; dead brokers left the ISR */
    CONTROLLER_ELECTION_CLEAN,         /* a new leader from the ISR */
    CONTROLLER_ELECTION_UNCLEAN,       /* a new leader from outside the ISR */
    CONTROLLER_ELECTION_OFFLINE,       /* no leader possible: leader -1 */
} ControllerElectionOutcome;

/* The first replica in `input`'s assignment that is live and, when
 * `require_isr`, in `state`'s ISR; KAFKA_NO_LEADER if none. */
gint32 controller_election_first_live(const ControllerElectionInput *input,
                                      const KPartitionState *state, gboolean require_isr);

/* Decides the next state of an existing partition whose current state is
 * `old`: `*next` is `old` with the controller epoch of `input` and, unless
 * the outcome is UNCHANGED, the new leader, ISR and leader epoch (old + 1).
 * The replicas of `*next` are left as in `old`. */
ControllerElectionOutcome controller_election_decide(const ControllerElectionInput *input,
                                                     const KPartitionState *old,
                                                     KPartitionState *next);

/* The controlled-shutdown step for a partition whose state is `old` (the
 * offline election's result, when it made one): CLEAN with a new leader,
 * ISR_SHRUNK when only followers left the ISR, or UNCHANGED (the leader is
 * shutting down and nobody can take over, or no replica is shutting down).
 * `*next` is as for controller_election_decide. */
ControllerElectionOutcome controller_election_shutdown(const ControllerElectionInput *input,
                                                       const KPartitionState *old,
                                                       KPartitionState *next);

/* Kafka's preferred replica election for a partition that `preferred` (its
 * first assigned replica, live) does not lead: TRUE, and `*next` with
 * `preferred` as leader in a new leader epoch and the same ISR, when the
 * partition is online and `preferred` is in its ISR; FALSE otherwise. */
gboolean controller_election_preferred(const KPartitionState *old, gint32 preferred,
                                       gint32 controller_epoch, KPartitionState *next);

#endif
