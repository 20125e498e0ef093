// Item 7 of `exactly check`: does the service's principal hold the ACLs a transactional
// read-process-write pipeline needs? Decided as Kafka's authorizer decides, from the bindings
// DescribeAcls returns, so the matching is tested without a broker.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/line.h"
#include "config/config.h"
#include "kafka/acl.h"

namespace exactly::check {

enum class AclTarget { topic, group, transactional_id };

// One permission the service needs. With `prefix`, `name` stands for every name that starts with
// it (the transactional ids {prefix}.{input}.{partition}).
struct AclRequirement {
  AclTarget target = AclTarget::topic;
  std::string name;
  bool prefix = false;
  kafka::AclOperation operation = kafka::AclOperation::read;
};

// "Read on topic 'in'", "Write on transactional ids 'p.in.*'"
std::string describe(const AclRequirement& requirement);

// What the service does: Read the input topic, Write the output (and dead-letter) topic, Read and
// Write the quarantine marker topic, Read the consumer group (consuming, and committing offsets
// inside transactions), Write and Describe its transactional ids. IdempotentWrite on the cluster
// is not needed by transactional producers on Kafka 3 and later.
std::vector<AclRequirement> required_acls(const config::Config& config);

// The principal the service authenticates as: User:<sasl.username> from [librdkafka.common], else
// User:ANONYMOUS (what a PLAINTEXT listener sees).
std::string principal_of(const config::Config& config);

struct AclContext {
  std::string principal;
};

enum class AclDecision { allowed, denied, missing };

struct AclVerdict {
  AclDecision decision = AclDecision::missing;
  std::optional<kafka::AclBinding> deny;  // the binding that denies, when denied
};

// As Kafka's authorizer: a DENY binding that matches wins over any ALLOW; ALLOW of the operation
// (or All, or an operation that implies Describe) allows; nothing matching is a denial. Brokers
// report super.users without its value and allow.everyone.if.no.acl.found not at all (measured
// on Kafka 4.1), so neither is taken into account. A binding matches a name when it is
// LITERAL with that name or "*", or PREFIXED with a prefix of it; the principal when it is that
// principal or User:*. The host is ignored: which address the service connects from is unknown
// here, so a host-restricted binding counts as if it applied.
//
// librdkafka 2.0.2 reports TransactionalId bindings with an unknown resource type (it knows only
// topic, group and broker), so unknown-type bindings are taken as TransactionalId bindings; the
// other such types (DelegationToken, User) are rare and never name a transactional id.
AclVerdict decide(const std::vector<kafka::AclBinding>& bindings, const AclContext& context,
                  const AclRequirement& requirement);

// The item's lines: one pass naming everything checked, or a fail per missing or denied
// permission saying which binding to add or which one denies. `certain` is false when the
// principal is a guess (an SSL client's principal is its certificate's name): fails become warns.
std::vector<Line> acl_lines(const std::vector<kafka::AclBinding>& bindings,
                            const AclContext& context,
                            const std::vector<AclRequirement>& requirements, bool certain = true);

}  // namespace exactly::check
