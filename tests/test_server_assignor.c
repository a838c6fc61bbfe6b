/*
 * Server-side assignor tests (server_assignor.h): Kafka 4.0's own cases from
 * group-coordinator's OptimizedUniformAssignmentBuilderTest and
 * RangeAssignorTest (trunk 1eb7644), written as data. Kafka names topics by
 * Uuid and iterates a HashSet of them; ksim iterates topic names in order,
 * so each case names its topics in the order Kafka's set gave (noted where
 * that is not the obvious one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "server_assignor.h"

#include <string.h>

#define MEMBERS_MAX 4
#define ITEMS_MAX 8

/* One member of a case: its topics, its current target and the expected
 * new one, each a "topic:partition" list ending with NULL. */
typedef struct {
    const char *id;
    const char *topics[ITEMS_MAX];
    const char *current[ITEMS_MAX];
    const char *expected[ITEMS_MAX];
} CaseMember;

typedef struct {
    const char *name;
    ServerAssignorKind kind;
    ServerAssignorTopic topics[ITEMS_MAX]; /* ends with an empty name */
    CaseMember members[MEMBERS_MAX];       /* ends with a NULL id */
} Case;

static GArray *
tps_of(const char *const *items)
{
    GArray *tps = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    for (guint i = 0; items[i] != NULL; i++) {
        const char *colon = strrchr(items[i], ':');
        g_autofree char *topic = g_strndup(items[i], (gsize)(colon - items[i]));
        KTopicPartition tp;
        ktp_set(&tp, topic, (gint32)g_ascii_strtoll(colon + 1, NULL, 10));
        g_array_append_val(tps, tp);
    }
    g_array_sort(tps, (GCompareFunc)ktp_compare);
    return tps;
}

static GArray *
names_of(const char *const *items)
{
    GArray *names = g_array_new(FALSE, FALSE, sizeof(KTopicName));
    for (guint i = 0; items[i] != NULL; i++) {
        KTopicName name;
        KPROTO_SET_ID(name.name, items[i]);
        g_array_append_val(names, name);
    }
    /* The coordinator keeps subscriptions sorted. */
    g_array_sort(names, (GCompareFunc)strcmp);
    return names;
}

static void
run_case(const Case *c)
{
    g_autoptr(GArray) topics = g_array_new(FALSE, FALSE, sizeof(ServerAssignorTopic));
    for (guint t = 0; c->topics[t].topic[0] != '\0'; t++)
        g_array_append_val(topics, c->topics[t]);
    ServerAssignorMember members[MEMBERS_MAX];
    GArray *owned[2 * MEMBERS_MAX];
    guint n = 0;
    for (; n < MEMBERS_MAX && c->members[n].id != NULL; n++) {
        owned[2 * n] = names_of(c->members[n].topics);
        owned[2 * n + 1] = tps_of(c->members[n].current);
        members[n] = (ServerAssignorMember){c->members[n].id, owned[2 * n], owned[2 * n + 1]};
    }
    g_autoptr(GPtrArray) result = server_assignor_assign(c->kind, members, n, topics);
    assert_int_equal(result->len, n);
    for (guint m = 0; m < n; m++) {
        g_autoptr(GArray) expected = tps_of(c->members[m].expected);
        const GArray *got = g_ptr_array_index(result, m);
        if (got->len != expected->len)
            fail_msg("%s: member %s got %u partitions, expected %u", c->name, c->members[m].id,
                     got->len, expected->len);
        for (guint i = 0; i < got->len; i++) {
            const KTopicPartition *a = &g_array_index(got, KTopicPartition, i);
            const KTopicPartition *b = &g_array_index(expected, KTopicPartition, i);
            if (!ktp_equal(a, b))
                fail_msg("%s: member %s got %s-%d, expected %s-%d", c->name, c->members[m].id,
                         a->topic, a->partition, b->topic, b->partition);
        }
        g_array_free(owned[2 * m], TRUE);
        g_array_free(owned[2 * m + 1], TRUE);
    }
}

/* UniformHomogeneousAssignmentBuilder, from OptimizedUniformAssignmentBuilderTest. */
static void
test_server_assignor_uniform_kafka_cases(void **unused)
{
    (void)unused;
    static const Case cases[] = {
        /* testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks: Kafka's set
         * iterated topic3 before topic1, hence "a-topic3". */
        {"first-two-members",
         SERVER_ASSIGNOR_UNIFORM,
         {{"a-topic3", 2}, {"topic1", 3}, {"", 0}},
         {{"A",
           {"topic1", "a-topic3", NULL},
           {NULL},
           {"topic1:0", "a-topic3:0", "a-topic3:1", NULL}},
          {"B", {"topic1", "a-topic3", NULL}, {NULL}, {"topic1:1", "topic1:2", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment */
        {"unbalanced-previous",
         SERVER_ASSIGNOR_UNIFORM,
         {{"topic1", 3}, {"topic2", 3}, {"", 0}},
         {{"A",
           {"topic1", "topic2", NULL},
           {"topic1:0", "topic1:1", "topic2:0", "topic2:1", NULL},
           {"topic1:0", "topic1:1", "topic2:0", NULL}},
          {"B",
           {"topic1", "topic2", NULL},
           {"topic1:2", "topic2:2", NULL},
           {"topic1:2", "topic2:1", "topic2:2", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics:
         * only the partitions the new member needs move. */
        {"member-added",
         SERVER_ASSIGNOR_UNIFORM,
         {{"topic1", 3}, {"topic2", 3}, {"", 0}},
         {{"A",
           {"topic1", "topic2", NULL},
           {"topic1:0", "topic1:2", "topic2:0", NULL},
           {"topic1:0", "topic1:2", NULL}},
          {"B",
           {"topic1", "topic2", NULL},
           {"topic1:1", "topic2:1", "topic2:2", NULL},
           {"topic1:1", "topic2:1", NULL}},
          {"C", {"topic1", "topic2", NULL}, {NULL}, {"topic2:0", "topic2:2", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics:
         * C left; A and B keep theirs and share C's. Kafka's set iterated
         * topic2 before topic1, hence "a-topic2". */
        {"member-removed",
         SERVER_ASSIGNOR_UNIFORM,
         {{"a-topic2", 3}, {"topic1", 3}, {"", 0}},
         {{"A",
           {"topic1", "a-topic2", NULL},
           {"topic1:0", "a-topic2:0", NULL},
           {"topic1:0", "a-topic2:0", "a-topic2:2", NULL}},
          {"B",
           {"topic1", "a-topic2", NULL},
           {"topic1:1", "a-topic2:1", NULL},
           {"topic1:1", "topic1:2", "a-topic2:1", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testFirstAssignmentNumMembersGreaterThanTotalNumPartitions */
        {"more-members-than-partitions",
         SERVER_ASSIGNOR_UNIFORM,
         {{"topic1", 1}, {"", 0}},
         {{"A", {"topic1", NULL}, {NULL}, {"topic1:0", NULL}},
          {"B", {"topic1", NULL}, {NULL}, {NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testOneMemberSubscribedToNonexistentTopic: Kafka throws; the
         * coordinator leaves unknown topics out of the metadata, so none. */
        {"unknown-topic",
         SERVER_ASSIGNOR_UNIFORM,
         {{"topic1", 3}, {"", 0}},
         {{"A", {"topic9", NULL}, {NULL}, {NULL}}, {NULL, {NULL}, {NULL}, {NULL}}}},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        run_case(&cases[i]);
}

/* RangeAssignor, from RangeAssignorTest: contiguous ranges in member
 * order, not sticky. */
static void
test_server_assignor_range_kafka_cases(void **unused)
{
    (void)unused;
    static const Case cases[] = {
        /* testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions */
        {"two-members",
         SERVER_ASSIGNOR_RANGE,
         {{"topic1", 3}, {"topic3", 2}, {"", 0}},
         {{"A", {"topic1", "topic3", NULL}, {NULL}, {"topic1:0", "topic1:1", "topic3:0", NULL}},
          {"B", {"topic1", "topic3", NULL}, {NULL}, {"topic1:2", "topic3:1", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions */
        {"different-subscriptions",
         SERVER_ASSIGNOR_RANGE,
         {{"topic1", 3}, {"topic2", 3}, {"topic3", 2}, {"", 0}},
         {{"A",
           {"topic1", "topic2", NULL},
           {NULL},
           {"topic1:0", "topic1:1", "topic1:2", "topic2:0", "topic2:1", NULL}},
          {"B", {"topic3", NULL}, {NULL}, {"topic3:0", NULL}},
          {"C", {"topic2", "topic3", NULL}, {NULL}, {"topic2:2", "topic3:1", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
        /* testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics:
         * the ranges are recut, whatever was owned. */
        {"member-added",
         SERVER_ASSIGNOR_RANGE,
         {{"topic1", 3}, {"topic2", 3}, {"", 0}},
         {{"A",
           {"topic1", "topic2", NULL},
           {"topic1:0", "topic1:1", "topic2:0", "topic2:1", NULL},
           {"topic1:0", "topic2:0", NULL}},
          {"B",
           {"topic1", "topic2", NULL},
           {"topic1:2", "topic2:2", NULL},
           {"topic1:1", "topic2:1", NULL}},
          {"C", {"topic1", "topic2", NULL}, {NULL}, {"topic1:2", "topic2:2", NULL}},
          {NULL, {NULL}, {NULL}, {NULL}}}},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        run_case(&cases[i]);
}

/* The names group.consumer.assignors and group.remote.assignor take. */
static void
test_server_assignor_names(void **unused)
{
    (void)unused;
    ServerAssignorKind kind;
    assert_true(server_assignor_parse("uniform", &kind));
    assert_int_equal(kind, SERVER_ASSIGNOR_UNIFORM);
    assert_true(server_assignor_parse("range", &kind));
    assert_int_equal(kind, SERVER_ASSIGNOR_RANGE);
    assert_false(server_assignor_parse("sticky", &kind));
    assert_string_equal(server_assignor_name(SERVER_ASSIGNOR_RANGE), "range");
    assert_null(server_assignor_name(SERVER_ASSIGNOR_COUNT));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_server_assignor_uniform_kafka_cases),
        cmocka_unit_test(test_server_assignor_range_kafka_cases),
        cmocka_unit_test(test_server_assignor_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
