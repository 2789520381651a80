// generate_cuda_source, generate_decode_cuda_source, generate_backward_cuda_source, default_tile:
// Engine::compile's first half (program -> generated CUDA), for reading the source and the tile
// without running NVRTC.
#include <fmt/format.h>

#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "api/boundary.hpp"
#include "api/pass_kernels.hpp"
#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"

namespace flexjit {

namespace {

// A CUDA kernel's source, forward, decode or backward, optionally with its templates inlined.
template <class Generate>
std::string cuda_source_of(const Program& program, const CompileOptions& options, bool with_templates,
                           Generate&& generate) {
  return api::at_api_boundary(program.name(), [&] {
    if (!options.device.is_cuda())
      throw ArgumentError(fmt::format("{}: a cpu kernel has no CUDA source (leave CompileOptions::device at "
                                      "Device::cuda())",
                                      program.name()));
    const codegen::GeneratedKernel generated = generate(detail::ProgramAccess::impl(program));
    return with_templates ? api::expand_includes(generated.source) : generated.source;
  });
}

}  // namespace

std::string generate_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return cuda_source_of(program, options, with_templates,
                        [&](const Program::Impl& p) { return api::generate(p, options); });
}

std::string generate_decode_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return cuda_source_of(program, options, with_templates, [&](const Program::Impl& p) {
    return api::generate_pass(p, api::forward_target(options), compiler::KernelPass::Decode);
  });
}

std::string generate_chunk_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return cuda_source_of(program, options, with_templates, [&](const Program::Impl& p) {
    return api::generate_pass(p, api::forward_target(options), compiler::KernelPass::Chunk);
  });
}

std::string generate_backward_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return cuda_source_of(program, options, with_templates, [&](const Program::Impl& p) {
    return api::generate_pass(p, api::forward_target(options), compiler::KernelPass::Backward);
  });
}

TileShape default_tile(const Program& program, const CompileOptions& options) {
  return api::at_api_boundary(program.name(), [&] {
    if (!options.device.is_cuda())
      throw ArgumentError(fmt::format("{}: a cpu kernel has no tile", program.name()));
    const codegen::TileConfig t = api::generate(detail::ProgramAccess::impl(program), options).tile;
    return TileShape{t.block_m, t.block_n, t.warps, t.stages, t.q_in_registers, t.persistent};
  });
}

}  // namespace flexjit
