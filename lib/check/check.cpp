#include "check/check.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "check/acl.h"
#include "check/rules.h"
#include "kafka/admin.h"
#include "kafka/client_errors.h"
#include "util/parse_int.h"

namespace exactly::check {
namespace {

using ConfigMap = std::map<std::string, std::string>;

using util::parse_int;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

class Checker {
 public:
  Checker(const config::Config& config, const Options& options, LineSink sink)
      : config_(config), options_(options), sink_(std::move(sink)) {}

  Result run(bool full) {
    if (!connect()) return std::move(result_);
    topics();
    if (full) durability_of_outputs();
    broker_limits();
    emit(timing(config_.transactions,
                max_poll_interval(config_.librdkafka_common, config_.librdkafka_consumer)));
    if (full) {
      held_partitions();
      quarantine();
      lineage();
      acls();
    }
    return std::move(result_);
  }

 private:
  const config::Config& config_;
  const Options& options_;
  LineSink sink_;
  Result result_;
  std::unique_ptr<kafka::AdminClient> admin_;  // read_committed
  std::vector<std::int32_t> brokers_;
  TopicFacts input_;
  TopicFacts output_;
  std::optional<TopicFacts> dlq_;
  std::optional<TopicFacts> lineage_;  // pipeline.lineage_topic, when set
  // authorizer.class.name of the first broker that answered, for the ACLs.
  std::optional<std::string> authorizer_;

  void emit(Line line) {
    if (sink_) sink_(line);
    result_.lines.push_back(std::move(line));
  }
  void emit(std::vector<Line> lines) {
    for (auto& line : lines) emit(std::move(line));
  }

  [[nodiscard]] kafka::Properties client_properties() const {
    kafka::Properties props{{"bootstrap.servers", config_.kafka.bootstrap_servers},
                            {"client.id", config_.kafka.client_id}};
    props.insert(props.end(), config_.librdkafka_common.begin(), config_.librdkafka_common.end());
    return props;
  }

  bool connect() {
    std::string error;
    admin_ =
        kafka::AdminClient::create(client_properties(), kafka::Isolation::read_committed, error);
    if (!admin_) {
      result_.error = error;
      return false;
    }
    if (auto e = admin_->broker_ids(brokers_, options_.request_timeout)) {
      if (e.name() == "_AUTHENTICATION") {
        std::string mechanism = "GSSAPI";  // librdkafka's default
        for (const auto& [name, value] : client_properties()) {
          if (name == "sasl.mechanism" || name == "sasl.mechanisms") mechanism = value;
        }
        const std::string hint = kafka::authentication_hint(mechanism);
        result_.error = fmt::format(
            "the cluster at {} refused the login: {}. Check sasl.username and sasl.password (and "
            "the ${{VAR}} or _file they come from) and sasl.mechanism = \"{}\"{}{}",
            config_.kafka.bootstrap_servers, e.message(), mechanism, hint.empty() ? "" : "; ",
            hint);
      } else {
        result_.error = fmt::format("the cluster at {} did not answer within {} ms: {}",
                                    config_.kafka.bootstrap_servers,
                                    options_.request_timeout.count(), e.describe());
      }
      return false;
    }
    std::sort(brokers_.begin(), brokers_.end());
    return true;
  }

  TopicFacts describe(const std::string& role, const std::string& name) {
    TopicFacts facts;
    facts.role = role;
    facts.name = name;
    kafka::TopicDescription description;
    if (auto e = admin_->describe_topic(name, description, options_.request_timeout)) {
      facts.error = e.describe();
    } else {
      facts.exists = description.exists;
      facts.partitions = description.partitions;
      facts.replication_factor = description.replication_factor;
    }
    return facts;
  }

  // Item 1.
  void topics() {
    input_ = describe("input", config_.pipeline.input_topic);
    output_ = describe("output", config_.pipeline.output_topic);
    emit(topic_exists(input_));
    emit(topic_exists(output_));
    if (config_.pipeline.on_error == config::OnError::dlq) {
      dlq_ = describe("dead-letter", config_.pipeline.dlq_topic);
      emit(topic_exists(*dlq_));
    }
    if (auto line = partitions_fit(config_.pipeline.partitioning, input_, output_)) emit(*line);
    if (!config_.pipeline.lineage_topic.empty()) {
      lineage_ = describe("lineage", config_.pipeline.lineage_topic);
    }
  }

  // Item 2.
  void durability_of_outputs() {
    for (const TopicFacts* topic :
         {&output_, dlq_ ? &*dlq_ : nullptr, lineage_ ? &*lineage_ : nullptr}) {
      if (topic == nullptr || !topic->exists) continue;
      ConfigMap topic_config;
      std::optional<int> min_insync;
      std::string error;
      if (auto e = admin_->describe_config(kafka::ConfigResource::topic, topic->name, topic_config,
                                           options_.request_timeout)) {
        error = e.describe();
      } else if (const auto it = topic_config.find("min.insync.replicas");
                 it != topic_config.end()) {
        if (const auto value = parse_int(it->second)) min_insync = static_cast<int>(*value);
      }
      emit(durability(*topic, min_insync, error));
    }
  }

  // Item 3. Any broker may coordinate a transactional id: each one's limit counts.
  void broker_limits() {
    std::vector<BrokerLimit> limits;
    for (const std::int32_t id : brokers_) {
      BrokerLimit limit;
      limit.broker = id;
      ConfigMap broker_config;
      if (auto e = admin_->describe_config(kafka::ConfigResource::broker, std::to_string(id),
                                           broker_config, options_.request_timeout)) {
        limit.error = e.describe();
      } else {
        if (const auto it = broker_config.find("transaction.max.timeout.ms");
            it != broker_config.end()) {
          limit.max_timeout_ms = parse_int(it->second);
        }
        if (const auto it = broker_config.find("authorizer.class.name");
            it != broker_config.end() && !authorizer_) {
          authorizer_ = it->second;
        }
      }
      limits.push_back(std::move(limit));
    }
    emit(transaction_timeout_fits(config_.transactions.timeout, limits));
  }

  // Item 5: the last stable offset from a read_committed client, the high watermark from a
  // read_uncommitted one (both ask ListOffsets for the latest offset; the broker answers by the
  // request's isolation level).
  void held_partitions() {
    if (!input_.exists) return;
    const std::string& topic = input_.name;
    std::string error;
    auto uncommitted =
        kafka::AdminClient::create(client_properties(), kafka::Isolation::read_uncommitted, error);
    if (!uncommitted) {
      emit({Status::warn, fmt::format("input topic '{}': cannot watch its last stable offsets: {}",
                                      topic, error)});
      return;
    }
    const auto observe = [&](std::vector<PartitionEnds>& ends) -> bool {
      std::vector<std::int64_t> stable;
      std::vector<std::int64_t> high;
      kafka::Error e =
          admin_->end_offsets(topic, input_.partitions, stable, options_.request_timeout);
      if (!e)
        e = uncommitted->end_offsets(topic, input_.partitions, high, options_.request_timeout);
      if (e) {
        emit({Status::warn, fmt::format("input topic '{}': cannot read its last stable offsets: {}",
                                        topic, e.describe())});
        return false;
      }
      ends.clear();
      for (int p = 0; p < input_.partitions; ++p) {
        const auto i = static_cast<std::size_t>(p);
        ends.push_back({p, stable[i], high[i]});
      }
      return true;
    };
    std::vector<PartitionEnds> before;
    std::vector<PartitionEnds> after;
    if (!observe(before)) return;
    std::this_thread::sleep_for(options_.lso_window);
    if (!observe(after)) return;
    emit(stable_offsets(topic, before, after, options_.lso_window));
  }

  // Item 6.
  void quarantine() {
    const auto& q = config_.quarantine;
    if (!q.enabled) {
      emit(marker_topic(q, false, std::nullopt));
      return;
    }
    const TopicFacts facts = describe("quarantine marker", q.topic);
    if (!facts.error.empty()) {
      emit(marker_topic(q, true, std::nullopt, facts.error));
      return;
    }
    if (!facts.exists) {
      emit(marker_topic(q, false, std::nullopt));
      return;
    }
    ConfigMap topic_config;
    if (auto e = admin_->describe_config(kafka::ConfigResource::topic, q.topic, topic_config,
                                         options_.request_timeout)) {
      emit(marker_topic(q, true, std::nullopt, e.describe()));
      return;
    }
    const auto it = topic_config.find("cleanup.policy");
    emit(marker_topic(
        q, true, it != topic_config.end() ? std::optional<std::string>{it->second} : std::nullopt));
  }

  // Item 8.
  void lineage() {
    if (!lineage_) return;
    LineageTopicFacts facts;
    facts.topic = *lineage_;
    if (lineage_->exists && lineage_->error.empty()) {
      const auto number = [](const ConfigMap& config, const char* name) {
        const auto it = config.find(name);
        return it == config.end() ? std::nullopt : parse_int(it->second);
      };
      ConfigMap topic_config;
      if (auto e = admin_->describe_config(kafka::ConfigResource::topic, lineage_->name,
                                           topic_config, options_.request_timeout)) {
        facts.config_error = e.describe();
      } else {
        facts.max_message_bytes = number(topic_config, "max.message.bytes");
        facts.retention_ms = number(topic_config, "retention.ms");
        if (const auto it = topic_config.find("cleanup.policy"); it != topic_config.end()) {
          facts.cleanup_policy = it->second;
        }
      }
      ConfigMap output_config;
      if (output_.exists &&
          !admin_->describe_config(kafka::ConfigResource::topic, output_.name, output_config,
                                   options_.request_timeout)) {
        facts.output_retention_ms = number(output_config, "retention.ms");
      }
    }
    emit(lineage_topic(config_.pipeline, facts));
  }

  // Item 7.
  void acls() {
    const std::string principal = principal_of(config_);
    // librdkafka 2.0.2 drops DescribeAcls' SECURITY_DISABLED (an empty answer, no error): the
    // broker's own setting tells whether there is an authorizer.
    if (authorizer_ && authorizer_->empty()) {
      emit({Status::pass, "ACLs: the cluster has no authorizer (authorizer.class.name is empty)"});
      return;
    }
    const auto requirements = required_acls(config_);
    std::string needed;
    for (const auto& r : requirements) needed += (needed.empty() ? "" : ", ") + check::describe(r);
    std::vector<kafka::AclBinding> bindings;
    if (auto e = admin_->describe_acls(bindings, options_.request_timeout)) {
      emit({Status::warn, fmt::format("ACLs: cannot describe them ({}; that needs Describe on the "
                                      "cluster); {} needs {}",
                                      e.describe(), principal, needed)});
      return;
    }
    if (!authorizer_ && bindings.empty()) {
      emit({Status::warn, fmt::format("ACLs: none visible, and the brokers' authorizer.class.name "
                                      "could not be read: either the cluster has no authorizer or "
                                      "nothing is granted; {} needs {}",
                                      principal, needed)});
      return;
    }
    const AclContext context{principal};
    // Without SASL, an SSL client's principal is the name in its certificate, not ANONYMOUS.
    bool certain = true;
    for (const auto& [name, value] : config_.librdkafka_common) {
      if (name == "security.protocol") certain = lower(value) != "ssl";
    }
    if (principal != "User:ANONYMOUS") certain = true;
    emit(acl_lines(bindings, context, requirements, certain));
  }
};

}  // namespace

Result check_all(const config::Config& config, const Options& options, const LineSink& sink) {
  return Checker(config, options, sink).run(true);
}

Result check_startup(const config::Config& config, const Options& options) {
  return Checker(config, options, {}).run(false);
}

}  // namespace exactly::check
