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
    gint32 session_id;      /* INCREMENTAL */
    gint32 expected_epoch;  /* INCREMENTAL: the session's epoch at the answer */
    guint64 session_serial; /* INCREMENTAL: which session of that id */
} FetchContext;

/* Kafka's FetchManager.newContext: resolves `request` in the cache at
 * `now_ms` into `context`. A full fetch
 * closes the session it names. An incremental one updates its session with
 * the request's partitions and forgotten ones and bumps its epoch; the
 * request's partitions become all of the session's, in session order, as
 * Kafka reads every partition of the session. A session error empties the
 * request's partitions. */
void fetch_session_new_context(FetchSessionCache *cache, KFetchRequest *request, gint64 now_ms,
                               FetchContext *context);

/* Looks up the caller's object for a partition (the leader's replica);
 * NULL where it has none. (transfer none) */
typedef gpointer (*FetchSessionLookupCb)(const KTopicPartition *tp, gpointer user_data);

/* For an INCREMENTAL `context`, just made: appends to `out` the caller's
 * object for each of its request's partitions (the session's), as the
 * session remembers it or, where it has none yet, as `lookup_cb` finds it.
 * The objects must live as long as the cache (a broker's replicas do), so
 * that a fetch in a session finds its replicas without hashing their names.
 * Kafka keeps no such pointer; it changes nothing a run shows. */
void fetch_session_context_replicas(FetchSessionCache *cache, const FetchContext *context,
                                    GPtrArray *out, FetchSessionLookupCb lookup_cb,
                                    gpointer user_data);

/* Kafka's FetchContext.updateAndGenerateResponseData: turns `response`, read
 * for `request`'s partitions in order, into the answer `context` gives. A
 * full fetch creates its session from them (if the cache has or can evict a
 * slot) and names it; an incremental one keeps only the partitions that
 * must be answered, updating what the session last told, and moves those
 * with records to the end of the session (Kafka's PartitionIterator: the
 * next fetch reads the others first). */
void fetch_session_update_response(FetchSessionCache *cache, const FetchContext *context,
                                   const KFetchRequest *request, KFetchResponse *response,
                                   gint64 now_ms);

/* The number of sessions, and of partitions they cache. */
guint fetch_session_cache_size(const FetchSessionCache *cache);
guint64 fetch_session_cache_partitions(const FetchSessionCache *cache);
/* The epoch of session `session_id` (the one its next fetch must carry), or
 * -1 when the cache has no such session. */
gint32 fetch_session_cache_epoch(const FetchSessionCache *cache, gint32 session_id);

/* Asserts the cache's invariants (fetch_session.c). */
void fetch_session_cache_check_invariants(const FetchSessionCache *cache);

#endif
