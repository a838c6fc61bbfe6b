/*
 * fetch_handler: the fetching side of incremental fetch sessions (see
 * fetch_handler.h), written after Apache Kafka 3.9's
 * org.apache.kafka.clients.FetchSessionHandler (and FetchMetadata).
 *
 * Invariants (fetch_handler_check_invariants):
 *  1. `by_tp` holds exactly the entries of `session`, each under its own
 *     topic-partition, and each entry's link is its place in `session`.
 *  2. The epoch is never FINAL (the handler always asks for a session),
 *     and it is INITIAL while there is no session id (an incremental fetch
 *     needs a session).
 *  3. `session` is in the order the partitions joined it, the order the
 *     leader's session keeps them in too: a full fetch's order, then the
 *     ones each incremental fetch added, in its order.
 *
 * Transitions (fetch_handler.h shows the state machine): fetch_handler_build
 * replaces or updates `session`; fetch_handler_handle_response and
 * fetch_handler_handle_error move (session_id, epoch).
 */
#include "fetch_handler.h"

#include "sim_assert.h"

/* One partition of the session: what the handler last asked for it. */
typedef struct {
    KFetchPartition data;
    GList *link;     /* its place in FetchHandler.session */
    guint64 seen;    /* the build that last found it in `next` */
    guint64 altered; /* the build that last found its fetch state changed */
    guint64 order;   /* its place in the session: larger joined later */
} Entry;

struct FetchHandler {
    gint32 session_id;
    gint32 epoch;
    GQueue session;    /* Entry* (owned), in session order */
    GHashTable *by_tp; /* KTopicPartition* (the entry's) -> Entry*; looked up only */
    guint64 builds;
    guint64 order_next;
    GArray *added; /* KFetchPartition: a build's new partitions (scratch) */
};

FetchHandler *
fetch_handler_new(void)
{
    FetchHandler *handler = g_new0(FetchHandler, 1);
    handler->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
    handler->epoch = KAFKA_FETCH_EPOCH_INITIAL;
    g_queue_init(&handler->session);
    handler->by_tp = g_hash_table_new(ktp_hash, ktp_hash_equal);
    handler->added = g_array_new(FALSE, FALSE, sizeof(KFetchPartition));
    return handler;
}

static void
session_clear(FetchHandler *handler)
{
    g_hash_table_remove_all(handler->by_tp);
    g_queue_clear_full(&handler->session, g_free);
}

void
fetch_handler_free(FetchHandler *handler)
{
    if (handler == NULL)
        return;
    session_clear(handler);
    g_hash_table_destroy(handler->by_tp);
    g_array_free(handler->added, TRUE);
    g_free(handler);
}

/* Kafka's FetchMetadata.nextEpoch. */
static gint32
next_epoch(gint32 epoch)
{
    if (epoch < 0)
        return KAFKA_FETCH_EPOCH_FINAL;
    return epoch == G_MAXINT32 ? 1 : epoch + 1;
}

static gboolean
is_full(const FetchHandler *handler)
{
    return handler->epoch == KAFKA_FETCH_EPOCH_INITIAL || handler->epoch == KAFKA_FETCH_EPOCH_FINAL;
}

/* Kafka's FetchRequest.PartitionData.equals, for the fields a fetch has. */
static gboolean
same_fetch_state(const KFetchPartition *a, const KFetchPartition *b)
{
    return a->fetch_offset == b->fetch_offset && a->log_start_offset == b->log_start_offset &&
           a->current_leader_epoch == b->current_leader_epoch && a->max_bytes == b->max_bytes;
}

static Entry *
session_append(FetchHandler *handler, const KFetchPartition *data)
{
    Entry *entry = g_new0(Entry, 1);
    entry->data = *data;
    entry->seen = handler->builds;
    entry->order = handler->order_next++;
    g_queue_push_tail(&handler->session, entry);
    entry->link = handler->session.tail;
    gboolean added = g_hash_table_insert(handler->by_tp, &entry->data.tp, entry);
    KSIM_ASSERT(added); /* each partition once in `next` */
    return entry;
}

/* Overwrites the session with `next` where they have the same partitions
 * in the same order (a full fetch again, as with no session slots at the
 * leader); FALSE, having changed nothing a lookup needs, where not. */
static gboolean
session_overwrite(FetchHandler *handler, const GArray *next)
{
    if (handler->session.length != next->len)
        return FALSE;
    GList *link = handler->session.head;
    for (guint i = 0; i < next->len; i++, link = link->next) {
        Entry *entry = link->data;
        const KFetchPartition *data = &g_array_index(next, KFetchPartition, i);
        if (!ktp_equal(&entry->data.tp, &data->tp))
            return FALSE;
        entry->data = *data;
        entry->seen = handler->builds;
    }
    return TRUE;
}

static void
build_full(FetchHandler *handler, const GArray *next, KFetchRequest *request)
{
    if (!session_overwrite(handler, next)) {
        session_clear(handler);
        for (guint i = 0; i < next->len; i++)
            session_append(handler, &g_array_index(next, KFetchPartition, i));
    }
    g_array_append_vals(request->partitions, next->data, next->len);
}

/* `entry` leaves the session, named in the request's forgotten ones. */
static void
session_forget(FetchHandler *handler, Entry *entry, KFetchRequest *request)
{
    g_array_append_val(request->forgotten, entry->data.tp);
    g_hash_table_remove(handler->by_tp, &entry->data.tp);
    g_queue_delete_link(&handler->session, entry->link);
    g_free(entry);
}

/* The session's partitions `next` no longer names leave it, forgotten. */
static void
forget_unseen(FetchHandler *handler, KFetchRequest *request)
{
    GList *link = handler->session.head;
    while (link != NULL) {
        GList *following = link->next;
        Entry *entry = link->data;
        if (entry->seen != handler->builds)
            session_forget(handler, entry, request);
        link = following;
    }
}

/* The build's new partitions (handler->added) join the session, and the
 * request, in their order. */
static void
add_new(FetchHandler *handler, KFetchRequest *request)
{
    for (guint i = 0; i < handler->added->len; i++) {
        const KFetchPartition *data = &g_array_index(handler->added, KFetchPartition, i);
        session_append(handler, data);
        g_array_append_val(request->partitions, *data);
    }
}

static void
build_incremental(FetchHandler *handler, const GArray *next, KFetchRequest *request)
{
    guint n_altered = 0;
    GArray *added = handler->added;
    g_array_set_size(added, 0);
    /* `next` is mostly in session order: the entry after the last one found
     * is tried before the hash table. */
    GList *cursor = handler->session.head;
    for (guint i = 0; i < next->len; i++) {
        const KFetchPartition *data = &g_array_index(next, KFetchPartition, i);
        Entry *entry = cursor != NULL ? cursor->data : NULL;
        if (entry == NULL || !ktp_equal(&entry->data.tp, &data->tp))
            entry = g_hash_table_lookup(handler->by_tp, &data->tp);
        if (entry == NULL) {
            g_array_append_val(added, *data);
            continue;
        }
        cursor = entry->link->next;
        KSIM_ASSERT(entry->seen != handler->builds); /* each partition once */
        entry->seen = handler->builds;
        if (!same_fetch_state(&entry->data, data)) {
            entry->data = *data;
            entry->altered = handler->builds;
            n_altered++;
        }
    }
    forget_unseen(handler, request);
    /* Kafka's build leaves `next` holding the added partitions, then the
     * altered ones moved to its end. The altered ones are sorted back into
     * session order, as Kafka's loop over the session finds them. */
    add_new(handler, request);
    for (GList *link = handler->session.head; link != NULL && n_altered > 0; link = link->next) {
        Entry *entry = link->data;
        if (entry->altered == handler->builds) {
            g_array_append_val(request->partitions, entry->data);
            n_altered--;
        }
    }
}

void
fetch_handler_build(FetchHandler *handler, const GArray *next, KFetchRequest *request)
{
    KSIM_ASSERT(request->partitions->len == 0);
    KSIM_ASSERT(request->forgotten->len == 0);
    handler->builds++;
    request->session_id = handler->session_id;
    request->session_epoch = handler->epoch;
    if (is_full(handler))
        build_full(handler, next, request);
    else
        build_incremental(handler, next, request);
}

gboolean
fetch_handler_next_is_full(const FetchHandler *handler)
{
    return is_full(handler);
}

static gint
entry_order_compare(gconstpointer a, gconstpointer b)
{
    const Entry *x = *(const Entry *const *)a;
    const Entry *y = *(const Entry *const *)b;
    return x->order < y->order ? -1 : (x->order > y->order);
}

/* build_incremental with only the changes known: the added ones in
 * `changed`'s order, then the altered ones and the forgotten ones each in
 * session order, as build_incremental's walks over the session find them. */
void
fetch_handler_build_changes(FetchHandler *handler, const GArray *changed, const GArray *gone,
                            KFetchRequest *request)
{
    KSIM_ASSERT(!is_full(handler));
    KSIM_ASSERT(request->partitions->len == 0);
    KSIM_ASSERT(request->forgotten->len == 0);
    handler->builds++;
    request->session_id = handler->session_id;
    request->session_epoch = handler->epoch;
    GArray *added = handler->added;
    g_array_set_size(added, 0);
    g_autoptr(GPtrArray) altered = g_ptr_array_new();
    for (guint i = 0; i < changed->len; i++) {
        const KFetchPartition *data = &g_array_index(changed, KFetchPartition, i);
        Entry *entry = g_hash_table_lookup(handler->by_tp, &data->tp);
        if (entry == NULL) {
            g_array_append_val(added, *data);
            continue;
        }
        KSIM_ASSERT(entry->seen != handler->builds); /* each partition once */
        entry->seen = handler->builds;
        if (!same_fetch_state(&entry->data, data)) {
            entry->data = *data;
            g_ptr_array_add(altered, entry);
        }
    }
    g_autoptr(GPtrArray) forgotten = g_ptr_array_new();
    for (guint i = 0; i < gone->len; i++) {
        Entry *entry = g_hash_table_lookup(handler->by_tp, &g_array_index(gone, KTopicPartition, i));
        if (entry != NULL && entry->seen != handler->builds) {
            entry->seen = handler->builds; /* named once even if gone twice */
            g_ptr_array_add(forgotten, entry);
        }
    }
    g_ptr_array_sort(forgotten, entry_order_compare);
    for (guint i = 0; i < forgotten->len; i++)
        session_forget(handler, g_ptr_array_index(forgotten, i), request);
    add_new(handler, request);
    g_ptr_array_sort(altered, entry_order_compare);
    for (guint i = 0; i < altered->len; i++)
        g_array_append_val(request->partitions, ((Entry *)g_ptr_array_index(altered, i))->data);
}

const KFetchPartition *
fetch_handler_lookup(const FetchHandler *handler, const KTopicPartition *tp)
{
    const Entry *entry = g_hash_table_lookup(handler->by_tp, tp);
    return entry != NULL ? &entry->data : NULL;
}

gboolean
fetch_handler_handle_response(FetchHandler *handler, const KFetchResponse *response)
{
    if (response->error != KAFKA_ERROR_NONE) {
        if (response->error == KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND)
            handler->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
        handler->epoch = KAFKA_FETCH_EPOCH_INITIAL;
        return FALSE;
    }
    /* Kafka also checks that a full response answers exactly the session's
     * partitions and an incremental one only partitions of the session; a
     * ksim leader answers no others. */
    if (response->session_id == KAFKA_FETCH_SESSION_ID_INVALID) {
        /* No session (none created, or the leader closed it). */
        handler->session_id = KAFKA_FETCH_SESSION_ID_INVALID;
        handler->epoch = KAFKA_FETCH_EPOCH_INITIAL;
    } else if (is_full(handler)) {
        handler->session_id = response->session_id;
        handler->epoch = next_epoch(KAFKA_FETCH_EPOCH_INITIAL);
    } else {
        handler->epoch = next_epoch(handler->epoch);
    }
    return TRUE;
}

void
fetch_handler_handle_error(FetchHandler *handler)
{
    handler->epoch = KAFKA_FETCH_EPOCH_INITIAL;
}

gint32
fetch_handler_session_id(const FetchHandler *handler)
{
    return handler->session_id;
}

gint32
fetch_handler_epoch(const FetchHandler *handler)
{
    return handler->epoch;
}

guint
fetch_handler_size(const FetchHandler *handler)
{
    return handler->session.length;
}

void
fetch_handler_check_invariants(const FetchHandler *handler)
{
    KSIM_ASSERT(g_hash_table_size(handler->by_tp) == handler->session.length);
    const Entry *previous = NULL;
    for (GList *link = handler->session.head; link != NULL; link = link->next) {
        const Entry *entry = link->data;
        KSIM_ASSERT(entry->link == link);
        /* Session order is join order. */
        if (previous != NULL)
            KSIM_ASSERT(previous->order < entry->order);
        previous = entry;
        KSIM_ASSERT(g_hash_table_lookup(handler->by_tp, &entry->data.tp) == entry);
    }
    KSIM_ASSERT(handler->epoch >= KAFKA_FETCH_EPOCH_INITIAL);
    if (handler->session_id == KAFKA_FETCH_SESSION_ID_INVALID)
        KSIM_ASSERT(handler->epoch == KAFKA_FETCH_EPOCH_INITIAL);
}
