#include "ir/depth.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/ir_visitor.hpp"

namespace flexjit::ir {

std::size_t inlined_depth(const Expr& root) {
  std::unordered_map<const Node*, std::size_t> depth;
  std::unordered_map<std::string, const Node*> let_value;  // names are unique within a mod
  // Post-order with an explicit stack: a node is expanded (children pushed) once, then finished.
  // Children come in evaluation order, so a let's value is finished before its body starts.
  std::vector<std::pair<Expr, bool>> stack{{root, false}};
  while (!stack.empty()) {
    auto [e, expanded] = stack.back();
    stack.pop_back();
    if (depth.count(e.get())) continue;
    if (const Var* v = e.as<Var>(); v && v->var_kind == VarKind::Let) {
      const auto it = let_value.find(v->name);
      const auto value = it == let_value.end() ? depth.end() : depth.find(it->second);
      depth[e.get()] = value == depth.end() ? 1 : value->second;
      continue;
    }
    const std::vector<Expr> kids = children(e);
    if (!expanded) {
      if (const Let* l = e.as<Let>()) let_value[l->name] = l->value.get();
      stack.push_back({e, true});
      for (auto k = kids.rbegin(); k != kids.rend(); ++k)
        if (!depth.count(k->get())) stack.push_back({*k, false});
      continue;
    }
    std::size_t deepest = 0;
    for (const Expr& k : kids) deepest = std::max(deepest, depth[k.get()]);
    depth[e.get()] = deepest + 1;
  }
  return depth[root.get()];
}

}  // namespace flexjit::ir
