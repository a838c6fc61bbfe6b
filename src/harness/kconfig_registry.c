/*
 * kconfig_registry: every configuration key ksim knows, with its scope, type,
 * default, range and one line of documentation. Kafka's keys keep Kafka's names
 * and defaults; ksim's own keys carry KSIM_KEY. kconfig.c holds the functions.
 */
#include "kconfig_internal.h"

/* ---- Choices ---- */

static const KConfigChoice ACKS_CHOICES[] = {
    {"all", NULL}, {"-1", "all"}, {"0", NULL}, {"1", NULL}, {NULL, NULL}};
static const KConfigChoice CLEANUP_POLICY_CHOICES[] = {
    {"delete", NULL}, {"compact", NULL}, {NULL, NULL}};
static const KConfigChoice TRUNCATION_CHOICES[] = {
    {"hw", NULL}, {"leader-epoch", NULL}, {"kip-101", NULL}, {NULL, NULL}};
static const KConfigChoice SERVICE_DISTRIBUTION_CHOICES[] = {
    {"fixed", NULL}, {"exponential", NULL}, {NULL, NULL}};
static const KConfigChoice PARTITIONER_CHOICES[] = {
    {"sticky", NULL},
    {"round-robin", NULL},
    {"org.apache.kafka.clients.producer.RoundRobinPartitioner", "round-robin"},
    {"org.apache.kafka.clients.producer.internals.DefaultPartitioner", "sticky"},
    {NULL, NULL}};
static const KConfigChoice COMPRESSION_CHOICES[] = {
    {"none", NULL}, {"gzip", NULL}, {"snappy", NULL}, {"lz4", NULL}, {"zstd", NULL}, {NULL, NULL}};
static const KConfigChoice OFFSET_RESET_CHOICES[] = {
    {"latest", NULL}, {"earliest", NULL}, {"none", NULL}, {NULL, NULL}};
static const KConfigChoice ISOLATION_CHOICES[] = {
    {"read_uncommitted", NULL}, {"read_committed", NULL}, {NULL, NULL}};
static const KConfigChoice ASSIGNOR_CHOICES[] = {
    {"range", NULL},
    {"roundrobin", NULL},
    {"sticky", NULL},
    {"cooperative-sticky", NULL},
    {"org.apache.kafka.clients.consumer.RangeAssignor", "range"},
    {"org.apache.kafka.clients.consumer.RoundRobinAssignor", "roundrobin"},
    {"org.apache.kafka.clients.consumer.StickyAssignor", "sticky"},
    {"org.apache.kafka.clients.consumer.CooperativeStickyAssignor", "cooperative-sticky"},
    {NULL, NULL}};
static const KConfigChoice SERVER_ASSIGNOR_CHOICES[] = {
    {"uniform", NULL},
    {"range", NULL},
    {"org.apache.kafka.coordinator.group.assignor.UniformAssignor", "uniform"},
    {"org.apache.kafka.coordinator.group.assignor.RangeAssignor", "range"},
    {NULL, NULL}};
static const KConfigChoice GROUP_PROTOCOL_CHOICES[] = {
    {"classic", NULL}, {"consumer", NULL}, {NULL, NULL}};
static const KConfigChoice ARRIVAL_CHOICES[] = {
    {"constant", NULL}, {"poisson", NULL}, {"bursts", NULL}, {NULL, NULL}};
static const KConfigChoice METADATA_MODE_CHOICES[] = {
    {"zookeeper", NULL}, {"kraft", NULL}, {NULL, NULL}};
/* KIP-966's spelling, as its configuration documents it. */
static const KConfigChoice UNCLEAN_RECOVERY_CHOICES[] = {
    {"Balanced", NULL}, {"Aggressive", NULL}, {"None", NULL}, {NULL, NULL}};
static const KConfigChoice PROCESS_ROLE_CHOICES[] = {
    {"broker", NULL}, {"controller", NULL}, {NULL, NULL}};
static const KConfigChoice SEND_CHOICES[] = {{"async", NULL}, {"sync", NULL}, {NULL, NULL}};
static const KConfigChoice PROCESSING_MODE_CHOICES[] = {{"auto", NULL},
                                                        {"commit-before-processing", NULL},
                                                        {"process-then-commit", NULL},
                                                        {"process-then-commit-async", NULL},
                                                        {NULL, NULL}};
static const KConfigChoice TIMESTAMP_TYPE_CHOICES[] = {
    {"CreateTime", NULL}, {"LogAppendTime", NULL}, {NULL, NULL}};
static const KConfigChoice ACTION_CHOICES[] = {
    {"crash", NULL},      {"power-loss", NULL},     {"restart", NULL},        {"pause", NULL},
    {"resume", NULL},     {"partition", NULL},      {"one-way", NULL},        {"isolate", NULL},
    {"heal", NULL},       {"disk-slow", NULL},      {"disk-full", NULL},      {"lose", NULL},
    {"delay", NULL},      {"duplicate", NULL},      {"expire-session", NULL}, {"crash-zk", NULL},
    {"restart-zk", NULL}, {"add-partitions", NULL}, {"shutdown", NULL},       {"disk-error", NULL},
    {"loss", NULL},       {"latency", NULL},        {"bandwidth", NULL},      {"clock", NULL},
    {"hold", NULL},       {NULL, NULL}};
/* hold: the requests a fault can hold, by their Kafka API names. */
static const KConfigChoice MESSAGE_CHOICES[] = {
    {"Produce", NULL},         {"Fetch", NULL},           {"Metadata", NULL},
    {"InitProducerId", NULL},  {"FindCoordinator", NULL}, {"JoinGroup", NULL},
    {"SyncGroup", NULL},       {"Heartbeat", NULL},       {"LeaveGroup", NULL},
    {"OffsetCommit", NULL},    {"OffsetFetch", NULL},     {"AddPartitionsToTxn", NULL},
    {"AddOffsetsToTxn", NULL}, {"EndTxn", NULL},          {"WriteTxnMarkers", NULL},
    {"TxnOffsetCommit", NULL}, {NULL, NULL}};
/* Random faults are only the kinds that can be undone after their duration. */
static const KConfigChoice RANDOM_KIND_CHOICES[] = {
    {"crash", NULL},      {"power-loss", NULL}, {"pause", NULL},     {"partition", NULL},
    {"isolate", NULL},    {"disk-slow", NULL},  {"disk-full", NULL}, {"crash-zk", NULL},
    {"disk-error", NULL}, {NULL, NULL}};

/* ---- The registry ---- */

#define KEY(name_, scope_, type_, default_, ...)                                                   \
    {                                                                                              \
        .name = (name_), .scope = KCONFIG_SCOPE_##scope_, .type = KCONFIG_TYPE_##type_,            \
        .default_value = (default_), __VA_ARGS__                                                   \
    }
#define RANGE(lo, hi) .min = (lo), .max = (hi)
#define IN_MS .unit_ns = MS
#define KSIM_KEY .flags = KCONFIG_FLAG_KSIM
#define KSIM_REQUIRED .flags = KCONFIG_FLAG_KSIM | KCONFIG_FLAG_REQUIRED

const KConfigKey kconfig_registry_table[] = {
    /* Broker (Kafka's KafkaConfig). */
    KEY("num.partitions", BROKER, INT, "1", RANGE(1, I32),
        .doc = "Partitions of a topic created without a partition count."),
    KEY("default.replication.factor", BROKER, INT, "1", RANGE(1, 32767),
        .doc = "Replication factor of a topic created without one."),
    KEY("min.insync.replicas", BROKER, INT, "1", RANGE(1, I32),
        .doc = "Fewest in-sync replicas for an acks=all append to be accepted."),
    KEY("unclean.leader.election.enable", BROKER, BOOL, "false",
        .doc = "Elect an out-of-sync replica when no in-sync one is alive (may lose data)."),
    KEY("replica.lag.time.max.ms", BROKER, DURATION, "30000", RANGE(0, I64), IN_MS,
        .doc = "A follower not caught up for this long leaves the ISR."),
    KEY("replica.fetch.wait.max.ms", BROKER, DURATION, "500", RANGE(0, I32), IN_MS,
        .doc = "Longest wait of a follower fetch for replica.fetch.min.bytes."),
    KEY("replica.fetch.min.bytes", BROKER, SIZE, "1", RANGE(0, I32),
        .doc = "Bytes a follower fetch waits for before it is answered."),
    KEY("replica.fetch.max.bytes", BROKER, SIZE, "1048576", RANGE(0, I32),
        .doc = "Bytes per partition a follower fetch asks for."),
    KEY("replica.fetch.backoff.ms", BROKER, DURATION, "1000", RANGE(0, I32), IN_MS,
        .doc = "Pause of a follower after a fetch error."),
    KEY("replica.socket.timeout.ms", BROKER, DURATION, "30000", RANGE(0, I32), IN_MS,
        .doc = "Timeout of a follower's fetch request."),
    KEY("max.incremental.fetch.session.cache.slots", BROKER, INT, "1000", RANGE(0, I32),
        .doc = "Incremental fetch sessions (KIP-227) a broker keeps; 0: every fetch is full."),
    KEY("replica.high.watermark.checkpoint.interval.ms", BROKER, DURATION, "5000", RANGE(1, I64),
        IN_MS, .doc = "How often each broker writes its HWs to disk."),
    KEY("zookeeper.session.timeout.ms", BROKER, DURATION, "18000", RANGE(1, I32), IN_MS,
        .doc = "A broker's coordination session expires after this long without heartbeats."),
    KEY("zookeeper.connection.timeout.ms", BROKER, DURATION, NULL, RANGE(1, I32), IN_MS,
        .fallback = "zookeeper.session.timeout.ms",
        .doc = "Longest wait to connect to the coordination node (null: the session timeout).",
        .only_default = "the coordination client keeps reconnecting for as long as its session "
                        "lasts"),
    KEY("zookeeper.max.in.flight.requests", BROKER, INT, "10", RANGE(1, I32),
        .doc = "Most coordination requests a broker (its controller above all) has "
               "unanswered at once; the others wait (Kafka 1.1+)."),
    KEY("broker.heartbeat.interval.ms", BROKER, DURATION, "2000", RANGE(1, I32), IN_MS,
        .doc = "KRaft: how often a broker heartbeats to the active controller."),
    KEY("controller.quorum.request.timeout.ms", BROKER, DURATION, "2000", RANGE(1, I32), IN_MS,
        .doc = "KRaft: how long a broker waits for a controller's answer before it asks "
               "another."),
    KEY("node.id", BROKER, INT, NULL, RANGE(0, I32),
        .doc = "Refused: ksim numbers its nodes (broker N has node.id N, dedicated KRaft "
               "controllers 3000 up).",
        .refused = "ksim numbers its nodes itself: broker N ([broker N], broker-N) has node.id "
                   "N, and dedicated KRaft controllers 3000 up (controller-3000 ...); name them "
                   "by these ids in controller.quorum.voters and in fault targets (broker:N, "
                   "controller:N)"),
    KEY("controller.socket.timeout.ms", BROKER, DURATION, "30000", RANGE(0, I32), IN_MS,
        .doc = "Timeout of the controller's requests to brokers."),
    KEY("log.segment.bytes", BROKER, SIZE, "1073741824", RANGE(14, I32),
        .doc = "A log segment is rolled at this size."),
    KEY("log.roll.ms", BROKER, DURATION, NULL, RANGE(1, I64), IN_MS, .fallback = "log.roll.hours",
        .doc = "A log segment is rolled at this age (null: log.roll.hours)."),
    KEY("log.roll.hours", BROKER, DURATION, "168", RANGE(1, I32), .unit_ns = HOUR,
        .doc = "A log segment is rolled at this age, in hours."),
    KEY("log.index.interval.bytes", BROKER, SIZE, "4096", RANGE(0, I32),
        .doc = "Bytes of log between two sparse offset index entries."),
    KEY("log.message.timestamp.type", BROKER, ENUM, "CreateTime", .choices = TIMESTAMP_TYPE_CHOICES,
        .doc = "Record timestamps: the producer's clock (CreateTime) or the leader's at append "
               "(LogAppendTime)."),
    KEY("log.retention.ms", BROKER, DURATION, NULL, RANGE(-1, I64), IN_MS,
        .fallback = "log.retention.minutes",
        .doc = "Segments older than this are deleted; -1: no limit (null: minutes)."),
    KEY("log.retention.minutes", BROKER, DURATION, NULL, RANGE(-1, I32), .unit_ns = MINUTE,
        .fallback = "log.retention.hours", .doc = "Retention in minutes (null: hours)."),
    KEY("log.retention.hours", BROKER, DURATION, "168", RANGE(-1, I32), .unit_ns = HOUR,
        .doc = "Retention in hours."),
    KEY("log.retention.bytes", BROKER, SIZE, "-1", RANGE(-1, I64),
        .doc = "Oldest segments are deleted beyond this size per partition; -1: no limit."),
    KEY("log.retention.check.interval.ms", BROKER, DURATION, "300000", RANGE(1, I64), IN_MS,
        .doc = "How often retention runs."),
    KEY("log.flush.offset.checkpoint.interval.ms", BROKER, DURATION, "60000", RANGE(1, I32),
        IN_MS,
        .doc = "How often each broker writes its logs' recovery points to disk; recovery after "
               "a crash re-reads what was appended since."),
    KEY("log.flush.interval.messages", BROKER, LONG, "9223372036854775807", RANGE(1, I64),
        .doc = "fsync a log after this many messages (default: never; replication is the "
               "durability)."),
    KEY("log.flush.interval.ms", BROKER, DURATION, NULL, RANGE(0, I64), IN_MS,
        .fallback = "log.flush.scheduler.interval.ms",
        .doc = "fsync a log when its oldest unflushed message is this old (null: scheduler "
               "interval)."),
    KEY("log.flush.scheduler.interval.ms", BROKER, DURATION, "9223372036854775807", RANGE(0, I64),
        IN_MS, .doc = "How often the flusher checks whether a log needs fsync."),
    KEY("log.cleanup.policy", BROKER, LIST, "delete", .choices = CLEANUP_POLICY_CHOICES,
        .doc = "delete and/or compact old segments.",
        .only_default = "log compaction is not modelled; old segments are deleted"),
    KEY("offsets.topic.num.partitions", BROKER, INT, "50", RANGE(1, I32),
        .doc = "Partitions of __consumer_offsets."),
    KEY("offsets.topic.replication.factor", BROKER, INT, "3", RANGE(1, 32767),
        .doc = "Replication factor of __consumer_offsets."),
    KEY("offsets.commit.timeout.ms", BROKER, DURATION, "5000", RANGE(1, I32), IN_MS,
        .doc = "An offset commit waits this long for its replication."),
    KEY("offsets.retention.minutes", BROKER, DURATION, "10080", RANGE(1, I32), .unit_ns = MINUTE,
        .doc = "Committed offsets of an empty group are kept this long.",
        .only_default = "committed offsets never expire (runs are far shorter than a week)"),
    KEY("transaction.state.log.num.partitions", BROKER, INT, "50", RANGE(1, I32),
        .doc = "Partitions of __transaction_state."),
    KEY("transaction.state.log.replication.factor", BROKER, INT, "3", RANGE(1, 32767),
        .doc = "Replication factor of __transaction_state."),
    KEY("transaction.state.log.min.isr", BROKER, INT, "2", RANGE(1, I32),
        .doc = "min.insync.replicas of __transaction_state."),
    KEY("transaction.max.timeout.ms", BROKER, DURATION, "900000", RANGE(1, I32), IN_MS,
        .doc = "Largest transaction.timeout.ms a producer may ask for."),
    KEY("transaction.abort.timed.out.transaction.cleanup.interval.ms", BROKER, DURATION, "10000",
        RANGE(1, I32), IN_MS, .doc = "How often the coordinator aborts timed-out transactions."),
    KEY("transaction.partition.verification.enable", BROKER, BOOL, "false",
        .doc = "KIP-890 part 1 (Kafka 3.6+, where it defaults to true): a leader asks the "
               "transaction coordinator whether a producer's first transactional batch belongs "
               "to an ongoing transaction before appending it, so a late batch is refused "
               "(INVALID_TXN_STATE) instead of opening a hanging transaction. ksim's default "
               "is off, the Kafka 2.x-3.5 behaviour its library was written for."),
    KEY("group.initial.rebalance.delay.ms", BROKER, DURATION, "3000", RANGE(0, I32), IN_MS,
        .doc = "The coordinator waits this long for more members before the first rebalance."),
    KEY("group.min.session.timeout.ms", BROKER, DURATION, "6000", RANGE(0, I32), IN_MS,
        .doc = "Smallest session.timeout.ms a consumer may ask for."),
    KEY("group.max.session.timeout.ms", BROKER, DURATION, "1800000", RANGE(0, I32), IN_MS,
        .doc = "Largest session.timeout.ms a consumer may ask for."),
    KEY("group.consumer.session.timeout.ms", BROKER, DURATION, "45000", RANGE(1, I32), IN_MS,
        .doc = "KIP-848 groups (group.protocol=consumer): a member without a heartbeat this long "
               "is fenced and removed by the coordinator."),
    KEY("group.consumer.heartbeat.interval.ms", BROKER, DURATION, "5000", RANGE(1, I32), IN_MS,
        .doc = "KIP-848 groups: the heartbeat interval the coordinator gives its members."),
    KEY("group.consumer.assignors", BROKER, LIST, "uniform,range",
        .choices = SERVER_ASSIGNOR_CHOICES,
        .doc = "KIP-848 groups: the server-side assignors, the first the default (uniform, "
               "range)."),
    KEY("controlled.shutdown.enable", BROKER, BOOL, "true",
        .doc = "A broker stopping cleanly (the shutdown action) first asks the controller to "
               "move its leaderships away."),
    KEY("controlled.shutdown.max.retries", BROKER, INT, "3", RANGE(0, I32),
        .doc = "Controlled shutdown attempts after the first before the broker stops anyway."),
    KEY("controlled.shutdown.retry.backoff.ms", BROKER, DURATION, "5000", RANGE(0, I32), IN_MS,
        .doc = "Wait between controlled shutdown attempts."),
    KEY("auto.leader.rebalance.enable", BROKER, BOOL, "true",
        .doc = "Move leadership back to preferred replicas periodically."),
    KEY("leader.imbalance.check.interval.seconds", BROKER, DURATION, "300", RANGE(1, I64),
        .unit_ns = SECOND, .doc = "How often the controller checks leader imbalance."),
    KEY("leader.imbalance.per.broker.percentage", BROKER, INT, "10", RANGE(0, 100),
        .doc = "A broker's share of partitions it should lead but does not that triggers a "
               "rebalance."),
    KEY("message.max.bytes", BROKER, SIZE, "1048588", RANGE(0, I32),
        .doc = "Largest record batch a broker accepts.",
        .only_default = "brokers accept batches of any size (bound them with the producer's "
                        "max.request.size and batch.size)"),
    KEY("ksim.truncation.mode", BROKER, ENUM, "hw", .choices = TRUNCATION_CHOICES, KSIM_KEY,
        .doc = "hw: truncate to the HW (the study notes' design, Kafka before 0.11); "
               "leader-epoch: KIP-101 with KIP-279 (Kafka 2.1+); kip-101: KIP-101 alone "
               "(Kafka 0.11-1.1)."),
    KEY("broker.rack", BROKER, STRING, NULL, RANGE(0, 255),
        .doc = "The broker's rack or availability zone (null: none); the admin places a topic's "
               "replicas rack-aware when every broker has one (kafka-topics refuses some with "
               "and some without unless disable.rack.aware)."),
    KEY("ksim.fetch.quiet.partitions", BROKER, BOOL, "true", KSIM_KEY,
        .doc = "A leader skips, in an incremental fetch, the session's partitions whose last "
               "read answered nothing and that nothing has touched since (the answers are "
               "the same either way; false reads every partition of the session on each "
               "fetch, as Kafka does, and is slower with many partitions)."),
    KEY("ksim.leader.and.isr.partition.time", BROKER, DURATION, "50us", RANGE(0, 1000000000),
        KSIM_KEY,
        .doc = "A broker's time to apply one partition state of a LeaderAndIsr request "
               "(becoming leader or follower); calibrated so a controller failover costs "
               "about what Kafka 1.1's does (14 s for 100,000 partitions, J. Rao 2018)."),
    KEY("ksim.update.metadata.partition.time", BROKER, DURATION, "5us", RANGE(0, 1000000000),
        KSIM_KEY,
        .doc = "A broker's time to apply one partition state of an UpdateMetadata request "
               "(a metadata cache update)."),

    /* Request handling: Kafka's SocketServer, RequestChannel and
     * KafkaRequestHandlerPool. The service-time defaults are calibrated in
     * scenarios/example.ini's comments. */
    KEY("num.network.threads", BROKER, INT, "3", RANGE(1, 1024),
        .doc = "Network threads (SocketServer processors): each connection is pinned to one, "
               "which reads its requests and writes its responses in order."),
    KEY("queued.max.requests", BROKER, INT, "500", RANGE(1, 1000000),
        .doc = "Requests that may wait for an I/O thread; when full, a network thread with a "
               "request blocks and reads nothing more until there is room."),
    KEY("num.io.threads", BROKER, INT, "8", RANGE(1, 1024),
        .doc = "I/O threads (request handlers) that take requests from the request queue."),
    KEY("ksim.request.service.distribution", BROKER, ENUM, "fixed",
        .choices = SERVICE_DISTRIBUTION_CHOICES, KSIM_KEY,
        .doc = "How a request's I/O-thread and network-thread times are drawn from their "
               "means: fixed (the mean) or exponential (M/M/c queueing)."),
    KEY("ksim.request.time", BROKER, DURATION, "50us", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "An I/O thread's time per request (parsing, authorisation, dispatch)."),
    KEY("ksim.request.batch.time", BROKER, DURATION, "10us", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "An I/O thread's time per record batch produced or partition fetched "
               "(validation, offset assignment, log append or read setup)."),
    KEY("ksim.request.mib.time", BROKER, DURATION, "1ms", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "An I/O thread's time per MiB produced (CRC check and copy into the page cache; "
               "1ms: about 1 GiB/s per thread)."),
    KEY("ksim.network.request.time", BROKER, DURATION, "10us", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "A network thread's time per request read or response written."),
    KEY("ksim.network.mib.time", BROKER, DURATION, "500us", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "A network thread's time per MiB read or written (fetched data goes out "
               "zero-copy, so this is socket time; 500us: about 2 GiB/s per thread)."),

    /* Topic (Kafka's LogConfig), each overriding a broker key. */
    KEY("partitions", TOPIC, INT, "1", RANGE(1, 1 << 24), .overrides = "num.partitions", KSIM_KEY,
        .doc = "Number of partitions (kafka-topics --partitions)."),
    KEY("replica.assignment", TOPIC, STRING, NULL, KSIM_KEY,
        .doc = "Each partition's replicas, the preferred leader first, as kafka-topics "
               "--replica-assignment takes them: 1:2:3, 2:3:1 (null: Kafka's assignment, drawn "
               "from the seed). Sets partitions and replication.factor."),
    KEY("disable.rack.aware", TOPIC, BOOL, "false", KSIM_KEY,
        .doc = "Place the topic's replicas, now and when add-partitions grows it, as if no broker "
               "had a rack (kafka-topics --disable-rack-aware)."),
    KEY("replication.factor", TOPIC, INT, "1", RANGE(1, 32767),
        .overrides = "default.replication.factor", KSIM_KEY,
        .doc = "Replicas per partition (kafka-topics --replication-factor)."),
    KEY("min.insync.replicas", TOPIC, INT, "1", RANGE(1, I32), .overrides = "min.insync.replicas",
        .doc = "Fewest in-sync replicas for an acks=all append to be accepted."),
    KEY("unclean.leader.election.enable", TOPIC, BOOL, "false",
        .overrides = "unclean.leader.election.enable",
        .doc = "Elect an out-of-sync replica when no in-sync one is alive."),
    KEY("retention.ms", TOPIC, DURATION, "604800000", RANGE(-1, I64), IN_MS,
        .overrides = "log.retention.ms", .doc = "Segments older than this are deleted."),
    KEY("retention.bytes", TOPIC, SIZE, "-1", RANGE(-1, I64), .overrides = "log.retention.bytes",
        .doc = "Oldest segments are deleted beyond this size per partition."),
    KEY("segment.bytes", TOPIC, SIZE, "1073741824", RANGE(14, I32),
        .overrides = "log.segment.bytes", .doc = "A log segment is rolled at this size."),
    KEY("segment.ms", TOPIC, DURATION, "604800000", RANGE(1, I64), IN_MS,
        .overrides = "log.roll.ms", .doc = "A log segment is rolled at this age."),
    KEY("flush.messages", TOPIC, LONG, "9223372036854775807", RANGE(1, I64),
        .overrides = "log.flush.interval.messages", .doc = "fsync after this many messages."),
    KEY("flush.ms", TOPIC, DURATION, "9223372036854775807", RANGE(0, I64), IN_MS,
        .overrides = "log.flush.interval.ms", .doc = "fsync when data is this old."),
    KEY("index.interval.bytes", TOPIC, SIZE, "4096", RANGE(0, I32),
        .overrides = "log.index.interval.bytes", .doc = "Bytes between sparse index entries."),
    KEY("message.timestamp.type", TOPIC, ENUM, "CreateTime", .choices = TIMESTAMP_TYPE_CHOICES,
        .overrides = "log.message.timestamp.type",
        .doc = "CreateTime (the producer's clock) or LogAppendTime (the leader's at append)."),
    KEY("cleanup.policy", TOPIC, LIST, "delete", .choices = CLEANUP_POLICY_CHOICES,
        .overrides = "log.cleanup.policy", .doc = "delete and/or compact old segments.",
        .only_default = "log compaction is not modelled; old segments are deleted"),
    KEY("max.message.bytes", TOPIC, SIZE, "1048588", RANGE(0, I32),
        .overrides = "message.max.bytes", .doc = "Largest record batch the topic accepts.",
        .only_default = "brokers accept batches of any size (bound them with the producer's "
                        "max.request.size and batch.size)"),

    /* Producer (Kafka 3.x ProducerConfig). */
    KEY("acks", PRODUCER, ENUM, "all", .choices = ACKS_CHOICES,
        .doc = "0: no answer; 1: the leader's append; all: every in-sync replica."),
    KEY("enable.idempotence", PRODUCER, BOOL, "true",
        .doc = "Producer id and sequence numbers so retries write each record once."),
    KEY("retries", PRODUCER, INT, "2147483647", RANGE(0, I32),
        .doc = "Retries of a failed batch (bounded by delivery.timeout.ms)."),
    KEY("batch.size", PRODUCER, SIZE, "16384", RANGE(0, I32),
        .doc = "Bytes per partition batch before it is sent."),
    KEY("linger.ms", PRODUCER, DURATION, "0", RANGE(0, I64), IN_MS,
        .doc = "Wait this long for a batch to fill."),
    KEY("buffer.memory", PRODUCER, SIZE, "33554432", RANGE(0, I64),
        .doc = "Bytes of records waiting to be sent."),
    KEY("max.block.ms", PRODUCER, DURATION, "60000", RANGE(0, I64), IN_MS,
        .doc = "send() blocks this long for buffer space or metadata."),
    KEY("max.in.flight.requests.per.connection", PRODUCER, INT, "5", RANGE(1, I32),
        .doc = "Unanswered requests per broker connection."),
    KEY("request.timeout.ms", PRODUCER, DURATION, "30000", RANGE(0, I32), IN_MS,
        .doc = "A request unanswered this long fails (and may be retried)."),
    KEY("retry.backoff.ms", PRODUCER, DURATION, "100", RANGE(0, I64), IN_MS,
        .doc = "Pause before retrying a failed request."),
    KEY("delivery.timeout.ms", PRODUCER, DURATION, "120000", RANGE(0, I32), IN_MS,
        .doc = "Upper bound on the time to report a record's success or failure."),
    KEY("metadata.max.age.ms", PRODUCER, DURATION, "300000", RANGE(0, I64), IN_MS,
        .doc = "Metadata is refreshed at least this often."),
    KEY("max.request.size", PRODUCER, SIZE, "1048576", RANGE(0, I32),
        .doc = "Largest produce request."),
    KEY("reconnect.backoff.ms", PRODUCER, DURATION, "50", RANGE(0, I64), IN_MS,
        .doc = "Pause before reconnecting to a broker."),
    KEY("reconnect.backoff.max.ms", PRODUCER, DURATION, "1000", RANGE(0, I64), IN_MS,
        .doc = "Largest reconnect pause (exponential backoff)."),
    KEY("partitioner.class", PRODUCER, ENUM, NULL, .choices = PARTITIONER_CHOICES,
        .doc = "Keyless records: null or sticky (Kafka 2.4+), round-robin (the study notes)."),
    /* client.id and transactional.id: at most 63 characters, as the
     * producer keeps them in fixed fields (PRODUCER_CLIENT_ID_MAX,
     * PRODUCER_TRANSACTIONAL_ID_MAX, models/client/producer_config.h). */
    KEY("client.id", PRODUCER, STRING, "", RANGE(0, 63),
        .doc = "A name for the producer in logs."),
    KEY("transactional.id", PRODUCER, STRING, NULL, RANGE(0, 63),
        .doc = "Enables transactions (requires idempotence)."),
    KEY("transaction.timeout.ms", PRODUCER, DURATION, "60000", RANGE(0, I32), IN_MS,
        .doc = "The coordinator aborts a transaction open this long."),
    KEY("compression.type", PRODUCER, ENUM, "none", .choices = COMPRESSION_CHOICES,
        .doc = "Batch compression.",
        .only_default = "compression is not modelled: records count at the size given"),

    /* Consumer (Kafka 3.x ConsumerConfig). */
    KEY("group.id", CONSUMER, STRING, NULL, .doc = "The consumer group (null: the group's name)."),
    KEY("auto.offset.reset", CONSUMER, ENUM, "latest", .choices = OFFSET_RESET_CHOICES,
        .doc = "Where to start without a committed offset."),
    KEY("enable.auto.commit", CONSUMER, BOOL, "true",
        .doc = "Commit polled offsets every auto.commit.interval.ms."),
    KEY("auto.commit.interval.ms", CONSUMER, DURATION, "5000", RANGE(0, I32), IN_MS,
        .doc = "Auto-commit period."),
    KEY("fetch.min.bytes", CONSUMER, SIZE, "1", RANGE(0, I32),
        .doc = "Bytes a fetch waits for before it is answered."),
    KEY("fetch.max.wait.ms", CONSUMER, DURATION, "500", RANGE(0, I32), IN_MS,
        .doc = "Longest wait of a fetch for fetch.min.bytes."),
    KEY("fetch.max.bytes", CONSUMER, SIZE, "52428800", RANGE(0, I32),
        .doc = "Bytes a fetch response may carry."),
    KEY("max.partition.fetch.bytes", CONSUMER, SIZE, "1048576", RANGE(0, I32),
        .doc = "Bytes per partition a fetch may carry."),
    KEY("max.poll.records", CONSUMER, INT, "500", RANGE(1, I32),
        .doc = "Records returned by one poll()."),
    KEY("max.poll.interval.ms", CONSUMER, DURATION, "300000", RANGE(1, I32), IN_MS,
        .doc = "A member that does not poll this long leaves the group."),
    KEY("session.timeout.ms", CONSUMER, DURATION, "45000", RANGE(0, I32), IN_MS,
        .doc = "A member without heartbeats this long is removed."),
    KEY("heartbeat.interval.ms", CONSUMER, DURATION, "3000", RANGE(0, I32), IN_MS,
        .doc = "Heartbeat period to the group coordinator."),
    KEY("partition.assignment.strategy", CONSUMER, LIST, "range", .choices = ASSIGNOR_CHOICES,
        .doc = "Assignors in preference order: range, roundrobin, sticky, cooperative-sticky."),
    KEY("group.protocol", CONSUMER, ENUM, "classic", .choices = GROUP_PROTOCOL_CHOICES,
        .doc = "classic: JoinGroup/SyncGroup rebalances; consumer: KIP-848's "
               "ConsumerGroupHeartbeat, the coordinator assigns (Kafka 4's default; ksim keeps "
               "classic, see README)."),
    KEY("group.remote.assignor", CONSUMER, STRING, NULL,
        .doc = "group.protocol=consumer: the server-side assignor asked for (uniform or range); "
               "null: the brokers' default."),
    KEY("isolation.level", CONSUMER, ENUM, "read_uncommitted", .choices = ISOLATION_CHOICES,
        .doc = "read_committed hides aborted and open transactions."),
    KEY("default.api.timeout.ms", CONSUMER, DURATION, "60000", RANGE(0, I32), IN_MS,
        .doc = "Bound of blocking calls such as commitSync."),
    KEY("request.timeout.ms", CONSUMER, DURATION, "30000", RANGE(0, I32), IN_MS,
        .doc = "A request unanswered this long fails."),
    KEY("retry.backoff.ms", CONSUMER, DURATION, "100", RANGE(0, I64), IN_MS,
        .doc = "Pause before retrying a failed fetch or group request."),
    KEY("metadata.max.age.ms", CONSUMER, DURATION, "300000", RANGE(0, I64), IN_MS,
        .doc = "Metadata refresh period (how soon new partitions are noticed)."),
    KEY("client.id", CONSUMER, STRING, "", .doc = "A name for the consumer in logs."),
    KEY("ksim.consumer.validate.positions", CONSUMER, BOOL, "true", KSIM_KEY,
        .doc = "true: after a leader change the consumer validates its position with "
               "OffsetsForLeaderEpoch and detects truncation (KIP-320, Kafka 2.3+); false: the "
               "consumer before KIP-320, which fetches on at the same offset."),

    /* ksim: [scenario]. */
    KEY("name", SCENARIO, STRING, NULL, KSIM_KEY,
        .doc = "The scenario's name (default: file name)."),
    KEY("description", SCENARIO, STRING, "", KSIM_KEY, .doc = "What the scenario shows."),
    KEY("duration", SCENARIO, DURATION, NULL, RANGE(1, I64), KSIM_REQUIRED,
        .doc = "Virtual time of the fault phase."),
    KEY("quiet", SCENARIO, DURATION, "10s", RANGE(0, I64), KSIM_KEY,
        .doc = "Liveness phase after every fault is healed."),
    KEY("seed", SCENARIO, LONG, "1", RANGE(0, I64), KSIM_KEY,
        .doc = "Default seed (--seed overrides)."),
    KEY("paranoid", SCENARIO, BOOL, "false", KSIM_KEY,
        .doc = "Check every invariant after every event, as ksim run --paranoid does."),

    /* ksim: [cluster] hardware. */
    KEY("brokers", CLUSTER, INT, "3", RANGE(1, 1000), KSIM_KEY,
        .doc = "Number of brokers, ids 1..N."),
    KEY("network.latency", CLUSTER, TIME_DIST, "const:100us", KSIM_KEY,
        .doc = "One-way latency of every link."),
    KEY("network.bandwidth", CLUSTER, SIZE, "0", RANGE(0, I64), KSIM_KEY,
        .doc = "Bytes per second per link direction; 0: unlimited."),
    KEY("disk.fsync.latency", CLUSTER, TIME_DIST, "const:2ms", KSIM_KEY,
        .doc = "Time for an fsync to make writes durable."),
    KEY("racks", CLUSTER, LIST, NULL, KSIM_KEY,
        .doc = "Racks dealt to the brokers round robin: racks = a, b, c puts brokers 1, 4 in a, "
               "2, 5 in b, 3, 6 in c (null: none; a broker's broker.rack overrides it)."),
    KEY("disk.bandwidth", CLUSTER, SIZE, "200MB", RANGE(0, I64), KSIM_KEY,
        .doc = "Bytes per second the disk writes back dirty pages and reads page-cache misses "
               "at (disk-slow divides it by its factor); 0: unlimited."),
    KEY("disk.dirty.bytes", CLUSTER, SIZE, "1GB", RANGE(0, I64), KSIM_KEY,
        .doc = "Linux's vm.dirty_bytes: dirty page-cache bytes past which a write waits for "
               "writeback; 0: writes never wait."),
    KEY("disk.dirty.expire", CLUSTER, DURATION, "30s", RANGE(0, I64), KSIM_KEY,
        .doc = "Linux's vm.dirty_expire_centisecs: the kernel's flusher writes back a file whose "
               "oldest unsynced write is this old, all of it, so a power loss keeps it without "
               "an fsync; 0: never (only fsync makes writes durable)."),
    KEY("disk.dirty.writeback", CLUSTER, DURATION, "5s", RANGE(1000000, I64), KSIM_KEY,
        .doc = "Linux's vm.dirty_writeback_centisecs: how often the flusher wakes to look for "
               "expired files."),
    KEY("disk.page.cache.bytes", CLUSTER, SIZE, "0", RANGE(0, I64), KSIM_KEY,
        .doc = "Page-cache size for reads: a read of pages not cached costs disk time; 0: every "
               "byte stays cached."),
    KEY("metadata.mode", CLUSTER, ENUM, "zookeeper", .choices = METADATA_MODE_CHOICES, KSIM_KEY,
        .doc = "zookeeper: brokers elect a controller through the coordination node (Kafka "
               "2.x-3.x); kraft: a quorum of dedicated controllers keeps the metadata log "
               "(KIP-500, Kafka 4)."),
    KEY("process.roles", CLUSTER, LIST, NULL, .choices = PROCESS_ROLE_CHOICES,
        .doc = "KRaft: broker (null: the same): brokers only, the quorum on dedicated controllers; "
               "broker,controller: combined mode, the voters run inside brokers (one process: a "
               "crash, pause or partition takes both roles; the metadata log on the broker's "
               "disk)."),
    KEY("controllers", CLUSTER, INT, "3", RANGE(1, 16), KSIM_KEY,
        .doc = "KRaft: the quorum's size: dedicated controller nodes, node.id 3000 up, or in "
               "combined mode the first `controllers` brokers (at most `brokers`)."),
    KEY("controller.quorum.voters", CLUSTER, LIST, NULL,
        .doc = "KRaft: the voters as {id}@{host}:{port} (null: as `controllers` says); ids are "
               "node.ids, brokers' in combined mode, else 3000 up (host and port are checked for "
               "form only)."),
    KEY("controller.quorum.election.timeout.ms", CLUSTER, DURATION, "1000", RANGE(1, I32), IN_MS,
        .doc = "KRaft: a voter that hears no leader this long (plus a random part) stands for "
               "election."),
    KEY("controller.quorum.election.backoff.max.ms", CLUSTER, DURATION, "1000", RANGE(1, I32),
        IN_MS, .doc = "KRaft: the longest backoff of a candidate that lost an election."),
    KEY("controller.quorum.fetch.timeout.ms", CLUSTER, DURATION, "2000", RANGE(1, I32), IN_MS,
        .doc = "KRaft: a follower that cannot fetch from its leader this long stands for "
               "election."),
    KEY("broker.session.timeout.ms", CLUSTER, DURATION, "9000", RANGE(1, I32), IN_MS,
        .doc = "KRaft: the active controller fences a broker it has not heard from this long."),
    KEY("metadata.log.segment.bytes", CLUSTER, SIZE, "1073741824", RANGE(12, I32),
        .doc = "KRaft: the metadata log's segments roll at this size (at least "
               "metadata.log.segment.min.bytes)."),
    KEY("metadata.log.segment.min.bytes", CLUSTER, SIZE, "8388608", RANGE(12, I32),
        .doc = "KRaft: the smallest metadata.log.segment.bytes accepted (Kafka's internal "
               "key, for testing: lower it to run small segments)."),
    KEY("metadata.max.retention.bytes", CLUSTER, SIZE, "104857600", RANGE(-1, I64),
        .doc = "KRaft: the metadata log and its snapshots together are cut back to this by "
               "deleting the oldest snapshots and the log before the next (never past the "
               "latest snapshot); -1: no limit."),
    KEY("metadata.max.retention.ms", CLUSTER, DURATION, "604800000", RANGE(-1, I64), IN_MS,
        .doc = "KRaft: snapshots older than this, and the log before the next one, are "
               "deleted (never the latest); -1: no limit."),
    KEY("metadata.log.max.record.bytes.between.snapshots", CLUSTER, SIZE, "20971520",
        RANGE(1, I64),
        .doc = "KRaft: a controller writes a snapshot of its metadata image once it has "
               "replayed this many bytes of committed records since the last one."),
    KEY("metadata.log.max.snapshot.interval.ms", CLUSTER, DURATION, "3600000", RANGE(0, I64),
        IN_MS,
        .doc = "KRaft: a controller writes a snapshot when records committed this long after "
               "its last one (0: never by time)."),
    KEY("eligible.leader.replicas.version", CLUSTER, INT, "0", RANGE(0, 1),
        .doc = "KRaft: the feature level of eligible leader replicas (KIP-966; kafka-features "
               "--feature eligible.leader.replicas.version=1): the controller keeps replicas "
               "that left an ISR below min.insync.replicas as eligible leaders, and elects from "
               "them when the ISR is empty."),
    KEY("unclean.recovery.manager.enabled", CLUSTER, BOOL, "false",
        .doc = "KRaft with eligible.leader.replicas.version=1 (KIP-966): the controller's "
               "unclean recovery manager recovers a partition whose ISR and ELR are empty by "
               "asking its replicas for their logs (GetReplicaLogInfo) and electing the longest, "
               "as unclean.recovery.strategy says; unclean.leader.election.enable is then not "
               "read. false: Kafka 4.0's way (the last known leader, then "
               "unclean.leader.election.enable)."),
    KEY("unclean.recovery.strategy", CLUSTER, ENUM, "Balanced", .choices = UNCLEAN_RECOVERY_CHOICES,
        .doc = "KIP-966, with unclean.recovery.manager.enabled: None keeps a partition without "
               "ISR and ELR offline; Balanced elects the longest log once every replica that "
               "was last known eligible (LastKnownElr) has answered, or at "
               "unclean.recovery.timeout.ms; Aggressive elects the longest log of the replicas "
               "alive now as soon as they have answered."),
    KEY("unclean.recovery.timeout.ms", CLUSTER, DURATION, "300000", RANGE(1, I32), IN_MS,
        .doc = "KIP-966: how long an unclean recovery waits for replicas to answer (and, "
               "Balanced, for the last known eligible ones to come back) before it elects the "
               "longest log it has heard of."),
    KEY("transaction.version", CLUSTER, INT, "0", RANGE(0, 2),
        .doc = "KRaft: the feature level of transactions (kafka-features --feature "
               "transaction.version=2, Kafka 4.0): at 2 (KIP-890 part 2) the coordinator bumps "
               "the producer epoch at every commit and abort, and producers add partitions "
               "through their produce requests (the leader's verification adds them) instead "
               "of AddPartitionsToTxn; 0 and 1 keep one epoch per producer session."),
    KEY("zookeeper.request.time", CLUSTER, DURATION, "10us", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "The coordination node's time to serve one request; it serves them one at a "
               "time, in arrival order."),
    KEY("zookeeper.byte.time", CLUSTER, DURATION, "20ns", RANGE(0, 1000000), KSIM_KEY,
        .doc = "The coordination node's time per byte of a request and of the data it reads "
               "(about 30,000 1 KiB reads a second with zookeeper.request.time)."),

    /* ksim: a producer's workload. */
    KEY("topic", WORKLOAD, STRING, NULL, KSIM_KEY,
        .doc = "The topic written (default: the only topic)."),
    KEY("instances", WORKLOAD, INT, "1", RANGE(1, 1000), KSIM_KEY,
        .doc = "Identical producers of this kind."),
    KEY("workload.rate", WORKLOAD, DOUBLE, "100", RANGE(0, 1000000000), KSIM_KEY,
        .doc = "Records per virtual second, per instance."),
    KEY("workload.arrival", WORKLOAD, ENUM, "constant", .choices = ARRIVAL_CHOICES, KSIM_KEY,
        .doc = "constant, poisson or bursts."),
    KEY("workload.burst", WORKLOAD, STRING, "100ms,900ms", KSIM_KEY,
        .doc = "bursts: ON,OFF durations."),
    KEY("workload.keys", WORKLOAD, STRING, "none", KSIM_KEY, .doc = "none, uniform:K or zipf:K,S."),
    KEY("workload.record.size", WORKLOAD, SIZE_DIST, "const:100", KSIM_KEY,
        .doc = "Record value size in bytes."),
    KEY("workload.partition", WORKLOAD, INT, "-1", RANGE(-1, I32), KSIM_KEY,
        .doc = "An explicit partition; -1: the partitioner."),
    KEY("workload.send", WORKLOAD, ENUM, "async", .choices = SEND_CHOICES, KSIM_KEY,
        .doc = "async (callback) or sync (wait for each result)."),
    KEY("workload.start", WORKLOAD, DURATION, "0s", RANGE(0, I64), KSIM_KEY, .doc = "First send."),
    KEY("workload.stop", WORKLOAD, DURATION, NULL, RANGE(0, I64), KSIM_KEY,
        .doc = "No sends after this (null: the scenario's duration)."),
    KEY("transaction.records", WORKLOAD, INT, NULL, RANGE(1, 1000000), KSIM_KEY,
        .doc = "With transactional.id: records per transaction (null: 10)."),
    KEY("transaction.abort.ratio", WORKLOAD, DOUBLE, "0", RANGE(0, 1), KSIM_KEY,
        .doc = "With transactional.id: share of transactions aborted instead of committed."),

    /* ksim: a consumer group's members. */
    KEY("topics", CONSUMER_GROUP, LIST, NULL, KSIM_REQUIRED, .doc = "Topics subscribed to."),
    KEY("members", CONSUMER_GROUP, INT, "1", RANGE(1, 1000), KSIM_KEY,
        .doc = "Consumers in the group."),
    KEY("processing.mode", CONSUMER_GROUP, ENUM, "auto", .choices = PROCESSING_MODE_CHOICES,
        KSIM_KEY,
        .doc = "What the poll loop commits: auto (enable.auto.commit only), "
               "commit-before-processing (commitSync, then process: at most once), "
               "process-then-commit (process, then commitSync: at least once), "
               "process-then-commit-async (process, then commitAsync without waiting: at "
               "least once)."),
    KEY("processing.time", CONSUMER_GROUP, TIME_DIST, "const:100us", KSIM_KEY,
        .doc = "Processing time of one record; a poll's records are processed one after "
               "another."),
    KEY("poll.interval", CONSUMER_GROUP, TIME_DIST, "const:10ms", KSIM_KEY,
        .doc = "Pause between the end of processing and the next poll."),
    KEY("members.start", CONSUMER_GROUP, DURATION, "0s", RANGE(0, I64), KSIM_KEY,
        .doc = "When the members subscribe (join the group)."),
    KEY("members.stop", CONSUMER_GROUP, DURATION, NULL, RANGE(0, I64), KSIM_KEY,
        .doc = "When the members unsubscribe (LeaveGroup); null: they stay to the end."),
    KEY("pipeline.output", CONSUMER_GROUP, STRING, NULL, KSIM_KEY,
        .doc = "Makes each member a consume-transform-produce job writing one record per "
               "input record to this topic (null: a plain consumer group)."),
    KEY("exactly.once", CONSUMER_GROUP, BOOL, "false", KSIM_KEY,
        .doc = "With pipeline.output: transactions (read_committed input, a transactional "
               "producer, offsets sent to the transaction); false: at least once."),

    /* ksim: one scheduled fault. */
    KEY("at", FAULT, DURATION, NULL, RANGE(0, I64), KSIM_REQUIRED,
        .doc = "Virtual time of the fault."),
    KEY("action", FAULT, ENUM, NULL, .choices = ACTION_CHOICES, KSIM_REQUIRED,
        .doc = "What happens."),
    KEY("target", FAULT, STRING, NULL, KSIM_KEY,
        .doc = "broker:N, leader(T-P), follower(T-P), controller, random, zk, producer:NAME, "
               "consumer:NAME or consumer:NAME-K."),
    KEY("duration", FAULT, DURATION, NULL, RANGE(1, I64), KSIM_KEY,
        .doc = "Undone after this long (restart, resume, heal, disk back to normal)."),
    KEY("groups", FAULT, STRING, NULL, KSIM_KEY, .doc = "partition: groups such as 1,2 | 3."),
    KEY("to", FAULT, STRING, NULL, KSIM_KEY,
        .doc = "one-way, lose, delay, duplicate, hold: the receiving end."),
    KEY("count", FAULT, INT, "1", RANGE(1, I32), KSIM_KEY,
        .doc = "lose, delay, duplicate, hold: messages affected."),
    KEY("delay", FAULT, DURATION, NULL, RANGE(1, I64), KSIM_KEY,
        .doc = "delay: extra latency; hold: how long the message is held in flight."),
    KEY("message", FAULT, ENUM, NULL, .choices = MESSAGE_CHOICES, KSIM_KEY,
        .doc = "hold: the request held (Produce, EndTxn, ...)."),
    KEY("factor", FAULT, DOUBLE, NULL, RANGE(1, 1000000), KSIM_KEY,
        .doc = "disk-slow: fsync latency multiplier and disk bandwidth divisor."),
    KEY("topic", FAULT, STRING, NULL, KSIM_KEY, .doc = "add-partitions: the topic to grow."),
    KEY("rate", FAULT, STRING, NULL, KSIM_KEY,
        .doc = "loss: the share of transmissions the path loses, 0.2 or 20% (TCP retransmits)."),
    KEY("latency", FAULT, TIME_DIST, NULL, KSIM_KEY,
        .doc = "latency: one-way delay added per message, 50ms or a distribution."),
    KEY("jitter", FAULT, DURATION, NULL, RANGE(0, I64), KSIM_KEY,
        .doc = "latency: the added delay varies uniformly by this much either way."),
    KEY("bandwidth", FAULT, STRING, NULL, KSIM_KEY,
        .doc = "bandwidth: the link's cap in bytes per second, e.g. 1MB/s."),
    KEY("offset", FAULT, STRING, NULL, KSIM_KEY,
        .doc = "clock: the wall-clock step, +30s forward or -30s back."),
    KEY("partitions", FAULT, INT, NULL, RANGE(1, 1 << 24), KSIM_KEY,
        .doc = "add-partitions: the topic's new partition count (larger than before)."),

    /* ksim: the random fault generator. */
    KEY("kinds", RANDOM_FAULTS, LIST, NULL, .choices = RANDOM_KIND_CHOICES, KSIM_REQUIRED,
        .doc = "Fault kinds drawn from."),
    KEY("interval", RANDOM_FAULTS, TIME_DIST, NULL, KSIM_REQUIRED,
        .doc = "Time between fault starts."),
    KEY("duration", RANDOM_FAULTS, TIME_DIST, NULL, KSIM_REQUIRED,
        .doc = "How long each fault lasts."),
    KEY("max.concurrent", RANDOM_FAULTS, INT, "1", RANGE(1, 1000), KSIM_KEY,
        .doc = "Most faults active at once."),
    KEY("start", RANDOM_FAULTS, DURATION, "0s", RANGE(0, I64), KSIM_KEY,
        .doc = "No random fault before this."),
    KEY("stop", RANDOM_FAULTS, DURATION, NULL, RANGE(0, I64), KSIM_KEY,
        .doc = "No random fault starts after this (null: the scenario's duration)."),
    KEY("swarm", RANDOM_FAULTS, BOOL, "false", KSIM_KEY,
        .doc = "Swarm testing: each seed also draws which kinds are on (at least one) and "
               "scales the interval by 1/4, 1/2, 1 or 2."),
};

const guint kconfig_registry_len = G_N_ELEMENTS(kconfig_registry_table);
