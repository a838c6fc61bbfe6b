/*
 * explain_txn: the chain of events behind a transactional or pipeline
 * example (see explain.h), read from the history's ops and NODE events.
 */
#include "explain.h"

#include "kafka_error.h"
#include "sim_assert.h"

#include <string.h>

#define SENDS_LISTED_MAX 4

static double
seconds(gint64 ns)
{
    return (double)ns / 1e9;
}

static void
add(GPtrArray *chain, char *sentence)
{
    if (chain->len < EXPLAIN_STEPS_MAX)
        g_ptr_array_add(chain, sentence);
    else
        g_free(sentence);
}

static const char *
completion_text(const HistoryOp *op)
{
    switch (op->type) {
    case HISTORY_OK:
        return "completed OK";
    case HISTORY_FAIL:
        return "failed";
    case HISTORY_INFO:
        return "ended with an unknown outcome";
    default:
        return "never completed (the process crashed or the run ended)";
    }
}

/* The transaction's story: begin, sends, end. */
static void
explain_transaction(GPtrArray *chain, const TxnCheck *check, gint32 index)
{
    if (index < 0)
        return;
    const History *history = checker_txn_history(check);
    const TxnInfo *txn = checker_txn_transaction(check, (guint)index);
    g_autofree char *who = checker_process_label(history, txn->process);
    const char *id = history_process_transactional_id(history, txn->process);
    add(chain, g_strdup_printf("%.3f s: %s (transactional.id %s) began transaction %" G_GUINT64_FORMAT
                               " (op %" G_GUINT64_FORMAT ").",
                               seconds(txn->begin_ns), who, id != NULL ? id : "?", txn->number,
                               txn->begin_op));
    GString *sends = g_string_new(NULL);
    for (guint i = 0; i < txn->sends->len && i < SENDS_LISTED_MAX; i++) {
        guint64 op_id = g_array_index(txn->sends, guint64, i);
        const HistoryOp *op = history_op(history, op_id);
        g_autofree char *tp = op->partition >= 0
                                  ? checker_partition_label(history, op->topic, op->partition)
                                  : g_strdup(history_topic_name(history, op->topic));
        g_string_append_printf(sends, "%svalue %" G_GUINT64_FORMAT " to %s (op %" G_GUINT64_FORMAT
                               ", %s)",
                               i > 0 ? "; " : "", op->value, tp, op_id,
                               op->type == HISTORY_OK ? "acked" : completion_text(op));
    }
    if (txn->sends->len > SENDS_LISTED_MAX)
        g_string_append_printf(sends, "; and %u more", txn->sends->len - SENDS_LISTED_MAX);
    add(chain, g_strdup_printf("It sent %u record%s: %s.", txn->sends->len,
                               txn->sends->len == 1 ? "" : "s",
                               txn->sends->len > 0 ? sends->str : "none"));
    g_string_free(sends, TRUE);
    if (txn->end_op == 0) {
        add(chain, g_strdup_printf("It never called commitTransaction or abortTransaction: the "
                                   "coordinator aborts it (on the writer's next "
                                   "initTransactions, a newer instance's, or its timeout)."));
        return;
    }
    const HistoryOp *end = history_op(history, txn->end_op);
    g_autofree char *error =
        end->error != 0 ? g_strdup_printf(" (%s)", kafka_error_name((KafkaError)end->error))
                        : g_strdup("");
    g_autofree char *when = end->complete_ns >= 0
                                ? g_strdup_printf(" at %.3f s", seconds(end->complete_ns))
                                : g_strdup("");
    add(chain, g_strdup_printf("%.3f s: %s called %s (op %" G_GUINT64_FORMAT "), which %s%s%s.",
                               seconds(end->invoke_ns), who,
                               end->fn == HISTORY_FN_TXN_COMMIT ? "commitTransaction"
                                                                : "abortTransaction",
                               txn->end_op, completion_text(end), error, when));
    add(chain, g_strdup_printf("Its fate as the client knows it: %s.",
                               checker_txn_fate_name(txn->fate)));
}

/* NODE events about the processes' nodes between `from_ns` and `to_ns`. */
static void
explain_nodes(GPtrArray *chain, const History *history, const guint32 *processes, guint n,
              gint64 from_ns, gint64 to_ns)
{
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind != HISTORY_EVENT_NODE || event->text == NULL ||
            event->time_ns < from_ns || event->time_ns > to_ns)
            continue;
        for (guint k = 0; k < n; k++) {
            const char *name = history_process_name(history, processes[k]);
            if (name != NULL && strstr(event->text, name) != NULL) {
                add(chain, g_strdup_printf("%.3f s: %s.", seconds(event->time_ns), event->text));
                break;
            }
        }
    }
}

static void
explain_read(GPtrArray *chain, const TxnCheck *check, const TxnExample *e)
{
    const History *history = checker_txn_history(check);
    g_autofree char *reader = checker_process_label(history, e->process);
    g_autofree char *tp = checker_partition_label(history, e->topic, e->partition);
    add(chain, g_strdup_printf("%.3f s: %s, reading with isolation.level=%s, polled value %"
                               G_GUINT64_FORMAT " at %s offset %" G_GINT64_FORMAT " (op %"
                               G_GUINT64_FORMAT ").",
                               seconds(e->time_ns), reader,
                               history_process_read_committed(history, e->process)
                                   ? "read_committed"
                                   : "read_uncommitted",
                               e->value, tp, e->offset, e->op));
}

static void
explain_zombie(GPtrArray *chain, const TxnCheck *check, const TxnExample *e)
{
    const History *history = checker_txn_history(check);
    const HistoryOp *init = history_op(history, e->op_other);
    g_autofree char *successor = checker_process_label(history, e->process_other);
    g_autofree char *zombie = checker_process_label(history, e->process);
    add(chain, g_strdup_printf("%.3f s: %s completed initTransactions (op %" G_GUINT64_FORMAT
                               ") with the same transactional.id: the coordinator bumped the "
                               "epoch, so %s is a zombie from then on.",
                               seconds(init->complete_ns), successor, e->op_other, zombie));
    const HistoryOp *send = history_op(history, e->op);
    add(chain, g_strdup_printf("%.3f s: the zombie %s sent value %" G_GUINT64_FORMAT " (op %"
                               G_GUINT64_FORMAT "), which %s.",
                               seconds(send->invoke_ns), zombie, send->value, e->op,
                               completion_text(send)));
}

static void
explain_pipeline(GPtrArray *chain, const TxnCheck *check, const TxnExample *e)
{
    const History *history = checker_txn_history(check);
    g_autofree char *member = checker_process_label(history, e->process);
    g_autofree char *tp = checker_partition_label(history, e->topic, e->partition);
    add(chain, g_strdup_printf("%.3f s: %s of pipeline %s polled input value %" G_GUINT64_FORMAT
                               " at %s offset %" G_GINT64_FORMAT " (op %" G_GUINT64_FORMAT ").",
                               seconds(e->time_ns), member, e->pipeline, e->value, tp, e->offset,
                               e->op));
    const HistoryOpArray *ops = history_ops(history);
    guint listed = 0;
    for (guint i = 0; i < ops->len && listed < 2 * SENDS_LISTED_MAX; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        const char *group = op->fn == HISTORY_FN_POLL
                                ? history_process_group(history, op->process)
                                : NULL;
        /* Only the pipeline's own members: another group reading the input
         * is no repetition. */
        if (op->fn == HISTORY_FN_POLL && op->value == e->value && (guint64)i + 1 != e->op &&
            group != NULL && strcmp(group, e->pipeline) == 0) {
            g_autofree char *who = checker_process_label(history, op->process);
            add(chain, g_strdup_printf("%.3f s: %s polled the input again (op %u): it was "
                                       "consumed once more.",
                                       seconds(op->invoke_ns), who, i + 1));
            listed++;
        }
        if (op->fn != HISTORY_FN_SEND || history_op_key(history, (guint64)i + 1) != e->value)
            continue;
        const char *pipeline = history_process_pipeline(history, op->process);
        if (pipeline == NULL || strcmp(pipeline, e->pipeline) != 0)
            continue;
        g_autofree char *who = checker_process_label(history, op->process);
        add(chain, g_strdup_printf("%.3f s: %s sent output value %" G_GUINT64_FORMAT
                                   " for it (op %u), which %s.",
                                   seconds(op->invoke_ns), who, op->value, i + 1,
                                   completion_text(op)));
        listed++;
    }
    if (e->anomaly == TXN_PIPELINE_LOST)
        add(chain, g_strdup_printf("The group's committed position in %s is %" G_GINT64_FORMAT
                                   ", past the input: it will not be read again, and none of "
                                   "its outputs is visible.",
                                   tp, e->offset_other + 1));
    else
        add(chain, g_strdup_printf("%u of its outputs are visible to a read_committed reader "
                                   "(in the committed log, and not in an aborted transaction).",
                                   e->count));
}

GPtrArray *
explain_txn_example(const TxnCheck *check, const TxnExample *example)
{
    GPtrArray *chain = g_ptr_array_new_with_free_func(g_free);
    const History *history = checker_txn_history(check);
    switch (example->anomaly) {
    case TXN_G1A:
    case TXN_UNCOMMITTED_READ:
        explain_transaction(chain, check, example->txn);
        explain_read(chain, check, example);
        break;
    case TXN_ZOMBIE_WRITE:
        explain_zombie(chain, check, example);
        explain_transaction(chain, check, example->txn);
        break;
    case TXN_PARTIAL_COMMIT:
    case TXN_INT_NONMONOTONIC_SEND:
    case TXN_INT_SEND_SKIP:
        explain_transaction(chain, check, example->txn);
        break;
    case TXN_PIPELINE_DUPLICATE:
    case TXN_PIPELINE_LOST:
        explain_pipeline(chain, check, example);
        break;
    case TXN_ANOMALY_COUNT:
        break;
    }
    if (example->txn >= 0) {
        const TxnInfo *txn = checker_txn_transaction(check, (guint)example->txn);
        guint32 processes[] = {txn->process, example->process, example->process_other};
        gint64 to = MAX(MAX(txn->end_complete_ns, txn->end_invoke_ns), example->time_ns);
        explain_nodes(chain, history, processes, G_N_ELEMENTS(processes), txn->begin_ns,
                      to >= 0 ? to : G_MAXINT64);
    }
    add(chain, g_strdup_printf("So: %s.", example->summary));
    return chain;
}
