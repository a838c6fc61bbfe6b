/*
 * checker_consumer: consumer group anomalies and statistics (see
 * checker_consumer.h).
 *
 * Invariants (checker_consumer_check_invariants):
 *  1. `groups` is sorted by group id, without duplicates, and every group's
 *     counts add up: unique <= processed, and duplicate_consumption <= unique.
 *  2. lost_consumption <= judged, and no group keeps more examples of an
 *     anomaly than it counted, nor more than examples_max.
 *  3. `e2e_all` holds exactly the values of every group's e2e histogram.
 *  4. No group keeps more reset examples than examples_max, and each names
 *     a RETENTION event and a forward jump.
 *
 * Hash tables are only looked up, never iterated where order reaches the
 * result: partitions are sorted before the lost_consumption pass.
 */
#include "checker_consumer.h"

#include "kafka_error.h"
#include "sim_assert.h"

#include <string.h>

/* The processing of one value within a group. */
typedef struct {
    guint count;
    guint32 process;
    guint64 op;
    gint64 time_ns;
} ProcessedValue;

/* Offsets [from, to) a reset caused by retention moved a position past. */
typedef struct {
    gint64 from;
    gint64 to;
} SkippedRange;

/* A group's view of one partition. */
typedef struct {
    guint64 key;         /* topic << 32 | partition */
    GArray *skipped;     /* SkippedRange of the members' resets; NULL: none */
    gint64 start_offset; /* the position of the group's first ASSIGN; -1: none */
    gint64 final_offset; /* the last OK commit's offset; -1: none */
    gint64 final_ns;
    guint64 final_op;
    guint32 final_process;
    gint64 revoked_ns;   /* a REVOKE waiting for the group's next ASSIGN; -1: none */
} GroupPartition;

/* One member's continuous assignment of one partition. */
typedef struct {
    guint32 process;
    guint16 topic;
    gint32 partition;
    gint64 start;       /* the ASSIGN's position; -1: none */
    guint64 start_op;   /* the ASSIGN op; 0: none */
    gint64 last;        /* the last polled offset; -1: none yet */
    guint64 last_op;
    gint64 max;         /* the highest polled offset; -1: none yet */
    guint64 max_op;
    gint64 max_ns;
    gboolean owned;     /* assigned (an ASSIGN) and not revoked since */
} MemberPartition;

/* What one member owns, for the time it spends without partitions. */
typedef struct {
    guint owned;        /* its MemberPartitions owned */
    gint64 idle_since;  /* the REVOKE that left it none; -1: not idle */
} MemberOwnership;

typedef struct {
    ConsumerGroupResult public;
    char *group;
    StatsHistogram *e2e;
    GArray *examples[CONSUMER_ANOMALY_COUNT];
    GArray *reset_examples;   /* ConsumerExample */
    GArray *values;           /* ProcessedValue */
    GHashTable *value_index;  /* guint64* value -> index + 1 into values */
    GHashTable *partitions;   /* guint64* key -> GroupPartition* */
} GroupState;

struct ConsumerCheck {
    const History *history;
    const CheckerResult *producer;
    CheckerOptions options;
    GPtrArray *groups; /* GroupState*, sorted by group id */
    StatsHistogram *e2e_all;
};

static const char *const ANOMALY_NAMES[] = {
    [CONSUMER_LOST_CONSUMPTION] = "lost_consumption",
    [CONSUMER_DUPLICATE_CONSUMPTION] = "duplicate_consumption",
    [CONSUMER_POLL_SKIP] = "poll_skip",
    [CONSUMER_NONMONOTONIC_POLL] = "nonmonotonic_poll",
    [CONSUMER_TRUNCATED_READ] = "truncated_read",
};

const char *
checker_consumer_anomaly_name(ConsumerAnomaly anomaly)
{
    KSIM_ASSERT(anomaly < CONSUMER_ANOMALY_COUNT);
    return ANOMALY_NAMES[anomaly];
}

/* ---- state ---- */

static void
example_clear(gpointer data)
{
    ConsumerExample *example = data;
    g_free(example->summary);
}

static void
group_partition_free(gpointer data)
{
    GroupPartition *gp = data;
    if (gp->skipped != NULL)
        g_array_free(gp->skipped, TRUE);
    g_free(gp);
}

static GroupState *
group_state_new(const char *group, int digits)
{
    GroupState *g = g_new0(GroupState, 1);
    g->group = g_strdup(group);
    g->e2e = stats_histogram_new(digits);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
        g->examples[a] = g_array_new(FALSE, TRUE, sizeof(ConsumerExample));
        g_array_set_clear_func(g->examples[a], example_clear);
    }
    g->reset_examples = g_array_new(FALSE, TRUE, sizeof(ConsumerExample));
    g_array_set_clear_func(g->reset_examples, example_clear);
    g->values = g_array_new(FALSE, FALSE, sizeof(ProcessedValue));
    g->value_index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    g->partitions = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, group_partition_free);
    return g;
}

static void
group_state_free(gpointer data)
{
    GroupState *g = data;
    g_free(g->group);
    stats_histogram_free(g->e2e);
    for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
        g_array_free(g->examples[a], TRUE);
    g_array_free(g->reset_examples, TRUE);
    g_array_free(g->values, TRUE);
    g_hash_table_destroy(g->value_index);
    g_hash_table_destroy(g->partitions);
    g_free(g);
}

static guint64
partition_key(guint16 topic, gint32 partition)
{
    return ((guint64)topic << 32) | (guint32)partition;
}

static GroupPartition *
group_partition(GroupState *g, guint16 topic, gint32 partition)
{
    guint64 key = partition_key(topic, partition);
    GroupPartition *gp = g_hash_table_lookup(g->partitions, &key);
    if (gp != NULL)
        return gp;
    gp = g_new0(GroupPartition, 1);
    gp->key = key;
    gp->start_offset = -1;
    gp->final_offset = -1;
    gp->final_ns = -1;
    gp->revoked_ns = -1;
    g_hash_table_insert(g->partitions, &gp->key, gp);
    return gp;
}

static guint
member_hash(gconstpointer key)
{
    const MemberPartition *m = key;
    return g_int_hash(&m->process) * 31u + (guint)m->topic * 17u + (guint)m->partition;
}

static gboolean
member_equal(gconstpointer a, gconstpointer b)
{
    const MemberPartition *x = a, *y = b;
    return x->process == y->process && x->topic == y->topic && x->partition == y->partition;
}

static MemberPartition *
member_partition(GHashTable *members, const HistoryOp *op)
{
    MemberPartition probe = {.process = op->process, .topic = op->topic,
                             .partition = op->partition};
    MemberPartition *m = g_hash_table_lookup(members, &probe);
    if (m != NULL)
        return m;
    m = g_new0(MemberPartition, 1);
    *m = probe;
    m->start = -1;
    m->last = -1;
    m->max = -1;
    g_hash_table_add(members, m);
    return m;
}

/* ---- committed log helpers ---- */

/* The index of the first committed record at or after `offset`. */
static guint
committed_lower_bound(const CheckerPartition *cp, gint64 offset)
{
    guint lo = 0, hi = cp->records_committed;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(cp->records, HistoryRecord, mid).offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* TRUE when a consumer must return `record` (a data record: the final state
 * holds no transaction markers): any, but for a read_committed reader not a
 * write of a transactional producer (which it must skip when its transaction
 * aborted; checker_txn judges those reads). */
static gboolean
record_is_due(const History *history, const HistoryRecord *record, gboolean read_committed)
{
    return !read_committed ||
           history_process_transactional_id(history, HISTORY_VALUE_PROCESS(record->value)) == NULL;
}

/* Committed records due to `process` (record_is_due) with offsets in
 * [from, to); the first at *first_index. */
static guint64
committed_between(const History *history, guint32 process, const CheckerPartition *cp,
                  gint64 from, gint64 to, guint *first_index)
{
    if (cp == NULL || from >= to)
        return 0;
    gboolean read_committed = history_process_read_committed(history, process);
    guint a = committed_lower_bound(cp, from);
    guint b = committed_lower_bound(cp, to);
    guint64 due = 0;
    for (guint i = a; i < b; i++) {
        const HistoryRecord *record = &g_array_index(cp->records, HistoryRecord, i);
        if (!record_is_due(history, record, read_committed))
            continue;
        if (due++ == 0)
            *first_index = i;
    }
    return due;
}

/* ---- examples ---- */

static char *
label_of(const ConsumerCheck *check, guint32 process)
{
    return checker_process_label(check->history, process);
}

static ConsumerExample *
example_add(const ConsumerCheck *check, GroupState *g, ConsumerAnomaly anomaly,
            const HistoryOp *op)
{
    g->public.counts.anomalies[anomaly]++;
    if (g->examples[anomaly]->len >= check->options.examples_max)
        return NULL;
    ConsumerExample example = {0};
    example.anomaly = anomaly;
    example.topic = op->topic;
    example.partition = op->partition;
    example.process = op->process;
    example.offset = op->offset;
    example.value = op->value;
    example.time_ns = op->invoke_ns;
    example.offset_other = -1;
    example.time_other_ns = -1;
    g_array_append_val(g->examples[anomaly], example);
    return &g_array_index(g->examples[anomaly], ConsumerExample, g->examples[anomaly]->len - 1);
}

static gboolean
acked(const CheckerSend *send)
{
    return send->outcome == CHECKER_SEND_OK || send->outcome == CHECKER_SEND_SENT;
}

/* ---- the pass over the operations ---- */

typedef struct {
    ConsumerCheck *check;
    GPtrArray *by_process;  /* GroupState* by process id, NULL: none */
    GHashTable *members;    /* MemberPartition* */
    GArray *ownership;      /* MemberOwnership by process id */
} Walk;

static MemberOwnership *
ownership_of(Walk *w, guint32 process)
{
    if (process >= w->ownership->len) {
        guint from = w->ownership->len;
        g_array_set_size(w->ownership, process + 1);
        for (guint i = from; i <= process; i++)
            g_array_index(w->ownership, MemberOwnership, i).idle_since = -1;
    }
    return &g_array_index(w->ownership, MemberOwnership, process);
}

/* A partition's pause ends when a member of the group is given it (its
 * ASSIGN); a member's idle time ends with its next partition. */
static void
pause_end(Walk *w, GroupState *g, const HistoryOp *op, MemberPartition *m)
{
    GroupPartition *gp = group_partition(g, op->topic, op->partition);
    ConsumerCounts *c = &g->public.counts;
    if (gp->revoked_ns >= 0) {
        gint64 pause = op->invoke_ns - gp->revoked_ns;
        c->pauses++;
        c->pause_ns_total += (guint64)pause;
        c->pause_ns_max = MAX(c->pause_ns_max, (guint64)pause);
        gp->revoked_ns = -1;
    }
    MemberOwnership *own = ownership_of(w, op->process);
    if (own->idle_since >= 0) {
        guint64 idle = (guint64)(op->invoke_ns - own->idle_since);
        c->member_idle_ns_total += idle;
        c->member_idle_ns_max = MAX(c->member_idle_ns_max, idle);
        own->idle_since = -1;
    }
    if (!m->owned) {
        m->owned = TRUE;
        own->owned++;
    }
}

/* A REVOKE: the partition waits for its next owner; a member left with
 * none starts waiting for its next. */
static void
on_revoke(Walk *w, GroupState *g, const HistoryOp *op)
{
    MemberPartition *m = member_partition(w->members, op);
    GroupPartition *gp = group_partition(g, op->topic, op->partition);
    if (gp->revoked_ns < 0)
        gp->revoked_ns = op->invoke_ns;
    g->public.counts.revocations++;
    MemberOwnership *own = ownership_of(w, op->process);
    if (!m->owned)
        return;
    m->owned = FALSE;
    KSIM_ASSERT(own->owned > 0);
    if (--own->owned == 0)
        own->idle_since = op->invoke_ns;
}

static void
on_assign(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op)
{
    MemberPartition *m = member_partition(w->members, op);
    pause_end(w, g, op, m);
    m->start = op->offset;
    m->start_op = op_id;
    m->last = -1;
    m->max = -1;
    GroupPartition *gp = group_partition(g, op->topic, op->partition);
    if (gp->start_offset < 0)
        gp->start_offset = op->offset;
}

static void
poll_skip_check(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op, MemberPartition *m)
{
    const CheckerPartition *cp =
        checker_result_partition(w->check->producer, op->topic, op->partition);
    gint64 from = m->last >= 0 ? m->last + 1 : m->start;
    if (from < 0 || op->offset <= from)
        return;
    guint first = 0;
    guint64 skipped =
        committed_between(w->check->history, op->process, cp, from, op->offset, &first);
    if (skipped == 0)
        return;
    ConsumerExample *e = example_add(w->check, g, CONSUMER_POLL_SKIP, op);
    if (e == NULL)
        return;
    e->op = op_id;
    e->op_other = m->last >= 0 ? m->last_op : m->start_op;
    e->offset_other = from - 1;
    e->skipped = skipped;
    const HistoryRecord *record = &g_array_index(cp->records, HistoryRecord, first);
    e->value = record->value;
    g_autofree char *who = label_of(w->check, op->process);
    g_autofree char *where = checker_partition_label(w->check->history, op->topic, op->partition);
    if (m->last >= 0)
        e->summary = g_strdup_printf(
            "%s polled offset %" G_GINT64_FORMAT " of %s at %.3f s right after offset %" G_GINT64_FORMAT
            ", skipping %" G_GUINT64_FORMAT " committed record%s (the first: offset %" G_GINT64_FORMAT ")",
            who, op->offset, where, (double)op->invoke_ns / 1e9, m->last, skipped,
            skipped == 1 ? "" : "s", record->offset);
    else
        e->summary = g_strdup_printf(
            "%s polled offset %" G_GINT64_FORMAT " of %s at %.3f s as its first record after being "
            "assigned the partition at position %" G_GINT64_FORMAT ", skipping %" G_GUINT64_FORMAT
            " committed record%s",
            who, op->offset, where, (double)op->invoke_ns / 1e9, m->start, skipped,
            skipped == 1 ? "" : "s");
}

/* A polled record the final committed log no longer holds at its offset. */
static void
truncated_read_check(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op)
{
    const CheckerPartition *cp =
        checker_result_partition(w->check->producer, op->topic, op->partition);
    if (cp == NULL || op->offset < cp->log_start)
        return;
    /* The final log's records above its HW still exist: only a record
     * another one replaced, or that is gone from the log, no longer does. */
    guint index = 0, hi = cp->records->len;
    while (index < hi) {
        guint mid = index + (hi - index) / 2;
        if (g_array_index(cp->records, HistoryRecord, mid).offset < op->offset)
            index = mid + 1;
        else
            hi = mid;
    }
    guint64 there = 0;
    if (index < cp->records->len) {
        const HistoryRecord *record = &g_array_index(cp->records, HistoryRecord, index);
        if (record->offset == op->offset)
            there = record->value;
    }
    if (there == op->value)
        return;
    ConsumerExample *e = example_add(w->check, g, CONSUMER_TRUNCATED_READ, op);
    if (e == NULL)
        return;
    e->op = op_id;
    e->op_other = 0;
    e->offset_other = cp->hw;
    g_autofree char *who = label_of(w->check, op->process);
    g_autofree char *where = checker_partition_label(w->check->history, op->topic, op->partition);
    g_autofree char *now_there =
        there != 0 ? g_strdup_printf("value %" G_GUINT64_FORMAT, there)
                   : g_strdup_printf("nothing (its HW is %" G_GINT64_FORMAT ")", cp->hw);
    e->summary = g_strdup_printf("%s polled value %" G_GUINT64_FORMAT " at offset %" G_GINT64_FORMAT
                                 " of %s at %.3f s, a record that no longer exists: the final "
                                 "log holds %s at that offset",
                                 who, op->value, op->offset, where, (double)op->invoke_ns / 1e9,
                                 now_there);
}

static void
on_poll(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op)
{
    g->public.counts.polled++;
    truncated_read_check(w, g, op_id, op);
    MemberPartition *m = member_partition(w->members, op);
    if (m->max >= 0 && op->offset <= m->max) {
        ConsumerExample *e = example_add(w->check, g, CONSUMER_NONMONOTONIC_POLL, op);
        if (e != NULL) {
            e->op = op_id;
            e->op_other = m->max_op;
            e->offset_other = m->max;
            e->time_other_ns = m->max_ns;
            g_autofree char *who = label_of(w->check, op->process);
            g_autofree char *where =
                checker_partition_label(w->check->history, op->topic, op->partition);
            e->summary = g_strdup_printf(
                "%s polled offset %" G_GINT64_FORMAT " of %s at %.3f s after it had polled offset "
                "%" G_GINT64_FORMAT " at %.3f s in the same assignment",
                who, op->offset, where, (double)op->invoke_ns / 1e9, m->max,
                (double)m->max_ns / 1e9);
        }
    } else {
        poll_skip_check(w, g, op_id, op, m);
    }
    m->last = op->offset;
    m->last_op = op_id;
    if (op->offset > m->max) {
        m->max = op->offset;
        m->max_op = op_id;
        m->max_ns = op->invoke_ns;
    }
}

static void
duplicate_example(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op,
                  const ProcessedValue *first)
{
    ConsumerExample *e = example_add(w->check, g, CONSUMER_DUPLICATE_CONSUMPTION, op);
    if (e == NULL)
        return;
    e->op = op_id;
    e->op_other = first->op;
    e->process_other = first->process;
    e->time_other_ns = first->time_ns;
    g_autofree char *who = label_of(w->check, op->process);
    g_autofree char *first_who = label_of(w->check, first->process);
    g_autofree char *where = checker_partition_label(w->check->history, op->topic, op->partition);
    e->summary = g_strdup_printf("value %" G_GUINT64_FORMAT " at offset %" G_GINT64_FORMAT
                                 " of %s was processed by %s at %.3f s and again by %s at %.3f s "
                                 "(group %s)",
                                 op->value, op->offset, where, first_who,
                                 (double)first->time_ns / 1e9, who, (double)op->invoke_ns / 1e9,
                                 g->group);
}

static void
on_process(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op)
{
    g->public.counts.processed++;
    guint64 value = op->value;
    guint index = GPOINTER_TO_UINT(g_hash_table_lookup(g->value_index, &value));
    if (index > 0) {
        ProcessedValue *seen = &g_array_index(g->values, ProcessedValue, index - 1);
        seen->count++;
        if (seen->count == 2)
            duplicate_example(w, g, op_id, op, seen);
        return;
    }
    ProcessedValue fresh = {1, op->process, op_id, op->invoke_ns};
    g_array_append_val(g->values, fresh);
    g_hash_table_insert(g->value_index, g_memdup2(&value, sizeof value),
                        GUINT_TO_POINTER(g->values->len));
    CheckerSend send;
    gboolean sent = checker_result_send_of_value(w->check->producer, value, &send);
    if (sent && acked(&send) && send.committed_partition >= 0)
        g->public.counts.delivered++;
    if (sent && op->invoke_ns >= send.invoke_ns) {
        stats_histogram_record(g->e2e, op->invoke_ns - send.invoke_ns);
        stats_histogram_record(w->check->e2e_all, op->invoke_ns - send.invoke_ns);
    }
}

static void
on_commit(GroupState *g, guint64 op_id, const HistoryOp *op)
{
    ConsumerCounts *c = &g->public.counts;
    if (op->type == HISTORY_FAIL) {
        c->commits_failed++;
        return;
    }
    if (op->type != HISTORY_OK) {
        c->commits_unknown++;
        return;
    }
    c->commits_ok++;
    GroupPartition *gp = group_partition(g, op->topic, op->partition);
    if (op->complete_ns < gp->final_ns)
        return;
    /* Ops are in invocation order: an equal completion time keeps the later op. */
    gp->final_ns = op->complete_ns;
    gp->final_offset = op->offset;
    gp->final_op = op_id;
    gp->final_process = op->process;
}

/* The index of a RETENTION event of a leader of the partition, at or
 * before `time_ns`, whose deleted segment held offset `position`; G_MAXUINT
 * when none did. */
static guint
retention_deletion_of(const History *history, guint16 topic, gint32 partition, gint64 position,
                      gint64 time_ns)
{
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->time_ns > time_ns)
            break;
        if (event->kind == HISTORY_EVENT_RETENTION && event->isr != 0 &&
            event->topic == topic && event->partition == partition &&
            event->offset <= position && position < event->offset_end)
            return i;
    }
    return G_MAXUINT;
}

static void
reset_example_add(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op, guint deletion)
{
    gint64 from = (gint64)op->value;
    g->public.counts.reset_skipped += (guint64)(op->offset - from);
    if (g->reset_examples->len >= w->check->options.examples_max)
        return;
    ConsumerExample e = {0};
    e.anomaly = CONSUMER_ANOMALY_COUNT;
    e.topic = op->topic;
    e.partition = op->partition;
    e.process = op->process;
    e.op = op_id;
    e.op_other = deletion;
    e.offset = op->offset;
    e.offset_other = from;
    e.value = history_op_key(w->check->history, op_id);
    e.time_ns = op->invoke_ns;
    e.time_other_ns = -1;
    e.skipped = (guint64)(op->offset - from);
    g_autofree char *who = label_of(w->check, op->process);
    g_autofree char *where = checker_partition_label(w->check->history, op->topic, op->partition);
    e.summary = g_strdup_printf(
        "%s's position %" G_GINT64_FORMAT " of %s was below the log start %" G_GUINT64_FORMAT
        " at %.3f s, after retention; auto.offset.reset moved it to %" G_GINT64_FORMAT
        ", skipping %" G_GUINT64_FORMAT " offsets",
        who, from, where, e.value, (double)op->invoke_ns / 1e9, op->offset, e.skipped);
    g_array_append_val(g->reset_examples, e);
}

/* A RESET: a jump retention caused is counted apart and the member goes on
 * from the new position; any other is left to the polls' judgement. */
static void
on_reset(Walk *w, GroupState *g, guint64 op_id, const HistoryOp *op)
{
    if (op->type != HISTORY_OK) {
        g->public.counts.reset_failures++;
        return;
    }
    g->public.counts.resets++;
    if (op->error == KAFKA_ERROR_CLIENT_LOG_TRUNCATION) {
        /* KIP-320's move back to where the logs diverge: what lies above
         * it is no longer what the member read. */
        MemberPartition *m = member_partition(w->members, op);
        m->start = op->offset;
        m->start_op = op_id;
        m->last = -1;
        m->max = -1;
        return;
    }
    if (op->value == HISTORY_RESET_NO_POSITION)
        return;
    gint64 from = (gint64)op->value;
    gint64 log_start = (gint64)history_op_key(w->check->history, op_id);
    if (op->offset <= from || from >= log_start)
        return;
    guint deletion =
        retention_deletion_of(w->check->history, op->topic, op->partition, from, op->invoke_ns);
    if (deletion == G_MAXUINT)
        return;
    reset_example_add(w, g, op_id, op, deletion);
    GroupPartition *gp = group_partition(g, op->topic, op->partition);
    if (gp->skipped == NULL)
        gp->skipped = g_array_new(FALSE, FALSE, sizeof(SkippedRange));
    SkippedRange range = {from, op->offset};
    g_array_append_val(gp->skipped, range);
    MemberPartition *m = member_partition(w->members, op);
    m->last = op->offset - 1;
    m->last_op = op_id;
}

/* TRUE when a reset caused by retention moved a member past `offset`. */
static gboolean
skipped_by_reset(const GroupPartition *gp, gint64 offset)
{
    for (guint i = 0; gp->skipped != NULL && i < gp->skipped->len; i++) {
        const SkippedRange *range = &g_array_index(gp->skipped, SkippedRange, i);
        if (range->from <= offset && offset < range->to)
            return TRUE;
    }
    return FALSE;
}

static void
walk_ops(Walk *w)
{
    const HistoryOpArray *ops = history_ops(w->check->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_SEND || op->process >= w->by_process->len)
            continue;
        GroupState *g = g_ptr_array_index(w->by_process, op->process);
        if (g == NULL)
            continue;
        guint64 op_id = (guint64)i + 1;
        switch (op->fn) {
        case HISTORY_FN_ASSIGN:
            on_assign(w, g, op_id, op);
            break;
        case HISTORY_FN_POLL:
            on_poll(w, g, op_id, op);
            break;
        case HISTORY_FN_PROCESS:
            on_process(w, g, op_id, op);
            break;
        case HISTORY_FN_COMMIT:
            on_commit(g, op_id, op);
            break;
        case HISTORY_FN_RESET:
            on_reset(w, g, op_id, op);
            break;
        case HISTORY_FN_REVOKE:
            on_revoke(w, g, op);
            break;
        default:
            break;
        }
    }
}

/* ---- lost consumption ---- */

static gint
partition_compare(gconstpointer a, gconstpointer b)
{
    const GroupPartition *x = *(GroupPartition *const *)a;
    const GroupPartition *y = *(GroupPartition *const *)b;
    return x->key < y->key ? -1 : (x->key > y->key ? 1 : 0);
}

static void
lost_example(const ConsumerCheck *check, GroupState *g, const GroupPartition *gp,
             const HistoryRecord *record, const CheckerSend *send)
{
    HistoryOp op = {0};
    op.topic = (guint16)(gp->key >> 32);
    op.partition = (gint32)(guint32)gp->key;
    op.offset = record->offset;
    op.value = record->value;
    op.invoke_ns = gp->final_ns;
    op.process = gp->final_process;
    ConsumerExample *e = example_add(check, g, CONSUMER_LOST_CONSUMPTION, &op);
    if (e == NULL)
        return;
    e->op = send->op;
    e->op_other = gp->final_op;
    e->offset_other = gp->final_offset;
    g_autofree char *where = checker_partition_label(check->history, op.topic, op.partition);
    g_autofree char *producer = label_of(check, send->process);
    e->summary = g_strdup_printf("value %" G_GUINT64_FORMAT " (offset %" G_GINT64_FORMAT
                                 " of %s, acknowledged to %s) is below group %s's final "
                                 "committed offset %" G_GINT64_FORMAT ", yet no member processed it",
                                 record->value, record->offset, where, producer, g->group,
                                 gp->final_offset);
}

static void
judge_partition(const ConsumerCheck *check, GroupState *g, const GroupPartition *gp)
{
    const CheckerPartition *cp = checker_result_partition(
        check->producer, (guint16)(gp->key >> 32), (gint32)(guint32)gp->key);
    if (cp == NULL || gp->final_offset < 0)
        return;
    gint64 from = MAX(gp->start_offset, 0);
    for (guint i = committed_lower_bound(cp, from); i < cp->records_committed; i++) {
        const HistoryRecord *record = &g_array_index(cp->records, HistoryRecord, i);
        if (record->offset >= gp->final_offset)
            break;
        if (!record_is_due(check->history, record,
                           history_process_read_committed(check->history, gp->final_process)))
            continue;
        CheckerSend send;
        if (!checker_result_send_of_value(check->producer, record->value, &send) || !acked(&send))
            continue;
        guint64 value = record->value;
        gboolean processed = g_hash_table_lookup(g->value_index, &value) != NULL;
        /* Jumped by a reset retention caused: counted in reset_skipped. */
        if (!processed && skipped_by_reset(gp, record->offset))
            continue;
        g->public.counts.judged++;
        if (!processed)
            lost_example(check, g, gp, record, &send);
    }
}

static void
judge_lost(const ConsumerCheck *check, GroupState *g)
{
    /* Collected in hash order, then sorted: the order reaches the examples. */
    g_autoptr(GPtrArray) partitions = g_ptr_array_new();
    GList *values = g_hash_table_get_values(g->partitions);
    for (GList *l = values; l != NULL; l = l->next)
        g_ptr_array_add(partitions, l->data);
    g_list_free(values);
    g_ptr_array_sort(partitions, partition_compare);
    for (guint i = 0; i < partitions->len; i++)
        judge_partition(check, g, g_ptr_array_index(partitions, i));
}

/* ---- the result ---- */

static gint
group_compare(gconstpointer a, gconstpointer b)
{
    return strcmp((*(GroupState *const *)a)->group, (*(GroupState *const *)b)->group);
}

static GroupState *
group_find(const ConsumerCheck *check, const char *group)
{
    for (guint i = 0; i < check->groups->len; i++) {
        GroupState *g = g_ptr_array_index(check->groups, i);
        if (strcmp(g->group, group) == 0)
            return g;
    }
    return NULL;
}

static void
groups_build(ConsumerCheck *check, GPtrArray *by_process)
{
    g_autoptr(GPtrArray) names = history_groups(check->history);
    for (guint i = 0; i < names->len; i++)
        g_ptr_array_add(check->groups, group_state_new(g_ptr_array_index(names, i),
                                                       check->options.latency_digits));
    g_ptr_array_sort(check->groups, group_compare);
    guint32 bound = history_process_group_bound(check->history);
    g_ptr_array_set_size(by_process, bound);
    for (guint32 p = 0; p < bound; p++) {
        const char *name = history_process_group(check->history, p);
        GroupState *g = name != NULL ? group_find(check, name) : NULL;
        g_ptr_array_index(by_process, p) = g;
        if (g != NULL)
            g->public.counts.members++;
    }
}

ConsumerCheck *
checker_consumer_run(const History *history, const CheckerResult *producer,
                     const CheckerOptions *options)
{
    KSIM_ASSERT(history != NULL);
    KSIM_ASSERT(producer != NULL);
    KSIM_ASSERT(checker_result_history(producer) == history);
    ConsumerCheck *check = g_new0(ConsumerCheck, 1);
    check->history = history;
    check->producer = producer;
    if (options != NULL)
        check->options = *options;
    else
        checker_options_init(&check->options);
    check->groups = g_ptr_array_new_with_free_func(group_state_free);
    check->e2e_all = stats_histogram_new(check->options.latency_digits);
    g_autoptr(GPtrArray) by_process = g_ptr_array_new();
    groups_build(check, by_process);
    Walk walk = {check, by_process, g_hash_table_new_full(member_hash, member_equal, g_free, NULL),
                 g_array_new(FALSE, TRUE, sizeof(MemberOwnership))};
    walk_ops(&walk);
    g_hash_table_destroy(walk.members);
    g_array_free(walk.ownership, TRUE);
    for (guint i = 0; i < check->groups->len; i++) {
        GroupState *g = g_ptr_array_index(check->groups, i);
        judge_lost(check, g);
        g->public.group = g->group;
        g->public.counts.unique = g->values->len;
        g->public.e2e = g->e2e;
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
            g->public.examples[a] = g->examples[a];
        g->public.reset_examples = g->reset_examples;
    }
    return check;
}

void
checker_consumer_free(ConsumerCheck *check)
{
    if (check == NULL)
        return;
    g_ptr_array_free(check->groups, TRUE);
    stats_histogram_free(check->e2e_all);
    g_free(check);
}

guint
checker_consumer_group_count(const ConsumerCheck *check)
{
    return check->groups->len;
}

const ConsumerGroupResult *
checker_consumer_group(const ConsumerCheck *check, guint index)
{
    KSIM_ASSERT(index < check->groups->len);
    const GroupState *g = g_ptr_array_index(check->groups, index);
    return &g->public;
}

const ConsumerGroupResult *
checker_consumer_find_group(const ConsumerCheck *check, const char *group)
{
    const GroupState *g = group_find(check, group);
    return g != NULL ? &g->public : NULL;
}

void
checker_consumer_totals(const ConsumerCheck *check, ConsumerCounts *out)
{
    memset(out, 0, sizeof *out);
    for (guint i = 0; i < check->groups->len; i++) {
        const ConsumerCounts *c = &((const GroupState *)g_ptr_array_index(check->groups, i))->public.counts;
        out->members += c->members;
        out->polled += c->polled;
        out->processed += c->processed;
        out->unique += c->unique;
        out->delivered += c->delivered;
        out->judged += c->judged;
        out->commits_ok += c->commits_ok;
        out->commits_failed += c->commits_failed;
        out->commits_unknown += c->commits_unknown;
        out->resets += c->resets;
        out->reset_skipped += c->reset_skipped;
        out->reset_failures += c->reset_failures;
        out->revocations += c->revocations;
        out->pauses += c->pauses;
        out->pause_ns_total += c->pause_ns_total;
        out->pause_ns_max = MAX(out->pause_ns_max, c->pause_ns_max);
        out->member_idle_ns_total += c->member_idle_ns_total;
        out->member_idle_ns_max = MAX(out->member_idle_ns_max, c->member_idle_ns_max);
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++)
            out->anomalies[a] += c->anomalies[a];
    }
}

const StatsHistogram *
checker_consumer_e2e_all(const ConsumerCheck *check)
{
    return check->e2e_all;
}

const History *
checker_consumer_history(const ConsumerCheck *check)
{
    return check->history;
}

const CheckerResult *
checker_consumer_producer(const ConsumerCheck *check)
{
    return check->producer;
}

void
checker_consumer_check_invariants(const ConsumerCheck *check)
{
    gint64 e2e_total = 0;
    for (guint i = 0; i < check->groups->len; i++) {
        const GroupState *g = g_ptr_array_index(check->groups, i);
        const ConsumerCounts *c = &g->public.counts;
        if (i > 0)
            KSIM_ASSERT(strcmp(((const GroupState *)g_ptr_array_index(check->groups, i - 1))->group,
                               g->group) < 0);
        KSIM_ASSERT(c->unique <= c->processed);
        KSIM_ASSERT(c->delivered <= c->unique);
        KSIM_ASSERT(c->anomalies[CONSUMER_DUPLICATE_CONSUMPTION] <= c->unique);
        KSIM_ASSERT(c->anomalies[CONSUMER_LOST_CONSUMPTION] <= c->judged);
        for (guint a = 0; a < CONSUMER_ANOMALY_COUNT; a++) {
            KSIM_ASSERT(g->examples[a]->len <= check->options.examples_max);
            KSIM_ASSERT(g->examples[a]->len <= c->anomalies[a]);
        }
        KSIM_ASSERT(g->reset_examples->len <= check->options.examples_max);
        for (guint r = 0; r < g->reset_examples->len; r++) {
            const ConsumerExample *e = &g_array_index(g->reset_examples, ConsumerExample, r);
            const GArray *events = history_events(check->history);
            KSIM_ASSERT(e->op_other < events->len);
            KSIM_ASSERT(g_array_index(events, HistoryEvent, e->op_other).kind ==
                        HISTORY_EVENT_RETENTION);
            KSIM_ASSERT(e->offset > e->offset_other);
        }
        e2e_total += stats_histogram_count(g->e2e);
    }
    KSIM_ASSERT(stats_histogram_count(check->e2e_all) == e2e_total);
}
