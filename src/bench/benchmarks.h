/*
 * The benchmarks behind `ksim bench`. Each takes the arguments after its name
 * (argv[0] is the benchmark name), prints human-readable figures, or one JSON
 * object with --json, and returns an exit status. Benchmarks read the wall
 * clock; they live outside sim/ and models/ for that reason.
 */
#ifndef KSIM_BENCHMARKS_H
#define KSIM_BENCHMARKS_H

int bench_engine(int argc, char **argv);
int bench_log(int argc, char **argv);
int bench_cluster(int argc, char **argv);
/* The cluster benchmark driven by the real producer (batching on). */
int bench_cluster_producer(int argc, char **argv);
/* The request station against M/M/1 and M/M/c theory (virtual time). */
int bench_queue(int argc, char **argv);

/* 30 brokers, 10^3 to 10^5 partitions over 100 topics, a broker crash and a
 * controller failover (bench_scale.c). */
int bench_scale(int argc, char **argv);

#endif
