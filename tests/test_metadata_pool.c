/*
 * metadata_pool: brokers' metadata caches share one copy of each distinct
 * partition state. Equal states (as the wire carries them, whatever the
 * unused slots hold) intern to one copy; different ones do not; the last
 * release frees a copy; and a cluster's brokers, each told the same states,
 * hold them once between them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "broker.h"
#include "cluster_fixture.h"
#include "metadata_pool.h"

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
    /* Garbage past the counts and in the name's tail tells nothing apart. */
    b.isr[7] = 99;
    b.replicas[15] = -4;
    b.tp.topic[40] = 'x';
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

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_states_share_one_copy),
        cmocka_unit_test(test_cluster_brokers_share_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
