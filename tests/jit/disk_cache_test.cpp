#include "jit/disk_cache.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

namespace flexjit::jit {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string kKey = "saxpy-" + std::string(64, 'c');

std::vector<char> payload(std::size_t n, char seed = 1) {
  std::vector<char> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<char>(seed + i * 31);
  return p;
}

struct Warnings {
  std::vector<std::string> messages;
  DiskCache::WarnFn sink() {
    return [this](const std::string& m) { messages.push_back(m); };
  }
};

TEST(CacheDirectory, EnvironmentThenXdgThenHome) {
  test::ScopedEnv cache("FLEXJIT_CACHE_DIR", "/x/cache");
  test::ScopedEnv xdg("XDG_CACHE_HOME", "/x/xdg");
  test::ScopedEnv home("HOME", "/x/home");
  EXPECT_EQ(default_cache_directory(), fs::path("/x/cache"));
  {
    test::ScopedEnv unset("FLEXJIT_CACHE_DIR", std::nullopt);
    EXPECT_EQ(default_cache_directory(), fs::path("/x/xdg/flexjit"));
    test::ScopedEnv relative("XDG_CACHE_HOME", "relative/xdg");  // invalid per the XDG spec
    EXPECT_EQ(default_cache_directory(), fs::path("/x/home/.cache/flexjit"));
    test::ScopedEnv empty("XDG_CACHE_HOME", "");
    EXPECT_EQ(default_cache_directory(), fs::path("/x/home/.cache/flexjit"));
  }
}

TEST(DiskCache, RoundTripCreatesDirectoryOnDemand) {
  TempDir tmp;
  fs::path dir = tmp / "a/b/cache";
  DiskCache cache(dir);
  EXPECT_FALSE(fs::exists(dir));  // construction touches nothing

  std::vector<char> out;
  EXPECT_EQ(cache.load(kKey, out), DiskLookup::miss);
  EXPECT_TRUE(fs::is_directory(dir));

  std::vector<char> p = payload(100000);
  ASSERT_TRUE(cache.store(kKey, p));
  EXPECT_EQ(fs::file_size(cache.path_for(kKey)), DiskCache::kHeaderSize + p.size());
  ASSERT_EQ(cache.load(kKey, out), DiskLookup::hit);
  EXPECT_EQ(out, p);

  // Another instance (another process, in effect) reads it too.
  DiskCache again(dir);
  ASSERT_EQ(again.load(kKey, out), DiskLookup::hit);
  EXPECT_EQ(out, p);

  // Empty payloads are legal.
  const std::string empty_key = "empty-" + std::string(64, '0');
  ASSERT_TRUE(cache.store(empty_key, {}));
  EXPECT_EQ(cache.load(empty_key, out), DiskLookup::hit);
  EXPECT_TRUE(out.empty());
}

TEST(DiskCache, ListStatsAndClear) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  ASSERT_TRUE(cache.store("b-" + std::string(64, '1'), payload(10)));
  ASSERT_TRUE(cache.store("a-" + std::string(64, '2'), payload(20)));
  test::write_file(tmp / "unrelated.txt", payload(5));
  test::write_file(tmp / (".tmp-old-" + std::string(64, '3') + "-abcdef"), payload(5));
  // A leftover temp file from a writer that died long ago.
  fs::last_write_time(tmp / (".tmp-old-" + std::string(64, '3') + "-abcdef"),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  test::write_file(tmp / (".tmp-new-" + std::string(64, '4') + "-abcdef"), payload(5));

  std::vector<DiskEntry> entries = cache.list();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].key, "a-" + std::string(64, '2'));
  EXPECT_EQ(entries[0].bytes, DiskCache::kHeaderSize + 20);
  EXPECT_EQ(entries[1].key, "b-" + std::string(64, '1'));
  auto age = std::chrono::system_clock::now() - entries[0].modified;
  EXPECT_LT(std::chrono::abs(age), std::chrono::minutes(5));

  DiskStats s = cache.stats();
  EXPECT_EQ(s.directory, tmp.path());
  EXPECT_TRUE(s.usable);
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, 2 * DiskCache::kHeaderSize + 30);

  EXPECT_EQ(cache.clear(), 3u);  // two entries and the stale temp file
  EXPECT_TRUE(cache.list().empty());
  EXPECT_TRUE(fs::exists(tmp / "unrelated.txt"));  // never touches files that are not ours
  EXPECT_TRUE(fs::exists(tmp / (".tmp-new-" + std::string(64, '4') + "-abcdef")));

  DiskCache missing(tmp / "does-not-exist");
  EXPECT_TRUE(missing.list().empty());
  EXPECT_EQ(missing.stats().entries, 0u);
  EXPECT_FALSE(fs::exists(tmp / "does-not-exist"));
}

TEST(DiskCache, FlippedBytesAreRejectedAndOverwritable) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  std::vector<char> p = payload(4096);
  std::vector<char> out;
  // Magic, version, payload size, key digest, payload digest, first and last payload byte.
  for (std::size_t offset : {0ul, 8ul, 16ul, 30ul, 60ul, DiskCache::kHeaderSize, DiskCache::kHeaderSize + 4095}) {
    ASSERT_TRUE(cache.store(kKey, p));
    test::flip_byte(cache.path_for(kKey), offset);
    EXPECT_EQ(cache.load(kKey, out), DiskLookup::rejected) << "flipped byte at " << offset;
    ASSERT_TRUE(cache.store(kKey, p));  // the next store replaces the bad file
    ASSERT_EQ(cache.load(kKey, out), DiskLookup::hit);
    EXPECT_EQ(out, p);
  }
}

TEST(DiskCache, TruncatedOrExtendedFilesAreRejected) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  std::vector<char> p = payload(4096);
  std::vector<char> out;
  ASSERT_TRUE(cache.store(kKey, p));
  const std::vector<char> good = test::read_file(cache.path_for(kKey));
  for (std::size_t keep : {0ul, 10ul, DiskCache::kHeaderSize - 1, DiskCache::kHeaderSize, good.size() - 1}) {
    test::write_file(cache.path_for(kKey), std::vector<char>(good.begin(), good.begin() + keep));
    EXPECT_EQ(cache.load(kKey, out), DiskLookup::rejected) << "kept " << keep << " bytes";
  }
  std::vector<char> longer = good;
  longer.push_back('x');
  test::write_file(cache.path_for(kKey), longer);
  EXPECT_EQ(cache.load(kKey, out), DiskLookup::rejected);
}

TEST(DiskCache, FileUnderAnotherKeysNameIsRejected) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  const std::string other = "saxpy-" + std::string(64, 'd');
  ASSERT_TRUE(cache.store(kKey, payload(64)));
  fs::copy_file(cache.path_for(kKey), cache.path_for(other));
  std::vector<char> out;
  EXPECT_EQ(cache.load(other, out), DiskLookup::rejected);
}

TEST(DiskCache, NoTempFilesAreLeftBehind) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(cache.store(kKey, payload(1000, static_cast<char>(i))));
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(tmp.path())) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".fjk") << e.path();
  }
  EXPECT_EQ(files, 1u);
}

TEST(DiskCache, RejectsKeysThatAreNotPlainFileNames) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  std::vector<char> out;
  EXPECT_THROW(cache.load("../escape", out), std::invalid_argument);
  EXPECT_THROW(cache.store(".hidden", payload(1)), std::invalid_argument);
  EXPECT_THROW(cache.store("", payload(1)), std::invalid_argument);
}

void expect_memory_only(DiskCache& cache, Warnings& warnings, const fs::path& dir) {
  std::vector<char> out;
  EXPECT_FALSE(cache.usable());
  EXPECT_EQ(cache.load(kKey, out), DiskLookup::disabled);
  EXPECT_FALSE(cache.store(kKey, payload(10)));
  EXPECT_FALSE(cache.store(kKey, payload(10)));
  EXPECT_EQ(cache.load(kKey, out), DiskLookup::disabled);
  ASSERT_EQ(warnings.messages.size(), 1u) << "warns exactly once";
  EXPECT_EQ(warnings.messages[0].rfind("flexjit: kernel cache directory '" + dir.string() + "' is not usable (", 0), 0u)
      << warnings.messages[0];
  EXPECT_NE(warnings.messages[0].find("); caching in memory only"), std::string::npos);
  EXPECT_FALSE(cache.unusable_reason().empty());
}

TEST(DiskCache, DirectoryUnderARegularFileIsUnusable) {
  TempDir tmp;
  test::write_file(tmp / "file", payload(3));
  Warnings warnings;
  DiskCache cache(tmp / "file/cache", warnings.sink());
  expect_memory_only(cache, warnings, tmp / "file/cache");
  EXPECT_NE(cache.unusable_reason().find("cannot create it"), std::string::npos) << cache.unusable_reason();
}

TEST(DiskCache, ReadOnlyDirectoryIsUnusable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions; covered by DirectoryUnderARegularFileIsUnusable";
  TempDir tmp;
  fs::path dir = tmp / "ro";
  fs::create_directory(dir);
  ::chmod(dir.c_str(), 0500);
  Warnings warnings;
  DiskCache cache(dir, warnings.sink());
  expect_memory_only(cache, warnings, dir);
}

TEST(DiskCache, NoDirectoryAtAllIsUnusable) {
  Warnings warnings;
  DiskCache cache(fs::path(), warnings.sink());
  expect_memory_only(cache, warnings, fs::path());
}

}  // namespace
}  // namespace flexjit::jit
