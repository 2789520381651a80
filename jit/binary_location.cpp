#include "jit/binary_location.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>

namespace flexjit::jit {
namespace fs = std::filesystem;

fs::path binary_holding(const void* address) {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 || map == nullptr) return {};
  // The main program has no name in the link map (dladdr would give argv[0], which may be a bare
  // name found on PATH); the kernel knows its real path.
  if (map->l_name == nullptr || map->l_name[0] == '\0') {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe;
  }
  return map->l_name;
}

std::vector<fs::path> candidate_files(const void* address, const std::string& file_name,
                                      const std::vector<std::string>& relative_dirs,
                                      const std::vector<std::string>& absolute_dirs) {
  std::vector<fs::path> out;
  const fs::path here = binary_holding(address).parent_path();
  if (!here.empty()) {
    out.push_back(here / file_name);
    for (const std::string& dir : relative_dirs) out.push_back((here / dir / file_name).lexically_normal());
  }
  for (const std::string& dir : absolute_dirs) out.push_back(fs::path(dir) / file_name);
  std::vector<fs::path> unique;
  for (const fs::path& p : out)
    if (std::find(unique.begin(), unique.end(), p) == unique.end()) unique.push_back(p);
  return unique;
}

}  // namespace flexjit::jit
