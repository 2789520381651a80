#include "api/compiled_kernel.hpp"

namespace flexjit::api {

CompiledKernel::CompiledKernel(codegen::GeneratedKernel g, jit::ArtifactPtr a)
    : generated(std::move(g)), artifact(std::move(a)) {
  for (const codegen::EntryPoint& e : generated.entries)
    functions_.push_back(std::make_unique<jit::ContextFunctions>(artifact, e.name, e.shared_bytes));
}

jit::ContextFunctions& CompiledKernel::function(codegen::EntryRole role) const {
  const codegen::EntryPoint& e = generated.entry_point(role);
  return *functions_[static_cast<std::size_t>(&e - generated.entries.data())];
}

}  // namespace flexjit::api
