#include "bench/kernel_resources.hpp"

#include <stdexcept>

#include "compiler/codegen_cuda.hpp"
#include "runtime/api_convert.hpp"
#include "runtime/api_program_impl.hpp"
#include "runtime/cuda_driver.hpp"
#include "runtime/generated_kernel_compile.hpp"

namespace bench {

std::optional<KernelResources> kernel_resources(const flexjit::Program& program, const flexjit::Kernel& kernel) {
  using namespace flexjit;
  const auto& impl = detail::ProgramAccess::impl(program);
  compiler::KernelSpec spec;
  spec.head_dim = kernel.head_dim();
  spec.dtype = runtime::element_type(kernel.dtype());
  spec.arch = kernel.arch();
  const compiler::GeneratedKernel generated = compiler::generate_forward_kernel(impl.ir, spec, &impl.file);
  // Engine::compile generates the same way; a different entry means it no longer does.
  if (generated.entry != kernel.entry_name())
    throw std::runtime_error("kernel_resources: regenerated " + generated.entry + ", expected " + kernel.entry_name());
  if (!runtime::driver_available()) return std::nullopt;
  const runtime::ArtifactPtr artifact = runtime::compile_generated(generated);
  const CUfunction f = artifact->module(0).function(artifact->symbol(generated.entry));
  KernelResources r;
  runtime::check(runtime::driver().cuFuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                 "cuFuncGetAttribute(NUM_REGS)");
  runtime::check(runtime::driver().cuFuncGetAttribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f),
                 "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
  return r;
}

}  // namespace bench
