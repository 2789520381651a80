#include "tools/run_backward.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <stdexcept>

#include "dsl/quoted.hpp"
#include "tools/npy.hpp"

namespace flexjit::tools {

std::vector<NamedPath> BackwardFiles::grad_outputs() const {
  std::vector<NamedPath> out;
  std::set<std::string> seen;
  for (const std::string& g : grads) {
    const auto eq = g.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == g.size())
      throw std::runtime_error(fmt::format("--grad {}: expected NAME=FILE.npy", g));
    const std::string name = g.substr(0, eq);
    if (!seen.insert(name).second)
      throw std::runtime_error(fmt::format("--grad {}: {} is given twice; give each name once", g, dsl::quoted(name)));
    out.push_back({"--grad " + name, g.substr(eq + 1)});
  }
  return out;
}

std::size_t BackwardInputs::Grad::numel() const {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return static_cast<std::size_t>(n);
}

BackwardInputs read_backward_inputs(const AttentionData& d, const HostBindings& bindings, const BackwardFiles& files) {
  const NpyArray dout = read_npy(files.dout);
  const std::vector<std::int64_t> out_shape = d.out_shape();
  if (dout.kind != 'f')
    throw std::runtime_error(fmt::format("--dout {}: expected float16/32/64 data, got {}", files.dout, dout.dtype_str()));
  if (dout.shape != out_shape)
    throw std::runtime_error(fmt::format("--dout {}: expected the shape of out ({}), got ({})", files.dout,
                                         fmt::join(out_shape, ", "), fmt::join(dout.shape, ", ")));
  BackwardInputs in;
  in.dout = dout.to_float32();
  for (const NamedPath& g : files.grad_outputs()) {
    const std::string name = g.option.substr(std::string("--grad ").size());
    const auto bound = bindings.tensors.find(name);
    in.grads.push_back({name, g.path, bound == bindings.tensors.end() ? std::vector<std::int64_t>{0} : bound->second.shape});
  }
  return in;
}

Gradients run_backward_on_cpu(const Program& program, const AttentionData& d, const HostBindings& bindings,
                              std::optional<float> scale, const std::vector<float>& out, const std::vector<float>& lse,
                              const BackwardInputs& in) {
  Engine jit;
  const Kernel attn =
      jit.compile(program, {.head_dim = d.D, .head_dim_v = d.Dv, .dtype = f32, .device = Device::cpu()});
  auto host = [](const std::vector<float>& x, std::vector<std::int64_t> shape) {
    return TensorView::contiguous(x.data(), f32, std::move(shape), Device::cpu());
  };
  const std::vector<std::int64_t> q_shape = d.q_shape(), out_shape = d.out_shape();
  Gradients g{std::vector<float>(d.q.size()), std::vector<float>(d.k.size()), std::vector<float>(d.v.size()), {}};
  BackwardOptions options{.bind = bindings.cpu_bindings(), .scale = scale, .q_offset = d.q_offset, .kv_offset = d.kv_offset};
  g.grads.reserve(in.grads.size());
  for (const BackwardInputs::Grad& grad : in.grads) {
    g.grads.emplace_back(grad.numel(), 0.0f);
    options.grads[grad.name] = host(g.grads.back(), grad.shape);
  }
  attn.backward(host(d.q, q_shape), host(d.k, d.kv_shape()), host(d.v, d.v_shape()), host(out, out_shape),
                host(lse, {d.B, d.Hq, d.Tq}), host(in.dout, out_shape), host(g.dq, q_shape), host(g.dk, d.kv_shape()),
                host(g.dv, d.v_shape()), options);
  return g;
}

Gradients run_backward_on_cuda(const CudaRun& forward, const AttentionData& d, std::optional<float> scale,
                               const BackwardInputs& in) {
  const Kernel& attn = forward.attn.value();
  const CudaTensors& t = forward.tensors;
  const DType dtype = attn.dtype();
  const std::vector<std::int64_t> q_shape = d.q_shape(), out_shape = d.out_shape();
  std::vector<float> dout_rounded = in.dout;
  const DeviceBuffer dout = upload_element(dout_rounded, dtype);
  const DeviceBuffer dq(d.q.size() * 2), dk(d.k.size() * 2), dv(d.v.size() * 2);
  BackwardOptions options{.bind = t.bind, .scale = scale, .q_offset = d.q_offset, .kv_offset = d.kv_offset};
  std::vector<DeviceBuffer> grads;
  grads.reserve(in.grads.size());
  for (const BackwardInputs::Grad& grad : in.grads) {
    grads.emplace_back(grad.numel() * 4);
    if (grad.numel() > 0) grads.back().fill_bytes(0);
    options.grads[grad.name] = grads.back().view(DType::f32, grad.shape);
  }
  attn.backward(t.q.view(dtype, q_shape), t.k.view(dtype, d.kv_shape()), t.v.view(dtype, d.v_shape()),
                t.out.view(dtype, out_shape), t.lse.view(DType::f32, {d.B, d.Hq, d.Tq}), dout.view(dtype, out_shape),
                dq.view(dtype, q_shape), dk.view(dtype, d.kv_shape()), dv.view(dtype, d.v_shape()), options);
  cuda_synchronize();
  Gradients g{download_element(dq, d.q.size(), dtype), download_element(dk, d.k.size(), dtype),
              download_element(dv, d.v.size(), dtype), {}};
  for (std::size_t i = 0; i < grads.size(); ++i) g.grads.push_back(grads[i].download<float>(in.grads[i].numel()));
  return g;
}

void write_gradients(const BackwardFiles& files, const AttentionData& d, const BackwardInputs& in, const Gradients& g) {
  write_npy_f32(files.dq, d.q_shape(), g.dq);
  write_npy_f32(files.dk, d.kv_shape(), g.dk);
  write_npy_f32(files.dv, d.v_shape(), g.dv);
  for (std::size_t i = 0; i < in.grads.size(); ++i) write_npy_f32(in.grads[i].path, in.grads[i].shape, g.grads[i]);
}

}  // namespace flexjit::tools
