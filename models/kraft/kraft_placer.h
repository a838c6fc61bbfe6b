/*
 * kraft_placer: where the KRaft controller puts a new topic's replicas,
 * Kafka's StripedReplicaPlacer (org.apache.kafka.metadata.placement; Apache
 * Kafka 4.0, commit 1eb7644 of trunk).
 *
 * The usable brokers are grouped by rack (a broker without one is in the
 * rack "none", sorted first), each rack keeping its unfenced and its fenced
 * brokers sorted by id with a random starting offset; the racks are sorted
 * by name (here: rack id) with a random starting offset too. Each partition
 * takes its leader from the first rack, from offset on, that has an unfenced
 * broker left in this iteration epoch, and its other replicas one rack at a
 * time round the list (unfenced brokers before fenced ones); then the epoch
 * and the rack offset advance by one, which gives the "striped" pattern.
 * Once as many partitions as there are unfenced brokers were placed, the
 * racks and brokers are shuffled and a new round begins.
 *
 * Placement fails, as Kafka's InvalidReplicationFactorException, when the
 * replication factor is not positive, exceeds the usable brokers, or every
 * broker is fenced.
 */
#ifndef KRAFT_PLACER_H
#define KRAFT_PLACER_H

#include <glib.h>

#include "sim_rng.h"

typedef struct {
    gint32 id;
    gint32 rack; /* a rack id (any order-preserving number), -1: none */
    gboolean fenced;
} KraftUsableBroker;

/* Places `n_partitions` partitions of `rf` replicas over `brokers` (any
 * order) drawing from `rng`: fills `out` (n_partitions * rf ids, partition
 * by partition, the leader first) and returns TRUE; FALSE with `why` set
 * (static text) when it cannot. */
gboolean kraft_place_replicas(const KraftUsableBroker *brokers, guint n_brokers,
                              guint n_partitions, guint rf, SimRng *rng, gint32 *out,
                              const char **why);

#endif
