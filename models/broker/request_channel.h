/*
 * request_channel: how requests reach a broker's handlers and responses leave
 * it, as Kafka's SocketServer (Acceptor, Processor), RequestChannel and
 * KafkaRequestHandlerPool do it (Kafka 2.8, core/src/main/scala/kafka/network/
 * SocketServer.scala and RequestChannel.scala, server/KafkaRequestHandler.scala):
 *
 *   peer --> network thread (num.network.threads; a connection pinned to one,
 *            round-robin as the Acceptor assigns them) reads the request
 *        --> request queue (queued.max.requests; when full the network thread
 *            blocks in sendRequest and reads nothing more)
 *        --> I/O thread (num.io.threads) handles it: the broker's handler runs
 *            when its service time is over
 *        --> [purgatory: acks=all, fetch long poll] --> response
 *        --> the connection's network thread writes the response --> peer
 *
 * Each request is timed as Kafka's request metrics time it and the timings go
 * to the history (HistoryRequest). Requests from the controller
 * (LeaderAndIsr, UpdateMetadata, StopReplica) keep their own cost model in
 * broker.c, and responses to requests this broker sent (as a follower, a
 * coordinator or the controller) are handled on arrival: Kafka's client-side
 * NetworkClient threads are not the request handler pool.
 *
 * Only broker.c calls this (BrokerState owns the channel).
 */
#ifndef REQUEST_CHANNEL_H
#define REQUEST_CHANNEL_H

#include <glib.h>

#include "broker_config.h"
#include "history.h"
#include "sim_world.h"

typedef struct RequestChannel RequestChannel;

/* Runs a request whose I/O-thread service is over; owns `msg`. */
typedef void (*RequestChannelHandleFn)(void *owner, SimNodeId from, SimMsg *msg);

/* (transfer full) `history` may be NULL. */
RequestChannel *request_channel_new(SimWorld *world, SimNodeId node, const BrokerConfig *config,
                                    History *history, RequestChannelHandleFn handle,
                                    void *owner);
/* Frees the channel and every message it holds. */
void request_channel_free(RequestChannel *channel);

/* TRUE for the message types that go through the channel (client and
 * follower requests). */
gboolean request_channel_takes(const SimMsg *msg);
/* A request arrived from `from`; the channel owns it. */
void request_channel_arrived(RequestChannel *channel, SimNodeId from, SimMsg *msg);
/* If `msg` answers a request the channel handled, takes it and sends it
 * after its network thread has written it, and returns TRUE; else FALSE. */
gboolean request_channel_respond(RequestChannel *channel, SimNodeId to, SimMsg *msg);
/* The connection to `peer` failed: its requests will not be answered. */
void request_channel_peer_disconnected(RequestChannel *channel, SimNodeId peer);

void request_channel_check_invariants(const RequestChannel *channel);

#endif
