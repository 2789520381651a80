// The IR printer. Each node has a precedence level; a child is parenthesised when its level is
// below what its position requires, plus the clarity rules documented in ir_printer.hpp.
#include "ir/ir_printer.hpp"

#include <charconv>
#include <cmath>
#include <ostream>

#include "ir/internal_error.hpp"

namespace flexjit::ir {
namespace {

// Precedence levels, loosest first (Python's order for the binary operators).
enum Prec : int {
  kLet = 0,
  kOr,
  kAnd,
  kCompare,
  kBitOr,
  kBitXor,
  kBitAnd,
  kShift,
  kAdd,
  kMul,
  kUnary,
  kPow,
  kAtom,
};

struct OpInfo {
  const char* symbol;  // nullptr: printed as a call
  int prec;
};

OpInfo binary_info(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return {"+", kAdd};
    case BinaryOp::Sub: return {"-", kAdd};
    case BinaryOp::Mul: return {"*", kMul};
    case BinaryOp::Div: return {"/", kMul};
    case BinaryOp::FloorDiv: return {"//", kMul};
    case BinaryOp::Mod: return {"%", kMul};
    case BinaryOp::Pow: return {"**", kPow};
    case BinaryOp::Min: return {nullptr, kAtom};
    case BinaryOp::Max: return {nullptr, kAtom};
    case BinaryOp::BitAnd: return {"&", kBitAnd};
    case BinaryOp::BitOr: return {"|", kBitOr};
    case BinaryOp::BitXor: return {"^", kBitXor};
    case BinaryOp::Shl: return {"<<", kShift};
    case BinaryOp::Shr: return {">>", kShift};
    case BinaryOp::And: return {"&&", kAnd};
    case BinaryOp::Or: return {"||", kOr};
  }
  internal_error("printer: bad binary op");
}

const char* compare_symbol(CompareOp op) {
  switch (op) {
    case CompareOp::LT: return "<";
    case CompareOp::LE: return "<=";
    case CompareOp::GT: return ">";
    case CompareOp::GE: return ">=";
    case CompareOp::EQ: return "==";
    case CompareOp::NE: return "!=";
  }
  return "?";
}

const char* unary_symbol(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::BitNot: return "~";
    case UnaryOp::Not: return "!";
  }
  return "?";
}

std::string float_literal(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest round-trip form
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

bool is_bitwise(const Expr& e) {
  const Binary* b = e.as<Binary>();
  if (!b) return false;
  const int p = binary_info(b->op).prec;
  return p == kBitOr || p == kBitXor || p == kBitAnd || p == kShift;
}

// The level of e as printed.
int prec_of(const Expr& e) {
  switch (e.kind()) {
    case NodeKind::IntImm: return e.as<IntImm>()->value < 0 ? kUnary : kAtom;
    case NodeKind::FloatImm: return std::signbit(e.as<FloatImm>()->value) ? kUnary : kAtom;
    case NodeKind::Unary: return kUnary;
    case NodeKind::Binary: return binary_info(e.as<Binary>()->op).prec;
    case NodeKind::Compare: return kCompare;
    case NodeKind::Let: return kLet;
    default: return kAtom;
  }
}

class Printer {
 public:
  // e at statement position: a Let chain becomes one line per binding.
  std::vector<std::string> lines(const Expr& e) {
    std::vector<std::string> out;
    Expr cur = e;
    while (const Let* l = cur.as<Let>()) {
      out.push_back("let " + l->name + " = " + expr(l->value, kLet + 1) + " in");
      cur = l->body;
    }
    out.push_back(expr(cur, kLet + 1));
    return out;
  }

  // e in a position that needs at least level `need`.
  std::string expr(const Expr& e, int need) {
    std::string s = bare(e);
    return prec_of(e) < need ? "(" + s + ")" : s;
  }

 private:
  std::string list(const std::vector<Expr>& xs) {
    std::string s;
    for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + expr(xs[i], kLet + 1);
    return s;
  }

  std::string call(const char* name, const std::vector<Expr>& args) { return std::string(name) + "(" + list(args) + ")"; }

  // Operand of a binary operator at level p; `right` for the right operand.
  std::string operand(const Expr& child, BinaryOp parent, bool right) {
    const int p = binary_info(parent).prec;
    int need = p;
    if (parent == BinaryOp::Pow) {
      need = right ? kUnary : kAtom;  // `2 ** -x`, `(-2) ** x`, `(a ** b) ** c`
    } else if (right) {
      need = p + 1;  // keeps the tree's shape: a - (b - c), x + (y + z)
    }
    bool paren = prec_of(child) < need;
    if (p == kAnd || p == kOr) {
      // `a && b || c` and `x && m & n` read ambiguously: spell them out.
      paren = paren || is_bitwise(child) || (p == kOr && prec_of(child) == kAnd);
    } else if (p != kAdd && p != kMul && p != kPow) {
      // Bitwise and shift: parenthesise any other operator underneath.
      if (const Binary* b = child.as<Binary>()) paren = paren || (b->op != parent && binary_info(b->op).symbol);
      paren = paren || child.as<Compare>() != nullptr;
    }
    std::string s = bare(child);
    return paren ? "(" + s + ")" : s;
  }

  // Only atoms and unary operators stand bare beside a comparison: `(q_idx - kv_idx) < w`.
  std::string comparand(const Expr& e) {
    const int p = prec_of(e);
    std::string s = bare(e);
    return p == kUnary || p == kAtom ? s : "(" + s + ")";
  }

  std::string bare(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: return std::to_string(e.as<IntImm>()->value);
      case NodeKind::FloatImm: return float_literal(e.as<FloatImm>()->value);
      case NodeKind::BoolImm: return e.as<BoolImm>()->value ? "true" : "false";
      case NodeKind::Var: return e.as<Var>()->name;
      case NodeKind::Load: return e.as<Load>()->tensor + "[" + list(e.as<Load>()->indices) + "]";
      case NodeKind::Cast: return std::string(type_name(e.type())) + "(" + expr(e.as<Cast>()->value, kLet + 1) + ")";
      case NodeKind::Unary: {
        const Unary* u = e.as<Unary>();
        std::string s = unary_symbol(u->op);  // (built in place: GCC 12's -Wrestrict misfires on
        s += expr(u->a, kAtom);                // const char* + std::string&& at -O3)
        return s;                              // -(x ** 2), !(a < b), -(-3)
      }
      case NodeKind::Binary: {
        const Binary* b = e.as<Binary>();
        const OpInfo info = binary_info(b->op);
        if (!info.symbol) return call(b->op == BinaryOp::Min ? "min" : "max", {b->a, b->b});
        return operand(b->a, b->op, false) + " " + info.symbol + " " + operand(b->b, b->op, true);
      }
      case NodeKind::Compare: {
        const Compare* c = e.as<Compare>();
        return comparand(c->a) + " " + compare_symbol(c->op) + " " + comparand(c->b);
      }
      case NodeKind::Select: {
        const Select* s = e.as<Select>();
        return call("select", {s->cond, s->t, s->f});
      }
      case NodeKind::Call: return call(intrinsic_name(e.as<Call>()->fn), e.as<Call>()->args);
      case NodeKind::Let: {
        const Let* l = e.as<Let>();
        return "let " + l->name + " = " + expr(l->value, kLet + 1) + " in " + expr(l->body, kLet);
      }
    }
    internal_error("printer: bad node kind");
  }
};

std::string join_lines(const std::vector<std::string>& ls, const std::string& indent) {
  std::string s;
  for (const std::string& l : ls) s += indent + l + "\n";
  return s;
}

}  // namespace

std::string to_string(const Expr& e) {
  if (!e) return "<undefined>";
  std::string s = join_lines(Printer().lines(e), "");
  s.pop_back();  // no trailing newline for a bare expression
  return s;
}

std::string to_string(const Mod& m) {
  std::string s = std::string(mod_name(m.kind)) + "(";
  for (std::size_t i = 0; i < m.params.size(); ++i) {
    const Var* v = m.params[i].as<Var>();
    s += (i ? ", " : "") + (v ? v->name : to_string(m.params[i]));
  }
  s += ") -> ";
  s += m.kind == ModKind::Mask ? "bool" : "float";
  s += ":\n";
  if (!m.body) return s + "  <undefined>\n";
  return s + join_lines(Printer().lines(m.body), "  ");
}

std::string to_string(const Program& p) {
  std::string decls;
  if (!p.name.empty()) decls += "# program: " + p.name + "\n";
  for (const Capture& c : p.captures)
    decls += c.name + ": Tensor[" + dtype_name(c.dtype) + ", " + std::to_string(c.rank) + "]\n";
  for (const Scalar& s : p.scalars) {
    decls += s.name + ": " + type_name(s.type);
    if (s.is_shape_value()) decls += "  # read from the bound tensor";
    decls += "\n";
  }
  for (const RuntimeCheck& c : p.checks) decls += "assert " + to_string(c.cond) + "  # checked per call: " + c.message + "\n";
  if (p.block_indices)
    decls += p.block_indices->name + ": BlockIndices[" + std::to_string(p.block_indices->q_block) + ", " +
             std::to_string(p.block_indices->kv_block) + "]\n";
  if (p.token_indices) decls += p.token_indices->name + ": TokenIndices\n";
  std::string mods;
  for (const std::optional<Mod>* m : {&p.mask_mod, &p.score_mod, &p.sink})
    if (*m) {
      if (!mods.empty()) mods += "\n";
      mods += to_string(**m);
    }
  if (decls.empty() || mods.empty()) return decls + mods;
  return decls + "\n" + mods;
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }

}  // namespace flexjit::ir
