#pragma once
// The on-disk kernel cache, for inspecting and emptying it (`flexjit cache list|stats|clear`).
// Engines fill it: one file per compiled kernel, shared by every process that uses the same
// directory (docs/cache.md). Nothing here creates the directory.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace flexjit {

// The directory engines use unless EngineOptions::cache_dir says otherwise: $FLEXJIT_CACHE_DIR,
// else $XDG_CACHE_HOME/flexjit (an absolute XDG_CACHE_HOME only), else ~/.cache/flexjit. Empty
// when there is no home directory to put it in.
std::string default_cache_directory();

// False when FLEXJIT_DISK_CACHE=0 is set: engines then keep kernels in memory only.
bool disk_cache_enabled();

struct CacheEntry {
  std::string name;           // the cache key: kernel entry name, '-', a SHA-256 of what was compiled
  std::uint64_t bytes = 0;    // file size
  std::chrono::system_clock::time_point modified{};
};

struct CacheStats {
  std::string directory;
  bool usable = false;          // exists, is a directory, and can be written
  std::string unusable_reason;  // why not ("" when usable): "it does not exist yet", ...
  std::size_t entries = 0;
  std::uint64_t bytes = 0;
};

class KernelCacheDirectory {
 public:
  KernelCacheDirectory();  // default_cache_directory()
  explicit KernelCacheDirectory(std::string path);

  const std::string& path() const { return path_; }
  // The kernel files (named "<key>.fjk" and starting with the entry magic), sorted by name;
  // empty when the directory is missing. Other files in the directory are not listed.
  std::vector<CacheEntry> list() const;
  CacheStats stats() const;
  // Removes the kernel files list() shows (and temporary files other processes abandoned) and
  // nothing else; returns how many files went, 0 when the directory does not exist. Throws
  // flexjit::Error when the directory cannot be read or a file in it cannot be removed.
  // Processes using the cache meanwhile simply recompile what they miss.
  std::size_t clear() const;

 private:
  std::string path_;
};

}  // namespace flexjit
