/*
 * KSIM_ASSERT: the project's assertion, on in every build.
 *
 * A failed assertion is a programming error in ksim, never a simulated fault:
 * simulated faults (a dropped message, a torn write, a crashed node) are outcomes
 * that models handle. Unlike assert() and g_assert(), these cannot be compiled
 * out, so a release build checks the same invariants the tests do.
 *
 * A failure prints the failed expression with its file, line and function to
 * stderr, then asks the failure-context hook, when one is installed, to say
 * what the process was doing (which run, seed and event, and how to replay
 * it); then the process ends with abort(), or with the hook's exit status.
 */
#ifndef SIM_ASSERT_H
#define SIM_ASSERT_H

#include <glib.h>
#include <stdio.h>

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

/* The assertion that failed, as KSIM_ASSERT reports it. */
typedef struct {
    const char *file;
    int line;
    const char *func;
    const char *expr;
} SimAssertFailure;

/* A failure-context hook: writes to `out` what the process was doing when
 * `failure` happened, and returns the exit status to end with, or 0 to
 * abort() as without a hook. It runs once: an assertion failing inside it
 * ends the process without calling it again. */
typedef int (*SimAssertContextFn)(FILE *out, const SimAssertFailure *failure, void *user_data);

/* Installs the failure-context hook; NULL removes it. The hook is the
 * process's, not a world's: an assertion has no world at hand. The one
 * simulated run in progress installs it and removes it when it ends (the
 * command line runs one world at a time per process); nothing a model can
 * see depends on it. */
void sim_assert_set_context(SimAssertContextFn context_cb, void *user_data);

#endif
