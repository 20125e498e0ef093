// One error type for every librdkafka call, with the property that decides what the engine does
// next computed once, from librdkafka's own predicates, and kept through every copy.
#pragma once

#include <string>
#include <string_view>

namespace exactly::kafka {

// What the transaction protocol does about an error (DESIGN.md, item 5).
enum class ErrorKind {
  none,       // success
  retriable,  // repeat the same call
  abortable,  // abort the transaction, rewind the range, retry after a backoff
  fatal,      // the producer is unusable: destroy, re-create, re-init, resume from the committed offset
  other,      // neither: a plain failure of a non-transactional call (metadata, seek, ...)
};

std::string_view to_string(ErrorKind kind);

class Error {
 public:
  Error() = default;
  Error(ErrorKind kind, int code, std::string name, std::string message, bool fenced = false)
      : kind_(kind), code_(code), name_(std::move(name)), message_(std::move(message)),
        fenced_(fenced) {}

  // librdkafka's predicates, in the order that matters: fatal wins over abortable, which wins over
  // retriable. A transactional error that is none of these is taken as fatal, because librdkafka
  // issue 4558 shows a commit failing that way can still have been delivered: only re-creating the
  // producer (the epoch bump) settles what happened.
  static ErrorKind classify(bool is_fatal, bool txn_requires_abort, bool is_retriable,
                            bool transactional_call);

  [[nodiscard]] bool ok() const { return kind_ == ErrorKind::none; }
  explicit operator bool() const { return !ok(); }

  [[nodiscard]] ErrorKind kind() const { return kind_; }
  [[nodiscard]] int code() const { return code_; }
  [[nodiscard]] const std::string& name() const { return name_; }        // e.g. "_TIMED_OUT"
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] bool fenced() const { return fenced_; }  // another producer took our transactional.id
  // The record itself can never be produced (too large, no such partition): retrying it is futile.
  [[nodiscard]] bool record_rejected() const { return record_rejected_; }
  Error& mark_record_rejected() {
    record_rejected_ = true;
    return *this;
  }

  // "NAME: message (kind)"
  [[nodiscard]] std::string describe() const;

 private:
  ErrorKind kind_ = ErrorKind::none;
  int code_ = 0;
  std::string name_;
  std::string message_;
  bool fenced_ = false;
  bool record_rejected_ = false;
};

}  // namespace exactly::kafka
