// A transactional producer: one per assigned input partition, owning one transactional.id.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/error.h"
#include "kafka/record.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace exactly::kafka {

class GroupMetadata;

using ProduceHeader = HeaderView;

struct ProduceRecord {
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::span<const ProduceHeader> headers;
  std::int32_t partition = -1;  // -1: the partitioner decides by key
  std::int64_t timestamp_ms = 0;  // 0: now
  std::size_t topic = 0;  // TransactionalProducer: index into its topics (0: the output)
};

class TransactionalProducer {
 public:
  // `properties` are applied in order; the transactional.id is ours. `topics` are the topics it
  // writes to (the output first, then the dead-letter topic if any), chosen per record by index.
  // `stats`, if set, receives librdkafka's statistics (see StatsCallback).
  //
  // Without `transactional`, the same interface drives a plain idempotent producer (delivery =
  // "at-least-once"): init, begin and send_offsets do nothing; commit flushes and fails if a
  // record was not delivered; abort waits for what is in flight. `transactional_id` then only
  // names it in logs, and the caller commits the consumed offsets itself after a commit.
  static std::unique_ptr<TransactionalProducer> create(const Properties& properties,
                                                       const std::string& transactional_id,
                                                       const std::vector<std::string>& topics,
                                                       std::string& error,
                                                       StatsCallback stats = {},
                                                       bool transactional = true);
  ~TransactionalProducer();
  TransactionalProducer(const TransactionalProducer&) = delete;
  TransactionalProducer& operator=(const TransactionalProducer&) = delete;

  [[nodiscard]] const std::string& transactional_id() const { return transactional_id_; }

  [[nodiscard]] Error init_transactions(std::chrono::milliseconds timeout);
  [[nodiscard]] Error begin_transaction();
  // Copies key, value and headers. A full local queue is waited out (serving the producer)
  // for at most `queue_wait`.
  [[nodiscard]] Error produce(const ProduceRecord& record, std::chrono::milliseconds queue_wait);
  [[nodiscard]] Error send_offsets_to_transaction(const std::string& topic, std::int32_t partition,
                                                  std::int64_t next_offset,
                                                  const GroupMetadata& group,
                                                  std::chrono::milliseconds timeout);
  // The next offsets of several partitions of `topic`, in one call (one transaction over them).
  [[nodiscard]] Error send_offsets_to_transaction(const std::string& topic,
                                                  std::span<const PartitionOffset> next_offsets,
                                                  const GroupMetadata& group,
                                                  std::chrono::milliseconds timeout);
  // Waits up to `timeout` for every record produced so far to be delivered or to fail (a failure
  // then fails the commit). A retriable error when some are still outstanding.
  [[nodiscard]] Error flush(std::chrono::milliseconds timeout);
  [[nodiscard]] Error commit_transaction(std::chrono::milliseconds timeout);
  [[nodiscard]] Error abort_transaction(std::chrono::milliseconds timeout);
  // Serves delivery reports and error callbacks; never blocks longer than `timeout`.
  void poll(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  [[nodiscard]] bool transactional() const { return transactional_; }

  // For the statistics trampoline only.
  [[nodiscard]] const StatsCallback& stats_callback() const { return stats_; }
  // For the delivery report callback only (at-least-once): the first failure since the last commit.
  void delivery_failed(int code, const char* name, const char* reason);

 private:
  TransactionalProducer() = default;
  rd_kafka_s* rk_ = nullptr;
  std::vector<rd_kafka_topic_s*> topics_;
  std::string transactional_id_;
  std::vector<std::string> header_names_;  // NUL-terminated copies of header names, reused
  StatsCallback stats_;
  bool transactional_ = true;
  // At-least-once: delivery failures since the last commit, and the first one's description.
  int failed_code_ = 0;
  std::string failed_name_;
  std::string failed_reason_;
  std::int64_t failed_ = 0;
};

}  // namespace exactly::kafka
