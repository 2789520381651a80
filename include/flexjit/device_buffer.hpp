#pragma once
// Device memory owned by the host program, for callers that have no CUDA runtime or framework of
// their own (the command line, tests, small tools): allocated in the device's primary context,
// freed when the buffer is destroyed. Copies are synchronous.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "flexjit/tensor_view.hpp"

namespace flexjit {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws flexjit::Error without a driver, flexjit::CudaError when the allocation fails.
  explicit DeviceBuffer(std::size_t bytes, int device = 0);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return reinterpret_cast<void*>(address_); }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

  // Host -> device and device -> host, `bytes` from the start of the buffer (at most bytes()).
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  template <class T>
  void upload(const std::vector<T>& host) { upload(host.data(), host.size() * sizeof(T)); }
  template <class T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> out(count);
    download(out.data(), count * sizeof(T));
    return out;
  }
  void fill_bytes(unsigned char value);

  // A contiguous view of the buffer as a tensor (its size must fit in bytes()).
  TensorView view(DType dtype, std::vector<std::int64_t> shape) const;

 private:
  std::uintptr_t address_ = 0;
  std::size_t bytes_ = 0;
  int device_ = 0;
};

}  // namespace flexjit
