// `exactly check` against a real broker: a healthy pipeline passes, and each misconfiguration gives
// its own fail or warn line and exit code. `run` refuses at start-up what check fails in items
// 1, 3 and 4.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness.h"
#include "kafka/admin.h"
#include "kafka/producer.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

struct Checked {
  int code = -1;
  std::string log;
};

// `exactly check --config FILE` with a short observation window, to its end.
Checked run_check(const std::filesystem::path& dir, const std::filesystem::path& config,
                  const std::string& window_ms = "500") {
  test::Service service(config, dir / (test::unique_name("check") + ".log"));  // one per run
  Checked out;
  out.code =
      service.run_to_end({"check", "--config", config.string(), "--lso-window-ms", window_ms}, 60s);
  out.log = service.log_text();
  return out;
}

int lines_with(const std::string& log, const std::string& needle) {
  int count = 0;
  for (auto at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++count;
  return count;
}

bool has(const std::string& log, const std::string& needle) {
  return log.find(needle) != std::string::npos;
}

// A compacted marker topic of the test's own, so no check sees another test's.
std::string marker_config(const std::string& marker) {
  return fmt::format("[quarantine]\ntopic = \"{}\"\n", marker);
}

}  // namespace

TEST_CASE("check passes a healthy pipeline and prints every item") {
  const auto dir = test::temp_dir("check-healthy");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  test::produce_payments(input, 0, 20);
  const auto config = test::write_config(dir, input, output, test::unique_name("group"),
                                         marker_config(marker), "partitioning = \"input\"");
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 0);
  CHECK(lines_with(checked.log, "[fail]") == 0);
  CHECK(has(checked.log, fmt::format("[pass] input topic '{}' exists: 2 partitions", input)));
  CHECK(has(checked.log, fmt::format("[pass] output topic '{}' exists: 2 partitions", output)));
  CHECK(has(checked.log, "[pass] pipeline.partitioning = \"input\""));
  // The single test broker: one replica, min.insync.replicas=1.
  CHECK(has(checked.log,
            fmt::format("[warn] output topic '{}' has replication factor 1, below 3", output)));
  CHECK(has(checked.log,
            fmt::format("[warn] output topic '{}' has min.insync.replicas=1, below 2", output)));
  CHECK(
      has(checked.log,
          "[pass] broker 1: transaction.max.timeout.ms=900000 >= transactions.timeout_ms = 60000"));
  CHECK(has(checked.log, "[pass] transactions.commit_interval_ms = 100 is at most half"));
  CHECK(has(checked.log,
            "[pass] transactions.timeout_ms = 60000 is below the consumer's max.poll.interval.ms = "
            "300000"));
  CHECK(has(
      checked.log,
      fmt::format("[pass] input topic '{}': no partition's last stable offset is held", input)));
  CHECK(has(checked.log,
            fmt::format("[pass] quarantine marker topic '{}' exists with cleanup.policy=compact",
                        marker)));
  CHECK(has(checked.log, "[pass] ACLs: the cluster has no authorizer"));
  CHECK(has(checked.log, "0 fail"));
}

TEST_CASE("check fails a missing output topic") {
  const auto dir = test::temp_dir("check-missing-output");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("missing-out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 1);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker));
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log, fmt::format("[fail] output topic '{}' does not exist", output)));
  CHECK(lines_with(checked.log, "[fail]") == 1);
  // Asking about it did not create it.
  std::string error;
  auto admin = kafka::AdminClient::create({{"bootstrap.servers", test::bootstrap()}},
                                          kafka::Isolation::read_committed, error);
  REQUIRE_MESSAGE(admin, error);
  kafka::TopicDescription description;
  REQUIRE(!admin->describe_topic(output, description, 10s));
  CHECK_FALSE(description.exists);
}

TEST_CASE("check fails a missing input topic") {
  const auto dir = test::temp_dir("check-missing-input");
  const auto input = test::unique_name("missing-in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(output, 1);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker));
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log, fmt::format("[fail] input topic '{}' does not exist", input)));
  CHECK(has(checked.log, fmt::format("[pass] output topic '{}' exists", output)));
  CHECK(lines_with(checked.log, "[fail]") == 1);
}

TEST_CASE("check fails a missing dead-letter topic and judges an existing one's durability") {
  const auto dir = test::temp_dir("check-dlq");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto dlq = test::unique_name("dlq");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker),
                         fmt::format("on_error = \"dlq\"\ndlq_topic = \"{}\"", dlq));
  auto checked = run_check(dir, config);
  {
    INFO(checked.log);
    CHECK(checked.code == 1);
    CHECK(has(checked.log, fmt::format("[fail] dead-letter topic '{}' does not exist", dlq)));
    CHECK(lines_with(checked.log, "[fail]") == 1);
  }

  // Once it exists, it passes, and its durability is judged like the output's.
  test::create_topic(dlq, 1);
  checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 0);
  CHECK(has(checked.log, fmt::format("[pass] dead-letter topic '{}' exists: 1 partition", dlq)));
  CHECK(has(checked.log,
            fmt::format("[warn] dead-letter topic '{}' has replication factor 1, below 3", dlq)));
  CHECK(has(checked.log,
            fmt::format("[warn] dead-letter topic '{}' has min.insync.replicas=1, below 2", dlq)));
  CHECK(lines_with(checked.log, "[fail]") == 0);
}

TEST_CASE("check refuses a commit interval not below the transaction timeout before any checklist") {
  const auto dir = test::temp_dir("check-interval");
  const auto config = test::write_config(
      dir, test::unique_name("in"), test::unique_name("out"), test::unique_name("group"),
      "[transactions]\ncommit_interval_ms = 20000\ntimeout_ms = 20000\n");
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 2);
  CHECK(has(checked.log, "commit_interval_ms"));
  CHECK(has(checked.log, config.string()));
  CHECK(lines_with(checked.log, "[pass]") == 0);
}

TEST_CASE("check fails partitioning by input with fewer output partitions") {
  const auto dir = test::temp_dir("check-partitions");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 4);
  test::create_topic(output, 2);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config = test::write_config(dir, input, output, test::unique_name("group"),
                                         marker_config(marker), "partitioning = \"input\"");
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log,
            fmt::format("[fail] pipeline.partitioning = \"input\" writes input partition p "
                        "to output partition p, but output topic '{}' has 2 partitions, "
                        "fewer than the 4 of input topic '{}'",
                        output, input)));
  CHECK(lines_with(checked.log, "[fail]") == 1);
}

TEST_CASE(
    "check and run refuse a transaction timeout above the brokers' transaction.max.timeout.ms") {
  const auto dir = test::temp_dir("check-max-timeout");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  // The test broker keeps Kafka's default transaction.max.timeout.ms, 900000. The commit interval,
  // commit timeout and max.poll.interval.ms all fit a timeout of 1000000: only item 3 fails.
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"),
                         marker_config(marker) +
                             "[transactions]\ntimeout_ms = 1000000\n"
                             "[librdkafka.consumer]\n\"max.poll.interval.ms\" = 1200000\n");
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log,
            "[fail] broker 1 has transaction.max.timeout.ms=900000, below "
            "transactions.timeout_ms = 1000000"));
  CHECK(has(checked.log, "set transactions.timeout_ms to at most 900000"));
  CHECK(lines_with(checked.log, "[fail]") == 1);

  test::Service service(config, dir / "run.log");
  CHECK(service.run_to_end({"run", "--config", config.string()}, 60s) == 2);
  const auto run_log = service.log_text();
  INFO(run_log);
  CHECK(has(run_log, "refusing to start: [fail] broker 1 has transaction.max.timeout.ms=900000"));
}

TEST_CASE("check fails max.poll.interval.ms below the transaction timeout") {
  const auto dir = test::temp_dir("check-max-poll");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"),
                         marker_config(marker) +
                             "[transactions]\ntimeout_ms = 120000\n"
                             "[librdkafka.consumer]\n\"max.poll.interval.ms\" = 100000\n");
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log,
            "[fail] transactions.timeout_ms = 120000 is not below the consumer's "
            "max.poll.interval.ms = 100000 ([librdkafka.consumer])"));
  CHECK(lines_with(checked.log, "[fail]") == 1);

  test::Service service(config, dir / "run.log");
  CHECK(service.run_to_end({"run", "--config", config.string()}, 60s) == 2);
  INFO(service.log_text());
  CHECK(has(service.log_text(), "refusing to start: [fail] transactions.timeout_ms = 120000"));
}

TEST_CASE("check fails min.insync.replicas above the output's replication factor") {
  const auto dir = test::temp_dir("check-min-isr");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 1);
  test::create_topic(output, 1, {{"min.insync.replicas", "2"}});
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker));
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(has(checked.log, fmt::format("[fail] output topic '{}' has min.insync.replicas=2 above its "
                                     "replication factor 1: every produce fails with "
                                     "NOT_ENOUGH_REPLICAS",
                                     output)));
  CHECK(lines_with(checked.log, "[fail]") == 1);
}

TEST_CASE("check warns about an input partition held by a hanging upstream transaction") {
  const auto dir = test::temp_dir("check-hanging");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  test::create_topic(marker, 1, {{"cleanup.policy", "compact"}});
  test::produce_raw(input, 1, "k", "committed");  // offset 0 of partition 1

  // An upstream producer that begins a transaction on partition 1, writes, and neither commits
  // nor aborts.
  std::string error;
  auto upstream = kafka::TransactionalProducer::create(
      {{"bootstrap.servers", test::bootstrap()}}, test::unique_name("upstream"), {input}, error);
  REQUIRE_MESSAGE(upstream, error);
  auto e = upstream->init_transactions(30s);
  REQUIRE_MESSAGE(!e, e.describe());
  e = upstream->begin_transaction();
  REQUIRE_MESSAGE(!e, e.describe());
  for (int i = 0; i < 3; ++i) {
    kafka::ProduceRecord record;
    record.key = "k";
    record.value = "open";
    record.partition = 1;
    e = upstream->produce(record, 5s);
    REQUIRE_MESSAGE(!e, e.describe());
  }

  // What the check relies on, measured: ListOffsets "latest" answers by the client's
  // isolation.level, so read_committed sees the last stable offset (1) and read_uncommitted the
  // high watermark (4) once the open transaction's records are written.
  auto committed = kafka::AdminClient::create({{"bootstrap.servers", test::bootstrap()}},
                                              kafka::Isolation::read_committed, error);
  REQUIRE_MESSAGE(committed, error);
  auto uncommitted = kafka::AdminClient::create({{"bootstrap.servers", test::bootstrap()}},
                                                kafka::Isolation::read_uncommitted, error);
  REQUIRE_MESSAGE(uncommitted, error);
  std::vector<std::int64_t> stable;
  std::vector<std::int64_t> high;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  do {
    upstream->poll(100ms);
    REQUIRE(!uncommitted->end_offsets(input, 2, high, 10s));
  } while (high[1] < 4 && std::chrono::steady_clock::now() < deadline);
  REQUIRE(!committed->end_offsets(input, 2, stable, 10s));
  CHECK(high[1] == 4);
  CHECK(stable[1] == 1);
  CHECK(stable[0] == 0);
  CHECK(high[0] == 0);

  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker));
  const auto held = run_check(dir, config, "1500");
  INFO(held.log);
  CHECK(held.code == 0);
  CHECK(has(held.log, fmt::format("[warn] input topic '{}' [1]: last stable offset 1 is behind the "
                                  "high watermark 4 and did not move in 1500 ms",
                                  input)));
  CHECK_FALSE(has(held.log, fmt::format("input topic '{}' [0]:", input)));

  // Once the upstream transaction ends, the partition is free.
  e = upstream->abort_transaction(30s);
  REQUIRE_MESSAGE(!e, e.describe());
  const auto dir2 = test::temp_dir("check-hanging-after");
  const auto freed = run_check(dir2, config);
  INFO(freed.log);
  CHECK(freed.code == 0);
  CHECK(has(
      freed.log,
      fmt::format("[pass] input topic '{}': no partition's last stable offset is held", input)));
}

TEST_CASE("check warns about a missing quarantine marker topic") {
  const auto dir = test::temp_dir("check-marker");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("missing-markers");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  const auto config =
      test::write_config(dir, input, output, test::unique_name("group"), marker_config(marker));
  const auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 0);
  CHECK(has(checked.log, fmt::format("[warn] quarantine marker topic '{}' does not exist: the "
                                     "service creates it at start-up",
                                     marker)));
  CHECK(lines_with(checked.log, "[fail]") == 0);
}

TEST_CASE("check exits 2 for a bad config and for a cluster that does not answer") {
  const auto dir = test::temp_dir("check-exit-2");
  const auto bad = dir / "bad.toml";
  {
    std::ofstream out(bad);
    out << "[kafka]\nbootstrap_servers = \"127.0.0.1:1\"\n[pipeline]\ninput_topic = \"a\"\n"
           "output_topic = \"b\"\ngroup_id = \"g\"\n[transactions]\ntimeout_ms = \"soon\"\n";
  }
  test::Service bad_config(bad, dir / "bad.log");
  CHECK(bad_config.run_to_end({"check", "--config", bad.string()}, 30s) == 2);
  INFO(bad_config.log_text());
  CHECK(has(bad_config.log_text(), fmt::format("{}:8:", bad.string())));

  // Nothing listens on port 1: the first request gives up after its 10 s bound.
  const auto nowhere = test::write_config(dir, "a", "b", "g");
  test::Service unreachable(nowhere, dir / "unreachable.log");
  const auto started = std::chrono::steady_clock::now();
  CHECK(unreachable.run_to_end(
            {"check", "--config", nowhere.string(), "--set", "kafka.bootstrap_servers=127.0.0.1:1"},
            60s) == 2);
  CHECK(std::chrono::steady_clock::now() - started < 30s);
  INFO(unreachable.log_text());
  CHECK(has(unreachable.log_text(),
            "exactly check: the cluster at 127.0.0.1:1 did not answer within 10000 ms"));
  CHECK_FALSE(has(unreachable.log_text(), "[pass]"));
}

namespace {

// A second single-node cluster with Kafka's StandardAuthorizer, for the ACL item. Every client
// there is User:ANONYMOUS (PLAINTEXT), made a super user so the test can create topics and ACLs;
// `check` does not know super users and judges the bindings alone.
class AclCluster : public test::OwnCluster {
 public:
  AclCluster()
      : OwnCluster(test::port_from_env("EXACTLY_TEST_ACL_PORT", 29540), "acl-cluster",
                   "--property authorizer.class.name=org.apache.kafka.metadata.authorizer."
                   "StandardAuthorizer --property super.users=User:ANONYMOUS") {}

  // kafka-acls (org.apache.kafka.tools.AclCommand) with these arguments.
  void acl(const std::string& args) const {
    const int rc = tool("org.apache.kafka.tools.AclCommand",
                        fmt::format("--bootstrap-server {} {} >/dev/null", bootstrap(), args));
    REQUIRE_MESSAGE(rc == 0, "kafka-acls failed: " << args);
  }
};

}  // namespace

TEST_CASE("check judges the ACLs of a cluster with an authorizer") {
  AclCluster cluster;
  const auto dir = test::temp_dir("check-acl");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto marker = test::unique_name("markers");
  const auto group = test::unique_name("group");
  cluster.create(input);
  cluster.create(output);
  cluster.create(marker, 1, {{"cleanup.policy", "compact"}});
  const auto config = test::write_config(dir, input, output, group, marker_config(marker));
  // write_config names the test cluster: point it at this one.
  test::retarget(config, cluster.bootstrap());

  // No bindings: every permission the pipeline needs is missing, each with its grant command.
  auto checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(lines_with(checked.log, "[fail] ACLs: User:ANONYMOUS lacks") == 7);
  CHECK(has(checked.log, "kafka-acls.sh --add --allow-principal User:ANONYMOUS --operation Read"));

  // Granted as the README says: the ACL item passes.
  cluster.acl(fmt::format("--add --allow-principal User:ANONYMOUS --operation Read --topic {}", input));
  cluster.acl(fmt::format("--add --allow-principal User:ANONYMOUS --operation Write --topic {}", output));
  cluster.acl(fmt::format(
      "--add --allow-principal User:ANONYMOUS --operation Read --operation Write --topic {}", marker));
  cluster.acl(fmt::format("--add --allow-principal User:ANONYMOUS --operation Read --group {}", group));
  cluster.acl(fmt::format("--add --allow-principal User:ANONYMOUS --operation Write --operation "
                          "Describe --transactional-id {}.{}. --resource-pattern-type prefixed",
                          group, input));
  checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 0);
  CHECK(lines_with(checked.log, "[fail]") == 0);
  CHECK(has(checked.log, "[pass] ACLs: User:ANONYMOUS has"));

  // A DENY wins over the ALLOW.
  cluster.acl(fmt::format("--add --deny-principal User:ANONYMOUS --operation Write --topic {}", output));
  checked = run_check(dir, config);
  INFO(checked.log);
  CHECK(checked.code == 1);
  CHECK(lines_with(checked.log, "[fail] ACLs: User:ANONYMOUS is denied") == 1);
}
