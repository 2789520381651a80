// flexjit/cache.hpp: listing, statistics and clearing of an on-disk kernel cache (a temporary
// directory filled by an engine), and the environment variables read in one place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "tests/api/api_test_support.hpp"

namespace flexjit::test {
namespace {

namespace fs = std::filesystem;
using ::testing::StartsWith;

// A fresh directory under the system's temporary directory, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "flexjit-cache-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Sets (or unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = ::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const char* const kCausal = "def mask_mod(b, h, q, k):\n    return q >= k\n";

TEST(KernelCacheDirectory, ListsStatsAndClearsWhatAnEngineStored) {
  TempDir dir;
  const KernelCacheDirectory cache(dir.path().string());
  EXPECT_EQ(cache.path(), dir.path().string());
  EXPECT_TRUE(cache.list().empty());

  ScopedEnv disk("FLEXJIT_DISK_CACHE", std::nullopt);
  const auto before = std::chrono::system_clock::now() - std::chrono::seconds(5);
  Engine jit(EngineOptions{.cache_dir = dir.path().string()});
  const Kernel k = jit.compile(Program::from_source(kCausal, "cache_probe.py"), {.head_dim = 32, .arch = "sm_80"});

  const std::vector<CacheEntry> entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_THAT(entries[0].name, StartsWith(k.entry_name() + "-"));
  EXPECT_GT(entries[0].bytes, k.cubin().size());  // the image plus a header
  EXPECT_GE(entries[0].modified, before);

  const CacheStats s = cache.stats();
  EXPECT_EQ(s.directory, dir.path().string());
  EXPECT_TRUE(s.usable);
  EXPECT_EQ(s.unusable_reason, "");
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, entries[0].bytes);

  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.clear(), 0u);
}

TEST(KernelCacheDirectory, AMissingDirectoryIsReportedAndNotCreated) {
  TempDir dir;
  const fs::path missing = dir.path() / "not-yet";
  const KernelCacheDirectory cache(missing.string());
  EXPECT_TRUE(cache.list().empty());
  const CacheStats s = cache.stats();
  EXPECT_FALSE(s.usable);
  EXPECT_EQ(s.unusable_reason, "it does not exist yet");
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_FALSE(fs::exists(missing));
}

TEST(KernelCacheDirectory, DefaultDirectoryFollowsTheEnvironment) {
  {
    ScopedEnv dir("FLEXJIT_CACHE_DIR", "/x/cache");
    EXPECT_EQ(default_cache_directory(), "/x/cache");
    EXPECT_EQ(KernelCacheDirectory().path(), "/x/cache");
  }
  ScopedEnv dir("FLEXJIT_CACHE_DIR", std::nullopt);
  ScopedEnv xdg("XDG_CACHE_HOME", "/x/xdg");
  EXPECT_EQ(default_cache_directory(), "/x/xdg/flexjit");
  ScopedEnv relative("XDG_CACHE_HOME", "relative");  // ignored, as the XDG spec says
  ScopedEnv home("HOME", "/x/home");
  EXPECT_EQ(default_cache_directory(), "/x/home/.cache/flexjit");
}

TEST(KernelCacheDirectory, DiskCacheSwitch) {
  {
    ScopedEnv off("FLEXJIT_DISK_CACHE", "0");
    EXPECT_FALSE(disk_cache_enabled());
    // An engine then never touches the directory.
    TempDir dir;
    Engine jit(EngineOptions{.cache_dir = dir.path().string()});
    jit.compile(Program::from_source(kCausal, "cache_off.py"), {.head_dim = 16, .arch = "sm_80"});
    EXPECT_TRUE(KernelCacheDirectory(dir.path().string()).list().empty());
  }
  ScopedEnv on("FLEXJIT_DISK_CACHE", "1");
  EXPECT_TRUE(disk_cache_enabled());
  ScopedEnv unset("FLEXJIT_DISK_CACHE", std::nullopt);
  EXPECT_TRUE(disk_cache_enabled());
}

}  // namespace
}  // namespace flexjit::test
