/*
 * plog_txn: ongoing and aborted transactions of a log (see plog_txn.h).
 *
 * Invariants (plog_txn_state_check_invariants):
 *  1. `ongoing` maps each producer with an open transaction to its first
 *     offset; at most PLOG_TXN_ONGOING_MAX entries.
 *  2. `aborted` is in increasing last_offset (marker) order, and every entry
 *     has first_offset <= last_offset.
 *  3. `verifications` holds at most one guard per producer, each in
 *     (0, guard_last].
 *
 * Transitions (plog_txn_state_note):
 *   no open txn ──transactional data batch──▶ open at its base offset
 *   open ──control batch of the producer──▶ closed (an ABORT adds an
 *        aborted entry)
 *   any transactional batch of a producer clears its verification guard
 *   (Kafka's UnifiedLog.updateProducers)
 * `ongoing` is a GTree keyed by producer id, so every walk is ordered.
 * The three containers are made at their first entry: most logs of a large
 * cluster never see a transactional batch, and each would cost a log about
 * 200 bytes.
 */
#include "plog_txn.h"

#include "sim_assert.h"

/* An open transaction: where it begins and its first batch's timestamp. */
typedef struct {
    gint64 first_offset;
    gint64 timestamp_ms;
} OpenTxn;

/* A verification in progress (Kafka's VerificationStateEntry). */
typedef struct {
    gint64 producer_id;
    guint64 guard;
} Verification;

struct PlogTxnState {
    GTree *ongoing;   /* gint64 producer id* -> OpenTxn* (owned); NULL: none yet */
    GArray *aborted;  /* PlogAbortedTxn, marker order; NULL: none yet */
    GArray *verifications; /* Verification, in creation order; NULL: none yet */
    guint64 guard_last;
};

static gint
id_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

PlogTxnState *
plog_txn_state_new(void)
{
    return g_new0(PlogTxnState, 1);
}

void
plog_txn_state_free(PlogTxnState *state)
{
    if (state == NULL)
        return;
    if (state->ongoing != NULL)
        g_tree_destroy(state->ongoing);
    if (state->aborted != NULL)
        g_array_free(state->aborted, TRUE);
    if (state->verifications != NULL)
        g_array_free(state->verifications, TRUE);
    g_free(state);
}

static guint
ongoing_count(const PlogTxnState *state)
{
    return state->ongoing != NULL ? (guint)g_tree_nnodes(state->ongoing) : 0;
}

static const OpenTxn *
ongoing_lookup(const PlogTxnState *state, gint64 producer_id)
{
    return state->ongoing != NULL ? g_tree_lookup(state->ongoing, &producer_id) : NULL;
}

static guint
aborted_count(const PlogTxnState *state)
{
    return state->aborted != NULL ? state->aborted->len : 0;
}

static guint
verification_count(const PlogTxnState *state)
{
    return state->verifications != NULL ? state->verifications->len : 0;
}

void
plog_txn_state_clear(PlogTxnState *state)
{
    if (state->ongoing != NULL)
        g_tree_remove_all(state->ongoing);
    if (state->aborted != NULL)
        g_array_set_size(state->aborted, 0);
}

static void
verification_clear(PlogTxnState *state, gint64 producer_id)
{
    for (guint i = 0; i < verification_count(state); i++) {
        if (g_array_index(state->verifications, Verification, i).producer_id == producer_id) {
            g_array_remove_index(state->verifications, i);
            return;
        }
    }
}

void
plog_txn_state_note(PlogTxnState *state, const PlogBatchHeader *h)
{
    if (h->producer_id < 0 || (h->attributes & PLOG_BATCH_TRANSACTIONAL) == 0)
        return;
    verification_clear(state, h->producer_id);
    const OpenTxn *open = ongoing_lookup(state, h->producer_id);
    if ((h->attributes & PLOG_BATCH_CONTROL) == 0) {
        if (open != NULL)
            return;
        KSIM_ASSERT(ongoing_count(state) < PLOG_TXN_ONGOING_MAX);
        if (state->ongoing == NULL)
            state->ongoing = g_tree_new_full(id_compare, NULL, g_free, g_free);
        OpenTxn entry = {h->base_offset, h->max_timestamp_ms};
        g_tree_insert(state->ongoing, g_memdup2(&h->producer_id, sizeof h->producer_id),
                      g_memdup2(&entry, sizeof entry));
        return;
    }
    const gint64 *first = open != NULL ? &open->first_offset : NULL;
    /* A marker without an open transaction (a retried marker, or a
     * transaction that wrote nothing here) closes nothing. */
    if (first == NULL)
        return;
    if ((h->attributes & PLOG_BATCH_CONTROL_COMMIT) == 0) {
        KSIM_ASSERT(aborted_count(state) < PLOG_TXN_ABORTED_MAX);
        if (state->aborted == NULL)
            state->aborted = g_array_new(FALSE, FALSE, sizeof(PlogAbortedTxn));
        PlogAbortedTxn entry = {h->producer_id, *first, h->base_offset};
        g_array_append_val(state->aborted, entry);
    }
    gboolean removed = g_tree_remove(state->ongoing, &h->producer_id);
    KSIM_ASSERT(removed);
}

void
plog_txn_state_evict_before(PlogTxnState *state, gint64 log_start_offset)
{
    guint below = 0;
    while (below < aborted_count(state) &&
           g_array_index(state->aborted, PlogAbortedTxn, below).last_offset < log_start_offset)
        below++;
    if (below > 0)
        g_array_remove_range(state->aborted, 0, below);
}

static gboolean
min_first(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    OpenTxn *oldest = data;
    const OpenTxn *open = value;
    if (oldest->first_offset < 0 || open->first_offset < oldest->first_offset)
        *oldest = *open;
    return FALSE;
}

gint64
plog_txn_state_first_unstable_offset(const PlogTxnState *state)
{
    OpenTxn oldest = {-1, -1};
    /* Every fetch asks each partition it reads; most have no transaction. */
    if (ongoing_count(state) == 0)
        return oldest.first_offset;
    g_tree_foreach(state->ongoing, min_first, &oldest);
    return oldest.first_offset;
}

gboolean
plog_txn_state_oldest_open(const PlogTxnState *state, gint64 *out_first_offset,
                           gint64 *out_timestamp_ms)
{
    OpenTxn oldest = {-1, -1};
    if (state->ongoing != NULL)
        g_tree_foreach(state->ongoing, min_first, &oldest);
    *out_first_offset = oldest.first_offset;
    *out_timestamp_ms = oldest.timestamp_ms;
    return oldest.first_offset >= 0;
}

gboolean
plog_txn_state_is_ongoing(const PlogTxnState *state, gint64 producer_id)
{
    return ongoing_lookup(state, producer_id) != NULL;
}

guint64
plog_txn_state_verification_guard(const PlogTxnState *state, gint64 producer_id)
{
    for (guint i = 0; i < verification_count(state); i++) {
        const Verification *v = &g_array_index(state->verifications, Verification, i);
        if (v->producer_id == producer_id)
            return v->guard;
    }
    return 0;
}

guint64
plog_txn_state_verification_start(PlogTxnState *state, gint64 producer_id)
{
    guint64 guard = plog_txn_state_verification_guard(state, producer_id);
    if (guard != 0)
        return guard;
    KSIM_ASSERT(verification_count(state) < PLOG_TXN_VERIFICATIONS_MAX);
    if (state->verifications == NULL)
        state->verifications = g_array_new(FALSE, FALSE, sizeof(Verification));
    Verification entry = {producer_id, ++state->guard_last};
    g_array_append_val(state->verifications, entry);
    return entry.guard;
}

guint
plog_txn_state_ongoing_count(const PlogTxnState *state)
{
    return ongoing_count(state);
}

void
plog_txn_state_collect_aborted(const PlogTxnState *state, gint64 start_offset,
                               gint64 upper_offset, GArray *out)
{
    for (guint i = 0; i < aborted_count(state); i++) {
        const PlogAbortedTxn *entry = &g_array_index(state->aborted, PlogAbortedTxn, i);
        if (entry->last_offset >= start_offset && entry->first_offset < upper_offset)
            g_array_append_val(out, *entry);
    }
}

const GArray *
plog_txn_state_aborted(const PlogTxnState *state)
{
    return state->aborted;
}

typedef struct {
    gint64 log_start_offset;
    gint64 log_end_offset;
} Bounds;

static gboolean
check_ongoing(gpointer key, gpointer value, gpointer data)
{
    const Bounds *bounds = data;
    KSIM_ASSERT(*(const gint64 *)key >= 0);
    gint64 first = ((const OpenTxn *)value)->first_offset;
    KSIM_ASSERT(first >= 0);
    if (bounds->log_end_offset >= 0)
        KSIM_ASSERT(first < bounds->log_end_offset);
    return FALSE;
}

void
plog_txn_state_check_invariants(const PlogTxnState *state, gint64 log_start_offset,
                                gint64 log_end_offset)
{
    KSIM_ASSERT(ongoing_count(state) <= PLOG_TXN_ONGOING_MAX);
    Bounds bounds = {log_start_offset, log_end_offset};
    if (state->ongoing != NULL)
        g_tree_foreach(state->ongoing, check_ongoing, &bounds);
    gint64 previous = -1;
    for (guint i = 0; i < aborted_count(state); i++) {
        const PlogAbortedTxn *entry = &g_array_index(state->aborted, PlogAbortedTxn, i);
        KSIM_ASSERT(entry->first_offset <= entry->last_offset);
        KSIM_ASSERT(entry->last_offset > previous);
        if (log_end_offset >= 0)
            KSIM_ASSERT(entry->last_offset < log_end_offset);
        if (log_start_offset >= 0)
            KSIM_ASSERT(entry->last_offset >= log_start_offset);
        previous = entry->last_offset;
    }
    KSIM_ASSERT(verification_count(state) <= PLOG_TXN_VERIFICATIONS_MAX);
    for (guint i = 0; i < verification_count(state); i++) {
        const Verification *v = &g_array_index(state->verifications, Verification, i);
        KSIM_ASSERT(v->guard > 0 && v->guard <= state->guard_last);
        for (guint j = i + 1; j < verification_count(state); j++)
            KSIM_ASSERT(g_array_index(state->verifications, Verification, j).producer_id !=
                        v->producer_id);
    }
}
