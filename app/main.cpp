// `exactly`: the command line. Parses, loads, hands over to lib/; nothing else lives here.
//
//   exactly run --config FILE [--set key=value ...]
//   exactly check --config FILE [--set key=value ...] [--lso-window-ms MS]
//   exactly produce-sample --config FILE --count N [--start I]
//   exactly verify --config FILE | --bootstrap-servers B --input T --output T
//   exactly create-topics --config FILE --partitions N [--replication-factor R]
//   exactly validate --config FILE [--set key=value ...]
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "allocator.h"
#include "check/check.h"
#include "config/config.h"
#include "engine/engine.h"
#include "exactly/version.h"
#include "kafka/admin.h"
#include "kafka/plain_producer.h"
#include "ops/health.h"
#include "ops/http_server.h"
#include "ops/logging.h"
#include "ops/metrics.h"
#include "ops/observer.h"
#include "ops/signals.h"
#include "plugin/builtins.h"
#include "plugin/counters.h"
#include "plugin/loader.h"
#include "sample/payments.h"
#include "transforms/transform.h"
#include "verify/audit.h"

namespace po = boost::program_options;
using exactly::engine::exit_config;
using exactly::engine::exit_failure;
using exactly::engine::exit_ok;

namespace {

void setup_logging(const exactly::config::Config& config) {
  exactly::ops::setup_logging(config.log.level, config.log.json);
}

constexpr const char* usage = R"(exactly: Kafka-to-Kafka exactly-once read-process-write service

Usage:
  exactly run --config FILE [--set KEY=VALUE ...]
      Run the pipeline the config names, until SIGTERM or SIGINT. Checks items 1, 3 and 4
      of `check` first and refuses to start (exit 2) on a fail.
  exactly check --config FILE [--set KEY=VALUE ...] [--lso-window-ms MS]
      Hold the config against the live cluster and print a checklist, one [pass], [warn] or
      [fail] line per finding: 1. input, output and dead-letter topics exist (with
      partitioning = "input", enough output partitions); 2. replication factor and
      min.insync.replicas of the topics written; 3. the brokers' transaction.max.timeout.ms
      >= transactions.timeout_ms; 4. commit interval and commit timeout fit in the
      transaction timeout, which is below max.poll.interval.ms; 5. input partitions held by
      an open upstream transaction (last stable offset not moving for MS, default 3000);
      6. the quarantine marker topic; 7. ACLs. Exit 0 without a fail, 1 with one, 2 for a
      bad config or a cluster that does not answer.
  exactly produce-sample --config FILE --count N [--start I]
      Write N sample payment events (ids payment-I .. payment-(I+N-1)) to the input topic.
  exactly verify --config FILE [--input T] [--output T] [--dlq T] [--lineage-topic T]
                 [--bootstrap-servers B]
                 [--aborted-log FILE ...]
      Read input, output and dead letters with read_committed and audit them by the lineage
      header (or the lineage topic's journal): missing, duplicated, out of order, and (given the service's logs) written by an
      attempt the service aborted. Exit 0 (4 otherwise) only when all are zero.
  exactly plugins [--config FILE] [--plugin-dir DIR]
      List the built-in transforms and the plugins in transform.plugin_dir (or DIR), with
      their config keys. Exit 2 if a plugin there cannot be used.
  exactly validate --config FILE [--set KEY=VALUE ...]
      Load and validate the config as `run` does, without a cluster: every problem with its
      file:line:column; a built-in transform also checks [transform.config] (a plugin is not
      loaded). Exit 0 when valid, 2 when not.
  exactly example-config [--markdown]
      Print a commented example of every configuration key (or the reference, in Markdown).
  exactly create-topics --config FILE --partitions N [--replication-factor R]
      Create the config's input and output topics (and its dead-letter and lineage topics).
  exactly --version | --help

Exit codes: 0 ok, 1 runtime failure (nothing lost; a restart resumes), 2 bad config or
start-up refusal, 3 transform failure (on_error = "fail"), 4 verify found a violation,
130 a second signal aborted the open transactions.
)";

// Loads the config named by --config with --set overrides; prints every problem.
std::optional<exactly::config::Config> load_config(const po::variables_map& vm) {
  if (!vm.count("config")) {
    std::cerr << "exactly: --config FILE is required\n";
    return std::nullopt;
  }
  std::vector<std::string> overrides;
  if (vm.count("set")) overrides = vm["set"].as<std::vector<std::string>>();
  auto result = exactly::config::load_file(vm["config"].as<std::string>(), overrides);
  if (!result.config) {
    std::cerr << exactly::config::format_problems(result.problems);
    std::cerr << fmt::format("exactly: {} problem(s) in the configuration\n", result.problems.size());
    return std::nullopt;
  }
  return std::move(result.config);
}

exactly::kafka::Properties client_properties(const exactly::config::Config& config) {
  exactly::kafka::Properties props{{"bootstrap.servers", config.kafka.bootstrap_servers},
                                   {"client.id", config.kafka.client_id}};
  props.insert(props.end(), config.librdkafka_common.begin(), config.librdkafka_common.end());
  return props;
}

// The fatal subset of `exactly check` (items 1, 3, 4): what would otherwise fail at the first
// partition or the first transaction is refused now, in the checklist's words.
bool preflight(const exactly::config::Config& config) {
  const auto result = exactly::check::check_startup(config, {});
  if (result.error) {
    spdlog::error("refusing to start: {}", *result.error);
    return false;
  }
  for (const auto& line : result.lines) {
    if (line.status == exactly::check::Status::fail) {
      spdlog::error("refusing to start: {}", exactly::check::format(line));
    } else if (line.status == exactly::check::Status::warn) {
      spdlog::warn("{}", exactly::check::format(line));
    }
  }
  return !result.failed();
}

int cmd_run(const po::variables_map& vm) {
  auto config = load_config(vm);
  if (!config) return exit_config;
  setup_logging(*config);
  // The transform first: a plugin that cannot load is this host's problem, and is reported even
  // when the cluster is out of reach.
  exactly::transforms::CreateResult created;
  std::string transform_version = exactly::version;
  if (!config->transform.plugin.empty()) {
    const auto described = exactly::plugin::describe(config->transform.plugin);
    if (!described.info) {
      spdlog::error("refusing to start: {}", described.error);
      return exit_config;
    }
    if (described.info->name != config->transform.name) {
      spdlog::error("refusing to start: plugin {} declares the name '{}', but transform.name is '{}'",
                    config->transform.plugin, described.info->name, config->transform.name);
      return exit_config;
    }
    transform_version = described.info->version;
    created = exactly::plugin::load(config->transform.plugin, config->transform.config);
  } else {
    created = exactly::transforms::create_builtin(config->transform.name, config->transform.config);
  }
  if (!created.transform) {
    spdlog::error("refusing to start: transform '{}': {}", config->transform.name, created.error);
    return exit_config;
  }
  if (!preflight(*config)) return exit_config;
  // Declared before the server, so the server stops before they go.
  exactly::ops::Metrics metrics;
  metrics.set_plugin_counts([] {
    std::vector<exactly::ops::PluginCount> counts;
    for (auto& entry : exactly::plugin::global_counters().snapshot()) {
      counts.push_back({std::move(entry.plugin), std::move(entry.name), entry.value});
    }
    return counts;
  });
  exactly::ops::Health health(config->health.stalled_after, config->health.commit_age,
                              exactly::ops::Health::Clock::now());
  const exactly::ops::Observer observer{metrics, health};
  std::unique_ptr<exactly::ops::HttpServer> http;
  if (!config->metrics.listen.empty()) {
    std::string error;
    http = exactly::ops::HttpServer::start(config->metrics.listen, metrics, health, error);
    if (!http) {
      spdlog::error("refusing to start: metrics.listen: {}", error);
      return exit_config;
    }
    spdlog::info("serving /metrics, /healthz and /readyz on {} (port {})", config->metrics.listen,
                 http->port());
  }
  const auto& signals = exactly::ops::install_signal_handlers();
  spdlog::info("exactly {} starting: config {}, transform '{}', malloc {}", exactly::version,
               config->source, config->transform.name, exactly::app::allocator_description());
  exactly::ops::ShutdownGuard guard(signals, config->shutdown_timeout);
  exactly::engine::Engine engine(*config, *created.transform, transform_version, observer);
  return engine.run(signals);
}

int cmd_check(const po::variables_map& vm) {
  auto config = load_config(vm);
  if (!config) return exit_config;
  const int window = vm["lso-window-ms"].as<int>();
  if (window < 0) {
    std::cerr << "exactly check: --lso-window-ms must not be negative\n";
    return exit_config;
  }
  // The checklist goes to stdout; librdkafka's own warnings and errors to stderr.
  exactly::ops::setup_logging("warn", config->log.json);
  exactly::check::Options options;
  options.lso_window = std::chrono::milliseconds{window};
  const auto result =
      exactly::check::check_all(*config, options, [](const exactly::check::Line& line) {
        std::cout << exactly::check::format(line) << std::endl;
      });
  if (result.error) {
    std::cerr << "exactly check: " << *result.error << "\n";
    return exit_config;
  }
  const auto count = [&](exactly::check::Status status) {
    return std::count_if(result.lines.begin(), result.lines.end(),
                         [&](const exactly::check::Line& line) { return line.status == status; });
  };
  std::cout << fmt::format("{} pass, {} warn, {} fail\n", count(exactly::check::Status::pass),
                           count(exactly::check::Status::warn),
                           count(exactly::check::Status::fail));
  return result.failed() ? exit_failure : exit_ok;
}

// Offline: for config files made elsewhere (the Helm chart's test renders them). ${VAR} values
// are resolved from this process's environment, as `run` would.
int cmd_validate(const po::variables_map& vm) {
  auto config = load_config(vm);
  if (!config) return exit_config;
  if (config->transform.plugin.empty()) {
    const auto created =
        exactly::transforms::create_builtin(config->transform.name, config->transform.config);
    if (!created.transform) {
      std::cerr << fmt::format("{}: {}\n", config->source, created.error);
      return exit_config;
    }
  }
  std::cout << fmt::format("{}: valid\n", config->source);
  return exit_ok;
}

int cmd_produce_sample(const po::variables_map& vm) {
  auto config = load_config(vm);
  if (!config) return exit_config;
  setup_logging(*config);
  const auto count = vm["count"].as<std::uint64_t>();
  const auto start = vm["start"].as<std::uint64_t>();
  auto props = client_properties(*config);
  props.insert(props.end(), config->librdkafka_producer.begin(), config->librdkafka_producer.end());
  std::string error;
  auto producer = exactly::kafka::PlainProducer::create(props, config->pipeline.input_topic, error);
  if (!producer) {
    spdlog::error("{}", error);
    return exit_config;
  }
  const double now = static_cast<double>(std::time(nullptr));
  for (std::uint64_t i = start; i < start + count; ++i) {
    const std::string id = exactly::sample::payment_id(i);
    const std::string value = exactly::sample::payment_json(i, now + static_cast<double>(i - start) / 1000.0);
    exactly::kafka::ProduceRecord record;
    record.key = id;
    record.value = value;
    if (auto e = producer->produce(record)) {
      spdlog::error("producing sample {}: {}", i, e.describe());
      return exit_failure;
    }
  }
  if (auto e = producer->flush(std::chrono::seconds{120})) {
    spdlog::error("producing samples: {}", e.describe());
    return exit_failure;
  }
  std::cout << fmt::format("produced {} payment events to '{}'\n", count, config->pipeline.input_topic);
  return exit_ok;
}

int cmd_verify(const po::variables_map& vm) {
  exactly::verify::AuditOptions options;
  if (vm.count("config")) {
    auto config = load_config(vm);
    if (!config) return exit_config;
    options.bootstrap_servers = config->kafka.bootstrap_servers;
    options.input_topic = config->pipeline.input_topic;
    options.output_topic = config->pipeline.output_topic;
    options.dlq_topic = config->pipeline.dlq_topic;
    options.lineage_topic = config->pipeline.lineage_topic;
    options.properties = config->librdkafka_common;
    options.properties.insert(options.properties.end(), config->librdkafka_consumer.begin(),
                              config->librdkafka_consumer.end());
  }
  if (vm.count("bootstrap-servers")) options.bootstrap_servers = vm["bootstrap-servers"].as<std::string>();
  if (vm.count("input")) options.input_topic = vm["input"].as<std::string>();
  if (vm.count("output")) options.output_topic = vm["output"].as<std::string>();
  if (vm.count("dlq")) options.dlq_topic = vm["dlq"].as<std::string>();
  if (vm.count("lineage-topic")) options.lineage_topic = vm["lineage-topic"].as<std::string>();
  if (options.bootstrap_servers.empty() || options.input_topic.empty() || options.output_topic.empty()) {
    std::cerr << "exactly verify: needs --config FILE, or --bootstrap-servers, --input and --output\n";
    return exit_config;
  }
  if (vm.count("aborted-log")) {
    for (const auto& file : vm["aborted-log"].as<std::vector<std::string>>()) {
      std::ifstream in(file);
      if (!in) {
        std::cerr << fmt::format("exactly verify: cannot read --aborted-log '{}'\n", file);
        return exit_config;
      }
      std::ostringstream text;
      text << in.rdbuf();
      auto ids = exactly::verify::aborted_attempts_in(text.str());
      options.aborted_attempts.insert(options.aborted_attempts.end(), ids.begin(), ids.end());
    }
    std::cerr << fmt::format("exactly verify: {} aborted attempt(s) from the logs\n",
                             options.aborted_attempts.size());
  }
  if (::isatty(STDERR_FILENO) != 0) {
    // A progress line on a terminal: rewritten in place, cleared at the end of each topic.
    options.progress = [](std::string_view topic, std::uint64_t records) {
      std::cerr << fmt::format("\r\033[Kreading '{}': {} records", topic, records) << std::flush;
    };
  }
  exactly::ops::setup_logging("warn", false);
  auto result = exactly::verify::audit_topics(options);
  if (options.progress) std::cerr << "\r\033[K" << std::flush;
  if (const auto* error = std::get_if<std::string>(&result)) {
    std::cerr << "exactly verify: " << *error << "\n";
    return exit_failure;
  }
  const auto& report = std::get<exactly::verify::Report>(result);
  std::cout << report.summary() << "\n";
  for (const auto& example : report.examples) std::cout << "  " << example << "\n";
  if (!report.duplicate_copies.empty()) {
    std::cout << "copies of duplicated inputs:\n";
    for (const auto& copy : report.duplicate_copies) std::cout << "  " << copy << "\n";
  }
  std::cout << (report.ok() ? "exactly-once: OK\n" : "exactly-once: VIOLATED\n");
  return report.ok() ? exit_ok : 4;
}

void print_plugin(const exactly::plugin::PluginInfo& info, std::string_view where) {
  std::cout << fmt::format("{} {} ({})\n", info.name, info.version, where);
  if (info.config_keys.empty()) std::cout << "    (no config keys)\n";
  for (const auto& key : info.config_keys) {
    std::cout << fmt::format("    {:<20} {}\n", key.name, key.description);
  }
}

int cmd_plugins(const po::variables_map& vm) {
  std::string dir;
  if (vm.count("config")) {
    auto config = load_config(vm);
    if (!config) return exit_config;
    dir = config->transform.plugin_dir;
  }
  if (vm.count("plugin-dir")) dir = vm["plugin-dir"].as<std::string>();
  for (const auto* descriptor : exactly::plugin::builtin_descriptors()) {
    print_plugin(exactly::plugin::info_of(*descriptor), "built-in");
  }
  if (dir.empty()) return exit_ok;
  const auto listing = exactly::plugin::describe_directory(dir);
  if (!listing.error.empty()) {
    std::cerr << "exactly plugins: " << listing.error << "\n";
    return exit_config;
  }
  int refused = 0;
  for (const auto& entry : listing.entries) {
    if (entry.info) {
      print_plugin(*entry.info, entry.path.string());
    } else {
      ++refused;
      std::cout << fmt::format("{}: not usable: {}\n", entry.path.string(), entry.error);
    }
  }
  return refused == 0 ? exit_ok : exit_config;
}

int cmd_create_topics(const po::variables_map& vm) {
  auto config = load_config(vm);
  if (!config) return exit_config;
  setup_logging(*config);
  const int partitions = vm["partitions"].as<int>();
  const int rf = vm["replication-factor"].as<int>();
  std::vector<exactly::kafka::NewTopic> topics{{config->pipeline.input_topic, partitions, rf, {}},
                                                {config->pipeline.output_topic, partitions, rf, {}}};
  if (!config->pipeline.dlq_topic.empty()) {
    topics.push_back({config->pipeline.dlq_topic, partitions, rf, {}});
  }
  if (!config->pipeline.lineage_topic.empty()) {
    topics.push_back({config->pipeline.lineage_topic, partitions, rf, {}});
  }
  if (auto e = exactly::kafka::create_topics(client_properties(*config), topics, true,
                                             std::chrono::seconds{30})) {
    spdlog::error("{}", e.describe());
    return exit_failure;
  }
  for (const auto& t : topics) std::cout << fmt::format("topic '{}' ready ({} partitions)\n", t.name, partitions);
  return exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  exactly::app::configure_allocator();  // before any thread starts (app/allocator.h)
  try {
    po::options_description options("Options");
    options.add_options()
        ("help,h", "print this help")
        ("version", "print the version")
        ("config,c", po::value<std::string>(), "the pipeline's TOML file")
        ("set", po::value<std::vector<std::string>>()->composing(), "override a config key: KEY=VALUE")
        ("lso-window-ms", po::value<int>()->default_value(3000),
         "check: how long to watch the input's last stable offsets")
        ("count", po::value<std::uint64_t>()->default_value(1000), "produce-sample: how many events")
        ("start", po::value<std::uint64_t>()->default_value(0), "produce-sample: the first event's index")
        ("bootstrap-servers", po::value<std::string>(), "verify: the cluster")
        ("input", po::value<std::string>(), "verify: the input topic")
        ("output", po::value<std::string>(), "verify: the output topic")
        ("dlq", po::value<std::string>(), "verify: the dead-letter topic, if any")
        ("lineage-topic", po::value<std::string>(),
         "verify: the lineage topic, if the outputs' lineage is there (pipeline.lineage_topic)")
        ("markdown", "example-config: the reference as Markdown tables instead")
        ("aborted-log", po::value<std::vector<std::string>>(),
         "verify: a service log; an output of an attempt it aborted is an aborted read")
        ("plugin-dir", po::value<std::string>(), "plugins: a folder of plugins to list")
        ("partitions", po::value<int>()->default_value(4), "create-topics: partitions per topic")
        ("replication-factor", po::value<int>()->default_value(-1), "create-topics: -1 = broker default");
    po::options_description hidden;
    hidden.add_options()("command", po::value<std::string>(), "subcommand");
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("command", 1);

    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), vm);
    po::notify(vm);

    if (vm.count("version")) {
      std::cout << "exactly " << exactly::version << "\n"
                << "malloc: " << exactly::app::allocator_description() << "\n";
      return exit_ok;
    }
    if (vm.count("help") || !vm.count("command")) {
      std::cout << usage << "\n" << options << "\n";
      return vm.count("help") ? exit_ok : exit_config;
    }
    const std::string command = vm["command"].as<std::string>();
    if (command == "run") return cmd_run(vm);
    if (command == "check") return cmd_check(vm);
    if (command == "produce-sample") return cmd_produce_sample(vm);
    if (command == "verify") return cmd_verify(vm);
    if (command == "create-topics") return cmd_create_topics(vm);
    if (command == "plugins") return cmd_plugins(vm);
    if (command == "validate") return cmd_validate(vm);
    if (command == "example-config") {
      if (vm.count("markdown")) {
        std::cout << exactly::config::reference_markdown();
        return exit_ok;
      }
      std::cout << exactly::config::example_toml();
      return exit_ok;
    }
    std::cerr << fmt::format("exactly: unknown command '{}' (try --help)\n", command);
    return exit_config;
  } catch (const po::error& e) {
    std::cerr << "exactly: " << e.what() << " (try --help)\n";
    return exit_config;
  } catch (const std::exception& e) {
    std::cerr << "exactly: " << e.what() << "\n";
    return exit_failure;
  }
}
