/*
 * scenario: scenario files, read and validated into fully resolved runs.
 *
 * A scenario file is an INI file in GKeyFile's dialect, read by ksim's own
 * parser (scenario_ini.c gives the grammar). Full-line comments start with '#'
 * or ';'; a ';' or '#' preceded by white space starts a comment at the end of
 * a line. Values are taken as written, trimmed; there are no continuation
 * lines. A commented example of every group is tests/data/scenarios/example.ini.
 *
 * Groups (each at most once; NAME is [A-Za-z0-9._-]+, a topic name as Kafka
 * allows it):
 *
 *   [scenario]            name, description, duration (required), quiet (10s),
 *                         seed (1), paranoid (false)
 *   [cluster]             brokers (3; ids 1..N), network.latency,
 *                         network.bandwidth, disk.fsync.latency, and any Kafka
 *                         broker key (min.insync.replicas, ksim.truncation.mode...)
 *   [broker N]            broker N's own broker keys over [cluster]'s (N in
 *                         1..brokers; keys every broker must agree on, such as
 *                         num.partitions and offsets.topic.num.partitions, are
 *                         refused); broker.rack here, or [cluster] racks dealt
 *                         round robin, gives the brokers racks
 *   [topic NAME]          partitions and replication.factor (default: the
 *                         broker's num.partitions and default.replication.factor)
 *                         and any Kafka topic key; unset topic keys take the
 *                         broker's value, as in Kafka
 *   [producer NAME]       topic (default: the only topic), instances (1), the
 *                         workload.* keys and any Kafka producer key
 *   [consumer-group NAME] topics (required), members (1), processing.mode
 *                         (auto | commit-before-processing | process-then-commit
 *                         | process-then-commit-async),
 *                         processing.time (const:1ms), poll.interval (const:10ms),
 *                         members.start (0s), members.stop (null: never) and any
 *                         Kafka consumer key; group.id defaults to NAME, and
 *                         sections sharing a group.id form one group
 *   [fault NAME]          at (required), action (required), and the keys the
 *                         action takes: target, duration, groups, to, count,
 *                         delay, factor (see ScenarioAction)
 *   [random-faults]       kinds, interval, duration (all required),
 *                         max.concurrent (1), start (0s), stop (the duration)
 *   [vary]                KEY = V1, V2, ...   (see below)
 *   [expect]              NAME = METRIC OP NUMBER [when KEY=VALUE [and ...]]
 *
 * Durations of ksim's own keys need a unit (ns us ms s m h; a bare 0 is
 * allowed); Kafka's *.ms keys take a bare number of ms as in Kafka, or a unit.
 * Sizes take a bare number of bytes or KiB, MiB, GiB, KB, MB, GB. The workload:
 * workload.rate (records per virtual second per instance, 100),
 * workload.arrival (constant | poisson | bursts), workload.burst (ON,OFF, e.g.
 * 100ms,900ms), workload.keys (none | uniform:K | zipf:K,S),
 * workload.record.size (a size distribution, const:100), workload.partition
 * (-1: the partitioner), workload.send (async | sync), workload.start (0s),
 * workload.stop (the scenario's duration).
 *
 * Targets: broker:N (1..brokers), leader(TOPIC-P), follower(TOPIC-P) (resolved
 * when the fault fires), follower(TOPIC-P, K) (the K-th running replica other
 * than the leader, in assignment order, when the fault fires; follower(TOPIC-P)
 * is K 1), replica(TOPIC-P, broker:N) (broker N, which must hold a replica of
 * the partition whatever the seed), rack:NAME (every broker of the rack),
 * controller, random (a random live broker), zk (the
 * coordination node), producer:NAME (every instance), consumer:NAME (every
 * member of [consumer-group NAME]) or consumer:NAME-K (its K-th member). A
 * partition's groups are
 * separated by '|' and their members by ',': "1,2 | 3"; a bare number is a
 * broker id, and any target may appear. Nodes in no group keep every path.
 *
 * [vary] keys are bare ("acks": every group where the key is valid among
 * [scenario], [cluster], the topics, producers and consumer groups, never a
 * [broker N], which "broker N:KEY" names — a key both
 * broker and topic level applies to the cluster and every topic) or qualified
 * by a group ("topic orders:min.insync.replicas", "fault kill:at"). Values are
 * separated by ',' or, when a value itself contains commas (distributions), by
 * '|'. Runs are the cross product in file order, the first key varying slowest;
 * each run is labelled "acks=all" or "acks=1,min.insync.replicas=2" (a file
 * without [vary] has one run, labelled "default"). Every run uses the same seed.
 *
 * [expect]: METRIC is one of the metrics of reports/metrics.h (the counters
 * of the run summary: lost_write, duplicate, failed_but_present, ...,
 * latency_ms.produce.p99); OP is one of == != < <= > >=. `when` conditions
 * (joined by "and" or ",") use '=' or '!=' on a varied key, written as in
 * [vary] or bare when unambiguous, and a value among its varied values. An
 * expectation applies to the runs whose settings match every condition.
 *
 * A UTF-8 byte-order mark at the start of a file is skipped; lines may end in
 * LF or CRLF. A file is read up to its size limit and one byte more, never
 * whole, so a device or a huge file costs no more than the limit.
 * Errors: every message has the form "FILE:LINE: [GROUP] KEY: message"
 * (without LINE, GROUP or KEY where they do not apply; a --set error shows the
 * assignment in place of LINE), says what form was expected, and suggests the
 * closest known name for a misspelt group, key, topic, producer or metric. A
 * value set by [vary] is reported at the [vary] line, with the run it broke.
 *
 * Consistency checks: replication factor above the brokers, min.insync.replicas
 * above the replication factor, Kafka's idempotent producer checks (acks=all,
 * retries > 0, at most 5 in flight, transactional.id needs idempotence) when
 * enable.idempotence is set explicitly, delivery.timeout.ms >= linger.ms +
 * request.timeout.ms when set explicitly, replica.fetch.wait.max.ms <=
 * replica.lag.time.max.ms, heartbeat.interval.ms < session.timeout.ms within
 * the broker's group session bounds, an explicit workload partition below the
 * partition count, and no time past the scenario's duration.
 */
#ifndef KSIM_SCENARIO_H
#define KSIM_SCENARIO_H

#include "kconfig.h"
#include "sim_rng.h"

#include <glib.h>

typedef struct Scenario Scenario;
typedef struct ScenarioVariant ScenarioVariant;

#define KSIM_SCENARIO_ERROR (ksim_scenario_error_quark())
GQuark ksim_scenario_error_quark(void);
typedef enum {
    KSIM_SCENARIO_ERROR_IO,           /* the file cannot be read */
    KSIM_SCENARIO_ERROR_SYNTAX,       /* not a well-formed INI file; a group or key twice */
    KSIM_SCENARIO_ERROR_UNKNOWN,      /* unknown group, key, target, topic, producer, metric */
    KSIM_SCENARIO_ERROR_VALUE,        /* a value of the wrong form, unit or range */
    KSIM_SCENARIO_ERROR_MISSING,      /* a required key is absent */
    KSIM_SCENARIO_ERROR_INCONSISTENT, /* settings that contradict each other or the timeline */
} KsimScenarioErrorCode;

/* ---- Faults ---- */

typedef enum {
    SCENARIO_ACTION_CRASH,          /* target; duration: restart after */
    SCENARIO_ACTION_POWER_LOSS,     /* target (broker or zk); duration: restart after */
    SCENARIO_ACTION_RESTART,        /* target: broker:N, zk or producer:NAME */
    SCENARIO_ACTION_PAUSE,          /* target; duration: resume after */
    SCENARIO_ACTION_RESUME,         /* target: broker:N, zk or producer:NAME */
    SCENARIO_ACTION_PARTITION,      /* groups; duration: heal after */
    SCENARIO_ACTION_ONE_WAY,        /* target -> to cut; duration: heal after */
    SCENARIO_ACTION_ISOLATE,        /* target; duration: heal after */
    SCENARIO_ACTION_HEAL,           /* every network fault */
    SCENARIO_ACTION_DISK_SLOW,      /* target, factor; duration: back to normal after */
    SCENARIO_ACTION_DISK_FULL,      /* target; duration: back to normal after */
    SCENARIO_ACTION_LOSE,           /* target -> to, count */
    SCENARIO_ACTION_DELAY,          /* target -> to, count, delay */
    SCENARIO_ACTION_DUPLICATE,      /* target -> to, count */
    SCENARIO_ACTION_EXPIRE_SESSION, /* target broker's coordination session */
    SCENARIO_ACTION_CRASH_ZK,       /* duration: restart after */
    SCENARIO_ACTION_RESTART_ZK,
    SCENARIO_ACTION_ADD_PARTITIONS, /* topic, partitions: grow a topic (kafka-topics --alter) */
    SCENARIO_ACTION_SHUTDOWN,       /* target broker stops cleanly (SIGTERM); duration: restart */
    SCENARIO_ACTION_DISK_ERROR,     /* target broker's log dir fails (EIO); duration: disk
                                     * replaced by an empty one, broker restarted */
    SCENARIO_ACTION_LOSS,           /* target [-> to], rate; duration: heal after */
    SCENARIO_ACTION_LATENCY,        /* target [-> to], latency [jitter]; duration: heal after */
    SCENARIO_ACTION_BANDWIDTH,      /* target [-> to], bandwidth; duration: heal after */
    SCENARIO_ACTION_CLOCK,          /* target, offset; duration: stepped back after */
    SCENARIO_ACTION_HOLD,           /* target [-> to], message, delay, count */
} ScenarioAction;

/* "crash", "power-loss", ... as written in files. (transfer none) */
const char *scenario_action_name(ScenarioAction action);

typedef enum {
    SCENARIO_TARGET_NONE,       /* the action takes no target */
    SCENARIO_TARGET_BROKER,     /* broker:N */
    SCENARIO_TARGET_LEADER,     /* leader(T-P), resolved when the fault fires */
    SCENARIO_TARGET_FOLLOWER,   /* follower(T-P), resolved when the fault fires */
    SCENARIO_TARGET_CONTROLLER, /* the controller when the fault fires */
    SCENARIO_TARGET_RANDOM,     /* a random live broker */
    SCENARIO_TARGET_ZK,         /* the coordination node */
    SCENARIO_TARGET_PRODUCER,   /* producer:NAME, every instance */
    SCENARIO_TARGET_REST,       /* "*" in partition groups: every broker and zk named in
                                 * no other group */
    SCENARIO_TARGET_CONSUMER,   /* consumer:NAME, every member of [consumer-group NAME], or
                                 * consumer:NAME-K, its K-th member (1..members) */
    SCENARIO_TARGET_RACK,       /* rack:NAME, every broker whose broker.rack is NAME */
    SCENARIO_TARGET_REPLICA,    /* replica(T-P, broker:N): broker N, which holds a replica */
    /* KRaft: controller:N, the controller with node.id N; quorum-follower, a
     * voter that is not the active controller when the fault fires (the
     * lowest node.id of them). */
    SCENARIO_TARGET_CONTROLLER_NODE,
    SCENARIO_TARGET_QUORUM_FOLLOWER,
} ScenarioTargetKind;

typedef struct {
    ScenarioTargetKind kind;
    guint broker;    /* BROKER, REPLICA: 1..brokers; CONTROLLER_NODE: its node.id */
    char *topic;     /* LEADER, FOLLOWER, REPLICA */
    guint partition; /* LEADER, FOLLOWER, REPLICA */
    guint nth;       /* FOLLOWER: follower(T-P, K)'s K; 0 for follower(T-P), which is K 1 */
    char *rack;      /* RACK */
    char *producer;  /* PRODUCER */
    char *consumer;  /* CONSUMER: the [consumer-group NAME] */
    guint instance;  /* CONSUMER: 1..members, or 0 for every member */
} ScenarioTarget;

/* The target as a file would write it, e.g. "leader(orders-0)". (transfer full) */
char *scenario_target_format(const ScenarioTarget *target);

typedef struct {
    char *name;     /* NAME of [fault NAME] */
    guint index;    /* position among the faults in the file */
    gint64 time_ns; /* `at` */
    ScenarioAction action;
    ScenarioTarget target; /* kind NONE for partition, heal, crash-zk, restart-zk */
    ScenarioTarget to;     /* one-way, lose, delay, duplicate, hold; else kind NONE */
    /* partition: the groups, each a GArray of ScenarioTarget; else empty. */
    GPtrArray *groups;
    gint64 duration_ns; /* 0: not undone by itself */
    guint count;        /* lose, delay, duplicate; else 0 */
    gint64 delay_ns;    /* delay, hold; else 0 */
    guint32 message_type; /* hold: the request type held (KafkaMsgType); else 0 */
    double factor;      /* disk-slow; else 0 */
    char *topic;        /* add-partitions; else NULL */
    guint partitions;   /* add-partitions: the new count; else 0 */
    guint32 loss_per_million;     /* loss: transmissions lost per million; else 0 */
    SimDist latency;              /* latency: with the jitter folded in; else const 0 */
    gint64 bandwidth_bytes_per_s; /* bandwidth; else 0 */
    gint64 clock_offset_ns;       /* clock: the step; else 0 */
} ScenarioFault;

/* The denominator of ScenarioFault.loss_per_million. */
#define SCENARIO_LOSS_DENOMINATOR 1000000u

typedef struct {
    GArray *kinds;    /* ScenarioAction, in the order written */
    SimDist interval; /* ns between fault starts */
    SimDist duration; /* ns each fault lasts */
    guint concurrent_max;
    gint64 start_ns;
    gint64 stop_ns; /* no fault starts after this */
    gboolean swarm; /* each seed draws a subset of the kinds and an interval scale */
} ScenarioRandomFaults;

/* ---- Topology and workload ---- */

/* The most voters a KRaft quorum has (RAFT_VOTERS_MAX). */
#define SCENARIO_VOTERS_MAX 16

typedef struct {
    guint brokers;
    SimDist network_latency;              /* ns */
    gint64 network_bandwidth_bytes_per_s; /* 0: unlimited */
    SimDist disk_fsync_latency;           /* ns */
    KConfig *config;                      /* broker keys (scope BROKER) */
    KConfig *hardware; /* the keys above (scope CLUSTER), which the runner binds */
    /* Each broker's own keys, [cluster]'s with its [broker N] over them:
     * KConfig* (scope BROKER), broker i+1's at index i; NULL where a broker
     * has no [broker N] group and takes `config`. */
    GPtrArray *broker_configs;
    /* Each broker's rack (char*, NULL: none), broker i+1's at index i; NULL
     * when no broker has a rack. */
    GPtrArray *racks;
    /* KRaft (metadata.mode = kraft; none in ZooKeeper mode): process.roles =
     * broker,controller (combined mode: the voters run in brokers), and the
     * quorum's voters by node.id, ascending: `controllers` dedicated
     * controllers 3000 up, or in combined mode the first `controllers`
     * brokers (at most `brokers`), unless controller.quorum.voters names
     * them (scenario_kraft.c). */
    gboolean combined;
    guint n_voters;
    gint32 voter_ids[SCENARIO_VOTERS_MAX];
} ScenarioCluster;

/* TRUE when `node_id` is one of the cluster's KRaft voters. */
gboolean scenario_cluster_is_voter(const ScenarioCluster *cluster, gint32 node_id);
/* "controller:1, controller:2, controller:3": the voters as fault targets.
 * (transfer full) */
char *scenario_cluster_voters_text(const ScenarioCluster *cluster);
/* Kafka's QuorumConfig.parseVoterConnections over controller.quorum.voters'
 * entries ("{id}@{host}:{port}", trimmed): the ids in the order written,
 * into `ids` (SCENARIO_VOTERS_MAX); FALSE with *why (transfer full) for a
 * malformed entry, an id twice, none, or too many. ksim's nodes have no
 * addresses: host and port are checked for form only. */
gboolean scenario_parse_quorum_voters(const char *const *entries, gint32 *ids, guint *n_ids,
                                      char **why);

typedef struct {
    char *name;
    guint partitions;
    guint replication_factor;
    /* replica.assignment: a GArray of gint32 broker ids per partition; NULL:
     * Kafka's assignment, drawn from the seed. */
    GPtrArray *assignment;
    KConfig *config; /* topic keys over the cluster's broker config */
    gboolean disable_rack_aware; /* disable.rack.aware: placed as if no broker had a rack */
} ScenarioTopic;

typedef enum {
    SCENARIO_ARRIVAL_CONSTANT,
    SCENARIO_ARRIVAL_POISSON,
    SCENARIO_ARRIVAL_BURSTS,
} ScenarioArrival;

typedef enum {
    SCENARIO_KEYS_NONE,    /* keyless records: the partitioner's keyless rule */
    SCENARIO_KEYS_UNIFORM, /* key_count keys, uniformly */
    SCENARIO_KEYS_ZIPF,    /* key_count keys, Zipf with exponent zipf_s */
} ScenarioKeys;

typedef struct {
    double rate_per_s; /* records per virtual second, per instance */
    ScenarioArrival arrival;
    gint64 burst_on_ns;  /* BURSTS */
    gint64 burst_off_ns; /* BURSTS */
    ScenarioKeys keys;
    guint64 key_count;
    double zipf_s;
    SimDist record_size; /* bytes */
    gint32 partition;    /* -1: the partitioner */
    gboolean send_sync;
    gint64 start_ns;
    gint64 stop_ns;
    guint32 txn_records;    /* transaction.records; 0 without transactional.id */
    double txn_abort_ratio; /* transaction.abort.ratio */
} ScenarioWorkload;

typedef struct {
    char *name;
    char *topic;
    guint instances;
    KConfig *config; /* producer keys (scope PRODUCER) */
    ScenarioWorkload workload;
    KConfig *workload_config; /* the workload's keys (scope WORKLOAD), which the runner binds */
} ScenarioProducer;

typedef enum {
    SCENARIO_PROCESSING_AUTO,                     /* auto */
    SCENARIO_PROCESSING_COMMIT_BEFORE_PROCESSING, /* commit-before-processing */
    SCENARIO_PROCESSING_PROCESS_THEN_COMMIT,      /* process-then-commit */
    SCENARIO_PROCESSING_PROCESS_THEN_COMMIT_ASYNC, /* process-then-commit-async */
} ScenarioProcessingMode;

/* One [consumer-group NAME]: `members` consumers, each subscribed from
 * start_ns to stop_ns. Several sections may share one group id (group.id)
 * to give one group members with different lifetimes. */
typedef struct {
    char *name;      /* NAME */
    char *group_id;  /* group.id, or NAME when it is null */
    GStrv topics;
    guint members;
    KConfig *config; /* consumer keys (scope CONSUMER) */
    KConfig *members_config; /* the keys below (scope CONSUMER_GROUP), which the runner binds */
    ScenarioProcessingMode processing_mode; /* processing.mode */
    SimDist processing_time;                /* processing.time, ns */
    SimDist poll_interval;                  /* poll.interval, ns */
    gint64 start_ns;                        /* members.start */
    gint64 stop_ns;                         /* members.stop; -1: never */
    /* pipeline.output: NULL for a plain group; else each member is a
     * consume-transform-produce job writing to this topic (runner_clients.h). */
    char *pipeline_output;
    gboolean exactly_once;                  /* exactly.once */
} ScenarioConsumerGroup;

/* One varied key and its value in a run. */
typedef struct {
    char *key; /* as [vary] writes it */
    char *value;
} ScenarioSetting;

/* ---- Expectations ---- */

typedef enum {
    SCENARIO_OP_EQ,
    SCENARIO_OP_NE,
    SCENARIO_OP_LT,
    SCENARIO_OP_LE,
    SCENARIO_OP_GT,
    SCENARIO_OP_GE,
} ScenarioOp;

/* "==", "!=", "<", "<=", ">", ">=". (transfer none) */
const char *scenario_op_symbol(ScenarioOp op);

typedef struct {
    char *key;        /* the varied key as [vary] writes it */
    char *value;      /* one of its varied values */
    gboolean negated; /* KEY!=VALUE */
} ScenarioCondition;

typedef struct {
    char *name;
    char *metric; /* a name metrics_find (reports/metrics.h) knows */
    ScenarioOp op;
    double value;
    GPtrArray *when; /* ScenarioCondition*, all must hold */
    guint line;
    char *text; /* the expression as written */
} ScenarioExpect;

/* ---- Scenario ---- */

/* Reads and validates the file at `path`. NULL with a message on any error.
 * (transfer full) */
Scenario *scenario_load(const char *path, GError **error);
/* The same for text in memory; `display_name` stands for the file in messages
 * and gives the default scenario name. (transfer full) */
Scenario *scenario_load_data(const char *text, const char *display_name, GError **error);
/* The same for `length` bytes that need not end in NUL and may contain any
 * byte (a file's contents as read, a fuzzer's input): a NUL byte, invalid
 * UTF-8 or more than the size limit is refused like any bad file.
 * (transfer full) */
Scenario *scenario_load_bytes(const char *bytes, gsize length, const char *display_name,
                              GError **error);
void scenario_free(Scenario *scenario);

/* The scenario's name ([scenario] name, else the file's base name without
 * ".ini"), description, path (NULL from scenario_load_data) and the SHA-256
 * of the file's bytes as 64 hex digits. (transfer none) */
const char *scenario_name(const Scenario *scenario);
const char *scenario_description(const Scenario *scenario);
const char *scenario_path(const Scenario *scenario);
const char *scenario_sha256(const Scenario *scenario);
/* The file's bytes exactly as read (the SHA-256 covers them), NUL-terminated;
 * `length` (may be NULL) gets their count. (transfer none) */
const char *scenario_text(const Scenario *scenario, gsize *length);
/* The default seed of the first run. */
guint64 scenario_seed(const Scenario *scenario);

/* Applies a --set KEY=VALUE, the key bare or GROUP:key as in [vary]
 * ("acks=1", "scenario:duration=30s", "topic orders:partitions=6"). When the
 * key is the one a [vary] line varies (same targets), the runs are narrowed to
 * that value. The whole scenario is validated again; on error it is unchanged
 * and the message names the assignment. */
gboolean scenario_apply_set(Scenario *scenario, const char *assignment, GError **error);
/* The --set assignments applied, in order. (transfer none) */
const GPtrArray *scenario_overrides(const Scenario *scenario);

/* The number of runs (the product of the [vary] value counts, at least 1). */
guint scenario_variant_count(const Scenario *scenario);
/* Every run, in order, each fully resolved and independent of the scenario.
 * (transfer full: free with g_ptr_array_unref) */
GPtrArray *scenario_variants(const Scenario *scenario);

/* The expectations in file order. (transfer none) */
const GPtrArray *scenario_expects(const Scenario *scenario);
/* TRUE when every `when` condition of `expect` holds for `variant`. */
gboolean scenario_expect_applies(const ScenarioExpect *expect, const ScenarioVariant *variant);
/* TRUE when `measured` OP value holds. */
gboolean scenario_expect_holds(const ScenarioExpect *expect, double measured);

/* Checks the scenario's bookkeeping; aborts through KSIM_ASSERT. */
void scenario_check_invariants(const Scenario *scenario);

/* ---- One run ---- */

void scenario_variant_free(ScenarioVariant *variant);
guint scenario_variant_index(const ScenarioVariant *variant);
/* "acks=all", "acks=1,min.insync.replicas=2", or "default". (transfer none) */
const char *scenario_variant_label(const ScenarioVariant *variant);
/* The varied keys and this run's values, in [vary] order: ScenarioSetting*.
 * (transfer none) */
const GPtrArray *scenario_variant_settings(const ScenarioVariant *variant);

gint64 scenario_variant_duration_ns(const ScenarioVariant *variant);
gint64 scenario_variant_quiet_ns(const ScenarioVariant *variant);
guint64 scenario_variant_seed(const ScenarioVariant *variant);
/* [scenario] paranoid: check every invariant after every event. */
gboolean scenario_variant_paranoid(const ScenarioVariant *variant);

/* (transfer none; all valid while the variant lives) */
const ScenarioCluster *scenario_variant_cluster(const ScenarioVariant *variant);
const KConfig *scenario_variant_broker_config(const ScenarioVariant *variant);
/* Broker `broker_id`'s own keys: [cluster]'s with its [broker N] over them. */
const KConfig *scenario_variant_broker_config_of(const ScenarioVariant *variant, guint broker_id);
/* The topic keys broker `broker_id` applies to `topic`: the topic's own
 * keys over that broker's (as each Kafka broker fills a topic's unset keys
 * from its own server.properties). (transfer full) */
KConfig *scenario_topic_config_of(const ScenarioVariant *variant, const ScenarioTopic *topic,
                                  guint broker_id);
/* ScenarioTopic*, in file order. */
const GPtrArray *scenario_variant_topics(const ScenarioVariant *variant);
const ScenarioTopic *scenario_variant_find_topic(const ScenarioVariant *variant, const char *name);
/* ScenarioProducer*, in file order. */
const GPtrArray *scenario_variant_producers(const ScenarioVariant *variant);
/* ScenarioConsumerGroup*, in file order. */
const GPtrArray *scenario_variant_consumer_groups(const ScenarioVariant *variant);
/* ScenarioFault*, ordered by (time_ns, index). */
const GPtrArray *scenario_variant_faults(const ScenarioVariant *variant);
/* NULL when the scenario has no [random-faults]. */
const ScenarioRandomFaults *scenario_variant_random_faults(const ScenarioVariant *variant);

G_DEFINE_AUTOPTR_CLEANUP_FUNC(Scenario, scenario_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(ScenarioVariant, scenario_variant_free)

#endif
