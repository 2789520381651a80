// The kv range of each mission mask does not depend on how the mask is written: with helper
// variables, helper functions, combinators or a subexpression written twice (which CSE shares
// as a let before the analysis runs), the range is the closed form of the plain spelling, equal
// at every tile tried.
#include <gtest/gtest.h>

#include "ir/ir_printer.hpp"
#include "compiler/tile_ranges.hpp"
#include "tests/analysis/support.hpp"

namespace flexjit::analysis_test {
namespace {

using compiler::kv_range;
using compiler::kv_range_is_full;
using compiler::KvRange;

struct Spelling {
  std::string name;
  std::string text;  // a whole program
};

struct MissionMask {
  std::string name;
  std::string plain;                // the mask written out in one expression
  std::vector<Spelling> spellings;  // the same mask written as people write it
};

const std::string kHeader = "window: int\nprefix: int\n\n";

std::vector<MissionMask> mission_masks() {
  return {
      {"causal",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n",
       {
           {"helper variable", "def mask_mod(b, h, q_idx, kv_idx):\n    d = q_idx - kv_idx\n    return d >= 0\n"},
           {"helper function",
            "def causal(q, k):\n    return q >= k\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return causal(q_idx, kv_idx)\n"},
           {"combinator",
            "def causal(b, h, q, k):\n    return q >= k\n\nmask_mod = and_masks(causal, causal)\n"},
           {"repeated subexpression",
            "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx - kv_idx >= 0) & ~(q_idx - kv_idx < 0)\n"},
       }},
      {"sliding window",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < window)\n",
       {
           {"helper variable twice",
            "def mask_mod(b, h, q_idx, kv_idx):\n    d = q_idx - kv_idx\n    return (d >= 0) & (d < window)\n"},
           {"repeated subexpression",
            "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx - kv_idx >= 0) & (q_idx - kv_idx < window)\n"},
           {"chained comparison", "def mask_mod(b, h, q_idx, kv_idx):\n    return 0 <= q_idx - kv_idx < window\n"},
           {"helper function",
            "def in_window(d):\n    return (d >= 0) & (d < window)\n\n"
            "def mask_mod(b, h, q_idx, kv_idx):\n    return in_window(q_idx - kv_idx)\n"},
           {"float bound", "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < window * 1.0)\n"},
           {"float bound that reads the query",
            "def mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx <= q_idx) & (kv_idx > q_idx - window * 1.0)\n"},
           {"generator",
            "def sliding_window(w):\n    def inner(b, h, q_idx, kv_idx):\n        dist = q_idx - kv_idx\n"
            "        return (dist >= 0) & (dist < w)\n    return inner\n\nmask_mod = sliding_window(window)\n"},
       }},
      {"window of 28",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < 28)\n",
       {
           {"float constant", "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < 28.0)\n"},
           {"fractional bound", "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx <= 27.5)\n"},
           {"float on the left", "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (27.01 > q_idx - kv_idx)\n"},
           {"float helper",
            "W = 28.0\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    d = q_idx - kv_idx\n    return (d >= 0.0) & (d < W)\n"},
           {"float helper function",
            "def near(d, w=28.0):\n    return d < w\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (q_idx >= kv_idx) & near(q_idx - kv_idx)\n"},
           {"float bound written twice",
            "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < 28.0) & (q_idx - kv_idx < 28.0)\n"},
       }},
      {"two-sided window",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx - kv_idx <= window) & (kv_idx - q_idx <= window)\n",
       {
           {"abs bound to a variable used twice",
            "def mask_mod(b, h, q_idx, kv_idx):\n    m = torch.abs(q_idx - kv_idx)\n    return (m <= window) & (m >= 0)\n"},
           {"abs written twice",
            "def mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (torch.abs(q_idx - kv_idx) <= window) & (torch.abs(q_idx - kv_idx) >= 0)\n"},
           {"helper function",
            "def distance(q, k):\n    return abs(q - k)\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return distance(q_idx, kv_idx) <= window\n"},
           {"float bound", "def mask_mod(b, h, q_idx, kv_idx):\n    return abs(q_idx - kv_idx) <= window * 1.0\n"},
       }},
      {"sink and window",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & ((q_idx - kv_idx < window) | (kv_idx < 4))\n",
       {
           {"helpers",
            "SINKS = 4\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    d = q_idx - kv_idx\n    causal = d >= 0\n"
            "    return causal & ((d < window) | (kv_idx < SINKS))\n"},
           {"combinators",
            "def causal(b, h, q, k):\n    return q >= k\n\ndef near(b, h, q, k):\n    return q - k < window\n\n"
            "def attention_sink(b, h, q, k):\n    return k < 4\n\nmask_mod = and_masks(causal, or_masks(near, attention_sink))\n"},
           {"repeated subexpression",
            "def mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (q_idx >= kv_idx) & ((q_idx - kv_idx < window) | (kv_idx < 4)) & (q_idx - kv_idx >= 0)\n"},
       }},
      {"growing prefix",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return kv_idx < (q_idx + 1) // 2 + 3\n",
       {
           {"float slope", "def mask_mod(b, h, q_idx, kv_idx):\n    return kv_idx < q_idx * 0.5 + 3.0\n"},
           {"float slope in a generator",
            "def generate_growing(ratio=0.5, extra=3.0):\n    def growing(b, h, q_idx, kv_idx):\n"
            "        limit = q_idx * ratio + extra\n        return kv_idx < limit\n    return growing\n\n"
            "mask_mod = generate_growing()\n"},
           {"true division", "def mask_mod(b, h, q_idx, kv_idx):\n    return kv_idx - 3 < q_idx / 2\n"},
       }},
      {"prefix LM",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (kv_idx < prefix) | (q_idx >= kv_idx)\n",
       {
           {"helper variables",
            "def mask_mod(b, h, q_idx, kv_idx):\n    in_prefix = kv_idx < prefix\n    causal = q_idx >= kv_idx\n"
            "    return in_prefix | causal\n"},
           {"combinator",
            "def causal(b, h, q, k):\n    return q >= k\n\ndef prefix_mask(b, h, q, k):\n    return k < prefix\n\n"
            "mask_mod = or_masks(prefix_mask, causal)\n"},
           {"helper function",
            "def in_prefix(k):\n    return k < prefix\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return in_prefix(kv_idx) | (q_idx >= kv_idx)\n"},
           {"repeated subexpression",
            "def mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (kv_idx < prefix) | (q_idx >= kv_idx) | ((kv_idx < prefix) & (q_idx >= kv_idx))\n"},
       }},
      {"chunked causal",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx // 64 == kv_idx // 64) & (q_idx >= kv_idx)\n",
       {
           {"chunk ids bound once",
            "CHUNK = 64\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    qc = q_idx // CHUNK\n    kc = kv_idx // CHUNK\n"
            "    return (qc == kc) & (q_idx >= kv_idx)\n"},
           {"repeated subexpression",
            "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx // 64 == kv_idx // 64) & (kv_idx // 64 <= q_idx // 64)"
            " & (q_idx >= kv_idx)\n"},
           {"helper function",
            "def chunk(i):\n    return i // 64\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (chunk(q_idx) == chunk(kv_idx)) & (q_idx >= kv_idx)\n"},
       }},
      {"dilated window",
       "def mask_mod(b, h, q_idx, kv_idx):\n    return (q_idx >= kv_idx) & (q_idx - kv_idx < window) & ((q_idx - kv_idx) % 3 == 0)\n",
       {
           {"distance used three times",
            "def mask_mod(b, h, q_idx, kv_idx):\n    distance = q_idx - kv_idx\n"
            "    return 0 <= distance < window and distance % 3 == 0\n"},
           {"helper function",
            "def dilated(d, every=3):\n    return (d % every) == 0\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    return (q_idx >= kv_idx) & (q_idx - kv_idx < window) & dilated(q_idx - kv_idx)\n"},
       }},
      {"2D neighbourhood",
       "def mask_mod(b, h, q_idx, kv_idx):\n"
       "    return (abs(q_idx // 64 - kv_idx // 64) <= 7) & (abs(q_idx % 64 - kv_idx % 64) <= 7)\n",
       {
           {"tuple helpers",
            "W = 64\n\ndef coords(i):\n    return i // W, i % W\n\ndef mask_mod(b, h, q_idx, kv_idx):\n"
            "    qy, qx = coords(q_idx)\n    ky, kx = coords(kv_idx)\n    dy = abs(qy - ky)\n    dx = abs(qx - kx)\n"
            "    return (dy <= 7) & (dx <= 7) & (dy + dx >= 0)\n"},
       }},
      {"document causal",
       "doc: Tensor[int32, 1]\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return (doc[q_idx] == doc[kv_idx]) & (q_idx >= kv_idx)\n",
       {
           {"helpers",
            "doc: Tensor[int32, 1]\n\ndef same_doc(q, k):\n    return doc[q] == doc[k]\n\n"
            "def mask_mod(b, h, q_idx, kv_idx):\n    d = doc[q_idx]\n    causal = q_idx >= kv_idx\n"
            "    return same_doc(q_idx, kv_idx) & causal & (d >= 0) & (d == doc[q_idx])\n"},
       }},
  };
}

std::pair<std::int64_t, std::int64_t> at(const KvRange& r, std::int64_t q_lo, std::int64_t q_hi, std::int64_t Tkv,
                                         std::int64_t window, std::int64_t prefix) {
  World w;
  w.Tkv = Tkv;
  w.env.scalars = {{"window", ir::Value::integer(window)}, {"prefix", ir::Value::integer(prefix)}};
  return eval_kv_range(r, w, 0, 0, q_lo, q_hi);
}

TEST(KvRangeWritten, EverySpellingKeepsTheClosedForm) {
  if (!have_pipeline()) GTEST_SKIP() << "front end (compiler/pipeline) not built";
  for (const MissionMask& m : mission_masks()) {
    const KvRange plain = kv_range(program_from_source(kHeader + m.plain));
    ASSERT_FALSE(kv_range_is_full(plain)) << m.name;
    for (const Spelling& s : m.spellings) {
      SCOPED_TRACE(m.name + ", " + s.name);
      const KvRange r = kv_range(program_from_source(kHeader + s.text));
      ASSERT_FALSE(kv_range_is_full(r)) << ir::to_string(r.lo) << " .. " << ir::to_string(r.hi);
      for (std::int64_t q_lo : {0, 37, 64, 500, 1000})
        for (std::int64_t len : {1, 64})
          for (std::int64_t Tkv : {100, 2000})
            for (std::int64_t window : {1, 16, 300})
              for (std::int64_t prefix : {0, 10, 700}) {
                const std::int64_t q_hi = q_lo + len - 1;
                ASSERT_EQ(at(r, q_lo, q_hi, Tkv, window, prefix), at(plain, q_lo, q_hi, Tkv, window, prefix))
                    << "q [" << q_lo << ", " << q_hi << "] Tkv " << Tkv << " window " << window << " prefix " << prefix
                    << "\n  plain: [" << ir::to_string(plain.lo) << ", " << ir::to_string(plain.hi) << ")"
                    << "\n  this:  [" << ir::to_string(r.lo) << ", " << ir::to_string(r.hi) << ")";
              }
    }
  }
}

}  // namespace
}  // namespace flexjit::analysis_test
