#include "compiler/index_range.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "compiler/int_float_compare.hpp"
#include "ir/inline_lets.hpp"
#include "ir/ir_visitor.hpp"
#include "ir/simplify.hpp"

namespace flexjit::compiler {

namespace {

using ir::BinaryOp;
using ir::CompareOp;
using ir::Expr;
using ir::Type;

// ---------------------------------------------------------------------------------------------
// Building Int expressions with light constant folding (simplify() finishes the job). A null
// Expr stands for the constant 0 in sums.

std::optional<std::int64_t> imm(const Expr& e) {
  if (auto i = e.as<ir::IntImm>()) return i->value;
  return std::nullopt;
}

Expr mk_int(std::int64_t v) { return ir::IntImm::make(v); }

Expr mk_add(const Expr& a, const Expr& b) {
  if (!a) return b;
  if (!b) return a;
  auto x = imm(a), y = imm(b);
  std::int64_t r;
  if (x && y && !__builtin_add_overflow(*x, *y, &r)) return mk_int(r);
  if (y && *y == 0) return a;
  if (x && *x == 0) return b;
  return ir::Binary::make(BinaryOp::Add, a, b);
}

Expr mk_neg(const Expr& a) {
  if (!a) return a;
  if (auto x = imm(a); x && *x != INT64_MIN) return mk_int(-*x);
  return ir::Unary::make(ir::UnaryOp::Neg, a);
}

Expr mk_sub(const Expr& a, const Expr& b) {
  if (!b) return a;
  if (!a) return mk_neg(b);
  auto x = imm(a), y = imm(b);
  std::int64_t r;
  if (x && y && !__builtin_sub_overflow(*x, *y, &r)) return mk_int(r);
  if (y && *y == 0) return a;
  return ir::Binary::make(BinaryOp::Sub, a, b);
}

Expr mk_scale(const Expr& a, std::int64_t c) {
  if (!a || c == 1) return a;
  if (c == 0) return Expr();
  if (c == -1) return mk_neg(a);
  std::int64_t r;
  if (auto x = imm(a); x && !__builtin_mul_overflow(*x, c, &r)) return mk_int(r);
  return ir::Binary::make(BinaryOp::Mul, a, mk_int(c));
}

Expr mk_minmax(BinaryOp op, const Expr& a, const Expr& b) {
  if (ir::equal(a, b)) return a;
  auto x = imm(a), y = imm(b);
  if (x && y) return mk_int(op == BinaryOp::Min ? std::min(*x, *y) : std::max(*x, *y));
  return ir::Binary::make(op, a, b);
}

Expr or_zero(const Expr& e) { return e ? e : mk_int(0); }

// ---------------------------------------------------------------------------------------------
// Ranges of the unknown: [lo, hi) with a null end meaning unbounded on that side.

struct Range {
  bool empty = false;  // the mask is provably false
  Expr lo, hi;
};

Range unbounded() { return Range{}; }
Range nothing() { return Range{true, {}, {}}; }

Range meet(const Range& a, const Range& b) {  // a && b
  if (a.empty || b.empty) return nothing();
  Range r;
  r.lo = !a.lo ? b.lo : !b.lo ? a.lo : mk_minmax(BinaryOp::Max, a.lo, b.lo);
  r.hi = !a.hi ? b.hi : !b.hi ? a.hi : mk_minmax(BinaryOp::Min, a.hi, b.hi);
  return r;
}

Range hull(const Range& a, const Range& b) {  // a || b
  if (a.empty) return b;
  if (b.empty) return a;
  Range r;
  if (a.lo && b.lo) r.lo = mk_minmax(BinaryOp::Min, a.lo, b.lo);
  if (a.hi && b.hi) r.hi = mk_minmax(BinaryOp::Max, a.hi, b.hi);
  return r;
}



// ---------------------------------------------------------------------------------------------
// The solver. It works on the mask with its lets substituted (ir::inline_lets), so a helper
// variable, a helper function and a subexpression CSE shared all look like the expression
// written out. That is a DAG: every walk below is memoized per node, so the solver stays linear
// in the shared graph. The memo tables hold the key node, so its address is never reused.
//
// The comments below speak of the forward problem, the keys (kv, the unknown) of a tile of
// queries (q, the tile index); for q_range the two trade places and nothing else changes.

enum class Mono { Const, Inc, Dec, Unknown };

Mono flip(Mono m) { return m == Mono::Inc ? Mono::Dec : m == Mono::Dec ? Mono::Inc : m; }

Mono combine(Mono a, Mono b) {  // of a sum (or min / max) of the two
  if (a == Mono::Const) return b;
  if (b == Mono::Const) return a;
  return a == b ? a : Mono::Unknown;
}

bool is_param(const Expr& e, const char* name) {
  auto v = e.as<ir::Var>();
  return v && v->var_kind == ir::VarKind::Param && v->name == name;
}

template <class V>
using Memo = std::unordered_map<const ir::Node*, std::pair<Expr, V>>;

// A memoized predicate "e mentions the parameter `name`".
class Mentions {
 public:
  explicit Mentions(const char* name) : name_(name) {}
  bool operator()(const Expr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
    bool r = is_param(e, name_);
    for (const Expr& k : ir::children(e)) r = r || (*this)(k);
    memo_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

 private:
  const char* name_;
  Memo<bool> memo_;
};

// e with the tile index replaced by one expression.
class SubstTileIndex : public ir::MemoizingMutator {
 public:
  SubstTileIndex(const char* name, Expr to) : name_(name), to_(std::move(to)) {}

 protected:
  Expr visit(const ir::Var*, const Expr& e) override { return is_param(e, name_) ? to_ : e; }

 private:
  const char* name_;
  Expr to_;
};

// An Int expression as coef * unknown + rest, rest free of the unknown (null: 0).
struct Linear {
  std::int64_t coef = 0;
  Expr rest;
};

class Solver {
 public:
  Solver(const RangeAxes& axes, Expr tile_lo, Expr tile_hi, Expr extent)
      : unknown_(axes.unknown),
        tile_index_(axes.tile_index),
        extent_(std::move(extent)),
        subst_lo_(axes.tile_index, std::move(tile_lo)),
        subst_hi_(axes.tile_index, std::move(tile_hi)),
        mentions_tile_(axes.tile_index),
        mentions_unknown_(axes.unknown) {}

  // The kv range where e (Bool, Let-free) is true, or false when `neg`.
  Range solve(const Expr& e, bool neg) {
    auto& memo = solved_[neg];
    if (auto it = memo.find(e.get()); it != memo.end()) return it->second.second;
    Range r = solve_node(e, neg);
    memo.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

 private:
  Range solve_node(const Expr& e, bool neg) {
    if (auto n = e.as<ir::BoolImm>()) return n->value != neg ? unbounded() : nothing();
    if (auto n = e.as<ir::Unary>(); n && n->op == ir::UnaryOp::Not) return solve(n->a, !neg);
    if (auto n = e.as<ir::Binary>()) {
      const bool is_and = n->op == BinaryOp::And || n->op == BinaryOp::BitAnd;
      const bool is_or = n->op == BinaryOp::Or || n->op == BinaryOp::BitOr;
      if (!is_and && !is_or) return unbounded();  // ^ on Bool
      Range a = solve(n->a, neg), b = solve(n->b, neg);
      return is_and != neg ? meet(a, b) : hull(a, b);  // De Morgan under `neg`
    }
    if (auto n = e.as<ir::Compare>()) {
      if (n->a.type() == Type::Float) return float_atom(n->op, neg, n->a, n->b);
      if (n->a.type() != Type::Int) return unbounded();
      const CompareOp op = neg ? negate(n->op) : n->op;
      if (!mentions_unknown_(n->a) && !mentions_unknown_(n->b)) return unknown_free_atom(op, n->a, n->b);
      return atom(op, n->a, n->b);
    }
    if (auto n = e.as<ir::Cast>()) {  // bool(x) is x != 0
      if (n->value.type() != Type::Int) return unbounded();
      return solve_compare(neg ? CompareOp::EQ : CompareOp::NE, n->value, mk_int(0));
    }
    if (auto n = e.as<ir::Select>()) {  // (c && t) || (!c && f)
      return hull(meet(solve(n->cond, false), solve(n->t, neg)), meet(solve(n->cond, true), solve(n->f, neg)));
    }
    // A bool runtime scalar, or a bool element read per (b, h) (`bidirectional[h]`).
    const bool per_tile_bool = e.as<ir::Var>() ? e.as<ir::Var>()->var_kind == ir::VarKind::Scalar
                                               : e.as<ir::Load>() && !mentions_tile_(e) && invariant(e);
    if (per_tile_bool) return all_or_nothing(neg ? ir::Unary::make(ir::UnaryOp::Not, e) : e);
    return unbounded();  // Bool loads at query or key positions
  }

  Range solve_compare(CompareOp op, const Expr& a, const Expr& b) {
    if (!mentions_unknown_(a) && !mentions_unknown_(b)) return unknown_free_atom(op, a, b);
    return atom(op, a, b);
  }

  // ---- Conditions that do not mention kv_idx: every key or none, per query tile.

  // Every key where g (Bool, evaluated per tile) holds, none where it does not.
  Range all_or_nothing(const Expr& g) {
    const Expr s = ir::simplify(g);
    if (auto k = s.as<ir::BoolImm>()) return k->value ? unbounded() : nothing();
    return Range{false, ir::Select::make(s, mk_int(0), extent_), ir::Select::make(s, extent_, mk_int(0))};
  }

  // r where g holds, every key where it does not (g: a condition under which r is exact).
  Range guarded(const Expr& g, const Range& r) {
    const Expr s = ir::simplify(g);
    if (auto k = s.as<ir::BoolImm>()) return k->value ? r : unbounded();
    if (r.empty) return Range{false, ir::Select::make(s, extent_, mk_int(0)), ir::Select::make(s, mk_int(0), extent_)};
    Range out;
    if (r.lo) out.lo = ir::Select::make(s, r.lo, mk_int(0));
    if (r.hi) out.hi = ir::Select::make(s, r.hi, extent_);
    return out;
  }

  // a op b with neither side reading kv: true for every key of a query tile or for none. Where
  // it is false for every query of the tile (its sides' extremes over the tile say so), the rest
  // of the mask decides: `(q_idx < 5) | (q_idx >= kv_idx)` is causal for tiles past row 4.
  Range unknown_free_atom(CompareOp op, const Expr& a, const Expr& b) {
    auto ia = invariant(a), ib = invariant(b);
    if (!ia || !ib) return unbounded();  // reads a tensor at a query position: not one value per tile
    const Expr a_min = extreme(*ia, false), a_max = extreme(*ia, true);
    const Expr b_min = extreme(*ib, false), b_max = extreme(*ib, true);
    if (!a_min || !a_max || !b_min || !b_max) return unbounded();
    auto c = [](CompareOp o, const Expr& x, const Expr& y) { return ir::Compare::make(o, x, y); };
    auto both = [](const Expr& x, const Expr& y) { return ir::Binary::make(BinaryOp::And, x, y); };
    switch (op) {  // whether some query of the tile may satisfy it
      case CompareOp::LT: return all_or_nothing(c(CompareOp::LT, a_min, b_max));
      case CompareOp::LE: return all_or_nothing(c(CompareOp::LE, a_min, b_max));
      case CompareOp::GT: return all_or_nothing(c(CompareOp::GT, a_max, b_min));
      case CompareOp::GE: return all_or_nothing(c(CompareOp::GE, a_max, b_min));
      case CompareOp::EQ:
        return all_or_nothing(both(c(CompareOp::LE, a_min, b_max), c(CompareOp::GE, a_max, b_min)));
      case CompareOp::NE: {  // false for the whole tile only when both sides are one same value
        const Expr same = both(both(c(CompareOp::EQ, a_min, a_max), c(CompareOp::EQ, b_min, b_max)),
                               c(CompareOp::EQ, a_min, b_min));
        return all_or_nothing(ir::Unary::make(ir::UnaryOp::Not, same));
      }
    }
    return unbounded();
  }

  // ---- Ints compared with floats.

  static Expr int_of_float(const Expr& e) {  // x for float(x), x an Int
    auto c = e.as<ir::Cast>();
    return c && c->value.type() == Type::Int ? c->value : Expr();
  }

  // `a op b` (or its negation) with Float operands. An Int converted to float against a
  // constant is an exact condition on the Int (compiler/int_float_compare.hpp). Two converted
  // Ints compare as the Ints do when one of them, y, has |y| < 2^24 (it and its neighbours
  // convert exactly); that is checked per tile, and where it fails the atom bounds nothing.
  Range float_atom(CompareOp op, bool neg, const Expr& a, const Expr& b) {
    const Expr x = int_of_float(a), y = int_of_float(b);
    const auto* fa = a.as<ir::FloatImm>();
    const auto* fb = b.as<ir::FloatImm>();
    if (x && fb) return int_against_constant(op, neg, x, fb->value);
    if (y && fa) return int_against_constant(mirror(op), neg, y, fa->value);
    if (x && !y) return int_against_tile_float(op, neg, x, b);
    if (y && !x) return int_against_tile_float(mirror(op), neg, y, a);
    if (!x || !y) return unbounded();
    const CompareOp o = neg ? negate(op) : op;  // converted Ints are never NaN
    const Expr exact_side = !mentions_unknown_(y) ? y : !mentions_unknown_(x) ? x : Expr();
    if (!exact_side) return unbounded();
    const Expr g = exactly_convertible(exact_side);
    if (!g) return unbounded();
    return guarded(g, solve_compare(o, x, y));
  }

  Range int_against_constant(CompareOp op, bool neg, const Expr& x, float f) {
    if (std::isnan(f)) return (op == CompareOp::NE) != neg ? unbounded() : nothing();
    const std::optional<IntSolutions> s = int_solutions(neg ? negate(op) : op, f);
    if (!s) return unbounded();
    if (s->never) return nothing();
    Range r;
    if (s->lo) r = meet(r, solve_compare(CompareOp::GE, x, mk_int(*s->lo)));
    if (s->hi) r = meet(r, solve_compare(CompareOp::LT, x, mk_int(*s->hi)));
    return r;
  }

  // float(x) op f, f a float known per tile (a float scalar, an element read per (b, h), float(w) *
  // 1.0): where |f| <= kExactIntInFloat, floor(f) and ceil(f) convert exactly and so do their
  // neighbours, and the conversion is monotone, so the atom holds for the Ints on one side of
  // them. Elsewhere (NaN, inf, larger) every key. f is never NaN where the guard holds, so the
  // atom's negation is the negated comparison there.
  //
  // f may also depend on the query when it is monotone in q_idx (`kv_idx < q_idx * 0.5 + 3.0`,
  // `kv_idx > q_idx - w`): the guard then asks for both ends of the tile, and the roundings of f
  // count as monotone (see guarded_roundings_), so the bounds are taken at the tile's ends.
  Range int_against_tile_float(CompareOp op, bool neg, const Expr& x, const Expr& f) {
    if (!invariant(f)) return unbounded();
    const bool per_query = mentions_tile_(f);
    if (per_query && mono(f) == Mono::Unknown) return unbounded();
    const Expr ceil = guarded_rounding(ir::Intrinsic::CeilToInt, f);
    const Expr floor = guarded_rounding(ir::Intrinsic::FloorToInt, f);
    Range r;
    switch (neg ? negate(op) : op) {
      case CompareOp::LT: r = solve_compare(CompareOp::LT, x, ceil); break;
      case CompareOp::LE: r = solve_compare(CompareOp::LE, x, floor); break;
      case CompareOp::GT: r = solve_compare(CompareOp::GT, x, floor); break;
      case CompareOp::GE: r = solve_compare(CompareOp::GE, x, ceil); break;
      case CompareOp::EQ: r = meet(solve_compare(CompareOp::GE, x, ceil), solve_compare(CompareOp::LE, x, floor)); break;
      case CompareOp::NE: return unbounded();
    }
    if (!per_query) return guarded(small_float(f), r);
    return guarded(ir::Binary::make(BinaryOp::And, small_float(subst_lo_.mutate(f)), small_float(subst_hi_.mutate(f))), r);
  }

  // |f| <= kExactIntInFloat (false for NaN).
  static Expr small_float(const Expr& f) {
    const double limit = static_cast<double>(kExactIntInFloat);
    return ir::Binary::make(BinaryOp::And, ir::Compare::make(CompareOp::GE, f, ir::FloatImm::make(-limit)),
                            ir::Compare::make(CompareOp::LE, f, ir::FloatImm::make(limit)));
  }

  // floor / ceil of f, used only where a guard holds f within +-kExactIntInFloat at both ends of
  // the tile. There every f(q) of the tile is finite and between the ends (float_mono), so the
  // rounding is monotone in q_idx too. A rounding the program wrote itself is not: it may meet NaN.
  Expr guarded_rounding(ir::Intrinsic fn, const Expr& f) {
    Expr r = ir::Call::make(fn, {f});
    guarded_roundings_.emplace(r.get(), r);
    return r;
  }

  // Whether |y| <= kExactIntInFloat for every query of the tile (null when that cannot be told).
  Expr exactly_convertible(const Expr& y) {
    auto iy = invariant(y);
    if (!iy) return Expr();
    const Expr lo = extreme(*iy, false), hi = extreme(*iy, true);
    if (!lo || !hi) return Expr();
    return ir::Binary::make(BinaryOp::And, ir::Compare::make(CompareOp::GE, lo, mk_int(-kExactIntInFloat)),
                            ir::Compare::make(CompareOp::LE, hi, mk_int(kExactIntInFloat)));
  }

  // ---- Atoms that mention kv_idx.

  // kv-range of `a op b` (Int operands).
  Range atom(CompareOp op, const Expr& a, const Expr& b) {
    // abs(x) <= w  <=>  x <= w && -x <= w (also under wrap-around: abs(INT64_MIN) is INT64_MIN,
    // and so is -INT64_MIN). Two-sided windows and 2D neighbourhoods are written this way.
    if ((op == CompareOp::GE || op == CompareOp::GT) && is_int_abs(b)) return atom(mirror(op), b, a);
    if ((op == CompareOp::LE || op == CompareOp::LT) && is_int_abs(a)) {
      const Expr& x = a.as<ir::Call>()->args[0];
      return meet(atom(op, x, b), atom(op, mk_neg(x), b));
    }
    if (auto r = floordiv_atom(op, a, b)) return *r;
    auto la = linear(a), lb = linear(b);
    if (!la || !lb) return blocked_atom(op, a, b);
    // coef * kv + rest op 0
    const std::int64_t coef = la->coef - lb->coef;
    Expr rest = mk_sub(la->rest, lb->rest);
    if (coef == 1) return solved(op, mk_neg(rest));        // kv op -rest
    if (coef == -1) return solved(mirror(op), rest);       // rest op kv
    return unbounded();  // kv absent, or a coefficient we do not divide by
  }

  // An atom linear in kv // C rather than in kv (2D neighbourhoods: q // W - kv // W <= R):
  // solved for u = kv // C as atom() solves for kv, then turned into bounds on kv itself.
  Range blocked_atom(CompareOp op, const Expr& a, const Expr& b) {
    const std::optional<std::int64_t> c = unknown_block(a) ? unknown_block(a) : unknown_block(b);
    if (!c) return unbounded();
    const std::int64_t outer = unit_block_;
    unit_block_ = *c;
    auto la = linear(a), lb = linear(b);
    unit_block_ = outer;
    if (!la || !lb) return unbounded();
    const std::int64_t coef = la->coef - lb->coef;  // coef * u + rest op 0
    Expr rest = mk_sub(la->rest, lb->rest);
    const Expr kv = ir::Var::make(unknown_, Type::Int, ir::VarKind::Param);
    if (coef == 1) return floordiv_atom_on(op, kv, *c, or_zero(mk_neg(rest)));   // u op -rest
    if (coef == -1) return floordiv_atom_on(mirror(op), kv, *c, or_zero(rest));  // rest op u
    return unbounded();
  }

  // C when e contains kv // C (C > 0 constant).
  std::optional<std::int64_t> unknown_block(const Expr& e) {
    if (auto it = blocks_.find(e.get()); it != blocks_.end()) return it->second.second;
    std::optional<std::int64_t> r = block_of(e);
    for (const Expr& k : ir::children(e))
      if (!r) r = unknown_block(k);
    blocks_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  std::optional<std::int64_t> block_of(const Expr& e) const {
    auto n = e.as<ir::Binary>();
    if (!n || n->op != BinaryOp::FloorDiv) return std::nullopt;
    auto c = imm(n->b);
    if (!is_param(n->a, unknown_) || !c || *c <= 0) return std::nullopt;
    return c;
  }

  static bool is_int_abs(const Expr& e) {
    auto c = e.as<ir::Call>();
    return c && c->fn == ir::Intrinsic::Abs && c->args.size() == 1 && c->args[0].type() == Type::Int;
  }

  // kv op p, p free of kv: the bounds over every q of the tile.
  Range solved(CompareOp op, const Expr& p) {
    Range r;
    auto lo = [&] { return extreme(p, false); };
    auto hi = [&] { return extreme(p, true); };
    auto plus1 = [](const Expr& e) { return e ? mk_add(e, mk_int(1)) : e; };
    switch (op) {
      case CompareOp::LT: r.hi = hi(); break;
      case CompareOp::LE: r.hi = plus1(hi()); break;
      case CompareOp::GT: r.lo = plus1(lo()); break;
      case CompareOp::GE: r.lo = lo(); break;
      case CompareOp::EQ:
        r.lo = lo();
        r.hi = plus1(hi());
        break;
      case CompareOp::NE: break;
    }
    return r;
  }

  // The max (or min) of p over q_idx in [q_lo, q_hi]; null when p is not monotone in q.
  Expr extreme(const Expr& p, bool max) {
    const Expr p0 = or_zero(p);
    switch (mono(p0)) {
      case Mono::Const: return p0;
      case Mono::Inc: return (max ? subst_hi_ : subst_lo_).mutate(p0);
      case Mono::Dec: return (max ? subst_lo_ : subst_hi_).mutate(p0);
      case Mono::Unknown: return Expr();
    }
    return Expr();
  }

  // Monotonicity in q_idx of a kv-free expression.
  Mono mono(const Expr& e) {
    if (auto it = monos_.find(e.get()); it != monos_.end()) return it->second.second;
    const Mono m = mono_node(e);
    monos_.emplace(e.get(), std::make_pair(e, m));
    return m;
  }

  Mono mono_node(const Expr& e) {
    if (!mentions_tile_(e)) return Mono::Const;
    if (is_param(e, tile_index_)) return Mono::Inc;
    if (e.type() == Type::Float) return float_mono(e);
    if (guarded_roundings_.count(e.get())) return mono(e.as<ir::Call>()->args[0]);
    if (auto u = e.as<ir::Unary>(); u && u->op == ir::UnaryOp::Neg) return flip(mono(u->a));
    auto n = e.as<ir::Binary>();
    if (!n) return Mono::Unknown;
    switch (n->op) {
      case BinaryOp::Add:
      case BinaryOp::Min:
      case BinaryOp::Max: return combine(mono(n->a), mono(n->b));
      case BinaryOp::Sub: return combine(mono(n->a), flip(mono(n->b)));
      case BinaryOp::Mul: {
        auto c = imm(n->b) ? imm(n->b) : imm(n->a);
        const Expr& other = imm(n->b) ? n->a : n->b;
        if (!c) return Mono::Unknown;
        return *c == 0 ? Mono::Const : *c > 0 ? mono(other) : flip(mono(other));
      }
      case BinaryOp::FloorDiv: {  // floor(x / c) keeps x's direction for c > 0
        auto c = imm(n->b);
        if (!c || *c == 0) return Mono::Unknown;
        return *c > 0 ? mono(n->a) : flip(mono(n->a));
      }
      default: return Mono::Unknown;
    }
  }

  // Monotonicity in q_idx of a Float expression built from Ints converted to float, + and -, and
  // * or / by a finite nonzero constant. Each of those, rounded, is monotone in every operand, and
  // where the expression is finite at both ends of a query tile so is every operand (a sum or
  // product is finite only when its operands are), so by induction every value over the tile is
  // finite and lies between the two ends. min / max (fminf skips a NaN) and the rest: Unknown.
  Mono float_mono(const Expr& e) {
    if (auto c = e.as<ir::Cast>()) return c->value.type() == Type::Int ? mono(c->value) : Mono::Unknown;
    if (auto u = e.as<ir::Unary>(); u && u->op == ir::UnaryOp::Neg) return flip(mono(u->a));
    auto n = e.as<ir::Binary>();
    if (!n) return Mono::Unknown;
    auto factor = [](const Expr& k) -> std::optional<float> {
      auto f = k.as<ir::FloatImm>();
      if (!f || !std::isfinite(f->value) || f->value == 0.0f) return std::nullopt;
      return f->value;
    };
    switch (n->op) {
      case BinaryOp::Add: return combine(mono(n->a), mono(n->b));
      case BinaryOp::Sub: return combine(mono(n->a), flip(mono(n->b)));
      case BinaryOp::Mul: {
        auto c = factor(n->b) ? factor(n->b) : factor(n->a);
        if (!c) return Mono::Unknown;
        const Mono m = mono(factor(n->b) ? n->a : n->b);
        return *c > 0 ? m : flip(m);
      }
      case BinaryOp::Div: {
        auto c = factor(n->b);
        if (!c) return Mono::Unknown;
        return *c > 0 ? mono(n->a) : flip(mono(n->a));
      }
      default: return Mono::Unknown;
    }
  }

  // x // C op y, C > 0 constant, x holding kv and y not: an atom on x itself (chunked masks).
  std::optional<Range> floordiv_atom(CompareOp op, const Expr& a, const Expr& b) {
    auto split = [](const Expr& e) -> std::optional<std::pair<Expr, std::int64_t>> {
      auto n = e.as<ir::Binary>();
      if (!n || n->op != BinaryOp::FloorDiv || n->a.type() != Type::Int) return std::nullopt;
      auto c = imm(n->b);
      if (!c || *c <= 0) return std::nullopt;
      return std::make_pair(n->a, *c);
    };
    if (auto fa = split(a); fa && invariant(b)) return floordiv_atom_on(op, fa->first, fa->second, b);
    if (auto fb = split(b); fb && invariant(a)) return floordiv_atom_on(mirror(op), fb->first, fb->second, a);
    return std::nullopt;
  }

  Range floordiv_atom_on(CompareOp op, const Expr& x, std::int64_t c, const Expr& y) {
    const Expr cy = ir::Binary::make(BinaryOp::Mul, y, mk_int(c));
    switch (op) {
      case CompareOp::LT: return atom(CompareOp::LT, x, cy);                            // x < c*y
      case CompareOp::LE: return atom(CompareOp::LE, x, mk_add(cy, mk_int(c - 1)));    // x <= c*y + c-1
      case CompareOp::GT: return atom(CompareOp::GE, x, mk_add(cy, mk_int(c)));        // x >= c*y + c
      case CompareOp::GE: return atom(CompareOp::GE, x, cy);                            // x >= c*y
      case CompareOp::EQ:
        return meet(atom(CompareOp::GE, x, cy), atom(CompareOp::LE, x, mk_add(cy, mk_int(c - 1))));
      case CompareOp::NE: return unbounded();
    }
    return unbounded();
  }

  // e as coef * kv + rest, if it has that shape.
  std::optional<Linear> linear(const Expr& e) {
    auto& memo = linears_[unit_block_];
    if (auto it = memo.find(e.get()); it != memo.end()) return it->second.second;
    std::optional<Linear> r = linear_node(e);
    linears_[unit_block_].emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  std::optional<Linear> linear_node(const Expr& e) {
    // In blocked_atom the unknown is kv // unit_block_ instead of kv.
    if (unit_block_ != 0) {
      if (auto c = block_of(e); c && *c == unit_block_) return Linear{1, Expr()};
      if (is_param(e, unknown_)) return std::nullopt;
    }
    if (is_param(e, unknown_)) return Linear{1, Expr()};
    if (auto u = e.as<ir::Unary>(); u && u->op == ir::UnaryOp::Neg) {
      auto a = linear(u->a);
      if (!a) return std::nullopt;
      return Linear{-a->coef, mk_neg(a->rest)};
    }
    if (auto n = e.as<ir::Binary>()) {
      if (n->op == BinaryOp::Add || n->op == BinaryOp::Sub) {
        auto a = linear(n->a), b = linear(n->b);
        std::int64_t coef;
        if (!a || !b) return std::nullopt;
        if (n->op == BinaryOp::Add) {
          if (__builtin_add_overflow(a->coef, b->coef, &coef)) return std::nullopt;
          return Linear{coef, mk_add(a->rest, b->rest)};
        }
        if (__builtin_sub_overflow(a->coef, b->coef, &coef)) return std::nullopt;
        return Linear{coef, mk_sub(a->rest, b->rest)};
      }
      if (n->op == BinaryOp::Mul) {
        auto a = linear(n->a), b = linear(n->b);
        if (!a || !b) return std::nullopt;
        if (a->coef == 0 && b->coef == 0)
          return Linear{0, ir::Binary::make(BinaryOp::Mul, or_zero(a->rest), or_zero(b->rest))};
        // kv * c: only a constant factor keeps it linear.
        const Linear& var = a->coef != 0 ? *a : *b;
        const Linear& other = a->coef != 0 ? *b : *a;
        auto c = imm(or_zero(other.rest));
        std::int64_t coef;
        if (!c || other.coef != 0 || __builtin_mul_overflow(var.coef, *c, &coef)) return std::nullopt;
        return Linear{coef, mk_scale(var.rest, *c)};
      }
    }
    if (auto inv = invariant(e)) return Linear{0, *inv};
    return std::nullopt;
  }

  // e itself when it reads neither kv_idx nor a tensor at a query position: an expression the
  // kernel may evaluate unconditionally per tile. Its loads are indexed by b, h, runtime scalars
  // and constants (prefix_len[b], a rank-0 tensor), so they are in range by the caller's contract
  // (docs/language.md: every index the mods can compute for the call's b and h).
  std::optional<Expr> invariant(const Expr& e) {
    if (auto it = invariants_.find(e.get()); it != invariants_.end()) return it->second.second;
    std::optional<Expr> r;
    if (!mentions_unknown_(e) && !reads_at_tile_index(e)) r = e;
    invariants_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  bool reads_at_tile_index(const Expr& e) {
    if (auto it = loads_.find(e.get()); it != loads_.end()) return it->second.second;
    bool r = e.as<ir::Load>() && mentions_tile_(e);
    for (const Expr& k : ir::children(e)) r = r || reads_at_tile_index(k);
    loads_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  const char* unknown_;
  const char* tile_index_;
  Expr extent_;
  SubstTileIndex subst_lo_, subst_hi_;
  Mentions mentions_tile_, mentions_unknown_;
  std::unordered_map<bool, Memo<Range>> solved_;
  std::unordered_map<std::int64_t, Memo<std::optional<Linear>>> linears_;
  Memo<std::optional<Expr>> invariants_;
  Memo<std::optional<std::int64_t>> blocks_;
  Memo<Mono> monos_;
  Memo<bool> loads_;
  std::unordered_map<const ir::Node*, Expr> guarded_roundings_;  // holds the node: its address stays unique
  std::int64_t unit_block_ = 0;  // nonzero while solving for kv // unit_block_
};

Expr tile_var(const char* name) { return ir::Var::make(name, Type::Int, ir::VarKind::Tile); }

IndexRange full_range(const RangeAxes& axes) { return IndexRange{mk_int(0), tile_var(axes.extent)}; }

}  // namespace

IndexRange index_range(const ir::Program& p, const RangeAxes& axes) {
  if (!p.mask_mod) return full_range(axes);

  const Expr extent = tile_var(axes.extent);
  Solver solver(axes, tile_var(axes.tile_lo), tile_var(axes.tile_hi), extent);
  const Range r = solver.solve(ir::inline_lets(p.mask_mod->body), false);
  if (r.empty) return IndexRange{mk_int(0), mk_int(0), mk_int(0), mk_int(0)};

  // Clamp into [0, extent] so the kernel's int arithmetic never sees a wild value.
  IndexRange out = full_range(axes);
  if (r.lo) {
    out.unclipped_lo = ir::simplify(r.lo);
    out.lo = ir::simplify(mk_minmax(BinaryOp::Min, mk_minmax(BinaryOp::Max, r.lo, mk_int(0)), extent));
  }
  if (r.hi) {
    out.unclipped_hi = ir::simplify(r.hi);
    out.hi = ir::simplify(mk_minmax(BinaryOp::Max, mk_minmax(BinaryOp::Min, r.hi, extent), mk_int(0)));
  }
  return out;
}

bool index_range_is_full(const IndexRange& r, const RangeAxes& axes) {
  auto lo = imm(r.lo);
  auto hi = r.hi.as<ir::Var>();
  return lo && *lo == 0 && hi && hi->var_kind == ir::VarKind::Tile && hi->name == axes.extent;
}

}  // namespace flexjit::compiler
