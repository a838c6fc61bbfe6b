/*
 * diagram_trace: the records diagrams draw, kept during a run (see
 * diagram_trace.h).
 *
 * States: CLOSED (message records go to the ring) and OPEN (they go to the
 * last window, up to `open_until_ns`). A moment (a watched history event,
 * a lifecycle or fault record, the start of the window asked for) opens a
 * window, or extends the open one (window_open); a message record past
 * `open_until_ns` closes it (window_close). Once the budget is spent
 * (`spent_ns` >= 0) the trace stays CLOSED and keeps only lifecycle records.
 *
 * Invariants (diagram_trace_check_invariants):
 *  1. Windows are in time order and disjoint; each has from <= to, and
 *     their records tile `records` in order: window k's first is window
 *     k-1's first + len.
 *  2. Every record of a window lies within the window's span, and records
 *     are in time order.
 *  3. Every ring record is later than the last window's end, and the ring
 *     holds at most DIAGRAM_TRACE_RING_MAX records; `ring_covers_from_ns`
 *     is no later than its oldest record.
 *  4. `records` holds at most `records_max` records and `events` at most
 *     DIAGRAM_TRACE_EVENTS_MAX.
 *  5. A record's note index is 0 or names one of `notes`.
 */
#include "diagram_trace.h"

#include "sim_assert.h"

#include <string.h>

/* A ring entry: a message or note record not (yet) in a window. */
typedef struct {
    DiagramRecord record;
    char *note; /* owned; NULL: none */
} RingEntry;

struct DiagramTrace {
    const GPtrArray *node_names; /* borrowed until finish */
    GPtrArray *names_owned;      /* the copy finish makes */
    const History *history;      /* borrowed until finish; NULL: no moments from it */
    guint events_seen;           /* history events looked at */
    guint records_max;
    GArray *records; /* DiagramRecord in windows */
    GArray *windows; /* DiagramWindow */
    GArray *events;  /* DiagramRecord: lifecycle and faults */
    GPtrArray *notes; /* strings, owned */
    gsize notes_bytes;
    /* The ring: the latest message and note records out of any window. */
    RingEntry *ring;
    guint ring_head; /* index of the oldest */
    guint ring_len;
    gint64 ring_covers_from_ns; /* every record since is in the ring or a window */
    gboolean open;
    gint64 open_until_ns;
    gint64 spent_ns; /* -1: not spent */
    gint64 keep_from_ns; /* the window asked for, or -1 */
    gint64 keep_to_ns;
    gboolean keep_opened;
    gboolean finished;
};

DiagramTrace *
diagram_trace_new(const GPtrArray *node_names, const History *history, guint records_max)
{
    KSIM_ASSERT(records_max > 0);
    DiagramTrace *trace = g_new0(DiagramTrace, 1);
    trace->node_names = node_names;
    trace->history = history;
    trace->records_max = records_max;
    trace->records = g_array_new(FALSE, FALSE, sizeof(DiagramRecord));
    trace->windows = g_array_new(FALSE, FALSE, sizeof(DiagramWindow));
    trace->events = g_array_new(FALSE, FALSE, sizeof(DiagramRecord));
    trace->notes = g_ptr_array_new_with_free_func(g_free);
    trace->ring = g_new0(RingEntry, DIAGRAM_TRACE_RING_MAX);
    trace->ring_covers_from_ns = G_MININT64;
    trace->spent_ns = -1;
    trace->keep_from_ns = -1;
    return trace;
}

static void
ring_clear(DiagramTrace *trace)
{
    for (guint i = 0; i < trace->ring_len; i++)
        g_free(trace->ring[(trace->ring_head + i) % DIAGRAM_TRACE_RING_MAX].note);
    trace->ring_head = 0;
    trace->ring_len = 0;
}

void
diagram_trace_free(DiagramTrace *trace)
{
    if (trace == NULL)
        return;
    if (trace->ring != NULL)
        ring_clear(trace);
    g_free(trace->ring);
    g_array_free(trace->records, TRUE);
    g_array_free(trace->windows, TRUE);
    g_array_free(trace->events, TRUE);
    g_ptr_array_free(trace->notes, TRUE);
    if (trace->names_owned != NULL)
        g_ptr_array_free(trace->names_owned, TRUE);
    g_free(trace);
}

void
diagram_trace_keep_between(DiagramTrace *trace, gint64 from_ns, gint64 to_ns)
{
    KSIM_ASSERT(from_ns >= 0);
    KSIM_ASSERT(from_ns <= to_ns);
    KSIM_ASSERT(trace->keep_from_ns < 0);
    trace->keep_from_ns = from_ns;
    trace->keep_to_ns = to_ns;
}

/* ---- keeping ---- */

static guint32
note_add(DiagramTrace *trace, char *note)
{
    if (note == NULL)
        return 0;
    trace->notes_bytes += strlen(note) + 1;
    g_ptr_array_add(trace->notes, note);
    return trace->notes->len;
}

static DiagramWindow *
last_window(DiagramTrace *trace)
{
    KSIM_ASSERT(trace->windows->len > 0);
    return &g_array_index(trace->windows, DiagramWindow, trace->windows->len - 1);
}

/* The budget is spent at `at_ns`: the open window ends just before, and
 * loses the records it has of that very moment (it cannot have them all). */
static void
spend(DiagramTrace *trace, gint64 at_ns)
{
    trace->spent_ns = at_ns;
    if (trace->open) {
        DiagramWindow *w = last_window(trace);
        while (w->len > 0) {
            const DiagramRecord *r =
                &g_array_index(trace->records, DiagramRecord, trace->records->len - 1);
            if (r->time_ns < at_ns)
                break;
            if (r->note != 0) {
                KSIM_ASSERT(r->note == trace->notes->len);
                trace->notes_bytes -= strlen(g_ptr_array_index(trace->notes, r->note - 1)) + 1;
                g_ptr_array_set_size(trace->notes, trace->notes->len - 1);
            }
            g_array_set_size(trace->records, trace->records->len - 1);
            w->len--;
        }
        if (at_ns <= w->from_ns)
            g_array_set_size(trace->windows, trace->windows->len - 1); /* nothing of it kept */
        else
            w->to_ns = at_ns - 1;
        trace->open = FALSE;
    }
    ring_clear(trace);
}

/* Appends a record to the open window; FALSE (and the budget spent) when
 * there is no room. Takes `note`. */
static gboolean
window_append(DiagramTrace *trace, DiagramRecord record, char *note)
{
    if (trace->records->len >= trace->records_max) {
        g_free(note);
        spend(trace, record.time_ns);
        return FALSE;
    }
    record.note = note_add(trace, note);
    g_array_append_val(trace->records, record);
    last_window(trace)->len++;
    return TRUE;
}

static void
window_close(DiagramTrace *trace)
{
    KSIM_ASSERT(trace->open);
    trace->open = FALSE;
    last_window(trace)->to_ns = trace->open_until_ns;
    trace->ring_covers_from_ns = trace->open_until_ns + 1;
}

/* Opens a window from `from_ns` (or as early as the ring covers) to
 * `until_ns`, or extends the open one to `until_ns`. The ring's records
 * in it move into the window. */
static void
window_open(DiagramTrace *trace, gint64 from_ns, gint64 until_ns)
{
    if (trace->spent_ns >= 0)
        return;
    if (trace->open) {
        trace->open_until_ns = MAX(trace->open_until_ns, until_ns);
        last_window(trace)->to_ns = trace->open_until_ns;
        return;
    }
    from_ns = MAX(MAX(from_ns, 0), trace->ring_covers_from_ns);
    /* Right after the last window, with nothing lost in between: the same
     * window goes on (so messages across the seam still pair). */
    if (trace->windows->len > 0 && last_window(trace)->to_ns + 1 == trace->ring_covers_from_ns &&
        from_ns == trace->ring_covers_from_ns) {
        DiagramWindow *w = last_window(trace);
        w->to_ns = MAX(w->to_ns, until_ns);
    } else {
        DiagramWindow w = {from_ns, MAX(from_ns, until_ns), trace->records->len, 0};
        g_array_append_val(trace->windows, w);
    }
    trace->open = TRUE;
    trace->open_until_ns = last_window(trace)->to_ns;
    for (guint i = 0; i < trace->ring_len; i++) {
        RingEntry *entry = &trace->ring[(trace->ring_head + i) % DIAGRAM_TRACE_RING_MAX];
        char *note = g_steal_pointer(&entry->note);
        if (entry->record.time_ns < from_ns) {
            g_free(note);
            continue;
        }
        if (!window_append(trace, entry->record, note))
            break; /* spent: the ring is cleared */
    }
    if (trace->spent_ns < 0) {
        trace->ring_head = 0;
        trace->ring_len = 0;
    }
}

static void
ring_push(DiagramTrace *trace, DiagramRecord record, const char *note)
{
    if (trace->ring_len == DIAGRAM_TRACE_RING_MAX) {
        RingEntry *oldest = &trace->ring[trace->ring_head];
        trace->ring_covers_from_ns = oldest->record.time_ns + 1;
        g_clear_pointer(&oldest->note, g_free);
        trace->ring_head = (trace->ring_head + 1) % DIAGRAM_TRACE_RING_MAX;
        trace->ring_len--;
    }
    RingEntry *entry = &trace->ring[(trace->ring_head + trace->ring_len) % DIAGRAM_TRACE_RING_MAX];
    entry->record = record;
    entry->note = g_strdup(note);
    trace->ring_len++;
}

/* A moment to draw around: a window from before it to after it. */
static void
moment(DiagramTrace *trace, gint64 at_ns)
{
    window_open(trace, at_ns - DIAGRAM_TRACE_BEFORE_NS, at_ns + DIAGRAM_TRACE_AFTER_NS);
}

/* The watched history's new events, each but acknowledgements a moment. */
static void
watch_history(DiagramTrace *trace)
{
    const GArray *events = history_events(trace->history);
    for (; trace->events_seen < events->len; trace->events_seen++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, trace->events_seen);
        if (e->kind != HISTORY_EVENT_ACK && e->kind != HISTORY_EVENT_HW_CHANGED)
            moment(trace, e->time_ns);
    }
}

static void
keep_message(DiagramTrace *trace, DiagramRecord record, const char *note)
{
    if (trace->open && record.time_ns > trace->open_until_ns)
        window_close(trace);
    if (trace->open) {
        window_append(trace, record, g_strdup(note));
        return;
    }
    if (trace->spent_ns < 0)
        ring_push(trace, record, note);
}

void
diagram_trace_record(void *user_data, const SimTraceRecord *record, const char *note)
{
    DiagramTrace *trace = user_data;
    KSIM_ASSERT(!trace->finished);
    /* Timers and disk operations, most of a trace, are never kept; the
     * history's new events are looked at on the next record kept. */
    if (record->kind == SIM_TRACE_TIMER || record->kind == SIM_TRACE_DISK_WRITE ||
        record->kind == SIM_TRACE_DISK_FSYNC)
        return;
    if (trace->history != NULL)
        watch_history(trace);
    if (trace->keep_from_ns >= 0 && !trace->keep_opened &&
        record->time_ns >= trace->keep_from_ns - DIAGRAM_TRACE_BEFORE_NS) {
        trace->keep_opened = TRUE;
        window_open(trace, trace->keep_from_ns - DIAGRAM_TRACE_BEFORE_NS, trace->keep_to_ns);
    }
    DiagramRecord kept = {record->time_ns, record->kind, record->node, record->peer, 0,
                          record->a,       record->b};
    switch ((SimTraceKind)record->kind) {
    case SIM_TRACE_CRASH:
    case SIM_TRACE_POWER_LOSS:
    case SIM_TRACE_RESTART:
    case SIM_TRACE_PAUSE:
    case SIM_TRACE_RESUME:
    case SIM_TRACE_FAULT:
        if (trace->events->len < DIAGRAM_TRACE_EVENTS_MAX)
            g_array_append_val(trace->events, kept);
        moment(trace, record->time_ns);
        return;
    case SIM_TRACE_SEND:
    case SIM_TRACE_DELIVER:
    case SIM_TRACE_DROP:
    case SIM_TRACE_DUPLICATE:
        keep_message(trace, kept, NULL);
        return;
    case SIM_TRACE_MODEL:
        keep_message(trace, kept, note);
        return;
    default:
        return;
    }
}

void
diagram_trace_finish(DiagramTrace *trace, gint64 end_ns)
{
    KSIM_ASSERT(!trace->finished);
    if (trace->history != NULL)
        watch_history(trace);
    trace->finished = TRUE;
    if (trace->open) {
        trace->open = FALSE;
        DiagramWindow *w = last_window(trace);
        w->to_ns = MAX(w->from_ns, MIN(w->to_ns, end_ns));
    }
    trace->names_owned = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; trace->node_names != NULL && i < trace->node_names->len; i++)
        g_ptr_array_add(trace->names_owned, g_strdup(g_ptr_array_index(trace->node_names, i)));
    trace->node_names = NULL;
    trace->history = NULL;
    ring_clear(trace);
    g_clear_pointer(&trace->ring, g_free);
}

/* ---- reading ---- */

static const GPtrArray *
names(const DiagramTrace *trace)
{
    return trace->names_owned != NULL ? trace->names_owned : trace->node_names;
}

guint
diagram_trace_node_count(const DiagramTrace *trace)
{
    return names(trace) != NULL ? names(trace)->len : 0;
}

const char *
diagram_trace_node_name(const DiagramTrace *trace, guint32 node)
{
    if (node < diagram_trace_node_count(trace))
        return g_ptr_array_index(names(trace), node);
    return "-";
}

gboolean
diagram_trace_node_find(const DiagramTrace *trace, const char *name, guint32 *node)
{
    for (guint i = 0; i < diagram_trace_node_count(trace); i++) {
        if (strcmp(g_ptr_array_index(names(trace), i), name) == 0) {
            *node = i;
            return TRUE;
        }
    }
    return FALSE;
}

const GArray *
diagram_trace_records(const DiagramTrace *trace)
{
    return trace->records;
}

const GArray *
diagram_trace_windows(const DiagramTrace *trace)
{
    return trace->windows;
}

const GArray *
diagram_trace_events(const DiagramTrace *trace)
{
    return trace->events;
}

const char *
diagram_trace_note(const DiagramTrace *trace, const DiagramRecord *record)
{
    if (record->note == 0 || record->note > trace->notes->len)
        return NULL;
    return g_ptr_array_index(trace->notes, record->note - 1);
}

gint64
diagram_trace_spent_ns(const DiagramTrace *trace)
{
    return trace->spent_ns;
}

gsize
diagram_trace_bytes(const DiagramTrace *trace)
{
    return (trace->records->len + trace->events->len) * sizeof(DiagramRecord) +
           trace->windows->len * sizeof(DiagramWindow) + trace->notes_bytes;
}

gboolean
diagram_trace_covers(const DiagramTrace *trace, gint64 from_ns, gint64 to_ns)
{
    for (guint i = 0; i < trace->windows->len; i++) {
        const DiagramWindow *w = &g_array_index(trace->windows, DiagramWindow, i);
        if (w->from_ns <= from_ns && to_ns <= w->to_ns)
            return TRUE;
    }
    return FALSE;
}

void
diagram_trace_check_invariants(const DiagramTrace *trace)
{
    guint first = 0;
    gint64 previous_end = G_MININT64;
    for (guint i = 0; i < trace->windows->len; i++) {
        const DiagramWindow *w = &g_array_index(trace->windows, DiagramWindow, i);
        KSIM_ASSERT(w->from_ns <= w->to_ns);
        KSIM_ASSERT(i == 0 || w->from_ns > previous_end);
        KSIM_ASSERT(w->first == first);
        gint64 last_ns = G_MININT64;
        for (guint k = w->first; k < w->first + w->len; k++) {
            const DiagramRecord *r = &g_array_index(trace->records, DiagramRecord, k);
            KSIM_ASSERT(r->time_ns >= w->from_ns);
            KSIM_ASSERT(r->time_ns <= w->to_ns);
            KSIM_ASSERT(r->time_ns >= last_ns);
            KSIM_ASSERT(r->note <= trace->notes->len);
            last_ns = r->time_ns;
        }
        first += w->len;
        previous_end = w->to_ns;
    }
    KSIM_ASSERT(first == trace->records->len);
    KSIM_ASSERT(trace->records->len <= trace->records_max);
    KSIM_ASSERT(trace->events->len <= DIAGRAM_TRACE_EVENTS_MAX);
    KSIM_ASSERT(trace->ring_len <= DIAGRAM_TRACE_RING_MAX);
    for (guint i = 0; trace->ring != NULL && i < trace->ring_len; i++) {
        const RingEntry *e = &trace->ring[(trace->ring_head + i) % DIAGRAM_TRACE_RING_MAX];
        KSIM_ASSERT(e->record.time_ns >= trace->ring_covers_from_ns);
        KSIM_ASSERT(trace->windows->len == 0 || e->record.time_ns > previous_end);
    }
}
