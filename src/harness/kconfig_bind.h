/*
 * kconfig_bind: where each registry key's value goes in a model's config
 * struct, and one function that fills a struct from a KConfig.
 *
 * The registry (kconfig.h) knows every key's name, type, default, range and
 * choices; a binding table adds, per key, the field it fills (its offset and
 * width) and the conversion (an integer, a bool, whole ms, bytes, an ENUM's
 * canonical choice mapped to the model's value). The models cannot see the
 * harness (the floors link only downward), so the tables live here, above
 * both, and the models keep plain structs.
 *
 * The scenario parser checks the values and hands the runner a KConfig per
 * group (broker, topic, producer, workload, consumer, consumer group,
 * cluster hardware); the runner binds each with these tables, so no key is
 * converted by hand twice. Each key of a scope is bound at most once. A key
 * no table binds is one the scenario parser resolves itself against other
 * groups (num.partitions, group.id, a producer's topic...), one the runner's
 * consumer-group members read from the parse result (members.start...), one
 * ksim models only at its default (only_default), or a fallback a bound key
 * reads through (log.roll.hours behind log.roll.ms); test_kconfig_bind checks
 * that rule for every key of the registry.
 *
 * The registry is the only place a default lives: the models have no
 * *_config_init of their own for Kafka's keys, and every user of a model
 * config (the runner, the benchmarks, the tests) starts from one function
 * per struct below, kconfig_bind_X_defaults, or fills it from a scenario's
 * KConfig with kconfig_bind_X_from. Fields that are no key stay zero there,
 * or take the model's own structural value (broker_id is set per broker by
 * the cluster; ZooKeeper's tick and snapshot count, which ksim has no key
 * for, are zk_server_config_init's).
 */
#ifndef KSIM_KCONFIG_BIND_H
#define KSIM_KCONFIG_BIND_H

#include "broker_config.h"
#include "cluster.h"
#include "consumer.h"
#include "driver.h"
#include "kconfig.h"
#include "plog.h"
#include "producer_config.h"
#include "workload.h"

#include <glib.h>

typedef enum {
    KCONFIG_BIND_INT,         /* INT, LONG: the integer */
    KCONFIG_BIND_BOOL,        /* BOOL: a gboolean */
    KCONFIG_BIND_MS,          /* DURATION: whole ms (kconfig_get_duration_ms) */
    KCONFIG_BIND_MS_OR_NEVER, /* DURATION: whole ms; null or Long.MAX_VALUE ("never"): -1 */
    KCONFIG_BIND_BYTES,       /* SIZE: bytes */
    KCONFIG_BIND_ENUM,        /* ENUM: the canonical choice, mapped through `values` */
    KCONFIG_BIND_LIST_FIRST,  /* LIST: the first canonical value, mapped through `values` */
    KCONFIG_BIND_TEXT,        /* STRING: into a char array; null leaves the field as it is */
    KCONFIG_BIND_DOUBLE,      /* DOUBLE: a double */
    KCONFIG_BIND_PER_MILLION, /* DOUBLE in 0..1: parts per million, rounded */
    KCONFIG_BIND_NS,          /* DURATION: ns (kconfig_get_duration_ns) */
    KCONFIG_BIND_NS_OR_NEVER, /* DURATION: ns; null: never (G_MAXINT64) */
    KCONFIG_BIND_DIST,        /* TIME_DIST (ns), SIZE_DIST (bytes): a SimDist */
} KConfigBindKind;

/* What one canonical choice of an ENUM or LIST key means to the model. */
typedef struct {
    const char *choice; /* a canonical choice of the key; NULL: the key's null */
    gint64 value;
} KConfigBindValue;

/* One key bound to one field. */
typedef struct {
    const char *key;
    KConfigBindKind kind;
    gsize offset; /* of the field in the struct */
    gsize width;  /* sizeof the field: 1, 2, 4 or 8 for numbers; the array for TEXT */
    const KConfigBindValue *values; /* ENUM, LIST_FIRST */
    guint n_values;
    /* Kafka rules that depend on whether the user wrote the key (the
     * producer's enable.idempotence, delivery.timeout.ms) read a gboolean
     * set to kconfig_is_set. */
    gboolean has_explicit;
    gsize explicit_offset;
} KConfigBinding;

/* The bindings of one model config struct. */
typedef struct {
    const char *name; /* "broker", "topic", "producer", "consumer", "cluster" */
    KConfigScope scope;
    gsize struct_size;
    const KConfigBinding *bindings;
    guint n_bindings;
} KConfigBindTable;

/* BrokerConfig from the [cluster] broker keys (the log.* keys into its log). */
const KConfigBindTable *kconfig_bind_broker(void);
/* TopicConfig from a [topic NAME]'s keys layered over the broker's. */
const KConfigBindTable *kconfig_bind_topic(void);
/* ProducerConfig from a [producer NAME]'s Kafka keys. */
const KConfigBindTable *kconfig_bind_producer(void);
/* ConsumerConfig from a [consumer-group NAME]'s Kafka keys. */
const KConfigBindTable *kconfig_bind_consumer(void);
/* ConsumerConfig.processing_mode from a [consumer-group NAME]'s
 * processing.mode; its other keys are the runner's members'. */
const KConfigBindTable *kconfig_bind_consumer_group(void);
/* WorkloadConfig from a [producer NAME]'s workload.* keys. The two keys
 * whose values are shapes rather than numbers, workload.burst and
 * workload.keys, are read by kconfig_bind_workload_from with the parsers
 * below; topic, instances and transaction.records belong to the scenario
 * parser, which resolves them against other groups. */
const KConfigBindTable *kconfig_bind_workload(void);
/* ClusterConfig's hardware (brokers, network, disk) from the [cluster]
 * ksim keys; its BrokerConfig is the broker table's. */
const KConfigBindTable *kconfig_bind_cluster(void);

/* Every table, for tests. (transfer none) */
const KConfigBindTable *const *kconfig_bind_tables(guint *n_tables);

/* The binding of `key` in `table`, or NULL. (transfer none) */
const KConfigBinding *kconfig_bind_lookup(const KConfigBindTable *table, const char *key);

/* Writes every bound key's effective value (set, layered or default) from
 * `cfg` into the struct at `target`, which the caller initialised (fields no
 * key binds keep their values). `cfg` must hold the table's scope. */
void kconfig_bind_fill(const KConfigBindTable *table, const KConfig *cfg, void *target);

/* ---- The model structs, from the registry ----
 *
 * Each _from zeroes the struct and fills every bound field from `cfg`
 * (set, layered or default); each _defaults does the same with every key at
 * its registry default. The struct needs no other initialisation. */

void kconfig_bind_broker_from(BrokerConfig *config, const KConfig *cfg);
void kconfig_bind_broker_defaults(BrokerConfig *config);
/* A topic's config from its KConfig (kconfig_new_topic over the broker's).
 * A topic that sets nothing takes the broker's (topic_config_from_broker). */
void kconfig_bind_topic_from(TopicConfig *config, const KConfig *cfg);
/* A partition log's config: the broker's log.* defaults. */
void kconfig_bind_log_defaults(PlogConfig *config);
void kconfig_bind_producer_from(ProducerConfig *config, const KConfig *cfg);
void kconfig_bind_producer_defaults(ProducerConfig *config);
/* The Kafka keys from `cfg` (scope CONSUMER), processing.mode from `group`
 * (scope CONSUMER_GROUP); NULL for either: its registry defaults. */
void kconfig_bind_consumer_from(ConsumerConfig *config, const KConfig *cfg, const KConfig *group);
void kconfig_bind_consumer_defaults(ConsumerConfig *config);
/* The hardware from `hardware` (scope CLUSTER) and the brokers from
 * `broker` (scope BROKER); NULL for either: its registry defaults. */
void kconfig_bind_cluster_from(ClusterConfig *config, const KConfig *hardware,
                               const KConfig *broker);
void kconfig_bind_cluster_defaults(ClusterConfig *config);
/* workload.burst: "ON,OFF", two positive durations with units. */
gboolean kconfig_bind_parse_burst(const char *text, gint64 *on_ns, gint64 *off_ns);
/* workload.keys: none, uniform:K or zipf:K,S (K >= 1, S > 0). */
gboolean kconfig_bind_parse_keys(const char *text, WorkloadKeys *keys, guint64 *key_count,
                                 double *zipf_s);
/* The workload from `cfg` (scope WORKLOAD), writing `topic`; no record cap
 * and no transactions (the runner sets those). */
void kconfig_bind_workload_from(WorkloadConfig *config, const KConfig *cfg, const char *topic);
/* The workload.* defaults, writing `topic`; no record cap and no
 * transactions (transaction.records applies only to a transactional
 * producer, which the scenario parser decides). */
void kconfig_bind_workload_defaults(WorkloadConfig *config, const char *topic);
/* The test driver as a producer at its defaults would send: acks,
 * request.timeout.ms and max.in.flight.requests.per.connection are the
 * producer's, the record size workload.record.size's (a constant). */
void kconfig_bind_driver_defaults(DriverConfig *config);

#endif
