#include "check/rules.h"

#include <algorithm>

#include <fmt/format.h>

#include "util/parse_int.h"

namespace exactly::check {
namespace {

// A copy acknowledged by fewer brokers than this is one failure away from loss or unavailability.
constexpr int recommended_replication = 3;
constexpr int recommended_min_insync = 2;

using util::parse_int;

std::string join_ids(const std::vector<std::int32_t>& ids) {
  return fmt::format("{}", fmt::join(ids, ", "));
}

}  // namespace

Line topic_exists(const TopicFacts& topic) {
  if (!topic.error.empty()) {
    return {Status::fail, fmt::format("{} topic '{}' cannot be described: {}", topic.role,
                                      topic.name, topic.error)};
  }
  if (!topic.exists) {
    return {Status::fail, fmt::format("{} topic '{}' does not exist: create it (exactly "
                                      "create-topics, or kafka-topics.sh --create)",
                                      topic.role, topic.name)};
  }
  return {Status::pass, fmt::format("{} topic '{}' exists: {} partition{}", topic.role, topic.name,
                                    topic.partitions, topic.partitions == 1 ? "" : "s")};
}

std::optional<Line> partitions_fit(config::Partitioning partitioning, const TopicFacts& input,
                                   const TopicFacts& output) {
  if (partitioning != config::Partitioning::same_as_input || !input.exists || !output.exists) {
    return std::nullopt;
  }
  if (output.partitions < input.partitions) {
    return Line{
        Status::fail,
        fmt::format("pipeline.partitioning = \"input\" writes input partition p to output "
                    "partition p, but output topic '{}' has {} partitions, fewer than the "
                    "{} of input topic '{}': add output partitions (kafka-topics.sh --alter "
                    "--partitions {}) or use partitioning = \"key\"",
                    output.name, output.partitions, input.partitions, input.name,
                    input.partitions)};
  }
  return Line{Status::pass,
              fmt::format("pipeline.partitioning = \"input\": output topic '{}' has {} partitions, "
                          "input topic '{}' has {}",
                          output.name, output.partitions, input.name, input.partitions)};
}

std::vector<Line> durability(const TopicFacts& topic, std::optional<int> min_insync,
                             const std::string& error) {
  std::vector<Line> lines;
  if (!topic.exists) return lines;
  const int rf = topic.replication_factor;
  if (rf < recommended_replication) {
    lines.push_back(
        {Status::warn, fmt::format("{} topic '{}' has replication factor {}, below {}: losing a "
                                   "broker can make it unavailable or lose committed records",
                                   topic.role, topic.name, rf, recommended_replication)});
  } else {
    lines.push_back({Status::pass, fmt::format("{} topic '{}' has replication factor {}",
                                               topic.role, topic.name, rf)});
  }
  if (!min_insync) {
    lines.push_back(
        {Status::warn, fmt::format("{} topic '{}': cannot read min.insync.replicas: {}", topic.role,
                                   topic.name, error.empty() ? "not reported" : error)});
    return lines;
  }
  const int isr = *min_insync;
  if (isr > rf) {
    // acks=all (which transactions need) is refused while fewer replicas are in sync.
    lines.push_back(
        {Status::fail, fmt::format("{} topic '{}' has min.insync.replicas={} above its replication "
                                   "factor {}: every produce fails with NOT_ENOUGH_REPLICAS; set "
                                   "min.insync.replicas to at most {} or add replicas",
                                   topic.role, topic.name, isr, rf, rf)});
  } else if (isr < recommended_min_insync) {
    lines.push_back({Status::warn,
                     fmt::format("{} topic '{}' has min.insync.replicas={}, below {}: a committed "
                                 "record may exist on one broker only",
                                 topic.role, topic.name, isr, recommended_min_insync)});
  } else if (isr == rf) {
    lines.push_back({Status::warn,
                     fmt::format("{} topic '{}' has min.insync.replicas={} equal to its "
                                 "replication factor: one broker down stops every produce; keep it "
                                 "below the replication factor (3 replicas with "
                                 "min.insync.replicas=2)",
                                 topic.role, topic.name, isr)});
  } else {
    lines.push_back({Status::pass,
                     fmt::format("{} topic '{}' has min.insync.replicas={} (replication factor {})",
                                 topic.role, topic.name, isr, rf)});
  }
  return lines;
}

std::vector<Line> transaction_timeout_fits(std::chrono::milliseconds timeout,
                                           const std::vector<BrokerLimit>& brokers) {
  std::vector<Line> lines;
  std::vector<std::int32_t> fine;
  std::int64_t smallest = -1;
  for (const auto& b : brokers) {
    if (!b.max_timeout_ms) {
      lines.push_back(
          {Status::warn,
           fmt::format("broker {}: cannot read transaction.max.timeout.ms ({}); it "
                       "must be at least transactions.timeout_ms = {}",
                       b.broker, b.error.empty() ? "not reported" : b.error, timeout.count())});
    } else if (*b.max_timeout_ms < timeout.count()) {
      lines.push_back(
          {Status::fail,
           fmt::format("broker {} has transaction.max.timeout.ms={}, below "
                       "transactions.timeout_ms = {}: it refuses InitProducerId "
                       "(INVALID_TRANSACTION_TIMEOUT); set transactions.timeout_ms to "
                       "at most {} or raise the brokers' transaction.max.timeout.ms",
                       b.broker, *b.max_timeout_ms, timeout.count(), *b.max_timeout_ms)});
    } else {
      fine.push_back(b.broker);
      smallest = smallest < 0 ? *b.max_timeout_ms : std::min(smallest, *b.max_timeout_ms);
    }
  }
  if (!fine.empty()) {
    lines.push_back(
        {Status::pass, fmt::format("broker{} {}: transaction.max.timeout.ms={}{} >= "
                                   "transactions.timeout_ms = {}",
                                   fine.size() == 1 ? "" : "s", join_ids(fine), smallest,
                                   fine.size() == 1 ? "" : " or more", timeout.count())});
  }
  if (brokers.empty()) {
    lines.push_back({Status::warn,
                     "no broker in the cluster metadata: transaction.max.timeout.ms "
                     "not checked"});
  }
  return lines;
}

MaxPollInterval max_poll_interval(const config::Properties& common,
                                  const config::Properties& consumer) {
  MaxPollInterval result;
  const auto take = [&](const config::Properties& props, const char* table) {
    for (const auto& [name, value] : props) {
      if (name != "max.poll.interval.ms") continue;
      if (const auto ms = parse_int(value)) {
        result.ms = *ms;
        result.source = fmt::format("[{}]", table);
      }
    }
  };
  take(common, "librdkafka.common");
  take(consumer, "librdkafka.consumer");
  return result;
}

std::vector<Line> timing(const config::Config::Transactions& transactions,
                         const MaxPollInterval& max_poll) {
  std::vector<Line> lines;
  const auto interval = transactions.commit_interval.count();
  const auto timeout = transactions.timeout.count();
  const auto commit_timeout = transactions.commit_timeout.count();
  // The engine's start-up rules (engine::check_limits): the watchdog aborts a transaction at 80%
  // of the timeout, so a transaction open for a whole interval must still leave room to commit.
  if (interval <= 0 || interval * 2 > timeout) {
    lines.push_back({Status::fail,
                     fmt::format("transactions.commit_interval_ms = {} does not fit in "
                                 "transactions.timeout_ms = {}: it must be positive and at most "
                                 "half of it (the watchdog aborts at 80%); the service refuses to "
                                 "start",
                                 interval, timeout)});
  } else {
    lines.push_back(
        {Status::pass, fmt::format("transactions.commit_interval_ms = {} is at most half of "
                                   "transactions.timeout_ms = {}",
                                   interval, timeout)});
  }
  if (commit_timeout * 2 > timeout) {
    lines.push_back({Status::fail,
                     fmt::format("transactions.commit_timeout_ms = {} must be at most half of "
                                 "transactions.timeout_ms = {}, so a commit ends before the broker "
                                 "expires the transaction; the service refuses to start",
                                 commit_timeout, timeout)});
  }
  if (timeout >= max_poll.ms) {
    // A transaction may then stay open after the group has declared the member gone and handed
    // its partitions to another member.
    lines.push_back(
        {Status::fail, fmt::format("transactions.timeout_ms = {} is not below the consumer's "
                                   "max.poll.interval.ms = {} ({}): a transaction can outlive the "
                                   "member's place in the group; raise max.poll.interval.ms above "
                                   "{} in [librdkafka.consumer] or lower transactions.timeout_ms",
                                   timeout, max_poll.ms, max_poll.source, timeout)});
  } else {
    lines.push_back(
        {Status::pass, fmt::format("transactions.timeout_ms = {} is below the consumer's "
                                   "max.poll.interval.ms = {} ({})",
                                   timeout, max_poll.ms, max_poll.source)});
  }
  return lines;
}

std::vector<Line> stable_offsets(const std::string& topic, const std::vector<PartitionEnds>& before,
                                 const std::vector<PartitionEnds>& after,
                                 std::chrono::milliseconds window) {
  std::vector<Line> lines;
  for (const auto& now : after) {
    const auto then = std::find_if(before.begin(), before.end(), [&](const PartitionEnds& e) {
      return e.partition == now.partition;
    });
    if (then == before.end()) continue;
    if (now.last_stable < now.high_watermark && now.last_stable == then->last_stable) {
      lines.push_back(
          {Status::warn,
           fmt::format("input topic '{}' [{}]: last stable offset {} is behind the high watermark "
                       "{} and did not move in {} ms: an open upstream transaction holds every "
                       "read_committed consumer (this service too) at offset {} until its "
                       "producer commits or aborts, or its transaction.timeout.ms expires",
                       topic, now.partition, now.last_stable, now.high_watermark, window.count(),
                       now.last_stable)});
    }
  }
  if (lines.empty()) {
    lines.push_back(
        {Status::pass, fmt::format("input topic '{}': no partition's last stable offset is held "
                                   "behind its high watermark (watched {} ms)",
                                   topic, window.count())});
  }
  return lines;
}

Line marker_topic(const config::Config::Quarantine& quarantine, bool exists,
                  const std::optional<std::string>& cleanup_policy, const std::string& error) {
  const std::string& topic = quarantine.topic;
  if (!quarantine.enabled) {
    return {Status::pass, "quarantine.enabled = false: no marker topic needed"};
  }
  if (!exists) {
    return {Status::warn,
            fmt::format("quarantine marker topic '{}' does not exist: the service creates it at "
                        "start-up (cleanup.policy=compact), which needs permission to create "
                        "topics; or create it yourself",
                        topic)};
  }
  if (!cleanup_policy) {
    return {Status::warn,
            fmt::format("quarantine marker topic '{}': cannot read cleanup.policy: {}", topic,
                        error.empty() ? "not reported" : error)};
  }
  if (cleanup_policy->find("compact") == std::string::npos) {
    return {Status::warn,
            fmt::format("quarantine marker topic '{}' has cleanup.policy={}: markers older than "
                        "its retention are lost; set cleanup.policy=compact",
                        topic, *cleanup_policy)};
  }
  return {Status::pass, fmt::format("quarantine marker topic '{}' exists with cleanup.policy={}",
                                    topic, *cleanup_policy)};
}

std::vector<Line> lineage_topic(const config::Config::Pipeline& pipeline,
                                const LineageTopicFacts& facts) {
  std::vector<Line> lines;
  if (pipeline.lineage_topic.empty()) return lines;
  const std::string& topic = pipeline.lineage_topic;
  if (!facts.topic.error.empty()) {
    lines.push_back({Status::warn, fmt::format("lineage topic '{}' cannot be described: {}", topic,
                                               facts.topic.error)});
    return lines;
  }
  if (!facts.topic.exists) {
    lines.push_back(
        {Status::warn,
         fmt::format("lineage topic '{}' does not exist: the service creates it at start-up (as "
                     "many partitions as the output, the output's retention.ms), which needs "
                     "permission to create topics; or create it yourself (exactly create-topics)",
                     topic)});
    return lines;
  }
  if (!facts.config_error.empty()) {
    lines.push_back({Status::warn, fmt::format("lineage topic '{}': cannot read its config: {}",
                                               topic, facts.config_error)});
    return lines;
  }
  constexpr std::int64_t journal_record = 128 * 1024;  // lineage/journal.h
  bool fine = true;
  if (facts.max_message_bytes && *facts.max_message_bytes < journal_record) {
    fine = false;
    lines.push_back(
        {Status::fail,
         fmt::format("lineage topic '{}' has max.message.bytes={}: its journal records need {}, "
                     "and the service refuses to start; raise it (kafka-configs.sh --alter "
                     "--add-config max.message.bytes={})",
                     topic, *facts.max_message_bytes, journal_record, journal_record)});
  }
  if (facts.cleanup_policy && facts.cleanup_policy->find("compact") != std::string::npos) {
    fine = false;
    lines.push_back(
        {Status::warn,
         fmt::format("lineage topic '{}' has cleanup.policy={}: compaction keeps only each "
                     "producer's last journal record (they are keyed by transactional.id), so "
                     "exactly verify counts the outputs of the others no_lineage; set "
                     "cleanup.policy=delete",
                     topic, *facts.cleanup_policy)});
  }
  const auto forever = [](std::optional<std::int64_t> ms) { return ms && *ms < 0; };
  const auto shown = [](std::optional<std::int64_t> ms) {
    return !ms ? std::string{"unknown"} : *ms < 0 ? std::string{"-1 (forever)"} : std::to_string(*ms);
  };
  if (facts.retention_ms && facts.output_retention_ms && !forever(facts.retention_ms) &&
      (forever(facts.output_retention_ms) || *facts.retention_ms < *facts.output_retention_ms)) {
    fine = false;
    lines.push_back(
        {Status::warn,
         fmt::format("lineage topic '{}' keeps records {} ms, the output topic '{}' {}: journal "
                     "records are deleted before the outputs they name, and exactly verify counts "
                     "those outputs no_lineage; give it the output's retention.ms",
                     topic, *facts.retention_ms, pipeline.output_topic,
                     shown(facts.output_retention_ms))});
  }
  if (fine) {
    lines.push_back(
        {Status::pass,
         fmt::format("lineage topic '{}' exists: {} partition{}, max.message.bytes={}, "
                     "retention.ms={} (the output's {})",
                     topic, facts.topic.partitions, facts.topic.partitions == 1 ? "" : "s",
                     facts.max_message_bytes ? std::to_string(*facts.max_message_bytes)
                                             : std::string{"unknown"},
                     shown(facts.retention_ms), shown(facts.output_retention_ms))});
  }
  return lines;
}

}  // namespace exactly::check
