// SIGTERM/SIGINT handling for `exactly run`: a counter the engine watches, and a guard that ends
// the process when a shutdown cannot finish in time (a librdkafka call that overstays its own
// timeout, a frozen broker). Exiting hard is safe: nothing is committed that should not be, and
// the next owner of each partition aborts what was left open.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

namespace exactly::ops {

// Counts SIGTERM and SIGINT from now on.
const std::atomic<int>& install_signal_handlers();

class ShutdownGuard {
 public:
  // After the first signal the process has `shutdown_timeout` (plus `grace`) to finish, and after
  // a second signal `grace`; then it exits with 1, or 130 after a second signal.
  ShutdownGuard(const std::atomic<int>& signals, std::chrono::milliseconds shutdown_timeout,
                std::chrono::milliseconds grace = std::chrono::seconds{5});
  ~ShutdownGuard();  // the work finished: stand down
  ShutdownGuard(const ShutdownGuard&) = delete;
  ShutdownGuard& operator=(const ShutdownGuard&) = delete;

 private:
  void watch();

  const std::atomic<int>& signals_;
  std::chrono::milliseconds shutdown_timeout_;
  std::chrono::milliseconds grace_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace exactly::ops
