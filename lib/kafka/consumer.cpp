#include "kafka/consumer.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "kafka/committed_rdkafka.h"
#include "kafka/conf_rdkafka.h"
#include "kafka/error_rdkafka.h"
#include "kafka/fetch_waker.h"
#include "kafka/group_metadata.h"
#include "kafka/timeout.h"

namespace exactly::kafka {
namespace {

void rebalance_trampoline(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions, void* opaque) noexcept {
  static_cast<Consumer*>(opaque)->handle_rebalance(static_cast<int>(err), partitions);
}

int stats_trampoline(rd_kafka_t* /*rk*/, char* json, std::size_t size, void* opaque) noexcept {
  return deliver_statistics(static_cast<Consumer*>(opaque)->stats_callback(), json, size);
}

std::vector<std::int32_t> partitions_of(const rd_kafka_topic_partition_list_t* list) {
  std::vector<std::int32_t> out;
  out.reserve(static_cast<std::size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) out.push_back(list->elems[i].partition);
  return out;
}

}  // namespace

Message::~Message() {
  if (raw_ != nullptr) rd_kafka_message_destroy(raw_);
}

Message& Message::operator=(Message&& other) noexcept {
  if (this != &other) {
    if (raw_ != nullptr) rd_kafka_message_destroy(raw_);
    raw_ = other.raw_;
    other.raw_ = nullptr;
  }
  return *this;
}

Error Message::error() const {
  if (raw_ == nullptr || raw_->err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
  std::string context;
  if (raw_->rkt != nullptr) {
    context = fmt::format("{} [{}] at offset {}", rd_kafka_topic_name(raw_->rkt), raw_->partition,
                          raw_->offset);
  }
  const std::string reason = rd_kafka_message_errstr(raw_);
  Error base = make_error(raw_->err, context);
  return Error{base.kind(), base.code(), base.name(),
               context.empty() ? reason : fmt::format("{}: {}", context, reason), base.fenced()};
}

std::string_view Message::topic() const { return rd_kafka_topic_name(raw_->rkt); }
std::int32_t Message::partition() const { return raw_->partition; }
std::int64_t Message::offset() const { return raw_->offset; }

std::int64_t Message::timestamp_ms() const {
  rd_kafka_timestamp_type_t type;
  return rd_kafka_message_timestamp(raw_, &type);
}

std::optional<std::string_view> Message::key() const {
  if (raw_->key == nullptr) return std::nullopt;
  return std::string_view{static_cast<const char*>(raw_->key), raw_->key_len};
}

std::optional<std::string_view> Message::value() const {
  if (raw_->payload == nullptr) return std::nullopt;
  return std::string_view{static_cast<const char*>(raw_->payload), raw_->len};
}

std::size_t Message::size() const { return raw_->key_len + raw_->len; }

void Message::headers(std::vector<HeaderView>& out) const {
  out.clear();
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(raw_, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                          RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    HeaderView view{name, std::nullopt};
    if (value != nullptr) view.value = std::string_view{static_cast<const char*>(value), size};
    out.push_back(view);
  }
}

std::unique_ptr<Consumer> Consumer::create(const Properties& properties, std::string topic,
                                           RebalanceHandler& handler, std::string& error,
                                           StatsCallback stats) {
  Properties all = properties;
  all.emplace_back("isolation.level", "read_committed");
  all.emplace_back("enable.auto.commit", "false");
  all.emplace_back("enable.auto.offset.store", "false");
  all.emplace_back("enable.partition.eof", "false");
  ConfHandle conf = make_conf(all, error);
  if (!conf) return nullptr;
  std::unique_ptr<Consumer> consumer{new Consumer()};
  consumer->topic_ = std::move(topic);
  consumer->handler_ = &handler;
  rd_kafka_conf_set_opaque(conf.get(), consumer.get());
  rd_kafka_conf_set_rebalance_cb(conf.get(), rebalance_trampoline);
  if (stats) {
    consumer->stats_ = std::move(stats);
    rd_kafka_conf_set_stats_cb(conf.get(), stats_trampoline);
  }
  KafkaHandle rk = make_client(RD_KAFKA_CONSUMER, conf, error);
  if (!rk) return nullptr;
  // Serve every event (rebalances, errors) from the consumer queue, in poll().
  rd_kafka_poll_set_consumer(rk.get());
  consumer->rk_ = rk.release();
  // The last value wins, as in librdkafka; 100000 is its default.
  std::int64_t threshold = 100000;
  for (const auto& [name, value] : all) {
    if (name == "queued.min.messages") threshold = std::stoll(value);
  }
  consumer->waker_ = std::make_unique<FetchWaker>(consumer->rk_, threshold);
  return consumer;
}

Consumer::~Consumer() {
  waker_.reset();
  if (rk_ != nullptr) {
    // close() has left the group already, or the deadline passed: never block here.
    rd_kafka_destroy_flags(rk_, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }
}

Error Consumer::subscribe() {
  PartitionListHandle topics{rd_kafka_topic_partition_list_new(1)};
  rd_kafka_topic_partition_list_add(topics.get(), topic_.c_str(), RD_KAFKA_PARTITION_UA);
  return make_error(rd_kafka_subscribe(rk_, topics.get()), "subscribe");
}

Message Consumer::poll(std::chrono::milliseconds timeout) {
  return Message{rd_kafka_consumer_poll(rk_, timeout_ms(timeout))};
}

void Consumer::handle_rebalance(int err, void* raw_partitions) noexcept {
  auto* partitions = static_cast<rd_kafka_topic_partition_list_t*>(raw_partitions);
  try {
    const auto code = static_cast<rd_kafka_resp_err_t>(err);
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      const auto numbers = partitions_of(partitions);
      const auto starts = handler_->on_assign(numbers);
      PartitionListHandle assignment{rd_kafka_topic_partition_list_new(
          static_cast<int>(starts.size()))};
      for (const auto& start : starts) {
        rd_kafka_topic_partition_list_add(assignment.get(), topic_.c_str(), start.partition)
            ->offset = start.offset;
      }
      const rd_kafka_resp_err_t assigned = rd_kafka_assign(rk_, assignment.get());
      if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure_ = fmt::format("librdkafka refused the assignment: {}", rd_kafka_err2str(assigned));
      }
      return;
    }
    const bool lost = code != RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS ||
                      rd_kafka_assignment_lost(rk_) != 0;
    handler_->on_revoke(partitions_of(partitions), lost);
    rd_kafka_assign(rk_, nullptr);
  } catch (const std::exception& e) {
    failure_ = fmt::format("rebalance handling failed: {}", e.what());
    rd_kafka_assign(rk_, nullptr);
  } catch (...) {
    failure_ = "rebalance handling failed with an unknown exception";
    rd_kafka_assign(rk_, nullptr);
  }
}

Error Consumer::committed(std::vector<PartitionOffset>& partitions,
                          std::chrono::milliseconds timeout) {
  return fetch_committed(rk_, topic_, partitions, timeout);
}

Error Consumer::commit(const std::vector<PartitionOffset>& offsets) {
  if (offsets.empty()) return {};
  PartitionListHandle list{rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size()))};
  for (const auto& p : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), p.partition)->offset = p.offset;
  }
  if (Error e = make_error(rd_kafka_commit(rk_, list.get(), 0), "committing offsets")) return e;
  for (int i = 0; i < list->cnt; ++i) {
    if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return make_error(list->elems[i].err,
                        fmt::format("committing the offset of {} [{}]", topic_, list->elems[i].partition));
    }
  }
  return {};
}

Error Consumer::seek(std::int32_t partition, std::int64_t offset,
                     std::chrono::milliseconds timeout) {
  PartitionListHandle list{rd_kafka_topic_partition_list_new(1)};
  rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), partition)->offset = offset;
  if (Error e = make_error(rd_kafka_seek_partitions(rk_, list.get(), timeout_ms(timeout)), false)) {
    return e;
  }
  const auto err = list->elems[0].err;
  return make_error(err, fmt::format("seek of {} [{}] to offset {}", topic_, partition, offset));
}

Error Consumer::pause(std::int32_t partition) {
  PartitionListHandle list{rd_kafka_topic_partition_list_new(1)};
  rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), partition);
  if (Error e = make_error(rd_kafka_pause_partitions(rk_, list.get()), "pause")) return e;
  return make_error(list->elems[0].err, fmt::format("pause of {} [{}]", topic_, partition));
}

Error Consumer::resume(std::int32_t partition) {
  PartitionListHandle list{rd_kafka_topic_partition_list_new(1)};
  rd_kafka_topic_partition_list_add(list.get(), topic_.c_str(), partition);
  if (Error e = make_error(rd_kafka_resume_partitions(rk_, list.get()), "resume")) return e;
  return make_error(list->elems[0].err, fmt::format("resume of {} [{}]", topic_, partition));
}

std::unique_ptr<GroupMetadata> Consumer::group_metadata() const {
  rd_kafka_consumer_group_metadata_t* raw = rd_kafka_consumer_group_metadata(rk_);
  if (raw == nullptr) return nullptr;
  return std::make_unique<GroupMetadata>(raw);
}

std::int64_t Consumer::fetch_wakeups() const { return waker_ ? waker_->wakeups() : 0; }

bool Consumer::assignment_lost() const { return rd_kafka_assignment_lost(rk_) != 0; }

bool Consumer::close(std::chrono::steady_clock::time_point deadline) {
  if (waker_) waker_->stop();
  QueueHandle queue{rd_kafka_queue_new(rk_)};
  if (Error e = make_error(rd_kafka_consumer_close_queue(rk_, queue.get()), false)) {
    spdlog::warn("closing the consumer: {}", e.describe());
    return false;
  }
  while (rd_kafka_consumer_closed(rk_) == 0) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::milliseconds{0}) return false;
    // The event API, not rd_kafka_queue_poll_callback: messages fetched before the close arrive on
    // this queue too and cannot be served by callback (librdkafka asserts). In this mode librdkafka
    // returns the revocation as an event instead of calling the rebalance callback, so it is
    // handed to the handler here; without that, every close would wait for its deadline.
    // Whatever else comes (messages, errors) is dropped.
    EventHandle event{rd_kafka_queue_poll(queue.get(), std::min(100, timeout_ms(left)))};
    if (event && rd_kafka_event_type(event.get()) == RD_KAFKA_EVENT_REBALANCE) {
      handle_rebalance(static_cast<int>(rd_kafka_event_error(event.get())),
                       rd_kafka_event_topic_partition_list(event.get()));
    }
  }
  return true;
}

Error Consumer::partition_count(const std::string& topic, int& count,
                                std::chrono::milliseconds timeout) const {
  // A topic created a moment ago is known to some brokers before others, and a metadata request
  // goes to any of them: its absence is asked again for a short grace, so a missing topic is still
  // reported within seconds.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  const auto grace = start + std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds{3});
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* raw = nullptr;
    const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &raw, timeout_ms(left));
    rd_kafka_topic_destroy(rkt);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return make_error(err, fmt::format("metadata of topic '{}'", topic));
    }
    MetadataHandle metadata{raw};
    const bool listed = metadata->topic_cnt == 1;
    const rd_kafka_resp_err_t topic_err = listed ? metadata->topics[0].err : RD_KAFKA_RESP_ERR_NO_ERROR;
    if (listed && topic_err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      count = metadata->topics[0].partition_cnt;
      return {};
    }
    const bool absent = !listed || topic_err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    if (absent && Clock::now() + std::chrono::milliseconds{200} < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds{200});
      continue;
    }
    if (!listed) {
      return Error{ErrorKind::other, -1, "UNKNOWN_TOPIC",
                   fmt::format("topic '{}' is not in the cluster metadata", topic)};
    }
    return make_error(topic_err, fmt::format("topic '{}'", topic));
  }
}

Error Consumer::watermarks(std::int32_t partition, std::int64_t& low, std::int64_t& high,
                           std::chrono::milliseconds timeout) const {
  return make_error(rd_kafka_query_watermark_offsets(rk_, topic_.c_str(), partition, &low, &high,
                                                     timeout_ms(timeout)),
                    fmt::format("watermarks of '{}' [{}]", topic_, partition));
}

bool Consumer::cached_watermarks(std::int32_t partition, std::int64_t& low,
                                 std::int64_t& high) const {
  low = high = RD_KAFKA_OFFSET_INVALID;
  if (rd_kafka_get_watermark_offsets(rk_, topic_.c_str(), partition, &low, &high) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return false;
  }
  return high >= 0;
}

}  // namespace exactly::kafka
