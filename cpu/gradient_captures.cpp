#include "cpu/gradient_captures.hpp"

#include "ir/ir_visitor.hpp"

namespace flexjit::cpu {
namespace {

class LoadedTensors final : public ir::OnceVisitor {
 public:
  std::set<std::string> names;

 protected:
  void visit(const ir::Load* op, const ir::Expr& e) override {
    names.insert(op->tensor);
    ir::OnceVisitor::visit(op, e);
  }
};

std::set<std::string> loaded(const std::optional<ir::Mod>& mod) {
  LoadedTensors v;
  if (mod) v.walk(mod->body);
  return v.names;
}

}  // namespace

std::set<std::string> gradient_captures(const ir::Program& p) {
  std::set<std::string> out;
  for (const auto* mod : {&p.score_mod, &p.sink})
    for (const std::string& name : loaded(*mod))
      if (const ir::Capture* c = p.find_capture(name); c && ir::value_type(c->dtype) == ir::Type::Float) out.insert(name);
  return out;
}

bool mod_reads(const std::optional<ir::Mod>& mod, const std::string& name) { return loaded(mod).count(name) > 0; }

}  // namespace flexjit::cpu
