#include "bench/read_probe.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "bench/event_timing.hpp"
#include "jit/cuda_driver.hpp"
#include "jit/kernel_cache.hpp"

namespace bench {
namespace {

// Each thread keeps four 16-byte loads in flight (a grid-stride loop unrolled by hand), and the
// xor of everything it read decides a store that never happens in practice, so no load is dead.
constexpr const char* kProbeSource = R"(
extern "C" __global__ void __launch_bounds__(512) flexjit_read_probe(const unsigned* data,
                                                                     unsigned long long n16,
                                                                     unsigned* sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  auto load = [&](unsigned long long at) {
    unsigned a, b, c, d;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(data + 4 * at));
    return a ^ b ^ c ^ d;
  };
  for (; i + 3 * stride < n16; i += 4 * stride) {
    const unsigned x0 = load(i), x1 = load(i + stride), x2 = load(i + 2 * stride), x3 = load(i + 3 * stride);
    acc ^= x0 ^ x1 ^ x2 ^ x3;
  }
  for (; i < n16; i += stride) acc ^= load(i);
  if (acc == 0x9e3779b9u) atomicAdd(sink, 1u);
}
)";

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace

ReadBandwidth measure_read_bandwidth(int device) {
  namespace jit = flexjit::jit;
  using jit::check;
  using jit::driver;
  ReadBandwidth r;
  jit::CompileRequest request;
  request.source = kProbeSource;
  request.source_name = "flexjit_read_probe.cu";
  request.arch = jit::device_arch(device);
  const jit::CompileResult compiled = jit::KernelCache::global().compile_uncached(request);

  CUmodule module = nullptr;
  check(driver().cuModuleLoadData(&module, compiled.image.data()), "cuModuleLoadData (read probe)");
  CUfunction probe = nullptr;
  check(driver().cuModuleGetFunction(&probe, module, "flexjit_read_probe"), "cuModuleGetFunction (read probe)");
  CUdevice dev = 0;
  check(driver().cuDeviceGet(&dev, device), "cuDeviceGet");
  int sms = 0;
  check(driver().cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "cuDeviceGetAttribute");

  CUdeviceptr data = 0, sink = 0;
  check(driver().cuMemAlloc(&data, r.bytes), "cuMemAlloc (read probe)");
  check(driver().cuMemAlloc(&sink, sizeof(unsigned)), "cuMemAlloc (read probe)");
  check(driver().cuMemsetD8(data, 0x5a, r.bytes), "cuMemsetD8");
  unsigned long long n16 = r.bytes / 16;
  void* args[] = {&data, &n16, &sink};
  const auto pass = [&](int) {
    check(driver().cuLaunchKernel(probe, static_cast<unsigned>(4 * sms), 1, 1, 512, 1, 1, 0, nullptr, args, nullptr),
          "cuLaunchKernel (read probe)");
  };
  for (int i = 0; i < 3; ++i) pass(i);
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize (read probe)");
  r.tbps = static_cast<double>(r.bytes) / median_of(time_each_launch(r.reps, pass)) / 1e9;
  driver().cuMemFree(data);
  driver().cuMemFree(sink);
  driver().cuModuleUnload(module);
  return r;
}

}  // namespace bench
