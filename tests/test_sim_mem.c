/*
 * test_sim_mem: arrays grown and reserved through sim_mem keep their
 * contents and lengths exactly as g_array_set_size would; the page
 * provisioning is invisible.
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
     * reallocations and populate steps (4 MiB), keeps every value written
     * and the length asked for; the room only grows. */
    (void)unused;
    GArray *array = g_array_new(FALSE, FALSE, sizeof(guint64));
    SimArrayRoom room = {0};
    guint previous_capacity = 0;
    for (guint i = 0; i < 700000; i++) {
        guint len = array->len;
        sim_array_grow(array, len + 1, &room);
        assert_int_equal(array->len, len + 1);
        g_array_index(array, guint64, len) = (guint64)i * 2654435761u;
        assert_true(room.capacity >= array->len);
        assert_true(room.capacity >= previous_capacity);
        previous_capacity = room.capacity;
    }
    sim_array_grow(array, array->len + 300000, &room);
    assert_int_equal(array->len, 1000000);
    assert_true(room.populated >= (gsize)array->len * sizeof(guint64));
    for (guint i = 0; i < 700000; i++)
        assert_true(g_array_index(array, guint64, i) == (guint64)i * 2654435761u);
    g_array_free(array, TRUE);
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
