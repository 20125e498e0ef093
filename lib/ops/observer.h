// What the engine reports to, handed over as one: the metrics and the health state. Also the
// statistics callbacks for its Kafka clients, which feed both.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "ops/health.h"
#include "ops/metrics.h"

namespace exactly::ops {

// Both outlive the engine (main owns them, and the HTTP server reads them).
struct Observer {
  Metrics& metrics;
  Health& health;
};

// Has kafka::StatsCallback's signature, so it can be passed to the clients' create().
using StatisticsHandler = std::function<void(std::string_view json)>;

// For the consumer: LSO gap and last stable offset of the assigned partitions. A document that does not parse is logged
// once per client and otherwise ignored.
StatisticsHandler consumer_statistics(Observer observer);
// For the transactional producer of input partition `partition`: retries and requests in
// flight.
StatisticsHandler producer_statistics(Observer observer, std::int32_t partition);

}  // namespace exactly::ops
