#include "tools/run_backward.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>
#include <stdexcept>

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
      throw std::runtime_error(fmt::format("--grad {}: '{}' is given twice; give each name once", g, name));
    out.push_back({"--grad " + name, g.substr(eq + 1)});
  }
  return out;
}

void run_backward_on_cpu(const Program& program, const AttentionData& d, const HostBindings& bindings,
                         std::optional<float> scale, const std::vector<float>& out, const std::vector<float>& lse,
                         const BackwardFiles& files) {
  const NpyArray dout_file = read_npy(files.dout);
  const std::vector<std::int64_t> q_shape{d.B, d.Hq, d.Tq, d.D};
  if (dout_file.kind != 'f')
    throw std::runtime_error(fmt::format("--dout {}: expected float16/32/64 data, got {}", files.dout, dout_file.dtype_str()));
  if (dout_file.shape != q_shape)
    throw std::runtime_error(fmt::format("--dout {}: expected the shape of q ({}), got ({})", files.dout,
                                         fmt::join(q_shape, ", "), fmt::join(dout_file.shape, ", ")));
  const std::vector<float> dout = dout_file.to_float32();

  Engine jit;
  const Kernel attn = jit.compile(program, {.head_dim = d.D, .dtype = f32, .device = Device::cpu()});
  auto host = [](const std::vector<float>& x, std::vector<std::int64_t> shape) {
    return TensorView::contiguous(x.data(), f32, std::move(shape), Device::cpu());
  };
  std::vector<float> dq(d.q.size()), dk(d.k.size()), dv(d.v.size());
  BackwardOptions options{.bind = bindings.cpu_bindings(), .scale = scale};
  // One f32 array per --grad in the bound tensor's shape (an unbound or unknown name gets an
  // empty one: the library names what is wrong with it).
  const std::vector<NamedPath> grad_files = files.grad_outputs();
  std::map<std::string, std::vector<float>> grads;
  std::map<std::string, std::vector<std::int64_t>> grad_shapes;
  for (const NamedPath& g : grad_files) {
    const std::string name = g.option.substr(std::string("--grad ").size());
    const auto bound = bindings.tensors.find(name);
    std::vector<std::int64_t> shape = bound == bindings.tensors.end() ? std::vector<std::int64_t>{0} : bound->second.shape;
    std::int64_t n = 1;
    for (std::int64_t s : shape) n *= s;
    grads[name].assign(static_cast<std::size_t>(n), 0.0f);
    options.grads[name] = host(grads[name], shape);
    grad_shapes[name] = std::move(shape);
  }
  attn.backward(host(d.q, q_shape), host(d.k, d.kv_shape()), host(d.v, d.kv_shape()), host(out, q_shape),
                host(lse, {d.B, d.Hq, d.Tq}), host(dout, q_shape), host(dq, q_shape), host(dk, d.kv_shape()),
                host(dv, d.kv_shape()), options);
  write_npy_f32(files.dq, q_shape, dq);
  write_npy_f32(files.dk, d.kv_shape(), dk);
  write_npy_f32(files.dv, d.kv_shape(), dv);
  for (const NamedPath& g : grad_files) {
    const std::string name = g.option.substr(std::string("--grad ").size());
    write_npy_f32(g.path, grad_shapes.at(name), grads.at(name));
  }
}

void refuse_backward_on_cuda(const Program& program, const AttentionData& d, DType dtype, Math math) {
  Engine jit;
  const Kernel attn = jit.compile(program, {.head_dim = d.D, .dtype = dtype, .math = math});
  const TensorView none;
  try {
    attn.backward(none, none, none, none, none, none, none, none, none);
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(fmt::format("{}; pass --device cpu for gradients", e.what()));
  }
  throw std::logic_error("a CUDA kernel ran a backward: refuse_backward_on_cuda is out of date");
}

}  // namespace flexjit::tools
