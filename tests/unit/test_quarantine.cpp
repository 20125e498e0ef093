// Unit tests of the crash-loop quarantine's marker format and its start-up decision. The whole
// protocol, with a plugin that segfaults, runs against a real broker in
// tests/integration/test_quarantine.cpp.
#include <doctest/doctest.h>

#include <string>

#include "engine/quarantine.h"

namespace {

using exactly::engine::decide_start;
using exactly::engine::decode;
using exactly::engine::encode;
using exactly::engine::Marker;
using State = exactly::engine::Marker::State;

Marker roundtrip(const Marker& m) {
  std::string error;
  const auto back = decode(encode(m), error);
  INFO(error);
  REQUIRE(back.has_value());
  return *back;
}

std::string decode_error(std::string_view text) {
  std::string error;
  CHECK_FALSE(decode(text, error).has_value());
  return error;
}

constexpr std::int64_t K = 3;
constexpr std::int64_t range = 100;

}  // namespace

TEST_CASE("markers survive encoding, and bad text is refused with a reason") {
  const Marker running{State::running, 42, 2, -1, -1};
  CHECK(encode(running) == "running offset=42 deaths=2");
  CHECK(roundtrip(running) == running);
  const Marker quarantine{State::quarantine, 100, 3, 117, 200};
  CHECK(encode(quarantine) == "quarantine offset=100 deaths=3 suspect=117 until=200");
  CHECK(roundtrip(quarantine) == quarantine);

  std::string error;
  const auto extra = decode("running offset=5 deaths=1 later=7", error);
  REQUIRE(extra.has_value());  // a field a newer version adds is ignored
  CHECK(extra->offset == 5);

  CHECK(decode_error("") == "an empty marker");
  CHECK(decode_error("sleeping offset=1").find("unknown marker state 'sleeping'") == 0);
  CHECK(decode_error("running deaths=1") == "the marker has no offset");
  CHECK(decode_error("running offset=x").find("'offset=x' is not name=integer") == 0);
  CHECK(decode_error("running offset").find("is not name=integer") != std::string::npos);
  CHECK(decode_error("quarantine offset=10 until=5").find("before its start") != std::string::npos);
}

TEST_CASE("a clean stop or a first start counts nothing") {
  const auto d = decide_start(std::nullopt, 50, true, K, range);
  REQUIRE(d.write.has_value());
  CHECK(*d.write == Marker{State::running, 50, 0, -1, -1});
  CHECK_FALSE(d.quarantine);
  CHECK_FALSE(d.convict.has_value());
  CHECK(d.deaths == 0);
}

TEST_CASE("deaths in a row at one offset start a quarantine of the next max_records records") {
  // Owner 1 started at 50 and died there; so did owners 2 and 3.
  std::optional<Marker> marker = Marker{State::running, 50, 0, -1, -1};
  for (std::int64_t death = 1; death < K; ++death) {
    const auto d = decide_start(marker, 50, true, K, range);
    CHECK(d.deaths == death);
    CHECK_FALSE(d.quarantine);
    REQUIRE(d.write.has_value());
    CHECK(*d.write == Marker{State::running, 50, death, -1, -1});
    marker = d.write;
  }
  const auto d = decide_start(marker, 50, true, K, range);
  CHECK(d.deaths == K);
  CHECK(d.quarantine);
  CHECK(d.until == 150);
  CHECK_FALSE(d.convict.has_value());
  REQUIRE(d.write.has_value());
  CHECK(*d.write == Marker{State::quarantine, 50, K, -1, 150});
}

TEST_CASE("progress between deaths starts the count again") {
  const auto d = decide_start(Marker{State::running, 50, 2, -1, -1}, 80, true, K, range);
  CHECK(d.deaths == 1);
  CHECK_FALSE(d.quarantine);
  REQUIRE(d.write.has_value());
  CHECK(*d.write == Marker{State::running, 80, 1, -1, -1});
}

TEST_CASE("a death with no input waiting is not the partition's") {
  const auto d = decide_start(Marker{State::running, 50, 2, -1, -1}, 50, false, K, range);
  CHECK(d.deaths == 0);
  CHECK_FALSE(d.quarantine);
  REQUIRE(d.write.has_value());
  CHECK(*d.write == Marker{State::running, 50, 0, -1, -1});
}

TEST_CASE("a death while a record runs alone convicts that record, and only that one") {
  const Marker running_alone{State::quarantine, 50, 3, 57, 150};
  const auto convicted = decide_start(running_alone, 57, true, K, range);
  REQUIRE(convicted.convict.has_value());
  CHECK(*convicted.convict == 57);
  CHECK(convicted.quarantine);
  CHECK(convicted.until == 150);
  CHECK_FALSE(convicted.write.has_value());  // kept, so a death now convicts 57 again

  // Died after 57 was committed and before 58's marker: nothing is convicted.
  const auto after = decide_start(running_alone, 58, true, K, range);
  CHECK_FALSE(after.convict.has_value());
  CHECK(after.quarantine);
  CHECK(after.until == 150);

  // A clean stop in a quarantine leaves no suspect: the next owner goes on with it.
  const auto paused = decide_start(Marker{State::quarantine, 50, 3, -1, 150}, 57, true, K, range);
  CHECK_FALSE(paused.convict.has_value());
  CHECK(paused.quarantine);
}

TEST_CASE("a quarantine ends at its end, and a reset of the group's offsets ends it too") {
  const auto over = decide_start(Marker{State::quarantine, 50, 3, -1, 150}, 150, true, K, range);
  CHECK_FALSE(over.quarantine);
  REQUIRE(over.write.has_value());
  CHECK(*over.write == Marker{State::running, 150, 0, -1, -1});

  const auto reset = decide_start(Marker{State::quarantine, 50, 3, 60, 150}, 10, true, K, range);
  CHECK_FALSE(reset.quarantine);
  CHECK_FALSE(reset.convict.has_value());
  REQUIRE(reset.write.has_value());
  CHECK(*reset.write == Marker{State::running, 10, 0, -1, -1});
}

TEST_CASE("K = 1 quarantines after the first death") {
  const auto d = decide_start(Marker{State::running, 7, 0, -1, -1}, 7, true, 1, 10);
  CHECK(d.quarantine);
  CHECK(d.until == 17);
}
