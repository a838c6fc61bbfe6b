/*
 * broker_config: Kafka's defaults for a broker and a topic (see
 * broker_config.h).
 */
#include "broker_config.h"

#include <string.h>

void
broker_config_init(BrokerConfig *config)
{
    memset(config, 0, sizeof *config);
    config->broker_id = 0;
    config->min_insync_replicas = 1;
    config->unclean_leader_election = FALSE;
    config->replica_lag_time_max_ms = 30000;
    config->replica_fetch_wait_max_ms = 500;
    config->replica_fetch_min_bytes = 1;
    config->replica_fetch_max_bytes = 1048576;
    config->replica_fetch_backoff_ms = 1000;
    config->replica_socket_timeout_ms = 30000;
    config->replica_high_watermark_checkpoint_interval_ms = 5000;
    config->zookeeper_session_timeout_ms = 18000;
    config->controller_socket_timeout_ms = 30000;
    config->log_retention_check_interval_ms = 300000;
    config->auto_leader_rebalance_enable = TRUE;
    config->controlled_shutdown_enable = TRUE;
    config->controlled_shutdown_max_retries = 3;
    config->controlled_shutdown_retry_backoff_ms = 5000;
    config->leader_imbalance_check_interval_ms = 300000;
    config->leader_imbalance_per_broker_percentage = 10;
    config->truncation_mode = BROKER_TRUNCATE_HW;
    config->offsets_topic_num_partitions = 50;
    config->offsets_topic_replication_factor = 3;
    config->offsets_commit_timeout_ms = 5000;
    config->group_initial_rebalance_delay_ms = 3000;
    config->group_min_session_timeout_ms = 6000;
    config->group_max_session_timeout_ms = 1800000;
    config->transaction_state_log_num_partitions = 50;
    config->transaction_state_log_replication_factor = 3;
    config->transaction_state_log_min_isr = 2;
    config->transaction_max_timeout_ms = 900000;
    config->transaction_abort_timed_out_transaction_cleanup_interval_ms = 10000;
    plog_config_init(&config->log);
}

void
topic_config_from_broker(TopicConfig *topic, const BrokerConfig *broker)
{
    topic->min_insync_replicas = broker->min_insync_replicas;
    topic->unclean_leader_election = broker->unclean_leader_election;
    topic->log = broker->log;
}
