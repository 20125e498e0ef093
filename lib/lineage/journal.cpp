#include "lineage/journal.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>

#include <fmt/format.h>

namespace exactly::lineage {

namespace {

void append_number(std::string& out, std::int64_t value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

// Reads a non-negative decimal at the front of `text` and drops it from `text`.
template <class Int>
bool take_number(std::string_view& text, Int& value) {
  if (text.empty() || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || value < 0) return false;
  text.remove_prefix(static_cast<std::size_t>(end - text.data()));
  return true;
}

bool take(std::string_view& text, char c) {
  if (text.empty() || text.front() != c) return false;
  text.remove_prefix(1);
  return true;
}

std::string_view printable_prefix(std::string_view text) {
  return text.substr(0, std::min<std::size_t>(text.size(), 60));
}

}  // namespace

void JournalBuilder::add(std::int32_t output_partition, std::int64_t output_offset,
                         std::int32_t input_partition, std::int64_t input_offset) {
  ++pairs_;
  if (const auto it = open_.find(output_partition); it != open_.end()) {
    Run& run = runs_[it->second];
    if (run.next_output == output_offset && run.input_partition == input_partition &&
        input_offset >= run.last_input && run.text.size() < run_bytes_) {
      run.text.push_back(',');
      append_number(run.text, input_offset - run.last_input);
      run.last_input = input_offset;
      ++run.next_output;
      return;
    }
  }
  Run run{output_partition, output_offset + 1, input_partition, input_offset, {}};
  append_number(run.text, output_partition);
  run.text.push_back('@');
  append_number(run.text, output_offset);
  run.text.push_back(' ');
  append_number(run.text, input_partition);
  run.text.push_back(':');
  append_number(run.text, input_offset);
  open_[output_partition] = runs_.size();
  runs_.push_back(std::move(run));
}

std::vector<std::string> JournalBuilder::records(std::string_view input_topic,
                                                 std::string_view output_topic,
                                                 std::string_view attempt,
                                                 std::size_t max_bytes) const {
  std::vector<std::string> out;
  const auto start = [&] {
    std::string& record = out.emplace_back();
    record.append(journal_magic);
    record.push_back(' ');
    record.append(input_topic);
    record.push_back(' ');
    record.append(output_topic);
    record.push_back(' ');
    record.append(attempt);
  };
  for (const Run& run : runs_) {
    if (out.empty() || out.back().size() + 1 + run.text.size() > max_bytes) start();
    out.back().push_back('\n');
    out.back().append(run.text);
  }
  return out;
}

void JournalBuilder::clear() {
  runs_.clear();
  open_.clear();
  pairs_ = 0;
}

std::optional<std::string> LineageIndex::add(std::string_view value) {
  std::string_view rest = value;
  const auto line_end = rest.find('\n');
  std::string_view head = rest.substr(0, line_end);
  rest = line_end == std::string_view::npos ? std::string_view{} : rest.substr(line_end + 1);
  const auto bad = [&](std::string_view what) {
    return fmt::format("not a lineage journal record ({}): '{}'", what, printable_prefix(value));
  };
  if (head.substr(0, journal_magic.size()) != journal_magic ||
      head.size() <= journal_magic.size() || head[journal_magic.size()] != ' ') {
    return bad(fmt::format("it does not begin with '{} '", journal_magic));
  }
  head.remove_prefix(journal_magic.size() + 1);
  const auto space = head.find(' ');
  const auto second = space == std::string_view::npos ? space : head.find(' ', space + 1);
  if (space == std::string_view::npos || space == 0 || second == std::string_view::npos ||
      second == space + 1 || second + 1 == head.size()) {
    return bad("its first line names no input topic, output topic and attempt");
  }
  if (head.substr(space + 1, second - space - 1) != output_topic_) return std::nullopt;
  const auto source = static_cast<std::uint32_t>(sources_.size());
  Source named{std::string{head.substr(0, space)}, std::string{head.substr(second + 1)}};

  // Parsed into scratch first, so that a record that turns out bad adds nothing.
  std::vector<std::pair<std::int32_t, Segment>> found;
  const std::size_t inputs_before = inputs_.size();
  std::size_t line_number = 1;
  while (!rest.empty()) {
    ++line_number;
    const auto end = rest.find('\n');
    std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    std::int32_t output_partition = 0;
    Segment segment;
    std::int64_t input = 0;
    if (!take_number(line, output_partition) || !take(line, '@') ||
        !take_number(line, segment.first_output) || !take(line, ' ') ||
        !take_number(line, segment.input_partition) || !take(line, ':') ||
        !take_number(line, input)) {
      inputs_.resize(inputs_before);
      return bad(fmt::format("line {} is not '{{partition}}@{{offset}} {{partition}}:{{offset}}'",
                             line_number));
    }
    segment.source = source;
    segment.first_input = inputs_.size();
    inputs_.push_back(input);
    while (!line.empty()) {
      std::int64_t delta = 0;
      if (!take(line, ',') || !take_number(line, delta) ||
          input > std::numeric_limits<std::int64_t>::max() - delta) {
        inputs_.resize(inputs_before);
        return bad(fmt::format("line {} has a bad delta list", line_number));
      }
      input += delta;
      inputs_.push_back(input);
    }
    segment.count = static_cast<std::uint32_t>(inputs_.size() - segment.first_input);
    if (segment.first_output > std::numeric_limits<std::int64_t>::max() - segment.count) {
      inputs_.resize(inputs_before);
      return bad(fmt::format("line {} runs past the largest offset", line_number));
    }
    found.emplace_back(output_partition, segment);
  }
  sources_.push_back(std::move(named));
  for (const auto& [partition, segment] : found) segments_[partition].push_back(segment);
  return std::nullopt;
}

void LineageIndex::seal() {
  for (auto& [partition, list] : segments_) {
    std::stable_sort(list.begin(), list.end(), [](const Segment& a, const Segment& b) {
      return a.first_output < b.first_output;
    });
    // Overlaps: a later segment loses the outputs an earlier one claims.
    std::vector<Segment> kept;
    kept.reserve(list.size());
    for (Segment segment : list) {
      if (!kept.empty()) {
        const Segment& last = kept.back();
        const std::int64_t claimed_to = last.first_output + last.count;
        if (segment.first_output < claimed_to) {
          const std::int64_t overlap =
              std::min<std::int64_t>(claimed_to - segment.first_output, segment.count);
          conflicts_ += static_cast<std::uint64_t>(overlap);
          if (examples_.size() < 10) {
            examples_.push_back(fmt::format(
                "output partition {} offsets [{}, {}) named by attempts {} and {}", partition,
                segment.first_output, segment.first_output + overlap,
                sources_[last.source].attempt, sources_[segment.source].attempt));
          }
          if (overlap == segment.count) continue;
          segment.first_output += overlap;
          segment.first_input += static_cast<std::size_t>(overlap);
          segment.count -= static_cast<std::uint32_t>(overlap);
        }
      }
      kept.push_back(segment);
    }
    list = std::move(kept);
  }
}

std::optional<std::string> LineageIndex::lineage_of(std::int32_t partition,
                                                    std::int64_t offset) const {
  const auto it = segments_.find(partition);
  if (it == segments_.end()) return std::nullopt;
  const auto& list = it->second;
  // The last segment starting at or before `offset`.
  auto after = std::upper_bound(list.begin(), list.end(), offset,
                                [](std::int64_t o, const Segment& s) { return o < s.first_output; });
  if (after == list.begin()) return std::nullopt;
  const Segment& segment = *std::prev(after);
  if (offset >= segment.first_output + segment.count) return std::nullopt;
  const Source& source = sources_[segment.source];
  return fmt::format("{}/{}/{}/{}", source.topic, segment.input_partition,
                     inputs_[segment.first_input + static_cast<std::size_t>(offset - segment.first_output)],
                     source.attempt);
}

}  // namespace exactly::lineage
