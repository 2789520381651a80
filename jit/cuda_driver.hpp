// The CUDA driver, opened with dlopen("libcuda.so.1") at first use and never linked, so that the
// library loads, generates and compiles on machines without a GPU; only a call that needs the
// device fails, with a message saying why.
#pragma once

#include <cuda.h>  // types and prototypes only; nothing from libcuda is linked

#include <string>
#include <string_view>

#include "flexjit/error.hpp"

namespace flexjit::jit {

// The entry points we use. cuda.h #defines several of these names to their current versions
// (cuMemAlloc -> cuMemAlloc_v2, cuCtxPushCurrent -> cuCtxPushCurrent_v2, ...), and the same macro
// renames our member and its dlsym string, so each pointer always has the type and the symbol of
// the version the header declares.
#define FLEXJIT_DRIVER_FUNCTIONS(X)                                                            \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorString) X(cuGetErrorName)                        \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetAttribute) X(cuDeviceGetName)                \
  X(cuDevicePrimaryCtxRetain) X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxPushCurrent)        \
  X(cuCtxPopCurrent) X(cuCtxSynchronize)                                                       \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                                 \
  X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuStreamSynchronize)         \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8)                    \
  X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemcpyDtoD) X(cuMemsetD32Async)                      \
  X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) \
  X(cuTensorMapEncodeTiled)

struct DriverApi {
#define FLEXJIT_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  FLEXJIT_DRIVER_FUNCTIONS(FLEXJIT_DRIVER_MEMBER)
#undef FLEXJIT_DRIVER_MEMBER
};

// The driver could not be loaded or initialised (no libcuda.so.1, too old, no device).
class DriverUnavailable : public flexjit::Error {
 public:
  using flexjit::Error::Error;
};

// A failed driver call is a flexjit::CudaError: what() = "<what> failed: CUDA_ERROR_NAME
// (description)", code() the CUresult.

// Loads libcuda.so.1, resolves every entry point and runs cuInit(0), once per process and
// thread-safely. Throws DriverUnavailable with the reason if any of that fails.
const DriverApi& driver();

// True when driver() would succeed; otherwise stores the reason in *why (when given).
bool driver_available(std::string* why = nullptr);

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"; works (less verbosely) without a driver.
std::string error_text(CUresult result);
// "CUDA_ERROR_OUT_OF_MEMORY"; "CUDA error 2" without a driver.
std::string error_name(CUresult result);

// Throws flexjit::CudaError when result != CUDA_SUCCESS.
void check(CUresult result, std::string_view what);

int device_count();

// "sm_80", "sm_86", "sm_90a", "sm_100a": the 'a' (arch-specific features such as wgmma and
// tcgen05) is chosen for 9.0 and 10.0, where our kernels want those instructions. Code built for
// an 'a' target runs only on that exact compute capability, which is fine because we compile per
// device at run time.
std::string arch_for_compute_capability(int major, int minor);
std::string device_arch(int device);

// The device's primary context, retained once per process and never released (the runtime API's
// convention, so we share a context with PyTorch and friends).
CUcontext primary_context(int device);

// Makes ctx current for the lifetime of the object (push/pop), so library calls leave the
// caller's current context as they found it.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;
};

}  // namespace flexjit::jit
