#include "ir/bound_values.hpp"

#include <fmt/format.h>

#include "ir/ir_visitor.hpp"

namespace flexjit::ir {

namespace {

bool binds_every_scalar(const Expr& e, const Env& env) {
  struct Reads : OnceVisitor {
    const Env* env;
    bool all = true;
    void visit(const Var* op, const Expr&) override {
      if (op->var_kind == VarKind::Scalar && !env->scalars.count(op->name)) all = false;
    }
  } r;
  r.env = &env;
  r.walk(e);
  return r.all;
}

}  // namespace

void bind_shape_values(const Program& p, Env& env) {
  for (const Scalar& s : p.scalars) {
    if (!s.is_shape_value()) continue;
    auto t = env.tensors.find(s.shape_of);
    if (t == env.tensors.end() || s.axis < 0 || static_cast<std::size_t>(s.axis) >= t->second.shape.size()) continue;
    env.scalars[s.name] = Value::integer(t->second.shape[static_cast<std::size_t>(s.axis)]);
  }
}

std::vector<std::string> failed_checks(const Program& p, const Env& env) {
  std::vector<std::string> out;
  for (const RuntimeCheck& c : p.checks) {
    if (!binds_every_scalar(c.cond, env)) continue;
    if (!evaluate(c.cond, env).as_bool())
      out.push_back(fmt::format("assertion failed: {} (line {})", c.message, c.pos.line));
  }
  return out;
}

}  // namespace flexjit::ir
