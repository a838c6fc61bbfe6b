/*
 * producer_config: the producer's configuration, with Kafka's key names and
 * Kafka 3.x defaults, and Kafka's consistency checks.
 *
 * Two of Kafka's rules depend on whether the user wrote a key or left its
 * default, so the struct carries "explicit" flags for those keys:
 *
 *  - Idempotence (ProducerConfig.postProcessAndValidateIdempotenceConfigs,
 *    Kafka 3.2+): enable.idempotence needs acks=all, retries > 0 and
 *    max.in.flight.requests.per.connection <= 5. When the user set
 *    enable.idempotence=true explicitly, a conflict is an error; when
 *    idempotence is on only by default, a conflicting key silently turns it
 *    off (producer_config_resolve).
 *  - transactional.id needs idempotence (KafkaProducer's "Cannot set a
 *    transactional.id without also enabling idempotence"): with it set, any
 *    conflict with idempotence is an error, explicit or not.
 *  - delivery.timeout.ms >= linger.ms + request.timeout.ms
 *    (KafkaProducer.configureDeliveryTimeout): an error when the user set
 *    delivery.timeout.ms, otherwise it is raised to linger.ms +
 *    request.timeout.ms.
 */
#ifndef PRODUCER_CONFIG_H
#define PRODUCER_CONFIG_H

#include <glib.h>

#define PRODUCER_CLIENT_ID_MAX 63
#define PRODUCER_TRANSACTIONAL_ID_MAX 63
/* Kafka's MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION_FOR_IDEMPOTENCE. */
#define PRODUCER_IDEMPOTENT_IN_FLIGHT_MAX 5

/* How a record without a key and without an explicit partition is placed. */
typedef enum {
    PRODUCER_PARTITIONER_STICKY = 0,  /* Kafka 2.4+ default (StickyPartitionCache) */
    PRODUCER_PARTITIONER_ROUND_ROBIN, /* RoundRobinPartitioner, as the study notes describe */
} ProducerPartitioner;

/* Each field is the Kafka key in its comment (sizes in bytes). The defaults
 * are the key registry's (src/harness/kconfig.c) alone: its bindings
 * (kconfig_bind_producer_defaults) fill the struct for every user. */
typedef struct {
    gint16 acks;                                  /* acks: all is -1; 0, 1 or -1 */
    gboolean enable_idempotence;                  /* enable.idempotence */
    gboolean enable_idempotence_explicit;         /* the user wrote enable.idempotence */
    gint32 retries;                               /* retries */
    gint32 batch_size;                            /* batch.size */
    gint64 linger_ms;                             /* linger.ms */
    gint64 buffer_memory;                         /* buffer.memory */
    gint64 max_block_ms;                          /* max.block.ms */
    gint32 max_in_flight_requests_per_connection; /* max.in.flight.requests.per.connection */
    gint64 request_timeout_ms;                    /* request.timeout.ms */
    gint64 retry_backoff_ms;                      /* retry.backoff.ms */
    gint64 delivery_timeout_ms;                   /* delivery.timeout.ms */
    gboolean delivery_timeout_ms_explicit;        /* the user wrote delivery.timeout.ms */
    gint64 metadata_max_age_ms;                   /* metadata.max.age.ms */
    gint32 max_request_size;                      /* max.request.size */
    gint64 reconnect_backoff_ms;                  /* reconnect.backoff.ms */
    gint64 reconnect_backoff_max_ms;              /* reconnect.backoff.max.ms */
    ProducerPartitioner partitioner;              /* partitioner.class (null: sticky) */
    char client_id[PRODUCER_CLIENT_ID_MAX + 1];   /* client.id */
    /* transactional.id, "" for null: transactions (producer.h) need
     * idempotence, which then cannot be turned off by a conflicting key. */
    char transactional_id[PRODUCER_TRANSACTIONAL_ID_MAX + 1];
    gint64 transaction_timeout_ms; /* transaction.timeout.ms */
    /* The cluster's finalized transaction.version feature level, which the
     * Java client reads from its brokers' ApiVersions (TransactionManager.
     * maybeUpdateTransactionV2Enabled) and uses from 2 on; set by the runner
     * from the cluster, not a producer key. 0: the pre-KIP-890 protocol. */
    gint32 transaction_version;
} ProducerConfig;

#define KSIM_PRODUCER_ERROR (ksim_producer_error_quark())
GQuark ksim_producer_error_quark(void);
typedef enum {
    KSIM_PRODUCER_ERROR_CONFIG, /* a value out of range, or keys that contradict each other */
} KsimProducerError;

/* Kafka's checks: value ranges, the idempotence conflicts when
 * enable.idempotence was set explicitly, and delivery.timeout.ms when it was
 * set explicitly. FALSE with a message naming the conflicting keys. */
gboolean producer_config_validate(const ProducerConfig *config, GError **error);

/* The configuration Kafka would run with: idempotence turned off when it was
 * on only by default and a key conflicts with it, and delivery.timeout.ms
 * raised to linger.ms + request.timeout.ms when it was not set explicitly.
 * `config` must be valid. */
void producer_config_resolve(const ProducerConfig *config, ProducerConfig *effective);

/* Sets transactional.id ("" or NULL: none), asserting it fits. */
void producer_config_set_transactional_id(ProducerConfig *config, const char *transactional_id);

#endif
