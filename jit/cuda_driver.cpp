#include "jit/cuda_driver.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>

namespace flexjit::jit {
namespace {

#define FLEXJIT_STR2(x) #x
#define FLEXJIT_STR(x) FLEXJIT_STR2(x)  // expands the cuda.h rename first: "cuMemAlloc_v2"

struct LoadedDriver {
  DriverApi api;
  std::string error;  // empty when usable
};

void* resolve(void* lib, const char* name) {
  void* fn = dlsym(lib, name);
  // cuEventElapsedTime_v2 (CUDA 12.8+) has the same signature as the older symbol, so a driver
  // that predates it can still time kernels. No other fallback is safe: the v1 memory functions
  // take 32-bit sizes.
  if (fn == nullptr && std::string_view(name) == "cuEventElapsedTime_v2")
    fn = dlsym(lib, "cuEventElapsedTime");
  return fn;
}

LoadedDriver load_driver() {
  LoadedDriver out;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace of the host process.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    out.error = fmt::format("CUDA driver not found: {}", err ? err : "libcuda.so.1 could not be loaded");
    return out;
  }
#define FLEXJIT_DRIVER_RESOLVE(name)                                                                  \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(resolve(lib, FLEXJIT_STR(name)));           \
  if (out.api.name == nullptr) {                                                                      \
    out.error = fmt::format("CUDA driver libcuda.so.1 lacks {} (it is older than the CUDA {}.{} " \
                            "headers flexjit was built with)",                                   \
                            FLEXJIT_STR(name), CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);    \
    return out;                                                                                       \
  }
  FLEXJIT_DRIVER_FUNCTIONS(FLEXJIT_DRIVER_RESOLVE)
#undef FLEXJIT_DRIVER_RESOLVE
  // The library stays open for the life of the process: function pointers and modules outlive
  // any point at which closing it would be safe.
  if (CUresult r = out.api.cuInit(0); r != CUDA_SUCCESS) {
    const char *name = nullptr, *text = nullptr;
    out.api.cuGetErrorName(r, &name);
    out.api.cuGetErrorString(r, &text);
    out.error = fmt::format("CUDA driver could not be initialised: cuInit failed: {} ({})",
                            name ? name : "unknown error", text ? text : "no description");
  }
  return out;
}

const LoadedDriver& loaded() {
  static const LoadedDriver driver = load_driver();  // thread-safe, once per process
  return driver;
}

}  // namespace

const DriverApi& driver() {
  const LoadedDriver& d = loaded();
  if (!d.error.empty()) throw DriverUnavailable(d.error);
  return d.api;
}

bool driver_available(std::string* why) {
  const LoadedDriver& d = loaded();
  if (why != nullptr) *why = d.error;
  return d.error.empty();
}

std::string error_text(CUresult result) {
  const LoadedDriver& d = loaded();
  const char *name = nullptr, *text = nullptr;
  if (d.api.cuGetErrorName != nullptr) d.api.cuGetErrorName(result, &name);
  if (d.api.cuGetErrorString != nullptr) d.api.cuGetErrorString(result, &text);
  if (name == nullptr) return fmt::format("CUDA error {}", static_cast<int>(result));
  return text ? fmt::format("{} ({})", name, text) : std::string(name);
}

std::string error_name(CUresult result) {
  const LoadedDriver& d = loaded();
  const char* name = nullptr;
  if (d.api.cuGetErrorName != nullptr) d.api.cuGetErrorName(result, &name);
  return name != nullptr ? std::string(name) : fmt::format("CUDA error {}", static_cast<int>(result));
}

void check(CUresult result, std::string_view what) {
  if (result != CUDA_SUCCESS)
    throw CudaError(fmt::format("{} failed: {}", what, error_text(result)), static_cast<int>(result),
                    error_name(result));
}

int device_count() {
  int count = 0;
  check(driver().cuDeviceGetCount(&count), "cuDeviceGetCount");
  return count;
}

std::string arch_for_compute_capability(int major, int minor) {
  bool arch_specific = (major == 9 || major == 10) && minor == 0;
  return fmt::format("sm_{}{}{}", major, minor, arch_specific ? "a" : "");
}

std::string device_arch(int device) {
  const DriverApi& api = driver();
  CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, device), "cuDeviceGet");
  int major = 0, minor = 0;
  check(api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute(compute capability major)");
  check(api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute(compute capability minor)");
  return arch_for_compute_capability(major, minor);
}

CUcontext primary_context(int device) {
  static std::mutex mutex;
  static std::map<int, CUcontext> contexts;
  const DriverApi& api = driver();
  std::lock_guard lock(mutex);
  auto it = contexts.find(device);
  if (it != contexts.end()) return it->second;
  CUdevice dev = 0;
  check(api.cuDeviceGet(&dev, device), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(api.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  contexts.emplace(device, ctx);
  return ctx;
}

ScopedContext::ScopedContext(CUcontext ctx) {
  check(driver().cuCtxPushCurrent(ctx), "cuCtxPushCurrent");
}

ScopedContext::~ScopedContext() {
  CUcontext popped = nullptr;
  driver().cuCtxPopCurrent(&popped);  // cannot fail after a successful push; nothing to report
}

}  // namespace flexjit::jit
