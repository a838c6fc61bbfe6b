/*
 * Incremental fetch sessions (KIP-227): the fetching side's session handler
 * (fetch_handler.h) and the leader's session cache (fetch_session.h), on
 * their own and together: a full fetch creates a session, an incremental
 * one sends only the partitions whose fetch state changed and is answered
 * with only those that have something new, eviction follows Kafka's
 * FetchSessionCacheShard.tryEvict, FETCH_SESSION_ID_NOT_FOUND and
 * INVALID_FETCH_SESSION_EPOCH make the next fetch a full one, and a leader
 * that restarts (a new cache) has lost every session.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "fetch_handler.h"
#include "fetch_session.h"
#include "kafka_proto.h"
#include "sim_rng.h"

#define FOLLOWER 2

/* The sessions' tables (and the replica manager's) find partitions by
 * ktp_hash: a production-size cluster's partitions, 100 topics of 1,000
 * named as `ksim bench scale` names them, get distinct hashes, and so do 8
 * topics of names alike but for one late character. */
static void
test_ktp_hash_spreads_alike_names(void **state)
{
    (void)state;
    g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
    guint keys = 0;
    for (gint32 t = 0; t < 100; t++) {
        g_autofree char *topic = g_strdup_printf("t%02d", t);
        for (gint32 p = 0; p < 1000; p++, keys++) {
            KTopicPartition tp;
            ktp_set(&tp, topic, p);
            g_hash_table_add(seen, GUINT_TO_POINTER(ktp_hash(&tp)));
        }
    }
    /* 100,000 random 32-bit values collide about once; the old sum gave
     * 10,486 distinct hashes. */
    assert_true(g_hash_table_size(seen) >= keys - 10);
    g_hash_table_remove_all(seen);
    keys = 0;
    for (gint32 t = 0; t < 8; t++) {
        g_autofree char *topic = g_strdup_printf("orders-%c-eu", 'a' + t);
        for (gint32 p = 0; p < 4096; p++, keys++) {
            KTopicPartition tp;
            ktp_set(&tp, topic, p);
            g_hash_table_add(seen, GUINT_TO_POINTER(ktp_hash(&tp)));
        }
    }
    assert_true(g_hash_table_size(seen) >= keys - 10);
}

static void
test_broker_id_lists_are_interned(void **state)
{
    /* Goal: equal lists of broker ids share one read-only copy that
     * outlives the caller's buffer; a list differs from its prefixes and
     * from its reorderings; the empty list has a copy too. */
    (void)state;
    gint32 buffer[KAFKA_REPLICAS_MAX];
    for (guint i = 0; i < KAFKA_REPLICAS_MAX; i++)
        buffer[i] = (gint32)(i * 7);
    const gint32 *three = kbroker_ids_intern(buffer, 3);
    const gint32 *two = kbroker_ids_intern(buffer, 2);
    const gint32 *all = kbroker_ids_intern(buffer, KAFKA_REPLICAS_MAX);
    assert_ptr_not_equal(three, buffer);
    assert_ptr_not_equal(three, two);
    assert_ptr_not_equal(three, all);
    gint32 swapped[3] = {buffer[1], buffer[0], buffer[2]};
    assert_ptr_not_equal(kbroker_ids_intern(swapped, 3), three);
    memset(buffer, 0xff, sizeof buffer);
    assert_int_equal(three[0], 0);
    assert_int_equal(three[1], 7);
    assert_int_equal(three[2], 14);
    assert_int_equal(all[KAFKA_REPLICAS_MAX - 1], 7 * (KAFKA_REPLICAS_MAX - 1));
    gint32 again[3] = {0, 7, 14};
    assert_ptr_equal(kbroker_ids_intern(again, 3), three);
    /* An interned list interns to itself. */
    assert_ptr_equal(kbroker_ids_intern(three, 3), three);
    const gint32 *none = kbroker_ids_intern(NULL, 0);
    assert_non_null(none);
    assert_ptr_equal(kbroker_ids_intern(again, 0), none);
}

/* A topic's name is interned: partitions named from different buffers
 * share one copy and are equal; the copy outlives the buffer; the order
 * and the hash come from the text, so a name interned later still sorts
 * by its letters; a zeroed partition names no topic and sorts first, before
 * the empty name, which it does not equal. */
static void
test_ktp_names_are_interned(void **state)
{
    (void)state;
    char first[] = "orders";
    g_autofree char *second = g_strdup("orders");
    KTopicPartition a;
    KTopicPartition b;
    ktp_set(&a, first, 3);
    ktp_set(&b, second, 3);
    assert_ptr_equal(a.topic, b.topic);
    assert_ptr_not_equal(a.topic, first);
    /* Interning an interned name gives it back, however many names came
     * between (the recent table is only a shortcut). */
    for (guint i = 0; i < 200; i++) {
        g_autofree char *other = g_strdup_printf("other-%u", i);
        assert_ptr_equal(ktopic_intern(other), ktopic_intern(ktopic_intern(other)));
    }
    assert_ptr_equal(ktopic_intern(a.topic), a.topic);
    assert_true(ktp_equal(&a, &b));
    assert_int_equal(ktp_hash(&a), ktp_hash(&b));
    first[0] = 'x';
    assert_string_equal(a.topic, "orders");
    b.partition = 4;
    assert_false(ktp_equal(&a, &b));
    assert_true(ktp_compare(&a, &b) < 0);
    KTopicPartition later;
    ktp_set(&later, "interned-after-orders-but-sorts-first-aaa", 9);
    assert_true(ktp_compare(&later, &a) < 0);
    assert_true(ktp_compare(&a, &later) > 0);
    KTopicPartition none = {NULL, 0};
    assert_true(ktp_compare(&none, &later) < 0);
    assert_false(ktp_equal(&none, &later));
    /* No topic is not the empty name: compare agrees with equal. */
    KTopicPartition empty;
    ktp_set(&empty, "", 0);
    assert_false(ktp_equal(&none, &empty));
    assert_true(ktp_compare(&none, &empty) < 0);
    assert_true(ktp_compare(&empty, &none) > 0);
    assert_int_equal(ktp_compare(&none, &none), 0);
    g_autofree char *name = ktp_name(&a);
    assert_string_equal(name, "orders-3");
}

static KFetchPartition
partition(gint32 index, gint64 fetch_offset)
{
    KFetchPartition entry = {0};
    ktp_set(&entry.tp, "t", index);
    entry.fetch_offset = fetch_offset;
    entry.current_leader_epoch = 1;
    entry.max_bytes = 1048576;
    entry.log_start_offset = 0;
    return entry;
}

/* The fetcher's view: partitions t-<index> at the offsets given. */
static GArray *
next_of(const gint64 *offsets, const gint32 *indexes, guint n)
{
    GArray *next = g_array_new(FALSE, FALSE, sizeof(KFetchPartition));
    for (guint i = 0; i < n; i++) {
        KFetchPartition entry = partition(indexes[i], offsets[i]);
        g_array_append_val(next, entry);
    }
    return next;
}

static KFetchRequest *
request_new(gint32 replica_id)
{
    KFetchRequest *request = kproto_new(KMSG_FETCH_REQUEST);
    request->replica_id = replica_id;
    return request;
}

static KFetchResponse *
response_new(gint32 session_id, KafkaError error)
{
    KFetchResponse *response = kproto_new(KMSG_FETCH_RESPONSE);
    response->session_id = session_id;
    response->error = error;
    return response;
}

/* What a leader read for one partition: the HW given, records if it is
 * partition `with_records`. */
static void
answer_append(KFetchResponse *response, const KFetchPartition *entry, gint64 hw,
              gint32 with_records)
{
    KFetchPartitionResponse out = {0};
    out.tp = entry->tp;
    out.high_watermark = hw;
    out.log_start_offset = 0;
    out.encoded_size_bytes = entry->tp.partition == with_records ? 100 : 0;
    g_array_append_val(response->partitions, out);
}

/* What a leader read for each of the request's partitions (answer_append). */
static KFetchResponse *
read_for(const KFetchRequest *request, gint64 hw, gint32 with_records)
{
    KFetchResponse *response = response_new(0, KAFKA_ERROR_NONE);
    for (guint i = 0; i < request->partitions->len; i++)
        answer_append(response, &g_array_index(request->partitions, KFetchPartition, i), hw,
                      with_records);
    return response;
}

static gint32
partition_at(const GArray *partitions, guint i)
{
    return g_array_index(partitions, KFetchPartition, i).tp.partition;
}

static gint32
response_partition_at(const KFetchResponse *response, guint i)
{
    return g_array_index(response->partitions, KFetchPartitionResponse, i).tp.partition;
}

/* The answer a leader reads for a fetch in `context`: for an incremental
 * one, the partitions its session gives to read (every one here: with no
 * hooks, none is quiet), in order, with *read to hand to
 * fetch_session_update_response; else those of the request. */
static KFetchResponse *
read_context(FetchSessionCache *cache, const FetchContext *context, const KFetchRequest *request,
             gint64 hw, gint32 with_records, FetchSessionRead **read)
{
    *read = NULL;
    if (context->kind != FETCH_CONTEXT_INCREMENTAL)
        return read_for(request, hw, with_records);
    KFetchResponse *response = response_new(0, KAFKA_ERROR_NONE);
    *read = fetch_session_read_begin(cache, context, 0);
    const KFetchPartition *entry;
    gpointer replica;
    while (fetch_session_read_next(*read, &entry, &replica)) {
        assert_null(replica);
        answer_append(response, entry, hw, with_records);
        fetch_session_read_done(*read);
    }
    return response;
}

/* ---- the handler ---- */

static void
test_fetch_session_handler_full_then_incremental(void **state)
{
    /* Goal: a first fetch is full; once the leader names a session, a fetch sends only the
     * partitions whose fetch state changed, new ones, and forgotten ones. */
    (void)state;
    g_autoptr(FetchHandler) handler = fetch_handler_new();
    const gint32 indexes[] = {0, 1, 2};
    const gint64 start[] = {0, 0, 0};
    g_autoptr(GArray) next = next_of(start, indexes, 3);
    KFetchRequest *request = request_new(FOLLOWER);
    fetch_handler_build(handler, next, request);
    assert_int_equal(request->session_id, KAFKA_FETCH_SESSION_ID_INVALID);
    assert_int_equal(request->session_epoch, KAFKA_FETCH_EPOCH_INITIAL);
    assert_int_equal(request->partitions->len, 3);
    sim_msg_free(&request->base);
    KFetchResponse *response = response_new(77, KAFKA_ERROR_NONE);
    assert_true(fetch_handler_handle_response(handler, response));
    sim_msg_free(&response->base);
    assert_int_equal(fetch_handler_session_id(handler), 77);
    assert_int_equal(fetch_handler_epoch(handler), 1);

    /* t-0 moved on: only it is sent. */
    const gint64 moved[] = {5, 0, 0};
    g_autoptr(GArray) next2 = next_of(moved, indexes, 3);
    request = request_new(FOLLOWER);
    fetch_handler_build(handler, next2, request);
    assert_int_equal(request->session_id, 77);
    assert_int_equal(request->session_epoch, 1);
    assert_int_equal(request->partitions->len, 1);
    assert_int_equal(partition_at(request->partitions, 0), 0);
    assert_int_equal(g_array_index(request->partitions, KFetchPartition, 0).fetch_offset, 5);
    assert_int_equal(request->forgotten->len, 0);
    sim_msg_free(&request->base);
    response = response_new(77, KAFKA_ERROR_NONE);
    assert_true(fetch_handler_handle_response(handler, response));
    sim_msg_free(&response->base);
    assert_int_equal(fetch_handler_epoch(handler), 2);

    /* t-0 leaves, t-3 joins, t-2 moves on: added first, then altered. */
    const gint32 indexes3[] = {3, 1, 2};
    const gint64 offsets3[] = {0, 0, 9};
    g_autoptr(GArray) next3 = next_of(offsets3, indexes3, 3);
    request = request_new(FOLLOWER);
    fetch_handler_build(handler, next3, request);
    assert_int_equal(request->partitions->len, 2);
    assert_int_equal(partition_at(request->partitions, 0), 3);
    assert_int_equal(partition_at(request->partitions, 1), 2);
    assert_int_equal(request->forgotten->len, 1);
    assert_int_equal(g_array_index(request->forgotten, KTopicPartition, 0).partition, 0);
    assert_int_equal(fetch_handler_size(handler), 3);
    fetch_handler_check_invariants(handler);
    sim_msg_free(&request->base);
    response = response_new(77, KAFKA_ERROR_NONE);
    assert_true(fetch_handler_handle_response(handler, response));
    sim_msg_free(&response->base);

    /* Nothing changed: an empty incremental fetch. */
    request = request_new(FOLLOWER);
    fetch_handler_build(handler, next3, request);
    assert_int_equal(request->session_epoch, 3);
    assert_int_equal(request->partitions->len, 0);
    assert_int_equal(request->forgotten->len, 0);
    sim_msg_free(&request->base);
}

/* Establishes session 77 on `handler` for t-0..t-2 at offset 0. */
static void
establish(FetchHandler *handler, const GArray *next)
{
    KFetchRequest *request = request_new(FOLLOWER);
    fetch_handler_build(handler, next, request);
    sim_msg_free(&request->base);
    KFetchResponse *response = response_new(77, KAFKA_ERROR_NONE);
    assert_true(fetch_handler_handle_response(handler, response));
    sim_msg_free(&response->base);
}

static void
test_fetch_session_handler_errors_fall_back_to_full(void **state)
{
    /* Goal: FETCH_SESSION_ID_NOT_FOUND: the next fetch is full and names no session;
     * INVALID_FETCH_SESSION_EPOCH and a failed request: full, closing the session it names. */
    (void)state;
    const gint32 indexes[] = {0, 1, 2};
    const gint64 start[] = {0, 0, 0};
    g_autoptr(GArray) next = next_of(start, indexes, 3);
    const struct {
        KafkaError error; /* NONE: the request failed (handleError) */
        gint32 session_id_next;
    } cases[] = {
        {KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND, KAFKA_FETCH_SESSION_ID_INVALID},
        {KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH, 77},
        {KAFKA_ERROR_NONE, 77},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(FetchHandler) handler = fetch_handler_new();
        establish(handler, next);
        if (cases[c].error == KAFKA_ERROR_NONE) {
            fetch_handler_handle_error(handler);
        } else {
            KFetchResponse *response = response_new(0, cases[c].error);
            assert_false(fetch_handler_handle_response(handler, response));
            sim_msg_free(&response->base);
        }
        KFetchRequest *request = request_new(FOLLOWER);
        fetch_handler_build(handler, next, request);
        assert_int_equal(request->session_id, cases[c].session_id_next);
        assert_int_equal(request->session_epoch, KAFKA_FETCH_EPOCH_INITIAL);
        assert_int_equal(request->partitions->len, 3);
        fetch_handler_check_invariants(handler);
        sim_msg_free(&request->base);
    }
}

static void
requests_equal(const KFetchRequest *a, const KFetchRequest *b)
{
    assert_int_equal(a->session_id, b->session_id);
    assert_int_equal(a->session_epoch, b->session_epoch);
    assert_int_equal(a->partitions->len, b->partitions->len);
    for (guint i = 0; i < a->partitions->len; i++) {
        const KFetchPartition *x = &g_array_index(a->partitions, KFetchPartition, i);
        const KFetchPartition *y = &g_array_index(b->partitions, KFetchPartition, i);
        assert_true(ktp_equal(&x->tp, &y->tp));
        assert_int_equal(x->fetch_offset, y->fetch_offset);
        assert_int_equal(x->log_start_offset, y->log_start_offset);
        assert_int_equal(x->current_leader_epoch, y->current_leader_epoch);
    }
    assert_int_equal(a->forgotten->len, b->forgotten->len);
    for (guint i = 0; i < a->forgotten->len; i++)
        assert_true(ktp_equal(&g_array_index(a->forgotten, KTopicPartition, i),
                              &g_array_index(b->forgotten, KTopicPartition, i)));
}

static void
test_fetch_session_handler_changes_build_the_same(void **state)
{
    /* Goal: a fetcher that tells its handler only what changed
     * (fetch_handler_build_changes) sends exactly the requests a fetcher
     * that gives the whole list (fetch_handler_build, the reference) sends,
     * over random joins, leaves and moves of 12 partitions. */
    (void)state;
    SimRng *rng = sim_rng_new(7, "fetch-handler-changes");
    g_autoptr(FetchHandler) whole = fetch_handler_new();
    g_autoptr(FetchHandler) changes = fetch_handler_new();
    enum { N = 12 };
    gboolean in[N] = {0};
    gint64 offset[N] = {0};
    gboolean noted[N] = {0};
    for (guint i = 0; i < N; i += 2)
        in[i] = noted[i] = TRUE;
    guint incremental = 0;
    for (guint round = 0; round < 400; round++) {
        /* A few partitions join, leave or move; each change is noted. */
        for (guint k = 0; k < 3; k++) {
            guint i = (guint)sim_rng_range(rng, 0, N);
            switch (sim_rng_range(rng, 0, 3)) {
            case 0: in[i] = !in[i]; break;
            case 1: offset[i] += sim_rng_range(rng, 1, 5); break;
            default: break; /* noted, unchanged */
            }
            noted[i] = TRUE;
        }
        g_autoptr(GArray) next = g_array_new(FALSE, FALSE, sizeof(KFetchPartition));
        g_autoptr(GArray) changed = g_array_new(FALSE, FALSE, sizeof(KFetchPartition));
        g_autoptr(GArray) gone = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
        for (guint i = 0; i < N; i++) {
            KFetchPartition entry = partition((gint32)i, offset[i]);
            if (in[i])
                g_array_append_val(next, entry);
            if (noted[i] && in[i])
                g_array_append_val(changed, entry);
            else if (noted[i])
                g_array_append_val(gone, entry.tp);
        }
        KFetchRequest *a = request_new(FOLLOWER);
        KFetchRequest *b = request_new(FOLLOWER);
        assert_int_equal(fetch_handler_next_is_full(whole), fetch_handler_next_is_full(changes));
        fetch_handler_build(whole, next, a);
        if (fetch_handler_next_is_full(changes)) {
            fetch_handler_build(changes, next, b);
        } else {
            fetch_handler_build_changes(changes, changed, gone, b);
            incremental++;
        }
        requests_equal(a, b);
        memset(noted, 0, sizeof noted);
        fetch_handler_check_invariants(whole);
        fetch_handler_check_invariants(changes);
        /* Mostly answered in a session; now and then a session error. */
        KafkaError error = sim_rng_range(rng, 0, 20) == 0 ? KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND
                                                          : KAFKA_ERROR_NONE;
        KFetchResponse *response = response_new(error == KAFKA_ERROR_NONE ? 42 : 0, error);
        fetch_handler_handle_response(whole, response);
        fetch_handler_handle_response(changes, response);
        if (error != KAFKA_ERROR_NONE) {
            /* The next fetch is a full one: every partition is built. */
            for (guint i = 0; i < N; i++)
                noted[i] = TRUE;
        }
        sim_msg_free(&response->base);
        sim_msg_free(&a->base);
        sim_msg_free(&b->base);
    }
    assert_true(incremental > 300);
    sim_rng_free(rng);
}

/* ---- the cache ---- */

/* A full fetch of t-0..t-2 by a follower at `now_ms`; returns the session id
 * the answer names. */
static gint32
full_fetch(FetchSessionCache *cache, gint32 replica_id, guint n, gint64 now_ms)
{
    KFetchRequest *request = request_new(replica_id);
    request->session_epoch = KAFKA_FETCH_EPOCH_INITIAL;
    for (guint i = 0; i < n; i++) {
        KFetchPartition entry = partition((gint32)i, 0);
        g_array_append_val(request->partitions, entry);
    }
    FetchContext context;
    fetch_session_new_context(cache, request, now_ms, &context);
    assert_int_equal(context.kind, FETCH_CONTEXT_FULL);
    KFetchResponse *response = read_for(request, 10, -1);
    fetch_session_update_response(cache, &context, request, response, NULL, now_ms);
    fetch_session_context_release(cache, &context);
    assert_int_equal(response->partitions->len, n);
    gint32 id = response->session_id;
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);
    fetch_session_cache_check_invariants(cache);
    return id;
}

static void
test_fetch_session_cache_incremental_answers_changes(void **state)
{
    /* Goal: a full fetch creates a session; an incremental one reads the whole session and is
     * answered with the partitions that have records or a new HW; one with records moves to the
     * end of the session. */
    (void)state;
    SimRng *rng = sim_rng_new(1, "fetch-sessions");
    g_autoptr(FetchSessionCache) cache = fetch_session_cache_new(1000, 120000, rng);
    gint32 id = full_fetch(cache, FOLLOWER, 3, 0);
    assert_int_not_equal(id, KAFKA_FETCH_SESSION_ID_INVALID);
    assert_int_equal(fetch_session_cache_size(cache), 1);
    assert_int_equal(fetch_session_cache_partitions(cache), 3);
    assert_int_equal(fetch_session_cache_epoch(cache, id), 1);

    /* t-1 moved on; the answer: t-1 (records) and t-2 (new HW). */
    KFetchRequest *request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = 1;
    KFetchPartition moved = partition(1, 5);
    g_array_append_val(request->partitions, moved);
    FetchContext context;
    fetch_session_new_context(cache, request, 10, &context);
    assert_int_equal(context.kind, FETCH_CONTEXT_INCREMENTAL);
    FetchSessionRead *read;
    KFetchResponse *response = read_context(cache, &context, request, 10, 1, &read);
    assert_int_equal(response->partitions->len, 3);
    g_array_index(response->partitions, KFetchPartitionResponse, 2).high_watermark = 12;
    fetch_session_update_response(cache, &context, request, response, read, 10);
    fetch_session_context_release(cache, &context);
    assert_int_equal(response->session_id, id);
    assert_int_equal(response->partitions->len, 2);
    assert_int_equal(response_partition_at(response, 0), 1);
    assert_int_equal(response_partition_at(response, 1), 2);
    assert_int_equal(fetch_session_cache_epoch(cache, id), 2);
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);
    fetch_session_cache_check_invariants(cache);

    /* Nothing new: an empty answer, and t-1 (which had records) is now read
     * last. */
    request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = 2;
    fetch_session_new_context(cache, request, 20, &context);
    response = read_context(cache, &context, request, 10, -1, &read);
    assert_int_equal(response_partition_at(response, 0), 0);
    assert_int_equal(response_partition_at(response, 1), 2);
    assert_int_equal(response_partition_at(response, 2), 1);
    g_array_index(response->partitions, KFetchPartitionResponse, 1).high_watermark = 12;
    fetch_session_update_response(cache, &context, request, response, read, 20);
    fetch_session_context_release(cache, &context);
    assert_int_equal(response->partitions->len, 0);
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);

    /* A stale epoch, an unknown session: session errors, no partitions. */
    const struct {
        gint32 id;
        gint32 epoch;
        KafkaError error;
    } errors[] = {
        {id, 2, KAFKA_ERROR_INVALID_FETCH_SESSION_EPOCH},
        {id + 1, 1, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND},
    };
    for (guint e = 0; e < G_N_ELEMENTS(errors); e++) {
        request = request_new(FOLLOWER);
        request->session_id = errors[e].id;
        request->session_epoch = errors[e].epoch;
        KFetchPartition entry = partition(0, 7);
        g_array_append_val(request->partitions, entry);
        fetch_session_new_context(cache, request, 30, &context);
        assert_int_equal(context.kind, FETCH_CONTEXT_ERROR);
        assert_int_equal(request->partitions->len, 0);
        response = read_for(request, 10, -1);
        fetch_session_update_response(cache, &context, request, response, NULL, 30);
        fetch_session_context_release(cache, &context);
        assert_int_equal(response->error, errors[e].error);
        assert_int_equal(response->partitions->len, 0);
        sim_msg_free(&response->base);
        sim_msg_free(&request->base);
    }

    /* Forgetting every partition closes the session. */
    request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = 3;
    for (gint32 i = 0; i < 3; i++) {
        KFetchPartition entry = partition(i, 0);
        g_array_append_val(request->forgotten, entry.tp);
    }
    fetch_session_new_context(cache, request, 40, &context);
    assert_int_equal(context.kind, FETCH_CONTEXT_SESSIONLESS);
    assert_int_equal(fetch_session_cache_size(cache), 0);
    assert_int_equal(fetch_session_cache_partitions(cache), 0);
    sim_msg_free(&request->base);
    fetch_session_cache_check_invariants(cache);
    sim_rng_free(rng);
}

static void
test_fetch_session_cache_zero_slots_disables(void **state)
{
    /* Goal: with 0 slots no session is created: every answer names none. */
    (void)state;
    SimRng *rng = sim_rng_new(1, "fetch-sessions");
    g_autoptr(FetchSessionCache) cache = fetch_session_cache_new(0, 120000, rng);
    for (guint i = 0; i < 20; i++)
        assert_int_equal(full_fetch(cache, FOLLOWER, 3, (gint64)i), KAFKA_FETCH_SESSION_ID_INVALID);
    assert_int_equal(fetch_session_cache_size(cache), 0);
    sim_rng_free(rng);
}

/* An incremental fetch that only touches session `id` at `now_ms`. */
static void
touch(FetchSessionCache *cache, gint32 id, gint64 now_ms)
{
    KFetchRequest *request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = fetch_session_cache_epoch(cache, id);
    FetchContext context;
    fetch_session_new_context(cache, request, now_ms, &context);
    assert_int_equal(context.kind, FETCH_CONTEXT_INCREMENTAL);
    fetch_session_context_release(cache, &context);
    sim_msg_free(&request->base);
}

static void
test_fetch_session_cache_eviction(void **state)
{
    /* Goal: Kafka's eviction rules, with 8 slots (one per shard; new sessions go to the shards
     * in turn): a young session is evicted only by a privileged (follower) newcomer, and only
     * if it is not privileged itself; a stale one (unused for longer than the eviction time) by
     * anyone; an old one by a larger newcomer, never by one of its size, and a privileged one
     * never by an unprivileged newcomer. */
    (void)state;
    SimRng *rng = sim_rng_new(1, "fetch-sessions");
    g_autoptr(FetchSessionCache) cache = fetch_session_cache_new(8, 120000, rng);
    gint32 consumers[8];
    for (guint i = 0; i < 8; i++) {
        consumers[i] = full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 0);
        assert_int_not_equal(consumers[i], KAFKA_FETCH_SESSION_ID_INVALID);
    }
    assert_int_equal(fetch_session_cache_size(cache), 8);
    /* Shard 0: a larger consumer's does not evict a young session. */
    assert_int_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 5, 1000), 0);
    /* Shard 1: a follower's evicts a young consumer's. */
    gint32 follower = full_fetch(cache, FOLLOWER, 1, 1000);
    assert_int_not_equal(follower, 0);
    assert_int_equal(fetch_session_cache_epoch(cache, consumers[1]), -1);
    /* Shards 2 and 3: a follower's does not evict a young follower's (none
     * here), but does a consumer's; a consumer's fails. */
    assert_int_not_equal(full_fetch(cache, FOLLOWER, 1, 1000), 0);
    assert_int_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 1000), 0);
    assert_int_equal(fetch_session_cache_size(cache), 8);

    /* Sessions 4 and the follower's, used at 125 s, are old, not stale. */
    touch(cache, consumers[4], 125000);
    touch(cache, follower, 125000);
    /* Shard 4 at 130 s: an old session is not evicted by one of its size. */
    assert_int_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 130000), 0);
    /* Shard 5: a stale one (unused since 0) is evicted by anyone. */
    assert_int_not_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 130000), 0);
    assert_int_equal(fetch_session_cache_epoch(cache, consumers[5]), -1);
    /* Shards 6, 7, 0 are stale; shard 1's follower session is old but not
     * stale, and no consumer evicts it. */
    for (guint i = 0; i < 3; i++)
        assert_int_not_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 130000), 0);
    assert_int_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 9, 130000), 0);
    assert_int_not_equal(fetch_session_cache_epoch(cache, follower), -1);
    /* Shards 2, 3 stale again; shard 4: a larger newcomer evicts the old one. */
    for (guint i = 0; i < 2; i++)
        assert_int_not_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 1, 130000), 0);
    assert_int_not_equal(full_fetch(cache, KAFKA_CONSUMER_REPLICA_ID, 2, 130000), 0);
    assert_int_equal(fetch_session_cache_epoch(cache, consumers[4]), -1);
    assert_int_equal(fetch_session_cache_size(cache), 8);
    fetch_session_cache_check_invariants(cache);
    sim_rng_free(rng);
}

static void
test_fetch_session_lost_on_leader_restart(void **state)
{
    /* Goal: a leader that restarts has a new, empty cache: the follower's next incremental
     * fetch gets FETCH_SESSION_ID_NOT_FOUND, and the full fetch it falls back to creates a new
     * session. */
    (void)state;
    SimRng *rng = sim_rng_new(1, "fetch-sessions");
    FetchSessionCache *leader = fetch_session_cache_new(1000, 120000, rng);
    g_autoptr(FetchHandler) handler = fetch_handler_new();
    const gint32 indexes[] = {0, 1, 2};
    const gint64 start[] = {0, 0, 0};
    g_autoptr(GArray) next = next_of(start, indexes, 3);
    gint32 sessions[3] = {0};
    for (guint round = 0; round < 3; round++) {
        if (round == 2) {
            /* The leader restarts between two fetches. */
            fetch_session_cache_free(leader);
            leader = fetch_session_cache_new(1000, 120000, rng);
        }
        KFetchRequest *request = request_new(FOLLOWER);
        fetch_handler_build(handler, next, request);
        FetchContext context;
        fetch_session_new_context(leader, request, (gint64)round, &context);
        FetchSessionRead *read;
        KFetchResponse *response = read_context(leader, &context, request, 10, -1, &read);
        fetch_session_update_response(leader, &context, request, response, read, (gint64)round);
        fetch_session_context_release(leader, &context);
        gboolean usable = fetch_handler_handle_response(handler, response);
        assert_int_equal(usable, round != 2);
        if (round == 2)
            assert_int_equal(response->error, KAFKA_ERROR_FETCH_SESSION_ID_NOT_FOUND);
        sessions[round] = fetch_handler_session_id(handler);
        sim_msg_free(&response->base);
        sim_msg_free(&request->base);
    }
    assert_int_not_equal(sessions[0], 0);
    assert_int_equal(sessions[1], sessions[0]);
    assert_int_equal(sessions[2], KAFKA_FETCH_SESSION_ID_INVALID);
    /* The fall-back fetch is full and makes a new session. */
    KFetchRequest *request = request_new(FOLLOWER);
    fetch_handler_build(handler, next, request);
    assert_int_equal(request->session_epoch, KAFKA_FETCH_EPOCH_INITIAL);
    assert_int_equal(request->partitions->len, 3);
    FetchContext context;
    fetch_session_new_context(leader, request, 3, &context);
    KFetchResponse *response = read_for(request, 10, -1);
    fetch_session_update_response(leader, &context, request, response, NULL, 3);
    fetch_session_context_release(leader, &context);
    assert_true(fetch_handler_handle_response(handler, response));
    assert_int_not_equal(fetch_handler_session_id(handler), KAFKA_FETCH_SESSION_ID_INVALID);
    assert_int_equal(fetch_session_cache_size(leader), 1);
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);
    fetch_session_cache_free(leader);
    sim_rng_free(rng);
}

/* ---- quiet partitions ---- */

typedef struct {
    gint32 replicas[4]; /* the owner's objects: their addresses */
    GArray *settled;    /* Settled */
} Owner;

typedef struct {
    gint32 index;
    gint32 replica_id;
    gint64 read_ns;
} Settled;

static gpointer
owner_lookup(const KTopicPartition *tp, gpointer user_data)
{
    Owner *owner = user_data;
    return &owner->replicas[tp->partition];
}

static gboolean
owner_quiet(gpointer replica, gint32 replica_id, gint8 isolation, const KFetchPartition *request,
            const KFetchPartitionResponse *data, gpointer user_data)
{
    (void)replica;
    (void)replica_id;
    (void)isolation;
    (void)request;
    (void)user_data;
    return data->error == KAFKA_ERROR_NONE && data->encoded_size_bytes == 0;
}

static void
owner_settle(gpointer replica, gint32 replica_id, gint64 read_ns, gpointer user_data)
{
    Owner *owner = user_data;
    Settled settled = {*(gint32 *)replica, replica_id, read_ns};
    g_array_append_val(owner->settled, settled);
}

/* One incremental fetch in session `id` at `now_ns` that moves nothing;
 * returns the partitions it read, in order, as a string ("0,2"). */
static char *
quiet_fetch(FetchSessionCache *cache, gint32 id, gint64 now_ns)
{
    KFetchRequest *request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = fetch_session_cache_epoch(cache, id);
    FetchContext context;
    fetch_session_new_context(cache, request, now_ns / 1000000, &context);
    assert_int_equal(context.kind, FETCH_CONTEXT_INCREMENTAL);
    FetchSessionRead *read = fetch_session_read_begin(cache, &context, now_ns);
    GString *order = g_string_new(NULL);
    KFetchResponse *response = response_new(0, KAFKA_ERROR_NONE);
    const KFetchPartition *entry;
    gpointer replica;
    while (fetch_session_read_next(read, &entry, &replica)) {
        assert_non_null(replica);
        g_string_append_printf(order, "%s%d", order->len > 0 ? "," : "", entry->tp.partition);
        KFetchPartitionResponse out = {0};
        out.tp = entry->tp;
        out.high_watermark = 10;
        g_array_append_val(response->partitions, out);
        fetch_session_read_done(read);
    }
    fetch_session_update_response(cache, &context, request, response, read, now_ns / 1000000);
    fetch_session_context_release(cache, &context);
    assert_int_equal(response->partitions->len, 0);
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);
    fetch_session_cache_check_invariants(cache);
    return g_string_free(order, FALSE);
}

static void
test_fetch_session_cache_quiet_partitions(void **state)
{
    /* Goal: a partition whose read answered nothing is not read again until its replica is
     * touched; a touch hands the owner the time it was last read quietly (this read's if the
     * read under way passed it, the one before if not), and one ahead of a read under way is
     * read in it, and one touched while it is read is read again; a fetch waiting on a
     * session is found from any of its replicas. */
    (void)state;
    SimRng *rng = sim_rng_new(1, "fetch-sessions");
    g_autoptr(FetchSessionCache) cache = fetch_session_cache_new(1000, 120000, rng);
    Owner owner = {{0, 1, 2, 3}, g_array_new(FALSE, FALSE, sizeof(Settled))};
    FetchSessionHooks hooks = {owner_lookup, owner_quiet, owner_settle, &owner};
    fetch_session_cache_set_hooks(cache, &hooks);
    gint32 id = full_fetch(cache, FOLLOWER, 4, 0);

    /* The first incremental fetch reads all; then none is read. */
    g_autofree char *first = quiet_fetch(cache, id, 1000);
    assert_string_equal(first, "0,1,2,3");
    g_autofree char *second = quiet_fetch(cache, id, 2000);
    assert_string_equal(second, "");
    assert_int_equal(owner.settled->len, 0);

    /* A touch: read at the next fetch, after the owner is told of 2000. */
    fetch_session_cache_touch(cache, &owner.replicas[2], NULL);
    assert_int_equal(owner.settled->len, 1);
    assert_int_equal(g_array_index(owner.settled, Settled, 0).index, 2);
    assert_int_equal(g_array_index(owner.settled, Settled, 0).replica_id, FOLLOWER);
    assert_int_equal(g_array_index(owner.settled, Settled, 0).read_ns, 2000);
    g_autofree char *third = quiet_fetch(cache, id, 3000);
    assert_string_equal(third, "2");
    /* Settling hands over the quiet reads without ending them. */
    g_array_set_size(owner.settled, 0);
    fetch_session_cache_settle(cache, &owner.replicas[3]);
    assert_int_equal(owner.settled->len, 1);
    assert_int_equal(g_array_index(owner.settled, Settled, 0).read_ns, 3000);
    g_autofree char *fourth = quiet_fetch(cache, id, 3500);
    assert_string_equal(fourth, "");

    /* During a read at 4000 of partition 1: a touch of 0 (passed) and of 3
     * (ahead). 3 is read in it, 0 at the next fetch. */
    fetch_session_cache_touch(cache, &owner.replicas[1], NULL);
    KFetchRequest *request = request_new(FOLLOWER);
    request->session_id = id;
    request->session_epoch = fetch_session_cache_epoch(cache, id);
    FetchContext context;
    fetch_session_new_context(cache, request, 4, &context);
    FetchSessionRead *read = fetch_session_read_begin(cache, &context, 4000);
    const KFetchPartition *entry;
    gpointer replica;
    assert_true(fetch_session_read_next(read, &entry, &replica));
    assert_int_equal(entry->tp.partition, 1);
    g_array_set_size(owner.settled, 0);
    fetch_session_cache_touch(cache, &owner.replicas[0], NULL);
    fetch_session_cache_touch(cache, &owner.replicas[3], NULL);
    assert_int_equal(owner.settled->len, 2);
    assert_int_equal(g_array_index(owner.settled, Settled, 0).read_ns, 4000);
    assert_int_equal(g_array_index(owner.settled, Settled, 1).read_ns, 3500);
    /* And a touch of 1 itself while it is read (its read moved its
     * follower's state, and that appended to it): though its answer is
     * empty, it is read again at the next fetch. */
    fetch_session_cache_touch(cache, &owner.replicas[1], NULL);
    assert_int_equal(owner.settled->len, 2);
    fetch_session_read_done(read);
    assert_true(fetch_session_read_next(read, &entry, &replica));
    assert_int_equal(entry->tp.partition, 3);
    fetch_session_read_done(read);
    assert_false(fetch_session_read_next(read, &entry, &replica));
    KFetchResponse *response = response_new(0, KAFKA_ERROR_NONE);
    for (gint32 i = 1; i <= 3; i += 2) {
        KFetchPartitionResponse out = {0};
        out.tp = partition(i, 0).tp;
        out.high_watermark = 10;
        g_array_append_val(response->partitions, out);
    }
    /* The fetch waits, and a touch of any of its partitions finds it. */
    gint32 token = 7;
    fetch_session_wait(&context, &token);
    g_autoptr(GPtrArray) waiting = g_ptr_array_new();
    fetch_session_cache_touch(cache, &owner.replicas[2], waiting);
    assert_int_equal(waiting->len, 1);
    assert_ptr_equal(g_ptr_array_index(waiting, 0), &token);
    fetch_session_update_response(cache, &context, request, response, read, 4);
    fetch_session_context_release(cache, &context);
    sim_msg_free(&response->base);
    sim_msg_free(&request->base);
    g_autofree char *fifth = quiet_fetch(cache, id, 5000);
    assert_string_equal(fifth, "0,1,2");
    g_ptr_array_set_size(waiting, 0);
    fetch_session_cache_touch(cache, &owner.replicas[2], waiting);
    assert_int_equal(waiting->len, 0); /* answered: no longer waiting */
    g_array_free(owner.settled, TRUE);
    sim_rng_free(rng);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fetch_session_handler_full_then_incremental),
        cmocka_unit_test(test_fetch_session_handler_errors_fall_back_to_full),
        cmocka_unit_test(test_fetch_session_handler_changes_build_the_same),
        cmocka_unit_test(test_fetch_session_cache_incremental_answers_changes),
        cmocka_unit_test(test_fetch_session_cache_zero_slots_disables),
        cmocka_unit_test(test_fetch_session_cache_eviction),
        cmocka_unit_test(test_fetch_session_lost_on_leader_restart),
        cmocka_unit_test(test_fetch_session_cache_quiet_partitions),
        cmocka_unit_test(test_ktp_hash_spreads_alike_names),
        cmocka_unit_test(test_ktp_names_are_interned),
        cmocka_unit_test(test_broker_id_lists_are_interned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
