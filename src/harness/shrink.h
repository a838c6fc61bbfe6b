/*
 * shrink: delta debugging (Zeller's ddmin) over a set of items — the faults
 * of a failing run, for `ksim shrink` — with the candidates of each round
 * tested in a fixed order, so a tester that runs them in parallel finds the
 * same answer as one that runs them one by one.
 *
 * A round splits the current items into `n` chunks (n = 2 at first) and
 * tests, in order, each chunk alone and then (for n > 2) each chunk's
 * complement. The first candidate that still fails becomes the current set
 * (a chunk: n = 2; a complement: n = n - 1); when none fails, n doubles,
 * until n is the number of items. The result is 1-minimal: removing any
 * one of its items makes the failure go away (for a tester that is a pure
 * function of the subset).
 */
#ifndef KSIM_SHRINK_H
#define KSIM_SHRINK_H

#include <glib.h>

/* Tests `candidates` (each a GArray of guint item indexes, ascending) and
 * returns the index of the first one that still fails, or -1 when none does
 * or the tester's budget is spent. A tester may run them in any order or at
 * once, but must answer for the first failing one in the array's order. */
typedef gint (*ShrinkFirstFailingFn)(void *user_data, const GPtrArray *candidates);

/* The 1-minimal failing subset of items 0..n-1 (all n fail, as the caller
 * knows), as ascending indexes; `test` is never asked about the full set nor
 * the empty one. (transfer full) */
GArray *shrink_ddmin(guint n, ShrinkFirstFailingFn test, void *user_data);

/* The number of rounds shrink_ddmin makes at most for n items: each round
 * removes an item or doubles n, so it is bounded by n * (log2(n) + 2). */
guint shrink_ddmin_rounds_max(guint n);

#endif
