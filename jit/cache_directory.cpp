#include "jit/cache_directory.hpp"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>
#include <vector>

namespace flexjit::jit {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::filesystem::path default_cache_directory() {
  if (const char* dir = env("FLEXJIT_CACHE_DIR")) return dir;
  // The XDG spec says relative values are invalid and must be ignored.
  if (const char* xdg = env("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::filesystem::path(xdg) / "flexjit";
  if (const char* home = env("HOME")) return std::filesystem::path(home) / ".cache" / "flexjit";
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr &&
      entry.pw_dir != nullptr && entry.pw_dir[0] == '/')
    return std::filesystem::path(entry.pw_dir) / ".cache" / "flexjit";
  return {};
}

bool disk_cache_enabled_by_environment() {
  const char* value = std::getenv("FLEXJIT_DISK_CACHE");
  return value == nullptr || std::string_view(value) != "0";
}

}  // namespace flexjit::jit
