// Engine::compile without a GPU: the source is there to read, the cache counts, and programs or
// options the kernels cannot run are refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

TEST(Compile, SourceAndEntryName) {
  const Kernel& k = alibi_kernel();
  EXPECT_EQ(k.entry_name(), "flexjit_fwd_alibi_softcap_window_d64_bf16");
  EXPECT_THAT(k.cuda_source(), HasSubstr("extern \"C\" __global__"));
  EXPECT_THAT(k.cuda_source(), HasSubstr(k.entry_name()));
  // sm_90a at head dim 64: the Hopper family.
  EXPECT_EQ(k.family(), "sm90_fwd");
  EXPECT_THAT(k.cuda_source(), HasSubstr("#include \"sm90/attention_fwd.cuh\""));
  EXPECT_THAT(k.cuda_source(true), HasSubstr("// ---- begin sm90/attention_fwd.cuh ----"));
  EXPECT_EQ(k.head_dim(), 64);
  EXPECT_EQ(k.dtype(), bf16);
  EXPECT_EQ(k.arch(), "sm_90a");
}

TEST(Compile, SecondCompileIsACacheHit) {
  Engine jit(EngineOptions{.disk_cache = false});
  Program p = example("causal");
  jit.compile(p, {.head_dim = 64, .dtype = fp16, .arch = "sm_80"});
  EXPECT_EQ(jit.counters().compiles, 1u);
  Kernel again = jit.compile(p, {.head_dim = 64, .dtype = fp16, .arch = "sm_80"});
  EXPECT_EQ(jit.counters().compiles, 1u);
  EXPECT_EQ(jit.counters().memory_hits, 1u);
  EXPECT_EQ(again.entry_name(), "flexjit_fwd_causal_d64_fp16");
}

// The math mode is part of what a kernel is: the other mode compiles anew, and each is then hit.
TEST(Compile, MathModesAreTwoKernels) {
  Engine jit(EngineOptions{.disk_cache = false});
  const Program p = example("softcap");
  const Kernel fast = jit.compile(p, {.head_dim = 64, .arch = "sm_80"});
  const Kernel exact = jit.compile(p, {.head_dim = 64, .arch = "sm_80", .math = Math::exact});
  EXPECT_EQ(jit.counters().compiles, 2u);
  jit.compile(p, {.head_dim = 64, .arch = "sm_80", .math = Math::fast});
  jit.compile(p, {.head_dim = 64, .arch = "sm_80", .math = Math::exact});
  EXPECT_EQ(jit.counters().compiles, 2u);
  EXPECT_EQ(jit.counters().memory_hits, 2u);
  EXPECT_THAT(fast.cuda_source(), HasSubstr("flexjit::fast_tanh("));
  EXPECT_THAT(exact.cuda_source(), HasSubstr("tanhf("));
}

// A call with position offsets runs the kernel whose mods add them, compiled on the first such
// call; other offsets compile nothing more, and calls without keep the kernel compiled first.
// (Without a driver each call then fails at the launch.)
TEST(Compile, PositionOffsetsCompileOneMoreKernelOnce) {
  Engine jit(EngineOptions{.disk_cache = false});
  const Kernel k = jit.compile(example("causal"), {.head_dim = 64, .arch = "sm_90a"});
  EXPECT_EQ(jit.counters().compiles, 1u);
  Args a = good_args();
  auto call = [&](std::int64_t q_offset, std::int64_t kv_offset) {
    ForwardOptions o{.lse = a.lse};
    o.q_offset = q_offset, o.kv_offset = kv_offset;
    return error_of([&] { k.forward(a.q, a.k, a.v, a.out, o); });
  };
  EXPECT_THAT(call(0, 0), ::testing::Not(HasSubstr("offset")));
  EXPECT_EQ(jit.counters().compiles, 1u);
  call(4096, 0);
  EXPECT_EQ(jit.counters().compiles, 2u);
  call(128, 8192);
  call(0, 0);
  EXPECT_EQ(jit.counters().compiles, 2u);
  // Refused offsets are refused before anything compiles.
  Engine fresh(EngineOptions{.disk_cache = false});
  const Kernel f = fresh.compile(example("causal"), {.head_dim = 64, .arch = "sm_90a"});
  ForwardOptions o{.lse = a.lse};
  o.q_offset = -3;
  EXPECT_THAT(error_of([&] { f.forward(a.q, a.k, a.v, a.out, o); }),
              HasSubstr("q_offset is -3: positions start at 0 or later"));
  EXPECT_EQ(fresh.counters().compiles, 1u);
}

TEST(Compile, BlockSparseWalksTheList) {
  // BlockIndices[64, 64]: a 64-row query tile (inside one query block) and the block-list hooks;
  // sm90_fwd wants whole 128 x 128 tiles per block, so sm80_fwd serves it.
  const Kernel k = engine().compile(example("topk_causal"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_EQ(k.family(), "sm80_fwd");
  EXPECT_THAT(k.cuda_source(), HasSubstr("static constexpr bool kHasBlockList = true;"));
  EXPECT_THAT(k.cuda_source(), HasSubstr("static constexpr int kBlockListKv = 64;"));
  EXPECT_THAT(k.cuda_source(), HasSubstr("flexjit::FwdConfig<128, 64, 32, 4,"));
  const Kernel dense = engine().compile(example("causal"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_THAT(dense.cuda_source(), HasSubstr("static constexpr bool kHasBlockList = false;"));
  EXPECT_THAT(dense.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<128, 128, 128, 3,"));
}

TEST(Compile, Sm90TilePerHeadDim) {
  // Three consumer warpgroups at D = 64, a 64-key tile at D = 256 (templates/sm90/tiles.cuh).
  const Kernel d64 = engine().compile(example("causal"), {.head_dim = 64, .arch = "sm_90a"});
  EXPECT_EQ(d64.family(), "sm90_fwd");
  EXPECT_THAT(d64.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<64, 192, 128, 4,"));
  const Kernel d256 = engine().compile(example("causal"), {.head_dim = 256, .arch = "sm_90a"});
  EXPECT_EQ(d256.family(), "sm90_fwd");
  EXPECT_THAT(d256.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<256, 128, 64, 2,"));
  // 128-row blocks are not whole 192-row tiles: D = 64 takes 128 query rows for them.
  const Program blocks = Program::from_source(
      "selected: BlockIndices[128, 128]\n"
      "def mask_mod(b, h, q_idx, kv_idx):\n"
      "    return q_idx >= kv_idx\n",
      "blocks.py");
  const Kernel topk = engine().compile(blocks, {.head_dim = 64, .arch = "sm_90a"});
  EXPECT_EQ(topk.family(), "sm90_fwd");
  EXPECT_THAT(topk.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<64, 128, 128, 4,"));
}

TEST(Compile, DefaultTileIsTheTablesFirstWithoutCompiling) {
  const CompileOptions d64{.head_dim = 64, .arch = "sm_90a"};
  const TileShape first = default_tile(example("causal"), d64);
  EXPECT_EQ(first.block_m, 192);  // three consumer warpgroups at D = 64
  EXPECT_EQ(first.block_n, 128);
  const Kernel causal = engine().compile(example("causal"), d64);  // no spills: the first tile stays
  EXPECT_EQ(causal.tile().block_m, first.block_m);
  EXPECT_EQ(causal.tile().stages, first.stages);
  // The sink window spills there and settles on 128 rows; its table still starts at 192.
  EXPECT_EQ(default_tile(example("sink_window"), d64).block_m, 192);
  CompileOptions on_cpu = d64;
  on_cpu.device = Device::cpu();
  EXPECT_THROW(default_tile(example("causal"), on_cpu), ArgumentError);
}

TEST(Compile, AStackFrameWithoutSpillsKeepsTheTablesTile) {
  // sinf's slow path (Payne-Hanek reduction) has a local array: a 32-byte stack frame in every
  // tile, which a smaller tile would not remove, so the first tile stays and compiles once.
  const Program sine = Program::from_source(
      "import torch\n"
      "def score_mod(score, b, h, q_idx, kv_idx):\n"
      "    return score + torch.sin(score)\n",
      "sine.py");
  Engine fresh(EngineOptions{.disk_cache = false});
  const CompileOptions d64{.head_dim = 64, .arch = "sm_90a"};
  const Kernel k = fresh.compile(sine, d64);
  EXPECT_GT(k.compile_report().stack_bytes, 0);
  EXPECT_EQ(k.compile_report().spill_bytes, 0);
  EXPECT_EQ(k.tile().block_m, default_tile(sine, d64).block_m);
  EXPECT_EQ(fresh.counters().compiles, 1u);
}

TEST(Compile, TheNextTileCompiledAheadCountsOnlyWhenTaken) {
  // With a core free, the next tile compiles beside the first; it is stopped (and not counted or
  // cached) when the first fits, taken when the first spills.
  Engine fits(EngineOptions{.disk_cache = false});
  const CompileOptions d64{.head_dim = 64, .arch = "sm_90a"};
  EXPECT_EQ(fits.compile(example("causal"), d64).tile().block_m, 192);
  EXPECT_EQ(fits.counters().compiles, 1u);
  Engine spills(EngineOptions{.disk_cache = false});
  EXPECT_EQ(spills.compile(example("sink_window"), d64).tile().block_m, 128);
  EXPECT_EQ(spills.counters().compiles, 2u);
  EXPECT_EQ(spills.compile(example("sink_window"), d64).tile().block_m, 128);
  EXPECT_EQ(spills.counters().compiles, 2u) << "both tiles are in memory now";
}

TEST(Compile, Sm90TileThatSpillsGivesWayToTheNext) {
  // The sink window's mask spills in the 192-row tile (160 registers a thread): the engine
  // settles on 128 rows (240 registers), where ptxas reports no spills.
  const Kernel table = engine().compile(example("sink_window"), {.head_dim = 64, .arch = "sm_90a"});
  EXPECT_EQ(table.family(), "sm90_fwd");
  EXPECT_EQ(table.tile().block_m, 128);
  EXPECT_EQ(table.tile().block_n, 128);
  EXPECT_EQ(table.compile_report().spill_bytes, 0);
  EXPECT_GT(table.compile_report().registers, 0);
  // A tile the caller asks for is kept as asked, spills and all: the report says so.
  const Kernel asked = engine().compile(
      example("sink_window"),
      {.head_dim = 64, .arch = "sm_90a", .tile = TileShape{.block_m = 192, .block_n = 128, .warps = 16, .stages = 4}});
  EXPECT_EQ(asked.tile().block_m, 192);
  EXPECT_GT(asked.compile_report().spill_bytes, 0);
}

TEST(Compile, Sm90OneConsumerTileThatFitsTwiceRunsTwoCtasPerSm) {
  // 64 x 64 with 2 stages at D = 128 is 81 KB of shared memory: two CTAs share an SM, so ptxas
  // is held to 128 registers a thread (the launch bounds); 64 x 128 (145 KB) runs one, at 240.
  const Program p = example("document");
  const Kernel two = engine().compile(
      p, {.head_dim = 128, .arch = "sm_90a", .tile = TileShape{.block_m = 64, .block_n = 64, .warps = 8, .stages = 2}});
  EXPECT_EQ(two.compile_report().registers, 128);
  EXPECT_EQ(two.compile_report().spill_bytes, 0);
  const Kernel one = engine().compile(
      p, {.head_dim = 128, .arch = "sm_90a", .tile = TileShape{.block_m = 64, .block_n = 128, .warps = 8, .stages = 2}});
  EXPECT_GT(one.compile_report().registers, 128);
}

TEST(Compile, Sm90PersistentGridAtHeadDim128) {
  // D = 128: one wave of CTAs that take query tiles in turn (templates/sm90/tiles.cuh); the
  // producer's loop keeps 40 registers, so the consumers hold 232 and nothing spills.
  const Kernel causal = engine().compile(example("causal"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_TRUE(causal.tile().persistent);
  EXPECT_THAT(causal.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<128, 128, 128, 3, flexjit::bf16_t, true>"));
  EXPECT_EQ(causal.compile_report().spill_bytes, 0);
  // A mask that follows a tile map keeps one CTA per query tile, as does every other head dim.
  const Kernel documents = engine().compile(example("document"), {.head_dim = 128, .arch = "sm_90a"});
  EXPECT_FALSE(documents.tile().persistent);
  EXPECT_THAT(documents.cuda_source(), HasSubstr("flexjit::Sm90FwdConfig<128, 128, 128, 3, flexjit::bf16_t, false>"));
  EXPECT_FALSE(engine().compile(example("causal"), {.head_dim = 64, .arch = "sm_90a"}).tile().persistent);
  EXPECT_FALSE(engine().compile(example("causal"), {.head_dim = 256, .arch = "sm_90a"}).tile().persistent);
  // Asked for, it is kept, tile map and all; the sm80_fwd family has no persistent grid.
  const TileShape persistent{.block_m = 128, .block_n = 128, .warps = 12, .stages = 3, .persistent = true};
  const Kernel asked = engine().compile(example("document"), {.head_dim = 128, .arch = "sm_90a", .tile = persistent});
  EXPECT_TRUE(asked.tile().persistent);
  const TileShape sm80_shape{.block_m = 128, .block_n = 64, .warps = 4, .stages = 3, .persistent = true};
  const std::string refused = error_of([&] {
    engine().compile(example("causal"), {.head_dim = 128, .arch = "sm_90a", .tile = sm80_shape, .family = "sm80_fwd"});
  });
  EXPECT_THAT(refused, HasSubstr("the persistent grid is the sm90_fwd family's (TMA + wgmma)"));
}

TEST(Compile, UnsupportedHeadDim) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.head_dim = 72, .arch = "sm_90a"}); });
  EXPECT_THAT(e, HasSubstr("head dim 72 is not supported"));
}

TEST(Compile, UnsupportedDtype) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.dtype = f32, .arch = "sm_90a"}); });
  EXPECT_THAT(e, HasSubstr("dtype f32 is not supported"));
}

TEST(Compile, UnsupportedArch) {
  const std::string e = error_of([] { engine().compile(example("causal"), {.arch = "sm_75"}); });
  EXPECT_THAT(e, HasSubstr("sm_75"));
}

TEST(Compile, TileTableAndOverride) {
  // Each family's table: sm90_fwd by default on sm_90a, sm80_fwd when named (or on sm_80).
  const Kernel table = engine().compile(example("causal"), {.head_dim = 64, .arch = "sm_90a"});
  EXPECT_EQ(table.family(), "sm90_fwd");
  EXPECT_EQ(table.tile().block_m, 192);
  EXPECT_EQ(table.tile().block_n, 128);
  EXPECT_EQ(table.tile().warps, 16);
  EXPECT_EQ(table.tile().stages, 4);
  const Kernel sm80 = engine().compile(example("causal"), {.head_dim = 64, .arch = "sm_90a", .family = "sm80_fwd"});
  EXPECT_EQ(sm80.family(), "sm80_fwd");
  EXPECT_EQ(sm80.tile().block_m, 128);
  EXPECT_EQ(sm80.tile().block_n, 64);
  EXPECT_EQ(sm80.tile().stages, 3);
  EXPECT_FALSE(sm80.tile().q_in_registers);
  // A tile for sm80_fwd's shape rules (2 warps): the Hopper family refuses it, sm80_fwd runs it.
  const Kernel tuned = engine().compile(
      example("causal"), {.head_dim = 64, .arch = "sm_90a", .tile = TileShape{.block_m = 64, .block_n = 32, .warps = 2}});
  EXPECT_EQ(tuned.tile().block_m, 64);
  EXPECT_EQ(tuned.tile().block_n, 32);
  EXPECT_EQ(tuned.tile().warps, 2);
  EXPECT_THAT(tuned.cuda_source(), HasSubstr("flexjit::FwdConfig<64, 64, 32, 2, 2,"));
}

TEST(Compile, TileOverrideIsChecked) {
  auto error = [](TileShape t) {
    return error_of([&] { engine().compile(example("causal"), {.head_dim = 128, .arch = "sm_90a", .tile = t}); });
  };
  EXPECT_THAT(error({.block_m = 100}),
              HasSubstr("causal.py: tile 100x64 with 4 warps and 2 stages: block_m must be a multiple of 16 * warps = 64 in [64, "
                        "256] (each warp owns whole m16 tiles)"));
  EXPECT_THAT(error({.block_n = 40}), HasSubstr("block_n must be a multiple of 16 in [16, 256]"));
  EXPECT_THAT(error({.warps = 3}), HasSubstr("warps must be 1, 2, 4 or 8"));
  EXPECT_THAT(error({.stages = 1}), HasSubstr("stages must be 2, 3 or 4"));
  EXPECT_THAT(error({.block_m = 256, .block_n = 256, .stages = 4}),
              HasSubstr("needs 626688 bytes of shared memory at head dim 128, more than 232448"));
}

}  // namespace
}  // namespace flexjit::test
