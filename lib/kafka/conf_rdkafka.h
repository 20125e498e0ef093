// librdkafka configuration objects (lib/kafka internal).
#pragma once

#include <string>

#include "kafka/client_config.h"
#include "kafka/handles.h"

namespace exactly::kafka {

// A conf with `properties` applied in order and librdkafka's log and error callbacks routed to
// spdlog. Null, with `error` naming the property and librdkafka's reason, if one is refused.
ConfHandle make_conf(const Properties& properties, std::string& error);

// Creates the client; `conf` is consumed only on success (rd_kafka_new takes it then).
KafkaHandle make_client(rd_kafka_type_t type, ConfHandle& conf, std::string& error);

}  // namespace exactly::kafka
