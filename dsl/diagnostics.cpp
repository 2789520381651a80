// Rendering of diagnostics (file:line:col, the source line, a caret underline) and the
// "did you mean" helper.
#include "dsl/diagnostics.hpp"

#include <algorithm>
#include <string_view>

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

// Suggestions are at most this many edits away, so the distance only has to be computed in a
// band around the diagonal: time and memory stay linear in the name's length however long it is.
constexpr std::size_t kMaxSuggestionEdits = 4;

// Edit distance where swapping two adjacent characters counts as one edit (optimal string
// alignment), so the common typo "tahn" for "tanh" is one edit away; any distance above `cap`
// comes back as cap + 1. Cells further than `cap` from the diagonal cannot be within the cap, so
// each row computes only the band [i - cap, i + cap]; three rows are kept (a swap looks two back).
std::size_t bounded_edit_distance(std::string_view a, std::string_view b, std::size_t cap) {
  const std::size_t n = a.size(), m = b.size(), too_far = cap + 1;
  if ((n > m ? n - m : m - n) > cap) return too_far;
  std::vector<std::size_t> two_back(m + 1, too_far), back(m + 1, too_far), row(m + 1, too_far);
  for (std::size_t j = 0; j <= std::min(m, cap); ++j) back[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    const std::size_t lo = i > cap ? i - cap : 1, hi = std::min(m, i + cap);
    row[lo - 1] = lo == 1 ? std::min(i, too_far) : too_far;  // the band's edges: the first
    if (hi < m) row[hi + 1] = too_far;                        // column, or out of reach
    std::size_t best = row[lo - 1];
    for (std::size_t j = lo; j <= hi; ++j) {
      std::size_t d = std::min({back[j] + 1, row[j - 1] + 1, back[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d = std::min(d, two_back[j - 2] + 1);
      row[j] = std::min(d, too_far);
      best = std::min(best, row[j]);
    }
    if (best > cap) return too_far;  // every later row only grows
    std::swap(two_back, back);
    std::swap(back, row);
  }
  return back[m];
}

}  // namespace

std::string format_diagnostic(const SourceFile& file, const Diagnostic& d) {
  std::string out = file.name();
  if (d.pos.known()) {  // appended piece by piece: GCC 12 -O3 warns (-Wrestrict) on a + b + c here
    out += ':';
    out += std::to_string(d.pos.line);
    out += ':';
    out += std::to_string(d.pos.col);
  }
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

// Candidates within max(1, length / 3) edits, capped at kMaxSuggestionEdits, are suggested.
// Identical names are skipped: "did you mean 'x'?" about the name the user typed helps nobody.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  const std::size_t limit = std::clamp<std::size_t>(name.size() / 3, 1, kMaxSuggestionEdits);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    if (c == name) continue;
    std::size_t dist = bounded_edit_distance(name, c, limit);
    if (dist < best_distance) {  // strict: the earliest candidate wins a tie
      best_distance = dist;
      best = c;
    }
  }
  return best;
}

}  // namespace flexjit::dsl
