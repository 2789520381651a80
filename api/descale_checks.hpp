// ForwardOptions::q_descale, k_descale and v_descale: the factors an fp8_e4m3 kernel's inputs are
// multiplied by (FlashAttention-3's descale_q / _k / _v), checked on the host, and what the
// kernels read of them (AttnArgs' descale fields) or the cpu kernel multiplies in.
#pragma once

#include <optional>
#include <vector>

#include "flexjit/options.hpp"
#include "api/argument_problems.hpp"
#include "api/forward_checks.hpp"
#include "templates/common/kernel_args.cuh"

namespace flexjit::api {

// The checked factors: pointers to float32 data (null where not given: 1) and the element strides
// of batch entry and kv head (both 0 for one factor per tensor).
struct Descales {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  int b_stride = 0, h_stride = 0;
  bool any() const { return q != nullptr || k != nullptr || v != nullptr; }
  // The factor of (b, kv head hk) from `factors` (one of q, k, v), 1 where it is null; host memory.
  float at(const float* factors, int b, int hk) const {
    return factors == nullptr ? 1.f : factors[b * b_stride + hk * h_stride];
  }
};

// Adds one problem per mistake: a factor given to a kernel that is not fp8_e4m3, not float32, not
// one element or [B, Hkv], not contiguous, or not where the kernel reads (`memory`: next to q on
// its device, or on the host), and the three not of one form. `shape` may be missing (other
// problems reported it).
Descales check_descales(const ForwardOptions& options, DType kernel_dtype, const std::optional<AttentionShape>& shape,
                        Memory memory, Problems& problems);

// Fills AttnArgs' descale fields (all null for a call without factors).
void fill_descale_args(AttnArgs& a, const Descales& d);

}  // namespace flexjit::api
