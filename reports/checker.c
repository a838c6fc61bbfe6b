/*
 * checker: verdicts and produce statistics from a history (see checker.h).
 *
 * checker_run works in passes, each linear in what it walks:
 *   partitions_build   replicas, sorted -> one committed log per partition
 *   sends_build        operations -> one SendState per operation id (where
 *                      the value is committed; the rest is the history's
 *                      row), and sent values -> their operation ids
 *   partition_walk     committed records -> where each value is committed,
 *                      duplicates, nonmonotonic sends
 *   replicas_compare   each online replica against the committed log
 *   expired_find       retention's deletions -> the sends they expired
 *   leaderless_find    leaderless partitions' replicas -> the sends they
 *                      hold above the committed log's HW
 *   sends_classify     outcomes, lost writes, failed-but-present, offsets
 *                      told versus committed, latency and throughput,
 *                      availability and recovery
 *   violations_collect the cluster's invariant breaches
 *
 * Invariants of a CheckerResult (checker_result_check_invariants):
 *  1. attempted == acked + failed + unknown.
 *  2. acked == lost_write + expired + leaderless + acked_committed; failed ==
 *     failed_absent + failed_but_present; unknown == unknown_committed +
 *     unknown_absent.
 *  3. Every anomaly has at most min(count, examples_max) examples.
 *  4. Partitions are sorted strictly by (topic, partition).
 *  5. A send with a committed partition is committed below that partition's
 *     HW, and the committed record there holds its value.
 *  6. The acked histogram holds exactly `acked` values, the failed one
 *     `failed`, the unknown one `unknown - pending`.
 *  7. A send marked expired is not committed, and its deletion event is a
 *     HISTORY_EVENT_RETENTION of its partition; at most examples_max
 *     expired examples are kept, no more than `expired`.
 * The result never changes after checker_run returns.
 */
#include "checker.h"

#include <stddef.h>
#include <string.h>

#include "kafka_error.h"
#include "sim_assert.h"
#include "sim_mem.h"

#define WINDOW_NS_DEFAULT G_GINT64_CONSTANT(1000000000)
#define LATENCY_DIGITS_DEFAULT 3

/* What the checker learns of one send beyond its history row: where its
 * value is first committed, as 1 + its index among all committed records
 * (the partitions' committed records one after the other, in the order of
 * `partitions`), 0 when nowhere; SEND_MISPLACED when that place is not
 * where an OK completion told the client it was; SEND_DUPLICATE_COUNTED once
 * a duplicate of its value has been counted. */
typedef guint32 SendState;
#define SEND_COMMITTED_MASK 0x3fffffffu
#define SEND_MISPLACED 0x40000000u
#define SEND_DUPLICATE_COUNTED 0x80000000u

/* Where a partition's replicas sit in the sorted replica order. */
typedef struct {
    guint first;
    guint len;
} ReplicaSpan;

typedef struct ValueIndex ValueIndex;
static void value_index_free(ValueIndex *index);

struct CheckerResult {
    const History *history;
    CheckerOptions options;
    GArray *sends;         /* SendState, by operation id (element 0 unused) */
    GArray *partitions;    /* CheckerPartition */
    GArray *first_record;  /* guint32 per partition: the global index of its first
                            * committed record; one more entry: the total */
    GArray *spans;         /* ReplicaSpan, parallel to partitions */
    GArray *replica_order; /* guint index into history_replicas, by (topic, partition, broker) */
    GArray *examples[CHECKER_ANOMALY_COUNT];
    GArray *lost;             /* guint64: the op id of every lost write, in send order */
    GArray *expired;          /* guint32 per operation id: 1 + the index of the
                               * RETENTION event that expired it; 0: none. NULL
                               * when the history has no such event */
    GArray *expired_examples; /* CheckerExample */
    GArray *held;             /* guint8 per operation id: 1 when a replica of a
                               * leaderless partition holds it (checker.h); NULL
                               * when no partition is leaderless */
    GPtrArray *violations;
    ValueIndex *values;
    CheckerCounts counts;
    CheckerStats stats;
    StatsHistogram *latency[CHECKER_LATENCY_COUNT];
    StatsSeries *throughput;
};

/* The last producer record seen so far in one partition's log walk. */
typedef struct {
    guint64 op;
    gint64 offset;
} ProcessMark;

static const char *const anomaly_names[CHECKER_ANOMALY_COUNT] = {
    [CHECKER_LOST_WRITE] = "lost_write",
    [CHECKER_DUPLICATE] = "duplicate",
    [CHECKER_NONMONOTONIC_SEND] = "nonmonotonic_send",
    [CHECKER_INCONSISTENT_OFFSETS] = "inconsistent_offsets",
    [CHECKER_FAILED_BUT_PRESENT] = "failed_but_present",
};

void
checker_options_init(CheckerOptions *options)
{
    KSIM_ASSERT(options != NULL);
    memset(options, 0, sizeof *options);
    options->examples_max = CHECKER_EXAMPLES_DEFAULT;
    options->window_ns = WINDOW_NS_DEFAULT;
    options->latency_digits = LATENCY_DIGITS_DEFAULT;
    options->last_heal_ns = CHECKER_HEAL_AUTO;
}

const char *
checker_anomaly_name(CheckerAnomaly anomaly)
{
    KSIM_ASSERT(anomaly < CHECKER_ANOMALY_COUNT);
    return anomaly_names[anomaly];
}

char *
checker_process_label(const History *history, guint32 process)
{
    const char *name = history_process_name(history, process);
    if (name != NULL)
        return g_strdup(name);
    return g_strdup_printf("process %u", process);
}

char *
checker_partition_label(const History *history, guint16 topic, gint32 partition)
{
    if (topic < history_topic_count(history))
        return g_strdup_printf("%s-%d", history_topic_name(history, topic), partition);
    return g_strdup_printf("topic%u-%d", topic, partition);
}

static void
example_clear(gpointer data)
{
    CheckerExample *example = data;
    g_free(example->summary);
}

static CheckerResult *
result_new(const History *history, const CheckerOptions *options)
{
    CheckerResult *result = g_new0(CheckerResult, 1);
    result->history = history;
    if (options != NULL)
        result->options = *options;
    else
        checker_options_init(&result->options);
    KSIM_ASSERT(result->options.window_ns > 0);
    result->sends = g_array_new(FALSE, FALSE, sizeof(SendState));
    result->first_record = g_array_new(FALSE, FALSE, sizeof(guint32));
    result->partitions = g_array_new(FALSE, TRUE, sizeof(CheckerPartition));
    result->spans = g_array_new(FALSE, TRUE, sizeof(ReplicaSpan));
    result->replica_order = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        result->examples[a] = g_array_new(FALSE, TRUE, sizeof(CheckerExample));
        g_array_set_clear_func(result->examples[a], example_clear);
    }
    result->lost = g_array_new(FALSE, FALSE, sizeof(guint64));
    result->expired_examples = g_array_new(FALSE, TRUE, sizeof(CheckerExample));
    g_array_set_clear_func(result->expired_examples, example_clear);
    result->violations = g_ptr_array_new_with_free_func(g_free);
    for (guint l = 0; l < CHECKER_LATENCY_COUNT; l++)
        result->latency[l] = stats_histogram_new(result->options.latency_digits);
    result->throughput = stats_series_new(result->options.window_ns);
    result->stats.window_ns = result->options.window_ns;
    result->stats.last_heal_ns = -1;
    result->stats.recovery_ns = -1;
    result->stats.first_invoke_ns = -1;
    result->stats.last_invoke_ns = -1;
    result->stats.last_complete_ns = -1;
    result->stats.availability = -1.0;
    return result;
}

void
checker_result_free(CheckerResult *result)
{
    if (result == NULL)
        return;
    g_array_free(result->sends, TRUE);
    g_array_free(result->first_record, TRUE);
    g_array_free(result->partitions, TRUE);
    g_array_free(result->spans, TRUE);
    g_array_free(result->replica_order, TRUE);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++)
        g_array_free(result->examples[a], TRUE);
    g_array_free(result->lost, TRUE);
    if (result->expired != NULL)
        g_array_free(result->expired, TRUE);
    if (result->held != NULL)
        g_array_free(result->held, TRUE);
    g_array_free(result->expired_examples, TRUE);
    g_ptr_array_free(result->violations, TRUE);
    value_index_free(result->values);
    for (guint l = 0; l < CHECKER_LATENCY_COUNT; l++)
        stats_histogram_free(result->latency[l]);
    stats_series_free(result->throughput);
    g_free(result);
}

/* Counts one anomaly and keeps the example (taking its summary) while fewer
 * than examples_max are kept. */
static void
anomaly_add(CheckerResult *result, CheckerExample *example)
{
    result->counts.anomalies[example->anomaly]++;
    GArray *examples = result->examples[example->anomaly];
    if (examples->len < result->options.examples_max)
        g_array_append_val(examples, *example);
    else
        g_free(example->summary);
    example->summary = NULL;
}

/* The history row of operation `op` when it is a send, else NULL. */
static const HistoryOp *
send_at(const CheckerResult *result, guint64 op)
{
    if (op == 0 || op >= result->sends->len)
        return NULL;
    const HistoryOp *row = history_op(result->history, op);
    return row->fn == HISTORY_FN_SEND ? row : NULL;
}

static SendState *
state_at(const CheckerResult *result, guint64 op)
{
    return &g_array_index(result->sends, SendState, op);
}

/* The partition (index) and record (index in it) of a send's first
 * committed copy; FALSE when it is not committed. */
static gboolean
committed_place(const CheckerResult *result, SendState state, guint *partition, guint *record)
{
    guint32 global = state & SEND_COMMITTED_MASK;
    if (global == 0)
        return FALSE;
    global--;
    const GArray *first = result->first_record;
    guint low = 0, high = first->len - 1; /* the last entry is the total */
    while (high - low > 1) {
        guint middle = low + (high - low) / 2;
        if (g_array_index(first, guint32, middle) <= global)
            low = middle;
        else
            high = middle;
    }
    *partition = low;
    *record = global - g_array_index(first, guint32, low);
    return TRUE;
}

static CheckerOutcome outcome_of(const HistoryOp *op);

/* The whole of send `op` (which must be one): its history row and state. */
static void
send_view(const CheckerResult *result, guint64 op, CheckerSend *out)
{
    const HistoryOp *row = send_at(result, op);
    KSIM_ASSERT(row != NULL);
    *out = (CheckerSend){.op = op,
                         .value = row->value,
                         .invoke_ns = row->invoke_ns,
                         .complete_ns = row->complete_ns,
                         .offset = row->offset,
                         .committed_offset = -1,
                         .process = row->process,
                         .partition = row->partition,
                         .error = row->error,
                         .committed_partition = -1,
                         .topic = row->topic,
                         .outcome = (guint8)outcome_of(row)};
    guint partition, record;
    if (committed_place(result, *state_at(result, op), &partition, &record)) {
        const CheckerPartition *p = &g_array_index(result->partitions, CheckerPartition, partition);
        out->committed_partition = (gint32)partition;
        out->committed_offset = g_array_index(p->records, HistoryRecord, record).offset;
    }
}

static CheckerOutcome
outcome_of(const HistoryOp *op)
{
    switch ((HistoryType)op->type) {
    case HISTORY_INVOKE:
        return CHECKER_SEND_PENDING;
    case HISTORY_OK:
        return CHECKER_SEND_OK;
    case HISTORY_FAIL:
        return CHECKER_SEND_FAIL;
    case HISTORY_INFO:
        break;
    }
    return op->error == 0 ? CHECKER_SEND_SENT : CHECKER_SEND_INFO;
}

/* ---- values_index ---- */

/* Sent values by producer: HISTORY_VALUE(process, n) is found at index n - 1
 * of its process's array of operation ids (0: none), so a lookup is an array
 * index (the process's array is remembered from the previous lookup). */
struct ValueIndex {
    GHashTable *by_process; /* process -> GArray of guint32 op id; looked up only */
    guint32 last_process;
    GArray *last_ops;       /* the array of last_process, or NULL */
};

static void
value_index_free(ValueIndex *index)
{
    if (index == NULL)
        return;
    g_hash_table_destroy(index->by_process);
    g_free(index);
}

static GArray *
value_index_ops(ValueIndex *index, guint32 process)
{
    if (index->last_ops == NULL || index->last_process != process) {
        index->last_ops = g_hash_table_lookup(index->by_process, GUINT_TO_POINTER(process));
        index->last_process = process;
    }
    return index->last_ops;
}

static ValueIndex *
value_index_new(void)
{
    ValueIndex *index = g_new0(ValueIndex, 1);
    index->by_process =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    return index;
}

/* Indexes send `op` of `value`; FALSE when a send had the value already
 * (the new one replaces it). */
static gboolean
value_index_add(ValueIndex *index, guint64 value, guint64 op)
{
    guint32 process = HISTORY_VALUE_PROCESS(value);
    guint64 n = HISTORY_VALUE_COUNTER(value);
    KSIM_ASSERT(n > 0 && n <= G_MAXUINT32); /* history.h's contract for sent values */
    KSIM_ASSERT(op <= G_MAXUINT32);
    GArray *ops = value_index_ops(index, process);
    if (ops == NULL) {
        ops = g_array_new(FALSE, TRUE, sizeof(guint32));
        g_hash_table_insert(index->by_process, GUINT_TO_POINTER(process), ops);
        index->last_ops = ops;
    }
    if (ops->len < n)
        g_array_set_size(ops, (guint)MAX(n, MIN((guint64)ops->len * 2, G_MAXUINT32)));
    guint32 *slot = &g_array_index(ops, guint32, n - 1);
    gboolean fresh = *slot == 0;
    *slot = (guint32)op;
    return fresh;
}

/* ---- sends_build ---- */

/* One SendState per operation id (zero: nothing committed yet), and every
 * send's value indexed. */
static void
sends_build(CheckerResult *result)
{
    const HistoryOpArray *ops = history_ops(result->history);
    KSIM_ASSERT(ops->len < G_MAXUINT32);
    result->values = value_index_new();
    sim_array_reserve(result->sends, ops->len + 1);
    g_array_set_size(result->sends, ops->len + 1);
    memset(result->sends->data, 0, (gsize)result->sends->len * sizeof(SendState));
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &g_array_index(ops, HistoryOp, i);
        if (op->fn == HISTORY_FN_SEND && !value_index_add(result->values, op->value, i + 1))
            result->counts.values_reused++;
    }
}

/* The operation id of the send of `value`; 0: none. */
static guint64
value_lookup(ValueIndex *values, guint64 value)
{
    GArray *ops = value_index_ops(values, HISTORY_VALUE_PROCESS(value));
    guint64 n = HISTORY_VALUE_COUNTER(value);
    if (ops == NULL || n == 0 || n > ops->len)
        return 0;
    return g_array_index(ops, guint32, n - 1);
}

/* ---- partitions_build ---- */

static gint
replica_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const GArray *replicas = user_data;
    const HistoryReplica *x = &g_array_index(replicas, HistoryReplica, *(const guint *)a);
    const HistoryReplica *y = &g_array_index(replicas, HistoryReplica, *(const guint *)b);
    if (x->topic != y->topic)
        return x->topic < y->topic ? -1 : 1;
    if (x->partition != y->partition)
        return x->partition < y->partition ? -1 : 1;
    if (x->broker != y->broker)
        return x->broker < y->broker ? -1 : 1;
    return 0;
}

/* Higher is a better source of the committed log: an online leader, then
 * any online replica, then an offline one. */
static int
replica_rank(const HistoryReplica *replica)
{
    if (!replica->online)
        return 0;
    return replica->is_leader ? 2 : 1;
}

static const HistoryReplica *
replica_at(const CheckerResult *result, guint order_index)
{
    guint index = g_array_index(result->replica_order, guint, order_index);
    return &g_array_index(history_replicas(result->history), HistoryReplica, index);
}

static void
partition_add(CheckerResult *result, guint first, guint len)
{
    const HistoryReplica *best = replica_at(result, first);
    for (guint i = first + 1; i < first + len; i++) {
        const HistoryReplica *replica = replica_at(result, i);
        int rank = replica_rank(replica), best_rank = replica_rank(best);
        if (rank > best_rank || (rank == best_rank && replica->hw > best->hw))
            best = replica;
    }
    CheckerPartition partition = {0};
    partition.topic = best->topic;
    partition.partition = best->partition;
    partition.broker = best->broker;
    partition.offline = !best->online;
    partition.leaderless = replica_rank(best) < 2;
    partition.hw = best->hw;
    partition.log_start = best->log_start;
    partition.records = best->records;
    partition.epochs = best->epochs;
    partition.records_committed = history_records_lower_bound(best->records, best->hw);
    g_array_append_val(result->partitions, partition);
    ReplicaSpan span = {first, len};
    g_array_append_val(result->spans, span);
    result->counts.partitions++;
    result->counts.partitions_offline += partition.offline;
    result->counts.committed += partition.records_committed;
}

static void
partitions_build(CheckerResult *result)
{
    const GArray *replicas = history_replicas(result->history);
    for (guint i = 0; i < replicas->len; i++)
        g_array_append_val(result->replica_order, i);
    g_array_sort_with_data(result->replica_order, replica_compare, (gpointer)replicas);
    guint first = 0;
    for (guint i = 1; i <= replicas->len; i++) {
        if (i < replicas->len) {
            const HistoryReplica *a = replica_at(result, first), *b = replica_at(result, i);
            if (a->topic == b->topic && a->partition == b->partition)
                continue;
        }
        partition_add(result, first, i - first);
        first = i;
    }
    guint64 total = 0;
    for (guint p = 0; p < result->partitions->len; p++) {
        guint32 at = (guint32)total;
        g_array_append_val(result->first_record, at);
        total += g_array_index(result->partitions, CheckerPartition, p).records_committed;
        KSIM_ASSERT(total < SEND_COMMITTED_MASK);
    }
    guint32 end = (guint32)total;
    g_array_append_val(result->first_record, end);
}

/* ---- partition_walk ---- */

static void
duplicate_found(CheckerResult *result, guint64 op, guint partition_index,
                const HistoryRecord *record)
{
    SendState *state = state_at(result, op);
    if (*state & SEND_DUPLICATE_COUNTED)
        return;
    *state |= SEND_DUPLICATE_COUNTED;
    CheckerSend send;
    send_view(result, op, &send);
    const CheckerPartition *first =
        &g_array_index(result->partitions, CheckerPartition, send.committed_partition);
    const CheckerPartition *here =
        &g_array_index(result->partitions, CheckerPartition, partition_index);
    g_autofree char *who = checker_process_label(result->history, send.process);
    g_autofree char *where =
        checker_partition_label(result->history, first->topic, first->partition);
    g_autofree char *where_other =
        checker_partition_label(result->history, here->topic, here->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_DUPLICATE;
    example.topic = first->topic;
    example.partition = first->partition;
    example.partition_other = here->partition;
    example.broker = -1;
    example.op = op;
    example.value = send.value;
    example.offset = send.committed_offset;
    example.offset_other = record->offset;
    example.summary = g_strdup_printf(
        "value %" G_GUINT64_FORMAT " from %s is committed at offset %" G_GINT64_FORMAT
        " of %s and again at offset %" G_GINT64_FORMAT " of %s",
        send.value, who, send.committed_offset, where, record->offset, where_other);
    anomaly_add(result, &example);
}

static void
nonmonotonic_found(CheckerResult *result, const CheckerPartition *partition, guint64 op,
                   gint64 offset, const ProcessMark *mark)
{
    const HistoryOp *send = history_op(result->history, op);
    const HistoryOp *later = history_op(result->history, mark->op);
    g_autofree char *who = checker_process_label(result->history, send->process);
    g_autofree char *where =
        checker_partition_label(result->history, partition->topic, partition->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_NONMONOTONIC_SEND;
    example.topic = partition->topic;
    example.partition = partition->partition;
    example.partition_other = partition->partition;
    example.broker = -1;
    example.op = op;
    example.op_other = mark->op;
    example.value = send->value;
    example.value_other = later->value;
    example.offset = offset;
    example.offset_other = mark->offset;
    example.summary =
        g_strdup_printf("%s sent value %" G_GUINT64_FORMAT " before value %" G_GUINT64_FORMAT
                        ", but %s holds the later one at offset %" G_GINT64_FORMAT
                        " and the earlier one after it, at offset %" G_GINT64_FORMAT,
                        who, send->value, later->value, where, mark->offset, offset);
    anomaly_add(result, &example);
}

/* The latest send of each producer seen so far in one log walk. */
typedef struct {
    GHashTable *mark_of; /* process -> index + 1 in marks; looked up only */
    GArray *marks;       /* ProcessMark */
    guint32 last_process;
    guint last_index;    /* 0: none remembered */
} OrderMarks;

/* Compares send `op` (at `offset`) with the latest send of its producer seen
 * earlier in this log. */
static void
order_check(CheckerResult *result, const CheckerPartition *partition, OrderMarks *order,
            guint64 op, guint32 process, gint64 offset)
{
    if (order->last_index == 0 || order->last_process != process) {
        gpointer key = GUINT_TO_POINTER(process);
        guint index = GPOINTER_TO_UINT(g_hash_table_lookup(order->mark_of, key));
        if (index == 0) {
            ProcessMark mark = {op, offset};
            g_array_append_val(order->marks, mark);
            index = order->marks->len;
            g_hash_table_insert(order->mark_of, key, GUINT_TO_POINTER(index));
        }
        order->last_process = process;
        order->last_index = index;
    }
    ProcessMark *mark = &g_array_index(order->marks, ProcessMark, order->last_index - 1);
    if (op < mark->op) {
        nonmonotonic_found(result, partition, op, offset, mark);
        return;
    }
    mark->op = op;
    mark->offset = offset;
}

/* TRUE when `record`, the first committed copy of an OK send's value (the
 * send's history `row`), is not where the completion told the client. */
static gboolean
misplaced(const CheckerPartition *partition, const HistoryRecord *record, const HistoryOp *row)
{
    if (row->type != HISTORY_OK || row->offset < 0)
        return FALSE;
    return record->offset != row->offset || partition->topic != row->topic ||
           (row->partition >= 0 && partition->partition != row->partition);
}

/* A later copy of a value already committed. When it is where the OK
 * completion told the client (a retried batch that the first attempt had
 * already appended, without idempotence: the client is told the retry's
 * offset), the send is not misplaced: every offset holds one value, and the
 * one cause, the retry, is counted once, as a duplicate. */
static void
duplicate_copy_placed(CheckerResult *result, const CheckerPartition *partition,
                      const HistoryRecord *record, guint64 op)
{
    SendState *state = state_at(result, op);
    if ((*state & SEND_MISPLACED) == 0)
        return;
    if (!misplaced(partition, record, history_op(result->history, op)))
        *state &= ~SEND_MISPLACED;
}

/* Walks one committed log in offset order: notes where each value is
 * committed and finds duplicates and out-of-order sends. */
static void
partition_walk(CheckerResult *result, ValueIndex *values, guint partition_index)
{
    const CheckerPartition *partition =
        &g_array_index(result->partitions, CheckerPartition, partition_index);
    g_autoptr(GHashTable) mark_of = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GArray) marks = g_array_new(FALSE, FALSE, sizeof(ProcessMark));
    OrderMarks order = {mark_of, marks, 0, 0};
    for (guint k = 0; k < partition->records_committed; k++) {
        const HistoryRecord *record = &g_array_index(partition->records, HistoryRecord, k);
        guint64 op = value_lookup(values, record->value);
        if (op == 0) {
            result->counts.committed_unknown_origin++;
            continue;
        }
        SendState *state = state_at(result, op);
        if ((*state & SEND_COMMITTED_MASK) != 0) {
            duplicate_copy_placed(result, partition, record, op);
            duplicate_found(result, op, partition_index, record);
            continue;
        }
        *state = g_array_index(result->first_record, guint32, partition_index) + k + 1;
        const HistoryOp *row = history_op(result->history, op);
        if (misplaced(partition, record, row))
            *state |= SEND_MISPLACED;
        order_check(result, partition, &order, op, row->process, record->offset);
    }
}

/* ---- replicas_compare ---- */

static void
divergence_found(CheckerResult *result, ValueIndex *values, const CheckerPartition *partition,
                 const HistoryReplica *replica, const HistoryRecord *committed,
                 const HistoryRecord *other)
{
    g_autofree char *where =
        checker_partition_label(result->history, partition->topic, partition->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_INCONSISTENT_OFFSETS;
    example.topic = partition->topic;
    example.partition = partition->partition;
    example.partition_other = partition->partition;
    example.broker = replica->broker;
    example.op = value_lookup(values, committed->value);
    example.op_other = value_lookup(values, other->value);
    example.value = committed->value;
    example.value_other = other->value;
    example.offset = committed->offset;
    example.offset_other = -1;
    example.summary = g_strdup_printf(
        "at offset %" G_GINT64_FORMAT " of %s, below both HWs, broker %d holds value "
        "%" G_GUINT64_FORMAT " (epoch %d) but the committed log (broker %d) holds value "
        "%" G_GUINT64_FORMAT " (epoch %d)",
        committed->offset, where, replica->broker, other->value,
        history_epoch_at(replica->epochs, other->offset), partition->broker, committed->value,
        history_epoch_at(partition->epochs, committed->offset));
    anomaly_add(result, &example);
}

/* Merges one replica's log with the committed log below both HWs. */
static void
replica_compare_logs(CheckerResult *result, ValueIndex *values, const CheckerPartition *partition,
                     const HistoryReplica *replica)
{
    if (replica->records == partition->records)
        return; /* one array: the logs were byte-identical */
    gint64 limit = MIN(replica->hw, partition->hw);
    guint i = 0, j = 0;
    while (i < replica->records->len && j < partition->records_committed) {
        const HistoryRecord *mine = &g_array_index(replica->records, HistoryRecord, i);
        const HistoryRecord *theirs = &g_array_index(partition->records, HistoryRecord, j);
        if (mine->offset >= limit || theirs->offset >= limit)
            break;
        if (mine->offset < theirs->offset) {
            i++;
            continue;
        }
        if (theirs->offset < mine->offset) {
            j++;
            continue;
        }
        if (mine->value != theirs->value)
            divergence_found(result, values, partition, replica, theirs, mine);
        i++;
        j++;
    }
}

static void
replicas_compare(CheckerResult *result, ValueIndex *values, guint partition_index)
{
    const CheckerPartition *partition =
        &g_array_index(result->partitions, CheckerPartition, partition_index);
    const ReplicaSpan *span = &g_array_index(result->spans, ReplicaSpan, partition_index);
    for (guint i = span->first; i < span->first + span->len; i++) {
        const HistoryReplica *replica = replica_at(result, i);
        if (replica->online && replica->broker != partition->broker)
            replica_compare_logs(result, values, partition, replica);
    }
}

/* ---- expired_find ---- */

/* TRUE when a deletion event may expire records of `partition`: it is the
 * committed log's replica's own, or its broker led the partition then (a
 * RETENTION event carries the ISR only then). */
static gboolean
deletion_qualifies(const HistoryEvent *event, const CheckerPartition *partition)
{
    return event->broker == partition->broker || event->isr != 0;
}

/* Marks the sends that one deletion expired: a value it held that is in
 * no committed log, at an offset the committed log no longer covers (see
 * checker.h), not expired by an earlier deletion. */
static void
deletion_apply(CheckerResult *result, ValueIndex *values, guint event_index)
{
    const HistoryEvent *event =
        &g_array_index(history_events(result->history), HistoryEvent, event_index);
    const GArray *records = history_event_records(result->history, event_index);
    const CheckerPartition *partition =
        checker_result_partition(result, event->topic, event->partition);
    if (records == NULL || partition == NULL || !deletion_qualifies(event, partition))
        return;
    for (guint i = 0; i < records->len; i++) {
        const HistoryRecord *record = &g_array_index(records, HistoryRecord, i);
        if (record->offset >= partition->log_start)
            break; /* offsets ascend: the committed log covers the rest */
        guint64 op = value_lookup(values, record->value);
        if (op == 0 || (*state_at(result, op) & SEND_COMMITTED_MASK) != 0)
            continue;
        guint32 *slot = &g_array_index(result->expired, guint32, op);
        if (*slot == 0)
            *slot = event_index + 1;
    }
}

/* Walks the deletions in time order, so each expired send keeps its first. */
static void
expired_find(CheckerResult *result, ValueIndex *values)
{
    const GArray *events = history_events(result->history);
    for (guint i = 0; i < events->len; i++) {
        if (g_array_index(events, HistoryEvent, i).kind != HISTORY_EVENT_RETENTION)
            continue;
        if (result->expired == NULL) {
            result->expired = g_array_new(FALSE, TRUE, sizeof(guint32));
            g_array_set_size(result->expired, result->sends->len);
        }
        deletion_apply(result, values, i);
    }
}

/* ---- leaderless_find ---- */

/* Marks the uncommitted sends that a replica of a leaderless partition holds
 * at or above the committed log's HW (checker.h): below it, the committed
 * log holds something else there, and the record is lost. */
static void
leaderless_find(CheckerResult *result, ValueIndex *values)
{
    for (guint p = 0; p < result->partitions->len; p++) {
        const CheckerPartition *partition = &g_array_index(result->partitions, CheckerPartition, p);
        if (!partition->leaderless)
            continue;
        if (result->held == NULL) {
            result->held = g_array_new(FALSE, TRUE, sizeof(guint8));
            g_array_set_size(result->held, result->sends->len);
        }
        const ReplicaSpan *span = &g_array_index(result->spans, ReplicaSpan, p);
        for (guint i = span->first; i < span->first + span->len; i++) {
            const GArray *records = replica_at(result, i)->records;
            for (guint r = history_records_lower_bound(records, partition->hw); r < records->len;
                 r++) {
                guint64 op = value_lookup(values, g_array_index(records, HistoryRecord, r).value);
                if (op != 0 && (*state_at(result, op) & SEND_COMMITTED_MASK) == 0)
                    g_array_index(result->held, guint8, op) = 1;
            }
        }
    }
}

/* ---- anomalies of sends ---- */

static void
lost_found(CheckerResult *result, const CheckerSend *send)
{
    g_autofree char *who = checker_process_label(result->history, send->process);
    g_autofree char *where = checker_partition_label(result->history, send->topic, send->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_LOST_WRITE;
    g_array_append_val(result->lost, send->op);
    example.topic = send->topic;
    example.partition = send->partition;
    example.partition_other = -1;
    example.broker = -1;
    example.op = send->op;
    example.value = send->value;
    example.offset = send->offset;
    example.offset_other = -1;
    if (send->outcome == CHECKER_SEND_SENT)
        example.summary = g_strdup_printf("value %" G_GUINT64_FORMAT " sent by %s to %s with "
                                          "acks=0 at %.3f s is not in the committed log",
                                          send->value, who, where, send->invoke_ns / 1e9);
    else
        example.summary = g_strdup_printf(
            "value %" G_GUINT64_FORMAT " sent by %s, acknowledged at %.3f s at offset "
            "%" G_GINT64_FORMAT " of %s, is not in the committed log",
            send->value, who, send->complete_ns / 1e9, send->offset, where);
    anomaly_add(result, &example);
}

static void
misplaced_found(CheckerResult *result, const CheckerSend *send, ValueIndex *values)
{
    const CheckerPartition *told = checker_result_partition(result, send->topic, send->partition);
    const HistoryRecord *there = told ? checker_partition_record_at(told, send->offset) : NULL;
    const CheckerPartition *committed =
        &g_array_index(result->partitions, CheckerPartition, send->committed_partition);
    g_autofree char *who = checker_process_label(result->history, send->process);
    g_autofree char *where = checker_partition_label(result->history, send->topic, send->partition);
    g_autofree char *where_committed =
        checker_partition_label(result->history, committed->topic, committed->partition);
    g_autofree char *holds = there ? g_strdup_printf("holds value %" G_GUINT64_FORMAT, there->value)
                                   : g_strdup("holds no committed record");
    CheckerExample example = {0};
    example.anomaly = CHECKER_INCONSISTENT_OFFSETS;
    example.topic = send->topic;
    example.partition = send->partition;
    example.partition_other = committed->partition;
    example.broker = -1;
    example.op = send->op;
    example.value = send->value;
    example.offset = send->offset;
    example.offset_other = send->committed_offset;
    example.value_other = there ? there->value : 0;
    example.op_other = there ? value_lookup(values, there->value) : 0;
    example.summary = g_strdup_printf("value %" G_GUINT64_FORMAT
                                      " from %s was acknowledged at offset %" G_GINT64_FORMAT
                                      " of %s but is committed at offset %" G_GINT64_FORMAT
                                      " of %s; offset %" G_GINT64_FORMAT " %s",
                                      send->value, who, send->offset, where, send->committed_offset,
                                      where_committed, send->offset, holds);
    anomaly_add(result, &example);
}

static void
failed_present_found(CheckerResult *result, const CheckerSend *send)
{
    const CheckerPartition *committed =
        &g_array_index(result->partitions, CheckerPartition, send->committed_partition);
    g_autofree char *who = checker_process_label(result->history, send->process);
    g_autofree char *where =
        checker_partition_label(result->history, committed->topic, committed->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_FAILED_BUT_PRESENT;
    example.topic = committed->topic;
    example.partition = committed->partition;
    example.partition_other = -1;
    example.broker = -1;
    example.op = send->op;
    example.value = send->value;
    example.offset = send->committed_offset;
    example.offset_other = -1;
    example.summary = g_strdup_printf("value %" G_GUINT64_FORMAT
                                      " from %s failed with %s at %.3f s, yet is committed at "
                                      "offset %" G_GINT64_FORMAT " of %s",
                                      send->value, who, kafka_error_name((KafkaError)send->error),
                                      send->complete_ns / 1e9, send->committed_offset, where);
    anomaly_add(result, &example);
}

/* The index + 1 of the RETENTION event that expired send `op`; 0: none. */
static guint32
expired_event_of(const CheckerResult *result, guint64 op)
{
    if (result->expired == NULL)
        return 0;
    return g_array_index(result->expired, guint32, op);
}

static void
expired_found(CheckerResult *result, const CheckerSend *send, guint event_index)
{
    result->counts.expired++;
    if (result->expired_examples->len >= result->options.examples_max)
        return;
    const HistoryEvent *event =
        &g_array_index(history_events(result->history), HistoryEvent, event_index);
    const CheckerPartition *committed =
        checker_result_partition(result, event->topic, event->partition);
    const GArray *records = history_event_records(result->history, event_index);
    gint64 offset = -1;
    for (guint i = 0; records != NULL && i < records->len && offset < 0; i++) {
        const HistoryRecord *record = &g_array_index(records, HistoryRecord, i);
        if (record->value == send->value)
            offset = record->offset;
    }
    g_autofree char *who = checker_process_label(result->history, send->process);
    g_autofree char *where =
        checker_partition_label(result->history, event->topic, event->partition);
    CheckerExample example = {0};
    example.anomaly = CHECKER_ANOMALY_COUNT;
    example.topic = event->topic;
    example.partition = event->partition;
    example.partition_other = -1;
    example.broker = event->broker;
    example.op = send->op;
    example.op_other = event_index;
    example.value = send->value;
    example.offset = offset;
    example.offset_other = committed != NULL ? committed->log_start : -1;
    example.summary = g_strdup_printf(
        "value %" G_GUINT64_FORMAT " from %s, committed at offset %" G_GINT64_FORMAT " of %s, "
        "was deleted by broker %d's retention at %.3f s (segment %020" G_GINT64_FORMAT ")",
        send->value, who, offset, where, event->broker, event->time_ns / 1e9, event->offset);
    g_array_append_val(result->expired_examples, example);
}

/* An acked send (operation `op`). */
static void
acked_classify(CheckerResult *result, guint64 op, CheckerOutcome outcome, SendState state,
               ValueIndex *values)
{
    result->counts.acked++;
    result->counts.acked_without_offset += outcome == CHECKER_SEND_SENT;
    CheckerSend view;
    if ((state & SEND_COMMITTED_MASK) == 0) {
        send_view(result, op, &view);
        guint32 expired = expired_event_of(result, op);
        if (expired != 0)
            expired_found(result, &view, expired - 1);
        else if (result->held != NULL && g_array_index(result->held, guint8, op) != 0)
            result->counts.leaderless++;
        else
            lost_found(result, &view);
        return;
    }
    result->counts.acked_committed++;
    if ((state & SEND_MISPLACED) != 0) {
        send_view(result, op, &view);
        misplaced_found(result, &view, values);
    }
}

/* A send that failed or whose outcome is unknown. */
static void
unacked_classify(CheckerResult *result, guint64 op, const HistoryOp *row, CheckerOutcome outcome,
                 SendState state)
{
    gboolean committed = (state & SEND_COMMITTED_MASK) != 0;
    gint64 latency_ns = MAX(row->complete_ns - row->invoke_ns, 0);
    if (outcome == CHECKER_SEND_FAIL) {
        result->counts.failed++;
        stats_histogram_record(result->latency[CHECKER_LATENCY_FAILED], latency_ns);
        if (committed) {
            CheckerSend view;
            send_view(result, op, &view);
            failed_present_found(result, &view);
        } else {
            result->counts.failed_absent++;
        }
        return;
    }
    result->counts.unknown++;
    if (outcome == CHECKER_SEND_PENDING)
        result->counts.pending++;
    else
        stats_histogram_record(result->latency[CHECKER_LATENCY_UNKNOWN], latency_ns);
    if (committed)
        result->counts.unknown_committed++;
    else
        result->counts.unknown_absent++;
}

/* ---- sends_classify ---- */

static gboolean
text_has(const char *text, const char *word)
{
    if (text == NULL)
        return FALSE;
    g_autofree char *lower = g_ascii_strdown(text, -1);
    return strstr(lower, word) != NULL;
}

static gint64
heal_find(const History *history)
{
    const GArray *events = history_events(history);
    for (guint i = events->len; i-- > 0;) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind == HISTORY_EVENT_FAULT && text_has(event->text, "heal"))
            return event->time_ns;
        if (event->kind == HISTORY_EVENT_NODE &&
            (text_has(event->text, "restart") || text_has(event->text, "resum")))
            return event->time_ns;
    }
    return -1;
}

/* Acked completions with one latency and one completion time (a batch's
 * records), recorded at once. */
typedef struct {
    gint64 latency_ns;
    gint64 complete_ns;
    gint64 count;
} AckRun;

static void
ack_run_flush(CheckerResult *result, AckRun *run)
{
    if (run->count == 0)
        return;
    stats_histogram_record_n(result->latency[CHECKER_LATENCY_ACKED], run->latency_ns, run->count);
    stats_series_add(result->throughput, run->complete_ns, run->count);
    run->count = 0;
}

static void
ack_run_add(CheckerResult *result, AckRun *run, const HistoryOp *send)
{
    gint64 latency_ns = MAX(send->complete_ns - send->invoke_ns, 0);
    if (run->count > 0 && (run->latency_ns != latency_ns || run->complete_ns != send->complete_ns))
        ack_run_flush(result, run);
    run->latency_ns = latency_ns;
    run->complete_ns = send->complete_ns;
    run->count++;
}

/* Availability: with a difference array over the windows, the windows in
 * which some send was outstanding (invoked, not yet answered). */
typedef struct {
    gint64 end_ns;
    GArray *delta; /* gint64 per window, + 1 */
} Outstanding;

static void
outstanding_add(const CheckerResult *result, Outstanding *outstanding, const HistoryOp *send)
{
    gint64 window_ns = result->options.window_ns;
    gint64 last_ns = send->complete_ns >= 0 ? send->complete_ns : outstanding->end_ns;
    g_array_index(outstanding->delta, gint64, send->invoke_ns / window_ns)++;
    g_array_index(outstanding->delta, gint64, last_ns / window_ns + 1)--;
}

/* Counts the windows with a send outstanding, and those of them that also
 * hold an acked completion. */
static void
availability_measure(CheckerResult *result, const Outstanding *outstanding)
{
    if (result->counts.attempted == 0)
        return;
    guint windows = outstanding->delta->len - 1;
    guint acked_windows = stats_series_window_count(result->throughput);
    /* From the cluster's first acknowledgement on: a cluster still starting
     * (a KRaft quorum electing, brokers registering) is not an outage. A
     * run that never acks anything counts every window. */
    guint first = 0;
    while (first < acked_windows && stats_series_count(result->throughput, first) == 0)
        first++;
    if (first == acked_windows)
        first = 0;
    gint64 count = 0;
    for (guint w = 0; w < windows; w++) {
        count += g_array_index(outstanding->delta, gint64, w);
        if (count <= 0 || w < first)
            continue;
        result->stats.windows_attempted++;
        if (w < acked_windows && stats_series_count(result->throughput, w) > 0)
            result->stats.windows_available++;
    }
    result->stats.availability =
        (double)result->stats.windows_available / (double)result->stats.windows_attempted;
}

/* One pass over the sends: outcomes and their anomalies, latency and
 * throughput, the windows each send was outstanding in, and recovery (the
 * earliest completion of an acked send invoked at or after the last heal). */
static void
sends_classify(CheckerResult *result, ValueIndex *values)
{
    CheckerStats *stats = &result->stats;
    gint64 heal_ns = result->options.last_heal_ns;
    if (heal_ns == CHECKER_HEAL_AUTO)
        heal_ns = heal_find(result->history);
    stats->last_heal_ns = MAX(heal_ns, -1);
    gint64 recovered_ns = -1;
    Outstanding outstanding = {MAX(history_ops_end_ns(result->history), 0), NULL};
    KSIM_ASSERT(outstanding.end_ns / result->options.window_ns < STATS_SERIES_WINDOWS_MAX);
    g_autoptr(GArray) delta = g_array_new(FALSE, TRUE, sizeof(gint64));
    g_array_set_size(delta, (guint)(outstanding.end_ns / result->options.window_ns) + 2);
    outstanding.delta = delta;
    AckRun run = {0};
    const HistoryOpArray *ops = history_ops(result->history);
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *send = &g_array_index(ops, HistoryOp, i);
        if (send->fn != HISTORY_FN_SEND)
            continue;
        guint64 op = (guint64)i + 1;
        CheckerOutcome outcome = outcome_of(send);
        SendState state = *state_at(result, op);
        result->counts.attempted++;
        if (stats->first_invoke_ns < 0 || send->invoke_ns < stats->first_invoke_ns)
            stats->first_invoke_ns = send->invoke_ns;
        stats->last_complete_ns = MAX(stats->last_complete_ns, send->complete_ns);
        stats->last_invoke_ns = MAX(stats->last_invoke_ns, send->invoke_ns);
        outstanding_add(result, &outstanding, send);
        if (outcome != CHECKER_SEND_OK && outcome != CHECKER_SEND_SENT) {
            unacked_classify(result, op, send, outcome, state);
            continue;
        }
        acked_classify(result, op, outcome, state, values);
        ack_run_add(result, &run, send);
        if (heal_ns >= 0 && send->invoke_ns >= heal_ns &&
            (recovered_ns < 0 || send->complete_ns < recovered_ns))
            recovered_ns = send->complete_ns;
    }
    ack_run_flush(result, &run);
    if (recovered_ns >= 0)
        stats->recovery_ns = recovered_ns - heal_ns;
    availability_measure(result, &outstanding);
    /* Every send invoked and answered at one instant (acks=0 sends complete
     * when written) has no rate; -1 says so. */
    gint64 span_ns = stats->last_complete_ns - stats->first_invoke_ns;
    stats->throughput_per_s = -1.0;
    if (result->counts.acked > 0 && span_ns > 0)
        stats->throughput_per_s = (double)result->counts.acked * 1e9 / (double)span_ns;
}

/* ---- violations_collect ---- */

static void
violations_collect(CheckerResult *result)
{
    const GArray *events = history_events(result->history);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        if (event->kind != HISTORY_EVENT_VIOLATION)
            continue;
        result->counts.invariant_violations++;
        if (result->violations->len < result->options.examples_max)
            g_ptr_array_add(result->violations,
                            g_strdup(event->text ? event->text : "(no description)"));
    }
}

CheckerResult *
checker_run(const History *history, const CheckerOptions *options)
{
    KSIM_ASSERT(history != NULL);
    CheckerResult *result = result_new(history, options);
    partitions_build(result);
    sends_build(result);
    ValueIndex *values = result->values;
    for (guint p = 0; p < result->partitions->len; p++)
        partition_walk(result, values, p);
    for (guint p = 0; p < result->partitions->len; p++)
        replicas_compare(result, values, p);
    expired_find(result, values);
    leaderless_find(result, values);
    sends_classify(result, values);
    violations_collect(result);
    return result;
}

/* ---- accessors ---- */

const History *
checker_result_history(const CheckerResult *result)
{
    return result->history;
}

const CheckerCounts *
checker_result_counts(const CheckerResult *result)
{
    return &result->counts;
}

const CheckerStats *
checker_result_stats(const CheckerResult *result)
{
    return &result->stats;
}

const GArray *
checker_result_examples(const CheckerResult *result, CheckerAnomaly anomaly)
{
    KSIM_ASSERT(anomaly < CHECKER_ANOMALY_COUNT);
    return result->examples[anomaly];
}

const GArray *
checker_result_lost_writes(const CheckerResult *result)
{
    return result->lost;
}

const GArray *
checker_result_expired_examples(const CheckerResult *result)
{
    return result->expired_examples;
}

const GPtrArray *
checker_result_violations(const CheckerResult *result)
{
    return result->violations;
}

gboolean
checker_result_send(const CheckerResult *result, guint64 op, CheckerSend *out)
{
    if (send_at(result, op) == NULL)
        return FALSE;
    send_view(result, op, out);
    return TRUE;
}

gboolean
checker_result_send_of_value(const CheckerResult *result, guint64 value, CheckerSend *out)
{
    return checker_result_send(result, value_lookup(result->values, value), out);
}

const GArray *
checker_result_partitions(const CheckerResult *result)
{
    return result->partitions;
}

const CheckerPartition *
checker_result_partition(const CheckerResult *result, guint16 topic, gint32 partition)
{
    guint low = 0, high = result->partitions->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        const CheckerPartition *p = &g_array_index(result->partitions, CheckerPartition, middle);
        if (p->topic == topic && p->partition == partition)
            return p;
        if (p->topic < topic || (p->topic == topic && p->partition < partition))
            low = middle + 1;
        else
            high = middle;
    }
    return NULL;
}

const HistoryRecord *
checker_partition_record_at(const CheckerPartition *partition, gint64 offset)
{
    KSIM_ASSERT(partition != NULL);
    if (offset < 0 || offset >= partition->hw)
        return NULL;
    guint index = history_records_lower_bound(partition->records, offset);
    if (index >= partition->records_committed)
        return NULL;
    const HistoryRecord *record = &g_array_index(partition->records, HistoryRecord, index);
    return record->offset == offset ? record : NULL;
}

const StatsHistogram *
checker_result_latency(const CheckerResult *result, CheckerLatency which)
{
    KSIM_ASSERT(which < CHECKER_LATENCY_COUNT);
    return result->latency[which];
}

const StatsSeries *
checker_result_throughput(const CheckerResult *result)
{
    return result->throughput;
}

/* ---- invariants ---- */

static void
check_send(const CheckerResult *result, guint64 op)
{
    CheckerSend view;
    if (!checker_result_send(result, op, &view) || view.committed_partition < 0)
        return;
    const CheckerSend *send = &view;
    KSIM_ASSERT((guint)send->committed_partition < result->partitions->len);
    const CheckerPartition *partition =
        &g_array_index(result->partitions, CheckerPartition, send->committed_partition);
    const HistoryRecord *record = checker_partition_record_at(partition, send->committed_offset);
    KSIM_ASSERT(record != NULL);
    KSIM_ASSERT(record->value == send->value);
}

static void
check_expired(const CheckerResult *result, guint64 op)
{
    guint32 expired = expired_event_of(result, op);
    if (expired == 0)
        return;
    KSIM_ASSERT((*state_at(result, op) & SEND_COMMITTED_MASK) == 0);
    const GArray *events = history_events(result->history);
    KSIM_ASSERT(expired - 1 < events->len);
    const HistoryEvent *event = &g_array_index(events, HistoryEvent, expired - 1);
    KSIM_ASSERT(event->kind == HISTORY_EVENT_RETENTION);
    const HistoryOp *row = history_op(result->history, op);
    KSIM_ASSERT(row->fn == HISTORY_FN_SEND);
}

void
checker_result_check_invariants(const CheckerResult *result)
{
    const CheckerCounts *c = &result->counts;
    KSIM_ASSERT(c->attempted == c->acked + c->failed + c->unknown);
    KSIM_ASSERT(c->acked ==
                c->anomalies[CHECKER_LOST_WRITE] + c->expired + c->leaderless + c->acked_committed);
    KSIM_ASSERT(result->lost->len == c->anomalies[CHECKER_LOST_WRITE]);
    KSIM_ASSERT(c->failed == c->failed_absent + c->anomalies[CHECKER_FAILED_BUT_PRESENT]);
    KSIM_ASSERT(c->unknown == c->unknown_committed + c->unknown_absent);
    for (guint a = 0; a < CHECKER_ANOMALY_COUNT; a++) {
        KSIM_ASSERT(result->examples[a]->len <= result->options.examples_max);
        KSIM_ASSERT(result->examples[a]->len <= c->anomalies[a]);
    }
    for (guint p = 1; p < result->partitions->len; p++) {
        const CheckerPartition *a = &g_array_index(result->partitions, CheckerPartition, p - 1);
        const CheckerPartition *b = &g_array_index(result->partitions, CheckerPartition, p);
        KSIM_ASSERT(a->topic < b->topic || (a->topic == b->topic && a->partition < b->partition));
    }
    for (guint op = 1; op < result->sends->len; op++) {
        check_send(result, op);
        check_expired(result, op);
        if (result->held != NULL && g_array_index(result->held, guint8, op) != 0)
            KSIM_ASSERT((*state_at(result, op) & SEND_COMMITTED_MASK) == 0);
    }
    KSIM_ASSERT(result->expired_examples->len <= result->options.examples_max);
    KSIM_ASSERT(result->expired_examples->len <= c->expired);
    KSIM_ASSERT(stats_histogram_count(result->latency[CHECKER_LATENCY_ACKED]) == (gint64)c->acked);
    KSIM_ASSERT(stats_histogram_count(result->latency[CHECKER_LATENCY_FAILED]) ==
                (gint64)c->failed);
    KSIM_ASSERT(stats_histogram_count(result->latency[CHECKER_LATENCY_UNKNOWN]) ==
                (gint64)(c->unknown - c->pending));
}
