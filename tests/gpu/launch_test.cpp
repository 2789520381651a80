// How forward() meets the CUDA state it finds: with or without a current context, and nothing
// launched (outputs untouched) when an argument is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jit/cuda_driver.hpp"
#include "tests/gpu/attention_case.hpp"

namespace flexjit::gpu_test {
namespace {

class Launch : public GpuTest {};

TEST_F(Launch, WithoutACurrentContextUsesThePrimaryContext) {
  AttentionRun run({"causal", bf16, 64, 1, 2, 1, 100, 100}, 31);
  // GpuTest pushed the primary context; take it off so that none is current.
  CUcontext popped = nullptr;
  jit::check(jit::driver().cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  CUcontext current = reinterpret_cast<CUcontext>(1);
  jit::check(jit::driver().cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == nullptr) run.run_and_check();
  jit::check(jit::driver().cuCtxPushCurrent(popped), "cuCtxPushCurrent");
  EXPECT_EQ(current, nullptr) << "a context was still current; the case was not run";
}

TEST_F(Launch, NothingIsLaunchedOnBadInput) {
  DeviceBuffer q(2 * 64 * 64), out(2 * 64 * 64);
  out.fill_bytes(0xAB);
  Kernel k = engine().compile(load_program("sliding_window"), {.head_dim = 64, .dtype = bf16});
  const TensorView tq = TensorView::contiguous(q.get(), bf16, {1, 1, 64, 64});
  const TensorView to = TensorView::contiguous(out.get(), bf16, {1, 1, 64, 64});
  // window is not bound: refused before anything reaches the GPU.
  EXPECT_THROW(k.forward(tq, tq, tq, to, {}), ArgumentError);
  synchronize();
  std::vector<unsigned char> bytes(out.bytes());
  out.download(bytes.data(), bytes.size());
  for (unsigned char b : bytes) ASSERT_EQ(b, 0xAB);
}

TEST_F(Launch, KernelArchIsTheDevicesWhenLeftEmpty) {
  Kernel k = engine().compile(load_program("causal"), {.head_dim = 64, .dtype = fp16});
  EXPECT_EQ(k.arch(), jit::device_arch(0));
}

}  // namespace
}  // namespace flexjit::gpu_test
