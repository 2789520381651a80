#include "random_program.hpp"

#include <bit>
#include <cstring>
#include <limits>

#include "ir/bound_values.hpp"

namespace cpu_test {

using ir::BinaryOp;
using ir::CompareOp;
using ir::DType;
using ir::Expr;
using ir::Intrinsic;
using ir::Type;
using ir::UnaryOp;

namespace {

constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

template <class T> const T& one_of(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

std::int64_t uniform(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

// Floats that exercise every rounding and conversion edge: signed zeros, infinities, NaN,
// subnormals, the float -> int64 saturation boundary (2^63) and the exactness limit 2^24.
const std::vector<float>& special_floats() {
  static const std::vector<float> v = {0.0f,    -0.0f,        1.0f,   -1.0f,  0.5f,     2.0f,   3.0f,
                                       -2.5f,   kInf,         -kInf,  kNaN,   1e-30f,   1e30f,  1e-45f,
                                       3.4e38f, 16777216.0f,  0x1p63f, -0x1p63f, 0x1.fffffep62f, 7.5f, -7.5f};
  return v;
}

std::size_t storage_elements(const TensorSpec& t) {
  std::size_t n = 1;
  std::int64_t contiguous = 1;
  for (std::size_t d = t.shape.size(); d-- > 0;) {
    const std::int64_t stride = t.strides.empty() ? contiguous : t.strides[d];
    n += static_cast<std::size_t>((t.shape[d] - 1) * stride);
    contiguous *= t.shape[d];
  }
  return n;
}

template <class T> void put(std::vector<unsigned char>& bytes, std::size_t i, T v) {
  std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
}

// Element i of a tensor of dtype d: extremes now and then when `wild`, else small values.
void random_element(std::vector<unsigned char>& bytes, std::size_t i, DType d, bool wild, std::mt19937_64& rng) {
  auto extreme = [&] { return wild && uniform(rng, 0, 4) == 0; };
  switch (d) {
    case DType::Bool: put<std::uint8_t>(bytes, i, static_cast<std::uint8_t>(uniform(rng, 0, wild ? 2 : 1))); break;
    case DType::Int8:
      put<std::int8_t>(bytes, i, static_cast<std::int8_t>(extreme() ? one_of<std::int64_t>(rng, {-128, 127}) : uniform(rng, wild ? -10 : 0, wild ? 10 : 3)));
      break;
    case DType::Int16:
      put<std::int16_t>(bytes, i, static_cast<std::int16_t>(extreme() ? one_of<std::int64_t>(rng, {-32768, 32767}) : uniform(rng, wild ? -10 : 0, wild ? 10 : 3)));
      break;
    case DType::Int32:
      put<std::int32_t>(bytes, i, static_cast<std::int32_t>(extreme() ? one_of<std::int64_t>(rng, {INT32_MIN, INT32_MAX, 64}) : uniform(rng, wild ? -10 : 0, wild ? 10 : 3)));
      break;
    case DType::Int64: put<std::int64_t>(bytes, i, extreme() ? one_of<std::int64_t>(rng, {kI64Min, kI64Max, 63}) : uniform(rng, wild ? -10 : 0, wild ? 10 : 3)); break;
    case DType::UInt8: put<std::uint8_t>(bytes, i, static_cast<std::uint8_t>(uniform(rng, 0, wild ? 255 : 3))); break;
    case DType::Float16:
    case DType::BFloat16: {
      // Any bit pattern (subnormals, inf, NaN included) or the rounding of a small float.
      std::uint16_t bits;
      if (wild && uniform(rng, 0, 2) == 0) {
        bits = static_cast<std::uint16_t>(uniform(rng, 0, 0xffff));
      } else if (d == DType::BFloat16) {
        bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(std::uniform_real_distribution<float>(-2, 2)(rng)) >> 16);
      } else {  // half of k / 256 in [-2, 2]: exact in fp16
        const std::int64_t k = uniform(rng, -512, 512);
        const std::uint16_t sign = k < 0 ? 0x8000 : 0;
        std::uint64_t mag = static_cast<std::uint64_t>(k < 0 ? -k : k);
        if (mag == 0) {
          bits = sign;
        } else {
          int e = 63 - std::countl_zero(mag);  // value = mag * 2^-8, normalise to 1.m * 2^(e - 8)
          const std::uint16_t mant = static_cast<std::uint16_t>(((mag << 10) >> e) & 0x3ff);
          bits = static_cast<std::uint16_t>(sign | ((e - 8 + 15) << 10) | mant);
        }
      }
      put<std::uint16_t>(bytes, i, bits);
      break;
    }
    case DType::Float32:
      put<float>(bytes, i, extreme() ? one_of(rng, special_floats()) : std::uniform_real_distribution<float>(-2, 2)(rng));
      break;
    case DType::Float64: {
      // Beyond float's range, below its subnormals, and values that need rounding.
      static const std::vector<double> wild_values = {1e300, -1e300, 1e-310, 0.1, -0.0, 3.4028235677973366e38,
                                                      std::numeric_limits<double>::quiet_NaN()};
      put<double>(bytes, i, extreme() ? one_of(rng, wild_values) : std::uniform_real_distribution<double>(-2, 2)(rng));
      break;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Declarations

const std::vector<TensorSpec>& random_tensors() {
  static const std::vector<TensorSpec> v = {
      {"ti8", DType::Int8, {7}, {}},
      {"ti16", DType::Int16, {3, 4}, {1, 3}},  // column-major
      {"ti32", DType::Int32, {8}, {}},
      {"ti64", DType::Int64, {5}, {}},
      {"tu8", DType::UInt8, {6}, {}},
      {"tb", DType::Bool, {5}, {}},
      {"th", DType::Float16, {4, 3}, {}},
      {"tbf", DType::BFloat16, {9}, {2}},       // every other element
      {"tf", DType::Float32, {2, 3, 4}, {20, 5, 1}},  // padded rows and planes
      {"td", DType::Float64, {6}, {}},
  };
  return v;
}

ir::Program random_decls() {
  ir::Program p;
  p.name = "random";
  p.scalars = {{"n", Type::Int, {}}, {"m", Type::Int, {}}, {"x", Type::Float, {}}, {"y", Type::Float, {}},
               {"c", Type::Bool, {}}};
  for (const TensorSpec& t : random_tensors())
    p.captures.push_back({t.name, t.dtype, static_cast<int>(t.shape.size()), {}});
  return p;
}

// ---------------------------------------------------------------------------------------------
// Expressions

Expr ExprGenerator::gen(Type t, int depth) {
  if (depth <= 0 || chance(0.12)) return leaf(t);
  return node(t, depth - 1);
}

Expr ExprGenerator::leaf(Type t) {
  std::vector<Expr> lets;
  for (const auto& [name, ty] : lets_)
    if (ty == t) lets.push_back(ir::Var::make(name, ty, ir::VarKind::Let));
  if (!lets.empty() && chance(0.4)) return one_of(rng_, lets);
  const bool var = chance(0.5);
  auto param = [](const char* n, Type ty) { return ir::Var::make(n, ty, ir::VarKind::Param); };
  auto scalar = [](const char* n, Type ty) { return ir::Var::make(n, ty, ir::VarKind::Scalar); };
  switch (t) {
    case Type::Int: {
      if (var)
        return one_of(rng_, std::vector<Expr>{param(ir::kParamBatch, t), param(ir::kParamHead, t), param(ir::kParamQ, t),
                                              param(ir::kParamKv, t), scalar("n", t), scalar("m", t)});
      static const std::vector<std::int64_t> special = {0, 1, -1, 2, 3, 7, 8, 31, 63, 64, 65, -64, 100, 1 << 20,
                                                        (std::int64_t(1) << 31) - 1, kI64Min, kI64Max, kI64Min + 1};
      return ir::IntImm::make(chance(0.5) ? one_of(rng_, special) : uniform(rng_, -20, 20));
    }
    case Type::Float:
      if (var) return one_of(rng_, std::vector<Expr>{param(ir::kParamScore, t), scalar("x", t), scalar("y", t)});
      return ir::FloatImm::make(chance(0.5) ? one_of(rng_, special_floats())
                                            : std::uniform_real_distribution<float>(-10, 10)(rng_));
    case Type::Bool:
      if (var) return scalar("c", t);
      return ir::BoolImm::make(chance(0.5));
  }
  return {};
}

Expr ExprGenerator::index(std::int64_t extent, int depth) {
  Expr raw = gen(Type::Int, depth);
  if (chance(0.85)) return ir::Binary::make(BinaryOp::Mod, raw, ir::IntImm::make(extent));  // in range
  return raw;  // may be out of range: then both sides must report it
}

Expr ExprGenerator::load(Type t, int depth) {
  std::vector<const TensorSpec*> fits;
  for (const TensorSpec& s : random_tensors())
    if (ir::value_type(s.dtype) == t) fits.push_back(&s);
  const TensorSpec& s = *one_of(rng_, fits);
  std::vector<Expr> idx;
  for (std::int64_t e : s.shape) idx.push_back(index(e, depth));
  Expr l = ir::Load::make(s.name, s.dtype, idx);
  if (s.shape.size() == 1 && chance(0.3)) {
    // The guard idiom: `0 <= i && i < n && t[i]`-style, the load only under the guard.
    Expr i = gen(Type::Int, depth);
    Expr ok = ir::Binary::make(BinaryOp::And, ir::Compare::make(CompareOp::GE, i, ir::IntImm::make(0)),
                               ir::Compare::make(CompareOp::LT, i, ir::IntImm::make(s.shape[0])));
    return ir::Select::make(ok, ir::Load::make(s.name, s.dtype, {i}), gen(t, depth));
  }
  return l;
}

Expr ExprGenerator::node(Type t, int d) {
  switch (pick(8)) {
    case 0: return ir::Cast::make(t, gen(static_cast<Type>(pick(3)), d));
    case 1: return ir::Select::make(gen(Type::Bool, d), gen(t, d), gen(t, d));
    case 2: {
      const std::string name = "v" + std::to_string(next_let_++);
      const Type vt = static_cast<Type>(pick(3));
      Expr value = gen(vt, d);
      lets_.emplace_back(name, vt);
      Expr body = gen(t, d);
      lets_.pop_back();
      return ir::Let::make(name, value, body);
    }
    case 3: return load(t, d);
    default: return op(t, d);
  }
}

Expr ExprGenerator::op(Type t, int d) {
  switch (t) {
    case Type::Int:
      switch (pick(6)) {
        case 0: return ir::Unary::make(chance(0.5) ? UnaryOp::Neg : UnaryOp::BitNot, gen(t, d));
        case 1: return ir::Call::make(chance(0.5) ? Intrinsic::FloorToInt : Intrinsic::CeilToInt, {gen(Type::Float, d)});
        case 2: return ir::Call::make(Intrinsic::Abs, {gen(t, d)});
        case 3: {  // Int pow with a small non-negative or a negative exponent
          Expr e = chance(0.7) ? ir::IntImm::make(uniform(rng_, -3, 70)) : gen(t, d);
          return ir::Binary::make(BinaryOp::Pow, gen(t, d), e);
        }
        default: {
          static const std::vector<BinaryOp> ops = {BinaryOp::Add,    BinaryOp::Sub,    BinaryOp::Mul,    BinaryOp::FloorDiv,
                                                    BinaryOp::Mod,    BinaryOp::Min,    BinaryOp::Max,    BinaryOp::BitAnd,
                                                    BinaryOp::BitOr,  BinaryOp::BitXor, BinaryOp::Shl,    BinaryOp::Shr};
          return ir::Binary::make(one_of(rng_, ops), gen(t, d), gen(t, d));
        }
      }
    case Type::Float:
      switch (pick(4)) {
        case 0: return ir::Unary::make(UnaryOp::Neg, gen(t, d));
        case 1: {
          static const std::vector<Intrinsic> fns = {Intrinsic::Exp,   Intrinsic::Exp2, Intrinsic::Log,     Intrinsic::Log2,
                                                     Intrinsic::Log1p, Intrinsic::Sqrt, Intrinsic::Rsqrt,   Intrinsic::Tanh,
                                                     Intrinsic::Sigmoid, Intrinsic::Sin, Intrinsic::Cos,    Intrinsic::Floor,
                                                     Intrinsic::Ceil,  Intrinsic::Abs};
          return ir::Call::make(one_of(rng_, fns), {gen(t, d)});
        }
        default: {
          static const std::vector<BinaryOp> ops = {BinaryOp::Add,      BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                                                    BinaryOp::FloorDiv, BinaryOp::Mod, BinaryOp::Pow, BinaryOp::Min,
                                                    BinaryOp::Max};
          return ir::Binary::make(one_of(rng_, ops), gen(t, d), gen(t, d));
        }
      }
    case Type::Bool:
      switch (pick(4)) {
        case 0: return ir::Unary::make(UnaryOp::Not, gen(t, d));
        case 1: {
          static const std::vector<BinaryOp> ops = {BinaryOp::And, BinaryOp::Or, BinaryOp::BitAnd, BinaryOp::BitOr,
                                                    BinaryOp::BitXor};
          return ir::Binary::make(one_of(rng_, ops), gen(t, d), gen(t, d));
        }
        default: {
          static const std::vector<CompareOp> ops = {CompareOp::LT, CompareOp::LE, CompareOp::GT,
                                                     CompareOp::GE, CompareOp::EQ, CompareOp::NE};
          const Type operand = static_cast<Type>(pick(3));
          return ir::Compare::make(one_of(rng_, ops), gen(operand, d), gen(operand, d));
        }
      }
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Worlds

RandomWorld RandomWorld::for_random_decls(std::mt19937_64& rng) {
  RandomWorld w;
  static const std::vector<std::int64_t> ints = {0, 1, -1, 63, 64, kI64Min, kI64Max, -8, 3};
  auto some_float = [&] {
    return uniform(rng, 0, 2) == 0 ? one_of(rng, special_floats()) : std::uniform_real_distribution<float>(-8, 8)(rng);
  };
  w.env.scalars["n"] = ir::Value::integer(uniform(rng, 0, 3) == 0 ? one_of(rng, ints) : uniform(rng, -20, 20));
  w.env.scalars["m"] = ir::Value::integer(uniform(rng, 0, 3) == 0 ? one_of(rng, ints) : uniform(rng, -20, 20));
  w.env.scalars["x"] = ir::Value::real(some_float());
  w.env.scalars["y"] = ir::Value::real(some_float());
  w.env.scalars["c"] = ir::Value::boolean(uniform(rng, 0, 1) == 1);
  for (const TensorSpec& t : random_tensors()) {
    const std::size_t n = storage_elements(t);
    std::vector<unsigned char> bytes(n * static_cast<std::size_t>(ir::dtype_size(t.dtype)));
    for (std::size_t i = 0; i < n; ++i) random_element(bytes, i, t.dtype, true, rng);
    w.storage_.push_back(std::move(bytes));
    w.env.tensors[t.name] = {t.dtype, t.shape, t.strides, w.storage_.back().data()};
  }
  w.randomize_params(rng);
  return w;
}

RandomWorld RandomWorld::for_program(const ir::Program& p, std::int64_t extent, std::mt19937_64& rng) {
  RandomWorld w;
  for (const ir::Scalar& s : p.scalars) {
    if (s.is_shape_value()) continue;  // read from the tensors below
    switch (s.type) {
      case Type::Int: w.env.scalars[s.name] = ir::Value::integer(uniform(rng, 1, 64)); break;
      case Type::Float: w.env.scalars[s.name] = ir::Value::real(std::uniform_real_distribution<float>(0.5f, 50)(rng)); break;
      case Type::Bool: w.env.scalars[s.name] = ir::Value::boolean(uniform(rng, 0, 1) == 1); break;
    }
  }
  for (const ir::Capture& c : p.captures) {
    std::size_t n = 1;
    for (int d = 0; d < c.rank; ++d) n *= static_cast<std::size_t>(extent);
    std::vector<unsigned char> bytes(n * static_cast<std::size_t>(ir::dtype_size(c.dtype)));
    for (std::size_t i = 0; i < n; ++i) random_element(bytes, i, c.dtype, false, rng);
    w.storage_.push_back(std::move(bytes));
    w.env.tensors[c.name] = {c.dtype, std::vector<std::int64_t>(c.rank, extent), {}, w.storage_.back().data()};
  }
  ir::bind_shape_values(p, w.env);
  w.randomize_params(rng);
  return w;
}

void RandomWorld::randomize_params(std::mt19937_64& rng) {
  auto position = [&]() -> std::int64_t {
    if (uniform(rng, 0, 9) == 0) return one_of<std::int64_t>(rng, {0, (std::int64_t(1) << 31) - 1, 1 << 20});
    return uniform(rng, 0, 20);
  };
  env.b = position();
  env.h = position();
  env.q_idx = position();
  env.kv_idx = position();
  env.score = uniform(rng, 0, 2) == 0 ? one_of(rng, special_floats()) : std::uniform_real_distribution<float>(-8, 8)(rng);
}

}  // namespace cpu_test
