/* The failure path of KSIM_ASSERT. */
#include "sim_assert.h"

#include <stdio.h>
#include <stdlib.h>

void
sim_assert_fail(const char *file, int line, const char *func, const char *expr)
{
    fprintf(stderr, "ksim: assertion failed: %s (%s:%d, %s)\n", expr, file, line, func);
    fflush(stderr);
    abort();
}
