// Failures that must stop the service without losing or duplicating anything: a failing transform,
// a start-up refusal, a second signal.
#include <signal.h>

#include <fstream>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "kafka/topic_reader.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

// Source offsets of every output, read back with read_committed.
std::vector<std::int64_t> output_sources(const std::string& output) {
  std::vector<std::int64_t> offsets;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = output;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    for (const auto& h : r.headers) {
      if (h.name == verify::lineage_header && h.value) {
        if (auto lineage = verify::parse_lineage(*h.value)) offsets.push_back(lineage->offset);
      }
    }
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  return offsets;
}

}  // namespace

TEST_CASE("a failing transform stops the service and its range is never committed") {
  const auto dir = test::temp_dir("transform-failure");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::produce_payments(input, 0, 500);
  test::produce_raw(input, 0, "bad", "this is not JSON");  // offset 500
  test::produce_payments(input, 500, 500);

  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[transform]\nname = \"payment-enricher\"\n"),
                        dir / "service.log");
  for (int attempt = 1; attempt <= 2; ++attempt) {
    CAPTURE(attempt);
    service.start();
    const auto code = service.wait(120s);
    INFO(service.log_text());
    REQUIRE(code.has_value());
    CHECK(*code == 3);
    CHECK(service.log_count(fmt::format("error transform 'payment-enricher' failed on {} [0] at "
                                        "offset 500: value is not valid JSON",
                                        input)) == attempt);
    CHECK(service.log_count("exiting with code 3") == attempt);
    // Whatever was committed lies before the failing record, once each and in order.
    const auto sources = output_sources(output);
    CHECK(sources.size() <= 500);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      if (sources[i] != static_cast<std::int64_t>(i)) {
        FAIL("output " << i << " comes from offset " << sources[i]);
      }
    }
  }
}

TEST_CASE("an output the producer can never send stops the service instead of retrying forever") {
  const auto dir = test::temp_dir("rejected-output");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::produce_payments(input, 0, 100);
  test::produce_raw(input, 0, "big", std::string(200000, 'x'));  // offset 100
  test::produce_payments(input, 100, 100);

  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[librdkafka.producer]\n\"message.max.bytes\" = 100000\n"),
                        dir / "service.log");
  service.start();
  const auto code = service.wait(120s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 3);
  CHECK(service.log_count(fmt::format("an output of {} [0] at offset 100 cannot be produced", input)) >= 1);
  const auto sources = output_sources(output);
  CHECK(sources.size() <= 100);
  for (std::size_t i = 0; i < sources.size(); ++i) CHECK(sources[i] == static_cast<std::int64_t>(i));
}

TEST_CASE("start-up refuses a missing topic and a bad config with exit code 2") {
  const auto dir = test::temp_dir("refusal");
  const auto output = test::unique_name("out");
  test::create_topic(output, 1);
  const auto missing = test::unique_name("missing");
  test::Service service(test::write_config(dir, missing, output, test::unique_name("group")),
                        dir / "service.log");
  service.start();
  auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  CHECK(service.log_count("refusing to start") >= 1);
  CHECK(service.log_count(fmt::format("input topic '{}'", missing)) >= 1);

  // A missing output topic, then a missing dead-letter topic: refused the same way.
  const auto input = test::unique_name("in");
  test::create_topic(input, 1);
  const auto missing_output = test::unique_name("missing-out");
  const auto missing_dlq = test::unique_name("missing-dlq");
  const struct {
    std::filesystem::path config;
    std::string expected;
  } cases[] = {
      {test::write_config(test::temp_dir("refusal-no-output"), input, missing_output,
                          test::unique_name("group")),
       fmt::format("output topic '{}' does not exist", missing_output)},
      {test::write_config(test::temp_dir("refusal-no-dlq"), input, output,
                          test::unique_name("group"), "",
                          fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"", missing_dlq)),
       fmt::format("dead-letter topic '{}' does not exist", missing_dlq)},
  };
  for (const auto& c : cases) {
    test::Service refused(c.config, c.config.parent_path() / "service.log");
    const int refused_code = refused.run_to_end({"run", "--config", c.config.string()}, 60s);
    INFO(refused.log_text());
    CHECK(refused_code == 2);
    CHECK(refused.log_count("refusing to start") >= 1);
    CHECK(refused.log_count(c.expected) >= 1);
  }

  const auto bad = dir / "bad.toml";
  {
    std::ofstream out(bad);
    out << "[kafka]\nbootstrap_servers = 42\n[pipeline]\ninput_topic = \"a\"\noutput_topic = \"b\"\n"
           "group_id = \"g\"\n[librdkafka.consumer]\n\"isolation.level\" = \"read_uncommitted\"\n";
  }
  test::Service checker(bad, dir / "bad.log");
  CHECK(checker.run_to_end({"run", "--config", bad.string()}, 30s) == 2);
  const auto text = checker.log_text();
  INFO(text);
  CHECK(text.find(fmt::format("{}:2:", bad.string())) != std::string::npos);
  CHECK(text.find(fmt::format("{}:8:", bad.string())) != std::string::npos);
  CHECK(text.find("isolation.level") != std::string::npos);
}

TEST_CASE("a second signal stops a shutdown stuck on a paused broker and nothing is lost") {
  const auto dir = test::temp_dir("second-signal");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  constexpr std::uint64_t total = 50000;
  test::produce_payments(input, 0, total);
  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         "[transactions]\ncommit_interval_ms = 5000\ncommit_timeout_ms = 2000\n"
                         "max_records = 1000000\nmax_bytes = 1000000000\ntimeout_ms = 60000\n"
                         "[shutdown]\ntimeout_ms = 60000\n" + std::string{test::fast_group}),
      dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s, 4));
  // Transactions are open and none is due: the commit interval is 5 s, the size limits are high.
  std::this_thread::sleep_for(500ms);

  // With the broker frozen, the first signal's commit cannot finish; the second ends it.
  REQUIRE(test::cluster({"node", "pause", "1"}) == 0);
  struct Resume {
    ~Resume() { test::cluster({"node", "resume", "1"}); }
  } resume;
  service.signal(SIGTERM);
  REQUIRE(service.wait_for_log("signal received", 10s));
  std::this_thread::sleep_for(1s);
  service.signal(SIGTERM);
  auto code = service.wait(30s);
  REQUIRE(test::cluster({"node", "resume", "1"}) == 0);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 130);

  service.start();
  const auto progress = test::wait_for_outputs(input, output, total, 180s);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  const auto report = test::audit(input, output);
  INFO(report.summary());
  CHECK(report.ok());
  CHECK(report.outputs == total);
}
