// A block-sparse program's BlockIndices binding is checked on the host before any launch: bound,
// int32, rank 4, shape [B, Hq or Hkv, ceil(Tq / q_block), K >= 1], K contiguous, on the device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/program_impl.hpp"
#include "api/binding_resolve.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

const Kernel& topk_kernel() {
  static const Kernel k = engine().compile(example("topk_causal"), {.head_dim = 64, .dtype = bf16, .arch = "sm_90a"});
  return k;
}

void* fake(int i) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(0x7f0000000000ULL + i * 0x100000ULL)); }

// q/out [2, 8, 128, 64], k/v [2, 4, 128, 64]: Tq = 128 is two query blocks of 64.
std::string forward_error(const std::optional<TensorView>& selected) {
  Args a = good_args();
  ForwardOptions o{.lse = a.lse};
  if (selected) o.bind["selected"] = *selected;
  return error_of([&] { topk_kernel().forward(a.q, a.k, a.v, a.out, o); });
}

TEST(BlockIndices, MustBeBound) {
  EXPECT_THAT(forward_error(std::nullopt), HasSubstr("block indices 'selected' are not bound"));
}

TEST(BlockIndices, Int32) {
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i64, {2, 8, 2, 4})),
              HasSubstr("'selected' expects BlockIndices[64, 64]"));
}

TEST(BlockIndices, Rank4) {
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {2, 8, 2})), HasSubstr("'selected' expects"));
}

TEST(BlockIndices, Shape) {
  const std::string want = "block indices 'selected': expected shape [B=2, H (Hq=8 or Hkv=4), ceil(Tq / 64)=2, K]";
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {2, 8, 3, 4})), HasSubstr(want + ", got [2, 8, 3, 4]"));
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {1, 8, 2, 4})), HasSubstr(want));
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {2, 2, 2, 4})), HasSubstr(want));
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {2, 8, 2, 0})), HasSubstr(want + ", got [2, 8, 2, 0]"));
}

TEST(BlockIndices, KContiguous) {
  const TensorView t{fake(7), i32, {2, 8, 2, 4}, {64, 8, 32, 2}, Device::cuda(0)};
  EXPECT_THAT(forward_error(t), HasSubstr("block indices 'selected': the K dimension must be contiguous (stride 1), got 2"));
}

TEST(BlockIndices, OnTheDevice) {
  EXPECT_THAT(forward_error(TensorView::contiguous(fake(7), i32, {2, 8, 2, 4}, Device::cpu())),
              HasSubstr("'selected': is on the cpu"));
}

// Per query head (group 1) or per kv head (group Hq / Hkv: the kernel divides h by it).
TEST(BlockIndices, HeadGroup) {
  const Program p = example("topk_causal");
  const ir::Program& ir = detail::ProgramAccess::impl(p).ir;
  for (auto [H, group] : {std::pair{8, 1}, std::pair{4, 2}}) {
    api::Problems problems;
    const TensorView t = TensorView::contiguous(fake(7), i32, {2, H, 2, 4});
    const ir::Env env = api::resolve_bindings(ir, {{"selected", t}}, Device::cuda(0), problems);
    EXPECT_EQ(api::check_selection(ir, env, 2, 8, 4, 128, problems), group);
    EXPECT_TRUE(problems.empty()) << problems.list().front();
  }
}

}  // namespace
}  // namespace flexjit::test
