/* Tests of models/scenario: good files parse to the expected values with the
 * defaults filled in; each class of bad input fails with a message naming the
 * file, line, group and key; --set, [vary] runs and [expect] conditions; and
 * mutated files never crash the parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "metrics.h"
#include "scenario.h"

#ifndef KSIM_SOURCE_DIR
#error "KSIM_SOURCE_DIR must name the source tree (CMake defines it for tests)"
#endif

#define MS_NS G_GINT64_CONSTANT(1000000)
#define S_NS G_GINT64_CONSTANT(1000000000)
#define MUTATION_ROUNDS 2000

#define assert_string_contains(haystack, needle)                                                   \
    do {                                                                                           \
        const char *haystack_ = (haystack);                                                        \
        if (strstr(haystack_, (needle)) == NULL)                                                   \
            fail_msg("'%s' does not contain '%s'", haystack_, (needle));                           \
    } while (0)

static char *
fixture_path(const char *name)
{
    return g_build_filename(KSIM_SOURCE_DIR, "tests", "data", "scenarios", name, NULL);
}

static Scenario *
load_fixture(const char *name)
{
    g_autofree char *path = fixture_path(name);
    g_autoptr(GError) error = NULL;
    Scenario *scenario = scenario_load(path, &error);
    if (scenario == NULL)
        fail_msg("%s: %s", name, error->message);
    scenario_check_invariants(scenario);
    return scenario;
}

static const ScenarioProducer *
producer_at(const ScenarioVariant *variant, guint index)
{
    const GPtrArray *producers = scenario_variant_producers(variant);
    assert_true(index < producers->len);
    return producers->pdata[index];
}

static const ScenarioFault *
fault_at(const ScenarioVariant *variant, guint index)
{
    const GPtrArray *faults = scenario_variant_faults(variant);
    assert_true(index < faults->len);
    return faults->pdata[index];
}

/* The documented example parses into exactly what its comments say. */
static void
test_scenario_example_parses(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("example.ini");
    assert_string_equal(scenario_name(scenario), "acks-durability");
    assert_string_contains(scenario_description(scenario), "Leader crashes");
    assert_int_equal(scenario_seed(scenario), 1);
    assert_int_equal(scenario_variant_count(scenario), 6);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    const ScenarioVariant *v = variants->pdata[5];
    assert_string_equal(scenario_variant_label(v), "acks=all,topic orders:min.insync.replicas=2");
    assert_int_equal(scenario_variant_duration_ns(v), 60 * S_NS);
    assert_int_equal(scenario_variant_quiet_ns(v), 15 * S_NS);

    const ScenarioCluster *cluster = scenario_variant_cluster(v);
    assert_int_equal(cluster->brokers, 3);
    assert_int_equal(cluster->network_latency.kind, SIM_DIST_LOGNORMAL);
    assert_true(cluster->network_latency.a == 500000.0);
    assert_int_equal(cluster->network_bandwidth_bytes_per_s, 125000000);
    assert_true(cluster->disk_fsync_latency.a == 2e6);
    const KConfig *broker = scenario_variant_broker_config(v);
    assert_int_equal(kconfig_get_int64(broker, "min.insync.replicas"), 1);
    assert_string_equal(kconfig_get_string(broker, "ksim.truncation.mode"), "hw");

    const ScenarioTopic *orders = scenario_variant_find_topic(v, "orders");
    assert_non_null(orders);
    assert_int_equal(orders->partitions, 3);
    assert_int_equal(orders->replication_factor, 3);
    assert_int_equal(kconfig_get_int64(orders->config, "min.insync.replicas"), 2);
    assert_null(scenario_variant_find_topic(v, "payments"));

    const ScenarioProducer *writer = producer_at(v, 0);
    assert_string_equal(writer->name, "writer");
    assert_string_equal(writer->topic, "orders");
    assert_int_equal(writer->instances, 1);
    assert_string_equal(kconfig_get_string(writer->config, "acks"), "all");
    assert_true(writer->workload.rate_per_s == 1000.0);
    assert_int_equal(writer->workload.arrival, SCENARIO_ARRIVAL_CONSTANT);
    assert_int_equal(writer->workload.keys, SCENARIO_KEYS_NONE);
    assert_int_equal(writer->workload.partition, -1);
    assert_false(writer->workload.send_sync);
    assert_int_equal(writer->workload.stop_ns, 60 * S_NS);
    assert_true(writer->workload.record_size.a == 100.0);

    const ScenarioConsumerGroup *readers = scenario_variant_consumer_groups(v)->pdata[0];
    assert_string_equal(readers->group_id, "readers");
    assert_int_equal(readers->members, 2);
    assert_int_equal(readers->processing_mode, SCENARIO_PROCESSING_PROCESS_THEN_COMMIT_ASYNC);
    assert_int_equal(readers->stop_ns, -1);
}

/* The example's faults: sorted by time, with their targets resolved. */
static void
test_scenario_example_faults(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("example.ini");
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    const ScenarioVariant *v = variants->pdata[0];
    assert_int_equal(scenario_variant_faults(v)->len, 12);

    const ScenarioFault *kill = fault_at(v, 0);
    assert_string_equal(kill->name, "kill-leader");
    assert_int_equal(kill->time_ns, 10 * S_NS);
    assert_int_equal(kill->action, SCENARIO_ACTION_CRASH);
    assert_int_equal(kill->target.kind, SCENARIO_TARGET_LEADER);
    assert_string_equal(kill->target.topic, "orders");
    assert_int_equal(kill->target.partition, 0);
    assert_int_equal(kill->duration_ns, 5 * S_NS);

    const ScenarioFault *split = fault_at(v, 1);
    assert_int_equal(split->action, SCENARIO_ACTION_PARTITION);
    assert_int_equal(split->target.kind, SCENARIO_TARGET_NONE);
    assert_int_equal(split->groups->len, 2);
    GArray *first = split->groups->pdata[0];
    GArray *second = split->groups->pdata[1];
    assert_int_equal(first->len, 2);
    assert_int_equal(g_array_index(first, ScenarioTarget, 1).broker, 2);
    assert_int_equal(g_array_index(second, ScenarioTarget, 0).broker, 3);

    const ScenarioFault *lose = fault_at(v, 2);
    assert_int_equal(lose->action, SCENARIO_ACTION_LOSE);
    assert_int_equal(lose->to.kind, SCENARIO_TARGET_BROKER);
    assert_int_equal(lose->count, 10);
    const ScenarioFault *delay = fault_at(v, 3);
    assert_int_equal(delay->to.kind, SCENARIO_TARGET_PRODUCER);
    assert_string_equal(delay->to.producer, "writer");
    assert_int_equal(delay->delay_ns, 200 * MS_NS);
    const ScenarioFault *zone = fault_at(v, 4);
    assert_int_equal(zone->action, SCENARIO_ACTION_PARTITION);
    const GArray *rack = zone->groups->pdata[0];
    assert_int_equal(g_array_index(rack, ScenarioTarget, 0).kind, SCENARIO_TARGET_RACK);
    assert_string_equal(g_array_index(rack, ScenarioTarget, 0).rack, "us-east-1a");
    const ScenarioFault *slow = fault_at(v, 5);
    assert_true(slow->factor == 10.0);
    g_autofree char *target = scenario_target_format(&slow->target);
    assert_string_equal(target, "follower(orders-2)");
    assert_string_equal(scenario_action_name(slow->action), "disk-slow");
    const ScenarioFault *nth = fault_at(v, 6);
    assert_int_equal(nth->target.kind, SCENARIO_TARGET_FOLLOWER);
    assert_int_equal(nth->target.nth, 2);
    const ScenarioFault *broken = fault_at(v, 7);
    assert_int_equal(broken->action, SCENARIO_ACTION_DISK_ERROR);
    assert_string_equal(scenario_action_name(broken->action), "disk-error");
    assert_int_equal(broken->target.kind, SCENARIO_TARGET_BROKER);
    assert_int_equal(broken->target.broker, 3);
    assert_int_equal(broken->duration_ns, 5 * S_NS);
    const ScenarioFault *lossy = fault_at(v, 8);
    assert_int_equal(lossy->action, SCENARIO_ACTION_LOSS);
    assert_int_equal(lossy->loss_per_million, 100000);
    assert_int_equal(lossy->to.broker, 3);
    const ScenarioFault *slow_link = fault_at(v, 9);
    assert_int_equal(slow_link->latency.kind, SIM_DIST_UNIFORM);
    assert_true(slow_link->latency.b == 70.0 * MS_NS);
    assert_int_equal(fault_at(v, 10)->bandwidth_bytes_per_s, 1000000);
    assert_int_equal(fault_at(v, 11)->clock_offset_ns, 3600 * S_NS);

    const ScenarioRandomFaults *random = scenario_variant_random_faults(v);
    assert_non_null(random);
    assert_int_equal(random->kinds->len, 3);
    assert_int_equal(g_array_index(random->kinds, ScenarioAction, 1), SCENARIO_ACTION_PARTITION);
    assert_int_equal(random->interval.kind, SIM_DIST_EXPONENTIAL);
    assert_int_equal(random->duration.kind, SIM_DIST_UNIFORM);
    assert_int_equal(random->concurrent_max, 1);
    assert_int_equal(random->start_ns, 5 * S_NS);
    assert_int_equal(random->stop_ns, 50 * S_NS);
    assert_false(random->swarm);
}

/* [random-faults] swarm takes a boolean, set by --set too; a bad one is refused. */
static void
test_scenario_random_swarm(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("example.ini");
    assert_true(scenario_apply_set(scenario, "random-faults:swarm=true", NULL));
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    assert_true(scenario_variant_random_faults(runs->pdata[0])->swarm);
    GError *error = NULL;
    assert_false(scenario_apply_set(scenario, "random-faults:swarm=maybe", &error));
    assert_non_null(error);
    assert_non_null(strstr(error->message, "swarm"));
    g_error_free(error);
}

typedef struct {
    const char *file;
    guint runs;
    const char *name;
    guint brokers;
    guint topics;
    guint producers;
    guint consumer_groups;
    guint faults;
    gboolean random_faults;
} GoodCase;

static const GoodCase good_cases[] = {
    {"example.ini", 6, "acks-durability", 3, 1, 1, 1, 12, TRUE},
    {"good-minimal.ini", 1, "good-minimal", 3, 0, 0, 0, 0, FALSE},
    {"good-defaults.ini", 1, "good-defaults", 5, 1, 1, 0, 2, FALSE},
    {"good-comments-crlf.ini", 1, "good-comments-crlf", 3, 1, 1, 0, 0, FALSE},
    {"good-consumer-group.ini", 2, "good-consumer-group", 3, 2, 0, 1, 0, FALSE},
    {"good-vary.ini", 12, "good-vary", 3, 1, 1, 0, 1, FALSE},
};

/* Every good fixture loads, with the expected shape in every run. */
static void
test_scenario_good_fixtures(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(good_cases); i++) {
        const GoodCase *c = &good_cases[i];
        g_autoptr(Scenario) scenario = load_fixture(c->file);
        assert_string_equal(scenario_name(scenario), c->name);
        assert_int_equal(scenario_variant_count(scenario), c->runs);
        assert_non_null(scenario_path(scenario));
        g_autoptr(GPtrArray) variants = scenario_variants(scenario);
        assert_int_equal(variants->len, c->runs);
        for (guint r = 0; r < variants->len; r++) {
            const ScenarioVariant *v = variants->pdata[r];
            assert_int_equal(scenario_variant_index(v), r);
            assert_int_equal(scenario_variant_cluster(v)->brokers, c->brokers);
            assert_int_equal(scenario_variant_topics(v)->len, c->topics);
            assert_int_equal(scenario_variant_producers(v)->len, c->producers);
            assert_int_equal(scenario_variant_consumer_groups(v)->len, c->consumer_groups);
            assert_int_equal(scenario_variant_faults(v)->len, c->faults);
            assert_int_equal(scenario_variant_random_faults(v) != NULL, c->random_faults);
        }
    }
}

/* Files that say little get Kafka's and ksim's defaults, layered. */
static void
test_scenario_defaults_are_filled(void **state)
{
    (void)state;
    g_autoptr(Scenario) minimal = load_fixture("good-minimal.ini");
    g_autoptr(GPtrArray) runs = scenario_variants(minimal);
    const ScenarioVariant *v = runs->pdata[0];
    assert_string_equal(scenario_variant_label(v), "default");
    assert_int_equal(scenario_variant_settings(v)->len, 0);
    assert_int_equal(scenario_variant_duration_ns(v), 30 * S_NS);
    assert_int_equal(scenario_variant_quiet_ns(v), 10 * S_NS);
    assert_int_equal(scenario_variant_seed(v), 1);
    assert_true(scenario_variant_cluster(v)->network_latency.a == 100000.0);
    assert_int_equal(scenario_variant_cluster(v)->network_bandwidth_bytes_per_s, 0);
    assert_int_equal(
        kconfig_get_duration_ns(scenario_variant_broker_config(v), "replica.lag.time.max.ms"),
        30 * S_NS);

    g_autoptr(Scenario) defaults = load_fixture("good-defaults.ini");
    g_autoptr(GPtrArray) runs2 = scenario_variants(defaults);
    v = runs2->pdata[0];
    const ScenarioTopic *events = scenario_variant_find_topic(v, "events");
    assert_int_equal(events->partitions, 6);
    assert_int_equal(events->replication_factor, 3);
    assert_int_equal(kconfig_get_int64(events->config, "min.insync.replicas"), 2);
    assert_int_equal(kconfig_get_duration_ns(events->config, "retention.ms"), 3600 * S_NS);
    assert_int_equal(kconfig_get_duration_ns(events->config, "segment.ms"), 168 * 3600 * S_NS);
    const ScenarioProducer *p = producer_at(v, 0);
    assert_string_equal(p->topic, "events");
    assert_int_equal(kconfig_get_duration_ns(p->config, "linger.ms"), 5 * MS_NS);
    assert_int_equal(kconfig_get_int64(p->config, "batch.size"), 16384);
    assert_true(p->workload.rate_per_s == 100.0);
    assert_int_equal(p->workload.start_ns, 0);
    assert_int_equal(p->workload.stop_ns, 120 * S_NS);
    assert_int_equal(p->workload.burst_on_ns, 100 * MS_NS);
    assert_int_equal(fault_at(v, 0)->target.kind, SCENARIO_TARGET_CONTROLLER);
    assert_int_equal(fault_at(v, 1)->action, SCENARIO_ACTION_HEAL);
    assert_int_equal(fault_at(v, 1)->time_ns, 120 * S_NS);
}

/* CRLF, odd spacing and every comment form read as intended. */
static void
test_scenario_comments_and_spacing(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("good-comments-crlf.ini");
    assert_string_equal(scenario_description(scenario), "one;two#three");
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    const ScenarioVariant *v = runs->pdata[0];
    assert_int_equal(scenario_variant_duration_ns(v), 45 * S_NS);
    const ScenarioTopic *t1 = scenario_variant_find_topic(v, "t1");
    assert_non_null(t1);
    assert_int_equal(t1->partitions, 2);
    const ScenarioProducer *w = producer_at(v, 0);
    assert_int_equal(w->instances, 4);
    assert_int_equal(w->workload.arrival, SCENARIO_ARRIVAL_BURSTS);
    assert_int_equal(w->workload.burst_on_ns, 10 * MS_NS);
    assert_int_equal(w->workload.burst_off_ns, 90 * MS_NS);
    assert_int_equal(w->workload.keys, SCENARIO_KEYS_ZIPF);
    assert_int_equal(w->workload.key_count, 1000);
    assert_true(w->workload.zipf_s == 1.2);
    assert_int_equal(w->workload.record_size.kind, SIM_DIST_UNIFORM);
    assert_true(w->workload.record_size.b == 1024.0);
    assert_int_equal(w->workload.partition, 1);
    assert_true(w->workload.send_sync);
    assert_int_equal(w->workload.start_ns, 5 * S_NS);
    assert_int_equal(w->workload.stop_ns, 40 * S_NS);
    assert_string_equal(kconfig_get_string(w->config, "partitioner.class"), "round-robin");
    assert_string_equal(kconfig_get_string(w->config, "acks"), "all");
}

/* Consumer groups are parsed generically: topics, members, consumer keys. */
static void
test_scenario_consumer_groups(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("good-consumer-group.ini");
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    const ScenarioVariant *v = runs->pdata[1];
    assert_string_equal(scenario_variant_label(v), "max.poll.records=500");
    const ScenarioConsumerGroup *readers = scenario_variant_consumer_groups(v)->pdata[0];
    assert_string_equal(readers->name, "readers");
    assert_int_equal(g_strv_length(readers->topics), 2);
    assert_string_equal(readers->topics[1], "b");
    assert_int_equal(readers->members, 3);
    assert_false(kconfig_get_bool(readers->config, "enable.auto.commit"));
    assert_int_equal(kconfig_get_int64(readers->config, "max.poll.records"), 500);
    g_auto(GStrv) assignors = kconfig_get_list(readers->config, "partition.assignment.strategy");
    assert_string_equal(assignors[0], "roundrobin");
    assert_string_equal(assignors[1], "range");
    assert_true(kconfig_is_null(readers->config, "group.id"));
}

typedef struct {
    const char *file;
    KsimScenarioErrorCode code;
    guint line; /* 0: the message has no line */
    const char *group;
    const char *key;
    const char *fragment;
} BadCase;

static const BadCase bad_cases[] = {
    {"bad-bool-value.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster",
     "unclean.leader.election.enable", "'yes' is not a boolean; expected true or false"},
    {"bad-cluster-min-isr.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 8, "cluster",
     "min.insync.replicas", "4 is above the replication factor 3 of topic orders"},
    {"bad-consumer-heartbeat.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 25, "consumer-group readers",
     "heartbeat.interval.ms", "must be lower than session.timeout.ms (45s)"},
    {"bad-consumer-name-long.ini", KSIM_SCENARIO_ERROR_VALUE, 23,
     "consumer-group rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr", NULL,
     "the members' client ids (consumer-NAME-K, 64 characters for the last) would be longer "
     "than ksim's consumers keep (63)"},
    {"bad-consumer-topic.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 24, "consumer-group readers", "topics",
     "there is no topic 'payments'"},
    {"bad-delivery-timeout.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 16, "producer writer",
     "delivery.timeout.ms", "must be at least linger.ms + request.timeout.ms (30s)"},
    {"bad-dist-unit.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster", "network.latency",
     "has a time without a unit"},
    {"bad-disk-dirty-bytes.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster", "disk.dirty.bytes",
     "'lots' is not a non-negative number"},
    {"bad-disk-error-target.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "'zk' cannot be used with action 'disk-error' (it takes broker:N"},
    {"bad-duplicate-group.ini", KSIM_SCENARIO_ERROR_SYNTAX, 23, "topic orders", NULL,
     "appears twice (first at line 9)"},
    {"bad-duplicate-key.ini", KSIM_SCENARIO_ERROR_SYNTAX, 16, "producer writer", "acks",
     "set twice (first at line 15)"},
    {"bad-enum-value.ini", KSIM_SCENARIO_ERROR_VALUE, 15, "producer writer", "acks",
     "'two' is not allowed; expected one of: all, -1, 0, 1"},
    {"bad-expect-metric.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 27, "expect", "safe",
     "unknown metric 'lost_writes'; did you mean 'lost_write'?"},
    {"bad-expect-syntax.ini", KSIM_SCENARIO_ERROR_SYNTAX, 24, "expect", "safe",
     "expected METRIC OP NUMBER"},
    {"bad-expect-when-key.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 27, "expect", "safe",
     "linger.ms is not varied"},
    {"bad-expect-when-value.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 27, "expect", "safe",
     "2 is not among the varied values of acks (0, 1, all)"},
    {"bad-fault-key.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 22, "fault kill", "count",
     "does not apply to action 'crash'"},
    {"bad-fault-missing.ini", KSIM_SCENARIO_ERROR_MISSING, 17, "fault kill", "groups",
     "is required by action 'partition'"},
    {"bad-group-name.ini", KSIM_SCENARIO_ERROR_VALUE, 9, "topic ord:ers", NULL,
     "'ord:ers' is not a valid name"},
    {"bad-group-id-long.ini", KSIM_SCENARIO_ERROR_VALUE, 25, "consumer-group readers", "group.id",
     "must be 1 to 63 characters (or null: the group's name)"},
    {"bad-idempotence-acks.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 16, "producer writer", "acks",
     "conflicts with enable.idempotence = true"},
    {"bad-int-value.ini", KSIM_SCENARIO_ERROR_VALUE, 10, "topic orders", "partitions",
     "'many' is not an integer"},
    {"bad-key-before-group.ini", KSIM_SCENARIO_ERROR_SYNTAX, 2, NULL, NULL,
     "comes before any [group] line"},
    {"bad-min-isr-above-rf.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 12, "topic orders",
     "min.insync.replicas", "3 is above the replication factor 2"},
    {"bad-misplaced-key.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 16, "producer writer", "retention.ms",
     "it is a topic key, for [topic NAME]"},
    {"bad-missing-duration.ini", KSIM_SCENARIO_ERROR_MISSING, 3, "scenario", "duration",
     "is required"},
    {"bad-missing-unit.ini", KSIM_SCENARIO_ERROR_VALUE, 4, "scenario", "duration",
     "'60' needs a unit"},
    {"bad-ms-fraction.ini", KSIM_SCENARIO_ERROR_VALUE, 16, "producer writer", "linger.ms",
     "not a whole number of milliseconds"},
    {"bad-partition-groups.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "groups",
     "'2' is in more than one group"},
    {"bad-producer-topic.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 14, "producer writer", "topic",
     "there is no topic 'order'; did you mean 'orders'?"},
    {"bad-random-kind.ini", KSIM_SCENARIO_ERROR_VALUE, 24, "random-faults", "kinds",
     "has 'heal', which is not allowed"},
    {"bad-random-stop.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 27, "random-faults", "stop",
     "90s is past the end of the scenario (duration 60s)"},
    {"bad-range.ini", KSIM_SCENARIO_ERROR_VALUE, 12, "topic orders", "min.insync.replicas",
     "'0' is out of range"},
    {"bad-replica-assignment-dup.ini", KSIM_SCENARIO_ERROR_VALUE, 9, "topic orders",
     "replica.assignment", "partition 0 names broker 2 twice"},
    {"bad-replica-assignment-exclusive.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 10, "topic orders",
     "replica.assignment", "remove partitions from [topic orders]"},
    {"bad-replica-assignment-notid.ini", KSIM_SCENARIO_ERROR_VALUE, 9, "topic orders",
     "replica.assignment", "'x' is not a broker id"},
    {"bad-replica-assignment-uneven.ini", KSIM_SCENARIO_ERROR_VALUE, 9, "topic orders",
     "replica.assignment", "partition 1 has 2 replicas, partition 0 has 3"},
    {"bad-replica-assignment-unknown.ini", KSIM_SCENARIO_ERROR_VALUE, 9, "topic orders",
     "replica.assignment", "names broker 4; the brokers are 1 to 3"},
    {"bad-rf-above-brokers.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 11, "topic orders",
     "replication.factor", "above the number of brokers (3)"},
    {"bad-syntax-line.ini", KSIM_SCENARIO_ERROR_SYNTAX, 15, "producer writer", NULL,
     "expected 'key = value', found 'acks all'"},
    {"bad-target-broker.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "'broker:7' does not exist: the cluster has 3 brokers"},
    {"bad-target-kind.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "cannot be used with action 'restart'"},
    {"bad-target-partition.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "topic orders has 3 partitions (0..2)"},
    {"bad-target-producer.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "there is no producer 'writter'; did you mean 'writer'?"},
    {"bad-target-topic.ini", KSIM_SCENARIO_ERROR_VALUE, 20, "fault kill", "target",
     "there is no topic 'orderz'; did you mean 'orders'?"},
    {"bad-topic-name-long.ini", KSIM_SCENARIO_ERROR_VALUE, 9,
     "topic oooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooooo", NULL,
     "the topic name has 64 characters; ksim's brokers keep at most 63 (Kafka allows 249)"},
    {"bad-time-past-end.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 18, "fault kill", "at",
     "70s is past the end of the scenario (duration 60s)"},
    {"bad-unit.ini", KSIM_SCENARIO_ERROR_VALUE, 4, "scenario", "duration", "unknown unit 'x'"},
    {"bad-zk-in-flight.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster",
     "zookeeper.max.in.flight.requests", "'0' is out of range; expected an integer of at least 1"},
    {"bad-leader-and-isr-time.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster",
     "ksim.leader.and.isr.partition.time", "'50' needs a unit"},
    {"bad-zk-byte-time.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster", "zookeeper.byte.time",
     "'20' needs a unit"},
    {"bad-update-metadata-time.ini", KSIM_SCENARIO_ERROR_VALUE, 8, "cluster",
     "ksim.update.metadata.partition.time", "'-5us' is not a non-negative number"},
    {"bad-unknown-group.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 9, "topik orders", NULL,
     "unknown group 'topik'; did you mean 'topic'?"},
    {"bad-unknown-key.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 15, "producer writer", "ackss",
     "unknown key; did you mean 'acks'?"},
    {"bad-utf8.ini", KSIM_SCENARIO_ERROR_SYNTAX, 3, NULL, NULL, "not valid UTF-8"},
    {"bad-vary-empty-value.ini", KSIM_SCENARIO_ERROR_VALUE, 24, "vary", "acks", "empty value"},
    {"bad-vary-group.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 24, "vary", "topic order:partitions",
     "no group [topic order]"},
    {"bad-vary-nowhere.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 24, "vary", "max.poll.records",
     "it is a consumer key"},
    {"bad-vary-run.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 24, "topic orders",
     "min.insync.replicas", "(in the run 'topic orders:min.insync.replicas=4')"},
    {"bad-vary-unknown-key.ini", KSIM_SCENARIO_ERROR_UNKNOWN, 24, "vary", "akcs",
     "unknown key; did you mean 'acks'?"},
    {"bad-vary-value.ini", KSIM_SCENARIO_ERROR_VALUE, 24, "vary", "acks", "'2' is not allowed"},
    {"bad-workload-burst.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 16, "producer writer",
     "workload.burst", "applies only with workload.arrival = bursts"},
    {"bad-workload-keys.ini", KSIM_SCENARIO_ERROR_VALUE, 16, "producer writer", "workload.keys",
     "is not none, uniform:K or zipf:K,S"},
    {"bad-workload-partition.ini", KSIM_SCENARIO_ERROR_INCONSISTENT, 16, "producer writer",
     "workload.partition", "partition 3 does not exist"},
};

/* Checks "FILE:LINE: [GROUP] KEY: ...fragment..." piece by piece. */
static void
assert_located_message(const char *message, const char *file, guint line, const char *group,
                       const char *key, const char *fragment)
{
    g_autofree char *prefix =
        line != 0 ? g_strdup_printf("%s:%u: ", file, line) : g_strdup_printf("%s: ", file);
    if (!g_str_has_prefix(message, prefix))
        fail_msg("'%s' does not start with '%s'", message, prefix);
    const char *rest = message + strlen(prefix);
    if (group != NULL) {
        g_autofree char *bracketed = g_strdup_printf("[%s] ", group);
        if (!g_str_has_prefix(rest, bracketed))
            fail_msg("'%s': no '%s' after the line", message, bracketed);
        rest += strlen(bracketed);
    }
    if (key != NULL) {
        g_autofree char *keyed = g_strdup_printf("%s: ", key);
        if (!g_str_has_prefix(rest, keyed))
            fail_msg("'%s': no '%s' after the group", message, keyed);
    }
    assert_string_contains(message, fragment);
}

/* Every class of bad input fails with one located, explained message. */
static void
test_scenario_bad_fixtures(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(bad_cases); i++) {
        const BadCase *c = &bad_cases[i];
        g_autofree char *path = fixture_path(c->file);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load(path, &error);
        if (scenario != NULL)
            fail_msg("%s loaded, but it is bad", c->file);
        assert_non_null(error);
        if (!g_error_matches(error, KSIM_SCENARIO_ERROR, (gint)c->code))
            fail_msg("%s: error code %d, expected %d: %s", c->file, error->code, c->code,
                     error->message);
        assert_located_message(error->message, path, c->line, c->group, c->key, c->fragment);
    }
}

/* Every bad-*.ini fixture is in the table above (so none goes untested). */
static void
test_scenario_bad_fixtures_all_listed(void **state)
{
    (void)state;
    g_autofree char *dir_path = fixture_path("");
    g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
    assert_non_null(dir);
    guint seen = 0;
    for (const char *name = g_dir_read_name(dir); name != NULL; name = g_dir_read_name(dir)) {
        if (!g_str_has_prefix(name, "bad-"))
            continue;
        gboolean listed = FALSE;
        for (guint i = 0; i < G_N_ELEMENTS(bad_cases) && !listed; i++)
            listed = strcmp(bad_cases[i].file, name) == 0;
        if (!listed)
            fail_msg("%s is not in bad_cases", name);
        seen++;
    }
    assert_int_equal(seen, G_N_ELEMENTS(bad_cases));
}

typedef struct {
    const char *text;
    const char *fragment;
} InlineBadCase;

static const InlineBadCase inline_bad_cases[] = {
    {"", "t.ini: [scenario] duration: is required"},
    {"[scenario]\nduration = 1s\n[cluster]\ntransaction.state.log.num.partitions = 2\n"
     "[fault f]\nat = 0s\naction = crash\ntarget = leader(__transaction_state-2)\n",
     "'leader(__transaction_state-2)' does not exist: __transaction_state has 2 partitions"},
    {"[scenario]\nduration = 1s\n[vary]\nat = 1s, 2s\n",
     "t.ini:4: [vary] at: a fault key must name its group, e.g. 'fault NAME:at'"},
    {"[scenario]\nduration = 1s\n[expect]\n[vary]\nexpect:x = 1, 2\n",
     "t.ini:5: [vary] expect:x: [expect] cannot be changed"},
    {"[scenario]\nduration = 1s\n[vary]\nscenario:quiet = 1s\nquiet = 2s\n",
     "t.ini:5: [vary] quiet: varies the same setting as 'scenario:quiet' (line 4)"},
    {"[scenario]\nduration = 1s\n[vary]\nseed = 1, 1\n", "'1' is listed twice"},
    {"[scenario]\nduration = 1s\n[vary]\nseed =\n", "t.ini:4: [vary] seed: lists no values"},
    {"[scenario]\nduration = 1s\n[expect]\nx = lost_write == 0 when acks=all\n",
     "acks is not varied"},
    {"[scenario]\nduration = 1s\n[expect]\nx = lost_write = 0\n", "expected METRIC OP NUMBER"},
    {"[scenario]\nduration = 1s\n[expect]\nx = lost_write == lots\n", "'lots' is not a number"},
    {"[scenario]\nduration = 1s\n[cluster main]\n", "t.ini:3: [cluster main] expected [cluster]"},
    {"[scenario]\nduration = 1s\n[topic]\n", "[topic] expected [topic NAME]"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\n", "[fault f] action: is required"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = heal\nduration = 1s\n",
     "duration: does not apply to action 'heal'"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = disk-error\ntarget = broker:1\n"
     "factor = 2\n",
     "t.ini:7: [fault f] factor: does not apply to action 'disk-error'"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = disk-error\n",
     "t.ini:3: [fault f] target: is required by action 'disk-error'"},
    {"[scenario]\nduration = 1s\n[cluster]\ndisk.bandwidth = -1\n",
     "t.ini:4: [cluster] disk.bandwidth: '-1' is out of range"},
    {"[scenario]\nduration = 1s\n[cluster]\ndisk.page.cache.bytes = 1x\n",
     "t.ini:4: [cluster] disk.page.cache.bytes: unknown unit 'x' in '1x'"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = isolate\ntarget = broker:0\n",
     "'broker:0' does not exist"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = crash\ntarget = leader(x)\n",
     "is not leader(TOPIC-P)"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = crash\ntarget = the leader\n",
     "'the leader' is not a target; expected broker:N"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = partition\ngroups = 1,2\n",
     "is not a partition: two to"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = partition\ngroups = 1, | 2\n",
     "has an empty member"},
    {"[scenario]\nduration = 1s\n[topic a]\n[topic b]\n[producer p]\n",
     "[producer p] topic: is required when the scenario has several topics"},
    {"[scenario]\nduration = 1s\n[producer p]\n", "the scenario has no [topic NAME] group"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\ntransaction.records = 5\n",
     "t.ini:5: [producer p] transaction.records: applies only to a transactional producer"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\ntransactional.id = x\n"
     "transaction.abort.ratio = 2\n",
     "transaction.abort.ratio"},
    {"[scenario]\nduration = 1s\n[topic a]\n[consumer-group g]\ntopics = a\n"
     "pipeline.output = b\n",
     "t.ini:6: [consumer-group g] pipeline.output: "},
    {"[scenario]\nduration = 1s\n[topic a]\n[consumer-group g]\ntopics = a\n"
     "pipeline.output = a\n",
     "a pipeline would consume its own output"},
    {"[scenario]\nduration = 1s\n[topic a]\n[consumer-group g]\ntopics = a\n"
     "exactly.once = true\n",
     "exactly.once: applies only to a pipeline: set pipeline.output"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\nworkload.keys =\n",
     "t.ini:5: [producer p] workload.keys: '' is not none, uniform:K or zipf:K,S"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\nworkload.keys = uniform:\n",
     "'uniform:' is not none"},
    {"[scenario]\nduration = 1s\n[fault f]\nat = 0s\naction = partition\ngroups = 1 || 2\n",
     "groups: a group is empty"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\nworkload.start = 1s\n",
     "workload.start: 1s is not before workload.stop (1s)"},
    {"[scenario]\nduration = 1s\n[random-faults]\nkinds = crash\ninterval = const:0s\n"
     "duration = 1s\n",
     "[random-faults] interval: must have a positive mean"},
    {"[scenario]\nduration = 1s\n[cluster]\nreplica.fetch.wait.max.ms = 60s\n",
     "must not exceed replica.lag.time.max.ms (30s)"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\nenable.idempotence = true\n"
     "max.in.flight.requests.per.connection = 6\n",
     "allows at most 5"},
    {"[scenario]\nduration = 1s\n[topic a]\n[producer p]\nenable.idempotence = false\n"
     "transactional.id = tx\n",
     "must be true when transactional.id is set"},
    {"[scenario]\nduration = 1s\n[topic a]\n[consumer-group g]\ntopics = a\n"
     "session.timeout.ms = 1000\nheartbeat.interval.ms = 100\n",
     "outside the brokers' group session bounds (6s..1800s)"},
#define CG "[scenario]\nduration = 10s\n[topic a]\npartitions = 2\n[consumer-group g]\ntopics = a\n"
    {CG "members = 2\n[fault f]\nat = 1s\naction = crash\ntarget = consumer:g-3\n",
     "'consumer:g-3' does not exist: [consumer-group g] has 2 members"},
    {CG "[fault f]\nat = 1s\naction = crash\ntarget = consumer:h\n",
     "there is no consumer group 'h'"},
    {CG "[fault f]\nat = 1s\naction = expire-session\ntarget = consumer:g\n",
     "cannot be used with action 'expire-session'"},
    {CG "[fault f]\nat = 1s\naction = add-partitions\ntopic = a\npartitions = 2\n",
     "partitions: 2 is not more than topic a's 2 partitions"},
    {CG "[fault f]\nat = 1s\naction = add-partitions\ntopic = b\npartitions = 3\n",
     "[fault f] topic: there is no topic 'b'"},
    {CG "[fault f]\nat = 1s\naction = add-partitions\ntopic = a\n",
     "[fault f] partitions: is required by action 'add-partitions'"},
    {CG "[fault f]\nat = 1s\naction = crash\ntarget = broker:1\ntopic = a\n",
     "topic: does not apply to action 'crash'"},
    {CG "processing.mode = later\n", "[consumer-group g] processing.mode: 'later' is not allowed; "
                                     "expected one of: auto, commit-before-processing"},
    {CG "members.start = 5s\nmembers.stop = 5s\n",
     "members.start: 5s is not before members.stop (5s)"},
    {CG "members.stop = 11s\n", "members.stop: 11s is past the end of the scenario"},
    {CG "[expect]\nx = lost_consumptoin == 0\n", "lost_consumption"},
#undef CG
#define B3 "[scenario]\nduration = 10s\n[cluster]\nbrokers = 3\n"
#define RACKS B3 "racks = a, b, c\n[topic t]\nreplication.factor = 2\n"
#define FAULT "[fault f]\nat = 1s\naction = crash\n"
    /* [broker N]: an id of the cluster, broker keys, and not the cluster-wide ones. */
    {B3 "[broker 4]\nreplica.lag.time.max.ms = 1000\n",
     "t.ini:5: [broker 4] there is no broker 4: the cluster has 3 brokers (ids 1..3)"},
    {B3 "[broker 0]\n", "t.ini:5: [broker 0] '0' is not a broker id"},
    {B3 "[broker 02]\n", "'02' is not a broker id"},
    {B3 "[broker two]\n", "'two' is not a broker id: expected [broker N]"},
    {B3 "[broker]\n", "[broker] expected [broker N]"},
    {B3 "[broker 2]\nreplica.lag.time.max = 1000\n",
     "t.ini:6: [broker 2] replica.lag.time.max: unknown key; did you mean 'replica.lag.time.max.ms'"},
    {B3 "[broker 2]\nacks = all\n", "t.ini:6: [broker 2] acks: not valid here: it is a producer key"},
    {B3 "[broker 2]\nbrokers = 4\n", "[broker 2] brokers: not valid here: it is a cluster key"},
    {B3 "[broker 2]\nreplica.lag.time.max.ms = soon\n", "t.ini:6: [broker 2] replica.lag.time.max.ms: "},
    {B3 "[broker 2]\noffsets.topic.num.partitions = 3\n",
     "t.ini:6: [broker 2] offsets.topic.num.partitions: is the same on every broker in ksim"},
    {B3 "[broker 2]\nreplica.fetch.wait.max.ms = 40s\n",
     "[broker 2] replica.fetch.wait.max.ms: must not exceed replica.lag.time.max.ms (30s)"},
    {B3 "[broker 3]\nmin.insync.replicas = 3\n[topic t]\nreplication.factor = 2\n",
     "t.ini:6: [broker 3] min.insync.replicas: 3 is above the replication factor 2 of topic t "
     "(acks=all writes could never succeed while broker 3 leads it)"},
    {B3 "[broker 2]\nbroker.rack = a b\n", "t.ini:6: [broker 2] broker.rack: 'a b' is not a rack name"},
    {B3 "[broker 2]\nbroker.rack = a|b\n", "'a|b' is not a rack name"},
    {B3 "racks = a, b\nbroker.rack = c\n", "[cluster] racks: gives every broker a rack, and so does"},
    /* Racks on some brokers only: Kafka's admin refuses to place the topic. */
    {B3 "[broker 2]\nbroker.rack = a\n[topic t]\n",
     "[topic t] disable.rack.aware: topic 't': not all brokers have rack information (1 of 3 have "
     "broker.rack)"},
    {B3 "[broker 2]\nbroker.rack = a\n[topic t]\nreplica.assignment = 1:2\n"
     "[fault f]\nat = 1s\naction = add-partitions\ntopic = t\npartitions = 2\n",
     "[fault f] topic: topic 't': not all brokers have rack information"},
    /* rack:NAME, follower(T-P, K), replica(T-P, broker:N). */
    {RACKS FAULT "target = rack:d\n", "'rack:d': no broker is in rack 'd' (the racks are a, b, c)"},
    {B3 "[topic t]\n" FAULT "target = rack:a\n", "'rack:a': no broker has a rack"},
    {RACKS "[fault f]\nat = 1s\naction = partition\ngroups = rack:a | 1\n",
     "groups: broker 1 is in the groups twice (as rack:a and as broker:1)"},
    {RACKS FAULT "target = follower(t-0, 2)\n",
     "'follower(t-0, 2)' does not exist: t-0 has 2 replicas, so at most 1 follower"},
    {RACKS FAULT "target = follower(t-0, 0)\n", "K in follower(TOPIC-P, K) is a follower's number"},
    {RACKS FAULT "target = follower(t-0, x)\n", "K in follower(TOPIC-P, K)"},
    {RACKS FAULT "target = leader(t-0, 1)\n", "'leader(t-0, 1)' is not leader(TOPIC-P)"},
    {RACKS FAULT "target = replica(t-0)\n", "is not replica(TOPIC-P, broker:N)"},
    {RACKS FAULT "target = replica(t-0, 3)\n", "is not replica(TOPIC-P, broker:N)"},
    {RACKS FAULT "target = replica(t-0, broker:4)\n", "'broker:4' does not exist"},
    {RACKS FAULT "target = replica(t-0, broker:3)\n",
     "whether broker 3 holds a replica of t-0 depends on the seed (replication factor 2 on 3 "
     "brokers): fix the replicas with replica.assignment in [topic t]"},
    {B3 "[topic t]\nreplica.assignment = 1:2\n" FAULT "target = replica(t-0, broker:3)\n",
     "'replica(t-0, broker:3)': broker 3 holds no replica of t-0 (its replicas are on brokers 1, 2)"},
    {B3 FAULT "target = replica(__consumer_offsets-0, broker:1)\n",
     "the brokers place __consumer_offsets's replicas themselves"},
    {RACKS FAULT "target = replica(x-0, broker:1)\n", "there is no topic 'x'"},
#undef FAULT
#undef RACKS
#undef B3
    {"[scenario\n", "t.ini:1: '[scenario' is not a group line"},
    {"[]\n", "t.ini:1: '[]' is not a valid group name"},
    {"[scenario]\n = 5\n", "t.ini:2: [scenario] '= 5' has no valid key"},
    {"[scenario]\nacks[de] = 5\n", "has no valid key"},
};

/* The consumer keys, consumer targets and add-partitions resolve. */
static void
test_scenario_consumer_workload_and_targets(void **state)
{
    (void)state;
    static const char text[] =
        "[scenario]\nduration = 30s\n[topic a]\npartitions = 2\n"
        "[consumer-group g]\ntopics = a\nmembers = 3\nprocessing.mode = process-then-commit\n"
        "processing.time = const:5ms\npoll.interval = const:2ms\nmembers.start = 1s\n"
        "members.stop = 20s\n"
        "[consumer-group h]\ntopics = a\ngroup.id = shared\n"
        "[fault one]\nat = 2s\naction = crash\ntarget = consumer:g-2\nduration = 1s\n"
        "[fault all]\nat = 3s\naction = pause\ntarget = consumer:h\n"
        "[fault grow]\nat = 4s\naction = add-partitions\ntopic = a\npartitions = 4\n"
        "[expect]\nx = duplicate_consumption >= 0\ny = consumed.fanout == 1\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    const ScenarioVariant *v = variants->pdata[0];
    const ScenarioConsumerGroup *g = scenario_variant_consumer_groups(v)->pdata[0];
    assert_string_equal(g->group_id, "g");
    assert_int_equal(g->members, 3);
    assert_int_equal(g->processing_mode, SCENARIO_PROCESSING_PROCESS_THEN_COMMIT);
    assert_int_equal(g->start_ns, 1 * S_NS);
    assert_int_equal(g->stop_ns, 20 * S_NS);
    assert_int_equal(sim_dist_mean(&g->processing_time), 5000000.0);
    const ScenarioConsumerGroup *h = scenario_variant_consumer_groups(v)->pdata[1];
    assert_string_equal(h->group_id, "shared");
    assert_int_equal(h->stop_ns, -1);
    assert_int_equal(h->processing_mode, SCENARIO_PROCESSING_AUTO);
    const ScenarioFault *one = fault_at(v, 0);
    assert_int_equal(one->target.kind, SCENARIO_TARGET_CONSUMER);
    assert_string_equal(one->target.consumer, "g");
    assert_int_equal(one->target.instance, 2);
    g_autofree char *spelled = scenario_target_format(&one->target);
    assert_string_equal(spelled, "consumer:g-2");
    const ScenarioFault *all = fault_at(v, 1);
    assert_int_equal(all->target.instance, 0);
    const ScenarioFault *grow = fault_at(v, 2);
    assert_int_equal(grow->action, SCENARIO_ACTION_ADD_PARTITIONS);
    assert_string_equal(grow->topic, "a");
    assert_int_equal(grow->partitions, 4);
}

/* leader() and follower() also name the coordinators' internal topics. */
static void
test_scenario_internal_topic_targets(void **state)
{
    (void)state;
    static const char text[] =
        "[scenario]\nduration = 30s\n[topic a]\n"
        "[fault c]\nat = 2s\naction = crash\ntarget = leader(__transaction_state-49)\n"
        "[fault p]\nat = 3s\naction = partition\n"
        "groups = leader(__consumer_offsets-0) | follower(__consumer_offsets-0)\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    const ScenarioFault *c = fault_at(variants->pdata[0], 0);
    assert_int_equal(c->target.kind, SCENARIO_TARGET_LEADER);
    assert_string_equal(c->target.topic, "__transaction_state");
    assert_int_equal(c->target.partition, 49);
}

/* cooperative-sticky, refused before the cooperative protocol was modelled,
 * parses alone and in an upgrade list (Kafka's rolling upgrade to it). */
static void
test_scenario_cooperative_sticky_accepted(void **state)
{
    (void)state;
    static const char *const lists[] = {
        "cooperative-sticky",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor, range",
    };
    for (guint i = 0; i < G_N_ELEMENTS(lists); i++) {
        g_autofree char *text = g_strdup_printf(
            "[scenario]\nduration = 10s\n[topic a]\npartitions = 2\n[consumer-group g]\n"
            "topics = a\npartition.assignment.strategy = %s\n",
            lists[i]);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
        if (scenario == NULL)
            fail_msg("%s: %s", lists[i], error->message);
        g_autoptr(GPtrArray) variants = scenario_variants(scenario);
        const ScenarioConsumerGroup *g =
            scenario_variant_consumer_groups(variants->pdata[0])->pdata[0];
        g_auto(GStrv) assignors = kconfig_get_list(g->config, "partition.assignment.strategy");
        assert_string_equal(assignors[0], "cooperative-sticky");
    }
}

/* [broker N] keys over [cluster]'s for that broker only; racks dealt round
 * robin with broker.rack over them; a broker's topic defaults are its own;
 * the rack, nth-follower and replica targets; --set reaches broker N. */
static void
test_scenario_brokers_racks_and_targets(void **state)
{
    (void)state;
    static const char text[] =
        "[scenario]\nduration = 30s\n[cluster]\nbrokers = 4\nracks = east, west\n"
        "replica.lag.time.max.ms = 9000\n"
        "[broker 2]\nreplica.lag.time.max.ms = 2000\nlog.flush.interval.messages = 1\n"
        "[broker 3]\nbroker.rack = north\n"
        "[topic t]\nreplica.assignment = 1:2:3, 2:3:4\n"
        "[topic u]\nflush.messages = 7\ndisable.rack.aware = true\n"
        "[fault a]\nat = 1s\naction = crash\ntarget = follower(t-1, 2)\n"
        "[fault b]\nat = 2s\naction = pause\ntarget = replica(t-0, broker:3)\n"
        "[fault c]\nat = 3s\naction = isolate\ntarget = rack:east\n"
        "[fault d]\nat = 4s\naction = partition\ngroups = rack:west, zk | rack:north | *\n"
        "[fault e]\nat = 5s\naction = crash\ntarget = follower(t-0)\n"
        "[vary]\nbroker 2:replica.lag.time.max.ms = 2000, 3000\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    assert_int_equal(variants->len, 2);
    const ScenarioVariant *v = variants->pdata[1];
    assert_string_equal(scenario_variant_label(v), "broker 2:replica.lag.time.max.ms=3000");
    static const gint64 lag_ms[] = {9000, 3000, 9000, 9000};
    static const char *const racks[] = {"east", "west", "north", "west"};
    const ScenarioCluster *cluster = scenario_variant_cluster(v);
    for (guint id = 1; id <= 4; id++) {
        const KConfig *cfg = scenario_variant_broker_config_of(v, id);
        assert_int_equal(kconfig_get_duration_ms(cfg, "replica.lag.time.max.ms"), lag_ms[id - 1]);
        assert_string_equal(cluster->racks->pdata[id - 1], racks[id - 1]);
    }
    assert_ptr_equal(scenario_variant_broker_config_of(v, 1), scenario_variant_broker_config(v));
    /* Broker 2 fills topic t's unset flush.messages from its own
     * log.flush.interval.messages; topic u's own value wins everywhere. */
    const ScenarioTopic *t = scenario_variant_find_topic(v, "t");
    const ScenarioTopic *u = scenario_variant_find_topic(v, "u");
    assert_false(t->disable_rack_aware);
    assert_true(u->disable_rack_aware);
    g_autoptr(KConfig) t2 = scenario_topic_config_of(v, t, 2);
    g_autoptr(KConfig) t1 = scenario_topic_config_of(v, t, 1);
    g_autoptr(KConfig) u2 = scenario_topic_config_of(v, u, 2);
    assert_int_equal(kconfig_get_int64(t2, "flush.messages"), 1);
    assert_int_equal(kconfig_get_int64(t1, "flush.messages"), G_MAXINT64);
    assert_int_equal(kconfig_get_int64(u2, "flush.messages"), 7);
    static const char *const spelled[] = {"follower(t-1, 2)", "replica(t-0, broker:3)",
                                          "rack:east", NULL, "follower(t-0)"};
    for (guint i = 0; i < G_N_ELEMENTS(spelled); i++) {
        if (spelled[i] == NULL)
            continue;
        g_autofree char *got = scenario_target_format(&fault_at(v, i)->target);
        assert_string_equal(got, spelled[i]);
    }
    assert_int_equal(fault_at(v, 0)->target.nth, 2);
    assert_int_equal(fault_at(v, 4)->target.nth, 0);
    assert_int_equal(fault_at(v, 1)->target.kind, SCENARIO_TARGET_REPLICA);
    assert_int_equal(fault_at(v, 1)->target.broker, 3);
    const GArray *west = g_ptr_array_index(fault_at(v, 3)->groups, 0);
    assert_int_equal(g_array_index(west, ScenarioTarget, 0).kind, SCENARIO_TARGET_RACK);
    /* --set "broker N:KEY" reaches a broker the file gives no group. */
    assert_true(scenario_apply_set(scenario, "broker 4:zookeeper.session.timeout.ms=7000", &error));
    g_autoptr(GPtrArray) after = scenario_variants(scenario);
    const KConfig *b4 = scenario_variant_broker_config_of(after->pdata[0], 4);
    assert_int_equal(kconfig_get_duration_ms(b4, "zookeeper.session.timeout.ms"), 7000);
    assert_false(scenario_apply_set(scenario, "broker 5:zookeeper.session.timeout.ms=7000", &error));
    assert_string_contains(error->message, "there is no broker 5");
    g_clear_error(&error);
    /* A bare key stays the cluster-wide default; broker 2's own value wins. */
    assert_true(scenario_apply_set(scenario, "replica.lag.time.max.ms=8000", &error));
    g_autoptr(GPtrArray) bare = scenario_variants(scenario);
    const ScenarioVariant *b = bare->pdata[0];
    assert_int_equal(kconfig_get_duration_ms(scenario_variant_broker_config_of(b, 1),
                                             "replica.lag.time.max.ms"),
                     8000);
    assert_int_equal(kconfig_get_duration_ms(scenario_variant_broker_config_of(b, 2),
                                             "replica.lag.time.max.ms"),
                     2000);
}

/* Bad text in memory: each message names "t.ini" and what is wrong. */
static void
test_scenario_inline_bad_text(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(inline_bad_cases); i++) {
        const InlineBadCase *c = &inline_bad_cases[i];
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(c->text, "t.ini", &error);
        if (scenario != NULL)
            fail_msg("case %u loaded, but it is bad:\n%s", i, c->text);
        assert_true(g_str_has_prefix(error->message, "t.ini"));
        assert_string_contains(error->message, c->fragment);
    }
}

/* ---- Faults over a time window: loss, latency, bandwidth, clock ---- */

#define WINDOW_HEAD "[scenario]\nduration = 60s\n[topic a]\n[fault f]\nat = 5s\n"

/* The window faults' keys parse into the fault: rates as shares or
 * percentages, latency with its jitter folded in, bandwidth per second,
 * signed clock steps. */
static void
test_scenario_window_faults(void **state)
{
    (void)state;
    static const char text[] =
        "[scenario]\nduration = 60s\n[topic a]\n"
        "[fault l]\nat = 1s\naction = loss\ntarget = follower(a-0)\nrate = 20%\nduration = 5s\n"
        "[fault m]\nat = 2s\naction = loss\ntarget = broker:1\nto = broker:2\nrate = 0.05\n"
        "[fault d]\nat = 3s\naction = latency\ntarget = broker:2\nlatency = 50ms\n"
        "jitter = 20ms\nduration = 1s\n"
        "[fault e]\nat = 4s\naction = latency\ntarget = zk\nlatency = lognormal:2ms,0.5\n"
        "[fault b]\nat = 5s\naction = bandwidth\ntarget = broker:3\nbandwidth = 1MB/s\n"
        "[fault c]\nat = 6s\naction = clock\ntarget = leader(a-0)\noffset = +2h\nduration = 10s\n"
        "[fault k]\nat = 7s\naction = clock\ntarget = broker:1\noffset = -30s\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
    if (scenario == NULL)
        fail_msg("%s", error->message);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    const ScenarioVariant *v = variants->pdata[0];
    const ScenarioFault *loss = fault_at(v, 0);
    assert_int_equal(loss->action, SCENARIO_ACTION_LOSS);
    assert_string_equal(scenario_action_name(loss->action), "loss");
    assert_int_equal(loss->target.kind, SCENARIO_TARGET_FOLLOWER);
    assert_int_equal(loss->to.kind, SCENARIO_TARGET_NONE);
    assert_int_equal(loss->loss_per_million, 200000);
    assert_int_equal(loss->duration_ns, 5 * S_NS);
    const ScenarioFault *link = fault_at(v, 1);
    assert_int_equal(link->to.kind, SCENARIO_TARGET_BROKER);
    assert_int_equal(link->loss_per_million, 50000);
    assert_int_equal(link->duration_ns, 0);
    const ScenarioFault *jittered = fault_at(v, 2);
    assert_int_equal(jittered->latency.kind, SIM_DIST_UNIFORM);
    assert_true(jittered->latency.a == 30.0 * MS_NS);
    assert_true(jittered->latency.b == 70.0 * MS_NS);
    const ScenarioFault *dist = fault_at(v, 3);
    assert_int_equal(dist->latency.kind, SIM_DIST_LOGNORMAL);
    const ScenarioFault *capped = fault_at(v, 4);
    assert_int_equal(capped->action, SCENARIO_ACTION_BANDWIDTH);
    assert_int_equal(capped->bandwidth_bytes_per_s, 1000000);
    const ScenarioFault *jump = fault_at(v, 5);
    assert_int_equal(jump->action, SCENARIO_ACTION_CLOCK);
    assert_int_equal(jump->clock_offset_ns, 2 * 3600 * S_NS);
    assert_int_equal(jump->duration_ns, 10 * S_NS);
    assert_int_equal(fault_at(v, 6)->clock_offset_ns, -30 * S_NS);
}

/* Each bad value of a window fault names the file, line, group and key. */
static void
test_scenario_window_fault_errors(void **state)
{
    (void)state;
    static const struct {
        const char *body; /* after WINDOW_HEAD: lines 6 and on */
        guint line;
        const char *key;
        const char *fragment;
    } cases[] = {
        {"action = loss\ntarget = broker:1\nrate = 1.5\n", 8, "rate", "'1.5' is not a loss rate"},
        {"action = loss\ntarget = broker:1\nrate = 100%\n", 8, "rate", "is a partition"},
        {"action = loss\ntarget = broker:1\nrate = 0\n", 8, "rate", "above 0 and below 1"},
        {"action = loss\ntarget = broker:1\nrate = 20 %\n", 8, "rate", "is not a loss rate"},
        {"action = loss\ntarget = broker:1\nrate = 0x0.1\n", 8, "rate", "is not a loss rate"},
        {"action = loss\ntarget = broker:1\nrate = -0.2\n", 8, "rate", "is not a loss rate"},
        {"action = loss\ntarget = broker:1\n", 4, "rate", "is required by action 'loss'"},
        {"action = loss\ntarget = broker:1\nrate = 0.2\nlatency = 5ms\n", 9, "latency",
         "does not apply to action 'loss'"},
        {"action = latency\ntarget = broker:1\nlatency = 50\n", 8, "latency", "unit"},
        {"action = latency\ntarget = broker:1\nlatency = 50ms\njitter = 60ms\n", 9, "jitter",
         "60ms is more than latency 50ms"},
        {"action = latency\ntarget = broker:1\nlatency = uniform:1ms..2ms\njitter = 1ms\n", 9,
         "jitter", "applies to a constant latency only"},
        {"action = latency\ntarget = broker:1\nlatency = 5ms\njitter = -1ms\n", 9, "jitter",
         ""},
        {"action = bandwidth\ntarget = broker:1\nbandwidth = 0\n", 8, "bandwidth",
         "'0' is not a bandwidth"},
        {"action = bandwidth\ntarget = broker:1\nbandwidth = fast\n", 8, "bandwidth",
         "is not a bandwidth"},
        {"action = bandwidth\ntarget = broker:1\nbandwidth = 1MB/h\n", 8, "bandwidth",
         "unknown unit"},
        {"action = bandwidth\ntarget = broker:1\nbandwidth = 1MB\ncount = 3\n", 9, "count",
         "does not apply to action 'bandwidth'"},
        {"action = clock\ntarget = broker:1\noffset = 30\n", 8, "offset", "is not a clock step"},
        {"action = clock\ntarget = broker:1\noffset = +0s\n", 8, "offset", "other than 0"},
        {"action = clock\ntarget = broker:1\noffset = ++3s\n", 8, "offset", "is not a clock step"},
        {"action = clock\ntarget = broker:1\noffset = +100001h\n", 8, "offset",
         "at most 100000h"},
        {"action = clock\ntarget = broker:1\noffset = 3 parsecs\n", 8, "offset",
         "is not a clock step"},
        {"action = clock\ntarget = broker:1\n", 4, "offset", "is required by action 'clock'"},
        {"action = clock\ntarget = broker:1\noffset = null\n", 8, "offset",
         "'null' is not a clock step"},
        {"action = loss\ntarget = broker:1\nrate = null\n", 8, "rate", "'null' is not a loss rate"},
        {"action = bandwidth\ntarget = broker:1\nbandwidth = null\n", 8, "bandwidth",
         "is not a bandwidth"},
        {"action = latency\ntarget = broker:1\nlatency = null\n", 8, "latency",
         "null is not a latency"},
        {"action = clock\ntarget = broker:1\noffset = 1s\nto = broker:2\n", 9, "to",
         "does not apply to action 'clock'"},
        {"action = clock\ntarget = *\noffset = 1s\n", 7, "target", "'*' cannot be used"},
    };
    g_autofree char *long_rate = g_strnfill(5000, '7');
    g_autofree char *long_body =
        g_strdup_printf("action = loss\ntarget = broker:1\nrate = %s%%\n", long_rate);
    g_autofree char *long_text = g_strconcat(WINDOW_HEAD, long_body, NULL);
    g_autoptr(GError) long_error = NULL;
    g_autoptr(Scenario) long_scenario = scenario_load_data(long_text, "t.ini", &long_error);
    assert_null(long_scenario);
    assert_true(strlen(long_error->message) < 400); /* the value is quoted cut short */
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *text = g_strconcat(WINDOW_HEAD, cases[i].body, NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
        if (scenario != NULL)
            fail_msg("case %u loaded, but it is bad:\n%s", i, text);
        assert_located_message(error->message, "t.ini", cases[i].line, "fault f", cases[i].key,
                               cases[i].fragment);
    }
}

/* ---- The INI grammar (scenario_ini.c) ---- */

typedef struct {
    const char *text;
    const char *description; /* [scenario] description as read */
    const char *topic;       /* NULL, or a [topic NAME] the file must have */
} IniGoodCase;

/* Each case is a whole file; "description" shows the value as read. */
static const IniGoodCase ini_good_cases[] = {
    /* The first '=' separates key and value; the value may hold more. */
    {"[scenario]\nduration = 1s\ndescription = a=b = c\n", "a=b = c", NULL},
    /* An empty value is a value. */
    {"[scenario]\nduration = 1s\ndescription =\n", "", NULL},
    /* ';' and '#' start a comment only at the start or after white space. */
    {"[scenario]\nduration = 1s\ndescription = one;two#three\n", "one;two#three", NULL},
    {"[scenario]\nduration = 1s\ndescription = one ;two\n", "one", NULL},
    {"[scenario]\nduration = 1s\ndescription = one\t# two\n", "one", NULL},
    {"; before any group\n# also\n   ; indented\n\n[scenario] ; after a group line\n"
     "duration = 1s\ndescription = x\n",
     "x", NULL},
    /* White space around keys, values and lines is trimmed, '\r' included. */
    {"[scenario]\r\n  duration\t=\t1s  \r\n\tdescription   =  spaced  out \t\r\n", "spaced  out",
     NULL},
    /* Runs of white space inside a group line are one space. */
    {"[ scenario ]\nduration = 1s\ndescription = spaced group\n[  topic \t a ]\n", "spaced group",
     "a"},
    /* No continuation lines: a trailing '\' is text and the next line stands alone. */
    {"[scenario]\ndescription = ends with \\\nduration = 1s\n", "ends with \\", NULL},
    /* No escapes: values are taken as written. */
    {"[scenario]\nduration = 1s\ndescription = a\\nb [c]\n", "a\\nb [c]", NULL},
    /* The same key in two groups is not a duplicate. */
    {"[scenario]\nduration = 1s\ndescription = d\n[topic a]\npartitions = 1\n"
     "[topic b]\npartitions = 1\n",
     "d", NULL},
    /* A file without a final newline. */
    {"[scenario]\nduration = 1s\ndescription = last", "last", NULL},
};

/* Good text reads as the grammar in scenario_ini.c says. */
static void
test_scenario_ini_grammar_reads(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(ini_good_cases); i++) {
        const IniGoodCase *c = &ini_good_cases[i];
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(c->text, "t.ini", &error);
        if (scenario == NULL)
            fail_msg("case %u: %s", i, error->message);
        assert_string_equal(scenario_description(scenario), c->description);
        g_autoptr(GPtrArray) runs = scenario_variants(scenario);
        if (c->topic != NULL)
            assert_non_null(scenario_variant_find_topic(runs->pdata[0], c->topic));
    }
}

typedef struct {
    const char *text;
    KsimScenarioErrorCode code;
    guint line;
    const char *group;
    const char *key;
    const char *fragment;
} IniBadCase;

static const IniBadCase ini_bad_cases[] = {
    /* A key or group written twice: GKeyFile would merge them silently. */
    {"[scenario]\nduration = 1s\nduration = 2s\n", KSIM_SCENARIO_ERROR_SYNTAX, 3, "scenario",
     "duration", "set twice (first at line 2)"},
    {"[scenario]\n  duration=1s\n; c\nduration   =   1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 4,
     "scenario", "duration", "set twice (first at line 2)"},
    {"[scenario]\nduration = 1s\n[cluster]\n[scenario]\n", KSIM_SCENARIO_ERROR_SYNTAX, 4,
     "scenario", NULL, "appears twice (first at line 1)"},
    {"[scenario]\nduration = 1s\n[topic  orders]\n[ topic\torders ]\n", KSIM_SCENARIO_ERROR_SYNTAX,
     4, "topic orders", NULL, "appears twice (first at line 3)"},
    /* A key before any group, after comments and blank lines. */
    {"duration = 1s\n[scenario]\n", KSIM_SCENARIO_ERROR_SYNTAX, 1, NULL, NULL,
     "'duration = 1s' comes before any [group] line"},
    {"; c\n\n# d\nx = 1\n", KSIM_SCENARIO_ERROR_SYNTAX, 4, NULL, NULL,
     "'x = 1' comes before any [group] line"},
    /* Line numbers count every line, CRLF ones too. */
    {"[scenario]\r\n\r\nduration = 1s\r\nduration = 2s\r\n", KSIM_SCENARIO_ERROR_SYNTAX, 4,
     "scenario", "duration", "set twice (first at line 3)"},
    /* No continuation lines: the line after a trailing '\' is a line of its own. */
    {"[scenario]\ndescription = a \\\n  b\nduration = 1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 3,
     "scenario", NULL, "expected 'key = value', found 'b'"},
    /* Malformed group lines. */
    {"[scenario\nduration = 1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 1, NULL, NULL,
     "'[scenario' is not a group line (expected '[group]')"},
    {"[scenario]\nduration = 1s\n[]\n", KSIM_SCENARIO_ERROR_SYNTAX, 3, NULL, NULL,
     "'[]' is not a valid group name"},
    {"[scenario]\nduration = 1s\n[a[b]\n", KSIM_SCENARIO_ERROR_SYNTAX, 3, NULL, NULL,
     "'[a[b]' is not a valid group name"},
    {"[scenario]\nduration = 1s\n[topic a\vb]\n", KSIM_SCENARIO_ERROR_SYNTAX, 3, NULL, NULL,
     "is not a valid group name"},
    /* Malformed key lines. */
    {"[scenario]\n= 1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 2, "scenario", NULL,
     "'= 1s' has no valid key before '='"},
    {"[scenario]\nduration[de] = 1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 2, "scenario", NULL,
     "has no valid key before '='"},
    /* '#' inside a word is text, so this key is misspelt rather than cut. */
    {"[scenario]\ndura#tion = 1s\n", KSIM_SCENARIO_ERROR_UNKNOWN, 2, "scenario", "dura#tion",
     "unknown key"},
    /* The whole text is read before groups are classified: the syntax error
     * on line 4 is reported, not the unknown group on line 1. */
    {"[topik a]\nx = 1\n[scenario]\nduration 1s\n", KSIM_SCENARIO_ERROR_SYNTAX, 4, "scenario", NULL,
     "expected 'key = value', found 'duration 1s'"},
    {"[topik a]\nx = 1\n[scenario]\nduration = 1s\n", KSIM_SCENARIO_ERROR_UNKNOWN, 1, "topik a",
     NULL, "unknown group 'topik'; did you mean 'topic'?"},
};

/* Bad text fails with the message, line, group and key the grammar gives. */
static void
test_scenario_ini_grammar_errors(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(ini_bad_cases); i++) {
        const IniBadCase *c = &ini_bad_cases[i];
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(c->text, "t.ini", &error);
        if (scenario != NULL)
            fail_msg("case %u loaded, but it is bad:\n%s", i, c->text);
        if (!g_error_matches(error, KSIM_SCENARIO_ERROR, (gint)c->code))
            fail_msg("case %u: error code %d, expected %d: %s", i, error->code, c->code,
                     error->message);
        assert_located_message(error->message, "t.ini", c->line, c->group, c->key, c->fragment);
    }
}

typedef struct {
    const char *assignment;
    const char *fragment; /* NULL: the assignment succeeds */
} SetCase;

static const SetCase set_cases[] = {
    {"acks=1", NULL},
    {"scenario:duration=30s", NULL},
    {"cluster:brokers=5", NULL},
    {"topic orders:partitions = 6", NULL},
    {"network.latency=const:5ms", NULL},
    {"producer writer:workload.rate=50", NULL},
    {"fault cut:duration=1s", NULL},
    {"quiet=0s", NULL},
    {"acks", "--set acks: expected KEY=VALUE"},
    {"ackz=1", "--set ackz=1: ackz: unknown key; did you mean 'acks'?"},
    {"acks=2", "--set acks=2: acks: '2' is not allowed; expected one of"},
    {"topic order:partitions=2", "no group [topic order] in"},
    {"scenario:duration=3s", "at: 5s is past the end of the scenario (duration 3s)"},
    {"cluster:brokers=2", "replication factor 3 of topic orders is above the number of brokers "
                          "(2)"},
    {"producer writer:acks=0", NULL}, /* the same group as [vary] acks: narrows */
    {"vary:acks=1", "[vary] cannot be changed this way"},
    {"max.poll.records=5", "it is a consumer key"},
};

/* --set overrides a key (bare or GROUP:key), is validated like the file,
 * and leaves the scenario unchanged when it fails. */
static void
test_scenario_set_overrides(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(set_cases); i++) {
        const SetCase *c = &set_cases[i];
        g_autoptr(Scenario) scenario = load_fixture("good-vary.ini");
        g_autoptr(GError) error = NULL;
        gboolean ok = scenario_apply_set(scenario, c->assignment, &error);
        if (ok != (c->fragment == NULL))
            fail_msg("--set %s: %s", c->assignment, ok ? "succeeded" : error->message);
        scenario_check_invariants(scenario);
        if (ok) {
            assert_int_equal(scenario_overrides(scenario)->len, 1);
            continue;
        }
        g_autofree char *named = g_strdup_printf("--set %s", c->assignment);
        assert_string_contains(error->message, "good-vary.ini");
        assert_string_contains(error->message, named);
        assert_string_contains(error->message, c->fragment);
        assert_int_equal(scenario_variant_count(scenario), 12);
        assert_int_equal(scenario_overrides(scenario)->len, 0);
    }
}

/* The values --set writes reach every run; a varied key is narrowed. */
static void
test_scenario_set_values_reach_runs(void **state)
{
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("good-vary.ini");
    assert_true(scenario_apply_set(scenario, "acks=1", NULL));
    assert_true(scenario_apply_set(scenario, "scenario:duration=30s", NULL));
    assert_true(scenario_apply_set(scenario, "topic orders:partitions=6", NULL));
    assert_true(scenario_apply_set(scenario, "seed=42", NULL));
    assert_true(scenario_apply_set(scenario, "linger.ms=7", NULL));
    assert_int_equal(scenario_variant_count(scenario), 4);
    assert_int_equal(scenario_seed(scenario), 42);
    assert_int_equal(scenario_overrides(scenario)->len, 5);
    assert_string_equal(g_ptr_array_index(scenario_overrides(scenario), 0), "acks=1");
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    for (guint i = 0; i < runs->len; i++) {
        const ScenarioVariant *v = runs->pdata[i];
        assert_true(g_str_has_prefix(scenario_variant_label(v), "acks=1,"));
        assert_int_equal(scenario_variant_duration_ns(v), 30 * S_NS);
        assert_int_equal(scenario_variant_find_topic(v, "orders")->partitions, 6);
        const ScenarioProducer *writer = producer_at(v, 0);
        assert_string_equal(kconfig_get_string(writer->config, "acks"), "1");
        assert_int_equal(kconfig_get_duration_ns(writer->config, "linger.ms"), 7 * MS_NS);
        assert_int_equal(writer->workload.stop_ns, 30 * S_NS);
    }
    /* The expectation on acks=all applies to no run now; on acks!=0, to all. */
    const GPtrArray *expects = scenario_expects(scenario);
    const ScenarioExpect *safe = expects->pdata[0];
    const ScenarioExpect *not_zero = expects->pdata[2];
    for (guint i = 0; i < runs->len; i++) {
        assert_false(scenario_expect_applies(safe, runs->pdata[i]));
        assert_true(scenario_expect_applies(not_zero, runs->pdata[i]));
    }
}

/* A --set that reaches part of what a [vary] key varies is refused, since
 * [vary] would overwrite it in some groups but not others. */
static void
test_scenario_set_partial_overlap_refused(void **state)
{
    static const char text[] = "[scenario]\nduration = 10s\n[topic t]\n"
                               "[producer a]\n[producer b]\n[vary]\nacks = 0, all\n";
    (void)state;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "two.ini", NULL);
    assert_non_null(scenario);
    g_autoptr(GError) error = NULL;
    assert_false(scenario_apply_set(scenario, "producer a:acks=1", &error));
    assert_string_contains(error->message, "two.ini: --set producer a:acks=1: producer a:acks: "
                                           "overlaps [vary] acks (line 7); --set acks=VALUE");
    assert_true(scenario_apply_set(scenario, "acks=1", NULL));
    assert_int_equal(scenario_variant_count(scenario), 1);
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    assert_string_equal(scenario_variant_label(runs->pdata[0]), "acks=1");
    for (guint i = 0; i < 2; i++) {
        const ScenarioProducer *p = producer_at(runs->pdata[0], i);
        assert_string_equal(kconfig_get_string(p->config, "acks"), "1");
    }
}

/* [vary] runs are the cross product in file order, the first key slowest,
 * each with its label, settings and values. */
static void
test_scenario_vary_cross_product(void **state)
{
    static const char *const acks[] = {"0", "1", "all"};
    static const char *const latency[] = {"lognormal:500us,0.3", "const:2ms"};
    static const gint64 at_ns[] = {5 * S_NS, 10 * S_NS};
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("good-vary.ini");
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    assert_int_equal(runs->len, 12);
    for (guint i = 0; i < runs->len; i++) {
        const ScenarioVariant *v = runs->pdata[i];
        guint a = i / 4, l = (i / 2) % 2, t = i % 2;
        g_autofree char *label = g_strdup_printf("acks=%s,network.latency=%s,fault cut:at=%s",
                                                 acks[a], latency[l], t ? "10s" : "5s");
        assert_string_equal(scenario_variant_label(v), label);
        const GPtrArray *settings = scenario_variant_settings(v);
        assert_int_equal(settings->len, 3);
        const ScenarioSetting *first = settings->pdata[0];
        const ScenarioSetting *third = settings->pdata[2];
        assert_string_equal(first->key, "acks");
        assert_string_equal(first->value, acks[a]);
        assert_string_equal(third->key, "fault cut:at");
        const ScenarioProducer *writer = producer_at(v, 0);
        assert_string_equal(kconfig_get_value(writer->config, "acks"), acks[a]);
        assert_int_equal(scenario_variant_cluster(v)->network_latency.kind,
                         l == 0 ? SIM_DIST_LOGNORMAL : SIM_DIST_CONSTANT);
        assert_int_equal(fault_at(v, 0)->time_ns, at_ns[t]);
        /* Every run has the same seed: runs differ only in what is varied. */
        assert_int_equal(scenario_variant_seed(v), 1);
    }
}

/* Expectations apply to the runs their `when` conditions select. */
static void
test_scenario_expect_conditions(void **state)
{
    static const struct {
        const char *name;
        const char *metric;
        ScenarioOp op;
        double value;
        guint conditions;
        guint applies; /* bit i: applies to run i */
    } cases[] = {
        {"safe", "lost_write", SCENARIO_OP_EQ, 0, 1, 0xf00},
        {"fast-and-loose", "produce.acked", SCENARIO_OP_GE, 1, 2, 0x00c},
        {"not-zero", "duplicate", SCENARIO_OP_LE, 3, 1, 0xff0},
        {"always", "invariant_violations", SCENARIO_OP_EQ, 0, 0, 0xfff},
    };
    (void)state;
    g_autoptr(Scenario) scenario = load_fixture("good-vary.ini");
    g_autoptr(GPtrArray) runs = scenario_variants(scenario);
    const GPtrArray *expects = scenario_expects(scenario);
    assert_int_equal(expects->len, G_N_ELEMENTS(cases));
    for (guint i = 0; i < expects->len; i++) {
        const ScenarioExpect *expect = expects->pdata[i];
        assert_string_equal(expect->name, cases[i].name);
        assert_string_equal(expect->metric, cases[i].metric);
        assert_int_equal(expect->op, cases[i].op);
        assert_true(expect->value == cases[i].value);
        assert_int_equal(expect->when->len, cases[i].conditions);
        for (guint r = 0; r < runs->len; r++) {
            gboolean expected = (cases[i].applies >> r) & 1u;
            if (scenario_expect_applies(expect, runs->pdata[r]) != expected)
                fail_msg("%s on run %u (%s): expected %d", expect->name, r,
                         scenario_variant_label(runs->pdata[r]), expected);
        }
    }
    const ScenarioExpect *not_zero = expects->pdata[2];
    const ScenarioCondition *condition = not_zero->when->pdata[0];
    assert_string_equal(condition->key, "acks");
    assert_true(condition->negated);
    assert_true(scenario_expect_holds(not_zero, 3));
    assert_false(scenario_expect_holds(not_zero, 4));
    assert_true(scenario_expect_holds(expects->pdata[1], 1));
    assert_false(scenario_expect_holds(expects->pdata[1], 0));
    assert_string_equal(scenario_op_symbol(SCENARIO_OP_GE), ">=");
}

/* TRUE when [expect] takes `metric`; else the message, in `why`. */
static gboolean
expect_accepts(const char *metric, char **why)
{
    g_autofree char *text =
        g_strdup_printf("[scenario]\nduration = 1s\n[expect]\nx = %s >= 0\n", metric);
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario = scenario_load_data(text, "t.ini", &error);
    if (scenario == NULL) {
        *why = g_strdup(error->message);
        return FALSE;
    }
    const ScenarioExpect *expect = scenario_expects(scenario)->pdata[0];
    assert_string_equal(expect->metric, metric);
    return TRUE;
}

/* [expect] accepts every metric of the table and every anomaly the three
 * checkers count (failed_but_present was once refused here though ksim run
 * could evaluate it), and refuses a name the table lacks. */
static void
test_scenario_expect_accepts_every_metric(void **state)
{
    (void)state;
    metrics_check_invariants();
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < metrics_count(); i++)
        g_ptr_array_add(names, (gpointer)metrics_name(metrics_at(i)));
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        g_ptr_array_add(names, (gpointer)checker_anomaly_name(a));
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        g_ptr_array_add(names, (gpointer)checker_consumer_anomaly_name(a));
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        g_ptr_array_add(names, (gpointer)checker_txn_anomaly_name(a));
    for (guint i = 0; i < names->len; i++) {
        g_autofree char *why = NULL;
        if (!expect_accepts(names->pdata[i], &why))
            fail_msg("metric %s refused: %s", (const char *)names->pdata[i], why);
    }
    g_autofree char *why = NULL;
    assert_false(expect_accepts("failed_but_presnt", &why));
    assert_located_message(why, "t.ini", 4, "expect", "x",
                           "unknown metric 'failed_but_presnt'; did you mean "
                           "'failed_but_present'?");
}

/* The SHA-256 is over the file's bytes; text in memory has no path. */
static void
test_scenario_sha256_and_names(void **state)
{
    (void)state;
    g_autofree char *path = fixture_path("good-minimal.ini");
    g_autofree char *text = NULL;
    gsize length = 0;
    assert_true(g_file_get_contents(path, &text, &length, NULL));
    g_autofree char *expected =
        g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
    g_autoptr(Scenario) from_file = load_fixture("good-minimal.ini");
    assert_string_equal(scenario_sha256(from_file), expected);
    assert_string_equal(scenario_path(from_file), path);
    g_autoptr(Scenario) from_text = scenario_load_data(text, "dir/other.ini", NULL);
    assert_non_null(from_text);
    assert_string_equal(scenario_sha256(from_text), expected);
    assert_null(scenario_path(from_text));
    assert_string_equal(scenario_name(from_text), "other");
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) missing = scenario_load("/nonexistent/x.ini", &error);
    assert_null(missing);
    assert_true(g_error_matches(error, KSIM_SCENARIO_ERROR, KSIM_SCENARIO_ERROR_IO));
    assert_string_contains(error->message, "/nonexistent/x.ini: cannot read");
}

/* One random edit: delete a span, insert a troublesome token, or repeat a line. */
static void
mutate(GString *text, GRand *rand)
{
    static const char *const tokens[] = {
        "=",
        "[",
        "]",
        ":",
        ";",
        "#",
        ",",
        "|",
        "(",
        ")",
        "\n",
        " ",
        "0",
        "9",
        "-1",
        "x",
        "ms",
        "..",
        "\t",
        "99999999999999999999",
        "leader(",
        "broker:",
        "when ",
        "[vary]\n",
        "\xff",
        "[fault z]\nat=1s\naction=crash\n",
        "acks = 0, 1\n",
        "producer:",
        "1e308",
    };
    guint position = (guint)g_rand_int_range(rand, 0, (gint32)text->len + 1);
    switch (g_rand_int_range(rand, 0, 4)) {
    case 0: {
        guint span = (guint)g_rand_int_range(rand, 1, 20);
        g_string_erase(text, position, MIN(span, text->len - MIN(position, text->len)));
        break;
    }
    case 1:
        g_string_insert(text, position, tokens[g_rand_int_range(rand, 0, G_N_ELEMENTS(tokens))]);
        break;
    case 2: {
        /* Blank the rest of a line after its '=': an empty value. */
        const char *equals = strchr(text->str + MIN(position, text->len), '=');
        if (equals == NULL)
            break;
        gsize from = (gsize)(equals - text->str) + 1;
        const char *end = strchr(equals, '\n');
        gsize to = end != NULL ? (gsize)(end - text->str) : text->len;
        g_string_erase(text, (gssize)from, (gssize)(to - from));
        break;
    }
    default: {
        const char *start = text->str + position;
        while (start > text->str && start[-1] != '\n')
            start--;
        const char *end = strchr(start, '\n');
        gsize line_length = end != NULL ? (gsize)(end - start + 1) : strlen(start);
        g_autofree char *line = g_strndup(start, line_length);
        g_string_insert(text, position, line);
        break;
    }
    }
}

static const char *const good_files[] = {"example.ini", "good-vary.ini", "good-comments-crlf.ini",
                                         "good-consumer-group.ini", "good-defaults.ini"};

/* Values that have broken parsers before: empty, null, signs, huge numbers,
 * non-finite numbers, lone separators and half targets. */
static const char *const nasty_values[] = {
    "",
    "null",
    "0",
    "-1",
    "99999999999999999999",
    "1e308",
    "nan",
    "inf",
    "x",
    ":",
    ",",
    "|",
    "..",
    "leader(",
    "broker:",
    "()",
    "1,2 | 3",
    "0s",
    "-5s",
    "const:",
    "uniform:1s..",
    "zipf:",
    "a=b",
    "when",
    "producer:",
    "exp:0s",
};

/* Writes `value` in place of the value on line `line` (0-based) of `text`. */
static char *
replace_value(const char *text, guint line, const char *value, gboolean *has_value)
{
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    *has_value = FALSE;
    if (lines[line] == NULL || lines[line][0] == '[' || lines[line][0] == '#' ||
        lines[line][0] == ';')
        return NULL;
    char *equals = strchr(lines[line], '=');
    if (equals == NULL)
        return NULL;
    *has_value = TRUE;
    equals[1] = '\0';
    char *replaced = g_strconcat(lines[line], " ", value, NULL);
    g_free(lines[line]);
    lines[line] = replaced;
    return g_strjoinv("\n", lines);
}

/* Every key of every good file, given each nasty value, loads or fails with
 * a located message: never a crash. */
static void
test_scenario_nasty_values_never_crash(void **state)
{
    (void)state;
    guint tried = 0;
    for (guint f = 0; f < G_N_ELEMENTS(good_files); f++) {
        g_autofree char *path = fixture_path(good_files[f]);
        g_autofree char *text = NULL;
        assert_true(g_file_get_contents(path, &text, NULL, NULL));
        g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
        guint n_lines = g_strv_length(lines);
        for (guint line = 0; line < n_lines; line++) {
            for (guint v = 0; v < G_N_ELEMENTS(nasty_values); v++) {
                gboolean has_value = FALSE;
                g_autofree char *mutant = replace_value(text, line, nasty_values[v], &has_value);
                if (!has_value)
                    break;
                tried++;
                g_autoptr(GError) error = NULL;
                g_autoptr(Scenario) scenario = scenario_load_data(mutant, "nasty.ini", &error);
                if (scenario == NULL) {
                    assert_true(g_str_has_prefix(error->message, "nasty.ini"));
                    continue;
                }
                scenario_check_invariants(scenario);
                g_autoptr(GPtrArray) runs = scenario_variants(scenario);
                assert_int_equal(runs->len, scenario_variant_count(scenario));
            }
        }
    }
    assert_true(tried > 1000);
}

/* Thousands of mutated good files never crash: each loads into a valid
 * scenario or fails with a message that names the file. */
static void
test_scenario_mutations_never_crash(void **state)
{
    (void)state;
    g_autoptr(GPtrArray) texts = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < G_N_ELEMENTS(good_files); i++) {
        g_autofree char *path = fixture_path(good_files[i]);
        char *original = NULL;
        assert_true(g_file_get_contents(path, &original, NULL, NULL));
        g_ptr_array_add(texts, original);
    }
    GRand *rand = g_rand_new_with_seed(20240601);
    guint loaded = 0;
    for (guint round = 0; round < MUTATION_ROUNDS; round++) {
        g_autoptr(GString) text = g_string_new(texts->pdata[round % texts->len]);
        guint edits = (guint)g_rand_int_range(rand, 1, 4);
        for (guint e = 0; e < edits; e++)
            mutate(text, rand);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(text->str, "mutant.ini", &error);
        if (scenario == NULL) {
            assert_non_null(error);
            assert_true(g_str_has_prefix(error->message, "mutant.ini"));
            continue;
        }
        loaded++;
        scenario_check_invariants(scenario);
        g_autoptr(GPtrArray) runs = scenario_variants(scenario);
        assert_int_equal(runs->len, scenario_variant_count(scenario));
        g_autoptr(GError) set_error = NULL;
        (void)scenario_apply_set(scenario, "acks=1", &set_error);
        scenario_check_invariants(scenario);
    }
    g_rand_free(rand);
    /* Some edits (inside comments, say) leave a valid file. */
    assert_true(loaded > 0);
    assert_true(loaded < MUTATION_ROUNDS);
}

/* controller.quorum.voters parses as Kafka's QuorumConfig does: each entry
 * {id}@{host}:{port}; malformed entries, repeated ids and empty lists are
 * refused with Kafka's words. */
static void
test_scenario_quorum_voters_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        guint n;        /* 0: refused */
        gint32 ids[3];  /* in the order written */
        const char *why;
    } cases[] = {
        {"1@broker-1:9093,2@broker-2:9093,3@broker-3:9093", 3, {1, 2, 3}, NULL},
        {"3001@c1.example.com:9093, 3000@[::1]:9093", 2, {3001, 3000}, NULL},
        {"0@localhost:0", 1, {0}, NULL},
        {"1@broker-1", 0, {0}, "failed to parse host name from entry '1@broker-1'"},
        {"1@broker-1:x", 0, {0}, "failed to parse host port from entry '1@broker-1:x'"},
        {"1@broker-1:70000", 0, {0}, "failed to parse host port"},
        {"1@:9093", 0, {0}, "failed to parse host name"},
        {"one@broker-1:9093", 0, {0}, "failed to parse voter ID as an integer from 'one'"},
        {"-1@broker-1:9093", 0, {0}, "failed to parse voter ID as an integer from '-1'"},
        {"broker-1:9093", 0, {0}, "each entry should be in the form `{id}@{host}:{port}`"},
        {"1@a@b:1", 0, {0}, "each entry should be in the form"},
        {"1@a:1,1@b:2", 0, {0}, "names voter 1 twice"},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_auto(GStrv) entries = g_strsplit(cases[c].text, ",", -1);
        for (guint i = 0; entries[i] != NULL; i++)
            g_strstrip(entries[i]);
        gint32 ids[SCENARIO_VOTERS_MAX];
        guint n = 99;
        g_autofree char *why = NULL;
        gboolean ok = scenario_parse_quorum_voters((const char *const *)entries, ids, &n, &why);
        if (cases[c].n == 0) {
            if (ok)
                fail_msg("'%s' accepted", cases[c].text);
            assert_string_contains(why, cases[c].why);
            continue;
        }
        if (!ok)
            fail_msg("'%s': %s", cases[c].text, why);
        assert_int_equal(n, cases[c].n);
        for (guint i = 0; i < n; i++)
            assert_int_equal(ids[i], cases[c].ids[i]);
    }
}

/* [cluster]'s KRaft roles resolve into the voters a run builds: dedicated
 * controllers 3000 up by default, combined voters the first `controllers`
 * brokers (every broker when there are fewer), or the ones
 * controller.quorum.voters names, in node.id order; a `when` condition may
 * name a value with a comma. */
static void
test_scenario_kraft_roles(void **state)
{
    (void)state;
    static const struct {
        const char *cluster;
        gboolean combined;
        guint n;
        gint32 ids[3];
    } cases[] = {
        {"", FALSE, 3, {3000, 3001, 3002}},
        {"controllers = 1\n", FALSE, 1, {3000}},
        {"process.roles = broker\n", FALSE, 3, {3000, 3001, 3002}},
        {"process.roles = broker,controller\n", TRUE, 2, {1, 2}},
        {"process.roles = controller, broker\ncontrollers = 1\n", TRUE, 1, {1}},
        {"process.roles = broker,controller\ncontroller.quorum.voters = 2@b2:9093, 1@b1:9093\n",
         TRUE, 2, {1, 2}},
        {"controller.quorum.voters = 3107@c7:9093,3105@c5:9093,3106@c6:9093\ncontrollers = 3\n",
         FALSE, 3, {3105, 3106, 3107}},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autofree char *text = g_strdup_printf(
            "[scenario]\nduration = 10s\n[cluster]\nbrokers = 2\nmetadata.mode = kraft\n%s"
            "[topic t]\npartitions = 1\nreplication.factor = 2\n[producer p]\ntopic = t\n",
            cases[c].cluster);
        g_autoptr(GError) error = NULL;
        g_autoptr(Scenario) scenario = scenario_load_data(text, "roles.ini", &error);
        if (scenario == NULL)
            fail_msg("case %u: %s", c, error->message);
        g_autoptr(GPtrArray) variants = scenario_variants(scenario);
        const ScenarioCluster *cluster = scenario_variant_cluster(variants->pdata[0]);
        assert_int_equal(cluster->combined, cases[c].combined);
        assert_int_equal(cluster->n_voters, cases[c].n);
        for (guint i = 0; i < cases[c].n; i++)
            assert_int_equal(cluster->voter_ids[i], cases[c].ids[i]);
    }
    /* ZooKeeper mode has no voters. */
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) zk = scenario_load_data(
        "[scenario]\nduration = 10s\n[cluster]\nbrokers = 1\n[topic t]\npartitions = 1\n"
        "[producer p]\ntopic = t\n[vary]\nmetadata.mode = zookeeper, kraft\n"
        "process.roles = broker | broker,controller\n[expect]\n"
        "a = lost_write == 0 when process.roles=broker,controller, metadata.mode=kraft\n",
        "roles.ini", &error);
    assert_null(zk);
    assert_string_contains(error->message, "process.roles is KRaft's");
    g_clear_error(&error);
    g_autoptr(Scenario) varied = scenario_load_data(
        "[scenario]\nduration = 10s\n[cluster]\nbrokers = 2\nmetadata.mode = kraft\n"
        "[topic t]\npartitions = 1\n[producer p]\ntopic = t\n[vary]\n"
        "process.roles = broker | broker,controller\ncontrollers = 1, 2\n[expect]\n"
        "a = lost_write == 0 when process.roles=broker,controller, controllers=1\n",
        "roles.ini", &error);
    if (varied == NULL)
        fail_msg("%s", error->message);
    g_autoptr(GPtrArray) variants = scenario_variants(varied);
    assert_int_equal(variants->len, 4);
    const ScenarioExpect *expect = g_ptr_array_index(scenario_expects(varied), 0);
    for (guint i = 0; i < variants->len; i++)
        assert_int_equal(scenario_expect_applies(expect, variants->pdata[i]), i == 2);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scenario_example_parses),
        cmocka_unit_test(test_scenario_example_faults),
        cmocka_unit_test(test_scenario_random_swarm),
        cmocka_unit_test(test_scenario_good_fixtures),
        cmocka_unit_test(test_scenario_defaults_are_filled),
        cmocka_unit_test(test_scenario_comments_and_spacing),
        cmocka_unit_test(test_scenario_consumer_groups),
        cmocka_unit_test(test_scenario_cooperative_sticky_accepted),
        cmocka_unit_test(test_scenario_bad_fixtures),
        cmocka_unit_test(test_scenario_bad_fixtures_all_listed),
        cmocka_unit_test(test_scenario_inline_bad_text),
        cmocka_unit_test(test_scenario_brokers_racks_and_targets),
        cmocka_unit_test(test_scenario_window_faults),
        cmocka_unit_test(test_scenario_window_fault_errors),
        cmocka_unit_test(test_scenario_ini_grammar_reads),
        cmocka_unit_test(test_scenario_ini_grammar_errors),
        cmocka_unit_test(test_scenario_internal_topic_targets),
        cmocka_unit_test(test_scenario_set_overrides),
        cmocka_unit_test(test_scenario_set_values_reach_runs),
        cmocka_unit_test(test_scenario_set_partial_overlap_refused),
        cmocka_unit_test(test_scenario_vary_cross_product),
        cmocka_unit_test(test_scenario_expect_conditions),
        cmocka_unit_test(test_scenario_expect_accepts_every_metric),
        cmocka_unit_test(test_scenario_sha256_and_names),
        cmocka_unit_test(test_scenario_consumer_workload_and_targets),
        cmocka_unit_test(test_scenario_nasty_values_never_crash),
        cmocka_unit_test(test_scenario_mutations_never_crash),
        cmocka_unit_test(test_scenario_quorum_voters_parse),
        cmocka_unit_test(test_scenario_kraft_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
