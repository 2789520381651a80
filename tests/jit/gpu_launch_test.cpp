// End to end on a real GPU: compile for the device's arch, cache, load, launch, read back.
// Every test here skips on machines without a CUDA driver.
#include "jit/kernel_cache.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace flexjit::jit {
namespace {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!driver_available(&why)) GTEST_SKIP() << why;
    if (device_count() == 0) GTEST_SKIP() << "no CUDA device";
  }
};

// Device memory for the test, freed in the primary context.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : ctx_(primary_context(0)) {
    ScopedContext scope(ctx_);
    check(driver().cuMemAlloc(&ptr_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() {
    ScopedContext scope(ctx_);
    driver().cuMemFree(ptr_);
  }
  CUdeviceptr get() const { return ptr_; }

 private:
  CUcontext ctx_;
  CUdeviceptr ptr_ = 0;
};

void run_saxpy(const Artifact& artifact, const std::string& kernel) {
  const Module& module = artifact.module(0);
  CUfunction fn = module.function(artifact.symbol(kernel));
  constexpr int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  DeviceBuffer dx(n * sizeof(float)), dy(n * sizeof(float));
  ScopedContext scope(module.context());
  const DriverApi& api = driver();
  check(api.cuMemcpyHtoD(dx.get(), x.data(), n * sizeof(float)), "cuMemcpyHtoD");
  check(api.cuMemcpyHtoD(dy.get(), y.data(), n * sizeof(float)), "cuMemcpyHtoD");

  CUevent start = nullptr, stop = nullptr;
  check(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  float a = 2.0f;
  CUdeviceptr px = dx.get(), py = dy.get();
  int count = n;
  void* args[] = {&a, &px, &py, &count};
  LaunchConfig config;
  config.grid[0] = (n + 127) / 128;
  config.block[0] = 128;
  check(api.cuEventRecord(start, nullptr), "cuEventRecord");
  launch(module.context(), fn, config, args);
  check(api.cuEventRecord(stop, nullptr), "cuEventRecord");
  check(api.cuStreamSynchronize(nullptr), "cuStreamSynchronize");
  float ms = -1;
  check(api.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  EXPECT_GE(ms, 0.0f);
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);

  check(api.cuMemcpyDtoH(y.data(), dy.get(), n * sizeof(float)), "cuMemcpyDtoH");
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * static_cast<float>(i) + 1.0f) << i;
}

TEST_F(GpuTest, CompileCacheLoadLaunch) {
  test::TempDir tmp;
  CompileRequest r;
  r.source = test::kSaxpySource;
  r.arch = device_arch(0);
  CompileJob job(r, "saxpy");
  KernelCacheOptions o;
  o.directory = tmp.path();
  {
    KernelCache cache(o);
    run_saxpy(*cache.get_or_compile(job), "saxpy");
  }
  KernelCache cache(o);  // from disk this time
  ArtifactPtr a = cache.get_or_compile(job);
  EXPECT_EQ(a->origin(), ArtifactOrigin::disk);
  run_saxpy(*a, "saxpy");
  EXPECT_EQ(&a->module(0), &a->module(0));  // loaded once per device
}

TEST_F(GpuTest, TemplateKernelThroughLoweredName) {
  CompileRequest r;
  r.source =
      "template <int Scale> __global__ void saxpy_t(float a, const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = Scale * a * x[i] + y[i];\n"
      "}\n";
  r.arch = device_arch(0);
  r.name_expressions = {"saxpy_t<1>"};
  KernelCacheOptions o;
  o.use_disk = false;
  KernelCache cache(o);
  run_saxpy(*cache.get_or_compile(CompileJob(r, "saxpy_t")), "saxpy_t<1>");
}

TEST_F(GpuTest, PtxLoadsToo) {
  CompileRequest r;
  r.source = test::kSaxpySource;
  r.arch = device_arch(0);
  r.output = OutputKind::ptx;
  Artifact a(compile(r), ArtifactOrigin::compiled);
  run_saxpy(a, "saxpy");
}

TEST_F(GpuTest, MissingKernelNameIsACudaError) {
  CompileRequest r;
  r.source = test::kSaxpySource;
  r.arch = device_arch(0);
  Artifact a(compile(r), ArtifactOrigin::compiled);
  try {
    a.module(0).function("nope");
    FAIL();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("cuModuleGetFunction('nope') failed: CUDA_ERROR_NOT_FOUND"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace flexjit::jit
