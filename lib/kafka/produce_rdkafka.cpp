#include "kafka/produce_rdkafka.h"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

#include "kafka/error_rdkafka.h"

namespace exactly::kafka {

Error produce_record(rd_kafka_t* rk, rd_kafka_topic_t* topic, const ProduceRecord& record,
                     std::vector<std::string>& header_names, std::chrono::milliseconds queue_wait,
                     bool transactional) {
  // Built on the stack for the common small header count; librdkafka copies everything (F_COPY).
  constexpr std::size_t inline_fields = 16;
  rd_kafka_vu_t inline_vus[inline_fields];
  std::vector<rd_kafka_vu_t> heap_vus;
  const std::size_t count = 6 + record.headers.size() + (record.key ? 1 : 0);
  rd_kafka_vu_t* vus = inline_vus;
  if (count > inline_fields) {
    heap_vus.resize(count);
    vus = heap_vus.data();
  }
  std::size_t n = 0;
  vus[n].vtype = RD_KAFKA_VTYPE_RKT;
  vus[n++].u.rkt = topic;
  vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
  vus[n++].u.i32 = record.partition < 0 ? RD_KAFKA_PARTITION_UA : record.partition;
  vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
  vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
  vus[n++].u.i64 = record.timestamp_ms > 0 ? record.timestamp_ms : 0;
  vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
  vus[n].u.mem.ptr = record.value ? const_cast<char*>(record.value->data()) : nullptr;
  vus[n++].u.mem.size = record.value ? record.value->size() : 0;
  if (record.key) {
    vus[n].vtype = RD_KAFKA_VTYPE_KEY;
    vus[n].u.mem.ptr = const_cast<char*>(record.key->data());
    vus[n++].u.mem.size = record.key->size();
  }
  if (record.source) {
    const auto opaque = TransactionalProducer::encode_source(*record.source);
    if (!opaque) {
      return Error{ErrorKind::other, RD_KAFKA_RESP_ERR__INVALID_ARG, "INVALID_ARG",
                   fmt::format("input partition {} offset {} is beyond what the lineage journal "
                               "can name",
                               record.source->partition, record.source->offset)}
          .mark_record_rejected();
    }
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[n++].u.ptr = reinterpret_cast<void*>(static_cast<std::uintptr_t>(*opaque));
  }
  // Header names must be NUL-terminated for librdkafka; keep copies alive for the call.
  // header_names is reused across calls so its strings keep their capacity.
  if (header_names.size() < record.headers.size()) header_names.resize(record.headers.size());
  std::size_t h = 0;
  for (const auto& header : record.headers) {
    std::string& name = header_names[h++];
    name.assign(header.name);
    vus[n].vtype = RD_KAFKA_VTYPE_HEADER;
    vus[n].u.header.name = name.c_str();
    vus[n].u.header.val = header.value ? header.value->data() : nullptr;
    vus[n++].u.header.size =
        header.value ? static_cast<ssize_t>(header.value->size()) : static_cast<ssize_t>(0);
  }

  std::optional<std::chrono::steady_clock::time_point> deadline;  // set by a full queue only
  for (;;) {
    rd_kafka_error_t* raw = rd_kafka_produceva(rk, vus, n);
    if (raw == nullptr) return {};
    if (rd_kafka_error_code(raw) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      const auto now = std::chrono::steady_clock::now();
      if (!deadline) deadline = now + queue_wait;
      if (now < *deadline) {
        rd_kafka_error_destroy(raw);
        rd_kafka_poll(rk, 10);
        continue;
      }
    }
    const rd_kafka_resp_err_t code = rd_kafka_error_code(raw);
    Error error = make_error(raw, transactional);
    if (code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || code == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION ||
        code == RD_KAFKA_RESP_ERR__INVALID_ARG) {
      return Error{ErrorKind::other, error.code(), error.name(), error.message()}.mark_record_rejected();
    }
    if (transactional && error.kind() == ErrorKind::fatal) {
      // A produce refused because the transaction is already in an abortable state (an earlier
      // delivery failed) carries no flag of its own; only librdkafka's fatal error says more.
      char reason[256];
      if (rd_kafka_fatal_error(rk, reason, sizeof reason) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        return Error{ErrorKind::abortable, error.code(), error.name(), error.message()};
      }
    }
    return error;
  }
}

}  // namespace exactly::kafka
