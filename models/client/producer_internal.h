/*
 * producer_internal: the producer's private state, shared by producer.c (the
 * Producer object, node callbacks, send() and completions), producer_accum.c
 * (the RecordAccumulator), producer_sender.c (the Sender: metadata,
 * producer id, draining, responses, retries and timeouts) and producer_txn.c
 * (the TransactionManager). Nothing outside
 * those files includes it.
 */
#ifndef PRODUCER_INTERNAL_H
#define PRODUCER_INTERNAL_H

#include "kafka_proto.h"
#include "partitioner.h"
#include "plog_batch.h"
#include "producer.h"
#include "producer_metadata.h"

typedef struct ProducerPartition ProducerPartition;

/* One record's completion target (Kafka's Thunk). */
typedef struct {
    guint64 op;
    ProducerSendCb send_cb;
    void *user_data;
} ProducerThunk;

/* The thunks of consecutive records of a batch that were invoked as
 * consecutive ops with one callback: ops first_op .. first_op + count - 1.
 * A producer under load appends its sends to one batch after another, so a
 * batch's thunks are usually one run. */
typedef struct {
    guint64 first_op;
    guint32 count;
    ProducerSendCb send_cb;
    void *user_data;
} ProducerThunkRun;

/* A batch of one partition (Kafka's ProducerBatch). */
typedef struct {
    ProducerPartition *partition;
    /* The records as they are sent; producer id, epoch and base sequence are
     * stamped when the batch is first drained and kept across retries. */
    PlogBatch *records;
    /* Records appended while the batch is open, in a plain block so that an
     * append is a store; they move into `records` when the batch is closed
     * (first drained, as Kafka closes its MemoryRecordsBuilder then) or
     * completed (producer_batch_close). */
    PlogRecord *open_records;
    guint32 open_count;
    guint32 open_capacity;
    GArray *thunks;      /* ProducerThunkRun, covering the records in order */
    gint64 size_bytes;   /* plog_batch_size_bytes semantics */
    gint64 buffer_bytes; /* taken from buffer.memory */
    gint64 created_ns;
    gint64 deadline_ns;     /* created + delivery.timeout.ms */
    gint64 last_attempt_ns; /* created, then the time of each re-enqueue */
    guint32 attempts;       /* times sent */
    gint32 retries;         /* times re-enqueued */
    gboolean closed;        /* drained once: takes no more records; open_count is 0 */
    gboolean in_flight;
    gboolean maybe_written; /* some attempt may have reached a log */
} ProducerBatch;

struct ProducerPartition {
    /* What the sender's drain reads of every queued partition on every
     * pass comes first, in one cache line: the queue, when its first batch
     * is ready, and the route. */
    GQueue batches; /* ProducerBatch*, the next to send first */
    /* When the first batch is ready to send (producer_accum_ready_ns),
     * kept as the queue changes: without and with buffer.memory exhausted. */
    gint64 ready_ns;
    gint64 ready_exhausted_ns;
    /* Its leader and the leader's node as metadata version route_version - 1
     * gave them (0: not looked up): the sender's drain asks on every pass. */
    guint64 route_version;
    gint32 route_leader;
    SimNodeId route_node;
    guint in_flight; /* this partition's batches in flight */
    /* The records of its last closed batch (0: none yet), which its next
     * batch reserves room for (batch_new). */
    guint32 last_batch_records;
    guint index;     /* its place in producer_accum_partitions */
    gboolean listed; /* in the accumulator's list of queues that hold batches */
    /* In the accumulator's index of queue heads by deadline, under
     * head_deadline_ns (its head's deadline when last indexed). */
    gboolean head_indexed;
    gint64 head_deadline_ns;
    KTopicPartition tp;
    guint16 history_topic;
    /* Idempotence: the sequences of the producer id `sequence_producer_id`
     * with epoch `sequence_producer_epoch` (a bumped epoch starts at 0). */
    gint64 sequence_producer_id;
    gint16 sequence_producer_epoch;
    gint32 next_sequence;
    gint32 last_acked_sequence; /* -1: none acked */
};

/* A topic's partitions in the accumulator, by partition number, with what
 * send() needs per record cached: the partition count and available
 * partitions as of metadata version `metadata_version`, and the sticky
 * partition (the partitioner's own answer, which changes only through the
 * calls that refresh this cache). */
typedef struct {
    char *name;
    guint16 history_topic;
    GPtrArray *partitions;    /* ProducerPartition*, NULL where unused */
    guint64 metadata_version; /* 0: nothing cached */
    guint32 partition_count;  /* 0: unknown topic */
    const GArray *available;  /* guint32, the metadata's (transfer none) */
    gint32 sticky_partition;  /* -1: ask the partitioner */
} ProducerTopic;

typedef struct ProducerAccum ProducerAccum;
typedef struct ProducerTxn ProducerTxn;

typedef struct {
    gint32 correlation_id;
    struct ProducerConnection *conn;
    ProducerBatch *batch; /* NULL once the batch expired */
    SimTimerId timeout_timer;
    guint64 serial;       /* the order flights were sent in */
} ProducerFlight;

typedef struct ProducerConnection {
    SimNodeId node;
    /* Kafka's NetworkClient sends only on a ready connection: a new one
     * first completes its handshake (ApiVersions; here a Metadata request),
     * and a dead host never becomes ready, so nothing is written to it. */
    gboolean ready;
    gint32 handshake_correlation; /* 0: none in flight */
    SimTimerId handshake_timer;
    GQueue flights;           /* ProducerFlight*, oldest first */
    gint64 blackout_until_ns; /* no new request before (reconnect backoff) */
    guint failures;           /* consecutive, for the exponential backoff */
} ProducerConnection;

typedef enum {
    PRODUCER_ID_NONE = 0, /* not idempotent */
    PRODUCER_ID_NEEDED,
    PRODUCER_ID_REQUESTING,
    PRODUCER_ID_READY,
} ProducerIdState;

/* A send waiting where Kafka's send() would block. */
typedef struct {
    guint64 op;
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
    gint32 partition; /* explicit, or -1 */
    guint64 key;
    guint64 value;
    guint32 size_bytes;
    ProducerSendCb send_cb;
    void *user_data;
    gint64 deadline_ns;     /* sent + max.block.ms */
    KafkaError waiting_for; /* what it fails with at the deadline */
} ProducerBlocked;

/* Everything that exists only while the producer's process runs. */
typedef struct {
    Producer *producer;
    ProducerMetadata *metadata;
    ProducerAccum *accum;
    PartitionerSticky *sticky;
    PartitionerRoundRobin *round_robin;
    GQueue blocked;         /* ProducerBlocked*, oldest first */
    GPtrArray *connections; /* ProducerConnection* (owned), in order of first use */
    /* The same connections by node id (NULL: none yet); never removed. A
     * producer pass looks one up for every queued partition. */
    GPtrArray *connection_of_node;
    /* The flights that carry a batch, by (the batch's delivery deadline,
     * serial): the sender learns the earliest deadline without walking
     * every flight on each pass. */
    GTree *flight_deadlines;
    guint64 flight_serial_next;
    gint32 correlation_next;
    guint node_next;           /* rotation for Metadata and InitProducerId targets */
    guint drain_next;          /* rotation of the first partition drained */
    guint64 records_pending;   /* invoked, not completed, in this incarnation */
    ProducerTopic *last_topic; /* a one-entry cache for send(): most write one topic */
    /* Metadata requests. */
    gboolean metadata_needed;
    gint32 metadata_correlation; /* 0: none in flight */
    SimNodeId metadata_node;
    SimTimerId metadata_timer;
    gint64 metadata_attempt_ns;
    /* The idempotent producer's id. */
    ProducerIdState pid_state;
    gint64 producer_id;
    gint16 producer_epoch;
    gint32 pid_correlation;
    SimNodeId pid_node;
    SimTimerId pid_timer;
    gint64 pid_retry_ns;
    KafkaError pid_reset_error; /* why the last reset happened */
    /* Transactions (producer_txn.c); NULL without transactional.id. */
    ProducerTxn *txn;
    /* Sender scheduling. */
    gboolean wakeup_pending;
    SimTimerId poll_timer;
    gint64 poll_ns; /* when poll_timer fires; G_MAXINT64: none */
    gint64 wake_ns; /* the earliest deadline seen by the current run */
} ProducerState;

struct Producer {
    SimWorld *world;
    SimNodeId node;
    char *name;
    guint32 process;
    ProducerConfig config; /* resolved */
    GArray *bootstrap;     /* SimNodeId */
    History *history;
    SimRng *rng; /* the world's "producer/<name>" stream */
    ProducerListener listener;
    ProducerStats stats;
    GHashTable *attempt_errors; /* KafkaError -> count; looked up only */
    GPtrArray *txn_log;         /* ProducerTxnInfo* (owned), every transaction begun */
    guint32 incarnation;        /* restarts so far */
    ProducerState *state;       /* NULL while crashed */
};

/* ---- producer.c ---- */
/* Completes every record of `batch` (OK with offsets from `base_offset`, or
 * FAIL/INFO with `error`) and releases it. */
void producer_complete_batch(ProducerState *state, ProducerBatch *batch, HistoryType type,
                             gint64 base_offset, KafkaError error);
/* Places blocked sends that can proceed, fails those past max.block.ms. */
void producer_process_blocked(ProducerState *state);
gboolean producer_idempotent(const Producer *producer);
void producer_count_attempt_error(Producer *producer, KafkaError error);

/* ---- producer_accum.c ---- */
/* The records appended to `batch` so far. */
guint32 producer_batch_record_count(const ProducerBatch *batch);
/* Closes `batch` to appends: its records move into batch->records. */
void producer_batch_close(ProducerBatch *batch);
ProducerAccum *producer_accum_new(const ProducerConfig *config);
/* Frees every batch without completing it (a crash). */
void producer_accum_free(ProducerAccum *accum);
ProducerTopic *producer_accum_topic(ProducerAccum *accum, const char *name, History *history);
/* The topics the producer was asked to send to, in the order of the first
 * send to each.
 * (transfer none: ProducerTopic*) */
const GPtrArray *producer_accum_topics(const ProducerAccum *accum);
ProducerPartition *producer_accum_partition(ProducerAccum *accum, ProducerTopic *topic,
                                            gint32 partition);
/* Every partition in use, in topic-partition order. (transfer none) */
const GPtrArray *producer_accum_partitions(const ProducerAccum *accum);
/* Appends to `out` the partitions that hold batches, in the order of
 * producer_accum_partitions rotated to start at index `start` (that order
 * with the empty ones left out): the sender's walks look at these only, so
 * a partition with nothing queued costs a pass nothing, where Kafka's
 * RecordAccumulator.ready walks every partition of the batches map. */
void producer_accum_queued_partitions(const ProducerAccum *accum, guint start, GPtrArray *out);
/* The head of `partition`'s queue may have changed (a batch was queued,
 * re-enqueued, drained, expired or dropped): the index of queue heads by
 * deadline follows it. Every change to a queue but the accumulator's own
 * appends and re-enqueues must call it. */
void producer_accum_head_changed(ProducerAccum *accum, ProducerPartition *partition);
/* Fills the empty `out` with the partitions whose queue's first batch is due by
 * `now_ns` (its delivery.timeout.ms deadline at or before it), in index
 * order. */
void producer_accum_due_partitions(const ProducerAccum *accum, gint64 now_ns, GPtrArray *out);
/* The earliest deadline of a queue's first batch; G_MAXINT64: none queued. */
gint64 producer_accum_earliest_head_deadline(const ProducerAccum *accum);
/* TRUE when the partition's last batch is open and has room for a record of
 * `size_bytes` (Kafka's MemoryRecordsBuilder.hasRoomFor; the first record of a
 * batch always fits). */
gboolean producer_accum_has_room(const ProducerAccum *accum, const ProducerPartition *partition,
                                 guint32 size_bytes);
/* TRUE when buffer.memory can hold a new batch for a record of `size_bytes`. */
gboolean producer_accum_can_allocate(const ProducerAccum *accum, guint32 size_bytes);
/* Appends a record to the partition's open batch when `room` (what
 * producer_accum_has_room said), else to a new batch (the caller checked
 * producer_accum_can_allocate). Returns TRUE when the append made a batch
 * ready by size (a new batch behind another, or a full one). */
gboolean producer_accum_append(ProducerAccum *accum, ProducerPartition *partition, gboolean room,
                               guint64 key, guint64 value, guint32 size_bytes,
                               const ProducerThunk *thunk, gint64 now_ns);
/* When the partition's first batch may be drained (Kafka's ready()): <= now
 * means now; `exhausted` when sends wait for buffer memory. G_MAXINT64 when
 * the partition has no batch. */
gint64 producer_accum_ready_ns(const ProducerPartition *partition, gboolean exhausted);
/* Puts a failed batch back for a retry: at the front, or, with idempotence,
 * in sequence order (Kafka's reenqueue / insertInSequenceOrder). */
void producer_accum_reenqueue(ProducerAccum *accum, ProducerBatch *batch, gint64 now_ns,
                              gboolean idempotent);
/* Returns a completed batch's memory to buffer.memory and frees it. */
void producer_accum_release(ProducerAccum *accum, ProducerBatch *batch);
gint64 producer_accum_buffer_used(const ProducerAccum *accum);
guint64 producer_accum_records_queued(const ProducerAccum *accum);
void producer_accum_check_invariants(const ProducerAccum *accum, gboolean idempotent);

/* ---- producer_txn.c ---- */
ProducerTxn *producer_txn_new(ProducerState *state);
void producer_txn_free(ProducerTxn *txn);
void producer_txn_log_free(GPtrArray *log);
/* send(): NONE when a record may join the open transaction, else the error
 * to fail it with. */
KafkaError producer_txn_check_send(const ProducerState *state);
/* A send was invoked as `op` in the open transaction. */
void producer_txn_note_op(ProducerState *state, guint64 op);
/* A record was appended to `partition`: it joins the transaction. */
void producer_txn_partition_used(ProducerState *state, const ProducerPartition *partition);
/* TRUE when the partition's batches may be sent now. */
gboolean producer_txn_may_drain(const ProducerState *state, const ProducerPartition *partition);
/* A batch ended without success (`error`); `sequenced` when it held a
 * sequence of the current producer id and epoch. */
void producer_txn_batch_failed(ProducerState *state, KafkaError error, gboolean sequenced);
/* The transaction manager's part of a sender pass: fails undrained batches
 * when the transaction cannot commit, sends the next transactional request. */
void producer_txn_run(ProducerState *state, gint64 now);
gboolean producer_txn_handle_message(ProducerState *state, SimNodeId from, const SimMsg *msg);
void producer_txn_handle_disconnect(ProducerState *state, SimNodeId peer);
void producer_txn_check_invariants(const ProducerState *state);

/* ---- producer_sender.c ---- */
void producer_sender_send_message(ProducerState *state, SimNodeId to, SimMsg *msg);
SimNodeId producer_sender_least_loaded_node(ProducerState *state, gint64 now);
ProducerState *producer_state_new(Producer *producer);
/* Frees the incarnation's memory without recording anything (a crash). */
void producer_state_free(ProducerState *state);
/* Runs the sender soon (Kafka's sender.wakeup()), from any context. */
void producer_sender_wakeup(ProducerState *state);
/* One pass of the sender loop; only from a node event, never re-entrantly. */
void producer_sender_run(ProducerState *state);
/* A new earliest time the sender must run by. */
void producer_sender_wake_at(ProducerState *state, gint64 time_ns);
void producer_sender_handle_message(ProducerState *state, SimNodeId from, SimMsg *msg);
void producer_sender_handle_disconnect(ProducerState *state, SimNodeId peer);
/* Asks for a metadata refresh (subject to retry.backoff.ms). */
void producer_sender_request_metadata(ProducerState *state);
/* The producer id can no longer be used (a sequence gap): obtain a new one. */
void producer_sender_reset_producer_id(ProducerState *state, KafkaError error);
void producer_sender_check_invariants(const ProducerState *state);

#endif
