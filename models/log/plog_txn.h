/*
 * plog_txn: the transaction state of one partition log, after Kafka's
 * ProducerStateManager (ongoing transactions, first unstable offset) and
 * TransactionIndex (the aborted transactions of the log).
 *
 * A transactional batch (PLOG_BATCH_TRANSACTIONAL without PLOG_BATCH_CONTROL)
 * of a producer with no open transaction opens one at its base offset; a
 * control batch (a COMMIT or ABORT marker) of that producer closes it. An
 * aborted transaction is remembered as (producer id, first offset, last
 * offset = the marker's offset), in marker order.
 *
 * The first unstable offset is the smallest first offset of any open
 * transaction; a leader's last stable offset (LSO) is min(HW, first unstable
 * offset): read_committed consumers read only below it.
 *
 * plog keeps it up to date on every append (leader and follower), and
 * rebuilds it from the batch headers on recovery and truncation (Kafka reads
 * its .txnindex files and producer snapshots; replaying the log gives the same
 * state). Retention forgets aborted transactions that end below the new log
 * start offset.
 *
 * Verification (KIP-890 part 1; Kafka's VerificationStateEntry in
 * ProducerStateManager): before a leader appends the first transactional
 * batch of a producer that has no open transaction here, it asks the
 * transaction coordinator whether the partition is in the producer's
 * transaction; the log remembers, per producer, the unique guard of that
 * verification. Any transactional batch of the producer appended meanwhile (a
 * marker, or another request's first batch) clears it, so a verification
 * answered after a marker cannot let a late batch start a transaction the
 * coordinator already ended (the ABA case Kafka's UnifiedLog describes). The
 * guards are the leader's memory: a rebuild keeps them, nothing persists them.
 */
#ifndef PLOG_TXN_H
#define PLOG_TXN_H

#include <glib.h>

#include "plog_batch.h"

typedef struct PlogTxnState PlogTxnState;

/* Kafka's AbortedTxn. */
typedef struct {
    gint64 producer_id;
    gint64 first_offset;
    gint64 last_offset; /* the ABORT marker's offset */
} PlogAbortedTxn;

/* Bounds asserted on what one log remembers. */
#define PLOG_TXN_ONGOING_MAX (1u << 20)
#define PLOG_TXN_ABORTED_MAX (1u << 24)
#define PLOG_TXN_VERIFICATIONS_MAX (1u << 20)

PlogTxnState *plog_txn_state_new(void);
void plog_txn_state_free(PlogTxnState *state);
void plog_txn_state_clear(PlogTxnState *state);

/* Notes an appended (or recovered) batch described by its header. */
void plog_txn_state_note(PlogTxnState *state, const PlogBatchHeader *header);
/* Forgets aborted transactions whose marker lies below `log_start_offset`. */
void plog_txn_state_evict_before(PlogTxnState *state, gint64 log_start_offset);

/* The first offset of the oldest open transaction, or -1 when none is open. */
gint64 plog_txn_state_first_unstable_offset(const PlogTxnState *state);
/* The oldest open transaction: its first offset and its first batch's
 * largest timestamp (when it began, by its producer's clock); FALSE when none
 * is open. */
gboolean plog_txn_state_oldest_open(const PlogTxnState *state, gint64 *out_first_offset,
                                    gint64 *out_timestamp_ms);
/* Whether `producer_id` has an open transaction here (Kafka's
 * UnifiedLog.hasOngoingTransaction). */
gboolean plog_txn_state_is_ongoing(const PlogTxnState *state, gint64 producer_id);
/* The producer's verification guard, created (unique, > 0) if it has none
 * (Kafka's maybeCreateVerificationStateEntry). */
guint64 plog_txn_state_verification_start(PlogTxnState *state, gint64 producer_id);
/* The producer's verification guard, or 0 when it has none. */
guint64 plog_txn_state_verification_guard(const PlogTxnState *state, gint64 producer_id);
guint plog_txn_state_ongoing_count(const PlogTxnState *state);
/* Appends to `out` (PlogAbortedTxn) the aborted transactions that overlap
 * [start_offset, upper_offset): last_offset >= start and first_offset < upper
 * (Kafka's collectAbortedTxns), in marker order. */
void plog_txn_state_collect_aborted(const PlogTxnState *state, gint64 start_offset,
                                    gint64 upper_offset, GArray *out);
/* Every aborted transaction remembered; NULL before the first. (transfer none)
 * PlogAbortedTxn */
const GArray *plog_txn_state_aborted(const PlogTxnState *state);

/* Invariants: open transactions start within [log_start, leo); aborted ones
 * are in marker order, first <= last < leo. Pass -1 to skip the bounds. */
void plog_txn_state_check_invariants(const PlogTxnState *state, gint64 log_start_offset,
                                     gint64 log_end_offset);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlogTxnState, plog_txn_state_free)

#endif
