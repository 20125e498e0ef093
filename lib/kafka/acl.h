// An ACL binding as the broker describes it, without librdkafka's types, so the rules that read
// bindings can be tested without a broker.
#pragma once

#include <string>

namespace exactly::kafka {

// librdkafka 2.0.2 knows only these resource types. It reports every other one (TransactionalId,
// DelegationToken, User) as `unknown`, with a warning. Its BROKER is Kafka's CLUSTER resource.
enum class AclResource { unknown, any, topic, group, cluster };

enum class AclPattern { unknown, any, match, literal, prefixed };

enum class AclOperation {
  unknown,
  any,
  all,
  read,
  write,
  create,
  remove,  // Kafka's DELETE
  alter,
  describe,
  cluster_action,
  describe_configs,
  alter_configs,
  idempotent_write,
};

enum class AclPermission { unknown, any, deny, allow };

struct AclBinding {
  AclResource resource = AclResource::unknown;
  std::string name;
  AclPattern pattern = AclPattern::literal;
  std::string principal;  // "User:alice", "User:*"
  std::string host = "*";
  AclOperation operation = AclOperation::unknown;
  AclPermission permission = AclPermission::unknown;
};

// Kafka's spelling: "Topic", "Read", "PREFIXED", "ALLOW" ...
const char* to_string(AclResource resource);
const char* to_string(AclPattern pattern);
const char* to_string(AclOperation operation);
const char* to_string(AclPermission permission);

}  // namespace exactly::kafka
