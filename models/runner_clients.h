/*
 * runner_clients: the clients of a run — every [producer NAME] instance with
 * its workload (and, later, consumer groups) — built from a scenario variant.
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

#endif
