/*
 * patterns: see patterns.h.
 */
#include "patterns.h"

#include <string.h>

#include "sim_assert.h"

static void
pattern_free(gpointer data)
{
    Pattern *p = data;
    g_free(p->signature);
    g_array_free(p->examples, TRUE);
    g_array_free(p->partitions, TRUE);
    g_ptr_array_unref(p->chain);
    g_array_free(p->events, TRUE);
    g_free(p);
}

/* Brokers named by role: A for the first the chain names, B the next. */
typedef struct {
    gint32 ids[26];
    guint n;
} Roles;

static char
role_of(Roles *roles, gint32 broker)
{
    for (guint i = 0; i < roles->n; i++)
        if (roles->ids[i] == broker)
            return (char)('A' + i);
    if (roles->n == G_N_ELEMENTS(roles->ids))
        return '?';
    roles->ids[roles->n] = broker;
    return (char)('A' + roles->n++);
}

/* The latest election of the partition before event `ack`, or NULL: a
 * binary search for the ack in its partition's (ascending) milestones, then a
 * walk back to the election. */
static const HistoryEvent *
election_before(const Explainer *explainer, const GArray *events, const HistoryEvent *ack,
                guint ack_index)
{
    const GArray *list = explain_partition_milestones(explainer, ack->topic, ack->partition);
    guint lo = 0, hi = list != NULL ? list->len : 0;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(list, guint, mid) < ack_index)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (guint k = lo; k-- > 0;) {
        const HistoryEvent *event =
            &g_array_index(events, HistoryEvent, g_array_index(list, guint, k));
        if (event->kind == HISTORY_EVENT_ELECTED)
            return event;
    }
    return NULL;
}

char *
patterns_signature(const Explainer *explainer, const History *history,
                   const CheckerExample *example, const GArray *chain_events)
{
    const GArray *events = history_events(history);
    Roles roles = {{0}, 0};
    GString *out = g_string_new(NULL);
    gint64 offset = example->offset;
    gboolean acked = FALSE;
    for (guint i = 0; i < chain_events->len; i++) {
        guint index = g_array_index(chain_events, guint, i);
        if (index == G_MAXUINT)
            continue;
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, index);
        switch ((HistoryEventKind)e->kind) {
        case HISTORY_EVENT_ACK: {
            if (acked)
                break;
            acked = TRUE;
            const HistoryEvent *elected = election_before(explainer, events, e, index);
            char role = role_of(&roles, e->broker);
            if (e->acks == 0) {
                g_string_append_printf(out, "probably appended by %c with acks=0", role);
                if (offset < 0)
                    offset = e->offset; /* no offset was told: the batch's */
            } else {
                g_string_append_printf(out, "acknowledged by %c (acks=%s)", role,
                                       e->acks < 0 ? "all" : "1");
            }
            if (offset >= 0 && e->hw > offset)
                g_string_append(out, " after the HW passed it");
            else if (offset >= 0 && e->acks != 0)
                g_string_append(out, " before the HW reached it");
            if (elected != NULL && elected->leader_epoch > e->leader_epoch)
                g_string_append(out, ", a deposed leader (a newer one had been elected)");
            break;
        }
        case HISTORY_EVENT_ELECTED: {
            const char *held = offset < 0 || e->offset <= offset ? "without it" : "with it";
            g_string_append_printf(out, "; %c was elected %s%s", role_of(&roles, e->broker), held,
                                   e->text != NULL && strstr(e->text, "unclean") ? " (unclean)"
                                                                                 : "");
            break;
        }
        /* The first removal seals the loss: later steps follow from it. */
        case HISTORY_EVENT_TRUNCATED:
            g_string_append_printf(out, "; %c truncated it", role_of(&roles, e->broker));
            i = chain_events->len;
            break;
        case HISTORY_EVENT_RETENTION:
            g_string_append_printf(out, "; %c deleted its segment", role_of(&roles, e->broker));
            i = chain_events->len;
            break;
        case HISTORY_EVENT_OFFLINE:
            g_string_append(out, "; offline");
            break;
        case HISTORY_EVENT_NODE:
            /* What happened to the acknowledging broker, not to every node. */
            if (e->broker >= 0 && roles.n > 0 && e->broker == roles.ids[0] && e->text != NULL) {
                const char *verb = strstr(e->text, "lost power") ? "lost power"
                                   : strstr(e->text, "crash")    ? "crashed"
                                   : strstr(e->text, "restart")  ? "restarted"
                                   : strstr(e->text, "paus")     ? "paused"
                                   : strstr(e->text, "stopped")  ? "stopped"
                                                                 : NULL;
                if (verb != NULL)
                    g_string_append_printf(out, "; A %s", verb);
            }
            break;
        default:
            break;
        }
    }
    if (!acked)
        g_string_prepend(out, "no acknowledgement found");
    /* The same story told twice in a row ("B elected without it" after a
     * bounce) is one step. */
    g_auto(GStrv) steps = g_strsplit(out->str, "; ", -1);
    g_string_truncate(out, 0);
    for (guint i = 0; steps[i] != NULL; i++) {
        if (i > 0 && strcmp(steps[i], steps[i - 1]) == 0)
            continue;
        g_string_append_printf(out, "%s%s", out->len > 0 ? "; " : "", steps[i]);
    }
    return g_string_free(out, FALSE);
}

/* Groups patterns by signature while they are built. */
typedef struct {
    const Explainer *explainer;
    const CheckerResult *result;
    GPtrArray *patterns;      /* Pattern, in order of first record */
    GHashTable *by_signature; /* signature (the pattern's) -> Pattern; looked up only */
} Grouping;

static void
grouping_add(Grouping *g, const CheckerExample *example, gint64 send_ns)
{
    GArray *events = NULL;
    GPtrArray *chain = explain_example_events(g->explainer, example, &events);
    char *signature =
        patterns_signature(g->explainer, checker_result_history(g->result), example, events);
    Pattern *p = g_hash_table_lookup(g->by_signature, signature);
    if (p == NULL) {
        p = g_new0(Pattern, 1);
        p->signature = signature;
        p->examples = g_array_new(FALSE, TRUE, sizeof(CheckerExample));
        p->partitions = g_array_new(FALSE, FALSE, sizeof(guint64));
        p->first_ns = send_ns;
        p->last_ns = send_ns;
        p->chain = chain;
        p->events = events;
        g_ptr_array_add(g->patterns, p);
        g_hash_table_insert(g->by_signature, p->signature, p);
    } else {
        g_free(signature);
        g_ptr_array_unref(chain);
        g_array_free(events, TRUE);
    }
    p->count++;
    p->first_ns = MIN(p->first_ns, send_ns);
    p->last_ns = MAX(p->last_ns, send_ns);
    if (p->examples->len < PATTERN_EXAMPLES) {
        CheckerExample copy = *example;
        copy.summary = NULL;
        g_array_append_val(p->examples, copy);
    }
    guint64 key = ((guint64)example->topic << 32) | (guint32)example->partition;
    guint at = 0;
    while (at < p->partitions->len && g_array_index(p->partitions, guint64, at) < key)
        at++;
    if (at == p->partitions->len || g_array_index(p->partitions, guint64, at) != key)
        g_array_insert_val(p->partitions, at, key);
}

static gint
pattern_compare(gconstpointer a, gconstpointer b)
{
    const Pattern *x = *(const Pattern *const *)a, *y = *(const Pattern *const *)b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->first_ns < y->first_ns ? -1 : x->first_ns > y->first_ns;
}

static GPtrArray *
grouping_finish(Grouping *g)
{
    g_hash_table_destroy(g->by_signature);
    g_ptr_array_sort(g->patterns, pattern_compare);
    return g->patterns;
}

static Grouping
grouping_new(const Explainer *explainer, const CheckerResult *result)
{
    Grouping g = {explainer, result, g_ptr_array_new_with_free_func(pattern_free),
                  g_hash_table_new(g_str_hash, g_str_equal)};
    return g;
}

GPtrArray *
patterns_lost_writes(const Explainer *explainer, const CheckerResult *result)
{
    Grouping g = grouping_new(explainer, result);
    const GArray *lost = checker_result_lost_writes(result);
    for (guint i = 0; i < lost->len; i++) {
        CheckerSend send;
        gboolean found = checker_result_send(result, g_array_index(lost, guint64, i), &send);
        KSIM_ASSERT(found);
        CheckerExample example = {0};
        example.anomaly = CHECKER_LOST_WRITE;
        example.topic = send.topic;
        example.partition = send.partition;
        example.partition_other = -1;
        example.broker = -1;
        example.op = send.op;
        example.value = send.value;
        example.offset = send.offset;
        example.offset_other = -1;
        grouping_add(&g, &example, send.invoke_ns);
    }
    return grouping_finish(&g);
}

GPtrArray *
patterns_of_examples(const Explainer *explainer, const CheckerResult *result,
                     const GArray *examples)
{
    Grouping g = grouping_new(explainer, result);
    for (guint i = 0; i < examples->len; i++) {
        const CheckerExample *example = &g_array_index(examples, CheckerExample, i);
        CheckerSend send;
        gint64 send_ns = checker_result_send(result, example->op, &send) ? send.invoke_ns : -1;
        grouping_add(&g, example, send_ns);
    }
    return grouping_finish(&g);
}
