// `exactly verify`, the command: its verdict and exit code on a pipeline's real output, and on an
// output written by hand with one of each violation it must find.
#include <signal.h>

#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "engine/lineage.h"
#include "harness.h"
#include "verify/audit.h"

using namespace std::chrono_literals;
using namespace exactly;

namespace {

enum class Form { current, older };

// The output record of input `offset` of partition 0 of `input`, written by `attempt`: with the
// attempt in the lineage header as the engine writes it, or in a header of its own as earlier
// versions did (exactly verify reads both).
void output_of(const std::string& output, const std::string& input, std::int64_t offset,
               const std::string& attempt, Form form = Form::current) {
  if (form == Form::current) {
    test::produce_raw(output, 0, fmt::format("k{}", offset), fmt::format("v{}", offset),
                      {{std::string{engine::lineage_header},
                        fmt::format("{}/0/{}/{}", input, offset, attempt)}});
  } else {
    test::produce_raw(output, 0, fmt::format("k{}", offset), fmt::format("v{}", offset),
                      {{std::string{engine::lineage_header}, fmt::format("{}/0/{}", input, offset)},
                       {std::string{verify::attempt_header}, attempt}});
  }
}

}  // namespace

TEST_CASE("exactly verify passes the output of a pipeline (exit 0)") {
  const auto dir = test::temp_dir("verify-ok");
  const std::string input = test::unique_name("in");
  const std::string output = test::unique_name("out");
  test::create_topic(input, 3);
  test::create_topic(output, 3);
  constexpr int records = 3000;
  test::produce_payments(input, 0, records);
  const auto config = test::write_config(dir, input, output, test::unique_name("group"));
  test::Service service(config, dir / "service.log");
  service.start();
  INFO(service.log_text());
  const auto progress = test::wait_for_outputs(input, output, records, 120s);
  REQUIRE(progress.missing == 0);
  service.signal(SIGTERM);
  REQUIRE(service.wait(60s) == 0);

  test::Service verify(config, dir / "verify.log");
  const int code = verify.run_to_end({"verify", "--bootstrap-servers", test::bootstrap(), "--input",
                                      input, "--output", output, "--aborted-log",
                                      (dir / "service.log").string()},
                                     120s);
  INFO(verify.log_text());
  CHECK(code == 0);
  CHECK(verify.log_text().find(fmt::format("inputs={} outputs={} dead_letters=0 missing=0 "
                                           "duplicated=0 order_violations=0 no_lineage=0 "
                                           "unknown_source=0 aborted_reads=0",
                                           records, records)) != std::string::npos);
  CHECK(verify.log_text().find("exactly-once: OK") != std::string::npos);
}

TEST_CASE("exactly verify finds each violation in an output written by hand (exit 4)") {
  const auto dir = test::temp_dir("verify-broken");
  const std::string input = test::unique_name("in");
  const std::string output = test::unique_name("out");
  const std::string dlq = test::unique_name("dlq");
  test::create_topic(input, 1);
  test::create_topic(output, 1);
  test::create_topic(dlq, 1);
  for (int i = 0; i < 7; ++i) test::produce_raw(input, 0, fmt::format("k{}", i), fmt::format("v{}", i));

  // Input 0 twice (duplicated, once in each form); 2 before 1 (an order violation); 3 never
  // (missing); 4 and 6 by attempts the service logged as aborted (aborted reads, one in each
  // form); 5 a dead letter. Then an output without lineage, one from a topic that is not the
  // input, and one whose lineage ends in an empty attempt (unparsable).
  output_of(output, input, 0, "a-1", Form::older);
  output_of(output, input, 0, "a-2");
  output_of(output, input, 2, "a-2");
  output_of(output, input, 1, "a-3");
  output_of(output, input, 4, "b-7");
  output_of(output, input, 6, "c-9", Form::older);
  test::produce_raw(output, 0, "k", "no lineage");
  test::produce_raw(output, 0, "k", "elsewhere",
                    {{std::string{engine::lineage_header}, "another-topic/0/1/a-5"}});
  test::produce_raw(output, 0, "k", "empty attempt",
                    {{std::string{engine::lineage_header}, fmt::format("{}/0/6/", input)}});
  test::produce_raw(dlq, 0, "k5", "v5",
                    {{std::string{engine::lineage_header}, fmt::format("{}/0/5/a-4", input)}});
  const auto aborted_log = dir / "service.log";
  std::ofstream(aborted_log) << "[info] x.in.0: aborted attempt b-7, offsets [4, 5) (test)\n"
                             << "[info] x.in.0: aborted attempt c-9, offsets [6, 7) (test)\n";

  test::Service verify(dir / "none.toml", dir / "verify.log");
  const int code = verify.run_to_end({"verify", "--bootstrap-servers", test::bootstrap(), "--input",
                                      input, "--output", output, "--dlq", dlq, "--aborted-log",
                                      aborted_log.string()},
                                     120s);
  const std::string text = verify.log_text();
  INFO(text);
  CHECK(code == 4);
  CHECK(text.find("2 aborted attempt(s) from the logs") != std::string::npos);
  CHECK(text.find("inputs=7 outputs=9 dead_letters=1 missing=1 duplicated=1 order_violations=1 "
                  "no_lineage=2 unknown_source=1 aborted_reads=2") != std::string::npos);
  CHECK(text.find(fmt::format("aborted read: attempt b-7 ({}/0/4/b-7)", input)) != std::string::npos);
  CHECK(text.find(fmt::format("aborted read: attempt c-9 ({}/0/6)", input)) != std::string::npos);
  CHECK(text.find(fmt::format("missing {}/0/3", input)) != std::string::npos);
  CHECK(text.find(fmt::format("duplicated {}/0/0 (2 outputs)", input)) != std::string::npos);
  CHECK(text.find(fmt::format("order violation {}/0/1 after {}/0/2", input, input)) != std::string::npos);
  // Where each copy of the duplicated input is, and which attempt wrote it.
  CHECK(text.find(fmt::format("{}/0/0: output partition 0 offset 0 attempt a-1", input)) != std::string::npos);
  CHECK(text.find(fmt::format("{}/0/0: output partition 0 offset 1 attempt a-2", input)) != std::string::npos);
  CHECK(text.find("exactly-once: VIOLATED") != std::string::npos);
}

TEST_CASE("exactly verify without topics is a usage error (exit 2)") {
  const auto dir = test::temp_dir("verify-usage");
  test::Service verify(dir / "none.toml", dir / "verify.log");
  CHECK(verify.run_to_end({"verify", "--bootstrap-servers", test::bootstrap(), "--input", "x"}, 30s) == 2);
  CHECK(verify.log_text().find("needs --config FILE, or --bootstrap-servers, --input and --output") !=
        std::string::npos);
}
