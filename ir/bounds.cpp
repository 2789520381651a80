#include "ir/bounds.hpp"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/internal_error.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::ir {

namespace {

using ir::BinaryOp;
using ir::CompareOp;
using ir::Expr;
using ir::Type;

IntInterval load_range(ir::DType d) {
  switch (d) {
    case ir::DType::Int8: return iv_int8();
    case ir::DType::Int16: return iv_int16();
    case ir::DType::Int32: return iv_int32();
    case ir::DType::UInt8: return iv_uint8();
    default: return iv_full();  // int64 (and anything else) may be any value
  }
}

// What `map` says of `name`, or `unknown` where it says nothing.
template <class Map, class Interval>
Interval lookup(const Map& map, const std::string& name, Interval unknown) {
  auto it = map.find(name);
  return it != map.end() ? it->second : unknown;
}

BoolInterval compare(CompareOp op, IntInterval a, IntInterval b) {
  switch (op) {
    case CompareOp::LT: return iv_lt(a, b);
    case CompareOp::LE: return iv_le(a, b);
    case CompareOp::GT: return iv_gt(a, b);
    case CompareOp::GE: return iv_ge(a, b);
    case CompareOp::EQ: return iv_eq(a, b);
    case CompareOp::NE: return iv_ne(a, b);
  }
  return bi_unknown();
}

IntInterval int_binary(BinaryOp op, IntInterval a, IntInterval b) {
  switch (op) {
    case BinaryOp::Add: return iv_add(a, b);
    case BinaryOp::Sub: return iv_sub(a, b);
    case BinaryOp::Mul: return iv_mul(a, b);
    case BinaryOp::FloorDiv: return iv_floordiv(a, b);
    case BinaryOp::Mod: return iv_mod(a, b);
    case BinaryOp::Pow: return iv_pow(a, b);
    case BinaryOp::Min: return iv_min(a, b);
    case BinaryOp::Max: return iv_max(a, b);
    case BinaryOp::BitAnd: return iv_bitand(a, b);
    case BinaryOp::BitOr: return iv_bitor(a, b);
    case BinaryOp::BitXor: return iv_bitxor(a, b);
    case BinaryOp::Shl: return iv_shl(a, b);
    case BinaryOp::Shr: return iv_shr(a, b);
    default: return iv_full();  // Div, And, Or are never Int
  }
}

// One analysis run. Shared subexpressions are memoized by node; Let names are unique within a mod
// (ir.hpp), so a node's interval does not depend on where it is reached. Should a name be shadowed
// anyway, the memo is dropped rather than trusted.
class Walker {
 public:
  explicit Walker(const BoundsEnv& env) : env_(env) {}

  IntInterval ints(const Expr& e) {
    internal_assert(e && e.type() == Type::Int, "int_bounds of a non-Int expression");
    return memoized(int_memo_, e, [&] { return int_node(e); });
  }

  // Visits every node, so that each Int node below float operations gets its interval too.
  void collect(const Expr& e) {
    if (e.type() == Type::Int) ints(e);
    if (e.type() == Type::Bool) bools(e);
    if (auto n = e.as<ir::Let>()) {
      collect(n->value);
      with_let(*n, [&] {
        collect(n->body);
        return 0;
      });
      return;
    }
    for (const Expr& k : ir::children(e)) collect(k);
  }
  const std::unordered_map<const ir::Node*, IntInterval>& int_memo() const { return int_memo_; }

  BoolInterval bools(const Expr& e) {
    internal_assert(e && e.type() == Type::Bool, "bool_bounds of a non-Bool expression");
    return memoized(bool_memo_, e, [&] { return bool_node(e); });
  }

 private:
  // A node's interval, computed once.
  template <class Memo, class Compute>
  static typename Memo::mapped_type memoized(Memo& memo, const Expr& e, const Compute& compute) {
    if (auto it = memo.find(e.get()); it != memo.end()) return it->second;
    typename Memo::mapped_type r = compute();
    memo.emplace(e.get(), r);
    return r;
  }

  IntInterval int_node(const Expr& e) {
    if (auto n = e.as<ir::IntImm>()) return iv_point(n->value);
    if (auto n = e.as<ir::Var>()) return lookup(env_.ints, n->name, iv_full());
    if (auto n = e.as<ir::Load>())
      return n->indices.empty() ? lookup(env_.rank0_ints, n->tensor, load_range(n->dtype)) : load_range(n->dtype);
    if (auto n = e.as<ir::Cast>()) {
      if (n->value.type() == Type::Bool) return iv_from_bool(bools(n->value));
      if (n->value.type() == Type::Int) return ints(n->value);
      return iv_full();  // float -> int: floats are not analysed
    }
    if (auto n = e.as<ir::Unary>()) {
      if (n->op == ir::UnaryOp::Neg) return iv_neg(ints(n->a));
      if (n->op == ir::UnaryOp::BitNot) return iv_bitnot(ints(n->a));
      return iv_full();
    }
    if (auto n = e.as<ir::Binary>()) return int_binary(n->op, ints(n->a), ints(n->b));
    if (auto n = e.as<ir::Select>()) return iv_select(bools(n->cond), ints(n->t), ints(n->f));
    if (auto n = e.as<ir::Call>()) {
      if (n->fn == ir::Intrinsic::Abs && n->args.size() == 1 && n->args[0].type() == Type::Int)
        return iv_abs(ints(n->args[0]));
      return iv_full();  // floor_to_int / ceil_to_int of a float
    }
    if (auto n = e.as<ir::Let>()) return with_let(*n, [&] { return ints(n->body); });
    return iv_full();
  }

  BoolInterval bool_node(const Expr& e) {
    if (auto n = e.as<ir::BoolImm>()) return bi_const(n->value);
    if (auto n = e.as<ir::Var>()) return lookup(env_.bools, n->name, bi_unknown());
    if (auto n = e.as<ir::Cast>()) {
      if (n->value.type() == Type::Int) return bi_from_int(ints(n->value));
      if (n->value.type() == Type::Bool) return bools(n->value);
      return bi_unknown();
    }
    if (auto n = e.as<ir::Unary>()) return n->op == ir::UnaryOp::Not ? bi_not(bools(n->a)) : bi_unknown();
    if (auto n = e.as<ir::Binary>()) {
      switch (n->op) {
        case BinaryOp::And:
        case BinaryOp::BitAnd: return bi_and(bools(n->a), bools(n->b));
        case BinaryOp::Or:
        case BinaryOp::BitOr: return bi_or(bools(n->a), bools(n->b));
        case BinaryOp::BitXor: return bi_xor(bools(n->a), bools(n->b));
        default: return bi_unknown();
      }
    }
    if (auto n = e.as<ir::Compare>()) {
      if (n->a.type() == Type::Int) return compare(n->op, ints(n->a), ints(n->b));
      // Bool operands compare as 0 / 1 (Python's True > False).
      if (n->a.type() == Type::Bool)
        return compare(n->op, iv_from_bool(bools(n->a)), iv_from_bool(bools(n->b)));
      return bi_unknown();  // floats are not analysed
    }
    if (auto n = e.as<ir::Select>()) return bi_select(bools(n->cond), bools(n->t), bools(n->f));
    if (auto n = e.as<ir::Let>()) return with_let(*n, [&] { return bools(n->body); });
    if (auto n = e.as<ir::Load>(); n && n->indices.empty()) return lookup(env_.rank0_bools, n->tensor, bi_unknown());
    return bi_unknown();  // Bool loads
  }

  // Binds n.name to its value's interval while body() runs.
  template <class F>
  auto with_let(const ir::Let& n, F body) -> decltype(body()) {
    std::optional<IntInterval> old_int;
    std::optional<BoolInterval> old_bool;
    if (auto it = env_.ints.find(n.name); it != env_.ints.end()) old_int = it->second;
    if (auto it = env_.bools.find(n.name); it != env_.bools.end()) old_bool = it->second;
    const bool shadows = old_int || old_bool;
    if (shadows) clear_memo();
    env_.ints.erase(n.name);
    env_.bools.erase(n.name);
    if (n.value.type() == Type::Int) env_.ints[n.name] = ints(n.value);
    if (n.value.type() == Type::Bool) env_.bools[n.name] = bools(n.value);
    auto result = body();
    env_.ints.erase(n.name);
    env_.bools.erase(n.name);
    if (old_int) env_.ints[n.name] = *old_int;
    if (old_bool) env_.bools[n.name] = *old_bool;
    if (shadows) clear_memo();
    return result;
  }

  void clear_memo() {
    int_memo_.clear();
    bool_memo_.clear();
  }

  BoundsEnv env_;
  std::unordered_map<const ir::Node*, IntInterval> int_memo_;
  std::unordered_map<const ir::Node*, BoolInterval> bool_memo_;
};

}  // namespace

struct IntervalAnalysis::State {
  explicit State(const BoundsEnv& env) : walker(env) {}
  Walker walker;
  std::unordered_set<const ir::Node*> asked;
  std::vector<Expr> kept;  // every node asked about, alive (a node holds its children)
};

IntervalAnalysis::IntervalAnalysis(const BoundsEnv& env) : state_(std::make_unique<State>(env)) {}
IntervalAnalysis::~IntervalAnalysis() = default;

IntInterval IntervalAnalysis::of(const ir::Expr& e) {
  if (!e || e.type() != Type::Int) return iv_full();
  if (state_->asked.insert(e.get()).second) state_->kept.push_back(e);
  return state_->walker.ints(e);
}

IntInterval int_bounds(const ir::Expr& e, const BoundsEnv& env) { return Walker(env).ints(e); }

BoolInterval bool_bounds(const ir::Expr& e, const BoundsEnv& env) { return Walker(env).bools(e); }

IntRanges int_ranges(const ir::Expr& e, const BoundsEnv& env) {
  Walker w(env);
  w.collect(e);
  return w.int_memo();
}

}  // namespace flexjit::ir
