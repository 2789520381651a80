// `flexjit emit cuda|ptx|cubin FILE`: the generated kernel source, and what NVRTC makes of it.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "dsl/quoted.hpp"
#include "flexjit/flexjit.hpp"
#include "tools/commands.hpp"
#include "tools/distinct_paths.hpp"
#include "tools/dtype_option.hpp"

namespace flexjit::tools {

namespace {

struct KernelOptions {
  std::string file;
  int head_dim = 128;
  int head_dim_v = 0;  // 0: head_dim
  std::string dtype = "bf16";
  std::string arch = "sm_90a";
  std::string family;
  Math math = Math::fast;
  bool expand = false;
  bool decode = false;
  bool backward = false;
  bool chunk = false;
  std::string output;

  Kernel::Pass pass() const {
    return decode ? Kernel::Pass::decode
           : backward ? Kernel::Pass::backward
           : chunk    ? Kernel::Pass::chunk
                      : Kernel::Pass::forward;
  }

  CompileOptions compile_options() const {
    // With --backward, --family names the backward's family.
    return {.head_dim = head_dim, .head_dim_v = head_dim_v, .dtype = parse_dtype_option(dtype), .arch = arch,
            .family = backward ? "" : family, .backward_family = backward ? family : "", .math = math};
  }
};

void add_kernel_options(CLI::App* cmd, KernelOptions& o) {
  cmd->add_option("FILE", o.file, "program file")->required();
  cmd->add_option("--head-dim", o.head_dim, "head dimension of q and k (a multiple of 16 up to 256; 576 with --head-dim-v 512 for MLA's decode)")->capture_default_str();
  cmd->add_option("--head-dim-v", o.head_dim_v, "value head dimension of v and out (default: --head-dim)");
  cmd->add_option("--dtype", o.dtype, "element type of q, k, v and out (fp8: q, k and v in FP8 E4M3, out in bf16)")
      ->check(CLI::IsMember(dtype_option_names()))
      ->capture_default_str();
  cmd->add_option("--arch", o.arch, "GPU architecture to compile for (sm_80, sm_86, sm_89, sm_90a, ...)")
      ->capture_default_str();
  cmd->add_option("--family", o.family,
                  "kernel family (sm90_fwd: TMA + wgmma on sm_90a; sm80_fwd: mma.sync; with --backward, sm80_bwd "
                  "or sm90_bwd); default: the first that serves the target");
  add_math_option(cmd, o.math);
  auto* decode = cmd->add_flag("--decode", o.decode, "the decode kernel (calls with a KV cache, --kv-lens) instead");
  auto* backward = cmd->add_flag("--backward", o.backward, "the backward kernels (run --dout ...) instead")->excludes(decode);
  cmd->add_flag("--chunk", o.chunk,
                "the chunk kernel (calls with a KV cache and many new tokens: chunked prefill) instead")
      ->excludes(decode)
      ->excludes(backward);
}

}  // namespace

void add_emit_kernel_commands(CLI::App* emit, int& exit_code) {
  auto opts = std::make_shared<KernelOptions>();

  auto* cuda = emit->add_subcommand("cuda", "the generated CUDA source of the forward kernel (or --decode, --backward, --chunk)");
  add_kernel_options(cuda, *opts);
  cuda->add_flag("--expand", opts->expand, "inline the kernel templates it includes");
  cuda->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      const Program program = Program::from_file(opts->file);
      const CompileOptions options = opts->compile_options();
      std::cout << (opts->decode     ? generate_decode_cuda_source(program, options, opts->expand)
                    : opts->backward ? generate_backward_cuda_source(program, options, opts->expand)
                    : opts->chunk    ? generate_chunk_cuda_source(program, options, opts->expand)
                                     : generate_cuda_source(program, options, opts->expand));
      return kExitOk;
    });
  });

  auto* ptx = emit->add_subcommand("ptx", "the PTX NVRTC makes of the kernel (or --decode, --backward, --chunk)");
  add_kernel_options(ptx, *opts);
  ptx->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      Engine jit;
      std::cout << jit.compile(Program::from_file(opts->file), opts->compile_options()).ptx(opts->pass());
      return kExitOk;
    });
  });

  auto* cubin = emit->add_subcommand("cubin", "compile the kernel (or --decode, --backward, --chunk) to a cubin file (through the kernel cache)");
  add_kernel_options(cubin, *opts);
  cubin->add_option("-o,--output", opts->output, "where to write the cubin")->required();
  cubin->callback([opts, &exit_code] {
    exit_code = run_reporting_errors([&] {
      require_distinct_outputs({{"the program", opts->file}}, {{"-o", opts->output}});
      Engine jit;
      const Kernel kernel = jit.compile(Program::from_file(opts->file), opts->compile_options());
      const std::vector<char> image = kernel.cubin(opts->pass());
      std::ofstream out(opts->output, std::ios::binary);
      out.write(image.data(), static_cast<std::streamsize>(image.size()));
      if (!out) throw std::runtime_error(fmt::format("cannot write {}", dsl::quoted(opts->output)));
      const Kernel::CompileReport report = kernel.compile_report(opts->pass());
      std::cerr << fmt::format("{}: kernel {} ({} bytes, {}; {}, tile {}x{}{}; {} registers, {} bytes spilled)\n",
                               opts->output, report.entry, image.size(), kernel.arch(), report.family,
                               report.tile.block_m, report.tile.block_n,
                               report.tile.persistent ? ", persistent grid" : "", report.registers, report.spill_bytes);
      for (const std::string& w : report.warnings) std::cerr << w << "\n";
      return kExitOk;
    });
  });
}

}  // namespace flexjit::tools
