/*
 * producer_config: defaults and Kafka's checks (see producer_config.h).
 *
 * The messages repeat Kafka's ConfigException texts where Kafka has one, and
 * always name every key involved, so a user can find the line to change.
 */
#include "producer_config.h"

#include "sim_assert.h"

#include <string.h>

GQuark
ksim_producer_error_quark(void)
{
    return g_quark_from_static_string("ksim-producer-error-quark");
}

void
producer_config_set_transactional_id(ProducerConfig *config, const char *transactional_id)
{
    if (transactional_id == NULL)
        transactional_id = "";
    KSIM_ASSERT(strlen(transactional_id) <= PRODUCER_TRANSACTIONAL_ID_MAX);
    g_strlcpy(config->transactional_id, transactional_id, sizeof config->transactional_id);
}

typedef struct {
    const char *key;
    gint64 value;
    gint64 min;
} RangeCheck;

/* Kafka's ConfigDef ranges (atLeast(...)), checked in key order. */
static gboolean
check_ranges(const ProducerConfig *c, GError **error)
{
    const RangeCheck checks[] = {
        {"retries", c->retries, 0},
        {"batch.size", c->batch_size, 0},
        {"linger.ms", c->linger_ms, 0},
        {"buffer.memory", c->buffer_memory, 0},
        {"max.block.ms", c->max_block_ms, 0},
        {"max.in.flight.requests.per.connection", c->max_in_flight_requests_per_connection, 1},
        {"request.timeout.ms", c->request_timeout_ms, 0},
        {"retry.backoff.ms", c->retry_backoff_ms, 0},
        {"delivery.timeout.ms", c->delivery_timeout_ms, 0},
        {"metadata.max.age.ms", c->metadata_max_age_ms, 0},
        {"max.request.size", c->max_request_size, 0},
        {"reconnect.backoff.ms", c->reconnect_backoff_ms, 0},
        {"reconnect.backoff.max.ms", c->reconnect_backoff_max_ms, 0},
        {"transaction.timeout.ms", c->transaction_timeout_ms, 1},
    };
    for (guint i = 0; i < G_N_ELEMENTS(checks); i++) {
        if (checks[i].value < checks[i].min) {
            g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                        "%s: %" G_GINT64_FORMAT " is out of range (at least %" G_GINT64_FORMAT ")",
                        checks[i].key, checks[i].value, checks[i].min);
            return FALSE;
        }
    }
    if (c->acks != 0 && c->acks != 1 && c->acks != -1) {
        g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                    "acks: %d is not one of all (-1), 0, 1", c->acks);
        return FALSE;
    }
    return TRUE;
}

/* The first key that conflicts with idempotence, in Kafka's order of checks
 * (retries, acks, max.in.flight.requests.per.connection), with Kafka's
 * message; NULL when there is none. */
static const char *
idempotence_conflict(const ProducerConfig *c, const char **key)
{
    if (c->retries == 0) {
        *key = "retries";
        return "must be non-zero when using the idempotent producer";
    }
    if (c->acks != -1) {
        *key = "acks";
        return "must be all in order to use the idempotent producer; otherwise "
               "idempotence cannot be guaranteed";
    }
    if (c->max_in_flight_requests_per_connection > PRODUCER_IDEMPOTENT_IN_FLIGHT_MAX) {
        *key = "max.in.flight.requests.per.connection";
        return "must be at most 5 to use the idempotent producer";
    }
    *key = NULL;
    return NULL;
}

gboolean
producer_config_validate(const ProducerConfig *config, GError **error)
{
    KSIM_ASSERT(config != NULL);
    KSIM_ASSERT(error == NULL || *error == NULL);
    if (!check_ranges(config, error))
        return FALSE;
    const char *key = NULL;
    const char *conflict = idempotence_conflict(config, &key);
    if (config->enable_idempotence && config->enable_idempotence_explicit && conflict != NULL) {
        g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                    "enable.idempotence=true conflicts with %s: %s %s (or do not set "
                    "enable.idempotence, and Kafka turns idempotence off)",
                    key, key, conflict);
        return FALSE;
    }
    if (config->transactional_id[0] != '\0' && !config->enable_idempotence) {
        g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                    "Cannot set a transactional.id without also enabling idempotence "
                    "(enable.idempotence=false)");
        return FALSE;
    }
    if (config->transactional_id[0] != '\0' && conflict != NULL) {
        g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                    "transactional.id needs idempotence, which conflicts with %s: %s %s", key,
                    key, conflict);
        return FALSE;
    }
    gint64 floor_ms = MIN(config->linger_ms + config->request_timeout_ms, (gint64)G_MAXINT32);
    if (config->delivery_timeout_ms_explicit && config->delivery_timeout_ms < floor_ms) {
        g_set_error(error, KSIM_PRODUCER_ERROR, KSIM_PRODUCER_ERROR_CONFIG,
                    "delivery.timeout.ms (%" G_GINT64_FORMAT ") should be equal to or larger "
                    "than linger.ms + request.timeout.ms (%" G_GINT64_FORMAT " + %" G_GINT64_FORMAT
                    ")",
                    config->delivery_timeout_ms, config->linger_ms, config->request_timeout_ms);
        return FALSE;
    }
    return TRUE;
}

void
producer_config_resolve(const ProducerConfig *config, ProducerConfig *effective)
{
    KSIM_ASSERT(producer_config_validate(config, NULL));
    KSIM_ASSERT(effective != NULL);
    *effective = *config;
    const char *key = NULL;
    if (effective->enable_idempotence && idempotence_conflict(effective, &key) != NULL) {
        /* Only reachable when idempotence is on by default: validate refused
         * the explicit case. */
        KSIM_ASSERT(!effective->enable_idempotence_explicit);
        effective->enable_idempotence = FALSE;
    }
    gint64 floor_ms = MIN(effective->linger_ms + effective->request_timeout_ms, (gint64)G_MAXINT32);
    if (effective->delivery_timeout_ms < floor_ms) {
        KSIM_ASSERT(!effective->delivery_timeout_ms_explicit);
        effective->delivery_timeout_ms = floor_ms;
    }
}
