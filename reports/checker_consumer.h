/*
 * checker_consumer: the consumer groups' verdicts, from a run's history and
 * the producer checker's result (which gives each value's send and the
 * committed logs).
 *
 * Who belongs to a group: every process history_process_group names; a group
 * is its group id, so several [consumer-group] sections sharing a group.id
 * are one group. Consumer ops of processes in no group are ignored.
 *
 * Continuous assignment. A member reads a partition continuously from a
 * HISTORY_FN_ASSIGN op of that member and partition (the consumer records
 * one whenever the partition's position is set at the start of an
 * assignment: from the committed offset, by auto.offset.reset, or by a
 * seek) up to the next such op of the same member and partition. A crash
 * and restart of the member, and a rebalance that revokes and assigns the
 * partition again, both end with a new ASSIGN before the member's next poll
 * of it (a restarted consumer has no positions; an eager rebalance drops
 * them all), so each starts a new continuous assignment. Polls of a
 * partition with no ASSIGN before them (a synthetic history) form one
 * continuous assignment without a starting position.
 *
 * Anomalies, per group, after Jepsen's Kafka checker:
 *  - lost_consumption: an acknowledged send (OK, or acks=0) whose value is in
 *    the committed log of its partition, at an offset at or above the
 *    group's starting offset of that partition (the position of the group's
 *    first ASSIGN of it; 0 without one) and below the group's final committed
 *    offset of it (the value of the OK COMMIT op that completed last; ties:
 *    the later op), that no member of the group processed (no PROCESS op).
 *    Only partitions with an OK commit are judged; counted once per record.
 *  - duplicate_consumption: a value processed more than once within the
 *    group (PROCESS ops of any members); counted once per value.
 *  - poll_skip: within one member's continuous assignment of a partition, a
 *    poll of offset o after a poll of offset p < o (or, for the first poll,
 *    after an ASSIGN at position s <= o, with p = s - 1) where the committed
 *    log holds an offset strictly between p and o; counted once per such
 *    poll.
 *  - nonmonotonic_poll: within one member's continuous assignment, a poll of
 *    an offset at or below the highest offset it polled before in that
 *    assignment; counted once per such poll.
 *  - truncated_read ("read a record that no longer exists"): a poll of a
 *    value at an offset, at or above the final log's start, where the final
 *    log of the partition (the replica the committed log is taken from, its
 *    records above the HW included) holds another value or none: the record
 *    was truncated away after the member read it (an unclean election, or the HW design's truncation); counted
 *    once per such poll.
 *
 * A RESET with LOG_TRUNCATION (KIP-320: the member's validation found the
 * log truncated below its position and moved it back to the end offset the
 * leader gave) starts a new continuous reading at the new position: the
 * offsets above it now hold other records, so reading them again is neither
 * a nonmonotonic poll nor a skip.
 *
 * Resets (HISTORY_FN_RESET ops: the leader answered a member's fetch with
 * OFFSET_OUT_OF_RANGE). A reset is not an anomaly when retention caused it:
 * it moved the position forward, from a position below the log start the
 * answer carried, and a RETENTION event of a leader of the partition (its
 * ISR recorded) at or before the reset had deleted the segment holding that
 * position. Such a reset's jump counts in `reset_skipped` (the offsets it
 * moved past: records retention deleted, and with auto.offset.reset=latest
 * the committed ones still in the log up to the high watermark), the member
 * continues from the new position (no poll_skip), and committed records in
 * the jump that no member processed are not lost_consumption. Any other
 * reset leaves the polls to be judged as they are. A FAILed RESET
 * (auto.offset.reset=none) counts in `reset_failures`: the error reached the
 * application, whose loop stopped.
 *
 * Rebalance pauses. A HISTORY_FN_REVOKE op (a partition left a member's
 * assignment: an eager rebalance revokes all of them, a cooperative or
 * KIP-848 one only those that move, a lost membership or a leave all)
 * starts a pause of that partition for the group, which ends at the next
 * ASSIGN of the partition by any member of the group (its position set
 * again: the committed offset fetched, or a reset); a member whose REVOKE
 * left it no partition is idle until its next ASSIGN. A crash records no
 * REVOKE: its partitions' wait is not counted here.
 *
 * Control records (value 0: transaction markers) are never due to a
 * consumer; nor, to a read_committed one, are writes of transactional
 * producers (history_process_transactional_id): whether it had to read them
 * depends on their transactions' fates, which checker_txn judges. Both are
 * left out of lost_consumption and of the offsets poll_skip counts.
 *
 * Counts per group: members, records polled and processed, distinct values
 * processed (and how many of them were acknowledged and committed), acknowledged committed records in the judged ranges, and COMMIT
 * ops by outcome (OK, FAIL, and unknown: INFO or never completed).
 * End-to-end latency: from the invocation of a value's send to the end of
 * its first processing in the group, one value per record (StatsHistogram,
 * ns), for values whose send is in the history.
 *
 * Cost: one pass over the operations with hash lookups (by value, and by
 * member and partition), then one pass over the judged part of each group's
 * committed partitions; memory per group proportional to the values it
 * processed. The result borrows the history and the producer result.
 */
#ifndef CHECKER_CONSUMER_H
#define CHECKER_CONSUMER_H

#include <glib.h>

#include "checker.h"
#include "history.h"
#include "stats.h"

typedef enum {
    CONSUMER_LOST_CONSUMPTION = 0,
    CONSUMER_DUPLICATE_CONSUMPTION,
    CONSUMER_POLL_SKIP,
    CONSUMER_NONMONOTONIC_POLL,
    CONSUMER_TRUNCATED_READ,
    CONSUMER_ANOMALY_COUNT,
} ConsumerAnomaly;

/* One example. Fields by anomaly:
 *   lost_consumption:      value at offset of topic-partition; op: its send
 *                          (0: none); op_other: the final OK COMMIT;
 *                          offset_other: the final committed offset;
 *                          process: the committer of that commit;
 *   duplicate_consumption: value at offset; op: the second PROCESS (by
 *                          process, at time_ns); op_other: the first (by
 *                          process_other, at time_other_ns);
 *   poll_skip:             op: the poll of offset (by process, at time_ns);
 *                          op_other: the previous poll of offset_other, or
 *                          the ASSIGN at position offset_other + 1; value:
 *                          the first skipped committed value; skipped: how
 *                          many committed offsets were jumped over;
 *   nonmonotonic_poll:     op: the poll of offset (by process, at time_ns);
 *                          op_other: the earlier poll of the higher
 *                          offset_other (at time_other_ns); value: the value
 *                          polled again;
 *   truncated_read:        op: the poll of value at offset (by process, at
 *                          time_ns); offset_other: the final log's HW;
 *                          op_other: 0 (the summary names what the final
 *                          log holds at offset);
 *   a reset by retention (ConsumerGroupResult.reset_examples; `anomaly` is
 *                          CONSUMER_ANOMALY_COUNT, none): op: the RESET (by
 *                          process, at time_ns); offset_other: the position
 *                          out of range; offset: the new position; value:
 *                          the log start offset the answer carried; op_other:
 *                          the index in history_events of the deletion that
 *                          passed the position; skipped: offsets jumped. */
typedef struct {
    ConsumerAnomaly anomaly;
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
    gint64 time_other_ns;
    guint64 skipped;
    char *summary; /* one sentence */
} ConsumerExample;

typedef struct {
    guint members;
    guint64 polled;
    guint64 processed;
    guint64 unique;
    guint64 delivered;     /* of `unique`, values acknowledged and in a committed log */
    guint64 judged;        /* acknowledged committed records lost_consumption looked at */
    guint64 commits_ok;
    guint64 commits_failed;
    guint64 commits_unknown;
    guint64 resets;         /* RESET ops completed OK (auto.offset.reset moved a position) */
    guint64 reset_skipped;  /* offsets resets caused by retention moved past (not anomalies) */
    guint64 reset_failures; /* RESET ops FAILed: auto.offset.reset=none raised to the app */
    /* Rebalance pauses (REVOKE ops): a revoked partition pauses until a
     * member of the group is given it again (its next ASSIGN); a member
     * left without partitions by a REVOKE is idle until its next ASSIGN.
     * Pauses still open at the end are not counted. */
    guint64 revocations;          /* REVOKE ops */
    guint64 pauses;               /* revocations whose partition was assigned again */
    guint64 pause_ns_total;
    guint64 pause_ns_max;
    guint64 member_idle_ns_total; /* summed over the members */
    guint64 member_idle_ns_max;   /* the longest one stretch */
    guint64 anomalies[CONSUMER_ANOMALY_COUNT];
} ConsumerCounts;

typedef struct {
    const char *group; /* the history's string */
    ConsumerCounts counts;
    const StatsHistogram *e2e; /* ns */
    const GArray *examples[CONSUMER_ANOMALY_COUNT]; /* ConsumerExample, in the order found */
    const GArray *reset_examples; /* ConsumerExample: resets caused by retention */
} ConsumerGroupResult;

typedef struct ConsumerCheck ConsumerCheck;

/* Checks every group of `history`; `producer` is the producer checker's
 * result of the same history; `options` NULL takes the defaults (only
 * examples_max and latency_digits are used). (transfer full) */
ConsumerCheck *checker_consumer_run(const History *history, const CheckerResult *producer,
                                    const CheckerOptions *options);
void checker_consumer_free(ConsumerCheck *check);

/* The groups, sorted by group id. */
guint checker_consumer_group_count(const ConsumerCheck *check);
/* (transfer none) */
const ConsumerGroupResult *checker_consumer_group(const ConsumerCheck *check, guint index);
/* The group called `group`, or NULL. (transfer none) */
const ConsumerGroupResult *checker_consumer_find_group(const ConsumerCheck *check,
                                                       const char *group);
/* The counts summed over every group (members, anomalies, ...). */
void checker_consumer_totals(const ConsumerCheck *check, ConsumerCounts *out);
/* Every group's end-to-end latencies merged (transfer none; empty without
 * groups). */
const StatsHistogram *checker_consumer_e2e_all(const ConsumerCheck *check);

const History *checker_consumer_history(const ConsumerCheck *check);
const CheckerResult *checker_consumer_producer(const ConsumerCheck *check);

/* "lost_consumption", "duplicate_consumption", "poll_skip",
 * "nonmonotonic_poll", as in summary.json. */
const char *checker_consumer_anomaly_name(ConsumerAnomaly anomaly);

/* Checks the numbered invariants of checker_consumer.c. */
void checker_consumer_check_invariants(const ConsumerCheck *check);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(ConsumerCheck, checker_consumer_free)

#endif
