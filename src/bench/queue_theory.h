/*
 * queue_theory: a broker's request station (models/broker/request_queue.h)
 * run alone as an M/M/c queue — Poisson arrivals at rate λ, exponential
 * service of mean 1/μ, c servers, an unbounded FIFO — and compared with
 * queueing theory: the mean response (sojourn) time is 1/(μ−λ) for c = 1
 * and 1/μ + C(c, λ/μ)/(cμ−λ) for c servers, C being Erlang's C formula.
 *
 * The estimate's uncertainty comes from the run itself, by batch means: the
 * customers (in completion order, after a warm-up) are cut into `batches`
 * consecutive batches, each far longer than the queue's relaxation time, so
 * their means are nearly independent and normal; the standard error of the
 * overall mean is the batch means' standard deviation over sqrt(batches).
 * Used by tests/test_queue_theory.c and `ksim bench queue`.
 */
#ifndef KSIM_QUEUE_THEORY_H
#define KSIM_QUEUE_THEORY_H

#include <glib.h>

typedef struct {
    guint servers;          /* c */
    double service_mean_ns; /* 1/μ */
    double rho;             /* λ / (c μ), below 1 */
    guint64 customers;      /* measured, after the warm-up */
    guint64 warmup;         /* customers completed before measuring */
    guint batches;          /* for the batch-means standard error (>= 2) */
    guint64 seed;
} QueueTheorySpec;

typedef struct {
    double mean_ns;          /* measured mean response time */
    double standard_error_ns; /* batch-means standard error of mean_ns */
    double theory_ns;        /* the formula's mean response time */
    double erlang_c;         /* the probability of waiting (1 for... ρ for c = 1) */
    double utilization;      /* measured busy share of the servers */
} QueueTheoryResult;

/* Erlang C: the probability that an arrival waits, with c servers and
 * offered load a = λ/μ < c. */
double queue_theory_erlang_c(guint servers, double offered_load);
/* The M/M/c mean response time for spec's parameters. */
double queue_theory_mean_response_ns(const QueueTheorySpec *spec);
/* Runs the simulation and fills `result`. */
void queue_theory_run(const QueueTheorySpec *spec, QueueTheoryResult *result);

#endif
