// Exactly-once end to end on a real broker, read back with read_committed: every test ends with
// the audit (count, uniqueness, order per input partition).
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <variant>

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <fmt/format.h>

#include "engine/engine.h"
#include "harness.h"
#include "kafka/group_metadata.h"
#include "kafka/plain_producer.h"
#include "kafka/producer.h"
#include "kafka/topic_reader.h"
#include "verify/audit.h"
#include "transforms/transform.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {


void check_exactly_once(const verify::Report& report, std::uint64_t inputs) {
  // One INFO for all of it: an INFO inside a loop body is gone when the body ends.
  std::string findings = report.summary();
  for (const auto& example : report.examples) findings += "\n  " + example;
  for (const auto& copy : report.duplicate_copies) findings += "\n  copy " + copy;
  INFO(findings);
  CHECK(report.inputs == inputs);
  CHECK(report.outputs == inputs);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  CHECK(report.no_lineage == 0);
  CHECK(report.unknown_source == 0);
  CHECK(report.aborted_reads == 0);
  CHECK(report.ok());
}

// The producer scope a test runs with: the [pipeline] line, and the table that goes with it (the
// crash-loop quarantine is for partition-scoped producers only).
struct Scope {
  bool instance = false;
  std::string pipeline_keys;
  std::string extra;
  bool journal = false;  // the lineage in a lineage topic, not in headers

  // The [pipeline] lines for a pipeline writing to `output`: with a journal, a lineage topic that
  // the audits of `output` read from then on.
  std::string pipeline(const std::string& output) const {
    if (!journal) return pipeline_keys;
    const auto lineage = test::unique_name("lineage");
    test::set_lineage_topic(output, lineage);
    return pipeline_keys + fmt::format("lineage_topic = \"{}\"\n", lineage);
  }
};

Scope partition_scope() { return {}; }
Scope instance_scope() {
  return {true, "producer_scope = \"instance\"\n", "[quarantine]\nenabled = false\n"};
}
Scope journaled(Scope scope) {
  scope.journal = true;
  return scope;
}

}  // namespace

TEST_CASE("100000 records over 4 partitions arrive once each and in order") {
  Scope scope;
  SUBCASE("partition-scoped producers") { scope = partition_scope(); }
  SUBCASE("an instance-scoped producer") { scope = instance_scope(); }
  SUBCASE("partition-scoped producers, the lineage in a lineage topic") {
    scope = journaled(partition_scope());
  }
  SUBCASE("an instance-scoped producer, the lineage in a lineage topic") {
    scope = journaled(instance_scope());
  }
  const auto dir = test::temp_dir("pipeline");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  test::produce_payments(input, 0, 100000);

  test::Service service(test::write_config(dir, input, output, test::unique_name("group"),
                                           "[transform]\nname = \"payment-enricher\"\n" + scope.extra,
                                           scope.pipeline(output)),
                        dir / "service.log");
  service.start();
  const auto progress = test::wait_for_outputs(input, output, 100000, 180s);
  INFO(service.log_text());
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  check_exactly_once(test::audit(input, output), 100000);
  if (!scope.journal) return;

  // The outputs carry no lineage header: the audit above read the lineage from the journal.
  std::uint64_t with_header = 0;
  kafka::ReadOptions read{test::bootstrap(), output, {}, 60s};
  REQUIRE_FALSE(kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
    for (const auto& header : record.headers) with_header += header.name == "exactly.lineage";
  }));
  CHECK(with_header == 0);
  // Audited without the lineage topic, every output lacks lineage, and the report says where
  // to look.
  verify::AuditOptions blind;
  blind.bootstrap_servers = test::bootstrap();
  blind.input_topic = input;
  blind.output_topic = output;
  const auto blind_result = verify::audit_topics(blind);
  const auto* blind_report = std::get_if<verify::Report>(&blind_result);
  REQUIRE(blind_report != nullptr);
  CHECK(blind_report->no_lineage == 100000);
  REQUIRE_FALSE(blind_report->examples.empty());
  CHECK(blind_report->examples.front().find("name that topic (--lineage-topic, or --config)") !=
        std::string::npos);
  // An output no transaction of the service wrote is named by no journal: the audit says so.
  test::produce_raw(output, 0, "stray", "stray", {});
  const auto report = test::audit(input, output);
  CHECK(report.no_lineage == 1);
  CHECK_FALSE(report.ok());
}

TEST_CASE("kill -9 at random moments loses nothing and duplicates nothing") {
  Scope scope;
  std::string consumer_keys;
  SUBCASE("partition-scoped producers") { scope = partition_scope(); }
  SUBCASE("partition-scoped producers, the lineage in a lineage topic") {
    scope = journaled(partition_scope());
  }
  SUBCASE("an instance-scoped producer with static membership") {
    // group.instance.id names the instance's transactional.id: a restarted instance fences the
    // killed one's producer at once and settles its transaction.
    scope = instance_scope();
    consumer_keys = fmt::format("\"group.instance.id\" = \"{}\"\n", test::unique_name("member"));
  }
  const auto dir = test::temp_dir("crash");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  constexpr std::uint64_t total = 200000;
  constexpr std::uint64_t chunk = 5000;

  // Input keeps arriving for about a minute, and the service is killed all along.
  std::atomic<bool> input_done{false};
  std::thread producer([&] {
    for (std::uint64_t start = 0; start < total; start += chunk) {
      test::produce_payments(input, start, chunk);
      std::this_thread::sleep_for(1200ms);
    }
    input_done = true;
  });

  test::Service service(
      test::write_config(dir, input, output, test::unique_name("group"),
                         std::string{"[transform]\nname = \"payment-enricher\"\n"} + scope.extra +
                             test::fast_group + consumer_keys,
                         scope.pipeline(output)),
      dir / "service.log");
  std::mt19937 random{std::random_device{}()};
  std::uniform_int_distribution<int> pause_ms(200, 3000);
  int kills = 0;
  int ready_before = 0;
  service.start();
  while (!input_done && kills < 12) {
    // Kill at a random moment after this start's partitions are ready, while records flow.
    REQUIRE(service.wait_for_log("ready, starting at offset", 60s, ready_before + 1));
    std::this_thread::sleep_for(std::chrono::milliseconds{pause_ms(random)});
    if (input_done) break;
    service.signal(SIGKILL);
    const auto code = service.wait(30s);
    REQUIRE(code.has_value());
    CHECK(*code == -SIGKILL);
    ++kills;
    ready_before = service.log_count("ready, starting at offset");
    service.start();
  }
  producer.join();
  const auto progress = test::wait_for_outputs(input, output, total, 300s);
  CHECK(progress.missing == 0);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  // Transactions the service itself aborted (a kill -9 aborts through the next owner's
  // init_transactions, which nobody logs): none of their outputs may be read.
  const auto aborted = verify::aborted_attempts_in(service.log_text());
  const auto report = test::audit(input, output, {}, aborted);
  MESSAGE(fmt::format("crash test audit: kills={} aborted attempts logged={} {}", kills,
                      aborted.size(), report.summary()));
  CHECK(kills >= 5);
  check_exactly_once(report, total);
}

namespace {

// Identity that counts how often each record was processed.
class CountingIdentity final : public transforms::Transform {
 public:
  transforms::Status process(const transforms::RecordView& record,
                             transforms::Emitter& out) override {
    ++calls[{record.partition, record.offset}];
    out.emit({record.key, record.value, record.headers, std::nullopt});
    return transforms::Status::ok();
  }
  std::map<std::pair<std::int32_t, std::int64_t>, int> calls;  // engine thread only
};

}  // namespace

TEST_CASE("a forced abort leaves nothing visible and the range is redone once") {
  const auto dir = test::temp_dir("abort");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  constexpr std::uint64_t total = 2000;
  test::produce_payments(input, 0, total);

  const auto config = test::load(test::write_config(
      dir, input, output, test::unique_name("group"),
      "[transactions]\nmax_records = 100\ncommit_interval_ms = 100\nretry_backoff_ms = 50\n"));
  CountingIdentity transform;
  engine::Engine engine(config, transform);

  // Refuse the first commit of the range that holds partition 0's 500th offset.
  std::mutex mutex;
  std::optional<std::pair<std::int64_t, std::int64_t>> aborted_range;
  engine.set_commit_hook([&](std::int32_t partition, std::int64_t start, std::int64_t end) {
    std::lock_guard lock(mutex);
    if (partition == 0 && !aborted_range && start <= 500 && 500 < end) {
      aborted_range = {start, end};
      // Let the producer deliver the range's records first (linger.ms is 5), so the abort has
      // something in the log to hide, as when a real abortable error comes late.
      std::this_thread::sleep_for(500ms);
      return false;
    }
    return true;
  });

  std::atomic<int> signals{0};
  int code = -1;
  std::thread runner([&] { code = engine.run(signals); });
  const auto progress = test::wait_for_outputs(input, output, total, 120s);
  signals = 1;
  runner.join();
  CHECK(code == 0);
  CHECK(progress.missing == 0);
  check_exactly_once(test::audit(input, output), total);

  std::lock_guard lock(mutex);
  REQUIRE(aborted_range.has_value());
  const auto [start, end] = *aborted_range;
  INFO("aborted range [" << start << ", " << end << ")");
  CHECK(end > start);
  CHECK(engine.counters().aborted.load() == 1);
  // The aborted range ran twice (the attempt and the redo), everything else once.
  for (const auto& [key, calls] : transform.calls) {
    const bool in_range = key.first == 0 && key.second >= start && key.second < end;
    if (calls != (in_range ? 2 : 1)) {
      FAIL("record " << key.first << "/" << key.second << " processed " << calls << " times");
    }
  }
  CHECK(transform.calls.size() == total);

  // The aborted attempt's records are in the log, invisible under read_committed only.
  std::uint64_t uncommitted = 0;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = output;
  read.read_uncommitted = true;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord&) { ++uncommitted; });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  CHECK(uncommitted == total + static_cast<std::uint64_t>(end - start));

  // The aborted-read check: the attempt the engine aborted is never seen under read_committed,
  // and a read_uncommitted reader, which does see it, is caught with every record of it.
  const auto aborted = engine.aborted_attempts();
  REQUIRE(aborted.size() == 1);
  const auto committed_view = test::audit(input, output, {}, aborted);
  CHECK(committed_view.aborted_reads == 0);
  CHECK(committed_view.ok());
  const auto dirty_view = test::audit(input, output, {}, aborted, true);
  MESSAGE(fmt::format("aborted-read check: read_committed {} / read_uncommitted {}",
                      committed_view.summary(), dirty_view.summary()));
  CHECK(dirty_view.aborted_reads == static_cast<std::uint64_t>(end - start));
  CHECK(dirty_view.duplicated == static_cast<std::uint64_t>(end - start));
  CHECK_FALSE(dirty_view.ok());
}

TEST_CASE("a slow commit of one partition holds back none of the others") {
  const auto dir = test::temp_dir("slow-commit");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  constexpr std::uint64_t total = 40000;
  test::produce_payments(input, 0, total);

  const auto config = test::load(test::write_config(
      dir, input, output, test::unique_name("group"),
      "[transactions]\nmax_records = 200\ncommit_interval_ms = 100\n"));
  CountingIdentity transform;
  engine::Engine engine(config, transform);

  // Partition 0's commit of the range holding its offset 400 takes 1.5 s (the hook runs on
  // the commit's own thread, before the offsets are sent); it still commits. Meanwhile the
  // other partitions go on committing.
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::optional<std::pair<std::int64_t, std::int64_t>> slow_range;
  Clock::time_point slow_from{};
  Clock::time_point slow_until = Clock::time_point::max();
  std::map<std::int32_t, int> others_during;  // partition: commits begun while 0's was slow
  engine.set_commit_hook([&](std::int32_t partition, std::int64_t start, std::int64_t end) {
    {
      std::lock_guard lock(mutex);
      const auto now = Clock::now();
      if (partition != 0 && slow_range && now >= slow_from && now < slow_until) {
        ++others_during[partition];
      }
      if (partition != 0 || slow_range || !(start <= 400 && 400 < end)) return true;
      slow_range = {start, end};
      slow_from = now;
    }
    std::this_thread::sleep_for(1500ms);
    std::lock_guard lock(mutex);
    slow_until = Clock::now();
    return true;
  });

  std::atomic<int> signals{0};
  int code = -1;
  std::thread runner([&] { code = engine.run(signals); });
  const auto progress = test::wait_for_outputs(input, output, total, 120s);
  signals = 1;
  runner.join();
  CHECK(code == 0);
  CHECK(progress.missing == 0);
  check_exactly_once(test::audit(input, output), total);
  CHECK(engine.counters().aborted.load() == 0);
  for (const auto& [key, calls] : transform.calls) {
    if (calls != 1) FAIL("record " << key.first << "/" << key.second << " processed " << calls << " times");
  }
  CHECK(transform.calls.size() == total);

  std::lock_guard lock(mutex);
  REQUIRE(slow_range.has_value());
  INFO("slow range of partition 0: [" << slow_range->first << ", " << slow_range->second << ")");
  // Each other partition has about 10,000 records in transactions of at most 200: in 1.5 s of a loop
  // that does not wait for partition 0, several of theirs commit.
  for (std::int32_t partition = 1; partition < 4; ++partition) {
    INFO("partition " << partition);
    CHECK(others_during[partition] >= 2);
  }
}

namespace {

// The commit interval's clock: with records streaming in, partition 0's commits start an interval
// apart, counted from the last commit's start, although each of them takes 0.8 s (a commit hook
// that sleeps). Counted from the transaction's opening, after the slow commit, they would start
// 2.8 s apart: the records that came in during a commit would wait for it, then a whole interval.
void check_interval_clock(const Scope& scope) {
  const auto dir = test::temp_dir("interval-clock");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  const auto config = test::load(test::write_config(
      dir, input, output, test::unique_name("group"),
      "[transactions]\nmax_records = 1000000\ncommit_interval_ms = 2000\n" + scope.extra,
      scope.pipeline_keys));
  CountingIdentity transform;
  engine::Engine engine(config, transform);
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::vector<Clock::time_point> starts;  // of partition 0's commits
  engine.set_commit_hook([&](std::int32_t partition, std::int64_t, std::int64_t) {
    if (partition != 0) return true;
    {
      std::lock_guard lock(mutex);
      starts.push_back(Clock::now());
    }
    std::this_thread::sleep_for(800ms);
    return true;
  });
  std::atomic<int> signals{0};
  int code = -1;
  std::thread runner([&] { code = engine.run(signals); });

  // 14 s of records, 10 every 100 ms (the group forms in the first few).
  std::uint64_t total = 0;
  const auto streamed_until = Clock::now() + 14s;
  while (Clock::now() < streamed_until) {
    test::produce_payments(input, total, 10);
    total += 10;
    std::this_thread::sleep_for(100ms);
  }
  CHECK(test::wait_for_outputs(input, output, total, 60s).missing == 0);
  signals = 1;
  runner.join();
  CHECK(code == 0);
  check_exactly_once(test::audit(input, output), total);
  CHECK(engine.counters().aborted.load() == 0);

  std::lock_guard lock(mutex);
  int gaps = 0;
  for (std::size_t i = 1; i < starts.size() && starts[i] < streamed_until; ++i) {
    const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(starts[i] - starts[i - 1]);
    INFO("commit " << i << " of partition 0 started " << gap.count() << " ms after the one before");
    CHECK(gap >= 1900ms);
    CHECK(gap <= 2500ms);
    ++gaps;
  }
  CHECK(gaps >= 2);
}

}  // namespace

TEST_CASE("commits start an interval apart counted from the last commit's start") {
  check_interval_clock(partition_scope());
}

TEST_CASE("in instance scope commits start an interval apart counted from the last commit's start") {
  check_interval_clock(instance_scope());
}

TEST_CASE("in instance scope a forced abort redoes every partition's range and leaves nothing visible") {
  const auto dir = test::temp_dir("abort-instance");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  std::uint64_t total = 4000;
  test::produce_payments(input, 0, total);

  const auto scope = instance_scope();
  const auto config = test::load(test::write_config(
      dir, input, output, test::unique_name("group"),
      "[transactions]\nmax_records = 1000000\ncommit_interval_ms = 100\nretry_backoff_ms = 50\n" +
          scope.extra,
      scope.pipeline_keys));
  CountingIdentity transform;
  engine::Engine engine(config, transform);

  // Refuse the first transaction that holds ranges of both partitions. The hook is asked once
  // per partition of a transaction, in partition order and at once; commit rounds are 100 ms
  // apart.
  using Clock = std::chrono::steady_clock;
  std::mutex mutex;
  std::optional<std::pair<std::int64_t, std::int64_t>> last_zero;
  Clock::time_point last_zero_at{};
  std::map<std::int32_t, std::pair<std::int64_t, std::int64_t>> refused;  // partition: [start, end)
  engine.set_commit_hook([&](std::int32_t partition, std::int64_t start, std::int64_t end) {
    std::lock_guard lock(mutex);
    if (!refused.empty()) return true;
    if (partition == 0) {
      last_zero = {start, end};
      last_zero_at = Clock::now();
    } else if (partition == 1 && last_zero && Clock::now() - last_zero_at < 20ms) {
      refused = {{0, *last_zero}, {1, {start, end}}};
      std::this_thread::sleep_for(500ms);  // the records reach the log first (see above)
      return false;
    }
    return true;
  });

  std::atomic<int> signals{0};
  int code = -1;
  std::thread runner([&] { code = engine.run(signals); });
  // The first rounds can hold one partition only: each partition's start offset is looked up on
  // its own, and the other's records may come a fetch later. More input, in both partitions, until
  // a transaction over both has been refused (at most 20 more batches).
  for (int batch = 0; batch < 20; ++batch) {
    std::this_thread::sleep_for(300ms);
    {
      std::lock_guard lock(mutex);
      if (!refused.empty()) break;
    }
    test::produce_payments(input, total, 1000);
    total += 1000;
  }
  const auto progress = test::wait_for_outputs(input, output, total, 120s);
  signals = 1;
  runner.join();
  CHECK(code == 0);
  CHECK(progress.missing == 0);
  check_exactly_once(test::audit(input, output), total);

  std::lock_guard lock(mutex);
  REQUIRE(refused.size() == 2);
  CHECK(engine.counters().aborted.load() == 1);
  // Both partitions' ranges ran twice (the attempt and the redo), everything else once.
  std::uint64_t redone = 0;
  for (const auto& [partition, range] : refused) {
    INFO("aborted range of partition " << partition << ": [" << range.first << ", " << range.second << ")");
    CHECK(range.second > range.first);
    redone += static_cast<std::uint64_t>(range.second - range.first);
  }
  for (const auto& [key, calls] : transform.calls) {
    const auto& range = refused[key.first];
    const bool in_range = key.second >= range.first && key.second < range.second;
    if (calls != (in_range ? 2 : 1)) {
      FAIL("record " << key.first << "/" << key.second << " processed " << calls << " times");
    }
  }
  CHECK(transform.calls.size() == total);

  // Every record of the aborted attempt is in the log, and none is read under read_committed.
  std::uint64_t uncommitted = 0;
  kafka::ReadOptions read;
  read.bootstrap_servers = test::bootstrap();
  read.topic = output;
  read.read_uncommitted = true;
  auto error = kafka::read_topic(read, [&](const kafka::ReadRecord&) { ++uncommitted; });
  REQUIRE_MESSAGE(!error, error.value_or(""));
  CHECK(uncommitted == total + redone);
  const auto aborted = engine.aborted_attempts();
  REQUIRE(aborted.size() == 1);
  CHECK(test::audit(input, output, {}, aborted).aborted_reads == 0);
  CHECK(test::audit(input, output, {}, aborted, true).aborted_reads == redone);
}

TEST_CASE("in instance scope a new owner waits for an open transaction that holds its offsets") {
  // Instance-scoped producers do not fence each other: what keeps a new owner from reading an
  // offset that an older owner's open transaction is about to move is the stable-offsets read.
  const auto dir = test::temp_dir("unstable");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto group = test::unique_name("group");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::produce_payments(input, 0, 2000);

  // The older owner: its transaction has sent offset 1000 of the group and is still open.
  std::string error;
  auto older = kafka::TransactionalProducer::create({{"bootstrap.servers", test::bootstrap()}},
                                                    test::unique_name("older"), {output}, error);
  REQUIRE_MESSAGE(older, error);
  auto e = older->init_transactions(30s);
  REQUIRE_MESSAGE(!e, e.describe());
  REQUIRE(!older->begin_transaction());
  const kafka::GroupMetadata metadata{rd_kafka_consumer_group_metadata_new(group.c_str())};
  e = older->send_offsets_to_transaction(input, 0, 1000, metadata, 30s);
  REQUIRE_MESSAGE(!e, e.describe());

  const auto scope = instance_scope();
  test::Service service(test::write_config(dir, input, output, group, scope.extra, scope.pipeline_keys),
                        dir / "service.log");
  service.start();
  REQUIRE(service.wait_for_log("assigned", 60s));
  std::this_thread::sleep_for(5s);
  INFO(service.log_text());
  // Still waiting: it has not started the partition from what it read.
  CHECK(service.log_count("ready, starting at offset") == 0);

  e = older->commit_transaction(30s);
  REQUIRE_MESSAGE(!e, e.describe());
  REQUIRE(service.wait_for_log("ready, starting at offset 1000", 60s));

  // Offsets 1000 to 1999, once each: what the older owner committed is not redone.
  std::map<std::int64_t, int> copies;
  for (int waited = 0; waited < 120; ++waited) {
    copies.clear();
    kafka::ReadOptions read;
    read.bootstrap_servers = test::bootstrap();
    read.topic = output;
    auto failed = kafka::read_topic(read, [&](const kafka::ReadRecord& r) {
      for (const auto& h : r.headers) {
        if (h.name == "exactly.lineage" && h.value) {
          const auto lineage = verify::parse_lineage(*h.value);
          REQUIRE_MESSAGE(lineage, *h.value);
          ++copies[lineage->offset];
        }
      }
    });
    REQUIRE_MESSAGE(!failed, failed.value_or(""));
    if (copies.size() >= 1000) break;
    std::this_thread::sleep_for(500ms);
  }
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  CHECK(copies.size() == 1000);
  CHECK(copies.begin()->first == 1000);
  CHECK(copies.rbegin()->first == 1999);
  CHECK(std::all_of(copies.begin(), copies.end(), [](const auto& c) { return c.second == 1; }));
}

TEST_CASE("two instances share the partitions and a stopped one hands over without loss") {
  Scope scope;
  SUBCASE("partition-scoped producers") { scope = partition_scope(); }
  SUBCASE("instance-scoped producers") { scope = instance_scope(); }
  const auto dir_a = test::temp_dir("pair-a");
  const auto dir_b = test::temp_dir("pair-b");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto group = test::unique_name("group");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  constexpr std::uint64_t total = 100000;
  test::produce_payments(input, 0, total / 2);

  test::Service a(test::write_config(dir_a, input, output, group, scope.extra + test::fast_group,
                                     scope.pipeline_keys),
                  dir_a / "service.log");
  test::Service b(test::write_config(dir_b, input, output, group, scope.extra + test::fast_group,
                                     scope.pipeline_keys),
                  dir_b / "service.log");
  a.start();
  REQUIRE(a.wait_for_log("ready, starting at offset", 60s));
  b.start();
  REQUIRE(b.wait_for_log("ready, starting at offset", 60s));
  // A gave up half of its partitions to B, committing what it had first.
  REQUIRE(a.wait_for_log("revoked", 60s));

  std::thread producer([&] {
    for (std::uint64_t start = total / 2; start < total; start += 10000) {
      test::produce_payments(input, start, 10000);
      std::this_thread::sleep_for(200ms);
    }
  });
  std::this_thread::sleep_for(2s);
  a.signal(SIGTERM);
  const auto code_a = a.wait(60s);
  producer.join();
  REQUIRE(code_a.has_value());
  CHECK(*code_a == 0);
  // B now owns every partition.
  CHECK(b.wait_for_log(fmt::format("assigned {} [0,1,2,3]", input), 60s));

  const auto progress = test::wait_for_outputs(input, output, total, 180s);
  CHECK(progress.missing == 0);
  b.signal(SIGTERM);
  const auto code_b = b.wait(60s);
  REQUIRE(code_b.has_value());
  CHECK(*code_b == 0);

  INFO(a.log_text());
  INFO(b.log_text());
  // Both did part of the work.
  CHECK(a.log_text().find("stopped: consumed 0 ") == std::string::npos);
  CHECK(b.log_text().find("stopped: consumed 0 ") == std::string::npos);
  check_exactly_once(test::audit(input, output), total);
}

TEST_CASE("a zombie instance is fenced and nothing it writes after the takeover becomes visible") {
  // Partition scope: B's init_transactions fences A's producers. Instance scope: A's producer is
  // not fenced, but its consumer group generation is stale: the group coordinator refuses its
  // offsets, and its transaction is aborted.
  Scope scope;
  SUBCASE("partition-scoped producers") { scope = partition_scope(); }
  SUBCASE("instance-scoped producers") { scope = instance_scope(); }
  const auto dir_a = test::temp_dir("zombie-a");
  const auto dir_b = test::temp_dir("zombie-b");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto group = test::unique_name("group");
  test::create_topic(input, 2);
  test::create_topic(output, 2);
  constexpr std::uint64_t total = 60000;
  // Long transactions, so the zombie is frozen with some open.
  const std::string settings =
      std::string{"[transactions]\ncommit_interval_ms = 3000\nmax_records = 1000000\n"} +
      scope.extra + test::fast_group;
  test::Service a(test::write_config(dir_a, input, output, group, settings, scope.pipeline_keys),
                  dir_a / "service.log");
  test::Service b(test::write_config(dir_b, input, output, group, settings, scope.pipeline_keys),
                  dir_b / "service.log");

  std::atomic<bool> input_done{false};
  std::thread producer([&] {
    for (std::uint64_t start = 0; start < total; start += 2000) {
      test::produce_payments(input, start, 2000);
      std::this_thread::sleep_for(250ms);
    }
    input_done = true;
  });

  a.start();
  REQUIRE(a.wait_for_log("ready, starting at offset", 60s, 2));
  std::this_thread::sleep_for(1500ms);
  a.signal(SIGSTOP);  // frozen mid-transaction, past its session timeout
  b.start();
  // B takes both partitions once A's session expires; its init_transactions fences A.
  REQUIRE(b.wait_for_log(fmt::format("assigned {} [0,1]", input), 60s));
  REQUIRE(b.wait_for_log("ready, starting at offset", 60s, 2));
  std::this_thread::sleep_for(2s);
  a.signal(SIGCONT);  // the zombie wakes up with open transactions and a stale generation

  producer.join();
  const auto progress = test::wait_for_outputs(input, output, total, 180s);
  CHECK(progress.missing == 0);
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  const auto code_a = a.wait(60s);
  const auto code_b = b.wait(60s);
  INFO(a.log_text());
  REQUIRE(code_a.has_value());
  REQUIRE(code_b.has_value());
  CHECK(*code_b == 0);
  // The zombie learnt it had lost its partitions, or was fenced when it tried to commit.
  const auto zombie = a.log_text();
  CHECK((zombie.find("lost ") != std::string::npos || zombie.find("fenced") != std::string::npos ||
         zombie.find("revoked") != std::string::npos));
  check_exactly_once(test::audit(input, output), total);
}

TEST_CASE("at-least-once loses nothing through kill -9 and commits its offsets through the consumer") {
  const auto dir = test::temp_dir("at-least-once");
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  const auto group = test::unique_name("group");
  test::create_topic(input, 4);
  test::create_topic(output, 4);
  constexpr std::uint64_t total = 200000;
  test::produce_payments(input, 0, total / 2);
  test::Service service(
      test::write_config(dir, input, output, group, test::fast_group, "delivery = \"at-least-once\"\n"),
      dir / "service.log");
  INFO(service.log_text());
  service.start();
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s, 4));
  CHECK(service.log_text().find("delivery = \"at-least-once\": no transactions") != std::string::npos);
  // Killed while it works through the backlog and more arrives (right after its first commit);
  // then restarted.
  std::thread producer([&] { test::produce_payments(input, total / 2, total / 2); });
  const auto first_commit = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < first_commit && test::committed_sum(group, input, 4) == 0) {
    std::this_thread::sleep_for(20ms);
  }
  service.signal(SIGKILL);
  REQUIRE(service.wait(30s).has_value());
  producer.join();
  const auto committed_at_kill = test::committed_sum(group, input, 4);
  WARN_MESSAGE(committed_at_kill < static_cast<std::int64_t>(total),
               "the kill came after the last commit: nothing was left to redo");
  service.start();
  // Ready before it is signalled (the log keeps the first start's four lines too).
  REQUIRE(service.wait_for_log("ready, starting at offset", 60s, 8));

  // The consumer commits every offset: what the killed run left uncommitted is done again (its
  // outputs may already be there: the price of no transactions) and committed.
  auto committed = committed_at_kill;
  const auto deadline = std::chrono::steady_clock::now() + 180s;
  while (std::chrono::steady_clock::now() < deadline &&
         (committed = test::committed_sum(group, input, 4)) < static_cast<std::int64_t>(total)) {
    std::this_thread::sleep_for(200ms);
  }
  CHECK(committed == static_cast<std::int64_t>(total));
  MESSAGE("committed at the kill: " << committed_at_kill << " of " << total);
  service.signal(SIGTERM);
  const auto code = service.wait(60s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);

  // Every input is in the output, some perhaps twice.
  const auto report = test::audit(input, output);
  MESSAGE("at-least-once audit: " << report.summary());
  CHECK(report.inputs == total);
  CHECK(report.missing == 0);
  CHECK(report.outputs >= total);
  CHECK(report.no_lineage == 0);
}

TEST_CASE("the audit shows where each copy of a duplicated input is and which attempt wrote it") {
  const auto input = test::unique_name("in");
  const auto output = test::unique_name("out");
  test::create_topic(input, 1);
  test::create_topic(output, 2);
  for (int i = 0; i < 3; ++i) test::produce_raw(input, 0, fmt::format("k{}", i), "v");
  // Outputs as a service would write them, but input 1 twice: by two attempts, in two partitions.
  std::string error;
  auto producer = kafka::PlainProducer::create({{"bootstrap.servers", test::bootstrap()}}, output, error);
  REQUIRE_MESSAGE(producer, error);
  const std::vector<std::tuple<int, int, std::string>> outputs{
      {0, 0, "a-1"}, {0, 1, "a-1"}, {1, 1, "b-2"}, {0, 2, "a-1"}};
  for (const auto& [partition, source, attempt] : outputs) {
    const std::string lineage = verify::format_lineage(input, 0, source);
    const std::vector<kafka::ProduceHeader> headers{{"exactly.lineage", lineage},
                                                    {"exactly.attempt", attempt}};
    kafka::ProduceRecord record;
    record.value = std::string_view{"v"};
    record.partition = partition;
    record.headers = headers;
    const auto e = producer->produce(record);
    REQUIRE_MESSAGE(!e, e.describe());
  }
  const auto flushed = producer->flush(30s);
  REQUIRE_MESSAGE(!flushed, flushed.describe());

  const verify::Report report = test::audit(input, output);
  CHECK(report.duplicated == 1);
  CHECK(report.missing == 0);
  const std::string copy = verify::format_lineage(input, 0, 1);
  REQUIRE(report.duplicate_copies.size() == 2);
  CHECK(report.duplicate_copies[0] == copy + ": output partition 0 offset 1 attempt a-1");
  CHECK(report.duplicate_copies[1] == copy + ": output partition 1 offset 0 attempt b-2");
}
