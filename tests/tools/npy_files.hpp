// Scratch .npy files for the reader's tests: any header dict and raw data, and the error text a
// read gives.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tools/npy.hpp"

namespace flexjit::tools::test {

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("flexjit-npy-" + std::to_string(::getpid()) + "-" + name)).string();
}

// A .npy file with the given header dict and raw data, format version `major`.
inline std::string write_raw(const std::string& name, const std::string& dict, const std::string& data, int major = 1) {
  std::string header = dict;
  const std::size_t prefix = major == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  const std::string path = temp_path(name);
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY", 6);
  out.put(static_cast<char>(major));
  out.put(0);
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out.put(static_cast<char>((header.size() >> (8 * i)) & 0xff));
  out << header << data;
  return path;
}

inline std::string error_of(const std::string& path) {
  try {
    read_npy(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace flexjit::tools::test
