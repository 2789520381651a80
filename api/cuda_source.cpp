// generate_cuda_source: Engine::compile's first half (program -> generated CUDA), for reading the
// source without running NVRTC.
#include <fmt/format.h>

#include "flexjit/engine.hpp"
#include "flexjit/error.hpp"
#include "api/boundary.hpp"
#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"

namespace flexjit {

std::string generate_cuda_source(const Program& program, const CompileOptions& options, bool with_templates) {
  return api::at_api_boundary(program.name(), [&] {
    if (!options.device.is_cuda())
      throw ArgumentError(fmt::format("{}: a cpu kernel has no CUDA source (leave CompileOptions::device at "
                                      "Device::cuda())",
                                      program.name()));
    const codegen::GeneratedKernel generated = api::generate(detail::ProgramAccess::impl(program), options);
    return with_templates ? api::expand_includes(generated.source) : generated.source;
  });
}

}  // namespace flexjit
