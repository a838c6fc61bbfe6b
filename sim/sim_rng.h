/*
 * sim_rng: seeded random streams and the distributions drawn from them.
 *
 * Every component of a run draws from its own stream, named by a string such
 * as "net", "disk/3" or "producer/1". A stream's seed is
 *
 *     XXH3_64bits_withSeed(name, strlen(name), run_seed)
 *
 * split into four 32-bit words that seed a GLib GRand (Mersenne Twister). So a
 * stream depends only on the run seed and its own name: adding a node or a
 * fault does not shift any other component's draws, and the values are the
 * same on every run of the same binary. Floating-point draws are built from
 * integer draws here (53 random bits), never from GRand's double functions,
 * whose algorithm G_RANDOM_VERSION can change.
 *
 * Draws: uniform integers and reals, exponential, normal, lognormal, Pareto,
 * and Bernoulli with an integer ratio (probabilities are never doubles).
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <glib.h>

typedef struct SimRng SimRng;

/* A new stream for `name` under `run_seed`. (transfer full) */
SimRng *sim_rng_new(guint64 run_seed, const char *name);
void sim_rng_free(SimRng *rng);

guint32 sim_rng_u32(SimRng *rng);
guint64 sim_rng_u64(SimRng *rng);
/* Uniform in [lo, hi); hi > lo. */
gint64 sim_rng_range(SimRng *rng, gint64 lo, gint64 hi);
/* Uniform in [0, 1), 53 bits. */
double sim_rng_uniform(SimRng *rng);
/* TRUE with probability numerator/denominator. */
gboolean sim_rng_chance(SimRng *rng, guint64 numerator, guint64 denominator);
double sim_rng_exponential(SimRng *rng, double mean);
double sim_rng_normal(SimRng *rng, double mean, double stddev);
/* exp(N(mu, sigma)): the median is exp(mu). */
double sim_rng_lognormal(SimRng *rng, double mu, double sigma);
/* Pareto with minimum `scale` and tail index `shape`. */
double sim_rng_pareto(SimRng *rng, double scale, double shape);

/* A distribution of durations (or sizes), sampled in integer nanoseconds. */
typedef enum {
    SIM_DIST_CONSTANT,    /* a */
    SIM_DIST_UNIFORM,     /* uniform in [a, b] */
    SIM_DIST_EXPONENTIAL, /* a + Exp(mean b) */
    SIM_DIST_NORMAL,      /* N(a, b), clamped at 0 */
    SIM_DIST_LOGNORMAL,   /* median a, sigma b (the jitter) */
    SIM_DIST_PARETO,      /* minimum a, shape b */
} SimDistKind;

typedef struct {
    SimDistKind kind;
    double a;
    double b;
} SimDist;

#define SIM_DIST_CONST(v) ((SimDist){SIM_DIST_CONSTANT, (double)(v), 0.0})

/* One sample, rounded to an integer and never negative. */
gint64 sim_dist_sample(const SimDist *dist, SimRng *rng);

/* The distribution's mean (for documentation and checks). */
double sim_dist_mean(const SimDist *dist);

/* Parses "const:5ms", "uniform:1ms..3ms", "exp:1ms+2ms" (minimum + mean),
 * "normal:5ms,1ms", "lognormal:2ms,0.5" (median, sigma),
 * "pareto:1ms,1.5" (minimum, shape). Values take units ns, us, ms, s, m, h
 * when `units_are_time`, else plain numbers or KiB/MiB/GiB. A bare number in
 * place of a distribution is a constant. FALSE with a message on bad input. */
gboolean sim_dist_parse(const char *text, gboolean units_are_time, SimDist *out, GError **error);

/* Parses a duration such as "250ms", "1.5s", "3m" into nanoseconds; a bare
 * number is taken in `bare_unit_ns` (e.g. 1000000 for Kafka's *.ms keys). */
gboolean sim_parse_duration_ns(const char *text, gint64 bare_unit_ns, gint64 *out_ns,
                               GError **error);

/* Parses a size such as "4096", "16KiB", "1GiB", "10MB" into bytes. */
gboolean sim_parse_bytes(const char *text, gint64 *out_bytes, GError **error);

#define SIM_ERROR (sim_error_quark())
GQuark sim_error_quark(void);
typedef enum { SIM_ERROR_PARSE } SimErrorCode;

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimRng, sim_rng_free)

#endif
