/*
 * controller: the Kafka controller (Kafka's KafkaController in its ZooKeeper
 * mode), run by the broker that holds /controller. It sees its broker only
 * through broker_services.h; the broker creates it on winning /controller,
 * passes it the watches, messages and disconnections it is told of, and
 * frees it on losing /controller (or when the controller lost the race for
 * its epoch and freed itself). Its election rule is controller_election.h.
 */
#ifndef CONTROLLER_H
#define CONTROLLER_H

#include "broker_services.h"

Controller *controller_new(BrokerServices *services);
void controller_free(Controller *controller);
/* Claims the next controller epoch, then reconciles the cluster. */
void controller_start(Controller *controller);
void controller_watch_fired(Controller *controller, const char *path);
/* TRUE when `msg` was a response to this controller; it is then freed. */
gboolean controller_handle_message(Controller *controller, SimNodeId from, SimMsg *msg);
void controller_peer_disconnected(Controller *controller, SimNodeId peer);
void controller_check_invariants(const Controller *controller);

#endif
