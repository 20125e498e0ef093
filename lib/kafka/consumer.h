// The read_committed group consumer of the input topic, with an eager rebalance protocol whose
// assign and revoke events are handed to the engine synchronously.
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
struct rd_kafka_message_s;
struct rd_kafka_queue_s;

namespace exactly::kafka {

class FetchWaker;
class GroupMetadata;

// Called from inside Consumer::poll() on the polling thread.
class RebalanceHandler {
 public:
  virtual ~RebalanceHandler() = default;
  // Partitions newly assigned. Returns where to start each (offset_invalid: the group's committed
  // offset, else auto.offset.reset). Any partition left out is not consumed.
  virtual std::vector<PartitionOffset> on_assign(std::span<const std::int32_t> partitions) = 0;
  // Partitions taken away. `lost`: the assignment was lost (session timeout, fencing), so
  // anything open must be aborted, not committed.
  virtual void on_revoke(std::span<const std::int32_t> partitions, bool lost) = 0;
};

// One consumed message or consumer error; owns the librdkafka message.
class Message {
 public:
  Message() = default;
  explicit Message(rd_kafka_message_s* raw) : raw_(raw) {}
  ~Message();
  Message(Message&& other) noexcept : raw_(other.raw_) { other.raw_ = nullptr; }
  Message& operator=(Message&& other) noexcept;
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;

  [[nodiscard]] bool empty() const { return raw_ == nullptr; }
  [[nodiscard]] Error error() const;  // none for a regular message
  [[nodiscard]] std::string_view topic() const;
  [[nodiscard]] std::int32_t partition() const;
  [[nodiscard]] std::int64_t offset() const;
  [[nodiscard]] std::int64_t timestamp_ms() const;  // -1 if none
  [[nodiscard]] std::optional<std::string_view> key() const;
  [[nodiscard]] std::optional<std::string_view> value() const;
  [[nodiscard]] std::size_t size() const;  // key + value bytes
  // Replaces `out` with views of the headers (valid while this message lives).
  void headers(std::vector<HeaderView>& out) const;

 private:
  rd_kafka_message_s* raw_ = nullptr;
};

class Consumer {
 public:
  // `stats`, if set, receives librdkafka's statistics (see StatsCallback).
  static std::unique_ptr<Consumer> create(const Properties& properties, std::string topic,
                                          RebalanceHandler& handler, std::string& error,
                                          StatsCallback stats = {});
  ~Consumer();
  Consumer(const Consumer&) = delete;
  Consumer& operator=(const Consumer&) = delete;

  [[nodiscard]] const std::string& topic() const { return topic_; }

  [[nodiscard]] Error subscribe();
  // One message (or error, or nothing) per call: librdkafka 2.0.2's batch calls can lose messages
  // around rebalance, seek and pause.
  Message poll(std::chrono::milliseconds timeout);

  // Committed offsets of the group for these partitions (offset_invalid where none).
  // Commits these offsets (the next offset to read, per partition) for the group, waiting for the
  // answer (delivery = "at-least-once" only: exactly-once commits through the transactions).
  [[nodiscard]] Error commit(const std::vector<PartitionOffset>& offsets);
  [[nodiscard]] Error committed(std::vector<PartitionOffset>& partitions,
                                std::chrono::milliseconds timeout);
  // Rewinds one partition; the per-partition result is checked (2.0.2's seek timeout bug).
  [[nodiscard]] Error seek(std::int32_t partition, std::int64_t offset,
                           std::chrono::milliseconds timeout);
  [[nodiscard]] Error pause(std::int32_t partition);
  [[nodiscard]] Error resume(std::int32_t partition);
  // Null when librdkafka has none (the group is terminating).
  [[nodiscard]] std::unique_ptr<GroupMetadata> group_metadata() const;

  // Leaves the group (the revoke callback runs) and waits at most until `deadline`.
  // True when closed in time.
  bool close(std::chrono::steady_clock::time_point deadline);

  // True when librdkafka knows the assignment is lost (session timeout, fencing) and the revoke
  // callback is on its way: nothing of this member's may be committed or re-initialised.
  [[nodiscard]] bool assignment_lost() const;

  // A rebalance handler threw or librdkafka refused an assignment: the consumer must stop.
  [[nodiscard]] const std::string& failure() const { return failure_; }

  // librdkafka's partition count of the topic from cluster metadata, or an error.
  [[nodiscard]] Error partition_count(const std::string& topic, int& count,
                                      std::chrono::milliseconds timeout) const;

  // The partition's low and high watermarks from its leader (under read_committed the high one
  // is the last stable offset).
  [[nodiscard]] Error watermarks(std::int32_t partition, std::int64_t& low, std::int64_t& high,
                                 std::chrono::milliseconds timeout) const;

  // The watermarks librdkafka last learnt from fetching the partition, without a request: false
  // when it knows none yet. Under read_committed the high one is the end of committed data.
  bool cached_watermarks(std::int32_t partition, std::int64_t& low, std::int64_t& high) const;

  // Times the prefetch queue ran low after filling and the fetchers were woken (FetchWaker).
  [[nodiscard]] std::int64_t fetch_wakeups() const;

  // For the rebalance trampoline only.
  void handle_rebalance(int err, void* partitions) noexcept;
  // For the statistics trampoline only.
  [[nodiscard]] const StatsCallback& stats_callback() const { return stats_; }

 private:
  Consumer() = default;
  rd_kafka_s* rk_ = nullptr;
  std::string topic_;
  RebalanceHandler* handler_ = nullptr;
  std::string failure_;
  StatsCallback stats_;
  std::unique_ptr<FetchWaker> waker_;
};

}  // namespace exactly::kafka
