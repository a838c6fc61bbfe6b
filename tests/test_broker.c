/*
 * Broker tests (broker.h) on a real simulated cluster: a broker registers
 * its ephemeral /brokers/ids/<id>, registers again with a new session after
 * its old one expired, one broker wins /controller and another takes over
 * when it dies, and a restarted broker rebuilds its replicas from its disk
 * before it hears from the controller.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "failover.h"
#include "history.h"
#include "kafka_proto.h"
#include "sim_net.h"
#include "sim_world.h"
#include "zk_server.h"

#define TOPIC "t"

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
} Fixture;

static void
check_after_event(SimWorld *world, void *user_data)
{
    (void)world;
    cluster_check_invariants(user_data);
}

static Fixture *
fixture_new(guint64 seed)
{
    Fixture *f = g_new0(Fixture, 1);
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.replica_lag_time_max_ms = 1000;
    config.broker.zookeeper_session_timeout_ms = 6000;
    f->world = sim_world_new(seed);
    f->history = history_new();
    f->cluster = cluster_new(f->world, &config, f->history);
    sim_world_set_after_event(f->world, check_after_event, f->cluster);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, 2, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    return f;
}

static void
fixture_free(Fixture *f)
{
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

static SimNodeId
node_of(Fixture *f, gint32 broker)
{
    return broker_node(cluster_broker(f->cluster, broker));
}

static gboolean
registered(Fixture *f, gint32 broker)
{
    g_autofree char *path = g_strdup_printf("/brokers/ids/%d", broker);
    GBytes *data = zk_server_znode_get(cluster_zk_server(f->cluster), path, NULL);
    if (data == NULL)
        return FALSE;
    g_bytes_unref(data);
    return TRUE;
}

/* How many times `broker` recorded that it registered. */
static guint
registrations(Fixture *f, gint32 broker)
{
    const GArray *events = history_events(f->history);
    guint n = 0;
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind == HISTORY_EVENT_SESSION && event->broker == broker &&
            event->text != NULL && strstr(event->text, "registered") != NULL)
            n++;
    }
    return n;
}

static void
test_broker_registers_and_registers_again(void **state)
{
    /* Goal: every broker holds its registration; one paused past its session
     * timeout loses it, and registers again with a new session on resume. */
    (void)state;
    Fixture *f = fixture_new(21);
    for (gint32 b = 1; b <= 3; b++) {
        assert_true(broker_running(cluster_broker(f->cluster, b)));
        assert_true(registered(f, b));
        assert_int_equal(registrations(f, b), 1);
    }
    gint32 broker = cluster_follower(f->cluster, TOPIC, 0);
    sim_node_pause(f->world, node_of(f, broker));
    run_for(f, 10 * SIM_NS_PER_S);
    assert_false(registered(f, broker));
    sim_node_resume(f->world, node_of(f, broker));
    run_for(f, 10 * SIM_NS_PER_S);
    assert_true(registered(f, broker));
    assert_int_equal(registrations(f, broker), 2);
    /* The others kept their first registration. */
    for (gint32 b = 1; b <= 3; b++) {
        if (b != broker)
            assert_int_equal(registrations(f, b), 1);
    }
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    fixture_free(f);
}

static void
test_broker_controller_fails_over(void **state)
{
    /* Goal: exactly one broker is controller; when it dies another one
     * takes over in a higher controller epoch. */
    (void)state;
    Fixture *f = fixture_new(22);
    gint32 controller = cluster_controller(f->cluster);
    assert_true(controller >= 1 && controller <= 3);
    guint controllers = 0;
    for (gint32 b = 1; b <= 3; b++)
        controllers += broker_is_controller(cluster_broker(f->cluster, b));
    assert_int_equal(controllers, 1);
    gint32 epoch = broker_controller_epoch(cluster_broker(f->cluster, controller));
    sim_node_crash(f->world, node_of(f, controller));
    assert_false(broker_running(cluster_broker(f->cluster, controller)));
    run_for(f, 15 * SIM_NS_PER_S);
    gint32 next = cluster_controller(f->cluster);
    assert_true(next >= 1 && next <= 3);
    assert_int_not_equal(next, controller);
    assert_true(broker_controller_epoch(cluster_broker(f->cluster, next)) > epoch);
    fixture_free(f);
}

static void
test_broker_restart_recovers_replicas_from_disk(void **state)
{
    /* Goal: a restarted broker holds its replicas again as soon as it starts,
     * from its disk alone, and takes its role back from the controller. */
    (void)state;
    Fixture *f = fixture_new(23);
    gint32 broker = cluster_follower(f->cluster, TOPIC, 0);
    Broker *b = cluster_broker(f->cluster, broker);
    g_autoptr(GArray) before = broker_partitions(b);
    assert_int_equal(before->len, 2);
    sim_node_crash(f->world, node_of(f, broker));
    g_autoptr(GArray) down = broker_partitions(b);
    assert_int_equal(down->len, 0);
    sim_node_restart(f->world, node_of(f, broker));
    g_autoptr(GArray) after = broker_partitions(b);
    assert_int_equal(after->len, before->len);
    for (guint i = 0; i < after->len; i++)
        assert_true(ktp_equal(&g_array_index(after, KTopicPartition, i),
                              &g_array_index(before, KTopicPartition, i)));
    BrokerPartitionInfo info;
    broker_partition_info(b, TOPIC, 0, &info);
    assert_true(info.present);
    assert_int_equal(info.leader_epoch, -1); /* no LeaderAndIsr yet */
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    broker_partition_info(b, TOPIC, 0, &info);
    assert_true(info.leader_epoch >= 0);
    assert_false(info.is_leader && cluster_leader(f->cluster, TOPIC, 0) != broker);
    fixture_free(f);
}

/* The controller failover's length (ms) in a 3-broker cluster with one
 * topic of `partitions` partitions when its controller crashes, with each
 * LeaderAndIsr partition state taking `per_partition_ns` to apply. */
static double
failover_ms(guint partitions, gint64 per_partition_ns)
{
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.zookeeper_session_timeout_ms = 6000;
    config.broker.leader_and_isr_partition_ns = per_partition_ns;
    g_autoptr(SimWorld) world = sim_world_new(24);
    g_autoptr(History) history = history_new();
    Cluster *cluster = cluster_new(world, &config, history);
    sim_world_set_after_event(world, check_after_event, cluster);
    GError *error = NULL;
    assert_true(cluster_create_topic(cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(cluster, 20 * SIM_NS_PER_S));
    gint32 controller = cluster_controller(cluster);
    /* The crash as the runner notes it (src/harness/runner.c, window_open). */
    HistoryEvent crash = {0};
    crash.time_ns = sim_now_ns(world);
    crash.kind = HISTORY_EVENT_FAULT;
    crash.broker = controller;
    crash.partition = -1;
    crash.text = (char *)"fault began: crash broker";
    history_event(history, &crash);
    sim_node_crash(world, broker_node(cluster_broker(cluster, controller)));
    sim_world_run_until(world, sim_now_ns(world) + 15 * SIM_NS_PER_S);
    g_autoptr(FailoverResult) result = failover_run(history);
    assert_int_equal(failover_result_windows(result)->len, 1);
    const FailoverWindow *w = &g_array_index(failover_result_windows(result), FailoverWindow, 0);
    assert_true(w->led_ns > 0);
    double ms = failover_result_longest_ms(result);
    cluster_free(cluster);
    return ms;
}

static void
test_broker_controller_requests_take_time_per_partition(void **state)
{
    /* Goal: a broker applies a LeaderAndIsr partition state after another,
     * so at 1 ms a state a failover with 30 partitions (each broker
     * replicating all 30) lasts at least 30 ms longer than at 0. */
    (void)state;
    double free_ms = failover_ms(30, 0);
    double costly_ms = failover_ms(30, SIM_NS_PER_MS);
    assert_true(costly_ms - free_ms >= 30.0);
}

/* A client node that keeps the last Metadata answer it receives. */
static void
probe_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    (void)from;
    KMetadataResponse **last = ctx;
    if (msg->type != KMSG_METADATA_RESPONSE) {
        sim_msg_free(msg);
        return;
    }
    if (*last != NULL)
        sim_msg_free(&(*last)->base);
    *last = (KMetadataResponse *)msg;
}

/* Asks broker 1 for `topics` (NULL: every topic) and returns how many
 * partitions of `topic` the answer carries, and how many in all. */
static guint
ask_metadata(Fixture *f, SimNodeId probe, KMetadataResponse **last, const char *const *topics,
             const char *topic, guint *all)
{
    KMetadataRequest *request = kproto_new(KMSG_METADATA_REQUEST);
    request->correlation_id = 7;
    if (topics != NULL)
        kproto_metadata_request_no_topics(request);
    for (guint i = 0; topics != NULL && topics[i] != NULL; i++)
        kproto_metadata_request_add_topic(request, topics[i]);
    kproto_update_size(&request->base);
    sim_net_send(sim_world_net(f->world), probe, node_of(f, 1), &request->base);
    run_for(f, SIM_NS_PER_S);
    assert_non_null(*last);
    assert_int_equal((*last)->correlation_id, 7);
    assert_int_equal((*last)->brokers->len, 3);
    guint n = 0;
    for (guint i = 0; i < (*last)->partitions->len; i++) {
        const KPartitionState *ps = &g_array_index((*last)->partitions, KPartitionState, i);
        if (strcmp(ps->tp.topic, topic) == 0) {
            assert_int_equal(ps->tp.partition, (gint32)n); /* in partition order */
            n++;
        }
    }
    *all = (*last)->partitions->len;
    sim_msg_free(&(*last)->base);
    *last = NULL;
    return n;
}

static void
test_broker_metadata_answers_the_topics_asked(void **state)
{
    /* Goal: as Kafka's MetadataRequest v1+, a request naming topics is
     * answered with those topics' partitions only, a null list with every
     * topic's, an empty one with the brokers alone. */
    (void)state;
    Fixture *f = fixture_new(3);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, "other", 5, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    KMetadataResponse *last = NULL;
    static const SimNodeOps probe_ops = {.message = probe_message};
    SimNodeId probe = sim_node_add(f->world, "probe", &probe_ops, &last);
    guint all = 0;
    const char *const only_other[] = {"other", NULL};
    assert_int_equal(ask_metadata(f, probe, &last, only_other, "other", &all), 5);
    assert_int_equal(all, 5);
    const char *const both[] = {TOPIC, "other", "missing", NULL};
    assert_int_equal(ask_metadata(f, probe, &last, both, TOPIC, &all), 2);
    assert_int_equal(all, 7);
    const char *const none[] = {NULL};
    assert_int_equal(ask_metadata(f, probe, &last, none, TOPIC, &all), 0);
    assert_int_equal(all, 0);
    assert_int_equal(ask_metadata(f, probe, &last, NULL, "other", &all), 5);
    assert_int_equal(all, 7);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broker_registers_and_registers_again),
        cmocka_unit_test(test_broker_controller_fails_over),
        cmocka_unit_test(test_broker_restart_recovers_replicas_from_disk),
        cmocka_unit_test(test_broker_controller_requests_take_time_per_partition),
        cmocka_unit_test(test_broker_metadata_answers_the_topics_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
