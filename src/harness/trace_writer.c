/*
 * trace_writer: `--trace` output (see trace_writer.h).
 *
 * Invariants (trace_writer_check_invariants):
 *  1. The writer has an output and a generator, and the generator writes
 *     one line per object (no pretty-printing).
 *  2. Nothing is written after trace_writer_finish.
 *  3. Chrome: the writer has its in-flight table and its node states.
 */
#include "trace_writer.h"

#include "kafka_proto.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"
#include "trace_messages.h"
#include "zk_proto.h"

#include <json-glib/json-glib.h>
#include <string.h>

/* The threads of a node's process in the Chrome format. */
typedef enum {
    ROLE_CLIENT = 1,
    ROLE_HANDLER,
    ROLE_FETCHER,
    ROLE_CONTROLLER,
    ROLE_COORDINATORS,
    ROLE_COORDINATION,
    ROLE_SERVER,
    ROLE_DISK,
    ROLE_LIFECYCLE,
    ROLE_NOTES,
    ROLE_COUNT,
} Role;

static const char *const role_names[ROLE_COUNT] = {
    [ROLE_CLIENT] = "client",
    [ROLE_HANDLER] = "request handler",
    [ROLE_FETCHER] = "replica fetcher",
    [ROLE_CONTROLLER] = "controller",
    [ROLE_COORDINATORS] = "coordinators",
    [ROLE_COORDINATION] = "coordination",
    [ROLE_SERVER] = "server",
    [ROLE_DISK] = "disk",
    [ROLE_LIFECYCLE] = "lifecycle",
    [ROLE_NOTES] = "notes",
};

/* When a node went down or paused (Chrome). */
typedef struct {
    gint64 down_ns;   /* -1: up */
    gint64 paused_ns; /* -1: running */
    gboolean power_loss;
    guint32 threads_named; /* bit r: thread r's name was written */
} NodeState;

struct TraceWriter {
    FILE *out;
    const GPtrArray *node_names;
    JsonGenerator *generator;
    TraceFormat format;
    gboolean finished;
    /* Chrome */
    guint64 events;        /* written so far: the separator before the next */
    gint64 last_ns;
    TraceFlights *in_flight; /* sends paired with their deliveries (trace_messages.h) */
    GArray *nodes;         /* NodeState by node id */
};

const char *
trace_format_name(TraceFormat format)
{
    return format == TRACE_FORMAT_CHROME ? "chrome" : "jsonl";
}

gboolean
trace_format_parse(const char *name, TraceFormat *format)
{
    if (strcmp(name, "jsonl") == 0)
        *format = TRACE_FORMAT_JSONL;
    else if (strcmp(name, "chrome") == 0)
        *format = TRACE_FORMAT_CHROME;
    else
        return FALSE;
    return TRUE;
}

TraceWriter *
trace_writer_new(FILE *out, const GPtrArray *node_names, TraceFormat format)
{
    KSIM_ASSERT(out != NULL);
    TraceWriter *writer = g_new0(TraceWriter, 1);
    writer->out = out;
    writer->node_names = node_names;
    writer->format = format;
    writer->generator = json_generator_new();
    json_generator_set_pretty(writer->generator, FALSE);
    if (format == TRACE_FORMAT_CHROME) {
        writer->in_flight = trace_flights_new();
        writer->nodes = g_array_new(FALSE, TRUE, sizeof(NodeState));
        fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
    }
    return writer;
}

void
trace_writer_free(TraceWriter *writer)
{
    if (writer == NULL)
        return;
    g_object_unref(writer->generator);
    trace_flights_free(writer->in_flight);
    if (writer->nodes != NULL)
        g_array_free(writer->nodes, TRUE);
    g_free(writer);
}

static const char *
node_name(const TraceWriter *writer, guint32 node)
{
    if (writer->node_names != NULL && node < writer->node_names->len)
        return g_ptr_array_index(writer->node_names, node);
    return "-";
}

static void
add_u64(JsonBuilder *builder, const char *member, guint64 value)
{
    json_builder_set_member_name(builder, member);
    if (value <= (guint64)G_MAXINT64) {
        json_builder_add_int_value(builder, (gint64)value);
        return;
    }
    g_autofree char *text = g_strdup_printf("%" G_GUINT64_FORMAT, value);
    json_builder_add_string_value(builder, text);
}

/* `member` as the name `name` gives, or the number when it is NULL. */
static void
add_named(JsonBuilder *builder, const char *member, const char *name, guint64 value)
{
    if (name == NULL) {
        add_u64(builder, member, value);
        return;
    }
    json_builder_set_member_name(builder, member);
    json_builder_add_string_value(builder, name);
}

static const char *
disconnect_name(guint64 reason)
{
    return reason == SIM_DISCONNECT_CLOSED ? "closed"
           : reason == SIM_DISCONNECT_RESET ? "reset"
                                            : NULL;
}

/* The fields of `record` beyond time, kind, node and peer, named per kind
 * (trace_writer.h's table). */
static void
add_fields(JsonBuilder *b, const SimTraceRecord *record)
{
    switch ((SimTraceKind)record->kind) {
    case SIM_TRACE_SEND:
    case SIM_TRACE_DELIVER:
        add_named(b, "message", trace_message_name(record->a), record->a);
        add_u64(b, "bytes", record->b);
        return;
    case SIM_TRACE_DROP:
        add_named(b, "message", trace_message_name(record->a), record->a);
        add_named(b, "reason",
                  record->b <= G_MAXUINT ? sim_net_drop_reason_name((guint)record->b) : NULL,
                  record->b);
        return;
    case SIM_TRACE_DUPLICATE:
        add_named(b, "message", trace_message_name(record->a), record->a);
        if (record->b != G_MAXUINT64)
            add_u64(b, "bytes", record->b);
        return;
    case SIM_TRACE_DISCONNECT:
        add_named(b, "reason", disconnect_name(record->a), record->a);
        add_u64(b, "connection", record->b);
        return;
    case SIM_TRACE_TIMER:
        add_u64(b, "timer", record->a);
        return;
    case SIM_TRACE_RESTART:
        add_u64(b, "incarnation", record->a);
        return;
    case SIM_TRACE_RESUME:
        add_u64(b, "held_events", record->a);
        return;
    case SIM_TRACE_DISK_WRITE:
        add_u64(b, "file", record->a);
        add_u64(b, "bytes", record->b);
        return;
    case SIM_TRACE_DISK_TRUNCATE:
        add_u64(b, "file", record->a);
        add_u64(b, "size", record->b);
        return;
    case SIM_TRACE_DISK_FSYNC:
        add_u64(b, "file", record->a);
        add_u64(b, "durable_bytes", record->b);
        return;
    case SIM_TRACE_DISK_ERROR:
        add_u64(b, "file", record->a);
        add_named(b, "error",
                  record->b <= G_MAXUINT ? sim_disk_status_name((SimDiskStatus)record->b) : NULL,
                  record->b);
        return;
    case SIM_TRACE_DISK_LOSS:
        add_u64(b, "file", record->a);
        add_u64(b, "surviving_bytes", record->b);
        return;
    case SIM_TRACE_FAULT:
        add_named(b, "fault", record->a <= G_MAXUINT ? sim_net_fault_name((guint)record->a) : NULL,
                  record->a);
        add_u64(b, "value", record->b);
        return;
    case SIM_TRACE_CRASH:
    case SIM_TRACE_POWER_LOSS:
    case SIM_TRACE_PAUSE:
        return;
    case SIM_TRACE_MODEL:
        break;
    }
    add_u64(b, "a", record->a);
    add_u64(b, "b", record->b);
}

static void
write_jsonl(TraceWriter *writer, const SimTraceRecord *record, const char *note)
{
    g_autoptr(JsonBuilder) builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "t_ns");
    json_builder_add_int_value(builder, record->time_ns);
    json_builder_set_member_name(builder, "kind");
    json_builder_add_string_value(builder, sim_trace_kind_name((SimTraceKind)record->kind));
    json_builder_set_member_name(builder, "node");
    json_builder_add_string_value(builder, node_name(writer, record->node));
    if (record->peer != G_MAXUINT32) {
        json_builder_set_member_name(builder, "peer");
        json_builder_add_string_value(builder, node_name(writer, record->peer));
    }
    add_fields(builder, record);
    if (note != NULL) {
        json_builder_set_member_name(builder, "note");
        json_builder_add_string_value(builder, note);
    }
    json_builder_end_object(builder);
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    json_generator_set_root(writer->generator, root);
    gsize length = 0;
    g_autofree char *line = json_generator_to_data(writer->generator, &length);
    fwrite(line, 1, length, writer->out);
    fputc('\n', writer->out);
}

/* ---- Chrome ---- */

typedef enum {
    NODE_CLIENT,
    NODE_BROKER,
    NODE_SERVER,
} NodeKind;

static NodeKind
node_kind(const TraceWriter *writer, guint32 node)
{
    const char *name = node_name(writer, node);
    if (g_str_has_prefix(name, "broker-"))
        return NODE_BROKER;
    if (g_str_has_prefix(name, "zk"))
        return NODE_SERVER;
    return NODE_CLIENT;
}

/* The thread of `node` that sends (sending) or receives a message of `type`.
 * A broker's request handler receives every request and sends every
 * response, as Kafka's KafkaApis does; its requests go out from, and their
 * responses come back to, the fetcher (Fetch, OffsetsForLeaderEpoch), the
 * controller (LeaderAndIsr, UpdateMetadata, StopReplica), the lifecycle
 * (ControlledShutdown) or the coordinators (transaction markers). */
static Role
message_role(const TraceWriter *writer, guint32 node, guint64 type, gboolean sending)
{
    NodeKind kind = node_kind(writer, node);
    if (kind == NODE_CLIENT)
        return ROLE_CLIENT;
    if (kind == NODE_SERVER)
        return ROLE_SERVER;
    guint t = (guint)MIN(type, G_MAXUINT);
    if (zk_msg_type_name(t) != NULL)
        return ROLE_COORDINATION;
    gboolean request = kafka_msg_type_is_request(t);
    if (request != sending)
        return ROLE_HANDLER;
    guint request_type = request ? t : t - 1;
    if (request_type == KMSG_FETCH_REQUEST || request_type == KMSG_EPOCH_REQUEST)
        return ROLE_FETCHER;
    if (request_type == KMSG_LEADER_AND_ISR_REQUEST ||
        request_type == KMSG_UPDATE_METADATA_REQUEST || request_type == KMSG_STOP_REPLICA_REQUEST)
        return ROLE_CONTROLLER;
    if (request_type == KMSG_CONTROLLED_SHUTDOWN_REQUEST)
        return ROLE_LIFECYCLE;
    return ROLE_COORDINATORS;
}

static NodeState *
node_state(TraceWriter *writer, guint32 node)
{
    if (node >= writer->nodes->len) {
        guint old = writer->nodes->len;
        g_array_set_size(writer->nodes, node + 1);
        for (guint i = old; i <= node; i++) {
            NodeState *s = &g_array_index(writer->nodes, NodeState, i);
            s->down_ns = -1;
            s->paused_ns = -1;
        }
    }
    return &g_array_index(writer->nodes, NodeState, node);
}

static void
emit(TraceWriter *writer, JsonBuilder *builder)
{
    g_autoptr(JsonNode) root = json_builder_get_root(builder);
    json_generator_set_root(writer->generator, root);
    gsize length = 0;
    g_autofree char *text = json_generator_to_data(writer->generator, &length);
    if (writer->events++ > 0)
        fputs(",\n", writer->out);
    fwrite(text, 1, length, writer->out);
}

static void
member_string(JsonBuilder *b, const char *name, const char *value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_string_value(b, value);
}

static void
member_int(JsonBuilder *b, const char *name, gint64 value)
{
    json_builder_set_member_name(b, name);
    json_builder_add_int_value(b, value);
}

/* Virtual nanoseconds as the format's microseconds. */
static void
member_us(JsonBuilder *b, const char *name, gint64 ns)
{
    json_builder_set_member_name(b, name);
    json_builder_add_double_value(b, (double)ns / 1000.0);
}

static void
emit_metadata(TraceWriter *writer, guint pid, guint tid, const char *what, const char *name)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    member_string(b, "ph", "M");
    member_string(b, "name", what);
    member_int(b, "pid", pid);
    if (tid != 0)
        member_int(b, "tid", tid);
    json_builder_set_member_name(b, "args");
    json_builder_begin_object(b);
    member_string(b, "name", name);
    json_builder_end_object(b);
    json_builder_end_object(b);
    emit(writer, b);
}

/* The process of `node` (its id + 1), naming it and thread `role` the first
 * time each is used. */
static guint
node_pid(TraceWriter *writer, guint32 node, Role role)
{
    NodeState *state = node_state(writer, node);
    guint pid = node + 1;
    if (state->threads_named == 0) {
        state->threads_named = 1;
        emit_metadata(writer, pid, 0, "process_name", node_name(writer, node));
    }
    if ((state->threads_named & (1u << role)) == 0) {
        state->threads_named |= 1u << role;
        emit_metadata(writer, pid, role, "thread_name", role_names[role]);
    }
    return pid;
}

/* Begins an event of phase `ph` named `name` on node's thread `role` at
 * `ns`; the caller adds members, then ends and emits it. */
static JsonBuilder *
event_begin(TraceWriter *writer, const char *ph, const char *name, const char *category,
            guint32 node, Role role, gint64 ns)
{
    guint pid = node_pid(writer, node, role);
    JsonBuilder *b = json_builder_new();
    json_builder_begin_object(b);
    member_string(b, "ph", ph);
    member_string(b, "name", name);
    member_string(b, "cat", category);
    member_int(b, "pid", pid);
    member_int(b, "tid", role);
    member_us(b, "ts", ns);
    return b;
}

static void
event_end(TraceWriter *writer, JsonBuilder *b)
{
    json_builder_end_object(b);
    emit(writer, b);
    g_object_unref(b);
}

static void
emit_message(TraceWriter *writer, const TraceFlight *flight, gint64 end_ns,
             const char *dropped)
{
    guint32 from = flight->from, to = flight->to;
    Role sender = message_role(writer, from, flight->type, TRUE);
    const char *message = trace_message_name(flight->type);
    g_autofree char *number = message == NULL ? g_strdup_printf("message %" G_GUINT64_FORMAT,
                                                                flight->type)
                                              : NULL;
    g_autofree char *name = dropped != NULL
                                ? g_strdup_printf("%s dropped (%s)", message != NULL ? message : number,
                                                  dropped)
                                : g_strdup(message != NULL ? message : number);
    JsonBuilder *b = event_begin(writer, "X", name, "message", from, sender, flight->send_ns);
    member_us(b, "dur", end_ns - flight->send_ns);
    json_builder_set_member_name(b, "args");
    json_builder_begin_object(b);
    member_string(b, "to", node_name(writer, to));
    member_int(b, "bytes", (gint64)MIN(flight->bytes, (guint64)G_MAXINT64));
    json_builder_end_object(b);
    event_end(writer, b);
    if (dropped != NULL)
        return;
    b = event_begin(writer, "s", name, "flow", from, sender, flight->send_ns);
    member_int(b, "id", (gint64)flight->id);
    event_end(writer, b);
    Role role = message_role(writer, to, flight->type, FALSE);
    b = event_begin(writer, "f", name, "flow", to, role, end_ns);
    member_int(b, "id", (gint64)flight->id);
    member_string(b, "bp", "e");
    event_end(writer, b);
}

static void
emit_slice(TraceWriter *writer, const char *name, guint32 node, Role role, gint64 from_ns,
           gint64 to_ns)
{
    JsonBuilder *b = event_begin(writer, "X", name, "node", node, role, from_ns);
    member_us(b, "dur", to_ns - from_ns);
    event_end(writer, b);
}

/* An instant event on `node` (or, for a record of no node, across the
 * trace) carrying the record's named fields and note. */
static void
emit_instant(TraceWriter *writer, const SimTraceRecord *record, const char *note, Role role,
             const char *name)
{
    gboolean global = record->node == G_MAXUINT32;
    JsonBuilder *b = event_begin(writer, "i", name, sim_trace_kind_name(record->kind),
                                 global ? 0 : record->node, role, record->time_ns);
    member_string(b, "s", global ? "g" : "t");
    json_builder_set_member_name(b, "args");
    json_builder_begin_object(b);
    if (record->peer != G_MAXUINT32)
        member_string(b, "peer", node_name(writer, record->peer));
    add_fields(b, record);
    if (note != NULL)
        member_string(b, "note", note);
    json_builder_end_object(b);
    event_end(writer, b);
}

static void
write_chrome(TraceWriter *writer, const SimTraceRecord *record, const char *note)
{
    writer->last_ns = MAX(writer->last_ns, record->time_ns);
    switch ((SimTraceKind)record->kind) {
    case SIM_TRACE_SEND:
    case SIM_TRACE_DUPLICATE:
    case SIM_TRACE_DELIVER:
    case SIM_TRACE_DROP: {
        TraceFlight flight;
        TraceFlightEvent event = trace_flights_follow(writer->in_flight, record, &flight);
        if (event != TRACE_FLIGHT_DELIVERED && event != TRACE_FLIGHT_DROPPED)
            return;
        gboolean dropped = event == TRACE_FLIGHT_DROPPED;
        const char *reason = dropped && record->b <= G_MAXUINT
                                 ? sim_net_drop_reason_name((guint)record->b)
                                 : NULL;
        emit_message(writer, &flight, record->time_ns,
                     dropped ? (reason != NULL ? reason : "dropped") : NULL);
        return;
    }
    case SIM_TRACE_CRASH:
    case SIM_TRACE_POWER_LOSS: {
        NodeState *state = node_state(writer, record->node);
        state->down_ns = record->time_ns;
        state->power_loss = record->kind == SIM_TRACE_POWER_LOSS;
        return;
    }
    case SIM_TRACE_RESTART: {
        NodeState *state = node_state(writer, record->node);
        if (state->down_ns >= 0)
            emit_slice(writer, state->power_loss ? "down (power loss)" : "down (crashed)",
                       record->node, ROLE_LIFECYCLE, state->down_ns, record->time_ns);
        state = node_state(writer, record->node);
        state->down_ns = -1;
        return;
    }
    case SIM_TRACE_PAUSE:
        node_state(writer, record->node)->paused_ns = record->time_ns;
        return;
    case SIM_TRACE_RESUME: {
        NodeState *state = node_state(writer, record->node);
        if (state->paused_ns >= 0)
            emit_slice(writer, "paused", record->node, ROLE_LIFECYCLE, state->paused_ns,
                       record->time_ns);
        node_state(writer, record->node)->paused_ns = -1;
        return;
    }
    case SIM_TRACE_DISK_TRUNCATE:
    case SIM_TRACE_DISK_FSYNC:
    case SIM_TRACE_DISK_ERROR:
    case SIM_TRACE_DISK_LOSS:
        emit_instant(writer, record, note, ROLE_DISK, sim_trace_kind_name(record->kind));
        return;
    case SIM_TRACE_FAULT: {
        const char *fault = record->a <= G_MAXUINT ? sim_net_fault_name((guint)record->a) : NULL;
        g_autofree char *name = g_strdup_printf("fault: %s", fault != NULL ? fault : "other");
        emit_instant(writer, record, note, ROLE_LIFECYCLE, name);
        return;
    }
    case SIM_TRACE_DISCONNECT:
    case SIM_TRACE_MODEL:
        emit_instant(writer, record, note, ROLE_NOTES,
                     note != NULL ? note : sim_trace_kind_name(record->kind));
        return;
    case SIM_TRACE_TIMER:
    case SIM_TRACE_DISK_WRITE:
        return;
    }
}

void
trace_writer_record(void *user_data, const SimTraceRecord *record, const char *note)
{
    TraceWriter *writer = user_data;
    KSIM_ASSERT(!writer->finished);
    if (writer->format == TRACE_FORMAT_CHROME)
        write_chrome(writer, record, note);
    else
        write_jsonl(writer, record, note);
}

/* The node of broker `broker_id`, from the world's names; G_MAXUINT32: none. */
static guint32
broker_node(const TraceWriter *writer, gint32 broker_id)
{
    g_autofree char *name = g_strdup_printf("broker-%d", broker_id);
    for (guint i = 0; writer->node_names != NULL && i < writer->node_names->len; i++)
        if (strcmp(g_ptr_array_index(writer->node_names, i), name) == 0)
            return i;
    return G_MAXUINT32;
}

/* A replica's counter as last written. */
typedef struct {
    gint64 written_ns; /* -1: never */
    gint64 leo;
    gint64 hw;
    gint64 isr;
} ReplicaCounter;

/* The replicas' counters: LEO, HW and ISR size of each replica as its
 * broker recorded them. */
static void
emit_counters(TraceWriter *writer, const History *history)
{
    const GArray *events = history_events(history);
    /* Keyed by broker << 48 | topic << 32 | partition; looked up only. */
    g_autoptr(GHashTable) counters =
        g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
    g_autoptr(GArray) nodes = g_array_new(FALSE, FALSE, sizeof(guint32)); /* by broker id */
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i);
        if (e->broker < 0 || e->partition < 0 ||
            (e->kind != HISTORY_EVENT_ACK && e->kind != HISTORY_EVENT_ELECTED &&
             e->kind != HISTORY_EVENT_TRUNCATED && e->kind != HISTORY_EVENT_ISR_CHANGED))
            continue;
        while (nodes->len <= (guint)e->broker) {
            guint32 node = broker_node(writer, (gint32)nodes->len);
            g_array_append_val(nodes, node);
        }
        guint32 node = g_array_index(nodes, guint32, e->broker);
        if (node == G_MAXUINT32)
            continue;
        gint64 key = ((gint64)e->broker << 48) | ((gint64)e->topic << 32) | (guint32)e->partition;
        ReplicaCounter *c = g_hash_table_lookup(counters, &key);
        if (c == NULL) {
            c = g_new0(ReplicaCounter, 1);
            c->written_ns = -1;
            g_hash_table_insert(counters, g_memdup2(&key, sizeof key), c);
        }
        const gint32 *members = NULL;
        gint64 isr = e->isr != 0 ? history_isr_members(history, e->isr, &members) : 0;
        switch ((HistoryEventKind)e->kind) {
        case HISTORY_EVENT_ACK:
            /* At most one sample a millisecond: acknowledgements come per batch. */
            c->leo = MAX(c->leo, e->offset_end);
            c->hw = e->hw;
            c->isr = isr;
            if (c->written_ns >= 0 && e->time_ns - c->written_ns < 1000000)
                continue;
            break;
        case HISTORY_EVENT_ELECTED:
            c->leo = e->offset;
            c->hw = e->hw >= 0 ? e->hw : c->hw;
            c->isr = isr;
            break;
        case HISTORY_EVENT_TRUNCATED:
            c->leo = e->offset;
            c->hw = e->hw >= 0 ? MIN(e->hw, e->offset) : MIN(c->hw, e->offset);
            break;
        case HISTORY_EVENT_ISR_CHANGED:
            c->isr = isr;
            break;
        default:
            continue;
        }
        c->written_ns = e->time_ns;
        g_autofree char *name =
            g_strdup_printf("%s-%d", history_topic_name(history, e->topic), e->partition);
        JsonBuilder *b = event_begin(writer, "C", name, "replica", node, ROLE_NOTES, e->time_ns);
        json_builder_set_member_name(b, "args");
        json_builder_begin_object(b);
        member_int(b, "leo", c->leo);
        member_int(b, "hw", c->hw);
        member_int(b, "isr", c->isr);
        json_builder_end_object(b);
        event_end(writer, b);
    }
}

void
trace_writer_finish(TraceWriter *writer, const History *history)
{
    KSIM_ASSERT(!writer->finished);
    writer->finished = TRUE;
    if (writer->format != TRACE_FORMAT_CHROME)
        return;
    /* Nodes still down or paused at the end. */
    for (guint node = 0; node < writer->nodes->len; node++) {
        NodeState *state = &g_array_index(writer->nodes, NodeState, node);
        if (state->down_ns >= 0)
            emit_slice(writer, state->power_loss ? "down (power loss)" : "down (crashed)", node,
                       ROLE_LIFECYCLE, state->down_ns, writer->last_ns);
        state = &g_array_index(writer->nodes, NodeState, node);
        if (state->paused_ns >= 0)
            emit_slice(writer, "paused", node, ROLE_LIFECYCLE, state->paused_ns, writer->last_ns);
    }
    if (history != NULL)
        emit_counters(writer, history);
    fputs("\n]}\n", writer->out);
}

void
trace_writer_check_invariants(const TraceWriter *writer)
{
    KSIM_ASSERT(writer->out != NULL);
    KSIM_ASSERT(writer->generator != NULL);
    KSIM_ASSERT(!json_generator_get_pretty(writer->generator));
    KSIM_ASSERT(writer->format != TRACE_FORMAT_CHROME ||
                (writer->in_flight != NULL && writer->nodes != NULL));
}
