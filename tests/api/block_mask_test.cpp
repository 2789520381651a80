// Block masks on the host side: which kernels have a builder (only masks that read captured
// tensors; index arithmetic gets closed-form ranges and never launches one), the map's size, and
// every check of build_block_mask and of a map handed to forward, before anything is launched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "codegen/families.hpp"
#include "api/program_impl.hpp"
#include "api/tile_map_launch.hpp"
#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::HasSubstr;

// The map sizes below are the sm80 family's tiles (128 x 64 at head dim 64): pinned to that family.
const Kernel& compiled(const std::string& name) {
  static std::map<std::string, Kernel> kernels;
  auto it = kernels.find(name);
  if (it == kernels.end())
    it = kernels.emplace(name, engine().compile(example(name), {.head_dim = 64, .dtype = bf16, .arch = "sm_90a", .family = "sm80_fwd"})).first;
  return it->second;
}

TEST(BlockMask, OnlyMasksThatReadTensorsHaveABuilder) {
  for (const char* name : {"causal", "sliding_window", "sink_window", "two_sided_window", "dilated_window", "chunked",
                           "alibi", "alibi_softcap_window", "softcap", "learned_sink", "neighbourhood_2d",
                           "relative_position_bias", "topk_causal"})
    EXPECT_FALSE(compiled(name).needs_block_mask()) << name;
  for (const char* name : {"document", "document_window_sinks", "prefix_lm"})
    EXPECT_TRUE(compiled(name).needs_block_mask()) << name;
  // The builder is a second entry point of the same translation unit.
  EXPECT_THAT(compiled("document").cuda_source(), HasSubstr("flexjit_fwd_document_d64_bf16_tile_map("));
  EXPECT_THAT(compiled("causal").cuda_source(), ::testing::Not(HasSubstr("_tile_map(")));
}

TEST(BlockMaskSize, CountsThenEntries) {
  // D = 64: 128 x 64 tiles. document reads neither b nor h: one map shared by all of them.
  EXPECT_EQ(compiled("document").block_mask_bytes(4, 16, 1000, 1000), std::size_t{4} * (8 + 8 * 16));
  // prefix_lm reads prefix_len[b]: one map per batch entry.
  EXPECT_EQ(compiled("prefix_lm").block_mask_bytes(4, 16, 1000, 1000), std::size_t{4} * 4 * (8 + 8 * 16));
  EXPECT_EQ(compiled("causal").block_mask_bytes(4, 16, 1000, 1000), 0u);
}

std::string build_error(const std::string& name, const TensorView& storage, int B, int Hq, int Tq, int Tkv,
                        const std::map<std::string, Binding>& bind) {
  return error_of([&] { compiled(name).build_block_mask(storage, B, Hq, Tq, Tkv, {.bind = bind}); });
}

TEST(BlockMaskBuild, RefusedForIndexArithmetic) {
  EXPECT_EQ(build_error("causal", TensorView::contiguous(fake(1), u8, {1024}), 1, 1, 128, 128, {}),
            "flexjit_fwd_causal_d64_bf16: build_block_mask: its mask_mod reads no captured tensor: kv ranges and "
            "tile classes come in closed form, so there is nothing to build");
  EXPECT_THAT(build_error("topk_causal", TensorView::contiguous(fake(1), u8, {1024}), 1, 1, 128, 128, {}),
              HasSubstr("BlockIndices list already decides which kv blocks are visited"));
}

TEST(BlockMaskBuild, StorageAndShape) {
  const TensorView doc = TensorView::contiguous(fake(2), i32, {1000});
  const std::size_t need = compiled("document").block_mask_bytes(1, 2, 1000, 1000);
  EXPECT_THAT(build_error("document", TensorView::contiguous(fake(1), u8, {static_cast<std::int64_t>(need) - 1}), 1, 2,
                          1000, 1000, {{"doc_ids", doc}}),
              HasSubstr("storage holds " + std::to_string(need - 1) + " bytes, but a map for B=1 Hq=2 Tq=1000 Tkv=1000 "
                        "needs " + std::to_string(need) + " (Kernel::block_mask_bytes)"));
  EXPECT_THAT(build_error("document", TensorView::contiguous(fake(1), u8, {4096}, Device::cpu()), 1, 2, 1000, 1000,
                          {{"doc_ids", doc}}),
              HasSubstr("storage: is on the cpu"));
  EXPECT_THAT(build_error("document", TensorView::contiguous(fake(1), u8, {4096}), 1, 0, 1000, 1000, {{"doc_ids", doc}}),
              HasSubstr("Hq must be >= 1, got 0"));
  EXPECT_THAT(build_error("document", TensorView::contiguous(fake(1), u8, {4096}), 1, 2, 1000, 1000, {}),
              HasSubstr("'doc_ids' is not bound"));
}

TEST(BlockMaskBuild, PositionsAreChecked) {
  const TensorView doc = TensorView::contiguous(fake(2), i32, {1000});
  const TensorView storage = TensorView::contiguous(fake(1), u8, {4096});
  auto error = [&](std::int64_t q_offset, std::int64_t kv_offset) {
    return error_of([&] {
      compiled("document").build_block_mask(storage, 1, 2, 1000, 1000,
                                            {.bind = {{"doc_ids", doc}}, .q_offset = q_offset, .kv_offset = kv_offset});
    });
  };
  EXPECT_THAT(error(-5, 0), HasSubstr("q_offset is -5: positions start at 0 or later"));
  EXPECT_THAT(error(0, 2147483000), HasSubstr("kv_offset + Tkv = 2147484000 passes the last int32 position 2^31 - 1"));
}

// forward with a map: fake tensors [2, 8, 128, 64] (k/v 4 heads), document bound.
std::string forward_error(const std::string& name, const BlockMask& mask) {
  Args a = good_args();
  ForwardOptions o{.lse = a.lse};
  o.bind["doc_ids"] = TensorView::contiguous(fake(9), i32, {128});
  o.bind["window"] = 64LL;
  o.bind["alibi_slopes"] = a.slopes;
  o.block_mask = &mask;
  return error_of([&] { compiled(name).forward(a.q, a.k, a.v, a.out, o); });
}

// What build_block_mask would return for document at q [2, 8, 128, 64] with doc_ids i32 [128]
// (it cannot launch here): the fingerprints computed as the runtime computes them.
BlockMask document_mask(std::int64_t doc_ids_length = 128) {
  BlockMask m;
  m.storage = fake(3);
  m.kernel = compiled("document").entry_name();
  m.block_m = 128;
  m.block_n = 64;
  m.B = 2, m.Hq = 8, m.Tq = 128, m.Tkv = 128;
  m.q_tiles = 1, m.kv_tiles = 2;
  const Program program = example("document");
  const auto& impl = detail::ProgramAccess::impl(program);
  m.kernel_id = api::block_mask_kernel_id(
      codegen::generate_kernel(impl.ir, {.head_dim = 64, .arch = "sm_90a", .family = "sm80_fwd"}, &impl.file));
  ir::Env env;
  env.tensors["doc_ids"] = ir::TensorBinding{ir::DType::Int32, {doc_ids_length}, {}, fake(9)};
  m.bindings_id = api::block_mask_bindings_id(env);
  return m;
}

TEST(BlockMaskForward, AConsistentMapPassesTheChecks) {
  // Without a driver the call then fails at the launch, not at the map.
  EXPECT_THAT(forward_error("document", document_mask()), ::testing::Not(HasSubstr("block_mask")));
}

TEST(BlockMaskForward, MustMatchTheCall) {
  BlockMask m = document_mask();
  m.Tq = 256;
  m.q_tiles = 2;
  EXPECT_THAT(forward_error("document", m), HasSubstr("block_mask was built for Tq=256, but this call has Tq=128"));
  m = document_mask();
  m.kernel = compiled("prefix_lm").entry_name();
  EXPECT_THAT(forward_error("document", m),
              HasSubstr("block_mask was built by kernel flexjit_fwd_prefix_lm_d64_bf16 with 128x64 tiles, not by this "
                        "one (128x64 tiles)"));
  m = document_mask();
  m.kv_offset = 4096;  // a map of another shard's keys
  EXPECT_THAT(forward_error("document", m),
              HasSubstr("block_mask was built for kv_offset=4096, but this call has kv_offset=0"));
  EXPECT_THAT(forward_error("document", BlockMask{}), HasSubstr("block_mask is empty (build it with Kernel::build_block_mask)"));
  EXPECT_THAT(forward_error("causal", document_mask()),
              HasSubstr("block_mask given, but this kernel's mask reads no captured tensor and follows no block mask"));
}

TEST(BlockMaskForward, MustComeFromTheSameProgramAndBindings) {
  // Another program whose kernel has the same name and tiles: refused by the source fingerprint.
  BlockMask m = document_mask();
  m.kernel_id ^= 1;
  EXPECT_THAT(forward_error("document", m),
              HasSubstr("block_mask was built by another program's kernel of the same name (flexjit_fwd_document_d64_bf16)"));
  // Built for a doc_ids tensor of another length: rebuild.
  EXPECT_THAT(forward_error("document", document_mask(256)),
              HasSubstr("block_mask was built with other scalar values or tensor shapes than this call binds; rebuild it"));
}

TEST(BlockMaskBuild, StorageMustBeContiguous) {
  // A [2, 2048] slice of a [2, 4096] buffer: big enough, but the map would overrun the gap.
  const TensorView storage{fake(1), u8, {2, 2048}, {4096, 1}, Device::cuda(0)};
  EXPECT_THAT(build_error("document", storage, 1, 2, 1000, 1000, {{"doc_ids", TensorView::contiguous(fake(2), i32, {1000})}}),
              HasSubstr("storage must be contiguous (the map is written as one block)"));
}

}  // namespace
}  // namespace flexjit::test
