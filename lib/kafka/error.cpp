#include "kafka/error.h"

#include <fmt/format.h>

#include "kafka/error_rdkafka.h"
#include "kafka/handles.h"

namespace exactly::kafka {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::none: return "none";
    case ErrorKind::retriable: return "retriable";
    case ErrorKind::abortable: return "abortable";
    case ErrorKind::fatal: return "fatal";
    case ErrorKind::other: return "other";
  }
  return "unknown";
}

ErrorKind Error::classify(bool is_fatal, bool txn_requires_abort, bool is_retriable,
                          bool transactional_call) {
  if (is_fatal) return ErrorKind::fatal;
  if (txn_requires_abort) return ErrorKind::abortable;
  if (is_retriable) return ErrorKind::retriable;
  return transactional_call ? ErrorKind::fatal : ErrorKind::other;
}

std::string Error::describe() const {
  if (ok()) return "no error";
  return fmt::format("{}: {} ({}{})", name_, message_, to_string(kind_), fenced_ ? ", fenced" : "");
}

bool is_fencing_code(rd_kafka_resp_err_t code) {
  return code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
         code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH ||
         code == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
}

Error make_error(rd_kafka_error_t* raw, bool transactional_call) {
  if (raw == nullptr) return {};
  ErrorHandle error{raw};
  const rd_kafka_resp_err_t code = rd_kafka_error_code(raw);
  const ErrorKind kind =
      Error::classify(rd_kafka_error_is_fatal(raw) != 0, rd_kafka_error_txn_requires_abort(raw) != 0,
                      rd_kafka_error_is_retriable(raw) != 0, transactional_call);
  const bool fenced = kind == ErrorKind::fatal && is_fencing_code(code);
  return Error{kind, static_cast<int>(code), rd_kafka_error_name(raw), rd_kafka_error_string(raw),
               fenced};
}

Error make_error(rd_kafka_resp_err_t code, std::string_view context) {
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return {};
  const bool transient = code == RD_KAFKA_RESP_ERR__TIMED_OUT ||
                         code == RD_KAFKA_RESP_ERR__TRANSPORT ||
                         code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
                         code == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT ||
                         code == RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS ||
                         code == RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE ||
                         code == RD_KAFKA_RESP_ERR_NOT_COORDINATOR ||
                         code == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                         code == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                         code == RD_KAFKA_RESP_ERR__QUEUE_FULL ||
                         // A committed-offset read while a transaction holding the partition's
                         // offsets is still open: it settles, commits or aborts, by itself.
                         code == RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT;
  std::string message = rd_kafka_err2str(code);
  if (!context.empty()) message = fmt::format("{}: {}", context, message);
  return Error{transient ? ErrorKind::retriable : ErrorKind::other, static_cast<int>(code),
               rd_kafka_err2name(code), std::move(message), is_fencing_code(code)};
}

}  // namespace exactly::kafka
