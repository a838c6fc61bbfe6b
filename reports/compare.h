/*
 * compare: a scenario's [vary] runs side by side — what each value of the
 * varied keys cost in latency and kept in durability, and, when one varied
 * key is numeric (an offered load such as workload.rate), the latency curve
 * along it with its knee.
 *
 * The curves: the runs are grouped by the values of every varied key but
 * the numeric one ("acks=1", "acks=all"; one group, "all runs", when it is
 * the only key), and each group's runs, ordered by the numeric key, are one
 * curve of (key value, p50, p99). A key is numeric when each of its values
 * reads whole as a number (g_ascii_strtod) and there are at least three
 * distinct ones; with several such keys, the first in [vary] order.
 *
 * The knee of a curve is found by Kneedle (Satopää, Albrecht, Irwin and
 * Raghavan, "Finding a 'Kneedle' in a Haystack", ICDCS workshops 2011):
 * with x and y scaled to [0, 1] between the curve's first and last points,
 * the knee is the point farthest below the straight line between them
 * (largest x' − y'), where the latency has grown least relative to the load
 * before it starts to climb steeply. A curve whose largest x' − y' is under
 * COMPARE_KNEE_MIN bends too little to have one (a straight or concave
 * curve), and one with fewer than three points cannot.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <glib.h>

/* The smallest scaled distance below the chord that counts as a knee. */
#define COMPARE_KNEE_MIN 0.1

/* One run as the comparison sees it. Strings are borrowed. */
typedef struct {
    const char *label;
    const char *const *keys;   /* the varied keys, in [vary] order */
    const char *const *values; /* this run's value of each */
    guint keys_len;
    double p50_ms; /* produce latency of acknowledged records; < 0: none */
    double p99_ms;
    guint64 lost; /* acknowledged records lost */
} CompareRun;

typedef struct {
    double x;      /* the numeric key's value */
    double p50_ms;
    double p99_ms;
    guint run;     /* index into the runs */
} ComparePoint;

typedef struct {
    char *label;    /* the other varied keys' values, or "all runs" */
    GArray *points; /* ComparePoint, by increasing x; runs without latency left out */
    gint knee;      /* index into points of p99's knee, or -1 */
} CompareCurve;

typedef struct Comparison Comparison;

/* The comparison of `runs` (at least two, all with the same keys), or NULL
 * when there is nothing to compare (fewer than two runs, or no varied key). */
Comparison *compare_new(const CompareRun *runs, guint runs_len);
void compare_free(Comparison *comparison);

/* The numeric key the curves run along, or NULL when none is (then there
 * are no curves). (transfer none) */
const char *compare_load_key(const Comparison *comparison);
/* The curves, in the order their groups first appear among the runs:
 * CompareCurve*. (transfer none) */
const GPtrArray *compare_curves(const Comparison *comparison);

/* Kneedle's knee of the points (x[i], y[i]), x strictly increasing: an index
 * in 1 .. n − 2, or -1 when there is none (see above). */
gint compare_knee(const double *x, const double *y, guint n);

#endif
