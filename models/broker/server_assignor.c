/*
 * server_assignor: the server-side assignors (see server_assignor.h).
 *
 * Pure functions: no state, no randomness; every loop is bounded by the
 * members, topics and partitions given.
 */
#include "server_assignor.h"

#include "sim_assert.h"

#include <stdlib.h>
#include <string.h>

/* Bounds asserted on an assignment's inputs. */
#define SERVER_ASSIGNOR_MEMBERS_MAX 4096
#define SERVER_ASSIGNOR_PARTITIONS_MAX (1 << 20)

static const char *const NAMES[SERVER_ASSIGNOR_COUNT] = {"uniform", "range"};

const char *
server_assignor_name(ServerAssignorKind kind)
{
    return (guint)kind < SERVER_ASSIGNOR_COUNT ? NAMES[kind] : NULL;
}

gboolean
server_assignor_parse(const char *name, ServerAssignorKind *out)
{
    for (guint i = 0; i < SERVER_ASSIGNOR_COUNT; i++) {
        if (strcmp(name, NAMES[i]) == 0) {
            *out = (ServerAssignorKind)i;
            return TRUE;
        }
    }
    return FALSE;
}

static gint
tp_compare(gconstpointer a, gconstpointer b)
{
    return ktp_compare(a, b);
}

/* The partition count of `topic` in the metadata, 0 when absent. */
static gint32
partitions_of(const GArray *topics, const char *topic)
{
    for (guint i = 0; i < topics->len; i++) {
        const ServerAssignorTopic *t = &g_array_index(topics, ServerAssignorTopic, i);
        if (strcmp(t->topic, topic) == 0)
            return t->partitions;
    }
    return 0;
}

static gboolean
subscribes(const ServerAssignorMember *member, const char *topic)
{
    for (guint i = 0; i < member->topics->len; i++) {
        if (strcmp(g_array_index(member->topics, KTopicName, i).name, topic) == 0)
            return TRUE;
    }
    return FALSE;
}

/* TRUE when `tp` is in the current assignment of one of the members. */
static gboolean
currently_assigned(const ServerAssignorMember *members, const guint *which, guint n,
                   const KTopicPartition *tp)
{
    for (guint m = 0; m < n; m++) {
        const GArray *current = members[which[m]].current;
        if (current->len > 0 &&
            bsearch(tp, current->data, current->len, sizeof(KTopicPartition), tp_compare) != NULL)
            return TRUE;
    }
    return FALSE;
}

/* Kafka's UniformHomogeneousAssignmentBuilder over the members `which`
 * (indices into `members`, in member order), all subscribed to `subscribed`
 * (KTopicName, sorted): appends to out[which[i]]. */
static void
uniform_homogeneous(const ServerAssignorMember *members, const guint *which, guint n,
                    const GArray *subscribed, const GArray *topics, GPtrArray *out)
{
    g_autoptr(GArray) unassigned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    gint64 total = 0;
    for (guint t = 0; t < subscribed->len; t++) {
        const char *topic = g_array_index(subscribed, KTopicName, t).name;
        gint32 count = partitions_of(topics, topic);
        for (gint32 p = 0; p < count; p++) {
            KTopicPartition tp;
            ktp_set(&tp, topic, p);
            if (!currently_assigned(members, which, n, &tp))
                g_array_append_val(unassigned, tp);
        }
        total += count;
    }
    KSIM_ASSERT(total <= SERVER_ASSIGNOR_PARTITIONS_MAX);
    if (n == 0 || total == 0)
        return;
    gint64 minimum_quota = total / n;
    gint64 extra = total % n;
    g_autofree gint64 *remaining = g_new0(gint64, n);
    /* maybeRevokePartitions: each member keeps up to its quota. */
    for (guint m = 0; m < n; m++) {
        const GArray *current = members[which[m]].current;
        GArray *assignment = g_ptr_array_index(out, which[m]);
        gint64 quota = minimum_quota;
        if (extra > 0) {
            quota++;
            extra--;
        }
        for (guint t = 0; t < subscribed->len; t++) {
            const char *topic = g_array_index(subscribed, KTopicName, t).name;
            gint32 count = partitions_of(topics, topic);
            g_autoptr(GArray) owned = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
            for (guint i = 0; i < current->len; i++) {
                const KTopicPartition *tp = &g_array_index(current, KTopicPartition, i);
                if (strcmp(tp->topic, topic) == 0 && tp->partition < count)
                    g_array_append_val(owned, *tp);
            }
            if ((gint64)owned->len <= quota) {
                quota -= owned->len;
                g_array_append_vals(assignment, owned->data, owned->len);
                continue;
            }
            for (guint i = 0; i < owned->len; i++) {
                const KTopicPartition *tp = &g_array_index(owned, KTopicPartition, i);
                if (quota > 0) {
                    quota--;
                    g_array_append_val(assignment, *tp);
                } else {
                    g_array_append_val(unassigned, *tp);
                }
            }
        }
        remaining[m] = quota;
    }
    /* assignRemainingPartitions: the members below quota, in order. */
    guint next = 0;
    for (guint m = 0; m < n; m++) {
        GArray *assignment = g_ptr_array_index(out, which[m]);
        for (gint64 i = 0; i < remaining[m] && next < unassigned->len; i++)
            g_array_append_val(assignment, g_array_index(unassigned, KTopicPartition, next++));
    }
    /* Kafka throws "Partitions were left unassigned"; the quotas cover the
     * total, so it cannot happen. */
    KSIM_ASSERT(next == unassigned->len);
}

static gboolean
homogeneous(const ServerAssignorMember *members, guint n)
{
    for (guint m = 1; m < n; m++) {
        const GArray *a = members[0].topics, *b = members[m].topics;
        if (a->len != b->len)
            return FALSE;
        for (guint t = 0; t < a->len; t++) {
            if (strcmp(g_array_index(a, KTopicName, t).name, g_array_index(b, KTopicName, t).name))
                return FALSE;
        }
    }
    return TRUE;
}

static void
uniform(const ServerAssignorMember *members, guint n, const GArray *topics, GPtrArray *out)
{
    g_autofree guint *which = g_new(guint, MAX(n, 1));
    if (homogeneous(members, n)) {
        for (guint m = 0; m < n; m++)
            which[m] = m;
        uniform_homogeneous(members, which, n, members[0].topics, topics, out);
        return;
    }
    /* ksim's simplification: topic by topic (see the header). */
    for (guint t = 0; t < topics->len; t++) {
        const char *topic = g_array_index(topics, ServerAssignorTopic, t).topic;
        guint k = 0;
        for (guint m = 0; m < n; m++) {
            if (subscribes(&members[m], topic))
                which[k++] = m;
        }
        g_autoptr(GArray) one = g_array_new(FALSE, FALSE, sizeof(KTopicName));
        KTopicName name;
        KPROTO_SET_ID(name.name, topic);
        g_array_append_val(one, name);
        uniform_homogeneous(members, which, k, one, topics, out);
    }
}

/* Kafka's RangeAssignor: per topic, contiguous ranges in member order. */
static void
range(const ServerAssignorMember *members, guint n, const GArray *topics, GPtrArray *out)
{
    for (guint t = 0; t < topics->len; t++) {
        const ServerAssignorTopic *topic = &g_array_index(topics, ServerAssignorTopic, t);
        guint subscribed = 0;
        for (guint m = 0; m < n; m++)
            subscribed += subscribes(&members[m], topic->topic) ? 1 : 0;
        if (subscribed == 0 || topic->partitions <= 0)
            continue;
        gint32 minimum_quota = topic->partitions / (gint32)subscribed;
        gint32 extra = topic->partitions % (gint32)subscribed;
        gint32 next = 0;
        for (guint m = 0; m < n; m++) {
            if (!subscribes(&members[m], topic->topic))
                continue;
            gint32 quota = minimum_quota;
            if (extra > 0) {
                quota++;
                extra--;
            }
            gint32 end = MIN(next + quota, topic->partitions);
            for (gint32 p = next; p < end; p++) {
                KTopicPartition tp;
                ktp_set(&tp, topic->topic, p);
                g_array_append_val((GArray *)g_ptr_array_index(out, m), tp);
            }
            next = end;
        }
    }
}

static void
array_free(gpointer data)
{
    g_array_free(data, TRUE);
}

GPtrArray *
server_assignor_assign(ServerAssignorKind kind, const ServerAssignorMember *members,
                       guint n_members, const GArray *topics)
{
    KSIM_ASSERT(n_members <= SERVER_ASSIGNOR_MEMBERS_MAX);
    GPtrArray *out = g_ptr_array_new_with_free_func(array_free);
    for (guint m = 0; m < n_members; m++) {
        if (m > 0)
            KSIM_ASSERT(strcmp(members[m - 1].member_id, members[m].member_id) < 0);
        g_ptr_array_add(out, g_array_new(FALSE, FALSE, sizeof(KTopicPartition)));
    }
    if (kind == SERVER_ASSIGNOR_RANGE)
        range(members, n_members, topics, out);
    else
        uniform(members, n_members, topics, out);
    for (guint m = 0; m < n_members; m++)
        g_array_sort(g_ptr_array_index(out, m), tp_compare);
    return out;
}
