#include "tools/dtype_option.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

#include "dsl/quoted.hpp"

namespace flexjit::tools {
namespace {

struct DTypeName {
  const char* name;
  DType dtype;
};

// "fp8" is the short name users type; "fp8_e4m3" is what dtype_name prints, so it reads back.
constexpr DTypeName kDTypeNames[] = {
    {"bf16", DType::bf16}, {"fp16", DType::fp16}, {"fp8", DType::fp8_e4m3}, {"fp8_e4m3", DType::fp8_e4m3}};

}  // namespace

std::vector<std::string> dtype_option_names() {
  std::vector<std::string> names;
  for (const DTypeName& n : kDTypeNames) names.emplace_back(n.name);
  return names;
}

DType parse_dtype_option(const std::string& name) {
  for (const DTypeName& n : kDTypeNames)
    if (name == n.name) return n.dtype;
  throw std::runtime_error(
      fmt::format("--dtype {}: expected one of {}", dsl::quoted(name), fmt::join(dtype_option_names(), ", ")));
}

}  // namespace flexjit::tools
