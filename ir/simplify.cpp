// The simplifier: a bottom-up mutator. Each visit simplifies the children first, then applies
// the rules for that node kind; a rule that builds a new node builds it through the same rule
// functions, so the result is simplified too. simplify() repeats the whole pass until nothing
// changes (bounded), which catches rewrites that a Let substitution enables.
//
// Soundness: every rule is exact under the interpreter's semantics for all operand values
// (Int rules modulo 2^64), except the range-guarded ones, which rely on the parameter and
// dtype ranges stated in simplify.hpp. No rule introduces an evaluation of a Load that was not
// going to happen: rules only drop subexpressions or keep them in equally guarded positions.
#include "ir/simplify.hpp"

#include <bit>
#include <limits>
#include <unordered_map>

#include "ir/bounds.hpp"
#include "ir/internal_error.hpp"
#include "ir/interpreter.hpp"
#include "ir/ir_visitor.hpp"

namespace flexjit::ir {
namespace {

using I64 = std::int64_t;
constexpr I64 kMin = std::numeric_limits<I64>::min();
constexpr I64 kMax = std::numeric_limits<I64>::max();
constexpr I64 kParamMax = (I64(1) << 31) - 1;  // parameters are positions: [0, 2^31)

I64 wrap_add(I64 a, I64 b) { return static_cast<I64>(std::uint64_t(a) + std::uint64_t(b)); }
I64 wrap_sub(I64 a, I64 b) { return static_cast<I64>(std::uint64_t(a) - std::uint64_t(b)); }
I64 wrap_mul(I64 a, I64 b) { return static_cast<I64>(std::uint64_t(a) * std::uint64_t(b)); }

// ---------------------------------------------------------------------------------------------
// Constants

bool is_const(const Expr& e) {
  const NodeKind k = e.kind();
  return k == NodeKind::IntImm || k == NodeKind::FloatImm || k == NodeKind::BoolImm;
}

std::optional<I64> const_int(const Expr& e) {
  if (const IntImm* i = e.as<IntImm>()) return i->value;
  return std::nullopt;
}

std::optional<bool> const_bool(const Expr& e) {
  if (const BoolImm* b = e.as<BoolImm>()) return b->value;
  return std::nullopt;
}

// Bit-exact: is_float(e, -0.0f) does not match +0.0.
bool is_float(const Expr& e, float v) {
  const FloatImm* f = e.as<FloatImm>();
  return f && std::bit_cast<std::uint32_t>(f->value) == std::bit_cast<std::uint32_t>(v);
}

Value value_of(const Expr& e) {
  if (const IntImm* i = e.as<IntImm>()) return Value::integer(i->value);
  if (const FloatImm* f = e.as<FloatImm>()) return Value::real(f->value);
  if (const BoolImm* b = e.as<BoolImm>()) return Value::boolean(b->value);
  internal_error("simplify: value_of a non-constant");
}

Expr make_const(const Value& v, SourcePos p) {
  switch (v.type) {
    case Type::Bool: return BoolImm::make(v.b, p);
    case Type::Int: return IntImm::make(v.i, p);
    case Type::Float: return FloatImm::make(v.f, p);
  }
  internal_error("simplify: bad value type");
}

// ---------------------------------------------------------------------------------------------
// Int ranges come from the one interval engine (bounds.hpp); the simplifier only asks whether an
// operation provably does not wrap.

using Range = IntInterval;

Range point(I64 v) { return iv_point(v); }

// Whether x + y (x - y) cannot wrap for any x in a, y in b.
bool add_fits(Range a, Range b) {
  I64 r;
  return !__builtin_add_overflow(a.lo, b.lo, &r) && !__builtin_add_overflow(a.hi, b.hi, &r);
}
bool sub_fits(Range a, Range b) {
  I64 r;
  return !__builtin_sub_overflow(a.lo, b.hi, &r) && !__builtin_sub_overflow(a.hi, b.lo, &r);
}

// What the simplifier may assume: Int mod parameters are positions in [0, 2^31).
BoundsEnv param_ranges() {
  const IntInterval position = iv_make(0, kParamMax);
  BoundsEnv env;
  env.set(kParamBatch, position).set(kParamHead, position).set(kParamQ, position).set(kParamKv, position);
  return env;
}

// ---------------------------------------------------------------------------------------------
// Substitution of a let-bound name (names are unique within a mod; an inner Let of the same
// name would shadow, so substitution stops there).

class SubstituteLet : public MemoizingMutator {
 public:
  SubstituteLet(const std::string& name, Expr value) : name_(name), value_(std::move(value)) {}

 protected:
  Expr visit(const Var* op, const Expr& e) override {
    return (op->var_kind == VarKind::Let && op->name == name_) ? value_ : e;
  }
  Expr visit(const Let* op, const Expr& e) override {
    if (op->name != name_) return IRMutator::visit(op, e);
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? e : Let::make(op->name, v, op->body, op->pos);
  }

 private:
  const std::string& name_;
  Expr value_;
};

class UsesLet : public OnceVisitor {
 public:
  explicit UsesLet(const std::string& name) : name_(name) {}
  bool found = false;

 protected:
  void visit(const Var* op, const Expr&) override {
    found = found || (op->var_kind == VarKind::Let && op->name == name_);
  }
  void visit(const Let* op, const Expr& e) override {
    walk(op->value);
    if (op->name != name_) walk(op->body);
  }

 private:
  const std::string& name_;
};

bool uses_let(const Expr& e, const std::string& name) {
  UsesLet u(name);
  u.walk(e);
  return u.found;
}

// ---------------------------------------------------------------------------------------------
// Comparison helpers

bool is_ordered(CompareOp op) { return op != CompareOp::EQ && op != CompareOp::NE; }

// The comparison's result when every value of a is related to every value of b the same way.
std::optional<bool> decide(CompareOp op, Range a, Range b) {
  switch (op) {
    case CompareOp::LT:
      if (a.hi < b.lo) return true;
      if (a.lo >= b.hi) return false;
      break;
    case CompareOp::LE:
      if (a.hi <= b.lo) return true;
      if (a.lo > b.hi) return false;
      break;
    case CompareOp::GT: return decide(CompareOp::LT, b, a);
    case CompareOp::GE: return decide(CompareOp::LE, b, a);
    case CompareOp::EQ:
      if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return true;
      if (a.hi < b.lo || b.hi < a.lo) return false;
      break;
    case CompareOp::NE:
      if (auto eq = decide(CompareOp::EQ, a, b)) return !*eq;
      break;
  }
  return std::nullopt;
}

bool commutes(BinaryOp op, Type t) {
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul: return true;  // IEEE + and * are commutative (NaN payloads aside)
    case BinaryOp::Min:
    case BinaryOp::Max: return t == Type::Int;  // fminf(-0, +0) may depend on operand order
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor: return true;
    default: return false;  // And / Or: the order is the short-circuit order
  }
}

// ---------------------------------------------------------------------------------------------
// The rules

class Simplifier : public MemoizingMutator {
 protected:
  Expr visit(const Load* op, const Expr& e) override { return IRMutator::visit(op, e); }

  Expr visit(const Cast* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (Expr r = cast_rules(op->type, v, op->pos)) return r;
    return v.same_as(op->value) ? e : Cast::make(op->type, v, op->pos);
  }

  Expr visit(const Unary* op, const Expr& e) override {
    Expr a = mutate(op->a);
    if (Expr r = unary_rules(op->op, a, op->pos)) return r;
    return a.same_as(op->a) ? e : Unary::make(op->op, a, op->pos);
  }

  Expr visit(const Binary* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr r = binary_rules(op->op, a, b, op->pos)) return r;
    return a.same_as(op->a) && b.same_as(op->b) ? e : Binary::make(op->op, a, b, op->pos);
  }

  Expr visit(const Compare* op, const Expr& e) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr r = compare_rules(op->op, a, b, op->pos)) return r;
    return a.same_as(op->a) && b.same_as(op->b) ? e : Compare::make(op->op, a, b, op->pos);
  }

  Expr visit(const Select* op, const Expr& e) override {
    Expr c = mutate(op->cond), t = mutate(op->t), f = mutate(op->f);
    if (Expr r = select_rules(c, t, f, op->pos)) return r;
    return c.same_as(op->cond) && t.same_as(op->t) && f.same_as(op->f) ? e : Select::make(c, t, f, op->pos);
  }

  Expr visit(const Call* op, const Expr& e) override {
    std::vector<Expr> args;
    bool changed = false;
    for (const Expr& a : op->args) {
      args.push_back(mutate(a));
      changed = changed || !args.back().same_as(a);
    }
    if (Expr r = call_rules(op->fn, args, op->pos)) return r;
    return changed ? Call::make(op->fn, args, op->pos) : e;
  }

  Expr visit(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value), b = mutate(op->body);
    // A constant or a variable costs nothing to repeat: substitute it and simplify again.
    if (is_const(v) || v.as<Var>()) return mutate(SubstituteLet(op->name, v).mutate(b));
    if (!uses_let(b, op->name)) return b;  // dead binding
    return v.same_as(op->value) && b.same_as(op->body) ? e : Let::make(op->name, v, b, op->pos);
  }

 private:
  // Simplified constructors: the rules, else a plain node.
  Expr cast(Type to, const Expr& v, SourcePos p) {
    Expr r = cast_rules(to, v, p);
    return r ? r : Cast::make(to, v, p);
  }
  Expr unary(UnaryOp op, const Expr& a, SourcePos p) {
    Expr r = unary_rules(op, a, p);
    return r ? r : Unary::make(op, a, p);
  }
  Expr binary(BinaryOp op, const Expr& a, const Expr& b, SourcePos p) {
    Expr r = binary_rules(op, a, b, p);
    return r ? r : Binary::make(op, a, b, p);
  }
  Expr compare(CompareOp op, const Expr& a, const Expr& b, SourcePos p) {
    Expr r = compare_rules(op, a, b, p);
    return r ? r : Compare::make(op, a, b, p);
  }
  Expr select(const Expr& c, const Expr& t, const Expr& f, SourcePos p) {
    Expr r = select_rules(c, t, f, p);
    return r ? r : Select::make(c, t, f, p);
  }
  Expr int_imm(I64 v, SourcePos p) { return IntImm::make(v, p); }

  // Each *_rules returns the simplified node, or an undefined Expr when no rule applies.

  Expr cast_rules(Type to, const Expr& v, SourcePos p) {
    const Type from = v.type();
    if (from == to) return v;
    if (is_const(v)) return make_const(eval_cast(to, value_of(v)), p);
    if (const Cast* inner = v.as<Cast>()) {
      const Type t0 = inner->value.type();
      // bool -> int / float -> anything equals the direct cast (0 / 1 survive every step);
      // int -> float -> bool is x != 0 (only 0 rounds to 0.0).
      if (t0 == Type::Bool || (t0 == Type::Int && from == Type::Float && to == Type::Bool))
        return cast(to, inner->value, p);
    }
    if (to == Type::Bool)  // bool(x) is x != 0 (NaN != 0.0 holds, as bool(nan) is true)
      return compare(CompareOp::NE, v, from == Type::Int ? int_imm(0, p) : FloatImm::make(0.0, p), p);
    return {};
  }

  Expr unary_rules(UnaryOp op, const Expr& a, SourcePos p) {
    if (is_const(a)) return make_const(eval_unary(op, value_of(a)), p);
    const Unary* ua = a.as<Unary>();
    if (ua && ua->op == op) return ua->a;  // -(-x), ~~x, !!x
    if (op == UnaryOp::Neg && a.type() == Type::Int)
      if (const Binary* s = a.as<Binary>(); s && s->op == BinaryOp::Sub) return binary(BinaryOp::Sub, s->b, s->a, p);
    if (op == UnaryOp::Not) {
      if (const Compare* c = a.as<Compare>()) {
        // !(a == b) is a != b for every type; the order flips need a total order (no NaN).
        if (!is_ordered(c->op) || c->a.type() != Type::Float) return compare(negate(c->op), c->a, c->b, p);
      }
    }
    return {};
  }

  Expr binary_rules(BinaryOp op, const Expr& a, const Expr& b, SourcePos p) {
    if (is_const(a) && is_const(b)) return make_const(eval_binary(op, value_of(a), value_of(b)), p);
    if (is_const(a) && commutes(op, a.type())) return binary(op, b, a, p);
    switch (a.type()) {
      case Type::Int: return int_binary(op, a, b, p);
      case Type::Float: return float_binary(op, a, b, p);
      case Type::Bool: return bool_binary(op, a, b, p);
    }
    return {};
  }

  // a op c1 for a Binary `e` of the given op with a constant right operand.
  static std::optional<std::pair<Expr, I64>> match_const_right(const Expr& e, BinaryOp op) {
    const Binary* x = e.as<Binary>();
    if (!x || x->op != op) return std::nullopt;
    if (auto c = const_int(x->b)) return std::make_pair(x->a, *c);
    return std::nullopt;
  }
  static std::optional<std::pair<I64, Expr>> match_const_left(const Expr& e, BinaryOp op) {
    const Binary* x = e.as<Binary>();
    if (!x || x->op != op) return std::nullopt;
    if (auto c = const_int(x->a)) return std::make_pair(*c, x->b);
    return std::nullopt;
  }

  Expr int_binary(BinaryOp op, const Expr& a, const Expr& b, SourcePos p) {
    const std::optional<I64> ca = const_int(a), cb = const_int(b);
    const Unary* neg_b = b.as<Unary>();
    if (neg_b && neg_b->op != UnaryOp::Neg) neg_b = nullptr;
    switch (op) {
      case BinaryOp::Add:
        if (cb == 0) return a;
        if (cb && *cb < 0 && *cb != kMin) return binary(BinaryOp::Sub, a, int_imm(-*cb, p), p);
        if (cb) {  // reassociate constants (exact modulo 2^64)
          if (auto m = match_const_right(a, BinaryOp::Add)) return binary(BinaryOp::Add, m->first, int_imm(wrap_add(m->second, *cb), p), p);
          if (auto m = match_const_right(a, BinaryOp::Sub)) return binary(BinaryOp::Add, m->first, int_imm(wrap_sub(*cb, m->second), p), p);
          if (auto m = match_const_left(a, BinaryOp::Sub)) return binary(BinaryOp::Sub, int_imm(wrap_add(m->first, *cb), p), m->second, p);
        }
        if (neg_b) return binary(BinaryOp::Sub, a, neg_b->a, p);
        if (const Unary* na = a.as<Unary>(); na && na->op == UnaryOp::Neg) return binary(BinaryOp::Sub, b, na->a, p);
        return {};
      case BinaryOp::Sub:
        if (cb == 0) return a;
        if (equal(a, b)) return int_imm(0, p);
        if (cb && *cb < 0 && *cb != kMin) return binary(BinaryOp::Add, a, int_imm(-*cb, p), p);
        if (cb) {
          if (auto m = match_const_right(a, BinaryOp::Add)) return binary(BinaryOp::Add, m->first, int_imm(wrap_sub(m->second, *cb), p), p);
          if (auto m = match_const_right(a, BinaryOp::Sub)) return binary(BinaryOp::Add, m->first, int_imm(wrap_sub(wrap_sub(0, m->second), *cb), p), p);
          if (auto m = match_const_left(a, BinaryOp::Sub)) return binary(BinaryOp::Sub, int_imm(wrap_sub(m->first, *cb), p), m->second, p);
        }
        if (ca) {
          if (*ca == 0) return unary(UnaryOp::Neg, b, p);
          if (auto m = match_const_right(b, BinaryOp::Add)) return binary(BinaryOp::Sub, int_imm(wrap_sub(*ca, m->second), p), m->first, p);
          if (auto m = match_const_right(b, BinaryOp::Sub)) return binary(BinaryOp::Sub, int_imm(wrap_add(*ca, m->second), p), m->first, p);
          if (auto m = match_const_left(b, BinaryOp::Sub)) return binary(BinaryOp::Add, m->second, int_imm(wrap_sub(*ca, m->first), p), p);
        }
        if (neg_b) return binary(BinaryOp::Add, a, neg_b->a, p);
        if (const Binary* s = a.as<Binary>(); s && s->op == BinaryOp::Add) {  // (x + y) - y, (x + y) - x
          if (equal(s->b, b)) return s->a;
          if (equal(s->a, b)) return s->b;
        }
        return {};
      case BinaryOp::Mul:
        if (cb == 0) return int_imm(0, p);
        if (cb == 1) return a;
        if (cb == -1) return unary(UnaryOp::Neg, a, p);
        if (cb)
          if (auto m = match_const_right(a, BinaryOp::Mul)) return binary(BinaryOp::Mul, m->first, int_imm(wrap_mul(m->second, *cb), p), p);
        return {};
      case BinaryOp::FloorDiv:
        if (cb == 0 || ca == 0) return int_imm(0, p);
        if (cb == 1) return a;
        if (cb == -1) return unary(UnaryOp::Neg, a, p);
        if (cb && *cb > 0) {
          // floor(floor(x / c1) / c2) == floor(x / (c1 c2)) for positive divisors.
          I64 prod;
          if (auto m = match_const_right(a, BinaryOp::FloorDiv); m && m->second > 0 && !__builtin_mul_overflow(m->second, *cb, &prod))
            return binary(BinaryOp::FloorDiv, m->first, int_imm(prod, p), p);
          const Range r = ranges_.of(a);
          if (r.lo >= 0 && r.hi < *cb) return int_imm(0, p);
        }
        return {};
      case BinaryOp::Mod:
        if (cb == 0 || cb == 1 || cb == -1 || ca == 0) return int_imm(0, p);
        if (cb) {
          if (auto m = match_const_right(a, BinaryOp::Mod); m && m->second == *cb) return a;  // (x % c) % c
          const Range r = ranges_.of(a);
          if (*cb > 0 && r.lo >= 0 && r.hi < *cb) return a;
        }
        return {};
      case BinaryOp::Pow:
        if (cb == 0 || ca == 1) return int_imm(1, p);
        if (cb == 1) return a;
        return {};
      case BinaryOp::Min:
      case BinaryOp::Max: {
        const bool is_min = op == BinaryOp::Min;
        if (equal(a, b)) return a;
        const Range ra = ranges_.of(a), rb = ranges_.of(b);
        if (is_min ? ra.hi <= rb.lo : ra.lo >= rb.hi) return a;
        if (is_min ? rb.hi <= ra.lo : rb.lo >= ra.hi) return b;
        if (cb)
          if (auto m = match_const_right(a, op))  // min(min(x, c1), c2) == min(x, min(c1, c2))
            return binary(op, m->first, int_imm(is_min ? std::min(m->second, *cb) : std::max(m->second, *cb), p), p);
        return {};
      }
      case BinaryOp::BitAnd:
        if (cb == 0) return int_imm(0, p);
        if (cb == -1 || equal(a, b)) return a;
        return {};
      case BinaryOp::BitOr:
        if (cb == -1) return int_imm(-1, p);
        if (cb == 0 || equal(a, b)) return a;
        return {};
      case BinaryOp::BitXor:
        if (cb == 0) return a;
        if (equal(a, b)) return int_imm(0, p);
        return {};
      case BinaryOp::Shl:
        if (cb == 0) return a;
        if (ca == 0 || (cb && (*cb < 0 || *cb > 63))) return int_imm(0, p);
        return {};
      case BinaryOp::Shr:
        if (cb == 0) return a;
        if (ca == 0 || ca == -1) return a;
        return {};
      default: return {};
    }
  }

  Expr float_binary(BinaryOp op, const Expr& a, const Expr& b, SourcePos p) {
    const Unary* neg_b = b.as<Unary>();
    if (neg_b && neg_b->op != UnaryOp::Neg) neg_b = nullptr;
    switch (op) {
      case BinaryOp::Add:
        if (is_float(b, -0.0f)) return a;                       // x + -0.0 == x, also for x == -0.0
        if (neg_b) return binary(BinaryOp::Sub, a, neg_b->a, p);  // IEEE defines x - y as x + (-y)
        return {};
      case BinaryOp::Sub:
        if (is_float(b, 0.0f)) return a;
        if (neg_b) return binary(BinaryOp::Add, a, neg_b->a, p);
        return {};
      case BinaryOp::Mul:
      case BinaryOp::Div:
        if (is_float(b, 1.0f)) return a;
        if (is_float(b, -1.0f)) return unary(UnaryOp::Neg, a, p);
        return {};
      case BinaryOp::Pow:  // powf(x, +-0) == 1 and powf(1, y) == 1 for every x, y, NaN included
        if (is_float(b, 0.0f) || is_float(b, -0.0f) || is_float(a, 1.0f)) return FloatImm::make(1.0, p);
        return {};
      case BinaryOp::Min:
      case BinaryOp::Max:
        if (equal(a, b)) return a;
        return {};
      default: return {};
    }
  }

  Expr bool_binary(BinaryOp op, const Expr& a, const Expr& b, SourcePos p) {
    const std::optional<bool> ca = const_bool(a), cb = const_bool(b);
    auto is_not_of = [](const Expr& x, const Expr& y) {  // x == !y
      const Unary* u = x.as<Unary>();
      return u && u->op == UnaryOp::Not && equal(u->a, y);
    };
    switch (op) {
      case BinaryOp::And:
        if (ca) return *ca ? b : a;  // false && x never evaluates x
        if (cb) return *cb ? a : b;  // dropping a is fine: it only loses a possible error
        if (equal(a, b)) return a;
        if (is_not_of(a, b) || is_not_of(b, a)) return BoolImm::make(false, p);
        return {};
      case BinaryOp::Or:
        if (ca) return *ca ? a : b;
        if (cb) return *cb ? b : a;
        if (equal(a, b)) return a;
        if (is_not_of(a, b) || is_not_of(b, a)) return BoolImm::make(true, p);
        return {};
      case BinaryOp::BitAnd:
        if (cb) return *cb ? a : b;
        if (equal(a, b)) return a;
        return {};
      case BinaryOp::BitOr:
        if (cb) return *cb ? b : a;
        if (equal(a, b)) return a;
        return {};
      case BinaryOp::BitXor:
        if (cb) return *cb ? unary(UnaryOp::Not, a, p) : a;
        if (equal(a, b)) return BoolImm::make(false, p);
        return {};
      default: return {};
    }
  }

  Expr compare_rules(CompareOp op, const Expr& a, const Expr& b, SourcePos p) {
    if (is_const(a) && is_const(b)) return make_const(eval_compare(op, value_of(a), value_of(b)), p);
    if (is_const(a)) return compare(mirror(op), b, a, p);
    const Type t = a.type();
    auto yes = [&] { return BoolImm::make(true, p); };
    auto no = [&] { return BoolImm::make(false, p); };
    if (equal(a, b)) {
      if (op == CompareOp::LT || op == CompareOp::GT) return no();  // also for NaN
      if (t != Type::Float) return (op == CompareOp::NE) ? no() : yes();
      return {};
    }
    if (t == Type::Bool) {
      const std::optional<bool> cb = const_bool(b);
      if (!cb) return {};
      // Bool orders false < true.
      switch (op) {
        case CompareOp::EQ: return *cb ? a : unary(UnaryOp::Not, a, p);
        case CompareOp::NE: return *cb ? unary(UnaryOp::Not, a, p) : a;
        case CompareOp::LT: return *cb ? unary(UnaryOp::Not, a, p) : no();
        case CompareOp::LE: return *cb ? yes() : unary(UnaryOp::Not, a, p);
        case CompareOp::GT: return *cb ? no() : a;
        case CompareOp::GE: return *cb ? a : yes();
      }
    }
    if (t != Type::Int) return {};
    if (auto d = decide(op, ranges_.of(a), ranges_.of(b))) return BoolImm::make(*d, p);
    if (const std::optional<I64> cb = const_int(b)) {
      // (x + c1) op c2 -> x op (c2 - c1): exact for == and != (adding c1 is a bijection mod
      // 2^64); for the ordered comparisons only when x + c1 provably does not wrap.
      for (BinaryOp kind : {BinaryOp::Add, BinaryOp::Sub}) {
        auto m = match_const_right(a, kind);
        if (!m) continue;
        const I64 c1 = kind == BinaryOp::Add ? m->second : wrap_sub(0, m->second);  // x + c1
        if (kind == BinaryOp::Sub && m->second == kMin) continue;
        if (!is_ordered(op)) return compare(op, m->first, int_imm(wrap_sub(*cb, c1), p), p);
        I64 bound;
        if (add_fits(ranges_.of(m->first), point(c1)) && !__builtin_sub_overflow(*cb, c1, &bound))
          return compare(op, m->first, int_imm(bound, p), p);
      }
      // (x - y) op 0 -> x op y, when x - y provably does not wrap (always for == and !=).
      if (*cb == 0)
        if (const Binary* s = a.as<Binary>(); s && s->op == BinaryOp::Sub) {
          if (!is_ordered(op) || sub_fits(ranges_.of(s->a), ranges_.of(s->b))) return compare(op, s->a, s->b, p);
        }
    }
    return {};
  }

  Expr select_rules(const Expr& c, const Expr& t, const Expr& f, SourcePos p) {
    if (const std::optional<bool> cc = const_bool(c)) return *cc ? t : f;
    if (equal(t, f)) return t;
    if (const Unary* n = c.as<Unary>(); n && n->op == UnaryOp::Not) return select(n->a, f, t, p);
    if (t.type() == Type::Bool) {
      // Select evaluates one arm and && / || evaluate their right side under the same
      // condition, so these are exact, loads included.
      const std::optional<bool> ct = const_bool(t), cf = const_bool(f);
      if (ct && cf) return *ct ? c : unary(UnaryOp::Not, c, p);
      if (ct) return *ct ? binary(BinaryOp::Or, c, f, p) : binary(BinaryOp::And, unary(UnaryOp::Not, c, p), f, p);
      if (cf) return *cf ? binary(BinaryOp::Or, unary(UnaryOp::Not, c, p), t, p) : binary(BinaryOp::And, c, t, p);
    }
    // select(c, select(c, x, y), z) -> select(c, x, z), and likewise in the false arm.
    if (const Select* st = t.as<Select>(); st && equal(st->cond, c)) return select(c, st->t, f, p);
    if (const Select* sf = f.as<Select>(); sf && equal(sf->cond, c)) return select(c, t, sf->f, p);
    if (t.type() == Type::Int)
      if (const Compare* cmp = c.as<Compare>()) {
        // select(x < y, x, y) is min(x, y); both operands were evaluated by the condition.
        const bool straight = equal(cmp->a, t) && equal(cmp->b, f);
        const bool crossed = equal(cmp->a, f) && equal(cmp->b, t);
        const bool less = cmp->op == CompareOp::LT || cmp->op == CompareOp::LE;
        const bool greater = cmp->op == CompareOp::GT || cmp->op == CompareOp::GE;
        if ((straight && less) || (crossed && greater)) return binary(BinaryOp::Min, t, f, p);
        if ((straight && greater) || (crossed && less)) return binary(BinaryOp::Max, t, f, p);
      }
    return {};
  }

  Expr call_rules(Intrinsic fn, const std::vector<Expr>& args, SourcePos p) {
    bool all_const = true;
    for (const Expr& a : args) all_const = all_const && is_const(a);
    if (all_const) {
      std::vector<Value> vs;
      for (const Expr& a : args) vs.push_back(value_of(a));
      return make_const(eval_call(fn, vs), p);
    }
    const Expr& x = args[0];
    const Call* inner = x.as<Call>();
    switch (fn) {
      case Intrinsic::Abs:
        if (inner && inner->fn == Intrinsic::Abs) return x;  // also for INT64_MIN (abs wraps to itself)
        if (x.type() == Type::Int && ranges_.of(x).lo >= 0) return x;
        return {};
      case Intrinsic::Floor:
      case Intrinsic::Ceil:
        // Integral values (NaN and inf included) are their own floor and ceil.
        if (inner && (inner->fn == Intrinsic::Floor || inner->fn == Intrinsic::Ceil)) return x;
        if (const Cast* c = x.as<Cast>(); c && c->value.type() != Type::Float) return x;
        return {};
      default: return {};
    }
  }

  IntervalAnalysis ranges_{param_ranges()};
};

}  // namespace

Expr simplify(const Expr& e) {
  internal_assert(e, "simplify: undefined expression");
  constexpr int kMaxRounds = 8;
  Expr cur = e;
  for (int round = 0; round < kMaxRounds; ++round) {
    Expr next = Simplifier().mutate(cur);
    if (next.same_as(cur) || equal(next, cur)) return next;
    cur = next;
  }
  return cur;
}

}  // namespace flexjit::ir
