// The on-disk kernel cache: one file per key, safe to share between processes.
//
// File  = 96-byte header + payload. Header (little-endian): magic "FJKCACHE", u32 format version,
//         u32 header size, u64 payload size, SHA-256 of the key string, SHA-256 of the payload,
//         8 reserved bytes.
// Write = a unique temp file in the same directory (mkstemp), then rename() over the final name:
//         readers see the old file or the new one, never half of one, and two writers of one key
//         simply both win (their payloads are equal).
// Read  = anything that does not verify (file type, magic, version, size, key, checksum,
//         truncation) is a miss; the file is left for the next store to replace atomically,
//         because unlinking it could race with another process that has just renamed a good file
//         into place. No fsync: a file cut short by a crash fails the checksum and is recompiled.
// An unusable directory (cannot be created or written) is reported once through the warning sink
// and the cache then behaves as empty and read-only: callers keep working from memory.
#pragma once

#include "jit/cache_directory.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace flexjit::jit {

enum class DiskLookup {
  hit,
  miss,      // no file
  rejected,  // a file was there but did not verify (corrupt, truncated, other format version)
  disabled,  // the directory is unusable
};

struct DiskEntry {
  std::string key;
  std::uintmax_t bytes = 0;  // file size, header included
  std::chrono::system_clock::time_point modified;
};

struct DiskStats {
  std::filesystem::path directory;
  bool usable = false;
  std::string unusable_reason;  // "" when usable
  std::size_t entries = 0;
  std::uintmax_t bytes = 0;
};

class DiskCache {
 public:
  using WarnFn = std::function<void(const std::string&)>;
  static constexpr std::uint32_t kFileFormatVersion = 1;
  static constexpr std::size_t kHeaderSize = 96;
  // The largest payload a header may claim; a larger claim is corruption (the biggest cubins are
  // a few MB), so a planted header cannot make a reader allocate and read gigabytes.
  static constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{256} << 20;

  // Nothing touches the file system until the first load/store. `warn` defaults to stderr.
  explicit DiskCache(std::filesystem::path directory = default_cache_directory(), WarnFn warn = {});

  const std::filesystem::path& directory() const noexcept { return directory_; }

  // Creates the directory on first call and checks it can be written; warns once if not.
  bool usable();
  std::string unusable_reason();  // "" when usable

  // `key` must be a plain file name (no '/', not starting with '.'); std::invalid_argument if not.
  DiskLookup load(const std::string& key, std::vector<char>& payload);
  bool store(const std::string& key, std::span<const char> payload);
  bool remove(const std::string& key);
  std::filesystem::path path_for(const std::string& key) const;

  // For the command line. These never create the directory.
  std::vector<DiskEntry> list() const;  // sorted by key
  DiskStats stats() const;
  // Removes the entries and the stale temp files (cache_file_names.hpp); returns how many went.
  // Throws flexjit::Error when the directory cannot be read or a file cannot be removed.
  std::size_t clear();

 private:
  void disable(const std::string& reason);

  std::filesystem::path directory_;
  WarnFn warn_;
  std::once_flag checked_;
  std::mutex reason_mutex_;
  std::string reason_;
  std::atomic<bool> usable_{false};
  std::atomic<bool> warned_{false};
};

}  // namespace flexjit::jit
