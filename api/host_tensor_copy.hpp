// Between strided host tensors of f32 / bf16 / fp16 (and fp8_e4m3 inputs; int32 for page tables
// and lengths) and the contiguous arrays the CPU back end reads and writes: the cpu kernel's
// forward gathers its inputs and scatters its outputs with these, so it takes any strides and the
// 16- and 8-bit dtypes.
#pragma once

#include <cstdint>
#include <vector>

#include "flexjit/tensor_view.hpp"

namespace flexjit::api {

// The elements of `t` in row-major order, as float (exact for every supported dtype).
std::vector<float> gather_as_float(const TensorView& t);

// The elements of an int32 tensor `t` in row-major order.
std::vector<std::int32_t> gather_int32(const TensorView& t);

// Writes `values` (row-major, t.numel() of them) into `t`, rounding to its dtype to nearest even
// (f32, bf16 or fp16: outputs are never fp8).
void scatter_from_float(const std::vector<float>& values, const TensorView& t);

}  // namespace flexjit::api
