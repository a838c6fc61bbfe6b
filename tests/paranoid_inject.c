/*
 * paranoid_inject SCENARIO SEED EVENT: runs the first run of SCENARIO with
 * SEED checked after every event, with one more check that fails after event
 * EVENT, as a violated invariant would. tests/cli_paranoid.sh checks what it
 * prints and its exit status. The failing check exists only in this test
 * program: no scenario and no ksim option can install one.
 */
#include "runner.h"
#include "sim_assert.h"

#include <stdio.h>
#include <stdlib.h>

static void
fail_at_event(const SimWorld *world, void *user_data)
{
    guint64 event = *(const guint64 *)user_data;
    KSIM_ASSERT(sim_world_events(world) != event);
}

int
main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: paranoid_inject SCENARIO SEED EVENT\n");
        return 2;
    }
    GError *error = NULL;
    g_autoptr(Scenario) scenario = scenario_load(argv[1], &error);
    if (scenario == NULL) {
        fprintf(stderr, "paranoid_inject: %s\n", error->message);
        return 2;
    }
    guint64 seed = g_ascii_strtoull(argv[2], NULL, 10);
    guint64 event = g_ascii_strtoull(argv[3], NULL, 10);
    g_autofree char *replay =
        g_strdup_printf("ksim run %s --seed %" G_GUINT64_FORMAT " --paranoid", argv[1], seed);
    RunnerChecks checks = {.paranoid = TRUE, .replay = replay, .extra_check = fail_at_event,
                           .extra_check_data = &event};
    g_autoptr(GPtrArray) variants = scenario_variants(scenario);
    g_autoptr(RunnerResult) result =
        runner_run_checked(g_ptr_array_index(variants, 0), seed, NULL, &checks);
    printf("no violation in %" G_GUINT64_FORMAT " events\n", result->events);
    return 0;
}
