// The judgements of `exactly check`, as pure functions of what was read from the cluster and the
// config, so each threshold is tested without a broker. check.h gathers the facts.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/line.h"
#include "config/config.h"

namespace exactly::check {

// A topic the pipeline uses, as the cluster describes it.
struct TopicFacts {
  std::string role;  // "input", "output", "dead-letter": how messages name it
  std::string name;
  bool exists = false;
  int partitions = 0;
  int replication_factor = 0;
  std::string error;  // set when the topic could not be described at all
};

// Item 1: the topic exists (its partition count), or is missing, or cannot be described.
Line topic_exists(const TopicFacts& topic);

// Item 1: with partitioning = "input", output partition p receives input partition p, so the output
// needs at least as many partitions. Nothing to say for partitioning = "key".
std::optional<Line> partitions_fit(config::Partitioning partitioning, const TopicFacts& input,
                                   const TopicFacts& output);

// Item 2: durability of a topic the service writes. `min_insync` is nullopt when the topic config
// could not be read (`error` says why).
std::vector<Line> durability(const TopicFacts& topic, std::optional<int> min_insync,
                             const std::string& error = {});

// One broker's transaction.max.timeout.ms, or why it is not known.
struct BrokerLimit {
  std::int32_t broker = 0;
  std::optional<std::int64_t> max_timeout_ms;
  std::string error;
};

// Item 3: the coordinator refuses InitProducerId with a transaction.timeout.ms above its
// transaction.max.timeout.ms; any broker may be a transaction coordinator.
std::vector<Line> transaction_timeout_fits(std::chrono::milliseconds timeout,
                                           const std::vector<BrokerLimit>& brokers);

// The consumer's max.poll.interval.ms and where it comes from.
struct MaxPollInterval {
  std::int64_t ms = 300000;
  std::string source = "librdkafka's default";
};

// [librdkafka.consumer] wins over [librdkafka.common] (the consumer applies them in that order).
MaxPollInterval max_poll_interval(const config::Properties& common,
                                  const config::Properties& consumer);

// Item 4: commit_interval_ms and commit_timeout_ms fit in transactions.timeout_ms (the engine's
// start-up rules), and transactions.timeout_ms < max.poll.interval.ms.
std::vector<Line> timing(const config::Config::Transactions& transactions,
                         const MaxPollInterval& max_poll);

// One input partition's ends: the last stable offset (read_committed) and the high watermark.
struct PartitionEnds {
  std::int32_t partition = 0;
  std::int64_t last_stable = 0;
  std::int64_t high_watermark = 0;
};

// Item 5: partitions whose last stable offset is behind the high watermark and did not move
// between two observations `window` apart: an open transaction upstream holds every
// read_committed consumer there. `before` and `after` list the same partitions.
std::vector<Line> stable_offsets(const std::string& topic, const std::vector<PartitionEnds>& before,
                                 const std::vector<PartitionEnds>& after,
                                 std::chrono::milliseconds window);

// Item 6: the quarantine marker topic. `cleanup_policy` is nullopt when it could not be read
// (`error` says why).
Line marker_topic(const config::Config::Quarantine& quarantine, bool exists,
                  const std::optional<std::string>& cleanup_policy, const std::string& error = {});

// What the cluster says of the lineage topic (pipeline.lineage_topic) and the output's retention.
struct LineageTopicFacts {
  TopicFacts topic;
  std::optional<std::int64_t> max_message_bytes;  // nullopt: not read (`config_error` says why)
  std::optional<std::int64_t> retention_ms;       // -1: kept forever
  std::optional<std::string> cleanup_policy;
  std::optional<std::int64_t> output_retention_ms;
  std::string config_error;
};

// Item 8: the lineage topic. It exists (or the service may create it), takes journal records of
// 128 KiB, is not compacted (its records are keyed by transactional.id) and keeps them as long as
// the output keeps the records they name. Nothing to say when the pipeline sets no lineage topic.
std::vector<Line> lineage_topic(const config::Config::Pipeline& pipeline,
                                const LineageTopicFacts& facts);

}  // namespace exactly::check
