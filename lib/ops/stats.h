// librdkafka's statistics JSON (STATISTICS.md of v2.0.2), reduced to the few fields the metrics
// use. librdkafka emits it every statistics.interval.ms through the stats callback; the parser
// never throws, so it can run inside that callback.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exactly::ops {

// One partition of one topic. Offsets librdkafka does not know are -1 (it prints -1001 for
// "invalid"; both read as unknown here).
struct PartitionStatistics {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t hi_offset = -1;         // high watermark
  std::int64_t ls_offset = -1;         // last stable offset (end of committed data)
  std::int64_t app_offset = -1;        // last record handed to the application + 1
  std::int64_t committed_offset = -1;  // as far as this consumer knows
  std::int64_t consumer_lag = -1;      // librdkafka's own figure, see lag()

  // Records of committed data not yet handed to the application: ls_offset minus app_offset
  // (committed_offset before the first record). librdkafka's consumer_lag subtracts the
  // committed offset the consumer saw, but the engine commits through TxnOffsetCommit of its
  // producers, which the consumer never sees, so that figure only grows. Empty when unknown.
  [[nodiscard]] std::optional<std::int64_t> lag() const;
  // Records past the last stable offset: hi_offset - ls_offset, the data of open transactions a
  // read_committed consumer cannot read yet. Empty when unknown.
  [[nodiscard]] std::optional<std::int64_t> lso_gap() const;
};

struct BrokerStatistics {
  std::string name;
  std::int64_t outbuf_cnt = 0;    // requests waiting to be sent
  std::int64_t waitresp_cnt = 0;  // requests sent, waiting for the response (in flight)
  std::int64_t txretries = 0;     // requests retried, since the client was created
};

struct Statistics {
  std::string name;  // the client instance, e.g. "exactly#producer-3"; unique within a process
  std::string type;  // "producer" or "consumer"
  std::vector<BrokerStatistics> brokers;
  std::vector<PartitionStatistics> partitions;  // without the internal UA partition (-1)

  [[nodiscard]] std::int64_t requests_in_flight() const;  // sum of waitresp_cnt
  [[nodiscard]] std::int64_t requests_queued() const;     // sum of outbuf_cnt
  [[nodiscard]] std::int64_t retries() const;             // sum of txretries
};

struct StatisticsResult {
  std::optional<Statistics> statistics;  // set unless `error` is
  std::string error;
};

// Parses one statistics document. Only invalid JSON or a document that is not an object is an
// error; a missing or mistyped field reads as unknown, so one new or changed librdkafka field
// costs that field, not the whole sample.
[[nodiscard]] StatisticsResult parse_statistics(std::string_view json) noexcept;

}  // namespace exactly::ops
