/*
 * Table-driven unit tests for the KRaft quorum (models/raft), each row
 * ported from a test of Kafka's raft module (Apache Kafka 4.0, commit
 * 1eb7644 of trunk, raft/src/test/java/org/apache/kafka/raft/) and named
 * after it, where it applies to what ksim models (static voters, no
 * pre-vote, no snapshots):
 *
 *  - the high watermark from the voters' fetch offsets (LeaderStateTest);
 *  - the leader's validation of a fetch's offset and last epoch
 *    (MockLogTest's validateOffsetAndEpoch cases, ValidOffsetAndEpochTest);
 *  - a candidate's vote tally: won, lost (a backoff, then a new epoch) or
 *    undecided (the election timeout) (CandidateStateTest);
 *  - a follower's truncation to the leader's diverging epoch and end offset
 *    and its next fetch (ReplicatedLog.truncateToEndOffset as
 *    KafkaRaftClientTest's diverging-fetch tests drive it);
 *  - votes from the voted state (UnattachedStateWithVoteTest) and the
 *    higher-epoch rules of every request (KafkaRaftClientTest);
 * and a property test over random schedules that test_raft.c's does not
 * draw: pauses (a zombie former leader that resumes believing it leads),
 * one-way cuts, and quorum splits that put the leader in the minority,
 * checking RaftEventSimulationTest's invariants (raft_check.h) after every
 * event.
 *
 * The voter under test is a real raft_node; its peers are scripted probes
 * (plain simulated nodes that keep what they receive), so a row plays the
 * other voters' part message by message, as Kafka's RaftClientTestContext
 * does with its MockNetworkChannel.
 */
#include "raft_check.h"
#include "raft_node.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plog.h"
#include "sim_assert.h"
#include "sim_disk.h"
#include "sim_net.h"

#define VOTERS_MAX 5
#define PROBES_MAX (VOTERS_MAX - 1)

/* ---- the bench: one voter under test (id 0) and scripted probes ---- */

typedef struct {
    SimNodeId node;
    GPtrArray *inbox; /* RaftMsg * */
} Probe;

typedef struct {
    SimWorld *world;
    RaftNode *node;
    guint n_probes; /* probe i is voter i + 1 */
    Probe probes[PROBES_MAX];
} Bench;

static void
probe_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    (void)world;
    (void)from;
    Probe *probe = ctx;
    g_ptr_array_add(probe->inbox, msg);
}

static void
probe_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    (void)world;
    (void)ctx;
    (void)peer;
    (void)reason;
}

static const SimNodeOps probe_ops = {.message = probe_message, .disconnect = probe_disconnect};

static void
msg_free_cb(gpointer msg)
{
    sim_msg_free(msg);
}

/* A quorum of `n_voters`, the voter under test's disk holding one batch of
 * 5 records per entry of `epochs` (in that leader epoch) and the election
 * state "`epoch` -1 -1" (no vote, no leader). */
static void
bench_init(Bench *b, guint n_voters, const gint32 *epochs, guint n_epochs, gint32 epoch)
{
    KSIM_ASSERT(n_voters >= 1 && n_voters <= VOTERS_MAX);
    memset(b, 0, sizeof *b);
    b->world = sim_world_new(7);
    sim_net_set_default_link(sim_world_net(b->world), SIM_DIST_CONST(SIM_NS_PER_MS), 0);
    b->node = raft_node_new(b->world, "controller-0", 0, NULL);
    b->n_probes = n_voters - 1;
    RaftVoter voters[VOTERS_MAX] = {{0, raft_node_sim_node(b->node)}};
    for (guint i = 0; i < b->n_probes; i++) {
        g_autofree char *name = g_strdup_printf("probe-%u", i + 1);
        b->probes[i].inbox = g_ptr_array_new_with_free_func(msg_free_cb);
        b->probes[i].node = sim_node_add(b->world, name, &probe_ops, &b->probes[i]);
        voters[i + 1] = (RaftVoter){(gint32)i + 1, b->probes[i].node};
    }
    raft_node_set_voters(b->node, voters, n_voters);
    SimNodeId x = raft_node_sim_node(b->node);
    PlogConfig cfg = {.segment_bytes = 1 << 30,
                      .roll_ms = G_MAXINT64 / 4,
                      .index_interval_bytes = 4096,
                      .retention_ms = -1,
                      .retention_bytes = -1,
                      .flush_interval_messages = G_MAXINT64,
                      .flush_interval_ms = -1};
    Plog *log = plog_open(b->world, x, "__cluster_metadata", 0, &cfg);
    for (guint e = 0; e < n_epochs; e++) {
        g_autoptr(PlogBatch) batch = plog_batch_new();
        for (guint r = 0; r < 5; r++)
            plog_batch_add_record(batch, 2, 1000 * (guint64)epochs[e] + r, 100);
        batch->leader_epoch = epochs[e];
        SimDiskStatus status = SIM_DISK_OK;
        assert_true(plog_append(log, batch, 0, &status) >= 0);
    }
    plog_free(log);
    SimDisk *disk = sim_node_disk(b->world, x);
    g_autofree char *state = g_strdup_printf("%d -1 -1\n", epoch);
    assert_int_equal(sim_disk_create(disk, "__cluster_metadata-0/quorum-state"), SIM_DISK_OK);
    assert_int_equal(
        sim_disk_append(disk, "__cluster_metadata-0/quorum-state", state, strlen(state)),
        SIM_DISK_OK);
    raft_node_start(b->node);
}

static void
bench_clear(Bench *b)
{
    sim_world_free(b->world);
    raft_node_free(b->node);
    for (guint i = 0; i < b->n_probes; i++)
        g_ptr_array_unref(b->probes[i].inbox);
}

static void
bench_send(Bench *b, guint probe, RaftMsg *msg)
{
    raft_msg_finish(msg);
    sim_net_send(sim_world_net(b->world), b->probes[probe].node, raft_node_sim_node(b->node),
                 &msg->base);
}

static void
bench_run(Bench *b, gint64 ns)
{
    sim_world_run_until(b->world, sim_now_ns(b->world) + ns);
    raft_node_check_invariants(b->node);
}

/* The last message of `type` the probe received, or NULL. */
static RaftMsg *
probe_last(Bench *b, guint probe, RaftMsgType type)
{
    GPtrArray *inbox = b->probes[probe].inbox;
    for (guint i = inbox->len; i > 0; i--) {
        RaftMsg *msg = g_ptr_array_index(inbox, i - 1);
        if (msg->base.type == type)
            return msg;
    }
    return NULL;
}

static void
probes_forget(Bench *b)
{
    for (guint i = 0; i < b->n_probes; i++)
        g_ptr_array_set_size(b->probes[i].inbox, 0);
}

/* Runs until probe 0 (or, alone, nobody) hears the voter's VoteRequest of
 * `epoch`; returns it (NULL for a single voter, which needs none). */
static RaftMsg *
bench_await_vote_request(Bench *b, gint32 epoch)
{
    for (guint i = 0; i < 400; i++) {
        if (b->n_probes == 0) {
            if (raft_node_epoch(b->node) >= epoch)
                return NULL;
        } else {
            RaftMsg *req = probe_last(b, 0, RAFT_MSG_VOTE_REQUEST);
            if (req != NULL && req->epoch >= epoch)
                return req;
        }
        bench_run(b, 10 * SIM_NS_PER_MS);
    }
    fail_msg("no VoteRequest of epoch %d", epoch);
    return NULL;
}

static void
bench_vote(Bench *b, guint probe, gint32 epoch, gboolean granted)
{
    RaftMsg *req = probe_last(b, probe, RAFT_MSG_VOTE_REQUEST);
    assert_non_null(req);
    RaftMsg *resp = raft_msg_new(RAFT_MSG_VOTE_RESPONSE, req->correlation_id);
    resp->epoch = epoch;
    resp->node_id = (gint32)probe + 1;
    resp->vote_granted = granted;
    bench_send(b, probe, resp);
}

/* Makes the voter leader of `epoch` (one past the state's), every probe
 * granting its vote. */
static void
bench_elect(Bench *b, gint32 epoch)
{
    bench_await_vote_request(b, epoch);
    for (guint i = 0; i < b->n_probes; i++)
        bench_vote(b, i, epoch, TRUE);
    bench_run(b, 20 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_role(b->node), RAFT_ROLE_LEADER);
    assert_int_equal(raft_node_epoch(b->node), epoch);
}

static RaftMsg *
fetch_request(gint32 replica, gint32 epoch, gint64 offset, gint32 last_epoch)
{
    static gint32 correlation = 100;
    RaftMsg *msg = raft_msg_new(RAFT_MSG_FETCH_REQUEST, correlation++);
    msg->node_id = replica;
    msg->epoch = epoch;
    msg->offset = offset;
    msg->last_epoch = last_epoch;
    msg->max_wait_ns = 0;
    return msg;
}

static void
append_records(RaftNode *node, guint n)
{
    for (guint i = 0; i < n; i++) {
        PlogRecord record = {2, 7000 + i, 100};
        assert_true(raft_node_append(node, &record, 1) >= 0);
    }
}

/* ---- the high watermark (LeaderStateTest) ---- */

/* A step: the leader appends `append` records, or voter `voter` (1..)
 * fetches at `offset` with last epoch `last_epoch`; then the leader's high
 * watermark is `hw` (-1: none yet). */
typedef struct {
    guint append;
    gint32 voter;
    gint64 offset;
    gint32 last_epoch;
    gint64 hw;
} HwStep;

#define HW_STEPS_MAX 8

typedef struct {
    const char *kafka_test;
    guint n_voters;
    HwStep steps[HW_STEPS_MAX];
    guint n_steps;
} HwCase;

/* The leader's log holds epoch 1 at [0, 10); elected in epoch 2 it appends
 * its LeaderChange record at 10, its epoch start offset (Kafka's
 * epochStartOffset): its own end offset is then 11, and no high watermark
 * is set until a majority holds an offset past 10. Kafka's tests start the
 * epoch at 10 or 15 with the local end given; the offsets here are theirs
 * shifted to that start. */
static const HwCase hw_cases[] = {
    {"LeaderStateTest.testUpdateHighWatermarkQuorumSizeOne",
     1,
     {{0, 0, 0, 0, 11}, {4, 0, 0, 0, 15}, {5, 0, 0, 0, 20}},
     3},
    {"LeaderStateTest.testUpdateHighWatermarkQuorumSizeTwo",
     2,
     {{2, 0, 0, 0, -1}, {0, 1, 10, 1, -1}, {0, 1, 11, 2, 11}, {0, 1, 13, 2, 13}},
     4},
    {"LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree",
     3,
     {{4, 0, 0, 0, -1},
      {0, 1, 10, 1, -1},
      {0, 2, 10, 1, -1},
      {0, 2, 15, 2, 15},
      {5, 0, 0, 0, 15},
      {0, 1, 20, 2, 20},
      {0, 2, 20, 2, 20}},
     7},
    {"LeaderStateTest.testNonMonotonicHighWatermarkUpdate",
     2,
     {{9, 0, 0, 0, -1}, {0, 1, 20, 2, 20}, {0, 1, 5, 1, 20}},
     3},
    {"LeaderStateTest.testGetNonLeaderFollowersByFetchOffsetDescending (five voters: the "
     "third highest end offset)",
     5,
     {{4, 0, 0, 0, -1},
      {0, 1, 15, 2, -1},
      {0, 2, 12, 2, 12},
      {0, 3, 13, 2, 13},
      {0, 4, 10, 1, 13},
      {0, 4, 15, 2, 15}},
     6},
};

/* Goal: the leader's high watermark is the end offset a majority holds, the
 * leader counting, once it passes the epoch start offset, and never goes
 * back. */
static void
test_raft_table_high_watermark(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1};
    for (guint k = 0; k < G_N_ELEMENTS(hw_cases); k++) {
        const HwCase *c = &hw_cases[k];
        Bench b;
        bench_init(&b, c->n_voters, epochs, 2, 1);
        bench_elect(&b, 2);
        for (guint s = 0; s < c->n_steps; s++) {
            const HwStep *step = &c->steps[s];
            if (step->append > 0)
                append_records(b.node, step->append);
            if (step->voter > 0)
                bench_send(&b, (guint)step->voter - 1,
                           fetch_request(step->voter, 2, step->offset, step->last_epoch));
            bench_run(&b, 20 * SIM_NS_PER_MS);
            gint64 hw = raft_node_high_watermark(b.node);
            if (hw != step->hw)
                fail_msg("%s, step %u: high watermark %" G_GINT64_FORMAT
                         ", expected %" G_GINT64_FORMAT,
                         c->kafka_test, s + 1, hw, step->hw);
        }
        bench_clear(&b);
    }
}

/* ---- fetch validation (MockLogTest, ValidOffsetAndEpochTest) ---- */

typedef struct {
    const char *kafka_test;
    gint64 fetch_offset;
    gint32 last_epoch;
    gint32 diverging_epoch; /* -1: valid */
    gint64 diverging_end_offset;
} ValidateCase;

/* The leader's log: epoch 1 at [0, 5), 2 at [5, 10), 4 at [10, 15) (epoch
 * 3 had no leader that wrote), and its LeaderChange of epoch 5 at 15; its
 * end is 16. ValidOffsetAndEpoch.diverging carries the leader's
 * endOffsetForEpoch(last epoch): the largest epoch not above it, and where
 * that epoch ends. */
static const ValidateCase validate_cases[] = {
    {"MockLogTest.testValidateValidEpochAndOffset", 4, 1, -1, -1},
    {"MockLogTest.testValidateOffsetLessThanLEO", 6, 1, 1, 5},
    {"MockLogTest.testValidateUnknownEpochLessThanLastKnownGreaterThanOldestSnapshot", 100, 3, 2,
     10},
    {"MockLogTest.testValidateUnknownEpochLessThanLastKnown... (an offset inside the gap)", 12, 3,
     2, 10},
    {"MockLogTest.testValidateEpochLessThanFirstEpochInLog (no snapshot: the log start)", 100, 0, 0,
     0},
    {"MockLogTest.testValidateOffsetGreatThanEndOffset", 17, 5, 5, 16},
    {"MockLogTest.testValidateEpochGreaterThanLastKnownEpoch", 16, 6, 5, 16},
    {"ValidOffsetAndEpochTest (valid at an epoch's end)", 10, 2, -1, -1},
    {"ValidOffsetAndEpochTest (valid at the start of the next epoch)", 10, 4, -1, -1},
    {"ValidOffsetAndEpochTest (valid at the leader's end)", 16, 5, -1, -1},
    {"ValidOffsetAndEpochTest (an empty log is valid)", 0, 0, -1, -1},
};

/* Goal: the leader answers each fetch with records from its offset, or with
 * the diverging epoch and end offset the fetcher must truncate to. */
static void
test_raft_table_validate_offset_and_epoch(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 2, 4};
    Bench b;
    bench_init(&b, 3, epochs, 3, 4);
    bench_elect(&b, 5);
    assert_int_equal(plog_log_end_offset(raft_node_log(b.node)), 16);
    for (guint k = 0; k < G_N_ELEMENTS(validate_cases); k++) {
        const ValidateCase *c = &validate_cases[k];
        probes_forget(&b);
        bench_send(&b, 0, fetch_request(1, 5, c->fetch_offset, c->last_epoch));
        bench_run(&b, 20 * SIM_NS_PER_MS);
        RaftMsg *resp = probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE);
        if (resp == NULL)
            fail_msg("%s: no response", c->kafka_test);
        gint64 from = resp->batches != NULL && resp->batches->len > 0
                          ? ((PlogBatch *)g_ptr_array_index(resp->batches, 0))->base_offset
                          : -1;
        gint64 want_from = c->diverging_epoch >= 0 || c->fetch_offset >= 16 ? -1 : c->fetch_offset;
        if (resp->error != KAFKA_ERROR_NONE || resp->diverging_epoch != c->diverging_epoch ||
            resp->diverging_end_offset != c->diverging_end_offset)
            fail_msg("%s: error %d diverging %d@%" G_GINT64_FORMAT
                     ", expected %d@%" G_GINT64_FORMAT,
                     c->kafka_test, resp->error, resp->diverging_epoch, resp->diverging_end_offset,
                     c->diverging_epoch, c->diverging_end_offset);
        /* A batch may start below the offset (records are sent whole). */
        if (want_from < 0 ? from >= 0 : from < 0 || from > want_from)
            fail_msg("%s: records from %" G_GINT64_FORMAT, c->kafka_test, from);
    }
    bench_clear(&b);
}

/* ---- a candidate's tally (CandidateStateTest) ---- */

typedef enum { NO_ANSWER, GRANT, REJECT } VoteAnswer;

typedef enum {
    TALLY_WON,       /* leader of the epoch */
    TALLY_LOST,      /* a new election after the backoff (< 0.5 s) */
    TALLY_UNDECIDED, /* a new election only after the election timeout (>= 1 s) */
} TallyOutcome;

typedef struct {
    const char *kafka_test;
    guint n_voters;
    VoteAnswer answers[PROBES_MAX];
    TallyOutcome outcome;
} TallyCase;

static const TallyCase tally_cases[] = {
    {"CandidateStateTest.testSingleNodeQuorum", 1, {0}, TALLY_WON},
    {"CandidateStateTest.testTwoNodeQuorumVoteGranted", 2, {GRANT}, TALLY_WON},
    {"CandidateStateTest.testTwoNodeQuorumVoteRejected", 2, {REJECT}, TALLY_LOST},
    {"CandidateStateTest.testThreeNodeQuorumVoteGranted", 3, {GRANT, NO_ANSWER}, TALLY_WON},
    {"CandidateStateTest.testThreeNodeQuorumVoteRejected", 3, {REJECT, REJECT}, TALLY_LOST},
    {"CandidateStateTest (three voters, one rejection: undecided)",
     3,
     {REJECT, NO_ANSWER},
     TALLY_UNDECIDED},
    {"CandidateStateTest (five voters, one grant: undecided)",
     5,
     {GRANT, NO_ANSWER, NO_ANSWER, NO_ANSWER},
     TALLY_UNDECIDED},
    {"CandidateStateTest (five voters, two grants: a majority)",
     5,
     {GRANT, REJECT, GRANT, NO_ANSWER},
     TALLY_WON},
    {"CandidateStateTest (five voters, three rejections: lost)",
     5,
     {REJECT, GRANT, REJECT, REJECT},
     TALLY_LOST},
};

/* Goal: a candidate becomes leader once a majority granted, loses (and
 * backs off, then stands again in a new epoch) once a majority rejected,
 * and otherwise waits for its election timeout. */
static void
test_raft_table_candidate_tally(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1};
    for (guint k = 0; k < G_N_ELEMENTS(tally_cases); k++) {
        const TallyCase *c = &tally_cases[k];
        Bench b;
        bench_init(&b, c->n_voters, epochs, 1, 1);
        bench_await_vote_request(&b, 2);
        for (guint i = 0; i < b.n_probes; i++)
            if (c->answers[i] != NO_ANSWER)
                bench_vote(&b, i, 2, c->answers[i] == GRANT);
        /* Watch until it leads or stands again in epoch 3. */
        gint64 start = sim_now_ns(b.world);
        gint64 wait = -1;
        gboolean won = FALSE;
        for (guint i = 0; i < 600 && wait < 0 && !won; i++) {
            bench_run(&b, 5 * SIM_NS_PER_MS);
            won = raft_node_role(b.node) == RAFT_ROLE_LEADER && raft_node_epoch(b.node) == 2;
            if (raft_node_epoch(b.node) > 2)
                wait = sim_now_ns(b.world) - start;
        }
        gboolean ok = c->outcome == TALLY_WON
                          ? won && sim_now_ns(b.world) - start <= 20 * SIM_NS_PER_MS
                      : c->outcome == TALLY_LOST ? !won && wait >= 0 && wait < 500 * SIM_NS_PER_MS
                                                 : !won && wait >= 900 * SIM_NS_PER_MS;
        if (!ok)
            fail_msg("%s: %s in epoch %d; the next election came after %" G_GINT64_FORMAT " ns",
                     c->kafka_test, raft_role_name(raft_node_role(b.node)), raft_node_epoch(b.node),
                     wait);
        bench_clear(&b);
    }
}

/* ---- a follower's truncation (KafkaRaftClientTest) ---- */

typedef struct {
    const char *kafka_test;
    gint32 diverging_epoch;
    gint64 diverging_end_offset;
    gint64 leo_after;       /* its log end after the truncation */
    gint32 next_last_epoch; /* and the last epoch of its next fetch */
} TruncateCase;

/* The follower's log: epoch 1 at [0, 10), 2 at [10, 15); it follows probe 1,
 * leader of epoch 3, and fetches at 15 with last epoch 2. The leader answers
 * with a diverging epoch and end offset (ReplicatedLog.truncateToEndOffset:
 * epoch 0 truncates to the offset; an epoch the follower has to the lower of
 * its end and the offset; an epoch it lacks to where its largest epoch below
 * ends). Offsets inside one of its batches are left out: by log matching a
 * leader's epoch never ends inside a follower's batch of that epoch. */
static const TruncateCase truncate_cases[] = {
    {"KafkaRaftClientTest.testFetchResponseWithDivergingEpoch (to the end of an older epoch)", 1,
     10, 10, 1},
    {"ReplicatedLog.truncateToEndOffset (epoch 0: to the offset)", 0, 0, 0, 0},
    {"ReplicatedLog.truncateToEndOffset (the leader's epoch ends past ours: ours stays)", 2, 20, 15,
     2},
    {"ReplicatedLog.truncateToEndOffset (an epoch we lack: where ours below it ends)", 3, 12, 15,
     2},
    {"ReplicatedLog.truncateToEndOffset (the end of our first epoch, the older one)", 1, 10, 10, 1},
};

static RaftMsg *
await_fetch(Bench *b)
{
    for (guint i = 0; i < 100; i++) {
        RaftMsg *req = probe_last(b, 0, RAFT_MSG_FETCH_REQUEST);
        if (req != NULL)
            return req;
        bench_run(b, 5 * SIM_NS_PER_MS);
    }
    fail_msg("no Fetch");
    return NULL;
}

/* Goal: a follower told that its log diverges truncates as
 * truncateToEndOffset says, and fetches again from there with the epoch of
 * its new last batch. */
static void
test_raft_table_follower_truncation(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1, 2};
    for (guint k = 0; k < G_N_ELEMENTS(truncate_cases); k++) {
        const TruncateCase *c = &truncate_cases[k];
        Bench b;
        bench_init(&b, 3, epochs, 3, 2);
        /* Probe 1 tells it that it leads epoch 3 (BeginQuorumEpoch). */
        RaftMsg *begin = raft_msg_new(RAFT_MSG_BEGIN_EPOCH_REQUEST, 1);
        begin->epoch = 3;
        begin->node_id = 1;
        bench_send(&b, 0, begin);
        RaftMsg *fetch = await_fetch(&b);
        assert_int_equal(raft_node_role(b.node), RAFT_ROLE_FOLLOWER);
        assert_int_equal(fetch->offset, 15);
        assert_int_equal(fetch->last_epoch, 2);
        RaftMsg *resp = raft_msg_new(RAFT_MSG_FETCH_RESPONSE, fetch->correlation_id);
        resp->epoch = 3;
        resp->node_id = 1;
        resp->leader_id = 1;
        resp->diverging_epoch = c->diverging_epoch;
        resp->diverging_end_offset = c->diverging_end_offset;
        probes_forget(&b);
        bench_send(&b, 0, resp);
        fetch = await_fetch(&b);
        gint64 leo = plog_log_end_offset(raft_node_log(b.node));
        if (leo != c->leo_after || fetch->offset != c->leo_after ||
            fetch->last_epoch != c->next_last_epoch)
            fail_msg("%s: log end %" G_GINT64_FORMAT ", next fetch at %" G_GINT64_FORMAT
                     " with last epoch %d",
                     c->kafka_test, leo, fetch->offset, fetch->last_epoch);
        bench_clear(&b);
    }
}

/* ---- requests of other epochs (KafkaRaftClientTest,
 * UnattachedStateWithVoteTest) ---- */

typedef struct {
    const char *kafka_test;
    RaftMsgType type; /* sent by probe 1 (voter 1) to a voter that voted for
                         voter 2 in epoch 5 */
    gint32 epoch;
    gint32 last_epoch;
    gint64 offset;
    RaftRole role_after;
    gint32 epoch_after;
    gint32 voted_after;
    gint32 leader_after;
} EpochCase;

/* The voter: log epoch 1 at [0, 5) and 3 at [5, 10); it granted voter 2's
 * vote in epoch 5 (a VoteRequest of epoch 5 from probe 2). */
static const EpochCase epoch_cases[] = {
    {"UnattachedStateWithVoteTest.testGrantVote (another candidate of the epoch is refused)",
     RAFT_MSG_VOTE_REQUEST, 5, 3, 10, RAFT_ROLE_VOTED, 5, 2, RAFT_NO_NODE},
    {"KafkaRaftClientTest.testHandleVoteRequestAsFollowerWithHigherEpoch (a higher epoch: "
     "its vote is free again)",
     RAFT_MSG_VOTE_REQUEST, 6, 3, 10, RAFT_ROLE_VOTED, 6, 1, RAFT_NO_NODE},
    {"KafkaRaftClientTest (a higher epoch with a log behind ours: no vote, but the epoch)",
     RAFT_MSG_VOTE_REQUEST, 6, 1, 20, RAFT_ROLE_UNATTACHED, 6, RAFT_NO_NODE, RAFT_NO_NODE},
    {"KafkaRaftClientTest.testHandleBeginQuorumEpochRequest... (the leader of our epoch: follow "
     "it)",
     RAFT_MSG_BEGIN_EPOCH_REQUEST, 5, 0, 0, RAFT_ROLE_FOLLOWER, 5, 2, 1},
    {"KafkaRaftClientTest (BeginQuorumEpoch of a higher epoch)", RAFT_MSG_BEGIN_EPOCH_REQUEST, 7, 0,
     0, RAFT_ROLE_FOLLOWER, 7, RAFT_NO_NODE, 1},
    {"KafkaRaftClientTest (BeginQuorumEpoch of an older epoch is fenced)",
     RAFT_MSG_BEGIN_EPOCH_REQUEST, 4, 0, 0, RAFT_ROLE_VOTED, 5, 2, RAFT_NO_NODE},
};

/* Goal: a voter that voted in an epoch keeps its vote for that epoch, takes
 * any higher epoch it hears of (its vote free again), and follows the
 * leader that announces itself. */
static void
test_raft_table_epochs_and_votes(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 3};
    for (guint k = 0; k < G_N_ELEMENTS(epoch_cases); k++) {
        const EpochCase *c = &epoch_cases[k];
        Bench b;
        bench_init(&b, 3, epochs, 2, 4);
        RaftMsg *vote = raft_msg_new(RAFT_MSG_VOTE_REQUEST, 1);
        vote->node_id = 2;
        vote->epoch = 5;
        vote->last_epoch = 3;
        vote->offset = 10;
        bench_send(&b, 1, vote);
        bench_run(&b, 20 * SIM_NS_PER_MS);
        assert_int_equal(raft_node_role(b.node), RAFT_ROLE_VOTED);
        assert_int_equal(raft_node_voted_id(b.node), 2);
        RaftMsg *msg = raft_msg_new(c->type, 2);
        msg->node_id = 1;
        msg->epoch = c->epoch;
        msg->last_epoch = c->last_epoch;
        msg->offset = c->offset;
        bench_send(&b, 0, msg);
        bench_run(&b, 20 * SIM_NS_PER_MS);
        if (raft_node_role(b.node) != c->role_after || raft_node_epoch(b.node) != c->epoch_after ||
            raft_node_voted_id(b.node) != c->voted_after ||
            raft_node_leader_id(b.node) != c->leader_after)
            fail_msg("%s: %s in epoch %d, voted %d, leader %d", c->kafka_test,
                     raft_role_name(raft_node_role(b.node)), raft_node_epoch(b.node),
                     raft_node_voted_id(b.node), raft_node_leader_id(b.node));
        bench_clear(&b);
    }
}

/* ---- property test: pauses, one-way cuts and quorum splits ---- */

typedef struct {
    SimWorld *world;
    RaftNode *nodes[VOTERS_MAX];
    guint n;
    RaftCheck *check;
    GString *why;
    gboolean broken;
} Quorum;

static void
after_event_cb(SimWorld *world, void *user_data)
{
    (void)world;
    Quorum *q = user_data;
    if (!q->broken && !raft_check_observe(q->check, q->nodes, q->n, q->why)) {
        q->broken = TRUE;
        for (guint i = 0; i < q->n; i++)
            g_string_append_printf(
                q->why, "[voter %u: %s, epoch %d, HW %" G_GINT64_FORMAT ", %s] ", i,
                raft_role_name(raft_node_role(q->nodes[i])), raft_node_epoch(q->nodes[i]),
                raft_node_high_watermark(q->nodes[i]),
                sim_node_state(q->world, raft_node_sim_node(q->nodes[i])) == SIM_NODE_PAUSED
                    ? "paused"
                    : "running");
    }
}

static void
quorum_init(Quorum *q, guint n, guint64 seed)
{
    memset(q, 0, sizeof *q);
    q->world = sim_world_new(seed);
    q->n = n;
    q->check = raft_check_new();
    q->why = g_string_new(NULL);
    sim_net_set_default_link(sim_world_net(q->world), SIM_DIST_CONST(SIM_NS_PER_MS), 0);
    RaftVoter voters[VOTERS_MAX];
    for (guint i = 0; i < n; i++) {
        g_autofree char *name = g_strdup_printf("controller-%u", i);
        q->nodes[i] = raft_node_new(q->world, name, (gint32)i, NULL);
        voters[i] = (RaftVoter){(gint32)i, raft_node_sim_node(q->nodes[i])};
    }
    for (guint i = 0; i < n; i++)
        raft_node_set_voters(q->nodes[i], voters, n);
    for (guint i = 0; i < n; i++)
        raft_node_start(q->nodes[i]);
    sim_world_set_after_event(q->world, after_event_cb, q);
}

static void
quorum_clear(Quorum *q)
{
    sim_world_free(q->world);
    for (guint i = 0; i < q->n; i++)
        raft_node_free(q->nodes[i]);
    raft_check_free(q->check);
    g_string_free(q->why, TRUE);
}

static void
run_for(Quorum *q, gint64 ns, guint64 seed)
{
    sim_world_run_until(q->world, sim_now_ns(q->world) + ns);
    if (q->broken)
        fail_msg("seed %" G_GUINT64_FORMAT ": %s", seed, q->why->str);
}

/* The leader of the highest epoch among the running voters, or -1. */
static gint
quorum_leader(const Quorum *q)
{
    gint best = -1;
    for (guint i = 0; i < q->n; i++) {
        if (raft_node_role(q->nodes[i]) != RAFT_ROLE_LEADER)
            continue;
        if (best < 0 || raft_node_epoch(q->nodes[i]) > raft_node_epoch(q->nodes[best]))
            best = (gint)i;
    }
    return best;
}

/* TRUE when one leader leads and every voter follows it in its epoch. */
static gboolean
quorum_settled(const Quorum *q)
{
    gint leader = quorum_leader(q);
    if (leader < 0)
        return FALSE;
    for (guint i = 0; i < q->n; i++)
        if (raft_node_leader_id(q->nodes[i]) != leader ||
            raft_node_epoch(q->nodes[i]) != raft_node_epoch(q->nodes[leader]))
            return FALSE;
    return TRUE;
}

/* One fault or append. The leader's minority split puts it with fewer than
 * half of the voters; a pause freezes a voter (the leader often), which
 * resumes later still believing what it believed. */
static void
zombie_fault(Quorum *q, SimRng *rng, guint64 *next_value)
{
    SimNet *net = sim_world_net(q->world);
    gint leader = quorum_leader(q);
    guint victim = leader >= 0 && sim_rng_chance(rng, 1, 2) ? (guint)leader
                                                            : (guint)sim_rng_range(rng, 0, q->n);
    SimNodeId node = raft_node_sim_node(q->nodes[victim]);
    SimNodeState state = sim_node_state(q->world, node);
    switch (sim_rng_range(rng, 0, 8)) {
    case 0:
        if (state == SIM_NODE_UP)
            sim_node_pause(q->world, node);
        break;
    case 1:
        if (state == SIM_NODE_PAUSED)
            sim_node_resume(q->world, node);
        break;
    case 2: {
        /* A quorum split: the victim and fewer than half of the others on
         * one side. */
        guint groups[VOTERS_MAX] = {0};
        guint minority = (q->n - 1) / 2;
        guint with = (guint)sim_rng_range(rng, 0, minority);
        for (guint i = 0; i < q->n; i++)
            groups[i] = 1;
        groups[victim] = 0;
        for (guint i = 0, moved = 0; i < q->n && moved < with; i++)
            if (i != victim && sim_rng_chance(rng, 1, 2)) {
                groups[i] = 0;
                moved++;
            }
        sim_net_partition(net, groups, q->n);
        break;
    }
    case 3: {
        guint other = (guint)sim_rng_range(rng, 0, q->n);
        if (other != victim)
            sim_net_cut_one_way(net, node, raft_node_sim_node(q->nodes[other]));
        break;
    }
    case 4:
        sim_net_heal(net);
        break;
    default:
        if (leader >= 0) {
            for (guint i = 0; i < 3; i++) {
                PlogRecord record = {2, (*next_value)++, 100};
                raft_node_append(q->nodes[leader], &record, 1);
            }
        }
        break;
    }
}

/* Goal: over random schedules of pauses and resumes (zombie leaders), one-way
 * cuts and quorum splits with the leader in the minority, on 3 and 5
 * voters, RaftEventSimulationTest's invariants hold after every event (a
 * zombie's writes of an old epoch are never committed: ConsistentCommitted-
 * Data); once every voter runs and the network is healed, one leader is
 * followed by every voter and commits on every voter.
 *
 * "Once" can be long: without pre-vote (KIP-996, after Kafka 4.0) a voter
 * whose log is behind keeps standing for election, each new epoch it asks
 * for sends the others back to unattached with a fresh election timeout
 * (1 to 2 s), and its own backoff after losing is at most 1 s, so it
 * usually stands again first. Seed 4 (5 voters) needs 198 s to settle,
 * seeds 12 and 14 need 14 and 23 s; the others 1 s. */
static void
test_raft_table_zombies_and_splits_keep_invariants(void **unused)
{
    (void)unused;
    for (guint64 seed = 1; seed <= 20; seed++) {
        guint n = seed % 2 == 0 ? 5 : 3;
        Quorum q;
        quorum_init(&q, n, seed);
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test-raft-zombies");
        guint64 next_value = 1;
        run_for(&q, 5 * SIM_NS_PER_S, seed);
        for (guint step = 0; step < 100; step++) {
            zombie_fault(&q, rng, &next_value);
            run_for(&q, sim_rng_range(rng, 50, 2500) * SIM_NS_PER_MS, seed);
        }
        sim_net_heal(sim_world_net(q.world));
        for (guint i = 0; i < n; i++) {
            SimNodeId node = raft_node_sim_node(q.nodes[i]);
            if (sim_node_state(q.world, node) == SIM_NODE_PAUSED)
                sim_node_resume(q.world, node);
        }
        guint waited = 0; /* seconds */
        while (waited < 600 && !quorum_settled(&q)) {
            run_for(&q, SIM_NS_PER_S, seed);
            waited++;
        }
        run_for(&q, 5 * SIM_NS_PER_S, seed);
        if (!quorum_settled(&q))
            fail_msg("seed %" G_GUINT64_FORMAT ": no settled leader %u s after the heal", seed,
                     waited);
        gint leader = quorum_leader(&q);
        if (leader < 0)
            fail_msg("seed %" G_GUINT64_FORMAT ": no leader after the heal", seed);
        for (guint i = 0; i < n; i++)
            if ((gint)i != leader && raft_node_role(q.nodes[i]) == RAFT_ROLE_LEADER)
                fail_msg("seed %" G_GUINT64_FORMAT ": voter %u still leads epoch %d", seed, i,
                         raft_node_epoch(q.nodes[i]));
        PlogRecord record = {2, next_value, 100};
        assert_true(raft_node_append(q.nodes[leader], &record, 1) >= 0);
        run_for(&q, 3 * SIM_NS_PER_S, seed);
        gint64 leo = plog_log_end_offset(raft_node_log(q.nodes[leader]));
        for (guint i = 0; i < n; i++)
            if (raft_node_high_watermark(q.nodes[i]) != leo)
                fail_msg("seed %" G_GUINT64_FORMAT ": voter %u's high watermark %" G_GINT64_FORMAT
                         " is not the leader's end %" G_GINT64_FORMAT,
                         seed, i, raft_node_high_watermark(q.nodes[i]), leo);
        assert_int_equal(raft_check_committed(q.check), leo);
        quorum_clear(&q);
    }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raft_table_high_watermark),
        cmocka_unit_test(test_raft_table_validate_offset_and_epoch),
        cmocka_unit_test(test_raft_table_candidate_tally),
        cmocka_unit_test(test_raft_table_follower_truncation),
        cmocka_unit_test(test_raft_table_epochs_and_votes),
        cmocka_unit_test(test_raft_table_zombies_and_splits_keep_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
