/*
 * runner_paranoid: the after-event check and the failure context of a run
 * (see runner_paranoid.h).
 *
 * Invariants:
 *  1. While a RunnerParanoid lives, it is the process's failure context
 *     (sim_assert_set_context), and, when `enabled`, the after-event hook of
 *     its world; runner_paranoid_free removes both.
 *  2. `checking` is TRUE exactly while check_all runs, so a failure report
 *     tells a violation the check found from an assertion inside an event.
 *
 * The check only reads: it schedules nothing, draws no random number and adds
 * no trace record, which is why a checked run keeps its fingerprint.
 */
#include "runner_paranoid.h"

#include "sim_assert.h"

#include <xxhash.h>

struct RunnerParanoid {
    SimWorld *world;
    const Cluster *cluster;       /* NULL: none to check */
    const RunnerClients *clients; /* NULL: none to check */
    const char *label;
    guint64 seed;
    const RunnerChecks *checks;   /* NULL: the defaults */
    gboolean enabled;
    gboolean checking;
    guint64 checks_done;
};

gboolean
runner_paranoid_wanted(const ScenarioVariant *variant, const RunnerChecks *checks)
{
    return (checks != NULL && checks->paranoid) ||
           (variant != NULL && scenario_variant_paranoid(variant));
}

gboolean
runner_paranoid_sampled(guint64 seed, guint percent)
{
    KSIM_ASSERT(percent <= 100);
    guint8 bytes[8];
    for (guint i = 0; i < sizeof bytes; i++)
        bytes[i] = (guint8)(seed >> (8 * i));
    return XXH3_64bits(bytes, sizeof bytes) % 100 < percent;
}

static void
check_all(RunnerParanoid *paranoid, gboolean storage)
{
    paranoid->checking = TRUE;
    sim_world_check_invariants(paranoid->world, storage);
    if (paranoid->cluster != NULL)
        cluster_check_invariants(paranoid->cluster);
    if (paranoid->cluster != NULL && storage)
        cluster_check_logs(paranoid->cluster);
    if (paranoid->clients != NULL)
        runner_clients_check_invariants(paranoid->clients);
    const RunnerChecks *checks = paranoid->checks;
    if (checks != NULL && checks->extra_check != NULL)
        checks->extra_check(paranoid->world, checks->extra_check_data);
    paranoid->checks_done++;
    paranoid->checking = FALSE;
}

static void
after_event(SimWorld *world, void *user_data)
{
    RunnerParanoid *paranoid = user_data;
    KSIM_ASSERT(world == paranoid->world);
    check_all(paranoid, paranoid->checks_done % RUNNER_PARANOID_STORAGE_EVENTS == 0);
}

/* The failure report after KSIM_ASSERT's own line (sim_assert.c): what was
 * checked or dispatched, when, in which run, and how to replay it. */
static int
failure_context(FILE *out, const SimAssertFailure *failure, void *user_data)
{
    const RunnerParanoid *paranoid = user_data;
    g_autofree char *event = sim_world_describe_event(paranoid->world);
    gint64 now = sim_now_ns(paranoid->world);
    if (paranoid->checking)
        fprintf(out, "ksim: invariant violated: %s (%s:%d), found by the check after %s\n",
                failure->expr, failure->file, failure->line, event);
    else
        fprintf(out, "ksim: while dispatching %s\n", event);
    fprintf(out, "ksim:   virtual time  %" G_GINT64_FORMAT ".%09" G_GINT64_FORMAT " s\n",
            now / SIM_NS_PER_S, now % SIM_NS_PER_S);
    fprintf(out, "ksim:   run           %s, seed %" G_GUINT64_FORMAT "%s\n", paranoid->label,
            paranoid->seed, paranoid->enabled ? ", checked after every event" : "");
    const RunnerChecks *checks = paranoid->checks;
    if (checks != NULL && checks->replay != NULL)
        fprintf(out, "ksim:   replay        %s\n", checks->replay);
    if (!paranoid->checking)
        return 0;
    fprintf(out, "ksim: stopped with exit status %d (an invariant violated)\n",
            RUNNER_EXIT_INVARIANT);
    return RUNNER_EXIT_INVARIANT;
}

RunnerParanoid *
runner_paranoid_new(SimWorld *world, const Cluster *cluster, const RunnerClients *clients,
                    const ScenarioVariant *variant, guint64 seed, const RunnerChecks *checks)
{
    KSIM_ASSERT(world != NULL);
    RunnerParanoid *paranoid = g_new0(RunnerParanoid, 1);
    paranoid->world = world;
    paranoid->cluster = cluster;
    paranoid->clients = clients;
    paranoid->label = variant != NULL ? scenario_variant_label(variant) : "-";
    paranoid->seed = seed;
    paranoid->checks = checks;
    paranoid->enabled = runner_paranoid_wanted(variant, checks);
    sim_assert_set_context(failure_context, paranoid);
    if (paranoid->enabled) {
        check_all(paranoid, TRUE);
        sim_world_set_after_event(world, after_event, paranoid);
    }
    return paranoid;
}

void
runner_paranoid_free(RunnerParanoid *paranoid)
{
    if (paranoid == NULL)
        return;
    if (paranoid->enabled) {
        sim_world_set_after_event(paranoid->world, NULL, NULL);
        check_all(paranoid, TRUE);
    }
    sim_assert_set_context(NULL, NULL);
    g_free(paranoid);
}
