/*
 * Unit tests for runner_run_healed (ksim bisect's heal at T): no fault
 * starts after T, every fault window is closed by T, the quiet period still
 * runs to the scenario's end, a heal time past the duration is the run as it
 * is, and the same T gives the same fingerprint.
 */
#include "runner.h"

#include "scenario.h"
#include "sim_world.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static ScenarioVariant *
unclean_variant(Scenario **scenario)
{
    GError *error = NULL;
    *scenario = scenario_load(KSIM_SOURCE_DIR "/scenarios/unclean-election.ini", &error);
    assert_non_null(*scenario);
    GPtrArray *variants = scenario_variants(*scenario);
    ScenarioVariant *variant = g_ptr_array_steal_index(variants, 1);
    g_ptr_array_unref(variants);
    return variant;
}

/* Healed at 30 s: the windows of the faults at 10 s and 25 s close by then,
 * none opens later, and the run still ends after the quiet period. */
static void
test_runner_heal_closes_every_window(void **state)
{
    (void)state;
    Scenario *scenario;
    ScenarioVariant *variant = unclean_variant(&scenario);
    gint64 heal = 30 * SIM_NS_PER_S;
    RunnerResult *healed = runner_run_healed(variant, 1, NULL, NULL, heal);
    RunnerResult *whole = runner_run_checked(variant, 1, NULL, NULL);
    assert_int_equal(healed->last_heal_ns, heal);
    assert_int_equal(healed->fault_windows->len, 2);
    for (guint i = 0; i < healed->fault_windows->len; i++) {
        const RunnerFaultWindow *w = &g_array_index(healed->fault_windows, RunnerFaultWindow, i);
        assert_true(w->start_ns <= heal);
        assert_true(w->end_ns >= 0 && w->end_ns <= heal);
    }
    assert_int_equal(healed->virtual_ns, whole->virtual_ns);
    assert_true(healed->fingerprint != whole->fingerprint);
    RunnerResult *again = runner_run_healed(variant, 1, NULL, NULL, heal);
    assert_true(again->fingerprint == healed->fingerprint);
    runner_result_free(again);
    runner_result_free(healed);
    runner_result_free(whole);
    scenario_variant_free(variant);
    scenario_free(scenario);
}

/* Healed at 0 no fault starts; past the duration it is the run as it is. */
static void
test_runner_heal_at_the_ends(void **state)
{
    (void)state;
    Scenario *scenario;
    ScenarioVariant *variant = unclean_variant(&scenario);
    RunnerResult *none = runner_run_healed(variant, 1, NULL, NULL, 0);
    assert_int_equal(none->fault_windows->len, 0);
    assert_int_equal(none->marks.hits[SIM_MARK_ID_unclean_election], 0);
    RunnerResult *late = runner_run_healed(variant, 1, NULL, NULL, G_MAXINT64);
    RunnerResult *whole = runner_run_checked(variant, 1, NULL, NULL);
    assert_true(late->fingerprint == whole->fingerprint);
    assert_int_equal(late->last_heal_ns, scenario_variant_duration_ns(variant));
    runner_result_free(none);
    runner_result_free(late);
    runner_result_free(whole);
    scenario_variant_free(variant);
    scenario_free(scenario);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runner_heal_closes_every_window),
        cmocka_unit_test(test_runner_heal_at_the_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
