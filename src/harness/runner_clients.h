/*
 * runner_clients: the clients of a run — every [producer NAME] instance with
 * its workload, and every member of every [consumer-group NAME] — built from
 * a scenario variant.
 *
 * Members are named "consumer-NAME-K" (K = 1..members) in the world and the
 * history, where each is also recorded as a process of its group id
 * (history_set_process_group). Each polls from the start of the run, joins
 * its group at members.start and leaves it at members.stop (if set).
 */
#ifndef RUNNER_CLIENTS_H
#define RUNNER_CLIENTS_H

#include <glib.h>

#include "cluster.h"
#include "history.h"
#include "scenario.h"

typedef struct RunnerClients RunnerClients;

/* Creates the clients' nodes and starts their workloads, which stop by
 * themselves at the end of the fault phase (in-flight records finish in the
 * liveness phase). */
RunnerClients *runner_clients_new(SimWorld *world, Cluster *cluster, History *history,
                                  const ScenarioVariant *variant);
/* Frees the clients (before the world). */
void runner_clients_free(RunnerClients *clients);
/* Appends the nodes of producer `name`'s instances to `nodes`. */
void runner_clients_nodes(const RunnerClients *clients, const char *name, GArray *nodes);
/* Appends the nodes of [consumer-group `name`]'s members: every member when
 * `instance` is 0, else member `instance` (1..members). */
void runner_clients_consumer_nodes(const RunnerClients *clients, const char *name, guint instance,
                                   GArray *nodes);
/* Checks the numbered invariants of runner_clients.c and those of every
 * producer with its workload, every member's consumer and every pipe's
 * producer. */
void runner_clients_check_invariants(const RunnerClients *clients);

#endif
