// MLA's absorbed decode on cpu kernels, as the tests build it: one kv head of D = 576 columns
// (512 latent + 64 rope) in pages of 16 rows, v the first Dv = 512 columns of the same pages (a
// view with k's strides: no copy), kv_lens and a page table; the float64 oracle reads its own
// copy of those columns.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::test {

struct AbsorbedMlaDecode {
  static constexpr int D = 576, Dv = 512, kPage = 16;
  int B, Hq, Tq, pages, max_pages;
  std::vector<std::int32_t> lens, table;  // [B], [B, max_pages]
  std::mt19937 rng;                       // drew q and the pages; a test may go on drawing
  std::vector<float> q, key_pages, out;

  AbsorbedMlaDecode(int B_, int Hq_, int Tq_, int pages_, std::vector<std::int32_t> lens_,
                    std::vector<std::int32_t> table_, unsigned seed)
      : B(B_), Hq(Hq_), Tq(Tq_), pages(pages_), max_pages(static_cast<int>(table_.size()) / B_),
        lens(std::move(lens_)), table(std::move(table_)), rng(seed),
        q(std::size_t{1} * B * Hq * Tq * D), key_pages(std::size_t{1} * pages * kPage * D),
        out(std::size_t{1} * B * Hq * Tq * Dv) {
    std::normal_distribution<float> normal;
    for (auto* x : {&q, &key_pages})
      for (float& e : *x) e = normal(rng);
  }

  // The forward of kernel k (head dims D and Dv) with `o` plus the cache's kv_lens and page table.
  void run(const Kernel& k, ForwardOptions o) {
    const std::vector<std::int64_t> strides = {kPage * D, D, D, 1};
    o.kv_lens = TensorView::contiguous(lens.data(), i32, {B}, Device::cpu());
    o.page_table = TensorView::contiguous(table.data(), i32, {B, max_pages}, Device::cpu());
    k.forward(TensorView::contiguous(q.data(), f32, {B, Hq, Tq, D}, Device::cpu()),
              TensorView{key_pages.data(), f32, {pages, kPage, 1, D}, strides, Device::cpu()},
              TensorView{key_pages.data(), f32, {pages, kPage, 1, Dv}, strides, Device::cpu()},
              TensorView::contiguous(out.data(), f32, {B, Hq, Tq, Dv}, Device::cpu()), o);
  }

  // The oracle on the same inputs and bindings.
  ReferenceOutputs reference(const ir::Program& program, const ir::Env& env) const {
    std::vector<float> v(std::size_t{1} * pages * kPage * Dv);
    for (std::size_t row = 0; row < std::size_t{1} * pages * kPage; ++row)
      std::copy_n(key_pages.begin() + row * D, Dv, v.begin() + row * Dv);
    ReferenceInputs in{q.data(), key_pages.data(), v.data(), B, Hq, 1, Tq, max_pages * kPage, D};
    in.Dv = Dv;
    in.scale = 1.0 / std::sqrt(static_cast<double>(D));
    in.kv_lens = lens.data();
    in.page_table = table.data(), in.page_size = kPage, in.max_pages = max_pages;
    in.env = &env;
    return reference_attention(program, in);
  }
};

}  // namespace flexjit::test
