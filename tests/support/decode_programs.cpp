// The decode programs and the values their declarations get.
#include <algorithm>
#include <random>
#include <stdexcept>

#include "tests/support/decode_case.hpp"

namespace flexjit::test {

const std::vector<DecodeProgram> kDecodePrograms = {
    {"causal", R"(
offsets: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"every_key", R"(
def score_mod(score, b, h, q_idx, kv_idx):
    return score
)"},
    {"sliding_window", R"(
offsets: Tensor[int32, 1]
window: int
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & (pos - kv_idx < window)
)"},
    {"window_with_sink_tokens", R"(
offsets: Tensor[int32, 1]
window: int
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & ((pos - kv_idx < window) | (kv_idx < 4))
)"},
    {"learned_sink", R"(
offsets: Tensor[int32, 1]
window: int
sinks: Tensor[float32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (pos >= kv_idx) & (pos - kv_idx < window)
def sink(b, h):
    return sinks[h]
)"},
    {"alibi", R"(
offsets: Tensor[int32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    slope = 2.0 ** (-8.0 * (h + 1) / 32)
    return score - slope * (q_idx + offsets[b] - kv_idx)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"softcap", R"(
offsets: Tensor[int32, 1]
def score_mod(score, b, h, q_idx, kv_idx):
    return 2.0 * torch.tanh(score / 2.0)
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"documents", R"(
offsets: Tensor[int32, 1]
doc_ids: Tensor[int32, 2]
def mask_mod(b, h, q_idx, kv_idx):
    pos = q_idx + offsets[b]
    return (doc_ids[b, pos] == doc_ids[b, kv_idx]) & (pos >= kv_idx)
)"},
    {"top_k_blocks", R"(
offsets: Tensor[int32, 1]
selected: BlockIndices[16, 16]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"relative_position_bias", R"(
offsets: Tensor[int32, 1]
MAX_DISTANCE = 128
rel_bias: Tensor[float32, 2]
def score_mod(score, b, h, q_idx, kv_idx):
    d = clamp(kv_idx - q_idx - offsets[b], -MAX_DISTANCE, MAX_DISTANCE)
    return score + rel_bias[h, d + MAX_DISTANCE]
def mask_mod(b, h, q_idx, kv_idx):
    return q_idx + offsets[b] >= kv_idx
)"},
    {"prefix_lm", R"(
offsets: Tensor[int32, 1]
prefix_len: Tensor[int32, 1]
def mask_mod(b, h, q_idx, kv_idx):
    return (kv_idx < prefix_len[b]) | (q_idx + offsets[b] >= kv_idx)
)"},
};

const DecodeProgram& decode_program(const std::string& name) {
  for (const DecodeProgram& p : kDecodePrograms)
    if (name == p.name) return p;
  throw std::invalid_argument("no decode program " + name);
}

Program load_decode_program(const DecodeProgram& p) {
  return Program::from_source(p.source, std::string(p.name) + ".py");
}

DecodeBindings::DecodeBindings(const Program& p, const DecodeCase& c) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 1.f);
  const int B = c.B, longest = std::max(1, *std::max_element(c.lens.begin(), c.lens.end()));
  auto tensor = [&](const std::string& name, const void* data, ir::DType dtype, DType api_dtype,
                    std::vector<std::int64_t> shape) {
    bind[name] = TensorView::contiguous(data, api_dtype, shape, Device::cpu());
    env.tensors[name] = ir::TensorBinding{dtype, std::move(shape), {}, data};
  };
  for (const Parameter& x : p.parameters()) {
    if (x.name == "offsets") {
      for (int b = 0; b < B; ++b) offsets.push_back(c.lens[b] - c.Tq);
      tensor("offsets", offsets.data(), ir::DType::Int32, i32, {B});
    }
    if (x.name == "window") {
      bind["window"] = window;
      env.scalars["window"] = ir::Value::integer(window);
    }
    if (x.name == "sinks") {
      for (int h = 0; h < c.Hq; ++h) sinks.push_back(normal(rng));
      tensor("sinks", sinks.data(), ir::DType::Float32, f32, {c.Hq});
    }
    if (x.name == "doc_ids") {  // runs of 1 to 60 tokens per sequence
      doc_ids.assign(static_cast<std::size_t>(B) * longest, 0);
      std::uniform_int_distribution<int> run(1, 60);
      for (int b = 0; b < B; ++b)
        for (int j = 0, id = 0, left = run(rng); j < longest; ++j, --left) {
          if (left == 0) ++id, left = run(rng);
          doc_ids[static_cast<std::size_t>(b) * longest + j] = id;
        }
      tensor("doc_ids", doc_ids.data(), ir::DType::Int32, i32, {B, longest});
    }
    if (x.name == "selected") {  // [B, Hkv, q blocks, 3]: two blocks of each sequence's own, or -1
      const int q_blocks = (c.Tq + 15) / 16;
      for (int b = 0; b < B; ++b)
        for (int g = 0; g < c.Hkv; ++g)
          for (int m = 0; m < q_blocks; ++m) {
            const int blocks = (std::max(0, c.lens[b]) + 15) / 16;
            std::uniform_int_distribution<int> pick(0, std::max(0, blocks - 1));
            selected.push_back(blocks > 0 ? blocks - 1 : -1);  // the newest keys
            selected.push_back(blocks > 0 ? pick(rng) : -1);
            selected.push_back(-1);
          }
      tensor("selected", selected.data(), ir::DType::Int32, i32, {B, c.Hkv, q_blocks, 3});
    }
    if (x.name == "rel_bias") {  // [Hq, 2 * 128 + 1], of the size of the scores
      rel_bias.resize(static_cast<std::size_t>(c.Hq) * 257);
      for (float& e : rel_bias) e = 0.5f * normal(rng);
      tensor("rel_bias", rel_bias.data(), ir::DType::Float32, f32, {c.Hq, 257});
    }
    if (x.name == "prefix_len") {  // anywhere in the sequence, so that a new token may see a later prefix key
      for (int b = 0; b < B; ++b) prefix_len.push_back(std::uniform_int_distribution<int>(0, std::max(0, c.lens[b]))(rng));
      tensor("prefix_len", prefix_len.data(), ir::DType::Int32, i32, {B});
    }
  }
}

}  // namespace flexjit::test
