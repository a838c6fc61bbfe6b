/*
 * cluster_placement: where a topic's replicas go, as Kafka 3.6's AdminUtils
 * places them (assignReplicasToBrokers, rack-unaware and rack-aware) and
 * AdminZkClient checks them (see cluster.h). Pure functions of the broker
 * count and racks: the cluster (cluster.c) asks them for each topic it
 * creates or grows.
 */
#include "cluster.h"

#include "sim_assert.h"

#include <stdlib.h>
#include <string.h>

/* AdminUtils.replicaIndex: the broker index of replica `j` + 1 of a
 * partition whose first replica is at `first`. */
static guint
replica_index(guint first, guint shift, guint j, guint n)
{
    guint step = 1 + (shift + j) % (n - 1);
    return (first + step) % n;
}

static gint
compare_racks(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void
cluster_rack_alternated_brokers(guint n_brokers, const char *const *racks, gint32 *out)
{
    KSIM_ASSERT(racks != NULL);
    /* getInverseMap sorts each rack's brokers by id; Java sorts the rack
     * names by String order, which strcmp's byte order matches for ASCII. */
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < n_brokers; i++) {
        KSIM_ASSERT(racks[i] != NULL);
        gboolean seen = FALSE;
        for (guint r = 0; r < names->len && !seen; r++)
            seen = strcmp(names->pdata[r], racks[i]) == 0;
        if (!seen)
            g_ptr_array_add(names, (gpointer)racks[i]);
    }
    g_ptr_array_sort(names, compare_racks);
    /* Each rack's next broker: the ids, ascending, are walked once per rack. */
    g_autofree guint *next = g_new0(guint, names->len);
    guint filled = 0;
    for (guint r = 0; filled < n_brokers; r = (r + 1) % names->len) {
        while (next[r] < n_brokers && strcmp(racks[next[r]], names->pdata[r]) != 0)
            next[r]++;
        if (next[r] < n_brokers)
            out[filled++] = (gint32)next[r]++ + 1;
    }
}

static guint
rack_count(guint n_brokers, const char *const *racks)
{
    guint count = 0;
    for (guint i = 0; i < n_brokers; i++) {
        gboolean earlier = FALSE;
        for (guint j = 0; j < i && !earlier; j++)
            earlier = strcmp(racks[i], racks[j]) == 0;
        count += earlier ? 0 : 1;
    }
    return count;
}

static gboolean
replicas_hold_rack(const GArray *replicas, const char *const *racks, const char *rack)
{
    for (guint i = 0; i < replicas->len; i++) {
        if (strcmp(racks[g_array_index(replicas, gint32, i) - 1], rack) == 0)
            return TRUE;
    }
    return FALSE;
}

static gboolean
replicas_hold(const GArray *replicas, gint32 id)
{
    for (guint i = 0; i < replicas->len; i++) {
        if (g_array_index(replicas, gint32, i) == id)
            return TRUE;
    }
    return FALSE;
}

static guint
replicas_rack_count(const GArray *replicas, const char *const *racks)
{
    guint count = 0;
    for (guint i = 0; i < replicas->len; i++) {
        const char *rack = racks[g_array_index(replicas, gint32, i) - 1];
        gboolean earlier = FALSE;
        for (guint j = 0; j < i && !earlier; j++)
            earlier = strcmp(racks[g_array_index(replicas, gint32, j) - 1], rack) == 0;
        count += earlier ? 0 : 1;
    }
    return count;
}

/* assignReplicasToBrokersRackAware, one partition: the first replica round
 * robin over the rack-alternated list, then each next one the first broker
 * from a growing shift that is in a rack with no replica yet (until every
 * rack has one) and holds none yet (until every broker has one). */
static GArray *
place_rack_aware(const gint32 *arranged, guint n, const char *const *racks, guint n_racks,
                 guint first, guint shift, guint rf)
{
    GArray *replicas = g_array_new(FALSE, FALSE, sizeof(gint32));
    g_array_append_val(replicas, arranged[first]);
    guint k = 0;
    for (guint j = 0; j + 1 < rf; j++) {
        for (gboolean done = FALSE; !done; k++) {
            /* Bounded: every n steps of k visit every broker once. */
            KSIM_ASSERT(k < n * rf + n);
            gint32 broker = arranged[replica_index(first, shift * n_racks, k, n)];
            const char *rack = racks[broker - 1];
            gboolean rack_ok = !replicas_hold_rack(replicas, racks, rack) ||
                               replicas_rack_count(replicas, racks) == n_racks;
            gboolean broker_ok = !replicas_hold(replicas, broker) || replicas->len == n;
            if (rack_ok && broker_ok) {
                g_array_append_val(replicas, broker);
                done = TRUE;
            }
        }
    }
    return replicas;
}

void
cluster_place_replicas(guint n, const char *const *racks, guint from, guint to, guint rf,
                       guint start, guint shift, GPtrArray *assignment)
{
    KSIM_ASSERT(n >= 1 && rf >= 1 && rf <= n && start < n && shift < n);
    g_autofree gint32 *arranged = g_new(gint32, n);
    guint n_racks = 0;
    if (racks != NULL) {
        cluster_rack_alternated_brokers(n, racks, arranged);
        n_racks = rack_count(n, racks);
    } else {
        for (guint i = 0; i < n; i++)
            arranged[i] = (gint32)i + 1;
    }
    for (guint p = 0; p < to; p++) {
        if (p > 0 && p % n == 0)
            shift++;
        if (p < from)
            continue;
        guint first = (p + start) % n;
        if (racks != NULL) {
            g_ptr_array_add(assignment,
                            place_rack_aware(arranged, n, racks, n_racks, first, shift, rf));
            continue;
        }
        GArray *replicas = g_array_new(FALSE, FALSE, sizeof(gint32));
        g_array_append_val(replicas, arranged[first]);
        for (guint j = 0; j + 1 < rf; j++)
            g_array_append_val(replicas, arranged[replica_index(first, shift, j, n)]);
        g_ptr_array_add(assignment, replicas);
    }
}

gboolean
cluster_check_racks(const char *topic, const char *const *racks, guint n_brokers,
                    ClusterRackAwareMode mode, GError **error)
{
    guint with_rack = 0;
    for (guint i = 0; racks != NULL && i < n_brokers; i++)
        with_rack += racks[i] != NULL ? 1 : 0;
    if (mode != CLUSTER_RACK_AWARE_ENFORCED || with_rack == 0 || with_rack == n_brokers)
        return TRUE;
    g_set_error(error, CLUSTER_ERROR, 8,
                "topic '%s': not all brokers have rack information (%u of %u have broker.rack); "
                "Kafka's admin refuses to place it unless rack awareness is disabled "
                "(kafka-topics --disable-rack-aware)",
                topic, with_rack, n_brokers);
    return FALSE;
}
