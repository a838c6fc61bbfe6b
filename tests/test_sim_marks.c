/*
 * Unit tests for sim_marks: the table's names (unique, found by lookup, in
 * table order), the per-world counters (zero in a new world, one increment
 * per SIM_MARK, independent between worlds), and a library scenario whose
 * run must reach a mark and whose fingerprint the marks leave alone (two
 * runs with the same seed agree).
 */
#include "sim_marks.h"

#include "runner.h"
#include "scenario.h"
#include "sim_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Every name is found by lookup at its own id; an unknown name is not. */
static void
test_sim_marks_lookup(void **state)
{
    (void)state;
    for (guint m = 0; m < SIM_MARKS_COUNT; m++) {
        SimMarkId id = SIM_MARKS_COUNT;
        assert_true(sim_marks_lookup(sim_marks_name((SimMarkId)m), &id));
        assert_int_equal(id, m);
        assert_true(strlen(sim_marks_description((SimMarkId)m)) > 0);
    }
    SimMarkId id;
    assert_false(sim_marks_lookup("no_such_mark", &id));
    assert_false(sim_marks_lookup("", &id));
    assert_string_equal(sim_marks_name(SIM_MARK_ID_unclean_election), "unclean_election");
}

/* The table fits the 64 bits a sweep keeps per seed. */
static void
test_sim_marks_fit_a_word(void **state)
{
    (void)state;
    assert_true(SIM_MARKS_COUNT <= 64);
}

/* A new world counts nothing; each SIM_MARK counts once, in its own world. */
static void
test_sim_marks_counts_per_world(void **state)
{
    (void)state;
    SimWorld *a = sim_world_new(1), *b = sim_world_new(1);
    for (guint m = 0; m < SIM_MARKS_COUNT; m++)
        assert_int_equal(sim_world_marks(a)->hits[m], 0);
    SIM_MARK(a, offline_partition);
    SIM_MARK(a, offline_partition);
    SIM_MARK(b, torn_write_recovered);
    assert_int_equal(sim_world_marks(a)->hits[SIM_MARK_ID_offline_partition], 2);
    assert_int_equal(sim_world_marks(a)->hits[SIM_MARK_ID_torn_write_recovered], 0);
    assert_int_equal(sim_world_marks(b)->hits[SIM_MARK_ID_torn_write_recovered], 1);
    assert_int_equal(sim_trace_count(sim_world_trace(a)), 0);
    sim_world_free(a);
    sim_world_free(b);
}

/* The unclean-election scenario reaches unclean_election, and the same
 * seed gives the same fingerprint and the same marks. */
static void
test_sim_marks_reached_by_a_scenario(void **state)
{
    (void)state;
    GError *error = NULL;
    Scenario *scenario =
        scenario_load(KSIM_SOURCE_DIR "/scenarios/unclean-election.ini", &error);
    assert_non_null(scenario);
    GPtrArray *variants = scenario_variants(scenario);
    gboolean reached = FALSE;
    for (guint v = 0; v < variants->len; v++) {
        const ScenarioVariant *variant = g_ptr_array_index(variants, v);
        RunnerResult *one = runner_run(variant, 1, NULL);
        RunnerResult *two = runner_run(variant, 1, NULL);
        assert_true(one->fingerprint == two->fingerprint);
        assert_memory_equal(&one->marks, &two->marks, sizeof one->marks);
        reached = reached || one->marks.hits[SIM_MARK_ID_unclean_election] > 0;
        runner_result_free(one);
        runner_result_free(two);
    }
    assert_true(reached);
    g_ptr_array_unref(variants);
    scenario_free(scenario);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_marks_lookup),
        cmocka_unit_test(test_sim_marks_fit_a_word),
        cmocka_unit_test(test_sim_marks_counts_per_world),
        cmocka_unit_test(test_sim_marks_reached_by_a_scenario),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
