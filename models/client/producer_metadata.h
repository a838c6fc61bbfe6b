/*
 * producer_metadata: a producer's view of the cluster (Kafka's client
 * Metadata): the live brokers and, per topic, the partition count and each
 * partition's leader and leader epoch, as the last Metadata responses said.
 *
 * The view may be stale: a broker answers from its own cache. As Kafka's
 * client does since KIP-320, an update never moves a partition back to an
 * older leader epoch, so an answer from a lagging broker cannot undo a newer
 * one. A partition has a usable leader only when the leader is among the live
 * brokers of the view.
 *
 * It is pure bookkeeping: when to ask, and whom, is the producer's business.
 */
#ifndef PRODUCER_METADATA_H
#define PRODUCER_METADATA_H

#include <glib.h>

#include "kafka_proto.h"
#include "sim_world.h"

typedef struct ProducerMetadata ProducerMetadata;

/* An empty view: no broker, no topic, never refreshed. (transfer full) */
ProducerMetadata *producer_metadata_new(void);
void producer_metadata_free(ProducerMetadata *metadata);

/* Takes in a Metadata response received at `now_ns`. */
void producer_metadata_update(ProducerMetadata *metadata, const KMetadataResponse *response,
                              gint64 now_ns);

/* Counts updates, so that callers may cache what they read between two. */
guint64 producer_metadata_version(const ProducerMetadata *metadata);

/* When the view was last refreshed; G_MININT64 before the first response. */
gint64 producer_metadata_refreshed_ns(const ProducerMetadata *metadata);

/* The topic's partition count, or 0 when the view does not know the topic. */
guint32 producer_metadata_partition_count(const ProducerMetadata *metadata, const char *topic);

/* The partitions of `topic` with a usable leader, ascending (Kafka's
 * availablePartitionsForTopic); NULL when the topic is unknown. The array
 * stays the topic's for the view's life; updates change its contents.
 * (transfer none) */
const GArray *producer_metadata_available(const ProducerMetadata *metadata, const char *topic);

/* The partition's usable leader (broker id), or KAFKA_NO_LEADER. */
gint32 producer_metadata_leader(const ProducerMetadata *metadata, const KTopicPartition *tp);

/* The node of a live broker of the view, or SIM_NODE_NONE. */
SimNodeId producer_metadata_broker_node(const ProducerMetadata *metadata, gint32 broker_id);

/* The live brokers' nodes, by broker id. (transfer none) */
const GArray *producer_metadata_brokers(const ProducerMetadata *metadata); /* KBrokerEndpoint */

void producer_metadata_check_invariants(const ProducerMetadata *metadata);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ProducerMetadata, producer_metadata_free)

#endif
