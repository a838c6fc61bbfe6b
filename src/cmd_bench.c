/* `ksim bench NAME`: dispatches to the benchmarks in src/bench. */
#include "commands.h"

#include "benchmarks.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} Bench;

static const Bench BENCHES[] = {
    {"engine", bench_engine, "scheduler hold model against a bare heap; network replication ping"},
    {"log", bench_log, "partition log appends and lookups at 10^4 and 10^7 records"},
    {"cluster", bench_cluster,
     "3 brokers, RF 3, acks=all, 10^6 records from a simple driver, then the check;\n"
     "                   --producer: driven by the real producer (batching on);\n"
     "                   --producer --vs-rdkafka: then the same load on librdkafka's mock\n"
     "                   cluster (when librdkafka-dev was installed at the build), and the ratios"},
    {"cluster-producer", bench_cluster_producer, "the same as cluster --producer"},
    {"scale", bench_scale,
     "30 brokers, RF 3, acks=all, 10^3/10^4/10^5 partitions over 100 topics, 10^4\n"
     "                   records/s, a broker crash and a controller failover (--sizes, --virtual,\n"
     "                   --no-sessions: full fetches only)"},
    {"queue", bench_queue, "a broker's request queue as M/M/1 and M/M/c against queueing theory"},
};

static void
usage(FILE *out)
{
    fprintf(out, "Usage: ksim bench NAME [--json]\n\nBenchmarks:\n");
    for (guint i = 0; i < G_N_ELEMENTS(BENCHES); i++)
        fprintf(out, "  %-16s %s\n", BENCHES[i].name, BENCHES[i].summary);
}

int
cmd_bench(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    for (guint i = 0; i < G_N_ELEMENTS(BENCHES); i++) {
        if (strcmp(argv[1], BENCHES[i].name) == 0)
            return BENCHES[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "ksim bench: unknown benchmark '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
