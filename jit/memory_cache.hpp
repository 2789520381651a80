// The in-process cache: key -> artifact, where concurrent requests for one key run the producer
// exactly once and everyone else waits for its result (single flight). A hit costs one mutex
// round trip and a hash-table probe whose hash was computed with the key, nothing proportional to
// the kernel source.
#pragma once

#include "jit/artifact.hpp"
#include "jit/cache_key.hpp"

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace flexjit::jit {

using ArtifactPtr = std::shared_ptr<const Artifact>;

class MemoryCache {
 public:
  using Producer = std::function<ArtifactPtr()>;

  // Returns the artifact for `key`, calling `produce` if no thread has (or is) producing it.
  // *produced (when given) says whether this call ran `produce`. If `produce` throws, every
  // waiter gets that exception and the key is forgotten, so a later call tries again (failures
  // are not cached: the usual cause is a bug that gets fixed, which changes the key anyway).
  ArtifactPtr get_or_produce(const CacheKey& key, const Producer& produce, bool* produced = nullptr);

  // The finished artifact for `key`, or null (absent or still being produced). Never waits.
  ArtifactPtr find(const CacheKey& key) const;

  std::size_t size() const;
  // Forgets every entry. Artifacts already handed out stay alive with their holders; producers in
  // flight finish and hand their result to their waiters without re-inserting it.
  void clear();

 private:
  struct Slot {
    std::shared_future<ArtifactPtr> future;
    std::uint64_t id = 0;
  };
  mutable std::mutex mutex_;
  std::unordered_map<CacheKey, Slot, CacheKeyHash> slots_;
  std::uint64_t next_id_ = 0;
};

}  // namespace flexjit::jit
