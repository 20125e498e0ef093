// A transactional producer: one per assigned input partition, owning one transactional.id.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kafka/client_config.h"
#include "kafka/error.h"
#include "kafka/record.h"
#include "lineage/journal.h"

struct rd_kafka_s;
struct rd_kafka_topic_s;

namespace exactly::kafka {

class GroupMetadata;

using ProduceHeader = HeaderView;

struct ProduceRecord {
  std::optional<std::string_view> key;
  std::optional<std::string_view> value;
  std::span<const ProduceHeader> headers;
  std::int32_t partition = -1;  // -1: the partitioner decides by key
  std::int64_t timestamp_ms = 0;  // 0: now
  std::size_t topic = 0;  // TransactionalProducer: index into its topics (0: the output)
  // With a journal (TransactionalProducer::create): the input this record reflects, noted with
  // the offset it is delivered at. Not journaled when unset.
  std::optional<PartitionOffset> source;
};

class TransactionalProducer {
 public:
  // `properties` are applied in order; the transactional.id is ours. `topics` are the topics it
  // writes to (the output first, then the dead-letter topic if any), chosen per record by index.
  // `stats`, if set, receives librdkafka's statistics (see StatsCallback).
  //
  // Without `transactional`, the same interface drives a plain idempotent producer (delivery =
  // "at-least-once"): init, begin and send_offsets do nothing; commit flushes and fails if a
  // record was not delivered; abort waits for what is in flight. `transactional_id` then only
  // names it in logs, and the caller commits the consumed offsets itself after a commit.
  //
  // With `journal`, every delivered record produced with a `source` is noted in journal(), with
  // the partition and offset it was delivered at (pipeline.lineage_topic): the delivery reports
  // are served by poll() and flush(). begin_transaction and abort_transaction clear it.
  static std::unique_ptr<TransactionalProducer> create(const Properties& properties,
                                                       const std::string& transactional_id,
                                                       const std::vector<std::string>& topics,
                                                       std::string& error,
                                                       StatsCallback stats = {},
                                                       bool transactional = true,
                                                       bool journal = false);
  ~TransactionalProducer();
  TransactionalProducer(const TransactionalProducer&) = delete;
  TransactionalProducer& operator=(const TransactionalProducer&) = delete;

  [[nodiscard]] const std::string& transactional_id() const { return transactional_id_; }

  [[nodiscard]] Error init_transactions(std::chrono::milliseconds timeout);
  [[nodiscard]] Error begin_transaction();
  // Copies key, value and headers. A full local queue is waited out (serving the producer)
  // for at most `queue_wait`.
  [[nodiscard]] Error produce(const ProduceRecord& record, std::chrono::milliseconds queue_wait);
  [[nodiscard]] Error send_offsets_to_transaction(const std::string& topic, std::int32_t partition,
                                                  std::int64_t next_offset,
                                                  const GroupMetadata& group,
                                                  std::chrono::milliseconds timeout);
  // The next offsets of several partitions of `topic`, in one call (one transaction over them).
  [[nodiscard]] Error send_offsets_to_transaction(const std::string& topic,
                                                  std::span<const PartitionOffset> next_offsets,
                                                  const GroupMetadata& group,
                                                  std::chrono::milliseconds timeout);
  // Waits up to `timeout` for every record produced so far to be delivered or to fail (a failure
  // then fails the commit). A retriable error when some are still outstanding.
  [[nodiscard]] Error flush(std::chrono::milliseconds timeout);
  [[nodiscard]] Error commit_transaction(std::chrono::milliseconds timeout);
  [[nodiscard]] Error abort_transaction(std::chrono::milliseconds timeout);
  // Serves delivery reports and error callbacks; never blocks longer than `timeout`.
  void poll(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  [[nodiscard]] bool transactional() const { return transactional_; }

  // The open transaction's delivered records and their sources; null without a journal. Only the
  // thread serving the producer (poll, flush, commit) may touch it.
  [[nodiscard]] lineage::JournalBuilder* journal() { return journal_ ? &*journal_ : nullptr; }
  // For the delivery report callback only: a record delivered at `offset` of `partition`.
  void delivered(std::int32_t partition, std::int64_t offset, std::uint64_t source) {
    if (!journal_) return;
    if (offset < 0) {
      // A delivery reported without its offset (librdkafka does so for a batch the broker
      // answered DUPLICATE_SEQUENCE_NUMBER): the journal cannot name it.
      journal_broken_ = true;
      return;
    }
    const PartitionOffset from = decode_source(source);
    journal_->add(partition, offset, from.partition, from.offset);
  }
  // For the delivery report callback only: a delivery could not be noted.
  void journal_broken() { journal_broken_ = true; }
  // False when a delivery of the open transaction could not be noted: it must not commit.
  [[nodiscard]] bool journal_whole() const { return !journal_broken_; }
  // A record's source travels through librdkafka as its opaque: the partition above these bits,
  // the offset in them, and never 0 (the top bit is set). nullopt for a source it cannot carry.
  static constexpr int source_offset_bits = 47;
  [[nodiscard]] static constexpr std::optional<std::uint64_t> encode_source(PartitionOffset source) {
    if (source.partition < 0 || source.partition >= (1 << (63 - source_offset_bits)) ||
        source.offset < 0 || source.offset >= (std::int64_t{1} << source_offset_bits)) {
      return std::nullopt;
    }
    return (std::uint64_t{1} << 63) |
           (static_cast<std::uint64_t>(source.partition) << source_offset_bits) |
           static_cast<std::uint64_t>(source.offset);
  }
  [[nodiscard]] static constexpr PartitionOffset decode_source(std::uint64_t opaque) {
    return {static_cast<std::int32_t>((opaque >> source_offset_bits) & 0xffff),
            static_cast<std::int64_t>(opaque & ((std::uint64_t{1} << source_offset_bits) - 1))};
  }
  // For the statistics trampoline only.
  [[nodiscard]] const StatsCallback& stats_callback() const { return stats_; }
  // For the delivery report callback only (at-least-once): the first failure since the last commit.
  void delivery_failed(int code, const char* name, const char* reason);

 private:
  TransactionalProducer() = default;
  rd_kafka_s* rk_ = nullptr;
  std::vector<rd_kafka_topic_s*> topics_;
  std::string transactional_id_;
  std::vector<std::string> header_names_;  // NUL-terminated copies of header names, reused
  StatsCallback stats_;
  bool transactional_ = true;
  // At-least-once: delivery failures since the last commit, and the first one's description.
  int failed_code_ = 0;
  std::string failed_name_;
  std::string failed_reason_;
  std::int64_t failed_ = 0;
  std::optional<lineage::JournalBuilder> journal_;
  bool journal_broken_ = false;
  void clear_journal() {
    if (journal_) journal_->clear();
    journal_broken_ = false;
  }
};

}  // namespace exactly::kafka
