/*
 * sim_sorted: against a GTree of the same strings, random adds, replaces
 * and removals (in order too, as tables fill, and enough to empty and split
 * chunks) give the same lookups, the same size and the same walks, from the
 * start or from any key; the set never owns its items.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "sim_rng.h"
#include "sim_sorted.h"

static int
compare_str(gconstpointer key, gconstpointer item)
{
    return strcmp(key, item);
}

static gconstpointer
key_of(gconstpointer item)
{
    return item;
}

static gint
tree_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    return strcmp(a, b);
}

/* Key `k` as the tables name files: fixed width, so that order is numeric. */
static char *
key_name(guint k)
{
    return g_strdup_printf("t-%06u/segment", k);
}

/* The walk from `key` (NULL: the start) meets the tree's nodes from its
 * lower bound, `steps` of them (0: all). */
static void
assert_same_walk(const SimSorted *set, GTree *tree, const char *key, guint steps)
{
    SimSortedIter iter;
    sim_sorted_iter_init(set, key, &iter);
    GTreeNode *node = key != NULL ? g_tree_lower_bound(tree, key) : g_tree_node_first(tree);
    for (guint step = 0; node != NULL && (steps == 0 || step < steps); step++) {
        const char *item = sim_sorted_iter_next(set, &iter);
        assert_non_null(item);
        assert_ptr_equal(item, g_tree_node_value(node));
        node = g_tree_node_next(node);
    }
    if (node == NULL)
        assert_null(sim_sorted_iter_next(set, &iter));
}

static void
test_sorted_is_an_ordered_set(void **unused)
{
    (void)unused;
    SimRng *rng = sim_rng_new(5, "sim-sorted");
    for (guint round = 0; round < 8; round++) {
        SimSorted *set = sim_sorted_new(compare_str);
        /* The tree owns the strings; the set holds the same pointers. */
        GTree *tree = g_tree_new_full(tree_compare, NULL, NULL, g_free);
        guint span = round % 2 == 0 ? 600 : 5000;
        guint ops = round < 4 ? 2000 : 12000;
        for (guint op = 0; op < ops; op++) {
            guint k = round % 4 == 0 && op < ops / 2 ? op % span /* in order */
                                                     : (guint)sim_rng_range(rng, 0, span);
            g_autofree char *key = key_name(k);
            if (sim_rng_chance(rng, round < 6 ? 1 : 3, 4)) {
                char *item = g_strdup(key);
                gpointer old = sim_sorted_replace(set, key, item);
                assert_ptr_equal(old, g_tree_lookup(tree, key));
                g_tree_replace(tree, item, item); /* frees the old string */
            } else {
                gpointer taken = sim_sorted_steal(set, key);
                assert_ptr_equal(taken, g_tree_lookup(tree, key));
                if (taken != NULL)
                    g_tree_remove(tree, key);
            }
            if (op % 97 == 0) {
                sim_sorted_check_invariants(set, key_of);
                assert_int_equal(sim_sorted_size(set), g_tree_nnodes(tree));
                g_autofree char *probe = key_name((guint)sim_rng_range(rng, 0, span + 10));
                assert_ptr_equal(sim_sorted_lookup(set, probe), g_tree_lookup(tree, probe));
                assert_same_walk(set, tree, probe, 30);
            }
        }
        sim_sorted_check_invariants(set, key_of);
        assert_int_equal(sim_sorted_size(set), g_tree_nnodes(tree));
        assert_same_walk(set, tree, NULL, 0);
        /* Emptied, the set has nothing to walk. */
        while (g_tree_nnodes(tree) > 0) {
            const char *first = g_tree_node_key(g_tree_node_first(tree));
            assert_ptr_equal(sim_sorted_first(set), first);
            assert_ptr_equal(sim_sorted_steal(set, first), first);
            g_tree_remove(tree, first);
        }
        assert_int_equal(sim_sorted_size(set), 0);
        assert_null(sim_sorted_first(set));
        assert_same_walk(set, tree, NULL, 0);
        sim_sorted_check_invariants(set, key_of);
        sim_sorted_free(set);
        g_tree_destroy(tree);
    }
    sim_rng_free(rng);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorted_is_an_ordered_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
