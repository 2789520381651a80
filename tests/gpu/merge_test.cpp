// merge_attention on CUDA tensors against the host merge (api/merge.cpp, in double) on the same
// parts: bf16, fp16 and f32 outs mixed, a strided out, rows no part kept (-inf everywhere), a row
// with a NaN lse, more parts than one launch takes (rounds), and the result in place over a part.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "flexjit/half.hpp"
#include "flexjit/merge.hpp"
#include "tests/gpu/gpu_support.hpp"

namespace flexjit::gpu_test {
namespace {

constexpr int B = 2, H = 3, T = 37, D = 72;
constexpr std::int64_t kRows = B * H * T;
constexpr float kInf = std::numeric_limits<float>::infinity();

// One part on both sides: host floats (what the device holds, rounded to its dtype) and the device copy.
struct Part {
  DType dtype;
  std::vector<float> out, lse;
  std::unique_ptr<DeviceBuffer> out_dev, lse_dev;
  TensorView host_out() { return TensorView::contiguous(out.data(), DType::f32, {B, H, T, D}, Device::cpu()); }
  TensorView host_lse() { return TensorView::contiguous(lse.data(), DType::f32, {B, H, T}, Device::cpu()); }
  TensorView dev_out() const { return TensorView::contiguous(out_dev->get(), dtype, {B, H, T, D}); }
  TensorView dev_lse() const { return TensorView::contiguous(lse_dev->get(), DType::f32, {B, H, T}); }
};

float round_to(DType d, float x) {
  if (d == DType::bf16) return bf16_bits_to_float(float_to_bf16_bits(x));
  if (d == DType::fp16) return fp16_bits_to_float(float_to_fp16_bits(x));
  return x;
}

Part random_part(DType dtype, std::mt19937_64& rng) {
  std::normal_distribution<float> x(0.f, 1.f);
  std::uniform_real_distribution<float> l(-3.f, 6.f);
  Part p{dtype, std::vector<float>(kRows * D), std::vector<float>(kRows), nullptr, nullptr};
  for (float& v : p.out) v = round_to(dtype, x(rng));
  for (float& v : p.lse) v = (rng() % 7 == 0) ? -kInf : l(rng);  // some rows this part kept nothing of
  std::vector<std::uint16_t> half(p.out.size());
  for (std::size_t i = 0; i < half.size(); ++i)
    half[i] = dtype == DType::bf16 ? float_to_bf16_bits(p.out[i]) : float_to_fp16_bits(p.out[i]);
  p.out_dev = std::make_unique<DeviceBuffer>(p.out.size() * dtype_size(dtype));
  if (dtype == DType::f32)
    p.out_dev->upload(p.out.data(), p.out.size() * 4);
  else
    p.out_dev->upload(half.data(), half.size() * 2);
  p.lse_dev = std::make_unique<DeviceBuffer>(p.lse.size() * 4);
  p.lse_dev->upload(p.lse.data(), p.lse.size() * 4);
  return p;
}

// Every row -inf in every part: rows 0..T-1. Row T: a NaN lse in part 0.
void special_rows(std::vector<Part>& parts) {
  for (Part& p : parts) {
    for (int r = 0; r < T; ++r) p.lse[static_cast<std::size_t>(r)] = -kInf;
    p.lse_dev->upload(p.lse.data(), p.lse.size() * 4);
  }
  parts[0].lse[T] = std::numeric_limits<float>::quiet_NaN();
  parts[0].lse_dev->upload(parts[0].lse.data(), parts[0].lse.size() * 4);
}

struct Merged {
  std::vector<float> out, lse;
};

Merged host_merge(std::vector<Part>& parts) {
  Merged m{std::vector<float>(kRows * D), std::vector<float>(kRows)};
  std::vector<AttentionPart> views;
  for (Part& p : parts) views.push_back({p.host_out(), p.host_lse()});
  merge_attention(views, TensorView::contiguous(m.out.data(), DType::f32, {B, H, T, D}, Device::cpu()),
                  TensorView::contiguous(m.lse.data(), DType::f32, {B, H, T}, Device::cpu()));
  return m;
}

// The device result against the host's: out within `tol` relative to the row's scale, lse within
// 1e-5 relative, -inf and NaN where the host has them.
void expect_close(const Merged& want, const std::vector<float>& out, const std::vector<float>& lse, double tol) {
  int bad = 0;
  for (std::int64_t r = 0; r < kRows; ++r) {
    const float w = want.lse[static_cast<std::size_t>(r)], g = lse[static_cast<std::size_t>(r)];
    const bool ok_lse = std::isnan(w) ? std::isnan(g) : (std::isinf(w) ? g == w : std::abs(g - w) <= 1e-5 * (1 + std::abs(w)));
    bool ok_out = true;
    for (int d = 0; d < D; ++d) {
      const float wo = want.out[static_cast<std::size_t>(r * D + d)], go = out[static_cast<std::size_t>(r * D + d)];
      ok_out &= std::isnan(wo) ? std::isnan(go) : std::abs(go - wo) <= tol * (1 + std::abs(wo));
    }
    if ((!ok_lse || !ok_out) && bad++ < 5) ADD_FAILURE() << "row " << r << ": lse " << g << " want " << w;
  }
  EXPECT_EQ(bad, 0);
}

std::vector<float> download_floats(const DeviceBuffer& b, DType dtype, std::size_t n) {
  std::vector<float> out(n);
  if (dtype == DType::f32) {
    b.download(out.data(), n * 4);
    return out;
  }
  std::vector<std::uint16_t> half(n);
  b.download(half.data(), n * 2);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = dtype == DType::bf16 ? bf16_bits_to_float(half[i]) : fp16_bits_to_float(half[i]);
  return out;
}

class MergeOnGpu : public GpuTest {};

TEST_F(MergeOnGpu, MatchesTheHostMerge) {
  std::mt19937_64 rng(5);
  for (int n : {1, 2, 5, 16, 17, 40}) {  // 17 and 40: more than one launch
    SCOPED_TRACE(testing::Message() << n << " parts");
    std::vector<Part> parts;
    for (int i = 0; i < n; ++i) parts.push_back(random_part(i % 3 == 0 ? DType::bf16 : (i % 3 == 1 ? DType::fp16 : DType::f32), rng));
    special_rows(parts);
    const Merged want = host_merge(parts);
    // A strided f32 out: [B, H, T, D] inside [B, H, T, D + 8].
    DeviceBuffer out(kRows * (D + 8) * 4), lse(kRows * 4);
    out.fill_bytes(0xFF);
    lse.fill_bytes(0xFF);
    std::vector<AttentionPart> views;
    for (const Part& p : parts) views.push_back({p.dev_out(), p.dev_lse()});
    const TensorView out_view{out.get(), DType::f32, {B, H, T, D}, {H * T * (D + 8), T * (D + 8), D + 8, 1}, Device::cuda(0)};
    merge_attention(views, out_view, TensorView::contiguous(lse.get(), DType::f32, {B, H, T}));
    synchronize();
    std::vector<float> wide = download_floats(out, DType::f32, kRows * (D + 8)), got(kRows * D);
    for (std::int64_t r = 0; r < kRows; ++r)
      for (int d = 0; d < D; ++d) got[static_cast<std::size_t>(r * D + d)] = wide[static_cast<std::size_t>(r * (D + 8) + d)];
    expect_close(want, got, download_floats(lse, DType::f32, kRows), 1e-5);
    for (int r = 0; r < T; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r * D)], 0.f);  // no part kept these rows
  }
}

TEST_F(MergeOnGpu, InPlaceOverTheFirstPart) {
  std::mt19937_64 rng(6);
  std::vector<Part> parts;
  for (DType d : {DType::bf16, DType::bf16, DType::fp16}) parts.push_back(random_part(d, rng));
  const Merged want = host_merge(parts);
  std::vector<AttentionPart> views;
  for (const Part& p : parts) views.push_back({p.dev_out(), p.dev_lse()});
  merge_attention(views, parts[0].dev_out(), parts[0].dev_lse());
  synchronize();
  // The result rounded once to bf16.
  expect_close(want, download_floats(*parts[0].out_dev, DType::bf16, kRows * D),
               download_floats(*parts[0].lse_dev, DType::f32, kRows), 1e-2);
}

}  // namespace
}  // namespace flexjit::gpu_test
