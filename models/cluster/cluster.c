/*
 * cluster: the coordination node, the brokers, the admin client, and the
 * invariant monitor (see cluster.h).
 *
 * Invariants:
 *  1. brokers->len == n_brokers; broker i+1 is at index i.
 *  2. `topics` lists every topic created, with its assignment, by name.
 *  3. `leaders` maps "topic-partition/epoch" to the one broker id that became
 *     leader in that epoch; a second one is a recorded breach, never an abort.
 */
#include "cluster.h"

#include "raft_check.h"

#include "zk_client.h"
#include "sim_assert.h"
#include "sim_mem.h"
#include "sim_disk.h"
#include "sim_net.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *name;
    GPtrArray *assignment; /* GArray* of gint32 per partition */
    ClusterRackAwareMode rack_mode; /* how its partitions are placed, now and when it grows */
} ClusterTopic;

typedef struct {
    gint32 epoch;
    gint64 hw;
} LeaderTerm;

struct Cluster {
    SimWorld *world;
    ClusterConfig config;
    History *history;
    ZkServer *zk;
    GPtrArray *brokers; /* Broker* */
    SimNodeId admin_node;
    ZkClient *admin;
    GPtrArray *topics;  /* ClusterTopic*, by name */
    GHashTable *leaders; /* "t-p/epoch" -> broker id + 1; looked up only */
    GHashTable *terms;   /* "b/t-p" -> LeaderTerm; looked up only */
    GPtrArray *racks;    /* char* per broker (NULL: no rack), broker i+1 at i; NULL: none */
    /* KRaft mode: the controller quorum and the metadata records. */
    KraftRecordStore *kraft_store;
    GPtrArray *raft_nodes;  /* RaftNode*, by node.id (owned; the brokers' in combined mode) */
    GPtrArray *controllers; /* KraftController* (owned) */
    gint32 kraft_lost_epoch;  /* the epoch whose election began the current failover */
    RaftCheck *raft_check;    /* the quorum's safety invariants (cluster_check_invariants) */
    guint violations;
};


typedef enum {
    KRAFT_LOSS_NONE_YET,  /* no controller has been active */
    KRAFT_LOSS_OPEN,      /* a loss is recorded since one last became active */
    KRAFT_LOSS_NONE_OPEN, /* a controller became active since the last loss */
} KraftLoss;

static KraftLoss
kraft_loss_open(const Cluster *cluster)
{
    const GArray *events = history_events(cluster->history);
    for (guint i = events->len; i > 0; i--) {
        const HistoryEvent *e = &g_array_index(events, HistoryEvent, i - 1);
        if (e->kind == HISTORY_EVENT_CONTROLLER_LOST)
            return KRAFT_LOSS_OPEN;
        if (e->kind == HISTORY_EVENT_CONTROLLER && e->partition < 0 &&
            e->text != NULL && strstr(e->text, "became controller") != NULL)
            return KRAFT_LOSS_NONE_OPEN;
    }
    return KRAFT_LOSS_NONE_YET;
}

/* KRaft: a broker's request to controller `controller_id` failed. With one
 * voter nobody stands for election when it is lost, so this is where its
 * failover starts: the first broker to notice, while no controller is
 * active (a paused or cut-off controller is still the active one: nothing
 * fails over). With more voters the quorum's election starts it
 * (observe_kraft_election). */
static void
observe_controller_unreachable(void *user_data, gint32 broker_id, gint32 controller_id)
{
    Cluster *cluster = user_data;
    if (cluster->history == NULL || cluster->controllers == NULL ||
        cluster->controllers->len != 1 ||
        kraft_controller_active(g_ptr_array_index(cluster->controllers, 0)) ||
        kraft_loss_open(cluster) != KRAFT_LOSS_NONE_OPEN)
        return;
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(cluster->world);
    event.kind = HISTORY_EVENT_CONTROLLER_LOST;
    event.broker = controller_id;
    event.partition = -1;
    event.text = g_strdup_printf("the quorum lost controller %d: broker %d's request to it "
                                 "failed, and it is the only voter",
                                 controller_id, broker_id);
    history_event(cluster->history, &event);
    g_free(event.text);
}

/* KRaft: a voter stood for election against the leader it knew. The first
 * to since a controller last became active starts a failover, as the
 * controller's session ending does in ZooKeeper mode (reports/failover.c);
 * detection (controller.quorum.fetch.timeout.ms) is not counted, as the
 * session timeout is not. */
static void
observe_kraft_election(void *user_data, gint32 old_leader_id, gint32 epoch)
{
    Cluster *cluster = user_data;
    if (cluster->history == NULL || epoch <= cluster->kraft_lost_epoch)
        return;
    /* A voter that was paused or cut off stands for election in an epoch
     * the quorum has passed, or as high as its active controller's: the
     * controller is not lost. */
    for (guint i = 0; i < cluster->controllers->len; i++) {
        const KraftController *c = g_ptr_array_index(cluster->controllers, i);
        if (kraft_controller_active(c) && raft_node_epoch(kraft_controller_raft(c)) >= epoch)
            return;
    }
    /* One failover per loss: later elections before a new controller is
     * active are the same failover. */
    if (kraft_loss_open(cluster) == KRAFT_LOSS_OPEN)
        return;
    cluster->kraft_lost_epoch = epoch;
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(cluster->world);
    event.kind = HISTORY_EVENT_CONTROLLER_LOST;
    event.broker = old_leader_id;
    event.partition = -1;
    event.leader_epoch = epoch;
    event.text = g_strdup_printf("the quorum lost controller %d: a voter stood for election in "
                                 "epoch %d",
                                 old_leader_id, epoch);
    history_event(cluster->history, &event);
    g_free(event.text);
}

/* ---- invariant monitor ---- */

/* The controller's session ended: the start of a controller failover (the
 * failover metrics, reports/failover.c). */
static void
observe_ephemeral_ended(void *user_data, const char *path, GBytes *data)
{
    Cluster *cluster = user_data;
    if (cluster->history == NULL || strcmp(path, "/controller") != 0)
        return;
    gsize len = 0;
    const char *bytes = g_bytes_get_data(data, &len);
    g_autofree char *text = g_strndup(bytes, len);
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(cluster->world);
    event.kind = HISTORY_EVENT_CONTROLLER_LOST;
    event.broker = (gint32)g_ascii_strtoll(text, NULL, 10);
    event.partition = -1;
    event.text = g_strdup_printf("controller %d's coordination session ended; /controller is gone",
                                 event.broker);
    history_event(cluster->history, &event);
    g_free(event.text);
}

static void
violation(Cluster *cluster, const KTopicPartition *tp, gint32 broker, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static void
violation(Cluster *cluster, const KTopicPartition *tp, gint32 broker, const char *format, ...)
{
    cluster->violations++;
    if (cluster->history == NULL)
        return;
    HistoryEvent event = {0};
    event.time_ns = sim_now_ns(cluster->world);
    event.kind = HISTORY_EVENT_VIOLATION;
    event.broker = broker;
    event.topic = history_topic(cluster->history, tp->topic);
    event.partition = tp->partition;
    va_list args;
    va_start(args, format);
    event.text = g_strdup_vprintf(format, args);
    va_end(args);
    history_event(cluster->history, &event);
    g_free(event.text);
}

static void
observe_became_leader(void *user_data, gint32 broker_id, const KTopicPartition *tp,
                      gint32 leader_epoch, gint64 leo)
{
    Cluster *cluster = user_data;
    (void)leo;
    char *key = g_strdup_printf("%s-%d/%d", tp->topic, tp->partition, leader_epoch);
    gpointer previous = g_hash_table_lookup(cluster->leaders, key);
    if (previous != NULL && GPOINTER_TO_INT(previous) - 1 != broker_id)
        violation(cluster, tp, broker_id,
                  "two leaders of %s-%d in epoch %d: broker %d and broker %d", tp->topic,
                  tp->partition, leader_epoch, GPOINTER_TO_INT(previous) - 1, broker_id);
    g_hash_table_replace(cluster->leaders, key, GINT_TO_POINTER(broker_id + 1));
    BrokerPartitionInfo info;
    broker_partition_info(cluster_broker(cluster, broker_id), tp->topic, tp->partition, &info);
    gboolean in_isr = FALSE;
    for (guint i = 0; i < info.n_isr; i++)
        in_isr = in_isr || info.isr[i] == broker_id;
    if (!in_isr)
        violation(cluster, tp, broker_id, "leader %d of %s-%d is not in its ISR", broker_id,
                  tp->topic, tp->partition);
    char *term_key = g_strdup_printf("%d/%s-%d", broker_id, tp->topic, tp->partition);
    LeaderTerm *term = g_new0(LeaderTerm, 1);
    term->epoch = leader_epoch;
    term->hw = info.hw;
    g_hash_table_replace(cluster->terms, term_key, term);
}

static void
observe_hw(void *user_data, gint32 broker_id, const KTopicPartition *tp, gboolean is_leader,
           gint32 leader_epoch, gint64 old_hw, gint64 new_hw)
{
    Cluster *cluster = user_data;
    (void)old_hw;
    if (!is_leader)
        return;
    g_autofree char *key = g_strdup_printf("%d/%s-%d", broker_id, tp->topic, tp->partition);
    LeaderTerm *term = g_hash_table_lookup(cluster->terms, key);
    if (term == NULL || term->epoch != leader_epoch)
        return;
    if (new_hw < term->hw)
        violation(cluster, tp, broker_id,
                  "leader %d moved the HW of %s-%d back from %" G_GINT64_FORMAT
                  " to %" G_GINT64_FORMAT " in epoch %d",
                  broker_id, tp->topic, tp->partition, term->hw, new_hw, leader_epoch);
    term->hw = new_hw;
}

static void
observe_acked(void *user_data, gint32 broker_id, const KTopicPartition *tp, gint64 base,
              gint64 end, const gint32 *isr, guint n_isr, gint16 acks)
{
    Cluster *cluster = user_data;
    (void)base;
    if (acks != -1)
        return;
    for (guint i = 0; i < n_isr; i++) {
        if (isr[i] == broker_id)
            continue;
        BrokerPartitionInfo info;
        broker_partition_info(cluster_broker(cluster, isr[i]), tp->topic, tp->partition, &info);
        /* A member that is down cannot be looked at: what it fetched is on its
         * disk, and what a power loss takes shows in the final check. */
        if (!broker_running(cluster_broker(cluster, isr[i])) || (info.present && info.leo >= end))
            continue;
        violation(cluster, tp, broker_id,
                  "broker %d acknowledged %s-%d up to offset %" G_GINT64_FORMAT
                  " with acks=all, but ISR member %d %s",
                  broker_id, tp->topic, tp->partition, end - 1, isr[i],
                  info.present ? "does not have it" : "is not running");
    }
}

/* ---- the admin client ---- */

static void
admin_message(SimWorld *world, void *ctx, SimNodeId from, SimMsg *msg)
{
    Cluster *cluster = ctx;
    (void)world;
    if (!zk_client_handle_message(cluster->admin, from, msg))
        sim_msg_free(msg);
}

static void
admin_disconnect(SimWorld *world, void *ctx, SimNodeId peer, SimDisconnectReason reason)
{
    Cluster *cluster = ctx;
    (void)world;
    (void)reason;
    zk_client_handle_disconnect(cluster->admin, peer);
}

static const SimNodeOps ADMIN_OPS = {admin_message, admin_disconnect, NULL, NULL};

static void
admin_session(void *owner, gboolean is_new)
{
    (void)owner;
    (void)is_new;
}

static void
admin_expired(void *owner)
{
    Cluster *cluster = owner;
    zk_client_new_session(cluster->admin);
}

static const ZkClientCallbacks ADMIN_CALLBACKS = {admin_session, admin_expired, NULL, NULL};

static void
ignore_result(void *owner, const ZkResult *result, void *arg)
{
    (void)owner;
    (void)result;
    (void)arg;
}

/* ---- the KRaft quorum ---- */

static gint
voter_index(const RaftVoter *voters, guint n_voters, gint32 id)
{
    for (guint i = 0; i < n_voters; i++)
        if (voters[i].id == id)
            return (gint)i;
    return -1;
}

static gint
compare_ids(gconstpointer a, gconstpointer b)
{
    gint32 x = *(const gint32 *)a, y = *(const gint32 *)b;
    return (x > y) - (x < y);
}

/* The quorum's voters, by node.id: their ids from ClusterConfig.voter_ids
 * (or the defaults), and their nodes. A dedicated controller's node is
 * added first (dedicated_controllers_new, in this order); a combined
 * voter's is its broker's, which cluster_new adds next, one node per
 * broker in id order, so broker N's node is the world's next node + N - 1
 * (asserted once the brokers exist). */
static void
quorum_voters(const Cluster *cluster, RaftVoter *voters)
{
    const ClusterConfig *config = &cluster->config;
    guint n = config->n_controllers;
    gint32 ids[RAFT_VOTERS_MAX];
    for (guint i = 0; i < n; i++) {
        ids[i] = config->voter_ids[0] != 0 ? config->voter_ids[i]
                 : config->combined       ? (gint32)i + 1
                                          : KRAFT_CONTROLLER_ID_BASE + (gint32)i;
        KSIM_ASSERT(ids[i] >= 0);
    }
    qsort(ids, n, sizeof ids[0], compare_ids);
    SimNodeId next = sim_world_node_count(cluster->world);
    for (guint i = 0; i < n; i++) {
        KSIM_ASSERT(i == 0 || ids[i] != ids[i - 1]);
        gboolean broker_id = ids[i] >= 1 && (guint)ids[i] <= config->n_brokers;
        KSIM_ASSERT(broker_id == config->combined);
        voters[i].id = ids[i];
        voters[i].node = config->combined ? next + (SimNodeId)ids[i] - 1 : next + i;
    }
}

static void
controller_add(Cluster *cluster, RaftNode *node, const KraftControllerConfig *controller_config)
{
    g_ptr_array_add(cluster->raft_nodes, node);
    KraftController *controller =
        kraft_controller_new(node, cluster->kraft_store, controller_config, cluster->history);
    kraft_controller_set_election_observer(controller, observe_kraft_election, cluster);
    g_ptr_array_add(cluster->controllers, controller);
}

static void
quorum_start(Cluster *cluster, const RaftVoter *voters)
{
    cluster->raft_check = raft_check_new();
    for (guint i = 0; i < cluster->config.n_controllers; i++) {
        raft_node_set_voters(g_ptr_array_index(cluster->raft_nodes, i), voters,
                             cluster->config.n_controllers);
        raft_node_start(g_ptr_array_index(cluster->raft_nodes, i));
    }
}

/* Dedicated controllers: a node of their own each, "controller-ID", started
 * before the brokers exist. */
static void
dedicated_controllers_new(Cluster *cluster, const RaftVoter *voters,
                          const KraftControllerConfig *controller_config)
{
    SimWorld *world = cluster->world;
    for (guint i = 0; i < cluster->config.n_controllers; i++) {
        g_autofree char *name = g_strdup_printf("controller-%d", voters[i].id);
        RaftNode *node = raft_node_new(world, name, voters[i].id, &cluster->config.raft);
        KSIM_ASSERT(raft_node_sim_node(node) == voters[i].node);
        controller_add(cluster, node, controller_config);
        if (cluster->history != NULL)
            history_set_process_name(cluster->history, (guint32)voters[i].id, name);
        SimDisk *disk = sim_node_disk(world, raft_node_sim_node(node));
        sim_disk_set_fsync_latency(disk, cluster->config.fsync_latency);
    }
    quorum_start(cluster, voters);
}

/* Combined mode: the voters the brokers' processes host, started once every
 * broker exists. */
static void
combined_controllers_new(Cluster *cluster, const RaftVoter *voters,
                         const KraftControllerConfig *controller_config)
{
    for (guint i = 0; i < cluster->config.n_controllers; i++) {
        Broker *broker = cluster_broker(cluster, voters[i].id);
        KSIM_ASSERT(broker_node(broker) == voters[i].node);
        controller_add(cluster, broker_raft_node(broker), controller_config);
    }
    quorum_start(cluster, voters);
}

/* ---- construction ---- */

Cluster *
cluster_new(SimWorld *world, const ClusterConfig *config, History *history)
{
    KSIM_ASSERT(config->n_brokers >= 1 && config->n_brokers <= CLUSTER_BROKERS_MAX);
    Cluster *cluster = g_new0(Cluster, 1);
    cluster->world = world;
    cluster->config = *config;
    /* The arrays are the caller's: the brokers copy their configs, the racks
     * are copied here. */
    cluster->config.brokers = NULL;
    cluster->config.racks = NULL;
    if (config->racks != NULL) {
        cluster->racks = g_ptr_array_new_with_free_func(g_free);
        for (guint i = 0; i < config->n_brokers; i++)
            g_ptr_array_add(cluster->racks, g_strdup(config->racks[i]));
    }
    cluster->history = history;
    cluster->brokers = g_ptr_array_new_with_free_func((GDestroyNotify)broker_free);
    cluster->topics = g_ptr_array_new();
    cluster->leaders = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    cluster->terms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    sim_net_set_default_link(sim_world_net(world), config->network_latency,
                             config->network_bandwidth_bytes_per_s);
    ZkServerConfig zk_config;
    zk_server_config_init(&zk_config);
    zk_config.request_ns = config->zk_request_ns;
    zk_config.byte_ns = config->zk_byte_ns;
    cluster->zk = zk_server_new(world, "zk", &zk_config);
    zk_server_set_ephemeral_listener(cluster->zk, observe_ephemeral_ended, cluster);
    cluster->admin_node = sim_node_add(world, "admin", &ADMIN_OPS, cluster);
    cluster->admin =
        zk_client_new(world, cluster->admin_node, zk_server_node(cluster->zk),
                         config->broker.zookeeper_session_timeout_ms * SIM_NS_PER_MS,
                         &ADMIN_CALLBACKS, cluster);
    static const char *const paths[] = {"/brokers", "/brokers/ids", "/brokers/topics",
                                        "/isr_change_notification"};
    for (guint i = 0; i < G_N_ELEMENTS(paths); i++)
        zk_client_create(cluster->admin, paths[i], "", 0, 0, ignore_result, NULL);
    BrokerObserver observer = {
        .became_leader = observe_became_leader,
        .hw_changed = observe_hw,
        .acked = observe_acked,
        .controller_unreachable = observe_controller_unreachable,
        .user_data = cluster,
    };
    RaftVoter voters[RAFT_VOTERS_MAX];
    KraftControllerConfig controller_config;
    if (config->kraft) {
        KSIM_ASSERT(config->n_controllers >= 1 && config->n_controllers <= RAFT_VOTERS_MAX);
        cluster->kraft_store = kraft_record_store_new();
        cluster->raft_nodes = g_ptr_array_new_with_free_func(
            config->combined ? NULL : (GDestroyNotify)raft_node_free);
        cluster->controllers =
            g_ptr_array_new_with_free_func((GDestroyNotify)kraft_controller_free);
        kraft_controller_config_init(&controller_config);
        controller_config.session_timeout_ns = config->broker_session_timeout_ms * SIM_NS_PER_MS;
        controller_config.elr_enabled = config->elr_version >= 1;
        controller_config.unclean_recovery_manager_enabled =
            config->unclean_recovery_manager_enabled;
        controller_config.unclean_recovery_strategy =
            (KraftUncleanRecoveryStrategy)config->unclean_recovery_strategy;
        controller_config.unclean_recovery_timeout_ns = config->unclean_recovery_timeout_ns;
        controller_config.snapshot_max_new_record_bytes = config->snapshot_max_new_record_bytes;
        controller_config.snapshot_max_interval_ns =
            config->snapshot_max_interval_ms * SIM_NS_PER_MS;
        quorum_voters(cluster, voters);
        if (!config->combined)
            dedicated_controllers_new(cluster, voters, &controller_config);
    }
    /* One copy of each partition state for every broker's metadata cache. */
    g_autoptr(MetadataPool) metadata_pool = metadata_pool_new();
    for (guint i = 0; i < config->n_brokers; i++) {
        BrokerConfig broker_config = config->brokers != NULL ? config->brokers[i] : config->broker;
        broker_config.broker_id = (gint32)i + 1;
        broker_config.transaction_version = config->transaction_version;
        broker_config.broker_session_timeout_ms = config->broker_session_timeout_ms;
        g_autofree char *name = g_strdup_printf("broker-%u", i + 1);
        Broker *broker = NULL;
        if (!config->kraft)
            broker = broker_new(world, name, &broker_config, zk_server_node(cluster->zk), history,
                                &observer);
        else if (config->combined && voter_index(voters, config->n_controllers,
                                                 broker_config.broker_id) >= 0)
            broker = broker_new_combined(world, name, &broker_config, voters,
                                         config->n_controllers, &config->raft,
                                         cluster->kraft_store, history, &observer);
        else
            broker = broker_new_kraft(world, name, &broker_config, voters, config->n_controllers,
                                      cluster->kraft_store, history, &observer);
        broker_share_metadata_pool(broker, metadata_pool);
        SimDisk *disk = sim_node_disk(world, broker_node(broker));
        sim_disk_set_fsync_latency(disk, config->fsync_latency);
        sim_disk_set_bandwidth(disk, config->disk_bandwidth_bytes_per_s);
        sim_disk_set_dirty_limit(disk, config->disk_dirty_limit_bytes);
        sim_disk_set_page_cache(disk, config->disk_page_cache_bytes);
        sim_disk_set_writeback(disk, config->disk_dirty_expire_ns, config->disk_dirty_writeback_ns);
        g_ptr_array_add(cluster->brokers, broker);
    }
    if (config->kraft && config->combined)
        combined_controllers_new(cluster, voters, &controller_config);
    return cluster;
}

static void
topic_free(ClusterTopic *topic)
{
    g_ptr_array_free(topic->assignment, TRUE);
    g_free(topic->name);
    g_free(topic);
}

void
cluster_free(Cluster *cluster)
{
    if (cluster == NULL)
        return;
    g_ptr_array_free(cluster->brokers, TRUE);
    if (cluster->controllers != NULL) {
        g_ptr_array_free(cluster->controllers, TRUE);
        g_ptr_array_free(cluster->raft_nodes, TRUE);
        kraft_record_store_free(cluster->kraft_store);
        raft_check_free(cluster->raft_check);
    }
    zk_client_free(cluster->admin);
    zk_server_free(cluster->zk);
    for (guint i = 0; i < cluster->topics->len; i++)
        topic_free(g_ptr_array_index(cluster->topics, i));
    g_ptr_array_free(cluster->topics, TRUE);
    g_hash_table_destroy(cluster->leaders);
    g_hash_table_destroy(cluster->terms);
    if (cluster->racks != NULL)
        g_ptr_array_free(cluster->racks, TRUE);
    g_free(cluster);
}

/* ---- topics ---- */

static ClusterTopic *
topic_find(const Cluster *cluster, const char *name)
{
    for (guint i = 0; i < cluster->topics->len; i++) {
        ClusterTopic *topic = g_ptr_array_index(cluster->topics, i);
        if (strcmp(topic->name, name) == 0)
            return topic;
    }
    return NULL;
}

/* ---- replica placement (the rules: cluster_placement.c) ---- */

/* Every broker's rack (NULL entries: none), or NULL when no broker has one.
 * (transfer none) */
static const char *const *
broker_racks(const Cluster *cluster)
{
    return cluster->racks != NULL ? (const char *const *)cluster->racks->pdata : NULL;
}

/* The racks placement uses under `mode` (AdminZkClient.getBrokerMetadatas):
 * every broker's, or NULL for a rack-unaware placement. (transfer none) */
static const char *const *
placement_racks(const Cluster *cluster, ClusterRackAwareMode mode)
{
    if (cluster->racks == NULL || mode == CLUSTER_RACK_AWARE_DISABLED)
        return NULL;
    for (guint i = 0; i < cluster->racks->len; i++) {
        if (cluster->racks->pdata[i] == NULL)
            return NULL; /* SAFE; ENFORCED was refused before */
    }
    return (const char *const *)cluster->racks->pdata;
}

/* Kafka's AdminUtils.assignReplicasToBrokers: a random start and shift
 * (drawn from one stream, in that order, whether or not racks are used),
 * then cluster_place_replicas. */
static void
assign_replicas(Cluster *cluster, ClusterTopic *topic, guint from, guint to, guint rf)
{
    SimRng *rng = sim_world_rng(cluster->world, "admin/assignment");
    guint n = cluster->config.n_brokers;
    guint start = (guint)sim_rng_range(rng, 0, n);
    guint shift = (guint)sim_rng_range(rng, 0, n);
    cluster_place_replicas(n, placement_racks(cluster, topic->rack_mode), from, to, rf, start,
                           shift, topic->assignment);
}

static void
write_assignment(Cluster *cluster, const ClusterTopic *topic, gboolean create)
{
    GString *data = g_string_new(NULL);
    for (guint p = 0; p < topic->assignment->len; p++) {
        const GArray *replicas = g_ptr_array_index(topic->assignment, p);
        g_string_append_printf(data, "%s%u:", p ? "|" : "", p);
        for (guint r = 0; r < replicas->len; r++)
            g_string_append_printf(data, "%s%d", r ? "," : "", g_array_index(replicas, gint32, r));
    }
    g_autofree char *path = g_strdup_printf("/brokers/topics/%s", topic->name);
    if (create)
        zk_client_create(cluster->admin, path, data->str, data->len, 0, ignore_result, NULL);
    else
        zk_client_set(cluster->admin, path, data->str, data->len, -1, ignore_result, NULL);
    g_string_free(data, TRUE);
}

static gboolean
valid_topic_name(const char *name)
{
    gsize len = strlen(name);
    if (len == 0 || len > KAFKA_TOPIC_NAME_MAX || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0)
        return FALSE;
    for (gsize i = 0; i < len; i++) {
        if (!g_ascii_isalnum(name[i]) && name[i] != '.' && name[i] != '_' && name[i] != '-')
            return FALSE;
    }
    return TRUE;
}

static guint
decimal_digits(guint64 n)
{
    guint digits = 1;
    for (; n >= 10; n /= 10)
        digits++;
    return digits;
}

guint64
cluster_topic_znode_bytes_max(guint partitions, guint replication_factor, guint n_brokers)
{
    /* write_assignment's "P:R,R,R|P:R,R,R...": each partition its number, a
     * colon, the replica ids with commas between, and a bar between
     * partitions; every id as long as the largest. */
    if (partitions == 0)
        return 0;
    guint64 per_replica = decimal_digits(n_brokers) + 1; /* the id, and a colon or a comma */
    guint64 last = partitions - 1;
    guint64 bytes = last; /* the bars */
    for (guint64 low = 0, high = 9, digits = 1; low <= last;
         low = high + 1, high = high * 10 + 9, digits++)
        bytes += (MIN(high, last) - low + 1) * (digits + per_replica * replication_factor);
    return bytes;
}

guint64
cluster_znode_bytes_limit(void)
{
    return ZK_DATA_BYTES_MAX;
}

/* FALSE with an error when a topic of `partitions` partitions with
 * `replication_factor` replicas would not fit its assignment znode. */
static gboolean
znode_fits(const Cluster *cluster, const char *name, guint partitions, guint replication_factor,
           GError **error)
{
    guint64 znode = cluster_topic_znode_bytes_max(partitions, replication_factor,
                                                  cluster->config.n_brokers);
    if (znode <= cluster_znode_bytes_limit())
        return TRUE;
    g_set_error(error, CLUSTER_ERROR, 6,
                "topic '%s': the assignment of %u partitions with replication factor %u takes "
                "up to %" G_GUINT64_FORMAT " bytes, above ZooKeeper's znode limit of "
                "%" G_GUINT64_FORMAT " bytes (jute.maxbuffer)",
                name, partitions, replication_factor, znode, cluster_znode_bytes_limit());
    return FALSE;
}

/* The checks Kafka's admin makes before a topic is created (name, not taken,
 * placeable, its assignment znode within ZooKeeper's limit). */
static gboolean
topic_creatable(const Cluster *cluster, const char *name, guint partitions,
                guint replication_factor, GError **error)
{
    if (!valid_topic_name(name)) {
        g_set_error(error, CLUSTER_ERROR, 1,
                    "invalid topic name '%s': use 1 to %d of [a-zA-Z0-9._-]", name,
                    KAFKA_TOPIC_NAME_MAX);
        return FALSE;
    }
    if (topic_find(cluster, name) != NULL) {
        g_set_error(error, CLUSTER_ERROR, 2, "topic '%s' already exists", name);
        return FALSE;
    }
    if (partitions == 0 || replication_factor == 0 ||
        replication_factor > cluster->config.n_brokers ||
        replication_factor > KAFKA_REPLICAS_MAX) {
        g_set_error(error, CLUSTER_ERROR, 3,
                    "topic '%s': %u partitions with replication factor %u cannot be placed on "
                    "%u brokers",
                    name, partitions, replication_factor, cluster->config.n_brokers);
        return FALSE;
    }
    return znode_fits(cluster, name, partitions, replication_factor, error);
}

/* Adds `topic` (its assignment filled) and writes its znode. */
static void
topic_add(Cluster *cluster, ClusterTopic *topic, const TopicConfig *config)
{
    g_ptr_array_add(cluster->topics, topic);
    for (guint i = 0; i < cluster->brokers->len; i++) {
        /* A topic without its own config takes each broker's defaults, as a
         * Kafka topic without overrides uses each broker's server.properties. */
        Broker *broker = g_ptr_array_index(cluster->brokers, i);
        TopicConfig defaults;
        topic_config_from_broker(&defaults, broker_config(broker));
        broker_set_topic_config(broker, topic->name, config != NULL ? config : &defaults);
    }
    if (cluster->controllers == NULL) {
        write_assignment(cluster, topic, TRUE);
        return;
    }
    /* KRaft: every controller knows the topic; the active one creates it
     * (kraft_controller_add_topic). */
    guint rf = ((const GArray *)g_ptr_array_index(topic->assignment, 0))->len;
    g_autofree gint32 *replicas = g_new(gint32, topic->assignment->len * rf);
    for (guint p = 0; p < topic->assignment->len; p++)
        memcpy(&replicas[p * rf], ((const GArray *)g_ptr_array_index(topic->assignment, p))->data,
               sizeof(gint32) * rf);
    TopicConfig defaults;
    topic_config_from_broker(&defaults, &cluster->config.broker);
    const TopicConfig *effective = config != NULL ? config : &defaults;
    for (guint i = 0; i < cluster->controllers->len; i++)
        kraft_controller_add_topic(g_ptr_array_index(cluster->controllers, i), topic->name,
                                   replicas, topic->assignment->len, rf,
                                   effective->unclean_leader_election,
                                   effective->min_insync_replicas);
}

static ClusterTopic *
topic_new(const char *name)
{
    ClusterTopic *topic = g_new0(ClusterTopic, 1);
    topic->name = g_strdup(name);
    topic->assignment = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    return topic;
}

gboolean
cluster_create_topic(Cluster *cluster, const char *name, guint partitions,
                     guint replication_factor, const TopicConfig *config, GError **error)
{
    return cluster_create_topic_rack_mode(cluster, name, partitions, replication_factor, config,
                                          CLUSTER_RACK_AWARE_ENFORCED, error);
}

gboolean
cluster_create_topic_rack_mode(Cluster *cluster, const char *name, guint partitions,
                               guint replication_factor, const TopicConfig *config,
                               ClusterRackAwareMode mode, GError **error)
{
    if (!topic_creatable(cluster, name, partitions, replication_factor, error) ||
        !cluster_check_racks(name, broker_racks(cluster), cluster->config.n_brokers, mode, error))
        return FALSE;
    ClusterTopic *topic = topic_new(name);
    topic->rack_mode = mode;
    assign_replicas(cluster, topic, 0, partitions, replication_factor);
    topic_add(cluster, topic, config);
    return TRUE;
}

/* Kafka's AdminUtils.validateReplicaAssignment: every partition as many
 * replicas, each an existing broker, none twice. */
gboolean
cluster_check_assignment(const char *name, const GPtrArray *assignment, guint n_brokers,
                         GError **error)
{
    if (assignment->len == 0) {
        g_set_error(error, CLUSTER_ERROR, 7, "topic '%s': the assignment names no partition",
                    name);
        return FALSE;
    }
    const GArray *first = g_ptr_array_index(assignment, 0);
    for (guint p = 0; p < assignment->len; p++) {
        const GArray *replicas = g_ptr_array_index(assignment, p);
        if (replicas->len != first->len) {
            g_set_error(error, CLUSTER_ERROR, 7,
                        "topic '%s': partition %u has %u replicas, partition 0 has %u (every "
                        "partition needs the same replication factor)",
                        name, p, replicas->len, first->len);
            return FALSE;
        }
        for (guint r = 0; r < replicas->len; r++) {
            gint32 id = g_array_index(replicas, gint32, r);
            if (id < 1 || (guint)id > n_brokers) {
                g_set_error(error, CLUSTER_ERROR, 7,
                            "topic '%s': partition %u names broker %d; the brokers are 1 to %u",
                            name, p, id, n_brokers);
                return FALSE;
            }
            for (guint q = 0; q < r; q++) {
                if (g_array_index(replicas, gint32, q) == id) {
                    g_set_error(error, CLUSTER_ERROR, 7,
                                "topic '%s': partition %u names broker %d twice", name, p, id);
                    return FALSE;
                }
            }
        }
    }
    return TRUE;
}

gboolean
cluster_create_topic_assigned(Cluster *cluster, const char *name, const GPtrArray *assignment,
                              const TopicConfig *config, GError **error)
{
    KSIM_ASSERT(assignment != NULL);
    guint rf = assignment->len > 0 ? ((const GArray *)g_ptr_array_index(assignment, 0))->len : 0;
    if (!cluster_check_assignment(name, assignment, cluster->config.n_brokers, error) ||
        !topic_creatable(cluster, name, assignment->len, rf, error))
        return FALSE;
    ClusterTopic *topic = topic_new(name);
    for (guint p = 0; p < assignment->len; p++) {
        const GArray *replicas = g_ptr_array_index(assignment, p);
        GArray *copy = g_array_sized_new(FALSE, FALSE, sizeof(gint32), replicas->len);
        g_array_append_vals(copy, replicas->data, replicas->len);
        g_ptr_array_add(topic->assignment, copy);
    }
    topic_add(cluster, topic, config);
    return TRUE;
}

void
cluster_set_topic_rack_mode(Cluster *cluster, const char *name, ClusterRackAwareMode mode)
{
    ClusterTopic *topic = topic_find(cluster, name);
    KSIM_ASSERT(topic != NULL);
    topic->rack_mode = mode;
}

gboolean
cluster_add_partitions(Cluster *cluster, const char *name, guint partitions, GError **error)
{
    ClusterTopic *topic = topic_find(cluster, name);
    if (topic == NULL) {
        g_set_error(error, CLUSTER_ERROR, 4, "unknown topic '%s'", name);
        return FALSE;
    }
    guint current = topic->assignment->len;
    if (partitions <= current) {
        g_set_error(error, CLUSTER_ERROR, 5,
                    "topic '%s' has %u partitions; the count can only grow (Kafka cannot "
                    "remove partitions)",
                    name, current);
        return FALSE;
    }
    const GArray *first = g_ptr_array_index(topic->assignment, 0);
    if (cluster->controllers != NULL) {
        /* KRaft: the controller places them; the cluster's view keeps the
         * count with no replicas of its own. */
        while (topic->assignment->len < partitions)
            g_ptr_array_add(topic->assignment, g_array_new(FALSE, FALSE, sizeof(gint32)));
        for (guint i = 0; i < cluster->controllers->len; i++)
            kraft_controller_add_partitions(g_ptr_array_index(cluster->controllers, i), name,
                                            partitions);
        return TRUE;
    }
    if (!znode_fits(cluster, name, partitions, first->len, error) ||
        !cluster_check_racks(name, broker_racks(cluster), cluster->config.n_brokers, topic->rack_mode, error))
        return FALSE;
    assign_replicas(cluster, topic, current, partitions, first->len);
    write_assignment(cluster, topic, FALSE);
    return TRUE;
}

guint
cluster_partition_count(const Cluster *cluster, const char *topic)
{
    const ClusterTopic *found = topic_find(cluster, topic);
    return found != NULL ? found->assignment->len : 0;
}

/* A partition a KRaft controller placed (CreatePartitions): its replicas
 * from the controller whose committed image is furthest along, once one has
 * them (placement does not change afterwards). */
static void
learn_kraft_replicas(const Cluster *cluster, const char *topic, gint32 partition,
                     GArray *replicas)
{
    gint64 id = kraft_record_store_find_topic(cluster->kraft_store, topic);
    const KraftImage *newest = NULL;
    for (guint i = 0; i < cluster->controllers->len && id >= 0; i++) {
        const KraftImage *image = kraft_controller_image(g_ptr_array_index(cluster->controllers, i));
        if (newest == NULL || kraft_image_end_offset(image) > kraft_image_end_offset(newest))
            newest = image;
    }
    const KraftPartition *p =
        newest != NULL ? kraft_image_partition(newest, (guint32)id, partition) : NULL;
    if (p != NULL)
        g_array_append_vals(replicas, p->replicas, p->n_replicas);
}

const GArray *
cluster_replicas(const Cluster *cluster, const char *topic, gint32 partition)
{
    const ClusterTopic *found = topic_find(cluster, topic);
    if (found == NULL || partition < 0 || (guint)partition >= found->assignment->len)
        return NULL;
    GArray *replicas = g_ptr_array_index(found->assignment, partition);
    if (replicas->len == 0 && cluster->controllers != NULL)
        learn_kraft_replicas(cluster, topic, partition, replicas);
    return replicas;
}

/* ---- accessors ---- */

guint
cluster_broker_count(const Cluster *cluster)
{
    return cluster->brokers->len;
}

const char *
cluster_broker_rack(const Cluster *cluster, gint32 broker_id)
{
    KSIM_ASSERT(broker_id >= 1 && (guint)broker_id <= cluster->brokers->len);
    return cluster->racks != NULL ? cluster->racks->pdata[broker_id - 1] : NULL;
}

Broker *
cluster_broker(const Cluster *cluster, gint32 broker_id)
{
    KSIM_ASSERT(broker_id >= 1 && (guint)broker_id <= cluster->brokers->len);
    return g_ptr_array_index(cluster->brokers, broker_id - 1);
}

ZkServer *
cluster_zk_server(const Cluster *cluster)
{
    return cluster->zk;
}

SimNodeId
cluster_zk_node(const Cluster *cluster)
{
    return zk_server_node(cluster->zk);
}

GArray *
cluster_bootstrap_nodes(const Cluster *cluster)
{
    GArray *nodes = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    for (guint i = 0; i < cluster->brokers->len; i++) {
        SimNodeId node = broker_node(g_ptr_array_index(cluster->brokers, i));
        g_array_append_val(nodes, node);
    }
    return nodes;
}

gint32
cluster_leader(const Cluster *cluster, const char *topic, gint32 partition)
{
    gint32 best = -1, best_epoch = -1;
    for (guint i = 0; i < cluster->brokers->len; i++) {
        BrokerPartitionInfo info;
        broker_partition_info(g_ptr_array_index(cluster->brokers, i), topic, partition, &info);
        if (info.present && info.is_leader && info.leader_epoch > best_epoch) {
            best = (gint32)i + 1;
            best_epoch = info.leader_epoch;
        }
    }
    return best;
}

gint32
cluster_follower(const Cluster *cluster, const char *topic, gint32 partition)
{
    return cluster_follower_nth(cluster, topic, partition, 1);
}

gint32
cluster_follower_nth(const Cluster *cluster, const char *topic, gint32 partition, guint nth)
{
    KSIM_ASSERT(nth >= 1);
    const GArray *replicas = cluster_replicas(cluster, topic, partition);
    gint32 leader = cluster_leader(cluster, topic, partition);
    guint seen = 0;
    for (guint i = 0; replicas != NULL && i < replicas->len; i++) {
        gint32 id = g_array_index(replicas, gint32, i);
        if (id != leader && broker_running(cluster_broker(cluster, id)) && ++seen == nth)
            return id;
    }
    if (replicas != NULL)
        return -1;
    /* An internal topic the brokers created themselves: the running brokers,
     * by id, that hold a replica and do not lead. */
    for (guint i = 0; i < cluster->brokers->len; i++) {
        Broker *broker = g_ptr_array_index(cluster->brokers, i);
        BrokerPartitionInfo info;
        broker_partition_info(broker, topic, partition, &info);
        if (info.present && !info.is_leader && broker_running(broker) && ++seen == nth)
            return (gint32)i + 1;
    }
    return -1;
}

gboolean
cluster_kraft(const Cluster *cluster)
{
    return cluster->controllers != NULL;
}

SimNodeId
cluster_active_controller_node(const Cluster *cluster)
{
    SimNodeId best = SIM_NODE_NONE;
    gint32 best_epoch = -1;
    for (guint i = 0; cluster->controllers != NULL && i < cluster->controllers->len; i++) {
        const KraftController *c = g_ptr_array_index(cluster->controllers, i);
        RaftNode *raft = kraft_controller_raft(c);
        if (kraft_controller_active(c) && raft_node_epoch(raft) > best_epoch) {
            best = raft_node_sim_node(raft);
            best_epoch = raft_node_epoch(raft);
        }
    }
    return best;
}

GArray *
cluster_controller_nodes(const Cluster *cluster)
{
    GArray *nodes = g_array_new(FALSE, FALSE, sizeof(SimNodeId));
    for (guint i = 0; cluster->raft_nodes != NULL && i < cluster->raft_nodes->len; i++) {
        SimNodeId node = raft_node_sim_node(g_ptr_array_index(cluster->raft_nodes, i));
        g_array_append_val(nodes, node);
    }
    return nodes;
}

SimNodeId
cluster_controller_node(const Cluster *cluster, gint32 node_id)
{
    for (guint i = 0; cluster->raft_nodes != NULL && i < cluster->raft_nodes->len; i++) {
        RaftNode *raft = g_ptr_array_index(cluster->raft_nodes, i);
        if (raft_node_id(raft) == node_id)
            return raft_node_sim_node(raft);
    }
    return SIM_NODE_NONE;
}

SimNodeId
cluster_quorum_follower_node(const Cluster *cluster)
{
    for (guint i = 0; cluster->controllers != NULL && i < cluster->controllers->len; i++) {
        const KraftController *c = g_ptr_array_index(cluster->controllers, i);
        RaftNode *raft = kraft_controller_raft(c);
        if (!kraft_controller_active(c) && raft_node_role(raft) != RAFT_ROLE_DOWN)
            return raft_node_sim_node(raft);
    }
    return SIM_NODE_NONE;
}

gint32
cluster_controller(const Cluster *cluster)
{
    if (cluster->config.kraft) {
        if (!cluster->config.combined)
            return -1;
        SimNodeId node = cluster_active_controller_node(cluster);
        for (guint i = 0; node != SIM_NODE_NONE && i < cluster->brokers->len; i++) {
            Broker *broker = g_ptr_array_index(cluster->brokers, i);
            if (broker_node(broker) == node)
                return broker_id(broker);
        }
        return -1;
    }
    gint32 best = -1, best_epoch = -1;
    for (guint i = 0; i < cluster->brokers->len; i++) {
        Broker *broker = g_ptr_array_index(cluster->brokers, i);
        if (broker_is_controller(broker) && broker_controller_epoch(broker) > best_epoch) {
            best = broker_id(broker);
            best_epoch = broker_controller_epoch(broker);
        }
    }
    return best;
}

guint
cluster_violations(const Cluster *cluster)
{
    return cluster->violations;
}

/* ---- final state ---- */

/* One replica's log at the end of a run. Replicas whose logs are stored
 * byte for byte alike (the usual case: followers keep the leader's encoded
 * batches) share one decoded `records` array. The bytes are read in place:
 * nothing changes a disk while the final pass reads them. */
typedef struct {
    gint32 broker;
    BrokerPartitionInfo info;
    gboolean has_log;
    gint64 log_start;    /* of the log read (0 without one) */
    GArray *spans;       /* PlogSpan: its verified batches from the log start,
                          * borrowed from its disk (a reference) */
    GArray *records;     /* HistoryRecord in offset order (a reference) */
    GArray *epochs;      /* HistoryEpochStart of `records` (a reference) */
} ReplicaLog;

static void
replica_log_free(gpointer data)
{
    ReplicaLog *replica = data;
    g_array_unref(replica->spans);
    g_array_unref(replica->records);
    g_array_unref(replica->epochs);
    g_free(replica);
}

/* Cuts `spans` (PlogSpan: the log's batches as stored, from its start to
 * its end, as far as the disk gave them whole) at the log's last whole
 * batch, as a torn tail the log has not recovered yet ends it: the first
 * batch that does not decode or verify ends the log. */
static void
spans_verified(GArray *spans)
{
    for (guint i = 0; i < spans->len; i++) {
        PlogSpan *span = &g_array_index(spans, PlogSpan, i);
        gsize whole = plog_batches_whole_bytes(span->data, span->len);
        if (whole < span->len) {
            span->len = whole;
            g_array_set_size(spans, whole > 0 ? i + 1 : i);
            return;
        }
    }
}

/* The data records of verified encoded batches (`spans`, PlogSpan) at or
 * above `log_start`, in offset order: control batches (transaction markers)
 * hold no data and are left out, so offsets may skip over them; and where
 * each leader epoch's records begin (*epochs). (transfer full) */
static GArray *
records_decode(const GArray *spans, gint64 log_start, GArray **epochs)
{
    guint count = 0;
    for (guint s = 0; s < spans->len; s++) {
        const PlogSpan *span = &g_array_index(spans, PlogSpan, s);
        for (gsize at = 0; at < span->len;) {
            PlogBatchHeader header;
            plog_batch_header_decode(span->data + at, span->len - at, &header);
            if ((header.attributes & PLOG_BATCH_CONTROL) == 0)
                count += (guint)header.record_count;
            at += (gsize)plog_batch_header_encoded_bytes(&header);
        }
    }
    GArray *records = g_array_new(FALSE, FALSE, sizeof(HistoryRecord));
    sim_array_reserve(records, count);
    g_array_set_size(records, count); /* not cleared: every kept slot is written below */
    HistoryRecord *out = (HistoryRecord *)(gpointer)records->data;
    guint kept = 0;
    *epochs = g_array_new(FALSE, FALSE, sizeof(HistoryEpochStart));
    g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(guint64));
    for (guint s = 0; s < spans->len; s++) {
        const PlogSpan *span = &g_array_index(spans, PlogSpan, s);
        for (gsize at = 0; at < span->len;) {
            PlogBatchHeader header;
            plog_batch_header_decode(span->data + at, span->len - at, &header);
            gsize len = (gsize)plog_batch_header_encoded_bytes(&header);
            if ((header.attributes & PLOG_BATCH_CONTROL) != 0) {
                at += len;
                continue;
            }
            g_array_set_size(values, (guint)header.record_count);
            gboolean decoded = plog_batch_decode_values(span->data + at, len, &header,
                                                        (guint64 *)(gpointer)values->data);
            KSIM_ASSERT(decoded); /* spans_verified verified the batch */
            at += len;
            const guint64 *value = (const guint64 *)(gconstpointer)values->data;
            gint64 first = MAX(header.base_offset, log_start);
            guint n_epochs = (*epochs)->len;
            if (first < header.base_offset + header.record_count &&
                (n_epochs == 0 ||
                 g_array_index(*epochs, HistoryEpochStart, n_epochs - 1).leader_epoch !=
                     header.leader_epoch)) {
                HistoryEpochStart start = {first, header.leader_epoch};
                g_array_append_val(*epochs, start);
            }
            for (gint32 r = 0; r < header.record_count; r++) {
                gint64 offset = header.base_offset + r;
                if (offset >= log_start)
                    out[kept++] = (HistoryRecord){offset, value[r]};
            }
        }
    }
    KSIM_ASSERT(kept <= count);
    g_array_set_size(records, kept);
    return records;
}

/* Every replica of the partition, in assignment order. (transfer full) */
static GPtrArray *
partition_logs(Cluster *cluster, const char *topic, gint32 partition)
{
    GPtrArray *logs = g_ptr_array_new_with_free_func(replica_log_free);
    const GArray *replicas = cluster_replicas(cluster, topic, partition);
    for (guint r = 0; replicas != NULL && r < replicas->len; r++) {
        ReplicaLog *replica = g_new0(ReplicaLog, 1);
        replica->broker = g_array_index(replicas, gint32, r);
        Broker *broker = cluster_broker(cluster, replica->broker);
        broker_partition_info(broker, topic, partition, &replica->info);
        Plog *log = broker_partition_log(broker, topic, partition);
        replica->has_log = log != NULL;
        gint64 log_start = log != NULL ? plog_log_start_offset(log) : 0;
        replica->log_start = log_start;
        GArray *spans = g_array_new(FALSE, FALSE, sizeof(PlogSpan));
        gboolean whole = log != NULL && plog_encoded_spans(log, spans);
        /* A follower's log is usually the leader's byte for byte: one read
         * whole and equal to another's verified batches shares its
         * records. */
        for (guint o = 0; o < logs->len && whole; o++) {
            const ReplicaLog *other = g_ptr_array_index(logs, o);
            if (other->has_log && other->log_start == log_start &&
                plog_spans_equal(spans, other->spans)) {
                replica->spans = g_array_ref(other->spans);
                replica->records = g_array_ref(other->records);
                replica->epochs = g_array_ref(other->epochs);
                break;
            }
        }
        if (replica->records == NULL) {
            spans_verified(spans);
            replica->spans = g_array_ref(spans);
            replica->records = records_decode(spans, log_start, &replica->epochs);
        }
        g_array_unref(spans);
        g_ptr_array_add(logs, replica);
    }
    return logs;
}

/* The record at `offset`, or NULL; offsets ascend, with gaps where control
 * batches were. */
static const HistoryRecord *
record_at(const GArray *records, gint64 offset)
{
    guint low = history_records_lower_bound(records, offset);
    if (low == records->len)
        return NULL;
    const HistoryRecord *record = &g_array_index(records, HistoryRecord, low);
    return record->offset == offset ? record : NULL;
}

static void
compare_replicas(Cluster *cluster, const KTopicPartition *tp, const ReplicaLog *a,
                 const ReplicaLog *b)
{
    if (a->records == b->records)
        return; /* byte-identical logs */
    gint64 upto = MIN(a->info.hw, b->info.hw);
    for (guint i = 0; i < a->records->len; i++) {
        const HistoryRecord *x = &g_array_index(a->records, HistoryRecord, i);
        if (x->offset >= upto)
            break;
        const HistoryRecord *y = record_at(b->records, x->offset);
        if (y == NULL || y->value == x->value)
            continue;
        violation(cluster, tp, a->broker,
                  "replicas %d and %d of %s-%d disagree at offset %" G_GINT64_FORMAT
                  " below their HWs (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                  "): values %" G_GUINT64_FORMAT " and %" G_GUINT64_FORMAT,
                  a->broker, b->broker, tp->topic, tp->partition, x->offset, a->info.hw,
                  b->info.hw, x->value, y->value);
        return;
    }
}

static void
check_partition_agreement(Cluster *cluster, const KTopicPartition *tp, const GPtrArray *logs)
{
    for (guint i = 0; i < logs->len; i++) {
        const ReplicaLog *a = g_ptr_array_index(logs, i);
        for (guint j = i + 1; j < logs->len && a->has_log; j++) {
            const ReplicaLog *b = g_ptr_array_index(logs, j);
            if (b->has_log)
                compare_replicas(cluster, tp, a, b);
        }
    }
}

static void
record_partition(Cluster *cluster, const char *topic, gint32 partition, const GPtrArray *logs)
{
    for (guint r = 0; r < logs->len; r++) {
        const ReplicaLog *log = g_ptr_array_index(logs, r);
        HistoryReplica replica = {0};
        replica.topic = history_topic(cluster->history, topic);
        replica.partition = partition;
        replica.broker = log->broker;
        replica.is_leader = log->info.is_leader;
        replica.online = log->info.present;
        replica.log_start = log->info.log_start;
        replica.leo = log->info.leo;
        replica.hw = log->info.hw;
        replica.txn_open_ms = log->info.present ? log->info.txn_open_ms : -1;
        replica.txn_max_timeout_ms = log->info.txn_max_timeout_ms;
        replica.records = g_array_ref(log->records);
        replica.epochs = g_array_ref(log->epochs);
        history_add_replica(cluster->history, &replica);
    }
}

/* Checks agreement (check) and/or records the final state (record) of every
 * partition, decoding each distinct log once. */
static void
final_pass(Cluster *cluster, gboolean check, gboolean record)
{
    for (guint t = 0; t < cluster->topics->len; t++) {
        const ClusterTopic *topic = g_ptr_array_index(cluster->topics, t);
        for (guint p = 0; p < topic->assignment->len; p++) {
            g_autoptr(GPtrArray) logs = partition_logs(cluster, topic->name, (gint32)p);
            KTopicPartition tp;
            ktp_set(&tp, topic->name, (gint32)p);
            if (check)
                check_partition_agreement(cluster, &tp, logs);
            if (record)
                record_partition(cluster, topic->name, (gint32)p, logs);
        }
    }
}

void
cluster_check_agreement(Cluster *cluster)
{
    final_pass(cluster, TRUE, FALSE);
}

void
cluster_record_final_state(Cluster *cluster)
{
    if (cluster->history != NULL)
        final_pass(cluster, FALSE, TRUE);
}

void
cluster_finish(Cluster *cluster)
{
    final_pass(cluster, TRUE, cluster->history != NULL);
}

/* Partitions a liveness message names before it only counts the rest. */
#define UNCONVERGED_SHOWN 10

/* The partitions without a leader or with a short ISR: their count, the
 * first UNCONVERGED_SHOWN described into `what`; with `what` NULL, stops at
 * the first (is anything unconverged?). */
static guint
unconverged_scan(const Cluster *cluster, GString *what)
{
    guint count = 0;
    for (guint t = 0; t < cluster->topics->len; t++) {
        const ClusterTopic *topic = g_ptr_array_index(cluster->topics, t);
        for (guint p = 0; p < topic->assignment->len; p++) {
            const GArray *replicas = cluster_replicas(cluster, topic->name, (gint32)p);
            gint32 leader = cluster_leader(cluster, topic->name, (gint32)p);
            BrokerPartitionInfo info = {0};
            if (leader >= 0)
                broker_partition_info(cluster_broker(cluster, leader), topic->name, (gint32)p,
                                      &info);
            if (leader >= 0 && info.n_isr == replicas->len)
                continue;
            count++;
            if (what == NULL)
                return count;
            if (count > UNCONVERGED_SHOWN)
                continue;
            if (leader < 0) {
                g_string_append_printf(what, "%s%s-%u has no leader", what->len ? "; " : "",
                                       topic->name, p);
                continue;
            }
            g_string_append_printf(what, "%s%s-%u: leader %d (epoch %d, LEO %" G_GINT64_FORMAT
                                         ", HW %" G_GINT64_FORMAT ") has ISR [",
                                   what->len ? "; " : "", topic->name, p, leader,
                                   info.leader_epoch, info.leo, info.hw);
            for (guint i = 0; i < info.n_isr; i++)
                g_string_append_printf(what, "%s%d", i ? "," : "", info.isr[i]);
            g_string_append_c(what, ']');
        }
    }
    return count;
}

char *
cluster_unconverged(const Cluster *cluster)
{
    GString *what = g_string_new(NULL);
    guint count = unconverged_scan(cluster, what);
    if (count == 0) {
        g_string_free(what, TRUE);
        return NULL;
    }
    if (count > UNCONVERGED_SHOWN)
        g_string_append_printf(what, "; and %u more partitions", count - UNCONVERGED_SHOWN);
    return g_string_free(what, FALSE);
}

static gboolean
settled(const Cluster *cluster)
{
    if (cluster->topics->len == 0)
        return FALSE;
    return unconverged_scan(cluster, NULL) == 0;
}

gboolean
cluster_wait_settled(Cluster *cluster, gint64 timeout_ns)
{
    gint64 deadline = sim_now_ns(cluster->world) + timeout_ns;
    while (sim_now_ns(cluster->world) < deadline) {
        if (settled(cluster))
            return TRUE;
        sim_world_run_until(cluster->world,
                            MIN(deadline, sim_now_ns(cluster->world) + 10 * SIM_NS_PER_MS));
    }
    return settled(cluster);
}

void
cluster_check_invariants(const Cluster *cluster)
{
    KSIM_ASSERT(cluster->brokers->len == cluster->config.n_brokers);
    for (guint i = 0; i < cluster->brokers->len; i++)
        broker_check_invariants(g_ptr_array_index(cluster->brokers, i));
    zk_server_check_invariants(cluster->zk);
    if (cluster->controllers == NULL)
        return;
    /* KRaft: every controller's own invariants, and the quorum's across its
     * voters (one leader per epoch, monotonic epochs and HW, committed
     * records never change: RaftEventSimulationTest's). */
    for (guint i = 0; i < cluster->controllers->len; i++)
        kraft_controller_check_invariants(g_ptr_array_index(cluster->controllers, i));
    g_autoptr(GString) why = g_string_new(NULL);
    if (!raft_check_observe(cluster->raft_check, (RaftNode *const *)cluster->raft_nodes->pdata,
                            cluster->raft_nodes->len, why))
        sim_assert_fail(__FILE__, __LINE__, G_STRFUNC, why->str);
}

void
cluster_check_logs(const Cluster *cluster)
{
    for (guint i = 0; i < cluster->brokers->len; i++)
        broker_check_logs(g_ptr_array_index(cluster->brokers, i));
}
