#include "cpu/args.hpp"

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "ir/ir_visitor.hpp"

namespace flexjit::cpu {

namespace {

// The generated code indexes these by fixed offsets (llvm_mods.cpp builds the same structs).
static_assert(sizeof(void*) == 8, "the CPU back end assumes 64-bit pointers");
static_assert(offsetof(CpuArgs, scalars) == 0 && offsetof(CpuArgs, tensors) == 8 && offsetof(CpuArgs, fault) == 16);
static_assert(offsetof(CpuTensorArg, data) == 0 && offsetof(CpuTensorArg, shape) == 8 &&
              offsetof(CpuTensorArg, strides) == 16);

class UseCollector : public ir::IRVisitor {
 public:
  UseCollector(const ir::Program& p, UsedDecls& used) : p_(p), used_(used) {}

 protected:
  void visit(const ir::Var* op, const ir::Expr& e) override {
    if (op->var_kind == ir::VarKind::Scalar)
      for (std::size_t k = 0; k < p_.scalars.size(); ++k)
        if (p_.scalars[k].name == op->name) used_.scalars[k] = true;
    IRVisitor::visit(op, e);
  }
  void visit(const ir::Load* op, const ir::Expr& e) override {
    for (std::size_t k = 0; k < p_.captures.size(); ++k)
      if (p_.captures[k].name == op->tensor) used_.captures[k] = true;
    IRVisitor::visit(op, e);
  }

 private:
  const ir::Program& p_;
  UsedDecls& used_;
};

[[noreturn]] void fail(const std::string& msg) { throw std::runtime_error("cpu binding: " + msg); }

// The binding of a declaration, or null where the call gives none (an error if the mods use it).
template <class Map>
const typename Map::mapped_type* binding(const Map& bindings, const std::string& kind, const std::string& name,
                                         bool used) {
  auto it = bindings.find(name);
  if (it != bindings.end()) return &it->second;
  if (used) fail(kind + " '" + name + "' is not bound");
  return nullptr;
}

}  // namespace

UsedDecls used_declarations(const ir::Program& p) {
  UsedDecls used{std::vector<bool>(p.scalars.size()), std::vector<bool>(p.captures.size())};
  UseCollector c(p, used);
  for (const auto* m : {&p.mask_mod, &p.score_mod, &p.sink})
    if (*m) c.walk((*m)->body);
  return used;
}

CpuBinding::CpuBinding(const ir::Program& p, const ir::Env& env) {
  const UsedDecls used = used_declarations(p);

  scalar_slots_.assign(p.scalars.size(), 0);
  for (std::size_t k = 0; k < p.scalars.size(); ++k) {
    const ir::Scalar& s = p.scalars[k];
    const ir::Value* v = binding(env.scalars, "scalar", s.name, used.scalars[k]);
    if (!v) continue;
    if (v->type != s.type)
      fail("scalar '" + s.name + "' is bound to a " + ir::type_name(v->type) + " value but declared " +
           ir::type_name(s.type));
    switch (s.type) {
      case ir::Type::Int: scalar_slots_[k] = v->i; break;
      case ir::Type::Bool: scalar_slots_[k] = v->b ? 1 : 0; break;
      case ir::Type::Float: std::memcpy(&scalar_slots_[k], &v->f, sizeof v->f); break;
    }
  }

  // An unbound (unused) capture gets an all-zero shape: any load from it faults, never reads.
  const std::size_t n = p.captures.size();
  shapes_.resize(n);
  strides_.resize(n);
  tensors_.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const ir::Capture& c = p.captures[k];
    capture_names_.push_back(c.name);
    shapes_[k].assign(c.rank, 0);
    strides_[k].assign(c.rank, 0);
    tensors_[k] = {nullptr, shapes_[k].data(), strides_[k].data()};
    const ir::TensorBinding* bound = binding(env.tensors, "tensor", c.name, used.captures[k]);
    if (!bound) continue;
    const ir::TensorBinding& t = *bound;
    if (t.dtype != c.dtype)
      fail("tensor '" + c.name + "' is bound with dtype " + ir::dtype_name(t.dtype) + " but declared " +
           ir::dtype_name(c.dtype));
    if (t.shape.size() != static_cast<std::size_t>(c.rank) || (!t.strides.empty() && t.strides.size() != t.shape.size()))
      fail("tensor '" + c.name + "' is bound with rank " + std::to_string(t.shape.size()) + " but declared rank " +
           std::to_string(c.rank));
    std::int64_t stride = 1;
    for (int d = c.rank; d-- > 0;) {
      if (t.shape[d] < 0) fail("tensor '" + c.name + "' has a negative extent");
      shapes_[k][d] = t.shape[d];
      strides_[k][d] = t.strides.empty() ? stride : t.strides[d];
      stride *= t.shape[d];
    }
    if (!t.data && used.captures[k]) fail("tensor '" + c.name + "' has no data");
    tensors_[k].data = t.data;
  }

  args_ = CpuArgs{scalar_slots_.data(), tensors_.data(), &fault_};
}

void CpuBinding::check() const {
  std::atomic_ref<std::int32_t> fault(fault_);
  if (fault.load(std::memory_order_relaxed) == 0) return;  // the common case: no write
  const std::int32_t f = fault.exchange(0, std::memory_order_relaxed);
  if (f == 0) return;
  const std::size_t k = static_cast<std::size_t>(f - 1);
  const std::string name = k < capture_names_.size() ? capture_names_[k] : "?";
  throw std::runtime_error("evaluate: an index is out of range for tensor '" + name + "'");
}

}  // namespace flexjit::cpu
