/* `ksim bench queue`: the broker's request station as M/M/1 and M/M/c
 * queues, measured against queueing theory (queue_theory.h). Virtual time
 * only; prints one line per case. */
#include "benchmarks.h"

#include "queue_theory.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    guint servers;
    double rho;
    guint64 customers;
} BenchCase;

int
bench_queue(int argc, char **argv)
{
    static const BenchCase cases[] = {
        {1, 0.5, 200000}, {1, 0.8, 800000}, {1, 0.9, 3600000},
        {4, 0.5, 200000}, {4, 0.9, 2400000}, {8, 0.9, 2400000},
    };
    gboolean json = argc > 1 && strcmp(argv[1], "--json") == 0;
    if (!json)
        printf("%-6s %5s %12s %12s %9s %9s %7s  (1/mu = 1 ms, 20 batch means, tolerance 4 SE)\n",
               "queue", "rho", "measured_ms", "theory_ms", "error_%", "4SE_%", "verdict");
    int status = 0;
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        QueueTheorySpec spec = {.servers = cases[i].servers, .service_mean_ns = 1e6,
                                .rho = cases[i].rho, .customers = cases[i].customers,
                                .warmup = cases[i].customers / 100, .batches = 20, .seed = 21};
        QueueTheoryResult r;
        queue_theory_run(&spec, &r);
        double error = 100.0 * (r.mean_ns - r.theory_ns) / r.theory_ns;
        double band = 100.0 * 4.0 * r.standard_error_ns / r.theory_ns;
        gboolean ok = fabs(error) <= band;
        status |= !ok;
        if (json)
            printf("{\"servers\":%u,\"rho\":%.2f,\"measured_ms\":%.5f,\"theory_ms\":%.5f,"
                   "\"four_se_percent\":%.3f,\"ok\":%s}\n",
                   spec.servers, spec.rho, r.mean_ns / 1e6, r.theory_ns / 1e6, band,
                   ok ? "true" : "false");
        else
            printf("M/M/%-2u %5.2f %12.4f %12.4f %+9.2f %9.2f %7s\n", spec.servers, spec.rho,
                   r.mean_ns / 1e6, r.theory_ns / 1e6, error, band, ok ? "ok" : "FAIL");
    }
    return status;
}
