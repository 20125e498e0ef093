// Operability on the real broker: the service's /metrics, /healthz and /readyz follow its work,
// and a real Prometheus (Debian's package) scrapes it and sees commits and lag move.
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness.h"
#include "http_get.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

using Clock = std::chrono::steady_clock;

// The port the service logged ("serving /metrics, /healthz and /readyz on ... (port N)").
int served_port(const test::Service& service) {
  const int port = test::metrics_port(service.log_text());
  REQUIRE_MESSAGE(port > 0, service.log_text());
  return port;
}

// A loopback port nothing listens on right now.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t size = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Prometheus's raw JSON answer to an instant query.
std::string raw_query(int port, const std::string& promql) {
  std::string encoded;
  for (const unsigned char c : promql) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') {
      encoded += static_cast<char>(c);
    } else {
      encoded += fmt::format("%{:02X}", c);
    }
  }
  const auto response = test::get(port, "/api/v1/query?query=" + encoded);
  return response.status == 200 ? response.body : std::string{};
}

// Prometheus's answer to an instant query: the value of each series, or empty.
std::vector<double> query(int port, const std::string& promql) {
  std::vector<double> values;
  const auto json = nlohmann::json::parse(raw_query(port, promql), nullptr, false);
  if (json.is_discarded() || json.value("status", "") != "success") return values;
  for (const auto& series : json["data"]["result"]) {
    values.push_back(std::stod(series["value"][1].get<std::string>()));
  }
  return values;
}

}  // namespace

TEST_CASE("metrics and health follow the service's work") {
  const auto dir = test::temp_dir("metrics");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[metrics]\nlisten = \"127.0.0.1:0\"\n"),
                        dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("serving /metrics", 30s));
  const int port = served_port(service);
  INFO(service.log_text());
  CHECK(test::get(port, "/healthz").status == 200);
  CHECK(test::get(port, "/nothing").status == 404);

  constexpr std::uint64_t records = 2000;
  test::produce_payments(input, 0, records);
  const auto progress = test::wait_for_outputs(input, output, records, 120s);
  REQUIRE(progress.missing == 0);

  // Ready: partitions, producers, and commits. Lag comes with librdkafka's statistics (every 5 s).
  std::string text;
  const auto until = Clock::now() + 30s;
  while (Clock::now() < until) {
    text = test::get(port, "/metrics").body;
    if (test::get(port, "/readyz").status == 200 && test::metric_sum(text, "exactly_consumer_lag_records") == 0) {
      break;
    }
    std::this_thread::sleep_for(500ms);
  }
  INFO(text);
  CHECK(test::get(port, "/readyz").status == 200);
  CHECK(test::get(port, "/healthz").status == 200);
  CHECK(test::metric_sum(text, "exactly_records_consumed_total") == records);
  CHECK(test::metric_sum(text, "exactly_records_produced_total") == records);
  CHECK(test::metric_sum(text, "exactly_transactions_committed_total") >= 1);
  CHECK(test::metric_sum(text, "exactly_commit_latency_seconds_count") ==
        test::metric_sum(text, "exactly_transactions_committed_total"));
  CHECK(test::metric_sum(text, "exactly_transaction_records_sum") == records);
  CHECK(test::metric_sum(text, "exactly_assigned_partitions") == 2);
  CHECK(test::metric_sum(text, "exactly_consumer_lag_records") == 0);
  CHECK(test::metric_sum(text, "exactly_lso_gap_records") == 0);
  CHECK(test::metric_sum(text, "exactly_producers_fenced_total") == 0);
  CHECK(test::metric_sum(text, "exactly_transform_seconds_count") == records);
  CHECK(text.find("exactly_build_info{version=") != std::string::npos);
  CHECK(text.find(fmt::format("exactly_consumer_lag_records{{partition=\"1\",topic=\"{}\"}}", input)) !=
        std::string::npos);

  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("a real Prometheus scrapes the service and sees commits and lag move") {
  const std::filesystem::path prometheus = "/usr/bin/prometheus";
  REQUIRE_MESSAGE(std::filesystem::exists(prometheus),
                  "Debian's prometheus package is needed (scripts/setup.sh installs it)");
  const auto dir = test::temp_dir("prometheus");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  // One record per transaction and statistics every second: the service reads far slower than
  // the test writes, so a burst of input is seen as lag for several seconds before it drains.
  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         "[metrics]\nlisten = \"127.0.0.1:0\"\n[transactions]\nmax_records = 1\n"
                         "[librdkafka.common]\n\"statistics.interval.ms\" = 1000\n"),
      dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("serving /metrics", 30s));
  const int port = served_port(service);

  const int prometheus_port = free_port();
  {
    std::ofstream config(dir / "prometheus.yml");
    config << fmt::format(R"(global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: exactly
    static_configs:
      - targets: ["127.0.0.1:{}"]
)",
                          port);
  }
  test::Service scraper(dir / "prometheus.yml", dir / "prometheus.log");
  scraper.start_program(prometheus.string(),
                        {fmt::format("--config.file={}", (dir / "prometheus.yml").string()),
                         fmt::format("--storage.tsdb.path={}", (dir / "tsdb").string()),
                         fmt::format("--web.listen-address=127.0.0.1:{}", prometheus_port)});
  INFO(scraper.log_text());
  INFO(service.log_text());

  auto until = Clock::now() + 60s;
  while (Clock::now() < until && query(prometheus_port, "up{job=\"exactly\"} == 1").empty()) {
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s, 2));

  // A burst, then input that keeps arriving for a while: the committed counter and the lag move.
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> written{3000};
  test::produce_payments(input, 0, written);
  std::thread producer([&] {
    for (int batch = 0; batch < 20 && !stop; ++batch) {
      test::produce_payments(input, written, 50);
      written += 50;
      std::this_thread::sleep_for(250ms);
    }
  });
  const auto committed = [&] {
    const auto v = query(prometheus_port, "sum(exactly_transactions_committed_total)");
    return v.empty() ? -1.0 : v.front();
  };
  double first = -1;
  until = Clock::now() + 60s;
  while (Clock::now() < until && (first = committed()) <= 0) std::this_thread::sleep_for(500ms);
  CHECK(first > 0);
  double later = first;
  until = Clock::now() + 60s;
  while (Clock::now() < until && (later = committed()) <= first) std::this_thread::sleep_for(500ms);
  CHECK(later > first);

  // The lag series of both partitions are there, and the lag moved (records waited, then not).
  std::vector<double> lag_series;
  until = Clock::now() + 60s;
  while (Clock::now() < until &&
         (lag_series = query(prometheus_port,
                             fmt::format("exactly_consumer_lag_records{{topic=\"{}\"}}", input)))
                 .size() < 2) {
    std::this_thread::sleep_for(500ms);
  }
  CHECK(lag_series.size() == 2);
  // The series appear at the assignment, at 0; the burst shows within a few scrapes.
  const auto peak_lag = [&] {
    const auto v = query(prometheus_port,
                         fmt::format("max_over_time(sum(exactly_consumer_lag_records{{topic=\"{}\"}})"
                                     "[10m:1s])",
                                     input));
    return v.size() == 1 ? v.front() : -1.0;
  };
  double peak = -1;
  until = Clock::now() + 60s;
  while (Clock::now() < until && (peak = peak_lag()) <= 0) std::this_thread::sleep_for(500ms);
  // On failure, what Prometheus holds: the lag and the consumed records, scrape by scrape.
  const std::string history =
      raw_query(prometheus_port,
                fmt::format("exactly_consumer_lag_records{{topic=\"{}\"}}[10m]", input)) +
      "\n" + raw_query(prometheus_port, "exactly_records_consumed_total[10m]");
  CHECK_MESSAGE(peak > 0, history);
  stop = true;
  producer.join();
  const auto progress = test::wait_for_outputs(input, output, written, 120s);
  CHECK(progress.missing == 0);
  // Prometheus's view of the work equals the audit's, once the last scrape came after it.
  double consumed = -1;
  until = Clock::now() + 30s;
  while (Clock::now() < until) {
    const auto v = query(prometheus_port, "sum(exactly_records_consumed_total)");
    consumed = v.empty() ? -1 : v.front();
    if (consumed == static_cast<double>(written)) break;
    std::this_thread::sleep_for(500ms);
  }
  CHECK(consumed == static_cast<double>(written));
  std::vector<double> lag_now;
  until = Clock::now() + 30s;
  while (Clock::now() < until) {
    lag_now = query(prometheus_port,
                    fmt::format("sum(exactly_consumer_lag_records{{topic=\"{}\"}})", input));
    if (lag_now.size() == 1 && lag_now.front() == 0) break;
    std::this_thread::sleep_for(500ms);
  }
  REQUIRE(lag_now.size() == 1);
  CHECK(lag_now.front() == 0);
  const auto up = query(prometheus_port, "up{job=\"exactly\"}");
  REQUIRE(up.size() == 1);
  CHECK(up.front() == 1);

  scraper.signal(SIGTERM);
  CHECK(scraper.wait(30s).has_value());
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("a backlog larger than the prefetch queue is read through fetch wake-ups") {
  // librdkafka 2.0.2 stops fetching while queued.min.messages are queued and, left alone, looks
  // again only after a second; the consumer's waker asks it to fetch as soon as the queue drains.
  const auto dir = test::temp_dir("wakeups");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  constexpr std::uint64_t records = 20000;
  test::produce_payments(input, 0, records);
  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[metrics]\nlisten = \"127.0.0.1:0\"\n"
                                           "[librdkafka.consumer]\n\"queued.min.messages\" = 200\n"),
                        dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("serving /metrics", 30s));
  const int port = served_port(service);
  INFO(service.log_text());
  const auto report = test::wait_for_outputs(input, output, records, 120s);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.outputs == records);

  // The counter is updated every second.
  double wakeups = -1;
  const auto until = Clock::now() + 10s;
  while (Clock::now() < until && wakeups <= 0) {
    wakeups = test::metric_sum(test::get(port, "/metrics").body, "exactly_fetch_wakeups_total");
    std::this_thread::sleep_for(500ms);
  }
  CHECK(wakeups > 0);

  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}
