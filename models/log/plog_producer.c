/*
 * plog_producer: producer state per producer id (see plog_producer.h).
 *
 * Invariants (plog_producer_state_check_invariants):
 *  1. Every entry's key is its own producer_id, >= 0; at most
 *     PLOG_PRODUCERS_MAX entries.
 *  2. An entry remembers at most PLOG_PRODUCER_BATCHES_MAX batches, oldest
 *     first, with increasing offsets; each batch's last offset is
 *     first_offset + (records - 1) and its last sequence the first plus the
 *     same count, wrapped.
 *  3. An entry's last_offset is >= the last offset of its newest batch.
 *  4. Within a log, every remembered batch and last offset lies within
 *     [log start offset, LEO): plog rebuilds the state on truncation and
 *     evicts below the log start on retention.
 *
 * Entries live in a GTree ordered by producer id, so every walk over them
 * (eviction, comparison) is in a deterministic order. The tree is made with
 * the first entry: most logs of a large cluster never see a producer's
 * batch.
 *
 * Transitions: an entry is created by the first batch of its producer
 * (plog_producer_state_update), its batches are replaced when the epoch
 * changes, and it is removed by _evict_before or _clear.
 */
#include "plog_producer.h"

#include "plog_batch.h"
#include "sim_assert.h"

typedef struct {
    gint64 producer_id;
    gint16 epoch;
    gint64 last_offset; /* of the producer's newest batch, with or without a sequence */
    GArray *batches;    /* PlogProducerBatchInfo, oldest first */
} ProducerEntry;

struct PlogProducerState {
    GTree *entries; /* &entry->producer_id -> ProducerEntry * (owned); NULL: none yet */
};

static gint
producer_id_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    (void)user_data;
    gint64 x = *(const gint64 *)a;
    gint64 y = *(const gint64 *)b;
    return (x > y) - (x < y);
}

static void
entry_free(gpointer data)
{
    ProducerEntry *entry = data;
    g_array_unref(entry->batches);
    g_free(entry);
}

PlogProducerState *
plog_producer_state_new(void)
{
    return g_new0(PlogProducerState, 1);
}

void
plog_producer_state_free(PlogProducerState *state)
{
    if (state == NULL)
        return;
    if (state->entries != NULL)
        g_tree_destroy(state->entries);
    g_free(state);
}

static ProducerEntry *
entry_lookup(const PlogProducerState *state, gint64 producer_id)
{
    return state->entries != NULL ? g_tree_lookup(state->entries, &producer_id) : NULL;
}

static ProducerEntry *
entry_get_or_add(PlogProducerState *state, gint64 producer_id)
{
    ProducerEntry *entry = entry_lookup(state, producer_id);
    if (entry != NULL)
        return entry;
    KSIM_ASSERT(plog_producer_state_count(state) < PLOG_PRODUCERS_MAX);
    if (state->entries == NULL)
        state->entries = g_tree_new_full(producer_id_compare, NULL, NULL, entry_free);
    entry = g_new0(ProducerEntry, 1);
    entry->producer_id = producer_id;
    entry->epoch = PLOG_NO_PRODUCER_EPOCH;
    entry->last_offset = PLOG_NO_OFFSET;
    entry->batches = g_array_new(FALSE, FALSE, sizeof(PlogProducerBatchInfo));
    g_tree_insert(state->entries, &entry->producer_id, entry);
    return entry;
}

void
plog_producer_state_update(PlogProducerState *state, gint64 producer_id, gint16 epoch,
                           gint32 base_sequence, gint32 record_count, gint64 base_offset)
{
    KSIM_ASSERT(producer_id >= 0);
    KSIM_ASSERT(record_count >= 1);
    KSIM_ASSERT(base_offset >= 0);
    ProducerEntry *entry = entry_get_or_add(state, producer_id);
    KSIM_ASSERT(base_offset > entry->last_offset);
    if (entry->epoch != epoch) {
        entry->epoch = epoch;
        g_array_set_size(entry->batches, 0);
    }
    entry->last_offset = base_offset + record_count - 1;
    if (base_sequence < 0)
        return;
    if (entry->batches->len == PLOG_PRODUCER_BATCHES_MAX)
        g_array_remove_index(entry->batches, 0);
    PlogProducerBatchInfo info = {
        .first_sequence = base_sequence,
        .last_sequence = plog_sequence_add(base_sequence, record_count - 1),
        .first_offset = base_offset,
        .last_offset = entry->last_offset,
    };
    g_array_append_val(entry->batches, info);
}

static const PlogProducerBatchInfo *
find_duplicate(const ProducerEntry *entry, gint32 first_sequence, gint32 last_sequence)
{
    for (guint i = 0; i < entry->batches->len; i++) {
        const PlogProducerBatchInfo *info =
            &g_array_index(entry->batches, PlogProducerBatchInfo, i);
        if (info->first_sequence == first_sequence && info->last_sequence == last_sequence)
            return info;
    }
    return NULL;
}

/* Kafka's ProducerAppendInfo.inSequence. */
static gboolean
in_sequence(gint32 last_sequence, gint32 next_sequence)
{
    return (gint64)next_sequence == (gint64)last_sequence + 1 ||
           (next_sequence == 0 && last_sequence == G_MAXINT32);
}

static PlogProducerStatus
check_known(const ProducerEntry *entry, gint16 epoch, gint32 base_sequence, gint32 record_count,
            PlogProducerVerdict *out)
{
    if (epoch == entry->epoch) {
        gint32 last_sequence = plog_sequence_add(base_sequence, record_count - 1);
        const PlogProducerBatchInfo *duplicate =
            find_duplicate(entry, base_sequence, last_sequence);
        if (duplicate != NULL) {
            out->duplicate_base_offset = duplicate->first_offset;
            out->duplicate_last_offset = duplicate->last_offset;
            return PLOG_PRODUCER_DUPLICATE;
        }
    }
    if (epoch < entry->epoch)
        return PLOG_PRODUCER_INVALID_PRODUCER_EPOCH;
    if (epoch > entry->epoch)
        return base_sequence == 0 ? PLOG_PRODUCER_OK : PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE;
    gint32 last = PLOG_NO_SEQUENCE;
    if (entry->batches->len > 0)
        last = g_array_index(entry->batches, PlogProducerBatchInfo, entry->batches->len - 1)
                   .last_sequence;
    return in_sequence(last, base_sequence) ? PLOG_PRODUCER_OK
                                            : PLOG_PRODUCER_OUT_OF_ORDER_SEQUENCE;
}

PlogProducerStatus
plog_producer_state_check(const PlogProducerState *state, gint64 producer_id, gint16 epoch,
                          gint32 base_sequence, gint32 record_count, PlogProducerVerdict *out)
{
    KSIM_ASSERT(out != NULL);
    KSIM_ASSERT(record_count >= 1);
    out->status = PLOG_PRODUCER_OK;
    out->duplicate_base_offset = PLOG_NO_OFFSET;
    out->duplicate_last_offset = PLOG_NO_OFFSET;
    if (producer_id < 0 || base_sequence < 0)
        return out->status;
    const ProducerEntry *entry = entry_lookup(state, producer_id);
    /* An unknown producer, or one known only without an epoch, may start at
     * any sequence. */
    if (entry == NULL || entry->epoch == PLOG_NO_PRODUCER_EPOCH)
        return out->status;
    out->status = check_known(entry, epoch, base_sequence, record_count, out);
    return out->status;
}

typedef struct {
    gint64 log_start_offset;
    GArray *evicted; /* gint64 producer ids */
} EvictWalk;

/* Collects the producers to forget, and drops the others' batches below the
 * log start (changing a value, not the tree, is allowed during a walk). */
static gboolean
collect_evicted(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    ProducerEntry *entry = value;
    EvictWalk *walk = data;
    if (entry->last_offset < walk->log_start_offset) {
        g_array_append_val(walk->evicted, entry->producer_id);
        return FALSE;
    }
    guint below = 0;
    while (below < entry->batches->len &&
           g_array_index(entry->batches, PlogProducerBatchInfo, below).last_offset <
               walk->log_start_offset)
        below++;
    if (below > 0)
        g_array_remove_range(entry->batches, 0, below);
    return FALSE;
}

void
plog_producer_state_evict_before(PlogProducerState *state, gint64 log_start_offset)
{
    KSIM_ASSERT(log_start_offset >= 0);
    if (plog_producer_state_count(state) == 0)
        return;
    EvictWalk walk = {log_start_offset, g_array_new(FALSE, FALSE, sizeof(gint64))};
    /* A GTree may not change during its walk, so collect the ids first. */
    g_tree_foreach(state->entries, collect_evicted, &walk);
    for (guint i = 0; i < walk.evicted->len; i++) {
        gboolean removed = g_tree_remove(state->entries, &g_array_index(walk.evicted, gint64, i));
        KSIM_ASSERT(removed);
    }
    g_array_unref(walk.evicted);
}

void
plog_producer_state_clear(PlogProducerState *state)
{
    if (state->entries != NULL)
        g_tree_remove_all(state->entries);
}

guint
plog_producer_state_count(const PlogProducerState *state)
{
    return state->entries != NULL ? (guint)g_tree_nnodes(state->entries) : 0;
}

static gboolean
max_last_offset(gpointer key, gpointer value, gpointer data)
{
    (void)key;
    const ProducerEntry *entry = value;
    gint64 *max = data;
    *max = MAX(*max, entry->last_offset);
    return FALSE;
}

gint64
plog_producer_state_last_offset(const PlogProducerState *state)
{
    gint64 max = PLOG_NO_OFFSET;
    if (state->entries != NULL)
        g_tree_foreach(state->entries, max_last_offset, &max);
    return max;
}

gboolean
plog_producer_state_lookup(const PlogProducerState *state, gint64 producer_id, gint16 *out_epoch,
                           const GArray **out_batches)
{
    const ProducerEntry *entry = entry_lookup(state, producer_id);
    if (entry == NULL)
        return FALSE;
    if (out_epoch != NULL)
        *out_epoch = entry->epoch;
    if (out_batches != NULL)
        *out_batches = entry->batches;
    return TRUE;
}

static gboolean
entries_equal(const ProducerEntry *a, const ProducerEntry *b)
{
    if (a->producer_id != b->producer_id || a->epoch != b->epoch)
        return FALSE;
    if (a->last_offset != b->last_offset || a->batches->len != b->batches->len)
        return FALSE;
    for (guint i = 0; i < a->batches->len; i++) {
        const PlogProducerBatchInfo *x = &g_array_index(a->batches, PlogProducerBatchInfo, i);
        const PlogProducerBatchInfo *y = &g_array_index(b->batches, PlogProducerBatchInfo, i);
        if (x->first_sequence != y->first_sequence || x->last_sequence != y->last_sequence)
            return FALSE;
        if (x->first_offset != y->first_offset || x->last_offset != y->last_offset)
            return FALSE;
    }
    return TRUE;
}

typedef struct {
    const PlogProducerState *other;
    gboolean equal;
} EqualWalk;

static gboolean
compare_entry(gpointer key, gpointer value, gpointer data)
{
    EqualWalk *walk = data;
    const ProducerEntry *other = entry_lookup(walk->other, *(const gint64 *)key);
    walk->equal = other != NULL && entries_equal(value, other);
    return !walk->equal;
}

gboolean
plog_producer_state_equal(const PlogProducerState *a, const PlogProducerState *b)
{
    if (plog_producer_state_count(a) != plog_producer_state_count(b))
        return FALSE;
    if (plog_producer_state_count(a) == 0)
        return TRUE;
    EqualWalk walk = {b, TRUE};
    g_tree_foreach(a->entries, compare_entry, &walk);
    return walk.equal;
}

typedef struct {
    gint64 log_start_offset;
    gint64 log_end_offset;
} BoundsWalk;

static gboolean
check_entry(gpointer key, gpointer value, gpointer data)
{
    const BoundsWalk *bounds = data;
    const ProducerEntry *entry = value;
    KSIM_ASSERT(key == &entry->producer_id);
    KSIM_ASSERT(entry->producer_id >= 0);
    KSIM_ASSERT(entry->batches->len <= PLOG_PRODUCER_BATCHES_MAX);
    gint64 previous_last = PLOG_NO_OFFSET;
    for (guint i = 0; i < entry->batches->len; i++) {
        const PlogProducerBatchInfo *info =
            &g_array_index(entry->batches, PlogProducerBatchInfo, i);
        KSIM_ASSERT(info->first_offset > previous_last);
        KSIM_ASSERT(info->last_offset >= info->first_offset);
        gint64 delta = info->last_offset - info->first_offset;
        KSIM_ASSERT(delta < PLOG_BATCH_RECORDS_MAX);
        KSIM_ASSERT(info->last_sequence == plog_sequence_add(info->first_sequence, (gint32)delta));
        if (bounds->log_start_offset >= 0)
            KSIM_ASSERT(info->first_offset >= bounds->log_start_offset);
        previous_last = info->last_offset;
    }
    KSIM_ASSERT(entry->last_offset >= previous_last);
    if (bounds->log_start_offset >= 0)
        KSIM_ASSERT(entry->last_offset >= bounds->log_start_offset);
    if (bounds->log_end_offset >= 0)
        KSIM_ASSERT(entry->last_offset < bounds->log_end_offset);
    return FALSE;
}

void
plog_producer_state_check_invariants(const PlogProducerState *state, gint64 log_start_offset,
                                     gint64 log_end_offset)
{
    KSIM_ASSERT(state != NULL);
    KSIM_ASSERT(plog_producer_state_count(state) <= PLOG_PRODUCERS_MAX);
    BoundsWalk bounds = {log_start_offset, log_end_offset};
    if (state->entries != NULL)
        g_tree_foreach(state->entries, check_entry, &bounds);
}
