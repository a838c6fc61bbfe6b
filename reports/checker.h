/*
 * checker: a run's verdicts and produce statistics, from its history.
 *
 * The committed log of a partition is the log of one replica below its HW:
 * the online replica that is leader (several claim it, e.g. a zombie: the
 * one with the highest HW); when no online replica leads, the online replica
 * with the highest HW; when no replica is online at all, the offline replica
 * with the highest HW (what its disk holds), and the partition is counted in
 * `partitions_offline`. Ties go to the lowest broker id.
 *
 * Leaderless: when no online replica leads a partition at the end, its
 * committed log is a follower's (or a disk's), whose HW only follows what a
 * leader told it: the records a leader acknowledged just before it was lost
 * are usually above it. Nothing has decided them yet: the next leader will
 * (every ISR member held them when they were acknowledged, and a new leader
 * truncates nothing of its own log). An acked record that is in
 * no committed log but that some replica of such a partition holds at an
 * offset at or above the committed log's HW (so no committed record
 * contradicts it) is counted in `leaderless` instead of lost_write: a run
 * that ends before the partition has a leader again (a broker back within
 * its KRaft session, whose old registration keeps its leaderships until the
 * session lapses) shows it unavailable, not lost. The liveness check names
 * such partitions.
 *
 * Produce outcomes (HISTORY_FN_SEND operations):
 *  - acked: completed OK, or INFO without an error: the driver completes an
 *    acks=0 send that way, and the Kafka client reports such a send as a
 *    success (offset -1), so the user believes it written. These are counted
 *    in `acked_without_offset` as well.
 *  - failed: completed FAIL (the client was told it was not written);
 *  - unknown: completed INFO with an error (timeout, disconnect), or never
 *    completed (`pending`).
 *
 * Anomalies, named after Jepsen's Kafka checker where they mean the same:
 *  - lost_write: an acked record whose value is in no committed log;
 *  - duplicate: a value at more than one offset of the committed logs, counted
 *    once per value;
 *  - nonmonotonic_send: walking a committed log in offset order, a record of
 *    producer P sent (invoked) before some record of P at a lower offset;
 *    counted once per such record. A duplicate's later copies are not
 *    compared again;
 *  - inconsistent_offsets: an online replica holding, below both its HW and
 *    the committed log's HW, a different value than the committed log at an
 *    offset (counted once per replica and offset); or an OK send whose value
 *    is committed, but at no copy of it at the partition and offset the
 *    client was told. An acked value that is nowhere is a lost_write only,
 *    whatever its offset now holds, so one loss is not counted twice; and a
 *    duplicate one of whose copies is where the client was told (a retried
 *    batch the first attempt had appended) is a duplicate only;
 *  - failed_but_present: a FAILed send whose value is committed. It is not in
 *    Jepsen's list, but a FAIL promises the record was not written, so the
 *    client was misled (e.g. it retries and duplicates).
 * Counts, not anomalies: unknown but committed, unknown and absent, failed
 * and absent, committed values no recorded send produced, and the invariant
 * breaches the cluster recorded (HISTORY_EVENT_VIOLATION).
 *
 * Expired: an acked record in no committed log that retention deleted after
 * it was committed, counted in `expired` instead of lost_write. The checker
 * never infers it from offsets: the brokers record each segment their
 * retention deletes, with the records it held (HISTORY_EVENT_RETENTION), and
 * a value is expired only when
 *  - a deletion held it, by the replica whose log is the committed log, or
 *    by the partition's leader of the time (retention deletes only below the
 *    replica's HW, so the record was committed then; a follower that
 *    restarts behind its leader's log start starts over there, so the
 *    committed log may be a replica that never deleted it itself), and
 *  - the committed log no longer covers the offset it was deleted at (its
 *    log start is past it).
 * When both a loss and retention touch a record, the user needs to hear of
 * the loss, and gets it: a record truncated away (or overwritten by an
 * unclean election) before retention reached its segment is in no deleted
 * segment, so it stays a lost_write; and when the final committed log still
 * covers the record's offset, what it holds there (another record, or
 * nothing because it ends before it) shows the committed log lost it,
 * whatever a stale replica's retention deleted later: lost_write too. The
 * first deletion that qualifies is the one reported.
 *
 * Statistics: produce latency (invoke to completion) in three histograms by
 * outcome; acked records per window of virtual time (by completion time);
 * availability, the share of windows holding an acked completion among the
 * windows in which some send was outstanding (invoked and not yet answered);
 * recovery, from the last heal to the earliest completion of an acked send
 * invoked at or after it.
 *
 * Cost: one pass over the operations, one over the committed logs, one over
 * each online replica's log, one over the events; memory 4 bytes per
 * operation plus 4 per sent value. It does not change the
 * history, and borrows its replica logs: the history must outlive the result.
 */
#ifndef CHECKER_H
#define CHECKER_H

#include <glib.h>

#include "history.h"
#include "stats.h"

typedef enum {
    CHECKER_LOST_WRITE = 0,
    CHECKER_DUPLICATE,
    CHECKER_NONMONOTONIC_SEND,
    CHECKER_INCONSISTENT_OFFSETS,
    CHECKER_FAILED_BUT_PRESENT,
    CHECKER_ANOMALY_COUNT,
} CheckerAnomaly;

/* How a send ended. */
typedef enum {
    CHECKER_SEND_NONE = 0, /* no send has this operation id */
    CHECKER_SEND_PENDING,  /* invoked, never completed */
    CHECKER_SEND_OK,
    CHECKER_SEND_SENT, /* acks=0: INFO without an error, counted as acked */
    CHECKER_SEND_FAIL,
    CHECKER_SEND_INFO,
} CheckerOutcome;

typedef enum {
    CHECKER_LATENCY_ACKED = 0, /* OK and acks=0 sends */
    CHECKER_LATENCY_FAILED,
    CHECKER_LATENCY_UNKNOWN, /* completed INFO with an error */
    CHECKER_LATENCY_COUNT,
} CheckerLatency;

#define CHECKER_EXAMPLES_DEFAULT 5
/* CheckerOptions.last_heal_ns: look for it in the history / there was none. */
#define CHECKER_HEAL_AUTO (-1)
#define CHECKER_HEAL_NONE (-2)

typedef struct {
    guint examples_max;  /* examples kept per anomaly; CHECKER_EXAMPLES_DEFAULT */
    gint64 window_ns;    /* throughput and availability windows; 1 s */
    int latency_digits;  /* significant digits of the latency histograms; 3 */
    gint64 last_heal_ns; /* >= 0, CHECKER_HEAL_NONE, or CHECKER_HEAL_AUTO (the
                          * default): the last FAULT event whose text says
                          * "heal", or NODE event saying "restart"/"resume" */
} CheckerOptions;

/* One send: its history row and what the checker found (checker_result_send). */
typedef struct {
    guint64 op;
    guint64 value;
    gint64 invoke_ns;
    gint64 complete_ns;      /* -1: never completed */
    gint64 offset;           /* the offset the client was told; -1 */
    gint64 committed_offset; /* where the committed log holds the value first; -1 */
    guint32 process;
    gint32 partition;           /* the completion's, else the invocation's; -1 */
    gint32 error;               /* KafkaError of FAIL / INFO */
    gint32 committed_partition; /* index in checker_result_partitions; -1: absent */
    guint16 topic;
    guint8 outcome; /* CheckerOutcome */
} CheckerSend;

/* One partition's committed log. */
typedef struct {
    guint16 topic;
    gint32 partition;
    gint32 broker;           /* whose log it is */
    gboolean offline;        /* no replica was online; `broker`'s disk is used */
    gboolean leaderless;     /* no online replica led it (offline too) */
    gint64 hw;               /* the committed log is every record below it */
    gint64 log_start;        /* that replica's log start offset */
    const GArray *records;   /* HistoryRecord of that replica, borrowed */
    const GArray *epochs;    /* HistoryEpochStart of that replica, borrowed (may be NULL) */
    guint records_committed; /* the first records_committed of `records` */
} CheckerPartition;

/* One example of an anomaly. Fields by anomaly:
 *   lost_write:   op, value, offset (told the client; -1 for acks=0);
 *   duplicate:    op (0 if no send), value, offset and offset_other (the
 *                 first two), partition of the first;
 *   nonmonotonic: op/value at offset sent first; op_other/value_other sent
 *                 later, at the lower offset_other;
 *   inconsistent: broker >= 0: that replica holds value_other (op_other) at
 *                 offset where the committed log holds value (op);
 *                 broker -1: send op/value was told offset, is committed at
 *                 offset_other (of partition_other), offset holds value_other
 *                 (0 and op_other 0 when nothing);
 *   failed_but_present: op, value, offset (where committed);
 *   expired (checker_result_expired_examples; `anomaly` is
 *                 CHECKER_ANOMALY_COUNT, none): op, value, offset (where the
 *                 deleted segment held it), broker (whose retention deleted
 *                 it), op_other (the index in history_events of that
 *                 HISTORY_EVENT_RETENTION), offset_other (the committed
 *                 log's start offset now). */
typedef struct {
    CheckerAnomaly anomaly;
    guint16 topic;
    gint32 partition;
    gint32 partition_other;
    gint32 broker;
    guint64 op;
    guint64 op_other;
    guint64 value;
    guint64 value_other;
    gint64 offset;
    gint64 offset_other;
    char *summary; /* one sentence */
} CheckerExample;

typedef struct {
    guint64 attempted;
    guint64 acked; /* = lost_write + expired + leaderless + acked_committed */
    guint64 acked_without_offset;
    guint64 acked_committed;
    guint64 expired; /* acked, committed, then deleted by retention (see above) */
    guint64 leaderless; /* acked, held above the HW of a partition no one leads (see above) */
    guint64 failed; /* = failed_absent + failed_but_present */
    guint64 failed_absent;
    guint64 unknown; /* = unknown_committed + unknown_absent */
    guint64 unknown_committed;
    guint64 unknown_absent;
    guint64 pending;                  /* unknown ones never completed */
    guint64 committed;                /* records in all committed logs */
    guint64 committed_unknown_origin; /* committed values no recorded send made */
    guint64 values_reused;            /* sends repeating an earlier send's value */
    guint64 anomalies[CHECKER_ANOMALY_COUNT];
    guint64 invariant_violations;
    guint partitions;
    guint partitions_offline;
} CheckerCounts;

typedef struct {
    gint64 window_ns;
    guint windows_attempted; /* windows in which a send was outstanding */
    guint windows_available; /* of those, windows with an acked completion */
    double availability;     /* available / attempted; -1 when none attempted */
    gint64 last_heal_ns;     /* -1: none */
    gint64 recovery_ns;      /* -1: no heal, or nothing acked was invoked after it */
    gint64 first_invoke_ns;  /* -1: no send */
    gint64 last_invoke_ns;   /* -1: no send */
    gint64 last_complete_ns; /* -1: nothing completed */
    double throughput_per_s; /* acked / (last completion - first invocation);
                              * -1 when nothing was acked or that span is 0 */
} CheckerStats;

typedef struct CheckerResult CheckerResult;

/* Sets the defaults documented above. */
void checker_options_init(CheckerOptions *options);

/* Checks `history`; `options` NULL takes the defaults. Transfer full; the
 * result borrows the history, which must outlive it and not change. */
CheckerResult *checker_run(const History *history, const CheckerOptions *options);

/* Frees the result; accepts NULL. */
void checker_result_free(CheckerResult *result);

/* The history checked (transfer none). */
const History *checker_result_history(const CheckerResult *result);

const CheckerCounts *checker_result_counts(const CheckerResult *result);
const CheckerStats *checker_result_stats(const CheckerResult *result);

/* Up to examples_max examples of `anomaly`, in the order found (GArray of
 * CheckerExample; transfer none). */
const GArray *checker_result_examples(const CheckerResult *result, CheckerAnomaly anomaly);

/* The operation id of every lost write, in send order (GArray of guint64;
 * transfer none): 8 bytes per lost record, so every one can be grouped by
 * its cause (patterns.h), not only the examples. */
const GArray *checker_result_lost_writes(const CheckerResult *result);

/* Up to examples_max expired records, in send order (GArray of
 * CheckerExample; transfer none). */
const GArray *checker_result_expired_examples(const CheckerResult *result);

/* The texts of up to examples_max invariant breaches (transfer none). */
const GPtrArray *checker_result_violations(const CheckerResult *result);

/* Fills *out with send `op`; FALSE when operation `op` is not a send. */
gboolean checker_result_send(const CheckerResult *result, guint64 op, CheckerSend *out);

/* Fills *out with the send that produced `value` (the last one, if several
 * did); FALSE when none did. */
gboolean checker_result_send_of_value(const CheckerResult *result, guint64 value,
                                      CheckerSend *out);

/* The committed logs, sorted by (topic, partition) (GArray of
 * CheckerPartition; transfer none). */
const GArray *checker_result_partitions(const CheckerResult *result);

/* The committed log of one partition, or NULL when no replica of it was
 * recorded. */
const CheckerPartition *checker_result_partition(const CheckerResult *result, guint16 topic,
                                                 gint32 partition);

/* The committed record at `offset` (below the HW), or NULL. */
const HistoryRecord *checker_partition_record_at(const CheckerPartition *partition, gint64 offset);

/* Latency histograms (values in ns) and acked records per window (transfer
 * none). */
const StatsHistogram *checker_result_latency(const CheckerResult *result, CheckerLatency which);
const StatsSeries *checker_result_throughput(const CheckerResult *result);

/* The anomaly's stable name, as in summary.json: "lost_write", ... */
const char *checker_anomaly_name(CheckerAnomaly anomaly);

/* "driver" for a named process, else "process N" (transfer full). */
char *checker_process_label(const History *history, guint32 process);

/* "topic-partition" (transfer full). */
char *checker_partition_label(const History *history, guint16 topic, gint32 partition);

/* Checks the numbered invariants of checker.c; O(sends + partitions). */
void checker_result_check_invariants(const CheckerResult *result);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(CheckerResult, checker_result_free)

#endif
