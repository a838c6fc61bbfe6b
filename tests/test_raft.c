/*
 * Unit tests for the KRaft quorum (models/raft): elections, vote rejection
 * by the log-up-to-date check, fetch validation and divergence (table
 * driven, after KafkaRaftClientTest and ReplicatedLog's
 * validateOffsetAndEpoch), truncation of a zombie leader's tail, the high
 * watermark's current-epoch rule (LeaderStateTest), and a property test over
 * random crash and partition schedules checking RaftEventSimulationTest's
 * invariants (raft_check.h) after every event.
 *
 * Scripted peers ("probes") are plain simulated nodes that keep what they
 * receive, so a test can play a voter's part message by message.
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
#include "sim_disk.h"
#include "sim_net.h"

#define VOTERS_MAX 5

/* ---- fixtures ---- */

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
    if (!q->broken && !raft_check_observe(q->check, q->nodes, q->n, q->why))
        q->broken = TRUE;
}

static void
quorum_init_cfg(Quorum *q, guint n, guint64 seed, const RaftConfig *cfg)
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
        q->nodes[i] = raft_node_new(q->world, name, (gint32)i, cfg);
        voters[i] = (RaftVoter){(gint32)i, raft_node_sim_node(q->nodes[i])};
    }
    for (guint i = 0; i < n; i++)
        raft_node_set_voters(q->nodes[i], voters, n);
    for (guint i = 0; i < n; i++)
        raft_node_start(q->nodes[i]);
    sim_world_set_after_event(q->world, after_event_cb, q);
}

static void
quorum_init(Quorum *q, guint n, guint64 seed)
{
    quorum_init_cfg(q, n, seed, NULL);
}

/* Small segments, a log always over its retention, a cleaner every second:
 * what a test needs to see snapshots and cleaning in a short run. */
static void
bounded_config(RaftConfig *cfg)
{
    raft_config_init(cfg);
    cfg->segment_bytes = 512;
    cfg->retention_bytes = 1;
    cfg->clean_interval_ns = SIM_NS_PER_S;
}

/* A snapshot of `node`'s log at its high watermark, named by that offset
 * (as the layer above names its images). */
static gboolean
snapshot_at_hw(RaftNode *node)
{
    gint64 hw = raft_node_high_watermark(node);
    return raft_node_create_snapshot(node, hw, (guint64)hw, 1000 + hw, 0);
}

static void
quorum_clear(Quorum *q)
{
    if (q->broken)
        fail_msg("%s", q->why->str);
    sim_world_free(q->world);
    for (guint i = 0; i < q->n; i++)
        raft_node_free(q->nodes[i]);
    raft_check_free(q->check);
    g_string_free(q->why, TRUE);
}

static void
run_for(Quorum *q, gint64 ns)
{
    sim_world_run_until(q->world, sim_now_ns(q->world) + ns);
    if (q->broken)
        fail_msg("%s", q->why->str);
}

/* The leader of the highest epoch, or -1. */
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

static gint64
append_values(RaftNode *node, guint64 first_value, guint n)
{
    gint64 base = -1;
    for (guint i = 0; i < n; i++) {
        PlogRecord record = {2, first_value + i, 100};
        gint64 offset = raft_node_append(node, &record, 1);
        if (base < 0)
            base = offset;
    }
    return base;
}

/* TRUE when `log` holds a record with `value`. */
static gboolean
log_has_value(Plog *log, guint64 value)
{
    g_autoptr(GPtrArray) batches = plog_batch_array_new();
    for (gint64 offset = plog_log_start_offset(log); offset < plog_log_end_offset(log);) {
        g_ptr_array_set_size(batches, 0);
        assert_int_equal(plog_read(log, offset, 1 << 20, batches), PLOG_READ_OK);
        for (guint b = 0; b < batches->len; b++) {
            const PlogBatch *batch = g_ptr_array_index(batches, b);
            for (guint r = 0; r < batch->records->len; r++) {
                if (g_array_index(batch->records, PlogRecord, r).value == value)
                    return TRUE;
            }
            offset = plog_batch_last_offset(batch) + 1;
        }
    }
    return FALSE;
}

/* A scripted voter: keeps every message it receives. */
typedef struct {
    SimNodeId node;
    GPtrArray *inbox; /* RaftMsg * */
} Probe;

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

/* A world with the voter under test (id 0) and probes (ids 1, 2), the
 * voter's disk holding a log of `epochs[i]` for 5 records each and the
 * election state at `epoch`. */
typedef struct {
    SimWorld *world;
    RaftNode *node;
    Probe probes[2];
} Bench;

static void
bench_init(Bench *b, const gint32 *epochs, guint n_epochs, gint32 epoch)
{
    memset(b, 0, sizeof *b);
    b->world = sim_world_new(7);
    sim_net_set_default_link(sim_world_net(b->world), SIM_DIST_CONST(SIM_NS_PER_MS), 0);
    b->node = raft_node_new(b->world, "controller-0", 0, NULL);
    RaftVoter voters[3] = {{0, raft_node_sim_node(b->node)}};
    for (guint i = 0; i < 2; i++) {
        g_autofree char *name = g_strdup_printf("probe-%u", i + 1);
        b->probes[i].inbox = g_ptr_array_new_with_free_func(msg_free_cb);
        b->probes[i].node = sim_node_add(b->world, name, &probe_ops, &b->probes[i]);
        voters[i + 1] = (RaftVoter){(gint32)i + 1, b->probes[i].node};
    }
    raft_node_set_voters(b->node, voters, 3);
    SimNodeId x = raft_node_sim_node(b->node);
    PlogConfig cfg = {.segment_bytes = 1 << 30, .roll_ms = G_MAXINT64 / 4,
                      .index_interval_bytes = 4096, .retention_ms = -1, .retention_bytes = -1,
                      .flush_interval_messages = G_MAXINT64, .flush_interval_ms = -1};
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
    assert_int_equal(sim_disk_append(disk, "__cluster_metadata-0/quorum-state", state,
                                     strlen(state)),
                     SIM_DISK_OK);
    raft_node_start(b->node);
}

static void
bench_clear(Bench *b)
{
    sim_world_free(b->world);
    raft_node_free(b->node);
    for (guint i = 0; i < 2; i++)
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

static RaftMsg *
vote_request(gint32 candidate, gint32 epoch, gint32 last_epoch, gint64 offset)
{
    RaftMsg *msg = raft_msg_new(RAFT_MSG_VOTE_REQUEST, 1);
    msg->node_id = candidate;
    msg->epoch = epoch;
    msg->last_epoch = last_epoch;
    msg->offset = offset;
    return msg;
}

/* ---- elections ---- */

/* Goal: a single voter elects itself and commits its LeaderChange record. */
static void
test_raft_single_voter_elects_itself(void **unused)
{
    (void)unused;
    Quorum q;
    quorum_init(&q, 1, 1);
    run_for(&q, 3 * SIM_NS_PER_S);
    assert_int_equal(raft_node_role(q.nodes[0]), RAFT_ROLE_LEADER);
    assert_int_equal(raft_node_epoch(q.nodes[0]), 1);
    assert_int_equal(raft_node_high_watermark(q.nodes[0]), 1);
    append_values(q.nodes[0], 1, 3);
    run_for(&q, SIM_NS_PER_S);
    assert_int_equal(raft_node_high_watermark(q.nodes[0]), 4);
    quorum_clear(&q);
}

/* Goal: three voters elect one leader within the election timeouts; the
 * others follow it, replicate its records and learn the high watermark. */
static void
test_raft_three_voters_elect_and_replicate(void **unused)
{
    (void)unused;
    for (guint64 seed = 1; seed <= 5; seed++) {
        Quorum q;
        quorum_init(&q, 3, seed);
        run_for(&q, 5 * SIM_NS_PER_S);
        gint leader = quorum_leader(&q);
        assert_true(leader >= 0);
        gint32 epoch = raft_node_epoch(q.nodes[leader]);
        for (guint i = 0; i < 3; i++) {
            assert_int_equal(raft_node_epoch(q.nodes[i]), epoch);
            assert_int_equal(raft_node_leader_id(q.nodes[i]), leader);
            if ((gint)i != leader)
                assert_int_equal(raft_node_role(q.nodes[i]), RAFT_ROLE_FOLLOWER);
        }
        append_values(q.nodes[leader], 100, 10);
        run_for(&q, 2 * SIM_NS_PER_S);
        gint64 leo = plog_log_end_offset(raft_node_log(q.nodes[leader]));
        for (guint i = 0; i < 3; i++) {
            assert_int_equal(plog_log_end_offset(raft_node_log(q.nodes[i])), leo);
            assert_int_equal(raft_node_high_watermark(q.nodes[i]), leo);
        }
        assert_int_equal(raft_check_committed(q.check), leo);
        quorum_clear(&q);
    }
}

/* Goal: when the leader crashes, the others elect a new one in a higher
 * epoch within fetch timeout + election timeouts, and committed records
 * survive; the old leader rejoins as a follower. */
static void
test_raft_leader_crash_reelects(void **unused)
{
    (void)unused;
    Quorum q;
    quorum_init(&q, 3, 11);
    run_for(&q, 5 * SIM_NS_PER_S);
    gint old = quorum_leader(&q);
    assert_true(old >= 0);
    gint32 epoch = raft_node_epoch(q.nodes[old]);
    append_values(q.nodes[old], 500, 5);
    run_for(&q, SIM_NS_PER_S);
    gint64 committed = raft_node_high_watermark(q.nodes[old]);
    sim_node_crash(q.world, raft_node_sim_node(q.nodes[old]));
    run_for(&q, 8 * SIM_NS_PER_S);
    gint leader = quorum_leader(&q);
    assert_true(leader >= 0 && leader != old);
    assert_true(raft_node_epoch(q.nodes[leader]) > epoch);
    assert_true(raft_node_high_watermark(q.nodes[leader]) > committed);
    assert_true(log_has_value(raft_node_log(q.nodes[leader]), 504));
    sim_node_restart(q.world, raft_node_sim_node(q.nodes[old]));
    run_for(&q, 5 * SIM_NS_PER_S);
    assert_int_equal(raft_node_role(q.nodes[old]), RAFT_ROLE_FOLLOWER);
    assert_int_equal(raft_node_leader_id(q.nodes[old]), leader);
    quorum_clear(&q);
}

/* ---- Vote: the log-up-to-date check (table) ---- */

typedef struct {
    const char *name;
    gint32 candidate_epoch;
    gint32 last_epoch;
    gint64 end_offset;
    KafkaError error;
    gboolean granted;
} VoteCase;

/* Our log: epoch 1 at [0, 5), epoch 2 at [5, 10); our epoch is 2. The cases
 * follow KafkaRaftClientTest's vote tests and OffsetAndEpoch.compareTo. */
static const VoteCase vote_cases[] = {
    {"an equal log is up to date", 3, 2, 10, KAFKA_ERROR_NONE, TRUE},
    {"a longer log in our last epoch", 3, 2, 12, KAFKA_ERROR_NONE, TRUE},
    {"a shorter log in our last epoch is behind", 3, 2, 9, KAFKA_ERROR_NONE, FALSE},
    {"a longer log of an older epoch is behind", 3, 1, 20, KAFKA_ERROR_NONE, FALSE},
    {"a newer last epoch wins however short", 4, 3, 1, KAFKA_ERROR_NONE, TRUE},
    {"our own epoch with an older log", 2, 1, 5, KAFKA_ERROR_NONE, FALSE},
    {"a stale candidate epoch is fenced", 1, 0, 0, KAFKA_ERROR_FENCED_LEADER_EPOCH, FALSE},
    {"a last epoch not below its epoch", 3, 3, 10, KAFKA_ERROR_INVALID_REQUEST, FALSE},
    {"a negative end offset", 3, 2, -1, KAFKA_ERROR_INVALID_REQUEST, FALSE},
};

/* Goal: a vote is granted exactly when the candidate's (last epoch, end
 * offset) is at least ours and its epoch is valid. */
static void
test_raft_vote_log_up_to_date(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 2};
    for (guint i = 0; i < G_N_ELEMENTS(vote_cases); i++) {
        const VoteCase *c = &vote_cases[i];
        Bench b;
        bench_init(&b, epochs, 2, 2);
        bench_send(&b, 0, vote_request(1, c->candidate_epoch, c->last_epoch, c->end_offset));
        bench_run(&b, 50 * SIM_NS_PER_MS);
        RaftMsg *resp = probe_last(&b, 0, RAFT_MSG_VOTE_RESPONSE);
        if (resp == NULL)
            fail_msg("%s: no vote response", c->name);
        if (resp->error != (gint16)c->error || resp->vote_granted != c->granted)
            fail_msg("%s: error %d granted %d, expected %d %d", c->name, resp->error,
                     resp->vote_granted, c->error, c->granted);
        gint32 epoch = MAX(2, c->error == KAFKA_ERROR_NONE ? c->candidate_epoch : 2);
        assert_int_equal(raft_node_epoch(b.node), epoch);
        assert_int_equal(raft_node_voted_id(b.node), c->granted ? 1 : RAFT_NO_NODE);
        bench_clear(&b);
    }
}

/* Goal: one vote per epoch: a second candidate of the epoch is refused, the
 * first is granted again, and the vote survives a crash (it is durable
 * before it is answered). */
static void
test_raft_vote_once_per_epoch(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 2};
    Bench b;
    bench_init(&b, epochs, 2, 2);
    bench_send(&b, 0, vote_request(1, 3, 2, 10));
    bench_run(&b, 50 * SIM_NS_PER_MS);
    assert_true(probe_last(&b, 0, RAFT_MSG_VOTE_RESPONSE)->vote_granted);
    bench_send(&b, 1, vote_request(2, 3, 2, 10));
    bench_run(&b, 50 * SIM_NS_PER_MS);
    assert_false(probe_last(&b, 1, RAFT_MSG_VOTE_RESPONSE)->vote_granted);
    SimNodeId x = raft_node_sim_node(b.node);
    sim_node_power_loss(b.world, x);
    sim_node_restart(b.world, x);
    assert_int_equal(raft_node_role(b.node), RAFT_ROLE_VOTED);
    assert_int_equal(raft_node_voted_id(b.node), 1);
    bench_send(&b, 1, vote_request(2, 3, 2, 10));
    bench_send(&b, 0, vote_request(1, 3, 2, 10));
    bench_run(&b, 50 * SIM_NS_PER_MS);
    assert_false(probe_last(&b, 1, RAFT_MSG_VOTE_RESPONSE)->vote_granted);
    assert_true(probe_last(&b, 0, RAFT_MSG_VOTE_RESPONSE)->vote_granted);
    bench_clear(&b);
}

/* ---- the leader: fetch validation and the high watermark (table) ---- */

/* Makes the bench's voter leader of epoch 2: it times out, asks for votes,
 * probe 1 grants. Its log then holds epoch 1 at [0, 10) and its
 * LeaderChange record at 10. */
static void
bench_elect(Bench *b)
{
    for (guint i = 0; i < 300 && probe_last(b, 0, RAFT_MSG_VOTE_REQUEST) == NULL; i++)
        bench_run(b, 10 * SIM_NS_PER_MS);
    RaftMsg *req = probe_last(b, 0, RAFT_MSG_VOTE_REQUEST);
    assert_non_null(req);
    assert_int_equal(req->epoch, 2);
    assert_int_equal(req->last_epoch, 1);
    assert_int_equal(req->offset, 10);
    RaftMsg *resp = raft_msg_new(RAFT_MSG_VOTE_RESPONSE, req->correlation_id);
    resp->epoch = 2;
    resp->node_id = 1;
    resp->vote_granted = TRUE;
    bench_send(b, 0, resp);
    bench_run(b, 20 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_role(b->node), RAFT_ROLE_LEADER);
    assert_int_equal(plog_log_end_offset(raft_node_log(b->node)), 11);
    assert_int_equal(raft_node_high_watermark(b->node), -1);
}

typedef struct {
    const char *name;
    guint probe;
    gint64 fetch_offset;
    gint32 last_epoch;
    gint32 diverging_epoch; /* -1: valid */
    gint64 diverging_end_offset;
    gint64 records_from; /* the first offset returned, -1: none */
    gint64 high_watermark;
} FetchCase;

/* Applied in order to one leader (ReplicatedLog.validateOffsetAndEpoch;
 * LeaderStateTest's high-watermark cases for three voters). */
static const FetchCase fetch_cases[] = {
    {"an empty follower fetches from 0", 0, 0, 0, -1, -1, 0, -1},
    {"an offset past our end of its epoch diverges", 0, 12, 1, 1, 10, -1, -1},
    {"an epoch older than our first diverges to its start", 0, 3, 0, 0, 0, -1, -1},
    {"an unknown newer epoch diverges to our end", 0, 11, 5, 2, 11, -1, -1},
    {"the end of epoch 1 is valid", 0, 10, 1, -1, -1, 10, -1},
    {"epoch 1 on a majority is not committed by epoch 2", 1, 10, 1, -1, -1, 10, -1},
    {"the LeaderChange record on a majority commits", 0, 11, 2, -1, -1, -1, 11},
    {"a lagging voter does not move it back", 1, 5, 1, -1, -1, 5, 11},
};

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

/* Goal: the leader answers each fetch with records, or with the diverging
 * epoch and end offset, and sets the high watermark only from an offset of
 * its own epoch held by a majority. */
static void
test_raft_leader_fetch_validation(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1};
    Bench b;
    bench_init(&b, epochs, 2, 1);
    bench_elect(&b);
    for (guint i = 0; i < G_N_ELEMENTS(fetch_cases); i++) {
        const FetchCase *c = &fetch_cases[i];
        g_ptr_array_set_size(b.probes[c->probe].inbox, 0);
        bench_send(&b, c->probe,
                   fetch_request((gint32)c->probe + 1, 2, c->fetch_offset, c->last_epoch));
        bench_run(&b, 20 * SIM_NS_PER_MS);
        RaftMsg *resp = probe_last(&b, c->probe, RAFT_MSG_FETCH_RESPONSE);
        if (resp == NULL)
            fail_msg("%s: no response", c->name);
        gint64 from = resp->batches != NULL && resp->batches->len > 0
                          ? ((PlogBatch *)g_ptr_array_index(resp->batches, 0))->base_offset
                          : -1;
        if (resp->error != KAFKA_ERROR_NONE || resp->diverging_epoch != c->diverging_epoch ||
            resp->diverging_end_offset != c->diverging_end_offset || from != c->records_from ||
            resp->high_watermark != c->high_watermark)
            fail_msg("%s: error %d diverging %d@%" G_GINT64_FORMAT " records from %" G_GINT64_FORMAT
                     " hw %" G_GINT64_FORMAT,
                     c->name, resp->error, resp->diverging_epoch, resp->diverging_end_offset, from,
                     resp->high_watermark);
    }
    /* A fetch of an old epoch is fenced, of a future one unknown. */
    bench_send(&b, 0, fetch_request(1, 1, 11, 2));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE)->error,
                     KAFKA_ERROR_FENCED_LEADER_EPOCH);
    bench_send(&b, 0, fetch_request(1, 3, 11, 2));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE)->error,
                     KAFKA_ERROR_UNKNOWN_LEADER_EPOCH);
    bench_clear(&b);
}

/* Goal: a fetch at the leader's end is parked until the leader appends (or
 * its max wait passes), as Kafka's fetch purgatory holds it. */
static void
test_raft_leader_parks_fetch(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1};
    Bench b;
    bench_init(&b, epochs, 2, 1);
    bench_elect(&b);
    RaftMsg *req = fetch_request(1, 2, 11, 2);
    req->max_wait_ns = 500 * SIM_NS_PER_MS;
    g_ptr_array_set_size(b.probes[0].inbox, 0);
    bench_send(&b, 0, req);
    bench_run(&b, 100 * SIM_NS_PER_MS);
    assert_null(probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE));
    PlogRecord record = {2, 77, 100};
    assert_int_equal(raft_node_append(b.node, &record, 1), 11);
    bench_run(&b, 10 * SIM_NS_PER_MS);
    RaftMsg *resp = probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE);
    assert_non_null(resp);
    assert_non_null(resp->batches);
    assert_int_equal(((PlogBatch *)g_ptr_array_index(resp->batches, 0))->base_offset, 11);
    /* With nothing new, the answer comes at the end of the max wait. */
    req = fetch_request(1, 2, 12, 2);
    req->max_wait_ns = 500 * SIM_NS_PER_MS;
    g_ptr_array_set_size(b.probes[0].inbox, 0);
    bench_send(&b, 0, req);
    bench_run(&b, 400 * SIM_NS_PER_MS);
    assert_null(probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE));
    bench_run(&b, 200 * SIM_NS_PER_MS);
    resp = probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE);
    assert_non_null(resp);
    assert_int_equal(resp->high_watermark, 12);
    bench_clear(&b);
}

/* ---- divergence and truncation ---- */

/* Goal: a leader cut off from the others keeps appending (uncommitted); the
 * others elect a new leader that appends too; after the heal the old
 * leader's fetch diverges, it truncates its orphan tail and ends with the
 * new leader's log, byte for byte. */
static void
test_raft_zombie_leader_truncates(void **unused)
{
    (void)unused;
    Quorum q;
    quorum_init(&q, 3, 21);
    run_for(&q, 5 * SIM_NS_PER_S);
    gint old = quorum_leader(&q);
    assert_true(old >= 0);
    append_values(q.nodes[old], 100, 3);
    run_for(&q, SIM_NS_PER_S);
    gint64 committed = raft_node_high_watermark(q.nodes[old]);
    sim_net_isolate(sim_world_net(q.world), raft_node_sim_node(q.nodes[old]));
    append_values(q.nodes[old], 900, 5);
    run_for(&q, 200 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_high_watermark(q.nodes[old]), committed);
    run_for(&q, 8 * SIM_NS_PER_S);
    gint leader = quorum_leader(&q);
    assert_true(leader >= 0 && leader != old);
    append_values(q.nodes[leader], 200, 2);
    run_for(&q, SIM_NS_PER_S);
    /* The zombie resigned (check quorum) and stood for election, in vain. */
    assert_int_not_equal(raft_node_role(q.nodes[old]), RAFT_ROLE_LEADER);
    assert_true(log_has_value(raft_node_log(q.nodes[old]), 904));
    sim_net_heal(sim_world_net(q.world));
    run_for(&q, 10 * SIM_NS_PER_S);
    leader = quorum_leader(&q);
    assert_true(leader >= 0);
    for (guint i = 0; i < 3; i++)
        assert_int_equal(raft_node_leader_id(q.nodes[i]), leader);
    Plog *leader_log = raft_node_log(q.nodes[leader]);
    g_autoptr(GByteArray) expected = g_byte_array_new();
    assert_true(plog_read_all_encoded(leader_log, expected));
    for (guint i = 0; i < 3; i++) {
        Plog *log = raft_node_log(q.nodes[i]);
        assert_true(plog_encoded_equals(log, expected));
        assert_false(log_has_value(log, 904));
        assert_true(log_has_value(log, 201));
        assert_int_equal(raft_node_high_watermark(q.nodes[i]), plog_log_end_offset(leader_log));
    }
    quorum_clear(&q);
}

/* ---- snapshots and cleaning ---- */

/* Goal: a snapshot is written as a .part file and becomes the node's once
 * fsynced and renamed; with two snapshots and the log over
 * metadata.max.retention.bytes, the cleaner moves the log start offset to
 * the later snapshot's end, deletes the segments wholly below it and the
 * older snapshot's file, and never goes past the latest snapshot. */
static void
test_raft_snapshot_and_clean(void **unused)
{
    (void)unused;
    RaftConfig cfg;
    bounded_config(&cfg);
    Quorum q;
    quorum_init_cfg(&q, 3, 5, &cfg);
    run_for(&q, 5 * SIM_NS_PER_S);
    gint leader = quorum_leader(&q);
    assert_true(leader >= 0);
    RaftNode *node = q.nodes[leader];
    append_values(node, 100, 20);
    run_for(&q, SIM_NS_PER_S);
    gint64 first = raft_node_high_watermark(node);
    assert_int_equal(first, 21);
    /* Not above the high watermark, nor twice. */
    assert_false(raft_node_create_snapshot(node, first + 1, 1, 1000, 0));
    assert_true(snapshot_at_hw(node));
    assert_false(snapshot_at_hw(node));
    assert_int_equal(raft_node_snapshot_count(node), 0); /* not yet durable */
    SimDisk *disk = sim_node_disk(q.world, raft_node_sim_node(node));
    g_autofree char *part = g_strdup_printf(
        "__cluster_metadata-0/%020" G_GINT64_FORMAT "-%010d.checkpoint.part", first,
        raft_node_epoch(node));
    g_autofree char *name = g_strdup_printf(
        "__cluster_metadata-0/%020" G_GINT64_FORMAT "-%010d.checkpoint", first,
        raft_node_epoch(node));
    assert_true(sim_disk_exists(disk, part));
    run_for(&q, 100 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_snapshot_count(node), 1);
    assert_false(sim_disk_exists(disk, part));
    assert_true(sim_disk_exists(disk, name));
    assert_true(sim_disk_is_synced(disk, name));
    /* One snapshot: nothing to clean. */
    run_for(&q, 3 * SIM_NS_PER_S);
    assert_int_equal(raft_node_log_start_offset(node), 0);
    append_values(node, 200, 20);
    run_for(&q, SIM_NS_PER_S);
    gint64 second = raft_node_high_watermark(node);
    assert_true(second > first);
    assert_true(snapshot_at_hw(node));
    guint segments = plog_segment_count(raft_node_log(node));
    run_for(&q, 2 * SIM_NS_PER_S);
    assert_int_equal(raft_node_snapshot_count(node), 1);
    assert_int_equal(raft_node_latest_snapshot(node)->end_offset, second);
    assert_int_equal(raft_node_log_start_offset(node), second);
    assert_false(sim_disk_exists(disk, name));
    Plog *log = raft_node_log(node);
    assert_true(plog_segment_count(log) < segments);
    assert_true(plog_log_start_offset(log) > 0);
    assert_true(plog_log_start_offset(log) <= second);
    quorum_clear(&q);
}

/* Goal: a follower that was down while the leader's log was cleaned past
 * its end is sent the leader's latest snapshot, fetches it with
 * FetchSnapshot, truncates its log fully to it and fetches on: it ends with
 * the leader's records after the snapshot and its high watermark. */
static void
test_raft_lagging_follower_fetches_snapshot(void **unused)
{
    (void)unused;
    RaftConfig cfg;
    bounded_config(&cfg);
    Quorum q;
    quorum_init_cfg(&q, 3, 9, &cfg);
    run_for(&q, 5 * SIM_NS_PER_S);
    gint leader = quorum_leader(&q);
    assert_true(leader >= 0);
    guint lagging = ((guint)leader + 1) % 3, other = ((guint)leader + 2) % 3;
    append_values(q.nodes[leader], 100, 5);
    run_for(&q, SIM_NS_PER_S);
    sim_node_crash(q.world, raft_node_sim_node(q.nodes[lagging]));
    for (guint round = 0; round < 2; round++) {
        append_values(q.nodes[leader], 200 + 100 * round, 20);
        run_for(&q, SIM_NS_PER_S);
        assert_true(snapshot_at_hw(q.nodes[leader]));
        assert_true(snapshot_at_hw(q.nodes[other]));
        run_for(&q, 100 * SIM_NS_PER_MS);
    }
    run_for(&q, 2 * SIM_NS_PER_S);
    gint64 start = raft_node_log_start_offset(q.nodes[leader]);
    assert_true(start > 6);
    append_values(q.nodes[leader], 900, 3);
    run_for(&q, SIM_NS_PER_S);
    sim_node_restart(q.world, raft_node_sim_node(q.nodes[lagging]));
    run_for(&q, 5 * SIM_NS_PER_S);
    RaftNode *f = q.nodes[lagging];
    assert_int_equal(raft_node_role(f), RAFT_ROLE_FOLLOWER);
    assert_non_null(raft_node_latest_snapshot(f));
    assert_int_equal(raft_node_latest_snapshot(f)->end_offset, start);
    assert_int_equal(raft_node_latest_snapshot(f)->payload, (guint64)start);
    assert_int_equal(raft_node_log_start_offset(f), start);
    assert_true(log_has_value(raft_node_log(f), 902));
    assert_false(log_has_value(raft_node_log(f), 104));
    gint64 leo = plog_log_end_offset(raft_node_log(q.nodes[leader]));
    assert_int_equal(plog_log_end_offset(raft_node_log(f)), leo);
    assert_int_equal(raft_node_high_watermark(f), leo);
    quorum_clear(&q);
}

/* Goal: a restarted voter finds its snapshots on disk, deletes a partial
 * one, and, when its latest snapshot ends past its log (a follower that
 * crashed after downloading it and before truncating), truncates its log
 * fully to it (KafkaMetadataLog.truncateToLatestSnapshot). */
static void
test_raft_restart_loads_snapshots(void **unused)
{
    (void)unused;
    RaftConfig cfg;
    bounded_config(&cfg);
    Quorum q;
    quorum_init_cfg(&q, 1, 3, &cfg);
    run_for(&q, 3 * SIM_NS_PER_S);
    RaftNode *node = q.nodes[0];
    append_values(node, 100, 10);
    run_for(&q, SIM_NS_PER_S);
    gint64 hw = raft_node_high_watermark(node);
    assert_true(snapshot_at_hw(node));
    run_for(&q, SIM_NS_PER_S);
    SimNodeId x = raft_node_sim_node(node);
    sim_node_crash(q.world, x);
    SimDisk *disk = sim_node_disk(q.world, x);
    const char *partial = "__cluster_metadata-0/00000000000000000005-0000000001.checkpoint.part";
    g_autofree char *ahead = g_strdup_printf(
        "__cluster_metadata-0/%020" G_GINT64_FORMAT "-0000000009.checkpoint", hw + 50);
    g_autofree char *body = g_strdup_printf("%" G_GINT64_FORMAT " 4096 0\n", hw + 50);
    assert_int_equal(sim_disk_create(disk, partial), SIM_DISK_OK);
    assert_int_equal(sim_disk_create(disk, ahead), SIM_DISK_OK);
    assert_int_equal(sim_disk_append(disk, ahead, body, strlen(body)), SIM_DISK_OK);
    sim_node_restart(q.world, x);
    assert_false(sim_disk_exists(disk, partial));
    assert_int_equal(raft_node_snapshot_count(node), 1);
    const RaftSnapshot *latest = raft_node_latest_snapshot(node);
    assert_int_equal(latest->end_offset, hw + 50);
    assert_int_equal(latest->epoch, 9);
    assert_int_equal(latest->size_bytes, 4096);
    assert_int_equal(plog_log_end_offset(raft_node_log(node)), hw + 50);
    assert_int_equal(raft_node_log_start_offset(node), hw + 50);
    quorum_clear(&q);
}

/* Goal: the leader answers an observer's fetch from offset 0, and a voter's
 * whose log diverges before its oldest snapshot, with its latest snapshot's
 * id, serves the snapshot in chunks of at most 8 MiB (FetchSnapshot), and
 * refuses a position past its end and an unknown snapshot. */
static void
test_raft_observer_fetches_snapshot(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1};
    Bench b;
    bench_init(&b, epochs, 2, 1);
    bench_elect(&b);
    bench_send(&b, 0, fetch_request(1, 2, 11, 2));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_high_watermark(b.node), 11);
    gint64 size = 10 * 1024 * 1024;
    assert_true(raft_node_create_snapshot(b.node, 11, 77, size, 5));
    bench_run(&b, 100 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_snapshot_count(b.node), 1);
    Probe observer = {0};
    observer.inbox = g_ptr_array_new_with_free_func(msg_free_cb);
    observer.node = sim_node_add(b.world, "broker-7", &probe_ops, &observer);
    SimNet *net = sim_world_net(b.world);
    SimNodeId leader = raft_node_sim_node(b.node);
    RaftMsg *fetch = fetch_request(7, 2, 0, 0);
    raft_msg_finish(fetch);
    sim_net_send(net, observer.node, leader, &fetch->base);
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(observer.inbox->len, 1);
    RaftMsg *resp = g_ptr_array_index(observer.inbox, 0);
    assert_int_equal(resp->snapshot_end_offset, 11);
    assert_int_equal(resp->snapshot_epoch, 2);
    assert_true(resp->batches == NULL || resp->batches->len == 0);
    /* A voter whose log diverges before the snapshot (its last epoch older
     * than the oldest snapshot's) is sent the snapshot, not a diverging
     * epoch; one at the snapshot with its epoch fetches on from the log. */
    bench_send(&b, 0, fetch_request(1, 2, 11, 1));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    resp = probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE);
    assert_int_equal(resp->snapshot_end_offset, 11);
    assert_int_equal(resp->diverging_epoch, -1);
    bench_send(&b, 0, fetch_request(1, 2, 11, 2));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    resp = probe_last(&b, 0, RAFT_MSG_FETCH_RESPONSE);
    assert_int_equal(resp->snapshot_end_offset, -1);
    assert_int_equal(resp->error, KAFKA_ERROR_NONE);
    static const struct {
        gint64 end_offset;
        gint64 position;
        KafkaError error;
        gint64 chunk_bytes;
    } cases[] = {
        {11, 0, KAFKA_ERROR_NONE, 8 * 1024 * 1024},
        {11, 8 * 1024 * 1024, KAFKA_ERROR_NONE, 2 * 1024 * 1024},
        {11, 10 * 1024 * 1024, KAFKA_ERROR_POSITION_OUT_OF_RANGE, 0},
        {12, 0, KAFKA_ERROR_SNAPSHOT_NOT_FOUND, 0},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RaftMsg *req = raft_msg_new(RAFT_MSG_FETCH_SNAPSHOT_REQUEST, 500 + (gint32)i);
        req->node_id = 7;
        req->epoch = 2;
        req->snapshot_end_offset = cases[i].end_offset;
        req->snapshot_epoch = 2;
        req->position = cases[i].position;
        raft_msg_finish(req);
        sim_net_send(net, observer.node, leader, &req->base);
        bench_run(&b, 50 * SIM_NS_PER_MS);
        assert_int_equal(observer.inbox->len, i + 2);
        resp = g_ptr_array_index(observer.inbox, i + 1);
        assert_int_equal(resp->base.type, RAFT_MSG_FETCH_SNAPSHOT_RESPONSE);
        assert_int_equal(resp->error, cases[i].error);
        if (cases[i].error != KAFKA_ERROR_NONE)
            continue;
        assert_int_equal(resp->position, cases[i].position);
        assert_int_equal(resp->chunk_bytes, cases[i].chunk_bytes);
        assert_int_equal(resp->snapshot_size, size);
        assert_int_equal(resp->snapshot_payload, 77);
        assert_true(resp->base.size_bytes >= cases[i].chunk_bytes);
    }
    bench_clear(&b);
    g_ptr_array_unref(observer.inbox);
}

/* ---- property test: random crashes and partitions ---- */

/* Heals the network and restarts every voter that is down. */
static void
quorum_heal_all(Quorum *q)
{
    sim_net_heal(sim_world_net(q->world));
    for (guint i = 0; i < q->n; i++) {
        SimNodeId node = raft_node_sim_node(q->nodes[i]);
        if (sim_node_state(q->world, node) == SIM_NODE_DOWN)
            sim_node_restart(q->world, node);
    }
}

/* The leader appends one more record; every voter commits all of it. */
static void
check_all_commit(Quorum *q, guint64 seed, gint leader, guint64 next_value)
{
    append_values(q->nodes[leader], next_value, 1);
    run_for(q, 3 * SIM_NS_PER_S);
    gint64 leo = plog_log_end_offset(raft_node_log(q->nodes[leader]));
    for (guint i = 0; i < q->n; i++) {
        if (raft_node_high_watermark(q->nodes[i]) != leo)
            fail_msg("seed %" G_GUINT64_FORMAT ": voter %u's high watermark %" G_GINT64_FORMAT
                     " is not the leader's end %" G_GINT64_FORMAT,
                     seed, i, raft_node_high_watermark(q->nodes[i]), leo);
    }
    assert_int_equal(raft_check_committed(q->check), leo);
}

static void
random_fault(Quorum *q, SimRng *rng, guint64 *next_value, gboolean snapshots)
{
    SimNet *net = sim_world_net(q->world);
    guint victim = (guint)sim_rng_range(rng, 0, q->n);
    SimNodeId node = raft_node_sim_node(q->nodes[victim]);
    gint leader = quorum_leader(q);
    gint64 draw = sim_rng_range(rng, 0, snapshots ? 9 : 8);
    if (draw == 8) {
        /* A voter writes a snapshot at its high watermark. */
        if (sim_node_state(q->world, node) == SIM_NODE_UP &&
            raft_node_high_watermark(q->nodes[victim]) > 0)
            snapshot_at_hw(q->nodes[victim]);
        return;
    }
    switch (draw) {
    case 0:
        if (sim_node_state(q->world, node) == SIM_NODE_UP)
            sim_node_crash(q->world, node);
        break;
    case 1:
        if (sim_node_state(q->world, node) == SIM_NODE_DOWN)
            sim_node_restart(q->world, node);
        break;
    case 2: {
        guint groups[VOTERS_MAX];
        for (guint i = 0; i < q->n; i++)
            groups[i] = (guint)sim_rng_range(rng, 0, 2);
        sim_net_partition(net, groups, q->n);
        break;
    }
    case 3:
        sim_net_heal(net);
        break;
    case 4:
        if (sim_node_state(q->world, node) == SIM_NODE_UP && sim_rng_chance(rng, 1, 3)) {
            sim_node_power_loss(q->world, node);
            sim_node_restart(q->world, node);
        }
        break;

    default:
        if (leader >= 0) {
            append_values(q->nodes[leader], *next_value, 3);
            *next_value += 3;
        }
        break;
    }
}

/* Goal: over random schedules of crashes, restarts, partitions, heals and
 * appends on 3 and 5 voters, the invariants hold after every event, and once
 * every voter is up and the network healed the quorum elects a leader and
 * every voter commits everything. */
static void
test_raft_random_faults_keep_invariants(void **unused)
{
    (void)unused;
    for (guint64 seed = 1; seed <= 24; seed++) {
        guint n = seed % 2 == 0 ? 5 : 3;
        Quorum q;
        quorum_init(&q, n, seed);
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test-raft-faults");
        guint64 next_value = 1;
        for (guint step = 0; step < 120; step++) {
            random_fault(&q, rng, &next_value, FALSE);
            run_for(&q, sim_rng_range(rng, 50, 1500) * SIM_NS_PER_MS);
        }
        quorum_heal_all(&q);
        run_for(&q, 15 * SIM_NS_PER_S);
        gint leader = quorum_leader(&q);
        if (leader < 0)
            fail_msg("seed %" G_GUINT64_FORMAT ": no leader after the heal", seed);
        check_all_commit(&q, seed, leader, next_value);
        quorum_clear(&q);
    }
}

/* Goal: the same schedules with snapshots written at random on every voter,
 * small segments and a log always over metadata.max.retention.bytes (the
 * cleaner deletes what the snapshots cover, and voters that were away catch
 * up through FetchSnapshot): the invariants, the snapshots' among them, hold
 * after every event, and once a leader is elected after the heal every voter
 * commits everything. Without pre-vote (KIP-996, not modelled) a candidate
 * whose log is behind can keep the others from electing for as long as it
 * keeps standing, so a schedule may end without a leader; most do not, and
 * some voters must have caught up through a snapshot. */
static void
test_raft_random_faults_with_snapshots(void **unused)
{
    (void)unused;
    guint elected = 0;
    guint64 fetched = 0;
    for (guint64 seed = 1; seed <= 24; seed++) {
        guint n = seed % 2 == 0 ? 5 : 3;
        Quorum q;
        RaftConfig cfg;
        bounded_config(&cfg);
        quorum_init_cfg(&q, n, seed, &cfg);
        g_autoptr(SimRng) rng = sim_rng_new(seed, "test-raft-snapshot-faults");
        guint64 next_value = 1;
        for (guint step = 0; step < 120; step++) {
            random_fault(&q, rng, &next_value, TRUE);
            run_for(&q, sim_rng_range(rng, 50, 1500) * SIM_NS_PER_MS);
        }
        quorum_heal_all(&q);
        run_for(&q, 15 * SIM_NS_PER_S);
        gint leader = quorum_leader(&q);
        if (leader >= 0) {
            elected++;
            check_all_commit(&q, seed, leader, next_value);
        }
        for (guint i = 0; i < n; i++)
            fetched += raft_node_snapshots_fetched(q.nodes[i]);
        quorum_clear(&q);
    }
    assert_true(elected >= 20);
    assert_true(fetched > 0);
}

/* Goal: a broker replaying the metadata log (an observer, not a voter)
 * fetches like a follower, but its end offset commits nothing; it may not
 * vote. */
static void
test_raft_observer_fetch(void **unused)
{
    (void)unused;
    const gint32 epochs[] = {1, 1};
    Bench b;
    bench_init(&b, epochs, 2, 1);
    bench_elect(&b);
    Probe observer = {0};
    observer.inbox = g_ptr_array_new_with_free_func(msg_free_cb);
    observer.node = sim_node_add(b.world, "broker-7", &probe_ops, &observer);
    SimNodeId leader = raft_node_sim_node(b.node);
    RaftMsg *fetch = fetch_request(7, 2, 11, 2);
    raft_msg_finish(fetch);
    sim_net_send(sim_world_net(b.world), observer.node, leader, &fetch->base);
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(observer.inbox->len, 1);
    RaftMsg *resp = g_ptr_array_index(observer.inbox, 0);
    assert_int_equal(resp->error, KAFKA_ERROR_NONE);
    assert_int_equal(resp->high_watermark, -1); /* its offset 11 counts for nothing */
    assert_int_equal(raft_node_high_watermark(b.node), -1);
    /* A voter's fetch commits; the observer then learns the HW. */
    bench_send(&b, 0, fetch_request(1, 2, 11, 2));
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(raft_node_high_watermark(b.node), 11);
    fetch = fetch_request(7, 2, 0, 0);
    raft_msg_finish(fetch);
    sim_net_send(sim_world_net(b.world), observer.node, leader, &fetch->base);
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(observer.inbox->len, 2);
    resp = g_ptr_array_index(observer.inbox, 1);
    assert_int_equal(resp->high_watermark, 11);
    assert_true(resp->batches != NULL && resp->batches->len > 0);
    /* Observers do not vote. */
    RaftMsg *vote = vote_request(7, 9, 2, 11);
    raft_msg_finish(vote);
    sim_net_send(sim_world_net(b.world), observer.node, leader, &vote->base);
    bench_run(&b, 20 * SIM_NS_PER_MS);
    assert_int_equal(observer.inbox->len, 2);
    assert_int_equal(raft_node_epoch(b.node), 2);
    bench_clear(&b);
    g_ptr_array_unref(observer.inbox);
}

/* Goal: a paused voter's deadlines pass while its timers are held; right
 * after it resumes (before the held wake-up has run) its invariants still
 * hold, and it catches up after. */
static void
test_raft_pause_resume(void **unused)
{
    (void)unused;
    Quorum q;
    quorum_init(&q, 3, 11);
    run_for(&q, 5 * SIM_NS_PER_S);
    gint leader = quorum_leader(&q);
    assert_true(leader >= 0);
    guint follower = ((guint)leader + 1) % 3;
    SimNodeId node = raft_node_sim_node(q.nodes[follower]);
    sim_node_pause(q.world, node);
    run_for(&q, 4 * SIM_NS_PER_S);
    sim_node_resume(q.world, node);
    raft_node_check_invariants(q.nodes[follower]);
    run_for(&q, 5 * SIM_NS_PER_S);
    assert_true(quorum_leader(&q) >= 0);
    quorum_clear(&q);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raft_single_voter_elects_itself),
        cmocka_unit_test(test_raft_three_voters_elect_and_replicate),
        cmocka_unit_test(test_raft_leader_crash_reelects),
        cmocka_unit_test(test_raft_vote_log_up_to_date),
        cmocka_unit_test(test_raft_vote_once_per_epoch),
        cmocka_unit_test(test_raft_leader_fetch_validation),
        cmocka_unit_test(test_raft_observer_fetch),
        cmocka_unit_test(test_raft_pause_resume),
        cmocka_unit_test(test_raft_leader_parks_fetch),
        cmocka_unit_test(test_raft_zombie_leader_truncates),
        cmocka_unit_test(test_raft_snapshot_and_clean),
        cmocka_unit_test(test_raft_lagging_follower_fetches_snapshot),
        cmocka_unit_test(test_raft_restart_loads_snapshots),
        cmocka_unit_test(test_raft_observer_fetches_snapshot),
        cmocka_unit_test(test_raft_random_faults_keep_invariants),
        cmocka_unit_test(test_raft_random_faults_with_snapshots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
