// Untrusted bytes (a header value, a name a plugin chose) quoted in a one-line log or finding.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace exactly::util {

// The first `limit` bytes of `text`, each byte outside printable ASCII as '?', and "..." when
// `text` was longer.
inline std::string printable(std::string_view text, std::size_t limit = 64) {
  std::string out;
  out.reserve(std::min(text.size(), limit) + 3);
  for (const char c : text.substr(0, limit)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > limit) out += "...";
  return out;
}

}  // namespace exactly::util
