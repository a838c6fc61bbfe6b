/*
 * history: what a run did, for the checker. Two append-only streams:
 *
 *  - client operations, in the Jepsen model: every operation is an INVOKE,
 *    later completed by OK (it happened), FAIL (it certainly did not happen) or
 *    INFO (its outcome is unknown: a timeout, a disconnect after sending, acks=0);
 *  - cluster events that explain outcomes: which leader acknowledged which
 *    offsets with what HW and ISR, elections, truncations, ISR changes, crashes
 *    and faults, and the invariant breaches the brokers detected.
 *
 * At the end of a run, the final state of every replica is added, so the
 * checker can compare what was acknowledged with what is committed.
 *
 * Ownership: the History owns everything added to it; strings are copied.
 */
#ifndef HISTORY_H
#define HISTORY_H

#include <glib.h>

typedef struct History History;

typedef enum {
    HISTORY_INVOKE = 0,
    HISTORY_OK,
    HISTORY_FAIL,
    HISTORY_INFO,
} HistoryType;

typedef enum {
    HISTORY_FN_SEND = 0, /* produce one record */
    HISTORY_FN_POLL,     /* consume: one record seen by a poll */
    HISTORY_FN_PROCESS,  /* consume: one record processed */
    HISTORY_FN_COMMIT,   /* commit an offset */
    HISTORY_FN_ASSIGN,   /* consume: a member's position in a partition was set at the
                          * start of an assignment (one-step; offset = the position) */
    HISTORY_FN_RESET,    /* consume: the leader answered a fetch at the member's position
                          * with OFFSET_OUT_OF_RANGE (one-step; value = that position,
                          * key = the log start offset the answer carried, error =
                          * OFFSET_OUT_OF_RANGE). OK: auto.offset.reset moved the
                          * position to `offset`; FAIL (auto.offset.reset=none): the
                          * error was raised to the application, offset -1 */
    /* Transactions (a producer with transactional.id). `value` is the
     * transaction's number in its producer's life (1, 2, ...; 0 for INIT);
     * topic, partition, key are 0 / -1; completions OK, FAIL (with the
     * error) or none (the producer crashed). */
    HISTORY_FN_TXN_INIT,    /* initTransactions: OK once the producer id and epoch are held */
    HISTORY_FN_TXN_BEGIN,   /* beginTransaction (local: OK or FAIL at once) */
    HISTORY_FN_TXN_COMMIT,  /* commitTransaction */
    HISTORY_FN_TXN_ABORT,   /* abortTransaction */
    HISTORY_FN_TXN_OFFSETS, /* sendOffsetsToTransaction, one-step per partition: topic,
                             * partition, offset = the next offset to read, value = the
                             * transaction's number */
    HISTORY_FN_REVOKE,      /* consume: a partition left a member's assignment (a
                             * rebalance revoked it, or the member lost or left its
                             * group); one-step, offset = its position then (-1: none) */
} HistoryFn;

/* HISTORY_FN_RESET's value for a partition that had no position (no
 * committed offset, auto.offset.reset=none). */
#define HISTORY_RESET_NO_POSITION G_MAXUINT64

/* Which transaction a send belongs to costs nothing to record: a
 * transactional producer's send belongs to the transaction whose TXN_BEGIN
 * that process invoked last (OK), unless the process invoked a TXN_COMMIT,
 * TXN_ABORT or TXN_INIT since (a send outside a transaction is refused by the
 * producer). Ops are in invocation order, so one pass over the ops assigns
 * every send; TXN_OFFSETS ops belong to a transaction the same way. */

/* One client operation, from its invocation to its completion, in the
 * Jepsen model: INVOKE while pending, then OK (it happened), FAIL (it
 * certainly did not) or INFO (unknown). Its op id is its index in
 * history_ops() plus one; ids are given in invocation order. */
typedef struct {
    gint64 invoke_ns;   /* when it began */
    gint64 complete_ns; /* when it ended; -1 while pending */
    guint64 value;      /* the unique value produced (HISTORY_VALUE), or read */
    gint64 offset;      /* -1 when unknown */
    guint32 process;    /* the client (producer or consumer) */
    gint32 partition;   /* -1 when not yet known */
    gint32 error;       /* KafkaError of FAIL/INFO, 0 otherwise */
    guint16 topic;      /* index into history_topic_name */
    guint8 type;        /* HistoryType: HISTORY_INVOKE while pending */
    guint8 fn;          /* HistoryFn */
} HistoryOp;

/* Produced values. Every value a client sends is unique in the run: the
 * client's process id in the high bits and its own count of values (from 1)
 * in the low HISTORY_VALUE_COUNTER_BITS, so the checker can find a value's
 * send by index. */
#define HISTORY_VALUE_COUNTER_BITS 40
#define HISTORY_VALUE(process, n) (((guint64)(process) << HISTORY_VALUE_COUNTER_BITS) | (guint64)(n))
#define HISTORY_VALUE_PROCESS(value) ((guint32)((value) >> HISTORY_VALUE_COUNTER_BITS))
#define HISTORY_VALUE_COUNTER(value) \
    ((value) & ((G_GUINT64_CONSTANT(1) << HISTORY_VALUE_COUNTER_BITS) - 1))

typedef enum {
    HISTORY_EVENT_ACK = 1,       /* leader answered a produce: offsets [a, a+n) with hw, isr */
    HISTORY_EVENT_ELECTED,       /* broker became leader: epoch, leo, isr, unclean */
    HISTORY_EVENT_TRUNCATED,     /* replica truncated from leo to offset */
    HISTORY_EVENT_ISR_CHANGED,   /* leader changed the ISR */
    HISTORY_EVENT_HW_CHANGED,    /* not recorded per change (volume); reserved */
    HISTORY_EVENT_NODE,          /* a node crashed, lost power, restarted, paused, resumed */
    HISTORY_EVENT_FAULT,         /* a network or disk fault began or ended */
    HISTORY_EVENT_OFFLINE,       /* a partition has no leader */
    HISTORY_EVENT_VIOLATION,     /* an invariant breach detected by the cluster */
    HISTORY_EVENT_CONTROLLER,    /* a broker became controller */
    HISTORY_EVENT_SESSION,       /* a broker's coordination session expired / re-registered */
    HISTORY_EVENT_TXN_RESUMED,   /* a new transaction coordinator resumed a transaction left
                                  * prepared (markers sent again) */
    HISTORY_EVENT_RETENTION,     /* a replica's retention deleted one segment: offset ..
                                  * offset_end its offsets, hw the replica's HW then (the
                                  * segment lay below it), leader_epoch the replica's,
                                  * isr the ISR set when the replica led (never empty
                                  * then), else 0; acks: 0 deleted by retention.ms, 1 by
                                  * retention.bytes; the records it held come with it
                                  * (history_event_records) */
    HISTORY_EVENT_CONTROLLER_LOST, /* the controller's coordination session ended (expired
                                    * or closed) and /controller went with it: broker is
                                    * the controller that held it */
} HistoryEventKind;

/* A cluster event. Fields not meaningful for a kind are -1 or 0; `text` is a
 * human sentence for explanations and reports. */
/* The largest ISR an event can name (Kafka's replication factor is bounded
 * far below it in practice; ksim's KAFKA_REPLICAS_MAX equals it). */
#define HISTORY_ISR_MAX 16

typedef struct {
    gint64 time_ns;
    guint32 kind;   /* HistoryEventKind */
    gint32 broker;  /* broker id, -1 if none */
    guint16 topic;
    gint32 partition;
    gint32 leader_epoch;
    gint64 offset;  /* ACK: base offset; TRUNCATED: new leo; ELECTED: leader leo */
    gint64 offset_end; /* ACK: last offset + 1; TRUNCATED: old leo */
    gint64 hw;
    guint32 isr;      /* the ISR as a set id: history_isr_members; 0: empty or none */
    gint32 acks;      /* ACK: -1 all, 0, 1 */
    char *text;
} HistoryEvent;

/* One record in a replica's final log: 16 bytes, as a long run keeps
 * millions. The leader epoch of its batch is in the replica's `epochs`. */
typedef struct {
    gint64 offset;
    guint64 value;
} HistoryRecord;

/* Where a leader epoch's records begin in a replica's final log, as Kafka's
 * leader-epoch checkpoint keeps them: the records from start_offset up to
 * the next entry's start were appended by leaders of `leader_epoch`. */
typedef struct {
    gint64 start_offset;
    gint32 leader_epoch;
} HistoryEpochStart;

/* The final state of one replica of one partition. */
typedef struct {
    guint16 topic;
    gint32 partition;
    gint32 broker;
    gboolean is_leader;
    gboolean online;     /* its broker was running at the end */
    gint64 log_start;
    gint64 leo;
    gint64 hw;
    /* Its oldest open transaction: how long it had been open at the end
     * (-1: none), and the broker's transaction.max.timeout.ms, past which
     * Kafka's tools call it hanging (it holds the LSO, so read_committed
     * consumers, back forever). */
    gint64 txn_open_ms;
    gint64 txn_max_timeout_ms;
    GArray *records;     /* HistoryRecord: the data records (not the control
                          * records of transaction markers, which no reader
                          * sees), in offset order; replicas with identical
                          * logs may share one array */
    GArray *epochs;      /* HistoryEpochStart, ascending; shared like records;
                          * NULL: epochs unknown */
} HistoryReplica;

/* Kinds of broker requests whose handling times are recorded. */
typedef enum {
    HISTORY_REQUEST_PRODUCE = 0,
    HISTORY_REQUEST_FETCH_FOLLOWER,
    HISTORY_REQUEST_FETCH_CONSUMER,
    HISTORY_REQUEST_OTHER,
    HISTORY_REQUEST_KINDS,
} HistoryRequestKind;

/* One request a broker handled, timed as Kafka's RequestChannel metrics
 * time it (RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs,
 * ResponseSendTimeMs; TotalTimeMs is their sum plus the network thread's
 * read): all in ns. */
typedef struct {
    gint64 time_ns;       /* when the broker received it */
    gint64 read_ns;       /* waiting for and reading on its network thread */
    gint64 queue_ns;      /* in the request queue (and its thread blocked on it) */
    gint64 local_ns;      /* on an I/O thread */
    gint64 remote_ns;     /* in a purgatory: acks=all replication, fetch long poll */
    gint64 send_ns;       /* waiting for and writing on its network thread */
    gint32 broker;
    guint16 io_threads;   /* the broker's num.io.threads (utilisation = busy / threads) */
    guint8 kind;          /* HistoryRequestKind */
    gint8 acks;           /* produce: -1, 1; else 0 */
} HistoryRequest;

/* Counts and samples behind the Kafka metrics a dashboard shows (the
 * report's jmx.c), recorded where Kafka marks them. */
typedef enum {
    /* broker: a leader appended a produce batch — `count` records,
     * `value` bytes (ReplicaManager.appendToLocalLog's messagesInRate and
     * bytesInRate) */
    HISTORY_METRIC_APPEND = 0,
    /* broker: a produce to one partition failed for a reason Kafka counts
     * in failedProduceRequestRate (not NOT_LEADER_OR_FOLLOWER,
     * UNKNOWN_TOPIC_OR_PARTITION or KAFKA_STORAGE_ERROR); `value` the
     * KafkaError */
    HISTORY_METRIC_PRODUCE_FAILED,
    /* controller: it elected a leader from outside the ISR
     * (ControllerStats.uncleanLeaderElectionRate) */
    HISTORY_METRIC_UNCLEAN_ELECTION,
    /* producer process: a batch of `count` records went back to the queue
     * for another attempt (Sender's record-retry-rate) */
    HISTORY_METRIC_RETRY,
    /* consumer process: a partition's lag, `value` records between the
     * position after a poll and the HW (the LSO when read_committed) of the
     * last fetch (records-lag, whose max is records-lag-max) */
    HISTORY_METRIC_LAG,
} HistoryMetricKind;

typedef struct {
    gint64 time_ns;
    gint64 value;
    gint32 node;   /* broker id, or client process */
    guint32 count;
    guint32 kind;  /* HistoryMetricKind */
} HistoryMetric;

void history_metric(History *history, gint64 time_ns, HistoryMetricKind kind, gint32 node,
                    guint32 count, gint64 value);
const GArray *history_metrics(const History *history); /* HistoryMetric, in time order */

/* A topic's min.insync.replicas, as its partitions' leaders know it (for
 * UnderMinIsrPartitionCount); 0: unknown. */
void history_set_topic_min_isr(History *history, guint16 topic, gint32 min_isr);
gint32 history_topic_min_isr(const History *history, guint16 topic);

/* A request a broker handled: a produce request is kept whole (the latency
 * breakdown and the request timers read them); every request's time on an
 * I/O thread, from the end of its queue wait to the end of its local time,
 * is added to its broker's busy series (HistoryBusy). Fetches, most of a
 * busy run's requests, are kept no other way, so the history of a long run
 * does not grow by a request's 56 bytes for each of them. */
void history_request(History *history, const HistoryRequest *request);
/* The produce requests, in completion order. */
const GArray *history_requests(const History *history);

/* One broker's I/O-thread busy time over the run: the thread-time its
 * requests held I/O threads, summed per bin of `bin_ns` from time 0. Bins
 * start at HISTORY_BUSY_BIN_NS and grow tenfold (ten bins merged into one)
 * whenever the run outgrows HISTORY_BUSY_BINS_MAX of them, so a series
 * costs at most that many counters however long the run, and a bin is
 * always a power of ten times 1 ms: it divides any time bucket of 1, 2 or 5
 * times a larger power of ten. */
typedef struct {
    gint32 broker;
    guint16 io_threads; /* its num.io.threads */
    gint64 bin_ns;
    GArray *bins;       /* gint64 per bin: thread-ns of I/O in it */
} HistoryBusy;

#define HISTORY_BUSY_BIN_NS G_GINT64_CONSTANT(1000000)
#define HISTORY_BUSY_BINS_MAX 10000u

/* The brokers that handled a request, in ascending id order. */
guint history_busy_count(const History *history);
const HistoryBusy *history_busy(const History *history, guint i);
/* Its TotalTimeMs in ns: read, queue, local, remote and send (each part
 * counted from 0 up). */
gint64 history_request_total_ns(const HistoryRequest *request);


History *history_new(void);
void history_free(History *history);


/* Topic names are interned: the same name always gets the same index. */
guint16 history_topic(History *history, const char *name);
const char *history_topic_name(const History *history, guint16 topic);
guint history_topic_count(const History *history);

/* Starts an operation; returns its op id. */
guint64 history_invoke(History *history, gint64 time_ns, HistoryFn fn, guint32 process,
                       guint16 topic, gint32 partition, guint64 key, guint64 value);
/* Starts `n` sends of `values` at once (one batch); their op ids are
 * consecutive and the first is returned. */
guint64 history_invoke_sends(History *history, gint64 time_ns, guint32 process, guint16 topic,
                             gint32 partition, const guint64 *values, guint n);
/* Completes the `n` operations first_op .. first_op + n - 1 alike; with OK,
 * the i-th gets offset base_offset + i. */
void history_complete_range(History *history, guint64 first_op, guint n, gint64 time_ns,
                            HistoryType type, gint32 partition, gint64 base_offset, gint32 error);
/* Completes operation `op` (OK, FAIL or INFO). A `partition` of -1 keeps
 * the one the invocation knew. */
void history_complete(History *history, guint64 op, gint64 time_ns, HistoryType type,
                      gint32 partition, gint64 offset, gint32 error);
/* Adds a one-step operation that completed OK as it began (a poll seeing a
 * record, a record processed); returns its op id. */
guint64 history_record(History *history, gint64 time_ns, HistoryFn fn, guint32 process,
                       guint16 topic, gint32 partition, gint64 offset, guint64 key,
                       guint64 value);

/* The operations in invocation order; op id i is element i - 1. Read it
 * as a GArray of HistoryOp (`ops->len`, `g_array_index(ops, HistoryOp, i)`);
 * the history keeps it in its own block, which grows without a library call
 * per operation. The view is valid until the next operation is added. */
typedef struct {
    HistoryOp *data;
    guint len;
} HistoryOpArray;
const HistoryOpArray *history_ops(const History *history);
/* Operation `op` (an id history_invoke and the like returned). */
const HistoryOp *history_op(const History *history, guint64 op);
/* The key operation `op` was given; 0: none. Keys are kept apart from the
 * rows, and cost nothing in a run whose records have none. */
guint64 history_op_key(const History *history, guint64 op);
/* The latest time of any operation's invocation or completion; -1: none. */
gint64 history_ops_end_ns(const History *history);


/* Adds an event; `text` is copied (may be NULL). */
void history_event(History *history, const HistoryEvent *event);
/* The set id of an ISR (at most HISTORY_ISR_MAX non-negative broker ids, in
 * any order) for HistoryEvent.isr: equal sets get equal ids, the empty set 0.
 * A run's ACK events name a handful of distinct ISRs, so an event stores 4
 * bytes whatever the cluster's size. */
guint32 history_isr_intern(History *history, const gint32 *isr, guint n_isr);
/* The members of ISR set `isr`, in increasing broker id order, as
 * `*members` (borrowed: valid until the next intern); returns their count. */
guint history_isr_members(const History *history, guint32 isr, const gint32 **members);
/* TRUE when broker `broker_id` is a member of ISR set `isr`. */
gboolean history_isr_contains(const History *history, guint32 isr, gint32 broker_id);
/* Adds a HISTORY_EVENT_RETENTION event with the data records (HistoryRecord,
 * in offset order) of the segment it deleted; takes over the caller's
 * reference to `records`. */
void history_event_with_records(History *history, const HistoryEvent *event, GArray *records);
/* The records that came with event `index` of history_events, or NULL
 * (transfer none). */
const GArray *history_event_records(const History *history, guint index);
const GArray *history_events(const History *history); /* HistoryEvent */
guint history_violation_count(const History *history);

/* The index in `records` (HistoryRecord, in offset order) of the first record
 * at or above `offset`; records->len when there is none. */
guint history_records_lower_bound(const GArray *records, gint64 offset);

/* The leader epoch whose leader appended the record at `offset`, by a
 * replica's `epochs` (HistoryEpochStart); -1 when unknown. */
gint32 history_epoch_at(const GArray *epochs, gint64 offset);

/* Adds a replica's final state; takes over the caller's references to
 * `replica->records` and `replica->epochs` (g_array_ref them first to keep
 * one). */
void history_add_replica(History *history, const HistoryReplica *replica);
const GArray *history_replicas(const History *history); /* HistoryReplica */

/* Names of broker ids, for explanations ("broker 2"). */
void history_set_process_name(History *history, guint32 process, const char *name);
const char *history_process_name(const History *history, guint32 process);

/* Consumer groups: the group id a consumer process belongs to (copied;
 * setting it again replaces it), so the checker knows which processes form
 * a group. NULL when the process is in no group. */
void history_set_process_group(History *history, guint32 process, const char *group);
const char *history_process_group(const History *history, guint32 process);
/* The distinct group ids of history_set_process_group, sorted (strcmp).
 * (transfer container: the strings are the history's) */
GPtrArray *history_groups(const History *history);
/* One more than the highest process id with a group; 0 when none. */
guint32 history_process_group_bound(const History *history);

/* Transactions. Side tables by process, allocated on first use, so a run
 * without transactions pays nothing:
 *  - the transactional.id of a producer process (copied), so the checker
 *    knows which processes are instances of one transactional id (a newer
 *    instance fences the older: a zombie);
 *  - whether a consumer process reads with isolation.level=read_committed;
 *  - the pipeline (a consume-transform-produce job, named by its group id) a
 *    producer process writes the outputs of: each of its sends carries as its
 *    `key` the value of the input record it was made from. */
void history_set_process_transactional_id(History *history, guint32 process, const char *id);
const char *history_process_transactional_id(const History *history, guint32 process);
void history_set_process_read_committed(History *history, guint32 process, gboolean committed);
gboolean history_process_read_committed(const History *history, guint32 process);
void history_set_process_pipeline(History *history, guint32 process, const char *pipeline);
const char *history_process_pipeline(const History *history, guint32 process);
/* One more than the highest process id with a pipeline; 0 when none. */
guint32 history_process_pipeline_bound(const History *history);
/* TRUE once any TXN_* op was recorded or a transactional id or pipeline
 * set: checkers of transactions skip a history without. */
gboolean history_has_transactions(const History *history);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(History, history_free)

#endif
