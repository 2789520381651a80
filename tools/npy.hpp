// A small, strict reader and writer of NumPy .npy files (format versions 1, 2 and 3): C-order
// arrays of little-endian bool, integer and float elements. Anything else (Fortran order,
// big-endian data, structured or object dtypes, truncated files) is refused with a message
// saying what the file holds and what to do instead.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace flexjit::tools {

struct NpyArray {
  char kind = 'f';  // 'f' float, 'i' signed int, 'u' unsigned int, 'b' bool
  int itemsize = 4; // bytes per element
  std::vector<std::int64_t> shape;
  std::vector<unsigned char> bytes;  // little-endian elements, C order

  std::int64_t numel() const;
  std::string dtype_str() const;  // "float32", "int64", "bool", ...
  double element(std::int64_t i) const;  // any element as a double (exact for all but huge int64)
  // An element of an integer or bool array, exactly; nullopt for a uint64 above INT64_MAX.
  std::optional<std::int64_t> integer(std::int64_t i) const;
  std::vector<float> to_float32() const;  // float arrays only (float16/32/64), rounded to float32
};

// Throws std::runtime_error naming the file and the problem.
NpyArray read_npy(const std::string& path);
// The same for a file's bytes already in memory; `path` names it in errors.
NpyArray parse_npy(std::span<const unsigned char> file, const std::string& path);

// Writes a float32 array (format version 1.0).
void write_npy_f32(const std::string& path, const std::vector<std::int64_t>& shape, const std::vector<float>& data);

}  // namespace flexjit::tools
