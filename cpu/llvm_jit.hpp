#pragma once
// Internal to the LLVM back end (includes LLVM headers; never include it from a public header).
// One ORC LLJIT per compiled unit: modules are made for the host CPU, optimised at O2 with IEEE
// semantics kept (no fast-math flags are ever emitted, FP contraction is off, so a * b + c never
// becomes an fma), and calls to libm resolve to this process's libm, the very functions the
// interpreter calls, so transcendental results agree bit for bit.
#include <memory>
#include <string>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace flexjit::cpu::detail {

class Jit {
 public:
  Jit();  // throws std::runtime_error when the host target cannot be set up
  ~Jit();

  // An empty module with the host's triple and data layout (set before any IR is built, so the
  // builder picks the right alignments).
  std::unique_ptr<llvm::Module> new_module(llvm::LLVMContext& ctx, const std::string& name) const;
  // Verifies (a broken module is an InternalError), optimises and hands the module to the JIT.
  void add(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m);
  // Address of a function defined by an added module (materialised on first lookup).
  void* lookup(const std::string& name);

 private:
  std::unique_ptr<llvm::TargetMachine> tm_;  // for the optimiser's cost model and data layout
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

// Whether the native target initialises (false on a host LLVM cannot generate code for).
bool host_target_usable();

}  // namespace flexjit::cpu::detail
