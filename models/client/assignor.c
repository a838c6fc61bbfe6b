/*
 * assignor: Kafka's range, roundrobin and sticky group assignments (see
 * assignor.h).
 *
 * Every strategy works on a Problem built once from the input: members sorted
 * by id (a member is its index in that order), the "active" topics (declared
 * and subscribed by at least one member, as Kafka's partitionsPerTopic) sorted
 * by name, and every partition of an active topic numbered by a partition id
 * (pid) in (topic name, partition) order. So "sorted by member id" is integer
 * order on member indices and "sorted by topic, then partition" is integer
 * order on pids, and no hash table is ever iterated.
 *
 * The sticky assignor is a transcription of Kafka's AbstractStickyAssignor
 * (3.8 and later, rack awareness left out). Its state during one assignment:
 *
 *   owned_init           previous owners, conflicts settled by generation
 *     |  all subscriptions equal?
 *     +-- yes --> constrained_assign: keep owned up to the quotas, then
 *     |           deal the rest round-robin to the members under quota
 *     +-- no  --> general_assign: keep owned (still subscribed) partitions,
 *                 give each unassigned one to the least loaded subscriber,
 *                 then move partitions until balanced (general_perform),
 *                 undoing the moves if they did not improve the balance score
 *
 * Invariants of the general algorithm's state (General), asserted as it runs:
 *  1. owner[p] == m  <=>  p is in current[m]; a pid is in at most one list.
 *  2. A member is in `sorted` iff it is participating, at the position given
 *     by (size of its list, index); it is taken out before its list changes
 *     and put back after.
 *  3. move_src[p] >= 0 iff move_dst[p] >= 0; then move_dst[p] == owner[p] and
 *     move_src[p] != move_dst[p] (a partition moved back home is forgotten).
 *     A revert (general_balance) restores owners but not moves; nothing reads
 *     the moves after it.
 *  4. A partition being rebalanced has an owner, and every member subscribed
 *     to its topic is participating.
 *
 * Deviations from Kafka, each where Kafka's outcome is unspecified or broken:
 *  - HashMap iteration order replaced by sorted order (see assignor.h).
 *  - Of several partitions that earlier moved from B to A, the one moved back
 *    first is the lowest (Kafka takes the first of a HashSet).
 *  - Owned partitions whose number is beyond the topic's partition count are
 *    dropped (Kafka filters owned partitions by topic only and would keep them).
 *  - A partition is moved back to its previous-generation owner only if that
 *    member still subscribes to its topic and can take part in rebalancing
 *    (Kafka would throw a NullPointerException, or assign the partition to a
 *    member not subscribed to it).
 *  - Subscriptions are compared as sets of names. Kafka's check treats a first
 *    member with an empty subscription as matching everyone.
 *  - The rebalancing sweeps stop after n_partitions + 64 rounds (see
 *    general_perform); Kafka's loop is unbounded and can spin forever.
 *
 * Outside these cases the result was checked equal, on 14,000 random groups
 * over three rebalancing rounds with generations, subscription changes and
 * conflicting claims, to a Java transcription of Kafka's AbstractStickyAssignor
 * (3.8) run with sorted member iteration.
 */
#include "assignor.h"

#include "assignor_cooperative.h"
#include "assignor_internal.h"
#include "sim_assert.h"

#include <string.h>

/* ---- The problem: members, active topics and partition ids ---- */

typedef struct {
    const char *name; /* borrowed from the input */
    guint32 partitions;
    guint32 base;      /* pid of partition 0 */
    GArray *consumers; /* guint32 member indices subscribed to it, ascending */
} Topic;

typedef struct {
    const InputMember *spec; /* borrowed from the input */
    GArray *topics;          /* guint32 active topic indices subscribed, ascending */
    GPtrArray *names_sorted; /* const char *: the raw subscription, sorted */
    guint32 size_max;        /* partitions over its subscribed active topics */
} Member;

typedef struct {
    guint n_members;
    Member *members; /* sorted by id */
    guint n_topics;
    Topic *topics;           /* active topics, sorted by name */
    GHashTable *topic_index; /* name -> active index + 1 (lookups only) */
    guint32 n_partitions;
    guint32 *topic_of; /* pid -> active topic index */
} Problem;

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static gint
compare_members(gconstpointer a, gconstpointer b)
{
    const InputMember *x = *(const InputMember *const *)a;
    const InputMember *y = *(const InputMember *const *)b;
    return strcmp(x->id, y->id);
}

static gint
compare_u32(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

static gint32
problem_topic(const Problem *pb, const char *name)
{
    gpointer value = g_hash_table_lookup(pb->topic_index, name);
    return value == NULL ? -1 : (gint32)(GPOINTER_TO_UINT(value) - 1);
}

/* The pid of `topic`-`partition`, or -1 if that partition is not active. */
static gint64
problem_pid(const Problem *pb, const char *topic, guint32 partition)
{
    gint32 t = problem_topic(pb, topic);
    if (t < 0 || partition >= pb->topics[t].partitions)
        return -1;
    return (gint64)pb->topics[t].base + partition;
}

static gboolean
problem_subscribed(const Problem *pb, guint32 member, guint32 topic)
{
    KSIM_ASSERT(member < pb->n_members);
    const GArray *topics = pb->members[member].topics;
    guint lo = 0, hi = topics->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        guint32 value = g_array_index(topics, guint32, mid);
        if (value == topic)
            return TRUE;
        if (value < topic)
            lo = mid + 1;
        else
            hi = mid;
    }
    return FALSE;
}

/* The active topics: declared, and subscribed by at least one member. */
static GPtrArray *
active_topic_names(const AssignorInput *input)
{
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    GPtrArray *names = g_ptr_array_new();
    for (guint m = 0; m < input->members->len; m++) {
        const InputMember *member = g_ptr_array_index(input->members, m);
        for (guint i = 0; i < member->topics->len; i++) {
            const char *name = g_ptr_array_index(member->topics, i);
            const InputTopic *topic = g_hash_table_lookup(input->topic_by_name, name);
            if (topic != NULL && g_hash_table_add(seen, topic->name))
                g_ptr_array_add(names, topic->name);
        }
    }
    g_ptr_array_sort(names, compare_strings);
    return names;
}

static void
problem_init_topics(Problem *pb, const AssignorInput *input)
{
    g_autoptr(GPtrArray) names = active_topic_names(input);
    pb->n_topics = names->len;
    pb->topics = g_new0(Topic, MAX(names->len, 1));
    pb->topic_index = g_hash_table_new(g_str_hash, g_str_equal);
    guint64 base = 0;
    for (guint t = 0; t < names->len; t++) {
        const InputTopic *spec =
            g_hash_table_lookup(input->topic_by_name, g_ptr_array_index(names, t));
        Topic *topic = &pb->topics[t];
        topic->name = spec->name;
        topic->partitions = spec->partitions;
        topic->base = (guint32)base;
        topic->consumers = g_array_new(FALSE, FALSE, sizeof(guint32));
        g_hash_table_insert(pb->topic_index, spec->name, GUINT_TO_POINTER(t + 1));
        base += spec->partitions;
        KSIM_ASSERT(base <= ASSIGNOR_PARTITIONS_MAX);
    }
    pb->n_partitions = (guint32)base;
    pb->topic_of = g_new0(guint32, MAX(base, 1));
    for (guint t = 0; t < names->len; t++) {
        for (guint32 p = 0; p < pb->topics[t].partitions; p++)
            pb->topic_of[pb->topics[t].base + p] = t;
    }
}

static void
problem_init_member(Problem *pb, guint32 m, const InputMember *spec)
{
    Member *member = &pb->members[m];
    member->spec = spec;
    member->topics = g_array_new(FALSE, FALSE, sizeof(guint32));
    member->names_sorted = g_ptr_array_new();
    for (guint i = 0; i < spec->topics->len; i++) {
        const char *name = g_ptr_array_index(spec->topics, i);
        g_ptr_array_add(member->names_sorted, (gpointer)name);
        gint32 t = problem_topic(pb, name);
        if (t < 0)
            continue;
        g_array_append_val(member->topics, t);
        member->size_max += pb->topics[t].partitions;
    }
    g_ptr_array_sort(member->names_sorted, compare_strings);
    g_array_sort(member->topics, compare_u32);
    for (guint i = 0; i < member->topics->len; i++)
        g_array_append_val(pb->topics[g_array_index(member->topics, guint32, i)].consumers, m);
}

static void
problem_init(Problem *pb, const AssignorInput *input)
{
    memset(pb, 0, sizeof(*pb));
    problem_init_topics(pb, input);
    /* A plain copy of the pointers: the input keeps owning the members. */
    g_autoptr(GPtrArray) sorted = g_ptr_array_sized_new(input->members->len);
    for (guint m = 0; m < input->members->len; m++)
        g_ptr_array_add(sorted, g_ptr_array_index(input->members, m));
    g_ptr_array_sort(sorted, compare_members);
    pb->n_members = sorted->len;
    pb->members = g_new0(Member, MAX(sorted->len, 1));
    for (guint m = 0; m < sorted->len; m++)
        problem_init_member(pb, m, g_ptr_array_index(sorted, m));
    for (guint t = 0; t < pb->n_topics; t++)
        KSIM_ASSERT(pb->topics[t].consumers->len >= 1);
}

static void
problem_clear(Problem *pb)
{
    for (guint t = 0; t < pb->n_topics; t++)
        g_array_unref(pb->topics[t].consumers);
    for (guint m = 0; m < pb->n_members; m++) {
        g_array_unref(pb->members[m].topics);
        g_ptr_array_unref(pb->members[m].names_sorted);
    }
    g_clear_pointer(&pb->topic_index, g_hash_table_unref);
    g_free(pb->topics);
    g_free(pb->members);
    g_free(pb->topic_of);
}

/* Per-member lists of pids: the working form of an assignment. */
static GArray **
pid_lists_new(guint n)
{
    GArray **lists = g_new0(GArray *, MAX(n, 1));
    for (guint i = 0; i < n; i++)
        lists[i] = g_array_new(FALSE, FALSE, sizeof(guint32));
    return lists;
}

static void
pid_lists_free(GArray **lists, guint n)
{
    if (lists == NULL)
        return;
    for (guint i = 0; i < n; i++) {
        if (lists[i] != NULL)
            g_array_unref(lists[i]);
    }
    g_free(lists);
}

/* Removes `pid` from `list` if it is there (as Java's List.remove(Object));
 * TRUE if it was. */
static gboolean
pid_list_discard(GArray *list, guint32 pid)
{
    for (guint i = 0; i < list->len; i++) {
        if (g_array_index(list, guint32, i) == pid) {
            g_array_remove_index(list, i);
            return TRUE;
        }
    }
    return FALSE;
}

static void
pid_list_remove(GArray *list, guint32 pid)
{
    gboolean removed = pid_list_discard(list, pid);
    KSIM_ASSERT(removed);
}

/* ---- Range and round-robin ---- */

static void
assign_range(const Problem *pb, GArray **assigned)
{
    for (guint t = 0; t < pb->n_topics; t++) {
        const Topic *topic = &pb->topics[t];
        guint32 n = topic->consumers->len;
        guint32 per_member = topic->partitions / n;
        guint32 with_extra = topic->partitions % n;
        for (guint32 i = 0; i < n; i++) {
            guint32 start = per_member * i + MIN(i, with_extra);
            guint32 length = per_member + (i < with_extra ? 1 : 0);
            guint32 m = g_array_index(topic->consumers, guint32, i);
            for (guint32 pid = topic->base + start; pid < topic->base + start + length; pid++)
                g_array_append_val(assigned[m], pid);
        }
    }
}

static void
assign_round_robin(const Problem *pb, GArray **assigned)
{
    guint32 next = 0;
    for (guint32 pid = 0; pid < pb->n_partitions; pid++) {
        guint32 t = pb->topic_of[pid];
        /* Every active topic has a subscriber, so one lap always finds one. */
        for (guint skipped = 0; !problem_subscribed(pb, next, t); skipped++) {
            KSIM_ASSERT(skipped < pb->n_members);
            next = (next + 1) % pb->n_members;
        }
        g_array_append_val(assigned[next], pid);
        next = (next + 1) % pb->n_members;
    }
}

/* ---- Sticky: previously owned partitions ---- */

typedef struct {
    GArray **owned;           /* per member: pids kept after conflicts, input order */
    gboolean *doubly_claimed; /* per pid: claimed by two members of one generation */
    gint32 generation_max;
    gboolean subscriptions_equal;
} Owned;

static void
owned_claim(const Problem *pb, Owned *owned, gint32 *claimer, guint32 m, guint32 pid)
{
    gint32 other = claimer[pid];
    if (other < 0) {
        g_array_append_val(owned->owned[m], pid);
        claimer[pid] = (gint32)m;
        return;
    }
    /* The last claimer may no longer hold it (it was doubly claimed), so
     * removing from it may find nothing. */
    gint32 generation = pb->members[m].spec->generation;
    gint32 other_generation = pb->members[other].spec->generation;
    if (generation == other_generation) {
        /* Two members of one generation cannot both have owned it: neither
         * keeps it (AbstractStickyAssignor.allSubscriptionsEqual). */
        owned->doubly_claimed[pid] = TRUE;
        pid_list_discard(owned->owned[other], pid);
        claimer[pid] = (gint32)m;
    } else if (generation > other_generation) {
        g_array_append_val(owned->owned[m], pid);
        pid_list_discard(owned->owned[other], pid);
        claimer[pid] = (gint32)m;
    }
}

static gboolean
same_names(const GPtrArray *a, const GPtrArray *b)
{
    if (a->len != b->len)
        return FALSE;
    for (guint i = 0; i < a->len; i++) {
        if (strcmp(g_ptr_array_index(a, i), g_ptr_array_index(b, i)) != 0)
            return FALSE;
    }
    return TRUE;
}

static void
owned_init(Owned *owned, const Problem *pb)
{
    owned->owned = pid_lists_new(pb->n_members);
    owned->doubly_claimed = g_new0(gboolean, MAX(pb->n_partitions, 1));
    owned->generation_max = ASSIGNOR_GENERATION_NONE;
    owned->subscriptions_equal = TRUE;
    g_autofree gint32 *claimer = g_new(gint32, MAX(pb->n_partitions, 1));
    for (guint32 pid = 0; pid < pb->n_partitions; pid++)
        claimer[pid] = -1;
    for (guint32 m = 0; m < pb->n_members; m++) {
        const InputMember *spec = pb->members[m].spec;
        owned->generation_max = MAX(owned->generation_max, spec->generation);
        if (!same_names(pb->members[m].names_sorted, pb->members[0].names_sorted))
            owned->subscriptions_equal = FALSE;
        for (guint i = 0; i < spec->owned->len; i++) {
            const InputOwned *entry = &g_array_index(spec->owned, InputOwned, i);
            gint64 pid = problem_pid(pb, entry->topic, entry->partition);
            if (pid >= 0)
                owned_claim(pb, owned, claimer, m, (guint32)pid);
        }
    }
}

static void
owned_clear(Owned *owned, const Problem *pb)
{
    pid_lists_free(owned->owned, pb->n_members);
    g_free(owned->doubly_claimed);
}

/* ---- Sticky, constrained: every member has the same subscription ---- */

typedef struct {
    const Problem *pb;
    GArray **assignment; /* per member, the result being built */
    gboolean *assigned;  /* per pid */
    GArray *under_min;   /* members with fewer than min_quota partitions */
    GArray *exactly_min; /* members at min_quota that may still get one more */
    guint32 min_quota;
    guint32 max_quota;
    guint32 over_min_expected; /* members that end with max_quota (if > min) */
    guint32 over_min_current;
    const gboolean *doubly_claimed; /* per pid, from Owned */
    gint32 *revoked_from;           /* per pid: owner over quota that gave it up, or -1 */
    gboolean *transferring;         /* per pid, or NULL: partitionsTransferringOwnership */
} Constrained;

/* Kafka (since 3.8, KAFKA-16277) sorts a member's owned partitions by
 * partition number, then topic, before keeping the first min or max quota of
 * them, so a member keeps partitions spread over topics. */
static gint
compare_owned_order(gconstpointer a, gconstpointer b, gpointer data)
{
    const Problem *pb = data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    guint32 tx = pb->topic_of[x], ty = pb->topic_of[y];
    guint32 px = x - pb->topics[tx].base, py = y - pb->topics[ty].base;
    if (px != py)
        return px < py ? -1 : 1;
    return tx < ty ? -1 : tx > ty;
}

static void
constrained_take(Constrained *c, guint32 m, const GArray *owned, guint32 count)
{
    KSIM_ASSERT(count <= owned->len);
    for (guint32 i = 0; i < count; i++) {
        guint32 pid = g_array_index(owned, guint32, i);
        KSIM_ASSERT(!c->assigned[pid]);
        c->assigned[pid] = TRUE;
        g_array_append_val(c->assignment[m], pid);
    }
}

/* ConstrainedAssignmentBuilder.assignOwnedPartitions. */
static void
constrained_keep_owned(Constrained *c, const Owned *owned)
{
    const Problem *pb = c->pb;
    for (guint32 m = 0; m < pb->n_members; m++) {
        g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(guint32));
        for (guint i = 0; i < owned->owned[m]->len; i++) {
            guint32 pid = g_array_index(owned->owned[m], guint32, i);
            if (!owned->doubly_claimed[pid])
                g_array_append_val(list, pid);
        }
        g_array_sort_with_data(list, compare_owned_order, (gpointer)pb);
        if (list->len < c->min_quota) {
            constrained_take(c, m, list, list->len);
            g_array_append_val(c->under_min, m);
        } else if (list->len >= c->max_quota && c->over_min_current < c->over_min_expected) {
            c->over_min_current++;
            if (c->over_min_current == c->over_min_expected)
                g_array_set_size(c->exactly_min, 0);
            constrained_take(c, m, list, c->max_quota);
        } else {
            constrained_take(c, m, list, c->min_quota);
            if (c->over_min_current < c->over_min_expected)
                g_array_append_val(c->exactly_min, m);
        }
        for (guint i = 0; i < list->len; i++) {
            guint32 pid = g_array_index(list, guint32, i);
            if (!c->assigned[pid])
                c->revoked_from[pid] = (gint32)m;
        }
    }
}

/* The member to receive the next unassigned partition, following Kafka's
 * iterator over the under-quota members: walk them in order, start over while
 * any remain, then take the members at min quota one by one. */
static guint32
constrained_next_member(Constrained *c, guint *cursor, gboolean *from_under)
{
    *from_under = TRUE;
    if (*cursor < c->under_min->len)
        return g_array_index(c->under_min, guint32, (*cursor)++);
    /* Kafka throws here; the quotas guarantee a member is left. */
    KSIM_ASSERT(c->under_min->len > 0 || c->exactly_min->len > 0);
    if (c->under_min->len == 0) {
        *from_under = FALSE;
        guint32 m = g_array_index(c->exactly_min, guint32, 0);
        g_array_remove_index(c->exactly_min, 0);
        return m;
    }
    *cursor = 0;
    return g_array_index(c->under_min, guint32, (*cursor)++);
}

/* ConstrainedAssignmentBuilder.assignRoundRobin. */
static void
constrained_deal(Constrained *c, const GArray *unassigned)
{
    guint cursor = 0;
    for (guint i = 0; i < unassigned->len; i++) {
        guint32 pid = g_array_index(unassigned, guint32, i);
        gboolean from_under;
        guint32 m = constrained_next_member(c, &cursor, &from_under);
        g_array_append_val(c->assignment[m], pid);
        c->assigned[pid] = TRUE;
        /* ConstrainedAssignmentBuilder.assignNewPartition: it was kept from
         * another member over its quota, or claimed by two. */
        if (c->transferring != NULL &&
            ((c->revoked_from[pid] >= 0 && c->revoked_from[pid] != (gint32)m) ||
             c->doubly_claimed[pid]))
            c->transferring[pid] = TRUE;
        guint32 count = c->assignment[m]->len;
        if (count == c->min_quota) {
            KSIM_ASSERT(from_under);
            KSIM_ASSERT(cursor >= 1);
            g_array_remove_index(c->under_min, --cursor);
            g_array_append_val(c->exactly_min, m);
        } else if (count == c->max_quota) {
            c->over_min_current++;
        }
    }
}

/* ConstrainedAssignmentBuilder.verifyUnfilledMembers: Kafka throws if these
 * fail; they follow from the quotas. */
static void
constrained_verify(const Constrained *c)
{
    if (c->under_min->len == 0)
        return;
    KSIM_ASSERT(c->over_min_current == c->over_min_expected);
    for (guint i = 0; i < c->under_min->len; i++) {
        guint32 m = g_array_index(c->under_min, guint32, i);
        KSIM_ASSERT(c->assignment[m]->len == c->min_quota);
    }
}

static void
constrained_assign(const Problem *pb, const Owned *owned, GArray **assignment,
                   gboolean *transferring)
{
    KSIM_ASSERT(pb->n_members >= 1);
    Constrained c = {
        .pb = pb,
        .assignment = assignment,
        .assigned = g_new0(gboolean, MAX(pb->n_partitions, 1)),
        .under_min = g_array_new(FALSE, FALSE, sizeof(guint32)),
        .exactly_min = g_array_new(FALSE, FALSE, sizeof(guint32)),
        .min_quota = pb->n_partitions / pb->n_members,
        .max_quota = (pb->n_partitions + pb->n_members - 1) / pb->n_members,
        .over_min_expected = pb->n_partitions % pb->n_members,
        .doubly_claimed = owned->doubly_claimed,
        .revoked_from = g_new(gint32, MAX(pb->n_partitions, 1)),
        .transferring = transferring,
    };
    for (guint32 pid = 0; pid < pb->n_partitions; pid++)
        c.revoked_from[pid] = -1;
    constrained_keep_owned(&c, owned);
    g_autoptr(GArray) unassigned = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 pid = 0; pid < pb->n_partitions; pid++) {
        if (!c.assigned[pid])
            g_array_append_val(unassigned, pid);
    }
    g_array_sort(c.under_min, compare_u32);
    g_array_sort(c.exactly_min, compare_u32);
    constrained_deal(&c, unassigned);
    constrained_verify(&c);
    for (guint32 pid = 0; pid < pb->n_partitions; pid++)
        KSIM_ASSERT(c.assigned[pid]);
    g_array_unref(c.under_min);
    g_array_unref(c.exactly_min);
    g_free(c.revoked_from);
    g_free(c.assigned);
}

/* ---- Sticky, general: uneven subscriptions ---- */

typedef struct {
    gint32 member; /* -1: no previous owner */
    gint32 generation;
} PrevOwner;

typedef struct {
    const Problem *pb;
    GArray **current;            /* per member: pids held */
    gint32 *owner;               /* per pid: member or -1 */
    gboolean *participating;     /* per member */
    GSequence *sorted;           /* participating members by (size, index) */
    GSequenceIter **sorted_iter; /* per member, NULL when not in `sorted` */
    PrevOwner *prev;             /* per pid: owner in an older generation */
    gint32 *move_src;            /* per pid: where it was before it moved, or -1 */
    gint32 *move_dst;            /* per pid: where it moved to, or -1 */
    gboolean revocation_required;
} General;

static guint32
general_size(const General *g, guint32 m)
{
    return g->current[m]->len;
}

static gint
general_compare(gconstpointer a, gconstpointer b, gpointer data)
{
    const General *g = data;
    guint32 x = GPOINTER_TO_UINT(a) - 1, y = GPOINTER_TO_UINT(b) - 1;
    guint32 sx = general_size(g, x), sy = general_size(g, y);
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static guint32
general_member_at(GSequenceIter *iter)
{
    return GPOINTER_TO_UINT(g_sequence_get(iter)) - 1;
}

static void
general_sorted_add(General *g, guint32 m)
{
    KSIM_ASSERT(g->sorted_iter[m] == NULL);
    g->sorted_iter[m] =
        g_sequence_insert_sorted(g->sorted, GUINT_TO_POINTER(m + 1), general_compare, g);
}

static void
general_sorted_remove(General *g, guint32 m)
{
    KSIM_ASSERT(g->sorted_iter[m] != NULL);
    g_sequence_remove(g->sorted_iter[m]);
    g->sorted_iter[m] = NULL;
}

static void
general_give(General *g, guint32 pid, guint32 m)
{
    KSIM_ASSERT(g->owner[pid] < 0);
    g_array_append_val(g->current[m], pid);
    g->owner[pid] = (gint32)m;
}

static void
general_init(General *g, const Problem *pb)
{
    memset(g, 0, sizeof(*g));
    g->pb = pb;
    g->current = pid_lists_new(pb->n_members);
    guint32 n = MAX(pb->n_partitions, 1);
    g->owner = g_new(gint32, n);
    g->prev = g_new(PrevOwner, n);
    g->move_src = g_new(gint32, n);
    g->move_dst = g_new(gint32, n);
    for (guint32 pid = 0; pid < pb->n_partitions; pid++) {
        g->owner[pid] = g->move_src[pid] = g->move_dst[pid] = -1;
        g->prev[pid] = (PrevOwner){-1, ASSIGNOR_GENERATION_NONE};
    }
    g->participating = g_new0(gboolean, MAX(pb->n_members, 1));
    g->sorted = g_sequence_new(NULL);
    g->sorted_iter = g_new0(GSequenceIter *, MAX(pb->n_members, 1));
}

static void
general_clear(General *g)
{
    pid_lists_free(g->current, g->pb->n_members);
    g_free(g->owner);
    g_free(g->prev);
    g_free(g->move_src);
    g_free(g->move_dst);
    g_free(g->participating);
    g_sequence_free(g->sorted);
    g_free(g->sorted_iter);
}

/* GeneralAssignmentBuilder.prepopulateCurrentAssignments: for each partition,
 * the member that owned it in the most recent generation older than the
 * current one (first such member on a tie). */
static void
general_set_prev(General *g, gint32 generation_max)
{
    const Problem *pb = g->pb;
    for (guint32 m = 0; m < pb->n_members; m++) {
        const InputMember *spec = pb->members[m].spec;
        if (spec->generation >= generation_max)
            continue;
        for (guint i = 0; i < spec->owned->len; i++) {
            const InputOwned *entry = &g_array_index(spec->owned, InputOwned, i);
            gint64 pid = problem_pid(pb, entry->topic, entry->partition);
            if (pid < 0)
                continue;
            PrevOwner *prev = &g->prev[pid];
            if (prev->member < 0 || spec->generation > prev->generation)
                *prev = (PrevOwner){(gint32)m, spec->generation};
        }
    }
}

/* GeneralAssignmentBuilder.assignOwnedPartitions: keep what each member owned
 * and still subscribes to. */
static void
general_keep_owned(General *g, const Owned *owned)
{
    const Problem *pb = g->pb;
    for (guint32 m = 0; m < pb->n_members; m++) {
        for (guint i = 0; i < owned->owned[m]->len; i++) {
            guint32 pid = g_array_index(owned->owned[m], guint32, i);
            if (problem_subscribed(pb, m, pb->topic_of[pid]))
                general_give(g, pid, m);
            else
                g->revocation_required = TRUE;
        }
    }
}

/* Partitions in the order the general algorithm visits them: topics with
 * fewer potential consumers first (then by name), partitions ascending. */
static gint
compare_topics_by_consumers(gconstpointer a, gconstpointer b, gpointer data)
{
    const Problem *pb = data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    guint32 cx = pb->topics[x].consumers->len, cy = pb->topics[y].consumers->len;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static GArray *
general_sorted_partitions(const Problem *pb)
{
    g_autoptr(GArray) topics = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 t = 0; t < pb->n_topics; t++)
        g_array_append_val(topics, t);
    g_array_sort_with_data(topics, compare_topics_by_consumers, (gpointer)pb);
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < topics->len; i++) {
        const Topic *topic = &pb->topics[g_array_index(topics, guint32, i)];
        for (guint32 p = 0; p < topic->partitions; p++) {
            guint32 pid = topic->base + p;
            g_array_append_val(pids, pid);
        }
    }
    return pids;
}

/* GeneralAssignmentBuilder.maybeAssign: each unassigned partition goes to the
 * least loaded member (lowest id on a tie) subscribed to its topic. */
static void
general_assign_unassigned(General *g, const GArray *unassigned)
{
    for (guint i = 0; i < unassigned->len; i++) {
        guint32 pid = g_array_index(unassigned, guint32, i);
        guint32 t = g->pb->topic_of[pid];
        GSequenceIter *iter = g_sequence_get_begin_iter(g->sorted);
        while (!g_sequence_iter_is_end(iter) &&
               !problem_subscribed(g->pb, general_member_at(iter), t))
            iter = g_sequence_iter_next(iter);
        KSIM_ASSERT(!g_sequence_iter_is_end(iter));
        guint32 m = general_member_at(iter);
        general_sorted_remove(g, m);
        general_give(g, pid, m);
        general_sorted_add(g, m);
    }
}

/* canConsumerParticipateInReassignment. */
static gboolean
general_can_participate(const General *g, guint32 m)
{
    const Problem *pb = g->pb;
    KSIM_ASSERT(general_size(g, m) <= pb->members[m].size_max);
    if (general_size(g, m) < pb->members[m].size_max)
        return TRUE;
    for (guint i = 0; i < g->current[m]->len; i++) {
        guint32 pid = g_array_index(g->current[m], guint32, i);
        if (pb->topics[pb->topic_of[pid]].consumers->len >= 2)
            return TRUE;
    }
    return FALSE;
}

/* Keeps only the partitions of topics with two or more potential consumers:
 * the others cannot move. */
static void
general_drop_fixed_partitions(const Problem *pb, GArray *pids)
{
    guint kept = 0;
    for (guint i = 0; i < pids->len; i++) {
        guint32 pid = g_array_index(pids, guint32, i);
        if (pb->topics[pb->topic_of[pid]].consumers->len >= 2)
            g_array_index(pids, guint32, kept++) = pid;
    }
    g_array_set_size(pids, kept);
}

/* A member that may still take a partition from one with 2+ more: the body
 * of isBalanced's loop, TRUE when the member cannot gain anything. */
static gboolean
general_member_settled(const General *g, guint32 m)
{
    const Problem *pb = g->pb;
    guint32 count = general_size(g, m);
    if (count == pb->members[m].size_max)
        return TRUE;
    for (guint i = 0; i < pb->members[m].topics->len; i++) {
        const Topic *topic = &pb->topics[g_array_index(pb->members[m].topics, guint32, i)];
        for (guint32 pid = topic->base; pid < topic->base + topic->partitions; pid++) {
            gint32 other = g->owner[pid];
            KSIM_ASSERT(other >= 0);
            KSIM_ASSERT(g->participating[other]);
            if (other != (gint32)m && count + 1 < general_size(g, (guint32)other))
                return FALSE;
        }
    }
    return TRUE;
}

/* GeneralAssignmentBuilder.isBalanced. */
static gboolean
general_is_balanced(const General *g)
{
    if (g_sequence_is_empty(g->sorted))
        return TRUE;
    GSequenceIter *first = g_sequence_get_begin_iter(g->sorted);
    GSequenceIter *last = g_sequence_iter_prev(g_sequence_get_end_iter(g->sorted));
    guint32 min = general_size(g, general_member_at(first));
    guint32 max = general_size(g, general_member_at(last));
    if (min + 1 >= max)
        return TRUE;
    for (GSequenceIter *iter = first; !g_sequence_iter_is_end(iter);
         iter = g_sequence_iter_next(iter)) {
        if (!general_member_settled(g, general_member_at(iter)))
            return FALSE;
    }
    return TRUE;
}

/* PartitionMovements.getTheActualPartitionToBeMoved: if some partition of the
 * same topic earlier moved from `to` to `from`, move that one back instead,
 * so no partition of a topic moves both ways between two members. */
static guint32
general_partition_to_move(const General *g, guint32 pid, gint32 from, guint32 to)
{
    const Topic *topic = &g->pb->topics[g->pb->topic_of[pid]];
    if (g->move_src[pid] >= 0) {
        KSIM_ASSERT(g->move_dst[pid] == from);
        from = g->move_src[pid];
    }
    for (guint32 q = topic->base; q < topic->base + topic->partitions; q++) {
        if (g->move_src[q] == (gint32)to && g->move_dst[q] == from)
            return q;
    }
    return pid;
}

/* PartitionMovements.movePartition. */
static void
general_record_move(General *g, guint32 pid, guint32 from, guint32 to)
{
    if (g->move_src[pid] < 0) {
        g->move_src[pid] = (gint32)from;
        g->move_dst[pid] = (gint32)to;
        return;
    }
    KSIM_ASSERT(g->move_dst[pid] == (gint32)from);
    if (g->move_src[pid] == (gint32)to) {
        g->move_src[pid] = g->move_dst[pid] = -1;
        return;
    }
    g->move_dst[pid] = (gint32)to;
}

/* processPartitionMovement. */
static void
general_move(General *g, guint32 pid, guint32 to)
{
    gint32 from = g->owner[pid];
    KSIM_ASSERT(from >= 0);
    KSIM_ASSERT((guint32)from != to);
    KSIM_ASSERT(g->participating[from]);
    KSIM_ASSERT(g->participating[to]);
    general_sorted_remove(g, (guint32)from);
    general_sorted_remove(g, to);
    general_record_move(g, pid, (guint32)from, to);
    pid_list_remove(g->current[from], pid);
    g->owner[pid] = -1;
    general_give(g, pid, to);
    general_sorted_add(g, to);
    general_sorted_add(g, (guint32)from);
}

static void
general_reassign_to(General *g, guint32 pid, guint32 to)
{
    guint32 moved = general_partition_to_move(g, pid, g->owner[pid], to);
    general_move(g, moved, to);
}

/* reassignPartition(partition): to the least loaded subscriber. */
static void
general_reassign(General *g, guint32 pid)
{
    guint32 t = g->pb->topic_of[pid];
    for (GSequenceIter *iter = g_sequence_get_begin_iter(g->sorted); !g_sequence_iter_is_end(iter);
         iter = g_sequence_iter_next(iter)) {
        guint32 m = general_member_at(iter);
        if (problem_subscribed(g->pb, m, t)) {
            general_reassign_to(g, pid, m);
            return;
        }
    }
    KSIM_ASSERT(!"no subscriber to reassign a partition to");
}

/* One step of performReassignments for one partition; TRUE if it moved one. */
static gboolean
general_rebalance_partition(General *g, guint32 pid)
{
    const Problem *pb = g->pb;
    guint32 t = pb->topic_of[pid];
    gint32 owner = g->owner[pid];
    KSIM_ASSERT(owner >= 0);
    KSIM_ASSERT(g->participating[owner]);
    KSIM_ASSERT(pb->topics[t].consumers->len >= 2);
    guint32 size = general_size(g, (guint32)owner);
    gint32 prev = g->prev[pid].member;
    if (prev >= 0 && g->participating[prev] && problem_subscribed(pb, (guint32)prev, t) &&
        size > general_size(g, (guint32)prev) + 1) {
        general_reassign_to(g, pid, (guint32)prev);
        return TRUE;
    }
    const GArray *consumers = pb->topics[t].consumers;
    for (guint i = 0; i < consumers->len; i++) {
        guint32 other = g_array_index(consumers, guint32, i);
        KSIM_ASSERT(g->participating[other]);
        if (size > general_size(g, other) + 1) {
            general_reassign(g, pid);
            return TRUE;
        }
    }
    return FALSE;
}

/* performReassignments: sweep the partitions, moving them towards balance,
 * until a sweep moves nothing. TRUE if anything moved.
 *
 * Kafka's loop has no bound, and with some generation histories it never
 * settles (partitions chase each other between members). Random groups need
 * at most a handful of sweeps, so past `sweeps_max` ksim stops rebalancing
 * and keeps the current assignment, which is valid, where Kafka would hang. */
static gboolean
general_perform(General *g, const GArray *pids)
{
    guint64 sweeps_max = (guint64)g->pb->n_partitions + 64;
    gboolean performed = FALSE;
    gboolean modified;
    guint64 sweeps = 0;
    do {
        if (sweeps++ >= sweeps_max)
            break;
        modified = FALSE;
        for (guint i = 0; i < pids->len && !general_is_balanced(g); i++) {
            if (general_rebalance_partition(g, g_array_index(pids, guint32, i)))
                performed = modified = TRUE;
        }
    } while (modified);
    return performed;
}

/* getBalanceScore over the participating members: the sum over all pairs of
 * the difference of their sizes. */
static guint64
general_balance_score(const General *g, GArray *const *lists)
{
    guint64 score = 0;
    for (guint32 a = 0; a < g->pb->n_members; a++) {
        if (!g->participating[a])
            continue;
        for (guint32 b = a + 1; b < g->pb->n_members; b++) {
            if (g->participating[b])
                score += (guint64)ABS((gint64)lists[a]->len - (gint64)lists[b]->len);
        }
    }
    return score;
}

/* Takes the members that can neither gain nor lose a partition out of the
 * rebalancing (their assignment stays as it is). */
static void
general_fix_members(General *g)
{
    for (guint32 m = 0; m < g->pb->n_members; m++) {
        KSIM_ASSERT(g->participating[m]);
        if (!general_can_participate(g, m)) {
            general_sorted_remove(g, m);
            g->participating[m] = FALSE;
        }
    }
}

/* GeneralAssignmentBuilder.balance. */
static void
general_balance(General *g, GArray *sorted_pids, GArray *unassigned)
{
    const Problem *pb = g->pb;
    GSequenceIter *last = g_sequence_iter_prev(g_sequence_get_end_iter(g->sorted));
    gboolean initializing = general_size(g, general_member_at(last)) == 0;
    general_assign_unassigned(g, unassigned);
    general_drop_fixed_partitions(pb, sorted_pids);
    general_drop_fixed_partitions(pb, unassigned);
    general_fix_members(g);

    /* The assignment before rebalancing, to return to if rebalancing does not
     * improve the balance score. */
    GArray **before = g_new0(GArray *, MAX(pb->n_members, 1));
    for (guint32 m = 0; m < pb->n_members; m++)
        before[m] = g_array_copy(g->current[m]);
    gsize owner_bytes = sizeof(gint32) * MAX(pb->n_partitions, 1);
    g_autofree gint32 *owner_before = g_memdup2(g->owner, owner_bytes);

    if (!g->revocation_required)
        general_perform(g, unassigned);
    gboolean performed = general_perform(g, sorted_pids);
    if (!initializing && performed &&
        general_balance_score(g, g->current) >= general_balance_score(g, before)) {
        GArray **after = g->current;
        g->current = before;
        before = after;
        memcpy(g->owner, owner_before, owner_bytes);
    }
    pid_lists_free(before, pb->n_members);
}

static void
general_assign(const Problem *pb, const Owned *owned, GArray **assignment)
{
    KSIM_ASSERT(pb->n_members >= 1);
    General g;
    general_init(&g, pb);
    general_set_prev(&g, owned->generation_max);
    general_keep_owned(&g, owned);
    g_autoptr(GArray) sorted_pids = general_sorted_partitions(pb);
    g_autoptr(GArray) unassigned = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint i = 0; i < sorted_pids->len; i++) {
        guint32 pid = g_array_index(sorted_pids, guint32, i);
        if (g.owner[pid] < 0)
            g_array_append_val(unassigned, pid);
    }
    for (guint32 m = 0; m < pb->n_members; m++) {
        g.participating[m] = TRUE;
        general_sorted_add(&g, m);
    }
    general_balance(&g, sorted_pids, unassigned);
    for (guint32 m = 0; m < pb->n_members; m++)
        g_array_append_vals(assignment[m], g.current[m]->data, g.current[m]->len);
    general_clear(&g);
}

/* AbstractStickyAssignor.assignPartitions. With `transferring` (per pid),
 * the constrained algorithm marks the partitions it gives a new owner
 * (partitionsTransferringOwnership); FALSE when the general algorithm ran,
 * which marks nothing. */
static gboolean
assign_sticky(const Problem *pb, GArray **assignment, gboolean *transferring)
{
    Owned owned;
    owned_init(&owned, pb);
    gboolean constrained = owned.subscriptions_equal;
    if (constrained)
        constrained_assign(pb, &owned, assignment, transferring);
    else
        general_assign(pb, &owned, assignment);
    owned_clear(&owned, pb);
    return constrained;
}

/* Per member, the pids of the partitions it reported owning, before any
 * conflict is settled (Kafka's Subscription.ownedPartitions). */
static GArray **
claimed_lists(const Problem *pb)
{
    GArray **claimed = pid_lists_new(pb->n_members);
    for (guint32 m = 0; m < pb->n_members; m++) {
        const GArray *owned = pb->members[m].spec->owned;
        for (guint i = 0; i < owned->len; i++) {
            const InputOwned *entry = &g_array_index(owned, InputOwned, i);
            gint64 pid = problem_pid(pb, entry->topic, entry->partition);
            if (pid >= 0) {
                guint32 value = (guint32)pid;
                g_array_append_val(claimed[m], value);
            }
        }
    }
    return claimed;
}

/* CooperativeStickyAssignor.assignPartitions: sticky, less the partitions
 * that change owner (assignor_cooperative.c). */
static void
assign_cooperative_sticky(const Problem *pb, GArray **assignment)
{
    g_autofree gboolean *transferring = g_new0(gboolean, MAX(pb->n_partitions, 1));
    gboolean constrained = assign_sticky(pb, assignment, transferring);
    GArray **claimed = claimed_lists(pb);
    if (!constrained)
        cooperative_transferring_compute(assignment, claimed, pb->n_members, pb->n_partitions,
                                         transferring);
    cooperative_withhold(assignment, pb->n_members, pb->n_partitions, transferring);
    pid_lists_free(claimed, pb->n_members);
}

/* ---- Result ---- */

typedef struct {
    guint32 topic; /* index into topic_names */
    guint32 partition;
} ResultPartition;

struct AssignorResult {
    AssignorStrategy strategy;
    GPtrArray *topic_names; /* char *, owned: the active topics, sorted */
    GPtrArray *member_ids;  /* char *, owned, sorted */
    GPtrArray *partitions;  /* GArray of ResultPartition per member, sorted */
};

static AssignorResult *
result_new(const Problem *pb, GArray **assigned)
{
    AssignorResult *result = g_new0(AssignorResult, 1);
    result->topic_names = g_ptr_array_new_with_free_func(g_free);
    for (guint t = 0; t < pb->n_topics; t++)
        g_ptr_array_add(result->topic_names, g_strdup(pb->topics[t].name));
    result->member_ids = g_ptr_array_new_with_free_func(g_free);
    result->partitions = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    for (guint32 m = 0; m < pb->n_members; m++) {
        g_ptr_array_add(result->member_ids, g_strdup(pb->members[m].spec->id));
        g_array_sort(assigned[m], compare_u32);
        GArray *list = g_array_sized_new(FALSE, FALSE, sizeof(ResultPartition), assigned[m]->len);
        for (guint i = 0; i < assigned[m]->len; i++) {
            guint32 pid = g_array_index(assigned[m], guint32, i);
            guint32 t = pb->topic_of[pid];
            ResultPartition entry = {t, pid - pb->topics[t].base};
            g_array_append_val(list, entry);
        }
        g_ptr_array_add(result->partitions, list);
    }
    return result;
}

AssignorResult *
assignor_assign(const AssignorInput *input, AssignorStrategy strategy)
{
    KSIM_ASSERT(input != NULL);
    Problem pb;
    problem_init(&pb, input);
    GArray **assigned = pid_lists_new(pb.n_members);
    if (pb.n_members > 0) {
        switch (strategy) {
        case ASSIGNOR_RANGE:
            assign_range(&pb, assigned);
            break;
        case ASSIGNOR_ROUNDROBIN:
            assign_round_robin(&pb, assigned);
            break;
        case ASSIGNOR_STICKY:
            assign_sticky(&pb, assigned, NULL);
            break;
        case ASSIGNOR_COOPERATIVE_STICKY:
            assign_cooperative_sticky(&pb, assigned);
            break;
        }
    }
    AssignorResult *result = result_new(&pb, assigned);
    result->strategy = strategy;
    pid_lists_free(assigned, pb.n_members);
    problem_clear(&pb);
    return result;
}

void
assignor_result_free(AssignorResult *result)
{
    if (result == NULL)
        return;
    g_ptr_array_unref(result->partitions);
    g_ptr_array_unref(result->member_ids);
    g_ptr_array_unref(result->topic_names);
    g_free(result);
}

guint
assignor_result_member_count(const AssignorResult *result)
{
    KSIM_ASSERT(result != NULL);
    return result->member_ids->len;
}

const char *
assignor_result_member_id(const AssignorResult *result, guint member)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(member < result->member_ids->len);
    return g_ptr_array_index(result->member_ids, member);
}

gint
assignor_result_find_member(const AssignorResult *result, const char *member_id)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(member_id != NULL);
    guint lo = 0, hi = result->member_ids->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        int cmp = strcmp(g_ptr_array_index(result->member_ids, mid), member_id);
        if (cmp == 0)
            return (gint)mid;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static const ResultPartition *
result_entry(const AssignorResult *result, guint member, guint i)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(member < result->partitions->len);
    const GArray *list = g_ptr_array_index(result->partitions, member);
    KSIM_ASSERT(i < list->len);
    return &g_array_index(list, ResultPartition, i);
}

guint
assignor_result_partition_count(const AssignorResult *result, guint member)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(member < result->partitions->len);
    return ((const GArray *)g_ptr_array_index(result->partitions, member))->len;
}

const char *
assignor_result_partition_topic(const AssignorResult *result, guint member, guint i)
{
    return g_ptr_array_index(result->topic_names, result_entry(result, member, i)->topic);
}

guint32
assignor_result_partition_number(const AssignorResult *result, guint member, guint i)
{
    return result_entry(result, member, i)->partition;
}

void
assignor_result_format(const AssignorResult *result, GString *out)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(out != NULL);
    for (guint m = 0; m < result->member_ids->len; m++) {
        g_string_append(out, g_ptr_array_index(result->member_ids, m));
        for (guint i = 0; i < assignor_result_partition_count(result, m); i++) {
            g_string_append_printf(out, " %s-%" G_GUINT32_FORMAT,
                                   assignor_result_partition_topic(result, m, i),
                                   assignor_result_partition_number(result, m, i));
        }
        g_string_append_c(out, '\n');
    }
}

/* Counts, per declared topic, how many members got each partition. */
static void
check_member_partitions(const AssignorResult *result, const AssignorInput *input, guint m,
                        GHashTable *counts)
{
    const InputMember *spec =
        g_hash_table_lookup(input->member_by_id, assignor_result_member_id(result, m));
    KSIM_ASSERT(spec != NULL);
    const ResultPartition *previous = NULL;
    for (guint i = 0; i < assignor_result_partition_count(result, m); i++) {
        const ResultPartition *entry = result_entry(result, m, i);
        if (previous != NULL)
            KSIM_ASSERT(previous->topic < entry->topic || (previous->topic == entry->topic &&
                                                           previous->partition < entry->partition));
        previous = entry;
        const char *topic = g_ptr_array_index(result->topic_names, entry->topic);
        const InputTopic *declared = g_hash_table_lookup(input->topic_by_name, topic);
        KSIM_ASSERT(declared != NULL);
        KSIM_ASSERT(entry->partition < declared->partitions);
        KSIM_ASSERT(g_ptr_array_find_with_equal_func(spec->topics, topic, g_str_equal, NULL));
        guint32 *count = g_hash_table_lookup(counts, topic);
        count[entry->partition]++;
    }
}

void
assignor_result_check_invariants(const AssignorResult *result, const AssignorInput *input)
{
    KSIM_ASSERT(result != NULL);
    KSIM_ASSERT(input != NULL);
    KSIM_ASSERT(result->member_ids->len == input->members->len);
    KSIM_ASSERT(result->partitions->len == input->members->len);
    for (guint m = 1; m < result->member_ids->len; m++)
        KSIM_ASSERT(strcmp(g_ptr_array_index(result->member_ids, m - 1),
                           g_ptr_array_index(result->member_ids, m)) < 0);
    g_autoptr(GHashTable) counts = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    for (guint t = 0; t < input->topics->len; t++) {
        const InputTopic *topic = g_ptr_array_index(input->topics, t);
        g_hash_table_insert(counts, topic->name, g_new0(guint32, MAX(topic->partitions, 1)));
    }
    for (guint m = 0; m < result->member_ids->len; m++)
        check_member_partitions(result, input, m, counts);
    g_autoptr(GPtrArray) active = active_topic_names(input);
    for (guint t = 0; t < input->topics->len; t++) {
        const InputTopic *topic = g_ptr_array_index(input->topics, t);
        gboolean subscribed = g_ptr_array_find(active, topic->name, NULL);
        const guint32 *count = g_hash_table_lookup(counts, topic->name);
        for (guint32 p = 0; p < topic->partitions; p++) {
            if (subscribed && result->strategy == ASSIGNOR_COOPERATIVE_STICKY)
                KSIM_ASSERT(count[p] <= 1u);
            else
                KSIM_ASSERT(count[p] == (subscribed ? 1u : 0u));
        }
    }
}
