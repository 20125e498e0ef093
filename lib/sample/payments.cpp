#include "sample/payments.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sample/sha1.h"

namespace exactly::sample {
namespace {

// RFC 4122 appendix C: the namespace for fully-qualified domain names, 6ba7b810-9dad-11d1-80b4-
// 00c04fd430c8, in network byte order. Python's uuid.NAMESPACE_DNS is the same value, which is
// what makes these ids equal to the ones the original exercise's producer generated.
constexpr std::array<std::uint8_t, 16> namespace_dns{
    0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8};

// RFC 4122 4.3: SHA-1 over namespace then name; the first 16 bytes, with the version and variant
// bits overwritten.
std::array<std::uint8_t, 16> uuid5(std::string_view name) {
  std::string input(namespace_dns.begin(), namespace_dns.end());
  input.append(name);
  const auto digest = sha1(input);

  std::array<std::uint8_t, 16> uuid{};
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    uuid[i] = digest[i];
  }
  uuid[6] = static_cast<std::uint8_t>((uuid[6] & 0x0f) | 0x50);  // version 5
  uuid[8] = static_cast<std::uint8_t>((uuid[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
  return uuid;
}

}  // namespace

std::string payment_id(std::uint64_t i) {
  const auto u = uuid5(fmt::format("payment-{}", i));
  std::string text;
  text.reserve(36);
  for (std::size_t b = 0; b < u.size(); ++b) {
    if (b == 4 || b == 6 || b == 8 || b == 10) {
      text.push_back('-');
    }
    fmt::format_to(std::back_inserter(text), "{:02x}", u[b]);
  }
  return text;
}

std::string payment_json(std::uint64_t i, double event_time_s) {
  const std::uint64_t amount_cents = (i % 500) * 100 + 1000;
  const std::uint64_t merchant = i % 20;
  // Milliseconds are the resolution that matters downstream (event_time_iso shows them), and a
  // fixed three decimals keeps the number readable where the shortest form would turn to
  // exponent notation. JSON has no NaN or infinity, so those become null: a record the
  // payment-enricher rejects, rather than text that is not JSON at all.
  if (!std::isfinite(event_time_s)) {
    return fmt::format(R"({{"payment_id":"{}","amount_cents":{},"merchant_id":"merchant-{:03}",)"
                       R"("event_time":null}})",
                       payment_id(i), amount_cents, merchant);
  }
  return fmt::format(R"({{"payment_id":"{}","amount_cents":{},"merchant_id":"merchant-{:03}",)"
                     R"("event_time":{:.3f}}})",
                     payment_id(i), amount_cents, merchant, event_time_s);
}

}  // namespace exactly::sample
