// What the integration tests share: the test cluster, fresh topics, sample input, the service as
// a child process, and the read_committed audit.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "verify/audit.h"

namespace exactly::test {

std::string bootstrap();

// Config for tests whose service dies without leaving the group: a dead member leaves after 2 s
// instead of librdkafka's default 45 s (the test cluster allows sessions from 1 s).
inline constexpr const char* fast_group = R"(
[librdkafka.consumer]
"session.timeout.ms" = 2000
"heartbeat.interval.ms" = 300
)";

// Runs `cluster.sh ARGS... --dir <the test cluster>` (e.g. {"node", "pause", "1"}); its exit code.
int cluster(const std::vector<std::string>& args);

// Waits until the cluster's metadata no longer lists broker `node` (the controller fences a broker
// whose heartbeats stopped, and moves its leaderships away); whether it did within `timeout`.
bool wait_until_fenced(int node, std::chrono::seconds timeout);

// A name no earlier run used: prefix-<pid>-<counter>-<random>.
std::string unique_name(const std::string& prefix);

// A fresh folder for one test's files.
std::filesystem::path temp_dir(const std::string& name);

void create_topic(const std::string& name, int partitions,
                  const std::map<std::string, std::string>& configs = {});

// Writes payment events [start, start + count) to `topic` (keys are the payment ids).
void produce_payments(const std::string& topic, std::uint64_t start, std::uint64_t count);

// Writes one record with this value (and key) to a partition of `topic`.
void produce_raw(const std::string& topic, std::int32_t partition, const std::string& key,
                 const std::string& value,
                 const std::vector<std::pair<std::string, std::string>>& headers = {});
// Produces `records` (key, value) to `partition` of `topic` in one transaction of a fresh
// transactional producer, and commits it: a transaction marker follows the last record.
void produce_transaction(const std::string& topic, std::int32_t partition,
                         const std::vector<std::pair<std::string, std::string>>& records);

// A config file for a pipeline between the two topics; `extra` is appended TOML, and
// `pipeline_keys` are more lines of the [pipeline] table.
std::filesystem::path write_config(const std::filesystem::path& dir, const std::string& input,
                                   const std::string& output, const std::string& group,
                                   const std::string& extra = {},
                                   const std::string& pipeline_keys = {});

// Sets a config written by write_config to log at debug level (each attempt opened and committed).
void debug_log(const std::filesystem::path& config);

config::Config load(const std::filesystem::path& file);

// Every later audit of `output` reads the outputs' lineage from the journal in `lineage_topic`
// (pipeline.lineage_topic).
void set_lineage_topic(const std::string& output, const std::string& lineage_topic);

// `aborted_attempts`: ids the service logged as aborted (an output of one is an aborted read);
// `read_uncommitted`: audit what a read_uncommitted reader sees (to prove that check finds some).
verify::Report audit(const std::string& input, const std::string& output,
                     const std::string& dlq = {}, const std::vector<std::string>& aborted_attempts = {},
                     bool read_uncommitted = false);

// Audits until every input has an output (or `timeout`); returns the last report.
// `between` runs after every read that is not settled yet (a fleet restarting the services that
// exited on their own, say).
verify::Report wait_for_outputs(const std::string& input, const std::string& output,
                                std::uint64_t expected, std::chrono::seconds timeout,
                                const std::string& dlq = {},
                                const std::function<void()>& between = {});

struct DeadLetter {
  std::int32_t partition = 0;  // of the input record (exactly.error.partition)
  std::int64_t offset = 0;     // of the input record (exactly.error.offset)
  std::optional<std::string> key;
  std::string value;
  std::map<std::string, std::string> headers;
};

// Every dead letter of `dlq`, read_committed.
std::vector<DeadLetter> read_dead_letters(const std::string& dlq);

// `exactly run --config FILE` as a child process, its stderr in a log file.
class Service {
 public:
  Service(std::filesystem::path config, std::filesystem::path log);
  ~Service();  // SIGKILLs a still-running child
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  void start();
  // NAME=VALUE added to the environment of every later start (e.g. credentials for ${VAR}).
  void set_env(const std::string& name, const std::string& value);
  // Another program (e.g. Prometheus) as the child, its output in the same log.
  void start_program(const std::string& binary, const std::vector<std::string>& args);
  // `exactly ARGS...` run to completion; its exit code. The output goes to the log.
  int run_to_end(const std::vector<std::string>& args, std::chrono::seconds timeout);
  void signal(int signo);
  // Waits for the exit; its code, or nullopt on timeout. -signo when killed by a signal.
  std::optional<int> wait(std::chrono::seconds timeout);
  [[nodiscard]] bool running();
  [[nodiscard]] std::string log_text() const;
  // Waits until the log contains `needle` at least `count` times (or the child exits, or the
  // timeout passes). The log accumulates over restarts.
  bool wait_for_log(const std::string& needle, std::chrono::seconds timeout, int count = 1);
  [[nodiscard]] int log_count(const std::string& needle) const;

 private:
  std::filesystem::path config_;
  std::filesystem::path log_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;  // set when the child was reaped
  std::vector<std::string> env_;  // NAME=VALUE, added to the parent's environment
  void reaped(int status);
  void spawn(const std::vector<std::string>& args);
};

// The sum of the offsets `group` committed on `topic`'s partitions [0, partitions) (0 where none
// is), on the test cluster.
std::int64_t committed_sum(const std::string& group, const std::string& topic, int partitions);

// The metrics port of the service's latest start: the N of the last "/readyz on ... (port N)" in
// its log; 0 when it has logged none.
int metrics_port(const std::string& log);

// The sum of every sample of `name` (any labels) in a Prometheus text exposition; -1 if none.
double metric_sum(const std::string& text, const std::string& name);

// Points a config written by write_config at another cluster: its bootstrap_servers become
// `bootstrap`.
void retarget(const std::filesystem::path& config, const std::string& bootstrap);

// A single-node cluster of a test's own (beside the shared test cluster), started by cluster.sh
// with `start_args` (e.g. "--property K=V ...") and stopped when it goes out of scope. Its client
// port is `port` (PLAINTEXT, for the test's own admin work) and its controller's port + 100.
class OwnCluster {
 public:
  OwnCluster(int port, const std::string& name, const std::string& start_args);
  ~OwnCluster();
  OwnCluster(const OwnCluster&) = delete;
  OwnCluster& operator=(const OwnCluster&) = delete;

  [[nodiscard]] std::string bootstrap() const;
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // A Kafka tool class with these (shell) arguments against this cluster; its exit code.
  int tool(const std::string& tool_class, const std::string& args) const;
  // Creates a topic through the PLAINTEXT port.
  void create(const std::string& topic, int partitions = 1,
              const std::map<std::string, std::string>& configs = {}) const;

 private:
  int port_;
  std::filesystem::path dir_;
};

// The port of an own cluster: the environment variable if set (to move it off a busy port), else
// the default.
int port_from_env(const char* variable, int fallback);

}  // namespace exactly::test
