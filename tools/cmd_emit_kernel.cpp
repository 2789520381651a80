// `flexjit emit cuda|ptx|cubin FILE`: the generated kernel source, and what NVRTC makes of it.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "codegen/families.hpp"
#include "compiler/pipeline.hpp"
#include "api/generated_kernel_compile.hpp"
#include "tools/commands.hpp"

namespace flexjit::tools {

namespace {

struct KernelOptions {
  std::string file;
  int head_dim = 128;
  std::string dtype = "bf16";
  std::string arch = "sm_90a";
  bool expand = false;
  std::string output;
};

void add_kernel_options(CLI::App* cmd, KernelOptions& o) {
  cmd->add_option("FILE", o.file, "program file")->required();
  cmd->add_option("--head-dim", o.head_dim, "head dimension (a multiple of 16 up to 256)")->capture_default_str();
  cmd->add_option("--dtype", o.dtype, "element type of q, k, v and out")
      ->check(CLI::IsMember({"bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--arch", o.arch, "GPU architecture to compile for (sm_80, sm_86, sm_89, sm_90a, ...)")
      ->capture_default_str();
}

codegen::GeneratedKernel generate(const KernelOptions& o, dsl::SourceFile& file) {
  ir::Program program = compiler::build_ir(file);
  compiler::KernelTarget spec{o.head_dim, o.dtype == "fp16" ? compiler::ElementType::FP16 : compiler::ElementType::BF16,
                            o.arch};
  return codegen::generate_kernel(program, spec, &file);
}

}  // namespace

void add_emit_kernel_commands(CLI::App* emit, int& exit_code) {
  auto opts = std::make_shared<KernelOptions>();

  auto* cuda = emit->add_subcommand("cuda", "the generated CUDA source of the forward kernel");
  add_kernel_options(cuda, *opts);
  cuda->add_flag("--expand", opts->expand, "inline the kernel templates it includes");
  cuda->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      auto file = dsl::SourceFile::from_path(opts->file);
      auto kernel = generate(*opts, file);
      std::cout << (opts->expand ? api::expand_includes(kernel.source) : kernel.source);
      return kExitOk;
    });
  });

  auto* ptx = emit->add_subcommand("ptx", "the PTX NVRTC makes of the kernel");
  add_kernel_options(ptx, *opts);
  ptx->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      auto file = dsl::SourceFile::from_path(opts->file);
      auto kernel = generate(*opts, file);
      jit::CompileResult r = jit::compile(api::compile_request(kernel, jit::OutputKind::ptx));
      std::string text(r.image.begin(), r.image.end());
      if (!text.empty() && text.back() == '\0') text.pop_back();
      std::cout << text;
      return kExitOk;
    });
  });

  auto* cubin = emit->add_subcommand("cubin", "compile the kernel to a cubin file (through the kernel cache)");
  add_kernel_options(cubin, *opts);
  cubin->add_option("-o,--output", opts->output, "where to write the cubin")->required();
  cubin->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      auto file = dsl::SourceFile::from_path(opts->file);
      auto kernel = generate(*opts, file);
      jit::ArtifactPtr a = api::compile_generated(kernel);
      std::ofstream out(opts->output, std::ios::binary);
      out.write(a->image().data(), static_cast<std::streamsize>(a->image().size()));
      if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", opts->output));
      std::cerr << fmt::format("{}: kernel {} ({} bytes, {})\n", opts->output, kernel.entry, a->image().size(),
                               kernel.target.arch);
      return kExitOk;
    });
  });
}

}  // namespace flexjit::tools
