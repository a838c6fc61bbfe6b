/* Tests of src/harness/kconfig_bind: every key bound at most once and to a
 * field of its type, every bound key's registry default reaching its field
 * (the registry is the models' only source of defaults), ENUM and LIST keys
 * mapped through the registry's canonical choices, set, layered and fallback
 * values, and the workload's shape parsers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "broker_config.h"
#include "cluster.h"
#include "config_fixture.h"
#include "consumer.h"
#include "kconfig.h"
#include "kconfig_bind.h"
#include "producer_config.h"
#include "workload.h"

#include <math.h>

/* A struct big enough for any bound config, so tests can fill by table. */
typedef union {
    BrokerConfig broker;
    TopicConfig topic;
    ProducerConfig producer;
    ConsumerConfig consumer;
    WorkloadConfig workload;
    ClusterConfig cluster;
} AnyConfig;

/* `table`'s struct as its kconfig_bind_X_defaults gives it to the runner,
 * the benchmarks and the tests: a topic that sets nothing takes the
 * broker's values. */
static void
model_defaults(const KConfigBindTable *table, AnyConfig *out)
{
    memset(out, 0, sizeof *out);
    if (table == kconfig_bind_broker()) {
        kconfig_bind_broker_defaults(&out->broker);
    } else if (table == kconfig_bind_topic()) {
        BrokerConfig broker;
        kconfig_bind_broker_defaults(&broker);
        topic_config_from_broker(&out->topic, &broker);
    } else if (table == kconfig_bind_producer()) {
        kconfig_bind_producer_defaults(&out->producer);
    } else if (table == kconfig_bind_consumer() || table == kconfig_bind_consumer_group()) {
        kconfig_bind_consumer_defaults(&out->consumer);
    } else if (table == kconfig_bind_workload()) {
        kconfig_bind_workload_defaults(&out->workload, "t");
    } else {
        assert_ptr_equal(table, kconfig_bind_cluster());
        kconfig_bind_cluster_defaults(&out->cluster);
    }
}

/* An empty configuration for `table`: every key at its registry default (a
 * topic over an empty broker configuration). */
static KConfig *
empty_config(const KConfigBindTable *table)
{
    if (table->scope != KCONFIG_SCOPE_TOPIC)
        return kconfig_new(table->scope);
    g_autoptr(KConfig) broker = kconfig_new(KCONFIG_SCOPE_BROKER);
    return kconfig_new_topic(broker);
}

/* The signed integer a number binding's field holds. */
static gint64
field_int(const AnyConfig *config, const KConfigBinding *binding)
{
    const guint8 *field = (const guint8 *)config + binding->offset;
    gint8 v8;
    gint16 v16;
    gint32 v32;
    gint64 v64;
    switch (binding->width) {
    case 1:
        memcpy(&v8, field, 1);
        return v8;
    case 2:
        memcpy(&v16, field, 2);
        return v16;
    case 4:
        memcpy(&v32, field, 4);
        return v32;
    default:
        assert_int_equal(binding->width, 8);
        memcpy(&v64, field, 8);
        return v64;
    }
}

/* Keys no table binds although their scope has one, and why. */
static const struct {
    KConfigScope scope;
    const char *name;
} unbound_by_design[] = {
    {KCONFIG_SCOPE_BROKER, "num.partitions"},             /* the parser's topic default */
    {KCONFIG_SCOPE_BROKER, "default.replication.factor"}, /* the same */
    {KCONFIG_SCOPE_TOPIC, "partitions"},                  /* the parser creates the topic with it */
    {KCONFIG_SCOPE_TOPIC, "replication.factor"},          /* the same */
    {KCONFIG_SCOPE_TOPIC, "replica.assignment"},          /* the same: a fixed assignment */
    /* The admin's placement, not the broker, reads racks: the runner hands
     * each broker's rack, and a topic's rack-aware mode, to the cluster. */
    {KCONFIG_SCOPE_BROKER, "broker.rack"},
    {KCONFIG_SCOPE_CLUSTER, "racks"},
    {KCONFIG_SCOPE_TOPIC, "disable.rack.aware"},
    /* The parser checks metadata.log.segment.bytes against it, as
     * KafkaMetadataLog does; nothing else reads it. */
    {KCONFIG_SCOPE_CLUSTER, "metadata.log.segment.min.bytes"},
    {KCONFIG_SCOPE_CONSUMER, "group.id"}, /* the parser makes it the group of a section */
    /* The consumer's client.id names nothing: members are named by their
     * section (consumer-NAME-K), and ConsumerConfig has no such field. */
    {KCONFIG_SCOPE_CONSUMER, "client.id"},
    /* A name or null: kconfig_bind_consumer_from maps it to the wire's
     * server assignor number (ConsumerConfig.group_remote_assignor). */
    {KCONFIG_SCOPE_CONSUMER, "group.remote.assignor"},
    /* The parser resolves the topic among the topics and makes `instances`
     * producers; transaction.records applies only to a transactional
     * producer, which the parser decides. */
    {KCONFIG_SCOPE_WORKLOAD, "topic"},
    {KCONFIG_SCOPE_WORKLOAD, "instances"},
    {KCONFIG_SCOPE_WORKLOAD, "transaction.records"},
    /* Shapes rather than numbers: kconfig_bind_workload_from parses them
     * (test_kconfig_bind_workload_shapes). */
    {KCONFIG_SCOPE_WORKLOAD, "workload.burst"},
    {KCONFIG_SCOPE_WORKLOAD, "workload.keys"},
    /* The runner's members, not the consumer, read these from the parse
     * result: whom to make, when they join and leave, how long they process
     * and pause, and the pipeline they feed. */
    {KCONFIG_SCOPE_CONSUMER_GROUP, "topics"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "members"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "processing.time"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "poll.interval"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "members.start"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "members.stop"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "pipeline.output"},
    {KCONFIG_SCOPE_CONSUMER_GROUP, "exactly.once"},
    /* KRaft's roles and voters: the scenario parser resolves them together
     * (scenario_kraft.c) and the runner hands the cluster the result. */
    {KCONFIG_SCOPE_CLUSTER, "process.roles"},
    {KCONFIG_SCOPE_CLUSTER, "controller.quorum.voters"},
    /* Refused in scenarios (KConfigKey.refused): ksim numbers its nodes. */
    {KCONFIG_SCOPE_BROKER, "node.id"},
};

static gboolean
unbound_by_design_has(const char *name, KConfigScope scope)
{
    for (guint i = 0; i < G_N_ELEMENTS(unbound_by_design); i++) {
        if (unbound_by_design[i].scope == scope && strcmp(unbound_by_design[i].name, name) == 0)
            return TRUE;
    }
    return FALSE;
}

/* TRUE when `name` stands in, directly or through other fallbacks, for a
 * null value of a key `table` binds (log.roll.hours behind log.roll.ms). */
static gboolean
is_fallback_of_bound(const KConfigBindTable *table, const char *name)
{
    for (guint i = 0; i < table->n_bindings; i++) {
        const KConfigKey *key = kconfig_lookup(table->bindings[i].key, table->scope);
        for (guint hops = 0; key != NULL && key->fallback != NULL && hops < 4; hops++) {
            if (strcmp(key->fallback, name) == 0)
                return TRUE;
            key = kconfig_lookup(key->fallback, table->scope);
        }
    }
    return FALSE;
}

static gboolean
kind_fits_type(KConfigBindKind kind, KConfigType type)
{
    switch (kind) {
    case KCONFIG_BIND_INT:
        return type == KCONFIG_TYPE_INT || type == KCONFIG_TYPE_LONG;
    case KCONFIG_BIND_BOOL:
        return type == KCONFIG_TYPE_BOOL;
    case KCONFIG_BIND_MS:
    case KCONFIG_BIND_MS_OR_NEVER:
        return type == KCONFIG_TYPE_DURATION;
    case KCONFIG_BIND_BYTES:
        return type == KCONFIG_TYPE_SIZE;
    case KCONFIG_BIND_ENUM:
        return type == KCONFIG_TYPE_ENUM;
    case KCONFIG_BIND_LIST_FIRST:
        return type == KCONFIG_TYPE_LIST;
    case KCONFIG_BIND_TEXT:
        return type == KCONFIG_TYPE_STRING;
    case KCONFIG_BIND_DOUBLE:
    case KCONFIG_BIND_PER_MILLION:
        return type == KCONFIG_TYPE_DOUBLE;
    case KCONFIG_BIND_NS:
    case KCONFIG_BIND_NS_OR_NEVER:
        return type == KCONFIG_TYPE_DURATION;
    case KCONFIG_BIND_DIST:
        return type == KCONFIG_TYPE_TIME_DIST || type == KCONFIG_TYPE_SIZE_DIST;
    }
    return FALSE;
}

/* The bindings of one table: known keys of its type, each bound once, to
 * fields that do not overlap and are wide enough for the key's range. */
static void
check_table_bindings(const KConfigBindTable *table)
{
    for (guint i = 0; i < table->n_bindings; i++) {
        const KConfigBinding *b = &table->bindings[i];
        const KConfigKey *key = kconfig_lookup(b->key, table->scope);
        if (key == NULL)
            fail_msg("%s: %s is not a key of its scope", table->name, b->key);
        if (!kind_fits_type(b->kind, key->type))
            fail_msg("%s: %s is bound with a conversion its type has not", table->name, b->key);
        assert_true(b->offset + b->width <= table->struct_size);
        gboolean numeric = b->kind == KCONFIG_BIND_INT || b->kind == KCONFIG_BIND_BYTES ||
                           b->kind == KCONFIG_BIND_MS || b->kind == KCONFIG_BIND_MS_OR_NEVER ||
                           b->kind == KCONFIG_BIND_NS;
        if (numeric && b->width < 8 && key->max > (G_GINT64_CONSTANT(1) << (8 * b->width - 1)) - 1)
            fail_msg("%s: %s's range does not fit its %zu-byte field", table->name, b->key,
                     b->width);
        for (guint j = 0; j < i; j++) {
            const KConfigBinding *other = &table->bindings[j];
            if (strcmp(other->key, b->key) == 0)
                fail_msg("%s: %s is bound twice", table->name, b->key);
            gboolean apart =
                b->offset + b->width <= other->offset || other->offset + other->width <= b->offset;
            if (!apart)
                fail_msg("%s: %s and %s fill the same field", table->name, b->key, other->key);
        }
    }
}

/* Every key is bound exactly once where its scope has a table; the keys left
 * unbound are only-default ones, fallbacks of bound keys, or read by the
 * scenario parser. */
static void
test_kconfig_bind_each_key_bound_once(void **state)
{
    (void)state;
    guint n_tables = 0, n_keys = 0;
    const KConfigBindTable *const *tables = kconfig_bind_tables(&n_tables);
    const KConfigKey *registry = kconfig_registry(&n_keys);
    assert_int_equal(n_tables, 7);
    for (guint t = 0; t < n_tables; t++) {
        check_table_bindings(tables[t]);
        for (guint t2 = 0; t2 < t; t2++)
            assert_int_not_equal(tables[t]->scope, tables[t2]->scope);
    }
    guint bound = 0;
    for (guint k = 0; k < n_keys; k++) {
        const KConfigKey *key = &registry[k];
        for (guint t = 0; t < n_tables; t++) {
            if (tables[t]->scope != key->scope)
                continue;
            if (kconfig_bind_lookup(tables[t], key->name) != NULL) {
                bound++;
                continue;
            }
            if (key->only_default == NULL && !is_fallback_of_bound(tables[t], key->name) &&
                !unbound_by_design_has(key->name, key->scope))
                fail_msg("%s key %s is bound nowhere", tables[t]->name, key->name);
        }
    }
    guint bindings = 0;
    for (guint t = 0; t < n_tables; t++)
        bindings += tables[t]->n_bindings;
    assert_int_equal(bound, bindings);
}

/* The value `binding`'s key has in `cfg`, converted as the binding says,
 * written out per kind from the registry's getters: an oracle for the fill. */
static void
assert_field_holds(const AnyConfig *config, const KConfigBinding *b, const KConfig *cfg,
                   const char *table)
{
    const guint8 *field = (const guint8 *)config + b->offset;
    const char *key = b->key;
    gint64 want = 0;
    switch (b->kind) {
    case KCONFIG_BIND_INT:
        want = kconfig_get_int64(cfg, key);
        break;
    case KCONFIG_BIND_BOOL:
        want = kconfig_get_bool(cfg, key);
        break;
    case KCONFIG_BIND_MS:
        want = kconfig_get_duration_ms(cfg, key);
        break;
    case KCONFIG_BIND_MS_OR_NEVER:
        want = kconfig_is_null(cfg, key) ? -1 : kconfig_get_duration_ms(cfg, key);
        want = want == G_MAXINT64 ? -1 : want;
        break;
    case KCONFIG_BIND_BYTES:
        want = kconfig_get_bytes(cfg, key);
        break;
    case KCONFIG_BIND_NS:
        want = kconfig_get_duration_ns(cfg, key);
        break;
    case KCONFIG_BIND_NS_OR_NEVER:
        want = kconfig_is_null(cfg, key) ? G_MAXINT64 : kconfig_get_duration_ns(cfg, key);
        break;
    case KCONFIG_BIND_PER_MILLION:
        want = (gint64)llround(kconfig_get_double(cfg, key) * 1e6);
        break;
    case KCONFIG_BIND_ENUM:
    case KCONFIG_BIND_LIST_FIRST: {
        g_auto(GStrv) items = NULL;
        const char *choice = NULL;
        if (b->kind == KCONFIG_BIND_ENUM) {
            choice = kconfig_get_string(cfg, key);
        } else {
            items = kconfig_get_list(cfg, key);
            choice = items[0];
        }
        gboolean mapped = FALSE;
        for (guint v = 0; v < b->n_values && !mapped; v++) {
            mapped = g_strcmp0(b->values[v].choice, choice) == 0;
            want = b->values[v].value;
        }
        assert_true(mapped);
        break;
    }
    case KCONFIG_BIND_TEXT: {
        const char *text = kconfig_get_string(cfg, key);
        if (strcmp((const char *)field, text != NULL ? text : "") != 0)
            fail_msg("%s: %s's value did not reach its field", table, key);
        return;
    }
    case KCONFIG_BIND_DOUBLE: {
        double got;
        memcpy(&got, field, sizeof got);
        if (got != kconfig_get_double(cfg, key))
            fail_msg("%s: %s's value did not reach its field", table, key);
        return;
    }
    case KCONFIG_BIND_DIST: {
        SimDist got, dist = kconfig_get_dist(cfg, key);
        memcpy(&got, field, sizeof got);
        if (got.kind != dist.kind || got.a != dist.a || got.b != dist.b)
            fail_msg("%s: %s's value did not reach its field", table, key);
        return;
    }
    }
    if (field_int(config, b) != want)
        fail_msg("%s: %s's value %" G_GINT64_FORMAT " did not reach its field (%" G_GINT64_FORMAT
                 ")",
                 table, key, want, field_int(config, b));
}

/* With nothing set, every bound field holds its key's registry default, in
 * the struct each kconfig_bind_X_defaults hands to the runner, the
 * benchmarks and the tests (no other default exists to drift from); the
 * fill writes every bound field, even over garbage. */
static void
test_kconfig_bind_defaults_reach_fields(void **state)
{
    (void)state;
    guint n_tables = 0;
    const KConfigBindTable *const *tables = kconfig_bind_tables(&n_tables);
    for (guint t = 0; t < n_tables; t++) {
        const KConfigBindTable *table = tables[t];
        g_autoptr(KConfig) cfg = empty_config(table);
        AnyConfig defaults, filled;
        model_defaults(table, &defaults);
        /* Poison the bound fields so that a binding that writes nothing fails. */
        model_defaults(table, &filled);
        for (guint i = 0; i < table->n_bindings; i++)
            if (table->bindings[i].kind != KCONFIG_BIND_TEXT)
                memset((guint8 *)&filled + table->bindings[i].offset, 0x5a,
                       table->bindings[i].width);
        kconfig_bind_fill(table, cfg, &filled);
        for (guint i = 0; i < table->n_bindings; i++) {
            const KConfigBinding *b = &table->bindings[i];
            assert_field_holds(&defaults, b, cfg, table->name);
            assert_field_holds(&filled, b, cfg, table->name);
            if (b->has_explicit)
                assert_false(*(const gboolean *)((const guint8 *)&defaults + b->explicit_offset));
        }
    }
}

typedef struct {
    const char *what;
    gint64 got;
    gint64 kafka;
} KafkaDefault;

/* A few of Kafka 3.x's documented defaults, as the models receive them:
 * the registry's text, the conversion and the field agree with Kafka. */
static void
test_kconfig_bind_defaults_are_kafkas(void **state)
{
    (void)state;
    BrokerConfig broker;
    ProducerConfig producer;
    ConsumerConfig consumer;
    PlogConfig log;
    kconfig_bind_broker_defaults(&broker);
    kconfig_bind_producer_defaults(&producer);
    kconfig_bind_consumer_defaults(&consumer);
    kconfig_bind_log_defaults(&log);
    const KafkaDefault cases[] = {
        {"min.insync.replicas", broker.min_insync_replicas, 1},
        {"replica.lag.time.max.ms", broker.replica_lag_time_max_ms, 30000},
        {"log.segment.bytes", log.segment_bytes, G_GINT64_CONSTANT(1) << 30},
        {"log.retention.hours", log.retention_ms, G_GINT64_CONSTANT(168) * 3600 * 1000},
        {"log.flush.interval.ms", log.flush_interval_ms, -1},
        {"acks", producer.acks, -1},
        {"enable.idempotence", producer.enable_idempotence, TRUE},
        {"retries", producer.retries, G_MAXINT32},
        {"batch.size", producer.batch_size, 16384},
        {"delivery.timeout.ms", producer.delivery_timeout_ms, 120000},
        {"session.timeout.ms", consumer.session_timeout_ms, 45000},
        {"fetch.max.bytes", consumer.fetch_max_bytes, 52428800},
        {"auto.offset.reset", consumer.auto_offset_reset, CONSUMER_RESET_LATEST},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (cases[i].got != cases[i].kafka)
            fail_msg("%s: %" G_GINT64_FORMAT ", Kafka's default is %" G_GINT64_FORMAT,
                     cases[i].what, cases[i].got, cases[i].kafka);
    }
}

typedef struct {
    const KConfigBindTable *(*table)(void);
    const char *key;
    const char *value; /* NULL: the key's default */
    gint64 expected;
} EnumCase;

/* ENUM and LIST values, every spelling, as the models' values. */
static const EnumCase enum_cases[] = {
    {kconfig_bind_producer, "acks", NULL, -1},
    {kconfig_bind_producer, "acks", "all", -1},
    {kconfig_bind_producer, "acks", "-1", -1},
    {kconfig_bind_producer, "acks", "0", 0},
    {kconfig_bind_producer, "acks", "1", 1},
    {kconfig_bind_producer, "partitioner.class", NULL, PRODUCER_PARTITIONER_STICKY},
    {kconfig_bind_producer, "partitioner.class", "round-robin", PRODUCER_PARTITIONER_ROUND_ROBIN},
    {kconfig_bind_producer, "partitioner.class",
     "org.apache.kafka.clients.producer.RoundRobinPartitioner", PRODUCER_PARTITIONER_ROUND_ROBIN},
    {kconfig_bind_producer, "partitioner.class",
     "org.apache.kafka.clients.producer.internals.DefaultPartitioner", PRODUCER_PARTITIONER_STICKY},
    {kconfig_bind_broker, "ksim.truncation.mode", NULL, BROKER_TRUNCATE_HW},
    {kconfig_bind_broker, "ksim.truncation.mode", "leader-epoch", BROKER_TRUNCATE_LEADER_EPOCH},
    {kconfig_bind_broker, "ksim.truncation.mode", "kip-101", BROKER_TRUNCATE_KIP101},
    {kconfig_bind_consumer, "auto.offset.reset", NULL, CONSUMER_RESET_LATEST},
    {kconfig_bind_consumer, "auto.offset.reset", "earliest", CONSUMER_RESET_EARLIEST},
    {kconfig_bind_consumer, "auto.offset.reset", "none", CONSUMER_RESET_NONE},
    {kconfig_bind_consumer, "isolation.level", NULL, 0},
    {kconfig_bind_consumer, "isolation.level", "read_committed", 1},
    {kconfig_bind_consumer, "partition.assignment.strategy", NULL, ASSIGNOR_RANGE},
    {kconfig_bind_consumer, "partition.assignment.strategy", "roundrobin,range",
     ASSIGNOR_ROUNDROBIN},
    {kconfig_bind_consumer, "partition.assignment.strategy",
     "org.apache.kafka.clients.consumer.StickyAssignor", ASSIGNOR_STICKY},
    {kconfig_bind_consumer, "partition.assignment.strategy",
     "org.apache.kafka.clients.consumer.CooperativeStickyAssignor", ASSIGNOR_COOPERATIVE_STICKY},
    {kconfig_bind_workload, "workload.arrival", NULL, WORKLOAD_ARRIVAL_CONSTANT},
    {kconfig_bind_workload, "workload.arrival", "bursts", WORKLOAD_ARRIVAL_BURSTS},
    {kconfig_bind_workload, "workload.send", NULL, FALSE},
    {kconfig_bind_workload, "workload.send", "sync", TRUE},
    {kconfig_bind_consumer_group, "processing.mode", NULL, CONSUMER_PROCESSING_AUTO},
    {kconfig_bind_consumer_group, "processing.mode", "process-then-commit-async",
     CONSUMER_PROCESS_THEN_COMMIT_ASYNC},
};

/* Each spelling of an ENUM or LIST value reaches the model as its meaning. */
static void
test_kconfig_bind_enums_map_through_choices(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(enum_cases); i++) {
        const EnumCase *c = &enum_cases[i];
        const KConfigBindTable *table = c->table();
        const KConfigBinding *b = kconfig_bind_lookup(table, c->key);
        assert_non_null(b);
        g_autoptr(KConfig) cfg = empty_config(table);
        if (c->value != NULL)
            assert_true(kconfig_set(cfg, c->key, c->value, NULL));
        AnyConfig filled;
        model_defaults(table, &filled);
        kconfig_bind_fill(table, cfg, &filled);
        if (field_int(&filled, b) != c->expected)
            fail_msg("%s=%s filled %" G_GINT64_FORMAT ", expected %" G_GINT64_FORMAT, c->key,
                     c->value ? c->value : "(default)", field_int(&filled, b), c->expected);
    }
}

/* A TEXT key's value is copied into a fixed char array: the registry must
 * refuse any value longer than the array holds, or a value the parser
 * accepts aborts the run (the producer's client.id of 100 characters did). */
static void
test_kconfig_bind_text_fits_its_field(void **state)
{
    (void)state;
    guint n_tables = 0;
    const KConfigBindTable *const *tables = kconfig_bind_tables(&n_tables);
    guint texts = 0;
    for (guint t = 0; t < n_tables; t++) {
        for (guint i = 0; i < tables[t]->n_bindings; i++) {
            const KConfigBinding *b = &tables[t]->bindings[i];
            if (b->kind != KCONFIG_BIND_TEXT)
                continue;
            texts++;
            const KConfigKey *key = kconfig_lookup(b->key, tables[t]->scope);
            assert_non_null(key);
            if (key->max <= 0 || (gsize)key->max >= b->width)
                fail_msg("%s: %s may be %" G_GINT64_FORMAT " bytes (0: any) but its field "
                         "holds %zu",
                         tables[t]->name, b->key, key->max, b->width - 1);
        }
    }
    assert_true(texts >= 2);
}

/* Every value table maps canonical choices only, and every canonical choice
 * of its key; a null entry exactly where the key may be null. */
static void
test_kconfig_bind_values_cover_choices(void **state)
{
    (void)state;
    guint n_tables = 0;
    const KConfigBindTable *const *tables = kconfig_bind_tables(&n_tables);
    guint mapped_tables = 0;
    for (guint t = 0; t < n_tables; t++) {
        for (guint i = 0; i < tables[t]->n_bindings; i++) {
            const KConfigBinding *b = &tables[t]->bindings[i];
            if (b->kind != KCONFIG_BIND_ENUM && b->kind != KCONFIG_BIND_LIST_FIRST) {
                assert_int_equal(b->n_values, 0);
                continue;
            }
            mapped_tables++;
            const KConfigKey *key = kconfig_lookup(b->key, tables[t]->scope);
            gboolean has_null = FALSE;
            for (guint v = 0; v < b->n_values; v++) {
                const char *choice = b->values[v].choice;
                has_null = has_null || choice == NULL;
                if (choice != NULL)
                    assert_string_equal(kconfig_choice_canonical(key, choice), choice);
            }
            assert_int_equal(has_null, key->default_value == NULL);
            for (guint c = 0; key->choices[c].value != NULL; c++) {
                const char *canonical = key->choices[c].canonical;
                if (canonical != NULL)
                    continue;
                gboolean found = FALSE;
                for (guint v = 0; v < b->n_values; v++)
                    found = found || g_strcmp0(b->values[v].choice, key->choices[c].value) == 0;
                if (!found)
                    fail_msg("%s: choice %s has no model value", b->key, key->choices[c].value);
            }
        }
    }
    assert_int_equal(mapped_tables, 16);
}

/* Set values, a topic's layering over the broker and a fallback in other
 * units reach the fields, converted; the explicit flags follow the keys. */
static void
test_kconfig_bind_fill_reads_set_values(void **state)
{
    (void)state;
    g_autoptr(KConfig) producer_cfg = kconfig_new(KCONFIG_SCOPE_PRODUCER);
    assert_true(kconfig_set(producer_cfg, "linger.ms", "5s", NULL));
    assert_true(kconfig_set(producer_cfg, "batch.size", "32KiB", NULL));
    assert_true(kconfig_set(producer_cfg, "enable.idempotence", "false", NULL));
    assert_true(kconfig_set(producer_cfg, "transactional.id", "tx-1", NULL));
    ProducerConfig producer;
    kconfig_bind_producer_defaults(&producer);
    kconfig_bind_fill(kconfig_bind_producer(), producer_cfg, &producer);
    assert_int_equal(producer.linger_ms, 5000);
    assert_int_equal(producer.batch_size, 32768);
    assert_false(producer.enable_idempotence);
    assert_true(producer.enable_idempotence_explicit);
    assert_false(producer.delivery_timeout_ms_explicit);
    assert_string_equal(producer.transactional_id, "tx-1");
    assert_string_equal(producer.client_id, "");

    g_autoptr(KConfig) broker_cfg = kconfig_new(KCONFIG_SCOPE_BROKER);
    assert_true(kconfig_set(broker_cfg, "log.retention.hours", "1", NULL));
    assert_true(kconfig_set(broker_cfg, "log.flush.interval.ms", "250", NULL));
    assert_true(kconfig_set(broker_cfg, "min.insync.replicas", "2", NULL));
    assert_true(kconfig_set(broker_cfg, "leader.imbalance.check.interval.seconds", "7", NULL));
    BrokerConfig broker;
    kconfig_bind_broker_defaults(&broker);
    kconfig_bind_fill(kconfig_bind_broker(), broker_cfg, &broker);
    assert_int_equal(broker.log.retention_ms, 3600000);
    assert_int_equal(broker.log.flush_interval_ms, 250);
    assert_int_equal(broker.leader_imbalance_check_interval_ms, 7000);

    g_autoptr(KConfig) topic_cfg = kconfig_new_topic(broker_cfg);
    assert_true(kconfig_set(topic_cfg, "segment.bytes", "1MiB", NULL));
    TopicConfig topic;
    memset(&topic, 0, sizeof topic);
    kconfig_bind_fill(kconfig_bind_topic(), topic_cfg, &topic);
    assert_int_equal(topic.min_insync_replicas, 2);
    assert_int_equal(topic.log.segment_bytes, 1048576);
    assert_int_equal(topic.log.retention_ms, 3600000);
    assert_int_equal(topic.log.flush_interval_ms, 250);
}

typedef struct {
    const char *text;
    gboolean ok;
    WorkloadKeys keys;
    guint64 key_count;
    double zipf_s;
} KeysCase;

static const KeysCase keys_cases[] = {
    {"none", TRUE, WORKLOAD_KEYS_NONE, 0, 0},
    {"uniform:10", TRUE, WORKLOAD_KEYS_UNIFORM, 10, 0},
    {"zipf:1000,1.1", TRUE, WORKLOAD_KEYS_ZIPF, 1000, 1.1},
    {"zipf: 5 , 0.5", TRUE, WORKLOAD_KEYS_ZIPF, 5, 0.5},
    {"", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
    {"uniform:0", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
    {"uniform:3,1", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
    {"zipf:10", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
    {"zipf:10,0", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
    {"zipf:10,x", FALSE, WORKLOAD_KEYS_NONE, 0, 0},
};

typedef struct {
    const char *text;
    gboolean ok;
    gint64 on_ns, off_ns;
} BurstCase;

static const BurstCase burst_cases[] = {
    {"100ms,900ms", TRUE, 100 * SIM_NS_PER_MS, 900 * SIM_NS_PER_MS},
    {" 1s , 2s ", TRUE, SIM_NS_PER_S, 2 * SIM_NS_PER_S},
    {"100,900", FALSE, 0, 0},
    {"0ms,1s", FALSE, 0, 0},
    {"1s", FALSE, 0, 0},
    {"1s,2s,3s", FALSE, 0, 0},
};

/* workload.keys and workload.burst, the workload's two shapes, parse as the
 * scenario file writes them, and their registry defaults reach the
 * workload (keyless records; 100 ms on, 900 ms off). */
static void
test_kconfig_bind_workload_shapes(void **state)
{
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(keys_cases); i++) {
        const KeysCase *c = &keys_cases[i];
        WorkloadKeys keys = WORKLOAD_KEYS_NONE;
        guint64 count = 0;
        double s = 0;
        if (kconfig_bind_parse_keys(c->text, &keys, &count, &s) != c->ok)
            fail_msg("workload.keys = '%s' should %s", c->text, c->ok ? "parse" : "be refused");
        if (!c->ok)
            continue;
        assert_int_equal(keys, c->keys);
        assert_int_equal(count, c->key_count);
        assert_true(s == c->zipf_s);
    }
    for (guint i = 0; i < G_N_ELEMENTS(burst_cases); i++) {
        const BurstCase *c = &burst_cases[i];
        gint64 on = 0, off = 0;
        if (kconfig_bind_parse_burst(c->text, &on, &off) != c->ok)
            fail_msg("workload.burst = '%s' should %s", c->text, c->ok ? "parse" : "be refused");
        if (!c->ok)
            continue;
        assert_int_equal(on, c->on_ns);
        assert_int_equal(off, c->off_ns);
    }
    WorkloadConfig workload;
    kconfig_bind_workload_defaults(&workload, "t");
    assert_string_equal(workload.topic, "t");
    assert_int_equal(workload.keys, WORKLOAD_KEYS_NONE);
    assert_int_equal(workload.burst_on_ns, 100 * SIM_NS_PER_MS);
    assert_int_equal(workload.burst_off_ns, 900 * SIM_NS_PER_MS);
    assert_int_equal(workload.txn_records, 0);
    assert_int_equal(workload.records_max, 0);
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    assert_true(kconfig_set(cfg, "workload.keys", "zipf:50,1.2", NULL));
    assert_true(kconfig_set(cfg, "workload.arrival", "bursts", NULL));
    assert_true(kconfig_set(cfg, "workload.burst", "1s,3s", NULL));
    kconfig_bind_workload_from(&workload, cfg, "orders");
    assert_string_equal(workload.topic, "orders");
    assert_int_equal(workload.keys, WORKLOAD_KEYS_ZIPF);
    assert_int_equal(workload.key_count, 50);
    assert_int_equal(workload.burst_off_ns, 3 * SIM_NS_PER_S);
}

/* The driver sends as a producer at its defaults would, records of the
 * workload's default size; the tests' cluster is the registry's on the
 * fixture's stated network. */
static void
test_kconfig_bind_driver_and_cluster_defaults(void **state)
{
    (void)state;
    DriverConfig driver;
    kconfig_bind_driver_defaults(&driver);
    assert_int_equal(driver.acks, -1);
    assert_int_equal(driver.request_timeout_ms, 30000);
    assert_int_equal(driver.max_in_flight, 5);
    assert_int_equal(driver.record_size_bytes, 100);
    ClusterConfig cluster;
    fixture_cluster_config(&cluster);
    assert_int_equal(cluster.n_brokers, 3);
    assert_int_equal(cluster.broker.min_insync_replicas, 1);
    assert_int_equal(cluster.network_latency.kind, SIM_DIST_LOGNORMAL);
    assert_int_equal(cluster.fsync_latency.kind, SIM_DIST_CONSTANT);
    assert_true(cluster.fsync_latency.a == 2.0 * SIM_NS_PER_MS);
}

/* The group runs the cooperative protocol only when every listed assignor
 * supports it, as Kafka's ConsumerCoordinator picks the highest protocol all
 * of them support. */
static void
test_kconfig_bind_rebalance_protocol_from_assignors(void **state)
{
    (void)state;
    static const struct {
        const char *list; /* NULL: the default */
        AssignorStrategy first;
        gboolean eager_listed;
    } cases[] = {
        {NULL, ASSIGNOR_RANGE, TRUE},
        {"cooperative-sticky", ASSIGNOR_COOPERATIVE_STICKY, FALSE},
        {"cooperative-sticky, range", ASSIGNOR_COOPERATIVE_STICKY, TRUE},
        {"sticky, cooperative-sticky", ASSIGNOR_STICKY, TRUE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_CONSUMER);
        if (cases[i].list != NULL)
            assert_true(kconfig_set(cfg, "partition.assignment.strategy", cases[i].list, NULL));
        ConsumerConfig config;
        kconfig_bind_consumer_from(&config, cfg, NULL);
        assert_int_equal(config.partition_assignment_strategy, cases[i].first);
        assert_int_equal(config.eager_assignor_listed, cases[i].eager_listed);
    }
    ConsumerConfig defaults;
    kconfig_bind_consumer_defaults(&defaults);
    assert_true(defaults.eager_assignor_listed);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kconfig_bind_each_key_bound_once),
        cmocka_unit_test(test_kconfig_bind_defaults_reach_fields),
        cmocka_unit_test(test_kconfig_bind_defaults_are_kafkas),
        cmocka_unit_test(test_kconfig_bind_enums_map_through_choices),
        cmocka_unit_test(test_kconfig_bind_values_cover_choices),
        cmocka_unit_test(test_kconfig_bind_fill_reads_set_values),
        cmocka_unit_test(test_kconfig_bind_text_fits_its_field),
        cmocka_unit_test(test_kconfig_bind_workload_shapes),
        cmocka_unit_test(test_kconfig_bind_driver_and_cluster_defaults),
        cmocka_unit_test(test_kconfig_bind_rebalance_protocol_from_assignors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
