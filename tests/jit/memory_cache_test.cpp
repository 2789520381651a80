#include "jit/memory_cache.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

namespace flexjit::jit {
namespace {

CacheKey key(std::string_view source) {
  KeyInputs in;
  in.name = "k";
  in.source = source;
  return compute_key(in);
}

ArtifactPtr make(char c) {
  CompileResult r;
  r.image = {c};
  return std::make_shared<const Artifact>(std::move(r), ArtifactOrigin::compiled);
}

TEST(MemoryCache, ProducesOncePerKey) {
  MemoryCache cache;
  int calls = 0;
  bool produced = false;
  ArtifactPtr a = cache.get_or_produce(key("a"), [&] { ++calls; return make('a'); }, &produced);
  EXPECT_TRUE(produced);
  ArtifactPtr again = cache.get_or_produce(key("a"), [&] { ++calls; return make('x'); }, &produced);
  EXPECT_FALSE(produced);
  EXPECT_EQ(a, again);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.find(key("a")), a);
  EXPECT_EQ(cache.find(key("b")), nullptr);
  cache.get_or_produce(key("b"), [&] { ++calls; return make('b'); });
  EXPECT_EQ(cache.size(), 2u);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_EQ(a->image(), std::vector<char>{'a'});  // handed-out artifacts outlive clear()
}

TEST(MemoryCache, ConcurrentRequestsForOneKeyProduceOnce) {
  MemoryCache cache;
  constexpr int kThreads = 16;
  std::atomic<int> calls{0};
  std::barrier start(kThreads);
  std::vector<ArtifactPtr> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = cache.get_or_produce(key("shared"), [&] {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the others pile up
        return make('s');
      });
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  for (const ArtifactPtr& r : results) EXPECT_EQ(r, results[0]);
}

TEST(MemoryCache, FailuresReachEveryWaiterAndAreNotCached) {
  MemoryCache cache;
  constexpr int kThreads = 8;
  std::atomic<int> calls{0}, failures{0};
  std::barrier start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      start.arrive_and_wait();
      try {
        cache.get_or_produce(key("bad"), [&]() -> ArtifactPtr {
          ++calls;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          throw std::runtime_error("compile failed");
        });
      } catch (const std::runtime_error& e) {
        if (std::string(e.what()) == "compile failed") ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), kThreads);
  EXPECT_LE(calls.load(), kThreads);
  EXPECT_EQ(cache.size(), 0u);
  // A later request tries again.
  EXPECT_EQ(cache.get_or_produce(key("bad"), [] { return make('g'); })->image(), std::vector<char>{'g'});
}

}  // namespace
}  // namespace flexjit::jit
