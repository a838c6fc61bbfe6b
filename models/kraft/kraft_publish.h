/*
 * kraft_publish: what a KRaft broker does with the metadata log it replays,
 * in the terms the broker already speaks. Kafka's BrokerMetadataPublisher
 * hands each new image and its delta to ReplicaManager.applyDelta (the
 * partitions of which the broker is a replica: becoming leader or follower)
 * and to the metadata cache (every partition, the active brokers). Here the
 * delta between two images becomes a LeaderAndIsr request for the broker's
 * replicas and an UpdateMetadata request, built as the ZooKeeper-mode
 * controller builds them, so the broker applies KRaft's metadata through the
 * path it applies ZooKeeper mode's (replica.h, broker.c).
 *
 * A partition is in a delta when its partition epoch moved (every change
 * bumps it) or it is new. Its KPartitionState carries the partition epoch
 * as its version (zk_version: what AlterPartition must name, as a znode
 * version is what a ZooKeeper-mode ISR write must), and controller epoch
 * -1: in KRaft the log's order, not a controller epoch, orders changes.
 */
#ifndef KRAFT_PUBLISH_H
#define KRAFT_PUBLISH_H

#include "kafka_proto.h"
#include "kraft_records.h"
#include "metadata_pool.h"

/* The LeaderAndIsr of broker `broker_id` from `before` (NULL: nothing yet)
 * to `after`: its replicas whose state changed, with the endpoints of their
 * leaders; NULL when none did. The states are interned in `pool`, as
 * kraft_publish_update_metadata's. (transfer full) */
KLeaderAndIsrRequest *kraft_publish_leader_and_isr(const KraftImage *before,
                                                   const KraftImage *after,
                                                   const KraftRecordStore *store,
                                                   gint32 broker_id, MetadataPool *pool);
/* The UpdateMetadata from `before` to `after`: every changed partition and
 * the active brokers (all of them, as UpdateMetadata always lists); NULL
 * when neither partitions nor brokers changed. The partitions' states are
 * interned in `pool`, the receiving broker's (the request's `pooled`): a
 * broker's first image has every partition of the cluster. (transfer full) */
KUpdateMetadataRequest *kraft_publish_update_metadata(const KraftImage *before,
                                                      const KraftImage *after,
                                                      const KraftRecordStore *store,
                                                      MetadataPool *pool);

#endif
