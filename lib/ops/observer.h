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

// For the consumer: lag and LSO gap of the assigned partitions, and whether input is waiting
// (Health::set_input_waiting) when any lag is known. A document that does not parse is logged
// once per client and otherwise ignored.
StatisticsHandler consumer_statistics(Observer observer);
// For the transactional producer of input partition `partition`: retries and requests in
// flight.
StatisticsHandler producer_statistics(Observer observer, std::int32_t partition);

}  // namespace exactly::ops
