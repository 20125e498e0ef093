// Reading a consumer group's committed offsets, shared by the consumer and the admin client
// (lib/kafka internal).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>
#include <vector>

#include "kafka/error.h"
#include "kafka/record.h"

namespace exactly::kafka {

// Fills in the offset `rk`'s group has committed for each of `partitions` of `topic`
// (offset_invalid: none). Under read_committed librdkafka asks for stable offsets: a pending
// transactional commit is waited out, not returned. A partition's own error fails the call.
Error fetch_committed(rd_kafka_t* rk, const std::string& topic,
                      std::vector<PartitionOffset>& partitions, std::chrono::milliseconds timeout);

}  // namespace exactly::kafka
