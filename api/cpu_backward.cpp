#include "api/cpu_backward.hpp"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/binding_resolve.hpp"
#include "api/cpu_forward.hpp"
#include "api/forward_checks.hpp"
#include "api/fp8_passes.hpp"
#include "api/host_tensor_copy.hpp"
#include "cpu/attention_backward.hpp"
#include "api/position_checks.hpp"
#include "flexjit/error.hpp"

namespace flexjit::api {

void cpu_backward(const Kernel::Impl& kernel, const BackwardTensors& t, const BackwardOptions& options) {
  const std::string& name = kernel.cpu_name;
  const ir::Program& program = kernel.program->ir;
  refuse_fp8_backward(name, kernel.dtype);
  Problems problems;
  const std::optional<AttentionShape> shape =
      check_attention_tensors(t.q, t.k, t.v, t.out, std::optional<TensorView>(t.lse), options.scale,
                              kernel.cpu_head_dim, kernel.cpu_head_dim_v, kernel.dtype, problems, Memory::host);
  check_backward_tensors(t, shape, kernel.dtype, problems);
  const ir::Env env = resolve_bindings(program, options.bind, Device::cpu(), problems);
  if (shape) check_selection(program, env, shape->B, shape->Hq, shape->Hkv, shape->Tq, problems);
  check_gradient_targets(program, options.grads, env, problems);
  check_positions(options.q_offset, options.kv_offset, shape, problems);
  problems.raise_if_any(name);

  HostAttentionInputs inputs({t.q, t.k, t.v, t.out}, *shape, options.scale, env);
  inputs.in.q_offset = options.q_offset, inputs.in.kv_offset = options.kv_offset;
  const std::vector<float> out = gather_as_float(t.out), lse = gather_as_float(t.lse), dout = gather_as_float(t.dout);

  std::vector<float> dq(inputs.q.size()), dk(inputs.k.size()), dv(inputs.v.size());
  std::map<std::string, std::vector<float>> captures;
  cpu::CpuGradients grads;
  grads.dq = dq.data(), grads.dk = dk.data(), grads.dv = dv.data();
  for (const auto& [capture, view] : options.grads) {
    std::vector<float>& buffer = captures[capture];
    buffer.resize(static_cast<std::size_t>(view.numel()));
    grads.captures[capture] = buffer.data();
  }
  try {
    cpu::cpu_attention_backward(program, inputs.in, {out.data(), lse.data(), dout.data()}, grads,
                                kernel.cpu_backend);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("{}: {}", name, e.what()));  // score_mod or sink has no derivative
  } catch (const Error&) {
    throw;
  } catch (const std::runtime_error& e) {
    // Shapes, bindings and block lists were checked above; what is left is what the values index.
    throw ArgumentError(fmt::format("{}: {}", name, e.what()));
  }
  scatter_from_float(dq, t.dq);
  scatter_from_float(dk, t.dk);
  scatter_from_float(dv, t.dv);
  for (const auto& [capture, view] : options.grads) scatter_from_float(captures.at(capture), view);
}

}  // namespace flexjit::api
