/*
 * replica_internal: what the replica manager's files (replica*.c) share with
 * one another and nothing else includes — the fetcher and purgatory entries
 * and the steps one concern asks of another (the HW advancing after an ISR
 * change, a follower's truncation on a role change, ...).
 */
#ifndef REPLICA_INTERNAL_H
#define REPLICA_INTERNAL_H

#include "broker_internal.h"
#include "fetch_handler.h"
#include "fetch_session.h"
#include "kraft_proto.h"
#include "replica.h"

/* A periodic task of the replica and log managers (Kafka's
 * KafkaScheduler.schedule with a period): `run` every `period_ns` of the
 * broker's configuration, the first one period after the start. A crash
 * drops its timer with the rest of the node's. */
typedef struct {
    void (*run)(BrokerState *state);
    gint64 (*period_ns)(const BrokerConfig *config);
} ReplicaTask;
void replica_task_start(BrokerState *state, const ReplicaTask *task);

/* One follower fetcher per leader (Kafka's ReplicaFetcherThread). */
typedef struct {
    gint32 leader_id;
    SimNodeId node;
    GPtrArray *partitions;            /* Partition*, not owned */
    gint32 in_flight_correlation;     /* 0: none */
    gboolean epoch_request_in_flight;
    /* FALSE only when none of its partitions waits to truncate: a partition
     * starts to wait only as it joins a fetcher, which sets this, and a
     * fetch that finds none waiting clears it, so a fetch does not look at
     * every partition for the few that wait (invariant 6). */
    gboolean truncation_maybe_pending;
    SimTimerId timeout_timer;
    SimTimerId backoff_timer;
    /* Its incremental fetch session with the leader (KIP-227), and the
     * partitions of the next fetch, kept between fetches to be reused. */
    FetchHandler *session;
    GArray *next;                     /* KFetchPartition */
    /* Partition* (borrowed; repeats allowed) that joined or left this
     * fetcher, or whose fetch state (LEO, log start, leader epoch) may have
     * changed, since the last fetch built (replica_fetcher_note): an
     * incremental fetch is built from these alone. */
    GPtrArray *dirty;
    GArray *gone;                     /* KTopicPartition (scratch) */
} Fetcher;

/* A produce (or internal append) waiting for the HW (Kafka's DelayedProduce). */
typedef struct {
    gint32 correlation_id;
    SimNodeId client;
    guint32 client_incarnation;
    KTopicPartition tp;
    gint64 base_offset;
    gint64 required_offset;           /* last offset + 1: HW must reach it */
    gint16 acks;
    SimTimerId timeout_timer;
    BrokerState *state;
    /* An internal append (an offset commit) answers its caller, not a
     * client: NULL for a client's produce. */
    ReplicaAppendCb done_cb;
    guint64 done_id;
} DelayedProduce;

/* A long-polling fetch (Kafka's DelayedFetch). */
typedef struct {
    KFetchRequest *request;           /* owned */
    gint64 bytes_at_delay;            /* what the fetch could have read then (< min_bytes) */
    /* The bytes appended since to the partitions it reads, each counted as
     * often as the request names its partition. */
    gint64 appended;
    guint64 serial;                   /* the order fetches were delayed in */
    /* Partition* it reads whose leadership changed since it was delayed
     * (borrowed; NULL when none): it answers if one no longer leads. */
    GPtrArray *suspects;
    /* A fetch outside a session: the Partition* whose fetch_watchers hold
     * it (borrowed), and the broker's Partition of each request partition,
     * in request order (borrowed; NULL where it had none when the fetch was
     * delayed, looked up again when read): a broker keeps its Partition
     * objects until it crashes, so the pointer is what replica_get would
     * return, without hashing the topic name on each try. Both NULL for a
     * fetch in a session, which its session's partitions find
     * (fetch_session_cache_touch). */
    GPtrArray *watched;
    GPtrArray *partitions;
    SimNodeId client;
    SimTimerId timeout_timer;
    BrokerState *state;
    FetchContext context;             /* its fetch session's (fetch_session.h) */
} DelayedFetch;

/* replica.c */
gint replica_partition_compare(gconstpointer a, gconstpointer b);
gboolean replica_in_isr(const Partition *p, gint32 broker_id);

/* replica_hw.c */
/* HW = the smallest LEO in the ISR, only ever forward, on a leader; the
 * produce and fetch purgatories are told when it moved. */
void replica_hw_maybe_increment(BrokerState *state, Partition *p);
/* Where replica_hw_maybe_increment would move the HW now: the smallest LEO
 * of the ISR (p->hw while a KRaft ISR is below min.insync.replicas). */
gint64 replica_hw_target(const BrokerState *state, const Partition *p);
/* Sets the HW (a follower takes its leader's) and tells the observer. */
void replica_hw_set(BrokerState *state, Partition *p, gint64 hw);
/* Answers the delayed produces the HW has passed. */
void replica_hw_try_complete_produces(BrokerState *state, Partition *p);
/* Answers every delayed produce of `p` with `error` (leadership lost). */
void replica_hw_fail_produces(BrokerState *state, Partition *p, KafkaError error);
/* Puts `delayed` (owned by the purgatory from now) at the tail of `p`'s
 * queue, to time out after `timeout_ms`. */
void replica_hw_delay_produce(BrokerState *state, Partition *p, DelayedProduce *delayed,
                              gint64 timeout_ms);
/* Records (history, observer) that [base, end) of `p` were acknowledged. */
void replica_hw_record_ack(BrokerState *state, Partition *p, gint64 base, gint64 end,
                           gint16 acks);
void replica_delayed_produce_free(gpointer delayed);
/* Reads the checkpoint's "topic partition hw" lines into `out`
 * ("topic-partition" -> gint64*). */
void replica_hw_checkpoint_read(BrokerState *state, GHashTable *out);
/* Asserts the HW invariants (replica_hw.c's header). */
void replica_hw_check_invariants(const BrokerState *state);

/* replica_produce.c */
void replica_produce_respond(BrokerState *state, SimNodeId client, gint32 correlation_id,
                             const KTopicPartition *tp, KafkaError error, gint64 base_offset,
                             gint64 log_start);

/* What a produce's answer needs of its request. */
typedef struct {
    SimNodeId client;
    gint32 correlation_id;
    gint16 acks;
    gint64 timeout_ms;
    gint8 transaction_version; /* the client's (2: the leader adds the partition) */
} ProduceAsk;

/* The append of a produce whose verification with the transaction
 * coordinator ended (replica_verify.c): `error` is the verification's, as a
 * produce error, or NONE; `guard` the verification guard it holds. Takes
 * `batch`. Leadership and min.insync.replicas are checked again, as Kafka's
 * appendRecords does after its verification callback. */
void replica_produce_verified(BrokerState *state, const KTopicPartition *tp, const ProduceAsk *ask,
                              PlogBatch *batch, KafkaError error, guint64 guard);

/* replica_verify.c */
/* Whether the leader must verify this produce's batch with the transaction
 * coordinator before appending it. */
gboolean replica_verify_needed(const BrokerState *state, const Partition *p,
                               const KProduceRequest *request);
/* Starts the verification (it takes the request's batch); the append
 * follows in replica_produce_verified. */
void replica_verify_start(BrokerState *state, Partition *p, const ProduceAsk *ask,
                          KProduceRequest *request);
/* Asserts the pending verifications' invariants (replica_verify.c). */
void replica_verify_check_invariants(const BrokerState *state);

/* replica_isr.c */
/* A follower that caught up with the HW (and this term's start) joins. */
void replica_isr_maybe_expand(BrokerState *state, Partition *p, const RemoteReplica *remote);
/* TRUE when `remote`, not in the ISR, has caught up with the HW and this
 * term's start: replica_isr_maybe_expand proposes it (unless an ISR change
 * is in flight). */
gboolean replica_isr_may_join(const Partition *p, const RemoteReplica *remote);
/* Asserts the ISR invariants (replica_isr.c's header). */
void replica_isr_check_invariants(const BrokerState *state);
/* KRaft: the active controller answered a leader's AlterPartition for
 * `topic`. */
void replica_isr_altered(BrokerState *state, const KraftMsg *response, const char *topic);
/* KRaft: the metadata log changed a led partition's ISR in its leader's
 * epoch (the controller took a fenced follower out, KIP-841): the leader
 * adopts it, as Partition.makeLeader does for a newer partition epoch. */
void replica_isr_from_metadata(BrokerState *state, Partition *p, const KPartitionState *ps);

/* replica_fetch.c */
/* New data in `p`, or a new HW: the delayed fetches that watch it and have
 * enough answer. */
void replica_fetch_try_complete(BrokerState *state, Partition *p, gboolean hw_moved);
/* `bytes` were appended to `p`, a leader: the delayed fetches reading it
 * count them, and its fetch sessions read it again. Before the HW may move
 * (the fetches then find what was appended), and before
 * replica_fetch_try_complete. */
void replica_fetch_appended(BrokerState *state, Partition *p, gint64 bytes);
/* `p` changed in a way a fetch reads (its ISR, log start, a follower's
 * fetch state; `leadership`: it became leader or follower): the fetch
 * sessions that hold it read it again, and with `leadership` the fetches
 * waiting on it look at whether it still leads. Called before a
 * leadership change is made. */
void replica_fetch_touch(BrokerState *state, Partition *p, gboolean leadership);
/* Gives the broker's fetch session cache its hooks (replica_fetch.c). */
void replica_fetch_sessions_attach(BrokerState *state);
/* The follower fetch times of `p`'s remotes as the reads of its fetch
 * sessions left them (before they are read). */
void replica_fetch_settle(BrokerState *state, Partition *p);
void replica_delayed_fetch_free(DelayedFetch *delayed);
/* Asserts the fetch purgatory's invariants (replica_fetch.c's header). */
void replica_fetch_check_invariants(const BrokerState *state);

/* replica_markers.c */
/* Asserts the markers' invariants (replica_markers.c's header). */
void replica_markers_check_invariants(const BrokerState *state);

/* replica_fetcher.c */
void replica_fetcher_free(gpointer fetcher);
/* `p` follows `leader_id` at `leader_node`: it joins that leader's fetcher. */
void replica_fetcher_add_partition(BrokerState *state, Partition *p, gint32 leader_id,
                                   SimNodeId leader_node);
void replica_fetcher_remove_partition(BrokerState *state, Partition *p);
/* `p`'s fetch state (LEO, log start, leader epoch) may have changed: its
 * fetcher, if it has one, looks at it when it builds its next fetch. */
void replica_fetcher_note(BrokerState *state, Partition *p);
/* Truncates `p`'s log to `offset` (when below its LEO), recording why. */
void replica_truncate_to(BrokerState *state, Partition *p, gint64 offset, const char *why);
/* Asserts the fetcher invariants (replica_fetcher.c's header). */
void replica_fetcher_check_invariants(const BrokerState *state);

#endif
