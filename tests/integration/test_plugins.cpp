// Plugins in the running service: the example project built the way a plugin author builds it,
// and plugins that `run` must refuse at start-up.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "http_get.h"
#include "kafka/topic_reader.h"
#include "verify/audit.h"

using namespace exactly;
using namespace std::chrono_literals;

namespace {

// `exactly run` on `config` with the cluster out of reach: the plugin must be judged first.
struct Refusal {
  int code = 0;
  std::chrono::steady_clock::duration took{};
  std::string log;
};

Refusal run_without_cluster(const std::filesystem::path& dir, const std::string& transform) {
  auto config = test::write_config(dir, "in", "out", "group", transform);
  test::retarget(config, "127.0.0.1:1");  // nothing listens there
  test::Service service(config, dir / "service.log");
  const auto started = std::chrono::steady_clock::now();
  Refusal r;
  r.code = service.run_to_end({"run", "--config", config.string()}, 120s);
  r.took = std::chrono::steady_clock::now() - started;
  r.log = service.log_text();
  return r;
}

}  // namespace

TEST_CASE("the example plugin built against the installed SDK runs in the service") {
  // Built by the example_plugin test (a fixture of this one): install, find_package, build.
  const std::filesystem::path plugin = EXACTLY_TEST_EXAMPLE_PLUGIN;
  REQUIRE_MESSAGE(std::filesystem::exists(plugin), plugin.string(), " is missing");
  const auto dir = test::temp_dir("example-plugin");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  constexpr std::uint64_t records = 3000;
  test::produce_payments(input, 0, records);

  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         fmt::format("[transform]\nname = \"uppercase\"\nplugin = \"{}\"\n"
                                     "[transform.config]\nprefix = \">\"\n"
                                     "[metrics]\nlisten = \"127.0.0.1:0\"\n",
                                     plugin.string())),
      dir / "service.log");
  service.start();
  const auto progress = test::wait_for_outputs(input, output, records, 120s);
  INFO(service.log_text());
  CHECK(progress.missing == 0);

  // The value bytes the plugin saw, counted through the host API, reach /metrics. The counter is
  // not transactional: a range redone after an abort counts again, so it is at least the input's.
  std::uint64_t input_bytes = 0;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = input;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    input_bytes += r.value ? r.value->size() : 0;
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  const int port = test::metrics_port(service.log_text());
  REQUIRE(port > 0);
  const std::string metrics = test::get(port, "/metrics").body;
  INFO(metrics);
  CHECK(metrics.find("exactly_plugin_counter_total{counter=\"bytes\",plugin=\"uppercase\"}") !=
        std::string::npos);
  CHECK(test::metric_sum(metrics, "exactly_plugin_counter_total") >=
        static_cast<double>(input_bytes));

  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  const auto report = test::audit(input, output);
  MESSAGE(fmt::format("example plugin audit: {}", report.summary()));
  CHECK(report.ok());
  CHECK(report.outputs == records);

  // The plugin's work: the prefix, then the value with its ASCII letters upper-cased.
  std::uint64_t upper = 0;
  read.topic = output;
  error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    const std::string_view v = r.value.value_or("");
    if (v.starts_with(">{") && v.find_first_of("abcdefghijklmnopqrstuvwxyz") == v.npos) ++upper;
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  CHECK(upper == records);
}

TEST_CASE("run refuses a plugin it cannot load before it reaches for the cluster") {
  const std::string wrong_abi = EXACTLY_TEST_PLUGIN_WRONG_ABI;
  const auto r = run_without_cluster(
      test::temp_dir("plugin-wrong-abi"),
      fmt::format("[transform]\nname = \"wrong\"\nplugin = \"{}\"\n", wrong_abi));
  INFO(r.log);
  CHECK(r.code == 2);
  CHECK(r.took < 30s);
  CHECK(r.log.find("refusing to start") != std::string::npos);
  CHECK(r.log.find(wrong_abi) != std::string::npos);
  CHECK(r.log.find("ABI version") != std::string::npos);
  // Judged before the cluster: no word of the unreachable broker.
  CHECK(r.log.find("127.0.0.1:1") == std::string::npos);
}

TEST_CASE("run shows a plugin's rejection of its config in the start-up error") {
  const std::string good = EXACTLY_TEST_PLUGIN_GOOD;
  const auto r = run_without_cluster(
      test::temp_dir("plugin-bad-config"),
      fmt::format("[transform]\nname = \"good\"\nplugin = \"{}\"\n"
                  "[transform.config]\nsufix = \"!\"\n",
                  good));
  INFO(r.log);
  CHECK(r.code == 2);
  CHECK(r.took < 30s);
  CHECK(r.log.find("refusing to start: transform 'good'") != std::string::npos);
  CHECK(r.log.find("sufix") != std::string::npos);
}
