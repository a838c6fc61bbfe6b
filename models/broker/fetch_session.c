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
 *
 * Transitions of a session:
 *   (none) --full fetch answered, a slot free or evicted--> epoch 1
 *          (fetch_session_update_response, cache_maybe_create)
 *   epoch n --incremental fetch with epoch n--> epoch n+1, touched
 *          (fetch_session_new_context)
 *   any --full fetch naming it, eviction, empty after an update--> removed
 *          (shard_remove)
 *
 * GLib's hash tables here are only looked up; every order that can reach a
 * message is a queue's or a tree's.
 */
#include "fetch_session.h"

#include "sim_assert.h"

#include <string.h>

/* A partition of a session: what its fetcher last asked for it and was
 * last told about it (Kafka's CachedPartition). */
typedef struct {
    KFetchPartition request;       /* tp, fetch offset, log start, epoch, max bytes */
    gint64 high_watermark;         /* last told; -1 after an error or when new */
    gint64 local_log_start_offset; /* last told; -1 when new */
    GList *link;                   /* its place in FetchSession.partitions */
    gpointer replica;              /* the caller's object for it (borrowed), or NULL */
} CachedPartition;

typedef struct {
    gint32 id;
    guint64 serial;      /* which session of the cache's life this is */
    gboolean privileged; /* a follower's */
    GQueue partitions;   /* CachedPartition* (owned), in session order */
    GHashTable *by_tp;   /* KTopicPartition* -> CachedPartition*; looked up only */
    gint64 creation_ms;
    gint64 last_used_ms;
    gint32 epoch;
    gint32 cached_size; /* its size at the last touch; -1 before */
    gboolean in_by_privileged;
    gboolean in_by_all;
} FetchSession;

typedef struct {
    gint32 max_entries;
    gint32 id_low; /* ids in [id_low, id_high) */
    gint32 id_high;
    GHashTable *sessions;    /* id -> FetchSession* (owned); looked up only */
    GTree *last_used;        /* FetchSession* by (last_used_ms, id) */
    GTree *evictable_by_all; /* FetchSession* by (privileged, cached_size, id) */
    GTree *evictable_by_privileged;
    guint64 num_partitions;
} Shard;

struct FetchSessionCache {
    Shard shards[FETCH_SESSION_CACHE_SHARDS];
    guint next_shard; /* Kafka's FetchSessionCache.counter */
    gint64 eviction_ms;
    SimRng *rng;
    guint64 serial_next;
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

/* ---- sessions ---- */

static FetchSession *
session_new(gint32 id, guint64 serial, gboolean privileged, gint64 now_ms)
{
    FetchSession *session = g_new0(FetchSession, 1);
    session->id = id;
    session->serial = serial;
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
session_free(gpointer data)
{
    FetchSession *session = data;
    g_hash_table_destroy(session->by_tp);
    g_queue_clear_full(&session->partitions, g_free);
    g_free(session);
}

/* Adds a partition at the end of the session; NULL if it is there already. */
static CachedPartition *
session_add(FetchSession *session, const KFetchPartition *request)
{
    if (g_hash_table_contains(session->by_tp, &request->tp))
        return NULL;
    CachedPartition *cached = g_new0(CachedPartition, 1);
    cached->request = *request;
    cached->high_watermark = -1;
    cached->local_log_start_offset = -1;
    g_queue_push_tail(&session->partitions, cached);
    cached->link = session->partitions.tail;
    g_hash_table_insert(session->by_tp, &cached->request.tp, cached);
    return cached;
}

static void
session_remove_partition(FetchSession *session, const KTopicPartition *tp)
{
    CachedPartition *cached = g_hash_table_lookup(session->by_tp, tp);
    if (cached == NULL)
        return;
    g_hash_table_remove(session->by_tp, tp);
    g_queue_delete_link(&session->partitions, cached->link);
    g_free(cached);
}

/* Kafka's FetchSession.update: the request's partitions join the session
 * or update what it remembers of them; the forgotten ones leave it. */
static void
session_update(FetchSession *session, const KFetchRequest *request)
{
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartition *entry = &g_array_index(request->partitions, KFetchPartition, i);
        CachedPartition *cached = g_hash_table_lookup(session->by_tp, &entry->tp);
        if (cached == NULL)
            session_add(session, entry);
        else
            cached->request = *entry; /* Kafka's updateRequestParams */
    }
    for (guint i = 0; i < request->forgotten->len; i++)
        session_remove_partition(session, &g_array_index(request->forgotten, KTopicPartition, i));
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
shard_remove(Shard *shard, FetchSession *session)
{
    g_tree_remove(shard->last_used, session);
    shard_leave_evictable(shard, session);
    if (session->cached_size > 0)
        shard->num_partitions -= (guint64)session->cached_size;
    g_hash_table_remove(shard->sessions, GINT_TO_POINTER(session->id));
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
        shard_remove(shard, lru);
        return TRUE;
    }
    FetchSession *first =
        tree_first(privileged ? shard->evictable_by_privileged : shard->evictable_by_all);
    if (first == NULL)
        return FALSE;
    if (evictable_key_compare(privileged, size, 0, first->privileged, first->cached_size,
                              first->id) < 0)
        return FALSE;
    shard_remove(shard, first);
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
    FetchSession *session = session_new(id, cache->serial_next++, privileged, now_ms);
    for (guint i = 0; i < request->partitions->len; i++) {
        const KFetchPartitionResponse *data =
            &g_array_index(response->partitions, KFetchPartitionResponse, i);
        CachedPartition *cached =
            session_add(session, &g_array_index(request->partitions, KFetchPartition, i));
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
    cache->serial_next = 1;
    gint32 range = G_MAXINT32 / FETCH_SESSION_CACHE_SHARDS;
    for (gint32 i = 0; i < FETCH_SESSION_CACHE_SHARDS; i++) {
        Shard *shard = &cache->shards[i];
        shard->max_entries = slots / FETCH_SESSION_CACHE_SHARDS;
        shard->id_low = MAX(1, i * range);
        shard->id_high = (i + 1) * range;
        shard->sessions = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, session_free);
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
        g_tree_destroy(shard->last_used);
        g_tree_destroy(shard->evictable_by_all);
        g_tree_destroy(shard->evictable_by_privileged);
        g_hash_table_destroy(shard->sessions);
    }
    g_free(cache);
}

static void
context_incremental(FetchSessionCache *cache, FetchSession *session, KFetchRequest *request,
                    gint64 now_ms, FetchContext *context)
{
    shard_touch(shard_of(cache, session->id), session, now_ms, cache->eviction_ms);
    session->epoch = session->epoch == G_MAXINT32 ? 1 : session->epoch + 1;
    context->kind = FETCH_CONTEXT_INCREMENTAL;
    context->session_id = session->id;
    context->expected_epoch = session->epoch;
    context->session_serial = session->serial;
    /* Kafka's IncrementalFetchContext.foreachPartition: the fetch reads
     * every partition of the session, with what it remembers of each. */
    g_array_set_size(request->partitions, session->partitions.length);
    guint i = 0;
    for (GList *link = session->partitions.head; link != NULL; link = link->next) {
        const CachedPartition *cached = link->data;
        g_array_index(request->partitions, KFetchPartition, i++) = cached->request;
    }
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
            shard_remove(shard_of(cache, named->id), named);
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
    session_update(session, request);
    if (session->partitions.length == 0) {
        shard_remove(shard_of(cache, session->id), session);
        context->kind = FETCH_CONTEXT_SESSIONLESS;
        return;
    }
    context_incremental(cache, session, request, now_ms, context);
}

void
fetch_session_context_replicas(FetchSessionCache *cache, const FetchContext *context,
                               GPtrArray *out, FetchSessionLookupCb lookup_cb, gpointer user_data)
{
    KSIM_ASSERT(context->kind == FETCH_CONTEXT_INCREMENTAL);
    FetchSession *session = cache_get(cache, context->session_id);
    KSIM_ASSERT(session != NULL);
    KSIM_ASSERT(session->epoch == context->expected_epoch);
    for (GList *link = session->partitions.head; link != NULL; link = link->next) {
        CachedPartition *cached = link->data;
        if (cached->replica == NULL)
            cached->replica = lookup_cb(&cached->request.tp, user_data);
        g_ptr_array_add(out, cached->replica);
    }
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
 * would get. */
static void
update_incremental(FetchSessionCache *cache, const FetchContext *context, KFetchResponse *response)
{
    FetchSession *session = cache_get(cache, context->session_id);
    if (session == NULL || session->serial != context->session_serial) {
        response_session_error(response, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND,
                               KAFKA_FETCH_SESSION_ID_INVALID);
        return;
    }
    if (session->epoch != context->expected_epoch) {
        response_session_error(response, KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH, session->id);
        return;
    }
    /* The session is as the context left it (its epoch has not moved), so
     * its partitions are the response's, in order. Those moved to the end
     * come after the ones still to visit, and the walk stops before them. */
    GArray *partitions = response->partitions;
    KSIM_ASSERT(session->partitions.length == partitions->len);
    GList *link = session->partitions.head;
    guint kept = 0;
    for (guint i = 0; i < partitions->len; i++) {
        GList *following = link->next;
        CachedPartition *cached = link->data;
        KFetchPartitionResponse *data = &g_array_index(partitions, KFetchPartitionResponse, i);
        if (!cached_must_respond(cached, data)) {
            kproto_fetch_partition_response_clear(data);
        } else {
            if (has_records(data)) {
                /* To the end: the next fetch reads the others first. */
                g_queue_unlink(&session->partitions, link);
                g_queue_push_tail_link(&session->partitions, link);
            }
            if (kept != i)
                g_array_index(partitions, KFetchPartitionResponse, kept) = *data;
            kept++;
        }
        link = following;
    }
    response_truncate(partitions, kept);
    response->session_id = session->id;
}

void
fetch_session_update_response(FetchSessionCache *cache, const FetchContext *context,
                              const KFetchRequest *request, KFetchResponse *response, gint64 now_ms)
{
    response->error = KAFKA_ERROR_NONE;
    response->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
    switch (context->kind) {
    case FETCH_CONTEXT_SESSIONLESS:
        return;
    case FETCH_CONTEXT_ERROR:
        response_session_error(response, context->error, KAFKA_FETCH_SESSION_ID_INVALID);
        return;
    case FETCH_CONTEXT_FULL:
        KSIM_ASSERT(request->partitions->len == response->partitions->len);
        response->session_id =
            cache_maybe_create(cache, context->privileged, request, response, now_ms);
        return;
    case FETCH_CONTEXT_INCREMENTAL:
        update_incremental(cache, context, response);
        return;
    }
    KSIM_ASSERT(!"a fetch context has one of the kinds");
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
    for (GList *link = session->partitions.head; link != NULL; link = link->next) {
        const CachedPartition *cached = link->data;
        KSIM_ASSERT(cached->link == link);
        KSIM_ASSERT(g_hash_table_lookup(session->by_tp, &cached->request.tp) == cached);
    }
    return FALSE;
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
