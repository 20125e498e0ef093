// JSON log lines: each one parses, whatever the message holds.
#include <doctest/doctest.h>

#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "ops/logging.h"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// "2024-05-01T12:00:00.123Z". (Not std::regex: GCC 12 warns inside it under the sanitizers.)
bool is_iso8601_utc_millis(const std::string& t) {
  constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd.dddZ";
  if (t.size() != shape.size()) return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const bool ok = shape[i] == 'd' ? (t[i] >= '0' && t[i] <= '9') : t[i] == shape[i];
    if (!ok) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("every message becomes exactly one line of valid JSON, escaped as needed") {
  constexpr char with_nul[] = "control \x01\x1f and a NUL \0 inside";
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("exactly", sink);
  logger.set_formatter(std::make_unique<exactly::ops::JsonFormatter>());
  logger.set_level(spdlog::level::trace);

  const std::vector<std::string> messages{
      "plain",
      R"(quotes " and 'single' and a backslash \ and C:\path\n)",
      "a newline\nand a carriage return\r\nand a tab\t",
      std::string{with_nul, sizeof with_nul - 1},
      "braces {} {0} and a percent %s %n",
      "utf-8: \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
      "not utf-8: \xff\xfe \xc3 end",
      R"({"looks":"like json"})",
      ""};
  for (const auto& m : messages) logger.info("{}", m);
  logger.warn("warned");
  logger.error("failed");
  logger.flush();

  const auto lines = lines_of(out.str());
  REQUIRE(lines.size() == messages.size() + 2);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    const auto j = nlohmann::json::parse(lines[i], nullptr, false);
    REQUIRE_FALSE(j.is_discarded());
    REQUIRE(j.is_object());
    CHECK(j.size() == 4);
    CHECK(is_iso8601_utc_millis(j.at("time").get<std::string>()));
    CHECK(j.at("logger") == "exactly");
    if (i < messages.size()) {
      CHECK(j.at("level") == "info");
      if (i != 6) CHECK(j.at("message").get<std::string>() == messages[i]);
    }
  }
  // Invalid UTF-8 is replaced, the rest kept.
  const auto bad = nlohmann::json::parse(lines[6]).at("message").get<std::string>();
  CHECK(bad.rfind("not utf-8: ", 0) == 0);
  CHECK(bad.find("\xef\xbf\xbd") != std::string::npos);
  CHECK(bad.find(" end") != std::string::npos);

  CHECK(nlohmann::json::parse(lines[messages.size()]).at("level") == "warning");
  CHECK(nlohmann::json::parse(lines[messages.size() + 1]).at("level") == "error");
  // The fields come in a fixed, readable order.
  CHECK(lines[0].rfind(R"({"time":")", 0) == 0);
  CHECK(lines[0].find(R"(","level":"info","logger":"exactly","message":"plain"})") !=
        std::string::npos);
}

TEST_CASE("a cloned formatter formats the same way") {
  const exactly::ops::JsonFormatter formatter;
  const auto clone = formatter.clone();
  const spdlog::details::log_msg msg("x", spdlog::level::debug, "m\"sg");
  spdlog::memory_buf_t a;
  spdlog::memory_buf_t b;
  exactly::ops::JsonFormatter{}.format(msg, a);
  clone->format(msg, b);
  const auto ja = nlohmann::json::parse(std::string(a.data(), a.size()));
  const auto jb = nlohmann::json::parse(std::string(b.data(), b.size()));
  CHECK(ja.at("message") == "m\"sg");
  CHECK(ja.at("level") == "debug");
  CHECK(ja == jb);
}

TEST_CASE("setting up logging twice replaces the default logger instead of failing") {
  exactly::ops::setup_logging("warn", true);
  exactly::ops::setup_logging("info", false);
  CHECK(spdlog::default_logger()->name() == "exactly");
  CHECK(spdlog::default_logger()->level() == spdlog::level::info);
  spdlog::set_level(spdlog::level::off);
}
