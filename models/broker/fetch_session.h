/*
 * fetch_session: the leader side of incremental fetch sessions (KIP-227),
 * after Apache Kafka 3.9's kafka.server.FetchManager, FetchSession and
 * FetchSessionCache(Shard). A full fetch (epoch 0) creates a session that
 * remembers, per partition, what the fetcher last asked (fetch offset, log
 * start, leader epoch, max bytes) and what it was last told (HW, log start);
 * an incremental fetch names only what changed, and its answer carries only
 * the partitions with records, a new HW or log start, or an error.
 *
 * The cache has max.incremental.fetch.session.cache.slots sessions, split
 * over Kafka's 8 shards (slots / 8 each; a shard is chosen round-robin for a
 * new session, and a session id falls in its shard's range). A new session
 * may evict, within its shard, one unused for longer than
 * FETCH_SESSION_EVICTION_MS, else the least valuable evictable one
 * (FetchSessionCacheShard.tryEvict): a follower's session is privileged and
 * is evicted only by a follower's, a small session by a larger one, and
 * only sessions older than FETCH_SESSION_EVICTION_MS are evictable by all.
 * With 0 slots no session is ever created: every fetch is a full one.
 * Sessions live in the broker's memory: a restart loses them all, and a
 * fetcher's next incremental fetch gets FETCH_SESSION_ID_NOT_FOUND.
 *
 * Where Kafka reads every partition of a session on each incremental fetch,
 * the cache gives its owner only those that may have changed: a partition
 * whose last read answered nothing and left nothing to do is quiet until
 * the owner touches its replica (fetch_session_read_begin, below). The
 * answers are Kafka's either way.
 */
#ifndef FETCH_SESSION_H
#define FETCH_SESSION_H

#include "kafka_proto.h"
#include "sim_rng.h"

#include <glib.h>

/* Kafka's NumFetchSessionCacheShards (KafkaBroker.scala). */
#define FETCH_SESSION_CACHE_SHARDS 8
/* Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS (KafkaServer.scala). */
#define FETCH_SESSION_EVICTION_MS 120000

typedef struct FetchSessionCache FetchSessionCache;

/* A cache of `slots` sessions (max.incremental.fetch.session.cache.slots)
 * whose session ids `rng` draws (borrowed; it outlives the cache).
 * (transfer full) */
FetchSessionCache *fetch_session_cache_new(gint32 slots, gint64 eviction_ms, SimRng *rng);
/* Accepts NULL. */
void fetch_session_cache_free(FetchSessionCache *cache);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(FetchSessionCache, fetch_session_cache_free)

/* What a fetch request is in the session cache (Kafka's FetchContext). */
typedef enum {
    FETCH_CONTEXT_SESSIONLESS = 0, /* no session: every partition, no session id */
    FETCH_CONTEXT_FULL,            /* every partition; creates a session if it can */
    FETCH_CONTEXT_INCREMENTAL,     /* the session's partitions, answered if changed */
    FETCH_CONTEXT_ERROR,           /* a session error: no partitions */
} FetchContextKind;

typedef struct {
    FetchContextKind kind;
    KafkaError error;       /* ERROR */
    gboolean privileged;    /* FULL: from a follower */
    gint32 expected_epoch;  /* INCREMENTAL: the session's epoch at the answer */
    struct FetchSession *session; /* INCREMENTAL: held until released */
    gboolean waiting;             /* its fetch waits (fetch_session_wait) */
} FetchContext;

/* Kafka's FetchManager.newContext: resolves `request` in the cache at
 * `now_ms` into `context`. A full fetch
 * closes the session it names. An incremental one updates its session with
 * the request's partitions and forgotten ones and bumps its epoch; its
 * partitions are then read with fetch_session_read_begin. A session error
 * empties the request's partitions. The context must be released
 * (fetch_session_context_release). */
void fetch_session_new_context(FetchSessionCache *cache, KFetchRequest *request, gint64 now_ms,
                               FetchContext *context);

/* What the cache asks of its owner (the broker's replica layer). */
typedef struct {
    /* The owner's object for a partition (the leader's replica), or NULL
     * where it has none. The objects must live as long as the cache (a
     * broker's replicas do). Kafka keeps no such pointer; it changes nothing
     * a run shows. (transfer none) */
    gpointer (*lookup)(const KTopicPartition *tp, gpointer user_data);
    /* TRUE when reading `replica` again for the session's fetcher
     * (`replica_id`, -1 for a consumer, reading at `isolation`), with
     * nothing changed, would answer nothing and change nothing but the
     * follower's fetch times, given that this read of it answered `data`
     * (no records, no error: the cache asks only then) to `request`. */
    gboolean (*quiet)(gpointer replica, gint32 replica_id, gint8 isolation,
                      const KFetchPartition *request, const KFetchPartitionResponse *data,
                      gpointer user_data);
    /* A quiet partition of follower `replica_id`'s session is about to be
     * read again: it was read, quietly, last at `read_ns` (apply what
     * those reads would have done to the follower's fetch times). */
    void (*settle)(gpointer replica, gint32 replica_id, gint64 read_ns, gpointer user_data);
    gpointer user_data;
} FetchSessionHooks;

void fetch_session_cache_set_hooks(FetchSessionCache *cache, const FetchSessionHooks *hooks);

/* An incremental fetch reads its session's partitions in session order,
 * as Kafka's IncrementalFetchContext.foreachPartition does, except the
 * quiet ones: those whose last read answered nothing and changed nothing
 * but the follower's fetch times, and whose replica has not been touched
 * (fetch_session_cache_touch) since. Reading one of those would answer
 * and change nothing again; the session keeps the time of its reads
 * instead, and hands it to the owner's settle hook before the partition
 * is read for real. So a fetch costs what changed, not the session's size.
 * A read may touch partitions of its own session: one ahead of the read is
 * read in it, as Kafka's walk would find it changed. (transfer full) */
typedef struct FetchSessionRead FetchSessionRead;
FetchSessionRead *fetch_session_read_begin(FetchSessionCache *cache, const FetchContext *context,
                                           gint64 now_ns);
/* The next partition to read: what the session remembers of it and the
 * owner's object for it (NULL: none). FALSE after the last. */
gboolean fetch_session_read_next(FetchSessionRead *read, const KFetchPartition **entry,
                                 gpointer *replica);
/* The partition fetch_session_read_next gave was read (its answer is the
 * next entry of the response). */
void fetch_session_read_done(FetchSessionRead *read);
/* Accepts NULL. */
void fetch_session_read_free(FetchSessionRead *read);

/* `replica` changed (its log, HW, log start, leadership, ISR or a
 * follower's fetch state): every session that holds it reads it at its
 * next fetch. The delayed fetches waiting on those sessions
 * (fetch_session_wait) are appended to `waiting` when it is not NULL. */
void fetch_session_cache_touch(FetchSessionCache *cache, gpointer replica, GPtrArray *waiting);
/* Hands the read times of the follower sessions in which `replica` is
 * quiet to the settle hook, so that the follower's fetch times are as the
 * reads left them (before the ISR is checked). */
void fetch_session_cache_settle(FetchSessionCache *cache, gpointer replica);
/* Calls `quiet_cb` for each quiet partition of each session in a shard, in
 * the shards' last-use order and session order (for invariant checks). */
void fetch_session_cache_foreach_quiet(const FetchSessionCache *cache,
                                       void (*quiet_cb)(gpointer replica, gint32 replica_id,
                                                        gint8 isolation,
                                                        const KFetchPartition *request,
                                                        gint64 high_watermark,
                                                        gint64 log_start_offset,
                                                        gpointer user_data),
                                       gpointer user_data);

/* An INCREMENTAL context's fetch waits (Kafka's DelayedFetch): `waiting`
 * is handed to fetch_session_cache_touch's callers while it does. */
void fetch_session_wait(FetchContext *context, gpointer waiting);
/* Drops what fetch_session_new_context gave `context` (its hold on its
 * session, and any wait). Each context is released once. */
void fetch_session_context_release(FetchSessionCache *cache, FetchContext *context);

/* Kafka's FetchContext.updateAndGenerateResponseData: turns `response`, read
 * for `request`'s partitions in order (for an incremental context: as
 * `read`, which this frees, read them), into the answer `context` gives. A
 * full fetch creates its session from them (if the cache has or can evict a
 * slot) and names it; an incremental one keeps only the partitions that
 * must be answered, updating what the session last told, and moves those
 * with records to the end of the session (Kafka's PartitionIterator: the
 * next fetch reads the others first). */
void fetch_session_update_response(FetchSessionCache *cache, const FetchContext *context,
                                   const KFetchRequest *request, KFetchResponse *response,
                                   FetchSessionRead *read, gint64 now_ms);

/* The number of sessions, and of partitions they cache. */
guint fetch_session_cache_size(const FetchSessionCache *cache);
guint64 fetch_session_cache_partitions(const FetchSessionCache *cache);
/* The epoch of session `session_id` (the one its next fetch must carry), or
 * -1 when the cache has no such session. */
gint32 fetch_session_cache_epoch(const FetchSessionCache *cache, gint32 session_id);

/* Asserts the cache's invariants (fetch_session.c). */
void fetch_session_cache_check_invariants(const FetchSessionCache *cache);

#endif
