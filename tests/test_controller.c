/*
 * Controller tests: the leader-election rules (controller_election.h) as a
 * table of partitions, live brokers and settings against the next state
 * Kafka's PartitionLeaderElectionAlgorithms gives: clean and unclean
 * elections, all replicas offline, dead brokers in the ISR, ISR order against
 * assignment order, and the preferred replica election.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "controller_election.h"

#include <string.h>

#define NONE KAFKA_NO_LEADER
#define LIST_MAX 4
#define END (-99) /* ends a list in a table row */

/* Which brokers are live, as a mask the tables read easily (live_input turns
 * it into ControllerElectionInput.live). */
#define LIVE(a, b, c) ((1u << (a)) | (1u << (b)) | (1u << (c)))
#define LIVE1(a) (1u << (a))

typedef struct {
    const char *name;
    gint32 assignment[LIST_MAX]; /* END-terminated */
    gint32 leader;
    gint32 isr[LIST_MAX];        /* END-terminated */
    guint32 live_mask;
    gboolean unclean_enabled;
    /* Expected. */
    ControllerElectionOutcome outcome;
    gint32 next_leader;
    gint32 next_isr[LIST_MAX];   /* END-terminated */
} ElectionCase;

/* Sets `input->live` from `mask` into `buf` (a byte per id below 32). */
static void
live_input(guint32 mask, guint8 buf[32], ControllerElectionInput *input)
{
    for (guint id = 0; id < 32; id++)
        buf[id] = (mask >> id) & 1u;
    input->live = buf;
    input->n_live = 32;
}

static guint
list_len(const gint32 *list)
{
    guint n = 0;
    while (n < LIST_MAX && list[n] != END)
        n++;
    return n;
}

static void
state_from_case(const ElectionCase *c, KPartitionState *old)
{
    memset(old, 0, sizeof *old);
    ktp_set(&old->tp, "orders", 0);
    old->leader = c->leader;
    old->leader_epoch = 7;
    old->controller_epoch = 2;
    old->zk_version = 11;
    old->n_replicas = (guint8)list_len(c->assignment);
    memcpy(old->replicas, c->assignment, sizeof(gint32) * old->n_replicas);
    old->n_isr = (guint8)list_len(c->isr);
    memcpy(old->isr, c->isr, sizeof(gint32) * old->n_isr);
}

static const ElectionCase ELECTION_CASES[] = {
    {"live leader, full ISR: unchanged", {0, 1, 2, END}, 0, {0, 1, 2, END}, LIVE(0, 1, 2),
     FALSE, CONTROLLER_ELECTION_UNCHANGED, 0, {0, 1, 2, END}},
    {"live leader, a dead follower leaves the ISR", {0, 1, 2, END}, 0, {0, 1, 2, END},
     LIVE(0, 2, 2), FALSE, CONTROLLER_ELECTION_ISR_SHRUNK, 0, {0, 2, END}},
    {"clean: the first live ISR member in assignment order", {0, 1, 2, END}, 0,
     {0, 1, 2, END}, LIVE(1, 2, 2), FALSE, CONTROLLER_ELECTION_CLEAN, 1, {1, 2, END}},
    {"clean: assignment order wins over ISR order", {0, 2, 1, END}, 0, {0, 1, 2, END},
     LIVE(1, 2, 2), FALSE, CONTROLLER_ELECTION_CLEAN, 2, {1, 2, END}},
    {"clean: a live replica outside the ISR is passed over", {0, 1, 2, END}, 0, {0, 2, END},
     LIVE(1, 2, 2), FALSE, CONTROLLER_ELECTION_CLEAN, 2, {2, END}},
    {"clean: dead brokers in the ISR are dropped", {0, 1, 2, END}, 0, {2, 0, 1, END},
     LIVE1(1), FALSE, CONTROLLER_ELECTION_CLEAN, 1, {1, END}},
    {"unclean disabled: no ISR member lives, offline", {0, 1, 2, END}, 0, {0, 1, END},
     LIVE1(2), FALSE, CONTROLLER_ELECTION_OFFLINE, NONE, {1, END}},
    {"unclean enabled: the first live replica leads alone", {0, 1, 2, END}, 0, {0, 1, END},
     LIVE1(2), TRUE, CONTROLLER_ELECTION_UNCLEAN, 2, {2, END}},
    {"unclean enabled but an ISR member lives: clean", {0, 1, 2, END}, 0, {0, 1, END},
     LIVE(1, 2, 2), TRUE, CONTROLLER_ELECTION_CLEAN, 1, {1, END}},
    {"all replicas offline: the last ISR member stays", {0, 1, 2, END}, 0, {0, 1, 2, END},
     0, TRUE, CONTROLLER_ELECTION_OFFLINE, NONE, {2, END}},
    {"already offline, nobody back: unchanged", {0, 1, 2, END}, NONE, {2, END}, 0, TRUE,
     CONTROLLER_ELECTION_UNCHANGED, NONE, {2, END}},
    {"offline, the last ISR member is back: it leads", {0, 1, 2, END}, NONE, {2, END},
     LIVE1(2), FALSE, CONTROLLER_ELECTION_CLEAN, 2, {2, END}},
    {"offline, a non-ISR replica is back, unclean disabled: unchanged", {0, 1, 2, END}, NONE,
     {2, END}, LIVE1(0), FALSE, CONTROLLER_ELECTION_UNCHANGED, NONE, {2, END}},
};

static void
test_controller_election_table(void **state)
{
    /* Goal: each row's partition gets the leader, ISR and epoch Kafka's
     * offline partition election gives it. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(ELECTION_CASES); i++) {
        const ElectionCase *c = &ELECTION_CASES[i];
        KPartitionState old, next;
        state_from_case(c, &old);
        guint8 live[32];
        ControllerElectionInput input = {.assignment = c->assignment,
                                         .n_assignment = list_len(c->assignment),
                                         .unclean_leader_election = c->unclean_enabled,
                                         .controller_epoch = 5};
        live_input(c->live_mask, live, &input);
        ControllerElectionOutcome outcome = controller_election_decide(&input, &old, &next);
        print_message("case: %s\n", c->name);
        assert_int_equal(outcome, c->outcome);
        if (outcome == CONTROLLER_ELECTION_UNCHANGED)
            continue;
        assert_int_equal(next.leader, c->next_leader);
        assert_int_equal(next.n_isr, list_len(c->next_isr));
        for (guint k = 0; k < next.n_isr; k++)
            assert_int_equal(next.isr[k], c->next_isr[k]);
        assert_int_equal(next.leader_epoch, old.leader_epoch + 1);
        assert_int_equal(next.controller_epoch, 5);
        /* The replicas and the znode version are the caller's business. */
        assert_int_equal(next.n_replicas, old.n_replicas);
        assert_int_equal(next.zk_version, old.zk_version);
    }
}

static void
test_controller_election_wide_broker_ids(void **state)
{
    /* Goal: broker ids beyond 32 are elected like any other (a 40-broker
     * cluster once tripped a 32-bit live mask): the leader 40 died, so the
     * next ISR member in assignment order, 35, leads, and 40 leaves the ISR. */
    (void)state;
    guint8 live[64] = {0};
    live[35] = live[7] = 1;
    const gint32 assignment[] = {40, 35, 7};
    KPartitionState old = {0}, next;
    old.leader = 40;
    old.leader_epoch = 3;
    old.n_replicas = 3;
    memcpy(old.replicas, assignment, sizeof assignment);
    old.n_isr = 3;
    memcpy(old.isr, assignment, sizeof assignment);
    ControllerElectionInput input = {.assignment = assignment, .n_assignment = 3, .live = live,
                                     .n_live = G_N_ELEMENTS(live), .controller_epoch = 1};
    assert_int_equal(controller_election_decide(&input, &old, &next), CONTROLLER_ELECTION_CLEAN);
    assert_int_equal(next.leader, 35);
    assert_int_equal(next.n_isr, 2);
    assert_int_equal(next.isr[0], 35);
    assert_int_equal(next.isr[1], 7);
    /* An id past the end of `live` is not live. */
    const gint32 beyond[] = {100, 35, 7};
    input.assignment = beyond;
    assert_int_equal(controller_election_first_live(&input, &old, FALSE), 35);
}

/* A row of the controlled-shutdown table: brokers 0..3 live, `shutting`
 * (a mask) shutting down. */
typedef struct {
    const char *name;
    gint32 assignment[LIST_MAX]; /* END-terminated */
    gint32 leader;
    gint32 isr[LIST_MAX];        /* END-terminated */
    guint32 shutting;
    /* Expected. */
    ControllerElectionOutcome outcome;
    gint32 next_leader;
    gint32 next_isr[LIST_MAX];   /* END-terminated */
} ShutdownCase;

static const ShutdownCase SHUTDOWN_CASES[] = {
    {"nobody shutting down: unchanged", {0, 1, 2, END}, 0, {0, 1, 2, END}, 0,
     CONTROLLER_ELECTION_UNCHANGED, 0, {0, 1, 2, END}},
    {"the leader shuts down: the next ISR member in assignment order leads", {0, 1, 2, END}, 0,
     {0, 2, 1, END}, LIVE1(0), CONTROLLER_ELECTION_CLEAN, 1, {2, 1, END}},
    {"the leader shuts down, the next replica is out of the ISR: passed over", {0, 1, 2, END}, 0,
     {0, 2, END}, LIVE1(0), CONTROLLER_ELECTION_CLEAN, 2, {2, END}},
    {"the leader shuts down, the only other ISR member too: skipped", {0, 1, 2, END}, 0,
     {0, 1, 2, END}, LIVE(0, 1, 1), CONTROLLER_ELECTION_CLEAN, 2, {2, END}},
    {"the leader is the only ISR member: it keeps leading (remaining)", {0, 1, 2, END}, 0,
     {0, END}, LIVE1(0), CONTROLLER_ELECTION_UNCHANGED, 0, {0, END}},
    {"one replica assigned: nothing to move", {0, END}, 0, {0, END}, LIVE1(0),
     CONTROLLER_ELECTION_UNCHANGED, 0, {0, END}},
    {"a follower shuts down: it leaves the ISR, the leader stays", {0, 1, 2, END}, 0,
     {0, 1, 2, END}, LIVE1(1), CONTROLLER_ELECTION_ISR_SHRUNK, 0, {0, 2, END}},
    {"a follower out of the ISR shuts down: unchanged", {0, 1, 2, END}, 0, {0, 2, END},
     LIVE1(1), CONTROLLER_ELECTION_UNCHANGED, 0, {0, 2, END}},
    {"an offline partition: unchanged", {0, 1, 2, END}, NONE, {1, END}, LIVE1(1),
     CONTROLLER_ELECTION_UNCHANGED, NONE, {1, END}},
};

static void
test_controller_election_shutdown_table(void **state)
{
    /* Goal: each row's partition gets what Kafka's controlled shutdown gives
     * it (controlledShutdownPartitionLeaderElection, OfflineReplica). */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(SHUTDOWN_CASES); i++) {
        const ShutdownCase *c = &SHUTDOWN_CASES[i];
        ElectionCase as_election = {.name = c->name, .leader = c->leader};
        memcpy(as_election.assignment, c->assignment, sizeof c->assignment);
        memcpy(as_election.isr, c->isr, sizeof c->isr);
        KPartitionState old, next;
        state_from_case(&as_election, &old);
        guint8 live[32], shutting[32];
        ControllerElectionInput input = {.assignment = c->assignment,
                                         .n_assignment = list_len(c->assignment),
                                         .controller_epoch = 5};
        live_input(LIVE(0, 1, 2) | LIVE1(3), live, &input);
        for (guint id = 0; id < 32; id++)
            shutting[id] = (c->shutting >> id) & 1u;
        input.shutting = shutting;
        input.n_shutting = 32;
        print_message("case: %s\n", c->name);
        ControllerElectionOutcome outcome = controller_election_shutdown(&input, &old, &next);
        assert_int_equal(outcome, c->outcome);
        assert_int_equal(next.leader, c->next_leader);
        assert_int_equal(next.n_isr, list_len(c->next_isr));
        for (guint k = 0; k < next.n_isr; k++)
            assert_int_equal(next.isr[k], c->next_isr[k]);
        assert_int_equal(next.leader_epoch,
                         old.leader_epoch + (outcome == CONTROLLER_ELECTION_UNCHANGED ? 0 : 1));
        assert_int_equal(next.controller_epoch, 5);
    }
}

static void
test_controller_election_first_live(void **state)
{
    /* Goal: the first live replica is taken in assignment order, with or
     * without the ISR requirement. */
    (void)state;
    const gint32 assignment[] = {3, 1, 2};
    KPartitionState ps = {0};
    ps.n_isr = 2;
    ps.isr[0] = 2;
    ps.isr[1] = 1;
    guint8 live[32];
    ControllerElectionInput input = {.assignment = assignment, .n_assignment = 3};
    live_input(LIVE(1, 2, 3), live, &input);
    assert_int_equal(controller_election_first_live(&input, &ps, FALSE), 3);
    assert_int_equal(controller_election_first_live(&input, &ps, TRUE), 1);
    live_input(LIVE1(2), live, &input);
    assert_int_equal(controller_election_first_live(&input, &ps, TRUE), 2);
    live_input(0, live, &input);
    assert_int_equal(controller_election_first_live(&input, &ps, FALSE), NONE);
}

typedef struct {
    const char *name;
    gint32 leader;
    gint32 isr[LIST_MAX]; /* END-terminated */
    gboolean moves;
} PreferredCase;

static const PreferredCase PREFERRED_CASES[] = {
    {"preferred replica in the ISR takes over", 1, {1, 0, END}, TRUE},
    {"preferred replica outside the ISR waits", 1, {1, 2, END}, FALSE},
    {"an offline partition is left to the offline election", NONE, {0, END}, FALSE},
};

static void
test_controller_election_preferred(void **state)
{
    /* Goal: the preferred replica (broker 0) leads again only where the
     * partition is online and it is in the ISR, with the same ISR. */
    (void)state;
    for (guint i = 0; i < G_N_ELEMENTS(PREFERRED_CASES); i++) {
        const PreferredCase *c = &PREFERRED_CASES[i];
        KPartitionState old = {0}, next = {0};
        old.leader = c->leader;
        old.leader_epoch = 3;
        old.n_isr = (guint8)list_len(c->isr);
        memcpy(old.isr, c->isr, sizeof(gint32) * old.n_isr);
        print_message("case: %s\n", c->name);
        gboolean moves = controller_election_preferred(&old, 0, 9, &next);
        assert_int_equal(moves, c->moves);
        if (!moves)
            continue;
        assert_int_equal(next.leader, 0);
        assert_int_equal(next.leader_epoch, 4);
        assert_int_equal(next.controller_epoch, 9);
        assert_int_equal(next.n_isr, old.n_isr);
        assert_memory_equal(next.isr, old.isr, sizeof(gint32) * old.n_isr);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_election_table),
        cmocka_unit_test(test_controller_election_first_live),
        cmocka_unit_test(test_controller_election_shutdown_table),
        cmocka_unit_test(test_controller_election_wide_broker_ids),
        cmocka_unit_test(test_controller_election_preferred),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
