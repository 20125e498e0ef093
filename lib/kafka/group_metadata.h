// The consumer group's metadata (group id, generation, member id) handed to
// send_offsets_to_transaction, so the broker can fence a zombie of an older generation (KIP-447).
#pragma once

struct rd_kafka_consumer_group_metadata_s;

namespace exactly::kafka {

class GroupMetadata {
 public:
  explicit GroupMetadata(rd_kafka_consumer_group_metadata_s* raw) : raw_(raw) {}
  ~GroupMetadata();
  GroupMetadata(const GroupMetadata&) = delete;
  GroupMetadata& operator=(const GroupMetadata&) = delete;

  [[nodiscard]] rd_kafka_consumer_group_metadata_s* get() const { return raw_; }

 private:
  rd_kafka_consumer_group_metadata_s* raw_;
};

}  // namespace exactly::kafka
