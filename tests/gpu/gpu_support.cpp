#include "tests/gpu/gpu_support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "ir/interpreter.hpp"
#include "flexjit/half.hpp"

namespace flexjit::gpu_test {

using jit::check;
using jit::driver;

void GpuTest::SetUp() {
  std::string why;
  if (!jit::driver_available(&why)) GTEST_SKIP() << "no CUDA driver: " << why;
  if (jit::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  check(driver().cuCtxPushCurrent(jit::primary_context(0)), "cuCtxPushCurrent");
  pushed_ = true;
}

void GpuTest::TearDown() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  driver().cuCtxPopCurrent(&popped);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  jit::ScopedContext scope(jit::primary_context(0));
  check(driver().cuMemAlloc(&ptr_, bytes == 0 ? 16 : bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  jit::ScopedContext scope(jit::primary_context(0));
  driver().cuMemFree(ptr_);
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  jit::ScopedContext scope(jit::primary_context(0));
  check(driver().cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  jit::ScopedContext scope(jit::primary_context(0));
  check(driver().cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill_bytes(unsigned char value) {
  jit::ScopedContext scope(jit::primary_context(0));
  check(driver().cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8");
}

void synchronize() {
  jit::ScopedContext scope(jit::primary_context(0));
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize (kernel execution)");
}

std::uint16_t to_element(float x, DType dtype) {
  return dtype == DType::bf16 ? float_to_bf16_bits(x) : float_to_fp16_bits(x);
}

float from_element(std::uint16_t bits, DType dtype) {
  return dtype == DType::bf16 ? ir::bfloat16_to_float(bits) : ir::half_to_float(bits);
}

Engine& engine() {
  static Engine jit;
  return jit;
}

Program load_program(const std::string& name) {
  const char* env = std::getenv("FLEXJIT_SOURCE_DIR");
  const std::filesystem::path root = env != nullptr ? env : FLEXJIT_SOURCE_DIR;
  std::string relative = "examples/" + name + ".py";
  if (!std::filesystem::exists(root / relative)) relative = "tests/gpu/programs/" + name + ".py";
  std::ifstream in(root / relative, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + (root / relative).string());
  std::ostringstream text;
  text << in.rdbuf();
  return Program::from_source(text.str(), relative);
}

}  // namespace flexjit::gpu_test
