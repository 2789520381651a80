#include "codegen/cuda_writer.hpp"

#include <fmt/format.h>

namespace flexjit::codegen {

void CudaWriter::line(const std::string& text) {
  if (!text.empty()) out_.append(indent_, ' ');
  out_ += text;
  out_ += '\n';
}

std::string comment_text(std::string_view text) {
  std::string safe;
  safe.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    // A backslash would continue the comment onto the next line, a line break end it; bytes
    // outside printable ASCII are not worth the risk in a file NVRTC parses.
    safe += (c == '\\' || u < 0x20 || u >= 0x7f) ? '?' : c;
  }
  return safe;
}

std::string program_file_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return comment_text(slash == std::string::npos ? path : path.substr(slash + 1));
}

void CudaWriter::source_comment(dsl::SourcePos pos) {
  if (!source_ || !pos.known() || pos.line == last_line_) return;
  last_line_ = pos.line;
  std::string_view text = source_->line_text(pos.line);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  line(fmt::format("// {}:{}: {}", program_file_name(source_->name()), pos.line, comment_text(text)));
}

}  // namespace flexjit::codegen
