/*
 * runner_paranoid: the run-time invariant checks. A checked run keeps the
 * fingerprint of the same run unchecked, the check runs after every event,
 * the scenario key turns it on, and the sweep's sample is a pure function of
 * the seed. (What a violation prints, and its exit status, need a process
 * that dies: tests/cli_paranoid.sh runs tests/paranoid_inject.c for that.)
 */
#include "runner.h"
#include "runner_paranoid.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static Scenario *
load(const char *name, const char *set)
{
    g_autofree char *path =
        g_build_filename(KSIM_SOURCE_DIR, "tests", "data", "scenarios", name, NULL);
    GError *error = NULL;
    Scenario *scenario = scenario_load(path, &error);
    assert_non_null(scenario);
    if (set != NULL)
        assert_true(scenario_apply_set(scenario, set, &error));
    return scenario;
}

static RunnerResult *
run_first(const Scenario *scenario, guint64 seed, const RunnerChecks *checks)
{
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    ScenarioVariant *variant = g_ptr_array_index(variants, 0);
    return runner_run_checked(variant, seed, NULL, checks);
}

static void
count_check(const SimWorld *world, void *user_data)
{
    (void)world;
    (*(guint64 *)user_data)++;
}

static void
test_runner_paranoid_keeps_the_fingerprint(void **state)
{
    /* Goal: checking every invariant after every event changes nothing the models see. */
    (void)state;
    g_autoptr(Scenario) unchecked = load("good-paranoid.ini", "paranoid=false");
    g_autoptr(Scenario) checked = load("good-paranoid.ini", NULL);
    for (guint64 seed = 1; seed <= 3; seed++) {
        g_autoptr(RunnerResult) plain = run_first(unchecked, seed, NULL);
        RunnerChecks on = {.paranoid = TRUE};
        g_autoptr(RunnerResult) flag = run_first(unchecked, seed, &on);
        g_autoptr(RunnerResult) key = run_first(checked, seed, NULL);
        assert_true(plain->events > 1000);
        assert_int_equal(flag->fingerprint, plain->fingerprint);
        assert_int_equal(key->fingerprint, plain->fingerprint);
        assert_int_equal(flag->events, plain->events);
        assert_int_equal(key->trace_records, plain->trace_records);
    }
}

static void
test_runner_paranoid_checks_after_every_event(void **state)
{
    /* Goal: a checked run checks once first, once after each event, once last. */
    (void)state;
    g_autoptr(Scenario) scenario = load("good-paranoid.ini", "paranoid=false");
    guint64 calls = 0;
    RunnerChecks checks = {.paranoid = TRUE, .extra_check = count_check,
                           .extra_check_data = &calls};
    g_autoptr(RunnerResult) result = run_first(scenario, 7, &checks);
    assert_int_equal(calls, result->events + 2);
}

static void
test_runner_paranoid_off_unless_asked(void **state)
{
    /* Goal: without the flag or the scenario key no check runs. */
    (void)state;
    g_autoptr(Scenario) scenario = load("good-paranoid.ini", "paranoid=false");
    guint64 calls = 0;
    RunnerChecks checks = {.paranoid = FALSE, .extra_check = count_check,
                           .extra_check_data = &calls};
    g_autoptr(RunnerResult) result = run_first(scenario, 7, &checks);
    assert_true(result->events > 0);
    assert_int_equal(calls, 0);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    assert_false(runner_paranoid_wanted(g_ptr_array_index(variants, 0), NULL));
    assert_true(runner_paranoid_wanted(g_ptr_array_index(variants, 0), &(RunnerChecks){.paranoid = TRUE}));
}

static void
test_runner_paranoid_scenario_key_defaults_to_false(void **state)
{
    /* Goal: `paranoid` is off by default and on when the scenario says true. */
    (void)state;
    static const struct {
        const char *file;
        const char *set;
        gboolean paranoid;
    } cases[] = {
        {"good-minimal.ini", NULL, FALSE},
        {"good-minimal.ini", "paranoid=true", TRUE},
        {"good-paranoid.ini", NULL, TRUE},
        {"good-paranoid.ini", "paranoid=false", FALSE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(Scenario) scenario = load(cases[i].file, cases[i].set);
        g_autoptr(GPtrArray) variants = scenario_variants(scenario);
        const ScenarioVariant *variant = g_ptr_array_index(variants, 0);
        assert_int_equal(scenario_variant_paranoid(variant), cases[i].paranoid);
        assert_int_equal(runner_paranoid_wanted(variant, NULL), cases[i].paranoid);
    }
}

static void
test_runner_paranoid_sample_is_a_function_of_the_seed(void **state)
{
    /* Goal: the sweep's sample is pure, nested in the percentage, and near its size. */
    (void)state;
    guint sampled_5 = 0;
    for (guint64 seed = 1; seed <= 10000; seed++) {
        assert_false(runner_paranoid_sampled(seed, 0));
        assert_true(runner_paranoid_sampled(seed, 100));
        gboolean five = runner_paranoid_sampled(seed, 5);
        assert_int_equal(runner_paranoid_sampled(seed, 5), five);
        if (five)
            assert_true(runner_paranoid_sampled(seed, 6));
        sampled_5 += five;
    }
    assert_in_range(sampled_5, 400, 600);
    /* The hash is of the seed's bytes, not of the process: these are fixed. */
    guint first[3], n = 0;
    for (guint64 seed = 1; n < 3; seed++) {
        if (runner_paranoid_sampled(seed, 5))
            first[n++] = (guint)seed;
    }
    assert_int_equal(first[0], 53);
    assert_int_equal(first[1], 77);
    assert_int_equal(first[2], 81);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runner_paranoid_keeps_the_fingerprint),
        cmocka_unit_test(test_runner_paranoid_checks_after_every_event),
        cmocka_unit_test(test_runner_paranoid_off_unless_asked),
        cmocka_unit_test(test_runner_paranoid_scenario_key_defaults_to_false),
        cmocka_unit_test(test_runner_paranoid_sample_is_a_function_of_the_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
