#pragma once
// The IR interpreter: the executable specification of the language's semantics. Constant
// folding (simplify) calls the same eval_* functions, the CUDA code generator must match them
// bit for bit, and GPU tests use evaluate() as their reference.
//
// Semantics:
//   Int   int64 two's complement; + - * neg abs and Int pow wrap on overflow.
//         a // b and a % b floor like Python; x // 0 == 0 and x % 0 == 0. Int pow with a negative
//         exponent (lowering makes those Float) truncates the real result: 1, +-1 for base -1, else 0.
//         Shl / Shr with a count outside [0, 63] give 0 / (a < 0 ? -1 : 0); Shr is arithmetic.
//   Float IEEE fp32; every operation rounds to float (computed in float, never in double).
//         a // b == floorf(a / b); a % b == a - floorf(a / b) * b (no fused multiply-add);
//         pow == powf; min / max == fminf / fmaxf; sigmoid(x) == 1 / (1 + expf(-x));
//         rsqrt(x) == 1 / sqrtf(x); floor / ceil stay Float; floor_to_int / ceil_to_int cast.
//   Cast  float -> int truncates toward zero, NaN and +-inf give 0, finite values out of range
//         saturate; int -> float rounds to nearest; x -> bool is x != 0; bool -> int is 0 / 1.
//   And / Or short-circuit and Select evaluates only the chosen branch (as C's && || ?: do), so
//         a guard like `kv_idx < n && doc[kv_idx] > 0` never reads doc out of range.
//   Load  half / bfloat16 convert to float exactly, float64 rounds to float, integer dtypes to
//         Int, bool to Bool. An index outside the bound shape throws std::runtime_error (the GPU
//         does not check: that is the mod author's contract).
// Parameters b, h, q_idx, kv_idx are positions: the simplifier assumes they lie in [0, 2^31).
#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace flexjit::ir {

struct Value {
  Type type = Type::Int;
  bool b = false;      // valid when type == Bool
  std::int64_t i = 0;  // valid when type == Int
  float f = 0.0f;      // valid when type == Float

  static Value boolean(bool v);
  static Value integer(std::int64_t v);
  static Value real(float v);
  // Checked accessors: InternalError when the value has another type.
  bool as_bool() const;
  std::int64_t as_int() const;
  float as_float() const;
  std::string to_string() const;  // "true", "-3", "0.5", "-inf", "nan"
};
// Same type and same bits, except that any NaN equals any NaN.
bool identical(const Value& a, const Value& b);
std::ostream& operator<<(std::ostream& os, const Value& v);

// A host tensor bound to a capture.
struct TensorBinding {
  DType dtype = DType::Float32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;  // in elements; empty means contiguous row-major
  const void* data = nullptr;
};

struct Env {
  // Mod parameters (Var of VarKind::Param).
  std::int64_t b = 0, h = 0, q_idx = 0, kv_idx = 0;
  float score = 0.0f;
  std::map<std::string, Value> scalars;  // runtime scalars by name; the type must match
  std::map<std::string, TensorBinding> tensors;  // captured tensors by name; the dtype must match
  std::map<std::string, std::int64_t> tile_bounds;  // Vars of VarKind::Tile (analysis results)
};

// Evaluates e. Throws std::runtime_error for an unbound scalar or tensor, a scalar of the wrong
// type, a tensor of the wrong dtype or rank, or an index out of range.
Value evaluate(const Expr& e, const Env& env);

// One operation on already evaluated operands (operand types as make() requires; InternalError
// otherwise). And / Or here see both operands: short-circuiting is evaluate()'s business.
Value eval_unary(UnaryOp op, const Value& a);
Value eval_binary(BinaryOp op, const Value& a, const Value& b);
Value eval_compare(CompareOp op, const Value& a, const Value& b);
Value eval_cast(Type to, const Value& a);
Value eval_call(Intrinsic fn, const std::vector<Value>& args);

// Exact conversions of the 16-bit float formats.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

// A program's mods at one position; env supplies the scalars and tensors (its own parameter
// fields are ignored). A missing mask_mod keeps every key (true), a missing score_mod returns
// score unchanged, a missing sink returns -inf (it adds exp(-inf) == 0 to the denominator).
bool eval_mask(const Program& p, const Env& env, std::int64_t b, std::int64_t h, std::int64_t q_idx,
               std::int64_t kv_idx);
float eval_score(const Program& p, const Env& env, std::int64_t b, std::int64_t h, std::int64_t q_idx,
                 std::int64_t kv_idx, float score);
float eval_sink(const Program& p, const Env& env, std::int64_t b, std::int64_t h);

}  // namespace flexjit::ir
