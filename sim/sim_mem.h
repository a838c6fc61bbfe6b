/*
 * sim_mem: memory for the large arrays a run fills (the history's operations,
 * decoded logs, the checker's per-operation state).
 *
 * Memory first written costs a page fault per page, and a run that records
 * millions of operations writes hundreds of megabytes: on a virtual machine
 * the faults are a large share of a run's time. Two hints cut their cost:
 *
 *  - the pages are asked for ahead of the writes, in one call per few
 *    megabytes (MADV_POPULATE_WRITE), which costs less than faulting them in
 *    one by one;
 *  - the memory is advised to use huge pages (MADV_HUGEPAGE), so one fault
 *    provides 2 MiB instead of 4 KiB where the kernel has transparent huge
 *    pages enabled for advised memory (Linux's default "madvise" setting).
 *
 * They are hints about memory only: no behaviour or output depends on them,
 * and where the platform lacks them the pages fault as usual.
 */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <glib.h>

/* The room reserved for one growing block; zero-initialise it. */
typedef struct {
    guint capacity;  /* elements reserved */
    gsize populated; /* bytes from the start already provided */
} SimArrayRoom;

/* Room for `len` elements of `element` bytes in the block *data (NULL at
 * first): reserves room geometrically and provides the pages ahead of the
 * writes, so that room->populated / element elements are usable. Growing
 * keeps the contents and may move the block. For a block that only grows;
 * the caller keeps its length. Free it with sim_block_free. */
void sim_block_grow(gpointer *data, gsize element, guint len, SimArrayRoom *room);
/* Frees a block sim_block_grow made (NULL: nothing). */
void sim_block_free(gpointer data, gsize element, const SimArrayRoom *room);

/* Room for `capacity` elements in all, its pages provided at once; the
 * length does not change. For an array whose final size is known. The
 * array must not clear new elements (g_array_new's clear_ FALSE), or the
 * clearing would fault the pages before they are provided. */
void sim_array_reserve(GArray *array, guint capacity);

#endif
