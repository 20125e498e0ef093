// Reads a whole topic back, read_committed, from the beginning to its end as of the call: the
// auditor's view of what consumers can see (DESIGN.md item 9). No consumer group is joined and
// nothing is ever committed, so reading leaves no trace in the cluster.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace exactly::kafka {

struct ReadHeader {
  std::string_view name;
  std::optional<std::string_view> value;  // nullopt: a null value
};

// One committed record. Every view (and `headers`) is valid during the callback only.
struct ReadRecord {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;  // -1 if none
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::span<const ReadHeader> headers;
};

struct ReadOptions {
  std::string bootstrap_servers;
  std::string topic;
  // Extra librdkafka properties (security, timeouts). The reader owns group.id,
  // isolation.level, enable.auto.commit, enable.auto.offset.store, enable.partition.eof,
  // auto.offset.reset and allow.auto.create.topics: setting one of them otherwise is an error.
  std::vector<std::pair<std::string, std::string>> properties;
  std::chrono::milliseconds timeout{60000};  // bounds the whole call
  // Also deliver records of aborted and open transactions, up to the high watermark. Only for
  // tests that prove an aborted attempt was written and is hidden from read_committed readers.
  bool read_uncommitted = false;
  // Where each partition's read ends (see end_offsets); empty: each partition's end as of the call.
  std::vector<std::int64_t> ends{};
};

// Reads every partition of `options.topic` from its first offset up to its last stable offset as
// of the call, or up to `options.ends` (records committed later are not delivered), calling `on_record` in offset order per
// partition, on the calling thread. Aborted records and transaction markers are never delivered.
// nullopt when every partition was read to that end; otherwise why not: the topic does not exist,
// a property was refused, a consume error occurred, or `options.timeout` passed first.
// An exception thrown by `on_record` propagates (the client is destroyed without blocking).
[[nodiscard]] std::optional<std::string> read_topic(
    const ReadOptions& options, const std::function<void(const ReadRecord&)>& on_record);

// Every partition's end as of now, as read_topic would take it: the last stable offset (the high
// watermark with read_uncommitted). Or why not.
[[nodiscard]] std::variant<std::vector<std::int64_t>, std::string> end_offsets(
    const ReadOptions& options);

// The partition count of `options.topic` from cluster metadata, or why not (the topic does not
// exist, the timeout passed).
[[nodiscard]] std::variant<std::int32_t, std::string> partition_count(const ReadOptions& options);

}  // namespace exactly::kafka
