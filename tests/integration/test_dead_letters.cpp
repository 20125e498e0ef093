// Records that cannot be reflected in the output: on_error = "dlq" writes them to the dead-letter
// topic in the same transaction as their offsets (exactly once, never in the output); "skip"
// drops them. Read back with read_committed.
#include <signal.h>

#include <map>
#include <set>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "kafka/topic_reader.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly;


TEST_CASE("poison records go to the dead-letter topic exactly once through a kill -9") {
  const auto dir = test::temp_dir("dlq");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  test::create_topic(input, 1);
  test::create_topic(output, 2);
  test::create_topic(dlq, 1);
  // 20 poison records, one after every 999 payments: 20,000 inputs in all.
  constexpr int poison = 20;
  for (int i = 0; i < poison; ++i) {
    test::produce_payments(input, static_cast<std::uint64_t>(i) * 999, 999);
    test::produce_raw(input, 0, fmt::format("poison-{}", i), fmt::format("not json {}", i));
  }
  constexpr std::uint64_t total = poison * 1000;

  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         fmt::format("[transform]\nname = \"payment-enricher\"\n"
                                     "[transactions]\nmax_records = 500\n{}",
                                     test::fast_group),
                         fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", dlq)),
      dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s));
  std::this_thread::sleep_for(300ms);
  service.signal(SIGKILL);
  REQUIRE(service.wait(30s).has_value());
  service.start();
  const auto progress = test::wait_for_outputs(input, output, total, 180s, dlq);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  const auto report = test::audit(input, output, dlq);
  MESSAGE(fmt::format("dead-letter test audit: {}", report.summary()));
  CHECK(report.inputs == total);
  CHECK(report.outputs == total - poison);
  CHECK(report.dead_letters == poison);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  CHECK(report.ok());

  // Each dead letter is the poison record itself, with the documented headers.
  const auto letters = test::read_dead_letters(dlq);
  REQUIRE(letters.size() == poison);
  std::set<std::string> values;
  for (const auto& d : letters) {
    CAPTURE(d.offset);
    values.insert(d.value);
    CHECK(d.value.starts_with("not json "));
    CHECK(d.headers.at("exactly.error.class") == "transform");
    CHECK(d.headers.at("exactly.error.message").find("not valid JSON") != std::string::npos);
    CHECK(d.headers.at("exactly.error.topic") == input);
    CHECK(d.partition == 0);
    CHECK(d.headers.at("exactly.error.plugin") == "payment-enricher");
    CHECK_FALSE(d.headers.at("exactly.error.plugin.version").empty());
    CHECK_FALSE(d.headers.at("exactly.error.group").empty());
    CHECK(std::stoll(d.headers.at("exactly.error.timestamp")) > 0);
    {
    const auto lineage = verify::parse_lineage(d.headers.at("exactly.lineage"));
    REQUIRE(lineage);
    CHECK(lineage->topic == input);
    CHECK(lineage->partition == 0);
    CHECK(lineage->offset == d.offset);
    CHECK_FALSE(lineage->attempt.empty());
  }
    CHECK((d.offset + 1) % 1000 == 0);  // every 1000th record is poison
  }
  CHECK(values.size() == poison);
}

TEST_CASE("an output larger than the output topic takes is dead-lettered as too_large") {
  const auto dir = test::temp_dir("too-large");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  test::create_topic(input, 1);
  test::create_topic(output, 1, {{"max.message.bytes", "20000"}});
  test::create_topic(dlq, 1);
  constexpr int big = 5;
  for (int i = 0; i < big; ++i) {
    test::produce_payments(input, static_cast<std::uint64_t>(i) * 199, 199);
    test::produce_raw(input, 0, fmt::format("big-{}", i), std::string(50000, 'x'));
  }
  constexpr std::uint64_t total = big * 200;

  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"), "",
                         fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", dlq)),
      dir / "service.log");
  service.start();
  const auto progress = test::wait_for_outputs(input, output, total, 120s, dlq);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(service.log_count("outputs larger than 20000 bytes are dead-lettered") == 1);

  const auto report = test::audit(input, output, dlq);
  MESSAGE(fmt::format("too-large test audit: {}", report.summary()));
  CHECK(report.ok());
  CHECK(report.outputs == total - big);
  CHECK(report.dead_letters == big);
  const auto letters = test::read_dead_letters(dlq);
  REQUIRE(letters.size() == big);
  for (const auto& d : letters) {
    CHECK(d.headers.at("exactly.error.class") == "too_large");
    CHECK(d.value.size() == 50000);
  }
}

TEST_CASE("on_error skip drops exactly the failing records and commits the rest once") {
  const auto dir = test::temp_dir("skip");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::produce_payments(input, 0, 300);
  test::produce_raw(input, 0, "poison", "{\"payment_id\": 1}");  // offset 300: wrong field type
  test::produce_payments(input, 300, 300);

  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[transform]\nname = \"payment-enricher\"\n",
                                           "on_error = \"skip\"\n"),
                        dir / "service.log");
  service.start();
  auto report = test::wait_for_outputs(input, output, 601, 20s);
  // The skipped record is the one input without an output.
  for (int i = 0; i < 100 && report.outputs < 600; ++i) {
    std::this_thread::sleep_for(200ms);
    report = test::audit(input, output);
  }
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  report = test::audit(input, output);
  INFO(report.summary());
  CHECK(report.inputs == 601);
  CHECK(report.outputs == 600);
  CHECK(report.missing == 1);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  REQUIRE_FALSE(report.examples.empty());
  CHECK(report.examples.front() == fmt::format("missing {}", verify::format_lineage(input, 0, 300)));
  CHECK(service.log_count(fmt::format("{} [0] at offset 300: skipped (transform)", input)) == 1);
}

TEST_CASE("a loaded plugin's failing records are dead-lettered once and the rest arrive once") {
  const auto dir = test::temp_dir("plugin-dlq");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  test::create_topic(input, 1);
  test::create_topic(output, 2);
  test::create_topic(dlq, 1);
  constexpr int failing = 5;
  for (int i = 0; i < failing; ++i) {
    test::produce_payments(input, static_cast<std::uint64_t>(i) * 399, 399);
    // The plugin fails on it; its dead letter must keep key, value and headers.
    test::produce_raw(input, 0, fmt::format("f-{}", i), "error",
                      {{"trace-id", fmt::format("t-{}", i)}, {"source", "billing"}});
  }
  constexpr std::uint64_t total = failing * 400;
  const auto group = test::unique_name("group");

  test::Service service(
      test::write_config(dir, input, output, group,
                         fmt::format("[transform]\nname = \"good\"\nplugin = \"{}\"\n"
                                     "[transform.config]\nsuffix = \"!\"\n",
                                     EXACTLY_TEST_PLUGIN_GOOD),
                         fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", dlq)),
      dir / "service.log");
  service.start();
  const auto progress = test::wait_for_outputs(input, output, total, 120s, dlq);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  const auto report = test::audit(input, output, dlq);
  MESSAGE(fmt::format("plugin dead-letter test audit: {}", report.summary()));
  CHECK(report.ok());
  CHECK(report.outputs == total - failing);
  CHECK(report.dead_letters == failing);
  const auto letters = test::read_dead_letters(dlq);
  REQUIRE(letters.size() == failing);
  std::set<std::string> keys;
  for (const auto& d : letters) {
    REQUIRE(d.key.has_value());
    keys.insert(*d.key);
    CHECK(d.headers.at("trace-id") == "t-" + d.key->substr(2));
    CHECK(d.headers.at("source") == "billing");
    CHECK(d.value == "error");
    CHECK(d.headers.at("exactly.error.class") == "transform");
    CHECK(d.headers.at("exactly.error.message").find("asked to fail at offset") != std::string::npos);
    CHECK(d.headers.at("exactly.error.plugin") == "good");
    CHECK(d.headers.at("exactly.error.plugin.version") == "1.2.3");
    CHECK(d.headers.at("exactly.error.topic") == input);
    CHECK(d.headers.at("exactly.error.partition") == "0");
    CHECK(d.headers.at("exactly.error.group") == group);
    CHECK(std::stoll(d.headers.at("exactly.error.timestamp")) > 0);
  }
  CHECK(keys == std::set<std::string>{"f-0", "f-1", "f-2", "f-3", "f-4"});
  // The plugin's own output: the value with its configured suffix.
  std::uint64_t suffixed = 0;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = output;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    if (r.value && r.value->ends_with("}!")) ++suffixed;
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  CHECK(suffixed == total - failing);
}
