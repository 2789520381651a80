#include "tests/support/decode_case.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "api/program_impl.hpp"

namespace flexjit::test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

void fill_normal(float* x, std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.f, 1.f);
  for (std::size_t i = 0; i < n; ++i) x[i] = dist(rng);
}

float round_to(DType dtype, float x) {
  if (dtype == DType::bf16) return bf16_bits_to_float(float_to_bf16_bits(x));
  if (dtype == DType::fp16) return fp16_bits_to_float(float_to_fp16_bits(x));
  return x;
}

}  // namespace

DecodeShape prefill_chunk(DecodeShape s) {
  s.Tq = 100;
  s.lens = {137, 100, 300, 229};
  return s;
}

std::string decode_layout_name(const DecodeShape& s) {
  return "Hq" + std::to_string(s.Hq) + "_Hkv" + std::to_string(s.Hkv) + "_Tq" + std::to_string(s.Tq) +
         (s.page_size ? "_page" + std::to_string(s.page_size) : "_contiguous") +
         (s.q_offset || s.kv_offset ? "_at" + std::to_string(s.q_offset) + "x" + std::to_string(s.kv_offset) : "") +
         (s.v_in_k ? "_vink" : "");
}

void PrintTo(const DecodeShape& s, std::ostream* os) {
  *os << decode_layout_name(s) << "_" << dtype_name(s.dtype) << "_d" << s.D;
  if (s.dv() != s.D) *os << "v" << s.Dv;
  *os << "_B" << s.lens.size();
}

DecodeCase::DecodeCase(const DecodeShape& s)
    : shape(s), B(static_cast<int>(s.lens.size())), Hq(s.Hq), Hkv(s.Hkv), Tq(s.Tq), D(s.D), Dv(s.dv()),
      page_size(s.page_size), lens(s.lens) {
  std::mt19937 rng(static_cast<unsigned>(Hq * 1000 + Hkv * 100 + Tq * 10 + page_size));
  q.resize(static_cast<std::size_t>(B) * Hq * Tq * D);
  fill_normal(q.data(), q.size(), rng);
  const int longest = *std::max_element(lens.begin(), lens.end());
  if (paged()) {
    std::vector<int> pages_of(static_cast<std::size_t>(B));
    for (int b = 0; b < B; ++b) pages_of[b] = (std::max(0, lens[b]) + page_size - 1) / page_size;
    max_pages = *std::max_element(pages_of.begin(), pages_of.end()) + 1;  // a spare column of garbage
    num_pages = std::accumulate(pages_of.begin(), pages_of.end(), 0) + 3;  // three pages nobody uses
    Tkv = max_pages * page_size;
    std::vector<std::int32_t> ids(static_cast<std::size_t>(num_pages));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    table.assign(static_cast<std::size_t>(B) * max_pages, 0);
    std::size_t next = 0;
    for (int b = 0; b < B; ++b)
      for (int p = 0; p < max_pages; ++p)
        table[static_cast<std::size_t>(b) * max_pages + p] = p < pages_of[b] ? ids[next++] : (p % 2 ? -7 : 1 << 30);
    const std::size_t slots = static_cast<std::size_t>(num_pages) * page_size * Hkv;
    k.assign(slots * D, kNaN);
    v.assign(slots * Dv, kNaN);
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < lens[b]; ++j)
        for (int g = 0; g < Hkv; ++g) {
          const std::size_t page = static_cast<std::size_t>(table[static_cast<std::size_t>(b) * max_pages + j / page_size]);
          const std::size_t slot = (page * page_size + j % page_size) * Hkv + g;
          fill_normal(k.data() + slot * D, static_cast<std::size_t>(D), rng);
          fill_normal(v.data() + slot * Dv, static_cast<std::size_t>(Dv), rng);
        }
  } else {
    Tkv = longest + s.spare_keys;
    const std::size_t rows = static_cast<std::size_t>(B) * Hkv * Tkv;
    k.resize(rows * D);
    v.resize(rows * Dv);
    fill_normal(k.data(), k.size(), rng);
    fill_normal(v.data(), v.size(), rng);
    for (int b = 0; b < B; ++b)
      for (int g = 0; g < Hkv; ++g)
        for (int j = std::max(0, lens[b]); j < Tkv; ++j) {
          const std::size_t row = (static_cast<std::size_t>(b) * Hkv + g) * Tkv + j;
          std::fill_n(k.begin() + static_cast<std::ptrdiff_t>(row * D), D, kNaN);
          std::fill_n(v.begin() + static_cast<std::ptrdiff_t>(row * Dv), Dv, kNaN);
        }
  }
  if (s.dtype != DType::f32)
    for (std::vector<float>* x : {&q, &k, &v})
      for (float& e : *x) e = round_to(s.dtype, e);
  if (s.v_in_k)  // the oracle's own copy of k's first Dv columns
    for (std::size_t row = 0; row < k.size() / static_cast<std::size_t>(D); ++row)
      std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(row * D), Dv, v.begin() + static_cast<std::ptrdiff_t>(row * Dv));
}

std::vector<std::int64_t> DecodeCase::cache_shape(int columns) const {
  if (paged()) return {num_pages, page_size, Hkv, columns};
  return {B, Hkv, Tkv, columns};
}

std::vector<std::uint16_t> DecodeCase::elements(const std::vector<float>& x) const {
  std::vector<std::uint16_t> bits(x.size());
  const bool bf = shape.dtype == DType::bf16;
  for (std::size_t i = 0; i < x.size(); ++i) bits[i] = bf ? float_to_bf16_bits(x[i]) : float_to_fp16_bits(x[i]);
  return bits;
}

ReferenceOutputs DecodeCase::reference(const Program& p, const ir::Env& env) const {
  ReferenceInputs in{q.data(), k.data(), v.data(), B, Hq, Hkv, Tq, Tkv, D};
  in.Dv = Dv;
  in.scale = 1.0 / std::sqrt(static_cast<double>(D));
  in.env = &env;
  in.kv_lens = lens.data();
  in.q_offset = shape.q_offset, in.kv_offset = shape.kv_offset;
  if (paged()) in.page_table = table.data(), in.page_size = page_size, in.max_pages = max_pages;
  return reference_attention(detail::ProgramAccess::impl(p).ir, in);
}

}  // namespace flexjit::test
