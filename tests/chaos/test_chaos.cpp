// The fault suite: exactly-once on a 3-broker cluster (replication factor 3, min.insync.replicas
// 2), 6 input partitions and at least 100,000 seeded records per run, under the faults Kafka's own
// system tests and Jepsen use. Every run ends with the read_committed audit, including aborted
// reads of the attempts the services logged as aborted, and prints one line:
//
//   case, runs, inputs, outputs, dlq, missing, duplicated, aborted_reads, order_violations,
//   recovery p50/max
//
// where recovery is the time from a fault (its end, for a pause) to the next transaction any
// instance commits. EXACTLY_CHAOS_RUNS (default 1) repeats each case; EXACTLY_CHAOS_RESULTS names a
// CSV file that every finished run appends one row to, and EXACTLY_CHAOS_UNTIL=N runs each case
// only as often as that file lacks for N runs (scripts/chaos.sh keeps results/chaos-runs.csv
// across invocations and writes the table from all of its rows).
#include <signal.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <atomic>
#include <fstream>
#include <span>
#include <sstream>
#include <string_view>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "http_get.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "sample/payments.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int input_partitions = 6;
constexpr std::uint64_t records_per_run = 100000;

// EXACTLY_CHAOS_SCOPE=instance runs every case with pipeline.producer_scope = "instance" (and
// static membership, one group.instance.id per fleet instance); its rows are the case names
// followed by " (instance scope)".
bool instance_scope() {
  const char* scope = std::getenv("EXACTLY_CHAOS_SCOPE");
  return scope != nullptr && std::string_view{scope} == "instance";
}

// EXACTLY_CHAOS_LINEAGE=topic runs every case with the lineage in a lineage topic
// (pipeline.lineage_topic) instead of headers, audited from it; its rows end in
// " (lineage topic)".
bool lineage_topic() {
  const char* lineage = std::getenv("EXACTLY_CHAOS_LINEAGE");
  return lineage != nullptr && std::string_view{lineage} == "topic";
}

std::string scoped(const std::string& name) {
  std::string scoped = instance_scope() ? name + " (instance scope)" : name;
  if (lineage_topic()) scoped += " (lineage topic)";
  return scoped;
}

// The runs of `name` already in the EXACTLY_CHAOS_RESULTS file.
int recorded_runs(const std::string& name) {
  const char* file = std::getenv("EXACTLY_CHAOS_RESULTS");
  if (file == nullptr || *file == '\0') return 0;
  std::ifstream in(file);
  int runs = 0;
  for (std::string line; std::getline(in, line);) {
    const auto comma = line.find(',');
    if (comma != std::string::npos && line.compare(comma + 1, name.size() + 1, name + ",") == 0) ++runs;
  }
  return runs;
}

// EXACTLY_CHAOS_RUNS (default 1) runs; or, with EXACTLY_CHAOS_UNTIL=N, as many as the results file
// lacks for N runs of the case (0 when it has them: an interrupted series resumes where it stopped).
int runs_of(const std::string& name) {
  if (const char* until = std::getenv("EXACTLY_CHAOS_UNTIL")) {
    return std::max(0, std::atoi(until) - recorded_runs(name));
  }
  const char* env = std::getenv("EXACTLY_CHAOS_RUNS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 1;
}

// One service instance of a fleet: restarts keep appending to its log.
struct Instance {
  std::unique_ptr<test::Service> service;
  int generation = 0;  // starts so far
  bool stopped = false;  // scaled down on purpose
};

double committed_of(int port) {
  if (port == 0) return -1;
  const auto response = test::get(port, "/metrics");
  if (response.status != 200) return -1;
  constexpr std::string_view needle = "\nexactly_transactions_committed_total ";
  const auto at = response.body.find(needle);
  if (at == std::string::npos) return -1;
  try {
    return std::stod(response.body.substr(at + needle.size()));
  } catch (const std::exception&) {
    return -1;
  }
}

// Instances of one pipeline (one group), and the faults done to them.
class Fleet {
 public:
  Fleet(const std::filesystem::path& dir, const std::filesystem::path& config, int size)
      : dir_(dir), config_(config) {
    for (int i = 0; i < size; ++i) add();
  }

  void add() {
    const auto n = instances_.size();
    auto config = config_;
    if (instance_scope()) {
      // Static membership: the instance's producer is named by it, so its restart fences the
      // killed one at once (the line goes into the consumer table that test::fast_group opens).
      std::ostringstream read;
      read << std::ifstream(config_).rdbuf();
      std::string text = read.str();
      const std::string anchor = "\"heartbeat.interval.ms\" = 300\n";
      const auto at = text.find(anchor);
      REQUIRE_MESSAGE(at != std::string::npos, "no consumer table in " << config_);
      text.insert(at + anchor.size(),
                  fmt::format("\"group.instance.id\" = \"{}-{}\"\n", dir_.filename().string(), n));
      config = dir_ / fmt::format("instance-{}.toml", n);
      std::ofstream(config) << text;
    }
    instances_.push_back(
        {std::make_unique<test::Service>(config, dir_ / fmt::format("instance-{}.log", n)), 0,
         false});
  }
  [[nodiscard]] std::size_t size() const { return instances_.size(); }
  test::Service& service(std::size_t i) { return *instances_.at(i).service; }

  void start(std::size_t i) {
    auto& in = instances_.at(i);
    const int ready = in.service->log_count("serving /metrics");
    in.service->start();
    ++in.generation;
    REQUIRE_MESSAGE(in.service->wait_for_log("serving /metrics", 60s, ready + 1),
                    in.service->log_text());
  }
  void kill(std::size_t i) {
    service(i).signal(SIGKILL);
    const auto code = service(i).wait(30s);
    REQUIRE(code.has_value());
    CHECK(*code == -SIGKILL);
  }
  // A stop on SIGTERM exits 0. Exit 1 passes only when the cluster did not answer through the
  // whole shutdown timeout and the service said so: every broker of this suite stalled for
  // seconds at once now and then on two loaded cores (results/chaos.md). The run's audit still
  // has to be clean.
  void term(std::size_t i) {
    service(i).signal(SIGTERM);
    const auto code = service(i).wait(90s);
    const std::string log = service(i).log_text();
    INFO(log);
    REQUIRE(code.has_value());
    const auto signalled = log.rfind("signal received");
    const std::string stop = signalled == std::string::npos ? std::string{} : log.substr(signalled);
    if (*code == 1 && stop.find("could not leave the group within shutdown.timeout_ms") != std::string::npos &&
        stop.find("Timed out") != std::string::npos) {
      MESSAGE("instance " << i << " could not leave the group: the cluster did not answer within "
                                  "the shutdown timeout (exit 1)");
      return;
    }
    CHECK(*code == 0);
  }

  // What each running instance has committed, to measure a recovery from.
  struct Snapshot {
    std::vector<std::pair<int, double>> seen;  // generation, committed
  };
  Snapshot snapshot() {
    Snapshot s;
    for (auto& in : instances_) {
      const double c = in.service->running() ? committed_of(test::metrics_port(in.service->log_text())) : -1;
      s.seen.emplace_back(in.generation, c);
    }
    return s;
  }
  // The time until a running instance (`only`, if given: the one the fault hit) commits a
  // transaction after `since`.
  std::chrono::milliseconds recovery(const Snapshot& since, Clock::time_point from,
                                     std::optional<std::size_t> only = std::nullopt,
                                     std::chrono::seconds limit = 180s) {
    const auto deadline = from + limit;
    while (Clock::now() < deadline) {
      supervise();
      for (std::size_t i = 0; i < instances_.size(); ++i) {
        auto& in = instances_[i];
        if ((only && i != *only) || !in.service->running()) continue;
        const double c = committed_of(test::metrics_port(in.service->log_text()));
        const auto& [generation, before] = since.seen[i];
        if (c > 0 && (in.generation != generation || c > before)) {
          return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - from);
        }
      }
      std::this_thread::sleep_for(50ms);
    }
    FAIL("no commit within " << limit.count() << " s of the fault");
    return std::chrono::duration_cast<std::chrono::milliseconds>(limit);
  }

  // Restarts instances that died on their own, as Kubernetes would; how many it restarted.
  int supervise() {
    int restarted = 0;
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      if (instances_[i].stopped || service(i).running()) continue;
      start(i);
      ++restarted;
    }
    return restarted;
  }
  // Marks an instance stopped on purpose (scaled down): supervise() leaves it.
  void retire(std::size_t i) {
    term(i);
    instances_.at(i).stopped = true;
  }

  void stop_all() {
    for (std::size_t i = 0; i < instances_.size(); ++i) {
      if (service(i).running()) term(i);
    }
  }
  // Instances that exited on their own (restarted by supervise()).
  [[nodiscard]] int exits() const {
    int n = 0;
    for (const auto& in : instances_) n += in.generation;
    return n;
  }
  [[nodiscard]] std::vector<std::string> aborted_attempts() const {
    std::vector<std::string> all;
    for (const auto& in : instances_) {
      auto ids = verify::aborted_attempts_in(in.service->log_text());
      all.insert(all.end(), ids.begin(), ids.end());
    }
    return all;
  }
  [[nodiscard]] std::string logs() const {
    std::string all;
    for (const auto& in : instances_) all += in.service->log_text();
    return all;
  }

 private:
  std::filesystem::path dir_;
  std::filesystem::path config_;
  std::vector<Instance> instances_;
};

// Writes the run's input in chunks, steadily, until the faults are over and at least
// records_per_run are written, so that there is always work to recover to.
class Feeder {
 public:
  Feeder(std::string topic, std::chrono::milliseconds every)
      : thread_([this, topic = std::move(topic), every] {
          constexpr std::uint64_t chunk = 2500;
          while (!stop_ || written_ < records_per_run) {
            {
              const std::lock_guard lock(chunk_mutex_);
              if (!paused_) {
                test::produce_payments(topic, written_, chunk);
                written_ += chunk;
              }
            }
            std::this_thread::sleep_for(every);
          }
        }) {}
  ~Feeder() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  Feeder(const Feeder&) = delete;
  Feeder& operator=(const Feeder&) = delete;
  // Holds the input back (after the chunk being written, if any) until resume(): while no
  // broker is up, the test's own producer could not say what it wrote.
  void pause() {
    paused_ = true;
    const std::lock_guard lock(chunk_mutex_);
  }
  void resume() { paused_ = false; }
  // Ends the input; the number of records written.
  std::uint64_t finish() {
    stop_ = true;
    thread_.join();
    return written_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::mutex chunk_mutex_;
  std::atomic<std::uint64_t> written_{0};
  std::thread thread_;
};

struct Pipeline {
  std::filesystem::path dir;
  std::string input;
  std::string output;
  std::string dlq;
  std::filesystem::path config;
};

Pipeline make_pipeline(const std::string& name, const std::string& extra = {},
                       const std::string& pipeline_keys = {}, bool with_dlq = false,
                       const std::map<std::string, std::string>& output_configs = {}) {
  Pipeline p;
  p.dir = test::temp_dir("chaos-" + name);
  p.input = test::unique_name("in");
  p.output = test::unique_name("out");
  test::create_topic(p.input, input_partitions);
  test::create_topic(p.output, input_partitions, output_configs);
  std::string keys = pipeline_keys;
  std::string tables = extra;
  if (instance_scope()) {
    keys += "producer_scope = \"instance\"\n";
    tables += "\n[quarantine]\nenabled = false\n";
  }
  if (lineage_topic()) {
    // Made beforehand, as `exactly create-topics` would: a topic the services make at start-up
    // delays their joining by seconds on this machine, which the cases' timings do not allow for.
    const auto lineage = test::unique_name("lineage");
    test::create_topic(lineage, input_partitions);
    test::set_lineage_topic(p.output, lineage);
    keys += fmt::format("lineage_topic = \"{}\"\n", lineage);
  }
  if (with_dlq) {
    p.dlq = test::unique_name("dlq");
    test::create_topic(p.dlq, 1);
    keys += fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"\n", p.dlq);
  }
  p.config = test::write_config(
      p.dir, p.input, p.output, test::unique_name("group"),
      std::string{"[metrics]\nlisten = \"127.0.0.1:0\"\n"} + test::fast_group + tables, keys);
  return p;
}

struct Outcome {
  verify::Report report;
  std::vector<std::chrono::milliseconds> recoveries;
};

std::string line_of(const std::string& name, int runs, const std::vector<Outcome>& outcomes) {
  verify::Report sum;
  std::vector<std::chrono::milliseconds> recoveries;
  for (const auto& o : outcomes) {
    sum.inputs += o.report.inputs;
    sum.outputs += o.report.outputs;
    sum.dead_letters += o.report.dead_letters;
    sum.missing += o.report.missing;
    sum.duplicated += o.report.duplicated;
    sum.aborted_reads += o.report.aborted_reads;
    sum.order_violations += o.report.order_violations;
    recoveries.insert(recoveries.end(), o.recoveries.begin(), o.recoveries.end());
  }
  std::sort(recoveries.begin(), recoveries.end());
  const auto seconds = [](std::chrono::milliseconds d) { return fmt::format("{:.1f}s", d.count() / 1000.0); };
  const std::string recovery =
      recoveries.empty() ? std::string{"-"}
                         : fmt::format("{}/{}", seconds(recoveries[recoveries.size() / 2]),
                                       seconds(recoveries.back()));
  return fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}, {}", name, runs, sum.inputs, sum.outputs,
                     sum.dead_letters, sum.missing, sum.duplicated, sum.aborted_reads,
                     sum.order_violations, recovery);
}

// Appends one finished run to EXACTLY_CHAOS_RESULTS, if set: a CSV row of
//   date, case, inputs, outputs, dlq, missing, duplicated, aborted_reads, order_violations,
//   no_lineage, recoveries in milliseconds (space-separated), build
// written as soon as the run ends, so an interrupted series keeps the runs it finished. The build
// is EXACTLY_CHAOS_BUILD (scripts/chaos.sh sets the commit it built), or "-".
void record_run(const std::string& name, const Outcome& o) {
  const char* file = std::getenv("EXACTLY_CHAOS_RESULTS");
  if (file == nullptr || *file == '\0') return;
  std::string recoveries;
  for (const auto& r : o.recoveries) recoveries += fmt::format("{}{}", recoveries.empty() ? "" : " ", r.count());
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  const auto& r = o.report;
  std::ofstream out(file, std::ios::app);
  const char* build = std::getenv("EXACTLY_CHAOS_BUILD");
  out << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", date, name, r.inputs, r.outputs,
                     r.dead_letters, r.missing, r.duplicated, r.aborted_reads, r.order_violations,
                     r.no_lineage, recoveries, build != nullptr && *build != '\0' ? build : "-");
  REQUIRE_MESSAGE(out.good(), "cannot append to " << file);
}

// Runs a case `runs_of(name)` times, checks every run, and reports its line.
void run_case(const std::string& case_name, const std::function<Outcome()>& once) {
  const std::string name = scoped(case_name);
  const int runs = runs_of(name);
  if (runs == 0) {
    MESSAGE(name, ": the results file has its runs already");
    CHECK(recorded_runs(name) > 0);
    return;
  }
  std::vector<Outcome> outcomes;
  for (int run = 0; run < runs; ++run) {
    CAPTURE(run);
    Outcome o = once();
    // One INFO for all of it: an INFO inside a loop body is gone when the body ends.
    std::string findings = o.report.summary();
    for (const auto& example : o.report.examples) findings += "\n  " + example;
    for (const auto& copy : o.report.duplicate_copies) findings += "\n  copy " + copy;
    INFO(findings);
    CHECK(o.report.missing == 0);
    CHECK(o.report.duplicated == 0);
    CHECK(o.report.aborted_reads == 0);
    CHECK(o.report.order_violations == 0);
    CHECK(o.report.no_lineage == 0);
    CHECK(o.report.unknown_source == 0);
    record_run(name, o);
    outcomes.push_back(std::move(o));
  }
  MESSAGE(line_of(name, runs, outcomes));
}

// Ends a run: wait until every input is reflected, stop the fleet cleanly, audit. An instance that
// exits on its own meanwhile is restarted, as Kubernetes would: a static member whose session
// timed out on a slow coordinator can be fenced by its own rejoin (librdkafka 2.0.2 reports
// FENCED_INSTANCE_ID as fatal, confluentinc/librdkafka#3437) and exits with code 1.
Outcome finish(Fleet& fleet, const Pipeline& p, std::uint64_t expected_inputs,
               std::vector<std::chrono::milliseconds> recoveries) {
  int restarted = 0;
  const auto progress = test::wait_for_outputs(p.input, p.output, expected_inputs, 300s, p.dlq,
                                               [&] { restarted += fleet.supervise(); });
  if (restarted > 0) {
    MESSAGE(restarted << " instance(s) exited on their own while the outputs were awaited, and were restarted");
  }
  INFO(fleet.logs());
  CHECK(progress.missing == 0);
  fleet.stop_all();
  Outcome o;
  o.report = test::audit(p.input, p.output, p.dlq, fleet.aborted_attempts());
  CHECK(o.report.inputs == expected_inputs);
  o.recoveries = std::move(recoveries);
  return o;
}

}  // namespace

TEST_CASE("chaos: kill -9 of the services at random instants") {
  run_case("kill -9", [] {
    const auto p = make_pipeline("kill");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 400ms);
    std::mt19937 random{std::random_device{}()};
    std::uniform_int_distribution<int> pause(500, 2500);
    std::vector<std::chrono::milliseconds> recoveries;
    // At least 3 kills per instance, alternating, while the input flows.
    for (int kill = 0; kill < 6; ++kill) {
      std::this_thread::sleep_for(std::chrono::milliseconds{pause(random)});
      const std::size_t victim = static_cast<std::size_t>(kill % 2);
      const auto before = fleet.snapshot();
      const auto at = Clock::now();
      fleet.kill(victim);
      fleet.start(victim);
      recoveries.push_back(fleet.recovery(before, at, victim));
    }
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

TEST_CASE("chaos: SIGTERM restarts of the services") {
  run_case("SIGTERM restarts", [] {
    const auto p = make_pipeline("term");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 400ms);
    std::vector<std::chrono::milliseconds> recoveries;
    for (int restart = 0; restart < 6; ++restart) {
      std::this_thread::sleep_for(1500ms);
      const std::size_t victim = static_cast<std::size_t>(restart % 2);
      const auto before = fleet.snapshot();
      const auto at = Clock::now();
      fleet.term(victim);
      fleet.start(victim);
      recoveries.push_back(fleet.recovery(before, at, victim));
    }
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

// A topic is in the metadata of some brokers a moment before the others, and a service started
// by the same script that created its topics asks any of them for the topic's config at start-up.
TEST_CASE("chaos: a topic created a moment ago is found and its config read on a cluster of three") {
  struct NoGroup final : kafka::RebalanceHandler {
    std::vector<kafka::PartitionOffset> on_assign(std::span<const std::int32_t>) override { return {}; }
    void on_revoke(std::span<const std::int32_t>, bool) override {}
  } no_group;
  const kafka::Properties admin{{"bootstrap.servers", test::bootstrap()}};
  kafka::Properties consumer_properties = admin;
  consumer_properties.emplace_back("group.id", test::unique_name("fresh-group"));
  std::string error;
  // The service's own start-up path: its consumer's metadata, then DescribeConfigs.
  auto consumer = kafka::Consumer::create(consumer_properties, "unused", no_group, error);
  REQUIRE_MESSAGE(consumer, error);
  for (int i = 0; i < 40; ++i) {
    CAPTURE(i);
    const std::string topic = test::unique_name("fresh");
    test::create_topic(topic, 6, {{"max.message.bytes", "500000"}});
    int partitions = 0;
    const auto found = consumer->partition_count(topic, partitions, 10s);
    REQUIRE_MESSAGE(!found, found.describe());
    CHECK(partitions == 6);
    std::map<std::string, std::string> config;
    const auto e = kafka::describe_topic_config(admin, topic, config, 10s);
    REQUIRE_MESSAGE(!e, e.describe());
    CHECK(config["max.message.bytes"] == "500000");
  }
}

TEST_CASE("chaos: a zombie frozen past its session is fenced when it wakes") {
  run_case("zombie", [] {
    const auto p = make_pipeline("zombie");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 300ms);
    // Both in the group (the second's first assignment is the rebalance that shares them).
    REQUIRE(fleet.service(1).wait_for_log("assigned", 60s, 1));
    std::this_thread::sleep_for(2s);
    // Frozen mid-work past the 2 s session: the other instance takes all partitions, and its
    // init_transactions fences the frozen one's producers.
    const auto before = fleet.snapshot();
    const auto at = Clock::now();
    fleet.service(0).signal(SIGSTOP);
    REQUIRE(fleet.service(1).wait_for_log("assigned", 60s, 2));
    std::vector<std::chrono::milliseconds> recoveries{fleet.recovery(before, at, 1)};
    std::this_thread::sleep_for(3s);
    fleet.service(0).signal(SIGCONT);
    // Awake, it learns it lost its partitions (or is fenced), and rejoins.
    std::this_thread::sleep_for(5s);
    auto outcome = finish(fleet, p, feeder.finish(), std::move(recoveries));
    const std::string zombie_log = fleet.service(0).log_text();
    CHECK((zombie_log.find("lost ") != std::string::npos ||
           zombie_log.find("fenced") != std::string::npos ||
           zombie_log.find("FENCED") != std::string::npos));
    return outcome;
  });
}

TEST_CASE("chaos: rolling clean and hard restarts of the brokers") {
  run_case("broker restarts", [] {
    const auto p = make_pipeline("brokers");
    // Every attempt's open and commit in the logs, to follow a finding to its transactions.
    test::debug_log(p.config);
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 500ms);
    std::vector<std::chrono::milliseconds> recoveries;
    // Every broker, so the transaction and group coordinators are among them: a clean stop and
    // start, then a kill -9 and start.
    //
    // A killed broker starts again only once the controller has fenced it (broker.session.timeout.ms,
    // 9 s). Restarted sooner, a Kafka 4.1.1 broker acts as the leader it was, at the same leader
    // epoch, before the controller sees the new incarnation: as transaction coordinator it completes
    // a commit it had written only to its own log, then the controller moves the leadership to a
    // replica without that record, whose coordinator aborts the same transaction. Some partitions
    // of the transaction commit and others abort; no client can repair that.
    // results/broker-restart-split-transaction.md has the broker logs that show it, and
    // results/chaos.md the fast-restart runs.
    for (const char* how : {"stop", "kill"}) {
      for (int node = 1; node <= 3; ++node) {
        std::this_thread::sleep_for(1s);
        const auto before = fleet.snapshot();
        REQUIRE(test::cluster({"node", how, std::to_string(node)}) == 0);
        std::this_thread::sleep_for(2s);
        if (std::string_view{how} == "kill") REQUIRE(test::wait_until_fenced(node, 60s));
        REQUIRE(test::cluster({"node", "start", std::to_string(node)}) == 0);
        recoveries.push_back(fleet.recovery(before, Clock::now()));
      }
    }
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

TEST_CASE("chaos: a broker paused with SIGSTOP") {
  run_case("broker paused", [] {
    const auto p = make_pipeline("pause");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 400ms);
    std::vector<std::chrono::milliseconds> recoveries;
    // Pauses from 5 to 60 s: a short one (5-15 s, around the controller's 9 s broker session
    // timeout) and a long one (30-60 s: the broker is fenced, its leaderships and coordinators move).
    std::mt19937 random{std::random_device{}()};
    const std::array<std::chrono::seconds, 2> pauses{
        std::chrono::seconds{std::uniform_int_distribution<int>{5, 15}(random)},
        std::chrono::seconds{std::uniform_int_distribution<int>{30, 60}(random)}};
    for (int node = 1; node <= 2; ++node) {
      std::this_thread::sleep_for(2s);
      REQUIRE(test::cluster({"node", "pause", std::to_string(node)}) == 0);
      const auto pause = pauses.at(static_cast<std::size_t>(node - 1));
      MESSAGE("broker ", node, " paused for ", pause.count(), " s");
      std::this_thread::sleep_for(pause);
      const auto before = fleet.snapshot();
      REQUIRE(test::cluster({"node", "resume", std::to_string(node)}) == 0);
      recoveries.push_back(fleet.recovery(before, Clock::now()));
    }
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

TEST_CASE("chaos: a service paused longer than the transaction timeout") {
  run_case("pause past transaction timeout", [] {
    // One instance, so nobody takes its partitions over: the broker itself aborts its open
    // transactions at transaction.timeout.ms, and it finds out when it wakes.
    const auto p = make_pipeline("txn-timeout",
                                 "[transactions]\ntimeout_ms = 8000\ncommit_timeout_ms = 3000\n");
    Fleet fleet(p.dir, p.config, 1);
    fleet.start(0);
    Feeder feeder(p.input, 300ms);
    std::vector<std::chrono::milliseconds> recoveries;
    for (int pause = 0; pause < 2; ++pause) {
      std::this_thread::sleep_for(2s);
      fleet.service(0).signal(SIGSTOP);
      std::this_thread::sleep_for(12s);
      fleet.service(0).signal(SIGCONT);
      const auto woke = Clock::now();
      // A stopped process answers no scrape (its count would read as -1, and any commit would
      // end the recovery at once): the count is read once it is awake, and the recovery runs to
      // the next commit after that.
      auto awake = fleet.snapshot();
      for (int tries = 0; awake.seen.at(0).second < 0 && tries < 100; ++tries) {
        std::this_thread::sleep_for(20ms);
        awake = fleet.snapshot();
      }
      REQUIRE(awake.seen.at(0).second >= 0);
      recoveries.push_back(fleet.recovery(awake, woke, 0));
    }
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

TEST_CASE("chaos: instances scaling 2 to 3 to 1 while records flow") {
  run_case("scaling 2-3-1", [] {
    const auto p = make_pipeline("scaling");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 400ms);
    std::vector<std::chrono::milliseconds> recoveries;
    std::this_thread::sleep_for(3s);
    fleet.add();
    auto before = fleet.snapshot();
    auto at = Clock::now();
    fleet.start(2);
    recoveries.push_back(fleet.recovery(before, at, 2));
    std::this_thread::sleep_for(3s);
    before = fleet.snapshot();
    at = Clock::now();
    fleet.retire(0);
    fleet.retire(2);
    recoveries.push_back(fleet.recovery(before, at, 1));
    return finish(fleet, p, feeder.finish(), std::move(recoveries));
  });
}

TEST_CASE("chaos: all brokers down for a minute then back") {
  run_case("all brokers down", [] {
    const auto p = make_pipeline("blackout");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    Feeder feeder(p.input, 400ms);
    std::this_thread::sleep_for(3s);
    feeder.pause();
    for (int node = 1; node <= 3; ++node) REQUIRE(test::cluster({"node", "stop", std::to_string(node)}) == 0);
    std::this_thread::sleep_for(60s);
    const auto before = fleet.snapshot();
    for (int node = 1; node <= 3; ++node) REQUIRE(test::cluster({"node", "start", std::to_string(node)}) == 0);
    feeder.resume();
    // A service may have given up while no broker answered (exit 1, nothing lost): restarted.
    std::vector<std::chrono::milliseconds> recoveries{fleet.recovery(before, Clock::now())};
    auto outcome = finish(fleet, p, feeder.finish(), std::move(recoveries));
    return outcome;
  });
}

TEST_CASE("chaos: an upstream producer that aborts every third transaction") {
  run_case("upstream aborts", [] {
    const auto p = make_pipeline("upstream");
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    // Transactions of 1000 records, every third aborted, until 100,000 are committed.
    const auto id = test::unique_name("upstream");
    std::string error;
    const auto make = [&] {
      auto producer = kafka::TransactionalProducer::create(
          {{"bootstrap.servers", test::bootstrap()}, {"linger.ms", "5"}}, id, {p.input}, error);
      REQUIRE_MESSAGE(producer, error);
      const auto e = producer->init_transactions(30s);
      REQUIRE_MESSAGE(!e, e.describe());
      return producer;
    };
    auto upstream = make();
    std::uint64_t committed = 0;
    std::uint64_t next = 0;
    int lost = 0;
    for (int t = 0; committed < records_per_run; ++t) {
      REQUIRE(!upstream->begin_transaction());
      for (int r = 0; r < 1000; ++r, ++next) {
        const std::string key = fmt::format("upstream-{}", next);
        const std::string value = fmt::format("{{\"n\":{},\"txn\":{}}}", next, t);
        kafka::ProduceRecord record;
        record.key = key;
        record.value = value;
        const auto e = upstream->produce(record, 30s);
        REQUIRE_MESSAGE(!e, e.describe());
      }
      const bool abort = t % 3 == 2;
      const auto e = abort ? upstream->abort_transaction(30s) : upstream->commit_transaction(30s);
      if (e && e.kind() == kafka::ErrorKind::fatal) {
        // The upstream's own trouble: librdkafka 2.0.2 against this broker often fails the EndTxn
        // of a transaction begun right after an abort (INVALID_TXN_STATE, fatal). A new
        // producer's init aborts whatever that transaction left.
        ++lost;
        upstream = make();
        continue;
      }
      REQUIRE_MESSAGE(!e, e.describe());
      if (!abort) committed += 1000;
    }
    upstream.reset();  // nothing left open
    if (lost > 0) MESSAGE(fmt::format("upstream producer re-created {} time(s)", lost));
    return finish(fleet, p, committed, {});
  });
}

TEST_CASE("chaos: poison records and oversize outputs go to the dead-letter topic once") {
  run_case("poison and oversize", [] {
    // The output topic takes 20 kB: an enriched payment carrying a 50 kB memo is too large.
    const auto p = make_pipeline("poison", "[transform]\nname = \"payment-enricher\"\n", {}, true,
                                 {{"max.message.bytes", "20000"}});
    Fleet fleet(p.dir, p.config, 2);
    fleet.start(0);
    fleet.start(1);
    // 1 in 1,000 is not JSON, or (every tenth of those) a payment too large once enriched.
    std::uint64_t poison = 0;
    std::uint64_t oversize = 0;
    for (std::uint64_t chunk = 0; chunk < 100; ++chunk) {
      test::produce_payments(p.input, chunk * 999, 999);
      const auto partition = static_cast<std::int32_t>(chunk % input_partitions);
      if (chunk % 10 == 9) {
        std::string big = sample::payment_json(1000000 + chunk, 1700000000.0);
        big.insert(big.size() - 1, fmt::format(R"(,"memo":"{}")", std::string(50000, 'x')));
        test::produce_raw(p.input, partition, fmt::format("big-{}", chunk), big);
        ++oversize;
      } else {
        test::produce_raw(p.input, partition, fmt::format("poison-{}", chunk),
                          fmt::format("not json {}", chunk));
        ++poison;
      }
    }
    auto outcome = finish(fleet, p, records_per_run, {});
    CHECK(outcome.report.dead_letters == poison + oversize);
    CHECK(outcome.report.outputs == records_per_run - poison - oversize);
    std::uint64_t too_large = 0;
    for (const auto& letter : test::read_dead_letters(p.dlq)) {
      if (letter.headers.at("exactly.error.class") == "too_large") ++too_large;
    }
    CHECK(too_large == oversize);
    return outcome;
  });
}
