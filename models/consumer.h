/*
 * consumer: Kafka's consumer client on a simulated node, in assign() mode
 * (no group, no coordinator, no committed offsets yet).
 *
 * Fetching runs in the background, as Kafka's Fetcher does: at most one
 * FetchRequest in flight per leader broker, covering every assigned partition
 * that broker leads which has no records waiting in the buffer, each with the
 * consumer's position and the leader epoch the metadata gave. Brokers answer
 * consumers from below the high watermark only and long-poll until
 * fetch.min.bytes of new data or fetch.max.wait.ms.
 *
 * The application is a timer-driven loop (consumer_start_polling): poll,
 * which returns up to max.poll.records buffered records (or waits until a
 * fetch brings some: the broker's long poll does the waiting), then the
 * processing time, then the poll interval, then the next poll. Every record a
 * poll returns is recorded as a HISTORY_FN_POLL op (OK, with its partition,
 * offset and value) at the poll's time, and as a HISTORY_FN_PROCESS op when
 * its processing ends. The position moves past the records a poll returns.
 *
 * Errors. NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, the leader epoch
 * errors, disconnects and request timeouts refresh the metadata and retry the
 * partition after retry.backoff.ms. OFFSET_OUT_OF_RANGE applies
 * auto.offset.reset: earliest moves to the log start, latest to the high
 * watermark (what Kafka's ListOffsets(LATEST) answers a read_uncommitted
 * consumer), none stops the partition and counts a reset error.
 *
 * Initial position without ListOffsets. A partition with no position (just
 * assigned) is fetched at offset 0 as a probe; the answer's log start offset
 * and high watermark (carried with OFFSET_OUT_OF_RANGE as with a normal
 * answer) give the reset target and the probe's records are dropped. This
 * costs one extra round trip per reset and answers "latest" with the HW the
 * leader had at the probe, as ListOffsets would.
 *
 * Crash and restart. A crash frees everything the process held (buffer,
 * positions, in-flight fetches, metadata) and records nothing more; the
 * records being processed are never marked processed. A restart is a new
 * incarnation that keeps the assignment and the polling loop (as an
 * application would redo them at start) but, with no committed offsets yet,
 * takes its positions from auto.offset.reset again.
 *
 * Ownership: the Consumer owns its node's model state; the world owns the
 * node. The history must outlive the consumer.
 */
#ifndef CONSUMER_H
#define CONSUMER_H

#include <glib.h>

#include "history.h"
#include "kafka_proto.h"
#include "sim_world.h"

typedef struct Consumer Consumer;

typedef enum {
    CONSUMER_RESET_EARLIEST = 0,
    CONSUMER_RESET_LATEST,
    CONSUMER_RESET_NONE,
} ConsumerOffsetReset;

/* Kafka's consumer configuration keys that assign() mode uses. */
typedef struct {
    gint64 fetch_min_bytes;           /* fetch.min.bytes = 1 */
    gint64 fetch_max_wait_ms;         /* fetch.max.wait.ms = 500 */
    gint64 max_partition_fetch_bytes; /* max.partition.fetch.bytes = 1048576 */
    gint64 fetch_max_bytes;           /* fetch.max.bytes = 52428800 */
    gint32 max_poll_records;          /* max.poll.records = 500 */
    ConsumerOffsetReset auto_offset_reset; /* auto.offset.reset = latest */
    gint64 request_timeout_ms;        /* request.timeout.ms = 30000 */
    gint64 retry_backoff_ms;          /* retry.backoff.ms = 100 */
    gint64 metadata_max_age_ms;       /* metadata.max.age.ms = 300000 */
    gint8 isolation_level;            /* isolation.level = read_uncommitted (0); 1 committed */
} ConsumerConfig;

/* One record as a poll returns it. */
typedef struct {
    KTopicPartition tp;
    gint64 offset;
    guint64 key;
    guint64 value;
} ConsumerRecord;

/* Called once per poll that returned records, before their processing. */
typedef void (*ConsumerPollCb)(Consumer *consumer, const ConsumerRecord *records, guint n,
                               void *user_data);

/* Counters over the consumer's whole life (every incarnation). */
typedef struct {
    guint64 polls;             /* polls that returned records */
    guint64 records_polled;
    guint64 records_processed;
    guint64 fetch_requests;
    guint64 fetch_errors;      /* partition errors and failed requests */
    guint64 metadata_requests;
    guint64 offset_resets;     /* positions set by auto.offset.reset */
    guint64 reset_errors;      /* partitions stopped by auto.offset.reset=none */
} ConsumerStats;

/* Kafka's defaults. */
void consumer_config_init(ConsumerConfig *config);

/* A consumer on a new node named `name`, bootstrapping from `bootstrap`
 * (SimNodeId, the brokers' nodes; copied). `process` identifies it in the
 * history. It has no assignment and does not poll until told. */
Consumer *consumer_new(SimWorld *world, const char *name, guint32 process, const GArray *bootstrap,
                       const ConsumerConfig *config, History *history);
/* Frees the consumer (as at the end of a run). Its node stays in the world,
 * which must not run again before it is freed. Accepts NULL. */
void consumer_free(Consumer *consumer);

SimNodeId consumer_node(const Consumer *consumer);
/* TRUE while the process runs (not crashed). */
gboolean consumer_running(const Consumer *consumer);

/* Kafka's assign(): replaces the assignment with `n` partitions of `topic`.
 * New partitions start without a position (auto.offset.reset); partitions
 * kept keep theirs. The consumer must be running. */
void consumer_assign(Consumer *consumer, const char *topic, const gint32 *partitions, guint n);
/* Kafka's seek(): the next fetch of an assigned partition starts at
 * `offset`; buffered records of the partition are dropped. */
void consumer_seek(Consumer *consumer, const char *topic, gint32 partition, gint64 offset);
/* The offset of the next record a poll would return for the partition, or -1
 * when it is unknown (awaiting a reset, stopped, not assigned, or crashed). */
gint64 consumer_position(const Consumer *consumer, const char *topic, gint32 partition);

/* Starts the application loop: poll; when records came, `processing` (ns),
 * then `poll_interval` (ns), then the next poll. `poll_cb` may be NULL. The
 * distributions are copied; the loop survives restarts. */
void consumer_start_polling(Consumer *consumer, const SimDist *poll_interval,
                            const SimDist *processing, ConsumerPollCb poll_cb, void *user_data);

void consumer_stats(const Consumer *consumer, ConsumerStats *out);

void consumer_check_invariants(const Consumer *consumer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Consumer, consumer_free)

#endif
