// Reverse-mode accumulation on the let-free DAG, in three linear steps:
//   1. a post-order of the Float nodes that vary with a variable (the score, float loads),
//      walking Float operands only: select conditions, load indices and comparisons carry no
//      derivative;
//   2. from the root down (reverse post-order: every parent before its operands), each node's
//      adjoint is the sum of what its parents passed it, and it passes adjoint * partial to each
//      varying operand (ir/chain_rule.hpp);
//   3. the variables' adjoints are the derivatives.
//
// Guards. The interpreter evaluates only the select arm it takes, and an arm may read a tensor
// at an index that is in range only when the arm is taken. A contribution is therefore built as
// select(edge, adjoint * partial, 0) where `edge` is the condition under which the forward
// evaluates that operand (the parent is reached and, for an arm, the select goes that way): it
// reads the parent's operands only where the forward does. A node is reached when any of its
// incoming edges is; for a load, that is LoadDerivative::reached.
#include "ir/differentiate.hpp"

#include <unordered_map>

#include "ir/chain_rule.hpp"
#include "ir/cse.hpp"
#include "ir/inline_lets.hpp"
#include "ir/internal_error.hpp"
#include "ir/ir_visitor.hpp"
#include "ir/simplify.hpp"

namespace flexjit::ir {
namespace {

bool is_score(const Expr& e) {
  const Var* v = e.as<Var>();
  return v && v->var_kind == VarKind::Param && v->name == kParamScore;
}

bool is_float_load(const Expr& e) { return e.as<Load>() && e.type() == Type::Float; }

bool is_variable(const Expr& e) { return is_score(e) || is_float_load(e); }

bool is_true(const Expr& e) {
  const BoolImm* b = e.as<BoolImm>();
  return b && b->value;
}

// Step 1, without recursion. `varies` gets an entry for every Float node met.
std::vector<Expr> varying_post_order(const Expr& root, std::unordered_map<const Node*, bool>& varies) {
  struct Frame {
    Expr e;
    std::vector<Expr> operands;
    std::size_t next = 0;
    bool varies = false;
  };
  std::vector<Expr> order;
  std::vector<Frame> stack;
  stack.push_back({root, children(root)});
  while (!stack.empty()) {
    const std::size_t top = stack.size() - 1;
    if (stack[top].next < stack[top].operands.size()) {
      Expr c = stack[top].operands[stack[top].next++];
      if (c.type() != Type::Float) continue;
      if (auto it = varies.find(c.get()); it != varies.end()) {
        stack[top].varies = stack[top].varies || it->second;
        continue;
      }
      std::vector<Expr> ops = is_float_load(c) ? std::vector<Expr>{} : children(c);
      stack.push_back({std::move(c), std::move(ops)});
      continue;
    }
    const bool v = stack[top].varies || is_variable(stack[top].e);
    varies[stack[top].e.get()] = v;
    if (v) order.push_back(stack[top].e);
    stack.pop_back();
    if (!stack.empty()) stack.back().varies = stack.back().varies || v;
  }
  return order;
}

// When the forward evaluates operand i of e, given that it evaluates e (undefined: always).
Expr edge_condition(const Expr& e, std::size_t i) {
  const Select* s = e.as<Select>();
  if (!s || i == 0) return {};
  return i == 1 ? s->cond : Unary::make(UnaryOp::Not, s->cond, s->pos);
}

Expr both(const Expr& a, const Expr& b) {
  if (!b || is_true(b)) return a;
  if (is_true(a)) return b;
  return Binary::make(BinaryOp::And, a, b, b->pos);
}

Expr any_of(const std::vector<Expr>& conds) {
  Expr r;
  for (const Expr& c : conds) {
    if (is_true(c)) return c;
    if (r.same_as(c)) continue;
    r = r ? Binary::make(BinaryOp::Or, r, c, c->pos) : c;
  }
  return r;
}

Expr sum_of(const std::vector<Expr>& terms) {
  Expr r;
  for (const Expr& t : terms) r = r ? Binary::make(BinaryOp::Add, r, t, t->pos) : t;
  return r;
}

Expr tidy(const Expr& e) { return common_subexpressions(simplify(e)); }

class ReverseAccumulation {
 public:
  explicit ReverseAccumulation(const char* what) : what_(what) {}

  // Steps 2 and 3 for the let-free body.
  ModDerivatives run(const Expr& body) {
    std::unordered_map<const Node*, bool> varies;
    const std::vector<Expr> order = varying_post_order(body, varies);
    const Expr yes = BoolImm::make(true, body->pos);
    if (!order.empty()) incoming_[body.get()] = {{FloatImm::make(1.0, body->pos)}, {yes}};
    for (auto it = order.rbegin(); it != order.rend(); ++it) pass_down(*it, varies);

    ModDerivatives out;
    std::vector<Expr> d_score;
    for (const Expr& e : order) {
      auto it = done_.find(e.get());
      if (it == done_.end()) continue;  // every path to it had a zero partial (floor, ...)
      if (is_score(e)) d_score.push_back(it->second.adjoint);
      if (const Load* l = e.as<Load>(); l && is_float_load(e)) {
        std::vector<Expr> indices;
        for (const Expr& i : l->indices) indices.push_back(tidy(i));
        out.loads.push_back({l->tensor, l->dtype, std::move(indices), tidy(it->second.adjoint),
                             tidy(it->second.reached), l->pos});
      }
    }
    out.d_score = d_score.empty() ? FloatImm::make(0.0, body->pos) : tidy(sum_of(d_score));
    return out;
  }

 private:
  struct Incoming {  // what the parents passed down so far
    std::vector<Expr> terms;
    std::vector<Expr> edges;
  };
  struct Done {
    Expr adjoint;
    Expr reached;
  };

  void pass_down(const Expr& e, const std::unordered_map<const Node*, bool>& varies) {
    auto in = incoming_.find(e.get());
    if (in == incoming_.end()) return;
    const Done d{sum_of(in->second.terms), any_of(in->second.edges)};
    incoming_.erase(in);
    done_.emplace(e.get(), d);
    if (is_float_load(e)) return;  // a variable: its indices carry no derivative
    const std::vector<Expr> operands = children(e);
    for (std::size_t i = 0; i < operands.size(); ++i) {
      const Expr& c = operands[i];
      if (c.type() != Type::Float || !varies.at(c.get())) continue;
      Expr term = chain_rule(e, i, d.adjoint, what_);
      if (!term) continue;
      const Expr edge = both(d.reached, edge_condition(e, i));
      if (!is_true(edge)) term = Select::make(edge, term, FloatImm::make(0.0, c->pos), c->pos);
      Incoming& to = incoming_[c.get()];
      to.terms.push_back(std::move(term));
      to.edges.push_back(edge);
    }
  }

  const char* what_;
  std::unordered_map<const Node*, Incoming> incoming_;
  std::unordered_map<const Node*, Done> done_;  // keyed by nodes of the body, alive throughout
};

}  // namespace

ModDerivatives differentiate(const Mod& mod) {
  internal_assert(mod.body && mod.body.type() == Type::Float,
                  std::string("differentiate: ") + mod_name(mod.kind) + " is not a Float mod");
  const Expr flat = inline_lets(mod.body);
  return ReverseAccumulation(mod_name(mod.kind)).run(flat);
}

}  // namespace flexjit::ir
