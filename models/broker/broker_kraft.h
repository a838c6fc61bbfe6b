/*
 * broker_kraft: a broker's KRaft side (Kafka's BrokerLifecycleManager, its
 * metadata loader as a Raft observer, and BrokerMetadataPublisher; Apache
 * Kafka 4.0, commit 1eb7644 of trunk), used when the broker was made with
 * broker_new_kraft. Not for other modules than the broker's.
 *
 * Lifecycle: the broker registers with the active controller
 * (BrokerRegistration with its incarnation id: one per process start), then
 * heartbeats every broker.heartbeat.interval.ms with the offset of the
 * metadata log it has replayed; the controller unfences it once that offset
 * reaches its registration. A request unanswered for
 * controller.quorum.request.timeout.ms, or answered NOT_CONTROLLER, goes to
 * the controller it names or the next voter. A heartbeat answered
 * STALE_BROKER_EPOCH (the controller no longer knows this registration)
 * registers again. A registration refused (DUPLICATE_BROKER_REGISTRATION:
 * the previous incarnation's session is still valid) is sent again after
 * BrokerLifecycleManager's exponential backoff: 100 ms doubling with each
 * refusal in a row, 2% jitter (the stream broker-N/lifecycle), at most
 * broker.session.timeout.ms. (Kafka backs off so after any failed lifecycle
 * request; ksim only after a refused registration.)
 *
 * Metadata: the broker fetches `__cluster_metadata` from the quorum's
 * leader as an observer (raft_proto.h's Fetch, long-polled), keeps what it
 * fetched above the high watermark in memory until it commits or the leader
 * answers with a diverging epoch (it truncates its buffer there, as a
 * follower truncates its log), and replays what is committed into its image.
 * Each advance is published as the LeaderAndIsr of its replicas and an
 * UpdateMetadata (kraft_publish.h), applied through the same queue a
 * ZooKeeper-mode controller's requests go through. The fetched log is kept
 * in memory only: a restarted broker fetches it again from offset 0 (Kafka
 * keeps it on disk and replays it from there; the difference is the time
 * to refetch, not what is replayed). A fetch the leader answers with a
 * snapshot id (its log starts past the fetch offset, or the fetch is from
 * offset 0 and the leader has a snapshot) is followed by FetchSnapshot, in
 * chunks, until the whole snapshot is here; it then becomes the image, and
 * fetching goes on from its end. The broker writes no snapshots of its own.
 *
 * Combined mode (broker_new_combined): the broker fetches nothing; it
 * replays the log of the voter in its own process up to that voter's high
 * watermark whenever it advances or its leader changes
 * (broker_kraft_local_advanced), as a combined Kafka node's metadata loader
 * follows the one KafkaRaftClient the broker and controller share
 * (SharedServer, KafkaRaftServer). It learns the active controller from that
 * voter too; registration, heartbeats and AlterPartition go to it over the
 * network as before (to its own node when it is the active one).
 *
 * Controlled shutdown: heartbeats want to shut down (the first at once, the
 * next after 50 ms, then at the heartbeat interval) until the controller
 * answers that the broker should (broker_shutdown.c).
 *
 * AlterPartition: a leader's ISR change goes to the active controller
 * (replica_isr.c); the answer's state is adopted, an error leaves the change
 * to be proposed again.
 */
#ifndef BROKER_KRAFT_H
#define BROKER_KRAFT_H

#include "broker_internal.h"
#include "kraft_proto.h"
#include "kraft_records.h"

typedef struct BrokerKraft BrokerKraft;

BrokerKraft *broker_kraft_new(BrokerState *state);
void broker_kraft_free(BrokerKraft *kraft);
/* TRUE when `msg` was the KRaft side's (a quorum or controller response);
 * it is freed then. */
gboolean broker_kraft_handle_message(BrokerKraft *kraft, SimNodeId from, SimMsg *msg);
void broker_kraft_peer_disconnected(BrokerKraft *kraft, SimNodeId peer);

/* Combined mode: the local voter's high watermark or leader changed;
 * replays what it has committed. */
void broker_kraft_local_advanced(BrokerKraft *kraft);

/* The topic id of `topic` in the metadata records. */
guint32 broker_kraft_topic_id(const BrokerKraft *kraft, const char *topic);
/* Sends AlterPartition (`request` filled but for the broker's id and epoch;
 * owned from now) to the active controller; FALSE, `request` freed, when
 * none is known or the broker is not registered. */
gboolean broker_kraft_send_alter(BrokerKraft *kraft, KraftMsg *request);

/* Asks the active controller for a producer id block; the answer (or a
 * timeout, as COORDINATOR_NOT_AVAILABLE) goes to producer_ids_block_granted. */
void broker_kraft_allocate_producer_ids(BrokerKraft *kraft);

/* BrokerLifecycleManager.beginControlledShutdown: heartbeats from now on
 * want to shut down (the first at once); the answer that says it should
 * goes to broker_shutdown_kraft_approved. */
void broker_kraft_begin_controlled_shutdown(BrokerKraft *kraft);

/* Its broker epoch, -1 before it registered. */
gint64 broker_kraft_broker_epoch(const BrokerKraft *kraft);

/* Asks the active controller to create internal topic `kind` (see
 * broker_internal_topic_failed) with these settings; FALSE when the broker
 * is not registered yet. A refusal other than TOPIC_ALREADY_EXISTS, or no
 * answer in controller.quorum.request.timeout.ms, goes to
 * broker_internal_topic_failed. */
gboolean broker_kraft_create_topic(BrokerKraft *kraft, guint kind, const char *topic,
                                   gint32 partitions, gint16 replication_factor,
                                   gboolean unclean, gint32 min_isr);

/* Asserts the invariants in broker_kraft.c's header. */
void broker_kraft_check_invariants(const BrokerKraft *kraft);

#endif
