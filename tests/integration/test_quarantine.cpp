// Crash-loop quarantine on the real broker: a plugin segfaults on one record. The process dies on
// it after every restart until the markers show `deaths` deaths in a row at one offset; the next
// owner runs the range in small transactions (1 record, then doubling) and dies on the record (in
// the transaction that holds it, and then alone); the next runs it alone once more and dies again,
// and the owner after that dead-letters it with error class "crash". Everything else is in the
// output once. A service that loses its partitions alive counts no death.
#include <signal.h>

#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

// Restarts the service whenever it dies, as Kubernetes would, until every input is reflected;
// returns the deaths. With several instances, each start is the next one's: the partitions move
// to another instance after every death.
int restart_until_complete(const std::vector<test::Service*>& instances, const std::string& input,
                           const std::string& output, const std::string& dlq, std::uint64_t total) {
  int deaths = 0;
  bool complete = false;
  for (int start = 0; start < 12 && !complete; ++start) {
    test::Service& service = *instances[static_cast<std::size_t>(start) % instances.size()];
    service.start();
    const auto give_up = std::chrono::steady_clock::now() + 120s;
    while (std::chrono::steady_clock::now() < give_up && service.running()) {
      const auto report = test::audit(input, output, dlq);
      if (report.inputs == total && report.missing == 0) {
        complete = true;
        break;
      }
      std::this_thread::sleep_for(500ms);
    }
    if (!complete) {
      const auto code = service.wait(10s);
      INFO(service.log_text());
      REQUIRE_MESSAGE(code.has_value(), "the service neither finished nor died");
      CHECK(*code != 0);
      ++deaths;
    }
  }
  std::string logs;
  for (const test::Service* service : instances) logs += service->log_text();
  INFO(logs);
  REQUIRE(complete);
  return deaths;
}

int restart_until_complete(test::Service& service, const std::string& input,
                           const std::string& output, const std::string& dlq, std::uint64_t total) {
  return restart_until_complete(std::vector<test::Service*>{&service}, input, output, dlq, total);
}

// The sum over the instances' logs.
int log_count(const std::vector<test::Service*>& instances, const std::string& needle) {
  int count = 0;
  for (const test::Service* service : instances) count += service->log_count(needle);
  return count;
}

}  // namespace

TEST_CASE("a record that crashes the process is quarantined and dead-lettered as crash") {
  const auto dir = test::temp_dir("quarantine");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  test::create_topic(dlq, 1);
  test::produce_payments(input, 0, 400);
  test::produce_raw(input, 0, "killer", "crash");  // the plugin raises SIGSEGV on it
  test::produce_payments(input, 400, 400);
  constexpr std::uint64_t total = 801;
  constexpr int deaths_to_quarantine = 3;

  // Two instances (two pods: their own directories, configs and logs) of one pipeline. They
  // take turns: after each death the partitions move to the other one, which must find the
  // dead one's markers in Kafka.
  const auto group = test::unique_name("group");
  std::vector<std::unique_ptr<test::Service>> pods;
  for (const char* pod : {"pod-a", "pod-b"}) {
    const auto pod_dir = dir / pod;
    std::filesystem::create_directories(pod_dir);
    pods.push_back(std::make_unique<test::Service>(
        test::write_config(pod_dir, input, output, group,
                           fmt::format("[transform]\nname = \"good\"\nplugin = \"{}\"\n"
                                       "[transactions]\nmax_records = 50\n"
                                       "[quarantine]\ndeaths = {}\n{}",
                                       EXACTLY_TEST_PLUGIN_GOOD, deaths_to_quarantine,
                                       test::fast_group),
                           fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", dlq)),
        pod_dir / "service.log"));
  }
  const std::vector<test::Service*> instances{pods[0].get(), pods[1].get()};

  const int deaths = restart_until_complete(instances, input, output, dlq, total);
  for (test::Service* service : instances) {
    if (!service->running()) continue;
    service->signal(SIGTERM);
    const auto code = service->wait(60s);
    REQUIRE(code.has_value());
    CHECK(*code == 0);
  }
  // Both instances ran, and died: the markers went from one to the other.
  CHECK(pods[0]->log_count("starting: config") >= 2);
  CHECK(pods[1]->log_count("starting: config") >= 2);

  const auto report = test::audit(input, output, dlq);
  MESSAGE(fmt::format("quarantine test: {} deaths; audit: {}", deaths, report.summary()));
  CHECK(report.inputs == total);
  CHECK(report.outputs == total - 1);
  CHECK(report.dead_letters == 1);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  CHECK(report.ok());

  // `deaths` in a row to start the quarantine, one in the quarantine's transaction that holds the
  // record unless it runs alone already, two more while the record ran alone; progress committed
  // between the first deaths may add a few.
  CHECK(deaths >= deaths_to_quarantine + 2);
  CHECK(deaths <= deaths_to_quarantine + 7);
  CHECK(log_count(instances, "deaths in a row at offset") >= 1);
  CHECK(log_count(instances, "in transactions of their own, from 1 record each") >= 1);
  CHECK(log_count(instances, "(1 of 2): running it alone once more") == 1);
  CHECK(log_count(instances, "died 2 times while running offset") == 1);
  CHECK(log_count(instances, "quarantine of offsets") >= 1);

  const auto letters = test::read_dead_letters(dlq);
  REQUIRE(letters.size() == 1);
  const auto& letter = letters.front();
  CHECK(letter.value == "crash");
  CHECK(letter.partition == 0);
  CHECK(letter.headers.at("exactly.error.class") == "crash");
  CHECK(letter.headers.at("exactly.error.message").find("died while running this record alone") !=
        std::string::npos);
  CHECK(letter.headers.at("exactly.error.plugin") == "good");
  {
    const auto lineage = verify::parse_lineage(letter.headers.at("exactly.lineage"));
    REQUIRE(lineage);
    CHECK(lineage->topic == input);
    CHECK(lineage->partition == 0);
    CHECK(lineage->offset == letter.offset);
    CHECK_FALSE(lineage->attempt.empty());
  }
}

TEST_CASE("a service that loses its partitions alive and gets them back counts no crash-loop death") {
  // With deaths = 1, a single counted death starts a quarantine. The service is frozen past its
  // session timeout while input keeps arriving: the group drops it, and when it wakes it loses its
  // partitions, rejoins, and gets them back. It never died, so nothing may be counted.
  const auto dir = test::temp_dir("lost-alive");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  constexpr std::uint64_t total = 40000;
  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         std::string{"[transactions]\ncommit_interval_ms = 1000\n"
                                     "[quarantine]\ndeaths = 1\n"} +
                             test::fast_group),
      dir / "service.log");

  std::thread producer([&] {
    for (std::uint64_t start = 0; start < total; start += 2000) {
      test::produce_payments(input, start, 2000);
      std::this_thread::sleep_for(400ms);
    }
  });
  service.start();
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s, 2));
  std::this_thread::sleep_for(1500ms);
  service.signal(SIGSTOP);  // past the session timeout of 2 s
  std::this_thread::sleep_for(5s);
  service.signal(SIGCONT);
  producer.join();

  const auto progress = test::wait_for_outputs(input, output, total, 120s);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  REQUIRE(service.log_count(fmt::format("lost {} [", input)) >= 1);
  CHECK(service.log_count("lost it alive") >= 1);
  CHECK(service.log_count("without a clean stop") == 0);
  CHECK(service.log_count("deaths in a row") == 0);
  const auto report = test::audit(input, output);
  INFO(report.summary());
  CHECK(report.inputs == total);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.ok());
}

TEST_CASE("a quarantine that finds no culprit costs a few transactions and not one per record") {
  // With deaths = 1, one kill -9 after the owner began and before its first commit starts a
  // quarantine of max_records (20,000) records. No record is to blame: the quarantine's
  // transactions start at 1 record and double, so it ends after about log2(20,000) of them.
  const auto dir = test::temp_dir("quarantine-innocent");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  constexpr std::uint64_t total = 30000;
  constexpr std::int64_t range = 20000;
  const auto config = test::write_config(
      dir, input, output, test::unique_name("group"),
      fmt::format("[transactions]\ncommit_interval_ms = 4000\nmax_records = {}\n"
                  "[quarantine]\ndeaths = 1\n{}",
                  range, test::fast_group));
  test::debug_log(config);  // debug lines name every commit
  test::Service service(config, dir / "service.log");

  std::thread producer([&] {
    for (std::uint64_t start = 0; start < total; start += 500) {
      test::produce_payments(input, start, 500);
      std::this_thread::sleep_for(100ms);
    }
  });
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{producer};

  service.start();
  REQUIRE(service.wait_for_log("opened at offset", 60s));
  std::this_thread::sleep_for(500ms);
  service.signal(SIGKILL);  // the first transaction is open, its commit 4 s away
  REQUIRE(service.wait(30s).has_value());
  REQUIRE(service.log_count("committed attempt") == 0);

  service.start();
  REQUIRE(service.wait_for_log("1 deaths in a row at offset 0", 60s));
  producer.join();
  const auto progress = test::wait_for_outputs(input, output, total, 120s);
  CHECK(progress.missing == 0);
  REQUIRE(service.wait_for_log(fmt::format("quarantine of offsets [0, {}) done", range), 60s));
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  const std::string log = service.log_text();
  INFO(log);
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  // The commits of the quarantine: between its start and its end.
  const auto from = log.find("1 deaths in a row at offset 0");
  const auto to = log.find("quarantine of offsets [0, ");
  REQUIRE(from != std::string::npos);
  REQUIRE(to != std::string::npos);
  int commits = 0;
  for (auto at = log.find("committed attempt", from); at != std::string::npos && at < to;
       at = log.find("committed attempt", at + 1)) {
    ++commits;
  }
  MESSAGE(fmt::format("the quarantine of {} records took {} transactions", range, commits));
  CHECK(commits >= 15);  // 1 + 2 + ... + 8192 < 20,000: at least 15 doublings' worth
  CHECK(commits <= 40);  // commit intervals may cut a few short
  const auto report = test::audit(input, output);
  INFO(report.summary());
  CHECK(report.inputs == total);
  CHECK(report.outputs == total);
  CHECK(report.ok());
}

TEST_CASE("a record that crashes the process right after an upstream transaction marker is convicted") {
  // The input's own producer is transactional: the committed offset after its transaction is the
  // offset of its transaction marker, and the next record, the killer, is one further on. The
  // quarantine names its transactions by that committed offset, so the deaths still add up.
  const auto dir = test::temp_dir("quarantine-marker");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::create_topic(dlq, 1);
  std::vector<std::pair<std::string, std::string>> first;
  for (int i = 0; i < 100; ++i) first.emplace_back(fmt::format("k{}", i), fmt::format("v{}", i));
  test::produce_transaction(input, 0, first);  // offsets 0..99, its marker at 100

  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         fmt::format("[transform]\nname = \"good\"\nplugin = \"{}\"\n"
                                     "[quarantine]\ndeaths = 2\n{}",
                                     EXACTLY_TEST_PLUGIN_GOOD, test::fast_group),
                         fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", dlq)),
      dir / "service.log");
  service.start();
  // Caught up and committed: the group's offset is 100, the transaction marker's.
  const auto caught_up = test::wait_for_outputs(input, output, 100, 60s);
  REQUIRE(caught_up.missing == 0);
  std::this_thread::sleep_for(1s);  // past a commit interval: the offsets are committed
  test::produce_transaction(input, 0, {{"killer", "crash"}});  // offset 101, its marker at 102
  std::vector<std::pair<std::string, std::string>> after;
  for (int i = 0; i < 100; ++i) after.emplace_back(fmt::format("a{}", i), fmt::format("w{}", i));
  test::produce_transaction(input, 0, after);  // offsets 103..202
  constexpr std::uint64_t total = 201;

  // The running service dies on the killer; then restarts until the record is convicted.
  const auto first_death = service.wait(60s);
  REQUIRE(first_death.has_value());
  CHECK(*first_death != 0);
  const int deaths = 1 + restart_until_complete(service, input, output, dlq, total);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  INFO(service.log_text());
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  MESSAGE(fmt::format("quarantine after an upstream marker: {} deaths", deaths));
  // Two deaths in a row at offset 100 start the quarantine; two more while the killer runs alone
  // convict it.
  CHECK(deaths == 4);
  CHECK(service.log_count("2 deaths in a row at offset 100") == 1);
  CHECK(service.log_count("died 2 times while running offset 100 alone") == 1);
  const auto report = test::audit(input, output, dlq);
  INFO(report.summary());
  CHECK(report.inputs == total);
  CHECK(report.outputs == total - 1);
  CHECK(report.dead_letters == 1);
  CHECK(report.ok());
  const auto letters = test::read_dead_letters(dlq);
  REQUIRE(letters.size() == 1);
  CHECK(letters.front().value == "crash");
  CHECK(letters.front().offset == 101);
  CHECK(letters.front().headers.at("exactly.error.class") == "crash");
}
