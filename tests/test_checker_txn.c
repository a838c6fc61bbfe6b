/*
 * test_checker_txn: the transaction checker on hand-made histories — each
 * anomaly found, none in a clean history, pipelines judged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "checker.h"
#include "checker_txn.h"
#include "explain.h"
#include "history.h"
#include "kafka_error.h"

#define MS(x) ((gint64)(x)*G_GINT64_CONSTANT(1000000))
#define WRITER 7
#define SUCCESSOR 8
#define READER 20  /* read_committed */
#define DIRTY 21   /* read_uncommitted */
#define MEMBER 30  /* of pipeline group "pipe" */
#define PIPE_OUT 31
#define PARTITIONS 2

/* A history being built, with the final logs of topic t's partitions and of
 * topic "in". */
typedef struct {
    History *h;
    GArray *logs[PARTITIONS + 1]; /* HistoryRecord; index PARTITIONS: topic "in", partition 0 */
    guint64 counter[64];
} Build;

static void
build_init(Build *b)
{
    memset(b, 0, sizeof *b);
    b->h = history_new();
    history_topic(b->h, "t");
    history_topic(b->h, "in");
    history_set_process_name(b->h, WRITER, "producer-w");
    history_set_process_name(b->h, SUCCESSOR, "producer-s");
    history_set_process_name(b->h, READER, "consumer-rc");
    history_set_process_name(b->h, DIRTY, "consumer-ru");
    history_set_process_transactional_id(b->h, WRITER, "tx");
    history_set_process_transactional_id(b->h, SUCCESSOR, "tx");
    history_set_process_read_committed(b->h, READER, TRUE);
    history_set_process_read_committed(b->h, DIRTY, FALSE);
    for (guint i = 0; i <= PARTITIONS; i++)
        b->logs[i] = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
}

static void
log_append(Build *b, guint log, guint64 value)
{
    HistoryRecord record = {(gint64)b->logs[log]->len, value};
    g_array_append_val(b->logs[log], record);
}

/* Adds the logs as one leader replica each and returns the history. */
static History *
build_finish(Build *b)
{
    for (guint i = 0; i <= PARTITIONS; i++) {
        HistoryReplica replica = {0};
        replica.topic = i == PARTITIONS ? 1 : 0;
        replica.partition = i == PARTITIONS ? 0 : (gint32)i;
        replica.broker = 1;
        replica.is_leader = TRUE;
        replica.online = TRUE;
        replica.leo = b->logs[i]->len;
        replica.hw = b->logs[i]->len;
        replica.records = b->logs[i];
        history_add_replica(b->h, &replica);
    }
    return b->h;
}

static void
txn_op(Build *b, gint64 ms, HistoryFn fn, guint32 process, guint64 number, HistoryType type,
       gint32 error)
{
    guint64 op = history_invoke(b->h, MS(ms), fn, process, 0, -1, 0, number);
    if (type != HISTORY_INVOKE)
        history_complete(b->h, op, MS(ms) + 100000, type, -1, -1, error);
}

static void
begin(Build *b, gint64 ms, guint32 process, guint64 number)
{
    history_record(b->h, MS(ms), HISTORY_FN_TXN_BEGIN, process, 0, -1, -1, 0, number);
}

/* A send of a new value of `process` to t-`partition` (acked at the log's
 * next offset, appended there when `in_log`); returns the value. */
static guint64
send(Build *b, gint64 ms, guint32 process, guint partition, gboolean in_log)
{
    guint64 value = HISTORY_VALUE(process, ++b->counter[process % 64]);
    guint64 op = history_invoke(b->h, MS(ms), HISTORY_FN_SEND, process, 0, (gint32)partition, 0,
                                value);
    history_complete(b->h, op, MS(ms) + 200000, HISTORY_OK, (gint32)partition,
                     (gint64)b->logs[partition]->len, 0);
    if (in_log)
        log_append(b, partition, value);
    return value;
}

static void
marker(Build *b, guint partition)
{
    log_append(b, partition, 0);
}

static void
poll(Build *b, gint64 ms, guint32 process, guint partition, guint64 value)
{
    gint64 offset = -1;
    for (guint i = 0; i < b->logs[partition]->len; i++) {
        const HistoryRecord *r = &g_array_index(b->logs[partition], HistoryRecord, i);
        if (r->value == value)
            offset = r->offset;
    }
    history_record(b->h, MS(ms), HISTORY_FN_POLL, process, partition == PARTITIONS ? 1 : 0,
                   partition == PARTITIONS ? 0 : (gint32)partition, offset, 0, value);
}

typedef struct {
    CheckerResult *result;
    TxnCheck *txn;
} Checked;

static Checked
check(History *h)
{
    Checked c;
    c.result = checker_run(h, NULL);
    c.txn = checker_txn_run(h, c.result, NULL);
    checker_txn_check_invariants(c.txn);
    /* Every example explains itself. */
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++) {
        const GArray *examples = checker_txn_examples(c.txn, a);
        for (guint e = 0; e < examples->len; e++) {
            GPtrArray *chain =
                explain_txn_example(c.txn, &g_array_index(examples, TxnExample, e));
            assert_true(chain->len > 0);
            g_ptr_array_free(chain, TRUE);
        }
    }
    return c;
}

static void
checked_free(Checked *c, History *h)
{
    checker_txn_free(c->txn);
    checker_result_free(c->result);
    history_free(h);
}

static guint64
anomaly(const Checked *c, TxnAnomaly a)
{
    return checker_txn_counts(c->txn)->anomalies[a];
}

static void
assert_only(const Checked *c, TxnAnomaly which, guint64 count)
{
    for (guint a = 0; a < TXN_ANOMALY_COUNT; a++)
        assert_int_equal(anomaly(c, a), a == which ? count : 0);
}

/* A committed transaction across two partitions, an aborted one: the
 * committed one read by both readers, the aborted one by read_uncommitted. */
static guint64
clean_story(Build *b, guint64 *aborted_value)
{
    txn_op(b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
    begin(b, 1, WRITER, 1);
    guint64 v1 = send(b, 2, WRITER, 0, TRUE);
    guint64 v2 = send(b, 3, WRITER, 1, TRUE);
    txn_op(b, 4, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
    marker(b, 0);
    marker(b, 1);
    begin(b, 5, WRITER, 2);
    *aborted_value = send(b, 6, WRITER, 0, TRUE);
    txn_op(b, 7, HISTORY_FN_TXN_ABORT, WRITER, 2, HISTORY_OK, 0);
    marker(b, 0);
    poll(b, 10, READER, 0, v1);
    poll(b, 10, READER, 1, v2);
    poll(b, 10, DIRTY, 0, v1);
    poll(b, 11, DIRTY, 0, *aborted_value);
    return v1;
}

static void
test_checker_txn_clean(void **state)
{
    /* Goal: a clean history has no anomaly; fates and counts are right. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 aborted;
    clean_story(&b, &aborted);
    History *h = build_finish(&b);
    Checked c = check(h);
    const TxnCounts *counts = checker_txn_counts(c.txn);
    assert_int_equal(counts->transactions, 2);
    assert_int_equal(counts->fates[TXN_FATE_COMMITTED], 1);
    assert_int_equal(counts->fates[TXN_FATE_ABORTED], 1);
    assert_int_equal(counts->sends, 3);
    assert_int_equal(counts->aborted_read_uncommitted, 1);
    assert_int_equal(counts->fenced_instances, 0);
    assert_int_equal(counts->resumed, 0);
    assert_only(&c, TXN_ANOMALY_COUNT, 0);
    checked_free(&c, h);
}

static void
test_checker_txn_counts_resumed(void **state)
{
    /* Goal: each transaction a new coordinator found prepared and resumed
     * (HISTORY_EVENT_TXN_RESUMED) is counted; other events are not. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 aborted;
    clean_story(&b, &aborted);
    History *h = build_finish(&b);
    HistoryEvent event = {0};
    event.kind = HISTORY_EVENT_TXN_RESUMED;
    event.text = "broker 2 found tx in PrepareCommit";
    history_event(h, &event);
    history_event(h, &event);
    event.kind = HISTORY_EVENT_CONTROLLER;
    history_event(h, &event);
    Checked c = check(h);
    assert_int_equal(checker_txn_counts(c.txn)->resumed, 2);
    assert_only(&c, TXN_ANOMALY_COUNT, 0);
    checked_free(&c, h);
}

static void
test_checker_txn_hanging(void **state)
{
    /* Goal: a leader whose oldest open transaction has been open longer than
     * its transaction.max.timeout.ms at the end is a hanging transaction;
     * one open a shorter time, a follower's, or an offline replica's is
     * not; the longest open time is kept either way. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 aborted;
    clean_story(&b, &aborted);
    History *h = build_finish(&b);
    static const struct {
        gboolean leader;
        gboolean online;
        gint64 open_ms;
    } replicas[] = {
        {TRUE, TRUE, 20000},  /* hanging */
        {TRUE, TRUE, 14999},  /* open, not past the maximum */
        {FALSE, TRUE, 90000}, /* a follower's view */
        {TRUE, FALSE, 90000}, /* its broker is down */
        {TRUE, TRUE, -1},     /* nothing open */
    };
    for (guint i = 0; i < G_N_ELEMENTS(replicas); i++) {
        HistoryReplica replica = {0};
        replica.partition = (gint32)(10 + i);
        replica.broker = 2;
        replica.is_leader = replicas[i].leader;
        replica.online = replicas[i].online;
        replica.txn_open_ms = replicas[i].open_ms;
        replica.txn_max_timeout_ms = 15000;
        replica.records = g_array_new(FALSE, TRUE, sizeof(HistoryRecord));
        history_add_replica(h, &replica);
    }
    Checked c = check(h);
    assert_int_equal(checker_txn_counts(c.txn)->hanging, 1);
    assert_int_equal(checker_txn_counts(c.txn)->open_ms_max, 20000);
    checked_free(&c, h);
}

static void
test_checker_txn_no_transactions(void **state)
{
    /* Goal: a history without transactions costs nothing and finds nothing. */
    (void)state;
    History *h = history_new();
    history_topic(h, "t");
    guint64 op = history_invoke(h, 0, HISTORY_FN_SEND, WRITER, 0, 0, 0, HISTORY_VALUE(WRITER, 1));
    history_complete(h, op, 1, HISTORY_OK, 0, 0, 0);
    assert_false(history_has_transactions(h));
    Checked c = check(h);
    assert_int_equal(checker_txn_counts(c.txn)->transactions, 0);
    assert_int_equal(checker_txn_pipelines(c.txn)->len, 0);
    checked_free(&c, h);
}

static void
test_checker_txn_g1a(void **state)
{
    /* Goal: a read_committed poll of an aborted write is G1a. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 aborted;
    clean_story(&b, &aborted);
    poll(&b, 12, READER, 0, aborted);
    History *h = build_finish(&b);
    Checked c = check(h);
    assert_only(&c, TXN_G1A, 1);
    const TxnExample *e = &g_array_index(checker_txn_examples(c.txn, TXN_G1A), TxnExample, 0);
    assert_int_equal(e->value, aborted);
    assert_int_equal(e->process, READER);
    checked_free(&c, h);
}

static void
test_checker_txn_commit_refused_is_aborted(void **state)
{
    /* Goal: a commit refused with a non-fencing error is aborted (G1a when
     * read); with a fencing error its fate is unknown (not judged). */
    (void)state;
    for (guint fencing = 0; fencing <= 1; fencing++) {
        Build b;
        build_init(&b);
        txn_op(&b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
        begin(&b, 1, WRITER, 1);
        guint64 v = send(&b, 2, WRITER, 0, TRUE);
        txn_op(&b, 3, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_FAIL,
               fencing ? KAFKA_ERROR_PRODUCER_FENCED : KAFKA_ERROR_NOT_ENOUGH_REPLICAS);
        poll(&b, 10, READER, 0, v);
        History *h = build_finish(&b);
        Checked c = check(h);
        assert_only(&c, TXN_G1A, fencing ? 0 : 1);
        assert_int_equal(checker_txn_counts(c.txn)->fates[TXN_FATE_UNKNOWN], fencing ? 1 : 0);
        checked_free(&c, h);
    }
}

static void
test_checker_txn_uncommitted_read(void **state)
{
    /* Goal: reading before the commit began, or a never-ended transaction's
     * write, is an uncommitted read. */
    (void)state;
    Build b;
    build_init(&b);
    txn_op(&b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
    begin(&b, 1, WRITER, 1);
    guint64 early = send(&b, 2, WRITER, 0, TRUE);
    poll(&b, 3, READER, 0, early); /* before the commit */
    txn_op(&b, 4, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
    marker(&b, 0);
    begin(&b, 5, WRITER, 2);
    guint64 open = send(&b, 6, WRITER, 1, TRUE); /* never ended */
    poll(&b, 7, READER, 1, open);
    History *h = build_finish(&b);
    Checked c = check(h);
    assert_only(&c, TXN_UNCOMMITTED_READ, 2);
    assert_int_equal(checker_txn_counts(c.txn)->fates[TXN_FATE_UNENDED], 1);
    checked_free(&c, h);
}

static void
test_checker_txn_partial_commit_logs(void **state)
{
    /* Goal: a committed transaction with a write missing from the committed
     * logs is a partial commit. */
    (void)state;
    Build b;
    build_init(&b);
    txn_op(&b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
    begin(&b, 1, WRITER, 1);
    send(&b, 2, WRITER, 0, TRUE);
    send(&b, 3, WRITER, 1, FALSE); /* lost */
    txn_op(&b, 4, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
    History *h = build_finish(&b);
    Checked c = check(h);
    assert_only(&c, TXN_PARTIAL_COMMIT, 1);
    checked_free(&c, h);
}

static void
test_checker_txn_partial_visibility(void **state)
{
    /* Goal: a read_committed reader that saw one write of a committed
     * transaction and read past another without it sees it partly; one
     * that did not read past it does not. */
    (void)state;
    for (guint past = 0; past <= 1; past++) {
        Build b;
        build_init(&b);
        guint64 before = send(&b, 0, SUCCESSOR + 10, 1, TRUE); /* a plain write */
        txn_op(&b, 1, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
        begin(&b, 2, WRITER, 1);
        guint64 v0 = send(&b, 3, WRITER, 0, TRUE);
        send(&b, 4, WRITER, 1, TRUE);
        txn_op(&b, 5, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
        marker(&b, 0);
        marker(&b, 1);
        guint64 after = send(&b, 6, SUCCESSOR + 10, 1, TRUE);
        poll(&b, 10, READER, 0, v0);
        poll(&b, 10, READER, 1, before);
        if (past)
            poll(&b, 11, READER, 1, after);
        History *h = build_finish(&b);
        Checked c = check(h);
        assert_only(&c, TXN_PARTIAL_COMMIT, past ? 1 : 0);
        checked_free(&c, h);
    }
}

static void
test_checker_txn_zombie(void **state)
{
    /* Goal: a write of a fenced instance whose commit succeeded is a zombie
     * write; the same before the fence is not. */
    (void)state;
    for (guint fenced = 0; fenced <= 1; fenced++) {
        Build b;
        build_init(&b);
        txn_op(&b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
        if (fenced)
            txn_op(&b, 1, HISTORY_FN_TXN_INIT, SUCCESSOR, 0, HISTORY_OK, 0);
        begin(&b, 2, WRITER, 1);
        send(&b, 3, WRITER, 0, TRUE);
        txn_op(&b, 4, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
        marker(&b, 0);
        if (!fenced)
            txn_op(&b, 5, HISTORY_FN_TXN_INIT, SUCCESSOR, 0, HISTORY_OK, 0);
        History *h = build_finish(&b);
        Checked c = check(h);
        assert_only(&c, TXN_ZOMBIE_WRITE, fenced ? 1 : 0);
        assert_int_equal(checker_txn_counts(c.txn)->fenced_instances, 1);
        checked_free(&c, h);
    }
}

static void
test_checker_txn_internal_order(void **state)
{
    /* Goal: one transaction's sends to a partition committed out of send
     * order are int_nonmonotonic_send; with another write of the producer
     * between them, int_send_skip. */
    (void)state;
    for (guint skip = 0; skip <= 1; skip++) {
        Build b;
        build_init(&b);
        txn_op(&b, 0, HISTORY_FN_TXN_INIT, WRITER, 0, HISTORY_OK, 0);
        begin(&b, 1, WRITER, 1);
        guint64 a = send(&b, 2, WRITER, 0, FALSE);
        guint64 second = send(&b, 3, WRITER, 0, FALSE);
        if (skip) {
            log_append(&b, 0, a);
            log_append(&b, 0, HISTORY_VALUE(WRITER, 99)); /* not of this transaction */
            log_append(&b, 0, second);
        } else {
            log_append(&b, 0, second);
            log_append(&b, 0, a);
        }
        txn_op(&b, 4, HISTORY_FN_TXN_COMMIT, WRITER, 1, HISTORY_OK, 0);
        marker(&b, 0);
        History *h = build_finish(&b);
        Checked c = check(h);
        assert_only(&c, skip ? TXN_INT_SEND_SKIP : TXN_INT_NONMONOTONIC_SEND, 1);
        checked_free(&c, h);
    }
}

/* Pipeline "pipe": the member polls two inputs of topic "in"; the pipe's
 * producer writes outputs keyed by them. */
static void
pipeline_inputs(Build *b, guint64 *in1, guint64 *in2)
{
    history_set_process_group(b->h, MEMBER, "pipe");
    history_set_process_pipeline(b->h, PIPE_OUT, "pipe");
    history_set_process_transactional_id(b->h, PIPE_OUT, "pipe-1");
    *in1 = HISTORY_VALUE(SUCCESSOR + 20, 1);
    *in2 = HISTORY_VALUE(SUCCESSOR + 20, 2);
    log_append(b, PARTITIONS, *in1);
    log_append(b, PARTITIONS, *in2);
    poll(b, 1, MEMBER, PARTITIONS, *in1);
    poll(b, 1, MEMBER, PARTITIONS, *in2);
}

static void
output(Build *b, gint64 ms, guint64 input)
{
    guint64 value = HISTORY_VALUE(PIPE_OUT, ++b->counter[PIPE_OUT % 64]);
    guint64 op = history_invoke(b->h, MS(ms), HISTORY_FN_SEND, PIPE_OUT, 0, 0, input, value);
    history_complete(b->h, op, MS(ms) + 100000, HISTORY_OK, 0, (gint64)b->logs[0]->len, 0);
    log_append(b, 0, value);
}

static void
test_checker_txn_pipeline_at_least_once(void **state)
{
    /* Goal: an input with two visible outputs is a pipeline duplicate; one
     * below the committed position without output is lost. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 in1, in2;
    pipeline_inputs(&b, &in1, &in2);
    output(&b, 2, in1);
    output(&b, 3, in1);
    /* Committed up to in1 only: in2, without output, is not consumed yet. */
    history_record(b.h, MS(4), HISTORY_FN_COMMIT, MEMBER, 1, 0, 1, 0, 1);
    History *h = build_finish(&b);
    Checked c = check(h);
    assert_only(&c, TXN_PIPELINE_DUPLICATE, 1);
    assert_int_equal(g_array_index(checker_txn_pipelines(c.txn), TxnPipelineCounts, 0).unconsumed,
                     1);
    /* Committed past in2, which has no output: lost. */
    checked_free(&c, h);
    Build b2;
    build_init(&b2);
    pipeline_inputs(&b2, &in1, &in2);
    output(&b2, 2, in1);
    history_record(b2.h, MS(4), HISTORY_FN_COMMIT, MEMBER, 1, 0, 2, 0, 2);
    h = build_finish(&b2);
    c = check(h);
    assert_only(&c, TXN_PIPELINE_LOST, 1);
    const TxnPipelineCounts *p = &g_array_index(checker_txn_pipelines(c.txn), TxnPipelineCounts, 0);
    assert_string_equal(p->pipeline, "pipe");
    assert_int_equal(p->inputs, 2);
    assert_int_equal(p->outputs_visible, 1);
    checked_free(&c, h);
}

static void
test_checker_txn_pipeline_exactly_once(void **state)
{
    /* Goal: outputs of an aborted transaction are not visible: an input
     * output once in an aborted and once in a committed transaction, whose
     * offsets committed with it, is exactly once. */
    (void)state;
    Build b;
    build_init(&b);
    guint64 in1, in2;
    pipeline_inputs(&b, &in1, &in2);
    txn_op(&b, 2, HISTORY_FN_TXN_INIT, PIPE_OUT, 0, HISTORY_OK, 0);
    begin(&b, 3, PIPE_OUT, 1);
    output(&b, 3, in1);
    output(&b, 3, in2);
    txn_op(&b, 4, HISTORY_FN_TXN_ABORT, PIPE_OUT, 1, HISTORY_OK, 0);
    marker(&b, 0);
    begin(&b, 5, PIPE_OUT, 2);
    output(&b, 5, in1);
    output(&b, 5, in2);
    history_record(b.h, MS(5), HISTORY_FN_TXN_OFFSETS, PIPE_OUT, 1, 0, 2, 0, 2);
    txn_op(&b, 6, HISTORY_FN_TXN_COMMIT, PIPE_OUT, 2, HISTORY_OK, 0);
    marker(&b, 0);
    History *h = build_finish(&b);
    Checked c = check(h);
    assert_only(&c, TXN_ANOMALY_COUNT, 0);
    const TxnPipelineCounts *p = &g_array_index(checker_txn_pipelines(c.txn), TxnPipelineCounts, 0);
    assert_true(p->transactional);
    assert_int_equal(p->outputs_visible, 2);
    assert_int_equal(p->unconsumed, 0);
    checked_free(&c, h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checker_txn_clean),
        cmocka_unit_test(test_checker_txn_counts_resumed),
        cmocka_unit_test(test_checker_txn_no_transactions),
        cmocka_unit_test(test_checker_txn_g1a),
        cmocka_unit_test(test_checker_txn_commit_refused_is_aborted),
        cmocka_unit_test(test_checker_txn_uncommitted_read),
        cmocka_unit_test(test_checker_txn_partial_commit_logs),
        cmocka_unit_test(test_checker_txn_partial_visibility),
        cmocka_unit_test(test_checker_txn_zombie),
        cmocka_unit_test(test_checker_txn_internal_order),
        cmocka_unit_test(test_checker_txn_pipeline_at_least_once),
        cmocka_unit_test(test_checker_txn_pipeline_exactly_once),
        cmocka_unit_test(test_checker_txn_hanging),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
