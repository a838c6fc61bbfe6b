/*
 * scenario: reading, validating and resolving scenario files (see scenario.h;
 * the files of the module are listed in scenario_internal.h).
 *
 * Reading happens in passes, each of which may stop with one error:
 *
 *   text --scenario_ini_parse--> RawGroup list, file order     (syntax, duplicates,
 *                                                               group kinds, known keys)
 *        --scenario_parse_vary, scenario_parse_expects-->
 *                                VaryDim, ScenarioExpect       (targets, values, metrics)
 *        --validate_runs--> every run built once, then dropped (values, targets, consistency)
 *
 * A run (ScenarioVariant) is built from a copy of the raw groups with the
 * run's [vary] values written into them, exactly as if the file said so; the
 * values carry the [vary] line, so errors point there. Every run is built
 * when the file is read (and again after each --set), so a scenario that
 * loads has only valid runs, and scenario_variants() cannot fail.
 *
 * Invariants (checked by scenario_check_invariants):
 *  1. `groups` holds exactly one [scenario] and one [cluster] group (added
 *     empty, at line 0, when the file has none), and no group name twice.
 *  2. Every entry of a group that takes configuration keys is a key of the
 *     group's scopes, and no key appears twice in a group.
 *  3. Each vary dimension has 1..SCENARIO_VARY_VALUES_MAX distinct values and
 *     at least one target group; two dimensions of the same key share no
 *     target; variant_count is the product of the value counts and at most
 *     SCENARIO_VARIANTS_MAX.
 *  4. Every expectation's conditions name a vary dimension's key.
 *  5. sha256 is 64 hexadecimal digits.
 *
 * The only transition after loading is scenario_apply_set, which builds the
 * changed groups and dimensions on copies, validates every run, and swaps them
 * in only on success.
 */
#include "scenario.h"

#include "cluster.h"
#include "kafka_proto.h"
#include "scenario_internal.h"
#include "sim_assert.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

GQuark
ksim_scenario_error_quark(void)
{
    return g_quark_from_static_string("ksim-scenario-error-quark");
}

/* ---- Messages ---- */

/* In the largest of s, ms, us, ns that divides it (seconds rather than
 * minutes: files mostly say "60s"). */
char *
scenario_format_duration(gint64 ns)
{
    static const struct {
        const char *suffix;
        gint64 factor;
    } units[] = {{"s", 1000000000}, {"ms", 1000000}, {"us", 1000}};
    for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
        if (ns != 0 && ns % units[i].factor == 0)
            return g_strdup_printf("%" G_GINT64_FORMAT "%s", ns / units[i].factor, units[i].suffix);
    }
    return g_strdup_printf("%" G_GINT64_FORMAT "ns", ns);
}

/* Topics, producers and consumer groups start with their name, so messages
 * about them can list and suggest names with one helper. */
G_STATIC_ASSERT(G_STRUCT_OFFSET(ScenarioTopic, name) == 0);
G_STATIC_ASSERT(G_STRUCT_OFFSET(ScenarioProducer, name) == 0);

static GPtrArray *
object_names(const GPtrArray *objects)
{
    GPtrArray *names = g_ptr_array_new();
    for (guint i = 0; i < objects->len; i++)
        g_ptr_array_add(names, *(char **)objects->pdata[i]);
    return names;
}

gpointer
scenario_find_object(const GPtrArray *objects, const char *name)
{
    for (guint i = 0; i < objects->len; i++) {
        if (strcmp(*(char **)objects->pdata[i], name) == 0)
            return objects->pdata[i];
    }
    return NULL;
}

/* "there is no topic 'x'; did you mean 'orders'?" (transfer full) */
char *
scenario_no_such_message(const char *what, const char *name, const GPtrArray *objects)
{
    g_autoptr(GPtrArray) names = object_names(objects);
    const char *suggestion =
        kconfig_suggest_among(name, (const char *const *)names->pdata, names->len);
    if (suggestion != NULL)
        return g_strdup_printf("there is no %s '%s'; did you mean '%s'?", what, name, suggestion);
    if (names->len == 0)
        return g_strdup_printf("there is no %s '%s' (the scenario has none)", what, name);
    g_ptr_array_add(names, NULL);
    g_autofree char *listed = g_strjoinv(", ", (char **)names->pdata);
    return g_strdup_printf("there is no %s '%s' (there are: %s)", what, name, listed);
}

/* ---- Building one run: [scenario], [cluster] and the topics ---- */

static KConfig *
config_for_scope(KConfig *const *configs, guint n_configs, KConfigScope scope)
{
    for (guint i = 0; i < n_configs; i++) {
        if ((kconfig_scope_mask(configs[i]) & scope) != 0)
            return configs[i];
    }
    KSIM_ASSERT(!"no configuration takes the scope");
    return NULL;
}

static gboolean
check_required(const Build *b, const RawGroup *group, KConfig *const *configs, guint n_configs,
               GError **error)
{
    guint n_keys = 0;
    const KConfigKey *keys = kconfig_registry(&n_keys);
    for (guint c = 0; c < n_configs; c++) {
        for (guint i = 0; i < n_keys; i++) {
            if ((keys[i].flags & KCONFIG_FLAG_REQUIRED) == 0 ||
                (keys[i].scope & kconfig_scope_mask(configs[c])) == 0 ||
                kconfig_is_set(configs[c], keys[i].name))
                continue;
            Loc loc = scenario_loc_key(b->scenario, group, keys[i].name);
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc, "is required");
            return FALSE;
        }
    }
    return TRUE;
}

/* Sets every entry of `group` in the configuration of its key's scope. */
gboolean
scenario_fill_configs(const Build *b, const RawGroup *group, KConfig *const *configs,
                      guint n_configs, GError **error)
{
    guint scopes = SCENARIO_GROUP_KINDS[group->kind].scopes;
    for (guint i = 0; i < group->entries->len; i++) {
        const RawEntry *entry = group->entries->pdata[i];
        const KConfigKey *key = kconfig_lookup(entry->key, scopes);
        KSIM_ASSERT(key != NULL);
        g_autoptr(GError) local = NULL;
        if (!kconfig_check_value(key, entry->value, &local)) {
            Loc loc = scenario_loc_entry(b->scenario, group, entry);
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", local->message);
            return FALSE;
        }
        KConfig *cfg = config_for_scope(configs, n_configs, key->scope);
        gboolean ok = kconfig_set(cfg, entry->key, entry->value, NULL);
        KSIM_ASSERT(ok);
    }
    return check_required(b, group, configs, n_configs, error);
}

/* "dir/acks-durability.ini" -> "acks-durability". (transfer full) */
static char *
default_name(const char *display_name)
{
    char *base = g_path_get_basename(display_name);
    if (g_str_has_suffix(base, ".ini"))
        base[strlen(base) - 4] = '\0';
    return base;
}

static gboolean
build_scenario(Build *b, GError **error)
{
    const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_SCENARIO);
    KSIM_ASSERT(group != NULL);
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_SCENARIO);
    if (!scenario_fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    ScenarioVariant *v = b->variant;
    v->name = kconfig_is_null(cfg, "name") ? default_name(b->scenario->display_name)
                                           : g_strdup(kconfig_get_string(cfg, "name"));
    v->description = g_strdup(kconfig_get_string(cfg, "description"));
    v->duration_ns = kconfig_get_duration_ns(cfg, "duration");
    v->quiet_ns = kconfig_get_duration_ns(cfg, "quiet");
    v->seed = (guint64)kconfig_get_int64(cfg, "seed");
    v->paranoid = kconfig_get_bool(cfg, "paranoid");
    KSIM_ASSERT(v->duration_ns > 0);
    return TRUE;
}

static gboolean
check_broker_config(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    gint64 wait_ns = kconfig_get_duration_ns(cfg, "replica.fetch.wait.max.ms");
    gint64 lag_ns = kconfig_get_duration_ns(cfg, "replica.lag.time.max.ms");
    if (wait_ns > lag_ns) {
        /* Kafka refuses this too: followers would drop out of the ISR while
         * their fetches wait. */
        g_autofree char *lag = scenario_format_duration(lag_ns);
        Loc loc = scenario_loc_key(b->scenario, group, "replica.fetch.wait.max.ms");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "must not exceed replica.lag.time.max.ms (%s), as Kafka requires", lag);
        return FALSE;
    }
    gint64 min_ns = kconfig_get_duration_ns(cfg, "group.min.session.timeout.ms");
    gint64 max_ns = kconfig_get_duration_ns(cfg, "group.max.session.timeout.ms");
    if (min_ns > max_ns) {
        Loc loc = scenario_loc_key(b->scenario, group, "group.min.session.timeout.ms");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "is above group.max.session.timeout.ms");
        return FALSE;
    }
    gint64 consumer_session_ns = kconfig_get_duration_ns(cfg, "group.consumer.session.timeout.ms");
    gint64 consumer_heartbeat_ns =
        kconfig_get_duration_ns(cfg, "group.consumer.heartbeat.interval.ms");
    if (consumer_heartbeat_ns >= consumer_session_ns) {
        /* Kafka's GroupCoordinatorConfig refuses it too. */
        Loc loc = scenario_loc_key(b->scenario, group, "group.consumer.heartbeat.interval.ms");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "must be lower than group.consumer.session.timeout.ms, as Kafka "
                           "requires");
        return FALSE;
    }
    return TRUE;
}

/* KafkaMetadataLog.apply: "Cannot set metadata.log.segment.bytes below
 * metadata.log.segment.min.bytes". */
static gboolean
check_metadata_log(const Build *b, const RawGroup *group, const KConfig *hardware,
                   GError **error)
{
    gint64 segment = kconfig_get_bytes(hardware, "metadata.log.segment.bytes");
    gint64 min = kconfig_get_bytes(hardware, "metadata.log.segment.min.bytes");
    if (segment >= min)
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, "metadata.log.segment.bytes");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "is %" G_GINT64_FORMAT ", below metadata.log.segment.min.bytes (%"
                       G_GINT64_FORMAT "), as Kafka refuses; lower that key too for small "
                       "segments",
                       segment, min);
    return FALSE;
}

static gboolean
build_cluster(Build *b, GError **error)
{
    const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
    KSIM_ASSERT(group != NULL);
    ScenarioCluster *cluster = &b->variant->cluster;
    KConfig *hardware = cluster->hardware = kconfig_new(KCONFIG_SCOPE_CLUSTER);
    cluster->config = kconfig_new(KCONFIG_SCOPE_BROKER);
    KConfig *configs[] = {hardware, cluster->config};
    if (!scenario_fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    cluster->brokers = (guint)kconfig_get_int64(hardware, "brokers");
    cluster->network_latency = kconfig_get_dist(hardware, "network.latency");
    cluster->network_bandwidth_bytes_per_s = kconfig_get_bytes(hardware, "network.bandwidth");
    cluster->disk_fsync_latency = kconfig_get_dist(hardware, "disk.fsync.latency");
    KSIM_ASSERT(cluster->brokers >= 1);
    cluster->broker_configs = g_ptr_array_new_with_free_func((GDestroyNotify)kconfig_free);
    g_ptr_array_set_size(cluster->broker_configs, (gint)cluster->brokers);
    return check_metadata_log(b, group, hardware, error) &&
           check_broker_config(b, group, cluster->config, error) &&
           scenario_build_kraft_roles(b, group, error);
}

/* Broker keys every broker must agree on, which [broker N] refuses, and why. */
static const struct {
    const char *key;
    const char *why;
} CLUSTER_WIDE_KEYS[] = {
    {"num.partitions", "the scenario's topics are created with [cluster]'s default"},
    {"default.replication.factor", "the scenario's topics are created with [cluster]'s default"},
    {"offsets.topic.num.partitions",
     "every broker must map a group to the same __consumer_offsets partition"},
    {"offsets.topic.replication.factor", "targets such as follower(__consumer_offsets-P, K) are "
                                         "checked against [cluster]'s value"},
    {"transaction.state.log.num.partitions",
     "every broker must map a transactional.id to the same __transaction_state partition"},
    {"transaction.state.log.replication.factor", "targets such as "
                                                 "follower(__transaction_state-P, K) are checked "
                                                 "against [cluster]'s value"},
    {"group.min.session.timeout.ms",
     "the consumer groups' session.timeout.ms is checked against [cluster]'s bounds"},
    {"group.max.session.timeout.ms",
     "the consumer groups' session.timeout.ms is checked against [cluster]'s bounds"},
    {"group.consumer.session.timeout.ms",
     "a KIP-848 group's coordinator may be any broker: they must agree on its members' session"},
    {"group.consumer.heartbeat.interval.ms",
     "a KIP-848 group's coordinator may be any broker: they must agree on its heartbeats"},
    {"group.consumer.assignors",
     "the consumer groups' group.remote.assignor is checked against [cluster]'s list"},
};

static gboolean
check_broker_keys(const Build *b, const RawGroup *group, GError **error)
{
    for (guint i = 0; i < group->entries->len; i++) {
        const RawEntry *entry = group->entries->pdata[i];
        for (guint k = 0; k < G_N_ELEMENTS(CLUSTER_WIDE_KEYS); k++) {
            if (strcmp(entry->key, CLUSTER_WIDE_KEYS[k].key) != 0)
                continue;
            Loc loc = scenario_loc_entry(b->scenario, group, entry);
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                               "is the same on every broker in ksim (%s): set it in [cluster]",
                               CLUSTER_WIDE_KEYS[k].why);
            return FALSE;
        }
    }
    return TRUE;
}

/* [broker N]: broker N's server.properties, [cluster]'s keys with its own
 * over them. */
static gboolean
build_broker(Build *b, const RawGroup *group, GError **error)
{
    ScenarioCluster *cluster = &b->variant->cluster;
    guint id = scenario_broker_group_id(group->object);
    KSIM_ASSERT(id >= 1);
    if (id > cluster->brokers) {
        Loc loc = {b->scenario->display_name, group->line, NULL, group->name, NULL};
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "there is no broker %u: the cluster has %u broker%s (ids 1..%u)", id,
                           cluster->brokers, cluster->brokers == 1 ? "" : "s", cluster->brokers);
        return FALSE;
    }
    if (!check_broker_keys(b, group, error))
        return FALSE;
    KConfig *cfg = kconfig_copy(cluster->config);
    g_ptr_array_index(cluster->broker_configs, id - 1) = cfg;
    if (!scenario_fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    return check_broker_config(b, group, cfg, error);
}

/* A rack name a target can name: rack:NAME inside partition groups, which
 * ',' and '|' separate, and inside replica(...) lists. */
static gboolean
rack_name_is_valid(const char *rack)
{
    if (*rack == '\0')
        return FALSE;
    for (const char *p = rack; *p != '\0'; p++) {
        if (g_ascii_isspace(*p) || g_ascii_iscntrl(*p) || strchr(",|()", *p) != NULL)
            return FALSE;
    }
    return TRUE;
}

/* The group that set broker `id`'s `key`: its [broker N] when that says it,
 * else [cluster]. (transfer none) */
static const RawGroup *
broker_key_home(const Build *b, guint id, const char *key)
{
    g_autofree char *name = g_strdup_printf("broker %u", id);
    gint index = scenario_groups_find(b->groups, name);
    if (index >= 0 && scenario_group_find_entry(b->groups->pdata[index], key) != NULL)
        return b->groups->pdata[index];
    return scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
}

/* Each broker's rack: its broker.rack ([broker N], else [cluster]), else
 * [cluster] racks dealt round robin. */
static gboolean
build_racks(Build *b, GError **error)
{
    ScenarioCluster *cluster = &b->variant->cluster;
    const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
    g_auto(GStrv) dealt = kconfig_is_null(cluster->hardware, "racks")
                              ? NULL
                              : kconfig_get_list(cluster->hardware, "racks");
    if (dealt != NULL && kconfig_is_set(cluster->config, "broker.rack")) {
        Loc loc = scenario_loc_key(b->scenario, group, "racks");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "gives every broker a rack, and so does [cluster] broker.rack: keep one");
        return FALSE;
    }
    for (guint i = 0; dealt != NULL && dealt[i] != NULL; i++) {
        if (rack_name_is_valid(dealt[i]))
            continue;
        Loc loc = scenario_loc_key(b->scenario, group, "racks");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "'%s' is not a rack name: no white space and none of , | ( )", dealt[i]);
        return FALSE;
    }
    GPtrArray *racks = g_ptr_array_new_with_free_func(g_free);
    gboolean any = FALSE;
    for (guint id = 1; id <= cluster->brokers; id++) {
        const KConfig *cfg = scenario_variant_broker_config_of(b->variant, id);
        const char *rack = kconfig_get_string(cfg, "broker.rack");
        if (rack == NULL && dealt != NULL)
            rack = dealt[(id - 1) % g_strv_length(dealt)];
        if (rack != NULL && !rack_name_is_valid(rack)) {
            Loc loc = scenario_loc_key(b->scenario, broker_key_home(b, id, "broker.rack"),
                                       "broker.rack");
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                               "'%s' is not a rack name: not empty, no white space and none of "
                               ", | ( )",
                               rack);
            g_ptr_array_unref(racks);
            return FALSE;
        }
        any = any || rack != NULL;
        g_ptr_array_add(racks, g_strdup(rack));
    }
    if (any)
        cluster->racks = racks;
    else
        g_ptr_array_unref(racks);
    return TRUE;
}

/* Kafka's admin (AdminZkClient.getBrokerMetadatas, 3.6) refuses to place a
 * topic rack-aware when only some brokers have a rack, unless kafka-topics
 * is told --disable-rack-aware. */
static gboolean
check_topic_racks(const Build *b, const RawGroup *group, const ScenarioTopic *topic,
                  GError **error)
{
    const ScenarioCluster *cluster = &b->variant->cluster;
    GError *refused = NULL;
    if (topic->assignment != NULL || cluster->racks == NULL ||
        cluster_check_racks(topic->name, (const char *const *)cluster->racks->pdata,
                            cluster->brokers,
                            topic->disable_rack_aware ? CLUSTER_RACK_AWARE_DISABLED
                                                      : CLUSTER_RACK_AWARE_ENFORCED,
                            &refused))
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, "disable.rack.aware");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "%s; give every broker a broker.rack, or none, or set disable.rack.aware = "
                       "true in [topic %s]",
                       refused->message, topic->name);
    g_error_free(refused);
    return FALSE;
}

/* min.insync.replicas as each broker applies it to the topic (the topic's
 * own value, else that broker's) must not exceed the replication factor. */
static gboolean
check_topic_min_isr(const Build *b, const ScenarioTopic *topic, GError **error)
{
    for (guint id = 1; id <= b->variant->cluster.brokers; id++) {
        if (g_ptr_array_index(b->variant->cluster.broker_configs, id - 1) == NULL)
            continue;
        g_autoptr(KConfig) cfg = scenario_topic_config_of(b->variant, topic, id);
        gint64 min_isr = kconfig_get_int64(cfg, "min.insync.replicas");
        if (min_isr <= (gint64)topic->replication_factor)
            continue;
        Loc loc = scenario_loc_key(b->scenario, broker_key_home(b, id, "min.insync.replicas"),
                                   "min.insync.replicas");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "%" G_GINT64_FORMAT " is above the replication factor %u of topic %s "
                           "(acks=all writes could never succeed while broker %u leads it)",
                           min_isr, topic->replication_factor, topic->name, id);
        return FALSE;
    }
    return TRUE;
}

/* Where a topic's effective value of `topic_key` came from: the topic, else
 * the cluster's `broker_key`, else the topic group (a default). */
static Loc
loc_topic_key(const Build *b, const RawGroup *group, const char *topic_key, const char *broker_key)
{
    if (scenario_group_find_entry(group, topic_key) != NULL)
        return scenario_loc_key(b->scenario, group, topic_key);
    const RawGroup *cluster = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
    if (scenario_group_find_entry(cluster, broker_key) != NULL)
        return scenario_loc_key(b->scenario, cluster, broker_key);
    return scenario_loc_key(b->scenario, group, topic_key);
}

static void
topic_free(gpointer data)
{
    ScenarioTopic *topic = data;
    g_free(topic->name);
    if (topic->assignment != NULL)
        g_ptr_array_unref(topic->assignment);
    kconfig_free(topic->config);
    g_free(topic);
}

gboolean
scenario_check_topic_fits(const Build *b, const Loc *loc, const char *topic, guint partitions,
                          guint replication_factor, GError **error)
{
    guint64 bytes = cluster_topic_znode_bytes_max(partitions, replication_factor,
                                                  b->variant->cluster.brokers);
    if (bytes <= cluster_znode_bytes_limit())
        return TRUE;
    /* Kafka in ZooKeeper mode fails the same way: the topic's assignment is
     * one znode, and ZooKeeper refuses data above jute.maxbuffer. */
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, loc,
                       "topic %s: %u partitions with replication factor %u make an assignment "
                       "znode of up to %" G_GUINT64_FORMAT " bytes, above ZooKeeper's limit of "
                       "%" G_GUINT64_FORMAT " bytes (jute.maxbuffer), so Kafka could not create "
                       "it; spread the partitions over several topics",
                       topic, partitions, replication_factor, bytes, cluster_znode_bytes_limit());
    return FALSE;
}

/* "1:2:3, 2:3:1" as GArrays of broker ids, or NULL with `*why`. */
static GPtrArray *
parse_replica_assignment(const char *text, char **why)
{
    GPtrArray *assignment = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_auto(GStrv) partitions = g_strsplit(text, ",", -1);
    for (guint p = 0; partitions[p] != NULL; p++) {
        GArray *replicas = g_array_new(FALSE, FALSE, sizeof(gint32));
        g_ptr_array_add(assignment, replicas);
        g_auto(GStrv) ids = g_strsplit(partitions[p], ":", -1);
        for (guint r = 0; ids[r] != NULL; r++) {
            g_autofree char *id = g_strstrip(g_strdup(ids[r]));
            guint64 value = 0;
            if (!g_ascii_string_to_unsigned(id, 10, 1, G_MAXINT32, &value, NULL)) {
                *why = g_strdup_printf("partition %u: '%s' is not a broker id (a positive "
                                       "integer); write the replicas of each partition with "
                                       "colons and partitions with commas: 1:2:3, 2:3:1",
                                       p, id);
                g_ptr_array_unref(assignment);
                return NULL;
            }
            gint32 broker = (gint32)value;
            g_array_append_val(replicas, broker);
        }
    }
    return assignment;
}

/* replica.assignment, when set: the topic's partitions and replication
 * factor come from it, so the group may not set them too (kafka-topics
 * refuses --partitions and --replication-factor beside it). */
static gboolean
build_topic_assignment(Build *b, const RawGroup *group, ScenarioTopic *topic, GError **error)
{
    if (kconfig_is_null(topic->config, "replica.assignment"))
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, "replica.assignment");
    static const char *const exclusive[] = {"partitions", "replication.factor"};
    for (guint i = 0; i < G_N_ELEMENTS(exclusive); i++) {
        if (kconfig_is_set(topic->config, exclusive[i])) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                               "replica.assignment sets the topic's partitions and replication "
                               "factor: remove %s from [topic %s]",
                               exclusive[i], topic->name);
            return FALSE;
        }
    }
    char *why = NULL;
    topic->assignment = parse_replica_assignment(kconfig_get_string(topic->config, "replica.assignment"),
                                         &why);
    GError *invalid = NULL;
    if (topic->assignment == NULL ||
        !cluster_check_assignment(topic->name, topic->assignment, b->variant->cluster.brokers,
                                  &invalid)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s",
                           why != NULL ? why : invalid->message);
        g_free(why);
        g_clear_error(&invalid);
        return FALSE;
    }
    topic->partitions = topic->assignment->len;
    topic->replication_factor = ((const GArray *)g_ptr_array_index(topic->assignment, 0))->len;
    return TRUE;
}

static gboolean
build_topic(Build *b, const RawGroup *group, GError **error)
{
    const ScenarioCluster *cluster = &b->variant->cluster;
    /* Kafka allows 249 characters; ksim's brokers and requests keep a topic
     * name in KAFKA_TOPIC_NAME_MAX (63) bytes, as they keep a
     * transactional.id in 63. */
    if (strlen(group->object) > KAFKA_TOPIC_NAME_MAX) {
        Loc loc = scenario_loc_group(b->scenario, group);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "the topic name has %zu characters; ksim's brokers keep at most %d "
                           "(Kafka allows 249)",
                           strlen(group->object), KAFKA_TOPIC_NAME_MAX);
        return FALSE;
    }
    ScenarioTopic *topic = g_new0(ScenarioTopic, 1);
    topic->name = g_strdup(group->object);
    topic->config = kconfig_new_topic(cluster->config);
    g_ptr_array_add(b->variant->topics, topic);
    if (!scenario_fill_configs(b, group, &topic->config, 1, error))
        return FALSE;
    topic->partitions = (guint)kconfig_get_int64(topic->config, "partitions");
    topic->replication_factor = (guint)kconfig_get_int64(topic->config, "replication.factor");
    topic->disable_rack_aware = kconfig_get_bool(topic->config, "disable.rack.aware");
    if (!build_topic_assignment(b, group, topic, error) ||
        !check_topic_racks(b, group, topic, error))
        return FALSE;
    if (topic->replication_factor > cluster->brokers) {
        Loc loc = loc_topic_key(b, group, "replication.factor", "default.replication.factor");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "replication factor %u of topic %s is above the number of brokers (%u)",
                           topic->replication_factor, topic->name, cluster->brokers);
        return FALSE;
    }
    Loc partitions_loc = loc_topic_key(b, group, "partitions", "num.partitions");
    if (!scenario_check_topic_fits(b, &partitions_loc, topic->name, topic->partitions,
                                   topic->replication_factor, error))
        return FALSE;
    gint64 min_isr = kconfig_get_int64(topic->config, "min.insync.replicas");
    if (min_isr > (gint64)topic->replication_factor) {
        Loc loc = loc_topic_key(b, group, "min.insync.replicas", "min.insync.replicas");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "%" G_GINT64_FORMAT " is above the replication factor %u of topic %s "
                           "(acks=all writes could never succeed)",
                           min_isr, topic->replication_factor, topic->name);
        return FALSE;
    }
    return check_topic_min_isr(b, topic, error);
}

gboolean
scenario_check_not_past_end(const Build *b, const RawGroup *group, const char *key, gint64 time_ns,
                            GError **error)
{
    gint64 duration_ns = b->variant->duration_ns;
    if (time_ns <= duration_ns)
        return TRUE;
    g_autofree char *time = scenario_format_duration(time_ns);
    g_autofree char *end = scenario_format_duration(duration_ns);
    Loc loc = scenario_loc_key(b->scenario, group, key);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "%s is past the end of the scenario (duration %s)", time, end);
    return FALSE;
}

/* ---- Runs ---- */

static void
setting_free(gpointer data)
{
    ScenarioSetting *setting = data;
    g_free(setting->key);
    g_free(setting->value);
    g_free(setting);
}

static ScenarioVariant *
variant_new(guint index)
{
    ScenarioVariant *v = g_new0(ScenarioVariant, 1);
    v->index = index;
    v->settings = g_ptr_array_new_with_free_func(setting_free);
    v->topics = g_ptr_array_new_with_free_func(topic_free);
    v->producers = g_ptr_array_new_with_free_func(scenario_producer_free);
    v->consumer_groups = g_ptr_array_new_with_free_func(scenario_consumer_group_free);
    v->faults = g_ptr_array_new_with_free_func(scenario_fault_free);
    return v;
}

void
scenario_variant_free(ScenarioVariant *variant)
{
    if (variant == NULL)
        return;
    g_free(variant->label);
    g_ptr_array_unref(variant->settings);
    g_free(variant->name);
    g_free(variant->description);
    kconfig_free(variant->cluster.config);
    kconfig_free(variant->cluster.hardware);
    if (variant->cluster.broker_configs != NULL)
        g_ptr_array_unref(variant->cluster.broker_configs);
    if (variant->cluster.racks != NULL)
        g_ptr_array_unref(variant->cluster.racks);
    g_ptr_array_unref(variant->topics);
    g_ptr_array_unref(variant->producers);
    g_ptr_array_unref(variant->consumer_groups);
    g_ptr_array_unref(variant->faults);
    scenario_random_faults_free(variant->random_faults);
    g_free(variant);
}

/* Writes run `index`'s [vary] values into `groups` and names the run. Runs
 * count in mixed radix, the last dimension fastest. */
static void
apply_run_settings(const GPtrArray *vary, guint index, GPtrArray *groups, ScenarioVariant *v)
{
    g_autofree guint *choice = g_new0(guint, vary->len + 1);
    guint rest = index;
    for (guint i = vary->len; i-- > 0;) {
        const VaryDim *dim = vary->pdata[i];
        choice[i] = rest % dim->values->len;
        rest /= dim->values->len;
    }
    KSIM_ASSERT(rest == 0);
    GString *label = g_string_new(NULL);
    for (guint i = 0; i < vary->len; i++) {
        const VaryDim *dim = vary->pdata[i];
        const char *value = dim->values->pdata[choice[i]];
        for (guint t = 0; t < dim->targets->len; t++)
            scenario_group_set(groups->pdata[g_array_index(dim->targets, guint, t)], dim->name,
                               value, dim->line, NULL);
        ScenarioSetting *setting = g_new0(ScenarioSetting, 1);
        setting->key = g_strdup(dim->key);
        setting->value = g_strdup(value);
        g_ptr_array_add(v->settings, setting);
        g_string_append_printf(label, "%s%s=%s", i ? "," : "", dim->key, value);
    }
    if (label->len == 0)
        g_string_append(label, "default");
    v->label = g_string_free(label, FALSE);
}

/* What KRaft mode does not model yet, refused with the reason. */
static const char *
kraft_unsupported(const ScenarioVariant *v)
{
    for (guint i = 0; i < v->faults->len; i++) {
        const ScenarioFault *f = g_ptr_array_index(v->faults, i);
        if (f->action == SCENARIO_ACTION_CRASH_ZK || f->action == SCENARIO_ACTION_RESTART_ZK ||
            f->action == SCENARIO_ACTION_EXPIRE_SESSION)
            return "a KRaft cluster has no ZooKeeper: crash-zk, restart-zk and expire-session "
                   "have nothing to act on";
        gboolean zk = f->target.kind == SCENARIO_TARGET_ZK || f->to.kind == SCENARIO_TARGET_ZK;
        for (guint g = 0; g < f->groups->len && !zk; g++) {
            const GArray *targets = g_ptr_array_index(f->groups, g);
            for (guint t = 0; t < targets->len; t++)
                zk = zk || g_array_index(targets, ScenarioTarget, t).kind == SCENARIO_TARGET_ZK;
        }
        if (zk)
            return "a KRaft cluster has no ZooKeeper to target (target the active controller "
                   "with `controller`)";
    }
    if (v->random_faults != NULL) {
        for (guint i = 0; i < v->random_faults->kinds->len; i++) {
            ScenarioAction kind = g_array_index(v->random_faults->kinds, ScenarioAction, i);
            if (kind == SCENARIO_ACTION_CRASH_ZK || kind == SCENARIO_ACTION_EXPIRE_SESSION)
                return "a KRaft cluster has no ZooKeeper: random faults of kind crash-zk or "
                       "expire-session have nothing to act on";
        }
    }
    return NULL;
}

static gboolean
check_kraft(const Build *b, GError **error)
{
    const ScenarioVariant *v = b->variant;
    if (g_ascii_strcasecmp(
            kconfig_get_value(v->cluster.hardware, "unclean.recovery.manager.enabled"), "true") ==
            0 &&
        strcmp(kconfig_get_value(v->cluster.hardware, "eligible.leader.replicas.version"), "0") ==
            0) {
        const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
        Loc loc = scenario_loc_key(b->scenario, group, "unclean.recovery.manager.enabled");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "the unclean recovery manager (KIP-966) recovers partitions whose ISR "
                           "and ELR are empty: it needs metadata.mode = kraft and "
                           "eligible.leader.replicas.version = 1");
        return FALSE;
    }
    if (strcmp(kconfig_get_value(v->cluster.hardware, "metadata.mode"), "kraft") != 0) {
        /* Kafka finalizes transaction.version only in KRaft's metadata
         * (Kafka 4.0 has no ZooKeeper mode). */
        if (strcmp(kconfig_get_value(v->cluster.hardware, "transaction.version"), "0") != 0) {
            const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
            Loc loc = scenario_loc_key(b->scenario, group, "transaction.version");
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                               "transaction.version is a KRaft feature level (Kafka 4.0): set "
                               "metadata.mode = kraft, or leave transaction.version at 0");
            return FALSE;
        }
        if (strcmp(kconfig_get_value(v->cluster.hardware, "eligible.leader.replicas.version"),
                   "0") == 0)
            return TRUE;
        const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
        Loc loc = scenario_loc_key(b->scenario, group, "eligible.leader.replicas.version");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "eligible leader replicas (KIP-966) are the KRaft controller's: set "
                           "metadata.mode = kraft, or leave eligible.leader.replicas.version at 0");
        return FALSE;
    }
    const char *why = kraft_unsupported(v);
    if (why == NULL)
        return TRUE;
    const RawGroup *group = scenario_groups_find_kind(b->groups, GROUP_CLUSTER);
    Loc loc = scenario_loc_key(b->scenario, group, "metadata.mode");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc, "kraft: %s", why);
    return FALSE;
}

typedef gboolean (*BuildGroupFn)(Build *b, const RawGroup *group, GError **error);

static gboolean
build_groups_of(Build *b, GroupKind kind, BuildGroupFn build_fn, GError **error)
{
    for (guint i = 0; i < b->groups->len; i++) {
        const RawGroup *group = b->groups->pdata[i];
        if (group->kind == kind && !build_fn(b, group, error))
            return FALSE;
    }
    return TRUE;
}

static gboolean
build_run(Build *b, GError **error)
{
    /* The order matters: topics need the cluster, producers the topics,
     * and fault targets the topics and producers. */
    if (!build_scenario(b, error) || !build_cluster(b, error) ||
        !build_groups_of(b, GROUP_BROKER, build_broker, error) || !build_racks(b, error) ||
        !build_groups_of(b, GROUP_TOPIC, build_topic, error) ||
        !build_groups_of(b, GROUP_PRODUCER, scenario_build_producer, error) ||
        !build_groups_of(b, GROUP_CONSUMER_GROUP, scenario_build_consumer_group, error) ||
        !build_groups_of(b, GROUP_FAULT, scenario_build_fault, error))
        return FALSE;
    const RawGroup *random = scenario_groups_find_kind(b->groups, GROUP_RANDOM_FAULTS);
    if (random != NULL && !scenario_build_random_faults(b, random, error))
        return FALSE;
    g_ptr_array_sort(b->variant->faults, scenario_compare_faults);
    return check_kraft(b, error);
}

/* Adds " (context)" to an error's message. */
static void
error_append(GError **error, const char *what, const char *detail)
{
    if (error == NULL || *error == NULL)
        return;
    char *message = g_strdup_printf("%s (%s %s)", (*error)->message, what, detail);
    g_free((*error)->message);
    (*error)->message = message;
}

/* Names the run in which an error happened, when there are several. */
static void
error_add_run(GError **error, const ScenarioVariant *v)
{
    if (v->settings->len == 0)
        return;
    g_autofree char *quoted = g_strdup_printf("'%s'", v->label);
    error_append(error, "in the run", quoted);
}

static ScenarioVariant *
variant_build(const Scenario *s, const GPtrArray *groups, const GPtrArray *vary, guint index,
              GError **error)
{
    ScenarioVariant *v = variant_new(index);
    g_autoptr(GPtrArray) run_groups = scenario_groups_copy(groups);
    apply_run_settings(vary, index, run_groups, v);
    Build b = {s, run_groups, v};
    if (!build_run(&b, error)) {
        error_add_run(error, v);
        scenario_variant_free(v);
        return NULL;
    }
    return v;
}

static guint
count_runs(const GPtrArray *vary)
{
    guint runs = 1;
    for (guint i = 0; i < vary->len; i++)
        runs *= ((const VaryDim *)vary->pdata[i])->values->len;
    KSIM_ASSERT(runs >= 1 && runs <= SCENARIO_VARIANTS_MAX);
    return runs;
}

/* Builds and drops every run: a scenario that passes has only valid runs. */
static gboolean
validate_runs(const Scenario *s, const GPtrArray *groups, const GPtrArray *vary, GError **error)
{
    guint runs = count_runs(vary);
    for (guint i = 0; i < runs; i++) {
        ScenarioVariant *v = variant_build(s, groups, vary, i, error);
        if (v == NULL)
            return FALSE;
        scenario_variant_free(v);
    }
    return TRUE;
}

/* The name, description and seed shown for the scenario: the first run's. */
static void
refresh_summary(Scenario *s)
{
    s->variant_count = count_runs(s->vary);
    ScenarioVariant *first = variant_build(s, s->groups, s->vary, 0, NULL);
    KSIM_ASSERT(first != NULL);
    g_free(s->name);
    g_free(s->description);
    s->name = g_strdup(first->name);
    s->description = g_strdup(first->description);
    s->seed = first->seed;
    scenario_variant_free(first);
}

/* ---- Scenario: public ---- */

static Scenario *
scenario_new(const char *text, gsize length, const char *display_name, const char *path)
{
    Scenario *s = g_new0(Scenario, 1);
    s->path = g_strdup(path);
    s->display_name = g_strdup(display_name);
    s->sha256 = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
    s->text = g_strndup(text, length);
    s->text_length = length;
    s->groups = g_ptr_array_new_with_free_func(scenario_raw_group_free);
    s->vary = g_ptr_array_new_with_free_func(scenario_vary_dim_free);
    s->expects = g_ptr_array_new_with_free_func(scenario_expect_free);
    s->overrides = g_ptr_array_new_with_free_func(g_free);
    s->variant_count = 1;
    return s;
}

void
scenario_free(Scenario *scenario)
{
    if (scenario == NULL)
        return;
    g_free(scenario->path);
    g_free(scenario->display_name);
    g_free(scenario->sha256);
    g_free(scenario->text);
    g_free(scenario->name);
    g_free(scenario->description);
    g_ptr_array_unref(scenario->groups);
    g_ptr_array_unref(scenario->vary);
    g_ptr_array_unref(scenario->expects);
    g_ptr_array_unref(scenario->overrides);
    g_free(scenario);
}

static Scenario *
scenario_read(const char *text, gsize length, const char *display_name, const char *path,
              GError **error)
{
    KSIM_ASSERT(text[length] == '\0');
    /* A UTF-8 byte-order mark, which some editors write, is not part of the
     * text; the SHA-256 still covers the file's bytes as they are. */
    gsize bom = g_str_has_prefix(text, UTF8_BOM) ? strlen(UTF8_BOM) : 0;
    if (!scenario_ini_check_text(text + bom, length - bom, display_name, error))
        return NULL;
    g_autoptr(Scenario) s = scenario_new(text, length, display_name, path);
    if (!scenario_ini_parse(s, text + bom, error) || !scenario_parse_vary(s, error) ||
        !scenario_parse_expects(s, error) || !validate_runs(s, s->groups, s->vary, error))
        return NULL;
    refresh_summary(s);
    scenario_check_invariants(s);
    return g_steal_pointer(&s);
}

/* Reads at most SCENARIO_FILE_BYTES_MAX + 1 bytes of `path`, so that a huge
 * file or a device (/dev/urandom) costs no more memory than the limit; the one
 * byte over lets scenario_ini_check_text refuse it. (transfer full) */
static char *
read_bounded(const char *path, gsize *length, GError **error)
{
    Loc loc = {path, 0, NULL, NULL, NULL};
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        int saved = errno;
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_IO, &loc, "cannot read: %s",
                           g_strerror(saved));
        return NULL;
    }
    gsize capacity = (gsize)SCENARIO_FILE_BYTES_MAX + 1;
    char *text = g_malloc(capacity + 1);
    *length = fread(text, 1, capacity, file);
    int saved = errno;
    gboolean failed = ferror(file) != 0;
    fclose(file);
    if (failed) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_IO, &loc, "cannot read: %s",
                           g_strerror(saved));
        g_free(text);
        return NULL;
    }
    KSIM_ASSERT(*length <= capacity);
    text[*length] = '\0';
    return text;
}

Scenario *
scenario_load(const char *path, GError **error)
{
    KSIM_ASSERT(path != NULL);
    gsize length = 0;
    g_autofree char *text = read_bounded(path, &length, error);
    if (text == NULL)
        return NULL;
    return scenario_read(text, length, path, path, error);
}

Scenario *
scenario_load_data(const char *text, const char *display_name, GError **error)
{
    KSIM_ASSERT(text != NULL);
    KSIM_ASSERT(display_name != NULL);
    return scenario_read(text, strlen(text), display_name, NULL, error);
}

Scenario *
scenario_load_bytes(const char *bytes, gsize length, const char *display_name, GError **error)
{
    KSIM_ASSERT(bytes != NULL || length == 0);
    KSIM_ASSERT(display_name != NULL);
    /* scenario_read wants a NUL after the text; the copy adds it. */
    g_autofree char *text = g_malloc(length + 1);
    if (length > 0)
        memcpy(text, bytes, length);
    text[length] = '\0';
    return scenario_read(text, length, display_name, NULL, error);
}

const char *
scenario_name(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->name;
}

const char *
scenario_description(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->description;
}

const char *
scenario_path(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->path;
}

const char *
scenario_sha256(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->sha256;
}

const char *
scenario_text(const Scenario *scenario, gsize *length)
{
    KSIM_ASSERT(scenario != NULL);
    if (length != NULL)
        *length = scenario->text_length;
    return scenario->text;
}

guint64
scenario_seed(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->seed;
}

const GPtrArray *
scenario_overrides(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->overrides;
}

/* --set on a key that [vary] varies: the same targets narrow the runs to the
 * value; overlapping but different targets are ambiguous. Returns TRUE with
 * `*narrowed` when the value went into [vary]. */
static gboolean
narrow_vary(GPtrArray *vary, const char *name, const GArray *targets, const char *value,
            const Loc *loc, gboolean *narrowed, GError **error)
{
    *narrowed = FALSE;
    for (guint i = 0; i < vary->len; i++) {
        VaryDim *dim = vary->pdata[i];
        if (strcmp(dim->name, name) != 0 || !scenario_targets_intersect(dim->targets, targets))
            continue;
        if (!scenario_targets_equal(dim->targets, targets)) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, loc,
                               "overlaps [vary] %s (line %u); --set %s=VALUE to choose its value",
                               dim->key, dim->line, dim->key);
            return FALSE;
        }
        g_ptr_array_set_size(dim->values, 0);
        g_ptr_array_add(dim->values, g_strdup(value));
        *narrowed = TRUE;
    }
    return TRUE;
}

static gboolean
parse_assignment(const char *assignment, char **group, char **name, char **value)
{
    const char *equals = strchr(assignment, '=');
    if (equals == NULL)
        return FALSE;
    g_autofree char *key = g_strndup(assignment, (gsize)(equals - assignment));
    if (!scenario_split_qualified_key(key, group, name))
        return FALSE;
    *value = g_strstrip(g_strdup(equals + 1));
    return TRUE;
}

gboolean
scenario_apply_set(Scenario *scenario, const char *assignment, GError **error)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(assignment != NULL);
    g_autofree char *origin = g_strdup_printf("--set %s", assignment);
    Loc loc = {scenario->display_name, 0, origin, NULL, NULL};
    g_autofree char *group = NULL, *name = NULL, *value = NULL;
    if (!parse_assignment(assignment, &group, &name, &value)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_SYNTAX, &loc,
                           "expected KEY=VALUE or GROUP:KEY=VALUE");
        return FALSE;
    }
    g_autofree char *key = scenario_qualified_key(group, name);
    loc.key = key;
    g_autoptr(GArray) targets = g_array_new(FALSE, FALSE, sizeof(guint));
    g_autoptr(GPtrArray) groups = scenario_groups_copy(scenario->groups);
    /* "broker N:KEY" reaches broker N even where the file has no [broker N]:
     * the copy gains an empty one, after every group [vary] indexes. */
    guint broker_id = group != NULL && g_str_has_prefix(group, "broker ")
                          ? scenario_broker_group_id(group + strlen("broker "))
                          : 0;
    if (broker_id != 0 && scenario_groups_find(groups, group) < 0)
        scenario_groups_add_broker(groups, broker_id);
    if (!scenario_resolve_targets(scenario, groups, &loc, group, name, targets, error) ||
        !scenario_check_target_values(groups, targets, name, value, &loc, error))
        return FALSE;
    g_autoptr(GPtrArray) vary = scenario_vary_copy(scenario->vary);
    gboolean narrowed = FALSE;
    if (!narrow_vary(vary, name, targets, value, &loc, &narrowed, error))
        return FALSE;
    for (guint i = 0; !narrowed && i < targets->len; i++)
        scenario_group_set(groups->pdata[g_array_index(targets, guint, i)], name, value, 0, origin);
    if (!validate_runs(scenario, groups, vary, error)) {
        error_append(error, "after", origin);
        return FALSE;
    }
    g_ptr_array_unref(scenario->groups);
    g_ptr_array_unref(scenario->vary);
    scenario->groups = g_steal_pointer(&groups);
    scenario->vary = g_steal_pointer(&vary);
    g_ptr_array_add(scenario->overrides, g_strdup(assignment));
    refresh_summary(scenario);
    scenario_check_invariants(scenario);
    return TRUE;
}

guint
scenario_variant_count(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->variant_count;
}

GPtrArray *
scenario_variants(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    GPtrArray *variants = g_ptr_array_new_with_free_func((GDestroyNotify)scenario_variant_free);
    for (guint i = 0; i < scenario->variant_count; i++) {
        ScenarioVariant *v = variant_build(scenario, scenario->groups, scenario->vary, i, NULL);
        /* Every run was built once when the scenario was validated. */
        KSIM_ASSERT(v != NULL);
        g_ptr_array_add(variants, v);
    }
    return variants;
}

const GPtrArray *
scenario_expects(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    return scenario->expects;
}

static void
check_group_invariants(const RawGroup *group)
{
    KSIM_ASSERT(group->name != NULL);
    KSIM_ASSERT((group->object != NULL) == SCENARIO_GROUP_KINDS[group->kind].named);
    guint scopes = SCENARIO_GROUP_KINDS[group->kind].scopes;
    for (guint j = 0; j < group->entries->len; j++) {
        const RawEntry *entry = group->entries->pdata[j];
        if (scopes != 0)
            KSIM_ASSERT(kconfig_lookup(entry->key, scopes) != NULL);
        KSIM_ASSERT(scenario_group_find_entry(group, entry->key) == entry);
    }
}

static void
check_vary_invariants(const Scenario *s)
{
    for (guint i = 0; i < s->vary->len; i++) {
        const VaryDim *dim = s->vary->pdata[i];
        KSIM_ASSERT(dim->values->len >= 1);
        KSIM_ASSERT(dim->values->len <= SCENARIO_VARY_VALUES_MAX);
        KSIM_ASSERT(dim->targets->len >= 1);
        for (guint j = 0; j < i; j++) {
            const VaryDim *other = s->vary->pdata[j];
            if (strcmp(other->name, dim->name) == 0)
                KSIM_ASSERT(!scenario_targets_intersect(other->targets, dim->targets));
        }
    }
    KSIM_ASSERT(s->variant_count == count_runs(s->vary));
    for (guint i = 0; i < s->expects->len; i++) {
        const ScenarioExpect *expect = s->expects->pdata[i];
        for (guint j = 0; j < expect->when->len; j++) {
            guint matches = 0;
            const ScenarioCondition *condition = expect->when->pdata[j];
            KSIM_ASSERT(scenario_vary_find_dim(s->vary, condition->key, &matches) != NULL);
        }
    }
}

void
scenario_check_invariants(const Scenario *scenario)
{
    KSIM_ASSERT(scenario != NULL);
    KSIM_ASSERT(scenario_groups_find_kind(scenario->groups, GROUP_SCENARIO) != NULL);
    KSIM_ASSERT(scenario_groups_find_kind(scenario->groups, GROUP_CLUSTER) != NULL);
    for (guint i = 0; i < scenario->groups->len; i++) {
        const RawGroup *group = scenario->groups->pdata[i];
        KSIM_ASSERT(scenario_groups_find(scenario->groups, group->name) == (gint)i);
        check_group_invariants(group);
    }
    check_vary_invariants(scenario);
    KSIM_ASSERT(strlen(scenario->sha256) == 64);
}

/* ---- One run: public ---- */

guint
scenario_variant_index(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->index;
}

const char *
scenario_variant_label(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->label;
}

const GPtrArray *
scenario_variant_settings(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->settings;
}

gint64
scenario_variant_duration_ns(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->duration_ns;
}

gint64
scenario_variant_quiet_ns(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->quiet_ns;
}

guint64
scenario_variant_seed(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->seed;
}

gboolean
scenario_variant_paranoid(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->paranoid;
}

const ScenarioCluster *
scenario_variant_cluster(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return &variant->cluster;
}

const KConfig *
scenario_variant_broker_config(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    KSIM_ASSERT(variant->cluster.config != NULL);
    return variant->cluster.config;
}

const KConfig *
scenario_variant_broker_config_of(const ScenarioVariant *variant, guint broker_id)
{
    KSIM_ASSERT(variant != NULL);
    KSIM_ASSERT(broker_id >= 1 && broker_id <= variant->cluster.brokers);
    const KConfig *own = g_ptr_array_index(variant->cluster.broker_configs, broker_id - 1);
    return own != NULL ? own : variant->cluster.config;
}

KConfig *
scenario_topic_config_of(const ScenarioVariant *variant, const ScenarioTopic *topic,
                         guint broker_id)
{
    KSIM_ASSERT(topic != NULL);
    KConfig *cfg = kconfig_new_topic(scenario_variant_broker_config_of(variant, broker_id));
    g_autoptr(GPtrArray) keys = kconfig_keys_sorted(topic->config);
    for (guint i = 0; i < keys->len; i++) {
        const char *key = keys->pdata[i];
        gboolean ok = kconfig_set(cfg, key, kconfig_get_value(topic->config, key), NULL);
        KSIM_ASSERT(ok);
    }
    return cfg;
}

const GPtrArray *
scenario_variant_topics(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->topics;
}

const ScenarioTopic *
scenario_variant_find_topic(const ScenarioVariant *variant, const char *name)
{
    KSIM_ASSERT(variant != NULL);
    KSIM_ASSERT(name != NULL);
    return scenario_find_object(variant->topics, name);
}

const GPtrArray *
scenario_variant_producers(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->producers;
}

const GPtrArray *
scenario_variant_consumer_groups(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->consumer_groups;
}

const GPtrArray *
scenario_variant_faults(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->faults;
}

const ScenarioRandomFaults *
scenario_variant_random_faults(const ScenarioVariant *variant)
{
    KSIM_ASSERT(variant != NULL);
    return variant->random_faults;
}
