/*
 * sim_mem: see sim_mem.h.
 *
 * On Linux a block is a private anonymous mapping aligned to 2 MiB and
 * advised for huge pages; it grows by mapping a larger one and moving the
 * pages over with mremap (no copy, and aligned to aligned keeps huge pages
 * whole). Elsewhere a block is g_realloc'd.
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
/* A huge page on x86-64 and arm64 with 4 KiB base pages. */
#define HUGE_BYTES ((gsize)2 << 20)

static gsize
round_up_huge(gsize bytes)
{
    return (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
}

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

/* Asks for huge pages in the 2 MiB-aligned part of [data + from, data + to). */
static void
advise_huge(guint8 *data, gsize from, gsize to)
{
#if defined(__linux__)
    guintptr start = ((guintptr)data + from + HUGE_BYTES - 1) & ~(guintptr)(HUGE_BYTES - 1);
    guintptr end = ((guintptr)data + to) & ~(guintptr)(HUGE_BYTES - 1);
    /* A kernel without transparent huge pages refuses (EINVAL): base pages. */
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)data;
    (void)from;
    (void)to;
#endif
}

/* The bytes a block of `capacity` elements spans. */
static gsize
block_bytes(gsize element, guint capacity)
{
#if defined(__linux__)
    return round_up_huge((gsize)capacity * element);
#else
    return (gsize)capacity * element;
#endif
}

/* Moves the block of `old_bytes` at `data` (NULL: none) into a new one of
 * `bytes`; returns it. */
static gpointer
block_move(gpointer data, gsize old_bytes, gsize bytes)
{
#if defined(__linux__)
    /* Over-map by one huge page, then trim to an aligned start. */
    guint8 *raw = mmap(NULL, bytes + HUGE_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        g_error("sim_mem: cannot map %" G_GSIZE_FORMAT " bytes", bytes);
    guint8 *start = (guint8 *)round_up_huge((gsize)raw);
    gsize head = (gsize)(start - raw);
    if (head > 0)
        munmap(raw, head);
    munmap(start + bytes, HUGE_BYTES - head);
    advise_huge(start, 0, bytes);
    if (data != NULL && old_bytes > 0) {
        /* Replaces the first old_bytes of the new mapping with the old pages. */
        void *moved = mremap(data, old_bytes, old_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, start);
        if (moved == MAP_FAILED)
            g_error("sim_mem: cannot move a block of %" G_GSIZE_FORMAT " bytes", old_bytes);
        KSIM_ASSERT(moved == (void *)start);
    }
    return start;
#else
    (void)old_bytes;
    return g_realloc(data, bytes);
#endif
}

void
sim_block_grow(gpointer *data, gsize element, guint len, SimArrayRoom *room)
{
    KSIM_ASSERT(element > 0);
    if (len > room->capacity) {
        guint doubled = room->capacity <= G_MAXUINT / 2 ? room->capacity * 2 : G_MAXUINT;
        guint capacity = MAX(len, MAX(doubled, ROOM_MIN_ELEMENTS));
        gsize bytes = block_bytes(element, capacity);
        *data = block_move(*data, block_bytes(element, room->capacity), bytes);
        /* The rounding up is room too. */
        room->capacity = (guint)MIN(bytes / element, (gsize)G_MAXUINT);
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
sim_block_free(gpointer data, gsize element, const SimArrayRoom *room)
{
    if (data == NULL)
        return;
#if defined(__linux__)
    munmap(data, block_bytes(element, room->capacity));
#else
    (void)element;
    (void)room;
    g_free(data);
#endif
}

void
sim_array_reserve(GArray *array, guint capacity)
{
    guint len = array->len;
    if (capacity <= len)
        return;
    g_array_set_size(array, capacity);
    gsize element = g_array_get_element_size(array);
    advise_huge((guint8 *)array->data, (gsize)len * element, (gsize)capacity * element);
    populate((guint8 *)array->data, (gsize)len * element, (gsize)capacity * element);
    g_array_set_size(array, len);
}
