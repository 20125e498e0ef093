#include "ops/stats.h"

#include <charconv>
#include <cstdint>
#include <exception>

#include <nlohmann/json.hpp>

namespace exactly::ops {
namespace {

using nlohmann::json;

// A field that is absent, not an integer, or out of range reads as `fallback`.
std::int64_t integer(const json& object, const char* key, std::int64_t fallback) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (it->is_number_unsigned()) {
    const auto value = it->get<std::uint64_t>();
    return value <= static_cast<std::uint64_t>(INT64_MAX) ? static_cast<std::int64_t>(value)
                                                          : fallback;
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  return fallback;
}

std::string text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// librdkafka prints -1001 (RD_KAFKA_OFFSET_INVALID) and other negative logical offsets.
std::int64_t offset(const json& object, const char* key) {
  const std::int64_t value = integer(object, key, -1);
  return value >= 0 ? value : -1;
}

void read_brokers(const json& root, Statistics& out) {
  const auto brokers = root.find("brokers");
  if (brokers == root.end() || !brokers->is_object()) return;
  for (const auto& [name, broker] : brokers->items()) {
    if (!broker.is_object()) continue;
    BrokerStatistics b;
    b.name = name;
    b.outbuf_cnt = integer(broker, "outbuf_cnt", 0);
    b.waitresp_cnt = integer(broker, "waitresp_cnt", 0);
    b.txretries = integer(broker, "txretries", 0);
    out.brokers.push_back(std::move(b));
  }
}

void read_topics(const json& root, Statistics& out) {
  const auto topics = root.find("topics");
  if (topics == root.end() || !topics->is_object()) return;
  for (const auto& [topic, body] : topics->items()) {
    if (!body.is_object()) continue;
    const auto partitions = body.find("partitions");
    if (partitions == body.end() || !partitions->is_object()) continue;
    for (const auto& [key, p] : partitions->items()) {
      if (!p.is_object()) continue;
      std::int32_t number = -1;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), number);
      // "-1" is librdkafka's internal UA (unassigned) partition, which holds records not yet
      // partitioned and has no offsets of its own.
      if (ec != std::errc{} || end != key.data() + key.size() || number < 0) continue;
      PartitionStatistics s;
      s.topic = topic;
      s.partition = number;
      s.hi_offset = offset(p, "hi_offset");
      s.ls_offset = offset(p, "ls_offset");
      s.app_offset = offset(p, "app_offset");
      s.committed_offset = offset(p, "committed_offset");
      s.consumer_lag = offset(p, "consumer_lag");
      out.partitions.push_back(std::move(s));
    }
  }
}

}  // namespace

std::optional<std::int64_t> PartitionStatistics::lag() const {
  const std::int64_t position = app_offset >= 0 ? app_offset : committed_offset;
  if (ls_offset < 0 || position < 0) return std::nullopt;
  // The watermarks are fetched less often than records arrive: the position can be ahead.
  return ls_offset > position ? ls_offset - position : 0;
}

std::optional<std::int64_t> PartitionStatistics::lso_gap() const {
  if (hi_offset < 0 || ls_offset < 0) return std::nullopt;
  return hi_offset > ls_offset ? hi_offset - ls_offset : 0;
}

std::int64_t Statistics::requests_in_flight() const {
  std::int64_t sum = 0;
  for (const auto& b : brokers) sum += b.waitresp_cnt;
  return sum;
}

std::int64_t Statistics::requests_queued() const {
  std::int64_t sum = 0;
  for (const auto& b : brokers) sum += b.outbuf_cnt;
  return sum;
}

std::int64_t Statistics::retries() const {
  std::int64_t sum = 0;
  for (const auto& b : brokers) sum += b.txretries;
  return sum;
}

StatisticsResult parse_statistics(std::string_view text_json) noexcept {
  StatisticsResult result;
  try {
    const json root = json::parse(text_json, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) {
      result.error = "librdkafka statistics are not valid JSON";
      return result;
    }
    if (!root.is_object()) {
      result.error = "librdkafka statistics are not a JSON object";
      return result;
    }
    Statistics s;
    s.name = text(root, "name");
    s.type = text(root, "type");
    read_brokers(root, s);
    read_topics(root, s);
    result.statistics = std::move(s);
  } catch (const std::exception& e) {  // allocation failure; nothing else throws here
    result.statistics.reset();
    result.error = std::string{"librdkafka statistics: "} + e.what();
  } catch (...) {
    result.statistics.reset();
    result.error = "librdkafka statistics: unknown failure";
  }
  return result;
}

}  // namespace exactly::ops
