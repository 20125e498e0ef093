#include "ops/observer.h"

#include <atomic>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

namespace exactly::ops {
namespace {

// Statistics come every few seconds: one warning says what is wrong without filling the log.
std::optional<Statistics> parse_or_warn(std::string_view json, std::atomic<bool>& warned) {
  auto result = parse_statistics(json);
  if (!result.statistics && !warned.exchange(true)) {
    spdlog::warn("ignoring librdkafka statistics (reported once per client): {}", result.error);
  }
  return std::move(result.statistics);
}

}  // namespace

StatisticsHandler consumer_statistics(Observer observer) {
  auto warned = std::make_shared<std::atomic<bool>>(false);
  return [observer, warned](std::string_view json) {
    if (const auto stats = parse_or_warn(json, *warned)) {
      observer.metrics.apply_consumer_statistics(*stats);
    }
  };
}

StatisticsHandler producer_statistics(Observer observer, std::int32_t partition) {
  auto warned = std::make_shared<std::atomic<bool>>(false);
  return [observer, partition, warned](std::string_view json) {
    if (const auto stats = parse_or_warn(json, *warned)) {
      observer.metrics.apply_producer_statistics(partition, *stats);
    }
  };
}

}  // namespace exactly::ops
