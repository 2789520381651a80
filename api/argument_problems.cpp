#include "api/argument_problems.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "flexjit/error.hpp"

namespace flexjit::api {

void Problems::raise_if_any(const std::string& context) const {
  if (list_.empty()) return;
  if (list_.size() == 1) throw ArgumentError(fmt::format("{}: {}", context, list_.front()));
  std::string text = fmt::format("{}: {} problems:", context, list_.size());
  for (const auto& p : list_) text += "\n  " + p;
  throw ArgumentError(text);
}

std::string format_dims(const std::vector<std::int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

}  // namespace flexjit::api
