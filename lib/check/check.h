// `exactly check`: the pipeline's config held against the live cluster, as a checklist of pass,
// warn and fail lines (the judgements are in rules.h and acl.h; this reads the facts).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/line.h"
#include "config/config.h"

namespace exactly::check {

struct Options {
  // Item 5 reads every input partition's last stable offset twice, this far apart.
  std::chrono::milliseconds lso_window{3000};
  // Bounds each request to the cluster, the first one (is it reachable?) included.
  std::chrono::milliseconds request_timeout{10000};
};

struct Result {
  std::vector<Line> lines;
  // Set when nothing could be checked against the cluster: no client could be made, or the
  // cluster did not answer within the request timeout.
  std::optional<std::string> error;

  [[nodiscard]] bool failed() const { return error.has_value() || any_failed(lines); }
};

// Called with each line as soon as it is known (the observation window takes a while).
using LineSink = std::function<void(const Line&)>;

// Every item:
//   1. input, output and dead-letter topics exist; partition counts fit partitioning = "input"
//   2. replication factor and min.insync.replicas of the topics the service writes
//   3. the brokers' transaction.max.timeout.ms >= transactions.timeout_ms
//   4. commit_interval_ms and commit_timeout_ms fit in transactions.timeout_ms, which is below
//      the consumer's max.poll.interval.ms
//   5. input partitions held by an open upstream transaction
//   6. the quarantine marker topic
//   7. ACLs
Result check_all(const config::Config& config, const Options& options, const LineSink& sink = {});

// Items 1, 3 and 4: what makes the service fail at once or at its first transaction. `run` calls
// this before the engine starts.
Result check_startup(const config::Config& config, const Options& options);

}  // namespace exactly::check
