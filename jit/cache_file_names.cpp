#include "jit/cache_file_names.hpp"

#include "jit/cache_key.hpp"

#include <algorithm>
#include <cctype>

namespace flexjit::jit {
namespace {

constexpr std::string_view kTempPrefix = ".tmp-";
constexpr std::string_view kNvrtcStem = "nvrtc";
constexpr std::size_t kUniqueChars = 6;  // the XXXXXX mkostemp replaces with letters and digits

bool is_alphanumeric(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

}  // namespace

bool is_entry_file_name(std::string_view name) {
  return name.ends_with(kEntryExtension) && is_cache_key(name.substr(0, name.size() - kEntryExtension.size()));
}

std::string temp_file_pattern(std::string_view stem) {
  return std::string(kTempPrefix) + std::string(stem) + "-" + std::string(kUniqueChars, 'X');
}

bool is_temp_file_name(std::string_view name) {
  if (!name.starts_with(kTempPrefix) || name.size() < kTempPrefix.size() + kUniqueChars + 1) return false;
  const std::string_view unique = name.substr(name.size() - kUniqueChars);
  const std::string_view stem = name.substr(kTempPrefix.size(), name.size() - kTempPrefix.size() - kUniqueChars - 1);
  return name[name.size() - kUniqueChars - 1] == '-' && is_alphanumeric(unique) &&
         (stem == kNvrtcStem || is_cache_key(stem));
}

}  // namespace flexjit::jit
