// Sample payment data: SHA-1 against the FIPS 180 vectors, and ids equal to the ones Python's
// uuid.uuid5 gives, since tools outside this repo generate and check the same payments.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sample/payments.h"
#include "sample/sha1.h"

namespace {

std::string hex(const std::array<std::uint8_t, 20>& digest) {
  std::string text;
  for (const std::uint8_t byte : digest) {
    text += fmt::format("{:02x}", byte);
  }
  return text;
}

}  // namespace

TEST_CASE("sha1 matches the FIPS 180 test vectors") {
  CHECK(hex(exactly::sample::sha1("")) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(hex(exactly::sample::sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex(exactly::sample::sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(hex(exactly::sample::sha1(std::string(1000000, 'a'))) ==
        "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST_CASE("sha1 pads correctly around the block boundaries") {
  // 55 bytes is the most that fits the length in the same block; 56 and 63 need a second one.
  struct Vector {
    std::size_t length;
    std::string_view digest;
  };
  constexpr std::array<Vector, 6> vectors{{
      {55, "c1c8bbdc22796e28c0e15163d20899b65621d65a"},
      {56, "c2db330f6083854c99d4b5bfb6e8f29f201be699"},
      {63, "03f09f5b158a7a8cdad920bddc29b81c18a551f5"},
      {64, "0098ba824b5c16427bd7a1122a5a442a25ec644d"},
      {65, "11655326c708d70319be2610e8a57d9a5b959d3b"},
      {128, "ad5b3fdbcb526778c2839d2f151ea753995e26a0"},
  }};
  for (const Vector& v : vectors) {
    CAPTURE(v.length);
    CHECK(hex(exactly::sample::sha1(std::string(v.length, 'a'))) == v.digest);
  }
}

TEST_CASE("payment_id equals Python's uuid5(NAMESPACE_DNS, f'payment-{i}')") {
  // From python3 -c 'import uuid; print(uuid.uuid5(uuid.NAMESPACE_DNS, "payment-0"))' and so on.
  CHECK(exactly::sample::payment_id(0) == "fed8ba27-eb4a-576f-9a41-f3d10d2f3dd6");
  CHECK(exactly::sample::payment_id(1) == "0251061d-6cd2-5f93-bc3f-51e781da3ea3");
  CHECK(exactly::sample::payment_id(7) == "f67509bb-b0b9-5f81-a2b6-1f4bca4a93b9");
  CHECK(exactly::sample::payment_id(999) == "2791a1c2-482c-53e3-9fce-17989e12c025");
}

TEST_CASE("payment_id is a version 5, RFC 4122 variant uuid") {
  for (std::uint64_t i = 0; i < 100; ++i) {
    const std::string id = exactly::sample::payment_id(i);
    CAPTURE(id);
    REQUIRE(id.size() == 36);
    CHECK(id[8] == '-');
    CHECK(id[13] == '-');
    CHECK(id[14] == '5');
    CHECK(id[18] == '-');
    CHECK(std::string_view{"89ab"}.find(id[19]) != std::string_view::npos);
    CHECK(id[23] == '-');
  }
}

TEST_CASE("payment_json is the documented object") {
  const std::string text = exactly::sample::payment_json(7, 1700000000.5);
  const auto payment = nlohmann::json::parse(text);
  REQUIRE(payment.is_object());
  CHECK(payment.size() == 4);
  CHECK(payment.at("payment_id") == exactly::sample::payment_id(7));
  CHECK(payment.at("amount_cents") == 1700);  // (7 % 500) * 100 + 1000
  CHECK(payment.at("merchant_id") == "merchant-007");
  CHECK(payment.at("event_time").get<double>() == 1700000000.5);
  CHECK(text.find(' ') == std::string::npos);  // compact
}

TEST_CASE("payment_json covers the amount and merchant ranges") {
  const auto first = nlohmann::json::parse(exactly::sample::payment_json(0, 0.0));
  CHECK(first.at("amount_cents") == 1000);
  CHECK(first.at("merchant_id") == "merchant-000");
  CHECK(first.at("event_time").get<double>() == 0.0);

  const auto last = nlohmann::json::parse(exactly::sample::payment_json(499, 1.25));
  CHECK(last.at("amount_cents") == 50900);
  CHECK(last.at("merchant_id") == "merchant-019");

  const auto wrapped = nlohmann::json::parse(exactly::sample::payment_json(520, 1.0));
  CHECK(wrapped.at("amount_cents") == 3000);
  CHECK(wrapped.at("merchant_id") == "merchant-000");
}

TEST_CASE("payment_json keeps millisecond event times and stays JSON for non-finite ones") {
  const std::string text = exactly::sample::payment_json(1, 1704164645.678);
  CHECK(text.ends_with(R"("event_time":1704164645.678})"));

  const std::string nan =
      exactly::sample::payment_json(1, std::numeric_limits<double>::quiet_NaN());
  CHECK(nlohmann::json::parse(nan).at("event_time").is_null());
}
