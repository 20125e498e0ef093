#include "kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kafka/conf_rdkafka.h"
#include "kafka/error_rdkafka.h"
#include "kafka/group_metadata.h"
#include "kafka/produce_rdkafka.h"
#include "kafka/timeout.h"

namespace exactly::kafka {

namespace {

int stats_trampoline(rd_kafka_t* /*rk*/, char* json, std::size_t size, void* opaque) noexcept {
  return deliver_statistics(static_cast<TransactionalProducer*>(opaque)->stats_callback(), json,
                            size);
}

// At-least-once, or with a journal: called from rd_kafka_poll/flush on the thread that serves
// the producer.
void delivery_report(rd_kafka_t* /*rk*/, const rd_kafka_message_t* message, void* opaque) noexcept {
  auto* producer = static_cast<TransactionalProducer*>(opaque);
  try {
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // A transactional producer's failed delivery fails its commit; librdkafka says why then.
      if (!producer->transactional()) {
        producer->delivery_failed(message->err, rd_kafka_err2name(message->err),
                                  rd_kafka_err2str(message->err));
      }
      return;
    }
    if (message->_private != nullptr) {
      producer->delivered(message->partition, message->offset,
                          static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(message->_private)));
    }
  } catch (...) {
    // Out of memory noting a delivery: the journal would miss it, so the transaction must not
    // commit (the engine aborts it and redoes the range).
    producer->journal_broken();
  }
}

}  // namespace

GroupMetadata::~GroupMetadata() {
  if (raw_ != nullptr) rd_kafka_consumer_group_metadata_destroy(raw_);
}

std::unique_ptr<TransactionalProducer> TransactionalProducer::create(
    const Properties& properties, const std::string& transactional_id,
    const std::vector<std::string>& topics, std::string& error, StatsCallback stats,
    bool transactional, bool journal) {
  Properties all;
  for (const auto& property : properties) {
    // transaction.timeout.ms means nothing without a transactional.id.
    if (!transactional && property.first == "transaction.timeout.ms") continue;
    all.push_back(property);
  }
  if (transactional) all.emplace_back("transactional.id", transactional_id);
  all.emplace_back("enable.idempotence", "true");
  all.emplace_back("acks", "all");
  ConfHandle conf = make_conf(all, error);
  if (!conf) return nullptr;
  // Made before the client, since the client's callbacks get it as their opaque.
  std::unique_ptr<TransactionalProducer> producer{new TransactionalProducer()};
  producer->transactional_ = transactional;
  rd_kafka_conf_set_opaque(conf.get(), producer.get());
  if (stats) {
    producer->stats_ = std::move(stats);
    rd_kafka_conf_set_stats_cb(conf.get(), stats_trampoline);
  }
  if (journal) producer->journal_.emplace();
  if (!transactional || journal) rd_kafka_conf_set_dr_msg_cb(conf.get(), delivery_report);
  KafkaHandle rk = make_client(RD_KAFKA_PRODUCER, conf, error);
  if (!rk) return nullptr;
  producer->rk_ = rk.release();
  producer->transactional_id_ = transactional_id;
  for (const auto& name : topics) {
    rd_kafka_topic_t* topic = rd_kafka_topic_new(producer->rk_, name.c_str(), nullptr);
    if (topic == nullptr) {
      error = fmt::format("cannot create a handle for topic '{}': {}", name,
                          rd_kafka_err2str(rd_kafka_last_error()));
      return nullptr;  // the destructor releases what was made
    }
    producer->topics_.push_back(topic);
  }
  return producer;
}

TransactionalProducer::~TransactionalProducer() {
  for (rd_kafka_topic_t* topic : topics_) rd_kafka_topic_destroy(topic);
  if (rk_ != nullptr) {
    // Whatever is still queued belongs to a transaction that is not committed: drop it rather
    // than wait for it, so destruction is bounded.
    rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_destroy(rk_);
  }
}

Error TransactionalProducer::init_transactions(std::chrono::milliseconds timeout) {
  if (!transactional_) return {};
  return make_error(rd_kafka_init_transactions(rk_, timeout_ms(timeout)), true);
}

Error TransactionalProducer::begin_transaction() {
  clear_journal();
  if (!transactional_) return {};
  return make_error(rd_kafka_begin_transaction(rk_), true);
}

Error TransactionalProducer::produce(const ProduceRecord& record,
                                     std::chrono::milliseconds queue_wait) {
  return produce_record(rk_, topics_.at(record.topic), record, header_names_, queue_wait,
                        transactional_);
}

Error TransactionalProducer::send_offsets_to_transaction(const std::string& topic,
                                                         std::int32_t partition,
                                                         std::int64_t next_offset,
                                                         const GroupMetadata& group,
                                                         std::chrono::milliseconds timeout) {
  const PartitionOffset one[] = {{partition, next_offset}};
  return send_offsets_to_transaction(topic, one, group, timeout);
}

Error TransactionalProducer::send_offsets_to_transaction(
    const std::string& topic, std::span<const PartitionOffset> next_offsets,
    const GroupMetadata& group, std::chrono::milliseconds timeout) {
  if (!transactional_) return {};  // the caller commits through the consumer
  PartitionListHandle offsets{rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets.size()))};
  for (const auto& [partition, next_offset] : next_offsets) {
    if (next_offset < 0) {
      // librdkafka 2.0.2 drops invalid offsets and sends none: the commit that follows would make
      // the outputs visible with the input's offset left behind, to be processed again.
      return Error{ErrorKind::abortable, 0, "INVALID_OFFSET",
                   fmt::format("no offset to commit for {} [{}] (got {})", topic, partition,
                               next_offset)};
    }
    rd_kafka_topic_partition_list_add(offsets.get(), topic.c_str(), partition)->offset = next_offset;
  }
  return make_error(rd_kafka_send_offsets_to_transaction(rk_, offsets.get(), group.get(),
                                                         timeout_ms(timeout)),
                    true);
}

void TransactionalProducer::delivery_failed(int code, const char* name, const char* reason) {
  if (failed_++ == 0) {
    failed_code_ = code;
    failed_name_ = name;
    failed_reason_ = reason;
  }
}

Error TransactionalProducer::flush(std::chrono::milliseconds timeout) {
  // rd_kafka_flush (2.0.2) waits in rd_kafka_poll for up to 10 ms at a time, and only a delivery
  // report wakes that wait. A transactional producer asks for none (the commit reports what
  // failed), so every flush ran its last 10 ms out after the records were delivered: at least
  // 10 ms per commit, on the loop in the instance scope. Calls of 1 ms look again every
  // millisecond, and each keeps the flag under which librdkafka sends at once, ignoring
  // linger.ms. Each call also wakes the producer's broker threads, so the calls stop after 20 ms:
  // a flush that takes longer waits for a slow broker (or for the coordinator to register the
  // partitions), and every record left is older than linger.ms, sent as soon as it can be. What
  // is left is to see them delivered: rd_kafka_poll for 1 ms, which wakes no broker thread, then
  // the count of records not yet delivered (rd_kafka_flush would look only every 10 ms).
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  for (int step = 0; step < 20; ++step) {
    const rd_kafka_resp_err_t err = rd_kafka_flush(rk_, 1);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || Clock::now() >= deadline) return make_error(err, "flush");
  }
  for (;;) {
    rd_kafka_poll(rk_, 1);
    if (rd_kafka_outq_len(rk_) == 0) return {};
    if (Clock::now() >= deadline) return make_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "flush");
  }
}

Error TransactionalProducer::commit_transaction(std::chrono::milliseconds timeout) {
  if (transactional_) return make_error(rd_kafka_commit_transaction(rk_, timeout_ms(timeout)), true);
  if (Error e = flush(timeout)) return e;  // timed out: retriable
  if (failed_ == 0) return {};
  Error e{ErrorKind::abortable, failed_code_, failed_name_,
          fmt::format("{} record(s) not delivered, the first: {}", failed_, failed_reason_)};
  failed_ = 0;
  return e;
}

Error TransactionalProducer::abort_transaction(std::chrono::milliseconds timeout) {
  if (transactional_) {
    Error e = make_error(rd_kafka_abort_transaction(rk_, timeout_ms(timeout)), true);
    if (journal_) rd_kafka_poll(rk_, 0);  // the aborted records' last delivery reports
    clear_journal();
    return e;
  }
  // What was produced cannot be taken back: let it finish, so the redo starts from a quiet queue.
  Error e = flush(timeout);
  failed_ = 0;
  clear_journal();
  return e;
}

void TransactionalProducer::poll(std::chrono::milliseconds timeout) {
  rd_kafka_poll(rk_, timeout_ms(timeout));
}

}  // namespace exactly::kafka
