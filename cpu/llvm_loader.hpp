#pragma once
// Finds and opens the LLVM module (llvm_module.hpp), once per process. Where it looks, first
// match wins:
//   $FLEXJIT_CPU_BACKEND_PATH   that file only (a module built elsewhere, or none: "/dev/null");
//   next to the binary that holds flexjit_cpu (the shared library, or the executable when
//       flexjit_cpu is linked statically), found with dladdr;
//   <that directory>/../lib     the installed layout: bin/flexjit finds lib/libflexjit_cpu_llvm.so;
//   the build tree's copy, then the configured install prefix's lib directory.
// A file that loads but comes from another flexjit version is skipped.
#include <string>

#include "cpu/llvm_module.hpp"

namespace flexjit::cpu::detail {

// The module, or null with the reason (what was tried) in *why.
const LlvmModule* llvm_module(std::string* why = nullptr);

}  // namespace flexjit::cpu::detail
