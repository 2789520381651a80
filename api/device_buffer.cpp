#include "flexjit/device_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "api/boundary.hpp"
#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit {
namespace {

void check_size(std::size_t wanted, std::size_t have, const char* what) {
  if (wanted > have)
    throw ArgumentError(fmt::format("DeviceBuffer::{}: {} bytes requested, the buffer has {}", what, wanted, have));
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes, int device) : bytes_(bytes), device_(device) {
  api::at_api_boundary("DeviceBuffer", [&] {
    jit::ScopedContext context(jit::primary_context(device));
    CUdeviceptr ptr = 0;
    // A zero-byte buffer still gets an address, so that views of empty tensors are not null.
    jit::check(jit::driver().cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 16)), "cuMemAlloc");
    address_ = static_cast<std::uintptr_t>(ptr);
  });
}

DeviceBuffer::~DeviceBuffer() {
  if (address_ == 0) return;
  // Freeing cannot be reported from a destructor; a failure here leaks at worst.
  try {
    jit::ScopedContext context(jit::primary_context(device_));
    jit::driver().cuMemFree(static_cast<CUdeviceptr>(address_));
  } catch (...) {
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : address_(std::exchange(other.address_, 0)), bytes_(std::exchange(other.bytes_, 0)), device_(other.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    device_ = other.device_;
  }
  return *this;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  check_size(bytes, bytes_, "upload");
  api::at_api_boundary("DeviceBuffer::upload", [&] {
    jit::ScopedContext context(jit::primary_context(device_));
    jit::check(jit::driver().cuMemcpyHtoD(static_cast<CUdeviceptr>(address_), host, bytes), "cuMemcpyHtoD");
  });
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  check_size(bytes, bytes_, "download");
  api::at_api_boundary("DeviceBuffer::download", [&] {
    jit::ScopedContext context(jit::primary_context(device_));
    jit::check(jit::driver().cuMemcpyDtoH(host, static_cast<CUdeviceptr>(address_), bytes), "cuMemcpyDtoH");
  });
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  api::at_api_boundary("DeviceBuffer::fill_bytes", [&] {
    jit::ScopedContext context(jit::primary_context(device_));
    jit::check(jit::driver().cuMemsetD8(static_cast<CUdeviceptr>(address_), value, bytes_), "cuMemsetD8");
  });
}

TensorView DeviceBuffer::view(DType dtype, std::vector<std::int64_t> shape) const {
  TensorView t = TensorView::contiguous(data(), dtype, std::move(shape), Device::cuda(device_));
  const std::int64_t need = t.numel() * dtype_size(dtype);
  if (need < 0 || static_cast<std::size_t>(need) > bytes_)
    throw ArgumentError(fmt::format("DeviceBuffer::view: {} bytes of {} wanted, the buffer has {}", need,
                                    dtype_name(dtype), bytes_));
  return t;
}

}  // namespace flexjit
