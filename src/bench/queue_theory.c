/*
 * queue_theory: M/M/c runs of the broker's request station (see
 * queue_theory.h). A tiny world with one node: an arrival timer chain draws
 * exponential inter-arrival times from one RNG stream and offers items with
 * exponential service times from another; the station's completions are
 * the measurements. No broker, no network: what is checked is the queueing
 * machinery every broker request goes through.
 */
#include "queue_theory.h"

#include "request_queue.h"
#include "sim_assert.h"
#include "sim_rng.h"
#include "sim_world.h"

#include <math.h>

typedef struct {
    const QueueTheorySpec *spec;
    SimWorld *world;
    SimNodeId node;
    RequestQueue *queue;
    SimRng *arrivals;
    SimRng *service;
    double interarrival_mean_ns;
    guint64 offered;
    guint64 completed;
    guint64 offered_max;
    /* Batch means. */
    guint64 batch_size;
    double batch_sum;
    guint64 batch_count;
    double *batch_means;
    guint batches_done;
    double total_sum;
    guint64 total_count;
    gint64 measure_start_ns;
    gint64 busy_start_ns;
} Run;

double
queue_theory_erlang_c(guint servers, double offered_load)
{
    KSIM_ASSERT(servers >= 1);
    KSIM_ASSERT(offered_load < (double)servers);
    /* Sum a^k/k! for k < c, and a^c/c!, by running products. */
    double term = 1.0, sum = 0.0;
    for (guint k = 0; k < servers; k++) {
        sum += term;
        term *= offered_load / (double)(k + 1);
    }
    double tail = term * (double)servers / ((double)servers - offered_load);
    return tail / (sum + tail);
}

double
queue_theory_mean_response_ns(const QueueTheorySpec *spec)
{
    double mu = 1.0 / spec->service_mean_ns;
    double lambda = spec->rho * (double)spec->servers * mu;
    double c = (double)spec->servers;
    double wait_probability = queue_theory_erlang_c(spec->servers, lambda / mu);
    return 1.0 / mu + wait_probability / (c * mu - lambda);
}

static gboolean
done_cb(void *owner, void *item, const RequestQueueTiming *timing)
{
    Run *run = owner;
    (void)item;
    run->completed++;
    if (run->completed == run->spec->warmup) {
        run->measure_start_ns = timing->done_ns;
        run->busy_start_ns = request_queue_busy_ns(run->queue);
    }
    if (run->completed <= run->spec->warmup || run->batches_done == run->spec->batches)
        return TRUE;
    double response = (double)(timing->done_ns - timing->enqueued_ns);
    run->batch_sum += response;
    run->batch_count++;
    if (run->batch_count == run->batch_size) {
        run->batch_means[run->batches_done++] = run->batch_sum / (double)run->batch_count;
        run->total_sum += run->batch_sum;
        run->total_count += run->batch_count;
        run->batch_sum = 0.0;
        run->batch_count = 0;
    }
    return TRUE;
}

static void
arrival_cb(SimWorld *world, void *ctx, void *arg)
{
    Run *run = ctx;
    (void)arg;
    gint64 service = (gint64)(sim_rng_exponential(run->service, run->spec->service_mean_ns) + 0.5);
    gboolean offered = request_queue_offer(run->queue, run, service);
    KSIM_ASSERT(offered);
    run->offered++;
    if (run->offered == run->offered_max)
        return;
    gint64 gap = (gint64)(sim_rng_exponential(run->arrivals, run->interarrival_mean_ns) + 0.5);
    sim_timer_set(world, run->node, gap, arrival_cb, NULL);
}

static const SimNodeOps NODE_OPS = {0};

void
queue_theory_run(const QueueTheorySpec *spec, QueueTheoryResult *result)
{
    KSIM_ASSERT(spec->batches >= 2);
    KSIM_ASSERT(spec->rho > 0.0 && spec->rho < 1.0);
    KSIM_ASSERT(spec->customers >= spec->batches);
    Run run = {.spec = spec};
    run.world = sim_world_new(spec->seed);
    run.node = sim_node_add(run.world, "queue", &NODE_OPS, &run);
    run.queue = request_queue_new(run.world, run.node, spec->servers, 0, done_cb, &run);
    run.arrivals = sim_world_rng(run.world, "arrivals");
    run.service = sim_world_rng(run.world, "service");
    run.interarrival_mean_ns = spec->service_mean_ns / (spec->rho * (double)spec->servers);
    run.batch_size = spec->customers / spec->batches;
    run.batch_means = g_new0(double, spec->batches);
    /* Enough arrivals that every measured customer completes. */
    run.offered_max = spec->warmup + run.batch_size * spec->batches;
    sim_timer_set(run.world, run.node, 0, arrival_cb, NULL);
    while (run.batches_done < spec->batches && sim_world_step(run.world))
        ;
    KSIM_ASSERT(run.batches_done == spec->batches);
    double mean = run.total_sum / (double)run.total_count;
    double squares = 0.0;
    for (guint i = 0; i < spec->batches; i++)
        squares += (run.batch_means[i] - mean) * (run.batch_means[i] - mean);
    double batch_sd = sqrt(squares / (double)(spec->batches - 1));
    result->mean_ns = mean;
    result->standard_error_ns = batch_sd / sqrt((double)spec->batches);
    result->theory_ns = queue_theory_mean_response_ns(spec);
    double mu = 1.0 / spec->service_mean_ns;
    result->erlang_c = queue_theory_erlang_c(spec->servers, spec->rho * spec->servers);
    (void)mu;
    double elapsed = (double)(sim_now_ns(run.world) - run.measure_start_ns);
    double busy = (double)(request_queue_busy_ns(run.queue) - run.busy_start_ns);
    result->utilization = elapsed > 0 ? busy / (elapsed * (double)spec->servers) : 0.0;
    request_queue_free(run.queue, NULL);
    sim_world_free(run.world);
    g_free(run.batch_means);
}
