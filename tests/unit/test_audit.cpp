// The exactly-once audit's bookkeeping, without Kafka: lineage text, and every kind of finding.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/lineage.h"
#include "verify/audit.h"

using exactly::verify::aborted_attempts_in;
using exactly::verify::Audit;
using exactly::verify::format_lineage;
using exactly::verify::Lineage;
using exactly::verify::parse_lineage;
using exactly::verify::Report;

namespace {

constexpr std::string_view topic = "payments";

void output_of(Audit& audit, std::int32_t output_partition, std::int32_t partition,
               std::int64_t offset) {
  const std::string text = format_lineage(topic, partition, offset);
  audit.add_output(output_partition, std::string_view{text});
}

bool has_example(const Report& report, std::string_view text) {
  for (const auto& example : report.examples) {
    if (example == text) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("lineage round trip") {
  const std::string long_topic(249, 'x');
  const struct {
    std::string topic;
    std::int32_t partition;
    std::int64_t offset;
  } cases[] = {
      {"payments", 0, 0},
      {"payments", 2, 1234},
      {"a.b_c-D9", 17, 5},
      {"_internal", std::numeric_limits<std::int32_t>::max(),
       std::numeric_limits<std::int64_t>::max()},
      {long_topic, 1, 1'000'000'000'000},
  };
  for (const auto& c : cases) {
    const std::string text = format_lineage(c.topic, c.partition, c.offset);
    CAPTURE(text);
    const auto parsed = parse_lineage(text);
    REQUIRE(parsed);
    CHECK(parsed->topic == c.topic);
    CHECK(parsed->partition == c.partition);
    CHECK(parsed->offset == c.offset);
  }
  CHECK(format_lineage("payments", 2, 1234) == "payments/2/1234");
  CHECK(parse_lineage("my.topic-v2_x/3/99") == Lineage{"my.topic-v2_x", 3, 99, ""});
  // With the attempt that wrote it: everything after the third '/'.
  CHECK(parse_lineage("my.topic-v2_x/3/99/1f2e3d4c-812") ==
        Lineage{"my.topic-v2_x", 3, 99, "1f2e3d4c-812"});
  CHECK(parse_lineage("payments/0/7/x/y") == Lineage{"payments", 0, 7, "x/y"});
}

TEST_CASE("the engine writes what the audit reads") {
  CHECK(exactly::engine::lineage_header == exactly::verify::lineage_header);
  std::string text = "stale content";
  exactly::engine::format_lineage_into(text, "payments.v1", 7, 123456789012, "0badc0de-12");
  CHECK(text == format_lineage("payments.v1", 7, 123456789012) + "/0badc0de-12");
  CHECK(parse_lineage(text) == Lineage{"payments.v1", 7, 123456789012, "0badc0de-12"});
}

TEST_CASE("lineage garbage is rejected") {
  const std::string too_long = std::string(250, 'x') + "/1/2";
  const char* const rejects[] = {
      "",
      "payments",
      "payments/1",
      "payments/1/",
      "payments//2",
      "/1/2",
      "//",
      "payments/1/2/",
      "pay/ments/1/2",          // '/' is not a topic character
      "pay ments/1/2",
      "paymënts/1/2",
      "payments/-1/2",          // negative
      "payments/1/-2",
      "payments/+1/2",
      "payments/01/2",          // not canonical
      "payments/1/00",
      "payments/2147483648/1",  // int32 overflow
      "payments/1/9223372036854775808",  // int64 overflow
      "payments/1/99999999999999999999999",
      "payments/1/2x",
      "payments/1/ 2",
      "payments/1/2 ",
      "payments/0x1/2",
      "payments/1/2x/a-1",      // a bad offset before an attempt
      "payments/1//a-1",
      "payments//2/a-1",
      "/1/2/a-1",
  };
  for (const char* text : rejects) {
    CAPTURE(text);
    CHECK_FALSE(parse_lineage(text));
  }
  CHECK_FALSE(parse_lineage(too_long));
  CHECK_FALSE(parse_lineage(std::string_view{"payments/1/2\0", 13}));
}

TEST_CASE("a clean run") {
  Audit audit{std::string{topic}};
  for (std::int32_t p = 0; p < 3; ++p) {
    for (std::int64_t o = 0; o < 100; ++o) audit.add_input(p, o);
  }
  // Each input partition goes to one output partition; partitions 0 and 2 share one.
  for (std::int64_t o = 0; o < 100; ++o) {
    output_of(audit, 0, 0, o);
    output_of(audit, 1, 1, o);
    output_of(audit, 0, 2, o);
  }
  const Report report = audit.finish();
  CHECK(report.ok());
  CHECK(report.inputs == 300);
  CHECK(report.outputs == 300);
  CHECK(report.examples.empty());
  CHECK(report.summary() ==
        "inputs=300 outputs=300 dead_letters=0 missing=0 duplicated=0 order_violations=0 no_lineage=0 "
        "unknown_source=0 aborted_reads=0 lineage_errors=0");
}

TEST_CASE("an output written by an aborted attempt is an aborted read") {
  Audit audit{std::string{topic}};
  audit.add_aborted_attempt("0badc0de-7");
  for (std::int64_t o = 0; o < 4; ++o) audit.add_input(0, o);
  for (std::int64_t o = 0; o < 3; ++o) audit.add_input(1, o);
  const auto lineage = [](std::int64_t o) { return format_lineage(topic, 0, o); };
  audit.add_output(0, lineage(0), "0badc0de-6");
  audit.add_output(0, lineage(1), "0badc0de-7");  // aborted
  audit.add_output(0, lineage(2), std::nullopt);  // no attempt header: nothing to judge
  audit.add_output(0, lineage(3), "0badc0de-8");
  audit.add_dead_letter(lineage(1), "0badc0de-7");  // aborted, and a second reflection of 1
  // The attempt in the lineage, as the engine writes it; an attempt header, as earlier versions
  // wrote it, is what counts when there is one.
  audit.add_output(1, format_lineage(topic, 1, 0) + "/0badc0de-7");  // aborted
  audit.add_output(1, format_lineage(topic, 1, 1) + "/0badc0de-9");
  audit.add_output(1, format_lineage(topic, 1, 2) + "/0badc0de-7", "0badc0de-9");
  const Report report = audit.finish();
  CHECK(report.aborted_reads == 3);
  CHECK(report.duplicated == 1);
  CHECK(report.missing == 0);
  CHECK(report.no_lineage == 0);
  CHECK_FALSE(report.ok());
  REQUIRE_FALSE(report.examples.empty());
  CHECK(std::count_if(report.examples.begin(), report.examples.end(), [](const std::string& e) {
          return e.starts_with("aborted read: attempt 0badc0de-7 (payments/0/1)");
        }) == 2);
  CHECK(has_example(report,
                    "aborted read: attempt 0badc0de-7 (payments/1/0/0badc0de-7) in output partition 1"));
}

TEST_CASE("aborted attempt ids are found in a service log") {
  const std::string log =
      "2026-12-03T07:00:00.000+00:00 info g.in.0: aborted attempt 1a2b3c4d-17, offsets [5, 9) "
      "(commit failed)\n"
      "2026-12-03T07:00:01.000+00:00 info g.in.1: aborted attempt ffffffff-3, offsets [0, 2) "
      "(watchdog)\n"
      "2026-12-03T07:00:02.000+00:00 info g.in.1: committed offsets [0, 2)\n"
      "aborted attempt \n";
  CHECK(aborted_attempts_in(log) == std::vector<std::string>{"1a2b3c4d-17", "ffffffff-3"});
  CHECK(aborted_attempts_in("").empty());
}

TEST_CASE("an empty run is clean") {
  const Report report = Audit{"payments"}.finish();
  CHECK(report.ok());
  CHECK(report.inputs == 0);
  CHECK(report.outputs == 0);
}

TEST_CASE("missing inputs") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 0; o < 10; ++o) audit.add_input(2, o);
  for (std::int64_t o = 0; o < 10; ++o) {
    if (o != 4 && o != 7) output_of(audit, 0, 2, o);
  }
  const Report report = audit.finish();
  CHECK_FALSE(report.ok());
  CHECK(report.missing == 2);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  CHECK(report.examples ==
        std::vector<std::string>{"missing payments/2/4", "missing payments/2/7"});
  CHECK(report.summary() ==
        "inputs=10 outputs=8 dead_letters=0 missing=2 duplicated=0 order_violations=0 no_lineage=0 "
        "unknown_source=0 aborted_reads=0 lineage_errors=0");
}

TEST_CASE("duplicated inputs") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 0; o < 20; ++o) audit.add_input(0, o);
  for (std::int64_t o = 0; o < 20; ++o) output_of(audit, 0, 0, o);
  output_of(audit, 0, 0, 17);  // 17 twice
  output_of(audit, 1, 0, 3);   // 3 three times, in two output partitions
  output_of(audit, 1, 0, 3);
  const Report report = audit.finish();
  CHECK_FALSE(report.ok());
  CHECK(report.duplicated == 3);
  CHECK(report.missing == 0);
  CHECK(report.order_violations == 0);  // a duplicate is counted only as a duplicate
  CHECK(report.outputs == 23);
  CHECK(has_example(report, "duplicated payments/0/17 (2 outputs)"));
  CHECK(has_example(report, "duplicated payments/0/3 (3 outputs)"));
  // What audit_topics reads again to show where each copy is.
  const auto twice = audit.duplicated_inputs(Report::max_examples);
  REQUIRE(twice.size() == 2);
  CHECK(twice[0] == std::pair<std::int32_t, std::int64_t>{0, 3});
  CHECK(twice[1] == std::pair<std::int32_t, std::int64_t>{0, 17});
  CHECK(audit.duplicated_inputs(1).size() == 1);
}

TEST_CASE("many outputs of one input are counted exactly") {
  Audit audit{std::string{topic}};
  audit.add_input(0, 5);
  for (int i = 0; i < 300; ++i) output_of(audit, 0, 0, 5);
  const Report report = audit.finish();
  CHECK(report.duplicated == 299);
  CHECK(report.outputs == 300);
  CHECK(has_example(report, "duplicated payments/0/5 (300 outputs)"));
}

TEST_CASE("order violations") {
  SUBCASE("a later input's output before an earlier one's") {
    Audit audit{std::string{topic}};
    for (std::int64_t o = 0; o < 5; ++o) audit.add_input(0, o);
    for (const std::int64_t o : {0, 1, 3, 2, 4}) output_of(audit, 0, 0, o);
    const Report report = audit.finish();
    CHECK(report.order_violations == 1);
    CHECK(report.missing == 0);
    CHECK(report.duplicated == 0);
    CHECK_FALSE(report.ok());
    CHECK(report.examples ==
          std::vector<std::string>{"order violation payments/0/2 after payments/0/3 in output "
                                   "partition 0"});
  }
  SUBCASE("a replayed range is duplicates, not order violations") {
    Audit audit{std::string{topic}};
    for (std::int64_t o = 0; o < 6; ++o) audit.add_input(0, o);
    for (const std::int64_t o : {0, 1, 2, 3, 1, 2, 3, 4, 5}) output_of(audit, 0, 0, o);
    const Report report = audit.finish();
    CHECK(report.duplicated == 3);
    CHECK(report.order_violations == 0);
  }
  SUBCASE("a duplicate does not hide a later reordering") {
    Audit audit{std::string{topic}};
    for (std::int64_t o = 0; o < 4; ++o) audit.add_input(0, o);
    // 2 is first seen after 3: out of order, although the duplicate of 1 came in between.
    for (const std::int64_t o : {0, 1, 3, 1, 2}) output_of(audit, 0, 0, o);
    const Report report = audit.finish();
    CHECK(report.duplicated == 1);
    CHECK(report.order_violations == 1);
  }
  SUBCASE("order is per output partition and per source partition") {
    Audit audit{std::string{topic}};
    for (std::int32_t p = 0; p < 2; ++p) {
      for (std::int64_t o = 0; o < 4; ++o) audit.add_input(p, o);
    }
    // Source 0 split over two output partitions, each in order; interleaved with source 1.
    output_of(audit, 1, 0, 2);
    output_of(audit, 0, 1, 3);
    output_of(audit, 0, 0, 0);
    output_of(audit, 0, 1, 0);  // out of order within (output 0, source 1)
    output_of(audit, 0, 0, 1);
    output_of(audit, 1, 0, 3);
    output_of(audit, 1, 1, 1);
    output_of(audit, 1, 1, 2);
    const Report report = audit.finish();
    CHECK(report.order_violations == 1);
    CHECK(report.missing == 0);
    CHECK(report.duplicated == 0);
  }
}

TEST_CASE("outputs without lineage") {
  Audit audit{std::string{topic}};
  audit.add_input(0, 0);
  audit.add_input(0, 1);
  output_of(audit, 0, 0, 0);
  audit.add_output(3, std::nullopt);
  audit.add_output(3, std::string_view{"not a lineage"});
  const Report report = audit.finish();
  CHECK_FALSE(report.ok());
  CHECK(report.no_lineage == 2);
  CHECK(report.outputs == 3);
  CHECK(report.missing == 1);  // the input those outputs might have come from stays unproven
  CHECK(has_example(report, "no lineage in output partition 3"));
  CHECK(has_example(report, "unparsable lineage 'not a lineage' in output partition 3"));
}

TEST_CASE("outputs of an unknown source") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 0; o < 10; ++o) audit.add_input(0, o);
  for (std::int64_t o = 0; o < 10; ++o) output_of(audit, 0, 0, o);
  audit.add_output(0, std::string_view{"refunds/0/3"});  // another topic
  output_of(audit, 0, 0, 10);                             // past the last input
  output_of(audit, 0, 0, 1'000'000'000'000);              // far past it
  output_of(audit, 0, 5, 0);                              // a partition with no inputs
  const Report report = audit.finish();
  CHECK_FALSE(report.ok());
  CHECK(report.unknown_source == 4);
  CHECK(report.missing == 0);
  CHECK(report.duplicated == 0);
  CHECK(report.order_violations == 0);
  CHECK(has_example(report, "unknown source refunds/0/3 in output partition 0"));
  CHECK(has_example(report, "unknown source payments/5/0 in output partition 0"));
}

TEST_CASE("offsets of transaction markers are not inputs") {
  Audit audit{std::string{topic}};
  // Three transactions of three records, each followed by its commit marker.
  std::vector<std::int64_t> records;
  for (std::int64_t start = 0; start < 12; start += 4) {
    for (std::int64_t o = start; o < start + 3; ++o) records.push_back(o);
  }
  // An aborted transaction of 10 000 records and its marker, then one more committed record.
  records.push_back(12 + 10'001);
  for (const auto o : records) audit.add_input(1, o);
  for (const auto o : records) output_of(audit, 0, 1, o);
  Report report = audit.finish();
  CHECK(report.ok());
  CHECK(report.inputs == 10);

  output_of(audit, 0, 1, 3);     // a commit marker's offset
  output_of(audit, 0, 1, 5000);  // inside the aborted transaction
  report = audit.finish();
  CHECK(report.unknown_source == 2);
  CHECK(report.missing == 0);
}

TEST_CASE("large and far apart offsets stay small") {
  // Dense storage from the first offset seen: a partition at 10^12 costs what one at 0 costs,
  // and a huge gap starts a new run instead of 10^12 bytes. (ASan would fail such an allocation.)
  Audit audit{std::string{topic}};
  constexpr std::int64_t base = 1'000'000'000'000;
  for (std::int64_t o = base; o < base + 1000; ++o) audit.add_input(0, o);
  audit.add_input(1, 0);
  audit.add_input(1, base);
  audit.add_input(1, std::numeric_limits<std::int64_t>::max() - 1);
  for (std::int64_t o = base; o < base + 1000; ++o) output_of(audit, 0, 0, o);
  output_of(audit, 1, 1, 0);
  output_of(audit, 1, 1, base);
  output_of(audit, 1, 1, std::numeric_limits<std::int64_t>::max() - 1);
  Report report = audit.finish();
  CHECK(report.ok());
  CHECK(report.inputs == 1003);

  output_of(audit, 1, 1, base / 2);  // between runs
  output_of(audit, 1, 0, base - 1);  // just before the first input
  report = audit.finish();
  CHECK(report.unknown_source == 2);
}

TEST_CASE("inputs in any order, each counted once") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 100; o < 110; ++o) audit.add_input(0, o);
  for (std::int64_t o = 0; o < 10; ++o) audit.add_input(0, o);    // a run before the first
  for (std::int64_t o = 10; o < 20; ++o) audit.add_input(0, o);   // extends it
  audit.add_input(0, 5);                                           // again
  audit.add_input(0, 105);
  audit.add_input(-1, 0);                                          // not a record: ignored
  audit.add_input(0, -3);
  for (std::int64_t o = 0; o < 20; ++o) output_of(audit, 0, 0, o);
  for (std::int64_t o = 100; o < 110; ++o) output_of(audit, 0, 0, o);
  const Report report = audit.finish();
  CHECK(report.inputs == 30);
  CHECK(report.ok());
}

TEST_CASE("examples are capped and shared between kinds") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 0; o < 100; ++o) audit.add_input(0, o);
  for (std::int64_t o = 50; o < 100; ++o) {
    output_of(audit, 0, 0, o);
    output_of(audit, 0, 0, o);
  }
  for (int i = 0; i < 30; ++i) audit.add_output(1, std::nullopt);
  const Report report = audit.finish();
  CHECK(report.missing == 50);
  CHECK(report.duplicated == 50);
  CHECK(report.no_lineage == 30);
  REQUIRE(report.examples.size() == Report::max_examples);
  CHECK(has_example(report, "missing payments/0/0"));
  CHECK(has_example(report, "duplicated payments/0/50 (2 outputs)"));
  CHECK(has_example(report, "no lineage in output partition 1"));
}

TEST_CASE("Report::ok needs every count of a finding at zero") {
  Report report;
  report.inputs = 5;
  report.outputs = 5;
  CHECK(report.ok());
  for (auto member : {&Report::missing, &Report::duplicated, &Report::order_violations,
                      &Report::no_lineage, &Report::unknown_source}) {
    Report bad = report;
    bad.*member = 1;
    CHECK_FALSE(bad.ok());
  }
}

TEST_CASE("dead letters reflect their inputs like outputs, and both at once is a duplicate") {
  Audit audit{std::string{topic}};
  for (std::int64_t o = 0; o < 10; ++o) audit.add_input(0, o);
  for (std::int64_t o = 0; o < 10; ++o) {
    if (o == 3 || o == 7) continue;
    output_of(audit, 0, 0, o);
  }
  const std::string three = format_lineage(topic, 0, 3);
  const std::string seven = format_lineage(topic, 0, 7);
  audit.add_dead_letter(seven);  // order is not judged among dead letters
  audit.add_dead_letter(three);
  Report report = audit.finish();
  CHECK(report.ok());
  CHECK(report.outputs == 8);
  CHECK(report.dead_letters == 2);
  CHECK(report.missing == 0);
  CHECK(report.order_violations == 0);

  audit.add_dead_letter(format_lineage(topic, 0, 5));  // 5 has an output already
  audit.add_dead_letter(std::nullopt);
  report = audit.finish();
  CHECK_FALSE(report.ok());
  CHECK(report.duplicated == 1);
  CHECK(report.no_lineage == 1);
  CHECK(report.dead_letters == 4);
}
