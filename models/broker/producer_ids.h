/*
 * producer_ids: InitProducerId for idempotent producers and fresh ids for the
 * transaction coordinator, from blocks this broker claims in the coordination
 * service (Kafka's ZooKeeper-based ProducerIdManager). It sees its broker
 * only through broker_services.h.
 */
#ifndef PRODUCER_IDS_H
#define PRODUCER_IDS_H

#include "broker_services.h"

typedef struct ProducerIds ProducerIds;

ProducerIds *producer_ids_new(BrokerServices *services);
/* Frees the ids and their waiters, whose callbacks never run. */
void producer_ids_free(ProducerIds *ids);
/* A client's InitProducerId without a transactional id (the caller frees
 * `request`): answered with a fresh id, epoch 0, once one is free. */
void producer_ids_handle_request(ProducerIds *ids, SimNodeId from,
                                 const KInitProducerIdMessage *request);
/* A fresh producer id for this broker's own use (the transaction
 * coordinator's): `done_cb` gets it (epoch 0), or an error; it may run before
 * this returns, and never after a crash. */
typedef void (*ProducerIdsCb)(void *user_data, KafkaError error, gint64 producer_id,
                              guint64 done_id);
void producer_ids_allocate(ProducerIds *ids, ProducerIdsCb done_cb, void *user_data,
                           guint64 done_id);
void producer_ids_check_invariants(const ProducerIds *ids);
/* KRaft: the controller's answer to the block claim (error NONE: ids
 * [start, start + count)). */
void producer_ids_block_granted(ProducerIds *ids, KafkaError error, gint64 start, gint64 count);

#endif
