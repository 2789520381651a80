#pragma once
// A built block mask: which (query tile, kv tile) pairs of one kernel's tiling a mask that reads
// captured tensors (document ids, per-batch prefix lengths, selection tables) can keep, and which
// of those it keeps entirely. Kernel::build_block_mask fills it in caller-owned device memory with
// one launch; Kernel::forward follows it (ForwardOptions::block_mask) instead of visiting every
// tile of the kv range. Build it once per (tensor contents, shape) and reuse it across layers and
// calls; rebuild it when the captured tensors change.
//
// Masks made of index arithmetic only (causal, windows, sinks, chunks, ...) need none: their kv
// ranges and tile classes come in closed form (Kernel::needs_block_mask() is false).
#include <cstdint>
#include <string>

namespace flexjit {

struct BlockMask {
  void* storage = nullptr;  // device memory the map lives in (owned by the caller)
  int device = 0;           // its CUDA ordinal
  std::string kernel{};     // entry name of the kernel it was built for
  int block_m = 0, block_n = 0;  // that kernel's query and kv tile sizes
  int B = 0, Hq = 0, Tq = 0, Tkv = 0;  // the shape it was built for
  std::int64_t q_offset = 0, kv_offset = 0;  // and the global positions (BlockMaskOptions)
  bool per_batch = false;   // the mask reads b: one map per batch entry (else shared)
  bool per_head = false;    // the mask reads h: one map per query head (else shared)
  int q_tiles = 0, kv_tiles = 0;
  // Fingerprints forward checks: of the kernel's generated source, and of the bound scalars'
  // values and tensors' shapes the map was built with (tensor contents cannot be checked: rebuild
  // the map when they change).
  std::uint64_t kernel_id = 0;
  std::uint64_t bindings_id = 0;

  bool empty() const { return storage == nullptr; }
  // Layout in `storage` (int32): counts [maps_b][maps_h][q_tiles], then entries
  // [maps_b][maps_h][q_tiles][kv_tiles], each entry kv_tile * 4 + class (1 = FULL, 2 = PARTIAL),
  // ascending; only the first counts[...] entries of a row are meaningful.
  int maps_b() const { return per_batch ? B : 1; }
  int maps_h() const { return per_head ? Hq : 1; }
  std::int64_t rows() const { return static_cast<std::int64_t>(maps_b()) * maps_h() * q_tiles; }
  // int32s of `storage` the map uses (counts and entries): what to copy back to read it
  // (flexjit/block_mask_read.hpp).
  std::int64_t storage_ints() const { return rows() * (1 + static_cast<std::int64_t>(kv_tiles)); }
};

}  // namespace flexjit
