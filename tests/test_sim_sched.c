/*
 * Unit tests for sim_sched, the event queue: order by (time, insertion), ties
 * in FIFO order (also for events pushed during dispatch), cancellation (never
 * popped, idempotent, drop_fn called), hold/unhold, and a property test of
 * random push/pop/cancel sequences against a sorted reference list.
 */
#include "sim_sched.h"

#include "sim_rng.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* ---- helpers ---- */

/* What the events of a test did: the tags of the events run and dropped, in
 * order. Events carry their tag in arg_u64. */
typedef struct {
    SimSched *sched;
    GArray *ran;     /* guint64 tags */
    GArray *dropped; /* guint64 tags */
} Log;

static void
log_init(Log *log)
{
    log->sched = sim_sched_new();
    log->ran = g_array_new(FALSE, FALSE, sizeof(guint64));
    log->dropped = g_array_new(FALSE, FALSE, sizeof(guint64));
}

static void
log_clear(Log *log)
{
    sim_sched_free(log->sched);
    g_array_free(log->ran, TRUE);
    g_array_free(log->dropped, TRUE);
}

static void
record_run(void *ctx, void *arg, guint64 tag)
{
    Log *log = ctx;
    (void)arg;
    g_array_append_val(log->ran, tag);
}

static void
record_drop(void *ctx, void *arg, guint64 tag)
{
    Log *log = ctx;
    (void)arg;
    g_array_append_val(log->dropped, tag);
}

static SimEventId
push(Log *log, gint64 time_ns, guint64 tag)
{
    return sim_sched_push(log->sched, time_ns, record_run, record_drop, log, NULL, tag, 0, 0);
}

/* Pops and runs every event, checking that time never goes backwards. */
static void
run_all(Log *log)
{
    SimEvent event;
    gint64 last_ns = G_MININT64;
    while (sim_sched_pop(log->sched, &event)) {
        assert_true(event.time_ns >= last_ns);
        last_ns = event.time_ns;
        event.fn(event.ctx, event.arg, event.arg_u64);
        sim_sched_check_invariants(log->sched);
    }
}

static void
assert_tags(const GArray *tags, const guint64 *expected, guint count)
{
    assert_int_equal(tags->len, count);
    for (guint i = 0; i < count; i++)
        assert_int_equal(g_array_index(tags, guint64, i), expected[i]);
}

/* ---- order ---- */

static void
test_sim_sched_orders_by_time_then_insertion(void **state)
{
    /* Goal: events pop by time, and events at equal times in push order. */
    (void)state;
    static const struct {
        gint64 time_ns;
        guint64 tag;
    } pushes[] = {
        {30, 1}, {10, 2}, {20, 3}, {10, 4}, {0, 5}, {30, 6}, {10, 7}, {20, 8}, {0, 9}, {30, 10},
    };
    static const guint64 expected[] = {5, 9, 2, 4, 7, 3, 8, 1, 6, 10};
    Log log;
    log_init(&log);
    for (gsize i = 0; i < G_N_ELEMENTS(pushes); i++)
        push(&log, pushes[i].time_ns, pushes[i].tag);
    assert_int_equal(sim_sched_size(log.sched), G_N_ELEMENTS(pushes));
    assert_int_equal(sim_sched_peek_time(log.sched), 0);
    run_all(&log);
    assert_tags(log.ran, expected, G_N_ELEMENTS(expected));
    assert_int_equal(log.dropped->len, 0);
    log_clear(&log);
}

static void
test_sim_sched_many_ties_keep_fifo(void **state)
{
    /* Goal: thousands of events at one time pop exactly in push order. */
    (void)state;
    Log log;
    log_init(&log);
    for (guint64 tag = 0; tag < 5000; tag++)
        push(&log, 7, tag);
    run_all(&log);
    assert_int_equal(log.ran->len, 5000);
    for (guint i = 0; i < log.ran->len; i++)
        assert_int_equal(g_array_index(log.ran, guint64, i), i);
    log_clear(&log);
}

/* An event that, when run, pushes its follow-up (tag + 100) at its own time. */
static void
push_follow_up(void *ctx, void *arg, guint64 tag)
{
    Log *log = ctx;
    gint64 now_ns = *(const gint64 *)arg;
    g_array_append_val(log->ran, tag);
    push(log, now_ns, tag + 100);
}

static void
test_sim_sched_push_during_dispatch_runs_after_due(void **state)
{
    /* Goal: an event pushed for the current time during dispatch runs after
     * every event already due at that time, and before later times. */
    (void)state;
    static const gint64 time_ns = 50;
    Log log;
    log_init(&log);
    for (guint64 tag = 1; tag <= 3; tag++)
        sim_sched_push(log.sched, time_ns, push_follow_up, NULL, &log, (void *)&time_ns, tag, 0, 0);
    push(&log, time_ns + 1, 9);
    run_all(&log);
    static const guint64 expected[] = {1, 2, 3, 101, 102, 103, 9};
    assert_tags(log.ran, expected, G_N_ELEMENTS(expected));
    log_clear(&log);
}

static void
test_sim_sched_empty_queue(void **state)
{
    /* Goal: an empty queue pops and peeks nothing and reports no time. */
    (void)state;
    Log log;
    log_init(&log);
    SimEvent event;
    assert_false(sim_sched_pop(log.sched, &event));
    assert_false(sim_sched_peek(log.sched, &event));
    assert_int_equal(sim_sched_peek_time(log.sched), G_MAXINT64);
    assert_int_equal(sim_sched_size(log.sched), 0);
    assert_false(sim_sched_cancel(log.sched, SIM_EVENT_ID_NONE));
    assert_false(sim_sched_pending(log.sched, SIM_EVENT_ID_NONE));
    log_clear(&log);
}

static void
test_sim_sched_peek_matches_pop(void **state)
{
    /* Goal: peek shows the event pop then returns, with every field intact. */
    (void)state;
    Log log;
    log_init(&log);
    int marker = 0;
    sim_sched_push(log.sched, 40, record_run, record_drop, &log, &marker, 77, 3, 9);
    push(&log, 60, 1);
    SimEvent peeked, popped;
    assert_true(sim_sched_peek(log.sched, &peeked));
    assert_int_equal(sim_sched_size(log.sched), 2);
    assert_true(sim_sched_pop(log.sched, &popped));
    assert_memory_equal(&peeked, &popped, sizeof peeked);
    assert_int_equal(popped.time_ns, 40);
    assert_ptr_equal(popped.fn, record_run);
    assert_ptr_equal(popped.drop_fn, record_drop);
    assert_ptr_equal(popped.ctx, &log);
    assert_ptr_equal(popped.arg, &marker);
    assert_int_equal(popped.arg_u64, 77);
    assert_int_equal(popped.owner, 3);
    assert_int_equal(popped.incarnation, 9);
    assert_int_equal(sim_sched_peek_time(log.sched), 60);
    log_clear(&log);
}

/* ---- cancel ---- */

static void
test_sim_sched_cancelled_event_never_pops(void **state)
{
    /* Goal: cancelled events are not popped, the others keep their order,
     * and cancelling calls drop_fn at once. */
    (void)state;
    Log log;
    log_init(&log);
    SimEventId ids[10];
    for (guint64 tag = 0; tag < 10; tag++)
        ids[tag] = push(&log, (gint64)(tag % 3), tag);
    static const guint64 cancelled[] = {0, 4, 5, 9};
    for (gsize i = 0; i < G_N_ELEMENTS(cancelled); i++) {
        assert_true(sim_sched_cancel(log.sched, ids[cancelled[i]]));
        assert_false(sim_sched_pending(log.sched, ids[cancelled[i]]));
        sim_sched_check_invariants(log.sched);
    }
    assert_tags(log.dropped, cancelled, G_N_ELEMENTS(cancelled));
    assert_int_equal(sim_sched_size(log.sched), 6);
    /* Time 0 had 0, 3, 6, 9; time 1 had 1, 4, 7; time 2 had 2, 5, 8. */
    static const guint64 expected[] = {3, 6, 1, 7, 2, 8};
    run_all(&log);
    assert_tags(log.ran, expected, G_N_ELEMENTS(expected));
    log_clear(&log);
}

static void
test_sim_sched_cancel_twice_or_after_pop_is_false(void **state)
{
    /* Goal: a handle can be cancelled once; cancelling it again, or after it
     * ran, returns FALSE and calls no drop_fn. */
    (void)state;
    Log log;
    log_init(&log);
    SimEventId first = push(&log, 1, 1);
    SimEventId second = push(&log, 2, 2);
    assert_true(sim_sched_pending(log.sched, first));
    assert_true(sim_sched_cancel(log.sched, first));
    assert_false(sim_sched_cancel(log.sched, first));
    run_all(&log);
    assert_false(sim_sched_pending(log.sched, second));
    assert_false(sim_sched_cancel(log.sched, second));
    static const guint64 dropped[] = {1};
    assert_tags(log.dropped, dropped, 1);
    static const guint64 ran[] = {2};
    assert_tags(log.ran, ran, 1);
    log_clear(&log);
}

static void
test_sim_sched_stale_handle_spares_slot_reuser(void **state)
{
    /* Goal: after a slot is reused, the old handle no longer names anything,
     * so cancelling it cannot cancel the new event. */
    (void)state;
    Log log;
    log_init(&log);
    SimEventId old_id = push(&log, 5, 1);
    assert_true(sim_sched_cancel(log.sched, old_id));
    SimEventId new_id = push(&log, 5, 2);
    assert_int_equal(new_id.slot, old_id.slot);
    assert_true(new_id.seq != old_id.seq);
    assert_false(sim_sched_cancel(log.sched, old_id));
    assert_false(sim_sched_pending(log.sched, old_id));
    assert_true(sim_sched_pending(log.sched, new_id));
    run_all(&log);
    static const guint64 ran[] = {2};
    assert_tags(log.ran, ran, 1);
    log_clear(&log);
}

static void
test_sim_sched_drop_fn_on_cancel_and_free(void **state)
{
    /* Goal: drop_fn runs for every event discarded without running (by
     * cancel, or pending or held at free), and never for popped events. */
    (void)state;
    Log log;
    log_init(&log);
    SimEventId cancelled = push(&log, 1, 1);
    push(&log, 2, 2);
    push(&log, 3, 3);
    push(&log, 4, 4);
    sim_sched_push(log.sched, 5, record_run, NULL, &log, NULL, 5, 0, 0); /* no drop_fn */
    assert_true(sim_sched_cancel(log.sched, cancelled));
    SimEvent event;
    assert_true(sim_sched_pop(log.sched, &event));
    assert_int_equal(event.arg_u64, 2);
    SimEventId held = sim_sched_hold_top(log.sched);
    assert_true(sim_sched_pending(log.sched, held));
    static const guint64 before_free[] = {1};
    assert_tags(log.dropped, before_free, 1);
    /* Free the queue but keep the log, to see what free dropped. */
    sim_sched_free(log.sched);
    log.sched = NULL;
    assert_int_equal(log.dropped->len, 3);
    gboolean saw_3 = FALSE, saw_4 = FALSE;
    for (guint i = 1; i < log.dropped->len; i++) {
        guint64 tag = g_array_index(log.dropped, guint64, i);
        saw_3 |= tag == 3;
        saw_4 |= tag == 4;
    }
    assert_true(saw_3);
    assert_true(saw_4);
    assert_int_equal(log.ran->len, 0);
    log_clear(&log);
}

static void
test_sim_sched_free_accepts_null(void **state)
{
    /* Goal: sim_sched_free(NULL) is a no-op, as the house style promises. */
    (void)state;
    sim_sched_free(NULL);
}

static void
test_sim_sched_mass_cancel_is_cheap(void **state)
{
    /* Goal: cancelling every one of 200 000 events, in random order, leaves an
     * empty queue; were cancel a scan of the queue, this would take minutes. */
    (void)state;
    enum { COUNT = 200000 };
    g_autoptr(SimRng) rng = sim_rng_new(7, "test/mass-cancel");
    Log log;
    log_init(&log);
    SimEventId *ids = g_new(SimEventId, COUNT);
    for (guint i = 0; i < COUNT; i++)
        ids[i] = push(&log, sim_rng_range(rng, 0, 1000000), i);
    for (guint i = COUNT - 1; i > 0; i--) {
        guint j = (guint)sim_rng_range(rng, 0, i + 1);
        SimEventId swap = ids[i];
        ids[i] = ids[j];
        ids[j] = swap;
    }
    for (guint i = 0; i < COUNT; i++) {
        assert_true(sim_sched_cancel(log.sched, ids[i]));
        if (i % 50000 == 0)
            sim_sched_check_invariants(log.sched);
    }
    sim_sched_check_invariants(log.sched);
    assert_int_equal(sim_sched_size(log.sched), 0);
    assert_int_equal(sim_sched_peek_time(log.sched), G_MAXINT64);
    assert_int_equal(log.dropped->len, COUNT);
    g_free(ids);
    log_clear(&log);
}

/* ---- hold and unhold ---- */

static void
test_sim_sched_hold_unhold_keeps_handles_and_order(void **state)
{
    /* Goal: held events stay pending under their handles, are out of the
     * order until unheld, then run at the new time in their relative order;
     * a held event cancelled meanwhile cannot be unheld and never runs. */
    (void)state;
    Log log;
    log_init(&log);
    SimEventId a = push(&log, 10, 1);
    SimEventId b = push(&log, 10, 2);
    SimEventId c = push(&log, 12, 3);
    push(&log, 20, 4);
    push(&log, 30, 5);
    SimEventId held_a = sim_sched_hold_top(log.sched);
    SimEventId held_b = sim_sched_hold_top(log.sched);
    SimEventId held_c = sim_sched_hold_top(log.sched);
    /* Compared field by field: the struct has padding. */
    assert_int_equal(held_a.seq, a.seq);
    assert_int_equal(held_a.slot, a.slot);
    assert_int_equal(held_b.seq, b.seq);
    assert_int_equal(held_b.slot, b.slot);
    assert_int_equal(held_c.seq, c.seq);
    assert_int_equal(held_c.slot, c.slot);
    sim_sched_check_invariants(log.sched);
    assert_true(sim_sched_pending(log.sched, a));
    assert_true(sim_sched_pending(log.sched, b));
    assert_int_equal(sim_sched_size(log.sched), 5);
    assert_int_equal(sim_sched_peek_time(log.sched), 20);
    /* Cancel c while held: unholding it is refused, and it is dropped. */
    assert_true(sim_sched_cancel(log.sched, c));
    assert_false(sim_sched_unhold(log.sched, c, 25));
    /* Unhold in the order held, as sim_world does on resume. */
    assert_true(sim_sched_unhold(log.sched, a, 25));
    assert_true(sim_sched_unhold(log.sched, b, 25));
    sim_sched_check_invariants(log.sched);
    SimEvent event;
    assert_true(sim_sched_peek(log.sched, &event));
    assert_int_equal(event.time_ns, 20);
    run_all(&log);
    static const guint64 ran[] = {4, 1, 2, 5};
    assert_tags(log.ran, ran, G_N_ELEMENTS(ran));
    static const guint64 dropped[] = {3};
    assert_tags(log.dropped, dropped, 1);
    log_clear(&log);
}

static void
test_sim_sched_unhold_runs_at_new_time(void **state)
{
    /* Goal: an unheld event pops with the time it was unheld at. */
    (void)state;
    Log log;
    log_init(&log);
    push(&log, 10, 1);
    SimEventId held = sim_sched_hold_top(log.sched);
    assert_int_equal(sim_sched_peek_time(log.sched), G_MAXINT64);
    assert_true(sim_sched_unhold(log.sched, held, 99));
    SimEvent event;
    assert_true(sim_sched_pop(log.sched, &event));
    assert_int_equal(event.time_ns, 99);
    assert_int_equal(event.arg_u64, 1);
    log_clear(&log);
}

/* ---- property test ---- */

typedef struct {
    gint64 time_ns;
    guint64 tag; /* also the insertion order */
} RefEvent;

typedef struct {
    SimEventId id;
    gboolean live;
} Issued;

/* The reference: a list kept sorted by (time, tag); tags increase with pushes. */
static void
ref_insert(GArray *ref, RefEvent event)
{
    guint at = ref->len;
    while (at > 0) {
        const RefEvent *before = &g_array_index(ref, RefEvent, at - 1);
        if (before->time_ns <= event.time_ns)
            break;
        at--;
    }
    g_array_insert_val(ref, at, event);
}

typedef struct {
    Log log;
    GArray *ref;    /* RefEvent, sorted */
    GArray *issued; /* Issued, indexed by tag */
    gint64 now_ns;
} Property;

static void
property_push(Property *p, SimRng *rng)
{
    /* Times cluster on a coarse grid so that ties are frequent. */
    gint64 time_ns = p->now_ns + sim_rng_range(rng, 0, 50) * 10;
    guint64 tag = p->issued->len;
    Issued issued = {push(&p->log, time_ns, tag), TRUE};
    g_array_append_val(p->issued, issued);
    ref_insert(p->ref, (RefEvent){time_ns, tag});
}

static void
property_pop(Property *p)
{
    SimEvent event;
    gboolean popped = sim_sched_pop(p->log.sched, &event);
    assert_int_equal(popped, p->ref->len > 0);
    if (!popped)
        return;
    const RefEvent *expected = &g_array_index(p->ref, RefEvent, 0);
    assert_int_equal(event.arg_u64, expected->tag);
    assert_int_equal(event.time_ns, expected->time_ns);
    p->now_ns = event.time_ns;
    g_array_index(p->issued, Issued, event.arg_u64).live = FALSE;
    g_array_remove_index(p->ref, 0);
}

/* Cancels a live event (three times in four) or any handle ever issued,
 * live or not, and checks the result against the reference. */
static void
property_cancel(Property *p, SimRng *rng)
{
    if (p->issued->len == 0)
        return;
    gboolean pick_live = p->ref->len > 0 && sim_rng_chance(rng, 3, 4);
    guint ref_index = 0;
    guint64 tag;
    if (pick_live) {
        ref_index = (guint)sim_rng_range(rng, 0, p->ref->len);
        tag = g_array_index(p->ref, RefEvent, ref_index).tag;
    } else {
        tag = (guint64)sim_rng_range(rng, 0, p->issued->len);
    }
    Issued *issued = &g_array_index(p->issued, Issued, tag);
    if (pick_live)
        assert_true(issued->live);
    guint dropped_before = p->log.dropped->len;
    assert_int_equal(sim_sched_cancel(p->log.sched, issued->id), issued->live);
    assert_int_equal(p->log.dropped->len, dropped_before + (issued->live ? 1 : 0));
    if (issued->live && !pick_live) {
        for (ref_index = 0; g_array_index(p->ref, RefEvent, ref_index).tag != tag; ref_index++)
            assert_true(ref_index + 1 < p->ref->len);
    }
    if (issued->live)
        g_array_remove_index(p->ref, ref_index);
    issued->live = FALSE;
}

/* One seed: phases that grow the queue, cancel most of it (so stale entries
 * outnumber live ones and the heap is compacted), and drain it. */
static void
property_run(guint64 seed)
{
    g_autoptr(SimRng) rng = sim_rng_new(seed, "test/sched-property");
    Property p = {0};
    log_init(&p.log);
    p.ref = g_array_new(FALSE, FALSE, sizeof(RefEvent));
    p.issued = g_array_new(FALSE, FALSE, sizeof(Issued));
    static const guint weights[][3] = {
        /* push, pop, cancel (per 10) */
        {8, 1, 1},
        {1, 1, 8},
        {4, 3, 3},
        {0, 6, 4},
    };
    for (guint op = 0; op < 12000; op++) {
        const guint *w = weights[(op / 3000) % G_N_ELEMENTS(weights)];
        guint roll = (guint)sim_rng_range(rng, 0, 10);
        if (roll < w[0])
            property_push(&p, rng);
        else if (roll < w[0] + w[1])
            property_pop(&p);
        else
            property_cancel(&p, rng);
        assert_int_equal(sim_sched_size(p.log.sched), p.ref->len);
        if (op % 97 == 0)
            sim_sched_check_invariants(p.log.sched);
    }
    while (p.ref->len > 0)
        property_pop(&p);
    property_pop(&p);
    sim_sched_check_invariants(p.log.sched);
    g_array_free(p.ref, TRUE);
    g_array_free(p.issued, TRUE);
    log_clear(&p.log);
}

static void
test_sim_sched_random_ops_match_reference(void **state)
{
    /* Goal: random push/pop/cancel sequences, with heavy cancelling that
     * forces compaction, pop exactly what a sorted reference list pops. */
    (void)state;
    for (guint64 seed = 1; seed <= 40; seed++)
        property_run(seed);
}

static int
compare_ref_events(gconstpointer a, gconstpointer b)
{
    const RefEvent *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->tag < y->tag ? -1 : x->tag > y->tag;
}

static void
test_sim_sched_compaction_to_a_few_survivors(void **state)
{
    /* Goal: a rebuild of the heap that keeps 1 to 9 entries (a lone root,
     * and heaps of two to four levels with a partial last one) keeps them
     * in (time, insertion) order. The heap is rebuilt when stale entries
     * outnumber live ones and exceed 1024: with 1025 + n events pushed, the
     * 1025th cancel rebuilds it around the n left. */
    (void)state;
    enum { STALE = 1025 };
    for (guint survivors = 1; survivors <= 9; survivors++) {
        g_autoptr(SimRng) rng = sim_rng_new(13 + survivors, "test/compaction-few");
        Log log;
        log_init(&log);
        guint count = STALE + survivors;
        SimEventId *ids = g_new(SimEventId, count);
        GArray *expected = g_array_new(FALSE, FALSE, sizeof(RefEvent));
        for (guint64 tag = 0; tag < count; tag++) {
            gint64 time_ns = sim_rng_range(rng, 0, 10);
            ids[tag] = push(&log, time_ns, tag);
            if (tag % 100 == 0 && tag / 100 < survivors)
                g_array_append_val(expected, ((RefEvent){time_ns, tag}));
        }
        for (guint64 tag = 0; tag < count; tag++) {
            if (tag % 100 != 0 || tag / 100 >= survivors)
                assert_true(sim_sched_cancel(log.sched, ids[tag]));
        }
        sim_sched_check_invariants(log.sched);
        assert_int_equal(sim_sched_size(log.sched), survivors);
        g_array_sort(expected, compare_ref_events);
        run_all(&log);
        assert_int_equal(log.ran->len, survivors);
        for (guint i = 0; i < expected->len; i++)
            assert_int_equal(g_array_index(log.ran, guint64, i),
                             g_array_index(expected, RefEvent, i).tag);
        g_array_free(expected, TRUE);
        g_free(ids);
        log_clear(&log);
    }
}

static void
test_sim_sched_compaction_keeps_order(void **state)
{
    /* Goal: cancelling two thirds of 3000 events (so stale heap entries
     * outnumber live ones and the heap is rebuilt) keeps the others in
     * (time, insertion) order. */
    (void)state;
    enum { COUNT = 3000 };
    g_autoptr(SimRng) rng = sim_rng_new(11, "test/compaction");
    Log log;
    log_init(&log);
    SimEventId ids[COUNT];
    GArray *expected = g_array_new(FALSE, FALSE, sizeof(RefEvent));
    for (guint64 tag = 0; tag < COUNT; tag++) {
        gint64 time_ns = sim_rng_range(rng, 0, 100);
        ids[tag] = push(&log, time_ns, tag);
        if (tag % 3 == 0)
            g_array_append_val(expected, ((RefEvent){time_ns, tag}));
    }
    for (guint64 tag = 0; tag < COUNT; tag++) {
        if (tag % 3 != 0)
            assert_true(sim_sched_cancel(log.sched, ids[tag]));
    }
    sim_sched_check_invariants(log.sched);
    g_array_sort(expected, compare_ref_events);
    run_all(&log);
    assert_int_equal(log.ran->len, expected->len);
    for (guint i = 0; i < expected->len; i++)
        assert_int_equal(g_array_index(log.ran, guint64, i),
                         g_array_index(expected, RefEvent, i).tag);
    g_array_free(expected, TRUE);
    log_clear(&log);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_sched_orders_by_time_then_insertion),
        cmocka_unit_test(test_sim_sched_many_ties_keep_fifo),
        cmocka_unit_test(test_sim_sched_push_during_dispatch_runs_after_due),
        cmocka_unit_test(test_sim_sched_empty_queue),
        cmocka_unit_test(test_sim_sched_peek_matches_pop),
        cmocka_unit_test(test_sim_sched_cancelled_event_never_pops),
        cmocka_unit_test(test_sim_sched_cancel_twice_or_after_pop_is_false),
        cmocka_unit_test(test_sim_sched_stale_handle_spares_slot_reuser),
        cmocka_unit_test(test_sim_sched_drop_fn_on_cancel_and_free),
        cmocka_unit_test(test_sim_sched_free_accepts_null),
        cmocka_unit_test(test_sim_sched_mass_cancel_is_cheap),
        cmocka_unit_test(test_sim_sched_hold_unhold_keeps_handles_and_order),
        cmocka_unit_test(test_sim_sched_unhold_runs_at_new_time),
        cmocka_unit_test(test_sim_sched_compaction_keeps_order),
        cmocka_unit_test(test_sim_sched_compaction_to_a_few_survivors),
        cmocka_unit_test(test_sim_sched_random_ops_match_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
