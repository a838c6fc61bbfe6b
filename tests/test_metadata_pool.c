/*
 * metadata_pool: brokers' metadata caches share one copy of each distinct
 * partition state. Equal states (as the wire carries them, whatever the
 * unused slots hold) intern to one copy; different ones do not; the last
 * release frees a copy; and a cluster's brokers, each told the same states,
 * hold them once between them. A broker's cache keeps its states in
 * (topic, partition) order, as a balanced tree would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "broker.h"
#include "cluster_fixture.h"
#include "metadata_pool.h"
#include "sim_rng.h"

static KPartitionState
state_of(const char *topic, gint32 partition, gint32 leader, gint32 epoch)
{
    KPartitionState s;
    memset(&s, 0, sizeof s);
    ktp_set(&s.tp, topic, partition);
    s.leader = leader;
    s.leader_epoch = epoch;
    s.controller_epoch = 1;
    s.n_replicas = 3;
    s.n_isr = 2;
    for (guint i = 0; i < 3; i++)
        s.replicas[i] = (gint32)i + 1;
    s.isr[0] = 1;
    s.isr[1] = 2;
    return s;
}

static void
test_equal_states_share_one_copy(void **unused)
{
    (void)unused;
    MetadataPool *pool = metadata_pool_new();
    KPartitionState a = state_of("t", 0, 1, 5);
    KPartitionState b = a;
    /* Garbage past the counts tells nothing apart; the name is interned. */
    b.isr[7] = 99;
    b.replicas[15] = -4;
    char name[] = "t";
    ktp_set(&b.tp, name, 0);
    name[0] = 'x';
    const KPartitionState *pa = metadata_pool_intern(pool, &a);
    const KPartitionState *pb = metadata_pool_intern(pool, &b);
    assert_ptr_equal(pa, pb);
    assert_int_equal(metadata_pool_size(pool), 1);
    assert_string_equal(pa->tp.topic, "t");
    assert_int_equal(pa->isr[7], 0);
    metadata_pool_check_invariants(pool);
    /* Every field of the wire tells states apart. */
    KPartitionState c = a;
    c.leader_epoch = 6;
    KPartitionState d = a;
    d.isr[1] = 3;
    KPartitionState e = a;
    e.n_isr = 1;
    KPartitionState f = state_of("u", 0, 1, 5);
    KPartitionState g = a;
    g.zk_version = 2;
    const KPartitionState *others[5] = {
        metadata_pool_intern(pool, &c), metadata_pool_intern(pool, &d),
        metadata_pool_intern(pool, &e), metadata_pool_intern(pool, &f),
        metadata_pool_intern(pool, &g),
    };
    assert_int_equal(metadata_pool_size(pool), 6);
    for (guint i = 0; i < 5; i++) {
        assert_ptr_not_equal(others[i], pa);
        metadata_pool_release((gpointer)others[i]);
    }
    assert_int_equal(metadata_pool_size(pool), 1);
    /* The copy lives until its last reference goes. */
    metadata_pool_release((gpointer)pa);
    assert_int_equal(metadata_pool_size(pool), 1);
    assert_int_equal(pb->leader_epoch, 5);
    metadata_pool_release((gpointer)pb);
    assert_int_equal(metadata_pool_size(pool), 0);
    metadata_pool_check_invariants(pool);
    metadata_pool_unref(pool);
}

/* A three-broker cluster with one topic of 12 partitions: every broker
 * caches every partition's state, and the pool the cluster gives them holds
 * each state once, not three times (it holds more than 12 only while the
 * brokers disagree, one having heard of a newer state than another). */
static void
test_cluster_brokers_share_states(void **unused)
{
    (void)unused;
    ClusterConfig config;
    fixture_config_fast(&config);
    Fixture *f = fixture_new(1, &config, 12, -1, NULL);
    run_for(f, 2 * SIM_NS_PER_S);
    guint cached = 0;
    for (gint32 b = 1; b <= 3; b++)
        cached += broker_metadata_partitions(cluster_broker(f->cluster, b), TOPIC);
    assert_int_equal(cached, 36);
    MetadataPool *pool = broker_metadata_pool(cluster_broker(f->cluster, 1));
    for (gint32 b = 2; b <= 3; b++)
        assert_ptr_equal(broker_metadata_pool(cluster_broker(f->cluster, b)), pool);
    /* Settled, the brokers agree: one copy of each of the 12 states. */
    assert_int_equal(metadata_pool_size(pool), 12);
    metadata_pool_check_invariants(pool);
    fixture_free(f);
}

static gint
tree_compare(gconstpointer a, gconstpointer b, gpointer unused)
{
    (void)unused;
    return ktp_compare(a, b);
}

/* A property test against a GTree: random partitions of random topics,
 * replaced in any order (in order too, as a cluster creates them, and
 * again with new leaders), give the same lookups and the same walk in key
 * order, from the start or from any key, as the tree; the cache releases
 * every state it replaced and, freed, every state it held. */
static void
test_cache_is_an_ordered_map(void **unused)
{
    (void)unused;
    static const char *topics[] = {"a", "orders", "b", "t00", "t01", "zz", "m"};
    SimRng *rng = sim_rng_new(11, "metadata-cache");
    for (guint round = 0; round < 6; round++) {
        MetadataPool *pool = metadata_pool_new();
        MetadataCache *cache = metadata_cache_new();
        GTree *tree = g_tree_new_full(tree_compare, NULL, g_free, NULL);
        guint n = round < 3 ? 700 : 3000;
        for (guint k = 0; k < n; k++) {
            const char *topic;
            gint32 partition;
            if (round % 3 == 0) { /* in order, as created */
                topic = topics[k / 500 % G_N_ELEMENTS(topics)];
                partition = (gint32)(k % 500);
            } else {
                topic = topics[sim_rng_range(rng, 0, G_N_ELEMENTS(topics))];
                partition = (gint32)sim_rng_range(rng, 0, round % 3 == 1 ? 40 : 900);
            }
            gint32 leader = (gint32)sim_rng_range(rng, 1, 4);
            KPartitionState s = state_of(topic, partition, leader, (gint32)k);
            metadata_cache_replace(cache, metadata_pool_intern(pool, &s));
            KPartitionState *copy = g_new(KPartitionState, 1);
            *copy = s;
            g_tree_replace(tree, &copy->tp, copy);
        }
        metadata_cache_check_invariants(cache);
        assert_int_equal(metadata_cache_size(cache), g_tree_nnodes(tree));
        /* Every state the pool holds is one the cache holds. */
        assert_int_equal(metadata_pool_size(pool), g_tree_nnodes(tree));
        for (guint probe = 0; probe < 400; probe++) {
            KTopicPartition tp;
            ktp_set(&tp, topics[sim_rng_range(rng, 0, G_N_ELEMENTS(topics))],
                    (gint32)sim_rng_range(rng, 0, 1000));
            const KPartitionState *want = g_tree_lookup(tree, &tp);
            const KPartitionState *got = metadata_cache_lookup(cache, &tp);
            if (want == NULL) {
                assert_null(got);
            } else {
                assert_non_null(got);
                assert_true(ktp_equal(&got->tp, &tp));
                assert_int_equal(got->leader_epoch, want->leader_epoch);
            }
            /* The walk from `tp` meets the tree's nodes from its lower bound. */
            MetadataCacheIter iter;
            metadata_cache_iter_init(cache, &tp, &iter);
            GTreeNode *node = g_tree_lower_bound(tree, &tp);
            for (guint step = 0; step < 20 && node != NULL; step++) {
                const KPartitionState *ps = metadata_cache_iter_next(cache, &iter);
                assert_non_null(ps);
                assert_true(ktp_equal(&ps->tp, g_tree_node_key(node)));
                node = g_tree_node_next(node);
            }
            if (node == NULL)
                assert_null(metadata_cache_iter_next(cache, &iter));
        }
        /* The whole walk is the tree's. */
        MetadataCacheIter iter;
        metadata_cache_iter_init(cache, NULL, &iter);
        for (GTreeNode *node = g_tree_node_first(tree); node != NULL; node = g_tree_node_next(node))
            assert_true(ktp_equal(&metadata_cache_iter_next(cache, &iter)->tp,
                                  g_tree_node_key(node)));
        assert_null(metadata_cache_iter_next(cache, &iter));
        metadata_cache_free(cache);
        assert_int_equal(metadata_pool_size(pool), 0);
        metadata_pool_unref(pool);
        g_tree_destroy(tree);
    }
    sim_rng_free(rng);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_states_share_one_copy),
        cmocka_unit_test(test_cluster_brokers_share_states),
        cmocka_unit_test(test_cache_is_an_ordered_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
