/*
 * checker_txn: transactions' verdicts, from a run's history and the producer
 * checker's result (each value's send, the committed logs).
 *
 * Transactions. The TXN_* ops of each producer process (history.h) give its
 * transactions; a send belongs to the transaction whose TXN_BEGIN its
 * process invoked last, until that process invokes TXN_COMMIT, TXN_ABORT or
 * TXN_INIT. A transaction's fate, as its client knows it:
 *  - committed: its TXN_COMMIT completed OK;
 *  - aborted: TXN_ABORT was invoked, or TXN_COMMIT failed with an error
 *    that is not fencing (the commit was refused before EndTxn was sent);
 *  - unknown: TXN_COMMIT completed INFO, was never completed (a crash), or
 *    failed with a fencing error (EndTxn may have reached the coordinator,
 *    which may have completed the commit before the fence);
 *  - unended: neither was invoked (the producer crashed or was fenced
 *    first, or the run ended): it can never commit.
 * Control records (commit and abort markers) are in the committed logs with
 * value 0 — no client value is 0 — and are never counted as data here.
 *
 * Anomalies, named as in Jepsen's Kafka checker where they mean the same:
 *  - G1a (aborted read): a read_committed consumer polled a write of an
 *    aborted transaction; once per poll;
 *  - uncommitted_read: a read_committed consumer polled a write of an
 *    unended transaction, or polled it before its transaction's
 *    TXN_COMMIT was invoked; once per poll;
 *  - partial_commit (atomicity): a committed transaction with some writes
 *    in the committed logs and others absent; or whose writes a
 *    read_committed consumer saw only partly: it polled one of them, and,
 *    within one continuous assignment of another write's partition (between
 *    two ASSIGNs), polled offsets below and above that write's offset but
 *    not the write; once per transaction;
 *  - zombie_write: a write a producer invoked after another process with
 *    the same transactional.id completed TXN_INIT (so the first was fenced)
 *    that became visible: its transaction's commit completed OK, or a
 *    read_committed consumer polled it; once per write;
 *  - int_nonmonotonic_send: two consecutive sends of one transaction to one
 *    partition (send order) committed at decreasing offsets; once per pair;
 *  - int_send_skip: between two such sends' committed offsets, the log
 *    holds a data record of the same producer that is not one of them (a
 *    retry's duplicate, a write of another of its transactions); once per
 *    pair.
 * aborted_read_uncommitted counts read_uncommitted polls of writes of
 * aborted or unended transactions: what read_uncommitted allows, shown for
 * comparison, not an anomaly.
 *
 * Pipelines (history_set_process_pipeline): a consume-transform-produce
 * job is named by its consumer group id; its inputs are the distinct values
 * its group's members polled; its outputs the sends of its producer
 * processes, each naming its input by its key. An output is visible when
 * its value is in a committed log and it belongs to no transaction or to a
 * committed one; maybe visible when its transaction's fate is unknown. The
 * group's committed position in a partition is the highest offset of its
 * members' OK COMMIT ops and of the TXN_OFFSETS ops of its producers'
 * committed transactions.
 *  - pipeline_duplicate: an input with two or more visible outputs;
 *  - pipeline_lost: an input below its group's committed position with no
 *    output visible or maybe visible.
 * Counts: inputs, visible outputs, and inputs not yet consumed (at or above
 * the committed position, without output).
 *
 * Cost: nothing without transactions or pipelines (history_has_transactions);
 * else one pass over the operations with hash lookups by value and op, and
 * memory proportional to the transactional sends and read_committed polls.
 */
#ifndef CHECKER_TXN_H
#define CHECKER_TXN_H

#include <glib.h>

#include "checker.h"
#include "history.h"

typedef enum {
    TXN_G1A = 0,
    TXN_UNCOMMITTED_READ,
    TXN_PARTIAL_COMMIT,
    TXN_ZOMBIE_WRITE,
    TXN_INT_NONMONOTONIC_SEND,
    TXN_INT_SEND_SKIP,
    TXN_PIPELINE_DUPLICATE,
    TXN_PIPELINE_LOST,
    TXN_ANOMALY_COUNT,
} TxnAnomaly;

typedef enum {
    TXN_FATE_COMMITTED = 0,
    TXN_FATE_ABORTED,
    TXN_FATE_UNKNOWN,
    TXN_FATE_UNENDED,
    TXN_FATE_COUNT,
} TxnFate;

/* One transaction (checker_txn_transaction). */
typedef struct {
    guint32 process;
    guint64 number;      /* its producer's count */
    guint64 begin_op;
    guint64 end_op;      /* TXN_COMMIT or TXN_ABORT, 0: none */
    gint64 begin_ns;
    gint64 end_invoke_ns;   /* -1: none */
    gint64 end_complete_ns; /* -1: none */
    TxnFate fate;
    GArray *sends; /* guint64 op ids, in invocation order */
} TxnInfo;

/* One example. Fields by anomaly:
 *   G1a, uncommitted_read: op = the poll (by process at time_ns), op_other =
 *     the send of value; txn = the transaction's index;
 *   partial_commit: txn; op = a write present/seen, op_other = one absent /
 *     skipped; process = the consumer (0 for the log form);
 *   zombie_write: op = the write (value); process = the zombie; op_other =
 *     the successor's TXN_INIT; process_other = the successor; txn;
 *   int_*: op, op_other = the two sends (in send order), offset,
 *     offset_other their committed offsets; value = the record between
 *     (int_send_skip); txn;
 *   pipeline_*: value = the input (at topic-partition offset); op = its
 *     first poll; op_other = an output send (duplicate: the second); count =
 *     visible outputs; pipeline = the group id. */
typedef struct {
    TxnAnomaly anomaly;
    guint16 topic;
    gint32 partition;
    guint32 process;
    guint32 process_other;
    guint64 op;
    guint64 op_other;
    guint64 value;
    gint64 offset;
    gint64 offset_other;
    gint64 time_ns;
    gint32 txn; /* index into checker_txn_transaction, -1: none */
    guint count;
    const char *pipeline; /* the history's string, or NULL */
    char *summary;        /* one sentence */
} TxnExample;

typedef struct {
    guint64 transactions;
    guint64 fates[TXN_FATE_COUNT];
    guint64 sends;          /* sends inside transactions */
    guint64 fenced_instances; /* processes fenced by a newer instance of their id */
    guint64 resumed;          /* prepared transactions a new coordinator completed
                               * (HISTORY_EVENT_TXN_RESUMED) */
    guint64 reads_committed;  /* read_committed polls of transactional writes */
    guint64 aborted_read_uncommitted;
    guint64 anomalies[TXN_ANOMALY_COUNT];
    /* Hanging transactions: partitions whose leader, at the end, held an
     * open transaction for longer than its transaction.max.timeout.ms (the
     * LSO stuck behind it; Kafka's kafka-transactions find-hanging), and
     * the longest time any leader's oldest open transaction had been open. */
    guint64 hanging;
    guint64 open_ms_max;
} TxnCounts;

typedef struct {
    const char *pipeline; /* the group id (the history's string) */
    gboolean transactional;
    guint64 inputs;
    guint64 outputs_visible;
    guint64 outputs_maybe;
    guint64 unconsumed;
    guint64 duplicates;
    guint64 lost;
} TxnPipelineCounts;

typedef struct TxnCheck TxnCheck;

/* Checks `history`; `producer` is the producer checker's result of it;
 * `options` NULL: defaults (examples_max is used). (transfer full) */
TxnCheck *checker_txn_run(const History *history, const CheckerResult *producer,
                          const CheckerOptions *options);
void checker_txn_free(TxnCheck *check);

const TxnCounts *checker_txn_counts(const TxnCheck *check);
/* Every anomaly of the run, summed over the kinds. */
guint64 checker_txn_anomaly_total(const TxnCheck *check);
/* Up to examples_max examples of `anomaly` (TxnExample; transfer none). */
const GArray *checker_txn_examples(const TxnCheck *check, TxnAnomaly anomaly);
const TxnInfo *checker_txn_transaction(const TxnCheck *check, guint index);
/* Pipelines sorted by group id (TxnPipelineCounts; transfer none). */
const GArray *checker_txn_pipelines(const TxnCheck *check);
const History *checker_txn_history(const TxnCheck *check);

/* "G1a", "uncommitted_read", "partial_commit", "zombie_write",
 * "int_nonmonotonic_send", "int_send_skip", "pipeline_duplicate",
 * "pipeline_lost": the names of summary.json and [expect]. */
const char *checker_txn_anomaly_name(TxnAnomaly anomaly);
/* "committed", "aborted", "unknown", "unended". */
const char *checker_txn_fate_name(TxnFate fate);

void checker_txn_check_invariants(const TxnCheck *check);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(TxnCheck, checker_txn_free)

#endif
