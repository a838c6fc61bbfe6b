/*
 * KSIM_ASSERT: the project's assertion, on in every build.
 *
 * A failed assertion is a programming error in ksim, never a simulated fault:
 * simulated faults (a dropped message, a torn write, a crashed node) are outcomes
 * that models handle. Unlike assert() and g_assert(), these cannot be compiled
 * out, so a release build checks the same invariants the tests do.
 */
#ifndef SIM_ASSERT_H
#define SIM_ASSERT_H

#include <glib.h>

G_NORETURN void sim_assert_fail(const char *file, int line, const char *func, const char *expr);

#define KSIM_ASSERT(expr)                                                                          \
    do {                                                                                           \
        if (G_UNLIKELY(!(expr)))                                                                   \
            sim_assert_fail(__FILE__, __LINE__, G_STRFUNC, #expr);                                 \
    } while (0)

/* KSIM_PARANOID_ASSERT: for checks too costly for every build (O(n) scans). */
#ifdef KSIM_PARANOID
#define KSIM_PARANOID_ASSERT(expr) KSIM_ASSERT(expr)
#else
#define KSIM_PARANOID_ASSERT(expr)                                                                 \
    do {                                                                                           \
        (void)sizeof(expr);                                                                        \
    } while (0)
#endif

#endif
