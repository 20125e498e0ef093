// The Prometheus metrics: names, labels, partition handles and their removal, statistics.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "exactly/version.h"
#include "ops/health.h"
#include "ops/metrics.h"
#include "ops/observer.h"
#include "ops/stats.h"

using namespace exactly::ops;
using namespace std::chrono_literals;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

PartitionStatistics partition(std::string topic, std::int32_t number, std::int64_t hi,
                              std::int64_t ls, std::int64_t app) {
  PartitionStatistics p;
  p.topic = std::move(topic);
  p.partition = number;
  p.hi_offset = hi;
  p.ls_offset = ls;
  p.app_offset = app;
  return p;
}

Statistics producer_stats(std::string name, std::int64_t retries, std::int64_t in_flight) {
  Statistics s;
  s.name = std::move(name);
  s.type = "producer";
  s.brokers.push_back({"b1", 0, in_flight, retries});
  return s;
}

}  // namespace

TEST_CASE("every family is exposed, with conventional names") {
  Metrics m;
  // prometheus-cpp leaves out a family with no series yet: these get theirs from a partition
  // and from the first error.
  m.add_partition("payments", 0);
  m.error(ErrorKind::other, ErrorAction::stop);
  const std::string text = m.serialize();
  for (const char* name :
       {"exactly_records_consumed_total", "exactly_records_produced_total",
        "exactly_records_dead_lettered_total", "exactly_records_skipped_total",
        "exactly_transactions_committed_total", "exactly_transactions_aborted_total",
        "exactly_producers_fenced_total", "exactly_producers_recreated_total",
        "exactly_commit_latency_seconds", "exactly_commit_flush_seconds",
        "exactly_transaction_duration_seconds",
        "exactly_transaction_records", "exactly_transaction_bytes",
        "exactly_consumer_lag_records", "exactly_lso_gap_records", "exactly_last_stable_offset",
        "exactly_oldest_open_transaction_seconds", "exactly_rebalances_total",
        "exactly_fetch_wakeups_total", "exactly_commit_waits_total",
        "exactly_commit_wait_seconds_total",
        "exactly_assigned_partitions", "exactly_producer_retries_total",
        "exactly_producer_requests_in_flight", "exactly_transform_seconds",
        "exactly_errors_total", "exactly_build_info", "exactly_quarantined_partitions"}) {
    CAPTURE(name);
    CHECK(contains(text, std::string{"# TYPE "} + name));
  }
  CHECK(contains(text, std::string{"exactly_build_info{version=\""} + exactly::version + "\"} 1"));
  // Every reason starts at zero, so the first event shows in rate().
  CHECK(contains(text, "exactly_transactions_aborted_total{reason=\"watchdog\"} 0"));
  CHECK(contains(text, "exactly_records_dead_lettered_total{reason=\"too_large\"} 0"));
  CHECK(contains(text, "exactly_records_skipped_total{reason=\"filtered\"} 0"));
  CHECK(contains(text, "exactly_commit_latency_seconds_bucket{le=\"0.001\"} 0"));
  CHECK(contains(text, "exactly_commit_latency_seconds_bucket{le=\"10\"} 0"));
  CHECK(contains(text, "exactly_transform_seconds_bucket{le=\"1e-06\"} 0"));
}

TEST_CASE("partition handles count records, and removal takes the partition's series away") {
  Metrics m;
  const PartitionMetrics p3 = m.add_partition("payments", 3);
  REQUIRE(p3.consumed != nullptr);
  p3.consumed->Increment();
  p3.consumed->Increment();
  p3.produced->Increment(5);
  m.add_partition("payments", 4);
  std::string text = m.serialize();
  CHECK(contains(text, "exactly_records_consumed_total{partition=\"3\",topic=\"payments\"} 2"));
  CHECK(contains(text, "exactly_records_produced_total{partition=\"3\"} 5"));
  CHECK(contains(text, "exactly_consumer_lag_records{partition=\"4\",topic=\"payments\"} 0"));
  CHECK(contains(text, "exactly_assigned_partitions 2"));

  // Adding it again hands back the same series, not a second set.
  CHECK(m.add_partition("payments", 3).consumed == p3.consumed);

  m.remove_partition("payments", 3);
  m.remove_partition("payments", 3);   // twice: nothing more happens
  m.remove_partition("elsewhere", 4);  // never added: nothing happens
  text = m.serialize();
  CHECK_FALSE(contains(text, "partition=\"3\""));
  CHECK(contains(text, "exactly_records_consumed_total{partition=\"4\",topic=\"payments\"} 0"));
  CHECK(contains(text, "exactly_assigned_partitions 1"));

  // Assigned again later: counting starts over on a fresh series.
  m.add_partition("payments", 3).consumed->Increment();
  CHECK(contains(m.serialize(),
                 "exactly_records_consumed_total{partition=\"3\",topic=\"payments\"} 1"));
}

TEST_CASE("records, transactions and errors land in their labelled series") {
  Metrics m;
  m.record_dead_lettered(FailureClass::crash);
  m.record_skipped(SkipReason::too_large);
  m.record_skipped(SkipReason::too_large);
  m.transaction_aborted(AbortReason::lost_assignment);
  m.transaction_committed(20ms, 3ms, 120ms, 250, 40000);
  m.producer_fenced();
  m.producer_recreated();
  m.rebalance();
  m.set_fetch_wakeups(3);
  m.set_fetch_wakeups(5);
  m.set_fetch_wakeups(5);  // a running total: only what is new counts
  m.waited_for_commit(250ms);
  m.waited_for_commit(500ms);
  m.set_quarantined_partitions(1);
  m.set_oldest_open_transaction(1500ms);
  m.observe_transform(3us);
  // Observations reach the histogram in bulk, when the engine's loop flushes them.
  CHECK(contains(m.serialize(), "exactly_transform_seconds_count 0"));
  m.observe_transform(1us);  // on a bound: counted in that bucket (le="1e-06")
  m.flush_transform();
  m.flush_transform();  // nothing new: adds nothing
  m.error(ErrorKind::fenced, ErrorAction::recreate);
  m.error(ErrorKind::fenced, ErrorAction::recreate);
  m.error(ErrorKind::retriable, ErrorAction::retry);
  const std::string text = m.serialize();
  CHECK(contains(text, "exactly_records_dead_lettered_total{reason=\"crash\"} 1"));
  CHECK(contains(text, "exactly_records_skipped_total{reason=\"too_large\"} 2"));
  CHECK(contains(text, "exactly_transactions_aborted_total{reason=\"lost_assignment\"} 1"));
  CHECK(contains(text, "exactly_transactions_committed_total 1"));
  CHECK(contains(text, "exactly_commit_latency_seconds_bucket{le=\"0.0025\"} 0"));
  CHECK(contains(text, "exactly_commit_latency_seconds_bucket{le=\"0.005\"} 1"));
  CHECK(contains(text, "exactly_commit_flush_seconds_bucket{le=\"0.01\"} 0"));
  CHECK(contains(text, "exactly_commit_flush_seconds_bucket{le=\"0.025\"} 1"));
  CHECK(contains(text, "exactly_transaction_duration_seconds_count 1"));
  CHECK(contains(text, "exactly_transaction_records_sum 250"));
  CHECK(contains(text, "exactly_transaction_bytes_sum 40000"));
  CHECK(contains(text, "exactly_producers_fenced_total 1"));
  CHECK(contains(text, "exactly_producers_recreated_total 1"));
  CHECK(contains(text, "exactly_rebalances_total 1"));
  CHECK(contains(text, "exactly_fetch_wakeups_total 5"));
  CHECK(contains(text, "exactly_commit_waits_total 2"));
  CHECK(contains(text, "exactly_commit_wait_seconds_total 0.75"));
  CHECK(contains(text, "exactly_quarantined_partitions 1"));
  CHECK(contains(text, "exactly_oldest_open_transaction_seconds 1.5"));
  CHECK(contains(text, "exactly_transform_seconds_bucket{le=\"1e-06\"} 1"));
  CHECK(contains(text, "exactly_transform_seconds_bucket{le=\"2.5e-06\"} 1"));
  CHECK(contains(text, "exactly_transform_seconds_bucket{le=\"5e-06\"} 2"));
  CHECK(contains(text, "exactly_transform_seconds_count 2"));
  CHECK(contains(text, "exactly_transform_seconds_sum 4e-06"));
  CHECK(contains(text, "exactly_errors_total{action=\"recreate\",kind=\"fenced\"} 2"));
  CHECK(contains(text, "exactly_errors_total{action=\"retry\",kind=\"retriable\"} 1"));
}

TEST_CASE("consumer statistics set LSO gap and last stable offset of assigned partitions only") {
  Metrics m;
  auto p0 = m.add_partition("payments", 0);
  m.add_partition("payments", 1);
  p0.consumer_lag->Set(7);  // the engine's own figure: statistics leave it alone
  Statistics s;
  s.partitions.push_back(partition("payments", 0, 120, 100, 40));  // gap 20
  s.partitions.push_back(partition("payments", 1, 10, 10, 10));    // no gap
  s.partitions.push_back(partition("payments", 2, 500, 400, 0));   // not ours
  s.partitions.push_back(partition("other", 0, 500, 400, 0));      // not ours
  m.apply_consumer_statistics(s);
  const std::string text = m.serialize();
  CHECK(contains(text, "exactly_lso_gap_records{partition=\"0\",topic=\"payments\"} 20"));
  CHECK(contains(text, "exactly_last_stable_offset{partition=\"0\",topic=\"payments\"} 100"));
  CHECK(contains(text, "exactly_lso_gap_records{partition=\"1\",topic=\"payments\"} 0"));
  CHECK(contains(text, "exactly_consumer_lag_records{partition=\"0\",topic=\"payments\"} 7"));
  CHECK_FALSE(contains(text, "partition=\"2\""));
  CHECK_FALSE(contains(text, "topic=\"other\""));

  Statistics unknown;
  unknown.partitions.push_back(partition("payments", 0, -1, -1, -1));
  m.apply_consumer_statistics(unknown);
  // An unknown reading keeps the last known value rather than claiming zero.
  CHECK(contains(m.serialize(), "exactly_lso_gap_records{partition=\"0\",topic=\"payments\"} 20"));
}

TEST_CASE("producer statistics: retries counted by delta, in-flight summed over producers") {
  Metrics m;
  m.add_partition("payments", 0);
  m.add_partition("payments", 1);
  m.apply_producer_statistics(0, producer_stats("exactly#producer-1", 3, 2));
  m.apply_producer_statistics(1, producer_stats("exactly#producer-2", 1, 5));
  m.apply_producer_statistics(0, producer_stats("exactly#producer-1", 4, 1));  // one more retry
  std::string text = m.serialize();
  CHECK(contains(text, "exactly_producer_retries_total 5"));
  CHECK(contains(text, "exactly_producer_requests_in_flight 6"));

  // Partition 0's producer is re-created: its count starts again from zero, nothing is lost or
  // counted twice.
  m.apply_producer_statistics(0, producer_stats("exactly#producer-3", 2, 0));
  text = m.serialize();
  CHECK(contains(text, "exactly_producer_retries_total 7"));
  CHECK(contains(text, "exactly_producer_requests_in_flight 5"));

  // Partition 1 goes, and its producer's requests with it.
  m.remove_partition("payments", 1);
  CHECK(contains(m.serialize(), "exactly_producer_requests_in_flight 0"));
}

TEST_CASE("plugin counters are exported on each scrape, capped in number") {
  Metrics m;
  std::vector<exactly::ops::PluginCount> counts{{"uppercase", "records_upcased", 3},
                                                {"uppercase", "bytes_seen", 40}};
  m.set_plugin_counts([&counts] { return counts; });
  std::string text = m.serialize();
  CHECK(contains(text, "exactly_plugin_counter_total{counter=\"records_upcased\",plugin=\"uppercase\"} 3"));
  CHECK(contains(text, "exactly_plugin_counter_total{counter=\"bytes_seen\",plugin=\"uppercase\"} 40"));

  counts[0].value = 10;
  text = m.serialize();
  CHECK(contains(text, "exactly_plugin_counter_total{counter=\"records_upcased\",plugin=\"uppercase\"} 10"));

  // Names past the cap are not exported; the ones already there keep counting.
  for (std::size_t i = 0; i < Metrics::max_plugin_series; ++i) {
    counts.push_back({"uppercase", "c" + std::to_string(i), 1});
  }
  counts[1].value = 41;
  text = m.serialize();
  CHECK(contains(text, "exactly_plugin_counter_total{counter=\"bytes_seen\",plugin=\"uppercase\"} 41"));
  std::size_t series = 0;
  for (std::size_t at = text.find("exactly_plugin_counter_total{"); at != std::string::npos;
       at = text.find("exactly_plugin_counter_total{", at + 1)) {
    ++series;
  }
  CHECK(series == Metrics::max_plugin_series);
}

TEST_CASE("the observer's statistics handlers feed metrics") {
  Metrics m;
  const auto t0 = Health::Clock::now();
  Health h(std::chrono::hours{1}, 10s, t0);
  m.add_partition("payments", 0);
  const Observer observer{m, h};

  const auto consumer = consumer_statistics(observer);
  consumer(R"({"topics": {"payments": {"partitions": {
      "0": {"hi_offset": 90, "ls_offset": 80, "app_offset": 50},
      "-1": {"hi_offset": -1001}}}}})");
  CHECK(contains(m.serialize(), "exactly_lso_gap_records{partition=\"0\",topic=\"payments\"} 10"));
  CHECK(contains(m.serialize(),
                 "exactly_last_stable_offset{partition=\"0\",topic=\"payments\"} 80"));
  consumer("not json");  // logged once, otherwise ignored
  consumer("not json");
  CHECK(contains(m.serialize(), "exactly_lso_gap_records{partition=\"0\",topic=\"payments\"} 10"));

  const auto producer = producer_statistics(observer, 0);
  producer(R"({"name": "exactly#producer-1",
                "brokers": {"b": {"waitresp_cnt": 2, "txretries": 3}}})");
  const std::string text = m.serialize();
  CHECK(contains(text, "exactly_producer_retries_total 3"));
  CHECK(contains(text, "exactly_producer_requests_in_flight 2"));
}
