/*
 * config_fixture: the model configs unit tests start from. Every default is
 * the key registry's (src/harness/kconfig.c), filled through the harness's
 * bindings (kconfig_bind.h) exactly as a scenario run fills them: tests call
 * kconfig_bind_X_defaults for a broker, topic log, producer, consumer,
 * workload or driver, and fixture_cluster_config for a cluster.
 *
 * The one setting the tests choose for themselves is the network. A
 * scenario's default network.latency is const:100us; the model tests run on
 * a jittered link instead, lognormal with a median of 500 us and sigma 0.3,
 * so that messages on different connections arrive in orders a constant
 * latency never produces (a follower's fetch overtaking the controller's
 * LeaderAndIsr, a heartbeat racing a commit), and their expectations were
 * written against that network. It is stated here once, for every test.
 *
 * Its functions are static inline so that each test binary compiles only the
 * ones it uses without warnings.
 */
#ifndef CONFIG_FIXTURE_H
#define CONFIG_FIXTURE_H

#include "cluster.h"
#include "kconfig_bind.h"
#include "sim_rng.h"

/* The model tests' network (see above). */
#define FIXTURE_NETWORK_LATENCY ((SimDist){SIM_DIST_LOGNORMAL, 500.0 * SIM_NS_PER_US, 0.3})

/* The registry's cluster (three brokers at Kafka's defaults, const:2ms
 * fsyncs, unlimited bandwidth) on the tests' network. */
static inline void
fixture_cluster_config(ClusterConfig *config)
{
    kconfig_bind_cluster_defaults(config);
    config->network_latency = FIXTURE_NETWORK_LATENCY;
}

#endif
