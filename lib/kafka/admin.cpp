#include "kafka/admin.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "kafka/client_errors.h"
#include "kafka/committed_rdkafka.h"
#include "kafka/conf_rdkafka.h"
#include "kafka/error_rdkafka.h"
#include "kafka/timeout.h"

namespace exactly::kafka {
namespace {

struct NewTopicDeleter {
  void operator()(rd_kafka_NewTopic_t* p) const noexcept { rd_kafka_NewTopic_destroy(p); }
};
struct ConfigResourceDeleter {
  void operator()(rd_kafka_ConfigResource_t* p) const noexcept { rd_kafka_ConfigResource_destroy(p); }
};
struct AdminOptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* p) const noexcept { rd_kafka_AdminOptions_destroy(p); }
};
struct AclBindingDeleter {
  void operator()(rd_kafka_AclBinding_t* p) const noexcept { rd_kafka_AclBinding_destroy(p); }
};

// librdkafka's log levels are syslog's.
constexpr int log_level_error = 3;
constexpr int log_level_info = 6;

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds time_left(Clock::time_point deadline) {
  return std::max(std::chrono::milliseconds{0},
                  std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
}

bool worth_retrying(rd_kafka_resp_err_t code) {
  return code != RD_KAFKA_RESP_ERR__TIMED_OUT && make_error(code).kind() == ErrorKind::retriable;
}

// DescribeConfigs of one resource on `rk`; `what` names it in messages ("topic 'x'", "broker 1").
Error describe_config_on(rd_kafka_t* rk, rd_kafka_ResourceType_t type, const std::string& name,
                         const std::string& what, std::map<std::string, std::string>& config,
                         std::chrono::milliseconds timeout) {
  std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDeleter> resource{
      rd_kafka_ConfigResource_new(type, name.c_str())};
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  QueueHandle queue{rd_kafka_queue_new(rk)};
  char errstr[512] = {};
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options{
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS)};
  rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms(timeout), errstr,
                                            sizeof errstr);
  rd_kafka_DescribeConfigs(rk, resources, 1, options.get(), queue.get());
  EventHandle event{rd_kafka_queue_poll(queue.get(), timeout_ms(timeout) + 5000)};
  if (!event) return make_error(RD_KAFKA_RESP_ERR__TIMED_OUT, fmt::format("describing {}", what));
  if (auto err = rd_kafka_event_error(event.get())) {
    return make_error(err, fmt::format("describing {}: {}", what,
                                       rd_kafka_event_error_string(event.get())));
  }
  const rd_kafka_DescribeConfigs_result_t* result = rd_kafka_event_DescribeConfigs_result(event.get());
  std::size_t count = 0;
  const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &count);
  for (std::size_t i = 0; i < count; ++i) {
    if (auto err = rd_kafka_ConfigResource_error(described[i])) {
      const char* msg = rd_kafka_ConfigResource_error_string(described[i]);
      return make_error(err, fmt::format("{}: {}", what, msg != nullptr ? msg : ""));
    }
    std::size_t entries = 0;
    const rd_kafka_ConfigEntry_t** list = rd_kafka_ConfigResource_configs(described[i], &entries);
    for (std::size_t j = 0; j < entries; ++j) {
      const char* value = rd_kafka_ConfigEntry_value(list[j]);
      config[rd_kafka_ConfigEntry_name(list[j])] = value != nullptr ? value : "";
    }
  }
  return {};
}

AclResource from_rdkafka(rd_kafka_ResourceType_t type) {
  switch (type) {
    case RD_KAFKA_RESOURCE_ANY: return AclResource::any;
    case RD_KAFKA_RESOURCE_TOPIC: return AclResource::topic;
    case RD_KAFKA_RESOURCE_GROUP: return AclResource::group;
    case RD_KAFKA_RESOURCE_BROKER: return AclResource::cluster;
    default: return AclResource::unknown;
  }
}

AclPattern from_rdkafka(rd_kafka_ResourcePatternType_t pattern) {
  switch (pattern) {
    case RD_KAFKA_RESOURCE_PATTERN_ANY: return AclPattern::any;
    case RD_KAFKA_RESOURCE_PATTERN_MATCH: return AclPattern::match;
    case RD_KAFKA_RESOURCE_PATTERN_LITERAL: return AclPattern::literal;
    case RD_KAFKA_RESOURCE_PATTERN_PREFIXED: return AclPattern::prefixed;
    default: return AclPattern::unknown;
  }
}

AclOperation from_rdkafka(rd_kafka_AclOperation_t operation) {
  switch (operation) {
    case RD_KAFKA_ACL_OPERATION_ANY: return AclOperation::any;
    case RD_KAFKA_ACL_OPERATION_ALL: return AclOperation::all;
    case RD_KAFKA_ACL_OPERATION_READ: return AclOperation::read;
    case RD_KAFKA_ACL_OPERATION_WRITE: return AclOperation::write;
    case RD_KAFKA_ACL_OPERATION_CREATE: return AclOperation::create;
    case RD_KAFKA_ACL_OPERATION_DELETE: return AclOperation::remove;
    case RD_KAFKA_ACL_OPERATION_ALTER: return AclOperation::alter;
    case RD_KAFKA_ACL_OPERATION_DESCRIBE: return AclOperation::describe;
    case RD_KAFKA_ACL_OPERATION_CLUSTER_ACTION: return AclOperation::cluster_action;
    case RD_KAFKA_ACL_OPERATION_DESCRIBE_CONFIGS: return AclOperation::describe_configs;
    case RD_KAFKA_ACL_OPERATION_ALTER_CONFIGS: return AclOperation::alter_configs;
    case RD_KAFKA_ACL_OPERATION_IDEMPOTENT_WRITE: return AclOperation::idempotent_write;
    default: return AclOperation::unknown;
  }
}

AclPermission from_rdkafka(rd_kafka_AclPermissionType_t permission) {
  switch (permission) {
    case RD_KAFKA_ACL_PERMISSION_TYPE_ANY: return AclPermission::any;
    case RD_KAFKA_ACL_PERMISSION_TYPE_DENY: return AclPermission::deny;
    case RD_KAFKA_ACL_PERMISSION_TYPE_ALLOW: return AclPermission::allow;
    default: return AclPermission::unknown;
  }
}

}  // namespace

Error create_topics(const Properties& properties, const std::vector<NewTopic>& topics,
                    bool exist_ok, std::chrono::milliseconds timeout) {
  std::string error;
  ConfHandle conf = make_conf(properties, error);
  if (!conf) return Error{ErrorKind::other, -1, "CONFIG", error};
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, conf, error);
  if (!rk) return Error{ErrorKind::other, -1, "CLIENT", error};

  std::vector<std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDeleter>> owned;
  std::vector<rd_kafka_NewTopic_t*> raw;
  char errstr[512] = {};
  for (const auto& t : topics) {
    rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(t.name.c_str(), t.partitions,
                                                    t.replication_factor, errstr, sizeof errstr);
    if (nt == nullptr) {
      return Error{ErrorKind::other, -1, "INVALID_ARG",
                   fmt::format("topic '{}': {}", t.name, errstr)};
    }
    owned.emplace_back(nt);
    for (const auto& [name, value] : t.configs) {
      if (auto err = rd_kafka_NewTopic_set_config(nt, name.c_str(), value.c_str())) {
        return make_error(err, fmt::format("topic '{}' config '{}'", t.name, name));
      }
    }
    raw.push_back(nt);
  }
  QueueHandle queue{rd_kafka_queue_new(rk.get())};
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options{
      rd_kafka_AdminOptions_new(rk.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS)};
  rd_kafka_AdminOptions_set_operation_timeout(options.get(), timeout_ms(timeout), errstr,
                                              sizeof errstr);
  rd_kafka_CreateTopics(rk.get(), raw.data(), raw.size(), options.get(), queue.get());
  EventHandle event{rd_kafka_queue_poll(queue.get(), timeout_ms(timeout) + 5000)};
  if (!event) return make_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "creating topics");
  if (auto err = rd_kafka_event_error(event.get())) {
    return make_error(err, fmt::format("creating topics: {}", rd_kafka_event_error_string(event.get())));
  }
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
  std::size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
  for (std::size_t i = 0; i < count; ++i) {
    const auto err = rd_kafka_topic_result_error(results[i]);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (exist_ok && err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) continue;
    const char* msg = rd_kafka_topic_result_error_string(results[i]);
    return make_error(err, fmt::format("topic '{}': {}", rd_kafka_topic_result_name(results[i]),
                                       msg != nullptr ? msg : ""));
  }
  return {};
}

Error describe_topic_config(const Properties& properties, const std::string& topic,
                            std::map<std::string, std::string>& config,
                            std::chrono::milliseconds timeout) {
  std::string error;
  ConfHandle conf = make_conf(properties, error);
  if (!conf) return Error{ErrorKind::other, -1, "CONFIG", error};
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, conf, error);
  if (!rk) return Error{ErrorKind::other, -1, "CLIENT", error};
  // A topic just created is in the metadata of some brokers before others, and DescribeConfigs
  // goes to any of them: its absence, like a retriable error, is asked again until the deadline.
  const auto deadline = Clock::now() + timeout;
  while (true) {
    config.clear();
    Error e = describe_config_on(rk.get(), RD_KAFKA_RESOURCE_TOPIC, topic,
                                 fmt::format("topic '{}'", topic), config, time_left(deadline));
    if (!e) return e;
    const auto code = static_cast<rd_kafka_resp_err_t>(e.code());
    const bool again = code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || worth_retrying(code);
    if (!again || time_left(deadline) < std::chrono::milliseconds{250}) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
  }
}

std::unique_ptr<AdminClient> AdminClient::create(const Properties& properties, Isolation isolation,
                                                 std::string& error) {
  Properties all = properties;
  // Ours, after the caller's: a metadata request must never create a topic it names, and the
  // isolation decides what end_offsets means.
  all.emplace_back("allow.auto.create.topics", "false");
  all.emplace_back("isolation.level", isolation == Isolation::read_committed ? "read_committed"
                                                                             : "read_uncommitted");
  ConfHandle conf = make_conf(all, error);
  if (!conf) return nullptr;
  KafkaHandle rk = make_client(RD_KAFKA_CONSUMER, conf, error);
  if (!rk) return nullptr;
  std::unique_ptr<AdminClient> client{new AdminClient()};
  client->rk_ = rk.release();
  return client;
}

AdminClient::~AdminClient() {
  // Never subscribed nor assigned: there is no group to leave, and a close could only block.
  if (rk_ != nullptr) rd_kafka_destroy_flags(rk_, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

Error AdminClient::broker_ids(std::vector<std::int32_t>& ids,
                              std::chrono::milliseconds timeout) const {
  // Asked in slices of a second, serving the error callback between them: credentials the cluster
  // refuses end the wait at once, with librdkafka's reason.
  const auto deadline = Clock::now() + timeout;
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  while (true) {
    const auto slice = std::min<std::chrono::milliseconds>(time_left(deadline), std::chrono::seconds{1});
    // No topic named and none known to this fresh client: the answer is the broker list.
    err = rd_kafka_metadata(rk_, 0, nullptr, &raw, timeout_ms(slice));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    rd_kafka_poll(rk_, 0);
    if (const auto refused = authentication_failure()) {
      return Error{ErrorKind::other, RD_KAFKA_RESP_ERR__AUTHENTICATION, refused->name,
                   refused->reason};
    }
    if (Clock::now() >= deadline) {
      Error e = make_error(err, "cluster metadata");
      if (const auto latest = last_client_error()) {
        return Error{e.kind(), e.code(), e.name(),
                     fmt::format("{} (the clients' last error: {}: {})", e.message(), latest->name,
                                 latest->reason)};
      }
      return e;
    }
  }
  MetadataHandle metadata{raw};
  ids.clear();
  for (int i = 0; i < metadata->broker_cnt; ++i) ids.push_back(metadata->brokers[i].id);
  return {};
}

Error AdminClient::committed_offsets(const std::string& topic, int partitions,
                                     std::vector<std::int64_t>& offsets,
                                     std::chrono::milliseconds timeout) const {
  std::vector<PartitionOffset> all;
  for (int p = 0; p < partitions; ++p) all.push_back({p, offset_invalid});
  if (Error e = fetch_committed(rk_, topic, all, timeout)) return e;
  offsets.assign(static_cast<std::size_t>(partitions), -1);
  for (const auto& p : all) {
    if (p.offset != offset_invalid) offsets[static_cast<std::size_t>(p.partition)] = p.offset;
  }
  return {};
}

Error AdminClient::describe_topic(const std::string& topic, TopicDescription& description,
                                  std::chrono::milliseconds timeout) const {
  constexpr std::chrono::milliseconds unknown_topic_grace{3000};
  const auto started = Clock::now();
  const auto deadline = started + timeout;
  while (true) {
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
    if (rkt == nullptr) {
      return make_error(rd_kafka_last_error(), fmt::format("topic '{}'", topic));
    }
    const rd_kafka_metadata_t* raw = nullptr;
    const rd_kafka_resp_err_t err =
        rd_kafka_metadata(rk_, 0, rkt, &raw, timeout_ms(time_left(deadline)));
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return make_error(err, fmt::format("metadata of topic '{}'", topic));
    }
    MetadataHandle metadata{raw};
    description = {};
    const rd_kafka_metadata_topic_t* found = nullptr;
    for (int i = 0; i < metadata->topic_cnt; ++i) {
      if (topic == metadata->topics[i].topic) found = &metadata->topics[i];
    }
    if (found == nullptr || found->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      // A topic created a moment ago may not be in every broker's metadata yet: only a topic
      // still unknown after a short grace does not exist.
      if (Clock::now() - started >= unknown_topic_grace || time_left(deadline).count() == 0) {
        return {};
      }
      std::this_thread::sleep_for(std::min(std::chrono::milliseconds{200}, time_left(deadline)));
      continue;
    }
    rd_kafka_resp_err_t topic_err = found->err;
    if (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR && found->partition_cnt == 0) {
      topic_err = RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE;  // just created: not everywhere yet
    }
    if (topic_err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      description.exists = true;
      description.partitions = found->partition_cnt;
      for (int p = 0; p < found->partition_cnt; ++p) {
        description.replication_factor =
            std::max(description.replication_factor, found->partitions[p].replica_cnt);
      }
      return {};
    }
    if (!worth_retrying(topic_err) || time_left(deadline).count() == 0) {
      return make_error(topic_err, fmt::format("topic '{}'", topic));
    }
    std::this_thread::sleep_for(std::min(std::chrono::milliseconds{100}, time_left(deadline)));
  }
}

Error AdminClient::describe_config(ConfigResource type, const std::string& name,
                                   std::map<std::string, std::string>& config,
                                   std::chrono::milliseconds timeout) const {
  return type == ConfigResource::topic
             ? describe_config_on(rk_, RD_KAFKA_RESOURCE_TOPIC, name,
                                  fmt::format("topic '{}'", name), config, timeout)
             : describe_config_on(rk_, RD_KAFKA_RESOURCE_BROKER, name,
                                  fmt::format("broker {}", name), config, timeout);
}

Error AdminClient::describe_acls(std::vector<AclBinding>& bindings,
                                 std::chrono::milliseconds timeout) const {
  char errstr[512] = {};
  std::unique_ptr<rd_kafka_AclBindingFilter_t, AclBindingDeleter> filter{
      rd_kafka_AclBindingFilter_new(RD_KAFKA_RESOURCE_ANY, nullptr, RD_KAFKA_RESOURCE_PATTERN_ANY,
                                    nullptr, nullptr, RD_KAFKA_ACL_OPERATION_ANY,
                                    RD_KAFKA_ACL_PERMISSION_TYPE_ANY, errstr, sizeof errstr)};
  if (!filter) return Error{ErrorKind::other, -1, "INVALID_ARG", errstr};
  QueueHandle queue{rd_kafka_queue_new(rk_)};
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options{
      rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_DESCRIBEACLS)};
  rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms(timeout), errstr,
                                            sizeof errstr);
  // librdkafka 2.0.2 logs a warning for every binding of a resource type it does not know, and
  // every TransactionalId binding is one: while this request runs, only errors are logged.
  char level[16] = {};
  std::size_t level_size = sizeof level;
  const bool have_level = rd_kafka_conf_get(rd_kafka_conf(rk_), "log_level", level, &level_size) ==
                          RD_KAFKA_CONF_OK;
  rd_kafka_set_log_level(rk_, log_level_error);
  rd_kafka_DescribeAcls(rk_, filter.get(), options.get(), queue.get());
  EventHandle event{rd_kafka_queue_poll(queue.get(), timeout_ms(timeout) + 5000)};
  rd_kafka_set_log_level(rk_, have_level ? std::atoi(level) : log_level_info);
  if (!event) return make_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "describing the ACLs");
  if (auto err = rd_kafka_event_error(event.get())) {
    return make_error(err, fmt::format("describing the ACLs: {}",
                                       rd_kafka_event_error_string(event.get())));
  }
  const rd_kafka_DescribeAcls_result_t* result = rd_kafka_event_DescribeAcls_result(event.get());
  std::size_t count = 0;
  const rd_kafka_AclBinding_t** acls = rd_kafka_DescribeAcls_result_acls(result, &count);
  bindings.clear();
  for (std::size_t i = 0; i < count; ++i) {
    const char* name = rd_kafka_AclBinding_name(acls[i]);
    const char* principal = rd_kafka_AclBinding_principal(acls[i]);
    const char* host = rd_kafka_AclBinding_host(acls[i]);
    bindings.push_back(AclBinding{
        .resource = from_rdkafka(rd_kafka_AclBinding_restype(acls[i])),
        .name = name != nullptr ? name : "",
        .pattern = from_rdkafka(rd_kafka_AclBinding_resource_pattern_type(acls[i])),
        .principal = principal != nullptr ? principal : "",
        .host = host != nullptr ? host : "",
        .operation = from_rdkafka(rd_kafka_AclBinding_operation(acls[i])),
        .permission = from_rdkafka(rd_kafka_AclBinding_permission_type(acls[i])),
    });
  }
  return {};
}

Error AdminClient::end_offsets(const std::string& topic, int partitions,
                               std::vector<std::int64_t>& ends,
                               std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    PartitionListHandle list{rd_kafka_topic_partition_list_new(partitions)};
    for (int p = 0; p < partitions; ++p) {
      // The timestamp -1 asks for the latest offset.
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = -1;
    }
    rd_kafka_resp_err_t failed =
        rd_kafka_offsets_for_times(rk_, list.get(), timeout_ms(time_left(deadline)));
    std::int32_t failed_partition = -1;
    for (int i = 0; i < list->cnt && failed == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failed = list->elems[i].err;
        failed_partition = list->elems[i].partition;
      }
    }
    if (failed == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ends.assign(static_cast<std::size_t>(partitions), -1);
      for (int i = 0; i < list->cnt; ++i) {
        ends[static_cast<std::size_t>(list->elems[i].partition)] = list->elems[i].offset;
      }
      return {};
    }
    if (!worth_retrying(failed) || time_left(deadline).count() == 0) {
      return make_error(failed,
                        failed_partition < 0
                            ? fmt::format("end offsets of topic '{}'", topic)
                            : fmt::format("end offset of '{}' [{}]", topic, failed_partition));
    }
    std::this_thread::sleep_for(std::min(std::chrono::milliseconds{100}, time_left(deadline)));
  }
}

const char* to_string(AclResource resource) {
  switch (resource) {
    case AclResource::any: return "Any";
    case AclResource::topic: return "Topic";
    case AclResource::group: return "Group";
    case AclResource::cluster: return "Cluster";
    case AclResource::unknown: break;
  }
  return "Unknown";
}

const char* to_string(AclPattern pattern) {
  switch (pattern) {
    case AclPattern::any: return "ANY";
    case AclPattern::match: return "MATCH";
    case AclPattern::literal: return "LITERAL";
    case AclPattern::prefixed: return "PREFIXED";
    case AclPattern::unknown: break;
  }
  return "UNKNOWN";
}

const char* to_string(AclOperation operation) {
  switch (operation) {
    case AclOperation::any: return "Any";
    case AclOperation::all: return "All";
    case AclOperation::read: return "Read";
    case AclOperation::write: return "Write";
    case AclOperation::create: return "Create";
    case AclOperation::remove: return "Delete";
    case AclOperation::alter: return "Alter";
    case AclOperation::describe: return "Describe";
    case AclOperation::cluster_action: return "ClusterAction";
    case AclOperation::describe_configs: return "DescribeConfigs";
    case AclOperation::alter_configs: return "AlterConfigs";
    case AclOperation::idempotent_write: return "IdempotentWrite";
    case AclOperation::unknown: break;
  }
  return "Unknown";
}

const char* to_string(AclPermission permission) {
  switch (permission) {
    case AclPermission::any: return "ANY";
    case AclPermission::deny: return "DENY";
    case AclPermission::allow: return "ALLOW";
    case AclPermission::unknown: break;
  }
  return "UNKNOWN";
}

}  // namespace exactly::kafka
