/*
 * consumer: Kafka's consumer client on a simulated node, in assign() mode or
 * in subscribe() mode (a member of a consumer group).
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
 * processing of its records one after another (a draw of the processing time
 * each), then the poll interval, then the next poll. Every record a poll
 * returns is recorded as a HISTORY_FN_POLL op (OK, with its partition, offset
 * and value) at the poll's time, and as a HISTORY_FN_PROCESS op when its own
 * processing ends; a crash stops the loop between two records. The position
 * moves past the records a poll returns. When a partition's position is set
 * at the start of an assignment — from the committed offset (OffsetFetch), or
 * by auto.offset.reset after the probe of a partition without a position — a
 * one-step HISTORY_FN_ASSIGN op records it (offset = the position); a reset
 * of a position the member already had (OFFSET_OUT_OF_RANGE) records none. So
 * every incarnation's polls of a partition follow an ASSIGN of it.
 *
 * Errors. NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, the leader epoch
 * errors, disconnects and request timeouts refresh the metadata and retry the
 * partition after retry.backoff.ms. OFFSET_OUT_OF_RANGE (a position below
 * the log start, which retention moved past it, or above the LEO) applies
 * auto.offset.reset: earliest moves to the log start, latest to the high
 * watermark (what Kafka's ListOffsets(LATEST) answers a read_uncommitted
 * consumer), and a HISTORY_FN_RESET op records the jump; none stops the
 * partition, counts a reset error, records a FAILed RESET op, and makes the
 * next poll raise to the application, whose loop ends there (a restart of
 * the process starts it again).
 *
 * Position validation (KIP-320, Kafka 2.3+; ksim.consumer.validate.positions,
 * default true), as Kafka's SubscriptionState and OffsetsForLeaderEpochUtils:
 * a position remembers the leader epoch of the last record consumed before
 * it. When the metadata names a new leader or leader epoch for a partition
 * with such a position, the partition stops fetching (its buffered records
 * are dropped) and asks the leader, with OffsetsForLeaderEpoch, where that
 * epoch ends in its log. An end offset below the position means the log was
 * truncated under the consumer (an unclean election, or the HW design's
 * truncation): with auto.offset.reset earliest or latest the position moves
 * to that end offset, the first offset known to diverge, and a RESET op with
 * LOG_TRUNCATION records the jump back; with none, a FAILed RESET op records
 * it and the next poll raises LogTruncationException (the loop ends). An
 * answer without an epoch (the epoch is older than the leader's log) resets
 * as a partition without a position would. Positions set without an epoch
 * (a reset, a seek, a committed offset: ksim's OffsetCommit carries no
 * leader epoch) are not validated. With the key false the consumer is the
 * pre-KIP-320 one: a leader change only moves the next fetch to the new
 * leader, at the same offset.
 *
 * Initial position without ListOffsets. A partition with no position (just
 * assigned, without a committed offset) is fetched at offset 0 as a probe;
 * the answer's log start offset and high watermark (carried with
 * OFFSET_OUT_OF_RANGE as with a normal answer) give the reset target and the
 * probe's records are dropped. This costs one extra round trip per reset and
 * answers "latest" with the HW the leader had at the probe, as ListOffsets
 * would.
 *
 * Groups (consumer_subscribe), as Kafka's ConsumerCoordinator with the eager
 * rebalance protocol, or the cooperative one (KIP-429) when every listed
 * assignor is cooperative-sticky (described at the end of this paragraph).
 * FindCoordinator to any broker, then JoinGroup and
 * SyncGroup; the leader computes the assignment with
 * partition.assignment.strategy (assignor.h) from its metadata. As in Kafka
 * the group work that changes the assignment happens inside poll(): a poll
 * that finds a rebalance needed first commits (enable.auto.commit), revokes
 * every partition and drops their positions and buffered records (Kafka's
 * onJoinPrepare), joins, and returns records only once the new assignment's
 * positions are known: from the committed offsets (OffsetFetch), else from
 * auto.offset.reset. A background heartbeat every heartbeat.interval.ms while
 * the member is stable learns of rebalances (REBALANCE_IN_PROGRESS: rejoin at
 * the next poll) and of a lost membership (UNKNOWN_MEMBER_ID,
 * ILLEGAL_GENERATION). A member that does not poll for max.poll.interval.ms
 * leaves the group (LeaveGroup) and rejoins as a new member at its next poll.
 * The group leader rejoins when the partition count of a subscribed topic
 * changes in its metadata (refreshed every metadata.max.age.ms), which makes
 * the coordinator rebalance the group. With the cooperative protocol a
 * member revokes nothing before joining: it reports the partitions it owns
 * in JoinGroup, goes on fetching them and returning their records from
 * poll() through the rebalance, and at the first poll after SyncGroup
 * revokes only those the new assignment lacks (committing their positions
 * first when it commits at all; that poll waits for the commit) and rejoins
 * at once if it revoked any, so that the partitions cooperative-sticky
 * withheld from their new owners are given out by the next rebalance.
 *
 * KIP-848 (group.protocol=consumer, consumer_membership.c): no JoinGroup or
 * SyncGroup; ConsumerGroupHeartbeat carries the member epoch, subscription
 * and owned partitions, and the coordinator assigns (group.remote.assignor
 * asks for its server-side assignor). The member keeps reading what it keeps;
 * from inside poll() it revokes what the coordinator's answer lacks
 * (committing it first when it commits at all), takes what it adds, and
 * acknowledges with a heartbeat at once. A fenced member (FENCED_MEMBER_EPOCH,
 * UNKNOWN_MEMBER_ID) loses its partitions without a commit and rejoins with
 * epoch 0; commits carry the member epoch.
 *
 * Every partition that leaves the assignment, in either protocol, is
 * recorded as a HISTORY_FN_REVOKE op (offset = its position then).
 *
 * Commits. Each commit is one OffsetCommit of the positions of every assigned
 * partition with a known position (Kafka's allConsumed), recorded in the
 * history as one HISTORY_FN_COMMIT op per partition (value and offset = the
 * committed offset) completed OK, FAIL (refused: not in an active group,
 * rebalance, unknown member, illegal generation) or INFO (outcome unknown: a
 * disconnect or coordinator error after the request may have been appended,
 * or default.api.timeout.ms ran out). Sync commits retry retriable errors
 * until default.api.timeout.ms; async ones do not. The polling loop commits
 * according to `processing_mode`: auto (enable.auto.commit: an async commit
 * at a poll once auto.commit.interval.ms has passed, and a sync one before a
 * rebalance), commit-before-processing (commitSync after the poll, then the
 * processing; records of a failed commit are not processed: at most once),
 * process-then-commit (processing, then consumer_commit_sync; the next poll
 * waits for its outcome: at least once), or process-then-commit-async
 * (processing, then consumer_commit_async; the next poll does not wait for
 * it, a failed one is not retried and the next commit covers its offsets: at
 * least once, and a crash repeats every record since the last commit that was
 * answered, not only since the last one sent).
 *
 * Crash and restart. A crash frees everything the process held (buffer,
 * positions, in-flight requests, metadata, group membership) and records
 * nothing more; the records being processed are never marked processed, and
 * commits in flight stay invoked. A restart is a new incarnation that keeps
 * the subscription or the assignment and the polling loop (as an application
 * would redo them at start); a group member joins as a new member and resumes
 * from the committed offsets.
 *
 * Ownership: the Consumer owns its node's model state; the world owns the
 * node. The history must outlive the consumer.
 */
#ifndef CONSUMER_H
#define CONSUMER_H

#include <glib.h>

#include "assignor.h"
#include "history.h"
#include "kafka_proto.h"
#include "sim_world.h"

typedef struct Consumer Consumer;

typedef enum {
    CONSUMER_RESET_EARLIEST = 0,
    CONSUMER_RESET_LATEST,
    CONSUMER_RESET_NONE,
} ConsumerOffsetReset;

/* What the polling loop commits (a ksim workload setting). */
typedef enum {
    CONSUMER_PROCESSING_AUTO = 0,       /* no commit by the loop (enable.auto.commit may) */
    CONSUMER_COMMIT_BEFORE_PROCESSING,  /* commitSync, then process: at most once */
    CONSUMER_PROCESS_THEN_COMMIT,       /* process, then commitSync: at least once */
    CONSUMER_PROCESS_THEN_COMMIT_ASYNC, /* process, then commitAsync: at least once */
} ConsumerProcessingMode;

/* group.protocol (Kafka 3.7+, KIP-848). */
typedef enum {
    CONSUMER_GROUP_PROTOCOL_CLASSIC = 0,
    CONSUMER_GROUP_PROTOCOL_CONSUMER,
} ConsumerGroupProtocol;

/* Kafka's consumer configuration keys the consumer honours: each field is
 * the key in its comment (sizes in bytes). The defaults are the key
 * registry's (src/harness/kconfig.c) alone: its bindings
 * (kconfig_bind_consumer_defaults) fill the struct for every user. */
typedef struct {
    gint64 fetch_min_bytes;                /* fetch.min.bytes */
    gint64 fetch_max_wait_ms;              /* fetch.max.wait.ms */
    gint64 max_partition_fetch_bytes;      /* max.partition.fetch.bytes */
    gint64 fetch_max_bytes;                /* fetch.max.bytes */
    gint32 max_poll_records;               /* max.poll.records */
    ConsumerOffsetReset auto_offset_reset; /* auto.offset.reset */
    gint64 request_timeout_ms;             /* request.timeout.ms */
    gint64 retry_backoff_ms;               /* retry.backoff.ms */
    gint64 metadata_max_age_ms;            /* metadata.max.age.ms */
    gint8 isolation_level;                 /* isolation.level: read_uncommitted 0, committed 1 */
    gint64 session_timeout_ms;             /* session.timeout.ms */
    gint64 heartbeat_interval_ms;          /* heartbeat.interval.ms */
    gint64 max_poll_interval_ms;           /* max.poll.interval.ms */
    gboolean enable_auto_commit;           /* enable.auto.commit */
    gint64 auto_commit_interval_ms;        /* auto.commit.interval.ms */
    AssignorStrategy partition_assignment_strategy; /* partition.assignment.strategy's first */
    /* partition.assignment.strategy also lists an assignor without Kafka's
     * COOPERATIVE protocol (range, roundrobin, sticky): the group then runs
     * the eager protocol whatever the first assignor is. */
    gboolean eager_assignor_listed;
    gint64 default_api_timeout_ms;          /* default.api.timeout.ms (bounds commitSync) */
    ConsumerProcessingMode processing_mode; /* ksim: the loop's commits (processing.mode) */
    gboolean validate_positions; /* ksim.consumer.validate.positions: KIP-320 (Kafka 2.3+) */
    ConsumerGroupProtocol group_protocol; /* group.protocol */
    /* group.remote.assignor: the server assignor's number on the wire
     * (0 uniform, 1 range), -1 for null. */
    gint32 group_remote_assignor;
} ConsumerConfig;

/* One record as a poll returns it. */
typedef struct {
    KTopicPartition tp;
    gint64 offset;
    guint64 key;
    guint64 value;
    gint32 leader_epoch; /* its batch's leader epoch (Kafka's ConsumerRecord.leaderEpoch) */
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
    guint64 app_failures;      /* polls that raised to the application, ending its loop */
    guint64 coordinator_lookups; /* FindCoordinator requests */
    guint64 joins;             /* JoinGroup requests */
    guint64 rebalances;        /* assignments received (SyncGroup answers) */
    guint64 partitions_revoked; /* cooperative: partitions an assignment took away */
    guint64 heartbeats;        /* Heartbeat requests */
    guint64 poll_timeouts;     /* left the group after max.poll.interval.ms without poll */
    guint64 commits_ok;        /* commits (not partitions) that completed OK */
    guint64 commits_failed;    /* commits that completed FAIL or INFO */
    guint64 group_errors;      /* fatal JoinGroup errors: the member stopped joining */
    guint64 validations;       /* OffsetsForLeaderEpoch requests validating positions */
    guint64 truncations;       /* validations that found the log truncated below the position */
} ConsumerStats;

/* The end of a commit started by consumer_commit_sync / _async: OK, FAIL or
 * INFO (as recorded in the history), with the error of a FAIL or INFO. */
typedef void (*ConsumerCommitCb)(Consumer *consumer, HistoryType outcome, KafkaError error,
                                 void *user_data);

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
/* Kafka's subscribe(): joins consumer group `group_id` (copied) for the
 * `n_topics` topics (copied). The consumer must be running, have no manual
 * assignment and not be subscribed yet. The group is joined by the next
 * poll. */
void consumer_subscribe(Consumer *consumer, const char *group_id, const char *const *topics,
                        guint n_topics);
/* Kafka's unsubscribe(): leaves the group (LeaveGroup) and drops the
 * assignment. The consumer must be running and subscribed. */
void consumer_unsubscribe(Consumer *consumer);
/* commitSync() / commitAsync() of the positions of every assigned partition,
 * as the loop's own commits; `done_cb` (may be NULL) is called with the
 * outcome. Only for a running, subscribed consumer. */
/* Kafka's seek(): the next fetch of assigned partition `partition` of
 * `topic` starts at `offset` (>= 0); its buffered records are dropped, and
 * an ASSIGN op records the new position. The consumer must be running. */
void consumer_seek(Consumer *consumer, const char *topic, gint32 partition, gint64 offset);
void consumer_commit_sync(Consumer *consumer, ConsumerCommitCb done_cb, void *user_data);
void consumer_commit_async(Consumer *consumer, ConsumerCommitCb done_cb, void *user_data);
/* The member id the coordinator gave ("" when none, or crashed). (transfer none) */
const char *consumer_member_id(const Consumer *consumer);
/* The generation of the member's current assignment, -1 when none. */
gint32 consumer_generation(const Consumer *consumer);
/* TRUE when the consumer is a stable member of its group. */
gboolean consumer_group_stable(const Consumer *consumer);
/* The assigned partitions, sorted. (transfer full) */
GArray *consumer_assignment(const Consumer *consumer); /* KTopicPartition */

/* The offset of the next record a poll would return for the partition, or -1
 * when it is unknown (awaiting a reset, stopped, not assigned, or crashed). */
gint64 consumer_position(const Consumer *consumer, const char *topic, gint32 partition);

/* Starts the application loop: poll; when records came, `processing` (ns)
 * for each of them in turn, then `poll_interval` (ns), then the next poll. `poll_cb` may be NULL. The
 * distributions are copied; the loop survives restarts. */
void consumer_start_polling(Consumer *consumer, const SimDist *poll_interval,
                            const SimDist *processing, ConsumerPollCb poll_cb, void *user_data);

void consumer_stats(const Consumer *consumer, ConsumerStats *out);

void consumer_check_invariants(const Consumer *consumer);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Consumer, consumer_free)

#endif
