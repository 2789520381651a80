#include "jit/nvrtc_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <vector>

// Set by jit/CMakeLists.txt from the CUDA Toolkit found at configure time.
#ifndef FLEXJIT_CUDA_LIBRARY_DIR
#define FLEXJIT_CUDA_LIBRARY_DIR ""
#endif
#ifndef FLEXJIT_NVRTC_SONAME
#define FLEXJIT_NVRTC_SONAME "libnvrtc.so"
#endif
#ifndef FLEXJIT_NVRTC_BUILT_VERSION
#define FLEXJIT_NVRTC_BUILT_VERSION "unknown"
#endif

namespace flexjit::jit {
namespace {

struct LoadedNvrtc {
  NvrtcApi api;
  std::string error;  // empty when usable
};

// Written once, before g_loaded is set; read only after g_loaded is seen set.
std::string g_loaded_file;
std::atomic<bool> g_loaded{false};

const char* override_path() {
  const char* p = std::getenv("FLEXJIT_NVRTC_PATH");
  return p != nullptr && *p != '\0' ? p : nullptr;
}

std::vector<std::string> candidates() {
  if (const char* p = override_path()) return {p};
  std::vector<std::string> out;
  if (!std::string_view(FLEXJIT_CUDA_LIBRARY_DIR).empty())
    out.push_back(std::string(FLEXJIT_CUDA_LIBRARY_DIR) + "/" + FLEXJIT_NVRTC_SONAME);
  out.emplace_back(FLEXJIT_NVRTC_SONAME);  // a bare name: the loader's search path
  return out;
}

LoadedNvrtc load_nvrtc() {
  LoadedNvrtc out;
  void* lib = nullptr;
  std::string tried, opened;
  for (const std::string& file : candidates()) {
    // RTLD_LOCAL: NVRTC's symbols stay out of the global namespace of the host process.
    lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      opened = file;
      break;
    }
    const char* err = dlerror();  // names the file
    tried += "\n  " + (err ? std::string(err) : file + ": could not be loaded");
  }
  if (lib == nullptr) {
    out.error = fmt::format(
        "NVRTC (the CUDA runtime compiler, {}) could not be loaded; it is needed to compile kernels. "
        "Install the CUDA Toolkit's NVRTC, add its directory to LD_LIBRARY_PATH or point "
        "FLEXJIT_NVRTC_PATH at the library. Tried:{}",
        FLEXJIT_NVRTC_SONAME, tried);
    return out;
  }
#define FLEXJIT_NVRTC_RESOLVE(name)                                                          \
  out.api.name = reinterpret_cast<decltype(out.api.name)>(dlsym(lib, #name));                \
  if (out.api.name == nullptr) {                                                             \
    out.error = fmt::format("NVRTC library {} lacks {} (it is older than NVRTC {}, which "     \
                            "flexjit was built with)",                                       \
                            FLEXJIT_NVRTC_SONAME, #name, FLEXJIT_NVRTC_BUILT_VERSION);       \
    return out;                                                                              \
  }
  FLEXJIT_NVRTC_FUNCTIONS(FLEXJIT_NVRTC_RESOLVE)
#undef FLEXJIT_NVRTC_RESOLVE
  // The library stays open for the life of the process: programs and results may outlive any
  // point at which closing it would be safe.
  g_loaded_file = opened;
  g_loaded.store(true, std::memory_order_release);
  return out;
}

const LoadedNvrtc& loaded() {
  static const LoadedNvrtc nvrtc = load_nvrtc();  // thread-safe, once per process
  return nvrtc;
}

}  // namespace

const NvrtcApi* nvrtc_api(std::string* why) {
  const LoadedNvrtc& n = loaded();
  if (why != nullptr) *why = n.error;
  return n.error.empty() ? &n.api : nullptr;
}

std::string nvrtc_loaded_file() { return g_loaded.load(std::memory_order_acquire) ? g_loaded_file : std::string(); }

std::filesystem::path nvrtc_library_file() {
  if (const char* p = override_path()) return p;
  if (std::string_view(FLEXJIT_CUDA_LIBRARY_DIR).empty()) return {};
  std::filesystem::path file = std::filesystem::path(FLEXJIT_CUDA_LIBRARY_DIR) / FLEXJIT_NVRTC_SONAME;
  std::error_code ec;
  return std::filesystem::exists(file, ec) ? file : std::filesystem::path();
}

}  // namespace flexjit::jit
