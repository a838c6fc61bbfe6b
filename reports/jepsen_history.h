/*
 * jepsen_history: a run's client history in the form Jepsen's Kafka
 * workload (jepsen.tests.kafka) reads, so its checker (and Elle) can judge a
 * ksim run and be compared with ksim's own verdict.
 *
 * One operation per line, an EDN map with :index, :time (virtual
 * nanoseconds), :type (:invoke, :ok, :fail, :info), :process, :f and
 * :value, in time order (an operation's invocation before its completion):
 *  - a send of one record: {:f :send, :value [[:send KEY VALUE]]}, completed
 *    :ok with [[:send KEY [OFFSET VALUE]]], :fail (certainly not written),
 *    or :info (unknown: a timeout, acks=0), each :fail/:info with an
 *    :error naming the Kafka error;
 *  - a poll: the records one consumer's poll returned, {:f :poll, :value
 *    [[:poll]]} completed :ok with [[:poll {KEY [[OFFSET VALUE] ...]}]];
 *  - a transaction of a transactional producer: {:f :txn, :value [[:send
 *    KEY VALUE] ...]} from beginTransaction to the end of its commit or
 *    abort: :ok when committed (with the offsets), :fail when aborted,
 *    :info when its fate is unknown; never completed when it never ended;
 *  - an assignment: a consumer's partitions at the start of a generation,
 *    {:f :assign, :value [KEY ...]} completed :ok at once.
 * Offset commits, processing and position resets have no Jepsen op.
 *
 * Keys. Jepsen names a partition by an integer key; here key K is the K-th
 * topic-partition (from 0) the history's operations name, in the order of
 * the topics' first appearance and then by partition number.
 * jepsen_history_keys returns that mapping.
 *
 * Processes. A Jepsen process runs one operation at a time and is never
 * reused after an :info; a ksim client has many sends in flight. So each
 * client gets as many Jepsen processes as it has operations outstanding at
 * once: an operation takes the lowest free process of its client, frees it
 * when it completes :ok or :fail, and retires it on :info (a later one gets
 * a new number), as Jepsen does with a crashed process.
 */
#ifndef JEPSEN_HISTORY_H
#define JEPSEN_HISTORY_H

#include <glib.h>
#include <stdio.h>

#include "checker_txn.h"
#include "history.h"

typedef struct {
    guint16 topic; /* history_topic_name */
    gint32 partition;
} JepsenKey;

/* The topic-partition of every key (JepsenKey, element K is key K).
 * (transfer full) */
GArray *jepsen_history_keys(const History *history);

/* Writes `history` to `out` as above; `txn` (may be NULL: no transactions
 * then, every send its own op) gives the transactions and their fates.
 * FALSE with `error` set when writing fails. */
gboolean jepsen_history_write(const History *history, const TxnCheck *txn, FILE *out,
                              GError **error);

/* The key mapping as a JSON document: {"keys": [{"key": K, "topic": NAME,
 * "partition": P}, ...]}. (transfer full) */
char *jepsen_history_keys_json(const History *history);

#endif
