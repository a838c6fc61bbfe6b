/*
 * sim_trace: records and fingerprint (see sim_trace.h).
 *
 * Invariant: the fingerprint is XXH3-64 over the concatenation of every record
 * (its fixed 40 bytes, then the note's bytes and a NUL when there is a note),
 * in the order added; `count` is the number of records.
 */
#include "sim_trace.h"

#include "sim_assert.h"

#include <string.h>
#include <xxhash.h>

/* Records are hashed in blocks: one streaming update per block costs far less
 * than one per record, and the digest is the same (XXH3 streaming hashes the
 * concatenation, however it is split). */
#define TRACE_BLOCK_RECORDS 128

struct SimTrace {
    XXH3_state_t *state;
    SimTraceRecord block[TRACE_BLOCK_RECORDS];
    guint block_len;
    guint64 count;
    SimTraceListener listener;
    void *listener_data;
    guint64 mark;            /* the index of the record to remember, or G_MAXUINT64 */
    SimTraceRecord marked;   /* that record, once added */
};

SimTrace *
sim_trace_new(void)
{
    SimTrace *trace = g_new0(SimTrace, 1);
    trace->state = XXH3_createState();
    KSIM_ASSERT(trace->state != NULL);
    XXH3_64bits_reset(trace->state);
    trace->mark = G_MAXUINT64;
    return trace;
}

void
sim_trace_free(SimTrace *trace)
{
    if (trace == NULL)
        return;
    XXH3_freeState(trace->state);
    g_free(trace);
}

void
sim_trace_set_listener(SimTrace *trace, SimTraceListener listener, void *user_data)
{
    trace->listener = listener;
    trace->listener_data = user_data;
}

const char *
sim_trace_kind_name(SimTraceKind kind)
{
    static const char *const names[] = {
        [SIM_TRACE_SEND] = "send",
        [SIM_TRACE_DELIVER] = "deliver",
        [SIM_TRACE_DROP] = "drop",
        [SIM_TRACE_DUPLICATE] = "duplicate",
        [SIM_TRACE_DISCONNECT] = "disconnect",
        [SIM_TRACE_TIMER] = "timer",
        [SIM_TRACE_CRASH] = "crash",
        [SIM_TRACE_POWER_LOSS] = "power_loss",
        [SIM_TRACE_RESTART] = "restart",
        [SIM_TRACE_PAUSE] = "pause",
        [SIM_TRACE_RESUME] = "resume",
        [SIM_TRACE_DISK_WRITE] = "disk_write",
        [SIM_TRACE_DISK_TRUNCATE] = "disk_truncate",
        [SIM_TRACE_DISK_FSYNC] = "disk_fsync",
        [SIM_TRACE_DISK_ERROR] = "disk_error",
        [SIM_TRACE_DISK_LOSS] = "disk_loss",
        [SIM_TRACE_FAULT] = "fault",
        [SIM_TRACE_MODEL] = "model",
    };
    if ((guint)kind < G_N_ELEMENTS(names) && names[kind] != NULL)
        return names[kind];
    return "unknown";
}

static void
flush_block(SimTrace *trace)
{
    if (trace->block_len == 0)
        return;
    XXH3_64bits_update(trace->state, trace->block, sizeof(SimTraceRecord) * trace->block_len);
    trace->block_len = 0;
}

void
sim_trace_add(SimTrace *trace, gint64 time_ns, SimTraceKind kind, guint32 node, guint32 peer,
              guint64 a, guint64 b, const char *note)
{
    G_STATIC_ASSERT(sizeof(SimTraceRecord) == 40);
    SimTraceRecord *record = &trace->block[trace->block_len++];
    *record = (SimTraceRecord){time_ns, kind, node, peer, 0, a, b};
    if (trace->count == trace->mark)
        trace->marked = *record;
    trace->count++;
    if (trace->listener != NULL)
        trace->listener(trace->listener_data, record, note);
    if (note != NULL) {
        flush_block(trace);
        XXH3_64bits_update(trace->state, note, strlen(note) + 1);
    } else if (trace->block_len == TRACE_BLOCK_RECORDS) {
        flush_block(trace);
    }
}

guint64
sim_trace_fingerprint(SimTrace *trace)
{
    flush_block(trace);
    return XXH3_64bits_digest(trace->state);
}

guint64
sim_trace_count(const SimTrace *trace)
{
    return trace->count;
}

void
sim_trace_mark(SimTrace *trace)
{
    trace->mark = trace->count;
}

gboolean
sim_trace_marked(const SimTrace *trace, SimTraceRecord *out, guint64 *index)
{
    if (trace->mark == G_MAXUINT64 || trace->count <= trace->mark)
        return FALSE;
    *out = trace->marked;
    *index = trace->mark;
    return TRUE;
}
