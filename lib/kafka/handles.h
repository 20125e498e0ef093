// Owned librdkafka handles: every rd_kafka_* object this project creates lives in one of these.
#pragma once

#include <librdkafka/rdkafka.h>

#include <memory>

namespace exactly::kafka {

struct KafkaDeleter {
  void operator()(rd_kafka_t* p) const noexcept { rd_kafka_destroy(p); }
};
struct ConfDeleter {
  void operator()(rd_kafka_conf_t* p) const noexcept { rd_kafka_conf_destroy(p); }
};
struct TopicPartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* p) const noexcept {
    rd_kafka_topic_partition_list_destroy(p);
  }
};
struct MessageDeleter {
  void operator()(rd_kafka_message_t* p) const noexcept { rd_kafka_message_destroy(p); }
};
struct ErrorDeleter {
  void operator()(rd_kafka_error_t* p) const noexcept { rd_kafka_error_destroy(p); }
};
struct HeadersDeleter {
  void operator()(rd_kafka_headers_t* p) const noexcept { rd_kafka_headers_destroy(p); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* p) const noexcept { rd_kafka_queue_destroy(p); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* p) const noexcept { rd_kafka_event_destroy(p); }
};
struct GroupMetadataDeleter {
  void operator()(rd_kafka_consumer_group_metadata_t* p) const noexcept {
    rd_kafka_consumer_group_metadata_destroy(p);
  }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* p) const noexcept { rd_kafka_metadata_destroy(p); }
};

using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaDeleter>;
using ConfHandle = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;
using PartitionListHandle = std::unique_ptr<rd_kafka_topic_partition_list_t, TopicPartitionListDeleter>;
using MessageHandle = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;
using ErrorHandle = std::unique_ptr<rd_kafka_error_t, ErrorDeleter>;
using HeadersHandle = std::unique_ptr<rd_kafka_headers_t, HeadersDeleter>;
using QueueHandle = std::unique_ptr<rd_kafka_queue_t, QueueDeleter>;
using EventHandle = std::unique_ptr<rd_kafka_event_t, EventDeleter>;
using GroupMetadataHandle =
    std::unique_ptr<rd_kafka_consumer_group_metadata_t, GroupMetadataDeleter>;
using MetadataHandle = std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter>;

}  // namespace exactly::kafka
