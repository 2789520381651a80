// Turns an NVRTC log into something a person can act on: for every `file(LINE): error ...` line
// the generated source around LINE is shown, numbered, with a marker on LINE. Generated code has
// no file on disk to open, so the excerpt has to travel inside the error message.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace flexjit::jit {

struct NamedText {
  std::string_view name;  // as NVRTC prints it in the log (program name or header name)
  std::string_view text;
};

struct ExcerptOptions {
  int context_lines = 3;  // lines shown on each side of the error line
  int max_errors = 10;    // keep messages bounded when one mistake cascades
};

// Returns "" when the log has no error line that points into one of `files`.
std::string excerpt_error_lines(std::string_view log, std::span<const NamedText> files,
                                ExcerptOptions options = {});

}  // namespace flexjit::jit
