// Cluster administration the tools and tests need: creating topics, reading topic configs.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/error.h"

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

// The topic's effective configuration (name → value), as DescribeConfigs reports it.
[[nodiscard]] Error describe_topic_config(const Properties& properties, const std::string& topic,
                                          std::map<std::string, std::string>& config,
                                          std::chrono::milliseconds timeout);

}  // namespace exactly::kafka
