/*
 * test_sim_mem: blocks grown and arrays reserved through sim_mem keep their
 * contents (and arrays their lengths) exactly as g_realloc and
 * g_array_set_size would; the page provisioning and huge-page advice are
 * invisible.
 */
#include "sim_mem.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void
test_sim_mem_grow_keeps_contents(void **unused)
{
    /* Goal: growing one element at a time and in jumps, across several
     * reallocations and populate steps (4 MiB), keeps every value written;
     * the room covers the length asked for and only grows. */
    (void)unused;
    guint64 *data = NULL;
    SimArrayRoom room = {0};
    guint previous_capacity = 0;
    for (guint i = 0; i < 700000; i++) {
        sim_block_grow((gpointer *)&data, sizeof(guint64), i + 1, &room);
        assert_true(room.populated >= (gsize)(i + 1) * sizeof(guint64));
        data[i] = (guint64)i * 2654435761u;
        assert_true(room.capacity >= i + 1);
        assert_true(room.capacity >= previous_capacity);
        previous_capacity = room.capacity;
    }
    sim_block_grow((gpointer *)&data, sizeof(guint64), 1000000, &room);
    assert_true(room.capacity >= 1000000);
    assert_true(room.populated >= (gsize)1000000 * sizeof(guint64));
    assert_true(room.populated <= (gsize)room.capacity * sizeof(guint64));
    data[999999] = 7;
    for (guint i = 0; i < 700000; i++)
        assert_true(data[i] == (guint64)i * 2654435761u);
    /* Asking for less than the room changes nothing. */
    SimArrayRoom before = room;
    guint64 *where = data;
    sim_block_grow((gpointer *)&data, sizeof(guint64), 10, &room);
    assert_ptr_equal(data, where);
    assert_int_equal(room.capacity, before.capacity);
    assert_true(room.populated == before.populated);
    sim_block_free(data, sizeof(guint64), &room);
    /* A block never grown frees as nothing. */
    SimArrayRoom empty = {0};
    sim_block_free(NULL, sizeof(guint64), &empty);
}

static void
test_sim_mem_reserve_keeps_length(void **unused)
{
    /* Goal: reserving keeps the length and the elements; appends up to the
     * reservation do not move the data. */
    (void)unused;
    GArray *array = g_array_new(FALSE, FALSE, sizeof(guint32));
    for (guint32 i = 0; i < 10; i++)
        g_array_append_val(array, i);
    sim_array_reserve(array, 200000);
    assert_int_equal(array->len, 10);
    for (guint32 i = 0; i < 10; i++)
        assert_int_equal(g_array_index(array, guint32, i), i);
    gpointer data = array->data;
    for (guint32 i = 10; i < 200000; i++)
        g_array_append_val(array, i);
    assert_ptr_equal(array->data, data);
    assert_int_equal(g_array_index(array, guint32, 199999), 199999);
    /* A reservation below the length changes nothing. */
    sim_array_reserve(array, 5);
    assert_int_equal(array->len, 200000);
    g_array_free(array, TRUE);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim_mem_grow_keeps_contents),
        cmocka_unit_test(test_sim_mem_reserve_keeps_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
