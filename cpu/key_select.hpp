#pragma once
// The keys each query row may attend to in a program that lists them: `BlockIndices[qb, kb]` (an
// int32 tensor [B, H, ceil(Tq / qb), K] of kv block numbers per query block) or `TokenIndices` (an
// int32 tensor [B, H, Tq, K] of key positions per query row), read once into sorted, disjoint key
// ranges per list. The mask still applies inside them.
#include <cstdint>
#include <span>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

struct KeyRange {
  int lo, hi;  // keys [lo, hi); a block's range may run past the sequence's end: callers clip it
};

class KeySelection {
 public:
  // Inactive (every key is a candidate) when p declares no list or env does not bind it. Throws
  // std::runtime_error for a wrong dtype, rank or shape, or an entry that is neither -1 nor a
  // block (a key) of the sequence, whose length is kv_lens[b] when given, else Tkv. The H
  // dimension of the tensor is Hq, Hkv (one list per kv head, shared by its Hq / Hkv query heads;
  // Hkv = 0 means Hq) or, for token lists, 1 (one list for every head).
  KeySelection(const ir::Program& p, const ir::Env* env, int B, int Hq, int Tq, int Tkv, int Hkv = 0,
               const std::int32_t* kv_lens = nullptr);

  bool active() const { return active_; }
  // The selected keys of query row i of (b, h).
  std::span<const KeyRange> ranges(int b, int h, int i) const {
    const std::size_t list = (static_cast<std::size_t>(b) * heads_ + h / group_) * rows_ + i / rows_per_list_;
    return {ranges_.data() + starts_[list], ranges_.data() + starts_[list + 1]};
  }

 private:
  bool active_ = false;
  int heads_ = 0, rows_ = 0, group_ = 1;  // of the tensor: heads, lists per head; query heads per list head
  int rows_per_list_ = 1;                 // query rows sharing a list: q_block, or 1 for tokens
  std::vector<KeyRange> ranges_;          // every list's ranges, one list after another
  std::vector<std::size_t> starts_;       // list l is ranges_[starts_[l], starts_[l + 1])
};

}  // namespace flexjit::cpu
