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
    FILE *jsonl;
    const GPtrArray *node_names;
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
sim_trace_set_jsonl(SimTrace *trace, FILE *out, const GPtrArray *node_names)
{
    trace->jsonl = out;
    trace->node_names = node_names;
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

static const char *
node_name(const SimTrace *trace, guint32 node)
{
    if (trace->node_names != NULL && node < trace->node_names->len)
        return g_ptr_array_index(trace->node_names, node);
    return NULL;
}

static void
write_jsonl(SimTrace *trace, const SimTraceRecord *record, const char *note)
{
    const char *name = node_name(trace, record->node);
    const char *peer = node_name(trace, record->peer);
    fprintf(trace->jsonl, "{\"t_ns\":%" G_GINT64_FORMAT ",\"kind\":\"%s\",\"node\":\"%s\"",
            record->time_ns, sim_trace_kind_name(record->kind), name ? name : "-");
    if (record->peer != G_MAXUINT32)
        fprintf(trace->jsonl, ",\"peer\":\"%s\"", peer ? peer : "-");
    fprintf(trace->jsonl, ",\"a\":%" G_GUINT64_FORMAT ",\"b\":%" G_GUINT64_FORMAT, record->a,
            record->b);
    if (note != NULL) {
        g_autofree char *escaped = g_strescape(note, NULL);
        fprintf(trace->jsonl, ",\"note\":\"%s\"", escaped);
    }
    fputs("}\n", trace->jsonl);
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
    if (trace->jsonl != NULL)
        write_jsonl(trace, record, note);
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
