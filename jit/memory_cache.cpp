#include "jit/memory_cache.hpp"

namespace flexjit::jit {

ArtifactPtr MemoryCache::get_or_produce(const CacheKey& key, const Producer& produce, bool* produced) {
  if (produced != nullptr) *produced = false;
  std::unique_lock lock(mutex_);
  if (auto it = slots_.find(key); it != slots_.end()) {
    std::shared_future<ArtifactPtr> future = it->second.future;
    lock.unlock();
    return future.get();  // ready: returns at once; in flight: waits; failed: rethrows
  }
  std::promise<ArtifactPtr> promise;
  const std::uint64_t id = ++next_id_;
  slots_.emplace(key, Slot{promise.get_future().share(), id});
  lock.unlock();

  try {
    ArtifactPtr value = produce();
    promise.set_value(value);
    if (produced != nullptr) *produced = true;
    return value;
  } catch (...) {
    promise.set_exception(std::current_exception());
    lock.lock();
    if (auto it = slots_.find(key); it != slots_.end() && it->second.id == id) slots_.erase(it);
    throw;
  }
}

ArtifactPtr MemoryCache::find(const CacheKey& key) const {
  std::shared_future<ArtifactPtr> future;
  {
    std::lock_guard lock(mutex_);
    auto it = slots_.find(key);
    if (it == slots_.end()) return nullptr;
    future = it->second.future;
  }
  if (future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
  try {
    return future.get();
  } catch (...) {
    return nullptr;  // failed producer whose slot is about to be erased
  }
}

std::size_t MemoryCache::size() const {
  std::lock_guard lock(mutex_);
  return slots_.size();
}

void MemoryCache::clear() {
  std::lock_guard lock(mutex_);
  slots_.clear();
}

}  // namespace flexjit::jit
