#include "ir/gradient_captures.hpp"

#include "ir/ir_visitor.hpp"

namespace flexjit::ir {
namespace {

class LoadedTensors final : public OnceVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit(const Load* op, const Expr& e) override {
    names.insert(op->tensor);
    OnceVisitor::visit(op, e);
  }
};

std::set<std::string> loaded(const std::optional<Mod>& mod) {
  LoadedTensors v;
  if (mod) v.walk(mod->body);
  return v.names;
}

}  // namespace

std::set<std::string> gradient_captures(const Program& p) {
  std::set<std::string> out;
  for (const auto* mod : {&p.score_mod, &p.sink})
    for (const std::string& name : loaded(*mod))
      if (const Capture* c = p.find_capture(name); c && value_type(c->dtype) == Type::Float) out.insert(name);
  return out;
}

bool mod_reads(const std::optional<Mod>& mod, const std::string& name) { return loaded(mod).count(name) > 0; }

}  // namespace flexjit::ir
