/*
 * sim_mem: see sim_mem.h.
 */
#include "sim_mem.h"

#include "sim_assert.h"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* Linux's value, for C libraries whose headers predate it (Linux 5.14). */
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23
#endif

#define ROOM_MIN_ELEMENTS 4096u
/* Pages are provided this many bytes ahead of the writes. */
#define POPULATE_STEP_BYTES ((gsize)4 << 20)

/* Asks for the pages of [data + from, data + to) to be provided now. */
static void
populate(guint8 *data, gsize from, gsize to)
{
#if defined(__linux__)
    gsize page = (gsize)sysconf(_SC_PAGESIZE);
    guintptr start = ((guintptr)data + from + page - 1) & ~(guintptr)(page - 1);
    guintptr end = ((guintptr)data + to) & ~(guintptr)(page - 1);
    /* Old kernels refuse the advice (EINVAL): the pages then fault in as
     * they are written, as without it. */
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
    (void)data;
    (void)from;
    (void)to;
#endif
}

void
sim_block_grow(gpointer *data, gsize element, guint len, SimArrayRoom *room)
{
    KSIM_ASSERT(element > 0);
    if (len > room->capacity) {
        guint doubled = room->capacity <= G_MAXUINT / 2 ? room->capacity * 2 : G_MAXUINT;
        guint capacity = MAX(len, MAX(doubled, ROOM_MIN_ELEMENTS));
        /* realloc moves the used pages of a large block without copying them. */
        *data = g_realloc_n(*data, capacity, element);
        room->capacity = capacity;
    }
    gsize needed = (gsize)len * element;
    if (needed > room->populated) {
        gsize until = MIN(MAX(needed, room->populated + POPULATE_STEP_BYTES),
                          (gsize)room->capacity * element);
        populate((guint8 *)*data, room->populated, until);
        room->populated = until;
    }
}

void
sim_array_reserve(GArray *array, guint capacity)
{
    guint len = array->len;
    if (capacity <= len)
        return;
    g_array_set_size(array, capacity);
    gsize element = g_array_get_element_size(array);
    populate((guint8 *)array->data, (gsize)len * element, (gsize)capacity * element);
    g_array_set_size(array, len);
}
