#pragma once
// The kv blocks each query block attends to in a block-sparse program (`BlockIndices[qb, kb]`),
// read once from the int32 tensor [B, Hq, ceil(Tq / qb), K] bound under that name.
#include <cstdint>
#include <vector>

#include "ir/interpreter.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu {

class BlockSelection {
 public:
  // Inactive (every key is a candidate) when p declares no BlockIndices or env does not bind
  // it. Throws std::runtime_error for a wrong dtype, rank or shape, or an entry outside
  // [-1, ceil(Tkv / kb)), where Tkv is kv_lens[b] when given (each sequence its own length).
  // The H dimension of the tensor is Hq, or Hkv (one list per kv head, shared by its Hq / Hkv
  // query heads; Hkv = 0 means Hq).
  BlockSelection(const ir::Program& p, const ir::Env* env, int B, int Hq, int Tq, int Tkv, int Hkv = 0,
                 const std::int32_t* kv_lens = nullptr);

  bool active() const { return active_; }
  int q_block() const { return q_block_; }
  int kv_block() const { return kv_block_; }
  // The selected kv block numbers of query block qb of (b, h): sorted, without repeats.
  const std::vector<int>& blocks(int b, int h, int qb) const {
    return lists_[(static_cast<std::size_t>(b) * Hq_ + h / group_) * nq_ + qb];
  }

 private:
  bool active_ = false;
  int q_block_ = 0, kv_block_ = 0, Hq_ = 0, nq_ = 0, group_ = 1;  // Hq_: heads of the tensor
  std::vector<std::vector<int>> lists_;
};

}  // namespace flexjit::cpu
