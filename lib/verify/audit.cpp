#include "verify/audit.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <iterator>

#include <fmt/format.h>

#include "kafka/topic_reader.h"
#include "lineage/journal.h"
#include "util/printable.h"

namespace exactly::verify {
namespace {

// A gap this long or longer between input offsets of a partition starts a new run instead of
// being filled with zero bytes: transaction markers leave gaps of one, aborted transactions
// longer ones, compaction anything.
constexpr std::int64_t max_dense_gap = 4096;

constexpr std::size_t max_topic_length = 249;  // Kafka's limit

bool is_topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// A canonical non-negative decimal: digits only, no leading zero, no overflow of T.
template <class T>
std::optional<T> parse_number(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

using util::printable;

std::uint64_t source_key(std::int32_t output_partition, std::int32_t source_partition) {
  return (std::uint64_t{static_cast<std::uint32_t>(output_partition)} << 32) |
         static_cast<std::uint32_t>(source_partition);
}

}  // namespace

std::optional<Lineage> parse_lineage(std::string_view text) {
  // A topic name holds no '/': the first two separate topic, partition and offset, and a third
  // one, if there is one, the attempt.
  const auto first = text.find('/');
  if (first == std::string_view::npos) return std::nullopt;
  const auto second = text.find('/', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const auto third = text.find('/', second + 1);
  const std::string_view topic = text.substr(0, first);
  if (topic.empty() || topic.size() > max_topic_length ||
      !std::all_of(topic.begin(), topic.end(), is_topic_char)) {
    return std::nullopt;
  }
  const auto partition = parse_number<std::int32_t>(text.substr(first + 1, second - first - 1));
  const auto offset = parse_number<std::int64_t>(
      text.substr(second + 1, third == std::string_view::npos ? std::string_view::npos
                                                              : third - second - 1));
  if (!partition || !offset) return std::nullopt;
  std::string_view attempt;
  if (third != std::string_view::npos) {
    attempt = text.substr(third + 1);
    if (attempt.empty()) return std::nullopt;
  }
  return Lineage{topic, *partition, *offset, attempt};
}

std::string format_lineage(std::string_view topic, std::int32_t partition, std::int64_t offset) {
  return fmt::format("{}/{}/{}", topic, partition, offset);
}

bool Report::ok() const {
  return missing == 0 && duplicated == 0 && order_violations == 0 && no_lineage == 0 &&
         unknown_source == 0 && aborted_reads == 0 && lineage_errors == 0;
}

std::string Report::summary() const {
  return fmt::format(
      "inputs={} outputs={} dead_letters={} missing={} duplicated={} order_violations={} "
      "no_lineage={} unknown_source={} aborted_reads={} lineage_errors={}",
      inputs, outputs, dead_letters, missing, duplicated, order_violations, no_lineage,
      unknown_source, aborted_reads, lineage_errors);
}

Audit::Audit(std::string input_topic) : input_topic_(std::move(input_topic)) {}

void Audit::add_input(std::int32_t partition, std::int64_t offset) {
  if (partition < 0 || offset < 0) return;  // not a record's coordinates
  auto& runs = inputs_[partition].runs;
  const auto mark = [this](std::uint8_t& count) {
    if (count == 0) {
      count = 1;
      ++input_count_;
    }
  };
  // The common case: at or after the start of the last run (records arrive in offset order).
  if (!runs.empty() && offset >= runs.back().first) {
    Run& run = runs.back();
    const auto index = static_cast<std::size_t>(offset - run.first);
    if (index < run.counts.size()) return mark(run.counts[index]);
    if (index - run.counts.size() < static_cast<std::size_t>(max_dense_gap)) {
      run.counts.resize(index + 1, 0);
      return mark(run.counts[index]);
    }
    runs.push_back(Run{offset, {0}});
    return mark(runs.back().counts[0]);
  }
  // Out of order: inside or just after an earlier run, else a run of its own.
  const auto next = std::upper_bound(runs.begin(), runs.end(), offset,
                                     [](std::int64_t o, const Run& run) { return o < run.first; });
  if (next != runs.begin()) {
    Run& run = *std::prev(next);
    const auto index = static_cast<std::size_t>(offset - run.first);
    if (index < run.counts.size()) return mark(run.counts[index]);
    if (index - run.counts.size() < static_cast<std::size_t>(max_dense_gap)) {
      // Stays below next->first (offset < next->first), so the runs remain disjoint.
      run.counts.resize(index + 1, 0);
      return mark(run.counts[index]);
    }
  }
  const auto inserted = runs.insert(next, Run{offset, {0}});
  mark(inserted->counts[0]);
}

std::uint8_t* Audit::find_input(std::int32_t partition, std::int64_t offset) {
  const auto found = inputs_.find(partition);
  if (found == inputs_.end()) return nullptr;
  auto& runs = found->second.runs;
  const auto next = std::upper_bound(runs.begin(), runs.end(), offset,
                                     [](std::int64_t o, const Run& run) { return o < run.first; });
  if (next == runs.begin()) return nullptr;
  Run& run = *std::prev(next);
  const auto index = static_cast<std::size_t>(offset - run.first);
  if (index >= run.counts.size() || run.counts[index] == 0) return nullptr;
  return &run.counts[index];
}

void Audit::note(Finding kind, std::string text) {
  auto& list = examples_[static_cast<std::size_t>(kind)];
  if (list.size() < Report::max_examples) list.push_back(std::move(text));
}

void Audit::add_aborted_attempt(std::string id) { aborted_attempts_.insert(std::move(id)); }

void Audit::add_output(std::int32_t output_partition, std::optional<std::string_view> lineage_value,
                       std::optional<std::string_view> attempt) {
  reflect(false, output_partition, lineage_value, attempt);
}

void Audit::add_dead_letter(std::optional<std::string_view> lineage_value,
                            std::optional<std::string_view> attempt) {
  reflect(true, -1, lineage_value, attempt);
}

void Audit::reflect(bool dead_letter, std::int32_t output_partition,
                    std::optional<std::string_view> lineage_value,
                    std::optional<std::string_view> attempt) {
  ++(dead_letter ? dead_letter_count_ : output_count_);
  const auto lineage = lineage_value ? parse_lineage(*lineage_value) : std::nullopt;
  if (!attempt && lineage && !lineage->attempt.empty()) attempt = lineage->attempt;
  if (attempt && !aborted_attempts_.empty() && aborted_attempts_.count(std::string{*attempt}) != 0) {
    // Counted once per record; the record is audited as usual too.
    ++aborted_reads_;
    note(Finding::aborted_read,
         fmt::format("aborted read: attempt {} ({}) in {}", printable(*attempt),
                     printable(lineage_value.value_or("no lineage")),
                     dead_letter ? std::string{"the dead-letter topic"}
                                 : fmt::format("output partition {}", output_partition)));
  }
  if (!lineage_value) {
    ++no_lineage_;
    note(Finding::no_lineage, fmt::format("no lineage in output partition {}", output_partition));
    return;
  }
  if (!lineage) {
    ++no_lineage_;
    note(Finding::no_lineage, fmt::format("unparsable lineage '{}' in output partition {}",
                                          printable(*lineage_value), output_partition));
    return;
  }
  std::uint8_t* count =
      lineage->topic == input_topic_ ? find_input(lineage->partition, lineage->offset) : nullptr;
  if (count == nullptr) {
    ++unknown_source_;
    note(Finding::unknown_source,
         fmt::format("unknown source {} in output partition {}", *lineage_value, output_partition));
    return;
  }
  const bool first = *count == 1;
  if (*count == UINT8_MAX) {
    ++saturated_[{lineage->partition, lineage->offset}];
  } else {
    ++*count;
  }
  // A duplicate counts only as a duplicate, and does not move the order mark: a later first
  // output is compared with the first outputs before it.
  if (!first || dead_letter) return;
  const auto [last, inserted] =
      last_source_.try_emplace(source_key(output_partition, lineage->partition), lineage->offset);
  if (inserted) return;
  if (lineage->offset < last->second) {
    ++order_violations_;
    note(Finding::order,
         fmt::format("order violation {} after {} in output partition {}",
                     format_lineage(lineage->topic, lineage->partition, lineage->offset),
                     format_lineage(input_topic_, lineage->partition, last->second),
                     output_partition));
  }
  last->second = lineage->offset;
}

Report Audit::finish() const {
  Report report;
  report.inputs = input_count_;
  report.outputs = output_count_;
  report.dead_letters = dead_letter_count_;
  report.order_violations = order_violations_;
  report.no_lineage = no_lineage_;
  report.unknown_source = unknown_source_;
  report.aborted_reads = aborted_reads_;
  auto examples = examples_;
  auto& missing = examples[static_cast<std::size_t>(Finding::missing)];
  auto& duplicated = examples[static_cast<std::size_t>(Finding::duplicated)];

  // Partitions in order, so the examples are the same from run to run.
  std::vector<std::int32_t> partitions;
  partitions.reserve(inputs_.size());
  for (const auto& [partition, input] : inputs_) partitions.push_back(partition);
  std::sort(partitions.begin(), partitions.end());
  for (const std::int32_t partition : partitions) {
    for (const Run& run : inputs_.at(partition).runs) {
      for (std::size_t i = 0; i < run.counts.size(); ++i) {
        const std::uint8_t count = run.counts[i];
        if (count == 0 || count == 2) continue;  // not an input, or exactly one output
        const std::int64_t offset = run.first + static_cast<std::int64_t>(i);
        if (count == 1) {
          ++report.missing;
          if (missing.size() < Report::max_examples) {
            missing.push_back(
                fmt::format("missing {}", format_lineage(input_topic_, partition, offset)));
          }
          continue;
        }
        std::uint64_t outputs = count - 1u;
        if (count == UINT8_MAX) {
          if (const auto extra = saturated_.find({partition, offset}); extra != saturated_.end()) {
            outputs += extra->second;
          }
        }
        report.duplicated += outputs - 1;
        if (duplicated.size() < Report::max_examples) {
          duplicated.push_back(fmt::format("duplicated {} ({} outputs)",
                                           format_lineage(input_topic_, partition, offset),
                                           outputs));
        }
      }
    }
  }

  // Take the examples in turns, so that one kind of finding cannot hide the others.
  for (std::size_t i = 0; i < Report::max_examples; ++i) {
    for (auto& list : examples) {
      if (i < list.size() && report.examples.size() < Report::max_examples) {
        report.examples.push_back(std::move(list[i]));
      }
    }
  }
  return report;
}

std::vector<std::pair<std::int32_t, std::int64_t>> Audit::duplicated_inputs(std::size_t max) const {
  std::vector<std::pair<std::int32_t, std::int64_t>> found;
  std::vector<std::int32_t> partitions;
  for (const auto& [partition, input] : inputs_) partitions.push_back(partition);
  std::sort(partitions.begin(), partitions.end());
  for (const std::int32_t partition : partitions) {
    for (const Run& run : inputs_.at(partition).runs) {
      for (std::size_t i = 0; i < run.counts.size() && found.size() < max; ++i) {
        if (run.counts[i] > 2) found.emplace_back(partition, run.first + static_cast<std::int64_t>(i));
      }
    }
  }
  return found;
}

std::vector<std::string> aborted_attempts_in(std::string_view log) {
  std::vector<std::string> ids;
  constexpr std::string_view marker = "aborted attempt ";
  for (auto at = log.find(marker); at != std::string_view::npos; at = log.find(marker, at + 1)) {
    const auto start = at + marker.size();
    auto end = start;
    while (end < log.size() && (std::isxdigit(static_cast<unsigned char>(log[end])) != 0 ||
                                log[end] == '-')) {
      ++end;
    }
    if (end > start) ids.emplace_back(log.substr(start, end - start));
  }
  return ids;
}

std::variant<Report, std::string> audit_topics(const AuditOptions& options) {
  using Clock = std::chrono::steady_clock;
  if (options.input_topic == options.output_topic) {
    return fmt::format("the input and output topic are the same ('{}')", options.input_topic);
  }
  const auto deadline = Clock::now() + options.timeout;
  const auto left = [&deadline] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()),
                    std::chrono::milliseconds{0});
  };

  Audit audit{options.input_topic};
  for (const auto& id : options.aborted_attempts) audit.add_aborted_attempt(id);
  std::uint64_t read_count = 0;
  const auto tick = [&](const std::string& topic) {
    if (options.progress && ++read_count % 65536 == 0) options.progress(topic, read_count);
  };
  const auto done = [&](const std::string& topic) {
    if (options.progress) options.progress(topic, read_count);
    read_count = 0;
  };
  kafka::ReadOptions read{options.bootstrap_servers, options.input_topic, options.properties,
                          left()};
  if (auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
        audit.add_input(record.partition, record.offset);
        tick(options.input_topic);
      })) {
    return fmt::format("reading the input topic '{}': {}", options.input_topic, *error);
  }
  done(options.input_topic);

  const auto header_of = [](const kafka::ReadRecord& record, std::string_view name) {
    std::optional<std::string_view> value;
    for (const auto& header : record.headers) {
      if (header.name == name) {
        value = header.value.value_or(std::string_view{});  // a null value: unparsable
        break;
      }
    }
    return value;
  };
  // The lineage journal, if the outputs' lineage is there rather than in headers.
  lineage::LineageIndex journal{options.output_topic};
  std::uint64_t journal_errors = 0;
  std::vector<std::string> journal_examples;
  read.read_uncommitted = options.read_uncommitted;
  std::vector<std::int64_t> output_ends;  // empty: as of the output's read
  if (!options.lineage_topic.empty()) {
    // The outputs are read only up to their ends as of now, and the journal after: a transaction
    // that committed outputs before this point committed its journal records with them.
    read.topic = options.output_topic;
    read.timeout = left();
    auto ends = kafka::end_offsets(read);
    if (auto* error = std::get_if<std::string>(&ends)) {
      return fmt::format("reading the output topic '{}': {}", options.output_topic, *error);
    }
    output_ends = std::move(std::get<std::vector<std::int64_t>>(ends));
    read.topic = options.lineage_topic;
    read.timeout = left();
    if (auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
          auto bad = record.value ? journal.add(*record.value)
                                  : std::optional<std::string>{"a record with no value"};
          if (bad) {
            ++journal_errors;
            if (journal_examples.size() < Report::max_examples) {
              journal_examples.push_back(fmt::format("lineage topic partition {} offset {}: {}",
                                                     record.partition, record.offset, *bad));
            }
          }
          tick(options.lineage_topic);
        })) {
      return fmt::format("reading the lineage topic '{}': {}", options.lineage_topic, *error);
    }
    done(options.lineage_topic);
    journal.seal();
    journal_errors += journal.conflicts();
    for (const auto& example : journal.conflict_examples()) {
      if (journal_examples.size() < Report::max_examples) journal_examples.push_back(example);
    }
  }
  // An output's lineage: its header, else what the journal says of it.
  std::optional<std::string> traced;
  const auto lineage_of = [&](const kafka::ReadRecord& record) -> std::optional<std::string_view> {
    if (auto header = header_of(record, lineage_header)) return header;
    if (options.lineage_topic.empty()) return std::nullopt;
    traced = journal.lineage_of(record.partition, record.offset);
    if (!traced) return std::nullopt;
    return std::string_view{*traced};
  };

  read.topic = options.output_topic;
  read.timeout = left();
  read.ends = output_ends;
  if (auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
        audit.add_output(record.partition, lineage_of(record), header_of(record, attempt_header));
        tick(options.output_topic);
      })) {
    return fmt::format("reading the output topic '{}': {}", options.output_topic, *error);
  }
  done(options.output_topic);
  read.ends.clear();
  if (!options.dlq_topic.empty()) {
    read.topic = options.dlq_topic;
    read.timeout = left();
    if (auto error = kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
          audit.add_dead_letter(header_of(record, lineage_header), header_of(record, attempt_header));
          tick(options.dlq_topic);
        })) {
      return fmt::format("reading the dead-letter topic '{}': {}", options.dlq_topic, *error);
    }
    done(options.dlq_topic);
  }
  Report report = audit.finish();
  report.lineage_errors = journal_errors;
  if (options.lineage_topic.empty() && report.outputs > 0 && report.no_lineage == report.outputs) {
    journal_examples.push_back(fmt::format(
        "no output of '{}' has a lineage header: if its pipeline sets pipeline.lineage_topic, "
        "name that topic (--lineage-topic, or --config)",
        options.output_topic));
  }
  // The journal's problems first: they explain the outputs without lineage.
  if (!journal_examples.empty()) {
    journal_examples.insert(journal_examples.end(), report.examples.begin(), report.examples.end());
    journal_examples.resize(std::min(journal_examples.size(), Report::max_examples));
    report.examples = std::move(journal_examples);
  }
  if (report.duplicated == 0) return report;

  // Where each copy of a few duplicated inputs is, and which attempt wrote it: one more read.
  std::map<std::string, std::vector<std::string>, std::less<>> copies;
  for (const auto& [partition, offset] : audit.duplicated_inputs(Report::max_examples)) {
    copies[format_lineage(options.input_topic, partition, offset)];
  }
  const auto collect = [&](const std::string& topic, bool dead_letter) {
    read.topic = topic;
    read.timeout = left();
    return kafka::read_topic(read, [&](const kafka::ReadRecord& record) {
      const auto value = dead_letter ? header_of(record, lineage_header) : lineage_of(record);
      const auto lineage = value ? parse_lineage(*value) : std::nullopt;
      if (!lineage) return;
      const auto it = copies.find(format_lineage(lineage->topic, lineage->partition, lineage->offset));
      if (it == copies.end()) return;
      const auto attempt = header_of(record, attempt_header);
      it->second.push_back(fmt::format(
          "{}: {} partition {} offset {} attempt {}", it->first,
          dead_letter ? "dead letter" : "output", record.partition, record.offset,
          printable(attempt ? *attempt : !lineage->attempt.empty() ? lineage->attempt : "(none)")));
    });
  };
  std::optional<std::string> error = collect(options.output_topic, false);
  if (!error && !options.dlq_topic.empty()) error = collect(options.dlq_topic, true);
  if (error) {
    report.duplicate_copies.push_back(fmt::format("(the copies could not be read: {})", *error));
  }
  for (auto& [lineage, list] : copies) {
    std::sort(list.begin(), list.end());  // the same order from run to run
    for (auto& line : list) report.duplicate_copies.push_back(std::move(line));
  }
  return report;
}

}  // namespace exactly::verify
