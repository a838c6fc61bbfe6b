/*
 * explain_consumer: the chains behind consumer group examples (see
 * explain_consumer_example in explain.h).
 *
 * A chain is built from timed steps gathered from the history — the send,
 * the group members' polls, processings, assignments and commits of the
 * record's partition, the faults that hit the members, and the partition's
 * elections and truncations — then sorted by (time, order gathered), capped
 * at EXPLAIN_STEPS_MAX, and closed with a conclusion. Each example costs one
 * pass over the operations and the partition's and cluster's events.
 */
#include "explain.h"

#include <string.h>

#include "sim_assert.h"

typedef struct {
    gint64 time_ns;
    guint seq;
    char *text;
} Step;

typedef struct {
    const Explainer *explainer;
    const ConsumerCheck *check;
    const History *history;
    const ConsumerGroupResult *group;
    const ConsumerExample *example;
    GArray *steps; /* Step */
    gint64 from_ns, to_ns; /* the window in which faults and partition events are told */
} ConsumerChain;

static void
step_clear(gpointer data)
{
    g_free(((Step *)data)->text);
}

static void step_add(ConsumerChain *chain, gint64 time_ns, const char *format, ...)
    G_GNUC_PRINTF(3, 4);

static void
step_add(ConsumerChain *chain, gint64 time_ns, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *text = g_strdup_vprintf(format, args);
    va_end(args);
    Step step = {time_ns, chain->steps->len, g_strdup_printf("At %.3f s, %s.", time_ns / 1e9, text)};
    g_array_append_val(chain->steps, step);
}

static gint
step_compare(gconstpointer a, gconstpointer b)
{
    const Step *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq ? 1 : 0);
}

static gboolean
in_group(const ConsumerChain *chain, guint32 process)
{
    const char *group = history_process_group(chain->history, process);
    return group != NULL && strcmp(group, chain->group->group) == 0;
}

static char *
who(const ConsumerChain *chain, guint32 process)
{
    return checker_process_label(chain->history, process);
}

static const char *
outcome_word(guint8 type)
{
    switch (type) {
    case HISTORY_OK:
        return "OK";
    case HISTORY_FAIL:
        return "failed";
    case HISTORY_INFO:
        return "outcome unknown";
    default:
        return "never answered";
    }
}

/* ---- steps from the operations ---- */

static void
send_step(ConsumerChain *chain)
{
    CheckerSend send;
    const CheckerResult *producer = checker_consumer_producer(chain->check);
    if (!checker_result_send_of_value(producer, chain->example->value, &send))
        return;
    g_autofree char *producer_name = who(chain, send.process);
    if (send.complete_ns >= 0 && (send.outcome == CHECKER_SEND_OK || send.outcome == CHECKER_SEND_SENT))
        step_add(chain, send.invoke_ns,
                 "%s sent value %" G_GUINT64_FORMAT ", acknowledged at %.3f s", producer_name,
                 send.value, send.complete_ns / 1e9);
    else
        step_add(chain, send.invoke_ns, "%s sent value %" G_GUINT64_FORMAT, producer_name,
                 send.value);
    chain->from_ns = MIN(chain->from_ns, send.invoke_ns);
}

static void
assign_step(ConsumerChain *chain, const HistoryOp *op, const char *remark)
{
    g_autofree char *name = who(chain, op->process);
    step_add(chain, op->invoke_ns, "%s was assigned the partition, starting at offset %" G_GINT64_FORMAT "%s",
             name, op->offset, remark);
}

static void
commit_step(ConsumerChain *chain, const HistoryOp *op, const char *remark)
{
    g_autofree char *name = who(chain, op->process);
    g_autofree char *done =
        op->complete_ns >= 0 ? g_strdup_printf(" at %.3f s", op->complete_ns / 1e9) : g_strdup("");
    step_add(chain, op->invoke_ns, "%s committed offset %" G_GINT64_FORMAT " (%s%s)%s", name,
             op->offset, outcome_word(op->type), done, remark);
}

/* The ops of the example's partition by group members that tell its story:
 * the polls and processings of the value (or the two polls compared), and
 * for lost and duplicate consumption the commit and assignment that let the
 * group's position pass the record, or fall back below it. */
typedef struct {
    const HistoryOp *first_poll;   /* of the value */
    const HistoryOp *commit_past;  /* lost: first OK commit past the record after first_poll */
    const HistoryOp *assign_past;  /* lost: first assignment past the record after first_poll */
    const HistoryOp *reassign;     /* duplicate: the second reader's last assignment before it
                                    * polled the value again */
    const HistoryOp *commit_before; /* duplicate: the group's last OK commit of the partition
                                     * completed before `reassign` */
} Story;

static void
story_scan(ConsumerChain *chain, Story *story)
{
    const HistoryOpArray *ops = history_ops(chain->history);
    const ConsumerExample *e = chain->example;
    const HistoryOp *last_commit = NULL;
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        guint64 op_id = (guint64)i + 1;
        if (op->fn == HISTORY_FN_SEND || op->topic != e->topic || op->partition != e->partition ||
            !in_group(chain, op->process))
            continue;
        gboolean value_op = e->anomaly != CONSUMER_POLL_SKIP &&
                            e->anomaly != CONSUMER_NONMONOTONIC_POLL && op->value == e->value;
        if (op->fn == HISTORY_FN_POLL && (value_op || op_id == e->op || op_id == e->op_other)) {
            g_autofree char *name = who(chain, op->process);
            step_add(chain, op->invoke_ns,
                     "%s polled offset %" G_GINT64_FORMAT " (value %" G_GUINT64_FORMAT ")", name,
                     op->offset, op->value);
            if (value_op && story->first_poll == NULL)
                story->first_poll = op;
        }
        if (op->fn == HISTORY_FN_PROCESS && value_op) {
            g_autofree char *name = who(chain, op->process);
            step_add(chain, op->invoke_ns, "%s finished processing value %" G_GUINT64_FORMAT,
                     name, op->value);
        }
        if (op->fn == HISTORY_FN_ASSIGN && op_id == e->op_other)
            assign_step(chain, op, "");
        if (e->anomaly == CONSUMER_LOST_CONSUMPTION && story->first_poll != NULL &&
            op->offset > e->offset) {
            if (op->fn == HISTORY_FN_COMMIT && op->type == HISTORY_OK && story->commit_past == NULL)
                story->commit_past = op;
            if (op->fn == HISTORY_FN_ASSIGN && story->assign_past == NULL)
                story->assign_past = op;
        }
        if (e->anomaly == CONSUMER_DUPLICATE_CONSUMPTION && op->invoke_ns <= e->time_ns) {
            if (op->fn == HISTORY_FN_COMMIT && op->type == HISTORY_OK &&
                (last_commit == NULL || op->complete_ns >= last_commit->complete_ns))
                last_commit = op;
            if (op->fn == HISTORY_FN_ASSIGN && op->process == e->process &&
                op->offset <= e->offset) {
                story->reassign = op;
                story->commit_before =
                    last_commit != NULL && last_commit->complete_ns <= op->invoke_ns ? last_commit
                                                                                     : NULL;
            }
        }
    }
}

static void
ops_steps(ConsumerChain *chain)
{
    Story story = {0};
    story_scan(chain, &story);
    const ConsumerExample *e = chain->example;
    if (story.commit_past != NULL)
        commit_step(chain, story.commit_past,
                    story.commit_past->offset > e->offset ? " — past the record" : "");
    if (story.assign_past != NULL)
        assign_step(chain, story.assign_past, " — past the record");
    if (e->anomaly == CONSUMER_LOST_CONSUMPTION && e->op_other > 0 &&
        history_op(chain->history, e->op_other) != story.commit_past)
        commit_step(chain, history_op(chain->history, e->op_other), " — the group's final commit");
    if (story.commit_before != NULL)
        commit_step(chain, story.commit_before, " — the group's last commit before the record "
                                                "was read again, not past it");
    if (story.reassign != NULL)
        assign_step(chain, story.reassign,
                    " — at or below the record's offset, so it reads the record again");
    if (story.first_poll != NULL)
        chain->from_ns = MIN(chain->from_ns, story.first_poll->invoke_ns);
    /* A lost record is out of reach once an assignment starts past it: the
     * faults that matter are those up to then, not to the final commit. */
    if (e->anomaly == CONSUMER_LOST_CONSUMPTION && story.assign_past != NULL)
        chain->to_ns = MIN(chain->to_ns, story.assign_past->invoke_ns);
}

/* ---- steps from the events ---- */

/* The event's text without the "12.345 s: " prefix the runner writes. */
static const char *
event_text(const char *text)
{
    const char *colon = strstr(text, " s: ");
    return colon != NULL && colon - text < 24 ? colon + 4 : text;
}

static gboolean
names_member(const ConsumerChain *chain, const char *text)
{
    for (guint32 p = 0; p < history_process_group_bound(chain->history); p++) {
        const char *name = history_process_name(chain->history, p);
        if (name != NULL && in_group(chain, p) && strstr(text, name) != NULL)
            return TRUE;
    }
    return FALSE;
}

static void
events_steps(ConsumerChain *chain)
{
    const GArray *events = history_events(chain->history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *ev = &g_array_index(events, HistoryEvent, i);
        if (ev->time_ns < chain->from_ns || ev->time_ns > chain->to_ns || ev->text == NULL)
            continue;
        gboolean member_fault = (ev->kind == HISTORY_EVENT_FAULT || ev->kind == HISTORY_EVENT_NODE) &&
                                names_member(chain, ev->text);
        gboolean partition = (ev->kind == HISTORY_EVENT_ELECTED ||
                              ev->kind == HISTORY_EVENT_TRUNCATED) &&
                             ev->topic == chain->example->topic &&
                             ev->partition == chain->example->partition;
        if (member_fault || partition)
            step_add(chain, ev->time_ns, "%s", event_text(ev->text));
    }
}

/* ---- conclusions ---- */

static char *
conclusion(const ConsumerChain *chain)
{
    const ConsumerExample *e = chain->example;
    g_autofree char *where = checker_partition_label(chain->history, e->topic, e->partition);
    const char *group = chain->group->group;
    switch (e->anomaly) {
    case CONSUMER_LOST_CONSUMPTION:
        return g_strdup_printf("At the end, group %s's committed offset of %s is %" G_GINT64_FORMAT
                               ": offset %" G_GINT64_FORMAT " lies below it, so the group will not "
                               "read it again, and no member processed value %" G_GUINT64_FORMAT
                               " — a commit moved past the record before its processing ended.",
                               group, where, e->offset_other, e->offset, e->value);
    case CONSUMER_DUPLICATE_CONSUMPTION:
        return g_strdup_printf("Group %s processed value %" G_GUINT64_FORMAT " (offset %" G_GINT64_FORMAT
                               " of %s) more than once: its committed offset was not past the "
                               "record when another assignment started reading the partition.",
                               group, e->value, e->offset, where);
    case CONSUMER_POLL_SKIP:
        return g_strdup_printf("Within one assignment the poll jumped over %" G_GUINT64_FORMAT
                               " offset%s of %s that the committed log holds.",
                               e->skipped, e->skipped == 1 ? "" : "s", where);
    case CONSUMER_NONMONOTONIC_POLL:
        return g_strdup_printf("Within one assignment the member read offset %" G_GINT64_FORMAT
                               " of %s after offset %" G_GINT64_FORMAT
                               ": its position moved back (an out-of-range reset after the log "
                               "was truncated, or a record read twice).",
                               e->offset, where, e->offset_other);
    case CONSUMER_TRUNCATED_READ:
        return g_strdup_printf("The member read a record that no longer exists: after the poll, "
                               "offset %" G_GINT64_FORMAT " of %s was truncated away (a leader "
                               "without it was elected: an unclean election, or the HW design's "
                               "truncation). A consumer that validates its position after the "
                               "leader change (KIP-320, ksim.consumer.validate.positions) finds "
                               "the truncation and moves back to where the logs diverge, so it "
                               "reads what replaced the record, but cannot unread it.",
                               e->offset, where);
    case CONSUMER_ANOMALY_COUNT:
        break;
    }
    KSIM_ASSERT(!"unknown consumer anomaly");
    return NULL;
}

static void
window_set(ConsumerChain *chain)
{
    const ConsumerExample *e = chain->example;
    const HistoryOp *other = e->op_other > 0 && e->anomaly != CONSUMER_LOST_CONSUMPTION
                                 ? history_op(chain->history, e->op_other)
                                 : NULL;
    chain->from_ns = other != NULL ? other->invoke_ns : e->time_ns;
    chain->to_ns = e->time_ns;
    if (e->anomaly == CONSUMER_LOST_CONSUMPTION) {
        const HistoryOp *commit = e->op_other > 0 ? history_op(chain->history, e->op_other) : NULL;
        chain->to_ns = commit != NULL && commit->complete_ns >= 0 ? commit->complete_ns : e->time_ns;
        chain->from_ns = G_MAXINT64;
    }
    if (e->anomaly == CONSUMER_DUPLICATE_CONSUMPTION)
        chain->from_ns = G_MAXINT64;
}

GPtrArray *
explain_consumer_example(const Explainer *explainer, const ConsumerCheck *check,
                         const ConsumerGroupResult *group, const ConsumerExample *example)
{
    KSIM_ASSERT(check != NULL && group != NULL && example != NULL);
    ConsumerChain chain = {explainer, check, checker_consumer_history(check), group, example,
                           g_array_new(FALSE, FALSE, sizeof(Step)), 0, 0};
    g_array_set_clear_func(chain.steps, step_clear);
    window_set(&chain);
    if (example->anomaly == CONSUMER_LOST_CONSUMPTION ||
        example->anomaly == CONSUMER_DUPLICATE_CONSUMPTION)
        send_step(&chain);
    if (chain.from_ns == G_MAXINT64)
        chain.from_ns = example->time_other_ns >= 0 ? example->time_other_ns : example->time_ns;
    ops_steps(&chain);
    events_steps(&chain);
    g_array_sort(chain.steps, step_compare);
    GPtrArray *sentences = g_ptr_array_new_with_free_func(g_free);
    guint shown = MIN(chain.steps->len, EXPLAIN_STEPS_MAX - 2);
    for (guint i = 0; i < shown; i++)
        g_ptr_array_add(sentences, g_strdup(g_array_index(chain.steps, Step, i).text));
    if (chain.steps->len > shown)
        g_ptr_array_add(sentences, g_strdup_printf("(%u later steps left out.)",
                                                   chain.steps->len - shown));
    g_ptr_array_add(sentences, conclusion(&chain));
    g_array_free(chain.steps, TRUE);
    return sentences;
}

GPtrArray *
explain_consumer_reset(const ConsumerCheck *check, const ConsumerExample *example)
{
    KSIM_ASSERT(check != NULL && example != NULL);
    const History *history = checker_consumer_history(check);
    const GArray *events = history_events(history);
    KSIM_ASSERT(example->op_other < events->len);
    const HistoryEvent *deletion = &g_array_index(events, HistoryEvent, example->op_other);
    KSIM_ASSERT(deletion->kind == HISTORY_EVENT_RETENTION);
    g_autofree char *who = checker_process_label(history, example->process);
    g_autofree char *where = checker_partition_label(history, example->topic, example->partition);
    GPtrArray *sentences = g_ptr_array_new_with_free_func(g_free);
    g_ptr_array_add(sentences, g_strdup_printf("At %.3f s, %s — deleting offset %" G_GINT64_FORMAT
                                               ", %s's position.",
                                               deletion->time_ns / 1e9, deletion->text, example->offset_other,
                                               who));
    g_ptr_array_add(sentences,
                    g_strdup_printf("At %.3f s, the leader answered %s's fetch of %s at offset "
                                    "%" G_GINT64_FORMAT " with OFFSET_OUT_OF_RANGE: its log "
                                    "started at %" G_GUINT64_FORMAT ".",
                                    example->time_ns / 1e9, who, where, example->offset_other,
                                    example->value));
    const char *target = (guint64)example->offset == example->value
                             ? "the log start (auto.offset.reset=earliest)"
                             : "the high watermark (auto.offset.reset=latest)";
    g_ptr_array_add(sentences,
                    g_strdup_printf("The consumer moved its position to %" G_GINT64_FORMAT
                                    ", %s, skipping %" G_GUINT64_FORMAT " offsets: retention "
                                    "deleted the records it had not read yet, so they are "
                                    "skipped by the reset (reset_skipped), not lost or skipped "
                                    "by the consumer.",
                                    example->offset, target, example->skipped));
    return sentences;
}
