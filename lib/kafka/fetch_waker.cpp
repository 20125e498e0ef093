#include "kafka/fetch_waker.h"

#include <librdkafka/rdkafka.h>

#include <chrono>

#include <spdlog/spdlog.h>

namespace exactly::kafka {
namespace {

using namespace std::chrono_literals;

// How often the queue is looked at: a refill starts at most this late, while the queue still
// holds half the threshold's worth of records to go on with.
constexpr auto sample_interval = 2ms;
// The wake-up request waits at most this long for its answer (it only serves as a nudge).
constexpr int request_timeout_ms = 500;

}  // namespace

FetchWaker::FetchWaker(rd_kafka_s* rk, std::int64_t threshold)
    : rk_(rk), queue_(rd_kafka_queue_get_consumer(rk)), threshold_(threshold) {
  if (queue_ != nullptr) thread_ = std::thread([this] { run(); });
}

FetchWaker::~FetchWaker() {
  stop();
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
}

void FetchWaker::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::int64_t FetchWaker::wakeups() const {
  const std::lock_guard lock(mutex_);
  return wakeups_;
}

void FetchWaker::run() {
  RefillWatch watch(threshold_);
  std::unique_lock lock(mutex_);
  while (!stop_requested_.wait_for(lock, sample_interval, [this] { return stopping_; })) {
    if (watch.sample(static_cast<std::int64_t>(rd_kafka_queue_length(queue_)))) {
      lock.unlock();
      wake();
      lock.lock();
      ++wakeups_;
    }
  }
}

void FetchWaker::wake() {
  rd_kafka_topic_partition_list_t* assigned = nullptr;
  if (rd_kafka_assignment(rk_, &assigned) != RD_KAFKA_RESP_ERR_NO_ERROR || assigned == nullptr) {
    return;
  }
  if (assigned->cnt > 0) {
    // One ListOffsets request per leader; the answer itself is not needed.
    for (int i = 0; i < assigned->cnt; ++i) assigned->elems[i].offset = RD_KAFKA_OFFSET_END;
    const rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk_, assigned, request_timeout_ms);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::debug("fetch wake-up request: {}", rd_kafka_err2str(err));
    }
  }
  rd_kafka_topic_partition_list_destroy(assigned);
}

}  // namespace exactly::kafka
