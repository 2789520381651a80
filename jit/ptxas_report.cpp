#include "jit/ptxas_report.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>

namespace flexjit::jit {
namespace {

// The integer right before `suffix` in `line` (as in "312 bytes spill stores"), or -1.
int number_before(std::string_view line, std::string_view suffix) {
  const std::size_t at = line.find(suffix);
  if (at == std::string_view::npos) return -1;
  std::size_t begin = at;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  int value = -1;
  std::from_chars(line.data() + begin, line.data() + at, value);
  return value;
}

constexpr std::string_view kPropertiesFor = "Function properties for ";

// The text between the quotes after `marker`, or "".
std::string_view quoted_after(std::string_view line, std::string_view marker) {
  const std::size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  const std::size_t open = at + marker.size();
  const std::size_t close = line.find('\'', open);
  return close == std::string_view::npos ? std::string_view{} : line.substr(open, close - open);
}

}  // namespace

const PtxasFunction* PtxasReport::function(std::string_view name) const {
  for (const PtxasFunction& f : functions)
    if (f.name == name) return &f;
  return nullptr;
}

PtxasReport parse_ptxas_report(std::string_view log) {
  PtxasReport report;
  // The function the figure lines describe: the entry being compiled, or none once ptxas moves on
  // to the properties of a device function it calls (those are not the entry's).
  PtxasFunction* current = nullptr;
  while (!log.empty()) {
    const std::size_t end = log.find('\n');
    const std::string_view line = log.substr(0, end);
    log = end == std::string_view::npos ? std::string_view{} : log.substr(end + 1);

    // ptxas prints the wgmma serializations (C7508-C7515) as "info" lines under --verbose.
    const bool warning = line.find("warning") != std::string_view::npos ||
                         line.find("Potential Performance Loss") != std::string_view::npos;
    if (warning && line.find("ptxas") != std::string_view::npos) {
      report.warnings.emplace_back(line);
    } else if (std::string_view name = quoted_after(line, "Compiling entry function '"); !name.empty()) {
      report.functions.push_back({.name = std::string(name)});
      current = &report.functions.back();
    } else if (const std::size_t at = line.find(kPropertiesFor); at != std::string_view::npos) {
      std::string_view name = line.substr(at + kPropertiesFor.size());
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.remove_suffix(1);
      current = current && current->name == name ? current : nullptr;
    } else if (current == nullptr) {
      continue;
    } else if (const int stack = number_before(line, " bytes stack frame"); stack >= 0) {
      current->stack_bytes = stack;
      current->spill_store_bytes = std::max(0, number_before(line, " bytes spill stores"));
      current->spill_load_bytes = std::max(0, number_before(line, " bytes spill loads"));
    } else if (const int registers = number_before(line, " registers"); registers >= 0) {
      current->registers = registers;
    }
  }
  return report;
}

bool is_silent_slowdown(std::string_view warning) {
  for (std::string_view code : {"C7508", "C7510", "C7511", "C7512", "C7513", "C7514", "C7515"})
    if (warning.find(code) != std::string_view::npos) return true;
  return false;
}

}  // namespace flexjit::jit
