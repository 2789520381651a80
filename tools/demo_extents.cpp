#include "tools/demo_extents.hpp"

#include <algorithm>

#include "ir/bounds.hpp"
#include "ir/inline_lets.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::tools {
namespace {

// Every Load of the mods, each node once (inline_lets makes a DAG).
class LoadFinder : public ir::OnceVisitor {
 public:
  std::vector<const ir::Load*> loads;

 protected:
  void visit(const ir::Load* op, const ir::Expr& e) override {
    loads.push_back(op);
    ir::OnceVisitor::visit(op, e);
  }
};

// The ranges of the mods' parameters for the call, and of the scalars bound on the command line.
ir::BoundsEnv call_bounds(const DemoShape& s, const std::map<std::string, Binding>& scalars) {
  ir::BoundsEnv env;
  env.set(ir::kParamBatch, IntInterval{0, s.B - 1});
  env.set(ir::kParamHead, IntInterval{0, s.Hq - 1});
  env.set(ir::kParamQ, IntInterval{0, s.Tq - 1});
  env.set(ir::kParamKv, IntInterval{0, s.Tkv - 1});
  for (const auto& [name, value] : scalars) {
    if (const long long* i = std::get_if<long long>(&value)) env.set(name, IntInterval{*i, *i});
    if (const bool* b = std::get_if<bool>(&value)) env.set(name, BoolInterval{!*b, *b});
  }
  return env;
}

}  // namespace

std::map<std::string, std::vector<std::int64_t>> demo_extents(const ir::Program& program, const DemoShape& shape,
                                                              const std::map<std::string, Binding>& scalars) {
  // Past this an index is taken as unbounded (a dtype's range, a huge offset): the guess below.
  constexpr std::int64_t kLongestBounded = std::int64_t(1) << 24;
  const std::int64_t guess = std::max({shape.B, shape.Hq, shape.Tq, shape.Tkv});
  const ir::BoundsEnv env = call_bounds(shape, scalars);

  LoadFinder finder;
  for (const auto* mod : {&program.mask_mod, &program.score_mod, &program.sink})
    if (*mod) finder.walk(ir::inline_lets((*mod)->body));

  std::map<std::string, std::vector<std::int64_t>> out;
  for (const ir::Capture& c : program.captures)
    if (c.rank > 0) out[c.name] = std::vector<std::int64_t>(static_cast<std::size_t>(c.rank), 1);
  for (const ir::Load* load : finder.loads) {
    auto it = out.find(load->tensor);
    if (it == out.end()) continue;
    for (std::size_t d = 0; d < load->indices.size() && d < it->second.size(); ++d) {
      const IntInterval r = ir::int_bounds(load->indices[d], env);
      const bool bounded = r.hi >= 0 && r.hi < kLongestBounded;
      it->second[d] = std::max<std::int64_t>(it->second[d], bounded ? r.hi + 1 : guess);
    }
  }
  return out;
}

}  // namespace flexjit::tools
