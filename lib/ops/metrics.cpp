#include "ops/metrics.h"

#include <prometheus/text_serializer.h>
#include <spdlog/spdlog.h>

namespace exactly::ops {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;
using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;
using prometheus::Registry;

constexpr std::array failure_classes{FailureClass::transform, FailureClass::too_large,
                                     FailureClass::crash};
constexpr std::array skip_reasons{SkipReason::filtered, SkipReason::transform,
                                  SkipReason::too_large, SkipReason::crash};
constexpr std::array abort_reasons{AbortReason::commit_failed,   AbortReason::produce_failed,
                                   AbortReason::record_failure,  AbortReason::watchdog,
                                   AbortReason::lost_assignment, AbortReason::fatal_error,
                                   AbortReason::shutdown,        AbortReason::hook};

Family<Counter>& counter_family(Registry& r, const char* name, const char* help) {
  return BuildCounter().Name(name).Help(help).Register(r);
}
Family<Gauge>& gauge_family(Registry& r, const char* name, const char* help) {
  return BuildGauge().Name(name).Help(help).Register(r);
}
Counter& counter(Registry& r, const char* name, const char* help) {
  return counter_family(r, name, help).Add({});
}
Gauge& gauge(Registry& r, const char* name, const char* help) {
  return gauge_family(r, name, help).Add({});
}
Histogram& histogram(Registry& r, const char* name, const char* help,
                     const Histogram::BucketBoundaries& buckets) {
  return BuildHistogram().Name(name).Help(help).Register(r).Add({}, buckets);
}

// Creates every reason's series up front: a series that appears only on the first event makes
// rate() and increase() miss that event.
template <std::size_t N, class E>
std::array<Counter*, N> by_reason(Family<Counter>& family, const std::array<E, N>& reasons) {
  std::array<Counter*, N> out{};
  for (const E reason : reasons) {
    out[static_cast<std::size_t>(reason)] =
        &family.Add({{"reason", std::string{to_string(reason)}}});
  }
  return out;
}

// Commit round trips: a local broker answers in about a millisecond, a struggling one in seconds.
const Histogram::BucketBoundaries commit_buckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                 0.25,  0.5,    1,     2.5,  5,     10};
// Transactions last about transactions.commit_interval (100 ms by default) up to the timeout.
const Histogram::BucketBoundaries transaction_buckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                      1,     2.5,  5,     10,   30,  60};
// Up to and past transactions.max_records (10000 by default).
const Histogram::BucketBoundaries record_buckets{1,    5,    10,    50,    100,   500,
                                                 1000, 5000, 10000, 50000, 100000};
// 1 KiB to 64 MiB by fours, around transactions.max_bytes (8 MiB by default).
const Histogram::BucketBoundaries byte_buckets{1024,    4096,     16384,    65536,   262144,
                                               1048576, 4194304, 16777216, 67108864};
// A built-in transform takes microseconds; a plugin may take much longer.
const Histogram::BucketBoundaries transform_buckets{1e-6,   2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,
                                                    1e-4,   2.5e-4, 5e-4,   1e-3, 2.5e-3, 5e-3,
                                                    0.01,   0.025,  0.1,    1};

}  // namespace

std::string_view to_string(FailureClass v) {
  switch (v) {
    case FailureClass::transform: return "transform";
    case FailureClass::too_large: return "too_large";
    case FailureClass::crash: return "crash";
  }
  return "unknown";
}

std::string_view to_string(SkipReason v) {
  switch (v) {
    case SkipReason::filtered: return "filtered";
    case SkipReason::transform: return "transform";
    case SkipReason::too_large: return "too_large";
    case SkipReason::crash: return "crash";
  }
  return "unknown";
}

std::string_view to_string(AbortReason v) {
  switch (v) {
    case AbortReason::commit_failed: return "commit_failed";
    case AbortReason::produce_failed: return "produce_failed";
    case AbortReason::record_failure: return "record_failure";
    case AbortReason::watchdog: return "watchdog";
    case AbortReason::lost_assignment: return "lost_assignment";
    case AbortReason::fatal_error: return "fatal_error";
    case AbortReason::shutdown: return "shutdown";
    case AbortReason::hook: return "hook";
  }
  return "unknown";
}

std::string_view to_string(ErrorKind v) {
  switch (v) {
    case ErrorKind::retriable: return "retriable";
    case ErrorKind::abortable: return "abortable";
    case ErrorKind::fatal: return "fatal";
    case ErrorKind::fenced: return "fenced";
    case ErrorKind::other: return "other";
  }
  return "unknown";
}

std::string_view to_string(ErrorAction v) {
  switch (v) {
    case ErrorAction::retry: return "retry";
    case ErrorAction::abort: return "abort";
    case ErrorAction::recreate: return "recreate";
    case ErrorAction::stop: return "stop";
    case ErrorAction::dead_letter: return "dead_letter";
    case ErrorAction::skip: return "skip";
  }
  return "unknown";
}

Metrics::Metrics(std::string_view version)
    : consumed_family_(counter_family(registry_, "exactly_records_consumed_total",
                                      "Input records handed to the transform, by input partition; "
                                      "records redone after an abort count again")),
      produced_family_(counter_family(registry_, "exactly_records_produced_total",
                                      "Output records produced (dead letters not included), by "
                                      "the input partition whose transaction wrote them")),
      lag_family_(gauge_family(registry_, "exactly_consumer_lag_records",
                               "Committed input records not yet read: last stable offset minus "
                               "the consumer's position")),
      lso_gap_family_(gauge_family(registry_, "exactly_lso_gap_records",
                                   "High watermark minus last stable offset: input records of "
                                   "transactions still open upstream")),
      lso_family_(gauge_family(registry_, "exactly_last_stable_offset",
                               "The input partition's last stable offset: with a gap above zero, "
                               "one that does not move means an upstream transaction left open")),
      errors_family_(counter_family(registry_, "exactly_errors_total",
                                    "Errors the engine acted on, by kind and the action taken")),
      committed_(counter(registry_, "exactly_transactions_committed_total",
                         "Transactions committed")),
      fenced_(counter(registry_, "exactly_producers_fenced_total",
                      "Producers fenced by another instance with the same transactional.id")),
      recreated_(counter(registry_, "exactly_producers_recreated_total",
                         "Transactional producers destroyed and created again after a fatal "
                         "error")),
      rebalances_(counter(registry_, "exactly_rebalances_total",
                          "Rebalance events (assignments and revocations)")),
      fetch_wakeups_(counter(registry_, "exactly_fetch_wakeups_total",
                             "Times the consumer's prefetch queue ran low and its fetchers were "
                             "asked to fetch again")),
      commit_waits_(counter(registry_, "exactly_commit_waits_total",
                            "Times the loop stopped for a partition's commit, the records held "
                            "behind it having reached their bound")),
      commit_wait_seconds_(counter(registry_, "exactly_commit_wait_seconds_total",
                                   "Time the loop spent stopped for a partition's commit")),
      retries_(counter(registry_, "exactly_producer_retries_total",
                       "Requests the transactional producers retried (librdkafka txretries)")),
      commit_latency_(histogram(registry_, "exactly_commit_latency_seconds",
                                "Time to commit a transaction once its records are delivered: "
                                "sending its offsets and ending it",
                                commit_buckets)),
      commit_flush_(histogram(registry_, "exactly_commit_flush_seconds",
                              "Time to deliver a transaction's outstanding records before its "
                              "commit",
                              commit_buckets)),
      transaction_seconds_(histogram(registry_, "exactly_transaction_duration_seconds",
                                     "Time from a transaction's begin to its commit",
                                     transaction_buckets)),
      transaction_records_(histogram(registry_, "exactly_transaction_records",
                                     "Input records per committed transaction", record_buckets)),
      transaction_bytes_(histogram(registry_, "exactly_transaction_bytes",
                                   "Output bytes per committed transaction", byte_buckets)),
      transform_seconds_(histogram(registry_, "exactly_transform_seconds",
                                   "Time the transform took per record", transform_buckets)),
      transform_bounds_(transform_buckets),
      transform_pending_(transform_buckets.size() + 1, 0.0),
      oldest_open_(gauge(registry_, "exactly_oldest_open_transaction_seconds",
                         "Age of the oldest open transaction; 0 when none is open")),
      assigned_gauge_(gauge(registry_, "exactly_assigned_partitions",
                            "Input partitions assigned to this instance")),
      quarantined_(gauge(registry_, "exactly_quarantined_partitions",
                         "Partitions whose committed offset is held by a quarantine")),
      in_flight_(gauge(registry_, "exactly_producer_requests_in_flight",
                       "Requests the transactional producers sent and await a response for")),
      plugin_family_(counter_family(registry_, "exactly_plugin_counter_total",
                                    "Counters a plugin keeps through the host API (counter_add), "
                                    "by plugin and counter name; not transactional")) {
  dead_lettered_ = by_reason(
      counter_family(registry_, "exactly_records_dead_lettered_total",
                     "Input records written to the dead-letter topic, by error class"),
      failure_classes);
  skipped_ = by_reason(counter_family(registry_, "exactly_records_skipped_total",
                                      "Input records that produced no output: filtered by the "
                                      "transform, or skipped after a failure (on_error = skip)"),
                       skip_reasons);
  aborted_ = by_reason(counter_family(registry_, "exactly_transactions_aborted_total",
                                      "Transactions aborted, by reason"),
                       abort_reasons);
  gauge_family(registry_, "exactly_build_info", "Always 1; the version is in the label")
      .Add({{"version", std::string{version}}})
      .Set(1);
}

std::string Metrics::serialize() const {
  export_plugin_counts();
  return prometheus::TextSerializer{}.Serialize(registry_.Collect());
}

PartitionMetrics Metrics::add_partition(std::string_view topic, std::int32_t partition) {
  std::lock_guard lock(mutex_);
  auto key = std::make_pair(std::string{topic}, partition);
  if (const auto it = assigned_.find(key); it != assigned_.end()) return it->second;
  const std::string number = std::to_string(partition);
  const prometheus::Labels labels{{"topic", key.first}, {"partition", number}};
  PartitionMetrics m;
  m.consumed = &consumed_family_.Add(labels);
  m.produced = &produced_family_.Add({{"partition", number}});
  m.consumer_lag = &lag_family_.Add(labels);
  m.lso_gap = &lso_gap_family_.Add(labels);
  m.last_stable_offset = &lso_family_.Add(labels);
  assigned_.emplace(std::move(key), m);
  assigned_gauge_.Set(static_cast<double>(assigned_.size()));
  return m;
}

void Metrics::remove_partition(std::string_view topic, std::int32_t partition) {
  std::lock_guard lock(mutex_);
  const auto it = assigned_.find(std::make_pair(std::string{topic}, partition));
  if (it == assigned_.end()) return;
  consumed_family_.Remove(it->second.consumed);
  produced_family_.Remove(it->second.produced);
  lag_family_.Remove(it->second.consumer_lag);
  lso_gap_family_.Remove(it->second.lso_gap);
  lso_family_.Remove(it->second.last_stable_offset);
  assigned_.erase(it);
  assigned_gauge_.Set(static_cast<double>(assigned_.size()));
  // The partition's producer goes with it.
  if (producers_.erase(partition) != 0) {
    std::int64_t in_flight = 0;
    for (const auto& [number, state] : producers_) in_flight += state.in_flight;
    in_flight_.Set(static_cast<double>(in_flight));
  }
}

void Metrics::export_plugin_counts() const {
  if (!plugin_counts_) return;
  const std::vector<PluginCount> counts = plugin_counts_();
  const std::lock_guard lock(plugin_mutex_);
  for (const PluginCount& count : counts) {
    auto key = std::make_pair(count.plugin, count.name);
    auto it = plugin_series_.find(key);
    if (it == plugin_series_.end()) {
      if (plugin_series_.size() >= max_plugin_series) {
        if (!plugin_cap_warned_) {
          plugin_cap_warned_ = true;
          spdlog::warn(
              "metrics: plugin {} counter '{}' is not exported: plugins already have {} counters, "
              "the most exactly_plugin_counter_total keeps",
              count.plugin, count.name, max_plugin_series);
        }
        continue;
      }
      prometheus::Counter& series =
          plugin_family_.Add({{"plugin", count.plugin}, {"counter", count.name}});
      it = plugin_series_.emplace(std::move(key), std::make_pair(&series, 0)).first;
    }
    auto& [series, exported] = it->second;
    if (count.value > exported) {
      series->Increment(static_cast<double>(count.value - exported));
      exported = count.value;
    }
  }
}

void Metrics::transaction_committed(Duration flush, Duration commit_latency, Duration duration,
                                    std::int64_t records, std::int64_t bytes) {
  committed_.Increment();
  commit_flush_.Observe(seconds(flush));
  commit_latency_.Observe(seconds(commit_latency));
  transaction_seconds_.Observe(seconds(duration));
  transaction_records_.Observe(static_cast<double>(records));
  transaction_bytes_.Observe(static_cast<double>(bytes));
}

void Metrics::flush_transform() {
  if (!transform_pending_any_) return;
  transform_seconds_.ObserveMultiple(transform_pending_, transform_pending_sum_);
  std::fill(transform_pending_.begin(), transform_pending_.end(), 0.0);
  transform_pending_sum_ = 0;
  transform_pending_any_ = false;
}

void Metrics::set_fetch_wakeups(std::int64_t total) {
  if (total > fetch_wakeups_seen_) {
    fetch_wakeups_.Increment(static_cast<double>(total - fetch_wakeups_seen_));
    fetch_wakeups_seen_ = total;
  }
}

void Metrics::error(ErrorKind kind, ErrorAction action) {
  errors_family_
      .Add({{"kind", std::string{to_string(kind)}}, {"action", std::string{to_string(action)}}})
      .Increment();
}

void Metrics::apply_consumer_statistics(const Statistics& stats) {
  std::lock_guard lock(mutex_);
  for (const auto& p : stats.partitions) {
    const auto it = assigned_.find(std::make_pair(p.topic, p.partition));
    if (it == assigned_.end()) continue;  // known to the client, but not ours
    if (const auto gap = p.lso_gap()) it->second.lso_gap->Set(static_cast<double>(*gap));
    if (p.ls_offset >= 0) it->second.last_stable_offset->Set(static_cast<double>(p.ls_offset));
  }
}

void Metrics::apply_producer_statistics(std::int32_t partition, const Statistics& stats) {
  std::lock_guard lock(mutex_);
  ProducerState& state = producers_[partition];
  const std::int64_t retries = stats.retries();
  if (state.client != stats.name) {
    // A new producer for this partition: its count starts at zero, not at the old one's.
    state.client = stats.name;
    state.retries = 0;
  }
  if (retries > state.retries) retries_.Increment(static_cast<double>(retries - state.retries));
  state.retries = retries;
  state.in_flight = stats.requests_in_flight();
  std::int64_t in_flight = 0;
  for (const auto& [number, s] : producers_) in_flight += s.in_flight;
  in_flight_.Set(static_cast<double>(in_flight));
}

}  // namespace exactly::ops
