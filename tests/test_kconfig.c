/* Tests of models/kconfig: the registry's keys and Kafka defaults, typed
 * getters, topic-over-broker layering and fallbacks, value validation, and
 * the "did you mean" suggestions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "kconfig.h"

#define MS_NS G_GINT64_CONSTANT(1000000)
#define S_NS G_GINT64_CONSTANT(1000000000)
#define HOUR_NS (3600 * S_NS)

/* cmocka 1.1.5 has no assert_double_equal. */
#define assert_string_contains(haystack, needle)                                                   \
    do {                                                                                           \
        const char *haystack_ = (haystack);                                                        \
        if (strstr(haystack_, (needle)) == NULL)                                                   \
            fail_msg("'%s' does not contain '%s'", haystack_, (needle));                           \
    } while (0)

typedef struct {
    const char *name;
    KConfigScope scope;
    const char *default_value; /* NULL: Kafka's null */
} DefaultCase;

/* The keys the brief lists, with Apache Kafka 3.x's documented defaults. */
static const DefaultCase default_cases[] = {
    {"num.partitions", KCONFIG_SCOPE_BROKER, "1"},
    {"default.replication.factor", KCONFIG_SCOPE_BROKER, "1"},
    {"min.insync.replicas", KCONFIG_SCOPE_BROKER, "1"},
    {"unclean.leader.election.enable", KCONFIG_SCOPE_BROKER, "false"},
    {"replica.lag.time.max.ms", KCONFIG_SCOPE_BROKER, "30000"},
    {"replica.fetch.wait.max.ms", KCONFIG_SCOPE_BROKER, "500"},
    {"replica.fetch.min.bytes", KCONFIG_SCOPE_BROKER, "1"},
    {"replica.fetch.max.bytes", KCONFIG_SCOPE_BROKER, "1048576"},
    {"replica.fetch.backoff.ms", KCONFIG_SCOPE_BROKER, "1000"},
    {"replica.socket.timeout.ms", KCONFIG_SCOPE_BROKER, "30000"},
    {"max.incremental.fetch.session.cache.slots", KCONFIG_SCOPE_BROKER, "1000"},
    {"replica.high.watermark.checkpoint.interval.ms", KCONFIG_SCOPE_BROKER, "5000"},
    {"zookeeper.session.timeout.ms", KCONFIG_SCOPE_BROKER, "18000"},
    {"zookeeper.connection.timeout.ms", KCONFIG_SCOPE_BROKER, NULL},
    {"controller.socket.timeout.ms", KCONFIG_SCOPE_BROKER, "30000"},
    {"log.segment.bytes", KCONFIG_SCOPE_BROKER, "1073741824"},
    {"log.roll.ms", KCONFIG_SCOPE_BROKER, NULL},
    {"log.roll.hours", KCONFIG_SCOPE_BROKER, "168"},
    {"log.index.interval.bytes", KCONFIG_SCOPE_BROKER, "4096"},
    {"log.retention.ms", KCONFIG_SCOPE_BROKER, NULL},
    {"log.retention.hours", KCONFIG_SCOPE_BROKER, "168"},
    {"log.retention.bytes", KCONFIG_SCOPE_BROKER, "-1"},
    {"log.retention.check.interval.ms", KCONFIG_SCOPE_BROKER, "300000"},
    {"log.flush.offset.checkpoint.interval.ms", KCONFIG_SCOPE_BROKER, "60000"},
    {"log.flush.interval.messages", KCONFIG_SCOPE_BROKER, "9223372036854775807"},
    {"log.flush.interval.ms", KCONFIG_SCOPE_BROKER, NULL},
    {"log.cleanup.policy", KCONFIG_SCOPE_BROKER, "delete"},
    {"offsets.topic.num.partitions", KCONFIG_SCOPE_BROKER, "50"},
    {"offsets.topic.replication.factor", KCONFIG_SCOPE_BROKER, "3"},
    {"offsets.retention.minutes", KCONFIG_SCOPE_BROKER, "10080"},
    {"transaction.state.log.num.partitions", KCONFIG_SCOPE_BROKER, "50"},
    {"transaction.state.log.replication.factor", KCONFIG_SCOPE_BROKER, "3"},
    {"transaction.state.log.min.isr", KCONFIG_SCOPE_BROKER, "2"},
    {"group.initial.rebalance.delay.ms", KCONFIG_SCOPE_BROKER, "3000"},
    {"group.min.session.timeout.ms", KCONFIG_SCOPE_BROKER, "6000"},
    {"group.max.session.timeout.ms", KCONFIG_SCOPE_BROKER, "1800000"},
    {"controlled.shutdown.enable", KCONFIG_SCOPE_BROKER, "true"},
    {"auto.leader.rebalance.enable", KCONFIG_SCOPE_BROKER, "true"},
    {"leader.imbalance.check.interval.seconds", KCONFIG_SCOPE_BROKER, "300"},
    {"message.max.bytes", KCONFIG_SCOPE_BROKER, "1048588"},
    {"ksim.truncation.mode", KCONFIG_SCOPE_BROKER, "hw"},
    {"acks", KCONFIG_SCOPE_PRODUCER, "all"},
    {"enable.idempotence", KCONFIG_SCOPE_PRODUCER, "true"},
    {"retries", KCONFIG_SCOPE_PRODUCER, "2147483647"},
    {"batch.size", KCONFIG_SCOPE_PRODUCER, "16384"},
    {"linger.ms", KCONFIG_SCOPE_PRODUCER, "0"},
    {"buffer.memory", KCONFIG_SCOPE_PRODUCER, "33554432"},
    {"max.block.ms", KCONFIG_SCOPE_PRODUCER, "60000"},
    {"max.in.flight.requests.per.connection", KCONFIG_SCOPE_PRODUCER, "5"},
    {"request.timeout.ms", KCONFIG_SCOPE_PRODUCER, "30000"},
    {"retry.backoff.ms", KCONFIG_SCOPE_PRODUCER, "100"},
    {"delivery.timeout.ms", KCONFIG_SCOPE_PRODUCER, "120000"},
    {"metadata.max.age.ms", KCONFIG_SCOPE_PRODUCER, "300000"},
    {"max.request.size", KCONFIG_SCOPE_PRODUCER, "1048576"},
    {"reconnect.backoff.ms", KCONFIG_SCOPE_PRODUCER, "50"},
    {"reconnect.backoff.max.ms", KCONFIG_SCOPE_PRODUCER, "1000"},
    {"partitioner.class", KCONFIG_SCOPE_PRODUCER, NULL},
    {"transactional.id", KCONFIG_SCOPE_PRODUCER, NULL},
    {"transaction.timeout.ms", KCONFIG_SCOPE_PRODUCER, "60000"},
    {"compression.type", KCONFIG_SCOPE_PRODUCER, "none"},
    {"group.id", KCONFIG_SCOPE_CONSUMER, NULL},
    {"auto.offset.reset", KCONFIG_SCOPE_CONSUMER, "latest"},
    {"enable.auto.commit", KCONFIG_SCOPE_CONSUMER, "true"},
    {"auto.commit.interval.ms", KCONFIG_SCOPE_CONSUMER, "5000"},
    {"fetch.min.bytes", KCONFIG_SCOPE_CONSUMER, "1"},
    {"fetch.max.wait.ms", KCONFIG_SCOPE_CONSUMER, "500"},
    {"fetch.max.bytes", KCONFIG_SCOPE_CONSUMER, "52428800"},
    {"max.partition.fetch.bytes", KCONFIG_SCOPE_CONSUMER, "1048576"},
    {"max.poll.records", KCONFIG_SCOPE_CONSUMER, "500"},
    {"max.poll.interval.ms", KCONFIG_SCOPE_CONSUMER, "300000"},
    {"session.timeout.ms", KCONFIG_SCOPE_CONSUMER, "45000"},
    {"heartbeat.interval.ms", KCONFIG_SCOPE_CONSUMER, "3000"},
    {"partition.assignment.strategy", KCONFIG_SCOPE_CONSUMER, "range"},
    {"isolation.level", KCONFIG_SCOPE_CONSUMER, "read_uncommitted"},
    {"request.timeout.ms", KCONFIG_SCOPE_CONSUMER, "30000"},
};

/* Every key the brief lists exists in its scope with Kafka's default. */
static void
test_kconfig_registry_has_kafka_defaults(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(default_cases); i++) {
        const DefaultCase *c = &default_cases[i];
        const KConfigKey *key = kconfig_lookup(c->name, c->scope);
        if (key == NULL)
            fail_msg("%s is missing from scope %s", c->name, kconfig_scope_name(c->scope));
        assert_int_equal(key->scope, c->scope);
        if (c->default_value == NULL && key->default_value != NULL)
            fail_msg("%s: default '%s', expected null", c->name, key->default_value);
        if (c->default_value != NULL)
            assert_string_equal(key->default_value, c->default_value);
        assert_non_null(key->doc);
    }
}

/* Each topic key overrides the broker key Kafka pairs it with. */
static void
test_kconfig_topic_keys_override_broker_keys(void **state)
{
    static const char *const pairs[][2] = {
        {"min.insync.replicas", "min.insync.replicas"},
        {"unclean.leader.election.enable", "unclean.leader.election.enable"},
        {"retention.ms", "log.retention.ms"},
        {"retention.bytes", "log.retention.bytes"},
        {"segment.bytes", "log.segment.bytes"},
        {"segment.ms", "log.roll.ms"},
        {"flush.messages", "log.flush.interval.messages"},
        {"flush.ms", "log.flush.interval.ms"},
        {"index.interval.bytes", "log.index.interval.bytes"},
        {"cleanup.policy", "log.cleanup.policy"},
        {"partitions", "num.partitions"},
        {"replication.factor", "default.replication.factor"},
    };
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(pairs); i++) {
        const KConfigKey *topic = kconfig_lookup(pairs[i][0], KCONFIG_SCOPE_TOPIC);
        assert_non_null(topic);
        assert_non_null(topic->overrides);
        assert_string_equal(topic->overrides, pairs[i][1]);
    }
}

/* The registry is self-consistent: defaults and choices pass their own
 * checks, overrides and fallbacks name existing keys of the same type. */
static void
test_kconfig_registry_is_consistent(void **state)
{
    (void)state;
    guint n_keys = 0;
    const KConfigKey *keys = kconfig_registry(&n_keys);
    assert_true(n_keys > 100);
    for (guint i = 0; i < n_keys; i++) {
        const KConfigKey *key = &keys[i];
        if (key->default_value != NULL && !kconfig_check_value(key, key->default_value, NULL))
            fail_msg("%s: default '%s' fails its own check", key->name, key->default_value);
        /* Every choice passes, but for keys of which ksim models only the
         * default, where every other choice is refused with the reason. */
        for (guint c = 0; key->choices != NULL && key->choices[c].value != NULL; c++) {
            g_autoptr(GError) error = NULL;
            gboolean ok = kconfig_check_value(key, key->choices[c].value, &error);
            if (key->only_default == NULL)
                assert_true(ok);
            else if (!ok)
                assert_non_null(strstr(error->message, key->only_default));
        }
        if (key->overrides != NULL) {
            const KConfigKey *broker = kconfig_lookup(key->overrides, KCONFIG_SCOPE_BROKER);
            assert_non_null(broker);
            assert_int_equal(broker->type, key->type);
        }
        if (key->fallback != NULL) {
            const KConfigKey *fallback = kconfig_lookup(key->fallback, key->scope);
            assert_non_null(fallback);
            assert_int_equal(fallback->type, key->type);
        }
        /* No name twice in one scope: lookups would be ambiguous. */
        assert_ptr_equal(kconfig_lookup(key->name, key->scope), key);
    }
}

/* Typed getters read Kafka's defaults, following null fallbacks. */
static void
test_kconfig_typed_getters_read_defaults(void **state)
{
    (void)state;
    g_autoptr(KConfig) broker = kconfig_new(KCONFIG_SCOPE_BROKER);
    assert_int_equal(kconfig_get_int64(broker, "num.partitions"), 1);
    assert_false(kconfig_get_bool(broker, "unclean.leader.election.enable"));
    assert_true(kconfig_get_bool(broker, "controlled.shutdown.enable"));
    assert_int_equal(kconfig_get_duration_ns(broker, "replica.lag.time.max.ms"), 30 * S_NS);
    assert_int_equal(kconfig_get_bytes(broker, "log.segment.bytes"), G_GINT64_CONSTANT(1) << 30);
    assert_int_equal(kconfig_get_bytes(broker, "log.retention.bytes"), -1);
    assert_int_equal(kconfig_get_int64(broker, "log.flush.interval.messages"), G_MAXINT64);
    assert_string_equal(kconfig_get_string(broker, "ksim.truncation.mode"), "hw");
    /* null -> fallback, as Kafka's broker resolves them. */
    assert_true(kconfig_is_null(broker, "log.roll.ms") == FALSE);
    assert_int_equal(kconfig_get_duration_ns(broker, "log.roll.ms"), 168 * HOUR_NS);
    assert_int_equal(kconfig_get_duration_ns(broker, "log.retention.ms"), 168 * HOUR_NS);
    assert_int_equal(kconfig_get_duration_ns(broker, "zookeeper.connection.timeout.ms"), 18 * S_NS);
    /* Long.MAX_VALUE ms does not fit in ns: it saturates. */
    assert_int_equal(kconfig_get_duration_ns(broker, "log.flush.interval.ms"), G_MAXINT64);
    assert_int_equal(kconfig_get_duration_ns(broker, "leader.imbalance.check.interval.seconds"),
                     300 * S_NS);
    /* In ms, "never" and "no limit" survive: Long.MAX stays, -1 stays. */
    assert_int_equal(kconfig_get_duration_ms(broker, "log.flush.interval.ms"), G_MAXINT64);
    assert_int_equal(kconfig_get_duration_ms(broker, "log.roll.ms"), 168 * 3600 * 1000);
    assert_int_equal(kconfig_get_duration_ms(broker, "replica.lag.time.max.ms"), 30000);
    assert_true(kconfig_set(broker, "log.retention.ms", "-1", NULL));
    assert_int_equal(kconfig_get_duration_ms(broker, "log.retention.ms"), -1);
    assert_true(kconfig_set(broker, "log.retention.hours", "-1", NULL));
    kconfig_unset(broker, "log.retention.ms");
    assert_int_equal(kconfig_get_duration_ms(broker, "log.retention.ms"), -1);

    g_autoptr(KConfig) producer = kconfig_new(KCONFIG_SCOPE_PRODUCER);
    assert_string_equal(kconfig_get_string(producer, "acks"), "all");
    assert_true(kconfig_is_null(producer, "transactional.id"));
    assert_null(kconfig_get_string(producer, "partitioner.class"));
    assert_int_equal(kconfig_get_bytes(producer, "batch.size"), 16384);
    assert_int_equal(kconfig_get_int64(producer, "batch.size"), 16384);
    assert_int_equal(kconfig_get_duration_ns(producer, "linger.ms"), 0);
    assert_true(kconfig_get_double(producer, "retries") == 2147483647.0);
    assert_false(kconfig_is_set(producer, "acks"));
    kconfig_check_invariants(broker);
    kconfig_check_invariants(producer);
}

/* A topic's unset keys take the broker's values, its own win, and is_set
 * sees only its own. */
static void
test_kconfig_topic_layers_over_broker(void **state)
{
    (void)state;
    g_autoptr(KConfig) broker = kconfig_new(KCONFIG_SCOPE_BROKER);
    assert_true(kconfig_set(broker, "min.insync.replicas", "2", NULL));
    assert_true(kconfig_set(broker, "log.retention.hours", "1", NULL));
    assert_true(kconfig_set(broker, "log.roll.hours", "2", NULL));
    assert_true(kconfig_set(broker, "num.partitions", "6", NULL));
    g_autoptr(KConfig) topic = kconfig_new_topic(broker);
    /* The topic copied the broker: later broker changes do not leak in. */
    assert_true(kconfig_set(broker, "min.insync.replicas", "3", NULL));

    assert_int_equal(kconfig_get_int64(topic, "min.insync.replicas"), 2);
    assert_false(kconfig_is_set(topic, "min.insync.replicas"));
    assert_int_equal(kconfig_get_duration_ns(topic, "retention.ms"), HOUR_NS);
    assert_int_equal(kconfig_get_duration_ns(topic, "segment.ms"), 2 * HOUR_NS);
    assert_int_equal(kconfig_get_int64(topic, "partitions"), 6);
    assert_int_equal(kconfig_get_int64(topic, "replication.factor"), 1);

    assert_true(kconfig_set(topic, "retention.ms", "30s", NULL));
    assert_true(kconfig_is_set(topic, "retention.ms"));
    assert_int_equal(kconfig_get_duration_ns(topic, "retention.ms"), 30 * S_NS);
    assert_string_equal(kconfig_get_value(topic, "retention.ms"), "30s");
    kconfig_unset(topic, "retention.ms");
    assert_int_equal(kconfig_get_duration_ns(topic, "retention.ms"), HOUR_NS);

    /* Without a broker, a topic config uses the registry's topic defaults. */
    g_autoptr(KConfig) alone = kconfig_new(KCONFIG_SCOPE_TOPIC);
    assert_int_equal(kconfig_get_duration_ns(alone, "retention.ms"), 168 * HOUR_NS);
    kconfig_check_invariants(topic);
}

typedef struct {
    guint scope;
    const char *key;
    const char *value;
    gboolean ok;
    const char *fragment; /* in the message when !ok */
} SetCase;

static const SetCase set_cases[] = {
    {KCONFIG_SCOPE_PRODUCER, "acks", "0", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "acks", "ALL", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "acks", "two", FALSE,
     "acks: 'two' is not allowed; expected one of: "
     "all, -1, 0, 1"},
    {KCONFIG_SCOPE_PRODUCER, "acks", "null", FALSE, "acks: 'null' is not allowed"},
    {KCONFIG_SCOPE_PRODUCER, "ackz", "1", FALSE, "ackz: unknown key; did you mean 'acks'?"},
    {KCONFIG_SCOPE_BROKER, "acks", "1", FALSE, "acks: not valid here (it is a producer key)"},
    {KCONFIG_SCOPE_PRODUCER, "retries", "-1", FALSE, "retries: '-1' is out of range"},
    {KCONFIG_SCOPE_PRODUCER, "retries", "3000000000", FALSE, "is out of range"},
    {KCONFIG_SCOPE_PRODUCER, "retries", "1.5", FALSE, "is not an integer"},
    {KCONFIG_SCOPE_PRODUCER, "max.in.flight.requests.per.connection", "0", FALSE,
     "expected an integer of at least 1"},
    {KCONFIG_SCOPE_PRODUCER, "enable.idempotence", "TRUE", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "enable.idempotence", "yes", FALSE, "expected true or false"},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "5", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "2s", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "1500us", FALSE, "not a whole number of milliseconds"},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "5 parsecs", FALSE, "unknown unit"},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "-5", FALSE, "out of range"},
    {KCONFIG_SCOPE_PRODUCER, "batch.size", "16KiB", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "batch.size", "4GiB", FALSE, "out of range"},
    {KCONFIG_SCOPE_PRODUCER, "partitioner.class", "round-robin", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "partitioner.class", "null", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "partitioner.class", "random", FALSE, "expected one of: sticky"},
    {KCONFIG_SCOPE_BROKER, "log.segment.bytes", "13", FALSE, "from 14 to 2147483647"},
    {KCONFIG_SCOPE_BROKER, "log.retention.ms", "-1", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "log.retention.ms", "-2", FALSE, "out of range"},
    {KCONFIG_SCOPE_BROKER, "log.cleanup.policy", "delete", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "log.cleanup.policy", "compact,delete", FALSE, "compaction is not modelled"},
    {KCONFIG_SCOPE_PRODUCER, "compression.type", "lz4", FALSE, "models only the default (none)"},
    {KCONFIG_SCOPE_PRODUCER, "compression.type", "NONE", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "controlled.shutdown.enable", "false", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "controlled.shutdown.enable", "sometimes", FALSE, "true or false"},
    {KCONFIG_SCOPE_BROKER, "controlled.shutdown.max.retries", "-1", FALSE, "out of range"},
    {KCONFIG_SCOPE_BROKER, "controlled.shutdown.retry.backoff.ms", "250", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "message.max.bytes", "1048588", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "message.max.bytes", "2MiB", FALSE, "any size"},
    {KCONFIG_SCOPE_BROKER, "zookeeper.connection.timeout.ms", "null", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "zookeeper.connection.timeout.ms", "5000", FALSE, "reconnecting"},
    {KCONFIG_SCOPE_BROKER, "log.cleanup.policy", "delete,archive", FALSE,
     "has 'archive', which is not allowed"},
    {KCONFIG_SCOPE_BROKER, "ksim.truncation.mode", "leader-epoch", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "ksim.truncation.mode", "epoch", FALSE, "one of: hw, leader-epoch"},
    {KCONFIG_SCOPE_CONSUMER, "partition.assignment.strategy",
     "org.apache.kafka.clients.consumer.StickyAssignor, range", TRUE, NULL},
    {KCONFIG_SCOPE_CONSUMER, "partition.assignment.strategy", "range,", FALSE, "empty item"},
    {KCONFIG_SCOPE_SCENARIO, "duration", "60s", TRUE, NULL},
    {KCONFIG_SCOPE_SCENARIO, "duration", "60", FALSE, "'60' needs a unit"},
    {KCONFIG_SCOPE_SCENARIO, "quiet", "0", TRUE, NULL},
    {KCONFIG_SCOPE_SCENARIO, "duration", "null", FALSE, "not allowed here"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "lognormal:500us,0.3", TRUE, NULL},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "uniform:1..3ms", FALSE, "without a unit"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "gamma:1ms", FALSE, "unknown distribution"},
    {KCONFIG_SCOPE_CLUSTER, "network.bandwidth", "125MB", TRUE, NULL},
    {KCONFIG_SCOPE_WORKLOAD, "workload.rate", "0.5", TRUE, NULL},
    {KCONFIG_SCOPE_WORKLOAD, "workload.rate", "fast", FALSE, "is not a number"},
    {KCONFIG_SCOPE_WORKLOAD, "workload.rate", "-1", FALSE, "out of range"},
    {KCONFIG_SCOPE_FAULT, "factor", "0.5", FALSE, "from 1 to 1000000"},
    /* Bounds from what a run represents (int64 ns), stated in the message. */
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "1e19", FALSE, "without a unit"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "1e18", FALSE, "without a unit"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "0", TRUE, NULL},
    {KCONFIG_SCOPE_CLUSTER, "disk.fsync.latency", "1e308", FALSE, "at most 100000h"},
    {KCONFIG_SCOPE_CLUSTER, "disk.fsync.latency", "1e308s", FALSE, "has a time above 100000h"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "uniform:1s..1e300s", FALSE,
     "has a time above 100000h"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "exp:1ms+100001h", FALSE, "above 100000h"},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "uniform:1s..100000h", TRUE, NULL},
    {KCONFIG_SCOPE_CLUSTER, "network.latency", "lognormal:1ms,1e300", TRUE, NULL},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "poll.interval", "1e308", FALSE, "without a unit"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "poll.interval", "const:1e300h", FALSE, "above 100000h"},
    {KCONFIG_SCOPE_WORKLOAD, "workload.record.size", "3GiB", FALSE, "at most 2147483647 bytes"},
    {KCONFIG_SCOPE_WORKLOAD, "workload.record.size", "uniform:10..1e30", FALSE, "above"},
    {KCONFIG_SCOPE_SCENARIO, "duration", "100001h", FALSE, "of at most 100000h"},
    {KCONFIG_SCOPE_SCENARIO, "duration", "100000h", TRUE, NULL},
    {KCONFIG_SCOPE_SCENARIO, "duration", "1e19", FALSE, "needs a unit"},
    {KCONFIG_SCOPE_SCENARIO, "duration", "1e19ns", FALSE, "too large"},
    {KCONFIG_SCOPE_FAULT, "delay", "1e9s", FALSE, "out of range"},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "1e3", FALSE, "not a whole number"},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "1e3ms", TRUE, NULL},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "9223372036854775807", FALSE,
     "from 0 to 360000000000"},
    {KCONFIG_SCOPE_BROKER, "log.flush.interval.ms", "9223372036854775807", TRUE, NULL},
    {KCONFIG_SCOPE_TOPIC, "flush.ms", "9223372036854775807", TRUE, NULL},
    {KCONFIG_SCOPE_BROKER, "log.flush.scheduler.interval.ms", "360000000001", FALSE,
     "or 9223372036854775807 (never)"},
    {KCONFIG_SCOPE_BROKER, "leader.imbalance.check.interval.seconds", "360000001", FALSE,
     "from 1 to 360000000"},
    {KCONFIG_SCOPE_PRODUCER, "batch.size", "1e3", FALSE, "not a whole number of bytes"},
    {KCONFIG_SCOPE_PRODUCER, "batch.size", "1.5KiB", TRUE, NULL},
    /* The producer keeps transactional.id in a 63-character field. */
    {KCONFIG_SCOPE_PRODUCER, "transactional.id",
     "reports::::::::::::::::::::::::::::::::::::::::::::::::::::::::-app", FALSE,
     "is too long; expected text of at most 63 characters"},
    {KCONFIG_SCOPE_PRODUCER, "transactional.id",
     "payments-app-00000000000000000000000000000000000000000000000000", TRUE, NULL},
};

/* kconfig_set validates type, range and choices, names the key, and leaves
 * the configuration unchanged on error. */
static void
test_kconfig_set_validates(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(set_cases); i++) {
        const SetCase *c = &set_cases[i];
        g_autoptr(KConfig) cfg = kconfig_new(c->scope);
        g_autoptr(GError) error = NULL;
        gboolean ok = kconfig_set(cfg, c->key, c->value, &error);
        if (ok != c->ok)
            fail_msg("%s = %s: expected %s, got %s", c->key, c->value, c->ok ? "ok" : "an error",
                     error != NULL ? error->message : "ok");
        if (ok) {
            assert_true(kconfig_is_set(cfg, c->key));
            kconfig_check_invariants(cfg);
            continue;
        }
        assert_true(g_error_matches(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_BAD_VALUE) ||
                    g_error_matches(error, KSIM_KCONFIG_ERROR, KSIM_KCONFIG_ERROR_UNKNOWN_KEY));
        assert_string_contains(error->message, c->fragment);
        GPtrArray *keys = kconfig_keys_sorted(cfg);
        assert_int_equal(keys->len, 0);
        g_ptr_array_unref(keys);
    }
}

/* Enum and list values read back in their canonical meaning. */
static void
test_kconfig_choices_are_canonical(void **state)
{
    (void)state;
    g_autoptr(KConfig) producer = kconfig_new(KCONFIG_SCOPE_PRODUCER);
    assert_true(kconfig_set(producer, "acks", "-1", NULL));
    assert_string_equal(kconfig_get_string(producer, "acks"), "all");
    assert_string_equal(kconfig_get_value(producer, "acks"), "-1");
    assert_true(kconfig_set(producer, "partitioner.class",
                            "org.apache.kafka.clients.producer.RoundRobinPartitioner", NULL));
    assert_string_equal(kconfig_get_string(producer, "partitioner.class"), "round-robin");
    assert_true(kconfig_set(producer, "compression.type", "None", NULL));
    assert_string_equal(kconfig_get_string(producer, "compression.type"), "none");

    g_autoptr(KConfig) consumer = kconfig_new(KCONFIG_SCOPE_CONSUMER);
    assert_true(kconfig_set(consumer, "partition.assignment.strategy",
                            " org.apache.kafka.clients.consumer.CooperativeStickyAssignor , "
                            "roundrobin",
                            NULL));
    g_auto(GStrv) assignors = kconfig_get_list(consumer, "partition.assignment.strategy");
    assert_int_equal(g_strv_length(assignors), 2);
    assert_string_equal(assignors[0], "cooperative-sticky");
    assert_string_equal(assignors[1], "roundrobin");
}

typedef struct {
    guint scope;
    const char *key;
    const char *value;
    gint64 ns;
} DurationCase;

static const DurationCase duration_cases[] = {
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "5", 5 * MS_NS},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "5ms", 5 * MS_NS},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "2s", 2 * S_NS},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "1m", 60 * S_NS},
    {KCONFIG_SCOPE_PRODUCER, "linger.ms", "0.5s", 500 * MS_NS},
    {KCONFIG_SCOPE_BROKER, "log.retention.ms", "-1", -1},
    {KCONFIG_SCOPE_BROKER, "log.roll.hours", "2", 2 * HOUR_NS},
    {KCONFIG_SCOPE_BROKER, "log.roll.hours", "120m", 2 * HOUR_NS},
    {KCONFIG_SCOPE_SCENARIO, "duration", "1.5s", 1500 * MS_NS},
    {KCONFIG_SCOPE_SCENARIO, "duration", "250us", 250000},
    {KCONFIG_SCOPE_SCENARIO, "quiet", "0", 0},
};

/* Durations: a bare number in the key's unit, or any unit; ns out. */
static void
test_kconfig_durations_convert_to_ns(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(duration_cases); i++) {
        const DurationCase *c = &duration_cases[i];
        g_autoptr(KConfig) cfg = kconfig_new(c->scope);
        g_autoptr(GError) error = NULL;
        if (!kconfig_set(cfg, c->key, c->value, &error))
            fail_msg("%s = %s: %s", c->key, c->value, error->message);
        assert_int_equal(kconfig_get_duration_ns(cfg, c->key), c->ns);
    }
}

/* Distributions parse through sim_dist_parse. */
static void
test_kconfig_dist_getter(void **state)
{
    (void)state;
    g_autoptr(KConfig) cluster = kconfig_new(KCONFIG_SCOPE_CLUSTER);
    SimDist latency = kconfig_get_dist(cluster, "network.latency");
    assert_int_equal(latency.kind, SIM_DIST_CONSTANT);
    assert_true(latency.a == 100000.0);
    assert_true(kconfig_set(cluster, "network.latency", "lognormal:500us,0.3", NULL));
    latency = kconfig_get_dist(cluster, "network.latency");
    assert_int_equal(latency.kind, SIM_DIST_LOGNORMAL);
    assert_true(latency.a == 500000.0);
    assert_true(latency.b == 0.3);
    g_autoptr(KConfig) workload = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    SimDist size = kconfig_get_dist(workload, "workload.record.size");
    assert_true(size.a == 100.0);
}

typedef struct {
    const char *unknown;
    guint scopes;
    const char *suggestion; /* NULL: none close enough */
} SuggestCase;

static const SuggestCase suggest_cases[] = {
    {"ackss", KCONFIG_SCOPE_PRODUCER, "acks"},
    {"ACKS", KCONFIG_SCOPE_PRODUCER, "acks"},
    {"lingr.ms", KCONFIG_SCOPE_PRODUCER, "linger.ms"},
    {"min.insync.replica", KCONFIG_SCOPE_BROKER, "min.insync.replicas"},
    {"MIN.INSYNC.REPLICAS", KCONFIG_SCOPE_TOPIC, "min.insync.replicas"},
    {"replica.lag.time.max", KCONFIG_SCOPE_BROKER, "replica.lag.time.max.ms"},
    {"unclean.leader.elections.enabled", KCONFIG_SCOPE_BROKER, "unclean.leader.election.enable"},
    {"retention.ms", KCONFIG_SCOPE_BROKER, NULL}, /* log.retention.ms is 4 away: too far */
    {"linger", KCONFIG_SCOPE_PRODUCER, NULL},
    {"zzzz", KCONFIG_SCOPE_PRODUCER, NULL},
    {"acks", KCONFIG_SCOPE_BROKER, NULL},
    {"workload.rates", KCONFIG_SCOPE_WORKLOAD, "workload.rate"},
};

/* Suggestions: the closest key within max(2, len/4), ignoring case. */
static void
test_kconfig_suggest(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(suggest_cases); i++) {
        const SuggestCase *c = &suggest_cases[i];
        const char *got = kconfig_suggest(c->unknown, c->scopes);
        if (c->suggestion == NULL && got != NULL)
            fail_msg("%s: suggested '%s', expected none", c->unknown, got);
        if (c->suggestion != NULL && (got == NULL || strcmp(got, c->suggestion) != 0))
            fail_msg("%s: suggested '%s', expected '%s'", c->unknown, got ? got : "(none)",
                     c->suggestion);
    }
}

/* Levenshtein distance on known pairs, case-insensitive. */
static void
test_kconfig_edit_distance(void **state)
{
    static const struct {
        const char *a;
        const char *b;
        guint distance;
    } cases[] = {
        {"", "", 0},         {"", "abc", 3},         {"kitten", "sitting", 3},
        {"acks", "ACKS", 0}, {"flaw", "lawn", 2},    {"topic", "topik", 1},
        {"abc", "cba", 2},   {"gumbo", "gambol", 2},
    };
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        assert_int_equal(kconfig_edit_distance(cases[i].a, cases[i].b), cases[i].distance);
        assert_int_equal(kconfig_edit_distance(cases[i].b, cases[i].a), cases[i].distance);
    }
    const char *names[] = {"scenario", "cluster", "topic", "producer"};
    assert_string_equal(kconfig_suggest_among("topik", names, 4), "topic");
    assert_string_equal(kconfig_suggest_among("Cluster", names, 4), "cluster");
    assert_null(kconfig_suggest_among("broker", names, 4));
}

/* A copy is deep and independent; keys come out sorted. */
static void
test_kconfig_copy_and_sorted_keys(void **state)
{
    (void)state;
    g_autoptr(KConfig) broker = kconfig_new(KCONFIG_SCOPE_BROKER);
    assert_true(kconfig_set(broker, "num.partitions", "3", NULL));
    g_autoptr(KConfig) topic = kconfig_new_topic(broker);
    assert_true(kconfig_set(topic, "segment.bytes", "1MiB", NULL));
    assert_true(kconfig_set(topic, "cleanup.policy", "delete", NULL));
    assert_true(kconfig_set(topic, "retention.ms", "1000", NULL));
    g_autoptr(KConfig) copy = kconfig_copy(topic);
    assert_true(kconfig_set(topic, "segment.bytes", "2MiB", NULL));
    assert_int_equal(kconfig_get_bytes(copy, "segment.bytes"), 1 << 20);
    assert_int_equal(kconfig_get_bytes(topic, "segment.bytes"), 2 << 20);
    assert_int_equal(kconfig_get_int64(copy, "partitions"), 3);
    g_autoptr(GPtrArray) keys = kconfig_keys_sorted(copy);
    assert_int_equal(keys->len, 3);
    assert_string_equal(keys->pdata[0], "cleanup.policy");
    assert_string_equal(keys->pdata[1], "retention.ms");
    assert_string_equal(keys->pdata[2], "segment.bytes");
    kconfig_check_invariants(copy);
}

/* Form descriptions say what a value should look like. */
static void
test_kconfig_describe_form(void **state)
{
    (void)state;
    g_autofree char *acks = kconfig_describe_form(kconfig_lookup("acks", KCONFIG_SCOPE_PRODUCER));
    assert_string_equal(acks, "one of: all, -1, 0, 1");
    g_autofree char *partitions =
        kconfig_describe_form(kconfig_lookup("num.partitions", KCONFIG_SCOPE_BROKER));
    assert_string_equal(partitions, "an integer of at least 1");
    g_autofree char *linger =
        kconfig_describe_form(kconfig_lookup("linger.ms", KCONFIG_SCOPE_PRODUCER));
    assert_string_contains(linger, "a number of milliseconds");
    assert_int_equal(kconfig_scopes_of("min.insync.replicas"),
                     KCONFIG_SCOPE_BROKER | KCONFIG_SCOPE_TOPIC);
    assert_int_equal(kconfig_scopes_of("no.such.key"), 0);
}

/* A message quotes a long value cut short, and leaves the rest alone: short
 * values, quoted text with spaces, and apostrophes of English. */
static void
test_kconfig_echo_quoted_cuts_long_values(void **state)
{
    (void)state;
    g_autofree char *long_value = g_strnfill(100000, 'x');
    g_autofree char *message = g_strdup_printf("bad '%s' in 'uniform:1ms..2ms'", long_value);
    g_autofree char *shown = kconfig_echo_quoted(message);
    g_autofree char *cut = g_strnfill(KCONFIG_ECHO_CHARS_MAX, 'x');
    g_autofree char *expected = g_strdup_printf("bad '%s\u2026' in 'uniform:1ms..2ms'", cut);
    assert_string_equal(shown, expected);
    static const char *const kept[] = {
        "'1:2:3, 2:3:1' is fine",
        "ZooKeeper's limit, Kafka's admin client",
        "no quotes at all",
        "an unmatched ' quote",
    };
    for (guint i = 0; i < G_N_ELEMENTS(kept); i++) {
        g_autofree char *same = kconfig_echo_quoted(kept[i]);
        assert_string_equal(same, kept[i]);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kconfig_registry_has_kafka_defaults),
        cmocka_unit_test(test_kconfig_topic_keys_override_broker_keys),
        cmocka_unit_test(test_kconfig_registry_is_consistent),
        cmocka_unit_test(test_kconfig_typed_getters_read_defaults),
        cmocka_unit_test(test_kconfig_topic_layers_over_broker),
        cmocka_unit_test(test_kconfig_set_validates),
        cmocka_unit_test(test_kconfig_choices_are_canonical),
        cmocka_unit_test(test_kconfig_durations_convert_to_ns),
        cmocka_unit_test(test_kconfig_dist_getter),
        cmocka_unit_test(test_kconfig_suggest),
        cmocka_unit_test(test_kconfig_edit_distance),
        cmocka_unit_test(test_kconfig_copy_and_sorted_keys),
        cmocka_unit_test(test_kconfig_describe_form),
        cmocka_unit_test(test_kconfig_echo_quoted_cuts_long_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
