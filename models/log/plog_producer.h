/*
 * plog_producer: the producer state of one partition log, a simplified
 * ProducerStateManager: for every producer id, its current epoch and the
 * sequence ranges and offsets of its last PLOG_PRODUCER_BATCHES_MAX batches.
 * It is what an idempotent producer's retries are checked against: a retry of
 * a batch still remembered is a DUPLICATE and is answered with the original
 * offsets instead of being appended again.
 *
 * plog keeps it up to date on every append (leader and follower alike),
 * rebuilds it from the log on recovery and after a truncation, and forgets a
 * producer whose last batch fell below the log start offset (Kafka's
 * truncateHead). Producer expiry (transactional.id.expiration.ms) and
 * snapshots are not modelled: rebuilding from the log gives the same state.
 */
#ifndef PLOG_PRODUCER_H
#define PLOG_PRODUCER_H

#include <glib.h>

typedef struct PlogProducerState PlogProducerState;

/* Kafka keeps the metadata of the last five batches per producer
 * (ProducerStateEntry.NumBatchesToRetain), matching the producer's limit of
 * five in-flight requests with idempotence. */
#define PLOG_PRODUCER_BATCHES_MAX 5
/* Bounds the number of producer ids one log remembers. */
#define PLOG_PRODUCERS_MAX (1u << 20)

typedef struct {
    gint32 first_sequence;
    gint32 last_sequence;
    gint64 first_offset;
    gint64 last_offset;
} PlogProducerBatchInfo;

typedef enum {
    PLOG_PRODUCER_OK = 0,                 /* the next batch in sequence: append it */
    PLOG_PRODUCER_DUPLICATE,              /* a retry of a remembered batch */
    PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE,  /* a gap, or a too-old retry */
    PLOG_PRODUCER_INVALID_PRODUCER_EPOCH, /* an older epoch: a fenced producer */
} PlogProducerStatus;

typedef struct {
    PlogProducerStatus status;
    /* For DUPLICATE, the original batch's offsets; PLOG_NO_OFFSET otherwise. */
    gint64 duplicate_base_offset;
    gint64 duplicate_last_offset;
} PlogProducerVerdict;

PlogProducerState *plog_producer_state_new(void);
void plog_producer_state_free(PlogProducerState *state);

/* Records an appended batch: producer `producer_id` (>= 0) with `epoch`, its
 * first sequence (PLOG_NO_SEQUENCE for a batch without one, such as a
 * transaction marker) and record count, at `base_offset`. A different epoch
 * replaces the producer's epoch and forgets its batches, as Kafka does. */
void plog_producer_state_update(PlogProducerState *state, gint64 producer_id, gint16 epoch,
                                gint32 base_sequence, gint32 record_count, gint64 base_offset);

/* Kafka's checks before a leader appends a producer's batch, in Kafka's order:
 *  1. same epoch and a remembered batch with the same first and last sequence:
 *     DUPLICATE, with that batch's offsets;
 *  2. an epoch older than the producer's: INVALID_PRODUCER_EPOCH;
 *  3. a newer epoch must start at sequence 0, the same epoch must continue at
 *     the last sequence + 1 (wrapping at G_MAXINT32): OK, else
 *     OUT_OF_ORDER_SEQUENCE.
 * A producer id the log does not know, or producer_id < 0, is accepted with
 * any sequence (Kafka since KIP-360: its state may have been removed by
 * retention). Returns out->status. */
PlogProducerStatus plog_producer_state_check(const PlogProducerState *state, gint64 producer_id,
                                             gint16 epoch, gint32 base_sequence,
                                             gint32 record_count, PlogProducerVerdict *out);

/* Forgets every producer whose last batch ends below `log_start_offset` (Kafka's
 * truncateHead), and the remembered batches below it of the others, so that
 * the state equals one rebuilt from the retained log. */
void plog_producer_state_evict_before(PlogProducerState *state, gint64 log_start_offset);
void plog_producer_state_clear(PlogProducerState *state);

guint plog_producer_state_count(const PlogProducerState *state);
/* The largest offset of any remembered producer's last batch, or
 * PLOG_NO_OFFSET (-1) when no producer is known. */
gint64 plog_producer_state_last_offset(const PlogProducerState *state);
/* The producer's epoch and remembered batches, oldest first; FALSE when the
 * producer is unknown. `batches` is borrowed until the next change. */
gboolean plog_producer_state_lookup(const PlogProducerState *state, gint64 producer_id,
                                    gint16 *out_epoch, const GArray **out_batches);
/* TRUE when both hold the same producers with the same epochs and batches. */
gboolean plog_producer_state_equal(const PlogProducerState *a, const PlogProducerState *b);

/* Checks the invariants, and that every remembered batch lies within
 * [log_start_offset, log_end_offset) (pass -1, -1 to skip that check). */
void plog_producer_state_check_invariants(const PlogProducerState *state, gint64 log_start_offset,
                                          gint64 log_end_offset);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(PlogProducerState, plog_producer_state_free)

#endif
