/*
 * Group tests: the group coordinator on the brokers (group_coord.h) and the
 * consumer's subscribe() mode (consumer.h) against a real simulated cluster
 * (coordination node, controller, three brokers) fed by a real producer:
 * coordinator choice, assignment, rebalances after a crash, a poll timeout
 * and added partitions, and committed offsets across a coordinator failover.
 * The eager and the cooperative rebalance protocols side by side, as a member
 * joins. A raw client node (the probe) sends single Heartbeat and OffsetCommit
 * requests to check the coordinator's fencing: unknown members, other
 * generations, and a heartbeat during a rebalance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "consumer.h"
#include "group_coord.h"
#include "history.h"
#include "probe_fixture.h"
#include "producer.h"
#include "sim_net.h"
#include "sim_world.h"

#include <string.h>

#define TOPIC "orders"
#define GROUP "my-group"
#define PRODUCER_PROCESS 1
#define CONSUMER_PROCESS 10 /* consumer i is process 10 + i */
#define MEMBERS_MAX 4
#define RECORD_BYTES 100

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Producer *producer;
    Consumer *consumers[MEMBERS_MAX];
    guint n_consumers;
    guint64 counter;
    guint acked;
} Fixture;

static void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    cluster_check_invariants(f->cluster);
    for (guint i = 0; i < f->n_consumers; i++)
        consumer_check_invariants(f->consumers[i]);
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

/* A settled three-broker cluster with TOPIC of `partitions` partitions and a
 * producer; __consumer_offsets gets `offsets_partitions` partitions, and every
 * topic min.insync.replicas = `min_insync`. */
static Fixture *
fixture_new_min_insync(guint64 seed, guint partitions, gint32 offsets_partitions,
                       gint32 min_insync)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.replica_lag_time_max_ms = 1000;
    config.broker.zookeeper_session_timeout_ms = 6000;
    config.broker.offsets_topic_num_partitions = offsets_partitions;
    config.broker.group_initial_rebalance_delay_ms = 500;
    config.broker.min_insync_replicas = min_insync;
    f->cluster = cluster_new(f->world, &config, f->history);
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig producer_config;
    kconfig_bind_producer_defaults(&producer_config);
    producer_config.acks = -1;
    f->producer = producer_new(f->world, "producer", PRODUCER_PROCESS, bootstrap, &producer_config,
                               f->history);
    run_for(f, 1 * SIM_NS_PER_S);
    return f;
}

static Fixture *
fixture_new(guint64 seed, guint partitions, gint32 offsets_partitions)
{
    ClusterConfig defaults;
    fixture_cluster_config(&defaults);
    return fixture_new_min_insync(seed, partitions, offsets_partitions,
                                  defaults.broker.min_insync_replicas);
}

static void
fixture_free(Fixture *f)
{
    for (guint i = 0; i < f->n_consumers; i++)
        consumer_free(f->consumers[i]);
    producer_free(f->producer);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

/* Test settings: short sessions and heartbeats so rebalances fit in
 * seconds; everything else Kafka's defaults. */
static void
group_config(ConsumerConfig *config)
{
    kconfig_bind_consumer_defaults(config);
    config->auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config->session_timeout_ms = 6000;
    config->heartbeat_interval_ms = 1000;
    config->max_poll_interval_ms = 10000;
    config->metadata_max_age_ms = 1000;
}

/* Adds a member of GROUP named `name` (its client id) subscribed to TOPIC,
 * polling every 10 ms with `processing_ns` of processing per poll. */
static Consumer *
add_member_named(Fixture *f, const ConsumerConfig *config, gint64 processing_ns,
                 const char *name)
{
    assert_true(f->n_consumers < MEMBERS_MAX);
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    Consumer *consumer = consumer_new(f->world, name, CONSUMER_PROCESS + f->n_consumers, bootstrap,
                                      config, f->history);
    f->consumers[f->n_consumers++] = consumer;
    const char *topics[] = {TOPIC};
    consumer_subscribe(consumer, GROUP, topics, 1);
    SimDist interval = SIM_DIST_CONST(10 * SIM_NS_PER_MS);
    SimDist processing = SIM_DIST_CONST(processing_ns);
    consumer_start_polling(consumer, &interval, &processing, NULL, NULL);
    return consumer;
}

/* add_member_named, named "consumer-N" by its index. */
static Consumer *
add_member(Fixture *f, const ConsumerConfig *config, gint64 processing_ns)
{
    g_autofree char *name = g_strdup_printf("consumer-%u", f->n_consumers);
    return add_member_named(f, config, processing_ns, name);
}

static void
sent_cb(Producer *producer, const ProducerResult *result, void *user_data)
{
    Fixture *f = user_data;
    (void)producer;
    f->acked += result->outcome == HISTORY_OK;
}

static void
send_many(Fixture *f, guint n, guint partitions)
{
    for (guint i = 0; i < n; i++) {
        f->counter++;
        producer_send(f->producer, TOPIC, (gint32)(f->counter % partitions), 0,
                      HISTORY_VALUE(PRODUCER_PROCESS, f->counter), RECORD_BYTES, sent_cb, f);
    }
}

/* The running broker that coordinates GROUP (leads and has loaded its
 * offsets partition and knows the group), or NULL. */
static Broker *
coordinator(const Fixture *f)
{
    for (gint32 id = 1; id <= 3; id++) {
        Broker *broker = cluster_broker(f->cluster, id);
        GroupCoordInfo info;
        group_coord_describe(broker, GROUP, &info);
        if (info.coordinator)
            return broker;
    }
    return NULL;
}

/* TRUE when the running members are stable in one generation and their
 * assignments cover partitions 0..n-1 of TOPIC exactly once. */
static gboolean
covers_exactly(const Fixture *f, guint n)
{
    g_autofree guint *owners = g_new0(guint, n);
    gint32 generation = -2;
    for (guint i = 0; i < f->n_consumers; i++) {
        const Consumer *consumer = f->consumers[i];
        if (!consumer_running(consumer))
            continue;
        if (!consumer_group_stable(consumer))
            return FALSE;
        if (generation != -2 && consumer_generation(consumer) != generation)
            return FALSE;
        generation = consumer_generation(consumer);
        g_autoptr(GArray) tps = consumer_assignment(consumer);
        for (guint p = 0; p < tps->len; p++) {
            const KTopicPartition *tp = &g_array_index(tps, KTopicPartition, p);
            if (strcmp(tp->topic, TOPIC) != 0 || tp->partition < 0 || (guint)tp->partition >= n)
                return FALSE;
            owners[tp->partition]++;
        }
    }
    for (guint p = 0; p < n; p++) {
        if (owners[p] != 1)
            return FALSE;
    }
    return TRUE;
}

/* Runs in 100 ms steps until covers_exactly(n) or `timeout_ns`; returns the
 * time it took, or -1. */
static gint64
run_until_covered(Fixture *f, guint n, gint64 timeout_ns)
{
    gint64 start = sim_now_ns(f->world);
    while (sim_now_ns(f->world) - start <= timeout_ns) {
        if (covers_exactly(f, n))
            return sim_now_ns(f->world) - start;
        run_for(f, 100 * SIM_NS_PER_MS);
    }
    return -1;
}

static guint
assigned_count(const Consumer *consumer)
{
    g_autoptr(GArray) tps = consumer_assignment(consumer);
    return tps->len;
}

/* ---- a raw client of the group protocol (probe_fixture.h) ---- */

static gboolean
read_group_answer(Probe *probe, const SimMsg *msg)
{
    if (msg->type == KMSG_HEARTBEAT_RESPONSE) {
        probe->error = ((const KGroupResponse *)msg)->error;
        return TRUE;
    }
    if (msg->type != KMSG_OFFSET_COMMIT_RESPONSE)
        return FALSE;
    const KOffsetMessage *response = (const KOffsetMessage *)msg;
    probe->error = response->error;
    assert_int_equal(response->partitions->len, 1);
    probe->partition_error = g_array_index(response->partitions, KOffsetPartition, 0).error;
    return TRUE;
}

/* Sends `request` to the group's coordinator and waits for the answer. */
static void
probe_ask(Probe *probe, Fixture *f, SimMsg *request)
{
    Broker *broker = coordinator(f);
    assert_non_null(broker);
    probe_request(probe, f->world, broker_node(broker), request, SIM_NS_PER_MS);
}

static KafkaError
probe_heartbeat(Probe *probe, Fixture *f, const char *member_id, gint32 generation)
{
    KGroupRequest *request = kproto_new(KMSG_HEARTBEAT_REQUEST);
    request->correlation_id = probe_correlation_next(probe);
    g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
    g_strlcpy(request->member_id, member_id, sizeof request->member_id);
    request->generation_id = generation;
    probe_ask(probe, f, &request->base);
    return probe->error;
}

/* Commits `offset` for partition 0 of TOPIC as `member_id` of `generation`;
 * returns the partition's error. */
static KafkaError
probe_commit(Probe *probe, Fixture *f, const char *member_id, gint32 generation, gint64 offset)
{
    KOffsetMessage *request = kproto_new(KMSG_OFFSET_COMMIT_REQUEST);
    request->correlation_id = probe_correlation_next(probe);
    g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
    g_strlcpy(request->member_id, member_id, sizeof request->member_id);
    request->generation_id = generation;
    KOffsetPartition entry = {.offset = offset, .error = KAFKA_ERROR_NONE};
    ktp_set(&entry.tp, TOPIC, 0);
    g_array_append_val(request->partitions, entry);
    probe_ask(probe, f, &request->base);
    return probe->error != KAFKA_ERROR_NONE ? probe->error : probe->partition_error;
}

/* ---- tests ---- */

/* The coordinator partition is Utils.abs(String.hashCode) % partitions, with
 * Java's hash over UTF-16 units (values computed with Java's algorithm). */
static void
test_group_partition_matches_java_hash(void **unused)
{
    (void)unused;
    static const struct {
        const char *id;
        gint32 hash;
        gint32 partition; /* of 50 */
    } cases[] = {
        {"my-group", -1906497762, 12},
        {"group", 98629247, 47},
        {"g", 103, 3},
        {"", 0, 0},
        /* Its hashCode is Integer.MIN_VALUE, which Utils.abs maps to 0. */
        {"polygenelubricants", G_MININT32, 0},
        {"\xc3\xa9-grp", 216623617, 17},   /* "é-grp": one UTF-16 unit for é */
        {"\xf0\x9f\x98\x80", 1772899, 49}, /* U+1F600: a surrogate pair */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        assert_int_equal(group_coord_java_hash(cases[i].id), cases[i].hash);
        assert_int_equal(group_coord_partition_for(cases[i].id, 50), cases[i].partition);
    }
    /* Commit keys differ by group, topic and partition, and are never 0. */
    guint64 key = group_coord_offset_key("g", "t", 0);
    assert_true(key != 0);
    assert_true(key != group_coord_offset_key("g", "t", 1));
    assert_true(key != group_coord_offset_key("h", "t", 0));
    assert_true(key != group_coord_offset_key("g", "u", 0));
}

/* The first FindCoordinator creates __consumer_offsets (50 partitions by
 * default, replication 3), and the group's coordinator is the leader of its
 * partition 12 ("my-group"). */
static void
test_group_coordinator_leads_offsets_partition(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(21, 3, 50);
    ConsumerConfig config;
    group_config(&config);
    add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 3, 30 * SIM_NS_PER_S) >= 0);
    for (gint32 id = 1; id <= 3; id++)
        assert_int_equal(
            broker_metadata_partitions(cluster_broker(f->cluster, id), GROUP_OFFSETS_TOPIC), 50);
    Broker *broker = coordinator(f);
    assert_non_null(broker);
    assert_int_equal(broker_id(broker), cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, 12));
    BrokerPartitionInfo info;
    broker_partition_info(broker, GROUP_OFFSETS_TOPIC, 12, &info);
    assert_true(info.is_leader);
    assert_int_equal(info.n_isr, 3);
    GroupCoordInfo group;
    group_coord_describe(broker, GROUP, &group);
    assert_true(group.exists);
    assert_int_equal(group.state, GROUP_STATE_STABLE);
    assert_int_equal(group.members, 1);
    assert_int_equal(group.protocol, ASSIGNOR_RANGE);
    /* No other broker believes it coordinates the group. */
    for (gint32 id = 1; id <= 3; id++) {
        GroupCoordInfo other;
        group_coord_describe(cluster_broker(f->cluster, id), GROUP, &other);
        assert_int_equal(other.exists, id == broker_id(broker));
    }
    fixture_free(f);
}

/* Three members and seven partitions: Kafka's range split 3,2,2 in member id
 * order, every partition exactly once, one generation. */
static void
test_group_range_assignment_covers_every_partition(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(22, 7, 5);
    ConsumerConfig config;
    group_config(&config);
    for (guint i = 0; i < 3; i++)
        add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 7, 30 * SIM_NS_PER_S) >= 0);
    /* The initial rebalance delay gathered all three into one generation. */
    assert_int_equal(consumer_generation(f->consumers[0]), 1);
    /* Sorted by member id, the members get [0,3), [3,5), [5,7). */
    Consumer *sorted[3] = {f->consumers[0], f->consumers[1], f->consumers[2]};
    for (guint i = 0; i < 3; i++) {
        for (guint j = i + 1; j < 3; j++) {
            if (strcmp(consumer_member_id(sorted[j]), consumer_member_id(sorted[i])) < 0) {
                Consumer *swap = sorted[i];
                sorted[i] = sorted[j];
                sorted[j] = swap;
            }
        }
    }
    static const gint32 first[] = {0, 3, 5};
    static const guint count[] = {3, 2, 2};
    for (guint i = 0; i < 3; i++) {
        g_autoptr(GArray) tps = consumer_assignment(sorted[i]);
        assert_int_equal(tps->len, count[i]);
        for (guint p = 0; p < tps->len; p++)
            assert_int_equal(g_array_index(tps, KTopicPartition, p).partition,
                             first[i] + (gint32)p);
    }
    fixture_free(f);
}

/* A member crash: the coordinator expires its session and the survivors
 * take over its partitions within session.timeout.ms (plus a heartbeat and
 * the rebalance round trips). */
static void
test_group_member_crash_rebalances_within_session_timeout(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(23, 6, 5);
    ConsumerConfig config;
    group_config(&config);
    for (guint i = 0; i < 3; i++)
        add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 6, 30 * SIM_NS_PER_S) >= 0);
    gint32 generation = consumer_generation(f->consumers[0]);
    guint crashed_owned = assigned_count(f->consumers[1]);
    assert_int_equal(crashed_owned, 2);
    sim_node_crash(f->world, consumer_node(f->consumers[1]));
    gint64 took = run_until_covered(f, 6, 30 * SIM_NS_PER_S);
    assert_true(took > 0);
    assert_true(took <=
                (config.session_timeout_ms + config.heartbeat_interval_ms + 1000) * SIM_NS_PER_MS);
    assert_true(consumer_generation(f->consumers[0]) > generation);
    assert_int_equal(assigned_count(f->consumers[0]) + assigned_count(f->consumers[2]), 6);
    GroupCoordInfo info;
    group_coord_describe(coordinator(f), GROUP, &info);
    assert_int_equal(info.members, 2);
    fixture_free(f);
}

/* A member that processes longer than max.poll.interval.ms leaves the group
 * (LeaveGroup), and the other member gets every partition meanwhile. */
static void
test_group_poll_timeout_removes_member(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(24, 4, 5);
    ConsumerConfig config;
    group_config(&config);
    add_member(f, &config, SIM_NS_PER_MS);
    ConsumerConfig slow = config;
    slow.max_poll_interval_ms = 3000;
    Consumer *slow_member = add_member(f, &slow, 20 * SIM_NS_PER_S);
    assert_true(run_until_covered(f, 4, 30 * SIM_NS_PER_S) >= 0);
    assert_int_equal(assigned_count(slow_member), 2);
    send_many(f, 40, 4);
    /* The slow member polls records, then processes for 20 s. */
    run_for(f, 2 * SIM_NS_PER_S);
    ConsumerStats stats;
    consumer_stats(slow_member, &stats);
    assert_true(stats.records_polled > 0);
    assert_int_equal(stats.poll_timeouts, 0);
    run_for(f, 4 * SIM_NS_PER_S);
    consumer_stats(slow_member, &stats);
    assert_int_equal(stats.poll_timeouts, 1);
    assert_int_equal(assigned_count(slow_member), 0);
    assert_string_equal(consumer_member_id(slow_member), "");
    assert_int_equal(assigned_count(f->consumers[0]), 4);
    assert_true(consumer_group_stable(f->consumers[0]));
    GroupCoordInfo info;
    group_coord_describe(coordinator(f), GROUP, &info);
    assert_int_equal(info.members, 1);
    assert_int_equal(info.state, GROUP_STATE_STABLE);
    fixture_free(f);
}

/* Partitions added to a subscribed topic: the leader sees the new count in
 * its metadata and rejoins; the new partitions are assigned. */
static void
test_group_added_partitions_are_assigned(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(25, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    add_member(f, &config, SIM_NS_PER_MS);
    add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    gint32 generation = consumer_generation(f->consumers[0]);
    /* Not before the partitions exist. */
    run_for(f, 5 * SIM_NS_PER_S);
    assert_int_equal(consumer_generation(f->consumers[0]), generation);
    GError *error = NULL;
    assert_true(cluster_add_partitions(f->cluster, TOPIC, 5, &error));
    assert_true(run_until_covered(f, 5, 30 * SIM_NS_PER_S) >= 0);
    assert_true(consumer_generation(f->consumers[0]) > generation);
    assert_int_equal(assigned_count(f->consumers[0]) + assigned_count(f->consumers[1]), 5);
    fixture_free(f);
}

/* ---- the eager and the cooperative protocols ---- */

/* What one sampling of the members saw while a third member joined two. */
typedef struct {
    gboolean overlap;          /* a partition owned by two members at once */
    gboolean original_dropped; /* an original member held a partition it keeps
                                  at the end, lost it, then got it back */
    gboolean original_empty;   /* an original member held nothing at some point */
    guint64 empty_ms;          /* summed over the original members: ms holding nothing */
    guint64 took_ms;           /* from the join to a stable, covering group */
    guint duplicates;          /* values processed more than once */
    guint64 polls_rebalancing; /* polls by the original members while not stable */
} JoinWatch;

/* TRUE if `tps` holds partition `partition` of TOPIC. */
static gboolean
holds(const GArray *tps, gint32 partition)
{
    for (guint i = 0; i < tps->len; i++) {
        if (g_array_index(tps, KTopicPartition, i).partition == partition)
            return TRUE;
    }
    return FALSE;
}

/* Two members of `strategy` share 6 partitions while records flow; a third
 * joins, and the members are sampled every 1 ms until the three are stable
 * and cover the partitions. Returns the generations the join took. */
static gint32
third_member_joins(AssignorStrategy strategy, gboolean eager_listed, JoinWatch *watch,
                   guint64 *revoked)
{
    memset(watch, 0, sizeof *watch);
    Fixture *f = fixture_new(26, 6, 5);
    ConsumerConfig config;
    group_config(&config);
    config.partition_assignment_strategy = strategy;
    config.eager_assignor_listed = eager_listed;
    add_member(f, &config, SIM_NS_PER_MS);
    add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 6, 30 * SIM_NS_PER_S) >= 0);
    gint32 generation = consumer_generation(f->consumers[0]);
    GArray *before[2] = {consumer_assignment(f->consumers[0]),
                         consumer_assignment(f->consumers[1])};
    add_member(f, &config, SIM_NS_PER_MS);
    /* Samples: held[m][p] over time, checked against the final holders. */
    g_autoptr(GPtrArray) samples = g_ptr_array_new_with_free_func(g_free);
    for (guint step = 0; step < 30000 && !covers_exactly(f, 6); step++) {
        if (step % 10 == 0)
            send_many(f, 6, 6);
        ConsumerStats stats[2];
        for (guint m = 0; m < 2; m++)
            consumer_stats(f->consumers[m], &stats[m]);
        run_for(f, SIM_NS_PER_MS);
        guint8 *held = g_new0(guint8, 2 * 6);
        guint owners[6] = {0};
        for (guint m = 0; m < 3; m++) {
            g_autoptr(GArray) tps = consumer_assignment(f->consumers[m]);
            for (gint32 p = 0; p < 6; p++) {
                owners[p] += holds(tps, p);
                if (m < 2)
                    held[m * 6 + (guint)p] = holds(tps, p);
            }
            if (m < 2 && tps->len == 0) {
                watch->original_empty = TRUE;
                watch->empty_ms++;
            }
        }
        for (guint p = 0; p < 6; p++)
            watch->overlap = watch->overlap || owners[p] > 1;
        for (guint m = 0; m < 2; m++) {
            ConsumerStats now;
            consumer_stats(f->consumers[m], &now);
            if (!consumer_group_stable(f->consumers[m]))
                watch->polls_rebalancing += now.polls - stats[m].polls;
        }
        g_ptr_array_add(samples, held);
    }
    assert_true(covers_exactly(f, 6));
    watch->took_ms = samples->len;
    /* A partition an original member has at the end, and had before, it
     * should have held all along. */
    for (guint m = 0; m < 2; m++) {
        g_autoptr(GArray) after = consumer_assignment(f->consumers[m]);
        for (gint32 p = 0; p < 6; p++) {
            if (!holds(after, p) || !holds(before[m], p))
                continue;
            for (guint i = 0; i < samples->len; i++) {
                const guint8 *held = g_ptr_array_index(samples, i);
                watch->original_dropped = watch->original_dropped || !held[m * 6 + (guint)p];
            }
        }
    }
    for (guint m = 0; m < 2; m++)
        g_array_free(before[m], TRUE);
    assert_int_equal(assigned_count(f->consumers[2]), 2);
    *revoked = 0;
    for (guint m = 0; m < 3; m++) {
        ConsumerStats stats;
        consumer_stats(f->consumers[m], &stats);
        *revoked += stats.partitions_revoked;
    }
    const HistoryOpArray *ops = history_ops(f->history);
    g_autoptr(GHashTable) processed = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < ops->len; i++) {
        HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_PROCESS && !g_hash_table_add(processed, &op->value))
            watch->duplicates++;
    }
    gint32 took = consumer_generation(f->consumers[0]) - generation;
    fixture_free(f);
    return took;
}

/* Eager (sticky): every member revokes everything before it rejoins, and
 * polls nothing until the new generation's assignment; one rebalance. */
static void
test_group_eager_join_stops_the_world(void **unused)
{
    (void)unused;
    JoinWatch watch;
    guint64 revoked = 0;
    assert_int_equal(third_member_joins(ASSIGNOR_STICKY, TRUE, &watch, &revoked), 1);
    print_message("eager: %" G_GUINT64_FORMAT " ms to settle, the two members %" G_GUINT64_FORMAT
                  " ms without partitions\n",
                  watch.took_ms, watch.empty_ms);
    assert_true(watch.original_empty);
    assert_true(watch.original_dropped);
    assert_false(watch.overlap);
    assert_int_equal(revoked, 0);
    assert_int_equal(watch.duplicates, 0);
}

/* Cooperative (cooperative-sticky, KIP-429): the original members keep what
 * they keep throughout and go on polling while the group rebalances; the two
 * partitions moving to the joiner are revoked after the first rebalance and
 * given out by a second; no partition ever has two owners. */
static void
test_group_cooperative_join_keeps_partitions(void **unused)
{
    (void)unused;
    JoinWatch watch;
    guint64 revoked = 0;
    assert_int_equal(third_member_joins(ASSIGNOR_COOPERATIVE_STICKY, FALSE, &watch, &revoked), 2);
    print_message("cooperative: %" G_GUINT64_FORMAT " ms to settle, the two members "
                  "%" G_GUINT64_FORMAT " ms without partitions, %" G_GUINT64_FORMAT
                  " polls while rebalancing\n",
                  watch.took_ms, watch.empty_ms, watch.polls_rebalancing);
    assert_false(watch.original_empty);
    assert_int_equal(watch.empty_ms, 0);
    assert_false(watch.original_dropped);
    assert_false(watch.overlap);
    assert_true(watch.polls_rebalancing > 0);
    /* The revoked partitions' positions were committed before they went. */
    assert_int_equal(watch.duplicates, 0);
    assert_int_equal(revoked, 2);
}

/* cooperative-sticky listed with an eager assignor (Kafka's upgrade path:
 * "cooperative-sticky, range") runs the eager protocol: members revoke
 * everything, report nothing owned, so nothing is withheld and one
 * rebalance settles the group. */
static void
test_group_cooperative_sticky_with_eager_assignor_runs_eager(void **unused)
{
    (void)unused;
    JoinWatch watch;
    guint64 revoked = 0;
    assert_int_equal(third_member_joins(ASSIGNOR_COOPERATIVE_STICKY, TRUE, &watch, &revoked), 1);
    assert_true(watch.original_empty);
    assert_false(watch.overlap);
    assert_int_equal(watch.polls_rebalancing, 0);
    assert_int_equal(revoked, 0);
}

/* Cooperative: when only a follower revokes, its rejoin (reporting fewer
 * owned partitions) is what makes the coordinator rebalance again, as
 * Kafka's byte comparison of the subscription metadata does; the joiner gets
 * the partition from that second rebalance. "a" forms the group and leads;
 * with "b" they share 4 partitions two each; when "c" joins, "a" (sorted
 * first) keeps its two and "b" gives one up. */
static void
test_group_cooperative_follower_revocation_rebalances(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(27, 4, 5);
    ConsumerConfig config;
    group_config(&config);
    config.partition_assignment_strategy = ASSIGNOR_COOPERATIVE_STICKY;
    config.eager_assignor_listed = FALSE;
    Consumer *a = add_member_named(f, &config, SIM_NS_PER_MS, "a");
    assert_true(run_until_covered(f, 4, 30 * SIM_NS_PER_S) >= 0);
    Consumer *b = add_member_named(f, &config, SIM_NS_PER_MS, "b");
    gint64 start = sim_now_ns(f->world);
    while (!(covers_exactly(f, 4) && assigned_count(b) == 2) &&
           sim_now_ns(f->world) - start < 30 * SIM_NS_PER_S)
        run_for(f, 100 * SIM_NS_PER_MS);
    assert_int_equal(assigned_count(a), 2);
    assert_int_equal(assigned_count(b), 2);
    gint32 generation = consumer_generation(a);
    Consumer *c = add_member_named(f, &config, SIM_NS_PER_MS, "c");
    guint64 ops_before = history_ops(f->history)->len;
    start = sim_now_ns(f->world);
    while (!(covers_exactly(f, 4) && assigned_count(c) == 1) &&
           sim_now_ns(f->world) - start < 30 * SIM_NS_PER_S)
        run_for(f, 100 * SIM_NS_PER_MS);
    assert_int_equal(assigned_count(c), 1);
    assert_true(covers_exactly(f, 4));
    assert_int_equal(assigned_count(a), 2);
    assert_int_equal(assigned_count(b), 1);
    assert_int_equal(consumer_generation(a), generation + 2);
    ConsumerStats stats;
    consumer_stats(a, &stats);
    assert_int_equal(stats.partitions_revoked, 2); /* to "b", none to "c" */
    /* The partition "c" got was committed by its last owner "b" (process
     * 11) after "c" came and before "c" began reading it. */
    g_autoptr(GArray) moved = consumer_assignment(c);
    gint32 partition = g_array_index(moved, KTopicPartition, 0).partition;
    const HistoryOpArray *ops = history_ops(f->history);
    guint commits = 0;
    for (guint64 i = ops_before; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_ASSIGN && op->process == CONSUMER_PROCESS + 2)
            break;
        commits += op->fn == HISTORY_FN_COMMIT && op->process == CONSUMER_PROCESS + 1 &&
                   op->partition == partition;
    }
    assert_true(commits >= 1);
    fixture_free(f);
}

/* The committed offsets of the history's COMMIT ops that completed OK, per
 * partition the last one. */
static gint64
last_ok_commit(const Fixture *f, gint32 partition)
{
    const HistoryOpArray *ops = history_ops(f->history);
    gint64 offset = -1;
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn != HISTORY_FN_COMMIT || op->type != HISTORY_OK || op->partition != partition)
            continue;
        assert_int_equal(op->offset, (gint64)op->value);
        offset = MAX(offset, op->offset);
    }
    return offset;
}

/* Committed offsets survive the coordinator's crash: the new leader of the
 * offsets partition loads them from its log, answers the same offsets, and a
 * restarted member resumes from them. */
static void
test_group_offsets_survive_coordinator_failover(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(26, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    config.auto_commit_interval_ms = 500;
    Consumer *member = add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    send_many(f, 60, 2);
    run_for(f, 3 * SIM_NS_PER_S);
    assert_int_equal(f->acked, 60);
    /* Every record was read, and auto commit stored the positions. */
    gint64 committed[2];
    gint32 epochs[2];
    Broker *old = coordinator(f);
    assert_non_null(old);
    for (gint32 p = 0; p < 2; p++) {
        committed[p] = group_coord_committed_offset(old, GROUP, TOPIC, p);
        assert_int_equal(committed[p], 30);
        assert_int_equal(last_ok_commit(f, p), 30);
        /* KIP-320: the commit carries the epoch of the record before it,
         * which its leader wrote. */
        epochs[p] = group_coord_committed_leader_epoch(old, GROUP, TOPIC, p);
        gint32 leader = cluster_leader(f->cluster, TOPIC, p);
        BrokerPartitionInfo info;
        broker_partition_info(cluster_broker(f->cluster, leader), TOPIC, p, &info);
        assert_int_equal(epochs[p], info.leader_epoch);
    }
    /* The member stops, then the coordinator's broker crashes. */
    sim_node_crash(f->world, consumer_node(member));
    run_for(f, 100 * SIM_NS_PER_MS);
    gint32 offsets_partition = group_coord_partition_for(GROUP, 5);
    sim_node_crash(f->world, broker_node(old));
    run_for(f, 15 * SIM_NS_PER_S);
    gint32 leader = cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, offsets_partition);
    assert_true(leader > 0 && leader != broker_id(old));
    Broker *fresh = coordinator(f);
    assert_non_null(fresh);
    assert_int_equal(broker_id(fresh), leader);
    for (gint32 p = 0; p < 2; p++) {
        assert_int_equal(group_coord_committed_offset(fresh, GROUP, TOPIC, p), committed[p]);
        assert_int_equal(group_coord_committed_leader_epoch(fresh, GROUP, TOPIC, p), epochs[p]);
    }
    /* A restarted member is a new member and resumes at the commits,
     * validating each committed position with its epoch first (Kafka's
     * seekUnvalidated) while no leader changes. */
    sim_node_restart(f->world, consumer_node(member));
    send_many(f, 10, 2);
    run_for(f, 20 * SIM_NS_PER_S);
    for (gint32 p = 0; p < 2; p++)
        assert_int_equal(consumer_position(member, TOPIC, p), 35);
    ConsumerStats stats;
    consumer_stats(member, &stats);
    assert_int_equal(stats.validations, 2);
    assert_int_equal(stats.truncations, 0);
    const HistoryOpArray *ops = history_ops(f->history);
    guint repeats = 0;
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_POLL && op->invoke_ns > sim_now_ns(f->world) - 20 * SIM_NS_PER_S)
            repeats += op->offset < 30;
    }
    assert_int_equal(repeats, 0);
    fixture_free(f);
}

/* The latest group metadata record of GROUP in `broker`'s copy of the
 * group's offsets partition (`offsets_partitions` partitions); FALSE when
 * there is none. */
static gboolean
latest_group_record(Broker *broker, gint32 offsets_partitions, GroupLogRecord *out)
{
    Plog *log = broker_partition_log(broker, GROUP_OFFSETS_TOPIC,
                                     group_coord_partition_for(GROUP, offsets_partitions));
    assert_non_null(log);
    gboolean found = FALSE;
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    assert_int_equal(plog_read(log, plog_log_start_offset(log), G_MAXINT32, batches),
                     PLOG_READ_OK);
    for (guint b = 0; b < batches->len; b++) {
        GroupLogRecord record;
        if (!group_coord_decode_group(g_ptr_array_index(batches, b), &record))
            continue;
        if (found)
            group_log_record_clear(out);
        *out = record;
        found = TRUE;
    }
    return found;
}

/* The group metadata record round-trips every field: two members, one
 * without a subscription, lists of several topics whose partition counts
 * are odd and even; a batch cut short, or a commit batch, is not one. */
static void
test_group_record_round_trip(void **unused)
{
    (void)unused;
    /* Ids and names as long as they may be: 63 bytes (95 for a member id),
     * whose last 8-byte record is full. */
    char group_id[KAFKA_GROUP_ID_MAX + 1], member_id[KAFKA_MEMBER_ID_MAX + 1],
        long_topic[KAFKA_TOPIC_NAME_MAX + 1];
    memset(group_id, 'g', sizeof group_id - 1);
    group_id[sizeof group_id - 1] = '\0';
    memset(member_id, 'm', sizeof member_id - 1);
    member_id[sizeof member_id - 1] = '\0';
    memset(long_topic, 't', sizeof long_topic - 1);
    long_topic[sizeof long_topic - 1] = '\0';
    GroupLogRecord record;
    group_log_record_init(&record, group_id);
    record.consumer_protocol = TRUE;
    record.generation = 7;
    record.target_epoch = 6;
    record.protocol = 2;
    record.leader = 1;
    GroupLogTopic meta = {{0}, 12};
    g_strlcpy(meta.topic, long_topic, sizeof meta.topic);
    g_array_append_val(record.metadata, meta);
    GroupLogMember *a = group_log_record_add_member(&record, member_id);
    memset(a->client_id, 'c', sizeof a->client_id - 1);
    a->member_epoch = 6;
    a->previous_member_epoch = 5;
    a->state = 1;
    a->session_timeout_ms = 45000;
    a->rebalance_timeout_ms = 300000;
    a->protocol = 2;
    a->owned_generation = 6;
    const char *topics[] = {"orders", long_topic};
    for (guint t = 0; t < 2; t++) {
        KTopicName name;
        g_strlcpy(name.name, topics[t], sizeof name.name);
        g_array_append_val(a->topics, name);
        for (gint32 p = 0; p < 3 + (gint32)t; p++) {
            KTopicPartition tp;
            ktp_set(&tp, topics[t], p * 5);
            g_array_append_val(a->assignment, tp);
            if (p == 1)
                g_array_append_val(a->owned, tp);
            g_array_append_val(p % 2 == 0 ? a->pending : a->target, tp);
        }
    }
    GroupLogMember *b = group_log_record_add_member(&record, "member-b");
    b->session_timeout_ms = 10000;
    b->owned_generation = -1;
    g_autoptr(PlogBatch) batch = group_coord_encode_group(&record);
    assert_int_equal(g_array_index(batch->records, PlogRecord, 0).key,
                     group_coord_group_key(record.group_id));
    assert_true(batch->records_bytes > 200); /* Kafka's record: ids, topics, partitions */

    GroupLogRecord back;
    assert_true(group_coord_decode_group(batch, &back));
    assert_string_equal(back.group_id, record.group_id);
    assert_true(back.consumer_protocol);
    assert_int_equal(back.target_epoch, 6);
    assert_int_equal(back.metadata->len, 1);
    assert_string_equal(g_array_index(back.metadata, GroupLogTopic, 0).topic, long_topic);
    assert_int_equal(g_array_index(back.metadata, GroupLogTopic, 0).partitions, 12);
    assert_int_equal(back.generation, 7);
    assert_int_equal(back.protocol, 2);
    assert_int_equal(back.leader, 1);
    assert_int_equal(back.members->len, 2);
    for (guint m = 0; m < 2; m++) {
        const GroupLogMember *want = &g_array_index(record.members, GroupLogMember, m);
        const GroupLogMember *got = &g_array_index(back.members, GroupLogMember, m);
        assert_string_equal(got->member_id, want->member_id);
        assert_string_equal(got->client_id, want->client_id);
        assert_int_equal(got->session_timeout_ms, want->session_timeout_ms);
        assert_int_equal(got->rebalance_timeout_ms, want->rebalance_timeout_ms);
        assert_int_equal(got->protocol, want->protocol);
        assert_int_equal(got->owned_generation, want->owned_generation);
        assert_int_equal(got->member_epoch, want->member_epoch);
        assert_int_equal(got->previous_member_epoch, want->previous_member_epoch);
        assert_int_equal(got->state, want->state);
        assert_int_equal(got->topics->len, want->topics->len);
        for (guint t = 0; t < want->topics->len; t++)
            assert_string_equal(g_array_index(got->topics, KTopicName, t).name,
                                g_array_index(want->topics, KTopicName, t).name);
        const GArray *lists[4][2] = {{got->owned, want->owned},
                                     {got->assignment, want->assignment},
                                     {got->pending, want->pending},
                                     {got->target, want->target}};
        for (guint l = 0; l < 4; l++) {
            assert_int_equal(lists[l][0]->len, lists[l][1]->len);
            for (guint i = 0; i < lists[l][1]->len; i++)
                assert_int_equal(ktp_compare(&g_array_index(lists[l][0], KTopicPartition, i),
                                             &g_array_index(lists[l][1], KTopicPartition, i)),
                                 0);
        }
    }
    group_log_record_clear(&back);

    g_array_set_size(batch->records, batch->records->len - 1);
    batch->record_count--;
    assert_false(group_coord_decode_group(batch, &back));
    assert_null(back.members);
    g_autoptr(PlogBatch) commit = plog_batch_new();
    for (guint i = 0; i < 3; i++)
        plog_batch_add_record(commit, group_coord_offset_key(record.group_id, "orders", (gint32)i),
                              10, 40);
    assert_false(group_coord_decode_group(commit, &back));
    group_log_record_clear(&record);
}

/* The group's membership survives the coordinator's crash (Kafka's group
 * metadata record): the SyncGroup stored the generation and the assignment,
 * the new coordinator loads the group Stable with its member, and the
 * member goes on in its generation without joining again; its commits
 * after the failover succeed. */
static void
test_group_membership_survives_coordinator_failover(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(31, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    config.auto_commit_interval_ms = 500;
    Consumer *member = add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    send_many(f, 20, 2);
    run_for(f, 2 * SIM_NS_PER_S);
    gint32 generation = consumer_generation(member);
    g_autofree char *member_id = g_strdup(consumer_member_id(member));
    ConsumerStats before;
    consumer_stats(member, &before);

    /* The record the leader's SyncGroup stored, as the log holds it. */
    Broker *old = coordinator(f);
    assert_non_null(old);
    GroupLogRecord record;
    assert_true(latest_group_record(old, 5, &record));
    assert_string_equal(record.group_id, GROUP);
    assert_int_equal(record.generation, generation);
    assert_int_equal(record.members->len, 1);
    assert_int_equal(record.leader, 0);
    const GroupLogMember *stored = &g_array_index(record.members, GroupLogMember, 0);
    assert_string_equal(stored->member_id, member_id);
    assert_int_equal(stored->session_timeout_ms, config.session_timeout_ms);
    assert_int_equal(stored->assignment->len, 2);
    group_log_record_clear(&record);

    /* The coordinator crashes; the new one knows the group once loaded. */
    gint32 offsets_partition = group_coord_partition_for(GROUP, 5);
    sim_node_crash(f->world, broker_node(old));
    Broker *fresh = NULL;
    while (fresh == NULL && sim_world_step(f->world))
        fresh = coordinator(f);
    assert_non_null(fresh);
    assert_int_equal(broker_id(fresh),
                     cluster_leader(f->cluster, GROUP_OFFSETS_TOPIC, offsets_partition));
    GroupCoordInfo info;
    group_coord_describe(fresh, GROUP, &info);
    assert_true(info.exists);
    assert_int_equal(info.state, GROUP_STATE_STABLE);
    assert_int_equal(info.generation, generation);
    assert_int_equal(info.members, 1);

    /* The member heartbeats and commits to it in the same generation. */
    send_many(f, 20, 2);
    run_for(f, 10 * SIM_NS_PER_S);
    ConsumerStats after;
    consumer_stats(member, &after);
    assert_int_equal(after.joins, before.joins);
    assert_int_equal(consumer_generation(member), generation);
    assert_string_equal(consumer_member_id(member), member_id);
    assert_true(after.commits_ok > before.commits_ok);
    for (gint32 p = 0; p < 2; p++)
        assert_int_equal(group_coord_committed_offset(fresh, GROUP, TOPIC, p), 20);
    group_coord_describe(fresh, GROUP, &info);
    assert_int_equal(info.state, GROUP_STATE_STABLE);
    assert_int_equal(info.generation, generation);
    fixture_free(f);
}

/* A group record that cannot be stored fails the rebalance (Kafka's
 * storeGroup callback): with min.insync.replicas = 3 and a follower of the
 * offsets partition down, the leader's SyncGroup append gets
 * NOT_ENOUGH_REPLICAS, the members' SyncGroups COORDINATOR_NOT_AVAILABLE, and
 * the group does not become Stable with the joining member until the
 * follower is back. */
static void
test_group_unstored_record_fails_the_rebalance(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new_min_insync(32, 2, 1, 3);
    ConsumerConfig config;
    group_config(&config);
    /* Without commits, which would fail too and hold the members' rejoin
     * (onJoinPrepare's synchronous auto commit). */
    config.enable_auto_commit = FALSE;
    add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    Broker *coord = coordinator(f);
    assert_non_null(coord);
    Broker *follower = cluster_broker(f->cluster, broker_id(coord) % 3 + 1);
    sim_node_crash(f->world, broker_node(follower));
    run_for(f, 3 * SIM_NS_PER_S); /* the ISR shrinks without it */

    Consumer *second = add_member(f, &config, SIM_NS_PER_MS);
    assert_int_equal(run_until_covered(f, 2, 10 * SIM_NS_PER_S), -1);
    ConsumerStats stats;
    consumer_stats(second, &stats);
    assert_true(stats.joins > 1); /* each failed sync sends it back to join */
    assert_int_equal(stats.rebalances, 0);
    GroupCoordInfo info;
    group_coord_describe(coord, GROUP, &info);
    assert_true(info.exists);
    assert_int_not_equal(info.state, GROUP_STATE_STABLE);

    sim_node_restart(f->world, broker_node(follower));
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    consumer_stats(second, &stats);
    assert_true(stats.rebalances > 0);
    fixture_free(f);
}

/* A new coordinator loads its offsets partition for the modelled time, 1 ms
 * plus 10 ns per logical byte of the log, and only then serves the group. */
static void
test_group_new_coordinator_loads_for_modelled_time(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(27, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    config.auto_commit_interval_ms = 500;
    add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    send_many(f, 40, 2);
    run_for(f, 3 * SIM_NS_PER_S);
    Broker *old = coordinator(f);
    assert_non_null(old);
    gint32 offsets_partition = group_coord_partition_for(GROUP, 5);
    sim_node_crash(f->world, broker_node(old));
    /* Step to the moment another broker becomes the partition's leader. */
    Broker *fresh = NULL;
    while (fresh == NULL && sim_world_step(f->world)) {
        for (gint32 id = 1; id <= 3 && fresh == NULL; id++) {
            Broker *broker = cluster_broker(f->cluster, id);
            BrokerPartitionInfo info;
            broker_partition_info(broker, GROUP_OFFSETS_TOPIC, offsets_partition, &info);
            if (broker != old && info.present && info.is_leader)
                fresh = broker;
        }
    }
    assert_non_null(fresh);
    gint64 elected_ns = sim_now_ns(f->world);
    gint64 bytes =
        plog_size_bytes(broker_partition_log(fresh, GROUP_OFFSETS_TOPIC, offsets_partition));
    assert_true(bytes > 0); /* the commits */
    gint64 loaded_ns = elected_ns + SIM_NS_PER_MS + 10 * bytes;
    GroupCoordInfo info;
    group_coord_describe(fresh, GROUP, &info);
    assert_true(info.loading);
    assert_false(info.coordinator);
    sim_world_run_until(f->world, loaded_ns - 1);
    group_coord_describe(fresh, GROUP, &info);
    assert_true(info.loading);
    sim_world_run_until(f->world, loaded_ns);
    group_coord_describe(fresh, GROUP, &info);
    assert_false(info.loading);
    assert_true(info.coordinator);
    fixture_free(f);
}

/* A session.timeout.ms outside group.min/max.session.timeout.ms is refused
 * (INVALID_SESSION_TIMEOUT), which stops the member; a valid one joins. */
static void
test_group_session_timeout_bounds(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(27, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    config.session_timeout_ms = 5999; /* group.min.session.timeout.ms is 6000 */
    Consumer *refused = add_member(f, &config, SIM_NS_PER_MS);
    run_for(f, 10 * SIM_NS_PER_S);
    ConsumerStats stats;
    consumer_stats(refused, &stats);
    assert_int_equal(stats.group_errors, 1);
    assert_int_equal(stats.rebalances, 0);
    assert_false(consumer_group_stable(refused));
    assert_int_equal(assigned_count(refused), 0);
    consumer_unsubscribe(refused);
    group_config(&config);
    config.session_timeout_ms = 6000;
    Consumer *accepted = add_member(f, &config, SIM_NS_PER_MS);
    run_for(f, 10 * SIM_NS_PER_S);
    assert_true(consumer_group_stable(accepted));
    assert_int_equal(assigned_count(accepted), 2);
    fixture_free(f);
}

typedef struct {
    const char *name;
    gboolean known_member;
    gint32 generation_delta; /* from the group's generation */
    KafkaError error;
} FenceCase;

/* Kafka's GroupCoordinator checks the member, then the generation, of a
 * heartbeat and of an OffsetCommit: an unknown member gets
 * UNKNOWN_MEMBER_ID, a known one of another generation ILLEGAL_GENERATION,
 * and a fenced commit stores nothing. */
static const FenceCase FENCE_CASES[] = {
    {"current member and generation", TRUE, 0, KAFKA_ERROR_NONE},
    {"unknown member", FALSE, 0, KAFKA_ERROR_UNKNOWN_MEMBER_ID},
    {"older generation", TRUE, -1, KAFKA_ERROR_ILLEGAL_GENERATION},
    {"newer generation", TRUE, 1, KAFKA_ERROR_ILLEGAL_GENERATION},
};

static void
test_group_heartbeat_and_commit_fenced_by_member_and_generation(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(28, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    config.enable_auto_commit = FALSE;
    Consumer *member = add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    Probe probe;
    probe_init(&probe, f->world, read_group_answer);
    gint32 generation = consumer_generation(member);
    g_autofree char *member_id = g_strdup(consumer_member_id(member));
    for (guint i = 0; i < G_N_ELEMENTS(FENCE_CASES); i++) {
        const FenceCase *c = &FENCE_CASES[i];
        const char *id = c->known_member ? member_id : "consumer-unknown";
        gint32 gen = generation + c->generation_delta;
        assert_int_equal(probe_heartbeat(&probe, f, id, gen), c->error);
        gint64 offset = 100 + i;
        assert_int_equal(probe_commit(&probe, f, id, gen, offset), c->error);
        gint64 committed = group_coord_committed_offset(coordinator(f), GROUP, TOPIC, 0);
        if (c->error == KAFKA_ERROR_NONE)
            assert_int_equal(committed, offset);
        else
            assert_int_not_equal(committed, offset);
    }
    /* The probe's requests changed nothing in the group. */
    GroupCoordInfo info;
    group_coord_describe(coordinator(f), GROUP, &info);
    assert_int_equal(info.state, GROUP_STATE_STABLE);
    assert_int_equal(info.generation, generation);
    assert_int_equal(info.members, 1);
    fixture_free(f);
}

/* A member's heartbeat while the group prepares a rebalance (a second
 * member joined) is answered REBALANCE_IN_PROGRESS, which tells it to
 * rejoin (Kafka's GroupCoordinator.handleHeartbeat). */
static void
test_group_heartbeat_during_rebalance(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(29, 2, 5);
    ConsumerConfig config;
    group_config(&config);
    Consumer *first = add_member(f, &config, SIM_NS_PER_MS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    gint32 generation = consumer_generation(first);
    g_autofree char *member_id = g_strdup(consumer_member_id(first));
    Probe probe;
    probe_init(&probe, f->world, read_group_answer);
    add_member(f, &config, SIM_NS_PER_MS);
    GroupCoordInfo info = {0};
    gint64 end = sim_now_ns(f->world) + 5 * SIM_NS_PER_S;
    while (info.state != GROUP_STATE_PREPARING_REBALANCE && sim_now_ns(f->world) < end) {
        run_for(f, SIM_NS_PER_MS);
        group_coord_describe(coordinator(f), GROUP, &info);
    }
    assert_int_equal(info.state, GROUP_STATE_PREPARING_REBALANCE);
    assert_int_equal(probe_heartbeat(&probe, f, member_id, generation),
                     KAFKA_ERROR_REBALANCE_IN_PROGRESS);
    assert_true(run_until_covered(f, 2, 30 * SIM_NS_PER_S) >= 0);
    assert_true(consumer_generation(first) > generation);
    assert_int_equal(probe_heartbeat(&probe, f, member_id, generation),
                     KAFKA_ERROR_ILLEGAL_GENERATION);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_partition_matches_java_hash),
        cmocka_unit_test(test_group_coordinator_leads_offsets_partition),
        cmocka_unit_test(test_group_range_assignment_covers_every_partition),
        cmocka_unit_test(test_group_member_crash_rebalances_within_session_timeout),
        cmocka_unit_test(test_group_poll_timeout_removes_member),
        cmocka_unit_test(test_group_added_partitions_are_assigned),
        cmocka_unit_test(test_group_offsets_survive_coordinator_failover),
        cmocka_unit_test(test_group_new_coordinator_loads_for_modelled_time),
        cmocka_unit_test(test_group_record_round_trip),
        cmocka_unit_test(test_group_membership_survives_coordinator_failover),
        cmocka_unit_test(test_group_unstored_record_fails_the_rebalance),
        cmocka_unit_test(test_group_session_timeout_bounds),
        cmocka_unit_test(test_group_heartbeat_and_commit_fenced_by_member_and_generation),
        cmocka_unit_test(test_group_heartbeat_during_rebalance),
        cmocka_unit_test(test_group_eager_join_stops_the_world),
        cmocka_unit_test(test_group_cooperative_join_keeps_partitions),
        cmocka_unit_test(test_group_cooperative_follower_revocation_rebalances),
        cmocka_unit_test(test_group_cooperative_sticky_with_eager_assignor_runs_eager),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
