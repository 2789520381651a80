#pragma once
// The boundary between flexjit_cpu and its LLVM half, libflexjit_cpu_llvm.so: a module built
// separately and opened with dlopen on first use (llvm_loader.hpp), so that only processes that
// JIT mods on the CPU load libLLVM (about 87 MB with z3, libxml2 and ICU, ~90 ms).
//
// The module exports one C symbol, kLlvmModuleEntry, which hands out an LlvmModule. Both sides
// come from the same build (the entry refuses any other ABI or version), so C++ types may cross:
// ir::Program, ir::Expr and ir::LoadDerivative in, NativeCode out, exceptions (std::runtime_error,
// ir::InternalError) through. No LLVM type appears here.
#include <memory>
#include <string>
#include <vector>

#include "ir/differentiate.hpp"
#include "ir/ir.hpp"

namespace flexjit::cpu::detail {

// Code JIT-compiled by the module. Destroying it frees the code and the JIT that owns it.
class NativeCode {
 public:
  virtual ~NativeCode() = default;
  // Address of a function the code defines (names in llvm_functions.hpp). Throws if absent.
  virtual void* lookup(const std::string& name) = 0;
};

class LlvmModule {
 public:
  // Whether LLVM can generate code for this host (its native target initialises).
  virtual bool host_target_usable() const = 0;
  // kMaskFn .. kScoreRowFn for p's mods, optimised at O2.
  virtual std::unique_ptr<NativeCode> compile_mods(const ir::Program& p) const = 0;
  // The backward's derivatives of a mod: kSlopeRowFn for `slope` (none when it is undefined) and
  // load_row_function_name(i) for loads[i], over decls' scalars and captures, optimised at O2.
  virtual std::unique_ptr<NativeCode> compile_gradient(const ir::Program& decls, const ir::Expr& slope,
                                                       const std::vector<ir::LoadDerivative>& loads) const = 0;
  // expr_function_name(i) for exprs[i], over decls' scalars and captures.
  virtual std::unique_ptr<NativeCode> compile_exprs(const ir::Program& decls,
                                                    const std::vector<ir::Expr>& exprs) const = 0;

 protected:
  ~LlvmModule() = default;  // the module owns its one instance
};

// Bump whenever LlvmModule, NativeCode, llvm_functions.hpp or a type they pass changes shape.
inline constexpr int kLlvmModuleAbi = 2;
inline constexpr const char* kLlvmModuleEntry = "flexjit_cpu_llvm_module";

// The entry's type: the module's LlvmModule when `abi` and `version` (the project version) are
// the ones it was built with, else null.
extern "C" {
typedef const LlvmModule* (*LlvmModuleEntry)(int abi, const char* version);
}

}  // namespace flexjit::cpu::detail
