/*
 * consumer_internal: the consumer's private state and the functions its
 * files share — consumer.c (state, waking up, node callbacks, the object,
 * invariants), consumer_fetch.c (metadata, fetching), consumer_group.c
 * (group membership), consumer_membership.c (the KIP-848 protocol),
 * consumer_offsets.c (commits, committed offsets) and
 * consumer_poll.c (the poll loop). Nothing outside models/client/ includes
 * it.
 */
#ifndef CONSUMER_INTERNAL_H
#define CONSUMER_INTERNAL_H

#include <glib.h>

#include "consumer.h"
#include "kafka_proto.h"
#include "sim_world.h"

typedef struct {
    KTopicPartition tp;
    guint16 history_topic;
    gint64 position;   /* -1: none yet (a probe decides it) */
    gboolean stopped;  /* auto.offset.reset=none gave up on it */
    gint32 leader;     /* broker id or KAFKA_NO_LEADER */
    gint32 leader_epoch;
    /* KIP-320: the leader epoch of the record before the position (-1:
     * unknown, no validation), and a validation awaited or in flight. */
    gint32 position_epoch;
    gboolean awaiting_validation;
    gboolean validating;
    gint64 backoff_until_ns;
    guint buffered;    /* its records in the buffer */
    /* The HW (the LSO when read_committed) of its last answered fetch, for
     * records-lag; -1: none yet. */
    gint64 fetched_end;
    gboolean in_flight;
    gboolean committed_pending; /* awaiting OffsetFetch (group assignment) */
} CPartition;

typedef struct {
    KTopicPartition tp;
    gint64 fetch_offset;
    gboolean probe; /* sent without a position, to learn the log's bounds */
    gint32 epoch;   /* a validation's: the position's epoch asked about */
} CFetchEntry;

typedef struct {
    SimNodeId node;
    gint32 correlation_id;
    SimTimerId timer;
    GArray *entries; /* CFetchEntry */
} CFetch;

typedef enum {
    CGROUP_UNJOINED = 0,
    CGROUP_PREPARING, /* committing before a rejoin (Kafka's onJoinPrepare) */
    CGROUP_JOINING,
    CGROUP_SYNCING,
    CGROUP_STABLE,
} CGroupState;

typedef enum {
    CREQ_FIND_COORDINATOR,
    CREQ_JOIN,
    CREQ_SYNC,
    CREQ_HEARTBEAT,
    CREQ_LEAVE,
    CREQ_COMMIT,
    CREQ_OFFSET_FETCH,
    CREQ_CONSUMER_HEARTBEAT, /* KIP-848's ConsumerGroupHeartbeat */
} CRequestKind;

/* A group request in flight. */
typedef struct {
    CRequestKind kind;
    gint32 correlation_id;
    SimNodeId node;
    SimTimerId timer;
    guint64 commit_id; /* CREQ_COMMIT: its commit */
} CRequest;

typedef enum {
    COMMIT_FOR_API,
    COMMIT_FOR_AUTO,
    COMMIT_FOR_JOIN,
    COMMIT_FOR_BEFORE_PROCESSING,
    COMMIT_FOR_REVOKE, /* cooperative: the revoked partitions, before they go */
} CommitPurpose;

/* One commitSync / commitAsync, from its invocation to its outcome. */
typedef struct {
    guint64 id;
    CommitPurpose purpose;
    gboolean sync;           /* retried until default.api.timeout.ms */
    GArray *offsets;         /* KOffsetPartition */
    GArray *ops;             /* guint64: the history op of each offset */
    gint64 deadline_ns;
    gint64 retry_ns;
    gboolean in_flight;
    gboolean outcome_unknown; /* an attempt may have been applied */
    ConsumerCommitCb done_cb;
    void *user_data;
} CCommit;

/* A topic's partition count in the metadata; -1 when unknown. */
typedef struct {
    char topic[KAFKA_TOPIC_NAME_MAX + 1];
    gint32 partitions;
} CTopicCount;

typedef struct {
    Consumer *consumer;
    GPtrArray *partitions; /* CPartition* (owned), sorted by tp */
    GArray *brokers;       /* KBrokerEndpoint */
    GArray *buffer;        /* ConsumerRecord, in arrival order */
    GPtrArray *fetches;    /* CFetch* (owned) */
    GPtrArray *validations; /* CFetch* (owned): OffsetsForLeaderEpoch in flight, one per node */
    gint32 correlation_next;
    gboolean metadata_needed;
    gint32 metadata_correlation; /* 0: none in flight */
    SimNodeId metadata_node;
    SimTimerId metadata_timer;
    gint64 metadata_attempt_ns;
    gint64 metadata_refreshed_ns;
    guint node_next;
    SimTimerId wake_timer;
    gint64 wake_ns;
    SimTimerId poll_timer;
    SimTimerId processing_timer;
    gboolean poll_waiting;
    /* auto.offset.reset=none found a partition without a valid position:
     * the next poll raises to the application (Kafka's
     * OffsetOutOfRangeException / NoOffsetForPartitionException), which
     * ends the loop (app_failed). */
    gboolean raise_pending;
    gboolean app_failed;
    GArray *processing; /* ConsumerRecord of the poll being processed */
    guint processed;    /* of them, those processed already (in order) */
    GArray *topic_counts; /* CTopicCount of every topic in the latest metadata, by name */
    /* Group membership (subscribe mode). */
    CGroupState group_state;
    gboolean rejoin_needed;
    gboolean group_fatal;    /* a JoinGroup error Kafka does not retry */
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 generation;
    gint32 protocol;
    gboolean is_leader;
    GArray *assigned_counts; /* CTopicCount: the leader's metadata at its assignment */
    GArray *owned;           /* KTopicPartition revoked at the join (sticky's owned) */
    gint32 owned_generation;
    /* Cooperative protocol: the SyncGroup's assignment, until the next poll
     * applies it (Kafka's onJoinComplete runs inside poll); NULL when none. */
    GArray *assignment_pending; /* KTopicPartition, sorted */
    SimNodeId coordinator;   /* SIM_NODE_NONE: unknown */
    gint64 coordinator_retry_ns;
    gint64 join_retry_ns;
    gint64 offset_fetch_retry_ns;
    GPtrArray *requests;     /* CRequest* (owned) */
    GPtrArray *commits;      /* CCommit* (owned), in invocation order */
    guint64 commit_next;
    CCommit *app_commit;     /* the loop's commit being waited on, in `commits` */
    SimTimerId heartbeat_timer;
    gint64 heartbeat_ok_ns;
    SimTimerId poll_timeout_timer;
    gint64 next_auto_commit_ns;
    /* group.protocol=consumer (consumer_membership.c): `generation` holds
     * the member epoch (0 while joining), `group_state` is UNJOINED, JOINING
     * (a heartbeat with epoch 0 sent) or STABLE (a member with an epoch);
     * `assignment_pending` holds the coordinator's latest assignment when it
     * differs from what the member owns; `reconciling` the assignment being
     * reconciled while the revoked partitions' commit runs. */
    GArray *reconciling;           /* KTopicPartition, sorted; NULL: none */
    gboolean heartbeat_now;        /* send the next heartbeat at once (join, ack, leave) */
    gint64 next_heartbeat_ns;
    gint64 heartbeat_interval_ms;  /* the coordinator's, from its last answer */
} ConsumerState;

struct Consumer {
    SimWorld *world;
    char *name;
    guint32 process;
    GArray *bootstrap; /* SimNodeId */
    ConsumerConfig config;
    History *history;
    SimNodeId node;
    SimRng *rng;
    GArray *assigned; /* KTopicPartition, sorted */
    char *group_id;   /* subscribe mode: the group, NULL in assign mode */
    GPtrArray *topics; /* subscribe mode: the subscription (char*, owned) */
    gboolean polling;
    SimDist poll_interval;
    SimDist processing;
    ConsumerPollCb poll_cb;
    void *poll_user_data;
    ConsumerStats stats;
    ConsumerState *state;
};

/* ---- consumer.c: state, waking up, the background run ---- */

gint64 consumer_ms_to_ns(gint64 ms);
/* The world's virtual time. */
gint64 consumer_now(const ConsumerState *state);
void consumer_commit_free(gpointer data);
void consumer_fetch_free(gpointer data);
/* A new assigned partition without a position (the caller adds it). */
CPartition *consumer_partition_new(ConsumerState *state, const KTopicPartition *tp);
/* The assigned partition `tp`, or NULL. */
CPartition *consumer_partition_find(const ConsumerState *state, const KTopicPartition *tp);
/* The node of broker `broker_id` in the metadata, or SIM_NODE_NONE. */
SimNodeId consumer_broker_node_of(const ConsumerState *state, gint32 broker_id);
/* Makes sure the run loop runs again at `due_ns` or earlier. */
void consumer_wake_at(ConsumerState *state, gint64 due_ns);
/* One pass of the background: fetches, metadata, the group. */
void consumer_run(ConsumerState *state);

/* ---- consumer_fetch.c: metadata and fetching ---- */

/* The partition count of `topic` in `counts`, or -1. */
gint32 consumer_topic_count_of(const GArray *counts, const char *topic);
/* The node the next metadata request goes to: the known brokers, else the
 * bootstrap nodes, in turn. */
SimNodeId consumer_metadata_target(ConsumerState *state);
void consumer_maybe_request_metadata(ConsumerState *state, gint64 now);
void consumer_handle_metadata_response(ConsumerState *state, SimNodeId from,
                                       const KMetadataResponse *response);
/* One fetch per leader broker without one in flight. */
void consumer_send_fetches(ConsumerState *state, gint64 now);
/* Records in the history where a partition's position was set. */
void consumer_record_assign(ConsumerState *state, const CPartition *p);
void consumer_handle_fetch_response(ConsumerState *state, SimNodeId from,
                                    const KFetchResponse *response);
/* The connection to `node` failed: its group requests, metadata request and
 * fetch fail. */
void consumer_connection_failed(ConsumerState *state, SimNodeId node);

/* Drops the buffered records of `p` (a seek, a validation). */
void consumer_buffer_drop(ConsumerState *state, CPartition *p);
/* A partition-level error: a metadata refresh and a retry after
 * retry.backoff.ms. */
void consumer_partition_retry_later(ConsumerState *state, CPartition *p);

/* ---- consumer_validate.c: position validation (KIP-320) ---- */

/* The metadata gave `p` leader `leader` at `leader_epoch` (not older than
 * its own): a new leader or epoch makes a position with an epoch await
 * validation (Kafka's maybeValidatePositionForCurrentLeader). */
void consumer_validate_leader_changed(ConsumerState *state, CPartition *p, gint32 leader,
                                      gint32 leader_epoch);
/* A position was set from a committed offset: with an epoch, and the
 * leader's epoch known, it awaits validation (Kafka's
 * SubscriptionState.seekUnvalidated). */
void consumer_validate_position(ConsumerState *state, CPartition *p);
/* One OffsetsForLeaderEpoch per leader broker without one in flight. */
void consumer_send_validations(ConsumerState *state, gint64 now);
void consumer_handle_epoch_response(ConsumerState *state, SimNodeId from,
                                    const KEpochMessage *response);
/* The connection to `node` failed: its validation fails. */
void consumer_validate_connection_failed(ConsumerState *state, SimNodeId node);

/* ---- consumer_group.c: group membership ---- */

gint consumer_tp_compare(gconstpointer a, gconstpointer b);
/* TRUE when `tp` is in `tps` (sorted, distinct; may be empty). */
gboolean consumer_tps_contain(const GArray *tps, const KTopicPartition *tp);
/* Replaces the assignment with `tps` (sorted, distinct). */
void consumer_assignment_set(ConsumerState *state, const GArray *tps, gboolean committed_pending);
/* TRUE in subscribe mode. */
gboolean consumer_subscribed(const ConsumerState *state);
/* TRUE when the member runs Kafka's COOPERATIVE rebalance protocol: every
 * assignor it lists supports it (only cooperative-sticky does). */
gboolean consumer_group_cooperative(const ConsumerState *state);
/* The next correlation id. */
gint32 consumer_correlation_new(ConsumerState *state);
/* Sends a group request and tracks it until its response or timeout. */
void consumer_request_send(ConsumerState *state, CRequestKind kind, SimNodeId node, SimMsg *msg,
                           gint32 correlation_id, gint64 timeout_ms, guint64 commit_id);
/* TRUE when a group request of `kind` is in flight. */
gboolean consumer_request_in_flight(const ConsumerState *state, CRequestKind kind);
/* The commit with `id`, or NULL. */
CCommit *consumer_commit_find(const ConsumerState *state, guint64 id);
/* Kafka's resetGenerationOnResponseError. */
void consumer_group_reset(ConsumerState *state, gboolean forget_member);
/* Kafka's FindCoordinator, when none is known or asked for. */
void consumer_group_find_coordinator(ConsumerState *state, gint64 now);
/* TRUE when the member commits offsets at all (automatically or in its
 * loop): only such an application commits in onPartitionsRevoked. */
gboolean consumer_group_member_commits(const ConsumerState *state);
/* Kafka's markCoordinatorUnknown. */
void consumer_coordinator_lost(ConsumerState *state);
/* The leader notices a changed partition count of a subscribed topic. */
void consumer_group_metadata_updated(ConsumerState *state);
/* Kafka's maybeLeaveGroup. */
void consumer_leave_group(ConsumerState *state);
/* max.poll.interval.ms passed without a poll: the member leaves. */
void consumer_poll_timeout_fire(SimWorld *world, void *ctx, void *arg);
/* The connection to `node` failed: its group requests fail. */
void consumer_group_connection_failed(ConsumerState *state, SimNodeId node);
/* Dispatches a group response; FALSE when `msg` is not one. */
gboolean consumer_group_handle_message(ConsumerState *state, SimNodeId from, SimMsg *msg);
/* Kafka's ConsumerCoordinator.poll: TRUE when the member may return records. */
gboolean consumer_group_poll(ConsumerState *state, gint64 now);
/* The group's part of the background: coordinator lookup, commits,
 * committed offsets, and a poll waiting on the group. */
void consumer_group_run(ConsumerState *state, gint64 now);

/* ---- consumer_membership.c: the consumer group protocol (KIP-848) ---- */

/* TRUE when the member runs group.protocol=consumer. */
gboolean consumer_membership_enabled(const ConsumerState *state);
/* Kafka's AsyncKafkaConsumer poll: reconciles the assignment (revocations
 * committed first) and finds the coordinator; TRUE when it may return
 * records of what it owns. */
gboolean consumer_membership_poll(ConsumerState *state, gint64 now);
/* The background: heartbeats when due. */
void consumer_membership_run(ConsumerState *state, gint64 now);
void consumer_membership_handle_response(ConsumerState *state,
                                         const KConsumerHeartbeatResponse *response);
/* Kafka's transitionToFenced (and a lost membership): the partitions are
 * lost without a commit, the member rejoins with epoch 0 (a new member
 * when `forget_member`). */
void consumer_membership_fenced(ConsumerState *state, gboolean forget_member);
/* Kafka's leaveGroup: a heartbeat with epoch -1, the partitions dropped. */
void consumer_membership_leave(ConsumerState *state);

/* ---- consumer_offsets.c: commits and committed offsets ---- */

/* Ends a commit: its ops complete, then what waited on it goes on. */
void consumer_commit_finish(ConsumerState *state, CCommit *commit, HistoryType outcome,
                            KafkaError error);
/* A new commit of every position (Kafka's allConsumed), owned by state->commits. */
CCommit *consumer_commit_new(ConsumerState *state, CommitPurpose purpose, gboolean sync);
/* A new commit of the positions of the partitions in `tps` (sorted) only. */
CCommit *consumer_commit_new_of(ConsumerState *state, CommitPurpose purpose, gboolean sync,
                                const GArray *tps);
/* TRUE while a commit of `purpose` is unfinished. */
gboolean consumer_commit_pending(const ConsumerState *state, CommitPurpose purpose);
/* Sends each commit not in flight, in invocation order. */
void consumer_commits_send(ConsumerState *state, gint64 now);
/* A commit attempt failed; `unknown` when it may have been applied. */
void consumer_commit_failed(ConsumerState *state, CCommit *commit, KafkaError error,
                            gboolean unknown);
void consumer_handle_commit_response(ConsumerState *state, const CRequest *request,
                                     const KOffsetMessage *response);
/* Asks the coordinator for the committed offsets of the partitions awaiting
 * them (while STABLE). */
void consumer_offsets_fetch(ConsumerState *state, gint64 now);
void consumer_handle_offset_fetch_response(ConsumerState *state, const KOffsetMessage *response);

/* ---- consumer_poll.c: the poll loop ---- */

/* Starts processing the records of the last poll. */
void consumer_processing_start(ConsumerState *state);
/* Sets the poll timer to fire `delay_ns` from now. */
void consumer_poll_schedule(ConsumerState *state, gint64 delay_ns);

#endif /* CONSUMER_INTERNAL_H */
