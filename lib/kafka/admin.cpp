#include "kafka/admin.h"

#include <librdkafka/rdkafka.h>

#include <fmt/format.h>

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

  std::unique_ptr<rd_kafka_ConfigResource_t, ConfigResourceDeleter> resource{
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str())};
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  QueueHandle queue{rd_kafka_queue_new(rk.get())};
  char errstr[512] = {};
  std::unique_ptr<rd_kafka_AdminOptions_t, AdminOptionsDeleter> options{
      rd_kafka_AdminOptions_new(rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS)};
  rd_kafka_AdminOptions_set_request_timeout(options.get(), timeout_ms(timeout), errstr,
                                            sizeof errstr);
  rd_kafka_DescribeConfigs(rk.get(), resources, 1, options.get(), queue.get());
  EventHandle event{rd_kafka_queue_poll(queue.get(), timeout_ms(timeout) + 5000)};
  if (!event) return make_error(RD_KAFKA_RESP_ERR__TIMED_OUT, fmt::format("describing topic '{}'", topic));
  if (auto err = rd_kafka_event_error(event.get())) {
    return make_error(err, fmt::format("describing topic '{}': {}", topic,
                                       rd_kafka_event_error_string(event.get())));
  }
  const rd_kafka_DescribeConfigs_result_t* result = rd_kafka_event_DescribeConfigs_result(event.get());
  std::size_t count = 0;
  const rd_kafka_ConfigResource_t** described = rd_kafka_DescribeConfigs_result_resources(result, &count);
  for (std::size_t i = 0; i < count; ++i) {
    if (auto err = rd_kafka_ConfigResource_error(described[i])) {
      const char* msg = rd_kafka_ConfigResource_error_string(described[i]);
      return make_error(err, fmt::format("topic '{}': {}", topic, msg != nullptr ? msg : ""));
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

}  // namespace exactly::kafka
