#pragma once
// An Int compared with an fp32 constant, as an exact condition on the Int. The language converts
// the Int to fp32 before comparing (round to nearest even: the interpreter, the LLVM back end and
// the CUDA code convert alike), so for |x| >= 2^24 `float(x) < f` is not `x < f` in general. The
// conversion is monotone, though, so `float(x) op f` holds exactly for the int64 values x in one
// interval, found here by bisection over the whole int64 range: no limit on magnitudes.
#include <cstdint>
#include <optional>

#include "ir/ir.hpp"

namespace flexjit::compiler {

// float(x) op f  <=>  lo <= x < hi, for every int64 x (a missing end is unbounded on that side).
// `never` when no x satisfies it. NE (true outside one interval) and a NaN bound give nullopt:
// the caller falls back to an unbounded answer.
struct IntSolutions {
  bool never = false;
  std::optional<std::int64_t> lo, hi;
};
std::optional<IntSolutions> int_solutions(ir::CompareOp op, float f);

// The least int64 n with float(n) >= f (or float(n) > f), if there is one.
std::optional<std::int64_t> first_int_at_least(float f);
std::optional<std::int64_t> first_int_above(float f);

// The largest magnitude m such that an Int y with |y| <= m and y +- 1 all convert to fp32
// exactly; for such y, float(x) op float(y) <=> x op y for every Int x.
inline constexpr std::int64_t kExactIntInFloat = (std::int64_t{1} << 24) - 1;

}  // namespace flexjit::compiler
