#include "compiler/plan.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <unordered_set>

#include "compiler/param_space.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::compiler {
namespace {

// ---- the passes, in the order make_plan runs them ----------------------------------------------

std::string kernel_name(const ir::Program& p) {
  std::string out;
  for (char c : p.name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out.empty() ? "program" : out;
}

bool is_true(const ir::Expr& e) {
  const auto* b = e.as<ir::BoolImm>();
  return b && b->value;
}

bool is_score_param(const ir::Expr& e) {
  const auto* v = e.as<ir::Var>();
  return v && v->var_kind == ir::VarKind::Param && v->name == ir::kParamScore;
}

// A mask that keeps everything or a score mod that returns its score needs no per-element work:
// the kernel takes the unmasked path (and folds the scale into exp2).
void mods_that_work(const ir::Program& p, KernelPlan& plan) {
  plan.mask_keeps_all = p.mask_mod && is_true(p.mask_mod->body);
  plan.has_mask = p.mask_mod && !plan.mask_keeps_all;
  plan.score_is_identity = p.score_mod && is_score_param(p.score_mod->body);
  plan.has_score_mod = p.score_mod && !plan.score_is_identity;
  plan.has_sink = p.sink.has_value();
}

std::vector<CtaValue> cta_values(const ir::Program& p, const KernelPlan& plan) {
  std::vector<CtaValue> out;
  if (plan.has_mask) find_cta_values(p.mask_mod->body, out);
  for (auto& v : out) v.from_mask = true;
  if (plan.has_score_mod) find_cta_values(p.score_mod->body, out);
  return out;
}

void key_range(const ir::Program& p, KernelPlan& plan) {
  if (!p.mask_mod) return;
  plan.kv_range = kv_range(p);
  plan.kv_range_full = kv_range_is_full(plan.kv_range);
}

// kv range transposed: the backward visits, per kv tile, the query tiles that can reach it.
void query_range(const ir::Program& p, KernelPlan& plan) {
  if (!p.mask_mod) return;
  plan.q_range = q_range(p);
  plan.q_range_full = q_range_is_full(plan.q_range);
}

// The backward's derivatives; ir::differentiate throws UnsupportedError naming what it cannot
// differentiate (an exponent that varies, ...), which is the backward compile's error.
void derivatives(const ir::Program& p, KernelPlan& plan) {
  if (plan.has_score_mod) plan.score_derivatives = ir::differentiate(*p.score_mod);
  if (p.sink) plan.sink_derivatives = ir::differentiate(*p.sink);
  plan.grads = grad_layout(p);
}

bool reads_tensor(const ir::Expr& e) {
  struct Finder : ir::IRVisitor {
    bool found = false;
    void visit(const ir::Load*, const ir::Expr&) override { found = true; }
  } f;
  f.walk(e);
  return f.found;
}

// Whether e reads a tensor outside the subexpressions in `hoisted` (computed once per CTA, with
// in-range indices by construction).
bool reads_tensor_per_score(const ir::Expr& e, const std::vector<CtaValue>& hoisted) {
  struct Finder : ir::OnceVisitor {
    std::unordered_set<const ir::Node*> skip;
    bool found = false;
    void walk(const ir::Expr& x) override {
      if (!found && !skip.count(x.get())) ir::OnceVisitor::walk(x);
    }
    void visit(const ir::Load*, const ir::Expr&) override { found = true; }
  } f;
  for (const auto& v : hoisted) f.skip.insert(v.expr.get());
  f.walk(e);
  return f.found;
}

std::set<std::string> vars_read(const ir::Expr& e) {
  struct Collector : ir::IRVisitor {
    std::set<std::string> names;
    void visit(const ir::Var* op, const ir::Expr&) override { names.insert(op->name); }
  } c;
  c.walk(e);
  return c.names;
}

}  // namespace

TileMapNeeds tile_map_needs(const ir::Program& p) {
  TileMapNeeds t;
  t.needed = p.mask_mod && !p.block_indices && !p.token_indices && reads_tensor(p.mask_mod->body);
  if (t.needed) {
    const std::set<std::string> used = vars_read(p.mask_mod->body);
    t.per_batch = used.count(ir::kParamBatch) > 0;
    t.per_head = used.count(ir::kParamHead) > 0;
  }
  return t;
}

const ir::BoundsEnv& mod_param_ranges() {
  static const ir::BoundsEnv env = [] {
    ir::BoundsEnv e;
    const IntInterval index{0, std::numeric_limits<std::int32_t>::max() - 1}, grid{0, 65534};
    e.set(ir::kParamQ, index).set(ir::kParamKv, index).set(ir::kParamBatch, grid).set(ir::kParamHead, grid);
    return e;
  }();
  return env;
}

namespace {

// One map for every expression the kernel evaluates. A node reached from two roots gets the hull
// of its two intervals, so the map stays conservative.
ir::IntRanges int_ranges(const ir::Program& p, const KernelPlan& plan) {
  std::vector<ir::Expr> roots;
  if (plan.has_mask) roots.push_back(p.mask_mod->body);
  if (plan.has_score_mod) roots.push_back(p.score_mod->body);
  if (p.sink) roots.push_back(p.sink->body);
  for (const auto& v : plan.cta_values) roots.push_back(v.expr);
  for (const auto* d : {&plan.score_derivatives, &plan.sink_derivatives}) {
    if (!*d) continue;
    roots.push_back((*d)->d_score);
    for (const auto& l : (*d)->loads) {
      roots.push_back(l.derivative);
      roots.push_back(l.reached);
      for (const auto& i : l.indices) roots.push_back(i);
    }
  }
  if (!plan.kv_range_full) {
    roots.push_back(plan.kv_range.lo);
    roots.push_back(plan.kv_range.hi);
  }
  if (!plan.q_range_full) {
    roots.push_back(plan.q_range.lo);
    roots.push_back(plan.q_range.hi);
  }
  ir::IntRanges all;
  for (const auto& root : roots) {
    for (const auto& [node, iv] : ir::int_ranges(root, mod_param_ranges())) {
      auto [it, fresh] = all.emplace(node, iv);
      if (!fresh) it->second = IntInterval{std::min(it->second.lo, iv.lo), std::max(it->second.hi, iv.hi)};
    }
  }
  return all;
}

}  // namespace

KernelPlan make_plan(const ir::Program& program, const KernelTarget& target, const dsl::SourceFile* source) {
  KernelPlan plan;
  plan.program = &program;
  plan.source = source;
  plan.target = target;
  plan.name = kernel_name(program);
  mods_that_work(program, plan);
  plan.params = param_layout(program);
  check_param_space(program, plan.params, nullptr, source);  // before any analysis: fail fast
  plan.cta_values = cta_values(program, plan);
  plan.score_anywhere = plan.has_score_mod && !reads_tensor_per_score(program.score_mod->body, plan.cta_values);
  key_range(program, plan);
  query_range(program, plan);
  plan.tile_map = tile_map_needs(program);
  if (target.pass == KernelPass::Backward) {
    derivatives(program, plan);
    check_param_space(program, plan.params, &plan.grads, source);
  }
  plan.int_ranges = int_ranges(program, plan);
  return plan;
}

}  // namespace flexjit::compiler
