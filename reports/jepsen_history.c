/*
 * jepsen_history: see jepsen_history.h. Operations follow the shapes of
 * Jepsen's Kafka workload (jepsen.tests.kafka, jepsen-io/jepsen 0.3.x: its
 * namespace doc and op->max-send-offsets / op->max-poll-offsets).
 */
#include "jepsen_history.h"

#include <errno.h>
#include <stdlib.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "kafka_error.h"

/* One Jepsen operation before it is written: a send, a poll, an
 * assignment or a transaction. */
typedef enum {
    UNIT_SEND = 0,
    UNIT_POLL,
    UNIT_ASSIGN,
    UNIT_TXN,
} UnitKind;

typedef struct {
    guint8 kind;       /* UnitKind */
    guint8 completion; /* HistoryType of the completion; HISTORY_INVOKE: none */
    guint32 process;   /* the ksim client */
    guint32 first;     /* SEND/POLL/ASSIGN: index of its first op; TXN: txn index */
    guint32 count;     /* POLL/ASSIGN: how many consecutive ops */
    gint64 invoke_ns;
    gint64 complete_ns;
    guint64 order;     /* the index of its first op in the history: ties in time */
    guint32 jepsen_process;
} Unit;

/* An invocation (phase 0) or a completion (phase 1) of a unit. */
typedef struct {
    gint64 time_ns;
    guint64 order;
    guint32 unit;
    guint8 phase;
} Step;

static gint
step_compare(gconstpointer a, gconstpointer b)
{
    const Step *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    if (x->order != y->order)
        return x->order < y->order ? -1 : 1;
    return (gint)x->phase - (gint)y->phase;
}

static gint
key_compare(gconstpointer a, gconstpointer b)
{
    const JepsenKey *x = a, *y = b;
    if (x->topic != y->topic)
        return x->topic < y->topic ? -1 : 1;
    return x->partition < y->partition ? -1 : x->partition > y->partition;
}

static gboolean
op_names_partition(const HistoryOp *op)
{
    return op->partition >= 0 && (op->fn == HISTORY_FN_SEND || op->fn == HISTORY_FN_POLL ||
                                  op->fn == HISTORY_FN_ASSIGN);
}

GArray *
jepsen_history_keys(const History *history)
{
    const HistoryOpArray *ops = history_ops(history);
    GArray *keys = g_array_new(FALSE, FALSE, sizeof(JepsenKey));
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &ops->data[i];
        if (!op_names_partition(op))
            continue;
        JepsenKey key = {op->topic, op->partition};
        if (keys->len > 0 && key_compare(&key, &g_array_index(keys, JepsenKey, keys->len - 1)) == 0)
            continue;
        g_array_append_val(keys, key);
    }
    g_array_sort(keys, key_compare);
    guint kept = 0;
    for (guint i = 0; i < keys->len; i++) {
        if (kept > 0 && key_compare(&g_array_index(keys, JepsenKey, i),
                                    &g_array_index(keys, JepsenKey, kept - 1)) == 0)
            continue;
        g_array_index(keys, JepsenKey, kept++) = g_array_index(keys, JepsenKey, i);
    }
    g_array_set_size(keys, kept);
    return keys;
}

/* The key of topic-partition (topic, partition) in `keys`; -1: none. */
static gint64
key_of(const GArray *keys, guint16 topic, gint32 partition)
{
    JepsenKey want = {topic, partition};
    const JepsenKey *found = bsearch(&want, keys->data, keys->len, sizeof(JepsenKey), key_compare);
    return found != NULL ? found - (const JepsenKey *)keys->data : -1;
}

/* ":not-enough-replicas" for NOT_ENOUGH_REPLICAS: an EDN keyword. */
static void
append_error(GString *line, gint32 error)
{
    g_string_append(line, ", :error :");
    for (const char *c = kafka_error_name((KafkaError)error); *c != '\0'; c++)
        g_string_append_c(line, *c == '_' ? '-' : g_ascii_tolower(*c));
}

/* [:send KEY VALUE] or, done, [:send KEY [OFFSET VALUE]] (OFFSET nil when
 * unknown). */
static void
append_send(GString *line, const GArray *keys, const HistoryOp *op, gboolean done)
{
    gint64 key = key_of(keys, op->topic, op->partition);
    g_string_append_printf(line, "[:send %" G_GINT64_FORMAT " ", key);
    if (!done) {
        g_string_append_printf(line, "%" G_GUINT64_FORMAT "]", op->value);
    } else if (op->offset >= 0) {
        g_string_append_printf(line, "[%" G_GINT64_FORMAT " %" G_GUINT64_FORMAT "]]", op->offset,
                               op->value);
    } else {
        g_string_append_printf(line, "[nil %" G_GUINT64_FORMAT "]]", op->value);
    }
}

static gboolean
send_has_key(const HistoryOp *op)
{
    return op->partition >= 0;
}

/* The value of `unit` at its invocation (phase 0) or completion (phase 1). */
static void
append_value(GString *line, const Unit *unit, guint8 phase, const History *history,
             const TxnCheck *txn, const GArray *keys)
{
    const HistoryOp *ops = history_ops(history)->data;
    gboolean done = phase == 1 && unit->completion == HISTORY_OK;
    switch ((UnitKind)unit->kind) {
    case UNIT_SEND:
        g_string_append_c(line, '[');
        append_send(line, keys, &ops[unit->first], done);
        g_string_append_c(line, ']');
        break;
    case UNIT_TXN: {
        const TxnInfo *info = checker_txn_transaction(txn, unit->first);
        g_string_append_c(line, '[');
        gboolean first = TRUE;
        for (guint i = 0; i < info->sends->len; i++) {
            const HistoryOp *op = history_op(history, g_array_index(info->sends, guint64, i));
            if (!send_has_key(op))
                continue;
            if (!first)
                g_string_append_c(line, ' ');
            first = FALSE;
            append_send(line, keys, op, done);
        }
        g_string_append_c(line, ']');
        break;
    }
    case UNIT_POLL:
        if (phase == 0) {
            g_string_append(line, "[[:poll]]");
            break;
        }
        /* One entry per key, in the order the poll returned them. */
        g_string_append(line, "[[:poll {");
        for (guint i = 0; i < unit->count; i++) {
            const HistoryOp *op = &ops[unit->first + i];
            gboolean earlier = FALSE;
            for (guint j = 0; j < i && !earlier; j++)
                earlier = ops[unit->first + j].topic == op->topic &&
                          ops[unit->first + j].partition == op->partition;
            if (earlier)
                continue;
            if (i > 0)
                g_string_append(line, ", ");
            g_string_append_printf(line, "%" G_GINT64_FORMAT " [",
                                   key_of(keys, op->topic, op->partition));
            gboolean first = TRUE;
            for (guint j = i; j < unit->count; j++) {
                const HistoryOp *r = &ops[unit->first + j];
                if (r->topic != op->topic || r->partition != op->partition)
                    continue;
                g_string_append_printf(line, "%s[%" G_GINT64_FORMAT " %" G_GUINT64_FORMAT "]",
                                       first ? "" : " ", r->offset, r->value);
                first = FALSE;
            }
            g_string_append_c(line, ']');
        }
        g_string_append(line, "}]]");
        break;
    case UNIT_ASSIGN:
        g_string_append_c(line, '[');
        for (guint i = 0; i < unit->count; i++) {
            const HistoryOp *op = &ops[unit->first + i];
            g_string_append_printf(line, "%s%" G_GINT64_FORMAT, i > 0 ? " " : "",
                                   key_of(keys, op->topic, op->partition));
        }
        g_string_append_c(line, ']');
        break;
    }
}

static const char *
unit_fn(const Unit *unit)
{
    static const char *const names[] = {":send", ":poll", ":assign", ":txn"};
    return names[unit->kind];
}

static const char *
type_name(guint8 type)
{
    switch ((HistoryType)type) {
    case HISTORY_OK:
        return ":ok";
    case HISTORY_FAIL:
        return ":fail";
    case HISTORY_INFO:
        return ":info";
    case HISTORY_INVOKE:
        break;
    }
    return ":invoke";
}

/* The sends, polls, assignments and transactions of `history`, as units. */
static GArray *
collect_units(const History *history, const TxnCheck *txn)
{
    const HistoryOpArray *ops = history_ops(history);
    /* in_txn[i]: op i is a send of a transaction (written with it). */
    g_autofree guint8 *in_txn = g_new0(guint8, ops->len + 1);
    GArray *units = g_array_new(FALSE, TRUE, sizeof(Unit));
    guint n_txn = txn != NULL ? (guint)checker_txn_counts(txn)->transactions : 0;
    for (guint t = 0; t < n_txn; t++) {
        const TxnInfo *info = checker_txn_transaction(txn, t);
        for (guint i = 0; i < info->sends->len; i++)
            in_txn[g_array_index(info->sends, guint64, i) - 1] = 1;
        Unit unit = {.kind = UNIT_TXN, .process = info->process, .first = t,
                     .invoke_ns = info->begin_ns, .order = info->begin_op - 1};
        switch (info->fate) {
        case TXN_FATE_COMMITTED:
            unit.completion = HISTORY_OK;
            break;
        case TXN_FATE_ABORTED:
            unit.completion = HISTORY_FAIL;
            break;
        case TXN_FATE_UNKNOWN:
            unit.completion = HISTORY_INFO;
            break;
        case TXN_FATE_UNENDED:
        case TXN_FATE_COUNT:
            unit.completion = HISTORY_INVOKE;
            break;
        }
        unit.complete_ns = info->end_complete_ns >= 0 ? info->end_complete_ns : info->end_invoke_ns;
        if (unit.complete_ns < 0)
            unit.completion = HISTORY_INVOKE;
        g_array_append_val(units, unit);
    }
    for (guint i = 0; i < ops->len; i++) {
        const HistoryOp *op = &ops->data[i];
        if (op->fn == HISTORY_FN_SEND) {
            if (in_txn[i] || !send_has_key(op))
                continue;
            Unit unit = {.kind = UNIT_SEND, .process = op->process, .first = i,
                         .invoke_ns = op->invoke_ns, .complete_ns = op->complete_ns,
                         .completion = op->type, .order = i};
            g_array_append_val(units, unit);
        } else if ((op->fn == HISTORY_FN_POLL || op->fn == HISTORY_FN_ASSIGN) &&
                   op->partition >= 0) {
            /* One poll's records (one assignment's partitions) are recorded
             * together: consecutive, one client, one time. */
            guint n = 1;
            while (i + n < ops->len && ops->data[i + n].fn == op->fn &&
                   ops->data[i + n].process == op->process &&
                   ops->data[i + n].invoke_ns == op->invoke_ns && ops->data[i + n].partition >= 0)
                n++;
            Unit unit = {.kind = op->fn == HISTORY_FN_POLL ? UNIT_POLL : UNIT_ASSIGN,
                         .process = op->process, .first = i, .count = n,
                         .invoke_ns = op->invoke_ns, .complete_ns = op->invoke_ns,
                         .completion = HISTORY_OK, .order = i};
            g_array_append_val(units, unit);
            i += n - 1;
        }
    }
    return units;
}

/* The lowest free Jepsen process of ksim client `process`, or a new one. */
static guint32
process_take(GHashTable *free_by_client, guint32 process, guint32 *next)
{
    GArray *free = g_hash_table_lookup(free_by_client, GUINT_TO_POINTER(process));
    if (free == NULL || free->len == 0)
        return (*next)++;
    guint32 lowest = g_array_index(free, guint32, 0);
    g_array_remove_index(free, 0);
    return lowest;
}

static void
process_give_back(GHashTable *free_by_client, guint32 process, guint32 jepsen)
{
    GArray *free = g_hash_table_lookup(free_by_client, GUINT_TO_POINTER(process));
    if (free == NULL) {
        free = g_array_new(FALSE, FALSE, sizeof(guint32));
        g_hash_table_insert(free_by_client, GUINT_TO_POINTER(process), free);
    }
    guint at = 0;
    while (at < free->len && g_array_index(free, guint32, at) < jepsen)
        at++;
    g_array_insert_val(free, at, jepsen);
}

gboolean
jepsen_history_write(const History *history, const TxnCheck *txn, FILE *out, GError **error)
{
    g_autoptr(GArray) keys = jepsen_history_keys(history);
    g_autoptr(GArray) units = collect_units(history, txn);
    g_autoptr(GArray) steps = g_array_sized_new(FALSE, FALSE, sizeof(Step), units->len * 2);
    for (guint u = 0; u < units->len; u++) {
        const Unit *unit = &g_array_index(units, Unit, u);
        Step invoke = {unit->invoke_ns, unit->order, u, 0};
        g_array_append_val(steps, invoke);
        if (unit->completion != HISTORY_INVOKE) {
            Step complete = {unit->complete_ns, unit->order, u, 1};
            g_array_append_val(steps, complete);
        }
    }
    g_array_sort(steps, step_compare);
    g_autoptr(GHashTable) free_by_client =
        g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, (GDestroyNotify)g_array_unref);
    guint32 next_process = 0;
    g_autoptr(GString) line = g_string_sized_new(256);
    const HistoryOp *ops = history_ops(history)->data;
    for (guint s = 0; s < steps->len; s++) {
        const Step *step = &g_array_index(steps, Step, s);
        Unit *unit = &g_array_index(units, Unit, step->unit);
        if (step->phase == 0)
            unit->jepsen_process = process_take(free_by_client, unit->process, &next_process);
        else if (unit->completion != HISTORY_INFO)
            process_give_back(free_by_client, unit->process, unit->jepsen_process);
        g_string_printf(line,
                        "{:index %u, :time %" G_GINT64_FORMAT ", :type %s, :process %u, :f %s, "
                        ":value ",
                        s, step->time_ns, step->phase == 0 ? ":invoke" : type_name(unit->completion),
                        unit->jepsen_process, unit_fn(unit));
        append_value(line, unit, step->phase, history, txn, keys);
        if (step->phase == 1 && unit->kind == UNIT_SEND && unit->completion != HISTORY_OK &&
            ops[unit->first].error != 0)
            append_error(line, ops[unit->first].error);
        g_string_append(line, "}\n");
        if (fwrite(line->str, 1, line->len, out) != line->len) {
            g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(errno),
                        "writing the Jepsen history: %s", g_strerror(errno));
            return FALSE;
        }
    }
    return TRUE;
}

char *
jepsen_history_keys_json(const History *history)
{
    g_autoptr(GArray) keys = jepsen_history_keys(history);
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "keys");
    json_builder_begin_array(b);
    for (guint i = 0; i < keys->len; i++) {
        const JepsenKey *key = &g_array_index(keys, JepsenKey, i);
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "key");
        json_builder_add_int_value(b, i);
        json_builder_set_member_name(b, "topic");
        json_builder_add_string_value(b, history_topic_name(history, key->topic));
        json_builder_set_member_name(b, "partition");
        json_builder_add_int_value(b, key->partition);
        json_builder_end_object(b);
    }
    json_builder_end_array(b);
    json_builder_end_object(b);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    return json_generator_to_data(gen, NULL);
}
