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
};

// Throws std::runtime_error for a declaration it has no rule for.
CaseBindings random_bindings(const Program& program, const CaseShape& shape, std::mt19937_64& rng);

// Fresh random values for one captured tensor (same dtype and shape), by the same rule.
HostTensor random_tensor(const std::string& name, const Parameter& p, const CaseShape& shape, std::mt19937_64& rng);

}  // namespace flexjit::gpu_test
