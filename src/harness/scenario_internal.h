/*
 * scenario_internal: what the files of the scenario module share, and nothing
 * outside src/harness/ includes. The module reads a file in stages, one file
 * each:
 *
 *   scenario_ini.c      the text -> RawGroup list (groups, entries, lines),
 *                       the group kinds, and the located messages every
 *                       stage uses
 *   scenario_expect.c   [vary] dimensions, keys written bare or GROUP:key
 *                       (also for --set), and [expect] expectations
 *   scenario.c          building and validating each run (ScenarioVariant)
 *                       from the groups: [scenario], [cluster], topics; the
 *                       Scenario lifecycle, --set and the invariants
 *   scenario_clients.c  [producer NAME] with its workload, [consumer-group NAME]
 *   scenario_faults.c   [fault NAME], [random-faults] and their targets
 */
#ifndef KSIM_SCENARIO_INTERNAL_H
#define KSIM_SCENARIO_INTERNAL_H

#include "scenario.h"

#include <glib.h>

#define SCENARIO_FILE_BYTES_MAX (4u << 20)
/* The UTF-8 byte-order mark, skipped at the start of a file. */
#define UTF8_BOM "\xEF\xBB\xBF"

#define SCENARIO_VARIANTS_MAX 1024u
#define SCENARIO_VARY_VALUES_MAX 256u
/* Kafka's limit on topic names; used for every NAME. */
#define SCENARIO_NAME_LENGTH_MAX 249u

/* ---- Group kinds (scenario_ini.c) ---- */

typedef enum {
    GROUP_SCENARIO,
    GROUP_CLUSTER,
    GROUP_TOPIC,
    GROUP_PRODUCER,
    GROUP_CONSUMER_GROUP,
    GROUP_FAULT,
    GROUP_RANDOM_FAULTS,
    GROUP_VARY,
    GROUP_EXPECT,
    GROUP_BROKER, /* [broker N]: broker N's own broker keys over [cluster]'s */
    GROUP_KIND_COUNT,
} GroupKind;

typedef struct {
    const char *name;
    gboolean named;     /* [KIND NAME] rather than [KIND] */
    guint scopes;       /* configuration keys it takes; 0: free-form keys */
    gboolean bare_vary; /* a bare [vary] or --set key reaches it */
    const char *example;
} GroupKindInfo;

/* Indexed by GroupKind. */
extern const GroupKindInfo SCENARIO_GROUP_KINDS[GROUP_KIND_COUNT];

/* ---- Raw groups: the file's text, group by group (scenario_ini.c) ---- */

typedef struct {
    char *key;
    char *value;
    guint line;   /* 1-based; 0 when it did not come from a file line */
    char *origin; /* NULL: the file; else the --set assignment that wrote it */
} RawEntry;

typedef struct {
    char *name; /* "topic orders", white space normalized */
    GroupKind kind;
    char *object;       /* "orders"; NULL for unnamed kinds */
    guint line;         /* 0 for an implicit [scenario] or [cluster] */
    GPtrArray *entries; /* RawEntry*, file order */
} RawGroup;

/* A new empty group; `object` is NULL exactly for unnamed kinds.
 * (transfer full) */
RawGroup *scenario_raw_group_new(const char *name, GroupKind kind, const char *object,
                                 guint line);
/* The group list's free function. */
void scenario_raw_group_free(gpointer data);
/* A deep copy of a RawGroup* array. (transfer full) */
GPtrArray *scenario_groups_copy(const GPtrArray *groups);
/* The entry of `key` in `group`, or NULL. (transfer none) */
RawEntry *scenario_group_find_entry(const RawGroup *group, const char *key);
/* Writes `key = value` into a group as if the file said so at `line`. */
void scenario_group_set(RawGroup *group, const char *key, const char *value, guint line,
                        const char *origin);
/* Appends an empty [broker N] (line 0): a --set "broker N:KEY=VALUE" gives
 * broker N a key of its own where the file has no such group. */
void scenario_groups_add_broker(GPtrArray *groups, guint id);
/* The index of the group named `name`, or -1. */
gint scenario_groups_find(const GPtrArray *groups, const char *name);
/* The group of an unnamed kind, or NULL. (transfer none) */
RawGroup *scenario_groups_find_kind(const GPtrArray *groups, GroupKind kind);

/* ---- [vary] dimensions (scenario_expect.c) ---- */

typedef struct {
    char *key;         /* as canonical text: "acks" or "topic orders:min.insync.replicas" */
    char *group;       /* NULL for a bare key */
    char *name;        /* the configuration key */
    GPtrArray *values; /* char* */
    guint line;
    GArray *targets; /* guint indexes into the groups */
} VaryDim;

/* ---- The scenario and one run ---- */

struct Scenario {
    char *path;
    char *display_name;
    char *sha256;
    char *text; /* the file's bytes as read (valid UTF-8, no NUL) */
    gsize text_length;
    char *name;
    char *description;
    guint64 seed;
    GPtrArray *groups;    /* RawGroup* */
    GPtrArray *vary;      /* VaryDim* */
    GPtrArray *expects;   /* ScenarioExpect* */
    GPtrArray *overrides; /* char* */
    guint variant_count;
};

struct ScenarioVariant {
    guint index;
    char *label;
    GPtrArray *settings; /* ScenarioSetting* */
    char *name;
    char *description;
    gint64 duration_ns;
    gint64 quiet_ns;
    guint64 seed;
    gboolean paranoid;
    ScenarioCluster cluster;
    GPtrArray *topics;          /* ScenarioTopic* */
    GPtrArray *producers;       /* ScenarioProducer* */
    GPtrArray *consumer_groups; /* ScenarioConsumerGroup* */
    GPtrArray *faults;          /* ScenarioFault* */
    ScenarioRandomFaults *random_faults;
};

/* ---- Locations and messages (scenario_ini.c) ---- */

typedef struct {
    const char *file;
    guint line;         /* 0: no line */
    const char *origin; /* a --set assignment, shown in place of the line */
    const char *group;
    const char *key;
} Loc;

/* Sets `error` to "FILE:LINE: [GROUP] KEY: message" (see scenario.h). */
void scenario_loc_error(GError **error, KsimScenarioErrorCode code, const Loc *loc,
                        const char *format, ...) G_GNUC_PRINTF(4, 5);
Loc scenario_loc_group(const Scenario *s, const RawGroup *group);
Loc scenario_loc_entry(const Scenario *s, const RawGroup *group, const RawEntry *entry);
/* Where `key` of `group` was set, or the group itself (naming the key) when
 * the value is a default. */
Loc scenario_loc_key(const Scenario *s, const RawGroup *group, const char *key);
/* "; did you mean 'X'?" or "". (transfer full) */
char *scenario_did_you_mean(const char *suggestion);
/* The group a scope's keys go in: "[cluster]", "[topic NAME]", ... */
const char *scenario_scope_home(KConfigScope scope);
/* Why `key` is not a key of `scopes`: it belongs elsewhere, or it is
 * misspelt. (transfer full) */
char *scenario_unknown_key_message(const char *key, guint scopes);
/* "a  b\t c" -> "a b c". (transfer full) */
char *scenario_normalize_space(const char *text);

/* ---- Reading the text (scenario_ini.c) ---- */

/* Refuses text too large, with a NUL byte, or not UTF-8. */
gboolean scenario_ini_check_text(const char *text, gsize length, const char *display_name,
                                 GError **error);
/* Reads the groups and their entries into s->groups, in file order, with
 * [scenario] and [cluster] always present. */
gboolean scenario_ini_parse(Scenario *s, const char *text, GError **error);

/* ---- Keys, [vary] and [expect] (scenario_expect.c) ---- */

void scenario_vary_dim_free(gpointer data);
/* A deep copy of a VaryDim* array. (transfer full) */
GPtrArray *scenario_vary_copy(const GPtrArray *vary);
/* Splits "topic orders:min.insync.replicas" at its last ':' (group NULL for
 * a bare key); FALSE when either part is empty. */
gboolean scenario_split_qualified_key(const char *text, char **group, char **name);
/* "GROUP:name" or "name". (transfer full) */
char *scenario_qualified_key(const char *group, const char *name);
/* Appends to `targets` the indexes of the groups a key reaches: the named
 * group, or for a bare key every group among [scenario], [cluster], topics,
 * producers and consumer groups where it is valid. */
gboolean scenario_resolve_targets(const Scenario *s, const GPtrArray *groups, const Loc *loc,
                                  const char *group, const char *name, GArray *targets,
                                  GError **error);
/* Checks `value` for `name` in every target group. */
gboolean scenario_check_target_values(const GPtrArray *groups, const GArray *targets,
                                      const char *name, const char *value, const Loc *loc,
                                      GError **error);
gboolean scenario_targets_intersect(const GArray *a, const GArray *b);
gboolean scenario_targets_equal(const GArray *a, const GArray *b);
/* The dimension a `when` key names: as [vary] writes it, or bare when one
 * dimension varies that key; `matches` counts the candidates. */
const VaryDim *scenario_vary_find_dim(const GPtrArray *vary, const char *key, guint *matches);
/* Reads [vary] into s->vary and sets s->variant_count. */
gboolean scenario_parse_vary(Scenario *s, GError **error);
void scenario_expect_free(gpointer data);
/* Reads [expect] into s->expects; needs s->vary. */
gboolean scenario_parse_expects(Scenario *s, GError **error);

/* ---- Building one run (scenario.c) ---- */

typedef struct {
    const Scenario *scenario;
    GPtrArray *groups; /* RawGroup*, with the run's values written in */
    ScenarioVariant *variant;
} Build;
/* A duration as a user would write it ("60s", "250ms"). (transfer full) */
char *scenario_format_duration(gint64 ns);
/* The topic, producer or consumer group named `name` among `objects`, or
 * NULL: each of them starts with its name. */
gpointer scenario_find_object(const GPtrArray *objects, const char *name);
/* "there is no topic 'x'; did you mean 'orders'?" (transfer full) */
char *scenario_no_such_message(const char *what, const char *name, const GPtrArray *objects);
/* The broker id N of a [broker N] group's name, or 0 when N is not a
 * decimal id from 1 to CLUSTER_BROKERS_MAX written without leading zeros. */
guint scenario_broker_group_id(const char *object);
/* Sets every entry of `group` in the configuration of its key's scope, and
 * checks the required keys. */
gboolean scenario_fill_configs(const Build *b, const RawGroup *group, KConfig *const *configs,
                               guint n_configs, GError **error);
/* Refuses a time of `key` past the scenario's duration. */
/* FALSE with an error at `loc` when a topic of `partitions` partitions with
 * `replication_factor` replicas would not fit ZooKeeper's znode limit on
 * the variant's cluster (cluster_topic_znode_bytes_max). */
gboolean scenario_check_topic_fits(const Build *b, const Loc *loc, const char *topic,
                                   guint partitions, guint replication_factor, GError **error);
gboolean scenario_check_not_past_end(const Build *b, const RawGroup *group, const char *key,
                                     gint64 time_ns, GError **error);

/* ---- Clients (scenario_clients.c) ---- */

void scenario_producer_free(gpointer data);
gboolean scenario_build_producer(Build *b, const RawGroup *group, GError **error);
void scenario_consumer_group_free(gpointer data);
gboolean scenario_build_consumer_group(Build *b, const RawGroup *group, GError **error);

/* ---- KRaft roles (scenario_kraft.c) ---- */

/* Resolves [cluster]'s process.roles, controllers and
 * controller.quorum.voters into the variant's ScenarioCluster (combined,
 * n_voters, voter_ids), refusing what contradicts itself or the cluster;
 * in ZooKeeper mode refuses the KRaft-only keys. `group` is [cluster]. */
gboolean scenario_build_kraft_roles(Build *b, const RawGroup *group, GError **error);

/* ---- Faults (scenario_faults.c) ---- */

void scenario_fault_free(gpointer data);
gboolean scenario_build_fault(Build *b, const RawGroup *group, GError **error);
/* Orders faults by (time_ns, index). */
gint scenario_compare_faults(gconstpointer a, gconstpointer b);
void scenario_random_faults_free(ScenarioRandomFaults *random);
gboolean scenario_build_random_faults(Build *b, const RawGroup *group, GError **error);

#endif
