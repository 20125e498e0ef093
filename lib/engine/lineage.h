// The lineage header every output carries: "{topic}/{partition}/{offset}" of its input, so an
// independent reader can audit exactly-once (DESIGN.md item 9).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace exactly::engine {

inline constexpr std::string_view lineage_header = "exactly.lineage";

// The transaction attempt that wrote an output (or dead letter): "{instance}-{n}", unique per
// attempt. The engine logs every attempt it aborts ("aborted attempt {id}"); a read_committed
// reader that finds one of those ids has read aborted data (Jepsen's G1a), which `exactly verify
// --aborted-log` checks.
inline constexpr std::string_view attempt_header = "exactly.attempt";

// Replaces `out` with the lineage text; reuses its capacity (this runs once per output).
inline void format_lineage_into(std::string& out, std::string_view topic, std::int32_t partition,
                                std::int64_t offset) {
  // Per output record: std::to_chars, not a format string parsed at run time.
  char digits[24];
  out.assign(topic);
  out.push_back('/');
  out.append(digits, std::to_chars(digits, digits + sizeof digits, partition).ptr);
  out.push_back('/');
  out.append(digits, std::to_chars(digits, digits + sizeof digits, offset).ptr);
}

}  // namespace exactly::engine
