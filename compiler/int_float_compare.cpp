#include "compiler/int_float_compare.hpp"

#include <cmath>
#include <limits>

namespace flexjit::compiler {

namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

float to_float(std::int64_t n) { return static_cast<float>(n); }  // round to nearest even

// The least n with holds(n), for a predicate false then true along int64 (monotone).
template <class P>
std::optional<std::int64_t> first_int(P holds) {
  if (!holds(kMax)) return std::nullopt;
  if (holds(kMin)) return kMin;
  std::int64_t lo = kMin, hi = kMax;  // holds(lo) false, holds(hi) true
  while (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) > 1) {
    const std::int64_t mid = static_cast<std::int64_t>(
        static_cast<std::uint64_t>(lo) + (static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo)) / 2);
    (holds(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

std::optional<std::int64_t> first_int_at_least(float f) {
  return first_int([f](std::int64_t n) { return to_float(n) >= f; });
}

std::optional<std::int64_t> first_int_above(float f) {
  return first_int([f](std::int64_t n) { return to_float(n) > f; });
}

std::optional<IntSolutions> int_solutions(ir::CompareOp op, float f) {
  if (std::isnan(f)) return std::nullopt;
  const std::optional<std::int64_t> at_least = first_int_at_least(f), above = first_int_above(f);
  IntSolutions r;
  // x < n for the n that starts a range [n, ...): with no such n, every x.
  auto below = [](std::optional<std::int64_t> n) {
    IntSolutions s;
    if (n && *n == kMin) s.never = true;
    else s.hi = n;
    return s;
  };
  auto from = [](std::optional<std::int64_t> n) {
    IntSolutions s;
    if (!n) s.never = true;
    else if (*n != kMin) s.lo = n;
    return s;
  };
  switch (op) {
    case ir::CompareOp::LT: return below(at_least);
    case ir::CompareOp::LE: return below(above);
    case ir::CompareOp::GE: return from(at_least);
    case ir::CompareOp::GT: return from(above);
    case ir::CompareOp::EQ: {
      r = from(at_least);
      if (r.never) return r;
      const IntSolutions upper = below(above);
      if (upper.never) return upper;
      r.hi = upper.hi;
      if (r.lo && r.hi && *r.lo >= *r.hi) r.never = true;
      return r;
    }
    case ir::CompareOp::NE: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace flexjit::compiler
