#include "api/host_tensor_copy.hpp"

#include <cstdint>
#include <cstring>

#include "flexjit/fp8.hpp"
#include "flexjit/half.hpp"
#include "ir/internal_error.hpp"

namespace flexjit::api {
namespace {

// Calls fn(element index in row-major order, element offset in memory) for every element.
template <class Fn>
void for_each_element(const TensorView& t, Fn&& fn) {
  const std::int64_t n = t.numel();
  if (n == 0) return;
  const std::vector<std::int64_t> strides = t.effective_strides();
  std::vector<std::int64_t> index(t.shape.size(), 0);
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    fn(i, offset);
    // Odometer increment from the last dimension, keeping the memory offset in step.
    for (int d = t.rank() - 1; d >= 0; --d) {
      const auto k = static_cast<std::size_t>(d);
      offset += strides[k];
      if (++index[k] < t.shape[k]) break;
      offset -= strides[k] * t.shape[k];
      index[k] = 0;
    }
  }
}

}  // namespace

std::vector<float> gather_as_float(const TensorView& t) {
  std::vector<float> out(static_cast<std::size_t>(t.numel()));
  const auto* base = static_cast<const unsigned char*>(t.data);
  const std::int64_t size = dtype_size(t.dtype);
  for_each_element(t, [&](std::int64_t i, std::int64_t offset) {
    const unsigned char* p = base + offset * size;
    float& x = out[static_cast<std::size_t>(i)];
    std::uint16_t bits = 0;
    switch (t.dtype) {
      case DType::f32: std::memcpy(&x, p, sizeof x); break;
      case DType::bf16: std::memcpy(&bits, p, sizeof bits), x = bf16_bits_to_float(bits); break;
      case DType::fp16: std::memcpy(&bits, p, sizeof bits), x = fp16_bits_to_float(bits); break;
      case DType::fp8_e4m3: x = e4m3_bits_to_float(*p); break;
      default: internal_error("gather_as_float: unchecked dtype");
    }
  });
  return out;
}

std::vector<std::int32_t> gather_int32(const TensorView& t) {
  internal_assert(t.dtype == DType::i32, "gather_int32: unchecked dtype");
  std::vector<std::int32_t> out(static_cast<std::size_t>(t.numel()));
  const auto* base = static_cast<const unsigned char*>(t.data);
  for_each_element(t, [&](std::int64_t i, std::int64_t offset) {
    std::memcpy(&out[static_cast<std::size_t>(i)], base + offset * 4, 4);
  });
  return out;
}

void scatter_from_float(const std::vector<float>& values, const TensorView& t) {
  internal_assert(static_cast<std::int64_t>(values.size()) == t.numel(), "scatter_from_float: size mismatch");
  auto* base = static_cast<unsigned char*>(t.data);
  const std::int64_t size = dtype_size(t.dtype);
  for_each_element(t, [&](std::int64_t i, std::int64_t offset) {
    unsigned char* p = base + offset * size;
    const float x = values[static_cast<std::size_t>(i)];
    std::uint16_t bits = 0;
    switch (t.dtype) {
      case DType::f32: std::memcpy(p, &x, sizeof x); break;
      case DType::bf16: bits = float_to_bf16_bits(x), std::memcpy(p, &bits, sizeof bits); break;
      case DType::fp16: bits = float_to_fp16_bits(x), std::memcpy(p, &bits, sizeof bits); break;
      default: internal_error("scatter_from_float: unchecked dtype");
    }
  });
}

}  // namespace flexjit::api
