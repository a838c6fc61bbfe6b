/*
 * Validation of the broker's request station (request_queue.h) against
 * queueing theory, through queue_theory.h: one server with Poisson arrivals
 * and exponential service is an M/M/1 queue, whose mean response time is
 * 1/(μ−λ); c servers are M/M/c, checked against Erlang C.
 *
 * The tolerance is not tuned. Each run's mean is estimated with its
 * batch-means standard error SE (20 batches of consecutive customers after a
 * 1% warm-up; each batch is thousands of times longer than the queue's
 * relaxation time, about 1/(μ(1−√ρ)²): 380 mean service times at ρ = 0.9,
 * so the batch means are close to independent and normal). A test passes when
 * |measured − theory| ≤ 4 SE: with the batch means' Student t law at 19
 * degrees of freedom, a correct queue fails it with probability below 0.1%,
 * and the seeds are fixed, so the outcome is reproducible. The run lengths
 * were chosen from the known asymptotic variance of the M/M/1 sojourn time
 * (it grows as 1/(1−ρ)^4) so that 4 SE stays under 5% of the theory, and the
 * tests assert that too: a run too short to support the 5% claim fails
 * rather than passing on a wide band.
 */
#include "queue_theory.h"

#include "request_queue.h"
#include "sim_world.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#define SERVICE_MEAN_NS 1000000.0 /* 1/μ = 1 ms */

typedef struct {
    guint servers;
    double rho;
    guint64 customers;
} Case;

static void
check_case(const Case *c)
{
    QueueTheorySpec spec = {
        .servers = c->servers,
        .service_mean_ns = SERVICE_MEAN_NS,
        .rho = c->rho,
        .customers = c->customers,
        .warmup = c->customers / 100,
        .batches = 20,
        .seed = 21,
    };
    QueueTheoryResult result;
    queue_theory_run(&spec, &result);
    double tolerance = 4.0 * result.standard_error_ns;
    print_message("M/M/%u rho=%.2f: measured %.4f ms, theory %.4f ms, 4 SE %.4f ms (%.2f%%)\n",
                  c->servers, c->rho, result.mean_ns / 1e6, result.theory_ns / 1e6,
                  tolerance / 1e6, 100.0 * tolerance / result.theory_ns);
    assert_true(fabs(result.mean_ns - result.theory_ns) <= tolerance);
    assert_true(tolerance <= 0.05 * result.theory_ns);
    /* The servers' measured busy share is ρ. */
    assert_true(fabs(result.utilization - c->rho) <= 0.02);
}

/* One server: the mean response time is 1/(μ−λ) at ρ = 0.5, 0.8, 0.9. */
static void
test_queue_theory_mm1(void **state)
{
    (void)state;
    static const Case cases[] = {
        {1, 0.5, 200000},
        {1, 0.8, 800000},
        {1, 0.9, 3600000},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        QueueTheorySpec spec = {.servers = 1, .service_mean_ns = SERVICE_MEAN_NS,
                                .rho = cases[i].rho};
        /* The M/M/c formula at c = 1 is 1/(μ−λ). */
        double mu = 1.0 / SERVICE_MEAN_NS;
        assert_true(fabs(queue_theory_mean_response_ns(&spec) - 1.0 / (mu - cases[i].rho * mu)) <
                    1e-6);
        check_case(&cases[i]);
    }
}

/* Four servers (num.io.threads = 4) against Erlang C at ρ = 0.5 and 0.9. */
static void
test_queue_theory_mmc(void **state)
{
    (void)state;
    static const Case cases[] = {
        {4, 0.5, 200000},
        {4, 0.9, 2400000},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        check_case(&cases[i]);
}

/* Erlang C against values computed by hand: c = 1 gives ρ; c = 2, a = 1
 * gives 1/3. */
static void
test_queue_theory_erlang_c(void **state)
{
    (void)state;
    assert_true(fabs(queue_theory_erlang_c(1, 0.7) - 0.7) < 1e-12);
    assert_true(fabs(queue_theory_erlang_c(2, 1.0) - 1.0 / 3.0) < 1e-12);
}

/* The check can fail: a queue run at ρ = 0.9 is far from the ρ = 0.8
 * formula. */
static void
test_queue_theory_detects_wrong_rate(void **state)
{
    (void)state;
    QueueTheorySpec spec = {.servers = 1, .service_mean_ns = SERVICE_MEAN_NS, .rho = 0.9,
                            .customers = 200000, .warmup = 2000, .batches = 20, .seed = 3};
    QueueTheoryResult result;
    queue_theory_run(&spec, &result);
    QueueTheorySpec wrong = spec;
    wrong.rho = 0.8;
    double wrong_theory = queue_theory_mean_response_ns(&wrong);
    assert_false(fabs(result.mean_ns - wrong_theory) <= 4.0 * result.standard_error_ns);
}

typedef struct {
    guint done;
    gboolean refuse;
} Station;

static gboolean
station_done_cb(void *owner, void *item, const RequestQueueTiming *timing)
{
    Station *station = owner;
    (void)item;
    (void)timing;
    if (station->refuse)
        return FALSE;
    station->done++;
    return TRUE;
}

static const SimNodeOps NODE_OPS = {0};

/* A full station refuses offers; a blocked server holds its item until
 * retried, and then takes the next waiting one. */
static void
test_request_queue_capacity_and_blocking(void **state)
{
    (void)state;
    Station station = {0, TRUE};
    SimWorld *world = sim_world_new(1);
    SimNodeId node = sim_node_add(world, "n", &NODE_OPS, &station);
    RequestQueue *queue = request_queue_new(world, node, 1, 2, station_done_cb, &station);
    int items[4];
    assert_true(request_queue_offer(queue, &items[0], 10));
    assert_true(request_queue_offer(queue, &items[1], 10));
    assert_true(request_queue_offer(queue, &items[2], 10));
    assert_true(request_queue_full(queue));
    assert_false(request_queue_offer(queue, &items[3], 10));
    while (sim_world_step(world))
        request_queue_check_invariants(queue);
    /* The server finished item 0 but is blocked with it. */
    assert_int_equal(request_queue_busy(queue), 1);
    assert_int_equal(request_queue_waiting(queue), 2);
    assert_int_equal(station.done, 0);
    station.refuse = FALSE;
    request_queue_retry_blocked(queue);
    assert_int_equal(station.done, 1);
    while (sim_world_step(world))
        request_queue_check_invariants(queue);
    assert_int_equal(station.done, 3);
    assert_int_equal(sim_now_ns(world), 30);
    /* Busy time counts service, not the blocked wait. */
    assert_int_equal(request_queue_busy_ns(queue), 30);
    request_queue_free(queue, NULL);
    sim_world_free(world);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_theory_erlang_c),
        cmocka_unit_test(test_request_queue_capacity_and_blocking),
        cmocka_unit_test(test_queue_theory_detects_wrong_rate),
        cmocka_unit_test(test_queue_theory_mm1),
        cmocka_unit_test(test_queue_theory_mmc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
