// Strict UTF-8 validation, as Python applies it to source files: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
#pragma once

#include <cstddef>
#include <string_view>

namespace flexjit::dsl {

// The offset of the first byte that does not start a valid sequence, or npos when all is valid.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace flexjit::dsl
