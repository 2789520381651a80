// Device memory for one call, allocated and freed in stream order (cuMemAllocAsync,
// cuMemFreeAsync) around the kernels that use it, so that a call never synchronizes. Internal to
// the library; construct it with the call's context current.
#pragma once

#include <cstddef>

#include "jit/cuda_driver.hpp"

namespace flexjit::api {

class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t bytes, CUstream stream) : stream_(stream) {
    jit::check(jit::driver().cuMemAllocAsync(&ptr_, bytes, stream), "cuMemAllocAsync");
  }
  ~StreamWorkspace() {
    if (ptr_ != 0) jit::driver().cuMemFreeAsync(ptr_, stream_);
  }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  unsigned char* bytes() const { return reinterpret_cast<unsigned char*>(ptr_); }

 private:
  CUdeviceptr ptr_ = 0;
  CUstream stream_;
};

}  // namespace flexjit::api
