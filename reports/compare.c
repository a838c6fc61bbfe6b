/*
 * compare: the [vary] runs side by side (see compare.h).
 */
#include "compare.h"

#include "sim_assert.h"

#include <errno.h>
#include <math.h>
#include <string.h>

struct Comparison {
    char *load_key; /* NULL: no numeric key */
    GPtrArray *curves; /* CompareCurve* (owned) */
};

static void
curve_free(gpointer pointer)
{
    CompareCurve *curve = pointer;
    g_free(curve->label);
    g_array_free(curve->points, TRUE);
    g_free(curve);
}

/* `text` whole as a finite number. */
static gboolean
number_of(const char *text, double *value)
{
    if (text == NULL || text[0] == '\0')
        return FALSE;
    char *end = NULL;
    errno = 0;
    double v = g_ascii_strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
        return FALSE;
    *value = v;
    return TRUE;
}

/* The index of the first varied key whose values are all numbers, with at
 * least three distinct ones, or -1. */
static gint
numeric_key(const CompareRun *runs, guint runs_len)
{
    for (guint k = 0; k < runs[0].keys_len; k++) {
        g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(double));
        gboolean numeric = TRUE;
        for (guint r = 0; r < runs_len && numeric; r++) {
            double v;
            numeric = number_of(runs[r].values[k], &v);
            if (!numeric)
                break;
            gboolean known = FALSE;
            for (guint i = 0; i < seen->len && !known; i++)
                known = g_array_index(seen, double, i) == v;
            if (!known)
                g_array_append_val(seen, v);
        }
        if (numeric && seen->len >= 3)
            return (gint)k;
    }
    return -1;
}

/* The group label of run `r`: every varied key but `skip`, "k=v,k=v". */
static char *
group_label(const CompareRun *run, guint skip)
{
    GString *label = g_string_new(NULL);
    for (guint k = 0; k < run->keys_len; k++) {
        if (k == skip)
            continue;
        g_string_append_printf(label, "%s%s=%s", label->len > 0 ? "," : "", run->keys[k],
                               run->values[k]);
    }
    if (label->len == 0)
        g_string_append(label, "all runs");
    return g_string_free(label, FALSE);
}

static gint
point_compare(gconstpointer a, gconstpointer b)
{
    const ComparePoint *x = a, *y = b;
    if (x->x != y->x)
        return x->x < y->x ? -1 : 1;
    return (x->run > y->run) - (x->run < y->run);
}

static CompareCurve *
curve_of(GPtrArray *curves, char *label)
{
    for (guint i = 0; i < curves->len; i++) {
        CompareCurve *curve = g_ptr_array_index(curves, i);
        if (strcmp(curve->label, label) == 0) {
            g_free(label);
            return curve;
        }
    }
    CompareCurve *curve = g_new0(CompareCurve, 1);
    curve->label = label;
    curve->points = g_array_new(FALSE, FALSE, sizeof(ComparePoint));
    curve->knee = -1;
    g_ptr_array_add(curves, curve);
    return curve;
}

/* A curve's knee on p99, when its x values are distinct. */
static void
curve_knee(CompareCurve *curve)
{
    guint n = curve->points->len;
    g_autofree double *x = g_new(double, MAX(n, 1u));
    g_autofree double *y = g_new(double, MAX(n, 1u));
    for (guint i = 0; i < n; i++) {
        const ComparePoint *p = &g_array_index(curve->points, ComparePoint, i);
        x[i] = p->x;
        y[i] = p->p99_ms;
        if (i > 0 && x[i] <= x[i - 1])
            return; /* two runs at one load: no single curve */
    }
    curve->knee = compare_knee(x, y, n);
}

Comparison *
compare_new(const CompareRun *runs, guint runs_len)
{
    KSIM_ASSERT(runs != NULL || runs_len == 0);
    if (runs_len < 2 || runs[0].keys_len == 0)
        return NULL;
    for (guint r = 1; r < runs_len; r++)
        KSIM_ASSERT(runs[r].keys_len == runs[0].keys_len);
    Comparison *comparison = g_new0(Comparison, 1);
    comparison->curves = g_ptr_array_new_with_free_func(curve_free);
    gint key = numeric_key(runs, runs_len);
    if (key < 0)
        return comparison;
    comparison->load_key = g_strdup(runs[0].keys[key]);
    for (guint r = 0; r < runs_len; r++) {
        CompareCurve *curve = curve_of(comparison->curves, group_label(&runs[r], (guint)key));
        if (runs[r].p50_ms < 0 || runs[r].p99_ms < 0)
            continue;
        ComparePoint point = {.p50_ms = runs[r].p50_ms, .p99_ms = runs[r].p99_ms, .run = r};
        gboolean numeric = number_of(runs[r].values[key], &point.x);
        KSIM_ASSERT(numeric);
        g_array_append_val(curve->points, point);
    }
    for (guint i = 0; i < comparison->curves->len; i++) {
        CompareCurve *curve = g_ptr_array_index(comparison->curves, i);
        g_array_sort(curve->points, point_compare);
        curve_knee(curve);
    }
    return comparison;
}

void
compare_free(Comparison *comparison)
{
    if (comparison == NULL)
        return;
    g_free(comparison->load_key);
    g_ptr_array_free(comparison->curves, TRUE);
    g_free(comparison);
}

const char *
compare_load_key(const Comparison *comparison)
{
    return comparison->load_key;
}

const GPtrArray *
compare_curves(const Comparison *comparison)
{
    return comparison->curves;
}

gint
compare_knee(const double *x, const double *y, guint n)
{
    if (n < 3)
        return -1;
    for (guint i = 1; i < n; i++)
        KSIM_ASSERT(x[i] > x[i - 1]);
    double x_span = x[n - 1] - x[0];
    double y_span = y[n - 1] - y[0];
    if (!(y_span > 0))
        return -1; /* latency did not grow along the load */
    gint knee = -1;
    double best = COMPARE_KNEE_MIN;
    for (guint i = 1; i + 1 < n; i++) {
        double d = (x[i] - x[0]) / x_span - (y[i] - y[0]) / y_span;
        if (d >= best) {
            best = d;
            knee = (gint)i;
        }
    }
    return knee;
}
