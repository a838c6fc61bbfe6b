/*
 * producer: Kafka's producer client on a simulated node — the application's
 * send() in front of a RecordAccumulator, a Sender that drains ready batches
 * to partition leaders, a metadata cache, and the idempotent producer's id and
 * sequence numbers. Configuration keys and defaults are Kafka 3.x's
 * (producer_config.h).
 *
 * What each send becomes in the history (the Jepsen model the checker reads):
 *   INVOKE  when producer_send is called, with the partition if it is known
 *           then (explicit, or chosen at once), else -1;
 *   OK      the leader acknowledged the record at (partition, offset);
 *   FAIL    the record certainly was not written: no attempt of its batch can
 *           have reached a log (never sent, or every attempt refused);
 *   INFO    the outcome is unknown: an attempt may have been written (a
 *           request timed out or its connection broke after sending, the
 *           broker answered REQUEST_TIMED_OUT or NOT_ENOUGH_REPLICAS_AFTER_APPEND)
 *           before the batch failed or expired; and every record sent with
 *           acks=0, completed when its request is written to the connection.
 * Each op gets exactly one completion — unless the producer crashes first: a
 * crashed client records nothing, and the checker treats an op without a
 * completion as unknown.
 *
 * The application's callback (Kafka's Callback.onCompletion) sees what Kafka's
 * API reports: with acks=0 a record is a success (error NONE, offset -1) even
 * though its history entry is INFO.
 *
 * Keys. Workload keys are numbers; key 0 means "no key", as in the history and
 * the log. A key is serialized as the UTF-8 bytes of its decimal string, as
 * Kafka's StringSerializer does with String.valueOf(key), and placed with
 * partitioner_partition_for_key: key 42 goes where a Java producer sends the
 * string key "42".
 *
 * Requests. One ProduceRequest carries one batch (Kafka groups the ready
 * batches of every partition a broker leads into one request; here each batch
 * travels alone, which changes request counts but not what is written, acked
 * or retried). max.in.flight.requests.per.connection counts produce requests
 * per broker connection; Metadata and InitProducerId requests are not counted.
 *
 * Crash and restart. A crash frees everything the process held (accumulator,
 * in-flight requests, metadata, producer id) and records nothing. A restart is
 * a new incarnation that bootstraps again and, when idempotent, obtains a new
 * producer id: idempotence does not hold across restarts.
 *
 * Transactions (transactional.id set; Kafka's TransactionManager). The
 * application calls producer_init_transactions once per incarnation (it finds
 * the transaction coordinator and obtains the id's producer id with a bumped
 * epoch, fencing any older instance), then per transaction
 * producer_begin_transaction, sends, optionally
 * producer_send_offsets_to_transaction, and producer_commit_transaction or
 * producer_abort_transaction. Before a partition's first batch of a
 * transaction is sent, AddPartitionsToTxn adds it; batches carry the
 * transactional flag. A commit first waits for every send to complete, then
 * sends EndTxn(commit); a send that failed makes the transaction abortable
 * only (the commit fails with its error). An abort fails the sends not yet
 * sent, waits for those in flight, sends EndTxn(abort), and, after a failed
 * send left a sequence gap, obtains a bumped epoch (KIP-360). A fencing error
 * (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH) is fatal: every later operation
 * fails with it. Operations wait as long as it takes (Kafka's max.block.ms
 * bound on them is not modelled). Sends are recorded in the history as
 * always; which transaction each belongs to and how it ended is kept per
 * producer, across incarnations (producer_txn_count / producer_txn_info).
 *
 * Ownership: the Producer owns its node's model state; the world owns the
 * node. The history must outlive the producer.
 */
#ifndef PRODUCER_H
#define PRODUCER_H

#include <glib.h>

#include "history.h"
#include "kafka_error.h"
#include "kafka_proto.h"
#include "producer_config.h"
#include "sim_world.h"

typedef struct Producer Producer;

/* The completion of one send, as the application sees it. */
typedef struct {
    guint64 op;          /* the history op returned by producer_send */
    HistoryType outcome; /* what the history recorded: OK, FAIL or INFO */
    KafkaError error;    /* NONE on success (acks=0 included), else the error */
    gint32 partition;    /* -1 when none was chosen */
    gint64 offset;       /* -1 when unknown */
    guint64 value;
} ProducerResult;

/* Called once per send when it completes; never after a crash. */
typedef void (*ProducerSendCb)(Producer *producer, const ProducerResult *result, void *user_data);

/* Events for the application driving the producer (the workload). */
typedef struct {
    /* A new incarnation runs (after sim_node_restart). */
    void (*started_cb)(Producer *producer, void *user_data);
    /* send() no longer blocks (see producer_blocked). */
    void (*unblocked_cb)(Producer *producer, void *user_data);
    void *user_data;
} ProducerListener;

/* Counters over the producer's whole life (every incarnation). */
typedef struct {
    guint64 records_sent; /* producer_send calls (INVOKEs) */
    guint64 records_ok;
    guint64 records_failed;
    guint64 records_unknown; /* INFO, acks=0 included */
    guint64 batches_created;
    guint64 produce_requests; /* produce requests sent, retries included */
    guint64 retries;          /* batches put back for another attempt */
    guint64 metadata_requests;
    guint64 producer_id_requests;
    guint64 producer_id_resets; /* new producer ids after an unrecoverable error */
} ProducerStats;

/* A producer on a new node named `name`, bootstrapping from `bootstrap`
 * (SimNodeId, the brokers' nodes; copied). `process` identifies it in the
 * history (below 2^24, so that values (process << 40 | n) stay unique).
 * `config` must pass producer_config_validate; the producer runs with its
 * resolved form (producer_config_resolve). */
Producer *producer_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
                       const ProducerConfig *config, History *history);
/* Frees the producer without completing anything (as at the end of a run).
 * Its node stays in the world, which must not run again before it is freed. */
void producer_free(Producer *producer);

SimNodeId producer_node(const Producer *producer);
guint32 producer_process(const Producer *producer);
/* The resolved configuration the producer runs with. (transfer none) */
const ProducerConfig *producer_config(const Producer *producer);
/* TRUE while the process runs (not crashed). */
gboolean producer_running(const Producer *producer);

/* Installs the application's listener (one; replaces the previous). */
void producer_set_listener(Producer *producer, const ProducerListener *listener);

/* Kafka's send(ProducerRecord, Callback), asynchronous: records INVOKE and
 * returns the op id; `send_cb` (may be NULL) runs once on completion.
 * `partition` is an explicit partition or -1 for the partitioner; `key` 0 is
 * no key; `value` is the unique value the checker follows; `size_bytes` the
 * record's size as counted in batch.size and buffer.memory.
 *
 * When Kafka's send() would block — the topic (or the explicit partition) is
 * not yet in the metadata, buffer.memory has no room for a new batch, or an
 * earlier send is still blocked — the record waits in a queue, in order,
 * for up to max.block.ms, and then fails (FAIL, BUFFER_EXHAUSTED or
 * UNKNOWN_TOPIC_OR_PARTITION). A record larger than max.request.size or
 * buffer.memory fails at once (Kafka's RecordTooLargeException; here
 * INVALID_REQUEST). The producer must be running.
 *
 * Synchronous sends (Kafka's send().get()) are this call plus waiting for the
 * callback before the next send; the workload's `sync` mode does that. */
guint64 producer_send(Producer *producer, const char *topic, gint32 partition, guint64 key,
                      guint64 value, guint32 size_bytes, ProducerSendCb send_cb, void *user_data);

/* TRUE while a send is blocked (see producer_send): an application thread
 * would be stuck in send(). */
gboolean producer_blocked(const Producer *producer);
/* Sends invoked in this incarnation and not yet completed. */
guint64 producer_pending(const Producer *producer);
/* The current producer id, or -1 (not idempotent, or not yet obtained). */
gint64 producer_id(const Producer *producer);
void producer_stats(const Producer *producer, ProducerStats *out);
/* How many produce attempts failed with `error` (a broker's error code, or
 * NETWORK_EXCEPTION / REQUEST_TIMED_OUT for a broken or timed-out connection),
 * over the producer's life. */
guint64 producer_attempt_errors(const Producer *producer, KafkaError error);

/* The partition producer_send would choose for `key` (> 0) among
 * `num_partitions`: toPositive(murmur2(decimal string of key)) % num_partitions. */
guint32 producer_partition_for_key(guint64 key, guint32 num_partitions);

/* ---- transactions ---- */

/* The completion of a transactional operation: NONE, or the error that
 * ended it. Runs once, never after a crash; may run before the call that
 * started the operation returns (an operation refused at once). */
typedef void (*ProducerTxnCb)(Producer *producer, KafkaError error, void *user_data);

/* How a transaction ended, as its producer knows it. */
typedef enum {
    PRODUCER_TXN_OPEN = 0,  /* not ended (or the producer crashed first) */
    PRODUCER_TXN_COMMITTED, /* EndTxn(commit) succeeded: every send of it is visible */
    PRODUCER_TXN_ABORTED,   /* aborted: none of its sends may be visible */
    PRODUCER_TXN_FENCED,    /* the producer was fenced (or otherwise failed fatally) in it:
                             * the coordinator aborts it; none may be visible */
} ProducerTxnOutcome;

/* One transaction of the producer, for checkers. */
typedef struct {
    guint64 number;         /* 1, 2, ... over the producer's life (all incarnations) */
    guint32 incarnation;    /* 0 for the first process, +1 per restart */
    gint64 producer_id;     /* as the transaction began */
    gint16 producer_epoch;
    gint64 begin_ns;
    gint64 end_ns;          /* -1 while open */
    ProducerTxnOutcome outcome;
    KafkaError error;       /* why it did not commit, NONE otherwise */
    GArray *ops;            /* guint64 history ops of its sends, in invocation order */
    GArray *offsets;        /* KOffsetPartition sent with sendOffsetsToTransaction */
    char group_id[KAFKA_GROUP_ID_MAX + 1]; /* of those offsets, "" if none */
} ProducerTxnInfo;

/* TRUE when transactional.id is set. */
gboolean producer_transactional(const Producer *producer);
/* Kafka's initTransactions: `done_cb` gets NONE once the producer holds its
 * transactional id's producer id and epoch. */
void producer_init_transactions(Producer *producer, ProducerTxnCb done_cb, void *user_data);
/* Kafka's beginTransaction (local): NONE, or why not (INVALID_TXN_STATE when
 * not initialized or a transaction is open; the fatal error once fenced). */
KafkaError producer_begin_transaction(Producer *producer);
/* Kafka's sendOffsetsToTransaction: AddOffsetsToTxn for `group_id`, then
 * TxnOffsetCommit of `offsets` (KOffsetPartition: the next offsets to read)
 * to the group's coordinator; they become the group's committed offsets only
 * if the transaction commits. */
void producer_send_offsets_to_transaction(Producer *producer, const char *group_id,
                                          const GArray *offsets, ProducerTxnCb done_cb,
                                          void *user_data);
/* The same with the consumer's group metadata (KIP-447: Kafka's
 * sendOffsetsToTransaction(offsets, ConsumerGroupMetadata)): the group
 * coordinator refuses the offsets of a member or generation the group has
 * moved past (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), and the transaction
 * must abort, so a member fenced by a rebalance cannot commit. */
void producer_send_offsets_to_transaction_member(Producer *producer, const char *group_id,
                                                 const char *member_id, gint32 generation_id,
                                                 const GArray *offsets, ProducerTxnCb done_cb,
                                                 void *user_data);
void producer_commit_transaction(Producer *producer, ProducerTxnCb done_cb, void *user_data);
void producer_abort_transaction(Producer *producer, ProducerTxnCb done_cb, void *user_data);
/* The producer's transactions so far, oldest first. (transfer none) */
guint producer_txn_count(const Producer *producer);
const ProducerTxnInfo *producer_txn_info(const Producer *producer, guint i);
/* The current epoch (with producer_id), or -1. */
gint16 producer_epoch(const Producer *producer);

void producer_check_invariants(const Producer *producer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Producer, producer_free)

#endif
