#pragma once
// A DSL source file and positions inside it. Every AST node, IR node and diagnostic
// carries a SourcePos so errors at any stage point back at the user's line and column.
#include <string>
#include <string_view>
#include <vector>

namespace flexjit::dsl {

struct SourcePos {
  int line = 0;    // 1-based; 0 = unknown
  int col = 0;     // 1-based, in bytes
  int length = 1;  // how many characters the caret underline covers
  bool known() const { return line > 0; }
};

class SourceFile {
 public:
  SourceFile(std::string name, std::string text);
  static SourceFile from_path(const std::string& path);  // throws flexjit::Error

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The text of 1-based line n without its newline ("" when out of range).
  std::string_view line_text(int n) const;
  int line_count() const { return static_cast<int>(line_starts_.size()); }
  // Position of a byte offset into text().
  SourcePos pos_at(std::size_t offset, int length = 1) const;

 private:
  std::string name_;
  std::string text_;
  std::vector<std::size_t> line_starts_;
};

}  // namespace flexjit::dsl
