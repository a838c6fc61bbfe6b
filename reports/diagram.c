/*
 * diagram: what a space-time diagram shows (see diagram.h); the layout and
 * the SVG are diagram_svg.c's.
 *
 * A diagram is built in this order, each step reading only what the ones
 * before made:
 *  1. lanes: the nodes asked for, or those the pattern's steps involve;
 *  2. slices: the spans of time shown;
 *  3. messages: the kept trace's sends paired with their deliveries or
 *     drops, window by window, between two lanes, in a slice;
 *  4. marks: the messages a step received or sent, and the Produce
 *     responses that answered an acknowledgement of a partition of interest;
 *  5. thinning: per slice, the marked messages, then the control traffic,
 *     then the data path, every k-th one, within the slice's budget;
 *  6. labels (cluster events, the example's send, the models' notes) and
 *     bands (faults), from the history and the kept lifecycle records.
 * Nothing iterates a hash table: every list is in time or lane order.
 */
#include "diagram.h"

#include "checker.h"
#include "diagram_internal.h"
#include "kafka_proto.h"
#include "sim_assert.h"
#include "sim_net.h"
#include "sim_world.h"
#include "trace_messages.h"
#include "zk_proto.h"

#include <stdarg.h>
#include <string.h>

/* A visible label's characters at most; the title keeps the whole. */
#define LABEL_CHARS_MAX 72
/* A step's reply: sent at most this long after the step. */
#define STEP_REPLY_NS G_GINT64_CONSTANT(2000000)

/* ---- the diagram ---- */

static Diagram *
diagram_new(const DiagramTrace *trace, const char *title, const char *id)
{
    Diagram *d = g_new0(Diagram, 1);
    d->trace = trace;
    d->title = title;
    d->id = id;
    d->lanes = g_array_new(FALSE, FALSE, sizeof(guint32));
    d->slices = g_array_new(FALSE, FALSE, sizeof(DiagramSlice));
    d->messages = g_array_new(FALSE, FALSE, sizeof(DiagramMessage));
    d->bands = g_array_new(FALSE, FALSE, sizeof(DiagramBand));
    d->labels = g_array_new(FALSE, FALSE, sizeof(DiagramLabel));
    d->notes = g_ptr_array_new_with_free_func(g_free);
    return d;
}

static void
labels_clear(Diagram *d)
{
    for (guint i = 0; i < d->labels->len; i++) {
        DiagramLabel *label = &g_array_index(d->labels, DiagramLabel, i);
        g_free(label->text);
        g_free(label->title);
    }
    g_array_set_size(d->labels, 0);
}

static void
diagram_free(Diagram *d)
{
    for (guint i = 0; i < d->bands->len; i++)
        g_free(g_array_index(d->bands, DiagramBand, i).text);
    labels_clear(d);
    g_array_free(d->lanes, TRUE);
    g_array_free(d->slices, TRUE);
    g_array_free(d->messages, TRUE);
    g_array_free(d->bands, TRUE);
    g_array_free(d->labels, TRUE);
    g_ptr_array_free(d->notes, TRUE);
    g_free(d);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Diagram, diagram_free)

static void diagram_note(Diagram *d, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
diagram_note(Diagram *d, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_ptr_array_add(d->notes, g_strdup_vprintf(format, args));
    va_end(args);
}

/* ---- 1. lanes ---- */

static guint
lane_of(const Diagram *d, guint32 node)
{
    for (guint i = 0; i < d->lanes->len; i++)
        if (g_array_index(d->lanes, guint32, i) == node)
            return i;
    return G_MAXUINT;
}

static void
lane_add(Diagram *d, guint32 node)
{
    if (node < diagram_trace_node_count(d->trace) && lane_of(d, node) == G_MAXUINT)
        g_array_append_val(d->lanes, node);
}

static void
lane_add_named(Diagram *d, const char *name)
{
    guint32 node;
    if (name != NULL && diagram_trace_node_find(d->trace, name, &node))
        lane_add(d, node);
}

static void
lane_add_broker(Diagram *d, gint32 broker)
{
    if (broker < 0)
        return;
    g_autofree char *name = g_strdup_printf("broker-%d", broker);
    lane_add_named(d, name);
}

/* The lane of broker `broker`, or G_MAXUINT. */
static guint
broker_lane(const Diagram *d, gint32 broker)
{
    if (broker < 0)
        return G_MAXUINT;
    g_autofree char *name = g_strdup_printf("broker-%d", broker);
    guint32 node;
    return diagram_trace_node_find(d->trace, name, &node) ? lane_of(d, node) : G_MAXUINT;
}

/* Clients first, then brokers, then the coordination node, then the rest. */
static int
node_rank(const char *name)
{
    if (g_str_has_prefix(name, "broker-"))
        return 1;
    if (strcmp(name, "zk") == 0)
        return 2;
    if (strcmp(name, "admin") == 0)
        return 3;
    return 0;
}

static gint
lane_compare(gconstpointer a, gconstpointer b, gpointer user_data)
{
    const DiagramTrace *trace = user_data;
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    int rx = node_rank(diagram_trace_node_name(trace, x));
    int ry = node_rank(diagram_trace_node_name(trace, y));
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void
lanes_sort(Diagram *d)
{
    g_array_sort_with_data(d->lanes, lane_compare, (gpointer)d->trace);
}

/* ---- 2. slices ---- */

static gint
slice_compare(gconstpointer a, gconstpointer b)
{
    const DiagramSlice *x = a, *y = b;
    if (x->from_ns != y->from_ns)
        return x->from_ns < y->from_ns ? -1 : 1;
    return x->to_ns < y->to_ns ? -1 : x->to_ns > y->to_ns;
}

/* The slices of `spans` (DiagramSlice, any order), overlapping ones
 * merged; at most DIAGRAM_SLICES_MAX. Returns how many spans fell past the
 * last slice. */
static guint
slices_of_spans(Diagram *d, GArray *spans)
{
    g_array_sort(spans, slice_compare);
    guint dropped = 0;
    for (guint i = 0; i < spans->len; i++) {
        DiagramSlice s = g_array_index(spans, DiagramSlice, i);
        s.from_ns = MAX(s.from_ns, 0);
        if (d->slices->len > 0) {
            DiagramSlice *last = &g_array_index(d->slices, DiagramSlice, d->slices->len - 1);
            if (s.from_ns <= last->to_ns) {
                last->to_ns = MAX(last->to_ns, s.to_ns);
                continue;
            }
        }
        if (d->slices->len == DIAGRAM_SLICES_MAX) {
            dropped++;
            continue;
        }
        g_array_append_val(d->slices, s);
    }
    return dropped;
}

/* The span shown around a step at `t_ns` of `kind` (a HistoryEventKind, or
 * 0 for the example's send and answer): what led to it and what followed.
 * A controller's decision follows a ZooKeeper watch by a few milliseconds;
 * a crash is followed by the disconnects it causes. */
static DiagramSlice
step_span(gint64 t_ns, guint32 kind)
{
    gint64 before = DIAGRAM_STEP_BEFORE_NS, after = DIAGRAM_STEP_AFTER_NS;
    switch ((HistoryEventKind)kind) {
    case HISTORY_EVENT_ACK:
        before = after = SIM_NS_PER_MS;
        break;
    case HISTORY_EVENT_NODE:
    case HISTORY_EVENT_FAULT:
        before = SIM_NS_PER_MS;
        after = 3 * SIM_NS_PER_MS;
        break;
    case HISTORY_EVENT_ELECTED:
    case HISTORY_EVENT_TRUNCATED:
    case HISTORY_EVENT_CONTROLLER:
    case HISTORY_EVENT_ISR_CHANGED:
    case HISTORY_EVENT_OFFLINE:
    case HISTORY_EVENT_SESSION:
        break;
    default:
        if (kind == 0)
            before = after = SIM_NS_PER_MS;
        break;
    }
    return (DiagramSlice){t_ns - before, t_ns + after};
}

/* The slice holding `t_ns`, or G_MAXUINT. */
static guint
slice_at(const Diagram *d, gint64 t_ns)
{
    for (guint i = 0; i < d->slices->len; i++) {
        const DiagramSlice *s = &g_array_index(d->slices, DiagramSlice, i);
        if (s->from_ns <= t_ns && t_ns <= s->to_ns)
            return i;
    }
    return G_MAXUINT;
}

/* The first slice [from_ns, to_ns] meets, or G_MAXUINT. */
static guint
slice_meeting(const Diagram *d, gint64 from_ns, gint64 to_ns)
{
    for (guint i = 0; i < d->slices->len; i++) {
        const DiagramSlice *s = &g_array_index(d->slices, DiagramSlice, i);
        if (from_ns <= s->to_ns && s->from_ns <= to_ns)
            return i;
    }
    return G_MAXUINT;
}

static const DiagramSlice *
slice_get(const Diagram *d, guint i)
{
    return &g_array_index(d->slices, DiagramSlice, i);
}

/* Notes the slices no kept window covers. */
static void
slices_check_kept(Diagram *d)
{
    gint64 spent = diagram_trace_spent_ns(d->trace);
    for (guint i = 0; i < d->slices->len; i++) {
        const DiagramSlice *s = slice_get(d, i);
        if (diagram_trace_covers(d->trace, s->from_ns, s->to_ns))
            continue;
        if (spent >= 0 && s->to_ns >= spent)
            diagram_note(d, "Messages around %.3f s are not drawn: the run's diagram trace had "
                            "kept as many records as it may by %.3f s.",
                         (double)s->from_ns / 1e9, (double)spent / 1e9);
        else
            diagram_note(d, "Messages of %.3f–%.3f s may be missing: the run kept only the "
                            "messages near its cluster events (diagram_trace.h).",
                         (double)s->from_ns / 1e9, (double)s->to_ns / 1e9);
    }
}

/* ---- 3. messages ---- */

static DiagramTraffic
traffic_of(guint64 type)
{
    if (type > G_MAXUINT)
        return DIAGRAM_TRAFFIC_OTHER;
    guint t = (guint)type;
    if (zk_msg_type_name(t) != NULL)
        return DIAGRAM_TRAFFIC_ZK;
    if (kafka_msg_type_name(t) == NULL)
        return DIAGRAM_TRAFFIC_OTHER;
    guint request = kafka_msg_type_is_request(t) ? t : t - 1;
    switch (request) {
    case KMSG_PRODUCE_REQUEST:
        return DIAGRAM_TRAFFIC_PRODUCE;
    case KMSG_FETCH_REQUEST:
        return DIAGRAM_TRAFFIC_FETCH;
    case KMSG_LEADER_AND_ISR_REQUEST:
    case KMSG_UPDATE_METADATA_REQUEST:
    case KMSG_STOP_REPLICA_REQUEST:
    case KMSG_CONTROLLED_SHUTDOWN_REQUEST:
        return DIAGRAM_TRAFFIC_CONTROL;
    default:
        return DIAGRAM_TRAFFIC_OTHER;
    }
}

static gboolean
traffic_is_data(DiagramTraffic traffic)
{
    return traffic == DIAGRAM_TRAFFIC_PRODUCE || traffic == DIAGRAM_TRAFFIC_FETCH;
}

void
diagram_message_short_name(GString *out, guint64 type)
{
    g_string_truncate(out, 0);
    const char *name = trace_message_name(type);
    if (name == NULL) {
        g_string_append_printf(out, "message %" G_GUINT64_FORMAT, type);
        return;
    }
    g_string_append(out, name);
    /* "ZooKeeper request" -> "ZK req", "Fetch response" -> "Fetch resp". */
    if (g_str_has_prefix(out->str, "ZooKeeper")) {
        g_string_erase(out, 0, (gssize)strlen("ZooKeeper"));
        g_string_prepend(out, "ZK");
    }
    if (g_str_has_suffix(out->str, " response"))
        g_string_truncate(out, out->len - strlen("onse"));
    else if (g_str_has_suffix(out->str, " request"))
        g_string_truncate(out, out->len - strlen("uest"));
}

static void label_add(Diagram *d, gint64 t_ns, guint lane, guint step, char *text,
                      const char *title, gboolean note);

/* Attaches a model's note (a coordination write) to the message it was made
 * on: delivered to `record`'s node from its peer at its time; else it
 * becomes a label of its own. */
static void
note_attach(Diagram *d, const DiagramRecord *record, const char *note, guint from_index)
{
    guint lane = lane_of(d, record->node);
    if (note == NULL || lane == G_MAXUINT || slice_at(d, record->time_ns) == G_MAXUINT)
        return;
    guint peer = record->peer != SIM_NODE_NONE ? lane_of(d, record->peer) : G_MAXUINT;
    for (guint i = d->messages->len; i-- > from_index;) {
        DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->end_ns < record->time_ns)
            break;
        if (m->to == lane && m->from == peer && m->end_ns == record->time_ns && m->note == NULL &&
            m->drop_reason < 0) {
            m->note = note;
            return;
        }
    }
    label_add(d, record->time_ns, lane, 0, g_strdup(note), note, TRUE);
}

static gint
message_compare(gconstpointer a, gconstpointer b)
{
    const DiagramMessage *x = a, *y = b;
    if (x->send_ns != y->send_ns)
        return x->send_ns < y->send_ns ? -1 : 1;
    if (x->end_ns != y->end_ns)
        return x->end_ns < y->end_ns ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->to < y->to ? -1 : x->to > y->to;
}

/* The messages of one kept window between two lanes in a slice. Returns
 * how many met a slice with a node off the lanes. */
static guint
messages_of_window(Diagram *d, const DiagramWindow *w)
{
    const GArray *records = diagram_trace_records(d->trace);
    g_autoptr(TraceFlights) flights = trace_flights_new();
    guint outside = 0, window_first = d->messages->len;
    for (guint k = w->first; k < w->first + w->len; k++) {
        const DiagramRecord *r = &g_array_index(records, DiagramRecord, k);
        if (r->kind == SIM_TRACE_MODEL) {
            note_attach(d, r, diagram_trace_note(d->trace, r), window_first);
            continue;
        }
        SimTraceRecord record = {r->time_ns, r->kind, r->node, r->peer, 0, r->a, r->b};
        TraceFlight f;
        TraceFlightEvent event = trace_flights_follow(flights, &record, &f);
        if (event != TRACE_FLIGHT_DELIVERED && event != TRACE_FLIGHT_DROPPED)
            continue;
        guint slice = slice_meeting(d, f.send_ns, r->time_ns);
        if (slice == G_MAXUINT)
            continue;
        guint from = lane_of(d, f.from), to = lane_of(d, f.to);
        if (from == G_MAXUINT || to == G_MAXUINT) {
            outside++;
            continue;
        }
        DiagramMessage m = {0};
        m.send_ns = f.send_ns;
        m.end_ns = r->time_ns;
        m.from = from;
        m.to = to;
        m.type = f.type;
        m.bytes = f.bytes;
        m.drop_reason = event == TRACE_FLIGHT_DROPPED ? (gint32)MIN(r->b, (guint64)G_MAXINT32) : -1;
        m.slice = slice;
        m.traffic = traffic_of(f.type);
        g_array_append_val(d->messages, m);
    }
    return outside;
}

static void
messages_collect(Diagram *d)
{
    if (d->slices->len == 0)
        return;
    gint64 from = slice_get(d, 0)->from_ns, to = slice_get(d, d->slices->len - 1)->to_ns;
    const GArray *windows = diagram_trace_windows(d->trace);
    guint outside = 0;
    for (guint i = 0; i < windows->len; i++) {
        const DiagramWindow *w = &g_array_index(windows, DiagramWindow, i);
        if (w->to_ns >= from && w->from_ns <= to)
            outside += messages_of_window(d, w);
    }
    /* Stable, so messages of one moment keep their trace order. */
    g_array_sort(d->messages, message_compare);
    if (outside > 0)
        diagram_note(d, "%u message%s with a node off these lanes %s not drawn.", outside,
                     outside == 1 ? "" : "s", outside == 1 ? "is" : "are");
}

/* ---- 4. marks ---- */

/* Whether message `i` is a better pick than `best` (-1: none yet): of
 * traffic `prefer` over any other, then the later (`latest`) or the
 * earlier. */
static gboolean
better(const Diagram *d, guint i, gint best, gint prefer, gboolean latest)
{
    if (best < 0)
        return TRUE;
    const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
    const DiagramMessage *b = &g_array_index(d->messages, DiagramMessage, best);
    gboolean mp = (gint)m->traffic == prefer, bp = (gint)b->traffic == prefer;
    if (mp != bp)
        return mp;
    return latest ? m->end_ns >= b->end_ns : m->send_ns < b->send_ns;
}

/* Marks, among the messages of `slice`, the last one `lane` received at
 * or before `t_ns` and the first it sent at or after (within
 * STEP_REPLY_NS), of traffic `prefer` when there is one. */
static void
mark_step_messages(Diagram *d, guint lane, gint64 t_ns, guint slice, gint prefer)
{
    gint in = -1, out = -1;
    for (guint i = 0; i < d->messages->len; i++) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->slice != slice)
            continue;
        if (m->to == lane && m->end_ns <= t_ns && better(d, i, in, prefer, TRUE))
            in = (gint)i;
        if (m->from == lane && m->send_ns >= t_ns && m->send_ns - t_ns <= STEP_REPLY_NS &&
            better(d, i, out, prefer, FALSE))
            out = (gint)i;
    }
    if (in >= 0)
        g_array_index(d->messages, DiagramMessage, in).step = TRUE;
    if (out >= 0)
        g_array_index(d->messages, DiagramMessage, out).step = TRUE;
}

/* TRUE for the steps whose messages are their cause and answer: those a
 * message brings about (an acknowledgement, an election, a truncation, an
 * ISR change, a session, a controller's decision), not a crash or a fault. */
static gboolean
step_has_messages(guint32 kind)
{
    return kind == HISTORY_EVENT_ACK || kind == HISTORY_EVENT_ELECTED ||
           kind == HISTORY_EVENT_TRUNCATED || kind == HISTORY_EVENT_ISR_CHANGED ||
           kind == HISTORY_EVENT_SESSION || kind == HISTORY_EVENT_CONTROLLER;
}

/* The index of the first of `events` at or after `t_ns` (history events
 * are recorded in time order). */
static guint
events_lower_bound(const GArray *events, gint64 t_ns)
{
    guint lo = 0, hi = events->len;
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        if (g_array_index(events, HistoryEvent, mid).time_ns < t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static gboolean
partition_wanted(const GArray *partitions, const HistoryEvent *e)
{
    if (partitions == NULL || e->partition < 0)
        return TRUE;
    guint64 key = ((guint64)e->topic << 32) | (guint32)e->partition;
    for (guint i = 0; i < partitions->len; i++)
        if (g_array_index(partitions, guint64, i) == key)
            return TRUE;
    return FALSE;
}

/* The Produce response `lane` sent at `t_ns`, or -1. */
static gint
produce_response_at(const Diagram *d, guint lane, gint64 t_ns, guint slice)
{
    for (guint i = 0; i < d->messages->len; i++) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->slice == slice && m->from == lane && m->send_ns == t_ns &&
            m->type == KMSG_PRODUCE_RESPONSE)
            return (gint)i;
    }
    return -1;
}

/* The request message `response` answers: the latest of the request type
 * on the reverse link delivered before it was sent; -1 when not drawn. */
static gint
request_of(const Diagram *d, guint response)
{
    const DiagramMessage *r = &g_array_index(d->messages, DiagramMessage, response);
    for (guint i = response; i-- > 0;) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->from == r->to && m->to == r->from && m->type + 1 == r->type &&
            m->end_ns <= r->send_ns && m->drop_reason < 0)
            return (gint)i;
    }
    return -1;
}

/* The response to request message `request`: the first of the response
 * type on the reverse link sent after it arrived; -1 when not drawn. */
static gint
response_of(const Diagram *d, guint request)
{
    const DiagramMessage *r = &g_array_index(d->messages, DiagramMessage, request);
    if (r->drop_reason >= 0)
        return -1;
    for (guint i = request + 1; i < d->messages->len; i++) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->from == r->to && m->to == r->from && m->type == r->type + 1 &&
            m->send_ns >= r->end_ns)
            return (gint)i;
    }
    return -1;
}

/* Marks the Produce responses answering acknowledgements of `partitions`
 * (NULL: any) as of interest. */
static void
mark_focus(Diagram *d, const History *history, const GArray *partitions)
{
    const GArray *events = history_events(history);
    for (guint s = 0; s < d->slices->len; s++) {
        const DiagramSlice *slice = slice_get(d, s);
        for (guint i = events_lower_bound(events, slice->from_ns); i < events->len; i++) {
            const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
            if (e->time_ns > slice->to_ns)
                break;
            if (e->kind != HISTORY_EVENT_ACK || !partition_wanted(partitions, e))
                continue;
            guint lane = broker_lane(d, e->broker);
            gint m = lane != G_MAXUINT ? produce_response_at(d, lane, e->time_ns, s) : -1;
            if (m < 0)
                continue;
            g_array_index(d->messages, DiagramMessage, m).focus = TRUE;
            gint request = request_of(d, (guint)m);
            if (request >= 0)
                g_array_index(d->messages, DiagramMessage, request).focus = TRUE;
        }
    }
}

/* ---- 5. thinning ---- */

typedef gboolean (*MessagePick)(const DiagramMessage *m);

/* Keeps every k-th of the messages of `slice` that `pick` selects (and are
 * not kept yet), so that at most `room` are kept, and with each request of
 * the data path its response (`exchanges`): a Produce or Fetch is kept
 * with its answer or not at all. Returns how many it kept (exchanges
 * counted once). */
static guint
keep_every_kth(Diagram *d, guint slice, MessagePick pick, guint room, gboolean exchanges)
{
    guint n = 0;
    for (guint i = 0; i < d->messages->len; i++) {
        const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        n += m->slice == slice && !m->kept && pick(m);
    }
    if (n == 0 || room == 0)
        return 0;
    guint k = room >= n ? 1 : (n + room - 1) / room, seen = 0, kept = 0;
    for (guint i = 0; i < d->messages->len; i++) {
        DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (m->slice != slice || m->kept || !pick(m))
            continue;
        if (seen++ % k != 0)
            continue;
        m->kept = TRUE;
        kept++;
        gint response = exchanges ? response_of(d, i) : -1;
        if (response >= 0)
            g_array_index(d->messages, DiagramMessage, response).kept = TRUE;
    }
    return kept;
}

static gboolean
pick_step(const DiagramMessage *m)
{
    return m->step;
}

static gboolean
pick_control(const DiagramMessage *m)
{
    return !traffic_is_data(m->traffic);
}

static gboolean
is_data_request(const DiagramMessage *m)
{
    return traffic_is_data(m->traffic) && m->type <= G_MAXUINT &&
           kafka_msg_type_is_request((guint)m->type);
}

static gboolean
pick_focus_request(const DiagramMessage *m)
{
    return m->focus && is_data_request(m);
}

static gboolean
pick_request(const DiagramMessage *m)
{
    return is_data_request(m);
}

/* A name's count of messages left out. */
typedef struct {
    guint64 type;
    guint count;
} LeftOut;

static void
left_out_add(GArray *left, guint64 type)
{
    for (guint i = 0; i < left->len; i++) {
        LeftOut *l = &g_array_index(left, LeftOut, i);
        if (l->type == type) {
            l->count++;
            return;
        }
    }
    LeftOut l = {type, 1};
    g_array_append_val(left, l);
}

static gint
left_out_compare(gconstpointer a, gconstpointer b)
{
    const LeftOut *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->type < y->type ? -1 : x->type > y->type;
}

/* Thins each slice to at most `control_max` messages of control traffic
 * and `exchanges_max` exchanges of the data path (first those of the
 * partitions of interest), beside the steps' messages (always kept), and
 * drops the rest from the list, noting how many of each type went. */
static void
messages_thin(Diagram *d, guint control_max, guint exchanges_max)
{
    for (guint s = 0; s < d->slices->len; s++) {
        keep_every_kth(d, s, pick_step, G_MAXUINT, TRUE);
        keep_every_kth(d, s, pick_control, control_max, FALSE);
        guint kept = keep_every_kth(d, s, pick_focus_request, exchanges_max / 2, TRUE);
        keep_every_kth(d, s, pick_request, exchanges_max - kept, TRUE);
    }
    g_autoptr(GArray) left = g_array_new(FALSE, FALSE, sizeof(LeftOut));
    guint total = d->messages->len, out = 0, w = 0;
    for (guint i = 0; i < d->messages->len; i++) {
        DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
        if (!m->kept) {
            left_out_add(left, m->type);
            out++;
            continue;
        }
        g_array_index(d->messages, DiagramMessage, w++) = *m;
    }
    g_array_set_size(d->messages, w);
    if (out == 0)
        return;
    g_array_sort(left, left_out_compare);
    GString *text = g_string_new(NULL);
    for (guint i = 0; i < left->len; i++) {
        const LeftOut *l = &g_array_index(left, LeftOut, i);
        const char *name = trace_message_name(l->type);
        g_string_append_printf(text, "%s%u %s", i == 0 ? "" : ", ", l->count,
                               name != NULL ? name : "other");
    }
    diagram_note(d, "To keep it readable, %u of the %u messages between these lanes are left out "
                    "(per slice at most %u of control traffic and %u Produce or Fetch exchanges "
                    "are kept, every k-th, and every message a step received or sent): %s.",
                 out, total, control_max, exchanges_max, text->str);
    g_string_free(text, TRUE);
}

/* ---- 6. labels ---- */

static void
isr_text(GString *out, const History *history, guint32 isr)
{
    const gint32 *members = NULL;
    guint n = isr != 0 ? history_isr_members(history, isr, &members) : 0;
    g_string_append_c(out, '[');
    for (guint i = 0; i < n; i++)
        g_string_append_printf(out, "%s%d", i == 0 ? "" : ",", members[i]);
    g_string_append_c(out, ']');
}

/* `text` without what the lane already says: a leading "12.345 s: " and
 * "broker 2 " / "controller 2 " / "leader 2 ". */
static const char *
strip_subject(const char *text, gint32 broker)
{
    const char *t = text;
    const char *colon = strstr(t, " s: ");
    if (colon != NULL && colon - t < 16 && g_ascii_isdigit(t[0]))
        t = colon + 4;
    static const char *const subjects[] = {"broker", "controller", "leader"};
    for (guint i = 0; i < G_N_ELEMENTS(subjects); i++) {
        g_autofree char *prefix = g_strdup_printf("%s %d ", subjects[i], broker);
        if (g_str_has_prefix(t, prefix))
            return t + strlen(prefix);
    }
    return t;
}

/* The label of a cluster event, from its fields: what matters at it. */
static char *
event_label(const History *history, const HistoryEvent *e)
{
    GString *out = g_string_new(NULL);
    g_autofree char *tp =
        e->partition >= 0 ? checker_partition_label(history, e->topic, e->partition) : NULL;
    switch ((HistoryEventKind)e->kind) {
    case HISTORY_EVENT_ACK:
        g_string_append_printf(out, "ack %s offset %" G_GINT64_FORMAT, tp, e->offset);
        if (e->offset_end > e->offset + 1)
            g_string_append_printf(out, "–%" G_GINT64_FORMAT, e->offset_end - 1);
        g_string_append_printf(out, ", HW %" G_GINT64_FORMAT ", epoch %d, ISR ", e->hw,
                               e->leader_epoch);
        isr_text(out, history, e->isr);
        g_string_append_printf(out, ", acks=%s", e->acks < 0 ? "all" : e->acks == 0 ? "0" : "1");
        break;
    case HISTORY_EVENT_ELECTED:
        g_string_append_printf(out, "leader of %s, epoch %d, LEO %" G_GINT64_FORMAT, tp,
                               e->leader_epoch, e->offset);
        if (e->hw >= 0)
            g_string_append_printf(out, ", HW %" G_GINT64_FORMAT, e->hw);
        g_string_append(out, ", ISR ");
        isr_text(out, history, e->isr);
        if (e->text != NULL && strstr(e->text, "unclean") != NULL)
            g_string_append(out, " (unclean)");
        break;
    case HISTORY_EVENT_TRUNCATED:
        g_string_append_printf(out, "truncated %s: LEO %" G_GINT64_FORMAT " → %" G_GINT64_FORMAT,
                               tp, e->offset_end, e->offset);
        break;
    case HISTORY_EVENT_ISR_CHANGED:
        g_string_append_printf(out, "ISR of %s now ", tp);
        isr_text(out, history, e->isr);
        break;
    default:
        g_string_append(out, e->text != NULL ? strip_subject(e->text, e->broker)
                                             : explain_event_kind_name(e->kind));
        break;
    }
    return g_string_free(out, FALSE);
}

/* Adds a label saying `text` (taken; cut to LABEL_CHARS_MAX characters),
 * `title` (may be NULL) on hover. */
static void
label_add(Diagram *d, gint64 t_ns, guint lane, guint step, char *text, const char *title,
          gboolean note)
{
    if (g_utf8_strlen(text, -1) > LABEL_CHARS_MAX) {
        char *cut = g_utf8_offset_to_pointer(text, LABEL_CHARS_MAX - 1);
        *cut = '\0';
        char *shorter = g_strconcat(text, "…", NULL);
        g_free(text);
        text = shorter;
    }
    DiagramLabel label = {t_ns, lane, step, text, g_strdup(title), note};
    g_array_append_val(d->labels, label);
}

/* The lane an event is drawn on: its broker's. */
static guint
event_lane(const Diagram *d, const HistoryEvent *e)
{
    return broker_lane(d, e->broker);
}

/* TRUE when `index` is one of the steps (`steps`: event indices, the
 * explanation's order), with its number in *step. */
static gboolean
step_of(const GArray *steps, guint index, guint *step)
{
    for (guint i = 0; steps != NULL && i < steps->len; i++) {
        if (g_array_index(steps, guint, i) == index) {
            *step = i + 1;
            return TRUE;
        }
    }
    return FALSE;
}

/* One label for the acknowledgements one Produce response answered for
 * one partition: event `first` and those that follow it at its moment, of
 * its broker and partition, none a step ("ack orders-0 offsets 40985–42288
 * in 4 batches, HW 40983, ..."). Returns the index of the last one. */
static guint
label_acks(Diagram *d, const History *history, const GArray *events, guint first,
           const GArray *steps, guint lane)
{
    const HistoryEvent *e = &g_array_index(events, HistoryEvent, first);
    guint last = first, step;
    while (last + 1 < events->len) {
        const HistoryEvent *next = &g_array_index(events, HistoryEvent, last + 1);
        if (next->kind != HISTORY_EVENT_ACK || next->time_ns != e->time_ns ||
            next->broker != e->broker || next->topic != e->topic ||
            next->partition != e->partition || step_of(steps, last + 1, &step))
            break;
        last++;
    }
    if (last == first) {
        label_add(d, e->time_ns, lane, 0, event_label(history, e), e->text, FALSE);
        return last;
    }
    const HistoryEvent *end = &g_array_index(events, HistoryEvent, last);
    g_autofree char *tp = checker_partition_label(history, e->topic, e->partition);
    GString *text = g_string_new(NULL);
    g_string_append_printf(text,
                           "ack %s offsets %" G_GINT64_FORMAT "–%" G_GINT64_FORMAT
                           " in %u batches, HW %" G_GINT64_FORMAT ", epoch %d, ISR ",
                           tp, e->offset, end->offset_end - 1, last - first + 1, end->hw,
                           end->leader_epoch);
    isr_text(text, history, end->isr);
    label_add(d, e->time_ns, lane, 0, g_string_free(text, FALSE), NULL, FALSE);
    return last;
}

/* Labels every cluster event of the slices on a lane: the steps (numbered;
 * a step of no lane goes across), every other event but acknowledgements
 * of `partitions` (NULL: any), and the acknowledgements whose Produce
 * response is drawn. */
static void
labels_of_events(Diagram *d, const History *history, const GArray *partitions,
                 const GArray *steps)
{
    const GArray *events = history_events(history);
    for (guint s = 0; s < d->slices->len; s++) {
        const DiagramSlice *slice = slice_get(d, s);
        for (guint i = events_lower_bound(events, slice->from_ns); i < events->len; i++) {
            const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
            if (e->time_ns > slice->to_ns)
                break;
            guint step = 0;
            gboolean is_step = step_of(steps, i, &step);
            guint lane = event_lane(d, e);
            if (!is_step) {
                if (lane == G_MAXUINT || !partition_wanted(partitions, e) ||
                    e->kind == HISTORY_EVENT_HW_CHANGED)
                    continue;
                if (e->kind == HISTORY_EVENT_ACK) {
                    if (produce_response_at(d, lane, e->time_ns, s) >= 0)
                        i = label_acks(d, history, events, i, steps, lane);
                    continue;
                }
            }
            label_add(d, e->time_ns, lane, step, event_label(history, e), e->text, FALSE);
        }
    }
}

/* The number of the step of `pattern`'s explanation that tells the send
 * of `value` (a sentence of no event saying "sent value V"), or 0. */
static guint
send_step(const Pattern *pattern, guint64 value)
{
    g_autofree char *needle = g_strdup_printf(" sent value %" G_GUINT64_FORMAT " ", value);
    for (guint i = 0; i < pattern->events->len && i < pattern->chain->len; i++) {
        if (g_array_index(pattern->events, guint, i) == G_MAXUINT &&
            strstr(g_ptr_array_index(pattern->chain, i), needle) != NULL)
            return i + 1;
    }
    return 0;
}

/* The client operation `op` of the example (0: none), if a send of the
 * history. */
static const HistoryOp *
example_send(const History *history, guint64 op)
{
    if (op == 0 || op > history_ops(history)->len)
        return NULL;
    const HistoryOp *o = history_op(history, op);
    return o->fn == HISTORY_FN_SEND ? o : NULL;
}

/* A send of the example and its answer, on its client's lane. */
static void
labels_of_op(Diagram *d, const History *history, const Pattern *pattern, const HistoryOp *op)
{
    guint32 node;
    if (op == NULL ||
        !diagram_trace_node_find(d->trace, history_process_name(history, op->process), &node))
        return;
    guint lane = lane_of(d, node);
    if (lane == G_MAXUINT)
        return;
    g_autofree char *tp =
        op->partition >= 0 ? checker_partition_label(history, op->topic, op->partition)
                           : g_strdup(history_topic_name(history, op->topic));
    label_add(d, op->invoke_ns, lane, send_step(pattern, op->value),
              g_strdup_printf("send value %" G_GUINT64_FORMAT " to %s", op->value, tp), NULL,
              FALSE);
    if (op->complete_ns < 0)
        return;
    char *answer = op->type == HISTORY_OK && op->offset >= 0
                       ? g_strdup_printf("acknowledged: offset %" G_GINT64_FORMAT, op->offset)
                   : op->type == HISTORY_OK   ? g_strdup("acknowledged")
                   : op->type == HISTORY_FAIL ? g_strdup("failed")
                                              : g_strdup("outcome unknown");
    label_add(d, op->complete_ns, lane, 0, answer, NULL, FALSE);
}

/* ---- 6. bands ---- */

typedef struct {
    gint64 down_ns; /* -1: up */
    DiagramBandKind down_kind;
    gint64 paused_ns;
    gint64 isolated_ns;
    gint64 cut_ns;
    GArray *cut_peers; /* guint32 nodes it was cut from during the band */
} LaneState;

static void
band_add(Diagram *d, guint lane, gint64 from_ns, gint64 to_ns, DiagramBandKind kind, char *text)
{
    gint64 first = slice_get(d, 0)->from_ns, last = slice_get(d, d->slices->len - 1)->to_ns;
    from_ns = MAX(from_ns, first);
    to_ns = MIN(to_ns, last);
    if (from_ns > to_ns || slice_meeting(d, from_ns, to_ns) == G_MAXUINT) {
        g_free(text);
        return;
    }
    DiagramBand band = {lane, from_ns, to_ns, kind, text};
    g_array_append_val(d->bands, band);
}

/* The directed links cut, as pairs of nodes. */
static void
cuts_remove(GArray *cuts, guint32 from, guint32 to)
{
    for (guint i = 0; i + 1 < cuts->len; i += 2) {
        if (g_array_index(cuts, guint32, i) == from && g_array_index(cuts, guint32, i + 1) == to) {
            g_array_remove_range(cuts, i, 2);
            return;
        }
    }
}

static void
peer_add(GArray *peers, guint32 node)
{
    for (guint i = 0; i < peers->len; i++)
        if (g_array_index(peers, guint32, i) == node)
            return;
    g_array_append_val(peers, node);
}

/* Opens or closes each lane's "cut off" band after the cuts changed. */
static void
cuts_update(Diagram *d, LaneState *states, const GArray *cuts, gint64 t_ns)
{
    for (guint lane = 0; lane < d->lanes->len; lane++) {
        guint32 node = g_array_index(d->lanes, guint32, lane);
        LaneState *st = &states[lane];
        gboolean cut = FALSE;
        for (guint i = 0; i + 1 < cuts->len; i += 2) {
            guint32 a = g_array_index(cuts, guint32, i), b = g_array_index(cuts, guint32, i + 1);
            if (a == node || b == node) {
                cut = TRUE;
                peer_add(st->cut_peers, a == node ? b : a);
            }
        }
        if (cut && st->cut_ns < 0)
            st->cut_ns = t_ns;
        if (cut || st->cut_ns < 0)
            continue;
        GString *text = g_string_new("cut off from ");
        for (guint i = 0; i < st->cut_peers->len; i++)
            g_string_append_printf(text, "%s%s", i == 0 ? "" : ", ",
                                   diagram_trace_node_name(d->trace,
                                                           g_array_index(st->cut_peers, guint32, i)));
        band_add(d, lane, st->cut_ns, t_ns, DIAGRAM_BAND_CUT, g_string_free(text, FALSE));
        st->cut_ns = -1;
        g_array_set_size(st->cut_peers, 0);
    }
}

static void
band_fault(Diagram *d, LaneState *states, GArray *cuts, const DiagramRecord *r)
{
    guint lane = r->node != SIM_NODE_NONE ? lane_of(d, r->node) : G_MAXUINT;
    switch ((guint)r->a) {
    case SIM_FAULT_PARTITION:
        if (r->node != SIM_NODE_NONE && r->peer != SIM_NODE_NONE) {
            guint32 pair[2] = {r->node, r->peer};
            g_array_append_vals(cuts, pair, 2);
        }
        break;
    case SIM_FAULT_HEAL:
        if (r->node != SIM_NODE_NONE && r->peer != SIM_NODE_NONE) {
            cuts_remove(cuts, r->node, r->peer);
            break;
        }
        g_array_set_size(cuts, 0);
        for (guint l = 0; l < d->lanes->len; l++) {
            if (states[l].isolated_ns >= 0)
                band_add(d, l, states[l].isolated_ns, r->time_ns, DIAGRAM_BAND_ISOLATED,
                         g_strdup("isolated"));
            states[l].isolated_ns = -1;
        }
        break;
    case SIM_FAULT_ISOLATE:
        if (lane != G_MAXUINT && states[lane].isolated_ns < 0)
            states[lane].isolated_ns = r->time_ns;
        break;
    default:
        break;
    }
    cuts_update(d, states, cuts, r->time_ns);
}

static void
band_record(Diagram *d, LaneState *states, GArray *cuts, const DiagramRecord *r)
{
    if (r->kind == SIM_TRACE_FAULT) {
        band_fault(d, states, cuts, r);
        return;
    }
    guint lane = lane_of(d, r->node);
    if (lane == G_MAXUINT)
        return;
    LaneState *st = &states[lane];
    switch ((SimTraceKind)r->kind) {
    case SIM_TRACE_CRASH:
    case SIM_TRACE_POWER_LOSS:
        if (st->down_ns < 0) {
            st->down_ns = r->time_ns;
            st->down_kind =
                r->kind == SIM_TRACE_CRASH ? DIAGRAM_BAND_DOWN : DIAGRAM_BAND_POWER_LOSS;
        }
        break;
    case SIM_TRACE_RESTART:
        if (st->down_ns >= 0)
            band_add(d, lane, st->down_ns, r->time_ns, st->down_kind,
                     g_strdup(st->down_kind == DIAGRAM_BAND_DOWN ? "crashed" : "lost power"));
        st->down_ns = -1;
        break;
    case SIM_TRACE_PAUSE:
        if (st->paused_ns < 0)
            st->paused_ns = r->time_ns;
        break;
    case SIM_TRACE_RESUME:
        if (st->paused_ns >= 0)
            band_add(d, lane, st->paused_ns, r->time_ns, DIAGRAM_BAND_PAUSED, g_strdup("paused"));
        st->paused_ns = -1;
        break;
    default:
        break;
    }
}

/* The fault bands of the lanes, from every kept lifecycle and fault record
 * up to the last slice; bands still open there end with it. */
static void
bands_collect(Diagram *d)
{
    if (d->slices->len == 0 || d->lanes->len == 0)
        return;
    gint64 end = slice_get(d, d->slices->len - 1)->to_ns;
    LaneState *states = g_new0(LaneState, d->lanes->len);
    for (guint l = 0; l < d->lanes->len; l++) {
        states[l] = (LaneState){-1, DIAGRAM_BAND_DOWN, -1, -1, -1, NULL};
        states[l].cut_peers = g_array_new(FALSE, FALSE, sizeof(guint32));
    }
    g_autoptr(GArray) cuts = g_array_new(FALSE, FALSE, sizeof(guint32));
    const GArray *events = diagram_trace_events(d->trace);
    for (guint i = 0; i < events->len; i++) {
        const DiagramRecord *r = &g_array_index(events, DiagramRecord, i);
        if (r->time_ns > end)
            break;
        band_record(d, states, cuts, r);
    }
    for (guint l = 0; l < d->lanes->len; l++) {
        LaneState *st = &states[l];
        if (st->down_ns >= 0)
            band_add(d, l, st->down_ns, end, st->down_kind,
                     g_strdup(st->down_kind == DIAGRAM_BAND_DOWN ? "crashed" : "lost power"));
        if (st->paused_ns >= 0)
            band_add(d, l, st->paused_ns, end, DIAGRAM_BAND_PAUSED, g_strdup("paused"));
        if (st->isolated_ns >= 0)
            band_add(d, l, st->isolated_ns, end, DIAGRAM_BAND_ISOLATED, g_strdup("isolated"));
    }
    g_array_set_size(cuts, 0);
    cuts_update(d, states, cuts, end);
    for (guint l = 0; l < d->lanes->len; l++)
        g_array_free(states[l].cut_peers, TRUE);
    g_free(states);
}

/* ---- the two diagrams ---- */

static char *
diagram_finish(Diagram *d, const History *history, const GArray *partitions,
               const GArray *steps, guint control_max, guint exchanges_max)
{
    messages_collect(d);
    if (history != NULL)
        mark_focus(d, history, partitions);
    messages_thin(d, control_max, exchanges_max);
    if (history != NULL)
        labels_of_events(d, history, partitions, steps);
    bands_collect(d);
    slices_check_kept(d);
    return diagram_svg_render(d);
}

char *
diagram_window_svg(const DiagramTrace *trace, const History *history, gint64 from_ns,
                   gint64 to_ns, const GArray *lanes, const char *title, const char *id)
{
    KSIM_ASSERT(from_ns <= to_ns);
    g_autoptr(Diagram) d = diagram_new(trace, title, id);
    DiagramSlice slice = {from_ns, to_ns};
    g_array_append_val(d->slices, slice);
    if (lanes != NULL && lanes->len > 0) {
        for (guint i = 0; i < lanes->len; i++)
            lane_add(d, g_array_index(lanes, guint32, i));
    } else {
        /* Every node with a message or a fault in the window: collect with
         * every node a lane, then keep those that appear. */
        for (guint32 node = 0; node < diagram_trace_node_count(trace); node++)
            lane_add(d, node);
        messages_collect(d);
        g_autoptr(GArray) used = g_array_new(FALSE, FALSE, sizeof(guint32));
        for (guint i = 0; i < d->messages->len; i++) {
            const DiagramMessage *m = &g_array_index(d->messages, DiagramMessage, i);
            guint32 ends[2] = {g_array_index(d->lanes, guint32, m->from),
                               g_array_index(d->lanes, guint32, m->to)};
            for (guint k = 0; k < 2; k++)
                peer_add(used, ends[k]);
        }
        const GArray *events = diagram_trace_events(trace);
        for (guint i = 0; i < events->len; i++) {
            const DiagramRecord *r = &g_array_index(events, DiagramRecord, i);
            if (r->time_ns >= from_ns && r->time_ns <= to_ns && r->node != SIM_NODE_NONE)
                peer_add(used, r->node);
        }
        g_array_set_size(d->messages, 0);
        g_ptr_array_set_size(d->notes, 0);
        labels_clear(d);
        g_array_set_size(d->lanes, 0);
        for (guint i = 0; i < used->len; i++)
            lane_add(d, g_array_index(used, guint32, i));
        lanes_sort(d);
    }
    return diagram_finish(d, history, NULL, NULL, DIAGRAM_WINDOW_CONTROL_MAX,
                          DIAGRAM_WINDOW_EXCHANGES_MAX);
}

/* The lanes of a pattern: its example's client, the brokers its steps
 * name, its partitions' replicas, the controllers of its slices and the
 * coordination node. `sends`: the example's sends (NULL: none). */
static void
pattern_lanes(Diagram *d, const History *history, const Pattern *pattern,
              const HistoryOp *const sends[2])
{
    for (guint k = 0; k < 2; k++)
        if (sends[k] != NULL)
            lane_add_named(d, history_process_name(history, sends[k]->process));
    const GArray *events = history_events(history);
    for (guint i = 0; i < pattern->events->len; i++) {
        guint index = g_array_index(pattern->events, guint, i);
        if (index != G_MAXUINT)
            lane_add_broker(d, g_array_index(events, HistoryEvent, index).broker);
    }
    const GArray *replicas = history_replicas(history);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        HistoryEvent probe = {.topic = r->topic, .partition = r->partition};
        if (partition_wanted(pattern->partitions, &probe))
            lane_add_broker(d, r->broker);
    }
    /* The controller as each slice begins, and each elected within it. */
    gint32 controller = -1;
    guint s = 0;
    gboolean in_slice = FALSE;
    for (guint i = 0; i < events->len && s < d->slices->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        while (s < d->slices->len && e->time_ns > slice_get(d, s)->to_ns) {
            if (!in_slice)
                lane_add_broker(d, controller);
            s++;
            in_slice = FALSE;
        }
        if (s == d->slices->len)
            break;
        if (!in_slice && e->time_ns >= slice_get(d, s)->from_ns) {
            lane_add_broker(d, controller);
            in_slice = TRUE;
        }
        if (e->kind == HISTORY_EVENT_CONTROLLER && e->partition < 0) {
            controller = e->broker;
            if (in_slice)
                lane_add_broker(d, controller);
        }
    }
    for (; s < d->slices->len; s++)
        lane_add_broker(d, controller);
    lane_add_named(d, "zk");
    lanes_sort(d);
}

char *
diagram_pattern_svg(const DiagramTrace *trace, const History *history, const Pattern *pattern,
                    const char *title, const char *id)
{
    KSIM_ASSERT(pattern->examples->len > 0);
    const CheckerExample *example = &g_array_index(pattern->examples, CheckerExample, 0);
    const GArray *events = history_events(history);
    g_autoptr(Diagram) d = diagram_new(trace, title, id);
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DiagramSlice));
    const HistoryOp *sends[2] = {example_send(history, example->op),
                                 example->anomaly == CHECKER_NONMONOTONIC_SEND
                                     ? example_send(history, example->op_other)
                                     : NULL};
    for (guint k = 0; k < G_N_ELEMENTS(sends); k++) {
        if (sends[k] == NULL)
            continue;
        DiagramSlice span = step_span(sends[k]->invoke_ns, 0);
        g_array_append_val(spans, span);
        if (sends[k]->complete_ns >= 0) {
            span = step_span(sends[k]->complete_ns, 0);
            g_array_append_val(spans, span);
        }
    }
    for (guint i = 0; i < pattern->events->len; i++) {
        guint index = g_array_index(pattern->events, guint, i);
        if (index == G_MAXUINT)
            continue;
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, index);
        DiagramSlice span = step_span(e->time_ns, e->kind);
        g_array_append_val(spans, span);
    }
    if (spans->len == 0)
        return NULL;
    guint dropped = slices_of_spans(d, spans);
    pattern_lanes(d, history, pattern, sends);
    if (dropped > 0)
        diagram_note(d, "%u later moment%s of the explanation %s past the last slice drawn.",
                     dropped, dropped == 1 ? "" : "s", dropped == 1 ? "is" : "are");
    messages_collect(d);
    for (guint i = 0; i < pattern->events->len; i++) {
        guint index = g_array_index(pattern->events, guint, i);
        if (index == G_MAXUINT)
            continue;
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, index);
        guint lane = event_lane(d, e), slice = slice_at(d, e->time_ns);
        if (lane != G_MAXUINT && slice != G_MAXUINT && step_has_messages(e->kind))
            mark_step_messages(d, lane, e->time_ns, slice,
                               e->kind == HISTORY_EVENT_ACK ? DIAGRAM_TRAFFIC_PRODUCE
                                                            : DIAGRAM_TRAFFIC_CONTROL);
    }
    mark_focus(d, history, pattern->partitions);
    messages_thin(d, DIAGRAM_SLICE_CONTROL_MAX, DIAGRAM_SLICE_EXCHANGES_MAX);
    for (guint k = 0; k < G_N_ELEMENTS(sends); k++)
        labels_of_op(d, history, pattern, sends[k]);
    labels_of_events(d, history, pattern->partitions, pattern->events);
    bands_collect(d);
    slices_check_kept(d);
    return diagram_svg_render(d);
}
