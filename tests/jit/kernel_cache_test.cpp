#include "jit/kernel_cache.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <thread>

namespace flexjit::jit {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

CacheKey key_for(std::string_view source, std::string_view name = "k") {
  KeyInputs in;
  in.name = name;
  in.source = source;
  return compute_key(in);
}

// A stand-in compiler: the "image" is derived from the key, sized 1..200 KB, so payloads differ
// per key and a mixed-up or torn file cannot go unnoticed.
CompileResult fake_image(const CacheKey& key) {
  CompileResult r;
  std::size_t n = 1000 + key.hash() % 200000;
  r.image.resize(n);
  for (std::size_t i = 0; i < n; ++i) r.image[i] = key.str()[i % key.str().size()] ^ static_cast<char>(i);
  r.lowered_names = {{"expr", key.str()}};
  return r;
}

KernelCacheOptions in_dir(const fs::path& dir) {
  KernelCacheOptions o;
  o.directory = dir;
  return o;
}

TEST(KernelCache, MemoryThenDiskThenCompile) {
  TempDir tmp;
  CacheKey key = key_for("one");
  int compiles = 0;
  auto compile = [&] { ++compiles; return fake_image(key); };
  {
    KernelCache cache(in_dir(tmp.path()));
    ArtifactPtr a = cache.get_or_compile(key, compile);
    EXPECT_EQ(a->origin(), ArtifactOrigin::compiled);
    EXPECT_EQ(cache.get_or_compile(key, compile), a);
    CacheCounters c = cache.counters();
    EXPECT_EQ(c.compiles, 1u);
    EXPECT_EQ(c.memory_hits, 1u);
    EXPECT_EQ(c.disk_hits, 0u);
    EXPECT_EQ(c.disk_writes, 1u);

    cache.clear_memory();
    cache.reset_counters();
    ArtifactPtr b = cache.get_or_compile(key, compile);
    EXPECT_EQ(b->origin(), ArtifactOrigin::disk);
    EXPECT_EQ(b->image(), a->image());
    EXPECT_EQ(b->lowered_names(), a->lowered_names());
    EXPECT_EQ(cache.counters().disk_hits, 1u);
    EXPECT_EQ(cache.counters().compiles, 0u);
  }
  KernelCache fresh(in_dir(tmp.path()));  // a new process, in effect
  EXPECT_EQ(fresh.get_or_compile(key, compile)->origin(), ArtifactOrigin::disk);
  EXPECT_EQ(compiles, 1);
}

TEST(KernelCache, MemoryOnlyWhenDiskIsOff) {
  KernelCacheOptions o;
  o.use_disk = false;
  KernelCache cache(o);
  EXPECT_EQ(cache.disk(), nullptr);
  CacheKey key = key_for("x");
  cache.get_or_compile(key, [&] { return fake_image(key); });
  cache.get_or_compile(key, [&] { return fake_image(key); });
  EXPECT_EQ(cache.counters().compiles, 1u);
  EXPECT_EQ(cache.counters().memory_hits, 1u);
}

void damage_then_expect_recompile(void (*damage)(const fs::path&)) {
  TempDir tmp;
  CacheKey key = key_for("damaged");
  const CompileResult good = fake_image(key);
  {
    KernelCache cache(in_dir(tmp.path()));
    cache.get_or_compile(key, [&] { return good; });
  }
  fs::path file = tmp / (key.str() + ".fjk");
  damage(file);

  KernelCache cache(in_dir(tmp.path()));
  ArtifactPtr a = cache.get_or_compile(key, [&] { return good; });
  EXPECT_EQ(a->origin(), ArtifactOrigin::compiled);
  EXPECT_EQ(a->image(), good.image);
  CacheCounters c = cache.counters();
  EXPECT_EQ(c.disk_rejected, 1u);
  EXPECT_EQ(c.compiles, 1u);
  EXPECT_EQ(c.disk_writes, 1u);

  // The file was rewritten and verifies again.
  KernelCache later(in_dir(tmp.path()));
  EXPECT_EQ(later.get_or_compile(key, [&] { return good; })->origin(), ArtifactOrigin::disk);
}

TEST(KernelCache, CorruptFileIsDetectedAndRecompiled) {
  damage_then_expect_recompile([](const fs::path& f) { test::flip_byte(f, fs::file_size(f) / 2); });
}

TEST(KernelCache, TruncatedFileIsDetectedAndRecompiled) {
  damage_then_expect_recompile([](const fs::path& f) { fs::resize_file(f, fs::file_size(f) - 100); });
}

TEST(KernelCache, ConcurrentThreadsCompileOnce) {
  TempDir tmp;
  KernelCache cache(in_dir(tmp.path()));
  CacheKey key = key_for("hot");
  constexpr int kThreads = 16;
  std::atomic<int> compiles{0};
  std::barrier start(kThreads);
  std::vector<ArtifactPtr> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      results[t] = cache.get_or_compile(key, [&] {
        ++compiles;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return fake_image(key);
      });
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(compiles.load(), 1);
  EXPECT_EQ(cache.counters().compiles, 1u);
  EXPECT_EQ(cache.counters().memory_hits, static_cast<std::uint64_t>(kThreads - 1));
  for (const ArtifactPtr& r : results) EXPECT_EQ(r, results[0]);
}

TEST(KernelCache, CompileErrorsReachTheCallerAndAreNotCached) {
  TempDir tmp;
  KernelCache cache(in_dir(tmp.path()));
  CompileRequest bad;
  bad.source = "extern \"C\" __global__ void k() { nope; }\n";
  CompileJob job(bad, "bad");
  EXPECT_THROW(cache.get_or_compile(job), NvrtcError);
  EXPECT_THROW(cache.get_or_compile(job), NvrtcError);
  EXPECT_EQ(cache.counters().compiles, 2u);
  EXPECT_EQ(cache.memory_entries(), 0u);
  EXPECT_TRUE(cache.disk()->list().empty());
}

TEST(KernelCache, UnusableDirectoryWarnsOnceAndWorksFromMemory) {
  TempDir tmp;
  test::write_file(tmp / "not-a-dir", {'x'});
  std::vector<std::string> warnings;
  KernelCacheOptions o = in_dir(tmp / "not-a-dir/cache");
  o.warn = [&](const std::string& m) { warnings.push_back(m); };
  KernelCache cache(o);
  for (int i = 0; i < 5; ++i) {
    CacheKey key = key_for("memory-only " + std::to_string(i));
    ArtifactPtr a = cache.get_or_compile(key, [&] { return fake_image(key); });
    EXPECT_EQ(a->image(), fake_image(key).image);
    EXPECT_EQ(cache.get_or_compile(key, [&] { return fake_image(key); }), a);
  }
  CacheCounters c = cache.counters();
  EXPECT_EQ(c.compiles, 5u);
  EXPECT_EQ(c.memory_hits, 5u);
  EXPECT_EQ(c.disk_writes, 0u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("is not usable"), std::string::npos);
}

TEST(KernelCache, ReadOnlyDirectoryWarnsOnceAndWorksFromMemory) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions; the not-a-directory case covers this";
  TempDir tmp;
  fs::create_directory(tmp / "ro");
  ::chmod((tmp / "ro").c_str(), 0500);
  std::vector<std::string> warnings;
  KernelCacheOptions o = in_dir(tmp / "ro");
  o.warn = [&](const std::string& m) { warnings.push_back(m); };
  KernelCache cache(o);
  for (int i = 0; i < 3; ++i) {
    CacheKey key = key_for("ro " + std::to_string(i));
    EXPECT_EQ(cache.get_or_compile(key, [&] { return fake_image(key); })->image(), fake_image(key).image);
  }
  EXPECT_EQ(warnings.size(), 1u);
}

// Several processes fill one directory at once, with keys they share and keys of their own, each
// forgetting its memory cache between rounds so it also reads what the others wrote. Afterwards
// nothing is lost, every file verifies and no temp file is left.
TEST(KernelCache, ConcurrentProcessesShareOneDirectory) {
  TempDir tmp;
  constexpr int kProcesses = 8, kShared = 12, kOwn = 6, kRounds = 4;
  auto shared_key = [](int i) { return key_for("shared " + std::to_string(i), "shared"); };
  auto own_key = [](int p, int i) { return key_for("own " + std::to_string(p) + " " + std::to_string(i), "own"); };

  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int bad = 0;
      KernelCache cache(in_dir(tmp.path()));
      for (int round = 0; round < kRounds; ++round) {
        for (int i = 0; i < kShared + kOwn; ++i) {
          // Vary the order per process so writers and readers of one file really overlap.
          int j = (i * 7 + p * 5 + round) % (kShared + kOwn);
          CacheKey key = j < kShared ? shared_key(j) : own_key(p, j - kShared);
          ArtifactPtr a = cache.get_or_compile(key, [&] { return fake_image(key); });
          if (a->image() != fake_image(key).image || a->lowered_names() != fake_image(key).lowered_names) ++bad;
        }
        cache.clear_memory();
      }
      if (cache.counters().disk_rejected != 0) ++bad;  // a reader must never see a torn file
      ::_exit(bad == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child " << pid << " status " << status;
  }

  DiskCache disk(tmp.path());
  std::vector<DiskEntry> entries = disk.list();
  EXPECT_EQ(entries.size(), static_cast<std::size_t>(kShared + kProcesses * kOwn));
  KernelCache reader(in_dir(tmp.path()));
  auto verify = [&](const CacheKey& key) {
    ArtifactPtr a = reader.get_or_compile(key, []() -> CompileResult { throw std::runtime_error("missing"); });
    EXPECT_EQ(a->origin(), ArtifactOrigin::disk);
    EXPECT_EQ(a->image(), fake_image(key).image);
  };
  for (int i = 0; i < kShared; ++i) verify(shared_key(i));
  for (int p = 0; p < kProcesses; ++p)
    for (int i = 0; i < kOwn; ++i) verify(own_key(p, i));
  EXPECT_EQ(reader.counters().compiles, 0u);
  for (const auto& e : fs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().extension(), ".fjk") << "left behind: " << e.path();
}

TEST(KernelCache, RealCompileJobRoundTripsThroughDisk) {
  TempDir tmp;
  CompileRequest r;
  r.source = "template <int N> __global__ void fill(int* o) { o[threadIdx.x] = N; }\n";
  r.name_expressions = {"fill<3>"};
  CompileJob job(r, "fill");
  EXPECT_EQ(job.key.prefix(), "fill");
  ArtifactPtr compiled;
  {
    KernelCache cache(in_dir(tmp.path()));
    compiled = cache.get_or_compile(job);
    EXPECT_EQ(compiled->symbol("fill<3>"), "_Z4fillILi3EEvPi");
  }
  KernelCache cache(in_dir(tmp.path()));
  ArtifactPtr loaded = cache.get_or_compile(job);
  EXPECT_EQ(loaded->origin(), ArtifactOrigin::disk);
  EXPECT_EQ(loaded->image(), compiled->image());
  EXPECT_EQ(loaded->symbol("fill<3>"), "_Z4fillILi3EEvPi");
}

// A memory hit is a probe on the key the job computed once: no compile, no disk, no copy of the
// image, and no second hash of the source (a source changed after the job was built is not
// re-read). Its cost in nanoseconds is jit_bench's to report, not a test's to assert.
TEST(KernelCache, MemoryHitUsesTheJobsKeyAndSharesTheArtifact) {
  KernelCacheOptions o;
  o.use_disk = false;
  KernelCache cache(o);
  CompileRequest r;
  r.source = std::string(20000, ' ') + test::kSaxpySource;  // a realistic generated-source size
  CompileJob job(r, "saxpy");
  CacheKey key = job.key;
  ArtifactPtr first = cache.get_or_compile(key, [&] { return fake_image(key); });
  job.request.source = "not the source the key was computed from";
  constexpr int kIterations = 1000;
  for (int i = 0; i < kIterations; ++i) EXPECT_EQ(cache.get_or_compile(job).get(), first.get());
  EXPECT_EQ(cache.counters().memory_hits, static_cast<std::uint64_t>(kIterations));
  EXPECT_EQ(cache.counters().compiles, 1u);
  EXPECT_EQ(cache.counters().disk_hits, 0u);
  EXPECT_EQ(cache.counters().disk_writes, 0u);
}

}  // namespace
}  // namespace flexjit::jit
