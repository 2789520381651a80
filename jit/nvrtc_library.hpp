// NVRTC, opened with dlopen at the first compile and never linked. libnvrtc is about 100 MB with
// some 200,000 relocations: loading it costs 150-300 ms, which every process linking it paid at
// start-up, even `flexjit --version` and runs whose kernels all come from the disk cache.
//
// Where it is looked for, first match wins:
//   $FLEXJIT_NVRTC_PATH               that file only (for tests and unusual installs);
//   <toolkit lib dir>/libnvrtc.so.N   the CUDA Toolkit flexjit was built against (N its major);
//   libnvrtc.so.N                     the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache).
#pragma once

#include <nvrtc.h>  // types and prototypes only; nothing from libnvrtc is linked

#include <filesystem>
#include <string>

namespace flexjit::jit {

#define FLEXJIT_NVRTC_FUNCTIONS(X)                                                        \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs)                     \
  X(nvrtcGetSupportedArchs) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)                  \
  X(nvrtcCompileProgram) X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)                 \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX)       \
  X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)

struct NvrtcApi {
#define FLEXJIT_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  FLEXJIT_NVRTC_FUNCTIONS(FLEXJIT_NVRTC_MEMBER)
#undef FLEXJIT_NVRTC_MEMBER
};

// Loads NVRTC and resolves every entry point, once per process and thread-safely. Null when that
// failed; *why (when given) then says what was tried and what went wrong.
const NvrtcApi* nvrtc_api(std::string* why = nullptr);

// The file nvrtc_api() loaded, as it was named in the search above; empty while nothing is
// loaded (it never loads anything itself).
std::string nvrtc_loaded_file();

// The file nvrtc_api() will load when it can be named without loading anything: the override, or
// the toolkit's copy when that exists. Empty when only the loader's search path is left.
std::filesystem::path nvrtc_library_file();

}  // namespace flexjit::jit
