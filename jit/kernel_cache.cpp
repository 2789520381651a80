#include "jit/kernel_cache.hpp"

#include "jit/compile_workers.hpp"

namespace flexjit::jit {

KernelCache::KernelCache(KernelCacheOptions options) : limits_(options.limits) {
  if (options.use_disk)
    disk_ = std::make_unique<DiskCache>(options.directory.value_or(default_cache_directory()),
                                        std::move(options.warn));
}

KernelCache& KernelCache::global() {
  static KernelCache cache([] {
    KernelCacheOptions options;
    options.use_disk = disk_cache_enabled_by_environment();
    return options;
  }());
  return cache;
}

ArtifactPtr KernelCache::get_or_compile(const CacheKey& key, const CompileFn& compile) {
  // One pointer captured, so the std::function below stays in its small buffer: no allocation on
  // the hit path.
  struct Call {
    KernelCache* self;
    const CacheKey* key;
    const CompileFn* compile;
  } call{this, &key, &compile};
  bool produced = false;
  ArtifactPtr artifact = memory_.get_or_produce(
      key, [&call] { return call.self->produce(*call.key, *call.compile); }, &produced);
  if (!produced) memory_hits_.fetch_add(1, std::memory_order_relaxed);
  return artifact;
}

ArtifactPtr KernelCache::get_or_compile(const CompileJob& job) {
  return get_or_compile(job.key, [this, &job] { return compile_uncached(job.request); });
}

CompileResult KernelCache::compile_uncached(const CompileRequest& request, const std::atomic<bool>* cancel) const {
  return compile_bounded(request, limits_ ? *limits_ : compile_limits_from_environment(), cancel);
}

bool KernelCache::has(const CacheKey& key) {
  if (memory_.find(key)) return true;
  std::error_code ec;
  return disk_ != nullptr && std::filesystem::is_regular_file(disk_->path_for(key.str()), ec);
}

ArtifactPtr KernelCache::produce(const CacheKey& key, const CompileFn& compile) {
  if (disk_ != nullptr) {
    std::vector<char> payload;
    switch (disk_->load(key.str(), payload)) {
      case DiskLookup::hit:
        if (std::optional<CompileResult> decoded = decode_artifact(payload)) {
          disk_hits_.fetch_add(1, std::memory_order_relaxed);
          return std::make_shared<const Artifact>(std::move(*decoded), ArtifactOrigin::disk);
        }
        disk_rejected_.fetch_add(1, std::memory_order_relaxed);
        break;
      case DiskLookup::rejected:
        disk_rejected_.fetch_add(1, std::memory_order_relaxed);
        break;
      case DiskLookup::miss:
      case DiskLookup::disabled:
        break;
    }
  }
  compiles_.fetch_add(1, std::memory_order_relaxed);
  CompileResult result = compile();
  if (disk_ != nullptr && disk_->store(key.str(), encode_artifact(result)))
    disk_writes_.fetch_add(1, std::memory_order_relaxed);
  return std::make_shared<const Artifact>(std::move(result), ArtifactOrigin::compiled);
}

CacheCounters KernelCache::counters() const {
  return {memory_hits_.load(), disk_hits_.load(), disk_rejected_.load(), compiles_.load(),
          disk_writes_.load()};
}

void KernelCache::reset_counters() {
  for (auto* c : {&memory_hits_, &disk_hits_, &disk_rejected_, &compiles_, &disk_writes_}) c->store(0);
}

void KernelCache::clear_memory() { memory_.clear(); }

}  // namespace flexjit::jit
