/*
 * ksim-rdkafka-mock: the yardstick for `ksim bench cluster --producer`. It
 * runs the same load on librdkafka's mock cluster, in real time, so that
 * `ksim bench cluster --producer --vs-rdkafka` can print ksim's rate beside
 * it in one run, on one machine, instead of a figure measured by hand.
 *
 * The load is ksim's benchmark's: 3 brokers, the topic "bench" of 3
 * partitions created with replication factor 3, --records records (10^6) of
 * 100-byte values and no key, produced with acks=all, enable.idempotence=true,
 * linger.ms=5, batch.size=16384 (Kafka's default; librdkafka's is 10^6) and
 * at most --window records outstanding (queue.buffering.max.messages; ksim's
 * feeder keeps at most as many) in Kafka's buffer.memory (32 MiB). ksim
 * passes every one of these, so the two cannot drift apart.
 *
 * What differs, and why the mock is a yardstick rather than a twin:
 * - The mock brokers do not replicate. The topic has 3 replicas in the
 *   metadata, but only the leader stores a batch, and acks=all is answered
 *   as soon as the leader has appended it: no follower fetches, no high
 *   watermark to wait for. ksim replicates every batch to 3 replicas.
 * - The mock keeps no history and checks nothing; ksim records every
 *   operation and, in the "checked" figure, checks the history afterwards.
 * - The mock is real: threads, sockets on localhost, and the wall clock
 *   (CLOCK_MONOTONIC). This program is outside the simulation, so the house
 *   rules on clocks and threads (sim/, models/) do not apply here.
 * - librdkafka's partitioner for null keys is sticky for
 *   sticky.partitioning.linger.ms (10 ms), Kafka's switches partition when a
 *   batch is full (KIP-480). A record in librdkafka's batches takes its
 *   100-byte value and about ten bytes of framing (Kafka's record format
 *   v2), so a 16384-byte batch holds a few records fewer than ksim's, which
 *   counts 100 bytes a record (163 a batch).
 * - The queue-full wait and the delivery-report polling (every thousand
 *   records) are those of librdkafka's own rdkafka_performance.
 *
 * The rate is records delivered per wall second from the first produce call
 * to the return of rd_kafka_flush (the last delivery report served). The
 * setup before it (the mock cluster, the topic, the producer, its first
 * metadata) is reported apart, as ksim reports its setup apart. Every
 * delivery report must carry no error; the exit status is 1 otherwise.
 *
 * Written against librdkafka 2.0.2 (Debian 12's librdkafka-dev): rdkafka.h,
 * and the mock cluster API of rdkafka_mock.h (rd_kafka_mock_cluster_new,
 * rd_kafka_mock_topic_create, rd_kafka_mock_cluster_bootstraps), which
 * librdkafka marks experimental and outside its API and ABI guarantees. The
 * build makes this program only when pkg-config finds rdkafka; ksim itself
 * never links librdkafka, and finds this program beside its own executable.
 *
 * Exit status: 0 when every record was delivered, 1 when the cluster could
 * not be set up or a record failed, 2 on bad arguments.
 */
#include "../bench_rdkafka.h"
#include "sim_assert.h"

#include <glib.h>
#include <json-glib/json-glib.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MOCK_BROKERS 3
#define MOCK_REPLICATION_FACTOR 3
#define MOCK_TOPIC "bench"
#define MOCK_BATCH_BYTES "16384"        /* Kafka's batch.size default */
#define MOCK_BUFFER_KIB "32768"         /* Kafka's buffer.memory default, 32 MiB */
#define MOCK_VALUE_BYTES_MAX 100000     /* a tenth of message.max.bytes' default */
#define MOCK_SETUP_TIMEOUT_MS 10000     /* the producer's first metadata */
#define MOCK_FLUSH_TIMEOUT_MS 600000    /* a stalled run ends with an error, not a hang */
#define MOCK_POLL_EVERY 1000            /* records produced between polls for delivery reports */
#define MOCK_QUEUE_FULL_POLL_MS 10      /* how long to serve reports when the queue is full */
#define MOCK_QUEUE_FULL_POLLS_MAX 60000 /* full this often running (<= 10 min): stalled */

typedef struct {
    gint64 records;
    gint64 partitions;
    gint64 value_bytes;
    gint64 linger_ms;
    gint64 window;
    gboolean json;
} MockOptions;

/* What the delivery reports said; written by the delivery report callback,
 * which librdkafka runs on the thread that calls rd_kafka_poll or
 * rd_kafka_flush (this program's only thread of its own). */
typedef struct {
    guint64 delivered;
    guint64 failed;
    rd_kafka_resp_err_t first_error;
} Deliveries;

static double
monotonic_s(void)
{
    struct timespec now;
    KSIM_ASSERT(clock_gettime(CLOCK_MONOTONIC, &now) == 0);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void
delivered_cb(rd_kafka_t *rk, const rd_kafka_message_t *message, void *opaque)
{
    Deliveries *deliveries = opaque;
    (void)rk;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        deliveries->delivered++;
        return;
    }
    if (deliveries->failed == 0)
        deliveries->first_error = message->err;
    deliveries->failed++;
}

static gboolean
parse_options(int argc, char **argv, MockOptions *options)
{
    GOptionEntry entries[] = {
        {"records", 0, 0, G_OPTION_ARG_INT64, &options->records, "records to produce (1000000)",
         "N"},
        {"partitions", 0, 0, G_OPTION_ARG_INT64, &options->partitions, "the topic's partitions (3)",
         "N"},
        {"value-bytes", 0, 0, G_OPTION_ARG_INT64, &options->value_bytes,
         "bytes in each record's value (100)", "N"},
        {"linger-ms", 0, 0, G_OPTION_ARG_INT64, &options->linger_ms, "linger.ms (5)", "MS"},
        {"window", 0, 0, G_OPTION_ARG_INT64, &options->window,
         "records outstanding at most: queue.buffering.max.messages (50000)", "N"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &options->json, "print one JSON object", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *context =
        g_option_context_new("- ksim bench cluster --producer's load on librdkafka's mock cluster");
    g_option_context_add_main_entries(context, entries, NULL);
    GError *error = NULL;
    gboolean ok = g_option_context_parse(context, &argc, &argv, &error);
    if (!ok) {
        fprintf(stderr, "ksim-rdkafka-mock: %s\n", error->message);
        g_error_free(error);
    } else if (argc > 1) {
        fprintf(stderr, "ksim-rdkafka-mock: unexpected argument '%s'\n", argv[1]);
        ok = FALSE;
    } else if (options->records <= 0 || options->partitions <= 0 || options->window <= 0 ||
               options->value_bytes <= 0 || options->value_bytes > MOCK_VALUE_BYTES_MAX ||
               options->linger_ms < 0 || options->linger_ms > BENCH_RDKAFKA_LINGER_MS_MAX ||
               options->partitions > G_MAXINT32 || options->window > BENCH_RDKAFKA_WINDOW_MAX) {
        fprintf(stderr,
                "ksim-rdkafka-mock: --records, --partitions and --window must be "
                "positive, --value-bytes from 1 to %d, --linger-ms from 0 to %d\n",
                MOCK_VALUE_BYTES_MAX, BENCH_RDKAFKA_LINGER_MS_MAX);
        ok = FALSE;
    }
    g_option_context_free(context);
    return ok;
}

static gboolean
conf_set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
    char errstr[512];
    if (rd_kafka_conf_set(conf, name, value, errstr, sizeof errstr) == RD_KAFKA_CONF_OK)
        return TRUE;
    fprintf(stderr, "ksim-rdkafka-mock: %s=%s: %s\n", name, value, errstr);
    return FALSE;
}

/* A client handle; takes `conf` whether it succeeds or not. NULL with a
 * message when librdkafka refuses. */
static rd_kafka_t *
client_new(rd_kafka_conf_t *conf)
{
    char errstr[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof errstr);
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        fprintf(stderr, "ksim-rdkafka-mock: %s\n", errstr);
    }
    return rk;
}

/* The benchmark's producer, bootstrapped from the mock cluster. */
static rd_kafka_t *
producer_new(const char *bootstrap, const MockOptions *options, Deliveries *deliveries)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    g_autofree char *linger_ms = g_strdup_printf("%" G_GINT64_FORMAT, options->linger_ms);
    g_autofree char *window = g_strdup_printf("%" G_GINT64_FORMAT, options->window);
    const char *settings[][2] = {
        {"bootstrap.servers", bootstrap},
        {"acks", "all"},
        {"enable.idempotence", "true"},
        {"linger.ms", linger_ms},
        {"batch.size", MOCK_BATCH_BYTES},
        {"queue.buffering.max.messages", window},
        {"queue.buffering.max.kbytes", MOCK_BUFFER_KIB},
    };
    for (guint i = 0; i < G_N_ELEMENTS(settings); i++) {
        if (!conf_set(conf, settings[i][0], settings[i][1])) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    }
    rd_kafka_conf_set_dr_msg_cb(conf, delivered_cb);
    rd_kafka_conf_set_opaque(conf, deliveries);
    return client_new(conf);
}

/* Waits for the producer's metadata of the topic, so that the timed part
 * begins with a producer that knows where to send (as ksim's does, after
 * its first virtual second). */
static gboolean
metadata_ready(rd_kafka_t *producer, rd_kafka_topic_t *topic, gint64 partitions)
{
    const struct rd_kafka_metadata *metadata = NULL;
    rd_kafka_resp_err_t err =
        rd_kafka_metadata(producer, 0, topic, &metadata, MOCK_SETUP_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "ksim-rdkafka-mock: metadata: %s\n", rd_kafka_err2str(err));
        return FALSE;
    }
    gboolean ok = metadata->topic_cnt == 1 && metadata->topics[0].err == 0 &&
                  metadata->topics[0].partition_cnt == partitions;
    if (!ok)
        fprintf(stderr,
                "ksim-rdkafka-mock: the mock cluster's metadata lacks topic %s of %" G_GINT64_FORMAT
                " partitions\n",
                MOCK_TOPIC, partitions);
    rd_kafka_metadata_destroy(metadata);
    return ok;
}

/* Produces one record, serving delivery reports while the queue is full
 * (queue.buffering.max.messages or .kbytes); FALSE with a message when
 * librdkafka refuses it otherwise or the queue stays full. */
static gboolean
produce_one(rd_kafka_t *producer, rd_kafka_topic_t *topic, char *value, gsize value_bytes)
{
    for (guint polls = 0; polls < MOCK_QUEUE_FULL_POLLS_MAX; polls++) {
        if (rd_kafka_produce(topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, value, value_bytes,
                             NULL, 0, NULL) == 0)
            return TRUE;
        rd_kafka_resp_err_t err = rd_kafka_last_error();
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            fprintf(stderr, "ksim-rdkafka-mock: produce: %s\n", rd_kafka_err2str(err));
            return FALSE;
        }
        rd_kafka_poll(producer, MOCK_QUEUE_FULL_POLL_MS);
    }
    fprintf(stderr, "ksim-rdkafka-mock: the producer's queue stayed full for %d ms\n",
            MOCK_QUEUE_FULL_POLLS_MAX * MOCK_QUEUE_FULL_POLL_MS);
    return FALSE;
}

/* The timed part: every record produced, then flushed. Each value is
 * distinct (the record's number in its first bytes, as ksim's values are
 * distinct), though nothing here reads it back. */
static gboolean
produce_all(rd_kafka_t *producer, rd_kafka_topic_t *topic, const MockOptions *options)
{
    gsize value_bytes = (gsize)options->value_bytes;
    g_autofree char *value = g_malloc0(value_bytes);
    for (gint64 i = 0; i < options->records; i++) {
        guint64 number = (guint64)i;
        memcpy(value, &number, MIN(sizeof number, value_bytes));
        if (!produce_one(producer, topic, value, value_bytes))
            return FALSE;
        /* Serve the delivery reports every thousand records, as librdkafka's
         * own rdkafka_performance does, rather than after every record: the
         * producing thread is the mock run's busiest. */
        if ((i + 1) % MOCK_POLL_EVERY == 0)
            rd_kafka_poll(producer, 0);
    }
    rd_kafka_resp_err_t err = rd_kafka_flush(producer, MOCK_FLUSH_TIMEOUT_MS);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "ksim-rdkafka-mock: flush: %s (%d records undelivered)\n",
                rd_kafka_err2str(err), rd_kafka_outq_len(producer));
        return FALSE;
    }
    return TRUE;
}

static void
print_figures(const MockOptions *options, const Deliveries *deliveries, double setup_s,
              double run_s)
{
    double per_s = (double)deliveries->delivered / MAX(run_s, 1e-9);
    if (!options->json) {
        printf("rdkafka mock (librdkafka %s): %" G_GUINT64_FORMAT " records delivered "
               "(acks=all, idempotent, %d brokers, RF %d not replicated) in %.2f s wall "
               "(%.2f M records/s); setup %.2f s\n",
               rd_kafka_version_str(), deliveries->delivered, MOCK_BROKERS, MOCK_REPLICATION_FACTOR,
               run_s, per_s / 1e6, setup_s);
        return;
    }
    JsonBuilder *builder = json_builder_new();
    json_builder_begin_object(builder);
    json_builder_set_member_name(builder, "records_per_s");
    json_builder_add_double_value(builder, per_s);
    json_builder_set_member_name(builder, "records_delivered");
    json_builder_add_int_value(builder, (gint64)deliveries->delivered);
    json_builder_set_member_name(builder, "wall_s");
    json_builder_add_double_value(builder, run_s);
    json_builder_set_member_name(builder, "setup_wall_s");
    json_builder_add_double_value(builder, setup_s);
    json_builder_set_member_name(builder, "librdkafka_version");
    json_builder_add_string_value(builder, rd_kafka_version_str());
    json_builder_set_member_name(builder, "brokers");
    json_builder_add_int_value(builder, MOCK_BROKERS);
    json_builder_set_member_name(builder, "partitions");
    json_builder_add_int_value(builder, options->partitions);
    json_builder_set_member_name(builder, "replication_factor");
    json_builder_add_int_value(builder, MOCK_REPLICATION_FACTOR);
    json_builder_set_member_name(builder, "replicated");
    json_builder_add_boolean_value(builder, FALSE);
    json_builder_set_member_name(builder, "value_bytes");
    json_builder_add_int_value(builder, options->value_bytes);
    json_builder_set_member_name(builder, "linger_ms");
    json_builder_add_int_value(builder, options->linger_ms);
    json_builder_set_member_name(builder, "window");
    json_builder_add_int_value(builder, options->window);
    json_builder_end_object(builder);
    JsonGenerator *generator = json_generator_new();
    JsonNode *root = json_builder_get_root(builder);
    json_generator_set_root(generator, root);
    g_autofree char *text = json_generator_to_data(generator, NULL);
    printf("%s\n", text);
    json_node_unref(root);
    g_object_unref(generator);
    g_object_unref(builder);
}

/* The mock cluster and the benchmark's producer; each member NULL until
 * made. */
typedef struct {
    rd_kafka_t *host; /* the client handle the mock cluster lives on */
    rd_kafka_mock_cluster_t *cluster;
    rd_kafka_t *producer;
    rd_kafka_topic_t *topic;
} Mock;

static void
mock_close(Mock *mock)
{
    if (mock->topic != NULL)
        rd_kafka_topic_destroy(mock->topic);
    /* The producer before the cluster it is connected to, the cluster
     * before the handle it lives on. */
    if (mock->producer != NULL)
        rd_kafka_destroy(mock->producer);
    if (mock->cluster != NULL)
        rd_kafka_mock_cluster_destroy(mock->cluster);
    if (mock->host != NULL)
        rd_kafka_destroy(mock->host);
    *mock = (Mock){0};
}

/* Sets up the mock cluster, its topic and the producer, and waits for the
 * producer's metadata; FALSE with a message (and `mock` closed) when
 * librdkafka refuses. */
static gboolean
mock_open(Mock *mock, const MockOptions *options, Deliveries *deliveries)
{
    *mock = (Mock){0};
    /* The mock cluster lives on a client handle of its own, which only
     * keeps its books; the benchmark's producer connects to it over
     * localhost like any client. The handle has no bootstrap.servers, which
     * librdkafka notes at level 5 on every run: it logs warnings only. */
    rd_kafka_conf_t *host_conf = rd_kafka_conf_new();
    if (!conf_set(host_conf, "log_level", "4")) {
        rd_kafka_conf_destroy(host_conf);
        return FALSE;
    }
    mock->host = client_new(host_conf);
    if (mock->host != NULL)
        mock->cluster = rd_kafka_mock_cluster_new(mock->host, MOCK_BROKERS);
    if (mock->cluster == NULL) {
        fprintf(stderr, "ksim-rdkafka-mock: could not create the mock cluster\n");
        mock_close(mock);
        return FALSE;
    }
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(
        mock->cluster, MOCK_TOPIC, (int)options->partitions, MOCK_REPLICATION_FACTOR);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        fprintf(stderr, "ksim-rdkafka-mock: topic %s: %s\n", MOCK_TOPIC, rd_kafka_err2str(err));
        mock_close(mock);
        return FALSE;
    }
    mock->producer =
        producer_new(rd_kafka_mock_cluster_bootstraps(mock->cluster), options, deliveries);
    if (mock->producer != NULL)
        mock->topic = rd_kafka_topic_new(mock->producer, MOCK_TOPIC, NULL);
    if (mock->topic == NULL || !metadata_ready(mock->producer, mock->topic, options->partitions)) {
        if (mock->producer != NULL && mock->topic == NULL)
            fprintf(stderr, "ksim-rdkafka-mock: topic %s: %s\n", MOCK_TOPIC,
                    rd_kafka_err2str(rd_kafka_last_error()));
        mock_close(mock);
        return FALSE;
    }
    return TRUE;
}

/* Every record acknowledged without error, and none unaccounted for. */
static gboolean
deliveries_complete(const Deliveries *deliveries, gint64 records)
{
    if (deliveries->failed > 0) {
        fprintf(stderr,
                "ksim-rdkafka-mock: %" G_GUINT64_FORMAT " of %" G_GINT64_FORMAT
                " records failed, the first with %s\n",
                deliveries->failed, records, rd_kafka_err2str(deliveries->first_error));
        return FALSE;
    }
    if (deliveries->delivered != (guint64)records) {
        fprintf(stderr,
                "ksim-rdkafka-mock: %" G_GUINT64_FORMAT " delivery reports for %" G_GINT64_FORMAT
                " records\n",
                deliveries->delivered, records);
        return FALSE;
    }
    return TRUE;
}

int
main(int argc, char **argv)
{
    MockOptions options = {1000000, 3, 100, 5, 50000, FALSE};
    if (!parse_options(argc, argv, &options))
        return 2;
    Deliveries deliveries = {0, 0, RD_KAFKA_RESP_ERR_NO_ERROR};
    Mock mock;
    double setup_start_s = monotonic_s();
    if (!mock_open(&mock, &options, &deliveries))
        return 1;
    double run_start_s = monotonic_s();
    gboolean ok = produce_all(mock.producer, mock.topic, &options);
    double run_s = monotonic_s() - run_start_s;
    ok = ok && deliveries_complete(&deliveries, options.records);
    if (ok)
        print_figures(&options, &deliveries, run_start_s - setup_start_s, run_s);
    mock_close(&mock);
    return ok ? 0 : 1;
}
