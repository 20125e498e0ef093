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
constexpr std::int64_t self = 77;   // the process deciding
constexpr std::int64_t other = 42;  // the process that wrote the marker it finds

// The marker of an owner that began processing at `offset`, after `deaths` deaths there.
Marker began(std::int64_t offset, std::int64_t deaths, std::int64_t owner = other) {
  return Marker{
      .state = State::running, .offset = offset, .deaths = deaths, .started = true, .owner = owner};
}

Marker written(std::int64_t offset, std::int64_t deaths, std::int64_t owner = self) {
  return Marker{.state = State::running, .offset = offset, .deaths = deaths, .owner = owner};
}

Marker quarantine(std::int64_t offset, std::int64_t deaths, std::int64_t suspect,
                  std::int64_t until, std::int64_t tries, std::int64_t span = 1,
                  std::int64_t owner = other) {
  return Marker{.state = State::quarantine,
                .offset = offset,
                .deaths = deaths,
                .suspect = suspect,
                .until = until,
                .tries = tries,
                .span = span,
                .owner = owner};
}

}  // namespace

TEST_CASE("markers survive encoding, and bad text is refused with a reason") {
  const Marker running = began(42, 2);
  CHECK(encode(running) == "running offset=42 deaths=2 started=1 owner=42");
  CHECK(roundtrip(running) == running);
  CHECK(encode(written(7, 0)) == "running offset=7 deaths=0 started=0 owner=77");
  CHECK(roundtrip(written(7, 0)) == written(7, 0));
  const Marker q = quarantine(100, 3, 117, 200, 1);
  CHECK(encode(q) ==
        "quarantine offset=100 deaths=3 suspect=117 span=1 until=200 tries=1 grow=0 alone=0 "
        "owner=42");
  CHECK(roundtrip(q) == q);
  Marker growing = quarantine(100, 3, 131, 200, 1, 16);
  growing.grow = true;
  growing.alone = 5;
  CHECK(roundtrip(growing) == growing);

  // A marker of an earlier version: its transaction held one record; no owner. The quarantine
  // grows from here.
  std::string old_error;
  const auto old = decode("quarantine offset=100 deaths=3 suspect=117 until=200 tries=1", old_error);
  REQUIRE(old.has_value());
  CHECK(old->span == 1);
  CHECK(old->grow);
  CHECK(old->alone == 0);
  CHECK(old->owner == 0);

  std::string error;
  const auto extra = decode("running offset=5 deaths=1 later=7", error);
  REQUIRE(extra.has_value());  // a field a newer version adds is ignored
  CHECK(extra->offset == 5);
  CHECK(extra->started);  // without the field, the death counts

  CHECK(decode_error("") == "an empty marker");
  CHECK(decode_error("sleeping offset=1").find("unknown marker state 'sleeping'") == 0);
  CHECK(decode_error("running deaths=1") == "the marker has no offset");
  CHECK(decode_error("running offset=x").find("'offset=x' is not name=integer") == 0);
  CHECK(decode_error("running offset").find("is not name=integer") != std::string::npos);
  CHECK(decode_error("quarantine offset=10 until=5").find("before its start") != std::string::npos);
  CHECK(decode_error("quarantine offset=10 until=50 suspect=10 span=0") == "a span of 0 records");
  CHECK(decode_error("quarantine offset=10 until=50 alone=-1") == "-1 records to run alone");
}

TEST_CASE("a clean stop or a first start counts nothing") {
  const auto d = decide_start(std::nullopt, 50, true, K, range, self);
  REQUIRE(d.write.has_value());
  CHECK(*d.write == written(50, 0));
  CHECK_FALSE(d.quarantine);
  CHECK_FALSE(d.convict.has_value());
  CHECK(d.deaths == 0);
}

TEST_CASE("deaths in a row at one offset start a quarantine of the next max_records records") {
  // Owner 1 began at 50 and died there; so did owners 2 and 3.
  for (std::int64_t death = 1; death < K; ++death) {
    const auto d = decide_start(began(50, death - 1), 50, true, K, range, self);
    CHECK(d.deaths == death);
    CHECK_FALSE(d.quarantine);
    REQUIRE(d.write.has_value());
    CHECK(*d.write == written(50, death));
  }
  const auto d = decide_start(began(50, K - 1), 50, true, K, range, self);
  CHECK(d.deaths == K);
  CHECK(d.quarantine);
  CHECK(d.until == 150);
  CHECK_FALSE(d.convict.has_value());
  CHECK(d.grow);  // from transactions of 1 record, doubling
  REQUIRE(d.write.has_value());
  Marker expected = quarantine(50, K, -1, 150, 0, 1, self);
  expected.grow = true;
  CHECK(*d.write == expected);
}

TEST_CASE("progress between deaths starts the count again") {
  const auto d = decide_start(began(50, 2), 80, true, K, range, self);
  CHECK(d.deaths == 1);
  CHECK_FALSE(d.quarantine);
  REQUIRE(d.write.has_value());
  CHECK(*d.write == written(80, 1));
}

TEST_CASE("a death before the owner began, or with no input waiting, is not counted") {
  const auto starting = decide_start(written(50, 2), 50, true, K, range, self);
  CHECK(starting.deaths == 2);
  CHECK_FALSE(starting.quarantine);
  REQUIRE(starting.write.has_value());
  CHECK(*starting.write == written(50, 2));

  const auto idle = decide_start(began(50, 2), 50, false, K, range, self);
  CHECK(idle.deaths == 2);
  CHECK_FALSE(idle.quarantine);
  REQUIRE(idle.write.has_value());
  CHECK(*idle.write == written(50, 2));
}

TEST_CASE("two deaths while a record runs alone convict that record, and only that one") {
  // The first death on 57: it runs alone once more, and the next marker names it a second time.
  const auto again = decide_start(quarantine(50, 3, 57, 150, 1), 57, true, K, range, self);
  CHECK_FALSE(again.convict.has_value());
  CHECK(again.quarantine);
  CHECK(again.until == 150);
  CHECK(again.suspect == 57);
  CHECK(again.tries == 1);
  CHECK_FALSE(again.write.has_value());

  const auto convicted = decide_start(quarantine(50, 4, 57, 150, 2), 57, true, K, range, self);
  REQUIRE(convicted.convict.has_value());
  CHECK(*convicted.convict == 57);
  CHECK(convicted.quarantine);
  CHECK(convicted.until == 150);
  CHECK_FALSE(convicted.write.has_value());  // kept, so a death now convicts 57 again

  // Died after 57 was committed and before 58's marker: nothing is convicted.
  const auto after = decide_start(quarantine(50, 3, 57, 150, 2), 58, true, K, range, self);
  CHECK_FALSE(after.convict.has_value());
  CHECK(after.suspect == -1);
  CHECK(after.quarantine);
  CHECK(after.until == 150);

  // A clean stop in a quarantine leaves no suspect: the next owner goes on with it.
  const auto paused = decide_start(quarantine(50, 3, -1, 150, 0), 57, true, K, range, self);
  CHECK_FALSE(paused.convict.has_value());
  CHECK(paused.quarantine);
}

TEST_CASE("a quarantine ends at its end, and a reset of the group's offsets ends it too") {
  const auto over = decide_start(quarantine(50, 3, -1, 150, 0), 150, true, K, range, self);
  CHECK_FALSE(over.quarantine);
  REQUIRE(over.write.has_value());
  CHECK(*over.write == written(150, 0));

  const auto reset = decide_start(quarantine(50, 3, 60, 150, 2), 10, true, K, range, self);
  CHECK_FALSE(reset.quarantine);
  CHECK_FALSE(reset.convict.has_value());
  REQUIRE(reset.write.has_value());
  CHECK(*reset.write == written(10, 0));
}

TEST_CASE("K = 1 quarantines after the first death") {
  const auto d = decide_start(began(7, 0), 7, true, 1, 10, self);
  CHECK(d.quarantine);
  CHECK(d.until == 17);
}

TEST_CASE("an owner that finds its own marker lost the partition alive: no death is counted") {
  // This process began at 50 after one death there, lost the partition, and got it back.
  const auto back = decide_start(began(50, 1, self), 50, true, K, range, self);
  CHECK(back.own);
  CHECK(back.deaths == 1);
  CHECK_FALSE(back.quarantine);
  REQUIRE(back.write.has_value());
  CHECK(*back.write == written(50, 1));

  // Even at the last death before a quarantine.
  const auto edge = decide_start(began(50, K - 1, self), 50, true, K, range, self);
  CHECK(edge.own);
  CHECK_FALSE(edge.quarantine);
  CHECK(edge.deaths == K - 1);

  // The same marker from another process is a death; an unknown owner (0) is never this one.
  CHECK(decide_start(began(50, K - 1), 50, true, K, range, self).quarantine);
  CHECK(decide_start(began(50, K - 1, 0), 50, true, K, range, 0).quarantine);

  // In a quarantine, its own run of a suspect does not count as a try.
  const auto alone = decide_start(quarantine(50, 4, 57, 150, 2, 1, self), 57, true, K, range, self);
  CHECK(alone.own);
  CHECK(alone.quarantine);
  CHECK_FALSE(alone.convict.has_value());
  CHECK(alone.suspect == 57);
  CHECK(alone.tries == 1);
  CHECK(alone.deaths == 4);
  const auto first = decide_start(quarantine(50, 4, 57, 150, 1, 1, self), 57, true, K, range, self);
  CHECK_FALSE(first.convict.has_value());
  CHECK(first.tries == 0);
  const auto chunk = decide_start(quarantine(50, 4, 57, 150, 1, 8, self), 57, true, K, range, self);
  CHECK(chunk.quarantine);
  CHECK_FALSE(chunk.narrowed);
  CHECK(chunk.until == 150);
}

TEST_CASE("a death in a quarantine transaction of several records runs those records alone") {
  Marker m = quarantine(50, 3, 65, 150, 1, 16);
  m.grow = true;
  const auto d = decide_start(m, 65, true, K, range, self);
  CHECK(d.quarantine);
  CHECK(d.narrowed);
  CHECK(d.deaths == 4);
  CHECK(d.alone == 16);  // the (at most) 16 records from 65, one per transaction
  CHECK(d.until == 150);  // then the transactions grow again, to the quarantine's end
  CHECK(d.grow);
  CHECK(d.suspect == -1);
  CHECK_FALSE(d.convict.has_value());

  // Committed past the transaction's start: it was committed, nothing narrows.
  const auto past = decide_start(m, 81, true, K, range, self);
  CHECK_FALSE(past.narrowed);
  CHECK(past.alone == 0);
  CHECK(past.until == 150);
  CHECK(past.grow);
  CHECK(past.deaths == 3);

  // A death while one of the narrowed records runs alone: it runs alone once more, and the
  // count of records left alone stands.
  Marker single = quarantine(50, 4, 70, 150, 1, 1);
  single.alone = 11;
  const auto again = decide_start(single, 70, true, K, range, self);
  CHECK(again.suspect == 70);
  CHECK(again.tries == 1);
  CHECK(again.alone == 11);
  CHECK(again.deaths == 5);
  // Committed past it: one fewer record is left to run alone.
  const auto next = decide_start(single, 71, true, K, range, self);
  CHECK(next.alone == 10);
  CHECK(next.deaths == 4);
}

TEST_CASE("transactions are named by the committed offset they start from, wherever the record is") {
  // The committed offset is 100 (an upstream transaction marker); the record after it is 101.
  // The owner's marker names 100, and the next owner, starting at committed 100, counts it.
  const auto d = decide_start(quarantine(50, 3, 100, 150, 1), 100, true, K, range, self);
  CHECK(d.suspect == 100);
  CHECK(d.deaths == 4);
  const auto convicted = decide_start(quarantine(50, 4, 100, 150, 2), 100, true, K, range, self);
  REQUIRE(convicted.convict.has_value());
  CHECK(*convicted.convict == 100);
}
