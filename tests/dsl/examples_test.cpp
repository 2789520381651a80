// Two example programs (README.md and examples/), verbatim: they parse, and their dumps are
// golden.
#include <gtest/gtest.h>

#include "test_util.hpp"

namespace flexjit::dsl {
namespace {

constexpr const char* kAlibiWindow = R"(window: int                        # runtime scalar
alibi_slopes: Tensor[float32, 1]   # captured tensor (dtype, rank)
CAP = 50.0                         # compile-time constant

def score_mod(score, b, h, q_idx, kv_idx):
    s = score + alibi_slopes[h] * (kv_idx - q_idx)
    return CAP * torch.tanh(s / CAP)

def mask_mod(b: int, h: int, q_idx: int, kv_idx: int) -> bool:
    """causal sliding window"""
    return 0 <= q_idx - kv_idx < window
)";

constexpr const char* kMaskCombinators = R"(doc_ids: Tensor[int32, 1]

def sliding_window(w):             # factory: nested def closing over its argument
    def mask(b, h, q_idx, kv_idx):
        return q_idx - kv_idx < w
    return mask

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx

def same_doc(b, h, q_idx, kv_idx):
    if doc_ids[q_idx] == doc_ids[kv_idx]:
        return True
    else:
        return False

mask_mod = and_masks(causal, same_doc, or_masks(sliding_window(1024), lambda b, h, q, k: k < 4))
)";

TEST(Examples, AlibiWindow) {
  EXPECT_EQ(test::dump_text(kAlibiWindow),
            "(annassign window (name int))\n"
            "(annassign alibi_slopes (index (name Tensor) (name float32) (int 1)))\n"
            "(assign CAP (float 50.0))\n"
            "(def score_mod (score b h q_idx kv_idx)"
            " (assign s (bin (name score) + (bin (index (name alibi_slopes) (name h)) * (bin (name kv_idx) - (name q_idx)))))"
            " (return (bin (name CAP) * (call (attr (name torch) tanh) (bin (name s) / (name CAP))))))\n"
            "(def mask_mod ((b : (name int)) (h : (name int)) (q_idx : (name int)) (kv_idx : (name int))) -> (name bool)"
            " (expr (str \"causal sliding window\"))"
            " (return (cmp (int 0) <= (bin (name q_idx) - (name kv_idx)) < (name window))))\n");
}

TEST(Examples, MaskCombinators) {
  EXPECT_EQ(test::dump_text(kMaskCombinators),
            "(annassign doc_ids (index (name Tensor) (name int32) (int 1)))\n"
            "(def sliding_window (w)"
            " (def mask (b h q_idx kv_idx) (return (cmp (bin (name q_idx) - (name kv_idx)) < (name w))))"
            " (return (name mask)))\n"
            "(def causal (b h q_idx kv_idx) (return (cmp (name q_idx) >= (name kv_idx))))\n"
            "(def same_doc (b h q_idx kv_idx)"
            " (if (cmp (index (name doc_ids) (name q_idx)) == (index (name doc_ids) (name kv_idx)))"
            " (then (return (bool True))) (else (return (bool False)))))\n"
            "(assign mask_mod (call (name and_masks) (name causal) (name same_doc)"
            " (call (name or_masks) (call (name sliding_window) (int 1024))"
            " (lambda (b h q k) (cmp (name k) < (int 4))))))\n");
}

TEST(Examples, AlibiWindowPositions) {
  const std::string d = test::dump_text(kAlibiWindow, true);
  // The chained comparison points at its first operator, the names at themselves.
  EXPECT_NE(d.find("(return@11:5 (cmp@11:14 (int@11:12 0) <= (bin@11:23 (name@11:17 q_idx) - "
                   "(name@11:25 kv_idx)) < (name@11:34 window)))"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("(call@7:18 (attr@7:18 (name@7:18 torch) tanh@7:24)"), std::string::npos) << d;
}

TEST(Examples, DumpIsDeterministic) {
  EXPECT_EQ(test::dump_text(kMaskCombinators), test::dump_text(kMaskCombinators));
  EXPECT_EQ(test::dump_text(kMaskCombinators, true), test::dump_text(kMaskCombinators, true));
}

}  // namespace
}  // namespace flexjit::dsl
