/*
 * sim_rng: seeded streams and distributions (see sim_rng.h for the derivation
 * of each stream's seed, which is part of ksim's reproducibility contract).
 */
#include "sim_rng.h"

#include "sim_assert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct SimRng {
    GRand *rand;
    /* The polar method makes normals in pairs; the second waits here. It is
     * part of the stream's state, so a stream's draws stay reproducible. */
    gboolean has_spare;
    double spare;
};

G_DEFINE_QUARK(ksim-sim-error-quark, sim_error)

SimRng *
sim_rng_new(guint64 run_seed, const char *name)
{
    KSIM_ASSERT(name != NULL);
    guint64 seed = XXH3_64bits_withSeed(name, strlen(name), run_seed);
    guint64 mixed = XXH3_64bits_withSeed(&seed, sizeof seed, run_seed ^ 0x9e3779b97f4a7c15ull);
    guint32 words[4] = {(guint32)seed, (guint32)(seed >> 32), (guint32)mixed,
                        (guint32)(mixed >> 32)};
    SimRng *rng = g_new0(SimRng, 1);
    rng->rand = g_rand_new_with_seed_array(words, G_N_ELEMENTS(words));
    return rng;
}

void
sim_rng_free(SimRng *rng)
{
    if (rng == NULL)
        return;
    g_rand_free(rng->rand);
    g_free(rng);
}

guint32
sim_rng_u32(SimRng *rng)
{
    return g_rand_int(rng->rand);
}

guint64
sim_rng_u64(SimRng *rng)
{
    guint64 high = g_rand_int(rng->rand);
    return (high << 32) | g_rand_int(rng->rand);
}

gint64
sim_rng_range(SimRng *rng, gint64 lo, gint64 hi)
{
    KSIM_ASSERT(hi > lo);
    guint64 span = (guint64)hi - (guint64)lo;
    /* Rejection sampling removes the modulo bias. */
    guint64 limit = G_MAXUINT64 - (G_MAXUINT64 % span);
    guint64 draw;
    do {
        draw = sim_rng_u64(rng);
    } while (draw >= limit);
    return (gint64)((guint64)lo + draw % span);
}

double
sim_rng_uniform(SimRng *rng)
{
    return (double)(sim_rng_u64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

gboolean
sim_rng_chance(SimRng *rng, guint64 numerator, guint64 denominator)
{
    KSIM_ASSERT(denominator > 0);
    KSIM_ASSERT(numerator <= denominator);
    if (numerator == 0)
        return FALSE;
    return (guint64)sim_rng_range(rng, 0, (gint64)denominator) < numerator;
}

double
sim_rng_exponential(SimRng *rng, double mean)
{
    KSIM_ASSERT(mean >= 0.0);
    /* 1 - U is in (0, 1], so the logarithm is finite. */
    return -mean * log(1.0 - sim_rng_uniform(rng));
}

double
sim_rng_normal(SimRng *rng, double mean, double stddev)
{
    /* Marsaglia's polar method: no trigonometry, and a pair per logarithm. */
    if (rng->has_spare) {
        rng->has_spare = FALSE;
        return mean + stddev * rng->spare;
    }
    double u, v, s;
    guint attempts = 0;
    do {
        u = 2.0 * sim_rng_uniform(rng) - 1.0;
        v = 2.0 * sim_rng_uniform(rng) - 1.0;
        s = u * u + v * v;
        KSIM_ASSERT(++attempts < 1000);
    } while (s >= 1.0 || s == 0.0);
    double factor = sqrt(-2.0 * log(s) / s);
    rng->spare = v * factor;
    rng->has_spare = TRUE;
    return mean + stddev * u * factor;
}

double
sim_rng_lognormal(SimRng *rng, double mu, double sigma)
{
    return exp(sim_rng_normal(rng, mu, sigma));
}

double
sim_rng_pareto(SimRng *rng, double scale, double shape)
{
    KSIM_ASSERT(scale > 0.0);
    KSIM_ASSERT(shape > 0.0);
    return scale / pow(1.0 - sim_rng_uniform(rng), 1.0 / shape);
}

gint64
sim_dist_sample(const SimDist *dist, SimRng *rng)
{
    double value = 0.0;
    switch (dist->kind) {
    case SIM_DIST_CONSTANT:
        return (gint64)dist->a;
    case SIM_DIST_UNIFORM:
        if (dist->b <= dist->a)
            return (gint64)dist->a;
        return sim_rng_range(rng, (gint64)dist->a, (gint64)dist->b + 1);
    case SIM_DIST_EXPONENTIAL:
        value = dist->a + sim_rng_exponential(rng, dist->b);
        break;
    case SIM_DIST_NORMAL:
        value = sim_rng_normal(rng, dist->a, dist->b);
        break;
    case SIM_DIST_LOGNORMAL:
        value = sim_rng_lognormal(rng, log(dist->a), dist->b);
        break;
    case SIM_DIST_PARETO:
        value = sim_rng_pareto(rng, dist->a, dist->b);
        break;
    default:
        KSIM_ASSERT(!"unknown distribution kind");
    }
    /* Heavy tails are capped at a day so a sample always fits an int64. */
    if (!(value > 0.0))
        return 0;
    if (value > 8.64e13)
        value = 8.64e13;
    return (gint64)llround(value);
}

double
sim_dist_mean(const SimDist *dist)
{
    switch (dist->kind) {
    case SIM_DIST_CONSTANT:
        return dist->a;
    case SIM_DIST_UNIFORM:
        return (dist->a + dist->b) / 2.0;
    case SIM_DIST_EXPONENTIAL:
        return dist->a + dist->b;
    case SIM_DIST_NORMAL:
        return dist->a;
    case SIM_DIST_LOGNORMAL:
        return dist->a * exp(dist->b * dist->b / 2.0);
    case SIM_DIST_PARETO:
        return dist->b > 1.0 ? dist->a * dist->b / (dist->b - 1.0) : INFINITY;
    }
    return 0.0;
}

typedef struct {
    const char *suffix;
    double factor;
} Unit;

static const Unit TIME_UNITS[] = {
    {"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9},
};

static const Unit BYTE_UNITS[] = {
    {"B", 1.0},         {"KiB", 1024.0},     {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"KB", 1000.0},     {"MB", 1e6},         {"GB", 1e9},        {"k", 1000.0},
    {"K", 1024.0},      {"M", 1048576.0},    {"G", 1073741824.0},
};

/* Parses a number with an optional unit from `units`; `bare` scales a number
 * without a unit. */
static gboolean
parse_quantity(const char *text, const Unit *units, guint n_units, double bare, double *out,
               GError **error)
{
    g_autofree char *trimmed = g_strstrip(g_strdup(text));
    char *end = NULL;
    double value = g_ascii_strtod(trimmed, &end);
    if (end == trimmed || !isfinite(value) || value < 0) {
        g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "'%s' is not a non-negative number",
                    trimmed);
        return FALSE;
    }
    if (*end == '\0') {
        *out = value * bare;
        return TRUE;
    }
    for (guint i = 0; i < n_units; i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            *out = value * units[i].factor;
            return TRUE;
        }
    }
    GString *known = g_string_new(NULL);
    for (guint i = 0; i < n_units; i++)
        g_string_append_printf(known, "%s%s", i ? ", " : "", units[i].suffix);
    g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "unknown unit '%s' in '%s' (known: %s)", end,
                trimmed, known->str);
    g_string_free(known, TRUE);
    return FALSE;
}

gboolean
sim_parse_duration_ns(const char *text, gint64 bare_unit_ns, gint64 *out_ns, GError **error)
{
    double value;
    if (!parse_quantity(text, TIME_UNITS, G_N_ELEMENTS(TIME_UNITS), (double)bare_unit_ns, &value,
                        error))
        return FALSE;
    if (value > 9.2e18) {
        g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "duration '%s' is too large", text);
        return FALSE;
    }
    *out_ns = (gint64)llround(value);
    return TRUE;
}

gboolean
sim_parse_bytes(const char *text, gint64 *out_bytes, GError **error)
{
    double value;
    if (!parse_quantity(text, BYTE_UNITS, G_N_ELEMENTS(BYTE_UNITS), 1.0, &value, error))
        return FALSE;
    if (value > 9.2e18) {
        g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "size '%s' is too large", text);
        return FALSE;
    }
    *out_bytes = (gint64)llround(value);
    return TRUE;
}

static gboolean
parse_value(const char *text, gboolean units_are_time, double *out, GError **error)
{
    if (units_are_time)
        return parse_quantity(text, TIME_UNITS, G_N_ELEMENTS(TIME_UNITS), 1.0, out, error);
    return parse_quantity(text, BYTE_UNITS, G_N_ELEMENTS(BYTE_UNITS), 1.0, out, error);
}

/* Parses "x<sep>y" into two values; the second is unitless when `plain_second`. */
static gboolean
parse_pair(const char *body, const char *sep, gboolean units_are_time, gboolean plain_second,
           double *a, double *b, GError **error)
{
    g_auto(GStrv) parts = g_strsplit(body, sep, 2);
    if (g_strv_length(parts) != 2) {
        g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "expected two values separated by '%s' in '%s'",
                    sep, body);
        return FALSE;
    }
    if (!parse_value(parts[0], units_are_time, a, error))
        return FALSE;
    if (!plain_second)
        return parse_value(parts[1], units_are_time, b, error);
    return parse_quantity(parts[1], NULL, 0, 1.0, b, error);
}

gboolean
sim_dist_parse(const char *text, gboolean units_are_time, SimDist *out, GError **error)
{
    const char *colon = strchr(text, ':');
    if (colon == NULL) {
        out->kind = SIM_DIST_CONSTANT;
        out->b = 0.0;
        return parse_value(text, units_are_time, &out->a, error);
    }
    g_autofree char *kind = g_strstrip(g_strndup(text, (gsize)(colon - text)));
    const char *body = colon + 1;
    if (strcmp(kind, "const") == 0 || strcmp(kind, "constant") == 0) {
        out->kind = SIM_DIST_CONSTANT;
        out->b = 0.0;
        return parse_value(body, units_are_time, &out->a, error);
    }
    struct {
        const char *name;
        SimDistKind kind;
        const char *sep;
        gboolean plain_second;
    } forms[] = {
        {"uniform", SIM_DIST_UNIFORM, "..", FALSE},  {"exp", SIM_DIST_EXPONENTIAL, "+", FALSE},
        {"normal", SIM_DIST_NORMAL, ",", FALSE},     {"lognormal", SIM_DIST_LOGNORMAL, ",", TRUE},
        {"pareto", SIM_DIST_PARETO, ",", TRUE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(forms); i++) {
        if (strcmp(kind, forms[i].name) != 0)
            continue;
        out->kind = forms[i].kind;
        if (forms[i].kind == SIM_DIST_EXPONENTIAL && strchr(body, '+') == NULL) {
            out->a = 0.0;
            return parse_value(body, units_are_time, &out->b, error);
        }
        if (!parse_pair(body, forms[i].sep, units_are_time, forms[i].plain_second, &out->a,
                        &out->b, error))
            return FALSE;
        if (out->kind == SIM_DIST_UNIFORM && out->b < out->a) {
            g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE,
                        "'%s': the range's upper end is below its lower end", text);
            return FALSE;
        }
        if ((out->kind == SIM_DIST_LOGNORMAL || out->kind == SIM_DIST_PARETO) && out->a <= 0.0) {
            g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "'%s': the first value must be positive",
                        text);
            return FALSE;
        }
        if (out->kind == SIM_DIST_PARETO && out->b <= 0.0) {
            g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE, "'%s': the shape must be positive", text);
            return FALSE;
        }
        return TRUE;
    }
    g_set_error(error, SIM_ERROR, SIM_ERROR_PARSE,
                "unknown distribution '%s' (known: const, uniform, exp, normal, lognormal, pareto)",
                kind);
    return FALSE;
}
