/*
 * Cluster tests: the replication mechanisms of issue 4 driven through the C
 * API — steady replication, follower and leader failure, ISR shrink and
 * expansion, min.insync.replicas, unclean election, controller failover,
 * session expiry, a leader cut off from the controller, and the restart of a
 * follower between receiving a record and learning its HW in both truncation
 * modes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_fixture.h"
#include "sim_disk.h"
#include "sim_net.h"

/* How many acknowledged values are absent from the leader's log below its HW. */
static guint
acked_missing(Fixture *f, gint32 partition)
{
    gint32 leader = cluster_leader(f->cluster, TOPIC, partition);
    assert_true(leader > 0);
    cluster_record_final_state(f->cluster);
    const GArray *replicas = history_replicas(f->history);
    g_autoptr(GHashTable) committed = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (r->broker != leader || r->partition != partition)
            continue;
        for (guint k = 0; k < r->records->len; k++) {
            HistoryRecord *record = &g_array_index(r->records, HistoryRecord, k);
            if (record->offset < r->hw)
                g_hash_table_add(committed, &record->value);
        }
    }
    const HistoryOpArray *ops = history_ops(f->history);
    guint missing = 0;
    for (guint i = 0; i < ops->len; i++) {
        HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->type != HISTORY_OK || op->partition != partition)
            continue;
        if (!g_hash_table_contains(committed, &op->value))
            missing++;
    }
    return missing;
}

/* Steady replication: every replica holds every record; HW = LEO; no breach. */
static void
test_cluster_steady_replication(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(1, &config, 2, -1, NULL);
    driver_produce(f->driver, TOPIC, 0, 500, 10);
    driver_produce(f->driver, TOPIC, 1, 500, 10);
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 1000);
    for (gint32 p = 0; p < 2; p++) {
        for (gint32 b = 1; b <= 3; b++) {
            BrokerPartitionInfo info = info_of(f, b, p);
            assert_true(info.present);
            assert_int_equal(info.leo, 500);
            assert_int_equal(info.hw, 500);
        }
        BrokerPartitionInfo leader = info_of(f, cluster_leader(f->cluster, TOPIC, p), p);
        assert_int_equal(leader.n_isr, 3);
    }
    cluster_check_agreement(f->cluster);
    assert_int_equal(cluster_violations(f->cluster), 0);
    assert_int_equal(acked_missing(f, 0), 0);
    fixture_free(f);
}

/* The final state of replica `broker` of partition 0. */
static const HistoryReplica *
final_replica(Fixture *f, gint32 broker)
{
    const GArray *replicas = history_replicas(f->history);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (r->broker == broker && r->partition == 0)
            return r;
    }
    fail_msg("no final state of broker %d", broker);
    return NULL;
}

/* The final state reads each log in place: a follower whose log file's
 * last batch no longer verifies (a byte of it changed under the log) ends
 * at its last whole batch and does not share the leader's records, while
 * the other follower, byte for byte the leader's, does. */
static void
test_cluster_final_state_ends_a_log_at_its_last_whole_batch(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(6, &config, 1, -1, NULL);
    driver_produce(f->driver, TOPIC, 0, 300, 10);
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 300);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 torn = cluster_follower(f->cluster, TOPIC, 0);
    SimDisk *disk = sim_node_disk(f->world, broker_node(cluster_broker(f->cluster, torn)));
    const char *name = TOPIC "-0/00000000000000000000.log";
    gint64 size = sim_disk_size(disk, name);
    assert_true(size > 0);
    guint8 byte;
    assert_int_equal(sim_disk_read(disk, name, size - 1, &byte, 1), 1);
    byte ^= 0x5a;
    assert_int_equal(sim_disk_write(disk, name, size - 1, &byte, 1), SIM_DISK_OK);
    cluster_record_final_state(f->cluster);
    const HistoryReplica *lead = final_replica(f, leader);
    const HistoryReplica *cut = final_replica(f, torn);
    assert_int_equal(lead->records->len, 300);
    assert_true(cut->records->len > 0);
    assert_true(cut->records->len < 300);
    assert_true(cut->records != lead->records);
    for (guint i = 0; i < cut->records->len; i++)
        assert_int_equal(g_array_index(cut->records, HistoryRecord, i).value,
                         g_array_index(lead->records, HistoryRecord, i).value);
    guint shared = 0;
    for (gint32 b = 1; b <= 3; b++)
        shared += b != leader && b != torn && final_replica(f, b)->records == lead->records;
    assert_int_equal(shared, 1);
    fixture_free(f);
}

/* A follower crashes: it leaves the ISR; after a restart it truncates, catches
 * up and rejoins. */
static void
test_cluster_follower_crash_and_rejoin(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(2, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 follower = cluster_follower(f->cluster, TOPIC, 0);
    driver_produce(f->driver, TOPIC, 0, 100, 10);
    run_for(f, 1 * SIM_NS_PER_S);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, follower)));
    run_for(f, 3 * SIM_NS_PER_S);
    BrokerPartitionInfo info = info_of(f, leader, 0);
    assert_false(isr_has(&info, follower));
    driver_produce(f->driver, TOPIC, 0, 100, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 200);
    sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, follower)));
    run_for(f, 10 * SIM_NS_PER_S);
    info = info_of(f, leader, 0);
    assert_true(isr_has(&info, follower));
    assert_int_equal(info_of(f, follower, 0).leo, 200);
    cluster_check_agreement(f->cluster);
    assert_int_equal(cluster_violations(f->cluster), 0);
    fixture_free(f);
}

/* The leader crashes: a replica from the ISR becomes leader in a newer epoch
 * and acknowledged records survive (acks=all). */
static void
test_cluster_leader_crash_elects_from_isr(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(3, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 epoch = info_of(f, leader, 0).leader_epoch;
    driver_produce(f->driver, TOPIC, 0, 200, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, leader)));
    run_for(f, 10 * SIM_NS_PER_S);
    gint32 next = cluster_leader(f->cluster, TOPIC, 0);
    assert_true(next > 0);
    assert_int_not_equal(next, leader);
    assert_true(info_of(f, next, 0).leader_epoch > epoch);
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 3 * SIM_NS_PER_S);
    /* The driver never retries: a batch sent on stale metadata to the dead
     * leader stays unknown, but everything acknowledged is kept. */
    assert_int_equal(driver_pending(f->driver), 0);
    assert_true(driver_acked(f->driver) >= 240);
    assert_int_equal(acked_missing(f, 0), 0);
    fixture_free(f);
}

/* auto.leader.rebalance.enable: a preferred leader that crashed and came
 * back gets its leadership back at the next imbalance check; with it off,
 * the leadership stays where the election put it. */
static void
test_cluster_preferred_leader_returns(void **state)
{
    (void)state;
    for (int enabled = 0; enabled <= 1; enabled++) {
        ClusterConfig config;
        fixture_config_fast(&config);
        config.broker.auto_leader_rebalance_enable = enabled;
        config.broker.leader_imbalance_check_interval_ms = 5000;
    Fixture *f = fixture_new(5, &config, 3, -1, NULL);
        gint32 preferred = g_array_index(cluster_replicas(f->cluster, TOPIC, 0), gint32, 0);
        assert_int_equal(cluster_leader(f->cluster, TOPIC, 0), preferred);
        gint32 epoch = info_of(f, preferred, 0).leader_epoch;
        sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, preferred)));
        run_for(f, 10 * SIM_NS_PER_S); /* its session expires after 6 s */
        gint32 moved = cluster_leader(f->cluster, TOPIC, 0);
        assert_true(moved > 0);
        assert_int_not_equal(moved, preferred);
        sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, preferred)));
        run_for(f, 20 * SIM_NS_PER_S);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        BrokerPartitionInfo info = info_of(f, leader, 0);
        assert_true(isr_has(&info, preferred));
        assert_int_equal(leader, enabled ? preferred : moved);
        if (enabled)
            assert_true(info.leader_epoch >= epoch + 2);
        fixture_free(f);
    }
}

/* A paused follower falls out of the ISR after replica.lag.time.max.ms and is
 * added back once it catches up. */
static void
test_cluster_isr_shrink_and_expand(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(4, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 follower = cluster_follower(f->cluster, TOPIC, 0);
    SimNodeId node = broker_node(cluster_broker(f->cluster, follower));
    sim_node_pause(f->world, node);
    driver_produce(f->driver, TOPIC, 0, 100, 10);
    run_for(f, 3 * SIM_NS_PER_S);
    BrokerPartitionInfo info = info_of(f, leader, 0);
    assert_false(isr_has(&info, follower));
    assert_int_equal(driver_acked(f->driver), 100);
    sim_node_resume(f->world, node);
    run_for(f, 3 * SIM_NS_PER_S);
    info = info_of(f, leader, 0);
    assert_true(isr_has(&info, follower));
    assert_int_equal(cluster_violations(f->cluster), 0);
    fixture_free(f);
}

/* min.insync.replicas=2 with one replica left: acks=all is refused with
 * NOT_ENOUGH_REPLICAS, and nothing is acknowledged. */
static void
test_cluster_min_insync_refuses(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.min_insync_replicas = 2;
    Fixture *f = fixture_new(5, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, b)));
    }
    run_for(f, 4 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).n_isr, 1);
    driver_produce(f->driver, TOPIC, 0, 30, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 0);
    assert_int_equal(driver_failed(f->driver), 30);
    const HistoryOpArray *ops = history_ops(f->history);
    const HistoryOp *last = &g_array_index(ops, HistoryOp, ops->len - 1);
    assert_int_equal(last->error, KAFKA_ERROR_NOT_ENOUGH_REPLICAS);
    fixture_free(f);
}

/* Unclean election: the only ISR member dies, an out-of-sync replica is
 * elected, and records acknowledged with acks=1 are lost. */
static void
test_cluster_unclean_election_loses_acked(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.unclean_leader_election = TRUE;
    Fixture *f = fixture_new(6, &config, 1, 1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            sim_node_pause(f->world, broker_node(cluster_broker(f->cluster, b)));
    }
    run_for(f, 3 * SIM_NS_PER_S);
    driver_produce(f->driver, TOPIC, 0, 100, 10);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 100);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, leader)));
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            sim_node_resume(f->world, broker_node(cluster_broker(f->cluster, b)));
    }
    run_for(f, 15 * SIM_NS_PER_S);
    gint32 next = cluster_leader(f->cluster, TOPIC, 0);
    assert_true(next > 0 && next != leader);
    assert_true(acked_missing(f, 0) > 0);
    fixture_free(f);
}

/* The controller crashes: another broker takes over with a higher epoch, and
 * the old controller, back, is no longer controller. */
static void
test_cluster_controller_failover(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(7, &config, 1, -1, NULL);
    gint32 controller = cluster_controller(f->cluster);
    assert_true(controller > 0);
    gint32 epoch = broker_controller_epoch(cluster_broker(f->cluster, controller));
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, controller)));
    run_for(f, 15 * SIM_NS_PER_S);
    gint32 next = cluster_controller(f->cluster);
    assert_true(next > 0);
    assert_int_not_equal(next, controller);
    assert_true(broker_controller_epoch(cluster_broker(f->cluster, next)) > epoch);
    sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, controller)));
    run_for(f, 15 * SIM_NS_PER_S);
    assert_false(broker_is_controller(cluster_broker(f->cluster, controller)));
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 50);
    fixture_free(f);
}

/* A leader cut off from the coordination node and the controller keeps
 * running (a zombie) until its session expires; a new leader is elected and
 * the old one becomes a follower after the heal. */
static void
test_cluster_leader_session_expiry(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(8, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    SimNodeId zk = cluster_zk_node(f->cluster);
    SimNodeId node = broker_node(cluster_broker(f->cluster, leader));
    gint32 epoch = info_of(f, leader, 0).leader_epoch;
    sim_net_cut_one_way(sim_world_net(f->world), node, zk);
    sim_net_cut_one_way(sim_world_net(f->world), zk, node);
    for (gint32 b = 1; b <= 3; b++) {
        SimNodeId other = broker_node(cluster_broker(f->cluster, b));
        if (b != leader && broker_is_controller(cluster_broker(f->cluster, b))) {
            sim_net_cut_one_way(sim_world_net(f->world), node, other);
            sim_net_cut_one_way(sim_world_net(f->world), other, node);
        }
    }
    run_for(f, 3 * SIM_NS_PER_S);
    /* Still a leader in its own eyes: the zombie. */
    assert_true(info_of(f, leader, 0).is_leader);
    run_for(f, 12 * SIM_NS_PER_S);
    gint32 next = cluster_leader(f->cluster, TOPIC, 0);
    assert_true(next > 0);
    assert_true(info_of(f, next, 0).leader_epoch > epoch);
    sim_net_heal(sim_world_net(f->world));
    run_for(f, 20 * SIM_NS_PER_S);
    if (next != leader)
        assert_false(info_of(f, leader, 0).is_leader);
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 50);
    fixture_free(f);
}

/* Steps the world until `done` holds or `timeout_ns` passes. */
static gboolean
step_until(Fixture *f, gboolean (*done)(Fixture *f, gint32 a, gint32 b, gint32 c), gint32 a,
           gint32 b, gint32 c, gint64 timeout_ns)
{
    gint64 deadline = sim_now_ns(f->world) + timeout_ns;
    while (sim_now_ns(f->world) < deadline) {
        if (done(f, a, b, c))
            return TRUE;
        if (!sim_world_step(f->world))
            return FALSE;
    }
    return done(f, a, b, c);
}

/* The leader's HW covers the second record; neither follower knows it yet. */
static gboolean
acked_but_followers_unaware(Fixture *f, gint32 leader, gint32 b, gint32 c)
{
    if (info_of(f, leader, 0).hw != 2 || driver_acked(f->driver) != 2)
        return FALSE;
    for (gint32 id = 1; id <= 3; id++) {
        if (id == leader || (id != b && id != c))
            continue;
        BrokerPartitionInfo info = info_of(f, id, 0);
        if (info.leo != 2 || info.hw != 1)
            return FALSE;
    }
    return TRUE;
}

static gboolean
follows_again(Fixture *f, gint32 leader, gint32 follower, gint32 unused)
{
    (void)unused;
    BrokerPartitionInfo info = info_of(f, follower, 0);
    BrokerPartitionInfo lead = info_of(f, leader, 0);
    return info.present && lead.present && lead.is_leader && info.leader == leader &&
           info.leader_epoch == lead.leader_epoch;
}

static gboolean
truncated_below(Fixture *f, gint32 broker, gint64 offset)
{
    const GArray *events = history_events(f->history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if (e->kind == HISTORY_EVENT_TRUNCATED && e->broker == broker && e->offset < offset)
            return TRUE;
    }
    return FALSE;
}

static Fixture *
kip101_fixture(BrokerTruncationMode mode, gint32 *leader)
{
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 30000;
    config.broker.truncation_mode = mode;
    Fixture *f = fixture_new(11, &config, 1, -1, NULL);
    *leader = cluster_leader(f->cluster, TOPIC, 0);
    driver_produce(f->driver, TOPIC, 0, 1, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    driver_produce(f->driver, TOPIC, 0, 1, 1);
    assert_true(step_until(f, acked_but_followers_unaware, *leader, -1, -1, SIM_NS_PER_S));
    return f;
}

/* A follower restarts after it received a record but before it learnt the HW
 * that covers it. In `hw` mode it truncates the record away on becoming a
 * follower again (then fetches it back); in `leader-epoch` mode it keeps it. */
static void
restart_before_hw(BrokerTruncationMode mode)
{
    gint32 a;
    Fixture *f = kip101_fixture(mode, &a);
    gint32 b = cluster_follower(f->cluster, TOPIC, 0);
    SimNodeId node_b = broker_node(cluster_broker(f->cluster, b));
    sim_node_crash(f->world, node_b);
    sim_node_restart(f->world, node_b);
    assert_true(step_until(f, follows_again, a, b, -1, 30 * SIM_NS_PER_S));
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(truncated_below(f, b, 2), mode == BROKER_TRUNCATE_HW);
    assert_int_equal(info_of(f, b, 0).leo, 2);
    assert_int_equal(acked_missing(f, 0), 0);
    fixture_free(f);
}

static void
test_cluster_restart_before_hw_truncation_hw(void **state)
{
    (void)state;
    restart_before_hw(BROKER_TRUNCATE_HW);
}

static void
test_cluster_restart_before_hw_truncation_leader_epoch(void **state)
{
    (void)state;
    restart_before_hw(BROKER_TRUNCATE_LEADER_EPOCH);
}

/* KIP-101's loss: the leader dies right after acknowledging a record its
 * followers hold without knowing the HW. The next leader keeps it, the other
 * follower truncates to its HW on becoming follower (in `hw` mode), and the
 * new leader dies before that follower fetched again: elected, it has lost
 * the acknowledged record. In `leader-epoch` mode the follower asks the
 * leader instead of truncating, and nothing is lost. */
static guint
two_leader_failures(BrokerTruncationMode mode)
{
    gint32 a;
    Fixture *f = kip101_fixture(mode, &a);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, a)));
    const GArray *replicas = cluster_replicas(f->cluster, TOPIC, 0);
    gint32 x = -1, y = -1;
    for (guint i = 0; i < replicas->len; i++) {
        gint32 id = g_array_index(replicas, gint32, i);
        if (id == a)
            continue;
        if (x < 0)
            x = id;
        else
            y = id;
    }
    assert_true(step_until(f, follows_again, x, y, -1, 30 * SIM_NS_PER_S));
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, x)));
    run_for(f, 20 * SIM_NS_PER_S);
    assert_int_equal(cluster_leader(f->cluster, TOPIC, 0), y);
    sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, a)));
    sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, x)));
    run_for(f, 20 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 2);
    guint missing = acked_missing(f, 0);
    fixture_free(f);
    return missing;
}

static void
test_cluster_two_failures_hw_mode_loses(void **state)
{
    (void)state;
    assert_int_equal(two_leader_failures(BROKER_TRUNCATE_HW), 1);
}

static void
test_cluster_two_failures_leader_epoch_keeps(void **state)
{
    (void)state;
    assert_int_equal(two_leader_failures(BROKER_TRUNCATE_LEADER_EPOCH), 0);
}

/* Partitions can be added to a topic (they get leaders and replicas); removing
 * them is refused with a clear error, as in Kafka. */
static void
test_cluster_add_partitions(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(12, &config, 2, -1, NULL);
    GError *error = NULL;
    assert_false(cluster_add_partitions(f->cluster, TOPIC, 1, &error));
    assert_non_null(strstr(error->message, "can only grow"));
    g_clear_error(&error);
    assert_true(cluster_add_partitions(f->cluster, TOPIC, 4, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    assert_int_equal(cluster_partition_count(f->cluster, TOPIC), 4);
    driver_produce(f->driver, TOPIC, 3, 20, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 20);
    assert_true(cluster_leader(f->cluster, TOPIC, 3) > 0);
    fixture_free(f);
}

/* A new topic reaches the brokers' metadata whole: the first time a broker
 * knows any of its partitions, it knows all of them (so a producer never
 * partitions keys by a partial count). */
static void
test_cluster_new_topic_metadata_is_whole(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    SimWorld *world = sim_world_new(14);
    History *history = history_new();
    Cluster *cluster = cluster_new(world, &config, history);
    sim_world_run_until(world, 100 * SIM_NS_PER_MS);
    assert_true(cluster_create_topic(cluster, "wide", 8, 3, NULL, NULL));
    guint seen = 0;
    while (seen == 0 && sim_world_step(world)) {
        for (gint32 b = 1; b <= 3; b++) {
            guint known = broker_metadata_partitions(cluster_broker(cluster, b), "wide");
            if (known > 0)
                assert_int_equal(known, 8);
            seen += known;
        }
    }
    assert_true(seen > 0);
    cluster_free(cluster);
    sim_world_free(world);
    history_free(history);
}

/* Runs until broker `id`'s node is down, at most `limit_ns`; returns the
 * virtual time it went down, -1 if it did not. */
static gint64
run_until_down(Fixture *f, gint32 id, gint64 limit_ns)
{
    SimNodeId node = broker_node(cluster_broker(f->cluster, id));
    gint64 end = sim_now_ns(f->world) + limit_ns;
    while (sim_now_ns(f->world) < end) {
        if (sim_node_state(f->world, node) == SIM_NODE_DOWN)
            return sim_now_ns(f->world);
        sim_world_run_until(f->world, sim_now_ns(f->world) + SIM_NS_PER_MS);
    }
    return -1;
}

static guint
events_of_kind(Fixture *f, HistoryEventKind kind)
{
    const GArray *events = history_events(f->history);
    guint n = 0;
    for (guint i = 0; i < events->len; i++)
        n += g_array_index(events, HistoryEvent, i).kind == kind;
    return n;
}

/* A controlled shutdown moves every leadership of the stopping broker
 * before its process exits (no partition is ever offline), keeps every
 * acknowledged record, and leaves logs that the next start need not scan:
 * every recovery point is at its LEO. */
static void
test_cluster_controlled_shutdown_moves_leadership(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(5, &config, 3, -1, NULL);
    gint32 stopping = cluster_leader(f->cluster, TOPIC, 0);
    driver_produce(f->driver, TOPIC, 0, 200, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    gint64 begun = sim_now_ns(f->world);
    broker_shutdown(cluster_broker(f->cluster, stopping));
    assert_true(broker_shutting_down(cluster_broker(f->cluster, stopping)));
    gint64 down = run_until_down(f, stopping, 5 * SIM_NS_PER_S);
    assert_true(down > begun);
    /* A round trip to the controller, its state writes and LeaderAndIsr,
     * the flushes and the session close: well under a second. */
    assert_true(down - begun < SIM_NS_PER_S);
    for (gint32 p = 0; p < 3; p++) {
        gint32 leader = cluster_leader(f->cluster, TOPIC, p);
        assert_true(leader > 0);
        assert_int_not_equal(leader, stopping);
    }
    assert_int_equal(events_of_kind(f, HISTORY_EVENT_OFFLINE), 0);
    sim_node_restart(f->world, broker_node(cluster_broker(f->cluster, stopping)));
    run_for(f, 100 * SIM_NS_PER_MS);
    for (gint32 p = 0; p < 3; p++) {
        const Plog *log = broker_partition_log(cluster_broker(f->cluster, stopping), TOPIC, p);
        assert_non_null(log);
        assert_int_equal(plog_recovery_info(log)->batches_checked, 0);
    }
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(acked_missing(f, 0), 0);
    fixture_free(f);
}

/* A broker that cannot reach the controller tries
 * controlled.shutdown.max.retries times, each attempt timing out after
 * controller.socket.timeout.ms and followed by the backoff, then stops
 * anyway; its leaderships then move as after a crash, but at once, since
 * its coordination session is closed. */
static void
test_cluster_controlled_shutdown_gives_up(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.controlled_shutdown_max_retries = 2;
    config.broker.controlled_shutdown_retry_backoff_ms = 1000;
    config.broker.controller_socket_timeout_ms = 2000;
    Fixture *f = fixture_new(6, &config, 3, -1, NULL);
    gint32 controller = cluster_controller(f->cluster);
    gint32 stopping = controller % 3 + 1;
    SimNodeId a = broker_node(cluster_broker(f->cluster, stopping));
    SimNodeId b = broker_node(cluster_broker(f->cluster, controller));
    sim_net_cut_one_way(sim_world_net(f->world), a, b);
    sim_net_cut_one_way(sim_world_net(f->world), b, a);
    gint64 begun = sim_now_ns(f->world);
    broker_shutdown(cluster_broker(f->cluster, stopping));
    gint64 down = run_until_down(f, stopping, 20 * SIM_NS_PER_S);
    assert_true(down > 0);
    /* Two attempts of 2 s plus their backoffs of 1 s, then the stop. */
    assert_true(down - begun >= 6 * SIM_NS_PER_S);
    assert_true(down - begun < 7 * SIM_NS_PER_S);
    run_for(f, SIM_NS_PER_S);
    for (gint32 p = 0; p < 3; p++) {
        gint32 leader = cluster_leader(f->cluster, TOPIC, p);
        assert_true(leader > 0);
        assert_int_not_equal(leader, stopping);
    }
    fixture_free(f);
}

/* The assignment znode's size bound is exact when every broker id is as
 * long as the largest (here all of them "7" or "70"): checked against the
 * string write_assignment's format gives; and a topic above ZooKeeper's
 * limit is refused with the bound in the message. */
static void
test_cluster_topic_znode_bound(void **state)
{
    (void)state;
    static const struct {
        guint partitions, rf, brokers;
    } cases[] = {{1, 1, 1}, {12, 3, 9}, {10, 2, 70}, {101, 3, 70}, {1000, 5, 99}, {12345, 3, 7}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        GString *data = g_string_new(NULL);
        for (guint p = 0; p < cases[c].partitions; p++) {
            g_string_append_printf(data, "%s%u:", p ? "|" : "", p);
            for (guint r = 0; r < cases[c].rf; r++)
                g_string_append_printf(data, "%s%u", r ? "," : "", cases[c].brokers);
        }
        assert_int_equal(cluster_topic_znode_bytes_max(cases[c].partitions, cases[c].rf,
                                                       cases[c].brokers),
                         data->len);
        g_string_free(data, TRUE);
    }
    ClusterConfig config;
    fixture_config_fast(&config);
    SimWorld *world = sim_world_new(1);
    Cluster *cluster = cluster_new(world, &config, NULL);
    GError *error = NULL;
    assert_false(cluster_create_topic(cluster, "huge", 100000, 3, NULL, &error));
    assert_non_null(strstr(error->message, "jute.maxbuffer"));
    g_clear_error(&error);
    assert_true(cluster_create_topic(cluster, "fits", 50000, 3, NULL, &error));
    assert_false(cluster_add_partitions(cluster, "fits", 100000, &error));
    assert_non_null(strstr(error->message, "znode limit"));
    g_clear_error(&error);
    cluster_free(cluster);
    sim_world_free(world);
}

/* A fixed assignment is what the cluster uses, whatever the seed: the
 * preferred (first) replicas lead, in the given order. */
static void
test_cluster_fixed_assignment(void **state)
{
    (void)state;
    static const gint32 replicas[][3] = {{3, 1, 2}, {2, 3, 1}, {1, 2, 3}};
    for (guint64 seed = 1; seed <= 3; seed++) {
        ClusterConfig config;
        fixture_config_fast(&config);
        SimWorld *world = sim_world_new(seed);
        Cluster *cluster = cluster_new(world, &config, NULL);
        g_autoptr(GPtrArray) assignment =
            g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
        for (guint p = 0; p < G_N_ELEMENTS(replicas); p++) {
            GArray *list = g_array_new(FALSE, FALSE, sizeof(gint32));
            g_array_append_vals(list, replicas[p], 3);
            g_ptr_array_add(assignment, list);
        }
        GError *error = NULL;
        assert_true(cluster_create_topic_assigned(cluster, TOPIC, assignment, NULL, &error));
        assert_true(cluster_wait_settled(cluster, 20 * SIM_NS_PER_S));
        for (guint p = 0; p < G_N_ELEMENTS(replicas); p++) {
            const GArray *got = cluster_replicas(cluster, TOPIC, (gint32)p);
            assert_int_equal(got->len, 3);
            for (guint r = 0; r < 3; r++)
                assert_int_equal(g_array_index(got, gint32, r), replicas[p][r]);
            assert_int_equal(cluster_leader(cluster, TOPIC, (gint32)p), replicas[p][0]);
        }
        /* Kafka's checks: a broker twice in a partition is refused. */
        g_array_index((GArray *)g_ptr_array_index(assignment, 0), gint32, 1) = 3;
        assert_false(cluster_create_topic_assigned(cluster, "other", assignment, NULL, &error));
        assert_non_null(strstr(error->message, "names broker 3 twice"));
        g_clear_error(&error);
        cluster_free(cluster);
        sim_world_free(world);
    }
}

/* A liveness message names the first ten unconverged partitions and counts
 * the rest: a large topic does not make a message of megabytes. */
static void
test_cluster_unconverged_is_capped(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(8, &config, 60, -1, NULL);
    assert_null(cluster_unconverged(f->cluster));
    guint led = 0;
    for (gint32 p = 0; p < 60; p++)
        led += cluster_leader(f->cluster, TOPIC, p) == 1;
    assert_true(led > 10);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, 1)));
    g_autofree char *what = cluster_unconverged(f->cluster);
    assert_non_null(what);
    /* Right after the crash, the partitions broker 1 led have no leader. */
    g_autofree char *tail = g_strdup_printf("; and %u more partitions", led - 10);
    assert_true(g_str_has_suffix(what, tail));
    guint named = 0;
    for (const char *at = what; (at = strstr(at, TOPIC "-")) != NULL; at++)
        named++;
    assert_int_equal(named, 10);
    fixture_free(f);
}

/* The assignment `assignment` holds, as "1,2,3|2,3,1|...". (transfer full) */
static char *
assignment_text(const GPtrArray *assignment)
{
    GString *text = g_string_new(NULL);
    for (guint p = 0; p < assignment->len; p++) {
        const GArray *replicas = g_ptr_array_index(assignment, p);
        g_string_append(text, p ? "|" : "");
        for (guint r = 0; r < replicas->len; r++)
            g_string_append_printf(text, "%s%d", r ? "," : "", g_array_index(replicas, gint32, r));
    }
    return g_string_free(text, FALSE);
}

/* Kafka 3.6's AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssign-
 * ReplicasToBrokers and AdminRackAwareTest.testReplicaAssignment, with
 * Kafka's broker ids 0..5 as ksim's 1..6: the rack-alternated list, the
 * rack-aware assignment from a fixed start index 0, and the rack-unaware one. */
static void
test_cluster_placement_matches_kafka(void **state)
{
    (void)state;
    static const char *const racks[] = {"rack1", "rack3", "rack3", "rack2", "rack2", "rack1"};
    gint32 arranged[6];
    cluster_rack_alternated_brokers(6, racks, arranged);
    static const gint32 expected_list[] = {1, 4, 2, 6, 5, 3};
    for (guint i = 0; i < 6; i++)
        assert_int_equal(arranged[i], expected_list[i]);
    gint32 five[5];
    cluster_rack_alternated_brokers(5, racks, five);
    static const gint32 expected_five[] = {1, 4, 2, 5, 3};
    for (guint i = 0; i < 5; i++)
        assert_int_equal(five[i], expected_five[i]);

    g_autoptr(GPtrArray) aware = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    cluster_place_replicas(6, racks, 0, 7, 3, 0, 0, aware);
    g_autofree char *aware_text = assignment_text(aware);
    assert_string_equal(aware_text, "1,4,2|4,2,6|2,6,5|6,5,3|5,3,1|3,1,4|1,5,3");

    g_autoptr(GPtrArray) unaware = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    cluster_place_replicas(5, NULL, 0, 10, 3, 0, 0, unaware);
    g_autofree char *unaware_text = assignment_text(unaware);
    assert_string_equal(unaware_text,
                        "1,2,3|2,3,4|3,4,5|4,5,1|5,1,2|1,3,4|2,4,5|3,5,1|4,1,2|5,2,3");
    /* Partitions added later continue the same sequence. */
    g_autoptr(GPtrArray) tail = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    cluster_place_replicas(6, racks, 5, 7, 3, 0, 0, tail);
    g_autofree char *tail_text = assignment_text(tail);
    assert_string_equal(tail_text, "3,1,4|1,5,3");
}

/* Rack-aware placement from every start and shift: each partition's replicas
 * are distinct and span min(rf, racks) racks, also with uneven racks and a
 * replication factor above the rack count (Kafka's testSkipBrokerWith-
 * ReplicaAlreadyAssigned: racks a, b, c, a, a with four replicas). */
static void
test_cluster_placement_spreads_racks(void **state)
{
    (void)state;
    static const struct {
        guint n, rf, n_racks;
        const char *racks[6];
    } cases[] = {
        {6, 3, 3, {"rack1", "rack2", "rack2", "rack3", "rack3", "rack1"}},
        {6, 3, 3, {"rack1", "rack1", "rack2", "rack3", "rack3", "rack1"}},
        {5, 4, 3, {"a", "b", "c", "a", "a"}},
        {3, 3, 3, {"us-east-1a", "us-east-1b", "us-east-1c"}},
        {4, 2, 1, {"one", "one", "one", "one"}},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        for (guint start = 0; start < cases[c].n; start++) {
            for (guint shift = 0; shift < cases[c].n; shift++) {
                g_autoptr(GPtrArray) a =
                    g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
                cluster_place_replicas(cases[c].n, cases[c].racks, 0, 13, cases[c].rf, start,
                                       shift, a);
                assert_int_equal(a->len, 13);
                for (guint p = 0; p < a->len; p++) {
                    const GArray *replicas = g_ptr_array_index(a, p);
                    assert_int_equal(replicas->len, cases[c].rf);
                    g_autoptr(GHashTable) ids = g_hash_table_new(g_direct_hash, g_direct_equal);
                    g_autoptr(GHashTable) racks = g_hash_table_new(g_str_hash, g_str_equal);
                    for (guint r = 0; r < replicas->len; r++) {
                        gint32 id = g_array_index(replicas, gint32, r);
                        g_hash_table_add(ids, GINT_TO_POINTER(id));
                        g_hash_table_add(racks, (gpointer)cases[c].racks[id - 1]);
                    }
                    assert_int_equal(g_hash_table_size(ids), cases[c].rf);
                    assert_int_equal(g_hash_table_size(racks), MIN(cases[c].rf, cases[c].n_racks));
                }
            }
        }
    }
}

/* Racks reach the cluster's admin: every topic partition spans three racks;
 * some brokers with a rack and some without is refused as Kafka's admin
 * refuses it, unless rack awareness is disabled (or SAFE, which falls back). */
static void
test_cluster_racks_place_topics(void **state)
{
    (void)state;
    static const char *const racks[] = {"az-b", "az-a", "az-c", "az-a", "az-b", "az-c"};
    ClusterConfig config;
    fixture_config_fast(&config);
    config.n_brokers = 6;
    config.racks = racks;
    SimWorld *world = sim_world_new(7);
    Cluster *cluster = cluster_new(world, &config, NULL);
    assert_string_equal(cluster_broker_rack(cluster, 2), "az-a");
    GError *error = NULL;
    assert_true(cluster_create_topic(cluster, "spread", 12, 3, NULL, &error));
    assert_true(cluster_add_partitions(cluster, "spread", 18, &error));
    for (gint32 p = 0; p < 18; p++) {
        const GArray *replicas = cluster_replicas(cluster, "spread", p);
        const char *seen[3];
        for (guint r = 0; r < 3; r++) {
            seen[r] = racks[g_array_index(replicas, gint32, r) - 1];
            for (guint q = 0; q < r; q++)
                assert_string_not_equal(seen[q], seen[r]);
        }
    }
    cluster_free(cluster);
    sim_world_free(world);

    static const char *const mixed[] = {"az-a", NULL, "az-b"};
    fixture_config_fast(&config);
    config.racks = mixed;
    world = sim_world_new(7);
    cluster = cluster_new(world, &config, NULL);
    assert_null(cluster_broker_rack(cluster, 2));
    assert_false(cluster_create_topic(cluster, "refused", 3, 3, NULL, &error));
    assert_non_null(strstr(error->message, "not all brokers have rack information"));
    g_clear_error(&error);
    assert_true(cluster_create_topic_rack_mode(cluster, "unaware", 3, 2, NULL,
                                               CLUSTER_RACK_AWARE_DISABLED, &error));
    assert_true(cluster_create_topic_rack_mode(cluster, "safe", 3, 2, NULL,
                                               CLUSTER_RACK_AWARE_SAFE, &error));
    assert_true(cluster_add_partitions(cluster, "unaware", 6, &error));
    cluster_free(cluster);
    sim_world_free(world);
}

/* follower_nth counts the running replicas other than the leader in
 * assignment order; the first is cluster_follower's; past the last is -1. */
static void
test_cluster_follower_nth(void **state)
{
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(3, &config, 1, -1, NULL);
    const GArray *replicas = cluster_replicas(f->cluster, TOPIC, 0);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 expected[2];
    guint n = 0;
    for (guint r = 0; r < replicas->len; r++) {
        if (g_array_index(replicas, gint32, r) != leader)
            expected[n++] = g_array_index(replicas, gint32, r);
    }
    assert_int_equal(n, 2);
    assert_int_equal(cluster_follower(f->cluster, TOPIC, 0), expected[0]);
    assert_int_equal(cluster_follower_nth(f->cluster, TOPIC, 0, 1), expected[0]);
    assert_int_equal(cluster_follower_nth(f->cluster, TOPIC, 0, 2), expected[1]);
    assert_int_equal(cluster_follower_nth(f->cluster, TOPIC, 0, 3), -1);
    sim_node_crash(f->world, broker_node(cluster_broker(f->cluster, expected[0])));
    assert_int_equal(cluster_follower_nth(f->cluster, TOPIC, 0, 1), expected[1]);
    assert_int_equal(cluster_follower_nth(f->cluster, TOPIC, 0, 2), -1);
    fixture_free(f);
}

/* ---- KRaft: combined mode and the single-controller failover ---- */

static void
kraft_config(ClusterConfig *config, gboolean combined, guint voters)
{
    fixture_config_fast(config);
    config->kraft = TRUE;
    config->combined = combined;
    config->n_controllers = voters;
    config->broker_session_timeout_ms = 6000;
}

/* The first CONTROLLER_LOST event at or after `from_ns`, or NULL. */
static const HistoryEvent *
controller_lost_since(const History *history, gint64 from_ns)
{
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if (e->kind == HISTORY_EVENT_CONTROLLER_LOST && e->time_ns >= from_ns)
            return e;
    }
    return NULL;
}

/* Combined mode: the voters run in the brokers' processes, so a crash of the
 * active controller's node stops its broker and its voter at once; another
 * broker's voter takes over, its partitions get new leaders, and after a
 * restart both roles run again with the metadata log beside the partitions
 * (not loaded as one). */
static void
test_cluster_kraft_combined_crash_takes_both_roles(void **state)
{
    (void)state;
    ClusterConfig config;
    kraft_config(&config, TRUE, 3);
    Fixture *f = fixture_new(11, &config, 3, -1, NULL);
    g_autoptr(GArray) nodes = cluster_controller_nodes(f->cluster);
    assert_int_equal(nodes->len, 3);
    for (guint i = 0; i < nodes->len; i++)
        assert_int_equal(g_array_index(nodes, SimNodeId, i),
                         broker_node(cluster_broker(f->cluster, (gint32)i + 1)));
    gint32 active = cluster_controller(f->cluster);
    assert_true(active >= 1 && active <= 3);
    Broker *broker = cluster_broker(f->cluster, active);
    SimNodeId node = broker_node(broker);
    assert_int_equal(cluster_active_controller_node(f->cluster), node);
    RaftNode *raft = broker_raft_node(broker);
    assert_non_null(raft);
    assert_true(sim_disk_exists(sim_node_disk(f->world, node),
                                "__cluster_metadata-0/quorum-state"));
    sim_node_crash(f->world, node);
    assert_false(broker_running(broker));
    assert_int_equal(raft_node_role(raft), RAFT_ROLE_DOWN);
    /* A new controller among the others; once it fences the dead broker
     * (broker.session.timeout.ms after it took over), every partition is
     * led by a live broker. */
    sim_world_run_until(f->world, sim_now_ns(f->world) + 15 * SIM_NS_PER_S);
    gint32 successor = cluster_controller(f->cluster);
    assert_true(successor >= 1 && successor != active);
    for (gint32 p = 0; p < 3; p++) {
        gint32 leader = cluster_leader(f->cluster, TOPIC, p);
        assert_true(leader >= 1 && leader != active);
    }
    sim_node_restart(f->world, node);
    assert_true(broker_running(broker));
    assert_int_not_equal(raft_node_role(raft), RAFT_ROLE_DOWN);
    assert_true(cluster_wait_settled(f->cluster, 30 * SIM_NS_PER_S));
    /* It replays the local voter's log: it knows the topic's leaders. */
    g_autoptr(GArray) partitions = broker_partitions(broker);
    assert_int_equal(partitions->len, 3);
    assert_int_equal(cluster_violations(f->cluster), 0);
    fixture_free(f);
}

/* A quorum of one voter has nobody to stand for election: its failover
 * starts when a broker notices it cannot reach the controller (its
 * connections break when the process dies), and ends once it restarted and
 * is active again. A pause is not a loss: the controller stays active. */
static void
test_cluster_kraft_single_controller_failover(void **state)
{
    (void)state;
    static const gboolean combined[] = {FALSE, TRUE};
    for (guint c = 0; c < G_N_ELEMENTS(combined); c++) {
        ClusterConfig config;
        kraft_config(&config, combined[c], 1);
        Fixture *f = fixture_new(12, &config, 3, -1, NULL);
        SimNodeId node = cluster_active_controller_node(f->cluster);
        assert_int_not_equal(node, SIM_NODE_NONE);
        gint32 id = combined[c] ? 1 : KRAFT_CONTROLLER_ID_BASE;
        assert_int_equal(cluster_controller_node(f->cluster, id), node);
        gint64 paused_ns = sim_now_ns(f->world);
        sim_node_pause(f->world, node);
        sim_world_run_until(f->world, paused_ns + 5 * SIM_NS_PER_S);
        sim_node_resume(f->world, node);
        sim_world_run_until(f->world, sim_now_ns(f->world) + SIM_NS_PER_S);
        assert_null(controller_lost_since(f->history, paused_ns));
        gint64 crashed_ns = sim_now_ns(f->world);
        sim_node_crash(f->world, node);
        sim_world_run_until(f->world, crashed_ns + 5 * SIM_NS_PER_S);
        const HistoryEvent *lost = controller_lost_since(f->history, crashed_ns);
        assert_non_null(lost);
        assert_int_equal(lost->broker, id);
        /* Noticed by a broken connection or, at the latest, a heartbeat's
         * request timeout. */
        assert_true(lost->time_ns - crashed_ns <=
                    (config.broker.broker_heartbeat_interval_ms +
                     config.broker.controller_quorum_request_timeout_ms) *
                        SIM_NS_PER_MS);
        assert_int_equal(cluster_active_controller_node(f->cluster), SIM_NODE_NONE);
        sim_node_restart(f->world, node);
        sim_world_run_until(f->world, sim_now_ns(f->world) + 10 * SIM_NS_PER_S);
        assert_int_equal(cluster_active_controller_node(f->cluster), node);
        assert_true(cluster_wait_settled(f->cluster, 30 * SIM_NS_PER_S));
        fixture_free(f);
    }
}

/* An active controller cut off from everyone resigns when its check quorum
 * fails, and stays active in its own eyes until a new epoch reaches it;
 * when its brokers' sessions lapse meanwhile it cannot write their
 * FenceBroker records, and must not try again at the same instant for ever
 * (the run stalled there, in combined mode whenever a partition cut off the
 * node of the active controller longer than the broker session). */
static void
test_cluster_kraft_isolated_controller_does_not_stall(void **state)
{
    (void)state;
    static const gboolean combined[] = {FALSE, TRUE};
    for (guint c = 0; c < G_N_ELEMENTS(combined); c++) {
        ClusterConfig config;
        kraft_config(&config, combined[c], 3);
        /* It resigns 3 s after it is cut off (1.5 fetch timeouts) and stands
         * for election 5 to 10 s later: the 6 s sessions lapse in between. */
        config.raft.election_timeout_ns = 5 * SIM_NS_PER_S;
        Fixture *f = fixture_new(13, &config, 3, -1, NULL);
        SimNodeId node = cluster_active_controller_node(f->cluster);
        assert_int_not_equal(node, SIM_NODE_NONE);
        sim_net_isolate(sim_world_net(f->world), node);
        gint64 until_ns = sim_now_ns(f->world) + 15 * SIM_NS_PER_S;
        guint steps = 0;
        while (sim_now_ns(f->world) < until_ns && steps < 300000 && sim_world_step(f->world))
            steps++;
        assert_true(sim_now_ns(f->world) >= until_ns);
        assert_int_not_equal(cluster_active_controller_node(f->cluster), SIM_NODE_NONE);
        fixture_free(f);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cluster_steady_replication),
        cmocka_unit_test(test_cluster_final_state_ends_a_log_at_its_last_whole_batch),
        cmocka_unit_test(test_cluster_follower_crash_and_rejoin),
        cmocka_unit_test(test_cluster_leader_crash_elects_from_isr),
        cmocka_unit_test(test_cluster_preferred_leader_returns),
        cmocka_unit_test(test_cluster_isr_shrink_and_expand),
        cmocka_unit_test(test_cluster_min_insync_refuses),
        cmocka_unit_test(test_cluster_unclean_election_loses_acked),
        cmocka_unit_test(test_cluster_controller_failover),
        cmocka_unit_test(test_cluster_leader_session_expiry),
        cmocka_unit_test(test_cluster_restart_before_hw_truncation_hw),
        cmocka_unit_test(test_cluster_restart_before_hw_truncation_leader_epoch),
        cmocka_unit_test(test_cluster_two_failures_hw_mode_loses),
        cmocka_unit_test(test_cluster_two_failures_leader_epoch_keeps),
        cmocka_unit_test(test_cluster_add_partitions),
        cmocka_unit_test(test_cluster_new_topic_metadata_is_whole),
        cmocka_unit_test(test_cluster_topic_znode_bound),
        cmocka_unit_test(test_cluster_unconverged_is_capped),
        cmocka_unit_test(test_cluster_fixed_assignment),
        cmocka_unit_test(test_cluster_placement_matches_kafka),
        cmocka_unit_test(test_cluster_placement_spreads_racks),
        cmocka_unit_test(test_cluster_racks_place_topics),
        cmocka_unit_test(test_cluster_follower_nth),
        cmocka_unit_test(test_cluster_kraft_combined_crash_takes_both_roles),
        cmocka_unit_test(test_cluster_kraft_single_controller_failover),
        cmocka_unit_test(test_cluster_kraft_isolated_controller_does_not_stall),
        cmocka_unit_test(test_cluster_controlled_shutdown_moves_leadership),
        cmocka_unit_test(test_cluster_controlled_shutdown_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
