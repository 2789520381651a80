#pragma once
// Work spread over threads in fixed stripes: item i runs on worker i % workers, in increasing
// order. Unlike a shared counter (cpu/attention.cpp), which worker runs an item never depends on
// timing, so accumulators kept per worker and summed in worker order give bit-identical results
// on every run of a machine.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace flexjit::cpu {

// How many workers `items` items get: the hardware's threads, at most one per item, at least 1.
inline int stripe_workers(std::int64_t items) {
  const std::int64_t hw = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<int>(std::max<std::int64_t>(1, std::min(hw, items)));
}

// Runs fn(worker, item) for every item in [0, items), worker 0 on this thread. The first
// exception (in worker order) stops the others at their next item and is rethrown here.
template <class Fn> void run_in_stripes(int workers, std::int64_t items, Fn fn) {
  std::atomic<bool> failed{false};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  auto stripe = [&](int w) {
    try {
      for (std::int64_t it = w; it < items && !failed.load(std::memory_order_relaxed); it += workers) fn(w, it);
    } catch (...) {
      errors[static_cast<std::size_t>(w)] = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w) pool.emplace_back(stripe, w);
  stripe(0);
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace flexjit::cpu
