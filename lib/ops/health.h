// Liveness and readiness of the exactly-once loop, from what the loop reports (GET /healthz and
// /readyz).
//
// Liveness answers "restart me?": only a fatal error or a stuck loop fails it. A loop that polls
// and gets nothing is idle, not stuck, however long no record comes. Readiness answers "is this
// instance doing its share?": it needs partitions, producers for all of them, and, while input
// is waiting, a recent commit.
//
// The loop writes, HTTP threads read: every field is an atomic, except the fatal message.
// Time is a parameter, so tests need no clock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace exactly::ops {

class Health {
 public:
  using Clock = std::chrono::steady_clock;

  struct Verdict {
    bool ok = true;
    std::string reason;  // empty when ok
  };

  // `stalled_after`: config.health.stalled_after; `commit_age`: config.health.commit_age.
  // `started` is the baseline of both until the first progress and commit.
  Health(std::chrono::milliseconds stalled_after, std::chrono::milliseconds commit_age,
         Clock::time_point started);
  Health(const Health&) = delete;
  Health& operator=(const Health&) = delete;

  // A record was processed (transformed and produced, dead-lettered or skipped).
  void progress(Clock::time_point now);
  // A transaction was committed; also progress.
  void committed(Clock::time_point now);
  // Once per poll of the consumer: `got_message` false means the loop is idle-waiting. The first
  // message after idling starts the stall clock afresh, so a long quiet spell is not a stall.
  void polled(Clock::time_point now, bool got_message);
  // Committed input is waiting to be read (the consumer lag is above zero).
  void set_input_waiting(bool waiting);
  void set_assignment(std::size_t partitions);
  // Producers of the assignment that have completed init_transactions.
  void set_producers_ready(std::size_t ready);
  // The loop is about to stop on an error it cannot recover from; liveness and readiness fail.
  void set_fatal(std::string message);

  [[nodiscard]] Verdict liveness(Clock::time_point now) const;
  [[nodiscard]] Verdict readiness(Clock::time_point now) const;

 private:
  using Rep = Clock::duration::rep;
  static Rep ticks(Clock::time_point t) { return t.time_since_epoch().count(); }

  const Clock::duration stalled_after_;
  const Clock::duration commit_age_;
  std::atomic<Rep> last_progress_;
  std::atomic<Rep> last_commit_;
  std::atomic<Rep> last_poll_;
  std::atomic<bool> idle_{false};
  std::atomic<bool> input_waiting_{false};
  std::atomic<std::size_t> assignment_{0};
  std::atomic<std::size_t> producers_ready_{0};
  std::atomic<bool> fatal_{false};
  mutable std::mutex fatal_mutex_;
  std::string fatal_message_;
};

}  // namespace exactly::ops
