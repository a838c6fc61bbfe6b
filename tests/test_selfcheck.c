/*
 * selfcheck: a run made twice, in two processes, agrees with itself; a
 * difference injected into the second process only (a test-only check that
 * adds one trace record at a chosen virtual time, which no scenario or
 * option can reach) is caught and named by its index, time and kind.
 */
#include "runner.h"
#include "selfcheck.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define INJECT_AT_NS G_GINT64_CONSTANT(2000000000)

static ScenarioVariant *
small_variant(void)
{
    g_autofree char *path =
        g_build_filename(KSIM_SOURCE_DIR, "tests", "data", "scenarios", "small-report.ini", NULL);
    GError *error = NULL;
    g_autoptr(Scenario) scenario = scenario_load(path, &error);
    assert_non_null(scenario);
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    return g_ptr_array_steal_index(variants, 0);
}

typedef struct {
    gboolean done;
} Injection;

/* After the first event at or past INJECT_AT_NS, one model note more: the
 * kind of difference a wall clock or an address reaching the trace makes. */
static void
inject(const SimWorld *world, void *user_data)
{
    Injection *injection = user_data;
    if (injection->done || sim_now_ns(world) < INJECT_AT_NS)
        return;
    injection->done = TRUE;
    /* Only this test writes to the world from a check. */
    SimWorld *writable = (SimWorld *)world;
    sim_trace_add(sim_world_trace(writable), sim_now_ns(world), SIM_TRACE_MODEL, 0, 0, 42, 0,
                  "injected");
}

/* The same run twice gives the same trace: no mismatch. */
static void
test_selfcheck_agrees(void **state)
{
    (void)state;
    g_autoptr(ScenarioVariant) variant = small_variant();
    char *mismatch = NULL;
    g_autoptr(RunnerResult) result = selfcheck_run(variant, 3, NULL, NULL, NULL, &mismatch);
    assert_non_null(result);
    assert_null(mismatch);
    g_autoptr(RunnerResult) alone = runner_run(variant, 3, NULL);
    assert_true(alone->fingerprint == result->fingerprint);
}

/* A record only the second process adds is found at its time. */
static void
test_selfcheck_names_first_difference(void **state)
{
    (void)state;
    g_autoptr(ScenarioVariant) variant = small_variant();
    Injection injection = {FALSE};
    RunnerChecks child = {.paranoid = TRUE, .extra_check = inject,
                          .extra_check_data = &injection};
    g_autofree char *mismatch = NULL;
    g_autoptr(RunnerResult) result = selfcheck_run(variant, 3, NULL, NULL, &child, &mismatch);
    assert_non_null(result);
    assert_false(injection.done); /* the parent's copy never injected */
    assert_non_null(mismatch);
    if (strstr(mismatch, "first differing trace event is #") == NULL ||
        strstr(mismatch, "in the second process model on node 0 at 2.") == NULL)
        fail_msg("%s", mismatch);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selfcheck_agrees),
        cmocka_unit_test(test_selfcheck_names_first_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
