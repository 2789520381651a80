// generate_cuda_source: Engine::compile's first half (program -> generated CUDA), for reading the
// source without running NVRTC.
#include <fmt/format.h>

#include "codegen/sm80_fwd/generate.hpp"
#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "api/boundary.hpp"
#include "api/convert.hpp"
#include "api/default_arch.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/program_impl.hpp"

namespace flexjit {

std::string generate_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return api::at_api_boundary(program.name(), [&] {
    if (!options.device.is_cuda())
      throw ArgumentError(fmt::format("{}: a cpu kernel has no CUDA source (leave CompileOptions::device at "
                                      "Device::cuda())",
                                      program.name()));
    // The same spec Engine::compile builds.
    const Program::Impl& source = detail::ProgramAccess::impl(program);
    codegen::KernelSpec spec;
    spec.head_dim = options.head_dim;
    spec.dtype = api::element_type(options.dtype);
    spec.arch = options.arch.empty() ? api::default_arch() : options.arch;
    if (options.tile)
      spec.tile = codegen::TileRequest{options.tile->block_m, options.tile->block_n, options.tile->warps,
                                       options.tile->stages, options.tile->q_in_registers};
    codegen::GeneratedKernel generated;
    try {
      generated = codegen::generate_forward_kernel(source.ir, spec, &source.file);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(fmt::format("{}: {}", program.name(), e.what()));
    }
    return with_templates ? api::expand_includes(generated.source) : generated.source;
  });
}

}  // namespace flexjit
