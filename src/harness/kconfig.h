/*
 * kconfig: the registry of configuration keys ksim understands, and KConfig,
 * a set of values for them layered over the defaults.
 *
 * Kafka's keys are spelt exactly as Kafka spells them and carry Kafka's
 * defaults (Apache Kafka 3.x), so a user can paste from their own properties
 * files. ksim's own keys (the scenario, the simulated cluster's hardware, the
 * workload and faults) live in the same registry, in scopes of their own, so
 * one validator and one "did you mean" serve every group of a scenario file.
 *
 * Values are kept as the user wrote them (so printed settings read like the
 * file) and are parsed by the typed getters:
 *
 *  - INT, LONG: decimal integers within the key's range, as Kafka's ConfigDef.
 *  - BOOL: "true" or "false" in any case, as Kafka (not yes/no/1/0).
 *  - DURATION: Kafka's *.ms (*.minutes, *.hours, *.seconds) keys take a bare
 *    number in their own unit, as in Kafka, or a number with a unit (ns, us,
 *    ms, s, m, h) as a ksim extension: linger.ms = 5 and linger.ms = 5ms are the
 *    same. A value with a unit must be a whole number of the key's unit. ksim's
 *    own durations (unit_ns == 0) require a unit, except for a bare 0, so that
 *    "duration = 60" is an error rather than a silent guess.
 *  - SIZE: bytes, a bare number or with a unit (16KiB, 1MiB, 10MB).
 *  - ENUM, LIST: one (or a comma-separated list) of the key's choices,
 *    matched case-insensitively; several spellings may share a meaning
 *    (acks "-1" means "all"), which the getters return.
 *  - TIME_DIST, SIZE_DIST: a distribution as sim_dist_parse reads it; every
 *    time in a TIME_DIST needs a unit (lognormal:500us,0.3).
 *
 * Bare numbers, one rule for every key: a number without a unit counts in the
 * key's own unit (a Kafka key's ms, s, minutes or hours; bytes for sizes) and
 * must then be a whole decimal number ("1e3" and "1.5" need a unit); where a
 * unit is required (ksim's durations, every time of a time distribution) a
 * bare number other than 0 is refused, "1e19" as much as "5".
 *
 * Bounds, derived from what the engine represents: virtual time is an int64
 * count of nanoseconds, so every duration and every time of a distribution is
 * at most KCONFIG_TIME_NS_MAX (a Kafka key's "never", Long.MAX_VALUE, stays
 * accepted where it is the key's default); every size of a size distribution
 * is at most KCONFIG_SIZE_DIST_MAX. Messages state the bound.
 *  - A key whose Kafka default is null accepts "null".
 *
 * Layering: a value set in the KConfig wins; otherwise a topic key with an
 * `overrides` broker key takes the broker configuration's value (as a Kafka
 * topic without an override uses the broker default); otherwise the registry
 * default. A null value then follows the key's `fallback` (log.roll.ms null ->
 * log.roll.hours), as Kafka's broker does.
 *
 * Lookups scan the registry linearly: they happen when scenarios are read and
 * models are configured, never per event. Models should read their settings
 * once into plain fields: kconfig_bind.h fills the models' config structs.
 */
#ifndef KSIM_KCONFIG_H
#define KSIM_KCONFIG_H

#include "sim_rng.h"

#include <glib.h>

/* The longest time a duration or any time of a time distribution may give:
 * 100000 hours (about 11.4 years), in ns. Virtual time is an int64 count of
 * ns (about 292 years); keeping each single time 25 times below that leaves
 * room for the sums a run makes (a fault's `at` plus its duration, the end of
 * the run plus a pending timer) without overflow. */
#define KCONFIG_TIME_NS_MAX (G_GINT64_CONSTANT(100000) * 3600 * 1000000000)
/* The largest value of a size distribution, in bytes: Kafka's record and
 * batch sizes are int32s on the wire. */
#define KCONFIG_SIZE_DIST_MAX ((gint64)G_MAXINT32)

/* Where a key may be written. Scopes are bits so a scenario group, which
 * takes keys of several scopes, is described by a mask. */
typedef enum {
    KCONFIG_SCOPE_BROKER = 1u << 0,         /* Kafka broker configs: [cluster] */
    KCONFIG_SCOPE_TOPIC = 1u << 1,          /* Kafka topic configs: [topic NAME] */
    KCONFIG_SCOPE_PRODUCER = 1u << 2,       /* Kafka producer configs: [producer NAME] */
    KCONFIG_SCOPE_CONSUMER = 1u << 3,       /* Kafka consumer configs: [consumer-group NAME] */
    KCONFIG_SCOPE_SCENARIO = 1u << 4,       /* ksim: [scenario] */
    KCONFIG_SCOPE_CLUSTER = 1u << 5,        /* ksim: the simulated hardware, [cluster] */
    KCONFIG_SCOPE_WORKLOAD = 1u << 6,       /* ksim: a producer's workload, [producer NAME] */
    KCONFIG_SCOPE_CONSUMER_GROUP = 1u << 7, /* ksim: a group's members, [consumer-group NAME] */
    KCONFIG_SCOPE_FAULT = 1u << 8,          /* ksim: [fault NAME] */
    KCONFIG_SCOPE_RANDOM_FAULTS = 1u << 9,  /* ksim: [random-faults] */
} KConfigScope;

#define KCONFIG_SCOPES_KAFKA                                                                       \
    (KCONFIG_SCOPE_BROKER | KCONFIG_SCOPE_TOPIC | KCONFIG_SCOPE_PRODUCER | KCONFIG_SCOPE_CONSUMER)
#define KCONFIG_SCOPES_ALL ((1u << 10) - 1u)

typedef enum {
    KCONFIG_TYPE_INT,       /* Kafka int: 32-bit */
    KCONFIG_TYPE_LONG,      /* Kafka long: 64-bit */
    KCONFIG_TYPE_DOUBLE,    /* a finite real */
    KCONFIG_TYPE_BOOL,      /* true | false */
    KCONFIG_TYPE_STRING,    /* any text */
    KCONFIG_TYPE_ENUM,      /* one of `choices` */
    KCONFIG_TYPE_LIST,      /* comma-separated; each one of `choices` when given */
    KCONFIG_TYPE_DURATION,  /* a time; see above */
    KCONFIG_TYPE_SIZE,      /* bytes */
    KCONFIG_TYPE_TIME_DIST, /* a distribution of durations */
    KCONFIG_TYPE_SIZE_DIST, /* a distribution of sizes in bytes */
} KConfigType;

typedef enum {
    KCONFIG_FLAG_KSIM = 1u << 0,     /* ksim's own key, not one of Kafka's */
    KCONFIG_FLAG_REQUIRED = 1u << 1, /* a scenario must give it (no default) */
} KConfigFlags;

/* One accepted spelling of an ENUM or LIST value and what it means. */
typedef struct {
    const char *value;     /* as a user may write it */
    const char *canonical; /* its meaning; NULL when the same as `value` */
} KConfigChoice;

/* One registry entry. Entries are static and immutable. */
typedef struct {
    const char *name; /* exactly as Kafka spells it */
    KConfigScope scope;
    KConfigType type;
    const char *default_value; /* as text; NULL is Kafka's null */
    /* INT, LONG, DURATION (in the key's unit, or ns when unit_ns is 0), SIZE,
     * DOUBLE: the inclusive range of accepted values. STRING: a positive max
     * is the longest value in bytes (0: any length). */
    gint64 min;
    gint64 max;
    gint64 unit_ns;               /* DURATION: what a bare number counts; 0: unit required */
    const KConfigChoice *choices; /* ENUM, LIST: ended by {NULL, NULL}; NULL: any (LIST) */
    const char *overrides;        /* TOPIC: the broker key this one overrides */
    const char *fallback;         /* when the value is null, the key that stands in */
    guint flags;                  /* KConfigFlags */
    const char *doc;              /* one line */
    /* Non-NULL: ksim models the default value only, and refuses another one
     * with this reason (what it does not model). */
    const char *only_default;
    /* Non-NULL: Kafka's key, which a scenario does not set, refused with
     * this reason (what stands for it in ksim). */
    const char *refused;
} KConfigKey;

/* ---- The registry ---- */

/* Every key, in a fixed order (by scope, then as Kafka's docs list them).
 * (transfer none) */
const KConfigKey *kconfig_registry(guint *n_keys);

/* The key called `name` in one of the scopes of `scope_mask`, or NULL. A name
 * may exist in several scopes (request.timeout.ms for producers and
 * consumers, min.insync.replicas for brokers and topics); the first in
 * registry order among `scope_mask` is returned. (transfer none) */
const KConfigKey *kconfig_lookup(const char *name, guint scope_mask);

/* The scopes (a mask) in which a key called `name` exists; 0 when unknown. */
guint kconfig_scopes_of(const char *name);

/* "broker", "topic", "producer", "consumer", "scenario", "cluster",
 * "workload", "consumer group", "fault", "random faults". */
const char *kconfig_scope_name(KConfigScope scope);

/* The key of `scope_mask` closest to `unknown` by Levenshtein distance,
 * ignoring case, if it is within max(2, strlen(unknown) / 4); else NULL. Ties
 * go to the earlier key in registry order. (transfer none) */
const char *kconfig_suggest(const char *unknown, guint scope_mask);

/* The same rule over any list of names (group kinds, topic names...).
 * Returns one of `candidates` or NULL. (transfer none) */
const char *kconfig_suggest_among(const char *unknown, const char *const *candidates,
                                  guint n_candidates);

/* Case-insensitive Levenshtein distance. */
guint kconfig_edit_distance(const char *a, const char *b);

/* Checks `value` against `key`'s type, range and choices. On failure sets a
 * message that does not name the key (callers prefix their own location) and
 * says what form was expected. */
gboolean kconfig_check_value(const KConfigKey *key, const char *value, GError **error);

/* Parses a time as ksim's own durations take it (a unit required, a bare 0
 * allowed; at most KCONFIG_TIME_NS_MAX) into ns. FALSE with a message quoting
 * `text` otherwise. For values that are not keys of their own
 * (workload.burst's ON,OFF). */
gboolean kconfig_parse_time_ns(const char *text, gint64 *out_ns, GError **error);

/* Names and values longer than this are echoed in messages cut short. */
#define KCONFIG_ECHO_CHARS_MAX 60
/* `text` as a message quotes it: whole when at most KCONFIG_ECHO_CHARS_MAX
 * characters, else its first KCONFIG_ECHO_CHARS_MAX and "…", so a
 * 100,000-character key does not fill the terminal. (transfer full) */
char *kconfig_echo(const char *text);
/* `message` with every quoted value in it ('...' holding no space) longer
 * than KCONFIG_ECHO_CHARS_MAX cut short as kconfig_echo cuts it: the parsers
 * of durations, sizes, distributions and workload shapes quote what they
 * refuse whole. (transfer full) */
char *kconfig_echo_quoted(const char *message);

/* What a value of `key` looks like, for messages and docs, e.g. "an integer
 * from 1 to 2147483647" or "one of: all, -1, 0, 1". (transfer full) */
char *kconfig_describe_form(const KConfigKey *key);

/* The meaning of an ENUM value (its canonical spelling), or NULL when `value`
 * is not one of the key's choices. (transfer none) */
const char *kconfig_choice_canonical(const KConfigKey *key, const char *value);

/* ---- KConfig: values layered over the registry ---- */

typedef struct KConfig KConfig;

/* An empty configuration for keys of `scope_mask`. (transfer full) */
KConfig *kconfig_new(guint scope_mask);
/* An empty topic configuration whose unset keys take `broker`'s values for the
 * broker keys they override. `broker` is copied. (transfer full) */
KConfig *kconfig_new_topic(const KConfig *broker);
void kconfig_free(KConfig *cfg);
/* A deep copy, parent included. (transfer full) */
KConfig *kconfig_copy(const KConfig *cfg);

guint kconfig_scope_mask(const KConfig *cfg);

/* Sets `key` to `value` after checking both. FALSE with a message naming the
 * key ("acks: 'two' is not one of: all, -1, 0, 1") for an unknown key (with a
 * suggestion) or a bad value; the configuration is then unchanged. */
gboolean kconfig_set(KConfig *cfg, const char *key, const char *value, GError **error);
/* Removes an explicit value: the key returns to its layered default. */
void kconfig_unset(KConfig *cfg, const char *key);

/* TRUE when `key` was set explicitly in this configuration (not inherited,
 * not a default). The key must exist in the configuration's scopes. */
gboolean kconfig_is_set(const KConfig *cfg, const char *key);
/* TRUE when the key's effective value, after layering and fallbacks, is null. */
gboolean kconfig_is_null(const KConfig *cfg, const char *key);
/* The effective value as written (or the default), NULL for null.
 * (transfer none: valid until the configuration changes) */
const char *kconfig_get_value(const KConfig *cfg, const char *key);

/* Typed getters. Each asserts that the key exists in the configuration's
 * scopes, that its type fits, and that the effective value is not null
 * (check kconfig_is_null first for keys that default to null). */
/* INT, LONG, SIZE. */
gint64 kconfig_get_int64(const KConfig *cfg, const char *key);
/* BOOL. */
gboolean kconfig_get_bool(const KConfig *cfg, const char *key);
/* DOUBLE, INT, LONG. */
double kconfig_get_double(const KConfig *cfg, const char *key);
/* STRING, or ENUM (its canonical meaning: acks -1 reads as "all"). Unlike
 * the others, returns NULL for null. (transfer none) */
const char *kconfig_get_string(const KConfig *cfg, const char *key);
/* LIST: the canonical values in order. (transfer full) */
GStrv kconfig_get_list(const KConfig *cfg, const char *key);
/* DURATION, in ns (ms keys times 10^6). A negative Kafka value (-1, "no
 * limit") is returned as -1; values beyond the gint64 range of ns (Kafka's
 * Long.MAX_VALUE ms) saturate at G_MAXINT64. */
gint64 kconfig_get_duration_ns(const KConfig *cfg, const char *key);
/* DURATION, in whole milliseconds, as Kafka's *.ms keys count: -1 (no limit)
 * stays -1, and Kafka's Long.MAX_VALUE stays G_MAXINT64, so "never" survives
 * the conversion; a fallback in hours or minutes is converted. */
gint64 kconfig_get_duration_ms(const KConfig *cfg, const char *key);
/* SIZE, in bytes (may be -1 where Kafka allows it: log.retention.bytes). */
gint64 kconfig_get_bytes(const KConfig *cfg, const char *key);
/* TIME_DIST (ns) or SIZE_DIST (bytes). */
SimDist kconfig_get_dist(const KConfig *cfg, const char *key);

/* The keys set explicitly in this configuration, sorted by name, for
 * printing settings. (transfer container: the strings are the registry's) */
GPtrArray *kconfig_keys_sorted(const KConfig *cfg);

/* Checks the configuration's bookkeeping; aborts through KSIM_ASSERT. */
void kconfig_check_invariants(const KConfig *cfg);

#define KSIM_KCONFIG_ERROR (ksim_kconfig_error_quark())
GQuark ksim_kconfig_error_quark(void);
typedef enum {
    KSIM_KCONFIG_ERROR_UNKNOWN_KEY,
    KSIM_KCONFIG_ERROR_BAD_VALUE,
} KsimKconfigErrorCode;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(KConfig, kconfig_free)

#endif
