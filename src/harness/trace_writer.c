/*
 * trace_writer: JSON Lines of trace records (see trace_writer.h).
 *
 * Invariants (trace_writer_check_invariants):
 *  1. The writer has an output and a generator, and the generator writes
 *     one line per object (no pretty-printing).
 */
#include "trace_writer.h"

#include "sim_assert.h"

#include <json-glib/json-glib.h>

struct TraceWriter {
    FILE *out;
    const GPtrArray *node_names;
    JsonGenerator *generator;
};

TraceWriter *
trace_writer_new(FILE *out, const GPtrArray *node_names)
{
    KSIM_ASSERT(out != NULL);
    TraceWriter *writer = g_new0(TraceWriter, 1);
    writer->out = out;
    writer->node_names = node_names;
    writer->generator = json_generator_new();
    json_generator_set_pretty(writer->generator, FALSE);
    return writer;
}

void
trace_writer_free(TraceWriter *writer)
{
    if (writer == NULL)
        return;
    g_object_unref(writer->generator);
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

void
trace_writer_record(void *user_data, const SimTraceRecord *record, const char *note)
{
    TraceWriter *writer = user_data;
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
    add_u64(builder, "a", record->a);
    add_u64(builder, "b", record->b);
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

void
trace_writer_check_invariants(const TraceWriter *writer)
{
    KSIM_ASSERT(writer->out != NULL);
    KSIM_ASSERT(writer->generator != NULL);
    KSIM_ASSERT(!json_generator_get_pretty(writer->generator));
}
