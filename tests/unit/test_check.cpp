// The judgements of `exactly check`: topic and partition rules, durability, the brokers'
// transaction limit, timing, held partitions, the marker topic, and ACL matching as Kafka's
// authorizer does it.
#include <doctest/doctest.h>

#include "check/acl.h"
#include "check/rules.h"

using namespace std::chrono_literals;
using namespace exactly::check;
using exactly::config::Config;
using exactly::config::Partitioning;
using exactly::kafka::AclBinding;
using exactly::kafka::AclOperation;
using exactly::kafka::AclPattern;
using exactly::kafka::AclPermission;
using exactly::kafka::AclResource;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TopicFacts topic(const std::string& role, const std::string& name, int partitions, int rf = 1) {
  TopicFacts t;
  t.role = role;
  t.name = name;
  t.exists = true;
  t.partitions = partitions;
  t.replication_factor = rf;
  return t;
}

int count(const std::vector<Line>& lines, Status status) {
  int n = 0;
  for (const auto& l : lines) n += l.status == status ? 1 : 0;
  return n;
}

AclBinding binding(AclResource resource, const std::string& name, AclPattern pattern,
                   AclOperation operation, AclPermission permission,
                   const std::string& principal = "User:app") {
  AclBinding b;
  b.resource = resource;
  b.name = name;
  b.pattern = pattern;
  b.principal = principal;
  b.host = "*";
  b.operation = operation;
  b.permission = permission;
  return b;
}

AclBinding allow(AclResource resource, const std::string& name, AclOperation operation,
                 AclPattern pattern = AclPattern::literal,
                 const std::string& principal = "User:app") {
  return binding(resource, name, pattern, operation, AclPermission::allow, principal);
}

AclBinding deny(AclResource resource, const std::string& name, AclOperation operation,
                AclPattern pattern = AclPattern::literal,
                const std::string& principal = "User:app") {
  return binding(resource, name, pattern, operation, AclPermission::deny, principal);
}

const AclContext app{"User:app"};

AclRequirement read_topic(const std::string& name) {
  return {AclTarget::topic, name, false, AclOperation::read};
}

AclRequirement ids(AclOperation operation) {
  return {AclTarget::transactional_id, "app.in.", true, operation};
}

// librdkafka 2.0.2 reports TransactionalId bindings with an unknown resource type.
constexpr AclResource txn = AclResource::unknown;

}  // namespace

TEST_CASE("check lines print as [pass], [warn], [fail]") {
  CHECK(format({Status::pass, "a"}) == "[pass] a");
  CHECK(format({Status::warn, "b"}) == "[warn] b");
  CHECK(format({Status::fail, "c"}) == "[fail] c");
  CHECK_FALSE(any_failed({{Status::pass, "a"}, {Status::warn, "b"}}));
  CHECK(any_failed({{Status::pass, "a"}, {Status::fail, "c"}}));
}

TEST_CASE("item 1: a topic exists with its partitions, is missing, or cannot be described") {
  const Line ok = topic_exists(topic("input", "payments", 4));
  CHECK(ok.status == Status::pass);
  CHECK(has(ok.text, "input topic 'payments' exists: 4 partitions"));
  CHECK(has(topic_exists(topic("output", "o", 1)).text, "1 partition"));

  TopicFacts missing;
  missing.role = "output";
  missing.name = "enriched";
  const Line gone = topic_exists(missing);
  CHECK(gone.status == Status::fail);
  CHECK(has(gone.text, "output topic 'enriched' does not exist"));

  TopicFacts denied = missing;
  denied.error = "TOPIC_AUTHORIZATION_FAILED: topic 'enriched'";
  const Line refused = topic_exists(denied);
  CHECK(refused.status == Status::fail);
  CHECK(has(refused.text, "TOPIC_AUTHORIZATION_FAILED"));
}

TEST_CASE("item 1: partitioning = input needs at least as many output partitions") {
  const auto in = topic("input", "in", 4);
  CHECK_FALSE(partitions_fit(Partitioning::by_key, in, topic("output", "out", 1)).has_value());
  const auto few = partitions_fit(Partitioning::same_as_input, in, topic("output", "out", 3));
  REQUIRE(few.has_value());
  CHECK(few->status == Status::fail);
  CHECK(has(few->text, "'out' has 3 partitions, fewer than the 4 of input topic 'in'"));
  CHECK(has(few->text, "--partitions 4"));
  const auto same = partitions_fit(Partitioning::same_as_input, in, topic("output", "out", 4));
  REQUIRE(same.has_value());
  CHECK(same->status == Status::pass);
  CHECK(partitions_fit(Partitioning::same_as_input, in, topic("output", "out", 8))->status ==
        Status::pass);
  // A missing topic is item 1's own fail already.
  TopicFacts missing;
  CHECK_FALSE(partitions_fit(Partitioning::same_as_input, in, missing).has_value());
}

TEST_CASE("item 2: replication factor below 3 and min.insync.replicas below 2 warn") {
  auto lines = durability(topic("output", "out", 4, 1), 1);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].status == Status::warn);
  CHECK(has(lines[0].text, "replication factor 1, below 3"));
  CHECK(lines[1].status == Status::warn);
  CHECK(has(lines[1].text, "min.insync.replicas=1, below 2"));

  lines = durability(topic("output", "out", 4, 3), 2);
  CHECK(count(lines, Status::pass) == 2);
  CHECK(has(lines[1].text, "min.insync.replicas=2 (replication factor 3)"));

  lines = durability(topic("output", "out", 4, 5), 3);
  CHECK(count(lines, Status::pass) == 2);
}

TEST_CASE("item 2: min.insync.replicas above the replication factor fails, equal to it warns") {
  auto lines = durability(topic("dead-letter", "dlq", 1, 1), 2);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].status == Status::fail);
  CHECK(has(lines[1].text,
            "dead-letter topic 'dlq' has min.insync.replicas=2 above its replication factor 1"));
  CHECK(has(lines[1].text, "NOT_ENOUGH_REPLICAS"));

  lines = durability(topic("output", "out", 1, 3), 3);
  CHECK(lines[0].status == Status::pass);
  CHECK(lines[1].status == Status::warn);
  CHECK(has(lines[1].text, "equal to its replication factor"));

  lines = durability(topic("output", "out", 1, 2), 2);
  CHECK(count(lines, Status::warn) == 2);
  CHECK(count(lines, Status::fail) == 0);
}

TEST_CASE("item 2: an unreadable min.insync.replicas warns, a missing topic says nothing") {
  const auto lines =
      durability(topic("output", "out", 1, 3), std::nullopt, "CLUSTER_AUTHORIZATION_FAILED");
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].status == Status::warn);
  CHECK(has(lines[1].text, "CLUSTER_AUTHORIZATION_FAILED"));
  TopicFacts missing;
  CHECK(durability(missing, 2).empty());
}

TEST_CASE("item 3: every broker's transaction.max.timeout.ms must be at least the timeout") {
  const std::vector<BrokerLimit> equal{{1, 60000, ""}};
  auto lines = transaction_timeout_fits(60000ms, equal);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::pass);
  CHECK(has(lines[0].text,
            "broker 1: transaction.max.timeout.ms=60000 >= transactions.timeout_ms = 60000"));

  lines = transaction_timeout_fits(1000000ms, {{1, 900000, ""}});
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::fail);
  CHECK(has(
      lines[0].text,
      "broker 1 has transaction.max.timeout.ms=900000, below transactions.timeout_ms = 1000000"));
  CHECK(has(lines[0].text, "at most 900000"));

  lines = transaction_timeout_fits(60000ms,
                                   {{1, 900000, ""}, {2, 30000, ""}, {3, std::nullopt, "DENIED"}});
  CHECK(count(lines, Status::fail) == 1);
  CHECK(count(lines, Status::warn) == 1);
  CHECK(count(lines, Status::pass) == 1);
  for (const auto& l : lines) {
    if (l.status == Status::fail) CHECK(has(l.text, "broker 2"));
    if (l.status == Status::warn) CHECK(has(l.text, "broker 3: cannot read"));
    if (l.status == Status::pass) CHECK(has(l.text, "broker 1:"));
  }

  lines = transaction_timeout_fits(60000ms, {{1, 900000, ""}, {2, 600000, ""}});
  REQUIRE(lines.size() == 1);
  CHECK(has(lines[0].text, "brokers 1, 2: transaction.max.timeout.ms=600000 or more"));

  CHECK(transaction_timeout_fits(60000ms, {})[0].status == Status::warn);
}

TEST_CASE(
    "item 4: max.poll.interval.ms comes from the consumer table, then common, then the default") {
  CHECK(max_poll_interval({}, {}).ms == 300000);
  CHECK(has(max_poll_interval({}, {}).source, "default"));
  const auto common = max_poll_interval({{"max.poll.interval.ms", "100000"}}, {});
  CHECK(common.ms == 100000);
  CHECK(common.source == "[librdkafka.common]");
  const auto both = max_poll_interval({{"max.poll.interval.ms", "100000"}},
                                      {{"max.poll.interval.ms", "200000"}, {"linger.ms", "5"}});
  CHECK(both.ms == 200000);
  CHECK(both.source == "[librdkafka.consumer]");
}

TEST_CASE(
    "item 4: commit interval and commit timeout fit in the timeout, which is below "
    "max.poll.interval.ms") {
  Config::Transactions t;
  const MaxPollInterval poll{};
  auto lines = timing(t, poll);
  CHECK(count(lines, Status::fail) == 0);
  CHECK(count(lines, Status::pass) == 2);

  t.timeout = 60000ms;
  t.commit_interval = 30000ms;
  CHECK(count(timing(t, poll), Status::fail) == 0);
  t.commit_interval = 30001ms;
  lines = timing(t, poll);
  REQUIRE(count(lines, Status::fail) == 1);
  CHECK(has(lines[0].text,
            "commit_interval_ms = 30001 does not fit in transactions.timeout_ms = 60000"));
  t.commit_interval = 0ms;
  CHECK(count(timing(t, poll), Status::fail) == 1);

  t = {};
  t.commit_timeout = 30001ms;
  lines = timing(t, poll);
  REQUIRE(count(lines, Status::fail) == 1);
  CHECK(has(lines[1].text, "commit_timeout_ms = 30001"));

  t = {};
  t.timeout = 120000ms;
  lines = timing(t, {100000, "[librdkafka.consumer]"});
  REQUIRE(count(lines, Status::fail) == 1);
  CHECK(has(lines.back().text,
            "transactions.timeout_ms = 120000 is not below the consumer's "
            "max.poll.interval.ms = 100000 ([librdkafka.consumer])"));
  CHECK(count(timing(t, {120000, "x"}), Status::fail) == 1);
  CHECK(count(timing(t, {120001, "x"}), Status::fail) == 0);
}

TEST_CASE("item 5: a last stable offset behind the high watermark that does not move warns") {
  const std::vector<PartitionEnds> before{{0, 10, 10}, {1, 5, 8}, {2, 3, 9}, {3, 7, 7}};
  const std::vector<PartitionEnds> after{{0, 12, 12}, {1, 5, 9}, {2, 6, 9}, {3, 7, 7}};
  const auto lines = stable_offsets("in", before, after, 3000ms);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::warn);
  CHECK(has(lines[0].text,
            "input topic 'in' [1]: last stable offset 5 is behind the high watermark 9 and did not "
            "move in 3000 ms"));

  // Moving, or caught up: an upstream that commits.
  const auto fine = stable_offsets("in", {{0, 3, 9}}, {{0, 4, 9}}, 3000ms);
  REQUIRE(fine.size() == 1);
  CHECK(fine[0].status == Status::pass);
  CHECK(stable_offsets("in", {{0, 9, 9}}, {{0, 9, 9}}, 3000ms)[0].status == Status::pass);
  // A partition seen once only is not judged.
  CHECK(stable_offsets("in", {}, {{0, 1, 9}}, 3000ms)[0].status == Status::pass);
  // Every held partition is named.
  CHECK(stable_offsets("in", {{0, 1, 9}, {1, 2, 9}}, {{0, 1, 9}, {1, 2, 9}}, 10ms).size() == 2);
}

TEST_CASE("item 6: the marker topic is compacted, missing or not compacted") {
  Config::Quarantine q;
  q.topic = "markers";
  CHECK(marker_topic(q, true, std::string{"compact"}).status == Status::pass);
  CHECK(marker_topic(q, true, std::string{"compact,delete"}).status == Status::pass);
  const Line missing = marker_topic(q, false, std::nullopt);
  CHECK(missing.status == Status::warn);
  CHECK(has(missing.text, "'markers' does not exist: the service creates it at start-up"));
  const Line deleting = marker_topic(q, true, std::string{"delete"});
  CHECK(deleting.status == Status::warn);
  CHECK(has(deleting.text, "cleanup.policy=delete"));
  CHECK(marker_topic(q, true, std::nullopt, "DENIED").status == Status::warn);
  q.enabled = false;
  CHECK(marker_topic(q, false, std::nullopt).status == Status::pass);
}

TEST_CASE("item 8: the lineage topic takes journal records, is not compacted and outlives outputs") {
  Config::Pipeline pipeline;
  pipeline.output_topic = "out";
  CHECK(lineage_topic(pipeline, {}).empty());  // no lineage topic: nothing to say

  pipeline.lineage_topic = "journal";
  LineageTopicFacts facts;
  facts.topic = topic("lineage", "journal", 6);
  facts.max_message_bytes = 1048588;
  facts.retention_ms = 604800000;
  facts.cleanup_policy = "delete";
  facts.output_retention_ms = 604800000;
  auto lines = lineage_topic(pipeline, facts);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::pass);
  CHECK(has(lines[0].text, "'journal' exists: 6 partitions, max.message.bytes=1048588"));

  LineageTopicFacts small = facts;
  small.max_message_bytes = 131071;
  lines = lineage_topic(pipeline, small);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::fail);
  CHECK(has(lines[0].text, "max.message.bytes=131071: its journal records need 131072"));

  LineageTopicFacts compacted = facts;
  compacted.cleanup_policy = "compact";
  lines = lineage_topic(pipeline, compacted);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::warn);
  CHECK(has(lines[0].text, "cleanup.policy=compact"));

  // Shorter retention than the output's, or a finite one against an output kept forever.
  LineageTopicFacts shorter = facts;
  shorter.retention_ms = 86400000;
  lines = lineage_topic(pipeline, shorter);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::warn);
  CHECK(has(lines[0].text, "keeps records 86400000 ms, the output topic 'out' 604800000"));
  shorter.output_retention_ms = -1;
  lines = lineage_topic(pipeline, shorter);
  REQUIRE(lines.size() == 1);
  CHECK(has(lines[0].text, "the output topic 'out' -1 (forever)"));
  LineageTopicFacts forever = facts;
  forever.retention_ms = -1;
  CHECK(lineage_topic(pipeline, forever)[0].status == Status::pass);
  LineageTopicFacts longer = facts;
  longer.retention_ms = 2 * 604800000LL;
  CHECK(lineage_topic(pipeline, longer)[0].status == Status::pass);

  // Several problems: each its own line.
  LineageTopicFacts all = compacted;
  all.max_message_bytes = 1000;
  all.retention_ms = 1;
  CHECK(lineage_topic(pipeline, all).size() == 3);

  LineageTopicFacts missing;
  missing.topic.name = "journal";
  lines = lineage_topic(pipeline, missing);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::warn);
  CHECK(has(lines[0].text, "'journal' does not exist: the service creates it at start-up"));
  LineageTopicFacts unreadable = facts;
  unreadable.config_error = "TOPIC_AUTHORIZATION_FAILED";
  CHECK(lineage_topic(pipeline, unreadable)[0].status == Status::warn);
  LineageTopicFacts undescribed;
  undescribed.topic.error = "timed out";
  CHECK(lineage_topic(pipeline, undescribed)[0].status == Status::warn);
}

TEST_CASE("ACLs: LITERAL names one resource, or every one with *") {
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::read)}, app, read_topic("in"))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "in2", AclOperation::read)}, app, read_topic("in"))
            .decision == AclDecision::missing);
  CHECK(decide({allow(AclResource::topic, "i", AclOperation::read)}, app, read_topic("in"))
            .decision == AclDecision::missing);
  CHECK(decide({allow(AclResource::topic, "*", AclOperation::read)}, app, read_topic("in"))
            .decision == AclDecision::allowed);
  CHECK(decide({}, app, read_topic("in")).decision == AclDecision::missing);
}

TEST_CASE("ACLs: PREFIXED covers names that start with it") {
  CHECK(decide({allow(AclResource::topic, "pay", AclOperation::read, AclPattern::prefixed)}, app,
               read_topic("payments"))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "payments", AclOperation::read, AclPattern::prefixed)},
               app, read_topic("payments"))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "payments-x", AclOperation::read, AclPattern::prefixed)},
               app, read_topic("payments"))
            .decision == AclDecision::missing);
  // "*" is a wildcard only as a LITERAL name.
  CHECK(decide({allow(AclResource::topic, "*", AclOperation::read, AclPattern::prefixed)}, app,
               read_topic("payments"))
            .decision == AclDecision::missing);
}

TEST_CASE("ACLs: the principal itself or User:*") {
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::read, AclPattern::literal, "User:*")},
               app, read_topic("in"))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::read, AclPattern::literal,
                      "User:other")},
               app, read_topic("in"))
            .decision == AclDecision::missing);
  CHECK(decide(
            {allow(AclResource::topic, "in", AclOperation::read, AclPattern::literal, "Group:app")},
            app, read_topic("in"))
            .decision == AclDecision::missing);
}

TEST_CASE("ACLs: DENY wins over ALLOW, whatever grants it") {
  const auto denied = decide({allow(AclResource::topic, "in", AclOperation::read),
                              deny(AclResource::topic, "in", AclOperation::read)},
                             app, read_topic("in"));
  CHECK(denied.decision == AclDecision::denied);
  REQUIRE(denied.deny.has_value());
  CHECK(denied.deny->permission == AclPermission::deny);
  // A wildcard DENY for everyone beats the user's own literal ALLOW.
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::read),
                deny(AclResource::topic, "*", AclOperation::read, AclPattern::literal, "User:*")},
               app, read_topic("in"))
            .decision == AclDecision::denied);
  // A prefixed DENY beats a literal ALLOW, in either order.
  CHECK(decide({deny(AclResource::topic, "i", AclOperation::read, AclPattern::prefixed),
                allow(AclResource::topic, "in", AclOperation::read)},
               app, read_topic("in"))
            .decision == AclDecision::denied);
  // A DENY of another principal, topic or operation does not apply.
  CHECK(
      decide({allow(AclResource::topic, "in", AclOperation::read),
              deny(AclResource::topic, "in", AclOperation::read, AclPattern::literal, "User:other"),
              deny(AclResource::topic, "in2", AclOperation::read),
              deny(AclResource::topic, "in", AclOperation::write)},
             app, read_topic("in"))
          .decision == AclDecision::allowed);
}

TEST_CASE(
    "ACLs: All grants and denies every operation; Read and Write imply Describe only when "
    "allowed") {
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::all)}, app, read_topic("in"))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::all),
                deny(AclResource::topic, "in", AclOperation::all)},
               app, read_topic("in"))
            .decision == AclDecision::denied);
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::write)}, app, read_topic("in"))
            .decision == AclDecision::missing);
  CHECK(decide({allow(AclResource::topic, "in", AclOperation::describe)}, app, read_topic("in"))
            .decision == AclDecision::missing);

  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::describe))
            .decision == AclDecision::allowed);
  // Kafka's authorizer: a DENY of Write does not deny Describe, and the ALLOW of Write still
  // implies it.
  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed),
                deny(txn, "app", AclOperation::write, AclPattern::prefixed)},
               app, ids(AclOperation::describe))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed),
                deny(txn, "app", AclOperation::write, AclPattern::prefixed)},
               app, ids(AclOperation::write))
            .decision == AclDecision::denied);
  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed),
                deny(txn, "app", AclOperation::describe, AclPattern::prefixed)},
               app, ids(AclOperation::describe))
            .decision == AclDecision::denied);
}

TEST_CASE("ACLs: the resource type must match") {
  CHECK(decide({allow(AclResource::group, "in", AclOperation::read)}, app, read_topic("in"))
            .decision == AclDecision::missing);
  const AclRequirement group{AclTarget::group, "g", false, AclOperation::read};
  CHECK(decide({allow(AclResource::group, "g", AclOperation::read)}, app, group).decision ==
        AclDecision::allowed);
  CHECK(decide({allow(AclResource::topic, "g", AclOperation::read)}, app, group).decision ==
        AclDecision::missing);
  CHECK(decide({allow(AclResource::topic, "app", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::write))
            .decision == AclDecision::missing);
}

TEST_CASE("ACLs: transactional ids need a PREFIXED binding that covers them all, or LITERAL *") {
  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::write))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(txn, "app.in.", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::write))
            .decision == AclDecision::allowed);
  CHECK(decide({allow(txn, "*", AclOperation::write)}, app, ids(AclOperation::write)).decision ==
        AclDecision::allowed);
  // One partition's id, or a longer prefix, covers only some of them.
  CHECK(decide({allow(txn, "app.in.0", AclOperation::write)}, app, ids(AclOperation::write))
            .decision == AclDecision::missing);
  CHECK(decide({allow(txn, "app.in.1", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::write))
            .decision == AclDecision::missing);
  CHECK(decide({allow(txn, "other", AclOperation::write, AclPattern::prefixed)}, app,
               ids(AclOperation::write))
            .decision == AclDecision::missing);
  // ... but a DENY of any one of them is a denial.
  CHECK(decide({allow(txn, "app", AclOperation::write, AclPattern::prefixed),
                deny(txn, "app.in.3", AclOperation::write)},
               app, ids(AclOperation::write))
            .decision == AclDecision::denied);
  CHECK(decide({allow(txn, "*", AclOperation::write),
                deny(txn, "app.in.1", AclOperation::write, AclPattern::prefixed)},
               app, ids(AclOperation::write))
            .decision == AclDecision::denied);
  CHECK(decide({allow(txn, "*", AclOperation::write), deny(txn, "other.in.1", AclOperation::write)},
               app, ids(AclOperation::write))
            .decision == AclDecision::allowed);
}

TEST_CASE("ACLs: what the service needs, and as whom") {
  Config config;
  config.pipeline.input_topic = "in";
  config.pipeline.output_topic = "out";
  config.pipeline.group_id = "g";
  config.pipeline.transactional_id_prefix = "app";
  config.quarantine.enabled = false;
  auto needed = required_acls(config);
  REQUIRE(needed.size() == 5);
  CHECK(describe(needed[0]) == "Read on topic 'in'");
  CHECK(describe(needed[1]) == "Write on topic 'out'");
  CHECK(describe(needed[2]) == "Read on group 'g'");
  CHECK(describe(needed[3]) == "Write on transactional ids 'app.in.*'");
  CHECK(describe(needed[4]) == "Describe on transactional ids 'app.in.*'");

  config.pipeline.on_error = exactly::config::OnError::dlq;
  config.pipeline.dlq_topic = "dead";
  config.quarantine.enabled = true;
  config.quarantine.topic = "markers";
  needed = required_acls(config);
  REQUIRE(needed.size() == 8);
  CHECK(describe(needed[2]) == "Write on topic 'dead'");
  CHECK(describe(needed[3]) == "Read on topic 'markers'");
  CHECK(describe(needed[4]) == "Write on topic 'markers'");

  config.pipeline.lineage_topic = "journal";
  needed = required_acls(config);
  REQUIRE(needed.size() == 9);
  CHECK(describe(needed[3]) == "Write on topic 'journal'");

  CHECK(principal_of(config) == "User:ANONYMOUS");
  config.librdkafka_common = {{"security.protocol", "SASL_SSL"}, {"sasl.username", "alice"}};
  CHECK(principal_of(config) == "User:alice");
}

TEST_CASE("ACLs: one pass line, or a fail per missing or denied permission saying what to do") {
  Config config;
  config.pipeline.input_topic = "in";
  config.pipeline.output_topic = "out";
  config.pipeline.group_id = "g";
  config.pipeline.transactional_id_prefix = "app";
  config.quarantine.enabled = false;
  const auto needed = required_acls(config);
  const std::vector<AclBinding> all{allow(AclResource::topic, "in", AclOperation::read),
                                    allow(AclResource::topic, "out", AclOperation::write),
                                    allow(AclResource::group, "g", AclOperation::read),
                                    allow(txn, "app", AclOperation::write, AclPattern::prefixed)};
  auto lines = acl_lines(all, app, needed);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == Status::pass);
  CHECK(has(lines[0].text, "User:app has Read on topic 'in', Write on topic 'out'"));

  std::vector<AclBinding> partial(all.begin(), all.end() - 1);
  partial.push_back(
      deny(AclResource::topic, "in", AclOperation::read, AclPattern::literal, "User:*"));
  lines = acl_lines(partial, app, needed);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].status == Status::fail);
  CHECK(has(
      lines[0].text,
      "User:app is denied Read on topic 'in' by the binding DENY Read LITERAL 'in' for User:*"));
  CHECK(has(lines[1].text, "User:app lacks Write on transactional ids 'app.in.*'"));
  CHECK(has(lines[1].text,
            "--allow-principal User:app --operation Write --transactional-id 'app.in.' "
            "--resource-pattern-type prefixed"));
  CHECK(has(lines[2].text, "lacks Describe on transactional ids"));

  lines = acl_lines(partial, app, needed, false);
  CHECK(count(lines, Status::warn) == 3);
  CHECK(has(lines[0].text, "certificate"));
}
