/*
 * txn_coord: Kafka's transaction coordinator (TransactionCoordinator,
 * TransactionStateManager and TransactionMarkerChannelManager), run by every
 * broker for the transactional ids whose __transaction_state partition it
 * leads.
 *
 * Which broker. A transactional id belongs to partition
 * Utils.abs(transactionalId.hashCode()) % transaction.state.log.num.partitions
 * of __transaction_state (Java's String.hashCode, group_coord_java_hash); its
 * coordinator is that partition's leader. FindCoordinator(TRANSACTION), sent to
 * any broker, answers from that broker's metadata cache; the first one that
 * finds no __transaction_state creates it as group_coord creates
 * __consumer_offsets (replication factor
 * transaction.state.log.replication.factor capped at the live brokers; its
 * min.insync.replicas is transaction.state.log.min.isr).
 *
 * State. Per transactional id: the producer id and epoch, the transaction
 * timeout, Kafka's TransactionState, the partitions in the transaction and
 * when it started. Every change is first appended to the id's partition of
 * __transaction_state (acks=-1 through replica_append_internal), and acted on
 * only once that append is replicated; a failed append leaves the state as it
 * was. A record is one batch:
 *
 *   r0  key = txn_coord_record_key(id) (never 0),
 *       value = TXN_RECORD_MAGIC << 48 | state << 40 | id chunks << 32 | partitions
 *   r1  producer id;  r2  epoch (u16) | timeout_ms << 16;  r3  start time (ms)
 *   r4… the id, 8 bytes per record; then per partition a record
 *       (partition | name chunks << 32) and its topic name, 8 bytes per record.
 *
 * Transitions (Kafka's TransactionMetadata):
 *
 *   (none) ─InitProducerId─▶ Empty (new producer id, epoch 0)
 *   Empty/Complete* ─InitProducerId─▶ Empty, epoch + 1 (fences older instances)
 *   Empty/Ongoing/Complete* ─AddPartitionsToTxn, AddOffsetsToTxn─▶ Ongoing
 *   Ongoing ─EndTxn(commit)─▶ PrepareCommit ─markers written─▶ CompleteCommit
 *   Ongoing ─EndTxn(abort)─▶ PrepareAbort ─markers written─▶ CompleteAbort
 *   Ongoing ─InitProducerId, or transaction.timeout.ms passed─▶ PrepareAbort
 *           with epoch + 1 (the old instance is fenced) ─▶ CompleteAbort
 *
 * A request with another producer id gets INVALID_PRODUCER_ID_MAPPING, with
 * an older epoch PRODUCER_FENCED; one that arrives while a change is being
 * written, or in Prepare*, CONCURRENT_TRANSACTIONS (the client retries).
 * EndTxn is answered once Prepare* is written; the markers follow.
 *
 * Markers. After Prepare*, a WriteTxnMarkers request goes to the leader of
 * every partition of the transaction (as this broker's metadata cache knows
 * it); a leader answers once its control batch is replicated. A failed or
 * timed-out marker, or one whose connection broke, is sent again after
 * TXN_MARKER_RETRY_MS to the partition's leader as then known, until it is
 * written (a partition that left the metadata is dropped). When all are
 * written, Complete* is appended.
 *
 * Failover. A broker that becomes leader of a __transaction_state partition
 * loads it (as group_coord loads offsets: 1 ms plus 10 ns per byte; until
 * then COORDINATOR_LOAD_IN_PROGRESS), the last record per id winning, and
 * sends the markers of every transaction left in Prepare*. A broker that
 * stops leading it forgets those ids (NOT_COORDINATOR).
 *
 * Timeouts. Every transaction.abort.timed.out.transaction.cleanup.interval.ms
 * the coordinator aborts, with a bumped epoch, each Ongoing transaction older
 * than its transaction.timeout.ms. InitProducerId with a timeout above
 * transaction.max.timeout.ms gets INVALID_TRANSACTION_TIMEOUT.
 *
 * KIP-890 (Kafka 3.6 and 4.0). AddPartitionsToTxn v4 with verifyOnly, from a
 * partition leader (replica_verify.c), answers whether a partition is in the
 * producer's ongoing transaction (handleVerifyPartitionsInTransaction:
 * NONE, INVALID_TXN_STATE where Kafka says TRANSACTION_ABORTABLE and the
 * leader passes on INVALID_TXN_STATE, PRODUCER_FENCED, or
 * CONCURRENT_TRANSACTIONS in Prepare*); without verifyOnly, from the leader
 * of a transaction version 2 produce, it adds the partition like a client's
 * AddPartitionsToTxn. EndTxn of version 2 (Kafka 4.0's endTransaction with
 * a client that supports the epoch bump): Ongoing and Empty need the current
 * epoch, Prepare* and Complete* the one below it (a retry of the EndTxn that
 * bumped it), anything else is PRODUCER_FENCED; Ongoing goes to Prepare* with
 * epoch + 1, the markers carry it, and the answer returns it. A version 2
 * abort with nothing open (Empty or Complete*, current epoch) bumps the
 * epoch and completes without markers (ksim's choice, after KIP-890's rule
 * that every version 2 EndTxn bumps; trunk 1eb7644 answers INVALID_TXN_STATE
 * in Empty and PRODUCER_FENCED in Complete*, which would leave such a client
 * fatally failed).
 *
 * Not modelled: transactional.id.expiration.ms (the Dead state), batching
 * several markers per request, a new producer id when a version 2 epoch is
 * exhausted (no run gets near 32767 transactions of one producer).
 */
#ifndef TXN_COORD_H
#define TXN_COORD_H

#include <glib.h>

#include "broker.h"
#include "broker_services.h"

#define TXN_STATE_TOPIC "__transaction_state"

/* Kafka's TransactionState. */
typedef enum {
    TXN_STATE_EMPTY = 0,
    TXN_STATE_ONGOING,
    TXN_STATE_PREPARE_COMMIT,
    TXN_STATE_PREPARE_ABORT,
    TXN_STATE_COMPLETE_COMMIT,
    TXN_STATE_COMPLETE_ABORT,
    TXN_STATE_DEAD,
} TxnState;

/* Kafka's name of a state ("Empty", "Ongoing", "PrepareCommit", ...). */
const char *txn_state_name(TxnState state);

/* The __transaction_state partition of a transactional id. */
gint32 txn_coord_partition_for(const char *transactional_id, gint32 num_partitions);
/* The key of the id's records (never 0). */
guint64 txn_coord_record_key(const char *transactional_id);

/* One decoded __transaction_state record. */
typedef struct {
    char transactional_id[KAFKA_TXN_ID_MAX + 1];
    gint64 producer_id;
    gint16 producer_epoch;
    gint32 timeout_ms;
    TxnState state;
    gint64 start_ms;
    GArray *partitions; /* KTopicPartition (owned), sorted */
} TxnLogRecord;

/* Decodes a batch of __transaction_state into `out` (its partitions array
 * is created; free with txn_log_record_clear). FALSE when the batch is not a
 * transaction record. */
gboolean txn_coord_decode(const PlogBatch *batch, TxnLogRecord *out);
void txn_log_record_clear(TxnLogRecord *record);

/* What one broker knows of a transactional id, for tests and reports. */
typedef struct {
    gboolean coordinator; /* it leads the id's partition and has loaded it */
    gboolean loading;
    gboolean exists;      /* the id is in its memory */
    TxnState state;
    gint64 producer_id;
    gint16 producer_epoch;
    guint partitions;     /* in the transaction */
    gboolean transition_pending; /* a state change is being written */
    guint markers_pending;       /* partitions whose marker is not yet written */
} TxnCoordInfo;

/* The transaction coordinator of one broker process, which creates it at
 * start with its services and frees it at a crash: it is told of requests
 * and of broken connections (its marker requests), and registers with the
 * replica manager to hear of the __transaction_state partitions this broker
 * starts or stops leading. */
TxnCoord *txn_coord_new(BrokerServices *services);
void txn_coord_free(TxnCoord *coord);
/* TRUE when `msg` is a transaction request or response it handled (the
 * caller frees it). */
gboolean txn_coord_handle_message(TxnCoord *coord, SimNodeId from, SimMsg *msg);
void txn_coord_peer_disconnected(TxnCoord *coord, SimNodeId peer);
void txn_coord_check_invariants(const TxnCoord *coord);

void txn_coord_describe(const Broker *broker, const char *transactional_id, TxnCoordInfo *out);

#endif
