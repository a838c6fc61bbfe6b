/*
 * Unit tests for the KRaft controller and its metadata records
 * (models/kraft): the image's replay (PartitionRegistration.merge's epochs),
 * then a quorum of three controllers with scripted brokers: registration,
 * unfencing once caught up and topic creation; fencing on a lapsed session
 * (KIP-631) with the broker leaving every ISR and leadership (KIP-841);
 * AlterPartition's checks in Kafka's order (KIP-497); unclean election; and
 * a controller failover that keeps the metadata and the brokers' sessions.
 *
 * A scripted broker is a plain simulated node: it registers, heartbeats every
 * broker.heartbeat.interval.ms (2 s) reporting the active controller's high
 * watermark as its metadata offset (a broker that keeps up), follows
 * NOT_CONTROLLER to the controller it is told of, and keeps the last
 * AlterPartition answer.
 */
#include "kraft_controller.h"
#include "kraft_placer.h"
#include "kraft_proto.h"
#include "kraft_publish.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "plog.h"
#include "sim_net.h"

#define CONTROLLERS 3
#define BROKERS 3
#define HEARTBEAT_NS (2000 * SIM_NS_PER_MS)

typedef struct Cluster Cluster;

typedef struct {
    Cluster *cluster;
    SimNodeId node;
    gint32 id;
    guint64 incarnation;
    gint64 epoch; /* -1 until registered */
    gboolean fenced;
    guint target; /* the controller it talks to */
    gboolean running;
    KraftMsg last_alter; /* the last AlterPartition answer */
    gboolean have_alter;
    gint64 clean_epoch; /* shown at the next registration; -1: an unclean restart */
    gboolean want_shut_down;
    gboolean in_controlled_shutdown; /* as the last heartbeat answer said */
    gboolean should_shut_down;
    KraftMsg last_create; /* the last CreateTopics answer */
    gboolean have_create;
    gint32 next_correlation;
    gboolean awaiting; /* a registration or heartbeat unanswered */
    /* Its log, as it answers GetReplicaLogInfo (KIP-966). */
    gint32 log_epoch;
    gint64 log_end_offset;
    gboolean log_info_mute; /* it never answers */
    guint log_info_asked;
} Broker;

struct Cluster {
    SimWorld *world;
    KraftRecordStore *store;
    RaftNode *raft[CONTROLLERS];
    KraftController *controllers[CONTROLLERS];
    Broker brokers[BROKERS];
};

static KraftController *
active_controller(Cluster *c)
{
    for (guint i = 0; i < CONTROLLERS; i++)
        if (kraft_controller_active(c->controllers[i]))
            return c->controllers[i];
    return NULL;
}

static gint64
metadata_offset(Cluster *c)
{
    KraftController *active = active_controller(c);
    return active == NULL ? -1 : raft_node_high_watermark(kraft_controller_raft(active));
}

static void
broker_send(Broker *b, KraftMsg *msg)
{
    msg->broker_id = b->id;
    msg->broker_epoch = b->epoch;
    sim_net_send(sim_world_net(b->cluster->world), b->node,
                 raft_node_sim_node(b->cluster->raft[b->target]), &msg->base);
}

static void
send_registration(Broker *b)
{
    KraftMsg *msg = kraft_msg_new(KRAFT_MSG_REGISTRATION_REQUEST, ++b->next_correlation);
    msg->incarnation = b->incarnation;
    msg->previous_broker_epoch = b->clean_epoch;
    broker_send(b, msg);
}

static void
heartbeat_fire(SimWorld *world, void *ctx, void *arg)
{
    (void)world;
    (void)arg;
    Broker *b = ctx;
    if (!b->running)
        return;
    /* An unanswered request: that controller is gone, try the next. */
    if (b->awaiting)
        b->target = (b->target + 1) % CONTROLLERS;
    b->awaiting = TRUE;
    if (b->epoch >= 0) {
        KraftMsg *msg = kraft_msg_new(KRAFT_MSG_HEARTBEAT_REQUEST, ++b->next_correlation);
        msg->metadata_offset = metadata_offset(b->cluster);
        msg->want_shut_down = b->want_shut_down;
        broker_send(b, msg);
    } else {
        send_registration(b);
    }
    sim_timer_set(b->cluster->world, b->node, HEARTBEAT_NS, heartbeat_fire, NULL);
}

static void
broker_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *base)
{
    (void)world;
    Broker *b = ctx;
    KraftMsg *msg = (KraftMsg *)base;
    if (msg->base.type == KRAFT_MSG_GET_REPLICA_LOG_INFO_REQUEST) {
        b->log_info_asked++;
        if (!b->log_info_mute) {
            KraftMsg *response =
                kraft_msg_new(KRAFT_MSG_GET_REPLICA_LOG_INFO_RESPONSE, msg->correlation_id);
            response->broker_id = b->id;
            response->topic = msg->topic;
            response->partition = msg->partition;
            response->last_written_epoch = b->log_epoch;
            response->log_end_offset = b->log_end_offset;
            sim_net_send(sim_world_net(b->cluster->world), b->node, from, &response->base);
        }
        sim_msg_free(base);
        return;
    }
    if (msg->base.type == KRAFT_MSG_CREATE_TOPICS_RESPONSE) {
        b->last_create = *msg;
        b->have_create = TRUE;
        sim_msg_free(base);
        return;
    }
    if (msg->base.type != KRAFT_MSG_ALTER_PARTITION_RESPONSE)
        b->awaiting = FALSE;
    if (msg->base.type == KRAFT_MSG_ALTER_PARTITION_RESPONSE) {
        b->last_alter = *msg;
        b->have_alter = TRUE;
    }
    if (msg->error == KAFKA_ERROR_NOT_CONTROLLER) {
        /* Ask the controller it names, or the next one. */
        guint next = (b->target + 1) % CONTROLLERS;
        for (guint i = 0; i < CONTROLLERS; i++)
            if (msg->controller_id >= 0 && raft_node_id(b->cluster->raft[i]) == msg->controller_id)
                next = i;
        b->target = next;
    } else if (msg->base.type == KRAFT_MSG_REGISTRATION_RESPONSE && msg->error == 0) {
        b->epoch = msg->broker_epoch;
        b->fenced = TRUE;
    } else if (msg->base.type == KRAFT_MSG_HEARTBEAT_RESPONSE && msg->error == 0) {
        b->fenced = msg->fenced;
        b->in_controlled_shutdown = b->in_controlled_shutdown || msg->in_controlled_shutdown;
        b->should_shut_down = msg->should_shut_down;
    } else if (msg->base.type == KRAFT_MSG_HEARTBEAT_RESPONSE &&
               msg->error == KAFKA_ERROR_STALE_BROKER_EPOCH) {
        b->epoch = -1;
    }
    sim_msg_free(base);
}

static void
broker_crash(SimWorld *world, void *ctx)
{
    (void)world;
    Broker *b = ctx;
    b->running = FALSE;
}

static void
broker_restart(SimWorld *world, void *ctx)
{
    (void)world;
    Broker *b = ctx;
    b->running = TRUE;
    b->incarnation++;
    b->epoch = -1;
    sim_timer_set(b->cluster->world, b->node, 0, heartbeat_fire, NULL);
}

static const SimNodeOps broker_ops = {broker_message, NULL, broker_crash, broker_restart};

/* Snapshots: the quorum's configuration (NULL: Kafka's defaults) and the
 * controllers' metadata.log.max.record.bytes.between.snapshots (0: 20 MiB). */
typedef struct {
    const RaftConfig *raft;
    gint64 snapshot_bytes;
} SnapshotSetup;

/* Replicas of topic "t": partition p on brokers (p, p+1, p+2) mod 3, plus 1.
 * `config` NULL: the controllers' defaults; `raft` NULL: the quorum's. */
static void
cluster_init_full(Cluster *c, gboolean unclean, const KraftControllerConfig *config,
                  const RaftConfig *raft)
{
    memset(c, 0, sizeof *c);
    c->world = sim_world_new(7);
    sim_net_set_default_link(sim_world_net(c->world), SIM_DIST_CONST(SIM_NS_PER_MS), 0);
    c->store = kraft_record_store_new();
    RaftVoter voters[CONTROLLERS];
    for (guint i = 0; i < CONTROLLERS; i++) {
        g_autofree char *name = g_strdup_printf("controller-%u", 3000 + i);
        c->raft[i] = raft_node_new(c->world, name, (gint32)(3000 + i), raft);
        voters[i] = (RaftVoter){(gint32)(3000 + i), raft_node_sim_node(c->raft[i])};
    }
    static const gint32 replicas[] = {1, 2, 3, 2, 3, 1, 3, 1, 2};
    for (guint i = 0; i < CONTROLLERS; i++) {
        raft_node_set_voters(c->raft[i], voters, CONTROLLERS);
        c->controllers[i] = kraft_controller_new(c->raft[i], c->store, config, NULL);
        kraft_controller_add_topic(c->controllers[i], "t", replicas, 3, 3, unclean, 2);
        raft_node_start(c->raft[i]);
    }
    for (guint i = 0; i < BROKERS; i++) {
        Broker *b = &c->brokers[i];
        b->cluster = c;
        b->id = (gint32)i + 1;
        b->incarnation = 1;
        b->epoch = -1;
        b->clean_epoch = -1;
        b->running = TRUE;
        g_autofree char *name = g_strdup_printf("broker-%d", b->id);
        b->node = sim_node_add(c->world, name, &broker_ops, b);
        sim_timer_set(c->world, b->node, 0, heartbeat_fire, NULL);
    }
}

static void
cluster_init_with(Cluster *c, gboolean unclean, const KraftControllerConfig *config)
{
    cluster_init_full(c, unclean, config, NULL);
}

static void
cluster_init_setup(Cluster *c, gboolean unclean, gboolean elr, const SnapshotSetup *setup)
{
    KraftControllerConfig cfg;
    kraft_controller_config_init(&cfg);
    cfg.elr_enabled = elr;
    if (setup != NULL && setup->snapshot_bytes > 0)
        cfg.snapshot_max_new_record_bytes = setup->snapshot_bytes;
    cluster_init_full(c, unclean, &cfg, setup != NULL ? setup->raft : NULL);
}

static void
cluster_init_elr(Cluster *c, gboolean unclean, gboolean elr)
{
    cluster_init_setup(c, unclean, elr, NULL);
}

static void
cluster_init(Cluster *c, gboolean unclean)
{
    cluster_init_elr(c, unclean, FALSE);
}

static void
cluster_clear(Cluster *c)
{
    sim_world_free(c->world);
    for (guint i = 0; i < CONTROLLERS; i++) {
        kraft_controller_free(c->controllers[i]);
        raft_node_free(c->raft[i]);
    }
    kraft_record_store_free(c->store);
}

static void
run_until(Cluster *c, double t_s)
{
    gint64 until = (gint64)(t_s * 1e9);
    while (sim_now_ns(c->world) < until) {
        sim_world_run_until(c->world, MIN(until, sim_now_ns(c->world) + 100 * SIM_NS_PER_MS));
        for (guint i = 0; i < CONTROLLERS; i++)
            kraft_controller_check_invariants(c->controllers[i]);
    }
}

static const KraftPartition *
partition(Cluster *c, gint32 p)
{
    KraftController *active = active_controller(c);
    assert_non_null(active);
    guint32 topic = (guint32)kraft_record_store_find_topic(c->store, "t");
    return kraft_image_partition(kraft_controller_image(active), topic, p);
}

static gboolean
same_ids(const gint32 *ids, guint n, const gint32 *expected, guint n_expected)
{
    return n == n_expected && memcmp(ids, expected, sizeof(gint32) * n) == 0;
}

/* ---- the image ---- */

static void
test_kraft_image_replay(void **state)
{
    (void)state;
    KraftImage *image = kraft_image_new();
    KraftRecord reg = {.type = KRAFT_REC_REGISTER_BROKER, .broker_id = 2, .incarnation = 9};
    kraft_image_replay(image, &reg, 4);
    assert_true(kraft_image_broker(image, 2)->fenced);
    assert_int_equal(kraft_image_broker(image, 2)->epoch, 4);
    /* A record for another registration's epoch changes nothing. */
    KraftRecord unfence = {.type = KRAFT_REC_UNFENCE_BROKER, .broker_id = 2, .broker_epoch = 3};
    kraft_image_replay(image, &unfence, 5);
    assert_false(kraft_image_broker_active(image, 2));
    unfence.broker_epoch = 4;
    kraft_image_replay(image, &unfence, 6);
    assert_true(kraft_image_broker_active(image, 2));
    KraftRecord p = {.type = KRAFT_REC_PARTITION, .topic = 0, .partition = 1, .n_replicas = 3,
                     .replicas = {2, 3, 1}, .n_isr = 3, .isr = {2, 3, 1}, .leader = 2};
    kraft_image_replay(image, &p, 7);
    /* An ISR change bumps the partition epoch only; a leader change both. */
    KraftRecord shrink = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = 0, .partition = 1,
                          .isr_set = TRUE, .n_isr = 2, .isr = {2, 3},
                          .leader = KRAFT_NO_LEADER_CHANGE};
    kraft_image_replay(image, &shrink, 8);
    const KraftPartition *part = kraft_image_partition(image, 0, 1);
    assert_int_equal(part->leader_epoch, 0);
    assert_int_equal(part->partition_epoch, 1);
    KraftRecord elect = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = 0, .partition = 1,
                         .leader = 3};
    kraft_image_replay(image, &elect, 9);
    part = kraft_image_partition(image, 0, 1);
    assert_int_equal(part->leader, 3);
    assert_int_equal(part->leader_epoch, 1);
    assert_int_equal(part->partition_epoch, 2);
    assert_int_equal(part->last_change_offset, 9);
    static const gint32 isr[] = {2, 3};
    assert_true(same_ids(part->isr, part->n_isr, isr, 2));
    /* A change to a partition the image lacks is ignored. */
    elect.partition = 5;
    kraft_image_replay(image, &elect, 10);
    assert_null(kraft_image_partition(image, 0, 5));
    assert_int_equal(kraft_image_end_offset(image), 11);
    kraft_image_free(image);
}

/* The image keeps its partitions in chunks shared copy-on-write between
 * copies. Against a reference (one value per (topic, partition), in a
 * sorted array): 1,000 partitions created in a scrambled order (every
 * insertion point, chunk splits), a copy, changes to the copy alone; the
 * original keeps what it had, both list their partitions sorted, and the
 * delta walk (kraft_image_partitions_not_shared) holds every partition
 * that changed and leaves out the chunks no change touched. */
static void
test_kraft_image_chunks_copy_on_write(void **state)
{
    (void)state;
    const guint n = 1000;
    KraftImage *image = kraft_image_new();
    for (guint k = 0; k < n; k++) {
        guint scrambled = (k * 617u) % n; /* 617 is prime to 1000 */
        KraftRecord p = {.type = KRAFT_REC_PARTITION, .topic = scrambled % 7,
                         .partition = (gint32)(scrambled / 7), .n_replicas = 1,
                         .replicas = {1}, .n_isr = 1, .isr = {1}, .leader = 1};
        kraft_image_replay(image, &p, k);
    }
    KraftImage *copy = kraft_image_copy(image);
    /* Every 97th partition of the copy gets a new leader. */
    guint changed = 0;
    for (guint k = 0; k < n; k += 97) {
        KraftRecord elect = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = k % 7,
                             .partition = (gint32)(k / 7), .leader = 2};
        kraft_image_replay(copy, &elect, n + k);
        changed++;
    }
    g_autoptr(GPtrArray) before = kraft_image_partitions(image);
    g_autoptr(GPtrArray) after = kraft_image_partitions(copy);
    assert_int_equal(before->len, n);
    assert_int_equal(after->len, n);
    guint moved = 0;
    for (guint i = 0; i < n; i++) {
        const KraftPartition *a = g_ptr_array_index(before, i);
        const KraftPartition *b = g_ptr_array_index(after, i);
        if (i > 0) {
            const KraftPartition *prev = g_ptr_array_index(before, i - 1);
            assert_true(prev->topic < a->topic ||
                        (prev->topic == a->topic && prev->partition < a->partition));
        }
        assert_int_equal(a->topic, b->topic);
        assert_int_equal(a->partition, b->partition);
        assert_int_equal(a->leader, 1); /* the original never changed */
        guint k = a->topic + 7u * (guint)a->partition;
        assert_int_equal(b->leader, k % 97 == 0 ? 2 : 1);
        moved += b->leader == 2;
        assert_ptr_equal(kraft_image_partition(copy, a->topic, a->partition), b);
    }
    assert_int_equal(moved, changed);
    g_autoptr(GPtrArray) delta = kraft_image_partitions_not_shared(image, copy);
    guint found = 0;
    for (guint i = 0; i < delta->len; i++)
        found += ((const KraftPartition *)g_ptr_array_index(delta, i))->leader == 2;
    assert_int_equal(found, changed);
    /* At most a chunk (64) for each change, and less than everything. */
    assert_true(delta->len <= changed * 64 && delta->len < n);
    g_autoptr(GPtrArray) none = kraft_image_partitions_not_shared(copy, copy);
    assert_int_equal(none->len, 0);
    kraft_image_free(image);
    kraft_image_free(copy);
    /* Created in order, as a topic's partitions are, chunks fill up: 640
     * partitions take ten chunks, not twenty half-full ones. */
    KraftImage *ordered = kraft_image_new();
    for (gint32 k = 0; k < 640; k++) {
        KraftRecord p = {.type = KRAFT_REC_PARTITION, .topic = (guint32)(k / 100),
                         .partition = k % 100, .n_replicas = 1, .replicas = {1}, .n_isr = 1,
                         .isr = {1}, .leader = 1};
        kraft_image_replay(ordered, &p, k);
    }
    assert_int_equal(kraft_image_chunk_count(ordered), 10);
    kraft_image_free(ordered);
}

/* Two images that replayed the same records (two brokers) intern to one
 * copy of each chunk; a change to one afterwards leaves the other as it
 * was; the store forgets a chunk when no image holds it. */
static void
test_kraft_image_intern_shares_equal_chunks(void **state)
{
    (void)state;
    KraftRecordStore *store = kraft_record_store_new();
    KraftImage *a = kraft_image_new();
    KraftImage *b = kraft_image_new();
    for (gint32 k = 0; k < 300; k++) {
        KraftRecord p = {.type = KRAFT_REC_PARTITION, .topic = (guint32)(k / 100),
                         .partition = k % 100, .n_replicas = 2, .replicas = {1, 2}, .n_isr = 2,
                         .isr = {1, 2}, .leader = 1};
        kraft_image_replay(a, &p, k);
        kraft_image_replay(b, &p, k);
    }
    kraft_image_intern(a, store);
    guint chunks = kraft_image_chunk_count(a);
    assert_int_equal(kraft_record_store_interned_chunks(store), chunks);
    kraft_image_intern(b, store);
    assert_int_equal(kraft_record_store_interned_chunks(store), chunks);
    g_autoptr(GPtrArray) pa = kraft_image_partitions(a);
    g_autoptr(GPtrArray) pb = kraft_image_partitions(b);
    for (guint i = 0; i < pa->len; i++)
        assert_ptr_equal(g_ptr_array_index(pa, i), g_ptr_array_index(pb, i));
    /* b moves a leader: a keeps its own. */
    KraftRecord elect = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = 1, .partition = 7,
                         .leader = 2};
    kraft_image_replay(b, &elect, 300);
    assert_int_equal(kraft_image_partition(a, 1, 7)->leader, 1);
    assert_int_equal(kraft_image_partition(b, 1, 7)->leader, 2);
    assert_ptr_not_equal(kraft_image_partition(a, 1, 7), kraft_image_partition(b, 1, 7));
    /* a catches up: once interned, the two share that chunk again. */
    kraft_image_replay(a, &elect, 300);
    kraft_image_intern(b, store);
    kraft_image_intern(a, store);
    assert_ptr_equal(kraft_image_partition(a, 1, 7), kraft_image_partition(b, 1, 7));
    assert_int_equal(kraft_record_store_interned_chunks(store), chunks);
    kraft_image_free(a);
    kraft_image_free(b);
    assert_int_equal(kraft_record_store_interned_chunks(store), 0);
    kraft_record_store_free(store);
}

/* ---- the publisher ---- */

static void
test_kraft_publish_deltas(void **state)
{
    (void)state;
    KraftRecordStore *store = kraft_record_store_new();
    guint32 t = kraft_record_store_topic(store, "orders");
    KraftImage *before = kraft_image_new();
    gint64 offset = 0;
    for (gint32 id = 1; id <= 3; id++) {
        KraftRecord reg = {.type = KRAFT_REC_REGISTER_BROKER, .broker_id = id,
                           .node = (SimNodeId)(10 + id)};
        kraft_image_replay(before, &reg, offset);
        KraftRecord unfence = {.type = KRAFT_REC_UNFENCE_BROKER, .broker_id = id,
                               .broker_epoch = offset};
        kraft_image_replay(before, &unfence, offset + 1);
        offset += 2;
    }
    KraftRecord topic = {.type = KRAFT_REC_TOPIC, .topic = t, .partitions = 2};
    kraft_image_replay(before, &topic, offset++);
    KraftRecord p0 = {.type = KRAFT_REC_PARTITION, .topic = t, .partition = 0, .n_replicas = 2,
                      .replicas = {1, 2}, .n_isr = 2, .isr = {1, 2}, .leader = 1};
    KraftRecord p1 = {.type = KRAFT_REC_PARTITION, .topic = t, .partition = 1, .n_replicas = 2,
                      .replicas = {2, 3}, .n_isr = 2, .isr = {2, 3}, .leader = 2};
    kraft_image_replay(before, &p0, offset++);
    kraft_image_replay(before, &p1, offset++);
    /* From nothing: broker 3 is a replica of partition 1 only, led by 2. */
    MetadataPool *pool = metadata_pool_new();
    KLeaderAndIsrRequest *lai = kraft_publish_leader_and_isr(NULL, before, store, 3, pool);
    assert_non_null(lai);
    assert_int_equal(kproto_leader_and_isr_count(lai), 1);
    const KPartitionState *ps = kproto_leader_and_isr_state(lai, 0);
    assert_string_equal(ps->tp.topic, "orders");
    assert_int_equal(ps->tp.partition, 1);
    assert_int_equal(ps->leader, 2);
    assert_int_equal(lai->live_leaders->len, 1);
    assert_int_equal(g_array_index(lai->live_leaders, KBrokerEndpoint, 0).node, 12);
    sim_msg_free(&lai->base);
    /* Broker 1 is fenced and loses partition 0's leadership to 2. */
    KraftImage *after = kraft_image_copy(before);
    KraftRecord change = {.type = KRAFT_REC_PARTITION_CHANGE, .topic = t, .partition = 0,
                          .isr_set = TRUE, .n_isr = 1, .isr = {2}, .leader = 2};
    kraft_image_replay(after, &change, offset++);
    KraftRecord fence = {.type = KRAFT_REC_FENCE_BROKER, .broker_id = 1, .broker_epoch = 0};
    kraft_image_replay(after, &fence, offset++);
    assert_null(kraft_publish_leader_and_isr(before, after, store, 3, pool)); /* not its replica */
    lai = kraft_publish_leader_and_isr(before, after, store, 2, pool);
    assert_int_equal(kproto_leader_and_isr_count(lai), 1);
    ps = kproto_leader_and_isr_state(lai, 0);
    assert_int_equal(ps->tp.partition, 0);
    assert_int_equal(ps->leader_epoch, 1);
    assert_int_equal(ps->zk_version, 1); /* the partition epoch */
    sim_msg_free(&lai->base);
    KUpdateMetadataRequest *um = kraft_publish_update_metadata(before, after, store, pool);
    /* The state goes pooled, not copied. */
    assert_int_equal(um->partitions->len, 0);
    assert_int_equal(kproto_update_metadata_count(um), 1);
    assert_int_equal(kproto_update_metadata_state(um, 0)->leader, 2);
    assert_int_equal(metadata_pool_size(pool), 1);
    assert_int_equal(um->live_brokers->len, 2); /* the fenced broker is not offered */
    assert_int_equal(g_array_index(um->live_brokers, KBrokerEndpoint, 0).broker_id, 2);
    sim_msg_free(&um->base);
    assert_int_equal(metadata_pool_size(pool), 0); /* freed, the request released it */
    assert_null(kraft_publish_update_metadata(after, after, store, pool));
    metadata_pool_unref(pool);
    kraft_image_free(before);
    kraft_image_free(after);
    kraft_record_store_free(store);
}

/* ---- the controller ---- */

static void
test_kraft_register_unfence_create(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    KraftController *active = active_controller(&c);
    assert_non_null(active);
    const KraftImage *image = kraft_controller_image(active);
    for (gint32 id = 1; id <= BROKERS; id++) {
        assert_true(kraft_image_broker_active(image, id));
        assert_false(c.brokers[id - 1].fenced);
        /* The broker epoch is the offset of its RegisterBroker record. */
        assert_int_equal(kraft_image_broker(image, id)->epoch, c.brokers[id - 1].epoch);
        /* Its endpoint is where it registered from. */
        assert_int_equal(kraft_image_broker(image, id)->node, c.brokers[id - 1].node);
    }
    /* The topic, created once every replica was active: full ISR, the
     * first replica leading, epochs 0. */
    static const gint32 all[] = {2, 3, 1};
    const KraftPartition *p1 = partition(&c, 1);
    assert_non_null(p1);
    assert_int_equal(p1->leader, 2);
    assert_true(same_ids(p1->isr, p1->n_isr, all, 3));
    assert_int_equal(p1->leader_epoch, 0);
    assert_int_equal(p1->partition_epoch, 0);
    /* Standbys replay the same committed records, and the controllers keep
     * one copy of what their committed images agree on. */
    for (guint i = 0; i < CONTROLLERS; i++) {
        const KraftPartition *q = kraft_image_partition(kraft_controller_image(c.controllers[i]),
                                                        p1->topic, 1);
        assert_non_null(q);
        assert_int_equal(q->leader, 2);
        assert_ptr_equal(q, p1);
    }
    cluster_clear(&c);
}

static void
test_kraft_session_timeout_fences(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    sim_node_crash(c.world, c.brokers[0].node); /* broker 1 falls silent */
    /* Its last heartbeat was at most 2 s before; the session is 9 s. */
    run_until(&c, 16.9);
    KraftController *active = active_controller(&c);
    assert_true(kraft_image_broker_active(kraft_controller_image(active), 1));
    run_until(&c, 20);
    assert_false(kraft_image_broker_active(kraft_controller_image(active), 1));
    /* Partition 0 (replicas 1, 2, 3) had broker 1 leading: 2 leads now in
     * epoch 1; every ISR lost broker 1 (KIP-841). */
    const KraftPartition *p0 = partition(&c, 0);
    assert_int_equal(p0->leader, 2);
    assert_int_equal(p0->leader_epoch, 1);
    static const gint32 p0_isr[] = {2, 3}, p2_isr[] = {3, 2};
    assert_true(same_ids(p0->isr, p0->n_isr, p0_isr, 2));
    const KraftPartition *p2 = partition(&c, 2);
    assert_int_equal(p2->leader, 3); /* kept: it was not broker 1 */
    assert_int_equal(p2->leader_epoch, 0);
    assert_true(same_ids(p2->isr, p2->n_isr, p2_isr, 2));
    /* It comes back as a new incarnation: registered fenced, unfenced
     * once caught up. It does not rejoin an ISR by itself. */
    sim_node_restart(c.world, c.brokers[0].node);
    run_until(&c, 26);
    assert_true(kraft_image_broker_active(kraft_controller_image(active), 1));
    p0 = partition(&c, 0);
    assert_true(same_ids(p0->isr, p0->n_isr, p0_isr, 2));
    cluster_clear(&c);
}

static void
test_kraft_registration_waits_for_the_session(void **state)
{
    /* Goal: a new incarnation is refused registration while the old one's session is valid,
     * unless the old one is fenced (ClusterControlManager.registerBroker,
     * BrokerHeartbeatManager.hasValidSession). */
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    Broker *b = &c.brokers[0];
    gint64 old_epoch = b->epoch;
    /* Crashed and back at once: refused until its session lapses (its last
     * heartbeat at most 2 s before the crash, the session 9 s). */
    sim_node_crash(c.world, b->node);
    run_until(&c, 10.5);
    sim_node_restart(c.world, b->node);
    run_until(&c, 16.9);
    assert_int_equal(b->epoch, -1);
    KraftController *active = active_controller(&c);
    assert_int_equal(kraft_image_broker(kraft_controller_image(active), 1)->epoch, old_epoch);
    assert_int_equal(partition(&c, 0)->leader, 1); /* the old incarnation leads still */
    run_until(&c, 22);
    assert_true(b->epoch > old_epoch);
    /* Shut down cleanly, fenced when it is let go, and back at once: it
     * registers at once, its session notwithstanding. */
    run_until(&c, 30);
    assert_false(b->fenced);
    b->want_shut_down = TRUE;
    run_until(&c, 36);
    assert_true(b->should_shut_down && b->fenced);
    old_epoch = b->epoch;
    sim_node_crash(c.world, b->node);
    b->want_shut_down = FALSE;
    b->should_shut_down = FALSE;
    sim_node_restart(c.world, b->node);
    run_until(&c, 36.5);
    assert_true(b->epoch > old_epoch);
    cluster_clear(&c);
}

/* One AlterPartition from broker `from`, answered. */
static const KraftMsg *
alter(Cluster *c, gint32 from, gint64 broker_epoch, gint32 leader_epoch, gint32 partition_epoch,
      const gint32 *isr, guint n_isr)
{
    Broker *b = &c->brokers[from - 1];
    for (int attempt = 0; attempt < CONTROLLERS; attempt++) {
        b->have_alter = FALSE;
        KraftMsg *msg = kraft_msg_new(KRAFT_MSG_ALTER_PARTITION_REQUEST, ++b->next_correlation);
        msg->topic = (guint32)kraft_record_store_find_topic(c->store, "t");
        msg->partition = 0;
        msg->leader_epoch = leader_epoch;
        msg->partition_epoch = partition_epoch;
        msg->n_isr = (guint8)n_isr;
        memcpy(msg->isr, isr, sizeof(gint32) * n_isr);
        gint64 saved = b->epoch;
        b->epoch = broker_epoch;
        broker_send(b, msg);
        b->epoch = saved;
        run_until(c, (double)sim_now_ns(c->world) / 1e9 + 0.5);
        if (!b->have_alter)
            fail_msg("AlterPartition from broker %d (leader epoch %d, partition epoch %d) "
                     "unanswered", from, leader_epoch, partition_epoch);
        if (b->last_alter.error != KAFKA_ERROR_NOT_CONTROLLER || b->last_alter.controller_id < 0 ||
            leader_epoch > 0)
            break;
    }
    return &b->last_alter;
}

static void
test_kraft_alter_partition_checks(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    gint64 epoch1 = c.brokers[0].epoch, epoch2 = c.brokers[1].epoch;
    static const gint32 shrunk[] = {1, 2}, with_3[] = {1, 3}, without_leader[] = {2, 3},
                        outside[] = {1, 4};
    /* Partition 0: replicas 1, 2, 3, leader 1, epochs 0. Kafka's order of
     * checks, each case failing one. */
    const struct {
        gint32 from;
        gint64 broker_epoch;
        gint32 leader_epoch, partition_epoch;
        const gint32 *isr;
        KafkaError error;
    } cases[] = {
        {1, epoch1 - 1, 0, 0, shrunk, KAFKA_ERROR_STALE_BROKER_EPOCH},
        {1, epoch1, 1, 0, shrunk, KAFKA_ERROR_NOT_CONTROLLER},  /* an epoch from the future */
        {2, epoch2, 0, 0, shrunk, KAFKA_ERROR_INVALID_REQUEST}, /* not the leader */
        {1, epoch1, 0, 0, without_leader, KAFKA_ERROR_INVALID_REQUEST},
        {1, epoch1, 0, 0, outside, KAFKA_ERROR_INVALID_REQUEST},
        {1, epoch1, 0, 0, shrunk, KAFKA_ERROR_NONE},             /* 1, 2: partition epoch 1 */
        {1, epoch1, 0, 0, with_3, KAFKA_ERROR_INVALID_UPDATE_VERSION}, /* epoch 0 is stale */
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const KraftMsg *r = alter(&c, cases[i].from, cases[i].broker_epoch, cases[i].leader_epoch,
                                  cases[i].partition_epoch, cases[i].isr, 2);
        if (r->error != (gint16)cases[i].error)
            fail_msg("case %u: error %d, expected %d", i, r->error, cases[i].error);
        /* Answered with the state it made. */
        if (r->error == KAFKA_ERROR_NONE)
            assert_true(r->partition_epoch == 1 && r->leader_epoch == 0 && r->leader == 1);
    }
    const KraftPartition *p0 = partition(&c, 0);
    assert_int_equal(p0->partition_epoch, 1);
    assert_int_equal(p0->leader_epoch, 0);
    assert_true(same_ids(p0->isr, p0->n_isr, shrunk, 2));
    /* A fenced broker may not join an ISR (KIP-841): broker 3 goes silent. */
    sim_node_crash(c.world, c.brokers[2].node);
    run_until(&c, 25);
    const KraftMsg *r = alter(&c, 1, epoch1, 0, 1, with_3, 2);
    assert_int_equal(r->error, KAFKA_ERROR_INELIGIBLE_REPLICA);
    /* A leader epoch older than the partition's: broker 1 falls silent too,
     * and 2 leads partition 0 in epoch 1. */
    sim_node_crash(c.world, c.brokers[0].node);
    run_until(&c, 40);
    p0 = partition(&c, 0);
    assert_int_equal(p0->leader, 2);
    static const gint32 only_2[] = {2, 2};
    r = alter(&c, 2, epoch2, 0, p0->partition_epoch, only_2, 1);
    assert_int_equal(r->error, KAFKA_ERROR_FENCED_LEADER_EPOCH);
    cluster_clear(&c);
}

/* Partition 0's ISR shrunk to its leader, broker 1, which then falls silent:
 * without unclean election the partition stays offline with ISR {1}; with
 * it, broker 2 leads with ISR {2}. */
static void
run_last_replica_standing(gboolean unclean, gint32 *leader, gint32 *isr0, guint *n_isr)
{
    Cluster c;
    cluster_init(&c, unclean);
    run_until(&c, 10);
    static const gint32 one[] = {1};
    const KraftMsg *r = alter(&c, 1, c.brokers[0].epoch, 0, 0, one, 1);
    assert_int_equal(r->error, KAFKA_ERROR_NONE);
    sim_node_crash(c.world, c.brokers[0].node);
    run_until(&c, 25);
    const KraftPartition *p0 = partition(&c, 0);
    *leader = p0->leader;
    *isr0 = p0->isr[0];
    *n_isr = p0->n_isr;
    cluster_clear(&c);
}

static void
test_kraft_unclean_election(void **state)
{
    (void)state;
    gint32 leader, isr0;
    guint n_isr;
    run_last_replica_standing(FALSE, &leader, &isr0, &n_isr);
    assert_int_equal(leader, KRAFT_NO_LEADER);
    assert_int_equal(n_isr, 1);
    assert_int_equal(isr0, 1); /* the ISR never empties */
    run_last_replica_standing(TRUE, &leader, &isr0, &n_isr);
    assert_int_equal(leader, 2);
    assert_int_equal(n_isr, 1);
    assert_int_equal(isr0, 2);
}

static void
test_kraft_controller_failover(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    KraftController *first = active_controller(&c);
    sim_node_crash(c.world, raft_node_sim_node(kraft_controller_raft(first)));
    run_until(&c, 20);
    KraftController *second = active_controller(&c);
    assert_non_null(second);
    assert_ptr_not_equal(first, second);
    /* The metadata survived, and no broker lost its session in the
     * failover: a new active controller starts every session afresh. */
    const KraftImage *image = kraft_controller_image(second);
    for (gint32 id = 1; id <= BROKERS; id++)
        assert_true(kraft_image_broker_active(image, id));
    assert_int_equal(partition(&c, 0)->leader, 1);
    /* And it fences as the first did. */
    sim_node_crash(c.world, c.brokers[0].node);
    run_until(&c, 35);
    assert_false(kraft_image_broker_active(kraft_controller_image(second), 1));
    assert_int_equal(partition(&c, 0)->leader, 2);
    /* The crashed controller, restarted, replays the log as a standby. */
    sim_node_restart(c.world, raft_node_sim_node(kraft_controller_raft(first)));
    run_until(&c, 45);
    assert_false(kraft_image_broker_active(kraft_controller_image(first), 1));
    cluster_clear(&c);
}

/* ---- snapshots ---- */

/* Goal: at Kafka's defaults no controller writes a snapshot in a short run;
 * with metadata.log.max.record.bytes.between.snapshots small, every
 * controller writes snapshots of its committed image once it has replayed
 * that many bytes, each at or below its high watermark and holding the
 * image of its end offset. */
static void
test_kraft_snapshot_at_threshold(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    for (guint i = 0; i < CONTROLLERS; i++)
        assert_int_equal(raft_node_snapshot_count(c.raft[i]), 0);
    cluster_clear(&c);
    SnapshotSetup setup = {NULL, 600};
    cluster_init_setup(&c, FALSE, FALSE, &setup);
    run_until(&c, 10);
    for (guint i = 0; i < CONTROLLERS; i++) {
        assert_true(raft_node_snapshot_count(c.raft[i]) >= 1);
        const RaftSnapshot *s = raft_node_latest_snapshot(c.raft[i]);
        assert_true(s->end_offset <= raft_node_high_watermark(c.raft[i]));
        const KraftImage *content = kraft_record_store_image(c.store, s->payload);
        assert_non_null(content);
        assert_int_equal(kraft_image_end_offset(content), s->end_offset);
        assert_int_equal(s->size_bytes, kraft_image_size_bytes(content));
    }
    cluster_clear(&c);
}

/* Goal: a standby controller that was down while the others' logs were
 * cleaned past its end comes back through the active controller's snapshot
 * (FetchSnapshot), loads it as its committed image and replays on: it ends
 * with the same metadata as the active controller; restarted once more, it
 * starts from its own latest snapshot. */
static void
test_kraft_standby_restarts_from_snapshot(void **state)
{
    (void)state;
    RaftConfig raft;
    raft_config_init(&raft);
    raft.segment_bytes = 512;
    raft.retention_bytes = 1;
    raft.clean_interval_ns = SIM_NS_PER_S;
    SnapshotSetup setup = {&raft, 300};
    Cluster c;
    cluster_init_setup(&c, FALSE, FALSE, &setup);
    run_until(&c, 10);
    KraftController *active = active_controller(&c);
    assert_non_null(active);
    guint away = 0;
    while (c.controllers[away] == active)
        away++;
    RaftNode *away_raft = c.raft[away];
    gint64 away_end = plog_log_end_offset(raft_node_log(away_raft));
    sim_node_crash(c.world, raft_node_sim_node(away_raft));
    /* Metadata moves on: a broker is fenced, then comes back. */
    sim_node_crash(c.world, c.brokers[0].node);
    run_until(&c, 25);
    sim_node_restart(c.world, c.brokers[0].node);
    run_until(&c, 40);
    assert_true(raft_node_log_start_offset(kraft_controller_raft(active)) > away_end);
    sim_node_restart(c.world, raft_node_sim_node(away_raft));
    run_until(&c, 50);
    assert_true(raft_node_snapshots_fetched(away_raft) >= 1);
    const KraftImage *mine = kraft_controller_image(c.controllers[away]);
    const KraftImage *theirs = kraft_controller_image(active);
    assert_int_equal(kraft_image_end_offset(mine), raft_node_high_watermark(away_raft));
    for (gint32 id = 1; id <= BROKERS; id++)
        assert_int_equal(kraft_image_broker_active(mine, id), kraft_image_broker_active(theirs, id));
    guint32 topic = (guint32)kraft_record_store_find_topic(c.store, "t");
    for (gint32 p = 0; p < 3; p++) {
        const KraftPartition *a = kraft_image_partition(mine, topic, p);
        const KraftPartition *b = kraft_image_partition(theirs, topic, p);
        assert_non_null(a);
        assert_int_equal(a->leader, b->leader);
        assert_int_equal(a->partition_epoch, b->partition_epoch);
    }
    /* Restarted again, it starts from the snapshot on its own disk. */
    sim_node_crash(c.world, raft_node_sim_node(away_raft));
    run_until(&c, 52);
    sim_node_restart(c.world, raft_node_sim_node(away_raft));
    assert_true(raft_node_snapshot_count(away_raft) >= 1);
    run_until(&c, 60);
    assert_int_equal(kraft_image_end_offset(kraft_controller_image(c.controllers[away])),
                     raft_node_high_watermark(away_raft));
    assert_true(kraft_image_broker_active(kraft_controller_image(c.controllers[away]), 1));
    cluster_clear(&c);
}

/* ---- controlled shutdown ---- */

static void
test_kraft_controlled_shutdown(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    assert_int_equal(partition(&c, 1)->leader, 2);
    Broker *b = &c.brokers[1]; /* broker 2 */
    b->want_shut_down = TRUE; /* from its next heartbeat, within 2 s */
    run_until(&c, 12.1);
    /* It leads partition 1: controlled shutdown first, its leaderships and
     * ISR memberships moved (BrokerRegistrationChange, PartitionChange). */
    assert_true(b->in_controlled_shutdown);
    const KraftImage *image = kraft_controller_image(active_controller(&c));
    for (gint32 p = 0; p < 3; p++) {
        const KraftPartition *part = partition(&c, p);
        assert_int_not_equal(part->leader, 2);
        assert_false(kraft_ids_contain(part->isr, part->n_isr, 2));
    }
    assert_int_equal(partition(&c, 1)->leader, 3); /* the next replica in the ISR */
    assert_false(kraft_image_broker_active(image, 2));
    /* Once every unfenced broker has replayed that (the heartbeats report
     * the committed offset), it is told to shut down and is fenced. */
    run_until(&c, 16.2);
    assert_true(b->should_shut_down);
    assert_true(b->fenced);
    assert_false(kraft_image_broker_unfenced(kraft_controller_image(active_controller(&c)), 2));
    cluster_clear(&c);
}

/* ---- eligible leader replicas (KIP-966) ---- */

/* Partition 0 (replicas 1, 2, 3, min.insync.replicas 2): brokers 3, 2 and 1
 * fall silent in turn and are fenced; then broker 2 comes back, after a
 * clean shutdown (its clean shutdown file names its last broker epoch) or
 * not. */
static void
last_replica_standing_with(Cluster *c, const KraftControllerConfig *cfg, gboolean clean)
{
    gboolean elr = cfg->elr_enabled;
    cluster_init_with(c, FALSE, cfg);
    run_until(c, 10);
    assert_int_equal(partition(c, 0)->leader, 1);
    sim_node_crash(c->world, c->brokers[2].node);
    run_until(c, 22);
    static const gint32 one_two[] = {1, 2}, one[] = {1}, two[] = {2};
    const KraftPartition *p = partition(c, 0);
    assert_true(same_ids(p->isr, p->n_isr, one_two, 2));
    assert_int_equal(p->n_elr, 0); /* the ISR is not below min.insync.replicas */
    sim_node_crash(c->world, c->brokers[1].node);
    run_until(c, 34);
    p = partition(c, 0);
    assert_true(same_ids(p->isr, p->n_isr, one, 1));
    if (elr)
        assert_true(same_ids(p->elr, p->n_elr, two, 1));
    else
        assert_int_equal(p->n_elr, 0);
    sim_node_crash(c->world, c->brokers[0].node);
    run_until(c, 46);
    p = partition(c, 0);
    assert_int_equal(p->leader, KRAFT_NO_LEADER);
    if (elr) {
        /* The ISR empties; its last member joins the ELR. */
        assert_int_equal(p->n_isr, 0);
        assert_true(same_ids(p->elr, p->n_elr, one_two, 2));
    } else {
        assert_true(same_ids(p->isr, p->n_isr, one, 1)); /* never empty */
    }
    c->brokers[1].clean_epoch = clean ? c->brokers[1].epoch : -1;
    sim_node_restart(c->world, c->brokers[1].node);
    run_until(c, 52);
}

static void
last_replica_standing(Cluster *c, gboolean elr, gboolean clean)
{
    KraftControllerConfig cfg;
    kraft_controller_config_init(&cfg);
    cfg.elr_enabled = elr;
    last_replica_standing_with(c, &cfg, clean);
}

static void
test_kraft_elr_elects_an_eligible_replica(void **state)
{
    (void)state;
    Cluster c;
    last_replica_standing(&c, TRUE, TRUE);
    /* A clean restart keeps its ELR place: with the ISR empty it is
     * elected, as the whole ISR. */
    static const gint32 one[] = {1}, two[] = {2};
    const KraftPartition *p = partition(&c, 0);
    assert_int_equal(p->leader, 2);
    assert_true(same_ids(p->isr, p->n_isr, two, 1));
    assert_true(same_ids(p->elr, p->n_elr, one, 1));
    cluster_clear(&c);
}

static void
test_kraft_elr_unclean_restart_leaves_it(void **state)
{
    (void)state;
    Cluster c;
    last_replica_standing(&c, TRUE, FALSE);
    /* An unclean restart (handleBrokerUncleanShutdown) leaves the ELR: the
     * partition stays offline rather than elect it. */
    static const gint32 one[] = {1};
    const KraftPartition *p = partition(&c, 0);
    assert_int_equal(p->leader, KRAFT_NO_LEADER);
    assert_true(same_ids(p->elr, p->n_elr, one, 1));
    /* Broker 1, the last ISR member, returns cleanly: elected from the ELR. */
    c.brokers[0].clean_epoch = c.brokers[0].epoch;
    sim_node_restart(c.world, c.brokers[0].node);
    run_until(&c, 58);
    p = partition(&c, 0);
    assert_int_equal(p->leader, 1);
    assert_int_equal(p->n_elr, 0);
    cluster_clear(&c);
}

static void
test_kraft_no_elr_keeps_the_last_member(void **state)
{
    (void)state;
    Cluster c;
    last_replica_standing(&c, FALSE, TRUE);
    /* Without ELR broker 2 is no candidate: only the ISR's last member,
     * broker 1, may lead. */
    static const gint32 one[] = {1};
    const KraftPartition *p = partition(&c, 0);
    assert_int_equal(p->leader, KRAFT_NO_LEADER);
    assert_true(same_ids(p->isr, p->n_isr, one, 1));
    cluster_clear(&c);
}

/* Kafka 4.0's last known leader (PartitionChangeBuilder
 * .maybeUpdateLastKnownLeader, canElectLastKnownLeader): with ELR and
 * without the unclean recovery manager, the leader the partition had when
 * its ISR emptied is remembered, and elected (unclean) once ISR and ELR are
 * both empty and it is active again. */
static void
test_kraft_elr_last_known_leader_elected(void **state)
{
    (void)state;
    Cluster c;
    last_replica_standing(&c, TRUE, FALSE);
    static const gint32 one[] = {1};
    const KraftPartition *p = partition(&c, 0);
    assert_int_equal(p->leader, KRAFT_NO_LEADER);
    assert_true(same_ids(p->elr, p->n_elr, one, 1));
    assert_true(same_ids(p->last_known_elr, p->n_last_known_elr, one, 1));
    /* Broker 1, the last leader, returns without a clean shutdown: it leaves
     * the ELR (which empties), and is elected as the last known leader once
     * unfenced, its log unchecked. */
    sim_node_restart(c.world, c.brokers[0].node);
    run_until(&c, 58);
    p = partition(&c, 0);
    assert_int_equal(p->leader, 1);
    assert_true(same_ids(p->isr, p->n_isr, one, 1));
    assert_int_equal(p->n_elr, 0);
    assert_int_equal(p->n_last_known_elr, 0); /* forgotten: it has a leader */
    for (guint i = 0; i < BROKERS; i++)
        assert_int_equal(c.brokers[i].log_info_asked, 0); /* no recovery manager */
    cluster_clear(&c);
}

/* One case of KIP-966's unclean recovery (the recovery manager on,
 * unclean.recovery.timeout.ms 20 s): after last_replica_standing, broker 3
 * returns at 52 s and broker 1 at 55 s (registered at 57 s), both without a
 * clean shutdown, which empties the ELR; LastKnownElr is then [1, 2]. Each broker answers
 * GetReplicaLogInfo with its (last written epoch, log end offset), or
 * never. */
typedef struct {
    const char *name;
    KraftUncleanRecoveryStrategy strategy;
    gint32 epochs[BROKERS];
    gint64 ends[BROKERS];
    gboolean mute[BROKERS];
    gint32 leader_at_58s; /* broker 1 still fenced: only 2 and 3 active */
    gint32 leader_at_62s; /* broker 1 unfenced (at 59 s) and answered */
    gint32 leader_at_80s; /* past the timeout */
} RecoveryCase;

static const RecoveryCase RECOVERY_CASES[] = {
    {"None keeps the partition offline", KRAFT_UNCLEAN_RECOVERY_NONE, {0, 0, 0}, {100, 50, 80},
     {FALSE, FALSE, FALSE}, -1, -1, -1},
    {"Aggressive elects the longest log of the replicas active now",
     KRAFT_UNCLEAN_RECOVERY_AGGRESSIVE, {0, 0, 0}, {100, 50, 80}, {FALSE, FALSE, FALSE}, 3, 3, 3},
    {"Balanced waits for every LastKnownElr member, then the longest log",
     KRAFT_UNCLEAN_RECOVERY_BALANCED, {0, 0, 0}, {100, 50, 80}, {FALSE, FALSE, FALSE}, -1, 1, 1},
    {"Balanced elects a replica outside LastKnownElr when its log is longest",
     KRAFT_UNCLEAN_RECOVERY_BALANCED, {0, 0, 0}, {100, 50, 180}, {FALSE, FALSE, FALSE}, -1, 3, 3},
    {"a higher last written leader epoch beats a longer log", KRAFT_UNCLEAN_RECOVERY_BALANCED,
     {0, 1, 0}, {100, 40, 80}, {FALSE, FALSE, FALSE}, -1, 2, 2},
    {"Balanced elects at the timeout without a silent LastKnownElr member",
     KRAFT_UNCLEAN_RECOVERY_BALANCED, {0, 0, 0}, {100, 50, 80}, {TRUE, FALSE, FALSE}, -1, -1, 3},
    {"Aggressive waits for a silent active replica until the timeout",
     KRAFT_UNCLEAN_RECOVERY_AGGRESSIVE, {0, 0, 0}, {100, 50, 80}, {FALSE, FALSE, TRUE}, -1, -1, 1},
};

static void
check_recovery_leader(Cluster *c, const RecoveryCase *rc, gint32 expected, double at_s)
{
    const KraftPartition *p = partition(c, 0);
    if (p->leader != expected)
        fail_msg("%s: at %.0f s the leader is %d, expected %d", rc->name, at_s, p->leader,
                 expected);
    if (expected < 0)
        return;
    /* An unclean election: the leader alone in the ISR, ELR and
     * LastKnownElr empty. */
    assert_int_equal(p->n_isr, 1);
    assert_int_equal(p->isr[0], expected);
    assert_int_equal(p->n_elr, 0);
    assert_int_equal(p->n_last_known_elr, 0);
}

static void
test_kraft_unclean_recovery_strategies(void **state)
{
    (void)state;
    for (guint k = 0; k < G_N_ELEMENTS(RECOVERY_CASES); k++) {
        const RecoveryCase *rc = &RECOVERY_CASES[k];
        KraftControllerConfig cfg;
        kraft_controller_config_init(&cfg);
        cfg.elr_enabled = TRUE;
        cfg.unclean_recovery_manager_enabled = TRUE;
        cfg.unclean_recovery_strategy = rc->strategy;
        cfg.unclean_recovery_timeout_ns = 20 * SIM_NS_PER_S;
        Cluster c;
        last_replica_standing_with(&c, &cfg, FALSE);
        for (guint i = 0; i < BROKERS; i++) {
            c.brokers[i].log_epoch = rc->epochs[i];
            c.brokers[i].log_end_offset = rc->ends[i];
            c.brokers[i].log_info_mute = rc->mute[i];
        }
        static const gint32 one[] = {1}, two[] = {2}, one_two[] = {1, 2};
        const KraftPartition *p = partition(&c, 0);
        assert_true(same_ids(p->elr, p->n_elr, one, 1));
        /* The recovery manager's LastKnownElr: what left the ELR. */
        assert_true(same_ids(p->last_known_elr, p->n_last_known_elr, two, 1));
        sim_node_restart(c.world, c.brokers[2].node);
        run_until(&c, 55);
        assert_int_equal(partition(&c, 0)->leader, KRAFT_NO_LEADER); /* the ELR holds */
        sim_node_restart(c.world, c.brokers[0].node);
        run_until(&c, 57.5); /* registered at 57 s (after a NOT_CONTROLLER), still fenced */
        assert_true(c.brokers[0].fenced);
        p = partition(&c, 0);
        assert_int_equal(p->n_elr, 0);
        if (p->leader < 0)
            assert_true(same_ids(p->last_known_elr, p->n_last_known_elr, one_two, 2));
        run_until(&c, 58);
        check_recovery_leader(&c, rc, rc->leader_at_58s, 58);
        run_until(&c, 62);
        check_recovery_leader(&c, rc, rc->leader_at_62s, 62);
        run_until(&c, 80);
        check_recovery_leader(&c, rc, rc->leader_at_80s, 80);
        if (rc->strategy == KRAFT_UNCLEAN_RECOVERY_NONE)
            for (guint i = 0; i < BROKERS; i++)
                assert_int_equal(c.brokers[i].log_info_asked, 0);
        cluster_clear(&c);
    }
}

/* ---- placement and CreateTopics ---- */

static gboolean
distinct(const gint32 *ids, guint n)
{
    for (guint i = 0; i < n; i++)
        for (guint j = i + 1; j < n; j++)
            if (ids[i] == ids[j])
                return FALSE;
    return TRUE;
}

static void
test_kraft_placer_striped(void **state)
{
    (void)state;
    SimRng *rng = sim_rng_new(3, "placer");
    KraftUsableBroker three[] = {{3, -1, FALSE}, {1, -1, FALSE}, {2, -1, FALSE}};
    gint32 out[6 * 3];
    const char *why = NULL;
    assert_true(kraft_place_replicas(three, 3, 6, 3, rng, out, &why));
    /* Every partition on three brokers; the leaders striped: each broker
     * leads two of the six. */
    guint leads[4] = {0};
    for (guint p = 0; p < 6; p++) {
        assert_true(distinct(&out[p * 3], 3));
        leads[out[p * 3]]++;
    }
    assert_int_equal(leads[1], 2);
    assert_int_equal(leads[2], 2);
    assert_int_equal(leads[3], 2);
    /* A fenced broker holds replicas but never leads a new partition. */
    three[2].fenced = TRUE; /* broker 2 */
    assert_true(kraft_place_replicas(three, 3, 6, 3, rng, out, &why));
    for (guint p = 0; p < 6; p++) {
        assert_int_not_equal(out[p * 3], 2);
        assert_true(distinct(&out[p * 3], 3));
    }
    /* Racks: each partition's two replicas in different racks. */
    KraftUsableBroker racked[] = {{1, 0, FALSE}, {2, 0, FALSE}, {3, 1, FALSE}, {4, 1, FALSE}};
    gint32 pairs[8 * 2];
    assert_true(kraft_place_replicas(racked, 4, 8, 2, rng, pairs, &why));
    for (guint p = 0; p < 8; p++)
        assert_int_not_equal((pairs[p * 2] - 1) / 2, (pairs[p * 2 + 1] - 1) / 2);
    /* InvalidReplicationFactorException's three cases. */
    assert_false(kraft_place_replicas(three, 3, 1, 4, rng, out, &why));
    assert_non_null(strstr(why, "too few brokers"));
    assert_false(kraft_place_replicas(three, 3, 1, 0, rng, out, &why));
    KraftUsableBroker fenced[] = {{1, -1, TRUE}, {2, -1, TRUE}};
    assert_false(kraft_place_replicas(fenced, 2, 1, 1, rng, out, &why));
    assert_non_null(strstr(why, "fenced"));
    sim_rng_free(rng);
}

static void
send_create(Cluster *c, Broker *b, const char *topic, gint32 partitions, gint16 rf)
{
    KraftController *active = active_controller(c);
    assert_non_null(active);
    for (guint i = 0; i < CONTROLLERS; i++)
        if (c->controllers[i] == active)
            b->target = i;
    KraftMsg *msg = kraft_msg_new(KRAFT_MSG_CREATE_TOPICS_REQUEST, ++b->next_correlation);
    msg->topic = kraft_record_store_topic(c->store, topic);
    msg->n_partitions = partitions;
    msg->replication_factor = rf;
    msg->min_isr = 2;
    b->have_create = FALSE;
    broker_send(b, msg);
}

static void
test_kraft_create_topics(void **state)
{
    (void)state;
    Cluster c;
    cluster_init(&c, FALSE);
    run_until(&c, 10);
    Broker *b = &c.brokers[0];
    send_create(&c, b, "__consumer_offsets", 5, 3);
    run_until(&c, 11);
    assert_true(b->have_create);
    assert_int_equal(b->last_create.error, KAFKA_ERROR_NONE);
    /* Answered once committed: every controller has it. */
    guint32 topic = (guint32)kraft_record_store_find_topic(c.store, "__consumer_offsets");
    for (guint i = 0; i < CONTROLLERS; i++) {
        const KraftImage *image = kraft_controller_image(c.controllers[i]);
        assert_int_equal(kraft_image_topic_partitions(image, topic), 5);
        assert_int_equal(kraft_image_topic_min_isr(image, topic), 2);
        assert_false(kraft_image_topic_unclean(image, topic));
        for (gint32 p = 0; p < 5; p++) {
            const KraftPartition *part = kraft_image_partition(image, topic, p);
            assert_non_null(part);
            assert_int_equal(part->n_replicas, 3);
            assert_true(distinct(part->replicas, 3));
            assert_true(same_ids(part->isr, part->n_isr, part->replicas, 3));
            assert_int_equal(part->leader, part->replicas[0]);
        }
    }
    /* Asked again (another broker's auto-creation): it exists. */
    send_create(&c, b, "__consumer_offsets", 5, 3);
    run_until(&c, 12);
    assert_int_equal(b->last_create.error, KAFKA_ERROR_TOPIC_ALREADY_EXISTS);
    /* More replicas than brokers. */
    send_create(&c, b, "__transaction_state", 5, 4);
    run_until(&c, 13);
    assert_int_equal(b->last_create.error, KAFKA_ERROR_INVALID_REPLICATION_FACTOR);
    assert_int_equal(kraft_image_topic_partitions(
                         kraft_controller_image(active_controller(&c)),
                         kraft_record_store_topic(c.store, "__transaction_state")),
                     0);
    /* CreatePartitions: "t" grows from 3 to 5, the new ones placed. */
    for (guint i = 0; i < CONTROLLERS; i++)
        kraft_controller_add_partitions(c.controllers[i], "t", 5);
    run_until(&c, 14);
    guint32 t = (guint32)kraft_record_store_find_topic(c.store, "t");
    const KraftImage *image = kraft_controller_image(active_controller(&c));
    assert_int_equal(kraft_image_topic_partitions(image, t), 5);
    for (gint32 p = 3; p < 5; p++)
        assert_true(distinct(kraft_image_partition(image, t, p)->replicas, 3));
    /* The first three are as they were. */
    assert_int_equal(partition(&c, 1)->leader, 2);
    cluster_clear(&c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kraft_image_replay),
        cmocka_unit_test(test_kraft_image_chunks_copy_on_write),
        cmocka_unit_test(test_kraft_image_intern_shares_equal_chunks),
        cmocka_unit_test(test_kraft_publish_deltas),
        cmocka_unit_test(test_kraft_register_unfence_create),
        cmocka_unit_test(test_kraft_session_timeout_fences),
        cmocka_unit_test(test_kraft_registration_waits_for_the_session),
        cmocka_unit_test(test_kraft_alter_partition_checks),
        cmocka_unit_test(test_kraft_unclean_election),
        cmocka_unit_test(test_kraft_controller_failover),
        cmocka_unit_test(test_kraft_snapshot_at_threshold),
        cmocka_unit_test(test_kraft_standby_restarts_from_snapshot),
        cmocka_unit_test(test_kraft_controlled_shutdown),
        cmocka_unit_test(test_kraft_elr_elects_an_eligible_replica),
        cmocka_unit_test(test_kraft_elr_unclean_restart_leaves_it),
        cmocka_unit_test(test_kraft_no_elr_keeps_the_last_member),
        cmocka_unit_test(test_kraft_elr_last_known_leader_elected),
        cmocka_unit_test(test_kraft_unclean_recovery_strategies),
        cmocka_unit_test(test_kraft_placer_striped),
        cmocka_unit_test(test_kraft_create_topics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
