#include "codegen/cuda_writer.hpp"

#include <fmt/format.h>

namespace flexjit::codegen {

void CudaWriter::line(const std::string& text) {
  if (!text.empty()) out_.append(indent_, ' ');
  out_ += text;
  out_ += '\n';
}

void CudaWriter::source_comment(dsl::SourcePos pos) {
  if (!source_ || !pos.known() || pos.line == last_line_) return;
  last_line_ = pos.line;
  std::string_view text = source_->line_text(pos.line);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  // A line of user text must not end the comment early or continue it onto the next line.
  std::string safe;
  for (char c : text) safe += (c == '\\' || c == '\r') ? ' ' : c;
  line(fmt::format("// {}:{}: {}", source_->name(), pos.line, safe));
}

}  // namespace flexjit::codegen
