// The lineage header every output and dead letter carries: "{topic}/{partition}/{offset}/{attempt}"
// of its input and of the transaction attempt that wrote it, so an independent reader can audit
// exactly-once (DESIGN.md item 9).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace exactly::engine {

inline constexpr std::string_view lineage_header = "exactly.lineage";

// The attempt is "{instance}-{n}", unique per transaction attempt. The engine logs every attempt
// it aborts ("aborted attempt {id}"); a read_committed reader that finds one of those ids has read
// aborted data (Jepsen's G1a), which `exactly verify --aborted-log` checks. It travels in the
// lineage header rather than a header of its own: one header name fewer on the wire and one
// librdkafka allocation fewer per record (results/bench/lineage/).
//
// Replaces `out` with the lineage text; reuses its capacity (this runs once per input record).
inline void format_lineage_into(std::string& out, std::string_view topic, std::int32_t partition,
                                std::int64_t offset, std::string_view attempt) {
  // Per record: std::to_chars, not a format string parsed at run time.
  char digits[24];
  out.assign(topic);
  out.push_back('/');
  out.append(digits, std::to_chars(digits, digits + sizeof digits, partition).ptr);
  out.push_back('/');
  out.append(digits, std::to_chars(digits, digits + sizeof digits, offset).ptr);
  out.push_back('/');
  out.append(attempt);
}

}  // namespace exactly::engine
