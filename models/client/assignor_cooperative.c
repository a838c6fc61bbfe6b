/*
 * assignor_cooperative: cooperative-sticky's withholding of the partitions
 * that change owner, and the COOPERATIVE protocol's check of an assignment
 * (see assignor_cooperative.h and assignor.h).
 *
 * Followed: Kafka's CooperativeStickyAssignor (clients 3.8 to 4.0: the sticky
 * assignment of AbstractStickyAssignor, then adjustAssignment) and
 * ConsumerCoordinator.validateCooperativeAssignment. Which partitions change
 * owner comes from sticky's constrained algorithm when it ran
 * (partitionsTransferringOwnership: partitions dealt to a member other than
 * the one that owned them beyond its quota, and partitions two members of one
 * generation claimed; assignor.c marks them), else from
 * computePartitionsTransferringOwnership here: assigned to a member that did
 * not claim it, and claimed by a member that does not keep it.
 *
 * Kafka keeps these sets in HashMaps; here they are per-pid flags, walked in
 * pid order, so nothing depends on hash layout.
 */
#include "assignor_cooperative.h"

#include "assignor_internal.h"
#include "sim_assert.h"

#include <string.h>

/* Per-pid flags of one member while it is looked at. */
enum { PID_CLAIMED = 1, PID_ASSIGNED = 2 };

void
cooperative_transferring_compute(GArray *const *assignment, GArray *const *claimed, guint n_members,
                                 guint32 n_partitions, gboolean *transferring)
{
    g_autofree gboolean *added = g_new0(gboolean, MAX(n_partitions, 1));
    g_autofree gboolean *revoked = g_new0(gboolean, MAX(n_partitions, 1));
    g_autofree guint8 *flags = g_new0(guint8, MAX(n_partitions, 1));
    for (guint m = 0; m < n_members; m++) {
        for (guint i = 0; i < claimed[m]->len; i++)
            flags[g_array_index(claimed[m], guint32, i)] |= PID_CLAIMED;
        for (guint i = 0; i < assignment[m]->len; i++)
            flags[g_array_index(assignment[m], guint32, i)] |= PID_ASSIGNED;
        for (guint i = 0; i < assignment[m]->len; i++) {
            guint32 pid = g_array_index(assignment[m], guint32, i);
            KSIM_ASSERT(pid < n_partitions);
            if (!(flags[pid] & PID_CLAIMED))
                added[pid] = TRUE;
        }
        for (guint i = 0; i < claimed[m]->len; i++) {
            guint32 pid = g_array_index(claimed[m], guint32, i);
            KSIM_ASSERT(pid < n_partitions);
            if (!(flags[pid] & PID_ASSIGNED))
                revoked[pid] = TRUE;
        }
        /* Clear only what this member set: the lists bound the work. */
        for (guint i = 0; i < claimed[m]->len; i++)
            flags[g_array_index(claimed[m], guint32, i)] = 0;
        for (guint i = 0; i < assignment[m]->len; i++)
            flags[g_array_index(assignment[m], guint32, i)] = 0;
    }
    for (guint32 pid = 0; pid < n_partitions; pid++) {
        if (added[pid] && revoked[pid])
            transferring[pid] = TRUE;
    }
}

void
cooperative_withhold(GArray **assignment, guint n_members, guint32 n_partitions,
                     const gboolean *transferring)
{
    for (guint m = 0; m < n_members; m++) {
        GArray *list = assignment[m];
        guint kept = 0;
        for (guint i = 0; i < list->len; i++) {
            guint32 pid = g_array_index(list, guint32, i);
            KSIM_ASSERT(pid < n_partitions);
            if (!transferring[pid])
                g_array_index(list, guint32, kept++) = pid;
        }
        g_array_set_size(list, kept);
    }
}

/* The member of `result` that got `topic`-`partition`, or -1. */
static gint
result_owner(const AssignorResult *result, const char *topic, guint32 partition)
{
    for (guint m = 0; m < assignor_result_member_count(result); m++) {
        for (guint i = 0; i < assignor_result_partition_count(result, m); i++) {
            if (assignor_result_partition_number(result, m, i) == partition &&
                strcmp(assignor_result_partition_topic(result, m, i), topic) == 0)
                return (gint)m;
        }
    }
    return -1;
}

static gboolean
member_claims(const AssignorInput *input, const char *member_id, const char *topic,
              guint32 partition)
{
    for (guint i = 0; i < assignor_input_owned_count(input, member_id); i++) {
        guint32 number;
        const char *name = assignor_input_owned_get(input, member_id, i, &number);
        if (number == partition && strcmp(name, topic) == 0)
            return TRUE;
    }
    return FALSE;
}

void
assignor_result_check_cooperative(const AssignorResult *result, const AssignorInput *input)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(assignor_result_member_count(result) == assignor_input_member_count(input));
    /* Every revoked partition (claimed by a member that does not get it) goes
     * to nobody, or to another member that claimed it too. */
    for (guint m = 0; m < assignor_result_member_count(result); m++) {
        const char *member_id = assignor_result_member_id(result, m);
        for (guint i = 0; i < assignor_input_owned_count(input, member_id); i++) {
            guint32 partition;
            const char *topic = assignor_input_owned_get(input, member_id, i, &partition);
            gint owner = result_owner(result, topic, partition);
            if (owner < 0 || owner == (gint)m)
                continue;
            KSIM_ASSERT(member_claims(input, assignor_result_member_id(result, (guint)owner), topic,
                                      partition));
        }
    }
}
