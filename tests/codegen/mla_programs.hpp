// The programs the NVRTC tests of the MLA decode families (decode_mla, sm90_mla) compile: a decode
// causal mask with per-sequence offsets, soft-capping with a window and a sink, a score mod alone,
// and DeepSeek's sparse attention (a token list, causal among its keys).
#pragma once

namespace flexjit::test::mla_programs {

inline const char* const kCausal = R"(offsets: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)";
inline const char* const kSoftcapWindowSink = R"(offsets: Tensor[int32, 1]
sinks: Tensor[float32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return 30.0 * tanh(score / 30.0)
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & (pos - kv_idx < 4096)
def sink(b, h):
    return sinks[h]
)";
inline const char* const kEveryKey = R"(def score_mod(score, b, h, q_idx, kv_idx):
    return score
)";
inline const char* const kDsa = R"(selected: TokenIndices
offsets: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)";

}  // namespace flexjit::test::mla_programs
