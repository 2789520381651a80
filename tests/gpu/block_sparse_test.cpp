// Block-sparse top-k (examples/topk_causal.py: BlockIndices[64, 64] with a causal element mask) on
// the GPU against the float64 reference, which applies the same block selection
// (cpu/block_select.cpp): random lists with -1 padding and repeated entries, lists per
// query head and per kv head (GQA), lengths that are not multiples of the blocks; plus proof that
// only the listed blocks are read (every other K/V row is NaN) and that a one-entry list equals a
// dense mask restricted to that block.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "api/program_impl.hpp"
#include "api/argument_problems.hpp"
#include "tests/gpu/attention_case.hpp"
#include "tests/support/reference_attention.hpp"

namespace flexjit::gpu_test {
namespace {

using L = Layout;
constexpr int kBlock = 64;  // topk_causal.py: BlockIndices[64, 64]

std::vector<Case> cases() {
  return {
      {"topk_causal", bf16, 128, 2, 4, 2, 1000, 1000, L::bhsd},
      {"topk_causal", fp16, 64, 2, 6, 3, 177, 300, L::bshd},
      {"topk_causal", bf16, 256, 1, 2, 1, 333, 333, L::padded},
      {"topk_causal", fp16, 96, 1, 2, 1, 333, 400, L::bhsd},
      {"topk_causal", bf16, 64, 2, 8, 2, 4096, 4096, L::bhsd},
      {"topk_causal", bf16, 128, 1, 2, 1, 1, 4096, L::bhsd},
      {"topk_causal", bf16, 128, 1, 2, 2, 4096, 1000, L::bhsd},
      {"topk_causal", fp16, 128, 1, 1, 1, 100, 1, L::bhsd},
      {"topk_causal", fp16, 32, 3, 4, 1, 65, 129, L::bshd},
  };
}

class BlockSparse : public GpuTest, public ::testing::WithParamInterface<Case> {};

TEST_P(BlockSparse, MatchesReference) {
  const Case& c = GetParam();
  AttentionRun run(c, std::hash<std::string>{}(c.name()));
  run.run_and_check();
}

INSTANTIATE_TEST_SUITE_P(TopK, BlockSparse, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name(); });

// A list of the same K entries for every (b, h, q block).
HostTensor same_lists(const Case& c, int H, const std::vector<std::int32_t>& entries) {
  const int nq = (c.Tq + kBlock - 1) / kBlock;
  const int K = static_cast<int>(entries.size());
  HostTensor t{DType::i32, {c.B, H, nq, K}, {}};
  std::vector<std::int32_t> x;
  for (int i = 0; i < c.B * H * nq; ++i) x.insert(x.end(), entries.begin(), entries.end());
  t.bytes.resize(x.size() * 4);
  std::memcpy(t.bytes.data(), x.data(), t.bytes.size());
  return t;
}

class BlockSparseRules : public GpuTest {};

// Blocks 0 and 3 (listed with padding and repeats) for every query block; every K/V row of any
// other block is NaN, so a kernel that loads one produces NaN (run_and_check fails on it).
TEST_F(BlockSparseRules, OnlyListedBlocksAreRead) {
  for (DType t : {bf16, fp16}) {
    const Case c{"topk_causal", t, 128, 2, 4, 2, 1000, 1000, L::bhsd};
    AttentionRun run(c, 31);
    run.bindings().tensors["selected"] = same_lists(c, c.Hkv, {3, -1, 0, 3, -1, 0});
    run.poison_kv([](int, int, int tk) { return tk / kBlock != 0 && tk / kBlock != 3; });
    const CaseFigures f = run.run_and_check();
    // Rows before key 0's block ends see keys; rows of query block 0 see only block 0.
    EXPECT_EQ(f.masked_rows, 0);
  }
}

// Every entry -1: nothing listed, every row sees no key (out 0, lse -inf), no K/V read at all.
TEST_F(BlockSparseRules, AllPaddingMasksEveryRow) {
  const Case c{"topk_causal", bf16, 64, 1, 2, 1, 300, 300, L::bhsd};
  AttentionRun run(c, 32);
  run.bindings().tensors["selected"] = same_lists(c, c.Hq, {-1, -1});
  run.poison_kv([](int, int, int) { return true; });
  const CaseFigures f = run.run_and_check();
  EXPECT_EQ(f.masked_rows, f.rows);
}

// One entry per query block, its own (diagonal) block: the same attention as the dense program
// whose mask keeps causal keys of the query's own block only (the reference of that program
// needs no block selection).
TEST_F(BlockSparseRules, OneDiagonalBlockEqualsDenseRestrictedMask) {
  const Case c{"topk_causal", bf16, 128, 2, 4, 2, 1000, 1000, L::bshd};
  AttentionRun run(c, 33);
  const int nq = (c.Tq + kBlock - 1) / kBlock;
  HostTensor t{DType::i32, {c.B, c.Hq, nq, 1}, {}};
  std::vector<std::int32_t> x;
  for (int i = 0; i < c.B * c.Hq; ++i)
    for (int qb = 0; qb < nq; ++qb) x.push_back(qb);
  t.bytes.resize(x.size() * 4);
  std::memcpy(t.bytes.data(), x.data(), t.bytes.size());
  run.bindings().tensors["selected"] = t;
  run.run_and_check();

  const Program dense = load_program("diag_block_causal");
  const ir::Program& ir = detail::ProgramAccess::impl(dense).ir;
  const ir::Env env;
  test::ReferenceInputs in{run.host_q().data(), run.host_k().data(), run.host_v().data(), c.B, c.Hq, c.Hkv, c.Tq, c.Tkv,
                     c.D, 1.0 / std::sqrt(static_cast<double>(c.D)), &env};
  const test::ReferenceOutputs ref = test::reference_attention(ir, in);
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.out.size(); ++i) {
    const double e = run.last_out()[i] - ref.out[i];
    diff2 += e * e;
    ref2 += ref.out[i] * ref.out[i];
  }
  const double rel = std::sqrt(diff2 / ref2);
  std::cout << fmt::format("[figures] topk K=1 diagonal vs dense restricted mask: rel_l2={:.3e}\n", rel);
  EXPECT_LE(rel, 2e-2);
}

}  // namespace
}  // namespace flexjit::gpu_test
