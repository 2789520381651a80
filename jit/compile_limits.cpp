#include "jit/compile_limits.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <algorithm>
#include <string>

#include "dsl/quoted.hpp"
#include "flexjit/error.hpp"

namespace flexjit::jit {
namespace {

// The value of `name` as a positive finite number, or nullopt when unset or empty.
std::optional<double> positive_number(const char* name, const char* unit) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !std::isfinite(value) || value <= 0)
    throw NvrtcError(fmt::format("flexjit: {}={} is not a positive number of {}", name, dsl::quoted(text), unit), "");
  return value;
}

}  // namespace

CompileLimits compile_limits_from_environment() {
  CompileLimits limits;
  if (auto s = positive_number("FLEXJIT_COMPILE_TIMEOUT", "seconds")) limits.seconds = *s;
  if (auto mb = positive_number("FLEXJIT_COMPILE_MEMORY_MB", "MiB")) limits.memory_bytes = mib_to_bytes(*mb);
  return limits;
}

std::uint64_t mib_to_bytes(double mib) {
  // Past 2^44 MiB the byte count would not fit in 64 bits; nobody means that much.
  return static_cast<std::uint64_t>(std::min(mib, 0x1p44) * 1048576.0);
}

}  // namespace flexjit::jit
