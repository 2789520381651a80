#pragma once
// A small indented line writer for generated CUDA, which also puts the DSL source line a piece
// of code came from above it as a comment (once per line), so users can map code to program.
#include <string>
#include <string_view>

#include "dsl/source.hpp"

namespace flexjit::codegen {

// User text made safe to put after `//` in generated code: backslashes, control characters and
// non-ASCII bytes become '?', so it can neither end the comment nor continue it.
std::string comment_text(std::string_view text);
// How generated code names the program's file: its last path component, comment-safe. Where the
// file lives is not part of the kernel (nor of its cache key).
std::string program_file_name(const std::string& path);

class CudaWriter {
 public:
  explicit CudaWriter(const dsl::SourceFile* source = nullptr) : source_(source) {}

  void line(const std::string& text = "");
  void indent() { indent_ += 2; }
  void dedent() { indent_ -= 2; }
  // Writes "// file.py:12: <source line>" when pos is on a line not commented just before.
  void source_comment(dsl::SourcePos pos);
  void forget_comment() { last_line_ = -1; }
  const std::string& str() const { return out_; }

 private:
  const dsl::SourceFile* source_;
  std::string out_;
  int indent_ = 0;
  int last_line_ = -1;
};

}  // namespace flexjit::codegen
