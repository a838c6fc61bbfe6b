/*
 * explain: for each example of an anomaly, the chain of events from the
 * history, in plain sentences, so a user understands a loss without opening
 * the trace.
 *
 * For a lost write the chain is: the send and its answer; the leader's
 * acknowledgement covering the record (broker, epoch, offsets, HW and ISR at
 * the time, acks level) — found as the last ACK event of the partition that
 * covers the offset the client was told, at or before the answer (for acks=0,
 * which tells no offset, the first acks=0 append on the partition after the
 * send, which is the record's own when one producer writes the partition);
 * then, in time order, what followed: crashes, pauses, restarts, faults and
 * session expiries of the partition's replicas (NODE, FAULT, SESSION events
 * about them, or about no broker in particular), elections with the new
 * leader's LEO (and whether that LEO held the record), unclean elections,
 * offline periods, truncations that removed the record's offset and
 * retention deletions of a segment holding the offset (a record lost before
 * retention reached it is still lost; the deletion only tells what became
 * of the offset) — up to
 * the last truncation that removed it (or the last election of a leader
 * without it); and last, what the final committed log holds at the offset.
 * Other anomalies get the sends concerned, the acknowledgements that wrote
 * the records in question (the ACK of the record's leader epoch covering its
 * offset), the elections and truncations at the offset, and the final log.
 * A chain is at most EXPLAIN_STEPS_MAX sentences; longer ones end with a
 * count of the events left out.
 *
 * The Explainer indexes the events by partition once (linear in the events),
 * so explaining an example costs a binary search plus the events it walks.
 */
#ifndef EXPLAIN_H
#define EXPLAIN_H

#include <glib.h>

#include "checker.h"
#include "checker_consumer.h"
#include "checker_txn.h"
#include "history.h"

#define EXPLAIN_STEPS_MAX 16

typedef struct Explainer Explainer;

/* Indexes the events of the result's history. Transfer full; `result` (and
 * its history) must outlive the Explainer. */
Explainer *explain_new(const CheckerResult *result);

/* Frees the Explainer; accepts NULL. */
void explain_free(Explainer *explainer);

/* The chain of sentences explaining `example` (a GPtrArray of strings that
 * frees them; transfer full). Never empty. */
GPtrArray *explain_example(const Explainer *explainer, const CheckerExample *example);
/* explain_example, and in *events (a GArray of guint, transfer full) the
 * index in history_events each sentence tells, G_MAXUINT for a sentence of
 * no event (the send, the final log). */
GPtrArray *explain_example_events(const Explainer *explainer, const CheckerExample *example,
                                  GArray **events);

/* The chain of sentences explaining an expired record (an example of
 * checker_result_expired_examples): its send and acknowledgement, the
 * retention deletion of its segment (which broker, which segment and
 * offsets, when, and by which of retention.ms and retention.bytes), and the
 * committed log's start offset at the end. (transfer full; never empty) */
GPtrArray *explain_expired(const Explainer *explainer, const CheckerExample *example);

/* Indices into history_events of one partition's events, in time order, or
 * NULL when it has none (transfer none). */
const GArray *explain_partition_events(const Explainer *explainer, guint16 topic, gint32 partition);
/* The same partition's elections, offline spells, truncations, retention
 * deletions and controller events alone (the milestones a chain tells), in
 * order; NULL when it has none. */
const GArray *explain_partition_milestones(const Explainer *explainer, guint16 topic,
                                           gint32 partition);

/* A sentence for event `index` of history_events: its own text, or for an
 * ACK (which carries none) one built from its fields (transfer full). */
char *explain_event_sentence(const Explainer *explainer, guint index);

/* A short name of an event kind: "ack", "elected", "truncated", ... */
const char *explain_event_kind_name(guint32 kind);

/* The chain of sentences explaining a consumer group example of `group`
 * (explain_consumer.c): the send (lost and duplicate consumption), the group
 * members' polls and processings of the record, the commit or assignment
 * that moved the group's position past it (lost) or the assignment that
 * started below it after the group's last commit (duplicate), the two polls
 * compared (poll_skip, nonmonotonic_poll), the faults that hit the group's
 * members and the partition's elections and truncations in between, in time
 * order, then a conclusion. `explainer` may be NULL. Never empty. (transfer
 * full: a GPtrArray of strings that frees them) */
GPtrArray *explain_consumer_example(const Explainer *explainer, const ConsumerCheck *check,
                                    const ConsumerGroupResult *group,
                                    const ConsumerExample *example);

/* The chain of sentences explaining a reset caused by retention (an
 * example of ConsumerGroupResult.reset_examples, explain_consumer.c): the
 * deletion that passed the member's position, the OFFSET_OUT_OF_RANGE answer
 * with the log start, and the jump auto.offset.reset made. Never empty.
 * (transfer full) */
GPtrArray *explain_consumer_reset(const ConsumerCheck *check, const ConsumerExample *example);

/* The chain of sentences explaining a transactional or pipeline example
 * (explain_txn.c): the transaction concerned — its beginning, its sends,
 * how its commit or abort went (invoked when, completed how) — then, by
 * anomaly, the poll that read it (G1a, uncommitted_read), the successor's
 * initTransactions that fenced the writer (zombie_write), the absent or
 * skipped write (partial_commit), the two sends and what lies between
 * (int_*), or the input's polls and its outputs with their transactions'
 * fates (pipeline_*); then the crashes, pauses and restarts of the
 * processes involved in that span. Never empty. (transfer full) */
GPtrArray *explain_txn_example(const TxnCheck *check, const TxnExample *example);

/* Checks the numbered invariants of explain.c; O(events). */
void explain_check_invariants(const Explainer *explainer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Explainer, explain_free)

#endif
