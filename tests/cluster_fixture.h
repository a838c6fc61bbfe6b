/*
 * cluster_fixture: the harness of the tests that drive a real simulated
 * cluster through the C API (test_cluster.c, test_replica.c and the KIP-101
 * case of test_checker.c): a coordination node, a controller and three
 * brokers on the tests' network (config_fixture.h), one settled topic TOPIC,
 * a driver producing to it with a chosen acks and one batch in flight, and
 * the cluster's invariants checked after every event.
 *
 * Its functions are static inline so that each test binary compiles only the
 * ones it uses without warnings; include it after cmocka.h.
 */
#ifndef CLUSTER_FIXTURE_H
#define CLUSTER_FIXTURE_H

#include "cluster.h"
#include "config_fixture.h"
#include "driver.h"
#include "history.h"
#include "sim_world.h"

#define TOPIC "t"

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Driver *driver;
} Fixture;

static inline void
fixture_check_after_event(SimWorld *world, void *user_data)
{
    (void)world;
    cluster_check_invariants(user_data);
}

/* The registry's cluster with failures found fast: a follower leaves the
 * ISR after 1 s behind, a broker's session expires after 6 s, the HW is
 * checkpointed every second. */
static inline void
fixture_config_fast(ClusterConfig *config)
{
    fixture_cluster_config(config);
    config->broker.replica_lag_time_max_ms = 1000;
    config->broker.zookeeper_session_timeout_ms = 6000;
    config->broker.replica_high_watermark_checkpoint_interval_ms = 1000;
}

/* A settled cluster with TOPIC (`partitions` partitions, three replicas,
 * `topic` NULL: the brokers' config) and a driver producing with `acks`, one
 * batch in flight, answers awaited 5 s. */
static inline Fixture *
fixture_new(guint64 seed, const ClusterConfig *config, guint partitions, gint16 acks,
            const TopicConfig *topic)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    f->cluster = cluster_new(f->world, config, f->history);
    sim_world_set_after_event(f->world, fixture_check_after_event, f->cluster);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, topic, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    DriverConfig driver_config;
    kconfig_bind_driver_defaults(&driver_config);
    driver_config.acks = acks;
    driver_config.max_in_flight = 1;
    driver_config.request_timeout_ms = 5000;
    f->driver = driver_new(f->world, "driver", 100, bootstrap, &driver_config, f->history);
    return f;
}

static inline void
fixture_free(Fixture *f)
{
    driver_free(f->driver);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

static inline void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

static inline SimNodeId
node_of(Fixture *f, gint32 broker)
{
    return broker_node(cluster_broker(f->cluster, broker));
}

/* What `broker` believes of TOPIC's `partition`. */
static inline BrokerPartitionInfo
info_of(Fixture *f, gint32 broker, gint32 partition)
{
    BrokerPartitionInfo info;
    broker_partition_info(cluster_broker(f->cluster, broker), TOPIC, partition, &info);
    return info;
}

static inline gboolean
isr_has(const BrokerPartitionInfo *info, gint32 broker)
{
    for (guint i = 0; i < info->n_isr; i++) {
        if (info->isr[i] == broker)
            return TRUE;
    }
    return FALSE;
}

#endif
