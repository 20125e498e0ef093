#include "ops/signals.h"

#include <csignal>
#include <cstdlib>

#include <spdlog/spdlog.h>

namespace exactly::ops {
namespace {

std::atomic<int> g_signals{0};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs a lock-free counter");

extern "C" void on_signal(int /*signo*/) { g_signals.fetch_add(1); }

}  // namespace

const std::atomic<int>& install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  return g_signals;
}

ShutdownGuard::ShutdownGuard(const std::atomic<int>& signals,
                             std::chrono::milliseconds shutdown_timeout,
                             std::chrono::milliseconds grace)
    : signals_(signals), shutdown_timeout_(shutdown_timeout), grace_(grace),
      thread_([this] { watch(); }) {}

ShutdownGuard::~ShutdownGuard() {
  done_ = true;
  thread_.join();
}

void ShutdownGuard::watch() {
  using Clock = std::chrono::steady_clock;
  constexpr auto tick = std::chrono::milliseconds{50};
  while (!done_ && signals_.load() == 0) std::this_thread::sleep_for(tick);
  if (done_) return;
  auto deadline = Clock::now() + shutdown_timeout_ + grace_;
  bool second = false;
  while (!done_) {
    if (!second && signals_.load() > 1) {
      second = true;
      deadline = std::min(deadline, Clock::now() + grace_);
    }
    if (Clock::now() >= deadline) {
      const int code = second ? 130 : 1;
      spdlog::error("{}; exiting now with code {} (open transactions are left to the broker and the "
                    "partitions' next owners, who abort them)",
                    second ? "a second signal, and the shutdown did not finish"
                           : "the shutdown did not finish within shutdown.timeout_ms",
                    code);
      spdlog::default_logger()->flush();
      std::_Exit(code);
    }
    std::this_thread::sleep_for(tick);
  }
}

}  // namespace exactly::ops
