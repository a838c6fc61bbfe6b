/*
 * broker_config: Kafka's defaults for a broker and a topic (see
 * broker_config.h).
 */
#include "broker_config.h"

#include <string.h>

void
topic_config_from_broker(TopicConfig *topic, const BrokerConfig *broker)
{
    topic->min_insync_replicas = broker->min_insync_replicas;
    topic->unclean_leader_election = broker->unclean_leader_election;
    topic->log = broker->log;
}
