/*
 * assignor_internal: the assignor's input as its builder (assignor_input.c)
 * keeps it and the strategies read it (assignor.c, assignor_cooperative.c).
 * Only those include it.
 */
#ifndef ASSIGNOR_INTERNAL_H
#define ASSIGNOR_INTERNAL_H

#include <glib.h>

#include "assignor.h"

typedef struct {
    char *name;
    guint32 partitions;
} InputTopic;

typedef struct {
    char *topic;
    guint32 partition;
} InputOwned;

typedef struct {
    char *id;
    GPtrArray *topics; /* char *, as given */
    GArray *owned;     /* InputOwned, in the order given */
    gint32 generation;
} InputMember;

struct AssignorInput {
    GPtrArray *topics; /* InputTopic *, owned, in declaration order */
    GHashTable *topic_by_name;
    GPtrArray *members; /* InputMember *, owned, in declaration order */
    GHashTable *member_by_id;
};

/* A member's reported owned partitions, in the order given (assignor_input.c). */
guint assignor_input_owned_count(const AssignorInput *input, const char *member_id);
/* The topic of the member's `i`th owned partition, its number in `partition`. */
const char *assignor_input_owned_get(const AssignorInput *input, const char *member_id, guint i,
                                     guint32 *partition);

#endif
