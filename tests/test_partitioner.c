/*
 * Tests of models/partitioner: Kafka's murmur2 and keyed partition choice
 * against values produced by Kafka's Java client, the round-robin and sticky
 * keyless partitioners, and the `ksim partition` sub-command (run in-process:
 * its source is included so its string-writing core can be called).
 */
#include "partitioner.h"

#include "sim_rng.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cmd_partition.c"

typedef struct {
    const char *key;
    gint32 hash;
} Murmur2Case;

/* Kafka's UtilsTest.testMurmur2 (clients/src/test/java/org/apache/kafka/
 * common/utils/UtilsTest.java), plus the empty key and one- and two-byte keys,
 * whose values other Kafka client ports quote from the Java client; they
 * cover every length modulo 4. */
static const Murmur2Case MURMUR2_CASES[] = {
    {"21", -973932308},
    {"foobar", -790332482},
    {"a-little-bit-long-string", -985981536},
    {"a-little-bit-longer-string", -1486304829},
    {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
    {"abc", 479470107},
    {"", 275646681},
    {"a", -1563381124},
    {"ab", 316155434},
};

static void
test_partitioner_murmur2_matches_kafka(void **state)
{
    /* Goal: murmur2 gives Kafka's own test values, bit for bit. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(MURMUR2_CASES); i++) {
        const Murmur2Case *c = &MURMUR2_CASES[i];
        assert_int_equal(partitioner_murmur2((const guint8 *)c->key, strlen(c->key)), c->hash);
    }
    /* Non-ASCII bytes (sign extension would change them), from the same
     * Java-generated vector set: {12, 42, 56, 24, 109, 111} -> 274204207. */
    const guint8 raw[] = {12, 42, 56, 24, 109, 111};
    assert_int_equal(partitioner_murmur2(raw, sizeof(raw)), 274204207);
    const guint8 high[] = {0xff, 0x80, 0xfe};
    assert_int_not_equal(partitioner_murmur2(high, 3), partitioner_murmur2(high, 2));
    assert_int_equal(partitioner_murmur2(NULL, 0), 275646681);
}

static void
test_partitioner_to_positive_masks_sign_bit(void **state)
{
    /* Goal: toPositive is `& 0x7fffffff`, not abs(): INT_MIN maps to 0. */
    (void)state;
    assert_int_equal(partitioner_to_positive(G_MININT32), 0);
    assert_int_equal(partitioner_to_positive(-1), G_MAXINT32);
    assert_int_equal(partitioner_to_positive(-973932308), 1173551340);
    assert_int_equal(partitioner_to_positive(5), 5);
    assert_int_equal(partitioner_to_positive(0), 0);
}

typedef struct {
    const guint8 *key;
    gsize len;
    guint32 num_partitions;
    guint32 partition;
} KeyCase;

static const guint8 KEY_NUL_SPACE[] = {0, ' '};
/* Java's LongSerializer (big-endian 8 bytes) of 0, 1, 42 and -1. */
static const guint8 KEY_LONG_0[] = {0, 0, 0, 0, 0, 0, 0, 0};
static const guint8 KEY_LONG_1[] = {0, 0, 0, 0, 0, 0, 0, 1};
static const guint8 KEY_LONG_42[] = {0, 0, 0, 0, 0, 0, 0, 42};
static const guint8 KEY_LONG_MINUS_1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

#define KEY_STR(s) (const guint8 *)(s), sizeof(s) - 1

/* Partitions chosen by Kafka's Java partitioner, as quoted by kafka-python's
 * compatibility test (1000 partitions) and by a port checked against
 * kafka-clients 4.1.1 (Long keys, 3 partitions). */
static const KeyCase KEY_CASES[] = {
    {KEY_STR(""), 1000, 681},
    {KEY_STR("a"), 1000, 524},
    {KEY_STR("ab"), 1000, 434},
    {KEY_STR("abc"), 1000, 107},
    {KEY_STR("123456789"), 1000, 566},
    {KEY_NUL_SPACE, sizeof(KEY_NUL_SPACE), 1000, 742},
    {KEY_LONG_0, 8, 3, 2},
    {KEY_LONG_1, 8, 3, 0},
    {KEY_LONG_42, 8, 3, 1},
    {KEY_LONG_MINUS_1, 8, 3, 2},
    /* toPositive(murmur2("foobar")) = 1357151166. */
    {KEY_STR("foobar"), 10, 6},
    {KEY_STR("foobar"), 1, 0},
};

static void
test_partitioner_partition_for_key_matches_kafka(void **state)
{
    /* Goal: a key lands in the partition the Java client picks. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(KEY_CASES); i++) {
        const KeyCase *c = &KEY_CASES[i];
        assert_int_equal(partitioner_partition_for_key(c->key, c->len, c->num_partitions),
                         c->partition);
    }
}

static void
test_partitioner_round_robin_cycles_per_topic(void **state)
{
    /* Goal: each topic has its own counter, dealt over the available list. */
    (void)state;
    g_autoptr(PartitionerRoundRobin) rr = partitioner_round_robin_new();
    const guint32 all[] = {0, 1, 2};
    const guint32 expected[] = {0, 1, 2, 0, 1, 2, 0};
    for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
        assert_int_equal(partitioner_round_robin_partition(rr, "a", 3, all, 3), expected[i]);
        if (i == 2)
            assert_int_equal(partitioner_round_robin_partition(rr, "b", 3, all, 3), 0);
    }
    assert_int_equal(partitioner_round_robin_partition(rr, "b", 3, all, 3), 1);
    partitioner_round_robin_check_invariants(rr);
}

static void
test_partitioner_round_robin_uses_available_then_all(void **state)
{
    /* Goal: only partitions with a leader are used; with none, all are. */
    (void)state;
    g_autoptr(PartitionerRoundRobin) rr = partitioner_round_robin_new();
    const guint32 available[] = {1, 3};
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, available, 2), 1);
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, available, 2), 3);
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, available, 2), 1);
    /* The counter is now 3; with no leader anywhere, Kafka takes it modulo
     * the partition count. */
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, NULL, 0), 3);
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, NULL, 0), 0);
    assert_int_equal(partitioner_round_robin_partition(rr, "t", 4, available, 2), 3);
    partitioner_round_robin_check_invariants(rr);
}

static void
test_partitioner_sticky_sticks_until_new_batch(void **state)
{
    /* Goal: the partition stays until a new batch for it, then changes. */
    (void)state;
    g_autoptr(SimRng) rng = sim_rng_new(7, "producer/1");
    g_autoptr(PartitionerSticky) sticky = partitioner_sticky_new(rng);
    const guint32 all[] = {0, 1, 2, 3, 4, 5};
    guint32 current = partitioner_sticky_partition(sticky, "t", 6, all, 6);
    gboolean seen[6] = {FALSE};
    for (guint batch = 0; batch < 200; batch++) {
        for (guint record = 0; record < 5; record++)
            assert_int_equal(partitioner_sticky_partition(sticky, "t", 6, all, 6), current);
        seen[current] = TRUE;
        guint32 next = partitioner_sticky_on_new_batch(sticky, "t", 6, all, 6, current);
        assert_true(next < 6);
        assert_int_not_equal(next, current);
        /* A late new-batch call for the old partition does not move it again. */
        assert_int_equal(partitioner_sticky_on_new_batch(sticky, "t", 6, all, 6, current), next);
        current = next;
        partitioner_sticky_check_invariants(sticky);
    }
    for (guint p = 0; p < 6; p++)
        assert_true(seen[p]);
}

static void
test_partitioner_sticky_follows_availability(void **state)
{
    /* Goal: new partitions come from those with a leader, all when none has. */
    (void)state;
    g_autoptr(SimRng) rng = sim_rng_new(11, "producer/2");
    g_autoptr(PartitionerSticky) sticky = partitioner_sticky_new(rng);
    const guint32 one[] = {2};
    const guint32 two[] = {1, 3};
    assert_int_equal(partitioner_sticky_partition(sticky, "t", 4, one, 1), 2);
    assert_int_equal(partitioner_sticky_on_new_batch(sticky, "t", 4, one, 1, 2), 2);
    /* Two available and the old one (2) not among them: either may come;
     * after that each new batch must flip to the other. */
    guint32 p = partitioner_sticky_on_new_batch(sticky, "t", 4, two, 2, 2);
    assert_true(p == 1 || p == 3);
    for (guint i = 0; i < 20; i++) {
        guint32 next = partitioner_sticky_on_new_batch(sticky, "t", 4, two, 2, p);
        assert_int_equal(next, p == 1 ? 3u : 1u);
        p = next;
    }
    for (guint i = 0; i < 50; i++) {
        p = partitioner_sticky_on_new_batch(sticky, "t", 4, NULL, 0, p);
        assert_true(p < 4);
    }
    /* A topic first seen through a new batch gets a partition too. */
    assert_int_equal(partitioner_sticky_on_new_batch(sticky, "u", 4, one, 1, 0), 2);
    partitioner_sticky_check_invariants(sticky);
}

static void
test_partitioner_sticky_is_deterministic_per_seed(void **state)
{
    /* Goal: the same stream gives the same partitions; another stream differs. */
    (void)state;
    guint32 runs[3][40];
    const guint64 seeds[3] = {42, 42, 43};
    const guint32 all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    for (guint r = 0; r < 3; r++) {
        g_autoptr(SimRng) rng = sim_rng_new(seeds[r], "producer/0");
        g_autoptr(PartitionerSticky) sticky = partitioner_sticky_new(rng);
        guint32 p = partitioner_sticky_partition(sticky, "t", 16, all, 16);
        for (guint i = 0; i < 40; i++)
            runs[r][i] = p = partitioner_sticky_on_new_batch(sticky, "t", 16, all, 16, p);
    }
    assert_memory_equal(runs[0], runs[1], sizeof(runs[0]));
    assert_memory_not_equal(runs[0], runs[2], sizeof(runs[0]));
}

/* Runs `ksim partition` on a NULL-terminated argument list. */
static int
run_partition(const char *const *args, GString *out, GString *err)
{
    int argc = (int)g_strv_length((char **)args);
    return partition_run(argc, (char **)args, out, err);
}

static void
test_partitioner_command_prints_key_tab_partition(void **state)
{
    /* Goal: `ksim partition` prints KEY<TAB>PARTITION per key, in order. */
    (void)state;
    const char *const args[] = {"partition", "--partitions", "1000",  "abc", "",
                                "123456789", "--",           "-dash", "é",   NULL};
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    assert_int_equal(run_partition(args, out, err), 0);
    guint32 accent = partitioner_partition_for_key((const guint8 *)"\xc3\xa9", 2, 1000);
    g_autofree char *expected =
        g_strdup_printf("abc\t107\n\t681\n123456789\t566\n-dash\t%u\n"
                        "é\t%u\n",
                        partitioner_partition_for_key((const guint8 *)"-dash", 5, 1000), accent);
    assert_string_equal(out->str, expected);
    assert_string_equal(err->str, "");
}

static void
test_partitioner_command_help(void **state)
{
    /* Goal: --help prints usage to stdout and succeeds without exiting. */
    (void)state;
    const char *const args[] = {"partition", "--help", NULL};
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    assert_int_equal(run_partition(args, out, err), 0);
    assert_non_null(strstr(out->str, "--partitions"));
    assert_string_equal(err->str, "");
}

typedef struct {
    const char *args[6];
    const char *message;
} BadPartitionCase;

static const BadPartitionCase BAD_PARTITION_CASES[] = {
    {{"partition", "abc", NULL}, "--partitions N is required"},
    {{"partition", "--partitions", "0", "abc", NULL}, "not a partition count"},
    {{"partition", "--partitions", "-3", "abc", NULL}, "not a partition count"},
    {{"partition", "--partitions", "12x", "abc", NULL}, "not a partition count"},
    {{"partition", "--partitions", "99999999999", "abc", NULL}, "not a partition count"},
    {{"partition", "--partitions", "3", NULL}, "at least one KEY"},
    {{"partition", "--partitions", "3", "\xff", NULL}, "not valid UTF-8"},
    {{"partition", "--bogus", "3", NULL}, "Unknown option"},
};

static void
test_partitioner_command_rejects_bad_input(void **state)
{
    /* Goal: bad or missing input exits 2 with a message naming the problem. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(BAD_PARTITION_CASES); i++) {
        const BadPartitionCase *c = &BAD_PARTITION_CASES[i];
        g_autoptr(GString) out = g_string_new(NULL);
        g_autoptr(GString) err = g_string_new(NULL);
        assert_int_equal(run_partition(c->args, out, err), 2);
        assert_string_equal(out->str, "");
        if (strstr(err->str, c->message) == NULL)
            fail_msg("case %u: '%s' not in '%s'", i, c->message, err->str);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partitioner_murmur2_matches_kafka),
        cmocka_unit_test(test_partitioner_to_positive_masks_sign_bit),
        cmocka_unit_test(test_partitioner_partition_for_key_matches_kafka),
        cmocka_unit_test(test_partitioner_round_robin_cycles_per_topic),
        cmocka_unit_test(test_partitioner_round_robin_uses_available_then_all),
        cmocka_unit_test(test_partitioner_sticky_sticks_until_new_batch),
        cmocka_unit_test(test_partitioner_sticky_follows_availability),
        cmocka_unit_test(test_partitioner_sticky_is_deterministic_per_seed),
        cmocka_unit_test(test_partitioner_command_prints_key_tab_partition),
        cmocka_unit_test(test_partitioner_command_help),
        cmocka_unit_test(test_partitioner_command_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
