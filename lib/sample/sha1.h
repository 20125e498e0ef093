// SHA-1, only so that sample payment ids can be UUIDv5 (RFC 4122 names them with SHA-1) without
// pulling in a crypto library. Not for anything that needs a secure hash: SHA-1 is broken for that.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace exactly::sample {

// The 20-byte SHA-1 digest (FIPS 180-4) of `data`.
std::array<std::uint8_t, 20> sha1(std::string_view data);

}  // namespace exactly::sample
