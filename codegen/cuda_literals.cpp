#include "codegen/cuda_literals.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace flexjit::codegen {

std::string int_literal(std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
  return v < 0 ? fmt::format("({}LL)", v) : fmt::format("{}LL", v);
}

std::string float_literal(float v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  std::string s = fmt::format("{}", v);  // shortest text that reads back as the same float
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  s += "f";
  return v < 0 || std::signbit(v) ? "(" + s + ")" : s;
}

}  // namespace flexjit::codegen
