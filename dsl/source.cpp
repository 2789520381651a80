// SourceFile: the text plus a table of line starts, so offsets map to line:col in O(log n).
#include "dsl/source.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "flexjit/error.hpp"

namespace flexjit::dsl {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  // A lone carriage return ends a line, as in Python (old Mac line ends). It becomes '\n' in
  // place, so every byte offset, and hence every position, stays what it was in the file.
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\r' && (i + 1 == text_.size() || text_[i + 1] != '\n')) text_[i] = '\n';
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

SourceFile SourceFile::from_path(const std::string& path) {
  std::error_code ec;
  // An ifstream opens a directory and reads it as empty: say what it is instead.
  if (std::filesystem::is_directory(path, ec)) throw flexjit::Error("cannot read '" + path + "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw flexjit::Error("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw flexjit::Error("cannot read '" + path + "'");
  return SourceFile(path, buf.str());
}

std::string_view SourceFile::line_text(int n) const {
  if (n < 1 || n > line_count()) return {};
  std::size_t begin = line_starts_[n - 1];
  std::size_t end = n < line_count() ? line_starts_[n] - 1 : text_.size();  // drop the '\n'
  if (end > begin && text_[end - 1] == '\r') --end;                         // and a CRLF's '\r'
  return std::string_view(text_).substr(begin, end - begin);
}

SourcePos SourceFile::pos_at(std::size_t offset, int length) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  int line = static_cast<int>(it - line_starts_.begin());  // >= 1: line_starts_[0] == 0
  SourcePos pos;
  pos.line = line;
  pos.col = static_cast<int>(offset - line_starts_[line - 1]) + 1;
  pos.length = std::max(length, 1);
  return pos;
}

}  // namespace flexjit::dsl
