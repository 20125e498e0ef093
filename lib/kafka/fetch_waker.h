// Keeps librdkafka 2.0.2's fetcher from idling while the consumer queue runs dry.
//
// A broker thread stops fetching a partition once the consumer queue holds queued.min.messages
// (or queued.max.messages.kbytes), and in 2.0.2 nothing wakes it when the application drains the
// queue: it looks again only after its next network event or its one-second timer (2.2.0 added
// fetch.queue.backoff.ms for this). A queue small enough for a modest memory footprint then
// empties long before the fetcher looks, and the pipeline waits up to a second at a time.
//
// The waker watches the queue. When it has seen it full (the fetchers have stopped) and then
// below the threshold, it asks the partitions' leaders for their end offsets: a request through
// each leader's broker thread, which serves it, decides again, and fetches. One small request per
// leader per refill; none while the consumer keeps up (the fetchers then never stop).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

struct rd_kafka_s;
struct rd_kafka_queue_s;

namespace exactly::kafka {

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
