#pragma once
// A non-owning view of a tensor that lives elsewhere (a PyTorch tensor, a cudaMalloc'ed buffer,
// a host array): where it is, its element type, shape and strides. flexjit never allocates,
// frees or copies through a view; the caller keeps the memory alive for the call (and, for an
// asynchronous launch, until the stream has run it).
#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/dtype.hpp"

namespace flexjit {

struct Device {
  enum class Kind : std::uint8_t { cpu, cuda };
  Kind kind = Kind::cuda;
  int index = 0;  // CUDA device ordinal; 0 for the cpu

  static constexpr Device cpu() { return {Kind::cpu, 0}; }
  static constexpr Device cuda(int ordinal = 0) { return {Kind::cuda, ordinal}; }
  bool is_cuda() const { return kind == Kind::cuda; }
  std::string str() const;  // "cpu", "cuda:0"
  friend bool operator==(const Device&, const Device&) = default;
};

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape{};
  std::vector<std::int64_t> strides{};  // in elements, one per dim; empty means contiguous row-major
  Device device = Device::cuda();

  // A contiguous row-major view. The const overload is for inputs: flexjit never writes to q, k,
  // v or captured tensors.
  static TensorView contiguous(void* data, DType dtype, std::vector<std::int64_t> shape,
                               Device device = Device::cuda());
  static TensorView contiguous(const void* data, DType dtype, std::vector<std::int64_t> shape,
                               Device device = Device::cuda());

  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t numel() const;
  // The stride of dimension d in elements, whether explicit or implied by `strides` being empty.
  std::int64_t stride(int d) const;
  std::vector<std::int64_t> effective_strides() const;
};

}  // namespace flexjit
