/*
 * sim_sorted: an ordered set of pointers in sorted chunks (sim_sorted.h).
 */
#include "sim_sorted.h"

#include "sim_assert.h"

#include <string.h>

/* 128 pointers: a kilobyte a chunk. */
#define SIM_SORTED_CHUNK 128

typedef struct {
    guint len;
    gpointer items[SIM_SORTED_CHUNK];
} Chunk;

struct SimSorted {
    SimSortedCompareFn compare;
    GPtrArray *chunks; /* Chunk* (owned), in key order */
    guint size;
};

SimSorted *
sim_sorted_new(SimSortedCompareFn compare)
{
    KSIM_ASSERT(compare != NULL);
    SimSorted *set = g_new0(SimSorted, 1);
    set->compare = compare;
    set->chunks = g_ptr_array_new_with_free_func(g_free);
    return set;
}

void
sim_sorted_free(SimSorted *set)
{
    if (set == NULL)
        return;
    g_ptr_array_unref(set->chunks);
    g_free(set);
}

void
sim_sorted_free_full(SimSorted *set, GDestroyNotify free_item)
{
    if (set == NULL)
        return;
    SimSortedIter iter;
    sim_sorted_iter_init(set, NULL, &iter);
    for (gpointer item; (item = sim_sorted_iter_next(set, &iter));)
        free_item(item);
    sim_sorted_free(set);
}

guint
sim_sorted_size(const SimSorted *set)
{
    return set->size;
}

static Chunk *
chunk_at(const SimSorted *set, guint c)
{
    return g_ptr_array_index(set->chunks, c);
}

/* Where `key` is or would go: the chunk (chunks->len when the set is empty)
 * and the first item there not before `key`. A key past every item goes at
 * the end of the last chunk. */
static void
locate(const SimSorted *set, gconstpointer key, guint *chunk_index, guint *item_index)
{
    guint lo = 0, hi = set->chunks->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const Chunk *chunk = chunk_at(set, mid);
        if (set->compare(key, chunk->items[chunk->len - 1]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == set->chunks->len && lo > 0)
        lo--;
    *chunk_index = lo;
    *item_index = 0;
    if (lo == set->chunks->len)
        return;
    const Chunk *chunk = chunk_at(set, lo);
    guint a = 0, b = chunk->len;
    while (a < b) {
        guint mid = a + (b - a) / 2;
        if (set->compare(key, chunk->items[mid]) > 0)
            a = mid + 1;
        else
            b = mid;
    }
    *item_index = a;
}

/* TRUE when `key` is at (c, i). */
static gboolean
found(const SimSorted *set, gconstpointer key, guint c, guint i)
{
    if (c == set->chunks->len)
        return FALSE;
    const Chunk *chunk = chunk_at(set, c);
    return i < chunk->len && set->compare(key, chunk->items[i]) == 0;
}

gpointer
sim_sorted_lookup(const SimSorted *set, gconstpointer key)
{
    guint c, i;
    locate(set, key, &c, &i);
    return found(set, key, c, i) ? chunk_at(set, c)->items[i] : NULL;
}

gpointer
sim_sorted_replace(SimSorted *set, gconstpointer key, gpointer item)
{
    KSIM_ASSERT(item != NULL);
    guint c, i;
    locate(set, key, &c, &i);
    if (found(set, key, c, i)) {
        Chunk *chunk = chunk_at(set, c);
        gpointer old = chunk->items[i];
        chunk->items[i] = item;
        return old;
    }
    if (c == set->chunks->len) {
        Chunk *first = g_new(Chunk, 1);
        first->len = 0;
        g_ptr_array_add(set->chunks, first);
    }
    Chunk *chunk = chunk_at(set, c);
    if (chunk->len == SIM_SORTED_CHUNK) {
        Chunk *upper = g_new(Chunk, 1);
        upper->len = 0;
        if (i == chunk->len) {
            /* Past the end of a full chunk: a new chunk after it. */
            chunk = upper;
            i = 0;
        } else {
            /* Inside a full chunk: its upper half moves to a new chunk. */
            guint half = SIM_SORTED_CHUNK / 2;
            upper->len = SIM_SORTED_CHUNK - half;
            memcpy(upper->items, &chunk->items[half], sizeof(gpointer) * upper->len);
            chunk->len = half;
            if (i > half) {
                chunk = upper;
                i -= half;
            }
        }
        g_ptr_array_insert(set->chunks, (gint)c + 1, upper);
    }
    memmove(&chunk->items[i + 1], &chunk->items[i], sizeof(gpointer) * (chunk->len - i));
    chunk->items[i] = item;
    chunk->len++;
    set->size++;
    return NULL;
}

gpointer
sim_sorted_steal(SimSorted *set, gconstpointer key)
{
    guint c, i;
    locate(set, key, &c, &i);
    if (!found(set, key, c, i))
        return NULL;
    Chunk *chunk = chunk_at(set, c);
    gpointer item = chunk->items[i];
    chunk->len--;
    memmove(&chunk->items[i], &chunk->items[i + 1], sizeof(gpointer) * (chunk->len - i));
    if (chunk->len == 0)
        g_ptr_array_remove_index(set->chunks, c);
    set->size--;
    return item;
}

gpointer
sim_sorted_first(const SimSorted *set)
{
    return set->chunks->len > 0 ? chunk_at(set, 0)->items[0] : NULL;
}

void
sim_sorted_iter_init(const SimSorted *set, gconstpointer key, SimSortedIter *iter)
{
    iter->chunk = 0;
    iter->item = 0;
    if (key != NULL)
        locate(set, key, &iter->chunk, &iter->item);
}

gpointer
sim_sorted_iter_next(const SimSorted *set, SimSortedIter *iter)
{
    while (iter->chunk < set->chunks->len) {
        const Chunk *chunk = chunk_at(set, iter->chunk);
        if (iter->item < chunk->len)
            return chunk->items[iter->item++];
        iter->chunk++;
        iter->item = 0;
    }
    return NULL;
}

void
sim_sorted_check_invariants(const SimSorted *set, gconstpointer (*key_of)(gconstpointer item))
{
    guint size = 0;
    gconstpointer previous = NULL;
    for (guint c = 0; c < set->chunks->len; c++) {
        const Chunk *chunk = chunk_at(set, c);
        KSIM_ASSERT(chunk->len > 0 && chunk->len <= SIM_SORTED_CHUNK); /* 1 */
        for (guint i = 0; i < chunk->len; i++) {
            KSIM_ASSERT(chunk->items[i] != NULL);
            KSIM_ASSERT(previous == NULL || set->compare(key_of(previous), chunk->items[i]) < 0);
            previous = chunk->items[i];
            size++;
        }
    }
    KSIM_ASSERT(size == set->size); /* 2 */
}
