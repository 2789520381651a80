// Token lists (TokenIndices) on CUDA kernels, planned without a GPU: every forward call of such a
// program, with a KV cache or without, plans the decode kernel; a CTA packs the query heads of one
// token that share a list; splits divide the list's keys, not the sequence's; and the list
// tensor's dtype, rank, shape and length are refused by name before anything is launched. The fake
// pointers are never dereferenced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "api/decode_launch.hpp"
#include "api/generate.hpp"
#include "api/program_impl.hpp"
#include "flexjit/error.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using codegen::EntryRole;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const api::DeviceFacts kH200{"sm_90a", 132, 233472};

void* fake(std::uintptr_t slot) { return reinterpret_cast<void*>(0x30000000u + slot * 0x1000000u); }

const Program& token_causal() {
  static const Program p = Program::from_source(
      "selected: TokenIndices\n\ndef mask_mod(b, h, q_idx, kv_idx):\n    return q_idx >= kv_idx\n", "dsa.py");
  return p;
}

// A plain forward call: q/out [B, Hq, Tq, D], k/v [B, Hkv, Tkv, D], the list bound as given.
struct PlainCall {
  int B = 2, Hq = 8, Hkv = 2, Tq = 17, Tkv = 1000, D = 64;
  TensorView list;

  codegen::GeneratedKernel kernel() const {
    return api::generate(detail::ProgramAccess::impl(token_causal()), CompileOptions{.head_dim = D, .arch = "sm_90a", .family = "decode"});
  }
  api::DecodePlan plan(const ForwardOptions& extra = {}) const {
    const codegen::GeneratedKernel g = kernel();
    ForwardOptions options = extra;
    options.bind["selected"] = list;
    const TensorView q = TensorView::contiguous(fake(1), bf16, {B, Hq, Tq, D});
    const TensorView k = TensorView::contiguous(fake(2), bf16, {B, Hkv, Tkv, D});
    const TensorView v = TensorView::contiguous(fake(3), bf16, {B, Hkv, Tkv, D});
    const TensorView out = TensorView::contiguous(fake(4), bf16, {B, Hq, Tq, D});
    return api::plan_decode(g.entry(), g.params, detail::ProgramAccess::impl(token_causal()).ir, g.target, bf16,
                            {q, k, v, out}, options);
  }
};

TensorView list_of(std::vector<std::int64_t> shape, DType dtype = i32) {
  return TensorView::contiguous(fake(20), dtype, std::move(shape));
}

TEST(TokenListLaunch, ThePlainForwardCallPlansTheDecodeKernelWithoutACache) {
  PlainCall c;
  c.list = list_of({2, 2, 17, 64});  // one list per kv head: the group's 4 heads of a token share it
  const codegen::GeneratedKernel g = c.kernel();
  EXPECT_EQ(g.family, "decode");
  api::DecodePlan plan = c.plan();
  EXPECT_EQ(plan.args.cache.kv_lens, nullptr);  // every sequence has Tkv keys
  EXPECT_EQ(plan.args.cache.page_table, nullptr);
  EXPECT_EQ(plan.args.Tkv, 1000);
  EXPECT_EQ(plan.args.group, 4);
  EXPECT_EQ(plan.args.rows_per_cta, 4);  // one token per CTA
  EXPECT_EQ(plan.args.row_groups, 17);
  EXPECT_EQ(plan.kv_heads_x_row_groups, 34);
  EXPECT_EQ(plan.keys_per_row, 64);
  const api::LaunchPlan p = api::decode_launch_plan(g, plan, kH200);
  EXPECT_EQ(p.steps[0].entry, EntryRole::main);
  EXPECT_EQ(p.steps[0].config.grid[1], 34u);
  EXPECT_EQ(p.steps[0].config.grid[2], 2u);
}

TEST(TokenListLaunch, RowsPerCtaFollowTheListsHeads) {
  PlainCall c;
  c.list = list_of({2, 8, 17, 64});  // a list per query head: one row per CTA
  EXPECT_EQ(c.plan().args.rows_per_cta, 1);
  c.list = list_of({2, 1, 17, 64});  // one list for every head
  EXPECT_EQ(c.plan().args.rows_per_cta, 4);
  c.Hq = 48, c.Hkv = 2;  // a group of 24: 12 heads of one token per CTA, two CTAs per token
  c.list = list_of({2, 2, 17, 64});
  const api::DecodePlan plan = c.plan();
  EXPECT_EQ(plan.args.rows_per_cta, 12);
  EXPECT_EQ(plan.args.row_groups, 2 * 17);
}

// Splits divide the K listed keys: a short list in a long cache is not cut into splits of nothing.
TEST(TokenListLaunch, SplitsFollowTheListLengthNotTheSequence) {
  PlainCall c;
  c.B = 1, c.Hq = 8, c.Hkv = 8, c.Tq = 1, c.Tkv = 131072;
  c.list = list_of({1, 8, 1, 64});
  api::DecodePlan plan = c.plan();
  api::decode_launch_plan(c.kernel(), plan, kH200);
  EXPECT_EQ(plan.args.splits, 1);
}

// Long lists in a small grid are split towards one wave of CTAs, each split keeping two chunks of
// 32 keys per warp, and merged by the combine entry.
TEST(TokenListLaunch, LongListsInASmallGridAreSplitTowardsOneWave) {
  PlainCall c;
  c.B = 64, c.Hq = 16, c.Hkv = 1, c.Tq = 1, c.Tkv = 32768, c.D = 128;  // one CTA per multiprocessor, 8 warps
  c.list = list_of({64, 1, 1, 2048});  // 64 CTAs of 16 heads each
  api::DecodePlan plan = c.plan();
  const api::LaunchPlan p = api::decode_launch_plan(c.kernel(), plan, kH200);
  EXPECT_EQ(plan.args.splits, kH200.multiprocessors / 64);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[1].entry, EntryRole::combine);
  c.B = 1, c.Hq = 8, c.Hkv = 8;  // 8 CTAs: 64 chunks of 32 keys cut into splits of 2 per warp
  c.list = list_of({1, 8, 1, 2048});
  plan = c.plan();
  const codegen::GeneratedKernel g = c.kernel();
  api::decode_launch_plan(g, plan, kH200);
  EXPECT_EQ(plan.args.splits, 2048 / g.tile.block_n / (2 * g.tile.warps));
}

// More (kv head, row group) slots than grid.y holds fold into grid.x: a prefill of 32768 tokens of
// 128 query heads, 64 a CTA, is 65536 slots.
TEST(TokenListLaunch, SlotsPastGridYFoldIntoGridX) {
  PlainCall c;
  c.B = 1, c.Hq = 128, c.Hkv = 1, c.Tq = 32768, c.Tkv = 32768, c.D = 576;
  c.list = list_of({1, 1, 32768, 2048});
  const codegen::GeneratedKernel g = api::generate(detail::ProgramAccess::impl(token_causal()),
                                                   CompileOptions{.head_dim = 576, .head_dim_v = 512, .arch = "sm_90a"});
  EXPECT_EQ(g.family, "sm90_mla");  // MLA's absorbed head dims on sm_90a
  const TensorView q = TensorView::contiguous(fake(1), bf16, {1, 128, 32768, 576});
  const TensorView k = TensorView::contiguous(fake(2), bf16, {1, 1, 32768, 576});
  const TensorView v{fake(2), bf16, {1, 1, 32768, 512}, k.effective_strides(), k.device};  // k's first columns
  const TensorView out = TensorView::contiguous(fake(4), bf16, {1, 128, 32768, 512});
  ForwardOptions options;
  options.bind["selected"] = c.list;
  api::DecodePlan plan = api::plan_decode(g.entry(), g.params, detail::ProgramAccess::impl(token_causal()).ir,
                                          g.target, bf16, {q, k, v, out}, options);
  EXPECT_EQ(plan.args.rows_per_cta, 64);
  EXPECT_EQ(plan.kv_heads_x_row_groups, 65536);
  const api::LaunchPlan p = api::decode_launch_plan(g, plan, kH200);
  EXPECT_EQ(plan.args.splits, 1);  // 65536 CTAs fill the device many times
  EXPECT_EQ(p.steps[0].config.grid[0], 2u);
  EXPECT_EQ(p.steps[0].config.grid[1], 32768u);
}

TEST(TokenListLaunch, AKvCacheCallKeepsItsLengths) {
  PlainCall c;
  c.Tq = 2;
  c.list = list_of({2, 2, 2, 8});
  ForwardOptions options;
  options.kv_lens = TensorView::contiguous(fake(12), i32, {2});
  const api::DecodePlan plan = c.plan(options);
  EXPECT_EQ(plan.args.cache.kv_lens, fake(12));
}

TEST(TokenListLaunch, TheListIsCheckedByName) {
  PlainCall c;
  c.list = list_of({2, 2, 17, 64}, i64);
  EXPECT_THAT(error_of([&] { c.plan(); }), HasSubstr("'selected' expects TokenIndices (an int32 tensor"));
  c.list = list_of({2, 2, 17});
  EXPECT_THAT(error_of([&] { c.plan(); }), HasSubstr("'selected' expects TokenIndices (an int32 tensor"));
  c.list = list_of({2, 3, 17, 64});
  EXPECT_THAT(error_of([&] { c.plan(); }),
              HasSubstr("token indices 'selected': expected shape [B=2, H (Hq=8, Hkv=2 or 1), Tq=17, K], got "
                        "[2, 3, 17, 64]"));
  c.list = list_of({2, 2, 16, 64});
  EXPECT_THAT(error_of([&] { c.plan(); }), HasSubstr("expected shape [B=2, H (Hq=8, Hkv=2 or 1), Tq=17, K]"));
  c.list = list_of({2, 2, 17, 4097});
  try {
    c.plan();
    FAIL() << "a list of 4097 keys per row was planned";
  } catch (const UnsupportedError& e) {
    EXPECT_THAT(e.what(), HasSubstr("token indices 'selected' list K=4097 keys per query row; the CUDA kernel takes at "
                                    "most 4096 (cpu kernels take any K)"));
  }
  c.list = list_of({2, 2, 17, 4096});
  EXPECT_NO_THROW(c.plan());
  ForwardOptions unbound;
  const codegen::GeneratedKernel g = c.kernel();
  EXPECT_THAT(error_of([&] {
                const TensorView q = TensorView::contiguous(fake(1), bf16, {2, 8, 17, 64});
                const TensorView kv = TensorView::contiguous(fake(2), bf16, {2, 2, 1000, 64});
                api::plan_decode(g.entry(), g.params, detail::ProgramAccess::impl(token_causal()).ir, g.target, bf16,
                                 {q, kv, kv, q}, unbound);
              }),
              HasSubstr("token indices 'selected' are not bound (declared `selected: TokenIndices`)"));
}

// A CUDA Kernel of such a program: its main kernel is the decode kernel, and its backward is
// refused by the declaration's line before any argument is looked at.
TEST(TokenListLaunch, TheCudaBackwardIsRefusedByName) {
  const Kernel k = engine().compile(token_causal(), {.head_dim = 64, .arch = "sm_80", .family = "decode"});
  EXPECT_EQ(k.family(), "decode");
  const std::string e = error_of([&] { k.compile_backward(); });
  EXPECT_THAT(e, HasSubstr("dsa.py:1: the backward of token-level selection ('selected: TokenIndices') runs on cpu "
                           "kernels only for now (Device::cpu()): no CUDA kernel family serves it yet"));
}

}  // namespace
}  // namespace flexjit::test
