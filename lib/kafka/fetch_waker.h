// Keeps librdkafka 2.0.2's fetcher from idling while the consumer queue runs dry.
//
// A broker thread stops fetching a partition once the consumer queue holds queued.min.messages
// (or queued.max.messages.kbytes), and in 2.0.2 nothing wakes it when the application drains the
// queue: it looks again only after its next network event or its one-second timer (2.2.0 added
// fetch.queue.backoff.ms for this). A queue small enough for a modest memory footprint then
// empties long before the fetcher looks, and the pipeline waits up to a second at a time.
//
// The waker watches the queue. When it has seen it nearly full (the fetchers may have stopped)
// and then half empty, it asks the partitions' leaders for their end offsets: a request through
// each leader's broker thread, which serves it, decides again, and fetches. One small request per
// leader per refill; none while the consumer keeps up (the queue then stays short).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

struct rd_kafka_s;
struct rd_kafka_queue_s;

namespace exactly::kafka {

// When a refill is due, from samples of the queue's length. A fetch response can lift the queue
// just past the threshold and the loop drain it back below before the next sample: a waker that
// waited to see the threshold itself missed that stop, and the fetchers idled for their second
// (measured: end-to-end p99 of a second at 100,000 records/s). So a sample at three quarters of
// the threshold counts as a possible stop, and the refill is asked for at half: the half still
// queued covers the fetch's round trip. A refill asked for while the fetchers were running
// costs one small request and changes nothing.
class RefillWatch {
 public:
  explicit RefillWatch(std::int64_t threshold)
      : high_(threshold - threshold / 4), low_(std::max<std::int64_t>(threshold / 2, 1)) {}
  // True when this sample calls for a refill.
  bool sample(std::int64_t length) {
    if (length >= high_) {
      high_seen_ = true;
    } else if (high_seen_ && length < low_) {
      high_seen_ = false;
      return true;
    }
    return false;
  }

 private:
  std::int64_t high_;
  std::int64_t low_;
  bool high_seen_ = false;
};

class FetchWaker {
 public:
  // `threshold`: the consumer's queued.min.messages. Starts a thread; `rk` must outlive this.
  FetchWaker(rd_kafka_s* rk, std::int64_t threshold);
  ~FetchWaker();  // stops the thread
  FetchWaker(const FetchWaker&) = delete;
  FetchWaker& operator=(const FetchWaker&) = delete;

  void stop();
  // Requests made so far (for tests and the debug log).
  [[nodiscard]] std::int64_t wakeups() const;

 private:
  void run();
  void wake();

  rd_kafka_s* rk_;
  rd_kafka_queue_s* queue_;
  std::int64_t threshold_;
  mutable std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
  std::int64_t wakeups_ = 0;
  std::thread thread_;
};

}  // namespace exactly::kafka
