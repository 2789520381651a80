#include "jit/driver_extras.hpp"

#include <dlfcn.h>

#include "jit/cuda_driver.hpp"

namespace flexjit::jit {
namespace {

using CtxGetDeviceFn = CUresult (*)(CUdevice*);

// driver() has opened libcuda.so.1 already; RTLD_NOLOAD hands back that handle without loading
// anything new.
CtxGetDeviceFn ctx_get_device() {
  static const CtxGetDeviceFn fn = [] {
    driver();
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib == nullptr) throw DriverUnavailable("libcuda.so.1 is not loaded");
    auto f = reinterpret_cast<CtxGetDeviceFn>(dlsym(lib, "cuCtxGetDevice"));
    if (f == nullptr) throw DriverUnavailable("CUDA driver libcuda.so.1 lacks cuCtxGetDevice");
    return f;
  }();
  return fn;
}

}  // namespace

CUcontext current_context() {
  CUcontext ctx = nullptr;
  check(driver().cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  return ctx;
}

int current_context_device() {
  if (current_context() == nullptr) return -1;
  CUdevice dev = 0;
  check(ctx_get_device()(&dev), "cuCtxGetDevice");
  // A CUdevice is the device's ordinal (cuDeviceGet(&d, i) gives d == i).
  return static_cast<int>(dev);
}

int device_attribute(int ordinal, CUdevice_attribute attribute) {
  const DriverApi& api = driver();
  CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  int value = 0;
  check(api.cuDeviceGetAttribute(&value, attribute, dev), "cuDeviceGetAttribute");
  return value;
}

}  // namespace flexjit::jit
