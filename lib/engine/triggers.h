// When an open transaction must end: the commit triggers and the watchdog (DESIGN.md items 4, 6).
// Pure functions of the limits and the transaction's size and age, so they are tested alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace exactly::engine {

struct TransactionLimits {
  std::chrono::milliseconds commit_interval{100};
  std::int64_t max_records = 10000;
  std::int64_t max_bytes = 8 * 1024 * 1024;
  std::chrono::milliseconds transaction_timeout{60000};
};

enum class TransactionAction { keep, commit, abort };

// The watchdog fires at 80% of transaction.timeout.ms: early enough that the abort reaches the
// broker before the broker expires the transaction and fences the producer.
constexpr std::chrono::milliseconds watchdog_deadline(std::chrono::milliseconds timeout) {
  return timeout * 8 / 10;
}

// What to do with an open transaction of `records` records, `bytes` bytes, open for `age`.
constexpr TransactionAction due(const TransactionLimits& limits, std::int64_t records,
                                std::int64_t bytes, std::chrono::milliseconds age) {
  if (age >= watchdog_deadline(limits.transaction_timeout)) return TransactionAction::abort;
  if (records >= limits.max_records || bytes >= limits.max_bytes ||
      age >= limits.commit_interval) {
    return TransactionAction::commit;
  }
  return TransactionAction::keep;
}

// Why the limits cannot work, or nullopt. A commit interval longer than half the transaction
// timeout leaves too little room for the commit itself before the watchdog.
std::optional<std::string> check_limits(const TransactionLimits& limits);

}  // namespace exactly::engine
