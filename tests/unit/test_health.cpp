// Liveness and readiness: every branch, with time passed in (no sleeps).
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "ops/health.h"

using exactly::ops::Health;
using namespace std::chrono_literals;

namespace {

const Health::Clock::time_point t0{std::chrono::hours{1000}};

bool has(const Health::Verdict& v, const std::string& text) {
  return v.reason.find(text) != std::string::npos;
}

// An instance that is ready at t0 + 1s: two partitions, both producers initialised.
void make_ready(Health& h) {
  h.set_assignment(2);
  h.set_producers_ready(2);
  h.polled(t0 + 1s, false);
}

}  // namespace

TEST_CASE("liveness: busy without progress for longer than stalled_after is not alive") {
  Health h(10s, 30s, t0);
  CHECK(h.liveness(t0).ok);
  CHECK(h.liveness(t0 + 10s).ok);  // at the limit, still fine
  const auto stalled = h.liveness(t0 + 11s);
  CHECK_FALSE(stalled.ok);
  CHECK(has(stalled, "no progress for 11.0s"));
  CHECK(has(stalled, "stalled_after is 10.0s"));

  h.progress(t0 + 9s);
  CHECK(h.liveness(t0 + 19s).ok);
  CHECK_FALSE(h.liveness(t0 + 20s).ok);
  h.committed(t0 + 20s);  // a commit is progress too
  CHECK(h.liveness(t0 + 30s).ok);
}

TEST_CASE("liveness: an idle loop that keeps polling is alive however long nothing comes") {
  Health h(10s, 30s, t0);
  for (auto t = t0; t < t0 + 1h; t += 5s) {
    h.polled(t, false);
    CHECK(h.liveness(t + 5s).ok);
  }
}

TEST_CASE("liveness: an idle loop that stops polling is stuck") {
  Health h(10s, 30s, t0);
  h.polled(t0 + 1s, false);
  CHECK(h.liveness(t0 + 11s).ok);
  const auto v = h.liveness(t0 + 12s);
  CHECK_FALSE(v.ok);
  CHECK(has(v, "has not polled for 11.0s"));
}

TEST_CASE("liveness: work arriving after a quiet spell starts the stall clock afresh") {
  Health h(10s, 30s, t0);
  h.polled(t0 + 1min, false);  // idle for a minute, no progress since t0
  h.polled(t0 + 2min, true);   // a record arrives
  CHECK(h.liveness(t0 + 2min + 10s).ok);
  CHECK_FALSE(h.liveness(t0 + 2min + 11s).ok);  // and then nothing is made of it

  // Messages on consecutive polls do not push the clock: only progress does.
  Health busy(10s, 30s, t0);
  for (auto t = t0; t <= t0 + 10s; t += 1s) busy.polled(t, true);
  CHECK_FALSE(busy.liveness(t0 + 11s).ok);
}

TEST_CASE("liveness: a fatal error fails it at once, with the message, idle or not") {
  Health h(10s, 30s, t0);
  h.polled(t0, false);
  h.set_fatal("producer fenced and cannot be re-created");
  const auto v = h.liveness(t0);
  CHECK_FALSE(v.ok);
  CHECK(v.reason == "fatal error: producer fenced and cannot be re-created");
  CHECK_FALSE(h.readiness(t0).ok);
}

TEST_CASE("readiness: needs an assignment") {
  Health h(10s, 30s, t0);
  h.polled(t0, false);
  const auto v = h.readiness(t0);
  CHECK_FALSE(v.ok);
  CHECK(v.reason == "no partitions assigned");
}

TEST_CASE("readiness: needs every producer of the assignment initialised") {
  Health h(10s, 30s, t0);
  h.polled(t0, false);
  h.set_assignment(4);
  h.set_producers_ready(3);
  const auto v = h.readiness(t0);
  CHECK_FALSE(v.ok);
  CHECK(v.reason == "3 of 4 producers initialised");
  h.set_producers_ready(4);
  CHECK(h.readiness(t0).ok);
}

TEST_CASE("readiness: with no input waiting, an old commit does not matter") {
  Health h(10s, 30s, t0);
  make_ready(h);
  h.polled(t0 + 1h, false);
  h.set_input_waiting(false);
  CHECK(h.readiness(t0 + 1h).ok);
}

TEST_CASE("readiness: with input waiting, the last commit must be younger than commit_age") {
  Health h(1h, 30s, t0);  // a long stalled_after keeps liveness out of the way
  make_ready(h);
  h.set_input_waiting(true);
  h.progress(t0 + 20s);
  CHECK(h.readiness(t0 + 30s).ok);  // start-up counts as the first commit's baseline
  const auto v = h.readiness(t0 + 31s);
  CHECK_FALSE(v.ok);
  CHECK(has(v, "input is waiting and nothing was committed for 31.0s"));
  CHECK(has(v, "commit_age is 30.0s"));

  h.committed(t0 + 40s);
  CHECK(h.readiness(t0 + 70s).ok);
  CHECK_FALSE(h.readiness(t0 + 71s).ok);
  h.set_input_waiting(false);
  CHECK(h.readiness(t0 + 71s).ok);
}

TEST_CASE("readiness: a stuck loop is not ready either") {
  Health h(10s, 1h, t0);
  make_ready(h);
  h.polled(t0 + 2s, true);
  const auto v = h.readiness(t0 + 13s);
  CHECK_FALSE(v.ok);
  CHECK(has(v, "no progress"));
}
