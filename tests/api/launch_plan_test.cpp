// The launch plans every pass answers (api/launch_plan.hpp): which entry points run in which
// order, over which grids and shared memory, and how the workspace is carved and pointed at,
// computed from checked arguments and a device's facts with no driver. The fake pointers are
// never dereferenced.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "api/attention_launch.hpp"
#include "api/backward_launch.hpp"
#include "api/chunk_launch.hpp"
#include "api/decode_launch.hpp"
#include "api/generate.hpp"
#include "api/program_impl.hpp"
#include "api/tile_map_launch.hpp"
#include "flexjit/error.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using codegen::EntryRole;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An H200's: 132 multiprocessors, 228 KB of shared memory each.
const api::DeviceFacts kH200{"sm_90a", 132, 233472};

void* fake(std::uintptr_t slot) { return reinterpret_cast<void*>(0x30000000u + slot * 0x1000000u); }

codegen::GeneratedKernel generated(const std::string& example_name, int head_dim, compiler::KernelPass pass,
                                   const std::string& family = "", bool score_grads = false) {
  CompileOptions options{.head_dim = head_dim, .arch = "sm_90a"};
  options.family = family;
  compiler::KernelTarget target = api::forward_target(options);
  target.pass = pass;
  target.score_grads = score_grads;
  return api::generate(detail::ProgramAccess::impl(example(example_name)), target);
}

const ir::Program& ir_of(const std::string& example_name) {
  static std::map<std::string, Program> programs;
  auto it = programs.find(example_name);
  if (it == programs.end()) it = programs.emplace(example_name, example(example_name)).first;
  return detail::ProgramAccess::impl(it->second).ir;
}

// q/out [B, Hq, T, D], k/v [B, Hkv, T, D], lse [B, Hq, T] at distinct fake device addresses.
struct Tensors {
  Tensors(int B, int Hq, int Hkv, int T, int D)
      : q(TensorView::contiguous(fake(1), bf16, {B, Hq, T, D})),
        k(TensorView::contiguous(fake(2), bf16, {B, Hkv, T, D})),
        v(TensorView::contiguous(fake(3), bf16, {B, Hkv, T, D})),
        out(TensorView::contiguous(fake(4), bf16, {B, Hq, T, D})),
        lse(TensorView::contiguous(fake(5), f32, {B, Hq, T})),
        dout(TensorView::contiguous(fake(6), bf16, {B, Hq, T, D})),
        dq(TensorView::contiguous(fake(7), bf16, {B, Hq, T, D})),
        dk(TensorView::contiguous(fake(8), bf16, {B, Hkv, T, D})),
        dv(TensorView::contiguous(fake(9), bf16, {B, Hkv, T, D})) {}
  TensorView q, k, v, out, lse, dout, dq, dk, dv;
  api::ForwardTensors forward() const { return {q, k, v, out}; }
  api::BackwardTensors backward() const { return {q, k, v, out, lse, dout, dq, dk, dv}; }
};

std::vector<EntryRole> roles(const api::LaunchPlan& p) {
  std::vector<EntryRole> r;
  for (const api::LaunchStep& s : p.steps) r.push_back(s.entry);
  return r;
}

std::vector<unsigned> grid(const api::LaunchStep& s) { return {s.config.grid[0], s.config.grid[1], s.config.grid[2]}; }

// Where each workspace pointer lands, by the field's address.
std::size_t offset_of(const api::LaunchPlan& p, const void* field) {
  for (const api::LaunchPlan::WorkspacePointer& w : p.workspace_pointers)
    if (w.field == field) return w.offset;
  ADD_FAILURE() << "no workspace pointer for that field";
  return 0;
}

TEST(LaunchPlan, Sm90ForwardRunsOneWaveOfPersistentCtasOverAZeroedCounter) {
  const codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Forward);
  ASSERT_TRUE(g.tile.persistent);
  const Tensors t(2, 16, 4, 4096, 128);  // 32 query tiles x 16 heads x 2 = 1024 tiles
  api::ForwardPlan plan = api::plan_forward(g, ir_of("causal"), bf16, t.forward(), {});
  const api::LaunchPlan p = api::forward_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::main));
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(132u * g.tile.min_blocks_per_sm, 1u, 1u));
  EXPECT_EQ(p.steps[0].config.block[0], 384u);
  EXPECT_EQ(p.steps[0].config.shared_bytes, static_cast<unsigned>(g.main_entry().shared_bytes));
  EXPECT_EQ(p.steps[0].args.size(), 3u);  // args, params, tensor maps
  EXPECT_TRUE(p.in_context) << "the tensor maps are encoded in the launch's context";
  // The counter: 4 bytes of workspace, zeroed before the launch, that tile_counter points at.
  EXPECT_EQ(p.workspace_bytes, sizeof(int));
  EXPECT_EQ(offset_of(p, &plan.args.tile_counter), 0u);
  ASSERT_EQ(p.zero.size(), 1u);
  EXPECT_EQ(p.zero[0].data, nullptr);
  EXPECT_EQ(p.zero[0].words, 1u);

  // Fewer query tiles than a wave: one CTA each.
  const Tensors small(1, 2, 2, 300, 128);  // 3 query tiles x 2 heads
  api::ForwardPlan few = api::plan_forward(g, ir_of("causal"), bf16, small.forward(), {});
  EXPECT_THAT(grid(api::forward_launch_plan(g, few, kH200).steps[0]), ElementsAre(6u, 1u, 1u));
}

TEST(LaunchPlan, OneCtaPerQueryTileNeedsNoWorkspace) {
  const codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Forward, "sm80_fwd");
  const Tensors t(3, 8, 2, 1000, 128);
  api::ForwardPlan plan = api::plan_forward(g, ir_of("causal"), bf16, t.forward(), {});
  const api::LaunchPlan p = api::forward_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::main));
  const unsigned q_tiles = static_cast<unsigned>((1000 + g.tile.block_m - 1) / g.tile.block_m);
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(q_tiles, 8u, 3u));
  EXPECT_EQ(p.steps[0].config.block[0], static_cast<unsigned>(g.tile.threads()));
  EXPECT_EQ(p.steps[0].args.size(), 2u);
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_TRUE(p.zero.empty());
  EXPECT_FALSE(p.in_context);
  // The common block: strides, sizes and the default scale, filled once for every family.
  EXPECT_EQ(plan.args.Tq, 1000);
  EXPECT_EQ(plan.args.k_h, 1000 * 128);
  EXPECT_FLOAT_EQ(plan.args.scale_log2, plan.args.scale * kLog2e);
}

TEST(LaunchPlan, BackwardRunsItsPassesInOrderOverOneWorkspace) {
  const codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Backward);
  const Tensors t(2, 8, 2, 1000, 128);
  api::BackwardPlan plan =
      api::plan_backward(g.entry(), g.params, ir_of("causal"), 128, 128, bf16, t.backward(), BackwardOptions{});
  const api::LaunchPlan p = api::backward_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::prep, EntryRole::main, EntryRole::post));
  const unsigned Tq_pad = static_cast<unsigned>((1000 + g.tile.block_m - 1) / g.tile.block_m * g.tile.block_m);
  EXPECT_EQ(plan.args.Tq_pad, static_cast<int>(Tq_pad));
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(Tq_pad / g.pass_rows, 8u, 2u));
  const unsigned kv_tiles = static_cast<unsigned>((1000 + g.tile.block_n - 1) / g.tile.block_n);
  // B * Hkv = 4 heads fill fewer than the GPU's waves: one group of them all, kv tiles x 4 CTAs.
  EXPECT_THAT(grid(p.steps[1]), ElementsAre(kv_tiles * 2u * 2u, 1u, 1u));
  EXPECT_EQ(plan.args.kv_heads_per_group, 4);
  EXPECT_EQ(p.steps[1].config.shared_bytes, static_cast<unsigned>(g.main_entry().shared_bytes));
  EXPECT_EQ(p.steps[0].config.block[0], static_cast<unsigned>(g.entry_point(EntryRole::prep).threads));
  // dQ's accumulator, lse2 and delta: disjoint, aligned, inside the workspace.
  const std::size_t rows = 2u * 8u * Tq_pad;
  const std::size_t dq = offset_of(p, &plan.args.dq_accum), lse2 = offset_of(p, &plan.args.lse2),
                    delta = offset_of(p, &plan.args.delta);
  EXPECT_EQ(dq, 0u);
  EXPECT_GE(lse2, dq + rows * 128 * sizeof(float));
  EXPECT_GE(delta, lse2 + rows * sizeof(float));
  EXPECT_GE(p.workspace_bytes, delta + rows * sizeof(float));
  for (std::size_t at : {dq, lse2, delta}) EXPECT_EQ(at % 256, 0u);
  EXPECT_TRUE(p.zero.empty()) << "no captured tensor's gradient was asked for";
}

TEST(LaunchPlan, BackwardGroupsOfHeadsFillTheGpuSomeWavesOver) {
  using flexjit::api::backward_grid_groups;
  using flexjit::api::kBackwardGroupWaves;
  static_assert(kBackwardGroupWaves == 4, "the figures below");
  // B = 4, Hkv = 16, T = 4096 in tiles of 128 keys on 132 multiprocessors: ceil(4 * 132 / 32) = 17
  // heads a group asked for; the nearest divisor of 64 is 16.
  EXPECT_EQ(backward_grid_groups(32, 64, 132).heads, 16);
  EXPECT_EQ(backward_grid_groups(32, 64, 132).count, 4);
  EXPECT_EQ(backward_grid_groups(32, 65, 132).heads, 13) << "65 = 5 x 13: five groups of 13";
  EXPECT_EQ(backward_grid_groups(32, 65, 132).count, 5);
  EXPECT_EQ(backward_grid_groups(32, 67, 132).heads, 67) << "a prime: one group (17 / 1 is further than 67 / 17)";
  EXPECT_EQ(backward_grid_groups(8, 4, 132).heads, 4) << "all the heads where they fill fewer waves";
  EXPECT_EQ(backward_grid_groups(8, 4, 132).count, 1);
  EXPECT_EQ(backward_grid_groups(100000, 64, 132).heads, 1) << "one head fills the waves itself";
  EXPECT_EQ(backward_grid_groups(1000, 200000, 132).heads, 4) << "at most 65535 groups: 50000 of 4";
  EXPECT_EQ(backward_grid_groups(1000, 200000, 132).count, 50000);
}

TEST(LaunchPlan, BackwardOfATensorMaskBuildsItsTransposedMapFirst) {
  const codegen::GeneratedKernel g = generated("document", 64, compiler::KernelPass::Backward);
  ASSERT_TRUE(g.has_entry(EntryRole::tile_map));
  const Tensors t(2, 4, 4, 777, 64);
  const TensorView doc_ids = TensorView::contiguous(fake(10), i32, {777});
  BackwardOptions options;
  options.bind = {{"doc_ids", doc_ids}};
  api::BackwardPlan plan = api::plan_backward(g.entry(), g.params, ir_of("document"), 64, 64, bf16, t.backward(), options);
  const api::LaunchPlan p = api::backward_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::prep, EntryRole::tile_map, EntryRole::main, EntryRole::post));
  const int q_tiles = (777 + g.tile.block_m - 1) / g.tile.block_m, kv_tiles = (777 + g.tile.block_n - 1) / g.tile.block_n;
  // A row per kv tile (the mask reads neither b nor h: one map), listing query tiles.
  EXPECT_THAT(grid(p.steps[1]), ElementsAre(static_cast<unsigned>(kv_tiles), 1u, 1u));
  EXPECT_EQ(plan.map_args.n_q_tiles, q_tiles);
  EXPECT_EQ(plan.map_args.n_kv_tiles, kv_tiles);
  EXPECT_EQ(plan.args.tile_map.row_entries, q_tiles);
  EXPECT_EQ(plan.args.tile_map.b_stride, 0);
  EXPECT_EQ(plan.args.tile_map.h_stride, 0);
  // The builder writes where the main kernel reads: counts, then entries after one count a row.
  const std::size_t counts = offset_of(p, &plan.map_args.counts);
  EXPECT_EQ(offset_of(p, &plan.args.tile_map.counts), counts);
  EXPECT_EQ(offset_of(p, &plan.map_args.entries), counts + kv_tiles * sizeof(int));
  EXPECT_EQ(offset_of(p, &plan.args.tile_map.entries), counts + kv_tiles * sizeof(int));
  EXPECT_EQ(p.workspace_bytes, counts + static_cast<std::size_t>(kv_tiles) * (1 + q_tiles) * sizeof(int));
  EXPECT_GT(counts, offset_of(p, &plan.args.delta));
}

// A call that asks for a captured tensor's gradient runs the module whose main kernel scatters
// into it (the grads entry, and no plain main kernel in that module); one that asks for none, the
// module without; a module that does not match the call is an internal error, never a wrong launch.
TEST(LaunchPlan, BackwardScatterZeroesTheGradientAndRunsTheGradsEntry) {
  const codegen::GeneratedKernel g = generated("relative_position_bias", 64, compiler::KernelPass::Backward, "", false);
  const codegen::GeneratedKernel gs = generated("relative_position_bias", 64, compiler::KernelPass::Backward, "", true);
  EXPECT_FALSE(g.has_entry(EntryRole::grads));
  ASSERT_TRUE(gs.has_entry(EntryRole::grads));
  EXPECT_FALSE(gs.has_entry(EntryRole::main));
  const Tensors t(1, 4, 4, 300, 64);
  const TensorView table = TensorView::contiguous(fake(10), f32, {4, 257});
  const TensorView d_table = TensorView::contiguous(fake(11), f32, {4, 257});
  BackwardOptions options;
  options.bind = {{"rel_bias", table}};
  api::BackwardPlan without =
      api::plan_backward(g.entry(), g.params, ir_of("relative_position_bias"), 64, 64, bf16, t.backward(), options);
  EXPECT_FALSE(without.scatter);
  EXPECT_THAT(roles(api::backward_launch_plan(g, without, kH200)),
              ElementsAre(EntryRole::prep, EntryRole::main, EntryRole::post));
  EXPECT_THROW(api::backward_launch_plan(gs, without, kH200), InternalError);
  options.grads = {{"rel_bias", d_table}};
  api::BackwardPlan with =
      api::plan_backward(g.entry(), g.params, ir_of("relative_position_bias"), 64, 64, bf16, t.backward(), options);
  EXPECT_TRUE(with.scatter);
  EXPECT_THROW(api::backward_launch_plan(g, with, kH200), InternalError);
  const api::LaunchPlan p = api::backward_launch_plan(gs, with, kH200);
  EXPECT_THAT(roles(p), ElementsAre(EntryRole::prep, EntryRole::grads, EntryRole::post));
  ASSERT_EQ(p.zero.size(), 1u);
  EXPECT_EQ(p.zero[0].data, d_table.data);
  EXPECT_EQ(p.zero[0].words, 4u * 257u);
}

TEST(LaunchPlan, BackwardGridTooLargeIsRefusedWhilePlanning) {
  const codegen::GeneratedKernel g = generated("causal", 64, compiler::KernelPass::Backward);
  const Tensors t(1, 1, 1, 128, 64);
  api::BackwardPlan plan =
      api::plan_backward(g.entry(), g.params, ir_of("causal"), 64, 64, bf16, t.backward(), BackwardOptions{});
  plan.args.B = 1 << 20;  // with Hkv and Tkv, past 2^31 CTAs
  plan.args.Tkv = 1 << 20;
  const std::string e = error_of([&] { api::backward_launch_plan(g, plan, kH200); });
  EXPECT_THAT(e, HasSubstr("backward CTAs exceed the grid's 2^31 - 1"));
}

// One new token of B sequences against a dense cache of Tkv keys (kv_lens on the device), D = 128.
api::DecodePlan one_token_plan(const codegen::GeneratedKernel& g, int B, int Hq, int Hkv, int Tkv) {
  const Tensors t(B, Hq, Hkv, Tkv, 128);
  ForwardOptions options;
  options.kv_lens = TensorView::contiguous(fake(12), i32, {B});
  const TensorView q1 = TensorView::contiguous(fake(1), bf16, {B, Hq, 1, 128});
  const TensorView out1 = TensorView::contiguous(fake(4), bf16, {B, Hq, 1, 128});
  return api::plan_decode(g.entry(), g.params, ir_of("causal"), g.target, bf16, {q1, t.k, t.v, out1}, options);
}

TEST(LaunchPlan, DecodeSplitsForAWaveAndCombinesThroughTheWorkspace) {
  const codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Decode);
  api::DecodePlan plan = one_token_plan(g, 2, 8, 2, 65536);
  const api::LaunchPlan p = api::decode_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::main, EntryRole::combine));
  EXPECT_GT(plan.args.splits, 1);
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(static_cast<unsigned>(plan.args.splits), 2u, 2u));  // 2 kv heads x 1 row group
  const std::size_t partials = static_cast<std::size_t>(plan.args.splits) * 2 * 8;
  EXPECT_EQ(offset_of(p, &plan.args.part_o), 0u);
  EXPECT_GE(offset_of(p, &plan.args.part_lse), partials * 128 * sizeof(float));
  // A device with one multiprocessor is filled by the grid as it is: no split, no workspace.
  api::DecodePlan single = plan;
  const api::LaunchPlan one = api::decode_launch_plan(g, single, {"sm_90a", 1, 233472});
  EXPECT_THAT(roles(one), ElementsAre(EntryRole::main));
  EXPECT_EQ(single.args.splits, 1);
  EXPECT_EQ(one.workspace_bytes, 0u);
}

// A family whose CTAs share each chunk names the fewest keys a split walks (sm90_mla: 4096): 64
// sequences of 32768 keys, 64 CTAs unsplit, take 8 splits of 4096 keys (four waves of an H200 would
// take more); the per-warp default keeps 64 chunks a warp.
TEST(LaunchPlan, DecodeSplitsKeepTheFamilysFewestKeys) {
  codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Decode);
  api::DecodePlan plan = one_token_plan(g, 64, 1, 1, 32768);
  api::DecodePlan by_warp = plan;
  api::decode_launch_plan(g, by_warp, kH200);
  EXPECT_EQ(by_warp.args.splits, 32768 / g.tile.block_n / (64 * g.tile.warps));
  g.split_min_keys = 4096;
  api::decode_launch_plan(g, plan, kH200);
  EXPECT_EQ(plan.args.splits, 32768 / 4096);
}

// Chunked prefill against pages: the chunk kernel over the forward's grid (persistent on sm_90a at
// D = 128, with its counter), the tensor maps' K and V boxes inside one page (gcd of the kv tile
// and the page size), and the cache's pointers, strides and pool geometry as the kernel reads
// them. 64 new tokens run it; fewer run the decode kernel.
TEST(LaunchPlan, ChunkRunsTheForwardGridOverPagesInBoxesOfOnePage) {
  const codegen::GeneratedKernel g = generated("causal", 128, compiler::KernelPass::Chunk);
  EXPECT_EQ(g.family, "sm90_chunk");
  ASSERT_TRUE(g.tile.persistent);
  const int B = 2, Hq = 8, Hkv = 2, Tq = 300, D = 128, page_size = 48, num_pages = 40, max_pages = 9;
  const TensorView q = TensorView::contiguous(fake(1), bf16, {B, Hq, Tq, D});
  const TensorView out = TensorView::contiguous(fake(4), bf16, {B, Hq, Tq, D});
  const TensorView k = TensorView::contiguous(fake(2), bf16, {num_pages, page_size, Hkv, D});
  const TensorView v = TensorView::contiguous(fake(3), bf16, {num_pages, page_size, Hkv, D});
  const TensorView kv_lens = TensorView::contiguous(fake(12), i32, {B});
  const TensorView table = TensorView::contiguous(fake(13), i32, {B, max_pages});
  ForwardOptions options;
  options.kv_lens = kv_lens;
  options.page_table = table;
  EXPECT_TRUE(api::runs_chunk_kernel(q, options));
  EXPECT_FALSE(api::runs_chunk_kernel(TensorView::contiguous(fake(1), bf16, {B, Hq, api::kChunkMinTokens - 1, D}),
                                      options));
  api::ChunkPlan plan = api::plan_chunk(g.entry(), g.params, ir_of("causal"), D, D, bf16, {q, k, v, out}, options);
  const api::LaunchPlan p = api::chunk_launch_plan(g, plan, kH200);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::main));
  const unsigned tiles = static_cast<unsigned>((Tq + g.tile.block_m - 1) / g.tile.block_m) * Hq * B;
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(std::min(tiles, 132u * g.tile.min_blocks_per_sm), 1u, 1u));
  EXPECT_EQ(p.steps[0].args.size(), 3u);  // args, params, tensor maps
  EXPECT_TRUE(p.in_context);
  EXPECT_EQ(offset_of(p, &plan.args.tile_counter), 0u);
  EXPECT_EQ(plan.args.kv_box_rows, 16);  // gcd(128, 48)
  EXPECT_EQ(plan.args.Tkv, max_pages * page_size);  // what a sequence can hold
  EXPECT_EQ(plan.args.cache.kv_lens, fake(12));
  EXPECT_EQ(plan.args.cache.page_table, fake(13));
  EXPECT_EQ(plan.args.cache.pt_b, max_pages);
  EXPECT_EQ(plan.args.cache.pt_p, 1);
  EXPECT_EQ(plan.args.cache.page_size, page_size);
  EXPECT_EQ(plan.args.cache.num_pages, num_pages);
  EXPECT_EQ(plan.args.k_b, page_size * Hkv * D);  // a page
  EXPECT_EQ(plan.args.k_t, Hkv * D);              // a slot
  EXPECT_EQ(plan.args.k_h, D);
  EXPECT_EQ(plan.args.tile_map.counts, nullptr);  // the kernel classifies its own tiles

  // Pages that hold whole kv tiles: a box is the tile.
  options.page_table = TensorView::contiguous(fake(13), i32, {B, 2});
  const TensorView k256 = TensorView::contiguous(fake(2), bf16, {num_pages, 256, Hkv, D});
  api::ChunkPlan whole = api::plan_chunk(g.entry(), g.params, ir_of("causal"), D, D, bf16, {q, k256, k256, out}, options);
  api::chunk_launch_plan(g, whole, kH200);
  EXPECT_EQ(whole.args.kv_box_rows, g.tile.block_n);
}

TEST(LaunchPlan, BlockMaskBuildIsOneLaunchOfTheBuilder) {
  const codegen::GeneratedKernel g = generated("document", 128, compiler::KernelPass::Forward);
  const TensorView doc_ids = TensorView::contiguous(fake(10), i32, {4096});
  const std::size_t bytes = api::tile_map_bytes(g, {2, 16, 4096, 4096});
  const TensorView storage = TensorView::contiguous(fake(13), i32, {static_cast<std::int64_t>(bytes / 4)});
  api::TileMapPlan plan =
      api::plan_tile_map(g, ir_of("document"), storage, {2, 16, 4096, 4096}, {.bind = {{"doc_ids", doc_ids}}});
  const api::LaunchPlan p = api::tile_map_launch_plan(g, plan);
  ASSERT_THAT(roles(p), ElementsAre(EntryRole::tile_map));
  EXPECT_THAT(grid(p.steps[0]), ElementsAre(4096u / g.tile.block_m, 1u, 1u));
  EXPECT_EQ(p.steps[0].args.size(), 3u);
  EXPECT_EQ(p.workspace_bytes, 0u);
  // The forward follows the built map with the same geometry.
  AttnArgs a{};
  api::attach_block_mask(plan.mask, a);
  EXPECT_EQ(a.tile_map.counts, static_cast<const int*>(storage.data));
  EXPECT_EQ(a.tile_map.row_entries, 4096 / g.tile.block_n);
  EXPECT_EQ(a.tile_map.entries, static_cast<const int*>(storage.data) + 4096 / g.tile.block_m);
}

}  // namespace
}  // namespace flexjit::test
