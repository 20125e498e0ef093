// The lineage journal (pipeline.lineage_topic): instead of a header on every output record, each
// transaction writes, inside itself, records to the lineage topic that name the input record each
// of its outputs reflects, by the outputs' offsets (known from the delivery reports before the
// commit). Committed together with the outputs and the consumed offsets, or aborted with them, a
// journal record says no more and no less than the headers would: `exactly verify` reads it and
// audits the outputs exactly as it audits lineage headers (DESIGN.md item 9).
//
// A journal record is text, one transaction's (or part of one's) runs:
//
//   exactly.lineage/1 {input topic} {output topic} {attempt}
//   {output partition}@{output offset} {input partition}:{input offset}[,{delta}...]
//   ...
//
// A run is outputs at consecutive offsets of one output partition from one input partition; the
// k-th output reflects the input at the first input offset plus the first k deltas (a delta of 0:
// one input with several outputs). "3@1200 0:500,6,3,0" is 3/1200 <- 0/500, 3/1201 <- 0/506,
// 3/1202 <- 0/509 and 3/1203 <- 0/509. Keys and record order carry no meaning; several pipelines
// may share a lineage topic (each reader keeps the records of its output topic).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace exactly::lineage {

inline constexpr std::string_view journal_magic = "exactly.lineage/1";

// Collects one transaction's (output, input) pairs as the delivery reports come, and writes them as
// journal records. Not thread-safe: one thread at a time (the one serving the producer).
class JournalBuilder {
 public:
  // `run_bytes`: a run's text is at most about this long before the next pair starts a new one,
  // so that records() can keep every record under a size limit.
  explicit JournalBuilder(std::size_t run_bytes = 64 * 1024) : run_bytes_(run_bytes) {}

  // Output `output_offset` of `output_partition` reflects input `input_offset` of
  // `input_partition`. Pairs of one output partition come in output offset order.
  void add(std::int32_t output_partition, std::int64_t output_offset, std::int32_t input_partition,
           std::int64_t input_offset);

  [[nodiscard]] bool empty() const { return pairs_ == 0; }
  [[nodiscard]] std::uint64_t pairs() const { return pairs_; }

  // The journal records of what was added, each at most `max_bytes` long (runs are never split
  // across records; a run is at most run_bytes + 64 long, so max_bytes must exceed that).
  [[nodiscard]] std::vector<std::string> records(std::string_view input_topic,
                                                 std::string_view output_topic,
                                                 std::string_view attempt,
                                                 std::size_t max_bytes) const;

  void clear();

 private:
  struct Run {
    std::int32_t output_partition = 0;
    std::int64_t next_output = 0;  // the offset that would extend it
    std::int32_t input_partition = 0;
    std::int64_t last_input = 0;
    std::string text;
  };
  std::size_t run_bytes_;
  std::vector<Run> runs_;
  std::unordered_map<std::int32_t, std::size_t> open_;  // output partition -> its last run
  std::uint64_t pairs_ = 0;
};

// Where the outputs came from, from every journal record read: the auditor's side.
class LineageIndex {
 public:
  // Keeps the lineage of the outputs of `output_topic`.
  explicit LineageIndex(std::string output_topic) : output_topic_(std::move(output_topic)) {}

  // Adds one journal record (its value); one about another output topic adds nothing. An error
  // naming what is wrong when it cannot be read; nothing of it is added then.
  [[nodiscard]] std::optional<std::string> add(std::string_view value);

  // Sorts what was added; call once, after the last add(). Outputs claimed by two runs are
  // counted in conflicts() (the first few named in conflict_examples()) and keep the first claim.
  void seal();

  // The lineage of output `offset` of `partition` as the header would carry it,
  // "{topic}/{partition}/{offset}/{attempt}", or nullopt when no journal record names it.
  [[nodiscard]] std::optional<std::string> lineage_of(std::int32_t partition,
                                                      std::int64_t offset) const;

  [[nodiscard]] std::uint64_t pairs() const { return inputs_.size(); }
  [[nodiscard]] std::uint64_t conflicts() const { return conflicts_; }
  [[nodiscard]] const std::vector<std::string>& conflict_examples() const { return examples_; }

 private:
  struct Segment {
    std::int64_t first_output = 0;
    std::uint32_t count = 0;
    std::uint32_t source = 0;  // index into sources_: the record's topic and attempt
    std::int32_t input_partition = 0;
    std::size_t first_input = 0;  // index into inputs_
  };
  struct Source {
    std::string topic;
    std::string attempt;
  };
  std::string output_topic_;
  std::unordered_map<std::int32_t, std::vector<Segment>> segments_;
  std::vector<std::int64_t> inputs_;
  std::vector<Source> sources_;
  std::uint64_t conflicts_ = 0;
  std::vector<std::string> examples_;
};

}  // namespace exactly::lineage
