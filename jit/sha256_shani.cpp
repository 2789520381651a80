// SHA-256's block function with the x86 SHA extensions. The instructions keep the working
// variables in two registers, {A, B, E, F} and {C, D, G, H} (A in the top lane), do two rounds
// per sha256rnds2, and compute the message schedule four words at a time (sha256msg1 / msg2).
// Compiled for those instructions function by function, so the rest of the build keeps its
// baseline target; callers check sha256_shani_supported() first.
#include "jit/sha256_blocks.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>

namespace flexjit::jit::detail {

bool sha256_shani_supported() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool ssse3 = c & (1u << 9), sse41 = c & (1u << 19);
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  const bool sha = b & (1u << 29);
  return ssse3 && sse41 && sha;
}

__attribute__((target("sha,sse4.1,ssse3"))) void sha256_blocks_shani(std::uint32_t state[8], const std::uint8_t* data,
                                                                       std::size_t blocks) {
  // Big-endian words: reverse the bytes within each 32-bit lane.
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  // state lanes (A, B, C, D) and (E, F, G, H), lane 0 first -> {A, B, E, F} and {C, D, G, H}.
  const __m128i badc = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state)), 0xB1);
  const __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4)), 0x1B);
  __m128i abef = _mm_alignr_epi8(badc, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);

  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_in = abef, cdgh_in = cdgh;
    __m128i w[4];  // the last four groups of four schedule words, w[g % 4] for group g
    for (int g = 0; g < 16; ++g) {
      __m128i& wg = w[g % 4];
      if (g < 4) {
        wg = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      } else {
        // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four at a time: msg1 gives the first
        // two terms from groups g-4 and g-3, alignr picks W[t-7] out of groups g-2 and g-1, msg2
        // adds s1 (including the words of this group it depends on).
        const __m128i& w1 = w[(g - 1) % 4];
        const __m128i& w2 = w[(g - 2) % 4];
        const __m128i& w3 = w[(g - 3) % 4];
        __m128i t = _mm_sha256msg1_epu32(wg /* group g-4 */, w3);
        t = _mm_add_epi32(t, _mm_alignr_epi8(w1, w2, 4));
        wg = _mm_sha256msg2_epu32(t, w1);
      }
      const __m128i wk = _mm_add_epi32(wg, _mm_loadu_si128(reinterpret_cast<const __m128i*>(kSha256RoundConstants + 4 * g)));
      // Two rounds from the low two lanes, two from the high two; each call returns the new
      // {A, B, E, F}, and the old one becomes {C, D, G, H}.
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }

  // Back to (A, B, C, D), (E, F, G, H).
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}

}  // namespace flexjit::jit::detail

#else

namespace flexjit::jit::detail {
bool sha256_shani_supported() { return false; }
void sha256_blocks_shani(std::uint32_t state[8], const std::uint8_t* data, std::size_t blocks) {
  sha256_blocks_portable(state, data, blocks);
}
}  // namespace flexjit::jit::detail

#endif
