/*
 * sim_trace: the record of every engine action in a run, and its fingerprint.
 *
 * Each action (send, deliver, drop, timer, crash, restart, pause, disk
 * operation, fault, and model notes) is a compact fixed-size record hashed
 * into a running XXH3-64 fingerprint. Same scenario + seed + binary gives the
 * same fingerprint; a differing fingerprint means the runs diverged. The trace
 * can also be written in full as JSON Lines, one record per line.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <glib.h>

typedef struct SimTrace SimTrace;

typedef enum {
    SIM_TRACE_SEND = 1,       /* node -> peer, a = message type, b = size */
    SIM_TRACE_DELIVER,        /* peer -> node, a = message type, b = size */
    SIM_TRACE_DROP,           /* a message dropped; a = type, b = SimDropReason */
    SIM_TRACE_DUPLICATE,      /* a message duplicated by a fault */
    SIM_TRACE_DISCONNECT,     /* node learns its connection to peer failed; a = reason */
    SIM_TRACE_TIMER,          /* a timer fired on node */
    SIM_TRACE_CRASH,          /* node process crashed */
    SIM_TRACE_POWER_LOSS,     /* node lost power */
    SIM_TRACE_RESTART,        /* node restarted */
    SIM_TRACE_PAUSE,          /* node paused */
    SIM_TRACE_RESUME,         /* node resumed; a = held events */
    SIM_TRACE_DISK_WRITE,     /* a = file id, b = bytes */
    SIM_TRACE_DISK_TRUNCATE,  /* a = file id, b = new size */
    SIM_TRACE_DISK_FSYNC,     /* a = file id, b = durable size */
    SIM_TRACE_DISK_ERROR,     /* a = file id, b = error */
    SIM_TRACE_DISK_LOSS,      /* power loss: a = file id, b = surviving size */
    SIM_TRACE_FAULT,          /* a network or disk fault; a = fault kind */
    SIM_TRACE_MODEL,          /* a model's note; a, b model-defined */
} SimTraceKind;

typedef struct {
    gint64 time_ns;
    guint32 kind;
    guint32 node;
    guint32 peer;
    guint32 pad;
    guint64 a;
    guint64 b;
} SimTraceRecord;

SimTrace *sim_trace_new(void);
void sim_trace_free(SimTrace *trace);

/* Hears every record as it is added, with its note (may be NULL). The engine
 * writes no file format: the harness's trace writer (trace_writer.h) turns
 * records into JSON Lines with json-glib. */
typedef void (*SimTraceListener)(void *user_data, const SimTraceRecord *record, const char *note);
/* Sets the listener (NULL: none); `user_data` must outlive the trace's use. */
void sim_trace_set_listener(SimTrace *trace, SimTraceListener listener, void *user_data);

/* Appends a record; `note` (may be NULL) goes to JSON Lines and into the
 * fingerprint. */
void sim_trace_add(SimTrace *trace, gint64 time_ns, SimTraceKind kind, guint32 node, guint32 peer,
                   guint64 a, guint64 b, const char *note);

/* The fingerprint of all records so far. */
guint64 sim_trace_fingerprint(SimTrace *trace);
guint64 sim_trace_count(const SimTrace *trace);

/* Remembers the next record added. sim_world marks the trace before each
 * event, so a failure report can name the event by its first record, as the
 * JSON Lines trace shows it. Neither call touches the fingerprint. */
void sim_trace_mark(SimTrace *trace);
/* The first record added since the last mark, and its index (0 for the
 * trace's first record: line index + 1 of the JSON Lines); FALSE when none
 * was added since. */
gboolean sim_trace_marked(const SimTrace *trace, SimTraceRecord *out, guint64 *index);

const char *sim_trace_kind_name(SimTraceKind kind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(SimTrace, sim_trace_free)

#endif
