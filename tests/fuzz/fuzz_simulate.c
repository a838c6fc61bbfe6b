/*
 * Fuzz target: short simulations of fuzzed scenarios, to find aborts in the
 * models (an assertion, an overflow, a use after free under ASan) on input
 * the parser accepts. Slower than fuzz_scenario.c: each input that parses
 * and fits the caps below runs its first run with its seed, then the checker
 * reads the history.
 *
 * Caps keep one input to a fraction of a second: at most
 * SIMULATE_VIRTUAL_NS_MAX of virtual time (duration plus quiet) and an
 * estimated SIMULATE_EVENTS_MAX events and SIMULATE_BYTES_MAX bytes
 * (run_estimate.h); larger inputs are skipped, not run. The seed corpus
 * (tests/fuzz/corpus/simulate) holds the library's scenarios shortened to fit.
 */
#include "fuzz_target.h"

#include "checker.h"
#include "checker_consumer.h"
#include "checker_txn.h"
#include "run_estimate.h"
#include "runner.h"
#include "scenario_plan.h"
#include "sim_assert.h"

#define SIMULATE_VIRTUAL_NS_MAX (G_GINT64_CONSTANT(8) * 1000000000)
#define SIMULATE_EVENTS_MAX 400000.0
#define SIMULATE_BYTES_MAX (256.0 * 1024 * 1024)

static gboolean
small_enough(const ScenarioVariant *variant)
{
    gint64 virtual_ns = scenario_variant_duration_ns(variant) + scenario_variant_quiet_ns(variant);
    RunEstimate e = run_estimate_variant(variant);
    return virtual_ns <= SIMULATE_VIRTUAL_NS_MAX && e.events <= SIMULATE_EVENTS_MAX &&
           e.bytes <= SIMULATE_BYTES_MAX;
}

static void
simulate(const ScenarioVariant *variant)
{
    g_autoptr(RunnerResult) result = runner_run(variant, scenario_variant_seed(variant), NULL);
    CheckerOptions options;
    checker_options_init(&options);
    options.last_heal_ns = result->last_heal_ns;
    CheckerResult *check = checker_run(result->history, &options);
    checker_consumer_free(checker_consumer_run(result->history, check, &options));
    checker_txn_free(checker_txn_run(result->history, check, &options));
    checker_result_free(check);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(Scenario) scenario =
        scenario_plan_load(NULL, (const char *)data, size, "input.ini", NULL, FALSE, &error);
    if (scenario == NULL)
        return 0;
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    KSIM_ASSERT(variants->len >= 1);
    const ScenarioVariant *first = g_ptr_array_index(variants, 0);
    if (small_enough(first))
        simulate(first);
    return 0;
}
