/*
 * sim_marks: the names and descriptions of the coverage marks (sim_marks.h).
 */
#include "sim_marks.h"

#include "sim_assert.h"

#include <string.h>

#define SIM_MARKS_NAME(name, what) #name,
static const char *const NAMES[SIM_MARKS_COUNT] = {SIM_MARKS_TABLE(SIM_MARKS_NAME)};
#undef SIM_MARKS_NAME

#define SIM_MARKS_WHAT(name, what) what,
static const char *const DESCRIPTIONS[SIM_MARKS_COUNT] = {SIM_MARKS_TABLE(SIM_MARKS_WHAT)};
#undef SIM_MARKS_WHAT

const char *
sim_marks_name(SimMarkId id)
{
    KSIM_ASSERT(id < SIM_MARKS_COUNT);
    return NAMES[id];
}

const char *
sim_marks_description(SimMarkId id)
{
    KSIM_ASSERT(id < SIM_MARKS_COUNT);
    return DESCRIPTIONS[id];
}

gboolean
sim_marks_lookup(const char *name, SimMarkId *id)
{
    for (guint i = 0; i < SIM_MARKS_COUNT; i++) {
        if (strcmp(NAMES[i], name) == 0) {
            *id = (SimMarkId)i;
            return TRUE;
        }
    }
    return FALSE;
}
