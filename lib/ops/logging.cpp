#include "ops/logging.h"

#include <chrono>
#include <ctime>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace exactly::ops {
namespace {

std::string iso8601_utc(spdlog::log_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  const auto secs = std::chrono::floor<std::chrono::seconds>(since_epoch);
  const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - secs);
  const std::time_t whole = static_cast<std::time_t>(secs.count());
  std::tm utc{};
  gmtime_r(&whole, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     millis.count());
}

std::string_view view(spdlog::string_view_t s) { return {s.data(), s.size()}; }

}  // namespace

void JsonFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  // ordered_json keeps the fields in this order, which reads better than sorted.
  const nlohmann::ordered_json line{
      {"time", iso8601_utc(msg.time)},
      {"level", view(spdlog::level::to_string_view(msg.level))},
      {"logger", view(msg.logger_name)},
      {"message", view(msg.payload)}};
  const std::string text =
      line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  dest.append(text.data(), text.data() + text.size());
  dest.push_back('\n');
}

std::unique_ptr<spdlog::formatter> JsonFormatter::clone() const {
  return std::make_unique<JsonFormatter>();
}

void setup_logging(const std::string& level, bool json) {
  std::shared_ptr<spdlog::logger> logger;
  if (json) {
    // No colour: escape codes would end up inside the JSON strings.
    logger = std::make_shared<spdlog::logger>(
        "exactly", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger = std::make_shared<spdlog::logger>(
        "exactly", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  }
  // Replaces (and re-registers) the default, so setting up twice is harmless.
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::flush_on(spdlog::level::info);
}

}  // namespace exactly::ops
