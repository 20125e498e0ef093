#include "kafka/committed_rdkafka.h"

#include <fmt/format.h>

#include "kafka/error_rdkafka.h"
#include "kafka/handles.h"
#include "kafka/timeout.h"

namespace exactly::kafka {

Error fetch_committed(rd_kafka_t* rk, const std::string& topic,
                      std::vector<PartitionOffset>& partitions, std::chrono::milliseconds timeout) {
  PartitionListHandle list{rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()))};
  for (const auto& p : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p.partition);
  }
  if (Error e = make_error(rd_kafka_committed(rk, list.get(), timeout_ms(timeout)),
                           fmt::format("committed offsets of '{}'", topic))) {
    return e;
  }
  for (int i = 0; i < list->cnt; ++i) {
    const auto& elem = list->elems[i];
    if (elem.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return make_error(elem.err, fmt::format("committed offset of {} [{}]", topic, elem.partition));
    }
    for (auto& p : partitions) {
      if (p.partition == elem.partition) p.offset = elem.offset < 0 ? offset_invalid : elem.offset;
    }
  }
  return {};
}

}  // namespace exactly::kafka
