#include "codegen/cuda_expr.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>

#include "codegen/cuda_literals.hpp"
#include "codegen/float_math.hpp"
#include "ir/bounds.hpp"
#include "ir/internal_error.hpp"

namespace flexjit::codegen {

using ir::BinaryOp;
using ir::Expr;
using ir::Type;

const char* cuda_type(Type t) {
  switch (t) {
    case Type::Bool: return "bool";
    case Type::Int: return "long long";
    case Type::Float: return "float";
  }
  return "?";
}

namespace {

// Reads one element of a captured tensor with the conversion its dtype needs.
std::string load_expr(const ir::Load& n, const std::string& offset, const VarSpelling& vars) {
  (void)vars;
  std::string base = "p.c_" + n.tensor;
  switch (n.dtype) {
    case ir::DType::Float32: return fmt::format("__ldg(static_cast<const float*>({}) + {})", base, offset);
    case ir::DType::Float64: return fmt::format("static_cast<float>(__ldg(static_cast<const double*>({}) + {}))", base, offset);
    case ir::DType::BFloat16:
      return fmt::format("flexjit::to_float<true>(__ldg(static_cast<const unsigned short*>({}) + {}))", base, offset);
    case ir::DType::Float16:
      return fmt::format("flexjit::to_float<false>(__ldg(static_cast<const unsigned short*>({}) + {}))", base, offset);
    case ir::DType::Int64: return fmt::format("__ldg(static_cast<const long long*>({}) + {})", base, offset);
    case ir::DType::Int32: return fmt::format("static_cast<long long>(__ldg(static_cast<const int*>({}) + {}))", base, offset);
    case ir::DType::Int16: return fmt::format("static_cast<long long>(__ldg(static_cast<const short*>({}) + {}))", base, offset);
    case ir::DType::Int8:
      return fmt::format("static_cast<long long>(static_cast<const signed char*>({})[{}])", base, offset);
    case ir::DType::UInt8:
      return fmt::format("static_cast<long long>(static_cast<const unsigned char*>({})[{}])", base, offset);
    case ir::DType::Bool: return fmt::format("(static_cast<const unsigned char*>({})[{}] != 0)", base, offset);
  }
  return "?";
}

// What the mod parameters can be: the kernel passes q_idx and kv_idx as non-negative ints, and b
// and h are grid indices (gridDim.z and .y are at most 65535). Everything else (scalars, loads,
// kv_range's variables) stays unbounded.
class ValueEmitter {
 public:
  ValueEmitter(CudaWriter& w, const VarSpelling& vars, const Precomputed* done, const ir::IntRanges* ranges,
               compiler::MathMode math)
      : w_(w), vars_(vars), done_(done), ranges_(ranges), math_(math) {}

  std::string emit(const Expr& e) {
    if (done_) {
      if (auto it = done_->find(e.get()); it != done_->end()) return it->second;
    }
    if (narrowable(e)) return fmt::format("static_cast<long long>({})", emit32(e));
    if (auto n = e.as<ir::IntImm>()) return int_literal(n->value);
    if (auto n = e.as<ir::FloatImm>()) return float_literal(n->value);
    if (auto n = e.as<ir::BoolImm>()) return n->value ? "true" : "false";
    if (auto n = e.as<ir::Var>()) {
      if (n->var_kind == ir::VarKind::Let) return "l_" + n->name;
      return vars_(*n);
    }
    if (auto n = e.as<ir::Load>()) {
      if (n->indices.empty()) return load_expr(*n, "0", vars_);  // a rank-0 tensor's one element
      std::string offset;
      for (std::size_t d = 0; d < n->indices.size(); ++d) {
        std::string term = fmt::format("{} * p.c_{}_stride{}", emit(n->indices[d]), n->tensor, d);
        offset += (d ? " + " : "") + term;
      }
      return load_expr(*n, "(" + offset + ")", vars_);
    }
    if (auto n = e.as<ir::Cast>()) return cast(n->type, n->value);
    if (auto n = e.as<ir::Unary>()) {
      std::string a = emit(n->a);
      switch (n->op) {
        case ir::UnaryOp::Neg: return n->type == Type::Int ? fmt::format("flexjit::ops::neg({})", a) : fmt::format("(-{})", a);
        case ir::UnaryOp::BitNot: return fmt::format("(~{})", a);
        case ir::UnaryOp::Not: return fmt::format("(!{})", a);
      }
    }
    if (auto n = e.as<ir::Binary>()) return binary(*n);
    if (auto n = e.as<ir::Compare>()) {
      static const char* ops[] = {"<", "<=", ">", ">=", "==", "!="};
      const char* op = ops[static_cast<int>(n->op)];
      if (n->a.type() == Type::Int && fits32(n->a) && fits32(n->b))
        return fmt::format("({} {} {})", emit32(n->a), op, emit32(n->b));
      if (n->a.type() == Type::Int && fits32(n->a)) {
        if (auto b = clamped32(n->b, n->a)) return fmt::format("({} {} {})", emit32(n->a), op, *b);
      }
      if (n->a.type() == Type::Int && fits32(n->b)) {
        if (auto a = clamped32(n->a, n->b)) return fmt::format("({} {} {})", *a, op, emit32(n->b));
      }
      return fmt::format("({} {} {})", emit(n->a), op, emit(n->b));
    }
    if (auto n = e.as<ir::Select>()) {
      std::string c = emit(n->cond);
      Guarded g(this);
      return fmt::format("({} ? {} : {})", c, emit(n->t), emit(n->f));
    }
    if (auto n = e.as<ir::Call>()) {
      std::string args;
      for (std::size_t i = 0; i < n->args.size(); ++i) args += (i ? ", " : "") + emit(n->args[i]);
      return fmt::format("{}({})", function_spelling(n->fn, n->args.empty() ? Type::Float : n->args[0].type(), math_),
                         args);
    }
    if (auto n = e.as<ir::Let>()) {
      if (guarded_ > 0) {
        // Behind a guard (the right side of && / ||, an arm of ?:) the value may only be computed
        // when the guard lets it through: a loaded index may be out of range otherwise. An
        // immediately invoked lambda keeps the binding local to that branch.
        return fmt::format("([&]() {{ const {} l_{} = {}; return {}; }}())", cuda_type(n->value.type()), n->name,
                           emit(n->value), emit(n->body));
      }
      std::string value = emit(n->value);
      w_.source_comment(n->value->pos);
      w_.line(fmt::format("const {} l_{} = {};", cuda_type(n->value.type()), n->name, value));
      return emit(n->body);
    }
    internal_assert(false, "emit_value: unknown node");
    return "";
  }

 private:
  // Marks the emission of a conditionally evaluated operand.
  struct Guarded {
    explicit Guarded(ValueEmitter* e) : e_(e) { ++e_->guarded_; }
    ~Guarded() { --e_->guarded_; }
    ValueEmitter* e_;
  };

  std::string cast(Type to, const Expr& v) {
    Type from = v.type();
    if (to == Type::Float && from == Type::Int && fits32(v)) return fmt::format("static_cast<float>({})", emit32(v));
    std::string a = emit(v);
    if (to == Type::Bool) return from == Type::Float ? fmt::format("({} != 0.0f)", a) : fmt::format("({} != 0)", a);
    if (to == Type::Int) {
      if (from == Type::Float) return fmt::format("flexjit::ops::to_int({})", a);
      return fmt::format("static_cast<long long>({})", a);
    }
    if (from == Type::Int) return fmt::format("flexjit::ops::to_float({})", a);
    return fmt::format("({} ? 1.0f : 0.0f)", a);
  }

  std::string binary(const ir::Binary& n) {
    std::string a = emit(n.a), b;
    if (n.op == BinaryOp::And || n.op == BinaryOp::Or) {
      Guarded g(this);  // the right side runs only when the left does not decide
      b = emit(n.b);
    } else {
      b = emit(n.b);
    }
    bool is_int = n.a.type() == Type::Int;
    auto call = [&](const char* f) { return fmt::format("{}({}, {})", f, a, b); };
    auto infix = [&](const char* op) { return fmt::format("({} {} {})", a, op, b); };
    if (n.type == Type::Float && is_float_arithmetic(n.op)) {  // the math mode's spelling
      const auto* constant = n.b.as<ir::FloatImm>();
      return float_arithmetic(n.op, a, b, constant ? std::optional<float>(constant->value) : std::nullopt, math_);
    }
    switch (n.op) {
      case BinaryOp::Add: return call("flexjit::ops::add");
      case BinaryOp::Sub: return call("flexjit::ops::sub");
      case BinaryOp::Mul: return call("flexjit::ops::mul");
      case BinaryOp::Div: break;  // always float
      case BinaryOp::FloorDiv: return call("flexjit::ops::floordiv");
      case BinaryOp::Mod: return call("flexjit::ops::mod");
      case BinaryOp::Pow: return is_int ? call("flexjit::ops::ipow") : call("powf");
      case BinaryOp::Min: return is_int ? call("flexjit::ops::min") : call("fminf");
      case BinaryOp::Max: return is_int ? call("flexjit::ops::max") : call("fmaxf");
      case BinaryOp::BitAnd: return n.type == Type::Bool ? fmt::format("static_cast<bool>({} & {})", a, b) : infix("&");
      case BinaryOp::BitOr: return n.type == Type::Bool ? fmt::format("static_cast<bool>({} | {})", a, b) : infix("|");
      case BinaryOp::BitXor: return n.type == Type::Bool ? fmt::format("({} != {})", a, b) : infix("^");
      case BinaryOp::Shl: return call("flexjit::ops::shl");
      case BinaryOp::Shr: return call("flexjit::ops::shr");
      case BinaryOp::And: return infix("&&");
      case BinaryOp::Or: return infix("||");
    }
    return "?";
  }

  // ---- 32-bit integer arithmetic. Int is int64, but where interval analysis proves that an
  // operation's operands and result all fit in 32 bits, computing it in 32 bits gives the same
  // value with half the registers and faster instructions (64-bit division is a long
  // software sequence on the GPU).
  bool fits32(const Expr& e) const {
    if (!ranges_ || e.type() != Type::Int) return false;
    auto it = ranges_->find(e.get());
    return it != ranges_->end() && it->second.lo >= std::numeric_limits<std::int32_t>::min() &&
           it->second.hi <= std::numeric_limits<std::int32_t>::max();
  }

  // A node computed in 32 bits: one of the ops below, with 32-bit operands and result.
  bool narrowable(const Expr& e) const {
    if (!fits32(e) || (done_ && done_->count(e.get()))) return false;
    if (auto n = e.as<ir::Binary>()) {
      switch (n->op) {
        case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::FloorDiv:
        case BinaryOp::Mod: case BinaryOp::Min: case BinaryOp::Max: return fits32(n->a) && fits32(n->b);
        default: return false;
      }
    }
    if (auto n = e.as<ir::Unary>()) return n->op == ir::UnaryOp::Neg && fits32(n->a);
    if (auto n = e.as<ir::Call>())
      return n->fn == ir::Intrinsic::Abs && n->args.size() == 1 && fits32(n->args[0]);
    return false;
  }

  // A 64-bit operand (a runtime scalar, a load) compared with a 32-bit one, `other`, whose values
  // are [lo, hi]: clamped into [lo - 1, hi + 1] it compares the same against every value of
  // `other` (above hi + 1 or at it, it is greater than all of them; below lo - 1 or at it, less),
  // so the comparison per score is a 32-bit one and the clamp, loop-invariant, is hoisted. None
  // when lo - 1 or hi + 1 does not fit in 32 bits.
  std::optional<std::string> clamped32(const Expr& wide, const Expr& other) {
    const ir::IntInterval r = ranges_->at(other.get());
    const std::int64_t lo = r.lo - 1, hi = r.hi + 1;
    if (lo < std::numeric_limits<std::int32_t>::min() || hi > std::numeric_limits<std::int32_t>::max())
      return std::nullopt;
    return fmt::format("flexjit::ops::clamp32({}, {}, {})", emit(wide), int32_literal(lo), int32_literal(hi));
  }

  static std::string int32_literal(std::int64_t v) {
    // INT32_MIN has no literal of type int: spell it as an expression.
    if (v == std::numeric_limits<std::int32_t>::min()) return "(-2147483647 - 1)";
    return v < 0 ? fmt::format("({})", v) : fmt::format("{}", v);
  }

  // e (which fits32) as a C++ int expression.
  std::string emit32(const Expr& e) {
    if (done_) {
      if (auto it = done_->find(e.get()); it != done_->end()) return fmt::format("static_cast<int>({})", it->second);
    }
    if (auto n = e.as<ir::IntImm>()) return n->value < 0 ? fmt::format("({})", n->value) : fmt::format("{}", n->value);
    if (!narrowable(e)) return fmt::format("static_cast<int>({})", emit(e));
    if (auto n = e.as<ir::Unary>()) return fmt::format("(-{})", emit32(n->a));
    if (auto n = e.as<ir::Call>()) return fmt::format("flexjit::ops::abs32({})", emit32(n->args[0]));
    auto n = e.as<ir::Binary>();
    const std::string a = emit32(n->a), b = emit32(n->b);
    switch (n->op) {
      case BinaryOp::Add: return fmt::format("({} + {})", a, b);
      case BinaryOp::Sub: return fmt::format("({} - {})", a, b);
      case BinaryOp::Mul: return fmt::format("({} * {})", a, b);
      case BinaryOp::FloorDiv: return fmt::format("flexjit::ops::floordiv32({}, {})", a, b);
      case BinaryOp::Mod: return fmt::format("flexjit::ops::mod32({}, {})", a, b);
      case BinaryOp::Min: return fmt::format("flexjit::ops::min32({}, {})", a, b);
      case BinaryOp::Max: return fmt::format("flexjit::ops::max32({}, {})", a, b);
      default: break;
    }
    internal_assert(false, "emit32: not narrowable");
    return "";
  }

  CudaWriter& w_;
  const VarSpelling& vars_;
  const Precomputed* done_;
  const ir::IntRanges* ranges_;
  compiler::MathMode math_;
  int guarded_ = 0;
};

// Mirrors ir/bounds.cpp: same primitive for the same node, so the GPU's verdicts are the
// ones the property tests check on the host.
class BoundsEmitter {
 public:
  BoundsEmitter(CudaWriter& w, const VarSpelling& vars, BoundsLoads loads) : w_(w), vars_(vars), loads_(loads) {}

  std::string ints(const Expr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    std::string value = int_node(e);
    return name(e, "flexjit::IntInterval", value);
  }
  std::string bools(const Expr& e) {
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    std::string value = bool_node(e);
    return name(e, "flexjit::BoolInterval", value);
  }

 private:
  std::string name(const Expr& e, const char* type, const std::string& value) {
    // Variables and lets already have names; everything else gets a fresh one.
    if (value.find('(') == std::string::npos) return memo_[e.get()] = value;
    std::string n = fmt::format("iv{}", counter_++);
    w_.source_comment(e->pos);
    w_.line(fmt::format("const {} {} = {};", type, n, value));
    return memo_[e.get()] = n;
  }

  std::string int_node(const Expr& e) {
    if (auto n = e.as<ir::IntImm>()) return fmt::format("flexjit::iv_point({})", int_literal(n->value));
    if (auto n = e.as<ir::Var>()) return var(*n);
    if (auto n = e.as<ir::Load>()) {
      if (loads_ == BoundsLoads::ReadBoxes) {
        if (n->indices.empty()) return fmt::format("flexjit::iv_point({})", load_expr(*n, "0", vars_));  // one element
        if (const char* element = int_element(n->dtype))
          return fmt::format("flexjit::warp_box_range<{}, {}>({}, {})", element, n->indices.size(), box_args(*n),
                             dtype_range(n->dtype));
      }
      return dtype_range(n->dtype);
    }
    if (auto n = e.as<ir::Cast>()) {
      if (n->value.type() == Type::Bool) return fmt::format("flexjit::iv_from_bool({})", bools(n->value));
      if (n->value.type() == Type::Int) return ints(n->value);
      return "flexjit::iv_full()";
    }
    if (auto n = e.as<ir::Unary>()) {
      if (n->op == ir::UnaryOp::Neg) return fmt::format("flexjit::iv_neg({})", ints(n->a));
      if (n->op == ir::UnaryOp::BitNot) return fmt::format("flexjit::iv_bitnot({})", ints(n->a));
      return "flexjit::iv_full()";
    }
    if (auto n = e.as<ir::Binary>()) {
      const char* f = nullptr;
      switch (n->op) {
        case BinaryOp::Add: f = "iv_add"; break;
        case BinaryOp::Sub: f = "iv_sub"; break;
        case BinaryOp::Mul: f = "iv_mul"; break;
        case BinaryOp::FloorDiv: f = "iv_floordiv"; break;
        case BinaryOp::Mod: f = "iv_mod"; break;
        case BinaryOp::Pow: f = "iv_pow"; break;
        case BinaryOp::Min: f = "iv_min"; break;
        case BinaryOp::Max: f = "iv_max"; break;
        case BinaryOp::BitAnd: f = "iv_bitand"; break;
        case BinaryOp::BitOr: f = "iv_bitor"; break;
        case BinaryOp::BitXor: f = "iv_bitxor"; break;
        case BinaryOp::Shl: f = "iv_shl"; break;
        case BinaryOp::Shr: f = "iv_shr"; break;
        default: return "flexjit::iv_full()";
      }
      std::string a = ints(n->a), b = ints(n->b);
      return fmt::format("flexjit::{}({}, {})", f, a, b);
    }
    if (auto n = e.as<ir::Select>()) {
      std::string c = bools(n->cond), t = ints(n->t), f = ints(n->f);
      return fmt::format("flexjit::iv_select({}, {}, {})", c, t, f);
    }
    if (auto n = e.as<ir::Call>()) {
      if (n->fn == ir::Intrinsic::Abs && n->args.size() == 1 && n->args[0].type() == Type::Int)
        return fmt::format("flexjit::iv_abs({})", ints(n->args[0]));
      return "flexjit::iv_full()";
    }
    if (auto n = e.as<ir::Let>()) {
      let(*n);
      return ints(n->body);
    }
    return "flexjit::iv_full()";
  }

  std::string bool_node(const Expr& e) {
    if (auto n = e.as<ir::BoolImm>()) return fmt::format("flexjit::bi_const({})", n->value ? "true" : "false");
    if (auto n = e.as<ir::Var>()) return var(*n);
    if (auto n = e.as<ir::Load>()) {
      if (loads_ == BoundsLoads::ReadBoxes && n->dtype == ir::DType::Bool && n->indices.empty())
        return fmt::format("flexjit::bi_const({})", load_expr(*n, "0", vars_));  // one element
      if (loads_ == BoundsLoads::ReadBoxes && n->dtype == ir::DType::Bool)
        return fmt::format("flexjit::warp_box_bool<{}>({})", n->indices.size(), box_args(*n));
      return "flexjit::bi_unknown()";
    }
    if (auto n = e.as<ir::Cast>()) {
      if (n->value.type() == Type::Int) return fmt::format("flexjit::bi_from_int({})", ints(n->value));
      if (n->value.type() == Type::Bool) return bools(n->value);
      return "flexjit::bi_unknown()";
    }
    if (auto n = e.as<ir::Unary>()) {
      if (n->op == ir::UnaryOp::Not) return fmt::format("flexjit::bi_not({})", bools(n->a));
      return "flexjit::bi_unknown()";
    }
    if (auto n = e.as<ir::Binary>()) {
      const char* f = nullptr;
      switch (n->op) {
        case BinaryOp::And:
        case BinaryOp::BitAnd: f = "bi_and"; break;
        case BinaryOp::Or:
        case BinaryOp::BitOr: f = "bi_or"; break;
        case BinaryOp::BitXor: f = "bi_xor"; break;
        default: return "flexjit::bi_unknown()";
      }
      std::string a = bools(n->a), b = bools(n->b);
      return fmt::format("flexjit::{}({}, {})", f, a, b);
    }
    if (auto n = e.as<ir::Compare>()) {
      static const char* fs[] = {"iv_lt", "iv_le", "iv_gt", "iv_ge", "iv_eq", "iv_ne"};
      const char* f = fs[static_cast<int>(n->op)];
      if (n->a.type() == Type::Int) {
        std::string a = ints(n->a), b = ints(n->b);
        return fmt::format("flexjit::{}({}, {})", f, a, b);
      }
      if (n->a.type() == Type::Bool) {
        std::string a = bools(n->a), b = bools(n->b);
        return fmt::format("flexjit::{}(flexjit::iv_from_bool({}), flexjit::iv_from_bool({}))", f, a, b);
      }
      return "flexjit::bi_unknown()";
    }
    if (auto n = e.as<ir::Select>()) {
      std::string c = bools(n->cond), t = bools(n->t), f = bools(n->f);
      return fmt::format("flexjit::bi_select({}, {}, {})", c, t, f);
    }
    if (auto n = e.as<ir::Let>()) {
      let(*n);
      return bools(n->body);
    }
    return "flexjit::bi_unknown()";
  }

  static const char* dtype_range(ir::DType d) {
    switch (d) {
      case ir::DType::Int8: return "flexjit::iv_int8()";
      case ir::DType::Int16: return "flexjit::iv_int16()";
      case ir::DType::Int32: return "flexjit::iv_int32()";
      case ir::DType::UInt8: return "flexjit::iv_uint8()";
      default: return "flexjit::iv_full()";
    }
  }

  // The C++ element type of an integer tensor (nullptr for float and bool tensors).
  static const char* int_element(ir::DType d) {
    switch (d) {
      case ir::DType::Int8: return "signed char";
      case ir::DType::Int16: return "short";
      case ir::DType::Int32: return "int";
      case ir::DType::Int64: return "long long";
      case ir::DType::UInt8: return "unsigned char";
      default: return nullptr;
    }
  }

  // "base, {index intervals}, {strides}, {extents}" of a box read (templates/common/tile_map.cuh).
  std::string box_args(const ir::Load& n) {
    std::string idx, strides, sizes;
    for (std::size_t d = 0; d < n.indices.size(); ++d) {
      const char* sep = d ? ", " : "";
      idx += sep + ints(n.indices[d]);
      strides += fmt::format("{}p.c_{}_stride{}", sep, n.tensor, d);
      sizes += fmt::format("{}x.c_{}_size{}", sep, n.tensor, d);
    }
    return fmt::format("p.c_{}, {{{}}}, {{{}}}, {{{}}}", n.tensor, idx, strides, sizes);
  }

  void let(const ir::Let& n) {
    if (n.value.type() == Type::Int) lets_[n.name] = ints(n.value);
    else if (n.value.type() == Type::Bool) lets_[n.name] = bools(n.value);
  }

  std::string var(const ir::Var& n) {
    if (n.var_kind == ir::VarKind::Let) {
      auto it = lets_.find(n.name);
      if (it != lets_.end()) return it->second;
      return n.type == Type::Bool ? "flexjit::bi_unknown()" : "flexjit::iv_full()";  // a float let
    }
    if (n.type == Type::Float) return "flexjit::iv_full()";
    return vars_(n);
  }

  CudaWriter& w_;
  const VarSpelling& vars_;
  BoundsLoads loads_;
  std::unordered_map<const ir::Node*, std::string> memo_;
  std::unordered_map<std::string, std::string> lets_;
  int counter_ = 0;
};

}  // namespace

std::string emit_value(const Expr& e, CudaWriter& w, const VarSpelling& vars, const ir::IntRanges& ranges,
                       compiler::MathMode math, const Precomputed* done) {
  ValueEmitter emitter(w, vars, done, &ranges, math);
  return emitter.emit(e);
}

std::string emit_bool_bounds(const Expr& e, CudaWriter& w, const VarSpelling& vars, BoundsLoads loads) {
  BoundsEmitter emitter(w, vars, loads);
  return emitter.bools(e);
}

}  // namespace flexjit::codegen
