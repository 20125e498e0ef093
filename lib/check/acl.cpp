#include "check/acl.h"

#include <algorithm>

#include <fmt/format.h>

namespace exactly::check {
namespace {

using kafka::AclBinding;
using kafka::AclOperation;
using kafka::AclPattern;
using kafka::AclPermission;
using kafka::AclResource;

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool same_target(const AclBinding& b, AclTarget target) {
  switch (target) {
    case AclTarget::topic:
      return b.resource == AclResource::topic;
    case AclTarget::group:
      return b.resource == AclResource::group;
    case AclTarget::transactional_id:
      return b.resource == AclResource::unknown;
  }
  return false;
}

// Does the binding cover every name the requirement stands for (one name, or all with the prefix)?
bool covers(const AclBinding& b, const AclRequirement& r) {
  if (b.pattern == AclPattern::literal) return b.name == "*" || (!r.prefix && b.name == r.name);
  if (b.pattern == AclPattern::prefixed) return starts_with(r.name, b.name);
  return false;
}

// Does the binding name at least one of the names the requirement stands for? For one name that
// is covering it; for a prefix, also a LITERAL id under it or a longer PREFIXED one.
bool touches(const AclBinding& b, const AclRequirement& r) {
  if (covers(b, r)) return true;
  return r.prefix && (b.pattern == AclPattern::literal || b.pattern == AclPattern::prefixed) &&
         starts_with(b.name, r.name);
}

bool for_principal(const AclBinding& b, const std::string& principal) {
  return b.principal == principal || b.principal == "User:*";
}

// Kafka's implied operations: All grants everything; Read, Write, Delete and Alter grant Describe;
// AlterConfigs grants DescribeConfigs. Only for ALLOW: a DENY denies exactly its operation (or
// All).
bool allow_grants(AclOperation bound, AclOperation wanted) {
  if (bound == wanted || bound == AclOperation::all) return true;
  if (wanted == AclOperation::describe) {
    return bound == AclOperation::read || bound == AclOperation::write ||
           bound == AclOperation::remove || bound == AclOperation::alter;
  }
  if (wanted == AclOperation::describe_configs) return bound == AclOperation::alter_configs;
  return false;
}

bool deny_denies(AclOperation bound, AclOperation wanted) {
  return bound == wanted || bound == AclOperation::all;
}

const char* target_name(AclTarget target, bool plural) {
  switch (target) {
    case AclTarget::topic:
      return plural ? "topics" : "topic";
    case AclTarget::group:
      return plural ? "groups" : "group";
    case AclTarget::transactional_id:
      return plural ? "transactional ids" : "transactional id";
  }
  return "resource";
}

std::string describe_binding(const AclBinding& b) {
  return fmt::format("{} {} {} '{}' for {} from host {}", to_string(b.permission),
                     to_string(b.operation), to_string(b.pattern), b.name, b.principal, b.host);
}

// The kafka-acls.sh arguments that would grant the requirement.
std::string grant_hint(const AclRequirement& r, const std::string& principal) {
  std::string resource;
  switch (r.target) {
    case AclTarget::topic:
      resource = fmt::format("--topic '{}'", r.name);
      break;
    case AclTarget::group:
      resource = fmt::format("--group '{}'", r.name);
      break;
    case AclTarget::transactional_id:
      resource = fmt::format("--transactional-id '{}'", r.name);
      break;
  }
  return fmt::format("kafka-acls.sh --add --allow-principal {} --operation {} {}{}", principal,
                     to_string(r.operation), resource,
                     r.prefix ? " --resource-pattern-type prefixed" : "");
}

}  // namespace

std::string describe(const AclRequirement& r) {
  return fmt::format("{} on {} '{}{}'", to_string(r.operation), target_name(r.target, r.prefix),
                     r.name, r.prefix ? "*" : "");
}

std::vector<AclRequirement> required_acls(const config::Config& config) {
  const auto& p = config.pipeline;
  std::vector<AclRequirement> out{
      {AclTarget::topic, p.input_topic, false, AclOperation::read},
      {AclTarget::topic, p.output_topic, false, AclOperation::write},
  };
  if (p.on_error == config::OnError::dlq) {
    out.push_back({AclTarget::topic, p.dlq_topic, false, AclOperation::write});
  }
  if (!p.lineage_topic.empty()) {
    out.push_back({AclTarget::topic, p.lineage_topic, false, AclOperation::write});
  }
  if (config.quarantine.enabled) {
    out.push_back({AclTarget::topic, config.quarantine.topic, false, AclOperation::read});
    out.push_back({AclTarget::topic, config.quarantine.topic, false, AclOperation::write});
  }
  out.push_back({AclTarget::group, p.group_id, false, AclOperation::read});
  // Every id is {prefix}.{input}.{partition}: a binding must cover all that start with this.
  const std::string ids = fmt::format("{}.{}.", p.transactional_id_prefix, p.input_topic);
  out.push_back({AclTarget::transactional_id, ids, true, AclOperation::write});
  out.push_back({AclTarget::transactional_id, ids, true, AclOperation::describe});
  return out;
}

std::string principal_of(const config::Config& config) {
  std::string user;
  for (const auto& [name, value] : config.librdkafka_common) {
    if (name == "sasl.username") user = value;
  }
  return user.empty() ? std::string{"User:ANONYMOUS"} : "User:" + user;
}

AclVerdict decide(const std::vector<kafka::AclBinding>& bindings, const AclContext& context,
                  const AclRequirement& requirement) {
  bool allowed = false;
  for (const auto& b : bindings) {
    if (!same_target(b, requirement.target) || !for_principal(b, context.principal)) continue;
    if (b.permission == AclPermission::deny && deny_denies(b.operation, requirement.operation) &&
        touches(b, requirement)) {
      return {AclDecision::denied, b};
    }
    if (b.permission == AclPermission::allow && allow_grants(b.operation, requirement.operation) &&
        covers(b, requirement)) {
      allowed = true;
    }
  }
  return {allowed ? AclDecision::allowed : AclDecision::missing, {}};
}

std::vector<Line> acl_lines(const std::vector<kafka::AclBinding>& bindings,
                            const AclContext& context,
                            const std::vector<AclRequirement>& requirements, bool certain) {
  std::vector<Line> lines;
  std::vector<std::string> granted;
  const Status problem = certain ? Status::fail : Status::warn;
  const std::string guessed =
      certain ? std::string{}
              : " (the principal is a guess: an SSL client's is the name in its certificate)";
  for (const auto& r : requirements) {
    const AclVerdict verdict = decide(bindings, context, r);
    switch (verdict.decision) {
      case AclDecision::allowed:
        granted.push_back(describe(r));
        break;
      case AclDecision::denied:
        lines.push_back(
            {problem, fmt::format("ACLs: {} is denied {} by the binding {}{}", context.principal,
                                  describe(r), describe_binding(*verdict.deny), guessed)});
        break;
      case AclDecision::missing:
        // Unless the principal is a super user, which the brokers do not tell.
        lines.push_back({problem, fmt::format("ACLs: {} lacks {}: no ALLOW binding for it or "
                                              "User:* covers it (super.users aside); grant it "
                                              "with {}{}",
                                              context.principal, describe(r),
                                              grant_hint(r, context.principal), guessed)});
        break;
    }
  }
  if (lines.empty()) {
    lines.push_back({Status::pass,
                     fmt::format("ACLs: {} has {}", context.principal, fmt::join(granted, ", "))});
  }
  return lines;
}

}  // namespace exactly::check
