// Logging set-up: the "exactly" logger on stderr as the default, in plain lines or, for log
// shippers, one JSON object per line.
#pragma once

#include <memory>
#include <string>

#include <spdlog/formatter.h>

namespace exactly::ops {

// One record as one line of JSON:
//   {"time":"2024-05-01T12:00:00.123Z","level":"info","logger":"exactly","message":"..."}
// time is UTC with milliseconds; level is spdlog's name (trace, debug, info, warning, error,
// critical). The message is escaped as JSON requires (quotes, backslashes, control characters
// such as newlines), and bytes that are not UTF-8 become U+FFFD, so every line parses even when
// a message quotes a record's raw bytes.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override;
};

// Makes the "exactly" logger on stderr the default, at `level` (a log.level value), with
// colour-free JSON lines when `json`, else "time level message" lines.
void setup_logging(const std::string& level, bool json);

}  // namespace exactly::ops
