#pragma once
// Bridges the code generator and NVRTC: a generated kernel becomes a compile request carrying
// the embedded template headers, compiled through the kernel cache.
#include <functional>
#include <string>

#include "codegen/families.hpp"
#include "jit/kernel_cache.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace flexjit::api {

jit::CompileRequest compile_request(const codegen::GeneratedKernel& kernel, jit::OutputKind output = jit::OutputKind::cubin);

// Memory cache, then disk cache, then NVRTC.
jit::ArtifactPtr compile_generated(const codegen::GeneratedKernel& kernel, jit::KernelCache& cache = jit::KernelCache::global());
// compile_generated, with an NVRTC failure's message naming the program and the entry.
jit::ArtifactPtr compile_or_explain(const std::string& program_name, const codegen::GeneratedKernel& kernel,
                                    jit::KernelCache& cache);
// compile(), with an NVRTC failure's message naming the program and the entry.
jit::ArtifactPtr compile_or_explain(const std::string& program_name, const std::string& entry,
                                    const std::function<jit::ArtifactPtr()>& compile);

// The source with each #include of an embedded template replaced by the template's text
// (recursively, each header once), for reading the whole kernel in one file.
std::string expand_includes(const std::string& source);

}  // namespace flexjit::api
