/*
 * KIP-848 consumer group tests: the coordinator's ConsumerGroupHeartbeat
 * state machine (group_coord_consumer.c) driven by a raw client (the probe:
 * join, target assignment, revocation before reassignment, fencing by
 * member epoch, offset commits by member epoch, leave, session expiry), and
 * real consumers with group.protocol=consumer (consumer_membership.c)
 * reconciling as members join and crash, on a simulated three-broker
 * cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "cluster.h"
#include "config_fixture.h"
#include "consumer.h"
#include "group_coord.h"
#include "history.h"
#include "probe_fixture.h"
#include "producer.h"
#include "sim_disk.h"
#include "sim_net.h"
#include "sim_world.h"

#include <string.h>

#define TOPIC "orders"
#define GROUP "kip848"
#define PRODUCER_PROCESS 1
#define CONSUMER_PROCESS 10
#define MEMBERS_MAX 4
#define SESSION_MS 6000
#define HEARTBEAT_MS 1000

typedef struct {
    SimWorld *world;
    History *history;
    Cluster *cluster;
    Producer *producer;
    Consumer *consumers[MEMBERS_MAX];
    guint n_consumers;
    guint64 counter;
} Fixture;

static void
check_after_event(SimWorld *world, void *user_data)
{
    Fixture *f = user_data;
    (void)world;
    cluster_check_invariants(f->cluster);
    for (guint i = 0; i < f->n_consumers; i++)
        consumer_check_invariants(f->consumers[i]);
}

static void
run_for(Fixture *f, gint64 ns)
{
    sim_world_run_until(f->world, sim_now_ns(f->world) + ns);
}

static Fixture *
fixture_new_config(guint64 seed, guint partitions, const ClusterConfig *base)
{
    Fixture *f = g_new0(Fixture, 1);
    f->world = sim_world_new(seed);
    f->history = history_new();
    ClusterConfig config = *base;
    config.broker.zookeeper_session_timeout_ms = 6000;
    config.broker.offsets_topic_num_partitions = 3;
    config.broker.group_consumer_session_timeout_ms = SESSION_MS;
    config.broker.group_consumer_heartbeat_interval_ms = HEARTBEAT_MS;
    f->cluster = cluster_new(f->world, &config, f->history);
    sim_world_set_after_event(f->world, check_after_event, f);
    GError *error = NULL;
    assert_true(cluster_create_topic(f->cluster, TOPIC, partitions, 3, NULL, &error));
    assert_true(cluster_wait_settled(f->cluster, 20 * SIM_NS_PER_S));
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    ProducerConfig producer_config;
    kconfig_bind_producer_defaults(&producer_config);
    producer_config.acks = -1;
    f->producer = producer_new(f->world, "producer", PRODUCER_PROCESS, bootstrap, &producer_config,
                               f->history);
    run_for(f, 1 * SIM_NS_PER_S);
    return f;
}

static Fixture *
fixture_new(guint64 seed, guint partitions)
{
    ClusterConfig config;
    fixture_cluster_config(&config);
    return fixture_new_config(seed, partitions, &config);
}

static void
fixture_free(Fixture *f)
{
    for (guint i = 0; i < f->n_consumers; i++)
        consumer_free(f->consumers[i]);
    producer_free(f->producer);
    cluster_free(f->cluster);
    sim_world_free(f->world);
    history_free(f->history);
    g_free(f);
}

/* ---- the probe: a raw ConsumerGroupHeartbeat client ---- */

typedef struct {
    Probe probe; /* first: the read callback gets it */
    SimNodeId coordinator;
    char member_id[KAFKA_MEMBER_ID_MAX + 1];
    gint32 member_epoch;
    GArray *assignment; /* KTopicPartition, of the last heartbeat answer */
} Client;

static gboolean
read_answer(Probe *probe, const SimMsg *msg)
{
    Client *c = (Client *)probe;
    switch (msg->type) {
    case KMSG_FIND_COORDINATOR_RESPONSE: {
        const KFindCoordinatorResponse *r = (const KFindCoordinatorResponse *)msg;
        probe->error = r->error;
        c->coordinator = r->node;
        return TRUE;
    }
    case KMSG_CONSUMER_GROUP_HEARTBEAT_RESPONSE: {
        const KConsumerHeartbeatResponse *r = (const KConsumerHeartbeatResponse *)msg;
        probe->error = r->error;
        g_strlcpy(c->member_id, r->member_id, sizeof c->member_id);
        c->member_epoch = r->member_epoch;
        g_array_set_size(c->assignment, 0);
        g_array_append_vals(c->assignment, r->assignment->data, r->assignment->len);
        assert_int_equal(r->heartbeat_interval_ms, HEARTBEAT_MS);
        return TRUE;
    }
    case KMSG_OFFSET_COMMIT_RESPONSE: {
        const KOffsetMessage *r = (const KOffsetMessage *)msg;
        probe->error = r->error != KAFKA_ERROR_NONE
                           ? r->error
                           : g_array_index(r->partitions, KOffsetPartition, 0).error;
        return TRUE;
    }
    default:
        return FALSE;
    }
}

/* FindCoordinator (which creates __consumer_offsets) until it is led. */
static void
client_find_coordinator(Client *c, Fixture *f)
{
    for (guint attempt = 0; attempt < 100; attempt++) {
        KFindCoordinatorRequest *request = kproto_new(KMSG_FIND_COORDINATOR_REQUEST);
        request->correlation_id = probe_correlation_next(&c->probe);
        g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
        request->key_type = KAFKA_COORDINATOR_GROUP;
        Broker *any = cluster_broker(f->cluster, 1);
        if (probe_request(&c->probe, f->world, broker_node(any), &request->base, SIM_NS_PER_MS) ==
            KAFKA_ERROR_NONE)
            break;
        run_for(f, 200 * SIM_NS_PER_MS);
    }
    assert_int_equal(c->probe.error, KAFKA_ERROR_NONE);
    run_for(f, 2 * SIM_NS_PER_S); /* the offsets partition loaded */
}

static void
client_init(Client *c, Fixture *f)
{
    probe_init(&c->probe, f->world, read_answer);
    c->assignment = g_array_new(FALSE, FALSE, sizeof(KTopicPartition));
    client_find_coordinator(c, f);
}

static void
client_clear(Client *c)
{
    g_array_free(c->assignment, TRUE);
}

/* A heartbeat of member `member_id` at `epoch` owning partitions `owned`
 * (-1 ends the list; NULL: none). */
static SimMsg *
heartbeat_request(Client *c, const char *member_id, gint32 epoch, const gint32 *owned)
{
    KConsumerHeartbeatRequest *request = kproto_new(KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST);
    request->correlation_id = probe_correlation_next(&c->probe);
    g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
    g_strlcpy(request->member_id, member_id, sizeof request->member_id);
    g_strlcpy(request->client_id, "probe", sizeof request->client_id);
    request->member_epoch = epoch;
    request->rebalance_timeout_ms = 300000;
    request->server_assignor = -1;
    KTopicName name;
    KPROTO_SET_ID(name.name, TOPIC);
    g_array_append_val(request->topics, name);
    for (guint i = 0; owned != NULL && owned[i] >= 0; i++) {
        KTopicPartition tp;
        ktp_set(&tp, TOPIC, owned[i]);
        g_array_append_val(request->owned, tp);
    }
    kproto_update_size(&request->base);
    return &request->base;
}

/* One heartbeat (see heartbeat_request), answered; returns the error. */
static KafkaError
heartbeat(Client *c, Fixture *f, const char *member_id, gint32 epoch, const gint32 *owned)
{
    return probe_request(&c->probe, f->world, c->coordinator,
                         heartbeat_request(c, member_id, epoch, owned), SIM_NS_PER_MS);
}

/* The partitions of the last answer, as "0,1,2". */
static char *
assigned(const Client *c)
{
    GString *out = g_string_new(NULL);
    for (guint i = 0; i < c->assignment->len; i++)
        g_string_append_printf(out, "%s%d", i ? "," : "",
                               g_array_index(c->assignment, KTopicPartition, i).partition);
    return g_string_free(out, FALSE);
}

static void
assert_assigned(const Client *c, const char *expected)
{
    g_autofree char *got = assigned(c);
    assert_string_equal(got, expected);
}

static KafkaError
commit(Client *c, Fixture *f, const char *member_id, gint32 epoch)
{
    KOffsetMessage *request = kproto_new(KMSG_OFFSET_COMMIT_REQUEST);
    request->correlation_id = probe_correlation_next(&c->probe);
    g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
    g_strlcpy(request->member_id, member_id, sizeof request->member_id);
    request->generation_id = epoch;
    KOffsetPartition entry = {.offset = 1, .error = KAFKA_ERROR_NONE};
    ktp_set(&entry.tp, TOPIC, 0);
    g_array_append_val(request->partitions, entry);
    kproto_update_size(&request->base);
    return probe_request(&c->probe, f->world, c->coordinator, &request->base, SIM_NS_PER_MS);
}

/* ---- the coordinator's state machine ---- */

/* A join gets epoch 1 and every partition; a second member's join bumps the
 * group epoch, but it gets the moved partition only after the first member
 * reported it revoked (CurrentAssignmentBuilder's UNREVOKED_PARTITIONS and
 * UNRELEASED_PARTITIONS); then both are at the target epoch. */
static void
test_consumer_group_revocation_before_reassignment(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(31, 3);
    Client c;
    client_init(&c, f);
    static const gint32 none[] = {-1}, all[] = {0, 1, 2, -1}, kept[] = {0, 1, -1},
                        moved[] = {2, -1};
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *a = g_strdup(c.member_id);
    assert_int_equal(c.member_epoch, 1);
    assert_assigned(&c, "0,1,2");
    /* B joins: group epoch 2; its target (partition 2) is still A's. */
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *b = g_strdup(c.member_id);
    assert_true(strcmp(a, b) < 0);
    assert_int_equal(c.member_epoch, 2);
    assert_assigned(&c, "");
    /* A is asked to revoke 2: its epoch stays, its assignment shrinks. */
    assert_int_equal(heartbeat(&c, f, a, 1, all), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, 1);
    assert_assigned(&c, "0,1");
    /* A still owns 2 (its heartbeat says so): B does not get it. */
    assert_int_equal(heartbeat(&c, f, a, 1, all), KAFKA_ERROR_NONE);
    assert_int_equal(heartbeat(&c, f, b, 2, none), KAFKA_ERROR_NONE);
    assert_assigned(&c, "");
    /* A reports 2 revoked: it reaches epoch 2, and 2 is B's. */
    assert_int_equal(heartbeat(&c, f, a, 1, kept), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, 2);
    assert_assigned(&c, "0,1");
    assert_int_equal(heartbeat(&c, f, b, 2, none), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, 2);
    assert_assigned(&c, "2");
    assert_int_equal(heartbeat(&c, f, b, 2, moved), KAFKA_ERROR_NONE);
    assert_assigned(&c, "2");
    client_clear(&c);
    fixture_free(f);
}

/* Member epochs fence: a heartbeat above the member's epoch, or below it
 * other than its previous epoch with a subset of its partitions, gets
 * FENCED_MEMBER_EPOCH; an unknown member UNKNOWN_MEMBER_ID. Commits are
 * validated by member epoch (STALE_MEMBER_EPOCH). A leave (-1) removes the
 * member; a member silent for group.consumer.session.timeout.ms is removed
 * too; an assignor the brokers do not list is refused. */
static void
test_consumer_group_fencing_leave_and_session(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(32, 3);
    Client c;
    client_init(&c, f);
    static const gint32 none[] = {-1}, all[] = {0, 1, 2, -1}, kept[] = {0, 1, -1};
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *a = g_strdup(c.member_id);
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *b = g_strdup(c.member_id);
    assert_int_equal(heartbeat(&c, f, a, 1, all), KAFKA_ERROR_NONE);
    assert_int_equal(heartbeat(&c, f, a, 1, kept), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, 2);
    /* Epochs. */
    assert_int_equal(heartbeat(&c, f, a, 3, kept), KAFKA_ERROR_FENCED_MEMBER_EPOCH);
    assert_int_equal(heartbeat(&c, f, a, 1, kept), KAFKA_ERROR_NONE); /* a lost answer */
    assert_int_equal(heartbeat(&c, f, a, 1, all), KAFKA_ERROR_FENCED_MEMBER_EPOCH);
    assert_int_equal(heartbeat(&c, f, "nobody", 2, none), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    /* Commits. */
    assert_int_equal(commit(&c, f, a, 2), KAFKA_ERROR_NONE);
    assert_int_equal(commit(&c, f, a, 1), KAFKA_ERROR_STALE_MEMBER_EPOCH);
    assert_int_equal(commit(&c, f, "nobody", 2), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    /* B leaves; A gets everything at the next epoch. */
    assert_int_equal(heartbeat(&c, f, b, -1, none), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, -1);
    assert_int_equal(heartbeat(&c, f, b, 2, none), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    assert_int_equal(heartbeat(&c, f, a, 2, kept), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, 3);
    assert_assigned(&c, "0,1,2");
    /* An assignor the brokers do not list. */
    KConsumerHeartbeatRequest *request = kproto_new(KMSG_CONSUMER_GROUP_HEARTBEAT_REQUEST);
    request->correlation_id = probe_correlation_next(&c.probe);
    g_strlcpy(request->group_id, GROUP, sizeof request->group_id);
    request->rebalance_timeout_ms = 1000;
    request->server_assignor = 7;
    KTopicName name;
    KPROTO_SET_ID(name.name, TOPIC);
    g_array_append_val(request->topics, name);
    assert_int_equal(
        probe_request(&c.probe, f->world, c.coordinator, &request->base, SIM_NS_PER_MS),
        KAFKA_ERROR_UNSUPPORTED_ASSIGNOR);
    /* A goes silent: fenced after the session timeout. */
    GroupCoordInfo info;
    run_for(f, (SESSION_MS - 500) * SIM_NS_PER_MS);
    Broker *coordinator = NULL;
    for (gint32 id = 1; id <= 3; id++) {
        group_coord_describe(cluster_broker(f->cluster, id), GROUP, &info);
        if (info.exists)
            coordinator = cluster_broker(f->cluster, id);
    }
    assert_non_null(coordinator);
    group_coord_describe(coordinator, GROUP, &info);
    assert_true(info.consumer_protocol);
    assert_int_equal(info.members, 1);
    run_for(f, 1000 * SIM_NS_PER_MS);
    group_coord_describe(coordinator, GROUP, &info);
    assert_int_equal(info.members, 0);
    assert_int_equal(heartbeat(&c, f, a, 3, none), KAFKA_ERROR_UNKNOWN_MEMBER_ID);
    client_clear(&c);
    fixture_free(f);
}

/* The broker whose node is `node`. */
static Broker *
broker_at(const Fixture *f, SimNodeId node)
{
    for (gint32 id = 1; id <= 3; id++) {
        if (broker_node(cluster_broker(f->cluster, id)) == node)
            return cluster_broker(f->cluster, id);
    }
    fail_msg("no broker at node %u", (guint)node);
    return NULL;
}

/* The group is stored in __consumer_offsets (its epochs, members and
 * assignments, as Kafka 4's records of it): when the coordinator moves, the
 * new one loads it, so a member goes on in its epoch and its commits count,
 * an older epoch stays stale, and a member that joins later gets the next
 * epoch: none is given twice. */
static void
test_consumer_group_epoch_survives_coordinator_move(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(34, 3);
    Client c;
    client_init(&c, f);
    static const gint32 none[] = {-1};
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *old = g_strdup(c.member_id);
    gint32 old_epoch = c.member_epoch;
    assert_int_equal(old_epoch, 3);
    run_for(f, 500 * SIM_NS_PER_MS); /* the epoch records replicated */
    Broker *coordinator = broker_at(f, c.coordinator);
    sim_node_crash(f->world, broker_node(coordinator));
    run_for(f, 10 * SIM_NS_PER_S);
    SimNodeId before = c.coordinator;
    client_find_coordinator(&c, f);
    assert_true(c.coordinator != before);
    assert_int_equal(heartbeat(&c, f, old, old_epoch, none), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, old_epoch);
    assert_int_equal(commit(&c, f, old, old_epoch), KAFKA_ERROR_NONE);
    assert_int_equal(commit(&c, f, old, old_epoch - 1), KAFKA_ERROR_STALE_MEMBER_EPOCH);
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    assert_int_equal(c.member_epoch, old_epoch + 1);
    client_clear(&c);
    fixture_free(f);
}

/* A heartbeat that changes the group is answered once the group's record
 * is replicated (Kafka's CoordinatorRuntime), later than one that changes
 * nothing; when the record cannot be stored (min.insync.replicas = 3 with a
 * follower of the offsets partition down: NOT_ENOUGH_REPLICAS), the join is
 * answered COORDINATOR_NOT_AVAILABLE. */
static void
test_consumer_group_heartbeat_waits_for_its_record(void **unused)
{
    (void)unused;
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.min_insync_replicas = 3;
    config.broker.replica_lag_time_max_ms = 1000;
    Fixture *f = fixture_new_config(36, 3, &config);
    Client c;
    client_init(&c, f);
    static const gint32 none[] = {-1}, all[] = {0, 1, 2, -1};
    gint64 start = sim_now_ns(f->world);
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    gint64 join_ns = sim_now_ns(f->world) - start;
    g_autofree char *a = g_strdup(c.member_id);
    start = sim_now_ns(f->world);
    assert_int_equal(heartbeat(&c, f, a, c.member_epoch, all), KAFKA_ERROR_NONE);
    gint64 quiet_ns = sim_now_ns(f->world) - start;
    assert_true(join_ns > quiet_ns);

    /* A follower, and not broker 1, which a client's FindCoordinator asks. */
    Broker *follower = NULL;
    for (gint32 id = 3; id >= 2 && follower == NULL; id--) {
        if (broker_node(cluster_broker(f->cluster, id)) != c.coordinator)
            follower = cluster_broker(f->cluster, id);
    }
    sim_node_crash(f->world, broker_node(follower));
    run_for(f, 3 * SIM_NS_PER_S); /* the ISR shrinks without it */
    Client d;
    client_init(&d, f);
    assert_int_equal(d.coordinator, c.coordinator);
    assert_int_equal(heartbeat(&d, f, "", 0, none), KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    /* The failed write's state is reverted (Kafka's CoordinatorRuntime): no
     * member joined, the group epoch did not move. */
    GroupCoordInfo info;
    group_coord_describe(broker_at(f, c.coordinator), GROUP, &info);
    assert_int_equal(info.members, 1);
    assert_int_equal(info.generation, c.member_epoch);
    client_clear(&d);
    client_clear(&c);
    fixture_free(f);
}

/* Sends one heartbeat owning nothing, without waiting for its answer. */
static void
heartbeat_send(Client *c, Fixture *f, const char *member_id, gint32 epoch)
{
    sim_net_send(sim_world_net(f->world), c->probe.node, c->coordinator,
                 heartbeat_request(c, member_id, epoch, NULL));
}

/* A follower of the group's offsets partition (not broker 1, which
 * FindCoordinator asks) of `c`'s coordinator. */
static Broker *
offsets_follower(const Fixture *f, const Client *c)
{
    for (gint32 id = 3; id >= 2; id--) {
        if (broker_node(cluster_broker(f->cluster, id)) != c->coordinator)
            return cluster_broker(f->cluster, id);
    }
    fail_msg("no follower");
    return NULL;
}

/* A write the append refuses at once (a failed disk) while an earlier one
 * still waits for its replicas: the refused join is reverted and the earlier
 * write still waited for (invariant 7, checked after every event; the
 * refusal used to drop the wait); the join is never answered NONE. */
static void
test_consumer_group_refused_write_behind_a_waiting_one(void **unused)
{
    (void)unused;
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.replica_lag_time_max_ms = 1000;
    Fixture *f = fixture_new_config(36, 3, &config);
    Client c, d, e;
    client_init(&c, f);
    client_init(&d, f);
    client_init(&e, f);
    static const gint32 none[] = {-1}, all[] = {0, 1, 2, -1};
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *a = g_strdup(c.member_id);
    assert_int_equal(heartbeat(&c, f, a, c.member_epoch, all), KAFKA_ERROR_NONE);
    sim_node_crash(f->world, broker_node(offsets_follower(f, &c)));
    guint d_before = d.probe.responses, e_before = e.probe.responses;
    heartbeat_send(&d, f, "", 0); /* its write waits for the dead follower */
    run_for(f, 100 * SIM_NS_PER_MS);
    assert_int_equal(d.probe.responses, d_before);
    GroupCoordInfo info;
    group_coord_describe(broker_at(f, c.coordinator), GROUP, &info);
    assert_int_equal(info.members, 2);
    sim_disk_set_io_error(sim_node_disk(f->world, c.coordinator), TRUE);
    heartbeat_send(&e, f, "", 0); /* refused at once: KAFKA_STORAGE_ERROR */
    run_for(f, 2 * SIM_NS_PER_S);
    assert_true(e.probe.responses == e_before || e.probe.error != KAFKA_ERROR_NONE);
    client_clear(&e);
    client_clear(&d);
    client_clear(&c);
    fixture_free(f);
}

/* A write that fails after it was appended (the ISR fell below
 * min.insync.replicas while it waited) keeps the state it wrote, as Kafka
 * keeps an appended write: its join is answered COORDINATOR_NOT_AVAILABLE,
 * and a later write the append refuses goes back to that state, both
 * members (it used to go back to nothing: every member gone, epoch 0). */
static void
test_consumer_group_write_failed_after_append_keeps_the_group(void **unused)
{
    (void)unused;
    ClusterConfig config;
    fixture_cluster_config(&config);
    config.broker.replica_lag_time_max_ms = 1000;
    config.broker.min_insync_replicas = 3;
    Fixture *f = fixture_new_config(36, 3, &config);
    Client c, d;
    client_init(&c, f);
    client_init(&d, f);
    static const gint32 none[] = {-1}, all[] = {0, 1, 2, -1};
    assert_int_equal(heartbeat(&c, f, "", 0, none), KAFKA_ERROR_NONE);
    g_autofree char *a = g_strdup(c.member_id);
    assert_int_equal(heartbeat(&c, f, a, c.member_epoch, all), KAFKA_ERROR_NONE);
    gint32 epoch = c.member_epoch;
    sim_node_crash(f->world, broker_node(offsets_follower(f, &c)));
    assert_int_equal(heartbeat(&d, f, "", 0, none), KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    GroupCoordInfo info;
    group_coord_describe(broker_at(f, c.coordinator), GROUP, &info);
    assert_int_equal(info.members, 2);
    /* The first member's next heartbeat would move it to the new epoch: its
     * write is refused (too few in-sync replicas) and reverted to the
     * appended state, not to nothing. */
    assert_int_equal(heartbeat(&c, f, a, epoch, all), KAFKA_ERROR_COORDINATOR_NOT_AVAILABLE);
    group_coord_describe(broker_at(f, c.coordinator), GROUP, &info);
    assert_int_equal(info.members, 2);
    assert_int_equal(info.generation, epoch + 1);
    client_clear(&d);
    client_clear(&c);
    fixture_free(f);
}

/* ---- real consumers (consumer_membership.c) ---- */

static Consumer *
add_member(Fixture *f)
{
    assert_true(f->n_consumers < MEMBERS_MAX);
    ConsumerConfig config;
    kconfig_bind_consumer_defaults(&config);
    config.group_protocol = CONSUMER_GROUP_PROTOCOL_CONSUMER;
    config.auto_offset_reset = CONSUMER_RESET_EARLIEST;
    config.enable_auto_commit = FALSE;
    config.processing_mode = CONSUMER_PROCESS_THEN_COMMIT;
    config.metadata_max_age_ms = 1000;
    g_autoptr(GArray) bootstrap = cluster_bootstrap_nodes(f->cluster);
    g_autofree char *name = g_strdup_printf("consumer-%u", f->n_consumers);
    Consumer *consumer = consumer_new(f->world, name, CONSUMER_PROCESS + f->n_consumers, bootstrap,
                                      &config, f->history);
    f->consumers[f->n_consumers++] = consumer;
    const char *topics[] = {TOPIC};
    consumer_subscribe(consumer, GROUP, topics, 1);
    SimDist interval = SIM_DIST_CONST(10 * SIM_NS_PER_MS);
    SimDist processing = SIM_DIST_CONST(100 * SIM_NS_PER_US);
    consumer_start_polling(consumer, &interval, &processing, NULL, NULL);
    return consumer;
}

static void
send_some(Fixture *f, guint n)
{
    for (guint i = 0; i < n; i++) {
        f->counter++;
        producer_send(f->producer, TOPIC, (gint32)(f->counter % 4), 0,
                      HISTORY_VALUE(PRODUCER_PROCESS, f->counter), 100, NULL, NULL);
    }
}

/* Partition counts of each running member, and TRUE when they cover the
 * topic's 4 partitions exactly once. */
static gboolean
covered_once(const Fixture *f)
{
    guint owners[4] = {0};
    for (guint i = 0; i < f->n_consumers; i++) {
        if (!consumer_running(f->consumers[i]))
            continue;
        g_autoptr(GArray) tps = consumer_assignment(f->consumers[i]);
        for (guint p = 0; p < tps->len; p++)
            owners[g_array_index(tps, KTopicPartition, p).partition]++;
    }
    for (guint p = 0; p < 4; p++) {
        if (owners[p] != 1)
            return FALSE;
    }
    return TRUE;
}

/* REVOKE ops of `process`. */
static guint
revokes_of(const Fixture *f, guint32 process)
{
    const HistoryOpArray *ops = history_ops(f->history);
    guint n = 0;
    for (guint i = 0; i < ops->len; i++)
        n += ops->data[i].fn == HISTORY_FN_REVOKE && ops->data[i].process == process;
    return n;
}

/* Asserts that no value was processed twice; returns how many were. */
static guint
processed_once(const Fixture *f)
{
    const HistoryOpArray *ops = history_ops(f->history);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    guint processed = 0;
    for (guint i = 0; i < ops->len; i++) {
        if (ops->data[i].fn != HISTORY_FN_PROCESS)
            continue;
        processed++;
        assert_false(g_hash_table_contains(seen, &ops->data[i].value));
        g_hash_table_add(seen, (gpointer)&ops->data[i].value);
    }
    return processed;
}

/* A second member joins a one-member group: the first member revokes only
 * the two partitions that move (committing them first) and never stops
 * reading the others; no two members own a partition at any point; the
 * processed values are each processed once. A crashed member's partitions
 * go to the survivor after group.consumer.session.timeout.ms. */
static void
test_consumer_group_members_reconcile_incrementally(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(33, 4);
    Consumer *first = add_member(f);
    send_some(f, 200);
    run_for(f, 5 * SIM_NS_PER_S);
    g_autoptr(GArray) alone = consumer_assignment(first);
    assert_int_equal(alone->len, 4);
    assert_true(consumer_group_stable(first));
    Consumer *second = add_member(f);
    gint64 start = sim_now_ns(f->world);
    gboolean first_always_reading = TRUE;
    while (sim_now_ns(f->world) - start < 10 * SIM_NS_PER_S) {
        run_for(f, 20 * SIM_NS_PER_MS);
        send_some(f, 2);
        g_autoptr(GArray) tps = consumer_assignment(first);
        first_always_reading = first_always_reading && tps->len >= 2;
        /* Never a partition in two members' hands. */
        g_autoptr(GArray) other = consumer_assignment(second);
        for (guint i = 0; i < tps->len; i++)
            for (guint j = 0; j < other->len; j++)
                assert_false(ktp_equal(&g_array_index(tps, KTopicPartition, i),
                                       &g_array_index(other, KTopicPartition, j)));
    }
    assert_true(first_always_reading);
    assert_true(covered_once(f));
    g_autoptr(GArray) mine = consumer_assignment(first);
    g_autoptr(GArray) theirs = consumer_assignment(second);
    assert_int_equal(mine->len, 2);
    assert_int_equal(theirs->len, 2);
    assert_int_equal(revokes_of(f, CONSUMER_PROCESS), 2);
    assert_int_equal(revokes_of(f, CONSUMER_PROCESS + 1), 0);
    ConsumerStats stats;
    consumer_stats(first, &stats);
    assert_int_equal(stats.partitions_revoked, 2);
    /* The second member crashes: after the session its partitions are the
     * first's again. */
    sim_node_crash(f->world, consumer_node(second));
    run_for(f, (SESSION_MS + 3 * HEARTBEAT_MS) * SIM_NS_PER_MS);
    g_autoptr(GArray) back = consumer_assignment(first);
    assert_int_equal(back->len, 4);
    /* Processed values: none twice (every move committed before it went). */
    assert_true(processed_once(f) > 200);
    fixture_free(f);
}

/* A member goes on through a coordinator failover: the new coordinator
 * loads the group's record, so the member keeps its id, its epoch and its
 * partitions (Kafka 4 replays the group's records); nothing is revoked and
 * nothing processed twice. */
static void
test_consumer_group_member_keeps_partitions_across_coordinator_move(void **unused)
{
    (void)unused;
    Fixture *f = fixture_new(35, 4);
    Consumer *member = add_member(f);
    send_some(f, 200);
    run_for(f, 5 * SIM_NS_PER_S);
    g_autoptr(GArray) before = consumer_assignment(member);
    assert_int_equal(before->len, 4);
    assert_true(consumer_group_stable(member));
    g_autofree char *member_id = g_strdup(consumer_member_id(member));
    gint32 epoch = consumer_generation(member);
    Broker *old = NULL;
    for (gint32 id = 1; id <= 3; id++) {
        GroupCoordInfo info;
        group_coord_describe(cluster_broker(f->cluster, id), GROUP, &info);
        if (info.coordinator)
            old = cluster_broker(f->cluster, id);
    }
    assert_non_null(old);
    sim_node_crash(f->world, broker_node(old));
    for (guint i = 0; i < 500; i++) {
        run_for(f, 20 * SIM_NS_PER_MS);
        send_some(f, 1);
    }
    assert_string_equal(consumer_member_id(member), member_id);
    assert_int_equal(consumer_generation(member), epoch);
    g_autoptr(GArray) after = consumer_assignment(member);
    assert_int_equal(after->len, 4);
    assert_int_equal(revokes_of(f, CONSUMER_PROCESS), 0);
    guint coordinators = 0;
    for (gint32 id = 1; id <= 3; id++) {
        Broker *broker = cluster_broker(f->cluster, id);
        GroupCoordInfo info;
        group_coord_describe(broker, GROUP, &info);
        if (broker == old || !info.coordinator)
            continue;
        coordinators++;
        assert_true(info.consumer_protocol);
        assert_int_equal(info.members, 1);
    }
    assert_int_equal(coordinators, 1);
    assert_true(processed_once(f) > 600);
    fixture_free(f);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consumer_group_revocation_before_reassignment),
        cmocka_unit_test(test_consumer_group_fencing_leave_and_session),
        cmocka_unit_test(test_consumer_group_epoch_survives_coordinator_move),
        cmocka_unit_test(test_consumer_group_heartbeat_waits_for_its_record),
        cmocka_unit_test(test_consumer_group_refused_write_behind_a_waiting_one),
        cmocka_unit_test(test_consumer_group_write_failed_after_append_keeps_the_group),
        cmocka_unit_test(test_consumer_group_members_reconcile_incrementally),
        cmocka_unit_test(test_consumer_group_member_keeps_partitions_across_coordinator_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
