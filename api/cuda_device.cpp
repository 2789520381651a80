#include "flexjit/cuda_device.hpp"

#include "api/boundary.hpp"
#include "jit/cuda_driver.hpp"

namespace flexjit {

CudaAvailability cuda_availability() {
  CudaAvailability a;
  if (!jit::driver_available(&a.reason)) return a;
  try {
    a.devices = jit::device_count();
  } catch (const CudaError& e) {
    a.reason = e.what();
    return a;
  }
  if (a.devices == 0) a.reason = "the CUDA driver reports no devices";
  return a;
}

CudaDeviceInfo cuda_device_info(int ordinal) {
  return api::at_api_boundary("cuda_device_info", [&] {
    CUdevice device = 0;
    jit::check(jit::driver().cuDeviceGet(&device, ordinal), "cuDeviceGet");
    char name[256] = {};
    jit::check(jit::driver().cuDeviceGetName(name, sizeof(name), device), "cuDeviceGetName");
    return CudaDeviceInfo{ordinal, name, jit::device_arch(ordinal)};
  });
}

void cuda_synchronize(int ordinal) {
  api::at_api_boundary("cuda_synchronize", [&] {
    jit::ScopedContext context(jit::primary_context(ordinal));
    jit::check(jit::driver().cuCtxSynchronize(), "cuCtxSynchronize");
  });
}

}  // namespace flexjit
