// Cluster administration the tools and tests need: creating topics, reading topic and broker
// configs, ACLs, and the metadata and offsets `exactly check` judges.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kafka/acl.h"
#include "kafka/client_config.h"
#include "kafka/error.h"

struct rd_kafka_s;

namespace exactly::kafka {

struct NewTopic {
  std::string name;
  int partitions = 1;
  int replication_factor = -1;  // -1: the broker's default
  std::map<std::string, std::string> configs;
};

// Creates the topics; one that exists already is an error unless `exist_ok`.
[[nodiscard]] Error create_topics(const Properties& properties, const std::vector<NewTopic>& topics,
                                  bool exist_ok, std::chrono::milliseconds timeout);

// The topic's effective configuration (name → value), as DescribeConfigs reports it. A broker
// that does not know the topic yet is asked again until `timeout`, so a topic created a moment ago
// is described; a topic that does not exist costs the whole timeout.
[[nodiscard]] Error describe_topic_config(const Properties& properties, const std::string& topic,
                                          std::map<std::string, std::string>& config,
                                          std::chrono::milliseconds timeout);

enum class ConfigResource { topic, broker };

// What `exactly check` needs to know of a topic from cluster metadata.
struct TopicDescription {
  bool exists = false;
  int partitions = 0;
  int replication_factor = 0;  // the most replicas any partition has
};

// What end_offsets reports: the high watermark, or the last stable offset (the first offset of
// the oldest open transaction, where a read_committed consumer stops).
enum class Isolation { read_uncommitted, read_committed };

// One client for a series of metadata and admin requests. It is a consumer handle that never joins
// a group: metadata requests for a named topic then never create it, which a producer handle's do
// on a broker with auto.create.topics.enable.
class AdminClient {
 public:
  static std::unique_ptr<AdminClient> create(const Properties& properties, Isolation isolation,
                                             std::string& error);
  ~AdminClient();
  AdminClient(const AdminClient&) = delete;
  AdminClient& operator=(const AdminClient&) = delete;

  // The ids of the brokers in the cluster metadata; the first request, so an unreachable cluster
  // shows here.
  [[nodiscard]] Error broker_ids(std::vector<std::int32_t>& ids,
                                 std::chrono::milliseconds timeout) const;

  // The topic's partitions and replicas; `exists` false when the cluster does not know it. Other
  // topic errors (TOPIC_AUTHORIZATION_FAILED, ...) are returned.
  [[nodiscard]] Error describe_topic(const std::string& topic, TopicDescription& description,
                                     std::chrono::milliseconds timeout) const;

  // DescribeConfigs of one resource: a topic by name, a broker by its id ("1"). Every entry the
  // broker reports, defaults included.
  [[nodiscard]] Error describe_config(ConfigResource type, const std::string& name,
                                      std::map<std::string, std::string>& config,
                                      std::chrono::milliseconds timeout) const;

  // Every ACL binding in the cluster. librdkafka 2.0.2 drops the response's error code, so a
  // cluster without an authorizer (SECURITY_DISABLED) answers with no bindings and no error.
  [[nodiscard]] Error describe_acls(std::vector<AclBinding>& bindings,
                                    std::chrono::milliseconds timeout) const;

  // The offsets committed for partitions [0, partitions) of `topic` by the consumer group this
  // client was created with ("group.id" among its properties); -1 where none is.
  [[nodiscard]] Error committed_offsets(const std::string& topic, int partitions,
                                        std::vector<std::int64_t>& offsets,
                                        std::chrono::milliseconds timeout) const;

  // The latest offset of each partition [0, partitions) under this client's isolation (measured
  // on librdkafka 2.0.2 with Kafka 4.1: ListOffsets carries the client's isolation.level, for
  // rd_kafka_offsets_for_times and rd_kafka_query_watermark_offsets alike).
  [[nodiscard]] Error end_offsets(const std::string& topic, int partitions,
                                  std::vector<std::int64_t>& ends,
                                  std::chrono::milliseconds timeout) const;

 private:
  AdminClient() = default;
  rd_kafka_s* rk_ = nullptr;
};

}  // namespace exactly::kafka
