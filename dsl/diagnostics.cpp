// Rendering of diagnostics (file:line:col, the source line, a caret underline) and the
// "did you mean" helper.
#include "dsl/diagnostics.hpp"

#include <algorithm>

namespace flexjit::dsl {
namespace {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

flexjit::Diagnostic::Severity public_severity(Severity s) {
  switch (s) {
    case Severity::Error: return flexjit::Diagnostic::Severity::error;
    case Severity::Warning: return flexjit::Diagnostic::Severity::warning;
    case Severity::Note: return flexjit::Diagnostic::Severity::note;
  }
  return flexjit::Diagnostic::Severity::error;
}

std::vector<flexjit::Diagnostic> public_diagnostics(const SourceFile& file, const std::vector<Diagnostic>& diags) {
  std::vector<flexjit::Diagnostic> out;
  for (const auto& d : diags)
    out.push_back({public_severity(d.severity), file.name(), d.pos.known() ? d.pos.line : 0,
                   d.pos.known() ? d.pos.col : 0, d.message});
  return out;
}

std::string format_all(const SourceFile& file, const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) out += format_diagnostic(file, d);
  return out;
}

// Edit distance where swapping two adjacent characters counts as one edit (optimal string
// alignment), so the common typo "tahn" for "tanh" is one edit away.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, subst});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::string format_diagnostic(const SourceFile& file, const Diagnostic& d) {
  std::string out = file.name();
  if (d.pos.known()) out += ":" + std::to_string(d.pos.line) + ":" + std::to_string(d.pos.col);
  out += ": ";
  out += severity_name(d.severity);
  out += ": " + d.message + "\n";
  if (!d.pos.known() || d.pos.line > file.line_count()) return out;

  std::string_view line = file.line_text(d.pos.line);
  out += "    ";
  out += line;
  out += "\n    ";
  // Columns count bytes; the caret line counts what a terminal shows: tabs are copied so the
  // caret lands under the same column, and UTF-8 continuation bytes take no room.
  auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  const std::size_t col = static_cast<std::size_t>(std::max(d.pos.col - 1, 0));
  for (std::size_t i = 0; i < col; ++i) {
    if (i >= line.size()) out += ' ';
    else if (line[i] == '\t') out += '\t';
    else if (!continuation(line[i])) out += ' ';
  }
  out += '^';
  // One '~' per further character of the token; the underline stops at the end of the line.
  const std::size_t end = std::min(line.size(), col + static_cast<std::size_t>(std::max(d.pos.length, 1)));
  for (std::size_t i = col + 1; i < end; ++i)
    if (!continuation(line[i])) out += '~';
  out += "\n";
  return out;
}

CompileError::CompileError(const SourceFile& file, const std::vector<Diagnostic>& diags)
    : flexjit::CompileError(format_all(file, diags), public_diagnostics(file, diags)) {}

void user_error(const SourceFile& file, SourcePos pos, const std::string& message) {
  throw CompileError(file, {Diagnostic{Severity::Error, pos, message}});
}

// Identical names are skipped: "did you mean 'x'?" about the name the user typed helps nobody.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == name) continue;
    std::size_t dist = edit_distance(name, c);
    if (dist < best_distance) {  // strict: the earliest candidate wins a tie
      best_distance = dist;
      best = c;
    }
  }
  return best;
}

}  // namespace flexjit::dsl
