// An idempotent, non-transactional producer for tools: sample data and test input.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/error.h"
#include "kafka/producer.h"

namespace exactly::kafka {

class PlainProducer {
 public:
  static std::unique_ptr<PlainProducer> create(const Properties& properties,
                                               const std::string& topic, std::string& error);
  ~PlainProducer();
  PlainProducer(const PlainProducer&) = delete;
  PlainProducer& operator=(const PlainProducer&) = delete;

  [[nodiscard]] Error produce(const ProduceRecord& record);
  // Waits for every delivery; an error if any record failed or the timeout passed.
  [[nodiscard]] Error flush(std::chrono::milliseconds timeout);

  // For the delivery report trampoline only.
  void on_delivery(int err) noexcept;

 private:
  PlainProducer() = default;
  struct rd_kafka_s* rk_ = nullptr;
  struct rd_kafka_topic_s* topic_ = nullptr;
  std::atomic<std::uint64_t> failed_{0};
  std::atomic<int> first_error_{0};
  std::vector<std::string> header_names_;
};

}  // namespace exactly::kafka
