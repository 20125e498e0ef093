// One produce call shared by the transactional and the plain producer (lib/kafka internal).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>
#include <vector>

#include "kafka/error.h"
#include "kafka/producer.h"

namespace exactly::kafka {

// Produces a copy of `record`. A full local queue is waited out (serving the producer) for at most
// `queue_wait`. `header_names` is scratch space, reused across calls.
Error produce_record(rd_kafka_t* rk, rd_kafka_topic_t* topic, const ProduceRecord& record,
                     std::vector<std::string>& header_names, std::chrono::milliseconds queue_wait,
                     bool transactional);

}  // namespace exactly::kafka
