#include "cpu/llvm_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "jit/binary_location.hpp"

// Set by cpu/CMakeLists.txt for this file.
#if !defined(FLEXJIT_VERSION) || !defined(FLEXJIT_CPU_LLVM_FILE) || !defined(FLEXJIT_CPU_LLVM_BUILD_DIR) || \
    !defined(FLEXJIT_BIN_TO_LIB) || !defined(FLEXJIT_INSTALL_LIBDIR)
#error "the build must define where the LLVM module is"
#endif

namespace flexjit::cpu::detail {
namespace {
namespace fs = std::filesystem;

struct Loaded {
  const LlvmModule* module = nullptr;
  std::string error;
};

std::vector<fs::path> candidates() {
  if (const char* path = std::getenv("FLEXJIT_CPU_BACKEND_PATH"); path != nullptr && *path != '\0') return {path};
  return jit::candidate_files(reinterpret_cast<const void*>(&llvm_module), FLEXJIT_CPU_LLVM_FILE,
                              {FLEXJIT_BIN_TO_LIB}, {FLEXJIT_CPU_LLVM_BUILD_DIR, FLEXJIT_INSTALL_LIBDIR});
}

Loaded load() {
  Loaded out;
  std::string tried;
  for (const fs::path& file : candidates()) {
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      tried += "\n  " + file.string() + ": no such file";
      continue;
    }
    // RTLD_LOCAL keeps LLVM's symbols out of the process's global scope. The module is never
    // closed: the code it JIT-compiles lives as long as the objects that hold it.
    void* lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* err = dlerror();
      tried += "\n  " + (err ? std::string(err) : file.string() + ": could not be loaded");
      continue;
    }
    auto entry = reinterpret_cast<LlvmModuleEntry>(dlsym(lib, kLlvmModuleEntry));
    const LlvmModule* module = entry ? entry(kLlvmModuleAbi, FLEXJIT_VERSION) : nullptr;
    if (module == nullptr) {
      tried += "\n  " + file.string() + ": not a module of flexjit " FLEXJIT_VERSION;
      continue;
    }
    out.module = module;
    return out;
  }
  out.error = "the LLVM CPU back end (" FLEXJIT_CPU_LLVM_FILE ") could not be loaded; tried:" + tried;
  return out;
}

}  // namespace

const LlvmModule* llvm_module(std::string* why) {
  static const Loaded loaded = load();  // thread-safe, once per process
  if (why != nullptr) *why = loaded.error;
  return loaded.module;
}

}  // namespace flexjit::cpu::detail
