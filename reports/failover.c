/*
 * failover: controller failovers and partition unavailability from a
 * history (see failover.h). One pass over the events in time order keeps,
 * per partition, its leader and since when it has been without one, and
 * the number of partitions that were led before and are now neither led
 * nor offline: a failover ends when that number is 0 after the new
 * controller claimed its epoch.
 */
#include "failover.h"

#include <string.h>

#include "sim_assert.h"

typedef struct {
    FailoverPartition out;
    gint32 leader;        /* the broker that last became leader */
    gboolean led;         /* it serves */
    gboolean offline;     /* the controller found no eligible leader */
    gint64 unled_since_ns;
    guint outage;         /* index in `outages` of the open outage, while unled */
} PartitionState;

struct FailoverResult {
    GArray *windows;    /* FailoverWindow */
    GArray *partitions; /* FailoverPartition, by (topic, partition) */
    GArray *outages;    /* FailoverOutage, by start */
    gint64 end_ns;
    guint offline_at_end;
};

typedef struct {
    GArray *states;       /* PartitionState */
    GHashTable *index_of; /* (topic << 32 | partition) -> index + 1 */
    guint pending;        /* led before, now neither led nor offline */
    GArray *outages;      /* the result's */
} Sweep;

static PartitionState *
sweep_partition(Sweep *sweep, guint16 topic, gint32 partition)
{
    guint64 key = ((guint64)topic << 32) | (guint32)partition;
    gpointer found = g_hash_table_lookup(sweep->index_of, &key);
    if (found != NULL)
        return &g_array_index(sweep->states, PartitionState, GPOINTER_TO_UINT(found) - 1);
    PartitionState state = {{topic, partition, 0, 0}, -1, FALSE, FALSE, -1, 0};
    g_array_append_val(sweep->states, state);
    guint64 *stored = g_memdup2(&key, sizeof key);
    g_hash_table_insert(sweep->index_of, stored, GUINT_TO_POINTER(sweep->states->len));
    return &g_array_index(sweep->states, PartitionState, sweep->states->len - 1);
}

static gboolean
pending(const PartitionState *p)
{
    return p->leader >= 0 && !p->led && !p->offline;
}

/* Applies a change to one partition, keeping `pending` counted. */
static void
partition_unled(Sweep *sweep, PartitionState *p, gint64 now_ns, gboolean offline)
{
    gboolean was = pending(p);
    if (p->led) {
        p->led = FALSE;
        p->unled_since_ns = now_ns;
        p->out.outages++;
        FailoverOutage outage = {p->out.topic, p->out.partition, now_ns, -1};
        p->outage = sweep->outages->len;
        g_array_append_val(sweep->outages, outage);
    }
    p->offline = offline;
    gboolean is = pending(p);
    sweep->pending += (guint)is - (guint)was;
}

static void
partition_led(Sweep *sweep, PartitionState *p, gint32 broker, gint64 now_ns)
{
    gboolean was = pending(p);
    if (!p->led && p->unled_since_ns >= 0) {
        p->out.unavailable_ns += now_ns - p->unled_since_ns;
        g_array_index(sweep->outages, FailoverOutage, p->outage).end_ns = now_ns;
    }
    p->leader = broker;
    p->led = TRUE;
    p->offline = FALSE;
    p->unled_since_ns = -1;
    KSIM_ASSERT(!pending(p));
    if (was)
        sweep->pending--;
}

/* A broker stopped: every partition it leads loses its leader. */
static void
broker_stopped(Sweep *sweep, gint32 broker, gint64 now_ns)
{
    for (guint i = 0; i < sweep->states->len; i++) {
        PartitionState *p = &g_array_index(sweep->states, PartitionState, i);
        if (p->led && p->leader == broker)
            partition_unled(sweep, p, now_ns, FALSE);
    }
}

static gboolean
text_has(const char *text, const char *part)
{
    return text != NULL && strstr(text, part) != NULL;
}

gboolean
failover_event_stops_broker(const HistoryEvent *event)
{
    if (event->broker < 0)
        return FALSE;
    if (event->kind == HISTORY_EVENT_FAULT)
        return text_has(event->text, "fault began: crash ") ||
               text_has(event->text, "fault began: power-loss ");
    return event->kind == HISTORY_EVENT_NODE && text_has(event->text, "stopped cleanly");
}

static void
windows_update(FailoverResult *result, const Sweep *sweep, const HistoryEvent *event)
{
    for (guint i = 0; i < result->windows->len; i++) {
        FailoverWindow *w = &g_array_index(result->windows, FailoverWindow, i);
        if (w->led_ns >= 0)
            continue;
        if (w->claimed_ns < 0 && event->kind == HISTORY_EVENT_CONTROLLER &&
            event->partition < 0 && text_has(event->text, "became controller"))
            w->claimed_ns = event->time_ns;
        if (w->claimed_ns >= 0 && sweep->pending == 0)
            w->led_ns = event->time_ns;
    }
}

static void
sweep_event(FailoverResult *result, Sweep *sweep, const HistoryEvent *event)
{
    if (event->kind == HISTORY_EVENT_ELECTED && event->partition >= 0)
        partition_led(sweep, sweep_partition(sweep, event->topic, event->partition),
                      event->broker, event->time_ns);
    else if (event->kind == HISTORY_EVENT_OFFLINE && event->partition >= 0)
        partition_unled(sweep, sweep_partition(sweep, event->topic, event->partition),
                        event->time_ns, TRUE);
    else if (failover_event_stops_broker(event))
        broker_stopped(sweep, event->broker, event->time_ns);
    if (event->kind == HISTORY_EVENT_CONTROLLER_LOST) {
        FailoverWindow w = {event->broker, event->time_ns, -1, -1};
        g_array_append_val(result->windows, w);
    }
    windows_update(result, sweep, event);
}

static gint
partition_compare(gconstpointer a, gconstpointer b)
{
    const FailoverPartition *x = a, *y = b;
    if (x->topic != y->topic)
        return x->topic < y->topic ? -1 : 1;
    return (x->partition > y->partition) - (x->partition < y->partition);
}

FailoverResult *
failover_run(const History *history)
{
    FailoverResult *result = g_new0(FailoverResult, 1);
    result->windows = g_array_new(FALSE, FALSE, sizeof(FailoverWindow));
    result->partitions = g_array_new(FALSE, FALSE, sizeof(FailoverPartition));
    result->outages = g_array_new(FALSE, FALSE, sizeof(FailoverOutage));
    Sweep sweep = {g_array_new(FALSE, FALSE, sizeof(PartitionState)),
                   g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL), 0,
                   result->outages};
    const GArray *events = history_events(history);
    result->end_ns = MAX(history_ops_end_ns(history), 0);
    for (guint i = 0; i < events->len; i++) {
        const HistoryEvent *event = &g_array_index(events, HistoryEvent, i);
        result->end_ns = MAX(result->end_ns, event->time_ns);
        sweep_event(result, &sweep, event);
    }
    for (guint i = 0; i < sweep.states->len; i++) {
        PartitionState *p = &g_array_index(sweep.states, PartitionState, i);
        if (!p->led && p->offline)
            result->offline_at_end++;
        if (!p->led && p->unled_since_ns >= 0) {
            p->out.unavailable_ns += result->end_ns - p->unled_since_ns;
            g_array_index(result->outages, FailoverOutage, p->outage).end_ns = result->end_ns;
        }
        g_array_append_val(result->partitions, p->out);
    }
    g_array_sort(result->partitions, partition_compare);
    g_array_unref(sweep.states);
    g_hash_table_destroy(sweep.index_of);
    return result;
}

void
failover_result_free(FailoverResult *result)
{
    if (result == NULL)
        return;
    g_array_unref(result->windows);
    g_array_unref(result->partitions);
    g_array_unref(result->outages);
    g_free(result);
}

const GArray *
failover_result_windows(const FailoverResult *result)
{
    return result->windows;
}

const GArray *
failover_result_partitions(const FailoverResult *result)
{
    return result->partitions;
}

const GArray *
failover_result_outages(const FailoverResult *result)
{
    return result->outages;
}

gint64
failover_window_ns(const FailoverResult *result, const FailoverWindow *window)
{
    gint64 end = window->led_ns >= 0 ? window->led_ns : result->end_ns;
    KSIM_ASSERT(end >= window->lost_ns);
    return end - window->lost_ns;
}

double
failover_result_longest_ms(const FailoverResult *result)
{
    gint64 longest = 0;
    for (guint i = 0; i < result->windows->len; i++)
        longest = MAX(longest, failover_window_ns(
                                   result, &g_array_index(result->windows, FailoverWindow, i)));
    return (double)longest / 1e6;
}

guint
failover_result_offline_at_end(const FailoverResult *result)
{
    return result->offline_at_end;
}

gint64
failover_result_unavailable_ns(const FailoverResult *result)
{
    gint64 total = 0;
    for (guint i = 0; i < result->partitions->len; i++)
        total += g_array_index(result->partitions, FailoverPartition, i).unavailable_ns;
    return total;
}

static gint
worst_compare(gconstpointer a, gconstpointer b)
{
    const FailoverPartition *x = a, *y = b;
    if (x->unavailable_ns != y->unavailable_ns)
        return x->unavailable_ns > y->unavailable_ns ? -1 : 1;
    return partition_compare(a, b);
}

GArray *
failover_result_worst(const FailoverResult *result, guint n)
{
    GArray *worst = g_array_new(FALSE, FALSE, sizeof(FailoverPartition));
    for (guint i = 0; i < result->partitions->len; i++) {
        const FailoverPartition *p = &g_array_index(result->partitions, FailoverPartition, i);
        if (p->unavailable_ns > 0)
            g_array_append_val(worst, *p);
    }
    g_array_sort(worst, worst_compare);
    if (worst->len > n)
        g_array_set_size(worst, n);
    return worst;
}
