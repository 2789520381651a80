// The header dict of a .npy file, e.g. "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
// read by a small hand parser: one pass, no recursion and no regular expressions, so a header of
// any length (format 1.0 allows 64 KiB, 2.0 and 3.0 allow 4 GiB) costs time and stack in
// proportion to nothing more than its length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flexjit::tools {

struct NpyHeader {
  std::string descr;  // the dtype string, e.g. "<f4"
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// Throws std::runtime_error saying what is wrong with the header (the caller adds the file name).
NpyHeader parse_npy_header(std::string_view text);

}  // namespace flexjit::tools
