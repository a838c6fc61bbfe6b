/*
 * scenario_faults: a run's faults from their groups (see scenario.h):
 * [fault NAME] with its action's keys and targets, and [random-faults].
 */
#include "scenario_internal.h"

#include "cluster.h"
#include "kafka_proto.h"
#include "sim_assert.h"

#include <string.h>

#define SCENARIO_BROKER_FAULT_GROUPS_MAX 64u

/* ---- Faults ---- */

enum {
    FAULT_KEY_TARGET = 1u << 0,
    FAULT_KEY_DURATION = 1u << 1,
    FAULT_KEY_GROUPS = 1u << 2,
    FAULT_KEY_TO = 1u << 3,
    FAULT_KEY_COUNT = 1u << 4,
    FAULT_KEY_DELAY = 1u << 5,
    FAULT_KEY_FACTOR = 1u << 6,
    FAULT_KEY_TOPIC = 1u << 7,
    FAULT_KEY_PARTITIONS = 1u << 8,
    FAULT_KEY_MESSAGE = 1u << 9,
    /* The window faults on links and the clock fault. */
    FAULT_KEY_RATE = 1u << 16,
    FAULT_KEY_LATENCY = 1u << 17,
    FAULT_KEY_JITTER = 1u << 18,
    FAULT_KEY_BANDWIDTH = 1u << 19,
    FAULT_KEY_OFFSET = 1u << 20,
};

static const struct {
    const char *key;
    guint flag;
} FAULT_KEYS[] = {
    {"target", FAULT_KEY_TARGET},         {"duration", FAULT_KEY_DURATION},
    {"groups", FAULT_KEY_GROUPS},         {"to", FAULT_KEY_TO},
    {"count", FAULT_KEY_COUNT},           {"delay", FAULT_KEY_DELAY},
    {"factor", FAULT_KEY_FACTOR},         {"topic", FAULT_KEY_TOPIC},
    {"partitions", FAULT_KEY_PARTITIONS}, {"message", FAULT_KEY_MESSAGE},
    {"rate", FAULT_KEY_RATE},             {"latency", FAULT_KEY_LATENCY},
    {"jitter", FAULT_KEY_JITTER},         {"bandwidth", FAULT_KEY_BANDWIDTH},
    {"offset", FAULT_KEY_OFFSET},
};

#define TARGET_BIT(kind) (1u << (kind))
/* Brokers fixed when the file is read: a rack's, or a partition's replica. */
#define TARGETS_BROKER_SETS (TARGET_BIT(SCENARIO_TARGET_RACK) | TARGET_BIT(SCENARIO_TARGET_REPLICA))
#define TARGETS_BROKERS                                                                            \
    (TARGET_BIT(SCENARIO_TARGET_BROKER) | TARGET_BIT(SCENARIO_TARGET_LEADER) |                     \
     TARGET_BIT(SCENARIO_TARGET_FOLLOWER) | TARGET_BIT(SCENARIO_TARGET_CONTROLLER) |               \
     TARGET_BIT(SCENARIO_TARGET_RANDOM) | TARGETS_BROKER_SETS)
/* KRaft's controller nodes (not brokers: they hold no partition). */
#define TARGETS_CONTROLLERS                                                                        \
    (TARGET_BIT(SCENARIO_TARGET_CONTROLLER_NODE) | TARGET_BIT(SCENARIO_TARGET_QUORUM_FOLLOWER))
#define TARGETS_DISKS (TARGETS_BROKERS | TARGET_BIT(SCENARIO_TARGET_ZK) | TARGETS_CONTROLLERS)
#define TARGETS_CLIENTS                                                                            \
    (TARGET_BIT(SCENARIO_TARGET_PRODUCER) | TARGET_BIT(SCENARIO_TARGET_CONSUMER))
#define TARGETS_NODES (TARGETS_DISKS | TARGETS_CLIENTS)
/* A node that is down or paused is named by id: "the leader" has changed. */
#define TARGETS_FIXED                                                                              \
    (TARGET_BIT(SCENARIO_TARGET_BROKER) | TARGET_BIT(SCENARIO_TARGET_ZK) | TARGETS_CLIENTS |           \
     TARGETS_BROKER_SETS | TARGET_BIT(SCENARIO_TARGET_CONTROLLER_NODE))

typedef struct {
    const char *name;
    guint targets;  /* the target kinds allowed; 0: no target */
    guint required; /* FAULT_KEY_* */
    guint optional; /* FAULT_KEY_* */
} ActionInfo;

static const ActionInfo ACTIONS[] = {
    [SCENARIO_ACTION_CRASH] = {"crash", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_POWER_LOSS] = {"power-loss", TARGETS_DISKS, FAULT_KEY_TARGET,
                                    FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESTART] = {"restart", TARGETS_FIXED, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_PAUSE] = {"pause", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESUME] = {"resume", TARGETS_FIXED, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_PARTITION] = {"partition", 0, FAULT_KEY_GROUPS, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_ONE_WAY] = {"one-way", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                                 FAULT_KEY_DURATION},
    [SCENARIO_ACTION_ISOLATE] = {"isolate", TARGETS_NODES, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_HEAL] = {"heal", 0, 0, 0},
    [SCENARIO_ACTION_DISK_SLOW] = {"disk-slow", TARGETS_DISKS, FAULT_KEY_TARGET | FAULT_KEY_FACTOR,
                                   FAULT_KEY_DURATION},
    [SCENARIO_ACTION_DISK_FULL] = {"disk-full", TARGETS_DISKS, FAULT_KEY_TARGET,
                                   FAULT_KEY_DURATION},
    [SCENARIO_ACTION_LOSE] = {"lose", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                              FAULT_KEY_COUNT},
    [SCENARIO_ACTION_DELAY] = {"delay", TARGETS_NODES,
                               FAULT_KEY_TARGET | FAULT_KEY_TO | FAULT_KEY_DELAY, FAULT_KEY_COUNT},
    [SCENARIO_ACTION_DUPLICATE] = {"duplicate", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_TO,
                                   FAULT_KEY_COUNT},
    [SCENARIO_ACTION_EXPIRE_SESSION] = {"expire-session", TARGETS_BROKERS, FAULT_KEY_TARGET, 0},
    [SCENARIO_ACTION_CRASH_ZK] = {"crash-zk", 0, 0, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_RESTART_ZK] = {"restart-zk", 0, 0, 0},
    [SCENARIO_ACTION_SHUTDOWN] = {"shutdown", TARGETS_BROKERS, FAULT_KEY_TARGET, FAULT_KEY_DURATION},
    [SCENARIO_ACTION_ADD_PARTITIONS] = {"add-partitions", 0, FAULT_KEY_TOPIC | FAULT_KEY_PARTITIONS,
                                        0},
    [SCENARIO_ACTION_DISK_ERROR] = {"disk-error", TARGETS_BROKERS, FAULT_KEY_TARGET,
                                    FAULT_KEY_DURATION},
    [SCENARIO_ACTION_LOSS] = {"loss", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_RATE,
                              FAULT_KEY_TO | FAULT_KEY_DURATION},
    [SCENARIO_ACTION_LATENCY] = {"latency", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_LATENCY,
                                 FAULT_KEY_TO | FAULT_KEY_JITTER | FAULT_KEY_DURATION},
    [SCENARIO_ACTION_BANDWIDTH] = {"bandwidth", TARGETS_NODES,
                                   FAULT_KEY_TARGET | FAULT_KEY_BANDWIDTH,
                                   FAULT_KEY_TO | FAULT_KEY_DURATION},
    [SCENARIO_ACTION_CLOCK] = {"clock", TARGETS_NODES, FAULT_KEY_TARGET | FAULT_KEY_OFFSET,
                               FAULT_KEY_DURATION},
    [SCENARIO_ACTION_HOLD] = {"hold", TARGETS_NODES,
                              FAULT_KEY_TARGET | FAULT_KEY_MESSAGE | FAULT_KEY_DELAY,
                              FAULT_KEY_TO | FAULT_KEY_COUNT},
};

static const char *const TARGET_FORMS[] = {
    [SCENARIO_TARGET_NONE] = "none",
    [SCENARIO_TARGET_BROKER] = "broker:N",
    [SCENARIO_TARGET_LEADER] = "leader(TOPIC-P)",
    [SCENARIO_TARGET_FOLLOWER] = "follower(TOPIC-P[, K])",
    [SCENARIO_TARGET_CONTROLLER] = "controller",
    [SCENARIO_TARGET_RANDOM] = "random",
    [SCENARIO_TARGET_ZK] = "zk",
    [SCENARIO_TARGET_PRODUCER] = "producer:NAME",
    [SCENARIO_TARGET_REST] = "*",
    [SCENARIO_TARGET_CONSUMER] = "consumer:NAME[-K]",
    [SCENARIO_TARGET_RACK] = "rack:NAME",
    [SCENARIO_TARGET_REPLICA] = "replica(TOPIC-P, broker:N)",
    [SCENARIO_TARGET_CONTROLLER_NODE] = "controller:N",
    [SCENARIO_TARGET_QUORUM_FOLLOWER] = "quorum-follower",
};

const char *
scenario_action_name(ScenarioAction action)
{
    KSIM_ASSERT((guint)action < G_N_ELEMENTS(ACTIONS));
    KSIM_ASSERT(ACTIONS[action].name != NULL);
    return ACTIONS[action].name;
}

static ScenarioAction
action_of(const char *name)
{
    for (guint i = 0; i < G_N_ELEMENTS(ACTIONS); i++) {
        if (strcmp(ACTIONS[i].name, name) == 0)
            return (ScenarioAction)i;
    }
    KSIM_ASSERT(!"an action the registry accepts but scenario does not know");
    return SCENARIO_ACTION_HEAL;
}

char *
scenario_target_format(const ScenarioTarget *target)
{
    KSIM_ASSERT(target != NULL);
    switch (target->kind) {
    case SCENARIO_TARGET_BROKER:
        return g_strdup_printf("broker:%u", target->broker);
    case SCENARIO_TARGET_LEADER:
        return g_strdup_printf("leader(%s-%u)", target->topic, target->partition);
    case SCENARIO_TARGET_FOLLOWER:
        if (target->nth > 0)
            return g_strdup_printf("follower(%s-%u, %u)", target->topic, target->partition,
                                   target->nth);
        return g_strdup_printf("follower(%s-%u)", target->topic, target->partition);
    case SCENARIO_TARGET_REPLICA:
        return g_strdup_printf("replica(%s-%u, broker:%u)", target->topic, target->partition,
                               target->broker);
    case SCENARIO_TARGET_RACK:
        return g_strdup_printf("rack:%s", target->rack);
    case SCENARIO_TARGET_CONTROLLER_NODE:
        return g_strdup_printf("controller:%u", target->broker);
    case SCENARIO_TARGET_PRODUCER:
        return g_strdup_printf("producer:%s", target->producer);
    case SCENARIO_TARGET_CONSUMER:
        if (target->instance > 0)
            return g_strdup_printf("consumer:%s-%u", target->consumer, target->instance);
        return g_strdup_printf("consumer:%s", target->consumer);
    case SCENARIO_TARGET_NONE:
    case SCENARIO_TARGET_CONTROLLER:
    case SCENARIO_TARGET_RANDOM:
    case SCENARIO_TARGET_ZK:
    case SCENARIO_TARGET_REST:
    case SCENARIO_TARGET_QUORUM_FOLLOWER:
        return g_strdup(TARGET_FORMS[target->kind]);
    }
    KSIM_ASSERT(!"unknown target kind");
    return NULL;
}

static void
target_clear(ScenarioTarget *target)
{
    g_clear_pointer(&target->topic, g_free);
    g_clear_pointer(&target->producer, g_free);
    g_clear_pointer(&target->consumer, g_free);
    g_clear_pointer(&target->rack, g_free);
    *target = (ScenarioTarget){0};
}

static void
target_clear_cb(gpointer data)
{
    target_clear(data);
}

static char *
allowed_forms(guint targets)
{
    GString *out = g_string_new(NULL);
    for (guint kind = 0; kind < G_N_ELEMENTS(TARGET_FORMS); kind++) {
        if ((targets & TARGET_BIT(kind)) != 0)
            g_string_append_printf(out, "%s%s", out->len ? ", " : "", TARGET_FORMS[kind]);
    }
    return g_string_free(out, FALSE);
}

static char *
parse_broker_target(const Build *b, const char *text, const char *number, ScenarioTarget *out)
{
    guint brokers = b->variant->cluster.brokers;
    guint64 id = 0;
    if (!g_ascii_string_to_unsigned(number, 10, 0, G_MAXUINT32, &id, NULL))
        return g_strdup_printf("'%s' is not broker:N with N a broker id (1..%u)", text, brokers);
    if (id < 1 || id > brokers)
        return g_strdup_printf("'%s' does not exist: the cluster has %u brokers "
                               "(broker:1 .. broker:%u)",
                               text, brokers, brokers);
    out->kind = SCENARIO_TARGET_BROKER;
    out->broker = (guint)id;
    return NULL;
}

/* leader(TOPIC-P) and follower(TOPIC-P); topic names may contain '-'. */
static char *
parse_partition_target(const Build *b, const char *text, const char *inner, ScenarioTarget *out)
{
    const char *dash = strrchr(inner, '-');
    guint64 partition = 0;
    if (dash == NULL || dash == inner ||
        !g_ascii_string_to_unsigned(dash + 1, 10, 0, G_MAXUINT32, &partition, NULL))
        return g_strdup_printf("'%s' is not leader(TOPIC-P) or follower(TOPIC-P), "
                               "e.g. leader(orders-0)",
                               text);
    g_autofree char *name = g_strndup(inner, (gsize)(dash - inner));
    /* The coordinators' internal topics, created when first needed. */
    static const struct {
        const char *topic, *partitions_key;
    } internal[] = {{"__consumer_offsets", "offsets.topic.num.partitions"},
                    {"__transaction_state", "transaction.state.log.num.partitions"}};
    for (guint i = 0; i < G_N_ELEMENTS(internal); i++) {
        if (strcmp(name, internal[i].topic) != 0)
            continue;
        gint64 count = kconfig_get_int64(b->variant->cluster.config, internal[i].partitions_key);
        if ((gint64)partition >= count)
            return g_strdup_printf("'%s' does not exist: %s has %" G_GINT64_FORMAT
                                   " partitions (%s)",
                                   text, name, count, internal[i].partitions_key);
        out->topic = g_steal_pointer(&name);
        out->partition = (guint)partition;
        return NULL;
    }
    const ScenarioTopic *topic = scenario_find_object(b->variant->topics, name);
    if (topic == NULL) {
        g_autofree char *why = scenario_no_such_message("topic", name, b->variant->topics);
        return g_strdup_printf("'%s': %s", text, why);
    }
    if (partition >= topic->partitions)
        return g_strdup_printf("'%s' does not exist: topic %s has %u partitions (0..%u)", text,
                               topic->name, topic->partitions, topic->partitions - 1);
    out->topic = g_steal_pointer(&name);
    out->partition = (guint)partition;
    return NULL;
}

/* The replication factor of the partition a leader/follower/replica target
 * names (parse_partition_target filled it): an internal topic's is at most
 * its key's and the broker count. */
static guint
target_replication_factor(const Build *b, const ScenarioTarget *target, gboolean *internal)
{
    const ScenarioTopic *topic = scenario_find_object(b->variant->topics, target->topic);
    *internal = topic == NULL;
    if (topic != NULL)
        return topic->replication_factor;
    const char *key = g_str_equal(target->topic, "__consumer_offsets")
                          ? "offsets.topic.replication.factor"
                          : "transaction.state.log.replication.factor";
    gint64 rf = kconfig_get_int64(b->variant->cluster.config, key);
    return (guint)MIN(rf, (gint64)b->variant->cluster.brokers);
}

/* follower(TOPIC-P, K): the K-th follower, 1 .. replication factor - 1. */
static char *
parse_follower_nth(const Build *b, const char *text, const char *number, ScenarioTarget *out)
{
    gboolean internal = FALSE;
    guint rf = target_replication_factor(b, out, &internal);
    guint64 nth = 0;
    g_autofree char *trimmed = g_strstrip(g_strdup(number));
    if (!g_ascii_string_to_unsigned(trimmed, 10, 1, G_MAXUINT32, &nth, NULL))
        return g_strdup_printf("'%s': K in follower(TOPIC-P, K) is a follower's number from 1, "
                               "e.g. follower(orders-0, 2)",
                               text);
    if (nth + 1 > rf)
        return g_strdup_printf("'%s' does not exist: %s-%u has %u replica%s, so at most %u "
                               "follower%s",
                               text, out->topic, out->partition, rf, rf == 1 ? "" : "s", rf - 1,
                               rf == 2 ? "" : "s");
    out->nth = (guint)nth;
    return NULL;
}

/* replica(TOPIC-P, broker:N): broker N, which must hold a replica of the
 * partition whatever the seed: the topic's replica.assignment says so, or
 * its replication factor puts a replica on every broker. */
static char *
parse_replica_broker(const Build *b, const char *text, const char *broker, ScenarioTarget *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(broker));
    if (!g_str_has_prefix(trimmed, "broker:"))
        return g_strdup_printf("'%s' is not replica(TOPIC-P, broker:N), e.g. "
                               "replica(orders-0, broker:3)",
                               text);
    g_autofree char *topic = g_steal_pointer(&out->topic);
    guint partition = out->partition;
    char *why = parse_broker_target(b, trimmed, trimmed + strlen("broker:"), out);
    out->topic = g_steal_pointer(&topic);
    out->partition = partition;
    out->kind = SCENARIO_TARGET_REPLICA;
    if (why != NULL)
        return why;
    const ScenarioTopic *found = scenario_find_object(b->variant->topics, out->topic);
    if (found == NULL)
        return g_strdup_printf("'%s': the brokers place %s's replicas themselves when it is "
                               "first needed, so which brokers hold them is not known when the "
                               "file is read",
                               text, out->topic);
    if (found->assignment != NULL) {
        const GArray *replicas = g_ptr_array_index(found->assignment, out->partition);
        for (guint i = 0; i < replicas->len; i++) {
            if (g_array_index(replicas, gint32, i) == (gint32)out->broker)
                return NULL;
        }
        g_autoptr(GString) list = g_string_new(NULL);
        for (guint i = 0; i < replicas->len; i++)
            g_string_append_printf(list, "%s%d", i ? ", " : "", g_array_index(replicas, gint32, i));
        return g_strdup_printf("'%s': broker %u holds no replica of %s-%u (its replicas are on "
                               "brokers %s)",
                               text, out->broker, out->topic, out->partition, list->str);
    }
    if (found->replication_factor >= b->variant->cluster.brokers)
        return NULL;
    return g_strdup_printf("'%s': whether broker %u holds a replica of %s-%u depends on the seed "
                           "(replication factor %u on %u brokers): fix the replicas with "
                           "replica.assignment in [topic %s]",
                           text, out->broker, out->topic, out->partition,
                           found->replication_factor, b->variant->cluster.brokers, out->topic);
}

/* leader(T-P), follower(T-P), follower(T-P, K), replica(T-P, broker:N). */
static char *
parse_replica_target(const Build *b, const char *text, ScenarioTargetKind kind, gsize open,
                     ScenarioTarget *out)
{
    g_autofree char *inner = g_strndup(text + open, strlen(text) - open - 1);
    char *comma = strchr(inner, ',');
    if (comma != NULL)
        *comma = '\0';
    g_strstrip(inner);
    out->kind = kind;
    if (kind == SCENARIO_TARGET_LEADER && comma != NULL)
        return g_strdup_printf("'%s' is not leader(TOPIC-P), e.g. leader(orders-0)", text);
    if (kind == SCENARIO_TARGET_REPLICA && comma == NULL)
        return g_strdup_printf("'%s' is not replica(TOPIC-P, broker:N), e.g. "
                               "replica(orders-0, broker:3)",
                               text);
    char *why = parse_partition_target(b, text, inner, out);
    if (why != NULL || comma == NULL)
        return why;
    if (kind == SCENARIO_TARGET_FOLLOWER)
        return parse_follower_nth(b, text, comma + 1, out);
    return parse_replica_broker(b, text, comma + 1, out);
}

/* rack:NAME, a rack some broker is in. */
static char *
parse_rack_target(const Build *b, const char *text, const char *name, ScenarioTarget *out)
{
    const GPtrArray *racks = b->variant->cluster.racks;
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; racks != NULL && i < racks->len; i++) {
        const char *rack = racks->pdata[i];
        if (rack == NULL)
            continue;
        if (strcmp(rack, name) == 0) {
            out->kind = SCENARIO_TARGET_RACK;
            out->rack = g_strdup(name);
            return NULL;
        }
        gboolean listed = FALSE;
        for (guint j = 0; j < names->len && !listed; j++)
            listed = strcmp(names->pdata[j], rack) == 0;
        if (!listed)
            g_ptr_array_add(names, (gpointer)rack);
    }
    if (names->len == 0)
        return g_strdup_printf("'%s': no broker has a rack (give them broker.rack in [broker N] "
                               "or racks in [cluster])",
                               text);
    const char *suggestion =
        kconfig_suggest_among(name, (const char *const *)names->pdata, names->len);
    g_autofree char *hint = scenario_did_you_mean(suggestion);
    g_ptr_array_add(names, NULL);
    g_autofree char *listed = g_strjoinv(", ", (char **)names->pdata);
    return g_strdup_printf("'%s': no broker is in rack '%s' (the racks are %s)%s", text, name,
                           listed, hint);
}

/* consumer:NAME (every member) or consumer:NAME-K (the K-th); a section
 * called NAME-K itself wins. */
static char *
parse_consumer_target(const Build *b, const char *name, ScenarioTarget *out)
{
    const GPtrArray *groups = b->variant->consumer_groups;
    out->kind = SCENARIO_TARGET_CONSUMER;
    if (scenario_find_object(groups, name) != NULL) {
        out->consumer = g_strdup(name);
        return NULL;
    }
    const char *dash = strrchr(name, '-');
    guint64 instance = 0;
    if (dash != NULL && dash != name &&
        g_ascii_string_to_unsigned(dash + 1, 10, 1, G_MAXUINT32, &instance, NULL)) {
        g_autofree char *section = g_strndup(name, (gsize)(dash - name));
        const ScenarioConsumerGroup *group = scenario_find_object(groups, section);
        if (group != NULL && instance <= group->members) {
            out->consumer = g_steal_pointer(&section);
            out->instance = (guint)instance;
            return NULL;
        }
        if (group != NULL)
            return g_strdup_printf("'consumer:%s' does not exist: [consumer-group %s] has %u "
                                   "member%s (consumer:%s-1 .. consumer:%s-%u)",
                                   name, group->name, group->members,
                                   group->members == 1 ? "" : "s", group->name, group->name,
                                   group->members);
    }
    return scenario_no_such_message("consumer group", name, groups);
}

/* controller:N and quorum-follower name KRaft's controller nodes: only in
 * metadata.mode = kraft, N a node.id of the quorum. */
static char *
parse_controller_target(const Build *b, const char *text, ScenarioTarget *out)
{
    const KConfig *hardware = b->variant->cluster.hardware;
    if (strcmp(kconfig_get_value(hardware, "metadata.mode"), "kraft") != 0)
        return g_strdup_printf("'%s' names a KRaft controller, and this cluster runs "
                               "metadata.mode = zookeeper (its controller is a broker: target "
                               "it with `controller`)",
                               text);
    if (strcmp(text, TARGET_FORMS[SCENARIO_TARGET_QUORUM_FOLLOWER]) == 0) {
        out->kind = SCENARIO_TARGET_QUORUM_FOLLOWER;
        return NULL;
    }
    const ScenarioCluster *cluster = &b->variant->cluster;
    guint64 id = 0;
    if (!g_ascii_string_to_unsigned(text + strlen("controller:"), 10, 0, G_MAXINT32, &id, NULL) ||
        !scenario_cluster_is_voter(cluster, (gint32)id)) {
        g_autofree char *voters = scenario_cluster_voters_text(cluster);
        return g_strdup_printf("'%s' does not exist: the quorum's %s are %s", text,
                               cluster->combined ? "voters (combined with brokers of the same "
                                                   "node.id)"
                                                 : "controllers",
                               voters);
    }
    out->kind = SCENARIO_TARGET_CONTROLLER_NODE;
    out->broker = (guint)id;
    return NULL;
}

static char *
parse_target_kind(const Build *b, const char *text, ScenarioTarget *out)
{
    if (g_str_has_prefix(text, "controller:") ||
        strcmp(text, TARGET_FORMS[SCENARIO_TARGET_QUORUM_FOLLOWER]) == 0)
        return parse_controller_target(b, text, out);
    static const ScenarioTargetKind words[] = {SCENARIO_TARGET_CONTROLLER, SCENARIO_TARGET_RANDOM,
                                               SCENARIO_TARGET_ZK, SCENARIO_TARGET_REST};
    for (guint i = 0; i < G_N_ELEMENTS(words); i++) {
        if (strcmp(text, TARGET_FORMS[words[i]]) == 0) {
            out->kind = words[i];
            return NULL;
        }
    }
    if (g_str_has_prefix(text, "broker:"))
        return parse_broker_target(b, text, text + strlen("broker:"), out);
    if (g_str_has_prefix(text, "producer:")) {
        const char *name = text + strlen("producer:");
        if (scenario_find_object(b->variant->producers, name) == NULL)
            return scenario_no_such_message("producer", name, b->variant->producers);
        out->kind = SCENARIO_TARGET_PRODUCER;
        out->producer = g_strdup(name);
        return NULL;
    }
    if (g_str_has_prefix(text, "consumer:"))
        return parse_consumer_target(b, text + strlen("consumer:"), out);
    if (g_str_has_prefix(text, "rack:"))
        return parse_rack_target(b, text, text + strlen("rack:"), out);
    static const struct {
        const char *open;
        ScenarioTargetKind kind;
    } replica_forms[] = {{"leader(", SCENARIO_TARGET_LEADER},
                         {"follower(", SCENARIO_TARGET_FOLLOWER},
                         {"replica(", SCENARIO_TARGET_REPLICA}};
    for (guint i = 0; i < G_N_ELEMENTS(replica_forms); i++) {
        if (g_str_has_prefix(text, replica_forms[i].open) && g_str_has_suffix(text, ")"))
            return parse_replica_target(b, text, replica_forms[i].kind,
                                        strlen(replica_forms[i].open), out);
    }
    g_autofree char *forms = allowed_forms(TARGETS_NODES);
    return g_strdup_printf("'%s' is not a target; expected %s", text, forms);
}

static gboolean
is_number(const char *text)
{
    if (*text == '\0')
        return FALSE;
    for (const char *p = text; *p != '\0'; p++) {
        if (!g_ascii_isdigit(*p))
            return FALSE;
    }
    return TRUE;
}

/* NULL and `out` filled, or why `text` is not a target of `allowed` kinds;
 * `used_by` names the user in messages. (transfer full) */
static char *
parse_target(const Build *b, const char *text, guint allowed, const char *used_by,
             gboolean bare_broker, ScenarioTarget *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    g_autofree char *spelled = bare_broker && is_number(trimmed)
                                   ? g_strdup_printf("broker:%s", trimmed)
                                   : g_strdup(trimmed);
    *out = (ScenarioTarget){0};
    char *why = parse_target_kind(b, spelled, out);
    if (why == NULL && (allowed & TARGET_BIT(out->kind)) == 0) {
        g_autofree char *forms = allowed_forms(allowed);
        why = g_strdup_printf("'%s' cannot be used with %s (it takes %s)", trimmed, used_by, forms);
    }
    if (why != NULL)
        target_clear(out);
    return why;
}

static char *
parse_group_members(const Build *b, const char *part, GArray *members, GHashTable *seen)
{
    g_auto(GStrv) items = g_strsplit(part, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        const char *item = g_strstrip(items[i]);
        if (*item == '\0')
            return g_strdup_printf("group '%s' has an empty member", g_strstrip((char *)part));
        ScenarioTarget target;
        char *why = parse_target(b, item, TARGETS_NODES | TARGET_BIT(SCENARIO_TARGET_REST),
                                 "partition groups", TRUE, &target);
        if (why != NULL)
            return why;
        g_array_append_val(members, target);
        char *spelled = scenario_target_format(&target);
        if (!g_hash_table_add(seen, spelled))
            return g_strdup_printf("'%s' is in more than one group", item);
    }
    if (members->len == 0)
        return g_strdup("a group is empty");
    return NULL;
}

/* The brokers a target names when the file is read (broker:N, rack:NAME,
 * replica(T-P, broker:N)); none for the others. */
static void
fixed_brokers(const Build *b, const ScenarioTarget *target, GArray *out)
{
    if (target->kind == SCENARIO_TARGET_BROKER || target->kind == SCENARIO_TARGET_REPLICA)
        g_array_append_val(out, target->broker);
    const GPtrArray *racks = b->variant->cluster.racks;
    for (guint i = 0; target->kind == SCENARIO_TARGET_RACK && i < racks->len; i++) {
        const char *rack = racks->pdata[i];
        guint id = i + 1;
        if (rack != NULL && strcmp(rack, target->rack) == 0)
            g_array_append_val(out, id);
    }
}

/* A broker a partition's groups name twice (broker:1 and the rack:a that
 * holds it): the partition would have to cut it off from itself. */
static char *
check_groups_disjoint(const Build *b, const GPtrArray *groups)
{
    g_autoptr(GHashTable) named = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint g = 0; g < groups->len; g++) {
        const GArray *members = g_ptr_array_index(groups, g);
        for (guint m = 0; m < members->len; m++) {
            const ScenarioTarget *target = &g_array_index(members, ScenarioTarget, m);
            g_array_set_size(ids, 0);
            fixed_brokers(b, target, ids);
            g_autofree char *spelled = scenario_target_format(target);
            for (guint i = 0; i < ids->len; i++) {
                guint id = g_array_index(ids, guint, i);
                const char *first = g_hash_table_lookup(named, GUINT_TO_POINTER(id));
                if (first != NULL)
                    return g_strdup_printf("broker %u is in the groups twice (as %s and as %s)",
                                           id, first, spelled);
                g_hash_table_insert(named, GUINT_TO_POINTER(id), g_strdup(spelled));
            }
        }
    }
    return NULL;
}

/* "1,2 | 3" into groups of targets. (transfer full) */
static char *
parse_groups(const Build *b, const char *text, GPtrArray *groups)
{
    g_auto(GStrv) parts = g_strsplit(text, "|", -1);
    guint n_parts = g_strv_length(parts);
    if (n_parts < 2 || n_parts > SCENARIO_BROKER_FAULT_GROUPS_MAX)
        return g_strdup_printf("'%s' is not a partition: two to %u groups separated by '|', "
                               "e.g. 1,2 | 3",
                               text, SCENARIO_BROKER_FAULT_GROUPS_MAX);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < n_parts; i++) {
        GArray *members = g_array_new(FALSE, TRUE, sizeof(ScenarioTarget));
        g_array_set_clear_func(members, target_clear_cb);
        g_ptr_array_add(groups, members);
        char *why = parse_group_members(b, parts[i], members, seen);
        if (why != NULL)
            return why;
    }
    return check_groups_disjoint(b, groups);
}

void
scenario_fault_free(gpointer data)
{
    ScenarioFault *fault = data;
    g_free(fault->name);
    target_clear(&fault->target);
    target_clear(&fault->to);
    g_ptr_array_unref(fault->groups);
    g_free(fault->topic);
    g_free(fault);
}

static gboolean
check_fault_keys(const Build *b, const RawGroup *group, const ActionInfo *info, GError **error)
{
    for (guint i = 0; i < G_N_ELEMENTS(FAULT_KEYS); i++) {
        guint flag = FAULT_KEYS[i].flag;
        gboolean present = scenario_group_find_entry(group, FAULT_KEYS[i].key) != NULL;
        Loc loc = scenario_loc_key(b->scenario, group, FAULT_KEYS[i].key);
        if (present && ((info->required | info->optional) & flag) == 0) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                               "does not apply to action '%s'", info->name);
            return FALSE;
        }
        if (!present && (info->required & flag) != 0) {
            scenario_loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc,
                               "is required by action '%s'", info->name);
            return FALSE;
        }
    }
    return TRUE;
}

static gboolean
fault_targets(const Build *b, const RawGroup *group, const KConfig *cfg, const ActionInfo *info,
              ScenarioFault *fault, GError **error)
{
    g_autofree char *used_by = g_strdup_printf("action '%s'", info->name);
    char *why = NULL;
    const char *key = NULL;
    if (!kconfig_is_null(cfg, "target")) {
        key = "target";
        why = parse_target(b, kconfig_get_string(cfg, key), info->targets, used_by, FALSE,
                           &fault->target);
    }
    if (why == NULL && !kconfig_is_null(cfg, "to")) {
        key = "to";
        why = parse_target(b, kconfig_get_string(cfg, key), TARGETS_NODES, used_by, FALSE,
                           &fault->to);
    }
    if (why == NULL && !kconfig_is_null(cfg, "groups")) {
        key = "groups";
        why = parse_groups(b, kconfig_get_string(cfg, key), fault->groups);
    }
    if (why == NULL)
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, key);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
    g_free(why);
    return FALSE;
}

/* add-partitions: an existing topic and more partitions than it has. */
static gboolean
fault_add_partitions(const Build *b, const RawGroup *group, const KConfig *cfg,
                     ScenarioFault *fault, GError **error)
{
    const char *name = kconfig_get_string(cfg, "topic");
    const ScenarioTopic *topic = scenario_find_object(b->variant->topics, name);
    if (topic == NULL) {
        g_autofree char *why = scenario_no_such_message("topic", name, b->variant->topics);
        Loc loc = scenario_loc_key(b->scenario, group, "topic");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    fault->topic = g_strdup(topic->name);
    fault->partitions = (guint)kconfig_get_int64(cfg, "partitions");
    Loc loc = scenario_loc_key(b->scenario, group, "partitions");
    const GPtrArray *racks = b->variant->cluster.racks;
    g_autoptr(GError) refused = NULL;
    if (racks != NULL &&
        !cluster_check_racks(topic->name, (const char *const *)racks->pdata,
                             b->variant->cluster.brokers,
                             topic->disable_rack_aware ? CLUSTER_RACK_AWARE_DISABLED
                                                       : CLUSTER_RACK_AWARE_ENFORCED,
                             &refused)) {
        Loc topic_loc = scenario_loc_key(b->scenario, group, "topic");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &topic_loc,
                           "%s; set disable.rack.aware = true in [topic %s]", refused->message,
                           topic->name);
        return FALSE;
    }
    if (fault->partitions > topic->partitions)
        return scenario_check_topic_fits(b, &loc, topic->name, fault->partitions,
                                         topic->replication_factor, error);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "%u is not more than topic %s's %u partitions: Kafka only adds partitions",
                       fault->partitions, topic->name, topic->partitions);
    return FALSE;
}

/* The largest fsync latency sim_dist_sample can draw from `dist`: a constant
 * and a uniform range's upper end as written; every other kind is capped at a
 * day (8.64e13 ns) by the sampler. */
static double
dist_sample_max(const SimDist *dist)
{
    switch (dist->kind) {
    case SIM_DIST_CONSTANT:
        return dist->a;
    case SIM_DIST_UNIFORM:
        return dist->b;
    default:
        return 8.64e13;
    }
}

/* disk-slow multiplies each fsync latency by its factor: the product must
 * still be a time a run represents. */
static gboolean
fault_slow_factor(const Build *b, const RawGroup *group, const ScenarioFault *fault,
                  GError **error)
{
    double slowest = dist_sample_max(&b->variant->cluster.disk_fsync_latency) * fault->factor;
    if (slowest <= (double)KCONFIG_TIME_NS_MAX)
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, "factor");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "%g times the slowest disk.fsync.latency is above 100000h, the longest "
                       "time a run represents",
                       fault->factor);
    return FALSE;
}

/* ---- loss, latency, bandwidth, clock ---- */

/* "0.2" or "20%": a share of transmissions strictly between 0 and 1, kept
 * to a millionth. NULL and `out` set, or why not. (transfer full) */
static char *
parse_loss_rate(const char *text, guint32 *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    gsize length = strlen(trimmed);
    gboolean percent = length > 0 && trimmed[length - 1] == '%';
    if (percent)
        trimmed[length - 1] = '\0';
    char *end = NULL;
    double value = g_ascii_strtod(trimmed, &end);
    /* Decimal only: strtod would also read hexadecimal. */
    gboolean number = g_ascii_isdigit(trimmed[0]) && strpbrk(trimmed, "xX") == NULL &&
                      end != trimmed && *end == '\0';
    double share = percent ? value / 100.0 : value;
    double per_million = number ? share * SCENARIO_LOSS_DENOMINATOR : -1;
    if (number && per_million >= 0.5 && per_million < SCENARIO_LOSS_DENOMINATOR - 0.5) {
        *out = (guint32)(per_million + 0.5);
        return NULL;
    }
    return g_strdup_printf("'%s' is not a loss rate: a share above 0 and below 1, such as 0.2 "
                           "or 20%% (at least 0.0001%%; losing everything is a partition: "
                           "action = one-way or partition)",
                           text);
}

/* "1MB/s", "125000" or "10MiB" (bytes per second), above 0. (transfer full) */
static char *
parse_bandwidth(const char *text, gint64 *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    if (g_str_has_suffix(trimmed, "/s"))
        trimmed[strlen(trimmed) - 2] = '\0';
    g_autoptr(GError) local = NULL;
    gint64 bytes = 0;
    gboolean parsed = g_ascii_isdigit(trimmed[0]) && sim_parse_bytes(trimmed, &bytes, &local);
    if (parsed && bytes >= 1) {
        *out = bytes;
        return NULL;
    }
    return g_strdup_printf("'%s' is not a bandwidth: bytes per second above 0, such as 1MB/s, "
                           "10MiB/s or 125000%s%s%s",
                           text, local != NULL ? " (" : "", local != NULL ? local->message : "",
                           local != NULL ? ")" : "");
}

/* "+30s", "30s" (forward) or "-2h" (back): a step other than 0, at most
 * KCONFIG_TIME_NS_MAX either way, with a unit. (transfer full) */
static char *
parse_clock_offset(const char *text, gint64 *out)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    gboolean back = trimmed[0] == '-';
    const char *magnitude = trimmed + (back || trimmed[0] == '+' ? 1 : 0);
    gsize length = strlen(magnitude);
    g_autoptr(GError) local = NULL;
    gint64 ns = 0;
    gboolean parsed = g_ascii_isdigit(magnitude[0]) && g_ascii_isalpha(magnitude[length - 1]) &&
                      sim_parse_duration_ns(magnitude, 0, &ns, &local);
    if (parsed && ns > 0 && ns <= KCONFIG_TIME_NS_MAX) {
        *out = back ? -ns : ns;
        return NULL;
    }
    return g_strdup_printf("'%s' is not a clock step: a signed duration with a unit other than "
                           "0, such as +30s or -2h, at most 100000h either way%s%s%s",
                           text, local != NULL ? " (" : "", local != NULL ? local->message : "",
                           local != NULL ? ")" : "");
}

/* latency = L with jitter = J: uniform in [L - J, L + J], as netem draws it;
 * a distribution takes no jitter. */
static char *
fold_jitter(const KConfig *cfg, SimDist *latency)
{
    if (kconfig_is_null(cfg, "jitter"))
        return NULL;
    gint64 jitter = kconfig_get_duration_ns(cfg, "jitter");
    if (latency->kind != SIM_DIST_CONSTANT)
        return g_strdup("applies to a constant latency only (latency is a distribution: "
                        "write the spread there, e.g. uniform:30ms..70ms)");
    if ((double)jitter > latency->a) {
        g_autofree char *j = scenario_format_duration(jitter);
        g_autofree char *l = scenario_format_duration((gint64)latency->a);
        return g_strdup_printf("%s is more than latency %s: a delay cannot be negative", j, l);
    }
    if (jitter > 0)
        *latency = (SimDist){SIM_DIST_UNIFORM, latency->a - (double)jitter,
                             latency->a + (double)jitter};
    return NULL;
}

/* A required key's text; "null" when the file wrote Kafka's null. */
static const char *
text_of(const KConfig *cfg, const char *key)
{
    return kconfig_is_null(cfg, key) ? "null" : kconfig_get_string(cfg, key);
}

/* The loss, latency, bandwidth and clock actions' own keys. */
static gboolean
fault_window_values(const Build *b, const RawGroup *group, const KConfig *cfg,
                    ScenarioFault *fault, GError **error)
{
    char *why = NULL;
    const char *key = NULL;
    fault->latency = SIM_DIST_CONST(0);
    switch (fault->action) {
    case SCENARIO_ACTION_LOSS:
        key = "rate";
        why = parse_loss_rate(text_of(cfg, key), &fault->loss_per_million);
        break;
    case SCENARIO_ACTION_LATENCY:
        key = "latency";
        if (kconfig_is_null(cfg, key)) {
            why = g_strdup("null is not a latency: a duration such as 50ms or a distribution");
            break;
        }
        fault->latency = kconfig_get_dist(cfg, key);
        key = "jitter";
        why = fold_jitter(cfg, &fault->latency);
        break;
    case SCENARIO_ACTION_BANDWIDTH:
        key = "bandwidth";
        why = parse_bandwidth(text_of(cfg, key), &fault->bandwidth_bytes_per_s);
        break;
    case SCENARIO_ACTION_CLOCK:
        key = "offset";
        why = parse_clock_offset(text_of(cfg, key), &fault->clock_offset_ns);
        break;
    default:
        return TRUE;
    }
    if (why == NULL)
        return TRUE;
    /* A long value is quoted cut short, as every scenario message quotes it. */
    g_autofree char *shown = kconfig_echo_quoted(why);
    Loc loc = scenario_loc_key(b->scenario, group, key);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", shown);
    g_free(why);
    return FALSE;
}

/* A request's KafkaMsgType from its API name, as kafka_msg_type_name spells
 * it without " request". */
static guint32
message_type_of(const char *name)
{
    g_autofree char *full = g_strdup_printf("%s request", name);
    for (guint type = KMSG_PRODUCE_REQUEST; kafka_msg_type_name(type) != NULL; type++) {
        if (strcmp(kafka_msg_type_name(type), full) == 0)
            return type;
    }
    KSIM_ASSERT(!"a message the registry accepts but the protocol does not know");
    return 0;
}

gboolean
scenario_build_fault(Build *b, const RawGroup *group, GError **error)
{
    ScenarioFault *fault = g_new0(ScenarioFault, 1);
    fault->name = g_strdup(group->object);
    fault->index = b->variant->faults->len;
    fault->groups = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    g_ptr_array_add(b->variant->faults, fault);
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_FAULT);
    if (!scenario_fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    fault->action = action_of(kconfig_get_string(cfg, "action"));
    const ActionInfo *info = &ACTIONS[fault->action];
    if (!check_fault_keys(b, group, info, error))
        return FALSE;
    fault->time_ns = kconfig_get_duration_ns(cfg, "at");
    if (!scenario_check_not_past_end(b, group, "at", fault->time_ns, error))
        return FALSE;
    if (!kconfig_is_null(cfg, "duration"))
        fault->duration_ns = kconfig_get_duration_ns(cfg, "duration");
    if (((info->required | info->optional) & FAULT_KEY_COUNT) != 0)
        fault->count = (guint)kconfig_get_int64(cfg, "count");
    if (!kconfig_is_null(cfg, "delay"))
        fault->delay_ns = kconfig_get_duration_ns(cfg, "delay");
    if (!kconfig_is_null(cfg, "factor"))
        fault->factor = kconfig_get_double(cfg, "factor");
    if (!kconfig_is_null(cfg, "message"))
        fault->message_type = message_type_of(kconfig_get_string(cfg, "message"));
    if (fault->action == SCENARIO_ACTION_ADD_PARTITIONS &&
        !fault_add_partitions(b, group, cfg, fault, error))
        return FALSE;
    if (fault->action == SCENARIO_ACTION_DISK_SLOW && !fault_slow_factor(b, group, fault, error))
        return FALSE;
    if (!fault_window_values(b, group, cfg, fault, error))
        return FALSE;
    return fault_targets(b, group, cfg, info, fault, error);
}

gint
scenario_compare_faults(gconstpointer a, gconstpointer b)
{
    const ScenarioFault *fa = *(ScenarioFault *const *)a;
    const ScenarioFault *fb = *(ScenarioFault *const *)b;
    if (fa->time_ns != fb->time_ns)
        return fa->time_ns < fb->time_ns ? -1 : 1;
    return fa->index < fb->index ? -1 : (fa->index > fb->index ? 1 : 0);
}

void
scenario_random_faults_free(ScenarioRandomFaults *random)
{
    if (random == NULL)
        return;
    g_array_unref(random->kinds);
    g_free(random);
}

static gboolean
random_faults_bounds(const Build *b, const RawGroup *group, const ScenarioRandomFaults *random,
                     GError **error)
{
    const char *dists[] = {"interval", "duration"};
    const SimDist *values[] = {&random->interval, &random->duration};
    for (guint i = 0; i < G_N_ELEMENTS(dists); i++) {
        if (sim_dist_mean(values[i]) > 0.0)
            continue;
        Loc loc = scenario_loc_key(b->scenario, group, dists[i]);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "must have a positive mean");
        return FALSE;
    }
    if (!scenario_check_not_past_end(b, group, "stop", random->stop_ns, error))
        return FALSE;
    if (random->start_ns < random->stop_ns)
        return TRUE;
    g_autofree char *start = scenario_format_duration(random->start_ns);
    g_autofree char *stop = scenario_format_duration(random->stop_ns);
    Loc loc = scenario_loc_key(b->scenario, group, "start");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc, "%s is not before stop (%s)",
                       start, stop);
    return FALSE;
}

gboolean
scenario_build_random_faults(Build *b, const RawGroup *group, GError **error)
{
    ScenarioRandomFaults *random = g_new0(ScenarioRandomFaults, 1);
    random->kinds = g_array_new(FALSE, FALSE, sizeof(ScenarioAction));
    b->variant->random_faults = random;
    g_autoptr(KConfig) cfg = kconfig_new(KCONFIG_SCOPE_RANDOM_FAULTS);
    if (!scenario_fill_configs(b, group, &cfg, 1, error))
        return FALSE;
    g_auto(GStrv) kinds = kconfig_get_list(cfg, "kinds");
    for (guint i = 0; kinds[i] != NULL; i++) {
        ScenarioAction action = action_of(kinds[i]);
        g_array_append_val(random->kinds, action);
    }
    random->interval = kconfig_get_dist(cfg, "interval");
    random->duration = kconfig_get_dist(cfg, "duration");
    random->concurrent_max = (guint)kconfig_get_int64(cfg, "max.concurrent");
    random->start_ns = kconfig_get_duration_ns(cfg, "start");
    random->swarm = kconfig_get_bool(cfg, "swarm");
    random->stop_ns = kconfig_is_null(cfg, "stop") ? b->variant->duration_ns
                                                   : kconfig_get_duration_ns(cfg, "stop");
    return random_faults_bounds(b, group, random, error);
}
