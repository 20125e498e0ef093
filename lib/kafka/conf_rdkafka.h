// librdkafka configuration objects (lib/kafka internal).
#pragma once

#include <cstddef>
#include <string>

#include "kafka/client_config.h"
#include "kafka/handles.h"

namespace exactly::kafka {

// A conf with `properties` applied in order and librdkafka's log and error callbacks routed to
// spdlog. Null, with `error` naming the property and librdkafka's reason, if one is refused.
ConfHandle make_conf(const Properties& properties, std::string& error);

// Hands librdkafka's statistics to `callback` from a stats_cb trampoline; catches everything, so
// no exception reaches librdkafka. Returns 0: librdkafka frees the JSON.
int deliver_statistics(const StatsCallback& callback, const char* json, std::size_t size) noexcept;

// Creates the client; `conf` is consumed only on success (rd_kafka_new takes it then).
KafkaHandle make_client(rd_kafka_type_t type, ConfHandle& conf, std::string& error);

}  // namespace exactly::kafka
