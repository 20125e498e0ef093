#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <variant>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "kafka/admin.h"
#include "kafka/plain_producer.h"
#include "kafka/producer.h"
#include "kafka/topic_reader.h"
#include "sample/payments.h"

extern char** environ;

namespace exactly::test {

std::string bootstrap() {
  if (const char* env = std::getenv("EXACTLY_TEST_BOOTSTRAP")) return env;
  return EXACTLY_TEST_BOOTSTRAP;
}

int cluster(const std::vector<std::string>& args) {
  const char* env = std::getenv("EXACTLY_TEST_CLUSTER_DIR");
  std::string command = EXACTLY_TEST_CLUSTER_SCRIPT;
  for (const auto& a : args) command += " '" + a + "'";
  command += fmt::format(" --dir '{}'", env != nullptr ? env : EXACTLY_TEST_CLUSTER_DIR);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool wait_until_fenced(int node, std::chrono::seconds timeout) {
  std::string error;
  auto admin = kafka::AdminClient::create({{"bootstrap.servers", bootstrap()}},
                                          kafka::Isolation::read_uncommitted, error);
  REQUIRE_MESSAGE(admin, error);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<std::int32_t> ids;
    if (!admin->broker_ids(ids, std::chrono::seconds{5}) &&
        std::find(ids.begin(), ids.end(), node) == ids.end()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{250});
  }
  return false;
}

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return fmt::format("{}-{}-{}-{:08x}", prefix, getpid(), counter.fetch_add(1), rd());
}

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / unique_name("exactly-" + name);
  std::filesystem::create_directories(dir);
  return dir;
}

void create_topic(const std::string& name, int partitions,
                  const std::map<std::string, std::string>& configs) {
  auto e = kafka::create_topics({{"bootstrap.servers", bootstrap()}},
                                {{name, partitions, -1, configs}}, false, std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
}

void produce_payments(const std::string& topic, std::uint64_t start, std::uint64_t count) {
  std::string error;
  auto producer = kafka::PlainProducer::create(
      {{"bootstrap.servers", bootstrap()}, {"linger.ms", "20"}}, topic, error);
  REQUIRE_MESSAGE(producer, error);
  for (std::uint64_t i = start; i < start + count; ++i) {
    const std::string id = sample::payment_id(i);
    const std::string value = sample::payment_json(i, 1700000000.0 + static_cast<double>(i));
    kafka::ProduceRecord record;
    record.key = id;
    record.value = value;
    auto e = producer->produce(record);
    REQUIRE_MESSAGE(!e, e.describe());
  }
  auto e = producer->flush(std::chrono::seconds{120});
  REQUIRE_MESSAGE(!e, e.describe());
}

void produce_raw(const std::string& topic, std::int32_t partition, const std::string& key,
                 const std::string& value,
                 const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string error;
  auto producer = kafka::PlainProducer::create({{"bootstrap.servers", bootstrap()}}, topic, error);
  REQUIRE_MESSAGE(producer, error);
  std::vector<kafka::ProduceHeader> raw_headers;
  for (const auto& [name, header_value] : headers) raw_headers.push_back({name, header_value});
  kafka::ProduceRecord record;
  record.key = key;
  record.value = value;
  record.headers = raw_headers;
  record.partition = partition;
  auto e = producer->produce(record);
  REQUIRE_MESSAGE(!e, e.describe());
  e = producer->flush(std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
}

void produce_transaction(const std::string& topic, std::int32_t partition,
                         const std::vector<std::pair<std::string, std::string>>& records) {
  std::string error;
  auto producer = kafka::TransactionalProducer::create(
      {{"bootstrap.servers", bootstrap()}}, unique_name("upstream"), {topic}, error);
  REQUIRE_MESSAGE(producer, error);
  auto e = producer->init_transactions(std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
  e = producer->begin_transaction();
  REQUIRE_MESSAGE(!e, e.describe());
  for (const auto& [key, value] : records) {
    kafka::ProduceRecord record;
    record.key = key;
    record.value = value;
    record.partition = partition;
    e = producer->produce(record, std::chrono::seconds{30});
    REQUIRE_MESSAGE(!e, e.describe());
  }
  e = producer->commit_transaction(std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
}

std::vector<DeadLetter> read_dead_letters(const std::string& dlq) {
  std::vector<DeadLetter> letters;
  kafka::ReadOptions read;
  read.bootstrap_servers = bootstrap();
  read.topic = dlq;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
    DeadLetter d;
    if (r.key) d.key = std::string{*r.key};
    d.value = std::string{r.value.value_or("")};
    for (const auto& h : r.headers) d.headers[std::string{h.name}] = std::string{h.value.value_or("")};
    d.partition = std::stoi(d.headers["exactly.error.partition"]);
    d.offset = std::stoll(d.headers["exactly.error.offset"]);
    letters.push_back(std::move(d));
  });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  return letters;
}

std::filesystem::path write_config(const std::filesystem::path& dir, const std::string& input,
                                   const std::string& output, const std::string& group,
                                   const std::string& extra, const std::string& pipeline_keys) {
  const auto path = dir / "pipeline.toml";
  std::ofstream out(path);
  out << fmt::format(R"([kafka]
bootstrap_servers = "{}"

[pipeline]
input_topic = "{}"
output_topic = "{}"
group_id = "{}"
{}
[log]
level = "info"
{}
{}
)",
                     bootstrap(), input, output, group, pipeline_keys,
                     // Many services run at once: none listens unless the test asks.
                     extra.find("[metrics]") == std::string::npos ? "[metrics]\nlisten = \"\"" : "",
                     extra);
  return path;
}

void debug_log(const std::filesystem::path& config) {
  std::ifstream in(config);
  std::stringstream read;
  read << in.rdbuf();
  std::string text = read.str();
  const std::string from = "level = \"info\"";
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), "level = \"debug\"");
  std::ofstream{config} << text;
}

config::Config load(const std::filesystem::path& file) {
  auto result = config::load_file(file);
  REQUIRE_MESSAGE(result.config.has_value(), config::format_problems(result.problems));
  return std::move(*result.config);
}

namespace {

// Output topic -> its lineage topic, for the outputs whose lineage is in a journal.
std::mutex lineage_topics_mutex;
std::map<std::string, std::string> lineage_topics;

std::variant<verify::Report, std::string> try_audit(const std::string& input,
                                                    const std::string& output,
                                                    const std::string& dlq,
                                                    const std::vector<std::string>& aborted_attempts,
                                                    bool read_uncommitted) {
  verify::AuditOptions options;
  options.dlq_topic = dlq;
  options.aborted_attempts = aborted_attempts;
  options.read_uncommitted = read_uncommitted;
  options.bootstrap_servers = bootstrap();
  options.input_topic = input;
  options.output_topic = output;
  {
    const std::lock_guard lock{lineage_topics_mutex};
    if (const auto it = lineage_topics.find(output); it != lineage_topics.end()) {
      options.lineage_topic = it->second;
    }
  }
  return verify::audit_topics(options);
}

}  // namespace

void set_lineage_topic(const std::string& output, const std::string& lineage_topic) {
  const std::lock_guard lock{lineage_topics_mutex};
  lineage_topics[output] = lineage_topic;
}

verify::Report audit(const std::string& input, const std::string& output, const std::string& dlq,
                     const std::vector<std::string>& aborted_attempts, bool read_uncommitted) {
  auto result = try_audit(input, output, dlq, aborted_attempts, read_uncommitted);
  const auto* error = std::get_if<std::string>(&result);
  REQUIRE_MESSAGE(error == nullptr, (error ? *error : std::string{}));
  return std::get<verify::Report>(result);
}

verify::Report wait_for_outputs(const std::string& input, const std::string& output,
                                std::uint64_t expected, std::chrono::seconds timeout,
                                const std::string& dlq, const std::function<void()>& between) {
  // The cluster may still be recovering from the fault a test made (a broker just resumed or
  // restarted): a read that fails while waiting is tried again, and only the last one counts.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto result = try_audit(input, output, dlq, {}, false);
    const auto* report = std::get_if<verify::Report>(&result);
    const bool settled = report != nullptr && report->inputs >= expected && report->missing == 0;
    if (settled || std::chrono::steady_clock::now() >= deadline) {
      const auto* error = std::get_if<std::string>(&result);
      REQUIRE_MESSAGE(error == nullptr, (error ? *error : std::string{}));
      return std::get<verify::Report>(result);
    }
    if (const auto* error = std::get_if<std::string>(&result)) {
      MESSAGE("audit failed while waiting for outputs (trying again): " << *error);
    }
    if (between) between();
    std::this_thread::sleep_for(std::chrono::seconds{1});
  }
}

Service::Service(std::filesystem::path config, std::filesystem::path log)
    : config_(std::move(config)), log_(std::move(log)) {}

Service::~Service() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void Service::start() { spawn({"run", "--config", config_.string()}); }

int Service::run_to_end(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  spawn(args);
  const auto code = wait(timeout);
  REQUIRE_MESSAGE(code.has_value(), "exactly did not exit in time");
  return *code;
}

void Service::spawn(const std::vector<std::string>& args) { start_program(EXACTLY_BINARY, args); }

void Service::start_program(const std::string& binary, const std::vector<std::string>& args) {
  REQUIRE(pid_ <= 0);
  exit_code_.reset();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<std::string> owned{binary};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_owned;
  for (char** e = environ; *e != nullptr; ++e) env_owned.emplace_back(*e);
  env_owned.insert(env_owned.end(), env_.begin(), env_.end());
  std::vector<char*> envp;
  for (auto& e : env_owned) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "cannot start " << binary);
}

void Service::set_env(const std::string& name, const std::string& value) {
  env_.push_back(name + "=" + value);
}

void Service::signal(int signo) {
  REQUIRE(pid_ > 0);
  ::kill(pid_, signo);
}

void Service::reaped(int status) {
  pid_ = -1;
  if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit_code_ = -WTERMSIG(status);
}

std::optional<int> Service::wait(std::chrono::seconds timeout) {
  if (pid_ <= 0) return exit_code_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped(status);
      return exit_code_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
}

bool Service::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped(status);
    return false;
  }
  return true;
}

std::string Service::log_text() const {
  std::ifstream in(log_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int Service::log_count(const std::string& needle) const {
  const std::string text = log_text();
  int count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

bool Service::wait_for_log(const std::string& needle, std::chrono::seconds timeout, int count) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (log_count(needle) >= count) return true;
    if (!running()) return log_count(needle) >= count;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  return false;
}

}  // namespace exactly::test

namespace exactly::test {

namespace {
int run_cluster_script(const std::string& args) {
  const int status = std::system(fmt::format("{} {}", EXACTLY_TEST_CLUSTER_SCRIPT, args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
}  // namespace

std::int64_t committed_sum(const std::string& group, const std::string& topic, int partitions) {
  std::string error;
  const auto admin = kafka::AdminClient::create(
      {{"bootstrap.servers", bootstrap()}, {"group.id", group}}, kafka::Isolation::read_committed,
      error);
  REQUIRE_MESSAGE(admin != nullptr, error);
  std::vector<std::int64_t> offsets;
  const auto e = admin->committed_offsets(topic, partitions, offsets, std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
  std::int64_t sum = 0;
  for (const auto o : offsets) sum += std::max<std::int64_t>(o, 0);
  return sum;
}

int metrics_port(const std::string& log) {
  static const std::regex pattern{R"(/readyz on \S+ \(port (\d+)\))"};
  int port = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), pattern); it != std::sregex_iterator();
       ++it) {
    port = std::stoi((*it)[1].str());
  }
  return port;
}

double metric_sum(const std::string& text, const std::string& name) {
  double sum = -1;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(name)) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != '{' && next != ' ') continue;
    const auto space = line.rfind(' ');
    sum = std::max(sum, 0.0) + std::stod(line.substr(space + 1));
  }
  return sum;
}

void retarget(const std::filesystem::path& config, const std::string& to) {
  std::ifstream in(config);
  std::stringstream text;
  text << in.rdbuf();
  std::string toml = text.str();
  const auto at = toml.find(bootstrap());
  REQUIRE_MESSAGE(at != std::string::npos, config << " does not name " << bootstrap());
  toml.replace(at, bootstrap().size(), to);
  std::ofstream(config) << toml;
}

int port_from_env(const char* variable, int fallback) {
  const char* env = std::getenv(variable);
  return env != nullptr && *env != '\0' ? std::atoi(env) : fallback;
}

OwnCluster::OwnCluster(int port, const std::string& name, const std::string& start_args)
    : port_(port), dir_(temp_dir(name)) {
  const int rc = run_cluster_script(fmt::format("start --nodes 1 --port {} --dir '{}' {}", port_,
                                                dir_.string(), start_args));
  REQUIRE_MESSAGE(rc == 0, "cannot start the cluster " << name << " on port " << port_);
}

OwnCluster::~OwnCluster() { (void)run_cluster_script(fmt::format("stop --dir '{}'", dir_.string())); }

std::string OwnCluster::bootstrap() const { return fmt::format("127.0.0.1:{}", port_); }

int OwnCluster::tool(const std::string& tool_class, const std::string& args) const {
  return run_cluster_script(fmt::format("tool {} --dir '{}' -- {}", tool_class, dir_.string(), args));
}

void OwnCluster::create(const std::string& topic, int partitions,
                        const std::map<std::string, std::string>& configs) const {
  kafka::NewTopic t{.name = topic, .partitions = partitions, .replication_factor = 1, .configs = configs};
  const auto e = kafka::create_topics({{"bootstrap.servers", bootstrap()}}, {t}, false,
                                      std::chrono::seconds{30});
  REQUIRE_MESSAGE(!e, e.describe());
}

}  // namespace exactly::test
