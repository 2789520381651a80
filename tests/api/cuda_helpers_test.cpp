// The host helpers around forward (flexjit/cuda_device.hpp, device_buffer.hpp, cuda_timer.hpp):
// without a driver they say why; with a GPU, memory round-trips and a timed forward takes time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

using ::testing::StartsWith;

bool have_gpu() { return cuda_availability().devices > 0; }

TEST(CudaHelpers, AvailabilityAlwaysAnswers) {
  const CudaAvailability a = cuda_availability();
  EXPECT_GE(a.devices, 0);
  EXPECT_EQ(a.devices > 0, a.reason.empty()) << a.reason;
}

TEST(CudaHelpers, EmptyBufferOwnsNothing) {
  const DeviceBuffer none;
  EXPECT_EQ(none.data(), nullptr);
  EXPECT_EQ(none.bytes(), 0u);
}

TEST(CudaHelpers, BufferRoundTripAndViews) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<std::int32_t> host(1000);
  std::iota(host.begin(), host.end(), -7);
  DeviceBuffer buffer(host.size() * sizeof(std::int32_t));
  buffer.upload(host);
  EXPECT_EQ(buffer.download<std::int32_t>(host.size()), host);
  buffer.fill_bytes(0xFF);
  EXPECT_EQ(buffer.download<std::int32_t>(3), (std::vector<std::int32_t>{-1, -1, -1}));
  const TensorView v = buffer.view(i32, {10, 100});
  EXPECT_EQ(v.data, buffer.data());
  EXPECT_EQ(v.device, Device::cuda(0));
  EXPECT_THROW(buffer.view(i32, {10, 101}), ArgumentError);
  EXPECT_THROW(buffer.upload(host.data(), buffer.bytes() + 1), ArgumentError);
  DeviceBuffer moved = std::move(buffer);
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(moved.bytes(), host.size() * sizeof(std::int32_t));
}

TEST(CudaHelpers, DeviceInfoAndTimedForward) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const CudaDeviceInfo info = cuda_device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_THAT(info.arch, StartsWith("sm_"));
  const Kernel k = engine().compile(example("causal"), {.head_dim = 64, .arch = info.arch});
  DeviceBuffer q(2 * 256 * 64 * 2), out(2 * 256 * 64 * 2);
  q.fill_bytes(0);
  const TensorView tq = q.view(bf16, {1, 2, 256, 64}), to = out.view(bf16, {1, 2, 256, 64});
  CudaTimer timer;
  timer.start();
  k.forward(tq, tq, tq, to);
  timer.stop();
  EXPECT_GT(timer.elapsed_ms(), 0.f);
  cuda_synchronize();
  EXPECT_EQ(out.download<std::uint16_t>(4), (std::vector<std::uint16_t>{0, 0, 0, 0}));  // zero values in, zeros out
}

}  // namespace
}  // namespace flexjit::test
