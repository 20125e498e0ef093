// A whole decimal integer from text (a librdkafka or broker config value, a marker field).
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>

namespace exactly::util {

// nullopt unless all of `text` is one integer that fits.
inline std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace exactly::util
