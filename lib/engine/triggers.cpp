#include "engine/triggers.h"

#include <fmt/format.h>

namespace exactly::engine {

std::optional<std::string> check_limits(const TransactionLimits& limits) {
  if (limits.commit_interval.count() <= 0) return "the commit interval must be positive";
  if (limits.commit_interval * 2 > limits.transaction_timeout) {
    return fmt::format(
        "commit interval {} ms cannot fit in transaction timeout {} ms: it must be at most half "
        "of it (the watchdog aborts at 80%)",
        limits.commit_interval.count(), limits.transaction_timeout.count());
  }
  if (limits.max_records <= 0 || limits.max_bytes <= 0) {
    return "max records and max bytes per transaction must be positive";
  }
  return std::nullopt;
}

}  // namespace exactly::engine
