/*
 * Replica manager tests (replica.h, replica*.c) through the broker's public
 * views on a real simulated cluster (coordination node, controller, three
 * brokers, a producing driver): the HW advances to the smallest LEO of the
 * ISR, the ISR shrinks after replica.lag.time.max.ms, a leader that becomes
 * follower truncates in both truncation modes, a follower of a leader that
 * lacks its epochs truncates by epoch (not to its HW), and the HW checkpoint
 * is written and read back after a restart, a follower whose fetch
 * response was lost fetches again after replica.socket.timeout.ms, and a
 * fetch delayed for replica.fetch.min.bytes counts the bytes of all its
 * partitions, and followers' incremental fetch sessions are lost when their
 * leader restarts and made again; the log directory's recovery-point
 * checkpoint is written every log.flush.offset.checkpoint.interval.ms and
 * after a truncation that lowers a recovery point, and recovery after a
 * crash re-reads what it does not cover.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cluster_fixture.h"
#include "plog.h"
#include "plog_batch.h"
#include "producer.h"
#include "replica.h"
#include "sim_disk.h"
#include "sim_net.h"

#define HW_CHECKPOINT_FILE "replication-offset-checkpoint"

/* The two replicas that do not lead. */
static void
followers_of(Fixture *f, gint32 leader, gint32 *followers)
{
    guint n = 0;
    for (gint32 b = 1; b <= 3; b++) {
        if (b != leader)
            followers[n++] = b;
    }
    assert_int_equal(n, 2);
    (void)f;
}

static void
test_replica_hw_is_min_isr_leo(void **state)
{
    /* Goal: the leader's HW stops at the LEO of an ISR member that stopped
     * fetching, and reaches the leader's LEO once it fetches again. */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 30000; /* the paused one stays in the ISR */
    Fixture *f = fixture_new(11, &config, 1, 1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    driver_produce(f->driver, TOPIC, 0, 40, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).hw, 40);
    sim_node_pause(f->world, node_of(f, followers[0]));
    driver_produce(f->driver, TOPIC, 0, 60, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    BrokerPartitionInfo info = info_of(f, leader, 0);
    assert_int_equal(info.leo, 100);
    assert_true(isr_has(&info, followers[0]));
    assert_int_equal(info.hw, info_of(f, followers[0], 0).leo);
    assert_int_equal(info.hw, 40);
    assert_int_equal(info_of(f, followers[1], 0).leo, 100);
    sim_node_resume(f->world, node_of(f, followers[0]));
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).hw, 100);
    fixture_free(f);
}

static void
test_replica_isr_shrinks_after_lag_time(void **state)
{
    /* Goal: a follower that stops fetching stays in the ISR for less than
     * replica.lag.time.max.ms, leaves it after, and the HW then moves on
     * without it. */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 2000;
    Fixture *f = fixture_new(12, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    sim_node_pause(f->world, node_of(f, followers[0]));
    run_for(f, 1 * SIM_NS_PER_S);
    BrokerPartitionInfo info = info_of(f, leader, 0);
    assert_true(isr_has(&info, followers[0]));
    run_for(f, 3 * SIM_NS_PER_S);
    info = info_of(f, leader, 0);
    assert_false(isr_has(&info, followers[0]));
    assert_int_equal(info.n_isr, 2);
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(driver_acked(f->driver), 50);
    assert_int_equal(info_of(f, leader, 0).hw, 50);
    fixture_free(f);
}

typedef struct {
    const char *name;
    BrokerTruncationMode mode;
    const char *reason; /* in the text of the old leader's truncation event */
} TruncationCase;

static const TruncationCase TRUNCATION_CASES[] = {
    {"hw", BROKER_TRUNCATE_HW, "follower truncates to its high watermark"},
    {"leader-epoch", BROKER_TRUNCATE_LEADER_EPOCH,
     "follower truncates to its epoch's end offset at the leader"},
    {"kip-101", BROKER_TRUNCATE_KIP101, "follower truncates to its epoch's end offset at the leader"},
};

/* The truncation events of `broker`, as "old LEO->new LEO: text" lines. */
static guint
truncations_of(Fixture *f, gint32 broker, const char *reason, gint64 *to)
{
    const GArray *events = history_events(f->history);
    guint found = 0;
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind != HISTORY_EVENT_TRUNCATED || event->broker != broker)
            continue;
        if (event->text == NULL || strstr(event->text, reason) == NULL)
            continue;
        found++;
        *to = event->offset;
    }
    return found;
}

static void
test_replica_follower_truncates_on_becoming_follower(void **state)
{
    /* Goal: a leader with records past the HW that no follower has comes
     * back as a follower and truncates them — to its HW in hw mode, to its
     * epoch's end at the new leader in leader-epoch mode. */
    (void)state;
    for (guint c = 0; c < G_N_ELEMENTS(TRUNCATION_CASES); c++) {
        const TruncationCase *tc = &TRUNCATION_CASES[c];
        print_message("case: %s\n", tc->name);
        ClusterConfig config;
        fixture_config_fast(&config);
        config.broker.truncation_mode = tc->mode;
        config.broker.replica_lag_time_max_ms = 30000;
        Fixture *f = fixture_new(13, &config, 1, 1, NULL);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        gint32 followers[2];
        followers_of(f, leader, followers);
        driver_produce(f->driver, TOPIC, 0, 50, 10);
        run_for(f, 2 * SIM_NS_PER_S);
        for (guint i = 0; i < 2; i++)
            sim_node_pause(f->world, node_of(f, followers[i]));
        driver_produce(f->driver, TOPIC, 0, 30, 10);
        run_for(f, 2 * SIM_NS_PER_S);
        assert_int_equal(info_of(f, leader, 0).leo, 80);
        assert_int_equal(info_of(f, leader, 0).hw, 50);
        sim_node_crash(f->world, node_of(f, leader));
        for (guint i = 0; i < 2; i++)
            sim_node_resume(f->world, node_of(f, followers[i]));
        run_for(f, 10 * SIM_NS_PER_S);
        gint32 next = cluster_leader(f->cluster, TOPIC, 0);
        assert_true(next == followers[0] || next == followers[1]);
        sim_node_restart(f->world, node_of(f, leader));
        run_for(f, 10 * SIM_NS_PER_S);
        gint64 to = -1;
        assert_int_equal(truncations_of(f, leader, tc->reason, &to), 1);
        assert_int_equal(to, 50);
        assert_int_equal(info_of(f, leader, 0).leo, info_of(f, next, 0).leo);
        cluster_check_agreement(f->cluster);
        assert_int_equal(cluster_violations(f->cluster), 0);
        fixture_free(f);
    }
}

static const TruncationCase SAME_LEADER_CASES[] = {
    {"hw", BROKER_TRUNCATE_HW, "follower truncates to its high watermark"},
    {"leader-epoch", BROKER_TRUNCATE_LEADER_EPOCH, "follower truncates"},
    {"kip-101", BROKER_TRUNCATE_KIP101, "follower truncates"},
};

static void
test_replica_same_leader_new_epoch_keeps_follower_log(void **state)
{
    /* Goal: a follower told of a new leader epoch whose leader did not
     * change (the controller dropped a dead replica from the ISR) keeps its
     * records past its HW: Kafka 0.10's makeFollowers truncates only the
     * partitions whose leader changed, and Kafka 2.1+ asks the leader, who
     * has them. */
    (void)state;
    for (guint c = 0; c < G_N_ELEMENTS(SAME_LEADER_CASES); c++) {
        const TruncationCase *tc = &SAME_LEADER_CASES[c];
        print_message("case: %s\n", tc->name);
        ClusterConfig config;
        fixture_config_fast(&config);
        config.broker.truncation_mode = tc->mode;
        config.broker.replica_lag_time_max_ms = 30000; /* the paused one stays in the ISR */
        Fixture *f = fixture_new(11, &config, 1, 1, NULL);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        gint32 followers[2];
        followers_of(f, leader, followers);
        gint32 stuck = followers[0], kept = followers[1];
        driver_produce(f->driver, TOPIC, 0, 40, 10);
        run_for(f, 2 * SIM_NS_PER_S);
        /* The stuck ISR member holds the HW at 40 while the other follower
         * replicates to 100. */
        sim_node_pause(f->world, node_of(f, stuck));
        driver_produce(f->driver, TOPIC, 0, 60, 10);
        run_for(f, 2 * SIM_NS_PER_S);
        BrokerPartitionInfo before = info_of(f, kept, 0);
        assert_int_equal(before.leo, 100);
        assert_int_equal(before.hw, 40);
        sim_node_crash(f->world, node_of(f, stuck));
        run_for(f, 10 * SIM_NS_PER_S);
        BrokerPartitionInfo after = info_of(f, kept, 0);
        assert_true(after.leader_epoch > before.leader_epoch);
        assert_int_equal(after.leader, leader);
        assert_int_equal(after.n_isr, 2);
        gint64 to = -1;
        assert_int_equal(truncations_of(f, kept, tc->reason, &to), 0);
        assert_int_equal(after.leo, 100);
        assert_int_equal(after.hw, 100);
        fixture_free(f);
    }
}

/* Deletes every file of TOPIC's partition 0 on `broker`'s disk (a crashed
 * broker's replaced disk). */
static void
wipe_partition(Fixture *f, gint32 broker)
{
    SimDisk *disk = sim_node_disk(f->world, node_of(f, broker));
    g_autoptr(GPtrArray) files = sim_disk_list(disk, TOPIC "-0/");
    assert_true(files->len > 0);
    for (guint i = 0; i < files->len; i++)
        assert_int_equal(sim_disk_delete(disk, g_ptr_array_index(files, i)), SIM_DISK_OK);
}

static void
test_replica_follower_of_an_emptier_leader_truncates_by_epoch(void **state)
{
    /* Goal: a follower asking about an epoch older than every epoch its
     * leader caches truncates to where the leader's first epoch starts, as
     * Kafka 2.1+ does (Kafka 2.0 answered UNDEFINED and the follower kept
     * its log up to its HW: the logs diverged below the HW). The case: a
     * replica that comes back with an empty log directory (its disk
     * replaced) is elected uncleanly and takes new writes; a replica holding
     * the old records then follows it. */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.truncation_mode = BROKER_TRUNCATE_LEADER_EPOCH;
    config.broker.unclean_leader_election = TRUE;
    Fixture *f = fixture_new(13, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    gint32 emptied = followers[0], keeper = followers[1];
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 3 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, keeper, 0).hw, 50);
    sim_node_crash(f->world, node_of(f, emptied));
    wipe_partition(f, emptied);
    run_for(f, 10 * SIM_NS_PER_S);
    sim_node_crash(f->world, node_of(f, leader));
    run_for(f, 10 * SIM_NS_PER_S);
    assert_int_equal(cluster_leader(f->cluster, TOPIC, 0), keeper);
    sim_node_crash(f->world, node_of(f, keeper));
    run_for(f, 10 * SIM_NS_PER_S);
    sim_node_restart(f->world, node_of(f, emptied));
    run_for(f, 10 * SIM_NS_PER_S);
    assert_int_equal(cluster_leader(f->cluster, TOPIC, 0), emptied);
    assert_int_equal(info_of(f, emptied, 0).leo, 0);
    driver_produce(f->driver, TOPIC, 0, 20, 10);
    run_for(f, 3 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, emptied, 0).leo, 20);
    sim_node_restart(f->world, node_of(f, keeper));
    run_for(f, 10 * SIM_NS_PER_S);
    gint64 to = -1;
    assert_int_equal(truncations_of(f, keeper, "follower truncates to its epoch's end offset",
                                    &to), 1);
    assert_int_equal(to, 0);
    assert_int_equal(info_of(f, keeper, 0).leo, 20);
    cluster_check_agreement(f->cluster);
    assert_int_equal(cluster_violations(f->cluster), 0);
    fixture_free(f);
}

static void
test_replica_hw_checkpoint_read_back_after_restart(void **state)
{
    /* Goal: the HW checkpoint on disk holds the partition's HW, and a
     * restarted broker starts from it; without the file it starts at 0. */
    (void)state;
    for (int keep_file = 1; keep_file >= 0; keep_file--) {
        ClusterConfig config;
        fixture_config_fast(&config);
        Fixture *f = fixture_new(14, &config, 1, -1, NULL);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        gint32 followers[2];
        followers_of(f, leader, followers);
        driver_produce(f->driver, TOPIC, 0, 70, 10);
        run_for(f, 3 * SIM_NS_PER_S);
        gint32 broker = followers[0];
        assert_int_equal(info_of(f, broker, 0).hw, 70);
        SimDisk *disk = sim_node_disk(f->world, node_of(f, broker));
        gint64 size = sim_disk_size(disk, HW_CHECKPOINT_FILE);
        assert_true(size > 0);
        g_autofree char *text = g_malloc0((gsize)size + 1);
        assert_int_equal(sim_disk_read(disk, HW_CHECKPOINT_FILE, 0, text, (gsize)size), size);
        assert_non_null(strstr(text, "\n" TOPIC " 0 70\n"));
        sim_node_crash(f->world, node_of(f, broker));
        if (!keep_file)
            sim_disk_delete(disk, HW_CHECKPOINT_FILE);
        sim_node_restart(f->world, node_of(f, broker));
        /* Before any controller request: what recovery read from disk. */
        BrokerPartitionInfo info = info_of(f, broker, 0);
        assert_true(info.present);
        assert_int_equal(info.leo, 70);
        assert_int_equal(info.hw, keep_file ? 70 : 0);
        fixture_free(f);
    }
}

static void
test_replica_recovery_points_checkpointed_per_log_dir(void **state)
{
    /* Goal: a flush moves a recovery point in memory only; the log
     * directory's checkpoint records it every
     * log.flush.offset.checkpoint.interval.ms, and a broker that crashes
     * re-verifies every batch the checkpoint does not cover. */
    (void)state;
    for (int checkpointed = 0; checkpointed <= 1; checkpointed++) {
        print_message("checkpointed: %d\n", checkpointed);
        ClusterConfig config;
        fixture_config_fast(&config);
        config.broker.log_flush_offset_checkpoint_interval_ms =
            checkpointed ? 1000 : 3600 * 1000;
        TopicConfig topic;
        topic_config_from_broker(&topic, &config.broker);
        topic.log.flush_interval_messages = 1;
        Fixture *f = fixture_new(14, &config, 1, -1, &topic);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        gint32 followers[2];
        followers_of(f, leader, followers);
        driver_produce(f->driver, TOPIC, 0, 70, 10);
        run_for(f, 3 * SIM_NS_PER_S);
        gint32 broker = followers[0];
        Broker *b = cluster_broker(f->cluster, broker);
        assert_int_equal(plog_recovery_point(broker_partition_log(b, TOPIC, 0)), 70);
        SimDisk *disk = sim_node_disk(f->world, node_of(f, broker));
        assert_false(sim_disk_exists(disk, TOPIC "-0/recovery-point-offset-checkpoint"));
        g_autoptr(GHashTable) recovery_points = plog_recovery_points_read(disk);
        if (checkpointed) {
            assert_non_null(recovery_points);
            const gint64 *recovery_point = g_hash_table_lookup(recovery_points, TOPIC "-0");
            assert_non_null(recovery_point);
            assert_int_equal(*recovery_point, 70);
        } else {
            assert_null(recovery_points);
        }
        sim_node_crash(f->world, node_of(f, broker));
        sim_node_restart(f->world, node_of(f, broker));
        const Plog *log = broker_partition_log(b, TOPIC, 0);
        assert_non_null(log);
        const PlogRecoveryInfo *info = plog_recovery_info(log);
        assert_int_equal(info->recovery_point_valid, checkpointed);
        assert_int_equal(plog_log_end_offset(log), 70);
        assert_int_equal(plog_recovery_point(log), checkpointed ? 70 : 0);
        /* Seven batches of ten records. */
        assert_int_equal(info->batches_checked, checkpointed ? 0 : 7);
        fixture_free(f);
    }
}

static void
test_replica_truncation_below_recovery_point_checkpoints(void **state)
{
    /* Goal: a leader whose flushed records past the HW no follower has is
     * paused, replaced, and comes back as a follower: its truncation lowers
     * its log's recovery point below 80, and the log directory's checkpoint
     * records the lower one at once, long before the periodic write. (A
     * follower may take a fetch answered before its pause when it resumes,
     * so the truncation is to where the new leader's log ends: 50 or a
     * batch later.) */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 30000;
    config.broker.log_flush_offset_checkpoint_interval_ms = 3600 * 1000;
    TopicConfig topic;
    topic_config_from_broker(&topic, &config.broker);
    topic.log.flush_interval_messages = 1;
    Fixture *f = fixture_new(13, &config, 1, 1, &topic);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    driver_produce(f->driver, TOPIC, 0, 50, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    for (guint i = 0; i < 2; i++)
        sim_node_pause(f->world, node_of(f, followers[i]));
    driver_produce(f->driver, TOPIC, 0, 30, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    Broker *old = cluster_broker(f->cluster, leader);
    assert_int_equal(plog_recovery_point(broker_partition_log(old, TOPIC, 0)), 80);
    sim_node_pause(f->world, node_of(f, leader));
    for (guint i = 0; i < 2; i++)
        sim_node_resume(f->world, node_of(f, followers[i]));
    run_for(f, 10 * SIM_NS_PER_S);
    assert_int_not_equal(cluster_leader(f->cluster, TOPIC, 0), leader);
    SimDisk *disk = sim_node_disk(f->world, node_of(f, leader));
    assert_false(sim_disk_exists(disk, PLOG_RECOVERY_POINTS_FILE));
    sim_node_resume(f->world, node_of(f, leader));
    run_for(f, 10 * SIM_NS_PER_S);
    gint64 to = -1;
    assert_int_equal(truncations_of(f, leader, "follower truncates", &to), 1);
    assert_true(to >= 50);
    assert_true(to < 80);
    g_autoptr(GHashTable) recovery_points = plog_recovery_points_read(disk);
    assert_non_null(recovery_points);
    const gint64 *recovery_point = g_hash_table_lookup(recovery_points, TOPIC "-0");
    assert_non_null(recovery_point);
    assert_int_equal(*recovery_point, to);
    assert_int_equal(cluster_violations(f->cluster), 0);
    fixture_free(f);
}

static void
duplicate_result_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    (void)producer;
    *(ProducerResult *)user_data = *result;
}

/* The leader's acknowledgements of offsets [base, base + 1), in order. */
static GArray *
acks_of_offset(Fixture *f, gint32 leader, gint64 base)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(HistoryEvent));
    const GArray *events = history_events(f->history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if (e->kind == HISTORY_EVENT_ACK && e->broker == leader && e->offset == base)
            g_array_append_val(out, *e);
    }
    return out;
}

static void
test_replica_duplicate_answered_when_hw_reaches_it(void **state)
{
    /* Goal: a retried batch the leader already holds is answered as soon as
     * the HW reaches its own offsets, though a later batch of another
     * producer waits before it in the purgatory (Kafka completes every
     * waiting produce the HW passes, not only the oldest). */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 30000; /* the cut-off followers stay in the ISR */
    config.broker.replica_fetch_max_bytes = 1;     /* one batch per follower fetch */
    config.broker.replica_socket_timeout_ms = 1000; /* a lost fetch is sent again soon */
    Fixture *f = fixture_new(5, &config, 1, -1, NULL);
    gint32 leader = info_of(f, 1, 0).leader;
    gint32 followers[2];
    followers_of(f, leader, followers);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig producer_config;
    kconfig_bind_producer_defaults(&producer_config); /* idempotent, acks=all */
    producer_config.request_timeout_ms = 1000;
    producer_config.retry_backoff_ms = 100;
    Producer *producer = producer_new(f->world, "producer", 1, bootstrap, &producer_config,
                                      f->history);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_true(producer_id(producer) >= 0);

    /* The followers' fetches no longer reach the leader (their metadata
     * answers still reach the producer), so the HW stops at 0: A (offset 0)
     * waits, then B (offset 1). A's request times out, at the broker and at
     * the client, and its retry, a duplicate, waits for offset 1 behind B. */
    SimNet *net = sim_world_net(f->world);
    for (guint i = 0; i < 2; i++)
        sim_net_cut_one_way(net, node_of(f, followers[i]), node_of(f, leader));
    ProducerResult result = {.outcome = HISTORY_INVOKE};
    producer_send(producer, TOPIC, 0, 0, 1, 100, duplicate_result_cb, &result);
    run_for(f, 100 * SIM_NS_PER_MS);
    driver_produce(f->driver, TOPIC, 0, 1, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).leo, 2);
    assert_int_equal(info_of(f, leader, 0).hw, 0);

    /* The followers fetch one batch at a time: the HW reaches 1, then 2. */
    for (guint i = 0; i < 2; i++)
        sim_net_mend_one_way(net, node_of(f, followers[i]), node_of(f, leader));
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).hw, 2);
    assert_int_equal(result.outcome, HISTORY_OK);
    assert_int_equal(result.offset, 0);
    /* Offset 0 was acknowledged once, to the duplicate (the first request
     * timed out in the purgatory: its timeout is the client's), and when the
     * HW was 1, not once it had passed B as well. */
    g_autoptr(GArray) acks = acks_of_offset(f, leader, 0);
    assert_int_equal(acks->len, 1);
    assert_int_equal(g_array_index(acks, HistoryEvent, 0).hw, 1);
    producer_free(producer);
    fixture_free(f);
}

static void
test_replica_lost_fetch_response_sent_again_after_socket_timeout(void **state)
{
    /* Goal: a follower whose fetch response is lost (the connection stays
     * up) waits for it until replica.socket.timeout.ms, then fetches again
     * after replica.fetch.backoff.ms, catches up and rejoins the ISR (Kafka's
     * AbstractFetcherThread: a fetch that fails with a timeout backs off the
     * partitions and is sent again). Without the request timeout it would
     * wait for ever and stay out of the ISR. */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_socket_timeout_ms = 4000;
    config.broker.replica_fetch_backoff_ms = 1000;
    Fixture *f = fixture_new(13, &config, 1, -1, NULL);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    driver_produce(f->driver, TOPIC, 0, 20, 10);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, followers[0], 0).leo, 20);

    /* The leader's next message to the follower is the answer to its
     * waiting fetch (replica.fetch.wait.max.ms at most): lost. */
    SimNet *net = sim_world_net(f->world);
    guint64 dropped = sim_net_messages_dropped(net);
    sim_net_lose_next(net, node_of(f, leader), node_of(f, followers[0]), 1);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(sim_net_messages_dropped(net), dropped + 1);
    driver_produce(f->driver, TOPIC, 0, 30, 10);
    run_for(f, 2 * SIM_NS_PER_S);
    BrokerPartitionInfo info = info_of(f, leader, 0);
    assert_int_equal(info.hw, 50);
    assert_false(isr_has(&info, followers[0]));
    assert_int_equal(info_of(f, followers[0], 0).leo, 20);

    /* At most 4 s after the loss the fetch times out; 1 s later it is sent
     * again. */
    run_for(f, 3 * SIM_NS_PER_S);
    info = info_of(f, leader, 0);
    assert_int_equal(info_of(f, followers[0], 0).leo, 50);
    assert_true(isr_has(&info, followers[0]));
    fixture_free(f);
}

/* Two partitions of TOPIC that `*leader` leads, as `*a` and `*b`. */
static void
two_partitions_of_one_leader(Fixture *f, guint partitions, gint32 *leader, gint32 *a, gint32 *b)
{
    for (gint32 i = 0; i < (gint32)partitions; i++) {
        for (gint32 j = i + 1; j < (gint32)partitions; j++) {
            if (cluster_leader(f->cluster, TOPIC, i) == cluster_leader(f->cluster, TOPIC, j)) {
                *leader = cluster_leader(f->cluster, TOPIC, i);
                *a = i;
                *b = j;
                return;
            }
        }
    }
    fail_msg("no leader leads two partitions");
}

static void
test_replica_delayed_fetch_sums_bytes_over_its_partitions(void **state)
{
    /* Goal: a follower's fetch delayed for replica.fetch.min.bytes answers
     * once the bytes appended to all the partitions it names reach it — not
     * on an append to one partition that alone is too small, and not only
     * at replica.fetch.wait.max.ms when two appends together are enough
     * (Kafka's DelayedFetch.tryComplete sums over the fetch's partitions,
     * though the purgatory tries it on the key of one). */
    (void)state;
    const guint partitions = 6;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 60000;
    /* One batch of one record (the driver's, as the log counts it) is less
     * than min.bytes, two are more. */
    DriverConfig driver_config;
    kconfig_bind_driver_defaults(&driver_config);
    gint64 batch_bytes = PLOG_BATCH_OVERHEAD_BYTES + (gint64)driver_config.record_size_bytes;
    config.broker.replica_fetch_min_bytes = batch_bytes + batch_bytes / 2;
    config.broker.replica_fetch_wait_max_ms = 20000;
    config.broker.replica_socket_timeout_ms = 60000;
    Fixture *f = fixture_new(21, &config, partitions, 1, NULL);
    gint32 leader = 0, a = 0, b = 0;
    two_partitions_of_one_leader(f, partitions, &leader, &a, &b);
    gint32 followers[2];
    followers_of(f, leader, followers);
    /* A fetch sent before the follower knew all its partitions waits out
     * its max wait; the next names them all. */
    run_for(f, 25 * SIM_NS_PER_S);
    driver_produce(f->driver, TOPIC, a, 1, 1);
    run_for(f, 2 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, a).leo, 1);
    assert_int_equal(info_of(f, followers[0], a).leo, 0);
    driver_produce(f->driver, TOPIC, b, 1, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    for (guint i = 0; i < 2; i++) {
        assert_int_equal(info_of(f, followers[i], a).leo, 1);
        assert_int_equal(info_of(f, followers[i], b).leo, 1);
    }
    fixture_free(f);
}

static void
test_replica_delayed_fetch_counts_appends_after_retention(void **state)
{
    /* Goal: a follower's fetch delayed with nothing to read answers on the next append even
     * when retention deleted segments of the log meanwhile. Kafka's DelayedFetch counts the
     * bytes from the fetch offset to the LEO, which retention below it does not change; a
     * count of the log's size since the delay found the append too small to make up for the
     * deleted segment, and the follower waited out replica.fetch.wait.max.ms. */
    (void)state;
    ClusterConfig config;
    fixture_config_fast(&config);
    config.broker.replica_lag_time_max_ms = 60000;
    config.broker.replica_fetch_wait_max_ms = 20000;
    config.broker.replica_socket_timeout_ms = 60000;
    config.broker.log_retention_check_interval_ms = 1000;
    TopicConfig topic = {0};
    topic.min_insync_replicas = 1;
    topic.log = config.broker.log;
    topic.log.segment_bytes = 1;     /* a segment per batch */
    topic.log.retention_bytes = 1;   /* all but the active segment go */
    Fixture *f = fixture_new(23, &config, 1, 1, &topic);
    gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
    gint32 followers[2];
    followers_of(f, leader, followers);
    for (gint64 i = 0; i < 4; i++) {
        driver_produce(f->driver, TOPIC, 0, 1, 1);
        run_for(f, 1 * SIM_NS_PER_S);
    }
    /* Retention has run with the followers' fetches waiting. */
    run_for(f, 3 * SIM_NS_PER_S);
    assert_true(info_of(f, leader, 0).log_start > 0);
    assert_int_equal(info_of(f, followers[0], 0).leo, 4);
    driver_produce(f->driver, TOPIC, 0, 1, 1);
    run_for(f, 1 * SIM_NS_PER_S);
    assert_int_equal(info_of(f, leader, 0).leo, 5);
    for (guint i = 0; i < 2; i++)
        assert_int_equal(info_of(f, followers[i], 0).leo, 5);
    fixture_free(f);
}

/* The sessions all brokers hold as leaders. */
static guint
sessions_total(Fixture *f)
{
    guint total = 0;
    for (gint32 b = 1; b <= 3; b++)
        total += broker_fetch_sessions(cluster_broker(f->cluster, b));
    return total;
}

#define SESSION_PARTITIONS 6

static void
test_replica_fetch_sessions_lost_on_leader_restart(void **state)
{
    /* Goal: followers fetch in incremental fetch sessions (KIP-227); a
     * leader that restarts has lost its sessions, its followers fetch in
     * full again and make new ones, and every replica ends with the log it
     * has with sessions disabled (max.incremental.fetch.session.cache.slots
     * = 0). */
    (void)state;
    const gint32 slots[] = {1000, 0};
    gint64 leos[G_N_ELEMENTS(slots)][3][SESSION_PARTITIONS];
    for (guint c = 0; c < G_N_ELEMENTS(slots); c++) {
        print_message("case: %d slots\n", slots[c]);
        ClusterConfig config;
        fixture_config_fast(&config);
        config.broker.replica_lag_time_max_ms = 30000;
        config.broker.max_incremental_fetch_session_cache_slots = slots[c];
        Fixture *f = fixture_new(21, &config, SESSION_PARTITIONS, -1, NULL);
        for (gint32 p = 0; p < SESSION_PARTITIONS; p++)
            driver_produce(f->driver, TOPIC, p, 40, 10);
        run_for(f, 3 * SIM_NS_PER_S);
        gint32 leader = cluster_leader(f->cluster, TOPIC, 0);
        guint before = broker_fetch_sessions(cluster_broker(f->cluster, leader));
        if (slots[c] > 0)
            assert_true(before > 0);
        else
            assert_int_equal(sessions_total(f), 0);
        sim_node_crash(f->world, node_of(f, leader));
        assert_int_equal(broker_fetch_sessions(cluster_broker(f->cluster, leader)), 0);
        run_for(f, 10 * SIM_NS_PER_S);
        sim_node_restart(f->world, node_of(f, leader));
        for (gint32 p = 0; p < SESSION_PARTITIONS; p++)
            driver_produce(f->driver, TOPIC, p, 40, 10);
        run_for(f, 15 * SIM_NS_PER_S);
        /* The restarted broker fetches in new sessions of the new leaders. */
        if (slots[c] > 0)
            assert_true(sessions_total(f) > 0);
        else
            assert_int_equal(sessions_total(f), 0);
        for (gint32 b = 1; b <= 3; b++) {
            for (gint32 p = 0; p < SESSION_PARTITIONS; p++) {
                BrokerPartitionInfo info = info_of(f, b, p);
                assert_true(info.present);
                leos[c][b - 1][p] = info.leo;
            }
        }
        cluster_check_agreement(f->cluster);
        assert_int_equal(cluster_violations(f->cluster), 0);
        fixture_free(f);
    }
    for (gint32 b = 0; b < 3; b++) {
        for (gint32 p = 0; p < SESSION_PARTITIONS; p++) {
            assert_int_equal(leos[0][b][p], leos[1][b][p]);
            /* Every replica caught up, the restarted one too. */
            assert_int_equal(leos[0][b][p], leos[0][0][p]);
            assert_true(leos[0][b][p] > 40);
        }
    }
}

static void
test_replica_sorted_find_places_each_partition(void **state)
{
    /* Goal: replica_sorted_find finds each partition of an array that
     * replica_sorted_insert built, by its place, and answers -1 for one that
     * is not there, even one with the name of one that is. */
    (void)state;
    static const struct {
        const char *topic;
        gint32 partition;
    } order[] = {{"b", 2}, {"a", 7}, {"b", 0}, {"a", 10}, {"c", 1}, {"a", 0}, {"b", 1}};
    Partition partitions[G_N_ELEMENTS(order)];
    memset(partitions, 0, sizeof partitions);
    g_autoptr(GPtrArray) sorted = g_ptr_array_new();
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        ktp_set(&partitions[i].tp, order[i].topic, order[i].partition);
        assert_int_equal(replica_sorted_find(sorted, &partitions[i]), -1);
        replica_sorted_insert(sorted, &partitions[i]);
    }
    for (guint i = 0; i < G_N_ELEMENTS(order); i++) {
        gint at = replica_sorted_find(sorted, &partitions[i]);
        assert_true(at >= 0);
        assert_ptr_equal(g_ptr_array_index(sorted, (guint)at), &partitions[i]);
        if (at > 0) {
            const Partition *before = g_ptr_array_index(sorted, (guint)at - 1);
            assert_true(ktp_compare(&before->tp, &partitions[i].tp) < 0);
        }
    }
    Partition twin;
    memset(&twin, 0, sizeof twin);
    ktp_set(&twin.tp, "a", 7);
    assert_int_equal(replica_sorted_find(sorted, &twin), -1);
    ktp_set(&twin.tp, "d", 0);
    assert_int_equal(replica_sorted_find(sorted, &twin), -1);
    g_ptr_array_remove_index(sorted, (guint)replica_sorted_find(sorted, &partitions[3]));
    assert_int_equal(replica_sorted_find(sorted, &partitions[3]), -1);
    assert_int_equal(replica_sorted_find(sorted, &partitions[0]), 4); /* a-0 a-7 b-0 b-1 b-2 */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replica_hw_is_min_isr_leo),
        cmocka_unit_test(test_replica_sorted_find_places_each_partition),
        cmocka_unit_test(test_replica_isr_shrinks_after_lag_time),
        cmocka_unit_test(test_replica_follower_truncates_on_becoming_follower),
        cmocka_unit_test(test_replica_recovery_points_checkpointed_per_log_dir),
        cmocka_unit_test(test_replica_truncation_below_recovery_point_checkpoints),
        cmocka_unit_test(test_replica_same_leader_new_epoch_keeps_follower_log),
        cmocka_unit_test(test_replica_follower_of_an_emptier_leader_truncates_by_epoch),
        cmocka_unit_test(test_replica_hw_checkpoint_read_back_after_restart),
        cmocka_unit_test(test_replica_duplicate_answered_when_hw_reaches_it),
        cmocka_unit_test(test_replica_lost_fetch_response_sent_again_after_socket_timeout),
        cmocka_unit_test(test_replica_delayed_fetch_sums_bytes_over_its_partitions),
        cmocka_unit_test(test_replica_delayed_fetch_counts_appends_after_retention),
        cmocka_unit_test(test_replica_fetch_sessions_lost_on_leader_restart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
