// The kernel cache callers use: memory first, then disk, then compile; the result is stored back
// into both. One compile per key per process even under concurrent requests, and counters that
// tests and benchmarks read to see which path was taken.
//
// Key computation is deliberately NOT cached here: looking a source up in a memo would mean
// hashing it again. Instead the caller builds a CompileJob once per generated variant (that is
// where the SHA-256 over the source is paid) and keeps it; every later get_or_compile(job) is
// a memory-cache probe on the precomputed key.
#pragma once

#include "jit/artifact.hpp"
#include "jit/cache_key.hpp"
#include "jit/compile_limits.hpp"
#include "jit/disk_cache.hpp"
#include "jit/memory_cache.hpp"
#include "jit/nvrtc_compiler.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace flexjit::jit {

// A compile request together with its key, computed once at construction.
struct CompileJob {
  CompileJob(CompileRequest compile_request, std::string_view name)
      : request(std::move(compile_request)), key(compute_key(request, name)) {}
  CompileRequest request;
  CacheKey key;
};

struct CacheCounters {
  std::uint64_t memory_hits = 0;    // served from memory, including waiters on an in-flight compile
  std::uint64_t disk_hits = 0;      // loaded from a file that verified
  std::uint64_t disk_rejected = 0;  // a file was there but failed verification (then recompiled)
  std::uint64_t compiles = 0;       // compile functions run (successful or not)
  std::uint64_t disk_writes = 0;    // files written
};

struct KernelCacheOptions {
  // Empty optional: default_cache_directory(). Setting use_disk=false keeps everything in memory.
  std::optional<std::filesystem::path> directory;
  bool use_disk = true;
  DiskCache::WarnFn warn;  // where the one "directory not usable" warning goes; stderr by default
  // Bounds on each compile (compile_workers.hpp); empty: compile_limits_from_environment() at
  // each compile.
  std::optional<CompileLimits> limits;
};

class KernelCache {
 public:
  using CompileFn = std::function<CompileResult()>;

  KernelCache() : KernelCache(KernelCacheOptions{}) {}
  explicit KernelCache(KernelCacheOptions options);

  // The process-wide cache, created on first use from the environment: directory as in
  // default_cache_directory(); FLEXJIT_DISK_CACHE=0 turns the disk layer off.
  static KernelCache& global();

  // Memory hit -> that artifact. Otherwise exactly one caller per key checks the disk and, on a
  // miss, runs `compile` and writes the result to disk; the others wait for it. Exceptions from
  // `compile` (e.g. NvrtcError) reach every waiter and nothing is cached.
  ArtifactPtr get_or_compile(const CacheKey& key, const CompileFn& compile);
  // Same, compiling job.request with NVRTC in a worker process under this cache's limits.
  ArtifactPtr get_or_compile(const CompileJob& job);
  // NVRTC as get_or_compile(job) runs it, without the cache (e.g. for PTX to read, or a compile
  // that may be cancelled: compile_workers.hpp).
  CompileResult compile_uncached(const CompileRequest& request, const std::atomic<bool>* cancel = nullptr) const;
  // Whether get_or_compile(key) would find the key without compiling: in memory, or a file of
  // that name on disk (not yet verified).
  bool has(const CacheKey& key);

  CacheCounters counters() const;
  void reset_counters();
  void clear_memory();           // e.g. for a benchmark's "cold memory, warm disk" case
  std::size_t memory_entries() const { return memory_.size(); }
  DiskCache* disk() noexcept { return disk_.get(); }  // null when the disk layer is off

 private:
  ArtifactPtr produce(const CacheKey& key, const CompileFn& compile);

  std::optional<CompileLimits> limits_;
  MemoryCache memory_;
  std::unique_ptr<DiskCache> disk_;
  std::atomic<std::uint64_t> memory_hits_{0}, disk_hits_{0}, disk_rejected_{0}, compiles_{0},
      disk_writes_{0};
};

}  // namespace flexjit::jit
