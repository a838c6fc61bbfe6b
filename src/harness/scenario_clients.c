/*
 * scenario_clients: a run's clients from their groups (see scenario.h):
 * [producer NAME] with its workload, and [consumer-group NAME], with Kafka's
 * checks on their settings (ProducerConfig, ConsumerConfig).
 */
#include "scenario_internal.h"
#include "server_assignor.h"

#include "kconfig_bind.h"
#include "sim_assert.h"

#include <math.h>
#include <string.h>

/* The longest transactional id the producer keeps (transactional.id's
 * bound in the registry; PRODUCER_TRANSACTIONAL_ID_MAX). */
#define TRANSACTIONAL_ID_LENGTH_MAX 63u

/* ---- Producers and their workload ---- */

void
scenario_producer_free(gpointer data)
{
    ScenarioProducer *producer = data;
    g_free(producer->name);
    g_free(producer->topic);
    kconfig_free(producer->config);
    kconfig_free(producer->workload_config);
    g_free(producer);
}

/* NULL, or why `text` is not ON,OFF. (transfer full) */
static char *
parse_burst(const char *text, gint64 *on_ns, gint64 *off_ns)
{
    if (kconfig_bind_parse_burst(text, on_ns, off_ns))
        return NULL;
    return g_strdup_printf("'%s' is not ON,OFF: two positive durations with units, "
                           "each at most 100000h, e.g. 100ms,900ms",
                           text);
}

/* NULL, or why `text` is not none, uniform:K or zipf:K,S. (transfer full) */
static char *
parse_keys(const char *text, ScenarioWorkload *workload)
{
    WorkloadKeys keys = WORKLOAD_KEYS_NONE;
    workload->keys = SCENARIO_KEYS_NONE;
    if (!kconfig_bind_parse_keys(text, &keys, &workload->key_count, &workload->zipf_s))
        return g_strdup_printf("'%s' is not none, uniform:K or zipf:K,S (K keys, at least 1; "
                               "S > 0)",
                               text);
    workload->keys = keys == WORKLOAD_KEYS_UNIFORM ? SCENARIO_KEYS_UNIFORM
                     : keys == WORKLOAD_KEYS_ZIPF  ? SCENARIO_KEYS_ZIPF
                                                   : SCENARIO_KEYS_NONE;
    return NULL;
}

static ScenarioArrival
arrival_of(const char *text)
{
    if (strcmp(text, "poisson") == 0)
        return SCENARIO_ARRIVAL_POISSON;
    if (strcmp(text, "bursts") == 0)
        return SCENARIO_ARRIVAL_BURSTS;
    KSIM_ASSERT(strcmp(text, "constant") == 0);
    return SCENARIO_ARRIVAL_CONSTANT;
}

static gboolean
workload_shapes(const Build *b, const RawGroup *group, const KConfig *cfg, ScenarioWorkload *w,
                GError **error)
{
    const Scenario *s = b->scenario;
    if (w->arrival != SCENARIO_ARRIVAL_BURSTS && kconfig_is_set(cfg, "workload.burst")) {
        Loc loc = scenario_loc_key(s, group, "workload.burst");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "applies only with workload.arrival = bursts");
        return FALSE;
    }
    g_autofree char *why =
        parse_burst(kconfig_get_string(cfg, "workload.burst"), &w->burst_on_ns, &w->burst_off_ns);
    if (why == NULL)
        why = parse_keys(kconfig_get_string(cfg, "workload.keys"), w);
    else {
        Loc loc = scenario_loc_key(s, group, "workload.burst");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
        return FALSE;
    }
    if (why != NULL) {
        Loc loc = scenario_loc_key(s, group, "workload.keys");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "%s", why);
        return FALSE;
    }
    return TRUE;
}

static gboolean
workload_bounds(const Build *b, const RawGroup *group, const ScenarioTopic *topic,
                const ScenarioWorkload *w, GError **error)
{
    const Scenario *s = b->scenario;
    gint64 duration_ns = b->variant->duration_ns;
    if (w->partition >= 0 && (guint)w->partition >= topic->partitions) {
        Loc loc = scenario_loc_key(s, group, "workload.partition");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "partition %d does not exist: topic %s has %u partitions (0..%u)",
                           w->partition, topic->name, topic->partitions, topic->partitions - 1);
        return FALSE;
    }
    g_autofree char *stop = scenario_format_duration(w->stop_ns);
    g_autofree char *end = scenario_format_duration(duration_ns);
    if (w->stop_ns > duration_ns) {
        Loc loc = scenario_loc_key(s, group, "workload.stop");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "%s is past the end of the scenario (duration %s)", stop, end);
        return FALSE;
    }
    if (w->start_ns >= w->stop_ns) {
        g_autofree char *start = scenario_format_duration(w->start_ns);
        Loc loc = scenario_loc_key(s, group, "workload.start");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "%s is not before workload.stop (%s)", start, stop);
        return FALSE;
    }
    return TRUE;
}

static gboolean
build_workload(const Build *b, const RawGroup *group, const KConfig *cfg,
               const ScenarioTopic *topic, ScenarioWorkload *w, GError **error)
{
    w->rate_per_s = kconfig_get_double(cfg, "workload.rate");
    w->arrival = arrival_of(kconfig_get_string(cfg, "workload.arrival"));
    w->record_size = kconfig_get_dist(cfg, "workload.record.size");
    w->partition = (gint32)kconfig_get_int64(cfg, "workload.partition");
    w->send_sync = strcmp(kconfig_get_string(cfg, "workload.send"), "sync") == 0;
    w->start_ns = kconfig_get_duration_ns(cfg, "workload.start");
    w->stop_ns = kconfig_is_null(cfg, "workload.stop")
                     ? b->variant->duration_ns
                     : kconfig_get_duration_ns(cfg, "workload.stop");
    w->txn_records = kconfig_is_null(cfg, "transaction.records")
                         ? 10
                         : (guint32)kconfig_get_int64(cfg, "transaction.records");
    w->txn_abort_ratio = kconfig_get_double(cfg, "transaction.abort.ratio");
    return workload_shapes(b, group, cfg, w, error) && workload_bounds(b, group, topic, w, error);
}

static gboolean
idempotence_error(const Build *b, const RawGroup *group, const char *key, const char *rule,
                  GError **error)
{
    Loc loc = scenario_loc_key(b->scenario, group, key);
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "conflicts with enable.idempotence = true: %s, as Kafka requires", rule);
    return FALSE;
}

/* Kafka's checks (ProducerConfig), which apply when enable.idempotence is set
 * explicitly; left at its default, Kafka quietly turns idempotence off
 * instead, which is the producer model's business. */
static gboolean
check_idempotence(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    if (!kconfig_is_set(cfg, "enable.idempotence"))
        return TRUE;
    if (!kconfig_get_bool(cfg, "enable.idempotence")) {
        if (kconfig_is_null(cfg, "transactional.id"))
            return TRUE;
        Loc loc = scenario_loc_key(b->scenario, group, "enable.idempotence");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "must be true when transactional.id is set, as Kafka requires");
        return FALSE;
    }
    if (strcmp(kconfig_get_string(cfg, "acks"), "all") != 0)
        return idempotence_error(b, group, "acks", "the idempotent producer needs acks = all",
                                 error);
    if (kconfig_get_int64(cfg, "retries") == 0)
        return idempotence_error(b, group, "retries", "the idempotent producer needs retries > 0",
                                 error);
    if (kconfig_get_int64(cfg, "max.in.flight.requests.per.connection") > 5)
        return idempotence_error(b, group, "max.in.flight.requests.per.connection",
                                 "the idempotent producer allows at most 5", error);
    return TRUE;
}

static gboolean
check_delivery_timeout(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    if (!kconfig_is_set(cfg, "delivery.timeout.ms"))
        return TRUE;
    gint64 delivery_ns = kconfig_get_duration_ns(cfg, "delivery.timeout.ms");
    gint64 floor_ns = kconfig_get_duration_ns(cfg, "linger.ms") +
                      kconfig_get_duration_ns(cfg, "request.timeout.ms");
    if (delivery_ns >= floor_ns)
        return TRUE;
    g_autofree char *floor_text = scenario_format_duration(floor_ns);
    Loc loc = scenario_loc_key(b->scenario, group, "delivery.timeout.ms");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "must be at least linger.ms + request.timeout.ms (%s), as Kafka requires",
                       floor_text);
    return FALSE;
}

static const ScenarioTopic *
producer_topic(const Build *b, const RawGroup *group, const KConfig *workload, GError **error)
{
    const GPtrArray *topics = b->variant->topics;
    Loc loc = scenario_loc_key(b->scenario, group, "topic");
    if (kconfig_is_null(workload, "topic")) {
        if (topics->len == 1)
            return topics->pdata[0];
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_MISSING, &loc,
                           topics->len == 0 ? "the scenario has no [topic NAME] group"
                                            : "is required when the scenario has several topics");
        return NULL;
    }
    const char *name = kconfig_get_string(workload, "topic");
    const ScenarioTopic *topic = scenario_find_object(topics, name);
    if (topic == NULL) {
        g_autofree char *why = scenario_no_such_message("topic", name, topics);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
    }
    return topic;
}

/* The transactional workload keys need transactional.id, and a
 * transactional producer needs idempotence's settings (Kafka enables
 * idempotence for it and refuses contradicting keys). */
static gboolean
check_transactional(const Build *b, const RawGroup *group, const KConfig *cfg,
                    const KConfig *workload, GError **error)
{
    static const char *const keys[] = {"transaction.records", "transaction.abort.ratio"};
    gboolean transactional = !kconfig_is_null(cfg, "transactional.id");
    for (guint i = 0; i < G_N_ELEMENTS(keys) && !transactional; i++) {
        if (!kconfig_is_set(workload, keys[i]))
            continue;
        Loc loc = scenario_loc_key(b->scenario, group, keys[i]);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "applies only to a transactional producer: set transactional.id");
        return FALSE;
    }
    if (!transactional)
        return TRUE;
    const char *id = kconfig_get_string(cfg, "transactional.id");
    if (strlen(id) == 0 || strlen(id) > SCENARIO_NAME_LENGTH_MAX) {
        Loc loc = scenario_loc_key(b->scenario, group, "transactional.id");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc, "must be 1 to %u characters",
                           SCENARIO_NAME_LENGTH_MAX);
        return FALSE;
    }
    if (strcmp(kconfig_get_string(cfg, "acks"), "all") != 0 && kconfig_is_set(cfg, "acks"))
        return idempotence_error(b, group, "acks", "a transactional producer needs acks = all",
                                 error);
    return TRUE;
}

gboolean
scenario_build_producer(Build *b, const RawGroup *group, GError **error)
{
    ScenarioProducer *producer = g_new0(ScenarioProducer, 1);
    producer->name = g_strdup(group->object);
    producer->config = kconfig_new(KCONFIG_SCOPE_PRODUCER);
    g_ptr_array_add(b->variant->producers, producer);
    KConfig *workload = producer->workload_config = kconfig_new(KCONFIG_SCOPE_WORKLOAD);
    KConfig *configs[] = {producer->config, workload};
    if (!scenario_fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    const ScenarioTopic *topic = producer_topic(b, group, workload, error);
    if (topic == NULL)
        return FALSE;
    producer->topic = g_strdup(topic->name);
    producer->instances = (guint)kconfig_get_int64(workload, "instances");
    if (!build_workload(b, group, workload, topic, &producer->workload, error) ||
        !check_transactional(b, group, producer->config, workload, error))
        return FALSE;
    if (kconfig_is_null(producer->config, "transactional.id"))
        producer->workload.txn_records = 0;
    return check_idempotence(b, group, producer->config, error) &&
           check_delivery_timeout(b, group, producer->config, error);
}

/* ---- Consumer groups ---- */

void
scenario_consumer_group_free(gpointer data)
{
    ScenarioConsumerGroup *group = data;
    g_free(group->name);
    g_free(group->group_id);
    g_free(group->pipeline_output);
    g_strfreev(group->topics);
    kconfig_free(group->config);
    kconfig_free(group->members_config);
    g_free(group);
}

/* processing.mode, one of the registry's choices (kconfig.c). */
static ScenarioProcessingMode
processing_mode_parse(const char *text)
{
    static const struct {
        const char *name;
        ScenarioProcessingMode mode;
    } MODES[] = {
        {"auto", SCENARIO_PROCESSING_AUTO},
        {"commit-before-processing", SCENARIO_PROCESSING_COMMIT_BEFORE_PROCESSING},
        {"process-then-commit", SCENARIO_PROCESSING_PROCESS_THEN_COMMIT},
        {"process-then-commit-async", SCENARIO_PROCESSING_PROCESS_THEN_COMMIT_ASYNC},
    };
    for (guint i = 0; i < G_N_ELEMENTS(MODES); i++) {
        if (strcmp(text, MODES[i].name) == 0)
            return MODES[i].mode;
    }
    KSIM_ASSERT(!"processing.mode outside the registry's choices");
    return SCENARIO_PROCESSING_AUTO;
}

/* group.remote.assignor: a server assignor the brokers list, and only
 * with group.protocol=consumer (Kafka's ConsumerConfig refuses it with
 * classic). */
static gboolean
check_remote_assignor(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    const char *name = kconfig_get_string(cfg, "group.remote.assignor");
    if (name == NULL || g_ascii_strcasecmp(name, "null") == 0)
        return TRUE;
    Loc loc = scenario_loc_key(b->scenario, group, "group.remote.assignor");
    if (strcmp(kconfig_get_string(cfg, "group.protocol"), "classic") == 0) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "cannot be set when group.protocol=classic, as Kafka requires");
        return FALSE;
    }
    ServerAssignorKind kind;
    if (!server_assignor_parse(name, &kind)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "'%s' is not a server-side assignor (uniform or range)", name);
        return FALSE;
    }
    const KConfig *broker = b->variant->cluster.config;
    g_auto(GStrv) listed = kconfig_get_list(broker, "group.consumer.assignors");
    if (!g_strv_contains((const char *const *)listed, name)) {
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "'%s' is not in the brokers' group.consumer.assignors: the coordinator "
                           "would answer UNSUPPORTED_ASSIGNOR",
                           name);
        return FALSE;
    }
    return TRUE;
}

static gboolean
check_consumer_timeouts(const Build *b, const RawGroup *group, const KConfig *cfg, GError **error)
{
    if (!check_remote_assignor(b, group, cfg, error))
        return FALSE;
    /* KIP-848 members take their session and heartbeat interval from the
     * brokers' group.consumer.* keys; session.timeout.ms and
     * heartbeat.interval.ms are the classic protocol's. */
    if (strcmp(kconfig_get_string(cfg, "group.protocol"), "consumer") == 0)
        return TRUE;
    gint64 session_ns = kconfig_get_duration_ns(cfg, "session.timeout.ms");
    gint64 heartbeat_ns = kconfig_get_duration_ns(cfg, "heartbeat.interval.ms");
    g_autofree char *session = scenario_format_duration(session_ns);
    if (heartbeat_ns >= session_ns) {
        Loc loc = scenario_loc_key(b->scenario, group, "heartbeat.interval.ms");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "must be lower than session.timeout.ms (%s), as Kafka requires",
                           session);
        return FALSE;
    }
    const KConfig *broker = b->variant->cluster.config;
    gint64 min_ns = kconfig_get_duration_ns(broker, "group.min.session.timeout.ms");
    gint64 max_ns = kconfig_get_duration_ns(broker, "group.max.session.timeout.ms");
    if (session_ns < min_ns || session_ns > max_ns) {
        g_autofree char *min = scenario_format_duration(min_ns);
        g_autofree char *max = scenario_format_duration(max_ns);
        Loc loc = scenario_loc_key(b->scenario, group, "session.timeout.ms");
        scenario_loc_error(
            error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
            "%s is outside the brokers' group session bounds (%s..%s): the coordinator "
            "would refuse every join",
            session, min, max);
        return FALSE;
    }
    return TRUE;
}

static gboolean
check_consumer_group_id(const Build *b, const RawGroup *group,
                        const ScenarioConsumerGroup *consumers, GError **error)
{
    /* Each member's client id is consumer-NAME-K (runner_clients.c), kept,
     * as the group id is, in KAFKA_GROUP_ID_MAX (63) characters; Kafka sets
     * no bound on either. */
    g_autofree char *last_client =
        g_strdup_printf("consumer-%s-%u", consumers->name, consumers->members);
    if (strlen(last_client) > KAFKA_GROUP_ID_MAX) {
        Loc loc = scenario_loc_group(b->scenario, group);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                           "the members' client ids (consumer-NAME-K, %zu characters for the "
                           "last) would be longer than ksim's consumers keep (%d): use a "
                           "shorter name",
                           strlen(last_client), KAFKA_GROUP_ID_MAX);
        return FALSE;
    }
    gsize length = strlen(consumers->group_id);
    if (length > 0 && length <= KAFKA_GROUP_ID_MAX)
        return TRUE;
    /* A null group.id is the name, which the client ids bound already. */
    Loc loc = scenario_loc_key(b->scenario, group, "group.id");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_VALUE, &loc,
                       "must be 1 to %d characters (or null: the group's name)",
                       KAFKA_GROUP_ID_MAX);
    return FALSE;
}

static gboolean
check_consumer_times(const Build *b, const RawGroup *group, const ScenarioConsumerGroup *consumers,
                     GError **error)
{
    if (!scenario_check_not_past_end(b, group, "members.start", consumers->start_ns, error) ||
        (consumers->stop_ns >= 0 &&
         !scenario_check_not_past_end(b, group, "members.stop", consumers->stop_ns, error)))
        return FALSE;
    if (consumers->stop_ns < 0 || consumers->start_ns < consumers->stop_ns)
        return TRUE;
    g_autofree char *start = scenario_format_duration(consumers->start_ns);
    g_autofree char *stop = scenario_format_duration(consumers->stop_ns);
    Loc loc = scenario_loc_key(b->scenario, group, "members.start");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                       "%s is not before members.stop (%s)", start, stop);
    return FALSE;
}

/* pipeline.output names a topic the group does not read; exactly.once
 * needs a pipeline. */
static gboolean
check_pipeline(const Build *b, const RawGroup *group, const ScenarioConsumerGroup *consumers,
               const KConfig *members, GError **error)
{
    const char *output = consumers->pipeline_output;
    if (output == NULL) {
        if (!kconfig_is_set(members, "exactly.once"))
            return TRUE;
        Loc loc = scenario_loc_key(b->scenario, group, "exactly.once");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
                           "applies only to a pipeline: set pipeline.output");
        return FALSE;
    }
    Loc loc = scenario_loc_key(b->scenario, group, "pipeline.output");
    if (scenario_find_object(b->variant->topics, output) == NULL) {
        g_autofree char *why = scenario_no_such_message("topic", output, b->variant->topics);
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    if (g_strv_contains((const char *const *)consumers->topics, output)) {
        scenario_loc_error(
            error, KSIM_SCENARIO_ERROR_INCONSISTENT, &loc,
            "%s is also an input of the group (topics): a pipeline would consume its own "
            "output",
            output);
        return FALSE;
    }
    /* Each exactly-once member's producer is GROUP_ID-K, kept in the
     * producer's 63-character transactional.id field. */
    g_autofree char *last_id =
        g_strdup_printf("%s-%u", consumers->group_id, consumers->members);
    if (!consumers->exactly_once || strlen(last_id) <= TRANSACTIONAL_ID_LENGTH_MAX)
        return TRUE;
    Loc id_loc = scenario_loc_key(b->scenario, group, "exactly.once");
    scenario_loc_error(error, KSIM_SCENARIO_ERROR_INCONSISTENT, &id_loc,
                       "the members' transactional ids (the group id and -K) would be longer "
                       "than %u characters",
                       TRANSACTIONAL_ID_LENGTH_MAX);
    return FALSE;
}

gboolean
scenario_build_consumer_group(Build *b, const RawGroup *group, GError **error)
{
    ScenarioConsumerGroup *consumers = g_new0(ScenarioConsumerGroup, 1);
    consumers->name = g_strdup(group->object);
    consumers->config = kconfig_new(KCONFIG_SCOPE_CONSUMER);
    g_ptr_array_add(b->variant->consumer_groups, consumers);
    KConfig *members = consumers->members_config = kconfig_new(KCONFIG_SCOPE_CONSUMER_GROUP);
    KConfig *configs[] = {consumers->config, members};
    if (!scenario_fill_configs(b, group, configs, G_N_ELEMENTS(configs), error))
        return FALSE;
    consumers->topics = kconfig_get_list(members, "topics");
    consumers->members = (guint)kconfig_get_int64(members, "members");
    consumers->group_id = kconfig_is_null(consumers->config, "group.id")
                              ? g_strdup(consumers->name)
                              : g_strdup(kconfig_get_string(consumers->config, "group.id"));
    const char *mode = kconfig_get_string(members, "processing.mode");
    consumers->processing_mode = processing_mode_parse(mode);
    consumers->processing_time = kconfig_get_dist(members, "processing.time");
    consumers->poll_interval = kconfig_get_dist(members, "poll.interval");
    consumers->start_ns = kconfig_get_duration_ns(members, "members.start");
    consumers->stop_ns = kconfig_is_null(members, "members.stop")
                             ? -1
                             : kconfig_get_duration_ns(members, "members.stop");
    consumers->exactly_once = kconfig_get_bool(members, "exactly.once");
    if (!kconfig_is_null(members, "pipeline.output"))
        consumers->pipeline_output = g_strdup(kconfig_get_string(members, "pipeline.output"));
    if (!check_consumer_group_id(b, group, consumers, error) ||
        !check_consumer_times(b, group, consumers, error) ||
        !check_pipeline(b, group, consumers, members, error))
        return FALSE;
    for (guint i = 0; consumers->topics[i] != NULL; i++) {
        if (scenario_find_object(b->variant->topics, consumers->topics[i]) != NULL)
            continue;
        g_autofree char *why =
            scenario_no_such_message("topic", consumers->topics[i], b->variant->topics);
        Loc loc = scenario_loc_key(b->scenario, group, "topics");
        scenario_loc_error(error, KSIM_SCENARIO_ERROR_UNKNOWN, &loc, "%s", why);
        return FALSE;
    }
    return check_consumer_timeouts(b, group, consumers->config, error);
}
