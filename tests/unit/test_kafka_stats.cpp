// The statistics callback of the Kafka clients: delivered from poll, exceptions stopped at the C
// boundary. No broker: a client with no bootstrap servers connects nowhere but still emits
// statistics on its timer.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include <spdlog/spdlog.h>

#include "kafka/conf_rdkafka.h"
#include "kafka/producer.h"
#include "ops/stats.h"

using namespace exactly;

namespace {

// Polls until `done` or a few seconds have passed.
template <class Done>
bool poll_until(kafka::TransactionalProducer& producer, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    producer.poll(std::chrono::milliseconds{50});
  }
  return done();
}

const kafka::Properties quiet_producer{{"statistics.interval.ms", "100"},
                                       {"log_level", "0"}};

}  // namespace

TEST_CASE("a transactional producer delivers its statistics to the callback, from poll") {
  spdlog::set_level(spdlog::level::off);  // "no bootstrap.servers" is expected here
  std::string last;
  int calls = 0;
  std::string error;
  auto producer = kafka::TransactionalProducer::create(
      quiet_producer, "exactly-unit-stats", {"out"}, error, [&](std::string_view json) {
        last.assign(json);
        ++calls;
      });
  REQUIRE_MESSAGE(producer, error);
  REQUIRE(poll_until(*producer, [&] { return calls > 0; }));
  const auto parsed = ops::parse_statistics(last);
  REQUIRE(parsed.statistics);
  CHECK(parsed.statistics->type == "producer");
  CHECK(parsed.statistics->name.find("producer") != std::string::npos);
}

TEST_CASE("an exception from the statistics callback stays on our side of librdkafka") {
  spdlog::set_level(spdlog::level::off);
  int calls = 0;
  std::string error;
  auto producer = kafka::TransactionalProducer::create(
      quiet_producer, "exactly-unit-stats-throw", {"out"}, error, [&](std::string_view) {
        ++calls;
        throw std::runtime_error("boom");
      });
  REQUIRE_MESSAGE(producer, error);
  CHECK(poll_until(*producer, [&] { return calls >= 2; }));  // still called after a throw
}

TEST_CASE("without a callback the existing call still compiles and works") {
  std::string error;
  auto producer =
      kafka::TransactionalProducer::create(quiet_producer, "exactly-unit-no-stats", {"out"}, error);
  CHECK(producer);
}

TEST_CASE("deliver_statistics swallows every exception and lets librdkafka free the text") {
  const char json[] = "{}";
  CHECK(kafka::deliver_statistics({}, json, 2) == 0);
  CHECK(kafka::deliver_statistics([](std::string_view) { throw 42; }, json, 2) == 0);
  CHECK(kafka::deliver_statistics([](std::string_view) { throw std::logic_error("x"); }, json, 2) ==
        0);
  std::string seen;
  CHECK(kafka::deliver_statistics([&](std::string_view j) { seen = j; }, json, 2) == 0);
  CHECK(seen == "{}");
}
