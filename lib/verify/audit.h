// The exactly-once audit: every input record is reflected in the output exactly once, in order
// per partition, proven from the lineage header each output carries (DESIGN.md item 9).
//
// Audit is pure bookkeeping (no Kafka); audit_topics feeds it from both topics, read_committed.
// Memory is one byte per input offset, so tens of millions of records stay cheap.
#pragma once

#include <chrono>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace exactly::verify {

inline constexpr std::string_view lineage_header = "exactly.lineage";
// Where outputs written before the attempt joined the lineage header carry the id of the
// transaction attempt that wrote them; `exactly verify` still reads it.
inline constexpr std::string_view attempt_header = "exactly.attempt";

struct Lineage {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::string_view attempt;  // empty when the lineage names none

  friend bool operator==(const Lineage&, const Lineage&) = default;
};

// Parses "{topic}/{partition}/{offset}/{attempt}" as the engine writes it, or the older
// "{topic}/{partition}/{offset}": a legal Kafka topic name (1-249 of [a-zA-Z0-9._-]), then two
// canonical non-negative decimals (no sign, no leading zero, no overflow), then, if present, a
// non-empty attempt id (the rest of the text). nullopt for anything else. The views are into
// `text`.
[[nodiscard]] std::optional<Lineage> parse_lineage(std::string_view text);

[[nodiscard]] std::string format_lineage(std::string_view topic, std::int32_t partition,
                                         std::int64_t offset);

struct Report {
  std::uint64_t inputs = 0;            // input records read
  std::uint64_t outputs = 0;           // output records read
  std::uint64_t dead_letters = 0;      // dead-letter records read (each reflects its input too)
  std::uint64_t missing = 0;           // inputs with no output
  std::uint64_t duplicated = 0;        // outputs beyond the first of one input
  std::uint64_t order_violations = 0;  // first outputs that came after a later input's
  std::uint64_t no_lineage = 0;        // outputs without a (parsable) lineage header
  std::uint64_t unknown_source = 0;    // outputs whose lineage names no input record
  std::uint64_t aborted_reads = 0;     // outputs or dead letters written by an aborted attempt
  // With a lineage topic: its records that cannot be read, plus outputs two of them name.
  std::uint64_t lineage_errors = 0;
  // Up to max_examples concrete findings, e.g. "missing payments/2/1234".
  std::vector<std::string> examples;
  // When inputs are duplicated (audit_topics only): every copy of up to max_examples of them,
  // where it is and which attempt wrote it, e.g. "payments/2/1234: output partition 3 offset 77
  // attempt 1f2e3d4c-812". Attempts tell a transaction that ran twice from one that wrote twice.
  std::vector<std::string> duplicate_copies;

  static constexpr std::size_t max_examples = 10;

  [[nodiscard]] bool ok() const;
  // "inputs=N outputs=N ... unknown_source=N aborted_reads=N lineage_errors=N"
  [[nodiscard]] std::string summary() const;
};

class Audit {
 public:
  explicit Audit(std::string input_topic);

  // Every input must be added before the first output (as audit_topics does): an output is
  // judged against the inputs known when it is added. Within a partition, increasing offsets are
  // the cheap path; any order works. Adding the same input twice counts it once.
  void add_input(std::int32_t partition, std::int64_t offset);

  // An attempt the service reports it aborted. Must come before the outputs.
  void add_aborted_attempt(std::string id);

  // One output record, in the order read from `output_partition`. `lineage_value`: the lineage
  // header's value, nullopt if it has none. The view is not kept.
  // `attempt`: the older attempt header's value, if any; else the lineage's attempt counts.
  void add_output(std::int32_t output_partition, std::optional<std::string_view> lineage_value,
                  std::optional<std::string_view> attempt = std::nullopt);

  // One dead letter: its input is reflected by it instead of an output. An input with both, or
  // with two dead letters, is duplicated. Order is not judged in the dead-letter topic.
  void add_dead_letter(std::optional<std::string_view> lineage_value,
                       std::optional<std::string_view> attempt = std::nullopt);

  [[nodiscard]] Report finish() const;

  // Up to `max` inputs with more than one output or dead letter, in partition and offset order.
  [[nodiscard]] std::vector<std::pair<std::int32_t, std::int64_t>> duplicated_inputs(
      std::size_t max) const;

 private:
  // A dense run of input offsets [first, first + counts.size()). A count byte is 0 for an offset
  // that is not an input (a transaction marker, an aborted record), else 1 + the outputs seen of
  // that input, saturating at 255 (the excess is kept in Audit::saturated_).
  struct Run {
    std::int64_t first = 0;
    std::vector<std::uint8_t> counts;
  };
  struct InputPartition {
    std::vector<Run> runs;  // sorted by first, disjoint
  };
  enum class Finding : std::size_t {
    missing,
    duplicated,
    order,
    no_lineage,
    unknown_source,
    aborted_read
  };
  static constexpr std::size_t finding_kinds = 6;

  // The count byte of an input record, or null if that offset is not an input.
  [[nodiscard]] std::uint8_t* find_input(std::int32_t partition, std::int64_t offset);
  void note(Finding kind, std::string text);

  std::string input_topic_;
  std::unordered_map<std::int32_t, InputPartition> inputs_;
  std::uint64_t input_count_ = 0;
  std::uint64_t output_count_ = 0;
  std::uint64_t dead_letter_count_ = 0;
  void reflect(bool dead_letter, std::int32_t partition, std::optional<std::string_view> lineage_value,
               std::optional<std::string_view> attempt);
  std::unordered_set<std::string> aborted_attempts_;
  std::uint64_t aborted_reads_ = 0;
  std::uint64_t order_violations_ = 0;
  std::uint64_t no_lineage_ = 0;
  std::uint64_t unknown_source_ = 0;
  // Outputs beyond 254 of one input, by (partition, offset): rare enough for a map.
  std::map<std::pair<std::int32_t, std::int64_t>, std::uint64_t> saturated_;
  // (output partition, source partition) -> source offset of the last first output seen there.
  std::unordered_map<std::uint64_t, std::int64_t> last_source_;
  // Examples found while adding outputs, at most Report::max_examples per kind.
  std::array<std::vector<std::string>, finding_kinds> examples_;
};

struct AuditOptions {
  std::string bootstrap_servers;
  std::string input_topic;
  std::string output_topic;
  std::vector<std::pair<std::string, std::string>> properties;  // extra librdkafka properties
  std::chrono::milliseconds timeout{120000};                     // bounds every read together
  std::string dlq_topic;  // empty: no dead-letter topic
  // The lineage journal's topic (pipeline.lineage_topic; verify/journal.h), read before the
  // outputs: an output it names has that lineage. Empty: outputs carry lineage headers.
  std::string lineage_topic;
  // Attempt ids the service logged as aborted: any of them read back is an aborted read.
  std::vector<std::string> aborted_attempts;
  // Read uncommitted data too. Only for tests that prove the aborted-read check finds some.
  bool read_uncommitted = false;
  // Called now and then while reading: the topic being read and the records read from it.
  std::function<void(std::string_view topic, std::uint64_t records)> progress;
};

// The attempt ids in a service log ("aborted attempt {id}" lines).
[[nodiscard]] std::vector<std::string> aborted_attempts_in(std::string_view log);

// Reads the input topic, then the lineage topic if any, then the output topic, all read_committed up to their ends as of each
// read, and audits them. The string: why a topic could not be read.
[[nodiscard]] std::variant<Report, std::string> audit_topics(const AuditOptions& options);

}  // namespace exactly::verify
