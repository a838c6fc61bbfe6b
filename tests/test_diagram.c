/*
 * test_diagram: space-time diagrams (diagram.h) of small synthetic runs:
 * the SVG parses as XML, has the lanes in order, an arrow per message
 * (dropped ones marked), fault bands where the lifecycle records put them,
 * labels with the cluster events' numbers, a pattern's steps numbered as its
 * explanation and the messages they received and sent marked; text is
 * escaped; the same inputs give the same text; a busy slice is thinned and
 * says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "checker.h"
#include "diagram.h"
#include "diagram_trace.h"
#include "history.h"
#include "kafka_proto.h"
#include "patterns.h"
#include "sim_net.h"
#include "sim_world.h"
#include "zk_proto.h"

#define US(x) ((gint64)(x)*G_GINT64_CONSTANT(1000))
#define MS(x) ((gint64)(x)*SIM_NS_PER_MS)

enum { PRODUCER = 0, BROKER_1, BROKER_2, ZK, NODES };

/* ---- reading the SVG back ---- */

typedef struct {
    GPtrArray *groups; /* "class|data-node|data-type|data-kind|data-step|data-dropped" */
    GString *text;     /* every text element's content, one per line */
    guint depth;
    gboolean in_text;
} Parsed;

static const char *
attribute(const char **names, const char **values, const char *name)
{
    for (guint i = 0; names[i] != NULL; i++)
        if (strcmp(names[i], name) == 0)
            return values[i];
    return "";
}

static void
on_start(GMarkupParseContext *context, const char *element, const char **names,
         const char **values, gpointer user_data, GError **error)
{
    (void)context;
    (void)error;
    Parsed *p = user_data;
    p->depth++;
    if (strcmp(element, "text") == 0)
        p->in_text = TRUE;
    if (strcmp(element, "g") != 0 && strcmp(element, "rect") != 0)
        return;
    const char *class = attribute(names, values, "class");
    if (*class == '\0')
        return;
    g_ptr_array_add(p->groups, g_strdup_printf("%s|%s|%s|%s|%s|%s", class,
                                               attribute(names, values, "data-node"),
                                               attribute(names, values, "data-type"),
                                               attribute(names, values, "data-kind"),
                                               attribute(names, values, "data-step"),
                                               attribute(names, values, "data-dropped")));
}

static void
on_end(GMarkupParseContext *context, const char *element, gpointer user_data, GError **error)
{
    (void)context;
    (void)error;
    Parsed *p = user_data;
    p->depth--;
    if (strcmp(element, "text") == 0) {
        p->in_text = FALSE;
        g_string_append_c(p->text, ' '); /* a wrapped note reads on */
    }
}

static void
on_text(GMarkupParseContext *context, const char *text, gsize len, gpointer user_data,
        GError **error)
{
    (void)context;
    (void)error;
    Parsed *p = user_data;
    if (p->in_text)
        g_string_append_len(p->text, text, (gssize)len);
}

/* Parses `svg` (failing the test when it is not well-formed XML). */
static Parsed
parse(const char *svg)
{
    Parsed p = {g_ptr_array_new_with_free_func(g_free), g_string_new(NULL), 0, FALSE};
    GMarkupParser parser = {on_start, on_end, on_text, NULL, NULL};
    GMarkupParseContext *context = g_markup_parse_context_new(&parser, 0, &p, NULL);
    GError *error = NULL;
    gboolean ok = g_markup_parse_context_parse(context, svg, -1, &error) &&
                  g_markup_parse_context_end_parse(context, &error);
    if (!ok)
        fail_msg("not XML: %s", error->message);
    g_markup_parse_context_free(context);
    assert_int_equal(p.depth, 0);
    return p;
}

static void
parsed_clear(Parsed *p)
{
    g_ptr_array_free(p->groups, TRUE);
    g_string_free(p->text, TRUE);
}

/* How many groups start with `prefix` ("message|", "band||||" ...). */
static guint
groups_with(const Parsed *p, const char *prefix)
{
    guint n = 0;
    for (guint i = 0; i < p->groups->len; i++)
        n += g_str_has_prefix(g_ptr_array_index(p->groups, i), prefix);
    return n;
}

/* The `n`-th group starting with `prefix`, or "". */
static const char *
nth_group(const Parsed *p, const char *prefix, guint n)
{
    for (guint i = 0; i < p->groups->len; i++) {
        const char *g = g_ptr_array_index(p->groups, i);
        if (g_str_has_prefix(g, prefix) && n-- == 0)
            return g;
    }
    return "";
}

/* How many groups contain `part`. */
static guint
groups_containing(const Parsed *p, const char *class, const char *part)
{
    guint n = 0;
    g_autofree char *prefix = g_strconcat(class, "|", NULL);
    for (guint i = 0; i < p->groups->len; i++) {
        const char *g = g_ptr_array_index(p->groups, i);
        n += g_str_has_prefix(g, prefix) && strstr(g, part) != NULL;
    }
    return n;
}

/* ---- a small run ---- */

typedef struct {
    GPtrArray *names;
    History *history;
    DiagramTrace *trace;
    guint16 topic;
} Run;

static void
rec(Run *run, gint64 t_ns, SimTraceKind kind, guint32 node, guint32 peer, guint64 a, guint64 b,
    const char *note)
{
    SimTraceRecord r = {t_ns, kind, node, peer, 0, a, b};
    diagram_trace_record(run->trace, &r, note);
}

/* A message from `from` to `to` sent at `t_ns`, delivered 100 us later. */
static void
message(Run *run, gint64 t_ns, guint32 from, guint32 to, guint64 type)
{
    rec(run, t_ns, SIM_TRACE_SEND, from, to, type, 64, NULL);
    rec(run, t_ns + US(100), SIM_TRACE_DELIVER, to, from, type, 64, NULL);
}

static void
event(Run *run, gint64 t_ns, HistoryEventKind kind, gint32 broker, gint64 offset,
      gint64 offset_end, gint64 hw, gint32 epoch, const char *text)
{
    gint32 isr[] = {1, 2};
    HistoryEvent e = {0};
    e.time_ns = t_ns;
    e.kind = kind;
    e.broker = broker;
    e.topic = run->topic;
    e.partition = 0;
    e.leader_epoch = epoch;
    e.offset = offset;
    e.offset_end = offset_end;
    e.hw = hw;
    e.isr = history_isr_intern(run->history, isr, 2);
    e.acks = 1;
    e.text = (char *)text;
    history_event(run->history, &e);
}

static void
run_init(Run *run, gboolean watch)
{
    run->names = g_ptr_array_new_with_free_func(g_free);
    const char *names[NODES] = {"producer-a", "broker-1", "broker-2", "zk"};
    for (guint i = 0; i < NODES; i++)
        g_ptr_array_add(run->names, g_strdup(names[i]));
    run->history = history_new();
    run->topic = history_topic(run->history, "orders");
    history_set_process_name(run->history, PRODUCER, "producer-a");
    run->trace = diagram_trace_new(run->names, watch ? run->history : NULL,
                                   DIAGRAM_TRACE_RECORDS_MAX);
    if (!watch)
        diagram_trace_keep_between(run->trace, 0, MS(100));
}

static void
run_clear(Run *run)
{
    diagram_trace_free(run->trace);
    history_free(run->history);
    g_ptr_array_free(run->names, TRUE);
}

/* The run the window tests draw: a produce acknowledged at 10.1 ms,
 * broker-2 down from 20 to 60 ms (a fetch to it dropped at 30 ms), a
 * coordination write at 40 ms, broker-1 cut from zk from 50 to 70 ms. */
static void
window_run(Run *run)
{
    run_init(run, FALSE);
    message(run, MS(10), PRODUCER, BROKER_1, KMSG_PRODUCE_REQUEST);
    event(run, MS(10) + US(100), HISTORY_EVENT_ACK, 1, 7, 8, 6, 3, NULL);
    message(run, MS(10) + US(100), BROKER_1, PRODUCER, KMSG_PRODUCE_RESPONSE);
    rec(run, MS(20), SIM_TRACE_CRASH, BROKER_2, SIM_NODE_NONE, 0, 0, NULL);
    rec(run, MS(30), SIM_TRACE_SEND, BROKER_1, BROKER_2, KMSG_FETCH_REQUEST, 80, NULL);
    rec(run, MS(30) + US(100), SIM_TRACE_DROP, BROKER_2, BROKER_1, KMSG_FETCH_REQUEST,
        SIM_DROP_PEER_DOWN, NULL);
    message(run, MS(40), BROKER_1, ZK, ZK_MSG_REQUEST);
    rec(run, MS(40) + US(100), SIM_TRACE_MODEL, ZK, BROKER_1, 0, 0, "set /x v1 <&>");
    rec(run, MS(50), SIM_TRACE_FAULT, BROKER_1, ZK, SIM_FAULT_PARTITION, 1, NULL);
    rec(run, MS(50), SIM_TRACE_FAULT, ZK, BROKER_1, SIM_FAULT_PARTITION, 1, NULL);
    rec(run, MS(60), SIM_TRACE_RESTART, BROKER_2, SIM_NODE_NONE, 1, 0, NULL);
    event(run, MS(61), HISTORY_EVENT_TRUNCATED, 2, 5, 9, -1, 3, "broker 2 truncated orders-0");
    rec(run, MS(70), SIM_TRACE_FAULT, BROKER_1, ZK, SIM_FAULT_HEAL, 1, NULL);
    rec(run, MS(70), SIM_TRACE_FAULT, ZK, BROKER_1, SIM_FAULT_HEAL, 1, NULL);
    diagram_trace_finish(run->trace, MS(100));
}

/* Goal: a window's diagram has a lane per node with a message, clients
 * first; an arrow per message, the dropped one marked; a band for the
 * crash and one per side of the cut; labels with the acknowledgement's
 * offset, HW, epoch and ISR, and the truncation; the coordination write
 * named on its arrow; every text escaped. */
static void
test_diagram_window(void **state)
{
    (void)state;
    Run run;
    window_run(&run);
    g_autofree char *svg =
        diagram_window_svg(run.trace, run.history, 0, MS(100), NULL, "a <test> & more", "w");
    assert_true(g_str_has_prefix(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
    Parsed p = parse(svg);
    assert_int_equal(groups_with(&p, "lane|"), 4);
    assert_string_equal(nth_group(&p, "lane|", 0), "lane|producer-a||||");
    assert_string_equal(nth_group(&p, "lane|", 3), "lane|zk||||");
    assert_int_equal(groups_with(&p, "message|"), 4);
    assert_int_equal(groups_containing(&p, "message", "Produce request"), 1);
    assert_int_equal(groups_containing(&p, "message", "Produce response"), 1);
    assert_int_equal(groups_containing(&p, "message", "|true"), 1); /* the dropped fetch */
    assert_int_equal(groups_containing(&p, "band", "|down|"), 1);
    assert_int_equal(groups_containing(&p, "band", "broker-2||down"), 1);
    assert_int_equal(groups_containing(&p, "band", "|cut|"), 2);
    assert_true(strstr(p.text->str, "ack orders-0 offset 7, HW 6, epoch 3, ISR [1,2]") != NULL);
    assert_true(strstr(p.text->str, "truncated orders-0: LEO 9 → 5") != NULL);
    assert_true(strstr(p.text->str, "ZK req: set /x v1 <&>") != NULL);
    assert_true(strstr(p.text->str, "a <test> & more") != NULL);
    assert_true(strstr(p.text->str, "cut off from zk") != NULL);
    assert_true(strstr(svg, "set /x v1 &lt;&amp;&gt;") != NULL);
    parsed_clear(&p);
    run_clear(&run);
}

/* Goal: the lanes asked for are the lanes, in that order; messages with a
 * node off them are left out and counted; the same inputs give the same
 * text. */
static void
test_diagram_window_lanes_and_determinism(void **state)
{
    (void)state;
    Run run;
    window_run(&run);
    g_autoptr(GArray) lanes = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint32 order[] = {ZK, BROKER_1};
    g_array_append_vals(lanes, order, 2);
    g_autofree char *svg = diagram_window_svg(run.trace, run.history, 0, MS(100), lanes, "t", "x");
    g_autofree char *again =
        diagram_window_svg(run.trace, run.history, 0, MS(100), lanes, "t", "x");
    assert_string_equal(svg, again);
    Parsed p = parse(svg);
    assert_int_equal(groups_with(&p, "lane|"), 2);
    assert_string_equal(nth_group(&p, "lane|", 0), "lane|zk||||");
    assert_string_equal(nth_group(&p, "lane|", 1), "lane|broker-1||||");
    assert_int_equal(groups_with(&p, "message|"), 1);
    assert_true(strstr(p.text->str, "3 messages with a node off these lanes are not drawn") !=
                NULL);
    parsed_clear(&p);
    run_clear(&run);
}

/* Goal: more Produce exchanges than a window keeps are thinned to every
 * k-th, each request with its response, and the diagram says how many of
 * each type it left out. */
static void
test_diagram_thinning(void **state)
{
    (void)state;
    Run run;
    run_init(&run, FALSE);
    guint n = 3 * DIAGRAM_WINDOW_EXCHANGES_MAX;
    for (guint i = 0; i < n; i++) {
        gint64 t = US(300) * i;
        message(&run, t, PRODUCER, BROKER_1, KMSG_PRODUCE_REQUEST);
        message(&run, t + US(100), BROKER_1, PRODUCER, KMSG_PRODUCE_RESPONSE);
    }
    diagram_trace_finish(run.trace, MS(100));
    g_autofree char *svg = diagram_window_svg(run.trace, run.history, 0, MS(100), NULL, "t", "x");
    Parsed p = parse(svg);
    assert_int_equal(groups_containing(&p, "message", "Produce request"),
                     DIAGRAM_WINDOW_EXCHANGES_MAX);
    assert_int_equal(groups_containing(&p, "message", "Produce response"),
                     DIAGRAM_WINDOW_EXCHANGES_MAX);
    g_autofree char *left = g_strdup_printf("%u Produce request, %u Produce response", 2 * n / 3,
                                            2 * n / 3);
    assert_true(strstr(p.text->str, left) != NULL);
    parsed_clear(&p);
    run_clear(&run);
}

/* A lost write's pattern: sent at 10 ms and acknowledged by broker 1 above
 * the HW, broker 1 crashes at 20 ms, broker 2 is elected at 1020 ms after
 * a LeaderAndIsr. */
static Pattern *
pattern_run(Run *run)
{
    run_init(run, TRUE);
    guint64 op = history_invoke(run->history, MS(10), HISTORY_FN_SEND, PRODUCER, run->topic, 0, 0,
                                HISTORY_VALUE(PRODUCER, 1));
    message(run, MS(10), PRODUCER, BROKER_1, KMSG_PRODUCE_REQUEST);
    event(run, MS(10) + US(100), HISTORY_EVENT_ACK, 1, 7, 8, 6, 0, NULL);
    message(run, MS(10) + US(100), BROKER_1, PRODUCER, KMSG_PRODUCE_RESPONSE);
    history_complete(run->history, op, MS(10) + US(200), HISTORY_OK, 0, 7, 0);
    message(run, MS(15), BROKER_2, BROKER_1, KMSG_FETCH_REQUEST);
    event(run, MS(20), HISTORY_EVENT_FAULT, 1, -1, -1, -1, -1, "0.020 s: fault began: crash");
    rec(run, MS(20), SIM_TRACE_CRASH, BROKER_1, SIM_NODE_NONE, 0, 0, NULL);
    message(run, MS(1015), ZK, BROKER_2, ZK_MSG_WATCH_EVENT);
    message(run, MS(1019), BROKER_2, BROKER_2, KMSG_LEADER_AND_ISR_REQUEST);
    event(run, MS(1019) + US(100), HISTORY_EVENT_ELECTED, 2, 7, -1, 6, 1,
          "broker 2 became leader of orders-0 in epoch 1");
    message(run, MS(1019) + US(100), BROKER_2, BROKER_2, KMSG_LEADER_AND_ISR_RESPONSE);
    diagram_trace_finish(run->trace, MS(2000));

    Pattern *pattern = g_new0(Pattern, 1);
    pattern->signature = g_strdup("acknowledged by A (acks=1) before the HW reached it");
    pattern->count = 1;
    pattern->examples = g_array_new(FALSE, TRUE, sizeof(CheckerExample));
    CheckerExample example = {0};
    example.anomaly = CHECKER_LOST_WRITE;
    example.topic = run->topic;
    example.op = op;
    example.value = HISTORY_VALUE(PRODUCER, 1);
    example.offset = 7;
    g_array_append_val(pattern->examples, example);
    pattern->partitions = g_array_new(FALSE, FALSE, sizeof(guint64));
    guint64 key = (guint64)run->topic << 32;
    g_array_append_val(pattern->partitions, key);
    pattern->chain = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *send = g_strdup_printf("At 0.010 s, producer-a sent value %" G_GUINT64_FORMAT
                                            " to orders-0.",
                                            example.value);
    const char *sentences[] = {send, "the ack", "the crash", "the election"};
    guint events[] = {G_MAXUINT, 0, 1, 2};
    pattern->events = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < G_N_ELEMENTS(sentences); i++) {
        g_ptr_array_add(pattern->chain, g_strdup(sentences[i]));
        g_array_append_val(pattern->events, events[i]);
    }
    return pattern;
}

static void
pattern_free(Pattern *p)
{
    g_free(p->signature);
    g_array_free(p->examples, TRUE);
    g_array_free(p->partitions, TRUE);
    g_ptr_array_free(p->chain, TRUE);
    g_array_free(p->events, TRUE);
    g_free(p);
}

/* Goal: a pattern's diagram has the example's client, the brokers its
 * steps name and the coordination node as lanes; its steps numbered as the
 * explanation (the send 1, the acknowledgement 2, the crash 3, the
 * election 4); the messages the acknowledgement and the election received
 * and sent marked; a slice per step far apart, with a break between; the
 * crash as a band; and a run's watched history opened the windows the
 * messages came from. */
static void
test_diagram_pattern(void **state)
{
    (void)state;
    Run run;
    Pattern *pattern = pattern_run(&run);
    g_autofree char *svg = diagram_pattern_svg(run.trace, run.history, pattern, "lost", "p-1");
    g_autofree char *again = diagram_pattern_svg(run.trace, run.history, pattern, "lost", "p-1");
    assert_string_equal(svg, again);
    Parsed p = parse(svg);
    assert_int_equal(groups_with(&p, "lane|"), 4);
    for (guint step = 1; step <= 4; step++) {
        g_autofree char *kind = g_strdup_printf("|step|%u|", step);
        assert_int_equal(groups_containing(&p, "label", kind), 1);
    }
    assert_true(strstr(p.text->str, "2. ack orders-0 offset 7, HW 6, epoch 0") != NULL);
    assert_true(strstr(p.text->str, "4. leader of orders-0, epoch 1, LEO 7, HW 6") != NULL);
    assert_true(strstr(p.text->str, "1. send value") != NULL);
    assert_true(strstr(p.text->str, "acknowledged: offset 7") != NULL);
    /* Produce request and response (the ack), LeaderAndIsr request and
     * response (the election). */
    assert_int_equal(groups_containing(&p, "message", "|true|"), 4);
    assert_int_equal(groups_containing(&p, "message", "LeaderAndIsr request||true"), 1);
    assert_int_equal(groups_containing(&p, "band", "broker-1||down"), 1);
    assert_true(strstr(p.text->str, "later …") != NULL);
    assert_non_null(strstr(svg, "id=\"p-1\""));
    assert_non_null(strstr(svg, "url(#p-1-arrow-produce)"));
    parsed_clear(&p);
    pattern_free(pattern);
    run_clear(&run);
}

/* Goal: a pattern whose steps have no time draws nothing. */
static void
test_diagram_pattern_without_times(void **state)
{
    (void)state;
    Run run;
    Pattern *pattern = pattern_run(&run);
    g_array_index(pattern->examples, CheckerExample, 0).op = 0;
    g_array_set_size(pattern->events, 1);
    assert_null(diagram_pattern_svg(run.trace, run.history, pattern, "t", "x"));
    pattern_free(pattern);
    run_clear(&run);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diagram_window),
        cmocka_unit_test(test_diagram_window_lanes_and_determinism),
        cmocka_unit_test(test_diagram_thinning),
        cmocka_unit_test(test_diagram_pattern),
        cmocka_unit_test(test_diagram_pattern_without_times),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
