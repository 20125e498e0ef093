#include "engine/quarantine.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "util/parse_int.h"

namespace exactly::engine {
namespace {

using util::parse_int;

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const auto space = text.find(' ');
    if (space != 0) out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

}  // namespace

std::string encode(const Marker& marker) {
  if (marker.state == Marker::State::running) {
    return fmt::format("running offset={} deaths={} started={} owner={}", marker.offset,
                       marker.deaths, marker.started ? 1 : 0, marker.owner);
  }
  return fmt::format("quarantine offset={} deaths={} suspect={} span={} until={} tries={} grow={} "
                     "alone={} owner={}",
                     marker.offset, marker.deaths, marker.suspect, marker.span, marker.until,
                     marker.tries, marker.grow ? 1 : 0, marker.alone, marker.owner);
}

std::optional<Marker> decode(std::string_view text, std::string& error) {
  const auto parts = words(text);
  if (parts.empty()) {
    error = "an empty marker";
    return std::nullopt;
  }
  Marker marker;
  if (parts[0] == "running") {
    marker.state = Marker::State::running;
    marker.started = true;  // a marker without the field counts its death, the safe side
  } else if (parts[0] == "quarantine") {
    marker.state = Marker::State::quarantine;
    marker.grow = true;  // a marker without the field: grow, or the quarantine takes hours
  } else {
    error = fmt::format("unknown marker state '{}'", parts[0]);
    return std::nullopt;
  }
  bool has_offset = false;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const auto eq = parts[i].find('=');
    const auto value = eq == std::string_view::npos ? std::nullopt
                                                    : parse_int(parts[i].substr(eq + 1));
    if (!value) {
      error = fmt::format("'{}' is not name=integer", parts[i]);
      return std::nullopt;
    }
    const std::string_view name = parts[i].substr(0, eq);
    if (name == "offset") {
      marker.offset = *value;
      has_offset = true;
    } else if (name == "deaths") {
      marker.deaths = *value;
    } else if (name == "suspect") {
      marker.suspect = *value;
    } else if (name == "until") {
      marker.until = *value;
    } else if (name == "tries") {
      marker.tries = *value;
    } else if (name == "started") {
      marker.started = *value != 0;
    } else if (name == "span") {
      marker.span = *value;
    } else if (name == "grow") {
      marker.grow = *value != 0;
    } else if (name == "alone") {
      marker.alone = *value;
    } else if (name == "owner") {
      marker.owner = *value;
    }
    // Unknown fields are ignored: a newer version may add some.
  }
  if (!has_offset) {
    error = "the marker has no offset";
    return std::nullopt;
  }
  if (marker.state == Marker::State::quarantine && marker.until < marker.offset) {
    error = fmt::format("a quarantine ending at {} before its start {}", marker.until, marker.offset);
    return std::nullopt;
  }
  if (marker.span < 1) {
    error = fmt::format("a span of {} records", marker.span);
    return std::nullopt;
  }
  if (marker.alone < 0) {
    error = fmt::format("{} records to run alone", marker.alone);
    return std::nullopt;
  }
  return marker;
}

StartDecision decide_start(const std::optional<Marker>& previous, std::int64_t committed,
                           bool input_waiting, std::int64_t deaths_to_quarantine,
                           std::int64_t range, std::int64_t self) {
  StartDecision d;
  const Marker fresh{.state = Marker::State::running, .offset = committed, .owner = self};
  // No marker: the last owner stopped cleanly. A marker behind the committed offset's past (the
  // group's offsets were reset backwards) says nothing about this range either.
  if (!previous || committed < previous->offset) {
    d.write = fresh;
    return d;
  }
  const Marker& m = *previous;
  // This process wrote it: it lost the partition and is alive to get it back. Whatever ended its
  // ownership, no record killed it.
  d.own = m.owner != 0 && m.owner == self;
  if (m.state == Marker::State::quarantine) {
    if (committed >= m.until) {
      d.write = fresh;  // the quarantine is over
      return d;
    }
    d.quarantine = true;
    d.until = m.until;
    d.grow = m.grow;
    d.deaths = m.deaths;
    d.alone = m.alone;
    if (m.suspect < 0) return d;  // a clean stop in the quarantine: go on with it
    if (m.suspect != committed) {
      // The transaction the marker names was committed. Was it one of the narrowed range's?
      if (committed > m.suspect && m.alone > 0) d.alone = m.alone - 1;
      return d;  // the marker stays until the next one
    }
    if (d.own) {
      // The run did not kill this process: it does not count as a death, nor as a try.
      if (m.span == 1 && m.tries > 1) {
        d.suspect = committed;
        d.tries = m.tries - 1;
      }
      return d;
    }
    d.deaths = m.deaths + 1;
    if (m.span > 1) {
      // The last owner died in the transaction of the (at most) `span` records from here: the
      // record that killed it is one of them. Run them one per transaction; then grow again.
      d.alone = m.span;
      d.narrowed = true;
      return d;
    }
    // The last owner died while running the record from here alone.
    if (m.tries >= tries_to_convict) {
      d.convict = committed;
    } else {
      d.suspect = committed;
      d.tries = m.tries;
    }
    return d;  // the marker stays: the next one is written before the next transaction
  }
  if (!m.started || !input_waiting || d.own) {
    // The last owner never processed a record, or there was none to process, or it is this
    // process: whatever ended it, it was not a record of this partition. The count stands.
    Marker same = fresh;
    same.deaths = m.offset == committed ? m.deaths : 0;
    d.deaths = same.deaths;
    d.write = same;
    return d;
  }
  d.deaths = m.offset == committed ? m.deaths + 1 : 1;
  if (d.deaths >= deaths_to_quarantine) {
    d.quarantine = true;
    d.grow = true;
    d.until = committed + range;
    d.write = Marker{.state = Marker::State::quarantine,
                     .offset = committed,
                     .deaths = d.deaths,
                     .until = d.until,
                     .grow = true,
                     .owner = self};
    return d;
  }
  d.write = Marker{.state = Marker::State::running,
                   .offset = committed,
                   .deaths = d.deaths,
                   .owner = self};
  return d;
}

}  // namespace exactly::engine
