// The module side of llvm_module.hpp: LlvmModule over detail::Jit (llvm_jit) and the IR builders
// (llvm_mods). This file and those are all that is compiled against LLVM.
#include "cpu/llvm_module.hpp"

#include <cstring>
#include <type_traits>

#include <llvm/IR/LLVMContext.h>

#include "cpu/llvm_jit.hpp"
#include "cpu/llvm_mods.hpp"

#ifndef FLEXJIT_VERSION
#error "FLEXJIT_VERSION must be defined by the build"
#endif

namespace flexjit::cpu::detail {
namespace {

class JitCode final : public NativeCode {
 public:
  void* lookup(const std::string& name) override { return jit.lookup(name); }
  Jit jit;
};

class ModuleImpl final : public LlvmModule {
 public:
  bool host_target_usable() const override { return detail::host_target_usable(); }

  std::unique_ptr<NativeCode> compile_mods(const ir::Program& p) const override {
    auto code = std::make_unique<JitCode>();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = code->jit.new_module(*ctx, p.name.empty() ? "flexjit_mods" : p.name);
    build_mod_functions(*m, p);
    code->jit.add(std::move(ctx), std::move(m));
    return code;
  }

  std::unique_ptr<NativeCode> compile_gradient(const ir::Program& decls, const ir::Expr& slope,
                                               const std::vector<ir::LoadDerivative>& loads) const override {
    auto code = std::make_unique<JitCode>();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = code->jit.new_module(*ctx, decls.name.empty() ? "flexjit_gradient" : decls.name + "_gradient");
    build_gradient_functions(*m, decls, slope, loads);
    code->jit.add(std::move(ctx), std::move(m));
    return code;
  }

  std::unique_ptr<NativeCode> compile_exprs(const ir::Program& decls, const std::vector<ir::Expr>& exprs) const override {
    auto code = std::make_unique<JitCode>();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = code->jit.new_module(*ctx, "flexjit_exprs");
    for (std::size_t i = 0; i < exprs.size(); ++i) build_expr_function(*m, decls, exprs[i], expr_function_name(i));
    code->jit.add(std::move(ctx), std::move(m));
    return code;
  }
};

}  // namespace
}  // namespace flexjit::cpu::detail

// The one symbol the module exports (everything else is hidden: see cpu/CMakeLists.txt).
extern "C" __attribute__((visibility("default"))) const flexjit::cpu::detail::LlvmModule* flexjit_cpu_llvm_module(
    int abi, const char* version) {
  static const flexjit::cpu::detail::ModuleImpl module;
  if (abi != flexjit::cpu::detail::kLlvmModuleAbi || version == nullptr || std::strcmp(version, FLEXJIT_VERSION) != 0)
    return nullptr;
  return &module;
}

static_assert(std::is_same_v<decltype(&flexjit_cpu_llvm_module), flexjit::cpu::detail::LlvmModuleEntry>);
