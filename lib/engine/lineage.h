// The lineage header every output carries: "{topic}/{partition}/{offset}" of its input, so an
// independent reader can audit exactly-once (DESIGN.md item 9).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

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
  out.clear();
  fmt::format_to(std::back_inserter(out), "{}/{}/{}", topic, partition, offset);
}

}  // namespace exactly::engine
