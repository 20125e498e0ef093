// The engine's pure parts: commit triggers, the watchdog, start-up limits, ids, lineage, emitter.
#include <limits>

#include <doctest/doctest.h>

#include "engine/emitter.h"
#include "engine/engine.h"
#include "engine/lineage.h"
#include "engine/triggers.h"
#include "kafka/properties.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly::engine;

TEST_CASE("commit triggers: interval, records, bytes") {
  const TransactionLimits limits{100ms, 500, 1000, 60000ms};
  CHECK(due(limits, 1, 10, 0ms) == TransactionAction::keep);
  CHECK(due(limits, 499, 999, 99ms) == TransactionAction::keep);
  CHECK(due(limits, 1, 10, 100ms) == TransactionAction::commit);
  CHECK(due(limits, 500, 10, 0ms) == TransactionAction::commit);
  CHECK(due(limits, 1, 1000, 0ms) == TransactionAction::commit);
}

TEST_CASE("the watchdog aborts at 80% of the transaction timeout, before the broker would") {
  const TransactionLimits limits{100ms, 500, 1000, 10000ms};
  CHECK(watchdog_deadline(10000ms) == 8000ms);
  CHECK(due(limits, 1, 1, 7999ms) == TransactionAction::commit);
  CHECK(due(limits, 1, 1, 8000ms) == TransactionAction::abort);
  CHECK(due(limits, 1000000, 1, 9000ms) == TransactionAction::abort);
  CHECK(watchdog_deadline(limits.transaction_timeout) < limits.transaction_timeout);
}

TEST_CASE("a commit interval that cannot fit in the transaction timeout is refused") {
  CHECK_FALSE(check_limits({100ms, 1, 1, 60000ms}).has_value());
  CHECK_FALSE(check_limits({30000ms, 1, 1, 60000ms}).has_value());
  const auto too_long = check_limits({30001ms, 1, 1, 60000ms});
  REQUIRE(too_long.has_value());
  CHECK(too_long->find("30001") != std::string::npos);
  CHECK(too_long->find("60000") != std::string::npos);
  CHECK(check_limits({0ms, 1, 1, 60000ms}).has_value());
  CHECK(check_limits({100ms, 0, 1, 60000ms}).has_value());
  CHECK(check_limits({100ms, 1, 0, 60000ms}).has_value());
}

TEST_CASE("the framework's librdkafka settings are valid, and a user's own come after them") {
  exactly::config::Config config;
  config.kafka.bootstrap_servers = "127.0.0.1:9092";
  config.pipeline.group_id = "g";
  config.librdkafka_consumer = {{"fetch.max.bytes", "2097152"}, {"queued.min.messages", "500"}};
  config.librdkafka_producer = {{"linger.ms", "1"}};
  const auto last = [](const exactly::kafka::Properties& props, const std::string& name) {
    std::string value;
    for (const auto& [n, v] : props) {
      if (n == name) value = v;
    }
    return value;
  };
  using exactly::kafka::ClientKind;
  const auto consumer = consumer_properties(config);
  for (const auto& [name, value] : consumer) {
    INFO(name, " = ", value);
    CHECK_FALSE(exactly::kafka::check_property(ClientKind::consumer, name, value).has_value());
  }
  // librdkafka keeps the last value set: the user's.
  CHECK(last(consumer, "fetch.max.bytes") == "2097152");
  CHECK(last(consumer, "queued.min.messages") == "500");
  const auto producer = producer_properties(config);
  for (const auto& [name, value] : producer) {
    INFO(name, " = ", value);
    CHECK_FALSE(exactly::kafka::check_property(ClientKind::producer, name, value).has_value());
  }
  CHECK(last(producer, "linger.ms") == "1");
  // Without the user's, the framework's bound on one fetch response holds, adjusted as librdkafka
  // adjusts its own: never below message.max.bytes (librdkafka refuses that), never above the
  // queue's byte bound.
  config.librdkafka_consumer.clear();
  CHECK(last(consumer_properties(config), "fetch.max.bytes") == "8388608");
  config.librdkafka_common = {{"message.max.bytes", "20000000"}};
  CHECK(last(consumer_properties(config), "fetch.max.bytes") == "20000000");
  config.librdkafka_common.clear();
  config.librdkafka_consumer = {{"queued.max.messages.kbytes", "2048"}};
  CHECK(last(consumer_properties(config), "fetch.max.bytes") == "2097152");
  config.librdkafka_consumer = {{"queued.max.messages.kbytes", "100"}};
  CHECK(last(consumer_properties(config), "fetch.max.bytes") == "1000000");
}

TEST_CASE("transactional ids are scoped to the input partition") {
  CHECK(transactional_id("enricher", "payments.raw", 3) == "enricher.payments.raw.3");
  CHECK(transactional_id("p", "t", 0) != transactional_id("p", "t", 1));
}

TEST_CASE("a static member fenced by its group.instance.id is told what happened and what to do") {
  // The text librdkafka 2.0.2 gives a consumer fenced by FENCED_INSTANCE_ID.
  const std::string fenced =
      "_FATAL: Fatal error: Broker: Static consumer fenced by other consumer with same "
      "group.instance.id: Fatal consumer error: Broker: Static consumer fenced by other consumer "
      "with same group.instance.id";
  const std::string reason = consumer_failure(fenced);
  CHECK(reason.starts_with("the consumer was fenced by its group.instance.id"));
  CHECK(reason.find("session timed out") != std::string::npos);
  CHECK(reason.find("A restart rejoins") != std::string::npos);
  CHECK(reason.find(fenced) != std::string::npos);  // librdkafka's own words kept
  // Any other fatal consumer error is passed on as it was.
  CHECK(consumer_failure("_FATAL: Fatal error: Broker: Unknown member") ==
        "the consumer failed: _FATAL: Fatal error: Broker: Unknown member");
}

TEST_CASE("the lineage header the engine writes is the one the auditor reads") {
  std::string text = "stale content";
  format_lineage_into(text, "payments.raw", 7, 123456789012, "1f2e3d4c-812");
  CHECK(text == "payments.raw/7/123456789012/1f2e3d4c-812");
  const auto parsed = exactly::verify::parse_lineage(text);
  REQUIRE(parsed.has_value());
  CHECK(parsed->topic == "payments.raw");
  CHECK(parsed->partition == 7);
  CHECK(parsed->offset == 123456789012);
  CHECK(parsed->attempt == "1f2e3d4c-812");
  CHECK(lineage_header == exactly::verify::lineage_header);
  format_lineage_into(text, "t", 0, std::numeric_limits<std::int64_t>::max(), "a-1");
  CHECK(text == "t/0/9223372036854775807/a-1");
  CHECK(text == exactly::verify::format_lineage("t", 0, std::numeric_limits<std::int64_t>::max()) +
                    "/a-1");
}

TEST_CASE("the emitter keeps every output until cleared, with nulls preserved") {
  BufferedEmitter emitter;
  const exactly::transforms::Header headers[] = {{"a", "1"}, {"b", std::nullopt}};
  emitter.emit({"k1", "v1", headers, std::nullopt});
  emitter.emit({std::nullopt, std::nullopt, {}, 2});
  REQUIRE(emitter.size() == 2);
  CHECK(*emitter[0].key == "k1");
  CHECK(*emitter[0].value == "v1");
  REQUIRE(emitter[0].headers.size() == 2);
  CHECK(emitter[0].headers[0].first == "a");
  CHECK(*emitter[0].headers[0].second == "1");
  CHECK_FALSE(emitter[0].headers[1].second.has_value());
  CHECK_FALSE(emitter[1].key.has_value());
  CHECK_FALSE(emitter[1].value.has_value());
  CHECK(*emitter[1].partition == 2);
  emitter.clear();
  CHECK(emitter.size() == 0);
  emitter.emit({"k3", "v3", {}, std::nullopt});
  REQUIRE(emitter.size() == 1);
  CHECK(*emitter[0].key == "k3");
  CHECK(emitter[0].headers.empty());
  CHECK_FALSE(emitter[0].partition.has_value());
}
