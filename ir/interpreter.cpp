// The reference semantics. Keep every Float operation a separate float-typed statement: the
// library is built with -ffp-contract=off so a - floorf(a / b) * b never becomes an fma.
#include "ir/interpreter.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "flexjit/half.hpp"
#include "ir/internal_error.hpp"

namespace flexjit::ir {

// ---------------------------------------------------------------------------------------------
// Value

Value Value::boolean(bool v) {
  Value r;
  r.type = Type::Bool;
  r.b = v;
  return r;
}
Value Value::integer(std::int64_t v) {
  Value r;
  r.type = Type::Int;
  r.i = v;
  return r;
}
Value Value::real(float v) {
  Value r;
  r.type = Type::Float;
  r.f = v;
  return r;
}

bool Value::as_bool() const {
  internal_assert(type == Type::Bool, std::string("Value: expected bool, have ") + type_name(type));
  return b;
}
std::int64_t Value::as_int() const {
  internal_assert(type == Type::Int, std::string("Value: expected int, have ") + type_name(type));
  return i;
}
float Value::as_float() const {
  internal_assert(type == Type::Float, std::string("Value: expected float, have ") + type_name(type));
  return f;
}

std::string Value::to_string() const {
  switch (type) {
    case Type::Bool: return b ? "true" : "false";
    case Type::Int: return std::to_string(i);
    case Type::Float: {
      if (std::isnan(f)) return "nan";
      if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, f);
      return std::string(buf, res.ptr);
    }
  }
  return "?";
}

bool identical(const Value& a, const Value& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Type::Bool: return a.b == b.b;
    case Type::Int: return a.i == b.i;
    case Type::Float:
      if (std::isnan(a.f) || std::isnan(b.f)) return std::isnan(a.f) && std::isnan(b.f);
      return std::bit_cast<std::uint32_t>(a.f) == std::bit_cast<std::uint32_t>(b.f);
  }
  return false;
}

std::ostream& operator<<(std::ostream& os, const Value& v) {
  return os << type_name(v.type) << ' ' << v.to_string();
}

// ---------------------------------------------------------------------------------------------
// Scalar operations

namespace {

using U64 = std::uint64_t;
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// Wrapping arithmetic goes through uint64 (defined modulo 2^64) and back (C++20: modular).
std::int64_t wrap_add(std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(U64(a) + U64(b)); }
std::int64_t wrap_sub(std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(U64(a) - U64(b)); }
std::int64_t wrap_mul(std::int64_t a, std::int64_t b) { return static_cast<std::int64_t>(U64(a) * U64(b)); }

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  if (a == kMin && b == -1) return kMin;  // 2^63 wraps
  std::int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return 0;  // also avoids INT64_MIN % -1
  std::int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::int64_t int_pow(std::int64_t base, std::int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  U64 result = 1, b = U64(base);
  for (U64 e = U64(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<std::int64_t>(result);
}

std::int64_t shift_left(std::int64_t a, std::int64_t n) {
  if (n < 0 || n > 63) return 0;
  return static_cast<std::int64_t>(U64(a) << n);
}

std::int64_t shift_right(std::int64_t a, std::int64_t n) {
  if (n < 0 || n > 63) return a < 0 ? -1 : 0;
  return a >> n;  // arithmetic in C++20
}

std::int64_t float_to_int(float f) {
  if (std::isnan(f) || std::isinf(f)) return 0;
  if (f >= 9223372036854775808.0f) return kMax;  // 2^63
  if (f < -9223372036854775808.0f) return kMin;
  return static_cast<std::int64_t>(f);  // truncates toward zero
}

float float_floordiv(float a, float b) {
  const float q = a / b;
  return std::floor(q);
}

// libm's fminf / fmaxf, called through a pointer the compiler cannot see through: expanded as a
// builtin (clang's minnum / maxnum) they may return the other zero for (-0, +0) than libm does,
// and the LLVM back end calls libm.
float libm_fmin(float x, float y) {
  static float (*const volatile f)(float, float) = ::fminf;
  return f(x, y);
}
float libm_fmax(float x, float y) {
  static float (*const volatile f)(float, float) = ::fmaxf;
  return f(x, y);
}

float float_mod(float a, float b) {
  const float q = a / b;
  const float fq = std::floor(q);
  const float p = fq * b;
  return a - p;
}

template <class T> T read_as(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[noreturn]] void bad_operands(const char* what, Type t) {
  internal_error(std::string(what) + ": operands of type " + type_name(t));
}

}  // namespace

Value eval_unary(UnaryOp op, const Value& a) {
  switch (op) {
    case UnaryOp::Neg:
      if (a.type == Type::Int) return Value::integer(wrap_sub(0, a.i));
      if (a.type == Type::Float) return Value::real(-a.f);
      bad_operands("neg", a.type);
    case UnaryOp::BitNot: return Value::integer(~a.as_int());
    case UnaryOp::Not: return Value::boolean(!a.as_bool());
  }
  internal_error("eval_unary: bad op");
}

Value eval_binary(BinaryOp op, const Value& a, const Value& b) {
  internal_assert(a.type == b.type, "eval_binary: operand types differ");
  if (a.type == Type::Int) {
    const std::int64_t x = a.i, y = b.i;
    switch (op) {
      case BinaryOp::Add: return Value::integer(wrap_add(x, y));
      case BinaryOp::Sub: return Value::integer(wrap_sub(x, y));
      case BinaryOp::Mul: return Value::integer(wrap_mul(x, y));
      case BinaryOp::FloorDiv: return Value::integer(floor_div(x, y));
      case BinaryOp::Mod: return Value::integer(floor_mod(x, y));
      case BinaryOp::Pow: return Value::integer(int_pow(x, y));
      case BinaryOp::Min: return Value::integer(x < y ? x : y);
      case BinaryOp::Max: return Value::integer(x > y ? x : y);
      case BinaryOp::BitAnd: return Value::integer(x & y);
      case BinaryOp::BitOr: return Value::integer(x | y);
      case BinaryOp::BitXor: return Value::integer(x ^ y);
      case BinaryOp::Shl: return Value::integer(shift_left(x, y));
      case BinaryOp::Shr: return Value::integer(shift_right(x, y));
      default: bad_operands("eval_binary", a.type);
    }
  }
  if (a.type == Type::Float) {
    const float x = a.f, y = b.f;
    switch (op) {
      case BinaryOp::Add: return Value::real(x + y);
      case BinaryOp::Sub: return Value::real(x - y);
      case BinaryOp::Mul: return Value::real(x * y);
      case BinaryOp::Div: return Value::real(x / y);
      case BinaryOp::FloorDiv: return Value::real(float_floordiv(x, y));
      case BinaryOp::Mod: return Value::real(float_mod(x, y));
      case BinaryOp::Pow: return Value::real(std::pow(x, y));
      case BinaryOp::Min: return Value::real(libm_fmin(x, y));
      case BinaryOp::Max: return Value::real(libm_fmax(x, y));
      default: bad_operands("eval_binary", a.type);
    }
  }
  const bool x = a.b, y = b.b;
  switch (op) {
    case BinaryOp::BitAnd:
    case BinaryOp::And: return Value::boolean(x && y);
    case BinaryOp::BitOr:
    case BinaryOp::Or: return Value::boolean(x || y);
    case BinaryOp::BitXor: return Value::boolean(x != y);
    default: bad_operands("eval_binary", a.type);
  }
}

Value eval_compare(CompareOp op, const Value& a, const Value& b) {
  internal_assert(a.type == b.type, "eval_compare: operand types differ");
  auto cmp = [op](auto x, auto y) {
    switch (op) {
      case CompareOp::LT: return x < y;
      case CompareOp::LE: return x <= y;
      case CompareOp::GT: return x > y;
      case CompareOp::GE: return x >= y;
      case CompareOp::EQ: return x == y;
      case CompareOp::NE: return x != y;
    }
    return false;
  };
  switch (a.type) {
    case Type::Bool: return Value::boolean(cmp(int(a.b), int(b.b)));
    case Type::Int: return Value::boolean(cmp(a.i, b.i));
    case Type::Float: return Value::boolean(cmp(a.f, b.f));
  }
  internal_error("eval_compare: bad type");
}

Value eval_cast(Type to, const Value& a) {
  switch (to) {
    case Type::Bool:
      switch (a.type) {
        case Type::Bool: return a;
        case Type::Int: return Value::boolean(a.i != 0);
        case Type::Float: return Value::boolean(a.f != 0.0f);  // NaN -> true, as Python's bool()
      }
      break;
    case Type::Int:
      switch (a.type) {
        case Type::Bool: return Value::integer(a.b ? 1 : 0);
        case Type::Int: return a;
        case Type::Float: return Value::integer(float_to_int(a.f));
      }
      break;
    case Type::Float:
      switch (a.type) {
        case Type::Bool: return Value::real(a.b ? 1.0f : 0.0f);
        case Type::Int: return Value::real(static_cast<float>(a.i));
        case Type::Float: return a;
      }
      break;
  }
  internal_error("eval_cast: bad type");
}

Value eval_call(Intrinsic fn, const std::vector<Value>& args) {
  internal_assert(args.size() == 1, std::string("eval_call ") + intrinsic_name(fn) + ": expected 1 argument");
  const Value& a = args[0];
  if (fn == Intrinsic::Abs && a.type == Type::Int) return Value::integer(a.i < 0 ? wrap_sub(0, a.i) : a.i);
  const float x = a.as_float();
  switch (fn) {
    case Intrinsic::Exp: return Value::real(std::exp(x));
    case Intrinsic::Exp2: return Value::real(std::exp2(x));
    case Intrinsic::Log: return Value::real(std::log(x));
    case Intrinsic::Log2: return Value::real(std::log2(x));
    case Intrinsic::Log1p: return Value::real(std::log1p(x));
    case Intrinsic::Sqrt: return Value::real(std::sqrt(x));
    case Intrinsic::Rsqrt: {
      const float s = std::sqrt(x);
      return Value::real(1.0f / s);
    }
    case Intrinsic::Tanh:
    case Intrinsic::TanhApprox: return Value::real(std::tanh(x));
    case Intrinsic::Sigmoid: {
      const float e = std::exp(-x);
      const float d = 1.0f + e;
      return Value::real(1.0f / d);
    }
    case Intrinsic::Sin: return Value::real(std::sin(x));
    case Intrinsic::Cos: return Value::real(std::cos(x));
    case Intrinsic::Tan: return Value::real(std::tan(x));
    case Intrinsic::Erf: return Value::real(std::erf(x));
    case Intrinsic::Floor: return Value::real(std::floor(x));
    case Intrinsic::Ceil: return Value::real(std::ceil(x));
    case Intrinsic::Abs: return Value::real(std::fabs(x));
    case Intrinsic::FloorToInt: return Value::integer(float_to_int(std::floor(x)));
    case Intrinsic::CeilToInt: return Value::integer(float_to_int(std::ceil(x)));
  }
  internal_error("eval_call: bad intrinsic");
}

// ---------------------------------------------------------------------------------------------
// 16-bit floats

// One implementation of each, shared with the public API (flexjit/half.hpp).
float half_to_float(std::uint16_t h) { return fp16_bits_to_float(h); }

float bfloat16_to_float(std::uint16_t bits) { return bf16_bits_to_float(bits); }

// ---------------------------------------------------------------------------------------------
// Tree evaluation

namespace {

struct Params {
  std::int64_t b, h, q_idx, kv_idx;
  float score;
};

std::string shape_string(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

class Evaluator {
 public:
  Evaluator(const Env& env, const Params& params) : env_(env), params_(params) {}

  Value eval(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: return Value::integer(e.as<IntImm>()->value);
      case NodeKind::FloatImm: return Value::real(e.as<FloatImm>()->value);
      case NodeKind::BoolImm: return Value::boolean(e.as<BoolImm>()->value);
      case NodeKind::Var: return var(e.as<Var>());
      case NodeKind::Load: return load(e.as<Load>());
      case NodeKind::Cast: return eval_cast(e.type(), eval(e.as<Cast>()->value));
      case NodeKind::Unary: return eval_unary(e.as<Unary>()->op, eval(e.as<Unary>()->a));
      case NodeKind::Binary: {
        const Binary* op = e.as<Binary>();
        if (op->op == BinaryOp::And || op->op == BinaryOp::Or) {  // short-circuit
          const bool left = eval(op->a).as_bool();
          if (left == (op->op == BinaryOp::Or)) return Value::boolean(left);
          return Value::boolean(eval(op->b).as_bool());
        }
        const Value a = eval(op->a);
        return eval_binary(op->op, a, eval(op->b));
      }
      case NodeKind::Compare: {
        const Compare* op = e.as<Compare>();
        const Value a = eval(op->a);
        return eval_compare(op->op, a, eval(op->b));
      }
      case NodeKind::Select: {
        const Select* op = e.as<Select>();
        return eval(op->cond).as_bool() ? eval(op->t) : eval(op->f);
      }
      case NodeKind::Call: {
        const Call* op = e.as<Call>();
        std::vector<Value> args;
        for (const Expr& a : op->args) args.push_back(eval(a));
        return eval_call(op->fn, args);
      }
      case NodeKind::Let: {
        const Let* op = e.as<Let>();
        lets_.emplace_back(&op->name, eval(op->value));
        Value r = eval(op->body);
        lets_.pop_back();
        return r;
      }
    }
    internal_error("evaluate: bad node kind");
  }

 private:
  Value var(const Var* v) {
    switch (v->var_kind) {
      case VarKind::Param: {
        if (v->name == kParamScore) return Value::real(params_.score);
        if (v->name == kParamBatch) return Value::integer(params_.b);
        if (v->name == kParamHead) return Value::integer(params_.h);
        if (v->name == kParamQ) return Value::integer(params_.q_idx);
        if (v->name == kParamKv) return Value::integer(params_.kv_idx);
        internal_error("evaluate: unknown parameter '" + v->name + "'");
      }
      case VarKind::Scalar: {
        auto it = env_.scalars.find(v->name);
        if (it == env_.scalars.end()) throw std::runtime_error("evaluate: scalar '" + v->name + "' is not bound");
        if (it->second.type != v->type)
          throw std::runtime_error("evaluate: scalar '" + v->name + "' is bound to a " + type_name(it->second.type) +
                                   " value but declared " + type_name(v->type));
        return it->second;
      }
      case VarKind::Let:
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it)
          if (*it->first == v->name) return it->second;
        internal_error("evaluate: let variable '" + v->name + "' is not in scope");
      case VarKind::Tile: {
        auto it = env_.tile_bounds.find(v->name);
        if (it == env_.tile_bounds.end()) throw std::runtime_error("evaluate: tile bound '" + v->name + "' is not bound");
        return Value::integer(it->second);
      }
    }
    internal_error("evaluate: bad var kind");
  }

  Value load(const Load* op) {
    auto it = env_.tensors.find(op->tensor);
    if (it == env_.tensors.end()) throw std::runtime_error("evaluate: tensor '" + op->tensor + "' is not bound");
    const TensorBinding& t = it->second;
    if (t.dtype != op->dtype)
      throw std::runtime_error("evaluate: tensor '" + op->tensor + "' is bound with dtype " + dtype_name(t.dtype) +
                               " but declared " + dtype_name(op->dtype));
    const std::size_t rank = op->indices.size();
    if (t.shape.size() != rank || (!t.strides.empty() && t.strides.size() != rank))
      throw std::runtime_error("evaluate: tensor '" + op->tensor + "' has shape " + shape_string(t.shape) +
                               " but is indexed with " + std::to_string(rank) + " indices");
    std::vector<std::int64_t> idx;
    for (const Expr& i : op->indices) idx.push_back(eval(i).as_int());
    std::int64_t offset = 0, stride = 1;
    for (std::size_t k = rank; k-- > 0;) {
      if (idx[k] < 0 || idx[k] >= t.shape[k])
        throw std::runtime_error("evaluate: index " + shape_string(idx) + " is out of range for tensor '" +
                                 op->tensor + "' of shape " + shape_string(t.shape));
      const std::int64_t s = t.strides.empty() ? stride : t.strides[k];
      offset += idx[k] * s;
      stride *= t.shape[k];
    }
    if (!t.data) throw std::runtime_error("evaluate: tensor '" + op->tensor + "' has no data");
    const char* p = static_cast<const char*>(t.data) + offset * dtype_size(t.dtype);
    switch (t.dtype) {
      case DType::Bool: return Value::boolean(read_as<std::uint8_t>(p) != 0);
      case DType::Int8: return Value::integer(read_as<std::int8_t>(p));
      case DType::Int16: return Value::integer(read_as<std::int16_t>(p));
      case DType::Int32: return Value::integer(read_as<std::int32_t>(p));
      case DType::Int64: return Value::integer(read_as<std::int64_t>(p));
      case DType::UInt8: return Value::integer(read_as<std::uint8_t>(p));
      case DType::Float16: return Value::real(half_to_float(read_as<std::uint16_t>(p)));
      case DType::BFloat16: return Value::real(bfloat16_to_float(read_as<std::uint16_t>(p)));
      case DType::Float32: return Value::real(read_as<float>(p));
      case DType::Float64: return Value::real(static_cast<float>(read_as<double>(p)));
    }
    internal_error("evaluate: bad dtype");
  }

  const Env& env_;
  Params params_;
  std::vector<std::pair<const std::string*, Value>> lets_;
};

}  // namespace

Value evaluate(const Expr& e, const Env& env) {
  internal_assert(e, "evaluate: undefined expression");
  return Evaluator(env, Params{env.b, env.h, env.q_idx, env.kv_idx, env.score}).eval(e);
}

bool eval_mask(const Program& p, const Env& env, std::int64_t b, std::int64_t h, std::int64_t q_idx,
               std::int64_t kv_idx) {
  if (!p.mask_mod) return true;
  return Evaluator(env, Params{b, h, q_idx, kv_idx, 0.0f}).eval(p.mask_mod->body).as_bool();
}

float eval_score(const Program& p, const Env& env, std::int64_t b, std::int64_t h, std::int64_t q_idx,
                 std::int64_t kv_idx, float score) {
  if (!p.score_mod) return score;
  return Evaluator(env, Params{b, h, q_idx, kv_idx, score}).eval(p.score_mod->body).as_float();
}

float eval_sink(const Program& p, const Env& env, std::int64_t b, std::int64_t h) {
  if (!p.sink) return -std::numeric_limits<float>::infinity();
  return Evaluator(env, Params{b, h, 0, 0, 0.0f}).eval(p.sink->body).as_float();
}

}  // namespace flexjit::ir
