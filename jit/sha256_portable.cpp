// SHA-256's block function in portable C++, straight from FIPS 180-4 section 6.2.2.
#include "jit/sha256_blocks.hpp"

#include <array>

namespace flexjit::jit::detail {
namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::array<std::uint32_t, 64> first_primes() {
  std::array<std::uint32_t, 64> primes{};
  std::size_t n = 0;
  for (std::uint32_t c = 2; n < primes.size(); ++c) {
    bool prime = true;
    for (std::size_t i = 0; i < n && primes[i] * primes[i] <= c; ++i) prime = prime && c % primes[i] != 0;
    if (prime) primes[n++] = c;
  }
  return primes;
}

// The largest x with x^k <= v (k = 2 or 3), for v < 2^106.
constexpr std::uint64_t integer_root(u128 v, int k) {
  std::uint64_t lo = 0, hi = std::uint64_t(1) << 36;  // hi^k > v
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    u128 p = 1;
    for (int i = 0; i < k; ++i) p *= mid;
    (p <= v ? lo : hi) = mid;
  }
  return lo;
}

// The first 32 bits of the fractional part of the k-th root of p: floor(root(p * 2^(32k))) mod 2^32.
constexpr std::uint32_t root_fraction_bits(std::uint32_t p, int k) {
  return static_cast<std::uint32_t>(integer_root(u128(p) << (32 * k), k));
}

constexpr std::array<std::uint32_t, 64> round_constants() {  // cube roots of the first 64 primes
  std::array<std::uint32_t, 64> k{};
  const auto primes = first_primes();
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = root_fraction_bits(primes[i], 3);
  return k;
}

constexpr std::array<std::uint32_t, 8> initial_state() {  // square roots of the first 8 primes
  std::array<std::uint32_t, 8> h{};
  const auto primes = first_primes();
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = root_fraction_bits(primes[i], 2);
  return h;
}

constexpr auto kK = round_constants();
constexpr auto kH = initial_state();
// Spot checks against the values printed in FIPS 180-4 (4.2.2 and 5.3.3).
static_assert(kK[0] == 0x428a2f98 && kK[63] == 0xc67178f2 && kH[0] == 0x6a09e667 && kH[7] == 0x5be0cd19);

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::uint32_t load_be32(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | std::uint32_t(p[3]);
}

}  // namespace

const std::uint32_t kSha256RoundConstants[64] = {
#define FLEXJIT_K8(i) kK[i], kK[i + 1], kK[i + 2], kK[i + 3], kK[i + 4], kK[i + 5], kK[i + 6], kK[i + 7]
    FLEXJIT_K8(0), FLEXJIT_K8(8), FLEXJIT_K8(16), FLEXJIT_K8(24),
    FLEXJIT_K8(32), FLEXJIT_K8(40), FLEXJIT_K8(48), FLEXJIT_K8(56)
#undef FLEXJIT_K8
};
const std::uint32_t kSha256InitialState[8] = {kH[0], kH[1], kH[2], kH[3], kH[4], kH[5], kH[6], kH[7]};

void sha256_blocks_portable(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    std::uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = load_be32(data + 4 * t);
    for (int t = 16; t < 64; ++t) {
      const std::uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
      const std::uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
      w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; ++t) {
      const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + w[t];
      const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }
}

}  // namespace flexjit::jit::detail
