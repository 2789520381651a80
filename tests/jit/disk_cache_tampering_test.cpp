// A cache directory other processes can write: whatever is planted in it, readers neither block
// nor allocate what a header claims, and list() / clear() touch only flexjit's own files.
#include "flexjit/error.hpp"
#include "jit/disk_cache.hpp"
#include "jit/nvrtc_version.hpp"
#include "tests/support/bounded_child.hpp"
#include "tests/jit/test_support.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace flexjit::jit {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string kKey = "saxpy-" + std::string(64, 'e');
const std::string kOtherKey = "saxpy-" + std::string(64, 'f');

void age(const fs::path& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(1));
}

TEST(DiskCacheTampering, AFifoUnderAnEntryNameIsRejectedWithoutBlocking) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  ASSERT_TRUE(cache.usable());
  ASSERT_EQ(::mkfifo(cache.path_for(kKey).c_str(), 0644), 0);
  EXPECT_EQ(flexjit::test::run_bounded(10, 256, [&] {
              std::vector<char> out;
              return cache.load(kKey, out) == DiskLookup::rejected;
            }),
            "ok");
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(cache.clear(), 0u);
  EXPECT_TRUE(fs::exists(cache.path_for(kKey)));  // not ours: left alone
}

TEST(DiskCacheTampering, AFifoUnderTheNvrtcMemoNameIsIgnoredWithoutBlocking) {
  TempDir tmp;
  const fs::path memo = tmp / "nvrtc-0123456789abcdef.version";
  ASSERT_EQ(::mkfifo(memo.c_str(), 0644), 0);
  EXPECT_EQ(flexjit::test::run_bounded(10, 256, [&] { return !read_nvrtc_version_memo(memo, "identity").has_value(); }), "ok");
}

// A valid header (right key digest) whose payload size field says `claimed`, in a sparse file
// exactly that long, so that only the cap can refuse it.
void plant_huge_claim(DiskCache& cache, std::uint64_t claimed) {
  ASSERT_TRUE(cache.store(kKey, std::vector<char>(16, 'x')));
  const fs::path path = cache.path_for(kKey);
  const int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  unsigned char size[8];
  for (int i = 0; i < 8; ++i) size[i] = static_cast<unsigned char>(claimed >> (8 * i));
  ASSERT_EQ(::pwrite(fd, size, sizeof size, 16), 8);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(DiskCache::kHeaderSize + claimed)), 0);
  ::close(fd);
}

TEST(DiskCacheTampering, APayloadClaimOverTheCapIsRejectedWithoutReadingIt) {
  for (std::uint64_t claimed : {DiskCache::kMaxPayloadBytes + 1, std::uint64_t{8} << 30}) {
    TempDir tmp;
    DiskCache cache(tmp.path());
    plant_huge_claim(cache, claimed);
    // Reading the claim would need `claimed` bytes of memory and seconds of I/O.
    EXPECT_EQ(flexjit::test::run_bounded(10, 128, [&] {
                std::vector<char> out;
                return cache.load(kKey, out) == DiskLookup::rejected && out.empty();
              }),
              "ok")
        << claimed << " bytes claimed";
  }
}

TEST(DiskCacheTampering, ListAndClearTouchOnlyFlexjitsOwnFiles) {
  TempDir tmp;
  DiskCache cache(tmp.path());
  const std::vector<char> junk(200, 'j');
  ASSERT_TRUE(cache.store(kKey, std::vector<char>(10, 'p')));
  const std::vector<std::string> foreign = {
      "notes.fjk",                        // not a key
      kOtherKey + ".fjk",                 // a key's name, but no entry magic
      ".tmp-report",                      // not our temp form
      ".tmp-" + kOtherKey + "-toolong1",  // our form has six unique characters
      ".tmp-nvrtc",                       // no unique part
  };
  for (const std::string& name : foreign) {
    test::write_file(tmp / name, junk);
    age(tmp / name);
  }
  fs::create_directory(tmp / ("dir-" + std::string(64, 'a') + ".fjk"));
  const std::vector<std::string> ours = {".tmp-" + kOtherKey + "-Ab12Cd", ".tmp-nvrtc-x9Y8z7"};
  for (const std::string& name : ours) {
    test::write_file(tmp / name, junk);
    age(tmp / name);
  }

  const std::vector<DiskEntry> entries = cache.list();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].key, kKey);
  EXPECT_EQ(cache.stats().entries, 1u);

  EXPECT_EQ(cache.clear(), 3u);  // the entry and our two stale temp files
  EXPECT_FALSE(fs::exists(cache.path_for(kKey)));
  for (const std::string& name : ours) EXPECT_FALSE(fs::exists(tmp / name)) << name;
  for (const std::string& name : foreign) EXPECT_TRUE(fs::exists(tmp / name)) << name;
  EXPECT_TRUE(fs::is_directory(tmp / ("dir-" + std::string(64, 'a') + ".fjk")));
}

std::string clear_error(DiskCache& cache) {
  try {
    cache.clear();
  } catch (const flexjit::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(DiskCacheTampering, ClearingSomethingThatIsNotADirectoryIsAnError) {
  TempDir tmp;
  test::write_file(tmp / "file", {'x'});
  DiskCache cache(tmp / "file");
  EXPECT_EQ(clear_error(cache), "cannot clear the kernel cache directory '" + (tmp / "file").string() +
                                    "': Not a directory (0 files removed)");
  EXPECT_TRUE(fs::exists(tmp / "file"));
}

// Whether clearing `dir` fails with a message containing `expected`, tried in a child process
// that runs as an unprivileged user when the tests run as root (root ignores permissions).
std::string clear_fails_with(const fs::path& dir, const std::string& expected) {
  return flexjit::test::run_bounded(10, 256, [&] {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return false;
    DiskCache cache(dir);
    const std::string error = clear_error(cache);
    if (error.find(expected) == std::string::npos) std::fprintf(stderr, "clear() said: %s\n", error.c_str());
    return error.find(expected) != std::string::npos;
  });
}

TEST(DiskCacheTampering, ClearingWhereFilesCannotBeRemovedIsAnError) {
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  DiskCache cache(tmp / "cache");
  ASSERT_TRUE(cache.store(kKey, std::vector<char>(10, 'p')));
  ::chmod((tmp / "cache").c_str(), 0555);
  EXPECT_EQ(clear_fails_with(tmp / "cache", "cannot remove '" + kKey + ".fjk': Permission denied (0 files removed)"), "ok");
  EXPECT_TRUE(fs::exists(cache.path_for(kKey)));
}

TEST(DiskCacheTampering, ClearingADirectoryThatCannotBeReadIsAnError) {
  TempDir tmp;
  ::chmod(tmp.path().c_str(), 0755);
  fs::create_directory(tmp / "sealed");
  ::chmod((tmp / "sealed").c_str(), 0);
  EXPECT_EQ(clear_fails_with(tmp / "sealed", "cannot clear the kernel cache directory '" + (tmp / "sealed").string() +
                                                 "': Permission denied (0 files removed)"),
            "ok");
}

}  // namespace
}  // namespace flexjit::jit
