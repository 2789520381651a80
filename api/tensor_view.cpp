// TensorView and Device: plain data with a few helpers.
#include <fmt/format.h>

#include "flexjit/tensor_view.hpp"

namespace flexjit {

std::string Device::str() const { return kind == Kind::cpu ? "cpu" : fmt::format("cuda:{}", index); }

TensorView TensorView::contiguous(void* data, DType dtype, std::vector<std::int64_t> shape, Device device) {
  return TensorView{data, dtype, std::move(shape), {}, device};
}

TensorView TensorView::contiguous(const void* data, DType dtype, std::vector<std::int64_t> shape, Device device) {
  return contiguous(const_cast<void*>(data), dtype, std::move(shape), device);
}

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

std::int64_t TensorView::stride(int d) const {
  if (!strides.empty()) return strides.at(static_cast<std::size_t>(d));
  std::int64_t s = 1;
  for (int i = rank() - 1; i > d; --i) s *= shape[static_cast<std::size_t>(i)];
  return s;
}

std::vector<std::int64_t> TensorView::effective_strides() const {
  if (!strides.empty()) return strides;
  std::vector<std::int64_t> out(shape.size());
  for (int d = 0; d < rank(); ++d) out[static_cast<std::size_t>(d)] = stride(d);
  return out;
}

}  // namespace flexjit
