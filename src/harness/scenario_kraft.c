/*
 * scenario_kraft: KRaft's process roles and quorum voters from [cluster]
 * (see scenario.h, ScenarioCluster): `process.roles`, `controllers` and
 * `controller.quorum.voters`, checked as Kafka 4.0's KafkaConfig checks
 * them (parseProcessRoles, QuorumConfig.parseVoterConnections, the
 * "node id must be included in the set of voters" rule) and against the
 * scenario's nodes.
 *
 * A scenario describes a whole cluster in one [cluster] group, so the roles
 * are the cluster's: `process.roles = broker` (what the brokers run when it
 * is absent) keeps every broker a broker only and the quorum on dedicated
 * controller nodes; `process.roles = broker,controller` is combined mode:
 * the voters run inside brokers, and the brokers that are not voters stay
 * broker-only (Kafka's combined nodes beside broker-only ones). ksim
 * numbers the nodes itself: broker N has node.id N, dedicated controllers
 * 3000 up (the default ones 3000, 3001, ...; controller.quorum.voters may
 * name any from 3000, since the history names its clients 100 up);
 * controller.quorum.voters names voters by these node.ids.
 */
#include "scenario_internal.h"

#include "cluster.h"
#include "sim_assert.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

G_STATIC_ASSERT(SCENARIO_VOTERS_MAX == RAFT_VOTERS_MAX);

static gboolean
refuse(const Build *b, const RawGroup *group, const char *key, GError **error,
       const char *format, ...) G_GNUC_PRINTF(5, 6);

static gboolean
refuse(const Build *b, const RawGroup *group, const char *key, GError **error,
       const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    Loc loc = scenario_loc_key(b->scenario, group, key);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc, "%s", message);
    return FALSE;
}

/* A decimal in [min, max] written whole; FALSE otherwise. */
static gboolean
parse_decimal(const char *text, guint64 min, guint64 max, guint64 *out)
{
    return *text != '\0' && g_ascii_string_to_unsigned(text, 10, min, max, out, NULL);
}

gboolean
scenario_parse_quorum_voters(const char *const *entries, gint32 *ids, guint *n_ids, char **why)
{
    *n_ids = 0;
    for (guint i = 0; entries[i] != NULL; i++) {
        const char *entry = entries[i];
        g_auto(GStrv) id_and_address = g_strsplit(entry, "@", -1);
        if (g_strv_length(id_and_address) != 2) {
            *why = g_strdup_printf("'%s': each entry should be in the form `{id}@{host}:{port}`",
                                   entry);
            return FALSE;
        }
        guint64 id = 0;
        if (!parse_decimal(g_strstrip(id_and_address[0]), 0, G_MAXINT32, &id)) {
            *why = g_strdup_printf("failed to parse voter ID as an integer from '%s'",
                                   id_and_address[0]);
            return FALSE;
        }
        const char *address = id_and_address[1];
        const char *colon = strrchr(address, ':');
        guint64 port = 0;
        if (colon == NULL || colon == address) {
            *why = g_strdup_printf("failed to parse host name from entry '%s': each entry should "
                                   "be in the form `{id}@{host}:{port}`",
                                   entry);
            return FALSE;
        }
        if (!parse_decimal(colon + 1, 0, 65535, &port)) {
            *why = g_strdup_printf("failed to parse host port from entry '%s': each entry should "
                                   "be in the form `{id}@{host}:{port}`",
                                   entry);
            return FALSE;
        }
        for (guint j = 0; j < *n_ids; j++) {
            if (ids[j] == (gint32)id) {
                *why = g_strdup_printf("names voter %" G_GUINT64_FORMAT " twice", id);
                return FALSE;
            }
        }
        if (*n_ids == SCENARIO_VOTERS_MAX) {
            *why = g_strdup_printf("names more than %u voters", SCENARIO_VOTERS_MAX);
            return FALSE;
        }
        ids[(*n_ids)++] = (gint32)id;
    }
    if (*n_ids == 0) {
        *why = g_strdup("names no voter");
        return FALSE;
    }
    return TRUE;
}

static gint
compare_ids(gconstpointer a, gconstpointer b)
{
    gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
    return (x > y) - (x < y);
}

/* process.roles: TRUE with *combined, or an error at the key. */
static gboolean
parse_roles(const Build *b, const RawGroup *group, gboolean *combined, GError **error)
{
    const KConfig *hardware = b->variant->cluster.hardware;
    *combined = FALSE;
    if (kconfig_is_null(hardware, "process.roles"))
        return TRUE;
    g_auto(GStrv) roles = kconfig_get_list(hardware, "process.roles");
    gboolean broker = FALSE, controller = FALSE;
    for (guint i = 0; roles[i] != NULL; i++) {
        gboolean *seen = strcmp(roles[i], "broker") == 0 ? &broker : &controller;
        if (*seen)
            return refuse(b, group, "process.roles", error,
                          "duplicate role names found in `process.roles`: '%s'",
                          kconfig_get_value(hardware, "process.roles"));
        *seen = TRUE;
    }
    if (!broker)
        return refuse(b, group, "process.roles", error,
                      "process.roles = controller would leave the cluster without brokers: "
                      "ksim's brokers are [cluster]'s `brokers`, and its dedicated controllers "
                      "(process.roles = controller in Kafka) are `controllers`; write "
                      "process.roles = broker (dedicated controllers) or broker,controller "
                      "(combined mode)");
    *combined = controller;
    return TRUE;
}

/* ZooKeeper mode: the KRaft keys have nothing to configure. */
static gboolean
check_zookeeper(const Build *b, const RawGroup *group, GError **error)
{
    const KConfig *hardware = b->variant->cluster.hardware;
    static const char *const keys[] = {"process.roles", "controller.quorum.voters"};
    for (guint i = 0; i < G_N_ELEMENTS(keys); i++) {
        if (!kconfig_is_null(hardware, keys[i]))
            return refuse(b, group, keys[i], error,
                          "%s is KRaft's (Kafka runs ZooKeeper mode when process.roles is "
                          "empty), and this cluster runs metadata.mode = zookeeper: set "
                          "metadata.mode = kraft, or remove %s",
                          keys[i], keys[i]);
    }
    return TRUE;
}

/* Every voter a broker (combined) or none a broker (dedicated). */
static gboolean
check_voter_ids(const Build *b, const RawGroup *group, GError **error)
{
    const ScenarioCluster *c = &b->variant->cluster;
    for (guint i = 0; i < c->n_voters; i++) {
        gint32 id = c->voter_ids[i];
        gboolean is_broker = id >= 1 && (guint)id <= c->brokers;
        if (c->combined && !is_broker)
            return refuse(b, group, "controller.quorum.voters", error,
                          "voter %d names no broker: in combined mode (process.roles = "
                          "broker,controller) the voters run in brokers, whose node.ids are "
                          "1..%u",
                          id, c->brokers);
        if (!c->combined && is_broker)
            return refuse(b, group, "controller.quorum.voters", error,
                          "voter %d is broker-%d's node.id: dedicated controllers "
                          "(process.roles = broker) need node.ids apart from the brokers' "
                          "1..%u (e.g. 3000 up), or set process.roles = broker,controller to run "
                          "the voters in brokers",
                          id, id, c->brokers);
        /* The history names processes by id: clients are 100 up. */
        if (!c->combined && id < KRAFT_CONTROLLER_ID_BASE)
            return refuse(b, group, "controller.quorum.voters", error,
                          "voter %d: ksim gives dedicated controllers node.ids from %d up "
                          "(brokers are 1..%u, clients 100 up), or set process.roles = "
                          "broker,controller to run the voters in brokers",
                          id, KRAFT_CONTROLLER_ID_BASE, c->brokers);
    }
    return TRUE;
}

gboolean
scenario_build_kraft_roles(Build *b, const RawGroup *group, GError **error)
{
    ScenarioCluster *c = &b->variant->cluster;
    const KConfig *hardware = c->hardware;
    c->combined = FALSE;
    c->n_voters = 0;
    if (strcmp(kconfig_get_value(hardware, "metadata.mode"), "kraft") != 0)
        return check_zookeeper(b, group, error);
    if (!parse_roles(b, group, &c->combined, error))
        return FALSE;
    guint controllers = (guint)kconfig_get_int64(hardware, "controllers");
    gboolean controllers_set = kconfig_is_set(hardware, "controllers");
    if (!kconfig_is_null(hardware, "controller.quorum.voters")) {
        g_auto(GStrv) entries = kconfig_get_list(hardware, "controller.quorum.voters");
        g_autofree char *why = NULL;
        if (!scenario_parse_quorum_voters((const char *const *)entries, c->voter_ids,
                                          &c->n_voters, &why))
            return refuse(b, group, "controller.quorum.voters", error, "%s", why);
        if (controllers_set && controllers != c->n_voters)
            return refuse(b, group, "controllers", error,
                          "controllers = %u, but controller.quorum.voters names %u voter%s: "
                          "give one of them, or make them agree",
                          controllers, c->n_voters, c->n_voters == 1 ? "" : "s");
    } else if (c->combined) {
        /* The first `controllers` brokers; a cluster smaller than the
         * default quorum has every broker vote. */
        if (controllers_set && controllers > c->brokers)
            return refuse(b, group, "controllers", error,
                          "combined mode (process.roles = broker,controller) runs the voters "
                          "in the first `controllers` brokers: controllers = %u needs at least "
                          "%u brokers (brokers = %u)",
                          controllers, controllers, c->brokers);
        c->n_voters = MIN(controllers, c->brokers);
        for (guint i = 0; i < c->n_voters; i++)
            c->voter_ids[i] = (gint32)i + 1;
    } else {
        c->n_voters = controllers;
        for (guint i = 0; i < c->n_voters; i++)
            c->voter_ids[i] = KRAFT_CONTROLLER_ID_BASE + (gint32)i;
    }
    qsort(c->voter_ids, c->n_voters, sizeof c->voter_ids[0], compare_ids);
    KSIM_ASSERT(c->n_voters >= 1 && c->n_voters <= SCENARIO_VOTERS_MAX);
    return check_voter_ids(b, group, error);
}

gboolean
scenario_cluster_is_voter(const ScenarioCluster *cluster, gint32 node_id)
{
    for (guint i = 0; i < cluster->n_voters; i++)
        if (cluster->voter_ids[i] == node_id)
            return TRUE;
    return FALSE;
}

char *
scenario_cluster_voters_text(const ScenarioCluster *cluster)
{
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < cluster->n_voters; i++)
        g_string_append_printf(text, "%scontroller:%d", i > 0 ? ", " : "", cluster->voter_ids[i]);
    return g_string_free(text, FALSE);
}
