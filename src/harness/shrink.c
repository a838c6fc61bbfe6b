/*
 * shrink: ddmin with ordered candidates (see shrink.h).
 *
 * Invariants, each round:
 *  1. `current` is ascending and every subset the tester accepted fails.
 *  2. 2 <= granularity <= current->len while current->len >= 2.
 */
#include "shrink.h"

#include "sim_assert.h"

guint
shrink_ddmin_rounds_max(guint n)
{
    guint log2 = 0;
    while ((1u << log2) < MAX(n, 1u))
        log2++;
    return n * (log2 + 2) + 2;
}

/* Chunk `k` of `granularity` nearly equal chunks of `items`. */
static GArray *
chunk(const GArray *items, guint granularity, guint k, gboolean complement)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(guint));
    guint start = (guint)((guint64)items->len * k / granularity);
    guint end = (guint)((guint64)items->len * (k + 1) / granularity);
    for (guint i = 0; i < items->len; i++) {
        gboolean inside = i >= start && i < end;
        if (inside != complement)
            g_array_append_val(out, g_array_index(items, guint, i));
    }
    return out;
}

GArray *
shrink_ddmin(guint n, ShrinkFirstFailingFn test, void *user_data)
{
    GArray *current = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < n; i++)
        g_array_append_val(current, i);
    guint granularity = 2;
    guint rounds_max = shrink_ddmin_rounds_max(n);
    for (guint round = 0; current->len >= 2; round++) {
        KSIM_ASSERT(round < rounds_max);
        KSIM_ASSERT(granularity >= 2 && granularity <= current->len);
        g_autoptr(GPtrArray) candidates =
            g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
        for (guint k = 0; k < granularity; k++)
            g_ptr_array_add(candidates, chunk(current, granularity, k, FALSE));
        /* With two chunks each complement is the other chunk. */
        for (guint k = 0; granularity > 2 && k < granularity; k++)
            g_ptr_array_add(candidates, chunk(current, granularity, k, TRUE));
        gint first = test(user_data, candidates);
        if (first >= 0) {
            KSIM_ASSERT((guint)first < candidates->len);
            g_array_unref(current);
            current = g_array_ref(g_ptr_array_index(candidates, first));
            granularity = (guint)first < granularity ? 2 : MAX(granularity - 1, 2u);
            granularity = MIN(granularity, MAX(current->len, 2u));
            continue;
        }
        if (granularity >= current->len)
            break;
        granularity = MIN(granularity * 2, current->len);
    }
    return current;
}
