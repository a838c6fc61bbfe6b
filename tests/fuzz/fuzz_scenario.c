/*
 * Fuzz target: the scenario parser and validator, through `ksim check`'s
 * entry point (scenario_plan_check_bytes): bytes in, a listing or a message
 * out, exit status 0 or 2, never an abort, a leak or undefined behaviour.
 *
 * Built three ways from one source (tests/fuzz/CMakeLists.txt): with clang's
 * libFuzzer (-DKSIM_FUZZ=ON), with AFL++ (CC=afl-clang-fast, -DKSIM_FUZZ=ON,
 * whose -fsanitize=fuzzer links AFL++'s driver), and in the normal build as
 * a replay binary (fuzz_replay_main.c) that ctest runs over every input of
 * tests/fuzz/regressions/scenario, so a crash once found stays fixed.
 */
#include "fuzz_target.h"

#include "scenario_plan.h"
#include "sim_assert.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    g_autoptr(GString) out = g_string_new(NULL);
    int status = scenario_plan_check_bytes(data, size, NULL, out);
    /* Both verdicts say something: a listing, or a message. */
    KSIM_ASSERT(status == 0 || status == 2);
    KSIM_ASSERT(out->len > 0);
    return 0;
}
