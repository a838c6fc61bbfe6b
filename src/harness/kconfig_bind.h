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
 * Each key of a scope is bound at most once. A key no table binds is one the
 * scenario parser reads itself (num.partitions, group.id...), one ksim
 * models only at its default (only_default), or a fallback a bound key reads
 * through (log.roll.hours behind log.roll.ms); test_kconfig_bind checks that rule
 * for every key of the registry.
 *
 * The models' *_config_init functions keep Kafka's defaults in C, because
 * model tests and the benchmarks build configs without the harness;
 * test_kconfig_bind fills each struct from the registry's defaults and compares
 * every bound field with the model's own default, so the two cannot drift.
 */
#ifndef KSIM_KCONFIG_BIND_H
#define KSIM_KCONFIG_BIND_H

#include "kconfig.h"

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
    const char *name; /* "broker", "topic", "producer", "consumer" */
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

/* Every table, for tests. (transfer none) */
const KConfigBindTable *const *kconfig_bind_tables(guint *n_tables);

/* The binding of `key` in `table`, or NULL. (transfer none) */
const KConfigBinding *kconfig_bind_lookup(const KConfigBindTable *table, const char *key);

/* Writes every bound key's effective value (set, layered or default) from
 * `cfg` into the struct at `target`, which the caller initialised (fields no
 * key binds keep their values). `cfg` must hold the table's scope. */
void kconfig_bind_fill(const KConfigBindTable *table, const KConfig *cfg, void *target);

#endif
