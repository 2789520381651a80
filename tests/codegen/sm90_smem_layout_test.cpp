// The sm90 kernels' shared-memory layouts (templates/sm90/tiles.cuh), the one copy of the offsets
// that the kernels use and the host sizes: for every shipped tile, each region starts where its
// readers need it (swizzled tiles on 1024 bytes for TMA and wgmma, bulk-copied row statistics on
// 16, mbarriers on 8), no two regions overlap, all end by end(), and the CTA's bytes fit what a
// CTA may opt into.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <tuple>
#include <vector>

#include "templates/sm90/tiles.cuh"

namespace {

using flexjit::sm90::BwdSmemLayout;
using flexjit::sm90::BwdSplitSmemLayout;
using flexjit::sm90::BwdWideSmemLayout;
using flexjit::sm90::FwdSmemLayout;

struct Region {
  std::string name;
  int offset, bytes, alignment;
};

// Every region aligned, pairwise disjoint and inside [0, end); end + the alignment slack fits.
void expect_sound(const std::vector<Region>& regions, int end, int bytes, const std::string& layout) {
  for (const Region& r : regions) {
    EXPECT_EQ(r.offset % r.alignment, 0) << layout << ": " << r.name << " at " << r.offset;
    EXPECT_GE(r.offset, 0) << layout << ": " << r.name;
    EXPECT_LE(r.offset + r.bytes, end) << layout << ": " << r.name << " runs past the end";
  }
  for (std::size_t i = 0; i < regions.size(); ++i)
    for (std::size_t j = i + 1; j < regions.size(); ++j) {
      const Region &a = regions[i], &b = regions[j];
      EXPECT_TRUE(a.offset + a.bytes <= b.offset || b.offset + b.bytes <= a.offset)
          << layout << ": " << a.name << " [" << a.offset << ", +" << a.bytes << ") overlaps " << b.name << " ["
          << b.offset << ", +" << b.bytes << ")";
    }
  EXPECT_EQ(bytes, end + flexjit::sm90::kTileAlign) << layout;
  EXPECT_LE(bytes, flexjit::sm90::kSmemPerCtaBytes) << layout;
}

constexpr int kTile = flexjit::sm90::kTileAlign, kBulk = 16, kBarrier = 8;

TEST(Sm90SmemLayout, ForwardTilesAreAlignedDisjointAndFit) {
  // (q and k's head dim, v's, element bytes): the table's entries, MLA's 192 / 128 among them, and
  // the FP8 table's (V transposed: head_dim_v rows of block_n one-byte keys, as many bytes).
  for (auto [head_dim, head_dim_v, element] : {std::tuple{64, 64, 2}, {128, 128, 2}, {256, 256, 2}, {192, 128, 2},
                                               {128, 128, 1}, {256, 256, 1}}) {
    const bool fp8 = element == 1;
    ASSERT_TRUE(fp8 ? flexjit::sm90::serves_fp8_head_dims(head_dim, head_dim_v)
                    : flexjit::sm90::serves_head_dims(head_dim, head_dim_v));
    const flexjit::sm90::FwdTile t = fp8 ? flexjit::sm90::default_fp8_fwd_tile(head_dim)
                                         : flexjit::sm90::default_fwd_tile(head_dim, head_dim_v);
    const FwdSmemLayout l(head_dim, t.block_m, t.block_n, t.stages, head_dim_v, element);
    const int q = t.block_m * head_dim * element, k = t.block_n * head_dim * element,
              v = t.block_n * head_dim_v * element;
    std::vector<Region> r = {{"q", l.q(), q, kTile}, {"q_full", l.q_full(), 8, kBarrier},
                             {"q_empty", l.q_empty(), 8, kBarrier}};
    for (int s = 0; s < t.stages; ++s) {
      r.push_back({"k" + std::to_string(s), l.k(s), k, kTile});
      r.push_back({"v" + std::to_string(s), l.v(s), v, kTile});
      r.push_back({"k_full" + std::to_string(s), l.k_full(s), 8, kBarrier});
      r.push_back({"v_full" + std::to_string(s), l.v_full(s), 8, kBarrier});
      r.push_back({"kv_empty" + std::to_string(s), l.kv_empty(s), 8, kBarrier});
    }
    for (int j = 0; j < 2; ++j) {
      r.push_back({"tile_full" + std::to_string(j), l.tile_full(j), 8, kBarrier});
      r.push_back({"tile_slot" + std::to_string(j), l.tile_slot(j), 4, 4});
    }
    expect_sound(r, l.end(), l.bytes(),
                 "forward d" + std::to_string(head_dim) + "v" + std::to_string(head_dim_v) + (fp8 ? " fp8" : ""));
    EXPECT_EQ(l.bytes(), flexjit::sm90::fwd_smem_bytes(head_dim, t.block_m, t.block_n, t.stages, head_dim_v, element));
  }
}

TEST(Sm90SmemLayout, BackwardTilesAreAlignedDisjointAndFit) {
  // The default kernel's one dQ staging buffer per consumer, and the deterministic kernel's.
  for (int dq_buffers : {1, 2})
    for (int head_dim : {64, 128}) {
      constexpr int kBlockM = 64, kBlockN = 128, kStages = 2;  // codegen/sm90_bwd's narrow form
      const BwdSmemLayout l(head_dim, kBlockM, kBlockN, kStages, dq_buffers);
      const int q = kBlockM * head_dim * 2, kv = kBlockN * head_dim * 2;
      std::vector<Region> r = {{"k", l.k(), kv, kTile}, {"v", l.v(), kv, kTile}, {"kv_full", l.kv_full(), 8, kBarrier}};
      for (int s = 0; s < kStages; ++s) {
        const std::string n = std::to_string(s);
        r.push_back({"q" + n, l.q(s), q, kTile});
        r.push_back({"dout" + n, l.dout(s), q, kTile});
        r.push_back({"lse2" + n, l.lse2(s), 4 * kBlockM, kBulk});
        r.push_back({"delta" + n, l.delta(s), 4 * kBlockM, kBulk});
        r.push_back({"q_full" + n, l.q_full(s), 8, kBarrier});
        r.push_back({"q_empty" + n, l.q_empty(s), 8, kBarrier});
      }
      for (int w = 0; w < kBlockN / 64; ++w) {
        for (int buffer = 0; buffer < 2; ++buffer)
          r.push_back({"ds" + std::to_string(w) + "." + std::to_string(buffer), l.ds(w, buffer), 64 * kBlockM * 2, kTile});
        for (int buffer = 0; buffer < dq_buffers; ++buffer) {
          const std::string n = std::to_string(w) + "." + std::to_string(buffer);
          r.push_back({"dq" + n, l.dq(w, buffer), 64 * kBlockM * 4, kBulk});
          if (!l.writer()) continue;
          r.push_back({"dq_full" + n, l.dq_full(w, buffer), 8, kBarrier});
          r.push_back({"dq_empty" + n, l.dq_empty(w, buffer), 8, kBarrier});
          r.push_back({"dq_record" + n, l.dq_record(w, buffer), 24, 8});
        }
      }
      if (l.writer()) {
        r.push_back({"walk_end", l.walk_end(), 8, kBarrier});
        r.push_back({"walk_tiles", l.walk_tiles(), 4, 4});
      }
      expect_sound(r, l.end(), l.bytes(),
                   "backward d" + std::to_string(head_dim) + " with " + std::to_string(dq_buffers) + " dQ buffers");
      // The default kernel's layout: each stage's row statistics padded to 1024 bytes after its Q
      // and dO, the barriers last.
      if (!l.writer()) {
        EXPECT_EQ(l.lse2(1), l.q(1) + 2 * q);
        EXPECT_EQ(l.end(), l.q_empty(kStages - 1) + 8);
      }
    }
}

TEST(Sm90SmemLayout, WideBackwardTilesAreAlignedDisjointAndFit) {
  constexpr int kHeadDim = 256, kBlockM = 64, kBlockN = 64, kStages = 2;  // codegen/sm90_bwd's wide form
  const BwdWideSmemLayout l(kHeadDim, kBlockM, kBlockN, kStages);
  const int q = kBlockM * kHeadDim * 2, kv = kBlockN * kHeadDim * 2, pair = kBlockN * kBlockM * 2;
  std::vector<Region> r = {{"k", l.k(), kv, kTile},
                           {"v", l.v(), kv, kTile},
                           {"dout", l.dout(), q, kTile},
                           {"p", l.p(), pair, kTile},
                           {"ds", l.ds(), pair, kTile},
                           {"dp", l.dp(), 2 * pair, kBulk},
                           {"kv_full", l.kv_full(), 8, kBarrier},
                           {"do_full", l.do_full(), 8, kBarrier},
                           {"do_empty", l.do_empty(), 8, kBarrier}};
  for (int s = 0; s < kStages; ++s) {
    const std::string n = std::to_string(s);
    r.push_back({"q" + n, l.q(s), q, kTile});
    r.push_back({"lse2" + n, l.lse2(s), 4 * kBlockM, kBulk});
    r.push_back({"delta" + n, l.delta(s), 4 * kBlockM, kBulk});
    r.push_back({"q_full" + n, l.q_full(s), 8, kBarrier});
    r.push_back({"q_empty" + n, l.q_empty(s), 8, kBarrier});
  }
  for (int w = 0; w < 2; ++w) r.push_back({"dq" + std::to_string(w), l.dq(w), 64 * kBlockM * 4, kBulk});
  expect_sound(r, l.end(), l.bytes(), "wide backward d256");
}

TEST(Sm90SmemLayout, SplitBackwardTilesAreAlignedDisjointAndFit) {
  // codegen/sm90_bwd's split form: MLA's q and k of 192, v and dout of 128.
  constexpr int kHeadDim = 192, kHeadDimV = 128, kBlockM = 64, kBlockN = 64, kStages = 2;
  const BwdSplitSmemLayout l(kHeadDim, kHeadDimV, kBlockM, kBlockN, kStages);
  const int pair = kBlockN * kBlockM * 2;
  std::vector<Region> r = {{"k", l.k(), kBlockN * kHeadDim * 2, kTile},
                           {"v", l.v(), kBlockN * kHeadDimV * 2, kTile},
                           {"ds", l.ds(), pair, kTile},
                           {"dp", l.dp(), 2 * pair, kBulk},
                           {"kv_full", l.kv_full(), 8, kBarrier}};
  for (int s = 0; s < kStages; ++s) {
    const std::string n = std::to_string(s);
    r.push_back({"q" + n, l.q(s), kBlockM * kHeadDim * 2, kTile});
    r.push_back({"dout" + n, l.dout(s), kBlockM * kHeadDimV * 2, kTile});
    r.push_back({"lse2" + n, l.lse2(s), 4 * kBlockM, kBulk});
    r.push_back({"delta" + n, l.delta(s), 4 * kBlockM, kBulk});
    r.push_back({"q_full" + n, l.q_full(s), 8, kBarrier});
    r.push_back({"q_empty" + n, l.q_empty(s), 8, kBarrier});
  }
  for (int w = 0; w < 2; ++w) r.push_back({"dq" + std::to_string(w), l.dq(w), 64 * kBlockM * 4, kBulk});
  expect_sound(r, l.end(), l.bytes(), "split backward d192v128");
}

}  // namespace
