#include "kafka/topic_reader.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kafka/conf_rdkafka.h"
#include "kafka/error_rdkafka.h"
#include "kafka/handles.h"
#include "kafka/timeout.h"

namespace exactly::kafka {
namespace {

using Clock = std::chrono::steady_clock;

// Keys the reader owns: reading committed data from the beginning, and never leaving a trace.
// auto.offset.reset=error: records deleted by retention while we read are an error, not a silent
// jump forward that an audit would misread as missing records.
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> owned_properties{{
    {"isolation.level", "read_committed"},
    {"enable.auto.commit", "false"},
    {"enable.auto.offset.store", "false"},
    {"enable.partition.eof", "true"},
    {"auto.offset.reset", "error"},
    {"allow.auto.create.topics", "false"},
    {"group.id", ""},  // always ours: a random id that is never committed
}};

// One poll waits at most this long, so that the deadline is checked often.
constexpr std::chrono::milliseconds poll_slice{200};
constexpr std::chrono::milliseconds retry_backoff{100};

std::chrono::milliseconds time_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds{0});
}

std::string random_group_id() {
  std::random_device device;
  std::uniform_int_distribution<std::uint64_t> any;
  return fmt::format("exactly-reader-{:016x}{:016x}", any(device), any(device));
}

// librdkafka calls this from rd_kafka_consumer_poll (the main queue is forwarded to the consumer
// queue): nothing may throw out of it.
void reader_error_cb(rd_kafka_t* rk, int err, const char* reason, void* opaque) noexcept;

// The reading consumer. It never joins a group and never commits, so it is destroyed without
// rd_kafka_consumer_close, which would have nothing to do and could only block. Its address is
// librdkafka's opaque: neither copyable nor movable.
class Reader {
 public:
  Reader() = default;
  ~Reader() {
    if (rk_) rd_kafka_destroy_flags(rk_.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  std::optional<std::string> open(const ReadOptions& options) {
    const auto required_value = [&](std::string_view owned, std::string_view value) {
      return owned == "isolation.level" && options.read_uncommitted ? std::string_view{"read_uncommitted"}
                                                                    : value;
    };
    for (const auto& [name, value] : options.properties) {
      for (const auto& [owned, fixed] : owned_properties) {
        const std::string_view required = required_value(owned, fixed);
        if (name != owned) continue;
        if (owned == "group.id") {
          return fmt::format("librdkafka property 'group.id' is not allowed: the topic reader "
                             "never joins a consumer group");
        }
        if (value != required) {
          return fmt::format("librdkafka property '{}' must be '{}' for the topic reader", name,
                             required);
        }
      }
    }
    Properties all;
    all.emplace_back("client.id", "exactly-reader");
    // EOF of a partition with nothing (more) to read comes with a fetch response, which the
    // broker holds back up to this long: the default 500 ms would be most of a small read.
    all.emplace_back("fetch.wait.max.ms", "100");
    all.insert(all.end(), options.properties.begin(), options.properties.end());
    if (!options.bootstrap_servers.empty()) {
      all.emplace_back("bootstrap.servers", options.bootstrap_servers);
    }
    for (const auto& [name, value] : owned_properties) {
      all.emplace_back(std::string{name}, name == "group.id" ? random_group_id()
                                                             : std::string{required_value(name, value)});
    }
    std::string error;
    ConfHandle conf = make_conf(all, error);
    if (!conf) return error;
    rd_kafka_conf_set_opaque(conf.get(), this);
    rd_kafka_conf_set_error_cb(conf.get(), reader_error_cb);
    rk_ = make_client(RD_KAFKA_CONSUMER, conf, error);
    if (!rk_) return error;
    // Client errors and logs are then served by rd_kafka_consumer_poll on our thread.
    if (Error e = make_error(rd_kafka_poll_set_consumer(rk_.get()), "rd_kafka_poll_set_consumer")) {
      return e.describe();
    }
    return std::nullopt;
  }

  [[nodiscard]] rd_kafka_t* get() const { return rk_.get(); }

  void record_client_error(rd_kafka_resp_err_t code, const char* reason) noexcept {
    try {
      std::string text = fmt::format("{}: {}", rd_kafka_err2name(code), reason);
      spdlog::warn("topic reader: librdkafka: {}", text);
      const std::lock_guard lock{mutex_};
      last_client_error_ = std::move(text);
    } catch (...) {
    }
  }

  // "; last client error: ..." or empty, to explain a timeout.
  [[nodiscard]] std::string client_error_suffix() const {
    const std::lock_guard lock{mutex_};
    if (last_client_error_.empty()) return {};
    return fmt::format("; last client error: {}", last_client_error_);
  }

 private:
  KafkaHandle rk_;
  mutable std::mutex mutex_;
  std::string last_client_error_;
};

void reader_error_cb(rd_kafka_t* /*rk*/, int err, const char* reason, void* opaque) noexcept {
  if (opaque == nullptr) return;
  static_cast<Reader*>(opaque)->record_client_error(static_cast<rd_kafka_resp_err_t>(err),
                                                    reason != nullptr ? reason : "");
}

bool is_retriable(rd_kafka_resp_err_t code) {
  return code != RD_KAFKA_RESP_ERR__TIMED_OUT &&
         make_error(code).kind() == ErrorKind::retriable;
}

// The topic's partition count from cluster metadata, retrying while the topic is being created
// or its leaders move, until the deadline.
std::variant<std::int32_t, std::string> fetch_partition_count(const Reader& reader,
                                                             const std::string& topic,
                                                             Clock::time_point deadline) {
  std::string last = "no answer";
  while (true) {
    const auto left = time_left(deadline);
    if (left.count() == 0) {
      return fmt::format("timed out reading the metadata of topic '{}': {}{}", topic, last,
                         reader.client_error_suffix());
    }
    // A topic object on a consumer only names the topic in the metadata request.
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(reader.get(), topic.c_str(), nullptr);
    if (rkt == nullptr) {
      return fmt::format("topic '{}': {}", topic, rd_kafka_err2str(rd_kafka_last_error()));
    }
    const rd_kafka_metadata_t* raw = nullptr;
    const rd_kafka_resp_err_t err = rd_kafka_metadata(reader.get(), 0, rkt, &raw, timeout_ms(left));
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (err != RD_KAFKA_RESP_ERR__TIMED_OUT && !is_retriable(err)) {
        return make_error(err, fmt::format("metadata of topic '{}'", topic)).describe();
      }
      last = rd_kafka_err2str(err);
    } else {
      MetadataHandle metadata{raw};
      const rd_kafka_metadata_topic_t* found = nullptr;
      for (int i = 0; i < metadata->topic_cnt; ++i) {
        if (topic == metadata->topics[i].topic) found = &metadata->topics[i];
      }
      if (found == nullptr || found->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        return fmt::format("topic '{}' does not exist", topic);
      }
      if (found->err == RD_KAFKA_RESP_ERR_NO_ERROR && found->partition_cnt > 0) {
        return static_cast<std::int32_t>(found->partition_cnt);
      }
      if (found->err != RD_KAFKA_RESP_ERR_NO_ERROR && !is_retriable(found->err)) {
        return make_error(found->err, fmt::format("topic '{}'", topic)).describe();
      }
      last = found->err != RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_err2str(found->err)
                                                      : "no partitions yet";
    }
    std::this_thread::sleep_for(std::min(retry_backoff, time_left(deadline)));
  }
}

// The end of every partition as of now: ListOffsets "latest", which under read_committed is the
// last stable offset. One batched request per leader; every partition's own error is checked.
std::optional<std::string> fetch_end_offsets(const Reader& reader, const std::string& topic,
                                             std::int32_t partitions, Clock::time_point deadline,
                                             std::vector<std::int64_t>& ends) {
  std::string last = "no answer";
  while (true) {
    const auto left = time_left(deadline);
    if (left.count() == 0) {
      return fmt::format("timed out reading the end offsets of topic '{}': {}{}", topic, last,
                         reader.client_error_suffix());
    }
    PartitionListHandle list{rd_kafka_topic_partition_list_new(partitions)};
    for (std::int32_t p = 0; p < partitions; ++p) {
      // The timestamp -1 asks the broker for the latest offset (the LSO under read_committed).
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = -1;
    }
    const rd_kafka_resp_err_t err =
        rd_kafka_offsets_for_times(reader.get(), list.get(), timeout_ms(left));
    rd_kafka_resp_err_t failed = err;
    std::int32_t failed_partition = -1;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      for (int i = 0; i < list->cnt && failed == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
        const auto& elem = list->elems[i];
        if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          failed = elem.err;
          failed_partition = elem.partition;
        } else if (elem.offset < 0) {
          return fmt::format("topic '{}' [{}]: the broker returned no end offset ({})", topic,
                             elem.partition, elem.offset);
        }
      }
    }
    if (failed == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ends.assign(static_cast<std::size_t>(partitions), 0);
      for (int i = 0; i < list->cnt; ++i) {
        ends[static_cast<std::size_t>(list->elems[i].partition)] = list->elems[i].offset;
      }
      return std::nullopt;
    }
    const std::string where = failed_partition < 0
                                  ? fmt::format("end offsets of topic '{}'", topic)
                                  : fmt::format("end offset of '{}' [{}]", topic, failed_partition);
    if (failed != RD_KAFKA_RESP_ERR__TIMED_OUT && !is_retriable(failed)) {
      return make_error(failed, where).describe();
    }
    last = fmt::format("{}: {}", where, rd_kafka_err2str(failed));
    std::this_thread::sleep_for(std::min(retry_backoff, time_left(deadline)));
  }
}

struct PartitionProgress {
  std::int64_t end = 0;   // stop before this offset (the LSO when the read began)
  std::int64_t next = 0;  // one past the last delivered offset
  bool done = false;
};

std::string unfinished(const std::vector<PartitionProgress>& progress) {
  std::string out;
  std::size_t listed = 0;
  for (std::size_t p = 0; p < progress.size(); ++p) {
    if (progress[p].done) continue;
    if (listed == 10) {
      out += ", ...";
      break;
    }
    fmt::format_to(std::back_inserter(out), "{}[{}] at {} of {}", listed == 0 ? "" : ", ", p,
                   progress[p].next, progress[p].end);
    ++listed;
  }
  return out;
}

std::string consume_error(const rd_kafka_message_t& message) {
  std::string where;
  if (message.rkt != nullptr) {
    where = fmt::format(" on '{}' [{}] at offset {}", rd_kafka_topic_name(message.rkt),
                        message.partition, message.offset);
  }
  return fmt::format("consume error{}: {}: {}", where, rd_kafka_err2name(message.err),
                     rd_kafka_message_errstr(&message));
}

void collect_headers(const rd_kafka_message_t& message, std::vector<ReadHeader>& out) {
  out.clear();
  rd_kafka_headers_t* headers = nullptr;  // owned by the message
  if (rd_kafka_message_headers(&message, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  for (std::size_t i = 0;
       rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    ReadHeader header{name, std::nullopt};
    if (value != nullptr) header.value = std::string_view{static_cast<const char*>(value), size};
    out.push_back(header);
  }
}

std::optional<std::string_view> bytes(const void* data, std::size_t size) {
  if (data == nullptr) return std::nullopt;
  return std::string_view{static_cast<const char*>(data), size};
}

}  // namespace

std::optional<std::string> read_topic(const ReadOptions& options,
                                      const std::function<void(const ReadRecord&)>& on_record) {
  const auto deadline = Clock::now() + std::max(options.timeout, std::chrono::milliseconds{0});
  const std::string& topic = options.topic;
  if (topic.empty()) return std::string{"no topic to read"};

  Reader reader;
  if (auto error = reader.open(options)) return error;

  const auto count = fetch_partition_count(reader, topic, deadline);
  if (const auto* error = std::get_if<std::string>(&count)) return *error;
  const std::int32_t partitions = std::get<std::int32_t>(count);

  std::vector<std::int64_t> ends = options.ends;
  if (ends.empty()) {
    if (auto error = fetch_end_offsets(reader, topic, partitions, deadline, ends)) return error;
  } else if (ends.size() != static_cast<std::size_t>(partitions)) {
    return fmt::format("topic '{}' has {} partitions, not the {} whose ends were given (its "
                       "partitions changed during the read)",
                       topic, partitions, ends.size());
  }

  std::vector<PartitionProgress> progress(static_cast<std::size_t>(partitions));
  for (std::size_t p = 0; p < progress.size(); ++p) progress[p].end = ends[p];

  // Every partition from its first offset. An empty one reports EOF as soon as it is fetched.
  {
    PartitionListHandle assignment{rd_kafka_topic_partition_list_new(partitions)};
    for (std::int32_t p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset =
          RD_KAFKA_OFFSET_BEGINNING;
    }
    if (Error e = make_error(rd_kafka_assign(reader.get(), assignment.get()),
                             fmt::format("assigning the partitions of '{}'", topic))) {
      return e.describe();
    }
    for (int i = 0; i < assignment->cnt; ++i) {
      const auto& elem = assignment->elems[i];
      if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        return make_error(elem.err, fmt::format("assigning '{}' [{}]", topic, elem.partition))
            .describe();
      }
    }
  }

  std::size_t remaining = progress.size();
  std::vector<ReadHeader> headers;
  while (remaining > 0) {
    const auto left = time_left(deadline);
    if (left.count() == 0) {
      return fmt::format("timed out after {} ms reading topic '{}'; unfinished partitions: {}{}",
                         options.timeout.count(), topic, unfinished(progress),
                         reader.client_error_suffix());
    }
    // One message per call: librdkafka 2.0.2's batch consume calls can lose messages.
    MessageHandle message{
        rd_kafka_consumer_poll(reader.get(), timeout_ms(std::min(left, poll_slice)))};
    if (!message) continue;
    const rd_kafka_message_t& m = *message;
    if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR && m.err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      return consume_error(m);
    }
    if (m.rkt == nullptr || m.partition < 0 || m.partition >= partitions ||
        topic != rd_kafka_topic_name(m.rkt)) {
      return fmt::format("librdkafka returned a message of an unexpected partition {} [{}]",
                         m.rkt != nullptr ? rd_kafka_topic_name(m.rkt) : "?", m.partition);
    }
    auto& part = progress[static_cast<std::size_t>(m.partition)];
    if (part.done) continue;  // fetched past the end of this read
    if (m.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // EOF is at the LSO of that fetch, which is never below the LSO at the start.
      if (m.offset >= part.end) {
        part.done = true;
        --remaining;
      }
      continue;
    }
    if (m.offset >= part.end) {  // committed after the read began
      part.done = true;
      --remaining;
      continue;
    }
    if (m.offset < part.next) {
      return fmt::format("librdkafka returned '{}' [{}] offset {} after offset {}", topic,
                         m.partition, m.offset, part.next - 1);
    }
    collect_headers(m, headers);
    rd_kafka_timestamp_type_t timestamp_type{};
    const ReadRecord record{
        .topic = topic,
        .partition = m.partition,
        .offset = m.offset,
        .timestamp_ms = rd_kafka_message_timestamp(&m, &timestamp_type),
        .key = bytes(m.key, m.key_len),
        .value = bytes(m.payload, m.len),
        .headers = headers,
    };
    on_record(record);
    part.next = m.offset + 1;
    if (part.next >= part.end) {
      part.done = true;
      --remaining;
    }
  }
  return std::nullopt;
}

std::variant<std::vector<std::int64_t>, std::string> end_offsets(const ReadOptions& options) {
  const auto deadline = Clock::now() + std::max(options.timeout, std::chrono::milliseconds{0});
  if (options.topic.empty()) return std::string{"no topic given"};
  Reader reader;
  if (auto error = reader.open(options)) return *error;
  const auto count = fetch_partition_count(reader, options.topic, deadline);
  if (const auto* error = std::get_if<std::string>(&count)) return *error;
  std::vector<std::int64_t> ends;
  if (auto error = fetch_end_offsets(reader, options.topic, std::get<std::int32_t>(count),
                                     deadline, ends)) {
    return *error;
  }
  return ends;
}

std::variant<std::int32_t, std::string> partition_count(const ReadOptions& options) {
  const auto deadline = Clock::now() + std::max(options.timeout, std::chrono::milliseconds{0});
  if (options.topic.empty()) return std::string{"no topic given"};
  Reader reader;
  if (auto error = reader.open(options)) return *error;
  return fetch_partition_count(reader, options.topic, deadline);
}

}  // namespace exactly::kafka
