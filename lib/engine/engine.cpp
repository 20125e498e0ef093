#include "engine/engine.h"

#include <algorithm>
#include <future>
#include <optional>
#include <random>
#include <ranges>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "engine/lineage.h"
#include "exactly/version.h"
#include "kafka/admin.h"
#include "kafka/client_errors.h"
#include "kafka/group_metadata.h"
#include "kafka/topic_reader.h"
#include "util/parse_int.h"

namespace exactly::engine {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto poll_timeout = 100ms;
// While a commit runs on its own thread: the loop looks for its end this often when idle.
constexpr auto pending_poll_timeout = 1ms;
// Records of one partition held while its commit runs (their count and key and value bytes);
// past either, the loop waits for the commit.
constexpr std::size_t held_limit = 10000;
constexpr std::size_t held_bytes_limit = 2 << 20;
constexpr auto report_interval = 10s;

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  return std::max(0ms, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

// The time a single call may take: its own bound, or what is left of the deadline.
std::chrono::milliseconds bound(std::chrono::milliseconds call, Clock::time_point deadline) {
  return std::min(call, left_until(deadline));
}

// Between two tries of a call that failed retriably: never a busy loop.
void retry_pause(Clock::time_point deadline) {
  std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(50ms, left_until(deadline)));
}

void append(kafka::Properties& to, const kafka::Properties& from) {
  to.insert(to.end(), from.begin(), from.end());
}

ops::ErrorKind kind_of(const kafka::Error& e) {
  if (e.fenced()) return ops::ErrorKind::fenced;
  switch (e.kind()) {
    case kafka::ErrorKind::retriable: return ops::ErrorKind::retriable;
    case kafka::ErrorKind::abortable: return ops::ErrorKind::abortable;
    case kafka::ErrorKind::fatal: return ops::ErrorKind::fatal;
    default: return ops::ErrorKind::other;
  }
}

ops::Observer make_observer(std::optional<ops::Observer> given,
                            std::unique_ptr<ops::Metrics>& own_metrics,
                            std::unique_ptr<ops::Health>& own_health,
                            const config::Config& config) {
  if (given) return *given;
  own_metrics = std::make_unique<ops::Metrics>();
  own_health = std::make_unique<ops::Health>(config.health.stalled_after,
                                             config.health.commit_age, Clock::now());
  return ops::Observer{*own_metrics, *own_health};
}

}  // namespace

std::string transactional_id(const std::string& prefix, const std::string& input_topic,
                             std::int32_t partition) {
  return fmt::format("{}.{}.{}", prefix, input_topic, partition);
}

std::string instance_transactional_id(const std::string& prefix, const std::string& input_topic,
                                      const std::string& group_instance_id, std::uint32_t tag) {
  if (!group_instance_id.empty()) return fmt::format("{}.{}.{}", prefix, input_topic, group_instance_id);
  return fmt::format("{}.{}.instance-{:08x}", prefix, input_topic, tag);
}

std::string consumer_failure(std::string_view described) {
  // librdkafka 2.0.2 makes FENCED_INSTANCE_ID fatal also when the member that fenced this one is
  // itself: its rejoin after a session that timed out on a slow coordinator
  // (confluentinc/librdkafka#3437).
  if (described.find("same group.instance.id") != std::string_view::npos) {
    return fmt::format(
        "the consumer was fenced by its group.instance.id: another consumer joined the group with "
        "this instance's id, or this instance itself rejoined after its session timed out on a slow "
        "coordinator (librdkafka 2.0.2 makes both fatal). A restart rejoins with the same id and "
        "takes its partitions back; two instances given one id fence each other until one is "
        "given another. ({})",
        described);
  }
  return fmt::format("the consumer failed: {}", described);
}

// The bound on one fetch response, unless the user sets fetch.max.bytes: 8 MiB, adjusted as
// librdkafka adjusts its own default (at most queued.max.messages.kbytes, at least
// message.max.bytes, which it otherwise refuses), from the user's values of those.
std::string fetch_bound(const config::Config& config) {
  std::int64_t message_max = 1000000;  // librdkafka's default message.max.bytes
  std::optional<std::int64_t> queue_kbytes;
  for (const kafka::Properties* table : {&config.librdkafka_common, &config.librdkafka_consumer}) {
    for (const auto& [name, value] : *table) {
      if (name == "message.max.bytes") {
        message_max = util::parse_int(value).value_or(message_max);
      } else if (name == "queued.max.messages.kbytes") {
        queue_kbytes = util::parse_int(value);
      }
    }
  }
  std::int64_t bound = std::int64_t{8} << 20;
  if (queue_kbytes) bound = std::min(bound, *queue_kbytes * 1024);
  return std::to_string(std::max(bound, message_max));
}

kafka::Properties consumer_properties(const config::Config& config) {
  kafka::Properties props{
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"client.id", config.kafka.client_id},
      {"group.id", config.pipeline.group_id},
      // Never skip input silently: a group without committed offsets starts at the beginning.
      {"auto.offset.reset", "earliest"},
      // Eager protocols only (DESIGN.md item 7): cooperative-sticky is unsafe in librdkafka 2.0.2.
      {"partition.assignment.strategy", "range,roundrobin"},
      // Lag and the last stable offset of each partition come from librdkafka's statistics.
      {"statistics.interval.ms", "5000"},
      // The prefetch queue bounds memory; the fetch waker keeps it from costing throughput.
      // Measured with bench/tune.py (README, "Tuning"): 10,000 gives the default's throughput or
      // more at 60 MiB peak RSS instead of 100. librdkafka counts it over the whole consumer
      // queue, not per partition.
      {"queued.min.messages", "10000"},
      // One fetch response lands in that queue whole, up to max.partition.fetch.bytes (1 MiB) per
      // partition: at 32 partitions 32 MiB at a time, and peak RSS of 185-314 MiB. 8 MiB per
      // response (one broker's partitions) gave 106-128 MiB at 32 at the same throughput, and
      // changes nothing up to 8 partitions. Smaller bounds measured slower at 6 partitions (4 MiB:
      // 461k, 3 MiB: 568k, against 642k records/s; results/bench/fetch).
      {"fetch.max.bytes", fetch_bound(config)},
  };
  append(props, config.librdkafka_common);
  append(props, config.librdkafka_consumer);
  return props;
}

kafka::Properties producer_properties(const config::Config& config) {
  kafka::Properties props{
      {"bootstrap.servers", config.kafka.bootstrap_servers},
      {"client.id", config.kafka.client_id},
      {"transaction.timeout.ms", std::to_string(config.transactions.timeout.count())},
      // The Java client's partitioner, so a key lands where other producers put it.
      {"partitioner", "murmur2_random"},
      {"linger.ms", "5"},
      // Right after a commit the broker may still be writing markers; the next transaction's first
      // request then gets CONCURRENT_TRANSACTIONS and waits this long (100 ms by default, as long
      // as a whole default commit interval).
      {"retry.backoff.ms", "20"},
      // Retries and requests in flight come from librdkafka's statistics.
      {"statistics.interval.ms", "5000"},
  };
  append(props, config.librdkafka_common);
  append(props, config.librdkafka_producer);
  return props;
}

template <class Call>
kafka::Error Engine::retrying(Call call, Clock::time_point deadline) {
  for (;;) {
    kafka::Error e = call(bound(config_.transactions.commit_timeout, deadline));
    if (e.kind() != kafka::ErrorKind::retriable || Clock::now() >= deadline || hard_stop()) {
      return e;
    }
    observer_.metrics.error(ops::ErrorKind::retriable, ops::ErrorAction::retry);
    retry_pause(deadline);
  }
}

Engine::Engine(const config::Config& config, transforms::Transform& transform,
               std::string transform_version, std::optional<ops::Observer> observer)
    : config_(config),
      transform_(transform),
      observer_(make_observer(observer, own_metrics_, own_health_, config)),
      transform_version_(transform_version.empty() ? std::string{exactly::version}
                                                   : std::move(transform_version)),
      limits_{config.transactions.commit_interval, config.transactions.max_records,
              config.transactions.max_bytes, config.transactions.timeout},
      producer_properties_(producer_properties(config)) {
  std::random_device random;
  instance_tag_ = random();
  if (config.pipeline.producer_scope == config::ProducerScope::instance) {
    instance_scope_ = true;
    // The consumer's group.instance.id, as the consumer gets it (the last setting wins).
    std::string member;
    for (const auto& [key, value] : consumer_properties(config)) {
      if (key == "group.instance.id") member = value;
    }
    instance_id_ = instance_transactional_id(config.pipeline.transactional_id_prefix,
                                             config.pipeline.input_topic, member, instance_tag_);
  }
  async_commits_ = !instance_scope_ && config.pipeline.delivery == config::Delivery::exactly_once;
}

std::vector<std::string> Engine::aborted_attempts() const {
  const std::lock_guard lock(aborted_mutex_);
  return {aborted_attempts_.begin(), aborted_attempts_.end()};
}

void Engine::note_aborted(const Partition& p, const char* why) {
  spdlog::info("{}: aborted attempt {}, offsets [{}, {}) ({})",
               p.producer ? p.producer->transactional_id() : std::string{"?"}, p.attempt,
               p.range_start, p.position, why);
  const std::lock_guard lock(aborted_mutex_);
  // In instance scope the partitions of one transaction share its attempt id: kept once.
  if (!aborted_attempts_.empty() && aborted_attempts_.back() == p.attempt) return;
  aborted_attempts_.push_back(p.attempt);
  if (aborted_attempts_.size() > 100000) aborted_attempts_.pop_front();
}

Engine::~Engine() {
  // Producers first: they may hold transactions that must not be committed by accident (they are
  // not; destroying a producer with an open transaction leaves it to the broker's timeout, and
  // the next owner's init_transactions aborts it).
  partitions_.clear();
  instance_producer_.reset();
  consumer_.reset();
}

void Engine::fail(std::string message, int code) {
  if (!stop_code_) {
    spdlog::error("{}", message);
    observer_.health.set_fatal(message);
    observer_.metrics.error(ops::ErrorKind::other, ops::ErrorAction::stop);
    stop_code_ = code;
    stop_reason_ = std::move(message);
  }
}

int Engine::startup_checks() {
  if (auto problem = check_limits(limits_)) {
    spdlog::error("refusing to start: {}", *problem);
    return exit_config;
  }
  if (instance_scope_ && config_.quarantine.enabled) {
    // The config loader refuses this too; a config built in code gets here.
    spdlog::error("refusing to start: producer_scope \"instance\" does not support the "
                  "crash-loop quarantine; set quarantine.enabled = false");
    return exit_config;
  }
  if (config_.transactions.commit_timeout * 2 > config_.transactions.timeout) {
    spdlog::error(
        "refusing to start: transactions.commit_timeout_ms ({} ms) must be at most half of "
        "transactions.timeout_ms ({} ms), so a commit can finish before the broker expires the "
        "transaction",
        config_.transactions.commit_timeout.count(), config_.transactions.timeout.count());
    return exit_config;
  }
  int input_partitions = 0;
  if (auto e = consumer_->partition_count(config_.pipeline.input_topic, input_partitions, 10s)) {
    spdlog::error("refusing to start: input topic '{}': {}", config_.pipeline.input_topic,
                  e.describe());
    return exit_config;
  }
  if (auto e = consumer_->partition_count(config_.pipeline.output_topic, output_partitions_, 10s)) {
    spdlog::error("refusing to start: output topic '{}': {}", config_.pipeline.output_topic,
                  e.describe());
    return exit_config;
  }
  if (config_.pipeline.partitioning == config::Partitioning::same_as_input &&
      output_partitions_ < input_partitions) {
    spdlog::error(
        "refusing to start: pipeline.partitioning = \"input\" needs the output topic '{}' to have "
        "at least as many partitions as the input topic '{}' ({} < {})",
        config_.pipeline.output_topic, config_.pipeline.input_topic, output_partitions_,
        input_partitions);
    return exit_config;
  }
  spdlog::info("input '{}' has {} partitions, output '{}' has {}", config_.pipeline.input_topic,
               input_partitions, config_.pipeline.output_topic, output_partitions_);
  producer_topics_ = {config_.pipeline.output_topic};
  if (config_.pipeline.on_error == config::OnError::dlq) {
    int dlq_partitions = 0;
    if (auto e = consumer_->partition_count(config_.pipeline.dlq_topic, dlq_partitions, 10s)) {
      spdlog::error("refusing to start: dead-letter topic '{}': {}", config_.pipeline.dlq_topic,
                    e.describe());
      return exit_config;
    }
    producer_topics_.push_back(config_.pipeline.dlq_topic);
  }

  if (config_.quarantine.enabled) {
    if (int code = ensure_marker_topic(); code != exit_ok) return code;
    marker_topic_ = producer_topics_.size();
    producer_topics_.push_back(config_.quarantine.topic);
  }
  if (!config_.pipeline.lineage_topic.empty()) {
    if (int code = ensure_lineage_topic(); code != exit_ok) return code;
    lineage_topic_ = producer_topics_.size();
    producer_topics_.push_back(config_.pipeline.lineage_topic);
  }

  // A record larger than the output topic takes would fail inside the transaction, abortably,
  // and fail again on every retry. Read the limit now; the producer builds batches no larger, and
  // a larger output goes to the failure policy with error class too_large.
  const kafka::Properties admin = admin_properties();
  const auto topic_limit = [&](const std::string& topic, std::int64_t& limit) {
    std::map<std::string, std::string> topic_config;
    if (auto e = kafka::describe_topic_config(admin, topic, topic_config, 10s)) {
      spdlog::error("refusing to start: cannot read the config of topic '{}': {}", topic,
                    e.describe());
      return false;
    }
    if (const auto it = topic_config.find("max.message.bytes"); it != topic_config.end()) {
      limit = std::min<std::int64_t>(limit, std::stoll(it->second));
    }
    return true;
  };
  std::int64_t producer_limit = 1000000;  // librdkafka's default message.max.bytes
  for (const auto& [name, value] : producer_properties_) {
    if (name == "message.max.bytes") producer_limit = std::stoll(value);
  }
  output_limit_ = producer_limit;
  dlq_limit_ = producer_limit;
  if (!topic_limit(config_.pipeline.output_topic, output_limit_)) return exit_config;
  lineage_limit_ = producer_limit;
  if (lineage_topic_ != 0 && !topic_limit(config_.pipeline.lineage_topic, lineage_limit_)) {
    return exit_config;
  }
  // A journal record holds whole runs of at most 64 KiB (lineage/journal.h).
  if (lineage_topic_ != 0 && lineage_limit_ < 128 * 1024) {
    spdlog::error("refusing to start: records for the lineage topic '{}' may be at most {} bytes "
                  "(the smaller of its max.message.bytes and the producer's message.max.bytes); "
                  "its journal records need 131072",
                  config_.pipeline.lineage_topic, lineage_limit_);
    return exit_config;
  }
  if (config_.pipeline.on_error == config::OnError::dlq &&
      !topic_limit(config_.pipeline.dlq_topic, dlq_limit_)) {
    return exit_config;
  }
  // The broker judges a whole record batch against max.message.bytes: batches stay below the
  // smaller topic limit, while a single record may be as large as its own topic takes.
  std::int64_t smaller = config_.pipeline.on_error == config::OnError::dlq
                             ? std::min(output_limit_, dlq_limit_)
                             : output_limit_;
  // Journal records go to one partition back to back: their batches too.
  if (lineage_topic_ != 0) smaller = std::min(smaller, lineage_limit_);
  if (smaller < producer_limit) {
    producer_properties_.emplace_back("batch.size", std::to_string(std::max<std::int64_t>(smaller - 512, 1)));
  }
  spdlog::info("outputs larger than {} bytes are {}", output_limit_,
               config_.pipeline.on_error == config::OnError::dlq    ? "dead-lettered (too_large)"
               : config_.pipeline.on_error == config::OnError::skip ? "skipped (too_large)"
                                                                    : "a failure (too_large)");
  return exit_ok;
}

kafka::Properties Engine::admin_properties() const {
  kafka::Properties admin{{"bootstrap.servers", config_.kafka.bootstrap_servers}};
  admin.insert(admin.end(), config_.librdkafka_common.begin(), config_.librdkafka_common.end());
  return admin;
}

int Engine::ensure_marker_topic() {
  const std::string& topic = config_.quarantine.topic;
  const kafka::Properties admin = admin_properties();
  int partitions = 0;
  if (consumer_->partition_count(topic, partitions, 10s)) {
    // Missing (or not yet visible): create it; another instance may be doing the same.
    const kafka::NewTopic marker_topic{
        .name = topic,
        .partitions = 1,
        .replication_factor = -1,
        // Compaction keeps the last marker per transactional.id; short segments let it run.
        .configs = {{"cleanup.policy", "compact"}, {"segment.ms", "3600000"}},
    };
    if (auto e = kafka::create_topics(admin, {marker_topic}, true, 30s)) {
      spdlog::error("refusing to start: the quarantine marker topic '{}' does not exist and "
                    "cannot be created ({}); create it (cleanup.policy=compact) or set "
                    "quarantine.enabled = false",
                    topic, e.describe());
      return exit_config;
    }
    spdlog::info("created the quarantine marker topic '{}'", topic);
    return exit_ok;
  }
  std::map<std::string, std::string> topic_config;
  if (!kafka::describe_topic_config(admin, topic, topic_config, 10s)) {
    const auto policy = topic_config.find("cleanup.policy");
    if (policy != topic_config.end() && policy->second.find("compact") == std::string::npos) {
      spdlog::warn("the quarantine marker topic '{}' has cleanup.policy={}: markers older than "
                   "its retention are lost; cleanup.policy=compact keeps the last one per "
                   "partition",
                   topic, policy->second);
    }
  }
  return exit_ok;
}

int Engine::ensure_lineage_topic() {
  const std::string& topic = config_.pipeline.lineage_topic;
  int partitions = 0;
  if (!consumer_->partition_count(topic, partitions, 10s)) return exit_ok;
  // Missing (or not yet visible): create it; another instance may be doing the same.
  const kafka::Properties admin = admin_properties();
  // Journal records must live as long as the outputs they name: the output's retention.
  std::map<std::string, std::string> configs;
  std::map<std::string, std::string> output_config;
  if (!kafka::describe_topic_config(admin, config_.pipeline.output_topic, output_config, 10s)) {
    if (const auto it = output_config.find("retention.ms"); it != output_config.end()) {
      configs.emplace("retention.ms", it->second);
    }
  }
  const kafka::NewTopic lineage_topic{
      .name = topic,
      .partitions = std::max(output_partitions_, 1),
      .replication_factor = -1,
      .configs = configs,
  };
  if (auto e = kafka::create_topics(admin, {lineage_topic}, true, 30s)) {
    spdlog::error("refusing to start: the lineage topic '{}' does not exist and cannot be "
                  "created ({}); create it, or unset pipeline.lineage_topic to carry the lineage "
                  "in headers",
                  topic, e.describe());
    return exit_config;
  }
  const auto retention = configs.find("retention.ms");
  spdlog::info("created the lineage topic '{}' with {} partitions, retention.ms {}", topic,
               std::max(output_partitions_, 1),
               retention != configs.end() ? retention->second : "the broker's default");
  return exit_ok;
}

kafka::Error Engine::write_journal(const Partition& p, Clock::time_point deadline) {
  lineage::JournalBuilder* journal = p.producer->journal();
  if (journal == nullptr || journal->empty()) return {};
  if (!p.producer->journal_whole()) {
    return kafka::Error{kafka::ErrorKind::abortable, 0, "LINEAGE_INCOMPLETE",
                        "a delivery could not be noted in the lineage journal"};
  }
  // Room for the record's key and batch overhead below the topic's limit.
  const auto records = journal->records(config_.pipeline.input_topic, config_.pipeline.output_topic,
                                        p.attempt,
                                        static_cast<std::size_t>(lineage_limit_) - 1024);
  for (const std::string& value : records) {
    kafka::ProduceRecord record;
    record.key = p.producer->transactional_id();
    record.value = value;
    record.topic = lineage_topic_;
    if (kafka::Error e = p.producer->produce(record, bound(config_.transactions.commit_timeout, deadline))) {
      return e.kind() == kafka::ErrorKind::fatal ? e
                                                 : kafka::Error{kafka::ErrorKind::abortable, e.code(),
                                                                e.name(), e.message()};
    }
  }
  return p.producer->flush(bound(config_.transactions.commit_timeout, deadline));
}

int Engine::run(const std::atomic<int>& signals) {
  signals_ = &signals;
  std::string error;
  consumer_ = kafka::Consumer::create(consumer_properties(config_), config_.pipeline.input_topic,
                                      *this, error, ops::consumer_statistics(observer_));
  if (!consumer_) {
    spdlog::error("refusing to start: {}", error);
    return exit_config;
  }
  if (int code = startup_checks(); code != exit_ok) return code;
  if (auto e = consumer_->subscribe()) {
    spdlog::error("cannot subscribe to '{}': {}", config_.pipeline.input_topic, e.describe());
    return exit_failure;
  }
  if (instance_scope_) {
    spdlog::info("consuming '{}' as group '{}', producing to '{}', one producer for the instance, "
                 "transactional id '{}'",
                 config_.pipeline.input_topic, config_.pipeline.group_id,
                 config_.pipeline.output_topic, instance_id_);
  } else {
    spdlog::info("consuming '{}' as group '{}', producing to '{}', transactional ids '{}.{}.{{partition}}'",
                 config_.pipeline.input_topic, config_.pipeline.group_id,
                 config_.pipeline.output_topic, config_.pipeline.transactional_id_prefix,
                 config_.pipeline.input_topic);
  }
  if (config_.pipeline.delivery == config::Delivery::at_least_once) {
    spdlog::warn("delivery = \"at-least-once\": no transactions; outputs are flushed, then the "
                 "offsets committed, so a crash or a rebalance can repeat records in the output");
  }
  last_report_ = Clock::now();

  while (signals.load() == 0 && !stop_code_) {
    kafka::Message message = consumer_->poll(pending_ > 0 ? pending_poll_timeout : poll_timeout);
    // One clock read per record for the loop's bookkeeping (the transform's latency takes two
    // more): on some virtual machines a read costs a system call.
    const auto now = Clock::now();
    observer_.health.polled(now, !message.empty());
    if (!consumer_->failure().empty()) {
      fail(consumer_->failure(), exit_failure);
      break;
    }
    if (const auto refused = kafka::authentication_failure()) {
      // Credentials do not heal by retrying: stop, as for a bad config, with librdkafka's reason.
      fail(fmt::format("the cluster refused the login: {}", refused->reason), exit_config);
      break;
    }
    if (!message.empty()) {
      if (kafka::Error e = message.error()) {
        if (e.kind() == kafka::ErrorKind::fatal || e.name() == "_FATAL") {
          fail(consumer_failure(e.describe()), exit_failure);
        } else {
          spdlog::warn("consumer: {}", e.describe());
        }
      } else {
        process(message, now);
      }
    }
    // Timers (commit interval, backoffs, reports) to the millisecond; while records stream in,
    // not once per record.
    if (message.empty() || now - last_tick_ >= 1ms) {
      last_tick_ = now;
      tick(now);
    }
  }
  return shutdown(signals, stop_code_.value_or(exit_ok));
}

void Engine::process(kafka::Message& message, Clock::time_point now) {
  auto it = partitions_.find(message.partition());
  if (it == partitions_.end()) return;  // not (or no longer) ours: a stale fetch
  Partition& p = it->second;
  if (p.pending || !p.held.empty()) {
    // Its commit has not been settled (tick() looks every millisecond): the record waits for it,
    // in order. Past held_limit or held_bytes_limit, the loop waits for the commit.
    p.held_bytes += message.size();
    p.held.push_back(std::move(message));
    if (p.held.size() >= held_limit || p.held_bytes >= held_bytes_limit) {
      if (p.pending) {
        const auto waiting = Clock::now();
        p.pending->wait();
        observer_.metrics.waited_for_commit(Clock::now() - waiting);
        settle(p);
      }
      drain(p, now);
    }
    return;
  }
  handle(p, message, now);
}

void Engine::handle(Partition& p, kafka::Message& message, Clock::time_point now) {
  const std::int64_t offset = message.offset();
  if (p.paused || (p.position != kafka::offset_invalid && offset < p.position)) {
    // Fetched before a rewind, or delivered while waiting out a backoff: the rewind re-reads it.
    counters_.stale_dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!p.producer) return;  // being re-created; the partition is paused until then
  if (p.tracked && !p.in_transaction) {
    if (p.quarantine) {
      if (!quarantine_step(p, offset)) return;
    } else if (!p.started_written && !mark_started(p)) {
      return;
    }
  }

  if (!p.in_transaction) {
    if (!instance_scope_ || !instance_open_) {
      if (kafka::Error e = p.producer->begin_transaction()) {
        recreate(p, e);
        return;
      }
      if (instance_scope_) {
        instance_open_ = true;
        instance_attempt_ = fmt::format("{:08x}-{}", instance_tag_, ++attempts_);
      }
    }
    p.in_transaction = true;
    p.attempt = instance_scope_ ? instance_attempt_ : fmt::format("{:08x}-{}", instance_tag_, ++attempts_);
    p.range_start = p.position != kafka::offset_invalid ? p.position : offset;
    p.records = 0;
    p.bytes = 0;
    p.opened = now;
    // The interval counts from the last commit's start when that was less than an interval ago:
    // the records that came in while it ran have waited since. Half an interval is left at the
    // least: commits slower than that (a loaded broker) would otherwise leave each next
    // transaction only the records of a millisecond, and more commits would load it more.
    const Clock::time_point last = instance_scope_ ? instance_commit_began_ : p.commit_began;
    p.interval_from = now - last < limits_.commit_interval
                          ? std::max(last, now - limits_.commit_interval / 2)
                          : now - p.stagger;
    if (spdlog::should_log(spdlog::level::debug)) {
      // The first record's age (from its timestamp) says how long input waits before it is read.
      const auto wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch()).count();
      spdlog::debug("{}: attempt {} opened at offset {} (record age {} ms)",
                    p.producer->transactional_id(), p.attempt, p.range_start,
                    wall_ms - message.timestamp_ms());
    }
  }
  counters_.consumed.fetch_add(1, std::memory_order_relaxed);
  ++p.consumed_unreported;

  message.headers(input_headers_);
  transform_headers_.clear();
  for (const auto& h : input_headers_) transform_headers_.push_back({h.name, h.value});
  const transforms::RecordView view{message.topic(), p.number,          offset,
                                    message.timestamp_ms(), message.key(), message.value(),
                                    transform_headers_};
  emitter_.clear();
  transforms::Status status;
  std::string_view error_class = "transform";
  if (p.convict && p.records == 0 && *p.convict == quarantine_from(p)) {
    // The last owner died running this record alone: it is not run again.
    error_class = "crash";
    status = transforms::Status::error(fmt::format(
        "the process died while running this record alone, after {} deaths in a row from offset {}",
        p.deaths, p.quarantine_start));
  } else {
    const auto began = Clock::now();
    try {
      status = transform_.process(view, emitter_);
    } catch (const std::exception& e) {
      status = transforms::Status::error(fmt::format("the transform threw: {}", e.what()));
    } catch (...) {
      status = transforms::Status::error("the transform threw an unknown exception");
    }
    observer_.metrics.observe_transform(Clock::now() - began);
  }
  bool handled = true;
  if (status.code == transforms::StatusCode::error) {
    handled = on_record_failure(p, message, error_class, status.message);
  } else if (const auto known = p.rejected.find(offset); known != p.rejected.end()) {
    handled = on_record_failure(p, message, "too_large", known->second);
  } else if (status.code == transforms::StatusCode::skip) {
    counters_.skipped.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.record_skipped(ops::SkipReason::filtered);
  } else {
    std::size_t oversize = 0;
    for (std::size_t i = 0; i < emitter_.size() && oversize == 0; ++i) {
      if (too_large(emitter_[i], output_limit_)) oversize = i + 1;
    }
    std::size_t produced = 0;
    if (oversize != 0) {
      handled = on_record_failure(
          p, message, "too_large",
          fmt::format("output {} of the record exceeds the output topic's limit of {} bytes",
                      oversize, output_limit_));
    } else if (kafka::Error e = produce_outputs(p, message, produced)) {
      if (e.record_rejected() && produced == 0) {
        handled = on_record_failure(p, message, "too_large", e.describe());
      } else if (e.record_rejected()) {
        // Part of this record's output is in the transaction already: redo the range, and send
        // this record to the failure policy as a whole.
        p.rejected.emplace(offset, e.describe());
        abort_and_rewind(p, ops::AbortReason::produce_failed, "output rejected", Clock::now() + config_.transactions.commit_timeout);
        return;
      } else if (e.kind() == kafka::ErrorKind::fatal) {
        recreate(p, e);
        return;
      } else {
        abort_and_rewind(p, ops::AbortReason::produce_failed, "produce failed", Clock::now() + config_.transactions.commit_timeout);
        return;
      }
    }
  }
  if (!handled) return;
  observer_.health.progress(now);
  p.position = offset + 1;
  p.records += 1;
  if ((p.quarantine && p.records >= p.chunk_span) || p.records >= limits_.max_records ||
      p.bytes >= limits_.max_bytes) {
    commit_async(p, Clock::now() + config_.transactions.commit_timeout,
                 p.quarantine ? "quarantine" : "size");
  }
}

bool Engine::too_large(const BufferedOutput& out, std::int64_t limit) const {
  // librdkafka counts key, value and headers plus the record batch overhead against
  // message.max.bytes; 128 bytes and 16 per header cover that overhead with room to spare.
  std::size_t size = 128 + (out.key ? out.key->size() : 0) + (out.value ? out.value->size() : 0);
  for (const auto& [name, value] : out.headers) size += 16 + name.size() + (value ? value->size() : 0);
  // The lineage: the input topic, then at most 11 + 20 digits, 3 separators and an attempt id of
  // 8 + 1 + 20 characters.
  if (config_.pipeline.lineage && lineage_topic_ == 0) {
    size += 16 + lineage_header.size() + config_.pipeline.input_topic.size() + 63;
  }
  return static_cast<std::int64_t>(size) > limit;
}

bool Engine::on_record_failure(Partition& p, const kafka::Message& message,
                               std::string_view error_class, const std::string& reason) {
  const std::int64_t offset = message.offset();
  switch (config_.pipeline.on_error) {
    case config::OnError::fail:
      // This range is never committed; the record is redone after a restart.
      abort_and_rewind(p, ops::AbortReason::record_failure, "record failure", Clock::now() + config_.transactions.commit_timeout);
      if (error_class == "transform") {
        fail(fmt::format("transform '{}' failed on {} [{}] at offset {}: {}", config_.transform.name,
                         message.topic(), p.number, offset, reason),
             exit_transform);
      } else if (error_class == "crash") {
        fail(fmt::format("transform '{}' crashes the process on {} [{}] at offset {} ({}); "
                         "on_error = \"dlq\" or \"skip\" would set it aside",
                         config_.transform.name, message.topic(), p.number, offset, reason),
             exit_transform);
      } else {
        fail(fmt::format("an output of {} [{}] at offset {} cannot be produced to '{}' ({}): {}",
                         message.topic(), p.number, offset, config_.pipeline.output_topic,
                         error_class, reason),
             exit_transform);
      }
      return false;
    case config::OnError::skip:
      counters_.skipped.fetch_add(1, std::memory_order_relaxed);
      observer_.metrics.record_skipped(error_class == "crash"       ? ops::SkipReason::crash
                                       : error_class == "too_large" ? ops::SkipReason::too_large
                                                                    : ops::SkipReason::transform);
      observer_.metrics.error(ops::ErrorKind::other, ops::ErrorAction::skip);
      spdlog::warn("{} [{}] at offset {}: skipped ({}): {}", message.topic(), p.number, offset,
                   error_class, reason);
      return true;
    case config::OnError::dlq: break;
  }
  // The dead letter: the input as it was, plus what went wrong, in the same transaction as the
  // input's offset, so it is there exactly once.
  error_values_[0].assign(error_class);
  error_values_[1].assign(reason);
  error_values_[2].assign(message.topic());
  error_values_[3] = std::to_string(p.number);
  error_values_[4] = std::to_string(offset);
  error_values_[5] = std::to_string(message.timestamp_ms());
  error_values_[6] = config_.transform.name;
  error_values_[7] = transform_version_;
  message.headers(input_headers_);
  output_headers_.assign(input_headers_.begin(), input_headers_.end());
  output_headers_.push_back({"exactly.error.class", error_values_[0]});
  output_headers_.push_back({"exactly.error.message", error_values_[1]});
  output_headers_.push_back({"exactly.error.topic", error_values_[2]});
  output_headers_.push_back({"exactly.error.partition", error_values_[3]});
  output_headers_.push_back({"exactly.error.offset", error_values_[4]});
  output_headers_.push_back({"exactly.error.timestamp", error_values_[5]});
  output_headers_.push_back({"exactly.error.group", config_.pipeline.group_id});
  output_headers_.push_back({"exactly.error.plugin", error_values_[6]});
  output_headers_.push_back({"exactly.error.plugin.version", error_values_[7]});
  format_lineage_into(lineage_, message.topic(), p.number, offset, p.attempt);
  output_headers_.push_back({lineage_header, lineage_});
  kafka::ProduceRecord record;
  record.key = message.key();
  record.value = message.value();
  record.headers = output_headers_;
  record.timestamp_ms = message.timestamp_ms();
  record.topic = 1;
  if (kafka::Error e = p.producer->produce(record, config_.transactions.commit_timeout)) {
    if (e.record_rejected()) {
      abort_and_rewind(p, ops::AbortReason::produce_failed, "dead letter rejected", Clock::now() + config_.transactions.commit_timeout);
      fail(fmt::format("{} [{}] at offset {} failed ({}: {}) and cannot be dead-lettered to '{}': {}",
                       message.topic(), p.number, offset, error_class, reason,
                       config_.pipeline.dlq_topic, e.describe()),
           exit_transform);
    } else if (e.kind() == kafka::ErrorKind::fatal) {
      recreate(p, e);
    } else {
      abort_and_rewind(p, ops::AbortReason::produce_failed, "dead letter failed", Clock::now() + config_.transactions.commit_timeout);
    }
    return false;
  }
  counters_.dead_lettered.fetch_add(1, std::memory_order_relaxed);
  observer_.metrics.record_dead_lettered(error_class == "crash"       ? ops::FailureClass::crash
                                         : error_class == "too_large" ? ops::FailureClass::too_large
                                                                      : ops::FailureClass::transform);
  observer_.metrics.error(ops::ErrorKind::other, ops::ErrorAction::dead_letter);
  p.bytes += static_cast<std::int64_t>(message.size());
  spdlog::debug("{} [{}] at offset {}: dead-lettered ({}): {}", message.topic(), p.number, offset,
                error_class, reason);
  return true;
}

kafka::Error Engine::produce_outputs(Partition& p, const kafka::Message& message,
                                     std::size_t& produced) {
  const bool header = config_.pipeline.lineage && lineage_topic_ == 0;
  if (header) format_lineage_into(lineage_, message.topic(), p.number, message.offset(), p.attempt);
  for (std::size_t i = 0; i < emitter_.size(); ++i) {
    const BufferedOutput& out = emitter_[i];
    output_headers_.clear();
    for (const auto& [name, value] : out.headers) {
      output_headers_.push_back({name, value ? std::optional<std::string_view>{*value} : std::nullopt});
    }
    if (header) output_headers_.push_back({lineage_header, lineage_});
    kafka::ProduceRecord record;
    if (lineage_topic_ != 0) record.source = kafka::PartitionOffset{p.number, message.offset()};
    if (out.key) record.key = *out.key;
    if (out.value) record.value = *out.value;
    record.headers = output_headers_;
    record.timestamp_ms = message.timestamp_ms();
    if (out.partition) {
      record.partition = *out.partition;
    } else if (config_.pipeline.partitioning == config::Partitioning::same_as_input) {
      record.partition = p.number;
    }
    if (kafka::Error e = p.producer->produce(record, config_.transactions.commit_timeout)) {
      spdlog::warn("{}: produce failed: {}", p.producer->transactional_id(), e.describe());
      return e;
    }
    // max_bytes bounds what the transaction writes.
    p.bytes += static_cast<std::int64_t>((out.key ? out.key->size() : 0) +
                                         (out.value ? out.value->size() : 0));
    ++produced;
    counters_.produced.fetch_add(1, std::memory_order_relaxed);
    ++p.produced_unreported;
  }
  return {};
}

void Engine::report_counts(Partition& p) {
  if (p.consumed_unreported != 0) {
    p.metrics.consumed->Increment(static_cast<double>(p.consumed_unreported));
    p.consumed_unreported = 0;
  }
  if (p.produced_unreported != 0) {
    p.metrics.produced->Increment(static_cast<double>(p.produced_unreported));
    p.produced_unreported = 0;
  }
}

void Engine::tick(Clock::time_point now) {
  std::vector<Partition*> due_commit;
  observer_.metrics.flush_transform();
  // With a lineage topic the producers report every delivery, and librdkafka keeps each record
  // until its report is served: served on every tick, a transaction's records are not all held
  // until its commit's flush (results/bench/turns/lineage-topic: 84.7 against 65.3 MiB).
  if (lineage_topic_ != 0 && instance_producer_) {  // instance scope: commits run on the loop
    instance_producer_->poll();
  }
  for (auto& [number, p] : partitions_) {
    report_counts(p);
    if (p.pending) {
      if (p.pending->wait_for(0s) != std::future_status::ready) continue;
      settle(p);
      drain(p, now);
      if (stop_code_) return;
      if (p.pending) continue;
    }
    if (lineage_topic_ != 0 && !instance_scope_ && p.producer) p.producer->poll();
    if (p.needs_producer && now >= p.reinit_at) {
      reinit(p);
      if (stop_code_) return;
    }
    if (p.paused && !p.needs_producer && now >= p.resume_at) {
      // The rewind: seek while still paused, then resume (never resume an unpaused partition).
      const std::int64_t to = p.position != kafka::offset_invalid ? p.position : kafka::offset_beginning;
      if (kafka::Error e = consumer_->seek(p.number, to, config_.transactions.commit_timeout)) {
        spdlog::warn("{} [{}]: rewind to offset {} failed, retrying: {}", consumer_->topic(),
                     p.number, to, e.describe());
        p.resume_at = now + config_.transactions.retry_backoff;
        continue;
      }
      if (kafka::Error e = consumer_->resume(p.number)) {
        fail(fmt::format("cannot resume {} [{}]: {}", consumer_->topic(), p.number, e.describe()),
             exit_failure);
        return;
      }
      p.paused = false;
      spdlog::debug("{} [{}]: resumed at offset {}", consumer_->topic(), p.number, to);
    }
    if (!p.in_transaction) continue;
    // From interval_from, at most an interval before `opened`: the watchdog fires that much early
    // at the most, well inside its margin.
    const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - p.interval_from);
    switch (due(limits_, p.records, p.bytes, age)) {
      case TransactionAction::keep: break;
      case TransactionAction::commit:
        if (async_commits_ && !p.quarantine) {
          commit_async(p, now + config_.transactions.commit_timeout, "interval");
        } else {
          due_commit.push_back(&p);
        }
        break;
      case TransactionAction::abort:
        spdlog::warn("{}: transaction open for {} ms, past the watchdog's {} ms: aborting",
                     p.producer->transactional_id(),
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - p.opened).count(),
                     watchdog_deadline(limits_.transaction_timeout).count());
        abort_and_rewind(p, ops::AbortReason::watchdog, "watchdog", now + config_.transactions.commit_timeout);
        break;
    }
  }
  if (!due_commit.empty()) {
    // Commits on the loop (at-least-once, instance scope, a quarantine). One partition's interval
    // is up: every open transaction commits with it, concurrently. The loop then waits for one
    // round of commits per interval instead of one per partition, each at its own moment (and
    // the records of the others waiting behind each). A partition in quarantine keeps to its
    // one-record transactions, and never drags the others along.
    const bool interval = std::any_of(due_commit.begin(), due_commit.end(), [&](const Partition* d) {
      return !d->quarantine && now - d->interval_from >= limits_.commit_interval;
    });
    if (interval && !async_commits_) {
      for (auto& [number, p] : partitions_) {
        if (p.in_transaction && !p.quarantine && !p.paused &&
            std::find(due_commit.begin(), due_commit.end(), &p) == due_commit.end()) {
          due_commit.push_back(&p);
        }
      }
    }
    commit(due_commit, now + config_.transactions.commit_timeout, "interval");
  }

  Clock::duration oldest{};
  std::int64_t quarantined = 0;
  std::size_t ready = 0;
  for (const auto& [number, p] : partitions_) {
    if (p.in_transaction) oldest = std::max(oldest, now - p.opened);
    if (p.quarantine) ++quarantined;
    if (p.producer) ++ready;
  }
  observer_.metrics.set_oldest_open_transaction(oldest);
  observer_.metrics.set_quarantined_partitions(quarantined);
  observer_.health.set_producers_ready(ready);
  if (now - last_producer_poll_ >= 1s) {
    // Serves the producers' statistics callbacks (and delivery reports).
    last_producer_poll_ = now;
    for (auto& [number, p] : partitions_) {
      if (p.producer && !p.pending) p.producer->poll();  // a pending commit's thread serves it
    }
    // Lag: the end of committed input librdkafka last fetched, minus where this partition is.
    std::int64_t waiting = 0;
    for (auto& [number, p] : partitions_) {
      std::int64_t low = 0;
      std::int64_t high = 0;
      if (!consumer_->cached_watermarks(number, low, high)) continue;
      const std::int64_t at = p.position != kafka::offset_invalid ? p.position : std::max<std::int64_t>(low, 0);
      const std::int64_t lag = std::max<std::int64_t>(high - at, 0);
      p.metrics.consumer_lag->Set(static_cast<double>(lag));
      waiting += lag;
    }
    observer_.health.set_input_waiting(waiting > 0);
    observer_.metrics.set_fetch_wakeups(consumer_->fetch_wakeups());
  }

  if (now - last_report_ >= report_interval) {
    last_report_ = now;
    for (auto& [number, p] : partitions_) {
      if (p.producer && !p.pending) p.producer->poll();
    }
    spdlog::info("consumed {} produced {} dead-lettered {} skipped {} transactions committed {} "
                 "aborted {} partitions {}",
                 counters_.consumed.load(), counters_.produced.load(),
                 counters_.dead_lettered.load(), counters_.skipped.load(),
                 counters_.committed.load(), counters_.aborted.load(), partitions_.size());
  }
}

std::vector<Engine::Partition*> Engine::open_transactions() {
  std::vector<Partition*> open;
  for (auto& [number, p] : partitions_) {
    if (p.in_transaction) open.push_back(&p);
  }
  return open;
}

std::pair<Engine::Outcome, kafka::Error> Engine::commit_one(std::span<Partition* const> ps,
                                                           const kafka::GroupMetadata& group,
                                                           Clock::time_point deadline) {
  // Called concurrently for different transactions: touches only ps and their producer.
  Partition& p = *ps.front();  // the producer and the attempt are the same for all of ps
  std::string ranges;           // for the log: "offsets [s, e)", or "[p: s, e) ..." for several
  if (ps.size() == 1) {
    ranges = fmt::format("offsets [{}, {})", p.range_start, p.position);
  } else {
    for (const Partition* q : ps) {
      ranges += fmt::format("{}{}: [{}, {})", ranges.empty() ? "partitions " : ", ", q->number,
                            q->range_start, q->position);
    }
  }
  std::vector<kafka::PartitionOffset> offsets;
  offsets.reserve(ps.size());
  for (const Partition* q : ps) {
    if (commit_hook_ && !commit_hook_(q->number, q->range_start, q->position)) {
      spdlog::warn("{}: commit of {} refused by the commit hook", p.producer->transactional_id(),
                   ranges);
      return {Outcome::aborted, kafka::Error{kafka::ErrorKind::abortable, 0, "COMMIT_HOOK",
                                             "refused by the commit hook"}};
    }
    // Never past the point where the broker would expire the transaction.
    deadline = std::min(deadline, q->opened + limits_.transaction_timeout * 9 / 10);
    offsets.push_back({q->number, q->position});
  }
  // The records first. librdkafka registers a transaction's output partitions with the
  // coordinator (AddPartitionsToTxn) as it starts sending them; an AddOffsetsToTxn sent while that
  // is under way gets CONCURRENT_TRANSACTIONS, and both wait retry.backoff.ms. Delivered, they are
  // registered, and the commit is the protocol's round trips alone.
  const auto flushing = Clock::now();
  if (kafka::Error e = p.producer->flush(bound(config_.transactions.commit_timeout, deadline))) {
    // Records still undelivered at the deadline; no offsets were sent, so the range is redone.
    spdlog::warn("{}: commit of attempt {}, {}, failed: records not delivered in time: {}",
                 p.producer->transactional_id(), p.attempt, ranges, e.describe());
    return {Outcome::aborted, e};
  }
  if (kafka::Error e = write_journal(p, deadline)) {
    spdlog::warn("{}: commit of attempt {}, {}, failed: the lineage journal was not written: {}",
                 p.producer->transactional_id(), p.attempt, ranges, e.describe());
    return {e.kind() == kafka::ErrorKind::fatal ? Outcome::producer_lost : Outcome::aborted, e};
  }
  const auto began = Clock::now();
  for (Partition* q : ps) q->flush_latency = began - flushing;
  kafka::Error e = retrying(
      [&](std::chrono::milliseconds timeout) {
        return p.producer->send_offsets_to_transaction(config_.pipeline.input_topic, offsets,
                                                       group, timeout);
      },
      deadline);
  bool committing = false;  // commit_transaction was called
  if (!e) {
    committing = true;
    for (Partition* q : ps) q->offsets_latency = Clock::now() - began;
    e = retrying(
        [&](std::chrono::milliseconds timeout) { return p.producer->commit_transaction(timeout); },
        deadline);
    if (e.kind() == kafka::ErrorKind::retriable) {
      // A commit whose outcome is unknown: only a new producer's epoch bump settles it.
      spdlog::warn("{}: commit of attempt {}, {}, did not finish: {}",
                   p.producer->transactional_id(), p.attempt, ranges, e.describe());
      return {Outcome::producer_lost, e};
    }
  }
  if (!e) {
    for (Partition* q : ps) q->commit_latency = Clock::now() - began;
    return {Outcome::committed, e};
  }
  if (committing && p.producer->transactional()) {
    // commit_transaction failed: librdkafka may have sent EndTxn, and a retry of it may fail
    // although the first one committed. Never abort and redo the range on a guess: a new
    // producer's init_transactions settles the transaction either way, and the partition resumes
    // from the committed offset.
    spdlog::warn("{}: commit of attempt {}, {}, failed after it began: {}; a new "
                 "producer settles its outcome",
                 p.producer->transactional_id(), p.attempt, ranges, e.describe());
    return {Outcome::producer_lost, e};
  }
  spdlog::warn("{}: commit of attempt {}, {}, failed: {}", p.producer->transactional_id(),
               p.attempt, ranges, e.describe());
  return {e.kind() == kafka::ErrorKind::fatal ? Outcome::producer_lost : Outcome::aborted, e};
}

void Engine::commit(std::span<Partition* const> requested, Clock::time_point deadline,
                    const char* why) {
  if (requested.empty()) return;
  // In instance scope one transaction holds the ranges of every partition with records: they
  // commit as one, whichever partition asked.
  std::vector<Partition*> shared;
  if (instance_scope_) shared = open_transactions();
  const std::span<Partition* const> parts = instance_scope_ ? std::span<Partition* const>{shared} : requested;
  if (parts.empty()) return;
  const auto began = Clock::now();
  instance_commit_began_ = began;
  for (Partition* p : parts) p->commit_began = began;
  const auto group = consumer_->group_metadata();
  if (!group) {
    spdlog::warn("no consumer group metadata (the group is leaving): aborting {} transaction(s)",
                 parts.size());
    for (Partition* p : parts) abort_and_rewind(*p, ops::AbortReason::commit_failed, "no group metadata", deadline);
    return;
  }
  std::vector<CommitResult> outcomes(parts.size());
  if (instance_scope_ || parts.size() == 1) {
    std::fill(outcomes.begin(), outcomes.end(), commit_one(parts, *group, deadline));
  } else {
    // Different partitions have different producers: their commits run at the same time.
    std::vector<std::future<CommitResult>> running;
    running.reserve(parts.size());
    for (Partition* p : parts) {
      running.push_back(std::async(std::launch::async, [this, p, &group, deadline] {
        return commit_one(std::span<Partition* const>{&p, 1}, *group, deadline);
      }));
    }
    for (std::size_t i = 0; i < parts.size(); ++i) outcomes[i] = running[i].get();
  }
  settle_outcomes(parts, outcomes, deadline, why);
}

void Engine::settle_outcomes(std::span<Partition* const> parts,
                             std::span<const CommitResult> outcomes, Clock::time_point deadline,
                             const char* why) {
  std::vector<kafka::PartitionOffset> delivered;  // at-least-once: offsets the consumer commits
  for (std::size_t i = 0; i < parts.size(); ++i) {
    Partition& p = *parts[i];
    p.stagger = {};
    switch (outcomes[i].first) {
      case Outcome::committed:
        if (!p.producer->transactional()) delivered.push_back({p.number, p.position});
        if (!instance_scope_ || i == 0) {
          // One transaction: in instance scope, the ranges of all of parts.
          std::int64_t records = 0;
          std::int64_t bytes = 0;
          Clock::time_point opened = p.opened;
          for (const Partition* q : instance_scope_ ? parts : std::span<Partition* const>{&parts[i], 1}) {
            records += q->records;
            bytes += q->bytes;
            opened = std::min(opened, q->opened);
          }
          counters_.committed.fetch_add(1, std::memory_order_relaxed);
          observer_.metrics.transaction_committed(p.flush_latency, p.commit_latency,
                                                  Clock::now() - opened, records, bytes);
          observer_.health.committed(Clock::now());
          if (instance_scope_) instance_open_ = false;
        }
        spdlog::debug("{}: committed attempt {}, offsets [{}, {}) ({} records, {}, delivered in "
                      "{} ms, then committed in {} ms, {} of them sending the offsets)",
                      p.producer->transactional_id(), p.attempt, p.range_start, p.position,
                      p.records, why,
                      std::chrono::duration_cast<std::chrono::milliseconds>(p.flush_latency).count(),
                      std::chrono::duration_cast<std::chrono::milliseconds>(p.commit_latency).count(),
                      std::chrono::duration_cast<std::chrono::milliseconds>(p.offsets_latency).count());
        p.in_transaction = false;
        p.rejected.erase(p.rejected.begin(), p.rejected.lower_bound(p.position));
        if (p.quarantine) {
          // The next transaction gets a marker of its own. A full one doubles the next; one of
          // the records run alone counts them down, and after the last the growth starts again.
          if (p.alone > 0) {
            if (--p.alone == 0) {
              p.chunk = 1;
              p.grow = true;
            }
          } else if (p.grow && p.records >= p.chunk_span) {
            p.chunk = std::min(p.chunk * 2, limits_.max_records);
          }
          p.suspect_written = -1;
        }
        break;
      case Outcome::aborted:
        observer_.metrics.error(kind_of(outcomes[i].second), ops::ErrorAction::abort);
        abort_and_rewind(p,
                         outcomes[i].second.name() == "COMMIT_HOOK" ? ops::AbortReason::hook
                                                                    : ops::AbortReason::commit_failed,
                         "commit failed", std::max(deadline, Clock::now() + 1s));
        break;
      case Outcome::producer_lost:
        recreate(p, outcomes[i].second);
        break;
    }
  }
  if (kafka::Error e = consumer_->commit(delivered)) {
    // The outputs are out; their offsets will be committed with the next ones, or the records
    // are repeated after a rebalance: what at-least-once allows.
    spdlog::warn("committing the offsets of {} partition(s) failed: {}", delivered.size(),
                 e.describe());
  }
}

void Engine::commit_async(Partition& p, Clock::time_point deadline, const char* why) {
  Partition* one[] = {&p};
  if (!async_commits_ || p.quarantine) {
    commit(one, deadline, why);
    return;
  }
  std::shared_ptr<const kafka::GroupMetadata> group = consumer_->group_metadata();
  if (!group) {
    commit(one, deadline, why);  // aborts: the group is leaving
    return;
  }
  p.commit_began = Clock::now();
  p.pending_deadline = deadline;
  p.pending_why = why;
  p.pending = std::async(std::launch::async, [this, &p, group = std::move(group), deadline] {
    Partition* self[] = {&p};
    return commit_one(self, *group, deadline);
  });
  ++pending_;
}

void Engine::settle(Partition& p) {
  if (!p.pending) return;
  const CommitResult outcome = p.pending->get();
  p.pending.reset();
  --pending_;
  Partition* one[] = {&p};
  settle_outcomes(one, std::span<const CommitResult>{&outcome, 1}, p.pending_deadline,
                  p.pending_why);
}

void Engine::drain(Partition& p, Clock::time_point now) {
  while (!p.held.empty() && !p.pending && !stop_code_) {
    kafka::Message message = std::move(p.held.front());
    p.held.pop_front();
    p.held_bytes -= message.size();
    handle(p, message, now);
  }
}

void Engine::settle_every() {
  std::vector<Partition*> all;
  for (auto& [number, p] : partitions_) all.push_back(&p);
  settle_all(all);
}

void Engine::settle_all(std::span<Partition* const> parts) {
  for (Partition* p : parts) {
    settle(*p);
    p->held.clear();
    p->held_bytes = 0;
  }
}

void Engine::pause_for_backoff(Partition& p) {
  if (!p.paused) {
    if (kafka::Error e = consumer_->pause(p.number)) {
      fail(fmt::format("cannot pause {} [{}]: {}", consumer_->topic(), p.number, e.describe()),
           exit_failure);
      return;
    }
  }
  p.paused = true;
  p.resume_at = Clock::now() + config_.transactions.retry_backoff;
}

void Engine::abort_and_rewind(Partition& p, ops::AbortReason reason, const char* why,
                              Clock::time_point deadline) {
  if (instance_scope_) {
    // One transaction holds every partition's range: all of them are redone.
    if (instance_open_ && p.producer) {
      observer_.metrics.transaction_aborted(reason);
      const kafka::Error e = retrying(
          [&](std::chrono::milliseconds timeout) { return p.producer->abort_transaction(timeout); },
          deadline);
      instance_open_ = false;
      counters_.aborted.fetch_add(1, std::memory_order_relaxed);
      if (e) {
        spdlog::warn("{}: abort of attempt {} failed: {}", p.producer->transactional_id(),
                     p.attempt, e.describe());
        recreate(p, e);
        return;
      }
      for (Partition* q : open_transactions()) {
        note_aborted(*q, why);
        q->in_transaction = false;
        q->position = q->range_start;
        pause_for_backoff(*q);
      }
    }
    pause_for_backoff(p);
    return;
  }
  if (p.in_transaction) {
    observer_.metrics.transaction_aborted(reason);
    const kafka::Error e = retrying(
        [&](std::chrono::milliseconds timeout) { return p.producer->abort_transaction(timeout); },
        deadline);
    p.in_transaction = false;
    counters_.aborted.fetch_add(1, std::memory_order_relaxed);
    if (e) {
      spdlog::warn("{}: abort of attempt {} failed: {}", p.producer->transactional_id(), p.attempt,
                   e.describe());
      recreate(p, e);
      return;
    }
    note_aborted(p, why);
    p.position = p.range_start;
  }
  pause_for_backoff(p);
}

std::unique_ptr<kafka::TransactionalProducer> Engine::make_producer(std::int32_t partition,
                                                                   Clock::time_point deadline,
                                                                   std::string& error) {
  const std::string id = instance_scope_ ? instance_id_
                                         : transactional_id(config_.pipeline.transactional_id_prefix,
                                                            config_.pipeline.input_topic, partition);
  auto producer = kafka::TransactionalProducer::create(
      producer_properties_, id, producer_topics_, error,
      ops::producer_statistics(observer_, instance_scope_ ? -1 : partition),
      config_.pipeline.delivery == config::Delivery::exactly_once, lineage_topic_ != 0);
  if (!producer) return nullptr;
  for (;;) {
    kafka::Error e = producer->init_transactions(bound(config_.transactions.init_timeout, deadline));
    if (!e) return producer;
    if (e.kind() != kafka::ErrorKind::retriable || Clock::now() >= deadline) {
      error = fmt::format("init_transactions of '{}': {}", id, e.describe());
      return nullptr;
    }
    if (signals_ != nullptr && signals_->load() > 0) {
      error = fmt::format("init_transactions of '{}' given up: shutting down", id);
      return nullptr;
    }
    spdlog::warn("init_transactions of '{}': {}; retrying", id, e.describe());
    observer_.metrics.error(ops::ErrorKind::retriable, ops::ErrorAction::retry);
    retry_pause(deadline);
  }
}

void Engine::recreate(Partition& p, const kafka::Error& cause) {
  if (instance_scope_) {
    recreate_instance(cause);
    return;
  }
  const std::string id = transactional_id(config_.pipeline.transactional_id_prefix,
                                          config_.pipeline.input_topic, p.number);
  if (cause.fenced()) {
    counters_.fenced.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.producer_fenced();
  }
  if (p.in_transaction) {
    counters_.aborted.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.transaction_aborted(ops::AbortReason::fatal_error);
  }
  observer_.metrics.error(kind_of(cause), ops::ErrorAction::recreate);
  p.in_transaction = false;
  p.producer.reset();
  pause_for_backoff(p);
  // Stopping, or giving the partition away: its next owner settles what is left open.
  if (stop_code_ || stopping_ || revoking_ || hard_stop()) {
    spdlog::warn("{}: producer lost ({}); leaving the partition to its next owner", id,
                 cause.describe());
    return;
  }
  // A fenced producer may mean another member owns the partition now and our revocation is on
  // its way: wait a moment for it, rather than fence the rightful owner back.
  p.needs_producer = true;
  p.reinit_at = Clock::now() + (cause.fenced() ? std::chrono::milliseconds{1000}
                                               : config_.transactions.retry_backoff);
  spdlog::warn("{}: producer lost ({}); a new one resumes from the committed offset", id,
               cause.describe());
}

void Engine::recreate_instance(const kafka::Error& cause) {
  if (!instance_producer_) return;  // dropped already, for the same failure
  if (cause.fenced()) {
    counters_.fenced.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.producer_fenced();
  }
  if (instance_open_) {
    counters_.aborted.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.transaction_aborted(ops::AbortReason::fatal_error);
  }
  observer_.metrics.error(kind_of(cause), ops::ErrorAction::recreate);
  instance_open_ = false;
  instance_producer_.reset();
  const bool leaving = stop_code_ || stopping_ || revoking_ || hard_stop();
  for (auto& [number, q] : partitions_) {
    q.in_transaction = false;
    q.producer.reset();
    pause_for_backoff(q);
    if (leaving) continue;
    // Its committed offset is read again once the new producer has settled the old one's
    // transaction (the same transactional.id: its init_transactions does).
    q.needs_producer = true;
    q.reinit_at = Clock::now() + (cause.fenced() ? std::chrono::milliseconds{1000}
                                                 : config_.transactions.retry_backoff);
  }
  spdlog::warn("{}: producer lost ({}); {}", instance_id_, cause.describe(),
               leaving ? "leaving the partitions to their next owners"
                       : "a new one resumes every partition from its committed offset");
}

Engine::Clock::duration Engine::start_budget() const {
  const Clock::duration init = config_.transactions.init_timeout * 2;
  // In instance scope another member's transaction may hold the partitions' offsets (a killed
  // instance's, until the broker expires it): the committed-offset read waits that out.
  if (instance_scope_) return std::max(init, Clock::duration{config_.transactions.timeout + config_.transactions.init_timeout});
  return init;
}

kafka::Error Engine::committed(std::vector<kafka::PartitionOffset>& offsets,
                               Clock::time_point deadline) {
  for (;;) {
    kafka::Error e = consumer_->committed(offsets, bound(config_.transactions.commit_timeout, deadline));
    if (e.kind() != kafka::ErrorKind::retriable || Clock::now() >= deadline) return e;
    spdlog::warn("reading committed offsets: {}; retrying", e.describe());
    observer_.metrics.error(ops::ErrorKind::retriable, ops::ErrorAction::retry);
    retry_pause(deadline);
  }
}

void Engine::reinit(Partition& p) {
  if (consumer_->assignment_lost()) {
    // The revoke callback comes with the next poll and drops the partition.
    p.reinit_at = Clock::now() + config_.transactions.retry_backoff;
    return;
  }
  std::string error;
  const auto deadline = Clock::now() + start_budget();
  if (!instance_scope_ || !instance_producer_) {
    // In instance scope the first partition to get here makes the one the others share.
    std::shared_ptr<kafka::TransactionalProducer> made = make_producer(p.number, deadline, error);
    if (!made) {
      fail(fmt::format("cannot re-create the producer of {} [{}]: {}", consumer_->topic(),
                       p.number, error),
           exit_failure);
      return;
    }
    counters_.producers_recreated.fetch_add(1, std::memory_order_relaxed);
    observer_.metrics.producer_recreated();
    if (instance_scope_) instance_producer_ = made;
    p.producer = std::move(made);
  } else {
    p.producer = instance_producer_;
  }
  // The new producer's init fenced the old one and settled its last transaction either way: the
  // group's committed offset is now the truth.
  std::vector<kafka::PartitionOffset> offsets{{p.number, kafka::offset_invalid}};
  if (kafka::Error e = committed(offsets, deadline)) {
    fail(fmt::format("cannot read the committed offset of {} [{}]: {}", consumer_->topic(),
                     p.number, e.describe()),
         exit_failure);
    return;
  }
  p.position = offsets[0].offset;
  p.needs_producer = false;
  spdlog::info("{}: producer re-created; resuming at offset {}", p.producer->transactional_id(),
               p.position == kafka::offset_invalid ? std::string{"(beginning)"}
                                                   : std::to_string(p.position));
}

std::vector<kafka::PartitionOffset> Engine::on_assign(std::span<const std::int32_t> numbers) {
  counters_.rebalances.fetch_add(1, std::memory_order_relaxed);
  observer_.metrics.rebalance();
  spdlog::info("assigned {} [{}]", consumer_->topic(), fmt::join(numbers, ","));
  std::vector<kafka::PartitionOffset> starts;
  if (stop_code_ || stopping_ || (signals_ != nullptr && signals_->load() > 0)) return starts;
  // init_transactions first, for every partition at once: it fences the previous owner and
  // settles its open transaction, so the committed offsets read next are stable (item 3).
  const auto deadline = Clock::now() + start_budget();
  std::vector<std::shared_ptr<kafka::TransactionalProducer>> producers;
  if (instance_scope_) {
    // The instance's producer, made once and kept across rebalances. Its init fences nobody
    // else's transactions: the committed offsets read next are stable because librdkafka asks
    // for stable ones under read_committed, and waits while another member's transaction holds
    // offsets of these partitions.
    if (!instance_producer_) {
      std::string error;
      instance_producer_ = make_producer(-1, deadline, error);
      if (!instance_producer_) {
        fail(fmt::format("cannot start the producer of {} ({}): {}", consumer_->topic(),
                         instance_id_, error),
             exit_failure);
        return starts;
      }
    }
    producers.assign(numbers.size(), instance_producer_);
  } else {
    std::vector<std::future<std::pair<std::unique_ptr<kafka::TransactionalProducer>, std::string>>>
        inits;
    for (const std::int32_t n : numbers) {
      inits.push_back(std::async(std::launch::async, [this, n, deadline] {
        std::string error;
        auto producer = make_producer(n, deadline, error);
        return std::make_pair(std::move(producer), error);
      }));
    }
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      auto [producer, error] = inits[i].get();
      if (!producer) {
        fail(fmt::format("cannot start {} [{}]: {}", consumer_->topic(), numbers[i], error),
             exit_failure);
      }
      producers.push_back(std::move(producer));
    }
  }
  if (stop_code_) return starts;

  std::vector<kafka::PartitionOffset> committed;
  for (const std::int32_t n : numbers) committed.push_back({n, kafka::offset_invalid});
  if (kafka::Error e = this->committed(committed, deadline)) {
    fail(fmt::format("cannot read the committed offsets of '{}': {}", consumer_->topic(),
                     e.describe()),
         exit_failure);
    return starts;
  }
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    Partition& p = partitions_[numbers[i]];
    Partition* self[] = {&p};
    settle_all(self);  // none with eager rebalancing, which revokes everything first
    p = Partition{};
    p.number = numbers[i];
    p.producer = std::move(producers[i]);
    p.position = committed[i].offset;
    if (async_commits_) {
      // The i-th partition's first commit comes i/n of an interval early: from then on, their
      // commits take turns instead of all running at once.
      p.stagger = limits_.commit_interval * static_cast<std::int64_t>(i) /
                  static_cast<std::int64_t>(numbers.size());
    }
    p.metrics = observer_.metrics.add_partition(consumer_->topic(), p.number);
    starts.push_back(committed[i]);
    spdlog::info("{}: ready, starting at offset {}", p.producer->transactional_id(),
                 p.position == kafka::offset_invalid ? std::string{"(auto.offset.reset)"}
                                                     : std::to_string(p.position));
  }
  if (marker_topic_ != 0) {
    std::vector<Partition*> parts;
    for (const std::int32_t n : numbers) parts.push_back(&partitions_[n]);
    start_markers(parts, deadline);
  }
  observer_.health.set_assignment(partitions_.size());
  observer_.health.set_producers_ready(partitions_.size());
  return starts;
}

void Engine::on_revoke(std::span<const std::int32_t> numbers, bool lost) {
  counters_.rebalances.fetch_add(1, std::memory_order_relaxed);
  observer_.metrics.rebalance();
  spdlog::info("{} {} [{}]", lost ? "lost" : "revoked", consumer_->topic(), fmt::join(numbers, ","));
  std::vector<Partition*> parts;  // the revoked partitions that are ours
  std::vector<Partition*> open;   // and those of them with an open transaction
  for (const std::int32_t n : numbers) {
    auto it = partitions_.find(n);
    if (it == partitions_.end()) continue;
    parts.push_back(&it->second);
  }
  // Commits already running end first (their outcome applied); records held behind them are
  // not processed: their next owner reads them.
  settle_all(parts);
  for (Partition* p : parts) {
    if (p->in_transaction) open.push_back(p);
  }
  const auto deadline = Clock::now() + config_.transactions.commit_timeout;
  if (lost) {
    // Another member may own these partitions already: nothing of ours may become visible.
    const std::vector<bool> aborted = abort_transactions(open, deadline);
    for (std::size_t i = 0; i < open.size(); ++i) {
      if (aborted[i]) {
        note_aborted(*open[i], "assignment lost");
        open[i]->in_transaction = false;
      }
      if (!instance_scope_ || i == 0) {
        counters_.aborted.fetch_add(1, std::memory_order_relaxed);
        observer_.metrics.transaction_aborted(ops::AbortReason::lost_assignment);
      }
    }
    if (marker_topic_ != 0 && !hard_stop()) {
      // This process is alive: its end as the owner must not count as a crash-loop death. Brief,
      // so that the consumer rejoins soon; if the new owner is faster, it counts one.
      stop_markers(parts, true, Clock::now() + 3s);
    }
  } else {
    revoking_ = true;
    commit(open, deadline, "revocation");
    if (marker_topic_ != 0 && !hard_stop()) {
      stop_markers(parts, false, std::max(deadline, Clock::now() + 5s));
    }
    revoking_ = false;
  }
  for (const std::int32_t n : numbers) {
    auto it = partitions_.find(n);
    if (it == partitions_.end()) continue;
    // librdkafka 2.0.2 keeps a partition's pause through unassign and a later assign: resume it
    // now (it is paused, so resuming is safe), or it would never be fetched again here.
    if (it->second.paused) (void)consumer_->resume(n);
    report_counts(it->second);
    partitions_.erase(it);
    observer_.metrics.remove_partition(consumer_->topic(), n);
  }
  observer_.health.set_assignment(partitions_.size());
}

Engine::MarkerWrite Engine::write_marker(Partition& p, const std::optional<Marker>& marker,
                                         Clock::time_point deadline) {
  // Touches only p and its producer: called concurrently for different partitions.
  const std::string value = marker ? encode(*marker) : std::string{};
  // The main path re-creates a producer that cannot begin a transaction; so does this.
  if (kafka::Error e = p.producer->begin_transaction()) return {e, true};
  kafka::ProduceRecord record;
  record.key = p.producer->transactional_id();
  if (marker) record.value = value;
  record.topic = marker_topic_;
  kafka::Error e = p.producer->produce(record, bound(config_.transactions.commit_timeout, deadline));
  if (!e) {
    e = retrying(
        [&](std::chrono::milliseconds timeout) { return p.producer->commit_transaction(timeout); },
        deadline);
    // Committed, or an outcome that an abort cannot settle: a timed-out commit_transaction
    // stays librdkafka's current call (any other call fails with _CONFLICT), and a failed one
    // may have sent EndTxn already.
    return {e, static_cast<bool>(e)};
  }
  if (e.kind() != kafka::ErrorKind::fatal) {
    // The produce failed before the commit: abort so that the next transaction can begin; a
    // failed abort leaves the producer to be re-created.
    if (kafka::Error a = p.producer->abort_transaction(bound(config_.transactions.commit_timeout, deadline))) {
      return {a, true};
    }
    return {e, false};
  }
  return {e, true};
}

void Engine::start_markers(std::span<Partition* const> parts, Clock::time_point deadline) {
  // The markers of these partitions' transactional ids, as a read_committed reader sees them:
  // every transaction of the old owners is settled by the init_transactions just done.
  std::map<std::string, std::optional<std::string>> found;
  for (Partition* p : parts) found.emplace(p->producer->transactional_id(), std::nullopt);
  kafka::ReadOptions options;
  options.bootstrap_servers = config_.kafka.bootstrap_servers;
  options.topic = config_.quarantine.topic;
  options.properties = config_.librdkafka_common;
  options.timeout = std::max(1000ms, left_until(deadline));
  const auto error = kafka::read_topic(options, [&](const kafka::ReadRecord& r) {
    if (!r.key) return;
    auto it = found.find(std::string{*r.key});
    if (it == found.end()) return;
    if (r.value) {
      it->second = std::string{*r.value};
    } else {
      it->second.reset();  // a tombstone: a clean stop
    }
  });
  if (error) {
    spdlog::error("cannot read the quarantine markers from '{}': {}; crash-loop detection is off "
                  "for [{}] until their next assignment",
                  config_.quarantine.topic, *error,
                  fmt::join(parts | std::views::transform([](const Partition* p) { return p->number; }), ","));
    return;
  }

  std::vector<std::pair<Partition*, std::optional<Marker>>> writes;
  for (Partition* p : parts) {
    const std::string& id = p->producer->transactional_id();
    std::optional<Marker> previous;
    if (const auto& text = found[id]) {
      std::string why;
      previous = decode(*text, why);
      if (!previous) spdlog::warn("{}: ignoring the marker '{}': {}", id, *text, why);
    }
    std::int64_t low = 0;
    std::int64_t high = 0;
    const kafka::Error watermark_error =
        consumer_->watermarks(p->number, low, high, bound(10s, deadline));
    if (watermark_error) {
      spdlog::warn("{}: {}; counting a death of the last owner as this partition's", id,
                   watermark_error.describe());
    }
    const std::int64_t start = p->position != kafka::offset_invalid ? p->position : low;
    const bool input_waiting = watermark_error || high > start;
    const StartDecision d = decide_start(previous, start, input_waiting, config_.quarantine.deaths,
                                         limits_.max_records, instance_tag_);
    p->tracked = true;
    p->deaths = d.deaths;
    p->quarantine = d.quarantine;
    p->quarantine_until = d.until;
    p->convict = d.convict;
    p->quarantine_start = start;
    p->marker_offset = start;
    p->prior_suspect = d.suspect;
    p->prior_tries = d.tries;
    p->grow = d.grow;
    p->alone = d.alone;
    p->chunk = 1;
    p->suspect_written = -1;
    p->chunk_span = 1;
    if (d.quarantine && previous && previous->state == Marker::State::quarantine) {
      p->quarantine_start = previous->offset;
      p->deaths = std::max(d.deaths, previous->deaths);
    }
    if (d.own) {
      spdlog::info("{}: this process owned it last and lost it alive at offset {}: no death is "
                   "counted{}",
                   id, start, d.quarantine ? fmt::format(" (the quarantine goes on to {})", d.until) : "");
    } else if (d.narrowed) {
      spdlog::warn("{}: the last owner died in the quarantine's transaction from offset {}: "
                   "running its {} records one per transaction",
                   id, start, d.alone);
    } else if (d.suspect >= 0) {
      spdlog::warn("{}: the last owner died while running offset {} alone ({} of {}): running it "
                   "alone once more",
                   id, d.suspect, d.tries, tries_to_convict);
    } else if (d.convict) {
      spdlog::warn("{}: the last owners died {} times while running offset {} alone: it goes to "
                   "on_error (\"{}\") with error class crash",
                   id, tries_to_convict, *d.convict,
                   config_.pipeline.on_error == config::OnError::dlq    ? "dlq"
                   : config_.pipeline.on_error == config::OnError::skip ? "skip"
                                                                        : "fail");
    } else if (d.quarantine) {
      spdlog::warn("{}: {} deaths in a row at offset {}: quarantine, running offsets [{}, {}) in "
                   "transactions of their own, from 1 record each, doubling",
                   id, p->deaths, p->quarantine_start, start, d.until);
    } else if (d.deaths > 0) {
      spdlog::warn("{}: the last owner died at offset {} without a clean stop ({} in a row; "
                   "quarantine at {})",
                   id, start, d.deaths, config_.quarantine.deaths);
    }
    if (d.write) writes.emplace_back(p, d.write);
  }
  std::vector<std::future<MarkerWrite>> running;
  for (auto& [p, marker] : writes) {
    running.push_back(std::async(std::launch::async, [this, p = p, &marker = marker, deadline] {
      return write_marker(*p, marker, std::max(deadline, Clock::now() + 5s));
    }));
  }
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (const MarkerWrite w = running[i].get()) {
      Partition& p = *writes[i].first;
      spdlog::error("{}: cannot write its quarantine marker: {}", p.producer->transactional_id(),
                    w.error.describe());
      if (w.producer_lost) recreate(p, w.error);
    }
  }
}

bool Engine::quarantine_step(Partition& p, std::int64_t offset) {
  const auto deadline = Clock::now() + config_.transactions.commit_timeout;
  if (offset >= p.quarantine_until) {
    p.quarantine = false;
    p.convict.reset();
    spdlog::info("{}: quarantine of offsets [{}, {}) done", p.producer->transactional_id(),
                 p.quarantine_start, p.quarantine_until);
    const Marker running{
        .state = Marker::State::running, .offset = offset, .started = true, .owner = instance_tag_};
    p.marker_offset = offset;
    p.started_written = true;
    if (const MarkerWrite w = write_marker(p, running, deadline)) {
      // The next owner reads the old quarantine marker as ended: only this owner's own death
      // count starts lower.
      spdlog::warn("{}: cannot write its marker: {}", p.producer->transactional_id(),
                   w.error.describe());
      if (w.producer_lost) {
        recreate(p, w.error);
        return false;
      }
    }
    return true;
  }
  const std::int64_t from = quarantine_from(p);
  if (p.convict && *p.convict == from) {
    p.chunk_span = 1;  // it goes to on_error alone, in a transaction of its own
    return true;
  }
  // A redo of the transaction named by the last marker (after an abort): it still stands.
  if (p.suspect_written == from) return true;
  // Named before they run: should the process die now, the next owner runs these records alone,
  // or convicts the one that runs alone.
  const bool single = p.alone > 0 || from == p.prior_suspect;
  const std::int64_t span =
      single ? 1 : std::clamp<std::int64_t>(p.quarantine_until - from, 1, p.chunk);
  const Marker marker{.state = Marker::State::quarantine,
                      .offset = p.quarantine_start,
                      .deaths = p.deaths,
                      .suspect = from,
                      .until = p.quarantine_until,
                      .tries = span == 1 && from == p.prior_suspect ? p.prior_tries + 1 : 1,
                      .span = span,
                      .grow = p.grow,
                      .alone = p.alone,
                      .owner = instance_tag_};
  if (const MarkerWrite w = write_marker(p, marker, deadline)) {
    spdlog::warn("{}: cannot write the marker of the transaction from offset {}: {}; retrying",
                 p.producer->transactional_id(), from, w.error.describe());
    if (p.position == kafka::offset_invalid) p.position = from;
    if (w.producer_lost) {
      recreate(p, w.error);
    } else {
      pause_for_backoff(p);
    }
    return false;
  }
  p.suspect_written = from;
  p.chunk_span = span;
  return true;
}

bool Engine::mark_started(Partition& p) {
  p.started_written = true;  // once per owner, whatever happens: a failure counts no death
  const Marker marker{.state = Marker::State::running,
                      .offset = p.marker_offset,
                      .deaths = p.deaths,
                      .started = true,
                      .owner = instance_tag_};
  if (const MarkerWrite w =
          write_marker(p, marker, Clock::now() + config_.transactions.commit_timeout)) {
    spdlog::warn("{}: cannot write its marker: {}", p.producer->transactional_id(),
                 w.error.describe());
    if (w.producer_lost) {
      recreate(p, w.error);
      return false;
    }
  }
  return true;
}

Marker Engine::alive_marker(const Partition& p) const {
  if (p.quarantine) {
    return Marker{.state = Marker::State::quarantine,
                  .offset = p.quarantine_start,
                  .deaths = p.deaths,
                  .until = p.quarantine_until,
                  .grow = p.grow,
                  .alone = p.alone,
                  .owner = instance_tag_};
  }
  return Marker{.state = Marker::State::running,
                .offset = p.marker_offset,
                .deaths = p.deaths,
                .owner = instance_tag_};
}

void Engine::stop_markers(std::span<Partition* const> parts, bool lost,
                          Clock::time_point deadline) {
  std::vector<std::pair<Partition*, std::optional<Marker>>> writes;
  for (Partition* p : parts) {
    // An owner whose producer is gone, or whose transaction is still open, writes nothing: the
    // next owner counts a death, which is the safe side.
    if (!p->tracked || !p->producer || p->in_transaction || p->needs_producer) continue;
    // Only a transactional producer's write is fenced once a new owner has begun: a plain one
    // could land after the new owner's marker and hide its death.
    if (lost && !p->producer->transactional()) continue;
    // A clean stop leaves a tombstone (in a quarantine, its marker without a suspect). An owner
    // that lost the partition leaves its count standing: it is alive, and says so if its
    // producer is not fenced yet (a new owner that read the marker first counts a death).
    std::optional<Marker> marker;
    if (lost || p->quarantine) marker = alive_marker(*p);
    writes.emplace_back(p, marker);
  }
  std::vector<std::future<MarkerWrite>> running;
  for (auto& [p, marker] : writes) {
    running.push_back(std::async(std::launch::async, [this, p = p, &marker = marker, deadline] {
      return write_marker(*p, marker, deadline);
    }));
  }
  for (std::size_t i = 0; i < writes.size(); ++i) {
    if (const MarkerWrite w = running[i].get()) {
      spdlog::log(lost ? spdlog::level::info : spdlog::level::warn,
                  "{}: cannot write its {} marker ({}): the next owner counts a death",
                  writes[i].first->producer->transactional_id(), lost ? "lost-alive" : "clean-stop",
                  w.error.describe());
    }
  }
}

void Engine::abort_all(Clock::time_point deadline) {
  settle_every();
  const auto open = open_transactions();
  const std::vector<bool> aborted = abort_transactions(open, deadline);
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (!open[i]->producer) continue;
    if (aborted[i]) note_aborted(*open[i], "shutdown");
    open[i]->in_transaction = false;
    if (!instance_scope_ || i == 0) {
      counters_.aborted.fetch_add(1, std::memory_order_relaxed);
      observer_.metrics.transaction_aborted(ops::AbortReason::shutdown);
    }
  }
}

std::vector<bool> Engine::abort_transactions(std::span<Partition* const> open,
                                             Clock::time_point deadline) {
  std::vector<bool> aborted(open.size(), false);
  const auto timeout = bound(config_.transactions.commit_timeout, deadline);
  if (instance_scope_) {
    if (!open.empty() && instance_producer_ && instance_open_) {
      const bool ok = !instance_producer_->abort_transaction(timeout);
      if (ok) instance_open_ = false;
      std::fill(aborted.begin(), aborted.end(), ok);
    }
    return aborted;
  }
  for (std::size_t i = 0; i < open.size(); ++i) {
    if (open[i]->producer) aborted[i] = !open[i]->producer->abort_transaction(timeout);
  }
  return aborted;
}

int Engine::shutdown(const std::atomic<int>& signals, int code) {
  stopping_ = true;
  const auto deadline = Clock::now() + config_.shutdown_timeout;
  if (signals.load() > 0) spdlog::info("signal received: committing what is open, then leaving");
  // Stop fetching: nothing new is processed from here on. The commits get two thirds of the
  // budget, so that leaving the group (which hands the partitions over at once) still fits.
  settle_every();
  auto open = open_transactions();
  if (!open.empty()) commit(open, Clock::now() + config_.shutdown_timeout * 2 / 3, "shutdown");
  if (signals.load() > 1) {
    spdlog::warn("second signal: aborting open transactions and exiting");
    // One short try each: the next owner's init_transactions aborts whatever this leaves open.
    open = open_transactions();
    const std::vector<bool> aborted = abort_transactions(open, Clock::now() + 1s);
    for (std::size_t i = 0; i < open.size(); ++i) {
      if (aborted[i]) note_aborted(*open[i], "second signal");
      open[i]->in_transaction = false;
    }
    return exit_second_signal;
  }
  // Anything still open here failed to commit: abort it so it never lingers.
  abort_all(deadline);
  const bool closed = consumer_->close(deadline);
  for (auto& [number, p] : partitions_) report_counts(p);
  observer_.metrics.flush_transform();
  partitions_.clear();
  spdlog::info("stopped: consumed {} produced {} dead-lettered {} skipped {} transactions "
               "committed {} aborted {}",
               counters_.consumed.load(), counters_.produced.load(), counters_.dead_lettered.load(),
               counters_.skipped.load(), counters_.committed.load(), counters_.aborted.load());
  if (code != exit_ok) {
    spdlog::error("exiting with code {}: {}", code, stop_reason_);
    return code;
  }
  if (!closed) {
    spdlog::error("could not leave the group within shutdown.timeout_ms ({} ms)",
                  config_.shutdown_timeout.count());
    return exit_failure;
  }
  if (signals.load() > 1) return exit_second_signal;
  return exit_ok;
}

}  // namespace exactly::engine
