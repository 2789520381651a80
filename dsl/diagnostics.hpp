#pragma once
// Diagnostics: the user's fault, reported with file:line:col, the source line and a caret.
// (Internal invariants use internal_error in compiler/ instead.)
#include <string>
#include <vector>

#include "dsl/source.hpp"
#include "flexjit/error.hpp"

namespace flexjit::dsl {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourcePos pos;
  std::string message;
};

// Renders one diagnostic as
//   file.py:7:12: error: name 'windw' is not defined; did you mean 'window'?
//       return 0 <= q_idx - kv_idx < windw
//                                    ^~~~~
std::string format_diagnostic(const SourceFile& file, const Diagnostic& d);

// Thrown by the parser and the checker: the public flexjit::CompileError, built from positions in
// a source file. what() is the fully formatted text of all diagnostics; diagnostics() has each
// one as data (file, line, column, message).
class CompileError : public flexjit::CompileError {
 public:
  CompileError(const SourceFile& file, const std::vector<Diagnostic>& diags);
};

// Throws CompileError with a single error at pos.
[[noreturn]] void user_error(const SourceFile& file, SourcePos pos, const std::string& message);

// "did you mean 'x'?" helper: the closest candidate by edit distance, or "" if none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace flexjit::dsl
