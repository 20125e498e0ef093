// Bad or unusual input, on the real broker: records with null and empty keys and values, with
// very many or very large headers, arrive once and intact; a cluster that does not answer stops
// `run` at start-up, in bounded time, with a message that names it.
#include <signal.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "kafka/plain_producer.h"
#include "kafka/topic_reader.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

struct Sent {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

}  // namespace

TEST_CASE("null and empty keys and values and many or large headers arrive once and intact") {
  const auto dir = test::temp_dir("odd-records");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 1);

  std::vector<Sent> sent;
  sent.push_back({std::nullopt, std::nullopt, {}});
  sent.push_back({std::string{}, std::string{}, {}});
  sent.push_back({std::nullopt, std::string{"value without key"}, {}});
  sent.push_back({std::string{"key without value"}, std::nullopt, {}});
  sent.push_back({std::string("\0binary\xff key", 12), std::string("\0\1\2\xfe", 4), {}});
  Sent many{std::string{"many headers"}, std::string{"v"}, {}};
  for (int i = 0; i < 1000; ++i) many.headers.emplace_back(fmt::format("h{}", i), fmt::format("{}", i));
  many.headers.emplace_back("null header", std::nullopt);
  many.headers.emplace_back("", std::string{"empty name"});
  sent.push_back(many);
  sent.push_back({std::string{"large header"}, std::string{"v"},
                  {{"big", std::string(200000, 'h')}, {"big", std::string{"same name again"}}}});

  {
    std::string error;
    auto producer = kafka::PlainProducer::create({{"bootstrap.servers", test::bootstrap()}}, input, error);
    REQUIRE_MESSAGE(producer, error);
    for (const auto& s : sent) {
      std::vector<kafka::HeaderView> headers;
      for (const auto& [name, value] : s.headers) {
        headers.push_back({name, value ? std::optional<std::string_view>{*value} : std::nullopt});
      }
      kafka::ProduceRecord record;
      if (s.key) record.key = *s.key;
      if (s.value) record.value = *s.value;
      record.headers = headers;
      record.partition = 0;
      const auto e = producer->produce(record);
      REQUIRE_MESSAGE(!e, e.describe());
    }
    const auto e = producer->flush(30s);
    REQUIRE_MESSAGE(!e, e.describe());
  }

  test::Service service(test::write_config(dir, input, output, test::unique_name("group"), "",
                                           "partitioning = \"input\"\n"),
                        dir / "service.log");
  service.start();
  const auto progress = test::wait_for_outputs(input, output, sent.size(), 60s);
  INFO(service.log_text());
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const auto report = test::audit(input, output);
  CHECK(report.ok());
  CHECK(report.outputs == sent.size());

  // Identity: every output is its input, key, value and headers, plus the two exactly.* headers.
  std::vector<Sent> received;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = output;
  const auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    Sent s;
    if (r.key) s.key = std::string{*r.key};
    if (r.value) s.value = std::string{*r.value};
    for (const auto& h : r.headers) {
      if (h.name == "exactly.lineage" || h.name == "exactly.attempt") continue;
      s.headers.emplace_back(std::string{h.name},
                             h.value ? std::optional<std::string>{std::string{*h.value}} : std::nullopt);
    }
    received.push_back(std::move(s));
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  REQUIRE(received.size() == sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    CAPTURE(i);
    CHECK(received[i].key == sent[i].key);
    CHECK(received[i].value == sent[i].value);
    CHECK(received[i].headers == sent[i].headers);
  }
}

TEST_CASE("run stops at start-up in bounded time with a message when no broker answers") {
  const auto dir = test::temp_dir("no-broker");
  auto config = test::write_config(dir, "in", "out", "group");
  // Nothing listens on port 1 of the loopback.
  test::retarget(config, "127.0.0.1:1");
  test::Service service(config, dir / "service.log");
  const auto started = std::chrono::steady_clock::now();
  const int code = service.run_to_end({"run", "--config", config.string()}, 120s);
  const auto took = std::chrono::steady_clock::now() - started;
  const auto log = service.log_text();
  INFO(log);
  CHECK(code == 2);
  CHECK(took < 60s);
  CHECK(log.find("127.0.0.1:1") != std::string::npos);
  CHECK(log.find("refusing to start") != std::string::npos);
}
