#pragma once
// Bridges the code generator and NVRTC: a generated kernel becomes a compile request carrying
// the embedded template headers, compiled through the kernel cache.
#include <string>

#include "compiler/codegen_cuda.hpp"
#include "runtime/kernel_cache.hpp"
#include "runtime/nvrtc_compiler.hpp"

namespace flexjit::runtime {

CompileRequest compile_request(const compiler::GeneratedKernel& kernel, OutputKind output = OutputKind::cubin);

// Memory cache, then disk cache, then NVRTC.
ArtifactPtr compile_generated(const compiler::GeneratedKernel& kernel, KernelCache& cache = KernelCache::global());

// The source with each #include of an embedded template replaced by the template's text
// (recursively, each header once), for reading the whole kernel in one file.
std::string expand_includes(const std::string& source);

}  // namespace flexjit::runtime
