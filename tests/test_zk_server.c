/*
 * Unit tests for the coordination node (zk_server) as its clients see it:
 * znode operations and versions, sequential names, sorted children, one-shot
 * watches, session expiry under partitions and pauses, server crash, power
 * loss, snapshots, the fenced multi, and a random-op property test against a
 * reference model. The client library's own behaviour (connecting, queueing,
 * connection loss, reconnects, freeing) is in test_zk_client.c. Every test
 * runs the shared harness of zk_fixture.h: a real SimWorld with one server
 * node and three client nodes, every invariant checked after every event.
 */
#include "sim_disk.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "zk_fixture.h"

/* ---- tests ---- */

typedef enum { STEP_CREATE, STEP_GET, STEP_SET, STEP_DELETE, STEP_EXISTS } StepKind;

typedef struct {
    StepKind kind;
    const char *path;
    const char *data;
    gint32 version; /* SET, DELETE: expected version; CREATE: flags */
    ZkError error;
    gint32 version_after; /* GET, SET, EXISTS: the stat version, if OK */
} CrudStep;

static void
crud_step_run(Harness *h, const CrudStep *step, Outcome *o)
{
    ZkClient *c = client_of(h, 0);
    const guint8 *data = step->data == NULL ? NULL : text(step->data);
    gsize len = step->data == NULL ? 0 : strlen(step->data);
    switch (step->kind) {
    case STEP_CREATE:
        RUN(h, o,
            zk_client_create(c, step->path, data, len, (guint32)step->version, outcome_cb, o));
        break;
    case STEP_GET:
        RUN(h, o, zk_client_get(c, step->path, FALSE, outcome_cb, o));
        break;
    case STEP_SET:
        RUN(h, o, zk_client_set(c, step->path, data, len, step->version, outcome_cb, o));
        break;
    case STEP_DELETE:
        RUN(h, o, zk_client_delete(c, step->path, step->version, outcome_cb, o));
        break;
    case STEP_EXISTS:
        RUN(h, o, zk_client_exists(c, step->path, FALSE, outcome_cb, o));
        break;
    }
}

static void
test_zk_server_crud_versions(void **state)
{
    /* Goal: create/get/set/delete obey paths, parents, versions and emptiness. */
    (void)state;
    static const CrudStep steps[] = {
        {STEP_CREATE, "/a", "x", 0, ZK_OK, 0},
        {STEP_CREATE, "/a", "x", 0, ZK_NODE_EXISTS, 0},
        {STEP_CREATE, "/missing/b", "x", 0, ZK_NO_NODE, 0},
        {STEP_CREATE, "a", "x", 0, ZK_BAD_ARGUMENTS, 0},
        {STEP_CREATE, "/a/", "x", 0, ZK_BAD_ARGUMENTS, 0},
        {STEP_CREATE, "/a/./b", "x", 0, ZK_BAD_ARGUMENTS, 0},
        {STEP_CREATE, "/", "x", 0, ZK_BAD_ARGUMENTS, 0},
        {STEP_GET, "/a", "x", 0, ZK_OK, 0},
        {STEP_SET, "/a", "y", 0, ZK_OK, 1},
        {STEP_SET, "/a", "z", 0, ZK_BAD_VERSION, 0},
        {STEP_SET, "/a", "z", ZK_VERSION_ANY, ZK_OK, 2},
        {STEP_GET, "/a", "z", 0, ZK_OK, 2},
        {STEP_SET, "/nope", "z", ZK_VERSION_ANY, ZK_NO_NODE, 0},
        {STEP_CREATE, "/a/b", "", 0, ZK_OK, 0},
        {STEP_DELETE, "/a", NULL, ZK_VERSION_ANY, ZK_NOT_EMPTY, 0},
        {STEP_DELETE, "/a/b", NULL, 5, ZK_BAD_VERSION, 0},
        {STEP_DELETE, "/a/b", NULL, 0, ZK_OK, 0},
        {STEP_DELETE, "/a", NULL, 1, ZK_BAD_VERSION, 0},
        {STEP_EXISTS, "/a", NULL, 0, ZK_OK, 2},
        {STEP_DELETE, "/a", NULL, 2, ZK_OK, 0},
        {STEP_GET, "/a", NULL, 0, ZK_NO_NODE, 0},
        {STEP_EXISTS, "/a", NULL, 0, ZK_NO_NODE, 0},
        {STEP_DELETE, "/a", NULL, ZK_VERSION_ANY, ZK_NO_NODE, 0},
        {STEP_DELETE, "/", NULL, ZK_VERSION_ANY, ZK_BAD_ARGUMENTS, 0},
        {STEP_CREATE, "/e", "eph", ZK_EPHEMERAL, ZK_OK, 0},
        {STEP_CREATE, "/e/child", "", 0, ZK_NO_CHILDREN_FOR_EPHEMERALS, 0},
    };
    Harness *h = harness_new(1);
    wait_established(h);
    Outcome o = {0};
    for (guint i = 0; i < G_N_ELEMENTS(steps); i++) {
        const CrudStep *step = &steps[i];
        crud_step_run(h, step, &o);
        assert_int_equal(o.error, step->error);
        if (o.error != ZK_OK)
            continue;
        if (step->kind == STEP_GET || step->kind == STEP_SET || step->kind == STEP_EXISTS)
            assert_int_equal(o.stat.version, step->version_after);
        if (step->kind == STEP_GET) {
            assert_int_equal(o.data->len, strlen(step->data));
            assert_memory_equal(o.data->data, step->data, o.data->len);
        }
    }
    RUN(h, &o, zk_client_get(client_of(h, 0), "/e", FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(o.stat.ephemeral_owner, zk_client_session_id(client_of(h, 0)));
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_sequential_names(void **state)
{
    /* Goal: sequential names end in the parent's child version as 10 digits. */
    (void)state;
    static const struct {
        const char *path;
        guint32 flags;
        const char *created;
    } cases[] = {
        {"/q/item-", ZK_SEQUENTIAL, "/q/item-0000000000"},
        {"/q/item-", ZK_SEQUENTIAL, "/q/item-0000000001"},
        {"/q/lock-", ZK_SEQUENTIAL | ZK_EPHEMERAL, "/q/lock-0000000002"},
        {"/q/", ZK_SEQUENTIAL, "/q/0000000003"},
    };
    Harness *h = harness_new(2);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/q", "", 0), ZK_OK);
    Outcome o = {0};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        RUN(h, &o,
            zk_client_create(client_of(h, 0), cases[i].path, NULL, 0, cases[i].flags, outcome_cb,
                             &o));
        assert_int_equal(o.error, ZK_OK);
        assert_string_equal(o.path, cases[i].created);
    }
    /* A delete bumps the child version too, so counters never repeat. */
    RUN(h, &o, zk_client_delete(client_of(h, 0), "/q/item-0000000001", -1, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    RUN(h, &o,
        zk_client_create(client_of(h, 0), "/q/item-", NULL, 0, ZK_SEQUENTIAL, outcome_cb, &o));
    assert_string_equal(o.path, "/q/item-0000000005");
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_children_sorted(void **state)
{
    /* Goal: get-children lists names sorted, with the count in the stat. */
    (void)state;
    static const char *const names[] = {"b", "c9", "a", "c10", "a1"};
    static const char *const sorted[] = {"a", "a1", "b", "c10", "c9"};
    Harness *h = harness_new(3);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/c", "", 0), ZK_OK);
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *path = g_strdup_printf("/c/%s", names[i]);
        assert_int_equal(create_text(h, i % MEMBERS, path, names[i], 0), ZK_OK);
    }
    Outcome o = {0};
    RUN(h, &o, zk_client_children(client_of(h, 1), "/c", FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(g_strv_length(o.children), G_N_ELEMENTS(sorted));
    for (guint i = 0; i < G_N_ELEMENTS(sorted); i++)
        assert_string_equal(o.children[i], sorted[i]);
    assert_int_equal(o.stat.num_children, G_N_ELEMENTS(sorted));
    RUN(h, &o, zk_client_children(client_of(h, 1), "/none", TRUE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_NO_NODE);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_data_watch_one_shot(void **state)
{
    /* Goal: data and exist watches fire once, at the watcher only, then are gone. */
    (void)state;
    Harness *h = harness_new(4);
    wait_established(h);
    Member *watcher = &h->members[1];
    assert_int_equal(create_text(h, 0, "/w", "0", 0), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_get(client_of(h, 1), "/w", TRUE, outcome_cb, &o));
    RUN(h, &o, zk_client_get(client_of(h, 2), "/w", FALSE, outcome_cb, &o));
    assert_int_equal(set_text(h, 0, "/w", "1", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeDataChanged /w"), 1);
    assert_int_equal(set_text(h, 0, "/w", "2", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeDataChanged /w"), 1);
    assert_false(has_event(&h->members[2], "watch NodeDataChanged /w"));
    assert_false(has_event(&h->members[0], "watch NodeDataChanged /w"));
    /* exists on a missing node watches for its creation. */
    RUN(h, &o, zk_client_exists(client_of(h, 1), "/x", TRUE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_NO_NODE);
    assert_int_equal(create_text(h, 0, "/x", "", 0), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeCreated /x"), 1);
    RUN(h, &o, zk_client_exists(client_of(h, 1), "/x", TRUE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    RUN(h, &o, zk_client_delete(client_of(h, 0), "/x", -1, outcome_cb, &o));
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeDeleted /x"), 1);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_child_watch_one_shot(void **state)
{
    /* Goal: a child watch fires once on a child change, not on a data change. */
    (void)state;
    Harness *h = harness_new(5);
    wait_established(h);
    Member *watcher = &h->members[1];
    assert_int_equal(create_text(h, 0, "/p", "", 0), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_children(client_of(h, 1), "/p", TRUE, outcome_cb, &o));
    assert_int_equal(set_text(h, 0, "/p", "data", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(watcher->events->len, 1); /* "established new" only */
    assert_int_equal(create_text(h, 0, "/p/a", "", 0), ZK_OK);
    assert_int_equal(create_text(h, 0, "/p/b", "", 0), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeChildrenChanged /p"), 1);
    /* Watching both data and children of a node that is deleted: one event. */
    RUN(h, &o, zk_client_children(client_of(h, 1), "/p/a", TRUE, outcome_cb, &o));
    RUN(h, &o, zk_client_get(client_of(h, 1), "/p/a", TRUE, outcome_cb, &o));
    RUN(h, &o, zk_client_delete(client_of(h, 0), "/p/a", -1, outcome_cb, &o));
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(watcher, "watch NodeDeleted /p/a"), 1);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_ephemeral_deleted_on_expiry(void **state)
{
    /* Goal: a partitioned client's session expires after its timeout, its
     * ephemeral goes and watchers hear it; the client learns after the heal. */
    (void)state;
    Harness *h = harness_new_with(6, NULL, KAFKA_TIMEOUT_NS);
    wait_established(h);
    Member *zombie = &h->members[0];
    Member *watcher = &h->members[1];
    guint64 session = zk_client_session_id(client_of(h, 0));
    assert_int_equal(create_text(h, 0, "/brokers", "", 0), ZK_OK);
    assert_int_equal(create_text(h, 0, "/brokers/0", "host0", ZK_EPHEMERAL), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_exists(client_of(h, 1), "/brokers/0", TRUE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    gint64 cut_ns = sim_now_ns(h->world);
    sim_net_isolate(sim_world_net(h->world), zombie->id);
    run_for(h, 30 * SIM_NS_PER_S);
    assert_false(zk_server_session_alive(h->server, session));
    assert_null(zk_server_znode_get(h->server, "/brokers/0", NULL));
    assert_true(has_event(watcher, "watch NodeDeleted /brokers/0"));
    /* Expiry comes a timeout after the last ping, rounded up to a 2 s tick. */
    assert_true(watcher->last_event_ns >= cut_ns + KAFKA_TIMEOUT_NS - 6 * SIM_NS_PER_S);
    assert_true(watcher->last_event_ns <= cut_ns + KAFKA_TIMEOUT_NS + 2 * SIM_NS_PER_S);
    /* The zombie still believes in its session: it cannot hear otherwise. */
    assert_true(has_event(zombie, "disconnected"));
    assert_false(has_event(zombie, "expired"));
    sim_net_heal(sim_world_net(h->world));
    run_for(h, 30 * SIM_NS_PER_S);
    assert_true(has_event(zombie, "expired"));
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_EXPIRED);
    /* As Kafka's broker: a new session, and the registration again. */
    RUN(h, &o, zk_client_get(client_of(h, 0), "/brokers", FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_SESSION_EXPIRED);
    zk_client_new_session(client_of(h, 0));
    assert_int_equal(create_text(h, 0, "/brokers/0", "host0", ZK_EPHEMERAL), ZK_OK);
    assert_true(has_event(zombie, "established new"));
    assert_int_not_equal(zk_client_session_id(client_of(h, 0)), session);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_short_partition_keeps_session(void **state)
{
    /* Goal: a partition shorter than the timeout keeps the session and its
     * ephemerals; a watch whose change was missed fires after the resume. */
    (void)state;
    static const gint64 partitions_ns[] = {2 * SIM_NS_PER_S, 4 * SIM_NS_PER_S, 8 * SIM_NS_PER_S};
    for (guint k = 0; k < G_N_ELEMENTS(partitions_ns); k++) {
        Harness *h = harness_new_with(7 + k, NULL, KAFKA_TIMEOUT_NS);
        wait_established(h);
        Member *member = &h->members[0];
        guint64 session = zk_client_session_id(client_of(h, 0));
        assert_int_equal(create_text(h, 0, "/e", "", ZK_EPHEMERAL), ZK_OK);
        assert_int_equal(create_text(h, 1, "/w", "0", 0), ZK_OK);
        Outcome o = {0};
        RUN(h, &o, zk_client_get(client_of(h, 0), "/w", TRUE, outcome_cb, &o));
        run_for(h, 3 * SIM_NS_PER_S);
        sim_net_isolate(sim_world_net(h->world), member->id);
        Outcome lost = {0};
        zk_client_get(client_of(h, 0), "/w", FALSE, outcome_cb, &lost);
        assert_int_equal(set_text(h, 1, "/w", "1", -1), ZK_OK);
        run_for(h, partitions_ns[k]);
        sim_net_heal(sim_world_net(h->world));
        run_for(h, 15 * SIM_NS_PER_S);
        assert_true(lost.done);
        assert_int_equal(lost.error, ZK_CONNECTION_LOSS);
        assert_false(has_event(member, "expired"));
        assert_true(has_event(member, "established resumed"));
        assert_int_equal(zk_client_session_id(client_of(h, 0)), session);
        assert_true(zk_server_session_alive(h->server, session));
        g_autoptr(GBytes) eph = zk_server_znode_get(h->server, "/e", NULL);
        assert_non_null(eph);
        assert_int_equal(count_events(member, "watch NodeDataChanged /w"), 1);
        outcome_reset(&o);
        outcome_reset(&lost);
        harness_free(h);
    }
}

static void
test_zk_server_paused_client_expires(void **state)
{
    /* Goal: a client paused (a GC pause) past its timeout resumes believing
     * in its session, then learns it expired: Kafka's zombie broker. */
    (void)state;
    Harness *h = harness_new(10);
    wait_established(h);
    Member *member = &h->members[0];
    assert_int_equal(create_text(h, 0, "/e", "", ZK_EPHEMERAL), ZK_OK);
    sim_node_pause(h->world, member->id);
    run_for(h, 3 * TIMEOUT_NS);
    assert_null(zk_server_znode_get(h->server, "/e", NULL));
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_CONNECTED);
    sim_node_resume(h->world, member->id);
    run_for(h, 10 * SIM_NS_PER_S);
    assert_true(has_event(member, "expired"));
    harness_free(h);
}

static void
test_zk_server_server_crash_keeps_state(void **state)
{
    /* Goal: after a server crash and restart, persistent znodes, sessions,
     * ephemerals and (re-registered) watches are all still there; while it
     * loads, it answers nothing. */
    (void)state;
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.load_delay_ns = 2 * SIM_NS_PER_S;
    Harness *h = harness_new_with(11, &cfg, TIMEOUT_NS);
    wait_established(h);
    guint64 session = zk_client_session_id(client_of(h, 0));
    assert_int_equal(create_text(h, 0, "/p", "persist", 0), ZK_OK);
    assert_int_equal(create_text(h, 0, "/e", "eph", ZK_EPHEMERAL), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_get(client_of(h, 1), "/p", TRUE, outcome_cb, &o));
    SimNodeId zk = zk_server_node(h->server);
    sim_node_crash(h->world, zk);
    run_for(h, 2 * SIM_NS_PER_S);
    assert_false(zk_server_serving(h->server));
    assert_true(has_event(&h->members[0], "disconnected"));
    /* While it is down nothing is answered. */
    RUN(h, &o, zk_client_get(client_of(h, 2), "/p", FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_CONNECTION_LOSS);
    sim_node_restart(h->world, zk);
    outcome_reset(&o);
    zk_client_get(client_of(h, 2), "/p", FALSE, outcome_cb, &o);
    run_for(h, 1500 * SIM_NS_PER_MS);
    assert_false(zk_server_serving(h->server));
    assert_true(o.done); /* the loading server refused the connection */
    assert_int_equal(o.error, ZK_CONNECTION_LOSS);
    for (guint i = 0; i < MEMBERS; i++)
        assert_int_not_equal(zk_client_state(client_of(h, i)), ZK_CLIENT_CONNECTED);
    run_for(h, 3 * SIM_NS_PER_S);
    assert_true(zk_server_serving(h->server));
    for (guint i = 0; i < MEMBERS; i++)
        assert_true(has_event(&h->members[i], "established resumed"));
    assert_int_equal(zk_client_session_id(client_of(h, 0)), session);
    assert_true(zk_server_session_alive(h->server, session));
    g_autofree char *p = server_text(h, "/p", NULL);
    g_autofree char *e = server_text(h, "/e", NULL);
    assert_string_equal(p, "persist");
    assert_string_equal(e, "eph");
    assert_int_equal(set_text(h, 0, "/p", "changed", -1), ZK_OK);
    run_for(h, SIM_NS_PER_S);
    assert_int_equal(count_events(&h->members[1], "watch NodeDataChanged /p"), 1);
    outcome_reset(&o);
    harness_free(h);
}

/* Pipelined creates /k/<i>; records which were acknowledged. */
static void
ack_cb(void *owner, const ZkResult *result, void *arg)
{
    gboolean *acked = arg;
    (void)owner;
    *acked = result->error == ZK_OK;
}

static void
power_loss_round(guint64 seed)
{
    enum { N = 40 };
    Harness *h = harness_new(seed);
    SimNodeId zk = zk_server_node(h->server);
    sim_disk_set_fsync_latency(sim_node_disk(h->world, zk),
                               (SimDist){SIM_DIST_UNIFORM, 0.5e6, 4e6});
    wait_established(h);
    guint64 session = zk_client_session_id(client_of(h, 0));
    assert_int_equal(create_text(h, 0, "/k", "", 0), ZK_OK);
    gboolean acked[N] = {0};
    for (guint i = 0; i < N; i++) {
        g_autofree char *path = g_strdup_printf("/k/%u", i);
        zk_client_create(client_of(h, i % MEMBERS), path, text("v"), 1, 0, ack_cb, &acked[i]);
    }
    SimRng *rng = sim_world_rng(h->world, "test/power");
    run_for(h, sim_rng_range(rng, 0, 8 * SIM_NS_PER_MS));
    sim_node_power_loss(h->world, zk);
    run_for(h, SIM_NS_PER_S);
    sim_node_restart(h->world, zk);
    run_for(h, 5 * SIM_NS_PER_S);
    assert_true(zk_server_serving(h->server));
    assert_true(zk_server_session_alive(h->server, session));
    for (guint i = 0; i < N; i++) {
        g_autofree char *path = g_strdup_printf("/k/%u", i);
        g_autoptr(GBytes) data = zk_server_znode_get(h->server, path, NULL);
        if (acked[i])
            assert_non_null(data);
    }
    /* The server goes on logging after the cut tail. */
    assert_int_equal(create_text(h, 0, "/after", "", 0), ZK_OK);
    sim_node_crash(h->world, zk);
    sim_node_restart(h->world, zk);
    run_for(h, 3 * SIM_NS_PER_S);
    g_autoptr(GBytes) after = zk_server_znode_get(h->server, "/after", NULL);
    assert_non_null(after);
    harness_free(h);
}

static void
test_zk_server_power_loss_keeps_acknowledged(void **state)
{
    /* Goal: every write acknowledged before a power loss survives it (the
     * server fsyncs before answering), over many seeds and torn tails. */
    (void)state;
    for (guint64 seed = 100; seed < 140; seed++)
        power_loss_round(seed);
}

typedef struct {
    const char *name;
    ZkOp second; /* after a check of /epoch */
    gint32 check_version;
    ZkError error;
    ZkError op_errors[2];
    const char *x_after; /* /x data afterwards */
    gboolean y_exists;
} MultiCase;

static void
multi_case_run(const MultiCase *mc, guint64 seed)
{
    Harness *h = harness_new(seed);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/epoch", "1", 0), ZK_OK);
    assert_int_equal(set_text(h, 0, "/epoch", "2", 0), ZK_OK); /* version 1 */
    assert_int_equal(create_text(h, 0, "/x", "x0", 0), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_get(client_of(h, 1), "/x", TRUE, outcome_cb, &o));
    const ZkOp ops[2] = {
        {.type = ZK_OP_CHECK, .path = "/epoch", .version = mc->check_version},
        mc->second,
    };
    RUN(h, &o, zk_client_multi(client_of(h, 0), ops, 2, outcome_cb, &o));
    assert_int_equal(o.error, mc->error);
    assert_int_equal(o.n_ops, 2);
    assert_int_equal(o.op_errors[0], mc->op_errors[0]);
    assert_int_equal(o.op_errors[1], mc->op_errors[1]);
    if (mc->error == ZK_OK && mc->second.type == ZK_OP_SET)
        assert_int_equal(o.version, 1);
    ZkStat stat;
    g_autofree char *x = server_text(h, "/x", &stat);
    if (mc->x_after == NULL)
        assert_null(x);
    else
        assert_string_equal(x, mc->x_after);
    if (mc->error != ZK_OK && x != NULL)
        assert_int_equal(stat.version, 0);
    g_autoptr(GBytes) y = zk_server_znode_get(h->server, "/y", NULL);
    assert_int_equal(y != NULL, mc->y_exists);
    /* A multi that applied nothing fires no watch. */
    run_for(h, SIM_NS_PER_S);
    gboolean changed = mc->error == ZK_OK && mc->second.type != ZK_OP_CREATE;
    assert_int_equal(h->members[1].events->len, changed ? 2 : 1);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_multi_check_fences(void **state)
{
    /* Goal: a multi fenced by a version check applies all of its ops or none. */
    (void)state;
    const guint8 *x1 = text("x1");
    static const ZkError ok2[2] = {ZK_OK, ZK_OK};
    const MultiCase cases[] = {
        {"check+set", {ZK_OP_SET, "/x", x1, 2, 0, 0}, 1, ZK_OK, {ok2[0], ok2[1]}, "x1", FALSE},
        {"stale check+set",
         {ZK_OP_SET, "/x", x1, 2, 0, 0},
         0,
         ZK_BAD_VERSION,
         {ZK_BAD_VERSION, ZK_RUNTIME_INCONSISTENCY},
         "x0",
         FALSE},
        {"check+create", {ZK_OP_CREATE, "/y", x1, 2, 0, 0}, 1, ZK_OK, {ZK_OK, ZK_OK}, "x0", TRUE},
        {"stale check+create",
         {ZK_OP_CREATE, "/y", x1, 2, 0, 0},
         0,
         ZK_BAD_VERSION,
         {ZK_BAD_VERSION, ZK_RUNTIME_INCONSISTENCY},
         "x0",
         FALSE},
        {"check+delete",
         {ZK_OP_DELETE, "/x", NULL, 0, 0, 0},
         1,
         ZK_OK,
         {ZK_OK, ZK_OK},
         NULL,
         FALSE},
        {"stale check+delete",
         {ZK_OP_DELETE, "/x", NULL, 0, 0, 0},
         0,
         ZK_BAD_VERSION,
         {ZK_BAD_VERSION, ZK_RUNTIME_INCONSISTENCY},
         "x0",
         FALSE},
        {"check any+set",
         {ZK_OP_SET, "/x", x1, 2, 0, 0},
         ZK_VERSION_ANY,
         ZK_OK,
         {ZK_OK, ZK_OK},
         "x1",
         FALSE},
        {"check ok+bad set",
         {ZK_OP_SET, "/x", x1, 2, 7, 0},
         1,
         ZK_BAD_VERSION,
         {ZK_RUNTIME_INCONSISTENCY, ZK_BAD_VERSION},
         "x0",
         FALSE},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
        multi_case_run(&cases[i], 20 + i);
}

static void
test_zk_server_multi_rolls_back_applied_ops(void **state)
{
    /* Goal: when a later op of a multi fails, earlier applied ops are undone. */
    (void)state;
    Harness *h = harness_new(30);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/x", "x0", 0), ZK_OK);
    guint64 zxid = zk_server_zxid(h->server);
    const ZkOp ops[] = {
        {.type = ZK_OP_SET, .path = "/x", .data = text("x1"), .len = 2, .version = -1},
        {.type = ZK_OP_CREATE, .path = "/n", .data = NULL, .len = 0},
        {.type = ZK_OP_DELETE, .path = "/x", .version = -1},
        {.type = ZK_OP_CREATE, .path = "/n", .data = NULL, .len = 0},
    };
    Outcome o = {0};
    RUN(h, &o, zk_client_multi(client_of(h, 0), ops, G_N_ELEMENTS(ops), outcome_cb, &o));
    assert_int_equal(o.error, ZK_NODE_EXISTS);
    assert_int_equal(o.op_errors[3], ZK_NODE_EXISTS);
    assert_int_equal(o.op_errors[0], ZK_RUNTIME_INCONSISTENCY);
    ZkStat stat;
    g_autofree char *x = server_text(h, "/x", &stat);
    assert_string_equal(x, "x0");
    assert_int_equal(stat.version, 0);
    assert_null(zk_server_znode_get(h->server, "/n", NULL));
    assert_int_equal(zk_server_zxid(h->server), zxid);
    /* The same ops without the duplicate create succeed together. */
    RUN(h, &o, zk_client_multi(client_of(h, 0), ops, 3, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(o.op_versions[0], 1);
    assert_null(zk_server_znode_get(h->server, "/x", NULL));
    /* The checked-write helpers report the version they wrote. */
    assert_int_equal(create_text(h, 0, "/epoch", "1", 0), ZK_OK);
    RUN(h, &o,
        zk_client_create_checked(client_of(h, 0), "/epoch", 0, "/s", "a", 1, 0, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(o.version, 0);
    RUN(h, &o,
        zk_client_set_checked(client_of(h, 0), "/epoch", 0, "/s", "b", 1, 0, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(o.version, 1);
    assert_int_equal(set_text(h, 1, "/epoch", "2", 0), ZK_OK); /* a new controller */
    RUN(h, &o,
        zk_client_set_checked(client_of(h, 0), "/epoch", 0, "/s", "c", 1, 1, outcome_cb, &o));
    assert_int_equal(o.error, ZK_BAD_VERSION);
    RUN(h, &o, zk_client_delete_checked(client_of(h, 0), "/epoch", 0, "/s", -1, outcome_cb, &o));
    assert_int_equal(o.error, ZK_BAD_VERSION);
    RUN(h, &o, zk_client_delete_checked(client_of(h, 0), "/epoch", 1, "/s", 1, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_snapshot_and_log_roll(void **state)
{
    /* Goal: snapshots bound the logs, and a restart from snapshot + logs
     * (after a crash or a power loss) restores every acknowledged change. */
    (void)state;
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.snapshot_txns = 8;
    Harness *h = harness_new_with(31, &cfg, TIMEOUT_NS);
    SimNodeId zk = zk_server_node(h->server);
    SimDisk *disk = sim_node_disk(h->world, zk);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/s", "", 0), ZK_OK);
    assert_int_equal(create_text(h, 1, "/s/eph", "", ZK_EPHEMERAL), ZK_OK);
    for (guint i = 0; i < 60; i++) {
        g_autofree char *value = g_strdup_printf("%u", i);
        assert_int_equal(set_text(h, i % MEMBERS, "/s", value, -1), ZK_OK);
    }
    assert_true(sim_disk_exists(disk, "coord/snapshot"));
    g_autoptr(GPtrArray) logs = sim_disk_list(disk, "coord/log.");
    assert_true(logs->len <= 2);
    for (guint round = 0; round < 2; round++) {
        if (round == 0)
            sim_node_crash(h->world, zk);
        else
            sim_node_power_loss(h->world, zk);
        sim_node_restart(h->world, zk);
        run_for(h, 5 * SIM_NS_PER_S);
        ZkStat stat;
        g_autofree char *value = server_text(h, "/s", &stat);
        assert_string_equal(value, "59");
        assert_int_equal(stat.version, 60);
        g_autoptr(GBytes) eph = zk_server_znode_get(h->server, "/s/eph", NULL);
        assert_non_null(eph);
    }
    harness_free(h);
}

static void
test_zk_server_close_session_deletes_ephemerals(void **state)
{
    /* Goal: closing a session deletes its ephemerals at once and fires watches. */
    (void)state;
    Harness *h = harness_new(32);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/e", "", ZK_EPHEMERAL), ZK_OK);
    Outcome o = {0};
    RUN(h, &o, zk_client_exists(client_of(h, 1), "/e", TRUE, outcome_cb, &o));
    RUN(h, &o, zk_client_close_session(client_of(h, 0), outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    assert_int_equal(zk_client_state(client_of(h, 0)), ZK_CLIENT_CLOSED);
    run_for(h, SIM_NS_PER_S);
    assert_null(zk_server_znode_get(h->server, "/e", NULL));
    assert_true(has_event(&h->members[1], "watch NodeDeleted /e"));
    assert_int_equal(zk_server_session_count(h->server), 2);
    zk_client_new_session(client_of(h, 0));
    assert_int_equal(create_text(h, 0, "/e", "", ZK_EPHEMERAL), ZK_OK);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_duplicated_messages_are_harmless(void **state)
{
    /* Goal: duplicated requests and replies (a network fault) change nothing. */
    (void)state;
    Harness *h = harness_new(34);
    wait_established(h);
    SimNet *net = sim_world_net(h->world);
    SimNodeId zk = zk_server_node(h->server);
    assert_int_equal(create_text(h, 0, "/d", "", 0), ZK_OK);
    sim_net_duplicate_next(net, h->members[0].id, zk, 4);
    sim_net_duplicate_next(net, zk, h->members[0].id, 4);
    for (guint i = 0; i < 3; i++)
        assert_int_equal(set_text(h, 0, "/d", "v", -1), ZK_OK);
    ZkStat stat;
    g_autofree char *d = server_text(h, "/d", &stat);
    assert_int_equal(stat.version, 3);
    harness_free(h);
}

/* ---- property test: random ops against a reference model ---- */

typedef struct {
    gboolean exists;
    gint32 version;
    guint32 value;
} ModelNode;

static const char *const model_paths[] = {"/a", "/b", "/a/x", "/a/y", "/b/x"};

static gint
model_parent(guint i)
{
    return i < 2 ? -1 : (i < 4 ? 0 : 1);
}

static gboolean
model_has_children(const ModelNode *model, guint i)
{
    for (guint j = 0; j < G_N_ELEMENTS(model_paths); j++) {
        if (model[j].exists && model_parent(j) == (gint)i)
            return TRUE;
    }
    return FALSE;
}

/* What the server must answer, and the model's next state. */
static ZkError
model_apply(ModelNode *model, guint op, guint i, gint32 version, guint32 value)
{
    ModelNode *node = &model[i];
    gint parent = model_parent(i);
    gboolean version_ok = version == -1 || version == node->version;
    if (op == 0) { /* create */
        if (parent >= 0 && !model[parent].exists)
            return ZK_NO_NODE;
        if (node->exists)
            return ZK_NODE_EXISTS;
        *node = (ModelNode){TRUE, 0, value};
        return ZK_OK;
    }
    if (!node->exists)
        return ZK_NO_NODE;
    if (!version_ok)
        return ZK_BAD_VERSION;
    if (op == 1) { /* set */
        node->version++;
        node->value = value;
        return ZK_OK;
    }
    if (model_has_children(model, i))
        return ZK_NOT_EMPTY;
    node->exists = FALSE;
    return ZK_OK;
}

static void
model_compare(Harness *h, const ModelNode *model)
{
    for (guint i = 0; i < G_N_ELEMENTS(model_paths); i++) {
        ZkStat stat;
        g_autofree char *value = server_text(h, model_paths[i], &stat);
        assert_int_equal(value != NULL, model[i].exists);
        if (value == NULL)
            continue;
        assert_int_equal(stat.version, model[i].version);
        assert_int_equal(g_ascii_strtoull(value, NULL, 10), model[i].value);
    }
}

static void
property_round(guint64 seed)
{
    Harness *h = harness_new(seed);
    SimRng *rng = sim_world_rng(h->world, "test/property");
    wait_established(h);
    ModelNode model[G_N_ELEMENTS(model_paths)] = {{0}};
    Outcome o = {0};
    for (guint step = 0; step < 120; step++) {
        guint op = (guint)sim_rng_range(rng, 0, 3);
        guint i = (guint)sim_rng_range(rng, 0, G_N_ELEMENTS(model_paths));
        gint32 version = (gint32)sim_rng_range(rng, -1, 3);
        guint32 value = sim_rng_u32(rng) % 1000;
        g_autofree char *data = g_strdup_printf("%u", value);
        ZkClient *c = client_of(h, (guint)sim_rng_range(rng, 0, MEMBERS));
        if (op == 0)
            RUN(h, &o,
                zk_client_create(c, model_paths[i], text(data), strlen(data), 0, outcome_cb, &o));
        else if (op == 1)
            RUN(h, &o,
                zk_client_set(c, model_paths[i], text(data), strlen(data), version, outcome_cb,
                              &o));
        else
            RUN(h, &o, zk_client_delete(c, model_paths[i], version, outcome_cb, &o));
        assert_int_equal(o.error, model_apply(model, op, i, version, value));
    }
    model_compare(h, model);
    sim_node_power_loss(h->world, zk_server_node(h->server));
    sim_node_restart(h->world, zk_server_node(h->server));
    run_for(h, 3 * SIM_NS_PER_S);
    model_compare(h, model);
    outcome_reset(&o);
    harness_free(h);
}

static void
test_zk_server_random_ops_match_model(void **state)
{
    /* Goal: random creates, sets and deletes from three clients answer as a
     * reference model predicts, and the tree survives a power loss intact. */
    (void)state;
    for (guint64 seed = 200; seed < 220; seed++)
        property_round(seed);
}

/* ---- chaos: random faults during random operations ---- */

typedef struct {
    Harness *h;
    SimRng *rng;
    GArray *acked; /* gboolean per unique create */
} Chaos;

typedef struct {
    Member *m;
    Chaos *chaos;
    guint create_index; /* a unique create's index + 1, else 0 */
} Ticket;

static void
ticket_cb(void *owner, const ZkResult *result, void *arg)
{
    Ticket *ticket = arg;
    Member *m = owner;
    assert_ptr_equal(ticket->m, m);
    if (ticket->create_index > 0 && result->error == ZK_OK)
        g_array_index(ticket->chaos->acked, gboolean, ticket->create_index - 1) = TRUE;
    /* Exactly once, and never for a request that a crash dropped. */
    assert_true(g_ptr_array_remove_fast(m->tickets, ticket));
}

static Ticket *
ticket_new(Chaos *chaos, Member *m, gboolean unique_create)
{
    Ticket *ticket = g_new0(Ticket, 1);
    ticket->m = m;
    ticket->chaos = chaos;
    if (unique_create) {
        gboolean acked = FALSE;
        g_array_append_val(chaos->acked, acked);
        ticket->create_index = chaos->acked->len;
    }
    g_ptr_array_add(m->tickets, ticket);
    return ticket;
}

static void
chaos_op(Chaos *chaos, Member *m)
{
    static const char *const paths[] = {"/x/0", "/x/1", "/x/2", "/x/0/a", "/x/1/a"};
    SimRng *rng = chaos->rng;
    ZkClient *c = m->client;
    const char *path = paths[sim_rng_range(rng, 0, G_N_ELEMENTS(paths))];
    gint32 version = (gint32)sim_rng_range(rng, -1, 3);
    guint32 flags = sim_rng_chance(rng, 1, 3) ? ZK_EPHEMERAL : 0;
    switch (sim_rng_range(rng, 0, 7)) {
    case 0: {
        g_autofree char *unique = g_strdup_printf("/u/%u", chaos->acked->len);
        zk_client_create(c, unique, "u", 1, 0, ticket_cb, ticket_new(chaos, m, TRUE));
        break;
    }
    case 1:
        zk_client_create(c, path, "c", 1, flags, ticket_cb, ticket_new(chaos, m, FALSE));
        break;
    case 2:
        zk_client_set(c, path, "s", 1, version, ticket_cb, ticket_new(chaos, m, FALSE));
        break;
    case 3:
        zk_client_delete(c, path, version, ticket_cb, ticket_new(chaos, m, FALSE));
        break;
    case 4:
        zk_client_get(c, path, TRUE, ticket_cb, ticket_new(chaos, m, FALSE));
        break;
    case 5:
        zk_client_children(c, "/x", TRUE, ticket_cb, ticket_new(chaos, m, FALSE));
        break;
    default:
        zk_client_set_checked(c, "/x/0", version, path, "m", 1, -1, ticket_cb,
                              ticket_new(chaos, m, FALSE));
        break;
    }
}

/* One random fault (or repair) on a random node or link. */
static void
chaos_fault(Chaos *chaos)
{
    Harness *h = chaos->h;
    SimNet *net = sim_world_net(h->world);
    SimNodeId zk = zk_server_node(h->server);
    Member *m = &h->members[sim_rng_range(chaos->rng, 0, MEMBERS)];
    SimNodeId node = sim_rng_chance(chaos->rng, 1, 4) ? zk : m->id;
    SimDisk *disk = sim_node_disk(h->world, zk);
    switch (sim_rng_range(chaos->rng, 0, 12)) {
    case 0:
        sim_net_isolate(net, node);
        break;
    case 10:
        sim_disk_set_slow(disk, sim_rng_chance(chaos->rng, 1, 2) ? 1.0 : 2000.0);
        break;
    case 11:
        sim_disk_set_full(disk, sim_rng_chance(chaos->rng, 1, 2));
        break;
    case 1:
    case 2:
        sim_net_heal(net);
        break;
    case 3:
        sim_node_crash(h->world, node);
        break;
    case 4:
        sim_node_power_loss(h->world, node);
        break;
    case 5:
    case 6:
        sim_node_restart(h->world, node);
        break;
    case 7:
        if (sim_node_state(h->world, node) == SIM_NODE_PAUSED)
            sim_node_resume(h->world, node);
        else
            sim_node_pause(h->world, node);
        break;
    case 8:
        sim_net_lose_next(net, m->id, zk, 1);
        sim_net_lose_next(net, zk, m->id, 1);
        break;
    default:
        sim_net_duplicate_next(net, m->id, zk, 2);
        sim_net_duplicate_next(net, zk, m->id, 2);
        break;
    }
}

/* Heals everything and lets the cluster settle. */
static void
chaos_settle(Chaos *chaos)
{
    Harness *h = chaos->h;
    SimDisk *disk = sim_node_disk(h->world, zk_server_node(h->server));
    sim_disk_set_slow(disk, 1.0);
    sim_disk_set_full(disk, FALSE);
    sim_net_heal(sim_world_net(h->world));
    for (SimNodeId node = 0; node < sim_world_node_count(h->world); node++) {
        sim_node_resume(h->world, node);
        sim_node_restart(h->world, node);
    }
    run_for(h, 60 * SIM_NS_PER_S);
}

static void
chaos_round(guint64 seed)
{
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.snapshot_txns = 6;
    Harness *h = harness_new_with(seed, &cfg, TIMEOUT_NS);
    Chaos chaos = {h, sim_world_rng(h->world, "test/chaos"),
                   g_array_new(FALSE, TRUE, sizeof(gboolean))};
    for (guint i = 0; i < MEMBERS; i++)
        h->members[i].renew = TRUE;
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/x", "", 0), ZK_OK);
    assert_int_equal(create_text(h, 0, "/u", "", 0), ZK_OK);
    for (guint step = 0; step < 300; step++) {
        if (sim_rng_chance(chaos.rng, 1, 12))
            chaos_fault(&chaos);
        Member *m = &h->members[sim_rng_range(chaos.rng, 0, MEMBERS)];
        if (m->client != NULL && sim_node_state(h->world, m->id) == SIM_NODE_UP)
            chaos_op(&chaos, m);
        run_for(h, sim_rng_range(chaos.rng, 0, 400 * SIM_NS_PER_MS));
    }
    chaos_settle(&chaos);
    for (guint i = 0; i < MEMBERS; i++) {
        assert_int_equal(h->members[i].tickets->len, 0);
        assert_int_equal(zk_client_state(client_of(h, i)), ZK_CLIENT_CONNECTED);
        g_autofree char *path = g_strdup_printf("/final-%u", i);
        assert_int_equal(create_text(h, i, path, "", ZK_EPHEMERAL), ZK_OK);
    }
    for (guint i = 0; i < chaos.acked->len; i++) {
        g_autofree char *path = g_strdup_printf("/u/%u", i);
        g_autoptr(GBytes) data = zk_server_znode_get(h->server, path, NULL);
        if (g_array_index(chaos.acked, gboolean, i))
            assert_non_null(data);
    }
    g_array_free(chaos.acked, TRUE);
    harness_free(h);
}

static void
test_zk_server_chaos_converges(void **state)
{
    /* Goal: under random partitions, crashes, power losses, pauses, lost and
     * duplicated messages, slow and full disks, every request completes exactly
     * once (or is dropped by its client's crash), acknowledged
     * creates survive, and every client ends with a live session. */
    (void)state;
    for (guint64 seed = 300; seed < 340; seed++)
        chaos_round(seed);
}

static guint64
fingerprint_run(guint64 seed)
{
    Harness *h = harness_new_with(seed, NULL, TIMEOUT_NS);
    wait_established(h);
    assert_int_equal(create_text(h, 0, "/f", "", ZK_EPHEMERAL), ZK_OK);
    sim_net_isolate(sim_world_net(h->world), h->members[0].id);
    run_for(h, 20 * SIM_NS_PER_S);
    sim_net_heal(sim_world_net(h->world));
    sim_node_crash(h->world, zk_server_node(h->server));
    run_for(h, SIM_NS_PER_S);
    sim_node_restart(h->world, zk_server_node(h->server));
    run_for(h, 20 * SIM_NS_PER_S);
    guint64 fingerprint = sim_trace_fingerprint(sim_world_trace(h->world));
    harness_free(h);
    return fingerprint;
}

static void
test_zk_server_deterministic(void **state)
{
    /* Goal: the same seed gives the same trace, expiry, crash and all. */
    (void)state;
    assert_int_equal(fingerprint_run(40), fingerprint_run(40));
    assert_int_not_equal(fingerprint_run(40), fingerprint_run(41));
}

/* The time from submitting a GET of `path` from member 0 to its answer. */
static gint64
timed_get(Harness *h, const char *path)
{
    Outcome o = {0};
    gint64 start = sim_now_ns(h->world);
    RUN(h, &o, zk_client_get(client_of(h, 0), path, FALSE, outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    outcome_reset(&o);
    return sim_now_ns(h->world) - start;
}

static void
test_zk_server_service_time_grows_with_bytes(void **state)
{
    /* Goal: a read costs the server request_ns plus byte_ns per byte of the
     * znode's data: 2,000 more bytes read take 2,000 * byte_ns longer. */
    (void)state;
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.request_ns = SIM_NS_PER_MS;
    cfg.byte_ns = SIM_NS_PER_US;
    Harness *h = harness_new_with(60, &cfg, TIMEOUT_NS);
    wait_established(h);
    g_autofree char *big = g_strnfill(2001, 'x');
    Outcome o = {0};
    RUN(h, &o, zk_client_create(client_of(h, 0), "/aaaa", text("x"), 1, 0, outcome_cb, &o));
    RUN(h, &o, zk_client_create(client_of(h, 0), "/bbbb", text(big), 2001, 0, outcome_cb, &o));
    outcome_reset(&o);
    gint64 small = timed_get(h, "/aaaa");
    gint64 large = timed_get(h, "/bbbb");
    assert_true(small > SIM_NS_PER_MS + 2 * 500 * SIM_NS_PER_US); /* round trip and service */
    assert_int_equal(large - small, 2000 * SIM_NS_PER_US);
    harness_free(h);
}

static void
test_zk_server_serves_one_request_at_a_time(void **state)
{
    /* Goal: pipelined requests are served one after another in arrival
     * order, so the fifth answer comes four service times after the first. */
    (void)state;
    ZkServerConfig cfg;
    zk_server_config_init(&cfg);
    cfg.request_ns = SIM_NS_PER_MS;
    cfg.byte_ns = 0;
    Harness *h = harness_new_with(61, &cfg, TIMEOUT_NS);
    wait_established(h);
    Outcome o[5] = {{0}};
    gint64 start = sim_now_ns(h->world);
    for (guint i = 0; i < 5; i++)
        zk_client_exists(client_of(h, 0), "/", FALSE, outcome_cb, &o[i]);
    wait_done(h, &o[0]);
    gint64 first = sim_now_ns(h->world) - start;
    wait_done(h, &o[4]);
    gint64 fifth = sim_now_ns(h->world) - start;
    assert_int_equal(first, SIM_NS_PER_MS + 2 * 500 * SIM_NS_PER_US);
    assert_int_equal(fifth - first, 4 * SIM_NS_PER_MS);
    for (guint i = 0; i < 5; i++) {
        assert_true(o[i].done);
        outcome_reset(&o[i]);
    }
    harness_free(h);
}

typedef struct {
    guint count;
    char path[64];
    char data[16];
    gint64 time_ns;
    SimWorld *world;
} Ended;

static void
ended_cb(void *user_data, const char *path, GBytes *data)
{
    Ended *ended = user_data;
    ended->count++;
    g_strlcpy(ended->path, path, sizeof ended->path);
    gsize len = 0;
    const char *bytes = g_bytes_get_data(data, &len);
    g_strlcpy(ended->data, bytes, MIN(len + 1, sizeof ended->data));
    ended->time_ns = sim_now_ns(ended->world);
}

static void
test_zk_server_ephemeral_listener_hears_session_end(void **state)
{
    /* Goal: the listener hears of each ephemeral a session's end deletes,
     * with its data, when the session ends; persistent znodes are not named. */
    (void)state;
    Harness *h = harness_new(62);
    Ended ended = {0};
    ended.world = h->world;
    zk_server_set_ephemeral_listener(h->server, ended_cb, &ended);
    wait_established(h);
    Outcome o = {0};
    RUN(h, &o, zk_client_create(client_of(h, 1), "/controller", text("2"), 1, ZK_EPHEMERAL,
                                outcome_cb, &o));
    RUN(h, &o, zk_client_create(client_of(h, 1), "/kept", text("k"), 1, 0, outcome_cb, &o));
    RUN(h, &o, zk_client_close_session(client_of(h, 1), outcome_cb, &o));
    assert_int_equal(o.error, ZK_OK);
    outcome_reset(&o);
    assert_int_equal(ended.count, 1);
    assert_string_equal(ended.path, "/controller");
    assert_string_equal(ended.data, "2");
    assert_true(ended.time_ns < sim_now_ns(h->world));
    harness_free(h);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zk_server_crud_versions),
        cmocka_unit_test(test_zk_server_service_time_grows_with_bytes),
        cmocka_unit_test(test_zk_server_serves_one_request_at_a_time),
        cmocka_unit_test(test_zk_server_ephemeral_listener_hears_session_end),
        cmocka_unit_test(test_zk_server_sequential_names),
        cmocka_unit_test(test_zk_server_children_sorted),
        cmocka_unit_test(test_zk_server_data_watch_one_shot),
        cmocka_unit_test(test_zk_server_child_watch_one_shot),
        cmocka_unit_test(test_zk_server_ephemeral_deleted_on_expiry),
        cmocka_unit_test(test_zk_server_short_partition_keeps_session),
        cmocka_unit_test(test_zk_server_paused_client_expires),
        cmocka_unit_test(test_zk_server_server_crash_keeps_state),
        cmocka_unit_test(test_zk_server_power_loss_keeps_acknowledged),
        cmocka_unit_test(test_zk_server_multi_check_fences),
        cmocka_unit_test(test_zk_server_multi_rolls_back_applied_ops),
        cmocka_unit_test(test_zk_server_snapshot_and_log_roll),
        cmocka_unit_test(test_zk_server_close_session_deletes_ephemerals),
        cmocka_unit_test(test_zk_server_duplicated_messages_are_harmless),
        cmocka_unit_test(test_zk_server_random_ops_match_model),
        cmocka_unit_test(test_zk_server_chaos_converges),
        cmocka_unit_test(test_zk_server_deterministic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
