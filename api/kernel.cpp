// Kernel: the generated source for reading, what NVRTC made of it, and forward() = check
// everything, then launch (or, for a cpu kernel, run on the host); backward() likewise (on a CUDA kernel
// its kernels are compiled on the first call).
#include <fmt/format.h>

#include <limits>

#include "flexjit/error.hpp"
#include "jit/cuda_driver.hpp"
#include "api/boundary.hpp"
#include "api/kernel_impl.hpp"
#include "jit/ptxas_report.hpp"
#include "api/attention_launch.hpp"
#include "api/chunk_launch.hpp"
#include "api/decode_launch.hpp"
#include "api/fp8_passes.hpp"
#include "api/cpu_forward.hpp"
#include "api/backward_launch.hpp"
#include "api/cpu_backward.hpp"
#include "api/generate.hpp"
#include "api/generated_kernel_compile.hpp"
#include "api/tile_map_launch.hpp"
#include "api/binding_resolve.hpp"
#include "api/position_checks.hpp"
#include "api/mask_work.hpp"
#include "api/position_reach.hpp"

namespace flexjit {
namespace {

// Members that only make sense for generated CUDA call this first.
void require_cuda(const Kernel::Impl& k, const char* what) {
  if (!k.device.is_cuda())
    throw Error(fmt::format("{}: runs on the cpu, so it has no {}", k.cpu_name, what));
}

// A call with position offsets runs the kernels that add them (Kernel::Impl::forward_kernel).
template <class Options>
bool has_offsets(const Options& o) {
  return o.q_offset != 0 || o.kv_offset != 0;
}

TileShape tile_shape(const codegen::TileConfig& t) {
  return {t.block_m, t.block_n, t.warps, t.stages, t.q_in_registers, t.persistent};
}

}  // namespace

Kernel::Kernel(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Device Kernel::device() const { return impl_->device; }

CpuBackend Kernel::cpu_backend() const {
  return impl_->cpu_backend == cpu::CpuBackend::Llvm ? CpuBackend::llvm : CpuBackend::interpreter;
}
const std::string& Kernel::cpu_backend_note() const { return impl_->cpu_backend_note; }
const std::string& Kernel::family() const {
  static const std::string cpu = "cpu";
  return impl_->device.is_cuda() ? impl_->cuda->generated.family : cpu;
}

std::string Kernel::cuda_source(bool with_templates) const {
  require_cuda(*impl_, "CUDA source");
  return with_templates ? api::expand_includes(impl_->cuda->generated.source) : impl_->cuda->generated.source;
}
const std::string& Kernel::entry_name() const {
  return impl_->device.is_cuda() ? impl_->cuda->generated.entry() : impl_->cpu_name;
}
int Kernel::head_dim() const { return impl_->device.is_cuda() ? impl_->cuda->generated.target.head_dim : impl_->cpu_head_dim; }
int Kernel::head_dim_v() const {
  return impl_->device.is_cuda() ? impl_->cuda->generated.target.dv() : impl_->cpu_head_dim_v;
}
DType Kernel::dtype() const { return impl_->dtype; }
const std::string& Kernel::arch() const {
  static const std::string none;
  return impl_->device.is_cuda() ? impl_->cuda->generated.target.arch : none;
}

TileShape Kernel::tile() const {
  require_cuda(*impl_, "CUDA tile");
  return tile_shape(impl_->cuda->generated.tile);
}

std::vector<char> Kernel::cubin(Pass pass) const {
  require_cuda(*impl_, "cubin");
  return impl_->compiled(pass, entry_name()).artifact->image();
}

std::string Kernel::ptx(Pass pass) const {
  require_cuda(*impl_, "PTX");
  const codegen::GeneratedKernel& g = impl_->compiled(pass, entry_name()).generated;
  std::lock_guard lock(impl_->ptx_mutex);
  std::string& kept = impl_->ptx[static_cast<std::size_t>(pass)];
  if (kept.empty()) {
    jit::CompileResult r;
    try {
      r = impl_->engine->cache.compile_uncached(api::compile_request(g, jit::OutputKind::ptx));
    } catch (const NvrtcError& e) {
      throw NvrtcError(fmt::format("{}: NVRTC could not compile it to PTX:\n{}", g.entry(), e.what()), e.log());
    } catch (...) {
      api::rethrow_as_flexjit_error(g.entry());
    }
    std::string text(r.image.begin(), r.image.end());
    if (!text.empty() && text.back() == '\0') text.pop_back();  // NVRTC counts the terminating NUL
    kept = std::move(text);
  }
  return kept;
}

Kernel::CompileReport Kernel::compile_report(Pass pass) const {
  require_cuda(*impl_, "compile report");
  const api::CompiledKernel& compiled = impl_->compiled(pass, entry_name());
  const codegen::GeneratedKernel& g = compiled.generated;
  const jit::PtxasReport report = jit::parse_ptxas_report(compiled.artifact->log());
  CompileReport r;
  r.entry = g.entry();
  r.family = g.family;
  r.tile = tile_shape(g.tile);
  if (const jit::PtxasFunction* f = report.function(g.entry())) {
    r.registers = f->registers;
    r.stack_bytes = f->stack_bytes;
    r.spill_bytes = f->spill_store_bytes + f->spill_load_bytes;
  }
  r.warnings = report.warnings;
  return r;
}

Kernel::Resources Kernel::resources(int device) const {
  require_cuda(*impl_, "CUDA resources");
  const codegen::GeneratedKernel& g = impl_->cuda->generated;
  try {
    jit::ScopedContext context(jit::primary_context(device));
    const CUfunction f = impl_->cuda->artifact->module(device).function(impl_->cuda->artifact->symbol(g.entry()));
    Resources r;
    jit::check(jit::driver().cuFuncGetAttribute(&r.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, f),
                   "cuFuncGetAttribute(NUM_REGS)");
    jit::check(jit::driver().cuFuncGetAttribute(&r.local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f),
                   "cuFuncGetAttribute(LOCAL_SIZE_BYTES)");
    r.shared_bytes = g.main_entry().shared_bytes;
    return r;
  } catch (const jit::DriverUnavailable& e) {
    throw Error(fmt::format("{}: cannot load the kernel: {}", g.entry(), e.what()));
  } catch (const CudaError& e) {
    throw CudaError(fmt::format("{}: {}", g.entry(), e.what()), e.code(), e.code_name());
  } catch (...) {
    api::rethrow_as_flexjit_error(g.entry());
  }
}

void Kernel::forward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                     const ForwardOptions& options) const {
  api::at_api_boundary(entry_name(), [&] {
    if (!impl_->device.is_cuda()) return api::cpu_forward(*impl_, {q, k, v, out}, options);
    // Every check happens here, on the host, before the driver is touched.
    const bool positions = has_offsets(options);
    // A main kernel of the decode pass (token lists; decode_mla) runs every call, with a KV cache
    // or without.
    const codegen::GeneratedKernel& g = impl_->cuda->generated;
    const bool decode_main = g.target.pass == compiler::KernelPass::Decode;
    api::refuse_fp8_kv_cache(entry_name(), impl_->dtype, options);
    if (options.kv_lens || options.page_table || decode_main) {
      // Every kernel of the program packs the same Params: the forward's layout plans the call.
      if (!decode_main && api::runs_chunk_kernel(q, options)) {
        api::ChunkPlan plan = api::plan_chunk(g.entry(), g.params, impl_->program->ir, g.target.head_dim,
                                              g.target.dv(), impl_->dtype, {q, k, v, out}, options);
        api::launch_chunk(impl_->chunk_kernel(positions), plan, options.stream);
        return;
      }
      api::DecodePlan plan =
          api::plan_decode(g.entry(), g.params, impl_->program->ir, g.target, impl_->dtype, {q, k, v, out}, options);
      api::launch_decode(impl_->decode_kernel(positions), plan, options.stream);
      return;
    }
    api::ForwardPlan plan =
        api::plan_forward(impl_->forward_source(positions), impl_->program->ir, impl_->dtype, {q, k, v, out}, options);
    api::launch_forward(impl_->forward_kernel(positions), plan, options.stream);
  });
}

void Kernel::backward(const TensorView& q, const TensorView& k, const TensorView& v, const TensorView& out,
                      const TensorView& lse, const TensorView& dout, const TensorView& dq, const TensorView& dk,
                      const TensorView& dv, const BackwardOptions& options) const {
  api::at_api_boundary(entry_name(), [&] {
    if (!impl_->device.is_cuda()) {
      api::cpu_backward(*impl_, {q, k, v, out, lse, dout, dq, dk, dv}, options);
      return;
    }
    api::refuse_fp8_backward(entry_name(), impl_->dtype);
    api::refuse_unserved_pass(*impl_->program, compiler::KernelPass::Backward);
    // Every argument is checked before the backward kernels are compiled (on the first call).
    const compiler::KernelTarget& target = impl_->cuda->generated.target;
    api::BackwardPlan plan = api::plan_backward(entry_name(), impl_->cuda->generated.params, impl_->program->ir,
                                                target.head_dim, target.dv(), impl_->dtype,
                                                {q, k, v, out, lse, dout, dq, dk, dv}, options);
    const bool positions = has_offsets(options);
    api::launch_backward(impl_->backward_kernel(plan.scatter, options.deterministic, positions), plan,
                         options.stream);
  });
}

void Kernel::compile_decode() const {
  require_cuda(*impl_, "decode kernel");
  api::at_api_boundary(entry_name(), [&] { impl_->decode_kernel(); });
}

void Kernel::compile_chunk() const {
  require_cuda(*impl_, "chunk kernel");
  api::at_api_boundary(entry_name(), [&] { impl_->chunk_kernel(); });
}

void Kernel::compile_backward(const BackwardOptions& like) const {
  require_cuda(*impl_, "backward kernel");
  api::at_api_boundary(entry_name(), [&] {
    impl_->backward_kernel(api::score_scatters(impl_->program->ir, like.grads), like.deterministic,
                           has_offsets(like));
  });
}

const api::CompiledKernel& Kernel::Impl::compiled(Kernel::Pass pass, const std::string& kernel_name) const {
  switch (pass) {
    case Kernel::Pass::forward: return *cuda;
    case Kernel::Pass::decode: return api::at_api_boundary(kernel_name, [&]() -> decltype(auto) { return decode_kernel(); });
    case Kernel::Pass::backward:
      return api::at_api_boundary(kernel_name, [&]() -> decltype(auto) { return backward_kernel(); });
    case Kernel::Pass::chunk: return api::at_api_boundary(kernel_name, [&]() -> decltype(auto) { return chunk_kernel(); });
  }
  throw InternalError("a kernel pass out of range");
}

namespace {

compiler::KernelTarget with_positions(compiler::KernelTarget target, bool positions) {
  target.positions = positions;
  return target;
}

}  // namespace

const codegen::GeneratedKernel& Kernel::Impl::forward_source(bool positions) const {
  if (!positions) return cuda->generated;
  std::lock_guard lock(positioned_mutex);
  // The forward's target, tile included (a retried tile is in it), so block masks keep their geometry.
  if (!positioned_source)
    positioned_source = std::make_unique<const codegen::GeneratedKernel>(
        api::generate(*program, with_positions(cuda->generated.target, true)));
  return *positioned_source;
}

const api::CompiledKernel& Kernel::Impl::forward_kernel(bool positions) const {
  if (!positions) return *cuda;
  const codegen::GeneratedKernel& source = forward_source(true);
  std::lock_guard lock(positioned_mutex);
  if (!positioned_forward) {
    jit::ArtifactPtr artifact = api::compile_or_explain(program->file.name(), source, engine->cache);
    positioned_forward = std::make_unique<const api::CompiledKernel>(source, std::move(artifact));
  }
  return *positioned_forward;
}

const api::CompiledKernel& Kernel::Impl::pass_kernel(compiler::KernelPass pass, bool positions, std::mutex& mutex,
                                                     std::unique_ptr<const api::CompiledKernel>& slot) const {
  // The main kernel is this pass's already (the decode kernel of a program with token lists).
  if (!positions && cuda->generated.target.pass == pass) return *cuda;
  std::lock_guard lock(mutex);
  if (!slot) slot = api::compile_pass(*program, with_positions(cuda->generated.target, positions), pass, engine->cache);
  return *slot;
}

const api::CompiledKernel& Kernel::Impl::decode_kernel(bool positions) const {
  return pass_kernel(compiler::KernelPass::Decode, positions, decode_mutex, decode[positions ? 1 : 0]);
}

const api::CompiledKernel& Kernel::Impl::chunk_kernel(bool positions) const {
  return pass_kernel(compiler::KernelPass::Chunk, positions, chunk_mutex, chunk[positions ? 1 : 0]);
}

const api::CompiledKernel& Kernel::Impl::backward_kernel(bool score_grads, bool deterministic, bool positions) const {
  std::lock_guard lock(backward_mutex);
  std::unique_ptr<const api::CompiledKernel>& slot =
      backward[(positions ? 4 : 0) + (score_grads ? 2 : 0) + (deterministic ? 1 : 0)];
  if (!slot) {
    compiler::KernelTarget target = with_positions(cuda->generated.target, positions);
    target.ordered_dq = deterministic;
    target.score_grads = score_grads;
    slot = api::compile_pass(*program, target, compiler::KernelPass::Backward, engine->cache);
  }
  return *slot;
}

bool Kernel::may_keep_any(int Tq, int Tkv, const ForwardOptions& options) const {
  return api::at_api_boundary(entry_name(), [&] {
    api::Problems problems;
    if (Tq < 1) problems.add(fmt::format("Tq must be >= 1, got {}", Tq));
    if (Tkv < 1) problems.add(fmt::format("Tkv must be >= 1, got {}", Tkv));
    api::check_positions(options.q_offset, options.kv_offset, Tq, Tkv, problems);
    const ir::Env env = api::resolve_bindings(impl_->program->ir, options.bind, std::nullopt, problems);
    problems.raise_if_any(entry_name() + ": may_keep_any");
    return api::may_keep_any(impl_->program->ir, env, options.q_offset, Tq, options.kv_offset, Tkv);
  });
}

// n * n results and at least as many evaluations: 8 MB and a million at this bound.
constexpr std::size_t kMaxKeptPairsChunks = 1024;

std::vector<double> Kernel::kept_pairs(const std::vector<std::int64_t>& bounds, int B, int H,
                                       const ForwardOptions& options, std::int64_t budget) const {
  return api::at_api_boundary(entry_name(), [&] {
    api::Problems problems;
    if (bounds.size() < 2 || bounds.front() != 0)
      problems.add("bounds: expected chunk edges 0 = e_0 < e_1 < ... < e_n with n >= 1");
    if (bounds.size() > kMaxKeptPairsChunks + 1)
      problems.add(fmt::format("bounds: {} chunks, more than the {} whose blocks kept_pairs counts", bounds.size() - 1,
                               kMaxKeptPairsChunks));
    for (std::size_t i = 1; i < bounds.size(); ++i)
      if (bounds[i] <= bounds[i - 1])
        problems.add(fmt::format("bounds: edge {} ({}) is not after edge {} ({})", i, bounds[i], i - 1, bounds[i - 1]));
    if (bounds.size() >= 2 && bounds.back() > std::numeric_limits<int>::max())
      problems.add(fmt::format("bounds: the sequence ends at {}, past the largest position {}", bounds.back(),
                               std::numeric_limits<int>::max()));
    if (B < 1) problems.add(fmt::format("B must be >= 1, got {}", B));
    if (H < 1) problems.add(fmt::format("H must be >= 1, got {}", H));
    if (budget < 1) problems.add(fmt::format("budget must be >= 1, got {}", budget));
    const ir::Env env = api::resolve_bindings(impl_->program->ir, options.bind, Device::cpu(), problems);
    problems.raise_if_any(entry_name() + ": kept_pairs");
    return api::kept_pairs(impl_->program->ir, env, bounds, B, H, budget);
  });
}

bool Kernel::needs_block_mask() const {
  return impl_->device.is_cuda() && impl_->cuda->generated.has_entry(codegen::EntryRole::tile_map);
}

std::size_t Kernel::block_mask_bytes(int B, int Hq, int Tq, int Tkv) const {
  require_cuda(*impl_, "block mask");
  return api::at_api_boundary(entry_name(), [&] { return api::tile_map_bytes(impl_->cuda->generated, {B, Hq, Tq, Tkv}); });
}

BlockMask Kernel::build_block_mask(const TensorView& storage, int B, int Hq, int Tq, int Tkv,
                                   const BlockMaskOptions& options) const {
  if (!impl_->device.is_cuda())
    throw ArgumentError(fmt::format("{}: runs on the cpu, which classifies key tiles itself: there is no block mask "
                                    "to build",
                                    impl_->cpu_name));
  return api::at_api_boundary(entry_name(), [&] {
    const bool positions = has_offsets(options);
    api::TileMapPlan plan =
        api::plan_tile_map(impl_->forward_source(positions), impl_->program->ir, storage, {B, Hq, Tq, Tkv}, options);
    api::launch_tile_map(impl_->forward_kernel(positions), plan, options.stream);
    return plan.mask;
  });
}

}  // namespace flexjit
