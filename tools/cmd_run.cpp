// `flexjit run FILE ...`: attention on .npy inputs (or random ones with --demo) on the GPU or the
// CPU, writing .npy outputs and, for --demo, a short report with the error against the CPU
// reference. With --dout, the backward too (tools/run_backward.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <random>
#include <utility>

#include "flexjit/flexjit.hpp"
#include "compiler/pipeline.hpp"
#include "tools/commands.hpp"
#include "tools/demo_extents.hpp"
#include "tools/distinct_paths.hpp"
#include "tools/dtype_option.hpp"
#include "tools/npy.hpp"
#include "tools/run_backward.hpp"
#include "tools/run_cuda.hpp"
#include "tools/run_inputs.hpp"

namespace flexjit::tools {
namespace {

struct RunOptions {
  std::string file, q, k, v, out, lse, kv_lens, page_table;
  std::vector<std::string> binds;
  BackwardFiles backward;
  std::string dtype = "bf16";
  std::optional<float> scale;
  std::string device;  // "", "cuda" or "cpu"
  Math math = Math::fast;  // cuda only
  bool demo = false;
  int B = 1, H = 8, T = 1024, D = 128, Hkv = 0, Tkv = 0, Dv = 0;
  long long q_offset = 0, kv_offset = 0;
  int iters = 20;
  unsigned long long seed = 1;
};

struct CpuRun {
  std::vector<float> out, lse;
  double ms = 0;
  std::string backend;
  std::string backend_note;  // why the interpreter ran in place of LLVM, when it did
};

// The program on the host back end (a cpu kernel): on float32 inputs, or with dtype fp8_e4m3 on
// the e4m3 codes of d's values (already rounded by round_to_e4m3) with out in bf16.
CpuRun run_on_cpu(const Program& program, const AttentionData& d, const HostBindings& bindings,
                  std::optional<float> scale, CpuBackend backend, DType dtype = f32) {
  Engine jit;
  const Kernel attn = jit.compile(
      program, {.head_dim = d.D, .head_dim_v = d.Dv, .dtype = dtype, .device = Device::cpu(), .cpu_backend = backend});
  const bool fp8 = dtype == DType::fp8_e4m3;
  CpuRun r;
  r.backend = cpu_backend_name(attn.cpu_backend());
  r.backend_note = attn.cpu_backend_note();
  r.out.resize(d.q.size() / d.D * d.Dv);
  r.lse.resize(static_cast<std::size_t>(d.B) * d.Hq * d.Tq);
  std::vector<std::uint8_t> q8, k8, v8;
  std::vector<std::uint16_t> out16(fp8 ? r.out.size() : 0);
  auto input = [&](const std::vector<float>& x, std::vector<std::uint8_t>& codes, std::vector<std::int64_t> shape) {
    if (!fp8) return TensorView::contiguous(x.data(), f32, std::move(shape), Device::cpu());
    codes = e4m3_codes(x);
    return TensorView::contiguous(codes.data(), DType::fp8_e4m3, std::move(shape), Device::cpu());
  };
  const TensorView out = fp8 ? TensorView::contiguous(out16.data(), bf16, d.out_shape(), Device::cpu())
                             : TensorView::contiguous(r.out.data(), f32, d.out_shape(), Device::cpu());
  ForwardOptions options{.lse = TensorView::contiguous(r.lse.data(), f32, {d.B, d.Hq, d.Tq}, Device::cpu()),
                         .bind = bindings.cpu_bindings(),
                         .scale = scale};
  d.add_kv_cache(options);
  const TensorView q = input(d.q, q8, d.q_shape()), k = input(d.k, k8, d.kv_shape()), v = input(d.v, v8, d.v_shape());
  const auto t0 = std::chrono::steady_clock::now();
  attn.forward(q, k, v, out, options);
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t i = 0; i < out16.size(); ++i) r.out[i] = bf16_bits_to_float(out16[i]);
  return r;
}

// --demo makes q, k, v and out on the host as float32; a tensor over this many elements is refused
// up front (by name) rather than failing somewhere in an allocation.
constexpr std::int64_t kMaxDemoElements = std::int64_t{1} << 31;

void check_demo_sizes(const RunOptions& o) {
  const int Hkv = o.Hkv ? o.Hkv : o.H, Tkv = o.Tkv ? o.Tkv : o.T, Dv = o.Dv ? o.Dv : o.D;
  const struct {
    const char* name;
    int heads, length, head_dim;
    const char* flags;
  } tensors[] = {{"q", o.H, o.T, o.D, "--H, --T or --D"},
                 {"k", Hkv, Tkv, o.D, "--Hkv, --Tkv or --D"},
                 {"v", Hkv, Tkv, Dv, "--Hkv, --Tkv or --Dv"}};
  for (const auto& t : tensors) {
    const __int128 elements = static_cast<__int128>(o.B) * t.heads * t.length * t.head_dim;
    if (elements > kMaxDemoElements)
      throw std::runtime_error(fmt::format(
          "--demo: {} [B={}, H={}, T={}, D={}] would hold {} float32 elements, over the limit of 2^31; lower --B, {}",
          t.name, o.B, t.heads, t.length, t.head_dim, elements, t.flags));
  }
}

void check_output_paths(const RunOptions& o) {
  std::vector<NamedPath> inputs = {{"the program", o.file}, {"--q", o.q}, {"--k", o.k}, {"--v", o.v},
                                   {"--kv-lens", o.kv_lens}, {"--page-table", o.page_table},
                                   {"--dout", o.backward.dout}};
  for (const std::string& b : o.binds)
    if (const auto eq = b.find('='); eq != std::string::npos && b.ends_with(".npy"))
      inputs.push_back({"--bind " + b.substr(0, eq), b.substr(eq + 1)});
  std::vector<NamedPath> outputs = {{"--out", o.out}, {"--lse", o.lse}, {"--dq", o.backward.dq},
                                    {"--dk", o.backward.dk}, {"--dv", o.backward.dv}};
  for (const NamedPath& g : o.backward.grad_outputs()) outputs.push_back(g);
  require_distinct_outputs(inputs, outputs);
}

struct Errors {
  double max_abs = 0, rel_l2 = 0;
};

Errors compare(const std::vector<float>& got, const std::vector<float>& ref) {
  Errors e;
  double diff2 = 0, ref2 = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double d = static_cast<double>(got[i]) - ref[i];
    e.max_abs = std::max(e.max_abs, std::isnan(d) ? INFINITY : std::abs(d));
    diff2 += d * d;
    ref2 += static_cast<double>(ref[i]) * ref[i];
  }
  e.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return e;
}

void line(const char* key, const std::string& value) { std::cout << fmt::format("  {:<13} {}\n", key, value); }

std::string bindings_text(const HostBindings& b) {
  std::string s;
  for (const auto& n : b.notes) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

int run(const RunOptions& o) {
  check_output_paths(o);
  if (o.demo) check_demo_sizes(o);
  const Program program = Program::from_file(o.file);
  std::mt19937_64 rng(o.seed);

  std::string device = o.device;
  if (device.empty()) {
    const CudaAvailability cuda = cuda_availability();
    device = cuda.devices > 0 ? "cuda" : "cpu";
    if (device == "cpu")
      std::cerr << fmt::format("flexjit run: note: no CUDA device ({}); running on the cpu\n",
                               cuda.reason.empty() ? "none found" : cuda.reason);
  }
  const DType dtype = parse_dtype_option(o.dtype);
  const bool fp8 = dtype == DType::fp8_e4m3;
  if (fp8 && (!o.kv_lens.empty() || o.backward.requested()))
    throw std::runtime_error(
        "--dtype fp8: fp8_e4m3 kernels run the forward without a KV cache only; drop --kv-lens and --dout, or use "
        "bf16 or fp16");

  if (!o.demo && (o.q.empty() || o.k.empty() || o.v.empty() || o.out.empty()))
    throw std::runtime_error("--q, --k, --v and --out are required (or --demo for random inputs)");
  AttentionData data = o.demo ? random_attention(o.B, o.H, o.Hkv ? o.Hkv : o.H, o.T, o.Tkv ? o.Tkv : o.T, o.D,
                                                 o.Dv ? o.Dv : o.D, rng)
                              : load_attention(o.q, o.k, o.v, o.kv_lens, o.page_table);
  data.q_offset = o.q_offset, data.kv_offset = o.kv_offset;
  if (fp8) round_to_e4m3(data);  // the kernel's inputs, and the reference's
  HostBindings bindings = parse_bindings(program, o.binds);
  for (const Parameter& p : program.parameters()) {
    if (!p.takes_tensor() && !bindings.scalars.count(p.name))
      throw std::runtime_error(fmt::format("scalar '{}' is not bound: pass --bind {}=VALUE", p.name, p.name));
  }
  if (o.demo) {
    const ir::Program ir = compiler::build_ir(dsl::SourceFile(program.name(), program.text()));
    const DemoShape shape{data.B, data.Hq, data.Tq, data.Tkv};
    add_random_captures(program, demo_extents(ir, shape, bindings.scalars), bindings, rng);
    add_random_selection(ir, data, bindings, rng);
  }
  // --dout and --grad are checked before anything runs.
  std::optional<BackwardInputs> backward_in;
  if (o.backward.requested()) backward_in = read_backward_inputs(data, bindings, o.backward);

  std::vector<float> out, lse;
  std::optional<Gradients> gradients;
  if (device == "cuda") {
    CudaRun r = run_on_cuda(program, data, bindings, dtype, o.math, o.scale, o.demo ? o.iters : 0);
    if (backward_in) gradients = run_backward_on_cuda(r, data, o.scale, *backward_in);
    out = std::move(r.out);
    lse = std::move(r.lse);
    if (o.demo) {
      std::cout << fmt::format("flexjit run --demo {}\n", o.file);
      line("device", r.device);
      line("kernel", fmt::format("{} (math {})", r.kernel, o.math == Math::fast ? "fast" : "exact"));
      line("compile", r.compile_note);
      line("shape", fmt::format("{}, {}", data.shape_text(), dtype_name(dtype)));
      line("bindings", bindings_text(bindings));
      if (!r.block_mask_note.empty()) line("block mask", r.block_mask_note);
      line("time/call", fmt::format("{:.4f} ms (median of {}, CUDA events)", r.ms_per_call, r.timed_calls));
      const CpuRun ref = run_on_cpu(program, data, bindings, o.scale, CpuBackend::automatic);
      const Errors e = compare(out, ref.out);
      line("reference", fmt::format("CPU ({} back end, fp32 scores, float64 softmax) on the same {} inputs", ref.backend,
                                    dtype_name(dtype)));
      line("max |error|", fmt::format("{:.3e}", e.max_abs));
      line("rel L2 error", fmt::format("{:.3e}", e.rel_l2));
    }
  } else {
    CpuRun r = run_on_cpu(program, data, bindings, o.scale, CpuBackend::automatic, fp8 ? dtype : f32);
    if (!r.backend_note.empty()) std::cerr << "note: " << r.backend_note << "\n";
    out = std::move(r.out);
    lse = std::move(r.lse);
    if (backward_in) gradients = run_backward_on_cpu(program, data, bindings, o.scale, out, lse, *backward_in);
    if (o.demo) {
      std::cout << fmt::format("flexjit run --demo {}\n", o.file);
      line("device", fmt::format("cpu ({} back end)", r.backend));
      line("shape", fmt::format("{}, {}", data.shape_text(), fp8 ? "fp8_e4m3 (out bf16)" : "float32"));
      line("bindings", bindings_text(bindings));
      line("time/call", fmt::format("{:.1f} ms (one call, wall clock)", r.ms));
      if (fp8) {
        // The same values in float32 with a float32 out: the difference is the kernel's bf16 out.
        const CpuRun ref = run_on_cpu(program, data, bindings, o.scale, CpuBackend::interpreter);
        const Errors e = compare(out, ref.out);
        line("reference", fmt::format("the IR interpreter in float32 on the same fp8_e4m3 values ({:.1f} ms)", ref.ms));
        line("max |error|", fmt::format("{:.3e}", e.max_abs));
        line("rel L2 error", fmt::format("{:.3e}", e.rel_l2));
      } else if (r.backend == std::string("llvm")) {
        const CpuRun ref = run_on_cpu(program, data, bindings, o.scale, CpuBackend::interpreter);
        const Errors e = compare(out, ref.out);
        line("reference", fmt::format("the IR interpreter ({:.1f} ms)", ref.ms));
        line("max |error|", fmt::format("{:.3e}", e.max_abs));
        line("rel L2 error", fmt::format("{:.3e}", e.rel_l2));
      } else {
        line("reference", "this is the reference (the IR interpreter)");
      }
    }
  }
  if (!o.out.empty()) write_npy_f32(o.out, data.out_shape(), out);
  if (!o.lse.empty()) write_npy_f32(o.lse, {data.B, data.Hq, data.Tq}, lse);
  if (gradients) write_gradients(o.backward, data, *backward_in, *gradients);
  return kExitOk;
}

// Sizes and counts: CLI::PositiveNumber would report 0 as out of a range up to 1.8e308.
const CLI::Validator kAtLeastOne(
    [](std::string& text) {
      long long value = 0;
      return CLI::detail::lexical_cast(text, value) && value >= 1 ? std::string() : std::string("must be >= 1");
    },
    "INT >= 1");

const CLI::Validator kFinite(
    [](std::string& text) {
      double value = 0;
      return CLI::detail::lexical_cast(text, value) && std::isfinite(value) ? std::string()
                                                                            : std::string("must be a finite number");
    },
    "FLOAT");

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run a program's attention on .npy inputs (or random ones with --demo)");
  cmd->add_option("FILE", o->file, "program file (.py)")->required();
  auto* q = cmd->add_option("--q", o->q, "queries, float16/32/64 .npy [B, Hq, Tq, D]");
  auto* k = cmd->add_option("--k", o->k, "keys, .npy [B, Hkv, Tkv, D]");
  auto* v = cmd->add_option("--v", o->v, "values, .npy [B, Hkv, Tkv, Dv] (Dv, the value head dim, may differ from D)");
  auto* kv_lens = cmd->add_option("--kv-lens", o->kv_lens, "keys of each sequence, integer .npy [B]");
  auto* page_table = cmd->add_option("--page-table", o->page_table,
                                     "pages of each sequence, integer .npy [B, max_pages_per_seq]; --k and --v are "
                                     "then pages [num_pages, page_size, Hkv, D]")
                         ->needs(kv_lens);
  cmd->add_option("--out", o->out, "output .npy (float32 [B, Hq, Tq, Dv])");
  cmd->add_option("--lse", o->lse, "log-sum-exp output .npy (float32 [B, Hq, Tq])");
  auto* dout = cmd->add_option("--dout", o->backward.dout,
                               "run the backward too: d loss / d out, float16/32/64 .npy [B, Hq, Tq, Dv]");
  auto* dq = cmd->add_option("--dq", o->backward.dq, "gradient output .npy (float32, the shape of q)")->needs(dout);
  auto* dk = cmd->add_option("--dk", o->backward.dk, "gradient output .npy (float32, the shape of k)")->needs(dout);
  auto* dv = cmd->add_option("--dv", o->backward.dv, "gradient output .npy (float32, the shape of v)")->needs(dout);
  dout->needs(dq)->needs(dk)->needs(dv)->excludes(kv_lens);
  cmd->add_option("--grad", o->backward.grads,
                  "NAME=FILE.npy: the gradient of captured float tensor NAME (float32, its shape)")
      ->take_all()
      ->needs(dout);
  cmd->add_option("--bind", o->binds, "NAME=VALUE for a runtime scalar, NAME=FILE.npy for a captured tensor")
      ->take_all();
  cmd->add_option("--dtype", o->dtype,
                  "element type of q, k and v (inputs are converted): bf16 or fp16 on the GPU (the cpu computes in "
                  "float32); fp8 (FP8 E4M3, out in bf16, the forward without a KV cache) on either")
      ->check(CLI::IsMember(dtype_option_names()))
      ->capture_default_str();
  cmd->add_option("--scale", o->scale, "scale of <q, k> (default 1/sqrt(D))")->check(kFinite);
  cmd->add_option("--device", o->device, "cuda or cpu (default: cuda when a GPU is found)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_option("--q-offset", o->q_offset,
                  "global position of q's first row (a shard of a longer sequence): the mods see q_idx + this");
  cmd->add_option("--kv-offset", o->kv_offset, "global position of k's first row: the mods see kv_idx + this");
  add_math_option(cmd, o->math);
  cmd->add_flag("--demo", o->demo, "random q, k, v and captured tensors, and a report")
      ->excludes(q)
      ->excludes(k)
      ->excludes(v)
      ->excludes(kv_lens)
      ->excludes(page_table)
      ->excludes(dout);
  cmd->add_option("--B", o->B, "--demo: batch size")->capture_default_str()->check(kAtLeastOne);
  cmd->add_option("--H", o->H, "--demo: query heads")->capture_default_str()->check(kAtLeastOne);
  cmd->add_option("--T", o->T, "--demo: sequence length")->capture_default_str()->check(kAtLeastOne);
  cmd->add_option("--D", o->D, "--demo: head dim")->capture_default_str()->check(kAtLeastOne);
  cmd->add_option("--Dv", o->Dv, "--demo: value head dim (default D)")->check(kAtLeastOne);
  cmd->add_option("--Hkv", o->Hkv, "--demo: key/value heads (default H)")->check(kAtLeastOne);
  cmd->add_option("--Tkv", o->Tkv, "--demo: key/value length (default T)")->check(kAtLeastOne);
  cmd->add_option("--iters", o->iters, "--demo: timed calls on the GPU")->capture_default_str()->check(kAtLeastOne);
  cmd->add_option("--seed", o->seed, "--demo: random seed")->capture_default_str();
  cmd->callback([o, &exit_code] {
    exit_code = run_reporting_errors([&] {
      try {
        return run(*o);
      } catch (const CompileError& e) {
        std::cerr << e.what();
        return kExitDiagnostics;
      }
    });
  });
}

}  // namespace flexjit::tools
