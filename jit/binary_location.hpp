// Where flexjit's own files are found at run time: next to the executable or shared library that
// holds flexjit's code, in the build tree, or under the install prefix, whichever exists first.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace flexjit::jit {

// The file of the executable or shared library that contains `address`; empty when unknown.
std::filesystem::path binary_holding(const void* address);

// Places to look for `file_name`, most specific first, without repeats: the directory of the
// binary holding `address`, that directory joined with each of `relative_dirs` (e.g. "../lib"
// from bin/), then each of `absolute_dirs` (the build tree's, the install prefix's).
std::vector<std::filesystem::path> candidate_files(const void* address, const std::string& file_name,
                                                   const std::vector<std::string>& relative_dirs,
                                                   const std::vector<std::string>& absolute_dirs);

}  // namespace flexjit::jit
