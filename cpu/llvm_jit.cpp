#include "cpu/llvm_jit.hpp"

#include <mutex>
#include <stdexcept>

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "ir/internal_error.hpp"

namespace flexjit::cpu::detail {

namespace {

[[noreturn]] void fail(const std::string& what, llvm::Error err) {
  throw std::runtime_error("llvm backend: " + what + ": " + llvm::toString(std::move(err)));
}

template <class T> T take(llvm::Expected<T> v, const std::string& what) {
  if (!v) fail(what, v.takeError());
  return std::move(*v);
}

bool initialize_native_target() {
  static bool ok = [] {
    // Both return true on failure.
    return !llvm::InitializeNativeTarget() && !llvm::InitializeNativeTargetAsmPrinter();
  }();
  return ok;
}

llvm::orc::JITTargetMachineBuilder host_builder() {
  if (!initialize_native_target()) throw std::runtime_error("llvm backend: the native target is not available");
  auto jtmb = take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host");
  // The interpreter never fuses a * b + c; neither may the code generator.
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  return jtmb;
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(m, mam);
}

}  // namespace

bool host_target_usable() {
  try {
    host_builder();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

Jit::Jit() {
  llvm::orc::JITTargetMachineBuilder jtmb = host_builder();
  tm_ = take(jtmb.createTargetMachine(), "creating the target machine");
  jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(), "creating the JIT");
  // Resolve expf, tanhf, fminf, ... to this process's libm.
  const char prefix = jit_->getDataLayout().getGlobalPrefix();
  jit_->getMainJITDylib().addGenerator(
      take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix), "opening the process symbols"));
}

Jit::~Jit() = default;

std::unique_ptr<llvm::Module> Jit::new_module(llvm::LLVMContext& ctx, const std::string& name) const {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  m->setTargetTriple(tm_->getTargetTriple().str());
  m->setDataLayout(tm_->createDataLayout());
  return m;
}

void Jit::add(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*m, &os)) internal_error("llvm backend built an invalid module: " + os.str());
  optimize(*m, tm_.get());
  llvm::orc::ThreadSafeModule tsm(std::move(m), std::move(ctx));
  if (llvm::Error err = jit_->addIRModule(std::move(tsm))) fail("adding the module", std::move(err));
}

void* Jit::lookup(const std::string& name) {
  auto sym = take(jit_->lookup(name), "looking up " + name);
#if LLVM_VERSION_MAJOR >= 15
  return sym.template toPtr<void*>();
#else
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(sym.getAddress()));
#endif
}

}  // namespace flexjit::cpu::detail
