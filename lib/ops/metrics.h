// The service's Prometheus metrics: one registry, the families below, and per-partition handles so
// the record path costs only atomic adds.
//
// Naming follows Prometheus: the exactly_ prefix, counters end in _total, durations are seconds.
// Labels are bounded: topic and partition (of the input; the assignment bounds them), and small
// fixed sets of reasons, kinds and actions. Keys and offsets are never labels.
//
// The seed's five monitoring items, as PromQL over these families:
//   transaction-abort-rate  sum(rate(exactly_transactions_aborted_total[5m])); by (reason) says
//                           why; divided by itself plus the commit rate, the share aborted
//   record-retry-rate       rate(exactly_producer_retries_total[5m]): librdkafka's request
//                           retries (brokers.*.txretries) of every transactional producer
//   requests-in-flight      exactly_producer_requests_in_flight: produce-side requests sent and
//                           awaiting their response (brokers.*.waitresp_cnt), all producers
//   records-lag-max         max(exactly_consumer_lag_records): the partition furthest behind
//   commit-rate             rate(exactly_transactions_committed_total[5m])
//
// Thread safety: every call may come from any thread, except observe_transform() and
// flush_transform(), which only the engine's thread makes; HTTP scrapes run concurrently.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "exactly/version.h"
#include "ops/stats.h"

namespace exactly::ops {

// Why a record could not be reflected in the output (the dead letter's exactly.error.class).
enum class FailureClass { transform, too_large, crash };
// Why a record produced nothing: the transform asked for it, or on_error = "skip" after a failure.
enum class SkipReason { filtered, transform, too_large, crash };
enum class AbortReason {
  commit_failed,    // commit or send_offsets_to_transaction failed with an abortable error
  produce_failed,   // producing an output failed
  record_failure,   // on_error = "fail": the range is never committed
  watchdog,         // the transaction stayed open too long
  lost_assignment,  // the partition was lost, so nothing of it may become visible
  fatal_error,      // the producer failed fatally with a transaction open
  shutdown,         // a second signal, or the shutdown deadline
  hook,             // the test commit hook refused the commit
};
// The error's class as kafka::Error reports it; `fenced` when Error::fenced() (whatever the kind).
enum class ErrorKind { retriable, abortable, fatal, fenced, other };
// What the engine did about the error.
enum class ErrorAction { retry, abort, recreate, stop, dead_letter, skip };

std::string_view to_string(FailureClass v);
std::string_view to_string(SkipReason v);
std::string_view to_string(AbortReason v);
std::string_view to_string(ErrorKind v);
std::string_view to_string(ErrorAction v);

// The series of one assigned input partition, resolved once by Metrics::add_partition. Plain
// pointers: an increment is one atomic add. Valid until remove_partition of the same partition.
struct PartitionMetrics {
  prometheus::Counter* consumed = nullptr;      // exactly_records_consumed_total{topic,partition}
  prometheus::Counter* produced = nullptr;      // exactly_records_produced_total{partition}
  prometheus::Gauge* consumer_lag = nullptr;    // set from the consumer's statistics
  prometheus::Gauge* lso_gap = nullptr;         // set from the consumer's statistics
  prometheus::Gauge* last_stable_offset = nullptr;  // likewise
};

// A counter a plugin keeps through the host API's counter_add (plugin::Counters holds them).
struct PluginCount {
  std::string plugin;
  std::string name;
  std::uint64_t value = 0;
};
using PluginCounts = std::function<std::vector<PluginCount>()>;

class Metrics {
 public:
  // Plugins name their counters, so their series are capped: names past this many are not
  // exported (a warning says which).
  static constexpr std::size_t max_plugin_series = 200;

  using Duration = std::chrono::steady_clock::duration;

  explicit Metrics(std::string_view version = exactly::version);
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  [[nodiscard]] prometheus::Registry& registry() { return registry_; }
  // Everything in the Prometheus text exposition format (what GET /metrics returns). Reads the
  // plugin counters first, when a source is set.
  [[nodiscard]] std::string serialize() const;

  // Where the plugins' counters come from: each serialize() exports them as
  // exactly_plugin_counter_total{plugin,counter}. Set once, before the HTTP server starts.
  void set_plugin_counts(PluginCounts source) { plugin_counts_ = std::move(source); }

  // On assignment: the partition's series, created at 0 (or the existing ones if it is already
  // added). Also counts it in exactly_assigned_partitions.
  PartitionMetrics add_partition(std::string_view topic, std::int32_t partition);
  // On revocation or loss: removes the partition's series, so a departed partition's lag does
  // not linger; its handles dangle from here on. Removing an unknown partition does nothing.
  void remove_partition(std::string_view topic, std::int32_t partition);

  // Per record. Counters are pre-resolved per reason.
  void record_dead_lettered(FailureClass reason) { dead_lettered_[index(reason)]->Increment(); }
  void record_skipped(SkipReason reason) { skipped_[index(reason)]->Increment(); }
  // Per record, from the engine's thread only: counted here without a lock, and handed to the
  // histogram (which takes a mutex per call) by flush_transform(), from the same thread.
  void observe_transform(Duration d) {
    const double value = seconds(d);
    const auto bucket = static_cast<std::size_t>(
        std::lower_bound(transform_bounds_.begin(), transform_bounds_.end(), value) -
        transform_bounds_.begin());
    transform_pending_[bucket] += 1;
    transform_pending_sum_ += value;
    transform_pending_any_ = true;
  }
  void flush_transform();

  // Per transaction. `flush`: delivering its records before the commit; `commit_latency`: the
  // commit itself (send_offsets and commit_transaction); `duration`: from begin to the end of
  // the commit.
  void transaction_committed(Duration flush, Duration commit_latency, Duration duration,
                             std::int64_t records, std::int64_t bytes);
  void transaction_aborted(AbortReason reason) { aborted_[index(reason)]->Increment(); }
  // Age of the oldest open transaction; zero when none is open. Set from the loop's tick.
  void set_oldest_open_transaction(Duration age) { oldest_open_.Set(seconds(age)); }

  void producer_fenced() { fenced_.Increment(); }
  void producer_recreated() { recreated_.Increment(); }
  void rebalance() { rebalances_.Increment(); }
  // The consumer's running count of fetch wake-ups (kafka::FetchWaker); adds what is new.
  void set_fetch_wakeups(std::int64_t total);
  // The loop stopped for a partition's commit: the records held behind it reached their bound.
  void waited_for_commit(Duration waited) {
    commit_waits_.Increment();
    commit_wait_seconds_.Increment(seconds(waited));
  }
  void set_quarantined_partitions(std::int64_t n) { quarantined_.Set(static_cast<double>(n)); }
  // Every error the engine acted on. Rare, so the series is looked up per call.
  void error(ErrorKind kind, ErrorAction action);

  // librdkafka statistics of the consumer: LSO gap and last stable offset of the assigned
  // partitions (others are ignored). The lag is the engine's own figure (PartitionMetrics::
  // consumer_lag): its position against the end offset librdkafka last fetched.
  void apply_consumer_statistics(const Statistics& stats);
  // librdkafka statistics of the transactional producer of input partition `partition`: adds its
  // new retries to exactly_producer_retries_total and sets the in-flight gauge to the sum over
  // all producers. A re-created producer (a new client name) starts from zero again.
  void apply_producer_statistics(std::int32_t partition, const Statistics& stats);

 private:
  template <class E>
  static constexpr std::size_t index(E e) {
    return static_cast<std::size_t>(e);
  }
  static double seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

  void export_plugin_counts() const;

  struct ProducerState {
    std::string client;  // librdkafka's instance name: a new one is a new producer
    std::int64_t retries = 0;
    std::int64_t in_flight = 0;
  };

  prometheus::Registry registry_;

  prometheus::Family<prometheus::Counter>& consumed_family_;
  prometheus::Family<prometheus::Counter>& produced_family_;
  prometheus::Family<prometheus::Gauge>& lag_family_;
  prometheus::Family<prometheus::Gauge>& lso_gap_family_;
  prometheus::Family<prometheus::Gauge>& lso_family_;
  prometheus::Family<prometheus::Counter>& errors_family_;

  std::array<prometheus::Counter*, 3> dead_lettered_{};
  std::array<prometheus::Counter*, 4> skipped_{};
  std::array<prometheus::Counter*, 8> aborted_{};

  prometheus::Counter& committed_;
  prometheus::Counter& fenced_;
  prometheus::Counter& recreated_;
  prometheus::Counter& rebalances_;
  prometheus::Counter& fetch_wakeups_;
  std::int64_t fetch_wakeups_seen_ = 0;
  prometheus::Counter& commit_waits_;
  prometheus::Counter& commit_wait_seconds_;
  prometheus::Counter& retries_;
  prometheus::Histogram& commit_latency_;
  prometheus::Histogram& commit_flush_;
  prometheus::Histogram& transaction_seconds_;
  prometheus::Histogram& transaction_records_;
  prometheus::Histogram& transaction_bytes_;
  prometheus::Histogram& transform_seconds_;
  std::vector<double> transform_bounds_;
  std::vector<double> transform_pending_;  // per bucket, one more than the bounds
  double transform_pending_sum_ = 0;
  bool transform_pending_any_ = false;
  prometheus::Gauge& oldest_open_;
  prometheus::Gauge& assigned_gauge_;
  prometheus::Gauge& quarantined_;
  prometheus::Gauge& in_flight_;

  // Partition membership and producer state change on assignment and statistics, not per record.
  std::mutex mutex_;
  std::map<std::pair<std::string, std::int32_t>, PartitionMetrics> assigned_;
  std::map<std::int32_t, ProducerState> producers_;

  // Plugin counters: what was exported so far, per (plugin, name). Scrapes run concurrently.
  PluginCounts plugin_counts_;
  prometheus::Family<prometheus::Counter>& plugin_family_;
  mutable std::mutex plugin_mutex_;
  mutable std::map<std::pair<std::string, std::string>,
                   std::pair<prometheus::Counter*, std::uint64_t>>
      plugin_series_;
  mutable bool plugin_cap_warned_ = false;
};

}  // namespace exactly::ops
