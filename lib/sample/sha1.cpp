#include "sample/sha1.h"

#include <cstddef>
#include <cstring>

namespace exactly::sample {
namespace {

constexpr std::size_t block_size = 64;

constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// Folds one 64-byte block into the running state (FIPS 180-4, 6.1.2).
void compress(std::array<std::uint32_t, 5>& state, const std::uint8_t* block) {
  std::array<std::uint32_t, 80> w{};
  for (std::size_t t = 0; t < 16; ++t) {
    w[t] = (std::uint32_t{block[4 * t]} << 24) | (std::uint32_t{block[4 * t + 1]} << 16) |
           (std::uint32_t{block[4 * t + 2]} << 8) | std::uint32_t{block[4 * t + 3]};
  }
  for (std::size_t t = 16; t < 80; ++t) {
    w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  }

  std::uint32_t a = state[0];
  std::uint32_t b = state[1];
  std::uint32_t c = state[2];
  std::uint32_t d = state[3];
  std::uint32_t e = state[4];
  for (std::size_t t = 0; t < 80; ++t) {
    std::uint32_t f = 0;
    std::uint32_t k = 0;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdc;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6;
    }
    const std::uint32_t temp = rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
}

}  // namespace

std::array<std::uint8_t, 20> sha1(std::string_view data) {
  std::array<std::uint32_t, 5> state{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};

  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  const std::size_t full_blocks = data.size() / block_size;
  for (std::size_t i = 0; i < full_blocks; ++i) {
    compress(state, bytes + i * block_size);
  }

  // Padding: the leftover bytes, a 1 bit, zeros, then the message length in bits as a big-endian
  // 64-bit number, filling one block or, when the length does not fit after the leftover, two.
  std::array<std::uint8_t, 2 * block_size> tail{};
  const std::size_t rest = data.size() - full_blocks * block_size;
  if (rest > 0) {
    std::memcpy(tail.data(), bytes + full_blocks * block_size, rest);
  }
  tail[rest] = 0x80;
  const std::size_t tail_size = rest + 1 + 8 <= block_size ? block_size : 2 * block_size;
  const std::uint64_t bit_length = static_cast<std::uint64_t>(data.size()) * 8;
  for (std::size_t i = 0; i < 8; ++i) {
    tail[tail_size - 1 - i] = static_cast<std::uint8_t>(bit_length >> (8 * i));
  }
  for (std::size_t offset = 0; offset < tail_size; offset += block_size) {
    compress(state, tail.data() + offset);
  }

  std::array<std::uint8_t, 20> digest{};
  for (std::size_t i = 0; i < state.size(); ++i) {
    digest[4 * i] = static_cast<std::uint8_t>(state[i] >> 24);
    digest[4 * i + 1] = static_cast<std::uint8_t>(state[i] >> 16);
    digest[4 * i + 2] = static_cast<std::uint8_t>(state[i] >> 8);
    digest[4 * i + 3] = static_cast<std::uint8_t>(state[i]);
  }
  return digest;
}

}  // namespace exactly::sample
