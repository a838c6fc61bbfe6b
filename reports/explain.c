/*
 * explain: chains of events behind the checker's examples (see explain.h).
 *
 * Invariants of an Explainer (explain_check_invariants):
 *  1. Each partition's list, and the cluster list, hold strictly increasing
 *     indices into history_events, so they are in time order.
 *  2. Every event with a partition >= 0 is in exactly its partition's list.
 *  3. The cluster list holds exactly the NODE, FAULT and SESSION events.
 *  4. Each partition's milestones are exactly the events of its list whose
 *     kind is a milestone kind (milestone_kind), in the same order.
 * The Explainer does not change after explain_new; the hash table is only
 * looked up, never iterated, so its order reaches no output.
 */
#include "explain.h"

#include <string.h>

#include "kafka_error.h"
#include "sim_assert.h"

/* Events shown when no election or truncation frames the story. */
#define CLUSTER_EVENTS_UNFRAMED 3

typedef struct {
    guint64 key;         /* topic << 32 | partition */
    GArray *events;      /* guint indices into history_events */
    GArray *milestones;  /* the indices among them a chain may tell (milestone_kind) */
    GHashTable *brokers; /* broker id + 1 (as a pointer) of every broker its events
                          * name, as broker or in an ISR; looked up only */
} PartitionEvents;

struct Explainer {
    const CheckerResult *result;
    const History *history;
    const GArray *events;  /* HistoryEvent, borrowed */
    GPtrArray *partitions; /* PartitionEvents, owned */
    GHashTable *by_key;    /* &PartitionEvents.key -> PartitionEvents */
    GArray *cluster;       /* guint indices of NODE, FAULT, SESSION events */
};

/* The sentences of one chain; middle steps are counted against a cap.
 * events[i] is the index in history_events sentence i tells, G_MAXUINT for
 * a sentence of no event (a send, the final log, a count). */
typedef struct {
    GPtrArray *sentences;
    guint steps;
    guint omitted;
    GArray *events;
} Chain;

/* What a chain of events after an acknowledgement is about. */
typedef struct {
    guint16 topic;
    gint32 partition;
    gint64 lo, hi;           /* the offsets of interest [lo, hi); lo < 0: unknown */
    guint after;             /* events after this index; G_MAXUINT: from the start */
    GHashTable *replicas;    /* broker id + 1 of the partition's final replicas (replica_set) */
    const GHashTable *named; /* the partition's PartitionEvents.brokers; NULL: none */
} Scope;

static guint64
partition_key(guint16 topic, gint32 partition)
{
    return ((guint64)topic << 32) | (guint32)partition;
}

static void
partition_events_free(gpointer data)
{
    PartitionEvents *p = data;
    g_array_free(p->events, TRUE);
    g_array_free(p->milestones, TRUE);
    g_hash_table_destroy(p->brokers);
    g_free(p);
}

static const HistoryEvent *
event_at(const Explainer *explainer, guint index)
{
    return &g_array_index(explainer->events, HistoryEvent, index);
}

static gboolean
is_cluster_kind(guint32 kind)
{
    return kind == HISTORY_EVENT_NODE || kind == HISTORY_EVENT_FAULT ||
           kind == HISTORY_EVENT_SESSION;
}

static void
broker_set_add(GHashTable *set, gint32 broker_id)
{
    if (broker_id >= 0)
        g_hash_table_add(set, GINT_TO_POINTER(broker_id + 1));
}

static gboolean
broker_set_has(const GHashTable *set, gint32 broker_id)
{
    return broker_id >= 0 &&
           g_hash_table_contains((GHashTable *)set, GINT_TO_POINTER(broker_id + 1));
}

/* The kinds partition_event_selected may tell: a chain walks only these, so
 * explaining a record costs the partition's elections and truncations, not
 * every acknowledgement after it. */
static gboolean
milestone_kind(HistoryEventKind kind)
{
    return kind == HISTORY_EVENT_ELECTED || kind == HISTORY_EVENT_OFFLINE ||
           kind == HISTORY_EVENT_TRUNCATED || kind == HISTORY_EVENT_RETENTION ||
           kind == HISTORY_EVENT_CONTROLLER;
}

static PartitionEvents *
partition_events_get(Explainer *explainer, guint16 topic, gint32 partition)
{
    guint64 key = partition_key(topic, partition);
    PartitionEvents *p = g_hash_table_lookup(explainer->by_key, &key);
    if (p != NULL)
        return p;
    p = g_new0(PartitionEvents, 1);
    p->key = key;
    p->events = g_array_new(FALSE, FALSE, sizeof(guint));
    p->milestones = g_array_new(FALSE, FALSE, sizeof(guint));
    p->brokers = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_ptr_array_add(explainer->partitions, p);
    g_hash_table_insert(explainer->by_key, &p->key, p);
    return p;
}

Explainer *
explain_new(const CheckerResult *result)
{
    KSIM_ASSERT(result != NULL);
    Explainer *explainer = g_new0(Explainer, 1);
    explainer->result = result;
    explainer->history = checker_result_history(result);
    explainer->events = history_events(explainer->history);
    explainer->partitions = g_ptr_array_new_with_free_func(partition_events_free);
    explainer->by_key = g_hash_table_new(g_int64_hash, g_int64_equal);
    explainer->cluster = g_array_new(FALSE, FALSE, sizeof(guint));
    KSIM_ASSERT(explainer->events->len < G_MAXUINT);
    for (guint i = 0; i < explainer->events->len; i++) {
        const HistoryEvent *event = event_at(explainer, i);
        if (event->partition >= 0) {
            PartitionEvents *p = partition_events_get(explainer, event->topic, event->partition);
            g_array_append_val(p->events, i);
            if (milestone_kind(event->kind))
                g_array_append_val(p->milestones, i);
            const gint32 *members;
            guint n = history_isr_members(explainer->history, event->isr, &members);
            for (guint m = 0; m < n; m++)
                broker_set_add(p->brokers, members[m]);
            broker_set_add(p->brokers, event->broker);
        }
        if (is_cluster_kind(event->kind))
            g_array_append_val(explainer->cluster, i);
    }
    return explainer;
}

void
explain_free(Explainer *explainer)
{
    if (explainer == NULL)
        return;
    g_hash_table_destroy(explainer->by_key);
    g_ptr_array_free(explainer->partitions, TRUE);
    g_array_free(explainer->cluster, TRUE);
    g_free(explainer);
}

const GArray *
explain_partition_events(const Explainer *explainer, guint16 topic, gint32 partition)
{
    guint64 key = partition_key(topic, partition);
    const PartitionEvents *p = g_hash_table_lookup(explainer->by_key, &key);
    return p != NULL ? p->events : NULL;
}

const GArray *
explain_partition_milestones(const Explainer *explainer, guint16 topic, gint32 partition)
{
    guint64 key = partition_key(topic, partition);
    const PartitionEvents *p = g_hash_table_lookup(explainer->by_key, &key);
    return p != NULL ? p->milestones : NULL;
}

/* The first position in `list` (increasing indices) holding an index > after. */
static guint
position_after(const GArray *list, guint after)
{
    if (after == G_MAXUINT)
        return 0;
    guint low = 0, high = list->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        if (g_array_index(list, guint, middle) <= after)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

/* The index of the last event at or before time_ns, or G_MAXUINT. */
static guint
event_index_at(const Explainer *explainer, gint64 time_ns)
{
    guint low = 0, high = explainer->events->len;
    while (low < high) {
        guint middle = low + (high - low) / 2;
        if (event_at(explainer, middle)->time_ns <= time_ns)
            low = middle + 1;
        else
            high = middle;
    }
    return low == 0 ? G_MAXUINT : low - 1;
}

/* ---- wording ---- */

const char *
explain_event_kind_name(guint32 kind)
{
    static const char *const names[] = {
        [HISTORY_EVENT_ACK] = "ack",
        [HISTORY_EVENT_ELECTED] = "elected",
        [HISTORY_EVENT_TRUNCATED] = "truncated",
        [HISTORY_EVENT_ISR_CHANGED] = "isr_changed",
        [HISTORY_EVENT_HW_CHANGED] = "hw_changed",
        [HISTORY_EVENT_NODE] = "node",
        [HISTORY_EVENT_FAULT] = "fault",
        [HISTORY_EVENT_OFFLINE] = "offline",
        [HISTORY_EVENT_VIOLATION] = "violation",
        [HISTORY_EVENT_CONTROLLER] = "controller",
        [HISTORY_EVENT_CONTROLLER_LOST] = "controller_lost",
        [HISTORY_EVENT_SESSION] = "session",
        [HISTORY_EVENT_TXN_RESUMED] = "txn_resumed",
        [HISTORY_EVENT_RETENTION] = "retention",
    };
    if (kind < G_N_ELEMENTS(names) && names[kind] != NULL)
        return names[kind];
    return "event";
}

/* "[1,2,3]" for an ISR set (transfer full). */
static char *
explain_isr_text(const History *history, guint32 isr)
{
    GString *text = g_string_new("[");
    const gint32 *members;
    guint n = history_isr_members(history, isr, &members);
    for (guint i = 0; i < n; i++)
        g_string_append_printf(text, "%s%d", i > 0 ? "," : "", members[i]);
    g_string_append_c(text, ']');
    return g_string_free(text, FALSE);
}

static char *
offsets_text(gint64 lo, gint64 hi)
{
    if (hi - lo <= 1)
        return g_strdup_printf("offset %" G_GINT64_FORMAT, lo);
    return g_strdup_printf("offsets %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT, lo, hi - 1);
}

static const char *
acks_text(gint32 acks)
{
    if (acks == 0)
        return "0";
    return acks == 1 ? "1" : "all";
}

static char *
ack_sentence(const Explainer *explainer, const HistoryEvent *event)
{
    g_autofree char *where =
        checker_partition_label(explainer->history, event->topic, event->partition);
    g_autofree char *offsets = offsets_text(event->offset, event->offset_end);
    g_autofree char *isr = explain_isr_text(explainer->history, event->isr);
    const char *verb = event->acks == 0 ? "appended" : "acknowledged";
    return g_strdup_printf("broker %d, leader of %s in epoch %d, %s %s (acks=%s) while its HW "
                           "was %" G_GINT64_FORMAT " and its ISR %s",
                           event->broker, where, event->leader_epoch, verb, offsets,
                           acks_text(event->acks), event->hw, isr);
}

char *
explain_event_sentence(const Explainer *explainer, guint index)
{
    KSIM_ASSERT(index < explainer->events->len);
    const HistoryEvent *event = event_at(explainer, index);
    if (event->kind == HISTORY_EVENT_ACK)
        return ack_sentence(explainer, event);
    if (event->text != NULL)
        return g_strdup(event->text);
    return g_strdup_printf("%s event of broker %d", explain_event_kind_name(event->kind),
                           event->broker);
}

/* ---- chains ---- */

static Chain
chain_new(void)
{
    Chain chain = {g_ptr_array_new_with_free_func(g_free), 0, 0,
                   g_array_new(FALSE, FALSE, sizeof(guint))};
    return chain;
}

/* The chain's sentences; its event list goes to *events, or is freed. */
static GPtrArray *
chain_finish(Chain *chain, GArray **events)
{
    KSIM_ASSERT(chain->sentences->len == chain->events->len);
    if (events != NULL)
        *events = chain->events;
    else
        g_array_free(chain->events, TRUE);
    return chain->sentences;
}

static void
chain_add_event(Chain *chain, guint index, char *sentence)
{
    g_ptr_array_add(chain->sentences, sentence);
    g_array_append_val(chain->events, index);
}

static void
chain_add(Chain *chain, char *sentence)
{
    chain_add_event(chain, G_MAXUINT, sentence);
}

/* Adds a middle step telling event `index` unless the cap is reached. */
static void
chain_step(Chain *chain, guint index, char *sentence)
{
    if (chain->steps >= EXPLAIN_STEPS_MAX - 4) {
        chain->omitted++;
        g_free(sentence);
        return;
    }
    chain->steps++;
    chain_add_event(chain, index, sentence);
}

static void
chain_close_steps(Chain *chain)
{
    if (chain->omitted > 0)
        chain_add(chain, g_strdup_printf("(%u more events are left out; the run's events CSV "
                                         "lists them all.)",
                                         chain->omitted));
    chain->omitted = 0;
}

/* "At T s, SENTENCE." with an optional remark before the full stop. */
static char *
timed(gint64 time_ns, const char *sentence, const char *remark)
{
    return g_strdup_printf("At %.3f s, %s%s.", time_ns / 1e9, sentence, remark ? remark : "");
}

static char *
send_sentence(const Explainer *explainer, guint64 op)
{
    CheckerSend view;
    const CheckerSend *send = checker_result_send(explainer->result, op, &view) ? &view : NULL;
    if (send == NULL)
        return g_strdup_printf(
            "No recorded send produced the value (operation %" G_GUINT64_FORMAT ").", op);
    g_autofree char *who = checker_process_label(explainer->history, send->process);
    g_autofree char *where =
        checker_partition_label(explainer->history, send->topic, send->partition);
    g_autofree char *head = g_strdup_printf("At %.3f s, %s sent value %" G_GUINT64_FORMAT " to %s",
                                            send->invoke_ns / 1e9, who, send->value, where);
    const char *error = kafka_error_name((KafkaError)send->error);
    double done_s = send->complete_ns / 1e9;
    switch ((CheckerOutcome)send->outcome) {
    case CHECKER_SEND_OK:
        return g_strdup_printf("%s; it was acknowledged at %.3f s with offset %" G_GINT64_FORMAT
                               ".",
                               head, done_s, send->offset);
    case CHECKER_SEND_SENT:
        return g_strdup_printf("%s with acks=0, so the client counted it as written without "
                               "any answer.",
                               head);
    case CHECKER_SEND_FAIL:
        return g_strdup_printf("%s; it failed at %.3f s with %s.", head, done_s, error);
    case CHECKER_SEND_INFO:
        return g_strdup_printf("%s; its outcome became unknown at %.3f s (%s).", head, done_s,
                               error);
    default:
        return g_strdup_printf("%s; it was never answered.", head);
    }
}

static gboolean
covers(const HistoryEvent *event, gint64 lo, gint64 hi)
{
    if (lo < 0)
        return TRUE;
    return event->offset < hi && event->offset_end > lo;
}

/* The last ACK of the partition covering `offset` at or before time_ns, or
 * G_MAXUINT. With `epoch` >= 0, only an ACK of that leader epoch counts. */
static guint
ack_find_before(const Explainer *explainer, const GArray *list, gint64 offset, gint32 epoch,
                gint64 time_ns)
{
    guint end = position_after(list, event_index_at(explainer, time_ns));
    for (guint k = end; k-- > 0;) {
        guint index = g_array_index(list, guint, k);
        const HistoryEvent *event = event_at(explainer, index);
        if (event->kind != HISTORY_EVENT_ACK || !covers(event, offset, offset + 1))
            continue;
        if (epoch < 0 || event->leader_epoch == epoch)
            return index;
    }
    return G_MAXUINT;
}

/* The first acks=0 append of the partition at or after time_ns, or G_MAXUINT. */
static guint
ack_find_unanswered(const Explainer *explainer, const GArray *list, gint64 time_ns)
{
    guint before = event_index_at(explainer, time_ns - 1);
    for (guint k = position_after(list, before); k < list->len; k++) {
        guint index = g_array_index(list, guint, k);
        const HistoryEvent *event = event_at(explainer, index);
        if (event->kind == HISTORY_EVENT_ACK && event->acks == 0)
            return index;
    }
    return G_MAXUINT;
}

/* The remark after an acknowledgement: was the offset committed then? */
static const char *
ack_remark(const HistoryEvent *ack, gint64 offset)
{
    if (offset < 0)
        return NULL;
    if (ack->hw > offset)
        return " — the HW had passed the offset, so every ISR member held the record";
    if (ack->acks == 0)
        return " — nobody waited for a follower to copy it";
    return " — the HW had not reached the offset: no follower was known to hold the record "
           "when it was acknowledged";
}

static void
chain_ack(Chain *chain, const Explainer *explainer, guint index, gint64 offset, gboolean guessed)
{
    const HistoryEvent *ack = event_at(explainer, index);
    g_autofree char *sentence = ack_sentence(explainer, ack);
    g_autofree char *text = timed(ack->time_ns, sentence, ack_remark(ack, offset));
    if (guessed)
        chain_add_event(chain, index,
                        g_strdup_printf("Probably the record's append (the first acks=0 append "
                                        "on the partition after the send): %s",
                                        text));
    else
        chain_add_event(chain, index, g_steal_pointer(&text));
}

/* The brokers its events name (a replica that never came back has no final
 * state); NULL when it has none. */
static const GHashTable *
named_set(const Explainer *explainer, guint16 topic, gint32 partition)
{
    guint64 key = partition_key(topic, partition);
    const PartitionEvents *p = g_hash_table_lookup(explainer->by_key, &key);
    return p != NULL ? p->brokers : NULL;
}

/* The partition's replicas recorded at the end; with named_set, every
 * broker that held one. */
static GHashTable *
replica_set(const Explainer *explainer, guint16 topic, gint32 partition)
{
    GHashTable *set = g_hash_table_new(g_direct_hash, g_direct_equal);
    const GArray *replicas = history_replicas(explainer->history);
    for (guint i = 0; i < replicas->len; i++) {
        const HistoryReplica *r = &g_array_index(replicas, HistoryReplica, i);
        if (r->topic == topic && r->partition == partition)
            broker_set_add(set, r->broker);
    }
    return set;
}

/* TRUE for the partition events a chain tells. */
static gboolean
partition_event_selected(const HistoryEvent *event, const Scope *scope)
{
    switch (event->kind) {
    case HISTORY_EVENT_ELECTED:
    case HISTORY_EVENT_OFFLINE:
        return TRUE;
    case HISTORY_EVENT_TRUNCATED:
    case HISTORY_EVENT_RETENTION:
        return covers(event, scope->lo, scope->hi);
    case HISTORY_EVENT_CONTROLLER:
        return event->text != NULL && strstr(event->text, "unclean") != NULL;
    default:
        return FALSE;
    }
}

static gboolean
cluster_event_selected(const HistoryEvent *event, const Scope *scope)
{
    if (event->broker < 0)
        return TRUE;
    return broker_set_has(scope->replicas, event->broker) ||
           (scope->named != NULL && broker_set_has(scope->named, event->broker));
}

/* The index of the last event a chain should reach: the later of the last
 * truncation that removed the offsets and the last election of a leader
 * without them (either may come first: a follower truncates when told of
 * the new leader, possibly before the leader records its election); else
 * the last selected event; G_MAXUINT when nothing is selected. */
static guint
chain_end(const Explainer *explainer, const GArray *list, const Scope *scope)
{
    guint truncated = G_MAXUINT, without = G_MAXUINT, last = G_MAXUINT;
    for (guint k = position_after(list, scope->after); k < list->len; k++) {
        guint index = g_array_index(list, guint, k);
        const HistoryEvent *event = event_at(explainer, index);
        if (!partition_event_selected(event, scope))
            continue;
        last = index;
        if (event->kind == HISTORY_EVENT_TRUNCATED && scope->lo >= 0)
            truncated = index;
        if (event->kind == HISTORY_EVENT_ELECTED && scope->lo >= 0 && event->offset <= scope->lo)
            without = index;
    }
    if (truncated != G_MAXUINT && without != G_MAXUINT)
        return MAX(truncated, without);
    if (truncated != G_MAXUINT)
        return truncated;
    return without != G_MAXUINT ? without : last;
}

static char *
election_remark(const HistoryEvent *event, const Scope *scope)
{
    if (scope->lo < 0)
        return NULL;
    g_autofree char *offsets = offsets_text(scope->lo, scope->hi);
    if (event->offset <= scope->lo)
        return g_strdup_printf(" — its log ended before %s, so it did not have the record",
                               offsets);
    if (event->offset >= scope->hi)
        return g_strdup_printf(" — its log reached past %s", offsets);
    return g_strdup_printf(" — its log held only part of %s", offsets);
}

static char *
event_step(const Explainer *explainer, guint index, const Scope *scope)
{
    const HistoryEvent *event = event_at(explainer, index);
    g_autofree char *sentence = explain_event_sentence(explainer, index);
    g_autofree char *remark = NULL;
    if (event->kind == HISTORY_EVENT_ELECTED)
        remark = election_remark(event, scope);
    else if ((event->kind == HISTORY_EVENT_TRUNCATED || event->kind == HISTORY_EVENT_RETENTION) &&
             scope->lo >= 0) {
        g_autofree char *removed =
            offsets_text(MAX(scope->lo, event->offset), MIN(scope->hi, event->offset_end));
        remark = g_strdup_printf(" — removing %s", removed);
    }
    return timed(event->time_ns, sentence, remark);
}

/* Tells, in time order, the selected partition and cluster events after
 * scope->after, up to the chain's end. */
static void
chain_events(Chain *chain, const Explainer *explainer, const Scope *scope)
{
    static const GArray empty = {NULL, 0};
    const GArray *list = explain_partition_milestones(explainer, scope->topic, scope->partition);
    list = list != NULL ? list : &empty;
    guint end = chain_end(explainer, list, scope);
    guint cluster_left = end == G_MAXUINT ? CLUSTER_EVENTS_UNFRAMED : G_MAXUINT;
    guint p = position_after(list, scope->after);
    guint c = position_after(explainer->cluster, scope->after);
    while (cluster_left > 0) {
        guint pi = p < list->len ? g_array_index(list, guint, p) : G_MAXUINT;
        guint ci =
            c < explainer->cluster->len ? g_array_index(explainer->cluster, guint, c) : G_MAXUINT;
        guint next = MIN(pi, ci);
        if (next == G_MAXUINT || (end != G_MAXUINT && next > end))
            break;
        gboolean from_partition = next == pi;
        p += from_partition;
        c += !from_partition;
        const HistoryEvent *event = event_at(explainer, next);
        gboolean selected = from_partition ? partition_event_selected(event, scope)
                                           : cluster_event_selected(event, scope);
        if (!selected)
            continue;
        chain_step(chain, next, event_step(explainer, next, scope));
        cluster_left -= !from_partition && end == G_MAXUINT;
    }
    chain_close_steps(chain);
}

/* ---- the final log ---- */

static char *
final_place(const Explainer *explainer, const CheckerPartition *partition)
{
    g_autofree char *where =
        checker_partition_label(explainer->history, partition->topic, partition->partition);
    if (partition->offline)
        return g_strdup_printf("the committed log of %s (no replica was online; broker %d's "
                               "disk, HW %" G_GINT64_FORMAT ")",
                               where, partition->broker, partition->hw);
    return g_strdup_printf("the committed log of %s (broker %d, HW %" G_GINT64_FORMAT ")", where,
                           partition->broker, partition->hw);
}

static char *
record_text(const Explainer *explainer, const CheckerPartition *p, const HistoryRecord *record)
{
    gint32 epoch = history_epoch_at(p->epochs, record->offset);
    CheckerSend view;
    const CheckerSend *send =
        checker_result_send_of_value(explainer->result, record->value, &view) ? &view : NULL;
    if (send == NULL)
        return g_strdup_printf("value %" G_GUINT64_FORMAT " (sent by no recorded client, "
                               "epoch %d)",
                               record->value, epoch);
    g_autofree char *who = checker_process_label(explainer->history, send->process);
    return g_strdup_printf("value %" G_GUINT64_FORMAT " (sent by %s, epoch %d)", record->value, who,
                           epoch);
}

/* What the final committed log holds at `offset`, and whether `value` is in
 * it at all. */
static char *
final_sentence(const Explainer *explainer, guint16 topic, gint32 partition, gint64 offset,
               guint64 value, gboolean value_present)
{
    const CheckerPartition *p = checker_result_partition(explainer->result, topic, partition);
    g_autofree char *where = checker_partition_label(explainer->history, topic, partition);
    if (p == NULL)
        return g_strdup_printf("No replica of %s was recorded at the end of the run.", where);
    g_autofree char *place = final_place(explainer, p);
    g_autofree char *absent =
        value_present
            ? g_strdup("")
            : g_strdup_printf("; value %" G_GUINT64_FORMAT " is at no offset of it", value);
    if (offset < 0)
        return g_strdup_printf("At the end, %s holds %u records%s.", place, p->records_committed,
                               absent);
    if (offset >= p->hw)
        return g_strdup_printf("At the end, %s ends below offset %" G_GINT64_FORMAT "%s.", place,
                               offset, absent);
    const HistoryRecord *record = checker_partition_record_at(p, offset);
    if (record == NULL)
        return g_strdup_printf("At the end, %s holds nothing at offset %" G_GINT64_FORMAT "%s.",
                               place, offset, absent);
    g_autofree char *holds = record_text(explainer, p, record);
    return g_strdup_printf("At the end, %s holds %s at offset %" G_GINT64_FORMAT "%s.", place,
                           holds, offset, absent);
}

/* ---- per anomaly ---- */

static void
explain_lost(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    CheckerSend view;
    gboolean is_send = checker_result_send(explainer->result, example->op, &view);
    KSIM_ASSERT(is_send);
    const CheckerSend *send = &view;
    chain_add(chain, send_sentence(explainer, example->op));
    g_autoptr(GHashTable) replicas = replica_set(explainer, example->topic, example->partition);
    Scope scope = {example->topic,
                   example->partition,
                   example->offset,
                   example->offset + 1,
                   event_index_at(explainer, send->invoke_ns - 1),
                   replicas,
                   named_set(explainer, example->topic, example->partition)};
    const GArray *list = explain_partition_events(explainer, example->topic, example->partition);
    guint ack = G_MAXUINT;
    if (list != NULL && example->offset >= 0)
        ack = ack_find_before(explainer, list, example->offset, -1, send->complete_ns);
    else if (list != NULL)
        ack = ack_find_unanswered(explainer, list, send->invoke_ns);
    if (ack != G_MAXUINT) {
        const HistoryEvent *event = event_at(explainer, ack);
        chain_ack(chain, explainer, ack, example->offset, example->offset < 0);
        scope.after = ack;
        scope.lo = event->offset;
        scope.hi = event->offset_end;
        if (example->offset >= 0) {
            scope.lo = example->offset;
            scope.hi = example->offset + 1;
        }
    } else {
        chain_add(chain, g_strdup("No acknowledgement event of the partition covers the "
                                  "record."));
    }
    chain_events(chain, explainer, &scope);
    chain_add(chain, final_sentence(explainer, example->topic, example->partition, example->offset,
                                    example->value, FALSE));
}

/* The ACK that wrote the committed record at `offset`: the last one of the
 * record's leader epoch covering the offset. */
static void
chain_record_ack(Chain *chain, const Explainer *explainer, guint16 topic, gint32 partition,
                 gint64 offset)
{
    const CheckerPartition *p = checker_result_partition(explainer->result, topic, partition);
    const HistoryRecord *record = p != NULL ? checker_partition_record_at(p, offset) : NULL;
    const GArray *list = explain_partition_events(explainer, topic, partition);
    if (record == NULL || list == NULL)
        return;
    gint32 epoch = history_epoch_at(p->epochs, offset);
    guint ack = ack_find_before(explainer, list, offset, epoch, G_MAXINT64);
    if (ack == G_MAXUINT) {
        chain_add(chain, g_strdup_printf("No acknowledgement in epoch %d covers offset "
                                         "%" G_GINT64_FORMAT ".",
                                         epoch, offset));
        return;
    }
    chain_ack(chain, explainer, ack, -1, FALSE);
}

static void
explain_duplicate(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    chain_add(chain, send_sentence(explainer, example->op));
    g_autofree char *first = final_sentence(explainer, example->topic, example->partition,
                                            example->offset, example->value, TRUE);
    g_autofree char *second = final_sentence(explainer, example->topic, example->partition_other,
                                             example->offset_other, example->value, TRUE);
    chain_add(chain, g_steal_pointer(&first));
    chain_add(chain, g_steal_pointer(&second));
    chain_record_ack(chain, explainer, example->topic, example->partition, example->offset);
    chain_record_ack(chain, explainer, example->topic, example->partition_other,
                     example->offset_other);
}

static void
explain_nonmonotonic(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    chain_add(chain, send_sentence(explainer, example->op));
    chain_add(chain, send_sentence(explainer, example->op_other));
    chain_add(chain, final_sentence(explainer, example->topic, example->partition,
                                    example->offset_other, example->value_other, TRUE));
    chain_add(chain, final_sentence(explainer, example->topic, example->partition, example->offset,
                                    example->value, TRUE));
    chain_record_ack(chain, explainer, example->topic, example->partition, example->offset_other);
    chain_record_ack(chain, explainer, example->topic, example->partition, example->offset);
}

/* A replica that disagrees with the committed log: who wrote each side, and
 * the elections and truncations at the offset. */
static void
explain_divergence(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    g_autofree char *where =
        checker_partition_label(explainer->history, example->topic, example->partition);
    chain_add(chain, g_strdup_printf(
                         "Broker %d's replica of %s holds value %" G_GUINT64_FORMAT
                         " at offset %" G_GINT64_FORMAT ", below its HW and the committed log's.",
                         example->broker, where, example->value_other, example->offset));
    chain_add(chain, final_sentence(explainer, example->topic, example->partition, example->offset,
                                    example->value, TRUE));
    chain_record_ack(chain, explainer, example->topic, example->partition, example->offset);
    g_autoptr(GHashTable) replicas = replica_set(explainer, example->topic, example->partition);
    Scope scope = {example->topic,
                   example->partition,
                   example->offset,
                   example->offset + 1,
                   G_MAXUINT,
                   replicas,
                   named_set(explainer, example->topic, example->partition)};
    chain_events(chain, explainer, &scope);
}

static void
explain_inconsistent(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    if (example->broker >= 0) {
        explain_divergence(chain, explainer, example);
        return;
    }
    CheckerSend view;
    gboolean is_send = checker_result_send(explainer->result, example->op, &view);
    KSIM_ASSERT(is_send);
    const CheckerSend *send = &view;
    chain_add(chain, send_sentence(explainer, example->op));
    const GArray *list = explain_partition_events(explainer, example->topic, example->partition);
    guint ack = G_MAXUINT;
    if (list != NULL)
        ack = ack_find_before(explainer, list, example->offset, -1, send->complete_ns);
    if (ack != G_MAXUINT)
        chain_ack(chain, explainer, ack, example->offset, FALSE);
    chain_add(chain, final_sentence(explainer, example->topic, example->partition, example->offset,
                                    example->value, TRUE));
    chain_add(chain, final_sentence(explainer, example->topic, example->partition_other,
                                    example->offset_other, example->value, TRUE));
    chain_record_ack(chain, explainer, example->topic, example->partition_other,
                     example->offset_other);
}

static void
explain_failed_present(Chain *chain, const Explainer *explainer, const CheckerExample *example)
{
    chain_add(chain, send_sentence(explainer, example->op));
    chain_record_ack(chain, explainer, example->topic, example->partition, example->offset);
    chain_add(chain, final_sentence(explainer, example->topic, example->partition, example->offset,
                                    example->value, TRUE));
}

/* A record retention deleted after it was committed: the send, the
 * acknowledgement, the deletion, and where the committed log starts now. */
GPtrArray *
explain_expired(const Explainer *explainer, const CheckerExample *example)
{
    KSIM_ASSERT(explainer != NULL);
    KSIM_ASSERT(example != NULL);
    KSIM_ASSERT(example->op_other < explainer->events->len);
    const HistoryEvent *deletion = event_at(explainer, (guint)example->op_other);
    KSIM_ASSERT(deletion->kind == HISTORY_EVENT_RETENTION);
    Chain chain = chain_new();
    chain_add(&chain, send_sentence(explainer, example->op));
    CheckerSend send;
    const GArray *list = explain_partition_events(explainer, example->topic, example->partition);
    if (list != NULL && example->offset >= 0 &&
        checker_result_send(explainer->result, example->op, &send)) {
        gint64 until_ns = send.complete_ns >= 0 ? send.complete_ns : G_MAXINT64;
        guint ack = ack_find_before(explainer, list, example->offset, -1, until_ns);
        if (ack != G_MAXUINT)
            chain_ack(&chain, explainer, ack, example->offset, FALSE);
    }
    g_autofree char *sentence = explain_event_sentence(explainer, (guint)example->op_other);
    g_autofree char *remark = g_strdup_printf(" — removing offset %" G_GINT64_FORMAT
                                              ", which held value %" G_GUINT64_FORMAT,
                                              example->offset, example->value);
    chain_add_event(&chain, (guint)example->op_other, timed(deletion->time_ns, sentence, remark));
    const CheckerPartition *p =
        checker_result_partition(explainer->result, example->topic, example->partition);
    if (p != NULL) {
        g_autofree char *place = final_place(explainer, p);
        chain_add(&chain,
                  g_strdup_printf("At the end, %s starts at offset %" G_GINT64_FORMAT
                                  ": the record was kept as long as retention promised, then "
                                  "deleted — expired, not lost.",
                                  place, p->log_start));
    }
    return chain_finish(&chain, NULL);
}

GPtrArray *
explain_example(const Explainer *explainer, const CheckerExample *example)
{
    return explain_example_events(explainer, example, NULL);
}

GPtrArray *
explain_example_events(const Explainer *explainer, const CheckerExample *example, GArray **events)
{
    KSIM_ASSERT(explainer != NULL);
    KSIM_ASSERT(example != NULL);
    Chain chain = chain_new();
    switch (example->anomaly) {
    case CHECKER_LOST_WRITE:
        explain_lost(&chain, explainer, example);
        break;
    case CHECKER_DUPLICATE:
        explain_duplicate(&chain, explainer, example);
        break;
    case CHECKER_NONMONOTONIC_SEND:
        explain_nonmonotonic(&chain, explainer, example);
        break;
    case CHECKER_INCONSISTENT_OFFSETS:
        explain_inconsistent(&chain, explainer, example);
        break;
    case CHECKER_FAILED_BUT_PRESENT:
        explain_failed_present(&chain, explainer, example);
        break;
    default:
        KSIM_ASSERT(!"unknown anomaly");
    }
    KSIM_ASSERT(chain.sentences->len > 0);
    return chain_finish(&chain, events);
}

/* ---- invariants ---- */

static void
check_increasing(const GArray *list)
{
    for (guint k = 1; k < list->len; k++)
        KSIM_ASSERT(g_array_index(list, guint, k - 1) < g_array_index(list, guint, k));
}

void
explain_check_invariants(const Explainer *explainer)
{
    guint in_partitions = 0, with_partition = 0, cluster = 0;
    for (guint i = 0; i < explainer->partitions->len; i++) {
        const PartitionEvents *p = g_ptr_array_index(explainer->partitions, i);
        check_increasing(p->events);
        in_partitions += p->events->len;
        guint milestones = 0;
        for (guint k = 0; k < p->events->len; k++) {
            guint index = g_array_index(p->events, guint, k);
            const HistoryEvent *event = event_at(explainer, index);
            KSIM_ASSERT(partition_key(event->topic, event->partition) == p->key);
            if (milestone_kind(event->kind)) {
                KSIM_ASSERT(milestones < p->milestones->len);
                KSIM_ASSERT(g_array_index(p->milestones, guint, milestones) == index);
                milestones++;
            }
        }
        KSIM_ASSERT(milestones == p->milestones->len);
    }
    check_increasing(explainer->cluster);
    for (guint i = 0; i < explainer->events->len; i++) {
        const HistoryEvent *event = event_at(explainer, i);
        with_partition += event->partition >= 0;
        cluster += is_cluster_kind(event->kind);
    }
    KSIM_ASSERT(in_partitions == with_partition);
    KSIM_ASSERT(cluster == explainer->cluster->len);
}
