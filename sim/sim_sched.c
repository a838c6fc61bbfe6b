/*
 * sim_sched: the event queue (see sim_sched.h).
 *
 * Invariants (checked by sim_sched_check_invariants):
 *  1. Every heap entry is no earlier than its parent by (time_ns, key).
 *  2. A heap entry's key is (order << 24) | slot; the entry is live iff its
 *     slot is QUEUED with that order. Live entries number `queued`; stale ones
 *     `stale`. A slot's order is its seq, or, once unheld, a fresh number, so
 *     held events rejoin in the order they are unheld (the order they came
 *     due) while their handles (seq) stay valid.
 *  3. A slot is FREE (on the free list, seq 0), QUEUED (exactly one live heap
 *     entry) or HELD (no live heap entry; sim_sched_unhold requeues it).
 *  4. `pending` = QUEUED + HELD slots.
 *
 * Slot transitions:
 *   FREE  --sim_sched_push-->       QUEUED
 *   QUEUED --sim_sched_pop-->       FREE
 *   QUEUED --sim_sched_hold_top-->  HELD
 *   HELD  --sim_sched_unhold-->     QUEUED
 *   QUEUED|HELD --sim_sched_cancel--> FREE
 */
#include "sim_sched.h"

#include "sim_assert.h"

enum slot_state { SLOT_FREE = 0, SLOT_QUEUED, SLOT_HELD };

typedef struct {
    gint64 time_ns;
    guint64 seq;   /* the handle's identity */
    guint64 order; /* the heap's tie-breaker: seq, or a fresh one when unheld */
    SimEventFn fn;
    SimEventDropFn drop_fn;
    void *ctx;
    void *arg;
    guint64 arg_u64;
    guint32 owner;
    guint32 incarnation;
    guint32 state;
} Slot;

typedef struct {
    gint64 time_ns;
    guint64 key; /* (seq << 24) | slot: ordering by key is ordering by seq. */
} HeapEntry;

struct SimSched {
    HeapEntry *heap;
    guint heap_len;
    guint heap_cap;
    Slot *slots;
    guint slots_len;
    guint slots_cap;
    guint32 *free_slots;
    guint free_len;
    guint queued;
    guint held;
    guint stale;
    guint64 seq_next;
};

#define SLOT_BITS 24
#define SLOT_MASK ((G_GUINT64_CONSTANT(1) << SLOT_BITS) - 1)

static inline gboolean
entry_before(const HeapEntry *a, const HeapEntry *b)
{
    return a->time_ns < b->time_ns || (a->time_ns == b->time_ns && a->key < b->key);
}

static inline gboolean
entry_live(const SimSched *sched, const HeapEntry *entry)
{
    const Slot *slot = &sched->slots[entry->key & SLOT_MASK];
    return slot->state == SLOT_QUEUED && slot->order == (entry->key >> SLOT_BITS);
}

SimSched *
sim_sched_new(void)
{
    SimSched *sched = g_new0(SimSched, 1);
    sched->seq_next = 1;
    return sched;
}

void
sim_sched_free(SimSched *sched)
{
    if (sched == NULL)
        return;
    for (guint i = 0; i < sched->slots_len; i++) {
        Slot *slot = &sched->slots[i];
        if (slot->state != SLOT_FREE && slot->drop_fn != NULL)
            slot->drop_fn(slot->ctx, slot->arg, slot->arg_u64);
    }
    g_free(sched->heap);
    g_free(sched->slots);
    g_free(sched->free_slots);
    g_free(sched);
}

static void
sift_up(HeapEntry *heap, guint index)
{
    HeapEntry moving = heap[index];
    while (index > 0) {
        guint parent = (index - 1) / 2;
        if (!entry_before(&moving, &heap[parent]))
            break;
        heap[index] = heap[parent];
        index = parent;
    }
    heap[index] = moving;
}

static void
sift_down(HeapEntry *heap, guint len, guint index)
{
    HeapEntry moving = heap[index];
    for (;;) {
        guint child = 2 * index + 1;
        if (child >= len)
            break;
        if (child + 1 < len && entry_before(&heap[child + 1], &heap[child]))
            child++;
        if (!entry_before(&heap[child], &moving))
            break;
        heap[index] = heap[child];
        index = child;
    }
    heap[index] = moving;
}

static void
heap_insert(SimSched *sched, gint64 time_ns, guint64 key)
{
    if (sched->heap_len == sched->heap_cap) {
        sched->heap_cap = sched->heap_cap ? sched->heap_cap * 2 : 64;
        sched->heap = g_renew(HeapEntry, sched->heap, sched->heap_cap);
    }
    sched->heap[sched->heap_len] = (HeapEntry){time_ns, key};
    sift_up(sched->heap, sched->heap_len);
    sched->heap_len++;
}

static void
heap_remove_top(SimSched *sched)
{
    KSIM_ASSERT(sched->heap_len > 0);
    sched->heap_len--;
    if (sched->heap_len > 0) {
        sched->heap[0] = sched->heap[sched->heap_len];
        sift_down(sched->heap, sched->heap_len, 0);
    }
}

/* Drops stale entries and re-heapifies: O(n), run only when stale entries
 * outnumber live ones, so each cancel pays O(1) amortized. */
static void
heap_compact(SimSched *sched)
{
    guint kept = 0;
    for (guint i = 0; i < sched->heap_len; i++) {
        if (entry_live(sched, &sched->heap[i]))
            sched->heap[kept++] = sched->heap[i];
    }
    KSIM_ASSERT(kept == sched->queued);
    sched->heap_len = kept;
    sched->stale = 0;
    for (guint i = kept / 2; i-- > 0;)
        sift_down(sched->heap, kept, i);
}

/* Removes stale entries from the top so heap[0], if any, is live. */
static void
skip_stale(SimSched *sched)
{
    while (sched->heap_len > 0 && !entry_live(sched, &sched->heap[0])) {
        KSIM_ASSERT(sched->stale > 0);
        sched->stale--;
        heap_remove_top(sched);
    }
}

static guint32
slot_alloc(SimSched *sched)
{
    if (sched->free_len > 0)
        return sched->free_slots[--sched->free_len];
    if (sched->slots_len == sched->slots_cap) {
        sched->slots_cap = sched->slots_cap ? sched->slots_cap * 2 : 64;
        KSIM_ASSERT(sched->slots_cap <= SIM_SCHED_PENDING_MAX);
        sched->slots = g_renew(Slot, sched->slots, sched->slots_cap);
        sched->free_slots = g_renew(guint32, sched->free_slots, sched->slots_cap);
    }
    return sched->slots_len++;
}

static void
slot_release(SimSched *sched, guint32 index)
{
    Slot *slot = &sched->slots[index];
    slot->state = SLOT_FREE;
    slot->seq = 0;
    slot->order = 0;
    sched->free_slots[sched->free_len++] = index;
}

SimEventId
sim_sched_push(SimSched *sched, gint64 time_ns, SimEventFn fn, SimEventDropFn drop_fn, void *ctx,
               void *arg, guint64 arg_u64, guint32 owner, guint32 incarnation)
{
    KSIM_ASSERT(fn != NULL);
    KSIM_ASSERT(time_ns >= 0);
    KSIM_ASSERT(sched->seq_next < SIM_SCHED_SEQ_MAX);
    guint32 index = slot_alloc(sched);
    guint64 seq = sched->seq_next++;
    sched->slots[index] = (Slot){time_ns, seq,   seq,         fn,         drop_fn,
                                 ctx,     arg,   arg_u64,     owner,      incarnation,
                                 SLOT_QUEUED};
    heap_insert(sched, time_ns, (seq << SLOT_BITS) | index);
    sched->queued++;
    return (SimEventId){seq, index};
}

static Slot *
slot_of(const SimSched *sched, SimEventId id)
{
    if (id.seq == 0 || id.slot >= sched->slots_len)
        return NULL;
    Slot *slot = &sched->slots[id.slot];
    if (slot->state == SLOT_FREE || slot->seq != id.seq)
        return NULL;
    return slot;
}

gboolean
sim_sched_pending(const SimSched *sched, SimEventId id)
{
    return slot_of(sched, id) != NULL;
}

static void event_from_slot(const Slot *slot, SimEvent *out);

gboolean
sim_sched_get(const SimSched *sched, SimEventId id, SimEvent *out)
{
    const Slot *slot = slot_of(sched, id);
    if (slot == NULL)
        return FALSE;
    event_from_slot(slot, out);
    return TRUE;
}

gboolean
sim_sched_cancel(SimSched *sched, SimEventId id)
{
    Slot *slot = slot_of(sched, id);
    if (slot == NULL)
        return FALSE;
    Slot copy = *slot;
    if (slot->state == SLOT_QUEUED) {
        sched->queued--;
        sched->stale++;
    } else {
        KSIM_ASSERT(slot->state == SLOT_HELD);
        sched->held--;
    }
    slot_release(sched, id.slot);
    if (sched->stale > sched->queued && sched->stale > 1024)
        heap_compact(sched);
    if (copy.drop_fn != NULL)
        copy.drop_fn(copy.ctx, copy.arg, copy.arg_u64);
    return TRUE;
}

static void
event_from_slot(const Slot *slot, SimEvent *out)
{
    *out = (SimEvent){slot->time_ns, slot->seq,   slot->fn,    slot->drop_fn,
                      slot->ctx,     slot->arg,   slot->arg_u64, slot->owner,
                      slot->incarnation};
}

gboolean
sim_sched_peek(SimSched *sched, SimEvent *out)
{
    skip_stale(sched);
    if (sched->heap_len == 0)
        return FALSE;
    const Slot *slot = &sched->slots[sched->heap[0].key & SLOT_MASK];
    event_from_slot(slot, out);
    out->time_ns = sched->heap[0].time_ns;
    return TRUE;
}

gboolean
sim_sched_pop(SimSched *sched, SimEvent *out)
{
    skip_stale(sched);
    if (sched->heap_len == 0)
        return FALSE;
    HeapEntry top = sched->heap[0];
    guint32 index = (guint32)(top.key & SLOT_MASK);
    event_from_slot(&sched->slots[index], out);
    out->time_ns = top.time_ns;
    heap_remove_top(sched);
    sched->queued--;
    slot_release(sched, index);
    return TRUE;
}

SimEventId
sim_sched_hold_top(SimSched *sched)
{
    skip_stale(sched);
    KSIM_ASSERT(sched->heap_len > 0);
    guint32 index = (guint32)(sched->heap[0].key & SLOT_MASK);
    Slot *slot = &sched->slots[index];
    KSIM_ASSERT(slot->state == SLOT_QUEUED);
    heap_remove_top(sched);
    slot->state = SLOT_HELD;
    sched->queued--;
    sched->held++;
    return (SimEventId){slot->seq, index};
}

gboolean
sim_sched_unhold(SimSched *sched, SimEventId id, gint64 time_ns)
{
    Slot *slot = slot_of(sched, id);
    if (slot == NULL)
        return FALSE;
    KSIM_ASSERT(slot->state == SLOT_HELD);
    KSIM_ASSERT(time_ns >= slot->time_ns);
    KSIM_ASSERT(sched->seq_next < SIM_SCHED_SEQ_MAX);
    slot->state = SLOT_QUEUED;
    slot->time_ns = time_ns;
    slot->order = sched->seq_next++;
    sched->held--;
    sched->queued++;
    heap_insert(sched, time_ns, (slot->order << SLOT_BITS) | id.slot);
    return TRUE;
}

gint64
sim_sched_peek_time(SimSched *sched)
{
    skip_stale(sched);
    return sched->heap_len > 0 ? sched->heap[0].time_ns : G_MAXINT64;
}

guint
sim_sched_size(const SimSched *sched)
{
    return sched->queued + sched->held;
}

void
sim_sched_check_invariants(const SimSched *sched)
{
    guint live = 0;
    for (guint i = 0; i < sched->heap_len; i++) {
        if (i > 0)
            KSIM_ASSERT(!entry_before(&sched->heap[i], &sched->heap[(i - 1) / 2]));
        if (entry_live(sched, &sched->heap[i]))
            live++;
    }
    KSIM_ASSERT(live == sched->queued);
    KSIM_ASSERT(sched->heap_len == sched->queued + sched->stale);
    guint queued = 0, held = 0, free_count = 0;
    for (guint i = 0; i < sched->slots_len; i++) {
        guint32 state = sched->slots[i].state;
        queued += state == SLOT_QUEUED;
        held += state == SLOT_HELD;
        free_count += state == SLOT_FREE;
    }
    KSIM_ASSERT(queued == sched->queued);
    KSIM_ASSERT(held == sched->held);
    KSIM_ASSERT(free_count == sched->free_len);
}
