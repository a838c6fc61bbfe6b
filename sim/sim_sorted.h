/*
 * sim_sorted: an ordered set of pointers, kept in sorted chunks.
 *
 * A large cluster's tables hold millions of entries (a broker's metadata
 * cache has one per partition of the cluster, a broker's disk five files per
 * replica it holds), and a balanced tree spends 40 bytes of node on each.
 * SimSorted keeps the pointers in chunks of up to SIM_SORTED_CHUNK, 8 bytes
 * an entry when the chunks are full: a lookup searches the chunks by their
 * last item, then within one. An item added past the end of a full chunk
 * (tables mostly fill in order) starts a new chunk; one added inside a full
 * chunk splits it in halves; a chunk emptied by removals goes.
 *
 * Items are compared with keys by the caller's function, which finds an
 * item's key in the item (a partition state's topic and partition, a file's
 * name). The set owns nothing: the caller frees its items.
 *
 * Invariants (sim_sorted_check_invariants):
 *  1. No chunk is empty; every chunk holds at most SIM_SORTED_CHUNK.
 *  2. The items, chunk after chunk, are in strictly increasing key order,
 *     and the size counts them.
 */
#ifndef SIM_SORTED_H
#define SIM_SORTED_H

#include <glib.h>

/* Negative, zero or positive as `key` is before, at or after `item`'s key. */
typedef int (*SimSortedCompareFn)(gconstpointer key, gconstpointer item);

typedef struct SimSorted SimSorted;

/* An empty set. (transfer full) */
SimSorted *sim_sorted_new(SimSortedCompareFn compare);
/* Frees the set, not its items. */
void sim_sorted_free(SimSorted *set);
/* Frees the set after calling `free_item` on each item, in order. */
void sim_sorted_free_full(SimSorted *set, GDestroyNotify free_item);
guint sim_sorted_size(const SimSorted *set);
/* The item at `key`, NULL when none. (transfer none) */
gpointer sim_sorted_lookup(const SimSorted *set, gconstpointer key);
/* Puts `item` under `key` (its own key): the item it replaces, if any, is
 * returned for the caller to free; else NULL. */
gpointer sim_sorted_replace(SimSorted *set, gconstpointer key, gpointer item);
/* Takes the item at `key` out of the set and returns it; NULL when none. */
gpointer sim_sorted_steal(SimSorted *set, gconstpointer key);
/* The first item, NULL when the set is empty. (transfer none) */
gpointer sim_sorted_first(const SimSorted *set);

/* A position, for walking the set in order. Changing the set invalidates it. */
typedef struct {
    guint chunk;
    guint item;
} SimSortedIter;

/* Positions `iter` at the first item not before `key` (NULL: the first item). */
void sim_sorted_iter_init(const SimSorted *set, gconstpointer key, SimSortedIter *iter);
/* The item at `iter`, which then moves on; NULL past the last. (transfer none) */
gpointer sim_sorted_iter_next(const SimSorted *set, SimSortedIter *iter);

/* Checks invariants 1 and 2, reading every item's key through `key_of`. */
void sim_sorted_check_invariants(const SimSorted *set, gconstpointer (*key_of)(gconstpointer item));

#endif /* SIM_SORTED_H */
