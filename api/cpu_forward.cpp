#include "api/cpu_forward.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "api/binding_resolve.hpp"
#include "api/descale_checks.hpp"
#include "api/forward_checks.hpp"
#include "api/fp8_passes.hpp"
#include "api/host_tensor_copy.hpp"
#include "api/kv_cache_checks.hpp"
#include "api/kernel_impl.hpp"
#include "api/position_checks.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {
namespace {

// An fp8 kernel's inputs stand for their stored values times the descale factors: multiplying the
// float copies makes the score scale * q_descale * k_descale * <q, k> and out v_descale * (P v),
// as the options say. Query head h takes the factor of its kv head h / (Hq / Hkv).
void apply_descales(HostAttentionInputs& inputs, const Descales& d, const AttentionShape& s) {
  if (!d.any()) return;
  const int group = s.Hq / s.Hkv;
  auto multiply = [&](std::vector<float>& x, const float* factors, int heads, int rows, int dim, int per_kv_head) {
    if (factors == nullptr) return;
    for (int b = 0; b < s.B; ++b)
      for (int h = 0; h < heads; ++h) {
        const float f = d.at(factors, b, h / per_kv_head);
        float* row = x.data() + (static_cast<std::size_t>(b) * heads + h) * rows * dim;
        for (std::size_t i = 0; i < static_cast<std::size_t>(rows) * dim; ++i) row[i] *= f;
      }
  };
  multiply(inputs.q, d.q, s.Hq, s.Tq, s.D, group);
  multiply(inputs.k, d.k, s.Hkv, s.Tkv, s.D, 1);
  multiply(inputs.v, d.v, s.Hkv, s.Tkv, s.Dv, 1);
}

}  // namespace

void cpu_forward(const Kernel::Impl& kernel, const ForwardTensors& t, const ForwardOptions& options) {
  const std::string& name = kernel.cpu_name;
  const ir::Program& program = kernel.program->ir;
  refuse_fp8_kv_cache(name, kernel.dtype, options);
  Problems problems;
  auto shape = check_attention_tensors(t.q, t.k, t.v, t.out, options.lse, options.scale, kernel.cpu_head_dim,
                                       kernel.cpu_head_dim_v, kernel.dtype, problems, Memory::host, kv_layout(options));
  const std::optional<KvCache> cache = check_kv_cache(options, shape, problems);
  const ir::Env env = resolve_bindings(program, options.bind, Device::cpu(), problems);
  if (shape) check_selection(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  check_positions(options.q_offset, options.kv_offset, shape, problems);
  const Descales descales = check_descales(options, kernel.dtype, shape, Memory::host, problems);
  if (options.block_mask)
    problems.add("block_mask: a cpu kernel takes none (the host back end classifies key tiles itself)");
  problems.raise_if_any(name);

  HostAttentionInputs inputs(t, *shape, options.scale, env);
  apply_descales(inputs, descales, *shape);
  cpu::CpuAttentionInputs& in = inputs.in;
  in.q_offset = options.q_offset, in.kv_offset = options.kv_offset;
  if (cache) {
    in.kv_lens = cache->lens.data();
    if (!cache->pages.empty()) {
      in.page_table = cache->pages.data();
      in.page_size = shape->page_size, in.max_pages = cache->max_pages, in.num_pages = shape->num_pages;
    }
  }
  std::vector<float> out(static_cast<std::size_t>(t.out.numel()));
  std::vector<float> lse(options.lse ? static_cast<std::size_t>(options.lse->numel()) : 0);
  try {
    cpu::cpu_attention_forward(program, in, out.data(), options.lse ? lse.data() : nullptr, kernel.cpu_backend);
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    // Bounds and block lists were checked above; what is left is what the values index.
    throw ArgumentError(fmt::format("{}: {}", name, e.what()));
  }
  scatter_from_float(out, t.out);
  if (options.lse) scatter_from_float(lse, *options.lse);
}

HostAttentionInputs::HostAttentionInputs(const ForwardTensors& t, const AttentionShape& shape,
                                         std::optional<float> scale, const ir::Env& env)
    : q(gather_as_float(t.q)), k(gather_as_float(t.k)), v(gather_as_float(t.v)) {
  in.q = q.data();
  in.k = k.data();
  in.v = v.data();
  in.B = shape.B, in.Hq = shape.Hq, in.Hkv = shape.Hkv, in.Tq = shape.Tq, in.Tkv = shape.Tkv, in.D = shape.D;
  in.Dv = shape.Dv;
  if (scale) in.scale = *scale;
  in.bindings = &env;
}

}  // namespace flexjit::api
