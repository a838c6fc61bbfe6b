/*
 * broker_services: what the broker's children (the controller, producer
 * ids, the group and transaction coordinators and their partitions) may ask
 * of the broker they run in — as SQLite's pager sees a sqlite3_vfs and not
 * the connection. A child holds a BrokerServices and never the broker's
 * state: it sends messages, reads the clock, the broker's and its topics'
 * configs and its metadata, talks to the coordination service through the
 * broker's client, records history events, appends to and listens to the
 * replica manager, and tells the broker what only the broker keeps (which
 * controller is current, the controller epoch it has seen).
 *
 * A BrokerServices lives exactly as long as the broker's process state: a
 * crash frees it with everything else.
 */
#ifndef BROKER_SERVICES_H
#define BROKER_SERVICES_H

#include "broker.h"
#include "replica.h"
#include "zk_client.h"

typedef struct BrokerServices BrokerServices;
typedef struct Controller Controller;
typedef struct GroupCoord GroupCoord;
typedef struct TxnCoord TxnCoord;
typedef struct ProducerIds ProducerIds;

/* The services of the running broker whose coordination client called back
 * with `owner` (ZkResultFn's first argument). (transfer none) */
BrokerServices *broker_services_from_zk_owner(void *owner);
/* The services of the running broker whose node ran a timer with `ctx`
 * (SimTimerFn's second argument). (transfer none) */
BrokerServices *broker_services_from_node_ctx(void *ctx);
/* The services of `broker` while its process runs, else NULL (for views of
 * a broker from outside it). (transfer none) */
BrokerServices *broker_services_of(const Broker *broker);

SimWorld *broker_services_world(const BrokerServices *services);
SimNodeId broker_services_node(const BrokerServices *services);
gint32 broker_services_broker_id(const BrokerServices *services);
const BrokerConfig *broker_services_config(const BrokerServices *services);
/* The topic's config (the broker's values when it set none). */
const TopicConfig *broker_services_topic_config(BrokerServices *services, const char *topic);
/* The simulated clock in milliseconds. */
gint64 broker_services_now_ms(const BrokerServices *services);

/* Sends `msg` (owned by the network from now) from the broker's node. */
void broker_services_send(BrokerServices *services, SimNodeId to, SimMsg *msg);
/* A correlation id for a request of this broker, unique in its process. */
gint32 broker_services_next_correlation(BrokerServices *services);
/* The history's set id of an ISR for HistoryEvent.isr; 0 without a history. */
guint32 broker_services_history_isr(BrokerServices *services, const gint32 *isr, guint n_isr);
/* Records a metric sample (history_metric) of this broker (nothing without
 * a history). */
void broker_services_record_metric(BrokerServices *services, HistoryMetricKind kind,
                                   guint32 count, gint64 value);
/* Records a history event of this broker (nothing without a history). */
void broker_services_record_event(BrokerServices *services, HistoryEventKind kind,
                                  const KTopicPartition *tp, const HistoryEvent *fields,
                                  const char *format, ...) G_GNUC_PRINTF(5, 6);

/* KRaft: asks the active controller for a producer id block, answered
 * through producer_ids_block_granted; FALSE in ZooKeeper mode. */
gboolean broker_services_kraft_allocate_producer_ids(BrokerServices *services);
/* The broker's coordination client. (transfer none) */
ZkClient *broker_services_zk(BrokerServices *services);
/* A zeroed context of `size` bytes for a coordination request's callback,
 * owned by the broker until broker_services_zk_context_done (a crash frees
 * the ones still pending). */
void *broker_services_zk_context(BrokerServices *services, gsize size);
void broker_services_zk_context_done(BrokerServices *services, void *context);

/* The log of `tp` when this broker leads it, or NULL. (transfer none) */
Plog *broker_services_led_log(const BrokerServices *services, const KTopicPartition *tp);
/* How many partitions of `topic` this broker leads. */
guint broker_services_led_count(const BrokerServices *services, const char *topic);
/* Adds a replica manager listener (replica.h), called after those added
 * before it. */
void broker_services_add_leadership_listener(BrokerServices *services,
                                             const ReplicaLeadershipListener *listener);
void broker_services_add_marker_listener(BrokerServices *services,
                                         const ReplicaMarkerListener *listener);

/* Completion of an internal append: `done_id` is the caller's handle for
 * what it waits on. */
typedef void (*BrokerAppendFn)(void *user_data, KafkaError error, gint64 base_offset,
                               guint64 done_id);
/* replica_append_internal with the caller's `user_data`: `done_fn` runs as
 * that says (perhaps before this returns, never after a crash). */
void broker_services_append_internal(BrokerServices *services, const KTopicPartition *tp,
                                     PlogBatch *batch, gint64 timeout_ms, BrokerAppendFn done_fn,
                                     void *user_data, guint64 done_id);

/* broker_find_coordinator (broker_internal.h): answers `from`'s
 * FindCoordinator with the leader of `partition` of the internal `topic`,
 * creating the topic when missing. */
void broker_services_find_coordinator(BrokerServices *services, SimNodeId from,
                                      const KFindCoordinatorRequest *request, const char *topic,
                                      gint32 partitions, gint16 replication_factor,
                                      gint32 partition, KafkaError empty_key_error);
/* The node of the leader of `tp` as this broker's metadata knows it
 * (SIM_NODE_NONE without a live leader); `*exists` tells whether the
 * metadata knows `tp` at all. */
SimNodeId broker_services_leader_node(const BrokerServices *services, const KTopicPartition *tp,
                                      gboolean *exists);

/* The broker's producer ids, group and transaction coordinators.
 * (transfer none) */
ProducerIds *broker_services_producer_ids(const BrokerServices *services);
GroupCoord *broker_services_group_coord(const BrokerServices *services);
TxnCoord *broker_services_txn_coord(const BrokerServices *services);

/* The controller this broker runs, or NULL. (transfer none) */
Controller *broker_services_controller(const BrokerServices *services);
/* Counts the controllers this process started: the new one's generation. */
guint64 broker_services_controller_generation_next(BrokerServices *services);
/* The running controller claimed `epoch`: the broker is the controller it
 * knows of, in at least that epoch. */
void broker_services_controller_claimed(BrokerServices *services, gint32 epoch);
/* The running controller lost the race for its epoch: the broker forgets it
 * (the caller frees it). */
void broker_services_controller_lost(BrokerServices *services);

#endif
