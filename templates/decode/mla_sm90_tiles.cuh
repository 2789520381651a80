// flexjit: the sm90_mla family's tile and shared-memory layout, one copy for the host
// (codegen/decode/mla_sm90_family.cpp) and the kernel (templates/decode/attention_decode_mla_sm90.cuh).
//
// Compiled by g++, nvcc and NVRTC: it includes nothing and uses no std.
#pragma once

// The layout's offsets are taken at run time by the kernel too: device functions under nvcc and
// NVRTC, plain constexpr functions under g++.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FJ_MLA_SM90_FN __host__ __device__
#else
#define FJ_MLA_SM90_FN
#endif

namespace flexjit {
namespace decode_mla_sm90 {

// Multi-head latent attention's absorbed form on Hopper: q and k of 576 columns, v the first 512
// of k's rows, up to 64 packed (query head, token) rows per CTA as one wgmma m64 tile, chunks of
// 64 keys. A producer warpgroup gathers key rows with cp.async; two consumer warpgroups each take
// every other chunk's Q K^T and half of the output's columns.
constexpr int kHeadDim = 576;
constexpr int kHeadDimV = 512;
constexpr int kRows = 64;
constexpr int kBlockN = 64;
constexpr int kWarpgroups = 3;
constexpr int kThreads = kWarpgroups * 128;
// setmaxnreg: the producer keeps 24 (it keeps no state across a chunk's halves: load_half reads
// the keys back from shared memory), the consumers take 240 (24 * 128 + 240 * 256 = 64512, the
// 168 a thread the CTA is launched with). At 232 or fewer the consumers spill under score mods and
// masks that read tensors (ptxas 13.0).
constexpr int kProducerRegisters = 24;
constexpr int kConsumerRegisters = 240;
// Splits of a long walk keep at least this many keys each: a CTA's fixed cost (Q's 72 KB, the
// walk's start, its partial row) is small beside 64 chunks, and a decode step of 64 sequences
// needs several CTAs a sequence to fill the device.
constexpr int kSplitMinKeys = 4096;
// Token lists of up to this many entries (decode::max_token_list()): one bit each marks the first
// listed occurrence of a key, and a 16-bit count per 32 entries ranks them.
constexpr int kMaxTokenList = 4096;

constexpr int kSwizzleBytes = 128;                      // a swizzled row of one 64-column block
constexpr int kColumnBlockBytes = kRows * kSwizzleBytes;  // 64 rows (or keys) of one 64-column block
constexpr int kTileAlign = 1024;
constexpr int kSmemPerCtaBytes = 227 * 1024;

// Shared memory from a 1024-byte aligned base:
//   Q (64 rows x 576) | K chunk 0 | K chunk 1 (64 keys x 576 each) | P of chunk 1 (64 x 64) | small:
//   mbarriers (q_full, full[chunk][half], empty[chunk][half]), the chunks' keys and classes, the
//   consumers' running maxima, the bad-sequence flag, the token list's first-occurrence bits and
//   ranks. P of chunk 0 lives in chunk 0's last column block (k's columns 512..575, read only by
//   Q K^T, which is done by then). Q K^T's operands are 128-byte swizzled, column block by block.
struct Layout {
  FJ_MLA_SM90_FN constexpr int q() const { return 0; }
  FJ_MLA_SM90_FN constexpr int chunk(int c) const { return (1 + c) * (kHeadDim / 64) * kColumnBlockBytes; }
  FJ_MLA_SM90_FN constexpr int p(int c) const { return c == 0 ? chunk(0) + (kHeadDim / 64 - 1) * kColumnBlockBytes : chunk(2); }
  FJ_MLA_SM90_FN constexpr int small() const { return p(1) + kColumnBlockBytes; }
  FJ_MLA_SM90_FN constexpr int q_full() const { return small(); }
  // half 0: the column blocks of v's first 256 columns; half 1: the rest of the row.
  FJ_MLA_SM90_FN constexpr int full(int c, int half) const { return small() + 8 + (2 * c + half) * 8; }
  FJ_MLA_SM90_FN constexpr int empty(int c, int half) const { return small() + 40 + (2 * c + half) * 8; }
  FJ_MLA_SM90_FN constexpr int keys(int c) const { return small() + 80 + c * kBlockN * 4; }
  FJ_MLA_SM90_FN constexpr int chunk_class(int c) const { return keys(2) + c * 4; }
  FJ_MLA_SM90_FN constexpr int row_max(int c) const { return chunk_class(2) + c * kRows * 4; }
  FJ_MLA_SM90_FN constexpr int bad() const { return row_max(2); }
  FJ_MLA_SM90_FN constexpr int token_bits() const { return bad() + 4; }
  FJ_MLA_SM90_FN constexpr int token_ranks() const { return token_bits() + kMaxTokenList / 8; }
  FJ_MLA_SM90_FN constexpr int end() const { return token_ranks() + (kMaxTokenList / 32 + 1) * 2; }
  FJ_MLA_SM90_FN constexpr int bytes() const { return ((end() + 3) / 4) * 4 + kTileAlign; }
};

static_assert(Layout().bytes() <= kSmemPerCtaBytes, "the CTA's shared memory");
static_assert(kHeadDim / 64 > kHeadDimV / 64, "P of chunk 0 takes a column block v does not use");

}  // namespace decode_mla_sm90
}  // namespace flexjit
