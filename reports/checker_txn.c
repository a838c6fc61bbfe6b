/*
 * checker_txn: transactions' and pipelines' verdicts (see checker_txn.h).
 *
 * Passes: (1) the ops in invocation order build the transactions, assign
 * sends and TXN_OFFSETS to them and collect the successful TXN_INITs;
 * (2) the fates are settled and the transactions' own writes judged
 * (partial commit in the logs, internal order, zombies); (3) the polls are
 * judged against the fates; (4) the pipelines.
 *
 * Invariants (checker_txn_check_invariants):
 *  1. Every transaction's sends are sends of its process, in op order, and
 *     op_txn maps each to it.
 *  2. fates[] sum to transactions; examples per anomaly <= examples_max and
 *     <= its count.
 *  3. Pipelines are sorted by group id.
 */
#include "checker_txn.h"

#include "kafka_error.h"
#include "sim_assert.h"

#include <string.h>

/* int_send_skip looks at most this many offsets between two sends. */
#define SKIP_SCAN_MAX 100000
#define PROCESSES_MAX (1u << 24)

typedef struct {
    guint32 process;
    gint64 complete_ns;
    guint64 op;
    const char *id; /* transactional.id, the history's string */
} InitRow;

typedef struct {
    gint32 txn;
    guint16 topic;
    gint32 partition;
    gint64 offset;
} OffsetsRow;

struct TxnCheck {
    const History *history;
    const CheckerResult *producer;
    guint examples_max;
    TxnCounts counts;
    GArray *txns;        /* TxnInfo */
    GHashTable *op_txn;  /* send op id -> txn index + 1 */
    GArray *inits;       /* InitRow, sorted by (complete_ns, op) */
    GArray *offsets;     /* OffsetsRow */
    GHashTable *zombie_seen; /* send op ids counted as zombie_write */
    GArray *examples[TXN_ANOMALY_COUNT];
    GArray *pipelines; /* TxnPipelineCounts */
};

static const char *const ANOMALY_NAMES[TXN_ANOMALY_COUNT] = {
    [TXN_G1A] = "G1a",
    [TXN_UNCOMMITTED_READ] = "uncommitted_read",
    [TXN_PARTIAL_COMMIT] = "partial_commit",
    [TXN_ZOMBIE_WRITE] = "zombie_write",
    [TXN_INT_NONMONOTONIC_SEND] = "int_nonmonotonic_send",
    [TXN_INT_SEND_SKIP] = "int_send_skip",
    [TXN_PIPELINE_DUPLICATE] = "pipeline_duplicate",
    [TXN_PIPELINE_LOST] = "pipeline_lost",
};

static const char *const FATE_NAMES[TXN_FATE_COUNT] = {
    [TXN_FATE_COMMITTED] = "committed",
    [TXN_FATE_ABORTED] = "aborted",
    [TXN_FATE_UNKNOWN] = "unknown",
    [TXN_FATE_UNENDED] = "unended",
};

const char *
checker_txn_anomaly_name(TxnAnomaly anomaly)
{
    KSIM_ASSERT((guint)anomaly < TXN_ANOMALY_COUNT);
    return ANOMALY_NAMES[anomaly];
}

const char *
checker_txn_fate_name(TxnFate fate)
{
    KSIM_ASSERT((guint)fate < TXN_FATE_COUNT);
    return FATE_NAMES[fate];
}

/* ---- examples ---- */

static void
example_clear(gpointer data)
{
    TxnExample *example = data;
    g_free(example->summary);
}

static char *
label(const TxnCheck *check, guint32 process)
{
    return checker_process_label(check->history, process);
}

/* Counts `example` and keeps it if there is room; takes its summary. */
static void
found(TxnCheck *check, TxnExample *example)
{
    check->counts.anomalies[example->anomaly]++;
    GArray *examples = check->examples[example->anomaly];
    if (examples->len < check->examples_max) {
        g_array_append_val(examples, *example);
        return;
    }
    g_free(example->summary);
}

static TxnExample
example_new(TxnAnomaly anomaly)
{
    TxnExample e = {0};
    e.anomaly = anomaly;
    e.offset = -1;
    e.offset_other = -1;
    e.partition = -1;
    e.time_ns = -1;
    e.txn = -1;
    return e;
}

static const TxnInfo *
txn_at(const TxnCheck *check, gint32 index)
{
    KSIM_ASSERT(index >= 0 && (guint)index < check->txns->len);
    return &g_array_index(check->txns, TxnInfo, index);
}

/* The index of the transaction of send `op`, or -1. */
static gint32
txn_of_send(const TxnCheck *check, guint64 op)
{
    gpointer found_index = g_hash_table_lookup(check->op_txn, GSIZE_TO_POINTER((gsize)op));
    return found_index == NULL ? -1 : (gint32)(GPOINTER_TO_SIZE(found_index) - 1);
}

/* ---- pass 1: transactions ---- */

typedef struct {
    GArray *open; /* gint32 by process: the open transaction, -1 none */
} Pass1;

static gint32 *
open_slot(Pass1 *p, guint32 process)
{
    KSIM_ASSERT(process < PROCESSES_MAX);
    while (p->open->len <= process) {
        gint32 none = -1;
        g_array_append_val(p->open, none);
    }
    return &g_array_index(p->open, gint32, process);
}

static void
on_begin(TxnCheck *check, Pass1 *p, guint64 op_id, const HistoryOp *op)
{
    gint32 *open = open_slot(p, op->process);
    if (op->type != HISTORY_OK) {
        *open = -1;
        return;
    }
    TxnInfo txn = {0};
    txn.process = op->process;
    txn.number = op->value;
    txn.begin_op = op_id;
    txn.begin_ns = op->invoke_ns;
    txn.end_invoke_ns = -1;
    txn.end_complete_ns = -1;
    txn.fate = TXN_FATE_UNENDED;
    txn.sends = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_array_append_val(check->txns, txn);
    *open = (gint32)check->txns->len - 1;
}

static gboolean
is_fencing(gint32 error)
{
    return error == KAFKA_ERROR_PRODUCER_FENCED || error == KAFKA_ERROR_INVALID_PRODUCER_EPOCH ||
           error == KAFKA_ERROR_INVALID_TXN_STATE ||
           error == KAFKA_ERROR_INVALID_PRODUCER_ID_MAPPING;
}

static TxnFate
fate_of_end(const HistoryOp *end)
{
    if (end->fn == HISTORY_FN_TXN_ABORT)
        return TXN_FATE_ABORTED;
    if (end->type == HISTORY_OK)
        return TXN_FATE_COMMITTED;
    if (end->type == HISTORY_FAIL && !is_fencing(end->error))
        return TXN_FATE_ABORTED;
    return TXN_FATE_UNKNOWN;
}

static void
on_end(TxnCheck *check, Pass1 *p, guint64 op_id, const HistoryOp *op)
{
    gint32 *open = open_slot(p, op->process);
    if (*open < 0)
        return;
    TxnInfo *txn = &g_array_index(check->txns, TxnInfo, *open);
    txn->end_op = op_id;
    txn->end_invoke_ns = op->invoke_ns;
    txn->end_complete_ns = op->complete_ns;
    *open = -1;
}

static void
on_init(TxnCheck *check, Pass1 *p, guint64 op_id, const HistoryOp *op)
{
    *open_slot(p, op->process) = -1;
    const char *id = history_process_transactional_id(check->history, op->process);
    if (op->type != HISTORY_OK || id == NULL)
        return;
    InitRow row = {op->process, op->complete_ns, op_id, id};
    g_array_append_val(check->inits, row);
}

static void
pass_transactions(TxnCheck *check)
{
    Pass1 p = {g_array_new(FALSE, FALSE, sizeof(gint32))};
    const HistoryOpArray *ops = history_ops(check->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        guint64 op_id = (guint64)i + 1;
        switch (op->fn) {
        case HISTORY_FN_TXN_INIT:
            on_init(check, &p, op_id, op);
            break;
        case HISTORY_FN_TXN_BEGIN:
            on_begin(check, &p, op_id, op);
            break;
        case HISTORY_FN_TXN_COMMIT:
        case HISTORY_FN_TXN_ABORT:
            on_end(check, &p, op_id, op);
            break;
        case HISTORY_FN_SEND:
        case HISTORY_FN_TXN_OFFSETS: {
            if (op->process >= p.open->len)
                break;
            gint32 open = g_array_index(p.open, gint32, op->process);
            if (open < 0)
                break;
            if (op->fn == HISTORY_FN_TXN_OFFSETS) {
                OffsetsRow row = {open, op->topic, op->partition, op->offset};
                g_array_append_val(check->offsets, row);
                break;
            }
            g_array_append_val(g_array_index(check->txns, TxnInfo, open).sends, op_id);
            g_hash_table_insert(check->op_txn, GSIZE_TO_POINTER((gsize)op_id),
                                GSIZE_TO_POINTER((gsize)open + 1));
            check->counts.sends++;
            break;
        }
        default:
            break;
        }
    }
    g_array_free(p.open, TRUE);
    for (guint t = 0; t < check->txns->len; t++) {
        TxnInfo *txn = &g_array_index(check->txns, TxnInfo, t);
        if (txn->end_op != 0)
            txn->fate = fate_of_end(history_op(check->history, txn->end_op));
        check->counts.fates[txn->fate]++;
    }
    check->counts.transactions = check->txns->len;
}

/* ---- zombies ---- */

static gint
init_compare(gconstpointer a, gconstpointer b)
{
    const InitRow *x = a;
    const InitRow *y = b;
    if (x->complete_ns != y->complete_ns)
        return x->complete_ns < y->complete_ns ? -1 : 1;
    return x->op < y->op ? -1 : x->op > y->op;
}

/* The last successful TXN_INIT of transactional id `id` completed before
 * `time_ns`, or NULL. */
static const InitRow *
last_init_before(const TxnCheck *check, const char *id, gint64 time_ns)
{
    const InitRow *last = NULL;
    for (guint i = 0; i < check->inits->len; i++) {
        const InitRow *row = &g_array_index(check->inits, InitRow, i);
        if (row->complete_ns >= time_ns)
            break;
        if (strcmp(row->id, id) == 0)
            last = row;
    }
    return last;
}

/* The successor's TXN_INIT when send `op` was a zombie's write, else NULL. */
static const InitRow *
zombie_fence(const TxnCheck *check, const HistoryOp *send)
{
    const char *id = history_process_transactional_id(check->history, send->process);
    if (id == NULL)
        return NULL;
    const InitRow *last = last_init_before(check, id, send->invoke_ns);
    return last != NULL && last->process != send->process ? last : NULL;
}

static void
zombie_found(TxnCheck *check, guint64 send_op, gint32 txn, const InitRow *fence,
             const char *how)
{
    if (!g_hash_table_add(check->zombie_seen, GSIZE_TO_POINTER((gsize)send_op)))
        return;
    const HistoryOp *send = history_op(check->history, send_op);
    TxnExample e = example_new(TXN_ZOMBIE_WRITE);
    e.op = send_op;
    e.value = send->value;
    e.process = send->process;
    e.process_other = fence->process;
    e.op_other = fence->op;
    e.txn = txn;
    e.time_ns = send->invoke_ns;
    e.topic = send->topic;
    e.partition = send->partition;
    g_autofree char *zombie = label(check, send->process);
    g_autofree char *successor = label(check, fence->process);
    e.summary = g_strdup_printf(
        "%s wrote value %" G_GUINT64_FORMAT " (op %" G_GUINT64_FORMAT ") at %.3f s, after %s "
        "had fenced it by initTransactions with the same transactional.id (%s, done at %.3f s), "
        "and the write %s",
        zombie, send->value, send_op, (double)send->invoke_ns / 1e9, successor, fence->id,
        (double)fence->complete_ns / 1e9, how);
    found(check, &e);
}

static void
count_fenced_instances(TxnCheck *check)
{
    /* A process is fenced when another process of its id completed a
     * TXN_INIT after its own last one. */
    for (guint i = 0; i < check->inits->len; i++) {
        const InitRow *row = &g_array_index(check->inits, InitRow, i);
        gboolean fenced = FALSE;
        gboolean last_of_process = TRUE;
        for (guint j = i + 1; j < check->inits->len; j++) {
            const InitRow *later = &g_array_index(check->inits, InitRow, j);
            if (strcmp(later->id, row->id) != 0)
                continue;
            if (later->process == row->process) {
                last_of_process = FALSE;
                break;
            }
            fenced = TRUE;
        }
        if (last_of_process && fenced)
            check->counts.fenced_instances++;
    }
}

/* ---- pass 2: each transaction's own writes ---- */

static gboolean
send_committed(const TxnCheck *check, guint64 op, CheckerSend *out)
{
    return checker_result_send(check->producer, op, out) && out->committed_partition >= 0;
}

static const CheckerPartition *
partition_of(const TxnCheck *check, const CheckerSend *send)
{
    const GArray *partitions = checker_result_partitions(check->producer);
    KSIM_ASSERT(send->committed_partition >= 0 &&
                (guint)send->committed_partition < partitions->len);
    return &g_array_index(partitions, CheckerPartition, send->committed_partition);
}

static void
check_partial_in_logs(TxnCheck *check, gint32 index)
{
    const TxnInfo *txn = txn_at(check, index);
    guint64 present = 0, absent = 0;
    guint64 present_op = 0, absent_op = 0;
    for (guint i = 0; i < txn->sends->len; i++) {
        guint64 op = g_array_index(txn->sends, guint64, i);
        CheckerSend send;
        if (send_committed(check, op, &send)) {
            present++;
            present_op = present_op != 0 ? present_op : op;
        } else {
            absent++;
            absent_op = absent_op != 0 ? absent_op : op;
        }
    }
    if (present == 0 || absent == 0)
        return;
    TxnExample e = example_new(TXN_PARTIAL_COMMIT);
    e.txn = index;
    e.op = present_op;
    e.op_other = absent_op;
    e.process = txn->process;
    e.value = history_op(check->history, absent_op)->value;
    e.time_ns = txn->end_complete_ns;
    g_autofree char *who = label(check, txn->process);
    e.summary = g_strdup_printf(
        "transaction %" G_GUINT64_FORMAT " of %s committed (commitTransaction OK at %.3f s), "
        "but only %" G_GUINT64_FORMAT " of its %u writes are in the committed logs: value %"
        G_GUINT64_FORMAT " (op %" G_GUINT64_FORMAT ") is missing",
        txn->number, who, (double)txn->end_complete_ns / 1e9, present, txn->sends->len, e.value,
        absent_op);
    found(check, &e);
}

typedef struct {
    gint32 committed_partition;
    guint64 op;
    gint64 offset;
} LastSend;

/* A data record of `process` strictly between offsets a and b, or NULL. */
static const HistoryRecord *
same_producer_between(const CheckerPartition *cp, guint32 process, gint64 a, gint64 b)
{
    gint64 end = MIN(b, a + 1 + SKIP_SCAN_MAX);
    for (gint64 o = a + 1; o < end; o++) {
        const HistoryRecord *record = checker_partition_record_at(cp, o);
        if (record != NULL && record->value != 0 && HISTORY_VALUE_PROCESS(record->value) == process)
            return record;
    }
    return NULL;
}

static void
internal_pair(TxnCheck *check, gint32 index, const LastSend *a, guint64 op_b,
              const CheckerSend *b)
{
    const TxnInfo *txn = txn_at(check, index);
    const CheckerPartition *cp = partition_of(check, b);
    TxnExample e = example_new(TXN_INT_NONMONOTONIC_SEND);
    e.txn = index;
    e.op = a->op;
    e.op_other = op_b;
    e.offset = a->offset;
    e.offset_other = b->committed_offset;
    e.topic = cp->topic;
    e.partition = cp->partition;
    e.process = txn->process;
    g_autofree char *tp = checker_partition_label(check->history, cp->topic, cp->partition);
    if (b->committed_offset < a->offset) {
        e.summary = g_strdup_printf(
            "transaction %" G_GUINT64_FORMAT " sent op %" G_GUINT64_FORMAT " before op %"
            G_GUINT64_FORMAT " to %s, but they are committed at offsets %" G_GINT64_FORMAT
            " and %" G_GINT64_FORMAT ": out of send order",
            txn->number, a->op, op_b, tp, a->offset, b->committed_offset);
        found(check, &e);
        return;
    }
    const HistoryRecord *between =
        same_producer_between(cp, txn->process, a->offset, b->committed_offset);
    if (between == NULL)
        return;
    e.anomaly = TXN_INT_SEND_SKIP;
    e.value = between->value;
    e.summary = g_strdup_printf(
        "transaction %" G_GUINT64_FORMAT " sent op %" G_GUINT64_FORMAT " then op %"
        G_GUINT64_FORMAT " to %s (offsets %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
        "), but offset %" G_GINT64_FORMAT " between them holds another write of the same "
        "producer, value %" G_GUINT64_FORMAT,
        txn->number, a->op, op_b, tp, a->offset, b->committed_offset, between->offset,
        between->value);
    found(check, &e);
}

static void
check_internal_order(TxnCheck *check, gint32 index)
{
    const TxnInfo *txn = txn_at(check, index);
    g_autoptr(GArray) last = g_array_new(FALSE, FALSE, sizeof(LastSend));
    for (guint i = 0; i < txn->sends->len; i++) {
        guint64 op = g_array_index(txn->sends, guint64, i);
        CheckerSend send;
        if (!send_committed(check, op, &send))
            continue;
        LastSend *slot = NULL;
        for (guint k = 0; k < last->len && slot == NULL; k++) {
            LastSend *l = &g_array_index(last, LastSend, k);
            if (l->committed_partition == send.committed_partition)
                slot = l;
        }
        if (slot == NULL) {
            LastSend fresh = {send.committed_partition, op, send.committed_offset};
            g_array_append_val(last, fresh);
            continue;
        }
        internal_pair(check, index, slot, op, &send);
        slot->op = op;
        slot->offset = send.committed_offset;
    }
}

static void
check_zombie_commits(TxnCheck *check, gint32 index)
{
    const TxnInfo *txn = txn_at(check, index);
    for (guint i = 0; i < txn->sends->len; i++) {
        guint64 op = g_array_index(txn->sends, guint64, i);
        const InitRow *fence = zombie_fence(check, history_op(check->history, op));
        if (fence != NULL)
            zombie_found(check, op, index,
                         fence, "was committed: its commitTransaction completed OK");
    }
}

static void
pass_own_writes(TxnCheck *check)
{
    for (guint t = 0; t < check->txns->len; t++) {
        const TxnInfo *txn = txn_at(check, (gint32)t);
        if (txn->fate != TXN_FATE_COMMITTED)
            continue;
        check_partial_in_logs(check, (gint32)t);
        check_internal_order(check, (gint32)t);
        check_zombie_commits(check, (gint32)t);
    }
}

/* ---- pass 3: reads ---- */

/* A read_committed consumer's polled range of one partition during one
 * continuous assignment. */
typedef struct {
    guint32 epoch;
    gint64 low;
    gint64 high;
} PollRange;

typedef struct {
    TxnCheck *check;
    GHashTable *ranges;  /* PollKey (guint64*) -> GArray of PollRange */
    GHashTable *epochs;  /* PollKey -> current epoch (guint32 in a pointer) */
    GHashTable *seen;    /* (process, txn) key -> GHashTable of send ops polled */
    GArray *pairs;       /* guint64 (process << 32 | txn), in first-seen order */
} Reads;

static guint64 *
poll_key(guint32 process, guint16 topic, gint32 partition)
{
    guint64 *key = g_new(guint64, 1);
    *key = ((guint64)process << 40) | ((guint64)topic << 24) | ((guint64)partition & 0xffffff);
    return key;
}

static void
on_read_assign(Reads *r, const HistoryOp *op)
{
    guint64 *key = poll_key(op->process, op->topic, op->partition);
    gpointer epoch = g_hash_table_lookup(r->epochs, key);
    g_hash_table_replace(r->epochs, key, GUINT_TO_POINTER(GPOINTER_TO_UINT(epoch) + 1));
}

static void
note_poll_range(Reads *r, const HistoryOp *op)
{
    g_autofree guint64 *key = poll_key(op->process, op->topic, op->partition);
    guint32 epoch = GPOINTER_TO_UINT(g_hash_table_lookup(r->epochs, key));
    GArray *ranges = g_hash_table_lookup(r->ranges, key);
    if (ranges == NULL) {
        ranges = g_array_new(FALSE, FALSE, sizeof(PollRange));
        g_hash_table_insert(r->ranges, g_steal_pointer(&key), ranges);
    }
    PollRange *last = ranges->len > 0 ? &g_array_index(ranges, PollRange, ranges->len - 1) : NULL;
    if (last != NULL && last->epoch == epoch) {
        last->low = MIN(last->low, op->offset);
        last->high = MAX(last->high, op->offset);
        return;
    }
    PollRange fresh = {epoch, op->offset, op->offset};
    g_array_append_val(ranges, fresh);
}

static void
note_seen(Reads *r, guint32 process, gint32 txn, guint64 send_op)
{
    guint64 pair = ((guint64)process << 32) | (guint32)txn;
    GHashTable *ops = g_hash_table_lookup(r->seen, &pair);
    if (ops == NULL) {
        guint64 *key = g_new(guint64, 1);
        *key = pair;
        ops = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_insert(r->seen, key, ops);
        g_array_append_val(r->pairs, pair);
    }
    g_hash_table_add(ops, GSIZE_TO_POINTER((gsize)send_op));
}

static void
read_anomaly(TxnCheck *check, TxnAnomaly anomaly, guint64 poll_op, const HistoryOp *poll,
             const CheckerSend *send, gint32 index, const char *why)
{
    const TxnInfo *txn = txn_at(check, index);
    TxnExample e = example_new(anomaly);
    e.op = poll_op;
    e.op_other = send->op;
    e.value = poll->value;
    e.process = poll->process;
    e.process_other = txn->process;
    e.time_ns = poll->invoke_ns;
    e.topic = poll->topic;
    e.partition = poll->partition;
    e.offset = poll->offset;
    e.txn = index;
    g_autofree char *reader = label(check, poll->process);
    g_autofree char *writer = label(check, txn->process);
    g_autofree char *tp = checker_partition_label(check->history, poll->topic, poll->partition);
    e.summary = g_strdup_printf(
        "%s (read_committed) polled value %" G_GUINT64_FORMAT " at %s offset %" G_GINT64_FORMAT
        " at %.3f s, a write of transaction %" G_GUINT64_FORMAT " of %s, which %s",
        reader, poll->value, tp, poll->offset, (double)poll->invoke_ns / 1e9, txn->number,
        writer, why);
    found(check, &e);
}

static void
judge_read_committed(Reads *r, guint64 poll_op, const HistoryOp *poll, const CheckerSend *send,
                     gint32 index)
{
    TxnCheck *check = r->check;
    const TxnInfo *txn = txn_at(check, index);
    check->counts.reads_committed++;
    note_seen(r, poll->process, index, send->op);
    if (txn->fate == TXN_FATE_ABORTED)
        read_anomaly(check, TXN_G1A, poll_op, poll, send, index,
                     "was aborted");
    else if (txn->fate == TXN_FATE_UNENDED)
        read_anomaly(check, TXN_UNCOMMITTED_READ, poll_op, poll, send, index,
                     "was never committed");
    else if (poll->invoke_ns < txn->end_invoke_ns)
        read_anomaly(check, TXN_UNCOMMITTED_READ, poll_op, poll, send, index,
                     "was not committed yet: its commitTransaction began later");
    const InitRow *fence = zombie_fence(check, history_op(check->history, send->op));
    if (fence != NULL)
        zombie_found(check, send->op, index, fence, "was polled by a read_committed consumer");
}

static void
on_read_poll(Reads *r, guint64 poll_op, const HistoryOp *poll)
{
    TxnCheck *check = r->check;
    gboolean committed = history_process_read_committed(check->history, poll->process);
    if (committed)
        note_poll_range(r, poll);
    CheckerSend send;
    if (!checker_result_send_of_value(check->producer, poll->value, &send))
        return;
    gint32 index = txn_of_send(check, send.op);
    if (index < 0)
        return;
    TxnFate fate = txn_at(check, index)->fate;
    if (committed)
        judge_read_committed(r, poll_op, poll, &send, index);
    else if (fate == TXN_FATE_ABORTED || fate == TXN_FATE_UNENDED)
        check->counts.aborted_read_uncommitted++;
}

/* TRUE when `process` polled offsets below and above `offset` of the
 * partition within one continuous assignment. */
static gboolean
read_past(Reads *r, guint32 process, guint16 topic, gint32 partition, gint64 offset)
{
    g_autofree guint64 *key = poll_key(process, topic, partition);
    const GArray *ranges = g_hash_table_lookup(r->ranges, key);
    for (guint i = 0; ranges != NULL && i < ranges->len; i++) {
        const PollRange *range = &g_array_index(ranges, PollRange, i);
        if (range->low < offset && offset < range->high)
            return TRUE;
    }
    return FALSE;
}

static void
check_partial_visibility(Reads *r, guint64 pair)
{
    TxnCheck *check = r->check;
    guint32 process = (guint32)(pair >> 32);
    gint32 index = (gint32)(guint32)pair;
    const TxnInfo *txn = txn_at(check, index);
    if (txn->fate != TXN_FATE_COMMITTED)
        return;
    GHashTable *ops = g_hash_table_lookup(r->seen, &pair);
    for (guint i = 0; i < txn->sends->len; i++) {
        guint64 op = g_array_index(txn->sends, guint64, i);
        CheckerSend send;
        if (g_hash_table_contains(ops, GSIZE_TO_POINTER((gsize)op)) ||
            !send_committed(check, op, &send))
            continue;
        const CheckerPartition *cp = partition_of(check, &send);
        if (!read_past(r, process, cp->topic, cp->partition, send.committed_offset))
            continue;
        TxnExample e = example_new(TXN_PARTIAL_COMMIT);
        e.txn = index;
        e.op_other = op;
        e.value = send.value;
        e.process = process;
        e.process_other = txn->process;
        e.topic = cp->topic;
        e.partition = cp->partition;
        e.offset = send.committed_offset;
        g_autofree char *reader = label(check, process);
        g_autofree char *tp = checker_partition_label(check->history, cp->topic, cp->partition);
        e.summary = g_strdup_printf(
            "%s (read_committed) saw part of committed transaction %" G_GUINT64_FORMAT
            ", and read %s past offset %" G_GINT64_FORMAT " without seeing its write there "
            "(value %" G_GUINT64_FORMAT ")",
            reader, txn->number, tp, send.committed_offset, send.value);
        found(check, &e);
        return; /* once per transaction and reader */
    }
}

static void
reads_seen_free(gpointer data)
{
    g_hash_table_destroy(data);
}

static void
pass_reads(TxnCheck *check)
{
    Reads r = {0};
    r.check = check;
    r.ranges = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                     (GDestroyNotify)g_array_unref);
    r.epochs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r.seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, reads_seen_free);
    r.pairs = g_array_new(FALSE, FALSE, sizeof(guint64));
    const HistoryOpArray *ops = history_ops(check->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_POLL)
            on_read_poll(&r, (guint64)i + 1, op);
        else if (op->fn == HISTORY_FN_ASSIGN &&
                 history_process_read_committed(check->history, op->process))
            on_read_assign(&r, op);
    }
    /* Pairs in first-seen order: deterministic. */
    for (guint i = 0; i < r.pairs->len; i++)
        check_partial_visibility(&r, g_array_index(r.pairs, guint64, i));
    g_hash_table_destroy(r.ranges);
    g_hash_table_destroy(r.epochs);
    g_hash_table_destroy(r.seen);
    g_array_free(r.pairs, TRUE);
}

/* ---- pass 4: pipelines ---- */

typedef struct {
    guint64 value;
    guint64 poll_op;
    guint16 topic;
    gint32 partition;
    gint64 offset;
    guint visible;
    guint maybe;
    guint64 first_output;
    guint64 second_output;
} Input;

typedef struct {
    TxnCheck *check;
    const char *pipeline;
    GArray *inputs;         /* Input, in first-poll order */
    GHashTable *by_value;   /* value (guint64*) -> index + 1 */
    GHashTable *positions;  /* (topic << 32 | partition) (guint64*) -> committed offset + 1 */
    TxnPipelineCounts counts;
} Pipeline;

static guint64 *
u64_new(guint64 v)
{
    guint64 *key = g_new(guint64, 1);
    *key = v;
    return key;
}

static void
position_raise(Pipeline *p, guint16 topic, gint32 partition, gint64 offset)
{
    guint64 key = ((guint64)topic << 32) | (guint32)partition;
    gint64 old = GPOINTER_TO_SIZE(g_hash_table_lookup(p->positions, &key));
    if (offset + 1 > old)
        g_hash_table_replace(p->positions, u64_new(key), GSIZE_TO_POINTER((gsize)(offset + 1)));
}

/* The last offset the group has committed past in the partition (its
 * committed offset - 1), -1 when none. */
static gint64
position_of(const Pipeline *p, guint16 topic, gint32 partition)
{
    guint64 key = ((guint64)topic << 32) | (guint32)partition;
    return (gint64)GPOINTER_TO_SIZE(g_hash_table_lookup(p->positions, &key)) - 1;
}

static void
pipeline_poll(Pipeline *p, guint64 op_id, const HistoryOp *op)
{
    if (g_hash_table_contains(p->by_value, &op->value))
        return;
    Input input = {op->value, op_id, op->topic, op->partition, op->offset, 0, 0, 0, 0};
    g_array_append_val(p->inputs, input);
    g_hash_table_insert(p->by_value, u64_new(op->value), GUINT_TO_POINTER(p->inputs->len));
}

static void
pipeline_output(Pipeline *p, guint64 op_id)
{
    TxnCheck *check = p->check;
    CheckerSend send;
    if (!send_committed(check, op_id, &send))
        return;
    gint32 index = txn_of_send(check, op_id);
    TxnFate fate = index < 0 ? TXN_FATE_COMMITTED : txn_at(check, index)->fate;
    if (index >= 0)
        p->counts.transactional = TRUE;
    guint64 key = history_op_key(check->history, op_id); /* the input's value */
    guint position = GPOINTER_TO_UINT(g_hash_table_lookup(p->by_value, &key));
    Input *input = position == 0 ? NULL : &g_array_index(p->inputs, Input, position - 1);
    if (fate == TXN_FATE_COMMITTED) {
        p->counts.outputs_visible++;
        if (input == NULL)
            return;
        input->visible++;
        if (input->first_output == 0)
            input->first_output = op_id;
        else if (input->second_output == 0)
            input->second_output = op_id;
    } else if (fate == TXN_FATE_UNKNOWN) {
        p->counts.outputs_maybe++;
        if (input != NULL)
            input->maybe++;
    }
}

static gboolean
is_member(const TxnCheck *check, const char *pipeline, guint32 process)
{
    const char *group = history_process_group(check->history, process);
    return group != NULL && strcmp(group, pipeline) == 0;
}

static gboolean
is_pipeline_producer(const TxnCheck *check, const char *pipeline, guint32 process)
{
    const char *name = history_process_pipeline(check->history, process);
    return name != NULL && strcmp(name, pipeline) == 0;
}

static void
pipeline_walk(Pipeline *p)
{
    TxnCheck *check = p->check;
    const HistoryOpArray *ops = history_ops(check->history);
    /* Inputs first: an output may be invoked before a later duplicate poll. */
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_POLL && is_member(check, p->pipeline, op->process))
            pipeline_poll(p, (guint64)i + 1, op);
        else if (op->fn == HISTORY_FN_COMMIT && op->type == HISTORY_OK &&
                 is_member(check, p->pipeline, op->process))
            position_raise(p, op->topic, op->partition, op->offset - 1);
    }
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_SEND && is_pipeline_producer(check, p->pipeline, op->process))
            pipeline_output(p, (guint64)i + 1);
    }
    for (guint i = 0; i < check->offsets->len; i++) {
        const OffsetsRow *row = &g_array_index(check->offsets, OffsetsRow, i);
        const TxnInfo *txn = txn_at(check, row->txn);
        if (txn->fate == TXN_FATE_COMMITTED &&
            is_pipeline_producer(check, p->pipeline, txn->process))
            position_raise(p, row->topic, row->partition, row->offset - 1);
    }
}

static void
pipeline_anomaly(Pipeline *p, TxnAnomaly anomaly, const Input *input, gint64 position)
{
    TxnCheck *check = p->check;
    TxnExample e = example_new(anomaly);
    e.value = input->value;
    e.op = input->poll_op;
    e.op_other = anomaly == TXN_PIPELINE_DUPLICATE ? input->second_output : 0;
    e.topic = input->topic;
    e.partition = input->partition;
    e.offset = input->offset;
    e.offset_other = position;
    e.count = input->visible;
    e.pipeline = p->pipeline;
    e.process = history_op(check->history, input->poll_op)->process;
    e.time_ns = history_op(check->history, input->poll_op)->invoke_ns;
    g_autofree char *tp = checker_partition_label(check->history, input->topic, input->partition);
    if (anomaly == TXN_PIPELINE_DUPLICATE) {
        p->counts.duplicates++;
        e.summary = g_strdup_printf(
            "pipeline %s turned input value %" G_GUINT64_FORMAT " (%s offset %" G_GINT64_FORMAT
            ") into %u visible outputs (ops %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT
            "%s): not exactly once",
            p->pipeline, input->value, tp, input->offset, input->visible, input->first_output,
            input->second_output, input->visible > 2 ? ", ..." : "");
    } else {
        p->counts.lost++;
        e.summary = g_strdup_printf(
            "pipeline %s consumed input value %" G_GUINT64_FORMAT " (%s offset %" G_GINT64_FORMAT
            ": its group's committed position is %" G_GINT64_FORMAT "), but no output of it is "
            "visible",
            p->pipeline, input->value, tp, input->offset, position + 1);
    }
    found(check, &e);
}

static void
pipeline_judge(Pipeline *p)
{
    for (guint i = 0; i < p->inputs->len; i++) {
        const Input *input = &g_array_index(p->inputs, Input, i);
        gint64 position = position_of(p, input->topic, input->partition);
        if (input->visible >= 2)
            pipeline_anomaly(p, TXN_PIPELINE_DUPLICATE, input, position);
        else if (input->visible + input->maybe == 0 && input->offset <= position)
            pipeline_anomaly(p, TXN_PIPELINE_LOST, input, position);
        else if (input->visible + input->maybe == 0)
            p->counts.unconsumed++;
    }
    p->counts.inputs = p->inputs->len;
}

static void
check_pipeline(TxnCheck *check, const char *pipeline)
{
    Pipeline p = {0};
    p.check = check;
    p.pipeline = pipeline;
    p.counts.pipeline = pipeline;
    p.inputs = g_array_new(FALSE, FALSE, sizeof(Input));
    p.by_value = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    p.positions = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    pipeline_walk(&p);
    pipeline_judge(&p);
    g_array_append_val(check->pipelines, p.counts);
    g_array_free(p.inputs, TRUE);
    g_hash_table_destroy(p.by_value);
    g_hash_table_destroy(p.positions);
}

static gint
string_compare(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void
pass_pipelines(TxnCheck *check)
{
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    guint32 bound = history_process_pipeline_bound(check->history);
    for (guint32 process = 0; process < bound; process++) {
        const char *name = history_process_pipeline(check->history, process);
        if (name != NULL)
            g_ptr_array_add(names, (gpointer)name);
    }
    g_ptr_array_sort(names, string_compare);
    for (guint i = 0; i < names->len; i++) {
        const char *name = g_ptr_array_index(names, i);
        if (i > 0 && strcmp(name, g_ptr_array_index(names, i - 1)) == 0)
            continue;
        check_pipeline(check, name);
    }
}

/* ---- the object ---- */

/* Hanging transactions from the replicas' final states: a leader's oldest
 * open transaction older than its transaction.max.timeout.ms. */
static void
count_hanging(TxnCheck *check)
{
    const GArray *replicas = history_replicas(check->history);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (!r->is_leader || !r->online || r->txn_open_ms <= 0)
            continue;
        check->counts.open_ms_max = MAX(check->counts.open_ms_max, (guint64)r->txn_open_ms);
        if (r->txn_max_timeout_ms > 0 && r->txn_open_ms >= r->txn_max_timeout_ms)
            check->counts.hanging++;
    }
}

TxnCheck *
checker_txn_run(const History *history, const CheckerResult *producer,
                const CheckerOptions *options)
{
    CheckerOptions defaults;
    checker_options_init(&defaults);
    if (options == NULL)
        options = &defaults;
    TxnCheck *check = g_new0(TxnCheck, 1);
    check->history = history;
    check->producer = producer;
    check->examples_max = options->examples_max;
    check->txns = g_array_new(FALSE, FALSE, sizeof(TxnInfo));
    check->op_txn = g_hash_table_new(g_direct_hash, g_direct_equal);
    check->inits = g_array_new(FALSE, FALSE, sizeof(InitRow));
    check->offsets = g_array_new(FALSE, FALSE, sizeof(OffsetsRow));
    check->zombie_seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    check->pipelines = g_array_new(FALSE, FALSE, sizeof(TxnPipelineCounts));
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        check->examples[a] = g_array_new(FALSE, FALSE, sizeof(TxnExample));
        g_array_set_clear_func(check->examples[a], example_clear);
    }
    if (!history_has_transactions(history))
        return check;
    pass_transactions(check);
    g_array_sort(check->inits, init_compare);
    count_fenced_instances(check);
    const GArray *events = history_events(history);
    for (guint i = 0; i < events->len; i++)
        check->counts.resumed +=
            g_array_index(events, HistoryEvent, i).kind == HISTORY_EVENT_TXN_RESUMED;
    count_hanging(check);
    pass_own_writes(check);
    pass_reads(check);
    pass_pipelines(check);
    return check;
}

void
checker_txn_free(TxnCheck *check)
{
    if (check == NULL)
        return;
    for (guint t = 0; t < check->txns->len; t++)
        g_array_free(g_array_index(check->txns, TxnInfo, t).sends, TRUE);
    g_array_free(check->txns, TRUE);
    g_hash_table_destroy(check->op_txn);
    g_array_free(check->inits, TRUE);
    g_array_free(check->offsets, TRUE);
    g_hash_table_destroy(check->zombie_seen);
    g_array_free(check->pipelines, TRUE);
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        g_array_free(check->examples[a], TRUE);
    g_free(check);
}

const TxnCounts *
checker_txn_counts(const TxnCheck *check)
{
    return &check->counts;
}

guint64
checker_txn_anomaly_total(const TxnCheck *check)
{
    guint64 total = 0;
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        total += check->counts.anomalies[a];
    return total;
}

const GArray *
checker_txn_examples(const TxnCheck *check, TxnAnomaly anomaly)
{
    KSIM_ASSERT((guint)anomaly < TXN_ANOMALY_COUNT);
    return check->examples[anomaly];
}

const TxnInfo *
checker_txn_transaction(const TxnCheck *check, guint index)
{
    return txn_at(check, (gint32)index);
}

const GArray *
checker_txn_pipelines(const TxnCheck *check)
{
    return check->pipelines;
}

const History *
checker_txn_history(const TxnCheck *check)
{
    return check->history;
}

void
checker_txn_check_invariants(const TxnCheck *check)
{
    guint64 fates = 0;
    for (guint f = 0; f < TXN_FATE_COUNT; f++)
        fates += check->counts.fates[f];
    KSIM_ASSERT(fates == check->counts.transactions);
    KSIM_ASSERT(check->counts.transactions == check->txns->len);
    for (guint t = 0; t < check->txns->len; t++) {
        const TxnInfo *txn = txn_at(check, (gint32)t);
        guint64 previous = 0;
        for (guint i = 0; i < txn->sends->len; i++) {
            guint64 op = g_array_index(txn->sends, guint64, i);
            KSIM_ASSERT(op > previous);
            KSIM_ASSERT(history_op(check->history, op)->process == txn->process);
            KSIM_ASSERT(txn_of_send(check, op) == (gint32)t);
            previous = op;
        }
    }
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        KSIM_ASSERT(check->examples[a]->len <= check->examples_max);
        KSIM_ASSERT(check->examples[a]->len <= check->counts.anomalies[a]);
    }
    for (guint i = 1; i < check->pipelines->len; i++)
        KSIM_ASSERT(strcmp(g_array_index(check->pipelines, TxnPipelineCounts, i - 1).pipeline,
                           g_array_index(check->pipelines, TxnPipelineCounts, i).pipeline) < 0);
}
