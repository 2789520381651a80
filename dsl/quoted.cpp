#include "dsl/quoted.hpp"

#include <fmt/format.h>

namespace flexjit::dsl {

std::string quoted(std::string_view text, char quote) {
  std::string out(1, quote);
  for (unsigned char c : text) {
    if (c == static_cast<unsigned char>(quote) || c == '\\') out += {'\\', static_cast<char>(c)};
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7F) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  out += quote;
  return out;
}

}  // namespace flexjit::dsl
