// flexjit/cache.hpp on top of the JIT's disk cache: the same directory resolution and file
// format engines use, so the listing is exactly what engines find.
#include "flexjit/cache.hpp"

#include "jit/cache_directory.hpp"
#include "jit/disk_cache.hpp"

namespace flexjit {

std::string default_cache_directory() { return jit::default_cache_directory().string(); }

bool disk_cache_enabled() { return jit::disk_cache_enabled_by_environment(); }

KernelCacheDirectory::KernelCacheDirectory() : path_(default_cache_directory()) {}
KernelCacheDirectory::KernelCacheDirectory(std::string path) : path_(std::move(path)) {}

std::vector<CacheEntry> KernelCacheDirectory::list() const {
  std::vector<CacheEntry> out;
  for (const jit::DiskEntry& e : jit::DiskCache(path_).list()) out.push_back({e.key, e.bytes, e.modified});
  return out;
}

CacheStats KernelCacheDirectory::stats() const {
  const jit::DiskStats s = jit::DiskCache(path_).stats();
  return {s.directory.string(), s.usable, s.unusable_reason, s.entries, s.bytes};
}

std::size_t KernelCacheDirectory::clear() const { return jit::DiskCache(path_).clear(); }

}  // namespace flexjit
