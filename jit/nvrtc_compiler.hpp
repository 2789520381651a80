// NVRTC wrapper: one CUDA source string (plus in-memory headers) -> cubin or PTX for one arch.
// Templates are self-contained, so no toolkit include path is ever passed; that is also what lets
// this run on machines that have libnvrtc but no GPU and no CUDA headers.
#pragma once

#include <compare>
#include <string>
#include <utility>
#include <vector>

#include "flexjit/error.hpp"

namespace flexjit::jit {

enum class OutputKind { cubin, ptx };

struct Header {
  std::string name;  // the name used in #include "name"
  std::string content;
};

struct CompileRequest {
  std::string source;
  std::string source_name = "flexjit_kernel.cu";  // what NVRTC's log calls the source
  std::vector<Header> headers;
  // Appended after the defaults (see effective_options). Must not carry the architecture: that is
  // `arch`, so that the cache key and the compiled code can never disagree about it.
  std::vector<std::string> options;
  std::string arch = "sm_80";  // "sm_80", "sm_90a", "sm_100a", ...
  OutputKind output = OutputKind::cubin;
  // C++ names (e.g. "flash_fwd<MyMods, 128>") whose mangled names are wanted after compiling, for
  // kernels that are templates rather than extern "C".
  std::vector<std::string> name_expressions;
};

struct CompileResult {
  // The cubin (an ELF image), or the PTX text including its terminating NUL so the bytes can be
  // handed to cuModuleLoadData unchanged.
  std::vector<char> image;
  std::string log;  // NVRTC's log; warnings live here after a successful compile
  std::vector<std::pair<std::string, std::string>> lowered_names;  // expression -> mangled name
};

struct NvrtcVersion {
  int major = 0;
  int minor = 0;
  std::string str() const { return std::to_string(major) + "." + std::to_string(minor); }
  auto operator<=>(const NvrtcVersion&) const = default;
};

// The version of the NVRTC that compile() uses, {0, 0} when it cannot be loaded. Usually answered
// without loading NVRTC (nvrtc_version.hpp), since every cache key needs it.
NvrtcVersion nvrtc_version();

// Architectures this libnvrtc can target, as numbers (75, 80, 90, 100, ...); loads NVRTC.
std::vector<int> nvrtc_supported_archs();

// The full option list NVRTC receives: --gpu-architecture, -std=c++17 (unless the caller gave a
// -std), -default-device, then the caller's options in order. The cache key hashes this list.
std::vector<std::string> effective_options(const CompileRequest& request);

// Throws flexjit::NvrtcError (bad arch, NVRTC missing or failing, compile errors): what() has the NVRTC log
// followed by the source lines around each error; log() has the bare log. Thread-safe: NVRTC programs are
// independent, so several threads may compile at once.
CompileResult compile(const CompileRequest& request);

}  // namespace flexjit::jit
