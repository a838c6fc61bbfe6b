/*
 * fetch_session: the leader's incremental fetch sessions (see
 * fetch_session.h), written after Apache Kafka 3.9's
 * core/src/main/scala/kafka/server/FetchSession.scala (FetchManager,
 * FetchSession, CachedPartition, FetchSessionCacheShard, FetchSessionCache).
 *
 * Invariants (fetch_session_cache_check_invariants):
 *  1. A shard holds at most its max_entries sessions, each under its id,
 *     which lies in the shard's id range and is never INVALID.
 *  2. Every session is in its shard's last_used tree, ordered by (last use,
 *     id); it is in evictable_by_privileged exactly when it is not
 *     privileged or is older than the eviction time at its last touch, and
 *     in evictable_by_all exactly when it is older than that (both ordered
 *     by (privileged, size at its last touch, id)).
 *  3. A session's by_tp holds exactly its partitions, each under its own
 *     topic-partition, and each partition's link is its place in the
 *     session's queue; a shard's num_partitions is the sum of its sessions'
 *     sizes at their last touch.
 *  4. A session's epoch is never INITIAL or FINAL: it is the epoch its next
 *     incremental fetch must carry.
 *  5. A session's `dirty` tree holds exactly its partitions that are not
 *     quiet, by their order, and the session queue is in increasing order.
 *  6. `by_replica` holds, under each owner's object, exactly the partitions
 *     of live sessions (in a shard, or held by a context) that resolved to
 *     it.
 *
 * Transitions of a session:
 *   (none) --full fetch answered, a slot free or evicted--> epoch 1
 *          (fetch_session_update_response, cache_maybe_create)
 *   epoch n --incremental fetch with epoch n--> epoch n+1, touched
 *          (fetch_session_new_context)
 *   any --full fetch naming it, eviction, empty after an update--> removed
 *          (shard_remove)
 *
 * A session lives while its shard or a context holds it (`refs`): one
 * evicted or closed while a fetch in it waits stays readable, and its
 * partitions touchable, until that fetch is answered.
 *
 * GLib's hash tables here are only looked up; every order that can reach a
 * message is a queue's or a tree's.
 */
#include "fetch_session.h"

#include "sim_assert.h"

#include <string.h>

/* A partition of a session: what its fetcher last asked for it and was
 * last told about it (Kafka's CachedPartition). */
typedef struct FetchSession FetchSession;

typedef struct {
    KFetchPartition request;       /* tp, fetch offset, log start, epoch, max bytes */
    gint64 high_watermark;         /* last told; -1 after an error or when new */
    gint64 local_log_start_offset; /* last told; -1 when new */
    GList *link;                   /* its place in FetchSession.partitions */
    gpointer replica;              /* the caller's object for it (borrowed), or NULL */
    FetchSession *session;
    guint64 order;   /* its place in the session: smaller is read first */
    guint64 touched; /* the cache's touch serial when it was last touched */
    gboolean quiet;  /* not in the session's `dirty` tree (see fetch_session.h) */
} CachedPartition;

struct FetchSession {
    gint32 id;
    gboolean privileged; /* a follower's */
    GQueue partitions;   /* CachedPartition* (owned), in session order */
    GHashTable *by_tp;   /* KTopicPartition* -> CachedPartition*; looked up only */
    gint64 creation_ms;
    gint64 last_used_ms;
    gint32 epoch;
    gint32 cached_size; /* its size at the last touch; -1 before */
    gboolean in_by_privileged;
    gboolean in_by_all;
    gint refs;          /* its shard's, and each context's */
    gboolean removed;   /* no longer in its shard */
    gint32 replica_id;  /* its fetcher: a follower's id, or -1 */
    gint8 isolation;    /* what its fetches read */
    GTree *dirty;       /* CachedPartition* not quiet, by order */
    guint64 order_next;
    gint64 read_ns;      /* when its partitions were last read */
    gint64 prev_read_ns; /* when they were read before that */
    gboolean reading;      /* a read is under way, */
    gboolean read_started; /* has given a partition, */
    guint64 read_cursor;   /* the last of this order */
    gpointer waiting;    /* the delayed fetch waiting on it, or NULL */
};

typedef struct {
    gint32 max_entries;
    gint32 id_low; /* ids in [id_low, id_high) */
    gint32 id_high;
    GHashTable *sessions;    /* id -> FetchSession* (owned); looked up only */
    GTree *last_used;        /* FetchSession* by (last_used_ms, id) */
    GTree *evictable_by_all; /* FetchSession* by (privileged, cached_size, id) */
    GTree *evictable_by_privileged;
    guint64 num_partitions;
    struct FetchSessionCache *cache;
} Shard;

struct FetchSessionCache {
    Shard shards[FETCH_SESSION_CACHE_SHARDS];
    guint next_shard; /* Kafka's FetchSessionCache.counter */
    gint64 eviction_ms;
    SimRng *rng;
    FetchSessionHooks hooks;
    /* owner's object -> GPtrArray of CachedPartition* (owned array);
     * looked up only */
    GHashTable *by_replica;
    guint64 touch_serial;
};

struct FetchSessionRead {
    FetchSessionCache *cache;
    FetchSession *session;
    CachedPartition *current;
    GPtrArray *visited; /* CachedPartition*, in the order read */
    GArray *touched;    /* guint64: each one's touch serial as its read began */
};

/* ---- keys ---- */

static gint
last_used_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const FetchSession *x = a;
    const FetchSession *y = b;
    (void)user_data;
    if (x->last_used_ms != y->last_used_ms)
        return x->last_used_ms < y->last_used_ms ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

/* Kafka's EvictableKey.compareTo: (privileged, size, id). */
static gint
evictable_key_compare(gboolean privileged_a, gint32 size_a, gint32 id_a, gboolean privileged_b,
                      gint32 size_b, gint32 id_b)
{
    if (privileged_a != privileged_b)
        return privileged_a ? 1 : -1;
    if (size_a != size_b)
        return size_a < size_b ? -1 : 1;
    return id_a < id_b ? -1 : (id_a > id_b);
}

static gint
evictable_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const FetchSession *x = a;
    const FetchSession *y = b;
    (void)user_data;
    return evictable_key_compare(x->privileged, x->cached_size, x->id, y->privileged,
                                 y->cached_size, y->id);
}

static gint
order_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const CachedPartition *x = a;
    const CachedPartition *y = b;
    (void)user_data;
    return x->order < y->order ? -1 : (x->order > y->order);
}

/* ---- which sessions hold a replica ---- */

static void
members_add(FetchSessionCache *cache, CachedPartition *cached)
{
    GPtrArray *members = g_hash_table_lookup(cache->by_replica, cached->replica);
    if (members == NULL) {
        members = g_ptr_array_sized_new(4);
        g_hash_table_insert(cache->by_replica, cached->replica, members);
    }
    g_ptr_array_add(members, cached);
}

static void
members_remove(FetchSessionCache *cache, CachedPartition *cached)
{
    if (cached->replica == NULL)
        return;
    GPtrArray *members = g_hash_table_lookup(cache->by_replica, cached->replica);
    KSIM_ASSERT(members != NULL);
    gboolean removed = g_ptr_array_remove(members, cached);
    KSIM_ASSERT(removed);
    if (members->len == 0)
        g_hash_table_remove(cache->by_replica, cached->replica);
}

/* Resolves the partition's owner object once it has one. */
static gpointer
cached_replica(FetchSessionCache *cache, CachedPartition *cached)
{
    if (cached->replica == NULL && cache->hooks.lookup != NULL) {
        cached->replica = cache->hooks.lookup(&cached->request.tp, cache->hooks.user_data);
        if (cached->replica != NULL)
            members_add(cache, cached);
    }
    return cached->replica;
}

/* ---- quiet partitions ---- */

/* When the quiet partition was last read: at this read of the session if
 * the read under way has passed it, else at the read before. */
static gint64
quiet_read_ns(const CachedPartition *cached)
{
    const FetchSession *session = cached->session;
    if (session->reading && (!session->read_started || cached->order > session->read_cursor))
        return session->prev_read_ns;
    return session->read_ns;
}

/* Hands a quiet partition's read time to the owner (a follower's session). */
static void
cached_settle(FetchSessionCache *cache, const CachedPartition *cached)
{
    const FetchSession *session = cached->session;
    if (cached->quiet && session->replica_id >= 0 && cache->hooks.settle != NULL)
        cache->hooks.settle(cached->replica, session->replica_id, quiet_read_ns(cached),
                            cache->hooks.user_data);
}

/* The partition is to be read at the next fetch (and any under way that
 * has not passed it). */
static void
cached_touch(FetchSessionCache *cache, CachedPartition *cached)
{
    cached->touched = ++cache->touch_serial;
    if (!cached->quiet)
        return;
    cached_settle(cache, cached);
    cached->quiet = FALSE;
    g_tree_insert(cached->session->dirty, cached, cached);
}

static void
cached_set_quiet(CachedPartition *cached)
{
    KSIM_ASSERT(!cached->quiet);
    gboolean removed = g_tree_remove(cached->session->dirty, cached);
    KSIM_ASSERT(removed);
    cached->quiet = TRUE;
}

/* Moves the partition to the end of its session. */
static void
cached_to_end(CachedPartition *cached)
{
    FetchSession *session = cached->session;
    g_queue_unlink(&session->partitions, cached->link);
    g_queue_push_tail_link(&session->partitions, cached->link);
    if (!cached->quiet)
        g_tree_remove(session->dirty, cached);
    cached->order = session->order_next++;
    if (!cached->quiet)
        g_tree_insert(session->dirty, cached, cached);
}

/* ---- sessions ---- */

static FetchSession *
session_new(gint32 id, gboolean privileged, gint64 now_ms)
{
    FetchSession *session = g_new0(FetchSession, 1);
    session->refs = 1;
    session->replica_id = -1;
    session->dirty = g_tree_new_full(order_compare, NULL, NULL, NULL);
    session->id = id;
    session->privileged = privileged;
    g_queue_init(&session->partitions);
    session->by_tp = g_hash_table_new(ktp_hash, ktp_hash_equal);
    session->creation_ms = now_ms;
    session->last_used_ms = now_ms;
    /* Kafka's FetchMetadata.nextEpoch(INITIAL_EPOCH). */
    session->epoch = 1;
    session->cached_size = -1;
    return session;
}

static void
session_unref(FetchSessionCache *cache, FetchSession *session)
{
    KSIM_ASSERT(session->refs > 0);
    if (--session->refs > 0)
        return;
    KSIM_ASSERT(session->removed);
    for (GList *link = session->partitions.head; link != NULL; link = link->next)
        members_remove(cache, link->data);
    g_tree_destroy(session->dirty);
    g_hash_table_destroy(session->by_tp);
    g_queue_clear_full(&session->partitions, g_free);
    g_free(session);
}

/* Adds a partition at the end of the session, to be read; NULL if it is
 * there already. */
static CachedPartition *
session_add(FetchSessionCache *cache, FetchSession *session, const KFetchPartition *request)
{
    if (g_hash_table_contains(session->by_tp, &request->tp))
        return NULL;
    CachedPartition *cached = g_new0(CachedPartition, 1);
    cached->request = *request;
    cached->high_watermark = -1;
    cached->local_log_start_offset = -1;
    cached->session = session;
    cached->order = session->order_next++;
    cached->touched = ++cache->touch_serial;
    g_queue_push_tail(&session->partitions, cached);
    cached->link = session->partitions.tail;
    g_hash_table_insert(session->by_tp, &cached->request.tp, cached);
    g_tree_insert(session->dirty, cached, cached);
    return cached;
}

static void
session_remove_partition(FetchSessionCache *cache, FetchSession *session,
                         const KTopicPartition *tp)
{
    CachedPartition *cached = g_hash_table_lookup(session->by_tp, tp);
    if (cached == NULL)
        return;
    if (!cached->quiet)
        g_tree_remove(session->dirty, cached);
    members_remove(cache, cached);
    g_hash_table_remove(session->by_tp, tp);
    g_queue_delete_link(&session->partitions, cached->link);
    g_free(cached);
}

/* Kafka's FetchSession.update: the request's partitions join the session
 * or update what it remembers of them (and are read); the forgotten ones
 * leave it. A fetcher that changed how it reads has every partition read. */
static void
session_update(FetchSessionCache *cache, FetchSession *session, const KFetchRequest *request)
{
    if (request->isolation != session->isolation || request->replica_id != session->replica_id) {
        session->isolation = request->isolation;
        session->replica_id = request->replica_id;
        for (GList *link = session->partitions.head; link != NULL; link = link->next)
            cached_touch(cache, link->data);
    }
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        CachedPartition *cached = g_hash_table_lookup(session->by_tp, &entry->tp);
        if (cached == NULL) {
            session_add(cache, session, entry);
        } else {
            cached->request = *entry; /* Kafka's updateRequestParams */
            cached_touch(cache, cached);
        }
    }
    for (guint i = 0; i < request->forgotten->len; i++)
        session_remove_partition(cache, session,
                                 &g_array_index(request->forgotten, KTopicPartition, i));
}

/* Kafka's FetchResponse.recordsSize > 0. */
static gboolean
has_records(const KFetchPartitionResponse *data)
{
    return data->encoded_size_bytes > 0 || (data->batches != NULL && data->batches->len > 0);
}

/* Kafka's CachedPartition.maybeUpdateResponseData (updating): TRUE when the
 * partition must be in an incremental answer. Kafka 3.9 compares the HW and
 * the log start, not the LSO. */
static gboolean
cached_must_respond(CachedPartition *cached, const KFetchPartitionResponse *data)
{
    gboolean must = has_records(data);
    if (cached->high_watermark != data->high_watermark) {
        must = TRUE;
        cached->high_watermark = data->high_watermark;
    }
    if (cached->local_log_start_offset != data->log_start_offset) {
        must = TRUE;
        cached->local_log_start_offset = data->log_start_offset;
    }
    if (data->error != KAFKA_ERROR_NONE) {
        /* Sent again once the error is gone. */
        cached->high_watermark = -1;
        must = TRUE;
    }
    return must;
}

/* ---- shards ---- */

static Shard *
shard_of(FetchSessionCache *cache, gint32 session_id)
{
    gint32 range = G_MAXINT32 / FETCH_SESSION_CACHE_SHARDS;
    if (session_id <= 0 || session_id / range >= FETCH_SESSION_CACHE_SHARDS)
        return NULL;
    return &cache->shards[session_id / range];
}

static FetchSession *
cache_get(FetchSessionCache *cache, gint32 session_id)
{
    Shard *shard = shard_of(cache, session_id);
    return shard != NULL ? g_hash_table_lookup(shard->sessions, GINT_TO_POINTER(session_id)) : NULL;
}

static void
shard_leave_evictable(Shard *shard, FetchSession *session)
{
    if (session->in_by_privileged)
        g_tree_remove(shard->evictable_by_privileged, session);
    if (session->in_by_all)
        g_tree_remove(shard->evictable_by_all, session);
    session->in_by_privileged = FALSE;
    session->in_by_all = FALSE;
}

/* Kafka's FetchSessionCacheShard.remove. */
static void
shard_remove(FetchSessionCache *cache, Shard *shard, FetchSession *session)
{
    g_tree_remove(shard->last_used, session);
    shard_leave_evictable(shard, session);
    if (session->cached_size > 0)
        shard->num_partitions -= (guint64)session->cached_size;
    g_hash_table_remove(shard->sessions, GINT_TO_POINTER(session->id));
    session->removed = TRUE;
    session_unref(cache, session);
}

/* Kafka's FetchSessionCacheShard.touch. */
static void
shard_touch(Shard *shard, FetchSession *session, gint64 now_ms, gint64 eviction_ms)
{
    g_tree_remove(shard->last_used, session);
    session->last_used_ms = now_ms;
    g_tree_insert(shard->last_used, session, session);
    if (session->cached_size != -1)
        shard->num_partitions -= (guint64)session->cached_size;
    gint32 size = (gint32)session->partitions.length;
    gboolean old = now_ms - session->creation_ms > eviction_ms;
    gboolean by_privileged = !session->privileged || old;
    /* Kafka removes and puts back its evictable key; where neither the key
     * (its size) nor the maps it belongs in change, that changes nothing. */
    if (size != session->cached_size || by_privileged != session->in_by_privileged ||
        old != session->in_by_all) {
        shard_leave_evictable(shard, session);
        session->cached_size = size;
        if (by_privileged) {
            g_tree_insert(shard->evictable_by_privileged, session, session);
            session->in_by_privileged = TRUE;
        }
        if (old) {
            g_tree_insert(shard->evictable_by_all, session, session);
            session->in_by_all = TRUE;
        }
    }
    shard->num_partitions += (guint64)session->cached_size;
}

static FetchSession *
tree_first(GTree *tree)
{
    GTreeNode *node = g_tree_node_first(tree);
    return node != NULL ? g_tree_node_value(node) : NULL;
}

/* Kafka's FetchSessionCacheShard.tryEvict: a session unused for longer than
 * the eviction time goes first; else the first evictable one (the
 * privileged map for a privileged newcomer), if it is worth no more than
 * the newcomer of `size` partitions. */
static gboolean
shard_try_evict(FetchSessionCache *cache, Shard *shard, gboolean privileged, gint32 size,
                gint64 now_ms)
{
    FetchSession *lru = tree_first(shard->last_used);
    if (lru == NULL)
        return FALSE;
    if (now_ms - lru->last_used_ms > cache->eviction_ms) {
        shard_remove(cache, shard, lru);
        return TRUE;
    }
    FetchSession *first =
        tree_first(privileged ? shard->evictable_by_privileged : shard->evictable_by_all);
    if (first == NULL)
        return FALSE;
    if (evictable_key_compare(privileged, size, 0, first->privileged, first->cached_size,
                              first->id) < 0)
        return FALSE;
    shard_remove(cache, shard, first);
    return TRUE;
}

/* Kafka's FetchSessionCacheShard.newSessionId: drawn in the shard's range,
 * from the broker's seeded stream. */
static gint32
shard_new_session_id(FetchSessionCache *cache, Shard *shard)
{
    for (guint attempt = 0; attempt < 1000; attempt++) {
        gint32 id = (gint32)sim_rng_range(cache->rng, shard->id_low, shard->id_high);
        if (id != KAFKA_FETCH_SESSION_ID_INVALID &&
            !g_hash_table_contains(shard->sessions, GINT_TO_POINTER(id)))
            return id;
    }
    KSIM_ASSERT(!"a shard's id range is never nearly full");
    return KAFKA_FETCH_SESSION_ID_INVALID;
}

/* Kafka's FetchSessionCacheShard.maybeCreateSession, on the next shard
 * (FetchSessionCache.getNextCacheShard): the new session's partitions are
 * the request's, with what the response told of each. */
static gint32
cache_maybe_create(FetchSessionCache *cache, gboolean privileged, const KFetchRequest *request,
                   const KFetchResponse *response, gint64 now_ms)
{
    Shard *shard = &cache->shards[cache->next_shard++ % FETCH_SESSION_CACHE_SHARDS];
    gint32 size = (gint32)response->partitions->len;
    if ((gint32)g_hash_table_size(shard->sessions) >= shard->max_entries &&
        !shard_try_evict(cache, shard, privileged, size, now_ms))
        return KAFKA_FETCH_SESSION_ID_INVALID;
    gint32 id = shard_new_session_id(cache, shard);
    FetchSession *session = session_new(id, privileged, now_ms);
    session->replica_id = request->replica_id;
    session->isolation = request->isolation;
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartitionResponse *data =
            &g_array_index(response->partitions, KFetchPartitionResponse, i);
        CachedPartition *cached =
            session_add(cache, session, &g_array_index(request->partitions, KFetchPartition, i));
        if (cached == NULL)
            continue; /* named twice: a session has each partition once */
        cached->high_watermark = data->error == KAFKA_ERROR_NONE ? data->high_watermark : -1;
        cached->local_log_start_offset = data->log_start_offset;
    }
    g_hash_table_insert(shard->sessions, GINT_TO_POINTER(id), session);
    shard_touch(shard, session, now_ms, cache->eviction_ms);
    return id;
}

/* ---- the cache ---- */

FetchSessionCache *
fetch_session_cache_new(gint32 slots, gint64 eviction_ms, SimRng *rng)
{
    KSIM_ASSERT(slots >= 0);
    FetchSessionCache *cache = g_new0(FetchSessionCache, 1);
    cache->eviction_ms = eviction_ms;
    cache->rng = rng;
    cache->by_replica =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_ptr_array_unref);
    gint32 range = G_MAXINT32 / FETCH_SESSION_CACHE_SHARDS;
    for (gint32 i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++) {
        Shard *shard = &cache->shards[i];
        shard->max_entries = slots / FETCH_SESSION_CACHE_SHARDS;
        shard->cache = cache;
        shard->id_low = MAX(1, i * range);
        shard->id_high = (i + 1) * range;
        shard->sessions = g_hash_table_new(g_direct_hash, g_direct_equal);
        shard->last_used = g_tree_new_full(last_used_compare, NULL, NULL, NULL);
        shard->evictable_by_all = g_tree_new_full(evictable_compare, NULL, NULL, NULL);
        shard->evictable_by_privileged = g_tree_new_full(evictable_compare, NULL, NULL, NULL);
    }
    return cache;
}

void
fetch_session_cache_free(FetchSessionCache *cache)
{
    if (cache == NULL)
        return;
    for (guint i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++) {
        Shard *shard = &cache->shards[i];
        FetchSession *session;
        while ((session = tree_first(shard->last_used)) != NULL)
            shard_remove(cache, shard, session);
        g_tree_destroy(shard->last_used);
        g_tree_destroy(shard->evictable_by_all);
        g_tree_destroy(shard->evictable_by_privileged);
        g_hash_table_destroy(shard->sessions);
    }
    /* Every context was released first: no session outlives its shard. */
    KSIM_ASSERT(g_hash_table_size(cache->by_replica) == 0);
    g_hash_table_destroy(cache->by_replica);
    g_free(cache);
}

void
fetch_session_cache_set_hooks(FetchSessionCache *cache, const FetchSessionHooks *hooks)
{
    cache->hooks = *hooks;
}

static void
context_incremental(FetchSessionCache *cache, FetchSession *session, gint64 now_ms,
                    FetchContext *context)
{
    shard_touch(shard_of(cache, session->id), session, now_ms, cache->eviction_ms);
    session->epoch = session->epoch == G_MAXINT32 ? 1 : session->epoch + 1;
    context->kind = FETCH_CONTEXT_INCREMENTAL;
    context->expected_epoch = session->epoch;
    context->session = session;
    session->refs++;
}

void
fetch_session_new_context(FetchSessionCache *cache, KFetchRequest *request, gint64 now_ms,
                          FetchContext *context)
{
    memset(context, 0, sizeof(*context));
    gboolean full = request->session_epoch == KAFKA_FETCH_EPOCH_INITIAL ||
                    request->session_epoch == KAFKA_FETCH_EPOCH_FINAL;
    if (full) {
        /* Any session a full fetch names is closed. */
        FetchSession *named = cache_get(cache, request->session_id);
        if (named != NULL)
            shard_remove(cache, shard_of(cache, named->id), named);
        context->kind = request->session_epoch == KAFKA_FETCH_EPOCH_FINAL
                            ? FETCH_CONTEXT_SESSIONLESS
                            : FETCH_CONTEXT_FULL;
        context->privileged = request->replica_id >= 0;
        return;
    }
    FetchSession *session = cache_get(cache, request->session_id);
    context->kind = FETCH_CONTEXT_ERROR;
    if (session == NULL || session->epoch != request->session_epoch) {
        context->error = session == NULL ? KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND
                                         : KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH;
        g_array_set_size(request->partitions, 0);
        return;
    }
    session_update(cache, session, request);
    if (session->partitions.length == 0) {
        shard_remove(cache, shard_of(cache, session->id), session);
        context->kind = FETCH_CONTEXT_SESSIONLESS;
        return;
    }
    context_incremental(cache, session, now_ms, context);
}

void
fetch_session_context_release(FetchSessionCache *cache, FetchContext *context)
{
    if (context->kind != FETCH_CONTEXT_INCREMENTAL || context->session == NULL)
        return;
    FetchSession *session = context->session;
    if (context->waiting) {
        KSIM_ASSERT(session->waiting != NULL);
        session->waiting = NULL;
    }
    context->session = NULL;
    context->waiting = FALSE;
    session_unref(cache, session);
}

void
fetch_session_wait(FetchContext *context, gpointer waiting)
{
    KSIM_ASSERT(context->kind == FETCH_CONTEXT_INCREMENTAL && context->session != NULL);
    KSIM_ASSERT(context->session->waiting == NULL && !context->waiting);
    context->session->waiting = waiting;
    context->waiting = TRUE;
}

/* ---- reading a session ---- */

FetchSessionRead *
fetch_session_read_begin(FetchSessionCache *cache, const FetchContext *context, gint64 now_ns)
{
    KSIM_ASSERT(context->kind == FETCH_CONTEXT_INCREMENTAL && context->session != NULL);
    FetchSession *session = context->session;
    /* A session has one fetch at a time, and a fetch is read whole before
     * another read of its session can begin. */
    KSIM_ASSERT(!session->reading);
    FetchSessionRead *read = g_new0(FetchSessionRead, 1);
    read->cache = cache;
    read->session = session;
    session->refs++;
    read->visited = g_ptr_array_new();
    read->touched = g_array_new(FALSE, FALSE, sizeof(guint64));
    session->prev_read_ns = session->read_ns;
    session->read_ns = now_ns;
    session->reading = TRUE;
    session->read_started = FALSE;
    session->read_cursor = 0;
    return read;
}

gboolean
fetch_session_read_next(FetchSessionRead *read, const KFetchPartition **entry, gpointer *replica)
{
    FetchSession *session = read->session;
    KSIM_ASSERT(read->current == NULL);
    GTreeNode *node;
    if (!session->read_started) {
        node = g_tree_node_first(session->dirty);
    } else {
        CachedPartition key = {.order = session->read_cursor};
        node = g_tree_upper_bound(session->dirty, &key);
    }
    if (node == NULL) {
        session->reading = FALSE;
        return FALSE;
    }
    CachedPartition *cached = g_tree_node_value(node);
    session->read_started = TRUE;
    session->read_cursor = cached->order;
    read->current = cached;
    /* The touch serial as the read begins: a touch during the read itself
     * (reading a follower's fetch moves its HW, which can complete a
     * produce whose callback appends to this very partition, as the
     * transaction coordinator's does to __transaction_state) makes it read
     * again at the next fetch, though this read's answer was empty. */
    g_array_append_val(read->touched, cached->touched);
    *entry = &cached->request;
    *replica = cached_replica(read->cache, cached);
    return TRUE;
}

void
fetch_session_read_done(FetchSessionRead *read)
{
    KSIM_ASSERT(read->current != NULL);
    g_ptr_array_add(read->visited, read->current);
    read->current = NULL;
}

void
fetch_session_read_free(FetchSessionRead *read)
{
    if (read == NULL)
        return;
    read->session->reading = FALSE;
    session_unref(read->cache, read->session);
    g_ptr_array_free(read->visited, TRUE);
    g_array_free(read->touched, TRUE);
    g_free(read);
}

/* ---- touching replicas ---- */

void
fetch_session_cache_touch(FetchSessionCache *cache, gpointer replica, GPtrArray *waiting)
{
    GPtrArray *members = g_hash_table_lookup(cache->by_replica, replica);
    for (guint i = 0; members != NULL && i < members->len; i++) {
        CachedPartition *cached = g_ptr_array_index(members, i);
        cached_touch(cache, cached);
        if (waiting != NULL && cached->session->waiting != NULL)
            g_ptr_array_add(waiting, cached->session->waiting);
    }
}

void
fetch_session_cache_settle(FetchSessionCache *cache, gpointer replica)
{
    GPtrArray *members = g_hash_table_lookup(cache->by_replica, replica);
    for (guint i = 0; members != NULL && i < members->len; i++)
        cached_settle(cache, g_ptr_array_index(members, i));
}

/* Shrinks `partitions` to its first `kept` entries, whose slots past were
 * moved or freed already. */
static void
response_truncate(GArray *partitions, guint kept)
{
    g_array_set_clear_func(partitions, NULL);
    g_array_set_size(partitions, kept);
    g_array_set_clear_func(partitions, kproto_fetch_partition_response_clear);
}

static void
response_session_error(KFetchResponse *response, KafkaError error, gint32 session_id)
{
    response->error = error;
    response->session_id = session_id;
    g_array_set_size(response->partitions, 0);
}

/* Kafka's IncrementalFetchContext.updateAndGenerateResponseData. A session
 * evicted or closed while the fetch waited (Kafka's context still holds
 * it) is answered FETCH_SESSION_ID_NOT_FOUND, what the next fetch in it
 * would get. A partition read and not touched since, whose read the owner
 * finds quiet, is not read again until it is touched. */
static void
update_incremental(FetchSessionCache *cache, const FetchContext *context, KFetchResponse *response,
                   FetchSessionRead *read)
{
    FetchSession *session = context->session;
    if (session->removed) {
        response_session_error(response, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND,
                               KAFKA_FETCH_SESSION_ID_INVALID);
        return;
    }
    if (session->epoch != context->expected_epoch) {
        response_session_error(response, KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH, session->id);
        return;
    }
    KSIM_ASSERT(read != NULL && read->session == session);
    GArray *partitions = response->partitions;
    KSIM_ASSERT(read->visited->len == partitions->len);
    guint kept = 0;
    for (guint i = 0; i < partitions->len; i++) {
        CachedPartition *cached = g_ptr_array_index(read->visited, i);
        KFetchPartitionResponse *data = &g_array_index(partitions, KFetchPartitionResponse, i);
        gboolean must = cached_must_respond(cached, data);
        /* An answer with records or an error is never quiet. */
        if (!cached->quiet && cached->touched == g_array_index(read->touched, guint64, i) &&
            !has_records(data) && data->error == KAFKA_ERROR_NONE && cached->replica != NULL &&
            cache->hooks.quiet != NULL &&
            cache->hooks.quiet(cached->replica, session->replica_id, session->isolation,
                               &cached->request, data, cache->hooks.user_data))
            cached_set_quiet(cached);
        if (!must) {
            kproto_fetch_partition_response_clear(data);
            continue;
        }
        /* To the end: the next fetch reads the others first. */
        if (has_records(data))
            cached_to_end(cached);
        if (kept != i)
            g_array_index(partitions, KFetchPartitionResponse, kept) = *data;
        kept++;
    }
    response_truncate(partitions, kept);
    response->session_id = session->id;
}

void
fetch_session_update_response(FetchSessionCache *cache, const FetchContext *context,
                              const KFetchRequest *request, KFetchResponse *response,
                              FetchSessionRead *read, gint64 now_ms)
{
    response->error = KAFKA_ERROR_NONE;
    response->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
    switch (context->kind) {
    case FETCH_CONTEXT_SESSIONLESS:
        break;
    case FETCH_CONTEXT_ERROR:
        response_session_error(response, context->error, KAFKA_FETCH_SESSION_ID_INVALID);
        break;
    case FETCH_CONTEXT_FULL:
        KSIM_ASSERT(request->partitions->len == response->partitions->len);
        response->session_id =
            cache_maybe_create(cache, context->privileged, request, response, now_ms);
        break;
    case FETCH_CONTEXT_INCREMENTAL:
        update_incremental(cache, context, response, read);
        break;
    }
    fetch_session_read_free(read);
}

guint
fetch_session_cache_size(const FetchSessionCache *cache)
{
    guint size = 0;
    for (guint i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++)
        size += g_hash_table_size(cache->shards[i].sessions);
    return size;
}

guint64
fetch_session_cache_partitions(const FetchSessionCache *cache)
{
    guint64 partitions = 0;
    for (guint i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++)
        partitions += cache->shards[i].num_partitions;
    return partitions;
}

gint32
fetch_session_cache_epoch(const FetchSessionCache *cache, gint32 session_id)
{
    const FetchSession *session = cache_get((FetchSessionCache *)cache, session_id);
    return session != NULL ? session->epoch : -1;
}

static gboolean
check_session(gpointer key, gpointer value, gpointer user_data)
{
    const FetchSession *session = value;
    const Shard *shard = user_data;
    (void)key;
    KSIM_ASSERT(session->id >= shard->id_low && session->id < shard->id_high);
    KSIM_ASSERT(g_hash_table_lookup(shard->sessions, GINT_TO_POINTER(session->id)) == session);
    KSIM_ASSERT(session->epoch > KAFKA_FETCH_EPOCH_INITIAL);
    KSIM_ASSERT(g_tree_lookup(shard->evictable_by_privileged, session) ==
                (session->in_by_privileged ? session : NULL));
    KSIM_ASSERT(g_tree_lookup(shard->evictable_by_all, session) ==
                (session->in_by_all ? session : NULL));
    if (session->in_by_all)
        KSIM_ASSERT(session->in_by_privileged);
    if (!session->privileged)
        KSIM_ASSERT(session->in_by_privileged);
    KSIM_ASSERT(g_hash_table_size(session->by_tp) == session->partitions.length);
    KSIM_ASSERT(!session->removed);
    KSIM_ASSERT(!session->reading);
    guint dirty = 0;
    const CachedPartition *previous = NULL;
    for (GList *link = session->partitions.head; link != NULL; link = link->next) {
        const CachedPartition *cached = link->data;
        KSIM_ASSERT(cached->link == link);
        KSIM_ASSERT(cached->session == session);
        KSIM_ASSERT(g_hash_table_lookup(session->by_tp, &cached->request.tp) == cached);
        /* Invariant 5. */
        if (previous != NULL)
            KSIM_ASSERT(previous->order < cached->order);
        previous = cached;
        KSIM_ASSERT(cached->order < session->order_next);
        KSIM_ASSERT(g_tree_lookup(session->dirty, cached) == (cached->quiet ? NULL : cached));
        dirty += cached->quiet ? 0 : 1;
        /* Invariant 6, this way: a resolved partition is a member. */
        if (cached->replica != NULL) {
            const GPtrArray *members = g_hash_table_lookup(shard->cache->by_replica, cached->replica);
            KSIM_ASSERT(members != NULL && g_ptr_array_find((GPtrArray *)members, cached, NULL));
        }
    }
    KSIM_ASSERT((guint)g_tree_nnodes(session->dirty) == dirty);
    return FALSE;
}

void
fetch_session_cache_foreach_quiet(const FetchSessionCache *cache,
                                  void (*quiet_cb)(gpointer replica, gint32 replica_id,
                                                   gint8 isolation, const KFetchPartition *request,
                                                   gint64 high_watermark, gint64 log_start_offset,
                                                   gpointer user_data),
                                  gpointer user_data)
{
    for (guint i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++) {
        GTreeNode *node = g_tree_node_first(cache->shards[i].last_used);
        for (; node != NULL; node = g_tree_node_next(node)) {
            const FetchSession *session = g_tree_node_value(node);
            for (GList *link = session->partitions.head; link != NULL; link = link->next) {
                const CachedPartition *cached = link->data;
                if (cached->quiet)
                    quiet_cb(cached->replica, session->replica_id, session->isolation,
                             &cached->request, cached->high_watermark,
                             cached->local_log_start_offset, user_data);
            }
        }
    }
}

void
fetch_session_cache_check_invariants(const FetchSessionCache *cache)
{
    for (guint i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++) {
        const Shard *shard = &cache->shards[i];
        guint n = g_hash_table_size(shard->sessions);
        KSIM_ASSERT((gint32)n <= MAX(shard->max_entries, 0));
        KSIM_ASSERT((guint)g_tree_nnodes(shard->last_used) == n);
        /* Walked in the last-used tree's order (the sessions' hash table is
         * never iterated). */
        g_tree_foreach(shard->last_used, check_session, (gpointer)shard);
        guint64 partitions = 0;
        GTreeNode *node = g_tree_node_first(shard->last_used);
        for (; node != NULL; node = g_tree_node_next(node)) {
            const FetchSession *session = g_tree_node_value(node);
            partitions += (guint64)MAX(session->cached_size, 0);
        }
        KSIM_ASSERT(partitions == shard->num_partitions);
    }
}
