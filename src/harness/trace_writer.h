/*
 * trace_writer: `--trace` output, in one of two formats, written with
 * json-glib.
 *
 * JSON Lines (TRACE_FORMAT_JSONL, for scripts): one object per engine trace
 * record, in the order the engine made them:
 *   {"t_ns":1000,"kind":"send","node":"broker-1","peer":"broker-2",
 *    "message":"Fetch request","bytes":40}
 * "t_ns" (virtual nanoseconds), "kind" (sim_trace_kind_name) and "node" in
 * every line; "peer" where the record names one; "note" where it carries
 * one; and per kind:
 *   send, deliver         message, bytes      (node sends to / receives from peer)
 *   drop                  message, reason     (node: the receiver; reason:
 *                                              partition, broken, peer_down,
 *                                              fault, closed)
 *   duplicate             message, bytes      (bytes absent: the message could
 *                                              not be copied)
 *   disconnect            reason, connection  (closed or reset; the
 *                                              connection's generation)
 *   timer                 timer
 *   restart               incarnation
 *   resume                held_events
 *   disk_write            file, bytes
 *   disk_truncate         file, size
 *   disk_fsync            file, durable_bytes
 *   disk_error            file, error
 *   disk_loss             file, surviving_bytes
 *   fault                 fault, value        (fault: partition, heal,
 *                                              isolate, lose, delay, ...;
 *                                              value: its count, delay in ns,
 *                                              loss ratio or group count)
 *   model                 a, b                (model-defined; the note says)
 *   crash, power_loss, pause: no more fields.
 * A message type without a name, a reason or a fault kind the writer does
 * not know is written as its number; numbers above 2^63 - 1 as decimal
 * strings (JSON readers keep integers only up to there).
 *
 * Chrome (TRACE_FORMAT_CHROME): the Trace Event Format that chrome://tracing
 * and the Perfetto UI open, {"traceEvents": [...], "displayTimeUnit": "ns"},
 * times in microseconds of virtual time:
 *  - one process per node, named after it, with a thread per role: client,
 *    request handler, replica fetcher, controller, coordinators (group and
 *    transaction), coordination (a broker's ZooKeeper session), server (the
 *    ZooKeeper node), disk, lifecycle, notes;
 *  - each message a slice on its sender's role thread from its send to its
 *    delivery (or its drop, named so), with a flow arrow from the send to
 *    the receiver's role thread at delivery;
 *  - crashes and pauses as "down" and "paused" slices on the lifecycle
 *    thread; faults, disk fsyncs, truncations, errors and losses, and the
 *    models' notes as instant events with their fields;
 *  - a process "partitions" with a counter per partition (leo, hw, isr) from
 *    the run's history: the leader's LEO and HW at each acknowledgement
 *    (at most one sample per partition per millisecond), and at each
 *    election, truncation and ISR change.
 * Timers and disk writes are left out (they would be most of the file and
 * say little). Ids are the engine's, so the same run gives the same file.
 */
#ifndef TRACE_WRITER_H
#define TRACE_WRITER_H

#include <glib.h>
#include <stdio.h>

#include "history.h"
#include "sim_trace.h"

typedef enum {
    TRACE_FORMAT_JSONL = 0,
    TRACE_FORMAT_CHROME,
} TraceFormat;

/* "jsonl", "chrome". */
const char *trace_format_name(TraceFormat format);
/* The format named `name`; FALSE when none is. */
gboolean trace_format_parse(const char *name, TraceFormat *format);

typedef struct TraceWriter TraceWriter;

/* A writer to `out` (not owned, not closed) naming nodes by `node_names`
 * (borrowed: it must outlive the writer). (transfer full) */
TraceWriter *trace_writer_new(FILE *out, const GPtrArray *node_names, TraceFormat format);
void trace_writer_free(TraceWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TraceWriter, trace_writer_free)

/* A SimTraceListener: writes one record (user_data: the writer). */
void trace_writer_record(void *user_data, const SimTraceRecord *record, const char *note);

/* Ends the output: for Chrome, the partitions' counters from `history`
 * (may be NULL) and the closing of the document; nothing for JSON Lines.
 * Call once, after the last record. */
void trace_writer_finish(TraceWriter *writer, const History *history);

/* Asserts that the writer is whole: an output, a generator, not written
 * past its finish. */
void trace_writer_check_invariants(const TraceWriter *writer);

#endif
