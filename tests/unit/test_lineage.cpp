// The lineage journal (lineage/journal.h): what the producer writes is what the auditor reads back,
// runs break where they must, records stay under their size limit, and bad records add nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "lineage/journal.h"

using exactly::lineage::JournalBuilder;
using exactly::lineage::LineageIndex;

namespace {

struct Pair {
  std::int32_t output_partition;
  std::int64_t output_offset;
  std::int32_t input_partition;
  std::int64_t input_offset;
};

LineageIndex index_of(const std::vector<std::string>& records, const std::string& output) {
  LineageIndex index{output};
  for (const auto& record : records) {
    const auto error = index.add(record);
    INFO(record);
    CHECK_FALSE(error.has_value());
  }
  index.seal();
  return index;
}

}  // namespace

TEST_CASE("a journal names every output's input, in runs") {
  JournalBuilder journal;
  // Output partition 3 from input partition 0, keyed (input offsets jump); a fan-out (offset 509
  // twice); then input partition 1 on the same output partition (instance scope); and output
  // partition 5 interleaved, with a gap in its offsets (another producer wrote in between).
  const std::vector<Pair> pairs{
      {3, 1200, 0, 500}, {5, 7, 0, 501},  {3, 1201, 0, 506}, {3, 1202, 0, 509},
      {3, 1203, 0, 509}, {5, 8, 0, 502},  {3, 1204, 1, 40},  {5, 20, 0, 503},
      {3, 1205, 1, 41},
  };
  for (const auto& p : pairs) journal.add(p.output_partition, p.output_offset, p.input_partition, p.input_offset);
  CHECK(journal.pairs() == pairs.size());
  const auto records = journal.records("payments", "enriched", "0a0b0c0d-7", 1 << 20);
  REQUIRE(records.size() == 1);
  CHECK(records[0] ==
        "exactly.lineage/1 payments enriched 0a0b0c0d-7\n"
        "3@1200 0:500,6,3,0\n"
        "5@7 0:501,1\n"
        "3@1204 1:40,1\n"
        "5@20 0:503");

  const LineageIndex index = index_of(records, "enriched");
  CHECK(index.pairs() == pairs.size());
  CHECK(index.conflicts() == 0);
  for (const auto& p : pairs) {
    CHECK(index.lineage_of(p.output_partition, p.output_offset) ==
          "payments/" + std::to_string(p.input_partition) + "/" + std::to_string(p.input_offset) +
              "/0a0b0c0d-7");
  }
  // Outputs no journal names: another producer's, before, between and after the runs.
  CHECK_FALSE(index.lineage_of(5, 9).has_value());
  CHECK_FALSE(index.lineage_of(3, 1199).has_value());
  CHECK_FALSE(index.lineage_of(3, 1206).has_value());
  CHECK_FALSE(index.lineage_of(4, 1200).has_value());
}

TEST_CASE("a journal larger than a record is split across records at run boundaries") {
  JournalBuilder journal{256};  // runs of about 256 bytes
  std::mt19937 random{42};
  std::vector<Pair> pairs;
  std::int64_t input = 0;
  std::int64_t outputs[4] = {0, 100, 200, 300};
  for (int i = 0; i < 5000; ++i) {
    input += static_cast<std::int64_t>(random() % 7);
    const auto partition = static_cast<std::int32_t>(random() % 4);
    pairs.push_back({partition, outputs[partition]++, 2, input});
  }
  for (const auto& p : pairs) journal.add(p.output_partition, p.output_offset, p.input_partition, p.input_offset);
  const auto records = journal.records("in", "out", "a-1", 4096);
  CHECK(records.size() >= 3);  // about 12 kB of runs
  for (const auto& record : records) {
    CHECK(record.size() <= 4096);
    CHECK(record.rfind("exactly.lineage/1 in out a-1\n", 0) == 0);
  }
  const LineageIndex index = index_of(records, "out");
  CHECK(index.pairs() == pairs.size());
  for (const auto& p : pairs) {
    CHECK(index.lineage_of(p.output_partition, p.output_offset) ==
          "in/2/" + std::to_string(p.input_offset) + "/a-1");
  }

  journal.clear();
  CHECK(journal.empty());
  CHECK(journal.records("in", "out", "a-2", 4096).empty());
}

TEST_CASE("journal records that cannot be read are refused whole") {
  LineageIndex index{"out"};
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "does not begin"},
      {"exactly.lineage/2 in a-1\n0@0 0:0", "does not begin"},
      {"exactly.lineage/1\n0@0 0:0", "does not begin"},
      {"exactly.lineage/1 in\n0@0 0:0", "no input topic, output topic and attempt"},
      {"exactly.lineage/1 in out\n0@0 0:0", "no input topic, output topic and attempt"},
      {"exactly.lineage/1 in out \n0@0 0:0", "no input topic, output topic and attempt"},
      {"exactly.lineage/1 in out a-1\n0@0 0:0\n0@1 0", "line 3"},
      {"exactly.lineage/1 in out a-1\n0@0 0:0,", "line 2 has a bad delta list"},
      {"exactly.lineage/1 in out a-1\n0@0 0:0,-1", "line 2 has a bad delta list"},
      {"exactly.lineage/1 in out a-1\n-1@0 0:0", "line 2"},
      {"exactly.lineage/1 in out a-1\n0@0 0:9223372036854775807,1", "bad delta list"},
      {"exactly.lineage/1 in out a-1\n0@9223372036854775807 0:0", "past the largest offset"},
      {"exactly.lineage/1 in out a-1\n0@0 0:99999999999999999999", "line 2"},
  };
  for (const auto& [text, reason] : bad) {
    INFO(text);
    const auto error = index.add(text);
    REQUIRE(error.has_value());
    CHECK(error->find(reason) != std::string::npos);
  }
  // A good first line of a bad record added nothing.
  index.seal();
  CHECK(index.pairs() == 0);
  CHECK_FALSE(index.lineage_of(0, 0).has_value());
}

TEST_CASE("an output two journal records name is a conflict, and the first claim stands") {
  LineageIndex index{"out"};
  CHECK_FALSE(index.add("exactly.lineage/1 in out a-1\n0@10 0:100,1,1").has_value());
  CHECK_FALSE(index.add("exactly.lineage/1 in out b-2\n0@11 1:7,1,1\n0@14 1:10").has_value());
  index.seal();
  CHECK(index.conflicts() == 2);  // outputs 11 and 12
  REQUIRE(index.conflict_examples().size() == 1);
  CHECK(index.conflict_examples()[0] == "output partition 0 offsets [11, 13) named by attempts a-1 and b-2");
  CHECK(index.lineage_of(0, 11) == "in/0/101/a-1");
  CHECK(index.lineage_of(0, 12) == "in/0/102/a-1");
  CHECK(index.lineage_of(0, 13) == "in/1/9/b-2");
  CHECK(index.lineage_of(0, 14) == "in/1/10/b-2");
}

TEST_CASE("a shared lineage topic: each reader keeps the records of its own output topic") {
  JournalBuilder a;
  a.add(0, 10, 1, 100);
  JournalBuilder b;
  b.add(0, 10, 1, 555);  // the same output offset, in another output topic
  LineageIndex index{"out-a"};
  for (const auto& record : a.records("in", "out-a", "a-1", 4096)) CHECK_FALSE(index.add(record).has_value());
  for (const auto& record : b.records("in", "out-b", "b-1", 4096)) CHECK_FALSE(index.add(record).has_value());
  index.seal();
  CHECK(index.conflicts() == 0);
  CHECK(index.pairs() == 1);
  CHECK(index.lineage_of(0, 10) == "in/1/100/a-1");
}
