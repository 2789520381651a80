#include "api/backward_checks.hpp"

#include <fmt/format.h>

#include <set>

#include "api/binding_resolve.hpp"
#include "dsl/quoted.hpp"
#include "ir/gradient_captures.hpp"

namespace flexjit::api {
namespace {

// An output whose elements share memory would have some written twice.
void check_no_overlap(const std::string& what, const TensorView& t, const char* elements, Problems& problems) {
  if (!t.strides.empty() && t.strides.size() != t.shape.size()) return;  // reported by the placement check
  for (int d = 0; d < t.rank(); ++d)
    if (t.shape[static_cast<std::size_t>(d)] > 1 && t.stride(d) == 0)
      problems.add(fmt::format("{}: stride 0 in dimension {} would make {} overlap", what, d, elements));
}

// Contiguous row-major (dims of size 1 may have any stride).
bool row_major(const TensorView& t) {
  if (t.strides.empty()) return true;
  if (t.strides.size() != t.shape.size()) return true;  // reported by the placement check
  std::int64_t expect = 1;
  for (int d = t.rank() - 1; d >= 0; --d) {
    if (t.shape[static_cast<std::size_t>(d)] > 1 && t.stride(d) != expect) return false;
    expect *= t.shape[static_cast<std::size_t>(d)];
  }
  return true;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Why `name` cannot have a gradient, or "" when it can.
std::string no_gradient_reason(const ir::Program& p, const std::string& name, const std::set<std::string>& allowed) {
  if (allowed.count(name)) return "";
  const bool declared = p.find_capture(name) || (p.find_scalar(name) && !p.find_scalar(name)->is_shape_value()) ||
                        (p.key_list() && p.key_list()->name == name);
  if (!declared)
    return fmt::format("{} is not declared by the program ({})", dsl::quoted(name),
                       allowed.empty() ? "none of its tensors has a gradient"
                                       : "tensors with gradients: " + joined(allowed));
  const ir::Capture* c = p.find_capture(name);
  if (!c || ir::value_type(c->dtype) != ir::Type::Float)
    return fmt::format("'{}' is {}: only float tensors read by score_mod or sink have gradients", name,
                       declared_kind(p, name));
  if (ir::mod_reads(p.mask_mod, name))
    return fmt::format("'{}' ({}) is read by mask_mod only, and a mask has no gradient", name, declared_kind(p, name));
  return fmt::format("'{}' ({}) is read by neither score_mod nor sink, so it has no gradient", name,
                     declared_kind(p, name));
}

}  // namespace

void check_backward_tensors(const BackwardTensors& t, const std::optional<AttentionShape>& shape, DType dtype,
                            Problems& problems, Memory memory) {
  const struct {
    const char* name;
    const TensorView* t;
    const char* like;  // whose shape it has
    const TensorView* model;
    bool output;
  } tensors[] = {{"dout", &t.dout, "out", &t.out, false},
                 {"dq", &t.dq, "q", &t.q, true},
                 {"dk", &t.dk, "k", &t.k, true},
                 {"dv", &t.dv, "v", &t.v, true}};
  for (const auto& x : tensors) {
    if (x.t->dtype != dtype)
      problems.add(
          fmt::format("{}: dtype {} does not match the kernel's {}", x.name, dtype_name(x.t->dtype), dtype_name(dtype)));
    if (memory == Memory::cuda)
      check_like_attention_tensor(x.name, *x.t, t.q, x.model == &t.k || x.model == &t.v, x.output, memory, problems);
    else
      check_host_placement(x.name, *x.t, dtype_size(x.t->dtype), problems);
    if (shape && x.t->shape != x.model->shape)
      problems.add(fmt::format("{}: expected the shape of {} {}, got {}", x.name, x.like, format_dims(x.model->shape),
                               format_dims(x.t->shape)));
    if (x.output && memory == Memory::host) check_no_overlap(x.name, *x.t, "rows", problems);
  }
}

void check_gradient_targets(const ir::Program& program, const std::map<std::string, TensorView>& grads,
                            const ir::Env& env, Problems& problems, Memory memory, const Device& device) {
  const std::set<std::string> allowed = ir::gradient_captures(program);
  for (const auto& [name, g] : grads) {
    if (const std::string why = no_gradient_reason(program, name, allowed); !why.empty()) {
      problems.add("grads: " + why);
      continue;
    }
    const std::string what = fmt::format("grads '{}'", name);
    if (g.dtype != DType::f32) problems.add(fmt::format("{}: dtype must be f32, got {}", what, dtype_name(g.dtype)));
    if (memory == Memory::cuda) {
      check_placement(what, g, device, 4, problems);
      if (!row_major(g)) problems.add(fmt::format("{}: must be contiguous on a CUDA device", what));
    } else {
      check_host_placement(what, g, 4, problems);
    }
    if (const auto bound = env.tensors.find(name); bound != env.tensors.end() && bound->second.shape != g.shape)
      problems.add(fmt::format("{}: expected the shape of the bound tensor {}, got {}", what,
                               format_dims(bound->second.shape), format_dims(g.shape)));
    check_no_overlap(what, g, "elements", problems);
  }
}

}  // namespace flexjit::api
