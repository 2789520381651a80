// Shared by the GPU tests: the skip rule, device memory, element conversions, one engine.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flexjit/flexjit.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit::gpu_test {

// Every GPU test derives from this: it skips, visibly and with the reason, where there is no
// CUDA driver or device (CI), and makes device 0's primary context current otherwise.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

 private:
  bool pushed_ = false;
};

// Device memory in device 0's primary context.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return reinterpret_cast<void*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void fill_bytes(unsigned char value);  // 0xFF: NaN in bf16, fp16 and f32 alike

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

void synchronize();

// float -> the 16-bit element (round to nearest even), and back exactly.
std::uint16_t to_element(float x, DType dtype);
float from_element(std::uint16_t bits, DType dtype);

// One engine per test process, with the default (disk) cache: test processes share compiles.
Engine& engine();

// Programs by name: examples/<name>.py, else tests/gpu/programs/<name>.py. The program is named
// by its path relative to the source tree, so the generated source (which quotes it) and hence
// the kernel cache key are the same on every machine and checkout: a cache filled elsewhere
// for the same arch serves the GPU host. FLEXJIT_SOURCE_DIR in the environment overrides the
// source tree the binary was built from.
Program load_program(const std::string& name);

}  // namespace flexjit::gpu_test
