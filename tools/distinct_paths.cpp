#include "tools/distinct_paths.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "dsl/quoted.hpp"

namespace flexjit::tools {
namespace {

namespace fs = std::filesystem;

// Absolute, with the links and ".." of its existing part resolved.
fs::path resolved(const std::string& path) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec).lexically_normal();
  fs::path p = fs::weakly_canonical(absolute, ec);
  return ec ? absolute : p;
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);  // links included
  return resolved(a) == resolved(b);
}

}  // namespace

void require_distinct_outputs(const std::vector<NamedPath>& inputs, const std::vector<NamedPath>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty()) continue;
    auto refuse = [&](const NamedPath& other) {
      throw std::runtime_error(fmt::format("{} {} is the same file as {} {}; nothing was written", out.option,
                                           dsl::quoted(out.path), other.option, dsl::quoted(other.path)));
    };
    for (const NamedPath& in : inputs)
      if (!in.path.empty() && same_file(out.path, in.path)) refuse(in);
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(out.path, outputs[j].path)) refuse(outputs[j]);
  }
}

}  // namespace flexjit::tools
