/*
 * Tests of models/assignor: range, roundrobin, sticky and cooperative-sticky
 * on the examples of Kafka's javadoc and KIP-429 and on the cases of Kafka's
 * own tests (RangeAssignorTest, RoundRobinAssignorTest,
 * AbstractStickyAssignorTest, CooperativeStickyAssignorTest), on edge cases, on
 * multi-round stickiness, on random groups (validity and balance), and the
 * `ksim assign` sub-command (run in-process: its source is included so its
 * string-writing core can be called).
 *
 * Inputs are written compactly: topics "t0:3 t1:3"; members "ID:T1,T2" or
 * "ID@GENERATION:T1,T2"; owned "ID:T-P,T-P".
 */
#include "assignor.h"

#include "sim_rng.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd_assign.c"

#define SPECS_MAX 12

static void
add_member_spec(AssignorInput *input, const char *spec)
{
    const char *colon = strrchr(spec, ':');
    assert_non_null(colon);
    g_autofree char *head = g_strndup(spec, (gsize)(colon - spec));
    gint32 generation = ASSIGNOR_GENERATION_NONE;
    char *at = strchr(head, '@');
    if (at != NULL) {
        *at = '\0';
        generation = (gint32)g_ascii_strtoll(at + 1, NULL, 10);
    }
    g_auto(GStrv) topics = g_strsplit(colon + 1, ",", -1);
    assert_true(assignor_input_add_member(input, head, (const char *const *)topics,
                                          g_strv_length(topics), generation));
}

static void
add_owned_spec(AssignorInput *input, const char *spec)
{
    const char *colon = strrchr(spec, ':');
    assert_non_null(colon);
    g_autofree char *id = g_strndup(spec, (gsize)(colon - spec));
    g_auto(GStrv) items = g_strsplit(colon + 1, ",", -1);
    for (guint i = 0; items[i] != NULL; i++) {
        const char *dash = strrchr(items[i], '-');
        assert_non_null(dash);
        g_autofree char *topic = g_strndup(items[i], (gsize)(dash - items[i]));
        guint32 partition = (guint32)g_ascii_strtoull(dash + 1, NULL, 10);
        assert_true(assignor_input_add_owned(input, id, topic, partition));
    }
}

static AssignorInput *
input_from(const char *topics, const char *const *members, const char *const *owned)
{
    AssignorInput *input = assignor_input_new();
    g_auto(GStrv) topic_specs = g_strsplit(topics, " ", -1);
    for (guint i = 0; topic_specs[i] != NULL; i++) {
        if (topic_specs[i][0] == '\0')
            continue;
        char *colon = strrchr(topic_specs[i], ':');
        assert_non_null(colon);
        *colon = '\0';
        assert_true(assignor_input_add_topic(input, topic_specs[i],
                                             (guint32)g_ascii_strtoull(colon + 1, NULL, 10)));
    }
    for (guint i = 0; members != NULL && members[i] != NULL; i++)
        add_member_spec(input, members[i]);
    for (guint i = 0; owned != NULL && owned[i] != NULL; i++)
        add_owned_spec(input, owned[i]);
    return input;
}

/* Assigns, checks validity, and returns the `ksim assign` text. */
static char *
assign_text(const AssignorInput *input, AssignorStrategy strategy)
{
    g_autoptr(AssignorResult) result = assignor_assign(input, strategy);
    assignor_result_check_invariants(result, input);
    if (assignor_strategy_cooperative(strategy))
        assignor_result_check_cooperative(result, input);
    GString *out = g_string_new(NULL);
    assignor_result_format(result, out);
    return g_string_free(out, FALSE);
}

typedef struct {
    const char *name;
    AssignorStrategy strategy;
    const char *topics;
    const char *members[SPECS_MAX];
    const char *owned[SPECS_MAX];
    const char *expected;
} AssignCase;

static void
run_cases(const AssignCase *cases, guint n)
{
    for (guint i = 0; i < n; i++) {
        const AssignCase *c = &cases[i];
        g_autoptr(AssignorInput) input = input_from(c->topics, c->members, c->owned);
        g_autofree char *text = assign_text(input, c->strategy);
        if (strcmp(text, c->expected) != 0)
            fail_msg("%s (%s):\nexpected:\n%sgot:\n%s", c->name,
                     assignor_strategy_name(c->strategy), c->expected, text);
    }
}

static const AssignCase RANGE_CASES[] = {
    {"javadoc: t0, t1 with 3 partitions, C0 and C1",
     ASSIGNOR_RANGE,
     "t0:3 t1:3",
     {"C0:t0,t1", "C1:t0,t1"},
     {NULL},
     "C0 t0-0 t0-1 t1-0 t1-1\nC1 t0-2 t1-2\n"},
    {"uneven subscriptions",
     ASSIGNOR_RANGE,
     "t0:1 t1:2 t2:3",
     {"C0:t0", "C1:t0,t1", "C2:t0,t1,t2"},
     {NULL},
     "C0 t0-0\nC1 t1-0\nC2 t1-1 t2-0 t2-1 t2-2\n"},
    {"RangeAssignorTest mixed topics",
     ASSIGNOR_RANGE,
     "topic1:3 topic2:2",
     {"consumer1:topic1", "consumer2:topic1,topic2", "consumer3:topic1"},
     {NULL},
     "consumer1 topic1-0\nconsumer2 topic1-1 topic2-0 topic2-1\nconsumer3 topic1-2\n"},
    {"ten partitions over three members",
     ASSIGNOR_RANGE,
     "t:10",
     {"a:t", "b:t", "c:t"},
     {NULL},
     "a t-0 t-1 t-2 t-3\nb t-4 t-5 t-6\nc t-7 t-8 t-9\n"},
    {"more members than partitions: idle members",
     ASSIGNOR_RANGE,
     "t0:2",
     {"C3:t0", "C1:t0", "C0:t0", "C2:t0"},
     {NULL},
     "C0 t0-0\nC1 t0-1\nC2\nC3\n"},
    {"unknown topic and zero partitions",
     ASSIGNOR_RANGE,
     "t0:0 t1:2",
     {"C0:ghost", "C1:t0,t1", "C2:t1,ghost"},
     {NULL},
     "C0\nC1 t1-0\nC2 t1-1\n"},
    {"member ids sorted bytewise",
     ASSIGNOR_RANGE,
     "t:3",
     {"b:t", "B:t", "a10:t", "a9:t"},
     {NULL},
     "B t-0\na10 t-1\na9 t-2\nb\n"},
};

static const AssignCase ROUNDROBIN_CASES[] = {
    {"javadoc: t0, t1 with 3 partitions, C0 and C1",
     ASSIGNOR_ROUNDROBIN,
     "t0:3 t1:3",
     {"C1:t0,t1", "C0:t0,t1"},
     {NULL},
     "C0 t0-0 t0-2 t1-1\nC1 t0-1 t1-0 t1-2\n"},
    {"javadoc: uneven subscriptions",
     ASSIGNOR_ROUNDROBIN,
     "t0:1 t1:2 t2:3",
     {"C0:t0", "C1:t0,t1", "C2:t0,t1,t2"},
     {NULL},
     "C0 t0-0\nC1 t1-0\nC2 t1-1 t2-0 t2-1 t2-2\n"},
    {"RoundRobinAssignorTest mixed topics",
     ASSIGNOR_ROUNDROBIN,
     "topic1:3 topic2:2",
     {"consumer1:topic1", "consumer2:topic1,topic2", "consumer3:topic1"},
     {NULL},
     "consumer1 topic1-0\nconsumer2 topic1-1 topic2-0 topic2-1\nconsumer3 topic1-2\n"},
    {"more members than partitions: idle members",
     ASSIGNOR_ROUNDROBIN,
     "t0:2 t1:1",
     {"C0:t0,t1", "C1:t0,t1", "C2:t0,t1", "C3:t0,t1"},
     {NULL},
     "C0 t0-0\nC1 t0-1\nC2 t1-0\nC3\n"},
    {"declared topic nobody subscribes to",
     ASSIGNOR_ROUNDROBIN,
     "t0:2 unused:4",
     {"C0:t0,ghost", "C1:t0"},
     {NULL},
     "C0 t0-0\nC1 t0-1\n"},
};

/* Sticky cases with Kafka's exact expectations. Members' owned partitions
 * carry a generation ("ID@GEN"); Kafka's tests use generation 1 unless said. */
static const AssignCase STICKY_CASES[] = {
    {"javadoc example 1, fresh",
     ASSIGNOR_STICKY,
     "t0:2 t1:2 t2:2 t3:2",
     {"C0:t0,t1,t2,t3", "C1:t0,t1,t2,t3", "C2:t0,t1,t2,t3"},
     {NULL},
     "C0 t0-0 t1-1 t3-0\nC1 t0-1 t2-0 t3-1\nC2 t1-0 t2-1\n"},
    /* Every previous partition stays; C1's go where the 3.x constrained
     * algorithm deals them (the javadoc, written for the older algorithm,
     * shows another equally sticky split). */
    {"javadoc example 1, C1 leaves",
     ASSIGNOR_STICKY,
     "t0:2 t1:2 t2:2 t3:2",
     {"C0@1:t0,t1,t2,t3", "C2@1:t0,t1,t2,t3"},
     {"C0:t0-0,t1-1,t3-0", "C2:t1-0,t2-1"},
     "C0 t0-0 t0-1 t1-1 t3-0\nC2 t1-0 t2-0 t2-1 t3-1\n"},
    {"javadoc example 2, fresh",
     ASSIGNOR_STICKY,
     "t0:1 t1:2 t2:3",
     {"C0:t0", "C1:t0,t1", "C2:t0,t1,t2"},
     {NULL},
     "C0 t0-0\nC1 t1-0 t1-1\nC2 t2-0 t2-1 t2-2\n"},
    {"javadoc example 2, C0 leaves",
     ASSIGNOR_STICKY,
     "t0:1 t1:2 t2:3",
     {"C1@1:t0,t1", "C2@1:t0,t1,t2"},
     {"C1:t1-0,t1-1", "C2:t2-0,t2-1,t2-2"},
     "C1 t0-0 t1-0 t1-1\nC2 t2-0 t2-1 t2-2\n"},
    {"testOneConsumerOneTopic",
     ASSIGNOR_STICKY,
     "topic:3",
     {"consumer:topic"},
     {NULL},
     "consumer topic-0 topic-1 topic-2\n"},
    {"testOnlyAssignsPartitionsFromSubscribedTopics",
     ASSIGNOR_STICKY,
     "topic:2",
     {"consumer@1:topic"},
     {"consumer:topic-0,topic-1,other-0,other-1"},
     "consumer topic-0 topic-1\n"},
    {"testOneConsumerMultipleTopics",
     ASSIGNOR_STICKY,
     "topic1:1 topic2:2",
     {"consumer:topic1,topic2"},
     {NULL},
     "consumer topic1-0 topic2-0 topic2-1\n"},
    {"testTwoConsumersOneTopicTwoPartitions",
     ASSIGNOR_STICKY,
     "topic:2",
     {"consumer1:topic", "consumer2:topic"},
     {NULL},
     "consumer1 topic-0\nconsumer2 topic-1\n"},
    {"testMultipleConsumersMixedTopicSubscriptions",
     ASSIGNOR_STICKY,
     "topic1:3 topic2:2",
     {"consumer1:topic1", "consumer2:topic1,topic2", "consumer3:topic1"},
     {NULL},
     "consumer1 topic1-0 topic1-2\nconsumer2 topic2-0 topic2-1\nconsumer3 topic1-1\n"},
    {"testTwoConsumersTwoTopicsSixPartitions",
     ASSIGNOR_STICKY,
     "topic1:3 topic2:3",
     {"consumer1:topic1,topic2", "consumer2:topic1,topic2"},
     {NULL},
     "consumer1 topic1-0 topic1-2 topic2-1\nconsumer2 topic1-1 topic2-0 topic2-2\n"},
    {"testConsumerOwningMinQuotaExpectedMaxQuota",
     ASSIGNOR_STICKY,
     "topic1:2 topic2:3",
     {"consumer1@1:topic1,topic2", "consumer2@1:topic1,topic2"},
     {"consumer1:topic1-0,topic2-1", "consumer2:topic1-1,topic2-2"},
     "consumer1 topic1-0 topic2-0 topic2-1\nconsumer2 topic1-1 topic2-2\n"},
    /* Kafka's HashMap happened to visit consumer2 first and expects the mirror
     * image (consumer2 keeps both, consumer1 keeps topic1-0); in sorted order
     * consumer1 comes first. */
    {"testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers",
     ASSIGNOR_STICKY,
     "topic1:2 topic2:2",
     {"consumer1@1:topic1,topic2", "consumer2@1:topic1,topic2", "consumer3@1:topic1,topic2"},
     {"consumer1:topic1-0,topic2-0", "consumer2:topic1-1,topic2-1"},
     "consumer1 topic1-0 topic2-0\nconsumer2 topic1-1\nconsumer3 topic2-1\n"},
    {"testAllConsumersAreUnderMinQuota",
     ASSIGNOR_STICKY,
     "topic1:2 topic2:3",
     {"consumer1@1:topic1,topic2", "consumer2@1:topic1,topic2", "consumer3@1:topic1,topic2"},
     {"consumer1:topic1-0", "consumer2:topic1-1"},
     "consumer1 topic1-0 topic2-1\nconsumer2 topic1-1 topic2-2\nconsumer3 topic2-0\n"},
    {"testAllConsumersReachExpectedQuotaAndAreConsideredFilled",
     ASSIGNOR_STICKY,
     "topic:4",
     {"consumer1@1:topic", "consumer2@1:topic", "consumer3@1:topic"},
     {"consumer1:topic-0,topic-1", "consumer2:topic-2"},
     "consumer1 topic-0 topic-1\nconsumer2 topic-2\nconsumer3 topic-3\n"},
    {"testPartitionsTransferringOwnership...ClaimedByMultipleConsumersInSameGeneration",
     ASSIGNOR_STICKY,
     "topic:3",
     {"consumer1@1:topic", "consumer2@1:topic", "consumer3@1:topic"},
     {"consumer1:topic-0,topic-1", "consumer2:topic-0,topic-2"},
     "consumer1 topic-1\nconsumer2 topic-2\nconsumer3 topic-0\n"},
    {"testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration",
     ASSIGNOR_STICKY,
     "topic:3 topic2:3",
     {"consumer1@10:topic,topic2", "consumer2@9:topic,topic2"},
     {"consumer1:topic-0,topic-2,topic2-1", "consumer2:topic-0,topic-2,topic2-1"},
     "consumer1 topic-0 topic-2 topic2-1\nconsumer2 topic-1 topic2-0 topic2-2\n"},
    {"testOwnedPartitionsAreInvalidatedForConsumerWithNoGeneration",
     ASSIGNOR_STICKY,
     "topic:3 topic2:3",
     {"consumer1@10:topic,topic2", "consumer2:topic,topic2"},
     {"consumer1:topic-0,topic-2,topic2-1", "consumer2:topic-0,topic-2,topic2-1"},
     "consumer1 topic-0 topic-2 topic2-1\nconsumer2 topic-1 topic2-0 topic2-2\n"},
    {"testEnsurePartitionsAssignedToHighestGeneration",
     ASSIGNOR_STICKY,
     "topic:3 topic2:3 topic3:3",
     {"consumer1@10:topic,topic2,topic3", "consumer2@9:topic,topic2,topic3",
      "consumer3@8:topic,topic2,topic3"},
     {"consumer1:topic-0,topic2-0,topic3-0", "consumer2:topic-1,topic2-1,topic3-1",
      "consumer3:topic2-1,topic3-0,topic3-2"},
     "consumer1 topic-0 topic2-0 topic3-0\nconsumer2 topic-1 topic2-1 topic3-1\n"
     "consumer3 topic-2 topic2-2 topic3-2\n"},
    {"testNoReassignmentOnCurrentMembers",
     ASSIGNOR_STICKY,
     "topic:3 topic1:3 topic2:3 topic3:3",
     {"consumer1:topic,topic2,topic3,topic1", "consumer2@9:topic,topic2,topic3,topic1",
      "consumer3@8:topic,topic2,topic3,topic1", "consumer4@7:topic,topic2,topic3,topic1"},
     {"consumer2:topic-0,topic2-0,topic1-0", "consumer3:topic3-2,topic2-2,topic1-1",
      "consumer4:topic3-1,topic-1,topic-2"},
     "consumer1 topic1-2 topic2-1 topic3-0\nconsumer2 topic-0 topic1-0 topic2-0\n"
     "consumer3 topic1-1 topic2-2 topic3-2\nconsumer4 topic-1 topic-2 topic3-1\n"},
    {"testOwnedPartitionsAreInvalidatedForConsumerWithMultipleGeneration",
     ASSIGNOR_STICKY,
     "topic:3 topic2:3",
     {"consumer1@10:topic,topic2", "consumer2@8:topic,topic2"},
     {"consumer1:topic-0,topic2-1,topic-1", "consumer2:topic-0,topic2-1,topic2-2"},
     "consumer1 topic-0 topic-1 topic2-1\nconsumer2 topic-2 topic2-0 topic2-2\n"},
    /* testRackAwareAssignmentWith{Uniform,NonEqual}Subscription, the results
     * Kafka expects when racks play no part. */
    {"rack test, uniform subscription",
     ASSIGNOR_STICKY,
     "t1:6 t2:7 t3:2",
     {"consumer0:t1,t2,t3", "consumer1:t1,t2,t3", "consumer2:t1,t2,t3"},
     {NULL},
     "consumer0 t1-0 t1-3 t2-0 t2-3 t2-6\nconsumer1 t1-1 t1-4 t2-1 t2-4 t3-0\n"
     "consumer2 t1-2 t1-5 t2-2 t2-5 t3-1\n"},
    {"rack test, non-equal subscription",
     ASSIGNOR_STICKY,
     "t1:6 t2:7 t3:2",
     {"consumer0:t1,t2,t3", "consumer1:t1,t2,t3", "consumer2:t1,t3"},
     {NULL},
     "consumer0 t1-5 t2-0 t2-2 t2-4 t2-6\nconsumer1 t1-3 t2-1 t2-3 t2-5 t3-0\n"
     "consumer2 t1-0 t1-1 t1-2 t1-4 t3-1\n"},
    {"rack test, non-equal subscription from the cooperative intermediate",
     ASSIGNOR_STICKY,
     "t1:6 t2:7 t3:2",
     {"consumer0:t1,t2,t3", "consumer1:t1,t2,t3", "consumer2:t1,t3"},
     {"consumer0:t1-2,t1-3,t1-4", "consumer1:t2-0,t2-1,t2-2,t2-3", "consumer2:t3-0,t3-1"},
     "consumer0 t1-2 t1-3 t1-4 t2-4 t2-5\nconsumer1 t2-0 t2-1 t2-2 t2-3 t2-6\n"
     "consumer2 t1-0 t1-1 t1-5 t3-0 t3-1\n"},
    /* testAddRemoveTwoConsumersTwoTopics, second round, as Kafka 3.8+ computes
     * it: owned partitions are kept in (partition, topic) order since
     * KAFKA-16277, so consumer1 keeps topic1-0 and topic2-1. */
    {"testAddRemoveTwoConsumersTwoTopics, two members join",
     ASSIGNOR_STICKY,
     "topic1:3 topic2:4",
     {"consumer1@1:topic1,topic2", "consumer2@1:topic1,topic2", "consumer3@1:topic1,topic2",
      "consumer4@1:topic1,topic2"},
     {"consumer1:topic1-0,topic1-2,topic2-1,topic2-3", "consumer2:topic1-1,topic2-0,topic2-2"},
     "consumer1 topic1-0 topic2-1\nconsumer2 topic1-1 topic2-0\nconsumer3 topic1-2 topic2-3\n"
     "consumer4 topic2-2\n"},
    {"more members than partitions: idle members",
     ASSIGNOR_STICKY,
     "t0:2",
     {"C3:t0", "C1:t0", "C0:t0", "C2:t0"},
     {NULL},
     "C0 t0-0\nC1 t0-1\nC2\nC3\n"},
    {"unknown topic, zero partitions",
     ASSIGNOR_STICKY,
     "t0:2 t1:0",
     {"C0:ghost", "C1:t0,t1", "C2:t1"},
     {NULL},
     "C0\nC1 t0-0 t0-1\nC2\n"},
    {"owned partition beyond the partition count is dropped",
     ASSIGNOR_STICKY,
     "t:2",
     {"a@1:t", "b@1:t"},
     {"a:t-5,t-1"},
     "a t-1\nb t-0\n"},
    /* Regression cases that pin the general algorithm's finer steps. Each was
     * found by random search as one where dropping that step changes the
     * result, and checked equal to a Java transcription of Kafka 3.8's
     * AbstractStickyAssignor (members iterated in sorted order). */
    {"oracle: a partition moved back along an earlier move",
     ASSIGNOR_STICKY,
     "t0:8 t1:12 t2:7 t3:5 t4:2 t5:10",
     {"m0@1:t1,t4,t5", "m1@0:t0,t1,t2", "m4@1:t0,t1,t3,t4,t6", "m5@0:t0,t6", "m6@1:t0,t2,t4,t5"},
     {"m0:t1-0,t1-1,t1-2,t1-4,t1-7,t1-10,t5-4,t5-9", "m1:t4-1",
      "m4:t0-6,t0-7,t1-3,t1-6,t1-9,t3-1,t3-3", "m5:t0-0,t0-1,t0-2,t0-3,t0-4,t0-5",
      "m6:t2-0,t2-1,t2-2,t2-3,t2-4,t2-5,t2-6,t5-8"},
     "m0 t1-1 t1-2 t1-4 t1-7 t1-10 t5-4 t5-5 t5-7 t5-9\n"
     "m1 t1-0 t1-3 t1-5 t1-8 t1-11 t2-0 t2-1 t2-2 t2-3\n"
     "m4 t1-6 t1-9 t3-0 t3-1 t3-2 t3-3 t3-4 t4-0 t4-1\n"
     "m5 t0-0 t0-1 t0-2 t0-3 t0-4 t0-5 t0-6 t0-7\n"
     "m6 t2-4 t2-5 t2-6 t5-0 t5-1 t5-2 t5-3 t5-6 t5-8\n"},
    {"oracle: back to the previous generation's owner",
     ASSIGNOR_STICKY,
     "t0:6",
     {"m0@1:t0,t1", "m1@0:t0,t1", "m2@0:t0,t1", "m3@1:t0", "m4@1:t0", "m5@0:t0,t1", "m6@0:t0",
      "m7@2:t0", "m8@2:t1"},
     {"m0:t0-1", "m1:t0-3", "m2:t0-0", "m3:t0-2", "m4:t0-1", "m5:t0-2", "m6:t0-4", "m7:t0-5,t0-4"},
     "m0 t0-1\n"
     "m1 t0-3\n"
     "m2 t0-0\n"
     "m3 t0-2\n"
     "m4\n"
     "m5\n"
     "m6 t0-4\n"
     "m7 t0-5\n"
     "m8\n"},
    {"oracle: the first balancing pass over unassigned partitions",
     ASSIGNOR_STICKY,
     "t0:7 t1:9 t2:7 t3:15",
     {"m0@1:t0,t1", "m1@1:t0,t1,t3", "m3@1:t2", "m4:t0,t1,t2"},
     {"m1:t1-8"},
     "m0 t0-1 t0-2 t0-3 t0-5 t1-0 t1-2 t1-4 t1-6\n"
     "m1 t3-0 t3-1 t3-2 t3-3 t3-4 t3-5 t3-6 t3-7 t3-8 t3-9 t3-10 t3-11 t3-12 t3-13 t3-14\n"
     "m3 t2-0 t2-1 t2-2 t2-3 t2-4 t2-5 t2-6\n"
     "m4 t0-0 t0-4 t0-6 t1-1 t1-3 t1-5 t1-7 t1-8\n"},
    {"oracle: a revoked subscription skips the first pass",
     ASSIGNOR_STICKY,
     "t0:15 t1:0 t2:12 t3:15 t4:12 t5:1",
     {"m0@0:t2,t3,t4,t5", "m1@1:t0,t1,t3,t6", "m2:t1,t6", "m3:t0,t1,t2,t3", "m4@1:t0,t5"},
     {"m0:t0-11", "m3:t0-1"},
     "m0 t2-11 t3-12 t4-0 t4-1 t4-2 t4-3 t4-4 t4-5 t4-6 t4-7 t4-8 t4-9 t4-10 t4-11\n"
     "m1 t0-10 t0-12 t0-14 t3-0 t3-1 t3-2 t3-3 t3-4 t3-5 t3-6 t3-7 t3-9 t3-10 t3-13\n"
     "m2\n"
     "m3 t2-0 t2-1 t2-2 t2-3 t2-4 t2-5 t2-6 t2-7 t2-8 t2-9 t2-10 t3-8 t3-11 t3-14\n"
     "m4 t0-0 t0-1 t0-2 t0-3 t0-4 t0-5 t0-6 t0-7 t0-8 t0-9 t0-11 t0-13 t5-0\n"},
    {"oracle: a newer generation takes a claimed partition",
     ASSIGNOR_STICKY,
     "t0:1",
     {"m0:t0", "m1@1:t0"},
     {"m0:t0-0", "m1:t0-0"},
     "m0\n"
     "m1 t0-0\n"},
    {"oracle: the most recent older generation is the previous owner",
     ASSIGNOR_STICKY,
     "t0:3",
     {"m0@0:t0,t1", "m1@1:t0", "m2@1:t0,t1", "m3:t0", "m4@0:t0,t1"},
     {"m0:t0-0,t0-2", "m1:t0-1", "m2:t0-2,t0-0", "m3:t0-0", "m4:t0-0"},
     "m0 t0-0\n"
     "m1 t0-1\n"
     "m2 t0-2\n"
     "m3\n"
     "m4\n"},
    {"oracle: doubly claimed, then claimed by a newer generation",
     ASSIGNOR_STICKY,
     "t0:3",
     {"m0:t0", "m1:t0", "m2:t0", "m3@1:t0"},
     {"m0:t0-0,t0-2", "m1:t0-1,t0-0", "m2:t0-2", "m3:t0-0"},
     "m0 t0-0\n"
     "m1 t0-1\n"
     "m2 t0-2\n"
     "m3\n"},
};

/* Cooperative-sticky cases: KIP-429's example of a member joining, and
 * CooperativeStickyAssignorTest's. A partition that changes owner is in no
 * line of the first rebalance and goes to its new owner in the second. */
static const AssignCase COOPERATIVE_CASES[] = {
    {"KIP-429: a third member joins two on 6 partitions, first rebalance",
     ASSIGNOR_COOPERATIVE_STICKY,
     "t:6",
     {"C1@1:t", "C2@1:t", "C3:t"},
     {"C1:t-0,t-1,t-2", "C2:t-3,t-4,t-5"},
     "C1 t-0 t-1\nC2 t-3 t-4\nC3\n"},
    {"KIP-429: a third member joins two on 6 partitions, second rebalance",
     ASSIGNOR_COOPERATIVE_STICKY,
     "t:6",
     {"C1@2:t", "C2@2:t", "C3@2:t"},
     {"C1:t-0,t-1", "C2:t-3,t-4"},
     "C1 t-0 t-1\nC2 t-3 t-4\nC3 t-2 t-5\n"},
    {"sticky on the same first rebalance moves the partitions at once",
     ASSIGNOR_STICKY,
     "t:6",
     {"C1@1:t", "C2@1:t", "C3:t"},
     {"C1:t-0,t-1,t-2", "C2:t-3,t-4,t-5"},
     "C1 t-0 t-1\nC2 t-3 t-4\nC3 t-2 t-5\n"},
    {"a member leaves: its partitions had no other owner, nothing is withheld",
     ASSIGNOR_COOPERATIVE_STICKY,
     "t:6",
     {"C1@2:t", "C3@2:t"},
     {"C1:t-0,t-1", "C3:t-2,t-5"},
     "C1 t-0 t-1 t-3\nC3 t-2 t-4 t-5\n"},
    {"testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration"
     "WithEqualPartitionsPerConsumer",
     ASSIGNOR_COOPERATIVE_STICKY,
     "topic:3",
     {"consumer1@1:topic", "consumer2@1:topic", "consumer3@1:topic"},
     {"consumer1:topic-0,topic-1", "consumer2:topic-0,topic-2"},
     "consumer1 topic-1\nconsumer2 topic-2\nconsumer3\n"},
    {"testAllConsumersHaveOwnedPartitionInvalidatedWhenClaimedByMultipleConsumersInSameGeneration"
     "WithUnequalPartitionsPerConsumer",
     ASSIGNOR_COOPERATIVE_STICKY,
     "topic:4",
     {"consumer1@1:topic", "consumer2@1:topic", "consumer3@1:topic"},
     {"consumer1:topic-0,topic-1", "consumer2:topic-0,topic-2"},
     "consumer1 topic-1 topic-3\nconsumer2 topic-2\nconsumer3\n"},
    {"testAssignorWithOldVersionSubscriptions",
     ASSIGNOR_COOPERATIVE_STICKY,
     "topic1:3",
     {"consumer1@1:topic1", "consumer2@1:topic1", "consumer3@1:topic1"},
     {"consumer1:topic1-0", "consumer2:topic1-1"},
     "consumer1 topic1-0\nconsumer2 topic1-1\nconsumer3 topic1-2\n"},
    {"a fresh group: nobody owns anything, everything is assigned",
     ASSIGNOR_COOPERATIVE_STICKY,
     "t0:2 t1:2 t2:2 t3:2",
     {"C0:t0,t1,t2,t3", "C1:t0,t1,t2,t3", "C2:t0,t1,t2,t3"},
     {NULL},
     "C0 t0-0 t1-1 t3-0\nC1 t0-1 t2-0 t3-1\nC2 t1-0 t2-1\n"},
};

static void
test_assignor_range_matches_kafka(void **state)
{
    /* Goal: range gives Kafka's documented and tested assignments. */
    (void)state;
    run_cases(RANGE_CASES, G_N_ELEMENTS(RANGE_CASES));
}

static void
test_assignor_roundrobin_matches_kafka(void **state)
{
    /* Goal: roundrobin gives Kafka's documented and tested assignments. */
    (void)state;
    run_cases(ROUNDROBIN_CASES, G_N_ELEMENTS(ROUNDROBIN_CASES));
}

static void
test_assignor_sticky_matches_kafka(void **state)
{
    /* Goal: sticky gives the assignments Kafka's own tests expect. */
    (void)state;
    run_cases(STICKY_CASES, G_N_ELEMENTS(STICKY_CASES));
}

static void
test_assignor_cooperative_matches_kafka(void **state)
{
    /* Goal: cooperative-sticky withholds moving partitions as KIP-429 and
     * Kafka's CooperativeStickyAssignorTest expect. */
    (void)state;
    run_cases(COOPERATIVE_CASES, G_N_ELEMENTS(COOPERATIVE_CASES));
}

/* Adds, as owned partitions, what each member of `previous` that is also in
 * `input` got. */
static void
add_owned_from(AssignorInput *input, const AssignorResult *previous)
{
    for (guint m = 0; m < assignor_result_member_count(previous); m++) {
        const char *id = assignor_result_member_id(previous, m);
        if (!assignor_input_has_member(input, id))
            continue;
        for (guint i = 0; i < assignor_result_partition_count(previous, m); i++)
            assert_true(assignor_input_add_owned(input, id,
                                                 assignor_result_partition_topic(previous, m, i),
                                                 assignor_result_partition_number(previous, m, i)));
    }
}

/* How many of the partitions `member_id` had in `before` it still has. */
static guint
kept_partitions(const AssignorResult *before, const AssignorResult *after, const char *member_id)
{
    gint b = assignor_result_find_member(before, member_id);
    gint a = assignor_result_find_member(after, member_id);
    assert_true(b >= 0 && a >= 0);
    guint kept = 0;
    for (guint i = 0; i < assignor_result_partition_count(before, (guint)b); i++) {
        for (guint j = 0; j < assignor_result_partition_count(after, (guint)a); j++) {
            kept += strcmp(assignor_result_partition_topic(before, (guint)b, i),
                           assignor_result_partition_topic(after, (guint)a, j)) == 0 &&
                    assignor_result_partition_number(before, (guint)b, i) ==
                        assignor_result_partition_number(after, (guint)a, j);
        }
    }
    return kept;
}

static void
test_assignor_sticky_keeps_partitions_when_a_member_leaves(void **state)
{
    /* Goal: after a member leaves, every survivor keeps all it had (Kafka's
     * testStickiness, with 4 members on 3 partitions and on 14 topics). */
    (void)state;
    const char *const fresh[] = {"consumer1:topic1", "consumer2:topic1", "consumer3:topic1",
                                 "consumer4:topic1", NULL};
    g_autoptr(AssignorInput) first = input_from("topic1:3", fresh, NULL);
    g_autoptr(AssignorResult) before = assignor_assign(first, ASSIGNOR_STICKY);
    const char *const rest[] = {"consumer2@1:topic1", "consumer3@1:topic1", "consumer4@1:topic1",
                                NULL};
    g_autoptr(AssignorInput) second = input_from("topic1:3", rest, NULL);
    add_owned_from(second, before);
    g_autoptr(AssignorResult) after = assignor_assign(second, ASSIGNOR_STICKY);
    assignor_result_check_invariants(after, second);
    for (guint m = 0; m < assignor_result_member_count(after); m++) {
        const char *id = assignor_result_member_id(after, m);
        assert_int_equal(assignor_result_partition_count(after, m), 1);
        gint b = assignor_result_find_member(before, id);
        assert_int_equal(kept_partitions(before, after, id),
                         assignor_result_partition_count(before, (guint)b));
    }
}

static void
test_assignor_sticky_moves_only_what_a_joiner_needs(void **state)
{
    /* Goal: a member joining 9 others on 20 partitions takes exactly 2, from
     * the two members that had 3; nobody else loses anything. */
    (void)state;
    const char *members[11] = {NULL};
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 1; i <= 10; i++)
        g_ptr_array_add(names, g_strdup_printf("c%02u@1:topic", i));
    for (guint i = 0; i < 9; i++)
        members[i] = g_ptr_array_index(names, i);
    g_autoptr(AssignorInput) first = input_from("topic:20", members, NULL);
    g_autoptr(AssignorResult) before = assignor_assign(first, ASSIGNOR_STICKY);
    members[9] = g_ptr_array_index(names, 9);
    g_autoptr(AssignorInput) second = input_from("topic:20", members, NULL);
    add_owned_from(second, before);
    g_autoptr(AssignorResult) after = assignor_assign(second, ASSIGNOR_STICKY);
    assignor_result_check_invariants(after, second);
    guint moved = 0;
    for (guint m = 0; m < assignor_result_member_count(before); m++) {
        const char *id = assignor_result_member_id(before, m);
        guint had = assignor_result_partition_count(before, m);
        guint kept = kept_partitions(before, after, id);
        assert_int_equal(kept, MIN(had, 2u));
        moved += had - kept;
    }
    assert_int_equal(moved, 2);
    assert_int_equal(assignor_result_partition_count(after, 9), 2);
}

static void
test_assignor_sticky_ignores_declaration_order(void **state)
{
    /* Goal: the same group declared in another order gives the same result,
     * on both sticky paths (no hash-table order leaks into the result). */
    (void)state;
    const char *const forward[] = {"a@3:t1,t2", "b@2:t1", "c@3:t2,t1", "d:t1,t2,t3", NULL};
    const char *const backward[] = {"d:t1,t2,t3", "c@3:t2,t1", "b@2:t1", "a@3:t1,t2", NULL};
    const char *const owned[] = {"a:t1-0,t2-3", "b:t1-0,t1-1", "c:t2-0,t2-1,t1-2", NULL};
    const char *const equal_forward[] = {"a@3:t1,t2", "b@2:t2,t1", "c@3:t1,t2", NULL};
    const char *const equal_backward[] = {"c@3:t1,t2", "b@2:t2,t1", "a@3:t1,t2", NULL};
    const char *const equal_owned[] = {"a:t1-0,t2-3", "b:t1-0,t1-1", "c:t2-0,t2-1,t1-2", NULL};
    g_autoptr(AssignorInput) x = input_from("t3:2 t2:5 t1:4", forward, owned);
    g_autoptr(AssignorInput) y = input_from("t1:4 t2:5 t3:2", backward, owned);
    g_autofree char *tx = assign_text(x, ASSIGNOR_STICKY);
    g_autofree char *ty = assign_text(y, ASSIGNOR_STICKY);
    assert_string_equal(tx, ty);
    g_autoptr(AssignorInput) ex = input_from("t2:5 t1:4", equal_forward, equal_owned);
    g_autoptr(AssignorInput) ey = input_from("t1:4 t2:5", equal_backward, equal_owned);
    g_autofree char *etx = assign_text(ex, ASSIGNOR_STICKY);
    g_autofree char *ety = assign_text(ey, ASSIGNOR_STICKY);
    assert_string_equal(etx, ety);
}

static void
test_assignor_sticky_conflicting_generations_stay_valid(void **state)
{
    /* Goal: Kafka's testSubscriptionNotEqualAndAssignSamePartitionWith3Generation:
     * for every order of three generations claiming topic-2, the result is
     * valid and each member gets 1 or 2 partitions. */
    (void)state;
    const int orders[6][3] = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3}, {2, 3, 1}, {3, 1, 2}, {3, 2, 1}};
    for (guint i = 0; i < 6; i++) {
        g_autofree char *m1 = g_strdup_printf("consumer1@%d:topic", orders[i][0]);
        g_autofree char *m2 = g_strdup_printf("consumer2@%d:topic", orders[i][1]);
        g_autofree char *m3 = g_strdup_printf("consumer3@%d:topic", orders[i][2]);
        const char *const members[] = {m1, m2, m3, "consumer4@2:topic1", NULL};
        const char *const owned[] = {
            "consumer1:topic-0,topic-2", "consumer2:topic-1,topic-2,topic-3",
            "consumer3:topic-2,topic-4,topic-5", "consumer4:topic1-0", NULL};
        g_autoptr(AssignorInput) input = input_from("topic:6 topic1:1", members, owned);
        g_autoptr(AssignorResult) result = assignor_assign(input, ASSIGNOR_STICKY);
        assignor_result_check_invariants(result, input);
        for (guint m = 0; m < assignor_result_member_count(result); m++) {
            guint n = assignor_result_partition_count(result, m);
            assert_true(n >= 1 && n <= 2);
        }
    }
}

/* ---- Random groups ---- */

typedef struct {
    guint n_topics;
    guint32 partitions[8];
    guint n_members;
    char ids[10][8];
    gboolean subscribed[10][9]; /* the 9th "topic" is undeclared */
} RandomGroup;

static void
random_group(SimRng *rng, RandomGroup *group)
{
    memset(group, 0, sizeof(*group));
    group->n_topics = (guint)sim_rng_range(rng, 1, 9);
    for (guint t = 0; t < group->n_topics; t++)
        group->partitions[t] = (guint32)sim_rng_range(rng, 0, 7);
    group->n_members = (guint)sim_rng_range(rng, 1, 11);
    gboolean uniform = sim_rng_chance(rng, 1, 3);
    for (guint m = 0; m < group->n_members; m++) {
        g_snprintf(group->ids[m], sizeof(group->ids[m]), "m%02u", (guint)sim_rng_range(rng, 0, 99));
        for (guint t = 0; t < 9; t++)
            group->subscribed[m][t] = uniform ? (t % 2 == 0 || t == 1) : sim_rng_chance(rng, 1, 2);
    }
}

static AssignorInput *
random_input(const RandomGroup *group, gint32 generation, const gboolean *present)
{
    AssignorInput *input = assignor_input_new();
    for (guint t = 0; t < group->n_topics; t++) {
        g_autofree char *name = g_strdup_printf("t%u", t);
        assignor_input_add_topic(input, name, group->partitions[t]);
    }
    for (guint m = 0; m < group->n_members; m++) {
        if (present != NULL && !present[m])
            continue;
        g_autoptr(GPtrArray) topics = g_ptr_array_new_with_free_func(g_free);
        for (guint t = 0; t < 9; t++) {
            if (group->subscribed[m][t])
                g_ptr_array_add(topics, g_strdup_printf("t%u", t));
        }
        /* Random ids may repeat; a repeated member is simply not added. */
        assignor_input_add_member(input, group->ids[m], (const char *const *)topics->pdata,
                                  topics->len, generation);
    }
    return input;
}

/* Kafka's verifyValidityAndBalance: two members whose counts differ by more
 * than one share no topic. */
static void
check_kafka_balance(const AssignorResult *result)
{
    guint n = assignor_result_member_count(result);
    for (guint a = 0; a < n; a++) {
        for (guint b = a + 1; b < n; b++) {
            guint na = assignor_result_partition_count(result, a);
            guint nb = assignor_result_partition_count(result, b);
            if (na <= nb + 1 && nb <= na + 1)
                continue;
            for (guint i = 0; i < na; i++) {
                for (guint j = 0; j < nb; j++)
                    assert_string_not_equal(assignor_result_partition_topic(result, a, i),
                                            assignor_result_partition_topic(result, b, j));
            }
        }
    }
}

static void
test_assignor_sticky_random_groups_are_valid_and_balanced(void **state)
{
    /* Goal: on random groups, two rounds of sticky (members leaving, joining,
     * changing subscriptions) always give a valid, balanced assignment, the
     * same one every time. */
    (void)state;
    for (guint64 seed = 1; seed <= 300; seed++) {
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test/assignor");
        RandomGroup group;
        random_group(rng, &group);
        g_autoptr(AssignorInput) first = random_input(&group, ASSIGNOR_GENERATION_NONE, NULL);
        g_autoptr(AssignorResult) before = assignor_assign(first, ASSIGNOR_STICKY);
        assignor_result_check_invariants(before, first);
        check_kafka_balance(before);
        gboolean present[10];
        for (guint m = 0; m < group.n_members; m++) {
            present[m] = sim_rng_chance(rng, 4, 5);
            if (sim_rng_chance(rng, 1, 4))
                group.subscribed[m][sim_rng_range(rng, 0, 9)] ^= TRUE;
        }
        g_autoptr(AssignorInput) second = random_input(&group, 1, present);
        add_owned_from(second, before);
        g_autoptr(AssignorResult) after = assignor_assign(second, ASSIGNOR_STICKY);
        assignor_result_check_invariants(after, second);
        check_kafka_balance(after);
        g_autofree char *text = assign_text(second, ASSIGNOR_STICKY);
        g_autofree char *again = assign_text(second, ASSIGNOR_STICKY);
        assert_string_equal(text, again);
    }
}

/* TRUE if member `m` of `result` got `topic`-`partition`. */
static gboolean
result_has(const AssignorResult *result, guint m, const char *topic, guint32 partition)
{
    for (guint i = 0; i < assignor_result_partition_count(result, m); i++) {
        if (assignor_result_partition_number(result, m, i) == partition &&
            strcmp(assignor_result_partition_topic(result, m, i), topic) == 0)
            return TRUE;
    }
    return FALSE;
}

/* Each member of `cooperative` has exactly the partitions of `sticky` that
 * it owned in `previous` or that no member of `sticky` owned there. */
static void
check_sticky_less_moves(const AssignorResult *cooperative, const AssignorResult *sticky,
                        const AssignorResult *previous)
{
    for (guint m = 0; m < assignor_result_member_count(sticky); m++) {
        const char *id = assignor_result_member_id(sticky, m);
        for (guint i = 0; i < assignor_result_partition_count(sticky, m); i++) {
            const char *topic = assignor_result_partition_topic(sticky, m, i);
            guint32 partition = assignor_result_partition_number(sticky, m, i);
            /* Its owner in `previous`, if still a member. */
            const char *owner = NULL;
            for (guint o = 0; o < assignor_result_member_count(previous); o++) {
                const char *other = assignor_result_member_id(previous, o);
                if (result_has(previous, o, topic, partition) &&
                    assignor_result_find_member(sticky, other) >= 0)
                    owner = other;
            }
            gboolean stays = owner == NULL || strcmp(owner, id) == 0;
            assert_int_equal(result_has(cooperative, m, topic, partition), stays);
        }
        assert_true(assignor_result_partition_count(cooperative, m) <=
                    assignor_result_partition_count(sticky, m));
    }
}

static void
test_assignor_cooperative_random_groups_converge(void **state)
{
    /* Goal: on random groups (members joining, leaving, changing
     * subscriptions), cooperative-sticky is sticky less the partitions that
     * change owner, never gives a partition away while its owner keeps
     * claiming it, and, rebalanced with what each member now owns (Kafka's
     * CooperativeStickyAssignorTest.verifyValidityAndBalance), reaches a
     * balanced assignment with nothing withheld within a few rounds. */
    (void)state;
    for (guint64 seed = 1; seed <= 300; seed++) {
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test/assignor/cooperative");
        RandomGroup group;
        random_group(rng, &group);
        g_autoptr(AssignorInput) first = random_input(&group, ASSIGNOR_GENERATION_NONE, NULL);
        AssignorResult *previous = assignor_assign(first, ASSIGNOR_COOPERATIVE_STICKY);
        assignor_result_check_invariants(previous, first);
        gboolean present[10];
        for (guint m = 0; m < group.n_members; m++) {
            present[m] = sim_rng_chance(rng, 4, 5);
            if (sim_rng_chance(rng, 1, 4))
                group.subscribed[m][sim_rng_range(rng, 0, 9)] ^= TRUE;
        }
        gboolean withheld = TRUE;
        for (gint32 round = 1; withheld; round++) {
            assert_true(round <= 4);
            g_autoptr(AssignorInput) input = random_input(&group, round, present);
            add_owned_from(input, previous);
            g_autoptr(AssignorResult) sticky = assignor_assign(input, ASSIGNOR_STICKY);
            AssignorResult *next = assignor_assign(input, ASSIGNOR_COOPERATIVE_STICKY);
            assignor_result_check_invariants(next, input);
            assignor_result_check_cooperative(next, input);
            check_sticky_less_moves(next, sticky, previous);
            guint total = 0, given = 0;
            for (guint m = 0; m < assignor_result_member_count(sticky); m++) {
                total += assignor_result_partition_count(sticky, m);
                given += assignor_result_partition_count(next, m);
            }
            withheld = given < total;
            if (!withheld)
                check_kafka_balance(next);
            assignor_result_free(previous);
            previous = next;
        }
        assignor_result_free(previous);
    }
}

/* TRUE if the cooperative check of `result` fails (it aborts: run it in a
 * child process). */
static gboolean
cooperative_check_fails(const AssignorResult *result, const AssignorInput *input)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The failed assertion's message is expected: keep the log clean. */
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        assignor_result_check_cooperative(result, input);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void
test_assignor_cooperative_check_catches_a_move(void **state)
{
    /* Goal: the cooperative check accepts cooperative-sticky's withheld
     * partitions and refuses sticky's immediate move of the same rebalance
     * (Kafka's validateCooperativeAssignment). */
    (void)state;
    const char *const members[] = {"C1@1:t", "C2@1:t", "C3:t", NULL};
    const char *const owned[] = {"C1:t-0,t-1,t-2", "C2:t-3,t-4,t-5", NULL};
    g_autoptr(AssignorInput) input = input_from("t:6", members, owned);
    g_autoptr(AssignorResult) cooperative = assignor_assign(input, ASSIGNOR_COOPERATIVE_STICKY);
    assert_false(cooperative_check_fails(cooperative, input));
    g_autoptr(AssignorResult) sticky = assignor_assign(input, ASSIGNOR_STICKY);
    assert_int_equal(assignor_result_partition_count(sticky, 2), 2);
    assert_true(cooperative_check_fails(sticky, input));
}

static void
test_assignor_all_strategies_valid_on_random_groups(void **state)
{
    /* Goal: range and roundrobin give valid assignments on random groups. */
    (void)state;
    for (guint64 seed = 1; seed <= 200; seed++) {
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test/assignor/all");
        RandomGroup group;
        random_group(rng, &group);
        g_autoptr(AssignorInput) input = random_input(&group, ASSIGNOR_GENERATION_NONE, NULL);
        g_autoptr(AssignorResult) range = assignor_assign(input, ASSIGNOR_RANGE);
        assignor_result_check_invariants(range, input);
        g_autoptr(AssignorResult) round_robin = assignor_assign(input, ASSIGNOR_ROUNDROBIN);
        assignor_result_check_invariants(round_robin, input);
        /* With nothing owned, cooperative-sticky withholds nothing. */
        g_autofree char *sticky = assign_text(input, ASSIGNOR_STICKY);
        g_autofree char *cooperative = assign_text(input, ASSIGNOR_COOPERATIVE_STICKY);
        assert_string_equal(sticky, cooperative);
    }
}

static void
test_assignor_result_accessors(void **state)
{
    /* Goal: the result is read back by member id and partition index. */
    (void)state;
    const char *const members[] = {"b:t0", "a:t0,t1", NULL};
    g_autoptr(AssignorInput) input = input_from("t0:1 t1:2", members, NULL);
    assert_int_equal(assignor_input_member_count(input), 2);
    assert_false(assignor_input_add_topic(input, "t0", 5));
    const char *const topics[] = {"t0"};
    assert_false(assignor_input_add_member(input, "a", topics, 1, ASSIGNOR_GENERATION_NONE));
    const char *const twice[] = {"t0", "t0"};
    assert_false(assignor_input_add_member(input, "c", twice, 2, ASSIGNOR_GENERATION_NONE));
    assert_false(assignor_input_add_owned(input, "nobody", "t0", 0));
    assert_true(assignor_input_add_owned(input, "a", "t0", 0));
    assert_false(assignor_input_add_owned(input, "a", "t0", 0));
    g_autoptr(AssignorResult) result = assignor_assign(input, ASSIGNOR_RANGE);
    assert_int_equal(assignor_result_member_count(result), 2);
    assert_int_equal(assignor_result_find_member(result, "a"), 0);
    assert_int_equal(assignor_result_find_member(result, "b"), 1);
    assert_int_equal(assignor_result_find_member(result, "zz"), -1);
    assert_int_equal(assignor_result_partition_count(result, 0), 3);
    assert_string_equal(assignor_result_partition_topic(result, 0, 2), "t1");
    assert_int_equal(assignor_result_partition_number(result, 0, 2), 1);
    assert_int_equal(assignor_result_partition_count(result, 1), 0);
    AssignorStrategy strategy;
    assert_true(assignor_strategy_parse("roundrobin", &strategy));
    assert_int_equal(strategy, ASSIGNOR_ROUNDROBIN);
    assert_false(assignor_strategy_parse("RoundRobin", &strategy));
    g_autoptr(AssignorInput) empty = assignor_input_new();
    g_autoptr(AssignorResult) none = assignor_assign(empty, ASSIGNOR_STICKY);
    assert_int_equal(assignor_result_member_count(none), 0);
}

/* ---- `ksim assign` ---- */

static int
run_assign(const char *const *args, GString *out, GString *err)
{
    return assign_run((int)g_strv_length((char **)args), (char **)args, out, err);
}

typedef struct {
    const char *args[20];
    const char *expected;
} CommandCase;

static const CommandCase COMMAND_CASES[] = {
    {{"assign", "--strategy", "range", "--topic", "t0:3", "--topic", "t1:3", "--member", "C0:t0,t1",
      "--member", "C1:t0,t1", NULL},
     "C0 t0-0 t0-1 t1-0 t1-1\nC1 t0-2 t1-2\n"},
    {{"assign", "--topic", "t0:3", "--topic", "t1:3", "--member", "C1:t0,t1", "--member",
      "C0:t0,t1", "--strategy", "roundrobin", NULL},
     "C0 t0-0 t0-2 t1-1\nC1 t0-1 t1-0 t1-2\n"},
    /* The default strategy is range, Kafka's default. */
    {{"assign", "-t", "t:1", "-m", "z:t", "-m", "y:t", NULL}, "y t-0\nz\n"},
    {{"assign", "--strategy", "sticky", "--owned", "C1:t1-0,t1-1", "--topic", "t0:1", "--topic",
      "t1:2", "--topic", "t2:3", "--member", "C1:t0,t1", "--member", "C2:t0,t1,t2", "--owned",
      "C2:t2-0,t2-1,t2-2", NULL},
     "C1 t0-0 t1-0 t1-1\nC2 t2-0 t2-1 t2-2\n"},
    {{"assign", "--strategy", "sticky", "--topic", "t:2", "--member", "host:9092:t", "--member",
      "a:ghost", NULL},
     "a\nhost:9092 t-0 t-1\n"},
    /* KIP-429's joiner: the partitions moving to C3 wait for their owners. */
    {{"assign", "--strategy", "cooperative-sticky", "--topic", "t:6", "--member", "C1:t",
      "--member", "C2:t", "--member", "C3:t", "--owned", "C1:t-0,t-1,t-2", "--owned",
      "C2:t-3,t-4,t-5", NULL},
     "C1 t-0 t-1\nC2 t-3 t-4\nC3\n"},
    {{"assign", "-s", "cooperative-sticky", "-t", "t:6", "-m", "C1:t", "-m", "C2:t", "-m", "C3:t",
      "-o", "C1:t-0,t-1", "-o", "C2:t-3,t-4", NULL},
     "C1 t-0 t-1\nC2 t-3 t-4\nC3 t-2 t-5\n"},
};

static void
test_assignor_command_prints_one_line_per_member(void **state)
{
    /* Goal: `ksim assign` prints each member's partitions, sorted. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(COMMAND_CASES); i++) {
        g_autoptr(GString) out = g_string_new(NULL);
        g_autoptr(GString) err = g_string_new(NULL);
        assert_int_equal(run_assign(COMMAND_CASES[i].args, out, err), 0);
        assert_string_equal(out->str, COMMAND_CASES[i].expected);
        assert_string_equal(err->str, "");
    }
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GString) err = g_string_new(NULL);
    const char *const help[] = {"assign", "--help", NULL};
    assert_int_equal(run_assign(help, out, err), 0);
    assert_non_null(strstr(out->str, "--strategy"));
}

typedef struct {
    const char *args[10];
    const char *message;
} BadAssignCase;

static const BadAssignCase BAD_ASSIGN_CASES[] = {
    {{"assign", "--strategy", "cooperative", "--member", "a:t", NULL}, "unknown strategy"},
    {{"assign", "--topic", "t", "--member", "a:t", NULL}, "'t' is malformed"},
    {{"assign", "--topic", "t:x", "--member", "a:t", NULL}, "not a partition count"},
    {{"assign", "--topic", "t:-1", "--member", "a:t", NULL}, "not a partition count"},
    {{"assign", "--topic", "bad/name:1", "--member", "a:t", NULL}, "not a valid topic name"},
    {{"assign", "--topic", "t:1", "--topic", "t:2", "--member", "a:t", NULL}, "given twice"},
    {{"assign", "--member", "a", NULL}, "'a' is malformed"},
    {{"assign", "--member", "a:", NULL}, "subscribes to no topic"},
    {{"assign", "--member", ":t", NULL}, "member id must be non-empty"},
    {{"assign", "--member", "a b:t", NULL}, "member id must be non-empty"},
    {{"assign", "--member", "a:t,,u", NULL}, "not a valid topic name"},
    {{"assign", "--member", "a:t,t", NULL}, "lists topic 't' twice"},
    {{"assign", "--member", "a:t", "--member", "a:u", NULL}, "member 'a' is given twice"},
    {{"assign", "--topic", "t:1", NULL}, "at least one --member"},
    {{"assign", "--member", "a:t", "--owned", "a:t-0", NULL}, "sticky strategies only"},
    {{"assign", "-s", "sticky", "--member", "a:t", "--owned", "b:t-0", NULL}, "no --member 'b'"},
    {{"assign", "-s", "sticky", "--member", "a:t", "--owned", "a:t0", NULL}, "not TOPIC-PARTITION"},
    {{"assign", "-s", "sticky", "--member", "a:t", "--owned", "a:t-x", NULL},
     "not a partition number"},
    {{"assign", "-s", "sticky", "--member", "a:t", "--owned", "a:t-0,t-0", NULL}, "twice"},
    {{"assign", "--member", "a:t", "extra", NULL}, "unexpected argument 'extra'"},
    {{"assign", "--colour", NULL}, "Unknown option"},
};

static void
test_assignor_command_rejects_bad_input(void **state)
{
    /* Goal: bad input exits 2 with a message naming the problem, no output. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(BAD_ASSIGN_CASES); i++) {
        const BadAssignCase *c = &BAD_ASSIGN_CASES[i];
        g_autoptr(GString) out = g_string_new(NULL);
        g_autoptr(GString) err = g_string_new(NULL);
        assert_int_equal(run_assign(c->args, out, err), 2);
        assert_string_equal(out->str, "");
        if (strstr(err->str, c->message) == NULL)
            fail_msg("case %u: '%s' not in '%s'", i, c->message, err->str);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assignor_range_matches_kafka),
        cmocka_unit_test(test_assignor_roundrobin_matches_kafka),
        cmocka_unit_test(test_assignor_sticky_matches_kafka),
        cmocka_unit_test(test_assignor_cooperative_matches_kafka),
        cmocka_unit_test(test_assignor_cooperative_random_groups_converge),
        cmocka_unit_test(test_assignor_cooperative_check_catches_a_move),
        cmocka_unit_test(test_assignor_sticky_keeps_partitions_when_a_member_leaves),
        cmocka_unit_test(test_assignor_sticky_moves_only_what_a_joiner_needs),
        cmocka_unit_test(test_assignor_sticky_ignores_declaration_order),
        cmocka_unit_test(test_assignor_sticky_conflicting_generations_stay_valid),
        cmocka_unit_test(test_assignor_sticky_random_groups_are_valid_and_balanced),
        cmocka_unit_test(test_assignor_all_strategies_valid_on_random_groups),
        cmocka_unit_test(test_assignor_result_accessors),
        cmocka_unit_test(test_assignor_command_prints_one_line_per_member),
        cmocka_unit_test(test_assignor_command_rejects_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
