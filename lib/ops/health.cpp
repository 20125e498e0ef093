#include "ops/health.h"

#include <fmt/format.h>

namespace exactly::ops {
namespace {

double secs(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

Health::Health(std::chrono::milliseconds stalled_after, std::chrono::milliseconds commit_age,
               Clock::time_point started)
    : stalled_after_(stalled_after),
      commit_age_(commit_age),
      last_progress_(ticks(started)),
      last_commit_(ticks(started)),
      last_poll_(ticks(started)) {}

void Health::progress(Clock::time_point now) {
  last_progress_.store(ticks(now), std::memory_order_relaxed);
}

void Health::committed(Clock::time_point now) {
  last_commit_.store(ticks(now), std::memory_order_relaxed);
  last_progress_.store(ticks(now), std::memory_order_relaxed);
}

void Health::polled(Clock::time_point now, bool got_message) {
  last_poll_.store(ticks(now), std::memory_order_relaxed);
  if (!got_message) {
    idle_.store(true, std::memory_order_relaxed);
  } else if (idle_.exchange(false, std::memory_order_relaxed)) {
    // Work just arrived: the time spent idle is not time without progress.
    last_progress_.store(ticks(now), std::memory_order_relaxed);
  }
}

void Health::set_input_waiting(bool waiting) {
  input_waiting_.store(waiting, std::memory_order_relaxed);
}

void Health::set_assignment(std::size_t partitions) {
  assignment_.store(partitions, std::memory_order_relaxed);
}

void Health::set_producers_ready(std::size_t ready) {
  producers_ready_.store(ready, std::memory_order_relaxed);
}

void Health::set_fatal(std::string message) {
  {
    std::lock_guard lock(fatal_mutex_);
    fatal_message_ = std::move(message);
  }
  fatal_.store(true, std::memory_order_release);
}

Health::Verdict Health::liveness(Clock::time_point now) const {
  if (fatal_.load(std::memory_order_acquire)) {
    std::lock_guard lock(fatal_mutex_);
    return {false, "fatal error: " + fatal_message_};
  }
  if (idle_.load(std::memory_order_relaxed)) {
    // Idle is only believable while the loop keeps polling.
    const auto since_poll = now - Clock::time_point{Clock::duration{last_poll_.load()}};
    if (since_poll > stalled_after_) {
      return {false, fmt::format("the loop has not polled for {:.1f}s (health.stalled_after is "
                                 "{:.1f}s)",
                                 secs(since_poll), secs(stalled_after_))};
    }
    return {};
  }
  const auto since_progress = now - Clock::time_point{Clock::duration{last_progress_.load()}};
  if (since_progress > stalled_after_) {
    return {false, fmt::format("no progress for {:.1f}s while there is work (health.stalled_after "
                               "is {:.1f}s)",
                               secs(since_progress), secs(stalled_after_))};
  }
  return {};
}

Health::Verdict Health::readiness(Clock::time_point now) const {
  if (Verdict live = liveness(now); !live.ok) return live;
  const std::size_t assigned = assignment_.load(std::memory_order_relaxed);
  if (assigned == 0) return {false, "no partitions assigned"};
  const std::size_t ready = producers_ready_.load(std::memory_order_relaxed);
  if (ready < assigned) {
    return {false, fmt::format("{} of {} producers initialised", ready, assigned)};
  }
  if (input_waiting_.load(std::memory_order_relaxed)) {
    const auto since_commit = now - Clock::time_point{Clock::duration{last_commit_.load()}};
    if (since_commit > commit_age_) {
      return {false, fmt::format("input is waiting and nothing was committed for {:.1f}s "
                                 "(health.commit_age is {:.1f}s)",
                                 secs(since_commit), secs(commit_age_))};
    }
  }
  return {};
}

}  // namespace exactly::ops
