#include "jit/compile_diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>
#include <vector>

namespace flexjit::jit {
namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

struct ErrorLocation {
  std::string_view file;
  int line = 0;
};

// Recognises "name(123): error: ..." and "name(123): catastrophic error: ...". Warnings are left
// alone: they are in the log for whoever wants them and rarely explain a failed build.
bool parse_error_line(std::string_view line, ErrorLocation& out) {
  auto open = line.find('(');
  if (open == std::string_view::npos || open == 0) return false;
  auto close = line.find("): ", open);
  if (close == std::string_view::npos) return false;
  std::string_view number = line.substr(open + 1, close - open - 1);
  int value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || value <= 0) return false;
  std::string_view rest = line.substr(close + 3);
  if (!rest.starts_with("error") && !rest.starts_with("catastrophic error")) return false;
  out = {line.substr(0, open), value};
  return true;
}

}  // namespace

std::string excerpt_error_lines(std::string_view log, std::span<const NamedText> files,
                                ExcerptOptions options) {
  std::string out;
  std::set<std::pair<std::string_view, int>> shown;
  int errors = 0;
  for (std::string_view log_line : split_lines(log)) {
    ErrorLocation where;
    if (!parse_error_line(log_line, where)) continue;
    auto file = std::find_if(files.begin(), files.end(),
                             [&](const NamedText& f) { return f.name == where.file; });
    if (file == files.end() || !shown.insert({where.file, where.line}).second) continue;
    if (errors++ == options.max_errors) {
      out += "(further errors not shown)\n";
      break;
    }
    std::vector<std::string_view> lines = split_lines(file->text);
    if (where.line > static_cast<int>(lines.size())) continue;
    int first = std::max(1, where.line - options.context_lines);
    int last = std::min(static_cast<int>(lines.size()), where.line + options.context_lines);
    int width = static_cast<int>(std::to_string(last).size());
    out += fmt::format("{}:{}:\n", where.file, where.line);
    for (int n = first; n <= last; ++n) {
      out += fmt::format("{} {:>{}} | {}\n", n == where.line ? '>' : ' ', n, width, lines[n - 1]);
    }
  }
  return out;
}

}  // namespace flexjit::jit
