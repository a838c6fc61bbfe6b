/*
 * diagram_trace: the part of a run's engine trace (sim_trace.h) that its
 * space-time diagrams (diagram.h) draw, kept while the run goes, in bounded
 * memory.
 *
 * A run's full trace is not kept (a long run makes hundreds of millions of
 * records; `--trace` streams them to a file). A diagram needs only:
 *  - the lifecycle and fault records (crash, power loss, restart, pause,
 *    resume, network and disk faults), to draw fault bands: all of them are
 *    kept, as they are few (at most DIAGRAM_TRACE_EVENTS_MAX);
 *  - the message records (send, deliver, drop, duplicate) and the models'
 *    notes near the moments an explanation names. Those moments are the
 *    run's cluster events: every event of the watched history but the
 *    acknowledgements (elections, truncations, ISR changes, crashes,
 *    faults, session expiries, ...), and every lifecycle or fault record.
 *    Around each, the messages from DIAGRAM_TRACE_BEFORE_NS before it to
 *    DIAGRAM_TRACE_AFTER_NS after it are kept. The records before a moment
 *    come from a ring of the latest DIAGRAM_TRACE_RING_MAX message records,
 *    so an acknowledgement shortly before a crash is in the crash's window;
 *  - and, when asked (diagram_trace_keep_between), every message record of
 *    one window of time chosen before the run (`ksim diagram`).
 * Timers and disk operations are never kept. At most `records_max` message
 * and note records are kept; past that no window opens any more, and
 * diagram_trace_spent_ns says from when.
 *
 * A window is a span of time of which every message record was kept; the
 * records of a window are consecutive in diagram_trace_records, in trace
 * order. Messages are paired send to delivery within one window only
 * (trace_messages.h), as the records between two windows are not kept.
 *
 * The trace is a SimTraceListener: it only observes, and never changes a
 * run's fingerprint.
 */
#ifndef DIAGRAM_TRACE_H
#define DIAGRAM_TRACE_H

#include <glib.h>

#include "history.h"
#include "sim_trace.h"

#define DIAGRAM_TRACE_BEFORE_NS G_GINT64_CONSTANT(1000000000) /* 1 s */
#define DIAGRAM_TRACE_AFTER_NS G_GINT64_CONSTANT(250000000)   /* 250 ms */
#define DIAGRAM_TRACE_RING_MAX 32768
/* The message and note records a run keeps for its report's diagrams by
 * default: 40 bytes each, 10 MiB. */
#define DIAGRAM_TRACE_RECORDS_MAX (1u << 18)
#define DIAGRAM_TRACE_EVENTS_MAX (1u << 16)

/* A kept trace record: the engine's fields, and its note if it had one. */
typedef struct {
    gint64 time_ns;
    guint32 kind; /* SimTraceKind */
    guint32 node;
    guint32 peer;
    guint32 note; /* 1 + its index in the trace's notes; 0: none */
    guint64 a;
    guint64 b;
} DiagramRecord;

/* A span of time whose every message and note record was kept: records
 * first .. first + len - 1 of diagram_trace_records. */
typedef struct {
    gint64 from_ns;
    gint64 to_ns;
    guint first;
    guint len;
} DiagramWindow;

typedef struct DiagramTrace DiagramTrace;

/* A trace that keeps at most `records_max` message and note records
 * (DIAGRAM_TRACE_RECORDS_MAX, say), naming nodes by `node_names` (borrowed
 * until diagram_trace_finish, which copies them: a world's names grow as
 * nodes are added) and opening windows at the events of `history`
 * (borrowed until diagram_trace_finish; NULL: none). (transfer full) */
DiagramTrace *diagram_trace_new(const GPtrArray *node_names, const History *history,
                                guint records_max);
void diagram_trace_free(DiagramTrace *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DiagramTrace, diagram_trace_free)

/* Also keeps every message record from DIAGRAM_TRACE_BEFORE_NS before
 * `from_ns` (so that messages in flight at `from_ns` pair) to `to_ns`.
 * Call before the first record; at most once. */
void diagram_trace_keep_between(DiagramTrace *trace, gint64 from_ns, gint64 to_ns);

/* A SimTraceListener (user_data: the DiagramTrace). */
void diagram_trace_record(void *user_data, const SimTraceRecord *record, const char *note);

/* Ends the recording at `end_ns` (the run's end): closes the open window,
 * copies the node names, forgets the history and frees the ring. Call once,
 * after the last record. */
void diagram_trace_finish(DiagramTrace *trace, gint64 end_ns);

/* The nodes, by node id (after diagram_trace_finish: the copy). */
guint diagram_trace_node_count(const DiagramTrace *trace);
const char *diagram_trace_node_name(const DiagramTrace *trace, guint32 node);
/* The id of the node named `name`; FALSE when there is none. */
gboolean diagram_trace_node_find(const DiagramTrace *trace, const char *name, guint32 *node);

/* The kept message and note records (DiagramRecord), window by window, in
 * trace order. (transfer none) */
const GArray *diagram_trace_records(const DiagramTrace *trace);
/* The windows (DiagramWindow), in time order, disjoint. (transfer none) */
const GArray *diagram_trace_windows(const DiagramTrace *trace);
/* Every lifecycle and fault record (DiagramRecord), in trace order (up to
 * DIAGRAM_TRACE_EVENTS_MAX). (transfer none) */
const GArray *diagram_trace_events(const DiagramTrace *trace);
/* The note of `record`, or NULL. (transfer none) */
const char *diagram_trace_note(const DiagramTrace *trace, const DiagramRecord *record);
/* When the budget of records ran out (no window kept after it), or -1. */
gint64 diagram_trace_spent_ns(const DiagramTrace *trace);
/* The bytes the kept records and notes take. */
gsize diagram_trace_bytes(const DiagramTrace *trace);

/* TRUE when some window covers all of [from_ns, to_ns]. */
gboolean diagram_trace_covers(const DiagramTrace *trace, gint64 from_ns, gint64 to_ns);

/* Checks the numbered invariants of diagram_trace.c. */
void diagram_trace_check_invariants(const DiagramTrace *trace);

#endif
