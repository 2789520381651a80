#include "api/binding_resolve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <tuple>
#include <vector>

#include "api/convert.hpp"
#include "api/forward_checks.hpp"
#include "dsl/quoted.hpp"
#include "ir/bound_values.hpp"

namespace flexjit::api {
namespace {

// What a binding holds, in words: "a tensor", "an int (3)", "a float (1.5)", "a bool (true)".
std::string describe(const Binding& b) {
  if (const auto* t = std::get_if<TensorView>(&b)) return fmt::format("a tensor ({} with {} dims)", dtype_name(t->dtype), t->rank());
  if (const auto* i = std::get_if<long long>(&b)) return fmt::format("an int ({})", *i);
  if (const auto* d = std::get_if<double>(&b)) return fmt::format("a float ({})", *d);
  return fmt::format("a bool ({})", std::get<bool>(b));
}

// Declared names in source order, for "declared: window, alibi_slopes".
std::string declared_list(const ir::Program& p) {
  std::vector<std::tuple<int, int, std::string>> names;
  for (const auto& s : p.scalars)
    if (!s.is_shape_value()) names.emplace_back(s.pos.line, s.pos.col, s.name);
  for (const auto& c : p.captures) names.emplace_back(c.pos.line, c.pos.col, c.name);
  if (const auto list = p.key_list()) names.emplace_back(list->pos.line, list->pos.col, list->name);
  if (names.empty()) return "it declares no runtime scalars or tensors";
  std::sort(names.begin(), names.end());
  std::string out = "declared: ";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + std::get<2>(names[i]);
  return out;
}

std::optional<ir::Value> scalar_value(const ir::Scalar& s, const Binding& b, Problems& problems) {
  switch (s.type) {
    case ir::Type::Int:
      if (const auto* i = std::get_if<long long>(&b)) return ir::Value::integer(*i);
      break;
    case ir::Type::Float:
      if (const auto* d = std::get_if<double>(&b)) return ir::Value::real(static_cast<float>(*d));
      if (const auto* i = std::get_if<long long>(&b)) return ir::Value::real(static_cast<float>(*i));
      break;
    case ir::Type::Bool:
      if (const auto* x = std::get_if<bool>(&b)) return ir::Value::boolean(*x);
      break;
  }
  problems.add(fmt::format("'{}' is a scalar {}, got {}", s.name, ir::type_name(s.type), describe(b)));
  return std::nullopt;
}

// A tensor binding of the expected dtype and rank, placed where the launch needs it.
std::optional<ir::TensorBinding> tensor_value(const std::string& name, const std::string& expected, ir::DType dtype,
                                              int rank, const Binding& b, const std::optional<Device>& device,
                                              Problems& problems) {
  const auto* t = std::get_if<TensorView>(&b);
  if (t == nullptr) {
    problems.add(fmt::format("'{}' expects {}, got {}", name, expected, describe(b)));
    return std::nullopt;
  }
  if (t->dtype != from_ir(dtype) || t->rank() != rank) {
    problems.add(fmt::format("'{}' expects {}, got {} with {} dims", name, expected, dtype_name(t->dtype), t->rank()));
    return std::nullopt;
  }
  const std::size_t before = problems.list().size();
  const std::string what = fmt::format("'{}'", name);
  if (device && device->is_cuda()) {
    check_placement(what, *t, *device, dtype_size(t->dtype), problems);
  } else if (device) {
    check_host_placement(what, *t, dtype_size(t->dtype), problems);
  } else if (!t->strides.empty() && t->strides.size() != t->shape.size()) {
    problems.add(fmt::format("{}: {} strides given for {} dims", what, t->strides.size(), t->shape.size()));
  } else if (t->data == nullptr && t->numel() > 0) {
    problems.add(fmt::format("{}: data is null", what));
  }
  for (std::int64_t n : t->shape)
    if (n < 0) problems.add(fmt::format("{}: negative size in shape {}", what, format_dims(t->shape)));
  if (problems.list().size() != before) return std::nullopt;
  return ir::TensorBinding{dtype, t->shape, t->effective_strides(), t->data};
}

}  // namespace

std::string declared_kind(const ir::Program& p, const std::string& name) {
  if (const auto* s = p.find_scalar(name)) return fmt::format("a scalar {}", ir::type_name(s->type));
  if (const auto* c = p.find_capture(name)) return fmt::format("Tensor[{}, {}]", ir::dtype_name(c->dtype), c->rank);
  if (p.block_indices && p.block_indices->name == name)
    return fmt::format("BlockIndices[{}, {}] (an int32 tensor [B, Hq or Hkv, q blocks, K])", p.block_indices->q_block,
                       p.block_indices->kv_block);
  if (p.token_indices && p.token_indices->name == name)
    return "TokenIndices (an int32 tensor [B, Hq, Hkv or 1 heads, Tq, K])";
  return "nothing";
}

ir::Env resolve_bindings(const ir::Program& program, const std::map<std::string, Binding>& bind,
                         const std::optional<Device>& device, Problems& problems) {
  ir::Env env;
  const std::optional<ir::KeyList> list = program.key_list();
  for (const auto& [name, value] : bind) {
    const ir::Scalar* s = program.find_scalar(name);
    if ((s && !s->is_shape_value()) || program.find_capture(name) || (list && list->name == name)) continue;
    problems.add(fmt::format("{} is not declared by the program ({})", dsl::quoted(name), declared_list(program)));
  }
  for (const auto& s : program.scalars) {
    if (s.is_shape_value()) continue;  // read from its tensor below
    auto it = bind.find(s.name);
    if (it == bind.end()) {
      problems.add(fmt::format("scalar '{}' is not bound (declared `{}: {}`)", s.name, s.name, ir::type_name(s.type)));
      continue;
    }
    if (auto v = scalar_value(s, it->second, problems)) env.scalars[s.name] = *v;
  }
  for (const auto& c : program.captures) {
    const std::string expected = declared_kind(program, c.name);
    auto it = bind.find(c.name);
    if (it == bind.end()) {
      problems.add(fmt::format("tensor '{}' is not bound (declared `{}: {}`)", c.name, c.name, expected));
      continue;
    }
    if (auto t = tensor_value(c.name, expected, c.dtype, c.rank, it->second, device, problems))
      env.tensors[c.name] = std::move(*t);
  }
  ir::bind_shape_values(program, env);
  // The program's runtime asserts, on the values they read, once every binding is usable.
  if (problems.list().empty())
    for (const std::string& failed : ir::failed_checks(program, env)) problems.add(failed);
  if (list) {
    // The GPU kernel walks the list and so needs one; cpu kernels take the same arguments. Only
    // callers that accept any placement (nullopt) may leave it out: the CPU back end then
    // selects every key.
    const std::string& name = list->name;
    if (auto it = bind.find(name); it != bind.end()) {
      if (auto t = tensor_value(name, declared_kind(program, name), ir::DType::Int32, 4, it->second, device, problems))
        env.tensors[name] = std::move(*t);
    } else if (device) {
      problems.add(fmt::format("{} '{}' are not bound (declared `{}: {}`)", list->what(), name, name,
                               list->tokens ? "TokenIndices" : declared_kind(program, name)));
    }
  }
  return env;
}

int check_selection(const ir::Program& program, const ir::Env& env, int B, int Hq, int Hkv, int Tq,
                    Problems& problems) {
  const std::optional<ir::KeyList> list = program.key_list();
  if (!list) return 1;
  auto it = env.tensors.find(list->name);
  if (it == env.tensors.end()) return 1;  // unbound or unusable: reported by resolve_bindings
  const ir::TensorBinding& t = it->second;
  const bool tokens = list->tokens;
  const int q_block = list->q_block;
  const std::int64_t nq = (static_cast<std::int64_t>(Tq) + q_block - 1) / q_block;
  const std::string what = fmt::format("{} '{}'", list->what(), list->name);
  const std::string dims =
      tokens ? fmt::format("[B={}, H (Hq={}, Hkv={} or 1), Tq={}, K]", B, Hq, Hkv, Tq)
             : fmt::format("[B={}, H (Hq={} or Hkv={}), ceil(Tq / {})={}, K]", B, Hq, Hkv, q_block, nq);
  if (t.shape.size() != 4) return 1;  // reported by resolve_bindings
  int group = 1;
  bool ok = t.shape[0] == B && t.shape[2] == nq && t.shape[3] >= 1;
  if (t.shape[1] == Hq) {
    group = 1;
  } else if (t.shape[1] == Hkv && Hkv >= 1) {
    group = Hq / Hkv;
  } else if (tokens && t.shape[1] == 1) {
    group = Hq;
  } else {
    ok = false;
  }
  if (!ok) {
    problems.add(fmt::format("{}: expected shape {}, got {}", what, dims, format_dims(t.shape)));
    return 1;
  }
  if (t.shape[3] > std::numeric_limits<int>::max())
    problems.add(fmt::format("{}: K={} is too large", what, t.shape[3]));
  const std::int64_t k_stride = t.strides.empty() ? 1 : t.strides[3];
  if (t.shape[3] > 1 && k_stride != 1)
    problems.add(fmt::format("{}: the K dimension must be contiguous (stride 1), got {}", what, k_stride));
  return group;
}

}  // namespace flexjit::api
