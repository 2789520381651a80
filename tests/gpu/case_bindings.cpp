#include "tests/gpu/case_bindings.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "api/program_impl.hpp"
#include "flexjit/half.hpp"

namespace flexjit::gpu_test {
namespace {

template <class T>
HostTensor tensor_of(DType dtype, std::vector<std::int64_t> shape, const std::vector<T>& values) {
  HostTensor t{dtype, std::move(shape), std::vector<unsigned char>(values.size() * sizeof(T))};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

void expect(const Parameter& p, DType dtype, int rank) {
  if (p.kind != Parameter::Kind::tensor || p.dtype != dtype || p.rank != rank)
    throw std::runtime_error(fmt::format("no binding rule for '{}' as declared ({} rank {})", p.name, dtype_name(p.dtype), p.rank));
}

}  // namespace

std::string CaseBindings::describe() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : scalars) {
    if (const auto* i = std::get_if<long long>(&value)) parts.push_back(fmt::format("{}={}", name, *i));
    else if (const auto* d = std::get_if<double>(&value)) parts.push_back(fmt::format("{}={:.3g}", name, *d));
    else if (const auto* b = std::get_if<bool>(&value)) parts.push_back(fmt::format("{}={}", name, *b));
  }
  for (const auto& [name, t] : tensors)
    parts.push_back(fmt::format("{}={}[{}]", name, dtype_name(t.dtype), fmt::join(t.shape, ",")));
  return fmt::format("{}", fmt::join(parts, " "));
}

HostTensor random_tensor(const std::string& name, const Parameter& p, const CaseShape& s, std::mt19937_64& rng) {
  const int T = std::max(s.Tq, s.Tkv);
  if (name == "alibi_slopes") {  // the ALiBi paper's geometric slopes, in a random head order
    expect(p, DType::f32, 1);
    std::vector<float> x(static_cast<std::size_t>(s.Hq));
    for (int h = 0; h < s.Hq; ++h) x[h] = std::exp2(-8.0f * static_cast<float>(h + 1) / static_cast<float>(s.Hq));
    std::shuffle(x.begin(), x.end(), rng);
    return tensor_of(DType::f32, {s.Hq}, x);
  }
  if (name == "sinks") {  // logits around the size of the row's own scores
    expect(p, DType::f32, 1);
    std::normal_distribution<float> normal(1.0f, 1.5f);
    std::vector<float> x(static_cast<std::size_t>(s.Hq));
    for (auto& e : x) e = normal(rng);
    return tensor_of(DType::f32, {s.Hq}, x);
  }
  if (name == "doc_ids") {  // packed documents: sorted ids, runs of 1 to T/3 tokens
    expect(p, DType::i32, 1);
    std::uniform_int_distribution<int> run(1, std::max(1, T / 3));
    std::vector<std::int32_t> x(static_cast<std::size_t>(T));
    int id = 0, left = run(rng);
    for (auto& e : x) {
      if (left-- == 0) {
        ++id;
        left = run(rng) - 1;
      }
      e = id;
    }
    return tensor_of(DType::i32, {T}, x);
  }
  if (name == "batch_doc_ids") {  // [B, T]: each batch entry its own sorted document runs
    expect(p, DType::i32, 2);
    std::uniform_int_distribution<int> run(1, std::max(1, T / 4));
    std::vector<std::int32_t> x(static_cast<std::size_t>(s.B) * T);
    for (int b = 0; b < s.B; ++b) {
      int id = 0, left = run(rng);
      for (int t = 0; t < T; ++t) {
        if (left-- == 0) {
          ++id;
          left = run(rng) - 1;
        }
        x[static_cast<std::size_t>(b) * T + t] = id;
      }
    }
    return tensor_of(DType::i32, {s.B, T}, x);
  }
  if (name == "head_window") {  // per query head, from 1 key to the whole sequence
    expect(p, DType::i32, 1);
    std::uniform_int_distribution<int> w(1, std::max(1, s.Tkv));
    std::vector<std::int32_t> x(static_cast<std::size_t>(s.Hq));
    for (auto& e : x) e = w(rng);
    return tensor_of(DType::i32, {s.Hq}, x);
  }
  if (name == "allowed") {  // [ceil(T / 64)]^2 random bools, a quarter of them true
    expect(p, DType::boolean, 2);
    const int n = (T + 63) / 64;
    std::vector<std::uint8_t> x(static_cast<std::size_t>(n) * n);
    for (auto& e : x) e = (rng() & 3) == 0;
    return tensor_of(DType::boolean, {n, n}, x);
  }
  if (name == "prefix_len") {  // per batch entry, anywhere from no prefix to the whole sequence
    expect(p, DType::i32, 1);
    std::uniform_int_distribution<int> len(0, s.Tkv);
    std::vector<std::int32_t> x(static_cast<std::size_t>(s.B));
    for (auto& e : x) e = len(rng);
    return tensor_of(DType::i32, {s.B}, x);
  }
  if (name == "rel_bias") {  // [Hq, 2 * 128 + 1] relative position bias (examples/relative_position_bias.py)
    expect(p, DType::f32, 2);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<std::size_t>(s.Hq) * 257);
    for (auto& e : x) e = normal(rng);
    return tensor_of(DType::f32, {s.Hq, 257}, x);
  }
  if (name == "bias") {  // [Hq, Tkv] bf16
    expect(p, DType::bf16, 2);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<std::uint16_t> x(static_cast<std::size_t>(s.Hq) * s.Tkv);
    for (auto& e : x) e = float_to_bf16_bits(normal(rng));
    return tensor_of(DType::bf16, {s.Hq, s.Tkv}, x);
  }
  throw std::runtime_error(fmt::format("no binding rule for tensor '{}'", name));
}

HostTensor random_block_indices(const CaseShape& s, int q_block, int kv_block, int K, bool per_kv_head,
                                std::mt19937_64& rng) {
  const int H = per_kv_head && s.Hkv > 0 ? s.Hkv : s.Hq;
  const int nq = (s.Tq + q_block - 1) / q_block;
  const int nkv = (s.Tkv + kv_block - 1) / kv_block;
  std::vector<std::int32_t> x(static_cast<std::size_t>(s.B) * H * nq * K);
  std::uniform_int_distribution<int> block(0, nkv - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::size_t i = 0;
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < H; ++h)
      for (int qb = 0; qb < nq; ++qb)
        for (int k = 0; k < K; ++k, ++i) {
          const int r = kind(rng);
          const int diag = std::min(nkv - 1, qb * q_block / kv_block);
          if (k == 0 && r < 5) x[i] = diag;
          else if (r < 2) x[i] = -1;
          else if (r < 4 && k > 0) x[i] = x[i - 1 - rng() % k];
          else x[i] = block(rng);
        }
  return tensor_of(DType::i32, {s.B, H, nq, K}, x);
}

// Token lists int32 [B, H, Tq, K]: the row's own key first in half the rows, -1 padding, repeats and
// random keys.
HostTensor random_token_indices(const CaseShape& s, int K, bool per_kv_head, std::mt19937_64& rng) {
  const int H = per_kv_head && s.Hkv > 0 ? s.Hkv : s.Hq;
  std::vector<std::int32_t> x(static_cast<std::size_t>(s.B) * H * s.Tq * K);
  std::uniform_int_distribution<int> key(0, s.Tkv - 1);
  std::uniform_int_distribution<int> kind(0, 9);
  std::size_t i = 0;
  for (int b = 0; b < s.B; ++b)
    for (int h = 0; h < H; ++h)
      for (int q = 0; q < s.Tq; ++q)
        for (int k = 0; k < K; ++k, ++i) {
          const int r = kind(rng);
          if (k == 0 && r < 5) x[i] = std::min(q, s.Tkv - 1);
          else if (r < 2) x[i] = -1;
          else if (r < 4 && k > 0) x[i] = x[i - 1 - rng() % k];
          else x[i] = key(rng);
        }
  return tensor_of(DType::i32, {s.B, H, s.Tq, K}, x);
}

CaseBindings random_bindings(const Program& program, const CaseShape& s, std::mt19937_64& rng) {
  CaseBindings out;
  CaseShape global = s;  // what tensors indexed by position must cover
  global.Tq += s.q_offset, global.Tkv += s.kv_offset;
  const int T = std::max(global.Tq, global.Tkv);
  for (const Parameter& p : program.parameters()) {
    switch (p.kind) {
      case Parameter::Kind::int_scalar: {
        if (p.name != "window") throw std::runtime_error(fmt::format("no binding rule for scalar '{}'", p.name));
        // From a few tokens to more than the whole sequence (window 1, where a row sees only
        // itself, and 0, where it sees nothing, have tests of their own).
        const std::vector<long long> choices{7, 64, 300, std::max(2, T / 2), T + 5};
        out.scalars[p.name] = choices[rng() % choices.size()];
        break;
      }
      case Parameter::Kind::float_scalar:
        out.scalars[p.name] = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
        break;
      case Parameter::Kind::bool_scalar:
        out.scalars[p.name] = (rng() & 1) != 0;
        break;
      case Parameter::Kind::tensor:
        out.tensors[p.name] = random_tensor(p.name, p, global, rng);
        break;
      case Parameter::Kind::block_indices: {
        // K from 1 to 5; per kv head in about half the GQA cases.
        const auto& bi = *detail::ProgramAccess::impl(program).ir.block_indices;
        const int K = 1 + static_cast<int>(rng() % 5);
        const bool per_kv_head = s.Hkv > 0 && s.Hkv != s.Hq && (rng() & 1) != 0;
        out.tensors[p.name] = random_block_indices(s, bi.q_block, bi.kv_block, K, per_kv_head, rng);
        break;
      }
      case Parameter::Kind::token_indices: {
        const int K = 1 + static_cast<int>(rng() % 40);
        const bool per_kv_head = s.Hkv > 0 && s.Hkv != s.Hq && (rng() & 1) != 0;
        out.tensors[p.name] = random_token_indices(s, K, per_kv_head, rng);
        break;
      }
    }
  }
  return out;
}

}  // namespace flexjit::gpu_test
