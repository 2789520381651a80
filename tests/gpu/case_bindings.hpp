// Random values for the declarations of the programs the GPU tests run, chosen by name so that
// each example gets inputs that make sense for it (sorted document ids, prefix lengths within the
// sequence, real ALiBi slopes, sink logits of a realistic size, windows from 1 token to longer
// than the sequence). Host bytes in the declared dtypes; the test uploads them.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"

namespace flexjit::gpu_test {

struct HostTensor {
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;
  TensorView host_view() const { return TensorView::contiguous(bytes.data(), dtype, shape, Device::cpu()); }
};

struct CaseBindings {
  std::map<std::string, HostTensor> tensors;
  std::map<std::string, Binding> scalars;
  std::string describe() const;  // "window=100 doc_ids=i32[1000]"
};

struct CaseShape {
  int B, Hq, Tq, Tkv;
  int Hkv = 0;  // 0: Hq
  // The call's global positions (ForwardOptions): tensors the mods index by position cover
  // q_offset + Tq and kv_offset + Tkv; block and token lists name this call's rows.
  int q_offset = 0, kv_offset = 0;
};

// Throws std::runtime_error for a declaration it has no rule for.
CaseBindings random_bindings(const Program& program, const CaseShape& shape, std::mt19937_64& rng);

// A block-index list [B, H, ceil(Tq / q_block), K] (H = Hq, or Hkv when per_kv_head): each entry
// -1 (padding), a repeat of an earlier entry, or a random kv block in range; the diagonal block
// (the query block's own keys, as NSA always selects) is listed first in about half the lists.
HostTensor random_block_indices(const CaseShape& shape, int q_block, int kv_block, int K, bool per_kv_head,
                                std::mt19937_64& rng);

// Fresh random values for one captured tensor (same dtype and shape), by the same rule.
HostTensor random_tensor(const std::string& name, const Parameter& p, const CaseShape& shape, std::mt19937_64& rng);

}  // namespace flexjit::gpu_test
