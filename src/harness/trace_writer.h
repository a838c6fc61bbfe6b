/*
 * trace_writer: `--trace` output, the engine's trace records as JSON Lines,
 * one object per record, written with json-glib:
 *   {"t_ns":1000,"kind":"send","node":"broker-1","peer":"broker-2","a":200,"b":40}
 * with "peer" only for records that name one and "note" only for records
 * that carry one. Node names come from the world; an id without a name is
 * "-". `a` and `b` are numbers, or decimal strings above 2^63 - 1 (JSON
 * readers keep integers only up to there).
 */
#ifndef TRACE_WRITER_H
#define TRACE_WRITER_H

#include <glib.h>
#include <stdio.h>

#include "sim_trace.h"

typedef struct TraceWriter TraceWriter;

/* A writer to `out` (not owned, not closed) naming nodes by `node_names`
 * (borrowed: it must outlive the writer). (transfer full) */
TraceWriter *trace_writer_new(FILE *out, const GPtrArray *node_names);
void trace_writer_free(TraceWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceWriter, trace_writer_free)

/* A SimTraceListener: writes one record's line (user_data: the writer). */
void trace_writer_record(void *user_data, const SimTraceRecord *record, const char *note);

/* Asserts that the writer is whole: an output, a generator. */
void trace_writer_check_invariants(const TraceWriter *writer);

#endif
