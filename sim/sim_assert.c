/* The failure path of KSIM_ASSERT, and its failure-context hook. */
#include "sim_assert.h"

#include <stdlib.h>

/* The one piece of process-wide mutable state in the engine: an assertion
 * cannot be handed the world it fails in, so the run in progress registers
 * the context here (Redis's serverAssert prints its global server state the
 * same way). It is written only between runs and read only while failing. */
static struct {
    SimAssertContextFn fn;
    void *user_data;
} assert_context;

void
sim_assert_set_context(SimAssertContextFn context_cb, void *user_data)
{
    assert_context.fn = context_cb;
    assert_context.user_data = user_data;
}

void
sim_assert_fail(const char *file, int line, const char *func, const char *expr)
{
    fprintf(stderr, "ksim: assertion failed: %s (%s:%d, %s)\n", expr, file, line, func);
    SimAssertContextFn context = assert_context.fn;
    /* Cleared first, so an assertion failing inside the hook ends here. */
    assert_context.fn = NULL;
    int status = 0;
    if (context != NULL) {
        SimAssertFailure failure = {file, line, func, expr};
        status = context(stderr, &failure, assert_context.user_data);
    }
    fflush(NULL);
    /* _Exit, not exit: the failure happened deep inside a run, and neither
     * atexit handlers nor a leak checker should run over its wreckage. */
    if (status > 0)
        _Exit(status);
    abort();
}
