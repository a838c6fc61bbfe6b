/* Tests of src/harness/kconfig_bind: every key bound at most once and to a
 * field of its type, the registry's defaults filling each struct exactly as
 * the model's own *_config_init does, ENUM and LIST keys mapped through the
 * registry's canonical choices, and set, layered and fallback values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "broker_config.h"
#include "cluster.h"
#include "consumer.h"
#include "kconfig.h"
#include "kconfig_bind.h"
#include "producer_config.h"
#include "workload.h"

/* A struct big enough for any bound config, so tests can fill by table. */
typedef union {
    BrokerConfig broker;
    TopicConfig topic;
    ProducerConfig producer;
    ConsumerConfig consumer;
} AnyConfig;

/* The model's defaults for `table`'s struct, as a model test would build it:
 * a topic that sets nothing takes the broker's values. */
static void
model_defaults(const KConfigBindTable *table, AnyConfig *out)
{
    memset(out, 0, sizeof *out);
    if (table == kconfig_bind_broker()) {
        broker_config_init(&out->broker);
    } else if (table == kconfig_bind_topic()) {
        BrokerConfig broker;
        broker_config_init(&broker);
        topic_config_from_broker(&out->topic, &broker);
    } else if (table == kconfig_bind_producer()) {
        producer_config_init(&out->producer);
    } else {
        assert_ptr_equal(table, kconfig_bind_consumer());
        consumer_config_init(&out->consumer);
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
static const char *const unbound_by_design[] = {
    "num.partitions",             /* the scenario parser's topic default */
    "default.replication.factor", /* the same */
    "partitions",                 /* [topic NAME]: the parser creates the topic with it */
    "replication.factor",         /* the same */
    "group.id",                   /* the parser makes it the group of a [consumer-group] */
};

static gboolean
unbound_by_design_has(const char *name, KConfigScope scope)
{
    /* The consumer's client.id names nothing: members are named by their
     * section (consumer-NAME-K), and ConsumerConfig has no such field. */
    if (scope == KCONFIG_SCOPE_CONSUMER && strcmp(name, "client.id") == 0)
        return TRUE;
    for (guint i = 0; i < G_N_ELEMENTS(unbound_by_design); i++) {
        if (strcmp(unbound_by_design[i], name) == 0)
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
                           b->kind == KCONFIG_BIND_MS || b->kind == KCONFIG_BIND_MS_OR_NEVER;
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
    assert_int_equal(n_tables, 4);
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

/* With nothing set, every bound field gets the value the model's own
 * *_config_init gives it: the C defaults and the registry cannot drift. */
static void
test_kconfig_bind_defaults_match_models(void **state)
{
    (void)state;
    guint n_tables = 0;
    const KConfigBindTable *const *tables = kconfig_bind_tables(&n_tables);
    for (guint t = 0; t < n_tables; t++) {
        const KConfigBindTable *table = tables[t];
        AnyConfig expected, filled;
        model_defaults(table, &expected);
        model_defaults(table, &filled);
        /* Poison the bound fields so that a binding that writes nothing fails. */
        for (guint i = 0; i < table->n_bindings; i++)
            if (table->bindings[i].kind != KCONFIG_BIND_TEXT)
                memset((guint8 *)&filled + table->bindings[i].offset, 0x5a,
                       table->bindings[i].width);
        g_autoptr(KConfig) cfg = empty_config(table);
        kconfig_bind_fill(table, cfg, &filled);
        for (guint i = 0; i < table->n_bindings; i++) {
            const KConfigBinding *b = &table->bindings[i];
            const guint8 *want = (const guint8 *)&expected + b->offset;
            const guint8 *got = (const guint8 *)&filled + b->offset;
            if (memcmp(want, got, b->width) != 0)
                fail_msg("%s: the registry's default of %s is not the model's", table->name,
                         b->key);
            if (b->has_explicit)
                assert_false(*(const gboolean *)((const guint8 *)&filled + b->explicit_offset));
        }
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

/* Every value table maps canonical choices only, and every canonical choice
 * of its key (cooperative-sticky aside, which the parser refuses); a null
 * entry exactly where the key may be null. */
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
                if (canonical != NULL || strcmp(key->choices[c].value, "cooperative-sticky") == 0)
                    continue;
                gboolean found = FALSE;
                for (guint v = 0; v < b->n_values; v++)
                    found = found || g_strcmp0(b->values[v].choice, key->choices[c].value) == 0;
                if (!found)
                    fail_msg("%s: choice %s has no model value", b->key, key->choices[c].value);
            }
        }
    }
    assert_int_equal(mapped_tables, 6);
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
    producer_config_init(&producer);
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
    broker_config_init(&broker);
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

/* Field by field: a SimDist has padding after its kind. */
static void
assert_dist_equal(SimDist want, SimDist got)
{
    assert_int_equal(want.kind, got.kind);
    assert_true(want.a == got.a);
    assert_true(want.b == got.b);
}

/* ksim's own workload and hardware keys are read by the scenario parser
 * into its own structs, and the runner copies those into the models'; the
 * models' defaults for them must still be the registry's. The one exception
 * is network.latency: cluster_config_init gives model tests and benchmarks a
 * jittered lognormal:500us,0.3 network, while a scenario's default is
 * const:100us; they are two deliberate settings, not one default. */
static void
test_kconfig_bind_ksim_defaults_match_models(void **state)
{
    (void)state;
    g_autoptr(KConfig) workload_cfg = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    WorkloadConfig workload;
    workload_config_init(&workload, "t");
    assert_true(workload.rate_per_s == kconfig_get_double(workload_cfg, "workload.rate"));
    assert_string_equal(kconfig_get_string(workload_cfg, "workload.arrival"), "constant");
    assert_int_equal(workload.arrival, WORKLOAD_ARRIVAL_CONSTANT);
    assert_string_equal(kconfig_get_string(workload_cfg, "workload.keys"), "none");
    assert_int_equal(workload.keys, WORKLOAD_KEYS_NONE);
    assert_dist_equal(kconfig_get_dist(workload_cfg, "workload.record.size"), workload.record_size);
    assert_int_equal(workload.partition, kconfig_get_int64(workload_cfg, "workload.partition"));
    assert_string_equal(kconfig_get_string(workload_cfg, "workload.send"), "async");
    assert_false(workload.send_sync);
    assert_int_equal(workload.start_ns, kconfig_get_duration_ns(workload_cfg, "workload.start"));
    g_autofree char *burst =
        g_strdup_printf("%" G_GINT64_FORMAT "ms,%" G_GINT64_FORMAT "ms",
                        workload.burst_on_ns / 1000000, workload.burst_off_ns / 1000000);
    assert_string_equal(kconfig_get_string(workload_cfg, "workload.burst"), burst);

    g_autoptr(KConfig) cluster_cfg = kconfig_new(KCONFIG_SCOPE_CLUSTER);
    ClusterConfig cluster;
    cluster_config_init(&cluster);
    assert_int_equal(cluster.n_brokers, kconfig_get_int64(cluster_cfg, "brokers"));
    assert_int_equal(cluster.network_bandwidth_bytes_per_s,
                     kconfig_get_bytes(cluster_cfg, "network.bandwidth"));
    assert_dist_equal(kconfig_get_dist(cluster_cfg, "disk.fsync.latency"), cluster.fsync_latency);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kconfig_bind_each_key_bound_once),
        cmocka_unit_test(test_kconfig_bind_defaults_match_models),
        cmocka_unit_test(test_kconfig_bind_enums_map_through_choices),
        cmocka_unit_test(test_kconfig_bind_values_cover_choices),
        cmocka_unit_test(test_kconfig_bind_fill_reads_set_values),
        cmocka_unit_test(test_kconfig_bind_ksim_defaults_match_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
