/*
 * sim_mem: sizing the large arrays a run fills (the history's operations,
 * decoded logs, the checker's per-operation state).
 *
 * Memory first written costs a page fault per page, and a run that records
 * millions of operations writes hundreds of megabytes: on a virtual machine
 * the faults are a large share of a run's time. Arrays sized here ask the
 * kernel for their pages ahead, in one call per few megabytes
 * (MADV_POPULATE_WRITE, where the platform has it), which costs less than
 * faulting them in one by one. It is a hint about memory only: no behaviour
 * or output depends on it, and without the call the pages fault as usual.
 */
#ifndef SIM_MEM_H
#define SIM_MEM_H

#include <glib.h>

/* The room reserved for one growing array; zero-initialise it. */
typedef struct {
    guint capacity;  /* elements reserved */
    gsize populated; /* bytes from the start already provided */
} SimArrayRoom;

/* Room for `len` elements of `element` bytes in the block *data (g_malloc'd,
 * NULL at first; g_free it): reserves room geometrically and provides the
 * pages ahead of the writes, so that room->populated / element elements are
 * usable. For a block that only grows; the caller keeps its length. */
void sim_block_grow(gpointer *data, gsize element, guint len, SimArrayRoom *room);

/* Room for `capacity` elements in all, its pages provided at once; the
 * length does not change. For an array whose final size is known. The
 * array must not clear new elements (g_array_new's clear_ FALSE), or the
 * clearing would fault the pages before they are provided. */
void sim_array_reserve(GArray *array, guint capacity);

#endif
